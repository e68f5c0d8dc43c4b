# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run SGLang's benchmark against a server that has an API key, as the service user, without the key on a
command line.

sglang 0.5.9 checks ``Authorization: Bearer <api_key>`` on every endpoint but /health* and /metrics
(srt/utils/auth.py:100, decide_request_auth), and its bench_one_batch_server sends no such header
(test/bench_one_batch_server_internal.py: requests.get/post without headers). BENCH_RUNNER is the small program
the throughput gate runs with the stack's interpreter in place of ``python -m <bench module>``: it reads the key
from its standard input (never argv or the environment, which ``ps`` and /proc show), adds the header to every
request the benchmark makes through ``requests`` (the real benchmark) or ``urllib`` (the test bed's stand-in),
then runs the module as ``python -m`` would.

run_as_argv() is the prefix that runs a command as the service user with exactly the unit's environment, as
python_stack's import gate does: ``runuser`` (util-linux) rather than ``su``, which cannot run a command for a
user whose shell is nologin.
"""

from __future__ import annotations

import re

BENCH_RUNNER = r'''
import runpy, sys
key = sys.stdin.readline().strip()
if key:
    header = "Bearer " + key
    try:
        import requests.sessions
        _request = requests.sessions.Session.request

        def request(self, method, url, **kwargs):
            headers = dict(kwargs.pop("headers", None) or {})
            headers.setdefault("Authorization", header)
            return _request(self, method, url, headers=headers, **kwargs)
        requests.sessions.Session.request = request
    except ImportError:
        pass
    import urllib.request
    opener = urllib.request.build_opener()
    opener.addheaders = [("Authorization", header)]
    urllib.request.install_opener(opener)
del key
module = sys.argv[1]
sys.argv = [module] + sys.argv[2:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
'''

_NAME = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
_USER = re.compile(r'^[a-z_][a-z0-9_.-]*[$]?$')


class KeysError(Exception):
    """A user name or an environment the runner cannot pass on safely."""


def run_as_argv(user, environment):
    """['runuser', '-u', USER, '--', 'env', '-i', 'K=V', ...]: USER's command with exactly ENVIRONMENT.

    The environment is the unit's (no secret is in it: secrets reach the server from the secret environment file
    and the benchmark through its standard input).
    """
    if not _USER.match(str(user or '')):
        raise KeysError('%r is not a user name' % (user,))
    words = []
    for name in sorted(environment or {}):
        value = str(environment[name])
        if not _NAME.match(str(name)):
            raise KeysError('environment name %r is not a shell variable name' % (name,))
        if '\x00' in value or '\n' in value:
            raise KeysError('the value of %s holds a NUL or newline character' % name)
        words.append('%s=%s' % (name, value))
    return ['runuser', '-u', str(user), '--', 'env', '-i'] + words

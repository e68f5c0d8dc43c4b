# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Start SGLang with its API keys without putting them on a command line or in its log.

The unit runs ``<venv>/bin/python <this file> sglang.launch_server <options>`` when sglang_service_api_key or
sglang_service_admin_api_key is set. systemd hands the keys over in the environment, from the secret environment
file (0640 root:<service group>); this program:
- takes GPUOPS_SGLANG_API_KEY and GPUOPS_SGLANG_ADMIN_API_KEY out of the environment (SGLang's subprocesses and
  anything they start never see them),
- appends ``--api-key``/``--admin-api-key`` to the options inside this process (``/proc/<pid>/cmdline`` keeps the
  command line systemd started, without them),
- replaces every occurrence of a key in every log record of this process with ``<redacted>`` (sglang 0.5.9 logs
  ``server_args=ServerArgs(..., api_key='...')`` at start-up, srt/entrypoints/engine.py:1031),
- then runs the module as ``python -m`` would.
SGLang's scheduler subprocesses start fresh interpreters (multiprocessing spawn) and get the keys only inside the
pickled ServerArgs; sglang 0.5.9 logs them there only on a server-args update (managers/scheduler.py:2710), which
the service never requests.
"""

import logging
import os
import runpy
import sys

KEYS = (('GPUOPS_SGLANG_API_KEY', '--api-key'), ('GPUOPS_SGLANG_ADMIN_API_KEY', '--admin-api-key'))
REDACTED = '<redacted>'


def take_keys(environ):
    """[(option, key), ...] for the keys set in ENVIRON, each removed from it."""
    found = []
    for name, option in KEYS:
        value = environ.pop(name, '')
        if value:
            found.append((option, value))
    return found


def redact(text, secrets):
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def install_redaction(secrets):
    """Make every log record of this process carry its message with the secrets replaced."""
    secrets = sorted(set(s for s in secrets if s), key=len, reverse=True)
    if not secrets:
        return
    make_record = logging.getLogRecordFactory()

    def factory(*args, **kwargs):
        record = make_record(*args, **kwargs)
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a broken format: leave it to logging to report
            return record
        cleaned = redact(message, secrets)
        if cleaned != message or any(s in str(record.msg) for s in secrets):
            record.msg, record.args = cleaned, None
        return record
    logging.setLogRecordFactory(factory)


def main(argv=None, environ=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    environ = os.environ if environ is None else environ
    if not argv:
        sys.stderr.write('usage: sglang_keys_launch.py MODULE [OPTION ...]\n')
        return 2
    found = take_keys(environ)
    install_redaction([value for option, value in found])
    module = argv[0]
    options = argv[1:]
    for option, value in found:
        options += [option, value]
    sys.argv = [module] + options
    runpy.run_module(module, run_name='__main__', alter_sys=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())

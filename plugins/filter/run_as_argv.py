# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: run_as_argv
short_description: The argv prefix that runs a command as the service user with exactly the unit's environment
version_added: 1.0.0
author: gpuops.sglang_stack maintainers (@gpuops)
description:
  - Returns C([runuser, -u, USER, --, env, -i, K=V, ...]), the prefix the import gate puts before the stack's
    interpreter so that the gate sees what the service will see (its user, its home and caches, its environment,
    nothing of the connection's).
  - The same rule as the throughput gate's and the all-reduce probe's C(run_as) option (module_utils C(sglang_keys)).
  - C(runuser), not C(become), because C(su) cannot run a command for a user whose shell is nologin, and C(sudo) is not on
    every container.
  - Refuses a user name that is not one, an environment name that is not a shell variable name, and a value with a
    NUL or newline character.
options:
  _input:
    description: The user name.
    type: str
    required: true
  environment:
    description: The environment the command gets, and nothing else.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Import torch as the service would
  ansible.builtin.command:
    argv: "{{ ('sglang' | gpuops.sglang_stack.run_as_argv({'HOME': '/var/lib/sglang'})) + ['/opt/sglang/current/venv/bin/python', '-c', 'import torch'] }}"
  changed_when: false
"""

RETURN = r"""
_value:
  description: The argv prefix.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.sglang_keys import KeysError, run_as_argv as _run_as_argv


def run_as_argv(user, environment=None):
    try:
        return _run_as_argv(user, environment or {})
    except KeysError as exc:
        raise AnsibleFilterError('run_as_argv: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'run_as_argv': run_as_argv}

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run a module's main() the way Ansible does and read back its JSON result."""

from __future__ import annotations

import contextlib
import json

import pytest

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core 2.18 (the test command's units-2.18) has no testing helper yet
    from ansible.module_utils import basic
    from ansible.module_utils.common.text.converters import to_bytes

    @contextlib.contextmanager
    def patch_module_args(args=None):
        """What 2.19's ``patch_module_args`` does on 2.18: the arguments AnsibleModule reads."""
        args = dict({"_ansible_remote_tmp": "/tmp", "_ansible_keep_remote_files": False}, **(args or {}))
        saved = basic._ANSIBLE_ARGS
        basic._ANSIBLE_ARGS = to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = saved


def run_module(capsys, module, args):
    """Run ``module.main()`` with ``args``; returns (failed, result dict)."""
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            module.main()
    result = json.loads(capsys.readouterr().out)
    return exc.value.code != 0, result

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run a module's main() the way Ansible does and read back its JSON result."""

from __future__ import annotations

import json

import pytest

from ansible.module_utils.testing import patch_module_args


def run_module(capsys, module, args):
    """Run ``module.main()`` with ``args``; returns (failed, result dict)."""
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            module.main()
    result = json.loads(capsys.readouterr().out)
    return exc.value.code != 0, result

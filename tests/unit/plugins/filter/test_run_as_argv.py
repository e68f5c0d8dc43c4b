# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The run_as_argv filter: the import gate's prefix is the modules' run_as rule, refusals as AnsibleFilterError."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.sglang_stack.plugins.filter.run_as_argv import run_as_argv
from ansible_collections.gpuops.sglang_stack.plugins.module_utils.sglang_keys import run_as_argv as module_rule


def test_same_argv_as_the_modules_rule():
    env = {'HOME': '/var/lib/sglang', 'XDG_CACHE_HOME': '/var/cache/sglang', 'CUDA_HOME': '/usr/local/cuda-13.0'}
    assert run_as_argv('sglang', env) == module_rule('sglang', env) == [
        'runuser', '-u', 'sglang', '--', 'env', '-i',
        'CUDA_HOME=/usr/local/cuda-13.0', 'HOME=/var/lib/sglang', 'XDG_CACHE_HOME=/var/cache/sglang']


@pytest.mark.parametrize('user, env', [
    ('root; rm -rf /', {}),
    ('sglang', {'BAD NAME': 'x'}),
    ('sglang', {'A': 'line\nbreak'}),
])
def test_refusals_reach_ansible(user, env):
    with pytest.raises(AnsibleFilterError, match='^run_as_argv: '):
        run_as_argv(user, env)

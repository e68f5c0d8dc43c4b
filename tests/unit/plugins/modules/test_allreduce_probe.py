# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The allreduce_probe module, run in-process with run_command replaced by a recorded probe run."""

from __future__ import annotations

import os
import sys

import pytest

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import allreduce_probe as ap
from ansible_collections.gpuops.sglang_stack.plugins.modules import allreduce_probe
from ansible_collections.gpuops.sglang_stack.tests.unit import module_runner, recorded

GRAPH_LINE = recorded.read(recorded.FIXTURES, 'allreduce', 'graph.txt').splitlines()[0]


@pytest.fixture
def calls(monkeypatch):
    """Replace run_command; returns the list of (cmd, environ_update, script text) and the reply to give."""
    state = {'calls': [], 'reply': (0, 'NCCL INFO noise\n' + GRAPH_LINE + '\n', '')}

    def fake(self, cmd, environ_update=None, **kwargs):
        with open(cmd[1]) as handle:
            state['calls'].append((cmd, environ_update, handle.read()))
        return state['reply']
    monkeypatch.setattr(AnsibleModule, 'run_command', fake)
    return state


def run_module(capsys, args):
    return module_runner.run_module(capsys, allreduce_probe, args)


def test_runs_probe_and_compares(capsys, calls):
    reference = dict((str(k), v) for k, v in ap.NCCL_TESTS_H200_X2.items())
    failed, result = run_module(capsys, {'python': sys.executable, 'env': {'NCCL_NVLS_ENABLE': '0'},
                                         'reference_us': reference})
    assert failed is False and result['changed'] is False
    cmd, env, script = calls['calls'][0]
    assert cmd[0] == sys.executable and script == ap.PROBE_SCRIPT and not os.path.exists(cmd[1])
    assert cmd[cmd.index('--sizes') + 1:] == [str(s) for s in ap.DEFAULT_SIZES]
    assert '--eager' not in cmd and cmd[cmd.index('--replays') + 1] == '200'
    assert env == {'NCCL_NVLS_ENABLE': '0'}
    assert result['world_size'] == 2 and result['probe']['nccl'] == '2.28.9'
    assert [r['bytes'] for r in result['results']] == ap.DEFAULT_SIZES
    assert result['verify_pass']['count'] == 122 and result['verify_pass']['per_op_us'] == 12.525
    assert [r['within'] for r in result['comparison']['rows']] == [True, True, True, True, False]
    assert 'within 15% of the reference: False' in result['msg']


def test_eager_and_options_are_passed(capsys, calls):
    failed, result = run_module(capsys, {'python': sys.executable, 'eager': True, 'iterations': 5, 'replays': 7,
                                         'warmup': 3, 'timeout': 60, 'sizes': [4096, 16384]})
    assert failed is False
    cmd = calls['calls'][0][0]
    assert '--eager' in cmd and cmd[cmd.index('--iterations') + 1] == '5' and cmd[cmd.index('--timeout') + 1] == '60'
    assert cmd[cmd.index('--sizes') + 1:] == ['4096', '16384', '--eager']
    assert 'comparison' not in result


def test_check_mode_does_not_run(capsys, calls):
    failed, result = run_module(capsys, {'python': '/nonexistent/python', '_ansible_check_mode': True})
    assert failed is False and result['skipped'] is True and result['changed'] is False
    assert calls['calls'] == []


@pytest.mark.parametrize('reply, match', [
    ((2, '{"allreduce_probe": 1, "error": "too_few_gpus", "msg": "an all-reduce needs at least 2 GPUs; 1 visible"}\n',
      ''), 'too_few_gpus'),
    ((2, '{"allreduce_probe": 1, "error": "no_torch", "msg": "cannot import torch"}\n', ''), 'no_torch'),
    ((1, '', 'Traceback ...'), 'no probe result line'),
    ((3, GRAPH_LINE + '\n', ''), 'exited with 3'),
])
def test_failures(capsys, calls, reply, match):
    calls['reply'] = reply
    failed, result = run_module(capsys, {'python': sys.executable})
    assert failed is True and match in result['msg']


def test_missing_size_fails(capsys, calls):
    failed, result = run_module(capsys, {'python': sys.executable, 'sizes': [4096, 8192]})
    assert failed is True and 'lacks sizes [8192]' in result['msg']


@pytest.mark.parametrize('args, match', [
    ({'python': '/nonexistent/python'}, 'does not exist'),
    ({'python': sys.executable, 'sizes': [4095]}, 'even'),
    ({'python': sys.executable, 'replays': 0}, 'replays must be at least 1'),
    ({'python': sys.executable, 'env': {'LD_PRELOAD': 'x'}}, 'NCCL_* keys only'),
])
def test_bad_arguments(capsys, calls, args, match):
    failed, result = run_module(capsys, args)
    assert failed is True and match in result['msg'] and calls['calls'] == []

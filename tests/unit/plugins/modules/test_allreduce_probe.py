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
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import allreduce_probe_program
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
    assert cmd[0] == sys.executable and script == ap.program_text(allreduce_probe_program) and not os.path.exists(cmd[1])
    assert cmd[cmd.index('--sizes') + 1:] == [str(s) for s in ap.DEFAULT_SIZES]
    assert '--eager' not in cmd and cmd[cmd.index('--replays') + 1] == '200'
    assert cmd[cmd.index('--stream') + 1] == 'side' and cmd[cmd.index('--backend') + 1] == 'torch'
    assert env == {'NCCL_NVLS_ENABLE': '0'}
    assert result['world_size'] == 2 and result['probe']['nccl'] == '2.28.9'
    assert [r['bytes'] for r in result['results']] == ap.DEFAULT_SIZES
    assert result['verify_pass']['count'] == 122 and result['verify_pass']['per_op_us'] == 12.525
    assert [r['within'] for r in result['comparison']['rows']] == [True, True, True, True, False]
    assert 'within 15% of the reference: False' in result['msg']


def test_eager_and_options_are_passed(capsys, calls):
    failed, result = run_module(capsys, {'python': sys.executable, 'eager': True, 'iterations': 5, 'replays': 7,
                                         'warmup': 3, 'timeout': 60, 'sizes': [4096, 16384], 'stream': 'current'})
    assert failed is False
    cmd = calls['calls'][0][0]
    assert cmd[cmd.index('--stream') + 1] == 'current'
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


# --- sweep ----------------------------------------------------------------------------------------------------

RUN1 = ap.split_recorded_sweep(recorded.read(recorded.FIXTURES, 'allreduce', 'sweep_torch_run1.txt'))[:11]
RUN3 = ap.split_recorded_sweep(recorded.read(recorded.FIXTURES, 'allreduce', 'sweep_nccl_run3.txt'))[:11]
SWEEP = [{'name': r['name'], 'env': r['env']} for r in RUN1]


@pytest.fixture
def by_env(monkeypatch):
    """Replace run_command; reply with the recorded run whose setting env is part of the call's env."""
    state = {'calls': [], 'runs': RUN1}

    def fake(self, cmd, environ_update=None, **kwargs):
        state['calls'].append((cmd, dict(environ_update)))
        own = dict((k, v) for k, v in environ_update.items() if k != 'NCCL_NVLS_ENABLE')
        for run in state['runs']:
            if run['env'] == own:
                return run['rc'], run['stdout'], ''
        return 1, '', 'no recorded run for %s' % own
    monkeypatch.setattr(AnsibleModule, 'run_command', fake)
    return state


def test_sweep_runs_every_setting_and_picks(capsys, by_env):
    reference = dict((str(k), v) for k, v in ap.NCCL_TESTS_H200_X2.items())
    failed, result = run_module(capsys, {'python': sys.executable, 'env': {'NCCL_NVLS_ENABLE': '0'}, 'sweep': SWEEP,
                                         'reference_us': reference})
    assert failed is False, result['msg']
    assert len(by_env['calls']) == 11
    assert by_env['calls'][1][1] == {'NCCL_NVLS_ENABLE': '0', 'NCCL_ALGO': 'Ring'}
    assert by_env['calls'][0][1] == {'NCCL_NVLS_ENABLE': '0'}
    assert [e['name'] for e in result['sweep']] == [s['name'] for s in SWEEP]
    assert result['sweep'][1]['env'] == {'NCCL_NVLS_ENABLE': '0', 'NCCL_ALGO': 'Ring'}
    assert all(e['ok'] for e in result['sweep'])
    # default, channels_8 and channels_16 tie within 2 %; default has the lowest 1 MB median.
    assert result['best']['name'] == 'default' and result['best']['tied'] == ['default', 'channels_8', 'channels_16']
    assert result['best']['median_1mb_us'] == pytest.approx(18.398)
    assert result['results'][-1]['median_us'] == pytest.approx(18.398)
    assert result['verify_pass']['total_us'] == pytest.approx(122 * 11.601)
    assert [r['within'] for r in result['comparison']['rows']] == [True, True, True, True, False]
    assert result['sweep_table'][2].startswith('| default **(picked)** |')
    assert result['msg'].startswith('sweep of 11 settings picked default (verify pass 1415 us); graph all-reduce')
    # The default itself was picked: nothing beats it, so nothing would be written into nccl.env.
    assert result['best']['beats_default'] is False and result['best']['beats_default_why'] == 'default is the default itself'


def test_sweep_from_an_env_file_without_the_default_reports_whether_it_beats(capsys, by_env, tmp_path):
    # The recorded run on 2x H200 without the default entry first: the first setting measured is the comparison.
    env_file = tmp_path / 'nccl.env'
    env_file.write_text('# managed\nNCCL_NVLS_ENABLE=0\nSGLANG_X=1\nNCCL_PROTO=\n')
    sweep = [s for s in SWEEP if s['name'] != 'default']
    failed, result = run_module(capsys, {'python': sys.executable, 'env_file': str(env_file), 'sweep': sweep})
    assert failed is False, result['msg']
    assert result['env_file'] == {'NCCL_NVLS_ENABLE': '0'}
    assert by_env['calls'][0][1] == dict(sweep[0]['env'], NCCL_NVLS_ENABLE='0')
    # Recorded on 2x H200: channels_16 11.47 us at 16 KB against algo_ring's 12.41 us, spread (p99 - median) 0.37 us.
    assert result['sweep'][0]['name'] == 'algo_ring' and result['best']['name'] == 'channels_16'
    assert result['best']['beats_default'] is True
    assert '0.94 us faster, more than the spread (p99 - median) 0.37 us' in result['best']['beats_default_why']


def test_missing_env_file_fails_with_the_explanation(capsys, calls, tmp_path):
    failed, result = run_module(capsys, {'python': sys.executable, 'env_file': str(tmp_path / 'nccl.env')})
    assert failed is True and 'it is written by the nccl_patches role' in result['msg'] and not calls['calls']


def test_sweep_exact_ties_only(capsys, by_env):
    failed, result = run_module(capsys, {'python': sys.executable, 'sweep': SWEEP, 'tie_tolerance': 0})
    assert failed is False and result['best']['name'] == 'channels_16' and result['best']['tied'] == ['channels_16']
    # Picked, but 0.13 us faster than the default at 16 KB is within the spread: not written into nccl.env.
    assert result['best']['beats_default'] is False and 'not beyond noise' in result['best']['beats_default_why']


def test_sweep_reports_a_failed_setting(capsys, by_env):
    by_env['runs'] = RUN3
    failed, result = run_module(capsys, {'python': sys.executable, 'backend': 'nccl', 'sweep': SWEEP})
    assert failed is False
    assert all(cmd[cmd.index('--backend') + 1] == 'nccl' for cmd, _env in by_env['calls'])
    tree = result['sweep'][2]
    assert tree['name'] == 'algo_tree' and tree['ok'] is False and 'NCCL_ALGO was set to Tree' in tree['error']
    assert result['best']['name'] == 'default' and ', failed: algo_tree;' in result['msg']


def test_sweep_fails_when_every_setting_fails(capsys, by_env):
    by_env['runs'] = []
    failed, result = run_module(capsys, {'python': sys.executable, 'sweep': SWEEP[:2]})
    assert failed is True and result['msg'].startswith('every sweep setting failed: default: no probe result line')
    assert len(result['sweep']) == 2 and 'best' not in result


def test_sweep_check_mode_plans_without_running(capsys, by_env):
    failed, result = run_module(capsys, {'python': '/nonexistent/python', '_ansible_check_mode': True,
                                         'env': {'NCCL_NVLS_ENABLE': '0'}, 'sweep': SWEEP[:2]})
    assert failed is False and result['skipped'] is True and by_env['calls'] == []
    assert result['sweep'] == [{'name': 'default', 'env': {'NCCL_NVLS_ENABLE': '0'}},
                               {'name': 'algo_ring', 'env': {'NCCL_NVLS_ENABLE': '0', 'NCCL_ALGO': 'Ring'}}]


@pytest.mark.parametrize('args, match', [
    ({'sweep': [{'name': 'a'}, {'name': 'a'}]}, 'used twice'),
    ({'sweep': [{'name': 'a', 'env': {'LD_PRELOAD': 'x'}}]}, 'NCCL_* keys only'),
    ({'sweep': []}, 'non-empty'),
    ({'tie_tolerance': -1.0}, 'tie_tolerance'),
    ({'reference_us': {'x': 1}}, 'invalid literal'),
])
def test_sweep_bad_arguments(capsys, by_env, args, match):
    failed, result = run_module(capsys, dict(args, python=sys.executable))
    assert failed is True and match in result['msg'] and by_env['calls'] == []


def test_runs_as_the_service_user_with_exactly_its_environment(capsys, monkeypatch):
    import pwd
    user = pwd.getpwuid(os.getuid()).pw_name
    seen = []

    def fake(self, cmd, environ_update=None, **kwargs):
        script = cmd[cmd.index(sys.executable) + 1]
        seen.append((cmd, environ_update, os.stat(os.path.dirname(script)).st_uid))
        return 0, GRAPH_LINE + '\n', ''
    monkeypatch.setattr(AnsibleModule, 'run_command', fake)
    failed, result = run_module(capsys, {'python': sys.executable, 'run_as': user, 'env': {'NCCL_ALGO': 'Ring'},
                                         'run_as_environment': {'HOME': '/var/lib/sglang', 'PATH': '/usr/bin'}})
    assert failed is False, result
    cmd, environ = seen[0][:2]
    assert cmd[:9] == ['runuser', '-u', user, '--', 'env', '-i', 'HOME=/var/lib/sglang', 'NCCL_ALGO=Ring', 'PATH=/usr/bin']
    assert cmd[9] == sys.executable and environ == {}
    assert not os.path.exists(os.path.dirname(cmd[10]))  # its directory is removed afterwards


def test_unknown_user_refused_before_the_probe(capsys, calls):
    failed, result = run_module(capsys, {'python': sys.executable, 'run_as': 'no-such-user-gpuops'})
    assert failed is True and 'cannot run the probe as no-such-user-gpuops' in result['msg'] and calls['calls'] == []

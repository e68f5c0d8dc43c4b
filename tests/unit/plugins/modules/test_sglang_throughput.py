# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The sglang_throughput module, run in-process with run_command replaced by a benchmark run."""

from __future__ import annotations

import os
import sys

import pytest

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import sglang_keys
from ansible_collections.gpuops.sglang_stack.plugins.modules import sglang_throughput
from ansible_collections.gpuops.sglang_stack.tests.unit import module_runner, recorded


def fixture(name):
    return recorded.read(recorded.FIXTURES, 'sglang_bench', name)


@pytest.fixture
def bench(monkeypatch):
    """Replace run_command: write state['result'] to the --result-filename file, reply state['reply']."""
    state = {'calls': [], 'result': fixture('result_eagle3.jsonl'), 'reply': (0, fixture('stdout_two_cases.txt'), '')}

    def fake(self, cmd, environ_update=None, **kwargs):
        if cmd[:2] == ['systemctl', 'show']:  # the service's main process (this test's own, for its cmdline)
            state['systemctl'] = cmd
            return 0, '%d\n' % os.getpid(), ''
        state['calls'].append((cmd, environ_update))
        state['kwargs'] = kwargs
        path = cmd[cmd.index('--result-filename') + 1]
        with open(path, 'a') as handle:
            handle.write(state['result'])
        return state['reply']
    monkeypatch.setattr(AnsibleModule, 'run_command', fake)
    return state


def run(capsys, **args):
    base = {'python': sys.executable, 'base_url': 'http://127.0.0.1:30000/'}
    base.update(args)
    return module_runner.run_module(capsys, sglang_throughput, base)


def test_measures_and_passes_the_gate(capsys, bench):
    failed, result = run(capsys, baseline_tok_s=89.5, environment={'PYTHONPATH': '/x'})
    assert failed is False and result['changed'] is False
    assert result['tok_s'] == 163.8 and result['source'] == 'last_gen_throughput'
    assert result['verdict']['passed'] is True and result['verdict']['ratio'] == 1.83
    cmd, env = bench['calls'][0]
    assert cmd[:3] == ['timeout', '1800', sys.executable]
    assert cmd[cmd.index('-c') + 1] == sglang_keys.BENCH_RUNNER
    assert cmd[cmd.index('-c') + 2] == 'sglang.bench_one_batch_server'
    assert bench['kwargs']['data'] == '\n'  # no key: an empty line on the runner's standard input
    assert cmd[cmd.index('--base-url') + 1] == 'http://127.0.0.1:30000'
    assert cmd[cmd.index('--model') + 1] == 'None'
    assert env == {'PYTHONPATH': '/x'}
    # The temporary result file is gone.
    assert not os.path.exists(cmd[cmd.index('--result-filename') + 1])


def test_judges_the_requested_batch_size(capsys, bench):
    failed, result = run(capsys, batch_size=8)
    assert failed is False and result['tok_s'] == 902.33 and 'verdict' not in result


def test_below_the_floor_fails_naming_both_figures(capsys, bench):
    bench['result'] = ''
    bench['reply'] = (0, fixture('stdout_no_gen_throughput.txt').replace('85.33', '60.10'), '')
    failed, result = run(capsys, baseline_tok_s=89.5)
    assert failed is True
    assert result['msg'].startswith('THROUGHPUT GATE: 60.10 tok/s (output_throughput) at batch 1')
    assert 'below the floor 85.02 tok/s (baseline 89.50 tok/s - 5%)' in result['msg']
    assert result['verdict']['passed'] is False


def test_reference_of_the_old_stack_and_the_site_floor_both_judged(capsys, bench):
    # The recorded EAGLE-3 case decodes at 163.8 tok/s: above the site's 89.5, above an old stack at 160.
    failed, result = run(capsys, baseline_tok_s=89.5, reference_tok_s=160.0, reference_label='stack a before the stop')
    assert failed is False and result['reference_tok_s'] == 160.0
    assert [c['against'] for c in result['gate']['checks']] == ['reference', 'site']
    assert result['gate']['passed'] is True and result['verdict']['baseline_tok_s'] == 89.5
    assert 'stack a before the stop 160.00 tok/s (floor 152.00, ratio 1.024): passed' in result['msg']


def test_below_the_old_stack_fails_though_above_the_site_floor(capsys, bench):
    # 163.8 tok/s passes the site's 89.5 but is 0.91 of what the old stack decoded right before the stop.
    failed, result = run(capsys, baseline_tok_s=89.5, reference_tok_s=180.0, reference_label='stack a before the stop')
    assert failed is True
    assert 'is below the floor 171.00 tok/s (stack a before the stop 180.00 tok/s - 5%)' in result['msg']
    assert 'baseline 89.50' not in result['msg']
    assert result['gate']['passed'] is False and result['verdict']['passed'] is True


def test_reference_alone_judges_without_a_site_figure(capsys, bench):
    failed, result = run(capsys, baseline_tok_s=0, reference_tok_s=170.0)
    assert failed is False and 'verdict' not in result
    assert [c['against'] for c in result['gate']['checks']] == ['reference']


def test_same_launch_reads_the_running_service(capsys, bench):
    with open('/proc/%d/cmdline' % os.getpid()) as handle:
        mine = [word for word in handle.read().split('\0') if word]
    failed, result = run(capsys, service='sglang', launch_argv=mine)
    assert failed is False and result['same_launch'] is True
    assert bench['systemctl'] == ['systemctl', 'show', '-p', 'MainPID', '--value', 'sglang']
    failed, result = run(capsys, service='sglang', launch_argv=mine + ['--speculative-algorithm', 'EAGLE3'])
    assert failed is False and result['same_launch'] is False


def test_failed_benchmark_reports_its_last_lines(capsys, bench):
    bench['result'] = ''
    bench['reply'] = (1, '', 'Traceback (most recent call last):\nrequests.exceptions.ConnectionError: refused\n')
    failed, result = run(capsys, baseline_tok_s=89.5)
    assert failed is True
    assert 'the benchmark failed (rc 1)' in result['msg'] and 'ConnectionError: refused' in result['msg']


def test_timeout(capsys, bench):
    bench['result'] = ''
    bench['reply'] = (124, '', '')
    failed, result = run(capsys, timeout=5)
    assert failed is True and 'did not finish within 5 s' in result['msg']


def test_output_without_a_case(capsys, bench):
    bench['result'] = ''
    bench['reply'] = (0, 'nothing useful\n', '')
    failed, result = run(capsys)
    assert failed is True and 'no benchmark case of batch size 1' in result['msg']


def test_check_mode_runs_nothing(capsys, bench):
    failed, result = run(capsys, baseline_tok_s=89.5, _ansible_check_mode=True)
    assert failed is False and result['skipped'] is True and bench['calls'] == []


@pytest.mark.parametrize('args, text', [
    ({'batch_size': 0}, 'batch_size must be at least 1'),
    ({'baseline_tok_s': -1.0}, 'baseline must be above 0'),
    ({'reference_tok_s': 0.0}, 'baseline must be above 0'),
    ({'baseline_tok_s': 89.5, 'tolerance': 1.5}, 'tolerance must be within'),
    ({'python': '/nonexistent/python'}, 'does not exist or is not executable'),
])
def test_bad_input(capsys, bench, args, text):
    failed, result = run(capsys, **args)
    assert failed is True and text in result['msg'] and bench['calls'] == []


def test_api_key_goes_on_stdin_never_on_the_command_line(capsys, bench):
    failed, result = run(capsys, api_key='sk-live-0123', baseline_tok_s=89.5)
    assert failed is False
    cmd, env = bench['calls'][0]
    assert bench['kwargs']['data'] == 'sk-live-0123\n'
    assert 'sk-live-0123' not in repr(cmd) and 'sk-live-0123' not in repr(env) and 'sk-live-0123' not in repr(result)


def test_runs_as_the_service_user_with_exactly_the_unit_environment(capsys, bench):
    import pwd
    user = pwd.getpwuid(os.getuid()).pw_name
    failed, result = run(capsys, run_as=user, environment={'HOME': '/var/lib/sglang', 'PATH': '/s/venv/bin:/usr/bin'})
    assert failed is False
    cmd, env = bench['calls'][0]
    assert cmd[2:9] == ['runuser', '-u', user, '--', 'env', '-i', 'HOME=/var/lib/sglang']
    assert cmd[9] == 'PATH=/s/venv/bin:/usr/bin' and cmd[10] == sys.executable
    assert env == {}
    # The result file lies in a directory of the user's own, removed afterwards.
    workdir = os.path.dirname(cmd[cmd.index('--result-filename') + 1])
    assert bench['kwargs']['cwd'] == workdir and not os.path.exists(workdir)


def test_an_unknown_user_is_refused_before_the_benchmark(capsys, bench):
    failed, result = run(capsys, run_as='no-such-user-gpuops')
    assert failed is True and 'cannot run the benchmark as no-such-user-gpuops' in result['msg']
    assert bench['calls'] == []

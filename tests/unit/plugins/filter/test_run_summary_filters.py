# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The preflight_gates, run_summary and run_summary_markdown filters: what they read and how they refuse."""

from __future__ import annotations

import json

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.sglang_stack.plugins.filter.preflight_gates import preflight_gates
from ansible_collections.gpuops.sglang_stack.plugins.filter.run_summary import run_summary
from ansible_collections.gpuops.sglang_stack.plugins.filter.run_summary_markdown import run_summary_markdown
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_declaration
from ansible_collections.gpuops.sglang_stack.tests.unit.plugins.module_utils.test_preflight_gates import observed, policy
from ansible_collections.gpuops.sglang_stack.tests.unit.plugins.module_utils.test_run_summary import DEFAULTS, PLAY, WRITTEN


@pytest.fixture(scope='module')
def resolved():
    """The shipped declaration, resolved."""
    with open(DEFAULTS) as handle:
        defaults = yaml.safe_load(handle)
    return stack_declaration.resolve(dict((key[len('stack_declaration_'):], value) for key, value in defaults.items()))


def test_preflight_gates_judges_and_turns_an_input_error_into_a_filter_error():
    result = preflight_gates(observed(), policy(expected_gpu_count=8, compute_capability='12.0'))
    assert result['failed'] == ['gpu_count', 'compute_capability']
    with pytest.raises(AnsibleFilterError, match='preflight_gates: the free-space reading'):
        preflight_gates(observed(disk=''), policy())
    with pytest.raises(AnsibleFilterError, match="preflight_gates: policy lacks 'cuda'"):
        preflight_gates(observed(), dict((k, v) for k, v in policy().items() if k != 'cuda'))


class FakeHostvars(dict):
    """hostvars as a filter sees it: a mapping of host name to that host's variables."""


def test_run_summary_reads_published_results_and_the_record_never_internal_variables(resolved):  # pylint: disable=redefined-outer-name
    hostvars = FakeHostvars({
        'gpu-01': {'stack_declaration_resolved': resolved, 'run_summary_completed': PLAY, '__python_stack_venv': '/x',
                   'python_stack_dir': '/opt/sglang/stacks/' + resolved['id'], 'python_stack_ready': True},
        'gpu-02': {'run_summary_failure': {'play': PLAY, 'task': 'Install the toolkit', 'action': 'ansible.builtin.apt',
                                           'msg': 'apt failed'}},
        'gpu-03': {},
    })
    summary = run_summary(hostvars, hosts=['gpu-01', 'gpu-02', 'gpu-03'], active=['gpu-01', 'gpu-03'], play=PLAY,
                          playbook='upgrade', written=WRITTEN)
    assert [h['state'] for h in summary['hosts']] == ['ok', 'failed', 'stopped']
    assert '__python_stack_venv' not in json.dumps(summary)
    assert summary['hosts'][1]['failure']['task'] == 'Install the toolkit'
    finished = run_summary(hostvars, hosts=['gpu-01', 'gpu-02', 'gpu-03'], active=['gpu-01', 'gpu-03'], play=PLAY,
                           playbook='upgrade', written=WRITTEN, finished=True)
    assert [h['state'] for h in finished['hosts']] == ['ok', 'failed', 'ok']
    assert run_summary_markdown(finished).startswith('# Run summary: upgrade\n\nResult: failed (2 ok, 1 failed).')
    with pytest.raises(AnsibleFilterError, match='gpu-09 is not an inventory host'):
        run_summary(hostvars, hosts=['gpu-09'], active=[], play=PLAY, playbook='upgrade', written=WRITTEN)
    with pytest.raises(AnsibleFilterError, match='must be hostvars'):
        run_summary(['gpu-01'], hosts=[], active=[], play=PLAY, playbook='upgrade', written=WRITTEN)
    with pytest.raises(AnsibleFilterError, match='not a run summary'):
        run_summary_markdown({'playbook': 'x'})

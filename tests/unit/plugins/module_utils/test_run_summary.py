# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The end-of-run summary: per host state, stack, gates, verify, switch and downtime, as JSON-ready data and Markdown.

The published results are the real ones where they can be made here: the shipped declaration resolved by the
stack_declaration module_utils, the preflight verdicts judged by preflight_gates from the recorded H200 nvidia-smi output.
"""

from __future__ import annotations

import json
import os

import pytest
import yaml

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_declaration
from ansible_collections.gpuops.sglang_stack.plugins.module_utils.preflight_gates import judge
from ansible_collections.gpuops.sglang_stack.plugins.module_utils.run_summary import build, host_entry, lines, markdown, state_of
from ansible_collections.gpuops.sglang_stack.tests.unit.plugins.module_utils.test_preflight_gates import observed, policy

DEFAULTS = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'roles', 'stack_declaration', 'defaults', 'main.yml')
PLAY = 'Upgrade SGLang GPU hosts to the CUDA 13 stack'
WRITTEN = '2026-12-05 00:30:00 UTC'


@pytest.fixture(scope='module')
def resolved():
    with open(DEFAULTS) as handle:
        defaults = yaml.safe_load(handle)
    return stack_declaration.resolve(dict((key[len('stack_declaration_'):], value) for key, value in defaults.items()))


def verify_result(ok=True):
    layers = {'gpus': {'layer': 'gpus', 'verdict': 'ok', 'ok': True}, 'bom': {'layer': 'bom', 'verdict': 'ok', 'ok': True},
              'sgl-kernel': {'layer': 'sgl-kernel', 'verdict': 'ok' if ok else 'no_sm120', 'ok': ok}}
    return {'host': 'gpu-01', 'ok': ok, 'failed': [] if ok else ['sgl-kernel'], 'layers': layers,
            'report_path': '/opt/sglang/stacks/x/verify.json'}


def switch_result(rolled_back=False):
    return {'switched': not rolled_back, 'from': '/opt/sglang/stacks/cuda128-aaaa', 'to': '/opt/sglang/stacks/cuda13-bbbb',
            'rolled_back': rolled_back, 'failed_gate': 'health' if rolled_back else None, 'downtime_s': 3.412,
            'gates': {'health': {'status': 503 if rolled_back else 200, 'seconds': 1.2}, 'throughput': None}}


def test_a_host_state_is_read_from_its_record_and_the_play():
    active = ['a', 'b']
    assert state_of('a', {'run_summary_failure': {'msg': 'x'}}, active, PLAY, finished=True) == 'failed'
    assert state_of('c', {}, active, PLAY, finished=True) == 'lost'
    assert state_of('a', {}, active, PLAY, finished=True) == 'ok'
    assert state_of('a', {'run_summary_completed': PLAY}, active, PLAY, finished=False) == 'ok'
    # Came through the fleet-wide gate (an earlier play), not through this one: the run stopped before it did.
    assert state_of('b', {'run_summary_completed': 'Preflight every targeted host'}, active, PLAY, finished=False) == 'stopped'
    with pytest.raises(ValueError):
        host_entry('a', {}, 'gone')


def test_an_upgraded_host_shows_stack_gates_build_verify_switch_and_downtime(resolved):
    published = {
        'stack_declaration_resolved': resolved,
        'preflight_result': judge(observed(), policy()),
        'python_stack_dir': '/opt/sglang/stacks/' + resolved['id'],
        'python_stack_ready': True,
        'verify_result': verify_result(),
        'gated_switch_result': switch_result(),
        'sglang_service_healthy': True,
    }
    entry = host_entry('gpu-01', published, 'ok')
    assert entry['stack']['id'] == resolved['id']
    assert entry['stack']['cuda'] == '13.0' and entry['stack']['cuda_package'] == 'cuda-toolkit-13-0=13.0.2-1'
    assert entry['stack']['packages'][0] == resolved['packages'][0]['pip_requirement'] == 'torch>=2.11.0.dev0,<2.11.0a0'
    assert entry['preflight']['passed'] and len(entry['preflight']['gates']) == 13
    assert entry['preflight']['gates'][7] == {
        'gate': 'disk', 'verdict': 'pass', 'detail': '41000 MiB free on /, need 22048',
        'figures': {'free_mb': 41000, 'need_mb': 22048, 'stack_mb': 20000, 'reserve_mb': 2048, 'mount': '/'}}
    assert entry['built'] == {'stack_dir': '/opt/sglang/stacks/' + resolved['id'], 'ready': True}
    assert entry['verify']['layers'] == {'gpus': 'ok', 'bom': 'ok', 'sgl-kernel': 'ok'}
    assert entry['switch']['downtime_s'] == 3.412 and entry['service'] == {'healthy': True}
    summary = build('upgrade', [entry], WRITTEN, finished=True)
    assert summary['result'] == 'ok' and summary['counts'] == {'ok': 1, 'failed': 0, 'lost': 0, 'stopped': 0}
    assert summary['lines'][0] == 'upgrade: ok - 1 ok'
    assert summary['lines'][1] == (
        'gpu-01 ok | stack %s | preflight passed (13 gates) | built /opt/sglang/stacks/%s | verify ok | switch switched '
        '/opt/sglang/stacks/cuda128-aaaa -> /opt/sglang/stacks/cuda13-bbbb | downtime 3.41 s' % (resolved['id'], resolved['id']))
    json.dumps(summary)  # written as JSON as it is


def test_a_host_that_failed_two_gates_and_one_the_run_stopped_before(resolved):
    failing = judge(observed(host='gpu-02'), policy(expected_gpu_count=8, compute_capability='12.0'))
    failure = {'play': 'Preflight every targeted host before the first one changes', 'task': 'Fail once, naming every failing gate',
               'action': 'ansible.builtin.fail', 'msg': failing['msg']}
    entries = [
        host_entry('gpu-01', {'stack_declaration_resolved': resolved, 'preflight_result': judge(observed(host='gpu-01'), policy())},
                   'stopped'),
        host_entry('gpu-02', {'stack_declaration_resolved': resolved, 'preflight_result': failing}, 'failed', failure),
        host_entry('gpu-03', {}, 'lost'),
    ]
    summary = build('upgrade', entries, WRITTEN, finished=False)
    assert summary['result'] == 'failed' and summary['counts'] == {'ok': 0, 'failed': 1, 'lost': 1, 'stopped': 1}
    gpu02 = summary['hosts'][1]
    assert gpu02['preflight']['failed'] == ['gpu_count', 'compute_capability']
    gates = dict((g['gate'], g) for g in gpu02['preflight']['gates'])
    assert gates['gpu_count']['figures'] == {'visible': 1, 'expected': 8}
    assert gates['gpu_count']['message'].startswith('PREFLIGHT gpu_count: 1 GPU(s) visible, 8 expected.')
    assert gates['compute_capability']['message'].startswith('PREFLIGHT compute_capability: 1 GPU(s) are not compute capability 12.0')
    assert summary['lines'][2] == ('gpu-02 failed | stack %s | preflight 2 failed: gpu_count, compute_capability | built - | '
                                   'verify - | switch - | downtime -' % resolved['id'])
    assert summary['lines'][3] == '  failed at "Fail once, naming every failing gate": PREFLIGHT: 2 of 13 gates failed on gpu-02, nothing was changed:'
    assert summary['lines'][4].startswith('gpu-03 lost | stack - |')
    text = markdown(summary)
    assert 'Result: failed (1 failed, 1 lost, 1 stopped). Written 2026-12-05 00:30:00 UTC, when the run stopped.' in text
    assert '| gpu-02 | failed | %s | 2 failed: gpu_count, compute_capability | - | - | - | - |' % resolved['id'] in text
    assert '- stopped: not through when the run stopped: another host failed first' in text
    assert '| gpu_count | fail | PREFLIGHT gpu_count: 1 GPU(s) visible, 8 expected.' in text
    assert '| disk | pass | 41000 MiB free on /, need 22048 |' in text
    # The failure message keeps its lines in a code block.
    assert '```\nPREFLIGHT: 2 of 13 gates failed on gpu-02, nothing was changed:\n- PREFLIGHT gpu_count:' in text


def test_a_rolled_back_switch_names_the_gate_the_stack_back_in_service_and_the_downtime():
    entry = host_entry('gpu-01', {'gated_switch_result': switch_result(rolled_back=True), 'verify_result': verify_result(False)},
                       'failed', {'task': 'Fail naming the gate', 'action': 'ansible.builtin.fail',
                                  'msg': 'ROLLED BACK on gpu-01: the health gate failed | 503'})
    summary = build('switch', [entry], WRITTEN, finished=False)
    assert 'switch rolled back (health gate failed) to /opt/sglang/stacks/cuda128-aaaa' in summary['lines'][1]
    assert 'verify failed: sgl-kernel' in summary['lines'][1]
    text = markdown(summary)
    assert '| rolled back (health gate failed) to /opt/sglang/stacks/cuda128-aaaa | 3.41 s |' in text
    assert '- health gate: seconds 1.2, status 503' in text
    assert 'Verify: bom ok, gpus ok, sgl-kernel no_sm120.' in text


def test_a_long_failure_message_is_cut():
    entry = host_entry('h', {}, 'failed', {'task': 't', 'action': 'a', 'msg': 'x' * 2500})
    assert entry['failure']['msg'] == 'x' * 2000 + '... (500 characters more)'
    assert lines(build('p', [entry], WRITTEN, False))[0] == 'p: failed - 1 failed'

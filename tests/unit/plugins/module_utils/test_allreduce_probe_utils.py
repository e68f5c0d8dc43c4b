# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The all-reduce probe's pure helpers, against a recorded run on 2x H200."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import allreduce_probe as ap
from ansible_collections.gpuops.sglang_stack.tests.unit import recorded

ALLREDUCE = os.path.join(recorded.FIXTURES, 'allreduce')


def graph_line():
    return recorded.read(ALLREDUCE, 'graph.txt').splitlines()[0]


def test_probe_script_compiles_and_has_the_defaults():
    compile(ap.PROBE_SCRIPT, 'probe.py', 'exec')
    assert 'torch.cuda.graph' in ap.PROBE_SCRIPT and 'torch.cuda.nccl.version()' in ap.PROBE_SCRIPT
    assert '127.0.0.1' in ap.PROBE_SCRIPT and '--eager' in ap.PROBE_SCRIPT
    assert ap.DEFAULT_SIZES == [4096, 16384, 65536, 262144, 1048576]


def test_percentile_interpolates_like_numpy():
    values = list(range(1, 101))
    assert ap.percentile(values, 50) == pytest.approx(50.5)
    assert ap.percentile(values, 99) == pytest.approx(99.01)
    assert ap.percentile(values, 0) == 1 and ap.percentile(values, 100) == 100
    assert ap.percentile([7.0], 99) == 7.0
    assert ap.percentile([3, 1, 2], 50) == 2


@pytest.mark.parametrize('values, q', [([], 50), ([1], -1), ([1], 101)])
def test_percentile_rejects(values, q):
    with pytest.raises(ValueError):
        ap.percentile(values, q)


def test_summarize():
    stats = ap.summarize([10.0, 12.0, 11.0, 30.0])
    assert stats['count'] == 4 and stats['min_us'] == 10.0 and stats['max_us'] == 30.0
    assert stats['median_us'] == pytest.approx(11.5)
    assert stats['mean_us'] == pytest.approx(15.75)
    assert stats['p99_us'] == pytest.approx(29.46)
    with pytest.raises(ValueError):
        ap.summarize([])


def test_parse_recorded_graph_result_amid_noise():
    noise = 'NCCL INFO Bootstrap\nsome warning {not json}\n{"other": 1}\n'
    parsed = ap.parse_probe_output(noise + graph_line() + '\ntrailing line\n')
    assert parsed['world_size'] == 2 and parsed['device'] == 'NVIDIA H200' and parsed['nccl'] == '2.28.9'
    assert parsed['mode'] == 'graph' and parsed['env']['NCCL_NVLS_ENABLE'] == '0'
    assert [r['bytes'] for r in parsed['results']] == ap.DEFAULT_SIZES
    assert parsed['results'][0]['median_us'] == pytest.approx(12.069)
    assert 'allreduce_probe' not in parsed
    assert ap.check_sizes(parsed, ap.DEFAULT_SIZES) == []
    assert ap.check_sizes(parsed, [4096, 8192]) == [8192]


def test_parse_recorded_hang_reports_the_timeout():
    with pytest.raises(ap.ProbeError, match='timeout'):
        ap.parse_probe_output(recorded.read(ALLREDUCE, 'graph.txt'))


@pytest.mark.parametrize('stdout, match', [
    ('', 'no probe result line'),
    ('Traceback (most recent call last):\nImportError: no torch\n', 'no probe result line'),
    ('{"allreduce_probe": 1, "error": "too_few_gpus", "msg": "1 visible"}', 'too_few_gpus'),
    ('{"allreduce_probe": 1, "world_size": 2, "nccl": "2.28.9", "device": "x"}', 'lacks results'),
    ('{"allreduce_probe": 1, "world_size": 2, "nccl": "2.28.9", "device": "x", "results": []}', 'no per-size'),
    ('{"allreduce_probe": 1, "world_size": 2, "nccl": "2", "device": "x", "results": [{"bytes": 4096}]}', 'lacks bytes'),
    ('{"allreduce_probe": 1, "world_size": 2, "nccl": "2", "device": "x", '
     '"results": [{"bytes": 4096, "median_us": "fast", "p99_us": 1}]}', 'non-numeric'),
])
def test_parse_garbage(stdout, match):
    with pytest.raises(ap.ProbeError, match=match):
        ap.parse_probe_output(stdout)


def test_compare_with_nccl_tests_reference():
    parsed = ap.parse_probe_output(graph_line())
    comparison = ap.compare_with_reference(parsed, ap.NCCL_TESTS_H200_X2)
    ratios = dict((r['bytes'], r['ratio']) for r in comparison['rows'])
    assert ratios == {4096: 0.956, 16384: 0.966, 65536: 0.929, 262144: 0.973, 1048576: 1.326}
    within = dict((r['bytes'], r['within']) for r in comparison['rows'])
    assert within == {4096: True, 16384: True, 65536: True, 262144: True, 1048576: False}
    assert comparison['all_within'] is False and comparison['compared'] == 5


def test_compare_p2p_disabled_and_string_keys():
    parsed = ap.parse_probe_output(recorded.read(ALLREDUCE, 'p2p_disabled.txt'))
    reference = dict((str(k), v) for k, v in ap.NCCL_TESTS_H200_X2_P2P_DISABLED.items())
    comparison = ap.compare_with_reference(parsed, reference)
    ratios = dict((r['bytes'], r['ratio']) for r in comparison['rows'])
    assert ratios == {4096: 0.998, 16384: 0.904, 65536: 1.133, 262144: 1.145, 1048576: 1.042}
    assert comparison['all_within'] is True


def test_compare_skips_sizes_without_reference():
    result = {'results': [{'bytes': 4096, 'median_us': 13.0}, {'bytes': 8192, 'median_us': 13.0}]}
    comparison = ap.compare_with_reference(result, {4096: 13.0}, tolerance=0.0)
    assert comparison['rows'][1] == {'bytes': 8192, 'measured_us': 13.0, 'reference_us': None, 'ratio': None,
                                     'within': None}
    assert comparison['all_within'] is True and comparison['compared'] == 1
    assert ap.compare_with_reference(result, {})['all_within'] is False


def test_verify_pass_cost():
    parsed = ap.parse_probe_output(graph_line())
    cost = ap.verify_pass_cost_us(parsed['results'])
    assert cost == {'count': 122, 'size': 16384, 'per_op_us': 12.525, 'total_us': pytest.approx(1528.05)}
    nccl = ap.verify_pass_cost_us(ap.NCCL_TESTS_H200_X2, size=4096)
    assert nccl['total_us'] == pytest.approx(122 * 12.63)
    between = ap.verify_pass_cost_us({4096: 10.0, 16384: 22.0}, count=10, size=10240)
    assert between['per_op_us'] == pytest.approx(16.0) and between['total_us'] == pytest.approx(160.0)
    with pytest.raises(ValueError, match='outside'):
        ap.verify_pass_cost_us({4096: 10.0}, size=2048)
    with pytest.raises(ValueError):
        ap.verify_pass_cost_us({})


def test_eager_is_slower_than_graph():
    graph = ap.parse_probe_output(graph_line())
    eager = ap.parse_probe_output(recorded.read(ALLREDUCE, 'eager.txt'))
    assert eager['mode'] == 'eager'
    for g, e in zip(graph['results'], eager['results']):
        assert e['median_us'] > 1.5 * g['median_us']
    json.dumps(eager)

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parsing bench_one_batch_server's output and judging it against a baseline."""

from __future__ import annotations

import itertools
import re

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import sglang_bench as sb
from ansible_collections.gpuops.sglang_stack.tests.unit import recorded


def fixture(name):
    return recorded.read(recorded.FIXTURES, 'sglang_bench', name)


def test_stdout_keeps_warmup_and_case_apart():
    cases = sb.parse_stdout(fixture('stdout_baseline.txt'))
    assert [c['output_len'] for c in cases] == [16, 256]
    last = sb.pick_case(cases, 1)
    assert last == {'batch_size': 1, 'input_len': 1024, 'output_len': 256, 'latency': 2.96, 'input_throughput': 10240.0,
                    'output_throughput': 89.51, 'last_ttft': 0.10, 'last_gen_throughput': 89.62}
    assert sb.tokens_per_second(last) == (89.62, 'last_gen_throughput')


def test_stdout_two_batch_sizes_with_acceptance_length():
    cases = sb.parse_stdout(fixture('stdout_two_cases.txt'))
    assert [(c['batch_size'], c['acc_length']) for c in cases] == [(1, 2.41), (8, 2.37)]
    assert sb.pick_case(cases, 8)['last_gen_throughput'] == 902.33
    assert sb.pick_case(cases)['batch_size'] == 8
    with pytest.raises(sb.BenchError, match='no benchmark case of batch size 4'):
        sb.pick_case(cases, 4)


def test_result_file_matches_printed_figures():
    from_file = sb.parse_result_jsonl(fixture('result_eagle3.jsonl'))
    printed = sb.parse_stdout(fixture('stdout_two_cases.txt'))
    for recorded_case, printed_case in zip(from_file, printed):
        for key in ('batch_size', 'input_len', 'output_len', 'last_gen_throughput', 'acc_length'):
            assert recorded_case[key] == printed_case[key]


def test_result_file_errors_name_the_line():
    with pytest.raises(sb.BenchError, match='line 2 of the result file is not JSON'):
        sb.parse_result_jsonl('{"batch_size": 1}\nnot json\n')
    with pytest.raises(sb.BenchError, match='line 1 of the result file is not a JSON object'):
        sb.parse_result_jsonl('[1, 2]\n')
    assert sb.parse_result_jsonl('\n\n') == []


def test_unknown_generation_throughput_falls_back_to_output_throughput():
    case = sb.pick_case(sb.parse_stdout(fixture('stdout_no_gen_throughput.txt')))
    assert case['last_gen_throughput'] == -1.0
    assert sb.tokens_per_second(case) == (85.33, 'output_throughput')
    with pytest.raises(sb.BenchError, match='neither'):
        sb.tokens_per_second({'last_gen_throughput': -1, 'output_throughput': 0})


def test_no_case_in_unrelated_output():
    assert sb.parse_stdout('Traceback (most recent call last):\nConnectionRefusedError\n') == []
    with pytest.raises(sb.BenchError, match='no benchmark case'):
        sb.pick_case([])


@pytest.mark.parametrize('tok_s, passed', [(89.62, True), (85.03, True), (85.02, False), (44.8, False), (163.8, True)])
def test_judge_against_site_baseline(tok_s, passed):
    verdict = sb.judge(tok_s, 89.5, 0.05)
    assert verdict['passed'] is passed
    assert verdict['floor_tok_s'] == 85.02
    assert verdict['ratio'] == round(tok_s / 89.5, 3)


def test_judge_refuses_meaningless_limits():
    with pytest.raises(ValueError, match='baseline must be above 0'):
        sb.judge(90, 0, 0.05)
    with pytest.raises(ValueError, match='tolerance must be within'):
        sb.judge(90, 89.5, 1.0)
    with pytest.raises(ValueError, match='tolerance must be within'):
        sb.judge(90, 89.5, -0.1)


# --- Hostile input: bounded size, answers of the former pattern (issue 18) ----------------------------------
#
# Before the rewrite 'latency: 1' + 100,000 blanks + 'x' took about 24 s (0.97 s at 20,000): the two blank runs
# around the optional unit split the blanks every possible way. 'latency: 1.2.3' and 'batch size: 1e999' raised
# ValueError / OverflowError out of parse_stdout; a result line of 100,000 '[' raised RecursionError.
# The hostile lines are built for a length n (the tests use N); their time, against the former pattern's, is
# measured by tests/benchmark/parser_bench.py, not asserted here.

N = 100000
OLD_LINE = re.compile(r'^\s*(batch size|input_len|output_len|latency|input throughput|output throughput|last_ttft|'
                      r'last generation throughput|acc_length):\s*(-?[0-9.]+(?:[eE][-+]?[0-9]+)?)\s*(?:s|tok/s)?\s*$')
LONG_LINES = {
    'blanks_before_x': lambda n: 'latency: 1' + ' ' * n + 'x',
    'dotted_digits': lambda n: 'latency: ' + '1.' * (n // 2) + 'x',
    'trailing_blanks': lambda n: 'latency:' + ' ' * n,
    'blanks_before_unit_x': lambda n: 'output throughput: 1' + ' ' * n + 'tok/s x',
    'blanks_around_a_value': lambda n: ' ' * n + 'latency: 1' + ' ' * n + 's' + '\t' * n,
}


def nested_result_line(n):
    return '[' * n


def test_line_pattern_answers_as_the_former_one():
    tokens = ['latency:', ' ', '1', '.', 'e', '-', 's', 'tok/s', 'x', '\t']
    for length in range(6):
        for combination in itertools.product(tokens, repeat=length):
            line = ''.join(combination)
            old = OLD_LINE.match(line)
            new = sb._LINE.match(line.strip())
            assert (old and old.groups()) == (new and new.groups()), repr(line)


@pytest.mark.parametrize('name, latency', [
    ('blanks_before_x', None),
    ('dotted_digits', None),
    ('trailing_blanks', None),
    ('blanks_before_unit_x', None),
    ('blanks_around_a_value', 1.0),
])
def test_long_lines_are_linear(name, latency):
    text = fixture('stdout_baseline.txt') + LONG_LINES[name](N) + '\n'
    cases = sb.parse_stdout(text)
    expected = sb.parse_stdout(fixture('stdout_baseline.txt'))
    if latency is not None:
        expected[-1]['latency'] = latency
    assert cases == expected


@pytest.mark.parametrize('line', ['latency: 1.2.3', 'batch size: 1e999', 'output throughput: ' + '9' * 400, 'latency: .'])
def test_values_that_are_no_finite_number_are_skipped(line):
    text = fixture('stdout_baseline.txt') + line + '\n'
    assert sb.parse_stdout(text) == sb.parse_stdout(fixture('stdout_baseline.txt'))


def test_deeply_nested_result_line_is_refused_cleanly():
    text = fixture('result_eagle3.jsonl').rstrip('\n') + '\n' + nested_result_line(N) + '\n'
    with pytest.raises(sb.BenchError, match='nests too deeply'):
        sb.parse_result_jsonl(text)


@pytest.mark.parametrize('parser', [sb.parse_stdout, sb.parse_result_jsonl])
def test_text_over_the_cap_is_refused(parser):
    with pytest.raises(sb.BenchError, match='MAX_INPUT_CHARS'):
        parser(' ' * (sb.MAX_INPUT_CHARS + 1))


def test_gate_needs_a_figure_to_compare_with():
    with pytest.raises(ValueError, match='nothing to compare with'):
        sb.judge_gate(90.0, 0.05)
    with pytest.raises(ValueError, match='nothing to compare with'):
        sb.judge_gate(90.0, 0.05, floor_tok_s=0)


def test_gate_checks_each_figure():
    gate = sb.judge_gate(86.0, 0.05, reference_tok_s=92.0, reference_label='old', floor_tok_s=89.5)
    assert [(c['against'], c['passed']) for c in gate['checks']] == [('reference', False), ('site', True)]
    assert gate['passed'] is False
    assert gate['summary'] == "old 92.00 tok/s (floor 87.40, ratio 0.935): FAILED; the site's figure 89.50 tok/s (floor 85.02, ratio 0.961): passed"


def test_command_line_of_the_running_server():
    argv = ['/opt/sglang/current/venv/bin/python', '-m', 'sglang.launch_server', '--tp-size', '8']
    assert sb.command_line_matches('\0'.join(argv) + '\0', argv)
    # Another profile (EAGLE-3 on the old stack) is no reference for the new stack's baseline.
    assert not sb.command_line_matches('\0'.join(argv + ['--speculative-algorithm', 'EAGLE3']) + '\0', argv)
    assert not sb.command_line_matches('', argv)

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read the output of SGLang's bench_one_batch_server and judge it against a site baseline.

sglang 0.5.9 (sglang/test/bench_one_batch_server_internal.py, run_one_case) prints one block per case:

    batch size: 1
    input_len: 1024
    output_len: 256
    latency: 3.02 s
    input throughput: 9841.12 tok/s
    output throughput: 88.12 tok/s
    last_ttft: 0.10 s
    last generation throughput: 89.61 tok/s
    acc_length: 2.41          (only with speculative decoding)

and appends the same figures as one JSON object per case to --result-filename. "last generation
throughput" is the server's own decode rate (from /get_server_info); it is -1 when the server did not
report one, and output throughput is used then.

Both texts are read in linear time (the line pattern cannot backtrack over a long line; timed on 100,000-character
lines in tests/unit/plugins/module_utils/test_sglang_bench.py), and a text over MAX_INPUT_CHARS is refused with
BenchError.
"""

from __future__ import annotations

import json
import math
import re

# Matched against the stripped line. The unit takes its own leading blanks: the former ``\s*(?:s|tok/s)?\s*$``
# tail had two blank runs side by side, which split a long run of blanks every possible way (quadratic).
_LINE = re.compile(r'^(batch size|input_len|output_len|latency|input throughput|output throughput|last_ttft|'
                   r'last generation throughput|acc_length):\s*(-?[0-9.]+(?:[eE][-+]?[0-9]+)?)(?:\s*(?:s|tok/s))?$')
# The most text either parser reads (characters): the benchmark prints a few hundred per case.
MAX_INPUT_CHARS = 16 * 1024 * 1024
_KEYS = {
    'batch size': 'batch_size', 'input_len': 'input_len', 'output_len': 'output_len', 'latency': 'latency',
    'input throughput': 'input_throughput', 'output throughput': 'output_throughput', 'last_ttft': 'last_ttft',
    'last generation throughput': 'last_gen_throughput', 'acc_length': 'acc_length',
}
_INTS = ('batch_size', 'input_len', 'output_len')


class BenchError(Exception):
    """The benchmark's output holds no usable result."""


def _number(key, text):
    """The value of a field line; None when it is no finite number ('1.2.3', '1e999')."""
    try:
        value = float(text)
    except ValueError:
        return None
    if math.isinf(value) or math.isnan(value):
        return None
    return int(value) if key in _INTS else value


def _check_size(text, what):
    if len(text) > MAX_INPUT_CHARS:
        raise BenchError('the %s is %d characters long, over the %d read (MAX_INPUT_CHARS)' % (what, len(text), MAX_INPUT_CHARS))


def parse_stdout(text):
    """Cases (dicts) from bench_one_batch_server's printed blocks; a new block starts at "batch size:".

    Lines that are not ``<field>: <number> [unit]`` are ignored, so is a field whose value is no finite number.
    Raises BenchError for a text over MAX_INPUT_CHARS.
    """
    text = text or ''
    _check_size(text, 'benchmark output')
    cases = []
    for line in text.splitlines():
        match = _LINE.match(line.strip())
        if not match:
            continue
        key = _KEYS[match.group(1)]
        value = _number(key, match.group(2))
        if value is None:
            continue
        if key == 'batch_size' or not cases:
            cases.append({})
        cases[-1][key] = value
    return cases


def parse_result_jsonl(text):
    """Cases (dicts) from the --result-filename file: one JSON object per line; other lines are errors (BenchError),
    as is a text over MAX_INPUT_CHARS."""
    text = text or ''
    _check_size(text, 'result file')
    cases = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        try:
            case = json.loads(line)
        except RecursionError:
            raise BenchError('line %d of the result file nests too deeply to be read' % number)
        except ValueError as exc:
            raise BenchError('line %d of the result file is not JSON: %s' % (number, exc))
        if not isinstance(case, dict):
            raise BenchError('line %d of the result file is not a JSON object' % number)
        cases.append(case)
    return cases


def tokens_per_second(case):
    """The decode rate of one case: last generation throughput, or output throughput when that is unknown."""
    for key in ('last_gen_throughput', 'output_throughput'):
        value = case.get(key)
        if value is not None and float(value) > 0:
            return float(value), key
    raise BenchError('the case reports neither a last generation throughput nor an output throughput above 0: %r'
                     % (case,))


def pick_case(cases, batch_size=None):
    """The last case (of batch_size, when given): what the gate judges."""
    chosen = [c for c in cases if batch_size is None or int(c.get('batch_size', -1)) == int(batch_size)]
    if not chosen:
        raise BenchError('no benchmark case%s in the output' % ('' if batch_size is None else ' of batch size %s' % batch_size))
    return chosen[-1]


def judge(tok_s, baseline, tolerance):
    """Gate verdict: passed when tok_s >= baseline x (1 - tolerance)."""
    baseline = float(baseline)
    tolerance = float(tolerance)
    if baseline <= 0:
        raise ValueError('the baseline must be above 0 tok/s, got %s' % baseline)
    if tolerance < 0 or tolerance >= 1:
        raise ValueError('the tolerance must be within [0, 1), got %s' % tolerance)
    floor = baseline * (1.0 - tolerance)
    return {
        'tok_s': round(float(tok_s), 2),
        'baseline_tok_s': baseline,
        'tolerance': tolerance,
        'floor_tok_s': round(floor, 2),
        'ratio': round(float(tok_s) / baseline, 3),
        'passed': float(tok_s) >= floor,
    }


def command_line_matches(running_cmdline, argv):
    """Whether a running server was started with exactly ``argv``.

    ``running_cmdline`` is /proc/<pid>/cmdline as read (NUL-separated, NUL-terminated). The unit runs the stack through
    the ``current`` link, so two stacks started with the same options have the same command line: a different one means
    another profile (speculative decoding, an optimisation's flags, another model), and a throughput measured on it is
    no reference for the new stack's.
    """
    words = str(running_cmdline or '').split('\0')
    if words and words[-1] == '':
        words = words[:-1]
    return bool(words) and words == [str(word) for word in argv]


def judge_gate(tok_s, tolerance, reference_tok_s=None, reference_label='', floor_tok_s=None):
    """The throughput gate of a switch: the new stack against the old stack's figure and/or the site's.

    ``reference_tok_s``: the same benchmark on the stack that served right before the stop, launched with the same
    options (``reference_label`` names it); ``floor_tok_s``: the site's figure, an optional floor. Each given figure is
    one check, passed when tok_s >= figure x (1 - tolerance); the gate passes when every check does. At least one figure
    is needed: a gate with nothing to compare with is refused (ValueError), not passed.
    """
    checks = []
    if reference_tok_s is not None:
        check = judge(tok_s, reference_tok_s, tolerance)
        check.update(against='reference', label=reference_label or 'the stack that served before')
        checks.append(check)
    if floor_tok_s is not None and float(floor_tok_s) > 0:
        check = judge(tok_s, floor_tok_s, tolerance)
        check.update(against='site', label="the site's figure")
        checks.append(check)
    if not checks:
        raise ValueError('nothing to compare with: no measurement of the stack that served before the stop, and no site figure')
    failed = [check for check in checks if not check['passed']]
    return {
        'tok_s': round(float(tok_s), 2),
        'tolerance': float(tolerance),
        'checks': checks,
        'passed': not failed,
        'summary': '; '.join(
            '%s %.2f tok/s (floor %.2f, ratio %.3f): %s' % (
                check['label'], check['baseline_tok_s'], check['floor_tok_s'], check['ratio'], 'passed' if check['passed'] else 'FAILED')
            for check in checks),
    }

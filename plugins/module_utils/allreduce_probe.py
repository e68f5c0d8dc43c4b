# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""All-reduce latency probe: the standalone program run with the stack's interpreter, and pure helpers.

Only the standard library is imported here; the probe program itself imports torch when it runs.

The probe's output is read in linear time and refused (ProbeError) beyond MAX_OUTPUT_CHARS; a line that JSON
cannot read (nested too deeply included) is skipped like any other line.
"""

from __future__ import annotations

import json
import math

DEFAULT_SIZES = [4096, 16384, 65536, 262144, 1048576]
# A decode step's all-reduce at batch 1 and hidden size 7168 to 8192 in bf16 is about 14-16 KB.
DEFAULT_VERIFY_SIZE = 16384
VERIFY_ALLREDUCES = 122
MARKER = 'allreduce_probe'
# The most probe output parse_probe_output reads (characters): the result line is about 1 KB, NCCL's INFO lines
# with NCCL_DEBUG=INFO on 8 GPUs some hundred KB.
MAX_OUTPUT_CHARS = 16 * 1024 * 1024

# nccl-tests 2.19.6 all_reduce_perf -g 2 -d bfloat16 on 2x H200 (NVLink), NCCL_NVLS_ENABLE=0, out-of-place time
# per op in us (/work/shared/reference/gpu-measurements.md).
NCCL_TESTS_H200_X2 = {4096: 12.63, 16384: 12.96, 65536: 13.91, 262144: 14.54, 1048576: 14.62}
NCCL_TESTS_H200_X2_P2P_DISABLED = {4096: 15.74, 16384: 18.46, 65536: 18.53, 262144: 35.59, 1048576: 63.04}
# NCCL alone in CUDA graphs on the same 2x H200, one process per GPU, 20 in-place all-reduces per graph, median of 50
# replays (tests/device/nccl_direct.cu, 2026-11-30, tests/unit/fixtures/allreduce/nccl_direct_mp_run4.txt). The
# graph-mode reference: nccl-tests' figures above are eager, and host-launch bound up to 256 KB.
NCCL_GRAPH_H200_X2 = {4096: 6.154, 16384: 6.7, 65536: 7.106, 262144: 8.378, 1048576: 13.6}
NCCL_GRAPH_H200_X2_P2P_DISABLED = {4096: 9.779, 16384: 10.95, 65536: 15.269, 262144: 34.762, 1048576: 61.168}


def program_text(program):
    """The source of the probe program (module_utils/allreduce_probe_program.py, imported by the module): what the
    module writes to a temporary file and runs with the stack's interpreter. Read through the module's loader (inside
    an AnsiballZ payload it is a zip member), else from its file."""
    loader = getattr(program, '__loader__', None)
    text = None
    if loader is not None and hasattr(loader, 'get_source'):
        try:
            text = loader.get_source(program.__name__)
        except (ImportError, OSError):
            text = None
    if text is None:
        with open(program.__file__, 'rb') as handle:
            text = handle.read().decode('utf-8')
    if isinstance(text, bytes):
        text = text.decode('utf-8')
    if 'def main():' not in text or MARKER not in text:
        raise ProbeError('%s does not hold the probe program' % getattr(program, '__file__', program.__name__))
    return text


class ProbeError(Exception):
    """The probe's output could not be used."""


def percentile(values, q):
    """The q-th percentile (0..100) of values, interpolated linearly between closest ranks (numpy's default)."""
    if not values:
        raise ValueError('percentile of no values')
    if q < 0 or q > 100:
        raise ValueError('q must be within 0..100, got %r' % (q,))
    ordered = sorted(float(v) for v in values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q / 100.0
    low = int(math.floor(pos))
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summarize(samples):
    """count, min_us, median_us, mean_us, p99_us and max_us of per-op samples in microseconds."""
    if not samples:
        raise ValueError('no samples to summarize')
    values = [float(v) for v in samples]
    return {
        'count': len(values),
        'min_us': min(values),
        'median_us': percentile(values, 50),
        'mean_us': sum(values) / len(values),
        'p99_us': percentile(values, 99),
        'max_us': max(values),
    }


def _per_size_median(per_size):
    """{bytes: median_us} from a list of result dicts or a dict of size -> us or size -> result dict."""
    table = {}
    items = per_size.items() if isinstance(per_size, dict) else ((r.get('bytes'), r) for r in per_size)
    for size, value in items:
        us = value.get('median_us') if isinstance(value, dict) else value
        table[int(size)] = float(us)
    return table


def verify_pass_cost_us(per_size, count=VERIFY_ALLREDUCES, size=DEFAULT_VERIFY_SIZE):
    """Estimated all-reduce time of a verify pass: count all-reduces of size bytes, at the measured median.

    A size between two measured sizes is interpolated linearly; one outside the measured range is an error.
    """
    table = _per_size_median(per_size)
    if not table:
        raise ValueError('no measured sizes')
    size = int(size)
    if size in table:
        per_op = table[size]
    else:
        sizes = sorted(table)
        if size < sizes[0] or size > sizes[-1]:
            raise ValueError('size %d is outside the measured range %d..%d' % (size, sizes[0], sizes[-1]))
        upper = min(s for s in sizes if s > size)
        lower = max(s for s in sizes if s < size)
        frac = float(size - lower) / (upper - lower)
        per_op = table[lower] + (table[upper] - table[lower]) * frac
    return {'count': int(count), 'size': size, 'per_op_us': round(per_op, 3), 'total_us': round(per_op * count, 3)}


def parse_probe_output(stdout):
    """The probe's JSON result line from stdout (other lines are ignored); raises ProbeError with a clear message."""
    stdout = stdout or ''
    if len(stdout) > MAX_OUTPUT_CHARS:
        raise ProbeError('the probe printed %d characters, over the %d read (MAX_OUTPUT_CHARS)' % (len(stdout), MAX_OUTPUT_CHARS))
    found = None
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith('{') or MARKER not in line:
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict) and MARKER in data:
            found = data
    if found is None:
        tail = (stdout or '').strip().splitlines()[-3:]
        raise ProbeError('no probe result line (JSON with key "%s") in the output; last lines: %s' % (MARKER, tail))
    if found.get('error'):
        raise ProbeError('probe failed (%s): %s' % (found['error'], found.get('msg', '')))
    missing = [k for k in ('world_size', 'nccl', 'device', 'results') if k not in found]
    if missing:
        raise ProbeError('probe result lacks %s' % ', '.join(missing))
    if not isinstance(found['results'], list) or not found['results']:
        raise ProbeError('probe result has no per-size results')
    results = []
    for entry in found['results']:
        if not isinstance(entry, dict) or any(k not in entry for k in ('bytes', 'median_us', 'p99_us')):
            raise ProbeError('probe result entry lacks bytes, median_us or p99_us: %r' % (entry,))
        try:
            entry = dict(entry, bytes=int(entry['bytes']), median_us=float(entry['median_us']),
                         p99_us=float(entry['p99_us']))
        except (TypeError, ValueError, OverflowError):
            raise ProbeError('probe result entry has a non-numeric value: %r' % (entry,))
        results.append(entry)
    try:
        world_size = int(found['world_size'])
    except (TypeError, ValueError, OverflowError):
        raise ProbeError('probe result has a non-numeric world_size: %r' % (found['world_size'],))
    found = dict(found, results=results, world_size=world_size)
    found.pop(MARKER, None)
    return found


def check_sizes(result, sizes):
    """The requested sizes missing from a parsed result."""
    got = set(r['bytes'] for r in result['results'])
    return [int(s) for s in sizes if int(s) not in got]


def compare_with_reference(result, reference, tolerance=0.15):
    """Per size: measured median, reference, ratio measured/reference and whether |ratio - 1| <= tolerance.

    reference maps size (int or str) to microseconds; sizes absent from it get ratio None and within None.
    """
    ref = dict((int(k), float(v)) for k, v in (reference or {}).items())
    rows = []
    for entry in result['results']:
        size = int(entry['bytes'])
        measured = float(entry['median_us'])
        row = {'bytes': size, 'measured_us': measured, 'reference_us': ref.get(size), 'ratio': None, 'within': None}
        if size in ref and ref[size] > 0:
            ratio = measured / ref[size]
            row['ratio'] = round(ratio, 3)
            row['within'] = abs(ratio - 1.0) <= tolerance
        rows.append(row)
    compared = [r for r in rows if r['within'] is not None]
    return {
        'tolerance': tolerance,
        'rows': rows,
        'all_within': bool(compared) and all(r['within'] for r in compared),
        'compared': len(compared),
    }


# --- NCCL settings sweep -------------------------------------------------------------------------------------

SWEEP_TIE_SIZE = 1048576
_NAME_OK = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-')


def check_env(env, what='env'):
    """env as {str: str}; raises ValueError naming the keys that are not NCCL_*."""
    env = env or {}
    if not isinstance(env, dict):
        raise ValueError('%s must be a mapping of NCCL_* names to values' % what)
    bad = sorted(str(k) for k in env if not str(k).startswith('NCCL_'))
    if bad:
        raise ValueError('%s accepts NCCL_* keys only: %s' % (what, ', '.join(bad)))
    return dict((str(k), str(v)) for k, v in env.items())


def merge_env(base, setting):
    """The environment of one sweep setting: base overlaid by the setting's own values (both NCCL_* only)."""
    merged = check_env(base, 'env')
    merged.update(check_env(setting, 'a sweep setting\'s env'))
    return merged


def plan_sweep(base, sweep):
    """[{'name', 'env' (the setting's own), 'merged_env'}] for a sweep list; raises ValueError on a bad list."""
    if not isinstance(sweep, list) or not sweep:
        raise ValueError('sweep must be a non-empty list of {name, env}')
    seen = set()
    plan = []
    for index, item in enumerate(sweep):
        if not isinstance(item, dict) or not item.get('name'):
            raise ValueError('sweep entry %d needs a name' % index)
        name = str(item['name'])
        if any(ch not in _NAME_OK for ch in name):
            raise ValueError('sweep entry name %r may hold letters, digits, "_", "." and "-" only' % name)
        if name in seen:
            raise ValueError('sweep entry name %r is used twice' % name)
        seen.add(name)
        own = check_env(item.get('env') or {}, 'sweep entry %s env' % name)
        plan.append({'name': name, 'env': own, 'merged_env': merge_env(base, own)})
    return plan


def summarize_setting(name, env, parsed=None, error=None, count=VERIFY_ALLREDUCES, size=DEFAULT_VERIFY_SIZE):
    """One sweep entry: per-size median/p99 and the verify-pass estimate, or the error that stopped the probe."""
    entry = {'name': name, 'env': dict(env), 'ok': error is None and parsed is not None, 'error': error,
             'results': [], 'verify_pass': None}
    if not entry['ok']:
        if entry['error'] is None:
            entry['error'] = 'no result'
        return entry
    entry['results'] = [{'bytes': int(r['bytes']), 'median_us': float(r['median_us']), 'p99_us': float(r['p99_us'])}
                        for r in parsed['results']]
    try:
        entry['verify_pass'] = verify_pass_cost_us(parsed['results'], count=count, size=size)
    except ValueError as exc:
        entry['error'] = 'no verify-pass estimate: %s' % exc
        entry['ok'] = False
    return entry


def median_at(entry, size):
    for row in entry['results']:
        if row['bytes'] == size:
            return row['median_us']
    return None


def choose_best(entries, tie_tolerance=0.0, tie_size=SWEEP_TIE_SIZE):
    """The sweep entry with the lowest verify-pass estimate.

    Entries whose estimate lies within tie_tolerance (a fraction, 0.02 = 2 %) of the lowest count as tied; among
    them the lowest median at tie_size bytes wins (an entry without that size loses a tie), then the earliest.
    Failed entries are never chosen. Returns (best entry or None, the names that tied).
    """
    if tie_tolerance < 0:
        raise ValueError('tie_tolerance must not be negative')
    usable = [e for e in entries if e.get('ok') and e.get('verify_pass')]
    if not usable:
        return None, []
    lowest = min(e['verify_pass']['total_us'] for e in usable)
    tied = [e for e in usable if e['verify_pass']['total_us'] <= lowest * (1.0 + tie_tolerance)]

    def key(item):
        index, entry = item
        at = median_at(entry, tie_size)
        return (at is None, at if at is not None else 0.0, index)
    best = sorted(enumerate(tied), key=key)[0][1]
    return best, [e['name'] for e in tied]


def _size_label(size):
    if size % 1048576 == 0:
        return '%d MB' % (size // 1048576)
    if size % 1024 == 0:
        return '%d KB' % (size // 1024)
    return '%d B' % size


def sweep_table(entries, best_name=None):
    """A Markdown table of the sweep: median / p99 per size, the verify-pass estimate, the pick marked.

    One column per message size any setting measured; with none measured (every setting failed) the table has no size
    column, so every row keeps the header's column count.
    """
    sizes = sorted(set(r['bytes'] for e in entries for r in e['results']))

    def row(cells):
        return '| %s |' % ' | '.join(cells)

    lines = [row(['setting', 'env'] + [_size_label(s) + ' median / p99 (us)' for s in sizes] + ['verify pass (us)']),
             row(['---'] * (len(sizes) + 3))]
    for entry in entries:
        env = ' '.join('%s=%s' % kv for kv in sorted(entry['env'].items())) or '-'
        name = entry['name'] + (' **(picked)**' if entry['name'] == best_name else '')
        if not entry['ok']:
            lines.append(row([name, env] + ['-'] * len(sizes) + ['failed: %s' % str(entry['error']).replace('|', '/')]))
            continue
        cells = []
        for size in sizes:
            measured = [r for r in entry['results'] if r['bytes'] == size]
            cells.append('%.2f / %.2f' % (measured[0]['median_us'], measured[0]['p99_us']) if measured else '-')
        total = entry['verify_pass']['total_us'] if entry['verify_pass'] else None
        lines.append(row([name, env] + cells + ['%.0f' % total if total else '-']))
    return lines


def split_recorded_sweep(text):
    """[(name, env, stdout)] from a device run's sweep.txt (tests/device/allreduce_sweep.sh).

    Each run starts with '### NAME VAR=VALUE ... | ARGS' and ends with '### end NAME rc=N wall_s=N'.
    """
    runs = []
    current = None
    for line in (text or '').splitlines():
        if line.startswith('### end '):
            if current is not None:
                fields = dict(f.split('=', 1) for f in line.split()[3:] if '=' in f)
                current['rc'] = int(fields.get('rc', '0'))
                runs.append(current)
            current = None
        elif line.startswith('### '):
            head = line[4:].split('|', 1)[0].split()
            if not head:
                current = None
                continue
            env = dict(f.split('=', 1) for f in head[1:] if '=' in f)
            current = {'name': head[0], 'env': env, 'stdout': [], 'rc': None}
        elif current is not None:
            current['stdout'].append(line + '\n')
    for run in runs:
        run['stdout'] = ''.join(run['stdout'])
    return runs


def read_env_file(text):
    """The non-empty NCCL_* entries of a stack's nccl.env (systemd environment-file lines, as the nccl_patches role
    writes them: NAME=VALUE, a value in double quotes when it has other than plain characters; comments and blank
    lines skipped). Other names (SGLANG_*, ...) are not NCCL settings and are left out."""
    env = {}
    for line in (text or '').splitlines():
        line = line.strip()
        if not line or line.startswith('#') or line.startswith(';') or '=' not in line:
            continue
        name, value = line.split('=', 1)
        name, value = name.strip(), value.strip()
        if not name.startswith('NCCL_') or any(ch not in _ENV_NAME_OK for ch in name):
            continue
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1].replace('\\"', '"').replace('\\\\', '\\')
        if value:
            env[name] = value
    return env


_ENV_NAME_OK = frozenset('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_')


def beats_default(entries, best, size=DEFAULT_VERIFY_SIZE):
    """Whether the picked setting beats the sweep's first setting (the default, measured under the base environment)
    beyond noise at the verify size: (bool, why). Beyond noise: the default's median less the picked one's is more
    than the larger p99 - median spread of the two at that size."""
    if not entries or best is None:
        return False, 'no setting was measured'
    default = entries[0]
    if best['name'] == default['name']:
        return False, '%s is the default itself' % best['name']
    if not default.get('ok'):
        return False, 'the default (%s) was not measured: %s' % (default['name'], default.get('error'))
    rows = {}
    for entry in (default, best):
        found = [r for r in entry.get('results') or [] if int(r['bytes']) == int(size)]
        if not found:
            return False, '%s has no result at %d bytes' % (entry['name'], size)
        rows[entry['name']] = found[0]
    d, b = rows[default['name']], rows[best['name']]
    gain = float(d['median_us']) - float(b['median_us'])
    noise = max(float(d['p99_us']) - float(d['median_us']), float(b['p99_us']) - float(b['median_us']))
    if gain > noise:
        text = ('%s: %.2f us per all-reduce of %d bytes against %.2f us for %s, %.2f us faster, more than the spread '
                '(p99 - median) %.2f us')
        return True, text % (best['name'], b['median_us'], size, d['median_us'], default['name'], gain, noise)
    text = '%s: %.2f us against %.2f us for %s at %d bytes, %.2f us faster, within the spread (p99 - median) %.2f us: not beyond noise'
    return False, text % (best['name'], b['median_us'], d['median_us'], default['name'], size, gain, noise)

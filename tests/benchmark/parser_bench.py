# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark of the module_utils parsers on the hostile inputs of issue 18 (a benchmark, not a timed test).

The unit tests under tests/unit/plugins/module_utils check what the parsers answer on these inputs, and the bounds
that can be counted (bytes read, entry headers examined, memory); they assert no time. This measures the time, each
over --runs repetitions (the median; a call under 20 ms is repeated within a sample and averaged):
  - every hostile input of those tests, built by the tests' own helpers, at the size the tests use (n = 100,000
    characters for the text parsers; the files of test_fatbin.py), with the current code;
  - where a test keeps the former code (OLD_* patterns, old_* functions, naive_embedded), the former and the current
    code on the same input, at the n of the table's 'former: n' column: the tests' n where the former code is fast
    on that input, a smaller n where it is quadratic or cubic (24 s and more at n = 100,000; 1,000 fatbin units
    instead of 4,000), to keep the whole run near half a minute. The ratio former / current is measured at that n,
    in this run. For fatbin the former is naive_embedded (the search as it was, on the file's bytes in memory) and
    the current is scan_file on the file.
Prints a Markdown table (times in milliseconds). Wall time (time.perf_counter) of one process; nothing else should
load the machine.
Usage (repository root, with the venv of scripts/setup-controller.sh, which has pytest: the test modules import it):
  .venv/bin/python tests/benchmark/parser_bench.py --runs 3
"""

import argparse
import atexit
import importlib
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
PACKAGE = 'ansible_collections.gpuops.sglang_stack'
SAMPLE_S = 0.02
MAX_LOOPS = 1000


def collection_path():
    """A folder where ansible_collections.gpuops.sglang_stack is this checkout: build/collections when
    scripts/setup-controller.sh made its link to the checkout, else a temporary one with that link."""
    built = os.path.join(ROOT, 'build', 'collections')
    if os.path.realpath(os.path.join(built, 'ansible_collections', 'gpuops', 'sglang_stack')) == os.path.realpath(ROOT):
        return built
    top = tempfile.mkdtemp(prefix='parser-bench-collections-')
    atexit.register(shutil.rmtree, top, True)
    os.makedirs(os.path.join(top, 'ansible_collections', 'gpuops'))
    os.symlink(ROOT, os.path.join(top, 'ansible_collections', 'gpuops', 'sglang_stack'))
    return top


def load(name):
    return importlib.import_module('%s.%s' % (PACKAGE, name))


def quietly(func, raises):
    """func, with the exceptions it is expected to raise on hostile input (a refusal) caught."""
    if not raises:
        return func

    def call(arg):
        try:
            func(arg)
        except raises:
            pass
    return call


def seconds(func, arg, runs):
    """Median over runs samples of the seconds func(arg) takes; after one call that sizes the loop (not counted)."""
    start = time.perf_counter()
    func(arg)
    first = time.perf_counter() - start
    loops = 1 if first >= SAMPLE_S else min(MAX_LOOPS, int(SAMPLE_S / max(first, 1e-7)) + 1)
    samples = []
    for _run in range(runs):
        start = time.perf_counter()
        for _loop in range(loops):
            func(arg)
        samples.append((time.perf_counter() - start) / loops)
    return statistics.median(samples)


def case(module, label, build, current, n, former=None, n_former=None, raises=()):
    """One input: build(n) gives the argument of current (and of former, the code before the rewrite)."""
    return {'module': module, 'label': label, 'build': build, 'current': quietly(current, raises), 'n': n,
            'former': quietly(former, raises) if former else None, 'n_former': n_former}


def nvidia_smi_cases():
    smi = load('plugins.module_utils.nvidia_smi')
    t = load('tests.unit.plugins.module_utils.test_nvidia_smi')
    n, m = t.N, 10000
    library_not_found = dict((kind, p) for kind, p in smi.ERROR_PATTERNS if kind == 'library_not_found')['library_not_found']
    cases = [case('nvidia_smi', 'normalize_field_name: header cell %s' % name, build, smi.normalize_field_name, n,
                  t.old_normalize_field_name, m if name in ('blanks', 'brackets') else n) for name, build in sorted(t.LONG_HEADER_CELLS.items())]
    cases += [
        case('nvidia_smi', 'parse_query_csv: header cell of blanks', t.query_csv_header_of_blanks, smi.parse_query_csv, n),
        case('nvidia_smi', '_parse_first_cell: first cell of blanks', t.first_cell_with_blanks, smi._parse_first_cell, n,
             t.old_first_cell, m),
        case('nvidia_smi', 'parse_table: first cell of blanks', lambda k: t.table_with_first_cell(t.first_cell_with_blanks(k)),
             smi.parse_table, n),
        case('nvidia_smi', '_MEMORY_USAGE.search: memory cell of digits', t.memory_cell_of_digits, smi._MEMORY_USAGE.search, n,
             t.OLD_MEMORY_USAGE.search, 5000),
        case('nvidia_smi', 'parse_table: memory cell of digits', lambda k: t.table_with_memory_cell(t.memory_cell_of_digits(k)),
             smi.parse_table, n),
        case('nvidia_smi', 'parse_table: GPU index of n digits', t.huge_index_row, smi.parse_table, 5000),
        case('nvidia_smi', 'library_not_found pattern: "unable to load" repeated', t.repeated_load_error, library_not_found.search, n,
             t.OLD_LIBRARY_NOT_FOUND.search, 30000),
        case('nvidia_smi', 'classify_error: "unable to load" repeated', t.repeated_load_error, lambda text: smi.classify_error(1, text), n),
        case('nvidia_smi', 'version_tuple: digits, newline (refused)', t.long_version, smi.version_tuple, n,
             t.old_version_tuple, m, raises=ValueError),
    ]

    def over(k):
        return t.H200_TABLE + ' ' * k

    cases += [case('nvidia_smi', '%s: output over the cap (refused)' % parser.__name__, over, parser, smi.MAX_OUTPUT_CHARS)
              for parser in (smi.parse_table, smi.parse_query_csv, smi.parse_xml)]
    return cases


def sglang_bench_cases():
    sb = load('plugins.module_utils.sglang_bench')
    t = load('tests.unit.plugins.module_utils.test_sglang_bench')
    n, m = t.N, 10000
    baseline = t.fixture('stdout_baseline.txt')
    cases = []
    for name, build in sorted(t.LONG_LINES.items()):
        cases.append(case('sglang_bench', 'result line pattern: %s' % name, build, lambda line: sb._LINE.match(line.strip()), n,
                          t.OLD_LINE.match, m if name in ('blanks_before_x', 'blanks_before_unit_x') else n))
        cases.append(case('sglang_bench', 'parse_stdout: %s' % name, lambda k, build=build: baseline + build(k) + '\n', sb.parse_stdout, n))
    jsonl = t.fixture('result_eagle3.jsonl').rstrip('\n') + '\n'
    cases.append(case('sglang_bench', 'parse_result_jsonl: nested line (refused)', lambda k: jsonl + t.nested_result_line(k) + '\n',
                      sb.parse_result_jsonl, n, raises=sb.BenchError))
    return cases


def lxc_gpu_cases():
    lxc_gpu = load('plugins.module_utils.lxc_gpu')
    t = load('tests.unit.plugins.module_utils.test_lxc_gpu')
    n, m = t.N, 10000

    def old_key_value(line):
        match = t.OLD_KEY_VALUE.match(line)
        return match and (match.group('key'), match.group('value'))

    cases = []
    for name, build in sorted(t.LONG_CONFIG_LINES.items()):
        slow = name in ('mount_entry_blanks', 'mount_entry_tabs', 'dev_blanks')
        cases.append(case('lxc_gpu', 'key_value: %s' % name, build, lxc_gpu.key_value, n, old_key_value, m if slow else n))
        cases.append(case('lxc_gpu', 'classify_config_line: %s' % name, build,
                          lambda line: lxc_gpu.classify_config_line(line, *t.CLASSIFY_MAJORS), n))
    majors = {'nvidia': 195, 'nvidia-uvm': 238}
    cases.append(case('lxc_gpu', 'analyse_config: hostile first line', t.config_with_a_hostile_line,
                      lambda text: lxc_gpu.analyse_config(text, t.MARKERS[0], t.MARKERS[1], [], majors, 'proxmox'), n))
    cases += [case('lxc_gpu', 'driver_from_smi: %s (refused)' % name, build, lambda out: lxc_gpu.driver_from_smi(0, out), n)
              for name, build in sorted(t.LONG_SMI_OUTPUTS.items())]
    cases.append(case('lxc_gpu', 'driver_from_smi: just under the cap', lambda k: t.smi_output_just_under_the_cap(),
                      lambda out: lxc_gpu.driver_from_smi(0, out), lxc_gpu.MAX_SMI_OUTPUT_CHARS))
    return cases


def host_probe_cases():
    hp = load('plugins.module_utils.host_probe')
    t = load('tests.unit.plugins.module_utils.test_host_probe')
    n, m = t.N, 10000
    cases = [case('host_probe', '_gcc_version: %s' % name, build, hp._gcc_version, n, t.OLD_GCC.search,
                  m if name == 'blanks_in_the_version' else n) for name, build in sorted(t.LONG_GCC_CONTENTS.items())]
    for name, build in sorted(t.LONG_VERSION_FILE_TAILS.items()):
        cases.append(case('host_probe', 'parse_driver_version_file: %s (refused)' % name, lambda k, build=build: t.version_file_with_tail(build(k)),
                          hp.parse_driver_version_file, n))
        cases.append(case('host_probe', 'parse_driver_version_file: %s, under the cap' % name,
                          lambda k, build=build: t.version_file_with_tail(build(k), hp.MAX_VERSION_FILE_CHARS - 1000),
                          hp.parse_driver_version_file, n))
    cases += [case('host_probe', '_NVRM.search: %s' % name, build, hp._NVRM.search, n) for name, build in sorted(t.LONG_NVRM_LINES.items())]
    cases.append(case('host_probe', 'parse_proc_devices: long lines', t.proc_devices_with_long_lines, hp.parse_proc_devices, n))
    cases += [case('host_probe', 'container_kind_from_cgroup: %s' % name, build, hp.container_kind_from_cgroup, n)
              for name, build in sorted(t.LONG_CGROUPS.items())]
    return cases


def apt_repo_cases():
    apt_repo = load('plugins.module_utils.apt_repo')
    t = load('tests.unit.plugins.module_utils.test_apt_repo')
    n, m = t.N, 300
    cases = []
    for name, build in sorted(t.LONG_RELATIONS.items()):
        if name != 'alternatives':  # one relation (parse_relations splits the alternatives before the pattern)
            cases.append(case('apt_repo', '_RELATION.match: %s' % name, build, apt_repo._RELATION.match, n, t.OLD_RELATION.match,
                              m if name == 'blanks_before_x' else n))
        cases.append(case('apt_repo', 'parse_relations: %s' % name, build, apt_repo.parse_relations, n, raises=apt_repo.AptRepoError))

    def closure(text):
        apt_repo.resolve_closure(apt_repo.PackageIndex(text, 'amd64', t.DRIVERS), 'cuda-toolkit-13-0', '13.0.1-1')

    cases.append(case('apt_repo', 'PackageIndex + resolve_closure: hostile Depends (refused)', t.packages_with_a_hostile_depends, closure, n,
                      raises=apt_repo.AptRepoError))
    cases.append(case('apt_repo', 'parse_stanzas: field of continuation lines', t.field_of_continuation_lines, apt_repo.parse_stanzas, n))
    return cases


def patch_series_cases():
    ps = load('plugins.module_utils.patch_series')
    t = load('tests.unit.plugins.module_utils.test_patch_series')
    cases = [case('patch_series', 'parse_patch: hunk header %s (refused)' % name, lambda k, build=build: t.patch_with_hunk_header(build(k)),
                  lambda data: ps.parse_patch(data, 'hostile'), t.N, raises=ps.PatchError)
             for name, build in sorted(t.HOSTILE_HUNK_HEADERS.items())]
    cases.append(case('patch_series', 'parse_patch: a long line before the patch', t.patch_after_a_long_line,
                      lambda data: ps.parse_patch(data, 'long header'), t.N))
    return cases


def pve_devices_cases():
    pve_devices = load('plugins.module_utils.pve_devices')
    t = load('tests.unit.plugins.module_utils.test_pve_devices')
    wanted = pve_devices.wanted_devices([{'name': 'nvidia0', 'mode': 0o666}])
    return [case('pve_devices', 'plan: long lines', t.config_with_long_lines, lambda text: pve_devices.plan(text, wanted, *t.MARKERS), 100000)]


def allreduce_probe_cases():
    ap = load('plugins.module_utils.allreduce_probe')
    t = load('tests.unit.plugins.module_utils.test_allreduce_probe_utils')
    real = t.real_graph_output()
    cases = [case('allreduce_probe', 'parse_probe_output: nested line', lambda k: t.deeply_nested_line(k) + '\n' + real, ap.parse_probe_output, t.N)]
    cases += [case('allreduce_probe', 'parse_probe_output: %s' % name, lambda k, build=build: build(k) + '\n' + real, ap.parse_probe_output, t.N)
              for name, build in sorted(t.LONG_LINES.items())]
    cases.append(case('allreduce_probe', 'split_recorded_sweep: long run', lambda k: t.long_recorded_run(k)[0], ap.split_recorded_sweep, t.N))
    return cases


def fatbin_cases(scratch):
    fatbin = load('plugins.module_utils.fatbin')
    t = load('tests.unit.plugins.module_utils.test_fatbin')

    def written(name, data):
        path = os.path.join(scratch, name)
        with open(path, 'wb') as handle:
            handle.write(data)
        return path

    def naive(path):
        with open(path, 'rb') as handle:
            return t.naive_embedded(handle.read())

    def padded(mib):
        path = os.path.join(scratch, 'padded-%d.fatbin' % mib)
        t.write_padded_fatbin(path, mib << 20)
        return path

    def many(count):
        path = os.path.join(scratch, 'many-%d.fatbin' % count)
        t.write_many_entries(path, count)
        return path

    return [
        # Former: the search as it was (re-walk every candidate), on the bytes in memory; current: scan_file on the file.
        case('fatbin', 'embedded search, overlapping candidates (n units)', lambda k: written('crafted-%d.so' % k, t.overlapping_candidates(k)),
             fatbin.scan_file, 4000, naive, 1000),
        case('fatbin', 'embedded search, one candidate holds (n units)',
             lambda k: written('exact-%d.so' % k, t.overlapping_candidates(k, k * 5 // 8)), fatbin.scan_file, 4000,
             naive, 1000),
        case('fatbin', 'fatbin claiming n bytes (truncated)', lambda k: written('claims.fatbin', t.claiming_fatbin(k)), fatbin.scan_file, 1 << 30),
        case('fatbin', 'n MiB of zero padding (sparse file)', padded, fatbin.scan_file, 64),
        case('fatbin', 'n empty entries (stops at MAX_ENTRIES)', many, fatbin.scan_file, 1000000),
    ]


def milliseconds(value):
    if value is None:
        return '-'
    return '%.3g' % (value * 1000)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--runs', type=int, default=3, help='samples per measure (the median is reported)')
    parser.add_argument('--module', action='append', default=[],
                        help='only this module (nvidia_smi, sglang_bench, lxc_gpu, host_probe, apt_repo, patch_series, pve_devices, '
                        'allreduce_probe, fatbin); repeatable')
    args = parser.parse_args()
    began = time.perf_counter()
    sys.path.insert(0, collection_path())
    scratch = tempfile.mkdtemp(prefix='parser-bench-')
    atexit.register(shutil.rmtree, scratch, True)
    groups = [('nvidia_smi', nvidia_smi_cases), ('sglang_bench', sglang_bench_cases), ('lxc_gpu', lxc_gpu_cases),
              ('host_probe', host_probe_cases), ('apt_repo', apt_repo_cases), ('patch_series', patch_series_cases),
              ('pve_devices', pve_devices_cases), ('allreduce_probe', allreduce_probe_cases),
              ('fatbin', lambda: fatbin_cases(scratch))]
    rows = []
    for name, make in groups:
        if args.module and name not in args.module:
            continue
        for item in make():
            current = seconds(item['current'], item['build'](item['n']), args.runs)
            former = at_former_n = None
            if item['former']:
                small = item['build'](item['n_former'])
                former = seconds(item['former'], small, args.runs)
                at_former_n = seconds(item['current'], small, args.runs)
            rows.append((item, current, former, at_former_n))
            sys.stderr.write('.')
            sys.stderr.flush()
    sys.stderr.write('\n')
    print('Parsers on the hostile inputs of issue 18: median of %d, milliseconds (wall), Python %s on %s.'
          % (args.runs, platform.python_version(), platform.machine()))
    print('The former code runs at the n of its column: the same n where it is fast enough, a smaller one where it is quadratic')
    print('or cubic (24 s and more at n = 100,000). former / current: both at that n, in this run.')
    print('')
    print('| module | input | n | current (ms) | former: n | former (ms) | current at that n (ms) | former / current |')
    print('|---|---|---:|---:|---:|---:|---:|---:|')
    for item, current, former, at_former_n in rows:
        ratio = '-'
        if former is not None and at_former_n:
            ratio = '{:,.0f}'.format(former / at_former_n) if former >= 10 * at_former_n else '%.2f' % (former / at_former_n)
        print('| %s | %s | %s | %s | %s | %s | %s | %s |' % (
            item['module'], item['label'], '{:,}'.format(item['n']), milliseconds(current),
            '{:,}'.format(item['n_former']) if item['former'] else '-', milliseconds(former), milliseconds(at_former_n), ratio))
    print('')
    with_former = sum(1 for row in rows if row[2] is not None)
    print('%d inputs, %d with the former code; the benchmark took %.1f s.' % (len(rows), with_former, time.perf_counter() - began))


if __name__ == '__main__':
    main()

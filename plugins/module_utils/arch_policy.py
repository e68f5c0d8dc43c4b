# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Judge the CUDA code of the installed packages against the declaration's per-package verify policies.

Each declared package carries a ``verify`` policy (validated by stack_declaration.py)::

    verify:
      reason: why these files, and only these, must carry code for the GPU
      require: [globs]   # files that MUST carry SASS that runs on the GPU or PTX the driver can JIT for it
      report: [globs]    # files scanned and reported with their architectures, never failed

The globs are relative to site-packages (a wheel may install beside its package directory: sgl-kernel
puts ``deep_gemm/``, ``lib/mscclpp*.so`` and ``_mscclpp*.so`` there) and are matched against the files
the distribution's own ``RECORD`` lists, so only that distribution's files count. ``*`` and ``?``
stay within one path segment, ``**/`` spans any number of directories.

Why a policy and not "every file must carry sm_120" (measured on the real wheels, stack-facts 10.2):
flashinfer-cubin 0.6.4 holds 8,934 cubins for SM100-class GPUs and none for SM120 (flashinfer uses
other backends there); sgl-kernel's ``flash_ops.abi3.so`` (sm_80 sm_86 sm_90a) and
``flashmla_ops.abi3.so`` (sm_90a sm_100a) are never loaded on SM120, while ``sm100/common_ops.abi3.so``,
the variant sgl-kernel loads on every GPU but SM90, is the one that must carry sm_120a.

A required glob must match at least one file: a renamed or missing library fails, it is not skipped.
"""

from __future__ import annotations

import csv
import io
import os
import re

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import fatbin
from ansible_collections.gpuops.sglang_stack.plugins.module_utils.stack_bom import normalize_name, read_installed

POLICY_KEYS = ('reason', 'require', 'report')

VERDICT_OK = 'ok'                  # every required file carries code for the GPU
VERDICT_WRONG_ARCH = 'wrong_arch'  # a required file carries none
VERDICT_MISSING = 'missing'        # a required glob matches no file, or the package is not installed
VERDICT_UNREADABLE = 'unreadable'  # a required file or the RECORD cannot be read
VERDICT_REPORTED = 'reported'      # nothing required; the files are reported only
VERDICT_ABSENT = 'absent'          # nothing required and not installed (the bill of materials judges presence)
VERDICT_NOT_SCANNED = 'not_scanned'  # the policy names no file (pure Python package)

SERVING = (fatbin.VERDICT_SASS, fatbin.VERDICT_PTX_JIT)
MAX_GROUPS = 6
MAX_EXAMPLES = 3
MAX_NAME = 60
MAX_LISTED = 20


def glob_regex(pattern):
    """Compile a glob relative to site-packages: '*', '?', '[...]' within a segment, '**/' any directories."""
    out = []
    i = 0
    n = len(pattern)
    while i < n:
        if pattern.startswith('**/', i):
            out.append('(?:[^/]+/)*')
            i += 3
            continue
        if pattern.startswith('**', i):
            out.append('.*')
            i += 2
            continue
        char = pattern[i]
        if char == '*':
            out.append('[^/]*')
        elif char == '?':
            out.append('[^/]')
        elif char == '[':
            end = pattern.find(']', i + 2 if pattern[i + 1:i + 2] in ('!', ']') else i + 1)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1:end]
                if body.startswith('!'):
                    body = '^' + body[1:]
                out.append('[' + body.replace('\\', '\\\\').replace('/', '') + ']')
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile('^' + ''.join(out) + '$')


def glob_problem(pattern):
    """Why a policy glob is unusable, or None."""
    if not isinstance(pattern, str) or not pattern.strip():
        return 'a glob must be a non-empty string, got %r' % (pattern,)
    if pattern.startswith('/') or '\\' in pattern:
        return 'glob "%s" must be relative to site-packages, with "/" separators' % pattern
    if '..' in pattern.split('/'):
        return 'glob "%s" must not leave site-packages ("..")' % pattern
    try:
        glob_regex(pattern)
    except re.error as exc:
        return 'glob "%s" does not compile: %s' % (pattern, exc)
    return None


def record_files(site_packages, dist_info):
    """The files a distribution installed below site-packages, from its RECORD, in RECORD order."""
    path = os.path.join(site_packages, dist_info, 'RECORD')
    with open(path, 'rb') as handle:
        text = handle.read().decode('utf-8', 'replace')
    files = []
    seen = set()
    for row in csv.reader(io.StringIO(text)):
        if not row or not row[0]:
            continue
        rel = row[0].replace('\\', '/')
        if rel.startswith('/') or '..' in rel.split('/') or rel.startswith(dist_info + '/') or rel in seen:
            continue
        seen.add(rel)
        files.append(rel)
    return files


def _match(files, patterns):
    """The files matching any of the patterns (in the order of files), and the patterns that match none."""
    compiled = [(pattern, glob_regex(pattern)) for pattern in patterns]
    hit = set()
    unmatched = []
    for pattern, regex in compiled:
        hits = set(f for f in files if regex.match(f))
        if not hits:
            unmatched.append(pattern)
        hit |= hits
    return [f for f in files if f in hit], unmatched


def _archs(sass, ptx):
    text = ' '.join(sass) or 'no SASS'
    if ptx:
        text += '; PTX ' + ' '.join(ptx)
    return text


def _file_entry(site_packages, rel, required, scan):
    """One scanned file. entries_truncated and limit_detail come from the fatbin reader: a file cut off at its image
    (or search) limit is ``unreadable`` with error None unless what was read holds SASS for the GPU, and limit_detail
    says why; sass and ptx then hold only what was read."""
    result = scan(os.path.join(site_packages, rel))
    verdict = fatbin.arch_verdict(result, required)
    return {'path': rel, 'verdict': verdict, 'sass': list(result['sass']), 'ptx': list(result['ptx']),
            'error': result['error'], 'error_detail': result['error_detail'],
            'entries_truncated': bool(result.get('entries_truncated')), 'limit_detail': result.get('limit_detail'),
            'matching': fatbin.matching_targets(result, required)}


def _cut_off(entry):
    """Unreadable only because the reader stopped at a limit (no read error)."""
    return entry['verdict'] == fatbin.VERDICT_UNREADABLE and entry['entries_truncated'] and entry['error'] not in fatbin.UNREADABLE_ERRORS


def _report_summary(entries):
    """Reported files grouped by their architecture sets, largest group first."""
    groups = {}
    order = []
    no_code = []
    unreadable = []
    for entry in entries:
        if _cut_off(entry):  # before no_fatbin: an embedded search stopped at its limit did not find "no code"
            unreadable.append(entry['path'])
            continue
        if entry['error'] == fatbin.ERR_NO_FATBIN or entry['error'] == fatbin.ERR_NOT_ELF:
            no_code.append(entry['path'])
            continue
        if entry['error'] in fatbin.UNREADABLE_ERRORS:
            unreadable.append(entry['path'])
            continue
        key = (tuple(entry['sass']), tuple(entry['ptx']))
        if key not in groups:
            groups[key] = {'sass': entry['sass'], 'ptx': entry['ptx'], 'serves': entry['verdict'] in SERVING, 'paths': []}
            order.append(key)
        groups[key]['paths'].append(entry['path'])
    ranked = sorted((groups[key] for key in order), key=lambda g: -len(g['paths']))
    return {
        'files': len(entries),
        'serving': sum(len(g['paths']) for g in ranked if g['serves']),
        'no_device_code': no_code,
        'unreadable': unreadable,
        'groups': ranked,
    }


def _bounded(summary):
    """The summary with at most MAX_LISTED paths per list (flashinfer-cubin reports 8,934 files)."""
    out = dict(summary)
    out['groups'] = [{'sass': g['sass'], 'ptx': g['ptx'], 'serves': g['serves'], 'count': len(g['paths']),
                      'examples': g['paths'][:MAX_LISTED]} for g in summary['groups']]
    out['no_device_code'] = summary['no_device_code'][:MAX_LISTED]
    out['no_device_code_count'] = len(summary['no_device_code'])
    return out


def _names(paths):
    """A few of the paths, short; '' when they are too long to help (flashinfer-cubin's kernel names)."""
    shown = [os.path.basename(p) if p.count('/') > 2 else p for p in paths[:MAX_EXAMPLES]]
    if any(len(name) > MAX_NAME for name in shown):
        return ''
    if len(paths) > MAX_EXAMPLES:
        shown.append('+%d more' % (len(paths) - MAX_EXAMPLES))
    return ', '.join(shown)


def _group_text(count, archs, paths):
    names = _names(paths)
    return '%d [%s]%s' % (count, archs, (' (%s)' % names) if names else '')


def _report_text(summary, arch):
    if not summary['files']:
        return '0 reported'
    parts = []
    for group in summary['groups'][:MAX_GROUPS]:
        parts.append(_group_text(len(group['paths']), _archs(group['sass'], group['ptx']), group['paths']))
    if len(summary['groups']) > MAX_GROUPS:
        rest = summary['groups'][MAX_GROUPS:]
        parts.append('%d more in %d other arch sets' % (sum(len(g['paths']) for g in rest), len(rest)))
    if summary['no_device_code']:
        parts.append('%d without device code' % len(summary['no_device_code']))
    if summary['unreadable']:
        parts.append(_group_text(len(summary['unreadable']), 'unreadable', summary['unreadable']))
    return '%d reported, %d with %s SASS or PTX: %s' % (summary['files'], summary['serving'], arch, ', '.join(parts))


def _required_failure(entry, arch):
    if _cut_off(entry):
        read = _archs(entry['sass'], entry['ptx'])
        return '%s unreadable (%s; no %s SASS in what was read: %s)' % (entry['path'], entry['limit_detail'], arch, read)
    if entry['verdict'] == fatbin.VERDICT_UNREADABLE:
        return '%s unreadable (%s: %s)' % (entry['path'], entry['error'], entry['error_detail'])
    return '%s has no %s code (%s)' % (entry['path'], arch, _archs(entry['sass'], entry['ptx']))


def judge_package(pkg, installed, site_packages, required='sm_120', scan=fatbin.scan_file):
    """The verdict of one declared package (name, layer, verify) on the files installed in site_packages.

    installed is stack_bom.read_installed(site_packages). Returns a dict: package, layer, reason,
    verdict (see VERDICT_*), ok, detail (one line), required (per file: path, verdict, sass, ptx,
    error, matching), unmatched (required globs that match no file), reported (see _report_summary).
    """
    major, minor, _variant = fatbin.parse_arch(required)
    arch = 'sm_%d%d' % (major, minor)
    policy = pkg.get('verify') or {}
    name = pkg['name']
    require = list(policy.get('require') or [])
    report = list(policy.get('report') or [])
    entry = {'package': name, 'layer': pkg.get('layer'), 'reason': policy.get('reason'), 'required': [], 'unmatched': [],
             'reported': _bounded(_report_summary([]))}
    if not require and not report:
        entry.update(verdict=VERDICT_NOT_SCANNED, ok=True, detail='nothing to scan: %s' % policy.get('reason'))
        return entry
    dist = (installed.get('distributions') or {}).get(normalize_name(name))
    if dist is None:
        if require:
            entry.update(verdict=VERDICT_MISSING, ok=False, detail='%s is not installed: %s cannot be checked' % (name, ', '.join(require)))
        else:
            entry.update(verdict=VERDICT_ABSENT, ok=True, detail='%s is not installed (reported only)' % name)
        return entry
    try:
        files = record_files(site_packages, dist['dist_info'])
    except (IOError, OSError) as exc:
        entry.update(verdict=VERDICT_UNREADABLE if require else VERDICT_REPORTED, ok=not require,
                     detail='%s: RECORD unreadable (%s)' % (name, exc))
        return entry
    required_files, unmatched = _match(files, require)
    taken = set(required_files)
    reported_files, _unused = _match([f for f in files if f not in taken], report)
    entry['unmatched'] = unmatched
    entry['required'] = [_file_entry(site_packages, rel, required, scan) for rel in required_files]
    reported = _report_summary([_file_entry(site_packages, rel, required, scan) for rel in reported_files])
    entry['reported'] = _bounded(reported)

    failures = ['no file matches %s' % pattern for pattern in unmatched]
    failures += [_required_failure(e, arch) for e in entry['required'] if e['verdict'] not in SERVING]
    passed = [e for e in entry['required'] if e['verdict'] in SERVING]
    if not require:
        verdict = VERDICT_REPORTED
    elif unmatched:
        verdict = VERDICT_MISSING
    elif any(e['verdict'] == fatbin.VERDICT_UNREADABLE for e in entry['required']):
        verdict = VERDICT_UNREADABLE
    elif failures:
        verdict = VERDICT_WRONG_ARCH
    else:
        verdict = VERDICT_OK
    head = '%d required, %d passed' % (len(entry['required']) + len(unmatched), len(passed)) if require else 'nothing required'
    if passed:
        head += ': ' + ', '.join('%s [%s]' % (e['path'], _archs(e['sass'], e['ptx'])) for e in passed[:MAX_EXAMPLES])
        if len(passed) > MAX_EXAMPLES:
            head += ', +%d more' % (len(passed) - MAX_EXAMPLES)
    if failures:
        head += '; FAILED: ' + '; '.join(failures)
    entry.update(verdict=verdict, ok=not failures, detail='%s; %s' % (head, _report_text(reported, arch)))
    return entry


def judge(packages, site_packages, required='sm_120', scan=fatbin.scan_file):
    """Judge every declared package; returns {'packages', 'layers', 'failed', 'ok', 'msg'}.

    layers holds one summary entry per package that has files to scan ({layer: package name,
    verdict, ok, detail}), the rows of verify's table.
    """
    installed = read_installed(site_packages)
    entries = [judge_package(pkg, installed, site_packages, required, scan) for pkg in packages]
    failed = [e['package'] for e in entries if not e['ok']]
    layers = [{'layer': e['package'], 'verdict': e['verdict'], 'ok': e['ok'], 'detail': e['detail']}
              for e in entries if e['verdict'] != VERDICT_NOT_SCANNED]
    scanned = len(layers)
    msg = '%s: %d package(s) with device code judged, %d failed%s' % (
        required, scanned, len(failed), (': ' + '; '.join('%s (%s)' % (e['package'], e['detail']) for e in entries if not e['ok'])) if failed else '')
    return {'packages': entries, 'layers': layers, 'failed': failed, 'ok': not failed, 'msg': msg,
            'site_packages_exists': installed['exists']}

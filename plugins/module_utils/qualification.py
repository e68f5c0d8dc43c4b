# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The qualification's verdicts and its report (role service_qualification, module qualification_report).

After an upgrade the seed's plan is: the baseline, then each optimisation that had failed on the old stack
measured alone against it (NCCL Tree, fewer NCCL channels, FlashInfer all-reduce fusion, custom PCIe all-reduce,
torch symmetric memory, Expert Parallelism), then EAGLE-3 on the optimisations kept. Each profile is measured
``repeats`` times (decode tok/s of bench_one_batch_server); its figure is the median, its noise the spread
(max - min) of its samples. The keep rule: an optimisation is kept only when its median beats the baseline's
by more than the larger of the two spreads (the measured noise of either run). A profile the launch-flag rules
(module_utils/sglang_flags.py) refuse on this stack is "not applicable": not run, reported with the refusal's
reason and the SGLang source line it cites.

The all-reduce path of each measured profile is the one the service itself logged at start-up: patch 0003's
``[AR] group <name> rank r/n: decode all-reduce path: <path> (<why>); NCCL env: <...>`` line, read from the
journal of the unit's invocation; the tensor-parallel group's rank 0 line is reported.
"""

from __future__ import annotations

import re

MIN_REPEATS = 3
# What the seed (the operators' notes before the upgrade, CUDA 12.8 stack) measured: baseline and EAGLE-3, tok/s.
SEED_BASELINE_TOK_S = 89.5
SEED_EAGLE3_TOK_S = 54.1

# patch 0003 (roles/nccl_patches/files/sglang-0.5.9/0003-nccl-log-allreduce-path.patch), logger.info format:
# "[AR] group %s rank %d/%d: decode all-reduce path: %s (%s); NCCL env: %s". The why may hold parentheses.
AR_LINE = re.compile(r'\[AR\] group (?P<group>\S+) rank (?P<rank>\d+)/(?P<world_size>\d+): decode all-reduce path: '
                     r'(?P<path>custom AR|mscclpp|torch symm-mem|pynccl symm-mem|NCCL|none) \((?P<why>.*)\); '
                     r'NCCL env: (?P<nccl_env>.*?)\s*$')
# A line is read only up to this many characters (a journal line of SGLang is far shorter).
MAX_LINE_CHARS = 65536

STATUSES = ('measured', 'not_applicable', 'failed')
KINDS = ('baseline', 'optimisation', 'eagle3')


class QualificationError(Exception):
    """The steps cannot be judged (too few samples, no baseline, a malformed step)."""


def median(values):
    ordered = sorted(float(v) for v in values)
    if not ordered:
        raise QualificationError('median of no samples')
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2.0


def summarize(samples, min_repeats=MIN_REPEATS):
    """median, spread (max - min), min, max and count of a profile's tok/s samples; QualificationError when fewer than
    min_repeats or any sample is not a positive number."""
    try:
        values = [float(v) for v in samples or []]
    except (TypeError, ValueError):
        raise QualificationError('samples must be numbers: %r' % (samples,))
    if len(values) < min_repeats:
        raise QualificationError('%d sample(s), at least %d needed to measure the spread' % (len(values), min_repeats))
    if any(v <= 0 for v in values):
        raise QualificationError('samples must be above 0 tok/s: %r' % (values,))
    return dict(samples=[round(v, 2) for v in values], count=len(values), median=round(median(values), 2),
                spread=round(max(values) - min(values), 2), min=round(min(values), 2), max=round(max(values), 2))


def keep_verdict(baseline, candidate):
    """The keep rule: (kept, why) for a candidate summary against the baseline summary (summarize())."""
    margin = candidate['median'] - baseline['median']
    noise = max(baseline['spread'], candidate['spread'])
    if margin > noise:
        return True, ('median %.2f tok/s beats the baseline median %.2f by %.2f, more than the measured spread %.2f'
                      % (candidate['median'], baseline['median'], margin, noise))
    if margin > 0:
        return False, ('median %.2f tok/s is %.2f above the baseline median %.2f, within the measured spread %.2f: '
                       'not beyond noise' % (candidate['median'], margin, baseline['median'], noise))
    return False, ('median %.2f tok/s does not beat the baseline median %.2f (%+.2f; measured spread %.2f)'
                   % (candidate['median'], baseline['median'], margin, noise))


def parse_ar_lines(lines, group='tp'):
    """The all-reduce path the service logged for ``group`` (patch 0003's line): dict(group, rank, world_size, path,
    why, nccl_env, line) of the lowest rank, or None when no such line. ``lines``: a text or a list of lines."""
    if isinstance(lines, str):
        lines = lines.splitlines()
    found = []
    for line in lines or []:
        line = str(line)[:MAX_LINE_CHARS]
        match = AR_LINE.search(line)
        if not match or match.group('group').split(':', 1)[0] != group:
            continue
        found.append(dict(group=match.group('group'), rank=int(match.group('rank')),
                          world_size=int(match.group('world_size')), path=match.group('path'), why=match.group('why'),
                          nccl_env=match.group('nccl_env'), line=line[match.start():].strip()))
    if not found:
        return None
    return sorted(found, key=lambda item: item['rank'])[0]


_SOURCE_REF = re.compile(r'[\w./-]+\.(?:py|cuh|cu|h)(?::\d+(?:-\d+)?| l\.\d+(?:-\d+)?)')


def not_applicable(refusals):
    """The verdict of a profile the launch-flag rules refuse: the flags, reasons, the source lines they cite, remedies."""
    items = []
    for refusal in refusals or []:
        reason = str(refusal.get('reason', ''))
        items.append(dict(flag=refusal.get('flag'), source=refusal.get('source'), guard=refusal.get('guard'),
                          reason=reason, remedy=refusal.get('remedy'),
                          source_lines=sorted(set(_SOURCE_REF.findall(reason)))))
    if not items:
        raise QualificationError('a profile is not applicable only with at least one refusal')
    return items


def _check_step(step):
    for key in ('name', 'kind', 'status'):
        if not step.get(key):
            raise QualificationError('a step needs %s: %r' % (key, step))
    if step['kind'] not in KINDS:
        raise QualificationError('step %s: kind %r is not one of %s' % (step['name'], step['kind'], ', '.join(KINDS)))
    if step['status'] not in STATUSES:
        raise QualificationError('step %s: status %r is not one of %s' % (step['name'], step['status'], ', '.join(STATUSES)))


def build_report(steps, baseline_tok_s, tolerance, min_repeats=MIN_REPEATS, seed_baseline_tok_s=SEED_BASELINE_TOK_S,
                 seed_eagle3_tok_s=SEED_EAGLE3_TOK_S, host=None, stack=None, probe=None):
    """Judge the steps and return the report (a dict, the JSON written on the controller).

    steps: in order, each dict(name, kind: baseline | optimisation | eagle3, status: measured | not_applicable | failed,
    samples (measured), ar_lines (the journal's [AR] lines), refusals (not_applicable), error (failed), settings (what
    the profile adds: environment, extra_args, speculative_algorithm)). Exactly one baseline, first.

    The baseline must be measured and reach baseline_tok_s x (1 - tolerance) (``baseline_passed``). The serving profile
    is EAGLE-3 on the kept settings when it reaches the floor and beats the best non-speculative median beyond the
    spread, else the kept optimisation with the highest median, else the baseline.
    """
    if not steps:
        raise QualificationError('no steps')
    for step in steps:
        _check_step(step)
    if steps[0]['kind'] != 'baseline' or any(s['kind'] == 'baseline' for s in steps[1:]):
        raise QualificationError('the first step, and only it, is the baseline')
    floor = float(baseline_tok_s) * (1.0 - float(tolerance))
    out_steps = []
    base = None
    for step in steps:
        entry = dict(name=step['name'], kind=step['kind'], status=step['status'], settings=step.get('settings') or {})
        if step['status'] == 'measured':
            entry.update(summarize(step.get('samples'), min_repeats))
            entry['passed_floor'] = entry['median'] >= floor
            ar = parse_ar_lines(step.get('ar_lines') or [])
            entry['allreduce'] = ar
            entry['allreduce_path'] = ar['path'] if ar else None
            if ar is None:
                entry['allreduce_note'] = 'no [AR] line of the tp group in the journal of this start (patch 0003 not applied?)'
            if step.get('acc_length') is not None:
                entry['acc_length'] = step['acc_length']
        elif step['status'] == 'not_applicable':
            entry['not_applicable'] = not_applicable(step.get('refusals'))
            entry['verdict'] = 'not applicable'
            entry['why'] = '; '.join('%s: %s' % (item['flag'], item['reason']) for item in entry['not_applicable'])
        else:
            entry['error'] = str(step.get('error') or 'failed')[:2000]
            entry['verdict'] = 'failed'
            entry['why'] = entry['error']
        if step['kind'] == 'baseline':
            base = entry
        out_steps.append(entry)
    baseline_ok = base['status'] == 'measured'
    if baseline_ok:
        base['verdict'] = 'baseline'
        base['why'] = ('reaches the floor %.2f tok/s' if base['passed_floor'] else 'below the floor %.2f tok/s') % floor
    kept = []
    for entry in out_steps:
        if entry['kind'] != 'optimisation' or entry['status'] != 'measured':
            continue
        if not baseline_ok:
            entry.update(kept=False, verdict='not judged', why='the baseline was not measured')
            continue
        ok, why = keep_verdict(base, entry)
        if ok and not entry['passed_floor']:
            ok, why = False, why + ', but below the floor %.2f tok/s' % floor
        entry.update(kept=ok, verdict='kept' if ok else 'not kept', why=why)
        if ok:
            kept.append(entry['name'])
    serving = out_steps[0]['name']
    best_plain = base if baseline_ok else None
    for entry in out_steps:
        if entry.get('kept') and (best_plain is None or entry['median'] > best_plain['median']):
            best_plain = entry
            serving = entry['name']
    eagle = None
    for entry in out_steps:
        if entry['kind'] != 'eagle3':
            continue
        eagle = entry
        entry['on_kept'] = list(kept)
        if entry['status'] != 'measured':
            continue
        entry['seed'] = dict(baseline_tok_s=float(seed_baseline_tok_s), eagle3_tok_s=float(seed_eagle3_tok_s),
                             ratio_to_seed_baseline=round(entry['median'] / float(seed_baseline_tok_s), 3),
                             ratio_to_seed_eagle3=round(entry['median'] / float(seed_eagle3_tok_s), 3))
        if best_plain is None:
            entry.update(kept=False, verdict='not judged', why='the baseline was not measured')
            continue
        ok, why = keep_verdict(best_plain, entry)
        why = why.replace('the baseline', best_plain['name'] if best_plain is not base else 'the baseline')
        if ok and not entry['passed_floor']:
            ok, why = False, why + ', but below the floor %.2f tok/s' % floor
        entry.update(kept=ok, verdict='kept' if ok else 'not kept', why=why)
        if ok:
            serving = entry['name']
    return dict(host=host, stack=stack, baseline_tok_s=float(baseline_tok_s), tolerance=float(tolerance),
                floor_tok_s=round(floor, 2), min_repeats=int(min_repeats),
                keep_rule='kept when the median beats the baseline median by more than the larger measured spread '
                          '(max - min of either profile\'s samples)',
                baseline_passed=bool(baseline_ok and base['passed_floor']), steps=out_steps, kept=kept,
                eagle3=dict(name=eagle['name'], status=eagle['status'], on_kept=eagle['on_kept'],
                            median=eagle.get('median'), seed=eagle.get('seed'), verdict=eagle.get('verdict'))
                if eagle else None,
                serving_profile=serving, probe=probe)


def _cell(value):
    text = '' if value is None else str(value)
    return text.replace('|', '\\|').replace('\n', ' ')


def render_markdown(report):
    """The report as Markdown: one table row per profile, then EAGLE-3 against the seed, then why each verdict."""
    lines = ['# Qualification of %s' % (report.get('host') or 'the host'), '']
    if report.get('stack'):
        lines.append('Stack: `%s`' % report['stack'])
    lines.append('Baseline floor: %.2f tok/s (site baseline %.2f less %.1f%%); each profile measured at least %d '
                 'times; %s.' % (report['floor_tok_s'], report['baseline_tok_s'], report['tolerance'] * 100,
                                 report['min_repeats'], report['keep_rule']))
    lines += ['', '| profile | tok/s median | spread | samples | all-reduce path (logged) | verdict |',
              '|---|---|---|---|---|---|']
    for step in report['steps']:
        if step['status'] == 'measured':
            row = ['%.2f' % step['median'], '%.2f' % step['spread'], ', '.join('%.2f' % s for s in step['samples']),
                   step.get('allreduce_path') or 'not logged']
        else:
            row = ['-', '-', '-', '-']
        lines.append('| %s |' % ' | '.join(_cell(c) for c in [step['name']] + row + [step.get('verdict', '')]))
    lines.append('')
    eagle = report.get('eagle3')
    if eagle and eagle.get('median') is not None:
        seed = eagle['seed']
        lines.append('EAGLE-3 on the kept settings (%s): %.2f tok/s median, against the seed\'s %.1f tok/s baseline '
                     '(x%.3f) and %.1f tok/s EAGLE-3 (x%.3f).'
                     % (', '.join(eagle['on_kept']) or 'none kept', eagle['median'], seed['baseline_tok_s'],
                        seed['ratio_to_seed_baseline'], seed['eagle3_tok_s'], seed['ratio_to_seed_eagle3']))
        lines.append('')
    elif eagle:
        lines += ['EAGLE-3 on the kept settings: %s.' % eagle['status'], '']
    lines.append('Serving profile: **%s**.' % report['serving_profile'])
    lines += ['', '## Why', '']
    for step in report['steps']:
        lines.append('- **%s** (%s): %s' % (step['name'], step.get('verdict', ''), _cell(step.get('why', ''))))
        if step.get('allreduce'):
            lines.append('  - logged: `%s`' % step['allreduce']['line'].replace('`', "'"))
        for item in step.get('not_applicable') or []:
            lines.append('  - `%s` from %s; source: %s; would work with: %s'
                         % (item['flag'], item['source'], ', '.join(item['source_lines']) or 'see reason',
                            _cell(item['remedy'])))
    probe = report.get('probe')
    if probe:
        lines += ['', '## All-reduce probe sweep', '', _cell(probe.get('msg', ''))]
        for row in probe.get('sweep_table') or []:
            lines.append(row)
    return '\n'.join(lines) + '\n'

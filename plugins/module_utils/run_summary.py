# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The end-of-run summary: per host, what a playbook run found and did, from what the roles publish.

The run_summary role hands over, per targeted host, the results the roles publish (never their ``__``
variables) and how the host ended the play; ``build`` turns them into the summary (JSON-ready), ``lines``
into what the play prints, ``markdown`` into the report beside the JSON. Published results read:

* ``stack_declaration_resolved`` (stack_declaration): the stack id, CUDA and the declared packages;
* ``preflight_result`` (preflight): every gate's verdict and figures;
* ``python_stack_dir``, ``python_stack_ready`` (python_stack): the stack built (or named) for this run;
* ``verify_result`` (verify): the verdict per layer;
* ``gated_switch_result`` (gated_switch): switched or not, from, to, rolled back, the failing gate, downtime, gate figures;
* ``sglang_service_healthy`` (sglang_service): the health gate's answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.preflight_gates import describe

SUMMARY_FORMAT = 1
# What the roles publish, in the order the summary reads them.
PUBLISHED = ('stack_declaration_resolved', 'preflight_result', 'python_stack_dir', 'python_stack_ready', 'verify_result',
             'gated_switch_result', 'sglang_service_healthy')
# How a host ended: every play it ran came through; a recorded failure; out of the play without a record
# (unreachable, or failed outside the playbook's recorded block); the run stopped before it came through.
STATES = ('ok', 'failed', 'lost', 'stopped')
MSG_LIMIT = 2000


def _get(mapping, *keys):
    for key in keys:
        if not isinstance(mapping, Mapping) or key not in mapping:
            return None
        mapping = mapping[key]
    return mapping


def state_of(host, host_vars, active, play, finished):
    """The state of one host (see STATES). host_vars holds run_summary_failure / run_summary_completed when set."""
    if _get(host_vars, 'run_summary_failure'):
        return 'failed'
    if host not in active:
        return 'lost'
    if finished or _get(host_vars, 'run_summary_completed') == play:
        return 'ok'
    return 'stopped'


def _stack(resolved):
    if not isinstance(resolved, Mapping):
        return None
    cuda = resolved.get('cuda') or {}
    return {
        'id': resolved.get('id'),
        'cuda': cuda.get('version'),
        'cuda_package': '%s=%s' % (cuda.get('package'), cuda.get('package_version')) if cuda.get('package') else None,
        'python': _get(resolved, 'python', 'version'),
        'packages': [p.get('pip_requirement') or '%s==%s' % (p.get('name'), p.get('version')) for p in resolved.get('packages') or []],
    }


def _preflight(result):
    if not isinstance(result, Mapping):
        return None
    gates = []
    for gate in result.get('gates') or []:
        entry = {'gate': gate.get('gate'), 'verdict': gate.get('verdict'), 'figures': gate.get('figures') or {}}
        try:
            entry['detail'] = describe(gate)
        except (KeyError, TypeError):
            entry['detail'] = ''
        if gate.get('message'):
            entry['message'] = gate['message']
        gates.append(entry)
    return {'passed': bool(result.get('passed')), 'failed': list(result.get('failed') or []), 'gates': gates}


def _built(published):
    if 'python_stack_dir' not in published:
        return None
    return {'stack_dir': published.get('python_stack_dir'), 'ready': bool(published.get('python_stack_ready'))}


def _verify(result):
    if not isinstance(result, Mapping):
        return None
    layers = result.get('layers') or {}
    return {
        'ok': bool(result.get('ok')),
        'failed': list(result.get('failed') or []),
        'layers': dict((name, _get(layer, 'verdict')) for name, layer in layers.items()),
        'report_path': result.get('report_path'),
    }


def _switch(result):
    if not isinstance(result, Mapping):
        return None
    keys = ('switched', 'from', 'to', 'rolled_back', 'failed_gate', 'downtime_s', 'gates')
    return dict((key, result.get(key)) for key in keys)


def _failure(failure):
    if not isinstance(failure, Mapping):
        return None
    msg = str(failure.get('msg') or '')
    if len(msg) > MSG_LIMIT:
        msg = msg[:MSG_LIMIT] + '... (%d characters more)' % (len(msg) - MSG_LIMIT)
    return {'play': failure.get('play'), 'task': failure.get('task'), 'action': failure.get('action'), 'msg': msg}


def host_entry(host, published, state, failure=None):
    """One host of the summary; published holds the results above that the host has (absent ones left out)."""
    if state not in STATES:
        raise ValueError('unknown host state %r' % (state,))
    healthy = published.get('sglang_service_healthy')
    return {
        'host': host,
        'state': state,
        'failure': _failure(failure),
        'stack': _stack(published.get('stack_declaration_resolved')),
        'preflight': _preflight(published.get('preflight_result')),
        'built': _built(published),
        'verify': _verify(published.get('verify_result')),
        'switch': _switch(published.get('gated_switch_result')),
        'service': None if healthy is None else {'healthy': bool(healthy)},
    }


def build(playbook, entries, written, finished):
    """The summary of a run: the hosts in the order targeted, the counts per state, the run's result."""
    counts = dict((state, 0) for state in STATES)
    for entry in entries:
        counts[entry['state']] += 1
    summary = {
        'format': SUMMARY_FORMAT,
        'playbook': playbook,
        'written': written,
        'finished': bool(finished),
        'result': 'ok' if counts['ok'] == len(entries) else 'failed',
        'counts': counts,
        'hosts': list(entries),
    }
    summary['lines'] = lines(summary)
    return summary


def _downtime(switch):
    value = _get(switch, 'downtime_s')
    return '-' if value is None else '%.2f s' % float(value)


def cells(entry):
    """The short form of each part of a host's entry (the printed lines and the Markdown table)."""
    pre, ver, sw, stack, built = entry['preflight'], entry['verify'], entry['switch'], entry['stack'], entry['built']
    if pre is None:
        pre_text = '-'
    elif pre['passed']:
        pre_text = 'passed (%d gates)' % len(pre['gates'])
    else:
        pre_text = '%d failed: %s' % (len(pre['failed']), ', '.join(pre['failed']))
    if ver is None:
        ver_text = '-'
    else:
        ver_text = 'ok' if ver['ok'] else 'failed: ' + ', '.join(ver['failed'])
    if sw is None:
        sw_text = '-'
    elif sw.get('rolled_back'):
        sw_text = 'rolled back (%s gate failed) to %s' % (sw.get('failed_gate'), sw.get('from'))
    elif sw.get('switched'):
        sw_text = 'switched %s -> %s' % (sw.get('from'), sw.get('to'))
    else:
        sw_text = 'not switched (%s serves)' % (sw.get('to') or sw.get('from'))
    if built is None:
        built_text = '-'
    else:
        built_text = '%s%s' % (built['stack_dir'], '' if built['ready'] else ' (not built)')
    return {
        'host': entry['host'],
        'state': entry['state'],
        'stack': (stack or {}).get('id') or '-',
        'preflight': pre_text,
        'built': built_text,
        'verify': ver_text,
        'switch': sw_text,
        'downtime': _downtime(sw),
    }


def lines(summary):
    """What the play prints: a head line, then one line per host (and its failure, when it failed)."""
    counts = summary['counts']
    out = ['%s: %s - %s' % (summary['playbook'], summary['result'],
                            ', '.join('%d %s' % (counts[s], s) for s in STATES if counts[s]) or 'no hosts')]
    for entry in summary['hosts']:
        c = cells(entry)
        out.append('%s %s | stack %s | preflight %s | built %s | verify %s | switch %s | downtime %s' % (
            c['host'], c['state'], c['stack'], c['preflight'], c['built'], c['verify'], c['switch'], c['downtime']))
        if entry['failure']:
            out.append('  failed at "%s": %s' % (entry['failure']['task'], entry['failure']['msg'].splitlines()[0] if entry['failure']['msg'] else ''))
    return out


def _md(text):
    return str(text).replace('|', '\\|').replace('\r', '').replace('\n', '<br>')


STATE_MEANING = {
    'ok': 'came through every play',
    'failed': 'failed (the task and its message below)',
    'lost': 'left the play without a recorded failure (unreachable)',
    'stopped': 'not through when the run stopped: another host failed first',
}


def markdown(summary):
    """The report beside the JSON: a table of the hosts, then each host's details."""
    counts = ', '.join('%d %s' % (summary['counts'][s], s) for s in STATES if summary['counts'][s]) or 'no hosts'
    stopped = '' if summary['finished'] else ', when the run stopped'
    out = ['# Run summary: %s' % summary['playbook'], '',
           'Result: %s (%s). Written %s%s.' % (summary['result'], counts, summary['written'], stopped),
           '',
           '| host | state | stack | preflight | built | verify | switch | downtime |',
           '|---|---|---|---|---|---|---|---|']
    for entry in summary['hosts']:
        c = cells(entry)
        columns = ('host', 'state', 'stack', 'preflight', 'built', 'verify', 'switch', 'downtime')
        out.append('| ' + ' | '.join(_md(c[k]) for k in columns) + ' |')
    out += [''] + ['- %s: %s' % (state, STATE_MEANING[state]) for state in STATES if summary['counts'][state]]
    for entry in summary['hosts']:
        out += ['', '## %s: %s' % (entry['host'], entry['state'])]
        if entry['failure']:
            fence = '~~~~' if '```' in entry['failure']['msg'] else '```'
            out += ['', 'Failed at task "%s" (%s):' % (entry['failure']['task'], entry['failure']['action']), '', fence,
                    entry['failure']['msg'], fence]
        stack = entry['stack']
        if stack:
            out += ['', 'Stack `%s`: CUDA %s (%s), Python %s; %s.' % (
                stack['id'], stack['cuda'], stack['cuda_package'], stack['python'], ', '.join(stack['packages']))]
        if entry['built']:
            out += ['', 'Stack directory: %s.' % cells(entry)['built']]
        if entry['preflight']:
            out += ['', '| gate | verdict | figures |', '|---|---|---|']
            for gate in entry['preflight']['gates']:
                out.append('| %s | %s | %s |' % (gate['gate'], gate['verdict'], _md(gate.get('message') or gate['detail'])))
        if entry['verify']:
            out += ['', 'Verify: %s.' % ', '.join('%s %s' % (k, v) for k, v in sorted(entry['verify']['layers'].items()))]
        switch = entry['switch']
        if switch:
            out += ['', 'Switch: %s; downtime %s.' % (cells(entry)['switch'], _downtime(switch))]
            for name, gate in sorted((switch.get('gates') or {}).items()):
                if isinstance(gate, Mapping):
                    out.append('- %s gate: %s' % (name, _md(', '.join('%s %s' % (k, v) for k, v in sorted(gate.items())))))
                elif gate is not None:
                    out.append('- %s gate: %s' % (name, _md(gate)))
        if entry['service'] is not None:
            out += ['', 'Service health gate: %s.' % ('passed' if entry['service']['healthy'] else 'failed')]
    return '\n'.join(out) + '\n'


def summary_files(summary, playbook, run_id):
    """The files of one written summary, {file name: content}: <playbook>-<run id>.json and .md keep this run,
    <playbook>-latest.json and .md are the last run's. One run's later writes (a failure recorded, then the end)
    replace its own files."""
    if not playbook or '/' in playbook or playbook.startswith('.'):
        raise ValueError('playbook %r: not a plain name for a file' % (playbook,))
    if not run_id or not all(c.isalnum() for c in run_id):
        raise ValueError('run id %r: letters and digits only (the run_summary role writes %%Y%%m%%dT%%H%%M%%SZ)' % (run_id,))
    text = json.dumps(summary, indent=4, sort_keys=True, separators=(',', ': '), ensure_ascii=False) + '\n'
    report = markdown(summary)
    files = {}
    for name in (run_id, 'latest'):
        files['%s-%s.json' % (playbook, name)] = text
        files['%s-%s.md' % (playbook, name)] = report
    return files

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The qualification's keep rule, its not-applicable verdicts (from the real launch-flag rules) and its report."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import qualification as q
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import sglang_flags

BASE_ARGS = ['--model-path', '/srv/models/m', '--tp-size', '8', '--host', '127.0.0.1', '--port', '30000']
SERIES = ['0002-torch-symm-mem-guard.patch', '0003-nccl-log-allreduce-path.patch']
# The six of the seed, as the role's defaults give them.
SIX = [
    ('nccl-tree', [], {'NCCL_ALGO': 'Tree'}),
    ('nccl-channels', [], {'NCCL_MIN_NCHANNELS': '4', 'NCCL_MAX_NCHANNELS': '4'}),
    ('flashinfer-allreduce-fusion', ['--enable-flashinfer-allreduce-fusion'], {}),
    ('custom-allreduce-pcie', [], {'SGLANG_CUSTOM_AR_ALLOW_PCIE': '1'}),
    ('torch-symm-mem', ['--enable-torch-symm-mem'], {}),
    ('expert-parallel', ['--ep-size', '8'], {}),
]


def rules(name, args, env, cc='12.0'):
    return sglang_flags.check(args_sources=[('qualification profile %s extra_args' % name, args)],
                              env_sources=[('qualification profile %s environment' % name, env)],
                              compute_capability=cc, patches=SERIES, base_args=BASE_ARGS)


def ar_lines(args, env, ws=8):
    """The tp group's [AR] lines as patch 0003 prints them, from the same decision (sglang_flags.allreduce_path)."""
    settings = dict(sglang_flags.parse_args(BASE_ARGS + args))
    path, why = sglang_flags.allreduce_path(ws, **sglang_flags.predict(settings, ws, 12, False))
    nccl = ' '.join('%s=%s' % kv for kv in sorted(dict(env, NCCL_CUMEM_ENABLE='0').items()) if kv[0].startswith('NCCL_'))
    return ['[standin 00:00:01] [AR] group tp:0 rank %d/%d: decode all-reduce path: %s (%s); NCCL env: %s'
            % (rank, ws, path, why, nccl) for rank in (3, 0)]


def test_summary_median_and_spread():
    s = q.summarize([91.2, 90.8, 91.0, 95.0])
    assert s['median'] == 91.1 and s['spread'] == 4.2 and s['count'] == 4
    with pytest.raises(q.QualificationError, match='2 sample\\(s\\), at least 3'):
        q.summarize([91.0, 90.0])
    with pytest.raises(q.QualificationError, match='above 0'):
        q.summarize([91.0, 0, 90.0])


@pytest.mark.parametrize('candidate, kept, text', [
    ([96.1, 96.6, 96.3], True, 'beats the baseline median 91.00 by 5.30, more than the measured spread 0.60'),
    ([91.4, 91.5, 91.3], False, 'within the measured spread 0.60: not beyond noise'),
    ([89.6, 89.7, 89.4], False, 'does not beat the baseline median 91.00 (-1.40; measured spread 0.60)'),
    # A noisy candidate: its own spread (6.0) is the noise, so a 2.5 higher median is not enough.
    ([93.5, 90.0, 96.0], False, 'within the measured spread 6.00'),
])
def test_keep_rule_both_ways(candidate, kept, text):
    ok, why = q.keep_verdict(q.summarize([91.0, 90.6, 91.2]), q.summarize(candidate))
    assert ok is kept and text in why


def test_the_rules_make_three_of_the_six_not_applicable_on_sm120_pcie():
    verdicts = {}
    for name, args, env in SIX:
        refusals = rules(name, args, env)['refusals']
        verdicts[name] = q.not_applicable(refusals) if refusals else None
    assert [n for n, v in verdicts.items() if v] == ['flashinfer-allreduce-fusion', 'custom-allreduce-pcie', 'torch-symm-mem']
    fusion = verdicts['flashinfer-allreduce-fusion'][0]
    assert fusion['flag'] == '--enable-flashinfer-allreduce-fusion'
    assert 'srt/layers/communicator.py:91-101' in fusion['source_lines']
    assert 'custom_all_reduce.py:340-343' in verdicts['custom-allreduce-pcie'][0]['source_lines']
    assert 'torch_symm_mem.py:81-93' in verdicts['torch-symm-mem'][0]['source_lines']
    assert all(v[0]['remedy'] for v in verdicts.values() if v)
    # On SM90 with NVLink the fusion is not refused: the verdict follows the stack, not the profile's name.
    assert rules('flashinfer-allreduce-fusion', ['--enable-flashinfer-allreduce-fusion'], {}, cc='9.0')['refusals'] == []


def test_parse_ar_lines_takes_the_tp_groups_lowest_rank():
    lines = ['[AR] group world:0 rank 0/8: decode all-reduce path: NCCL (custom AR off); NCCL env: (none set)']
    lines += ar_lines([], {'NCCL_ALGO': 'Tree'})
    found = q.parse_ar_lines(lines)
    assert found['group'] == 'tp:0' and found['rank'] == 0 and found['world_size'] == 8 and found['path'] == 'NCCL'
    assert found['why'] == 'custom AR off; mscclpp off; torch symm-mem off'
    assert found['nccl_env'] == 'NCCL_ALGO=Tree NCCL_CUMEM_ENABLE=0'
    assert found['line'].startswith('[AR] group tp:0 rank 0/8: ')  # the logger's prefix left out
    assert q.parse_ar_lines(lines, group='world')['why'] == 'custom AR off'
    assert q.parse_ar_lines(['unrelated', '[AR] group tp:0 rank 0/8: something else']) is None
    # A why with parentheses (patch 0003's own wording) is kept whole.
    patch_line = ('[AR] group tp:0 rank 0/2: decode all-reduce path: custom AR (custom AR enabled and world size 2, message '
                  'of 16384 bytes within max_size 8388608); NCCL env: (none set)')
    assert q.parse_ar_lines([patch_line])['path'] == 'custom AR'


def steps(tree=(96.1, 96.6, 96.3), ep=(91.3, 90.9, 91.1), eagle=(171.0, 172.2, 171.6), baseline=(91.0, 90.6, 91.2)):
    out = [dict(name='baseline', kind='baseline', status='measured', samples=list(baseline), ar_lines=ar_lines([], {}))]
    for name, args, env in SIX:
        refusals = rules(name, args, env)['refusals']
        if refusals:
            out.append(dict(name=name, kind='optimisation', status='not_applicable', refusals=refusals))
        else:
            samples = {'nccl-tree': tree, 'nccl-channels': (89.6, 89.7, 89.4), 'expert-parallel': ep}[name]
            out.append(dict(name=name, kind='optimisation', status='measured', samples=list(samples),
                            ar_lines=ar_lines(args, env), settings={'environment': env, 'extra_args': args}))
    out.append(dict(name='eagle3', kind='eagle3', status='measured', samples=list(eagle), acc_length=2.4,
                    ar_lines=ar_lines([], {'NCCL_ALGO': 'Tree'})))
    return out


def test_report_lists_the_six_with_verdicts_and_eagle3_against_the_seed():
    report = q.build_report(steps(), 89.5, 0.05, host='h1', stack='/opt/sglang/stacks/a')
    verdicts = dict((s['name'], s['verdict']) for s in report['steps'])
    assert verdicts == {'baseline': 'baseline', 'nccl-tree': 'kept', 'nccl-channels': 'not kept',
                        'flashinfer-allreduce-fusion': 'not applicable', 'custom-allreduce-pcie': 'not applicable',
                        'torch-symm-mem': 'not applicable', 'expert-parallel': 'not kept', 'eagle3': 'kept'}
    assert report['kept'] == ['nccl-tree'] and report['serving_profile'] == 'eagle3' and report['baseline_passed']
    assert report['floor_tok_s'] == 85.02 and report['steps'][0]['allreduce_path'] == 'NCCL'
    eagle = report['eagle3']
    assert eagle['on_kept'] == ['nccl-tree'] and eagle['median'] == 171.6
    assert eagle['seed'] == {'baseline_tok_s': 89.5, 'eagle3_tok_s': 54.1, 'ratio_to_seed_baseline': 1.917,
                             'ratio_to_seed_eagle3': 3.172}
    # EAGLE-3 is judged against the best kept profile, not the baseline.
    assert 'beats nccl-tree median 96.30' in report['steps'][-1]['why']
    md = q.render_markdown(report)
    assert '| nccl-tree | 96.30 | 0.50 | 96.10, 96.60, 96.30 | NCCL | kept |' in md
    assert '| torch-symm-mem | - | - | - | - | not applicable |' in md
    assert "EAGLE-3 on the kept settings (nccl-tree): 171.60 tok/s median, against the seed's 89.5 tok/s baseline (x1.917)" in md
    assert 'Serving profile: **eagle3**.' in md
    assert '--enable-flashinfer-allreduce-fusion` from qualification profile flashinfer-allreduce-fusion extra_args; source: ' in md
    assert 'srt/layers/communicator.py:91-101' in md


def test_serving_falls_back_when_eagle3_does_not_beat_and_nothing_is_kept():
    report = q.build_report(steps(tree=(91.3, 91.0, 90.9), eagle=(90.0, 91.5, 92.0)), 89.5, 0.05)
    assert report['kept'] == [] and report['serving_profile'] == 'baseline'
    assert report['steps'][-1]['verdict'] == 'not kept'


def test_below_the_floor_is_never_kept():
    report = q.build_report(steps(baseline=(80.0, 80.2, 80.1), tree=(84.0, 84.2, 84.1), ep=(80, 80.1, 80.2),
                                  eagle=(84.5, 84.6, 84.4)), 89.5, 0.05)
    assert not report['baseline_passed'] and report['steps'][0]['why'] == 'below the floor 85.02 tok/s'
    tree = [s for s in report['steps'] if s['name'] == 'nccl-tree'][0]
    assert tree['kept'] is False and 'but below the floor 85.02 tok/s' in tree['why']
    # nccl-channels (89.6 median) beats this baseline beyond noise and reaches the floor: kept, and serves.
    assert report['kept'] == ['nccl-channels'] and report['serving_profile'] == 'nccl-channels'


def test_failed_baseline_judges_nothing():
    s = steps()
    s[0] = dict(name='baseline', kind='baseline', status='failed', error='HEALTH GATE: no 200')
    report = q.build_report(s, 89.5, 0.05)
    assert not report['baseline_passed'] and report['steps'][0]['verdict'] == 'failed'
    assert all(x.get('verdict') in ('not judged', 'not applicable', 'failed') for x in report['steps'][1:])
    assert report['serving_profile'] == 'baseline'


@pytest.mark.parametrize('bad, match', [
    ([], 'no steps'),
    ([dict(name='x', kind='optimisation', status='measured', samples=[1, 2, 3])], 'the first step, and only it'),
    ([dict(name='b', kind='baseline', status='measured', samples=[1, 2])], 'at least 3'),
    ([dict(name='b', kind='baseline', status='done')], "status 'done'"),
    ([dict(name='b', kind='baseline', status='measured', samples=[1, 2, 3]),
      dict(name='x', kind='optimisation', status='not_applicable', refusals=[])], 'at least one refusal'),
])
def test_malformed_steps_are_refused(bad, match):
    with pytest.raises(q.QualificationError, match=match):
        q.build_report(bad, 89.5, 0.05)

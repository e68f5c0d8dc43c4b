# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The qualification_report module: verdicts returned, the JSON and Markdown written once, check and diff mode."""

from __future__ import annotations

import json

from ansible_collections.gpuops.sglang_stack.plugins.modules import qualification_report
from ansible_collections.gpuops.sglang_stack.tests.unit import module_runner
from ansible_collections.gpuops.sglang_stack.tests.unit.plugins.module_utils.test_qualification import steps


def run(capsys, **args):
    base = dict(host='sglang-svc-1', steps=steps(), baseline_tok_s=89.5)
    base.update(args)
    return module_runner.run_module(capsys, qualification_report, base)


def test_verdicts_without_writing(capsys):
    failed, result = run(capsys)
    assert failed is False and result['changed'] is False and 'paths' not in result
    assert result['kept'] == ['nccl-tree'] and result['serving_profile'] == 'eagle3'
    assert '| custom-allreduce-pcie | - | - | - | - | not applicable |' in result['markdown']


def test_writes_json_and_markdown_once(capsys, tmp_path):
    dest = tmp_path / 'reports'
    failed, result = run(capsys, dest_dir=str(dest), _ansible_check_mode=True, _ansible_diff=True)
    assert failed is False and result['changed'] is True and not dest.exists()
    assert result['diff']['before'] == '' and result['diff']['after'] == result['markdown']
    failed, result = run(capsys, dest_dir=str(dest))
    assert failed is False and result['changed'] is True
    report = json.loads((dest / 'sglang-svc-1.json').read_text())
    assert report['serving_profile'] == 'eagle3' and len(report['steps']) == 8
    assert (dest / 'sglang-svc-1.md').read_text() == result['markdown']
    failed, result = run(capsys, dest_dir=str(dest))
    assert failed is False and result['changed'] is False


def test_refuses_what_cannot_be_judged(capsys, tmp_path):
    failed, result = run(capsys, steps=steps()[:1] + [dict(name='x', kind='optimisation', status='measured', samples=[90])])
    assert failed is True and result['msg'] == 'QUALIFY: the steps cannot be judged: 1 sample(s), at least 3 needed to measure the spread'
    failed, result = run(capsys, host='../x', dest_dir=str(tmp_path))
    assert failed is True and 'cannot name a report file' in result['msg']

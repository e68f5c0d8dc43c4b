# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The run_summary_write module, run in-process: the four files of a run, in one module run."""

from __future__ import annotations

import json
import os

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.run_summary import build, host_entry, markdown
from ansible_collections.gpuops.sglang_stack.plugins.modules import run_summary_write
from ansible_collections.gpuops.sglang_stack.tests.unit import module_runner

# A summary as the run_summary filter builds it: one host that failed its switch's health gate and was rolled back.
SUMMARY = build('upgrade', [host_entry('gpu-01', {'gated_switch_result': {
    'switched': False, 'rolled_back': True, 'from': '/opt/sglang/stacks/cuda128-aaaa', 'to': '/opt/sglang/stacks/cu130-bbbb',
    'failed_gate': 'health', 'downtime_s': 3.41, 'gates': {'health': {'ok': False, 'status': 503, 'seconds': 1.2}}}},
    'failed', {'task': 'Fail naming the gate', 'action': 'ansible.builtin.fail', 'msg': 'ROLLED BACK on gpu-01: the health gate failed'})],
    '2026-12-05 19:40:00 UTC', finished=True)


def run(capsys, tmp_path, check=False, **override):
    args = dict({'dir': str(tmp_path / 'summaries'), 'playbook': 'upgrade', 'run_id': '20261205T194000Z',
                 'summary': SUMMARY}, **override)
    if check:
        args['_ansible_check_mode'] = True
    return module_runner.run_module(capsys, run_summary_write, args)


def test_four_files_as_to_nice_json_and_the_markdown_filter_wrote_them(capsys, tmp_path):
    failed, result = run(capsys, tmp_path)
    assert failed is False and result['changed'] is True
    out = tmp_path / 'summaries'
    names = ['upgrade-20261205T194000Z.json', 'upgrade-20261205T194000Z.md', 'upgrade-latest.json', 'upgrade-latest.md']
    assert sorted(os.listdir(str(out))) == names
    text = (out / 'upgrade-latest.json').read_text()
    assert text == json.dumps(SUMMARY, indent=4, sort_keys=True, separators=(',', ': '), ensure_ascii=False) + '\n'
    assert json.loads((out / 'upgrade-20261205T194000Z.json').read_text()) == SUMMARY
    assert (out / 'upgrade-latest.md').read_text() == markdown(SUMMARY)
    assert all(oct(os.stat(str(out / n)).st_mode & 0o777) == '0o644' for n in os.listdir(str(out)))
    # The same summary again changes nothing; a later run replaces latest and keeps the first run's files.
    failed, result = run(capsys, tmp_path)
    assert (failed, result['changed']) == (False, False)
    later = dict(SUMMARY, written='2026-12-05 20:00:00 UTC')
    failed, result = run(capsys, tmp_path, run_id='20261205T200000Z', summary=later)
    assert [f['changed'] for f in result['files']] == [True, True, True, True]
    assert json.loads((out / 'upgrade-latest.json').read_text())['written'] == '2026-12-05 20:00:00 UTC'
    assert json.loads((out / 'upgrade-20261205T194000Z.json').read_text())['written'] == '2026-12-05 19:40:00 UTC'
    assert not [n for n in os.listdir(str(out)) if n.startswith('.')]  # no scratch file left


def test_check_mode_writes_nothing(capsys, tmp_path):
    failed, result = run(capsys, tmp_path, check=True)
    assert failed is False and result['changed'] is True
    assert not (tmp_path / 'summaries').exists()


def test_a_run_id_or_playbook_that_is_not_a_plain_name_is_refused(capsys, tmp_path):
    failed, result = run(capsys, tmp_path, run_id='../../etc/x')
    assert failed is True and 'letters and digits only' in result['msg']
    failed, result = run(capsys, tmp_path, playbook='../upgrade')
    assert failed is True and 'not a plain name' in result['msg']
    assert not (tmp_path / 'summaries').exists()

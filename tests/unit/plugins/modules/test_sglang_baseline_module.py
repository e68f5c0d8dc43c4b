# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""sglang_baseline and sglang_baseline_info as Ansible runs them, on the recorded Debian 12 container (fixtures/real/systemd-baseline) with the
site's files under a temp dir: refusals, info, check mode and diff, record, restore."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.modules import sglang_baseline, sglang_baseline_info
from ansible_collections.gpuops.sglang_stack.tests.unit.module_runner import run_module
from ansible_collections.gpuops.sglang_stack.tests.unit.plugins.module_utils.test_sglang_baseline import (
    SECRET, RecordedHost, make_site, recorded_commit)


@pytest.fixture
def site(tmp_path):
    return make_site(str(tmp_path / 'host'))


@pytest.fixture
def host(monkeypatch, site):
    recorded = RecordedHost(base=site)
    monkeypatch.setattr(sglang_baseline, 'Host', lambda module: recorded)
    monkeypatch.setattr(sglang_baseline_info, 'Host', lambda module: recorded)
    return recorded


def test_process_outside_a_service_is_refused(capsys, host, tmp_path):
    for module in (sglang_baseline, sglang_baseline_info):
        failed, result = run_module(capsys, module, {'root': str(tmp_path / 'opt')})
        assert failed and result['msg'].startswith('BASELINE: an SGLang server process runs outside any systemd service')
    assert not os.path.exists(str(tmp_path / 'opt'))


def test_info_describes_and_writes_nothing(capsys, host, tmp_path, site):
    failed, result = run_module(capsys, sglang_baseline_info, {'unit': 'sglang', 'root': str(tmp_path / 'opt')})
    assert not failed and not result['changed'] and result['found'] and result['unit'] == 'sglang.service'
    assert result['description']['checkout']['commit'] == recorded_commit()
    assert result['unit_file_state'] == 'enabled' and not result['recorded'] and result['manifest'] is None
    assert not os.path.exists(str(tmp_path / 'opt'))
    assert SECRET not in json.dumps(result)


def test_present_check_diff_then_record_then_restore(capsys, host, tmp_path, site):
    root = str(tmp_path / 'opt')
    args = {'unit': 'sglang.service', 'root': root, '_ansible_check_mode': True, '_ansible_diff': True}
    failed, result = run_module(capsys, sglang_baseline, args)
    assert not failed and result['changed'] and not result['recorded'] and not os.path.exists(root)
    assert result['diff']['before'] == '' and '"sha256"' in result['diff']['after']
    assert SECRET not in json.dumps(result)
    args['_ansible_check_mode'] = False
    failed, result = run_module(capsys, sglang_baseline, args)
    assert not failed and result['changed'] and result['recorded']
    assert os.path.isfile(os.path.join(root, 'baseline', 'manifest.json'))
    failed, result = run_module(capsys, sglang_baseline, args)
    assert not failed and not result['changed'] and result['drift'] == []

    unit_file = os.path.join(site, 'etc/systemd/system/sglang.service')
    with open(unit_file, 'rb') as handle:
        original = handle.read()
    with open(unit_file, 'w') as handle:
        handle.write('[Service]\nExecStart=/opt/sglang/stacks/new/venv/bin/python -m sglang.launch_server\n')
    failed, result = run_module(capsys, sglang_baseline, args)
    assert not failed and not result['changed'] and result['drift'] == ['%s: content changed' % unit_file]
    restore = {'state': 'restored', 'root': root, '_ansible_diff': True}
    failed, result = run_module(capsys, sglang_baseline, restore)
    assert not failed and result['changed'] and result['restored'] == [unit_file] and result['daemon_reload']
    assert result['unit'] == 'sglang.service' and result['unit_file_state'] == 'enabled'
    assert result['diff']['prepared'] == 'write back %s (content differs)\n' % unit_file
    with open(unit_file, 'rb') as handle:
        assert handle.read() == original
    failed, result = run_module(capsys, sglang_baseline, restore)
    assert not failed and not result['changed'] and not result['daemon_reload']


def test_info_reports_the_recorded_baseline(capsys, host, tmp_path):
    root = str(tmp_path / 'opt')
    assert not run_module(capsys, sglang_baseline, {'unit': 'sglang', 'root': root})[0]
    failed, result = run_module(capsys, sglang_baseline_info, {'unit': 'sglang', 'root': root})
    assert not failed and not result['changed'] and result['recorded']
    assert result['manifest']['unit'] == 'sglang.service' and len(result['manifest']['files']) == 3


def test_restore_without_a_baseline_fails(capsys, host, tmp_path):
    failed, result = run_module(capsys, sglang_baseline, {'state': 'restored', 'root': str(tmp_path / 'opt')})
    assert failed and result['msg'].startswith('BASELINE: no baseline is recorded under')

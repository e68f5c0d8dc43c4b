# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The stack_bom module, run in-process against a fake site-packages."""

from __future__ import annotations

import json

import pytest


from ansible_collections.gpuops.sglang_stack.plugins.modules import stack_bom
from ansible_collections.gpuops.sglang_stack.tests.unit import module_runner
from ansible_collections.gpuops.sglang_stack.tests.unit.fake_site import make_site_packages

DECLARED = [
    {'name': 'torch', 'version': '2.11.0.dev20251231+cu130', 'layer': 'torch', 'sha256': None, 'order': 1},
    {'name': 'flashinfer-python', 'version': '0.6.4', 'layer': 'flashinfer'},
]


def run_module(capsys, args):
    """Run the module; returns (failed, result dict)."""
    return module_runner.run_module(capsys, stack_bom, args)


@pytest.fixture
def site(tmp_path):
    return make_site_packages(tmp_path / 'site-packages', '2.11.0.dev20251231+cu130')


def test_all_ok(capsys, site):
    failed, result = run_module(capsys, {'site_packages': str(site), 'declared': DECLARED})
    assert failed is False
    assert result['changed'] is False
    assert result['drift'] is False
    assert [(i['name'], i['status'], i['layer']) for i in result['items']] == [
        ('torch', 'ok', 'torch'), ('torch.version.cuda', 'ok', 'torch'), ('flashinfer-python', 'ok', 'flashinfer')]
    assert result['installed']['torch']['cuda'] == '13.0'
    assert result['msg'] == '3 checked: 3 ok'


def test_drift_and_missing_do_not_fail(capsys, site):
    declared = DECLARED + [{'name': 'sglang', 'version': '0.5.9'}, {'name': 'flashinfer-python', 'version': '0.6.3'}]
    failed, result = run_module(capsys, {'site_packages': str(site), 'declared': declared})
    assert failed is False
    assert result['drift'] is True
    assert [i['status'] for i in result['items']][-2:] == ['missing', 'drift']


def test_missing_site_packages(capsys, tmp_path):
    failed, result = run_module(capsys, {'site_packages': str(tmp_path / 'none'), 'declared': DECLARED})
    assert failed is False
    assert result['installed']['exists'] is False
    assert [i['status'] for i in result['items']] == ['missing', 'missing', 'missing']


def test_declared_needs_name_and_version(capsys, site):
    failed, result = run_module(capsys, {'site_packages': str(site), 'declared': [{'name': 'torch'}]})
    assert failed is True
    assert 'needs a name and a version' in result['msg']


def test_dest_check_mode_diff_then_write_then_idempotent(capsys, site, tmp_path):
    dest = tmp_path / 'bom.json'
    args = {'site_packages': str(site), 'declared': DECLARED, 'dest': str(dest), 'extra': {'gpus': 'ok'}}
    failed, result = run_module(capsys, dict(args, _ansible_check_mode=True, _ansible_diff=True))
    assert failed is False and result['changed'] is True
    assert not dest.exists()
    assert result['diff']['before'] == ''
    assert json.loads(result['diff']['after'])['extra'] == {'gpus': 'ok'}

    failed, result = run_module(capsys, args)
    assert failed is False and result['changed'] is True
    written = json.loads(dest.read_text())
    assert written['drift'] is False and [i['name'] for i in written['items']][0] == 'torch'

    failed, result = run_module(capsys, dict(args, _ansible_diff=True))
    assert result['changed'] is False and 'diff' not in result
    failed, result = run_module(capsys, dict(args, _ansible_check_mode=True))
    assert result['changed'] is False


def test_dest_directory_missing_fails(capsys, site, tmp_path):
    failed, result = run_module(capsys, {'site_packages': str(site), 'declared': DECLARED, 'dest': str(tmp_path / 'no' / 'bom.json')})
    assert failed is True
    assert 'does not exist' in result['msg']

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The stack_wheels module's guard (the virtualenv read back in the install's own module run), in-process against a
fake virtualenv whose layer is installed already: nothing is fetched or installed, the guard still reads it. The
install itself runs on the real wheels in molecule's real_stack scenario."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.modules import stack_wheels
from ansible_collections.gpuops.sglang_stack.tests.unit import module_runner
from ansible_collections.gpuops.sglang_stack.tests.unit.fake_site import make_site_packages

LOCKED = [
    {'name': 'torch', 'version': '2.11.0', 'filename': 'torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl',
     'url': 'https://files.example/torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl', 'sha256': 'a' * 64},
    {'name': 'flashinfer-python', 'version': '0.6.4', 'filename': 'flashinfer_python-0.6.4-py3-none-any.whl',
     'url': 'https://files.example/flashinfer_python-0.6.4-py3-none-any.whl', 'sha256': 'b' * 64},
]
GUARD = [{'name': 'torch', 'version': '2.11.0', 'layer': 'torch', 'cuda_tagged': True, 'cuda': '13.0'},
         {'name': 'flashinfer-python', 'version': '0.6.4', 'layer': 'flashinfer'}]


@pytest.fixture
def venv(tmp_path):
    make_site_packages(tmp_path / 'venv' / 'lib' / 'python3.11' / 'site-packages', '2.11.0')
    return tmp_path / 'venv'


def run(capsys, venv, **kwargs):
    args = {'distributions': LOCKED, 'wheelhouse': str(venv.parent / 'wheelhouse'), 'venv': str(venv), 'layer': 'flashinfer',
            'source': 'wheelhouse'}
    args.update(kwargs)
    return module_runner.run_module(capsys, stack_wheels, args)


def test_guard_reads_the_layer_back(capsys, venv):
    failed, result = run(capsys, venv, guard=GUARD)
    assert failed is False and result['changed'] is False
    assert result['installed'] == [] and result['fetched'] == []
    assert result['guard']['drift'] is False
    assert [(i['name'], i['status']) for i in result['guard']['items']] == [
        ('torch', 'ok'), ('torch.version.cuda', 'ok'), ('flashinfer-python', 'ok')]
    assert result['guard']['installed']['torch']['version'] == '2.11.0'
    assert result['guard']['msg'] == '3 checked: 3 ok'


def test_guard_reports_drift_without_failing(capsys, venv):
    guard = GUARD[:1] + [{'name': 'flashinfer-python', 'version': '0.6.3', 'layer': 'flashinfer'},
                         {'name': 'sgl-kernel', 'version': '0.3.21', 'layer': 'sgl_kernel'}]
    failed, result = run(capsys, venv, guard=guard)
    assert failed is False and result['guard']['drift'] is True
    assert [i['status'] for i in result['guard']['items']][-2:] == ['drift', 'missing']
    assert 'flashinfer-python' in result['guard']['msg'] and 'sgl-kernel' in result['guard']['msg']


def test_guard_in_check_mode(capsys, venv):
    failed, result = run(capsys, venv, guard=GUARD, _ansible_check_mode=True)
    assert failed is False and result['changed'] is False and result['guard']['drift'] is False
    assert not (venv.parent / 'wheelhouse').exists()


def test_no_guard_without_the_option(capsys, venv):
    failed, result = run(capsys, venv)
    assert failed is False and 'guard' not in result


def test_guarded_package_needs_a_version(capsys, venv):
    failed, result = run(capsys, venv, guard=[{'name': 'torch'}])
    assert failed is True and 'every guarded package needs a name and a version' in result['msg']

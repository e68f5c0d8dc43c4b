# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The stack_verify module in-process: one call judges every layer; nvcc is a script printing the real
nvcc 13.0's answers, nvidia-smi is absent, site-packages a fake one."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.modules import stack_verify
from ansible_collections.gpuops.sglang_stack.tests.unit import module_runner
from ansible_collections.gpuops.sglang_stack.tests.unit.plugins.module_utils.test_stack_verify_utils import real_nvcc

PACKAGES = [
    {'name': 'torch', 'version': '2.11.0.dev20251231+cu130', 'layer': 'torch',
     'verify': {'reason': 'every GPU op', 'require': ['torch/lib/libtorch_cuda.so'], 'report': []}},
    {'name': 'sglang', 'version': '0.5.9', 'layer': 'sglang', 'verify': {'reason': 'pure Python', 'require': [], 'report': []}},
]


@pytest.fixture
def host(tmp_path, monkeypatch):
    version, arch = real_nvcc()
    prefix = tmp_path / 'cuda-13.0'
    (prefix / 'bin').mkdir(parents=True)
    (prefix / 'bin' / 'version.txt').write_text(version)
    (prefix / 'bin' / 'arch.txt').write_text(arch)
    nvcc = prefix / 'bin' / 'nvcc'
    nvcc.write_text('#!/bin/sh\nd=$(dirname "$0")\n[ "$1" = --version ] && exec cat "$d/version.txt"\nexec cat "$d/arch.txt"\n')
    nvcc.chmod(0o755)
    sp = tmp_path / 'site-packages'
    info = sp / 'torch-2.11.0.dev20251231+cu130.dist-info'
    info.mkdir(parents=True)
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0.dev20251231+cu130\n\n')
    (info / 'RECORD').write_text('torch/version.py,,\n')
    (sp / 'torch').mkdir()
    (sp / 'torch' / 'version.py').write_text("__version__ = '2.11.0.dev20251231+cu130'\ncuda: Optional[str] = '13.0'\n")
    monkeypatch.setenv('TORCH_CUDA_ARCH_LIST', '9.0;12.0a')
    monkeypatch.delenv('FLASHINFER_CUDA_ARCH_LIST', raising=False)
    return tmp_path


def test_one_call_judges_every_layer_and_writes_the_report(capsys, host):
    dest = host / 'verify.json'
    args = {'site_packages': str(host / 'site-packages'), 'packages': PACKAGES, 'required_arch': 'sm_120',
            'cuda_prefix': str(host / 'cuda-13.0'), 'cuda_version': '13.0', 'nvcc_version': '13.0.88',
            'nvidia_smi_path': str(host / 'no-nvidia-smi'), 'dest': str(dest), 'extra': {'host': 'h1', 'stack_id': 's1'}}
    failed, result = module_runner.run_module(capsys, stack_verify, args)
    assert failed is False and result['changed'] is True
    rows = dict((row['layer'], (row['verdict'], row['ok'])) for row in result['layers'])
    assert [row['layer'] for row in result['layers']] == ['gpus', 'nvcc', 'torch', 'env TORCH_CUDA_ARCH_LIST',
                                                          'env FLASHINFER_CUDA_ARCH_LIST', 'bom']
    assert rows['gpus'] == ('unreadable', False)
    assert rows['nvcc'] == ('ok', True)
    # RECORD lists no libtorch_cuda.so: the required glob matches nothing.
    assert rows['torch'] == ('missing', False)
    assert rows['env TORCH_CUDA_ARCH_LIST'] == ('ok', True) and rows['env FLASHINFER_CUDA_ARCH_LIST'] == ('not_set', True)
    # sglang is declared and not installed.
    assert rows['bom'] == ('missing', False)
    assert result['failed_layers'] == ['gpus', 'torch', 'bom'] and result['ok'] is False
    # A 'failed' key in a module's result is Ansible's own: the task would fail before the role writes its message.
    assert 'failed' not in result
    assert result['failures'][1].startswith('torch (')
    assert result['lines'][0].split() == ['layer', 'verdict', 'detail']
    report = json.loads(dest.read_text())
    assert report['extra']['host'] == 'h1' and report['extra']['required_arch'] == 'sm_120'
    # The report holds the rows before the bill of materials, and the bill of materials itself.
    before_bom = ['gpus', 'nvcc', 'torch', 'env TORCH_CUDA_ARCH_LIST', 'env FLASHINFER_CUDA_ARCH_LIST']
    assert [row['layer'] for row in report['extra']['layers']] == before_bom
    assert [item['status'] for item in report['items']] == [item['status'] for item in result['bom']]
    # Same host, same answers: the report is not written again.
    failed, again = module_runner.run_module(capsys, stack_verify, args)
    assert failed is False and again['changed'] is False


def test_check_mode_writes_nothing(capsys, host):
    dest = host / 'verify.json'
    args = {'site_packages': str(host / 'site-packages'), 'packages': PACKAGES, 'cuda_prefix': str(host / 'cuda-13.0'),
            'cuda_version': '13.0', 'dest': str(dest), '_ansible_check_mode': True}
    failed, result = module_runner.run_module(capsys, stack_verify, args)
    assert failed is False and result['changed'] is True and not os.path.exists(str(dest))


def test_bad_arch_and_package_refused(capsys, host):
    failed, result = module_runner.run_module(capsys, stack_verify, {'site_packages': '/x', 'packages': PACKAGES, 'required_arch': 'gfx90a',
                                                                     'cuda_prefix': '/x', 'cuda_version': '13.0'})
    assert failed is True
    failed, result = module_runner.run_module(capsys, stack_verify, {'site_packages': '/x', 'packages': [{'name': 'torch'}],
                                                                     'cuda_prefix': '/x', 'cuda_version': '13.0'})
    assert failed is True and 'needs a name and a version' in result['msg']

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The stack_arch_verify module, run in-process on a site-packages of real nvcc 13.0 libraries."""

from __future__ import annotations

import os
import shutil

from ansible_collections.gpuops.sglang_stack.plugins.modules import stack_arch_verify
from ansible_collections.gpuops.sglang_stack.tests.unit import module_runner

FATBIN = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'fatbin')

POLICY = {'reason': 'sgl-kernel loads sm100/common_ops on SM120', 'require': ['sgl_kernel/sm100/common_ops.abi3.so'],
          'report': ['sgl_kernel/**/*.so']}


def make_site(tmp_path, common_ops):
    site = tmp_path / 'site-packages'
    info = site / 'sgl_kernel-0.3.21+cu130.dist-info'
    info.mkdir(parents=True)
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: sgl-kernel\nVersion: 0.3.21+cu130\n\n')
    files = {'sgl_kernel/sm100/common_ops.abi3.so': common_ops, 'sgl_kernel/flash_ops.abi3.so': 'libk_sm90.so'}
    (info / 'RECORD').write_text(''.join('%s,,\n' % rel for rel in files) + 'sgl_kernel/__init__.py,,\n')
    for rel, source in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(os.path.join(FATBIN, source), str(site / rel))
    return str(site)


def run(capsys, site, **extra):
    args = {'site_packages': site, 'packages': [{'name': 'sgl-kernel', 'layer': 'sgl_kernel', 'verify': POLICY},
                                                {'name': 'sglang', 'verify': {'reason': 'pure Python'}}]}
    args.update(extra)
    return module_runner.run_module(capsys, stack_arch_verify, args)


def test_passes_on_sm120a(capsys, tmp_path):
    failed, result = run(capsys, make_site(tmp_path, 'libk_sm120a.so'), required_arch='12.0')
    assert not failed and result['ok'] and result['failed_packages'] == [] and not result['changed']
    assert result['required_arch'] == 'sm_120'
    assert result['layers'] == [{'layer': 'sgl-kernel', 'verdict': 'ok', 'ok': True, 'detail':
                                 '1 required, 1 passed: sgl_kernel/sm100/common_ops.abi3.so [sm_120a]; '
                                 '1 reported, 0 with sm_120 SASS or PTX: 1 [sm_90] (sgl_kernel/flash_ops.abi3.so)'}]
    assert [p['verdict'] for p in result['packages']] == ['ok', 'not_scanned']


def test_wrong_arch_is_a_result_not_a_module_failure(capsys, tmp_path):
    failed, result = run(capsys, make_site(tmp_path, 'libk_sm100.so'))
    assert not failed
    assert result['ok'] is False and result['failed_packages'] == ['sgl-kernel']
    assert result['layers'][0]['verdict'] == 'wrong_arch'
    assert 'FAILED: sgl_kernel/sm100/common_ops.abi3.so has no sm_120 code (sm_100)' in result['msg']


def test_bad_arch_fails(capsys, tmp_path):
    failed, result = run(capsys, make_site(tmp_path, 'libk_sm120a.so'), required_arch='hopper')
    assert failed and 'hopper' in result['msg']

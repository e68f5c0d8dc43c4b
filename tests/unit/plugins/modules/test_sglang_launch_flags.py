# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The sglang_launch_flags module, run in-process: the inputs the roles give it, and what it returns or refuses."""

from __future__ import annotations

from ansible_collections.gpuops.sglang_stack.plugins.modules import sglang_launch_flags
from ansible_collections.gpuops.sglang_stack.tests.unit import module_runner

SITE = {'compute_capability': '12.0', 'tp_size': 8, 'flashinfer_version': '0.6.4',
        'patches': ['0002-torch-symm-mem-guard.patch', '0003-nccl-log-allreduce-path.patch'],
        'base_args': ['--model-path', '/models/m', '--tp-size', '8', '--host', '127.0.0.1', '--port', '30000']}


def run(capsys, **kwargs):
    args = dict(SITE)
    args.update(kwargs)
    return module_runner.run_module(capsys, sglang_launch_flags, args)


def test_defaults_pass_and_name_the_path(capsys):
    failed, result = run(capsys, switches={'nccl_patches_enable_torch_symm_mem': 'false'},
                         environment=[{'source': 'nccl_patches_nccl_env', 'env': {'NCCL_P2P_LEVEL': 'SYS', 'NCCL_CUMEM_ENABLE': '0'}}])
    assert failed is False and result['changed'] is False
    assert result['flags'] == [] and result['world_size'] == 8
    assert result['path'][0] == 'NCCL'


def test_switch_refused_names_flag_source_and_line(capsys):
    failed, result = run(capsys, switches={'nccl_patches_enable_flashinfer_allreduce_fusion': True})
    assert failed is True and result['flags'] == ['--enable-flashinfer-allreduce-fusion']
    assert result['msg'].startswith('NCCL_GUARD flashinfer_allreduce_fusion: --enable-flashinfer-allreduce-fusion '
                                    '(from role variable nccl_patches_enable_flashinfer_allreduce_fusion): ')
    assert 'srt/layers/communicator.py:91-101' in result['msg']


def test_profile_and_env_refusals_all_reported(capsys):
    failed, result = run(capsys, args=[{'source': 'sglang_service_extra_args + qualification profile p extra_args',
                                        'args': ['--enable-torch-symm-mem', '--enable-ep-moe']}],
                         environment=[{'source': 'sglang_service_environment', 'env': {'SGLANG_CUSTOM_AR_ALLOW_PCIE': 1}}])
    assert failed is True
    assert [r['guard'] for r in result['refusals']] == ['launch_flag', 'torch_symm_mem', 'custom_allreduce_pcie']
    assert len(result['msg'].splitlines()) == 3
    assert '(from sglang_service_extra_args + qualification profile p extra_args)' in result['msg']


def test_other_sglang_version_and_bad_items(capsys):
    failed, result = run(capsys, sglang_version='0.5.10')
    assert failed is True and 'the stack declares sglang 0.5.10' in result['msg']
    failed, result = run(capsys, args=[{'args': ['--enable-mscclpp']}])
    assert failed is True and 'each args item needs source' in result['msg']


def test_hopper_with_nvlink_accepts_both_switches(capsys):
    failed, result = run(capsys, compute_capability='9.0', full_nvlink=True, tp_size=4,
                         base_args=['--tp-size', '4', '--disable-custom-all-reduce'],
                         switches={'nccl_patches_enable_flashinfer_allreduce_fusion': True, 'nccl_patches_enable_torch_symm_mem': True})
    assert failed is False
    assert result['flags'] == ['--enable-flashinfer-allreduce-fusion', '--enable-torch-symm-mem']
    assert result['path'][0] == 'torch symm-mem'

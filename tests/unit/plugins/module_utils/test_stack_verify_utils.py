# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The verify role's verdicts (plugins/module_utils/stack_verify.py), against the real recorded outputs of an
H200 host: nvidia_smi.gather() run there (h200-nvidia-smi-cli/gather.json) and nvcc 13.0's own answers
(h200-ubuntu2404-cuda13/host.txt)."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_verify

REAL = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'real')


def real_gather():
    with open(os.path.join(REAL, 'h200-nvidia-smi-cli', 'gather.json')) as handle:
        return json.load(handle)['gather']


def real_nvcc():
    """(nvcc --version, nvcc --list-gpu-arch) as the H200 host printed them under '== nvcc'."""
    with open(os.path.join(REAL, 'h200-ubuntu2404-cuda13', 'host.txt')) as handle:
        section = handle.read().split('== nvcc\n', 1)[1].split('\n== ', 1)[0].splitlines()
    version = '\n'.join(section[1:6]) + '\n'
    arch = '\n'.join(line for line in section[6:] if line.startswith('compute_')) + '\n'
    return version, arch


@pytest.mark.parametrize('arch, cc', [('sm_120', '12.0'), ('sm_120a', '12.0'), ('120', '12.0'), ('12.0', '12.0'),
                                      ('12.0a', '12.0'), ('sm_90', '9.0'), ('sm_100f', '10.0')])
def test_compute_capability(arch, cc):
    assert stack_verify.compute_capability(arch) == cc


def test_gpus_real_h200_is_wrong_arch_for_sm120_and_ok_for_sm90():
    gathered = real_gather()
    row = stack_verify.judge_gpus(gathered, '12.0')
    assert row == {'layer': 'gpus', 'verdict': 'wrong_arch', 'ok': False, 'detail': 'GPU 0 NVIDIA H200 is 9.0, not 12.0'}
    assert stack_verify.judge_gpus(gathered, '9.0') == {'layer': 'gpus', 'verdict': 'ok', 'ok': True,
                                                        'detail': '1 x NVIDIA H200, compute 9.0'}


def test_gpus_unreadable_and_missing():
    row = stack_verify.judge_gpus({'gpus': [], 'gpu_count': 0,
                                   'nvidia_smi': {'error_kind': 'driver_mismatch', 'error': 'Failed to initialize NVML'}}, '12.0')
    assert (row['verdict'], row['detail']) == ('unreadable', 'nvidia-smi driver_mismatch: Failed to initialize NVML')
    assert stack_verify.judge_gpus({}, '12.0')['detail'] == 'nvidia-smi no_result: no answer'
    row = stack_verify.judge_gpus({'gpus': [], 'gpu_count': 0, 'nvidia_smi': {'error_kind': None}}, '12.0')
    assert (row['verdict'], row['ok'], row['detail']) == ('missing', False, 'no GPU visible')


def test_nvcc_real_13_0():
    version, arch = real_nvcc()
    assert stack_verify.parse_nvcc_version(version) == ('13.0', '13.0.88')
    path = '/usr/local/cuda-13.0/bin/nvcc'
    row = stack_verify.judge_nvcc(path, True, (0, version, ''), (0, arch, ''), '13.0', '13.0.88', '12.0')
    assert row == {'layer': 'nvcc', 'verdict': 'ok', 'ok': True, 'detail': 'release 13.0 (V13.0.88), compute_120 listed'}
    # Another declared build, another release: drift, naming both.
    row = stack_verify.judge_nvcc(path, True, (0, version, ''), (0, arch, ''), '13.0', '13.0.48', '12.0')
    assert row['verdict'] == 'drift' and row['detail'] == '%s is release 13.0 (V13.0.88), declared 13.0 (V13.0.48)' % path
    row = stack_verify.judge_nvcc(path, True, (0, version, ''), (0, arch, ''), '13.1', '', '12.0')
    assert row['verdict'] == 'drift' and row['detail'].endswith('declared 13.1')
    # nvcc 13.0 lists no compute_130.
    row = stack_verify.judge_nvcc(path, True, (0, version, ''), (0, arch, ''), '13.0', '', '13.0')
    assert (row['verdict'], row['detail']) == ('wrong_arch', '%s --list-gpu-arch has no compute_130' % path)


def test_nvcc_missing_or_not_running():
    row = stack_verify.judge_nvcc('/x/bin/nvcc', False, (None, '', 'no such file'), (None, '', 'no such file'), '13.0', '', '12.0')
    assert row == {'layer': 'nvcc', 'verdict': 'missing', 'ok': False, 'detail': 'missing file /x/bin/nvcc'}
    row = stack_verify.judge_nvcc('/x/bin/nvcc', True, (126, '', 'Permission denied\n'), (126, '', ''), '13.0', '', '12.0')
    assert (row['verdict'], row['detail']) == ('missing', '/x/bin/nvcc does not run (rc 126): Permission denied')


@pytest.mark.parametrize('value, verdict', [('', 'not_set'), ('12.0', 'ok'), ('9.0;12.0a', 'ok'), ('8.0 12.0+PTX', 'ok'),
                                            ('9.0,12.0', 'ok'), ('9.0;10.0', 'wrong_arch'), ('12.01', 'wrong_arch'),
                                            ('112.0', 'wrong_arch')])
def test_env_rows(value, verdict):
    environ = {'USER': 'root'}
    if value:
        environ['TORCH_CUDA_ARCH_LIST'] = value
    row = stack_verify.judge_env(environ, 'TORCH_CUDA_ARCH_LIST', '12.0')
    assert row['layer'] == 'env TORCH_CUDA_ARCH_LIST' and row['verdict'] == verdict
    assert row['ok'] is (verdict != 'wrong_arch')
    if not value:
        assert row['detail'] == 'not set for root'
    else:
        assert row['detail'] == 'TORCH_CUDA_ARCH_LIST=%s %s 12.0' % (value, 'contains' if verdict == 'ok' else 'lacks')


def test_bom_rows():
    assert stack_verify.judge_bom(False, [], True, '', '/v/sp')['detail'] == 'site-packages /v/sp does not exist'
    assert stack_verify.judge_bom(True, [{'status': 'ok'}], False, '3 checked: 3 ok', '/v/sp')['verdict'] == 'ok'
    assert stack_verify.judge_bom(True, [{'status': 'missing'}, {'status': 'drift'}], True, 'm', '/v')['verdict'] == 'drift'
    row = stack_verify.judge_bom(True, [{'status': 'missing'}], True, '1 checked: 1 missing', '/v')
    assert (row['verdict'], row['ok']) == ('missing', False)


def test_summary_table_and_failures():
    rows = [{'layer': 'gpus', 'verdict': 'wrong_arch', 'ok': False, 'detail': 'GPU 0 NVIDIA H200 is 9.0, not 12.0'},
            {'layer': 'bom', 'verdict': 'ok', 'ok': True, 'detail': '3 checked: 3 ok'}]
    lines, failures = stack_verify.summary(rows)
    assert lines == ['layer                           verdict     detail',
                     'gpus                            wrong_arch  GPU 0 NVIDIA H200 is 9.0, not 12.0',
                     'bom                             ok          3 checked: 3 ok']
    assert failures == ['gpus (GPU 0 NVIDIA H200 is 9.0, not 12.0)']

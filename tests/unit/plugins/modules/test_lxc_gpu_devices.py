# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""lxc_gpu_devices as Ansible runs it, on a copy of fixtures/lxc/pve-102-devices.conf (constructed, README there):
the move from the raw block to devN entries, check mode, diff, backup, and the refusals."""

from __future__ import annotations

import os

from ansible_collections.gpuops.sglang_stack.plugins.modules import lxc_gpu_devices
from ansible_collections.gpuops.sglang_stack.tests.unit.module_runner import run_module
from ansible_collections.gpuops.sglang_stack.tests.unit.recorded import FIXTURES, read

CONFIG = read(FIXTURES, 'lxc', 'pve-102-devices.conf')
DEVICES = [{'path': '/dev/nvidia%d' % index, 'mode': '0666'} for index in range(8)] + [
    {'path': '/dev/nvidiactl', 'mode': '0666'}, {'path': '/dev/nvidia-uvm', 'mode': '0666'},
    {'path': '/dev/nvidia-uvm-tools', 'mode': '0666'}]


def test_moves_to_devn_then_changes_nothing(capsys, tmp_path):
    path = tmp_path / '102.conf'
    path.write_text(CONFIG)
    failed, result = run_module(capsys, lxc_gpu_devices, {'path': str(path), 'devices': DEVICES, '_ansible_diff': True})
    assert not failed and result['changed']
    assert len(result['added']) == 11 and result['added'][0] == 'dev2: /dev/nvidia0,mode=0666'
    assert len(result['block_removed']) == 6
    assert result['diff']['before'] == CONFIG and result['diff']['after'] == path.read_text()
    text = path.read_text()
    assert 'gpuops.sglang_stack' not in text and 'dev12: /dev/nvidia-uvm-tools,mode=0666' in text
    failed, again = run_module(capsys, lxc_gpu_devices, {'path': str(path), 'devices': DEVICES})
    assert not failed and not again['changed'] and path.read_text() == text


def test_check_mode_writes_nothing_and_backup(capsys, tmp_path):
    path = tmp_path / '102.conf'
    path.write_text(CONFIG)
    failed, result = run_module(capsys, lxc_gpu_devices, {'path': str(path), 'devices': DEVICES, '_ansible_check_mode': True})
    assert not failed and result['changed'] and path.read_text() == CONFIG
    failed, result = run_module(capsys, lxc_gpu_devices, {'path': str(path), 'devices': DEVICES, 'backup': True})
    assert result['changed'] and open(result['backup_file']).read() == CONFIG
    assert os.path.dirname(result['backup_file']) == str(tmp_path)


def test_gid_is_written_in_proxmox_order(capsys, tmp_path):
    path = tmp_path / '102.conf'
    path.write_text(CONFIG)
    failed, result = run_module(capsys, lxc_gpu_devices, {'path': str(path), 'devices': [{'path': '/dev/nvidia0', 'mode': '0666', 'gid': 44}]})
    assert result['added'] == ['dev2: /dev/nvidia0,gid=44,mode=0666']


def test_refusals(capsys, tmp_path):
    failed, result = run_module(capsys, lxc_gpu_devices, {'path': str(tmp_path / 'absent.conf'), 'devices': DEVICES})
    assert failed and result['msg'].startswith('LXC_GPU_HOST no_config: ')
    path = tmp_path / 'full.conf'
    path.write_text(''.join('dev%d: /dev/sd%d\n' % (index, index) for index in range(256)))
    failed, result = run_module(capsys, lxc_gpu_devices, {'path': str(path), 'devices': DEVICES})
    assert failed and result['msg'].startswith('LXC_GPU_HOST no_free_device: ') and 'Nothing was changed' in result['msg']
    path.write_bytes(b'hostname: \xff\n')
    failed, result = run_module(capsys, lxc_gpu_devices, {'path': str(path), 'devices': DEVICES})
    assert failed and 'is not UTF-8' in result['msg'] and path.read_bytes() == b'hostname: \xff\n'

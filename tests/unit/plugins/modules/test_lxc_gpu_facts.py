# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""lxc_gpu_facts as Ansible runs it, on a host tree built from the GPU test machine's recorded
/proc/devices and /proc/driver/nvidia/version (fixtures/lxc/h200-host-probe.txt)."""

from __future__ import annotations

import os

import pytest

from ansible.module_utils import basic

from ansible_collections.gpuops.sglang_stack.plugins.modules import lxc_gpu_facts
from ansible_collections.gpuops.sglang_stack.tests.unit.module_runner import run_module
from ansible_collections.gpuops.sglang_stack.tests.unit.plugins.module_utils.test_lxc_gpu import PROC_DEVICES, PROC_VERSION


@pytest.fixture
def host(tmp_path):
    """A host tree: recorded /proc files, eight GPU nodes, two containers (LXC and Proxmox) with a user-space driver."""
    (tmp_path / 'proc-devices').write_text(PROC_DEVICES)
    (tmp_path / 'version').write_text(PROC_VERSION)
    dev = tmp_path / 'dev'
    (dev / 'nvidia-caps').mkdir(parents=True)
    for name in ['nvidia%d' % index for index in range(8)] + ['nvidiactl', 'nvidia-uvm', 'nvidia-uvm-tools']:
        (dev / name).write_text('')
    for name, version in (('gpu-ct-01', '580.159.04'), ('101', '580.159.04'), ('old', '575.57.08')):
        lib = tmp_path / 'lxc' / name / 'rootfs' / 'usr' / 'lib' / 'x86_64-linux-gnu'
        lib.mkdir(parents=True)
        (lib / ('libnvidia-ml.so.%s' % version)).write_bytes(b'\x7fELF')
        os.symlink('libnvidia-ml.so.%s' % version, str(lib / 'libnvidia-ml.so.1'))
        (tmp_path / 'lxc' / name / 'config').write_text('lxc.uts.name = %s\n' % name)
    return tmp_path


def args(host, containers, **extra):
    result = {
        'proc_devices_path': str(host / 'proc-devices'),
        'driver_version_path': str(host / 'version'),
        'dev_dir': str(host / 'dev'),
        'containers': [dict(c, config_path=str(host / 'lxc' / c['name'] / 'config'), rootfs=str(host / 'lxc' / c['name'] / 'rootfs'))
                       for c in containers],
    }
    result.update(extra)
    return result


def test_two_flavours_pass(capsys, host):
    failed, result = run_module(capsys, lxc_gpu_facts, args(host, [{'name': 'gpu-ct-01'}, {'name': '101', 'flavour': 'proxmox'}]))
    assert not failed and not result['changed']
    assert result['problems'] == []
    assert result['majors'] == {'nvidia': 195, 'nvidia-uvm': 238, 'nvidia-caps': 241}
    assert result['kernel_module']['version'] == '580.159.04'
    lxc, pve = result['containers']
    assert lxc['block'][:3] == ['lxc.cgroup2.devices.allow = c 195:* rwm', 'lxc.cgroup2.devices.allow = c 238:* rwm',
                                'lxc.cgroup2.devices.allow = c 241:* rwm']
    assert pve['block'][1] == 'lxc.cgroup2.devices.allow: c 238:* rwm'
    assert len([line for line in lxc['block'] if 'create=file' in line]) == 11  # 8 GPUs, ctl, uvm, uvm-tools
    assert lxc['driver_match'] is True and lxc['driver']['version'] == '580.159.04'
    assert result['marker_lines'] == ['# BEGIN gpuops.sglang_stack lxc_gpu_host', '# END gpuops.sglang_stack lxc_gpu_host']


def test_mismatch_is_reported_not_raised(capsys, host):
    failed, result = run_module(capsys, lxc_gpu_facts, args(host, [{'name': 'old'}]))
    assert not failed
    assert [p['code'] for p in result['problems']] == ['driver_mismatch']
    assert result['problems'][0]['container'] == 'old'
    assert result['containers'][0]['driver_match'] is False


def test_host_without_uvm_renders_nothing(capsys, host):
    (host / 'proc-devices').write_text(''.join(line for line in PROC_DEVICES.splitlines(True) if 'nvidia-uvm' not in line))
    failed, result = run_module(capsys, lxc_gpu_facts, args(host, [{'name': 'gpu-ct-01'}]))
    assert [p['code'] for p in result['problems']] == ['no_uvm']
    assert result['containers'][0]['block'] == [] and result['containers'][0]['driver'] is None


def test_host_without_kernel_module(capsys, host):
    os.remove(str(host / 'version'))
    failed, result = run_module(capsys, lxc_gpu_facts, args(host, [{'name': 'gpu-ct-01'}]))
    assert [p['code'] for p in result['problems']] == ['no_kernel_module']


def test_missing_config(capsys, host):
    os.remove(str(host / 'lxc' / 'gpu-ct-01' / 'config'))
    failed, result = run_module(capsys, lxc_gpu_facts, args(host, [{'name': 'gpu-ct-01', 'driver_check': 'none'}]))
    assert [p['code'] for p in result['problems']] == ['no_config']
    assert result['containers'][0]['driver_match'] is None


def test_proxmox_name_must_be_a_vmid(capsys, host):
    failed, result = run_module(capsys, lxc_gpu_facts, {'containers': [{'name': 'gpu-ct-01', 'flavour': 'proxmox'}]})
    assert failed and 'numeric VMID' in result['msg']


def test_exec_runs_pct_in_the_container(capsys, host, monkeypatch):
    calls = []

    def run_command(self, command, **kwargs):
        calls.append(command)
        return 18, 'Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.161\n', ''

    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', lambda self, name, *a, **k: '/usr/sbin/' + name)
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
    failed, result = run_module(capsys, lxc_gpu_facts, args(host, [{'name': '101', 'flavour': 'proxmox', 'driver_check': 'exec'}]))
    assert calls == [['/usr/sbin/pct', 'exec', '101', '--', 'nvidia-smi', '--query-gpu=driver_version', '--format=csv,noheader']]
    assert result['problems'][0]['code'] == 'driver_mismatch'
    assert 'container is 535.161' in result['problems'][0]['msg']


def test_exec_without_the_tool(capsys, host, monkeypatch):
    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', lambda self, name, *a, **k: None)
    failed, result = run_module(capsys, lxc_gpu_facts, args(host, [{'name': 'gpu-ct-01', 'driver_check': 'exec'}]))
    assert result['problems'][0]['code'] == 'exec_failed'
    assert 'lxc-attach is not installed' in result['problems'][0]['msg']

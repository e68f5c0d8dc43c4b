# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""lxc_gpu_info as Ansible runs it, on a host tree built from the GPU test machine's recorded
/proc/devices and /proc/driver/nvidia/version (fixtures/lxc/h200-host-probe.txt)."""

from __future__ import annotations

import os

import pytest

from ansible.module_utils import basic

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import host_probe, lxc_gpu
from ansible_collections.gpuops.sglang_stack.plugins.modules import lxc_gpu_info
from ansible_collections.gpuops.sglang_stack.tests.unit.module_runner import run_module
from ansible_collections.gpuops.sglang_stack.tests.unit.recorded import FIXTURES, read
from ansible_collections.gpuops.sglang_stack.tests.unit.plugins.module_utils.test_lxc_gpu import PROC_DEVICES, PROC_VERSION


@pytest.fixture
def host(tmp_path):
    """A host tree: recorded /proc files, eight GPU nodes, two containers (LXC and Proxmox) with a user-space driver."""
    (tmp_path / 'proc-devices').write_text(PROC_DEVICES)
    (tmp_path / 'version').write_text(PROC_VERSION)
    # A unified (cgroup v2) host, whatever the machine running the tests has (constructed line, mountinfo(5) layout).
    (tmp_path / 'mountinfo-v2').write_text('30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw\n')
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
        'mountinfo_path': str(host / 'mountinfo-v2'),
        'containers': [dict(c, config_path=str(host / 'lxc' / c['name'] / 'config'), rootfs=str(host / 'lxc' / c['name'] / 'rootfs'))
                       for c in containers],
    }
    result.update(extra)
    return result


def test_two_flavours_pass(capsys, host):
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01'}, {'name': '101', 'flavour': 'proxmox'}]))
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
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'old'}]))
    assert not failed
    assert [p['code'] for p in result['problems']] == ['driver_mismatch']
    assert result['problems'][0]['container'] == 'old'
    assert result['containers'][0]['driver_match'] is False


def test_host_without_uvm_renders_nothing(capsys, host):
    (host / 'proc-devices').write_text(''.join(line for line in PROC_DEVICES.splitlines(True) if 'nvidia-uvm' not in line))
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01'}]))
    assert [p['code'] for p in result['problems']] == ['no_uvm']
    assert result['containers'][0]['block'] == [] and result['containers'][0]['driver'] is None


def test_host_without_kernel_module(capsys, host):
    os.remove(str(host / 'version'))
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01'}]))
    assert [p['code'] for p in result['problems']] == ['no_kernel_module']


def test_kernel_module_problem_is_returned_and_quoted(capsys, host):
    """The recorded version file with 70,000 blanks in its first line: kernel_module.problem says why it was not read."""
    first, rest = PROC_VERSION.split('\n', 1)
    (host / 'version').write_text(first + ' ' * 70000 + '\n' + rest)
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01'}]))
    assert not failed
    module = result['kernel_module']
    assert module['present'] is True and module['version'] is None and module['raw'] == first.strip()[:200]
    assert 'over the %d read (MAX_VERSION_FILE_CHARS)' % host_probe.MAX_VERSION_FILE_CHARS in module['problem']
    assert [(p['code'], p['container']) for p in result['problems']] == [('unknown_kernel_module', None)]
    assert module['problem'] in result['problems'][0]['msg']
    assert result['containers'][0]['block'] == []
    (host / 'version').write_text(PROC_VERSION)
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01'}]))
    assert result['kernel_module']['problem'] is None and result['problems'] == []


def test_missing_config(capsys, host):
    os.remove(str(host / 'lxc' / 'gpu-ct-01' / 'config'))
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01', 'driver_check': 'none'}]))
    assert [p['code'] for p in result['problems']] == ['no_config']
    assert result['containers'][0]['driver_match'] is None


def test_proxmox_name_must_be_a_vmid(capsys, host):
    failed, result = run_module(capsys, lxc_gpu_info, {'containers': [{'name': 'gpu-ct-01', 'flavour': 'proxmox'}]})
    assert failed and 'numeric VMID' in result['msg']


def test_exec_runs_pct_in_the_container(capsys, host, monkeypatch):
    calls = []

    def run_command(self, command, **kwargs):
        calls.append(command)
        return 18, 'Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.161\n', ''

    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', lambda self, name, *a, **k: '/usr/sbin/' + name)
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': '101', 'flavour': 'proxmox', 'driver_check': 'exec'}]))
    # pveversion first (passthrough auto, a Proxmox VE container; it printed no version, so raw lines), then pct exec.
    assert calls == [['/usr/sbin/pveversion'],
                     ['/usr/sbin/pct', 'exec', '101', '--', 'nvidia-smi', '--query-gpu=driver_version', '--format=csv,noheader']]
    assert result['containers'][0]['passthrough'] == 'raw'
    assert result['problems'][0]['code'] == 'driver_mismatch'
    assert 'container is 535.161' in result['problems'][0]['msg']


def test_exec_without_the_tool(capsys, host, monkeypatch):
    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', lambda self, name, *a, **k: None)
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01', 'driver_check': 'exec'}]))
    assert result['problems'][0]['code'] == 'exec_failed'
    assert 'lxc-attach is not installed' in result['problems'][0]['msg']


def test_oversize_config_fails_with_its_path(capsys, host):
    """A configuration over MAX_CONFIG_CHARS fails the module with a message naming the container and file, no traceback."""
    config = host / 'lxc' / 'gpu-ct-01' / 'config'
    config.write_text('lxc.uts.name = gpu-ct-01\n' + '#' * lxc_gpu.MAX_CONFIG_CHARS)
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01'}]))
    assert failed
    assert result['msg'].startswith('container gpu-ct-01: %s: the container configuration is %d characters long, over the %d'
                                    % (config, lxc_gpu.MAX_CONFIG_CHARS + 25, lxc_gpu.MAX_CONFIG_CHARS))
    assert 'containers' not in result


def test_config_cut_inside_multibyte_characters_is_refused_not_read_in_part(capsys, host):
    """4-byte characters: the file's first MiB decodes to a quarter as many characters, under the cap; it must not be
    analysed as if that part were the whole file (the stale rule at its end would go unseen)."""
    config = host / 'lxc' / 'gpu-ct-01' / 'config'
    comment = '# ' + '\U0001F600' * lxc_gpu.MAX_CONFIG_CHARS + '\n'
    config.write_text(comment + 'lxc.cgroup2.devices.allow = c 511:* rwm\n', encoding='utf-8')
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01', 'driver_check': 'none'}]))
    assert failed and 'over the %d' % lxc_gpu.MAX_CONFIG_CHARS in result['msg']
    # The same comment, a quarter as long: read whole, and the stale rule after it is found.
    config.write_text('# ' + '\U0001F600' * (lxc_gpu.MAX_CONFIG_CHARS // 4) + '\nlxc.cgroup2.devices.allow = c 511:* rwm\n', encoding='utf-8')
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01', 'driver_check': 'none'}]))
    assert not failed, result.get('msg')
    assert [e['kind'] for e in result['containers'][0]['config']['foreign_entries']] == ['stale']


# --- Proxmox VE 8.1+: devN passthrough, chosen from pveversion (fixtures/lxc/pveversion-8.1.3.txt, a public sample) ---

def with_pveversion(monkeypatch, output, rc=0):
    calls = []

    def run_command(self, command, **kwargs):
        calls.append(command)
        return rc, output, ''

    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', lambda self, name, *a, **k: '/usr/bin/' + name)
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
    return calls


def test_proxmox_81_takes_devn_entries(capsys, host, monkeypatch):
    calls = with_pveversion(monkeypatch, read(FIXTURES, 'lxc', 'pveversion-8.1.3.txt'))
    os.chmod(str(host / 'dev' / 'nvidia0'), 0o666)
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01'}, {'name': '101', 'flavour': 'proxmox'}],
                                                           device_gid=44))
    assert not failed and result['problems'] == []
    assert calls == [['/usr/bin/pveversion']]
    assert result['proxmox']['version'] == '8.1.3' and result['proxmox']['found'] is True
    lxc, pve = result['containers']
    assert (lxc['passthrough'], pve['passthrough']) == ('raw', 'devices')
    assert 'Proxmox VE 8.1.3 reads devN entries' in pve['passthrough_reason']
    assert pve['block'] == [] and lxc['block'][0] == 'lxc.cgroup2.devices.allow = c 195:* rwm'
    assert pve['devices'][0] == {'path': '/dev/nvidia0', 'mode': '0666', 'gid': 44}
    assert [d['path'] for d in pve['devices']][8:] == ['/dev/nvidiactl', '/dev/nvidia-uvm', '/dev/nvidia-uvm-tools']
    assert pve['config']['devices_current'] is False and lxc['config']['devices_current'] is None


def test_proxmox_80_keeps_raw_lines_and_devices_override(capsys, host, monkeypatch):
    with_pveversion(monkeypatch, 'pve-manager/8.0.4/d258a813cfa6b390 (running kernel: 6.2.16-3-pve)\n')
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': '101', 'flavour': 'proxmox'}]))
    assert result['containers'][0]['passthrough'] == 'raw' and result['containers'][0]['devices'] == []
    assert result['containers'][0]['block'][1] == 'lxc.cgroup2.devices.allow: c 238:* rwm'
    calls = with_pveversion(monkeypatch, '')
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': '101', 'flavour': 'proxmox'}], passthrough='devices'))
    assert calls == [] and result['proxmox']['found'] is None
    assert result['containers'][0]['passthrough'] == 'devices'


def test_devices_for_a_plain_lxc_container_is_refused(capsys, host):
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01'}], passthrough='devices'))
    assert not failed
    assert [(p['code'], p['container']) for p in result['problems']] == [('devices_unsupported', 'gpu-ct-01')]


def test_devn_mode_reports_raw_lines_outside_the_block(capsys, host, monkeypatch):
    with_pveversion(monkeypatch, read(FIXTURES, 'lxc', 'pveversion-8.1.3.txt'))
    config = host / 'lxc' / '101' / 'config'
    config.write_text('arch: amd64\ndev0: /dev/nvidia0,mode=0666\nlxc.cgroup2.devices.allow: c 195:* rwm\n')
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': '101', 'flavour': 'proxmox', 'driver_check': 'none'}]))
    foreign = result['containers'][0]['config']['foreign_entries']
    assert [(e['line'], e['kind']) for e in foreign] == [('lxc.cgroup2.devices.allow: c 195:* rwm', 'duplicate')]
    assert 'the devN entries' in foreign[0]['reason']


def test_cgroup_v1_host_gets_v1_rules(capsys, host):
    (host / 'mountinfo').write_text(read(FIXTURES, 'lxc', 'mountinfo-cgroup-hybrid.txt'))
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01'}], mountinfo_path=str(host / 'mountinfo')))
    assert result['cgroup'] == {'devices': 'v1', 'source': 'detected in %s' % (host / 'mountinfo')}
    assert result['containers'][0]['block'][0] == 'lxc.cgroup.devices.allow = c 195:* rwm'
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01'}], mountinfo_path=str(host / 'mountinfo'), cgroup='v2'))
    assert result['containers'][0]['block'][0] == 'lxc.cgroup2.devices.allow = c 195:* rwm'
    failed, result = run_module(capsys, lxc_gpu_info, args(host, [{'name': 'gpu-ct-01'}], mountinfo_path=str(host / 'absent')))
    assert result['cgroup']['devices'] == 'v2' and 'unreadable' in result['cgroup']['source']

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""gpu_info as Ansible runs it: module args in, JSON out; nvidia-smi answered with real recorded outputs."""

from __future__ import annotations

import os
import stat

import pytest

from ansible.module_utils import basic

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import host_probe
from ansible_collections.gpuops.sglang_stack.plugins.modules import gpu_info
from ansible_collections.gpuops.sglang_stack.tests.unit.module_runner import patch_module_args
from ansible_collections.gpuops.sglang_stack.tests.unit.recorded import PUBLIC, REAL, host_section, read


H200_TABLE = host_section('nvidia-smi')
H200_QUERY = host_section('query')
H200_XML = read(REAL, 'nvidia-smi-q.xml')
QUERY = ('--query-gpu=index,name,compute_cap,driver_version,memory.total,pci.bus_id', '--format=csv,nounits')


class ModuleExit(Exception):
    def __init__(self, result, failed=False):
        super(ModuleExit, self).__init__(result)
        self.result = result
        self.failed = failed


def _exit_json(self, **kwargs):
    raise ModuleExit(kwargs)


def _fail_json(self, **kwargs):
    raise ModuleExit(kwargs, failed=True)


@pytest.fixture
def host(monkeypatch):
    """Stand-in for the host: nvidia-smi answers, device nodes, /proc files. Tests fill it in."""
    state = {
        'bin': '/usr/bin/nvidia-smi',
        'answers': {},
        'exec_fails': False,
        'calls': [],
        'nodes': [],
        'container': host_probe.detect_container(run_systemd_container='lxc'),
        'kernel': host_probe.parse_driver_version_file('NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04 ...\n'),
    }

    def run_command(self, args, **kwargs):
        state['calls'].append((list(args), kwargs))
        if state['exec_fails']:
            raise OSError(2, 'No such file or directory')
        return state['answers'].get(tuple(args[1:]), (2, "ERROR: Option %s is not recognized. Please run 'nvidia-smi -h' for help.\n" % args[1:], ''))

    def get_bin_path(self, arg, required=False, opt_dirs=None):
        state['opt_dirs'] = opt_dirs
        return state['bin']

    monkeypatch.setattr(basic.AnsibleModule, 'exit_json', _exit_json)
    monkeypatch.setattr(basic.AnsibleModule, 'fail_json', _fail_json)
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', get_bin_path)
    monkeypatch.setattr(host_probe, 'scan_device_nodes', lambda dev_dir='/dev': list(state['nodes']))
    monkeypatch.setattr(host_probe, 'probe_container', lambda root='/': state['container'])
    monkeypatch.setattr(host_probe, 'probe_kernel_module', lambda proc_dir='/proc': state['kernel'])
    return state


def run_module(args=None):
    with patch_module_args(args or {}):
        with pytest.raises(ModuleExit) as caught:
            gpu_info.main()
    return caught.value


def test_real_h200(host):
    host['answers'] = {QUERY: (0, H200_QUERY, ''), (): (0, H200_TABLE, '')}
    host['nodes'] = [
        host_probe.describe_device_node('/dev/nvidia0', stat.S_IFCHR | 0o666, os.makedev(195, 0)),
        host_probe.describe_device_node('/dev/nvidiactl', stat.S_IFCHR | 0o666, os.makedev(195, 255)),
        host_probe.describe_device_node('/dev/nvidia-uvm', stat.S_IFCHR | 0o666, os.makedev(238, 0)),
    ]
    outcome = run_module()
    result = outcome.result
    assert outcome.failed is False
    assert result['changed'] is False
    assert result['driver_version'] == '580.159.04'
    assert result['cuda_driver_version'] == '13.0'
    assert result['gpu_count'] == 1
    assert result['gpus'] == [{
        'index': 0, 'name': 'NVIDIA H200', 'name_truncated': False, 'compute_cap': '9.0', 'memory_total_mib': 143771,
        'bus_id': '00000000:00:06.0', 'uuid': None,
    }]
    assert result['nvidia_smi']['found'] is True
    assert result['nvidia_smi']['rc'] == 0
    assert result['nvidia_smi']['error_kind'] is None
    assert result['container'] == {'is_container': True, 'kind': 'lxc', 'evidence': ['/run/systemd/container=lxc'], 'manager': 'lxc'}
    assert result['kernel_module']['version'] == '580.159.04'
    assert result['kernel_module']['flavour'] == 'open'
    assert [(node['path'], node['major'], node['minor']) for node in result['device_nodes']] == [
        ('/dev/nvidia0', 195, 0), ('/dev/nvidiactl', 195, 255), ('/dev/nvidia-uvm', 238, 0)]
    assert result['device_node_summary']['gpu_indices'] == [0]
    assert result['device_node_summary']['majors']['nvidia-uvm'] == 238
    # nvidia-smi was asked for the CSV and the table, with the C locale, without letting run_command fail the module.
    assert [call[0][1:] for call in host['calls']] == [list(QUERY), []]
    assert all(call[1].get('handle_exceptions') is False for call in host['calls'])
    assert '/usr/local/nvidia/bin' in host['opt_dirs']


def test_include_xml_adds_uuid(host):
    host['answers'] = {QUERY: (0, H200_QUERY, ''), (): (0, H200_TABLE, ''), ('-q', '-x'): (0, H200_XML, '')}
    result = run_module({'include_xml': True}).result
    assert result['gpus'][0]['uuid'] == 'GPU-b1b0475d-8e01-ee23-7feb-ea1e2dc035a8'
    assert [cmd['args'][1:] for cmd in result['nvidia_smi']['commands']] == [list(QUERY), [], ['-q', '-x']]


def test_check_mode_gives_the_same_read_only_answer(host):
    host['answers'] = {QUERY: (0, H200_QUERY, ''), (): (0, H200_TABLE, '')}
    normal = run_module().result
    checked = run_module({'_ansible_check_mode': True}).result
    assert checked['changed'] is False
    assert checked['gpus'] == normal['gpus']
    assert checked['driver_version'] == '580.159.04'


def test_missing_nvidia_smi_does_not_fail(host):
    host['bin'] = None
    outcome = run_module()
    assert outcome.failed is False
    result = outcome.result
    assert result['nvidia_smi']['found'] is False
    assert result['nvidia_smi']['error_kind'] == 'not_found'
    assert result['gpus'] == [] and result['gpu_count'] == 0
    assert host['calls'] == []
    assert result['container']['kind'] == 'lxc'


def test_configured_path_that_does_not_exist(host, tmp_path):
    missing = str(tmp_path / 'nvidia-smi')
    result = run_module({'nvidia_smi_path': missing}).result
    assert result['nvidia_smi']['found'] is False
    assert result['nvidia_smi']['path'] == missing
    assert result['nvidia_smi']['error_kind'] == 'not_found'


def test_configured_path_is_used(host, tmp_path):
    binary = tmp_path / 'nvidia-smi'
    binary.write_text('#!/bin/sh\n')
    binary.chmod(0o755)
    host['bin'] = None
    host['answers'] = {QUERY: (0, H200_QUERY, ''), (): (0, H200_TABLE, '')}
    result = run_module({'nvidia_smi_path': str(binary)}).result
    assert result['nvidia_smi']['path'] == str(binary)
    assert host['calls'][0][0][0] == str(binary)
    assert result['gpu_count'] == 1


def test_exec_error_is_reported_as_not_found(host):
    host['exec_fails'] = True
    result = run_module().result
    assert result['nvidia_smi']['error_kind'] == 'not_found'
    assert result['nvidia_smi']['rc'] == 127


@pytest.mark.parametrize('filename, rc, kind', [
    ('error-driver-mismatch.txt', 18, 'driver_mismatch'),
    ('error-no-driver.txt', 9, 'no_driver'),
    ('error-no-devices.txt', 6, 'no_devices'),
])
def test_nvidia_smi_failures_are_reported_not_raised(host, filename, rc, kind):
    text = read(PUBLIC, filename)
    host['answers'] = {QUERY: (rc, text, ''), (): (rc, text, '')}
    outcome = run_module()
    assert outcome.failed is False
    result = outcome.result
    assert result['nvidia_smi']['error_kind'] == kind
    assert result['nvidia_smi']['rc'] == rc
    assert result['nvidia_smi']['error'].startswith(text.splitlines()[0])
    assert result['gpus'] == []
    assert result['driver_version'] is None


def test_driver_mismatch_reports_library_version(host):
    host['answers'] = {QUERY: (18, read(PUBLIC, 'error-driver-mismatch.txt'), '')}
    result = run_module().result
    assert result['nvidia_smi']['nvml_library_version'] == '535.161'


def test_rtx_pro_table_with_csv_names(host):
    csv = ('index, name, compute_cap, driver_version, memory.total [MiB], pci.bus_id\n'
           '0, NVIDIA RTX PRO 6000 Blackwell Server Edition, 12.0, 580.95.05, 97887, 00000000:16:00.0\n')
    host['answers'] = {QUERY: (0, csv, ''), (): (0, read(PUBLIC, 'rtx-pro-6000-580.95.05.txt'), '')}
    result = run_module().result
    assert result['gpus'][0]['name'] == 'NVIDIA RTX PRO 6000 Blackwell Server Edition'
    assert result['gpus'][0]['name_truncated'] is False
    assert result['gpus'][0]['compute_cap'] == '12.0'
    assert result['cuda_driver_version'] == '13.0'


def test_unknown_option_is_rejected(host):
    outcome = run_module({'bogus': 1})
    assert outcome.failed is True
    assert 'bogus' in outcome.result['msg']

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The preflight gates judged at once: every failing gate listed with its message, the others' figures kept.

The GPU side of each host is what gpu_info returns for real recorded nvidia-smi output (the H200 test machine;
public RTX PRO 6000 and H100 tables, the no-driver error), read through the same module_utils gpu_info uses.
"""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import host_probe, nvidia_smi
from ansible_collections.gpuops.sglang_stack.plugins.module_utils.preflight_gates import (
    GATES, PreflightInputError, judge, parse_df)
from ansible_collections.gpuops.sglang_stack.tests.unit.recorded import PUBLIC, host_section, read

H200_TABLE = host_section('nvidia-smi')
H200_QUERY = host_section('query')
MIRROR = 'http://upstream-mirror:8080'
INRELEASE = MIRROR + '/nvidia/cuda/repos/debian12/x86_64/InRelease'
CUDA = {'version': '13.0', 'package': 'cuda-toolkit-13-0', 'package_version': '13.0.2-1',
        'driver_minimum_from': 'driver_minimums 13.0.2-1'}


def gpu_view(query=None, table=None, rc=0, error_text='', nodes=('nvidia0', 'nvidiactl', 'nvidia-uvm'), files=()):
    """gpu_info's result for recorded nvidia-smi output and a set of /dev entries."""
    def run(args):
        if rc:
            return rc, error_text, ''
        if len(args) == 1:
            return 0, table or '', ''
        return 0, query or '', ''
    result = nvidia_smi.gather(run, '/usr/bin/nvidia-smi')
    entries = [host_probe.describe_device_node('/dev/' + n, stat.S_IFCHR, os.makedev(195, i)) for i, n in enumerate(nodes)]
    entries += [host_probe.describe_device_node('/dev/' + n, stat.S_IFREG) for n in files]
    result['device_node_summary'] = host_probe.summarize_device_nodes(entries)
    result['container'] = {'kind': 'lxc'}
    return result


def h200(**kwargs):
    return gpu_view(H200_QUERY, H200_TABLE, **kwargs)


def observed(gpu=None, **kwargs):
    base = {
        'host': 'sglang-gpu-h200',
        'os': 'Debian-12',
        'gpu': gpu or h200(),
        'disk': '41000 /',
        'python': {'rc': 0, 'stdout_lines': ['3.11.2', 'pip 23.0.1'], 'stderr_lines': []},
        'apt_sources': {'decision': 'add', 'problems': [], 'reuse': None},
        'upstreams': [{'item': INRELEASE, 'status': 200, 'msg': 'OK (unknown bytes)'},
                      {'item': MIRROR + '/', 'status': 404, 'msg': 'HTTP Error 404: Not Found'}],
    }
    base.update(kwargs)
    return base


def policy(**kwargs):
    base = {
        'supported_os': ['Ubuntu-22.04', 'Ubuntu-24.04', 'Debian-12', 'Debian-13'],
        'driver_minimum': '580.95.05',
        'cuda': CUDA,
        'expected_gpu_count': 1,
        'compute_capability': '9.0',
        'control_nodes': ['nvidiactl', 'nvidia-uvm'],
        'stack_disk_mb': 20000,
        'disk_reserve_mb': 2048,
        'stack_root': '/opt/sglang',
        'python': {'version': '3.11', 'tag': 'cp311'},
        'cuda_key_url': MIRROR + '/testbed-archive-keyring.gpg',
        'insecure_http_allowed': True,
        'cuda_key_fingerprint': 'EB693B3035CD5710E231E123A4B469963BF863CC',
        'cuda_repo_url': MIRROR + '/nvidia/cuda/repos/debian12/x86_64/',
        'cuda_distro': 'debian12',
    }
    base.update(kwargs)
    return base


def verdicts(result):
    return dict((g['gate'], g['verdict']) for g in result['gates'])


def gate(result, name):
    return [g for g in result['gates'] if g['gate'] == name][0]


def test_the_h200_passes_every_gate_as_a_one_gpu_sm90_fleet():
    result = judge(observed(), policy())
    assert result['passed'] is True
    assert result['failed'] == [] and result['messages'] == [] and result['msg'] == ''
    assert [g['gate'] for g in result['gates']] == [gate_id for gate_id, _word in GATES]
    assert set(verdicts(result).values()) == {'pass'}
    assert gate(result, 'driver_minimum')['figures'] == {'driver': '580.159.04', 'minimum': '580.95.05'}
    assert gate(result, 'disk')['figures']['need_mb'] == 22048
    assert gate(result, 'upstream')['figures']['probed'] == [INRELEASE, MIRROR + '/']
    assert result['lines'][0].split() == ['os', 'pass', 'Debian-12']


def test_two_failing_gates_are_both_reported_with_their_messages():
    # The molecule case's H200 against the collection's fleet: 8 GPUs of 12.0 expected.
    result = judge(observed(), policy(expected_gpu_count=8, compute_capability='12.0'))
    assert result['passed'] is False
    assert result['failed'] == ['gpu_count', 'compute_capability']
    assert result['messages'] == [
        'PREFLIGHT gpu_count: 1 GPU(s) visible, 8 expected. Fix: pass every GPU through to the container (lxc_gpu_host role) '
        'or set preflight_expected_gpu_count for this host.',
        'PREFLIGHT compute_capability: 1 GPU(s) are not compute capability 12.0: GPU 0 NVIDIA H200 is 9.0. This stack is built '
        'and verified for sm_120. Fix: run it on the right GPUs, or declare the fleet\'s capability (stack_declaration_gpu) '
        'after reviewing that every layer carries code for it.',
    ]
    assert result['msg'].splitlines() == ['PREFLIGHT: 2 of 13 gates failed on sglang-gpu-h200, nothing was changed:'] + [
        '- ' + m for m in result['messages']]
    assert gate(result, 'gpu_count')['figures'] == {'visible': 1, 'expected': 8}
    assert gate(result, 'compute_capability')['figures'] == {'required': '12.0', 'found': ['9.0'], 'wrong': 1}
    # The gates that passed keep their verdicts and figures.
    assert verdicts(result)['disk'] == 'pass' and verdicts(result)['driver_minimum'] == 'pass'


def test_a_gpu_whose_capability_nvidia_smi_does_not_give_is_not_the_required_one():
    # The RTX PRO 6000's plain table (no CSV query): no compute capability, a truncated name.
    gpu = gpu_view(table=read(PUBLIC, 'rtx-pro-6000-580.95.05.txt'))
    result = judge(observed(gpu=gpu), policy(compute_capability='12.0'))
    assert result['failed'] == ['compute_capability']
    assert 'are not compute capability 12.0: GPU 0 NVIDIA RTX PRO 6000 Blac... is unknown. This stack' in result['messages'][0]
    assert gate(result, 'compute_capability')['figures'] == {'required': '12.0', 'found': ['unknown'], 'wrong': 1}
    assert verdicts(result)['driver_minimum'] == 'pass'  # 580.95.05 is the minimum itself


def test_a_driver_below_the_minimum_names_the_declared_release():
    result = judge(observed(), policy(driver_minimum='590.44.01'))
    assert result['failed'] == ['driver_minimum']
    assert result['messages'][0].startswith(
        'PREFLIGHT driver: driver 580.159.04 is below 590.44.01, the minimum for cuda-toolkit-13-0=13.0.2-1 (CUDA 13.0; '
        'from driver_minimums 13.0.2-1). Fix: upgrade the driver on the LXC host')


@pytest.mark.parametrize('minimum, passes', [('580.95.05', True), ('580.159.04', True), ('580.159.05', False), ('580.65.06', True)])
def test_the_driver_minimum_compares_numerically(minimum, passes):
    # 580.159.04 against 580.65.06: 159 > 65, which a string comparison gets wrong.
    assert (judge(observed(), policy(driver_minimum=minimum))['passed']) is passes


def test_a_driver_of_an_older_cuda_fails_the_cuda_gate():
    gpu = gpu_view(table=read(PUBLIC, 'h100-pcie-535.129.03.txt'), nodes=['nvidia0', 'nvidiactl', 'nvidia-uvm'])
    result = judge(observed(gpu=gpu), policy(driver_minimum='535.0'))
    assert 'driver_cuda' in result['failed']
    message = gate(result, 'driver_cuda')['message']
    assert message.startswith('PREFLIGHT driver: driver 535.129.03 reports "CUDA Version: 12.2" in nvidia-smi, older than the CUDA 13.0')


def test_without_nvidia_smi_the_gpu_gates_are_not_checked_and_the_device_nodes_still_are():
    gpu = gpu_view(rc=9, error_text=read(PUBLIC, 'error-no-driver.txt'), nodes=['nvidiactl'])
    result = judge(observed(gpu=gpu), policy())
    assert result['failed'] == ['nvidia_smi', 'device_nodes']
    assert result['not_checked'] == ['driver_minimum', 'driver_cuda', 'gpu_count', 'compute_capability']
    assert result['messages'][0].startswith('PREFLIGHT nvidia-smi: no_driver: ')
    assert result['messages'][0].endswith("Fix: the host's kernel module is not loaded or the device nodes are not passed "
                                          "through; see the lxc_gpu_host role")
    assert result['messages'][1].startswith('PREFLIGHT device_nodes: missing or not character devices: /dev/nvidia-uvm.')
    assert gate(result, 'gpu_count')['reason'] == 'nvidia-smi did not answer'


def test_a_gpu_node_that_is_a_plain_file_is_missing_and_named():
    result = judge(observed(gpu=h200(nodes=['nvidiactl', 'nvidia-uvm'], files=['nvidia0'])), policy())
    assert result['messages'] == [
        'PREFLIGHT device_nodes: missing or not character devices: /dev/nvidia0 (present but not device nodes: /dev/nvidia0). '
        'Fix: bind-mount them into the container and allow their majors in the cgroup (lxc_gpu_host role).']


def test_disk_below_the_stack_and_its_reserve():
    result = judge(observed(disk='21000 /srv'), policy())
    assert result['messages'] == [
        'PREFLIGHT disk: 21000 MiB free on /srv (holding /opt/sglang); the new stack needs 20000 MiB plus a reserve of 2048 MiB. '
        'Fix: free space there (old stacks beyond the rollback window can be pruned) or move preflight_stack_root.']
    assert gate(result, 'disk')['figures'] == {'free_mb': 21000, 'need_mb': 22048, 'stack_mb': 20000, 'reserve_mb': 2048, 'mount': '/srv'}


def test_a_df_line_that_is_not_read_is_an_input_error():
    assert parse_df('123 /var\n') == (123, '/var')
    with pytest.raises(PreflightInputError):
        parse_df('df: /opt: No such file or directory')
    with pytest.raises(PreflightInputError, match='the free-space reading'):
        judge(observed(disk=''), policy())
    with pytest.raises(PreflightInputError, match="policy lacks 'cuda'"):
        judge(observed(), dict((k, v) for k, v in policy().items() if k != 'cuda'))


def test_python_missing_then_ensurepip_missing():
    missing = judge(observed(python={'rc': 2, 'stdout_lines': [], 'stderr_lines': [], 'msg': '[Errno 2] No such file or directory'}),
                    policy(python={'version': '3.12', 'tag': 'cp312'}))
    assert missing['failed'] == ['python_venv'] and 'python_ensurepip' in missing['not_checked']
    assert missing['messages'][0] == (
        'PREFLIGHT python: no python3.12 with the venv module on this host ([Errno 2] No such file or directory). The stack\'s '
        'wheels are cp312 builds. Fix: install python3.12 and python3.12-venv (Ubuntu 24.04 ships 3.12).')
    no_pip = judge(observed(python={'rc': 1, 'stdout_lines': ['3.11.2'],
                                    'stderr_lines': ['Traceback (most recent call last):', "ModuleNotFoundError: No module named 'ensurepip'"]}),
                   policy())
    assert no_pip['failed'] == ['python_ensurepip']
    assert no_pip['messages'][0].startswith(
        "PREFLIGHT python: python3.11 (3.11.2) imports venv but has no working ensurepip (ModuleNotFoundError: No module named 'ensurepip')")


@pytest.mark.parametrize('url, allowed, verdict', [
    ('http://mirror.example/key.gpg', False, 'fail'),
    ('HTTP://mirror.example/key.gpg', False, 'fail'),
    ('http://mirror.example/key.gpg', True, 'pass'),
    ('https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/3bf863cc.pub', False, 'pass'),
    ('', False, 'pass'),
])
def test_a_plain_http_key_url_needs_the_site_switch(url, allowed, verdict):
    result = judge(observed(), policy(cuda_key_url=url, insecure_http_allowed=allowed))
    assert verdicts(result)['transport'] == verdict
    if verdict == 'fail':
        assert result['messages'] == [
            'PREFLIGHT transport: cuda_toolkit_apt_key_url %s is plain HTTP: anyone on the path could hand over a key of their own. '
            'Fix: use https://, or, where the site accepts plain HTTP, set stack_declaration_allow_insecure_http: true with '
            'stack_declaration_insecure_http_reason. Nothing was changed.' % url]


def test_existing_cuda_sources_refused_unjudged_or_without_a_fingerprint():
    problem = ('/etc/apt/sources.list.d/cuda-debian12-x86_64.list line 1 sets trusted=yes for the CUDA repository: '
               'apt would take any package from it. Fix: remove the line.')
    refused = judge(observed(apt_sources={'decision': 'refuse', 'problems': [problem], 'reuse': None}), policy())
    assert refused['messages'] == ['PREFLIGHT apt_source: ' + problem]
    unjudged = judge(observed(apt_sources=None), policy())
    assert unjudged['passed'] and unjudged['not_checked'] == ['apt_source']
    no_key = judge(observed(), policy(cuda_key_fingerprint=''))
    assert no_key['messages'][0].startswith(
        'PREFLIGHT apt_source: no fingerprint is declared for the key of http://upstream-mirror:8080/nvidia/cuda/repos/debian12/x86_64/, '
        'so neither that key nor an existing source of it can be checked. Fix: declare it - stack_declaration_cuda.apt_signing_keys.debian12')
    reused = judge(observed(apt_sources={'decision': 'reuse', 'problems': [], 'reuse': {'file': '/etc/apt/sources.list.d/cuda.list'}}), policy())
    assert gate(reused, 'apt_source')['figures']['reuse_file'] == '/etc/apt/sources.list.d/cuda.list'


def test_upstreams_an_unresolved_host_and_an_apt_index_that_is_not_served():
    answers = [
        {'item': 'http://upstream-mirror.invalid:8080/nvidia/cuda/repos/debian12/x86_64/InRelease', 'status': -1,
         'msg': 'Status code was -1 and not [-1, 200]: Request failed: <urlopen error [Errno -2] Name or service not known>'},
        {'item': MIRROR + '/nvidia/cuda/repos/debian11/x86_64/InRelease', 'status': 404, 'msg': 'HTTP Error 404: File not found'},
        {'item': MIRROR + '/', 'status': 404, 'msg': 'HTTP Error 404: File not found'},
    ]
    result = judge(observed(upstreams=answers), policy())
    assert result['failed'] == ['upstream']
    message = result['messages'][0]
    assert message.startswith('PREFLIGHT upstream: not reachable from sglang-gpu-h200: '
                              'http://upstream-mirror.invalid:8080/nvidia/cuda/repos/debian12/x86_64/InRelease -> -1 -> Status code')
    assert '/nvidia/cuda/repos/debian11/x86_64/InRelease -> 404' in message
    assert MIRROR + '/ -> 404' not in message  # a package host only has to answer
    assert message.endswith('Nothing was changed.')
    assert judge(observed(upstreams=[]), policy())['not_checked'] == ['upstream']


def test_an_unsupported_os_and_everything_else_wrong_at_once():
    result = judge(observed(os='Debian-11', disk='10 /', gpu=h200(nodes=['nvidia-uvm'])),
                   policy(supported_os=['Ubuntu-24.04'], expected_gpu_count=8, compute_capability='12.0',
                          cuda_key_url='http://k/key.gpg', insecure_http_allowed=False))
    assert result['failed'] == ['os', 'gpu_count', 'compute_capability', 'device_nodes', 'disk', 'transport']
    assert result['messages'][0] == ('PREFLIGHT os: Debian-11 is not supported (supported: Ubuntu-24.04). '
                                     'Fix: run the stack on one of those releases.')
    assert result['msg'].startswith('PREFLIGHT: 6 of 13 gates failed on sglang-gpu-h200')
    assert len(result['lines']) == 13

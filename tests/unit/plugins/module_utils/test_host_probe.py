# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Tests of the container / device node / kernel module probes.

Where a sample is real, the comment names its source; the others are built from the documented
file formats (systemd's /run/systemd/container, NUL-separated /proc/<pid>/environ, /proc/devices)
and say so.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import stat

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import host_probe as hp

# Real: htop-dev/htop pull request #217 (a process inside LXC container "example", cgroup v1 + v2).
LXC_CGROUP_V1_V2 = """11:cpuset:/lxc.payload/example
10:devices:/lxc.payload/example/init.scope
9:net_cls,net_prio:/lxc.payload/example
8:blkio:/lxc.payload/example
7:perf_event:/lxc.payload/example
6:rdma:/lxc.payload/example
5:pids:/lxc.payload/example/init.scope
4:freezer:/lxc.payload/example
3:cpu,cpuacct:/lxc.payload/example
2:memory:/lxc.payload/example/init.scope
1:name=systemd:/lxc.payload/example/init.scope
0::/lxc.payload/example/init.scope
"""

# Real: hishamhm/htop issue #328 (LXD container "buster" on Ubuntu 20.04).
LXD_CGROUP = """12:freezer:/lxc.payload.buster
11:memory:/lxc.payload.buster/system.slice/networking.service
0::/lxc.payload.buster/system.slice/networking.service
"""

# Built from the format: Docker cgroup v1 and systemd cgroup driver, and a cgroup v2 namespace root.
DOCKER_CGROUP_V1 = '12:devices:/docker/3f1b2c0d9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c\n'
DOCKER_CGROUP_SYSTEMD = '0::/system.slice/docker-3f1b2c0d9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c.scope\n'
PODMAN_CGROUP = '0::/machine.slice/libpod-3f1b2c0d9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c.scope/container\n'
NSPAWN_CGROUP = '0::/machine.slice/machine-debian12.scope/payload\n'
CGROUP_V2_NAMESPACED = '0::/\n'
HOST_CGROUP = '0::/init.scope\n'

# Real first line from the GPU test host (reference/gpu-measurements.md, "Device facts").
OPEN_MODULE = 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04 ...\n'
# Real: NVIDIA/nvidia-docker issue #180 (the closed module, 2015).
PROPRIETARY_352 = ('NVRM version: NVIDIA UNIX x86_64 Kernel Module  352.63  Sat Nov  7 21:25:42 PST 2015\n'
                   'GCC version:  gcc version 4.8.4 (Ubuntu 4.8.4-2ubuntu1~14.04.3) \n')
# Real: dylanaraps/neofetch issue #876.
PROPRIETARY_384 = ('NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.98  Thu Oct 26 15:16:01 PDT 2017\n'
                   'GCC version:  gcc version 7.2.0 (Ubuntu 7.2.0-8ubuntu3) \n')


# --- container ---------------------------------------------------------------------------------

def test_lxc_from_run_systemd_container():
    result = hp.detect_container(run_systemd_container='lxc\n')
    assert result == {'is_container': True, 'kind': 'lxc', 'evidence': ['/run/systemd/container=lxc'], 'manager': 'lxc'}


def test_lxc_from_pid1_environ_bytes():
    environ = b'container=lxc\x00PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\x00TERM=linux\x00'
    result = hp.detect_container(proc1_environ=environ)
    assert result['kind'] == 'lxc'
    assert result['evidence'] == ['/proc/1/environ container=lxc']


def test_lxc_from_cgroup_v1_v2_real():
    assert hp.detect_container(proc1_cgroup=LXC_CGROUP_V1_V2)['kind'] == 'lxc'


def test_lxd_from_cgroup_real():
    assert hp.container_kind_from_cgroup(LXD_CGROUP) == 'lxc'


def test_lxc_cgroup_v1_classic_path():
    assert hp.container_kind_from_cgroup('4:devices:/lxc/101\n') == 'lxc'


def test_docker_from_dockerenv():
    result = hp.detect_container(dockerenv_exists=True, proc1_cgroup=CGROUP_V2_NAMESPACED)
    assert result['kind'] == 'docker'
    assert result['evidence'] == ['/.dockerenv exists']


@pytest.mark.parametrize('cgroup, kind', [
    (DOCKER_CGROUP_V1, 'docker'),
    (DOCKER_CGROUP_SYSTEMD, 'docker'),
    (PODMAN_CGROUP, 'podman'),
    (NSPAWN_CGROUP, 'systemd-nspawn'),
    (CGROUP_V2_NAMESPACED, None),
    (HOST_CGROUP, None),
    ('', None),
    (None, None),
])
def test_container_kind_from_cgroup(cgroup, kind):
    assert hp.container_kind_from_cgroup(cgroup) == kind


def test_podman_from_containerenv():
    result = hp.detect_container(containerenv_exists=True, run_systemd_container='podman')
    assert result['kind'] == 'podman'
    assert result['manager'] == 'podman'


def test_nspawn_from_run_systemd_container():
    assert hp.detect_container(run_systemd_container='systemd-nspawn')['kind'] == 'systemd-nspawn'


def test_unknown_manager_is_other():
    result = hp.detect_container(run_systemd_container='oci')
    assert result['is_container'] is True
    assert result['kind'] == 'other'
    assert result['manager'] == 'oci'


def test_no_container():
    result = hp.detect_container(proc1_environ=b'HOME=/\x00TERM=linux\x00', proc1_cgroup=HOST_CGROUP)
    assert result == {'is_container': False, 'kind': 'none', 'evidence': [], 'manager': None}


def test_strongest_evidence_wins_but_all_is_listed():
    # LXC guest that also has a /.dockerenv (an image built by Docker, run under LXC).
    result = hp.detect_container(run_systemd_container='lxc', dockerenv_exists=True, proc1_cgroup=LXC_CGROUP_V1_V2)
    assert result['kind'] == 'lxc'
    assert result['evidence'] == ['/run/systemd/container=lxc', '/.dockerenv exists', '/proc/1/cgroup names lxc']


def test_empty_run_systemd_container_is_ignored():
    assert hp.detect_container(run_systemd_container='\n')['kind'] == 'none'


def test_parse_environ():
    assert hp.parse_environ('container=lxc\0A=b=c\0junk\0') == {'container': 'lxc', 'A': 'b=c'}
    assert hp.parse_environ(None) == {}


def test_probe_container_reads_files(tmp_path):
    (tmp_path / 'run' / 'systemd').mkdir(parents=True)
    (tmp_path / 'run' / 'systemd' / 'container').write_text('lxc\n')
    (tmp_path / 'proc' / '1').mkdir(parents=True)
    (tmp_path / 'proc' / '1' / 'environ').write_bytes(b'container=lxc\x00')
    (tmp_path / 'proc' / '1' / 'cgroup').write_text(CGROUP_V2_NAMESPACED)
    result = hp.probe_container(str(tmp_path))
    assert result['kind'] == 'lxc'
    assert result['evidence'] == ['/run/systemd/container=lxc', '/proc/1/environ container=lxc']


def test_probe_container_empty_root(tmp_path):
    assert hp.probe_container(str(tmp_path))['kind'] == 'none'


def test_probe_container_dockerenv(tmp_path):
    (tmp_path / '.dockerenv').write_text('')
    assert hp.probe_container(str(tmp_path))['kind'] == 'docker'


# --- /proc/devices ------------------------------------------------------------------------------

def test_parse_proc_devices():
    # Built from the format; majors as on the GPU test host (nvidia 195, nvidia-uvm 238, nvidia-caps 241).
    content = ('Character devices:\n  1 mem\n195 nvidia-frontend\n195 nvidia\n238 nvidia-uvm\n241 nvidia-caps\n\n'
               'Block devices:\n  7 loop\n259 blkext\n')
    devices = hp.parse_proc_devices(content)
    assert devices['character']['nvidia'] == 195
    assert devices['character']['nvidia-uvm'] == 238
    assert devices['character']['nvidia-caps'] == 241
    assert devices['block'] == {'loop': 7, 'blkext': 259}


def test_iter_proc_devices_sections_and_order():
    # Every line in file order, duplicates kept; nothing before a section header, no blank or odd lines.
    content = ('  9 before-any-header\nCharacter devices:\n  1 mem\n195 nvidia\n195 nvidiactl\nnot-a-major x\n\n'
               'Block devices:\n  7 loop\n253 zram\n')
    assert list(hp.iter_proc_devices(content)) == [
        ('character', 1, 'mem'), ('character', 195, 'nvidia'), ('character', 195, 'nvidiactl'),
        ('block', 7, 'loop'), ('block', 253, 'zram')]
    assert list(hp.iter_proc_devices(None)) == []
    assert list(hp.iter_proc_devices('')) == []


# --- device nodes -------------------------------------------------------------------------------

def _char(path, major, minor):
    return hp.describe_device_node(path, stat.S_IFCHR | 0o666, os.makedev(major, minor))


def test_describe_char_node():
    assert _char('/dev/nvidiactl', 195, 255) == {
        'path': '/dev/nvidiactl', 'name': 'nvidiactl', 'type': 'char', 'major': 195, 'minor': 255, 'is_symlink': False}


def test_describe_placeholder_file():
    node = hp.describe_device_node('/dev/nvidia0', stat.S_IFREG | 0o644)
    assert node['type'] == 'file'
    assert node['major'] is None and node['minor'] is None


def test_summary_of_the_gpu_test_host_layout():
    # The node set described in reference/gpu-measurements.md for the 2x H200 host.
    nodes = [
        _char('/dev/nvidia0', 195, 0), _char('/dev/nvidia1', 195, 1), _char('/dev/nvidiactl', 195, 255),
        _char('/dev/nvidia-uvm', 238, 0), _char('/dev/nvidia-uvm-tools', 238, 1),
        hp.describe_device_node('/dev/nvidia-caps', stat.S_IFDIR | 0o755),
        _char('/dev/nvidia-caps/nvidia-cap1', 241, 1), _char('/dev/nvidia-caps/nvidia-cap2', 241, 2),
    ]
    summary = hp.summarize_device_nodes(nodes)
    assert summary['gpu_indices'] == [0, 1]
    assert summary['control'] == {'nvidiactl': True, 'nvidia-uvm': True, 'nvidia-uvm-tools': True, 'nvidia-modeset': False}
    assert summary['caps'] == ['nvidia-cap1', 'nvidia-cap2']
    assert summary['not_char_device'] == []
    assert summary['majors'] == {'nvidia': 195, 'nvidiactl': 195, 'nvidia-uvm': 238, 'nvidia-uvm-tools': 238, 'nvidia-caps': 241}


def test_summary_flags_lxc_placeholder_files():
    nodes = [hp.describe_device_node('/dev/nvidia0', stat.S_IFREG | 0o644), _char('/dev/nvidiactl', 195, 255)]
    summary = hp.summarize_device_nodes(nodes)
    assert summary['gpu_indices'] == []
    assert summary['not_char_device'] == ['/dev/nvidia0']


def test_scan_device_nodes(tmp_path):
    dev = tmp_path / 'dev'
    (dev / 'nvidia-caps').mkdir(parents=True)
    (dev / 'nvidia0').write_text('')          # what an LXC create=file mount leaves without a host node
    (dev / 'null').write_text('')              # not an nvidia entry
    (dev / 'nvidia-caps' / 'nvidia-cap1').write_text('')
    os.symlink('nvidia0', str(dev / 'nvidia1'))
    try:
        os.mknod(str(dev / 'nvidiactl'), stat.S_IFCHR | 0o600, os.makedev(195, 255))
        have_char = True
    except (OSError, AttributeError):
        have_char = False
    nodes = hp.scan_device_nodes(str(dev))
    by_name = dict((node['name'], node) for node in nodes)
    assert 'null' not in by_name
    assert by_name['nvidia0']['type'] == 'file'
    assert by_name['nvidia1']['is_symlink'] is True
    assert by_name['nvidia-caps']['type'] == 'directory'
    assert by_name['nvidia-cap1']['path'] == str(dev / 'nvidia-caps' / 'nvidia-cap1')
    assert [node['path'] for node in nodes] == sorted(node['path'] for node in nodes)
    if have_char:
        assert (by_name['nvidiactl']['type'], by_name['nvidiactl']['major'], by_name['nvidiactl']['minor']) == ('char', 195, 255)


def test_scan_device_nodes_missing_dir(tmp_path):
    assert hp.scan_device_nodes(str(tmp_path / 'nope')) == []


# --- kernel module ------------------------------------------------------------------------------

def test_open_kernel_module_real():
    module = hp.parse_driver_version_file(OPEN_MODULE)
    assert module['present'] is True
    assert module['version'] == '580.159.04'
    assert module['flavour'] == 'open'
    assert module['arch'] == 'x86_64'
    assert module['raw'] == 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04 ...'


@pytest.mark.parametrize('content, version, gcc', [
    (PROPRIETARY_352, '352.63', 'gcc version 4.8.4 (Ubuntu 4.8.4-2ubuntu1~14.04.3)'),
    (PROPRIETARY_384, '384.98', 'gcc version 7.2.0 (Ubuntu 7.2.0-8ubuntu3)'),
])
def test_proprietary_kernel_module_real(content, version, gcc):
    module = hp.parse_driver_version_file(content)
    assert module['version'] == version
    assert module['flavour'] == 'proprietary'
    assert module['arch'] == 'x86_64'
    assert module['gcc'] == gcc


def test_kernel_module_absent():
    assert hp.parse_driver_version_file(None) == {'present': False, 'version': None, 'flavour': None, 'arch': None, 'gcc': None, 'raw': None,
                                                  'problem': None}


def test_kernel_module_unrecognised_text():
    module = hp.parse_driver_version_file('something else\n')
    assert module['present'] is True
    assert module['version'] is None
    assert module['raw'] == 'something else'


def test_probe_kernel_module(tmp_path):
    (tmp_path / 'driver' / 'nvidia').mkdir(parents=True)
    (tmp_path / 'driver' / 'nvidia' / 'version').write_text(OPEN_MODULE)
    assert hp.probe_kernel_module(str(tmp_path))['version'] == '580.159.04'
    assert hp.probe_kernel_module(str(tmp_path / 'none'))['present'] is False


def test_read_text_missing(tmp_path):
    assert hp.read_text(str(tmp_path / 'missing')) is None


# --- The real GPU test host (fixtures/real/h200-nvidia-smi-cli/probe.txt) -------------------------

REAL_PROBE = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'real', 'h200-nvidia-smi-cli', 'probe.txt')


def probe_section(name):
    with open(REAL_PROBE) as handle:
        text = handle.read()
    return text.split('== %s\n' % name, 1)[1].split('\n== ', 1)[0] + '\n'


def test_real_proc_driver_version():
    module = hp.parse_driver_version_file(probe_section('proc version'))
    assert module == {
        'present': True, 'version': '580.159.04', 'flavour': 'open', 'arch': 'x86_64', 'gcc': 'gcc version 15.3.0 (GCC)',
        'raw': 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)', 'problem': None,
    }


def test_real_device_nodes_from_ls():
    # Rebuild the stat data of each node from the recorded `ls -l` lines (crw-... root root MAJOR, MINOR ... NAME).
    nodes = []
    directory = '/dev'
    for line in probe_section('dev').splitlines():
        if line.endswith(':'):
            directory = line[:-1]
            continue
        parts = line.split()
        if not parts or not parts[0].startswith('c'):
            continue
        major, minor, name = int(parts[4].rstrip(',')), int(parts[5]), parts[-1]
        path = name if name.startswith('/') else directory + '/' + name
        if path not in [node['path'] for node in nodes]:
            nodes.append(_char(path, major, minor))
    summary = hp.summarize_device_nodes(nodes)
    assert summary['gpu_indices'] == [0]
    assert summary['control'] == {'nvidiactl': True, 'nvidia-uvm': True, 'nvidia-uvm-tools': True, 'nvidia-modeset': False}
    assert summary['caps'] == ['nvidia-cap1', 'nvidia-cap2']
    assert summary['majors'] == {'nvidia': 195, 'nvidiactl': 195, 'nvidia-uvm': 238, 'nvidia-uvm-tools': 238, 'nvidia-caps': 241}


def test_real_proc_devices_lines():
    # The recording kept only the NVIDIA lines (grep); they belong to the "Character devices:" section.
    devices = hp.parse_proc_devices('Character devices:\n' + probe_section('proc devices'))['character']
    assert (devices['nvidia'], devices['nvidiactl'], devices['nvidia-uvm'], devices['nvidia-caps']) == (195, 195, 238, 241)


def test_real_container_evidence_of_the_gpu_test_host():
    result = hp.detect_container(run_systemd_container=probe_section('run systemd container'),
                                 proc1_cgroup=probe_section('proc1 cgroup'), dockerenv_exists=True)
    assert result['kind'] == 'docker'
    assert hp.container_kind_from_cgroup(probe_section('proc1 cgroup')) is None


# --- Hostile input: bounded size, answers of the former pattern, names that are not UTF-8 (issue 18) -----------
#
# Before the rewrite, parse_driver_version_file took 1.6 s on a GCC line of 20,000 blanks and about 40 s on one of
# 100,000 (the lazy ^GCC version:\s*(.+?)\s*$ rescanned the blanks from every position); a /proc/devices major of
# 5,000 digits or '²' raised ValueError from int(). The hostile inputs are built for a length n (the tests use
# N); their time, against the former pattern's, is measured by tests/benchmark/parser_bench.py, not asserted here.

N = 100000
OLD_GCC = re.compile(r'^GCC version:\s*(?P<gcc>.+?)\s*$', re.MULTILINE)
LONG_GCC_CONTENTS = {
    'blanks_in_the_version': lambda n: 'NVRM version: x\nGCC version: a' + ' ' * n + 'b\n',
    'trailing_blanks': lambda n: 'GCC version:' + ' ' * n,
    'newlines': lambda n: 'GCC version:' + '\n' * n + 'gcc version 13.3.0',
}
LONG_VERSION_FILE_TAILS = {
    'blanks': lambda n: ' ' * n + 'x',
    'for': lambda n: ' for ' * (n // 5),
    'nvrm_prefix': lambda n: 'NVRM version: NVIDIA UNIX ' * (n // 26),
    'dotted': lambda n: '1.' * (n // 2),
}
LONG_NVRM_LINES = {
    'blanks': lambda n: 'NVRM version: NVIDIA UNIX Open Kernel Module' + ' ' * n + 'x',
    'one_word': lambda n: 'NVRM version: NVIDIA UNIX ' + 'a' * n,
    'repeated': lambda n: 'NVRM version: NVIDIA UNIX Kernel Module ' * (n // 40),
    'dotted_version': lambda n: 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  ' + '1.' * n,
}
LONG_CGROUPS = {
    'machine': lambda n: '0::/machine.slice/machine-' + 'a' * n,
    'docker_unterminated': lambda n: '0::/docker-' + 'a' * n,
    'docker_scope': lambda n: '0::/docker-' + 'a' * n + '.scope',
    'lxc_repeated': lambda n: '0::/' + 'lxc' * n,
    'lxc_payload': lambda n: '0::/' + 'lxc.payload.' + 'x' * n,
}


def version_file_with_tail(tail, limit=None):
    """The recorded /proc/driver/nvidia/version with tail after its first line (cut to limit characters)."""
    first, rest = probe_section('proc version').split('\n', 1)
    return first + tail[:limit] + '\n' + rest


def proc_devices_with_long_lines(n):
    return 'Character devices:\n' + '1' * n + ' ' * n + 'x\n' + ' ' * n + '\n195 nvidia\n'


def test_gcc_version_answers_as_the_former_pattern():
    for length in range(6):
        for combination in itertools.product(['GCC version:', ' ', '\n', 'a', '\t', 'x GCC version:'], repeat=length):
            content = ''.join(combination)
            old = OLD_GCC.search(content)
            # Where only blanks follow, the former pattern answered with one blank: None now.
            assert hp._gcc_version(content) == ((old and old.group('gcc').strip()) or None), repr(content)


@pytest.mark.parametrize('name', ['blanks_in_the_version', 'trailing_blanks', 'newlines'])
def test_gcc_version_long_line_is_linear(name):
    content = LONG_GCC_CONTENTS[name](N)
    old_answer = content.split('GCC version:', 1)[1].strip()
    assert hp._gcc_version(content) == (old_answer or None)


@pytest.mark.parametrize('name', ['blanks', 'for', 'nvrm_prefix', 'dotted'])
def test_driver_version_file_hostile_lines_are_linear_and_capped(name):
    tail = LONG_VERSION_FILE_TAILS[name](N)
    first = probe_section('proc version').split('\n', 1)[0]
    module = hp.parse_driver_version_file(version_file_with_tail(tail))
    assert module['version'] is None and module['present'] is True
    assert 'MAX_VERSION_FILE_CHARS' in module['problem']
    assert module['raw'] == (first + tail).strip()[:200]
    # The same lines under the cap are searched.
    module = hp.parse_driver_version_file(version_file_with_tail(tail, hp.MAX_VERSION_FILE_CHARS - 1000))
    assert module['problem'] is None
    assert module['gcc'] == 'gcc version 15.3.0 (GCC)'


@pytest.mark.parametrize('name', ['blanks', 'one_word', 'repeated', 'dotted_version'])
def test_nvrm_pattern_on_long_lines_is_linear(name):
    match = hp._NVRM.search(LONG_NVRM_LINES[name](N))
    if name == 'dotted_version':  # the version runs on to its last digit
        assert (match.group('open'), match.group('arch1'), match.group('version')) == (None, 'x86_64', '.'.join(['1'] * N))
    else:
        assert match is None


def test_read_text_reads_one_byte_past_its_limit(tmp_path):
    path = tmp_path / 'version'
    path.write_bytes(b'x' * 100)
    assert len(hp.read_text(str(path), limit=10)) == 11
    assert len(hp.read_text(str(path), limit=100)) == 100


@pytest.mark.parametrize('major', ['1' * 5000, '\u00b2', '\u0663', '1' * 10])
def test_proc_devices_odd_majors_are_skipped_not_raised(major):
    content = 'Character devices:\n%s nvidia\n195 nvidiactl\n' % major
    devices = hp.parse_proc_devices(content)
    assert devices['character'] == {'nvidiactl': 195}


def test_proc_devices_long_lines_are_linear():
    devices = hp.parse_proc_devices(proc_devices_with_long_lines(N))
    assert devices['character'] == {'nvidia': 195}


@pytest.mark.parametrize('name, kind', [
    ('machine', None),
    ('docker_unterminated', None),
    ('docker_scope', 'docker'),
    ('lxc_repeated', None),
    ('lxc_payload', 'lxc'),
])
def test_cgroup_long_paths_are_linear(name, kind):
    assert hp.container_kind_from_cgroup(LONG_CGROUPS[name](N)) == kind


def test_driver_version_file_that_is_not_utf8(tmp_path):
    path = tmp_path / 'version'
    real = probe_section('proc version')
    path.write_bytes(real.encode('utf-8').replace(b'Release Build', b'Release Build \xff\xfe'))
    module = hp.parse_driver_version_file(hp.read_text(str(path)))
    assert module['version'] == '580.159.04'
    assert '\ufffd' in module['raw']
    module = hp.parse_driver_version_file(real.replace('Release Build', 'Release Build \udcff'))
    assert module['version'] == '580.159.04' and '\udcff' not in module['raw']


def test_scan_device_nodes_with_names_that_are_not_utf8(tmp_path):
    dev = tmp_path / 'dev'
    dev.mkdir()
    (dev / 'nvidia0').write_text('')
    with open(os.path.join(os.fsencode(str(dev)), b'nvidia\xff'), 'wb'):
        pass
    nodes = hp.scan_device_nodes(str(dev))
    assert [node['name'] for node in nodes] == ['nvidia0', 'nvidia\ufffd']
    json.dumps(nodes, ensure_ascii=False).encode('utf-8')
    assert hp.summarize_device_nodes(nodes)['not_char_device'] == [str(dev / 'nvidia0'), str(dev) + '/nvidia\ufffd']

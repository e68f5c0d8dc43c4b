# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The LXC host side of GPU passthrough, against the GPU test machine's recorded /proc and library
listings (fixtures/lxc/h200-host-probe.txt, real) and a constructed Proxmox config (fixtures/lxc/pve-101.conf)."""

from __future__ import annotations

import itertools
import json
import os
import re

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import host_probe
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import lxc_gpu
from ansible_collections.gpuops.sglang_stack.tests.unit.recorded import FIXTURES, PUBLIC, read

LXC = os.path.join(FIXTURES, 'lxc')
MARKERS = ('# BEGIN gpuops.sglang_stack lxc_gpu_host', '# END gpuops.sglang_stack lxc_gpu_host')


def probe_section(name):
    text = read(LXC, 'h200-host-probe.txt')
    return text.split('== %s\n' % name, 1)[1].split('\n== ', 1)[0] + '\n'


PROC_DEVICES = probe_section('proc devices')
PROC_VERSION = probe_section('proc version')


def without_line(text, needle):
    return ''.join(line for line in text.splitlines(True) if needle not in line)


# --- majors ---------------------------------------------------------------------------------------

def test_majors_from_the_real_proc_devices():
    assert lxc_gpu.nvidia_majors(PROC_DEVICES) == {'nvidia': 195, 'nvidia-uvm': 238, 'nvidia-caps': 241}


def test_majors_follow_the_file_not_a_table():
    # The same host after another boot order: the dynamic majors move, the lines are the real ones renumbered.
    moved = PROC_DEVICES.replace('238 nvidia-uvm', '511 nvidia-uvm').replace('241 nvidia-caps\n', '509 nvidia-caps\n')
    assert lxc_gpu.nvidia_majors(moved) == {'nvidia': 195, 'nvidia-uvm': 511, 'nvidia-caps': 509}


def test_majors_without_uvm_and_without_file():
    assert lxc_gpu.nvidia_majors(without_line(PROC_DEVICES, 'nvidia-uvm'))['nvidia-uvm'] is None
    assert lxc_gpu.nvidia_majors(None) == {'nvidia': None, 'nvidia-uvm': None, 'nvidia-caps': None}


def test_character_majors_real():
    majors = lxc_gpu.character_majors(PROC_DEVICES)
    assert majors[195] == ['nvidia', 'nvidiactl']
    assert majors[242] == ['nvidia-caps-imex-channels']
    # Block device majors are not character majors (253 is zram below "Block devices:", dimmctl above).
    assert majors[253] == ['dimmctl']
    assert 259 not in majors


# --- device nodes ---------------------------------------------------------------------------------

def real_dev_names():
    names = []
    for line in probe_section('dev').splitlines():
        parts = line.split()
        if parts and parts[0].startswith('c') and parts[-1].startswith('/dev/'):
            names.append(parts[-1][len('/dev/'):])
    return names


def test_mount_nodes_of_the_real_host():
    assert real_dev_names() == ['nvidia0', 'nvidiactl', 'nvidia-uvm', 'nvidia-uvm-tools']
    nodes = lxc_gpu.mount_nodes(real_dev_names(), caps_dir_present=True)
    assert [node['name'] for node in nodes] == ['nvidia0', 'nvidiactl', 'nvidia-uvm', 'nvidia-uvm-tools', 'nvidia-caps']
    assert nodes[-1]['kind'] == 'dir'


def test_mount_nodes_eight_gpus_numeric_order_and_modeset():
    names = ['nvidia%d' % index for index in (10, 1, 0, 7, 2, 3, 4, 5, 6, 8, 9)] + ['nvidia-modeset', 'nvidiactl', 'nvidia-caps-x']
    nodes = [node['name'] for node in lxc_gpu.mount_nodes(names)]
    assert nodes == ['nvidia%d' % index for index in range(11)] + ['nvidiactl', 'nvidia-modeset']


# --- rendering ------------------------------------------------------------------------------------

def test_render_lxc_flavour_real_majors():
    majors = lxc_gpu.nvidia_majors(PROC_DEVICES)
    lines = lxc_gpu.render_block('lxc', majors, lxc_gpu.mount_nodes(real_dev_names(), True))
    assert lines == [
        'lxc.cgroup2.devices.allow = c 195:* rwm',
        'lxc.cgroup2.devices.allow = c 238:* rwm',
        'lxc.cgroup2.devices.allow = c 241:* rwm',
        'lxc.mount.entry = /dev/nvidia0 dev/nvidia0 none bind,optional,create=file',
        'lxc.mount.entry = /dev/nvidiactl dev/nvidiactl none bind,optional,create=file',
        'lxc.mount.entry = /dev/nvidia-uvm dev/nvidia-uvm none bind,optional,create=file',
        'lxc.mount.entry = /dev/nvidia-uvm-tools dev/nvidia-uvm-tools none bind,optional,create=file',
        'lxc.mount.entry = /dev/nvidia-caps dev/nvidia-caps none bind,optional,create=dir',
    ]


def test_render_proxmox_flavour_uses_colons_and_no_caps_rule_without_caps():
    majors = {'nvidia': 195, 'nvidia-uvm': 511, 'nvidia-caps': None}
    lines = lxc_gpu.render_block('proxmox', majors, lxc_gpu.mount_nodes(['nvidia0', 'nvidiactl']))
    assert lines == [
        'lxc.cgroup2.devices.allow: c 195:* rwm',
        'lxc.cgroup2.devices.allow: c 511:* rwm',
        'lxc.mount.entry: /dev/nvidia0 dev/nvidia0 none bind,optional,create=file',
        'lxc.mount.entry: /dev/nvidiactl dev/nvidiactl none bind,optional,create=file',
    ]


def test_render_refuses_without_uvm_major_and_unknown_flavour():
    with pytest.raises(lxc_gpu.LxcGpuError, match='nvidia-uvm major is unknown'):
        lxc_gpu.render_block('lxc', {'nvidia': 195, 'nvidia-uvm': None}, [])
    with pytest.raises(lxc_gpu.LxcGpuError, match='unknown config flavour'):
        lxc_gpu.render_block('lxd', {'nvidia': 195, 'nvidia-uvm': 238}, [])


def test_config_paths():
    assert lxc_gpu.config_path('lxc', 'gpu-ct-01') == '/var/lib/lxc/gpu-ct-01/config'
    assert lxc_gpu.config_path('proxmox', '101') == '/etc/pve/lxc/101.conf'
    assert lxc_gpu.config_path('proxmox', 'x', '/tmp/x.conf') == '/tmp/x.conf'
    with pytest.raises(lxc_gpu.LxcGpuError, match='numeric VMID'):
        lxc_gpu.config_path('proxmox', 'gpu-ct-01')


# --- existing configuration -----------------------------------------------------------------------

def test_analyse_hand_written_proxmox_config():
    text = read(LXC, 'pve-101.conf')
    majors = lxc_gpu.nvidia_majors(PROC_DEVICES)
    wanted = lxc_gpu.render_block('proxmox', majors, lxc_gpu.mount_nodes(real_dev_names(), True))
    result = lxc_gpu.analyse_config(text, MARKERS[0], MARKERS[1], wanted, majors, 'proxmox', lxc_gpu.character_majors(PROC_DEVICES))
    assert result['exists'] and not result['block_present'] and not result['block_current']
    kinds = [(entry['kind'], entry['line']) for entry in result['foreign_entries']]
    # The main section's five GPU lines; the snapshot section's copies are not applied and not reported.
    assert kinds == [
        ('duplicate', 'lxc.cgroup2.devices.allow: c 195:* rwm'),
        ('stale', 'lxc.cgroup2.devices.allow: c 511:* rwm'),
        ('duplicate', 'lxc.mount.entry: /dev/nvidia0 dev/nvidia0 none bind,optional,create=file'),
        ('duplicate', 'lxc.mount.entry: /dev/nvidiactl dev/nvidiactl none bind,optional,create=file'),
        ('duplicate', 'lxc.mount.entry: /dev/nvidia-uvm dev/nvidia-uvm none bind,optional,create=file'),
    ]
    assert 'no loaded driver uses' in result['foreign_entries'][1]['reason']


def test_analyse_current_block_and_block_below_a_snapshot():
    majors = {'nvidia': 195, 'nvidia-uvm': 238, 'nvidia-caps': None}
    wanted = lxc_gpu.render_block('proxmox', majors, lxc_gpu.mount_nodes(['nvidia0']))
    block = [MARKERS[0]] + wanted + [MARKERS[1]]
    good = '\n'.join(['arch: amd64'] + block + ['', '[snap]', 'arch: amd64']) + '\n'
    result = lxc_gpu.analyse_config(good, MARKERS[0], MARKERS[1], wanted, majors, 'proxmox')
    assert result['block_current'] and not result['block_outside_main_section'] and result['foreign_entries'] == []
    bad = '\n'.join(['arch: amd64', '', '[snap]', 'arch: amd64'] + block) + '\n'
    assert lxc_gpu.analyse_config(bad, MARKERS[0], MARKERS[1], wanted, majors, 'proxmox')['block_outside_main_section']
    # An outdated block (the uvm major moved) is present but not current.
    moved = lxc_gpu.render_block('proxmox', dict(majors, **{'nvidia-uvm': 509}), lxc_gpu.mount_nodes(['nvidia0']))
    result = lxc_gpu.analyse_config(good, MARKERS[0], MARKERS[1], moved, majors, 'proxmox')
    assert result['block_present'] and not result['block_current']


def test_analyse_missing_config_and_other_lines():
    result = lxc_gpu.analyse_config(None, MARKERS[0], MARKERS[1], [], {'nvidia': 195}, 'lxc')
    assert result == {'exists': False, 'block_present': False, 'block_current': False, 'foreign_entries': [],
                      'block_outside_main_section': False}
    majors = lxc_gpu.nvidia_majors(PROC_DEVICES)
    known = lxc_gpu.character_majors(PROC_DEVICES)
    for line in ('lxc.cgroup2.devices.allow = c 10:200 rwm', '# lxc.mount.entry = /dev/nvidia0 dev/nvidia0 none bind',
                 'lxc.mount.entry = /dev/net/tun dev/net/tun none bind,create=file', 'lxc.cgroup2.devices.allow = a',
                 'lxc.cgroup2.devices.allow = b 7:* rwm'):
        assert lxc_gpu.classify_config_line(line, majors, known) is None, line
    entry = lxc_gpu.classify_config_line('dev0: /dev/nvidia0,gid=44', majors, known)
    assert entry['kind'] == 'duplicate'


# --- driver versions ------------------------------------------------------------------------------

def test_kernel_module_line_real_open_module():
    driver = host_probe.parse_driver_version_file(PROC_VERSION)
    assert (driver['version'], driver['flavour']) == ('580.159.04', 'open')


def real_nvml_listing():
    """The recorded `ls -l` lines of libnvidia-ml.so* -> the listing scan_rootfs would give (links resolved)."""
    entries = {}
    order = []
    for line in probe_section('libnvidia-ml').splitlines():
        parts = line.split()
        path = parts[8]
        directory, name = path.rsplit('/', 1)
        target = parts[10] if parts[0].startswith('l') else None
        entries[path] = (directory, name, target)
        order.append(path)

    def final(path, hops=10):
        while hops and entries.get(path, (None, None, None))[2]:
            target = entries[path][2]
            path = target if target.startswith('/') else entries[path][0] + '/' + target
            hops -= 1
        return os.path.basename(path) if path in entries else None

    listing = []
    for path in order:
        directory, name, target = entries[path]
        listing.append({'dir': directory, 'name': name, 'type': 'link' if target else 'file', 'target': final(path) if target else None})
    return listing


def test_userspace_driver_real_listing():
    listing = real_nvml_listing()
    assert [entry['name'] for entry in listing if entry['type'] == 'file'] == ['libnvidia-ml.so.580.159.04'] * 2
    found = lxc_gpu.userspace_driver(listing)
    assert found['version'] == '580.159.04'
    assert found['problem'] is None
    # /usr/lib comes first in the recorded listing; its .so.1 is an absolute link resolved to the versioned file.
    assert found['source'] == '/usr/lib/libnvidia-ml.so.1 -> libnvidia-ml.so.580.159.04'
    assert lxc_gpu.container_driver_problem('gpu-ct-01', '580.159.04', dict(found, rootfs='/r'), 'rootfs') is None


def test_userspace_driver_so1_wins_over_leftovers():
    listing = [
        {'dir': '/usr/lib/x86_64-linux-gnu', 'name': 'libnvidia-ml.so.1', 'type': 'link', 'target': 'libnvidia-ml.so.570.133.07'},
        {'dir': '/usr/lib/x86_64-linux-gnu', 'name': 'libnvidia-ml.so.570.133.07', 'type': 'file', 'target': None},
        {'dir': '/usr/lib/x86_64-linux-gnu', 'name': 'libnvidia-ml.so.580.159.04', 'type': 'file', 'target': None},
    ]
    found = lxc_gpu.userspace_driver(listing)
    assert found['version'] == '570.133.07'
    assert found['versions_found'] == ['570.133.07', '580.159.04']
    problem = lxc_gpu.container_driver_problem('gpu-ct-01', '580.159.04', dict(found, rootfs='/r'), 'rootfs')
    assert problem['code'] == 'driver_mismatch'
    assert 'Failed to initialize NVML: Driver/library version mismatch' in problem['msg']
    assert 'user-space driver in the container is 570.133.07' in problem['msg']
    assert 'host kernel module is 580.159.04' in problem['msg']
    assert 'NVIDIA-Linux-x86_64-580.159.04.run --no-kernel-module' in problem['msg']


def test_userspace_driver_without_so1():
    one = [{'dir': '/usr/lib64', 'name': 'libnvidia-ml.so.580.159.04', 'type': 'file', 'target': None}]
    assert lxc_gpu.userspace_driver(one)['version'] == '580.159.04'
    two = one + [{'dir': '/usr/lib64', 'name': 'libnvidia-ml.so.575.57.08', 'type': 'file', 'target': None}]
    found = lxc_gpu.userspace_driver(two)
    assert found['problem'] == 'ambiguous' and found['version'] is None
    assert lxc_gpu.container_driver_problem('c', '580.159.04', dict(found, rootfs='/r'), 'rootfs')['code'] == 'ambiguous_userspace_driver'
    none = lxc_gpu.userspace_driver([])
    assert none['problem'] == 'not_found'
    problem = lxc_gpu.container_driver_problem('c', '580.159.04', dict(none, rootfs='/var/lib/lxc/c/rootfs'), 'rootfs')
    assert problem['code'] == 'no_userspace_driver' and '/var/lib/lxc/c/rootfs' in problem['msg']
    dangling = lxc_gpu.userspace_driver([{'dir': '/usr/lib', 'name': 'libnvidia-ml.so.1', 'type': 'link', 'target': None}])
    assert dangling['problem'] == 'dangling'


def test_nvml_version_from_name():
    assert lxc_gpu.nvml_version_from_name('/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04') == '580.159.04'
    assert lxc_gpu.nvml_version_from_name('libnvidia-ml.so.1') is None
    assert lxc_gpu.nvml_version_from_name('libnvidia-ml.so') is None
    assert lxc_gpu.nvml_version_from_name('libnvidia-ml.so.535.161') == '535.161'


def test_driver_from_smi_real_query():
    # The query's recorded output ends with its rc line; the command's own stdout is the line above it.
    stdout = probe_section('query driver').split('rc=')[0]
    assert lxc_gpu.driver_from_smi(0, stdout)['version'] == '580.159.04'


def test_driver_from_smi_public_mismatch():
    # Public sample (anderskm/gputil issue #55): the text of a real mismatch, exit status 18.
    text = read(PUBLIC, 'error-driver-mismatch.txt')
    result = lxc_gpu.driver_from_smi(18, text)
    assert result['error_kind'] == 'driver_mismatch'
    assert result['nvml_library_version'] == '535.161'
    problem = lxc_gpu.container_driver_problem('101', '580.159.04', result, 'exec')
    assert problem['code'] == 'driver_mismatch'
    assert 'container is 535.161' in problem['msg']


def test_driver_from_smi_other_failures():
    assert lxc_gpu.driver_from_smi(0, '580.159.04\n575.57.08\n')['error_kind'] == 'unexpected_output'
    failed = lxc_gpu.driver_from_smi(1, '', 'lxc-attach: gpu-ct-01: attach.c: get_attach_context: Connection refused')
    assert failed['error_kind'] == 'unknown'
    assert lxc_gpu.container_driver_problem('gpu-ct-01', '580.159.04', failed, 'exec')['code'] == 'exec_failed'
    # Eight GPUs, one driver: repeated lines are one version.
    assert lxc_gpu.driver_from_smi(0, '580.159.04\n' * 8)['version'] == '580.159.04'
    other = lxc_gpu.driver_from_smi(0, '575.57.08\n')
    assert lxc_gpu.container_driver_problem('gpu-ct-01', '580.159.04', other, 'exec')['code'] == 'driver_mismatch'


# --- host refusals --------------------------------------------------------------------------------

def test_host_problems_real_host_passes():
    driver = host_probe.parse_driver_version_file(PROC_VERSION)
    assert lxc_gpu.host_problems(driver, lxc_gpu.nvidia_majors(PROC_DEVICES), '/proc/driver/nvidia/version', '/proc/devices') == []


def test_host_problems_no_module_and_no_uvm():
    driver = host_probe.parse_driver_version_file(None)
    majors = lxc_gpu.nvidia_majors(without_line(without_line(PROC_DEVICES, 'nvidia-uvm'), ' nvidia\n'))
    codes = [problem['code'] for problem in lxc_gpu.host_problems(driver, majors, '/proc/driver/nvidia/version', '/proc/devices')]
    assert codes == ['no_kernel_module', 'no_nvidia_major', 'no_uvm']
    driver = host_probe.parse_driver_version_file(PROC_VERSION)
    majors = lxc_gpu.nvidia_majors(without_line(PROC_DEVICES, 'nvidia-uvm'))
    problems = lxc_gpu.host_problems(driver, majors, '/proc/driver/nvidia/version', '/proc/devices')
    assert [problem['code'] for problem in problems] == ['no_uvm']
    assert 'modprobe nvidia-uvm' in problems[0]['msg']


def test_host_problems_unreadable_version_line():
    driver = host_probe.parse_driver_version_file('garbage\n')
    problems = lxc_gpu.host_problems(driver, lxc_gpu.nvidia_majors(PROC_DEVICES), '/v', '/d')
    assert [problem['code'] for problem in problems] == ['unknown_kernel_module']


# --- readers --------------------------------------------------------------------------------------

def test_scan_rootfs_resolves_absolute_links_inside_the_root(tmp_path):
    # The real container's layout (h200-host-probe.txt): /usr/lib/libnvidia-ml.so.1 -> /usr/local/nvidia/lib64/libnvidia-ml.so.1
    # -> libnvidia-ml.so.580.159.04. The absolute link must resolve inside the rootfs, not on the machine running the test.
    lib64 = tmp_path / 'usr' / 'local' / 'nvidia' / 'lib64'
    lib64.mkdir(parents=True)
    (lib64 / 'libnvidia-ml.so.580.159.04').write_bytes(b'\x7fELF')
    os.symlink('libnvidia-ml.so.580.159.04', str(lib64 / 'libnvidia-ml.so.1'))
    usr_lib = tmp_path / 'usr' / 'lib'
    usr_lib.mkdir()
    os.symlink('/usr/local/nvidia/lib64/libnvidia-ml.so.1', str(usr_lib / 'libnvidia-ml.so.1'))
    listing = lxc_gpu.scan_rootfs(str(tmp_path), ['usr/lib/x86_64-linux-gnu', 'usr/lib', 'usr/local/nvidia/lib64'])
    assert listing[0] == {'dir': '/usr/lib', 'name': 'libnvidia-ml.so.1', 'type': 'link', 'target': 'libnvidia-ml.so.580.159.04'}
    assert lxc_gpu.userspace_driver(listing)['version'] == '580.159.04'
    os.symlink('libnvidia-ml.so.1', str(usr_lib / 'libnvidia-ml.so.2'))
    os.symlink('/nowhere/libnvidia-ml.so.1', str(lib64 / 'libnvidia-ml.so'))
    types = dict((entry['dir'] + '/' + entry['name'], entry['target']) for entry in lxc_gpu.scan_rootfs(str(tmp_path), ['usr/local/nvidia/lib64']))
    assert types['/usr/local/nvidia/lib64/libnvidia-ml.so'] is None


def test_list_dev(tmp_path):
    for name in ('nvidia0', 'nvidia1', 'nvidiactl', 'nvidia-uvm', 'null'):
        (tmp_path / name).write_text('')
    (tmp_path / 'nvidia-caps').mkdir()
    assert lxc_gpu.list_dev(str(tmp_path)) == (['nvidia-uvm', 'nvidia0', 'nvidia1', 'nvidiactl'], True)
    assert lxc_gpu.list_dev(str(tmp_path / 'missing')) == ([], False)


def test_analyse_proxmox_rewrite_moves_the_block_lines_below_its_markers():
    # pve-container's parse_pct_config keeps "#" lines as the description and writes them back first,
    # then the keys, raw lxc.* keys last: after `pct set` the markers are together at the top and the
    # block's lines sit below. The lines are then outside the block: reported, so nothing is doubled.
    majors = {'nvidia': 195, 'nvidia-uvm': 238, 'nvidia-caps': None}
    wanted = lxc_gpu.render_block('proxmox', majors, lxc_gpu.mount_nodes(['nvidia0', 'nvidiactl']))
    rewritten = '\n'.join([MARKERS[0], MARKERS[1], 'arch: amd64', 'hostname: gpu-ct-01'] + wanted) + '\n'
    result = lxc_gpu.analyse_config(rewritten, MARKERS[0], MARKERS[1], wanted, majors, 'proxmox', lxc_gpu.character_majors(PROC_DEVICES))
    assert result['block_present'] and not result['block_current']
    assert [entry['line'] for entry in result['foreign_entries']] == wanted
    assert set(entry['kind'] for entry in result['foreign_entries']) == {'duplicate'}


# --- Hostile input: bounded size, answers of the former pattern, names that are not UTF-8 (issue 18) -----------
#
# Before the rewrite a config line 'lxc.mount.entry = /dev/nvidia0' + 100,000 blanks + 'x' took about 24 s in
# classify_config_line (the value's lazy tail rescanned the blanks from every position): 0.97 s at 20,000.
# The hostile lines are built for a length n (the tests use N); their time, against the former pattern's, is
# measured by tests/benchmark/parser_bench.py, not asserted here.

N = 100000
OLD_KEY_VALUE = re.compile(r'^\s*(?P<key>[A-Za-z0-9_.]+)\s*[:=]\s*(?P<value>.*?)\s*$')
LONG_CONFIG_LINES = {
    'mount_entry_blanks': lambda n: 'lxc.mount.entry = /dev/nvidia0' + ' ' * n + 'x',
    'mount_entry_tabs': lambda n: 'lxc.mount.entry: /dev/nvidia0' + '\t ' * (n // 2) + 'x',
    'allow_trailing_blanks': lambda n: 'lxc.cgroup2.devices.allow = c 195:* rwm' + ' ' * n,
    'allow_major_digits': lambda n: 'lxc.cgroup2.devices.allow = c ' + '1' * n + ':* rwm',
    'dev_blanks': lambda n: 'dev0: /dev/nvidia0' + ' ' * n + ',mode=0666',
    'one_word': lambda n: 'a' * n,
    'blanks_before_equals': lambda n: 'x' + ' ' * n + '= y',
}
LONG_SMI_OUTPUTS = {
    'digits': lambda n: '1.' + '1' * n + 'x',
    'dotted': lambda n: '1' + '.1' * (n // 2) + 'x',
    'repeated_lines': lambda n: '580.159.04\n' * (n // 11),
}
CLASSIFY_MAJORS = ({'nvidia': 195, 'nvidia-uvm': 238}, {195: ['nvidia']})


def hostile_mount_line(n):
    return 'lxc.mount.entry: /dev/nvidia0' + ' ' * n + 'x'


def config_with_a_hostile_line(n):
    """The pve-101 container config after a hostile first line."""
    return hostile_mount_line(n) + '\n' + read(LXC, 'pve-101.conf')


def smi_output_just_under_the_cap():
    return '5' + '.8' * ((lxc_gpu.MAX_SMI_OUTPUT_CHARS - 2) // 2) + 'x'


def test_key_value_answers_as_the_former_pattern():
    for length in range(7):
        for combination in itertools.product([' ', 'a', '.', ':', '=', '\n', '\t', '#'], repeat=length):
            line = ''.join(combination)
            old = OLD_KEY_VALUE.match(line)
            assert lxc_gpu.key_value(line) == (old and (old.group('key'), old.group('value'))), repr(line)


@pytest.mark.parametrize('name, kind', [
    ('mount_entry_blanks', 'duplicate'),
    ('mount_entry_tabs', 'duplicate'),
    ('allow_trailing_blanks', 'duplicate'),
    ('allow_major_digits', None),
    ('dev_blanks', 'duplicate'),
    ('one_word', None),
    ('blanks_before_equals', None),
])
def test_config_line_long_is_linear(name, kind):
    entry = lxc_gpu.classify_config_line(LONG_CONFIG_LINES[name](N), *CLASSIFY_MAJORS)
    assert (entry and entry['kind']) == kind


def test_analyse_config_with_a_hostile_line_is_linear():
    text = read(LXC, 'pve-101.conf')
    line = hostile_mount_line(N)
    majors = {'nvidia': 195, 'nvidia-uvm': 238}
    result = lxc_gpu.analyse_config(config_with_a_hostile_line(N), MARKERS[0], MARKERS[1], [], majors, 'proxmox')
    plain = lxc_gpu.analyse_config(text, MARKERS[0], MARKERS[1], [], majors, 'proxmox')
    assert result['foreign_entries'] == [{'line': line, 'kind': 'duplicate', 'reason': 'mounts /dev/nvidia0, which the managed block handles'}] + \
        plain['foreign_entries']


def test_analyse_config_over_the_cap_is_refused(tmp_path):
    path = tmp_path / 'config'
    path.write_text(read(LXC, 'pve-101.conf') + '#' * host_probe.READ_LIMIT)
    text = host_probe.read_text(str(path))
    assert len(text) == host_probe.READ_LIMIT + 1  # one more than the limit: too long, not cut to look whole
    with pytest.raises(lxc_gpu.LxcGpuError, match='over the %d' % lxc_gpu.MAX_CONFIG_CHARS):
        lxc_gpu.analyse_config(text, MARKERS[0], MARKERS[1], [], {'nvidia': 195}, 'proxmox')


@pytest.mark.parametrize('name', ['digits', 'dotted', 'repeated_lines'])
def test_driver_from_smi_long_output(name):
    result = lxc_gpu.driver_from_smi(0, LONG_SMI_OUTPUTS[name](N))
    assert result['version'] is None and result['error_kind'] == 'unexpected_output'
    assert 'MAX_SMI_OUTPUT_CHARS' in result['error']


def test_driver_from_smi_just_under_the_cap_is_linear():
    result = lxc_gpu.driver_from_smi(0, smi_output_just_under_the_cap())
    assert result['error_kind'] == 'unexpected_output'


def test_driver_from_smi_bytes_that_are_not_utf8():
    # run_command decodes with surrogateescape: b'\xff' arrives as '\udcff'.
    result = lxc_gpu.driver_from_smi(0, '580.159.04\udcff\n')
    assert result['error_kind'] == 'unexpected_output'
    assert '580.159.04\ufffd' in result['error']
    json.dumps(result).encode('utf-8')


def test_host_problems_names_a_version_file_over_the_cap():
    driver = host_probe.parse_driver_version_file(PROC_VERSION + ' ' * host_probe.MAX_VERSION_FILE_CHARS)
    problems = lxc_gpu.host_problems(driver, lxc_gpu.nvidia_majors(PROC_DEVICES), '/proc/driver/nvidia/version', '/proc/devices')
    assert [problem['code'] for problem in problems] == ['unknown_kernel_module']
    assert 'MAX_VERSION_FILE_CHARS' in problems[0]['msg']


def test_scan_rootfs_and_list_dev_with_names_that_are_not_utf8(tmp_path):
    lib = tmp_path / 'usr' / 'lib' / 'x86_64-linux-gnu'
    lib.mkdir(parents=True)
    (lib / 'libnvidia-ml.so.580.159.04').write_bytes(b'\x7fELF')
    os.symlink('libnvidia-ml.so.580.159.04', str(lib / 'libnvidia-ml.so.1'))
    raw = os.fsencode(str(lib))
    with open(os.path.join(raw, b'libnvidia-ml.so.\xff'), 'wb') as handle:
        handle.write(b'\x7fELF')
    os.symlink(b'libnvidia-ml.so.\xfe\xff', os.path.join(raw, b'libnvidia-ml.so.2'))
    listing = lxc_gpu.scan_rootfs(str(tmp_path))
    names = [entry['name'] for entry in listing]
    assert 'libnvidia-ml.so.\ufffd' in names
    json.dumps(listing, ensure_ascii=False).encode('utf-8')
    driver = lxc_gpu.userspace_driver(listing)
    assert (driver['version'], driver['problem']) == ('580.159.04', None)

    dev = tmp_path / 'dev'
    dev.mkdir()
    (dev / 'nvidia0').write_text('')
    with open(os.path.join(os.fsencode(str(dev)), b'nvidia\xff'), 'wb'):
        pass
    names, caps = lxc_gpu.list_dev(str(dev))
    assert names == ['nvidia0', 'nvidia\ufffd']
    assert lxc_gpu.mount_nodes(names) == [{'name': 'nvidia0', 'kind': 'file'}]


# --- the devices cgroup version decides the rule key (docs/lxc-real-container.md) ------------------------------

def test_devices_cgroup_real_hybrid_host_is_v1():
    # The development machine: LXC there logged "Ignoring cgroup2 limits on legacy cgroup system" and the container
    # got none of the lxc.cgroup2 rules.
    assert lxc_gpu.devices_cgroup(read(LXC, 'mountinfo-cgroup-hybrid.txt')) == 'v1'


def test_devices_cgroup_unified_only_is_v2_and_unreadable_is_none():
    unified = '30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n'
    assert lxc_gpu.devices_cgroup(unified) == 'v2'
    without_devices = without_line(read(LXC, 'mountinfo-cgroup-hybrid.txt'), 'rw,devices')
    assert lxc_gpu.devices_cgroup(without_devices) == 'v2'
    assert lxc_gpu.devices_cgroup(None) is None


def test_render_v1_keys():
    majors = {'nvidia': 195, 'nvidia-uvm': 238, 'nvidia-caps': None}
    lines = lxc_gpu.render_block('lxc', majors, lxc_gpu.mount_nodes(['nvidia0']), 'v1')
    assert lines[:2] == ['lxc.cgroup.devices.allow = c 195:* rwm', 'lxc.cgroup.devices.allow = c 238:* rwm']
    with pytest.raises(lxc_gpu.LxcGpuError, match='unknown cgroup version'):
        lxc_gpu.render_block('lxc', majors, [], 'v3')

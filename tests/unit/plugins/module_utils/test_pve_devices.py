# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Proxmox VE devN passthrough: version detection, the value syntax of pve-container's $dev_desc, and the plan that
moves a configuration from the raw block to devN entries. Inputs: fixtures/lxc/pve-102-devices.conf and
pve-101.conf (constructed in pct.conf's layout, README there), pveversion-8.1.3.txt (a public sample), the GPU test
machine's real /dev listing (h200-host-probe.txt), and the pct rewrite stand-in (tests/unit/pct_rewrite.py)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import lxc_gpu
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import pve_devices
from ansible_collections.gpuops.sglang_stack.tests.unit import pct_rewrite as pct
from ansible_collections.gpuops.sglang_stack.tests.unit.recorded import FIXTURES, read

LXC = os.path.join(FIXTURES, 'lxc')
MARKERS = ('# BEGIN gpuops.sglang_stack lxc_gpu_host', '# END gpuops.sglang_stack lxc_gpu_host')


def real_nodes():
    """The GPU test machine's recorded `ls -l /dev/nvidia* /dev/nvidia-caps` -> [{'name', 'mode'}] as stat_dev gives."""
    text = read(LXC, 'h200-host-probe.txt').split('== dev\n', 1)[1].split('\n== ', 1)[0]
    found = {}
    directory = ''
    for line in text.splitlines():
        if line.endswith(':') and line.startswith('/dev/'):
            directory = line[len('/dev/'):-1] + '/'
            continue
        parts = line.split()
        if not parts or not parts[0].startswith('c'):
            continue
        bits = parts[0][1:10]
        mode = sum(1 << (8 - i) for i, char in enumerate(bits) if char != '-')
        name = parts[-1][len('/dev/'):] if parts[-1].startswith('/dev/') else directory + parts[-1]
        found[name] = {'name': name, 'mode': mode}
    return sorted(found.values(), key=lambda entry: entry['name'])


def eight_gpu_nodes():
    names = ['nvidia%d' % index for index in range(8)] + ['nvidiactl', 'nvidia-uvm', 'nvidia-uvm-tools']
    return [{'name': name, 'mode': 0o666} for name in names] + [
        {'name': 'nvidia-caps/nvidia-cap1', 'mode': 0o400}, {'name': 'nvidia-caps/nvidia-cap2', 'mode': 0o444}]


# --- version --------------------------------------------------------------------------------------

def test_pveversion_public_sample():
    parsed = pve_devices.parse_pveversion(read(LXC, 'pveversion-8.1.3.txt'))
    assert (parsed['version'], parsed['tuple']) == ('8.1.3', (8, 1, 3))
    assert parsed['raw'].startswith('pve-manager/8.1.3/b46aac3b42da5d15')


@pytest.mark.parametrize('text, version', [
    ('pve-manager/8.0.4/d258a813cfa6b390 (running kernel: 6.2.16-3-pve)\n', '8.0.4'),
    ('pve-manager/9.1.1/42db4a6cf33dac83 (running kernel: 6.17.2-1-pve)', '9.1.1'),
    ('pve-manager/7.4-17/513c62be (running kernel: 5.15.131-2-pve)', '7.4'),
    ('proxmox-ve: 8.1.0 (running kernel: 6.5.11-8-pve)', None),
    ('', None),
    (None, None),
])
def test_pveversion_other_lines(text, version):
    assert pve_devices.parse_pveversion(text)['version'] == version


def test_mode_follows_the_version_and_the_override():
    found = dict(pve_devices.parse_pveversion(read(LXC, 'pveversion-8.1.3.txt')), found=True)
    assert pve_devices.passthrough_mode('proxmox', 'auto', found)['mode'] == 'devices'
    old = dict(pve_devices.parse_pveversion('pve-manager/8.0.4/d258a813cfa6b390 (running kernel: 6.2.16-3-pve)'), found=True)
    decided = pve_devices.passthrough_mode('proxmox', 'auto', old)
    assert decided['mode'] == 'raw' and 'older than 8.1' in decided['reason']
    assert pve_devices.passthrough_mode('proxmox', 'auto', dict(found, tuple=(9, 0)))['mode'] == 'devices'
    # Not found, or unreadable: raw lines, which every version reads; the override says devices.
    missing = pve_devices.passthrough_mode('proxmox', 'auto', {'found': False})
    assert missing['mode'] == 'raw' and 'pveversion not found' in missing['reason']
    garbled = pve_devices.passthrough_mode('proxmox', 'auto', dict(pve_devices.parse_pveversion('oops'), found=True))
    assert garbled['mode'] == 'raw' and "'oops'" in garbled['reason']
    assert pve_devices.passthrough_mode('proxmox', 'devices', {'found': False})['mode'] == 'devices'
    assert pve_devices.passthrough_mode('proxmox', 'raw', found)['mode'] == 'raw'
    # Plain LXC: raw; devices asked for it is a refusal, not a silent fallback.
    assert pve_devices.passthrough_mode('lxc', 'auto', found) == {'mode': 'raw', 'reason': 'plain LXC configuration', 'problem': None}
    refused = pve_devices.passthrough_mode('lxc', 'devices', None)
    assert refused['problem']['code'] == 'devices_unsupported'
    with pytest.raises(pve_devices.PveDevicesError):
        pve_devices.passthrough_mode('proxmox', 'sometimes', found)


# --- values ---------------------------------------------------------------------------------------

def test_wanted_devices_keep_the_real_host_modes():
    nodes = lxc_gpu.device_nodes(real_nodes())
    wanted = pve_devices.wanted_devices(nodes)
    assert [(device['path'], device['mode']) for device in wanted] == [
        ('/dev/nvidia0', '0666'), ('/dev/nvidiactl', '0666'), ('/dev/nvidia-uvm', '0666'), ('/dev/nvidia-uvm-tools', '0666'),
        ('/dev/nvidia-caps/nvidia-cap1', '0400'), ('/dev/nvidia-caps/nvidia-cap2', '0444')]
    assert pve_devices.device_value(wanted[0]) == '/dev/nvidia0,mode=0666'
    with_gid = pve_devices.wanted_devices(nodes[:1], gid=44)
    # print_property_string order: the default key, then gid, mode, uid.
    assert pve_devices.device_value(with_gid[0]) == '/dev/nvidia0,gid=44,mode=0666'


def test_device_values_parse_as_proxmox_reads_them():
    assert pve_devices.parse_device_value('/dev/nvidia0,mode=0666,gid=44') == {'path': '/dev/nvidia0', 'mode': '0666', 'gid': '44'}
    assert pve_devices.parse_device_value('path=/dev/nvidia0') == {'path': '/dev/nvidia0'}
    assert pve_devices.parse_device_value('mode=0666') is None
    assert pve_devices.parse_device_value('/dev/a,/dev/b') is None
    with pytest.raises(pve_devices.PveDevicesError, match='not an octal'):
        pve_devices.device_value({'path': '/dev/nvidia0', 'mode': '666'})
    with pytest.raises(pve_devices.PveDevicesError, match='not a GPU node'):
        pve_devices.device_value({'path': '/dev/sda'})


def test_managed_paths_are_only_the_passed_gpu_nodes():
    for path in ('/dev/nvidia0', '/dev/nvidia7', '/dev/nvidiactl', '/dev/nvidia-uvm', '/dev/nvidia-uvm-tools', '/dev/nvidia-modeset',
                 '/dev/nvidia-caps/nvidia-cap1'):
        assert pve_devices.managed_path(path), path
    for path in ('/dev/dri/renderD128', '/dev/net/tun', '/dev/nvidia-caps-imex-channels/channel0', '/dev/nvidia-nvswitchctl',
                 '/dev/nvidia-caps', None):
        assert not pve_devices.managed_path(path), path


# --- plan -----------------------------------------------------------------------------------------

def test_plan_moves_the_raw_block_to_devn_and_keeps_the_site_entries():
    text = read(LXC, 'pve-102-devices.conf')
    wanted = pve_devices.wanted_devices(eight_gpu_nodes())
    result = pve_devices.plan(text, wanted, *MARKERS)
    assert result['changed']
    assert result['block_removed'][0] == 'lxc.cgroup2.devices.allow: c 195:* rwm' and len(result['block_removed']) == 6
    # dev0 and dev1 are the site's: the GPU nodes take 2 onwards, in node order.
    assert result['added'][:2] == ['dev2: /dev/nvidia0,mode=0666', 'dev3: /dev/nvidia1,mode=0666']
    assert result['added'][-2:] == ['dev13: /dev/nvidia-caps/nvidia-cap1,mode=0400', 'dev14: /dev/nvidia-caps/nvidia-cap2,mode=0444']
    lines = result['text'].splitlines()
    main, snapshot = lines[:lines.index('[pre-cuda13]')], lines[lines.index('[pre-cuda13]'):]
    assert not [line for line in main if line.startswith('lxc.') or 'gpuops.sglang_stack' in line]
    assert main[:4] == ['#GPU container for SGLang (8x RTX PRO 6000)', 'arch: amd64', 'cores: 64', 'dev0: /dev/dri/renderD128,gid=104']
    assert main.index('dev1: /dev/net/tun') + 1 == main.index('dev2: /dev/nvidia0,mode=0666')
    # The snapshot is the configuration as it was: byte for byte.
    assert '\n'.join(snapshot) + '\n' == text[text.index('[pre-cuda13]'):]
    again = pve_devices.plan(result['text'], wanted, *MARKERS)
    assert not again['changed'] and again['text'] == result['text']


def test_plan_survives_a_pct_rewrite():
    """After the move, `pct set` (the stand-in of write_pct_config) sorts the keys: the next plan changes nothing."""
    wanted = pve_devices.wanted_devices(eight_gpu_nodes())
    moved = pve_devices.plan(read(LXC, 'pve-102-devices.conf'), wanted, *MARKERS)['text']
    rewritten = pct.rewrite(moved, ['cores=32'])
    assert rewritten != moved and 'cores: 32' in rewritten
    lines = rewritten.splitlines()
    assert lines.index('dev10: /dev/nvidiactl,mode=0666') < lines.index('dev2: /dev/nvidia0,mode=0666')  # sorted as text
    result = pve_devices.plan(rewritten, wanted, *MARKERS)
    assert not result['changed'] and result['text'] == rewritten


def test_pct_rewrite_of_the_raw_block_is_what_the_raw_mode_cannot_survive():
    """The same rewrite of a raw block: the markers go to the description, the lines below, apart (the old failure)."""
    rewritten = pct.rewrite(read(LXC, 'pve-102-devices.conf'))
    lines = rewritten.splitlines()
    assert lines[1:3] == list(MARKERS)
    assert lines[lines.index(MARKERS[1]) + 1] == 'arch: amd64'
    # The devN plan removes only what the markers enclose (nothing now): the raw lines stay, for the refusal to name.
    result = pve_devices.plan(rewritten, pve_devices.wanted_devices(eight_gpu_nodes()), *MARKERS)
    assert result['block_removed'] == []
    assert 'lxc.cgroup2.devices.allow: c 238:* rwm' in result['text']


def test_plan_adopts_updates_and_removes_gpu_entries_only():
    text = '\n'.join([
        'arch: amd64',
        'dev0: /dev/nvidia0,gid=44',                 # the site's GPU entry: kept at 0, its properties made the wanted ones
        'dev3: /dev/nvidia0,mode=0666',              # a second entry for the same node: removed
        'dev4: /dev/nvidia9,mode=0666',              # a GPU this host no longer has: removed
        'dev5: /dev/nvidia-caps-imex-channels/channel0',  # not a node this role passes: the site's
        'dev7: mode=0666,path=/dev/nvidiactl',       # keyed path, same properties: kept as written
        'hostname: ct',
        '',
        '[pve:pending]',
        'dev1: /dev/dri/card0',
        'delete: dev2',
    ]) + '\n'
    wanted = pve_devices.wanted_devices([{'name': 'nvidia0', 'mode': 0o666}, {'name': 'nvidia1', 'mode': 0o666},
                                         {'name': 'nvidiactl', 'mode': 0o666}, {'name': 'nvidia-uvm', 'mode': 0o666}])
    result = pve_devices.plan(text, wanted, *MARKERS)
    assert result['updated'] == ['dev0: /dev/nvidia0,mode=0666']
    assert result['removed'] == ['dev3: /dev/nvidia0,mode=0666', 'dev4: /dev/nvidia9,mode=0666']
    # 1 and 2 are taken by the pending section, 5 and 7 by entries in the main one.
    assert result['added'] == ['dev3: /dev/nvidia1,mode=0666', 'dev4: /dev/nvidia-uvm,mode=0666']
    assert result['text'].splitlines()[:7] == [
        'arch: amd64', 'dev0: /dev/nvidia0,mode=0666', 'dev5: /dev/nvidia-caps-imex-channels/channel0',
        'dev7: mode=0666,path=/dev/nvidiactl', 'dev3: /dev/nvidia1,mode=0666', 'dev4: /dev/nvidia-uvm,mode=0666', 'hostname: ct']
    assert result['text'].endswith('[pve:pending]\ndev1: /dev/dri/card0\ndelete: dev2\n')
    assert not pve_devices.plan(result['text'], wanted, *MARKERS)['changed']


def test_plan_without_devn_entries_appends_at_the_end_of_the_main_section_and_no_free_index():
    text = 'arch: amd64\nhostname: ct\n\n[snap]\narch: amd64\n'
    result = pve_devices.plan(text, pve_devices.wanted_devices([{'name': 'nvidia0', 'mode': 0o666}]), *MARKERS)
    assert result['text'] == 'arch: amd64\nhostname: ct\ndev0: /dev/nvidia0,mode=0666\n\n[snap]\narch: amd64\n'
    assert pve_devices.plan(text, [], *MARKERS) == {'text': text, 'changed': False, 'added': [], 'updated': [], 'removed': [],
                                                    'block_removed': []}
    full = ''.join('dev%d: /dev/sd%d\n' % (index, index) for index in range(pve_devices.MAX_DEVICES))
    with pytest.raises(pve_devices.PveDevicesError, match='dev0 to dev255 are all taken'):
        pve_devices.plan(full, pve_devices.wanted_devices([{'name': 'nvidia0', 'mode': 0o666}]), *MARKERS)


def test_existing_devices_main_section_only():
    entries = pve_devices.existing_devices(read(LXC, 'pve-102-devices.conf'))
    assert [(entry['key'], entry['path'], entry['managed']) for entry in entries] == [
        ('dev0', '/dev/dri/renderD128', False), ('dev1', '/dev/net/tun', False)]


def config_with_long_lines(n):
    """A dev0 line with n blanks inside, then a line of n characters (time: tests/benchmark/parser_bench.py)."""
    return 'dev0: /dev/nvidia0' + ' ' * n + ',mode=0666\n' + 'x' * n + ':\n'


def test_plan_is_linear_on_long_lines():
    result = pve_devices.plan(config_with_long_lines(100000), pve_devices.wanted_devices([{'name': 'nvidia0', 'mode': 0o666}]), *MARKERS)
    assert result['updated'] == [] and not result['changed']


def test_classify_in_devices_mode():
    majors = {'nvidia': 195, 'nvidia-uvm': 238, 'nvidia-caps': 241}
    assert lxc_gpu.classify_config_line('dev2: /dev/nvidia0,mode=0666', majors, None, 'devices') is None
    entry = lxc_gpu.classify_config_line('lxc.cgroup2.devices.allow: c 238:* rwm', majors, None, 'devices')
    assert entry['kind'] == 'duplicate' and 'the devN entries' in entry['reason']
    assert lxc_gpu.classify_config_line('dev2: /dev/nvidia0,mode=0666', majors, None, 'raw')['kind'] == 'duplicate'


def test_device_nodes_order_and_stat(tmp_path):
    for name in ('nvidia1', 'nvidia0', 'nvidiactl', 'nvidia-uvm', 'nvidia-modeset', 'null'):
        (tmp_path / name).write_text('')
        os.chmod(str(tmp_path / name), 0o666)
    (tmp_path / 'nvidia-caps').mkdir()
    (tmp_path / 'nvidia-caps' / 'nvidia-cap2').write_text('')
    os.chmod(str(tmp_path / 'nvidia-caps' / 'nvidia-cap2'), 0o444)
    found = lxc_gpu.stat_dev(str(tmp_path))
    assert [entry['name'] for entry in lxc_gpu.device_nodes(found)] == [
        'nvidia0', 'nvidia1', 'nvidiactl', 'nvidia-uvm', 'nvidia-modeset', 'nvidia-caps/nvidia-cap2']
    assert dict((entry['name'], entry['mode']) for entry in found)['nvidia-caps/nvidia-cap2'] == 0o444
    assert lxc_gpu.stat_dev(str(tmp_path / 'missing')) == []

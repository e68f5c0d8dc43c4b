# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Proxmox VE ``devN:`` device passthrough for the GPU nodes of an LXC container.

Proxmox VE 8.1 (pve-container 5.0.7, 2023-11-21: "allow passing raw device nodes through to containers") reads
``dev0`` .. ``dev255`` keys in ``/etc/pve/lxc/<vmid>.conf``. Their value is a property string (pve-container
``src/PVE/LXC/Config.pm``, ``$dev_desc``): the device path as the default key, then ``mode`` (``0[0-7]{3}``,
default 0660), ``uid`` and ``gid`` (integers, default 0, mapped into the container's id range) and ``deny-write``.
At each start the prestart hook makes the node (mknod with the host node's type and numbers, then chmod and chown)
and the autodev hook bind-mounts it at the same path in the container; ``update_lxc_config`` adds the
``lxc.cgroup2.devices.allow = c <major>:<minor> rw`` rule itself. The entries are ordinary keys: ``pct set`` and
snapshots keep them (``write_pct_config`` writes every key sorted, ``#`` lines first as the description, raw
``lxc.*`` keys last), so nothing this module writes is moved by a rewrite.

Pure functions over text; the module gpuops.sglang_stack.lxc_gpu_devices reads and writes the file.
"""

from __future__ import annotations

import re

# pve-container: my $MAX_DEVICES = 256; keys dev0 .. dev255.
MAX_DEVICES = 256
# The first Proxmox VE release whose pve-container reads devN keys (pve-manager 8.1, November 2023).
DEVICES_MIN_VERSION = (8, 1)
MODES = ('auto', 'devices', 'raw')

_PVEVERSION = re.compile(r'^pve-manager/(?P<version>\d{1,4}(?:\.\d{1,6}){0,3})(?:[/\s-]|$)')
_SECTION = re.compile(r'^\s*\[[^\]]+\]\s*$')
_DEV_KEY = re.compile(r'^dev(?P<index>\d{1,3})$')
_KEY = re.compile(r'^(?P<key>[a-z][a-z_]*\d*):\s*')
# The device nodes this collection passes through (lxc_gpu.mount_nodes and the caps directory's nodes): the
# devN entries naming them are the role's; a devN for any other path (/dev/dri/renderD128, /dev/net/tun,
# /dev/nvidia-caps-imex-channels/channel0, ...) is the site's and is never touched.
_MANAGED_PATH = re.compile(r'^/dev/(?:nvidia\d{1,4}|nvidiactl|nvidia-uvm|nvidia-uvm-tools|nvidia-modeset|nvidia-caps/[^/,]+)$')
_MODE = re.compile(r'^0[0-7]{3}$')


class PveDevicesError(Exception):
    """A configuration the devN entries cannot be written into (no free index, a malformed value of ours)."""


def parse_pveversion(text):
    """``pveversion`` output -> ``{'version': '8.1.3', 'tuple': (8, 1, 3), 'raw': first line}``; version None when
    the first line is not ``pve-manager/<version>/<commit> (running kernel: ...)``."""
    first = ((text or '').strip().splitlines() or [''])[0].strip()[:200]
    match = _PVEVERSION.match(first)
    if not match:
        return {'version': None, 'tuple': None, 'raw': first}
    version = match.group('version')
    return {'version': version, 'tuple': tuple(int(part) for part in version.split('.')), 'raw': first}


def passthrough_mode(flavour, requested, pve):
    """How a container's GPUs are passed through -> ``{'mode': 'devices'|'raw', 'reason', 'problem'}``.

    ``requested``: auto, devices or raw (the role's ``lxc_gpu_host_passthrough``); ``pve``: :func:`parse_pveversion`'s
    answer plus ``found`` (whether pveversion exists), or None when it was not looked for. ``problem`` is None or
    ``{'code', 'msg'}`` (devices asked for a plain LXC container, which has no devN keys).
    """
    if requested not in MODES:
        raise PveDevicesError('unknown passthrough mode %r (one of %s)' % (requested, ', '.join(MODES)))
    pve = pve or {'found': False, 'version': None, 'tuple': None, 'raw': ''}
    if flavour != 'proxmox':
        if requested == 'devices':
            return {'mode': 'raw', 'reason': 'plain LXC configuration', 'problem': {
                'code': 'devices_unsupported',
                'msg': 'lxc_gpu_host_passthrough is devices, but devN entries exist only in Proxmox VE configurations '
                       '(flavour proxmox); a plain LXC container takes raw lxc.* lines. Fix: set lxc_gpu_host_passthrough '
                       'to auto or raw. Nothing was changed.'}}
        return {'mode': 'raw', 'reason': 'plain LXC configuration', 'problem': None}
    if requested == 'raw':
        return {'mode': 'raw', 'reason': 'lxc_gpu_host_passthrough is raw', 'problem': None}
    if requested == 'devices':
        return {'mode': 'devices', 'reason': 'lxc_gpu_host_passthrough is devices', 'problem': None}
    if not pve.get('found'):
        return {'mode': 'raw', 'problem': None,
                'reason': 'pveversion not found, so the Proxmox VE version is unknown: raw lxc.* lines, which every '
                          'version reads (set lxc_gpu_host_passthrough to devices on 8.1 or later)'}
    if pve.get('tuple') is None:
        return {'mode': 'raw', 'problem': None,
                'reason': 'pveversion printed %r, not pve-manager/<version>/...: raw lxc.* lines (set '
                          'lxc_gpu_host_passthrough to devices on 8.1 or later)' % pve.get('raw')}
    if pve['tuple'][:2] >= DEVICES_MIN_VERSION:
        return {'mode': 'devices', 'reason': 'Proxmox VE %s reads devN entries (8.1 or later)' % pve['version'], 'problem': None}
    return {'mode': 'raw', 'reason': 'Proxmox VE %s is older than 8.1, which first reads devN entries' % pve['version'],
            'problem': None}


def managed_path(path):
    """Whether a devN entry's path is one of the GPU nodes this collection passes through."""
    return bool(_MANAGED_PATH.match(path or ''))


def parse_device_value(value):
    """A devN value (``/dev/nvidia0,gid=44,mode=0666`` or ``path=/dev/nvidia0,...``) -> dict of its properties, the
    path under ``path``; None when it has no path or a part is neither ``key=value`` nor the leading path."""
    result = {}
    for index, part in enumerate((value or '').split(',')):
        part = part.strip()
        if '=' in part:
            key, _sep, item = part.partition('=')
            result[key.strip()] = item.strip()
        elif index == 0 and part:
            result['path'] = part
        else:
            return None
    return result if result.get('path') else None


def _normal(properties):
    """Properties compared as Proxmox reads them: integers as numbers, deny-write as a boolean (default off)."""
    result = dict(properties)
    for key in ('uid', 'gid'):
        if key in result and re.match(r'^\d{1,10}$', str(result[key])):
            result[key] = int(result[key])
    deny = str(result.pop('deny-write', '0')).lower()
    if deny in ('1', 'yes', 'on', 'true'):
        result['deny-write'] = True
    return result


def device_value(device):
    """``{'path', 'mode', 'gid'?, 'uid'?}`` -> the value as Proxmox prints it (print_property_string: the default key
    first, then the others sorted: gid, mode, uid)."""
    if not _MANAGED_PATH.match(device.get('path') or ''):
        raise PveDevicesError('%r is not a GPU node this role passes through' % (device.get('path'),))
    parts = [device['path']]
    for key in ('gid', 'mode', 'uid'):
        value = device.get(key)
        if value is None:
            continue
        if key == 'mode' and not _MODE.match(str(value)):
            raise PveDevicesError('mode %r of %s is not an octal 0NNN' % (value, device['path']))
        parts.append('%s=%s' % (key, value))
    return ','.join(parts)


def wanted_devices(nodes, gid=None, uid=None):
    """The host's GPU nodes (``[{'name', 'mode'}]``, ``name`` relative to /dev, ``mode`` the permission bits as an
    int) -> the devN properties in order. The node's own mode is kept, as a bind mount would show it (the NVIDIA
    nodes are 0666, the capability nodes 0400 / 0444); without ``mode`` Proxmox makes the node 0660 root:root,
    which a non-root service user in the container cannot open."""
    result = []
    for node in nodes:
        device = {'path': '/dev/%s' % node['name'], 'mode': '0%03o' % (node['mode'] & 0o777)}
        if gid is not None:
            device['gid'] = int(gid)
        if uid is not None:
            device['uid'] = int(uid)
        result.append(device)
    return result


def _device_line(line):
    """A config line -> (index, value) when it is a ``devN:`` key; None otherwise (linear: no backtracking)."""
    match = _KEY.match(line)
    if not match:
        return None
    key = _DEV_KEY.match(match.group('key'))
    if not key:
        return None
    return int(key.group('index')), line[match.end():].strip()


def section_start(lines):
    """Index of the first ``[section]`` line (snapshot or ``[pve:pending]``); len(lines) when there is none."""
    for index, line in enumerate(lines):
        if _SECTION.match(line):
            return index
    return len(lines)


def _pending_indexes(lines):
    """devN indexes a ``[pve:pending]`` section sets or deletes: they are taken when the container next starts."""
    taken = set()
    inside = False
    for line in lines:
        if _SECTION.match(line):
            inside = line.strip().lower() == '[pve:pending]'
            continue
        if not inside:
            continue
        found = _device_line(line)
        if found:
            taken.add(found[0])
        elif line.startswith('delete:'):
            for key in re.split(r'[,;\s]+', line[len('delete:'):].strip()):
                match = _DEV_KEY.match(key)
                if match:
                    taken.add(int(match.group('index')))
    return taken


def existing_devices(text):
    """The main section's devN entries -> ``[{'key', 'index', 'value', 'path', 'managed'}]`` in file order."""
    lines = (text or '').splitlines()
    result = []
    for line in lines[:section_start(lines)]:
        found = _device_line(line)
        if found:
            properties = parse_device_value(found[1])
            path = properties['path'] if properties else None
            result.append({'key': 'dev%d' % found[0], 'index': found[0], 'value': found[1], 'path': path,
                           'managed': managed_path(path)})
    return result


def plan(text, wanted, marker_begin, marker_end):
    """What the configuration must become so that its main section passes ``wanted`` through with devN entries.

    * The managed block of raw ``lxc.*`` lines (between the two markers, in the main section) is removed with its
      markers: those lines are the ones this role wrote (migration from raw passthrough); nothing else is.
    * A devN entry whose path is a wanted node keeps its index; its value is rewritten when its properties differ.
      A second entry for the same path, and an entry for a GPU node the host no longer has, are removed.
    * A wanted node without an entry takes the lowest index no devN key uses (main section or ``[pve:pending]``).
    * devN entries for other paths (the site's), every other line, and everything from the first ``[section]`` on
      (snapshots, pending changes) stay as they are.

    Returns ``{'text', 'changed', 'added', 'updated', 'removed', 'block_removed'}`` (lists of ``key: value`` lines;
    ``block_removed`` the raw lines that were between the markers). Raises PveDevicesError when no index is free.
    """
    lines = (text or '').splitlines()
    start = section_start(lines)
    main, rest = lines[:start], lines[start:]

    block_removed = []
    begin = next((i for i, line in enumerate(main) if line.rstrip() == marker_begin), None)
    end = next((i for i, line in enumerate(main) if begin is not None and i > begin and line.rstrip() == marker_end), None)
    if begin is not None and end is not None:
        block_removed = list(main[begin + 1:end])
        main = main[:begin] + main[end + 1:]

    wanted_by_path = dict((device['path'], device) for device in wanted)
    claimed = {}
    updated, removed = [], []
    kept = []
    for line in main:
        found = _device_line(line)
        properties = parse_device_value(found[1]) if found else None
        if not found or not properties or not managed_path(properties['path']):
            kept.append(line)
            continue
        index, value = found
        path = properties['path']
        if path in wanted_by_path and path not in claimed:
            claimed[path] = index
            new_value = device_value(wanted_by_path[path])
            if _normal(properties) != _normal(parse_device_value(new_value)):
                updated.append('dev%d: %s' % (index, new_value))
                kept.append('dev%d: %s' % (index, new_value))
            else:
                kept.append(line)
        else:
            removed.append(line.strip())
    main = kept
    # Indexes of the entries kept (removed ones are free again) and of the pending section.
    used = set(_pending_indexes(rest))
    used.update(found[0] for found in (_device_line(line) for line in main) if found)

    added = []
    free = (index for index in range(MAX_DEVICES) if index not in used)
    for device in wanted:
        if device['path'] in claimed:
            continue
        index = next(free, None)
        if index is None:
            raise PveDevicesError('no free devN key for %s: dev0 to dev%d are all taken (Proxmox VE reads no more)'
                                  % (device['path'], MAX_DEVICES - 1))
        added.append('dev%d: %s' % (index, device_value(device)))

    if added:
        last_dev = max([i for i, line in enumerate(main) if _device_line(line)] or [-1])
        if last_dev < 0:
            last_dev = len(main) - 1
            while last_dev >= 0 and not main[last_dev].strip():
                last_dev -= 1
        main = main[:last_dev + 1] + added + main[last_dev + 1:]

    changed = bool(added or updated or removed or begin is not None and end is not None)
    new_lines = main + rest
    new_text = '\n'.join(new_lines) + ('\n' if new_lines else '') if changed else (text or '')
    return {'text': new_text, 'changed': changed, 'added': added, 'updated': updated,
            'removed': removed, 'block_removed': block_removed}

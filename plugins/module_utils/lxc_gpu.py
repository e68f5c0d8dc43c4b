# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The LXC (or Proxmox VE) host side of GPU passthrough: what the host offers, what a container's
configuration must say, and whether the container's user-space driver fits the host's kernel module.

Pure functions over file contents and directory listings (unit-tested with recorded text from the
GPU test machine); the readers at the bottom only collect those contents.

* The majors come from ``/proc/devices``: ``nvidia`` (195, fixed by NVIDIA), ``nvidia-uvm`` and
  ``nvidia-caps`` (both dynamic: 238 and 241 on the GPU test machine, other numbers elsewhere), so
  none of the dynamic ones is ever assumed.
* The device nodes to bind-mount come from the host's ``/dev``: every ``nvidiaN``, ``nvidiactl``,
  ``nvidia-uvm``, ``nvidia-uvm-tools``, ``nvidia-modeset`` when present, and the ``nvidia-caps``
  directory when present.
* The kernel module's version comes from ``/proc/driver/nvidia/version`` (host_probe parses both the
  open and the proprietary module's line); the container's user-space driver version from the
  ``libnvidia-ml.so.<version>`` file its ``libnvidia-ml.so.1`` resolves to inside the container's
  root file system, or from ``nvidia-smi --query-gpu=driver_version`` run in the container. NVML
  refuses to work when the two differ ("Failed to initialize NVML: Driver/library version mismatch").

The configuration files and command outputs read here come from the host and are read as root, so the parsers are
linear in their input (no regular expression that can backtrack over a long line; timed on 100,000-character lines
in tests/unit/plugins/module_utils/test_lxc_gpu.py), a configuration over :data:`MAX_CONFIG_CHARS` is refused with
LxcGpuError, and names that are not UTF-8 (``os.listdir`` hands them over with lone surrogates) are reported with
U+FFFD in place of the bytes that are not.
"""

from __future__ import annotations

import os
import re
import stat

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import host_probe
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import nvidia_smi

FLAVOURS = ('lxc', 'proxmox')

# The major NVIDIA registers for its GPU and control nodes; the only one that is not dynamic.
NVIDIA_MAJOR_NAME = 'nvidia'
UVM_MAJOR_NAME = 'nvidia-uvm'
CAPS_MAJOR_NAME = 'nvidia-caps'

# Control nodes bind-mounted when the host has them, in this order (after the per-GPU nodes).
CONTROL_NODES = ('nvidiactl', 'nvidia-uvm', 'nvidia-uvm-tools', 'nvidia-modeset')
CAPS_DIR = 'nvidia-caps'

_GPU_NODE = re.compile(r'^nvidia(?P<index>\d+)$')
_NVML_FILE = re.compile(r'^libnvidia-ml\.so\.(?P<version>\d+\.\d+(?:\.\d+)*)$')
NVML_SONAME = 'libnvidia-ml.so.1'

# 64-bit library directories of a container, in the order the dynamic linker usually finds them;
# the .run installer puts the libraries in the first one on Debian and Ubuntu. 32-bit directories
# (i386-linux-gnu, lib32) are left out: the 32-bit compat libraries are not what CUDA loads.
DEFAULT_LIB_DIRS = (
    'usr/lib/x86_64-linux-gnu',
    'lib/x86_64-linux-gnu',
    'usr/lib64',
    'lib64',
    'usr/local/nvidia/lib64',
    'usr/lib',
)

# A config line that is about NVIDIA passthrough: cgroup device rules and mount entries (both
# syntaxes: "key = value" for LXC, "key: value" for Proxmox), and Proxmox's devN: passthrough keys.
# Only the key and its separator are matched; the value is the rest of the line, stripped (the former
# ``\s*(?P<value>.*?)\s*$`` tail rescanned a run of blanks from every position: quadratic).
_KEY_SEPARATOR = re.compile(r'^\s*(?P<key>[A-Za-z0-9_.]+)\s*[:=]')
# Majors and minors of at most 10 digits (Linux's are 12 and 20 bits).
_DEVICE_RULE = re.compile(r'^(?P<type>[abc])\s+(?P<major>\d{1,10}|\*):(?P<minor>\d{1,10}|\*)\s+(?P<access>[rwm]+)$')

# The largest container configuration analyse_config reads (characters); LXC and Proxmox VE ones are a few KB.
MAX_CONFIG_CHARS = 1024 * 1024
# The most nvidia-smi output driver_from_smi reads (one short line per GPU is expected).
MAX_SMI_OUTPUT_CHARS = 64 * 1024


class LxcGpuError(Exception):
    """A problem the caller cannot go on with (bad input, not a host state)."""


def printable(name):
    """A name from the file system (str with surrogateescape'd bytes, or bytes) as text that can be reported:
    what is not UTF-8 becomes U+FFFD. None stays None."""
    return None if name is None else nvidia_smi.as_text(name)


def config_path(flavour, name, override=None):
    """Where a container's configuration lives: ``/var/lib/lxc/<name>/config`` for LXC,
    ``/etc/pve/lxc/<vmid>.conf`` for Proxmox VE; ``override`` wins when given."""
    if override:
        return override
    if flavour == 'lxc':
        return '/var/lib/lxc/%s/config' % name
    if flavour == 'proxmox':
        if not re.match(r'^\d+$', str(name)):
            raise LxcGpuError('a Proxmox container is named by its numeric VMID, not %r' % (name,))
        return '/etc/pve/lxc/%s.conf' % name
    raise LxcGpuError('unknown config flavour %r (one of %s)' % (flavour, ', '.join(FLAVOURS)))


def default_rootfs(name):
    """Where LXC keeps a container's root file system (a directory-backed one is always there).
    Proxmox VE mounts a stopped container's root there with ``pct mount <vmid>``; a ZFS or LVM
    backed root is otherwise seen from the host at its storage path (set ``rootfs`` to it)."""
    return '/var/lib/lxc/%s/rootfs' % name


def nvidia_majors(proc_devices):
    """``/proc/devices`` content -> ``{'nvidia': int|None, 'nvidia-uvm': int|None, 'nvidia-caps': int|None}``."""
    character = host_probe.parse_proc_devices(proc_devices)['character']
    return dict((name, character.get(name)) for name in (NVIDIA_MAJOR_NAME, UVM_MAJOR_NAME, CAPS_MAJOR_NAME))


def mount_nodes(dev_names, caps_dir_present=False):
    """Names found in the host's ``/dev`` -> the nodes to bind-mount, in config order:
    ``nvidia0..N`` (numeric order), then the control nodes present, then the caps directory."""
    names = set(dev_names or ())
    gpus = sorted((name for name in names if _GPU_NODE.match(name)), key=lambda name: int(_GPU_NODE.match(name).group('index')))
    control = [name for name in CONTROL_NODES if name in names]
    result = [{'name': name, 'kind': 'file'} for name in gpus + control]
    if caps_dir_present:
        result.append({'name': CAPS_DIR, 'kind': 'dir'})
    return result


def _line(flavour, key, value):
    # LXC's own files use "key = value"; Proxmox VE's pct.conf writes "key: value" for raw lxc.* keys.
    return '%s: %s' % (key, value) if flavour == 'proxmox' else '%s = %s' % (key, value)


# The device rule key LXC applies for each device controller version: on a host whose devices controller is a cgroup v1
# hierarchy LXC ignores lxc.cgroup2.* ("Ignoring cgroup2 limits on legacy cgroup system", seen on the development
# machine: docs/lxc-real-container.md), and on a pure cgroup v2 host it ignores lxc.cgroup.*.
CGROUP_DEVICE_KEYS = {'v1': 'lxc.cgroup.devices.allow', 'v2': 'lxc.cgroup2.devices.allow'}


def devices_cgroup(mountinfo):
    """``/proc/self/mountinfo`` content -> ``'v1'`` when a cgroup v1 hierarchy carrying the devices controller is mounted
    (a legacy or hybrid host), ``'v2'`` otherwise (the unified hierarchy alone: Proxmox VE 7+, Debian 11+ defaults);
    None when there is no content to read."""
    if mountinfo is None:
        return None
    for line in mountinfo.splitlines():
        _mount, separator, rest = line.partition(' - ')
        fields = rest.split()
        if separator and len(fields) >= 3 and fields[0] == 'cgroup' and 'devices' in fields[2].split(','):
            return 'v1'
    return 'v2'


def render_block(flavour, majors, nodes, cgroup='v2'):
    """The managed lines of one container's configuration.

    ``majors`` as from :func:`nvidia_majors`; ``nodes`` as from :func:`mount_nodes`; ``cgroup`` the host's devices
    controller version (:func:`devices_cgroup`), which decides the rule key. Mount sources are always the host's
    ``/dev`` paths. Raises LxcGpuError when the nvidia or nvidia-uvm major is unknown.
    """
    if cgroup not in CGROUP_DEVICE_KEYS:
        raise LxcGpuError('unknown cgroup version %r (v1 or v2)' % (cgroup,))
    if flavour not in FLAVOURS:
        raise LxcGpuError('unknown config flavour %r (one of %s)' % (flavour, ', '.join(FLAVOURS)))
    for required in (NVIDIA_MAJOR_NAME, UVM_MAJOR_NAME):
        if not majors.get(required):
            raise LxcGpuError('the %s major is unknown: it is not listed in /proc/devices' % required)
    lines = []
    seen = set()
    for name in (NVIDIA_MAJOR_NAME, UVM_MAJOR_NAME, CAPS_MAJOR_NAME):
        major = majors.get(name)
        if major and major not in seen:
            seen.add(major)
            lines.append(_line(flavour, CGROUP_DEVICE_KEYS[cgroup], 'c %d:* rwm' % major))
    for node in nodes:
        create = 'dir' if node['kind'] == 'dir' else 'file'
        lines.append(_line(flavour, 'lxc.mount.entry', '/dev/%s dev/%s none bind,optional,create=%s' % (node['name'], node['name'], create)))
    return lines


def split_managed_block(text, marker_begin, marker_end):
    """Config text -> (lines outside the managed block, lines inside it or None, index of the block's first
    line or None). Matches blockinfile: the block spans from the begin marker line to the end marker line."""
    lines = (text or '').splitlines()
    begin = end = None
    for index, line in enumerate(lines):
        if line.rstrip() == marker_begin and begin is None:
            begin = index
        elif line.rstrip() == marker_end and begin is not None:
            end = index
            break
    if begin is None or end is None:
        return lines, None, None
    return lines[:begin] + lines[end + 1:], lines[begin + 1:end], begin


def _section_start(lines):
    """Index of the first Proxmox snapshot/pending section header (``[name]``); None when there is none."""
    for index, line in enumerate(lines):
        if re.match(r'^\s*\[[^\]]+\]\s*$', line):
            return index
    return None


def character_majors(proc_devices):
    """``/proc/devices`` content -> ``{major: [names]}`` of every character device driver the host has loaded."""
    result = {}
    for section, major, name in host_probe.iter_proc_devices(proc_devices):
        if section == 'character':
            result.setdefault(major, []).append(name)
    return result


def key_value(line):
    """``key = value`` or ``key: value`` -> (key, value stripped); None for other lines (and for text holding a newline
    inside the value: one line at a time)."""
    match = _KEY_SEPARATOR.match(line)
    if not match:
        return None
    value = line[match.end():].strip()
    if '\n' in value:
        return None
    return match.group('key'), value


def classify_config_line(line, majors, known_majors=None, passthrough='raw'):
    """One config line outside the managed block -> None, or ``{'line', 'kind', 'reason'}`` when it is
    about NVIDIA passthrough and so duplicates the managed block (``duplicate``) or is left over from
    an earlier driver (``stale``: a device rule for a major no loaded driver uses, such as an old
    hard-coded nvidia-uvm major). ``known_majors`` as from :func:`character_majors`; None skips the
    stale check. With ``passthrough`` ``devices`` (Proxmox VE 8.1+) the GPUs go through devN entries, which are
    the role's own and never foreign; raw NVIDIA lines then duplicate those entries."""
    if line.lstrip().startswith('#'):
        return None
    pair = key_value(line)
    if pair is None:
        return None
    key, value = pair
    allows, handles = (('the devN entries pass through', 'the devN entries pass through') if passthrough == 'devices'
                       else ('the managed block allows', 'the managed block handles'))
    nvidia_majors_set = dict((major, name) for name, major in majors.items() if major)
    if key in ('lxc.cgroup2.devices.allow', 'lxc.cgroup.devices.allow'):
        rule = _DEVICE_RULE.match(value)
        if not rule or rule.group('major') == '*':
            return None
        major = int(rule.group('major'))
        if major in nvidia_majors_set:
            return {'line': line, 'kind': 'duplicate',
                    'reason': 'allows the %s major %d, which %s' % (nvidia_majors_set[major], major, allows)}
        if rule.group('type') == 'c' and known_majors is not None and major not in known_majors:
            return {'line': line, 'kind': 'stale',
                    'reason': 'allows character major %d, which no loaded driver uses on this host '
                              '(an nvidia-uvm or nvidia-caps major of an earlier boot or driver?)' % major}
        return None
    if key == 'lxc.mount.entry':
        source = value.split()[0] if value.split() else ''
        if re.match(r'^/dev/nvidia', source):
            return {'line': line, 'kind': 'duplicate', 'reason': 'mounts %s, which %s' % (source, handles)}
        return None
    if passthrough == 'devices':
        return None
    if re.match(r'^dev\d+$', key) and re.search(r'(^|[\s,=])/dev/nvidia', value):
        return {'line': line, 'kind': 'duplicate',
                'reason': 'passes %s through with a Proxmox device entry besides the managed block' % value.split(',')[0]}
    return None


def analyse_config(text, marker_begin, marker_end, wanted_lines, majors, flavour, known_majors=None, passthrough='raw'):
    """What blockinfile will find in a container's configuration, and what it cannot fix.

    Returns ``{'exists', 'block_present', 'block_current', 'foreign_entries', 'block_outside_main_section'}``:
    ``foreign_entries`` are NVIDIA passthrough lines outside the managed block (hand-written ones, an
    old hard-coded nvidia-uvm major, Proxmox devN: entries; see :func:`classify_config_line`) that
    the operator should remove;
    ``block_outside_main_section`` is true when, in a Proxmox config, the block sits below a snapshot
    section header, where Proxmox VE would not apply it to the running container. With ``passthrough``
    ``devices`` the block is what pve_devices.plan removes and the devN entries are the role's (see
    :func:`classify_config_line`).

    Raises LxcGpuError for a configuration longer than MAX_CONFIG_CHARS (no container's is; host_probe.read_text
    reads one character more than its limit so that such a file is seen as too long, not cut).
    """
    if text is not None and len(text) > MAX_CONFIG_CHARS:
        raise LxcGpuError('the container configuration is %d characters long, over the %d this check reads (MAX_CONFIG_CHARS); '
                          'it is not a configuration LXC or Proxmox VE wrote. Nothing was changed.' % (len(text), MAX_CONFIG_CHARS))
    exists = text is not None
    outside, inside, begin = split_managed_block(text or '', marker_begin, marker_end)
    foreign = []
    main_end = _section_start(outside) if flavour == 'proxmox' else None
    for index, line in enumerate(outside):
        if main_end is not None and index >= main_end:
            break  # snapshot sections keep their own (old) copy of the config; they are not applied
        entry = classify_config_line(line, majors, known_majors, passthrough)
        if entry:
            foreign.append(entry)
    outside_main = False
    if flavour == 'proxmox' and begin is not None:
        all_lines = (text or '').splitlines()
        first_section = _section_start(all_lines)
        outside_main = first_section is not None and first_section < begin
    return {
        'exists': exists,
        'block_present': inside is not None,
        'block_current': inside is not None and [line.rstrip() for line in inside] == list(wanted_lines),
        'foreign_entries': foreign,
        'block_outside_main_section': outside_main,
    }


# --- driver versions -----------------------------------------------------------------------------

def nvml_version_from_name(name):
    """``libnvidia-ml.so.580.159.04`` -> ``580.159.04``; None for the unversioned names and other files."""
    match = _NVML_FILE.match(os.path.basename(name or ''))
    return match.group('version') if match else None


def userspace_driver(listing):
    """Decide the container's user-space driver version from its library directories.

    ``listing``: list of ``{'dir', 'name', 'type': 'file'|'link', 'target': final target's base name or
    None}`` for every ``libnvidia-ml.so*`` entry, directories in search order (see :func:`scan_rootfs`).
    The version is the one the first ``libnvidia-ml.so.1`` found resolves to (what the loader opens);
    without any ``.so.1``, the version of the versioned files when they all agree.

    Returns ``{'version', 'source', 'versions_found', 'files', 'problem'}``; ``problem`` is None,
    ``'not_found'``, ``'ambiguous'`` (several versions and no .so.1 to choose) or ``'dangling'``
    (a .so.1 whose target is not a versioned library).
    """
    versions = []
    files = []
    for entry in listing:
        version = nvml_version_from_name(entry['name'])
        if version and entry.get('type') == 'file':
            files.append('%s/%s' % (entry['dir'].rstrip('/'), entry['name']))
            if version not in versions:
                versions.append(version)
    result = {'version': None, 'source': None, 'versions_found': versions, 'files': files, 'problem': None}
    for entry in listing:
        if entry['name'] == NVML_SONAME:
            where = '%s/%s' % (entry['dir'].rstrip('/'), entry['name'])
            version = nvml_version_from_name(entry.get('target')) if entry.get('type') == 'link' else None
            if version is None:
                result['problem'] = 'dangling'
                result['source'] = where
                return result
            result['version'] = version
            result['source'] = '%s -> libnvidia-ml.so.%s' % (where, version)
            return result
    if not versions:
        result['problem'] = 'not_found'
    elif len(versions) > 1:
        result['problem'] = 'ambiguous'
    else:
        result['version'] = versions[0]
        result['source'] = files[0]
    return result


def driver_from_smi(rc, stdout, stderr=''):
    """``nvidia-smi --query-gpu=driver_version --format=csv,noheader`` run in the container ->
    ``{'version', 'versions', 'error_kind', 'error', 'nvml_library_version'}``.

    On a mismatch nvidia-smi cannot report the driver version; it prints the user-space NVML version
    (``NVML library version: 535.161``), which is what the container has.
    """
    stdout = nvidia_smi.as_text(stdout)
    if len(stdout) > MAX_SMI_OUTPUT_CHARS:
        return {'version': None, 'versions': [], 'error_kind': 'unexpected_output', 'nvml_library_version': None,
                'error': 'nvidia-smi printed %d characters, over the %d read here (MAX_SMI_OUTPUT_CHARS); expected one '
                         'driver version per GPU' % (len(stdout), MAX_SMI_OUTPUT_CHARS)}
    error = nvidia_smi.classify_error(rc, stdout, stderr)
    if error:
        return {'version': None, 'versions': [], 'error_kind': error['kind'], 'error': error['message'],
                'nvml_library_version': error.get('nvml_library_version')}
    versions = []
    for line in (stdout or '').splitlines():
        value = line.strip()
        if value and value not in versions:
            versions.append(value)
    if len(versions) != 1 or not re.match(r'^\d+\.\d+(\.\d+)*$', versions[0]):
        return {'version': None, 'versions': versions, 'error_kind': 'unexpected_output',
                'error': 'expected one driver version, got: %s' % (' | '.join(versions) or 'nothing'), 'nvml_library_version': None}
    return {'version': versions[0], 'versions': versions, 'error_kind': None, 'error': None, 'nvml_library_version': None}


MISMATCH_TEXT = 'Failed to initialize NVML: Driver/library version mismatch'


def mismatch_message(container, host_version, container_version, where):
    """The refusal for a container whose user-space driver is not the host kernel module's version."""
    return (
        '%s: the user-space driver in the container is %s (%s) but the host kernel module is %s. '
        'CUDA and nvidia-smi in this container would fail with "%s": NVML only talks to a kernel module of '
        'exactly its own version. Fix: in the container, install the user-space driver of the host version '
        '(NVIDIA-Linux-x86_64-%s.run --no-kernel-module), or upgrade the host module to %s and reboot the host; '
        'then run this again. Nothing was changed.'
        % (container, container_version, where, host_version, MISMATCH_TEXT, host_version, container_version))


def host_problems(driver, majors, version_path, devices_path):
    """Refusals about the host itself, before any container is looked at; [] when it can pass GPUs through.

    ``driver`` as from host_probe.parse_driver_version_file, ``majors`` from :func:`nvidia_majors`.
    """
    problems = []
    if driver.get('problem'):
        problems.append({
            'code': 'unknown_kernel_module',
            'msg': 'cannot read the kernel module version from %s: %s. Nothing was changed.' % (version_path, driver['problem'])})
    elif not driver.get('present'):
        problems.append({
            'code': 'no_kernel_module',
            'msg': 'no NVIDIA kernel module is loaded on this host: %s does not exist. Fix: install the NVIDIA driver '
                   '(the open kernel module for Blackwell) on the host and load it (modprobe nvidia; modprobe nvidia-uvm), '
                   'or reboot into it. Nothing was changed.' % version_path})
    elif not driver.get('version'):
        problems.append({
            'code': 'unknown_kernel_module',
            'msg': 'cannot read the kernel module version from %s (first line: %r). Nothing was changed.'
                   % (version_path, driver.get('raw'))})
    if not majors.get(NVIDIA_MAJOR_NAME):
        problems.append({
            'code': 'no_nvidia_major',
            'msg': '%s lists no "nvidia" character device: the NVIDIA kernel module is not loaded. Fix: modprobe nvidia. '
                   'Nothing was changed.' % devices_path})
    if not majors.get(UVM_MAJOR_NAME):
        problems.append({
            'code': 'no_uvm',
            'msg': '%s lists no "nvidia-uvm" character device: the nvidia-uvm kernel module is not loaded, and CUDA '
                   'cannot run without it. Fix: modprobe nvidia-uvm on the host (and load it at boot, e.g. '
                   '/etc/modules-load.d/nvidia.conf), then check /dev/nvidia-uvm exists (nvidia-modprobe -u -c=0 creates '
                   'it). Nothing was changed.' % devices_path})
    return problems


def container_driver_problem(container, host_version, driver, method):
    """Refusal (or None) for one container's user-space driver, found by ``method`` (rootfs or exec).

    ``driver``: :func:`userspace_driver`'s answer for rootfs (plus ``'rootfs'``), :func:`driver_from_smi`'s
    for exec. Returns ``{'code', 'msg'}`` or None.
    """
    if method == 'rootfs':
        if driver.get('problem') == 'not_found':
            return {'code': 'no_userspace_driver',
                    'msg': '%s: no libnvidia-ml.so.<version> in the container root file system %s. Fix: install the user-space '
                           'driver of the host version in it (NVIDIA-Linux-x86_64-%s.run --no-kernel-module), or point rootfs at '
                           'its root as the host sees it (Proxmox VE: stop it and pct mount it, or its storage path). '
                           'Nothing was changed.'
                           % (container, driver.get('rootfs'), host_version)}
        if driver.get('problem') == 'ambiguous':
            return {'code': 'ambiguous_userspace_driver',
                    'msg': '%s: several user-space driver versions in the container (%s: %s) and no libnvidia-ml.so.1 to say '
                           'which is used. Fix: reinstall the user-space driver of the host version %s. Nothing was changed.'
                           % (container, ', '.join(driver['versions_found']), ', '.join(driver['files']), host_version)}
        if driver.get('problem') == 'dangling':
            return {'code': 'dangling_userspace_driver',
                    'msg': '%s: %s does not resolve to a libnvidia-ml.so.<version> file. Fix: reinstall the user-space driver '
                           'of the host version %s. Nothing was changed.' % (container, driver.get('source'), host_version)}
        if driver.get('version') != host_version:
            return {'code': 'driver_mismatch', 'msg': mismatch_message(container, host_version, driver.get('version'), driver.get('source'))}
        return None
    if method == 'exec':
        if driver.get('error_kind') == 'driver_mismatch':
            found = driver.get('nvml_library_version') or 'another version'
            return {'code': 'driver_mismatch',
                    'msg': mismatch_message(container, host_version, found, 'nvidia-smi in the container: %s' % driver.get('error'))}
        if driver.get('error_kind'):
            return {'code': 'exec_failed',
                    'msg': '%s: nvidia-smi in the container failed (%s: %s), so its user-space driver version is unknown. '
                           'Fix: start the container, install the user-space driver of the host version %s in it, or use '
                           'driver_check: rootfs. Nothing was changed.'
                           % (container, driver['error_kind'], driver.get('error'), host_version)}
        if driver.get('version') != host_version:
            return {'code': 'driver_mismatch',
                    'msg': mismatch_message(container, host_version, driver.get('version'), 'nvidia-smi in the container')}
        return None
    return None


# --- thin readers: they only collect; the decisions are above -----------------------------------

def list_dev(dev_dir):
    """Names of the ``nvidia*`` entries of ``dev_dir`` that are character devices or (in tests) files, and
    whether ``nvidia-caps`` is a directory."""
    try:
        names = os.listdir(dev_dir)
    except (IOError, OSError):
        return [], False
    present = []
    caps = False
    for name in names:
        if not name.startswith('nvidia'):
            continue
        path = os.path.join(dev_dir, name)
        if name == CAPS_DIR:
            caps = os.path.isdir(path)
            continue
        if os.path.exists(path) and not os.path.isdir(path):
            present.append(printable(name))
    return sorted(present), caps


def device_nodes(entries):
    """``[{'name', 'mode'}]`` found in the host's ``/dev`` (``nvidia-caps/<node>`` for the capability nodes) -> the
    nodes passed through one by one (Proxmox VE devN entries), in config order: ``nvidia0..N`` (numeric order),
    the control nodes present, then the capability nodes (sorted). Other names are dropped."""
    by_name = dict((entry['name'], entry) for entry in entries)
    ordered = [entry['name'] for entry in mount_nodes(by_name) if entry['kind'] == 'file']
    caps = sorted(name for name in by_name if name.startswith(CAPS_DIR + '/') and '/' not in name[len(CAPS_DIR) + 1:])
    return [{'name': name, 'mode': by_name[name]['mode']} for name in ordered + caps]


def stat_dev(dev_dir):
    """The ``nvidia*`` entries of ``dev_dir`` and of its ``nvidia-caps`` directory that are not directories, with
    their permission bits: ``[{'name', 'mode'}]`` (character devices on a host; plain files in tests)."""
    found = []
    for sub in ('', CAPS_DIR):
        directory = os.path.join(dev_dir, sub) if sub else dev_dir
        try:
            names = os.listdir(directory)
        except (IOError, OSError):
            continue
        for name in names:
            if not sub and not name.startswith('nvidia'):
                continue
            path = os.path.join(directory, name)
            try:
                status = os.stat(path)
            except (IOError, OSError):
                continue
            if stat.S_ISDIR(status.st_mode):
                continue
            found.append({'name': printable(sub + '/' + name if sub else name), 'mode': stat.S_IMODE(status.st_mode)})
    return sorted(found, key=lambda entry: entry['name'])


def _resolve_in_root(root, directory, name, hops=16):
    """Follow a symbolic link inside ``root`` (absolute targets are inside the container) -> (type, final base name)."""
    path = os.path.join(directory, name)
    for _dummy in range(hops):
        if not os.path.islink(path):
            if os.path.isfile(path):
                return 'file', os.path.basename(path)
            return 'missing', os.path.basename(path)
        target = os.readlink(path)
        if target.startswith('/'):
            path = os.path.join(root, target.lstrip('/'))
        else:
            path = os.path.normpath(os.path.join(os.path.dirname(path), target))
    return 'loop', None


def scan_rootfs(rootfs, lib_dirs=DEFAULT_LIB_DIRS):
    """List every ``libnvidia-ml.so*`` in the container's library directories, links resolved inside the rootfs."""
    listing = []
    for lib_dir in lib_dirs:
        directory = os.path.join(rootfs, lib_dir.strip('/'))
        try:
            names = sorted(os.listdir(directory))
        except (IOError, OSError):
            continue
        for name in names:
            if not name.startswith('libnvidia-ml.so'):
                continue
            path = os.path.join(directory, name)
            if os.path.islink(path):
                kind, final = _resolve_in_root(rootfs, directory, name)
                listing.append({'dir': printable('/' + lib_dir.strip('/')), 'name': printable(name), 'type': 'link',
                                'target': printable(final) if kind == 'file' else None})
            elif os.path.isfile(path):
                listing.append({'dir': printable('/' + lib_dir.strip('/')), 'name': printable(name), 'type': 'file', 'target': None})
    return listing

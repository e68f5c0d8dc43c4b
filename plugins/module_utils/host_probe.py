# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""What the host looks like from the inside, for the GPU preflight: container kind, NVIDIA device
nodes, the loaded NVIDIA kernel module.

The decisions are pure functions over file contents (unit-tested with recorded text); the readers
at the bottom only collect those contents and never raise on a missing or unreadable file.

Container evidence, strongest first:

* ``/run/systemd/container`` (written by systemd-nspawn, LXC, podman, docker with systemd inside):
  the manager's name, e.g. ``lxc``;
* ``container=`` in PID 1's environment (``/proc/1/environ``, NUL-separated; root only);
* ``/run/.containerenv`` (podman) and ``/.dockerenv`` (docker);
* PID 1's cgroup paths: ``/lxc/<name>`` or ``lxc.payload.<name>`` (LXC, cgroup v1 and v2),
  ``/docker/<id>`` or ``docker-<id>.scope``, ``libpod-<id>``, ``machine.slice/machine-<name>.scope``
  (systemd-nspawn). A cgroup v2 namespace shows ``0::/`` and says nothing.
"""

from __future__ import annotations

import os
import re
import stat

CONTAINER_KINDS = ('lxc', 'docker', 'podman', 'systemd-nspawn', 'other', 'none')

# /run/systemd/container and container= values -> kind.
_MANAGER_KINDS = {
    'lxc': 'lxc',
    'lxc-libvirt': 'lxc',
    'docker': 'docker',
    'podman': 'podman',
    'systemd-nspawn': 'systemd-nspawn',
}

_CGROUP_RULES = (
    ('lxc', re.compile(r'(^|/)lxc/|lxc\.payload')),
    ('docker', re.compile(r'(^|/)docker/|docker-[0-9a-f]{12,}\.scope')),
    ('podman', re.compile(r'libpod[-_]')),
    ('systemd-nspawn', re.compile(r'machine\.slice/machine-[^/]+\.scope')),
)

# /dev/nvidia* nodes that matter for CUDA: the per-GPU nodes, the control node, UVM, modeset, caps.
_GPU_NODE = re.compile(r'^nvidia(?P<index>\d+)$')
NVIDIA_CONTROL_NODES = ('nvidiactl', 'nvidia-uvm', 'nvidia-uvm-tools', 'nvidia-modeset')

# /proc/driver/nvidia/version, e.g.
#   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (...)  <date>
#   NVRM version: NVIDIA UNIX x86_64 Kernel Module  352.63  Sat Nov  7 21:25:42 PST 2015
_NVRM = re.compile(
    r'NVRM version:\s*NVIDIA UNIX\s+(?P<open>Open\s+)?(?:(?P<arch1>[A-Za-z0-9_]+)\s+)?Kernel Module'
    r'(?:\s+for\s+(?P<arch2>[A-Za-z0-9_]+))?\s+(?P<version>\d+(?:\.\d+)+)'
)
_GCC = re.compile(r'^GCC version:\s*(?P<gcc>.+?)\s*$', re.MULTILINE)


def parse_environ(content):
    """NUL-separated ``/proc/<pid>/environ`` (str or bytes) -> dict."""
    if content is None:
        return {}
    if isinstance(content, bytes):
        content = content.decode('utf-8', 'replace')
    result = {}
    for item in content.split('\0'):
        if '=' in item:
            key, value = item.split('=', 1)
            result[key] = value
    return result


def _manager_kind(value):
    value = (value or '').strip().lower()
    if not value:
        return None
    return _MANAGER_KINDS.get(value, 'other')


def container_kind_from_cgroup(content):
    """Kind named by the cgroup paths of ``/proc/1/cgroup`` (or ``/proc/self/cgroup``); None if none."""
    for line in (content or '').splitlines():
        path = line.split(':', 2)[-1]
        for kind, pattern in _CGROUP_RULES:
            if pattern.search(path):
                return kind
    return None


def detect_container(run_systemd_container=None, proc1_environ=None, proc1_cgroup=None,
                     dockerenv_exists=False, containerenv_exists=False):
    """Decide whether we run in a container and which kind.

    Every argument is optional file content (None = file absent or unreadable), the two ``*_exists``
    are booleans. Returns ``{'is_container': bool, 'kind': one of CONTAINER_KINDS, 'evidence': [..],
    'manager': raw manager name or None}``.
    """
    evidence = []
    kind = None
    manager = None
    if run_systemd_container is not None and run_systemd_container.strip():
        manager = run_systemd_container.strip()
        kind = _manager_kind(manager)
        evidence.append('/run/systemd/container=%s' % manager)
    environ = parse_environ(proc1_environ)
    if environ.get('container'):
        env_kind = _manager_kind(environ['container'])
        evidence.append('/proc/1/environ container=%s' % environ['container'])
        if kind is None:
            kind, manager = env_kind, environ['container']
    if containerenv_exists:
        evidence.append('/run/.containerenv exists')
        if kind is None:
            kind = 'podman'
    if dockerenv_exists:
        evidence.append('/.dockerenv exists')
        if kind is None:
            kind = 'docker'
    cgroup_kind = container_kind_from_cgroup(proc1_cgroup)
    if cgroup_kind is not None:
        evidence.append('/proc/1/cgroup names %s' % cgroup_kind)
        if kind is None:
            kind = cgroup_kind
    if kind is None:
        kind = 'none'
    return {'is_container': kind != 'none', 'kind': kind, 'evidence': evidence, 'manager': manager}


def iter_proc_devices(content):
    """``/proc/devices`` -> ``(section, major, name)`` for every driver line, in file order.

    ``section`` is ``'character'`` or ``'block'``; lines before the first section header, headers,
    blank lines and lines without a numeric major are skipped. None (file absent) yields nothing.
    """
    section = None
    for line in (content or '').splitlines():
        line = line.strip()
        if line.startswith('Character devices'):
            section = 'character'
            continue
        if line.startswith('Block devices'):
            section = 'block'
            continue
        parts = line.split(None, 1)
        if section and len(parts) == 2 and parts[0].isdigit():
            yield section, int(parts[0]), parts[1]


def parse_proc_devices(content):
    """``/proc/devices`` -> ``{'character': {name: major}, 'block': {name: major}}`` (first major wins per name)."""
    result = {'character': {}, 'block': {}}
    for section, major, name in iter_proc_devices(content):
        result[section].setdefault(name, major)
    return result


def describe_device_node(path, st_mode, st_rdev=0, is_symlink=False):
    """One ``/dev/nvidia*`` entry -> ``{'path', 'name', 'type', 'major', 'minor', 'is_symlink'}``.

    ``type`` is ``char`` for a character device and ``file`` for a regular file: an LXC
    ``lxc.mount.entry ... bind,optional,create=file`` whose host node is missing leaves an empty
    regular file behind, which looks present but does not work. major/minor only for device nodes.
    """
    if stat.S_ISCHR(st_mode):
        kind = 'char'
    elif stat.S_ISBLK(st_mode):
        kind = 'block'
    elif stat.S_ISREG(st_mode):
        kind = 'file'
    elif stat.S_ISDIR(st_mode):
        kind = 'directory'
    else:
        kind = 'other'
    node = {'path': path, 'name': os.path.basename(path), 'type': kind, 'major': None, 'minor': None, 'is_symlink': bool(is_symlink)}
    if kind in ('char', 'block'):
        node['major'] = os.major(st_rdev)
        node['minor'] = os.minor(st_rdev)
    return node


def summarize_device_nodes(nodes):
    """Summary of described nodes: GPU indices with a working char node, control nodes, caps, broken entries."""
    gpus = []
    control = dict((name, False) for name in NVIDIA_CONTROL_NODES)
    caps = []
    not_char = []
    majors = {}
    for node in nodes:
        name = node['name']
        relative = node['path'].split('/dev/', 1)[-1]
        if node['type'] not in ('char', 'directory'):
            not_char.append(node['path'])
        if node['type'] != 'char':
            continue
        match = _GPU_NODE.match(name)
        if match and '/' not in relative:
            gpus.append(int(match.group('index')))
            majors.setdefault('nvidia', node['major'])
        elif name in control and '/' not in relative:
            control[name] = True
            majors.setdefault(name, node['major'])
        elif relative.startswith('nvidia-caps/'):
            caps.append(name)
            majors.setdefault('nvidia-caps', node['major'])
    return {
        'gpu_indices': sorted(gpus),
        'control': control,
        'caps': sorted(caps),
        'not_char_device': sorted(not_char),
        'majors': majors,
    }


def parse_driver_version_file(content):
    """``/proc/driver/nvidia/version`` -> ``{'present', 'version', 'flavour', 'arch', 'gcc', 'raw'}``.

    flavour is ``open`` for "NVIDIA UNIX Open Kernel Module" (the one Blackwell needs) and
    ``proprietary`` for the closed module ("NVIDIA UNIX x86_64 Kernel Module"); None if unknown.
    """
    result = {'present': content is not None, 'version': None, 'flavour': None, 'arch': None, 'gcc': None, 'raw': None}
    if not content:
        return result
    first = content.splitlines()[0].strip() if content.strip() else ''
    result['raw'] = first or None
    match = _NVRM.search(content)
    if match:
        result['version'] = match.group('version')
        result['flavour'] = 'open' if match.group('open') else 'proprietary'
        result['arch'] = match.group('arch2') or match.group('arch1')
    gcc = _GCC.search(content)
    if gcc:
        result['gcc'] = gcc.group('gcc')
    return result


# Thin readers below: they only collect file contents; all decisions are above.

def read_text(path, binary=False, limit=1024 * 1024):
    """Content of ``path`` (str, or bytes with binary=True); None when absent or unreadable."""
    try:
        with open(path, 'rb') as handle:
            data = handle.read(limit)
    except (IOError, OSError):
        return None
    if binary:
        return data
    return data.decode('utf-8', 'replace')


def probe_container(root='/'):
    """Read the container evidence under ``root`` and return :func:`detect_container`'s answer."""
    def _path(*parts):
        return os.path.join(root, *parts)

    return detect_container(
        run_systemd_container=read_text(_path('run', 'systemd', 'container')),
        proc1_environ=read_text(_path('proc', '1', 'environ'), binary=True),
        proc1_cgroup=read_text(_path('proc', '1', 'cgroup')),
        dockerenv_exists=os.path.exists(_path('.dockerenv')),
        containerenv_exists=os.path.exists(_path('run', '.containerenv')),
    )


def scan_device_nodes(dev_dir='/dev'):
    """Describe every ``nvidia*`` entry of ``dev_dir`` and of ``dev_dir/nvidia-caps``; sorted by path."""
    nodes = []
    for directory, prefix in ((dev_dir, 'nvidia'), (os.path.join(dev_dir, 'nvidia-caps'), '')):
        try:
            names = os.listdir(directory)
        except (IOError, OSError):
            continue
        for name in names:
            if not name.startswith(prefix):
                continue
            path = os.path.join(directory, name)
            try:
                is_symlink = os.path.islink(path)
                info = os.stat(path)
            except (IOError, OSError):
                continue
            nodes.append(describe_device_node(path, info.st_mode, info.st_rdev, is_symlink))
    nodes.sort(key=lambda node: node['path'])
    return nodes


def probe_kernel_module(proc_dir='/proc'):
    """Read ``/proc/driver/nvidia/version`` and parse it."""
    return parse_driver_version_file(read_text(os.path.join(proc_dir, 'driver', 'nvidia', 'version')))

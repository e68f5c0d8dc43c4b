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

What is parsed here comes from the host and is read as root: every parser is linear in its input (no regular
expression that can backtrack over a long line; timed on 100,000-character lines in
tests/unit/plugins/module_utils/test_host_probe.py), numbers are bounded in length before ``int()``, the driver
version file is refused beyond :data:`MAX_VERSION_FILE_CHARS`, and file names that are not UTF-8 are reported
with U+FFFD in place of the bytes that are not.
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
_GCC_PREFIX = 'GCC version:'
_SURROGATES = re.compile('[\ud800-\udfff]')

# The largest /proc/driver/nvidia/version parse_driver_version_file reads (characters); the real one is 2 lines,
# under 300 characters. A longer content is refused (``problem``), not searched.
MAX_VERSION_FILE_CHARS = 64 * 1024
# A major number in /proc/devices has at most 4 digits (majors are 12 bits); 9 leaves room.
_MAX_MAJOR_DIGITS = 9
# read_text's default limit.
READ_LIMIT = 1024 * 1024


def printable(text):
    """A name from the file system (str holding surrogateescape'd bytes, or bytes) as reportable text: what is not
    UTF-8 becomes U+FFFD. None stays None."""
    if text is None:
        return None
    if isinstance(text, bytes):
        return text.decode('utf-8', 'replace')
    return _SURROGATES.sub('\ufffd', text)


def _ascii_number(text, digits):
    """int(text) for 1 to ``digits`` ASCII digits, else None (str.isdigit() also takes '²', which int() refuses,
    and int() refuses more than 4300 digits)."""
    if text and len(text) <= digits and text.isascii() and text.isdigit():
        return int(text)
    return None


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
        major = _ascii_number(parts[0], _MAX_MAJOR_DIGITS) if len(parts) == 2 else None
        if section and major is not None:
            yield section, major, parts[1]


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


def _gcc_version(content):
    """What ``^GCC version:\\s*(.+?)\\s*$`` (MULTILINE) found, without its lazy ``.+?``, which rescanned a run of
    blanks from every position (quadratic): after the first line-initial ``GCC version:``, blanks and newlines are
    skipped and the rest of that line, stripped, is the answer. Only the first such line counts: when nothing but
    blanks follows it, nothing follows any later one either, and the answer is None (the former pattern answered
    with the last of those blanks)."""
    if content.startswith(_GCC_PREFIX):
        start = 0
    else:
        start = content.find('\n' + _GCC_PREFIX)
        if start < 0:
            return None
        start += 1
    value = content[start + len(_GCC_PREFIX):].lstrip().split('\n', 1)[0].strip()
    return value or None


def parse_driver_version_file(content):
    """``/proc/driver/nvidia/version`` -> ``{'present', 'version', 'flavour', 'arch', 'gcc', 'raw', 'problem'}``.

    flavour is ``open`` for "NVIDIA UNIX Open Kernel Module" (the one Blackwell needs) and
    ``proprietary`` for the closed module ("NVIDIA UNIX x86_64 Kernel Module"); None if unknown.
    ``problem`` is None, or why the content was not read: longer than MAX_VERSION_FILE_CHARS.
    ``raw`` (the first line) is cut to 200 characters.
    """
    result = {'present': content is not None, 'version': None, 'flavour': None, 'arch': None, 'gcc': None, 'raw': None,
              'problem': None}
    if not content:
        return result
    content = printable(content)
    first = content.split('\n', 1)[0].splitlines()
    result['raw'] = (first[0].strip()[:200] or None) if first else None
    if len(content) > MAX_VERSION_FILE_CHARS:
        result['problem'] = ('it is %d characters long, over the %d read (MAX_VERSION_FILE_CHARS); the real file is two short lines'
                             % (len(content), MAX_VERSION_FILE_CHARS))
        return result
    match = _NVRM.search(content)
    if match:
        result['version'] = match.group('version')
        result['flavour'] = 'open' if match.group('open') else 'proprietary'
        result['arch'] = match.group('arch2') or match.group('arch1')
    result['gcc'] = _gcc_version(content)
    return result


# Thin readers below: they only collect file contents; all decisions are above.

def read_text(path, binary=False, limit=READ_LIMIT):
    """Content of ``path`` (str, or bytes with binary=True); None when absent or unreadable.

    Reads at most ``limit`` + 1 bytes: a content longer than ``limit`` means the file is larger than that, and the
    parsers refuse it (instead of reading a file cut at the limit as if it were whole). Text is decoded as UTF-8
    with U+FFFD for what is not UTF-8.
    """
    try:
        with open(path, 'rb') as handle:
            data = handle.read(limit + 1)
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
            nodes.append(describe_device_node(printable(path), info.st_mode, info.st_rdev, is_symlink))
    nodes.sort(key=lambda node: node['path'])
    return nodes


def probe_kernel_module(proc_dir='/proc'):
    """Read ``/proc/driver/nvidia/version`` and parse it."""
    return parse_driver_version_file(read_text(os.path.join(proc_dir, 'driver', 'nvidia', 'version')))

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: lxc_gpu_info
short_description: Read what an LXC or Proxmox VE host needs to pass its NVIDIA GPUs through to containers
version_added: 1.0.0
description:
  - Runs on the LXC (or Proxmox VE) host, not in a container.
  - Reads the loaded NVIDIA kernel module from C(/proc/driver/nvidia/version) (open or proprietary module),
    the majors of C(nvidia), C(nvidia-uvm) and C(nvidia-caps) from C(/proc/devices) (the last two are
    dynamic and never assumed), and the C(/dev/nvidia*) nodes to bind-mount.
  - For every container given, renders the configuration lines that pass the GPUs through (cgroup2
    device rules and bind mounts, in the container's config syntax), reads its configuration to say
    whether the managed block is present and current and which hand-written NVIDIA lines sit outside it,
    and finds the version of the user-space driver inside the container.
  - For Proxmox VE containers it also decides how the GPUs are passed through (O(passthrough)); on Proxmox VE 8.1
    or later (read from C(pveversion)) that is one C(devN:) entry per device node (RV(containers[].devices)), which
    C(pct set) and snapshots keep, written by M(gpuops.sglang_stack.lxc_gpu_devices); otherwise the raw lines.
  - The user-space driver version comes from the C(libnvidia-ml.so.<version>) that the container's
    C(libnvidia-ml.so.1) resolves to (O(containers[].driver_check=rootfs)), or from
    C(nvidia-smi --query-gpu=driver_version) run with C(lxc-attach) or C(pct exec) (O(containers[].driver_check=exec)).
  - Never fails because of what it finds; every refusal is reported in RV(problems) with the cause and the
    fix, for the caller (the P(gpuops.sglang_stack.lxc_gpu_host#role) role) to act on.
  - Reads only; changes nothing (C(exec) runs nvidia-smi in the container, which changes nothing either).
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
  - gpuops.sglang_stack.lxc_marker
options:
  proc_devices_path:
    description: The host's device list. Another path serves tests with a recorded copy.
    type: path
    default: /proc/devices
  driver_version_path:
    description: The loaded kernel module's version file. Another path serves tests with a recorded copy.
    type: path
    default: /proc/driver/nvidia/version
  dev_dir:
    description:
      - Directory searched for the C(nvidia*) device nodes.
      - The rendered mount entries always name C(/dev/<node>), whatever this says.
    type: path
    default: /dev
  containers:
    description: The GPU containers of this host.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Container name (LXC) or VMID (Proxmox VE).
        type: str
        required: true
      flavour:
        description:
          - V(lxc) for C(/var/lib/lxc/<name>/config) with C(key = value) lines.
          - "V(proxmox) for C(/etc/pve/lxc/<vmid>.conf) with C(key: value) lines."
          - Default O(flavour).
        type: str
        choices: [lxc, proxmox]
      config_path:
        description: The container's configuration file; default by O(containers[].flavour).
        type: path
      rootfs:
        description:
          - The container's root file system as seen from the host; default C(/var/lib/lxc/<name>/rootfs).
          - Proxmox VE mounts a stopped container's root there with C(pct mount <vmid>); otherwise set its storage path
            as seen from the host (for example C(/rpool/data/subvol-<vmid>-disk-0) for ZFS).
        type: path
      driver_check:
        description:
          - How the container's user-space driver version is found.
          - V(rootfs) reads the C(libnvidia-ml.so*) files in its root file system.
          - V(exec) runs C(nvidia-smi) inside it (C(lxc-attach) or C(pct exec)); the container must run.
          - V(none) skips the check.
          - Default O(driver_check).
        type: str
        choices: [rootfs, exec, none]
  flavour:
    description: The configuration flavour of the containers that do not name one.
    type: str
    choices: [lxc, proxmox]
    default: lxc
  driver_check:
    description: How the user-space driver is found in the containers that do not say.
    type: str
    choices: [rootfs, exec, none]
    default: rootfs
  lib_dirs:
    description: The container's 64-bit library directories (relative to its root), searched in this order.
    type: list
    elements: str
    default: [usr/lib/x86_64-linux-gnu, lib/x86_64-linux-gnu, usr/lib64, lib64, usr/local/nvidia/lib64, usr/lib]
  passthrough:
    description:
      - How the GPUs of the Proxmox VE containers are passed through.
      - V(auto) - C(devN:) entries when C(pveversion) says Proxmox VE 8.1 or later, raw C(lxc.*) lines when it says
        an older version or cannot be run or read. Plain LXC containers always take raw lines.
      - V(devices) - C(devN:) entries whatever the version (for a host where C(pveversion) is not on the path);
        refused (V(devices_unsupported)) for a plain LXC container.
      - V(raw) - raw C(lxc.*) lines.
    type: str
    choices: [auto, devices, raw]
    default: auto
  cgroup:
    description:
      - The version of the host's devices cgroup controller, which decides the device rule key of the raw lines.
      - V(auto) reads O(mountinfo_path) - V(v1) (C(lxc.cgroup.devices.allow)) when a cgroup v1 hierarchy carries the
        devices controller, V(v2) (C(lxc.cgroup2.devices.allow)) otherwise. LXC ignores the key of the other version.
    type: str
    choices: [auto, v1, v2]
    default: auto
  mountinfo_path:
    description: The mount table read for O(cgroup=auto). Another path serves tests with a recorded copy.
    type: path
    default: /proc/self/mountinfo
  device_gid:
    description:
      - The group id (inside the container) given to every passed-through node in C(devN:) mode, C(gid=) of the entry.
      - Omitted when not set, so Proxmox VE makes the nodes root's group. Their mode is always the host node's.
    type: int
notes:
  - The configuration is applied by LXC at the next start of the container; this module does not restart anything.
seealso:
  - module: ansible.builtin.blockinfile
  - module: gpuops.sglang_stack.lxc_gpu_devices
  - name: Proxmox VE container device passthrough (devN)
    description: The C(devN) option of C(pct) and its C(mode), C(uid), C(gid) and C(deny-write) properties.
    link: https://pve.proxmox.com/pve-docs/pct.1.html
  - name: Proxmox VE Linux Container configuration
    description: The pct.conf format, raw C(lxc.*) keys included.
    link: https://pve.proxmox.com/wiki/Linux_Container#pct_configuration
"""

EXAMPLES = r"""
- name: Read the host and its GPU containers
  gpuops.sglang_stack.lxc_gpu_info:
    containers:
      - name: "101"
        flavour: proxmox
      - name: gpu-ct-02
        flavour: lxc
        driver_check: exec
  register: lxc_gpu

- name: Refuse with every cause found
  ansible.builtin.fail:
    msg: "{{ lxc_gpu.problems | map(attribute='msg') | join(' ') }}"
  when: lxc_gpu.problems | length > 0

- name: Read recorded copies instead of the live /proc and /dev (tests)
  gpuops.sglang_stack.lxc_gpu_info:
    proc_devices_path: /srv/standin/proc-devices
    driver_version_path: /srv/standin/driver-version
    dev_dir: /srv/standin/dev
  register: lxc_gpu
"""

RETURN = r"""
kernel_module:
  description:
    - The loaded NVIDIA kernel module, from O(driver_version_path), as M(gpuops.sglang_stack.gpu_info) returns it.
    - C(problem) is V(null), or why the file was not parsed (longer than 64 KiB; the real file is two lines); the host
      problem V(unknown_kernel_module) then quotes it.
  returned: always
  type: dict
  sample: {present: true, version: "580.159.04", flavour: open, arch: x86_64, gcc: "gcc version 15.3.0 (GCC)",
           raw: "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)", problem: null}
majors:
  description: The majors read from O(proc_devices_path); V(null) for a name it does not list.
  returned: always
  type: dict
  sample: {nvidia: 195, nvidia-uvm: 238, nvidia-caps: 241}
mount_nodes:
  description: The nodes found under O(dev_dir) that are bind-mounted, in config order.
  returned: always
  type: list
  elements: dict
  sample: [{name: nvidia0, kind: file}, {name: nvidiactl, kind: file}, {name: nvidia-uvm, kind: file},
           {name: nvidia-uvm-tools, kind: file}, {name: nvidia-caps, kind: dir}]
proxmox:
  description:
    - What C(pveversion) said, when a Proxmox VE container with O(passthrough=auto) made it worth asking. C(found)
      (the command exists), C(version) (of pve-manager; V(null) when not read), C(raw) (its first line), C(rc).
  returned: always
  type: dict
  sample: {found: true, version: "8.1.3", raw: "pve-manager/8.1.3/b46aac3b42da5d15 (running kernel: 6.5.11-8-pve)", rc: 0}
device_nodes:
  description: The nodes under O(dev_dir) passed through one by one in C(devN:) mode, with their permission bits.
  returned: always
  type: list
  elements: dict
  sample: [{name: nvidia0, mode: 438}, {name: nvidia-caps/nvidia-cap1, mode: 256}]
cgroup:
  description: The devices controller version the raw lines are written for (V(v1) or V(v2)), and how it was decided.
  returned: always
  type: dict
  sample: {devices: v2, source: "detected in /proc/self/mountinfo"}
marker_lines:
  description: The begin and end lines of the managed block.
  returned: always
  type: list
  elements: str
  sample: ["# BEGIN gpuops.sglang_stack lxc_gpu_host", "# END gpuops.sglang_stack lxc_gpu_host"]
containers:
  description: One entry per container, in the order given.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Container name or VMID.
      type: str
      sample: "101"
    flavour:
      description: V(lxc) or V(proxmox).
      type: str
      sample: proxmox
    config_path:
      description: Its configuration file.
      type: str
      sample: /etc/pve/lxc/101.conf
    passthrough:
      description: V(devices) (C(devN:) entries) or V(raw) (the managed block of C(lxc.*) lines).
      type: str
      sample: devices
    passthrough_reason:
      description: Why RV(containers[].passthrough) was chosen.
      type: str
      sample: Proxmox VE 8.1.3 reads devN entries (8.1 or later)
    devices:
      description:
        - In C(devN:) mode, the entries that must exist (C(path), C(mode), C(gid) when O(device_gid) is set), in order;
          empty in raw mode and when the host cannot pass GPUs through.
      type: list
      elements: dict
      sample: [{path: /dev/nvidia0, mode: "0666"}, {path: /dev/nvidiactl, mode: "0666"}]
    block:
      description: The lines the managed block must hold; empty in C(devN:) mode and when the host cannot pass GPUs through.
      type: list
      elements: str
      sample: ["lxc.cgroup2.devices.allow: c 195:* rwm", "lxc.cgroup2.devices.allow: c 238:* rwm",
               "lxc.mount.entry: /dev/nvidia0 dev/nvidia0 none bind,optional,create=file"]
    config:
      description:
        - What the configuration holds now. C(exists), C(block_present), C(block_current) (the block already says
          RV(containers[].block)), C(foreign_entries) (NVIDIA lines outside the block, each with C(line), C(kind) and
          C(reason); C(kind) is V(duplicate) for a line the block supersedes, V(stale) for a device rule of a major no
          loaded driver uses), C(block_outside_main_section) (Proxmox VE, block below a snapshot section);
          C(devices_current) (C(devN:) mode - the entries are already as RV(containers[].devices) says and no managed
          block is left; V(null) in raw mode).
      type: dict
      sample: {exists: true, block_present: false, block_current: false, foreign_entries: [], block_outside_main_section: false}
    driver_check:
      description: How the user-space driver was looked for.
      type: str
      sample: rootfs
    driver:
      description:
        - The container's user-space driver. C(version) (V(null) when unknown) and, for V(rootfs), C(source) (the
          library that decided), C(versions_found), C(files), C(problem), C(rootfs); for V(exec), C(command),
          C(error_kind), C(error), C(nvml_library_version).
      type: dict
      sample: {version: "580.159.04", source: "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 -> libnvidia-ml.so.580.159.04",
               versions_found: ["580.159.04"], problem: null, rootfs: /var/lib/lxc/101/rootfs}
    driver_match:
      description: Whether the user-space driver is the host kernel module's version; V(null) when not checked.
      type: bool
      sample: true
problems:
  description:
    - Every refusal found, host first. Each has C(code), C(msg) (cause and fix) and C(container) (V(null) for the host).
    - Codes - V(no_kernel_module), V(unknown_kernel_module), V(no_nvidia_major), V(no_uvm), V(no_config),
      V(driver_mismatch), V(no_userspace_driver), V(ambiguous_userspace_driver), V(dangling_userspace_driver),
      V(exec_failed), V(devices_unsupported), V(no_free_device).
  returned: always
  type: list
  elements: dict
  sample: [{code: no_uvm, container: null, msg: "/proc/devices lists no \"nvidia-uvm\" character device ..."}]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import host_probe
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import lxc_gpu
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import pve_devices


def _pveversion(module):
    """What pveversion says (read only; prints pve-manager/<version>/<commit> (running kernel: ...))."""
    path = module.get_bin_path('pveversion')
    if path is None:
        return {'found': False, 'version': None, 'raw': None, 'rc': None, 'tuple': None}
    try:
        rc, out, err = module.run_command([path], environ_update={'LC_ALL': 'C'})
    except (IOError, OSError) as exc:
        rc, out, err = 127, '', str(exc)
    parsed = pve_devices.parse_pveversion(out if rc == 0 else '')
    if rc != 0:
        parsed['raw'] = ('rc %s: %s' % (rc, (err or out or '').strip()))[:200]
    return dict(parsed, found=True, rc=rc)


def _exec_driver(module, container):
    """nvidia-smi inside the container, through the flavour's own tool."""
    query = ['nvidia-smi', '--query-gpu=driver_version', '--format=csv,noheader']
    if container['flavour'] == 'proxmox':
        tool, args = 'pct', ['exec', container['name'], '--']
    else:
        tool, args = 'lxc-attach', ['-n', container['name'], '--']
    path = module.get_bin_path(tool)
    if path is None:
        return {'version': None, 'versions': [], 'error_kind': 'exec_failed', 'error': '%s is not installed on this host' % tool,
                'nvml_library_version': None, 'command': [tool] + args + query}
    command = [path] + args + query
    try:
        rc, out, err = module.run_command(command, environ_update={'LC_ALL': 'C'})
    except (IOError, OSError) as exc:
        rc, out, err = 127, '', str(exc)
    result = lxc_gpu.driver_from_smi(rc, out, err)
    if result['error_kind'] == 'not_found':
        result['error'] = 'nvidia-smi is not installed in the container (rc %s): %s' % (rc, result['error'])
    result['command'] = command
    return result


def main():
    module = AnsibleModule(
        argument_spec=dict(
            proc_devices_path=dict(type='path', default='/proc/devices'),
            driver_version_path=dict(type='path', default='/proc/driver/nvidia/version'),
            dev_dir=dict(type='path', default='/dev'),
            containers=dict(type='list', elements='dict', default=[], options=dict(
                name=dict(type='str', required=True),
                flavour=dict(type='str', choices=list(lxc_gpu.FLAVOURS)),
                config_path=dict(type='path'),
                rootfs=dict(type='path'),
                driver_check=dict(type='str', choices=['rootfs', 'exec', 'none']),
            )),
            flavour=dict(type='str', choices=list(lxc_gpu.FLAVOURS), default='lxc'),
            driver_check=dict(type='str', choices=['rootfs', 'exec', 'none'], default='rootfs'),
            marker=dict(type='str', default='# {mark} gpuops.sglang_stack lxc_gpu_host'),
            marker_begin=dict(type='str', default='BEGIN'),
            marker_end=dict(type='str', default='END'),
            lib_dirs=dict(type='list', elements='str', default=list(lxc_gpu.DEFAULT_LIB_DIRS)),
            passthrough=dict(type='str', choices=list(pve_devices.MODES), default='auto'),
            device_gid=dict(type='int'),
            cgroup=dict(type='str', choices=['auto', 'v1', 'v2'], default='auto'),
            mountinfo_path=dict(type='path', default='/proc/self/mountinfo'),
        ),
        supports_check_mode=True,
    )
    params = module.params

    driver = host_probe.parse_driver_version_file(host_probe.read_text(params['driver_version_path']))
    proc_devices = host_probe.read_text(params['proc_devices_path'])
    majors = lxc_gpu.nvidia_majors(proc_devices)
    # Without /proc/devices there is nothing to tell a stale rule from a live one.
    known_majors = lxc_gpu.character_majors(proc_devices) if proc_devices is not None else None
    names, caps_dir = lxc_gpu.list_dev(params['dev_dir'])
    nodes = lxc_gpu.mount_nodes(names, caps_dir)
    marker_lines = [params['marker'].replace('{mark}', params['marker_begin']), params['marker'].replace('{mark}', params['marker_end'])]

    if params['cgroup'] == 'auto':
        detected = lxc_gpu.devices_cgroup(host_probe.read_text(params['mountinfo_path']))
        if detected:
            source = 'detected in %s' % params['mountinfo_path']
        else:
            source = '%s unreadable: v2, the default of current LXC and Proxmox VE hosts' % params['mountinfo_path']
        cgroup = {'devices': detected or 'v2', 'source': source}
    else:
        cgroup = {'devices': params['cgroup'], 'source': 'cgroup is %s' % params['cgroup']}
    device_entries = lxc_gpu.device_nodes(lxc_gpu.stat_dev(params['dev_dir']))
    ask_pve = params['passthrough'] == 'auto' and any(
        (given['flavour'] or params['flavour']) == 'proxmox' for given in params['containers'])
    pve = _pveversion(module) if ask_pve else {'found': None, 'version': None, 'raw': None, 'rc': None, 'tuple': None}

    problems = [dict(problem, container=None) for problem in
                lxc_gpu.host_problems(driver, majors, params['driver_version_path'], params['proc_devices_path'])]
    host_ok = not problems

    results = []
    for given in params['containers']:
        container = dict(given, flavour=given['flavour'] or params['flavour'], driver_check=given['driver_check'] or params['driver_check'])
        name = container['name']
        try:
            path = lxc_gpu.config_path(container['flavour'], name, container['config_path'])
        except lxc_gpu.LxcGpuError as exc:
            module.fail_json(msg='container %s: %s' % (name, exc))
        mode = pve_devices.passthrough_mode(container['flavour'], params['passthrough'], pve)
        if mode['problem']:
            problems.append(dict(mode['problem'], container=name))
        devices = []
        block = []
        if host_ok and mode['mode'] == 'devices':
            devices = pve_devices.wanted_devices(device_entries, params['device_gid'])
        elif host_ok:
            block = lxc_gpu.render_block(container['flavour'], majors, nodes, cgroup['devices'])
        # Up to 4 bytes per character: a file cut at this limit always decodes to more than MAX_CONFIG_CHARS characters,
        # so analyse_config refuses it instead of reading its first part as if it were the whole file.
        text = host_probe.read_text(path, limit=4 * lxc_gpu.MAX_CONFIG_CHARS)
        try:
            config = lxc_gpu.analyse_config(text, marker_lines[0], marker_lines[1], block, majors, container['flavour'], known_majors,
                                            mode['mode'])
        except lxc_gpu.LxcGpuError as exc:
            module.fail_json(msg='container %s: %s: %s' % (name, path, exc))
        config['devices_current'] = None
        if mode['mode'] == 'devices' and text is not None and host_ok:
            try:
                config['devices_current'] = not pve_devices.plan(text, devices, marker_lines[0], marker_lines[1])['changed']
            except pve_devices.PveDevicesError as exc:
                problems.append({'code': 'no_free_device', 'container': name,
                                 'msg': '%s: %s: %s. Fix: remove devN entries the container no longer needs. Nothing was changed.'
                                        % (name, path, exc)})
        entry = {'name': name, 'flavour': container['flavour'], 'config_path': path, 'passthrough': mode['mode'],
                 'passthrough_reason': mode['reason'], 'devices': devices, 'block': block, 'config': config,
                 'driver_check': container['driver_check'], 'driver': None, 'driver_match': None}
        if not config['exists']:
            problems.append({'code': 'no_config', 'container': name,
                             'msg': '%s: its configuration %s does not exist or cannot be read. Fix: name the container '
                                    'as LXC (or Proxmox VE) knows it, or set its config_path. Nothing was changed.' % (name, path)})
        if host_ok and container['driver_check'] != 'none':
            if container['driver_check'] == 'rootfs':
                rootfs = container['rootfs'] or lxc_gpu.default_rootfs(name)
                found = lxc_gpu.userspace_driver(lxc_gpu.scan_rootfs(rootfs, params['lib_dirs']))
                found['rootfs'] = rootfs
            else:
                found = _exec_driver(module, container)
            entry['driver'] = found
            problem = lxc_gpu.container_driver_problem(name, driver['version'], found, container['driver_check'])
            entry['driver_match'] = found.get('version') == driver['version'] and problem is None
            if problem:
                problems.append(dict(problem, container=name))
        results.append(entry)

    pve.pop('tuple', None)
    module.exit_json(changed=False, kernel_module=driver, majors=majors, mount_nodes=nodes, device_nodes=device_entries,
                     proxmox=pve, cgroup=cgroup, marker_lines=marker_lines, containers=results, problems=problems)


if __name__ == '__main__':
    main()

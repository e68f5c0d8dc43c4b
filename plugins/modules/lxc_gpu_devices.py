#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: lxc_gpu_devices
short_description: Keep a Proxmox VE container's GPU nodes as devN passthrough entries
version_added: 1.0.0
description:
  - "Runs on a Proxmox VE 8.1 or later host. Edits the main section of one container configuration
    (C(/etc/pve/lxc/<vmid>.conf)) so that every device node of O(devices) is passed through by one C(devN:) entry
    (for example C(dev2: /dev/nvidia0,mode=0666)), which C(pct set) and snapshots keep as they are."
  - An entry whose path is one of the GPU nodes this collection manages (C(/dev/nvidiaN), C(nvidiactl), C(nvidia-uvm),
    C(nvidia-uvm-tools), C(nvidia-modeset), C(nvidia-caps/*)) keeps its index and gets the wanted properties; a second
    entry for the same path and one for a node not in O(devices) are removed. A missing node takes the lowest free
    index. C(devN) entries for other paths, every other line, and the snapshot and pending sections stay as they are.
  - The managed block of raw C(lxc.*) lines an earlier run wrote (between the O(marker) lines, main section only) is
    removed with its markers, which moves a container from raw lines to C(devN) entries. No other line is removed.
  - The file is rewritten in place when Ansible's temporary file cannot be renamed over it (C(/etc/pve) is Proxmox VE's
    cluster file system). Nothing is restarted; Proxmox VE applies the entries at the container's next start.
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
  - gpuops.sglang_stack.lxc_marker
attributes:
  diff_mode:
    support: full
options:
  path:
    description: The container's configuration file.
    type: path
    required: true
  devices:
    description:
      - The entries to keep, in order (as M(gpuops.sglang_stack.lxc_gpu_info) returns them in RV(gpuops.sglang_stack.lxc_gpu_info#module:containers[].devices)).
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description: The node's path on the host and in the container.
        type: str
        required: true
      mode:
        description: Its access mode in the container, C(0NNN).
        type: str
      gid:
        description: Its group id in the container.
        type: int
      uid:
        description: Its owner id in the container.
        type: int
  backup:
    description: Keep a timestamped copy of the file beside it before changing it.
    type: bool
    default: false
notes:
  - The GPU nodes are passed through with the host node's permission bits as their O(devices[].mode); without a mode
    Proxmox VE makes them C(0660) C(root:root), which a non-root user in the container cannot open.
seealso:
  - module: gpuops.sglang_stack.lxc_gpu_info
  - name: Proxmox VE container device passthrough (devN)
    description: The C(devN) option of C(pct).
    link: https://pve.proxmox.com/pve-docs/pct.1.html
"""

EXAMPLES = r"""
- name: Read the host and its Proxmox VE GPU containers
  gpuops.sglang_stack.lxc_gpu_info:
    flavour: proxmox
    containers:
      - name: "101"
  register: lxc_gpu

- name: Pass the GPUs through with devN entries
  gpuops.sglang_stack.lxc_gpu_devices:
    path: "{{ item.config_path }}"
    devices: "{{ item.devices }}"
  loop: "{{ lxc_gpu.containers | selectattr('passthrough', 'eq', 'devices') | list }}"
"""

RETURN = r"""
path:
  description: The configuration file.
  returned: always
  type: str
  sample: /etc/pve/lxc/101.conf
added:
  description: The entries added.
  returned: always
  type: list
  elements: str
  sample: ["dev1: /dev/nvidia0,mode=0666", "dev2: /dev/nvidia1,mode=0666"]
updated:
  description: The entries whose value was rewritten (the index kept).
  returned: always
  type: list
  elements: str
  sample: ["dev0: /dev/nvidiactl,mode=0666"]
removed:
  description: The entries removed (a second entry for a path, a node the host no longer has).
  returned: always
  type: list
  elements: str
  sample: ["dev9: /dev/nvidia7,mode=0666"]
block_removed:
  description: The raw lines of the managed block that were removed with its markers.
  returned: always
  type: list
  elements: str
  sample: ["lxc.cgroup2.devices.allow: c 195:* rwm"]
backup_file:
  description: The copy made before the change, when O(backup) is set.
  returned: changed and O(backup)
  type: str
  sample: /etc/pve/lxc/101.conf.12345.2026-12-05@00:10:00~
"""

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import host_probe
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import lxc_gpu
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import pve_devices


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', required=True),
            devices=dict(type='list', elements='dict', required=True, options=dict(
                path=dict(type='str', required=True),
                mode=dict(type='str'),
                gid=dict(type='int'),
                uid=dict(type='int'),
            )),
            marker=dict(type='str', default='# {mark} gpuops.sglang_stack lxc_gpu_host'),
            marker_begin=dict(type='str', default='BEGIN'),
            marker_end=dict(type='str', default='END'),
            backup=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    params = module.params
    path = params['path']
    data = host_probe.read_text(path, binary=True, limit=4 * lxc_gpu.MAX_CONFIG_CHARS)
    if data is None:
        module.fail_json(msg='LXC_GPU_HOST no_config: %s does not exist or cannot be read. Nothing was changed.' % path)
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as exc:
        # Rewriting it would replace those bytes; Proxmox VE writes its configurations in UTF-8.
        module.fail_json(msg='LXC_GPU_HOST no_config: %s is not UTF-8 (%s). Nothing was changed.' % (path, exc))
    if len(text) > lxc_gpu.MAX_CONFIG_CHARS:
        module.fail_json(msg='LXC_GPU_HOST no_config: %s is %d characters long, over the %d read here (MAX_CONFIG_CHARS); it is '
                             'not a configuration Proxmox VE wrote. Nothing was changed.' % (path, len(text), lxc_gpu.MAX_CONFIG_CHARS))
    markers = [params['marker'].replace('{mark}', params['marker_begin']), params['marker'].replace('{mark}', params['marker_end'])]
    devices = [dict((key, value) for key, value in device.items() if value is not None) for device in params['devices']]
    try:
        result = pve_devices.plan(text, devices, markers[0], markers[1])
    except pve_devices.PveDevicesError as exc:
        module.fail_json(msg='LXC_GPU_HOST no_free_device: %s: %s. Fix: remove devN entries the container no longer needs. '
                             'Nothing was changed.' % (path, exc))

    output = dict(changed=result['changed'], path=path, added=result['added'], updated=result['updated'],
                  removed=result['removed'], block_removed=result['block_removed'])
    if result['changed'] and module._diff:
        output['diff'] = dict(before=text, after=result['text'], before_header=path, after_header=path)
    if result['changed'] and not module.check_mode:
        if params['backup']:
            output['backup_file'] = module.backup_local(path)
        handle, tmp = tempfile.mkstemp(dir=module.tmpdir)
        with os.fdopen(handle, 'wb') as stream:
            stream.write(to_bytes(result['text'], errors='surrogate_or_strict'))
        # /etc/pve (pmxcfs) refuses the chmod / chown of Ansible's temporary file beside the target: write in place then.
        module.atomic_move(tmp, path, unsafe_writes=True)
    module.exit_json(**output)


if __name__ == '__main__':
    main()

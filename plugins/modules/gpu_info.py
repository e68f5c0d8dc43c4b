#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: gpu_info
short_description: Report the NVIDIA GPUs, driver, container kind and device nodes of a host
version_added: 1.0.0
description:
  - Runs C(nvidia-smi) (the CSV query, the plain table and optionally C(-q -x)) and reports every GPU with its name,
    compute capability, memory and PCI bus id, the driver version and the highest CUDA version the driver supports.
  - The CSV query is the primary source (its names are never truncated and only it carries the compute capability);
    the plain table adds the CUDA version and fills what the CSV lacks.
  - Also reports whether the host is a container (LXC, Docker, Podman, systemd-nspawn), which C(/dev/nvidia*) nodes
    exist with their major and minor numbers, and the loaded NVIDIA kernel module (open or proprietary).
  - Never fails because C(nvidia-smi) is missing or failing; the failure is reported in RV(nvidia_smi) with a
    machine-readable RV(nvidia_smi.error_kind) so that the caller (the preflight role) decides.
  - Reads only; changes nothing.
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
options:
  nvidia_smi_path:
    description:
      - Path of the C(nvidia-smi) binary.
      - When not set, C(nvidia-smi) is looked up in E(PATH), C(/usr/bin), C(/usr/local/bin) and C(/usr/local/nvidia/bin).
    type: path
  include_xml:
    description:
      - Also run C(nvidia-smi -q -x) and use its product names, UUIDs and CUDA version to fill gaps.
      - The XML carries no compute capability; the CSV query remains the source for it.
    type: bool
    default: false
notes:
  - The compute capability is only available from drivers whose C(nvidia-smi) knows the C(compute_cap) query field;
    with older drivers the query is repeated without it and RV(gpus[].compute_cap) is V(null).
  - In a container, C(/proc/1/environ) is readable by root only; without it the container kind comes from the other evidence.
seealso:
  - name: nvidia-smi documentation
    description: The NVIDIA System Management Interface, its query fields and return codes.
    link: https://docs.nvidia.com/deploy/nvidia-smi/index.html
"""

EXAMPLES = r"""
- name: Report the GPUs of the host
  gpuops.sglang_stack.gpu_info:
  register: gpu

- name: Require eight SM120 GPUs
  ansible.builtin.assert:
    that:
      - gpu.nvidia_smi.error_kind is none
      - gpu.gpu_count == 8
      - gpu.gpus | map(attribute='compute_cap') | unique == ['12.0']
    fail_msg: "{{ gpu.nvidia_smi.error | default('unexpected GPUs', true) }}"

- name: Use a stand-in nvidia-smi and the XML view as well
  gpuops.sglang_stack.gpu_info:
    nvidia_smi_path: /opt/tools/nvidia-smi
    include_xml: true
  register: gpu
"""

RETURN = r"""
gpus:
  description: The GPUs, ordered by index.
  returned: always
  type: list
  elements: dict
  contains:
    index:
      description: The index nvidia-smi gives the GPU.
      type: int
      sample: 0
    name:
      description: The product name; full unless only the plain table knew it.
      type: str
      sample: NVIDIA H200
    name_truncated:
      description: Whether RV(gpus[].name) is the table's shortened form (ending in C(...)).
      type: bool
      sample: false
    compute_cap:
      description: Compute capability as C(major.minor); V(null) when the driver cannot report it.
      type: str
      sample: "9.0"
    memory_total_mib:
      description: Total framebuffer memory in MiB.
      type: int
      sample: 143771
    bus_id:
      description: PCI bus id as nvidia-smi prints it.
      type: str
      sample: "00000000:00:06.0"
    uuid:
      description: GPU UUID, when the XML view was used.
      type: str
      sample: GPU-b1b0475d-8e01-ee23-7feb-ea1e2dc035a8
  sample:
    - index: 0
      name: NVIDIA H200
      name_truncated: false
      compute_cap: "9.0"
      memory_total_mib: 143771
      bus_id: "00000000:00:06.0"
      uuid: null
gpu_count:
  description: Number of GPUs found.
  returned: always
  type: int
  sample: 1
driver_version:
  description: The NVIDIA driver version; V(null) when nvidia-smi could not tell.
  returned: always
  type: str
  sample: "580.159.04"
cuda_driver_version:
  description:
    - The highest CUDA version the driver supports (the C(CUDA Version) of the nvidia-smi header).
    - V(null) when the header says C(N/A) (no libcuda) or nvidia-smi failed.
  returned: always
  type: str
  sample: "13.0"
container:
  description: Whether the host is a container and which kind.
  returned: always
  type: dict
  contains:
    is_container:
      description: True inside a container.
      type: bool
      sample: true
    kind:
      description: One of V(lxc), V(docker), V(podman), V(systemd-nspawn), V(other), V(none).
      type: str
      sample: lxc
    manager:
      description: The raw container manager name when one was found.
      type: str
      sample: lxc
    evidence:
      description: The files that decided it.
      type: list
      elements: str
      sample: ["/run/systemd/container=lxc"]
device_nodes:
  description: Every C(/dev/nvidia*) and C(/dev/nvidia-caps/*) entry.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: Path of the entry.
      type: str
      sample: /dev/nvidia0
    name:
      description: Base name of the entry.
      type: str
      sample: nvidia0
    type:
      description: V(char) for a device node; V(file) for a regular file (an LXC bind mount whose host node is missing).
      type: str
      sample: char
    major:
      description: Major number (device nodes only).
      type: int
      sample: 195
    minor:
      description: Minor number (device nodes only).
      type: int
      sample: 0
    is_symlink:
      description: Whether the entry is a symbolic link.
      type: bool
      sample: false
  sample:
    - {path: /dev/nvidia0, name: nvidia0, type: char, major: 195, minor: 0, is_symlink: false}
    - {path: /dev/nvidiactl, name: nvidiactl, type: char, major: 195, minor: 255, is_symlink: false}
device_node_summary:
  description: The device nodes digested.
  returned: always
  type: dict
  contains:
    gpu_indices:
      description: Indices N of the C(/dev/nvidiaN) character devices.
      type: list
      elements: int
      sample: [0, 1]
    control:
      description: Which of C(nvidiactl), C(nvidia-uvm), C(nvidia-uvm-tools), C(nvidia-modeset) are character devices.
      type: dict
      sample: {nvidiactl: true, nvidia-uvm: true, nvidia-uvm-tools: true, nvidia-modeset: false}
    caps:
      description: Names under C(/dev/nvidia-caps).
      type: list
      elements: str
      sample: [nvidia-cap1, nvidia-cap2]
    not_char_device:
      description: Entries that exist but are not device nodes.
      type: list
      elements: str
      sample: []
    majors:
      description: Major number per node family (C(nvidia), C(nvidia-uvm), ...).
      type: dict
      sample: {nvidia: 195, nvidia-uvm: 238}
kernel_module:
  description: The loaded NVIDIA kernel module, from C(/proc/driver/nvidia/version).
  returned: always
  type: dict
  contains:
    present:
      description: Whether C(/proc/driver/nvidia/version) exists.
      type: bool
      sample: true
    version:
      description: Version of the kernel module.
      type: str
      sample: "580.159.04"
    flavour:
      description: V(open) (NVIDIA's open kernel module, required by Blackwell) or V(proprietary).
      type: str
      sample: open
    arch:
      description: Architecture named in the version line.
      type: str
      sample: x86_64
    gcc:
      description: The GCC version line, when present.
      type: str
      sample: gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)
    raw:
      description: The first line of the file.
      type: str
      sample: "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build"
    problem:
      description:
        - V(null), or why the file's content was not parsed - it is longer than 64 KiB (the real file is two lines,
          under 300 characters); then RV(kernel_module.version), RV(kernel_module.flavour), RV(kernel_module.arch) and
          RV(kernel_module.gcc) are V(null), RV(kernel_module.present) is V(true) and RV(kernel_module.raw) holds its
          first line (at most 200 characters).
      type: str
      sample: null
nvidia_smi:
  description: How the nvidia-smi runs went.
  returned: always
  type: dict
  contains:
    found:
      description: Whether the binary was found.
      type: bool
      sample: true
    path:
      description: The binary used.
      type: str
      sample: /usr/bin/nvidia-smi
    rc:
      description: Return code of the CSV query.
      type: int
      sample: 0
    error_kind:
      description:
        - V(null) when all went well. Otherwise one of V(not_found), V(no_driver), V(driver_mismatch), V(no_devices),
          V(no_permission), V(library_not_found), V(invalid_argument), V(nvml_error), V(gpu_lost) or another
          kind named after the documented return code.
      type: str
      sample: driver_mismatch
    error:
      description: The message nvidia-smi printed.
      type: str
      sample: "Failed to initialize NVML: Driver/library version mismatch NVML library version: 535.161"
    nvml_library_version:
      description: The user-space NVML version reported with a driver/library mismatch.
      type: str
      sample: "535.161"
    compute_cap_supported:
      description: Whether the driver accepted the C(compute_cap) query field.
      type: bool
      sample: true
    commands:
      description: Every nvidia-smi invocation with its return code and error kind.
      type: list
      elements: dict
      sample:
        - {args: [/usr/bin/nvidia-smi, "--query-gpu=index,name,compute_cap,driver_version,memory.total,pci.bus_id",
                  "--format=csv,nounits"], rc: 0, error_kind: null}
    problems:
      description: Output lines that could not be parsed.
      type: list
      elements: str
      sample: []
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import host_probe
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import nvidia_smi

EXTRA_BIN_DIRS = ['/usr/bin', '/usr/local/bin', '/usr/local/nvidia/bin']


def main():
    module = AnsibleModule(
        argument_spec=dict(
            nvidia_smi_path=dict(type='path'),
            include_xml=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )

    configured = module.params['nvidia_smi_path']
    if configured:
        path = configured if os.path.isfile(configured) and os.access(configured, os.X_OK) else None
    else:
        path = module.get_bin_path('nvidia-smi', opt_dirs=EXTRA_BIN_DIRS)

    def run(args):
        try:
            return module.run_command(args, handle_exceptions=False, environ_update={'LC_ALL': 'C'})
        except (IOError, OSError) as exc:
            return 127, '', str(exc)

    result = nvidia_smi.gather(run, path, include_xml=module.params['include_xml'])
    if path is None and configured:
        result['nvidia_smi']['path'] = configured
    nodes = host_probe.scan_device_nodes()
    result.update(
        changed=False,
        container=host_probe.probe_container(),
        device_nodes=nodes,
        device_node_summary=host_probe.summarize_device_nodes(nodes),
        kernel_module=host_probe.probe_kernel_module(),
    )
    module.exit_json(**result)


if __name__ == '__main__':
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: stack_verify
short_description: Judge every layer of the installed stack in one call - GPUs, nvcc, SM code per package, arch lists, bill of materials
version_added: 1.0.0
description:
  - The verdicts of P(gpuops.sglang_stack.verify#role), one row per layer, from one call on the host.
  - C(gpus) - nvidia-smi (as M(gpuops.sglang_stack.gpu_info)); every GPU's compute capability must be that of O(required_arch).
  - C(nvcc) - C(<cuda_prefix>/bin/nvcc --version) must be release O(cuda_version) (and build O(nvcc_version) when given),
    C(--list-gpu-arch) must list C(compute_XY).
  - One row per declared package with files to scan - the per-package verify policies (as M(gpuops.sglang_stack.stack_arch_verify)).
  - C(env TORCH_CUDA_ARCH_LIST), C(env FLASHINFER_CUDA_ARCH_LIST) - the remote user's environment; not set, or naming the
    compute capability.
  - C(bom) - the installed packages against the declaration (as M(gpuops.sglang_stack.stack_bom)); with O(dest), the JSON
    report written (changed only when it differs).
  - Reads only, except O(dest). Does not fail when a layer fails; see RV(ok), RV(failed_layers) and RV(failures).
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
attributes:
  diff_mode:
    support: full
    details: The report file O(dest).
options:
  site_packages:
    description: The site-packages directory of the stack's virtualenv.
    type: path
    required: true
  packages:
    description:
      - The declared packages (the resolved declaration's C(packages)), each with C(name), C(version) and its C(verify) policy.
    type: list
    elements: dict
    required: true
  required_arch:
    description: The GPU architecture every layer must serve (C(sm_120), C(120), C(12.0)).
    type: str
    default: sm_120
  cuda_prefix:
    description: Prefix of the CUDA toolkit whose C(bin/nvcc) is checked.
    type: path
    required: true
  cuda_version:
    description: The declared CUDA release (C(13.0)).
    type: str
    required: true
  nvcc_version:
    description: The declared nvcc build (C(13.0.88)); empty checks the release only.
    type: str
    default: ""
  nvidia_smi_path:
    description: Path of nvidia-smi; empty searches PATH.
    type: path
  dest:
    description: Write the JSON report (bill of materials and the rows before it) to this path on the host; empty writes nothing.
    type: path
  extra:
    description: Keys added to the report's C(extra) (C(host), C(stack_id)).
    type: dict
    default: {}
seealso:
  - module: gpuops.sglang_stack.stack_arch_verify
  - module: gpuops.sglang_stack.stack_bom
  - module: gpuops.sglang_stack.gpu_info
"""

EXAMPLES = r"""
- name: Judge every layer
  gpuops.sglang_stack.stack_verify:
    site_packages: /opt/sglang/current/venv/lib/python3.12/site-packages
    packages: "{{ stack_declaration_resolved.packages }}"
    required_arch: sm_120
    cuda_prefix: /usr/local/cuda-13.0
    cuda_version: "13.0"
    dest: /opt/sglang/current/verify.json
    extra:
      host: "{{ inventory_hostname }}"
      stack_id: "{{ stack_declaration_resolved.id }}"
  register: verdicts

- name: Show the table
  ansible.builtin.debug:
    msg: "{{ verdicts.lines }}"
"""

RETURN = r"""
ok:
  description: Whether every layer passed.
  returned: always
  type: bool
failed_layers:
  description:
    - The layers that failed. Not C(failed), which Ansible reads as the task's own failure (the role fails with
      every layer's reason once the report is written).
  returned: always
  type: list
  elements: str
  sample: [gpus, sgl-kernel]
failures:
  description: One text per failing layer, C(<layer> (<detail>)), for a failure message.
  returned: always
  type: list
  elements: str
compute_capability:
  description: The compute capability of O(required_arch).
  returned: always
  type: str
  sample: "12.0"
layers:
  description: One row per layer - layer, verdict, ok, detail - in the order of the table.
  returned: always
  type: list
  elements: dict
lines:
  description: The summary table, a header line first.
  returned: always
  type: list
  elements: str
packages:
  description: Per declared package, the full judgement of its SM code (RV(gpuops.sglang_stack.stack_arch_verify#module:packages)).
  returned: always
  type: list
  elements: dict
bom:
  description: The package checks of the bill of materials (RV(gpuops.sglang_stack.stack_bom#module:items)).
  returned: always
  type: list
  elements: dict
msg:
  description: A one-line summary.
  returned: always
  type: str
  sample: "12.0: 10 layers, 0 failed"
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import arch_policy, fatbin, nvidia_smi, report_file, stack_bom, stack_verify

EXTRA_BIN_DIRS = ['/usr/bin', '/usr/local/bin', '/usr/local/nvidia/bin']


def main():
    module = AnsibleModule(
        argument_spec=dict(
            site_packages=dict(type='path', required=True),
            packages=dict(type='list', elements='dict', required=True),
            required_arch=dict(type='str', default='sm_120'),
            cuda_prefix=dict(type='path', required=True),
            cuda_version=dict(type='str', required=True),
            nvcc_version=dict(type='str', default=''),
            nvidia_smi_path=dict(type='path'),
            dest=dict(type='path'),
            extra=dict(type='dict', default={}),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        fatbin.parse_arch(p['required_arch'])
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    bad = stack_bom.unjudgeable(p['packages'])
    if bad:
        module.fail_json(msg='every declared package needs a name and a version: %s' % '; '.join(bad))
    cc = stack_verify.compute_capability(p['required_arch'])

    def run(args):
        try:
            return module.run_command(args, handle_exceptions=False, environ_update={'LC_ALL': 'C'})
        except (IOError, OSError) as exc:
            return None, '', str(exc)

    configured = p['nvidia_smi_path']
    if configured:
        smi = configured if os.path.isfile(configured) and os.access(configured, os.X_OK) else None
    else:
        smi = module.get_bin_path('nvidia-smi', opt_dirs=EXTRA_BIN_DIRS)
    gathered = nvidia_smi.gather(lambda args: _rc(run(args)), smi)
    layers = [stack_verify.judge_gpus(gathered, cc)]

    nvcc = os.path.join(p['cuda_prefix'], 'bin', 'nvcc')
    exists = os.path.exists(nvcc)
    version = run([nvcc, '--version']) if exists else (None, '', 'no such file')
    arch = run([nvcc, '--list-gpu-arch']) if exists else (None, '', 'no such file')
    layers.append(stack_verify.judge_nvcc(nvcc, exists, version, arch, p['cuda_version'], p['nvcc_version'], cc))

    judged = arch_policy.judge(p['packages'], p['site_packages'], p['required_arch'])
    layers.extend(judged['layers'])
    layers.extend(stack_verify.judge_env(os.environ, name, cc) for name in stack_verify.ENV_NAMES)

    bom = stack_bom.judge(p['site_packages'], p['packages'])
    result = dict(changed=False)
    if p['dest']:
        report = {'site_packages': p['site_packages'], 'items': bom['items'], 'drift': bom['drift'], 'installed': bom['installed'],
                  'extra': dict(p['extra'], required_arch=p['required_arch'], layers=list(layers), packages=judged['packages'])}
        report_file.write_if_changed(module, p['dest'], json.dumps(report, indent=2, sort_keys=True) + '\n', result)
    layers.append(stack_verify.judge_bom(bom['installed'].get('exists', False), bom['items'], bom['drift'], bom['msg'], p['site_packages']))

    lines, failures = stack_verify.summary(layers)
    failed = [row['layer'] for row in layers if not row['ok']]
    result.update(ok=not failed, failed_layers=failed, failures=failures, compute_capability=cc, layers=layers, lines=lines,
                  packages=judged['packages'], bom=bom['items'], msg='%s: %d layers, %d failed' % (cc, len(layers), len(failed)))
    module.exit_json(**result)


def _rc(answer):
    """run()'s answer as nvidia_smi.gather() wants it: an int return code (127 when it could not run)."""
    rc, out, err = answer
    return (127 if rc is None else rc), out, err


if __name__ == '__main__':
    main()

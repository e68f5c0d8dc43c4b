#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_launch_flags
short_description: Check the SGLang launch options and environment against the all-reduce rules of the stack
version_added: 1.0.0
description:
  - The one place that decides which SGLang options selecting an all-reduce path, or a feature known to fail on the
    declared GPUs, may reach the service. Changes nothing.
  - Turns the role switches O(switches) into launch flags (returned as RV(flags)), parses every command line of
    O(args) as the argparse parser of sglang 0.5.9 does (unknown, ambiguous or removed options are refused), and
    checks the flags and the variables of O(environment) against the rules of the stack.
  - Fails when anything is refused; each refusal names the flag, where it came from, the reason on this stack with
    the SGLang or flashinfer source file and line, and what would make it work.
  - Returns the path the tensor-parallel group's all-reduce takes for a decode-sized message (RV(path)), the same
    decision the patch series' start-up log line makes.
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
options:
  sglang_version:
    description:
      - The SGLang version of the stack. The rules are written for 0.5.9; another version is refused.
    type: str
    default: 0.5.9
  compute_capability:
    description:
      - The declared GPUs' compute capability, C(MAJOR.MINOR).
    type: str
    required: true
  tp_size:
    description:
      - The tensor-parallel size (the all-reduce world size). Default the C(--tp-size) of the command line, else 1.
    type: int
  full_nvlink:
    description:
      - Whether all GPUs of the service are joined by NVLink (or NVSwitch). False for PCIe-only hosts.
    type: bool
    default: false
  flashinfer_version:
    description:
      - The declared flashinfer-python version, named in the reasons.
    type: str
  patches:
    description:
      - The names of the patches of the series applied to the stack's SGLang.
    type: list
    elements: str
    default: []
  switches:
    description:
      - The role switches, by variable name (C(nccl_patches_enable_flashinfer_allreduce_fusion),
        C(nccl_patches_enable_torch_symm_mem)); each true one becomes its launch flag.
    type: dict
    default: {}
  base_args:
    description:
      - The launch line the service role builds itself (model, C(--tp-size), host, port, speculative options).
    type: list
    elements: str
    default: []
  args:
    description:
      - Further command lines, in the order they reach the launch line. Each item has C(source) (named in a
        refusal, e.g. C(sglang_service_extra_args) or C(qualification profile eagle3 extra_args)) and C(args).
    type: list
    elements: dict
    default: []
  environment:
    description:
      - The environment the service gets. Each item has C(source) (e.g. C(nccl_patches_nccl_env)) and C(env), a dict.
    type: list
    elements: dict
    default: []
seealso:
  - module: gpuops.sglang_stack.sglang_patches
"""

EXAMPLES = r"""
- name: Check the service's options
  gpuops.sglang_stack.sglang_launch_flags:
    compute_capability: "12.0"
    tp_size: 8
    patches: [0002-torch-symm-mem-guard.patch, 0003-nccl-log-allreduce-path.patch]
    switches:
      nccl_patches_enable_torch_symm_mem: false
    args:
      - source: sglang_service_extra_args
        args: ["--mem-fraction-static", "0.88"]
    environment:
      - source: sglang_service_environment
        env: {NCCL_DEBUG: WARN}
  register: launch_flags
"""

RETURN = r"""
flags:
  description: The launch flags the true switches become, to add to the command line.
  returned: always
  type: list
  elements: str
  sample: []
path:
  description: The path and the reason of the tensor-parallel group's all-reduce for a decode-sized message.
  returned: success
  type: list
  elements: str
  sample: [NCCL, custom AR off; mscclpp off; torch symm-mem off]
world_size:
  description: The all-reduce world size the rules used.
  returned: success
  type: int
  sample: 8
refusals:
  description: What was refused, each with C(guard), C(flag), C(source), C(reason), C(remedy) and C(msg).
  returned: always
  type: list
  elements: dict
msg:
  description: The refusals, one per line, or a summary.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import sglang_flags


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sglang_version=dict(type='str', default=sglang_flags.SGLANG_VERSION),
            compute_capability=dict(type='str', required=True),
            tp_size=dict(type='int'),
            full_nvlink=dict(type='bool', default=False),
            flashinfer_version=dict(type='str'),
            patches=dict(type='list', elements='str', default=[]),
            switches=dict(type='dict', default={}),
            base_args=dict(type='list', elements='str', default=[]),
            args=dict(type='list', elements='dict', default=[]),
            environment=dict(type='list', elements='dict', default=[]),
        ),
        supports_check_mode=True,
    )
    params = module.params
    bad = [str(item) for item in params['args'] if 'source' not in item or not isinstance(item.get('args'), list)]
    bad += [str(item) for item in params['environment'] if 'source' not in item or not isinstance(item.get('env', {}), dict)]
    if bad:
        module.fail_json(msg='each args item needs source and a list args, each environment item source and a dict env: %s'
                         % '; '.join(bad), flags=[], refusals=[])
    try:
        switches = dict((name, module.boolean(value)) for name, value in params['switches'].items())
        result = sglang_flags.check(
            args_sources=[(item['source'], [to_native(word) for word in item['args']]) for item in params['args']],
            env_sources=[(item['source'], dict((k, to_native(v)) for k, v in (item.get('env') or {}).items()))
                         for item in params['environment']],
            switches=switches, sglang_version=params['sglang_version'], compute_capability=params['compute_capability'],
            world_size=params['tp_size'], full_nvlink=params['full_nvlink'], patches=params['patches'],
            flashinfer_version=params['flashinfer_version'], base_args=params['base_args'])
    except (sglang_flags.FlagError, TypeError) as exc:
        module.fail_json(msg='NCCL_GUARD launch_flag: %s' % to_native(exc), flags=[], refusals=[])
    if result['refusals']:
        module.fail_json(msg='\n'.join(r['msg'] for r in result['refusals']), flags=result['flags'],
                         refusals=result['refusals'])
    module.exit_json(changed=False, flags=result['flags'], path=result['path'], world_size=result['world_size'],
                     refusals=[], msg='launch options accepted; TP all-reduce for decode: %s (%s)' % tuple(result['path']))


if __name__ == '__main__':
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: stack_arch_verify
short_description: Judge the installed stack's CUDA code against the declaration's per-package verify policies
version_added: 1.0.0
description:
  - For every declared package with a C(verify) policy, reads the files its C(*.dist-info/RECORD) lists below
    O(site_packages) and matching the policy's globs, and the CUDA architectures each carries (the fatbin reader of
    M(gpuops.sglang_stack.cuda_arch_scan), in pure Python, without CUDA tools or a GPU).
  - A file matched by C(require) must carry SASS that runs on O(required_arch) (C(sm_120), C(sm_120a) or C(sm_120f)
    on an SM120 GPU) or PTX the driver can JIT for it (C(compute_XY) with C(XY <= 120)); a C(require) glob that matches
    no file fails too. Files matched by C(report) are scanned and reported with their architectures, never failed.
  - Returns one verdict per package and one summary line per package with device code (files required, passed,
    reported, grouped by architecture set), ready for a report table.
  - Reads only; changes nothing. Does not fail when a package fails; see RV(ok) and RV(failed_packages).
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
options:
  site_packages:
    description:
      - The site-packages directory of the stack's virtualenv. The globs of the policies are relative to it.
    type: path
    required: true
  packages:
    description:
      - The declared packages, each with C(name), C(verify) (C(reason), C(require), C(report)) and optionally C(layer);
        other keys are ignored, so the resolved declaration's C(packages) can be passed as it is.
    type: list
    elements: dict
    required: true
  required_arch:
    description:
      - The GPU architecture the required files must serve, as C(sm_120), C(120) or C(12.0); a suffix is ignored.
    type: str
    default: sm_120
notes:
  - A package that is not installed fails only when its policy requires files; the bill of materials
    (M(gpuops.sglang_stack.stack_bom)) says which declared packages are missing.
seealso:
  - module: gpuops.sglang_stack.cuda_arch_scan
  - module: gpuops.sglang_stack.stack_bom
"""

EXAMPLES = r"""
- name: Judge what SGLang loads on SM120
  gpuops.sglang_stack.stack_arch_verify:
    site_packages: /opt/sglang/current/venv/lib/python3.12/site-packages
    packages: "{{ stack_declaration_resolved.packages }}"
    required_arch: sm_120
  register: arch

- name: Show one line per package
  ansible.builtin.debug:
    msg: "{{ arch.layers | map(attribute='detail') | list }}"

- name: Judge one package with an explicit policy
  gpuops.sglang_stack.stack_arch_verify:
    site_packages: /opt/sglang/current/venv/lib/python3.12/site-packages
    packages:
      - name: sgl-kernel
        verify:
          reason: sgl-kernel loads sm100/common_ops on every GPU but SM90
          require: [sgl_kernel/sm100/common_ops.abi3.so]
          report: ["sgl_kernel/**/*.so"]
"""

RETURN = r"""
ok:
  description: Whether every package passed.
  returned: always
  type: bool
  sample: false
failed_packages:
  description: The packages that failed.
  returned: always
  type: list
  elements: str
  sample: [sgl-kernel]
required_arch:
  description: O(required_arch), normalised.
  returned: always
  type: str
  sample: sm_120
layers:
  description: One row per package with files to scan, for a report table.
  returned: always
  type: list
  elements: dict
  contains:
    layer:
      description: The package name.
      type: str
      sample: sgl-kernel
    verdict:
      description:
        - V(ok), V(wrong_arch) (a required file carries no code for the GPU), V(missing) (a required glob matches no
          file, or the package is not installed), V(unreadable), V(reported) (nothing required) or V(absent) (nothing
          required, not installed).
      type: str
      sample: wrong_arch
    ok:
      description: Whether the package passed.
      type: bool
      sample: false
    detail:
      description: Files required and passed with their architectures, then the reported files grouped by architecture set.
      type: str
      sample: >-
        1 required, 0 passed; FAILED: sgl_kernel/sm100/common_ops.abi3.so has no sm_120 code (sm_80 sm_89 sm_90 sm_90a
        sm_100a); 5 reported, 0 with sm_120 SASS or PTX: 1 [sm_80 sm_86 sm_90a] (sgl_kernel/flash_ops.abi3.so)
packages:
  description: Per declared package, the full judgement.
  returned: always
  type: list
  elements: dict
  contains:
    package:
      description: The package name.
      type: str
    layer:
      description: The layer of the declaration, when given.
      type: str
    reason:
      description: The policy's reason.
      type: str
    verdict:
      description: As RV(layers[].verdict), or V(not_scanned) when the policy names no file.
      type: str
    ok:
      description: Whether the package passed.
      type: bool
    detail:
      description: As RV(layers[].detail).
      type: str
    required:
      description:
        - Per required file - path (relative to site-packages), verdict (V(sass), V(ptx_jit), V(missing),
          V(unreadable)), sass, ptx, error, error_detail, entries_truncated, limit_detail, matching.
        - C(entries_truncated) is true when the fatbin reader stopped at its limit (more than 65,536 images, or 400,000
          entry headers searched); C(limit_detail) says which, C(sass) and C(ptx) hold what was read, and such a file
          is V(unreadable) unless what was read holds SASS for the GPU (its C(error) is V(null), or V(no_fatbin) when
          the search for embedded fatbins stopped).
      type: list
      elements: dict
    unmatched:
      description: The required globs that matched no file.
      type: list
      elements: str
    reported:
      description: The reported files - files (count), serving (how many carry code for the GPU), no_device_code,
        no_device_code_count, unreadable (paths, with those cut off at the reader's limit), groups (per architecture set -
        sass, ptx, serves, count, examples).
      type: dict
msg:
  description: A one-line summary.
  returned: always
  type: str
  sample: "sm_120: 5 package(s) with device code judged, 0 failed"
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import arch_policy, fatbin


def main():
    module = AnsibleModule(
        argument_spec=dict(
            site_packages=dict(type='path', required=True),
            packages=dict(type='list', elements='dict', required=True),
            required_arch=dict(type='str', default='sm_120'),
        ),
        supports_check_mode=True,
    )
    try:
        major, minor, _variant = fatbin.parse_arch(module.params['required_arch'])
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    for pkg in module.params['packages']:
        if not pkg.get('name'):
            module.fail_json(msg='every package needs a name: %r' % (pkg,))
    result = arch_policy.judge(module.params['packages'], module.params['site_packages'], module.params['required_arch'])
    module.exit_json(changed=False, msg=result['msg'], ok=result['ok'], failed_packages=result['failed'], layers=result['layers'],
                     packages=result['packages'], required_arch='sm_%d%d' % (major, minor))


if __name__ == '__main__':
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: stack_bom
short_description: Compare the packages installed in a site-packages directory with the stack declaration
version_added: 1.0.0
description:
  - Reads the C(*.dist-info/METADATA) name and version of every distribution in O(site_packages), C(torch/version.py)
    (version and CUDA) and the NCCL wheel's version, and compares the declared packages with them, exactly.
  - Each declared package is V(ok), V(drift) (another version is installed) or V(missing). A torch declared with a
    C(+cuXYZ) tag also needs C(torch.version.cuda) to be C(X.Y).
  - A torch wheel from PyPI records no local tag in its METADATA (C(2.11.0)); for torch the version of
    C(torch/version.py) (C(2.11.0+cu130)) is compared then.
  - Reads only, except the report file O(dest) when it is given. Does not fail on drift; see RV(drift).
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
attributes:
  diff_mode:
    support: full
options:
  site_packages:
    description:
      - The site-packages directory of the stack's virtualenv. A directory that does not exist makes every declared
        package V(missing).
    type: path
    required: true
  declared:
    description:
      - The declared packages, in order; each needs C(name) and C(version), C(layer) is kept in the result, other keys
        are ignored (the resolved declaration's C(packages) can be passed as it is).
    type: list
    elements: dict
    default: []
  dest:
    description:
      - Write the result as JSON to this file on the host. Changed only when the content differs.
    type: path
  extra:
    description:
      - Data written into O(dest) under the key C(extra) (for example per-layer verdicts of a verification).
    type: dict
    default: {}
notes:
  - Names are compared after PEP 503 normalisation (C(flashinfer_python) is C(flashinfer-python)); versions as strings.
seealso:
  - module: gpuops.sglang_stack.cuda_arch_scan
"""

EXAMPLES = r"""
- name: Compare the stack's site-packages with the declaration
  gpuops.sglang_stack.stack_bom:
    site_packages: /opt/sglang/current/venv/lib/python3.12/site-packages
    declared: "{{ stack_declaration_resolved.packages }}"
  register: bom

- name: Fail on drift
  ansible.builtin.assert:
    that: not bom.drift
    fail_msg: "{{ bom.msg }}"

- name: Keep the bill of materials on the host
  gpuops.sglang_stack.stack_bom:
    site_packages: /opt/sglang/current/venv/lib/python3.12/site-packages
    declared:
      - name: torch
        version: 2.11.0.dev20251231+cu130
    dest: /var/lib/sglang/bom.json
"""

RETURN = r"""
items:
  description: One check per declared package in the order given, plus C(torch.version.cuda) after a CUDA-tagged torch.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The declared name (or C(torch.version.cuda)).
      type: str
      sample: torch
    declared:
      description: The declared version (the CUDA version for C(torch.version.cuda)).
      type: str
      sample: 2.11.0.dev20251231+cu130
    installed:
      description: The installed version, V(null) when not installed.
      type: str
      sample: 2.11.0.dev20251231+cu130
    status:
      description: V(ok), V(drift) or V(missing).
      type: str
      sample: ok
    detail:
      description: A human readable line.
      type: str
      sample: torch 2.11.0.dev20251231+cu130
    layer:
      description: The declared layer, when given.
      type: str
      sample: torch
drift:
  description: Whether any item is not V(ok).
  returned: always
  type: bool
  sample: false
installed:
  description:
    - What the directory holds - C(site_packages), C(exists), C(distributions) (normalised name to name, version,
      dist_info), C(torch) (version, cuda, path, or V(null)), C(nccl) (version or V(null)), C(errors).
  returned: always
  type: dict
msg:
  description: A one-line summary.
  returned: always
  type: str
  sample: "7 checked: 7 ok"
"""

import json

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import report_file, stack_bom


def main():
    module = AnsibleModule(
        argument_spec=dict(
            site_packages=dict(type='path', required=True),
            declared=dict(type='list', elements='dict', default=[]),
            dest=dict(type='path'),
            extra=dict(type='dict', default={}),
        ),
        supports_check_mode=True,
    )
    params = module.params
    bad = stack_bom.unjudgeable(params['declared'])
    if bad:
        module.fail_json(msg='every declared package needs a name and a version: %s' % '; '.join(bad))

    result = dict(changed=False, **stack_bom.judge(params['site_packages'], params['declared']))

    dest = params['dest']
    if dest:
        report = {'site_packages': params['site_packages'], 'items': result['items'], 'drift': result['drift'],
                  'installed': result['installed'], 'extra': params['extra']}
        report_file.write_if_changed(module, dest, json.dumps(report, indent=2, sort_keys=True) + '\n', result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: qualification_report
short_description: Judge the qualification's profiles (keep rule, not-applicable verdicts) and write its report
version_added: 1.0.0
description:
  - Takes the steps of a qualification run (baseline, each optimisation alone, EAGLE-3 on the kept settings) with
    their repeated tok/s samples, the C([AR]) lines the service logged at start-up (patch 0003) and the refusals of
    the profiles the launch-flag rules refuse on this stack.
  - An optimisation is kept only when its median beats the baseline median by more than the larger measured spread
    (max - min of either profile's samples); a refused profile is reported V(not applicable) with the reason and the
    SGLang source line the refusal cites.
  - Returns the report and, with O(dest_dir), writes it as C(<host>.json) and C(<host>.md) there, on the host the
    module runs on (the role delegates it to the controller).
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
attributes:
  check_mode:
    support: full
    details: In check mode the verdicts are returned and nothing is written; changed says whether a file would change.
  diff_mode:
    support: full
    details: Shows the Markdown report before and after.
options:
  host:
    description: The host the report is for (the file names).
    type: str
    required: true
  stack:
    description: The serving stack's directory, named in the report.
    type: str
    default: ""
  steps:
    description:
      - The steps in order; the first is the baseline. Each has C(name), C(kind) (V(baseline), V(optimisation) or
        V(eagle3)), C(status) (V(measured), V(not_applicable) or V(failed)), and by status C(samples) (tok/s, at least
        O(min_repeats)) with C(ar_lines), C(refusals) (from module P(gpuops.sglang_stack.sglang_launch_flags#module))
        or C(error); optional C(settings) and C(acc_length).
    type: list
    elements: dict
    required: true
  baseline_tok_s:
    description: The site baseline in tok/s; the floor is O(baseline_tok_s) x (1 - O(tolerance)).
    type: float
    required: true
  tolerance:
    description: Fraction below the site baseline still accepted.
    type: float
    default: 0.05
  min_repeats:
    description: Samples each measured profile needs.
    type: int
    default: 3
  seed_baseline_tok_s:
    description: The seed's baseline (before the upgrade), which EAGLE-3 is compared with.
    type: float
    default: 89.5
  seed_eagle3_tok_s:
    description: The seed's EAGLE-3 rate (before the upgrade), which EAGLE-3 is compared with.
    type: float
    default: 54.1
  probe:
    description: The all-reduce probe's sweep result to include (C(msg), C(sweep_table), C(best), C(written)).
    type: dict
  dest_dir:
    description: Directory to write C(<host>.json) and C(<host>.md) into (created). Omitted, nothing is written.
    type: path
seealso:
  - module: gpuops.sglang_stack.sglang_launch_flags
  - module: gpuops.sglang_stack.sglang_throughput
"""

EXAMPLES = r"""
- name: Judge the profiles and write the report on the controller
  gpuops.sglang_stack.qualification_report:
    host: "{{ inventory_hostname }}"
    baseline_tok_s: 89.5
    steps:
      - {name: baseline, kind: baseline, status: measured, samples: [91.0, 90.6, 91.3]}
      - {name: nccl-tree, kind: optimisation, status: measured, samples: [96.1, 96.6, 96.3]}
      - name: torch-symm-mem
        kind: optimisation
        status: not_applicable
        refusals:
          - {flag: --enable-torch-symm-mem, source: profile torch-symm-mem, reason: "disabled on SM120 (torch_symm_mem.py:81-93)"}
    dest_dir: /home/ops/.cache/gpuops.sglang_stack/qualification-reports
  delegate_to: localhost
  become: false
"""

RETURN = r"""
report:
  description: The report - C(steps) (per profile C(median), C(spread), C(samples), C(allreduce_path), C(verdict), C(why),
    C(not_applicable)), C(kept), C(eagle3) (with C(seed) ratios), C(serving_profile), C(floor_tok_s), C(baseline_passed).
  returned: success
  type: dict
kept:
  description: The names of the optimisations kept.
  returned: success
  type: list
  elements: str
serving_profile:
  description: The profile the service should be left on.
  returned: success
  type: str
markdown:
  description: The report as Markdown.
  returned: success
  type: str
paths:
  description: The files written (or that would be written in check mode).
  returned: when dest_dir is given
  type: list
  elements: str
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import qualification, report_files


def main():
    module = AnsibleModule(
        argument_spec=dict(
            host=dict(type='str', required=True),
            stack=dict(type='str', default=''),
            steps=dict(type='list', elements='dict', required=True),
            baseline_tok_s=dict(type='float', required=True),
            tolerance=dict(type='float', default=0.05),
            min_repeats=dict(type='int', default=qualification.MIN_REPEATS),
            seed_baseline_tok_s=dict(type='float', default=qualification.SEED_BASELINE_TOK_S),
            seed_eagle3_tok_s=dict(type='float', default=qualification.SEED_EAGLE3_TOK_S),
            probe=dict(type='dict'),
            dest_dir=dict(type='path'),
        ),
        supports_check_mode=True,
    )
    params = module.params
    if params['baseline_tok_s'] <= 0 or not 0 <= params['tolerance'] < 1 or params['min_repeats'] < 1:
        module.fail_json(msg='QUALIFY: baseline_tok_s must be above 0, tolerance within [0, 1), min_repeats at least 1')
    if '/' in params['host'] or params['host'] in ('', '.', '..'):
        module.fail_json(msg='QUALIFY: host %r cannot name a report file' % params['host'])
    try:
        report = qualification.build_report(
            params['steps'], params['baseline_tok_s'], params['tolerance'], params['min_repeats'],
            params['seed_baseline_tok_s'], params['seed_eagle3_tok_s'], host=params['host'],
            stack=params['stack'] or None, probe=params['probe'])
    except qualification.QualificationError as exc:
        module.fail_json(msg='QUALIFY: the steps cannot be judged: %s' % to_native(exc))
    markdown = qualification.render_markdown(report)
    result = dict(changed=False, report=report, kept=report['kept'], serving_profile=report['serving_profile'],
                  markdown=markdown)
    if params['dest_dir']:
        files = [(os.path.join(params['dest_dir'], params['host'] + '.json'),
                  to_bytes(json.dumps(report, indent=2, sort_keys=True) + '\n')),
                 (os.path.join(params['dest_dir'], params['host'] + '.md'), to_bytes(markdown))]
        result['paths'] = [path for path, _content in files]
        before_md = report_files.read_bytes(files[1][0])
        changes = report_files.changed(files)
        result['changed'] = bool(changes)
        if module._diff and changes:
            result['diff'] = dict(before_header=files[1][0], after_header=files[1][0],
                                  before=to_native(before_md or b''), after=markdown)
        if changes and not module.check_mode:
            try:
                report_files.write(params['dest_dir'], changes, module.atomic_move)
            except (IOError, OSError) as exc:
                module.fail_json(msg='QUALIFY: cannot write the report under %s: %s' % (params['dest_dir'], to_native(exc)),
                                 **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: run_summary_write
short_description: Write a playbook run's summary as JSON and Markdown, for this run and as the latest
version_added: 1.0.0
description:
  - Writes the summary the P(gpuops.sglang_stack.run_summary#filter) filter built into O(dir), in one module run, as
    C(<playbook>-<run_id>.json) and C(.md) (this run's record) and C(<playbook>-latest.json) and C(.md) (the last
    run's). Each file is replaced whole (written beside, then renamed), and only when its content differs.
  - The JSON is the summary with sorted keys and an indent of 4, as C(to_nice_json) writes it; the Markdown is
    P(gpuops.sglang_stack.run_summary_markdown#filter)'s report.
  - The M(gpuops.sglang_stack.run_summary_write) module is what the run_summary role runs on the controller; the
    files are a record of the run, not configuration of a host.
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
options:
  dir:
    description: The directory of the summaries; created (mode C(0755)) when missing.
    type: path
    required: true
  playbook:
    description: The playbook's name, the first part of each file name (no C(/), not starting with C(.)).
    type: str
    required: true
  run_id:
    description: The run's name, letters and digits (the role writes the start time, C(%Y%m%dT%H%M%SZ)).
    type: str
    required: true
  summary:
    description: The summary, as the P(gpuops.sglang_stack.run_summary#filter) filter returns it.
    type: dict
    required: true
notes:
  - Check mode reports which files would change and writes nothing.
seealso:
  - module: gpuops.sglang_stack.qualification_report
"""

EXAMPLES = r"""
- name: Write the summary on the controller
  gpuops.sglang_stack.run_summary_write:
    dir: "{{ run_summary_dir }}"
    playbook: upgrade
    run_id: "{{ hostvars['localhost']['run_summary_run_id'] }}"
    summary: "{{ run_summary_result }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
files:
  description: The four files, each with C(path) and C(changed) (its content differed, or it did not exist).
  returned: always
  type: list
  elements: dict
  sample: [{path: /var/log/gpuops/upgrade-20261205T194000Z.json, changed: true}]
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import report_files
from ansible_collections.gpuops.sglang_stack.plugins.module_utils.run_summary import summary_files


def main():
    module = AnsibleModule(
        argument_spec=dict(
            dir=dict(type='path', required=True),
            playbook=dict(type='str', required=True),
            run_id=dict(type='str', required=True),
            summary=dict(type='dict', required=True),
        ),
        supports_check_mode=True,
    )
    params = module.params
    try:
        files = summary_files(params['summary'], params['playbook'], params['run_id'])
    except (ValueError, TypeError) as exc:
        module.fail_json(msg='run summary: %s' % exc)
    files = [(os.path.join(params['dir'], name), files[name].encode('utf-8')) for name in sorted(files)]
    changes = report_files.changed(files)
    changed_paths = set(path for path, _content in changes)
    result = {'changed': bool(changes), 'files': [{'path': path, 'changed': path in changed_paths} for path, _content in files]}
    if changes and not module.check_mode:
        try:
            report_files.write(params['dir'], changes, module.atomic_move)
        except (IOError, OSError) as exc:
            module.fail_json(msg='run summary: cannot write under %s: %s' % (params['dir'], exc), **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()

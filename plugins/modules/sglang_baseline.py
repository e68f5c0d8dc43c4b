#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_baseline
short_description: Adopt the SGLang service a host runs before the first switch, record it, restore it byte for byte
version_added: 1.0.0
description:
  - Finds the SGLang server that serves on the host today, from C(/proc/*/cmdline) (C(python -m sglang.launch_server),
    C(python .../sglang/launch_server.py) or the wheel's console script C(sglang serve)), and the systemd unit it
    runs in, from C(/proc/<pid>/cgroup). O(unit) names the unit instead of searching.
  - Describes it (RV(description); M(gpuops.sglang_stack.sglang_baseline_info) describes without recording) - the
    interpreter and its virtual environment or source checkout (with the commit, read from C(.git) without the git
    binary), the SGLang version, port, model path, user and group, the CUDA directory its environment uses, the unit
    file, drop-ins and environment files, and the names (never the values) of its environment variables.
  - With O(state=present), records it under O(root)C(/baseline) as the read-only stack C(baseline) - a
    C(manifest.json) and byte-for-byte copies of the unit file, every drop-in and every environment file, with their
    sha256, modes and owners. A second run on the same unit changes nothing; a recorded baseline that the serving unit
    no longer matches is reported in RV(drift) and kept unless O(force_rerecord).
  - With O(state=restored), writes the recorded files back to their paths where they differ (content, mode or owner)
    and removes drop-ins that a later stack added to the unit's drop-in directory; the caller then runs
    C(systemctl daemon-reload) and starts the unit (RV(daemon_reload)). A baseline whose copies no longer match their
    recorded sha256 is refused.
  - Nothing of the baseline's interpreter, virtual environment or checkout is written; they are only read.
  - Refusals start with C(BASELINE:) and come before anything is written - two units running SGLang, a named unit
    that runs no SGLang server or is not active, an SGLang server outside any systemd service, a tampered baseline.
  - Nothing serving is a plain first install - RV(found) is false and nothing is recorded.
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
  - gpuops.sglang_stack.sglang_baseline
attributes:
  diff_mode:
    description:
      - With O(state=present), the manifest before and after (paths, sha256, modes, owners; no environment value).
      - With O(state=restored), the files written back and removed, and why (never their content).
    support: full
options:
  state:
    description:
      - V(present) finds, describes and records what serves.
      - V(restored) writes the recorded baseline back; it does not look for what serves.
    type: str
    choices: [present, restored]
    default: present
  force_rerecord:
    description: Replace a recorded baseline that the serving unit no longer matches (RV(drift)).
    type: bool
    default: false
  prune_drop_ins:
    description:
      - With O(state=restored), remove C(*.conf) drop-ins in the unit's drop-in directories that the baseline did not
        have (a later stack's), so that the restored unit is the recorded one.
    type: bool
    default: true
notes:
  - Run as root - C(/proc/<pid>/environ) of the service user's process and the environment files are root's to read.
  - The interpreter probe runs the baseline's interpreter as the unit's user, in its working directory, with the
    import-related variables of the server's environment (C(PATH), C(PYTHONPATH), C(HOME), ...). It does not import
    sglang - it asks C(importlib) where the package is and reads its version from the installed metadata or its
    C(version.py).
  - C(systemctl show -p ExecStart) prints the command line without its quoting, so the command line is read from
    C(/proc/<pid>/cmdline).
  - The collection's C(docs/adoption.md) describes how the service is found, what is recorded and refused, and restore.
"""

EXAMPLES = r"""
- name: Record what serves today as the stack baseline (before the first switch)
  gpuops.sglang_stack.sglang_baseline:
    state: present
    root: /opt/sglang
  register: baseline

- name: Adopt a unit the site named itself
  gpuops.sglang_stack.sglang_baseline:
    unit: sglang-qwen.service
  register: baseline

- name: Restore the baseline's unit and environment files
  gpuops.sglang_stack.sglang_baseline:
    state: restored
  register: restored

- name: Reload systemd and start the old service
  ansible.builtin.systemd_service:
    name: "{{ restored.unit }}"
    state: started
    daemon_reload: "{{ restored.daemon_reload }}"
  when: restored.unit is not none
"""

RETURN = r"""
found:
  description: Whether an SGLang service serves (V(present)); with V(restored), whether a baseline is recorded.
  returned: always
  type: bool
  sample: true
unit:
  description: The unit that serves (or, with V(restored), the recorded unit); null when nothing serves.
  returned: always
  type: str
  sample: sglang.service
description:
  description:
    - What serves - C(unit), C(pid), C(pids), C(form) (V(module), V(script) or V(console)), C(argv), C(exec_path),
      C(interpreter), C(python_version), C(venv) (C(path), C(home), C(version) or null), C(kind) (V(checkout),
      V(venv), V(system) or V(unknown)), C(sglang) (C(file), C(version), C(version_from)), C(checkout) (C(path),
      C(git_dir), C(commit), C(ref) or null), C(probe_error), C(port), C(port_from), C(host), C(model_path),
      C(tp_size), C(config), C(user), C(group), C(working_directory), C(cuda) (C(home), C(version), C(from)),
      C(fragment_path), C(drop_in_paths), C(environment_files) (C(path), C(optional)), C(environment_names),
      C(unit_file_state), C(cgroup).
    - Holds no value of an environment variable; the values of C(--api-key) and C(--admin-api-key) in C(argv) are masked.
  returned: when found (V(present)); the recorded one with V(restored)
  type: dict
baseline_dir:
  description: Where the baseline is (or would be) recorded.
  returned: always
  type: str
  sample: /opt/sglang/baseline
recorded:
  description: Whether a baseline is recorded under RV(baseline_dir) (after this run).
  returned: always
  type: bool
drift:
  description:
    - How the serving unit differs from the recorded baseline (or why the recorded copies are damaged).
    - Empty when they match.
  returned: always
  type: list
  elements: str
  sample: ["/etc/systemd/system/sglang.service: content changed"]
manifest:
  description:
    - The recorded manifest - C(format), C(stack), C(unit), C(recorded_at), C(description), C(absent) and C(files), each
      with C(path), C(kind), C(copy), C(sha256), C(size), C(mode), C(uid), C(gid), C(owner), C(group).
  returned: when a baseline is recorded or would be
  type: dict
restored:
  description: The files written back (V(restored)).
  returned: always
  type: list
  elements: str
removed:
  description: The drop-ins removed because the baseline did not have them (V(restored)).
  returned: always
  type: list
  elements: str
daemon_reload:
  description: Whether the caller must run C(systemctl daemon-reload) before starting RV(unit) (a unit file or drop-in changed).
  returned: always
  type: bool
unit_file_state:
  description: The unit's C(UnitFileState) when recorded (V(enabled), ...), so that the caller enables it again.
  returned: always
  type: str
  sample: enabled
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.sglang_baseline import (
    BaselineError,
    Host,
    record,
    restore,
    survey,
)


def _manifest_text(manifest):
    return json.dumps(manifest, indent=2, sort_keys=True) + '\n' if manifest else ''


def run(module, host):
    params = module.params
    baseline_dir = os.path.join(params['root'], 'baseline')
    out = dict(changed=False, found=False, unit=None, baseline_dir=baseline_dir, recorded=False, drift=[],
               restored=[], removed=[], daemon_reload=False, unit_file_state=None)
    if params['state'] == 'restored':
        result = restore(params['root'], check_mode=module.check_mode, prune_drop_ins=params['prune_drop_ins'])
        manifest = result['manifest']
        out.update(changed=result['changed'], found=True, unit=manifest['unit'], recorded=True,
                   description=manifest['description'], manifest=manifest, restored=result['restored'],
                   removed=result['removed'], unit_file_state=manifest['description'].get('unit_file_state'),
                   daemon_reload=bool(result['restored'] or result['removed']))
        if result['changed'] and module._diff:
            lines = ['write back %s (%s differs)' % (path, result['reasons'][path]) for path in result['restored']]
            lines += ['remove %s (not in the baseline)' % path for path in result['removed']]
            out['diff'] = dict(prepared='\n'.join(lines) + '\n')
        return out
    out.update(survey(host, params['unit'], params['root'], timeout=params['probe_timeout']))
    if not out['found']:
        return out
    description = out['description']
    result = record(params['root'], description, force=params['force_rerecord'], check_mode=module.check_mode)
    out.update(changed=result['changed'], drift=result['drift'], manifest=result['manifest'],
               recorded=out['recorded'] or result['recorded'])
    if result['changed'] and module._diff:
        out['diff'] = dict(before_header=os.path.join(baseline_dir, 'manifest.json'),
                           after_header=os.path.join(baseline_dir, 'manifest.json'),
                           before=_manifest_text(result['before']), after=_manifest_text(result['manifest']))
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type='str', default='present', choices=['present', 'restored']),
            unit=dict(type='str'),
            root=dict(type='path', default='/opt/sglang'),
            force_rerecord=dict(type='bool', default=False),
            prune_drop_ins=dict(type='bool', default=True),
            probe_timeout=dict(type='int', default=120),
        ),
        supports_check_mode=True,
    )
    try:
        out = run(module, Host(module))
    except BaselineError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(**out)


if __name__ == '__main__':
    main()

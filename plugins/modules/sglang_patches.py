#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_patches
short_description: Apply or reverse a series of unified diffs to an installed package, all or none
version_added: 1.0.0
description:
  - Applies the unified diffs O(patches), in order, to the files of O(package) in O(site_packages), or reverses them
    with O(state=absent). No C(patch) binary is used and there is no fuzz; every hunk must match byte for byte.
  - Paths in the diffs are relative to O(site_packages) after one leading component (C(a/sglang/srt/...)). Lines
    before the first C(---) line (a C(# ) header saying what and why) are skipped.
  - Each patch is V(applied) (its reverse applies cleanly), V(applicable) or V(conflict). Nothing is written unless
    every patch is V(applied) or V(applicable); each file is then written atomically.
  - The original files are kept under C(<site_packages>/.gpuops-patches/<series>/orig/) and the series is recorded
    in C(<site_packages>/.gpuops-patches/<series>/applied.json). Stale C(__pycache__/<module>.*.pyc) files of
    each changed file are removed.
  - Refuses, changing nothing, when the installed O(package) version (its C(*.dist-info/METADATA)) is not
    O(package_version).
  - Refuses, changing nothing, a patch that touches a file outside the import directory of O(package) under
    O(site_packages) (C(sglang/) for V(sglang); the PEP 503 normalised name with C(-) as C(_)), and any path below
    O(site_packages) (a patched file, its directories, the state directory) with a symlink among its components or that
    resolves out of it. Files are read and written with C(O_NOFOLLOW). O(site_packages) itself may be reached through a
    symlink.
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
      - The site-packages directory that holds O(package).
    type: path
    required: true
  package:
    description:
      - The distribution whose files are patched; a PEP 508 name (letters, digits, C(.), C(_), C(-), starting and ending
        with a letter or digit), anything else is refused.
    type: str
    default: sglang
  package_version:
    description:
      - The version of O(package) the series was written for; any other installed version is refused.
    type: str
    required: true
  patches:
    description:
      - The series, in order. Each item needs C(name) and either C(content), the diff's text (as the role passes the
        controller's file), or C(path), a unified diff file on the host.
    type: list
    elements: dict
    default: []
  keep_dir:
    description:
      - A directory on the host that keeps the series' files, each as C(<keep_dir>/<name>) (mode C(0644), written only
        when its bytes differ); every other file there (a patch of an earlier series) is removed. Written after the
        series applied (or reversed), never when a patch conflicts. Names must then be plain file names.
      - The role keeps the series in C(<stack>/patches/<series>/), where the service's all-reduce rules count it.
    type: path
  series:
    description:
      - The name of the series; names the state directory under C(.gpuops-patches). Letters, digits, C(.), C(_), C(-),
        starting with a letter or digit, without C(..).
    type: str
    default: site-nccl
  state:
    description:
      - V(present) applies the series, V(absent) reverses it and removes the state directory.
    type: str
    choices: [present, absent]
    default: present
notes:
  - The patched modules are not imported (that would need their dependencies); see the role for a compile check.
seealso:
  - module: gpuops.sglang_stack.stack_bom
"""

EXAMPLES = r"""
- name: Apply the site NCCL patches to SGLang 0.5.9
  gpuops.sglang_stack.sglang_patches:
    site_packages: /opt/sglang/current/venv/lib/python3.12/site-packages
    package_version: 0.5.9
    patches:
      - name: 0002-torch-symm-mem-guard.patch
        path: /opt/sglang/patches/0002-torch-symm-mem-guard.patch
      - name: 0003-nccl-log-allreduce-path.patch
        path: /opt/sglang/patches/0003-nccl-log-allreduce-path.patch

- name: Apply the controller's series and keep its files beside the stack
  gpuops.sglang_stack.sglang_patches:
    site_packages: /opt/sglang/stacks/new/venv/lib/python3.12/site-packages
    package_version: 0.5.9
    keep_dir: /opt/sglang/stacks/new/patches/site-nccl
    patches:
      - name: 0002-torch-symm-mem-guard.patch
        content: "{{ lookup('ansible.builtin.file', 'patches/0002-torch-symm-mem-guard.patch', rstrip=false) }}"

- name: Reverse them
  gpuops.sglang_stack.sglang_patches:
    site_packages: /opt/sglang/current/venv/lib/python3.12/site-packages
    package_version: 0.5.9
    patches:
      - name: 0002-torch-symm-mem-guard.patch
        path: /opt/sglang/patches/0002-torch-symm-mem-guard.patch
      - name: 0003-nccl-log-allreduce-path.patch
        path: /opt/sglang/patches/0003-nccl-log-allreduce-path.patch
    state: absent
"""

RETURN = r"""
patches:
  description: The state of each patch before this run, in series order.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The patch name.
      type: str
      sample: 0002-torch-symm-mem-guard.patch
    sha256:
      description: The SHA-256 of the patch file.
      type: str
    files:
      description: The files it touches, relative to O(site_packages).
      type: list
      elements: str
      sample: [sglang/srt/distributed/device_communicators/torch_symm_mem.py]
    state:
      description: V(applied), V(applicable) or V(conflict).
      type: str
      sample: applicable
    conflict:
      description: For a conflict, C(file), C(line) (the first line that does not match), C(expected), C(found).
      type: dict
applied:
  description: The manifest of the series (as written to C(applied.json)), V(null) with O(state=absent).
  returned: success
  type: dict
changed_files:
  description: The files written (or that would be written in check mode), relative to O(site_packages).
  returned: success
  type: list
  elements: str
removed_pyc:
  description: The stale C(.pyc) files removed.
  returned: success
  type: list
  elements: str
kept:
  description: With O(keep_dir), the series' files written there (C(written), names) and the other files removed
    (C(removed), paths), or that would be in check mode.
  returned: success
  type: dict
  sample: {written: [0002-torch-symm-mem-guard.patch], removed: [/opt/sglang/stacks/new/patches/site-nccl/0001-old.patch]}
diff:
  description: In diff mode, the text before and after of each changed file.
  returned: changed and diff mode
  type: list
  elements: dict
msg:
  description: A one-line summary, or why nothing was changed.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import patch_series


def main():
    module = AnsibleModule(
        argument_spec=dict(
            site_packages=dict(type='path', required=True),
            package=dict(type='str', default='sglang'),
            package_version=dict(type='str', required=True),
            patches=dict(type='list', elements='dict', default=[]),
            series=dict(type='str', default='site-nccl'),
            keep_dir=dict(type='path'),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
        ),
        supports_check_mode=True,
    )
    params = module.params
    bad = [item.get('name') or '(no name)' for item in params['patches']
           if not item.get('name') or (item.get('path') is None) == (item.get('content') is None)]
    if bad:
        module.fail_json(msg='every patch needs a name and exactly one of path and content: %s' % ', '.join(bad))
    try:
        patches = [patch_series.read_patch_file(item['name'], item['path']) if item.get('path') is not None
                   else patch_series.patch_from_bytes(item['name'], to_bytes(item['content'], errors='surrogate_or_strict'))
                   for item in params['patches']]
        if params['keep_dir']:
            patch_series.check_keep(params['keep_dir'], patches)
        result = patch_series.apply_series(params['site_packages'], patches, params['series'], params['package'],
                                           params['package_version'], params['state'], module.check_mode)
        kept = (patch_series.keep_series(params['keep_dir'], patches, module.check_mode) if params['keep_dir']
                else dict(written=[], removed=[]))
    except patch_series.PatchError as exc:
        module.fail_json(msg=to_native(exc), changed=False, patches=getattr(exc, 'patches', []))
    except (IOError, OSError) as exc:
        module.fail_json(msg='could not write the series: %s' % to_native(exc), changed=False)

    out = dict(changed=bool(result['changed'] or kept['written'] or kept['removed']), patches=result['patches'],
               applied=result['manifest'], changed_files=[c['relpath'] for c in result['changed_files']],
               removed_pyc=result['removed_pyc'],
               kept=dict(written=[k['name'] for k in kept['written']], removed=kept['removed']))
    shown = [(c['path'], c['before'], c['after']) for c in result['changed_files']]
    shown += [(k['path'], k['before'], k['after']) for k in kept['written']] + [(path, b'', b'') for path in kept['removed']]
    if module._diff and shown:
        out['diff'] = [dict(before_header=path, after_header=path if after else '(removed)',
                            before=before.decode('utf-8', 'replace'), after=after.decode('utf-8', 'replace'))
                       for path, before, after in shown]
    states = [p['state'] for p in result['patches']]
    out['msg'] = '%s %s: %d patches (%d applied, %d applicable), %d files %s' % (
        params['series'], params['state'], len(states), states.count('applied'), states.count('applicable'),
        len(result['changed_files']), 'would change' if module.check_mode else 'changed')
    module.exit_json(**out)


if __name__ == '__main__':
    main()

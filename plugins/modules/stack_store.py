#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: stack_store
short_description: Remove what no stack links from the stacks' shared file store, or link wheels from it
version_added: 1.0.0
description:
  - The stacks under O(root) share identical files through C(<root>/store) (M(gpuops.sglang_stack.stack_wheels) with
    C(share_root)) - each file once, hard-linked into every stack that holds it.
  - A stored file that no stack links any more (its link count is 1, after the switch pruned the stacks beyond the
    rollback window) is removed, and so is the record of how a wheel installs once one of its files is gone.
  - Reads the stacks only; it never touches a file a stack links.
  - With O(wheels) and O(dest), instead links into O(dest) each of those wheels that O(dest) lacks and the store holds
    (a wheel an earlier stack on this host was built from), so that the controller copies only the others
    (P(gpuops.sglang_stack.fleet_wheelhouse#role), entry point C(distribute)). Nothing is removed then.
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
attributes:
  check_mode:
    details: Counts what it would remove or link, and changes nothing.
options:
  root:
    description: The stack layout's root (C(/opt/sglang)); the store is its C(store) directory.
    type: path
    required: true
  wheels:
    description: Wheel file names with their sha256 (the controller's C(fetch.json) C(files)). Needs O(dest).
    type: dict
  dest:
    description: The wheelhouse directory to link O(wheels) into (it must exist).
    type: path
"""

EXAMPLES = r"""
- name: Remove the shared files no stack links any more
  gpuops.sglang_stack.stack_store:
    root: /opt/sglang

- name: Link the wheels an earlier stack was built from into the new stack's wheelhouse
  gpuops.sglang_stack.stack_store:
    root: /opt/sglang
    wheels:
      tabulate-0.9.0-py3-none-any.whl: 024ca478df22e9340661486f85298cff5f6dcdba14f3813e8830015b9ed1948f
    dest: /opt/sglang/stacks/cu130-sglang-0.5.9-0123456789ab/wheelhouse
"""

RETURN = r"""
removed:
  description: What was removed (in check mode, would be)
  returned: without O(wheels)
  type: dict
  sample: {objects: 812, bytes: 734003200, manifests: 3}
linked:
  description: The wheels linked from the store (in check mode, would be), and their bytes.
  returned: with O(wheels)
  type: dict
  sample: {wheels: [tabulate-0.9.0-py3-none-any.whl], bytes: 35252}
msg:
  description: A one-line summary.
  returned: always
  type: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_store


def link_wheels(module, store):
    dest = module.params['dest']
    if not os.path.isdir(dest):
        module.fail_json(msg='STORE: the wheelhouse %s does not exist' % dest)
    linked, size = [], 0
    if os.path.isdir(store):
        try:
            linked, size = stack_store.link_wheels(store, module.params['wheels'], dest, check=module.check_mode)
        except (OSError, stack_store.StoreError) as exc:
            module.fail_json(msg='STORE %s: could not link wheels into %s: %s' % (store, dest, exc))
    module.exit_json(changed=bool(linked), linked=dict(wheels=linked, bytes=size),
                     msg='%s: %d of %d wheels %s from %s (%d bytes)' % (
                         dest, len(linked), len(module.params['wheels']), 'would be linked' if module.check_mode else 'linked',
                         store, size))


def main():
    module = AnsibleModule(argument_spec=dict(root=dict(type='path', required=True), wheels=dict(type='dict'),
                                              dest=dict(type='path')),
                           required_together=[('wheels', 'dest')], supports_check_mode=True)
    store = stack_store.store_dir(module.params['root'])
    if module.params['wheels'] is not None:
        link_wheels(module, store)
    if not os.path.isdir(store):
        module.exit_json(changed=False, removed=dict(objects=0, bytes=0, manifests=0), msg='%s: no store' % store)
    try:
        removed = stack_store.collect(store, check=module.check_mode)
    except (OSError, stack_store.StoreError) as exc:
        module.fail_json(msg='STORE %s: could not remove what no stack links: %s' % (store, exc))
    module.exit_json(changed=bool(removed['objects'] or removed['manifests']), removed=removed,
                     msg='%s: %d files no stack links (%d bytes), %d wheel records %s' % (
                         store, removed['objects'], removed['bytes'], removed['manifests'],
                         'would be removed' if module.check_mode else 'removed'))


if __name__ == '__main__':
    main()

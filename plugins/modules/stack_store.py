#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: stack_store
short_description: Report the stacks' shared file store and remove what no stack links any more
version_added: 1.0.0
description:
  - The stacks under O(root) share identical files through C(<root>/store) (M(gpuops.sglang_stack.stack_wheels) with
    C(share_root)) - each file once, hard-linked into every stack that holds it.
  - A stored file that no stack links any more (its link count is 1, after the switch pruned the stacks beyond the
    rollback window) is removed, and so is the record of how a wheel installs once one of its files is gone.
  - Reads the stacks only; it never touches a file a stack links.
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
attributes:
  check_mode:
    details: Counts what it would remove and removes nothing.
options:
  root:
    description: The stack layout's root (C(/opt/sglang)); the store is its C(store) directory.
    type: path
    required: true
"""

EXAMPLES = r"""
- name: Remove the shared files no stack links any more
  gpuops.sglang_stack.stack_store:
    root: /opt/sglang
"""

RETURN = r"""
removed:
  description: What was removed (in check mode, would be)
  returned: always
  type: dict
  sample: {objects: 812, bytes: 734003200, manifests: 3}
msg:
  description: A one-line summary.
  returned: always
  type: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_store


def main():
    module = AnsibleModule(argument_spec=dict(root=dict(type='path', required=True)), supports_check_mode=True)
    store = stack_store.store_dir(module.params['root'])
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

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: stack_guarded
short_description: What a locked stack must hold once a layer is in
version_added: 1.0.0
author: gpuops.sglang_stack maintainers (@gpuops)
description:
  - From a resolved declaration with its lock (the P(gpuops.sglang_stack.stack_resolve#filter) filter with C(lock)), the
    list the P(gpuops.sglang_stack.stack_bom#module) module checks a stack against once a layer is in
    (its C(declared) option) - every declared package of that layer and of the layers before it, as declared, and every
    other distribution the lock installs in those layers, at its locked version.
  - The guard after each layer reads it for the layers so far; the check of a finished stack reads it for all layers.
options:
  _input:
    description: The resolved declaration, with its lock.
    type: dict
    required: true
  layer:
    description: The last layer to include. Without it, every layer.
    type: str
"""

EXAMPLES = r"""
- name: Read the stack after the flashinfer layer
  gpuops.sglang_stack.stack_bom:
    site_packages: /opt/sglang/stacks/sglang-cu130-0123456789ab/venv/lib/python3.12/site-packages
    declared: "{{ stack_declaration_resolved | gpuops.sglang_stack.stack_guarded('flashinfer') }}"
"""

RETURN = r"""
_value:
  description: The declared packages, then the other locked distributions, of the layers up to O(layer).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.stack_lock import guarded_through


def stack_guarded(resolved, layer=None):
    try:
        return guarded_through(resolved, layer)
    except ValueError:
        raise AnsibleFilterError('stack_guarded: the declaration has no layer %s' % layer)
    except (KeyError, TypeError) as exc:
        raise AnsibleFilterError('stack_guarded: not a resolved declaration (%s)' % exc)


class FilterModule(object):

    def filters(self):
        return {'stack_guarded': stack_guarded}

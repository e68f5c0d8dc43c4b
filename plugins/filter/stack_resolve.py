# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: stack_resolve
short_description: Validate the stack declaration and resolve its sources
version_added: 1.0.0
author: gpuops.sglang_stack maintainers (@gpuops)
description:
  - Checks the stack declaration against the rules that keep the CUDA 13 upgrade safe (layer order
    torch, flashinfer, sgl_kernel, sglang; exact versions; CUDA builds by tag or by a declared C(cuda);
    torchvision beside torch and of the same build; the flashinfer trio in lock-step; sgl-kernel only as a
    prebuilt cu130 wheel; CUDA 13.0 unless overridden with a reason; sha256 pins; a verify policy with a
    reason for every package).
  - Returns the declaration with the stack id, the install order and every source URL resolved,
    on the local mirror when O(mirror_url) is given.
  - Refuses a plain C(http://) mirror or upstream URL unless O(allow_insecure_http) is set with a reason.
  - Fails with one message that lists every problem found.
options:
  _input:
    description: The stack declaration (see the P(gpuops.sglang_stack.stack_declaration#role) role).
    type: dict
    required: true
  mirror_url:
    description:
      - Base URL of a mirror that keeps each upstream's layout below the upstream's C(mirror_path).
      - When empty, the upstream URLs are used.
    type: str
    default: ''
  allow_insecure_http:
    description:
      - Accept a plain C(http://) mirror or upstream URL. Without it such a URL is refused, naming the URL, the variable
        it came from and the fix.
      - Needs O(insecure_http_reason). The result's C(insecure_http.allowed) is what the roles read before they let pip
        (C(--trusted-host)) or apt use a plain-HTTP URL.
    type: bool
    default: false
  insecure_http_reason:
    description: Why plain HTTP is accepted at this site; required with O(allow_insecure_http).
    type: str
    default: ''
  download_max_mb:
    description:
      - The largest file a download of the stack may write, in MiB; returned in bytes as C(download_max_bytes), and per
        package as C(max_bytes) (its declared C(size) when given).
    type: int
    default: 4096
  lock:
    description:
      - The stack lock (the parsed lock file of M(gpuops.sglang_stack.stack_lock)). It must have been made from this
        declaration, else it is refused with every difference named. The result then carries it as C(lock) and its
        C(id) is the lock's content digest.
    type: dict
"""

EXAMPLES = r"""
- name: Resolve the declaration against a local mirror
  ansible.builtin.set_fact:
    stack: "{{ declaration | gpuops.sglang_stack.stack_resolve(mirror_url='http://mirror.example:8080') }}"
"""

RETURN = r"""
_value:
  description: The resolved declaration.
  type: dict
  contains:
    id:
      description:
        - Stack id, the declaration name plus the first 12 hex digits of its content digest (of the lock's, when O(lock) is
          given).
      type: str
    packages:
      description: Every package in install order, with C(url) or C(index_url), C(pip_requirement), C(layer) and C(order).
      type: list
      elements: dict
    disk_mb:
      description: Disk space the new stack needs, summed from the layers' estimates.
      type: int
    download_max_bytes:
      description: The cap of any file a download writes, in bytes.
      type: int
    insecure_http:
      description: C(allowed) (whether plain-HTTP URLs are accepted) and C(reason) (the site's reason, empty when not allowed).
      type: dict
"""

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.stack_declaration import (
    DEFAULT_DOWNLOAD_MAX_MB, StackDeclarationError, resolve)


def stack_resolve(declaration, mirror_url='', allow_insecure_http=False, insecure_http_reason='', download_max_mb=DEFAULT_DOWNLOAD_MAX_MB,
                  lock=None):
    try:
        return resolve(declaration, mirror_url=mirror_url or None, allow_insecure_http=boolean(allow_insecure_http, strict=True),
                       insecure_http_reason=insecure_http_reason or '', download_max_mb=download_max_mb, lock=lock or None)
    except TypeError as exc:
        raise AnsibleFilterError('allow_insecure_http: %s' % exc)
    except StackDeclarationError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):

    def filters(self):
        return {'stack_resolve': stack_resolve}

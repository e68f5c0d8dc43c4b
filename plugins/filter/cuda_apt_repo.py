# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: cuda_apt_repo
short_description: The CUDA apt repository of a host, from the resolved stack declaration
version_added: 1.0.0
author: gpuops.sglang_stack maintainers (@gpuops)
description:
  - Picks, from the resolved declaration's C(cuda) section, the repository NVIDIA publishes for the host's operating
    system (C(cuda.apt_repo_distros), keyed C(Debian-12), C(Debian-13), C(Ubuntu-22.04), C(Ubuntu-24.04)) and returns
    it with its URL (on the mirror when one is declared), its upstream URL, its key file, the key's URL and the key's
    declared fingerprint.
  - The one place that maps an operating system to a repository and builds its URL; C(cuda_toolkit), C(preflight) and
    C(fleet_wheelhouse) read it.
  - Fails naming the host's operating system and the ones the declaration knows when there is no repository for it.
options:
  _input:
    description: The C(cuda) section of the resolved declaration (C(stack_declaration_resolved.cuda)).
    type: dict
    required: true
  facts:
    description: The host's facts; C(distribution), C(distribution_version) and C(distribution_major_version) are read.
    type: dict
    required: true
  strict:
    description:
      - Fail for an operating system without a repository. With V(false) the result is C({os}) alone, so that a caller
        (preflight) can report the operating system as a failed gate of its own.
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Name the host's CUDA repository
  ansible.builtin.set_fact:
    cuda_repo: "{{ stack_declaration_resolved.cuda | gpuops.sglang_stack.cuda_apt_repo(ansible_facts) }}"
  # cuda_repo.url: https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/
"""

RETURN = r"""
_value:
  description: The repository.
  type: dict
  contains:
    os:
      description: The host's operating system as the map names it (C(Debian-12), C(Ubuntu-24.04)).
      type: str
    distro:
      description: NVIDIA's directory of the repository (C(debian12)).
      type: str
    url:
      description: The repository's URL, with a trailing slash (on the mirror when one is declared).
      type: str
    upstream_url:
      description: The same repository at NVIDIA.
      type: str
    key_file:
      description: The signing key's file name next to the repository (empty when none is declared).
      type: str
    key_url:
      description: The signing key's URL (empty when none is declared).
      type: str
    fingerprint:
      description: The signing key's declared OpenPGP fingerprint (empty when none is declared).
      type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.stack_declaration import apt_repo_for_host


def cuda_apt_repo(cuda, facts, strict=True):
    if not isinstance(cuda, dict) or 'apt_repos' not in cuda:
        raise AnsibleFilterError('cuda_apt_repo: the input must be stack_declaration_resolved.cuda (a resolved declaration)')
    facts = facts or {}
    try:
        return apt_repo_for_host(cuda, facts.get('distribution'), facts.get('distribution_version'),
                                 facts.get('distribution_major_version'), strict=bool(strict))
    except ValueError as exc:
        raise AnsibleFilterError('CUDA REPOSITORY: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'cuda_apt_repo': cuda_apt_repo}

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The cuda_apt_repo filter: a host's facts to its CUDA repository, and a refusal Ansible shows for an unknown OS."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.sglang_stack.plugins.filter.cuda_apt_repo import cuda_apt_repo
from ansible_collections.gpuops.sglang_stack.plugins.filter.stack_resolve import stack_resolve

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULTS = os.path.join(HERE, '..', '..', '..', '..', 'roles', 'stack_declaration', 'defaults', 'main.yml')


@pytest.fixture
def cuda():
    with open(DEFAULTS) as f:
        defaults = yaml.safe_load(f)
    return stack_resolve({key[len('stack_declaration_'):]: value for key, value in defaults.items()})['cuda']


def test_debian12_host(cuda):
    facts = {'distribution': 'Debian', 'distribution_version': '12.8', 'distribution_major_version': '12'}
    repo = cuda_apt_repo(cuda, facts)
    assert repo['os'] == 'Debian-12' and repo['distro'] == 'debian12'
    assert repo['key_url'] == 'https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/3bf863cc.pub'


def test_unknown_os_is_an_ansible_error_naming_it(cuda):
    facts = {'distribution': 'Fedora', 'distribution_version': '41', 'distribution_major_version': '41'}
    with pytest.raises(AnsibleFilterError, match=r'^CUDA REPOSITORY: no CUDA apt repository is declared for Fedora-41'):
        cuda_apt_repo(cuda, facts)


def test_unresolved_input_is_refused():
    with pytest.raises(AnsibleFilterError, match='stack_declaration_resolved.cuda'):
        cuda_apt_repo({'version': '13.0'}, {})

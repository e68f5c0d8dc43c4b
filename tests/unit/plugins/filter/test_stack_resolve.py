# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The stack_resolve filter: the declaration's refusals reach Ansible as AnsibleFilterError.

A controller-side test (it imports ansible.errors), so it lives beside the filter, not with the module_utils tests
that ansible-test units runs with module_utils imports only.
"""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.sglang_stack.plugins.filter.stack_resolve import stack_resolve

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULTS = os.path.join(HERE, '..', '..', '..', '..', 'roles', 'stack_declaration', 'defaults', 'main.yml')
TESTBED_REASON = 'the local test mirror has no TLS; the content is still hash- and signature-checked'


@pytest.fixture
def decl():
    """The shipped declaration, as the role assembles it."""
    with open(DEFAULTS) as handle:
        defaults = yaml.safe_load(handle)
    return {key[len('stack_declaration_'):]: value for key, value in defaults.items()}


def test_the_filter_refuses_plain_http_and_reads_the_switch(decl):
    with pytest.raises(AnsibleFilterError, match='stack_declaration_mirror_url "http://m:8080" is plain HTTP'):
        stack_resolve(decl, mirror_url='http://m:8080')
    with pytest.raises(AnsibleFilterError, match='stack_declaration_mirror_url "http://m:8080" is plain HTTP'):
        stack_resolve(decl, mirror_url='http://m:8080', allow_insecure_http='false', insecure_http_reason=TESTBED_REASON)
    assert stack_resolve(decl, mirror_url='http://m:8080', allow_insecure_http='true',
                         insecure_http_reason=TESTBED_REASON)['insecure_http']['allowed'] is True
    with pytest.raises(AnsibleFilterError, match='allow_insecure_http'):
        stack_resolve(decl, mirror_url='http://m:8080', allow_insecure_http='maybe', insecure_http_reason=TESTBED_REASON)


def test_the_filter_refuses_credentials_without_showing_them(decl):
    with pytest.raises(AnsibleFilterError) as info:
        stack_resolve(decl, mirror_url='https://ops:pw-51c2@mirror.example.internal')
    assert 'carries credentials' in str(info.value) and 'pw-51c2' not in str(info.value)

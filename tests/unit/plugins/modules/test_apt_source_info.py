# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""apt_source_info as Ansible runs it, on an /etc/apt tree with the Debian 12 image's sources, the file
NVIDIA's cuda-keyring writes and real keyrings (fixtures/apt_sources)."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.modules import apt_source_info
from ansible_collections.gpuops.sglang_stack.tests.unit.module_runner import run_module
from ansible_collections.gpuops.sglang_stack.tests.unit.plugins.module_utils.test_apt_sources import (
    CUDA_KEYRING_LIST, NVIDIA_URL, TESTBED, fixture)


@pytest.fixture
def apt(tmp_path):
    root = tmp_path / 'apt'
    (root / 'sources.list.d').mkdir(parents=True)
    (root / 'sources.list.d' / 'debian.sources').write_bytes(fixture('debian12-debian.sources'))
    for name in ('testbed-archive-keyring.gpg', 'debian-archive-keyring.gpg', 'testbed-archive-keyring.asc'):
        (tmp_path / name).write_bytes(fixture(name))
    return root, tmp_path


def args(root, **extra):
    base = {'repo_url': NVIDIA_URL, 'key_fingerprint': TESTBED, 'apt_dir': str(root),
            'managed_files': [str(root / 'sources.list.d' / 'cuda-debian12.sources')], '_ansible_check_mode': True}
    base.update(extra)
    return base


def test_cuda_keyring_source_with_another_key_refused(capsys, apt):
    root, keys = apt
    listing = root / 'sources.list.d' / 'cuda-debian12-x86_64.list'
    listing.write_text(CUDA_KEYRING_LIST.replace('/usr/share/keyrings/cuda-archive-keyring.gpg', str(keys / 'debian-archive-keyring.gpg')))
    failed, result = run_module(capsys, apt_source_info, args(root))
    assert not failed and result['changed'] is False
    assert result['decision'] == 'refuse' and str(listing) in result['problems'][0]
    assert result['sources'][0]['trust']['kind'] == 'keyring' and len(result['sources'][0]['trust']['primaries']) == 9


def test_reuse_and_key_file_check(capsys, apt):
    root, keys = apt
    (root / 'sources.list.d' / 'cuda-debian12-x86_64.list').write_text(
        CUDA_KEYRING_LIST.replace('/usr/share/keyrings/cuda-archive-keyring.gpg', str(keys / 'testbed-archive-keyring.gpg')))
    key_files = [str(keys / 'testbed-archive-keyring.asc'), str(keys / 'debian-archive-keyring.gpg')]
    failed, result = run_module(capsys, apt_source_info, args(root, key_files=key_files))
    assert not failed and result['decision'] == 'reuse' and result['fingerprint'] == TESTBED
    assert result['reuse']['signed_by'] == str(keys / 'testbed-archive-keyring.gpg')
    good, bad = result['key_files']
    assert good['matches'] and good['format'] == 'armored' and not bad['matches']


def test_bad_fingerprint_fails(capsys, apt):
    root, _keys = apt
    failed, result = run_module(capsys, apt_source_info, args(root, key_fingerprint='3bf863cc'))
    assert failed and 'not an OpenPGP fingerprint' in result['msg']


def test_nothing_to_judge_adds(capsys, apt):
    root, _keys = apt
    failed, result = run_module(capsys, apt_source_info, args(root))
    assert not failed and result['decision'] == 'add' and result['sources'] == [] and result['read_problems'] == []

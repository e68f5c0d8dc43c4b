# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The sglang_patches module, run in-process against a copy of the sglang 0.5.9 fixture.

The patched modules are only compiled (py_compile): importing them needs torch.
"""

from __future__ import annotations

import os
import py_compile

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import patch_series
from ansible_collections.gpuops.sglang_stack.plugins.modules import sglang_patches
from ansible_collections.gpuops.sglang_stack.tests.unit import module_runner
from ansible_collections.gpuops.sglang_stack.tests.unit.sglang_site import (
    DIST, NAMES, PATCH_DIR, TARGETS, digests, make_site)


def run_module(capsys, args):
    """Run the module; returns (failed, result dict)."""
    return module_runner.run_module(capsys, sglang_patches, args)


@pytest.fixture
def site(tmp_path):
    return make_site(tmp_path)


def args(site, **kwargs):
    base = {'site_packages': site, 'package_version': '0.5.9',
            'patches': [{'name': name, 'path': os.path.join(PATCH_DIR, name)} for name in NAMES]}
    base.update(kwargs)
    return base


def edit_second_target(site):
    """A local edit of the second patch's file where its hunk has context: the series no longer applies (line 389)."""
    target = os.path.join(site, TARGETS[1])
    with open(target, 'rb') as handle:
        data = handle.read().replace(b'        # Create communicator for other hardware backends\n',
                                     b'        # Create communicator for other hardware backends (local)\n', 1)
    with open(target, 'wb') as handle:
        handle.write(data)


def test_apply_idempotent_reverse(capsys, site):
    before = digests(site)
    failed, result = run_module(capsys, args(site))
    assert failed is False and result['changed'] is True
    assert [p['state'] for p in result['patches']] == ['applicable'] * len(NAMES)
    assert sorted(result['changed_files']) == sorted(TARGETS)
    assert result['applied']['package_version'] == '0.5.9'
    assert [p['name'] for p in result['applied']['patches']] == NAMES
    assert os.path.isfile(os.path.join(site, '.gpuops-patches', 'site-nccl', 'applied.json'))
    for target in TARGETS:
        py_compile.compile(os.path.join(site, target), cfile=os.path.join(site, 'check.pyc'), doraise=True)

    failed, result = run_module(capsys, args(site))
    assert failed is False and result['changed'] is False
    assert [p['state'] for p in result['patches']] == ['applied'] * len(NAMES)

    failed, result = run_module(capsys, args(site, state='absent'))
    assert failed is False and result['changed'] is True
    assert result['applied'] is None
    assert digests(site) == before
    assert not os.path.exists(os.path.join(site, '.gpuops-patches'))


def test_check_and_diff_mode(capsys, site):
    before = digests(site)
    failed, result = run_module(capsys, args(site, _ansible_check_mode=True, _ansible_diff=True))
    assert failed is False and result['changed'] is True
    assert digests(site) == before
    assert not os.path.exists(os.path.join(site, '.gpuops-patches'))
    assert [d['before_header'] for d in result['diff']] == [os.path.join(site, t) for t in sorted(TARGETS)]
    by_name = dict((os.path.relpath(d['before_header'], site), d) for d in result['diff'])
    symm = by_name[TARGETS[0]]
    assert 'all-reduce disabled: no size table for ' not in symm['before']
    assert 'all-reduce disabled: no size table for ' in symm['after']
    assert 'would change' in result['msg']


def test_conflict_fails_and_changes_nothing(capsys, site):
    before = digests(site)
    edit_second_target(site)
    failed, result = run_module(capsys, args(site))
    assert failed is True and result['changed'] is False
    assert TARGETS[1] in result['msg'] and 'sglang 0.5.9' in result['msg'] and 'line 389' in result['msg']
    assert [p['state'] for p in result['patches']] == ['applicable', 'conflict']
    assert digests(site)[:1] == before[:1]
    assert not os.path.exists(os.path.join(site, '.gpuops-patches'))


def test_wrong_version_fails(capsys, site):
    before = digests(site)
    failed, result = run_module(capsys, args(site, package_version='0.5.8'))
    assert failed is True and result['changed'] is False
    assert 'sglang 0.5.9 is installed' in result['msg'] and 'written for sglang 0.5.8' in result['msg']
    assert os.path.join(site, 'sglang-0.5.9.dist-info', 'METADATA') in result['msg']
    assert digests(site) == before


def test_stale_pyc_removed(capsys, site):
    cache = os.path.join(site, DIST, 'device_communicators', '__pycache__')
    os.makedirs(cache)
    stale = os.path.join(cache, 'torch_symm_mem.cpython-312.pyc')
    with open(stale, 'wb') as handle:
        handle.write(b'stale')
    failed, result = run_module(capsys, args(site))
    assert failed is False and result['removed_pyc'] == [stale]
    assert not os.path.exists(stale)


def test_patch_needs_name_and_path(capsys, site):
    failed, result = run_module(capsys, args(site, patches=[{'name': 'x'}]))
    assert failed is True and 'needs a name and exactly one of path and content: x' in result['msg']


def test_missing_patch_file(capsys, site):
    failed, result = run_module(capsys, args(site, patches=[{'name': 'x', 'path': os.path.join(site, 'none.patch')}]))
    assert failed is True and 'cannot read' in result['msg']


def test_patch_outside_the_package_refused(capsys, site, tmp_path):
    # issue 18 item 5: before, a patch of site-packages/sitecustomize.py (run by every Python of the venv) was applied.
    target = os.path.join(site, 'sitecustomize.py')
    with open(target, 'w') as handle:
        handle.write('pass\n')
    evil = tmp_path / '0009-evil.patch'
    evil.write_text('--- a/sitecustomize.py\n+++ b/sitecustomize.py\n@@ -1 +1 @@\n-pass\n+import os\n')
    before = digests(site)
    failed, result = run_module(capsys, args(site, patches=[{'name': '0009-evil.patch', 'path': str(evil)}]))
    assert failed is True and result['changed'] is False
    assert "0009-evil.patch: sitecustomize.py is outside the package directory 'sglang/'" in result['msg']
    with open(target) as handle:
        assert handle.read() == 'pass\n'
    assert digests(site) == before


def test_package_name_that_is_a_pip_option_refused(capsys, site):
    failed, result = run_module(capsys, args(site, package='--extra-index-url=http://evil.invalid/simple'))
    assert failed is True and result['changed'] is False
    assert result['msg'].startswith("package name '--extra-index-url=http://evil.invalid/simple' is not a PEP 508 package name")


def content_args(site, keep_dir, **kwargs):
    """The series as the role passes it: each patch's text read on the controller, kept in keep_dir by the module."""
    items = []
    for name in NAMES:
        with open(os.path.join(PATCH_DIR, name), 'rb') as handle:
            items.append({'name': name, 'content': handle.read().decode('utf-8')})
    return args(site, patches=items, keep_dir=keep_dir, **kwargs)


def kept(keep_dir):
    return dict((name, open(os.path.join(keep_dir, name), 'rb').read()) for name in sorted(os.listdir(keep_dir)))


def test_series_from_content_is_applied_and_kept(capsys, site, tmp_path):
    keep_dir = str(tmp_path / 'stack' / 'patches' / 'site-nccl')
    failed, result = run_module(capsys, content_args(site, keep_dir, _ansible_check_mode=True))
    assert failed is False and result['changed'] is True and result['kept']['written'] == NAMES
    assert not os.path.exists(keep_dir) and not os.path.exists(os.path.join(site, '.gpuops-patches'))

    failed, result = run_module(capsys, content_args(site, keep_dir))
    assert failed is False and result['changed'] is True
    assert sorted(result['changed_files']) == sorted(TARGETS) and result['kept'] == {'written': NAMES, 'removed': []}
    # Byte for byte the files of the series, mode 0644.
    assert kept(keep_dir) == dict((name, open(os.path.join(PATCH_DIR, name), 'rb').read()) for name in NAMES)
    assert all(os.stat(os.path.join(keep_dir, name)).st_mode & 0o777 == 0o644 for name in NAMES)
    assert [p['sha256'] for p in result['applied']['patches']] == [
        patch_series.sha256_bytes(open(os.path.join(PATCH_DIR, name), 'rb').read()) for name in NAMES]

    failed, result = run_module(capsys, content_args(site, keep_dir))
    assert failed is False and result['changed'] is False and result['kept'] == {'written': [], 'removed': []}

    # A patch of an earlier series left in the directory is removed; the diff shows it.
    stale = os.path.join(keep_dir, '0001-old.patch')
    with open(stale, 'wb') as handle:
        handle.write(b'old\n')
    failed, result = run_module(capsys, content_args(site, keep_dir, _ansible_diff=True))
    assert failed is False and result['changed'] is True and result['kept']['removed'] == [stale]
    assert not os.path.exists(stale) and sorted(kept(keep_dir)) == NAMES
    assert [d['after_header'] for d in result['diff']] == ['(removed)']


def test_conflict_keeps_nothing(capsys, site, tmp_path):
    keep_dir = str(tmp_path / 'patches')
    os.makedirs(keep_dir)
    with open(os.path.join(keep_dir, 'earlier.patch'), 'wb') as handle:
        handle.write(b'earlier\n')
    edit_second_target(site)
    failed, result = run_module(capsys, content_args(site, keep_dir))
    assert failed is True and result['changed'] is False and 'line 389' in result['msg']
    assert kept(keep_dir) == {'earlier.patch': b'earlier\n'}


def test_patch_needs_exactly_one_source(capsys, site, tmp_path):
    both = {'name': NAMES[0], 'path': os.path.join(PATCH_DIR, NAMES[0]), 'content': 'x'}
    failed, result = run_module(capsys, args(site, patches=[both]))
    assert failed is True and 'exactly one of path and content: %s' % NAMES[0] in result['msg']


def test_kept_name_must_be_a_file_name(capsys, site, tmp_path):
    before = digests(site)
    items = content_args(site, str(tmp_path / 'keep'))['patches']
    items[1]['name'] = '../escape.patch'
    failed, result = run_module(capsys, args(site, patches=items, keep_dir=str(tmp_path / 'keep')))
    assert failed is True and 'plain file name' in result['msg']
    assert digests(site) == before and not os.path.exists(str(tmp_path / 'keep'))

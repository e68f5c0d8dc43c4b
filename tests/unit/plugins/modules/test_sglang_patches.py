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
    target = os.path.join(site, TARGETS[1])
    with open(target, 'rb') as handle:
        data = handle.read().replace(b'        # Create communicator for other hardware backends\n',
                                     b'        # Create communicator for other hardware backends (local)\n', 1)
    with open(target, 'wb') as handle:
        handle.write(data)
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
    assert failed is True and 'needs a name and a path' in result['msg']


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

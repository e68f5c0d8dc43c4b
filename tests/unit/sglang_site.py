# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The sglang 0.5.9 site-packages fixture and the shipped patch series, shared by the patch engine's
tests (module_utils/test_patch_series.py) and the sglang_patches module's (modules/test_sglang_patches.py).

Fixture: tests/unit/fixtures/sglang-0.5.9 (verbatim wheel files, see its README.md); patches:
roles/nccl_patches/files/sglang-0.5.9.
"""

from __future__ import annotations

import hashlib
import os
import shutil

from ansible_collections.gpuops.sglang_stack.tests.unit.recorded import FIXTURES

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
FIXTURE = os.path.join(FIXTURES, 'sglang-0.5.9')
PATCH_DIR = os.path.join(ROOT, 'roles', 'nccl_patches', 'files', 'sglang-0.5.9')
# The shipped series (0001, custom all-reduce on PCIe, left it: roles/nccl_patches/README.md says why).
NAMES = ['0002-torch-symm-mem-guard.patch', '0003-nccl-log-allreduce-path.patch']
DIST = 'sglang/srt/distributed/'
# The wheel files of the fixture, and the ones the series patches.
FILES = [DIST + 'device_communicators/custom_all_reduce.py', DIST + 'device_communicators/torch_symm_mem.py',
         DIST + 'parallel_state.py']
TARGETS = FILES[1:]


def make_site(tmp_path):
    """Copy the fixture into tmp_path/site-packages, dropping the .orig suffix of the wheel files."""
    site = tmp_path / 'site-packages'
    shutil.copytree(FIXTURE, str(site))
    for dirpath, dummy, filenames in os.walk(str(site)):
        for name in filenames:
            if name.endswith('.py.orig'):
                os.rename(os.path.join(dirpath, name), os.path.join(dirpath, name[:-len('.orig')]))
    return str(site)


def digest(path):
    """sha256 hex digest of one file."""
    with open(path, 'rb') as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def digests(site, files=None):
    """Digests of the patch targets (or ``files``) under ``site``, in TARGETS order."""
    return [digest(os.path.join(site, target)) for target in (TARGETS if files is None else files)]

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the recorded outputs of the unit tests live, and how to read them."""

from __future__ import annotations

import os

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')
# Recorded on the GPU test machine: 1x H200, Ubuntu 24.04, driver 580.159.04, CUDA 13.0 (see its README).
REAL = os.path.join(FIXTURES, 'real', 'h200-ubuntu2404-cuda13')
REAL_CLI = os.path.join(FIXTURES, 'real', 'h200-nvidia-smi-cli')
# Public samples (issues, docs), each with its source in the folder's README.
PUBLIC = os.path.join(FIXTURES, 'public', 'nvidia-smi')


def read(*parts):
    with open(os.path.join(*parts)) as handle:
        return handle.read()


def host_section(name):
    """A section of the real host.txt ('== name' up to the next '== ')."""
    body = read(REAL, 'host.txt').split('== %s\n' % name, 1)[1]
    return body.split('\n== ', 1)[0] + '\n'

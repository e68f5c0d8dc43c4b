# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""A site-packages as pip leaves it, as far as stack_bom reads one: a dist-info with METADATA per distribution, and
torch/version.py (the version and CUDA torch reports)."""

from __future__ import annotations


def make_site_packages(site, torch_version, cuda='13.0', others=(('flashinfer_python', '0.6.4'),)):
    """Fill the pathlib directory ``site`` (made, with its parents) with torch at ``torch_version`` built for ``cuda``
    and the (dist-info name, version) pairs of ``others``; returns ``site``."""
    site.mkdir(parents=True)
    for name, version in (('torch', torch_version),) + tuple(others):
        info = site / ('%s-%s.dist-info' % (name, version))
        info.mkdir()
        (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: %s\nVersion: %s\n\n' % (name, version))
    (site / 'torch').mkdir()
    (site / 'torch' / 'version.py').write_text("__version__ = '%s'\ncuda: Optional[str] = '%s'\n" % (torch_version, cuda))
    return site

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment(object):

    # The marker lines of the block of raw lxc.* lines lxc_gpu_host writes: lxc_gpu_info finds the block by them and
    # lxc_gpu_devices removes it when a container moves to devN entries. One description, so the two cannot drift.
    DOCUMENTATION = r"""
options:
  marker:
    description: The marker line of the role's block of raw C(lxc.*) lines, as for M(ansible.builtin.blockinfile); C({mark}) is replaced.
    type: str
    default: "# {mark} gpuops.sglang_stack lxc_gpu_host"
  marker_begin:
    description: Replaces C({mark}) in the first marker line.
    type: str
    default: BEGIN
  marker_end:
    description: Replaces C({mark}) in the last marker line.
    type: str
    default: END
"""

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment(object):

    # How sglang_baseline and sglang_baseline_info find the service that serves and where the baseline lives.
    DOCUMENTATION = r"""
options:
  unit:
    description:
      - The systemd unit that serves (C(.service) is added to a bare name). It must run an SGLang server and be active.
      - Empty means search every process for an SGLang server; exactly one unit may run one.
    type: str
  root:
    description: The stack root; its C(baseline) directory holds the recorded baseline.
    type: path
    default: /opt/sglang
  probe_timeout:
    description: Seconds the interpreter probe (where sglang is, which version) may take.
    type: int
    default: 120
"""

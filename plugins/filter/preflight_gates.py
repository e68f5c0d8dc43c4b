# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: preflight_gates
short_description: Judge every preflight gate of a host at once
version_added: 1.0.0
author: gpuops.sglang_stack maintainers (@gpuops)
description:
  - The verdicts of the C(preflight) role's gates (operating system, nvidia-smi, driver minimum, the driver's CUDA version,
    GPU count, compute capability, device nodes, free disk, Python with venv, ensurepip, plain-HTTP key URL, existing CUDA
    apt sources, upstreams) from what the role read on the host, each with its figures.
  - Every gate is judged; a gate that cannot be judged (the driver gates when nvidia-smi does not answer) is
    V(not_checked) with the reason. The role fails once with RV(_value.msg), which lists every failing gate's
    C(PREFLIGHT <gate>:) message (cause and fix).
  - Computed on the controller, in one step (no round trip to the host).
options:
  _input:
    description:
      - What the role read - C(host) (inventory name), C(os) (C(<distribution>-<version>), the role's
        C(Debian-12) or C(Ubuntu-24.04)), C(gpu) (the result of M(gpuops.sglang_stack.gpu_info)), C(disk) (the line
        C(<free MiB> <mount point>)), C(python) (the Python probe's C(rc), C(stdout_lines), C(stderr_lines), C(msg)),
        C(apt_sources) (the result of M(gpuops.sglang_stack.apt_source_info), or V(null) when not judged) and
        C(upstreams) (the results of the C(ansible.builtin.uri) loop over the upstreams, C(item), C(status), C(msg)).
    type: dict
    required: true
  policy:
    description:
      - The thresholds - C(supported_os), C(driver_minimum), C(cuda) (the declaration's C(cuda)), C(expected_gpu_count),
        C(compute_capability), C(control_nodes), C(stack_disk_mb), C(disk_reserve_mb), C(stack_root), C(python) (C(version),
        C(tag)), C(cuda_key_url), C(insecure_http_allowed), C(cuda_key_fingerprint), C(cuda_repo_url), C(cuda_distro).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Judge the gates
  ansible.builtin.set_fact:
    preflight_result: "{{ __observed | gpuops.sglang_stack.preflight_gates(__policy) }}"
"""

RETURN = r"""
_value:
  description: The verdicts (the C(preflight) role publishes them as C(preflight_result)).
  type: dict
  contains:
    host:
      description: The inventory name of the host.
      type: str
    os:
      description: The operating system as C(<distribution>-<version>).
      type: str
    passed:
      description: Whether no gate failed.
      type: bool
    gates:
      description: Every gate in order - C(gate), C(verdict) (V(pass), V(fail), V(not_checked)), C(figures), and C(message) (fail) or C(reason) (not_checked).
      type: list
      elements: dict
    failed:
      description: The ids of the failing gates.
      type: list
      elements: str
    not_checked:
      description: The ids of the gates that could not be judged.
      type: list
      elements: str
    messages:
      description: The C(PREFLIGHT <gate>:) message of each failing gate.
      type: list
      elements: str
    msg:
      description: Empty when every gate passed; else one message listing every failing gate.
      type: str
    lines:
      description: One line per gate (id, verdict, figures), for display.
      type: list
      elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.preflight_gates import PreflightInputError, judge


def preflight_gates(observed, policy):
    try:
        return judge(observed, policy)
    except PreflightInputError as exc:
        raise AnsibleFilterError('preflight_gates: %s' % exc)


class FilterModule(object):

    def filters(self):
        return {'preflight_gates': preflight_gates}

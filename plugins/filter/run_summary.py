# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: run_summary
short_description: The end-of-run summary of a playbook, per host, from what the roles publish
version_added: 1.0.0
author: gpuops.sglang_stack maintainers (@gpuops)
description:
  - Reads, for each host of O(hosts), the results the collection's roles publish (C(stack_declaration_resolved),
    C(preflight_result), C(python_stack_dir), C(python_stack_ready), C(verify_result), C(gated_switch_result),
    C(sglang_service_healthy)) and the run_summary role's record of a failure (C(run_summary_failure)), never a role's
    C(__) variables, and returns the summary the C(run_summary) role prints and writes as JSON and Markdown.
  - A host's C(state) is V(failed) (a failure was recorded), V(lost) (out of the play without a record - unreachable),
    V(ok) (it came through every play; with O(finished), every host still in the play), or V(stopped) (the run stopped,
    because another host failed, before it came through).
options:
  _input:
    description: C(hostvars).
    type: dict
    required: true
  hosts:
    description: The hosts the play targeted, in order (C(ansible_play_hosts_all)).
    type: list
    elements: str
    required: true
  active:
    description: The hosts still in the play (C(ansible_play_hosts)).
    type: list
    elements: str
    required: true
  play:
    description: The name of the play writing the summary (C(ansible_play_name)); a host that set C(run_summary_completed) to it came through.
    type: str
    required: true
  playbook:
    description: What the summary calls the run (the playbook's name).
    type: str
    required: true
  finished:
    description: The playbook's last play writes it - every host still in the play came through.
    type: bool
    default: false
  written:
    description: When the summary is written (for example C(now(utc=true\).isoformat(\))).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Summarise the run
  ansible.builtin.set_fact:
    run_summary_result: >-
      {{ hostvars | gpuops.sglang_stack.run_summary(hosts=ansible_play_hosts_all, active=ansible_play_hosts,
         play=ansible_play_name, playbook='upgrade', finished=true, written=now(utc=true).isoformat()) }}
  run_once: true
"""

RETURN = r"""
_value:
  description: The summary.
  type: dict
  contains:
    format:
      description: The summary's format version (1).
      type: int
    playbook:
      description: O(playbook).
      type: str
    written:
      description: O(written).
      type: str
    finished:
      description: O(finished).
      type: bool
    result:
      description: V(ok) when every host is V(ok), else V(failed).
      type: str
    counts:
      description: Hosts per state (V(ok), V(failed), V(lost), V(stopped)).
      type: dict
    hosts:
      description:
        - Per host - C(host), C(state), C(failure) (C(play), C(task), C(action), C(msg)), C(stack) (C(id), C(cuda),
          C(cuda_package), C(python), C(packages)), C(preflight) (C(passed), C(failed), C(gates) with C(verdict), C(figures),
          C(detail), C(message)), C(built) (C(stack_dir), C(ready)), C(verify) (C(ok), C(failed), C(layers), C(report_path)),
          C(switch) (C(switched), C(from), C(to), C(rolled_back), C(failed_gate), C(downtime_s), C(gates)), C(service)
          (C(healthy)); V(null) where the host has no such result.
      type: list
      elements: dict
    lines:
      description: A head line and one line per host (and its failure), for display.
      type: list
      elements: str
"""

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.run_summary import PUBLISHED, build, host_entry, state_of


def _host_vars(hostvars, host):
    try:
        return hostvars[host]
    except KeyError:
        raise AnsibleFilterError('run_summary: %s is not an inventory host' % host)


def run_summary(hostvars, hosts, active, play, playbook, written, finished=False):
    if not isinstance(hostvars, Mapping):
        raise AnsibleFilterError('run_summary: the input must be hostvars, got %s' % type(hostvars).__name__)
    entries = []
    for host in hosts:
        host_vars = _host_vars(hostvars, host)
        own = dict((key, host_vars[key]) for key in ('run_summary_failure', 'run_summary_completed') if key in host_vars)
        published = dict((key, host_vars[key]) for key in PUBLISHED if key in host_vars)
        state = state_of(host, own, list(active), play, finished)
        entries.append(host_entry(host, published, state, own.get('run_summary_failure')))
    return build(playbook, entries, written, finished)


class FilterModule(object):

    def filters(self):
        return {'run_summary': run_summary}

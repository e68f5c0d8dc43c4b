# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: run_summary_markdown
short_description: The end-of-run summary as a Markdown report
version_added: 1.0.0
author: gpuops.sglang_stack maintainers (@gpuops)
description:
  - A table of the hosts (state, stack, preflight, built, verify, switch, downtime), then per host its failure, its stack,
    every preflight gate with its verdict and figures (the message of a failing one), the verify verdicts per layer and the
    switch with its gates' figures.
options:
  _input:
    description: The summary the P(gpuops.sglang_stack.run_summary#filter) filter returns.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Write the report
  ansible.builtin.copy:
    content: "{{ run_summary_result | gpuops.sglang_stack.run_summary_markdown }}"
    dest: /tmp/summary.md
    mode: "0644"
"""

RETURN = r"""
_value:
  description: The Markdown text.
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.run_summary import markdown


def run_summary_markdown(summary):
    try:
        return markdown(summary)
    except (KeyError, TypeError) as exc:
        raise AnsibleFilterError('run_summary_markdown: not a run summary (%s)' % exc)


class FilterModule(object):

    def filters(self):
        return {'run_summary_markdown': run_summary_markdown}

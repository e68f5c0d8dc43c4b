# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: systemd_unit_value
short_description: Write a one-line value into a systemd unit setting that is not unquoted
version_added: 1.0.0
author: gpuops.sglang_stack maintainers (@gpuops)
description:
- For settings such as C(Description=), C(WorkingDirectory=), C(EnvironmentFile=) and C(DeviceAllow=), which systemd does
  not unquote but in which it resolves C(%) specifiers (systemd.unit(5)); C(%) is written C(%%).
- Refuses, naming O(source) and never the value, a control character (NUL, newline, tab, ...), leading or trailing spaces
  (systemd strips them) and a trailing backslash (it joins the next line).
options:
  _input:
    description: The value.
    type: str
    required: true
  source:
    description: What an error calls the value (for example the variable it came from).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Write a description
  ansible.builtin.debug:
    msg: "Description={{ 'model 100%' | gpuops.sglang_stack.systemd_unit_value('the model path') }}"
  # Description=model 100%%
"""

RETURN = r"""
_value:
  description: The value as written after the setting's C(=).
  type: str
"""

from ansible_collections.gpuops.sglang_stack.plugins.plugin_utils.systemd_filters import systemd_unit_value


class FilterModule(object):

    def filters(self):
        return {'systemd_unit_value': systemd_unit_value}

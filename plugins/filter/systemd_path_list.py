# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: systemd_path_list
short_description: Write a space-separated list of paths for a systemd unit setting such as ReadWritePaths=
version_added: 1.0.0
author: gpuops.sglang_stack maintainers (@gpuops)
description:
- Each path becomes one word that systemd unquotes back into it (systemd.exec(5), systemd.syntax(7)); a path with characters
  other than letters, digits and C(_@+=:,./-) is written in double quotes with C(\\) and C(") escaped, and C(%) is written
  C(%%).
- Refuses, naming O(source) and the path's position, a path that is not absolute or holds a control character.
options:
  _input:
    description: The absolute paths.
    type: list
    elements: str
    required: true
  source:
    description: What an error calls the list (for example the variables it came from).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Write ReadWritePaths=
  ansible.builtin.debug:
    msg: "ReadWritePaths={{ ['/var/lib/sglang', '/srv/a b'] | gpuops.sglang_stack.systemd_path_list('state dirs') }}"
  # ReadWritePaths=/var/lib/sglang "/srv/a b"
"""

RETURN = r"""
_value:
  description: The words, separated by spaces.
  type: str
"""

from ansible_collections.gpuops.sglang_stack.plugins.plugin_utils.systemd_filters import systemd_path_list


class FilterModule(object):

    def filters(self):
        return {'systemd_path_list': systemd_path_list}

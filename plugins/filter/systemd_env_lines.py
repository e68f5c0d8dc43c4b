# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: systemd_env_lines
short_description: Write the lines of a systemd EnvironmentFile= for a dict of variables
version_added: 1.0.0
author: gpuops.sglang_stack maintainers (@gpuops)
description:
- One C(KEY=value) line per variable, sorted by name, read back by systemd into exactly that value (systemd.exec(5) C(EnvironmentFile=)).
  A value of plain characters is written as it is, any other in double quotes with C(\\), C("), C($) and the backquote escaped
  by a backslash (the same meaning in a POSIX shell's double quotes).
- Refuses a key that is not an environment variable name (letters, digits and C(_), not starting with a digit), so that
  a newline in a key cannot add a variable such as C(LD_PRELOAD), and a value holding a control character (NUL, newline,
  carriage return, tab, ...). The error names O(source) and the key, never the value.
options:
  _input:
    description: The variables; numbers and booleans are written as text.
    type: dict
    required: true
  source:
    description: What an error calls the variables (for example the variable they came from).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Write an environment file
  ansible.builtin.copy:
    dest: /etc/example.env
    content: |
      {% for line in {'A': 'plain', 'B': 'say "hi" $HOME'} | gpuops.sglang_stack.systemd_env_lines('example_env') %}
      {{ line }}
      {% endfor %}
  # A=plain
  # B="say \"hi\" \$HOME"
"""

RETURN = r"""
_value:
  description: The lines, without line ends.
  type: list
  elements: str
"""

from ansible_collections.gpuops.sglang_stack.plugins.plugin_utils.systemd_filters import systemd_env_lines


class FilterModule(object):

    def filters(self):
        return {'systemd_env_lines': systemd_env_lines}

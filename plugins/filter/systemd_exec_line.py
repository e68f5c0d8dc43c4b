# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: systemd_exec_line
short_description: Write a command line for a systemd unit's ExecStart=
version_added: 1.0.0
author: gpuops.sglang_stack maintainers (@gpuops)
description:
- Joins a list of words into a command line that systemd splits back into exactly these words (systemd.service(5) "Command
  lines"), unlike a POSIX shell's quoting.
- A word of plain characters is written as it is; any other word is written in double quotes with C(\\) and C(") escaped,
  C(%) (a unit specifier) written C(%%) and C($) (variable expansion) written C($$). A lone C(;) is quoted, so it is not
  read as a command separator.
- The executable must be an absolute path without quotes, backslashes or C($) (systemd reads its prefixes after unquoting
  and does not expand variables in it).
- A control character (NUL, newline, tab, ...) in any word is refused with an error that names O(source) and the word's
  position, not the word.
options:
  _input:
    description: The command line, one list item per word.
    type: list
    elements: str
    required: true
  source:
    description: What an error calls the command line (for example the variable it came from).
    type: str
    default: ExecStart
  executable:
    description: Whether the first word is the executable; V(false) checks a list of arguments only.
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Write ExecStart=
  ansible.builtin.debug:
    msg: "ExecStart={{ ['/usr/bin/python3', '-c', 'print(\"100%\")'] | gpuops.sglang_stack.systemd_exec_line }}"
  # ExecStart=/usr/bin/python3 -c "print(\"100%%\")"
"""

RETURN = r"""
_value:
  description: The command line as written after C(ExecStart=).
  type: str
"""

from ansible_collections.gpuops.sglang_stack.plugins.plugin_utils.systemd_filters import systemd_exec_line


class FilterModule(object):

    def filters(self):
        return {'systemd_exec_line': systemd_exec_line}

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Stand-in for what `pct set <vmid> ...` does to /etc/pve/lxc/<vmid>.conf: parse it and write it back the way
pve-container's parse_pct_config / write_pct_config do (src/PVE/LXC/Config.pm, github:proxmox/pve-container at
94f5585), optionally setting keys on the way (`pct set 101 -cores 32` is `pct_rewrite.py 101.conf cores=32`).

What it keeps of Proxmox VE's behaviour: per section, the `#` lines become the description and are written first;
the keys are written sorted, `key: value`; the raw `lxc.*` keys come last in their own order; blank lines go;
`[pve:pending]` follows the main section, then the snapshots sorted by name, each after a blank line. It does not
validate values, encode descriptions or touch the cluster file system: only the layout is reproduced.

Usage: python3 pct_rewrite.py CONFIG [key=value ...]
"""

from __future__ import annotations

import re
import sys

SECTION = re.compile(r'^\[([a-z][a-z0-9_\-]+|pve:pending)\]\s*$', re.IGNORECASE)
RAW = re.compile(r'^(lxc\.[a-z0-9_\-\.]+)(:|\s*=)\s*(.*?)\s*$')
KEY = re.compile(r'^([a-z][a-z_]*\d*):\s*(.+?)\s*$')


def parse(text):
    """Config text -> [(section name or None, {'description': [...], 'keys': {...}, 'lxc': [(k, v)]})]."""
    sections = [(None, {'description': [], 'keys': {}, 'lxc': []})]
    for line in text.splitlines():
        if not line.strip():
            continue
        match = SECTION.match(line)
        if match:
            sections.append((match.group(1), {'description': [], 'keys': {}, 'lxc': []}))
            continue
        current = sections[-1][1]
        if line.startswith('#'):
            current['description'].append(line[1:])
            continue
        match = RAW.match(line)
        if match:
            current['lxc'].append((match.group(1), match.group(3)))
            continue
        match = KEY.match(line)
        if match:
            current['keys'][match.group(1)] = match.group(2)
            continue
        raise ValueError('unable to parse config: %s' % line)
    return sections


def generate(section):
    lines = ['#' + line for line in section['description']]
    lines += ['%s: %s' % (key, section['keys'][key]) for key in sorted(section['keys'])]
    lines += ['%s: %s' % pair for pair in section['lxc']]
    return lines


def write(sections):
    main = sections[0][1]
    out = generate(main)
    pending = [body for name, body in sections[1:] if name and name.lower() == 'pve:pending']
    for body in pending:
        out += ['', '[pve:pending]'] + generate(body)
    for name, body in sorted((item for item in sections[1:] if item[0].lower() != 'pve:pending'), key=lambda item: item[0]):
        out += ['', '[%s]' % name] + generate(body)
    return '\n'.join(out) + '\n'


def rewrite(text, settings=()):
    sections = parse(text)
    for setting in settings:
        key, _sep, value = setting.partition('=')
        sections[0][1]['keys'][key] = value
    return write(sections)


def main(argv):
    path = argv[1]
    with open(path) as handle:
        text = handle.read()
    result = rewrite(text, argv[2:])
    with open(path, 'w') as handle:
        handle.write(result)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

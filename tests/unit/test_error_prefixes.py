# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Every error prefix the collection emits has a row in the troubleshooting runbook's table.

An operator greps the runbook for the first words of a failure ("THROUGHPUT GATE:", "SECRET_GUARD:", ...). The
prefixes are read from the code itself: the msg / fail_msg of every task (roles/*/tasks, playbooks) and the
msg= of every module and module_utils file, so a new refusal without a runbook row fails here.
"""

from __future__ import annotations

import glob
import os
import re

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
RUNBOOK = os.path.join(ROOT, 'docs', 'runbooks', 'troubleshooting.md')
# Upper-case words at the start of a message, up to ":" or a blank (PREFLIGHT, THROUGHPUT GATE, NCCL_GUARD).
HEAD = re.compile(r'^([A-Z][A-Z_]{2,}(?: [A-Z][A-Z_]{2,})*)(?=[: ])')
# A message that starts with a Jinja choice between prefixes: {{ 'ROLLED BACK' if ... else 'SWITCH FAILED' }}.
CHOICE = re.compile(r"'([A-Z][A-Z_]{2,}(?: [A-Z][A-Z_]{2,})*)'")
PY_MSG = re.compile(r"""msg\s*=\s*\(?\s*['"]([A-Z][A-Z_]{2,}(?: [A-Z][A-Z_]{2,})*)(?=[: %])""")
PY_GUARD = re.compile(r"""msg=['"]([A-Z][A-Z_]*_GUARD)\b""")

if not os.path.isfile(RUNBOOK):
    pytest.skip('docs/runbooks is not in this tree', allow_module_level=True)


def _messages(node):
    if isinstance(node, dict):
        if 'ansible.builtin.debug' in node or 'debug' in node:
            return  # information, not a failure
        for key, value in node.items():
            if key in ('msg', 'fail_msg') and isinstance(value, str):
                yield value
            else:
                yield from _messages(value)
    elif isinstance(node, list):
        for item in node:
            yield from _messages(item)


def emitted_prefixes():
    """{prefix: [files]} of the messages in the code."""
    found = {}
    tasks = glob.glob(os.path.join(ROOT, 'roles', '*', 'tasks', '*.yml')) + glob.glob(os.path.join(ROOT, 'playbooks', '*.yml'))
    for path in tasks:
        with open(path) as handle:
            for doc in yaml.safe_load_all(handle):
                for text in _messages(doc):
                    text = text.strip()
                    heads = [m.group(1) for m in [HEAD.match(text)] if m]
                    if text.startswith('{{'):
                        heads += CHOICE.findall(text[:text.find('}}')])
                    for head in heads:
                        found.setdefault(head, set()).add(os.path.relpath(path, ROOT))
    for path in glob.glob(os.path.join(ROOT, 'plugins', '**', '*.py'), recursive=True):
        with open(path) as handle:
            src = handle.read()
        for pattern in (PY_MSG, PY_GUARD):
            for match in pattern.finditer(src):
                found.setdefault(match.group(1), set()).add(os.path.relpath(path, ROOT))
    return found


def runbook_table():
    with open(RUNBOOK) as handle:
        text = handle.read()
    table = text[text.index('## Refusals of this collection'):]
    return [line for line in table.splitlines() if line.startswith('| `')]


def test_the_code_emits_the_known_prefixes():
    # The reader itself: it must see the prefixes of every kind of message (task, Jinja choice, module).
    found = emitted_prefixes()
    for prefix in ('PREFLIGHT', 'VERIFY', 'ROLLED BACK', 'SWITCH FAILED', 'THROUGHPUT GATE', 'NCCL_GUARD', 'SECRET_GUARD'):
        assert prefix in found, sorted(found)


def test_every_prefix_has_a_runbook_row():
    rows = runbook_table()
    missing = dict((prefix, sorted(files)) for prefix, files in emitted_prefixes().items()
                   if not any('`' + prefix in row.split('|')[1] for row in rows))
    assert not missing, 'no row in docs/runbooks/troubleshooting.md "Refusals of this collection" for: %s' % missing

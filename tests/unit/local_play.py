# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run a few role tasks with ansible-playbook on this machine (connection local) and read their results.

For the tests that need the real Templar and real task semantics (the role's checks and templates), not a module.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
COLLECTIONS = os.path.join(ROOT, 'build', 'collections')
PLAYBOOK = shutil.which('ansible-playbook', path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get('PATH', ''))

needs_playbook = pytest.mark.skipif(PLAYBOOK is None or not os.path.isdir(COLLECTIONS),
                                    reason='needs ansible-playbook and build/collections (scripts/setup-controller.sh)')


def run_play(tmp_path, tasks, play_vars):
    """{task name: localhost result} of one play of TASKS on localhost with PLAY_VARS."""
    book = [{'hosts': 'localhost', 'connection': 'local', 'gather_facts': False,
             'vars': dict(play_vars, ansible_python_interpreter=sys.executable), 'tasks': tasks}]
    path = tmp_path / 'play.yml'
    path.write_text(json.dumps(book))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_STDOUT_CALLBACK='ansible.builtin.json',
               ANSIBLE_LOCALHOST_WARNING='false', ANSIBLE_INVENTORY_UNPARSED_WARNING='false', ANSIBLE_HOME=str(tmp_path / 'home'))
    proc = subprocess.run([PLAYBOOK, '-i', 'localhost,', str(path)], env=env, capture_output=True, text=True, timeout=300, check=False)
    out = json.loads(proc.stdout[proc.stdout.index('{'):])
    return dict((t['task']['name'], t['hosts']['localhost']) for t in out['plays'][0]['tasks'])

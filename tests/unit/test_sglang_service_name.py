# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The service name check of roles/sglang_service/tasks/validate.yml, run by ansible-playbook on this machine.

The name becomes /etc/systemd/system/<name>.service and /etc/sglang/<name>.env: systemd's unit name rules
(letters, digits, ":", "_", ".", "-", no leading "-", at most 255 characters with ".service", optionally one "@"
for a template instance) keep it a plain file name (issue 18 item 5). Before, the role had no such task.
"""

from __future__ import annotations

import os

import yaml

from ansible_collections.gpuops.sglang_stack.tests.unit.local_play import needs_playbook, run_play

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
VALIDATE = os.path.join(ROOT, 'roles', 'sglang_service', 'tasks', 'validate.yml')
TASK = 'Check the service name'

pytestmark = needs_playbook

GOOD = ['sglang', 'sglang-70b', 'sglang@gpu0', 'sglang_2.test', 'a:b', 'x' * 247]
BAD = ['../etc/passwd', 'a/b', '-sglang', 'sglang service', 'sglang\n', 'sglang;reboot', '', 'x' * 248, 'a@b@c', '$(id)']


def test_first_task_checks_the_name():
    with open(VALIDATE) as handle:
        tasks = yaml.safe_load(handle)
    assert tasks[0]['name'] == TASK


def test_service_names(tmp_path):
    with open(VALIDATE) as handle:
        task = [t for t in yaml.safe_load(handle) if t.get('name') == TASK][0]
    tasks = []
    for index, name in enumerate(GOOD + BAD):
        tasks.append(dict(task, name='case %d' % index, vars={'sglang_service_name': name}, ignore_errors=True))
    results = run_play(tmp_path, tasks, {})
    failed = [name for index, name in enumerate(GOOD + BAD) if results['case %d' % index].get('failed')]
    assert failed == BAD, failed
    msg = results['case %d' % len(GOOD)]['msg']
    assert msg.startswith('SERVICE: sglang_service_name "../etc/passwd" is not a systemd unit name'), msg

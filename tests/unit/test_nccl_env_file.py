# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""<stack>/nccl.env (roles/nccl_patches/templates/nccl.env.j2), rendered by ansible-playbook and read back the way the
all-reduce probe module reads it (env_file).

The unit reads the file with systemd's env-file parser: a key with a newline would start another variable (LD_PRELOAD)
and was written as it was before; now the template refuses it, naming the key, and quotes values that need it.
"""

from __future__ import annotations

import os

import yaml

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import allreduce_probe as ap
from ansible_collections.gpuops.sglang_stack.tests.unit.local_play import ROOT, needs_playbook, run_play

pytestmark = needs_playbook
TEMPLATE = os.path.join(ROOT, 'roles', 'nccl_patches', 'templates', 'nccl.env.j2')
PROBE = os.path.join(ROOT, 'playbooks', 'allreduce_probe.yml')


def _render(tmp_path, env):
    dest = tmp_path / 'nccl.env'
    tasks = [{'name': 'render', 'ansible.builtin.template': {'src': TEMPLATE, 'dest': str(dest), 'mode': '0644'},
              'ignore_errors': True}]
    results = run_play(tmp_path, tasks, {'nccl_patches_nccl_env': env, 'nccl_patches_stack_dir': str(tmp_path)})
    return results, (dest.read_text() if dest.exists() else None)


def _tasks(tasks):
    for task in tasks:
        yield task
        for key in ('block', 'rescue', 'always'):
            yield from _tasks(task.get(key) or [])


def test_the_probe_playbook_hands_the_file_to_the_module():
    with open(PROBE) as handle:
        run = [t for t in _tasks(yaml.safe_load(handle)[0]['tasks']) if t.get('name') == 'Run the all-reduce probe'][0]
    assert run['gpuops.sglang_stack.allreduce_probe']['env_file'] == '{{ __allreduce_probe_stack_dir }}/nccl.env'


def test_plain_values_as_before_empty_ones_left_out_and_the_probe_reads_them(tmp_path):
    env = {'NCCL_P2P_LEVEL': 'SYS', 'NCCL_CUMEM_ENABLE': 0, 'NCCL_ALGO': '', 'NCCL_PROTO': None,
           'NCCL_IB_HCA': '^mlx5_1', 'SGLANG_CUSTOM_AR_ALLOW_PCIE': '0'}
    results, text = _render(tmp_path, env)
    assert not results['render'].get('failed'), results['render']
    lines = [line for line in text.splitlines() if not line.startswith('#')]
    assert lines == ['NCCL_CUMEM_ENABLE=0', 'NCCL_IB_HCA="^mlx5_1"', 'NCCL_P2P_LEVEL=SYS', 'SGLANG_CUSTOM_AR_ALLOW_PCIE=0']
    # What the probe module reads of it (allreduce_probe env_file): the NCCL_* entries, unquoted.
    assert ap.read_env_file(text) == {'NCCL_CUMEM_ENABLE': '0', 'NCCL_IB_HCA': '^mlx5_1', 'NCCL_P2P_LEVEL': 'SYS'}


def test_a_key_that_would_inject_a_variable_is_refused(tmp_path):
    results, text = _render(tmp_path, {'NCCL_ALGO\nLD_PRELOAD': '/tmp/x.so'})
    assert results['render'].get('failed') and text is None
    assert 'nccl_patches_nccl_env: "NCCL_ALGO\\nLD_PRELOAD" is not an environment variable name' in results['render']['msg']

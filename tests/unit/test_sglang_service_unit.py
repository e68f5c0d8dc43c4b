# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The sglang_service unit and environment files, rendered by ansible-playbook on this machine and read by systemd.

- validate.yml refuses what cannot be written for systemd (a newline in an argument, an environment key that is not
  a variable name, a control character in a value) before anything changes, naming the variable, never the value;
- the rendered unit passes ``systemd-analyze verify``, systemd reads every ExecStart= word back as the role built it
  (``systemd --test``, see tests/unit/plugins/module_utils/test_systemd_unit.py), and carries the hardening;
- ``systemd-analyze security --offline=yes`` scores the hardened unit below 4 (the unit before scored 9.2).
Before, the template quoted for a POSIX shell and validate.yml had no such check.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import yaml

from ansible_collections.gpuops.sglang_stack.tests.unit.local_play import needs_playbook, run_play
from ansible_collections.gpuops.sglang_stack.tests.unit.plugins.module_utils.test_systemd_unit import (
    ANALYZE, _decode_dump_words, _load_unit, needs_analyze, needs_systemd_test)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
ROLE = os.path.join(ROOT, 'roles', 'sglang_service')
TASK = "Check the unit's and the environment files' values can be written for systemd"

pytestmark = needs_playbook


def _defaults():
    # The role's defaults and those of stack_layout, its dependency (sglang_service_root reads stack_layout_root).
    values = {}
    for role in ('stack_layout', os.path.basename(ROLE)):
        with open(os.path.join(os.path.dirname(ROLE), role, 'defaults', 'main.yml')) as handle:
            values.update(yaml.safe_load(handle))
    return values


def _play(tmp_path, tasks, play_vars):
    return run_play(tmp_path, tasks, dict(_defaults(), **play_vars))


ARGV = ['/opt/sglang/current/venv/bin/python', '-m', 'sglang.launch_server', '--model-path', '/srv/models/m', '--tp-size', '8']
GOOD = {'sglang_service_model_path': '/srv/models/m', '__sglang_service_argv': ARGV,
        '__sglang_service_host_environment': {'HOME': '/var/lib/sglang'}, '__sglang_service_stack_environment': {}}
CASES = [
    ('good', {}, None),
    ('percent and dollar are escaped, not refused', {'sglang_service_extra_args': ['--x', '100% $HOME']}, None),
    ('newline in an extra arg', {'sglang_service_extra_args': ['--api-key', 'sk-secret\nExecStartPre=/bin/sh']},
     'sglang_service_extra_args: item 2 holds a newline'),
    ('newline in the launch line', {'__sglang_service_argv': ARGV + ['--served-model-name', 'a\nb']},
     'the command line of sglang.service: word 8 (after --served-model-name) holds a newline'),
    ('key that injects LD_PRELOAD', {'sglang_service_environment': {'NCCL_DEBUG\nLD_PRELOAD': 'hf_secret'}},
     'sglang_service_environment: "NCCL_DEBUG\\nLD_PRELOAD" is not an environment variable name'),
    ('newline in a value', {'sglang_service_environment': {'HF_TOKEN': 'hf_secret\nLD_PRELOAD=/x.so'}},
     'sglang_service_environment: the value of HF_TOKEN holds a newline'),
    ('derived environment', {'__sglang_service_host_environment': {'HOME': '/var/lib/a\nb'}},
     '/etc/sglang/sglang.env: the value of HOME holds a newline'),
    ('relative writable path', {'sglang_service_read_write_paths': ['relative']},
     'sglang_service_state_dir, sglang_service_cache_dir, sglang_service_read_write_paths: path 3 is not an absolute path'),
]


def test_validate_refuses_what_systemd_cannot_read(tmp_path):
    with open(os.path.join(ROLE, 'tasks', 'validate.yml')) as handle:
        tasks = yaml.safe_load(handle)
    names = [t['name'] for t in tasks]
    # Before the first task that looks at the host (and long before anything is written).
    assert names.index(TASK) < names.index("Look for the model's and the draft model's config.json")
    task = [t for t in tasks if t['name'] == TASK][0]
    cases = []
    for index, (_name, overrides, _expected) in enumerate(CASES):
        cases.append(dict(task, name='case %d' % index, vars=dict(GOOD, **overrides), ignore_errors=True))
    results = _play(tmp_path, cases, {})
    for index, (name, _overrides, expected) in enumerate(CASES):
        result = results['case %d' % index]
        if expected is None:
            assert not result.get('failed'), (name, result)
            continue
        assert result.get('failed'), name
        msg = result['msg']
        assert expected in msg, (name, msg)
        assert 'secret' not in msg and '/x.so' not in msg, (name, msg)


def _render(tmp_path, play_vars):
    out = tmp_path / 'out'
    venv = tmp_path / 'root' / 'current' / 'venv' / 'bin'
    venv.mkdir(parents=True)
    os.symlink(sys.executable, str(venv / 'python'))
    tasks = [{'name': 'unit', 'ansible.builtin.template': {'src': os.path.join(ROLE, 'templates', 'sglang.service.j2'),
                                                           'dest': str(out / 'sglang.service')}},
             {'name': 'env', 'ansible.builtin.template': {'src': os.path.join(ROLE, 'templates', 'service.env.j2'),
                                                          'dest': str(out / 'sglang.env')}}]
    out.mkdir()
    root = str(tmp_path / 'root')
    argv = [root + '/current/venv/bin/python', '-m', 'sglang.launch_server', '--model-path', play_vars['sglang_service_model_path'],
            '--tp-size', '8'] + play_vars.get('sglang_service_extra_args', [])
    results = _play(tmp_path, tasks, dict({'sglang_service_root': root, '__sglang_service_argv': argv,
                                           '__sglang_service_env_file': '/etc/sglang/sglang.env',
                                           '__sglang_service_secret_env_file': '/etc/sglang/sglang.secret.env',
                                           '__sglang_service_env_what': 'test',
                                           '__sglang_service_env_source': 'test', '__sglang_service_env_values': {'HOME': '/var/lib/sglang'}},
                                          **play_vars))
    assert not any(r.get('failed') for r in results.values()), results
    return argv, (out / 'sglang.service').read_text(), str(out / 'sglang.service')


@needs_systemd_test
@needs_analyze
def test_rendered_unit_is_read_back_by_systemd(tmp_path):
    extra = ['--x', '100% $HOME "q" \\ ;', ';', '']
    argv, text, path = _render(tmp_path, {'sglang_service_model_path': '/srv/models/m%d $x', 'sglang_service_extra_args': extra})
    verify = subprocess.run([ANALYZE, 'verify', path], capture_output=True, text=True, timeout=120, check=False)
    assert verify.returncode == 0 and 'sglang.service' not in verify.stderr, verify.stderr
    settings, _verify = _load_unit(text)
    assert settings['Description'] == ['SGLang server (m%d $x, tp 8)']
    assert _decode_dump_words(settings['Command Line'][0]) == [w.replace('$', '$$') for w in argv]
    # systemd 252's dump has no NoNewPrivileges line: the unit text says it.
    assert 'NoNewPrivileges=yes\n' in text
    for setting, value in [('ProtectSystem', 'strict'), ('ProtectHome', 'yes'),
                           ('PrivateTmp', 'yes'), ('PrivateDevices', 'no'), ('ProtectKernelTunables', 'yes'),
                           ('ProtectControlGroups', 'yes'), ('RestrictSUIDSGID', 'yes'), ('LockPersonality', 'yes'),
                           ('DevicePolicy', 'closed'), ('ReadWritePaths', '/var/lib/sglang /var/cache/sglang')]:
        assert settings[setting] == [value], (setting, settings.get(setting))
    assert {'char-nvidia rw', 'char-nvidia-uvm rw', 'char-nvidia-caps r'} <= set(settings['DeviceAllow'])
    assert 'MemoryDenyWriteExecute=' not in text.replace('Not MemoryDenyWriteExecute=', '')


@needs_analyze
def test_security_exposure(tmp_path):
    scores = {}
    for hardening in (True, False):
        sub = tmp_path / str(hardening)
        sub.mkdir()
        _argv, text, path = _render(sub, {'sglang_service_model_path': '/srv/models/m', 'sglang_service_hardening': hardening})
        proc = subprocess.run([ANALYZE, 'security', '--offline=yes', '--no-pager', path], capture_output=True, text=True,
                              timeout=120, check=False)
        scores[hardening] = float(re.search(r'Overall exposure level for sglang\.service: ([0-9.]+)', proc.stdout).group(1))
        assert ('ProtectSystem=' in text) is hardening
    assert scores[True] < 4.0 and scores[False] > 9.0, scores


def test_protect_home_read_only_for_a_model_under_home(tmp_path):
    _argv, text, _path = _render(tmp_path, {'sglang_service_model_path': '/home/ml/models/m'})
    assert 'ProtectHome=read-only\n' in text


def _task(path, name):
    with open(os.path.join(ROLE, 'tasks', path)) as handle:
        return [t for t in yaml.safe_load(handle) if t['name'] == name][0]


# (tasks file, task, case, play vars, the refusal's start or None)
GATE_CASES = [
    ('validate.yml', 'Check the throughput gate measures the baseline profile', 'gate on, baseline profile',
     {'sglang_service_throughput_gate': True}, None),
    ('validate.yml', 'Check the throughput gate measures the baseline profile', 'gate off, EAGLE-3',
     {'sglang_service_speculative_algorithm': 'EAGLE3'}, None),
    ('validate.yml', 'Check the throughput gate measures the baseline profile', 'gate on, EAGLE-3',
     {'sglang_service_throughput_gate': True, 'sglang_service_speculative_algorithm': 'EAGLE3'},
     'THROUGHPUT GATE: the gate measures the baseline profile (no speculative decoding)'),
    ('throughput.yml', 'Refuse a throughput gate with nothing to compare with', 'site figure only',
     {'sglang_service_throughput_gate': True, 'sglang_service_baseline_tok_s': 89.5}, None),
    ('throughput.yml', 'Refuse a throughput gate with nothing to compare with', 'old stack only',
     {'sglang_service_throughput_gate': True, 'sglang_service_throughput_reference_tok_s': 90.1}, None),
    ('throughput.yml', 'Refuse a throughput gate with nothing to compare with', 'neither',
     {'sglang_service_throughput_gate': True}, 'THROUGHPUT GATE: nothing to compare with on localhost'),
    ('throughput.yml', 'Refuse a throughput gate with nothing to compare with', 'neither, gate off', {}, None),
]


def test_the_throughput_gate_refusals(tmp_path):
    """The gate with speculative decoding configured, and a gate with neither the old stack's figure nor the site's."""
    cases = [dict(_task(path, task), name='case %d' % i, vars=v, ignore_errors=True)
             for i, (path, task, _n, v, _e) in enumerate(GATE_CASES)]
    results = _play(tmp_path, cases, {})
    for index, (_path, _task_name, name, _vars, expected) in enumerate(GATE_CASES):
        result = results['case %d' % index]
        assert bool(result.get('failed')) == (expected is not None), (name, result)
        if expected:
            assert result['msg'].startswith(expected), (name, result['msg'])

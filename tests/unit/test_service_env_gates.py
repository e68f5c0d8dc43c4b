# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The role task logic of three gates, run by ansible-playbook on this machine (connection local):

- preflight's Python probe (roles/preflight/tasks/python.yml), judged by its gates (module_utils/preflight_gates.py),
  against this machine's real Debian python3 with
  python3.X-venv installed, against the same interpreter over a copy of its standard library without the
  directory the python3.X-venv package ships (ensurepip: Debian splits it out exactly so), and against a
  Python that is not there;
- the service environment (roles/sglang_service/tasks/environment.yml), with and without the declaration;
- the import gate's failure message (roles/python_stack/tasks/import_gate.yml) on the real sglang 0.5.9
  wheel in a venv that lacks its requirements: the traceback is Python's own.

Nothing here creates a user: the gate's service-user path (runuser) is left to the molecule scenarios.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.preflight_gates import gate_python

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
COLLECTIONS = os.path.join(ROOT, 'build', 'collections')
PLAYBOOK = shutil.which('ansible-playbook', path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get('PATH', ''))
DEB_PYTHON = '/usr/bin/python3.%d' % sys.version_info[1]
# The real wheel, from the test bed's download cache (scripts/test-all.sh testbed fills it; testbed-units runs this).
SGLANG_WHEEL = os.path.join(os.environ.get('GPUOPS_SGLANG_TESTBED_CACHE', '/var/cache/gpuops-sglang-testbed'), 'mirror-downloads',
                            'pypi', 'sglang-0.5.9-py3-none-any.whl')

pytestmark = pytest.mark.skipif(PLAYBOOK is None or not os.path.isdir(COLLECTIONS),
                                reason='needs ansible-playbook and build/collections (scripts/setup-controller.sh)')


def play(tmp_path, tasks, play_vars=None, environment=None):
    """Run one play on localhost; return (rc, {task name: result}) from the json callback."""
    book = [{'hosts': 'localhost', 'connection': 'local', 'gather_facts': False,
             'vars': dict({'ansible_python_interpreter': sys.executable}, **(play_vars or {})),
             'environment': environment or {}, 'tasks': tasks}]
    path = tmp_path / 'play.yml'
    path.write_text(json.dumps(book))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_STDOUT_CALLBACK='ansible.builtin.json',
               ANSIBLE_CALLBACK_RESULT_FORMAT='json', ANSIBLE_LOCALHOST_WARNING='false', ANSIBLE_INVENTORY_UNPARSED_WARNING='false',
               ANSIBLE_HOME=str(tmp_path / 'ansible-home'))
    proc = subprocess.run([PLAYBOOK, '-i', 'localhost,', str(path)], env=env, capture_output=True, text=True, timeout=300, check=False)
    out = json.loads(proc.stdout[proc.stdout.index('{'):])
    results = {}
    for task in out['plays'][0]['tasks']:
        results[task['task']['name'].split(' : ')[-1]] = task['hosts'].get('localhost', {})
    return proc.returncode, results


def failure(results):
    failed = [r for r in results.values() if r.get('failed')]
    assert failed, results
    return failed[0]['msg']


PREFLIGHT = [{'name': 'probe', 'ansible.builtin.include_role': {'name': 'gpuops.sglang_stack.preflight', 'tasks_from': 'python'}},
             {'name': 'seen', 'ansible.builtin.debug': {'var': '__preflight_python'}}]


def python_gates(res, version, tag):
    """The role's probe result (as Ansible registered it) judged by the preflight's two Python gates."""
    venv, ensurepip = gate_python(res['seen']['__preflight_python'], version, tag)
    return venv, ensurepip


VERSION = '3.%d' % sys.version_info[1]


def wrapper(tmp_path, pythonhome=None):
    """A bin directory whose python3.X is the system interpreter (under PYTHONHOME when given)."""
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    script = bindir / ('python' + VERSION)
    home = 'PYTHONHOME=%s ' % pythonhome if pythonhome else ''
    script.write_text('#!/bin/sh\n%sexec %s "$@"\n' % (home, DEB_PYTHON))
    script.chmod(0o755)
    return str(bindir) + ':/usr/bin:/bin'


def debian_venv_ok():
    return subprocess.run([DEB_PYTHON, '-c', 'import venv, ensurepip; ensurepip.version()'], capture_output=True, check=False).returncode == 0


@pytest.mark.skipif(not os.path.exists(DEB_PYTHON) or not debian_venv_ok(), reason='needs the system python3.X with python3.X-venv')
def test_preflight_python_passes_with_venv_and_ensurepip(tmp_path):
    rc, res = play(tmp_path, PREFLIGHT, {'preflight_python_version': VERSION, 'stack_declaration_resolved': {'python': {'tag': 'cp3x'}}},
                   {'PATH': wrapper(tmp_path)})
    assert rc == 0, res
    lines = res['seen']['__preflight_python']['stdout_lines']
    assert [g['verdict'] for g in python_gates(res, VERSION, 'cp3x')] == ['pass', 'pass']
    real_pip = subprocess.run([DEB_PYTHON, '-m', 'ensurepip', '--version'], capture_output=True, text=True, check=True).stdout.strip()
    assert lines == [subprocess.check_output([DEB_PYTHON, '-c', 'import platform; print(platform.python_version())'], text=True).strip(),
                     real_pip]


@pytest.mark.skipif(not os.path.isdir('/usr/lib/python%s/ensurepip' % VERSION) or not os.path.exists(DEB_PYTHON),
                    reason='needs a Debian python3.X with python3.X-venv (its ensurepip directory)')
def test_preflight_python_refuses_a_python_without_ensurepip(tmp_path):
    # The system's standard library minus the ensurepip directory: what a host without python3.X-venv has.
    home = tmp_path / 'home'
    lib = home / 'lib' / ('python' + VERSION)
    lib.mkdir(parents=True)
    for entry in os.listdir('/usr/lib/python' + VERSION):
        if entry != 'ensurepip':
            os.symlink(os.path.join('/usr/lib/python' + VERSION, entry), str(lib / entry))
    probe = subprocess.run(['env', 'PYTHONHOME=%s' % home, DEB_PYTHON, '-c', 'import venv; import ensurepip'],
                           capture_output=True, text=True, check=False)
    assert "No module named 'ensurepip'" in probe.stderr  # the layout is the one meant
    rc, res = play(tmp_path, PREFLIGHT, {'preflight_python_version': VERSION, 'stack_declaration_resolved': {'python': {'tag': 'cp3x'}}},
                   {'PATH': wrapper(tmp_path, str(home))})
    assert rc == 0, res  # the probe reads; the gates judge
    venv, ensurepip = python_gates(res, VERSION, 'cp3x')
    assert venv['verdict'] == 'pass' and ensurepip['verdict'] == 'fail'
    msg = ensurepip['message']
    assert msg.startswith('PREFLIGHT python: python%s (' % VERSION), msg
    assert "imports venv but has no working ensurepip (ModuleNotFoundError: No module named 'ensurepip')" in msg
    assert 'install the python%s-venv package' % VERSION in msg


def test_preflight_python_refuses_a_missing_python(tmp_path):
    rc, res = play(tmp_path, PREFLIGHT, {'preflight_python_version': '3.97', 'stack_declaration_resolved': {'python': {'tag': 'cp397'}}})
    assert rc == 0, res
    venv, ensurepip = python_gates(res, '3.97', 'cp397')
    # The text the preflight_refusals scenario expects.
    assert venv['message'].startswith('PREFLIGHT python: no python3.97 with the venv module on this host (')
    assert ensurepip['verdict'] == 'not_checked'


ENVIRONMENT = [{'name': 'derive', 'ansible.builtin.include_role': {'name': 'gpuops.sglang_stack.sglang_service', 'tasks_from': 'environment'}},
               {'name': 'seen', 'ansible.builtin.debug': {'msg': {'env': '{{ sglang_service_unit_environment }}',
                                                                  'user': '{{ sglang_service_unit_user }}'}}}]


def test_service_environment_from_the_declaration(tmp_path):
    rc, res = play(tmp_path, ENVIRONMENT, {'stack_declaration_resolved': {'id': 'sglang-cu130-0123abcd', 'cuda': {'install_prefix': '/usr/local/cuda-13.0'}},
                                           'sglang_service_environment': {'PYTHONPATH': '/srv/extra', 'SGLANG_CUSTOM_AR_ALLOW_PCIE': 1}})
    assert rc == 0, res
    assert res['seen']['msg'] == {'user': 'sglang', 'env': {
        'CUDA_HOME': '/usr/local/cuda-13.0',
        'PATH': '/opt/sglang/stacks/sglang-cu130-0123abcd/venv/bin:/usr/local/cuda-13.0/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        'HOME': '/var/lib/sglang', 'XDG_CACHE_HOME': '/var/cache/sglang', 'FLASHINFER_WORKSPACE_BASE': '/var/cache/sglang',
        'TRITON_CACHE_DIR': '/var/cache/sglang/triton', 'PYTHONPATH': '/srv/extra', 'SGLANG_CUSTOM_AR_ALLOW_PCIE': '1'}}


def test_service_environment_site_overrides_win_and_no_declaration_leaves_the_toolkit_out(tmp_path):
    rc, res = play(tmp_path, ENVIRONMENT, {'sglang_service_state_dir': '/srv/sglang', 'sglang_service_user': 'llm',
                                           'sglang_service_environment': {'TRITON_CACHE_DIR': '/scratch/triton'}})
    assert rc == 0, res
    assert res['seen']['msg'] == {'user': 'llm', 'env': {
        'HOME': '/srv/sglang', 'XDG_CACHE_HOME': '/var/cache/sglang', 'FLASHINFER_WORKSPACE_BASE': '/var/cache/sglang',
        'TRITON_CACHE_DIR': '/scratch/triton'}}


@pytest.mark.skipif(not os.path.exists(SGLANG_WHEEL), reason='needs the real sglang 0.5.9 wheel of the test bed (scripts/test-all.sh testbed)')
def test_import_gate_names_the_missing_module_and_the_chain(tmp_path):
    stack = tmp_path / 'stack'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(stack / 'venv')], check=True)
    site = glob.glob(str(stack / 'venv' / 'lib' / 'python*' / 'site-packages'))[0]
    with zipfile.ZipFile(SGLANG_WHEEL) as wheel:
        wheel.extractall(site)
    tasks = [{'name': 'gate', 'ansible.builtin.include_role': {'name': 'gpuops.sglang_stack.python_stack', 'tasks_from': 'import_gate'}}]
    rc, res = play(tmp_path, tasks, {
        'python_stack_dir': str(stack), '__python_stack_venv': str(stack / 'venv'), '__python_stack_layer': {'name': 'sglang'},
        '__python_stack_after': {'installed': {}}, 'python_stack_import_as_service': False,
        'python_stack_import_modules': {'sglang': ['json', 'sglang.launch_server']},
        'python_stack_import_run_modules': {'sglang': ['sglang.launch_server']}})
    assert rc != 0
    msg = failure(res)
    chain = ('(import chain: sglang/__init__.py:5 -> sglang/lang/api.py:7 -> sglang/lang/backend/base_backend.py:4 -> '
             'sglang/lang/choices.py:5)')
    assert msg.startswith('IMPORT after layer sglang: sglang.launch_server failed under torch (none): '
                          "ModuleNotFoundError: No module named 'numpy' " + chain + '; python -m sglang.launch_server --help '
                          "failed under torch (none): ModuleNotFoundError: No module named 'numpy' " + chain + '.'), msg
    assert 'json failed' not in msg
    assert 'Run as' not in msg
    assert 'runs as the connecting user' in res['Say the gate does not run as the service']['msg']

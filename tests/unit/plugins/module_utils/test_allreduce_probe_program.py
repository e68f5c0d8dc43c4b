# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The probe program (module_utils/allreduce_probe_program.py): importable without side effects, and as a script it
refuses bad arguments and an interpreter without a usable torch with one JSON line, as the module reads it."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import allreduce_probe as ap
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import allreduce_probe_program as apg


def test_import_has_no_side_effects(capsys):
    importlib.reload(apg)
    assert capsys.readouterr() == ('', '')
    assert 'torch' not in sys.modules  # torch is imported only when the program runs


def test_percentile_matches_the_module_utils_one():
    values = [5.0, 1.0, 3.0, 2.0, 4.0, 9.0, 7.0]
    for q in (0, 50, 90, 99, 100):
        assert apg.percentile(values, q) == pytest.approx(ap.percentile(values, q))


def test_emit_marks_the_line_for_the_parser(capsys):
    apg.emit({'error': 'x', 'msg': 'y'})
    line = capsys.readouterr().out
    assert json.loads(line) == {'allreduce_probe': 1, 'error': 'x', 'msg': 'y'}


def result_line(stdout):
    """The probe's one JSON line (parse_probe_output turns an error line into ProbeError: read it as the module's
    message shows it)."""
    found = [json.loads(line) for line in stdout.splitlines() if line.startswith('{') and '"allreduce_probe"' in line]
    assert len(found) == 1, stdout
    with pytest.raises(ap.ProbeError, match='probe failed \\(%s\\)' % found[0]['error']):
        ap.parse_probe_output(stdout)
    return found[0]


def run_program(tmp_path, *args, torch_stub=None):
    script = tmp_path / 'probe.py'
    script.write_text(ap.program_text(apg))
    env = {'PATH': '/usr/bin:/bin'}
    if torch_stub is not None:
        stubs = tmp_path / 'stubs'
        stubs.mkdir()
        (stubs / 'torch.py').write_text(torch_stub)
        env['PYTHONPATH'] = str(stubs)
    proc = subprocess.run([sys.executable, str(script)] + list(args), capture_output=True, text=True, env=env,
                          timeout=60, check=False)
    return proc.returncode, result_line(proc.stdout)


def test_script_refuses_odd_sizes(tmp_path):
    rc, out = run_program(tmp_path, '--sizes', '4096', '333')
    assert rc == 2 and out['error'] == 'bad_args' and 'even number' in out['msg']


@pytest.mark.parametrize('stub, kind, text', [
    ('raise ImportError("libtorch_cuda.so: cannot open shared object file")\n', 'no_torch', 'cannot import torch'),
    ('__version__ = "2.11.0+cpu"\nclass version:\n    cuda = None\nclass cuda:\n    @staticmethod\n'
     '    def is_available():\n        return False\nclass multiprocessing:\n    pass\n', 'no_cuda', 'sees no CUDA device'),
])
def test_script_reports_an_unusable_torch(tmp_path, stub, kind, text):
    # torch.multiprocessing is imported as a submodule: a stub package that has it answers like a torch without CUDA.
    if kind == 'no_cuda':
        pkg = tmp_path / 'stubs' / 'torch'
        pkg.mkdir(parents=True)
        (pkg / '__init__.py').write_text(stub.replace('class multiprocessing:\n    pass\n', ''))
        (pkg / 'multiprocessing.py').write_text('')
        script = tmp_path / 'probe.py'
        script.write_text(ap.program_text(apg))
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False,
                              env={'PATH': '/usr/bin:/bin', 'PYTHONPATH': str(tmp_path / 'stubs')})
        rc, out = proc.returncode, result_line(proc.stdout)
    else:
        rc, out = run_program(tmp_path, torch_stub=stub)
    assert rc == 2 and out['error'] == kind and text in out['msg']


def test_script_counts_gpus_against_min_gpus(tmp_path):
    pkg = tmp_path / 'stubs' / 'torch'
    pkg.mkdir(parents=True)
    (pkg / '__init__.py').write_text('__version__ = "2.11.0+cu130"\nclass cuda:\n    @staticmethod\n    def is_available():\n'
                                     '        return True\n    @staticmethod\n    def device_count():\n        return 1\n')
    (pkg / 'multiprocessing.py').write_text('')
    script = tmp_path / 'probe.py'
    script.write_text(ap.program_text(apg))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False,
                          env={'PATH': '/usr/bin:/bin', 'PYTHONPATH': str(tmp_path / 'stubs')})
    out = result_line(proc.stdout)
    assert proc.returncode == 2 and out['error'] == 'too_few_gpus' and 'at least 2 GPUs; 1 visible' in out['msg']


def test_program_text_refuses_another_module():
    with pytest.raises(ap.ProbeError, match='does not hold the probe program'):
        ap.program_text(json)


def test_read_env_file_takes_nccl_entries_as_systemd_reads_them():
    text = ('# Ansible managed\nNCCL_P2P_LEVEL=SYS\nNCCL_CUMEM_ENABLE=0\nNCCL_ALGO="allreduce:tree;broadcast:ring"\n'
            'SGLANG_X=1\nNCCL_PROTO=\n\n; comment\nNCCL_DEBUG_SUBSYS="INIT,\\"ENV\\""\n')
    assert ap.read_env_file(text) == {'NCCL_P2P_LEVEL': 'SYS', 'NCCL_CUMEM_ENABLE': '0',
                                      'NCCL_ALGO': 'allreduce:tree;broadcast:ring', 'NCCL_DEBUG_SUBSYS': 'INIT,"ENV"'}


def entry(name, median, p99, ok=True):
    return {'name': name, 'ok': ok, 'env': {}, 'error': None if ok else 'failed',
            'results': [{'bytes': 16384, 'median_us': median, 'p99_us': p99}] if ok else []}


def test_beats_default_only_beyond_the_spread():
    default = entry('default', 20.0, 21.0)
    ok, why = ap.beats_default([default, entry('nccl-tree', 17.5, 18.0)], entry('nccl-tree', 17.5, 18.0))
    assert ok and '2.50 us faster, more than the spread (p99 - median) 1.00 us' in why
    ok, why = ap.beats_default([default, entry('nccl-tree', 19.5, 19.6)], entry('nccl-tree', 19.5, 19.6))
    assert not ok and 'not beyond noise' in why
    assert ap.beats_default([default], default) == (False, 'default is the default itself')
    ok, why = ap.beats_default([entry('default', 0, 0, ok=False), entry('t', 1, 2)], entry('t', 1, 2))
    assert not ok and 'the default (default) was not measured' in why

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The import gate's runner (roles/python_stack/files/import_gate.py), run as the role runs it (``python -c <file>``)
with this interpreter: the modules imported in order in one interpreter, each with its own verdict and traceback; an
interpreter that dies is followed by one per module left; each entry point in its own interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
RUNNER = os.path.join(ROOT, 'roles', 'python_stack', 'files', 'import_gate.py')


def gate(tmp_path, checks, parallel=4):
    with open(RUNNER) as handle:
        code = handle.read()
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    out = subprocess.run([sys.executable, '-c', code, sys.executable, str(parallel), json.dumps(checks)], cwd=str(tmp_path),
                         env=env, capture_output=True, text=True, check=True).stdout
    return [(r['__python_stack_module'], r['kind'], r['rc'], r['stderr'], r['cmd']) for r in json.loads(out)]


def test_modules_in_one_interpreter_each_judged_and_entry_points_apart(tmp_path):
    (tmp_path / 'first_mod.py').write_text('import os\nos.environ["GATE_SEEN"] = "1"\nprint("noise on stdout")\n')
    (tmp_path / 'needs_missing.py').write_text('import helper_of_needs\n')
    (tmp_path / 'helper_of_needs.py').write_text('import no_such_module_anywhere\n')
    (tmp_path / 'sees_first.py').write_text('import os\nassert os.environ.get("GATE_SEEN") == "1", "not in one interpreter"\n')
    (tmp_path / 'entry.py').write_text('import os, sys\nassert "GATE_SEEN" not in os.environ\nprint("usage")\n')
    results = gate(tmp_path, {'import': ['first_mod', 'needs_missing', 'sees_first'], 'run': ['entry', 'no_entry_here']})
    assert [r[:3] for r in results] == [
        ('first_mod', 'import', 0), ('needs_missing', 'import', 1), ('sees_first', 'import', 0), ('entry', 'run', 0),
        ('no_entry_here', 'run', 1)]
    # The failing import's traceback is the interpreter's own form: the role's message takes the chain of files from it.
    stderr = results[1][3]
    assert stderr.startswith('Traceback (most recent call last):')
    assert stderr.rstrip().endswith("ModuleNotFoundError: No module named 'no_such_module_anywhere'")
    assert '/needs_missing.py", line 1' in stderr and '/helper_of_needs.py", line 1' in stderr
    assert results[1][4][1:] == ['-c', 'import needs_missing']
    # A fresh interpreter for an entry point: nothing the imports did is there.
    assert results[3][4][1:] == ['-m', 'entry', '--help'] and results[3][3] == ''
    assert 'No module named no_entry_here' in results[4][3]


def test_an_interpreter_that_dies_names_the_module_that_killed_it(tmp_path):
    (tmp_path / 'fine_mod.py').write_text('')
    (tmp_path / 'kills_it.py').write_text('import os\nos._exit(3)\n')
    (tmp_path / 'after_mod.py').write_text('')
    results = gate(tmp_path, {'import': ['fine_mod', 'kills_it', 'after_mod']}, parallel=1)
    assert [r[:3] for r in results] == [('fine_mod', 'import', 0), ('kills_it', 'import', 3), ('after_mod', 'import', 0)]
    assert results[1][3] == 'the interpreter exited with status 3 and printed nothing on stderr'

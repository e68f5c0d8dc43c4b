# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Apply the collection's SGLang patch series to a real sglang 0.5.9 install and import the patched modules.

Run with the interpreter of a venv that holds sglang 0.5.9 (installed from the PyPI wheel with --no-deps) on
a machine with a CUDA GPU. Uses plugins/module_utils/patch_series.py (the sglang_patches module's logic)
directly. Prints one JSON line per step ({"step": ..., "ok": ...}); exits 0 when every step ran (a step
may still report ok=false: that is a finding, not a crash of this script).

Steps: apply the series (changed), apply again (no-op), reverse (original bytes back), apply again; a
changed target file is refused; each patched module imported in a fresh interpreter; patch 0002's guard:
TorchSymmMemCommunicator built with a compute capability missing from its size table, unpatched (expect
KeyError) and patched (expect disabled with the log line).
"""
import glob
import importlib.util
import json
import os
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATCH_DIR = os.path.join(ROOT, 'roles', 'nccl_patches', 'files', 'sglang-0.5.9')
MODULES = [
    'sglang.srt.distributed.device_communicators.custom_all_reduce',
    'sglang.srt.distributed.device_communicators.torch_symm_mem',
    'sglang.srt.distributed.parallel_state',
]

GUARD_CHILD = r'''
import json, logging, os, socket, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())
logging.getLogger().addHandler(Keep())
import torch
import torch.distributed as dist
from sglang.srt.distributed.device_communicators import torch_symm_mem as tsm
with socket.socket() as s:
    s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=0, world_size=1)
real = torch.cuda.get_device_capability
cap = int(sys.argv[1])
# Pretend the GPU has compute capability `cap` (SM120 has 12): the guard under test reads only the major.
torch.cuda.get_device_capability = lambda device=None: (cap, 0)
out = {"capability": cap, "real_capability": list(real(0)), "available": tsm.torch_symm_mem_available}
try:
    comm = tsm.TorchSymmMemCommunicator(dist.group.WORLD, 0)
    out.update(outcome="constructed", disabled=comm.disabled)
except Exception as exc:
    out.update(outcome="raised", exception="%s: %s" % (type(exc).__name__, exc))
out["log"] = [r for r in records if "ymmetric" in r or "ymmMem" in r]
print("GUARD " + json.dumps(out, sort_keys=True))
sys.stdout.flush()
os._exit(0)
'''


def emit(step, ok, **fields):
    fields.update(step=step, ok=bool(ok))
    sys.stdout.write(json.dumps(fields, sort_keys=True, default=str) + '\n')
    sys.stdout.flush()


def load_patch_series():
    path = os.path.join(ROOT, 'plugins', 'module_utils', 'patch_series.py')
    spec = importlib.util.spec_from_file_location('patch_series', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_child(args, timeout=240):
    try:
        proc = subprocess.run([sys.executable] + args, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return 124, '', 'timeout after %d s' % timeout
    return proc.returncode, proc.stdout, proc.stderr


def import_module(name):
    rc, out, err = run_child(['-c', 'import %s as m; print("IMPORTED", m.__file__)' % name])
    tail = [line for line in err.strip().splitlines() if line.strip()][-3:]
    emit('import', rc == 0 and 'IMPORTED' in out, module=name, rc=rc, stderr_tail=tail)
    return rc == 0


def guard(label, cap=12):
    rc, out, err = run_child(['-c', GUARD_CHILD, str(cap)])
    found = [json.loads(line[6:]) for line in out.splitlines() if line.startswith('GUARD ')]
    tail = [line for line in err.strip().splitlines() if line.strip()][-3:]
    emit('guard_' + label, bool(found), rc=rc, result=found[0] if found else None, stderr_tail=tail)


def main():
    ps = load_patch_series()
    site = sysconfig.get_paths()['purelib']
    version, _meta = ps.installed_version(site, 'sglang')
    emit('installed', version == '0.5.9', site=site, sglang=version, python=sys.version.split()[0])
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(PATCH_DIR, '*.patch')))
    patches = [ps.read_patch_file(n, os.path.join(PATCH_DIR, n)) for n in names]
    targets = sorted(set(f.relpath for p in patches for f in p['files']))
    original = dict((t, open(os.path.join(site, t), 'rb').read()) for t in targets)

    # Unpatched: the guard child imports torch_symm_mem, so a missing dependency shows here already.
    guard('unpatched')

    first = ps.apply_series(site, patches, 'site-nccl', 'sglang', '0.5.9', 'present')
    emit('apply', first['changed'], patches=names, changed_files=[c['relpath'] for c in first['changed_files']])
    again = ps.apply_series(site, patches, 'site-nccl', 'sglang', '0.5.9', 'present')
    emit('apply_again_noop', not again['changed'])
    patched = dict((t, open(os.path.join(site, t), 'rb').read()) for t in targets)
    for t in targets:
        rc, out, err = run_child(['-m', 'py_compile', os.path.join(site, t)])
        emit('py_compile', rc == 0, file=t, stderr_tail=err.strip().splitlines()[-2:])
    for m in MODULES:
        import_module(m)
    guard('patched')

    back = ps.apply_series(site, patches, 'site-nccl', 'sglang', '0.5.9', 'absent')
    restored = all(open(os.path.join(site, t), 'rb').read() == original[t] for t in targets)
    emit('reverse_restores_bytes', back['changed'] and restored)

    # A target changed by hand (one byte in the first line the first hunk touches) must be refused, untouched.
    target = patches[0]['files'][0].relpath
    path = os.path.join(site, target)
    with open(path, 'ab') as handle:
        handle.write(b'# changed by hand\n')
    content = open(path, 'rb').read()
    lines = content.split(b'\n')
    line = patches[0]['files'][0].hunks[0].old_start
    lines[line] = lines[line] + b'  # drift'
    with open(path, 'wb') as handle:
        handle.write(b'\n'.join(lines))
    drifted = open(path, 'rb').read()
    try:
        ps.apply_series(site, patches, 'site-nccl', 'sglang', '0.5.9', 'present')
        emit('changed_target_refused', False, msg='applied over a changed file')
    except ps.PatchError as exc:
        emit('changed_target_refused', open(path, 'rb').read() == drifted, msg=str(exc)[:300])
    with open(path, 'wb') as handle:
        handle.write(original[target])
    final = ps.apply_series(site, patches, 'site-nccl', 'sglang', '0.5.9', 'present')
    same = all(open(os.path.join(site, t), 'rb').read() == patched[t] for t in targets)
    emit('reapply_same_bytes', final['changed'] and same)


if __name__ == '__main__':
    main()

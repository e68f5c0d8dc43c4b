# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The patched communicators' decisions with the real torch on a GPU machine (issue 17 item 6, GPU part).

Run with the interpreter of a venv that holds sglang 0.5.9 (the PyPI wheel, installed with --no-deps over the image's
torch: python -m venv --system-site-packages, pip install --no-index --no-deps sglang-0.5.9-py3-none-any.whl), from the
repository root, on a machine with at least one CUDA GPU:

    python tests/device/sglang_allreduce_decisions.py [--world-sizes 1 2]

Prints one JSON line per step ({"step": ..., "ok": ...}); a step that raises records the exception, it is a finding:
  installed        the sglang version and site directory
  apply            the shipped series (roles/nccl_patches/files/sglang-0.5.9) applied with module_utils/patch_series.py
  same_decision    gpuops_allreduce_path of the patched parallel_state.py, imported with the real torch, against
                   module_utils/sglang_flags.allreduce_path on every combination of communicator states (the unit tests
                   hold the two sources together; this holds the patched module as it imports on the machine)
  groups_ws<N>     N processes (one per GPU, NCCL): init_distributed_environment + initialize_model_parallel(tp=N) of
                   the patched sglang, with the real communicators it sets up (custom AR, pynccl, torch symm-mem as the
                   machine allows), and every "[AR]" line patch 0003 logged, per rank. World size 1 logs none (the patch
                   logs groups of more than one rank): the step records that.
  reverse          the series reversed, the original bytes back
Also runs the probe program (plugins/module_utils/allreduce_probe_program.py) once per world size with --min-gpus 1.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATCH_DIR = os.path.join(ROOT, 'roles', 'nccl_patches', 'files', 'sglang-0.5.9')
SERIES = ['0002-torch-symm-mem-guard.patch', '0003-nccl-log-allreduce-path.patch']

GROUPS_CHILD = r'''
import json, logging, os, socket, sys, traceback
lines = []
class Keep(logging.Handler):
    def emit(self, record):
        msg = record.getMessage()
        if msg.startswith("[AR]") or "ustom" in msg or "ymm" in msg:
            lines.append("%s %s" % (record.levelname, msg))
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
logging.getLogger().addHandler(Keep())
import torch
import torch.multiprocessing as mp

# sgl_kernel: initialize_model_parallel imports SGLang's layers, which import sgl_kernel at module level. The real
# wheel (PyPI sgl-kernel 0.3.21, 535 MB) is over the GPU machine's carry limit, so where it is missing an import
# stand-in answers every name with a function that raises: the communicators' decisions use none of its kernels
# (custom all-reduce is built only for groups of 2+ ranks, and its ops then report the stand-in as unusable).
import importlib.abc, importlib.machinery, types
SGL_KERNEL = "real"
try:
    import sgl_kernel  # noqa: F401
except ImportError:
    SGL_KERNEL = "import stand-in (real wheel not carried)"
    class _Absent:
        def __init__(self, name):
            self.name = name
        def __call__(self, *args, **kwargs):
            raise RuntimeError("sgl_kernel stand-in: %s called" % self.name)
    class _Stub(types.ModuleType):
        __path__ = []
        def __getattr__(self, attr):
            if attr.startswith("__"):
                raise AttributeError(attr)
            return _Absent("%s.%s" % (self.__name__, attr))
    class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path, target=None):
            if name == "sgl_kernel" or name.startswith("sgl_kernel."):
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None
        def create_module(self, spec):
            return _Stub(spec.name)
        def exec_module(self, module):
            pass
    sys.meta_path.insert(0, _Finder())
    # SGLang registers fake (meta) kernels for sgl_kernel's ops at import; with no library those ops do not exist.
    _register_fake = torch.library.register_fake
    def register_fake(op, *args, **kwargs):
        if isinstance(op, str) and op.startswith("sgl_kernel::"):
            return lambda fn=None, *a, **k: fn
        return _register_fake(op, *args, **kwargs)
    torch.library.register_fake = register_fake
    # initialize_model_parallel reads one constant from sglang.srt.layers.sampler, whose imports pull in every
    # quantisation kernel: the constant alone, computed as sampler.py line 34 of 0.5.9 computes it.
    from sglang.srt.utils import get_bool_env_var
    _sampler = types.ModuleType("sglang.srt.layers.sampler")
    _sampler.SYNC_TOKEN_IDS_ACROSS_TP = get_bool_env_var("SYNC_TOKEN_IDS_ACROSS_TP")
    sys.modules["sglang.srt.layers.sampler"] = _sampler

def worker(rank, world_size, port, queue):
    out = {"rank": rank, "sgl_kernel": SGL_KERNEL}
    def mark(what):
        sys.stderr.write("rank %d: %s\n" % (rank, what))
        sys.stderr.flush()
    try:
        mark("started")
        # A rank that hangs leaves its stacks on stderr before the parent gives up on it.
        import faulthandler
        faulthandler.dump_traceback_later(max(10, int(os.environ.get('GPUOPS_GROUPS_TIMEOUT', '120')) - 20), repeat=True)
        torch.cuda.set_device(rank)
        from sglang.srt.distributed import parallel_state as ps
        mark("imported parallel_state")
        ps.init_distributed_environment(world_size=world_size, rank=rank, local_rank=rank, backend="nccl",
                                        distributed_init_method="tcp://127.0.0.1:%d" % port)
        mark("init_distributed_environment done")
        ps.initialize_model_parallel(tensor_model_parallel_size=world_size)
        mark("initialize_model_parallel done")
        tp = ps.get_tp_group()
        out.update(ok=True, device=torch.cuda.get_device_name(rank), capability=list(torch.cuda.get_device_capability(rank)),
                   tp_unique_name=tp.unique_name, ca_comm=None if tp.ca_comm is None else
                   {"disabled": tp.ca_comm.disabled, "full_nvlink": getattr(tp.ca_comm, "full_nvlink", None)},
                   pynccl=tp.pynccl_comm is not None, torch_symm_mem=None if tp.torch_symm_mem_comm is None else
                   {"disabled": tp.torch_symm_mem_comm.disabled})
        if world_size > 1:
            x = torch.ones(8192, dtype=torch.bfloat16, device="cuda")
            y = tp.all_reduce(x)
            torch.cuda.synchronize()
            out["all_reduce_of_ones"] = float(y[0].item())
    except BaseException as exc:
        out.update(ok=False, exception="%s: %s" % (type(exc).__name__, exc), traceback=traceback.format_exc()[-1500:])
    out["log"] = list(lines)
    if not out.get("ok"):
        mark("failed: %s" % out.get("exception"))
    queue.put(out)
    # put() hands the item to a feeder thread: wait for it before os._exit, which would drop it.
    queue.close()
    queue.join_thread()
    sys.stdout.flush()
    os._exit(0)

if __name__ == "__main__":
    world_size = int(sys.argv[1])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, world_size, port, queue)) for r in range(world_size)]
    for p in procs:
        p.start()
    try:
        results = [queue.get(timeout=int(os.environ.get('GPUOPS_GROUPS_TIMEOUT', '120'))) for _ in procs]
    except Exception:
        sys.stderr.write("no result from every rank; exit codes %s\n" % [p.exitcode for p in procs])
        for p in procs:
            p.kill()
        raise
    for p in procs:
        p.join(timeout=30)
    print("GROUPS " + json.dumps(sorted(results, key=lambda r: r["rank"]), sort_keys=True))
'''

SAME_CHILD = r'''
import importlib.util, itertools, json, sys
import torch
from sglang.srt.distributed import parallel_state as ps
spec = importlib.util.spec_from_file_location("sglang_flags", sys.argv[1])
rules = importlib.util.module_from_spec(spec); spec.loader.exec_module(rules)
cases = differ = 0
first = []
for ws, symm, ca, ca_ws, nvl, ms, ts, graph in itertools.product(
        (1, 2, 4, 8), (False, True), (False, True), (0, 2, 8), (False, True), (False, True), (False, True), (False, True)):
    kw = dict(symm_mem=symm, ca_enabled=ca, ca_world_size=ca_ws, ca_full_nvlink=nvl, ca_max_size=8192 * 1024 if ca else 0,
              mscclpp_ready=ms, mscclpp_max_bytes=1 << 20, torch_symm_mem_enabled=ts,
              torch_symm_mem_max_size=64 << 20 if ts else 0, cuda_graph=graph)
    got = ps.gpuops_allreduce_path(ws, **kw)[0]
    want = rules.allreduce_path(ws, **kw)[0]
    cases += 1
    if got != want:
        differ += 1
        first.append({"ws": ws, "kw": kw, "patched": got, "rules": want})
print("SAME " + json.dumps({"cases": cases, "differ": differ, "first": first[:3], "torch": torch.__version__,
                            "cuda": torch.version.cuda, "module": ps.__file__}, sort_keys=True))
'''


def emit(step, ok, **fields):
    fields.update(step=step, ok=bool(ok))
    sys.stdout.write(json.dumps(fields, sort_keys=True, default=str) + '\n')
    sys.stdout.flush()


def collection_path():
    """A sys.path entry under which this checkout imports as ansible_collections.gpuops.sglang_stack.

    module_utils import each other by that name (patch_series imports stack_bom), as Ansible installs them.
    """
    top = tempfile.mkdtemp(prefix='gpuops-collections-')
    os.makedirs(os.path.join(top, 'ansible_collections', 'gpuops'))
    os.symlink(ROOT, os.path.join(top, 'ansible_collections', 'gpuops', 'sglang_stack'))
    sys.path.insert(0, top)
    return top


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def child(args, marker, timeout=300, env=None):
    try:
        proc = subprocess.run([sys.executable] + args, capture_output=True, text=True, timeout=timeout, check=False,
                              env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        return None, 124, 'timeout after %d s' % timeout
    logdir = os.environ.get('GPUOPS_DEVICE_LOGDIR')
    if logdir:  # the whole stderr of each child, for a run that needs more than the tail
        with open(os.path.join(logdir, 'child-%s.stderr' % marker.lower()), 'a') as handle:
            handle.write(proc.stderr)
    found = [json.loads(line[len(marker) + 1:]) for line in proc.stdout.splitlines() if line.startswith(marker + ' ')]
    tail = [line for line in proc.stderr.strip().splitlines() if line.strip()][-6:]
    return (found[0] if found else None), proc.returncode, tail


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--world-sizes', type=int, nargs='+', default=[1, 2])
    args = parser.parse_args()
    collection_path()
    ps = load('patch_series', os.path.join(ROOT, 'plugins', 'module_utils', 'patch_series.py'))
    site = sysconfig.get_paths()['purelib']
    version, _meta = ps.installed_version(site, 'sglang')
    emit('installed', version == '0.5.9', site=site, sglang=version, python=sys.version.split()[0])
    patches = [ps.read_patch_file(n, os.path.join(PATCH_DIR, n)) for n in SERIES]
    applied = ps.apply_series(site, patches, 'site-nccl', 'sglang', '0.5.9', 'present')
    emit('apply', True, patches=SERIES, changed=applied['changed'],
         files=[c['relpath'] for c in applied['changed_files']])
    try:
        same, rc, tail = child(['-c', SAME_CHILD, os.path.join(ROOT, 'plugins', 'module_utils', 'sglang_flags.py')], 'SAME')
        emit('same_decision', bool(same) and same['differ'] == 0, rc=rc, result=same, stderr_tail=tail)
        count = subprocess.run([sys.executable, '-c', 'import torch; print(torch.cuda.device_count())'],
                               capture_output=True, text=True, timeout=120, check=False)
        gpus = int(count.stdout.strip() or 0) if count.returncode == 0 else 0
        emit('gpus', gpus > 0, count=gpus, stderr_tail=count.stderr.strip().splitlines()[-2:])
        for ws in args.world_sizes:
            if ws > gpus:
                emit('groups_ws%d' % ws, False, skipped='%d GPU(s) visible' % gpus)
                continue
            # A file, not -c: the spawn start method re-imports __main__ in each rank to find worker().
            script = os.path.join(tempfile.mkdtemp(prefix='gpuops-groups-'), 'groups_child.py')
            with open(script, 'w') as handle:
                handle.write(GROUPS_CHILD)
            groups, rc, tail = child([script, str(ws)], 'GROUPS',
                                     env={'SGLANG_USE_MESSAGE_QUEUE_BROADCASTER': 'false'})
            ar = [line for r in groups or [] for line in r.get('log', []) if '[AR]' in line]
            emit('groups_ws%d' % ws, bool(groups) and all(r.get('ok') for r in groups), rc=rc, ranks=groups,
                 ar_lines=ar, stderr_tail=tail)
            probe = subprocess.run([sys.executable, os.path.join(ROOT, 'plugins', 'module_utils', 'allreduce_probe_program.py'),
                                    '--min-gpus', '1', '--sizes', '4096', '16384', '1048576', '--replays', '50'],
                                   capture_output=True, text=True, timeout=300, check=False,
                                   env=dict(os.environ, CUDA_VISIBLE_DEVICES=','.join(str(i) for i in range(ws))))
            lines = [line for line in probe.stdout.splitlines() if '"allreduce_probe"' in line]
            emit('probe_ws%d' % ws, probe.returncode == 0 and bool(lines), rc=probe.returncode,
                 result=json.loads(lines[-1]) if lines else None, stderr_tail=probe.stderr.strip().splitlines()[-4:])
    finally:
        back = ps.apply_series(site, patches, 'site-nccl', 'sglang', '0.5.9', 'absent')
        emit('reverse', back['changed'], files=[c['relpath'] for c in back['changed_files']])


if __name__ == '__main__':
    main()

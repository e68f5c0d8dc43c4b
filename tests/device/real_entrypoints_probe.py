# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Probes for tests/device/real_entrypoints.sh, run with the real torch on the GPU machine.

Usage:
  real_entrypoints_probe.py flashinfer         import flashinfer; print what it decided and created under $HOME
  real_entrypoints_probe.py allreduce          sglang's custom all-reduce decisions at world size 1 (one JSON line each)
  real_entrypoints_probe.py load-so PATH       load a shared object the way sgl_kernel's load_utils loads common_ops
  real_entrypoints_probe.py hide MODULE ARGS   run ARGS (-c CODE or -m MODULE ...) with MODULE made unimportable

Every step prints what it saw; a step that raises prints its traceback verbatim and the script carries on, so
the output records the real behaviour, not a judgement of it.
"""
import json
import os
import sys
import traceback


def emit(step, **kw):
    kw['step'] = step
    print(json.dumps(kw, sort_keys=True, default=str), flush=True)


def tree(root, depth=4):
    """Paths under root, at most depth levels, as created so far."""
    out = []
    if not os.path.isdir(root):
        return out
    base = root.rstrip('/').count('/')
    for cur, dirs, files in os.walk(root):
        if cur.count('/') - base >= depth:
            dirs[:] = []
        out.extend(os.path.join(cur, n) for n in sorted(dirs + files))
    return sorted(out)


def probe_flashinfer():
    home = os.environ.get('HOME', '')
    emit('env', HOME=home, home_exists=os.path.isdir(home), home_writable=os.access(home, os.W_OK), uid=os.getuid())
    try:
        import flashinfer
        from flashinfer.jit import env as jit_env
    except Exception:  # pylint: disable=broad-except
        traceback.print_exc()
        emit('import_flashinfer', ok=False)
        return
    emit('import_flashinfer', ok=True, version=flashinfer.__version__, file=flashinfer.__file__,
         has_flashinfer_cubin=jit_env.has_flashinfer_cubin(), has_flashinfer_jit_cache=jit_env.has_flashinfer_jit_cache(),
         FLASHINFER_WORKSPACE_DIR=jit_env.FLASHINFER_WORKSPACE_DIR, FLASHINFER_CUBIN_DIR=getattr(jit_env, 'FLASHINFER_CUBIN_DIR', None))
    emit('home_after_import', paths=tree(home))


def probe_allreduce():
    home = os.environ.get('HOME', '')
    emit('env', HOME=home, CUDA_VISIBLE_DEVICES=os.environ.get('CUDA_VISIBLE_DEVICES'), uid=os.getuid())
    try:
        import torch
        import torch.distributed as dist
        emit('torch', version=torch.__version__, cuda=torch.version.cuda, devices=torch.cuda.device_count(),
             capability=torch.cuda.get_device_capability(0) if torch.cuda.is_available() else None)
        from sglang.srt.distributed.device_communicators import custom_all_reduce as car
        from sglang.srt.distributed.device_communicators import custom_all_reduce_ops as ops
        from sglang.srt.distributed.device_communicators import custom_all_reduce_utils as utils
        emit('ops_flags', IS_CUSTOM_AR_AVAILABLE=ops.IS_CUSTOM_AR_AVAILABLE, IS_QUICK_AR_AVAILABLE=ops.IS_QUICK_AR_AVAILABLE,
             IS_MSCCLPP_AR_AVAILABLE=ops.IS_MSCCLPP_AR_AVAILABLE, dispatch=car.dispatch_custom_allreduce().__name__)
    except Exception:  # pylint: disable=broad-except
        traceback.print_exc()
        emit('import', ok=False)
        return
    for name, call in (
            ('is_full_nvlink([0], 1)', lambda: utils.is_full_nvlink([0], 1)),
            ('torch.cuda.can_device_access_peer(0, 0)', lambda: torch.cuda.can_device_access_peer(0, 0)),
            ('gpu_p2p_access_check(0, 0)', lambda: utils.gpu_p2p_access_check(0, 0)),
            ('_can_p2p(0, 1)', lambda: car._can_p2p(0, 1)),  # pylint: disable=protected-access
    ):
        try:
            emit('call', call=name, result=call())
        except Exception as exc:  # pylint: disable=broad-except
            traceback.print_exc()
            emit('call', call=name, raised='%s: %s' % (type(exc).__name__, exc))
    emit('home_after_p2p_check', paths=tree(os.path.join(home, '.cache', 'sglang')))
    try:
        os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
        os.environ.setdefault('MASTER_PORT', '29531')
        dist.init_process_group('gloo', rank=0, world_size=1)
        comm = car.CustomAllreduce(group=dist.group.WORLD, device=torch.device('cuda:0'))
        emit('CustomAllreduce(world_size=1)', disabled=comm.disabled,
             full_nvlink=getattr(comm, 'full_nvlink', None), world_size=getattr(comm, 'world_size', None))
    except Exception as exc:  # pylint: disable=broad-except
        traceback.print_exc()
        emit('CustomAllreduce(world_size=1)', raised='%s: %s' % (type(exc).__name__, exc))
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def load_so(path):
    import importlib.util
    import torch  # the libraries sgl_kernel's extensions link against (libtorch.so, libc10.so) come from here
    emit('torch', version=torch.__version__, cuda=torch.version.cuda)
    try:
        spec = importlib.util.spec_from_file_location('common_ops', path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        emit('load', path=path, ok=True)
    except Exception as exc:  # pylint: disable=broad-except
        traceback.print_exc()
        emit('load', path=path, ok=False, error='%s: %s' % (type(exc).__name__, exc))


class _Hide:
    """A meta-path finder that makes one top-level package unimportable, as if it were not installed."""

    def __init__(self, name):
        self.name = name

    def find_spec(self, fullname, path=None, target=None):  # pylint: disable=unused-argument
        if fullname == self.name or fullname.startswith(self.name + '.'):
            raise ModuleNotFoundError("No module named '%s'" % fullname, name=fullname)
        return None


def hide(name, args):
    import runpy
    sys.meta_path.insert(0, _Hide(name))
    if args[0] == '-c':
        sys.argv = ['-c'] + args[2:]
        exec(compile(args[1], '<string>', 'exec'), {'__name__': '__main__'})  # pylint: disable=exec-used
    elif args[0] == '-m':
        sys.argv = [args[1]] + args[2:]
        runpy.run_module(args[1], run_name='__main__', alter_sys=True)
    else:
        raise SystemExit('hide: expected -c CODE or -m MODULE')


def main(argv):
    if not argv:
        raise SystemExit(__doc__)
    if argv[0] == 'flashinfer':
        probe_flashinfer()
    elif argv[0] == 'allreduce':
        probe_allreduce()
    elif argv[0] == 'load-so' and len(argv) == 2:
        load_so(argv[1])
    elif argv[0] == 'hide' and len(argv) >= 3:
        hide(argv[1], argv[2:])
    else:
        raise SystemExit(__doc__)


if __name__ == '__main__':
    main(sys.argv[1:])

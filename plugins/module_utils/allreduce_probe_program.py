# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""All-reduce latency probe (gpuops.sglang_stack): one process per visible GPU, NCCL, bf16.

The program the module allreduce_probe runs with the stack's interpreter: the module reads this file's source
(allreduce_probe.program_text) and runs it on the host as a script. Importing it has no side effect and needs only
the standard library; torch is imported when it runs.

Graph mode (default) captures --iterations all-reduces in one CUDA graph and times --replays replays of it with
CUDA events; --eager times a plain loop of the same length. Per-op time = replay time / iterations. Rank 0 prints
one JSON line holding the key "allreduce_probe".

Replays and their CUDA events run on a side stream (--stream side, default), not on the default stream, whose
replays were about 5 us per all-reduce slower on 2x H200 (docs/allreduce-probe.md).

--backend torch (default) uses torch.distributed.all_reduce; --backend nccl calls ncclAllReduce through ctypes on
the current stream, in place, as SGLang's PyNcclCommunicator does inside its CUDA graphs. On 2x H200 both gave the
same figures (docs/allreduce-probe.md).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time


def emit(payload):
    payload = dict(payload)
    payload["allreduce_probe"] = 1
    sys.stdout.write(json.dumps(payload, sort_keys=True) + "\n")
    sys.stdout.flush()


def fail(kind, msg, code=2):
    emit({"error": kind, "msg": msg})
    raise SystemExit(code)


def percentile(values, q):
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def load_nccl(path):
    """libnccl through ctypes, as SGLang's PyNcclCommunicator (pynccl_wrapper.py) loads it."""
    import ctypes
    if not path:
        # torch's own NCCL (the nvidia-nccl wheel): the library torch.distributed uses, already loaded.
        try:
            import nvidia.nccl
            candidate = os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2")
            path = candidate if os.path.exists(candidate) else "libnccl.so.2"
        except ImportError:
            path = "libnccl.so.2"
    lib = ctypes.CDLL(path)
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    return lib, path


class DirectNccl(object):
    """ncclAllReduce called directly on the current (capturing) stream, in place, like SGLang's pynccl in its
    CUDA graphs; no torch.distributed bookkeeping around each call."""

    def __init__(self, rank, world_size, device, library):
        import ctypes
        import torch
        import torch.distributed as dist

        class UniqueId(ctypes.Structure):
            _fields_ = [("internal", ctypes.c_byte * 128)]

        self.ctypes = ctypes
        self.lib, self.path = load_nccl(library)
        self.lib.ncclCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, UniqueId, ctypes.c_int]
        self.lib.ncclAllReduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                           ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        uid = UniqueId()
        if rank == 0:
            self.check(self.lib.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
        # Share the id over gloo: an NCCL broadcast fails under some sweep settings (NCCL_ALGO=Tree has no
        # broadcast algorithm; seen on 2x H200 with NCCL 2.28.9).
        group = dist.new_group(backend="gloo")
        raw = torch.tensor(bytearray(bytes(uid.internal)), dtype=torch.uint8)
        dist.broadcast(raw, src=0, group=group)
        ctypes.memmove(ctypes.addressof(uid), bytes(raw.tolist()), 128)
        self.comm = ctypes.c_void_p()
        self.check(self.lib.ncclCommInitRank(ctypes.byref(self.comm), world_size, uid, rank), "ncclCommInitRank")
        version = ctypes.c_int()
        self.check(self.lib.ncclGetVersion(ctypes.byref(version)), "ncclGetVersion")
        self.version = version.value

    def check(self, code, what):
        if code != 0:
            raise RuntimeError("%s failed: %s" % (what, self.lib.ncclGetErrorString(code).decode()))

    def all_reduce(self, tensor):
        import torch
        # 9 = ncclBfloat16, 0 = ncclSum (nccl.h since NCCL 2.10).
        self.check(self.lib.ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), 9, 0, self.comm,
                                          torch.cuda.current_stream().cuda_stream), "ncclAllReduce")


def worker(rank, world_size, port, args, nccl_env):
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=world_size, device_id=device)
    results = []
    try:
        check = torch.ones(1024, dtype=torch.bfloat16, device=device)
        dist.all_reduce(check)
        torch.cuda.synchronize()
        if float(check[0].item()) != float(world_size):
            raise RuntimeError("all-reduce of ones gave %s, expected %s" % (check[0].item(), world_size))
        if args.backend == "nccl":
            direct = DirectNccl(rank, world_size, device, args.nccl_library)
            all_reduce = direct.all_reduce
            check = torch.ones(1024, dtype=torch.bfloat16, device=device)
            all_reduce(check)
            torch.cuda.synchronize()
            if float(check[0].item()) != float(world_size):
                raise RuntimeError("direct ncclAllReduce of ones gave %s, expected %s" % (check[0].item(), world_size))
        else:
            direct = None
            all_reduce = dist.all_reduce
        for size in args.sizes:
            # --buffers N: consecutive all-reduces cycle over N tensors instead of reusing one.
            tensors = [torch.zeros(size // 2, dtype=torch.bfloat16, device=device) for _buffer in range(args.buffers)]
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for i in range(args.warmup):
                    all_reduce(tensors[i % args.buffers])
            torch.cuda.current_stream().wait_stream(side)
            torch.cuda.synchronize()
            if args.eager:
                def step():
                    for i in range(args.iterations):
                        all_reduce(tensors[i % args.buffers])
            else:
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    for i in range(args.iterations):
                        all_reduce(tensors[i % args.buffers])
                torch.cuda.synchronize()
                step = graph.replay
            # --stream side (default): replay and time on a non-default stream. On the default (legacy) stream each
            # all-reduce of a replayed graph took about 5 us more on 2x H200, more the longer the graph (4 KB:
            # 11-12 us against 6.4 us, 1 MB: 18.4-19.6 against 13.9); --stream current keeps that for comparison.
            timing = torch.cuda.Stream() if args.stream == "side" else torch.cuda.current_stream()
            timing.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(timing):
                if not args.eager:
                    for _warm in range(3):
                        step()
                    torch.cuda.synchronize()
                dist.barrier()
                torch.cuda.synchronize()
                starts = [torch.cuda.Event(enable_timing=True) for _replay in range(args.replays)]
                ends = [torch.cuda.Event(enable_timing=True) for _replay in range(args.replays)]
                for i in range(args.replays):
                    starts[i].record()
                    step()
                    ends[i].record()
                torch.cuda.synchronize()
            per_op = [s.elapsed_time(e) * 1000.0 / args.iterations for s, e in zip(starts, ends)]
            loop_us = starts[0].elapsed_time(ends[-1]) * 1000.0 / (args.iterations * args.replays)
            results.append({
                "loop_mean_us": round(loop_us, 3),
                "bytes": size,
                "median_us": round(percentile(per_op, 50), 3),
                "p99_us": round(percentile(per_op, 99), 3),
                "mean_us": round(sum(per_op) / len(per_op), 3),
                "min_us": round(min(per_op), 3),
                "max_us": round(max(per_op), 3),
                "samples": len(per_op),
            })
            if not args.eager:
                del graph
            dist.barrier()
        if rank == 0:
            nccl = torch.cuda.nccl.version()
            if isinstance(nccl, tuple):
                nccl = ".".join(str(part) for part in nccl)
            emit({
                "mode": "eager" if args.eager else "graph",
                "world_size": world_size,
                "device": torch.cuda.get_device_name(0),
                "torch": torch.__version__,
                "cuda": torch.version.cuda,
                "nccl": str(nccl),
                "iterations": args.iterations,
                "replays": args.replays,
                "warmup": args.warmup,
                "buffers": args.buffers,
                "backend": args.backend,
                "stream": args.stream,
                "nccl_library": direct.path if direct else None,
                "nccl_direct_version": direct.version if direct else None,
                "env": nccl_env,
                "results": results,
            })
    except BaseException:
        dist.destroy_process_group()
        raise
    # On 2x H200 (torch 2.11.0+cu130, NCCL 2.28.9) the graph-mode run printed its result and then did not exit
    # (tearing down a communicator used in CUDA graphs). Once the result is out, leave without tearing down.
    torch.cuda.synchronize()
    sys.stdout.flush()
    os._exit(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 16384, 65536, 262144, 1048576])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--replays", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--buffers", type=int, default=1)
    parser.add_argument("--backend", choices=["nccl", "torch"], default="torch")
    parser.add_argument("--nccl-library", default="")
    parser.add_argument("--stream", choices=["current", "side"], default="side")
    parser.add_argument("--eager", action="store_true")
    # 2 for a real all-reduce; 1 only to test the program itself on a one-GPU machine (NCCL then copies).
    parser.add_argument("--min-gpus", type=int, default=2)
    args = parser.parse_args()
    if any(size <= 0 or size % 2 for size in args.sizes):
        fail("bad_args", "every size must be a positive even number of bytes (bf16)")
    if args.iterations < 1 or args.replays < 1 or args.warmup < 1 or args.buffers < 1:
        fail("bad_args", "iterations, replays, warmup and buffers must be at least 1")
    try:
        import torch
        import torch.multiprocessing as mp
    except Exception as exc:  # any import failure means no usable torch
        fail("no_torch", "%s cannot import torch: %s" % (sys.executable, exc))
    if not torch.cuda.is_available():
        fail("no_cuda", "torch %s sees no CUDA device (torch.version.cuda=%s)" % (torch.__version__, torch.version.cuda))
    world_size = torch.cuda.device_count()
    if world_size < max(1, args.min_gpus):
        fail("too_few_gpus", "an all-reduce needs at least %d GPUs; %d visible" % (max(1, args.min_gpus), world_size))
    nccl_env = dict((k, v) for k, v in sorted(os.environ.items()) if k.startswith("NCCL_"))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    context = mp.spawn(worker, args=(world_size, port, args, nccl_env), nprocs=world_size, join=False)
    deadline = time.time() + args.timeout
    try:
        while not context.join(timeout=1):
            if time.time() > deadline:
                for proc in context.processes:
                    if proc.is_alive():
                        proc.terminate()
                fail("timeout", "the probe did not finish within %d s" % args.timeout, 3)
    except Exception as exc:
        fail("worker_failed", "a probe process failed: %s" % str(exc).strip().splitlines()[-1:], 4)


if __name__ == "__main__":
    main()

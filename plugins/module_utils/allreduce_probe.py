# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""All-reduce latency probe: the standalone program run with the stack's interpreter, and pure helpers.

Only the standard library is imported here; the probe program itself imports torch when it runs.

The probe's output is read in linear time and refused (ProbeError) beyond MAX_OUTPUT_CHARS; a line that JSON
cannot read (nested too deeply included) is skipped like any other line.
"""

from __future__ import annotations

import json
import math

DEFAULT_SIZES = [4096, 16384, 65536, 262144, 1048576]
# A decode step's all-reduce at batch 1 and hidden size 7168 to 8192 in bf16 is about 14-16 KB.
DEFAULT_VERIFY_SIZE = 16384
VERIFY_ALLREDUCES = 122
MARKER = 'allreduce_probe'
# The most probe output parse_probe_output reads (characters): the result line is about 1 KB, NCCL's INFO lines
# with NCCL_DEBUG=INFO on 8 GPUs some hundred KB.
MAX_OUTPUT_CHARS = 16 * 1024 * 1024

# nccl-tests 2.19.6 all_reduce_perf -g 2 -d bfloat16 on 2x H200 (NVLink), NCCL_NVLS_ENABLE=0, out-of-place time
# per op in us (/work/shared/reference/gpu-measurements.md).
NCCL_TESTS_H200_X2 = {4096: 12.63, 16384: 12.96, 65536: 13.91, 262144: 14.54, 1048576: 14.62}
NCCL_TESTS_H200_X2_P2P_DISABLED = {4096: 15.74, 16384: 18.46, 65536: 18.53, 262144: 35.59, 1048576: 63.04}
# NCCL alone in CUDA graphs on the same 2x H200, one process per GPU, 20 in-place all-reduces per graph, median of 50
# replays (tests/device/nccl_direct.cu, 2026-11-30, tests/unit/fixtures/allreduce/nccl_direct_mp_run4.txt). The
# graph-mode reference: nccl-tests' figures above are eager, and host-launch bound up to 256 KB.
NCCL_GRAPH_H200_X2 = {4096: 6.154, 16384: 6.7, 65536: 7.106, 262144: 8.378, 1048576: 13.6}
NCCL_GRAPH_H200_X2_P2P_DISABLED = {4096: 9.779, 16384: 10.95, 65536: 15.269, 262144: 34.762, 1048576: 61.168}

PROBE_SCRIPT = r'''#!/usr/bin/env python3
"""All-reduce latency probe (gpuops.sglang_stack): one process per visible GPU, NCCL, bf16.

Graph mode (default) captures --iterations all-reduces in one CUDA graph and times --replays replays of it with
CUDA events; --eager times a plain loop of the same length. Per-op time = replay time / iterations. Rank 0 prints
one JSON line holding the key "allreduce_probe".

Replays and their CUDA events run on a side stream (--stream side, default), not on the default stream, whose
replays were about 5 us per all-reduce slower on 2x H200 (docs/allreduce-probe.md).

--backend torch (default) uses torch.distributed.all_reduce; --backend nccl calls ncclAllReduce through ctypes on
the current stream, in place, as SGLang's PyNcclCommunicator does inside its CUDA graphs. On 2x H200 both gave the
same figures (docs/allreduce-probe.md).
"""
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
    sys.exit(code)


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
            tensors = [torch.zeros(size // 2, dtype=torch.bfloat16, device=device) for _ in range(args.buffers)]
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
                    for _ in range(3):
                        step()
                    torch.cuda.synchronize()
                dist.barrier()
                torch.cuda.synchronize()
                starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.replays)]
                ends = [torch.cuda.Event(enable_timing=True) for _ in range(args.replays)]
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
    if world_size < 2:
        fail("too_few_gpus", "an all-reduce needs at least 2 GPUs; %d visible" % world_size)
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
'''


class ProbeError(Exception):
    """The probe's output could not be used."""


def percentile(values, q):
    """The q-th percentile (0..100) of values, interpolated linearly between closest ranks (numpy's default)."""
    if not values:
        raise ValueError('percentile of no values')
    if q < 0 or q > 100:
        raise ValueError('q must be within 0..100, got %r' % (q,))
    ordered = sorted(float(v) for v in values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q / 100.0
    low = int(math.floor(pos))
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summarize(samples):
    """count, min_us, median_us, mean_us, p99_us and max_us of per-op samples in microseconds."""
    if not samples:
        raise ValueError('no samples to summarize')
    values = [float(v) for v in samples]
    return {
        'count': len(values),
        'min_us': min(values),
        'median_us': percentile(values, 50),
        'mean_us': sum(values) / len(values),
        'p99_us': percentile(values, 99),
        'max_us': max(values),
    }


def _per_size_median(per_size):
    """{bytes: median_us} from a list of result dicts or a dict of size -> us or size -> result dict."""
    table = {}
    items = per_size.items() if isinstance(per_size, dict) else ((r.get('bytes'), r) for r in per_size)
    for size, value in items:
        us = value.get('median_us') if isinstance(value, dict) else value
        table[int(size)] = float(us)
    return table


def verify_pass_cost_us(per_size, count=VERIFY_ALLREDUCES, size=DEFAULT_VERIFY_SIZE):
    """Estimated all-reduce time of a verify pass: count all-reduces of size bytes, at the measured median.

    A size between two measured sizes is interpolated linearly; one outside the measured range is an error.
    """
    table = _per_size_median(per_size)
    if not table:
        raise ValueError('no measured sizes')
    size = int(size)
    if size in table:
        per_op = table[size]
    else:
        sizes = sorted(table)
        if size < sizes[0] or size > sizes[-1]:
            raise ValueError('size %d is outside the measured range %d..%d' % (size, sizes[0], sizes[-1]))
        upper = min(s for s in sizes if s > size)
        lower = max(s for s in sizes if s < size)
        frac = float(size - lower) / (upper - lower)
        per_op = table[lower] + (table[upper] - table[lower]) * frac
    return {'count': int(count), 'size': size, 'per_op_us': round(per_op, 3), 'total_us': round(per_op * count, 3)}


def parse_probe_output(stdout):
    """The probe's JSON result line from stdout (other lines are ignored); raises ProbeError with a clear message."""
    stdout = stdout or ''
    if len(stdout) > MAX_OUTPUT_CHARS:
        raise ProbeError('the probe printed %d characters, over the %d read (MAX_OUTPUT_CHARS)' % (len(stdout), MAX_OUTPUT_CHARS))
    found = None
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith('{') or MARKER not in line:
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict) and MARKER in data:
            found = data
    if found is None:
        tail = (stdout or '').strip().splitlines()[-3:]
        raise ProbeError('no probe result line (JSON with key "%s") in the output; last lines: %s' % (MARKER, tail))
    if found.get('error'):
        raise ProbeError('probe failed (%s): %s' % (found['error'], found.get('msg', '')))
    missing = [k for k in ('world_size', 'nccl', 'device', 'results') if k not in found]
    if missing:
        raise ProbeError('probe result lacks %s' % ', '.join(missing))
    if not isinstance(found['results'], list) or not found['results']:
        raise ProbeError('probe result has no per-size results')
    results = []
    for entry in found['results']:
        if not isinstance(entry, dict) or any(k not in entry for k in ('bytes', 'median_us', 'p99_us')):
            raise ProbeError('probe result entry lacks bytes, median_us or p99_us: %r' % (entry,))
        try:
            entry = dict(entry, bytes=int(entry['bytes']), median_us=float(entry['median_us']),
                         p99_us=float(entry['p99_us']))
        except (TypeError, ValueError, OverflowError):
            raise ProbeError('probe result entry has a non-numeric value: %r' % (entry,))
        results.append(entry)
    try:
        world_size = int(found['world_size'])
    except (TypeError, ValueError, OverflowError):
        raise ProbeError('probe result has a non-numeric world_size: %r' % (found['world_size'],))
    found = dict(found, results=results, world_size=world_size)
    found.pop(MARKER, None)
    return found


def check_sizes(result, sizes):
    """The requested sizes missing from a parsed result."""
    got = set(r['bytes'] for r in result['results'])
    return [int(s) for s in sizes if int(s) not in got]


def compare_with_reference(result, reference, tolerance=0.15):
    """Per size: measured median, reference, ratio measured/reference and whether |ratio - 1| <= tolerance.

    reference maps size (int or str) to microseconds; sizes absent from it get ratio None and within None.
    """
    ref = dict((int(k), float(v)) for k, v in (reference or {}).items())
    rows = []
    for entry in result['results']:
        size = int(entry['bytes'])
        measured = float(entry['median_us'])
        row = {'bytes': size, 'measured_us': measured, 'reference_us': ref.get(size), 'ratio': None, 'within': None}
        if size in ref and ref[size] > 0:
            ratio = measured / ref[size]
            row['ratio'] = round(ratio, 3)
            row['within'] = abs(ratio - 1.0) <= tolerance
        rows.append(row)
    compared = [r for r in rows if r['within'] is not None]
    return {
        'tolerance': tolerance,
        'rows': rows,
        'all_within': bool(compared) and all(r['within'] for r in compared),
        'compared': len(compared),
    }


# --- NCCL settings sweep -------------------------------------------------------------------------------------

SWEEP_TIE_SIZE = 1048576
_NAME_OK = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-')


def check_env(env, what='env'):
    """env as {str: str}; raises ValueError naming the keys that are not NCCL_*."""
    env = env or {}
    if not isinstance(env, dict):
        raise ValueError('%s must be a mapping of NCCL_* names to values' % what)
    bad = sorted(str(k) for k in env if not str(k).startswith('NCCL_'))
    if bad:
        raise ValueError('%s accepts NCCL_* keys only: %s' % (what, ', '.join(bad)))
    return dict((str(k), str(v)) for k, v in env.items())


def merge_env(base, setting):
    """The environment of one sweep setting: base overlaid by the setting's own values (both NCCL_* only)."""
    merged = check_env(base, 'env')
    merged.update(check_env(setting, 'a sweep setting\'s env'))
    return merged


def plan_sweep(base, sweep):
    """[{'name', 'env' (the setting's own), 'merged_env'}] for a sweep list; raises ValueError on a bad list."""
    if not isinstance(sweep, list) or not sweep:
        raise ValueError('sweep must be a non-empty list of {name, env}')
    seen = set()
    plan = []
    for index, item in enumerate(sweep):
        if not isinstance(item, dict) or not item.get('name'):
            raise ValueError('sweep entry %d needs a name' % index)
        name = str(item['name'])
        if any(ch not in _NAME_OK for ch in name):
            raise ValueError('sweep entry name %r may hold letters, digits, "_", "." and "-" only' % name)
        if name in seen:
            raise ValueError('sweep entry name %r is used twice' % name)
        seen.add(name)
        own = check_env(item.get('env') or {}, 'sweep entry %s env' % name)
        plan.append({'name': name, 'env': own, 'merged_env': merge_env(base, own)})
    return plan


def summarize_setting(name, env, parsed=None, error=None, count=VERIFY_ALLREDUCES, size=DEFAULT_VERIFY_SIZE):
    """One sweep entry: per-size median/p99 and the verify-pass estimate, or the error that stopped the probe."""
    entry = {'name': name, 'env': dict(env), 'ok': error is None and parsed is not None, 'error': error,
             'results': [], 'verify_pass': None}
    if not entry['ok']:
        if entry['error'] is None:
            entry['error'] = 'no result'
        return entry
    entry['results'] = [{'bytes': int(r['bytes']), 'median_us': float(r['median_us']), 'p99_us': float(r['p99_us'])}
                        for r in parsed['results']]
    try:
        entry['verify_pass'] = verify_pass_cost_us(parsed['results'], count=count, size=size)
    except ValueError as exc:
        entry['error'] = 'no verify-pass estimate: %s' % exc
        entry['ok'] = False
    return entry


def median_at(entry, size):
    for row in entry['results']:
        if row['bytes'] == size:
            return row['median_us']
    return None


def choose_best(entries, tie_tolerance=0.0, tie_size=SWEEP_TIE_SIZE):
    """The sweep entry with the lowest verify-pass estimate.

    Entries whose estimate lies within tie_tolerance (a fraction, 0.02 = 2 %) of the lowest count as tied; among
    them the lowest median at tie_size bytes wins (an entry without that size loses a tie), then the earliest.
    Failed entries are never chosen. Returns (best entry or None, the names that tied).
    """
    if tie_tolerance < 0:
        raise ValueError('tie_tolerance must not be negative')
    usable = [e for e in entries if e.get('ok') and e.get('verify_pass')]
    if not usable:
        return None, []
    lowest = min(e['verify_pass']['total_us'] for e in usable)
    tied = [e for e in usable if e['verify_pass']['total_us'] <= lowest * (1.0 + tie_tolerance)]

    def key(item):
        index, entry = item
        at = median_at(entry, tie_size)
        return (at is None, at if at is not None else 0.0, index)
    best = sorted(enumerate(tied), key=key)[0][1]
    return best, [e['name'] for e in tied]


def _size_label(size):
    if size % 1048576 == 0:
        return '%d MB' % (size // 1048576)
    if size % 1024 == 0:
        return '%d KB' % (size // 1024)
    return '%d B' % size


def sweep_table(entries, best_name=None):
    """A Markdown table of the sweep: median / p99 per size, the verify-pass estimate, the pick marked."""
    sizes = sorted(set(r['bytes'] for e in entries for r in e['results']))
    header = ' | '.join(_size_label(s) + ' median / p99 (us)' for s in sizes)
    lines = ['| setting | env | %s | verify pass (us) |' % header,
             '|---|---|' + '---|' * len(sizes) + '---|']
    for entry in entries:
        env = ' '.join('%s=%s' % kv for kv in sorted(entry['env'].items())) or '-'
        name = entry['name'] + (' **(picked)**' if entry['name'] == best_name else '')
        if not entry['ok']:
            dashes = ' | '.join(['-'] * len(sizes))
            lines.append('| %s | %s | %s | failed: %s |' % (name, env, dashes, str(entry['error']).replace('|', '/')))
            continue
        cells = []
        for size in sizes:
            row = [r for r in entry['results'] if r['bytes'] == size]
            cells.append('%.2f / %.2f' % (row[0]['median_us'], row[0]['p99_us']) if row else '-')
        total = entry['verify_pass']['total_us'] if entry['verify_pass'] else None
        lines.append('| %s | %s | %s | %s |' % (name, env, ' | '.join(cells), '%.0f' % total if total else '-'))
    return lines


def split_recorded_sweep(text):
    """[(name, env, stdout)] from a device run's sweep.txt (tests/device/allreduce_sweep.sh).

    Each run starts with '### NAME VAR=VALUE ... | ARGS' and ends with '### end NAME rc=N wall_s=N'.
    """
    runs = []
    current = None
    for line in (text or '').splitlines():
        if line.startswith('### end '):
            if current is not None:
                fields = dict(f.split('=', 1) for f in line.split()[3:] if '=' in f)
                current['rc'] = int(fields.get('rc', '0'))
                runs.append(current)
            current = None
        elif line.startswith('### '):
            head = line[4:].split('|', 1)[0].split()
            if not head:
                current = None
                continue
            env = dict(f.split('=', 1) for f in head[1:] if '=' in f)
            current = {'name': head[0], 'env': env, 'stdout': [], 'rc': None}
        elif current is not None:
            current['stdout'].append(line + '\n')
    for run in runs:
        run['stdout'] = ''.join(run['stdout'])
    return runs

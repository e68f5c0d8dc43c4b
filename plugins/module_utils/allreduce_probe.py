# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""All-reduce latency probe: the standalone program run with the stack's interpreter, and pure helpers.

Only the standard library is imported here; the probe program itself imports torch when it runs.
"""

from __future__ import annotations

import json
import math

DEFAULT_SIZES = [4096, 16384, 65536, 262144, 1048576]
# A decode step's all-reduce at batch 1 and hidden size 7168 to 8192 in bf16 is about 14-16 KB.
DEFAULT_VERIFY_SIZE = 16384
VERIFY_ALLREDUCES = 122
MARKER = 'allreduce_probe'

# nccl-tests 2.19.6 all_reduce_perf -g 2 -d bfloat16 on 2x H200 (NVLink), NCCL_NVLS_ENABLE=0, out-of-place time
# per op in us (/work/shared/reference/gpu-measurements.md).
NCCL_TESTS_H200_X2 = {4096: 12.63, 16384: 12.96, 65536: 13.91, 262144: 14.54, 1048576: 14.62}
NCCL_TESTS_H200_X2_P2P_DISABLED = {4096: 15.74, 16384: 18.46, 65536: 18.53, 262144: 35.59, 1048576: 63.04}

PROBE_SCRIPT = r'''#!/usr/bin/env python3
"""All-reduce latency probe (gpuops.sglang_stack): one process per visible GPU, NCCL, bf16.

Graph mode (default) captures --iterations all-reduces in one CUDA graph and times --replays replays of it with
CUDA events; --eager times a plain loop of the same length. Per-op time = replay time / iterations. Rank 0 prints
one JSON line holding the key "allreduce_probe".
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
        for size in args.sizes:
            tensor = torch.zeros(size // 2, dtype=torch.bfloat16, device=device)
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(args.warmup):
                    dist.all_reduce(tensor)
            torch.cuda.current_stream().wait_stream(side)
            torch.cuda.synchronize()
            if args.eager:
                def step():
                    for _ in range(args.iterations):
                        dist.all_reduce(tensor)
            else:
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    for _ in range(args.iterations):
                        dist.all_reduce(tensor)
                torch.cuda.synchronize()
                step = graph.replay
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
            results.append({
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
    parser.add_argument("--eager", action="store_true")
    args = parser.parse_args()
    if any(size <= 0 or size % 2 for size in args.sizes):
        fail("bad_args", "every size must be a positive even number of bytes (bf16)")
    if args.iterations < 1 or args.replays < 1 or args.warmup < 1:
        fail("bad_args", "iterations, replays and warmup must be at least 1")
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
    found = None
    for line in (stdout or '').splitlines():
        line = line.strip()
        if not line.startswith('{') or MARKER not in line:
            continue
        try:
            data = json.loads(line)
        except ValueError:
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
        except (TypeError, ValueError):
            raise ProbeError('probe result entry has a non-numeric value: %r' % (entry,))
        results.append(entry)
    found = dict(found, results=results, world_size=int(found['world_size']))
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

# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Patch 0003's start-up line from the patched SGLang, with the stack's real torch, on a host without a GPU.

Run with the stack's interpreter: python ar_startup_line.py [WORLD_SIZE]
Starts WORLD_SIZE processes (default 2) in one torch.distributed group over gloo on the CPU, builds SGLang 0.5.9's own
GroupCoordinator for a tensor-parallel group as initialize_model_parallel would (no GPU here: no pynccl, custom
all-reduce or torch symm-mem communicator can exist, so NCCL is the path), and prints, per rank, one line
"AR_LINES <json>" with every log line of the group's construction that starts with "[AR]" (what the service's
journal shows at start-up) and the path gpuops_allreduce_path gives. Exits 0 when every rank reported.
"""
import json
import logging
import os
import socket
import sys

import torch.multiprocessing as mp


def worker(rank, world_size, port, queue):
    lines = []

    class Keep(logging.Handler):
        def emit(self, record):
            message = record.getMessage()
            if message.startswith('[AR]'):
                lines.append(message)

    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    logging.getLogger().addHandler(Keep())
    out = {'rank': rank}
    try:
        import torch.distributed as dist
        from sglang.srt.distributed import parallel_state as ps
        dist.init_process_group('gloo', init_method='tcp://127.0.0.1:%d' % port, rank=rank, world_size=world_size)
        group = ps.GroupCoordinator(
            group_ranks=[list(range(world_size))], local_rank=rank, torch_distributed_backend='gloo',
            use_pynccl=False, use_pymscclpp=False, use_custom_allreduce=False, use_torch_symm_mem_all_reduce=False,
            use_hpu_communicator=False, use_xpu_communicator=False, use_npu_communicator=False, group_name='tp')
        out.update(ok=True, unique_name=group.unique_name, world_size=group.world_size, module=ps.__file__,
                   path=ps.gpuops_allreduce_path(world_size)[0])
    except BaseException as exc:  # a finding to report, not a crash of the harness
        out.update(ok=False, exception='%s: %s' % (type(exc).__name__, exc))
    out['ar_lines'] = lines
    queue.put(out)
    queue.close()
    queue.join_thread()


def main():
    world_size = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    ctx = mp.get_context('spawn')
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(rank, world_size, port, queue)) for rank in range(world_size)]
    for proc in procs:
        proc.start()
    results = [queue.get(timeout=int(os.environ.get('AR_LINE_TIMEOUT', '240'))) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
    for result in sorted(results, key=lambda r: r['rank']):
        print('AR_LINES ' + json.dumps(result, sort_keys=True))
    return 0 if all(r.get('ok') for r in results) else 1


if __name__ == '__main__':
    sys.exit(main())

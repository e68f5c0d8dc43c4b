#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: allreduce_probe
short_description: Measure NCCL all-reduce latency across the host's GPUs with the stack's interpreter
version_added: 1.0.0
description:
  - Writes a small probe program to a temporary file and runs it with O(python), the stack's interpreter (it needs
    torch with CUDA). The program starts one process per visible GPU (NCCL backend, C(127.0.0.1), a free port).
  - For each size in O(sizes) (bf16 tensors) it warms up, captures O(iterations) C(dist.all_reduce) calls in one CUDA
    graph and times O(replays) replays with CUDA events; the per-op time is the replay time divided by O(iterations).
    It reports the median and p99 per size. With O(eager) it times a plain loop instead (2-3x slower for small
    messages; not what decode sees).
  - Returns the per-size results, an estimate of the all-reduce cost of a verify pass (122 all-reduces) and, when
    O(reference_us) is given, the ratio to that reference per size.
  - Changes nothing on the host. Fails when the interpreter cannot import torch, sees no CUDA device, or fewer than
    2 GPUs are visible (an all-reduce needs 2).
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
attributes:
  check_mode:
    support: full
    details: In check mode the probe is not run and no GPU is touched; the result says V(skipped).
  diff_mode:
    support: none
options:
  python:
    description:
      - Path of the stack's Python interpreter (the one that holds torch).
    type: path
    required: true
  sizes:
    description:
      - Message sizes in bytes (even numbers; bf16 elements).
    type: list
    elements: int
    default: [4096, 16384, 65536, 262144, 1048576]
  iterations:
    description:
      - All-reduces captured in one CUDA graph (or run per timed loop with O(eager)).
    type: int
    default: 20
  replays:
    description:
      - Timed replays per size; the median and p99 are taken over them.
    type: int
    default: 200
  warmup:
    description:
      - Untimed all-reduces per size before capture.
    type: int
    default: 20
  env:
    description:
      - Environment for the probe, for example C(NCCL_P2P_DISABLE=1) or C(NCCL_NVLS_ENABLE=0). Only C(NCCL_*) keys
        are accepted.
    type: dict
    default: {}
  eager:
    description:
      - Time a plain loop of C(dist.all_reduce) instead of CUDA-graph replays, for comparison.
    type: bool
    default: false
  timeout:
    description:
      - Seconds after which the probe stops its processes and fails.
    type: int
    default: 300
  reference_us:
    description:
      - Reference per-op times in microseconds by size in bytes (for example the nccl-tests figures of this host);
        each measured median is compared with it, within 15%.
    type: dict
notes:
  - Rank 0's timings are reported. The probe leaves its processes without tearing down the NCCL communicator once
    the result is printed.
seealso:
  - module: gpuops.sglang_stack.gpu_facts
"""

EXAMPLES = r"""
- name: Measure all-reduce latency in CUDA graphs
  gpuops.sglang_stack.allreduce_probe:
    python: /opt/sglang/current/venv/bin/python
    env:
      NCCL_NVLS_ENABLE: "0"
    reference_us:
      4096: 12.63
      16384: 12.96
      65536: 13.91
      262144: 14.54
      1048576: 14.62
  register: allreduce

- name: Show the verify-pass estimate
  ansible.builtin.debug:
    msg: "{{ allreduce.verify_pass.total_us }} us for {{ allreduce.verify_pass.count }} all-reduces"
"""

RETURN = r"""
results:
  description: Per size - C(bytes), C(median_us), C(p99_us), C(mean_us), C(min_us), C(max_us), C(samples).
  returned: when the probe ran
  type: list
  elements: dict
world_size:
  description: Processes (GPUs) in the all-reduce.
  returned: when the probe ran
  type: int
  sample: 2
probe:
  description: The probe's other fields - C(mode), C(device), C(torch), C(cuda), C(nccl), C(env), C(iterations),
    C(replays), C(warmup).
  returned: when the probe ran
  type: dict
verify_pass:
  description: C(count) all-reduces of C(size) bytes at the measured median - C(per_op_us), C(total_us).
  returned: when the probe ran and 16384 bytes lies within the measured sizes
  type: dict
comparison:
  description: C(rows) (bytes, measured_us, reference_us, ratio, within), C(all_within), C(tolerance), C(compared).
  returned: when O(reference_us) is given and the probe ran
  type: dict
skipped:
  description: True in check mode (the probe is not run).
  returned: in check mode
  type: bool
msg:
  description: A one-line summary.
  returned: always
  type: str
"""

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import allreduce_probe


def main():
    module = AnsibleModule(
        argument_spec=dict(
            python=dict(type='path', required=True),
            sizes=dict(type='list', elements='int', default=list(allreduce_probe.DEFAULT_SIZES)),
            iterations=dict(type='int', default=20),
            replays=dict(type='int', default=200),
            warmup=dict(type='int', default=20),
            env=dict(type='dict', default={}),
            eager=dict(type='bool', default=False),
            timeout=dict(type='int', default=300),
            reference_us=dict(type='dict'),
        ),
        supports_check_mode=True,
    )
    params = module.params
    if not params['sizes'] or any(s <= 0 or s % 2 for s in params['sizes']):
        module.fail_json(msg='sizes must be positive even numbers of bytes: %s' % params['sizes'])
    for name in ('iterations', 'replays', 'warmup', 'timeout'):
        if params[name] < 1:
            module.fail_json(msg='%s must be at least 1' % name)
    bad = [k for k in params['env'] if not str(k).startswith('NCCL_')]
    if bad:
        module.fail_json(msg='env accepts NCCL_* keys only: %s' % ', '.join(sorted(bad)))
    if module.check_mode:
        module.exit_json(changed=False, skipped=True, msg='check mode: the all-reduce probe was not run')
    if not os.path.isfile(params['python']) or not os.access(params['python'], os.X_OK):
        module.fail_json(msg='the interpreter %s does not exist or is not executable' % params['python'])

    fd, script = tempfile.mkstemp(prefix='allreduce_probe.', suffix='.py')
    try:
        with os.fdopen(fd, 'wb') as handle:
            handle.write(to_bytes(allreduce_probe.PROBE_SCRIPT))
        cmd = [params['python'], script, '--iterations', str(params['iterations']), '--replays',
               str(params['replays']), '--warmup', str(params['warmup']), '--timeout', str(params['timeout']),
               '--sizes'] + [str(s) for s in params['sizes']]
        if params['eager']:
            cmd.append('--eager')
        env = dict((str(k), str(v)) for k, v in params['env'].items())
        rc, out, err = module.run_command(cmd, environ_update=env)
    finally:
        os.unlink(script)

    try:
        parsed = allreduce_probe.parse_probe_output(out)
    except allreduce_probe.ProbeError as exc:
        module.fail_json(msg=str(exc), rc=rc, stdout=out, stderr=err)
    if rc != 0:
        module.fail_json(msg='the probe printed a result but exited with %d' % rc, rc=rc, stdout=out, stderr=err)
    missing = allreduce_probe.check_sizes(parsed, params['sizes'])
    if missing:
        module.fail_json(msg='the probe result lacks sizes %s' % missing, rc=rc, stdout=out, stderr=err)

    results = parsed.pop('results')
    world_size = parsed.pop('world_size')
    result = dict(changed=False, results=results, world_size=world_size, probe=parsed)
    try:
        result['verify_pass'] = allreduce_probe.verify_pass_cost_us(results)
    except ValueError:
        result['verify_pass'] = None
    summary = '%s all-reduce on %d x %s: %s' % (
        parsed.get('mode', 'graph'), world_size, parsed.get('device'),
        ', '.join('%d B %.2f us' % (r['bytes'], r['median_us']) for r in results))
    if params['reference_us']:
        try:
            result['comparison'] = allreduce_probe.compare_with_reference({'results': results}, params['reference_us'])
        except (TypeError, ValueError) as exc:
            module.fail_json(msg='reference_us must map sizes to microseconds: %s' % exc)
        summary += '; within 15%% of the reference: %s' % result['comparison']['all_within']
    result['msg'] = summary
    module.exit_json(**result)


if __name__ == '__main__':
    main()

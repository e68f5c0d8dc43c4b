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
  - Writes the probe program (C(plugins/module_utils/allreduce_probe_program.py) of the collection, shipped inside the
    module's payload) to a temporary file and runs it with O(python), the stack's interpreter (it needs torch with
    CUDA). The program starts one process per visible GPU (NCCL backend, C(127.0.0.1), a free port).
  - For each size in O(sizes) (bf16 tensors) it warms up, captures O(iterations) all-reduces in one CUDA graph and
    times O(replays) replays with CUDA events on a side stream; the per-op time is the replay time divided by
    O(iterations).
    It reports the median and p99 per size. With O(eager) it times a plain loop instead (2-3x slower for small
    messages; not what decode sees).
  - Returns the per-size results, an estimate of the all-reduce cost of a verify pass (122 all-reduces) and, when
    O(reference_us) is given, the ratio to that reference per size.
  - With O(sweep) it runs the probe once per NCCL setting (O(env) overlaid by the setting's own C(env)), returns
    every setting's per-size median and p99 and verify-pass estimate, and picks the setting with the lowest
    verify-pass estimate (ties within O(tie_tolerance) go to the lowest 1 MB median). A setting whose probe fails
    is reported with its error and not picked; the module fails only when every setting fails.
  - Changes nothing on the host. Fails when the interpreter cannot import torch, sees no CUDA device, or fewer than
    2 GPUs are visible (an all-reduce needs 2).
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
attributes:
  check_mode:
    details: In check mode the probe is not run and no GPU is touched; the result says V(skipped) and lists the
      planned sweep settings with their merged environments.
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
        are accepted. Added over (and overriding) the entries of O(env_file).
    type: dict
    default: {}
  env_file:
    description:
      - A stack's C(nccl.env) on the host (systemd environment-file lines, as the P(gpuops.sglang_stack.nccl_patches#role)
        role writes it); its non-empty C(NCCL_*) entries are the probe's base environment. The module fails when it
        cannot be read.
    type: path
  eager:
    description:
      - Time a plain loop of all-reduces instead of CUDA-graph replays, for comparison.
    type: bool
    default: false
  backend:
    description:
      - V(torch) calls C(torch.distributed.all_reduce); V(nccl) calls C(ncclAllReduce) through ctypes on the current
        stream, in place, as SGLang's PyNcclCommunicator does inside its CUDA graphs (torch's own libnccl).
      - On 2x H200 both gave the same figures.
    type: str
    choices: [torch, nccl]
    default: torch
  stream:
    description:
      - V(side) replays the graphs (and records the timing events) on a non-default stream; V(current) on the
        process's default stream, which on 2x H200 added about 5 us to each all-reduce of a replayed graph.
    type: str
    choices: [side, current]
    default: side
  sweep:
    description:
      - NCCL settings to compare. The probe runs once per entry, in order, under O(env) overlaid by the entry's
        C(env). Include an entry with an empty C(env) to measure the base environment itself.
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - Name of the setting (letters, digits, C(_), C(.), C(-)); unique within the list.
        type: str
        required: true
      env:
        description:
          - NCCL variables of this setting (C(NCCL_*) keys only), for example C(NCCL_PROTO=LL).
        type: dict
        default: {}
  tie_tolerance:
    description:
      - With O(sweep), settings whose verify-pass estimate is within this fraction of the lowest count as tied;
        the lowest median at 1 MB (1048576 bytes) breaks the tie. V(0) means exact ties only.
    type: float
    default: 0.02
  run_as:
    description:
      - Run the probe as this user (the service user) with exactly O(run_as_environment) plus O(env), through
        C(runuser) and C(env -i), instead of the user the module runs as. The probe is the stack's code (torch, NCCL).
    type: str
  run_as_environment:
    description: With O(run_as), the base environment of the probe (the unit's, for example C(HOME) and C(PATH)).
    type: dict
    default: {}
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
  - module: gpuops.sglang_stack.gpu_info
"""

EXAMPLES = r"""
- name: Measure all-reduce latency in CUDA graphs
  gpuops.sglang_stack.allreduce_probe:
    python: /opt/sglang/current/venv/bin/python
    env:
      NCCL_NVLS_ENABLE: "0"
    # NCCL alone in CUDA graphs on this host (tests/device/nccl_direct.cu), the graph-mode reference.
    reference_us:
      4096: 6.15
      16384: 6.70
      65536: 7.11
      262144: 8.38
      1048576: 13.60
  register: allreduce

- name: Show the verify-pass estimate
  ansible.builtin.debug:
    msg: "{{ allreduce.verify_pass.total_us }} us for {{ allreduce.verify_pass.count }} all-reduces"

- name: Sweep NCCL settings and pick the one with the cheapest verify pass
  gpuops.sglang_stack.allreduce_probe:
    python: /opt/sglang/current/venv/bin/python
    env:
      NCCL_NVLS_ENABLE: "0"
    sweep:
      - name: default
      - name: proto_ll
        env:
          NCCL_PROTO: LL
      - name: channels_16
        env:
          NCCL_MIN_NCHANNELS: "16"
          NCCL_MAX_NCHANNELS: "16"
      - name: p2p_disabled
        env:
          NCCL_P2P_DISABLE: "1"
  register: allreduce_sweep

- name: Show the pick
  ansible.builtin.debug:
    msg: "{{ allreduce_sweep.best.name }}: {{ allreduce_sweep.best.verify_pass.total_us }} us per verify pass"
"""

RETURN = r"""
results:
  description: Per size - C(bytes), C(median_us), C(p99_us), C(mean_us), C(min_us), C(max_us), C(samples). With
    O(sweep), those of the picked setting.
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
sweep:
  description: With O(sweep), one entry per setting in order - C(name), C(env) (merged), C(ok), C(error),
    C(results) (C(bytes), C(median_us), C(p99_us)), C(verify_pass); in check mode only C(name) and C(env).
  returned: when O(sweep) is given
  type: list
  elements: dict
best:
  description: With O(sweep), the picked setting - C(name), C(env), C(verify_pass), C(median_1mb_us), C(tied)
    (the names whose estimates counted as tied), C(beats_default) and C(beats_default_why) (whether its median at the
    verify size beats the first setting's, the default, by more than either one's p99 - median spread).
  returned: when O(sweep) is given and the probe ran
  type: dict
env_file:
  description: The C(NCCL_*) entries read from O(env_file).
  returned: when O(env_file) is given
  type: dict
sweep_table:
  description: With O(sweep), a Markdown table of every setting (median / p99 per size, verify-pass estimate).
  returned: when O(sweep) is given and the probe ran
  type: list
  elements: str
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
import pwd
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import allreduce_probe, allreduce_probe_program, sglang_keys


def run_probe(module, params, env):
    """Run the probe once under env; (parsed result, None) or (None, error message).

    With run_as, as that user with exactly run_as_environment plus env (runuser, env -i): the probe is the stack's
    third-party code (torch, NCCL) and needs the GPUs, not root.
    """
    workdir = tempfile.mkdtemp(prefix='allreduce_probe.')
    script = os.path.join(workdir, 'probe.py')
    try:
        with open(script, 'wb') as handle:
            handle.write(to_bytes(allreduce_probe.program_text(allreduce_probe_program)))
        prefix, environ = [], env
        if params['run_as']:
            account = pwd.getpwnam(params['run_as'])
            os.chown(workdir, account.pw_uid, account.pw_gid)
            os.chmod(script, 0o644)
            merged = dict(params['run_as_environment'])
            merged.update(env)
            prefix, environ = sglang_keys.run_as_argv(params['run_as'], merged), {}
        cmd = prefix + [params['python'], script, '--iterations', str(params['iterations']), '--replays',
                        str(params['replays']), '--warmup', str(params['warmup']), '--timeout', str(params['timeout']),
                        '--backend', params['backend'], '--stream', params['stream'], '--sizes']
        cmd += [str(s) for s in params['sizes']]
        if params['eager']:
            cmd.append('--eager')
        rc, out, err = module.run_command(cmd, environ_update=environ)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    try:
        parsed = allreduce_probe.parse_probe_output(out)
    except allreduce_probe.ProbeError as exc:
        return None, dict(msg=str(exc), rc=rc, stdout=out, stderr=err)
    if rc != 0:
        return None, dict(msg='the probe printed a result but exited with %d' % rc, rc=rc, stdout=out, stderr=err)
    missing = allreduce_probe.check_sizes(parsed, params['sizes'])
    if missing:
        return None, dict(msg='the probe result lacks sizes %s' % missing, rc=rc, stdout=out, stderr=err)
    return parsed, None


def describe(parsed, params, result):
    """Fill results, world_size, probe, verify_pass and comparison from one parsed probe result."""
    parsed = dict(parsed)
    results = parsed.pop('results')
    world_size = parsed.pop('world_size')
    result.update(results=results, world_size=world_size, probe=parsed)
    try:
        result['verify_pass'] = allreduce_probe.verify_pass_cost_us(results)
    except ValueError:
        result['verify_pass'] = None
    summary = '%s all-reduce on %d x %s: %s' % (
        parsed.get('mode', 'graph'), world_size, parsed.get('device'),
        ', '.join('%d B %.2f us' % (r['bytes'], r['median_us']) for r in results))
    if params['reference_us']:
        result['comparison'] = allreduce_probe.compare_with_reference({'results': results}, params['reference_us'])
        summary += '; within 15%% of the reference: %s' % result['comparison']['all_within']
    return summary


def main():
    module = AnsibleModule(
        argument_spec=dict(
            python=dict(type='path', required=True),
            sizes=dict(type='list', elements='int', default=list(allreduce_probe.DEFAULT_SIZES)),
            iterations=dict(type='int', default=20),
            replays=dict(type='int', default=200),
            warmup=dict(type='int', default=20),
            env=dict(type='dict', default={}),
            env_file=dict(type='path'),
            eager=dict(type='bool', default=False),
            backend=dict(type='str', default='torch', choices=['torch', 'nccl']),
            stream=dict(type='str', default='side', choices=['side', 'current']),
            timeout=dict(type='int', default=300),
            reference_us=dict(type='dict'),
            sweep=dict(type='list', elements='dict', options=dict(
                name=dict(type='str', required=True),
                env=dict(type='dict', default={}),
            )),
            tie_tolerance=dict(type='float', default=0.02),
            run_as=dict(type='str'),
            run_as_environment=dict(type='dict', default={}),
        ),
        supports_check_mode=True,
    )
    params = module.params
    if not params['sizes'] or any(s <= 0 or s % 2 for s in params['sizes']):
        module.fail_json(msg='sizes must be positive even numbers of bytes: %s' % params['sizes'])
    for name in ('iterations', 'replays', 'warmup', 'timeout'):
        if params[name] < 1:
            module.fail_json(msg='%s must be at least 1' % name)
    if params['tie_tolerance'] < 0:
        module.fail_json(msg='tie_tolerance must not be negative')
    file_env = None
    if params['env_file']:
        try:
            with open(params['env_file'], 'rb') as handle:
                file_env = allreduce_probe.read_env_file(handle.read().decode('utf-8', 'replace'))
        except (IOError, OSError) as exc:
            module.fail_json(msg='%s could not be read (%s); it is written by the nccl_patches role (playbook '
                             'gpuops.sglang_stack.nccl_patches): apply that to this stack first' % (params['env_file'], exc))
    try:
        base_env = allreduce_probe.check_env(allreduce_probe.merge_env(file_env or {}, params['env']))
        plan = allreduce_probe.plan_sweep(base_env, params['sweep']) if params['sweep'] is not None else None
        if params['reference_us']:
            allreduce_probe.compare_with_reference({'results': []}, params['reference_us'])
    except (TypeError, ValueError) as exc:
        module.fail_json(msg=str(exc))
    if module.check_mode:
        result = dict(changed=False, skipped=True, msg='check mode: the all-reduce probe was not run')
        if file_env is not None:
            result['env_file'] = file_env
        if plan is not None:
            result['sweep'] = [dict(name=p['name'], env=p['merged_env']) for p in plan]
        module.exit_json(**result)
    if params['run_as']:
        try:
            pwd.getpwnam(params['run_as'])
            sglang_keys.run_as_argv(params['run_as'], params['run_as_environment'])
        except (KeyError, sglang_keys.KeysError) as exc:
            module.fail_json(msg='cannot run the probe as %s: %s' % (params['run_as'], exc))
    if not os.path.isfile(params['python']) or not os.access(params['python'], os.X_OK):
        module.fail_json(msg='the interpreter %s does not exist or is not executable' % params['python'])

    result = dict(changed=False)
    if file_env is not None:
        result['env_file'] = file_env
    if plan is None:
        parsed, error = run_probe(module, params, base_env)
        if error:
            module.fail_json(**error)
        result['msg'] = describe(parsed, params, result)
        module.exit_json(**result)

    entries = []
    picked = {}
    for setting in plan:
        parsed, error = run_probe(module, params, setting['merged_env'])
        entries.append(allreduce_probe.summarize_setting(setting['name'], setting['merged_env'], parsed,
                                                         error['msg'] if error else None))
        if parsed is not None:
            picked[setting['name']] = parsed
    best, tied = allreduce_probe.choose_best(entries, params['tie_tolerance'])
    result['sweep'] = entries
    result['sweep_table'] = allreduce_probe.sweep_table(entries, best['name'] if best else None)
    if best is None:
        module.fail_json(msg='every sweep setting failed: %s' % '; '.join(
            '%s: %s' % (e['name'], e['error']) for e in entries), **result)
    beats, beats_why = allreduce_probe.beats_default(entries, best)
    result['best'] = dict(name=best['name'], env=best['env'], verify_pass=best['verify_pass'], tied=tied,
                          median_1mb_us=allreduce_probe.median_at(best, allreduce_probe.SWEEP_TIE_SIZE),
                          beats_default=beats, beats_default_why=beats_why)
    summary = describe(picked[best['name']], params, result)
    failed = [e['name'] for e in entries if not e['ok']]
    result['msg'] = 'sweep of %d settings picked %s (verify pass %.0f us)%s; %s' % (
        len(entries), best['name'], best['verify_pass']['total_us'],
        ', failed: %s' % ', '.join(failed) if failed else '', summary)
    module.exit_json(**result)


if __name__ == '__main__':
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_throughput
short_description: Measure a running SGLang server's decode throughput and gate it against a reference
version_added: 1.0.0
description:
  - Runs C(python -m sglang.bench_one_batch_server --model None --base-url URL) with the stack's interpreter against
    a running server (one batch size, input length and output length), reads the case it appends to its result file
    (or, failing that, its printed block) and reports the server's last generation throughput in tokens per second.
  - With O(reference_tok_s) (the same benchmark measured on the stack that served right before the switch's stop)
    and/or O(baseline_tok_s) (the site's figure, an optional floor), the module fails when the throughput is below
    either figure x (1 - O(tolerance)), naming each figure and its verdict. Without either it measures only.
  - With O(run_as) the benchmark runs as that user (the service user) with exactly O(environment) (the unit's), through
    C(runuser) and C(env -i), not as root, because it is the stack's third-party code.
  - With O(api_key) (SGLang's C(--api-key)) the benchmark authenticates. A small runner reads the key from its standard
    input and adds an C(Authorization) header (C(Bearer <key>)) to every request; the key is on no command line and in
    no environment.
  - Changes nothing on the host (the benchmark's result file is a temporary file).
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
attributes:
  check_mode:
    details: In check mode the benchmark is not run; the result says V(skipped).
options:
  python:
    description: The stack's interpreter (it holds sglang and its benchmark).
    type: path
    required: true
  base_url:
    description: The server, for example V(http://127.0.0.1:30000).
    type: str
    required: true
  bench_module:
    description: The benchmark module run with C(-m).
    type: str
    default: sglang.bench_one_batch_server
  batch_size:
    description: Batch size of the case.
    type: int
    default: 1
  input_len:
    description: Prompt tokens per request.
    type: int
    default: 1024
  output_len:
    description: Generated tokens per request.
    type: int
    default: 256
  baseline_tok_s:
    description: The site's figure in tokens per second, a floor every switch must reach; omit (or V(0)) for none.
    type: float
  reference_tok_s:
    description:
      - The same benchmark measured on the stack that served right before the switch's stop, started with the same
        options (the gate compares like with like); omit when there is none (a first install, another profile).
    type: float
  reference_label:
    description: What O(reference_tok_s) was measured on, for the messages (for example the stack's id).
    type: str
    default: ''
  service:
    description:
      - The systemd unit of the measured server. With O(launch_argv), the module reads its main process's command line
        and reports in RV(same_launch) whether it was started with exactly O(launch_argv).
    type: str
  launch_argv:
    description:
      - The command line the service is about to be started with (the new unit's). Measuring the old stack before a
        switch, a different command line (speculative decoding, an optimisation's flags) makes its figure no reference
        for the new stack's.
    type: list
    elements: str
  tolerance:
    description: Fraction below the baseline still accepted.
    type: float
    default: 0.05
  timeout:
    description: Seconds after which the benchmark is stopped and the module fails.
    type: int
    default: 1800
  environment:
    description:
      - Extra environment for the benchmark process.
      - With O(run_as), the whole environment of the process (C(env -i)); give the unit's.
    type: dict
    default: {}
  run_as:
    description: Run the benchmark as this user (the service user) instead of the user the module runs as.
    type: str
  api_key:
    description:
      - The server's C(--api-key). Never logged, never on a command line (passed on the runner's standard input).
      - Empty for a server without a key.
    type: str
    default: ''
seealso:
  - module: gpuops.sglang_stack.allreduce_probe
"""

EXAMPLES = r"""
- name: Throughput gate against the site baseline (no speculation)
  gpuops.sglang_stack.sglang_throughput:
    python: /opt/sglang/current/venv/bin/python
    base_url: http://127.0.0.1:30000
    baseline_tok_s: 89.5
    tolerance: 0.05

- name: Throughput gate against the old stack's figure measured before the stop, with the site's figure as a floor
  gpuops.sglang_stack.sglang_throughput:
    python: /opt/sglang/current/venv/bin/python
    base_url: http://127.0.0.1:30000
    reference_tok_s: 90.12
    reference_label: stack cu130-sglang-0.5.9-1234abcd5678 before the stop
    baseline_tok_s: 89.5

- name: Throughput gate as the service user, against a server with an API key
  gpuops.sglang_stack.sglang_throughput:
    python: /opt/sglang/current/venv/bin/python
    base_url: http://127.0.0.1:30000
    run_as: sglang
    environment: "{{ sglang_service_unit_environment }}"
    api_key: "{{ sglang_service_api_key }}"
"""

RETURN = r"""
tok_s:
  description: Decode throughput of the judged case in tokens per second.
  returned: when the benchmark ran
  type: float
  sample: 89.61
source:
  description: Which figure C(tok_s) is - V(last_gen_throughput) (the server's own decode rate) or V(output_throughput).
  returned: when the benchmark ran
  type: str
  sample: last_gen_throughput
case:
  description: The judged case as the benchmark reported it (batch_size, input_len, output_len, latency, ...).
  returned: when the benchmark ran
  type: dict
verdict:
  description: The site figure's check, C(tok_s), C(baseline_tok_s), C(tolerance), C(floor_tok_s), C(ratio), C(passed).
  returned: when O(baseline_tok_s) is given and the benchmark ran
  type: dict
gate:
  description:
    - The gate's verdict, C(tok_s), C(tolerance), C(passed), C(summary) and C(checks) (one per figure, each with
      C(against) V(reference) or V(site), C(label), C(baseline_tok_s), C(floor_tok_s), C(ratio), C(passed)).
  returned: when O(reference_tok_s) or O(baseline_tok_s) is given and the benchmark ran
  type: dict
same_launch:
  description: Whether the running server of O(service) was started with exactly O(launch_argv).
  returned: when O(service) and O(launch_argv) are given and the benchmark ran
  type: bool
reference_tok_s:
  description: O(reference_tok_s) as given.
  returned: when O(reference_tok_s) is given
  type: float
skipped:
  description: True in check mode.
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

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import sglang_bench, sglang_keys


def running_cmdline(module, service):
    """/proc/<pid>/cmdline of the unit's main process as read, or '' when it runs none."""
    rc, out, _err = module.run_command(['systemctl', 'show', '-p', 'MainPID', '--value', service])
    pid = out.strip()
    if rc != 0 or not pid.isdigit() or pid == '0':
        return ''
    try:
        with open('/proc/%s/cmdline' % pid) as handle:
            return handle.read()
    except (IOError, OSError):
        return ''


def main():
    module = AnsibleModule(
        argument_spec=dict(
            python=dict(type='path', required=True),
            base_url=dict(type='str', required=True),
            bench_module=dict(type='str', default='sglang.bench_one_batch_server'),
            batch_size=dict(type='int', default=1),
            input_len=dict(type='int', default=1024),
            output_len=dict(type='int', default=256),
            baseline_tok_s=dict(type='float'),
            reference_tok_s=dict(type='float'),
            reference_label=dict(type='str', default=''),
            service=dict(type='str'),
            launch_argv=dict(type='list', elements='str'),
            tolerance=dict(type='float', default=0.05),
            timeout=dict(type='int', default=1800),
            environment=dict(type='dict', default={}),
            run_as=dict(type='str'),
            api_key=dict(type='str', default='', no_log=True),
        ),
        supports_check_mode=True,
    )
    p = module.params
    for name in ('batch_size', 'input_len', 'output_len', 'timeout'):
        if p[name] < 1:
            module.fail_json(msg='%s must be at least 1' % name)
    floor = p['baseline_tok_s'] if p['baseline_tok_s'] else None
    for figure in (floor, p['reference_tok_s']):
        if figure is not None:
            try:
                sglang_bench.judge(figure, figure, p['tolerance'])
            except ValueError as exc:
                module.fail_json(msg=str(exc))
    if module.check_mode:
        module.exit_json(changed=False, skipped=True, msg='check mode: the benchmark was not run')
    if not os.access(p['python'], os.X_OK):
        module.fail_json(msg='the interpreter %s does not exist or is not executable' % p['python'])

    env = dict((str(k), str(v)) for k, v in p['environment'].items())
    prefix = []
    if p['run_as']:
        try:
            account = pwd.getpwnam(p['run_as'])
            prefix = sglang_keys.run_as_argv(p['run_as'], env)
        except (KeyError, sglang_keys.KeysError) as exc:
            module.fail_json(msg='THROUGHPUT GATE: cannot run the benchmark as %s: %s' % (p['run_as'], exc))
        env = {}
    # A directory of its own, owned by the user the benchmark runs as: it writes its result file there.
    workdir = tempfile.mkdtemp(prefix='sglang_bench.')
    result_file = os.path.join(workdir, 'result.jsonl')
    try:
        if p['run_as']:
            os.chown(workdir, account.pw_uid, account.pw_gid)
        cmd = ['timeout', str(p['timeout'])] + prefix + [p['python'], '-c', sglang_keys.BENCH_RUNNER, p['bench_module']]
        cmd += ['--model', 'None', '--base-url', p['base_url'].rstrip('/'), '--batch-size', str(p['batch_size']),
                '--input-len', str(p['input_len']), '--output-len', str(p['output_len']), '--result-filename', result_file]
        rc, out, err = module.run_command(cmd, environ_update=env, data=p['api_key'] + '\n', cwd=workdir)
        recorded = ''
        if os.path.exists(result_file):
            with open(result_file) as handle:
                recorded = handle.read()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if rc == 124:
        module.fail_json(msg='THROUGHPUT GATE: the benchmark did not finish within %d s' % p['timeout'],
                         rc=rc, stdout=out, stderr=err)
    if rc != 0:
        tail = (err or out).strip().splitlines()[-3:]
        module.fail_json(msg='THROUGHPUT GATE: the benchmark failed (rc %d): %s' % (rc, ' | '.join(tail)),
                         rc=rc, stdout=out, stderr=err)
    try:
        cases = sglang_bench.parse_result_jsonl(recorded) or sglang_bench.parse_stdout(out)
        case = sglang_bench.pick_case(cases, p['batch_size'])
        tok_s, source = sglang_bench.tokens_per_second(case)
    except sglang_bench.BenchError as exc:
        module.fail_json(msg='THROUGHPUT GATE: %s' % exc, rc=rc, stdout=out, stderr=err)

    result = dict(changed=False, tok_s=round(tok_s, 2), source=source, case=case)
    if p['service'] and p['launch_argv'] is not None:
        result['same_launch'] = sglang_bench.command_line_matches(running_cmdline(module, p['service']), p['launch_argv'])
    summary = '%.2f tok/s (%s) at batch %d, %d in / %d out' % (
        tok_s, source, p['batch_size'], p['input_len'], p['output_len'])
    if p['reference_tok_s'] is not None:
        result['reference_tok_s'] = p['reference_tok_s']
    if floor is not None or p['reference_tok_s'] is not None:
        gate = sglang_bench.judge_gate(tok_s, p['tolerance'], reference_tok_s=p['reference_tok_s'],
                                       reference_label=p['reference_label'], floor_tok_s=floor)
        result['gate'] = gate
        site = [check for check in gate['checks'] if check['against'] == 'site']
        if site:
            result['verdict'] = dict((key, value) for key, value in site[0].items() if key not in ('against', 'label'))
        if not gate['passed']:
            # The figures that failed, as the gate's message names them: below <figure> x (1 - tolerance).
            below = ['the floor %.2f tok/s (%s %.2f tok/s - %d%%)' % (
                check['floor_tok_s'], 'baseline' if check['against'] == 'site' else check['label'], check['baseline_tok_s'],
                round(check['tolerance'] * 100)) for check in gate['checks'] if not check['passed']]
            result['msg'] = 'THROUGHPUT GATE: %s is below %s' % (summary, ' and '.join(below))
            module.fail_json(**result)
        summary += '; ' + gate['summary']
    result['msg'] = summary
    module.exit_json(**result)


if __name__ == '__main__':
    main()

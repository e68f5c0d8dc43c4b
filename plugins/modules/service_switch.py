#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: service_switch
short_description: Stop a service, flip a stack's current link, start the service and wait for its health gate, in one call
version_added: 1.0.0
description:
  - The outage of a blue/green switch in one host-side step, so that no controller round trip falls inside it
    (P(gpuops.sglang_stack.gated_switch#role) calls it). With a serving stack and a new O(target) - writes the journal
    O(journal_path) (JSON with C(from), the stack that served, and C(to), the target), stops O(service), points C(<root>/previous) at the
    stack that served and C(<root>/current) at O(target) (each link replaced atomically), starts O(service), then asks
    O(health_url) every O(health_interval) seconds until it answers 200 or O(health_timeout) seconds have passed.
  - With O(target) already current, nothing flips; the service is started when it is not active, or restarted with
    O(restart=true) (its unit or environment changed). Without O(root) and O(target) only the service part runs (a
    health gate after another start).
  - A journal naming as C(to) the stack C(current) already links (a switch cut between the flip and a healthy start)
    makes the run complete that switch - RV(from) is the journal's C(from) and the service is restarted, because its
    start was never gated. The journal is left in place; the caller removes it once every gate passed.
  - A failed health gate does not fail the module; RV(health.ok) is false, RV(msg) says why with the service's last log
    lines, so that the caller can flip back (call it again with the stack that served as O(target)). A failed
    C(systemctl) or link step fails the module.
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
attributes:
  diff_mode:
    support: full
    details: The links C(current) and C(previous) before and after.
options:
  root:
    description:
      - The directory holding C(current) and C(previous) (and C(stacks/)). Required with O(target).
    type: path
  target:
    description:
      - The stack to put in service, as C(current) will link it (an absolute path, e.g. C(<root>/stacks/<id>)).
    type: path
  service:
    description:
      - The systemd unit stopped before and started after the flip; empty flips the links only.
    type: str
    default: ""
  restart:
    description:
      - Restart the service when nothing flips (its unit or environment changed). A flip always stops and starts it.
    type: bool
    default: false
  health_url:
    description:
      - URL that must answer 200 after the start (SGLang's C(/health_generate)); empty skips the gate.
    type: str
    default: ""
  health_timeout:
    description:
      - Seconds from the first request within which the URL must answer 200.
    type: float
    default: 1200
  health_interval:
    description:
      - Seconds between two requests. Each request waits at most 30 s, or what is left of O(health_timeout).
      - An C(http://) URL is asked on a plain connection of its own (no proxy, no SSL context built per request, which
        cost tens of milliseconds of CPU each); an C(https://) URL through Ansible's C(open_url), its certificate
        validated.
    type: float
    default: 0.2
  log_unit:
    description:
      - The unit whose last journal lines RV(log_lines) holds when the health gate fails; defaults to O(service). Set it
        for a health gate alone, after another task started the unit.
    type: str
    default: ""
  down_since:
    description:
      - The host's monotonic clock when an earlier call stopped the service (its RV(outage_started)) and no healthy
        start followed - a rollback after a failed health gate passes it, so that RV(downtime_s) is the whole outage.
    type: float
  compile_python:
    description:
      - The target stack's interpreter (C(<target>/venv/bin/python)). When set and the service is about to start on the
        target, the module first has it compile, under the target's entries of its C(sys.path), every C(.py) file whose
        bytecode is missing or stale (RV(bytecode)) - before anything stops, while the old stack still serves. A patched
        file has none (the patch series removes it) and the service cannot write one (C(ProtectSystem=strict)), so
        without this every start compiles those files inside the outage.
      - A file that does not compile, or an interpreter that does not run, is reported in RV(bytecode) and does not fail
        the module (the server's start and the health gate find what cannot be imported).
    type: path
  journal_path:
    description:
      - The switch journal, written before the service stops when the links flip away from a serving stack, and read
        to complete a switch that was cut. Empty writes and reads none.
    type: path
    default: ""
notes:
  - The figures in RV(downtime_s) and RV(health) are measured on the host, by its monotonic clock.
seealso:
  - module: gpuops.sglang_stack.sglang_throughput
"""

EXAMPLES = r"""
- name: Stop, flip, start and gate the service
  gpuops.sglang_stack.service_switch:
    root: /opt/sglang
    target: /opt/sglang/stacks/sglang-cu130-3f2a9c
    service: sglang
    health_url: http://127.0.0.1:30000/health_generate
    health_timeout: 1200
    journal_path: /opt/sglang/.switch-in-progress.json
  register: switch

- name: Only the health gate of a service started by another task
  gpuops.sglang_stack.service_switch:
    health_url: http://127.0.0.1:30000/health_generate
    health_timeout: 600
"""

RETURN = r"""
from:
  description: The stack that served before this switch (the journal's C(from) when a cut switch is completed); empty on a first stack.
  returned: always
  type: str
  sample: /opt/sglang/stacks/sglang-cu128-9b1e07
to:
  description: The stack C(current) links after the call.
  returned: always
  type: str
  sample: /opt/sglang/stacks/sglang-cu130-3f2a9c
flipped:
  description: Whether the links flipped.
  returned: always
  type: bool
resumed:
  description: Whether a cut switch (its journal) was completed.
  returned: always
  type: bool
service_action:
  description: V(stop_start), V(restart), V(start) or V(null) (the service was left as it was).
  returned: always
  type: str
downtime_s:
  description: Seconds from stopping (or restarting) the serving service to the health gate's 200; V(null) without an outage or without a 200.
  returned: always
  type: float
  sample: 2.61
outage_started:
  description: The host's clock (monotonic) when the service was stopped or restarted; V(null) without an outage.
  returned: always
  type: float
health:
  description: The health gate; V(null) without O(health_url).
  returned: always
  type: dict
  contains:
    ok:
      description: Whether the URL answered 200 in time.
      type: bool
    status:
      description: The last HTTP status (0 for no answer).
      type: int
    error:
      description: The last error text, V(null) after a 200.
      type: str
    attempts:
      description: Requests made.
      type: int
    seconds:
      description: Seconds from the first request to the 200 (or to giving up).
      type: float
    interval_s:
      description: O(health_interval).
      type: float
    timeout_s:
      description: O(health_timeout).
      type: float
    url:
      description: O(health_url).
      type: str
    healthy_at:
      description: The host's monotonic clock at the 200.
      type: float
timings:
  description:
    - Seconds of each phase, by the host's monotonic clock; V(null) for a phase that did not run. C(stop_s), C(flip_s),
      C(start_s) (the C(systemctl) call, which for a C(Type=simple) unit returns once the server's process started) and
      C(gate_s) (first request to the 200) make the outage; C(compile_s) (RV(bytecode)) comes before it.
  returned: always
  type: dict
  contains:
    compile_s:
      description: The target's bytecode compiled (before the stop).
      type: float
    stop_s:
      description: C(systemctl stop).
      type: float
    flip_s:
      description: The two links replaced.
      type: float
    start_s:
      description: C(systemctl start) or C(restart).
      type: float
    gate_s:
      description: The health gate, from its first request to the 200 or to giving up.
      type: float
  sample: {compile_s: 0.41, stop_s: 0.11, flip_s: 0.001, start_s: 0.03, gate_s: 2.62}
bytecode:
  description: What O(compile_python) did; V(null) when it did not run.
  returned: always
  type: dict
  contains:
    python:
      description: O(compile_python).
      type: str
    ok:
      description: Whether the interpreter ran and reported.
      type: bool
    checked:
      description: The C(.py) files looked at.
      type: int
    compiled:
      description: The files compiled (their bytecode was missing or stale).
      type: int
    errors:
      description: Files that did not compile (the first 20), or why the interpreter failed.
      type: list
      elements: str
    error_count:
      description: How many errors in all.
      type: int
    seconds:
      description: Seconds it took.
      type: float
log_lines:
  description: The service's last journal lines, read when the health gate failed.
  returned: always
  type: list
  elements: str
msg:
  description: A summary; when the health gate failed, why (the caller's message puts C(HEALTH GATE) and the unit and host before it).
  returned: always
  type: str
"""

import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible.module_utils.urls import open_url

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import service_switch


class HostOps(object):
    """The side effects of service_switch.run() on this host."""

    def __init__(self, module):
        self.module = module
        self.systemctl_path = module.get_bin_path('systemctl', required=False) or 'systemctl'
        self.journalctl_path = module.get_bin_path('journalctl', required=False) or 'journalctl'

    def systemctl(self, args):
        return self.module.run_command([self.systemctl_path] + args)

    def command(self, argv):
        return self.module.run_command(argv)

    @staticmethod
    def fetch(url, timeout):
        if url.lower().startswith('http://'):
            return service_switch.fetch_http(url, timeout)
        try:
            response = open_url(url, timeout=timeout, validate_certs=True, follow_redirects='none')
            return response.getcode(), None
        except Exception as exc:  # pylint: disable=broad-except
            # HTTPError carries the status (503 while the model loads); anything else is no answer.
            return int(getattr(exc, 'code', 0) or 0), to_native(getattr(exc, 'reason', None) or exc)

    @staticmethod
    def now():
        return time.monotonic()

    @staticmethod
    def sleep(seconds):
        time.sleep(seconds)

    def journal_lines(self, unit):
        rc, out, _err = self.module.run_command([self.journalctl_path, '--unit', unit, '--lines', str(service_switch.LOG_LINES),
                                                 '--no-pager', '--output', 'cat'])
        return out.splitlines() if rc == 0 else []


def main():
    module = AnsibleModule(
        argument_spec=dict(
            root=dict(type='path'),
            target=dict(type='path'),
            service=dict(type='str', default=''),
            restart=dict(type='bool', default=False),
            health_url=dict(type='str', default=''),
            health_timeout=dict(type='float', default=1200),
            health_interval=dict(type='float', default=service_switch.DEFAULT_INTERVAL),
            journal_path=dict(type='path', default=''),
            log_unit=dict(type='str', default=''),
            down_since=dict(type='float'),
            compile_python=dict(type='path'),
        ),
        required_together=[('root', 'target')],
        supports_check_mode=True,
    )
    p = module.params
    if p['health_interval'] <= 0 or p['health_timeout'] <= 0:
        module.fail_json(msg='health_interval (%s) and health_timeout (%s) must be above 0' % (p['health_interval'], p['health_timeout']))
    try:
        result = service_switch.run(HostOps(module), p['root'], p['target'], service=p['service'], restart=p['restart'],
                                    health_url=p['health_url'], health_timeout=p['health_timeout'],
                                    health_interval=p['health_interval'], journal_path=p['journal_path'], log_unit=p['log_unit'],
                                    down_since=p['down_since'], compile_python=p['compile_python'] or '',
                                    check_mode=module.check_mode)
    except (service_switch.SwitchError, IOError, OSError) as exc:
        partial = dict(getattr(exc, 'result', {}))
        partial.pop('diff', None)
        partial.update(msg='SWITCH: %s' % to_native(exc), changed=True)
        module.fail_json(**partial)
    if not module._diff:
        result.pop('diff')
    result.setdefault('msg', '%s -> %s%s%s' % (
        result['from'] or '(none)', result['to'] or '(none)', ', flipped' if result['flipped'] else '',
        (', healthy after %.2f s' % result['health']['seconds']) if result['health'] and result['health']['ok'] else ''))
    module.exit_json(**result)


if __name__ == '__main__':
    main()

# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark of the collection's playbooks on local containers (a benchmark, not a timed test).

Stands up Debian 12 containers with systemd (the same stand-ins as the molecule scenarios: replayed
nvidia-smi, the SGLang stand-in server), then measures, each over --runs repetitions:
  - first converge of the upgrade playbook on a fresh host, and the second (no-op) run with its
    changed count, with SSH-less pipelining on and off;
  - switch downtime (service stop -> /health_generate 200 again, seen by a poller inside the host)
    against a bare `systemctl restart`, and the same for the rollback playbook;
  - the verify playbook on 1 host against --hosts hosts (forks >= hosts).
Writes the raw samples to build/benchmark/results.json and prints a Markdown summary (medians and
ratios measured in the same run) for docs/performance.md.
Usage (repository root, after scripts/setup-controller.sh, base images and the mirror):
  .venv/bin/python tests/benchmark/benchmark.py --runs 3 --hosts 8
"""

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
OUT = os.path.join(ROOT, 'build', 'benchmark')
IMAGE = 'sglang-stack-testbed/debian12:latest'
PREFIX = 'sglang-bench-'
VENV_BIN = os.path.join(ROOT, '.venv', 'bin')
CPU = []

# Polls the health endpoint inside the host every 50 ms and prints transitions with timestamps.
POLLER = r'''
import sys, time, urllib.request
state = None
end = time.time() + float(sys.argv[1])
while time.time() < end:
    try:
        code = urllib.request.urlopen("http://127.0.0.1:30000/health_generate", timeout=1).status
    except Exception:
        code = 0
    if code != state:
        print("%.3f %d" % (time.time(), code), flush=True)
        state = code
    time.sleep(0.05)
'''


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def host(i):
    return '%s%d' % (PREFIX, i)


def start_host(i):
    name = host(i)
    subprocess.run(['docker', 'rm', '-f', name], capture_output=True, check=False)
    sh(['docker', 'run', '-d', '--name', name, '--hostname', name, '--network', 'sglang-stack-testnet',
        '--tmpfs', '/run', '--tmpfs', '/run/lock', '-v', '/sys/fs/cgroup:/sys/fs/cgroup:ro', IMAGE, '/lib/systemd/systemd'])


def clone_host(i):
    """Host i as a copy of host 1 (its built stacks and service): for the verify part, which reads what is built."""
    name = host(i)
    subprocess.run(['docker', 'rm', '-f', name], capture_output=True, check=False)
    sh(['docker', 'run', '-d', '--name', name, '--hostname', name, '--network', 'sglang-stack-testnet',
        '--tmpfs', '/run', '--tmpfs', '/run/lock', '-v', '/sys/fs/cgroup:/sys/fs/cgroup:ro', PREFIX + 'fleet:latest',
        '/lib/systemd/systemd'])


def write_inventory(count):
    inv = os.path.join(OUT, 'inventory')
    os.makedirs(os.path.join(inv, 'host_vars'), exist_ok=True)
    group_vars = os.path.join(inv, 'group_vars')
    if not os.path.islink(group_vars):
        os.symlink(os.path.join(ROOT, 'molecule', 'resources', 'inventory', 'group_vars'), group_vars)
    hosts = dict((host(i), {}) for i in range(1, count + 1))
    with open(os.path.join(inv, 'hosts.yml'), 'w') as handle:
        json.dump({'sglang_gpu_hosts': {'hosts': hosts, 'vars': {'ansible_connection': 'community.docker.docker'}}}, handle)
    # host_vars, not inventory group vars: the shared group_vars (sglang_upgrade_service: false) outrank those.
    for name in hosts:
        with open(os.path.join(inv, 'host_vars', name + '.yml'), 'w') as handle:
            json.dump({'testbed_gpu_profile': 'rtx-pro-6000-x8', 'stack_declaration_python': {'version': '3.11', 'tag': 'cp311'},
                       'testbed_sgl_kernel_abi': 'cp310', 'sglang_upgrade_service': True}, handle)
    return inv


def playbook(inv, book, extra=None, limit=None, pipelining=True, forks=10, log=None):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, 'build', 'collections'),
               ANSIBLE_PIPELINING=str(pipelining), ANSIBLE_FORKS=str(forks), MOLECULE_PROJECT_DIRECTORY=ROOT,
               # The shared test group_vars keep the stack locks the upgrade makes in the scenario's directory.
               MOLECULE_EPHEMERAL_DIRECTORY=OUT,
               ANSIBLE_HOST_KEY_CHECKING='False', PATH=VENV_BIN + os.pathsep + os.environ['PATH'])
    cmd = [os.path.join(VENV_BIN, 'ansible-playbook'), '-i', inv, book, '-e', json.dumps(extra or {})]
    if limit:
        cmd += ['--limit', limit]
    start = time.monotonic()
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    wall = time.monotonic() - start
    if log:
        with open(log, 'w') as handle:
            handle.write(proc.stdout + proc.stderr)
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # The controller's CPU time (ansible-playbook and its forks, user + system; the hosts' side runs in the containers).
    CPU.append(cpu_after.ru_utime + cpu_after.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-2000:])
        raise SystemExit('%s failed (rc %d)' % (book, proc.returncode))
    changed = sum(int(n) for n in re.findall(r'changed=(\d+)', proc.stdout.split('PLAY RECAP')[-1]))
    return wall, changed


def prepare(inv, limit=None):
    playbook(inv, os.path.join(ROOT, 'molecule', 'default', 'prepare.yml'), limit=limit)


def downtime(name, action):
    """Run action() while a poller inside the host watches /health_generate; seconds from the first
    non-200 answer to the next 200, and the action's wall time."""
    poller = subprocess.Popen(['docker', 'exec', name, 'python3', '-u', '-c', POLLER, '600'], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(poller.stdout), daemon=True)
    reader.start()
    time.sleep(1.0)
    wall = action()

    def events():
        return [(float(t), int(c)) for t, c in (line.split() for line in list(lines))]

    def outage(seen):
        down = next((t for t, c in seen if c != 200), None)
        up = next((t for t, c in seen if c == 200 and down is not None and t > down), None)
        return down, up
    # The playbook returns once its own health gate passed; give the poller's next answers time to arrive.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and None in outage(events()):
        time.sleep(0.2)
    subprocess.run(['docker', 'exec', name, 'pkill', '-f', 'health_generate'], capture_output=True, check=False)
    poller.terminate()
    reader.join(5)
    down, up = outage(events())
    if down is None or up is None:
        status = subprocess.run(['docker', 'exec', name, 'systemctl', 'status', '--no-pager', 'sglang'], capture_output=True, text=True, check=False)
        raise SystemExit('no outage and recovery seen by the poller: %s; poller stderr: %s; %s'
                         % (events(), poller.stderr.read()[-2000:], status.stdout[-2000:]))
    PARTS.append(outage_parts(name, down, up))
    return up - down, wall


PARTS = []
UNIT_EVENT = re.compile(r'^(\d+\.\d+) \S+ (?:systemd\[1\]: (Stopping|Stopped|Started) sglang\.service|python\[\d+\]: .*(serving on) )')


def outage_parts(name, down, up):
    """Where one outage's time went, from the host's journal (realtime, the clock the poller prints): stop (systemd's
    stop job: Stopping -> Stopped), gap (Stopped -> Started: what runs between the two jobs, for a switch the flip and
    the module's second systemctl call), boot (Started -> the server's 'serving on': interpreter, imports, start-up
    checks), ready (-> the poller's first 200: the server's loading, STANDIN_LOAD_SECONDS, and the poll's 50 ms)."""
    out = subprocess.run(['docker', 'exec', name, 'journalctl', '--unit', 'sglang', '--output', 'short-unix', '--no-pager',
                          '--since', '@%d' % int(down - 5), '--until', '@%d' % int(up + 2)],
                         capture_output=True, text=True, check=False).stdout
    seen = {}
    for line in out.splitlines():
        match = UNIT_EVENT.match(line)
        if not match:
            continue
        when, what = float(match.group(1)), match.group(2) or match.group(3)
        # The first of each after the outage began (the Stopping just before the poller's first non-200 counts).
        if when >= down - 2 and what not in seen and when <= up:
            if what == 'Stopping' or 'Stopping' in seen:
                seen[what] = when
    if not all(k in seen for k in ('Stopping', 'Stopped', 'Started', 'serving on')):
        return {'journal': 'incomplete: %s' % sorted(seen)}
    return {'stop': round(seen['Stopped'] - seen['Stopping'], 3), 'gap': round(seen['Started'] - seen['Stopped'], 3),
            'boot': round(seen['serving on'] - seen['Started'], 3), 'ready': round(up - seen['serving on'], 3),
            'before_stop': round(seen['Stopping'] - down, 3)}


def bare_restart(name):
    def action():
        start = time.monotonic()
        sh(['docker', 'exec', name, 'systemctl', 'restart', 'sglang'])
        return time.monotonic() - start
    return downtime(name, action)


def host_measured(summaries, book):
    """service_switch's own figures of the last run of ``book``, from its run summary: module_downtime (stop to the
    gate's 200, the host's clock) and gate (the gate's first request to its 200)."""
    try:
        with open(os.path.join(summaries, '%s-latest.json' % book)) as handle:
            switch = json.load(handle)['hosts'][0]['switch']
        return {'module_downtime': switch['downtime_s'], 'gate': switch['gates']['health']['seconds']}
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        return {'summary': 'unreadable: %s' % exc}


def median(values):
    return round(statistics.median(values), 2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--first-runs', type=int, default=3, help='fresh-host first converges (each starts a new container)')
    parser.add_argument('--hosts', type=int, default=8)
    parser.add_argument('--skip-fleet', action='store_true', help='skip the verify 1 vs N hosts part')
    parser.add_argument('--switch-only', action='store_true',
                        help='only the switch / rollback / bare restart downtimes, on the existing host 1 (after a full run)')
    parser.add_argument('--fleet-only', action='store_true', help='only the verify 1 vs N hosts part (after a full run)')
    parser.add_argument('--converge-only', action='store_true',
                        help='only the first converges and their no-op re-runs (no stack B, switch or fleet part)')
    parser.add_argument('--label', default='', help='suffix of the results file (results<label>.json)')
    parser.add_argument('--copy-b', action='store_true',
                        help='stack B as a copy of the built stack A under B\'s id, not a second build (the switch does not see the difference)')
    parser.add_argument('--fleet-clones', action='store_true',
                        help='verify part: hosts 2..N are copies of host 1 (docker commit), not N-1 upgrades')
    parser.add_argument('--build-once', action='store_true',
                        help='a fresh host 1 with stack A built once (not timed), then the switch and fleet parts')
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    inv = write_inventory(args.hosts)
    one = host(1)
    upgrade = os.path.join(ROOT, 'playbooks', 'upgrade.yml')
    r = {'runs': args.runs, 'hosts': args.hosts, 'first': [], 'noop': [], 'noop_changed': [], 'noop_no_pipelining': [],
         'switch': [], 'rollback': [], 'restart': [], 'verify_1': [], 'verify_n': [],
         'parts_switch': [], 'parts_rollback': [], 'parts_restart': []}

    def save():
        with open(os.path.join(OUT, 'results%s.json' % args.label), 'w') as handle:
            json.dump(r, handle, indent=1)

    if args.switch_only:
        args.first_runs, args.skip_fleet = 0, True
    if args.converge_only:
        args.skip_fleet = True
    if args.fleet_only:
        args.first_runs = 0
    if args.build_once:
        args.first_runs = 0
        start_host(1)
        prepare(inv, one)
        playbook(inv, upgrade, {'stack_declaration_name': 'bench-a'}, one)
    for dummy in range(args.first_runs):
        start_host(1)
        prepare(inv, one)
        r['first'].append(playbook(inv, upgrade, {'stack_declaration_name': 'bench-a'}, one)[0])
        wall, changed = playbook(inv, upgrade, {'stack_declaration_name': 'bench-a'}, one)
        r['noop'].append(wall)
        r['noop_changed'].append(changed)
        r['noop_no_pipelining'].append(playbook(inv, upgrade, {'stack_declaration_name': 'bench-a'}, one, pipelining=False)[0])
        save()
    for dummy in range(0 if args.switch_only or args.fleet_only or args.build_once or args.converge_only else args.runs - args.first_runs):
        wall, changed = playbook(inv, upgrade, {'stack_declaration_name': 'bench-a'}, one)
        r['noop'].append(wall)
        r['noop_changed'].append(changed)
        r['noop_no_pipelining'].append(playbook(inv, upgrade, {'stack_declaration_name': 'bench-a'}, one, pipelining=False)[0])

    # Stack B beside A (built, not switched), then switch A -> B and roll back B -> A, each against a bare restart.
    if args.converge_only:
        pass
    elif args.copy_b and not args.fleet_only:
        # The stack id is the declaration's name and a digest of its content, not of its name: bench-b's stack is
        # bench-a's files under bench-b's id (venv/bin/python is a link to the system interpreter, so it runs there).
        sh(['docker', 'exec', one, 'bash', '-c', 'set -e; cd /opt/sglang/stacks; a=$(ls -d bench-a-*); b=bench-b-${a#bench-a-}; '
            'rm -rf "$b"; cp -a "$a" "$b"'])
    elif not args.fleet_only:
        playbook(inv, upgrade, {'stack_declaration_name': 'bench-b', 'sglang_upgrade_switch': False}, one)
    switch = os.path.join(ROOT, 'playbooks', 'switch.yml')
    rollback = os.path.join(ROOT, 'playbooks', 'rollback.yml')
    # The playbooks' run summaries in a directory of the benchmark's own: the host-measured downtime_s and health gate
    # of service_switch (what the playbook saw), beside the poller's view.
    summaries = os.path.join(OUT, 'summaries')
    switch_vars = {'stack_declaration_name': 'bench-b', 'run_summary_dir': summaries}
    for dummy in range(0 if args.fleet_only or args.converge_only else args.runs):
        r['switch'].append(downtime(one, lambda: playbook(inv, switch, switch_vars, one)[0]))
        r['parts_switch'].append(dict(PARTS[-1], **host_measured(summaries, 'switch')))
        r['rollback'].append(downtime(one, lambda: playbook(inv, rollback, switch_vars, one)[0]))
        r['parts_rollback'].append(dict(PARTS[-1], **host_measured(summaries, 'rollback')))
        r['restart'].append(bare_restart(one))
        r['parts_restart'].append(PARTS[-1])
        save()

    if not args.skip_fleet and args.fleet_clones:
        sh(['docker', 'commit', one, PREFIX + 'fleet:latest'])
        for i in range(2, args.hosts + 1):
            clone_host(i)
        time.sleep(10)
    elif not args.skip_fleet:
        for i in range(2, args.hosts + 1):
            if not (args.fleet_only and subprocess.run(['docker', 'inspect', host(i)], capture_output=True, check=False).returncode == 0):
                start_host(i)
        prepare(inv)
        playbook(inv, upgrade, {'stack_declaration_name': 'bench-a', 'sglang_upgrade_serial': args.hosts})
    if not args.skip_fleet:
        verify = os.path.join(ROOT, 'playbooks', 'verify.yml')
        for dummy in range(args.runs):
            r['verify_1'].append(playbook(inv, verify, {'stack_declaration_name': 'bench-a'}, one, forks=args.hosts)[0])
            r.setdefault('verify_1_cpu', []).append(CPU[-1])
            r['verify_n'].append(playbook(inv, verify, {'stack_declaration_name': 'bench-a'}, None, forks=args.hosts)[0])
            r.setdefault('verify_n_cpu', []).append(CPU[-1])
            save()

    save()
    down = dict((k, [d for d, dummy in r[k]]) for k in ('switch', 'rollback', 'restart'))
    walls = dict((k, [w for dummy, w in r[k]]) for k in ('switch', 'rollback', 'restart'))
    rows = [] if not r['first'] else [
        ('first converge, 1 host (s)', median(r['first']), ''),
        ('second run, no-op (s)', median(r['noop']), 'changed: %s' % r['noop_changed']),
        ('second run, pipelining off (s)', median(r['noop_no_pipelining']),
         'pipelining on / off = %.2f' % (median(r['noop']) / median(r['noop_no_pipelining'])))
    ]
    rows += [] if args.fleet_only or args.converge_only else [
        ('bare `systemctl restart`: downtime (s)', median(down['restart']), ''),
        ('switch playbook: downtime (s)', median(down['switch']),
         'vs bare restart = %.2f (%+.2f s); playbook wall %.1f s' % (median(down['switch']) / median(down['restart']),
                                                                     median(down['switch']) - median(down['restart']), median(walls['switch']))),
        ('rollback playbook: downtime (s)', median(down['rollback']),
         'vs bare restart = %.2f (%+.2f s); playbook wall %.1f s' % (median(down['rollback']) / median(down['restart']),
                                                                     median(down['rollback']) - median(down['restart']), median(walls['rollback']))),
    ]
    for kind in ('restart', 'switch', 'rollback') if r['parts_restart'] else ():
        parts = [p for p in r['parts_' + kind] if 'stop' in p]
        if parts:
            split = ', '.join('%s %.2f' % (k, statistics.median(p[k] for p in parts)) for k in ('stop', 'gap', 'boot', 'ready'))
            rows.append(('%s: where the outage went (host journal, s)' % kind, '', '%s (medians of %d)' % (split, len(parts))))
        measured = [p for p in r['parts_' + kind] if 'module_downtime' in p]
        if measured:
            rows.append(('%s: service_switch downtime_s (host clock, s)' % kind, median([p['module_downtime'] for p in measured]),
                         'samples %s; health gate %s s' % ([p['module_downtime'] for p in measured], [p['gate'] for p in measured])))
    if r['verify_1']:
        rows += [('verify playbook, 1 host (s)', median(r['verify_1']), ''),
                 ('verify playbook, %d hosts (s)' % args.hosts, median(r['verify_n']),
                  '%d hosts / 1 host = %.2f' % (args.hosts, median(r['verify_n']) / median(r['verify_1']))),
                 ('verify playbook, controller CPU, 1 host (s)', median(r['verify_1_cpu']), ''),
                 ('verify playbook, controller CPU, %d hosts (s)' % args.hosts, median(r['verify_n_cpu']),
                  'per host %.2f s; %d hosts / 1 host = %.2f' % (median(r['verify_n_cpu']) / args.hosts, args.hosts,
                                                                 median(r['verify_n_cpu']) / median(r['verify_1_cpu'])))]
    print('| measure (median of %d) | value | ratio / note |' % args.runs)
    print('|---|---|---|')
    for name, value, note in rows:
        print('| %s | %s | %s |' % (name, value, note))


if __name__ == '__main__':
    main()

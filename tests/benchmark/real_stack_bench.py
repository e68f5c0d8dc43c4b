# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark of the upgrade on the real stack (issue 15 item 6; a benchmark, not a timed test).

One Debian 12 container prepared as molecule's real_stack scenario prepares it (the GPU stand-in), the real wheels
from the test mirror (torch 2.11.0 cu130 and its nvidia libraries, flashinfer, sglang 0.5.9 and its closure: 169
distributions). Each round starts from a host without stacks or store and measures, with upgrade.yml (no switch:
real_stack's host_vars):
  - full: the first build of stack A (every wheel fetched and unpacked);
  - noop: the same upgrade again (changed count);
  - sglang: an upgrade whose only change is the sglang layer's declaration (one requirement more, its own lock):
    stack B beside A, with the files fetched (wheels in B that are not A's) and the disk of A and B together.
Prints the medians and ratios for docs/performance.md; raw samples in build/benchmark/results-real-stack.json, each
playbook's output with its task times (profile_tasks) in build/benchmark/real-stack-logs/.
/opt/sglang (the stacks and their store) is a directory of this machine mounted into the container, as a GPU host
keeps them on its own disk: on the container's own file system every file operation of a build of 82,000 files
would also pass through the Docker storage driver (fuse-overlayfs on the machine of 2026-12-05). --overlay keeps
them there instead.
Usage (repository root, after scripts/test-all.sh build testbed):
  .venv/bin/python tests/benchmark/real_stack_bench.py --runs 3
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import benchmark  # noqa: E402  pylint: disable=wrong-import-position

ROOT = benchmark.ROOT
OUT = benchmark.OUT
HOST = benchmark.PREFIX + 'real'
CHECKER = os.path.join(ROOT, 'molecule', 'real_stack', 'files', 'share_check.py')


def write_inventory():
    inv = os.path.join(OUT, 'inventory-real')
    os.makedirs(os.path.join(inv, 'host_vars'), exist_ok=True)
    for link, target in (('group_vars', os.path.join(ROOT, 'molecule', 'resources', 'inventory', 'group_vars')),
                         (os.path.join('host_vars', HOST + '.yml'), os.path.join(ROOT, 'molecule', 'real_stack', 'host_vars', 'sglang-real-d12.yml'))):
        if not os.path.islink(os.path.join(inv, link)):
            os.symlink(target, os.path.join(inv, link))
    with open(os.path.join(inv, 'hosts.yml'), 'w') as handle:
        json.dump({'sglang_gpu_hosts': {'hosts': {HOST: {}}, 'vars': {'ansible_connection': 'community.docker.docker'}}}, handle)
    return inv


TASK_LINE = re.compile(r'^TASK \[(.*)\] \*')
TIME_LINE = re.compile(r'^\w+day \d+ \w+ \d+\s+[\d:]+ [+-]\d{4} \((\d+):(\d+):([\d.]+)\)')


def role_seconds(log, role):
    """Seconds the tasks of ``role`` took in a playbook's output with profile_tasks (each task's time is printed on the
    line that starts the next one)."""
    total, current, pending = 0.0, None, None
    with open(log) as handle:
        for line in handle:
            task = TASK_LINE.match(line)
            if task:
                pending = task.group(1)
                continue
            stamp = TIME_LINE.match(line)
            if stamp and pending is not None:
                if current is not None and current.startswith(role + ' : '):
                    total += int(stamp.group(1)) * 3600 + int(stamp.group(2)) * 60 + float(stamp.group(3))
                current, pending = pending, None
    return round(total, 1)


def on_host(*argv):
    return benchmark.sh(['docker', 'exec', HOST] + list(argv)).stdout


def plus_layers():
    """The declaration's layers with one requirement more in the sglang layer (as molecule/real_stack's lock checks)."""
    import yaml
    with open(os.path.join(ROOT, 'molecule', 'real_stack', 'host_vars', 'sglang-real-d12.yml')) as handle:
        layers = yaml.safe_load(handle)['stack_declaration_layers']
    with open(os.path.join(ROOT, 'roles', 'stack_declaration', 'defaults', 'main.yml')) as handle:
        sglang = [layer for layer in yaml.safe_load(handle)['stack_declaration_layers'] if layer['name'] == 'sglang'][0]
    # The host_vars take the sglang layer from the collection's defaults (a template): the same layer, one requirement more.
    layers = [layer for layer in layers if isinstance(layer, dict) and layer['name'] != 'sglang']
    return layers + [dict(sglang, requirements=sglang['requirements'] + ['tabulate'])]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--overlay', action='store_true', help="the stacks on the container's own file system")
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    logs = os.path.join(OUT, 'real-stack-logs')
    os.makedirs(logs, exist_ok=True)
    os.environ['ANSIBLE_CALLBACKS_ENABLED'] = 'ansible.posix.profile_tasks'
    os.environ['PROFILE_TASKS_TASK_OUTPUT_LIMIT'] = '40'
    volume = []
    if not args.overlay:
        opt = os.path.join(OUT, 'real-stack-opt-sglang')
        if os.path.isdir(opt):
            shutil.rmtree(opt)
        os.makedirs(opt)
        volume = ['-v', opt + ':/opt/sglang']
    inv = write_inventory()
    upgrade = os.path.join(ROOT, 'playbooks', 'upgrade.yml')
    lock = os.path.join(ROOT, 'playbooks', 'lock.yml')
    layers_b = plus_layers()
    vars_b = {'stack_declaration_layers': layers_b, 'stack_declaration_lock_file': os.path.join(OUT, 'stack.plus.lock.json')}
    subprocess.run(['docker', 'rm', '-f', HOST], capture_output=True, check=False)
    benchmark.sh(['docker', 'run', '-d', '--name', HOST, '--hostname', HOST, '--network', 'sglang-stack-testnet', '--cap-add', 'SYS_ADMIN',
                  '--tmpfs', '/run', '--tmpfs', '/run/lock', '-v', '/sys/fs/cgroup:/sys/fs/cgroup:ro'] + volume + [benchmark.IMAGE, '/lib/systemd/systemd'])
    time.sleep(3)
    benchmark.playbook(inv, os.path.join(ROOT, 'molecule', 'real_stack', 'prepare.yml'))
    # The two locks, once (the site's step; not part of an upgrade's time).
    for path in (os.path.join(OUT, 'stack.lock.json'), vars_b['stack_declaration_lock_file']):
        if os.path.exists(path):
            os.unlink(path)
    benchmark.playbook(inv, lock)
    benchmark.playbook(inv, lock, vars_b)
    r = {'full': [], 'noop': [], 'noop_changed': [], 'sglang': [], 'fetched_b': [], 'wheels_b': [], 'disk': [],
         'stacks_on': 'overlay' if args.overlay else 'volume'}
    for run in range(args.runs):
        on_host('rm', '-rf', '/opt/sglang/stacks', '/opt/sglang/store', '/opt/sglang/current', '/opt/sglang/previous')
        r['full'].append(benchmark.playbook(inv, upgrade, log=os.path.join(logs, '%d-full.log' % run))[0])
        stack_a = '/opt/sglang/stacks/' + on_host('ls', '/opt/sglang/stacks').split()[0]
        wall, changed = benchmark.playbook(inv, upgrade, log=os.path.join(logs, '%d-noop.log' % run))
        r['noop'].append(wall)
        r['noop_changed'].append(changed)
        r['sglang'].append(benchmark.playbook(inv, upgrade, vars_b, log=os.path.join(logs, '%d-sglang.log' % run))[0])
        # The stack phase alone (the python_stack role's tasks): the build, without the rest of the upgrade's round trips.
        for phase in ('full', 'sglang'):
            r.setdefault(phase + '_stack_phase', []).append(role_seconds(os.path.join(logs, '%d-%s.log' % (run, phase)),
                                                                         'gpuops.sglang_stack.python_stack'))
        stack_b = [path for path in ('/opt/sglang/stacks/' + name for name in on_host('ls', '/opt/sglang/stacks').split()) if path != stack_a][0]
        benchmark.sh(['docker', 'cp', CHECKER, HOST + ':/tmp/share_check.py'])
        disk = json.loads(on_host('python3', '/tmp/share_check.py', 'disk', stack_a, stack_b))
        r['disk'].append(disk)
        r['wheels_b'].append(disk['wheels_b'])
        r['fetched_b'].append(len(disk['wheels_b_not_a']))
        with open(os.path.join(OUT, 'results-real-stack.json'), 'w') as handle:
            json.dump(r, handle, indent=1)
    med = benchmark.median
    ratios = [d['ratio'] for d in r['disk']]
    print('| measure (median of %d, one run) | value | samples | ratio |' % args.runs)
    print('|---|---|---|---|')
    print('| upgrade, first build of the real stack (s) | %s | %s | |' % (med(r['full']), r['full']))
    print('| upgrade again, no-op (s) | %s | %s; changed %s | no-op / first = **%.2f** |'
          % (med(r['noop']), r['noop'], r['noop_changed'], med(r['noop']) / med(r['full'])))
    print('| upgrade changing only the sglang layer (s) | %s | %s; wheels fetched %s of %s | sglang-only / full = **%.2f** |'
          % (med(r['sglang']), r['sglang'], r['fetched_b'], r['wheels_b'], med(r['sglang']) / med(r['full'])))
    print('| the same, stack phase only (python_stack role, s) | %s | %s; first build %s | sglang-only / full = **%.2f** |'
          % (med(r['sglang_stack_phase']), r['sglang_stack_phase'], r['full_stack_phase'],
             med(r['sglang_stack_phase']) / med(r['full_stack_phase'])))
    print('| disk of stacks A and B together (B) | %s | A alone %s B; ratios %s | (A and B) / A = **%.4f** |'
          % (r['disk'][-1]['disk_a_and_b'], r['disk'][-1]['disk_a'], ratios, sorted(ratios)[len(ratios) // 2]))


if __name__ == '__main__':
    main()

# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run inside a test container (python3, standard library only; fed on stdin by run_faults.py).

Modes (first argument):
  snapshot               print the serving state as JSON: links, checksum manifest of the serving stack,
                         the unit, the service (state, MainPID), /health_generate, the stacks
                         on disk, the apt sources, dpkg's audit and the CUDA toolkit package.
  stackdigest STACK_DIR  print the digest of a stack's checksum manifest (as snapshot's serving_manifest)
  manifest STACK_DIR     print a normalised manifest of a stack (for comparing two builds of the same
                         content under different stack ids): relative path -> sha256 of the bytes with the
                         stack's id replaced (RECORD: its list of files), without __pycache__ and without the run-dependent files.
  killtree               SIGKILL every process tree that `docker exec` started in this container (the
                         host side of an interrupted Ansible task), except this one; print what was killed.
  procs                  print the command lines of those processes (JSON list).
"""
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import urllib.request

ROOT = '/opt/sglang'
UNIT = '/etc/systemd/system/sglang.service'
# Written per run (timings, the time of the check), not part of what a stack is. A stack holds the record of an import
# gate before the last one (import-gate-<key>.json) only where it ran that gate itself, not where it took another stack's
# record of the same gate: which depends on the order the runs built the stacks in.
RUN_DEPENDENT = ('verify.json',)
RUN_DEPENDENT_PATTERN = re.compile(r'^import-gate-[0-9a-f]{64}\.json$')


def sha256_file(path, replace=None):
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        data = handle.read()
    if replace:
        data = data.replace(replace[0], replace[1])
        if os.path.basename(path) == 'RECORD':
            # Files naming the stack (console scripts, direct_url.json) have other hashes here; every file is
            # compared by its own normalised hash, so RECORD is compared by its list of files.
            data = re.sub(rb',sha256=[^,\n]*,[0-9]*', b'', data)
    digest.update(data)
    return digest.hexdigest()


def tree_manifest(top, replace=None, skip_names=(), skip_pattern=None):
    files = {}
    for base, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        for name in sorted(names):
            path = os.path.join(base, name)
            rel = os.path.relpath(path, top)
            if rel in skip_names or name.endswith('.pyc') or (skip_pattern and skip_pattern.match(rel)):
                continue
            if os.path.islink(path):
                target = os.readlink(path)
                if replace:
                    target = target.replace(replace[0].decode(), replace[1].decode())
                files[rel] = 'link:' + target
            elif os.path.isfile(path):
                files[rel] = sha256_file(path, replace)
    return files


def digest_of(mapping):
    return hashlib.sha256(json.dumps(mapping, sort_keys=True).encode()).hexdigest()[:16]


def run(argv):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    return proc.stdout.strip()


def health():
    try:
        return str(urllib.request.urlopen('http://127.0.0.1:30000/health_generate', timeout=5).status)
    except Exception as exc:  # pylint: disable=broad-except
        return 'down (%s)' % type(exc).__name__


def snapshot():
    current = os.readlink(ROOT + '/current') if os.path.islink(ROOT + '/current') else ''
    previous = os.readlink(ROOT + '/previous') if os.path.islink(ROOT + '/previous') else ''
    serving = tree_manifest(current) if current and os.path.isdir(current) else {}
    pid = run(['systemctl', 'show', '-p', 'MainPID', '--value', 'sglang']) or '0'
    sources = {}
    for base in ('/etc/apt/sources.list.d', '/etc/apt/preferences.d'):
        if os.path.isdir(base):
            sources.update({os.path.join(base, n): sha256_file(os.path.join(base, n)) for n in sorted(os.listdir(base))})
    stacks = sorted(os.listdir(ROOT + '/stacks')) if os.path.isdir(ROOT + '/stacks') else []
    return {
        'current': current,
        'previous': previous,
        'serving_manifest': digest_of(serving),
        'serving_files': len(serving),
        'unit': sha256_file(UNIT)[:16] if os.path.isfile(UNIT) else '',
        'active': run(['systemctl', 'is-active', 'sglang']),
        'pid': pid,
        'health': health(),
        'stacks': stacks,
        'apt_sources': digest_of(sources),
        'dpkg_audit': run(['dpkg', '--audit']),
        'cuda_toolkit': run(['dpkg-query', '-W', '-f', '${Version} ${db:Status-Abbrev}', 'cuda-toolkit-13-0']),
    }


def exec_roots():
    """PIDs whose parent is 0: what `docker exec` started (PID 1, systemd, is the container's init)."""
    roots, children = [], {}
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % name) as handle:
                ppid = int(handle.read().rsplit(')', 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
        if ppid == 0 and name != '1':
            roots.append(int(name))
    return roots, children


def cmdline(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as handle:
            return handle.read().replace(b'\0', b' ').decode(errors='replace').strip()
    except OSError:
        return ''


def foreign_trees():
    """Every process under a docker-exec root other than this process's own."""
    roots, children = exec_roots()
    me = os.getpid()
    found = []
    for root in roots:
        tree, todo = [], [root]
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo.extend(children.get(pid, []))
        if me not in tree:
            found.extend(tree)
    return found


def main():
    mode = sys.argv[1]
    if mode == 'snapshot':
        print(json.dumps(snapshot()))
    elif mode == 'stackdigest':
        print(json.dumps(digest_of(tree_manifest(sys.argv[2]))))
    elif mode == 'manifest':
        stack = sys.argv[2].rstrip('/')
        # The stack id appears in paths (shebangs, direct_url.json, bom.json) and in nccl.env's comment.
        files = tree_manifest(stack, replace=(os.path.basename(stack).encode(), b'@STACK@'), skip_names=RUN_DEPENDENT,
                              skip_pattern=RUN_DEPENDENT_PATTERN)
        print(json.dumps(files, sort_keys=True))
    elif mode == 'procs':
        print(json.dumps([cmdline(p) for p in foreign_trees()]))
    elif mode == 'killtree':
        killed = []
        for pid in reversed(foreign_trees()):
            line = cmdline(pid)
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(line)
            except OSError:
                pass
        print(json.dumps(killed))


if __name__ == '__main__':
    main()

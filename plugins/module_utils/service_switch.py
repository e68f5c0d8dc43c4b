# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The switch of a serving stack as one host-side step: stop, flip the links, start, health gate.

A switch run as Ansible tasks pays a controller round trip for each of stop, the two links, start and
every health poll, all while the service is down (docs/performance.md measured the switch at twice a
bare ``systemctl restart``). Here the whole outage happens inside one process on the host, and the
health endpoint is polled every ``interval`` seconds (0.2 by default) until a deadline.

The side effects go through an ``ops`` object (``systemctl(args) -> (rc, out, err)``, ``command(argv) -> (rc,
out, err)``, ``fetch(url, timeout) -> (status, error)``, ``now()``, ``sleep(s)``, ``journal_lines(unit)``), so that
the decisions are tested without a host.

Only stop, flip and start fall inside the outage; what can happen before it does: the target stack's missing
bytecode is compiled by its own interpreter (``compile_python``) while the old stack still serves. The patch series
(patch_series.remove_stale_pyc) leaves the files it patched without bytecode, and the service cannot write any
(ProtectSystem=strict), so without this every start of a patched stack compiles them again, inside the outage.
Each phase's seconds are in the result's ``timings``.

The journal (``<root>/.switch-in-progress.json``, ``{"from": ..., "to": ...}``) is written before the
service stops; the caller removes it once every gate passed. A run that finds it naming the stack
``current`` already links (the controller was lost between the flip and a healthy start) completes that
switch: the stack that served before is the journal's ``from``, and the service is restarted, since its
start was never gated.
"""

from __future__ import annotations

import http.client
import json
import os

from urllib.parse import urlsplit

DEFAULT_INTERVAL = 0.2
MAX_REQUEST_TIMEOUT = 30.0
LOG_LINES = 20


def read_link(path):
    """Where the link at ``path`` points, or '' when it is not a link."""
    try:
        return os.readlink(path)
    except OSError:
        return ''


def read_journal(path):
    """The journal as a dict ({} when absent or unreadable)."""
    if not path:
        return {}
    try:
        with open(path, 'r') as handle:
            data = json.load(handle)
    except (IOError, OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def plan(current, target, journal):
    """What the switch does: the stack that served before, whether links flip, whether a cut switch resumes.

    ``current`` is where <root>/current points now, ``target`` the stack to put in service (None or '' for
    a gate alone), ``journal`` the journal's content.
    """
    target = target or current
    resumed = bool(target) and journal.get('to') == current == target and bool(journal.get('from'))
    return {
        'current': current,
        'target': target,
        'before': journal['from'] if resumed else current,
        'flip': bool(target) and target != current,
        'resumed': resumed,
    }


def replace_link(path, target):
    """Point the link ``path`` at ``target`` atomically (a new link renamed over the old one)."""
    tmp = '%s.switch-%d' % (path, os.getpid())
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(target, tmp)
    os.rename(tmp, path)


def flip_links(root, target, current):
    """previous -> the stack that served until now (when there was one), current -> target."""
    if current:
        replace_link(os.path.join(root, 'previous'), current)
    replace_link(os.path.join(root, 'current'), target)


def write_journal(path, before, target):
    tmp = path + '.tmp'
    with open(tmp, 'w') as handle:
        handle.write(json.dumps({'from': before, 'to': target}, indent=2, sort_keys=True) + '\n')
    os.rename(tmp, path)


def fetch_http(url, timeout):
    """GET a plain ``http://`` URL on one connection of its own; (status, error): (200, None), (503, 'Service
    Unavailable'), (0, '[Errno 111] Connection refused').

    The health gate asks the local server every interval during the outage: a request must cost next to nothing.
    ansible's open_url builds an SSL context (the CA bundle read again) for every request, even a plain http one:
    20-22 ms of CPU each on the test host (docs/performance.md; this takes 0.2 ms), taken from the server that is
    starting, and longer in wall time the busier the host. No proxy either: the gate asks this host's server, not what a proxy would answer.
    A redirect is not followed (its status is not 200).
    """
    parts = urlsplit(url)
    path = (parts.path or '/') + ('?' + parts.query if parts.query else '')
    try:
        conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    except (ValueError, http.client.HTTPException) as exc:
        return 0, str(exc)
    try:
        conn.request('GET', path, headers={'Connection': 'close'})
        response = conn.getresponse()
        response.read()
        return response.status, (None if response.status == 200 else response.reason)
    except (OSError, ValueError, http.client.HTTPException) as exc:
        return 0, str(exc) or type(exc).__name__
    finally:
        conn.close()


# Run by the target stack's own interpreter (the bytecode must be its version's): compile, under the stack's entries
# of its sys.path, every .py whose timestamp bytecode is missing or stale, as the import system would on a first import
# that could write. Hidden directories (the patch series' originals in .gpuops-patches) are left alone. Prints one
# JSON line: checked, compiled, errors (files that do not compile: reported, their import fails as before).
COMPILE_PROGRAM = r"""
import importlib.util, json, os, py_compile, struct, sys
root = os.path.realpath(sys.argv[1])
checked, compiled, errors, seen = 0, 0, [], set()
for entry in sys.path:
    top = os.path.realpath(entry or '.')
    if top in seen or not os.path.isdir(top) or not (top + os.sep).startswith(root + os.sep):
        continue
    seen.add(top)
    for base, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith('.') and d != '__pycache__')
        for name in sorted(files):
            if not name.endswith('.py'):
                continue
            path = os.path.join(base, name)
            checked += 1
            try:
                st = os.stat(path)
                cache = importlib.util.cache_from_source(path)
                expect = struct.pack('<4sLLL', importlib.util.MAGIC_NUMBER, 0, int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF)
                try:
                    with open(cache, 'rb') as handle:
                        head = handle.read(16)
                except OSError:
                    head = b''
                # Fresh, or a hash-based pyc (its flags set), which the import system checks itself: left as it is.
                if head == expect or (len(head) == 16 and head[:4] == expect[:4] and head[4:8] != bytes(4)):
                    continue
                py_compile.compile(path, cfile=cache, doraise=True, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
                compiled += 1
            except (OSError, py_compile.PyCompileError, SyntaxError, ValueError) as exc:
                errors.append('%s: %s' % (path, str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__))
print(json.dumps({'checked': checked, 'compiled': compiled, 'errors': errors[:20], 'error_count': len(errors)}))
"""


def compile_bytecode(ops, python, target):
    """The target's missing bytecode compiled by its interpreter ``python``; the result's ``bytecode`` dict.

    Never raises: bytecode only saves the server's start the compiling, a stack that cannot run is the health gate's
    to find. ``ok`` false (the interpreter missing or failing) is reported with its error.
    """
    start = ops.now()
    rc, out, err = ops.command([python, '-c', COMPILE_PROGRAM, target])
    result = {'python': python, 'ok': False, 'checked': 0, 'compiled': 0, 'errors': [], 'error_count': 0,
              'seconds': round(ops.now() - start, 3)}
    try:
        data = json.loads((out or '').strip().splitlines()[-1]) if rc == 0 else None
    except (ValueError, IndexError):
        data = None
    if isinstance(data, dict):
        result.update(ok=True, checked=int(data.get('checked', 0)), compiled=int(data.get('compiled', 0)),
                      errors=list(data.get('errors', [])), error_count=int(data.get('error_count', 0)))
    else:
        result['errors'] = ['%s exited %d: %s' % (python, rc, ((err or out or '').strip().splitlines() or ['no output'])[-1])]
        result['error_count'] = 1
    return result


def poll_health(ops, url, timeout, interval=DEFAULT_INTERVAL):
    """GET ``url`` until it answers 200 or ``timeout`` seconds have passed.

    Returns ok, status (the last answer, 0 for none), error (the last error text), attempts, seconds
    (from the first request to the 200, or to giving up), interval_s, timeout_s, url and healthy_at (the
    clock's time of the 200, None without one).
    """
    start = ops.now()
    deadline = start + float(timeout)
    attempts = 0
    status, error = 0, 'no request made'
    while True:
        attempts += 1
        remaining = deadline - ops.now()
        status, error = ops.fetch(url, max(0.1, min(MAX_REQUEST_TIMEOUT, remaining)))
        now = ops.now()
        if status == 200:
            return {'ok': True, 'status': 200, 'error': None, 'attempts': attempts, 'seconds': round(now - start, 3),
                    'interval_s': interval, 'timeout_s': float(timeout), 'url': url, 'healthy_at': now}
        if now + interval > deadline:
            return {'ok': False, 'status': status, 'error': error, 'attempts': attempts, 'seconds': round(now - start, 3),
                    'interval_s': interval, 'timeout_s': float(timeout), 'url': url, 'healthy_at': None}
        ops.sleep(interval)


def health_message(health, serving, log_lines):
    """The health gate's failure text after 'HEALTH GATE: <unit> on <host> ' (the caller adds those)."""
    path = '/' + health['url'].split('://', 1)[-1].split('/', 1)[-1] if '://' in health['url'] else health['url']
    last = '%s %s' % (health['status'] or 'none', health['error'] or '')
    return ('did not answer 200 on %s within %s s (last answer: %s; %d requests, every %s s); serving stack %s. Last log lines: %s'
            % (path, _num(health['timeout_s']), last.strip(), health['attempts'], _num(health['interval_s']),
               serving or 'current', ' | '.join(log_lines) if log_lines else '(none)'))


def _num(value):
    return ('%g' % value) if isinstance(value, float) else str(value)


def _systemctl(ops, *args):
    rc, out, err = ops.systemctl(list(args))
    if rc != 0:
        raise SwitchError('systemctl %s failed (rc %d): %s' % (' '.join(args), rc, (err or out).strip()))
    return out


class SwitchError(Exception):
    """A step of the switch failed (systemctl, a link); the message names it."""


def run(ops, root, target, service='', restart=False, health_url='', health_timeout=1200, health_interval=DEFAULT_INTERVAL,
        journal_path='', log_unit='', down_since=None, compile_python='', check_mode=False):
    """Switch ``root``/current to ``target`` behind the service's health gate; returns the result dict.

    Without ``target`` only the service part runs (start or restart, then the gate). Raises SwitchError when
    a step fails; a failed health gate is a result (``health.ok`` false), not an exception, so that the
    caller can roll back. ``down_since`` (the clock's time a failed switch stopped the service) makes a
    rollback's ``downtime_s`` count the whole outage, from that stop to the old stack's 200. ``compile_python``
    (the target's interpreter) compiles the target's missing bytecode before anything stops, when the service is
    about to start on it.
    """
    current = read_link(os.path.join(root, 'current')) if root else ''
    journal = read_journal(journal_path)
    steps = plan(current, target, journal)
    previous_before = read_link(os.path.join(root, 'previous')) if root else ''
    active_before = None
    if service:
        rc, out, _err = ops.systemctl(['is-active', service])
        active_before = out.strip() == 'active'
    # A resumed switch restarts: its start was never gated, and what runs may be the cut run's half-start.
    action = None
    if service:
        if steps['flip']:
            action = 'stop_start'
        elif restart or steps['resumed']:
            action = 'restart'
        elif not active_before:
            action = 'start'
    result = {
        'from': steps['before'], 'to': steps['target'], 'current_before': current, 'previous_before': previous_before,
        'flipped': steps['flip'], 'resumed': steps['resumed'], 'service': service, 'service_action': action,
        'active_before': active_before, 'changed': steps['flip'] or action is not None,
        'downtime_s': None, 'outage_started': None, 'health': None, 'log_lines': [],
        'journal_written': False, 'bytecode': None,
        # Seconds of each phase, by the host's monotonic clock; None for a phase that did not run.
        'timings': {'compile_s': None, 'stop_s': None, 'flip_s': None, 'start_s': None, 'gate_s': None},
    }
    after = (steps['target'], current or previous_before or '(none)') if steps['flip'] else (current or '(none)', previous_before or '(none)')
    result['diff'] = {
        'before': 'current -> %s\nprevious -> %s\n' % (current or '(none)', previous_before or '(none)'),
        'after': 'current -> %s\nprevious -> %s\n' % after,
    }
    if check_mode:
        return result

    if compile_python and steps['target'] and action is not None:
        result['bytecode'] = compile_bytecode(ops, compile_python, steps['target'])
        result['timings']['compile_s'] = result['bytecode']['seconds']
    try:
        _act(ops, root, steps, action, service, journal_path, down_since, result)
    except SwitchError as exc:
        # The caller's rollback needs to know which stack served before, whatever step failed.
        exc.result = result
        raise
    if health_url:
        health = poll_health(ops, health_url, health_timeout, health_interval)
        result['health'] = health
        result['timings']['gate_s'] = health['seconds']
        if health['ok'] and result['outage_started'] is not None:
            result['downtime_s'] = round(health['healthy_at'] - result['outage_started'], 3)
        if not health['ok']:
            unit = log_unit or service
            result['log_lines'] = ops.journal_lines(unit) if unit else []
            result['msg'] = health_message(health, steps['target'], result['log_lines'])
    return result


def _act(ops, root, steps, action, service, journal_path, down_since, result):
    """Journal, stop, flip, start: the steps that change the host, in this order."""
    current = steps['current']
    if steps['flip'] and steps['before'] and journal_path:
        write_journal(journal_path, steps['before'], steps['target'])
        result['journal_written'] = True
    timings = result['timings']
    if action == 'stop_start':
        result['outage_started'] = ops.now() if down_since is None else down_since
        timings['stop_s'] = _timed(ops, _systemctl, ops, 'stop', service)
    if steps['flip']:
        timings['flip_s'] = _timed(ops, flip_links, root, steps['target'], current)
    if action == 'restart':
        result['outage_started'] = ops.now() if result['active_before'] else None
        timings['start_s'] = _timed(ops, _systemctl, ops, 'restart', service)
    elif action in ('stop_start', 'start'):
        timings['start_s'] = _timed(ops, _systemctl, ops, 'start', service)


def _timed(ops, step, *args):
    """Run step(*args); the seconds it took."""
    start = ops.now()
    step(*args)
    return round(ops.now() - start, 3)

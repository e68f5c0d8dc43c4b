# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The switch's decisions and order of steps (plugins/module_utils/service_switch.py), on real links in a temp dir."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading

from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import service_switch


class FakeOps(object):
    """A host: systemctl calls recorded, the links read at each call, a clock that advances by what is slept
    and by each request's cost, health answers scripted per request."""

    def __init__(self, root, answers=(), active=True, request_cost=0.01, fail=None, command_answer=None):
        self.root = root
        self.command_answer = command_answer or (0, '{"checked": 40, "compiled": 2, "errors": [], "error_count": 0}\n', '')
        self.commands = []
        self.calls = []
        self.answers = list(answers)
        self.active = active
        self.clock = 100.0
        self.request_cost = request_cost
        self.fail = fail or {}
        self.requests = []

    def systemctl(self, args):
        link = os.readlink(os.path.join(self.root, 'current')) if os.path.islink(os.path.join(self.root, 'current')) else ''
        self.calls.append((args[0], os.path.basename(link)))
        if args[0] == 'is-active':
            return (0 if self.active else 3), ('active\n' if self.active else 'inactive\n'), ''
        if args[0] in self.fail:
            return self.fail[args[0]], '', 'Job for sglang.service failed.\n'
        self.clock += 0.05
        self.active = args[0] != 'stop'
        return 0, '', ''

    def command(self, argv):
        link = os.readlink(os.path.join(self.root, 'current')) if os.path.islink(os.path.join(self.root, 'current')) else ''
        self.calls.append(('command', os.path.basename(link)))
        self.commands.append(argv)
        self.clock += 0.5
        return self.command_answer

    def fetch(self, url, timeout):
        self.requests.append((round(self.clock, 3), timeout))
        self.clock += self.request_cost
        answer = self.answers.pop(0) if self.answers else (200, None)
        return answer

    def now(self):
        return self.clock

    def sleep(self, seconds):
        self.clock += seconds

    def journal_lines(self, unit):
        self.calls.append(('journal', unit))
        return ['%s: model load failed' % unit, 'Traceback (most recent call last):']


@pytest.fixture
def root(tmp_path):
    for name in ('a', 'b'):
        (tmp_path / 'stacks' / name).mkdir(parents=True)
    os.symlink(str(tmp_path / 'stacks' / 'a'), str(tmp_path / 'current'))
    return tmp_path


def link(root, name):
    return os.readlink(str(root / name))


def test_plan_forward_resume_and_noop():
    assert service_switch.plan('/s/a', '/s/b', {}) == {'current': '/s/a', 'target': '/s/b', 'before': '/s/a', 'flip': True, 'resumed': False}
    # The journal of a cut switch names the stack current already links: the stack that served is the journal's from.
    resumed = service_switch.plan('/s/b', '/s/b', {'from': '/s/a', 'to': '/s/b'})
    assert resumed == {'current': '/s/b', 'target': '/s/b', 'before': '/s/a', 'flip': False, 'resumed': True}
    # A journal about another target (cut before the flip) changes nothing: a plain switch from current.
    assert service_switch.plan('/s/a', '/s/b', {'from': '/s/a', 'to': '/s/b'})['resumed'] is False
    assert service_switch.plan('/s/a', '/s/c', {'from': '/s/x', 'to': '/s/a'})['before'] == '/s/a'
    assert service_switch.plan('/s/a', None, {})['flip'] is False
    assert service_switch.plan('', '/s/a', {}) == {'current': '', 'target': '/s/a', 'before': '', 'flip': True, 'resumed': False}


def test_switch_order_links_journal_and_downtime(root):
    ops = FakeOps(str(root), answers=[(0, 'Connection refused'), (503, 'Service Unavailable'), (200, None)])
    journal = str(root / '.switch-in-progress.json')
    result = service_switch.run(ops, str(root), str(root / 'stacks' / 'b'), service='sglang', health_url='http://127.0.0.1:30000/health_generate',
                                health_timeout=40, journal_path=journal)
    # Stopped while a served, started once b is current: the flip lies between them.
    assert ops.calls == [('is-active', 'a'), ('stop', 'a'), ('start', 'b')]
    assert link(root, 'current') == str(root / 'stacks' / 'b')
    assert link(root, 'previous') == str(root / 'stacks' / 'a')
    assert json.loads(open(journal).read()) == {'from': str(root / 'stacks' / 'a'), 'to': str(root / 'stacks' / 'b')}
    assert result['flipped'] and not result['resumed'] and result['changed']
    assert result['from'] == str(root / 'stacks' / 'a') and result['to'] == str(root / 'stacks' / 'b')
    assert result['service_action'] == 'stop_start'
    health = result['health']
    assert health['ok'] and health['attempts'] == 3 and health['status'] == 200
    # Polled every 0.2 s: two failed requests and the third answers.
    assert [at for at, _timeout in ops.requests] == [100.1, 100.31, 100.52]
    # From the stop (100.0) to the 200 (100.53): stop, flip, start and the gate, nothing else.
    assert result['downtime_s'] == pytest.approx(0.53)
    assert result['timings'] == {'compile_s': None, 'stop_s': 0.05, 'flip_s': 0.0, 'start_s': 0.05, 'gate_s': 0.43}
    assert result['bytecode'] is None
    assert not any(n.startswith('current.switch') for n in os.listdir(str(root)))


def test_health_gate_fails_with_last_answer_and_log_lines(root):
    ops = FakeOps(str(root), answers=[(503, 'Service Unavailable')] * 1000, request_cost=0.0)
    result = service_switch.run(ops, str(root), str(root / 'stacks' / 'b'), service='sglang', health_url='http://127.0.0.1:30000/health_generate',
                                health_timeout=2, health_interval=0.5)
    health = result['health']
    assert health['ok'] is False and health['status'] == 503
    # Requests at 0, 0.5, 1.0, 1.5 and 2.0 s after the first: none after the deadline.
    assert health['attempts'] == 5
    assert result['downtime_s'] is None
    assert ('journal', 'sglang') in ops.calls
    assert result['msg'].startswith('did not answer 200 on /health_generate within 2 s (last answer: 503 Service Unavailable; 5 requests, every 0.5 s)')
    assert 'serving stack %s' % (root / 'stacks' / 'b') in result['msg']
    assert result['msg'].endswith('sglang: model load failed | Traceback (most recent call last):')
    # The links stay flipped: flipping back is the caller's decision (a second call with the old stack as target).
    assert link(root, 'current') == str(root / 'stacks' / 'b')


def test_flip_back_is_the_same_call(root):
    ops = FakeOps(str(root), answers=[(503, 'x')] * 3, request_cost=0.0)
    target_b, target_a = str(root / 'stacks' / 'b'), str(root / 'stacks' / 'a')
    service_switch.run(ops, str(root), target_b, service='sglang', health_url='http://h/health_generate', health_timeout=0.4)
    back = service_switch.run(ops, str(root), target_a, service='sglang', health_url='http://h/health_generate', health_timeout=10)
    assert back['flipped'] and back['from'] == target_b and back['health']['ok']
    assert link(root, 'current') == target_a and link(root, 'previous') == target_b


def test_resumed_switch_restarts_and_names_the_journal_stack(root):
    os.unlink(str(root / 'current'))
    os.symlink(str(root / 'stacks' / 'b'), str(root / 'current'))
    journal = root / '.switch-in-progress.json'
    journal.write_text(json.dumps({'from': str(root / 'stacks' / 'a'), 'to': str(root / 'stacks' / 'b')}))
    ops = FakeOps(str(root), active=False)
    result = service_switch.run(ops, str(root), str(root / 'stacks' / 'b'), service='sglang', health_url='http://h/health_generate',
                                journal_path=str(journal))
    assert result['resumed'] and not result['flipped']
    assert result['from'] == str(root / 'stacks' / 'a')
    assert ops.calls == [('is-active', 'b'), ('restart', 'b')]
    # The service was down already (the cut run stopped it): this run measures no outage of its own.
    assert result['downtime_s'] is None and result['health']['ok']


def test_no_flip_starts_only_when_needed(root):
    ops = FakeOps(str(root), active=True)
    result = service_switch.run(ops, str(root), str(root / 'stacks' / 'a'), service='sglang', health_url='http://h/health_generate')
    assert ops.calls == [('is-active', 'a')]
    assert result['changed'] is False and result['service_action'] is None and result['health']['ok']
    ops = FakeOps(str(root), active=True)
    result = service_switch.run(ops, str(root), str(root / 'stacks' / 'a'), service='sglang', restart=True, health_url='http://h/health_generate')
    assert ops.calls == [('is-active', 'a'), ('restart', 'a')] and result['changed'] and result['downtime_s'] is not None
    ops = FakeOps(str(root), active=False)
    result = service_switch.run(ops, str(root), str(root / 'stacks' / 'a'), service='sglang')
    assert ops.calls == [('is-active', 'a'), ('start', 'a')] and result['health'] is None


def test_links_only_and_first_stack(tmp_path):
    (tmp_path / 'stacks' / 'a').mkdir(parents=True)
    ops = FakeOps(str(tmp_path))
    journal = str(tmp_path / '.switch-in-progress.json')
    result = service_switch.run(ops, str(tmp_path), str(tmp_path / 'stacks' / 'a'), journal_path=journal)
    assert ops.calls == [] and result['flipped'] and result['from'] == ''
    assert link(tmp_path, 'current') == str(tmp_path / 'stacks' / 'a')
    assert not os.path.lexists(str(tmp_path / 'previous'))
    # Nothing served before: no journal (there is nothing to go back to).
    assert not os.path.exists(journal)


def test_check_mode_changes_nothing_and_shows_the_diff(root):
    ops = FakeOps(str(root))
    journal = str(root / '.switch-in-progress.json')
    result = service_switch.run(ops, str(root), str(root / 'stacks' / 'b'), service='sglang', health_url='http://h/health_generate',
                                journal_path=journal, check_mode=True)
    assert result['changed'] and result['health'] is None
    assert ops.calls == [('is-active', 'a')]
    assert link(root, 'current') == str(root / 'stacks' / 'a') and not os.path.exists(journal)
    assert result['diff'] == {'before': 'current -> %s\nprevious -> (none)\n' % (root / 'stacks' / 'a'),
                              'after': 'current -> %s\nprevious -> %s\n' % (root / 'stacks' / 'b', root / 'stacks' / 'a')}


def test_systemctl_failure_names_the_step(root):
    ops = FakeOps(str(root), fail={'start': 1})
    with pytest.raises(service_switch.SwitchError) as exc:
        service_switch.run(ops, str(root), str(root / 'stacks' / 'b'), service='sglang')
    assert str(exc.value) == 'systemctl start sglang failed (rc 1): Job for sglang.service failed.'
    # The flip happened before the start: the caller's rollback finds current on b and flips back.
    assert link(root, 'current') == str(root / 'stacks' / 'b')


def test_request_timeout_bounded_by_the_deadline(root):
    ops = FakeOps(str(root), answers=[(0, 'timed out')], request_cost=0.0)
    service_switch.poll_health(ops, 'http://h/health_generate', timeout=5, interval=0.2)
    assert ops.requests[0][1] == 5
    ops = FakeOps(str(root), answers=[(0, 'timed out')], request_cost=0.0)
    service_switch.poll_health(ops, 'http://h/health_generate', timeout=1200, interval=0.2)
    assert ops.requests[0][1] == service_switch.MAX_REQUEST_TIMEOUT


def test_rollback_counts_the_whole_outage(root):
    ops = FakeOps(str(root), answers=[(503, 'x')] * 3 + [(200, None)], request_cost=0.0)
    target_b, target_a = str(root / 'stacks' / 'b'), str(root / 'stacks' / 'a')
    forward = service_switch.run(ops, str(root), target_b, service='sglang', health_url='http://h/health_generate', health_timeout=0.4)
    assert forward['outage_started'] == 100.0 and forward['downtime_s'] is None
    back = service_switch.run(ops, str(root), target_a, service='sglang', health_url='http://h/health_generate', health_timeout=10,
                              down_since=forward['outage_started'])
    # From the forward switch's stop to the old stack's 200: two stops and two starts (0.05 s each here) and the
    # failed gate's 0.4 s; not only the rollback's own 0.1 s.
    assert back['downtime_s'] == pytest.approx(ops.clock - 100.0) == pytest.approx(0.6)


def test_failed_step_carries_what_served_before(root):
    ops = FakeOps(str(root), fail={'start': 1})
    with pytest.raises(service_switch.SwitchError) as exc:
        service_switch.run(ops, str(root), str(root / 'stacks' / 'b'), service='sglang')
    assert exc.value.result['from'] == str(root / 'stacks' / 'a') and exc.value.result['outage_started'] == 100.0


def test_bytecode_compiled_before_anything_stops(root):
    ops = FakeOps(str(root))
    target = str(root / 'stacks' / 'b')
    result = service_switch.run(ops, str(root), target, service='sglang', health_url='http://h/health_generate',
                                compile_python=target + '/venv/bin/python')
    # While a still serves: the compile is not part of the outage (which starts at the stop, 100.5).
    assert ops.calls == [('is-active', 'a'), ('command', 'a'), ('stop', 'a'), ('start', 'b')]
    assert ops.commands[0][:2] == [target + '/venv/bin/python', '-c'] and ops.commands[0][3:] == [target]
    assert result['bytecode'] == {'python': target + '/venv/bin/python', 'ok': True, 'checked': 40, 'compiled': 2, 'errors': [],
                                  'error_count': 0, 'seconds': 0.5}
    assert result['timings']['compile_s'] == 0.5 and result['outage_started'] == 100.5
    assert result['downtime_s'] == pytest.approx(0.11)


def test_bytecode_not_compiled_without_a_start_or_in_check_mode(root):
    target_a = str(root / 'stacks' / 'a')
    ops = FakeOps(str(root), active=True)
    result = service_switch.run(ops, str(root), target_a, service='sglang', compile_python=target_a + '/venv/bin/python')
    assert ops.commands == [] and result['bytecode'] is None and result['timings']['compile_s'] is None
    ops = FakeOps(str(root))
    target_b = str(root / 'stacks' / 'b')
    service_switch.run(ops, str(root), target_b, service='sglang', compile_python=target_b + '/venv/bin/python', check_mode=True)
    assert ops.commands == []


def test_bytecode_failure_is_reported_not_raised(root):
    ops = FakeOps(str(root), command_answer=(127, '', 'exec: /s/b/venv/bin/python: not found\n'))
    target = str(root / 'stacks' / 'b')
    result = service_switch.run(ops, str(root), target, service='sglang', compile_python='/s/b/venv/bin/python')
    assert result['bytecode']['ok'] is False and result['bytecode']['compiled'] == 0
    assert result['bytecode']['errors'] == ['/s/b/venv/bin/python exited 127: exec: /s/b/venv/bin/python: not found']
    # The switch itself went on: the start on a stack that cannot run is the health gate's to find.
    assert ops.calls[-2:] == [('stop', 'a'), ('start', 'b')]


def _compile(target, env_path):
    env = dict(os.environ, PYTHONPATH=env_path)
    env.pop('PYTHONDONTWRITEBYTECODE', None)
    out = subprocess.run([sys.executable, '-c', service_switch.COMPILE_PROGRAM, target], env=env, capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_compile_program_compiles_missing_and_stale_bytecode_only(tmp_path):
    """The program run by a real interpreter on a stack-like tree: what the import system would compile, nothing else."""
    target = tmp_path / 'stacks' / 'b'
    site = target / 'venv' / 'lib' / 'site-packages'
    (site / 'pkg').mkdir(parents=True)
    (site / 'pkg' / '__init__.py').write_text('X = 1\n')
    (site / 'pkg' / 'patched.py').write_text('Y = 2\n')
    (site / 'pkg' / 'broken.py').write_text('def (:\n')
    # The patch series' originals: hidden, never compiled.
    (site / '.gpuops-patches' / 'orig').mkdir(parents=True)
    (site / '.gpuops-patches' / 'orig' / 'patched.py').write_text('Y = 1\n')
    # A path outside the target on sys.path is not the target's to compile.
    (tmp_path / 'other').mkdir()
    (tmp_path / 'other' / 'elsewhere.py').write_text('Z = 3\n')
    first = _compile(str(target), os.pathsep.join([str(site), str(tmp_path / 'other')]))
    assert first['checked'] == 3 and first['compiled'] == 2 and first['error_count'] == 1
    assert first['errors'][0].startswith(str(site / 'pkg' / 'broken.py') + ': ')
    assert os.path.exists(importlib.util.cache_from_source(str(site / 'pkg' / 'patched.py')))
    assert not os.path.exists(importlib.util.cache_from_source(str(site / '.gpuops-patches' / 'orig' / 'patched.py')))
    assert not os.path.exists(importlib.util.cache_from_source(str(tmp_path / 'other' / 'elsewhere.py')))
    # Fresh bytecode is left alone; a patched source (new size and mtime) makes it stale and it is compiled again.
    assert _compile(str(target), str(site))['compiled'] == 0
    (site / 'pkg' / 'patched.py').write_text('Y = 22  # patched\n')
    os.utime(str(site / 'pkg' / 'patched.py'), (1, 1))
    again = _compile(str(target), str(site))
    assert again['compiled'] == 1 and again['error_count'] == 1
    # What it wrote is what the import system accepts: the same header an import would write.
    cache = importlib.util.cache_from_source(str(site / 'pkg' / 'patched.py'))
    with open(cache, 'rb') as handle:
        head = handle.read(16)
    assert head[:4] == importlib.util.MAGIC_NUMBER and int.from_bytes(head[8:12], 'little') == 1
    assert int.from_bytes(head[12:16], 'little') == len('Y = 22  # patched\n')


@pytest.fixture
def http_server():
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the http.server name)
            code = {'/health_generate': 200, '/loading': 503, '/moved': 302}.get(self.path.split('?')[0], 404)
            self.send_response(code)
            if code == 302:
                self.send_header('Location', '/health_generate')
            self.send_header('Content-Length', '2')
            self.end_headers()
            self.wfile.write(b'{}')

        def log_message(self, *args):
            pass

    httpd = HTTPServer(('127.0.0.1', 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield 'http://127.0.0.1:%d' % httpd.server_port
    httpd.shutdown()
    httpd.server_close()


def test_fetch_http_status_reason_and_no_redirect(http_server):
    assert service_switch.fetch_http(http_server + '/health_generate', 5) == (200, None)
    assert service_switch.fetch_http(http_server + '/health_generate?x=1', 5) == (200, None)
    assert service_switch.fetch_http(http_server + '/loading', 5) == (503, 'Service Unavailable')
    # A redirect is an answer other than 200, not followed.
    assert service_switch.fetch_http(http_server + '/moved', 5) == (302, 'Found')


def test_fetch_http_connection_refused():
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()
    status, error = service_switch.fetch_http('http://127.0.0.1:%d/health_generate' % port, 2)
    assert status == 0 and 'refused' in error.lower()

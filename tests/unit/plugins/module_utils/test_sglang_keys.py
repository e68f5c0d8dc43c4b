# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The API-key plumbing: the benchmark runner (module_utils/sglang_keys.py) and the key launcher
(roles/sglang_service/files/sglang_keys_launch.py), against sglang 0.5.9's real auth rules and log line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import sglang_keys as sk
from ansible_collections.gpuops.sglang_stack.tests.unit.recorded import FIXTURES

SRT = os.path.join(FIXTURES, 'sglang-0.5.9', 'sglang', 'srt')
LAUNCHER = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'roles', 'sglang_service',
                                        'files', 'sglang_keys_launch.py'))
KEY = 'sk-test-3f9a1c0b7e'


def _line(path, number):
    with open(path) as handle:
        return handle.read().splitlines()[number - 1].strip()


def test_the_cited_sglang_lines_are_the_real_ones():
    # /health* is open with a key set (so the health gate needs none); the start-up log prints server_args whole.
    assert _line(os.path.join(SRT, 'utils', 'auth.py.orig'), 100) == 'if path.startswith("/health") or path.startswith("/metrics"):'
    assert _line(os.path.join(SRT, 'entrypoints', 'engine.py.orig'), 1031) == 'logger.info(f"{server_args=}")'
    with open(os.path.join(SRT, 'server_args.py.orig')) as handle:
        text = handle.read()
    assert '"--api-key",' in text and '"--admin-api-key",' in text


def test_run_as_argv_gives_exactly_the_environment():
    argv = sk.run_as_argv('sglang', {'PATH': '/v/bin:/usr/bin', 'HOME': '/var/lib/sglang'})
    assert argv == ['runuser', '-u', 'sglang', '--', 'env', '-i', 'HOME=/var/lib/sglang', 'PATH=/v/bin:/usr/bin']


@pytest.mark.parametrize('user, env', [
    ('-froot', {}), ('', {}), ('sglang', {'A B': '1'}), ('sglang', {'LD_PRELOAD\nX': '1'}),
    ('sglang', {'X': 'a\nLD_PRELOAD=/tmp/x.so'}),
])
def test_run_as_argv_refuses(user, env):
    with pytest.raises(sk.KeysError):
        sk.run_as_argv(user, env)


class _Auth(BaseHTTPRequestHandler):
    seen = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.seen.append(self.headers.get('Authorization'))
        code = 200 if self.headers.get('Authorization') == 'Bearer ' + KEY else 401
        body = json.dumps({'code': code}).encode()
        self.send_response(code)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server():
    httpd = HTTPServer(('127.0.0.1', 0), _Auth)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Auth.seen = []
    yield 'http://127.0.0.1:%d' % httpd.server_address[1]
    httpd.shutdown()


def _fake_bench(tmp_path):
    # What the benchmark does: requests (the real one) and urllib (the test bed's stand-in), no headers of its own.
    (tmp_path / 'fakebench.py').write_text(
        'import sys, urllib.request\n'
        'url = sys.argv[sys.argv.index("--base-url") + 1]\n'
        'print("argv", sys.argv[1:])\n'
        'print("urllib", urllib.request.urlopen(url + "/get_server_info").status)\n'
        'try:\n'
        '    import requests\n'
        'except ImportError:\n'
        '    requests = None\n'
        'if requests is not None:\n'
        '    print("requests", requests.get(url + "/flush_cache").status_code)\n')
    return dict(os.environ, PYTHONPATH=str(tmp_path))


def test_runner_authenticates_urllib_and_requests(tmp_path, server):
    env = _fake_bench(tmp_path)
    out = subprocess.run([sys.executable, '-c', sk.BENCH_RUNNER, 'fakebench', '--base-url', server],
                         input=KEY + '\n', env=env, capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert 'urllib 200' in out.stdout
    assert "argv ['--base-url', '%s']" % server in out.stdout  # the module sees only its own options
    assert all(seen == 'Bearer ' + KEY for seen in _Auth.seen)


def test_runner_without_a_key_sends_no_header(tmp_path, server):
    env = _fake_bench(tmp_path)
    out = subprocess.run([sys.executable, '-c', sk.BENCH_RUNNER, 'fakebench', '--base-url', server],
                         input='\n', env=env, capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode != 0 and 'HTTP Error 401' in out.stderr
    assert _Auth.seen == [None]


def _fake_server_module(tmp_path):
    # sglang 0.5.9's start-up: argparse options into a dataclass, then logger.info(f"{server_args=}") (engine.py:1031).
    (tmp_path / 'fakeserver.py').write_text(
        'import dataclasses, logging, os, sys\n'
        'logging.basicConfig(level=logging.INFO, force=True)\n'
        '@dataclasses.dataclass\n'
        'class ServerArgs:\n'
        '    argv: list\n'
        '    api_key: str = None\n'
        'args = sys.argv[1:]\n'
        'server_args = ServerArgs(args, args[args.index("--api-key") + 1] if "--api-key" in args else None)\n'
        'logging.getLogger("sglang.srt.entrypoints.engine").info(f"{server_args=}")\n'
        'logging.getLogger("x").warning("key %s in args", server_args.api_key)\n'
        'print("cmdline", open("/proc/self/cmdline").read().replace("\\0", " "))\n'
        'print("env", os.environ.get("GPUOPS_SGLANG_API_KEY"), os.environ.get("GPUOPS_SGLANG_ADMIN_API_KEY"))\n'
        'print("has key", server_args.api_key == os.environ.get("EXPECT"))\n')
    return dict(os.environ, PYTHONPATH=str(tmp_path), EXPECT=KEY)


def test_launcher_passes_the_key_inside_the_process_and_redacts_the_log(tmp_path):
    env = _fake_server_module(tmp_path)
    env.update(GPUOPS_SGLANG_API_KEY=KEY, GPUOPS_SGLANG_ADMIN_API_KEY='admin-' + KEY)
    out = subprocess.run([sys.executable, LAUNCHER, 'fakeserver', '--model-path', '/m'], env=env,
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert 'has key True' in out.stdout
    assert 'env None None' in out.stdout  # taken out of the environment
    assert KEY not in out.stdout.split('has key')[0]  # not in /proc/self/cmdline
    assert KEY not in out.stderr and "api_key='<redacted>'" in out.stderr and 'key <redacted> in args' in out.stderr


def test_launcher_without_keys_adds_nothing(tmp_path):
    env = _fake_server_module(tmp_path)
    env.pop('GPUOPS_SGLANG_API_KEY', None)
    out = subprocess.run([sys.executable, LAUNCHER, 'fakeserver', '--model-path', '/m'], env=env,
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert 'api_key=None' in out.stderr and '--api-key' not in out.stdout

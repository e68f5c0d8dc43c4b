# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The service_switch module in-process: links only, and the health gate against a real HTTP server that
answers 503 (loading) before 200, as SGLang's /health_generate does."""

from __future__ import annotations

import os
import threading

from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.modules import service_switch
from ansible_collections.gpuops.sglang_stack.tests.unit import module_runner


@pytest.fixture
def server():
    answers = {'503': 3, 'seen': []}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the http.server name)
            answers['seen'].append(self.path)
            code = 503 if answers['503'] > 0 else 200
            answers['503'] -= 1
            self.send_response(code)
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = HTTPServer(('127.0.0.1', 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield 'http://127.0.0.1:%d/health_generate' % httpd.server_port, answers
    httpd.shutdown()


def test_links_only_with_diff(capsys, tmp_path):
    for name in ('a', 'b'):
        (tmp_path / 'stacks' / name).mkdir(parents=True)
    os.symlink(str(tmp_path / 'stacks' / 'a'), str(tmp_path / 'current'))
    args = {'root': str(tmp_path), 'target': str(tmp_path / 'stacks' / 'b'), '_ansible_diff': True,
            'journal_path': str(tmp_path / '.switch-in-progress.json')}
    failed, result = module_runner.run_module(capsys, service_switch, args)
    assert failed is False and result['changed'] and result['flipped']
    assert os.readlink(str(tmp_path / 'current')) == str(tmp_path / 'stacks' / 'b')
    assert result['diff']['after'].startswith('current -> %s\n' % (tmp_path / 'stacks' / 'b'))
    assert os.path.exists(str(tmp_path / '.switch-in-progress.json'))
    failed, again = module_runner.run_module(capsys, service_switch, args)
    assert failed is False and again['changed'] is False and again['flipped'] is False


def test_health_gate_polls_until_200(capsys, server):
    url, answers = server
    failed, result = module_runner.run_module(capsys, service_switch, {'health_url': url, 'health_timeout': 10, 'health_interval': 0.05})
    assert failed is False
    assert result['health']['ok'] and result['health']['attempts'] == 4 and len(answers['seen']) == 4
    assert result['health']['seconds'] < 5


def test_health_gate_gives_up_at_the_deadline(capsys, server):
    url, answers = server
    answers['503'] = 10 ** 6
    failed, result = module_runner.run_module(capsys, service_switch, {'health_url': url, 'health_timeout': 0.5, 'health_interval': 0.1})
    assert failed is False and result['health']['ok'] is False and result['health']['status'] == 503
    assert result['msg'].startswith('did not answer 200 on /health_generate within 0.5 s (last answer: 503')


def test_bad_timing_refused(capsys):
    failed, result = module_runner.run_module(capsys, service_switch, {'health_url': 'http://x', 'health_interval': 0})
    assert failed is True and 'must be above 0' in result['msg']

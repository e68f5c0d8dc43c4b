# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The SGLang stand-in of the test containers (molecule/resources/sglang_standin) against the collection.

The stand-in server runs as a subprocess with stub torch / sgl_kernel / sglang modules; its health
endpoint must behave as SGLang's (503 while loading, then 200), its start-up must fail where SGLang's
does, and what its benchmark prints and records must be read by plugins/module_utils/sglang_bench.py.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import sglang_bench as sb

HERE = os.path.dirname(os.path.abspath(__file__))
STANDIN = os.path.abspath(os.path.join(HERE, '..', '..', 'molecule', 'resources', 'sglang_standin'))

# The built collection leaves molecule/ out; scripts/test-all.sh runs this file from the source tree.
if not os.path.isdir(STANDIN):
    pytest.skip('the SGLang stand-in (molecule/resources/sglang_standin) is not in this tree', allow_module_level=True)


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


@pytest.fixture
def bed(tmp_path):
    stubs = tmp_path / 'stubs'
    stubs.mkdir()
    (stubs / 'torch.py').write_text('__version__ = "2.11.0.dev20251231+cu130"\n')
    (stubs / 'sgl_kernel.py').write_text('')
    (stubs / 'sglang.py').write_text('__version__ = "0.5.9"\n')
    dev = tmp_path / 'dev'
    dev.mkdir()
    for i in range(8):
        (dev / ('nvidia%d' % i)).write_text('')
    (dev / 'nvidiactl').write_text('')
    model = tmp_path / 'model'
    model.mkdir()
    (model / 'config.json').write_text('{}')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([STANDIN, str(stubs)]), STANDIN_DEV_DIR=str(dev),
               STANDIN_LOAD_SECONDS='1', STANDIN_BASE_TOK_S='91.0', STANDIN_NOISE='0')
    return {'tmp': tmp_path, 'stubs': stubs, 'model': str(model), 'env': env}


def start(bed, *extra, **env):
    port = free_port()
    proc = subprocess.Popen([sys.executable, '-m', 'sglang_standin.launch_server', '--model-path', bed['model'],
                             '--tp-size', '8', '--port', str(port)] + list(extra),
                            env=dict(bed['env'], **env), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, 'http://127.0.0.1:%d' % port


def status(url):
    try:
        return urllib.request.urlopen(url, timeout=5).status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, ConnectionError):
        return None


def wait_status(url, want, seconds=15):
    deadline = time.time() + seconds
    seen = []
    while time.time() < deadline:
        seen.append(status(url))
        if seen[-1] == want:
            return seen
        time.sleep(0.2)
    raise AssertionError('never %s: %s' % (want, seen[-5:]))


def stop(proc):
    proc.terminate()
    try:
        return proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


def bench(bed, url, tmp_name, *extra):
    result = bed['tmp'] / tmp_name
    out = subprocess.run([sys.executable, '-m', 'sglang_standin.bench_one_batch_server', '--model', 'None', '--base-url', url,
                          '--batch-size', '1', '--input-len', '256', '--output-len', '32', '--result-filename', str(result)]
                         + list(extra), env=bed['env'], capture_output=True, text=True, timeout=60, check=True)
    return out.stdout, result.read_text()


def test_health_is_503_while_loading_then_200(bed):
    proc, url = start(bed)
    try:
        seen = wait_status(url + '/health_generate', 200)
        assert 503 in seen  # SGLang answers 503 while it starts
        info = json.loads(urllib.request.urlopen(url + '/get_server_info').read())
        assert info['tp_size'] == 8 and info['internal_states'][0]['last_gen_throughput'] is None
    finally:
        err = stop(proc)[1]
    # patch 0003's line, from the collection's rules: 8 PCIe-only SM120 GPUs decode on NCCL.
    assert (b'[AR] group tp:0 rank 0/8: decode all-reduce path: NCCL (custom AR off; mscclpp off; torch symm-mem off); '
            b'NCCL env: NCCL_CUMEM_ENABLE=0 NCCL_NVLS_ENABLE=0') in err
    assert err.count(b'[AR] group tp:0 rank ') == 8 and err.count(b'[AR] group world:0 rank ') == 8


def test_benchmark_output_reads_like_sglang(bed):
    # SGLANG_CUSTOM_AR_ALLOW_PCIE no longer changes anything (no patch reads it): the base rate.
    proc, url = start(bed, SGLANG_CUSTOM_AR_ALLOW_PCIE='1')
    try:
        wait_status(url + '/health_generate', 200)
        out, recorded = bench(bed, url, 'r.jsonl')
    finally:
        stop(proc)
    printed = sb.pick_case(sb.parse_stdout(out), 1)
    stored = sb.pick_case(sb.parse_result_jsonl(recorded), 1)
    assert printed['last_gen_throughput'] == stored['last_gen_throughput'] == 91.0
    assert sb.tokens_per_second(stored) == (91.0, 'last_gen_throughput')
    assert 'acc_length' not in printed


def rates(bed, extra, env, count=3):
    proc, url = start(bed, *extra, **env)
    try:
        wait_status(url + '/health_generate', 200)
        found = [sb.pick_case(sb.parse_stdout(bench(bed, url, 'n%d.jsonl' % i)[0]))['last_gen_throughput']
                 for i in range(count)]
    finally:
        err = stop(proc)[1]
    return found, err


def test_rates_follow_the_settings_with_reproducible_noise(bed):
    noisy = {'STANDIN_NOISE': '0.005'}
    base, _err = rates(bed, [], noisy)
    again, _err = rates(bed, [], noisy)
    assert base == again  # same settings, same figures
    assert len(set(base)) > 1 and all(abs(r - 91.0) <= 91.0 * 0.005 + 0.01 for r in base)
    tree, err = rates(bed, [], dict(noisy, NCCL_ALGO='Tree'))
    assert all(abs(r - 91.0 * 1.06) <= 91.0 * 1.06 * 0.005 + 0.01 for r in tree)
    assert b'NCCL env: NCCL_ALGO=Tree NCCL_CUMEM_ENABLE=0 NCCL_NVLS_ENABLE=0' in err
    few, _err = rates(bed, [], dict(noisy, NCCL_MIN_NCHANNELS='4', NCCL_MAX_NCHANNELS='4'))
    assert max(few) < min(base) + 91.0 * 0.01
    ep, err = rates(bed, ['--ep-size', '8'], noisy)
    assert ep != base and all(abs(r - 91.0) <= 91.0 * 0.005 + 0.01 for r in ep)


def test_allreduce_line_follows_the_launch_options(bed):
    # --enable-symm-mem sends every all-reduce to pynccl (parallel_state.py:584); NCCL_CUMEM_ENABLE is then not forced.
    _rates, err = rates(bed, ['--enable-symm-mem'], {}, count=1)
    assert b'[AR] group tp:0 rank 0/8: decode all-reduce path: pynccl symm-mem' in err
    assert b'NCCL_CUMEM_ENABLE' not in err
    # Two GPUs: custom AR is chosen for world size 2 (custom_all_reduce.py:340-343).
    port = free_port()
    proc = subprocess.Popen([sys.executable, '-m', 'sglang_standin.launch_server', '--model-path', bed['model'],
                             '--tp-size', '2', '--port', str(port)], env=bed['env'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_status('http://127.0.0.1:%d/health_generate' % port, 200)
    finally:
        err = stop(proc)[1]
    assert b'[AR] group tp:0 rank 1/2: decode all-reduce path: custom AR (custom AR for world size 2)' in err


def test_eagle3_reports_acceptance_length(bed):
    draft = bed['tmp'] / 'draft'
    draft.mkdir()
    (draft / 'config.json').write_text('{}')
    proc, url = start(bed, '--speculative-algorithm', 'EAGLE3', '--speculative-draft-model-path', str(draft))
    try:
        wait_status(url + '/health_generate', 200)
        out = bench(bed, url, 'e.jsonl')[0]
    finally:
        stop(proc)
    case = sb.pick_case(sb.parse_stdout(out))
    assert case['acc_length'] == 2.4 and case['last_gen_throughput'] == round(91.0 * 2.4 * 0.75, 2)


@pytest.mark.parametrize('change, text', [
    ('no_config', b'no config.json'),
    ('few_gpus', b'tp_size 8 needs 8 GPUs; 2 visible'),
    ('bad_kernel', b'undefined symbol'),
])
def test_start_up_fails_where_sglang_does(bed, change, text):
    if change == 'no_config':
        os.unlink(os.path.join(bed['model'], 'config.json'))
    elif change == 'few_gpus':
        for i in range(2, 8):
            os.unlink(os.path.join(bed['env']['STANDIN_DEV_DIR'], 'nvidia%d' % i))
    else:
        (bed['stubs'] / 'sgl_kernel.py').write_text(
            'raise ImportError("sgl_kernel/common_ops.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEab")\n')
    proc = start(bed)[0]
    err = proc.communicate(timeout=20)[1]
    assert proc.returncode != 0 and text in err


def test_stack_fault_file_keeps_health_at_503(bed, tmp_path):
    # The fault file sits beside the interpreter's prefix: <stack>/standin-faults.json for <stack>/venv.
    stack = tmp_path / 'stack'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(stack / 'venv')], check=True)
    (stack / 'standin-faults.json').write_text('{"health_status": 503}')
    port = free_port()
    proc = subprocess.Popen([str(stack / 'venv' / 'bin' / 'python'), '-m', 'sglang_standin.launch_server', '--model-path',
                             bed['model'], '--tp-size', '8', '--port', str(port)], env=bed['env'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(2.5)
        assert status('http://127.0.0.1:%d/health_generate' % port) == 503
    finally:
        stop(proc)


LAUNCHER = os.path.abspath(os.path.join(HERE, '..', '..', 'roles', 'sglang_service', 'files', 'sglang_keys_launch.py'))


def test_api_key_through_the_launcher_and_the_gate_runner(bed):
    # The unit's way: the key launcher takes the key from the environment; the health gate needs none
    # (sglang 0.5.9 auth.py:100); the throughput gate's runner authenticates from its standard input.
    from ansible_collections.gpuops.sglang_stack.plugins.module_utils import sglang_keys
    key = 'sk-standin-5a7d'
    port = free_port()
    proc = subprocess.Popen([sys.executable, LAUNCHER, 'sglang_standin.launch_server', '--model-path', bed['model'],
                             '--tp-size', '8', '--port', str(port)],
                            env=dict(bed['env'], GPUOPS_SGLANG_API_KEY=key), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = 'http://127.0.0.1:%d' % port
    try:
        wait_status(url + '/health_generate', 200)
        assert status(url + '/get_server_info') == 401
        with open('/proc/%d/cmdline' % proc.pid, 'rb') as handle:
            assert key.encode() not in handle.read()
        result = bed['tmp'] / 'k.jsonl'
        runner = [sys.executable, '-c', sglang_keys.BENCH_RUNNER, 'sglang_standin.bench_one_batch_server', '--model', 'None',
                  '--base-url', url, '--batch-size', '1', '--input-len', '16', '--output-len', '8',
                  '--result-filename', str(result)]
        refused = subprocess.run(runner, input='\n', env=bed['env'], capture_output=True, text=True, timeout=60, check=False)
        assert refused.returncode != 0 and 'HTTP Error 401' in refused.stderr
        done = subprocess.run(runner, input=key + '\n', env=bed['env'], capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert sb.pick_case(sb.parse_result_jsonl(result.read_text()), 1)['last_gen_throughput'] == 91.0
    finally:
        err = stop(proc)[1]
    assert key.encode() not in err and b"'api_key': '<redacted>'" in err

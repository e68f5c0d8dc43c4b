# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The stack lock (module_utils/stack_lock) and the locked-wheel pipeline (module_utils/wheel_fetch).

The fixtures are real uv output: ``uv pip compile --format pylock.toml --python-version 3.12 --python-platform
x86_64-manylinux_2_28 --only-binary :all:`` (uv 0.13.9) of torch 2.11.0, torchvision 0.26.0, flashinfer-python 0.6.4
and the collection's sglang requirement list, against PyPI (pylock.pypi-cp312.toml, 165 packages), and of torch and
torchvision alone pinned to that resolution (pylock.pypi-cp312-torch-layer.toml), as the lock step runs them.
"""

from __future__ import annotations

import copy
import hashlib
import io
import os

import pytest
import yaml

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_declaration as sd
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_lock as sl
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import wheel_fetch as wf

HERE = os.path.dirname(__file__)
DEFAULTS = os.path.join(HERE, '..', '..', '..', '..', 'roles', 'stack_declaration', 'defaults', 'main.yml')
FIXTURES = os.path.join(HERE, '..', '..', 'fixtures', 'stack_lock')


def read(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


@pytest.fixture
def resolved():
    """The shipped declaration with PyPI's torch 2.11.0 / torchvision 0.26.0 (the cu130 builds the fixtures resolved)."""
    with open(DEFAULTS) as handle:
        defaults = yaml.safe_load(handle)
    decl = dict((key[len('stack_declaration_'):], value) for key, value in defaults.items())
    torch_layer = decl['layers'][0]
    for pkg, version, filename in ((torch_layer['packages'][0], '2.11.0', 'torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl'),
                                   (torch_layer['packages'][1], '0.26.0', 'torchvision-0.26.0-cp312-cp312-manylinux_2_28_x86_64.whl')):
        pkg.update(version=version, filename=filename, upstream='pypi', index_path='simple', cuda='13.0', sha256=None)
        pkg.pop('version_policy', None)
    return sd.resolve(decl)


def make_lock(resolved):
    """What stack_lock.make_lock assembles from the two recorded resolutions (the direct packages hashed as declared,
    flashinfer-jit-cache as the lock step computes it)."""
    final = sl.parse_pylock(read('pylock.pypi-cp312.toml'))
    torch_names = set(sl.normalize_name(d['name']) for d in sl.parse_pylock(read('pylock.pypi-cp312-torch-layer.toml')))
    everything = set(sl.normalize_name(d['name']) for d in final)
    names = [layer['name'] for layer in resolved['layers']]
    per_layer = sl.assign_layers(names, [torch_names, everything, everything, everything], final)
    for pkg in resolved['packages']:
        if pkg['dependencies'] != 'resolve':
            per_layer[pkg['layer']].append({'name': pkg['name'], 'version': pkg['version'], 'filename': pkg['filename'],
                                            'url': pkg['url'] or '%s/%s/%s' % (pkg['index_url'], pkg['name'], pkg['filename']),
                                            'sha256': pkg['sha256'] or hashlib.sha256(pkg['filename'].encode()).hexdigest(),
                                            'size': None})
    return sl.build_lock(resolved, per_layer, {'tool': 'uv', 'version': 'uv 0.13.9'})


def test_parse_pylock_reads_every_wheel_of_the_real_resolution():
    dists = sl.parse_pylock(read('pylock.pypi-cp312.toml'))
    assert len(dists) == 165
    assert all(len(d['sha256']) == 64 for d in dists)
    torch = [d for d in dists if d['name'] == 'torch'][0]
    assert torch['filename'] == 'torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl'
    assert torch['url'].startswith('https://files.pythonhosted.org/packages/')
    # One distribution, one version: the joint resolution gives cuda-bindings and nvidia-cutlass-dsl once.
    assert len([d for d in dists if d['name'] == 'cuda-bindings']) == 1
    assert len([d for d in dists if d['name'] == 'nvidia-cutlass-dsl']) == 1
    # uv lists every wheel the platform accepts; the lock takes the one pip would install: the most specific.
    chosen = dict((d['name'], d['filename']) for d in dists)
    assert chosen['cryptography'] == 'cryptography-50.0.2-cp311-abi3-manylinux_2_28_x86_64.whl'
    assert chosen['aiohttp'] == 'aiohttp-3.14.5-cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl'
    assert chosen['lxml'] == 'lxml-6.2.0-cp312-cp312-manylinux_2_26_x86_64.manylinux_2_28_x86_64.whl'
    assert chosen['multiprocess'] == 'multiprocess-0.70.15-py311-none-any.whl'
    assert chosen['soundfile'] == 'soundfile-0.13.1-py2.py3-none-manylinux_2_28_x86_64.whl'


def test_the_chosen_wheel_is_the_one_pip_prefers():
    names = ['x-1-py3-none-any.whl', 'x-1-cp39-abi3-manylinux2014_x86_64.whl', 'x-1-cp312-cp312-manylinux_2_34_x86_64.whl']
    assert sl.best_wheel(names, 'cp312', 'x86_64-manylinux_2_28') == 'x-1-cp39-abi3-manylinux2014_x86_64.whl'
    assert sl.best_wheel(names, 'cp312', 'x86_64-manylinux_2_36') == 'x-1-cp312-cp312-manylinux_2_34_x86_64.whl'
    assert sl.best_wheel(['x-1-cp313-cp313-manylinux_2_28_x86_64.whl'], 'cp312', 'x86_64-manylinux_2_28') is None


def test_parse_pylock_refuses_a_package_without_a_wheel_and_takes_the_installable_one():
    text = '''lock-version = "1.0"
[[packages]]
name = "outlines-core"
version = "0.1.26"
sdist = { url = "https://example.org/outlines_core-0.1.26.tar.gz", hashes = { sha256 = "%s" } }

[[packages]]
name = "tqdm"
version = "4.70.1"
wheels = [{ url = "https://example.org/a/tqdm-4.70.1-py3-none-any.whl" }, { url = "https://example.org/b/tqdm-4.70.1-py2-none-any.whl" }]
''' % ('0' * 64)
    with pytest.raises(sl.StackLockError) as err:
        sl.parse_pylock(text)
    assert 'outlines-core 0.1.26: no wheel for cp312 on x86_64-manylinux_2_28 in the resolution (only a source distribution)' in str(err.value)
    assert 'tqdm' not in str(err.value)
    head, dummy, tqdm = text.split('[[packages]]')
    assert sl.parse_pylock(head + '[[packages]]' + tqdm)[0]['filename'] == 'tqdm-4.70.1-py3-none-any.whl'


def test_layers_take_each_distribution_where_it_is_first_needed(resolved):
    lock = make_lock(resolved)
    torch_layer = dict((d['name'], d) for d in sl.layer_distributions(lock, 'torch'))
    assert len(torch_layer) == 32
    assert {'torch', 'torchvision', 'nvidia-nccl-cu13', 'triton'} <= set(torch_layer)
    assert torch_layer['torch'].get('declared') is True
    flashinfer = [d['name'] for d in sl.layer_distributions(lock, 'flashinfer')]
    assert 'flashinfer-python' in flashinfer and 'flashinfer-cubin' in flashinfer and 'torch' not in flashinfer
    assert [d['name'] for d in sl.layer_distributions(lock, 'sgl_kernel')] == ['sgl-kernel']
    assert sl.count(lock) == (165 + 4, 165 + 4)


def test_a_lock_of_the_declaration_is_taken_and_names_the_stack(resolved):
    lock = make_lock(resolved)
    assert sl.lock_problems(lock, resolved) == []
    decl = copy.deepcopy(resolved)
    again = sd.resolve(decl, lock=lock)
    assert again['lock']['digest'] == lock['digest']
    assert again['id'] == 'cu130-sglang-0.5.9-%s' % lock['digest'][:12] != resolved['id']
    # The rendered file reads back to the same lock.
    assert sl.lock_problems(sl.json.loads(sl.render(lock)), resolved) == []


def test_the_guard_of_each_layer_holds_its_layers_so_far_and_the_last_the_whole_lock(resolved):
    lock = make_lock(resolved)
    locked = sd.resolve(copy.deepcopy(resolved), lock=lock)
    names = [layer['name'] for layer in locked['layers']]
    seen = []
    for index, name in enumerate(names):
        guard = sl.guarded_through(locked, name)
        keys = [sl.normalize_name(entry['name']) for entry in guard]
        assert len(keys) == len(set(keys)), name
        # Exactly the declared packages of the layers so far, then the other distributions their lock layers install.
        declared = [pkg['name'] for pkg in locked['packages'] if pkg['layer'] in names[:index + 1]]
        assert [entry['name'] for entry in guard[:len(declared)]] == declared
        assert all('layer' in entry for entry in guard[:len(declared)])
        others = [dist['name'] for layer in locked['lock']['layers'][:index + 1] for dist in layer['distributions']
                  if not dist.get('declared')]
        assert [entry['name'] for entry in guard[len(declared):]] == others
        assert set(seen) <= set(keys)
        seen = keys
    # The whole stack: every locked distribution, each once.
    whole = sl.guarded_through(locked)
    assert whole == sl.guarded_through(locked, names[-1])
    assert len(whole) == sl.count(lock)[0]
    with pytest.raises(ValueError):
        sl.guarded_through(locked, 'no-such-layer')


def test_an_added_requirement_refuses_the_old_lock_and_makes_a_new_stack(resolved):
    lock = make_lock(resolved)
    plus = copy.deepcopy(resolved)
    plus['layers'][-1]['requirements'].append('tabulate')
    problems = sl.lock_problems(lock, plus)
    assert len(problems) == 1 and 'layer sglang: requirement "tabulate" added' in problems[0]
    with pytest.raises(sd.StackDeclarationError) as err:
        sd.resolve(copy.deepcopy(plus), lock=lock)
    assert 'STACK LOCK refused' in str(err.value)
    # tabulate is already in the closure (flashinfer pulls it): same distributions, still another stack.
    assert make_lock(plus)['digest'] != lock['digest']


def test_a_lock_without_a_hash_is_refused_naming_the_distribution(resolved):
    lock = make_lock(resolved)
    for dist in lock['layers'][0]['distributions']:
        if dist['name'] == 'torch':
            dist['sha256'] = None
    lock['digest'] = sl.lock_digest(lock)
    problems = sl.lock_problems(lock, resolved)
    assert problems == ['layer torch, torch 2.11.0: no sha256 in the lock (None); every locked file needs one']


def test_a_declared_package_locked_otherwise_and_a_hand_edit_are_refused(resolved):
    lock = make_lock(resolved)
    edited = copy.deepcopy(lock)
    for dist in edited['layers'][1]['distributions']:
        if dist['name'] == 'flashinfer-cubin':
            dist['sha256'] = 'f' * 64
    problems = sl.lock_problems(edited, resolved)
    assert any('declared package flashinfer-cubin: locked sha256 %s, declared 6dd03b97' % ('f' * 64) in p for p in problems)
    moved = copy.deepcopy(lock)
    for dist in [d for layer in moved['layers'] for d in layer['distributions']]:
        if dist['name'] == 'tqdm':
            dist['version'] = '4.0.0'
    assert sl.lock_problems(moved, resolved) == [
        'the lock\'s digest %s does not match its content (%s): it was edited by hand; make it again' % (lock['digest'], sl.lock_digest(moved))]


def test_another_python_or_platform_refuses_the_lock(resolved):
    lock = make_lock(resolved)
    other = copy.deepcopy(resolved)
    other['python'] = dict(other['python'], platform='x86_64-manylinux_2_36')
    assert 'platform: locked "x86_64-manylinux_2_28", declared "x86_64-manylinux_2_36"' in sl.lock_problems(lock, other)[0]


def test_a_nightly_spec_takes_the_locked_builds_and_their_rules(resolved):
    """torch and torchvision declared as nightly specs: the lock records the builds; resolving with it puts them in the
    declaration, and the exact rules (torchvision the build of that torch) hold again on them."""
    lock = make_lock(resolved)
    spec = copy.deepcopy(resolved)
    for pkg, version in ((spec['packages'][0], '2.11.0.dev*+cu130'), (spec['packages'][1], '0.26.0.dev*+cu130')):
        pkg.update(version=version, version_policy='newest', filename=None, sha256=None, cuda=None)
    spec['layers'][0]['packages'] = spec['packages'][:2]
    nightly_lock = copy.deepcopy(lock)
    nightly_lock['inputs'] = sl.lock_inputs(spec)
    builds = {'torch': ('2.11.0.dev20251231+cu130', 'torch-2.11.0.dev20251231+cu130-cp312-cp312-manylinux_2_28_x86_64.whl'),
              'torchvision': ('0.26.0.dev20251231+cu130', 'torchvision-0.26.0.dev20251231+cu130-cp312-cp312-manylinux_2_28_x86_64.whl')}
    for dist in nightly_lock['layers'][0]['distributions']:
        if dist['name'] in builds:
            dist['version'], dist['filename'] = builds[dist['name']]
    nightly_lock['digest'] = sl.lock_digest(nightly_lock)
    assert sl.lock_problems(nightly_lock, spec) == []
    taken = sd.resolve(copy.deepcopy(spec), lock=nightly_lock)
    torch = taken['packages'][0]
    assert (torch['version'], torch['version_spec'], torch['pip_requirement']) == (
        '2.11.0.dev20251231+cu130', '2.11.0.dev*+cu130', 'torch==2.11.0.dev20251231+cu130')
    assert taken['packages'][1]['filename'] == builds['torchvision'][1]
    # A lock whose torchvision is of another nightly than its torch breaks the exact rule: refused.
    for dist in nightly_lock['layers'][0]['distributions']:
        if dist['name'] == 'torchvision':
            dist['version'] = '0.26.0.dev20251230+cu130'
    nightly_lock['digest'] = sl.lock_digest(nightly_lock)
    with pytest.raises(sd.StackDeclarationError, match='the builds it took break a rule: torchvision 0.26.0.dev20251230'):
        sd.resolve(copy.deepcopy(spec), lock=nightly_lock)


@pytest.mark.parametrize('version, chosen, ok', [
    ('2.11.0.dev*+cu130', '2.11.0.dev20251231+cu130', True),
    ('2.11.0.dev*+cu130', '2.11.0.dev20251231+cu128', False),
    ('2.11.0.dev*+cu130', '2.11.0+cu130', False),
    ('2.11.0.dev*+cu130', '2.11.1.dev20251231+cu130', False),
    ('2.11.0.dev*', '2.11.0.dev20251231', True),
    ('2.11.0', '2.11.0', True),
])
def test_spec_matches(version, chosen, ok):
    assert sl.spec_matches(version, chosen) is ok


def test_uv_searches_torch_s_index_before_the_requirements_index():
    decl = {'python': {'version': '3.12', 'tag': 'cp312'}, 'insecure_http': {'allowed': True},
            'packages': [{'name': 'torch', 'dependencies': 'resolve', 'index_url': 'http://mirror:8080/pytorch/whl/nightly/cu130'},
                         {'name': 'flashinfer-python', 'dependencies': 'resolve', 'upstream': 'pypi', 'index_url': 'http://mirror:8080/pypi/simple'},
                         {'name': 'sgl-kernel', 'dependencies': 'none', 'url': 'http://mirror:8080/sgl-whl/x.whl'}]}
    argv = sl.uv_compile_argv('uv', 'in.txt', 'pylock.all.toml', decl, 'c.txt', '/cache')
    assert argv[argv.index('--index') + 1] == 'http://mirror:8080/pytorch/whl/nightly/cu130'
    assert argv[argv.index('--default-index') + 1] == 'http://mirror:8080/pypi/simple'
    assert argv[argv.index('--python-platform') + 1] == 'x86_64-manylinux_2_28'
    assert argv[argv.index('--allow-insecure-host') + 1] == 'mirror'
    assert '--only-binary' in argv and argv[argv.index('--index-strategy') + 1] == 'first-index'
    decl['insecure_http'] = {'allowed': False}
    assert '--allow-insecure-host' not in sl.uv_compile_argv('uv', 'in.txt', 'o.toml', decl)


def test_a_simple_index_page_gives_absolute_urls_and_published_hashes():
    html = ('<a href="../../../releases/download/v0.6.4/flashinfer_jit_cache-0.6.4%2Bcu130-cp39-abi3-manylinux_2_28_x86_64.whl">x</a>'
            '<a href="https://files.example/p/flashinfer_cubin-0.6.4-py3-none-any.whl#sha256=' + 'A' * 64 + '">y</a>')
    files = sl.parse_simple_index(html, 'https://flashinfer.ai/whl/cu130/flashinfer-jit-cache/')
    url, sha = files['flashinfer_jit_cache-0.6.4+cu130-cp39-abi3-manylinux_2_28_x86_64.whl']
    assert url == 'https://flashinfer.ai/releases/download/v0.6.4/flashinfer_jit_cache-0.6.4%2Bcu130-cp39-abi3-manylinux_2_28_x86_64.whl'
    assert sha is None
    assert files['flashinfer_cubin-0.6.4-py3-none-any.whl'] == ('https://files.example/p/flashinfer_cubin-0.6.4-py3-none-any.whl', 'a' * 64)


class _Response(object):
    def __init__(self, data):
        self.stream = io.BytesIO(data)

    def read(self, size):
        return self.stream.read(size)


def _opener(data, status=200, length=None):
    return lambda url: (_Response(data), status, 'OK', length)


def test_a_download_is_kept_only_when_it_hashes_as_locked(tmp_path):
    data = b'wheel bytes'
    good = hashlib.sha256(data).hexdigest()
    dest = str(tmp_path / 'tqdm-4.70.1-py3-none-any.whl')
    assert wf.download(_opener(data), 'http://m/tqdm.whl', dest, 100, good) == (good, len(data))
    assert open(dest, 'rb').read() == data
    other = str(tmp_path / 'idna-3.21-py3-none-any.whl')
    with pytest.raises(wf.WheelFetchError) as err:
        wf.download(_opener(b'swapped'), 'http://m/idna.whl', other, 100, good)
    assert 'sha256 mismatch for idna-3.21-py3-none-any.whl: the lock says %s, the download is %s' % (
        good, hashlib.sha256(b'swapped').hexdigest()) in str(err.value)
    assert not os.path.exists(other) and os.listdir(str(tmp_path)) == ['tqdm-4.70.1-py3-none-any.whl']


def test_a_download_above_its_size_is_stopped(tmp_path):
    dest = str(tmp_path / 'x.whl')
    with pytest.raises(wf.WheelFetchError, match='announces 1000 bytes, more than the 10 allowed'):
        wf.download(_opener(b'x' * 1000, length='1000'), 'http://m/x.whl', dest, 10)
    with pytest.raises(wf.WheelFetchError, match='more than the 10 bytes allowed .the size in the lock'):
        wf.download(_opener(b'x' * 1000), 'http://m/x.whl', dest, 10 ** 6, expected_size=10)
    assert os.listdir(str(tmp_path)) == []


def test_a_swapped_wheelhouse_file_or_a_missing_one_is_refused(tmp_path):
    path = tmp_path / 'tqdm-4.70.1-py3-none-any.whl'
    path.write_bytes(b'swapped')
    dist = {'name': 'tqdm', 'version': '4.70.1', 'filename': path.name, 'url': 'http://m/' + path.name, 'sha256': 'a' * 64}
    with pytest.raises(wf.WheelFetchError) as err:
        wf.ensure_wheels([dist], str(tmp_path))
    assert 'the lock says %s, the file is %s' % ('a' * 64, hashlib.sha256(b'swapped').hexdigest()) in str(err.value)
    assert path.read_bytes() == b'swapped'  # left for review
    missing = dict(dist, filename='idna-3.21-py3-none-any.whl', name='idna')
    with pytest.raises(wf.WheelFetchError, match='idna-3.21-py3-none-any.whl: not in the wheelhouse'):
        wf.ensure_wheels([missing], str(tmp_path))


def test_a_file_checked_before_is_not_hashed_again(tmp_path):
    """checked_before (the store's own objects, hashed when stored) skips the hash of those files only."""
    path = tmp_path / 'tqdm-4.70.1-py3-none-any.whl'
    path.write_bytes(b'bytes the store checked')
    dist = {'name': 'tqdm', 'version': '4.70.1', 'filename': path.name, 'url': 'http://m/' + path.name, 'sha256': 'a' * 64}
    assert wf.ensure_wheels([dist], str(tmp_path), checked_before={path.name}) == ({'tqdm': str(path)}, [])
    with pytest.raises(wf.WheelFetchError, match='sha256 mismatch'):
        wf.ensure_wheels([dist], str(tmp_path), checked_before={'other.whl'})


def test_pip_gets_the_checked_files_with_their_hashes_and_nothing_else():
    dists = [{'name': 'tqdm', 'sha256': 'a' * 64}]
    assert wf.hashed_requirements(dists, {'tqdm': '/w/tqdm.whl'}) == '/w/tqdm.whl --hash=sha256:%s\n' % ('a' * 64)
    argv = wf.pip_install_argv('/v/bin/python', '/w/req.txt')
    assert {'--no-deps', '--no-index', '--require-hashes'} <= set(argv)


def test_one_url_map_for_the_lock_step_and_the_downloads():
    rules = [{'from': 'http://upstream-mirror:8080', 'to': 'http://127.0.0.1:18080'},
             {'from': 'http://127.0.0.1:18080', 'to': 'http://elsewhere'}]
    # The first matching rule wins; the reverse maps what the controller reached back to the hosts' URL.
    assert wf.map_url('http://upstream-mirror:8080/pypi/simple', rules) == 'http://127.0.0.1:18080/pypi/simple'
    assert wf.map_url('http://127.0.0.1:18080/pypi/x.whl', rules[:1], reverse=True) == 'http://upstream-mirror:8080/pypi/x.whl'
    assert wf.map_url('https://pypi.org/simple', rules) == 'https://pypi.org/simple'
    assert wf.map_url(None, rules) is None

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The apt_repo_fetch module, run in-process against a flat repository served over HTTP from tmp_path and signed
with a key made for the test (gpg), as NVIDIA lays out its CUDA repositories."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import threading

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.modules import apt_repo_fetch
from ansible_collections.gpuops.sglang_stack.tests.unit import module_runner

pytestmark = pytest.mark.skipif(not (shutil.which('gpg') and shutil.which('gpgv')), reason='needs gpg and gpgv')

DEBS = {
    'cuda-toolkit-13-0': ('13.0.2-1', 'cuda-compiler-13-0 (>= 13.0.2), libc6 (>= 2.17)', os.urandom(4000)),
    'cuda-compiler-13-0': ('13.0.2-1', 'cuda-toolkit-config-common', os.urandom(3000)),
    'cuda-toolkit-config-common': ('13.0.96-1', '', os.urandom(100)),
}


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def gpg(home, *args, **kwargs):
    proc = subprocess.run(['gpg', '--batch', '--homedir', str(home), '--pinentry-mode', 'loopback', '--passphrase', ''] + list(args),
                          check=False, capture_output=True, **kwargs)
    assert proc.returncode == 0, 'gpg %s: %s' % (' '.join(args), proc.stderr)
    return proc


def make_key(home, name):
    home.mkdir(mode=0o700)
    gpg(home, '--quick-gen-key', '%s <%s@test.invalid>' % (name, name), 'ed25519', 'sign', 'never')
    return home


@pytest.fixture(scope='module')
def keys(tmp_path_factory):
    base = tmp_path_factory.mktemp('keys')
    made = {'repo': make_key(base / 'repo', 'repo'), 'other': make_key(base / 'other', 'other')}
    out = {}
    for name, home in made.items():
        out[name] = {'home': home, 'binary': base / (name + '.gpg'), 'armored': base / (name + '.asc')}
        out[name]['binary'].write_bytes(gpg(home, '--export').stdout)
        out[name]['armored'].write_bytes(gpg(home, '--export', '--armor').stdout)
    yield out
    for home in made.values():
        subprocess.run(['gpgconf', '--homedir', str(home), '--kill', 'all'], check=False, capture_output=True)


def build_repo(root, key_home, inrelease=True, label=b'test', description=b''):
    """label: the Release's Label; description: appended to each Packages Description (both bytes, as served)."""
    root.mkdir(parents=True, exist_ok=True)
    stanzas = []
    for name, (version, depends, data) in sorted(DEBS.items()):
        filename = './%s_%s_amd64.deb' % (name, version)
        (root / filename).write_bytes(data)
        stanza = 'Package: %s\nVersion: %s\nArchitecture: amd64\n' % (name, version)
        if depends:
            stanza += 'Depends: %s\n' % depends
        stanza += 'Filename: %s\nSize: %d\nSHA256: %s\nDescription: %s' % (filename, len(data), sha256(data), name)
        stanzas.append(stanza.encode() + description + b'\n')
    packages = b'\n'.join(stanzas)
    (root / 'Packages').write_bytes(packages)
    (root / 'Packages.gz').write_bytes(gzip.compress(packages, mtime=0))
    release = b'Origin: test\nLabel: ' + label + b'\nSHA256:\n'
    for name in ('Packages', 'Packages.gz'):
        data = (root / name).read_bytes()
        release += (' %s %16d %s\n' % (sha256(data), len(data), name)).encode()
    (root / 'Release').write_bytes(release)
    if inrelease:
        gpg(key_home, '--clearsign', '--digest-algo', 'SHA256', '--output', str(root / 'InRelease'), str(root / 'Release'))
    gpg(key_home, '--armor', '--detach-sign', '--digest-algo', 'SHA256', '--output', str(root / 'Release.gpg'), str(root / 'Release'))
    return root


class Handler(http.server.SimpleHTTPRequestHandler):
    requests = []

    def log_message(self, *args):
        Handler.requests.append(self.path)


@pytest.fixture
def server(tmp_path):
    root = tmp_path / 'www'
    root.mkdir()
    Handler.requests = []
    httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield {'root': root, 'url': 'http://127.0.0.1:%d/repos/debian12/x86_64/' % httpd.server_address[1], 'requests': Handler.requests}
    httpd.shutdown()
    httpd.server_close()


def args(server, keys, dest, **extra):
    result = {'url': server['url'], 'package': 'cuda-toolkit-13-0', 'version': '13.0.2-1', 'keyring': str(keys['repo']['armored']),
              'dest': str(dest), 'exclude': ['cuda-drivers*'], 'timeout': 10}
    result.update(extra)
    return result


def run(capsys, params):
    return module_runner.run_module(capsys, apt_repo_fetch, params)


def test_fetches_verifies_and_records_the_closure(capsys, tmp_path, server, keys):
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'])
    dest = tmp_path / 'cache'
    failed, result = run(capsys, args(server, keys, dest))
    assert not failed, result['msg']
    assert result['changed'] is True
    assert [p['package'] for p in result['packages']] == ['cuda-toolkit-13-0', 'cuda-compiler-13-0', 'cuda-toolkit-config-common']
    assert result['external'] == ['libc6 (>= 2.17) (Depends of cuda-toolkit-13-0 13.0.2-1)']
    assert sorted(result['files']) == ['InRelease', 'Packages', 'Packages.gz', 'cuda-compiler-13-0_13.0.2-1_amd64.deb',
                                       'cuda-toolkit-13-0_13.0.2-1_amd64.deb', 'cuda-toolkit-config-common_13.0.96-1_amd64.deb']
    # The signed files byte for byte, the .debs at their Filename paths.
    src = server['root'] / 'repos/debian12/x86_64'
    for name, digest in result['files'].items():
        assert sha256((dest / name).read_bytes()) == digest == sha256((src / name).read_bytes())
    assert result['downloaded_bytes'] == sum((src / name).stat().st_size for name in result['files'])
    record = json.loads((dest / 'fetch.json').read_text())
    assert record['files'] == result['files']
    assert not [n for n in os.listdir(str(dest)) if n.startswith('.')]


def test_a_complete_cache_is_checked_and_nothing_is_fetched(capsys, tmp_path, server, keys):
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'])
    dest = tmp_path / 'cache'
    assert not run(capsys, args(server, keys, dest))[0]
    before = len(server['requests'])
    failed, result = run(capsys, args(server, keys, dest))
    assert not failed
    assert result['changed'] is False
    assert result['downloaded'] == []
    assert len(server['requests']) == before
    (dest / 'Packages.gz').write_bytes(b'changed')
    failed, result = run(capsys, args(server, keys, dest))
    assert failed
    assert 'Packages.gz has sha256 %s, recorded %s' % (sha256(b'changed'), record_of(dest)['files']['Packages.gz']) in result['msg']
    assert len(server['requests']) == before


def record_of(dest):
    return json.loads((dest / 'fetch.json').read_text())


def test_check_mode_fetches_nothing(capsys, tmp_path, server, keys):
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'])
    dest = tmp_path / 'cache'
    failed, result = run(capsys, dict(args(server, keys, dest), _ansible_check_mode=True))
    assert not failed
    assert result['changed'] is True
    assert result['msg'].startswith('would fetch cuda-toolkit-13-0=13.0.2-1 from ')
    assert not dest.exists()
    assert server['requests'] == []


def test_release_and_release_gpg_when_there_is_no_inrelease(capsys, tmp_path, server, keys):
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'], inrelease=False)
    dest = tmp_path / 'cache'
    failed, result = run(capsys, args(server, keys, dest, keyring=str(keys['repo']['binary'])))
    assert not failed, result['msg']
    assert 'Release' in result['files'] and 'Release.gpg' in result['files'] and 'InRelease' not in result['files']


def test_a_signature_of_another_key_is_refused(capsys, tmp_path, server, keys):
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'])
    dest = tmp_path / 'cache'
    failed, result = run(capsys, args(server, keys, dest, keyring=str(keys['other']['armored'])))
    assert failed
    assert result['msg'].startswith('%sInRelease: signature not valid against %s' % (server['url'], keys['other']['armored']))
    assert 'NO_PUBKEY' in result['msg']
    assert not (dest / 'fetch.json').exists()
    assert not (dest / 'InRelease').exists()


def test_a_deb_that_is_not_the_indexed_one_is_refused(capsys, tmp_path, server, keys):
    src = build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'])
    deb = src / 'cuda-compiler-13-0_13.0.2-1_amd64.deb'
    expected = sha256(deb.read_bytes())
    deb.write_bytes(b'x' * 3000)
    dest = tmp_path / 'cache'
    failed, result = run(capsys, args(server, keys, dest))
    assert failed
    assert ('%scuda-compiler-13-0_13.0.2-1_amd64.deb: sha256 mismatch (against the signed Packages index of cuda-compiler-13-0 13.0.2-1): '
            'expected %s (3000 bytes), got %s (3000 bytes)' % (server['url'], expected, sha256(b'x' * 3000))) in result['msg']
    assert not (dest / 'fetch.json').exists()
    assert not (dest / 'cuda-compiler-13-0_13.0.2-1_amd64.deb').exists()


def test_an_index_that_is_not_the_signed_one_is_refused(capsys, tmp_path, server, keys):
    src = build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'])
    expected = sha256((src / 'Packages').read_bytes())
    (src / 'Packages').write_bytes((src / 'Packages').read_bytes() + b'\n')
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache'))
    assert failed
    assert '%sPackages: sha256 mismatch (against the signed Release): expected %s' % (server['url'], expected) in result['msg']


def test_a_version_the_repository_does_not_carry_is_refused(capsys, tmp_path, server, keys):
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'])
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache', version='13.0.3-1'))
    assert failed
    assert '%sPackages: cuda-toolkit-13-0=13.0.3-1 is not in the repository (versions there: 13.0.2-1)' % server['url'] in result['msg']


def test_an_unreachable_repository_is_named(capsys, tmp_path, server, keys):
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache', url='http://127.0.0.1:9/repos/debian12/x86_64'))
    assert failed
    assert result['msg'].startswith('http://127.0.0.1:9/repos/debian12/x86_64/InRelease: not fetched (HTTP -1')


def test_a_repository_without_the_path_is_named(capsys, tmp_path, server, keys):
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache'))
    assert failed
    assert result['msg'].startswith('%sRelease: not fetched (HTTP 404' % server['url'])


def test_a_signed_release_that_is_not_utf8_is_refused(capsys, tmp_path, server, keys):
    """Signed by the right key, but a Latin-1 byte in Label: a refusal naming the file and the byte, not a traceback."""
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'], label=b'Caf\xe9')
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache'))
    assert failed
    offset = len(b'Origin: test\nLabel: Caf')
    assert result['msg'].startswith("%sInRelease: the deb822 text is not UTF-8 text (byte %d: b'\\xe9')" % (server['url'], offset)), result['msg']
    assert 'Traceback' not in result['msg'] and 'exception' not in result
    assert not (tmp_path / 'cache' / 'fetch.json').exists()


def test_a_release_without_inrelease_that_is_not_utf8_is_refused(capsys, tmp_path, server, keys):
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'], inrelease=False, label=b'\xff')
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache', keyring=str(keys['repo']['binary'])))
    assert failed
    offset = len(b'Origin: test\nLabel: ')
    assert result['msg'].startswith("%sRelease: the deb822 text is not UTF-8 text (byte %d: b'\\xff')" % (server['url'], offset)), result['msg']


def test_a_signed_packages_index_that_is_not_utf8_is_refused(capsys, tmp_path, server, keys):
    """The index matches the signed Release (its sha256 is the one signed) but holds a byte that is not UTF-8."""
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'], description=b' \x80')
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache'))
    assert failed
    assert result['msg'].startswith('%sPackages: the deb822 text is not UTF-8 text (byte ' % server['url']), result['msg']
    assert "b'\\x80')" in result['msg']
    assert not (tmp_path / 'cache' / 'fetch.json').exists()


def test_utf8_beyond_ascii_is_read(capsys, tmp_path, server, keys):
    """UTF-8 that is not ASCII (a maintainer's name) is text like any other."""
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'], label='Café'.encode(), description=' – é'.encode())
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache'))
    assert not failed, result['msg']
    assert [p['package'] for p in result['packages']] == ['cuda-toolkit-13-0', 'cuda-compiler-13-0', 'cuda-toolkit-config-common']

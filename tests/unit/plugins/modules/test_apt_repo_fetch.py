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


def build_repo(root, key_home, inrelease=True, label=b'test', description=b'', sign_args=('--digest-algo', 'SHA256'),
               indexes=('Packages', 'Packages.gz'), weak_indexes=(), size_field=True, sha256_extra=b''):
    """label: the Release's Label; description: appended to each Packages Description (both bytes, as served).

    sign_args: gpg options of both signatures (digest, faked time); indexes: the package indexes the Release lists
    under SHA256, weak_indexes those it lists only under MD5Sum; size_field: whether Packages gives each Size.
    """
    root.mkdir(parents=True, exist_ok=True)
    stanzas = []
    for name, (version, depends, data) in sorted(DEBS.items()):
        filename = './%s_%s_amd64.deb' % (name, version)
        (root / filename).write_bytes(data)
        stanza = 'Package: %s\nVersion: %s\nArchitecture: amd64\n' % (name, version)
        if depends:
            stanza += 'Depends: %s\n' % depends
        stanza += 'Filename: %s\n%sSHA256: %s\nDescription: %s' % (
            filename, ('Size: %d\n' % len(data)) if size_field else '', sha256(data), name)
        stanzas.append(stanza.encode() + description + b'\n')
    packages = b'\n'.join(stanzas)
    (root / 'Packages').write_bytes(packages)
    (root / 'Packages.gz').write_bytes(gzip.compress(packages, mtime=0))
    release = b'Origin: test\nLabel: ' + label + b'\n'
    if weak_indexes:
        release += b'MD5Sum:\n'
        for name in weak_indexes:
            data = (root / name).read_bytes()
            release += (' %s %16d %s\n' % (hashlib.md5(data).hexdigest(), len(data), name)).encode()
    release += b'SHA256:\n' + sha256_extra
    for name in indexes:
        data = (root / name).read_bytes()
        release += (' %s %16d %s\n' % (sha256(data), len(data), name)).encode()
    (root / 'Release').write_bytes(release)
    if inrelease:
        gpg(key_home, *(list(sign_args) + ['--clearsign', '--output', str(root / 'InRelease'), str(root / 'Release')]))
    gpg(key_home, *(list(sign_args) + ['--armor', '--detach-sign', '--output', str(root / 'Release.gpg'), str(root / 'Release')]))
    return root


class Handler(http.server.SimpleHTTPRequestHandler):
    requests = []
    # False: answer without Content-Length (HTTP/1.0, the body ends when the connection closes), as a server that
    # streams may; the cap must then hold while reading.
    content_length = True

    def log_message(self, *args):
        Handler.requests.append(self.path)

    def send_header(self, keyword, value):
        if keyword.lower() == 'content-length' and not Handler.content_length:
            return
        super(Handler, self).send_header(keyword, value)


@pytest.fixture
def server(tmp_path):
    root = tmp_path / 'www'
    root.mkdir()
    Handler.requests = []
    Handler.content_length = True
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
    """Same size, other content (a larger one is refused by its size before its sha256: see the size cap tests)."""
    src = build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'])
    expected = sha256((src / 'Packages').read_bytes())
    (src / 'Packages').write_bytes((src / 'Packages').read_bytes().replace(b'Description: cuda', b'Description: CUDA'))
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


# --- Signatures apt refuses although gpgv exits 0 (issue: transport) ---------------------------------------------
#
# gpgv exits 0 and prints VALIDSIG for a signature by an expired key (EXPKEYSIG), by a revoked key (REVKEYSIG) and for
# a SHA1 digest; apt's gpgv method refuses all three. The keys are made here: gpg 2.2 cannot give a key an expiry in
# the past, so the expired key is made and used with --faked-system-time in 2020 with a validity of one day; the
# revoked key signs from its own home (gpg signs with no revoked key) while the keyring given to the module is its
# public key exported from a second home that imported it with the revocation certificate gpg wrote into
# openpgp-revocs.d/ when it made the key.

FAKED = '--faked-system-time'


@pytest.fixture(scope='module')
def odd_keys(tmp_path_factory):
    base = tmp_path_factory.mktemp('odd-keys')
    out = {}
    expired = base / 'expired'
    expired.mkdir(mode=0o700)
    gpg(expired, FAKED, '20200101T000000', '--quick-gen-key', 'expired <expired@test.invalid>', 'ed25519', 'sign', '1d')
    revoked = base / 'revoked'
    revoked.mkdir(mode=0o700)
    gpg(revoked, '--quick-gen-key', 'revoked <revoked@test.invalid>', 'ed25519', 'sign', 'never')
    weak = base / 'weak'
    weak.mkdir(mode=0o700)
    # RSA: an ed25519 key cannot sign a SHA1 digest.
    gpg(weak, '--quick-gen-key', 'weak <weak@test.invalid>', 'rsa2048', 'sign', 'never')
    # Made in 2020, never expires: its signatures may be dated then, with an expiry of their own.
    old = base / 'old'
    old.mkdir(mode=0o700)
    gpg(old, FAKED, '20200101T000000', '--quick-gen-key', 'old <old@test.invalid>', 'ed25519', 'sign', 'never')
    homes = (('expired', expired), ('revoked', revoked), ('weak', weak), ('old', old))
    for name, home in homes:
        fpr = [line.split(':')[9] for line in gpg(home, '--list-keys', '--with-colons').stdout.decode().splitlines()
               if line.startswith('fpr:')][0]
        out[name] = {'home': home, 'fingerprint': fpr, 'armored': base / (name + '.asc')}
    for name, entry in out.items():
        entry['armored'].write_bytes(gpg(entry['home'], '--export', '--armor').stdout)
    # The certificate gpg stored at creation, its armor line escaped with ':' against an accidental import.
    certificate = (revoked / 'openpgp-revocs.d' / (out['revoked']['fingerprint'] + '.rev')).read_text()
    (base / 'revocation.asc').write_text(certificate.replace(':-----BEGIN PGP PUBLIC KEY BLOCK-----', '-----BEGIN PGP PUBLIC KEY BLOCK-----'))
    public = base / 'revoked-public'
    public.mkdir(mode=0o700)
    gpg(public, '--import', str(out['revoked']['armored']))
    gpg(public, '--import', str(base / 'revocation.asc'))
    out['revoked']['armored'].write_bytes(gpg(public, '--export', '--armor').stdout)
    assert 'rev' in gpg(public, '--list-keys').stdout.decode()
    yield out
    for dummy, home in homes + (('public', public),):
        subprocess.run(['gpgconf', '--homedir', str(home), '--kill', 'all'], check=False, capture_output=True)


def odd_args(server, odd_keys, name, dest, **extra):
    return dict(args(server, {'repo': {'armored': odd_keys[name]['armored']}}, dest), **extra)


def test_a_signature_by_an_expired_key_is_refused(capsys, tmp_path, server, odd_keys):
    # Signed an hour after the key was made, within its one day: today the key has expired.
    build_repo(server['root'] / 'repos/debian12/x86_64', odd_keys['expired']['home'],
               sign_args=(FAKED, '20200101T010000', '--digest-algo', 'SHA256'))
    failed, result = run(capsys, odd_args(server, odd_keys, 'expired', tmp_path / 'cache'))
    assert failed
    assert result['msg'].startswith('%sInRelease: signature not valid against %s (gpgv rc 0: signed by key %s (expired '
                                    '<expired@test.invalid>), which expired on 2020-01-02 00:00:00 UTC)'
                                    % (server['url'], odd_keys['expired']['armored'], odd_keys['expired']['fingerprint'][-16:])), result['msg']
    assert not (tmp_path / 'cache' / 'fetch.json').exists()
    assert not (tmp_path / 'cache' / 'InRelease').exists()


def test_a_release_gpg_by_an_expired_key_is_refused(capsys, tmp_path, server, odd_keys):
    build_repo(server['root'] / 'repos/debian12/x86_64', odd_keys['expired']['home'], inrelease=False,
               sign_args=(FAKED, '20200101T010000', '--digest-algo', 'SHA256'))
    failed, result = run(capsys, odd_args(server, odd_keys, 'expired', tmp_path / 'cache'))
    assert failed
    assert result['msg'].startswith('%sRelease.gpg: signature not valid against ' % server['url']), result['msg']
    assert 'which expired on 2020-01-02 00:00:00 UTC' in result['msg']
    assert not (tmp_path / 'cache' / 'Release').exists()


def test_a_signature_by_a_revoked_key_is_refused(capsys, tmp_path, server, odd_keys):
    build_repo(server['root'] / 'repos/debian12/x86_64', odd_keys['revoked']['home'])
    failed, result = run(capsys, odd_args(server, odd_keys, 'revoked', tmp_path / 'cache'))
    assert failed
    assert result['msg'].startswith('%sInRelease: signature not valid against %s (gpgv rc 0: signed by key %s (revoked '
                                    '<revoked@test.invalid>), which is revoked)'
                                    % (server['url'], odd_keys['revoked']['armored'], odd_keys['revoked']['fingerprint'][-16:])), result['msg']
    assert not (tmp_path / 'cache' / 'fetch.json').exists()


def test_a_sha1_signature_is_refused(capsys, tmp_path, server, odd_keys):
    build_repo(server['root'] / 'repos/debian12/x86_64', odd_keys['weak']['home'], sign_args=('--digest-algo', 'SHA1'))
    failed, result = run(capsys, odd_args(server, odd_keys, 'weak', tmp_path / 'cache'))
    assert failed
    assert result['msg'].startswith('%sInRelease: signature not valid against %s (gpgv rc 0: signed by key %s with digest SHA1, '
                                    'which apt refuses' % (server['url'], odd_keys['weak']['armored'], odd_keys['weak']['fingerprint'])), result['msg']
    assert not (tmp_path / 'cache' / 'fetch.json').exists()


def test_the_same_key_with_sha512_is_taken(capsys, tmp_path, server, odd_keys):
    """The refusal above is the digest's, not the RSA key's."""
    build_repo(server['root'] / 'repos/debian12/x86_64', odd_keys['weak']['home'], sign_args=('--digest-algo', 'SHA512'))
    failed, result = run(capsys, odd_args(server, odd_keys, 'weak', tmp_path / 'cache'))
    assert not failed, result['msg']


def test_an_expired_signature_is_refused(capsys, tmp_path, server, odd_keys):
    """EXPSIG: gpgv itself exits 1 here (the former code refused it too); the reason is now named."""
    build_repo(server['root'] / 'repos/debian12/x86_64', odd_keys['old']['home'],
               sign_args=(FAKED, '20200101T010000', '--default-sig-expire', '1d', '--digest-algo', 'SHA256'))
    failed, result = run(capsys, odd_args(server, odd_keys, 'old', tmp_path / 'cache'))
    assert failed
    assert 'the signature by key %s (old <old@test.invalid>) has expired' % odd_keys['old']['fingerprint'][-16:] in result['msg'], result['msg']


# --- Weak Release sums -------------------------------------------------------------------------------------------

def test_an_index_listed_only_with_md5sum_is_refused(capsys, tmp_path, server, keys):
    other = b'x' * 10
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'], indexes=(), weak_indexes=('Packages',),
               sha256_extra=(' %s %16d Contents-amd64\n' % (sha256(other), len(other))).encode())
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache'))
    assert failed
    assert result['msg'].startswith('%sInRelease: the signed Release lists Packages only with MD5Sum or SHA1 sums, which apt '
                                    'refuses (it needs SHA256)' % server['url']), result['msg']


def test_a_release_with_only_md5sum_is_refused(capsys, tmp_path, server, keys):
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'], indexes=(), weak_indexes=('Packages',))
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache'))
    assert failed
    assert result['msg'].startswith('%sInRelease: Release lists no SHA256 sums, only MD5Sum, which apt does not trust' % server['url']), result['msg']


# --- Size caps: known before the request, held while reading, before any byte is hashed ----------------------------

@pytest.mark.parametrize('content_length', [True, False], ids=['announced', 'streamed'])
def test_a_deb_larger_than_its_size_is_refused_before_it_is_hashed(capsys, tmp_path, server, keys, content_length):
    src = build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'])
    deb = src / 'cuda-compiler-13-0_13.0.2-1_amd64.deb'
    deb.write_bytes(deb.read_bytes() + b'x' * (3 * 1024 * 1024))
    Handler.content_length = content_length
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache'))
    assert failed
    url = '%scuda-compiler-13-0_13.0.2-1_amd64.deb' % server['url']
    if content_length:
        assert result['msg'].startswith('%s: refused: the server announces %d bytes, more than the 3000 allowed (its Size in the '
                                        'signed Packages index); nothing was read' % (url, 3000 + 3 * 1024 * 1024)), result['msg']
    else:
        assert result['msg'].startswith('%s: refused: more than the 3000 bytes allowed (its Size in the signed Packages index); '
                                        'the download was stopped there and discarded' % url), result['msg']
    assert not [n for n in os.listdir(str(tmp_path / 'cache')) if n.startswith('.partial')]
    assert not (tmp_path / 'cache' / 'cuda-compiler-13-0_13.0.2-1_amd64.deb').exists()


@pytest.mark.parametrize('content_length', [True, False], ids=['announced', 'streamed'])
def test_an_index_larger_than_the_signed_size_is_refused(capsys, tmp_path, server, keys, content_length):
    src = build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'])
    size = (src / 'Packages').stat().st_size
    (src / 'Packages').write_bytes((src / 'Packages').read_bytes() + b'\n' * 100)
    Handler.content_length = content_length
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache'))
    assert failed
    assert result['msg'].startswith('%sPackages: refused: ' % server['url']), result['msg']
    assert 'the %d allowed (its size in the signed Release)' % size in result['msg'] or \
        'more than the %d bytes allowed (its size in the signed Release)' % size in result['msg'], result['msg']


@pytest.mark.parametrize('content_length', [True, False], ids=['announced', 'streamed'])
def test_an_inrelease_larger_than_the_cap_is_refused(capsys, tmp_path, server, keys, monkeypatch, content_length):
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'])
    monkeypatch.setattr(apt_repo_fetch, 'SIGNED_CAP', (200, apt_repo_fetch.SIGNED_CAP[1]))
    Handler.content_length = content_length
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache'))
    assert failed
    assert result['msg'].startswith('%sInRelease: refused: ' % server['url']), result['msg']
    assert "(the cap of a Release file, apt's Acquire::MaxReleaseFileSize default)" in result['msg']
    assert not (tmp_path / 'cache' / 'InRelease').exists()


def test_the_release_cap_is_apts(capsys):
    assert apt_repo_fetch.MAX_SIGNED_BYTES == 10 * 1000 * 1000 == apt_repo_fetch.SIGNED_CAP[0]


def test_a_packages_index_without_size_is_refused(capsys, tmp_path, server, keys):
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'], size_field=False)
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache'))
    assert failed
    assert result['msg'].startswith("%sPackages: the paragraph of cuda-toolkit-13-0 13.0.2-1 has no Size ('')" % server['url']), result['msg']


def test_a_compressed_index_that_expands_beyond_the_cap_is_refused(capsys, tmp_path, server, keys, monkeypatch):
    build_repo(server['root'] / 'repos/debian12/x86_64', keys['repo']['home'], indexes=('Packages.gz',))
    monkeypatch.setattr(apt_repo_fetch, 'MAX_INDEX_BYTES', 100)
    failed, result = run(capsys, args(server, keys, tmp_path / 'cache'))
    assert failed
    assert result['msg'].startswith('%sPackages.gz: refused: it decompresses to more than 100 bytes' % server['url']), result['msg']

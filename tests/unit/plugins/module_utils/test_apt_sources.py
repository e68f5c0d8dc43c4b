# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""apt_sources against real formats: keyrings gpg exported (fingerprints compared with gpg's own
--with-colons output), the Debian 12 image's deb822 sources, the one-line file NVIDIA's cuda-keyring
writes, and apt's Signed-By forms."""

from __future__ import annotations

import base64
import os

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import apt_sources as a

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'apt_sources')
KEYRINGS = ['testbed-archive-keyring.asc', 'testbed-archive-keyring.gpg', 'debian-archive-bookworm-stable.gpg',
            'debian-archive-keyring.gpg', 'debian-archive-trixie-automatic.asc']
TESTBED = 'B84D4D5BF41443954D0DBF397CD91BC4DAF573C9'
NVIDIA = 'EB693B3035CD5710E231E123A4B469963BF863CC'
NVIDIA_URL = 'https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/'
# What cuda-keyring_1.1-1 writes (issue 16; NVIDIA's install guide).
CUDA_KEYRING_LIST = 'deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] %s /\n' % NVIDIA_URL


def fixture(name):
    with open(os.path.join(FIXTURES, name), 'rb') as handle:
        return handle.read()


def gpg_oracle(name):
    """Primary and subkey fingerprints as gpg --show-keys --with-colons printed them."""
    primaries, subkeys, last = [], [], None
    for line in fixture(name + '.colons').decode('utf-8').splitlines():
        fields = line.split(':')
        if fields[0] in ('pub', 'sub'):
            last = fields[0]
        elif fields[0] == 'fpr':
            (primaries if last == 'pub' else subkeys).append(fields[9])
    return primaries, subkeys


@pytest.mark.parametrize('name', KEYRINGS)
def test_fingerprints_equal_gpg(name):
    ring = a.read_keyring(fixture(name), name)
    assert ring['format'] == ('armored' if name.endswith('.asc') else 'binary')
    primaries, subkeys = a.keyring_fingerprints(ring)
    want_primaries, want_subkeys = gpg_oracle(name)
    assert primaries and primaries == want_primaries
    assert subkeys == want_subkeys


def test_debian_keyring_holds_nine_keys_with_uids():
    ring = a.read_keyring(fixture('debian-archive-keyring.gpg'))
    assert len(ring['keys']) == 9
    assert any('Debian Archive Automatic Signing Key' in uid for key in ring['keys'] for uid in key['uids'])


def test_armored_and_binary_of_one_key_agree():
    assert a.read_keyring(fixture('testbed-archive-keyring.asc'))['keys'][0]['fingerprint'] == TESTBED
    assert a.read_keyring(fixture('testbed-archive-keyring.gpg'))['keys'][0]['fingerprint'] == TESTBED


def test_damaged_armor_is_refused_by_its_checksum():
    text = fixture('testbed-archive-keyring.asc').decode('ascii').splitlines()
    body = [i for i, line in enumerate(text) if len(line) == 64][3]
    text[body] = ('A' if text[body][10] != 'A' else 'B').join([text[body][:10], text[body][11:]])
    with pytest.raises(a.AptSourcesError, match='checksum'):
        a.read_keyring('\n'.join(text).encode('ascii'))


def test_keybox_truncated_and_foreign_data_are_refused():
    keybox = b'\x00\x00\x00\x20\x01\x01\x00\x00KBXf' + b'\x00' * 20
    with pytest.raises(a.AptSourcesError, match='keybox'):
        a.read_keyring(keybox)
    with pytest.raises(a.AptSourcesError, match='cut off'):
        a.read_keyring(fixture('testbed-archive-keyring.gpg')[:200])
    with pytest.raises(a.AptSourcesError, match='not an OpenPGP packet'):
        a.read_keyring(CUDA_KEYRING_LIST.encode('ascii'))
    with pytest.raises(a.AptSourcesError, match='no "-----BEGIN PGP"'):
        a.dearmor('-----\nnothing here\n')


def test_v6_fingerprint_is_sha256_over_0x9b_prefix():
    # RFC 9580 Appendix A.3: the sample v6 Ed25519 certificate's primary key packet and fingerprint.
    body = bytes([6]) + bytes.fromhex('63877fe3') + bytes([27]) + (32).to_bytes(4, 'big') + bytes.fromhex(
        'f94da7bb48d60a61e567706a6587d0331999bb9d891a08242ead84543df895a3')
    assert a.key_fingerprint(body) == 'CB186C4F0609A697E4D52DFA6C722B0C1F1E27C18A56708F6525EC27BAD9ACC9'


@pytest.mark.parametrize('value, want', [
    ('EB69 3B30 35CD 5710 E231  E123 A4B4 6996 3BF8 63CC', NVIDIA),
    ('0xeb693b3035cd5710e231e123a4b469963bf863cc', NVIDIA),
    (NVIDIA + '!', NVIDIA),
    ('3BF863CC', None),
    ('A4B469963BF863CC', None),
    ('', None),
])
def test_normalize_fingerprint(value, want):
    assert a.normalize_fingerprint(value) == want


@pytest.mark.parametrize('url', [
    'https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/',
    'https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64',
    'http://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/',
    'https://Developer.Download.NVIDIA.com:443/compute/cuda/repos/debian12//x86_64/',
])
def test_same_repository_urls(url):
    assert a.normalize_url(url) == a.normalize_url(NVIDIA_URL)


def test_other_repositories_differ():
    assert a.normalize_url(NVIDIA_URL.replace('debian12', 'debian13')) != a.normalize_url(NVIDIA_URL)
    assert a.normalize_url('ftp://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/') != a.normalize_url(NVIDIA_URL)
    assert a.normalize_url('file:/var/lib/gpuops-sglang-stack/cuda-repo') == a.normalize_url('file:/var/lib/gpuops-sglang-stack/cuda-repo/')


def test_cuda_keyring_list():
    (entry,) = a.parse_one_line(CUDA_KEYRING_LIST, '/etc/apt/sources.list.d/cuda-debian12-x86_64.list')
    assert entry['types'] == ['deb'] and entry['uris'] == [NVIDIA_URL] and entry['suites'] == ['/']
    assert entry['signed_by'] == '/usr/share/keyrings/cuda-archive-keyring.gpg'
    assert entry['trusted'] is None and entry['line'] == 1


def test_one_line_forms():
    text = ('# deb http://commented.example/ /\n'
            'deb [ arch=amd64 trusted=yes ] http://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64 /  # old\n'
            'deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main\n'
            'deb-src [signed-by=/k.gpg,' + NVIDIA + '] http://x.example/debian bookworm main contrib\n'
            'rpm http://nope/ x\n')
    entries = a.parse_one_line(text, 'f.list')
    assert [e.get('line') for e in entries] == [2, 3, 4, 5]
    assert entries[0]['trusted'] is True and entries[0]['options']['arch'] == 'amd64' and entries[0]['suites'] == ['/']
    assert entries[1]['signed_by'] is None and entries[1]['components'] == ['main']
    assert entries[2]['types'] == ['deb-src'] and entries[2]['signed_by'] == '/k.gpg,' + NVIDIA
    assert 'unknown type' in entries[3]['error']


def test_debian_image_deb822_with_comment_lines():
    entries = a.parse_deb822(fixture('debian12-debian.sources').decode('utf-8'), 'debian.sources')
    assert [e['uris'] for e in entries] == [['http://deb.debian.org/debian'], ['http://deb.debian.org/debian-security']]
    assert entries[0]['suites'] == ['bookworm', 'bookworm-updates'] and entries[0]['line'] == 1 and entries[1]['line'] == 8
    assert all(e['signed_by'] == '/usr/share/keyrings/debian-archive-keyring.gpg' and e['enabled'] for e in entries)


def embedded_stanza(uri, key_name='testbed-archive-keyring.asc', extra=''):
    armored = fixture(key_name).decode('ascii').strip().splitlines()
    block = '\n'.join(' ' + (line if line.strip() else '.') for line in armored)
    return 'Types: deb\nURIs: %s\nSuites: /\n%sSigned-By:\n%s\n' % (uri, extra, block)


def test_deb822_embedded_key_and_disabled_stanza():
    text = embedded_stanza(NVIDIA_URL) + '\nEnabled: no\nTypes: deb\nURIs: %s\nSuites: /\nTrusted: yes\n' % NVIDIA_URL
    first, second = a.parse_deb822(text, 'x.sources')
    trust = a.entry_trust(first)
    assert trust['kind'] == 'embedded' and trust['primaries'] == [TESTBED] and not trust['errors']
    assert second['enabled'] is False and second['trusted'] is True


def test_deb822_continuation_before_field_is_refused():
    with pytest.raises(a.AptSourcesError, match='continuation'):
        a.parse_deb822(' Types: deb\n', 'x.sources')


@pytest.fixture
def apt(tmp_path):
    """An /etc/apt tree: Debian's own sources, and keyrings at the paths sources name."""
    root = tmp_path / 'etc-apt'
    (root / 'sources.list.d').mkdir(parents=True)
    (root / 'trusted.gpg.d').mkdir()
    (root / 'sources.list.d' / 'debian.sources').write_bytes(fixture('debian12-debian.sources'))
    (root / 'trusted.gpg.d' / 'debian-archive-trixie-automatic.asc').write_bytes(fixture('debian-archive-trixie-automatic.asc'))
    keys = tmp_path / 'keyrings'
    keys.mkdir()
    for name in ('testbed-archive-keyring.gpg', 'testbed-archive-keyring.asc', 'debian-archive-keyring.gpg'):
        (keys / name).write_bytes(fixture(name))
    both = fixture('testbed-archive-keyring.gpg') + fixture('debian-archive-bookworm-stable.gpg')
    (keys / 'two-keys.gpg').write_bytes(both)
    return root, keys


def write_list(root, name, text):
    (root / 'sources.list.d' / name).write_text(text)
    return str(root / 'sources.list.d' / name)


def verdict(root, url=NVIDIA_URL, fingerprint=TESTBED, **kwargs):
    entries, problems = a.read_sources(str(root))
    assert problems == []
    return a.judge(entries, url, fingerprint, apt_dir=str(root), **kwargs)


def test_no_source_means_add(apt):
    root, _keys = apt
    result = verdict(root)
    assert result['decision'] == 'add' and result['sources'] == [] and result['problems'] == []


@pytest.mark.parametrize('keyring', ['testbed-archive-keyring.gpg', 'testbed-archive-keyring.asc'])
def test_cuda_keyring_source_with_the_declared_key_is_reused(apt, keyring):
    root, keys = apt
    path = write_list(root, 'cuda-debian12-x86_64.list', CUDA_KEYRING_LIST.replace('/usr/share/keyrings/cuda-archive-keyring.gpg', str(keys / keyring)))
    result = verdict(root)
    assert result['decision'] == 'reuse' and result['problems'] == []
    assert result['reuse']['file'] == path and result['reuse']['trust']['primaries'] == [TESTBED]


def test_cuda_keyring_source_with_another_key_is_refused_naming_file_and_fix(apt):
    root, keys = apt
    path = write_list(root, 'cuda-debian12-x86_64.list',
                      CUDA_KEYRING_LIST.replace('/usr/share/keyrings/cuda-archive-keyring.gpg', str(keys / 'debian-archive-keyring.gpg')))
    result = verdict(root)
    assert result['decision'] == 'refuse'
    (problem,) = result['problems']
    assert path + ' line 1' in problem and 'not the declared key ' + TESTBED in problem
    assert 'Conflicting values set for option Signed-By' in problem and 'apt-get purge cuda-keyring' in problem


@pytest.mark.parametrize('written', [
    NVIDIA_URL.rstrip('/'),
    NVIDIA_URL.replace('https:', 'http:'),
])
def test_same_repository_without_slash_or_over_http_is_judged(apt, written):
    root, keys = apt
    write_list(root, 'hand.list', 'deb [signed-by=%s] %s /\n' % (keys / 'debian-archive-keyring.gpg', written))
    assert verdict(root)['decision'] == 'refuse'


def test_missing_keyring_is_refused_with_the_reason(apt):
    root, _keys = apt
    write_list(root, 'cuda-debian12-x86_64.list', CUDA_KEYRING_LIST)
    (problem,) = verdict(root)['problems']
    assert '/usr/share/keyrings/cuda-archive-keyring.gpg (its Signed-By keyring) cannot be read' in problem


def test_keyring_with_an_extra_key_is_refused(apt):
    root, keys = apt
    write_list(root, 'c.list', 'deb [signed-by=%s] %s /\n' % (keys / 'two-keys.gpg', NVIDIA_URL))
    (problem,) = verdict(root)['problems']
    assert 'other keys besides the declared' in problem


def test_trusted_yes_is_refused_even_with_the_right_key_and_on_a_related_url(apt):
    root, keys = apt
    write_list(root, 'c.list', 'deb [trusted=yes signed-by=%s] %s /\n' % (keys / 'testbed-archive-keyring.gpg', NVIDIA_URL))
    result = verdict(root)
    assert result['decision'] == 'refuse' and 'trusted=yes' in result['problems'][0]
    mirror = 'http://upstream-mirror:8080/nvidia/cuda/repos/debian12/x86_64/'
    result = verdict(root, url=mirror, related_urls=[NVIDIA_URL])
    assert result['decision'] == 'refuse' and 'trusted=yes' in result['problems'][0]


def test_source_of_a_related_url_with_another_key_does_not_conflict(apt):
    root, keys = apt
    other = CUDA_KEYRING_LIST.replace('/usr/share/keyrings/cuda-archive-keyring.gpg', str(keys / 'debian-archive-keyring.gpg'))
    write_list(root, 'cuda-debian12-x86_64.list', other)
    result = verdict(root, url='file:/var/lib/gpuops-sglang-stack/cuda-repo', related_urls=[NVIDIA_URL])
    assert result['decision'] == 'add' and len(result['sources']) == 1 and result['sources'][0]['same_url'] is False


def test_the_roles_own_file_is_not_judged(apt):
    root, keys = apt
    own = write_list(root, 'cuda-debian12.sources', 'Types: deb\nURIs: %s\nSuites: /\nSigned-By: /etc/apt/keyrings/old.asc\n' % NVIDIA_URL)
    assert verdict(root, managed_files=[own])['decision'] == 'add'
    write_list(root, 'cuda-debian12-x86_64.list', 'deb [signed-by=%s] %s /\n' % (keys / 'testbed-archive-keyring.gpg', NVIDIA_URL))
    assert verdict(root, managed_files=[own])['decision'] == 'reuse'


def test_two_matching_sources_with_different_signed_by_strings_are_refused(apt):
    root, keys = apt
    write_list(root, 'a.list', 'deb [signed-by=%s] %s /\n' % (keys / 'testbed-archive-keyring.gpg', NVIDIA_URL))
    write_list(root, 'b.list', 'deb [signed-by=%s] %s /\n' % (keys / 'testbed-archive-keyring.asc', NVIDIA_URL))
    (problem,) = verdict(root)['problems']
    assert 'apt already refuses' in problem and 'a.list' in problem and 'b.list' in problem


def test_fingerprint_list_and_global_keyrings(apt):
    root, keys = apt
    write_list(root, 'a.list', 'deb [signed-by=%s] %s /\n' % (TESTBED.lower(), NVIDIA_URL))
    assert verdict(root)['decision'] == 'reuse'
    write_list(root, 'a.list', 'deb %s /\n' % NVIDIA_URL)
    result = verdict(root)
    assert result['decision'] == 'refuse' and 'no Signed-By' in result['problems'][0]
    (root / 'trusted.gpg.d' / 'cuda.gpg').write_bytes(fixture('testbed-archive-keyring.gpg'))
    result = verdict(root)
    assert result['decision'] == 'reuse' and result['reuse']['trust']['kind'] == 'global'


def test_deb822_source_disabled_is_reported_not_judged(apt):
    root, keys = apt
    write_list(root, 'cuda.sources', 'Enabled: no\nTypes: deb\nURIs: %s\nSuites: /\nSigned-By: %s\n' % (NVIDIA_URL, keys / 'debian-archive-keyring.gpg'))
    result = verdict(root)
    assert result['decision'] == 'add' and result['sources'][0]['enabled'] is False


def test_deb822_embedded_key_source_is_reused(apt):
    root, _keys = apt
    write_list(root, 'cuda.sources', embedded_stanza(NVIDIA_URL))
    assert verdict(root)['decision'] == 'reuse'
    assert verdict(root, fingerprint=NVIDIA)['decision'] == 'refuse'


def test_no_declared_fingerprint_refuses_an_existing_source(apt):
    root, keys = apt
    assert verdict(root, fingerprint='')['decision'] == 'add'
    write_list(root, 'a.list', 'deb [signed-by=%s] %s /\n' % (keys / 'testbed-archive-keyring.gpg', NVIDIA_URL))
    result = verdict(root, fingerprint='')
    assert result['decision'] == 'refuse' and 'no fingerprint is declared' in result['problems'][0]


def test_check_key_file(apt):
    _root, keys = apt
    good = a.check_key_file(str(keys / 'testbed-archive-keyring.asc'), TESTBED)
    assert good['matches'] and good['format'] == 'armored' and good['error'] is None
    bad = a.check_key_file(str(keys / 'debian-archive-keyring.gpg'), TESTBED)
    assert not bad['matches'] and 'not exactly the declared key' in bad['error'] and len(bad['primaries']) == 9
    html = keys / 'error.html'
    html.write_bytes(b'<html><body>404 Not Found</body></html>')
    assert 'not an OpenPGP packet' in a.check_key_file(str(html), TESTBED)['error']
    assert 'cannot be read' in a.check_key_file(str(keys / 'absent.asc'), TESTBED)['error']


def test_read_sources_reports_unparsable_files(tmp_path):
    (tmp_path / 'sources.list.d').mkdir()
    (tmp_path / 'sources.list').write_text(CUDA_KEYRING_LIST)
    (tmp_path / 'sources.list.d' / 'bad.sources').write_text('this is not deb822\n')
    (tmp_path / 'sources.list.d' / 'ignored.list.save').write_text('deb http://x/ y\n')
    entries, problems = a.read_sources(str(tmp_path))
    assert [e['file'] for e in entries] == [str(tmp_path / 'sources.list')]
    assert len(problems) == 1 and 'bad.sources line 1' in problems[0]


def test_armored_key_base64_is_strict():
    text = '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n%s*\n-----END PGP PUBLIC KEY BLOCK-----\n' % base64.b64encode(b'\x99\x00').decode()
    with pytest.raises(a.AptSourcesError, match='does not decode'):
        a.dearmor(text)

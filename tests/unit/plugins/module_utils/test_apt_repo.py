# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""apt_repo: Debian versions, relations, Release and the dependency closure within a flat repository."""

from __future__ import annotations

import base64
import datetime
import itertools
import os
import re

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import apt_repo

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'apt_repo')
DRIVERS = ['cuda-drivers', 'cuda-drivers-*', 'nvidia-driver*', 'nvidia-kernel-*', 'nvidia-open*', 'cuda-runtime-*']


def fixture(name):
    with open(os.path.join(FIXTURES, name), 'rb') as handle:
        return handle.read()


def nvidia_index(exclude=None):
    return apt_repo.PackageIndex(fixture('nvidia-style-Packages').decode(), 'amd64', DRIVERS if exclude is None else exclude)


def names(closure):
    return dict((s['package'], s['version']) for s in closure['packages'])


def stanza(name, version, depends='', provides='', arch='amd64'):
    text = 'Package: %s\nVersion: %s\nArchitecture: %s\n' % (name, version, arch)
    if depends:
        text += 'Depends: %s\n' % depends
    if provides:
        text += 'Provides: %s\n' % provides
    return text + 'Filename: ./%s_%s_%s.deb\nSize: 10\nSHA256: %s\n' % (name, version, arch, '0' * 64)


def index_of(*stanzas):
    return apt_repo.PackageIndex('\n'.join(stanzas))


@pytest.mark.parametrize('first, second, expected', [
    ('13.0.2-1', '13.0.2-1', 0),
    ('13.0.88-1', '13.0.9-1', 1),
    ('13.0.96-1', '13.0.48-1', 1),
    ('13.1.0.3-1', '13.0.0.19-1', 1),
    ('1.0~rc1', '1.0', -1),
    ('1.0', '1.0-0', 0),
    ('1.0', '1.0-1', -1),
    ('1.0', '1.0.0', -1),
    ('1.0a', '1.0+', -1),
    ('1:0.1', '2.0', 1),
    ('0:2.0', '2.0', 0),
    ('2025.3.2.474-1', '2025.3.1.90-1', 1),
    ('580.95.05-1', '580.95.5-1', 0),
    ('1.0-1ubuntu1', '1.0-1', 1),
    ('1.0~~', '1.0~', -1),
])
def test_compare_versions_orders_as_dpkg(first, second, expected):
    assert apt_repo.compare_versions(first, second) == expected
    assert apt_repo.compare_versions(second, first) == -expected


@pytest.mark.parametrize('version, op, wanted, expected', [
    ('13.0.2-1', '>=', '13.0.2', True),
    ('13.0.1-1', '>=', '13.0.2', False),
    ('13.0.88-1', '=', '13.0.88-1', True),
    ('13.0.88-1', '<<', '13.0.88-1', False),
    ('13.0.48-1', '<<', '13.0.88-1', True),
    ('2.0', '>>', '1.9', True),
    ('2.0', '<', '2.0', True),
    ('2.0', '>', '2.0', True),
    ('2.0', None, None, True),
    (None, '=', '1.0', False),
])
def test_satisfies(version, op, wanted, expected):
    assert apt_repo.satisfies(version, op, wanted) is expected


def test_parse_relations_reads_alternatives_versions_and_qualifiers():
    text = 'libncursesw6 | libncursesw5, python3:any (>= 3.8), cuda-crt-13-0 (= 13.0.88-1) [amd64], foo <!nocheck>,\n libc6 (>= 2.17)'
    assert apt_repo.parse_relations(text) == [
        [('libncursesw6', None, None), ('libncursesw5', None, None)],
        [('python3', '>=', '3.8')],
        [('cuda-crt-13-0', '=', '13.0.88-1')],
        [('foo', None, None)],
        [('libc6', '>=', '2.17')],
    ]
    assert apt_repo.parse_relations('') == []


def test_parse_relations_refuses_what_it_cannot_read():
    with pytest.raises(apt_repo.AptRepoError, match='cannot be read'):
        apt_repo.parse_relations('cuda-crt (=== 1)')


def test_parse_stanzas_keeps_continuation_lines_and_lowercases_fields():
    stanzas = apt_repo.parse_stanzas(fixture('testbed-Packages').decode())
    assert len(stanzas) == 1
    assert stanzas[0]['package'] == 'cuda-toolkit-13-0'
    assert stanzas[0]['filename'] == './cuda-toolkit-13-0_13.0.2-1_amd64.deb'
    assert stanzas[0]['description'].splitlines()[0].startswith('TEST STAND-IN')
    assert len(stanzas[0]['description'].splitlines()) > 3
    with pytest.raises(apt_repo.AptRepoError, match='continuation line'):
        apt_repo.parse_stanzas(' orphan\n')
    with pytest.raises(apt_repo.AptRepoError, match='Field: value'):
        apt_repo.parse_stanzas('Package cuda\n')


def test_testbed_repository_closure_is_the_one_package():
    index = apt_repo.PackageIndex(fixture('testbed-Packages').decode(), 'amd64', DRIVERS)
    closure = apt_repo.resolve_closure(index, 'cuda-toolkit-13-0', '13.0.2-1')
    assert [(s['package'], s['version'], s['filename']) for s in closure['packages']] == [
        ('cuda-toolkit-13-0', '13.0.2-1', './cuda-toolkit-13-0_13.0.2-1_amd64.deb')]
    assert closure['packages'][0]['sha256'] == '8e1485e8bbc78a21ea12fb79875d898a20a0233bd0ee62baaeff3cbedc0c2580'
    assert closure['packages'][0]['size'] == '68892798'
    # Suggests is not followed (apt installs without recommends or suggests).
    assert closure['external'] == []


def test_testbed_repository_refuses_another_version():
    index = apt_repo.PackageIndex(fixture('testbed-Packages').decode())
    with pytest.raises(apt_repo.AptRepoError, match=r'cuda-toolkit-13-0=13\.0\.3-1 is not in the repository \(versions there: 13\.0\.2-1\)'):
        apt_repo.resolve_closure(index, 'cuda-toolkit-13-0', '13.0.3-1')
    with pytest.raises(apt_repo.AptRepoError, match='cuda-toolkit-13-1=13.1.0-1 is not in the repository .no version of it at all.'):
        apt_repo.resolve_closure(index, 'cuda-toolkit-13-1', '13.1.0-1')


def test_nvidia_style_closure_follows_the_whole_tree():
    closure = apt_repo.resolve_closure(nvidia_index(), 'cuda-toolkit-13-0', '13.0.2-1')
    assert closure['packages'][0]['package'] == 'cuda-toolkit-13-0'
    assert names(closure) == {
        'cuda-toolkit-13-0': '13.0.2-1',
        # Architecture: all, highest version.
        'cuda-toolkit-13-0-config-common': '13.0.96-1',
        'cuda-toolkit-13-config-common': '13.0.96-1',
        'cuda-toolkit-config-common': '13.0.96-1',
        'cuda-compiler-13-0': '13.0.2-1',
        'cuda-libraries-13-0': '13.0.2-1',
        'cuda-tools-13-0': '13.0.2-1',
        'cuda-documentation-13-0': '13.0.85-1',
        # Unversioned and >= relations take the highest version there (apt's candidate) ...
        'cuda-nvcc-13-0': '13.0.88-1',
        'cuda-crt-13-0': '13.0.88-1',
        # ... which the '=' relations of that nvcc then meet.
        'cuda-nvvm-13-0': '13.0.88-1',
        'cuda-cuobjdump-13-0': '13.0.85-1',
        'cuda-cudart-13-0': '13.0.96-1',
        'cuda-cudart-dev-13-0': '13.0.96-1',
        'cuda-cccl-13-0': '13.0.85-1',
        'libcublas-13-0': '13.1.0.3-1',
        'libnpp-13-0': '13.0.1.2-1',
        'cuda-command-line-tools-13-0': '13.0.2-1',
        'cuda-gdb-13-0': '13.0.85-1',
        'cuda-sanitizer-13-0': '13.0.85-1',
        'cuda-cupti-13-0': '13.0.85-1',
        'cuda-visual-tools-13-0': '13.0.2-1',
        'cuda-nsight-compute-13-0': '13.0.2-1',
        'nsight-compute-2025.3.1': '2025.3.1.4-1',
        # The first alternative the repository carries; the second one is not fetched.
        'nsight-systems-2025.3.2': '2025.3.2.474-1',
    }
    filenames = [s['filename'] for s in closure['packages']]
    assert './cuda-nvcc-13-0_13.0.88-1_amd64.deb' in filenames
    assert './cuda-toolkit-config-common_13.0.96-1_all.deb' in filenames
    assert len(filenames) == len(set(filenames))
    # Nothing of the driver, nothing of another architecture.
    assert not [n for n in names(closure) if 'driver' in n or 'runtime' in n or 'aarch64' in n]


def test_nvidia_style_closure_leaves_the_distribution_relations_to_the_host():
    external = apt_repo.resolve_closure(nvidia_index(), 'cuda-toolkit-13-0', '13.0.2-1')['external']
    assert 'build-essential (Depends of cuda-nvcc-13-0 13.0.88-1)' in external
    assert 'libc6 (>= 2.17) (Depends of cuda-cudart-13-0 13.0.96-1)' in external
    assert 'libncursesw6 | libncursesw5 (Depends of cuda-gdb-13-0 13.0.85-1)' in external
    assert 'python3 (Depends of cuda-gdb-13-0 13.0.85-1)' in external
    assert 'default-jre-headless | java8-runtime-headless (Depends of nsight-systems-2025.3.2 2025.3.2.474-1)' in external
    assert not [e for e in external if e.startswith('cuda-')]


def test_nvidia_style_older_toolkit_takes_the_candidates_apt_would():
    closure = apt_repo.resolve_closure(nvidia_index(), 'cuda-toolkit-13-0', '13.0.1-1')
    chosen = names(closure)
    assert chosen['cuda-toolkit-13-0'] == '13.0.1-1'
    # cuda-compiler-13-0 (>= 13.0.1): apt installs its candidate, the highest version.
    assert chosen['cuda-compiler-13-0'] == '13.0.2-1'
    assert 'cuda-documentation-13-0' not in chosen


def test_nvidia_style_driver_packages_are_refused_when_excluded():
    with pytest.raises(apt_repo.AptRepoError) as err:
        apt_repo.resolve_closure(nvidia_index(), 'cuda-runtime-13-0', '13.0.2-1')
    assert 'excluded' in str(err.value)
    index = nvidia_index(exclude=['cuda-drivers', 'cuda-drivers-*', 'nvidia-driver*'])
    with pytest.raises(apt_repo.AptRepoError, match=r'cuda-runtime-13-0 13\.0\.2-1: Depends cuda-drivers \(>= 580\.65\.06\) cannot be met'):
        apt_repo.resolve_closure(index, 'cuda-runtime-13-0', '13.0.2-1')


def test_nvidia_style_full_cuda_metapackage_without_exclusions_pulls_drivers():
    closure = apt_repo.resolve_closure(nvidia_index(exclude=()), 'cuda-13-0', '13.0.2-1')
    chosen = names(closure)
    assert chosen['cuda-drivers'] == '580.95.05-1'
    assert chosen['cuda-drivers-580'] == '580.95.05-1'
    assert chosen['cuda-toolkit-13-0'] == '13.0.2-1'
    # Neither nvidia-driver alternative is in the repository: left to the distribution.
    assert [e for e in closure['external'] if e.startswith('nvidia-driver-580-open (= 580.95.05-1) | nvidia-driver-580')]
    assert [e for e in closure['external'] if e.startswith('cuda-demo-suite-13-0 (>= 13.0.85)')]


def test_alternative_met_by_a_package_already_taken():
    index = index_of(stanza('top', '1', 'b, a | b'), stanza('a', '1'), stanza('b', '1'))
    assert names(apt_repo.resolve_closure(index, 'top', '1')) == {'top': '1', 'b': '1'}


def test_first_alternative_missing_from_the_repository_takes_the_next():
    index = index_of(stanza('top', '1', 'not-here | b (>= 2)'), stanza('b', '1'), stanza('b', '2'), stanza('b', '3'))
    assert names(apt_repo.resolve_closure(index, 'top', '1')) == {'top': '1', 'b': '3'}


def test_version_constraints_pick_the_highest_version_that_meets_them():
    index = index_of(stanza('top', '1', 'b (<< 3)'), stanza('b', '1'), stanza('b', '2'), stanza('b', '3'))
    assert names(apt_repo.resolve_closure(index, 'top', '1')) == {'top': '1', 'b': '2'}


def test_pre_depends_are_followed_first():
    index = index_of(stanza('top', '1', 'a').replace('Depends: a', 'Pre-Depends: b\nDepends: a'), stanza('a', '1'), stanza('b', '1'))
    closure = apt_repo.resolve_closure(index, 'top', '1')
    assert [s['package'] for s in closure['packages']] == ['top', 'b', 'a']


def test_virtual_packages_are_met_by_their_providers():
    index = index_of(stanza('top', '1', 'libfoo-abi (>= 2), tool'), stanza('libfoo2', '2.1', provides='libfoo-abi (= 2.1)'),
                     stanza('libfoo1', '1.0', provides='libfoo-abi (= 1.0)'), stanza('tool-impl', '1', provides='tool'))
    assert names(apt_repo.resolve_closure(index, 'top', '1')) == {'top': '1', 'libfoo2': '2.1', 'tool-impl': '1'}


def test_a_provider_already_taken_meets_the_virtual_relation():
    index = index_of(stanza('top', '1', 'impl-b, tool'), stanza('impl-a', '1', provides='tool'), stanza('impl-b', '1', provides='tool'))
    assert names(apt_repo.resolve_closure(index, 'top', '1')) == {'top': '1', 'impl-b': '1'}


def test_two_packages_needing_different_versions_of_one_are_refused():
    index = index_of(stanza('top', '1', 'a, c'), stanza('a', '1', 'b (= 1)'), stanza('c', '1', 'b (= 2)'), stanza('b', '1'), stanza('b', '2'))
    with pytest.raises(apt_repo.AptRepoError, match=r'c 1: Depends b \(= 2\) cannot be met from the repository \(b 1 is already taken'):
        apt_repo.resolve_closure(index, 'top', '1')


def test_a_relation_the_repository_cannot_meet_in_any_version_is_refused():
    index = index_of(stanza('top', '1', 'b (>= 5)'), stanza('b', '1'), stanza('b', '2'))
    with pytest.raises(apt_repo.AptRepoError, match=r'top 1: Depends b \(>= 5\) cannot be met from the repository \(b has only 2, 1\)'):
        apt_repo.resolve_closure(index, 'top', '1')


def test_other_architectures_are_ignored():
    index = index_of(stanza('top', '1', 'b'), stanza('b', '2', arch='arm64'), stanza('b', '1', arch='all'))
    assert names(apt_repo.resolve_closure(index, 'top', '1')) == {'top': '1', 'b': '1'}


def test_a_packages_paragraph_without_sha256_is_refused():
    with pytest.raises(apt_repo.AptRepoError, match='the paragraph of b lacks Sha256'):
        apt_repo.PackageIndex('Package: b\nVersion: 1\nFilename: ./b.deb\n')


def test_inrelease_body_and_release_of_the_testbed():
    body = apt_repo.clearsigned_body(fixture('testbed-InRelease'))
    assert body.startswith('Origin: sglang-stack test bed\n')
    release = apt_repo.parse_release(body)
    assert release['sha256']['Packages'] == ('06e2ae2ae414860b0bf8e2b4a85ca01b5612411f30fff6ac1bebcf22a95d5964', 1299)
    assert [e[0] for e in apt_repo.packages_entries(release)] == ['Packages', 'Packages.gz']


def test_clearsigned_body_removes_dash_escaping_and_refuses_other_text():
    text = ('-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\nOrigin: x\n- -----not armor\n'
            '-----BEGIN PGP SIGNATURE-----\n\nabc\n-----END PGP SIGNATURE-----\n')
    assert apt_repo.clearsigned_body(text) == 'Origin: x\n-----not armor\n'
    with pytest.raises(apt_repo.AptRepoError, match='not a clearsigned message'):
        apt_repo.clearsigned_body('Origin: x\n')
    with pytest.raises(apt_repo.AptRepoError, match='text before'):
        apt_repo.clearsigned_body('junk\n' + text)
    with pytest.raises(apt_repo.AptRepoError, match='no "-----BEGIN PGP SIGNATURE-----"'):
        apt_repo.clearsigned_body(text.split('-----BEGIN PGP SIGNATURE', maxsplit=1)[0])


def test_release_valid_until_and_missing_sums():
    release = 'Origin: NVIDIA\nValid-Until: Mon, 01 Jan 2024 00:00:00 UTC\nSHA256:\n %s 10 Packages.gz\n' % ('a' * 64)
    now = datetime.datetime(2023, 6, 1, tzinfo=datetime.timezone.utc)
    assert apt_repo.packages_entries(apt_repo.parse_release(release, now=now)) == [('Packages.gz', 'a' * 64, 10)]
    with pytest.raises(apt_repo.AptRepoError, match='Release expired'):
        apt_repo.parse_release(release)
    with pytest.raises(apt_repo.AptRepoError, match='no SHA256 sums'):
        apt_repo.parse_release('Origin: NVIDIA\nMD5Sum:\n %s 10 Packages\n' % ('a' * 32))
    with pytest.raises(apt_repo.AptRepoError, match='is not "<sha256> <size> <name>"'):
        apt_repo.parse_release('Origin: NVIDIA\nSHA256:\n zz 10 Packages\n')


def test_dearmor_gives_the_binary_key():
    binary = bytes(range(256)) * 3
    lines = base64.b64encode(binary).decode()
    body = '\n'.join(lines[i:i + 64] for i in range(0, len(lines), 64))
    armored = ('-----BEGIN PGP PUBLIC KEY BLOCK-----\nComment: test\n\n%s\n=abcd\n-----END PGP PUBLIC KEY BLOCK-----\n' % body).encode()
    assert apt_repo.dearmor(armored) == binary
    assert apt_repo.dearmor(binary) == binary
    with pytest.raises(apt_repo.AptRepoError, match='cannot be decoded'):
        apt_repo.dearmor(b'-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!!\n-----END PGP PUBLIC KEY BLOCK-----\n')


# --- Hostile input: numbers bounded, answers of the former pattern, text that is not UTF-8 (issue 18) ------------
#
# Before the rewrite, parse_relations('a' + 20,000 blanks + 'x') did not finish in 30 s: three bare blank runs
# stood side by side between the optional parts (cubic; 1,000 blanks took the seconds given in the issue 18
# table). A Release size or epoch of 5,000 digits, or '²', raised ValueError; a clearsigned message that was not
# UTF-8 raised UnicodeDecodeError; a field of 30,000 continuation lines was copied once per line.
# The hostile inputs are built for a length n (the tests use N); their time, against the former pattern's, is
# measured by tests/benchmark/parser_bench.py, not asserted here.

N = 100000
OLD_RELATION = re.compile(
    r'^(?P<name>[A-Za-z0-9][A-Za-z0-9+.\-]*)(?::(?P<arch>[A-Za-z0-9\-]+))?'
    r'\s*(?:\(\s*(?P<op><<|<=|=|>=|>>|<|>)\s*(?P<version>[^)\s]+)\s*\))?'
    r'\s*(?:\[[^\]]*\])?\s*(?:<[^>]*>\s*)*$'
)
LONG_RELATIONS = {
    'blanks_before_x': lambda n: 'a' + ' ' * n + 'x',
    'trailing_blanks': lambda n: 'a' + ' ' * n,
    'blanks_between_parts': lambda n: 'a' + ' ' * n + '(>= 1)' + ' ' * n + '[amd64]' + ' ' * n + '<!nocheck>' + ' ' * n,
    'unclosed_version': lambda n: 'a (>= ' + ' ' * n + 'x',
    'open_angles': lambda n: 'a ' + '<' * n,
    'profiles_then_x': lambda n: 'a ' + '<b> ' * (n // 4) + 'x',
    'long_version': lambda n: 'a (>= 1' + '.1' * (n // 2) + ')',
    'alternatives': lambda n: ' | '.join(['cuda-runtime-13-0 (>= 13.0.2)'] * (n // 30)),
}


def packages_with_a_hostile_depends(n):
    return fixture('nvidia-style-Packages').decode().replace('Depends: ', 'Depends: x' + ' ' * n + 'y, ', 1)


def field_of_continuation_lines(n):
    return 'Package: a\nDescription: x\n' + ' .\n' * (n // 3 * 2) + '\n'


def test_relation_pattern_answers_as_the_former_one():
    tokens = [' ', '(', '>=', '1', ')', '[', ']', '<', '>', ':b']
    for length in range(6):
        for combination in itertools.product(tokens, repeat=length):
            text = 'a' + ''.join(combination)
            old = OLD_RELATION.match(text)
            new = apt_repo._RELATION.match(text)
            assert (old and old.groupdict()) == (new and new.groupdict()), repr(text)


@pytest.mark.parametrize('name, parsed', [
    ('blanks_before_x', None),
    ('trailing_blanks', [[('a', None, None)]]),
    ('blanks_between_parts', [[('a', '>=', '1')]]),
    ('unclosed_version', None),
    ('open_angles', None),
    ('profiles_then_x', None),
    ('long_version', [[('a', '>=', '1' + '.1' * (N // 2))]]),
    ('alternatives', [[('cuda-runtime-13-0', '>=', '13.0.2')] * (N // 30)]),
])
def test_long_relations_are_linear(name, parsed):
    relation = LONG_RELATIONS[name](N)
    if parsed is None:
        with pytest.raises(apt_repo.AptRepoError, match='cannot be read'):
            apt_repo.parse_relations(relation)
    else:
        assert apt_repo.parse_relations(relation) == parsed


def test_packages_with_a_hostile_depends_is_refused_quickly():
    index = apt_repo.PackageIndex(packages_with_a_hostile_depends(N), 'amd64', DRIVERS)
    with pytest.raises(apt_repo.AptRepoError, match='cannot be read'):
        apt_repo.resolve_closure(index, 'cuda-toolkit-13-0', '13.0.1-1')


@pytest.mark.parametrize('size', ['1' * 5000, '\u00b2', '\u0663'])
def test_release_odd_sizes_are_refused_cleanly(size):
    body = apt_repo.clearsigned_body(fixture('testbed-InRelease'))
    hostile = body.replace(' 1299 Packages', ' %s Packages' % size)
    with pytest.raises(apt_repo.AptRepoError, match='is not "<sha256> <size> <name>"'):
        apt_repo.parse_release(hostile, now=datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc))


@pytest.mark.parametrize('epoch', ['1' * 5000, '\u00b2'])
def test_odd_epochs_are_refused_cleanly(epoch):
    with pytest.raises(apt_repo.AptRepoError, match='is not a number'):
        apt_repo.compare_versions('%s:1.0' % epoch, '1.0')


def test_clearsigned_message_that_is_not_utf8():
    data = fixture('testbed-InRelease').replace(b'Acquire-By-Hash: no', b'Acquire-By-Hash: n\xff')
    with pytest.raises(apt_repo.AptRepoError, match=r'not UTF-8 text \(byte \d+'):
        apt_repo.clearsigned_body(data)
    with pytest.raises(apt_repo.AptRepoError, match='not UTF-8'):
        apt_repo.parse_stanzas(fixture('nvidia-style-Packages') + b'Description: \xff\n')
    assert apt_repo.parse_stanzas(fixture('nvidia-style-Packages')) == apt_repo.parse_stanzas(fixture('nvidia-style-Packages').decode())
    # parse_release and PackageIndex take the bytes as read, so a caller needs no decode() that could raise.
    body = apt_repo.clearsigned_body(fixture('testbed-InRelease'))
    now = datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc)
    assert apt_repo.parse_release(body.encode('utf-8'), now=now) == apt_repo.parse_release(body, now=now)
    with pytest.raises(apt_repo.AptRepoError, match='not UTF-8'):
        apt_repo.parse_release(body.encode('utf-8').replace(b'Origin: ', b'Origin: \xff'), now=now)
    assert apt_repo.PackageIndex(fixture('nvidia-style-Packages'), 'amd64', DRIVERS).versions == nvidia_index().versions


def test_long_field_of_continuation_lines_is_linear():
    stanzas = apt_repo.parse_stanzas(field_of_continuation_lines(N))
    assert stanzas[0]['description'] == 'x' + '\n.' * (N // 3 * 2)


# --- gpgv's status lines, judged as apt's gpgv method judges them -------------------------------------------------
# Recorded from gpgv 2.2.40 (the keys of tests/unit/plugins/modules/test_apt_repo_fetch.py, which runs the real gpgv).

FPR = '0BF392B5B0B2D11D71405E4761824269AAD52CDF'
GOOD = ('[GNUPG:] NEWSIG\n[GNUPG:] KEY_CONSIDERED %s 0\n[GNUPG:] SIG_ID x 2026-12-04 1796416353\n'
        '[GNUPG:] GOODSIG 61824269AAD52CDF repo <repo@test.invalid>\n'
        '[GNUPG:] VALIDSIG %s 2026-12-04 1796416353 0 4 0 22 8 01 %s\n' % (FPR, FPR, FPR))


def test_gpgv_good_sha256_signature_gives_the_fingerprint():
    assert apt_repo.judge_gpgv_status(GOOD, 0) == [FPR]
    assert apt_repo.judge_gpgv_status(GOOD.replace(' 22 8 01 ', ' 22 10 01 '), 0) == [FPR]


@pytest.mark.parametrize('status, rc, reason', [
    (GOOD.replace('[GNUPG:] GOODSIG', '[GNUPG:] KEYEXPIRED 1577923200\n[GNUPG:] EXPKEYSIG'), 0,
     'signed by key 61824269AAD52CDF (repo <repo@test.invalid>), which expired on 2020-01-02 00:00:00 UTC'),
    (GOOD.replace('[GNUPG:] GOODSIG', '[GNUPG:] REVKEYSIG'), 0,
     'signed by key 61824269AAD52CDF (repo <repo@test.invalid>), which is revoked'),
    (GOOD.replace(' 22 8 01 ', ' 1 2 01 '), 0,
     'signed by key %s with digest SHA1, which apt refuses (it trusts only SHA224, SHA256, SHA384, SHA512)' % FPR),
    (GOOD.replace(' 22 8 01 ', ' 1 1 01 '), 0, 'with digest MD5, which apt refuses'),
    (GOOD.replace(' 22 8 01 ', ' 1 3 01 '), 0, 'with digest RIPEMD160, which apt refuses'),
    (GOOD.replace(' 22 8 01 ', ' 1 5 01 '), 0, 'with digest algorithm 5, which apt refuses'),
    (GOOD.replace('[GNUPG:] GOODSIG', '[GNUPG:] EXPSIG'), 1, 'the signature by key 61824269AAD52CDF (repo <repo@test.invalid>) has expired'),
    ('[GNUPG:] BADSIG 61824269AAD52CDF repo <repo@test.invalid>\n', 1, 'BADSIG: the signature by key 61824269AAD52CDF'),
    ('[GNUPG:] ERRSIG 61824269AAD52CDF 22 8 01 1796416353 9 -\n[GNUPG:] NO_PUBKEY 61824269AAD52CDF\n', 2,
     'NO_PUBKEY: signed by key 61824269AAD52CDF, which is not in the keyring'),
    ('[GNUPG:] NODATA 1\n', 2, 'NODATA: no signature found'),
    ('', 0, 'no good signature'),
    (GOOD, 2, 'gpgv exited with 2'),
    # VALIDSIG without GOODSIG for that key (another key's GOODSIG) is no good signature
    (GOOD.replace('GOODSIG 61824269AAD52CDF', 'GOODSIG 0000000000000000'), 0, 'no good signature'),
])
def test_gpgv_signatures_apt_refuses_are_refused(status, rc, reason):
    with pytest.raises(apt_repo.AptRepoError) as info:
        apt_repo.judge_gpgv_status(status, rc)
    assert reason in str(info.value)


def test_a_key_expired_elsewhere_in_the_keyring_refuses_nothing_alone():
    """KEYEXPIRED names a key of the keyring (an old subkey), not the signer: apt ignores it; so does this."""
    assert apt_repo.judge_gpgv_status('[GNUPG:] KEYEXPIRED 1577923200\n' + GOOD, 0) == [FPR]


def test_release_names_the_indexes_listed_only_with_weak_sums():
    release = apt_repo.parse_release('Origin: x\nMD5Sum:\n %s 10 Packages\nSHA256:\n %s 10 Contents\n' % ('a' * 32, 'b' * 64))
    assert apt_repo.packages_entries(release) == []
    assert apt_repo.weak_only_indexes(release) == ['Packages']
    with pytest.raises(apt_repo.AptRepoError, match='no SHA256 sums, only MD5Sum and SHA1, which apt does not trust'):
        apt_repo.parse_release('Origin: x\nMD5Sum:\n %s 10 Packages\nSHA1:\n %s 10 Packages\n' % ('a' * 32, 'a' * 40))

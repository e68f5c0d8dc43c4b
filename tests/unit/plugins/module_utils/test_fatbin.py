# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The fatbin reader against libraries built by nvcc 13.0 and the listings cuobjdump 13.2 printed for them.

Fixtures: tests/unit/fixtures/fatbin (built by its build.sh, see its README.md), the real
libk_multi.so built on the H200 host with its recorded cuobjdump listing (fixtures/real), and
real cubins of the flashinfer-cubin 0.6.4 wheel with cuobjdump 13.2 and 13.0 listings
(fixtures/real/flashinfer-cubin-0.6.4, see its README.md). The hostile inputs of issue 18 are
built by the tests themselves, each with bounds on what is read (counted, not timed) and on memory;
tests/benchmark/parser_bench.py times them.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tracemalloc

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import fatbin

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures')
FATBIN = os.path.join(FIXTURES, 'fatbin')
REAL = os.path.join(FIXTURES, 'real', 'h200-ubuntu2404-cuda13')
FLASHINFER = os.path.join(FIXTURES, 'real', 'flashinfer-cubin-0.6.4')
FLASHINFER_CUBINS = sorted(os.path.basename(p) for p in glob.glob(os.path.join(FLASHINFER, '*.cubin')))
LISTINGS = sorted(os.path.basename(p)[:-len('.cuobjdump.txt')] for p in glob.glob(os.path.join(FATBIN, '*.cuobjdump.txt')))


def fx(name):
    return os.path.join(FATBIN, name)


def read(path):
    with open(path) as handle:
        return handle.read()


def scan(name, **kwargs):
    return fatbin.scan_file(fx(name), **kwargs)


def section_of(path, wanted):
    """(offset, size) of a section, read independently of the code under test."""
    with open(path, 'rb') as handle:
        data = handle.read()
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
    headers = [struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx][4]
    for hdr in headers:
        name = data[strtab + hdr[0]:data.index(b'\0', strtab + hdr[0])].decode()
        if name == wanted:
            return hdr[4], hdr[5]
    raise KeyError(wanted)


def patched_copy(tmp_path, name, offset, data):
    """A copy of a fixture with data written at offset."""
    target = tmp_path / name
    shutil.copyfile(fx(name), str(target))
    with open(str(target), 'r+b') as handle:
        handle.seek(offset)
        handle.write(data)
    return str(target)


def entry(kind, sm, variant=''):
    """A synthetic image, as scan_file reports it, for the verdict rules."""
    return {'kind': kind, 'sm': sm, 'variant': variant, 'target': 'sm_%d%s' % (sm, variant)}


def synthetic(*entries):
    return {'error': None, 'entries': list(entries)}


# --- byte-for-byte against cuobjdump ---------------------------------------------------------


def test_every_fixture_has_a_recording():
    assert len(LISTINGS) == 20
    assert 'libk_multi_zstd.so' in LISTINGS and 'notelf.so' in LISTINGS


@pytest.mark.parametrize('name', LISTINGS)
def test_listing_equals_cuobjdump(name):
    result = scan(name)
    assert fatbin.render_cuobjdump_listing(result, name) == read(fx(name + '.cuobjdump.txt'))


def test_real_libk_multi_equals_recorded_cuobjdump():
    result = fatbin.scan_file(os.path.join(REAL, 'libk_multi.so'))
    expected = read(os.path.join(REAL, 'nvcc-build.txt'))
    assert fatbin.render_cuobjdump_listing(result, 'libk_multi.so') == expected
    assert expected.count('\n') == 7


def test_real_libk_multi_content():
    result = fatbin.scan_file(os.path.join(REAL, 'libk_multi.so'))
    assert result['error'] is None
    assert result['format'] == 'elf'
    assert result['source'] == 'sections'
    assert result['sections'] == ['.nv_fatbin']
    assert result['fatbins'] == 2  # the device-link fatbin of nvcc, then k.cu's
    assert result['counts'] == {'elf': 6, 'ptx': 1, 'other': 0}
    assert result['sass'] == ['sm_90', 'sm_100', 'sm_120']
    assert result['ptx'] == ['sm_120']
    assert [(e['kind'], e['arch'], e['fatbin']) for e in result['entries']] == [
        ('elf', 'sm_90', 0), ('elf', 'sm_100', 0), ('elf', 'sm_120', 0),
        ('elf', 'sm_90', 1), ('elf', 'sm_100', 1), ('ptx', 'sm_120', 1), ('elf', 'sm_120', 1)]
    ptx = result['entries'][5]
    assert ptx['compression'] == 'zstd' and ptx['uncompressed_size'] == 0x26b and ptx['version'] == '9.0'
    assert result['compression'] == ['zstd']
    assert fatbin.arch_verdict(result, 'sm_120') == 'sass'
    assert fatbin.arch_verdict(result, 'sm_90') == 'sass'


def test_listing_width_matches_real_libtorch_recording():
    """The recorded first 200 lines of libtorch_cuda.so: numbers right-aligned in four columns."""
    lines = read(os.path.join(REAL, 'cuobjdump.txt')).splitlines(True)[1:201]
    entries = []
    for line in lines:
        arch = line.rsplit('.', 2)[1]
        entries.append(dict(entry('elf', int(arch[3:])), arch=arch, listed=True, ident=None))
    result = {'error': None, 'format': 'elf', 'entries': entries}
    assert fatbin.render_cuobjdump_listing(result, 'libtorch_cuda.so') == ''.join(lines)
    assert lines[9] == 'ELF file   10: libtorch_cuda.10.sm_90.cubin\n'
    assert lines[99] == 'ELF file  100: libtorch_cuda.100.sm_90.cubin\n'


def test_listing_of_four_digit_numbers():
    entries = [dict(entry('elf', 86), arch='sm_86', listed=True, ident=None)] * 1000
    text = fatbin.render_cuobjdump_listing({'error': None, 'format': 'elf', 'entries': entries}, 'libtorch_cuda.so')
    assert text.splitlines()[-1] == 'ELF file 1000: libtorch_cuda.1000.sm_86.cubin'


def test_all_fatbin_equals_cuobjdump_all():
    result = scan('libk_rdc.so', all_fatbins=True)
    assert fatbin.render_cuobjdump_listing(result, 'libk_rdc.so') == read(fx('libk_rdc.so.cuobjdump-all.txt'))
    assert result['sections'] == ['.nv_fatbin', '__nv_relfatbin']


def test_elf_only_and_ptx_only_listings():
    result = scan('libk_multi_zstd.so')
    assert fatbin.render_cuobjdump_listing(result, 'libk_multi_zstd.so', ptx=False) == read(fx('libk_multi_zstd.so.cuobjdump-elf.txt'))
    assert fatbin.render_cuobjdump_listing(result, 'libk_multi_zstd.so', elf=False) == read(fx('libk_multi_zstd.so.cuobjdump-ptx.txt'))


@pytest.mark.parametrize('given, stem', [
    ('libk_sm90.so', 'libk_sm90'),
    ('/some/dir.x/libk_sm90.so', 'libk_sm90'),
    ('common_ops.abi3.so', 'common_ops.abi3'),
    ('libcudart.so.13', 'libcudart.so'),
    ('libfoo.so.13.0.1', 'libfoo.so.13.0'),
    ('noext', 'noext'),
    ('.hidden.so', '.hidden'),
    ('.hid', ''),
])
def test_listing_names_use_cuobjdump_stem(given, stem):
    """Observed with cuobjdump 13.2 on copies of libk_sm90.so under these names."""
    text = fatbin.render_cuobjdump_listing(scan('libk_sm90.so'), given)
    assert text == 'ELF file    1: %s.1.sm_90.cubin\nELF file    2: %s.2.sm_90.cubin\n' % (stem, stem)


# --- arch variants ---------------------------------------------------------------------------


def test_arch_specific_cubin_is_flagged_a():
    result = scan('libk_sm120a.so')
    assert result['sass'] == ['sm_120a']
    for image in result['entries']:
        assert image['flags'] & fatbin.FLAG_ARCH_SPECIFIC
        assert (image['sm'], image['variant'], image['arch'], image['target']) == (120, 'a', 'sm_120a', 'sm_120a')


def test_family_cubin_is_flagged_f_but_listed_without_it():
    result = scan('libk_sm120f.so')
    assert result['sass'] == ['sm_120f']
    for image in result['entries']:
        assert image['flags'] & fatbin.FLAG_FAMILY_SPECIFIC
        assert (image['variant'], image['arch'], image['target']) == ('f', 'sm_120', 'sm_120f')
    assert 'sm_120.cubin' in read(fx('libk_sm120f.so.cuobjdump.txt'))


def test_family_and_specific_ptx_keep_their_suffix():
    result = scan('libk_ptx120af.so')
    assert result['ptx'] == ['sm_120a', 'sm_120f']
    assert [(e['arch'], e['variant'], e['version']) for e in result['entries']] == [('sm_120a', 'a', '9.0'), ('sm_120f', 'f', '9.0')]
    assert result['counts'] == {'elf': 0, 'ptx': 2, 'other': 0}


def test_plain_cubins_have_no_variant_flag():
    for name, sm in (('libk_sm90.so', 90), ('libk_sm100.so', 100), ('libk_sm120.so', 120)):
        result = scan(name)
        assert result['sass'] == ['sm_%d' % sm]
        assert result['counts'] == {'elf': 2, 'ptx': 0, 'other': 0}
        for image in result['entries']:
            assert image['variant'] == '' and not image['flags'] & (fatbin.FLAG_ARCH_SPECIFIC | fatbin.FLAG_FAMILY_SPECIFIC)
            assert image['flags'] & fatbin.FLAG_64BIT and image['flags'] & fatbin.FLAG_LINUX


def test_ptx_only_libraries():
    assert scan('libk_ptx90.so')['ptx'] == ['sm_90']
    assert scan('libk_ptx90.so')['sass'] == []
    assert scan('libk_ptx120.so')['ptx'] == ['sm_120']


def test_multi_arch_sorted_numerically():
    result = scan('libk_multi_zstd.so')
    assert result['sass'] == ['sm_90', 'sm_90a', 'sm_100a', 'sm_120f']
    assert result['ptx'] == ['sm_120']
    assert result['counts'] == {'elf': 8, 'ptx': 1, 'other': 0}


# --- compression -----------------------------------------------------------------------------


def test_zstd_compressed_fatbin():
    result = scan('libk_multi_zstd.so')
    assert result['compressed'] is True and result['compression'] == ['zstd']
    for image in result['entries']:
        assert image['compression'] == 'zstd' and image['flags'] & fatbin.FLAG_COMPRESSED_ZSTD
        assert image['compressed_size'] <= image['size'] < image['uncompressed_size']


def test_lz4_compressed_fatbin():
    result = scan('libk_multi_lz4.so')
    assert result['compression'] == ['lz4']
    assert all(e['compression'] == 'lz4' and e['flags'] & fatbin.FLAG_COMPRESSED_LZ4 for e in result['entries'])


def test_default_build_compresses_ptx_only():
    result = scan('libk_rdc.so', all_fatbins=True)
    linked = [e for e in result['entries'] if e['section'] == '.nv_fatbin']
    assert [e['compressed'] for e in linked] == [False, False]
    assert [e['compression'] for e in scan('libk_sm90.so')['entries']] == [None, None]
    assert [e['compression'] for e in scan('libk_ptx120.so')['entries']] == ['zstd']


# --- sections, bare files, embedded fatbins, other kinds -------------------------------------


def test_relocatable_fatbin_is_read_only_without_linked_one():
    result = scan('libk_rdc.so')
    assert result['sections'] == ['.nv_fatbin']
    assert result['counts'] == {'elf': 2, 'ptx': 0, 'other': 0}
    assert fatbin.arch_verdict(result, 'sm_120') == 'sass'
    obj = scan('k_lto.o')
    assert obj['sections'] == ['__nv_relfatbin']


def test_lto_image_is_counted_not_listed():
    result = scan('k_lto.o')
    assert result['counts'] == {'elf': 1, 'ptx': 0, 'other': 1}
    lto = result['entries'][0]
    assert (lto['kind'], lto['kind_code'], lto['target'], lto['listed']) == ('lto', 8, 'sm_120', False)
    assert lto['flags'] & fatbin.FLAG_OBFUSCATED
    assert result['sass'] == ['sm_90'] and result['ptx'] == []
    assert fatbin.arch_verdict(result, 'sm_120') == 'missing'


def test_debug_images_carry_an_identifier():
    result = scan('libk_debug.so')
    assert [e['ident'] for e in result['entries']] == ['k.cu', 'k.cu', 'k.cu']
    assert all(e['debug'] for e in result['entries'][1:])


def test_bare_fatbin_file():
    result = scan('k_multi.fatbin')
    assert (result['format'], result['source'], result['fatbins']) == ('fatbin', 'file', 1)
    assert result['sass'] == ['sm_90', 'sm_120'] and result['ptx'] == ['sm_120']


def test_bare_cubin_file():
    result = scan('k_sm120a.cubin')
    assert (result['format'], result['source']) == ('cubin', 'file')
    assert [(e['kind'], e['sm'], e['variant'], e['arch']) for e in result['entries']] == [('elf', 120, 'a', 'sm_120a')]


def test_embedded_fatbin_found_by_magic_but_not_listed():
    result = scan('libk_embedded.so')
    assert result['error'] is None
    assert result['source'] == 'embedded' and result['sections'] == []
    assert result['embedded'] == 3 and result['fatbins'] == 1
    assert result['sass'] == ['sm_90', 'sm_120'] and result['ptx'] == ['sm_120']
    assert not any(e['listed'] for e in result['entries'])
    assert fatbin.render_cuobjdump_listing(result, 'libk_embedded.so') == ''
    assert fatbin.arch_verdict(result, 'sm_120') == 'sass'
    never = scan('libk_embedded.so', embedded='never')
    assert never['error'] == 'no_fatbin'


def test_embedded_always_also_looks_outside_sections():
    result = scan('libk_sm90.so', embedded='always')
    assert result['embedded'] == 0 and result['counts']['elf'] == 2
    assert fatbin.render_cuobjdump_listing(result, 'libk_sm90.so') == read(fx('libk_sm90.so.cuobjdump.txt'))
    with pytest.raises(ValueError):
        fatbin.scan_file(fx('libk_sm90.so'), embedded='sometimes')


def test_magic_without_a_valid_header_is_not_a_fatbin(tmp_path):
    """The bare magic number (as in cudart's registration check) without a valid header is ignored.

    With no section table (e_shoff 0) the whole file is searched.
    """
    target = tmp_path / 'libmagic.so'
    shutil.copyfile(fx('libplain.so'), str(target))
    with open(str(target), 'r+b') as handle:
        handle.seek(0x28)
        handle.write(struct.pack('<Q', 0))
        handle.seek(0, 2)
        handle.write(b'\0' * 3 + fatbin.FATBIN_MAGIC_BYTES + b'\x01\x00\x10\x00' + b'\xff' * 64)
    result = fatbin.scan_file(str(target))
    assert result['error'] == 'no_fatbin' and result['sections'] == []


def test_embedded_search_covers_data_sections_only(tmp_path):
    """A fatbin appended past the sections is not loadable data: found only without a section table."""
    with open(fx('k_multi.fatbin'), 'rb') as handle:
        blob = handle.read()
    target = tmp_path / 'libappended.so'
    shutil.copyfile(fx('libplain.so'), str(target))
    with open(str(target), 'ab') as handle:
        handle.write(b'\0' * 5 + blob)
    assert fatbin.scan_file(str(target))['error'] == 'no_fatbin'
    with open(str(target), 'r+b') as handle:
        handle.seek(0x28)
        handle.write(struct.pack('<Q', 0))
    result = fatbin.scan_file(str(target))
    assert (result['error'], result['source'], result['embedded']) == (None, 'embedded', 3)
    assert result['sass'] == ['sm_90', 'sm_120'] and result['ptx'] == ['sm_120']


# --- error kinds -----------------------------------------------------------------------------


def test_missing_file(tmp_path):
    result = fatbin.scan_file(str(tmp_path / 'nope.so'))
    assert result['error'] == 'missing'
    assert fatbin.arch_verdict(result) == 'unreadable'
    assert fatbin.render_cuobjdump_listing(result, 'nope.so') == ''


def test_directory_is_io_error(tmp_path):
    assert fatbin.scan_file(str(tmp_path))['error'] == 'io_error'


def test_text_file_named_so():
    result = scan('notelf.so')
    assert result['error'] == 'not_elf'
    assert fatbin.arch_verdict(result) == 'unreadable'


def test_plain_elf_has_no_fatbin():
    result = scan('libplain.so')
    assert (result['error'], result['format']) == ('no_fatbin', 'elf')
    assert fatbin.arch_verdict(result) == 'missing'


@pytest.mark.parametrize('name', ['libk_truncated.so', 'empty.so'])
def test_truncated(name):
    result = scan(name)
    assert result['error'] == 'truncated'
    assert result['entries'] == [] and result['sass'] == []
    assert fatbin.arch_verdict(result) == 'unreadable'


def test_elf32_is_unsupported(tmp_path):
    path = patched_copy(tmp_path, 'libk_sm90.so', 4, b'\x01')
    assert fatbin.scan_file(path)['error'] == 'unsupported'


def test_bad_fatbin_magic_is_corrupt(tmp_path):
    offset, _size = section_of(fx('libk_sm90.so'), '.nv_fatbin')
    path = patched_copy(tmp_path, 'libk_sm90.so', offset, b'\xde\xad\xbe\xef')
    result = fatbin.scan_file(path)
    assert result['error'] == 'corrupt'
    assert fatbin.arch_verdict(result) == 'unreadable'


def test_entry_larger_than_its_fatbin_is_corrupt(tmp_path):
    offset, _size = section_of(fx('libk_sm90.so'), '.nv_fatbin')
    path = patched_copy(tmp_path, 'libk_sm90.so', offset + 16 + 8, struct.pack('<Q', 1 << 40))
    assert fatbin.scan_file(path)['error'] == 'corrupt'


def test_fatbin_larger_than_its_section_is_corrupt(tmp_path):
    offset, _size = section_of(fx('libk_sm90.so'), '.nv_fatbin')
    path = patched_copy(tmp_path, 'libk_sm90.so', offset + 8, struct.pack('<Q', 1 << 20))
    assert fatbin.scan_file(path)['error'] == 'corrupt'


def test_section_past_end_of_file_is_truncated(tmp_path):
    """A section table that says .nv_fatbin goes on past the end of the file."""
    with open(fx('libk_sm90.so'), 'rb') as handle:
        data = handle.read()
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shnum, shstrndx = struct.unpack_from('<HH', data, 0x3c)
    strtab = struct.unpack_from('<IIQQQQIIQQ', data, shoff + 64 * shstrndx)[4]
    for index in range(shnum):
        name_off = struct.unpack_from('<I', data, shoff + 64 * index)[0]
        if data[strtab + name_off:].startswith(b'.nv_fatbin\0'):
            break
    path = patched_copy(tmp_path, 'libk_sm90.so', shoff + 64 * index + 32, struct.pack('<Q', len(data)))
    result = fatbin.scan_file(path)
    assert result['error'] == 'truncated'
    assert '.nv_fatbin' in result['error_detail']


# --- verdict rules ---------------------------------------------------------------------------


@pytest.mark.parametrize('image, required, verdict', [
    (entry('elf', 120), 'sm_120', 'sass'),
    (entry('elf', 120, 'a'), 'sm_120', 'sass'),
    (entry('elf', 120, 'f'), 'sm_120', 'sass'),
    (entry('elf', 120), 'sm_121', 'sass'),  # same major, later minor
    (entry('elf', 120, 'f'), 'sm_121', 'sass'),  # family
    (entry('elf', 120, 'a'), 'sm_121', 'missing'),  # arch-specific: exactly 12.0
    (entry('elf', 121), 'sm_120', 'missing'),
    (entry('elf', 100), 'sm_120', 'missing'),  # another major
    (entry('elf', 100, 'f'), 'sm_103', 'sass'),
    (entry('elf', 100, 'a'), 'sm_103', 'missing'),
    (entry('elf', 90), 'sm_120', 'missing'),
    (entry('ptx', 120), 'sm_120', 'ptx_jit'),
    (entry('ptx', 90), 'sm_120', 'ptx_jit'),  # plain PTX JITs for any later capability
    (entry('ptx', 120), 'sm_90', 'missing'),
    (entry('ptx', 121), 'sm_120', 'missing'),
    (entry('ptx', 120, 'a'), 'sm_120', 'ptx_jit'),
    (entry('ptx', 120, 'a'), 'sm_121', 'missing'),
    (entry('ptx', 120, 'f'), 'sm_121', 'ptx_jit'),
    (entry('ptx', 100, 'f'), 'sm_120', 'missing'),
    (entry('lto', 120), 'sm_120', 'missing'),
])
def test_verdict_rules(image, required, verdict):
    assert fatbin.arch_verdict(synthetic(image), required) == verdict


def test_sass_wins_over_ptx():
    result = synthetic(entry('ptx', 120), entry('elf', 120, 'a'))
    assert fatbin.arch_verdict(result) == 'sass'
    assert fatbin.matching_targets(result) == {'sass': ['sm_120a'], 'ptx': ['sm_120']}


@pytest.mark.parametrize('error, verdict', [
    ('missing', 'unreadable'), ('io_error', 'unreadable'), ('not_elf', 'unreadable'), ('unsupported', 'unreadable'),
    ('truncated', 'unreadable'), ('corrupt', 'unreadable'), ('no_fatbin', 'missing'),
])
def test_verdict_of_errors(error, verdict):
    assert fatbin.arch_verdict({'error': error, 'entries': []}) == verdict


@pytest.mark.parametrize('name, verdicts', [
    ('libk_sm90.so', {'sm_120': 'missing', 'sm_90': 'sass'}),
    ('libk_sm100.so', {'sm_120': 'missing', 'sm_100': 'sass', 'sm_103': 'sass'}),
    ('libk_sm120.so', {'sm_120': 'sass', 'sm_121': 'sass', 'sm_100': 'missing'}),
    ('libk_sm120a.so', {'sm_120': 'sass', 'sm_121': 'missing'}),
    ('libk_sm120f.so', {'sm_120': 'sass', 'sm_121': 'sass'}),
    ('libk_ptx90.so', {'sm_120': 'ptx_jit', 'sm_90': 'ptx_jit', 'sm_89': 'missing'}),
    ('libk_ptx120.so', {'sm_120': 'ptx_jit', 'sm_90': 'missing'}),
    ('libk_ptx120af.so', {'sm_120': 'ptx_jit', 'sm_121': 'ptx_jit', 'sm_130': 'missing'}),
    ('libk_multi_zstd.so', {'sm_120': 'sass', 'sm_121': 'sass', 'sm_100': 'sass', 'sm_103': 'missing', 'sm_90': 'sass'}),
    ('libk_multi_lz4.so', {'sm_120': 'sass', 'sm_90': 'sass'}),
    ('libplain.so', {'sm_120': 'missing'}),
    ('notelf.so', {'sm_120': 'unreadable'}),
])
def test_fixture_verdicts(name, verdicts):
    result = scan(name)
    assert dict((arch, fatbin.arch_verdict(result, arch)) for arch in verdicts) == verdicts


@pytest.mark.parametrize('text, parsed', [
    ('sm_120', (12, 0, '')), ('sm_120a', (12, 0, 'a')), ('compute_120f', (12, 0, 'f')), ('120', (12, 0, '')),
    ('12.0', (12, 0, '')), ('12.1a', (12, 1, 'a')), ('SM_90', (9, 0, '')), ('sm_103', (10, 3, '')),
])
def test_parse_arch(text, parsed):
    assert fatbin.parse_arch(text) == parsed


@pytest.mark.parametrize('text', ['', 'sm_', 'sm_120x', 'blackwell', '12', 'sm_12', '12.10'])
def test_parse_arch_rejects(text):
    with pytest.raises(ValueError):
        fatbin.parse_arch(text)


def test_required_suffix_is_ignored():
    result = scan('libk_sm120a.so')
    assert fatbin.arch_verdict(result, 'sm_120a') == fatbin.arch_verdict(result, '12.0') == 'sass'


# --- walking directories ---------------------------------------------------------------------


def test_scan_paths_over_fixture_directory():
    out = fatbin.scan_paths([FATBIN], 'sm_120')
    summary = out['summary']
    by_name = dict((os.path.basename(r['path']), r) for r in out['files'])
    assert sorted(by_name) == sorted(n for n in LISTINGS if n.endswith('.so'))
    assert summary['scanned'] == 17
    assert sorted(os.path.basename(p) for p in summary['sass']) == [
        'libk_embedded.so', 'libk_multi_lz4.so', 'libk_multi_zstd.so', 'libk_rdc.so', 'libk_sm120.so', 'libk_sm120a.so',
        'libk_sm120f.so']
    assert sorted(os.path.basename(p) for p in summary['ptx_jit']) == [
        'libk_debug.so', 'libk_ptx120.so', 'libk_ptx120af.so', 'libk_ptx90.so']
    assert sorted(os.path.basename(p) for p in summary['missing']) == ['libk_sm100.so', 'libk_sm90.so']
    assert sorted(os.path.basename(p) for p in summary['unreadable']) == ['empty.so', 'libk_truncated.so']
    assert [os.path.basename(p) for p in summary['no_device_code']] == ['libplain.so']
    assert [os.path.basename(p) for p in summary['skipped']] == ['notelf.so']
    assert sorted(os.path.basename(p) for p in summary['failed']) == ['empty.so', 'libk_sm100.so', 'libk_sm90.so', 'libk_truncated.so']
    assert summary['ok'] is False
    assert by_name['libplain.so']['verdict'] == 'missing' and by_name['libplain.so']['ok'] is True
    assert 'entries' not in by_name['libk_sm120.so']
    assert fatbin.summary_message(summary) == (
        'sm_120: 17 file(s) scanned: 7 sass, 4 ptx_jit, 2 missing, 2 unreadable, 1 no_device_code, 1 skipped')


def test_scan_paths_explicit_files_must_carry_the_arch(tmp_path):
    out = fatbin.scan_paths([fx('libplain.so'), fx('notelf.so'), str(tmp_path / 'gone.so')], 'sm_120')
    assert [r['status'] for r in out['files']] == ['missing', 'unreadable', 'unreadable']
    assert [r['explicit'] for r in out['files']] == [True, True, True]
    assert len(out['summary']['failed']) == 3


def test_scan_paths_accept_ptx(tmp_path):
    out = fatbin.scan_paths([fx('libk_ptx120.so')], 'sm_120', accept_ptx=False)
    assert out['summary']['ptx_jit'] == [fx('libk_ptx120.so')]
    assert out['summary']['failed'] == [fx('libk_ptx120.so')]
    assert fatbin.scan_paths([fx('libk_ptx120.so')], 'sm_120')['summary']['ok'] is True


def test_collect_files_dedups_symlinks_and_honours_patterns(tmp_path):
    lib = tmp_path / 'lib'
    sub = lib / 'sub'
    sub.mkdir(parents=True)
    shutil.copyfile(fx('libk_sm120.so'), str(lib / 'libk.so.1.2'))
    os.symlink('libk.so.1.2', str(lib / 'libk.so.1'))
    os.symlink('libk.so.1', str(lib / 'libk.so'))
    os.symlink(fx('libk_sm90.so'), str(lib / 'libother.so'))  # target outside: kept
    shutil.copyfile(fx('libk_sm90.so'), str(sub / 'common_ops.abi3.so'))
    (lib / 'README.txt').write_text('not a library')
    (tmp_path / 'empty').mkdir()
    files, empty = fatbin.collect_files([str(lib), str(tmp_path / 'empty')])
    assert files == [(str(lib / 'libk.so.1.2'), False), (str(sub / 'common_ops.abi3.so'), False), (str(lib / 'libother.so'), False)]
    assert empty == [str(tmp_path / 'empty')]
    files, _empty = fatbin.collect_files([str(lib)], recurse=False)
    assert [os.path.basename(p) for p, _e in files] == ['libk.so.1.2', 'libother.so']
    files, _empty = fatbin.collect_files([str(lib)], patterns=['common_ops*'])
    assert [os.path.basename(p) for p, _e in files] == ['common_ops.abi3.so']
    files, _empty = fatbin.collect_files([str(lib / 'libk.so'), str(lib)])
    assert files[0] == (str(lib / 'libk.so'), True) and len(files) == 3
    out = fatbin.scan_paths([str(lib), str(tmp_path / 'empty')])
    assert out['summary']['empty_paths'] == [str(tmp_path / 'empty')]
    assert out['summary']['failed'][-1] == str(tmp_path / 'empty')


# --- the command line ------------------------------------------------------------------------


def test_cli_prints_the_cuobjdump_listing(capsys):
    assert fatbin._main([os.path.join(REAL, 'libk_multi.so')]) == 0
    assert capsys.readouterr().out == read(os.path.join(REAL, 'nvcc-build.txt'))


def test_cli_options_and_errors(capsys):
    assert fatbin._main(['--list-elf', fx('libk_multi_zstd.so')]) == 0
    assert capsys.readouterr().out == read(fx('libk_multi_zstd.so.cuobjdump-elf.txt'))
    assert fatbin._main(['-all', fx('libk_rdc.so')]) == 0
    assert capsys.readouterr().out == read(fx('libk_rdc.so.cuobjdump-all.txt'))
    assert fatbin._main([fx('libplain.so'), fx('libk_sm120a.so'), '--verdict', 'sm_120']) == 255
    captured = capsys.readouterr()
    assert captured.out == ('== %s\nverdict sm_120: missing\n== %s\n%sverdict sm_120: sass\n'
                            % (fx('libplain.so'), fx('libk_sm120a.so'), read(fx('libk_sm120a.so.cuobjdump.txt'))))
    assert 'no_fatbin' in captured.err
    assert fatbin._main([fx('libk_embedded.so')]) == 0
    assert '3 image(s) outside the fatbin sections' in capsys.readouterr().err


def test_cli_json(capsys):
    assert fatbin._main(['--json', '--verdict', '12.0', fx('libk_sm120f.so')]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data['sass'] == ['sm_120f'] and data['verdict'] == 'sass' and len(data['entries']) == 2


# --- real bare cubins: flashinfer-cubin 0.6.4 ------------------------------------------------


def flashinfer(name):
    return os.path.join(FLASHINFER, name)


def device_listings():
    """{file name: its listing} from the cuobjdump 13.0 run on the H200 machine (stdout lines only)."""
    out = {}
    for block in read(flashinfer('cuobjdump-13.0-h200.txt')).split('\n== ')[1:]:
        path, _nl, rest = block.partition('\n')
        lines = [line + '\n' for line in rest.split('\n') if line.startswith(('ELF file', 'PTX file'))]
        status = [line for line in rest.split('\n') if line.startswith('rc=')]
        out.setdefault(os.path.basename(path), (''.join(lines), status))
    return out


def test_flashinfer_fixtures_are_the_recorded_files():
    sums = dict(line.split()[::-1] for line in read(flashinfer('SHA256SUMS')).splitlines())
    assert sorted(sums) == FLASHINFER_CUBINS and len(FLASHINFER_CUBINS) == 4
    for name in FLASHINFER_CUBINS:
        with open(flashinfer(name), 'rb') as handle:
            assert hashlib.sha256(handle.read()).hexdigest() == sums[name]


@pytest.mark.parametrize('name', FLASHINFER_CUBINS)
def test_flashinfer_cubin_listing_equals_cuobjdump_13_2_and_13_0(name):
    result = fatbin.scan_file(flashinfer(name))
    assert (result['error'], result['format'], result['source']) == (None, 'cubin', 'file')
    listing = fatbin.render_cuobjdump_listing(result, name)
    assert listing == read(flashinfer(name + '.cuobjdump.txt'))
    assert device_listings()[name] == (listing, ['rc=0'])


def test_device_recording_covers_every_e_flags_group():
    """The H200 run also listed two files of each of the wheel's six e_flags groups: all named as by 13.2."""
    listings = device_listings()
    assert len(listings) == 12  # the two smallest of each group; the four fixtures are among them
    names = sorted(listing.split('.')[-2] for listing, _status in listings.values())
    assert names == ['sm_100'] * 2 + ['sm_100a'] * 4 + ['sm_103a'] * 6
    for name, (listing, status) in listings.items():
        assert status == ['rc=0'] and listing == 'ELF file    1: %s.%s.cubin\n' % (name[:-len('.cubin')], listing.split('.')[-2])


@pytest.mark.parametrize('name, e_flags, sm, variant, arch, target', [
    # ptxas 12.9 -arch sm_100f: bit 0x8 clear, the note says f, cuobjdump names it sm_100
    ('Gemm_Bfloat16_E4m3E4m3_Fp32_t128x8x256_s4_et128x8_m128x8x32_cga1x1x2_16dp256b_rM_splitK2_BN_transOut_schedS_sm100f.cubin',
     0x06006402, 100, 'f', 'sm_100', 'sm_100f'),
    # nvasm_internal, no -arch in the note: only bit 0x8 says a
    ('fmhaSm100aKernel_QE4m3KvE2m1OE4m3H64PagedKvDenseP64VarSeqQ8Kv128StaticSwapsAbForGen.cubin', 0x0f00640c, 100, 'a', 'sm_100a', 'sm_100a'),
    ('fmhaSm103aKernel_QE4m3KvE2m1OE4m3H64PagedKvDenseP64VarSeqQ8Kv128StaticSwapsAbForGen.cubin', 0x0f00670c, 103, 'a', 'sm_103a', 'sm_103a'),
    # ptxas 12.9 -arch sm_103a: both the bit and the note
    ('fmhaSm103aKernel_QkvE4m3OBfloat16H256PackedQkvCausalVarSeqQ128Kv128StaticContext.cubin', 0x0600670a, 103, 'a', 'sm_103a', 'sm_103a'),
])
def test_flashinfer_cubin_arch(name, e_flags, sm, variant, arch, target):
    (image,) = fatbin.scan_file(flashinfer(name))['entries']
    assert (image['flags'], image['sm'], image['variant'], image['arch'], image['target']) == (e_flags, sm, variant, arch, target)
    assert bool(image['flags'] & fatbin.EF_CUDA_ACCELERATORS) == (variant == 'a' and e_flags != 0x06006402)


def test_nvcc_13_arch_specific_cubin_without_the_bit_still_reads_its_note():
    """nvcc 13.0 leaves bit 0x8 clear for sm_120a (e_flags as for sm_120); cuobjdump 13.2 still says sm_120a."""
    (image,) = scan('k_sm120a.cubin')['entries']
    assert image['flags'] == 0x06007802 and not image['flags'] & fatbin.EF_CUDA_ACCELERATORS
    assert image['arch'] == 'sm_120a'


@pytest.mark.parametrize('required, verdicts', [
    # per file, in FLASHINFER_CUBINS order: sm_100f, sm_100a, sm_103a (no note), sm_103a (note)
    ('sm_100', ['sass', 'sass', 'missing', 'missing']),
    ('sm_103', ['sass', 'missing', 'sass', 'sass']),   # the family cubin runs on 10.3, sm_100a does not
    ('sm_120', ['missing'] * 4),                        # the package carries nothing for SM120
])
def test_flashinfer_cubin_verdicts(required, verdicts):
    assert [fatbin.arch_verdict(fatbin.scan_file(flashinfer(n)), required) for n in FLASHINFER_CUBINS] == verdicts


# --- hostile input (issue 18): bounded reads and memory -----------------------------------------


def elf_without_sections():
    """An x86-64 ELF header with no section table: the whole file is searched for fatbins."""
    ident = b'\x7fELF' + bytes([2, 1, 1, 0]) + b'\0' * 8
    return struct.pack('<16sHHIQQQIHHHHHH', ident, 3, 62, 1, 0, 0, 0, 0, 64, 56, 0, 64, 0, 0)


def fatbin_header(size):
    return fatbin.FATBIN_MAGIC_BYTES + struct.pack('<HHQ', 1, 16, size)


def entry_header(psize=0, arch=100, hsize=64):
    return struct.pack('<HHIQIIHHIIIQQQ', 2, 0x0101, hsize, psize, 0, 0, 8, 1, arch, 0, 0, 0x11, 0, 0)


def overlapping_candidates(units, exact=None):
    """A fatbin magic every 80 bytes, each claiming a fatbin up to the end of the file.

    Unit i: a 64-byte entry header whose 16-byte payload is candidate i+1's fatbin header, so
    every candidate's entries run on through all later units; the last entry's payload runs past
    every candidate, so all fail - after walking the rest of the file (quadratic, before). With
    exact=k, candidate k instead claims the size that ends at the start of the last entry, the
    one candidate that holds (its units - k entries, then the search goes on after it).
    """
    out = bytearray(elf_without_sections())
    total = len(out) + 16 + units * 80 + 64
    ends = []
    headers = [len(out)]
    out += b'\0' * 16
    for _i in range(units):
        out += entry_header(psize=16)
        headers.append(len(out))
        out += b'\0' * 16
    last = len(out)
    out += entry_header(psize=1 << 40)
    for number, at in enumerate(headers):
        end = last if number == exact else total
        ends.append(end)
        out[at:at + 16] = fatbin_header(end - at - 16)
    assert len(out) == total
    return bytes(out)


def naive_embedded(data):
    """The embedded search as it was (re-walk every candidate), written independently: [(fatbin, entries)]."""
    found = []
    pos = data.find(fatbin.FATBIN_MAGIC_BYTES)
    while pos >= 0:
        ok = pos + 80 <= len(data)
        if ok:
            _magic, version, hsize, fsize = struct.unpack_from('<IHHQ', data, pos)
            end = pos + 16 + fsize
            ok = version == 1 and hsize == 16 and fsize >= 64 and end <= len(data)
        entries = []
        if ok:
            at = pos + 16
            while at < end and ok:
                ehsize, psize = struct.unpack_from('<IQ', data, at + 4)
                ok = at + 64 <= end and ehsize >= 64 and at + ehsize + psize <= end
                entries.append(at)
                at += ehsize + psize
        if ok:
            found.append((pos, entries))
            pos = data.find(fatbin.FATBIN_MAGIC_BYTES, end)
        else:
            pos = data.find(fatbin.FATBIN_MAGIC_BYTES, pos + 1)
    return found


def claiming_fatbin(size):
    """A bare fatbin whose header claims size bytes of entries; one 64-byte entry follows, nothing else."""
    return fatbin_header(size) + entry_header()


def write_padded_fatbin(path, padding):
    """A bare fatbin of one sm_120 entry, then padding bytes of (sparse) zeros."""
    with open(str(path), 'wb') as handle:
        handle.write(fatbin_header(64) + entry_header(arch=120))
        handle.truncate(80 + padding)


def write_many_entries(path, count):
    """One fatbin container of count empty 64-byte sm_100 entries."""
    with open(str(path), 'wb') as handle:
        handle.write(fatbin_header(64 * count))
        handle.write(entry_header() * count)


def counted_scan(path, **kwargs):
    """scan_file() and the work it did, counted (not timed, tests/benchmark/parser_bench.py times it).

    reads, bytes: the os.pread calls and the bytes they returned; largest: the most bytes one call asked
    for; end: the furthest offset read; headers: the entry headers the embedded search examined.
    """
    work = {'reads': 0, 'bytes': 0, 'largest': 0, 'end': 0, 'headers': 0}
    pread = os.pread
    next_entry = fatbin._Chains._next

    def counting_pread(fd, length, offset):
        data = pread(fd, length, offset)
        work['reads'] += 1
        work['bytes'] += len(data)
        work['largest'] = max(work['largest'], length)
        work['end'] = max(work['end'], offset + len(data))
        return data

    def counting_next(chains, position):
        work['headers'] += 1
        return next_entry(chains, position)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, 'pread', counting_pread)
        patch.setattr(fatbin._Chains, '_next', counting_next)
        result = fatbin.scan_file(path, **kwargs)
    return result, work


def test_overlapping_embedded_candidates_take_linear_time(tmp_path):
    """~320 KB, 4,000 candidates that each walk to the end of the file: 25 s before, now 0.02 s.

    The former search walked each candidate's entries anew (about 8 million entry headers here); now each
    entry header is examined once and the file is read a few times over at most.
    """
    path = tmp_path / 'libcrafted.so'
    path.write_bytes(overlapping_candidates(4000))
    size = path.stat().st_size
    assert 300000 < size < 330000
    result, work = counted_scan(str(path))
    assert (result['error'], result['entries'], naive_embedded(path.read_bytes()[:20000])) == ('no_fatbin', [], [])
    assert 4000 < work['headers'] <= 4001
    assert 0 < work['bytes'] <= 4 * size and work['largest'] <= fatbin._Reader.CHUNK


@pytest.mark.parametrize('units, exact', [(50, 0), (50, 17), (50, 49), (50, 50), (4000, 2500)])
def test_linear_search_finds_what_the_naive_search_finds(tmp_path, units, exact):
    data = overlapping_candidates(units, exact)
    path = tmp_path / 'libcrafted.so'
    path.write_bytes(data)
    result, work = counted_scan(str(path))
    assert units < work['headers'] <= units + 1  # each entry header once (the naive search: about units ** 2 / 2)
    assert 0 < work['bytes'] <= 4 * len(data)
    found = [(e['fatbin'], e['offset']) for e in result['entries']]
    if units > exact:
        assert (result['error'], result['source'], result['fatbins']) == (None, 'embedded', 1)
        first = len(elf_without_sections()) + 16 + exact * 80  # candidate 'exact': its entries follow its header
        assert found == [(0, first + i * 80) for i in range(units - exact)]
    else:  # the candidate would be empty: not a fatbin
        assert (result['error'], found) == ('no_fatbin', [])
    if units <= 50:
        assert [at for _pos, entries in naive_embedded(data) for at in entries] == [offset for _f, offset in found]


@pytest.mark.parametrize('name', ['libk_embedded.so', 'libk_multi_zstd.so', 'libk_debug.so', 'libk_rdc.so'])
def test_linear_search_agrees_with_the_naive_search_on_the_fixtures(name):
    """Outside the fatbin sections, the images found are those the old search found."""
    with open(fx(name), 'rb') as handle:
        data = handle.read()
    skip = []
    for section in fatbin.FATBIN_SECTIONS:
        try:
            offset, size = section_of(fx(name), section)
        except KeyError:
            continue
        skip.append((offset, offset + size))
    expected = [at for pos, entries in naive_embedded(data) if not any(a <= pos < b for a, b in skip) for at in entries]
    result = fatbin.scan_file(fx(name), embedded='always')
    assert [e['offset'] for e in result['entries'] if e['section'] is None] == expected
    assert (len(expected) > 0) == (name == 'libk_embedded.so')


def test_fatbin_claiming_a_gigabyte_is_not_read(tmp_path):
    path = tmp_path / 'claims.fatbin'
    path.write_bytes(claiming_fatbin(1 << 30))
    tracemalloc.start()
    try:
        result, work = counted_scan(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result['error'] == 'truncated' and '1073741840' in result['error_detail']
    assert peak < (1 << 20)
    # The 80 bytes there are, in one read no larger than a block: nothing is asked for by the size claimed.
    assert (work['reads'], work['bytes']) == (1, 80) and work['largest'] <= fatbin._Reader.BLOCK


def test_zero_padding_is_read_in_bounded_chunks(tmp_path):
    """A bare fatbin then 64 MiB of (sparse) zeros; with 1 GiB it took 10 s and 2 GB before (slice and strip of the gap)."""
    path = tmp_path / 'padded.fatbin'
    write_padded_fatbin(path, 64 << 20)
    size = 80 + (64 << 20)
    tracemalloc.start()
    try:
        result, work = counted_scan(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (result['error'], result['fatbins'], result['sass']) == (None, 1, ['sm_120'])
    assert peak < (4 << 20)
    # The padding is read to the end of the file, each byte once (and a block more), a chunk at a time.
    assert work['end'] == size and size <= work['bytes'] <= size + fatbin._Reader.BLOCK
    assert work['largest'] <= fatbin._Reader.CHUNK and work['reads'] <= size // fatbin._Reader.CHUNK + 2


def test_a_million_entries_stop_at_the_limit(tmp_path):
    """One million empty 64-byte entries: 4 s and 750 MB before (21 s and 918 MB in issue 18)."""
    count = 1000000
    path = tmp_path / 'many.fatbin'
    write_many_entries(path, count)
    result, work = counted_scan(str(path))
    assert result['error'] is None and result['entries_truncated'] is True
    assert len(result['entries']) == fatbin.MAX_ENTRIES == 65536
    assert result['limit_detail'] == 'more than 65536 images: stopped reading after 65536'
    assert result['fatbins'] == 0  # the container was not read to its end
    # Nor was the file: the header and the entries up to the limit, a block at a time (the file has 64 MB).
    listed = 16 + 64 * (fatbin.MAX_ENTRIES + 1)
    assert 64 * fatbin.MAX_ENTRIES < work['bytes'] <= listed + fatbin._Reader.BLOCK
    assert work['end'] <= listed + fatbin._Reader.BLOCK and work['largest'] <= fatbin._Reader.BLOCK
    assert fatbin.arch_verdict(result, 'sm_100') == 'sass'  # what was read holds sm_100 SASS
    assert fatbin.arch_verdict(result, 'sm_120') == 'unreadable'  # not 'missing': the rest was not read
    tracemalloc.start()
    try:
        small, work = counted_scan(str(path), max_entries=1000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(small['entries']) == 1000 and small['entries_truncated'] and peak < (4 << 20)
    assert work['end'] <= 16 + 64 * 1001 + fatbin._Reader.BLOCK
    exact = fatbin.scan_file(fx('libk_multi_zstd.so'), max_entries=9)
    assert exact['entries_truncated'] is False and len(exact['entries']) == 9
    one_less = fatbin.scan_file(fx('libk_multi_zstd.so'), max_entries=8)
    assert one_less['entries_truncated'] is True and len(one_less['entries']) == 8


def test_embedded_search_stops_at_its_node_limit(tmp_path):
    path = tmp_path / 'libcrafted.so'
    path.write_bytes(overlapping_candidates(400))
    result = fatbin.scan_file(str(path), max_search_nodes=100)
    assert result['entries_truncated'] is True and 'more than 100 entry headers' in result['limit_detail']
    assert result['error'] == 'no_fatbin' and fatbin.arch_verdict(result, 'sm_100') == 'unreadable'
    assert fatbin.file_report(result, 'sm_100', explicit=False)['status'] == 'unreadable'  # not no_device_code


SHRINK = r"""
import json, os, sys
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import fatbin
path, keep = sys.argv[1], int(sys.argv[2])
scan = fatbin._scan_buffer
def shrink_then_scan(reader, *args):
    os.truncate(path, keep)  # after the file was opened and its size taken
    return scan(reader, *args)
fatbin._scan_buffer = shrink_then_scan
result = fatbin.scan_file(path)
print(json.dumps([result['error'], result['error_detail']]))
"""


@pytest.mark.parametrize('name, keep', [('libk_sm120.so', 4096), ('libk_sm120.so', 100), ('k_sm120a.cubin', 1000), ('k_multi.fatbin', 200)])
def test_file_truncated_while_it_is_read(tmp_path, name, keep):
    """With mmap the process died of SIGBUS; run in a child so that a regression cannot kill pytest."""
    path = tmp_path / name
    shutil.copyfile(fx(name), str(path))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    child = subprocess.run([sys.executable, '-c', SHRINK, str(path), str(keep)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env, timeout=60, check=False)
    assert child.returncode == 0, child.stderr
    error, detail = json.loads(child.stdout.decode())
    assert error == 'truncated'
    assert 'got shorter while it was read' in detail


def test_non_utf8_file_name_is_reported_escaped(tmp_path):
    raw = os.path.join(os.fsencode(str(tmp_path)), b'libk_\xff.so')
    shutil.copyfile(fx('libk_sm120.so'), raw)
    out = fatbin.scan_paths([str(tmp_path)])
    (report,) = out['files']
    assert report['path'] == os.path.join(str(tmp_path), 'libk_\\xff.so')
    assert report['verdict'] == 'sass' and out['summary']['sass'] == [report['path']]
    json.dumps(out).encode('utf-8')  # what AnsibleModule.exit_json must be able to write
    missing = fatbin.scan_file(os.fsdecode(raw) + '.gone')
    assert missing['error'] == 'missing' and missing['error_detail'].endswith('libk_\\xff.so.gone')
    assert fatbin.display_path(b'lib\xff.so') == 'lib\\xff.so' and fatbin.display_path('libok.so') == 'libok.so'

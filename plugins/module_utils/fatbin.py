# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Read the CUDA device code (fatbins) of an ELF file in pure Python.

What ``cuobjdump --list-elf --list-ptx FILE`` prints, without any CUDA tool and without a GPU:
the SASS (cubin) and PTX images of every fatbin in the file, with their architecture, in the
order and with the numbering cuobjdump uses.

Layout (reverse engineered from nvcc/fatbinary 13.0 output and checked against cuobjdump 13.2):

- A host ELF keeps its fatbins in the section ``.nv_fatbin`` (linked, "executable" device code)
  and, for relocatable device code, ``__nv_relfatbin``. cuobjdump lists ``.nv_fatbin`` when the
  file has it, else ``__nv_relfatbin`` (``--all-fatbin`` lists both). Several fatbins follow each
  other in a section, 8-byte aligned, zero padded.
- Fatbin container header, 16 bytes, little endian: ``u32 magic 0xBA55ED50, u16 version (1),
  u16 header size (16), u64 size of the entries that follow``.
- Entry header, at least 64 bytes: ``u16 kind (1 PTX, 2 ELF/cubin, 8 LTO IR), u16 (0x0101),
  u32 header size, u64 payload size, u32 compressed size, u32 (offset of extra data), u16 minor,
  u16 major, u32 arch (sm number: 90, 100, 120), u32 identifier offset, u32 identifier size,
  u64 flags, u64 (0), u64 uncompressed size``; the payload follows the header.
- Flags: 0x1 64-bit, 0x2 debug, 0x10 Linux, 0x2000 LZ4 compressed, 0x8000 zstd compressed,
  0x10000 obfuscated, 0x100000 architecture specific (sm_90a, sm_120a), 0x200000 family
  specific (sm_100f, sm_120f). cuobjdump names an 'f' cubin without its suffix (sm_120f SASS is
  listed as ``sm_120.cubin``) but an 'f' PTX with it (``sm_120f.ptx``).
- Names: ``<stem>.<n>.<arch>.cubin`` / ``<stem>.<n>.<arch>.ptx``, where stem is the file's base
  name less its last extension and n counts the ELF and the PTX images separately, from 1, across
  all fatbins listed. An image with an identifier (a ``-G`` build stores the source name) is named
  ``<identifier stem>.<arch>.cubin`` instead (the count still advances). A bare cubin file is
  listed as ``<stem>.<arch>.cubin``.
"""

from __future__ import annotations

import fnmatch
import mmap
import os
import re
import struct

FATBIN_MAGIC = 0xBA55ED50
FATBIN_MAGIC_BYTES = struct.pack('<I', FATBIN_MAGIC)
ELF_MAGIC = b'\x7fELF'
EM_CUDA = 190

EXECUTABLE_SECTION = '.nv_fatbin'
RELOCATABLE_SECTION = '__nv_relfatbin'
FATBIN_SECTIONS = (EXECUTABLE_SECTION, RELOCATABLE_SECTION)

KIND_PTX = 1
KIND_ELF = 2
KIND_LTO = 8
KIND_NAMES = {KIND_PTX: 'ptx', KIND_ELF: 'elf', KIND_LTO: 'lto'}

FLAG_64BIT = 0x1
FLAG_DEBUG = 0x2
FLAG_LINUX = 0x10
FLAG_COMPRESSED_LZ4 = 0x2000
FLAG_COMPRESSED_ZSTD = 0x8000
FLAG_OBFUSCATED = 0x10000
FLAG_ARCH_SPECIFIC = 0x100000
FLAG_FAMILY_SPECIFIC = 0x200000

# Error kinds of scan_file().
ERR_MISSING = 'missing'          # no such file
ERR_IO = 'io_error'              # not a regular file, permission denied, read error
ERR_NOT_ELF = 'not_elf'          # neither an ELF file nor a bare fatbin
ERR_UNSUPPORTED = 'unsupported'  # ELF, but not 64-bit little endian
ERR_NO_FATBIN = 'no_fatbin'      # an ELF file without CUDA device code
ERR_TRUNCATED = 'truncated'      # the file ends before its headers/sections say it does
ERR_CORRUPT = 'corrupt'          # inconsistent fatbin or ELF headers
UNREADABLE_ERRORS = (ERR_MISSING, ERR_IO, ERR_NOT_ELF, ERR_UNSUPPORTED, ERR_TRUNCATED, ERR_CORRUPT)

VERDICT_SASS = 'sass'
VERDICT_PTX_JIT = 'ptx_jit'
VERDICT_MISSING = 'missing'
VERDICT_UNREADABLE = 'unreadable'

_FATBIN_HEADER = struct.Struct('<IHHQ')
_ENTRY_HEADER = struct.Struct('<HHIQIIHHIIIQQQ')
_ELF64_HEADER = struct.Struct('<16sHHIQQQIHHHHHH')
_ELF64_SHDR = struct.Struct('<IIQQQQIIQQ')
_SHT_PROGBITS = 1
_SHT_NOBITS = 8
_SHF_ALLOC = 0x2
_SHF_EXECINSTR = 0x4
_VARIANT_ORDER = {'': 0, 'a': 1, 'f': 2}
_ARCH_RE = re.compile(r'^(?:sm_|compute_|lto_)?(\d+)([af]?)$')
_DOTTED_ARCH_RE = re.compile(r'^(\d+)\.(\d)([af]?)$')
_TKINFO_ARCH_RE = re.compile(br'-arch sm_(\d+)([af]?)\b')


class ScanError(Exception):
    """A file that cannot be read as CUDA device code; kind is one of the ERR_* strings."""

    def __init__(self, kind, detail):
        super(ScanError, self).__init__(detail)
        self.kind = kind
        self.detail = detail


def _variant_of(flags):
    if flags & FLAG_ARCH_SPECIFIC:
        return 'a'
    if flags & FLAG_FAMILY_SPECIFIC:
        return 'f'
    return ''


def _compression_of(flags):
    if flags & FLAG_COMPRESSED_ZSTD:
        return 'zstd'
    if flags & FLAG_COMPRESSED_LZ4:
        return 'lz4'
    return None


def arch_sort_key(arch):
    """Sort key for names like sm_90, sm_100a, sm_120f: by number, then '', 'a', 'f'."""
    match = _ARCH_RE.match(arch)
    if not match:
        return (1 << 30, 0, arch)
    return (int(match.group(1)), _VARIANT_ORDER[match.group(2)], arch)


def parse_arch(arch):
    """Parse 'sm_120', 'sm_120a', 'compute_120f', '120', '12.0', '12.0a' into (major, minor, variant).

    Raises ValueError for anything else.
    """
    text = str(arch).strip().lower()
    match = _DOTTED_ARCH_RE.match(text)
    if match:
        return int(match.group(1)), int(match.group(2)), match.group(3)
    match = _ARCH_RE.match(text)
    if not match:
        raise ValueError('not a CUDA architecture: %r (expected e.g. sm_120, sm_120a, 12.0)' % (arch,))
    number = int(match.group(1))
    if number < 20:
        raise ValueError('not a CUDA architecture: %r (for compute capability %d.x write %d.0 or sm_%d0)'
                         % (arch, number, number, number))
    return number // 10, number % 10, match.group(2)


def _stem(name):
    """cuobjdump's stem of a file or identifier name: the base name less its last extension."""
    base = name.replace('\\', '/').rsplit('/', 1)[-1]
    if '.' in base:
        return base.rsplit('.', 1)[0]
    return base


def _new_result(path):
    return {
        'path': path,
        'error': None,
        'error_detail': None,
        'format': None,
        'source': None,
        'size': None,
        'sections': [],
        'fatbins': 0,
        'entries': [],
        'sass': [],
        'ptx': [],
        'counts': {'elf': 0, 'ptx': 0, 'other': 0},
        'compressed': False,
        'compression': [],
        'embedded': 0,
    }


class _Reader(object):
    """Bounds-checked little-endian reads from an mmap (no copies of the file)."""

    def __init__(self, buf, size):
        self.buf = buf
        self.size = size

    def unpack(self, fmt, offset, what):
        if offset < 0 or offset + fmt.size > self.size:
            raise ScanError(ERR_TRUNCATED, '%s at offset %d runs past the end of the file (%d bytes)' % (what, offset, self.size))
        return fmt.unpack_from(self.buf, offset)

    def cstring(self, offset, limit=4096):
        end = self.buf.find(b'\0', offset, min(self.size, offset + limit))
        if end < 0:
            end = min(self.size, offset + limit)
        return self.buf[offset:end].decode('utf-8', 'replace')


def _elf_sections(reader):
    """(name, type, flags, offset, size) of every section of an ELF64 little-endian file."""
    hdr = reader.unpack(_ELF64_HEADER, 0, 'ELF header')
    shoff, shentsize, shnum, shstrndx = hdr[6], hdr[11], hdr[12], hdr[13]
    if shoff == 0:
        return []
    if shentsize != _ELF64_SHDR.size:
        raise ScanError(ERR_CORRUPT, 'ELF section header size is %d, expected %d' % (shentsize, _ELF64_SHDR.size))
    first = reader.unpack(_ELF64_SHDR, shoff, 'ELF section header 0')
    if shnum == 0:
        shnum = first[5]
    if shstrndx == 0xFFFF:
        shstrndx = first[6]
    if shoff + shnum * shentsize > reader.size:
        raise ScanError(ERR_TRUNCATED, 'the ELF section headers end at %d, past the end of the file (%d bytes)'
                        % (shoff + shnum * shentsize, reader.size))
    headers = [reader.unpack(_ELF64_SHDR, shoff + i * shentsize, 'ELF section header') for i in range(shnum)]
    if shstrndx >= shnum:
        raise ScanError(ERR_CORRUPT, 'ELF section name table index %d out of range' % shstrndx)
    strtab = headers[shstrndx]
    if strtab[4] + strtab[5] > reader.size:
        raise ScanError(ERR_TRUNCATED, 'the ELF section name table runs past the end of the file')
    sections = []
    for sh in headers:
        name = reader.cstring(strtab[4] + sh[0]) if sh[0] < strtab[5] else ''
        sections.append((name, sh[1], sh[2], sh[4], sh[5]))
    return sections


def _parse_entries(reader, start, end, fatbin_index, section, result):
    """Parse the entries of one fatbin container whose entries span [start, end)."""
    pos = start
    while pos < end:
        if pos + _ENTRY_HEADER.size > end:
            raise ScanError(ERR_CORRUPT, 'fatbin entry header at offset %d runs past its fatbin' % pos)
        (kind, _ver, hsize, psize, csize, _extra, minor, major, arch, ident_off, ident_len,
         flags, _zero, usize) = reader.unpack(_ENTRY_HEADER, pos, 'fatbin entry header')
        if hsize < _ENTRY_HEADER.size or pos + hsize + psize > end:
            raise ScanError(ERR_CORRUPT, 'fatbin entry at offset %d has sizes %d+%d past its fatbin (ends at %d)' % (pos, hsize, psize, end))
        ident = None
        if ident_len and ident_off:
            if ident_off + ident_len > hsize:
                raise ScanError(ERR_CORRUPT, 'fatbin entry identifier at offset %d is outside its header' % pos)
            ident = reader.buf[pos + ident_off:pos + ident_off + ident_len].split(b'\0', 1)[0].decode('utf-8', 'replace').strip()
        kind_name = KIND_NAMES.get(kind, 'unknown')
        variant = _variant_of(flags)
        compression = _compression_of(flags)
        entry = {
            'kind': kind_name,
            'kind_code': kind,
            'arch': 'sm_%d%s' % (arch, '' if (kind == KIND_ELF and variant == 'f') else variant),
            'target': 'sm_%d%s' % (arch, variant),
            'sm': arch,
            'variant': variant,
            'ident': ident,
            'compressed': compression is not None,
            'compression': compression,
            'size': psize,
            'compressed_size': csize if compression else None,
            'uncompressed_size': usize if compression else None,
            'debug': bool(flags & FLAG_DEBUG),
            'version': '%d.%d' % (major, minor),
            'flags': flags,
            'fatbin': fatbin_index,
            'section': section,
            'offset': pos,
            'listed': kind in (KIND_ELF, KIND_PTX) and section is not None,
        }
        result['entries'].append(entry)
        pos += hsize + psize


def _parse_fatbins(reader, start, end, section, result, strict=True):
    """Parse the fatbin containers that fill [start, end): one section or a bare fatbin file."""
    pos = start
    while pos < end:
        if reader.buf[pos:pos + 4] != FATBIN_MAGIC_BYTES:
            nxt = reader.buf.find(FATBIN_MAGIC_BYTES, pos, end)
            gap_end = end if nxt < 0 else nxt
            if reader.buf[pos:gap_end].strip(b'\0'):
                if not strict and result['fatbins']:
                    return
                raise ScanError(ERR_CORRUPT, 'no fatbin header at offset %d of %s' % (pos, section or 'the file'))
            if nxt < 0:
                return
            pos = nxt
        magic, _version, hsize, fsize = reader.unpack(_FATBIN_HEADER, pos, 'fatbin header')
        if magic != FATBIN_MAGIC or hsize < _FATBIN_HEADER.size:
            raise ScanError(ERR_CORRUPT, 'bad fatbin header at offset %d' % pos)
        if pos + hsize + fsize > end:
            if end >= reader.size and pos + hsize + fsize > reader.size:
                raise ScanError(ERR_TRUNCATED, 'fatbin at offset %d ends at %d, past the end of the file (%d bytes)'
                                % (pos, pos + hsize + fsize, reader.size))
            raise ScanError(ERR_CORRUPT, 'fatbin at offset %d (size %d) runs past its section' % (pos, fsize))
        _parse_entries(reader, pos + hsize, pos + hsize + fsize, result['fatbins'], section, result)
        result['fatbins'] += 1
        pos = (pos + hsize + fsize + 7) & ~7


def _plausible_fatbin(reader, pos):
    """True if a magic found by scanning starts a well-formed fatbin container."""
    if pos + _FATBIN_HEADER.size + _ENTRY_HEADER.size > reader.size:
        return False
    magic, version, hsize, fsize = _FATBIN_HEADER.unpack_from(reader.buf, pos)
    if magic != FATBIN_MAGIC or version != 1 or hsize != _FATBIN_HEADER.size:
        return False
    if fsize < _ENTRY_HEADER.size or pos + hsize + fsize > reader.size:
        return False
    kind, _ver, ehsize, psize = struct.unpack_from('<HHIQ', reader.buf, pos + hsize)
    return kind in KIND_NAMES and ehsize >= _ENTRY_HEADER.size and ehsize + psize <= fsize


def _scan_embedded(reader, result, ranges):
    """Find fatbins outside the fatbin sections (a byte array in .rodata) by their magic.

    ranges: the (start, end) file ranges to look in: the sections a loaded library can read its
    data from (allocated, not code, not a fatbin section), or the whole file without a section table.
    """
    for start, end in ranges:
        pos = reader.buf.find(FATBIN_MAGIC_BYTES, start, end)
        while pos >= 0:
            if _plausible_fatbin(reader, pos):
                fsize = _FATBIN_HEADER.unpack_from(reader.buf, pos)[3]
                before = len(result['entries'])
                try:
                    _parse_entries(reader, pos + _FATBIN_HEADER.size, pos + _FATBIN_HEADER.size + fsize,
                                   result['fatbins'], None, result)
                except ScanError:
                    del result['entries'][before:]
                else:
                    result['fatbins'] += 1
                    pos = reader.buf.find(FATBIN_MAGIC_BYTES, pos + _FATBIN_HEADER.size + fsize, end)
                    continue
            pos = reader.buf.find(FATBIN_MAGIC_BYTES, pos + 1, end)


def _scan_cubin(reader, result, sections):
    """A bare cubin (an ELF file for EM_CUDA) is one ELF image."""
    hdr = reader.unpack(_ELF64_HEADER, 0, 'ELF header')
    abi_version = bytearray(hdr[0])[8]
    e_flags = hdr[7]
    sm = (e_flags >> 8) & 0xFF if abi_version >= 8 else e_flags & 0xFF
    variant = ''
    for name, _stype, _flags, offset, size in sections:
        if name == '.note.nv.tkinfo' and offset + size <= reader.size:
            match = _TKINFO_ARCH_RE.search(reader.buf[offset:offset + size])
            if match and int(match.group(1)) == sm:
                variant = match.group(2).decode()
    result['entries'].append({
        'kind': 'elf', 'kind_code': KIND_ELF,
        'arch': 'sm_%d%s' % (sm, 'a' if variant == 'a' else ''), 'target': 'sm_%d%s' % (sm, variant),
        'sm': sm, 'variant': variant, 'ident': None, 'compressed': False, 'compression': None,
        'size': reader.size, 'compressed_size': None, 'uncompressed_size': None, 'debug': False,
        'version': None, 'flags': e_flags, 'fatbin': None, 'section': None, 'offset': 0, 'listed': True,
    })


def _summarize(result):
    sass = set()
    ptx = set()
    counts = {'elf': 0, 'ptx': 0, 'other': 0}
    methods = set()
    for entry in result['entries']:
        if entry['kind'] == 'elf':
            sass.add(entry['target'])
            counts['elf'] += 1
        elif entry['kind'] == 'ptx':
            ptx.add(entry['target'])
            counts['ptx'] += 1
        else:
            counts['other'] += 1
        if entry['compression']:
            methods.add(entry['compression'])
    result['sass'] = sorted(sass, key=arch_sort_key)
    result['ptx'] = sorted(ptx, key=arch_sort_key)
    result['counts'] = counts
    result['compression'] = sorted(methods)
    result['compressed'] = bool(methods)


def _scan_buffer(reader, result, all_fatbins, embedded):
    head = reader.buf[:4] if reader.size >= 4 else b''
    if head == FATBIN_MAGIC_BYTES:
        result['format'] = 'fatbin'
        result['source'] = 'file'
        _parse_fatbins(reader, 0, reader.size, 'file', result, strict=False)
        return
    if head != ELF_MAGIC:
        raise ScanError(ERR_NOT_ELF, 'not an ELF file (starts with %r)' % bytes(reader.buf[:min(reader.size, 8)]))
    ident = bytes(reader.buf[:min(reader.size, 16)])
    if len(ident) < 16 or reader.size < _ELF64_HEADER.size:
        raise ScanError(ERR_TRUNCATED, 'the file ends inside the ELF header (%d bytes)' % reader.size)
    if ident[4] != 2 or ident[5] != 1:
        raise ScanError(ERR_UNSUPPORTED, 'not a 64-bit little-endian ELF file (class %d, data %d)' % (ident[4], ident[5]))
    machine = reader.unpack(_ELF64_HEADER, 0, 'ELF header')[2]
    sections = _elf_sections(reader)
    if machine == EM_CUDA:
        result['format'] = 'cubin'
        result['source'] = 'file'
        _scan_cubin(reader, result, sections)
        return
    result['format'] = 'elf'
    found = {}
    data_ranges = []
    for name, stype, flags, offset, size in sections:
        if name in FATBIN_SECTIONS and stype != _SHT_NOBITS and size:
            found.setdefault(name, []).append((offset, size))
        elif stype == _SHT_PROGBITS and flags & _SHF_ALLOC and not flags & _SHF_EXECINSTR and size:
            data_ranges.append((offset, min(offset + size, reader.size)))
    if not sections:
        data_ranges = [(0, reader.size)]
    if all_fatbins:
        # cuobjdump --all-fatbin lists .nv_fatbin first, then __nv_relfatbin, whatever their order.
        wanted = [s for name in FATBIN_SECTIONS for s in sections if s[0] == name and name in found]
    else:
        pick = EXECUTABLE_SECTION if EXECUTABLE_SECTION in found else RELOCATABLE_SECTION
        wanted = [s for s in sections if s[0] == pick and s[0] in found]
    for name, _stype, _flags, offset, size in wanted:
        if offset + size > reader.size:
            raise ScanError(ERR_TRUNCATED, 'section %s ends at %d, past the end of the file (%d bytes)'
                            % (name, offset + size, reader.size))
        if size:
            if name not in result['sections']:
                result['sections'].append(name)
            _parse_fatbins(reader, offset, offset + size, name, result)
    in_sections = len(result['entries'])
    if embedded == 'always' or (embedded == 'auto' and not result['fatbins']):
        _scan_embedded(reader, result, sorted(data_ranges))
    result['embedded'] = len(result['entries']) - in_sections
    if in_sections:
        result['source'] = 'sections'
    elif result['entries']:
        result['source'] = 'embedded'
    else:
        raise ScanError(ERR_NO_FATBIN, 'no CUDA fatbin in this file')


def scan_file(path, all_fatbins=False, embedded='auto'):
    """Scan one file for CUDA device code; never raises for a bad file.

    Returns a dict: path, error (None or one of missing, io_error, not_elf, unsupported, no_fatbin,
    truncated, corrupt), error_detail, format (elf, fatbin, cubin), source (sections: from
    .nv_fatbin/__nv_relfatbin as cuobjdump reads them; embedded: found by the fatbin magic
    elsewhere in the file, which cuobjdump does not list; file: a bare fatbin or cubin file),
    size, sections, fatbins (number of containers), entries (in file order), sass and ptx (sorted
    unique compile targets, 'f' kept: sm_120f), counts {elf, ptx, other}, compressed and
    compression (sorted methods: lz4, zstd).

    all_fatbins: like cuobjdump --all-fatbin, read __nv_relfatbin even when .nv_fatbin exists.
    embedded: when to look for fatbins outside the fatbin sections by their magic: 'auto' (only
    in an ELF file without a fatbin section), 'always' (some libraries, cuFFT for one, keep most
    of their kernels as fatbins in a data section and only a stub in .nv_fatbin), 'never'.
    Those images count in sass, ptx and counts, and in 'embedded'; cuobjdump does not list them.
    """
    if embedded not in ('auto', 'always', 'never'):
        raise ValueError("embedded must be 'auto', 'always' or 'never', not %r" % (embedded,))
    result = _new_result(path)
    try:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise ScanError(ERR_MISSING, 'no such file: %s' % path)
        except OSError as exc:
            raise ScanError(ERR_IO, 'cannot stat %s: %s' % (path, exc))
        if not os.path.isfile(path):
            raise ScanError(ERR_IO, 'not a regular file: %s' % path)
        result['size'] = st.st_size
        if st.st_size == 0:
            raise ScanError(ERR_TRUNCATED, 'empty file')
        try:
            handle = open(path, 'rb')
        except OSError as exc:
            raise ScanError(ERR_IO, 'cannot open %s: %s' % (path, exc))
        with handle:
            try:
                buf = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError) as exc:
                raise ScanError(ERR_IO, 'cannot map %s: %s' % (path, exc))
            try:
                _scan_buffer(_Reader(buf, len(buf)), result, all_fatbins, embedded)
            finally:
                buf.close()
    except ScanError as exc:
        result['error'] = exc.kind
        result['error_detail'] = exc.detail
        result['entries'] = []
        result['fatbins'] = 0
        result['embedded'] = 0
    _summarize(result)
    return result


def render_cuobjdump_listing(result, basename, elf=True, ptx=True):
    """The text ``cuobjdump --list-elf --list-ptx <basename>`` prints on stdout for this result.

    elf/ptx: which of --list-elf and --list-ptx were given. Only what cuobjdump itself lists is
    rendered: images of the fatbin sections (or of a bare fatbin/cubin file), kinds ELF and PTX;
    fatbins found only by scanning for the magic are left out, as cuobjdump does not see them.
    A file with an error renders as '' (cuobjdump writes its message to stderr).
    """
    if result.get('error'):
        return ''
    stem = _stem(basename)
    lines = []
    counters = {'elf': 0, 'ptx': 0}
    bare_cubin = result.get('format') == 'cubin'
    for entry in result['entries']:
        kind = entry['kind']
        if kind not in counters or not (entry['listed'] or bare_cubin):
            continue
        counters[kind] += 1
        if (kind == 'elf' and not elf) or (kind == 'ptx' and not ptx):
            continue
        suffix = 'cubin' if kind == 'elf' else 'ptx'
        if bare_cubin:
            name = '%s.%s.%s' % (stem, entry['arch'], suffix)
        elif entry.get('ident'):
            name = '%s.%s.%s' % (_stem(entry['ident']), entry['arch'], suffix)
        else:
            name = '%s.%d.%s.%s' % (stem, counters[kind], entry['arch'], suffix)
        lines.append('%s file %4d: %s\n' % ('ELF' if kind == 'elf' else 'PTX', counters[kind], name))
    return ''.join(lines)


def _runs_sass(entry, major, minor):
    """Whether a cubin runs on a GPU of compute capability major.minor.

    A cubin for sm_XY runs on X.Z with Z >= Y (same major, same or later minor); an 'f' (family)
    cubin likewise, within its family; an 'a' (architecture-specific) cubin only on exactly X.Y.
    """
    e_major, e_minor = entry['sm'] // 10, entry['sm'] % 10
    if e_major != major:
        return False
    if entry['variant'] == 'a':
        return e_minor == minor
    return e_minor <= minor


def _jits_ptx(entry, major, minor):
    """Whether the driver can JIT this PTX for compute capability major.minor.

    Plain compute_XY PTX compiles for any X.Y or later capability (any later major too);
    compute_XYf for the same major with a minor >= Y; compute_XYa only for exactly X.Y.
    """
    e_major, e_minor = entry['sm'] // 10, entry['sm'] % 10
    if entry['variant'] == 'a':
        return (e_major, e_minor) == (major, minor)
    if entry['variant'] == 'f':
        return e_major == major and e_minor <= minor
    return (e_major, e_minor) <= (major, minor)


def matching_targets(result, required='sm_120'):
    """The SASS and PTX targets of result that serve a GPU of the required compute capability."""
    major, minor, _variant = parse_arch(required)
    sass = set()
    ptx = set()
    for entry in result.get('entries') or []:
        if entry['kind'] == 'elf' and _runs_sass(entry, major, minor):
            sass.add(entry['target'])
        elif entry['kind'] == 'ptx' and _jits_ptx(entry, major, minor):
            ptx.add(entry['target'])
    return {'sass': sorted(sass, key=arch_sort_key), 'ptx': sorted(ptx, key=arch_sort_key)}


def arch_verdict(result, required='sm_120'):
    """One of 'sass', 'ptx_jit', 'missing', 'unreadable' for a GPU of the required architecture.

    required names the GPU's compute capability (sm_120, 12.0; a suffix is ignored: a device is
    12.0, not 12.0a). 'sass': a cubin that runs on it natively (see _runs_sass: sm_120, sm_120a
    and sm_120f all run on 12.0; on 12.1 sm_120 and sm_120f run, sm_120a does not). 'ptx_jit':
    no such cubin, but PTX the driver can compile for it. 'missing': neither, including a file
    without any device code. 'unreadable': the file could not be read (missing, not ELF,
    truncated, corrupt, I/O error).
    """
    error = result.get('error')
    if error in UNREADABLE_ERRORS:
        return VERDICT_UNREADABLE
    match = matching_targets(result, required)
    if match['sass']:
        return VERDICT_SASS
    if match['ptx']:
        return VERDICT_PTX_JIT
    return VERDICT_MISSING


DEFAULT_PATTERNS = ('*.so', '*.so.[0-9]*')

# Per-file status in scan_paths(): the verdict, or for a file found by walking a directory that
# has no device code at all (libgomp.so, a linker script named libc.so) a status that is not a
# failure.
STATUS_NO_DEVICE_CODE = 'no_device_code'
STATUS_SKIPPED = 'skipped'
STATUSES = (VERDICT_SASS, VERDICT_PTX_JIT, VERDICT_MISSING, VERDICT_UNREADABLE, STATUS_NO_DEVICE_CODE, STATUS_SKIPPED)


def collect_files(paths, patterns=DEFAULT_PATTERNS, recurse=True):
    """Expand paths into [(path, explicit)], plus the directories in which nothing matched.

    A path that is not a directory is taken as a file (explicit=True), whatever its name and
    whether or not it exists. A directory is walked (recursively unless recurse is False, not
    following symlinked directories) for files whose base name matches one of patterns
    (fnmatch); each real file is taken once: a symlink is dropped when its target was taken.
    """
    out = []
    seen = set()
    empty = []
    for path in paths:
        if not os.path.isdir(path):
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                out.append((path, True))
            continue
        regular = []
        links = []
        for top, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                if not any(fnmatch.fnmatchcase(name, pat) for pat in patterns):
                    continue
                full = os.path.join(top, name)
                (links if os.path.islink(full) else regular).append(full)
            if not recurse:
                del dirs[:]
        found = 0
        for full in regular + links:
            if not os.path.isfile(full):
                continue
            key = os.path.realpath(full)
            if key in seen:
                continue
            seen.add(key)
            out.append((full, False))
            found += 1
        if not found:
            empty.append(path)
    return out, empty


def file_report(result, required, explicit=True, accept_ptx=True, include_entries=False):
    """The module's report of one scan_file() result for a GPU of the required architecture."""
    verdict = arch_verdict(result, required)
    status = verdict
    if not explicit and result['error'] == ERR_NO_FATBIN:
        status = STATUS_NO_DEVICE_CODE
    elif not explicit and result['error'] == ERR_NOT_ELF:
        status = STATUS_SKIPPED
    report = {
        'path': result['path'],
        'explicit': explicit,
        'verdict': verdict,
        'status': status,
        'ok': status in (VERDICT_SASS, STATUS_NO_DEVICE_CODE, STATUS_SKIPPED) or (status == VERDICT_PTX_JIT and accept_ptx),
        'matching': matching_targets(result, required),
    }
    for key in ('error', 'error_detail', 'format', 'source', 'size', 'sections', 'fatbins', 'sass', 'ptx',
                'counts', 'compressed', 'compression', 'embedded'):
        report[key] = result[key]
    if include_entries:
        report['entries'] = result['entries']
    return report


def scan_paths(paths, required='sm_120', patterns=DEFAULT_PATTERNS, recurse=True, all_fatbins=False,
               embedded='auto', accept_ptx=True, include_entries=False):
    """Scan files and directories; returns {'files': [report...], 'summary': {...}}.

    summary: required_arch, compute_capability, scanned (number of files), one list of paths per
    status (sass, ptx_jit, missing, unreadable, no_device_code, skipped), empty_paths
    (directories without a matching file), failed (paths that lack the arch, or could not be
    read, in order; ptx_jit ones too when accept_ptx is False, and empty directories) and ok.
    """
    major, minor, _variant = parse_arch(required)
    files, empty = collect_files(paths, patterns, recurse)
    reports = []
    for path, explicit in files:
        result = scan_file(path, all_fatbins=all_fatbins, embedded=embedded)
        reports.append(file_report(result, required, explicit, accept_ptx, include_entries))
    summary = {
        'required_arch': 'sm_%d%d' % (major, minor),
        'compute_capability': '%d.%d' % (major, minor),
        'scanned': len(reports),
        'empty_paths': empty,
    }
    for status in STATUSES:
        summary[status] = [r['path'] for r in reports if r['status'] == status]
    summary['failed'] = [r['path'] for r in reports if not r['ok']] + list(empty)
    summary['ok'] = not summary['failed']
    return {'files': reports, 'summary': summary}


def summary_message(summary):
    """One line that sums up scan_paths()'s summary."""
    parts = ['%d %s' % (len(summary[s]), s) for s in STATUSES if summary[s] or s in (VERDICT_SASS, VERDICT_MISSING)]
    text = '%s: %d file(s) scanned: %s' % (summary['required_arch'], summary['scanned'], ', '.join(parts))
    if summary['empty_paths']:
        text += '; no matching file under %s' % ', '.join(summary['empty_paths'])
    return text


def _main(argv=None):
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(
        description='List the CUDA SASS/PTX images of ELF files like cuobjdump --list-elf --list-ptx, without CUDA tools.')
    parser.add_argument('files', nargs='+', metavar='FILE')
    parser.add_argument('--list-elf', '-lelf', action='store_true', help='list ELF (SASS) images only, unless --list-ptx too')
    parser.add_argument('--list-ptx', '-lptx', action='store_true', help='list PTX images only, unless --list-elf too')
    parser.add_argument('--all-fatbin', '-all', action='store_true', help='also read __nv_relfatbin when .nv_fatbin exists')
    parser.add_argument('--embedded', choices=('auto', 'always', 'never'), default='auto',
                        help='look for fatbins outside the fatbin sections: auto (only if the file has none), always, never')
    parser.add_argument('--verdict', metavar='ARCH', help='print the verdict for this architecture (e.g. sm_120) after each listing')
    parser.add_argument('--json', action='store_true', help='print the scan results as JSON')
    args = parser.parse_args(argv)
    elf = args.list_elf or not args.list_ptx
    ptx = args.list_ptx or not args.list_elf
    status = 0
    results = []
    for path in args.files:
        result = scan_file(path, all_fatbins=args.all_fatbin, embedded=args.embedded)
        results.append(result)
        if args.verdict:
            result['verdict'] = arch_verdict(result, args.verdict)
        if args.json:
            continue
        if len(args.files) > 1:
            sys.stdout.write('== %s\n' % path)
        sys.stdout.write(render_cuobjdump_listing(result, os.path.basename(path), elf=elf, ptx=ptx))
        if result['error']:
            sys.stderr.write('fatbin.py: %s: %s (%s)\n' % (path, result['error'], result['error_detail']))
            status = 255
        elif result['embedded']:
            sys.stderr.write('fatbin.py: %s: %d image(s) outside the fatbin sections, not listed above; SASS %s, PTX %s in all\n'
                             % (path, result['embedded'], ' '.join(result['sass']) or '-', ' '.join(result['ptx']) or '-'))
        if args.verdict:
            sys.stdout.write('verdict %s: %s\n' % (args.verdict, result['verdict']))
    if args.json:
        json.dump(results if len(results) > 1 else results[0], sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write('\n')
    return status


if __name__ == '__main__':
    raise SystemExit(_main())

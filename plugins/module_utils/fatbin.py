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
  listed as ``<stem>.<arch>.cubin``; its arch comes from the ELF e_flags (ABI 8: bits 8-15 the SM,
  bit 0x8 'a') and the ``-arch`` of its ptxas note (the only mark of an 'f' cubin), see _scan_cubin.
- Reading: pread, a header at a time, bounded by the size at open, the images (MAX_ENTRIES) and
  the embedded search (MAX_SEARCH_NODES); linear in the file size, for hostile files too.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
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

# ELF e_flags of a cubin, ABI version 8 (CUDA 12.8 and later): the architecture-specific ('a') mark.
EF_CUDA_ACCELERATORS = 0x8

# Limits for hostile or broken files: images kept per file (cuFFT, the largest library seen, has
# 23,983 with embedded fatbins), entry headers examined by the embedded-fatbin search, sections.
MAX_ENTRIES = 65536
MAX_SEARCH_NODES = 400000
MAX_SECTIONS = 1 << 20

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
_ENTRY_PREFIX = struct.Struct('<HHIQ')
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
        'entries_truncated': False,
        'limit_detail': None,
    }


_ZERO_CHUNK = bytes(1 << 20)


class _Limit(Exception):
    """More images (or embedded-search candidates) than the caller's limit: stop reading, keep what was read."""


class _Reader(object):
    """Bounds-checked little-endian reads of an open file, by pread (no mmap: a file that shrinks while it
    is read gives ERR_TRUNCATED, not SIGBUS). Never reads past the size the file had when it was opened,
    never more than one block (or one search chunk) at a time for anything larger than a header.
    """

    BLOCK = 1 << 12
    CHUNK = len(_ZERO_CHUNK)

    def __init__(self, handle, size, max_entries=None, max_nodes=None):
        self.handle = handle
        self.size = size
        self.max_entries = max_entries
        self.max_nodes = max_nodes
        self._bstart = 0
        self._block = b''

    def _pread(self, offset, length):
        """Exactly length bytes at offset (within the size at open), or ERR_TRUNCATED if the file shrank."""
        chunks = []
        want = length
        while want > 0:
            if hasattr(os, 'pread'):
                data = os.pread(self.handle.fileno(), want, offset)
            else:  # pragma: no cover - not Linux
                self.handle.seek(offset)
                data = self.handle.read(want)
            if not data:
                raise ScanError(ERR_TRUNCATED, 'no data at offset %d (wanted up to %d): the file got shorter while it was read (%d bytes when opened)'
                                % (offset, offset + want, self.size))
            chunks.append(data)
            offset += len(data)
            want -= len(data)
        return chunks[0] if len(chunks) == 1 else b''.join(chunks)

    def _check(self, offset, length, what):
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ScanError(ERR_TRUNCATED, '%s at offset %d runs past the end of the file (%d bytes)' % (what, offset, self.size))

    def block_at(self, offset, length):
        """(block, offset in block) holding [offset, offset + length); length at most BLOCK."""
        rel = offset - self._bstart
        if rel < 0 or rel + length > len(self._block):
            self._block = self._pread(offset, min(self.BLOCK, self.size - offset))
            self._bstart = offset
            rel = 0
        return self._block, rel

    def read(self, offset, length, what='data'):
        self._check(offset, length, what)
        if length > self.BLOCK:
            return self._pread(offset, length)
        block, rel = self.block_at(offset, length)
        return block[rel:rel + length]

    def unpack(self, fmt, offset, what):
        self._check(offset, fmt.size, what)
        block, rel = self.block_at(offset, fmt.size)
        return fmt.unpack_from(block, rel)

    def cstring(self, offset, limit=4096):
        data = self.read(offset, max(0, min(limit, self.size - offset)), 'string')
        return data.split(b'\0', 1)[0].decode('utf-8', 'replace')

    def finditer(self, pattern, start, end):
        """Every offset in [start, end) where pattern begins, in order; reads each byte once or twice."""
        end = min(end, self.size)
        overlap = len(pattern) - 1
        pos = start
        while end - pos >= len(pattern):
            length = min(self.CHUNK, end - pos)
            data = self._pread(pos, length)
            hit = data.find(pattern)
            while hit >= 0:
                yield pos + hit
                hit = data.find(pattern, hit + 1)
            if pos + length >= end:
                return
            pos += length - overlap

    def zeros_then_magic(self, start, end):
        """(offset of the next fatbin magic in [start, end) or -1, whether only zero bytes come before it)."""
        pos = start
        end = min(end, self.size)
        overlap = len(FATBIN_MAGIC_BYTES) - 1
        while pos < end:
            length = min(self.CHUNK, end - pos)
            data = self._pread(pos, length)
            last = pos + length >= end
            if data == (_ZERO_CHUNK if length == self.CHUNK else bytes(length)):
                if last:
                    break
                pos += length
                continue
            hit = data.find(FATBIN_MAGIC_BYTES)
            upto = hit if hit >= 0 else (length if last else max(0, length - overlap))
            if data.count(b'\0', 0, upto) != upto:
                return -1, False
            if hit >= 0:
                return pos + hit, True
            if last:
                break
            pos += upto
        return -1, True


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
    if shnum > MAX_SECTIONS:
        raise ScanError(ERR_CORRUPT, 'the ELF file claims %d sections (more than %d)' % (shnum, MAX_SECTIONS))
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


_NAMES = {}


def _names(kind, arch, flags, major, minor):
    """(arch as cuobjdump names it, target with its suffix, variant, version) of an entry; memoised."""
    key = (kind == KIND_ELF, arch, flags & (FLAG_ARCH_SPECIFIC | FLAG_FAMILY_SPECIFIC), major, minor)
    names = _NAMES.get(key)
    if names is None:
        variant = _variant_of(flags)
        names = _NAMES[key] = ('sm_%d%s' % (arch, '' if (kind == KIND_ELF and variant == 'f') else variant),
                               'sm_%d%s' % (arch, variant), variant, '%d.%d' % (major, minor))
    return names


def _parse_entries(reader, start, end, fatbin_index, section, result):
    """Parse the entries of one fatbin container whose entries span [start, end).

    Stops with _Limit before the entry that would pass reader.max_entries.
    """
    pos = start
    entries = result['entries']
    limit = reader.max_entries
    header = _ENTRY_HEADER.size
    if end > reader.size:
        raise ScanError(ERR_TRUNCATED, 'fatbin entries end at %d, past the end of the file (%d bytes)' % (end, reader.size))
    while pos < end:
        if pos + header > end:
            raise ScanError(ERR_CORRUPT, 'fatbin entry header at offset %d runs past its fatbin' % pos)
        block, rel = reader.block_at(pos, header)
        (kind, _ver, hsize, psize, csize, _extra, minor, major, arch, ident_off, ident_len,
         flags, _zero, usize) = _ENTRY_HEADER.unpack_from(block, rel)
        if hsize < _ENTRY_HEADER.size or pos + hsize + psize > end:
            raise ScanError(ERR_CORRUPT, 'fatbin entry at offset %d has sizes %d+%d past its fatbin (ends at %d)' % (pos, hsize, psize, end))
        if limit is not None and len(entries) >= limit:
            raise _Limit('more than %d images: stopped reading after %d' % (limit, limit))
        ident = None
        if ident_len and ident_off:
            if ident_off + ident_len > hsize:
                raise ScanError(ERR_CORRUPT, 'fatbin entry identifier at offset %d is outside its header' % pos)
            raw = reader.read(pos + ident_off, min(ident_len, 4096), 'fatbin entry identifier')
            ident = raw.split(b'\0', 1)[0].decode('utf-8', 'replace').strip()
        arch_name, target, variant, version = _names(kind, arch, flags, major, minor)
        compression = _compression_of(flags) if flags & (FLAG_COMPRESSED_LZ4 | FLAG_COMPRESSED_ZSTD) else None
        entries.append({
            'kind': KIND_NAMES.get(kind, 'unknown'),
            'kind_code': kind,
            'arch': arch_name,
            'target': target,
            'sm': arch,
            'variant': variant,
            'ident': ident,
            'compressed': compression is not None,
            'compression': compression,
            'size': psize,
            'compressed_size': csize if compression else None,
            'uncompressed_size': usize if compression else None,
            'debug': bool(flags & FLAG_DEBUG),
            'version': version,
            'flags': flags,
            'fatbin': fatbin_index,
            'section': section,
            'offset': pos,
            'listed': (kind == KIND_ELF or kind == KIND_PTX) and section is not None,
        })
        pos += hsize + psize


def _parse_fatbins(reader, start, end, section, result, strict=True):
    """Parse the fatbin containers that fill [start, end): one section or a bare fatbin file."""
    pos = start
    while pos < end:
        if reader.read(pos, min(4, end - pos), 'fatbin header') != FATBIN_MAGIC_BYTES:
            nxt, zeros = reader.zeros_then_magic(pos, end)
            if not zeros:
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
    """The size of the entries if a magic found by scanning starts a well-formed fatbin container, else None."""
    if pos + _FATBIN_HEADER.size + _ENTRY_HEADER.size > reader.size:
        return None
    magic, version, hsize, fsize = reader.unpack(_FATBIN_HEADER, pos, 'fatbin header')
    if magic != FATBIN_MAGIC or version != 1 or hsize != _FATBIN_HEADER.size:
        return None
    if fsize < _ENTRY_HEADER.size or pos + hsize + fsize > reader.size:
        return None
    kind, _ver, ehsize, psize = reader.unpack(_ENTRY_PREFIX, pos + hsize, 'fatbin entry header')
    if kind in KIND_NAMES and ehsize >= _ENTRY_HEADER.size and ehsize + psize <= fsize:
        return fsize
    return None


class _Chains(object):
    """The chains of entry headers that candidate fatbins found by their magic would walk.

    A walk from an entry at p goes to p + header size + payload size, whatever fatbin it started
    in; a candidate whose entries start at s and end at e is valid exactly when e is on the chain
    from s (sizes only grow along it, so every step stays inside). Each position is read once and
    becomes a node whose parent is the next position (a root when its header is not valid), with
    skew-binary jump pointers, so "is e on the chain from s" costs O(log n): the search is linear
    in the file size however many candidates overlap (it used to re-walk them, quadratic).
    """

    def __init__(self, reader):
        self.reader = reader
        self.index = {}
        self.pos = []
        self.parent = []
        self.jump = []
        self.depth = []

    def _next(self, p):
        """The position after the entry at p, or None when there is no valid entry header at p."""
        reader = self.reader
        if p + _ENTRY_HEADER.size > reader.size:
            return None
        hdr = reader.unpack(_ENTRY_HEADER, p, 'fatbin entry header')
        hsize, psize, ident_off, ident_len = hdr[2], hdr[3], hdr[9], hdr[10]
        if hsize < _ENTRY_HEADER.size or (ident_len and ident_off and ident_off + ident_len > hsize):
            return None
        nxt = p + hsize + psize
        return nxt if nxt <= reader.size else None

    def _add(self, p, parent):
        node = len(self.pos)
        self.index[p] = node
        self.pos.append(p)
        self.parent.append(parent)
        if parent < 0:
            self.jump.append(node)
            self.depth.append(0)
            return node
        up = self.jump[parent]
        if self.depth[parent] - self.depth[up] == self.depth[up] - self.depth[self.jump[up]]:
            self.jump.append(self.jump[up])
        else:
            self.jump.append(parent)
        self.depth.append(self.depth[parent] + 1)
        return node

    def node(self, p):
        """The node of position p, after reading the positions of its chain not read yet."""
        path = []
        top = -1
        q = p
        while q is not None:
            if q in self.index:
                top = self.index[q]
                break
            if self.reader.max_nodes is not None and len(self.pos) + len(path) >= self.reader.max_nodes:
                raise _Limit('more than %d entry headers examined while searching for embedded fatbins: stopped there'
                             % self.reader.max_nodes)
            path.append(q)
            q = self._next(q)
        for q in reversed(path):
            top = self._add(q, top)
        return top

    def reaches(self, node, target):
        """Whether the chain from node passes through position target."""
        pos, jump, parent = self.pos, self.jump, self.parent
        while pos[node] < target:
            up = jump[node]
            if up != node and pos[up] <= target:
                node = up
            elif parent[node] >= 0:
                node = parent[node]
            else:
                return False
        return pos[node] == target


def _scan_embedded(reader, result, ranges):
    """Find fatbins outside the fatbin sections (a byte array in .rodata) by their magic.

    ranges: the (start, end) file ranges to look in: the sections a loaded library can read its
    data from (allocated, not code, not a fatbin section), or the whole file without a section table.
    A candidate is taken when its entries fill it exactly; the search then goes on after it, else
    at the next magic (in linear time, see _Chains).
    """
    chains = _Chains(reader)
    for start, end in ranges:
        resume = start
        for pos in reader.finditer(FATBIN_MAGIC_BYTES, start, end):
            if pos < resume:
                continue
            fsize = _plausible_fatbin(reader, pos)
            if fsize is None:
                continue
            first = pos + _FATBIN_HEADER.size
            if not chains.reaches(chains.node(first), first + fsize):
                continue
            _parse_entries(reader, first, first + fsize, result['fatbins'], None, result)
            result['fatbins'] += 1
            resume = first + fsize


def _scan_cubin(reader, result, sections):
    """A bare cubin (an ELF file for EM_CUDA) is one ELF image.

    Its architecture: e_flags bits 8-15 (ELF ABI version 8, CUDA 12.8 and later) or 0-7 (older).
    The variant: 'a' when e_flags has EF_CUDA_ACCELERATORS (0x8, ABI 8) set - ptxas 12.9 sets it for
    -arch sm_103a and the flashinfer-cubin kernels built without a ptxas note carry it, and cuobjdump
    names all of them sm_100a/sm_103a - else the suffix of -arch in the ptxas command line of
    .note.nv.tkinfo (nvcc 13.0 leaves the bit clear for sm_120a; an sm_100f cubin has the same
    e_flags as a plain sm_100 one and only its note tells them apart). cuobjdump names an 'f' cubin
    without its suffix (sm_100f -> sm_100), as in a fatbin.
    """
    hdr = reader.unpack(_ELF64_HEADER, 0, 'ELF header')
    abi_version = bytearray(hdr[0])[8]
    e_flags = hdr[7]
    if abi_version >= 8:
        sm = (e_flags >> 8) & 0xFF
        accelerated = bool(e_flags & EF_CUDA_ACCELERATORS)
    else:
        sm = e_flags & 0xFF
        accelerated = False
    variant = ''
    for name, _stype, _flags, offset, size in sections:
        if name == '.note.nv.tkinfo' and offset + size <= reader.size:
            match = _TKINFO_ARCH_RE.search(reader.read(offset, min(size, 1 << 16), 'ptxas note'))
            if match and int(match.group(1)) == sm:
                variant = match.group(2).decode()
    if accelerated:
        variant = 'a'
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


def _limited(result, exc):
    result['entries_truncated'] = True
    result['limit_detail'] = str(exc)


def _scan_buffer(reader, result, all_fatbins, embedded):
    ident = reader.read(0, min(reader.size, 16), 'file header')
    head = ident[:4]
    if head == FATBIN_MAGIC_BYTES:
        result['format'] = 'fatbin'
        result['source'] = 'file'
        try:
            _parse_fatbins(reader, 0, reader.size, 'file', result, strict=False)
        except _Limit as exc:
            _limited(result, exc)
        return
    if head != ELF_MAGIC:
        raise ScanError(ERR_NOT_ELF, 'not an ELF file (starts with %r)' % ident[:8])
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
    try:
        for name, _stype, _flags, offset, size in wanted:
            if size:
                if name not in result['sections']:
                    result['sections'].append(name)
                _parse_fatbins(reader, offset, offset + size, name, result)
    except _Limit as exc:
        _limited(result, exc)
    in_sections = len(result['entries'])
    if not result['entries_truncated'] and (embedded == 'always' or (embedded == 'auto' and not result['fatbins'])):
        try:
            _scan_embedded(reader, result, sorted(data_ranges))
        except _Limit as exc:
            _limited(result, exc)
    result['embedded'] = len(result['entries']) - in_sections
    if in_sections:
        result['source'] = 'sections'
    elif result['entries']:
        result['source'] = 'embedded'
    else:
        raise ScanError(ERR_NO_FATBIN, 'no CUDA fatbin in this file')


def display_path(path):
    """path as text that can be reported (JSON, UTF-8): a name that is not valid UTF-8 keeps its bytes
    as backslash escapes (lib\\xff.so), not as the lone surrogates Python decodes it to."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        return path.decode('utf-8', 'backslashreplace')
    try:
        path.encode('utf-8')
        return path
    except UnicodeEncodeError:
        pass
    try:
        return path.encode('utf-8', 'surrogateescape').decode('utf-8', 'backslashreplace')
    except UnicodeEncodeError:
        return path.encode('utf-8', 'backslashreplace').decode('utf-8')


def scan_file(path, all_fatbins=False, embedded='auto', max_entries=MAX_ENTRIES, max_search_nodes=MAX_SEARCH_NODES):
    """Scan one file for CUDA device code; never raises for a bad file.

    Returns a dict: path (as display_path() writes it), error (None or one of missing, io_error,
    not_elf, unsupported, no_fatbin, truncated, corrupt), error_detail, format (elf, fatbin, cubin),
    source (sections: from .nv_fatbin/__nv_relfatbin as cuobjdump reads them; embedded: found by
    the fatbin magic elsewhere in the file, which cuobjdump does not list; file: a bare fatbin or
    cubin file), size, sections, fatbins (number of containers), entries (in file order), sass and
    ptx (sorted unique compile targets, 'f' kept: sm_120f), counts {elf, ptx, other}, compressed
    and compression (sorted methods: lz4, zstd), entries_truncated and limit_detail.

    all_fatbins: like cuobjdump --all-fatbin, read __nv_relfatbin even when .nv_fatbin exists.
    embedded: when to look for fatbins outside the fatbin sections by their magic: 'auto' (only
    in an ELF file without a fatbin section), 'always' (some libraries, cuFFT for one, keep most
    of their kernels as fatbins in a data section and only a stub in .nv_fatbin), 'never'.
    Those images count in sass, ptx and counts, and in 'embedded'; cuobjdump does not list them.
    max_entries, max_search_nodes: stop after that many images, or entry headers examined by the
    embedded search (None: no limit); then entries_truncated is True, limit_detail says why, and
    what was read so far is kept (memory stays proportional to the images reported).

    The file is read with pread, a header at a time (no mmap, no copy of the file), never past
    the size it had when opened: time and memory are linear in the file size and the images.
    """
    if embedded not in ('auto', 'always', 'never'):
        raise ValueError("embedded must be 'auto', 'always' or 'never', not %r" % (embedded,))
    shown = display_path(path)
    result = _new_result(shown)
    try:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise ScanError(ERR_MISSING, 'no such file: %s' % shown)
        except OSError as exc:
            raise ScanError(ERR_IO, 'cannot stat %s: %s' % (shown, display_path(str(exc))))
        if not stat.S_ISREG(st.st_mode):
            # checked before open(): opening a FIFO would block
            raise ScanError(ERR_IO, 'not a regular file: %s' % shown)
        try:
            handle = open(path, 'rb')
        except FileNotFoundError:
            raise ScanError(ERR_MISSING, 'no such file: %s' % shown)
        except OSError as exc:
            raise ScanError(ERR_IO, 'cannot open %s: %s' % (shown, display_path(str(exc))))
        with handle:
            try:
                st = os.fstat(handle.fileno())
            except OSError as exc:
                raise ScanError(ERR_IO, 'cannot stat %s: %s' % (shown, display_path(str(exc))))
            if not stat.S_ISREG(st.st_mode):
                raise ScanError(ERR_IO, 'not a regular file: %s' % shown)
            result['size'] = st.st_size
            if st.st_size == 0:
                raise ScanError(ERR_TRUNCATED, 'empty file')
            reader = _Reader(handle, st.st_size, max_entries=max_entries, max_nodes=max_search_nodes)
            try:
                _scan_buffer(reader, result, all_fatbins, embedded)
            except OSError as exc:
                raise ScanError(ERR_IO, 'cannot read %s: %s' % (shown, display_path(str(exc))))
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
    truncated, corrupt, I/O error), or it has more images than the limit (entries_truncated)
    and none of those read is such a cubin.
    """
    error = result.get('error')
    if error in UNREADABLE_ERRORS:
        return VERDICT_UNREADABLE
    match = matching_targets(result, required)
    if match['sass']:
        return VERDICT_SASS
    if result.get('entries_truncated'):
        return VERDICT_UNREADABLE
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
    if not explicit and result['error'] == ERR_NO_FATBIN and not result['entries_truncated']:
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
                'counts', 'compressed', 'compression', 'embedded', 'entries_truncated', 'limit_detail'):
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
        'empty_paths': [display_path(p) for p in empty],
    }
    for status in STATUSES:
        summary[status] = [r['path'] for r in reports if r['status'] == status]
    summary['failed'] = [r['path'] for r in reports if not r['ok']] + summary['empty_paths']
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
            sys.stdout.write('== %s\n' % display_path(path))
        sys.stdout.write(render_cuobjdump_listing(result, display_path(os.path.basename(path)), elf=elf, ptx=ptx))
        if result['entries_truncated']:
            sys.stderr.write('fatbin.py: %s: %s\n' % (result['path'], result['limit_detail']))
        if result['error']:
            sys.stderr.write('fatbin.py: %s: %s (%s)\n' % (result['path'], result['error'], result['error_detail']))
            status = 255
        elif result['embedded']:
            sys.stderr.write('fatbin.py: %s: %d image(s) outside the fatbin sections, not listed above; SASS %s, PTX %s in all\n'
                             % (result['path'], result['embedded'], ' '.join(result['sass']) or '-', ' '.join(result['ptx']) or '-'))
        if args.verdict:
            sys.stdout.write('verdict %s: %s\n' % (args.verdict, result['verdict']))
    if args.json:
        json.dump(results if len(results) > 1 else results[0], sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write('\n')
    return status


if __name__ == '__main__':
    raise SystemExit(_main())

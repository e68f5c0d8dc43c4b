# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""apt's sources and the OpenPGP keys they trust: read, never written.

Hosts that got CUDA 12.8 through NVIDIA's ``cuda-keyring`` package already have a source for the CUDA
repository (``/etc/apt/sources.list.d/cuda-<distro>-x86_64.list``, ``signed-by=/usr/share/keyrings/
cuda-archive-keyring.gpg``). apt refuses every source once two sources of one URI and suite set different
``Signed-By`` values (``E: Conflicting values set for option Signed-By regarding source ...``: apt compares
the Signed-By strings, not the keys). So before the cuda_toolkit role writes its own source it asks, here:

* which sources name the repository (one-line ``.list`` files and ``sources.list``, deb822 ``.sources``; with
  or without a trailing slash, http or https);
* which keys each of them trusts (``signed-by`` a keyring file - binary or armored -, a list of fingerprints,
  a key embedded in a deb822 stanza, or, with no Signed-By, apt's global keyrings);
* and decides (``judge``): **reuse** the existing source when it trusts exactly the declared key, **refuse**
  (before anything changes, naming the file and the fix) when it trusts another key or sets ``trusted=yes``,
  **add** the role's own source when there is none.

The OpenPGP reader computes fingerprints from the key packets (RFC 4880 section 12.2 for v4 keys, RFC 9580
section 5.5.4 for v6, the v5 draft for v5): no gpg is needed on the host. Input is capped and every parse
is linear in its size.
"""

from __future__ import annotations

import base64
import glob
import hashlib
import os
import re

MAX_SOURCE_BYTES = 1024 * 1024
MAX_KEYRING_BYTES = 4 * 1024 * 1024
MAX_SOURCE_FILES = 1000

KEYBOX_MAGIC = b'KBXf'
_FINGERPRINT = re.compile(r'^(?:[0-9A-F]{40}|[0-9A-F]{64})$')
_DEB822_FIELD = re.compile(r'^([A-Za-z0-9][A-Za-z0-9-]*):(.*)$')
_TRUE = ('yes', 'true', 'with', 'on', 'enable', '1')
_FALSE = ('no', 'false', 'without', 'off', 'disable', '0')


class AptSourcesError(ValueError):
    """A file that cannot be read as what it claims to be; the message says which and why."""


# --------------------------------------------------------------------------------------------- OpenPGP

def normalize_fingerprint(value):
    """'eb69 3b30 ... 3bf8 63cc' -> 'EB693B30...3BF863CC'; None when it is not a v4 (40) or v6 (64) fingerprint."""
    text = re.sub(r'[\s:]', '', str(value or '')).upper().rstrip('!')
    if text.startswith('0X'):
        text = text[2:]
    return text if _FINGERPRINT.match(text) else None


def _crc24(data):
    crc = 0xB704CE
    for byte in bytearray(data):
        crc ^= byte << 16
        for _bit in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def dearmor(text, what='key'):
    """Every armored block of ``text`` (str or bytes) -> the concatenated binary packets.

    Checks the CRC-24 line where there is one. Raises AptSourcesError when there is no block or a block
    does not decode.
    """
    if isinstance(text, bytes):
        text = text.decode('ascii', 'replace')
    lines = text.splitlines()
    out = []
    i = 0
    found = False
    while i < len(lines):
        if not lines[i].strip().startswith('-----BEGIN PGP'):
            i += 1
            continue
        found = True
        i += 1
        # Armor headers (Version:, Comment:) up to the blank line.
        while i < len(lines) and lines[i].strip() and re.match(r'^[A-Za-z][A-Za-z-]*: ', lines[i].strip()):
            i += 1
        chunks = []
        checksum = None
        while i < len(lines) and not lines[i].strip().startswith('-----END PGP'):
            line = lines[i].strip()
            if line.startswith('=') and len(line) == 5:
                checksum = line[1:]
            elif line:
                chunks.append(line)
            i += 1
        if i >= len(lines):
            raise AptSourcesError('%s: armored block without its END line' % what)
        try:
            block = base64.b64decode(''.join(chunks), validate=True)
        except ValueError as exc:
            raise AptSourcesError('%s: armored block does not decode: %s' % (what, exc))
        if checksum is not None:
            try:
                want = int.from_bytes(base64.b64decode(checksum, validate=True), 'big')
            except ValueError:
                raise AptSourcesError('%s: armor checksum line "=%s" does not decode' % (what, checksum))
            if _crc24(block) != want:
                raise AptSourcesError('%s: armor checksum does not match its content (damaged file)' % what)
        out.append(block)
        i += 1
    if not found:
        raise AptSourcesError('%s: no "-----BEGIN PGP" armored block' % what)
    return b''.join(out)


def _packets(data, what):
    """Yield (tag, body) of each OpenPGP packet (RFC 4880 section 4.2, old and new format headers)."""
    i = 0
    n = len(data)
    while i < n:
        head = data[i]
        i += 1
        if not head & 0x80:
            raise AptSourcesError('%s: byte %d is not an OpenPGP packet header (not a key file)' % (what, i - 1))
        if head & 0x40:
            tag = head & 0x3F
            if i >= n:
                raise AptSourcesError('%s: packet header cut off' % what)
            first = data[i]
            i += 1
            if first < 192:
                length = first
            elif first < 224:
                if i >= n:
                    raise AptSourcesError('%s: packet length cut off' % what)
                length = ((first - 192) << 8) + data[i] + 192
                i += 1
            elif first == 255:
                if i + 4 > n:
                    raise AptSourcesError('%s: packet length cut off' % what)
                length = int.from_bytes(data[i:i + 4], 'big')
                i += 4
            else:
                raise AptSourcesError('%s: partial-length packet (a message, not a key)' % what)
        else:
            tag = (head >> 2) & 0x0F
            kind = head & 0x03
            if kind == 3:
                length = n - i
            else:
                size = (1, 2, 4)[kind]
                if i + size > n:
                    raise AptSourcesError('%s: packet length cut off' % what)
                length = int.from_bytes(data[i:i + size], 'big')
                i += size
        if i + length > n:
            raise AptSourcesError('%s: packet of %d bytes cut off at %d' % (what, length, n - i))
        yield tag, data[i:i + length]
        i += length


def key_fingerprint(body):
    """Fingerprint of a public-key or public-subkey packet body (upper-case hex); None for v3 and unknown versions."""
    if not body:
        return None
    version = body[0]
    if version == 4:
        return hashlib.sha1(b'\x99' + len(body).to_bytes(2, 'big') + body).hexdigest().upper()
    if version == 5:
        return hashlib.sha256(b'\x9a' + len(body).to_bytes(4, 'big') + body).hexdigest().upper()
    if version == 6:
        return hashlib.sha256(b'\x9b' + len(body).to_bytes(4, 'big') + body).hexdigest().upper()
    return None


def read_keyring(data, what='keyring'):
    """The keys of a keyring: binary (``gpg --export``, ``.gpg``) or armored (``.asc``).

    Returns ``{'format': 'binary'|'armored', 'keys': [{'fingerprint', 'subkeys': [...], 'uids': [...]}]}``;
    raises AptSourcesError for a GnuPG keybox (which apt cannot read either) and for anything that is not
    OpenPGP key material.
    """
    if len(data) > MAX_KEYRING_BYTES:
        raise AptSourcesError('%s: %d bytes, more than the %d a keyring may have' % (what, len(data), MAX_KEYRING_BYTES))
    if len(data) >= 12 and data[8:12] == KEYBOX_MAGIC:
        raise AptSourcesError('%s: a GnuPG keybox (gpg --keyring without --export), which apt cannot read; write it '
                              'with "gpg --export" (binary) or "gpg --export --armor" (.asc) instead' % what)
    fmt = 'binary'
    if data.lstrip()[:5] == b'-----':
        fmt = 'armored'
        data = dearmor(data, what)
    if not data:
        raise AptSourcesError('%s: empty' % what)
    keys = []
    for tag, body in _packets(data, what):
        if tag in (6, 5):
            fingerprint = key_fingerprint(body)
            if fingerprint is None:
                raise AptSourcesError('%s: a version %d key, which has no fingerprint apt can match' % (what, body[0] if body else 0))
            keys.append({'fingerprint': fingerprint, 'subkeys': [], 'uids': []})
        elif tag in (14, 7):
            if not keys:
                raise AptSourcesError('%s: a subkey before any primary key' % what)
            fingerprint = key_fingerprint(body)
            if fingerprint:
                keys[-1]['subkeys'].append(fingerprint)
        elif tag == 13 and keys:
            keys[-1]['uids'].append(body.decode('utf-8', 'replace'))
    if not keys:
        raise AptSourcesError('%s: OpenPGP data without any public key' % what)
    return {'format': fmt, 'keys': keys}


def keyring_fingerprints(keyring):
    """Primary and subkey fingerprints of a read_keyring() result, as two lists."""
    primaries = [key['fingerprint'] for key in keyring['keys']]
    subkeys = [sub for key in keyring['keys'] for sub in key['subkeys']]
    return primaries, subkeys


# --------------------------------------------------------------------------------------------- sources

def normalize_url(url):
    """The repository a URI names, for comparison: http and https alike, host lower-case, no default port,
    no trailing or doubled slashes. 'https://Developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/'
    and 'http://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64' are the same repository."""
    text = str(url or '').strip()
    scheme, sep, rest = text.partition('://')
    if not sep:
        scheme, sep, rest = text.partition(':')
        if not sep:
            return text.rstrip('/')
        return '%s:%s' % (scheme.lower(), re.sub('/+', '/', rest).rstrip('/') or '/')
    scheme = scheme.lower()
    host, _slash, path = rest.partition('/')
    host = host.lower()
    if scheme in ('http', 'https'):
        host = re.sub(r':(80|443)$', '', host)
        scheme = 'http(s)'
    path = re.sub('/+', '/', path).strip('/')
    return '%s://%s/%s' % (scheme, host, path)


def _bool(value):
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def parse_one_line(text, path='sources.list'):
    """Entries of a one-line-style file (sources.list(5)): ``deb [opt=value ...] uri suite [component ...]``."""
    entries = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split('#', 1)[0].strip()
        if not line:
            continue
        kind, _sep, rest = line.partition(' ')
        if kind not in ('deb', 'deb-src'):
            entries.append({'file': path, 'line': number, 'format': 'one-line', 'error': 'unknown type "%s"' % kind, 'text': raw.strip()})
            continue
        rest = rest.strip()
        options = {}
        if rest.startswith('['):
            end = rest.find(']')
            if end < 0:
                entries.append({'file': path, 'line': number, 'format': 'one-line', 'error': 'option list without "]"', 'text': raw.strip()})
                continue
            for option in rest[1:end].split():
                key, eq, value = option.partition('=')
                if eq:
                    options[key.strip().lower()] = value.strip()
            rest = rest[end + 1:].strip()
        words = rest.split()
        if len(words) < 2:
            entries.append({'file': path, 'line': number, 'format': 'one-line', 'error': 'no URI and suite', 'text': raw.strip()})
            continue
        entries.append({
            'file': path, 'line': number, 'format': 'one-line', 'text': raw.strip(),
            'types': [kind], 'uris': [words[0]], 'suites': [words[1]], 'components': words[2:],
            'signed_by': options.get('signed-by'), 'trusted': _bool(options['trusted']) if 'trusted' in options else None,
            'enabled': True, 'options': options,
        })
    return entries


def parse_deb822(text, path='x.sources'):
    """Entries of a deb822-style ``.sources`` file (sources.list(5)), one per stanza.

    Field names are case-insensitive; a continuation line starts with a space or tab and " ." stands for an
    empty line (as in a Signed-By that embeds a key).
    """
    entries = []
    fields = {}
    start = None
    current = None

    def flush():
        if not fields:
            return
        words = dict((key, value.split()) for key, value in fields.items() if key != 'signed-by')
        signed_by = fields.get('signed-by')
        entry = {
            'file': path, 'line': start, 'format': 'deb822',
            'types': words.get('types', []), 'uris': words.get('uris', []), 'suites': words.get('suites', []),
            'components': words.get('components', []),
            'signed_by': signed_by.strip() if signed_by is not None else None,
            'trusted': _bool(fields['trusted']) if 'trusted' in fields else None,
            'enabled': _bool(fields['enabled']) is not False if 'enabled' in fields else True,
            'options': dict((key, value.strip()) for key, value in fields.items() if key != 'signed-by'),
        }
        if not entry['types'] or not entry['uris'] or not entry['suites']:
            entry['error'] = 'stanza without Types, URIs or Suites'
        entries.append(entry)

    for number, raw in enumerate(text.splitlines(), 1):
        if raw.startswith('#'):
            continue
        if not raw.strip():
            flush()
            fields, start, current = {}, None, None
            continue
        if raw[0] in ' \t':
            if current is None:
                raise AptSourcesError('%s line %d: a continuation line before any field' % (path, number))
            value = raw.strip()
            fields[current] += '\n' + ('' if value == '.' else value)
            continue
        match = _DEB822_FIELD.match(raw)
        if not match:
            raise AptSourcesError('%s line %d: not a "Field: value" line: %s' % (path, number, raw.strip()[:120]))
        current = match.group(1).lower()
        if start is None:
            start = number
        fields[current] = match.group(2).strip()
    flush()
    return entries


def read_sources(apt_dir='/etc/apt'):
    """Every source entry apt reads: sources.list, sources.list.d/*.list and *.sources (apt ignores other names).

    Returns ``(entries, problems)``; a file that cannot be read or parsed is a problem, not an exception.
    """
    paths = []
    main = os.path.join(apt_dir, 'sources.list')
    if os.path.isfile(main):
        paths.append(main)
    parts = sorted(glob.glob(os.path.join(apt_dir, 'sources.list.d', '*.list')) + glob.glob(os.path.join(apt_dir, 'sources.list.d', '*.sources')))
    paths.extend(p for p in parts if os.path.isfile(p))
    entries, problems = [], []
    for path in paths[:MAX_SOURCE_FILES]:
        try:
            with open(path, 'rb') as handle:
                data = handle.read(MAX_SOURCE_BYTES + 1)
        except (IOError, OSError) as exc:
            problems.append('%s cannot be read: %s' % (path, exc))
            continue
        if len(data) > MAX_SOURCE_BYTES:
            problems.append('%s is larger than %d bytes; not a source file apt is meant to read' % (path, MAX_SOURCE_BYTES))
            continue
        text = data.decode('utf-8', 'replace')
        try:
            entries.extend(parse_deb822(text, path) if path.endswith('.sources') else parse_one_line(text, path))
        except AptSourcesError as exc:
            problems.append(str(exc))
    if len(paths) > MAX_SOURCE_FILES:
        problems.append('more than %d source files under %s; only the first were read' % (MAX_SOURCE_FILES, apt_dir))
    return entries, problems


def _read_file(path):
    with open(path, 'rb') as handle:
        data = handle.read(MAX_KEYRING_BYTES + 1)
    return data


def global_keyrings(apt_dir='/etc/apt'):
    """The keyrings apt trusts for a source without Signed-By: trusted.gpg and trusted.gpg.d/*.gpg, *.asc."""
    paths = [os.path.join(apt_dir, 'trusted.gpg')]
    paths += sorted(glob.glob(os.path.join(apt_dir, 'trusted.gpg.d', '*.gpg')) + glob.glob(os.path.join(apt_dir, 'trusted.gpg.d', '*.asc')))
    return [p for p in paths if os.path.isfile(p)]


def entry_trust(entry, apt_dir='/etc/apt', reader=_read_file):
    """Which keys a source entry trusts.

    Returns ``{'kind', 'keyrings', 'primaries', 'subkeys', 'errors', 'exclusive'}``: ``kind`` is ``keyring``
    (Signed-By names files), ``fingerprints`` (Signed-By lists fingerprints: apt takes those keys from its global
    keyrings), ``embedded`` (a deb822 Signed-By holding the key itself) or ``global`` (no Signed-By: every key of
    trusted.gpg and trusted.gpg.d). ``exclusive`` is False for ``global``: those keyrings trust other
    repositories' keys too, so only the presence of the declared key can be asked of them.
    """
    value = entry.get('signed_by')
    result = {'kind': None, 'keyrings': [], 'primaries': [], 'subkeys': [], 'errors': [], 'exclusive': True}

    def add_keyring(path, data):
        try:
            ring = read_keyring(data, path)
        except AptSourcesError as exc:
            result['errors'].append(str(exc))
            return
        primaries, subkeys = keyring_fingerprints(ring)
        result['primaries'].extend(primaries)
        result['subkeys'].extend(subkeys)

    if value is None or not value.strip():
        result['kind'] = 'global'
        result['exclusive'] = False
        for path in global_keyrings(apt_dir):
            result['keyrings'].append(path)
            try:
                add_keyring(path, reader(path))
            except (IOError, OSError) as exc:
                result['errors'].append('%s cannot be read: %s' % (path, exc))
        return result
    if '-----BEGIN PGP' in value:
        result['kind'] = 'embedded'
        add_keyring('%s line %s (Signed-By key block)' % (entry.get('file'), entry.get('line')), value.encode('ascii', 'replace'))
        return result
    items = [item.strip() for item in re.split(r'[,\s]+', value) if item.strip()]
    if all(item.startswith('/') for item in items):
        result['kind'] = 'keyring'
        for path in items:
            result['keyrings'].append(path)
            try:
                add_keyring(path, reader(path))
            except (IOError, OSError) as exc:
                result['errors'].append('%s (its Signed-By keyring) cannot be read: %s' % (path, exc.strerror or exc))
        return result
    result['kind'] = 'fingerprints'
    for item in items:
        if item.startswith('/'):
            result['keyrings'].append(item)
            try:
                add_keyring(item, reader(item))
            except (IOError, OSError) as exc:
                result['errors'].append('%s (its Signed-By keyring) cannot be read: %s' % (item, exc.strerror or exc))
            continue
        fingerprint = normalize_fingerprint(item)
        if fingerprint is None:
            result['errors'].append('Signed-By item "%s" is neither an absolute path nor a fingerprint' % item)
        else:
            result['primaries'].append(fingerprint)
    return result


def trust_matches(trust, fingerprint):
    """Whether a source's trust is the declared key: the key is there, and (for Signed-By) nothing else is."""
    if trust['errors'] or not fingerprint:
        return False
    known = set(trust['primaries']) | set(trust['subkeys'])
    if fingerprint not in known:
        return False
    if not trust['exclusive']:
        return True
    return set(trust['primaries']) <= {fingerprint} or (
        fingerprint in trust['subkeys'] and len(set(trust['primaries'])) == 1)


def _where(entry):
    return '%s line %s' % (entry['file'], entry['line'])


def _signed_by_text(entry):
    value = entry.get('signed_by')
    if value is None:
        return 'no Signed-By (apt\'s global keyrings)'
    if '-----BEGIN PGP' in value:
        return 'Signed-By an embedded key'
    return 'signed-by=%s' % value


def judge(entries, repo_url, fingerprint, related_urls=(), managed_files=(), apt_dir='/etc/apt', reader=_read_file):
    """Decide what to do about the repository ``repo_url`` given the host's source entries.

    ``related_urls``: other URLs of the same repository (NVIDIA's, a mirror's): a ``trusted=yes`` on any of them
    is refused too. ``managed_files``: the files the role writes itself (never judged: the role rewrites or
    removes them). Returns ``{'decision': 'add'|'reuse'|'refuse', 'reuse': entry or None, 'problems': [...],
    'sources': [the relevant entries with 'trust', 'key_matches', 'same_url']}``.
    """
    fingerprint = normalize_fingerprint(fingerprint)
    target = normalize_url(repo_url)
    related = set(normalize_url(url) for url in related_urls if url) | {target}
    managed = set(os.path.normpath(str(path)) for path in managed_files if path)
    relevant, problems = [], []
    for entry in entries:
        if entry.get('error') or os.path.normpath(entry['file']) in managed:
            continue
        urls = set(normalize_url(uri) for uri in entry['uris'])
        if not urls & related:
            continue
        item = dict(entry)
        item['same_url'] = target in urls
        relevant.append(item)
    same = []
    for item in relevant:
        if not item['enabled']:
            item['trust'] = None
            item['key_matches'] = None
            continue
        if item['trusted'] is True:
            problems.append(
                '%s sets trusted=yes on the CUDA repository (%s): apt then installs its packages without checking any '
                'signature. Remove trusted=yes from that source (keep signed-by=<NVIDIA\'s keyring>) or delete the file; '
                'nothing was changed.' % (_where(item), ' '.join(item['uris'])))
        trust = entry_trust(item, apt_dir, reader)
        item['trust'] = trust
        item['key_matches'] = trust_matches(trust, fingerprint)
        if item['same_url']:
            same.append(item)
    if not fingerprint:
        if same:
            problems.append('no fingerprint is declared for the CUDA repository key, so %s cannot be judged; declare it '
                            '(stack_declaration_cuda.apt_signing_keys or cuda_toolkit_apt_key_fingerprint)' % _where(same[0]))
        return {'decision': 'refuse' if problems else 'add', 'reuse': None, 'problems': problems, 'sources': relevant,
                'fingerprint': fingerprint}
    for item in same:
        if item['key_matches']:
            continue
        trust = item['trust']
        if trust['errors']:
            why = '; '.join(trust['errors'])
        elif fingerprint not in set(trust['primaries']) | set(trust['subkeys']):
            why = 'it trusts %s, not the declared key %s' % (', '.join(trust['primaries']) or 'no key', fingerprint)
        else:
            why = 'it trusts other keys besides the declared %s: %s' % (
                fingerprint, ', '.join(sorted(set(trust['primaries']) - {fingerprint})))
        problems.append(
            '%s is a source for %s with %s; %s. A second source for that URL with another Signed-By makes apt refuse every '
            'source ("Conflicting values set for option Signed-By"), so the role will not add one. Fix: if that key is the '
            'right one, declare its fingerprint (cuda_toolkit_apt_key_fingerprint); otherwise remove that source (for '
            'NVIDIA\'s cuda-keyring package: apt-get purge cuda-keyring, or delete the file) and run again. Nothing was '
            'changed.' % (_where(item), ' '.join(item['uris']), _signed_by_text(item), why))
    enabled_same = [item for item in same if item['key_matches']]
    distinct = sorted(set(str(item.get('signed_by') or '').rstrip(',') for item in enabled_same))
    if not problems and len(distinct) > 1:
        problems.append(
            'these sources of %s set different Signed-By values (%s): apt already refuses every source on this host. Keep '
            'one of them (%s) and remove the others; nothing was changed.'
            % (repo_url, '; '.join('%s: %s' % (_where(item), _signed_by_text(item)) for item in enabled_same),
               ', '.join(item['file'] for item in enabled_same)))
    if problems:
        decision = 'refuse'
    elif enabled_same:
        decision = 'reuse'
    else:
        decision = 'add'
    return {'decision': decision, 'reuse': enabled_same[0] if decision == 'reuse' else None, 'problems': problems,
            'sources': relevant, 'fingerprint': fingerprint}


def check_key_file(path, fingerprint, reader=_read_file):
    """A downloaded key file before it is trusted: its fingerprints and whether it is exactly the declared key."""
    fingerprint = normalize_fingerprint(fingerprint)
    result = {'path': path, 'format': None, 'primaries': [], 'subkeys': [], 'uids': [], 'matches': False, 'error': None}
    try:
        ring = read_keyring(reader(path), path)
    except (IOError, OSError) as exc:
        result['error'] = '%s cannot be read: %s' % (path, exc)
        return result
    except AptSourcesError as exc:
        result['error'] = str(exc)
        return result
    result['format'] = ring['format']
    result['primaries'], result['subkeys'] = keyring_fingerprints(ring)
    result['uids'] = [uid for key in ring['keys'] for uid in key['uids']]
    trust = {'errors': [], 'primaries': result['primaries'], 'subkeys': result['subkeys'], 'exclusive': True}
    result['matches'] = trust_matches(trust, fingerprint)
    if not result['matches']:
        result['error'] = ('%s holds %s, not exactly the declared key %s' % (path, ', '.join(result['primaries']), fingerprint)
                           if fingerprint else 'no fingerprint declared to check %s against' % path)
    return result

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""A flat apt repository (NVIDIA's CUDA layout: ``deb [signed-by=...] <base>/ /``), read the way apt reads it.

- ``parse_release`` / ``clearsigned_body``: the Release file (the content of InRelease that gpgv verified), its
  ``SHA256`` list and ``Valid-Until``;
- ``parse_stanzas`` / ``PackageIndex``: the ``Packages`` index, every version of every package;
- ``compare_versions`` / ``parse_relations`` / ``satisfies``: Debian versions (dpkg's algorithm) and relation fields
  (``Depends``, ``Pre-Depends``, ``Provides``: alternatives ``|``, version constraints, architecture qualifiers);
- ``resolve_closure``: what installing ``<package>=<version>`` takes from this repository.

Pure Python, no I/O: the module ``apt_repo_fetch`` downloads and verifies, this file decides.

The parsers are linear in their input (the relation pattern cannot backtrack over a long field; timed on
100,000-character fields in tests/unit/plugins/module_utils/test_apt_repo.py); numbers are bounded in length before
``int()``; text that is not UTF-8 is refused with AptRepoError, never a UnicodeDecodeError.
"""

from __future__ import annotations

import base64
import datetime
import email.utils
import fnmatch
import re

# Names under which a flat repository's Release lists the package index, uncompressed first.
PACKAGES_NAMES = ('Packages', 'Packages.xz', 'Packages.gz', 'Packages.bz2', 'Packages.lzma', 'Packages.zst', 'Packages.lz4')

# Release checksum lists apt does not trust on their own (it needs SHA256 or better for every file it reads).
WEAK_RELEASE_SUMS = ('MD5Sum', 'SHA1')

GNUPG_PREFIX = '[GNUPG:] '
# OpenPGP hash algorithm ids (RFC 4880 9.4) as VALIDSIG reports them; apt's gpgv method (methods/gpgv.cc, its Digests
# table) trusts 8 to 11 and treats 0 to 3 (invalid, MD5, SHA1, RIPEMD160) as untrusted.
DIGEST_NAMES = {'1': 'MD5', '2': 'SHA1', '3': 'RIPEMD160', '8': 'SHA256', '9': 'SHA384', '10': 'SHA512', '11': 'SHA224'}
TRUSTED_DIGESTS = ('8', '9', '10', '11')

# Each optional part takes its own leading blanks: the former form put a bare \s* between the optional parts, so
# three blank runs stood side by side and a long run of blanks was split every possible way (cubic: 20,000 blanks
# did not finish in 30 s). Same language, each blank run now has one owner.
_RELATION = re.compile(
    r'^(?P<name>[A-Za-z0-9][A-Za-z0-9+.\-]*)(?::(?P<arch>[A-Za-z0-9\-]+))?'
    r'(?:\s*\(\s*(?P<op><<|<=|=|>=|>>|<|>)\s*(?P<version>[^)\s]+)\s*\))?'
    r'(?:\s*\[[^\]]*\])?(?:\s*<[^>]*>)*\s*$'
)
# Epochs and sizes of at most 18 digits (int() refuses more than 4300, and no file is an exabyte).
_MAX_NUMBER_DIGITS = 18


def _ascii_number(text):
    """True for 1 to _MAX_NUMBER_DIGITS ASCII digits (str.isdigit() also takes '²', which int() refuses)."""
    return 0 < len(text) <= _MAX_NUMBER_DIGITS and text.isascii() and text.isdigit()


def _decode(data, what):
    """UTF-8 bytes -> str; AptRepoError (naming the first bad byte) for bytes that are not UTF-8."""
    if not isinstance(data, bytes):
        return data
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise AptRepoError('%s is not UTF-8 text (byte %d: %r)' % (what, exc.start, data[exc.start:exc.start + 1]))


class AptRepoError(Exception):
    """A repository that cannot give what was asked; the message names the cause."""


# ---------------------------------------------------------------------------------------------
# Versions (dpkg's algorithm: lib/dpkg/version.c)
# ---------------------------------------------------------------------------------------------

def _order(char):
    if char == '':
        return 0
    if char.isdigit():
        return 0
    if char.isascii() and char.isalpha():
        return ord(char)
    if char == '~':
        return -1
    return ord(char) + 256


def _verrevcmp(left, right):
    i = j = 0
    while i < len(left) or j < len(right):
        while (i < len(left) and not left[i].isdigit()) or (j < len(right) and not right[j].isdigit()):
            lc = _order(left[i] if i < len(left) else '')
            rc = _order(right[j] if j < len(right) else '')
            if lc != rc:
                return lc - rc
            i += 1
            j += 1
        while i < len(left) and left[i] == '0':
            i += 1
        while j < len(right) and right[j] == '0':
            j += 1
        first_diff = 0
        while i < len(left) and left[i].isdigit() and j < len(right) and right[j].isdigit():
            if not first_diff:
                first_diff = ord(left[i]) - ord(right[j])
            i += 1
            j += 1
        if i < len(left) and left[i].isdigit():
            return 1
        if j < len(right) and right[j].isdigit():
            return -1
        if first_diff:
            return first_diff
    return 0


def split_version(version):
    """'1:13.0.2-1' -> (1, '13.0.2', '1'); no epoch is 0, no revision is ''."""
    version = str(version).strip()
    epoch = 0
    if ':' in version:
        head, version = version.split(':', 1)
        if not _ascii_number(head):
            raise AptRepoError('version "%s": epoch "%s" is not a number' % (version, head))
        epoch = int(head)
    revision = ''
    if '-' in version:
        version, revision = version.rsplit('-', 1)
    return epoch, version, revision


def compare_versions(left, right):
    """-1, 0 or 1 as dpkg --compare-versions orders two Debian versions."""
    le, lu, lr = split_version(left)
    re_, ru, rr = split_version(right)
    if le != re_:
        return -1 if le < re_ else 1
    for a, b in ((lu, ru), (lr, rr)):
        result = _verrevcmp(a, b)
        if result:
            return -1 if result < 0 else 1
    return 0


def satisfies(version, op, wanted):
    """Whether ``version`` meets the constraint ``op wanted`` (no op: any version; '<' and '>' are '<=' and '>=')."""
    if not op:
        return True
    if version is None:
        return False
    cmp = compare_versions(version, wanted)
    return {
        '<<': cmp < 0, '<=': cmp <= 0, '<': cmp <= 0,
        '=': cmp == 0,
        '>>': cmp > 0, '>=': cmp >= 0, '>': cmp >= 0,
    }[op]


# ---------------------------------------------------------------------------------------------
# deb822 text
# ---------------------------------------------------------------------------------------------

def parse_stanzas(text):
    """deb822 paragraphs -> list of dicts, field names lower-cased, continuation lines kept (joined by '\\n').

    ``text`` may be bytes: UTF-8, else AptRepoError. A field's lines are gathered in a list and joined once (adding
    each continuation line to a growing string copied the field every time: quadratic in a long field).
    """
    text = _decode(text, 'the deb822 text')
    stanzas = []
    current = {}
    field = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            if current:
                stanzas.append(_joined(current))
            current, field = {}, None
            continue
        if line.startswith('#') and field is None:
            continue
        if line[0] in ' \t':
            if field is None:
                raise AptRepoError('line %d: continuation line outside a field: %r' % (number, line[:200]))
            current[field].append(line.strip())
            continue
        if ':' not in line:
            raise AptRepoError('line %d: not a "Field: value" line: %r' % (number, line[:200]))
        name, value = line.split(':', 1)
        field = name.strip().lower()
        current[field] = [value.strip()]
    if current:
        stanzas.append(_joined(current))
    return stanzas


def _joined(fields):
    return dict((name, '\n'.join(lines)) for name, lines in fields.items())


def parse_relations(text):
    """'a (>= 1) | b:any, c' -> [[('a', '>=', '1'), ('b', None, None)], [('c', None, None)]]."""
    groups = []
    for part in (text or '').replace('\n', ' ').split(','):
        if not part.strip():
            continue
        group = []
        for alternative in part.split('|'):
            match = _RELATION.match(alternative.strip())
            if not match:
                raise AptRepoError('relation "%s" cannot be read' % alternative.strip()[:200])
            group.append((match.group('name'), match.group('op'), match.group('version')))
        groups.append(group)
    return groups


def format_relation(group):
    return ' | '.join('%s (%s %s)' % (n, o, v) if o else n for n, o, v in group)


def clearsigned_body(data):
    """The signed text of a clearsigned message (InRelease), dash-escaping removed; for reading only.

    The module reads what gpgv writes with --output (exactly what the signature covers); this is the same
    text for a message that holds one signed part, and an error for anything else.
    """
    text = _decode(data, 'the clearsigned message')
    lines = text.splitlines()
    try:
        start = lines.index('-----BEGIN PGP SIGNED MESSAGE-----')
    except ValueError:
        raise AptRepoError('not a clearsigned message (no "-----BEGIN PGP SIGNED MESSAGE-----" line)')
    if any(line.strip() for line in lines[:start]):
        raise AptRepoError('text before the signed message')
    i = start + 1
    while i < len(lines) and lines[i].strip():
        if not lines[i].startswith('Hash:'):
            raise AptRepoError('unexpected armor header %r' % lines[i])
        i += 1
    body = []
    for line in lines[i + 1:]:
        if line == '-----BEGIN PGP SIGNATURE-----':
            break
        if line.startswith('-----'):
            raise AptRepoError('unexpected armor line %r inside the signed text' % line)
        body.append(line[2:] if line.startswith('- ') else line)
    else:
        raise AptRepoError('no "-----BEGIN PGP SIGNATURE-----" after the signed text')
    return '\n'.join(body) + '\n'


def dearmor(data):
    """An ASCII-armored OpenPGP key (NVIDIA's 3bf863cc.pub) -> binary; binary input is returned as it is."""
    if not data.lstrip().startswith(b'-----BEGIN PGP'):
        return data
    lines = data.decode('ascii', 'replace').splitlines()
    i = 0
    while not lines[i].startswith('-----BEGIN PGP'):
        i += 1
    i += 1
    while i < len(lines) and lines[i].strip() and ':' in lines[i]:
        i += 1
    chunks = []
    for line in lines[i:]:
        line = line.strip()
        if line.startswith('-----END PGP') or (line.startswith('=') and len(line) == 5):
            break
        chunks.append(line)
    try:
        return base64.b64decode(''.join(chunks), validate=True)
    except ValueError as exc:
        raise AptRepoError('armored key cannot be decoded: %s' % exc)


def parse_release(text, now=None):
    """A Release text -> {'fields': {...}, 'sha256': {name: (sha256, size)}}; refuses an expired Valid-Until."""
    stanzas = parse_stanzas(text)
    if len(stanzas) != 1:
        raise AptRepoError('Release holds %d paragraphs, expected 1' % len(stanzas))
    fields = stanzas[0]
    entries = {}
    for line in fields.get('sha256', '').splitlines():
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3 or not re.match(r'^[0-9a-f]{64}$', parts[0]) or not _ascii_number(parts[1]):
            raise AptRepoError('Release SHA256 line %r is not "<sha256> <size> <name>"' % line)
        entries[parts[2]] = (parts[0], int(parts[1]))
    weak = [field for field in WEAK_RELEASE_SUMS if fields.get(field.lower(), '').strip()]
    if not entries:
        raise AptRepoError('Release lists no SHA256 sums%s (apt refuses a repository without them)'
                           % ((', only ' + ' and '.join(weak) + ', which apt does not trust') if weak else ''))
    valid_until = fields.get('valid-until')
    if valid_until:
        try:
            until = email.utils.parsedate_to_datetime(valid_until)
        except (TypeError, ValueError):
            raise AptRepoError('Release Valid-Until "%s" cannot be read' % valid_until)
        if until.tzinfo is None:
            until = until.replace(tzinfo=datetime.timezone.utc)
        now = now or datetime.datetime.now(datetime.timezone.utc)
        if until < now:
            raise AptRepoError('Release expired: Valid-Until %s' % valid_until)
    weak_only = set()
    for field in WEAK_RELEASE_SUMS:
        for line in fields.get(field.lower(), '').splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2] not in entries:
                weak_only.add(parts[2])
    return {'fields': fields, 'sha256': entries, 'weak_only': sorted(weak_only)}


def packages_entries(release):
    """The package index files a flat Release lists, in PACKAGES_NAMES order: [(name, sha256, size)].

    Only the SHA256 list counts: an index the Release names only under MD5Sum or SHA1 is not taken (apt refuses it:
    "no Hash entry in Release file ... which is considered strong enough for security purposes").
    """
    return [(name,) + release['sha256'][name] for name in PACKAGES_NAMES if name in release['sha256']]


def weak_only_indexes(release):
    """The package indexes the Release lists only under MD5Sum or SHA1 (never taken), in PACKAGES_NAMES order."""
    return [name for name in PACKAGES_NAMES if name in release.get('weak_only', ())]


# ---------------------------------------------------------------------------------------------
# gpgv's verdict, read as apt's gpgv method (methods/gpgv.cc) reads it
# ---------------------------------------------------------------------------------------------

def judge_gpgv_status(status, rc):
    """gpgv's ``--status-fd`` lines and exit code -> the fingerprints of the good signatures; AptRepoError otherwise.

    A signature counts only with both GOODSIG and VALIDSIG for the same key and a digest apt trusts (SHA224, SHA256,
    SHA384, SHA512: apt's gpgv method treats MD5, SHA1, RIPEMD160 and unknown digests as untrusted). gpgv itself
    exits 0 for a signature by an expired key (EXPKEYSIG), a revoked key (REVKEYSIG) and a SHA1 digest, and prints
    VALIDSIG for them: apt refuses them, and so does this. BADSIG, ERRSIG, NO_PUBKEY, NODATA, EXPSIG, a non-zero exit
    code or no good signature at all are refused too. The error names every reason found. KEYEXPIRED and KEYREVOKED
    describe a key of the keyring, not necessarily the one that signed (an old subkey): as in apt they refuse nothing
    on their own; KEYEXPIRED gives the date named for an EXPKEYSIG.
    """
    reasons = []
    good = []
    valid = []
    expired_at = None
    for line in status.splitlines():
        if not line.startswith(GNUPG_PREFIX):
            continue
        tokens = line[len(GNUPG_PREFIX):].split()
        if not tokens:
            continue
        word, args = tokens[0], tokens[1:]
        keyid = args[0] if args else '?'
        uid = ' '.join(args[1:])
        named = 'key %s%s' % (keyid, (' (%s)' % uid) if uid else '')
        if word == 'KEYEXPIRED' and args:
            expired_at = _status_time(args[0])
        elif word == 'GOODSIG':
            good.append(keyid)
        elif word == 'VALIDSIG' and len(args) >= 8:
            digest = args[7]
            valid.append(args[0])
            if digest not in TRUSTED_DIGESTS:
                reasons.append('signed by key %s with digest %s, which apt refuses (it trusts only SHA224, SHA256, SHA384, '
                               'SHA512)' % (args[0], DIGEST_NAMES.get(digest, 'algorithm %s' % digest)))
                valid.pop()
        elif word == 'EXPKEYSIG':
            reasons.append('signed by %s, which expired%s' % (named, (' on ' + expired_at) if expired_at else ''))
        elif word == 'REVKEYSIG':
            reasons.append('signed by %s, which is revoked' % named)
        elif word == 'EXPSIG':
            reasons.append('the signature by %s has expired' % named)
        elif word == 'BADSIG':
            reasons.append('BADSIG: the signature by %s does not match the content' % named)
        elif word == 'ERRSIG':
            reasons.append('ERRSIG: the signature by key %s cannot be checked' % keyid)
        elif word == 'NO_PUBKEY':
            reasons.append('NO_PUBKEY: signed by key %s, which is not in the keyring' % keyid)
        elif word == 'NODATA':
            reasons.append('NODATA: no signature found')
    accepted = [fpr for fpr in valid if any(_same_key(fpr, keyid) for keyid in good)]
    if rc != 0 and not reasons:
        reasons.append('gpgv exited with %d' % rc)
    if not accepted and not reasons:
        reasons.append('no good signature')
    if reasons:
        raise AptRepoError('; '.join(reasons))
    return accepted


def _same_key(fingerprint, keyid):
    """VALIDSIG gives a fingerprint, GOODSIG a long key id or a fingerprint (apt's IsTheSameKey)."""
    return fingerprint.upper().endswith(keyid.upper()) and len(keyid) >= 16


def _status_time(value):
    """A status-fd time (seconds since the epoch, or ISO 8601 as 20200102T000000) -> 'YYYY-MM-DD HH:MM:SS UTC'."""
    try:
        if 'T' in value:
            when = datetime.datetime.strptime(value, '%Y%m%dT%H%M%S')
        else:
            when = datetime.datetime.fromtimestamp(int(value), datetime.timezone.utc).replace(tzinfo=None)
    except (ValueError, OverflowError, OSError):
        return value
    return when.strftime('%Y-%m-%d %H:%M:%S UTC')


# ---------------------------------------------------------------------------------------------
# The package index and the dependency closure
# ---------------------------------------------------------------------------------------------

class PackageIndex(object):
    """Every version of every package of one Packages index, for one architecture (plus ``all``)."""

    def __init__(self, text, architecture='amd64', exclude=()):
        self.architecture = architecture
        self.exclude = list(exclude)
        self.excluded = set()
        self.versions = {}
        self.providers = {}
        for stanza in parse_stanzas(text):
            for field in ('package', 'version', 'filename', 'sha256'):
                if not stanza.get(field):
                    raise AptRepoError('Packages: the paragraph of %s lacks %s' % (stanza.get('package', '(no name)'), field.title()))
            if stanza.get('architecture', 'all') not in (architecture, 'all'):
                continue
            if any(fnmatch.fnmatchcase(stanza['package'], pattern) for pattern in self.exclude):
                self.excluded.add(stanza['package'])
                continue
            self.versions.setdefault(stanza['package'], []).append(stanza)
            for group in parse_relations(stanza.get('provides', '')):
                for name, dummy, version in group:
                    self.providers.setdefault(name, []).append((stanza, version))
        for stanzas in self.versions.values():
            stanzas.sort(key=_VersionKey, reverse=True)

    def known(self, name):
        """Whether the repository carries ``name`` (a package or something a package provides), excluded ones too."""
        return name in self.versions or name in self.providers or name in self.excluded

    def find(self, name, version):
        for stanza in self.versions.get(name, []):
            if compare_versions(stanza['version'], version) == 0:
                return stanza
        return None

    def candidates(self, name, op, version):
        """Packages that satisfy one alternative, best first: the name itself (highest version first), then providers."""
        found = [s for s in self.versions.get(name, []) if satisfies(s['version'], op, version)]
        providers = []
        for stanza, provided in self.providers.get(name, []):
            if (not op or satisfies(provided, op, version)) and stanza not in providers:
                providers.append(stanza)
        providers.sort(key=lambda s: (s['package'], _NegVersionKey(s)))
        return found + providers


class _VersionKey(object):
    """Sort key ordering stanzas by their Debian version."""

    def __init__(self, stanza):
        self.version = stanza['version']

    def __lt__(self, other):
        return compare_versions(self.version, other.version) < 0

    def __eq__(self, other):
        return compare_versions(self.version, other.version) == 0


class _NegVersionKey(_VersionKey):
    """The reverse order (highest version first, inside an ascending sort)."""

    def __lt__(self, other):
        return compare_versions(self.version, other.version) > 0


def _provides(stanza, name, op, version):
    for group in parse_relations(stanza.get('provides', '')):
        for pname, dummy, pversion in group:
            if pname == name and (not op or satisfies(pversion, op, version)):
                return True
    return False


def resolve_closure(index, package, version):
    """What ``apt-get install --no-install-recommends <package>=<version>`` takes from this repository.

    Follows ``Pre-Depends`` and ``Depends`` from the requested version, breadth first. For each relation (a group of
    alternatives): satisfied when a package already chosen meets one alternative; otherwise the first alternative the
    repository can meet, with the highest version that meets the constraint (apt's candidate, the repository's pin
    priorities being equal); a virtual name is met by its providers. Relations the repository does not carry at all are
    left to the host's distribution and returned in ``external``.

    Returns {'packages': [stanza, ...] (the requested package first), 'external': ['relation (needed by pkg)', ...]}.
    Raises AptRepoError when the requested version is not there, when a relation names only packages of the repository
    and none of their versions meets it, or when two packages need different versions of one package.
    """
    root = index.find(package, version)
    if root is None:
        if package in index.excluded:
            raise AptRepoError('%s is excluded (a forbidden package pattern matches it)' % package)
        have = [s['version'] for s in index.versions.get(package, [])]
        raise AptRepoError('%s=%s is not in the repository (%s)' % (
            package, version, ('versions there: ' + ', '.join(have)) if have else 'no version of it at all'))
    chosen = {root['package']: root}
    order = [root]
    external = []
    queue = [root]
    while queue:
        stanza = queue.pop(0)
        for field in ('pre-depends', 'depends'):
            for group in parse_relations(stanza.get(field, '')):
                if _met(chosen, group):
                    continue
                pick = None
                in_repo = False
                for name, op, wanted in group:
                    if not index.known(name):
                        continue
                    in_repo = True
                    for candidate in index.candidates(name, op, wanted):
                        held = chosen.get(candidate['package'])
                        if held is not None and held is not candidate:
                            continue
                        pick = candidate
                        break
                    if pick is not None:
                        break
                if pick is None:
                    if in_repo and all(index.known(name) for name, dummy, dummy2 in group):
                        raise AptRepoError(_unmet(index, chosen, stanza, field, group))
                    external.append('%s (%s of %s %s)' % (format_relation(group), field.title(), stanza['package'], stanza['version']))
                    continue
                chosen[pick['package']] = pick
                order.append(pick)
                queue.append(pick)
    return {'packages': order, 'external': external}


def _met(chosen, group):
    for name, op, wanted in group:
        held = chosen.get(name)
        if held is not None and satisfies(held['version'], op, wanted):
            return True
        if any(_provides(s, name, op, wanted) for s in chosen.values()):
            return True
    return False


def _unmet(index, chosen, stanza, field, group):
    details = []
    for name, op, wanted in group:
        if name in index.excluded:
            details.append('%s is excluded (a forbidden package pattern matches it)' % name)
            continue
        have = [s['version'] for s in index.versions.get(name, [])]
        held = chosen.get(name)
        if held is not None:
            details.append('%s %s is already taken (for another relation)' % (name, held['version']))
        elif have:
            details.append('%s has only %s' % (name, ', '.join(have)))
        else:
            details.append('%s is only provided by %s' % (name, ', '.join(sorted(set(s['package'] for s, dummy in index.providers.get(name, []))))))
    return '%s %s: %s %s cannot be met from the repository (%s)' % (
        stanza['package'], stanza['version'], field.title(), format_relation(group), '; '.join(details))

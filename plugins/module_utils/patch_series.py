# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Apply and reverse a series of unified diffs to an installed Python package, all or none.

Stdlib only (dist-info METADATA is read with stack_bom's parser). No external ``patch`` binary and no
fuzz: every hunk must match byte for byte at the line its header names. Paths in the diffs are relative
to the site-packages directory after stripping one leading component (``a/sglang/srt/x.py`` ->
``sglang/srt/x.py``, like ``patch -p1``). Lines starting with ``# `` (or anything else) before the
first ``---``/``+++`` pair are a free-form header and skipped.

A patch is V(applied) when its reverse applies cleanly, V(applicable) when it applies cleanly, else
V(conflict) (with the file and the first line that does not match). Originals are kept under
``<site-packages>/.gpuops-patches/<series>/orig/<relpath>`` and the series is recorded in
``<site-packages>/.gpuops-patches/<series>/applied.json``.

Confinement: every file a patch touches must lie in the package's own import directory (``sglang/`` for the
distribution sglang, see package_dir), and no path component below site-packages, of a target or of the state
directory, may be a symlink (nor resolve out of its directory); the files are opened with O_NOFOLLOW. The package
name must be a PEP 508 name and the series name a plain file name. site-packages itself may be reached through a
symlink (``/opt/sglang/current``). The checks are made before anything is written; they guard against a patch or a
tree that points elsewhere, not against another process changing site-packages while the series is written.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_bom

STATE_APPLIED = 'applied'
STATE_APPLICABLE = 'applicable'
STATE_CONFLICT = 'conflict'

STATE_DIR = '.gpuops-patches'
MANIFEST = 'applied.json'

# Line numbers and counts of at most 9 digits: int() refuses more than 4300, and no patched file has a billion lines.
_HUNK_RE = re.compile(br'^@@ -(\d{1,9})(?:,(\d{1,9}))? \+(\d{1,9})(?:,(\d{1,9}))? @@')
# The largest patch parse_patch reads (bytes); the series' patches are a few KB.
MAX_PATCH_BYTES = 16 * 1024 * 1024
_SERIES_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]*$')
# PEP 508's distribution name, case-insensitive (the same rule as stack_declaration.PEP508_NAME).
_PACKAGE_RE = re.compile(r'^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$', re.IGNORECASE)
_NOFOLLOW = getattr(os, 'O_NOFOLLOW', 0)


class PatchError(Exception):
    """A patch or series that cannot be parsed, planned or applied; the message says why."""


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def split_lines(data):
    """Split bytes into lines that keep their b'\\n' (the last one may lack it)."""
    lines = data.split(b'\n')
    out = [line + b'\n' for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


class Hunk(object):
    def __init__(self, old_start, old_len, new_start, new_len):
        self.old_start = old_start
        self.old_len = old_len
        self.new_start = new_start
        self.new_len = new_len
        self.old = []
        self.new = []


class FilePatch(object):
    def __init__(self, old_path, new_path, relpath):
        self.old_path = old_path
        self.new_path = new_path
        self.relpath = relpath
        self.hunks = []


def _header_path(line, prefix, patch_name):
    path = line[len(prefix):].rstrip(b'\r\n')
    try:
        return path.split(b'\t', 1)[0].decode('utf-8')
    except UnicodeDecodeError:
        raise PatchError('%s: the path in %r is not UTF-8' % (patch_name, line.rstrip(b'\r\n')[:300]))


def _strip_component(path, patch_name):
    if path == '/dev/null':
        raise PatchError('%s: creating or deleting files is not supported' % patch_name)
    parts = [p for p in path.split('/') if p not in ('', '.')]
    if path.startswith('/') or len(parts) < 2 or '..' in parts:
        raise PatchError('%s: unsafe or unexpected path %r (want a/<package>/...)' % (patch_name, path))
    return '/'.join(parts[1:])


def parse_patch(data, name='patch'):
    """Parse unified diff bytes (or text) into a list of FilePatch; the header before the first --- is skipped.

    Raises PatchError for anything it cannot read, a patch over MAX_PATCH_BYTES and paths that are not UTF-8
    included. Text holding surrogateescape'd bytes is turned back into those bytes.
    """
    if not isinstance(data, bytes):
        try:
            data = data.encode('utf-8', 'surrogateescape')
        except UnicodeEncodeError as exc:
            raise PatchError('%s: the text cannot be encoded as UTF-8: %s' % (name, exc))
    if len(data) > MAX_PATCH_BYTES:
        raise PatchError('%s: %d bytes, over the %d read (MAX_PATCH_BYTES)' % (name, len(data), MAX_PATCH_BYTES))
    lines = split_lines(data)
    files = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(b'--- ') and i + 1 < len(lines) and lines[i + 1].startswith(b'+++ '):
            old_path = _header_path(line, b'--- ', name)
            new_path = _header_path(lines[i + 1], b'+++ ', name)
            relpath = _strip_component(new_path, name)
            if _strip_component(old_path, name) != relpath:
                raise PatchError('%s: renames are not supported (%s -> %s)' % (name, old_path, new_path))
            current = FilePatch(old_path, new_path, relpath)
            files.append(current)
            i += 2
            while i < len(lines) and lines[i].startswith(b'@@'):
                i = _parse_hunk(lines, i, current, name)
            if not current.hunks:
                raise PatchError('%s: no hunks for %s' % (name, relpath))
            continue
        if files and line.strip():
            raise PatchError('%s: unexpected line %d: %r' % (name, i + 1, line.rstrip(b'\n').decode('utf-8', 'replace')))
        i += 1
    if not files:
        raise PatchError('%s: no unified diff found (want ---/+++ headers)' % name)
    return files


def _parse_hunk(lines, i, fpatch, name):
    match = _HUNK_RE.match(lines[i])
    if not match:
        raise PatchError('%s: bad hunk header at line %d' % (name, i + 1))
    old_len = 1 if match.group(2) is None else int(match.group(2))
    new_len = 1 if match.group(4) is None else int(match.group(4))
    hunk = Hunk(int(match.group(1)), old_len, int(match.group(3)), new_len)
    i += 1
    last = None
    while i < len(lines) and (len(hunk.old) < old_len or len(hunk.new) < new_len or lines[i].startswith(b'\\')):
        line = lines[i]
        tag, body = line[:1], line[1:]
        if line == b'\n':  # an empty context line whose leading blank was lost
            tag, body = b' ', b'\n'
        if tag == b' ':
            hunk.old.append(body)
            hunk.new.append(body)
        elif tag == b'-':
            hunk.old.append(body)
        elif tag == b'+':
            hunk.new.append(body)
        elif tag == b'\\':
            if last in (b' ', b'-') and hunk.old[-1].endswith(b'\n'):
                hunk.old[-1] = hunk.old[-1][:-1]
            if last in (b' ', b'+') and hunk.new[-1].endswith(b'\n'):
                hunk.new[-1] = hunk.new[-1][:-1]
            i += 1
            continue
        else:
            break
        last = tag
        i += 1
    if len(hunk.old) != old_len or len(hunk.new) != new_len:
        raise PatchError('%s: hunk @@ -%d,%d +%d,%d @@ of %s has %d old and %d new lines'
                         % (name, hunk.old_start, old_len, hunk.new_start, new_len, fpatch.relpath,
                            len(hunk.old), len(hunk.new)))
    fpatch.hunks.append(hunk)
    return i


def _show(line):
    return line.rstrip(b'\n').decode('utf-8', 'replace')


def apply_hunks(content, fpatch, reverse=False):
    """Apply (or reverse) a FilePatch to bytes exactly. Returns (new bytes, None) or (None, mismatch dict)."""
    lines = split_lines(content)
    out = []
    cursor = 0
    for hunk in fpatch.hunks:
        start, length = (hunk.new_start, hunk.new_len) if reverse else (hunk.old_start, hunk.old_len)
        want, put = (hunk.new, hunk.old) if reverse else (hunk.old, hunk.new)
        index = start if length == 0 else start - 1
        if index < cursor:
            return None, dict(line=start, expected='(hunks overlap or are out of order)', found='')
        for offset, expected in enumerate(want):
            pos = index + offset
            found = lines[pos] if pos < len(lines) else None
            if found != expected:
                return None, dict(line=pos + 1, expected=_show(expected),
                                  found='(end of file)' if found is None else _show(found))
        out.extend(lines[cursor:index])
        out.extend(put)
        cursor = index + length
    out.extend(lines[cursor:])
    return b''.join(out), None


def read_patch_file(name, path):
    try:
        with open(path, 'rb') as handle:
            data = handle.read()
    except (IOError, OSError) as exc:
        raise PatchError('patch %s: cannot read %s: %s' % (name, path, exc))
    return patch_from_bytes(name, data, path)


def patch_from_bytes(name, data, path=None):
    """A patch of the series from its bytes (given by the controller, or read from ``path`` on the host)."""
    return dict(name=name, path=path, sha256=sha256_bytes(data), files=parse_patch(data, name), data=data)


_KEPT_NAME = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9._+-]*$')


def check_keep(directory, patches):
    """Raise PatchError when the series cannot be kept in ``directory``: a name that is not a plain file name, or a
    directory that is a symlink."""
    for patch in patches:
        if not _KEPT_NAME.match(patch['name']) or '..' in patch['name']:
            raise PatchError('patch %r: a kept patch needs a plain file name (letters, digits, ., _, +, -)' % patch['name'])
    if os.path.islink(directory):
        raise PatchError('%s is a symlink; refusing to keep the series through it' % directory)


def keep_series(directory, patches, check_mode=False):
    """Keep the series' files in ``directory`` (the stack's copy that the service's flag rules and an operator read):
    each patch as ``<directory>/<name>``, mode 0644, written only when its bytes differ, and every other regular file
    there removed (a patch an earlier series had). ``patches`` are dicts with ``name`` and ``data``.

    Returns dict(written: [dict(name, path, before, after)], removed: [path]); writes nothing in check mode. Raises
    PatchError for a name that is not a plain file name or a directory that is a symlink, before anything is written
    (check_keep: the module asks it before it applies the series).
    """
    check_keep(directory, patches)
    names = set(patch['name'] for patch in patches)
    written = []
    for patch in patches:
        path = os.path.join(directory, patch['name'])
        before = _read_file(path)
        if before != patch['data'] or (before is not None and os.stat(path).st_mode & 0o777 != 0o644):
            written.append(dict(name=patch['name'], path=path, before=before or b'', after=patch['data']))
    removed = []
    if os.path.isdir(directory):
        for entry in sorted(os.listdir(directory)):
            path = os.path.join(directory, entry)
            if entry not in names and (os.path.islink(path) or os.path.isfile(path)):
                removed.append(path)
    if not check_mode:
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        for item in written:
            _atomic_write(item['path'], item['after'])
            os.chmod(item['path'], 0o644)
        for path in removed:
            os.unlink(path)
    return dict(written=written, removed=removed)


def installed_version(site_packages, package):
    """Return (version, METADATA path) of ``package`` in site_packages, or (None, None).

    The first ``*.dist-info`` (sorted) whose METADATA names the package wins; names compare PEP 503 normalised.
    """
    want = stack_bom.normalize_name(package)
    for info in sorted(glob.glob(os.path.join(site_packages, '*.dist-info'))):
        meta = os.path.join(info, 'METADATA')
        try:
            with open(meta, 'rb') as handle:
                name, version = stack_bom.parse_metadata(handle.read().decode('utf-8', 'replace'))
        except (IOError, OSError):
            continue
        if name is not None and stack_bom.normalize_name(name) == want:
            return version, meta
    return None, None


def check_version(site_packages, package, package_version):
    version, meta = installed_version(site_packages, package)
    if version is None:
        raise PatchError('%s is not installed in %s (no %s-*.dist-info/METADATA); the series was written for %s %s'
                         % (package, site_packages, package, package, package_version))
    if version != package_version:
        raise PatchError('%s %s is installed (%s), but the series was written for %s %s; refusing to patch'
                         % (package, version, meta, package, package_version))
    return meta


def _read_file(path):
    """The bytes of a regular file, or None when it is missing, unreadable or a symlink (O_NOFOLLOW)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except (IOError, OSError):
        return None
    with os.fdopen(fd, 'rb') as handle:
        return handle.read()


def check_package_name(package):
    if not isinstance(package, str) or '\n' in package or not _PACKAGE_RE.match(package):
        raise PatchError('package name %r is not a PEP 508 package name (letters, digits, ".", "_", "-"; starting and '
                         'ending with a letter or digit); refusing to patch' % (package,))
    return package


def package_dir(package):
    """The import directory of a distribution under site-packages: 'sglang' -> 'sglang', 'SGLang.Router' -> 'sglang_router'."""
    return stack_bom.normalize_name(check_package_name(package)).replace('-', '_')


def check_no_symlink(site_packages, relpath, what):
    """Refuse when any existing component of ``relpath`` below ``site_packages`` is a symlink or resolves out of it.

    ``site_packages`` itself may be a symlink (it is resolved first); missing components are fine (created later).
    """
    root = os.path.realpath(site_packages)
    path = root
    for part in relpath.split('/'):
        path = os.path.join(path, part)
        if os.path.islink(path):
            raise PatchError('%s: %r is a symlink (%s -> %s); refusing to write through it' % (what, part, path, os.readlink(path)))
        if not os.path.lexists(path):
            break
    if os.path.commonpath([root, os.path.realpath(os.path.join(root, *relpath.split('/')))]) != root:
        raise PatchError('%s: %s resolves outside %s; refusing to write' % (what, relpath, root))


def check_target(site_packages, package, patch_name, relpath):
    """A patched file must lie in the package directory, and no component of its path may be a symlink."""
    top = package_dir(package)
    if relpath.split('/', 1)[0] != top or '/' not in relpath:
        raise PatchError('%s: %s is outside the package directory %r under %s; a patch may change only the files of %s'
                         % (patch_name, relpath, top + '/', site_packages, package))
    check_no_symlink(site_packages, relpath, '%s: %s' % (patch_name, relpath))


def state_dir(site_packages, series):
    if not isinstance(series, str) or not _SERIES_RE.match(series) or '\n' in series or '..' in series:
        raise PatchError('series name %r is refused: it names a directory under %s, so it must be letters, digits, ".", "_", '
                         '"-", start with a letter or digit and hold no ".."' % (series, STATE_DIR))
    check_no_symlink(site_packages, STATE_DIR + '/' + series, 'state directory')
    return os.path.join(site_packages, STATE_DIR, series)


def plan(site_packages, patches, package='sglang', package_version=None, state='present'):
    """Work out each patch's state and every file's new content, in memory.

    ``patches`` is a list of dicts from read_patch_file. Returns a dict: ``patches`` (name, sha256, files,
    state, conflict), ``files`` (relpath -> dict(path, current, original, target)), ``conflicts`` and
    ``label`` (``sglang 0.5.9``). Raises PatchError for a version mismatch.
    """
    check_package_name(package)
    for patch in patches:
        for fpatch in patch['files']:
            check_target(site_packages, package, patch['name'], fpatch.relpath)
    if package_version is not None:
        check_version(site_packages, package, package_version)
        label = '%s %s' % (package, package_version)
    else:
        label = package
    work = {}
    files = {}
    for patch in patches:
        for fpatch in patch['files']:
            if fpatch.relpath not in work:
                path = os.path.join(site_packages, *fpatch.relpath.split('/'))
                content = _read_file(path)
                files[fpatch.relpath] = dict(path=path, current=content)
                work[fpatch.relpath] = content
    report = []
    conflicts = []
    order = patches if state == 'present' else list(reversed(patches))
    for patch in order:
        forward, backward, mismatch = {}, {}, None
        for fpatch in patch['files']:
            content = work[fpatch.relpath]
            if content is None:
                mismatch = mismatch or dict(file=fpatch.relpath, line=0, expected='', found='(file does not exist)')
                continue
            new, miss = apply_hunks(content, fpatch)
            if new is not None:
                forward[fpatch.relpath] = new
            old = apply_hunks(content, fpatch, reverse=True)[0]
            if old is not None:
                backward[fpatch.relpath] = old
            if new is None and old is None and mismatch is None:
                mismatch = dict(miss, file=fpatch.relpath)
        names = [f.relpath for f in patch['files']]
        entry = dict(name=patch['name'], sha256=patch['sha256'], files=names, conflict=None)
        if mismatch is None and len(backward) == len(names):
            entry['state'] = STATE_APPLIED
            if state != 'present':
                work.update(backward)
        elif mismatch is None and len(forward) == len(names):
            entry['state'] = STATE_APPLICABLE
            if state == 'present':
                work.update(forward)
        else:
            if mismatch is None:
                first = [n for n in names if n not in forward][0]
                mismatch = dict(file=first, line=0, expected='', found='(parts applied, parts not)')
            entry['state'] = STATE_CONFLICT
            entry['conflict'] = mismatch
            conflicts.append('patch %s does not apply to %s: %s line %d: expected %r, found %r'
                             % (patch['name'], label, mismatch['file'], mismatch['line'], mismatch['expected'],
                                mismatch['found']))
        report.append(entry)
    if state != 'present':
        report.reverse()
    for relpath, info in files.items():
        info['result'] = work[relpath]
    if not conflicts and state == 'present':
        # the original of each file: every patch of the series reversed, last first
        originals = dict((k, v['result']) for k, v in files.items())
        for patch in reversed(patches):
            for fpatch in patch['files']:
                old, miss = apply_hunks(originals[fpatch.relpath], fpatch, reverse=True)
                if old is None:
                    raise PatchError('patch %s: cannot compute the original of %s (line %d)'
                                     % (patch['name'], fpatch.relpath, miss['line']))
                originals[fpatch.relpath] = old
        for relpath, info in files.items():
            info['original'] = originals[relpath]
    return dict(patches=report, files=files, conflicts=conflicts, label=label)


def _atomic_write(path, data, mode_from=None):
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory)
    if os.path.islink(path):
        raise PatchError('%s is a symlink; refusing to write through it' % path)
    tmp = os.path.join(directory, '.%s.%s.tmp' % (os.path.basename(path), os.urandom(6).hex()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, 'wb') as handle:
            handle.write(data)
        if mode_from and os.path.exists(mode_from):
            shutil.copymode(mode_from, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def remove_stale_pyc(path):
    """Remove ``__pycache__/<module>.*.pyc`` next to a .py file; returns the removed paths."""
    if not path.endswith('.py'):
        return []
    module = os.path.basename(path)[:-3]
    removed = []
    for pyc in sorted(glob.glob(os.path.join(os.path.dirname(path), '__pycache__', glob.escape(module) + '.*.pyc'))):
        try:
            os.unlink(pyc)
            removed.append(pyc)
        except OSError:
            pass
    return removed


def _write_files(changes):
    """Write (path, data) pairs atomically; on failure restore the ones already written and re-raise."""
    done = []
    try:
        for path, data, before in changes:
            _atomic_write(path, data, mode_from=path)
            done.append((path, before))
    except (IOError, OSError):
        for path, before in reversed(done):
            try:
                _atomic_write(path, before, mode_from=path)
            except (IOError, OSError):
                pass
        raise


def manifest_for(site_packages, series, package, package_version, result):
    files = {}
    for relpath, info in sorted(result['files'].items()):
        files[relpath] = dict(original_sha256=sha256_bytes(info['original']),
                              patched_sha256=sha256_bytes(info['result']))
    return dict(series=series, package=package, package_version=package_version, site_packages=site_packages,
                patches=[dict(name=p['name'], sha256=p['sha256'], files=p['files']) for p in result['patches']],
                files=files)


def _dump(manifest):
    return (json.dumps(manifest, indent=2, sort_keys=True) + '\n').encode('utf-8')


def apply_series(site_packages, patches, series, package='sglang', package_version=None, state='present',
                 check_mode=False):
    """Make the series present (applied) or absent (reversed), all or none.

    Returns dict(changed, patches, changed_files (list of dict relpath, path, before, after), manifest,
    removed_pyc). Raises PatchError naming the file, line and package version on a conflict; nothing is
    written then.
    """
    check_package_name(package)
    top = state_dir(site_packages, series)
    manifest_path = os.path.join(top, MANIFEST)
    result = plan(site_packages, patches, package, package_version, state)
    if result['conflicts']:
        error = PatchError('; '.join(result['conflicts']) + '; nothing was changed')
        error.patches = result['patches']
        raise error
    changed_files = []
    for relpath, info in sorted(result['files'].items()):
        if info['result'] != info['current']:
            changed_files.append(dict(relpath=relpath, path=info['path'], before=info['current'],
                                      after=info['result']))
    out = dict(changed=False, patches=result['patches'], changed_files=changed_files, removed_pyc=[],
               manifest=None, manifest_path=manifest_path)
    old_manifest = _read_file(manifest_path)
    if state == 'present':
        manifest = manifest_for(site_packages, series, package, package_version, result)
        out['manifest'] = manifest
        backups = []
        for relpath, info in sorted(result['files'].items()):
            check_no_symlink(site_packages, '/'.join((STATE_DIR, series, 'orig', relpath)), 'original of %s' % relpath)
            backup = os.path.join(top, 'orig', *relpath.split('/'))
            if _read_file(backup) != info['original']:
                backups.append((backup, info['original']))
        content = _dump(manifest)
        out['changed'] = bool(changed_files or backups or old_manifest != content)
        if check_mode or not out['changed']:
            return out
        for backup, data in backups:
            _atomic_write(backup, data)
        _write_files([(c['path'], c['after'], c['before']) for c in changed_files])
        _atomic_write(manifest_path, content)
    else:
        out['changed'] = bool(changed_files or os.path.exists(top))
        if check_mode or not out['changed']:
            return out
        _write_files([(c['path'], c['after'], c['before']) for c in changed_files])
        shutil.rmtree(top)
        parent = os.path.dirname(top)
        if os.path.isdir(parent) and not os.listdir(parent):
            os.rmdir(parent)
    for change in changed_files:
        out['removed_pyc'].extend(remove_stale_pyc(change['path']))
    return out

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The stacks' shared file store: files identical between stacks are one inode, hard-linked by content.

A stack venv with the real torch is about 8 GB and the site keeps the previous stack for rollback. Most of a new
stack is the files of wheels the previous stack installed too; pip would unpack them again. The store keeps each
installed file once, named by its content, and a new stack links the files of every wheel the store has seen instead
of unpacking it (the time of a layer that did not change is the time to make its links).

Layout, under ``<root>/store`` (root only, 0700; the files keep their own modes and owner root):

- ``objects/<sha256[:2]>/<sha256>.<mode>``: one installed file or wheel, named by its sha256 and its permission bits.
  An object is made only from a file whose content was hashed here, and only by linking that file (never by writing
  into it); nothing ever opens an object for writing.
- ``dists/<wheel sha256>.json``: how that wheel installs into a venv: each file of its RECORD (relative to the
  site-packages directory) as an object, or, for the few files whose content names the venv (console scripts: their
  ``#!`` line, and direct_url.json naming the stack's wheelhouse), as a template with the stack directory's path cut
  out; the RECORD rows to write back.

Why this is safe for the serving stack: pip, ``patch_series`` and this module replace a file by writing a new one and
renaming it into place (pip unlinks an existing file before it writes one), so a shared inode is never written
through another stack's path. A dist is put in the store only right after pip installed it, and only when every file
still has the sha256 its RECORD says (so a patched or edited file never enters the store). Objects no stack links
any more (link count 1) are removed by ``collect``, which the switch's prune runs.
"""

from __future__ import annotations

import base64
import csv
import errno
import hashlib
import io
import json
import os
import stat
import tempfile

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import wheel_fetch

STORE_DIR = 'store'


class StoreError(Exception):
    """A store failure whose message names the path and the cause."""


def store_dir(root):
    """The store of the stacks under ``root`` (the stack layout's root): the one place this path is derived."""
    return os.path.join(root, STORE_DIR)


def object_path(store, sha256, mode, mtime=None):
    """A Python source's object also carries its modification time: its bytecode is valid only for that mtime (pip
    compiles with timestamp invalidation), so two sources with the same bytes and another mtime are two objects."""
    name = '%s.%o' % (sha256, stat.S_IMODE(mode)) + ('' if mtime is None else '.%d' % mtime)
    return os.path.join(store, 'objects', sha256[:2], name)


def manifest_path(store, wheel_sha256):
    return os.path.join(store, 'dists', '%s.json' % wheel_sha256)


def _makedirs(path, mode=0o755):
    if not os.path.isdir(path):
        os.makedirs(path, mode)


def ensure_store(store):
    for sub in ('objects', 'dists'):
        _makedirs(os.path.join(store, sub), 0o700)
    os.chmod(store, 0o700)


def _record_form(digest):
    """The RECORD form of a sha256 object: sha256=<urlsafe base64 without padding>."""
    return 'sha256=' + base64.urlsafe_b64encode(digest.digest()).rstrip(b'=').decode('ascii')


def _link(source, dest):
    """os.link; False when ``dest`` exists already."""
    try:
        os.link(source, dest)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise
        return False
    return True


def _link_into_place(source, dest):
    """Make ``dest`` a hard link to ``source``, replacing what ``dest`` was by a rename (never by writing into it)."""
    if _link(source, dest):
        return
    parent = os.path.dirname(dest)
    for attempt in range(100):
        tmp = os.path.join(parent, '.store-%d-%d' % (os.getpid(), attempt))
        if _link(source, tmp):
            break
    else:
        raise StoreError('%s: no free temporary name to link %s' % (parent, source))
    os.rename(tmp, dest)


def put_file(store, path, sha256, mode, mtime=None):
    """Share ``path`` (whose content hashes to ``sha256``) through the store.

    A new object is the file itself, linked into the store. When the store holds the content already, ``path`` is
    replaced by a link to that object. Returns the bytes this saved (0 for a new object), or None where the file
    system cannot link (another device): the file then stays as it is.
    """
    obj = object_path(store, sha256, mode, mtime)
    info = os.lstat(path)
    try:
        if os.path.exists(obj):
            held = os.lstat(obj)
            if (held.st_dev, held.st_ino) == (info.st_dev, info.st_ino):
                return 0
            _link_into_place(obj, path)
            return info.st_size
        _makedirs(os.path.dirname(obj), 0o700)
        tmp = '%s.tmp-%d' % (obj, os.getpid())
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.link(path, tmp)
        os.rename(tmp, obj)
        return 0
    except OSError as exc:
        if exc.errno in (errno.EXDEV, errno.EPERM, errno.EMLINK):
            return None
        raise StoreError('%s: could not share it through the store %s: %s' % (path, store, exc))


def link_wheels(store, wheels, dest, check=False):
    """Link into ``dest`` each wheel of ``wheels`` ({filename: sha256}) that ``dest`` lacks and the store holds (a
    wheel an earlier stack was built from): the controller then copies only the others. Returns (filenames linked,
    their bytes); in check mode, what would be linked."""
    linked, size = [], 0
    for filename, sha256 in sorted(wheels.items()):
        if os.path.basename(filename) != filename or not sha256:
            raise StoreError('%s: not a wheel file name with a sha256' % filename)
        target = os.path.join(dest, filename)
        obj = object_path(store, str(sha256).lower(), 0o644)
        if os.path.lexists(target) or not os.path.isfile(obj):
            continue
        if not check:
            try:
                _link_into_place(obj, target)
            except OSError as exc:
                if exc.errno in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                    continue
                raise StoreError('%s: could not link it from the store %s: %s' % (target, store, exc))
        linked.append(filename)
        size += os.stat(obj).st_size
    return linked, size


def stored_wheels(store, wheels, dest):
    """The wheels of ``wheels`` ({filename: sha256}) whose file in ``dest`` is the store's own object for that sha256
    (the same inode: linked by link_wheels, or kept by put_file). A wheel enters the store only once its bytes matched
    that sha256, the store is root's alone (mode 0700) and nothing writes through a shared file: such a file needs no
    second hash (3.2 GB of wheels, about 3 s, for every stack built from the store)."""
    same = set()
    for filename, sha256 in wheels.items():
        if os.path.basename(filename) != filename or not sha256:
            continue
        try:
            held = os.stat(object_path(store, str(sha256).lower(), 0o644))
            here = os.lstat(os.path.join(dest, filename))
        except OSError:
            continue
        if stat.S_ISREG(here.st_mode) and (held.st_dev, held.st_ino) == (here.st_dev, here.st_ino):
            same.add(filename)
    return same


def _read_record(site, dist_info):
    """The RECORD's lines as written (pip ends them with CRLF) and its rows."""
    with open(os.path.join(site, dist_info, 'RECORD'), newline='', encoding='utf-8') as handle:
        lines = handle.read().splitlines(True)
    return lines, [row for row in csv.reader(lines) if row]


def _inside(path, top):
    return os.path.commonpath([path, top]) == top


def _templated(rel):
    """Files whose content may name the venv: what pip writes outside site-packages (console scripts, whose '#!'
    line names the venv's python) and direct_url.json. Nothing else pip installs holds the venv's path but bytecode,
    which is shared like any file: its co_filename names the venv pip compiled it in, but importlib replaces that with
    the path it loads the source from (_imp._fix_co_filename)."""
    return rel.startswith('..') or rel.endswith('.dist-info/direct_url.json')


def ingest(store, venv, site, dist_info, wheel_sha256, name='', version=''):
    """Put what pip just installed of one wheel into the store and write its manifest.

    Every file of the RECORD must still hash as the RECORD says: a dist whose files changed since pip wrote them
    (or one whose RECORD names a file outside the venv) is not put in the store. Returns (files, bytes saved), or
    (0, reason) when it was not put in the store.
    """
    venv = os.path.realpath(venv)
    site = os.path.realpath(site)
    stack_bytes = os.fsencode(os.path.dirname(venv))
    lines, rows = _read_record(site, dist_info)
    record_path = os.path.join(site, dist_info, 'RECORD')
    files = []
    pending = []
    for row in rows:
        rel = row[0]
        path = os.path.normpath(os.path.join(site, rel))
        if not _inside(os.path.realpath(os.path.dirname(path)), venv):
            return 0, '%s: RECORD names %s, outside the venv' % (dist_info, rel)
        if path == record_path:
            continue
        try:
            info = os.lstat(path)
        except OSError:
            return 0, '%s: %s is missing' % (dist_info, rel)
        if not stat.S_ISREG(info.st_mode):
            return 0, '%s: %s is not a regular file' % (dist_info, rel)
        mode = stat.S_IMODE(info.st_mode)
        recorded = row[1] if len(row) > 1 else ''
        data = None
        if _templated(rel):
            with open(path, 'rb') as handle:
                data = handle.read()
            digest = hashlib.sha256(data)
        else:
            digest = wheel_fetch.file_digest(path)
        if recorded and recorded != _record_form(digest):
            return 0, '%s: %s no longer has the content its RECORD says' % (dist_info, rel)
        if data is not None and stack_bytes in data:
            # Kept whole, with the stack directory's path cut out: materialize writes it with the new stack's.
            files.append({'path': rel, 'mode': mode, 'parts': [part.decode('latin-1') for part in data.split(stack_bytes)]})
            continue
        entry = {'path': rel, 'mode': mode, 'sha256': digest.hexdigest()}
        if rel.endswith('.py'):
            entry['mtime'] = int(info.st_mtime)
        files.append(entry)
        pending.append((path, entry))
    saved = 0
    for path, entry in pending:
        done = put_file(store, path, entry['sha256'], entry['mode'], entry.get('mtime'))
        if done is None:
            return 0, 'the store %s is on another file system than %s: nothing is shared' % (store, venv)
        saved += done
    manifest = {'wheel_sha256': wheel_sha256, 'name': name, 'version': version, 'dist_info': dist_info,
                'files': files, 'record_lines': lines}
    _write_json(manifest_path(store, wheel_sha256), manifest)
    return len(files), saved


def _write_json(path, data):
    _makedirs(os.path.dirname(path), 0o700)
    handle, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix='.tmp-')
    with os.fdopen(handle, 'w') as out:
        json.dump(data, out, sort_keys=True)
    os.chmod(tmp, 0o600)
    os.rename(tmp, path)


def load_manifest(store, wheel_sha256):
    """The manifest of a wheel when every object it names is in the store, else None."""
    try:
        with open(manifest_path(store, wheel_sha256)) as handle:
            manifest = json.load(handle)
    except (IOError, OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or 'record_lines' not in manifest:
        return None
    for entry in manifest.get('files', []):
        if 'sha256' in entry and not os.path.isfile(object_path(store, entry['sha256'], entry['mode'], entry.get('mtime'))):
            return None
    return manifest


def _last(entry, dist_info):
    """dist-info after the package's files, METADATA last: a dist interrupted mid-way is not seen as installed."""
    path = entry['path']
    if path.startswith(dist_info + '/'):
        return (2, path) if path.endswith('/METADATA') else (1, path)
    return (0, path)


def materialize(store, venv, site, manifest):
    """Lay out one wheel's installed files in ``venv`` from the store, as pip would have installed them.

    Objects are hard links; templates are written with this stack's directory (the venv's parent); the RECORD is written with the hashes of
    what was written. Returns the number of files.
    """
    stack_bytes = os.fsencode(os.path.dirname(os.path.realpath(venv)))
    dist_info = manifest['dist_info']
    written = {}
    entries = sorted(manifest['files'], key=lambda entry: _last(entry, dist_info))
    record_done = False
    for entry in entries:
        if not record_done and entry['path'].startswith(dist_info + '/') and entry['path'].endswith('/METADATA'):
            _write_record(site, manifest, written)
            record_done = True
        dest = os.path.normpath(os.path.join(site, entry['path']))
        _makedirs(os.path.dirname(dest))
        if 'sha256' in entry:
            _link_into_place(object_path(store, entry['sha256'], entry['mode'], entry.get('mtime')), dest)
        else:
            data = stack_bytes.join(part.encode('latin-1') for part in entry['parts'])
            handle, tmp = tempfile.mkstemp(dir=os.path.dirname(dest), prefix='.store-')
            with os.fdopen(handle, 'wb') as out:
                out.write(data)
            os.chmod(tmp, entry['mode'])
            os.rename(tmp, dest)
            written[entry['path']] = data
    if not record_done:
        _write_record(site, manifest, written)
    return len(entries)


def _write_record(site, manifest, written):
    """The RECORD as the installer wrote it, byte for byte, but the rows of the files written for this stack."""
    out = io.StringIO()
    for line in manifest['record_lines']:
        row = next(csv.reader([line]), None)
        if row and row[0] in written:
            ending = line[len(line.rstrip('\r\n')):]
            csv.writer(out, lineterminator=ending or '\n').writerow([row[0], _record_form(hashlib.sha256(written[row[0]])), str(len(written[row[0]]))])
        else:
            out.write(line)
    dest = os.path.join(site, manifest['dist_info'], 'RECORD')
    _makedirs(os.path.dirname(dest))
    handle, tmp = tempfile.mkstemp(dir=os.path.dirname(dest), prefix='.store-')
    with os.fdopen(handle, 'w', encoding='utf-8', newline='') as handle_out:
        handle_out.write(out.getvalue())
    os.chmod(tmp, 0o644)
    os.rename(tmp, dest)


def collect(store, check=False):
    """Remove the objects no stack links any more (link count 1), then the manifests that lost an object.

    Returns {'objects': n, 'bytes': freed, 'manifests': n}. ``check``: count only.
    """
    result = {'objects': 0, 'bytes': 0, 'manifests': 0}
    objects = os.path.join(store, 'objects')
    gone = set()
    if os.path.isdir(objects):
        for prefix in sorted(os.listdir(objects)):
            folder = os.path.join(objects, prefix)
            for entry in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
                path = os.path.join(folder, entry)
                info = os.lstat(path)
                if '.tmp-' in entry or (stat.S_ISREG(info.st_mode) and info.st_nlink <= 1):
                    result['objects'] += 1
                    result['bytes'] += info.st_size
                    gone.add(path)
                    if not check:
                        os.unlink(path)
    dists = os.path.join(store, 'dists')
    for entry in sorted(os.listdir(dists)) if os.path.isdir(dists) else []:
        path = os.path.join(dists, entry)
        try:
            with open(path) as handle:
                manifest = json.load(handle)
        except (IOError, OSError, ValueError):
            manifest = None
        if manifest is not None:
            named = [object_path(store, item['sha256'], item['mode'], item.get('mtime')) for item in manifest.get('files', []) if 'sha256' in item]
            lost = any(name in gone or not os.path.isfile(name) for name in named)
        if manifest is None or lost:
            result['manifests'] += 1
            if not check:
                os.unlink(path)
    return result

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fetch, check and install locked wheels: the one pipeline of the lock step, the controller's wheelhouse and the hosts.

A locked file is used only once its sha256 is the lock's: a download is hashed while it streams into a temporary
file beside its destination and renamed into place only when it matches; a file already in a wheelhouse is hashed
again before it is used. A mismatch names the file, the lock's sha256 and the one found, and removes nothing that
was there before. pip then installs the checked files ``--no-deps --no-index --require-hashes``: it hashes them once
more and never reaches an index.
"""

from __future__ import annotations

import hashlib
import os
import tempfile

CHUNK = 1024 * 1024


class WheelFetchError(Exception):
    """A failure whose message names the file or URL and the cause."""


def file_digest(path):
    """The sha256 object of a file's content, read in blocks."""
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        for block in iter(lambda: handle.read(CHUNK), b''):
            digest.update(block)
    return digest


def sha256_file(path):
    return file_digest(path).hexdigest()


def map_url(url, url_map, reverse=False):
    """``url`` with the first matching prefix of ``url_map`` rewritten (each rule ``from`` -> ``to``; ``reverse``:
    ``to`` -> ``from``): where the controller reaches a source that the hosts reach under another URL."""
    for rule in url_map or []:
        old, new = (rule.get('to'), rule.get('from')) if reverse else (rule.get('from'), rule.get('to'))
        if old and url and url.startswith(old):
            return (new or '') + url[len(old):]
    return url


def stream_to_file(response, url, dest, limit, why, announced=None, expected_sha256=None):
    """Write an HTTP response body to ``dest`` atomically; returns (sha256, size).

    ``limit`` bytes at the most (``why`` says where that number comes from): a Content-Length (``announced``) above it
    is refused before the body is read, and the body is read in blocks that stop at limit + 1 bytes, so a larger answer
    is refused before that block is hashed or written and never fills the disk. With ``expected_sha256`` a body that
    hashes otherwise is discarded and refused, naming both hashes. The body goes to a temporary file beside ``dest``,
    renamed into place only when complete (and matching).
    """
    if str(announced or '').strip().isdigit() and int(str(announced).strip()) > limit:
        raise WheelFetchError('%s: refused: the server announces %s bytes, more than the %d allowed (%s); nothing was read'
                              % (url, str(announced).strip(), limit, why))
    digest = hashlib.sha256()
    size = 0
    handle, tmp = tempfile.mkstemp(dir=os.path.dirname(dest) or '.', prefix='.partial-')
    try:
        with os.fdopen(handle, 'wb') as out:
            while True:
                try:
                    block = response.read(min(CHUNK, limit + 1 - size))
                except Exception as exc:  # pylint: disable=broad-except
                    raise WheelFetchError('%s: transfer broke off after %d bytes (%s)' % (url, size, exc))
                if not block:
                    break
                if size + len(block) > limit:
                    raise WheelFetchError('%s: refused: more than the %d bytes allowed (%s); the download was stopped there '
                                          'and discarded' % (url, limit, why))
                digest.update(block)
                size += len(block)
                out.write(block)
        actual = digest.hexdigest()
        if expected_sha256 and actual != expected_sha256:
            raise WheelFetchError('%s: sha256 mismatch for %s: the lock says %s, the download is %s (%d bytes); it was '
                                  'discarded (the file changed at its source after the lock was made)' % (
                                      url, os.path.basename(dest), expected_sha256, actual, size))
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return actual, size


def download(open_url, url, dest, max_bytes, expected_sha256=None, expected_size=None):
    """GET ``url`` into ``dest`` (stream_to_file); returns (sha256, size).

    ``open_url(url)`` returns (response with read(n), HTTP status, message, Content-Length or None). The limit is the
    lock's size of the file when known, else ``max_bytes`` (the declaration's download cap).
    """
    limit = int(expected_size) if expected_size else int(max_bytes)
    why = 'the size in the lock' if expected_size else 'the download cap, stack_declaration_download_max_mb'
    response, status, message, announced = open_url(url)
    if response is None or status != 200:
        raise WheelFetchError('%s: not fetched (HTTP %s: %s)' % (url, status, message or 'no answer'))
    return stream_to_file(response, url, dest, limit, why, announced, expected_sha256)


def check_file(path, expected_sha256):
    """Refuse a wheelhouse file whose sha256 is not the lock's (the file stays where it is, for review)."""
    actual = sha256_file(path)
    if actual != expected_sha256:
        raise WheelFetchError('%s: sha256 mismatch: the lock says %s, the file is %s. It changed after the lock was made '
                              '(a swapped or corrupted wheel): review it and remove it, or make the lock again if the change is '
                              'wanted' % (path, expected_sha256, actual))
    return actual


def ensure_wheels(distributions, wheelhouse, open_url=None, max_bytes=None, workers=4, checked_before=()):
    """Every distribution's file in ``wheelhouse``, checked against its locked sha256; fetched from its URL when missing
    and ``open_url`` is given (else missing is refused). Returns (paths by name, names fetched). Raises
    WheelFetchError listing every failure; a fetched file that matched stays (the next run does not fetch it again).
    ``checked_before``: file names whose file in the wheelhouse is not hashed again (the stacks' store's own object for
    that sha256, hashed when it was stored: stack_store.stored_wheels)."""
    paths = {}
    fetched = []
    errors = []
    missing = []
    for dist in distributions:
        path = os.path.join(wheelhouse, dist['filename'])
        paths[dist['name']] = path
        if dist['filename'] in checked_before:
            continue
        if os.path.isfile(path):
            try:
                check_file(path, dist['sha256'])
            except WheelFetchError as exc:
                errors.append(str(exc))
        else:
            missing.append(dist)
    if missing and open_url is None:
        errors += ['%s: not in the wheelhouse %s (the controller copies every locked file there first)' % (d['filename'], wheelhouse)
                   for d in missing]
    elif missing:
        from concurrent.futures import ThreadPoolExecutor

        def fetch(dist):
            download(open_url, dist['url'], paths[dist['name']], max_bytes, dist['sha256'], dist.get('size'))
            return dist['name']

        with ThreadPoolExecutor(max_workers=max(1, int(workers))) as pool:
            futures = [(dist, pool.submit(fetch, dist)) for dist in missing]
            for dist, future in futures:
                try:
                    fetched.append(future.result())
                except WheelFetchError as exc:
                    errors.append(str(exc))
                except Exception as exc:  # pylint: disable=broad-except
                    errors.append('%s: %s' % (dist['url'], exc))
    if errors:
        raise WheelFetchError('; '.join(errors))
    return paths, fetched


def hashed_requirements(distributions, paths):
    """pip's requirements file for the checked files: one line per file with its locked sha256."""
    return ''.join('%s --hash=sha256:%s\n' % (paths[d['name']], d['sha256']) for d in distributions)


def pip_install_argv(python, requirements_file):
    """pip installs exactly the listed files: no index, no dependency resolution, every file hash-checked again."""
    return [python, '-m', 'pip', 'install', '--isolated', '--disable-pip-version-check', '--no-input', '--no-deps', '--no-index',
            '--require-hashes', '--only-binary=:all:', '--requirement', requirements_file]

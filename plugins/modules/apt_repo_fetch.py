#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: apt_repo_fetch
short_description: Fetch one package and its dependency closure from a signed flat apt repository, verified
version_added: 1.0.0
description:
  - Fetches the C(InRelease) of a flat apt repository (NVIDIA's CUDA layout, C(deb [signed-by=KEY] URL /)), or C(Release)
    and C(Release.gpg) when the repository has no C(InRelease), and verifies the signature with C(gpgv) against
    O(keyring) only.
  - Fetches every package index (C(Packages), C(Packages.gz), ...) the verified Release lists and checks each against the
    Release's SHA256 and size.
  - Resolves what installing O(package)=O(version) takes from that repository (C(Pre-Depends) and C(Depends), alternatives,
    version constraints, virtual packages); relations the repository does not carry are left to the host's distribution
    and listed in RV(external).
  - Downloads each C(.deb) of that closure once, to its C(Filename) path under O(dest), and checks it against the SHA256 and
    size of the package index.
  - Keeps the signed files and the indexes byte for byte, so that apt on a host can use O(dest) as a C(file:) repository
    C(signed-by) the same key.
  - Writes C(fetch.json) last (what decides the content, and the sha256 of every file). While it matches, a later run
    re-checks every file against it and downloads nothing. Files of O(dest) that the record does not name are removed.
  - Any failure (unreachable repository, bad signature, digest mismatch, package missing) fails naming the URL or file and,
    for a digest, the expected and the actual value; O(dest) then holds no C(fetch.json).
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
attributes:
  check_mode:
    details: Downloads nothing. With a complete O(dest) it re-checks the files; otherwise it reports what it would fetch.
options:
  url:
    description:
      - Base URL of the flat repository (the directory holding C(InRelease)), as this machine reaches it.
    type: str
    required: true
  package:
    description: The package to install, for example C(cuda-toolkit-13-0).
    type: str
    required: true
  version:
    description: Its exact version, for example C(13.0.2-1).
    type: str
    required: true
  keyring:
    description:
      - The repository's key file (binary or ASCII-armored OpenPGP), the one apt is given as C(signed-by).
    type: path
    required: true
  dest:
    description: Directory that becomes the local copy of the repository (created when missing).
    type: path
    required: true
  architecture:
    description: The hosts' dpkg architecture; packages of other architectures (but C(all)) are ignored.
    type: str
    default: amd64
  exclude:
    description:
      - Package name patterns (shell style) never taken from the repository, as if it did not carry them (the driver
        packages an LXC GPU container pins away).
    type: list
    elements: str
    default: []
  timeout:
    description: Seconds a request may wait on the repository.
    type: int
    default: 60
  validate_certs:
    description: Whether to validate the repository's TLS certificate.
    type: bool
    default: true
notes:
  - Needs C(gpgv) on the machine it runs on (the controller).
  - A C(Packages) index compressed only with zstd or lz4 is not read (Python's standard library has no decompressor).
seealso:
  - module: ansible.builtin.deb822_repository
"""

EXAMPLES = r"""
- name: Fetch cuda-toolkit-13-0 and what it depends on from NVIDIA's repository, once, on the controller
  gpuops.sglang_stack.apt_repo_fetch:
    url: https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/
    package: cuda-toolkit-13-0
    version: 13.0.2-1
    keyring: /var/cache/fleet/cuda-archive-keyring.pub
    dest: /var/cache/fleet/apt/ubuntu2404
    exclude: [cuda-drivers, cuda-drivers-*, nvidia-driver*]
  delegate_to: localhost
  run_once: true
  register: cuda_repo
"""

RETURN = r"""
files:
  description: Every file of O(dest) (paths relative to it) with its sha256, as C(fetch.json) records them.
  returned: success
  type: dict
  sample: {"InRelease": "5f0c...", "Packages": "06e2...", "./cuda-toolkit-13-0_13.0.2-1_amd64.deb": "8e14..."}
packages:
  description: The closure, the requested package first - C(package), C(version), C(filename), C(sha256), C(size).
  returned: success
  type: list
  elements: dict
external:
  description: Relations the repository does not carry, left to the host's distribution (with the package that needs them).
  returned: success
  type: list
  elements: str
  sample: ["libc6 (>= 2.17) (Depends of cuda-cudart-13-0 13.0.96-1)"]
downloaded:
  description: The files fetched by this run (empty when the cache was complete).
  returned: success
  type: list
  elements: str
downloaded_bytes:
  description: Bytes of the response bodies fetched by this run.
  returned: success
  type: int
record:
  description: Path of C(fetch.json).
  returned: always
  type: str
msg:
  description: A one-line summary, or the cause of the failure.
  returned: always
  type: str
"""

import bz2
import gzip
import hashlib
import json
import lzma
import os
import posixpath
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible.module_utils.urls import fetch_url

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import apt_repo, wheel_fetch
from ansible_collections.gpuops.sglang_stack.plugins.module_utils.wheel_fetch import sha256_file

RECORD = 'fetch.json'
# InRelease, Release and Release.gpg: nothing gives their size before they are verified. apt caps them at
# Acquire::MaxReleaseFileSize, 10,000,000 bytes by default (apt-pkg/acquire-item.cc); NVIDIA's are a few kB.
MAX_SIGNED_BYTES = 10 * 1000 * 1000
# A compressed Packages index is checked against the Release before it is read; what it decompresses to is capped
# here (NVIDIA's largest uncompressed Packages is a few MB).
MAX_INDEX_BYTES = 256 * 1024 * 1024
SIGNED_CAP = (MAX_SIGNED_BYTES, "the cap of a Release file, apt's Acquire::MaxReleaseFileSize default")


class FetchError(Exception):
    """A failure whose message names the URL or file and the cause."""


def _download(module, url, path, limit, missing_ok=False):
    """GET url into path (atomically, wheel_fetch.stream_to_file); returns (sha256, size), or None for a 404 when missing_ok.

    ``limit`` is (bytes, where that number comes from), known before the request: the signed Release's size of an
    index, the signed Packages' Size of a .deb, MAX_SIGNED_BYTES for InRelease, Release and Release.gpg. A
    Content-Length above it is refused before the body is read, and a larger body is refused before it fills the disk.
    """
    response, info = fetch_url(module, url, timeout=module.params['timeout'])
    status = info.get('status', -1)
    if status == 404 and missing_ok:
        return None
    if response is None or status != 200:
        raise FetchError('%s: not fetched (HTTP %s: %s)' % (url, status, info.get('msg', 'no answer')))
    try:
        return wheel_fetch.stream_to_file(response, url, path, limit[0], limit[1], info.get('content-length'))
    except wheel_fetch.WheelFetchError as exc:
        raise FetchError(to_native(exc))


def _check(url, path, actual, expected, what):
    """actual/expected: (sha256, size)."""
    if actual[0] != expected[0] or actual[1] != expected[1]:
        os.unlink(path)
        raise FetchError('%s: sha256 mismatch (%s): expected %s (%d bytes), got %s (%d bytes); the file was discarded'
                         % (url, what, expected[0], expected[1], actual[0], actual[1]))


def _gpgv(module, keyring, args, url):
    """Verify with gpgv against ``keyring`` only; the status lines are judged as apt judges them (apt_repo.judge_gpgv_status)."""
    home = tempfile.mkdtemp(prefix='apt-repo-fetch-gnupg-')
    try:
        with open(keyring, 'rb') as handle:
            key = apt_repo.dearmor(handle.read())
        ring = os.path.join(home, 'keyring.gpg')
        with open(ring, 'wb') as handle:
            handle.write(key)
        gpgv = module.get_bin_path('gpgv', required=True)
        rc, out, err = module.run_command([gpgv, '--homedir', home, '--status-fd', '1', '--keyring', ring] + args)
        try:
            return apt_repo.judge_gpgv_status(out, rc)
        except apt_repo.AptRepoError as exc:
            raise FetchError('%s: signature not valid against %s (gpgv rc %d: %s)' % (url, keyring, rc, exc))
    except apt_repo.AptRepoError as exc:
        raise FetchError('%s: %s' % (keyring, exc))
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _decompressed(opener, path, url):
    """The content of a compressed index, refused beyond MAX_INDEX_BYTES (a small file may expand without bound)."""
    with opener(path, 'rb') as handle:
        text = handle.read(MAX_INDEX_BYTES + 1)
    if len(text) > MAX_INDEX_BYTES:
        raise FetchError('%s: refused: it decompresses to more than %d bytes' % (url, MAX_INDEX_BYTES))
    return text


def _local_name(filename):
    """A Packages Filename as a path under dest ('./x.deb' stays './x.deb' for apt; no '..', not absolute)."""
    parts = filename.split('/')
    if filename.startswith('/') or '..' in parts or not parts[-1]:
        raise FetchError('Packages: Filename "%s" does not stay inside the repository' % filename)
    return filename


def _read_record(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return {}


def verify_record(dest, record):
    """[(name, expected, actual or None)] of the files that differ from the record."""
    bad = []
    for name, expected in sorted(record.get('files', {}).items()):
        path = os.path.join(dest, name)
        actual = sha256_file(path) if os.path.isfile(path) else None
        if actual != expected:
            bad.append((name, expected, actual))
    return bad


def fetch(module, key, record_path):
    params = module.params
    url = params['url'].rstrip('/') + '/'
    dest = params['dest']
    fetched = []
    total = [0]

    def get(name, limit, expected=None, missing_ok=False):
        result = _download(module, url + posixpath.normpath(name), os.path.join(dest, name), limit, missing_ok)
        if result is None:
            return None
        total[0] += result[1]
        fetched.append(name)
        if expected is not None:
            _check(url + name, os.path.join(dest, name), result, expected, 'against the signed Release')
        return result

    signed = False
    body = os.path.join(dest, '.Release.verified')
    try:
        if get('InRelease', SIGNED_CAP, missing_ok=True) is not None:
            try:
                _gpgv(module, params['keyring'], ['--output', body, os.path.join(dest, 'InRelease')], url + 'InRelease')
            except FetchError:
                os.unlink(os.path.join(dest, 'InRelease'))
                raise
            signed = True
            for stale in ('Release', 'Release.gpg'):
                if os.path.exists(os.path.join(dest, stale)):
                    os.unlink(os.path.join(dest, stale))
        else:
            get('Release', SIGNED_CAP)
            get('Release.gpg', SIGNED_CAP)
            try:
                _gpgv(module, params['keyring'], [os.path.join(dest, 'Release.gpg'), os.path.join(dest, 'Release')], url + 'Release.gpg')
            except FetchError:
                for name in ('Release', 'Release.gpg'):
                    os.unlink(os.path.join(dest, name))
                raise
            shutil.copyfile(os.path.join(dest, 'Release'), body)
        with open(body, 'rb') as handle:
            release_data = handle.read()
    finally:
        if os.path.exists(body):
            os.unlink(body)
    try:
        # bytes: parse_release decodes them and refuses text that is not UTF-8 with AptRepoError
        release = apt_repo.parse_release(release_data)
    except apt_repo.AptRepoError as exc:
        raise FetchError('%s: %s' % (url + ('InRelease' if signed else 'Release'), exc))
    indexes = apt_repo.packages_entries(release)
    if not indexes:
        weak = apt_repo.weak_only_indexes(release)
        if weak:
            raise FetchError('%s: the signed Release lists %s only with MD5Sum or SHA1 sums, which apt refuses (it needs SHA256)'
                             % (url + ('InRelease' if signed else 'Release'), ', '.join(weak)))
        raise FetchError('%s: the signed Release lists no package index (%s)' % (url, ', '.join(apt_repo.PACKAGES_NAMES)))
    for name, sha, size in indexes:
        get(name, (size, 'its size in the signed Release'), (sha, size))
    text = None
    for name, sha, size in indexes:
        path = os.path.join(dest, name)
        if name == 'Packages':
            with open(path, 'rb') as handle:
                text = handle.read()
        elif name.endswith('.gz'):
            text = _decompressed(gzip.open, path, url + name)
        elif name.endswith(('.xz', '.lzma')):
            text = _decompressed(lzma.open, path, url + name)
        elif name.endswith('.bz2'):
            text = _decompressed(bz2.open, path, url + name)
        if text is not None:
            break
    if text is None:
        raise FetchError('%s: no package index in a format this module reads (%s)' % (url, ', '.join(n for n, dummy, dummy2 in indexes)))
    try:
        index = apt_repo.PackageIndex(text, params['architecture'], params['exclude'])  # bytes, decoded there
        closure = apt_repo.resolve_closure(index, params['package'], params['version'])
    except apt_repo.AptRepoError as exc:
        raise FetchError('%s: %s' % (url + indexes[0][0], exc))
    packages = []
    for stanza in closure['packages']:
        name = _local_name(stanza['filename'])
        size = stanza.get('size', '')
        if not (size.isascii() and size.isdigit() and len(size) <= 18):
            raise FetchError('%s: the paragraph of %s %s has no Size (%r): without it the download of %s has no cap; apt needs it too'
                             % (url + indexes[0][0], stanza['package'], stanza['version'], size, name))
        expected = (stanza['sha256'], int(size))
        path = os.path.join(dest, name)
        if not os.path.isdir(os.path.dirname(path)):
            os.makedirs(os.path.dirname(path))
        if not (os.path.isfile(path) and os.path.getsize(path) == expected[1] and sha256_file(path) == expected[0]):
            result = get(name, (expected[1], 'its Size in the signed Packages index'))
            _check(url + posixpath.normpath(name), path, result, expected,
                   'against the signed Packages index of %s %s' % (stanza['package'], stanza['version']))
        packages.append({'package': stanza['package'], 'version': stanza['version'], 'filename': name,
                         'sha256': stanza['sha256'], 'size': expected[1]})
    names = ['InRelease'] if signed else ['Release', 'Release.gpg']
    names += [name for name, dummy, dummy2 in indexes] + [p['filename'] for p in packages]
    record = {'key': key, 'url': url, 'package': params['package'], 'version': params['version'],
              'files': dict((os.path.normpath(name), sha256_file(os.path.join(dest, name))) for name in names),
              'packages': packages, 'external': closure['external']}
    _prune(dest, set(os.path.normpath(n) for n in names))
    handle, tmp = tempfile.mkstemp(dir=dest, prefix='.partial-')
    with os.fdopen(handle, 'w') as out:
        out.write(json.dumps(record, indent=2, sort_keys=True) + '\n')
    os.chmod(tmp, 0o644)
    os.replace(tmp, record_path)
    return record, fetched, total[0]


def _prune(dest, keep):
    for root, dirs, files in os.walk(dest, topdown=False):
        for name in files:
            rel = os.path.normpath(os.path.relpath(os.path.join(root, name), dest))
            if rel not in keep and rel != RECORD:
                os.unlink(os.path.join(root, name))
        for name in dirs:
            path = os.path.join(root, name)
            if not os.listdir(path):
                os.rmdir(path)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            url=dict(type='str', required=True),
            package=dict(type='str', required=True),
            version=dict(type='str', required=True),
            keyring=dict(type='path', required=True),
            dest=dict(type='path', required=True),
            architecture=dict(type='str', default='amd64'),
            exclude=dict(type='list', elements='str', default=[]),
            timeout=dict(type='int', default=60),
            validate_certs=dict(type='bool', default=True),
        ),
        supports_check_mode=True,
    )
    params = module.params
    dest = params['dest']
    record_path = os.path.join(dest, RECORD)
    if not os.path.isfile(params['keyring']):
        module.fail_json(msg='keyring %s: no such file' % params['keyring'], record=record_path)
    # What decides the content (not where it comes from: a mirror serves the same files).
    key = hashlib.sha256(json.dumps({'package': params['package'], 'version': params['version'],
                                     'architecture': params['architecture'], 'exclude': params['exclude'],
                                     'keyring': sha256_file(params['keyring'])}, sort_keys=True).encode()).hexdigest()
    record = _read_record(record_path)
    what = '%s=%s from %s' % (params['package'], params['version'], params['url'])
    if record.get('key') == key:
        bad = verify_record(dest, record)
        if bad:
            module.fail_json(
                msg='%s: %s. Remove %s to fetch the repository again.' % (dest, '; '.join(
                    '%s has sha256 %s, recorded %s' % (name, actual or '(missing)', expected) for name, expected, actual in bad), record_path),
                record=record_path)
        module.exit_json(changed=False, files=record['files'], packages=record['packages'], external=record['external'],
                         downloaded=[], downloaded_bytes=0, record=record_path,
                         msg='%s: complete, %d files checked against %s' % (what, len(record['files']), record_path))
    if module.check_mode:
        module.exit_json(changed=True, files={}, packages=[], external=[], downloaded=[], downloaded_bytes=0, record=record_path,
                         msg='would fetch %s and its dependency closure into %s' % (what, dest))
    try:
        if not os.path.isdir(dest):
            os.makedirs(dest)
        if os.path.exists(record_path):
            os.unlink(record_path)
        record, fetched, size = fetch(module, key, record_path)
    except FetchError as exc:
        module.fail_json(msg='%s. Nothing was recorded in %s.' % (to_native(exc), dest), record=record_path)
    except (IOError, OSError) as exc:
        module.fail_json(msg='%s: %s' % (dest, to_native(exc)), record=record_path)
    module.exit_json(changed=True, files=record['files'], packages=record['packages'], external=record['external'],
                     downloaded=fetched, downloaded_bytes=size, record=record_path,
                     msg='%s: %d packages, %d bytes fetched into %s' % (what, len(record['packages']), size, dest))


if __name__ == '__main__':
    main()

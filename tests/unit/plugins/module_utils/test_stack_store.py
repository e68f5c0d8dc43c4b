# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The stacks' shared file store (module_utils/stack_store), on a real pip install of a real wheel.

Stack A is a virtualenv whose pip was installed by pip itself from the interpreter's bundled pip wheel (ensurepip:
RECORD, bytecode and the console scripts pip, pip3, pip3.X with A's python in their '#!' line). It is put in the store;
stack B, a virtualenv without pip, gets pip laid out from the store. B's pip must run as B's, share every file but the
scripts and RECORD with A, and hold a RECORD that is true for B's files.
"""

from __future__ import annotations

import base64
import csv
import errno
import glob
import hashlib
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_store as ss


def _base_python():
    """The interpreter a virtualenv is made from (this may run inside one)."""
    return getattr(sys, '_base_executable', None) or sys.executable


def _site(venv):
    return glob.glob(os.path.join(venv, 'lib', 'python*', 'site-packages'))[0]


def _pip_dist_info(site):
    return [entry for entry in os.listdir(site) if entry.startswith('pip-') and entry.endswith('.dist-info')][0]


def _pip_venv(venv):
    """A virtualenv at ``venv`` with the pip ensurepip installs (a real pip install): (venv, site-packages, pip's
    dist-info)."""
    try:
        subprocess.run([_base_python(), '-m', 'venv', venv], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip('no venv with ensurepip here: %s' % exc)
    site = _site(venv)
    return venv, site, _pip_dist_info(site)


def _record_ok(site, dist_info):
    """Every RECORD row with a hash matches the file as it is now."""
    bad = []
    with open(os.path.join(site, dist_info, 'RECORD'), newline='') as handle:
        for row in csv.reader(handle):
            if len(row) < 2 or not row[1]:
                continue
            with open(os.path.normpath(os.path.join(site, row[0])), 'rb') as data:
                digest = base64.urlsafe_b64encode(hashlib.sha256(data.read()).digest()).rstrip(b'=').decode()
            if row[1] != 'sha256=' + digest:
                bad.append(row[0])
    return bad


def _stale_bytecode(site):
    stale = []
    for pyc in glob.glob(os.path.join(site, 'pip', '**', '__pycache__', '*.pyc'), recursive=True):
        source = os.path.join(os.path.dirname(os.path.dirname(pyc)), os.path.basename(pyc).split('.')[0] + '.py')
        with open(pyc, 'rb') as handle:
            header = handle.read(16)
        info = os.stat(source)
        if int.from_bytes(header[8:12], 'little') != int(info.st_mtime) & 0xFFFFFFFF or int.from_bytes(header[12:16], 'little') != info.st_size:
            stale.append(pyc)
    return stale


@pytest.fixture(scope='module')
def stacks(tmp_path_factory):
    root = str(tmp_path_factory.mktemp('root'))
    stack_a = os.path.join(root, 'stacks', 'a')
    stack_b = os.path.join(root, 'stacks', 'b')
    try:
        subprocess.run([_base_python(), '-m', 'venv', os.path.join(stack_a, 'venv')], check=True, capture_output=True)
        subprocess.run([_base_python(), '-m', 'venv', '--without-pip', os.path.join(stack_b, 'venv')], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip('no venv with ensurepip here: %s' % exc)
    return root, stack_a, stack_b


def test_a_real_pip_install_is_shared_and_laid_out_in_another_stack(stacks):
    root, stack_a, stack_b = stacks
    store = ss.store_dir(root)
    ss.ensure_store(store)
    venv_a, venv_b = os.path.join(stack_a, 'venv'), os.path.join(stack_b, 'venv')
    site_a, site_b = _site(venv_a), _site(venv_b)
    dist_info = _pip_dist_info(site_a)
    wheel_sha = 'f' * 64  # the key of the manifest: the locked wheel's sha256 (any key will do for the store)

    files, saved = ss.ingest(store, venv_a, site_a, dist_info, wheel_sha, 'pip', dist_info[4:-10])
    assert files > 100 and saved >= 0

    manifest = ss.load_manifest(store, wheel_sha)
    templates = sorted(entry['path'] for entry in manifest['files'] if 'parts' in entry)
    # The console scripts name A's python; nothing in site-packages does (bytecode is shared: see _templated).
    assert templates and all(path.startswith('../../../bin/pip') for path in templates)
    assert any(entry['path'].endswith('.pyc') and 'sha256' in entry for entry in manifest['files'])

    laid = ss.materialize(store, venv_b, site_b, manifest)
    assert laid == len(manifest['files'])

    # B's pip runs as B's pip: its script names B's python, and it imports B's files.
    out = subprocess.run([os.path.join(venv_b, 'bin', 'pip'), '--version'], check=True, capture_output=True, text=True).stdout
    assert os.path.realpath(site_b) in os.path.realpath(out.split(' from ')[1].split(' (')[0])
    with open(os.path.join(venv_b, 'bin', 'pip')) as handle:
        assert handle.readline().startswith('#!' + os.path.join(os.path.realpath(venv_b), 'bin', 'python'))

    # Shared: the same inode in both stacks; the scripts and RECORD are B's own.
    init_a = os.stat(os.path.join(site_a, 'pip', '__init__.py'))
    init_b = os.stat(os.path.join(site_b, 'pip', '__init__.py'))
    assert (init_a.st_ino, init_a.st_dev) == (init_b.st_ino, init_b.st_dev) and init_b.st_nlink == 3
    assert os.stat(os.path.join(venv_a, 'bin', 'pip')).st_ino != os.stat(os.path.join(venv_b, 'bin', 'pip')).st_ino
    assert _record_ok(site_b, dist_info) == []
    assert _record_ok(site_a, dist_info) == []
    # B's RECORD is A's byte for byte (pip ends its lines with CRLF) but the rows of the scripts written for B.
    with open(os.path.join(site_a, dist_info, 'RECORD'), 'rb') as handle_a, open(os.path.join(site_b, dist_info, 'RECORD'), 'rb') as handle_b:
        lines_a, lines_b = handle_a.read().splitlines(True), handle_b.read().splitlines(True)
    assert lines_a[0].endswith(b'\r\n') and len(lines_a) == len(lines_b)
    assert [i for i, (x, y) in enumerate(zip(lines_a, lines_b)) if x != y] == \
        [i for i, line in enumerate(lines_a) if line.startswith(tuple(path.encode() for path in templates))]
    # B's bytecode is valid for B's sources (pip compiles with timestamp invalidation: a source linked with another
    # mtime would make every import compile again, and the service user cannot write the new .pyc).
    assert _stale_bytecode(site_b) == [] and _stale_bytecode(site_a) == []

    # Nothing is removed while both stacks link it; once A and B are gone, everything is.
    assert ss.collect(store) == {'objects': 0, 'bytes': 0, 'manifests': 0}
    shutil.rmtree(stack_a)
    assert ss.collect(store, check=True)['objects'] == 0
    shutil.rmtree(stack_b)
    counted = ss.collect(store, check=True)
    assert counted['objects'] == len(set(ss.object_path(store, e['sha256'], e['mode'], e.get('mtime')) for e in manifest['files'] if 'sha256' in e))
    assert counted['manifests'] == 1 and ss.load_manifest(store, wheel_sha) is not None
    removed = ss.collect(store)
    assert removed == counted
    assert ss.load_manifest(store, wheel_sha) is None
    assert os.listdir(os.path.join(store, 'dists')) == []


def test_a_changed_file_keeps_the_dist_out_of_the_store(tmp_path):
    root = str(tmp_path)
    venv, site, dist_info = _pip_venv(os.path.join(root, 'stacks', 'c', 'venv'))
    # As a patch series would: a new file renamed over the installed one.
    target = os.path.join(site, 'pip', '__init__.py')
    with open(target + '.new', 'w') as handle:
        handle.write('# patched\n')
    os.rename(target + '.new', target)
    store = ss.store_dir(root)
    ss.ensure_store(store)
    files, reason = ss.ingest(store, venv, site, dist_info, 'e' * 64)
    assert files == 0 and 'pip/__init__.py no longer has the content its RECORD says' in reason
    assert ss.load_manifest(store, 'e' * 64) is None
    assert ss.collect(store, check=True)['manifests'] == 0


def _stored_wheel(tmp_path, name, data):
    """A store under tmp_path holding one wheel file (bytes ``data``), and an empty wheelhouse beside it."""
    store = ss.store_dir(str(tmp_path))
    ss.ensure_store(store)
    wheel = tmp_path / name
    wheel.write_bytes(data)
    os.chmod(str(wheel), 0o644)
    sha = hashlib.sha256(data).hexdigest()
    assert ss.put_file(store, str(wheel), sha, 0o644) == 0
    dest = tmp_path / 'wheelhouse'
    dest.mkdir()
    return store, wheel, sha, dest


def test_a_wheel_is_linked_from_the_store_and_a_missing_object_hides_the_manifest(tmp_path):
    store, wheel, sha, dest = _stored_wheel(tmp_path, 'x-1-py3-none-any.whl', b'not really a wheel, only bytes with a hash')
    assert ss.link_wheels(store, {wheel.name: sha, 'other.whl': 'a' * 64}, str(dest)) == ([wheel.name], wheel.stat().st_size)
    assert os.stat(str(dest / wheel.name)).st_ino == os.stat(str(wheel)).st_ino
    assert not os.path.lexists(str(dest / 'other.whl'))
    # A second copy of the same bytes becomes a link to the stored one, and says how many bytes that saved.
    copy = tmp_path / 'copy.whl'
    copy.write_bytes(wheel.read_bytes())
    os.chmod(str(copy), 0o644)
    assert ss.put_file(store, str(copy), sha, 0o644) == len(wheel.read_bytes())
    assert os.stat(str(copy)).st_ino == os.stat(str(wheel)).st_ino
    ss._write_json(ss.manifest_path(store, 'b' * 64), {'dist_info': 'x', 'record': [],
                                                       'files': [{'path': 'x/y.py', 'mode': 0o644, 'sha256': 'c' * 64}]})
    assert ss.load_manifest(store, 'b' * 64) is None


def test_the_wheels_the_store_holds_are_linked_into_a_wheelhouse_and_only_those(tmp_path):
    """Controller mode (fleet_wheelhouse distribute): what the store holds is linked, the rest is left to the copy."""
    store, held, sha, dest = _stored_wheel(tmp_path, 'held-1-py3-none-any.whl', b'a wheel an earlier stack was built from')
    (dest / 'there-1-py3-none-any.whl').write_bytes(b'already here')
    wheels = {held.name: sha, 'new-1-py3-none-any.whl': 'd' * 64, 'there-1-py3-none-any.whl': sha}
    assert ss.link_wheels(store, wheels, str(dest), check=True) == ([held.name], len(held.read_bytes()))
    assert not (dest / held.name).exists()
    assert ss.link_wheels(store, wheels, str(dest)) == ([held.name], len(held.read_bytes()))
    assert os.stat(str(dest / held.name)).st_ino == os.stat(str(held)).st_ino
    # What was there stays as it was (the copy's check judges it); nothing more is linked a second time.
    assert (dest / 'there-1-py3-none-any.whl').read_bytes() == b'already here'
    assert ss.link_wheels(store, wheels, str(dest)) == ([], 0)
    with pytest.raises(ss.StoreError):
        ss.link_wheels(store, {'../escape.whl': sha}, str(dest))


def test_only_the_stores_own_object_for_the_locked_sha256_is_taken_as_checked(tmp_path):
    """stack_wheels does not hash again a wheel whose file is the store's object for its locked sha256 (same inode); a
    copy of the same bytes, a file the store does not hold, another sha256 or a symlink to the object are hashed."""
    store, held, sha, dest = _stored_wheel(tmp_path, 'held-1-py3-none-any.whl', b'a wheel an earlier stack was built from')
    ss.link_wheels(store, {held.name: sha}, str(dest))
    (dest / 'copy-1-py3-none-any.whl').write_bytes(held.read_bytes())
    os.symlink(ss.object_path(store, sha, 0o644), str(dest / 'link-1-py3-none-any.whl'))
    wheels = {held.name: sha, 'copy-1-py3-none-any.whl': sha, 'link-1-py3-none-any.whl': sha,
              'new-1-py3-none-any.whl': 'd' * 64, '../held-1-py3-none-any.whl': sha}
    assert ss.stored_wheels(store, wheels, str(dest)) == {held.name}
    assert ss.stored_wheels(store, {held.name: 'e' * 64}, str(dest)) == set()


def test_a_store_on_another_file_system_shares_nothing_and_changes_no_file(tmp_path, monkeypatch):
    """A store the stacks cannot hard-link into (another mount: link(2) fails with EXDEV): a real pip install is not
    shared, reported why, and every file of it stays as pip wrote it; no wheel is linked."""
    venv, site, dist_info = _pip_venv(str(tmp_path / 'stack' / 'venv'))
    before = dict((path, os.stat(path).st_ino) for path in glob.glob(os.path.join(site, 'pip', '**', '*.py'), recursive=True))
    store = ss.store_dir(str(tmp_path))
    ss.ensure_store(store)

    def cross_device(source, dest):
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), source, None, dest)
    monkeypatch.setattr(ss.os, 'link', cross_device)
    files, reason = ss.ingest(store, venv, site, dist_info, 'e' * 64, 'pip', dist_info[4:-10])
    assert files == 0 and reason == 'the store %s is on another file system than %s: nothing is shared' % (store, venv)
    assert ss.load_manifest(store, 'e' * 64) is None
    assert dict((path, os.stat(path).st_ino) for path in before) == before
    assert _record_ok(site, dist_info) == []
    wheelhouse = tmp_path / 'wheelhouse'
    wheelhouse.mkdir()
    obj = ss.object_path(store, 'a' * 64, 0o644)
    os.makedirs(os.path.dirname(obj))
    with open(obj, 'wb') as handle:
        handle.write(b'a stored wheel')
    assert ss.link_wheels(store, {'x-1-py3-none-any.whl': 'a' * 64}, str(wheelhouse)) == ([], 0)
    assert os.listdir(str(wheelhouse)) == []

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The unified-diff series engine, against the real sglang 0.5.9 files and the three shipped patches.

Fixture: tests/unit/fixtures/sglang-0.5.9 (verbatim wheel files, see its README.md), copied into tmp_path
by tests/unit/sglang_site.py.
The patched modules are only compiled (py_compile): importing them needs torch.
"""

from __future__ import annotations

import json
import os
import py_compile
import re

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import patch_series as ps
from ansible_collections.gpuops.sglang_stack.tests.unit.sglang_site import (
    DIST, FILES, NAMES, PATCH_DIR, TARGETS, digest, digests, make_site)


def series():
    return [ps.read_patch_file(name, os.path.join(PATCH_DIR, name)) for name in NAMES]


@pytest.fixture
def site(tmp_path):
    return make_site(tmp_path)


def test_fixture_is_the_wheel(site):
    assert digests(site, FILES) == ['33c9b64c22571911569956853a33e6328a142ece2ed50393ef782230563c895e',
                                    '95a6a7703c6d3ccd5a8e106c4a35c2715052acd78d48b0fb58f5a3e24c443e90',
                                    'f831d2baa4e3bbfe08f9758f7ee7a10ffa45ec2552142d13761876ee77895fad']
    assert ps.installed_version(site, 'sglang')[0] == '0.5.9'


def test_installed_version_reads_metadata_headers(tmp_path):
    # Names compare PEP 503 normalised; a dist-info without METADATA or without Name is passed over;
    # only the header (up to the first blank line) counts.
    (tmp_path / 'aaa-0.dist-info').mkdir()
    nameless = tmp_path / 'aab-0.dist-info'
    nameless.mkdir()
    (nameless / 'METADATA').write_text('Metadata-Version: 2.4\nVersion: 9\n')
    dist = tmp_path / 'SGLang_Router-0.2.1.dist-info'
    dist.mkdir()
    (dist / 'METADATA').write_text('Metadata-Version: 2.4\nName: sglang_router\nVersion: 0.2.1\n\nVersion: 7\n')
    meta = str(dist / 'METADATA')
    assert ps.installed_version(str(tmp_path), 'sglang-router') == ('0.2.1', meta)
    assert ps.installed_version(str(tmp_path), 'SGLang.Router') == ('0.2.1', meta)
    assert ps.installed_version(str(tmp_path), 'sglang') == (None, None)


def test_parse_skips_header_and_maps_paths():
    patches = series()
    assert [[f.relpath for f in p['files']] for p in patches] == [[t] for t in TARGETS]
    for p in patches:
        with open(p['path'], 'rb') as handle:
            head = handle.read().split(b'\n---', 1)[0]
        assert all(line.startswith(b'# ') for line in head.split(b'\n'))


def test_plan_fresh_all_applicable(site):
    result = ps.plan(site, series(), 'sglang', '0.5.9')
    assert [p['state'] for p in result['patches']] == ['applicable'] * len(NAMES)
    assert result['conflicts'] == []


def test_apply_then_noop_then_reverse(site):
    before = digests(site)
    out = ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9')
    assert out['changed'] is True
    assert sorted(c['relpath'] for c in out['changed_files']) == sorted(TARGETS)
    after = digests(site)
    assert all(b != a for b, a in zip(before, after))
    top = os.path.join(site, '.gpuops-patches', 'site-nccl')
    with open(os.path.join(top, 'applied.json')) as handle:
        manifest = json.load(handle)
    assert manifest['package'] == 'sglang' and manifest['package_version'] == '0.5.9'
    assert [p['name'] for p in manifest['patches']] == NAMES
    assert [p['files'] for p in manifest['patches']] == [[t] for t in TARGETS]
    assert manifest['patches'][0]['sha256'] == digest(os.path.join(PATCH_DIR, NAMES[0]))
    assert [digest(os.path.join(top, 'orig', t)) for t in TARGETS] == before

    again = ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9')
    assert again['changed'] is False and again['changed_files'] == []
    assert [p['state'] for p in again['patches']] == ['applied'] * len(NAMES)
    assert digests(site) == after

    back = ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9', state='absent')
    assert back['changed'] is True
    assert digests(site) == before
    assert not os.path.exists(os.path.join(site, '.gpuops-patches'))
    none = ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9', state='absent')
    assert none['changed'] is False
    assert [p['state'] for p in none['patches']] == ['applicable'] * 2


def test_patched_content(site):
    ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9')
    with open(os.path.join(site, TARGETS[0])) as handle:
        text = handle.read()
    assert '"torch symmetric memory all-reduce disabled: no size table for "' in text
    assert 'self.device_capability not in TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES' in text
    with open(os.path.join(site, TARGETS[1])) as handle:
        text = handle.read()
    assert '"[AR] group %s rank %d/%d: decode all-reduce path: %s (%s); "' in text
    assert 'def gpuops_allreduce_path(' in text
    # custom_all_reduce.py is no longer touched: the series leaves both gates of 0.5.9 as they are.
    assert digest(os.path.join(site, FILES[0])) == '33c9b64c22571911569956853a33e6328a142ece2ed50393ef782230563c895e'


def test_patched_modules_compile(site, tmp_path):
    ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9')
    for target in TARGETS:
        py_compile.compile(os.path.join(site, target), cfile=str(tmp_path / 'out.pyc'), doraise=True)


def test_conflict_is_all_or_none(site):
    before = digests(site)
    target = os.path.join(site, TARGETS[1])
    with open(target, 'rb') as handle:
        data = handle.read()
    data = data.replace(b'        # Create communicator for other hardware backends\n',
                        b'        # Create communicators for other hardware backends\n', 1)
    with open(target, 'wb') as handle:
        handle.write(data)
    changed = digest(target)
    with pytest.raises(ps.PatchError) as exc:
        ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9')
    msg = str(exc.value)
    assert TARGETS[1] in msg and 'sglang 0.5.9' in msg and '0003-nccl-log-allreduce-path.patch' in msg
    assert 'line 389' in msg and 'nothing was changed' in msg
    assert [p['state'] for p in exc.value.patches] == ['applicable', 'conflict']
    assert exc.value.patches[1]['conflict']['line'] == 389
    assert digests(site)[:1] == before[:1]
    assert digest(target) == changed
    assert not os.path.exists(os.path.join(site, '.gpuops-patches'))


def test_wrong_version_refused(site):
    meta = os.path.join(site, 'sglang-0.5.9.dist-info', 'METADATA')
    with open(meta, 'w') as handle:
        handle.write('Metadata-Version: 2.4\nName: sglang\nVersion: 0.5.10\n')
    before = digests(site)
    with pytest.raises(ps.PatchError) as exc:
        ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9')
    assert 'sglang 0.5.10 is installed' in str(exc.value) and 'sglang 0.5.9' in str(exc.value)
    assert meta in str(exc.value)
    assert digests(site) == before


def test_not_installed_refused(tmp_path):
    with pytest.raises(ps.PatchError, match='sglang is not installed'):
        ps.apply_series(str(tmp_path), series(), 'site-nccl', 'sglang', '0.5.9')


def test_check_mode_writes_nothing(site):
    before = digests(site)
    out = ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9', check_mode=True)
    assert out['changed'] is True and len(out['changed_files']) == 2
    assert digests(site) == before
    assert not os.path.exists(os.path.join(site, '.gpuops-patches'))


def test_stale_pyc_removed(site):
    cache = os.path.join(site, DIST, '__pycache__')
    os.makedirs(cache)
    stale = os.path.join(cache, 'parallel_state.cpython-312.pyc')
    other = os.path.join(cache, 'utils.cpython-312.pyc')
    for path in (stale, other):
        with open(path, 'wb') as handle:
            handle.write(b'stale')
    out = ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9')
    assert out['removed_pyc'] == [stale]
    assert not os.path.exists(stale) and os.path.exists(other)


def test_partially_applied_series_completes(site):
    ps.apply_series(site, series()[:1], 'site-nccl', 'sglang', '0.5.9')
    result = ps.plan(site, series(), 'sglang', '0.5.9')
    assert [p['state'] for p in result['patches']] == ['applied', 'applicable']
    out = ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9')
    assert len(out['changed_files']) == 1


def test_engine_small_cases():
    fp = ps.parse_patch(b'# header\n--- a/p/x.py\t2026-01-01\n+++ b/p/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n'
                        b'\\ No newline at end of file\n+c\n\\ No newline at end of file\n', 'small')[0]
    assert fp.relpath == 'p/x.py'
    assert ps.apply_hunks(b'a\nb', fp) == (b'a\nc', None)
    assert ps.apply_hunks(b'a\nc', fp, reverse=True) == (b'a\nb', None)
    new, miss = ps.apply_hunks(b'a\nb\n', fp)
    assert new is None and miss['line'] == 2
    with pytest.raises(ps.PatchError, match='unsafe'):
        ps.parse_patch(b'--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n', 'evil')
    with pytest.raises(ps.PatchError, match='has 1 old and 2 new lines'):
        ps.parse_patch(b'--- a/p/x\n+++ b/p/x\n@@ -1,2 +1,2 @@\n-a\n+b\n+c\n', 'short')
    with pytest.raises(ps.PatchError, match='no unified diff'):
        ps.parse_patch(b'# only a header\n', 'empty')


# --- Hostile patches: bounded, paths that are not UTF-8 (issue 18) -------------------------------------------
#
# Before: a hunk header with a 5,000-digit line number raised ValueError from int(), and a ---/+++ path that was
# not UTF-8 raised UnicodeDecodeError; both now are PatchError. The hostile patches are built for a length n (the
# tests use N); their time is measured by tests/benchmark/parser_bench.py, not asserted here.

N = 100000
HOSTILE_HUNK_HEADERS = {
    'line_number_of_5000_digits': lambda n: b'@@ -' + b'1' * 5000 + b',3 +1,3 @@',
    'digits_then_x': lambda n: b'@@ -' + b'1' * n + b'x',
    'commas': lambda n: b'@@ -1,3 +1' + b',' * n,
}


def real_patch():
    with open(os.path.join(PATCH_DIR, NAMES[0]), 'rb') as handle:
        return handle.read()


def patch_with_hunk_header(header):
    """The first recorded patch with its first hunk header replaced by header."""
    data = real_patch()
    first = data.index(b'\n@@ ') + 1
    return data[:first] + header + data[data.index(b'\n', first):]


def patch_after_a_long_line(n):
    return b'# ' + b' ' * n + b'\n' + real_patch()


@pytest.mark.parametrize('name', ['line_number_of_5000_digits', 'digits_then_x', 'commas'])
def test_hostile_hunk_headers_are_refused_quickly(name):
    hostile = patch_with_hunk_header(HOSTILE_HUNK_HEADERS[name](N))
    with pytest.raises(ps.PatchError, match='bad hunk header'):
        ps.parse_patch(hostile, 'hostile')


def test_path_that_is_not_utf8_is_refused_cleanly():
    data = real_patch()
    start = data.index(b'\n+++ ') + len(b'\n+++ b/')
    hostile = data[:start] + b'\xff' + data[start:]
    with pytest.raises(ps.PatchError, match='not UTF-8'):
        ps.parse_patch(hostile, 'hostile')


def test_text_with_surrogateescaped_bytes_round_trips():
    data = real_patch()
    # A context byte that is not UTF-8, as text decoded with surrogateescape: parsed back into the same bytes.
    text = data.decode('utf-8').replace('\n ', '\n \udcff', 1)
    files = ps.parse_patch(text, 'text')
    assert any(b'\xff' in line for line in files[0].hunks[0].old)
    with pytest.raises(ps.PatchError, match='cannot be encoded'):
        ps.parse_patch(data.decode('utf-8') + '\ud800', 'lone')


def test_patch_over_the_cap_is_refused():
    with pytest.raises(ps.PatchError, match='MAX_PATCH_BYTES'):
        ps.parse_patch(real_patch() + b'\n' * ps.MAX_PATCH_BYTES, 'huge')


def test_long_lines_parse_in_linear_time():
    data = real_patch()
    files = ps.parse_patch(patch_after_a_long_line(N), 'long header')
    assert [f.relpath for f in files] == [f.relpath for f in ps.parse_patch(data, 'real')]


# --- Confinement: only the package's own files, no write through a symlink, validated names (issue 18 item 5) ---
#
# Before: a patch could change any file under site-packages (sitecustomize.py, another package), a symlinked
# directory or file under the package sent the write (or the backup under .gpuops-patches) out of it, and the
# package name was never checked.

def one_file_patch(relpath, old=b'a\n', new=b'b\n'):
    return dict(name='x.patch', sha256='0' * 64, path='x.patch', files=ps.parse_patch(
        b'--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-%s+%s' % (relpath.encode(), relpath.encode(), old, new), 'x.patch'))


@pytest.mark.parametrize('relpath', ['sitecustomize.py', 'torch/__init__.py', 'sglang-0.5.9.dist-info/RECORD', 'sglang.pth'])
def test_patch_outside_the_package_dir_refused(site, relpath):
    target = os.path.join(site, *relpath.split('/'))
    if not os.path.isdir(os.path.dirname(target)):
        os.makedirs(os.path.dirname(target))
    with open(target, 'wb') as handle:
        handle.write(b'a\n')
    with pytest.raises(ps.PatchError, match=r"x.patch: .*%s.* outside the package directory 'sglang/'" % relpath.replace('.', r'\.')):
        ps.apply_series(site, series() + [one_file_patch(relpath)], 'site-nccl', 'sglang', '0.5.9')
    with open(target, 'rb') as handle:
        assert handle.read() == b'a\n'
    assert not os.path.exists(os.path.join(site, '.gpuops-patches'))


def test_symlinked_directory_in_the_package_refused(site, tmp_path):
    # device_communicators/ points out of site-packages: the write would land in the outside copy.
    inside = os.path.join(site, DIST + 'device_communicators')
    outside = str(tmp_path / 'outside')
    os.rename(inside, outside)
    os.symlink(outside, inside)
    before = digest(os.path.join(outside, 'torch_symm_mem.py'))
    with pytest.raises(ps.PatchError, match=r'device_communicators.* is a symlink'):
        ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9')
    assert digest(os.path.join(outside, 'torch_symm_mem.py')) == before


def test_symlinked_target_file_refused(site, tmp_path):
    inside = os.path.join(site, TARGETS[0])
    outside = str(tmp_path / 'torch_symm_mem.py')
    os.rename(inside, outside)
    os.symlink(outside, inside)
    with pytest.raises(ps.PatchError, match=r'torch_symm_mem\.py.* is a symlink'):
        ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9')
    assert os.path.islink(inside)


def test_symlinked_package_dir_refused(site, tmp_path):
    inside = os.path.join(site, 'sglang')
    outside = str(tmp_path / 'sglang-elsewhere')
    os.rename(inside, outside)
    os.symlink(outside, inside)
    with pytest.raises(ps.PatchError, match=r"'sglang' is a symlink"):
        ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9')


def test_symlinked_state_dir_refused(site, tmp_path):
    # The originals are kept under .gpuops-patches: a symlink there would send them (and the rmtree of absent) elsewhere.
    outside = tmp_path / 'state-elsewhere'
    outside.mkdir()
    os.symlink(str(outside), os.path.join(site, '.gpuops-patches'))
    before = digests(site)
    with pytest.raises(ps.PatchError, match=r"'\.gpuops-patches' is a symlink"):
        ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9')
    assert os.listdir(str(outside)) == [] and digests(site) == before
    with pytest.raises(ps.PatchError, match=r"'\.gpuops-patches' is a symlink"):
        ps.apply_series(site, series(), 'site-nccl', 'sglang', '0.5.9', state='absent')


def test_site_packages_reached_through_a_symlink_is_accepted(site, tmp_path):
    # /opt/sglang/current is a symlink to the stack directory: only the components below site-packages are checked.
    link = str(tmp_path / 'current')
    os.symlink(site, link)
    out = ps.apply_series(link, series(), 'site-nccl', 'sglang', '0.5.9')
    assert out['changed'] is True and sorted(c['relpath'] for c in out['changed_files']) == sorted(TARGETS)


@pytest.mark.parametrize('package', ['--extra-index-url=http://evil.invalid/simple', '-e', 'sglang/..', '', 'sglang ', '_sglang'])
def test_bad_package_name_refused(site, package):
    with pytest.raises(ps.PatchError, match=r'^package name %s is not a PEP 508' % re.escape(repr(package))):
        ps.apply_series(site, series(), 'site-nccl', package, '0.5.9')


@pytest.mark.parametrize('series_name', ['../x', '-x', 'a/b', '..'])
def test_bad_series_name_refused(site, series_name):
    with pytest.raises(ps.PatchError, match=r'^series name %s' % re.escape(repr(series_name))):
        ps.apply_series(site, series(), series_name, 'sglang', '0.5.9')


def test_package_dir():
    assert ps.package_dir('sglang') == 'sglang'
    assert ps.package_dir('SGLang.Router') == 'sglang_router'
    assert ps.package_dir('flashinfer-python') == 'flashinfer_python'

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The cuda_arch_scan module, run in-process on the fatbin fixtures (see tests/unit/fixtures/fatbin/README.md)."""

from __future__ import annotations

import json
import os
import shutil
import struct

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.modules import cuda_arch_scan
from ansible_collections.gpuops.sglang_stack.tests.unit import module_runner
from ansible_collections.gpuops.sglang_stack.tests.unit.recorded import FIXTURES, REAL

FATBIN = os.path.join(FIXTURES, 'fatbin')


def fx(name):
    return os.path.join(FATBIN, name)


def run_module(capsys, args):
    """Run the module; returns (failed, result dict)."""
    return module_runner.run_module(capsys, cuda_arch_scan, args)


def snapshot(path):
    """Names, sizes and mtimes under a directory: what must not change."""
    out = {}
    for top, _dirs, files in os.walk(path):
        for name in files:
            full = os.path.join(top, name)
            st = os.lstat(full)
            out[full] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return out


@pytest.fixture
def libdir(tmp_path):
    """A small site-packages-like tree: a torch-like lib dir and an sgl-kernel-like package."""
    lib = tmp_path / 'torch' / 'lib'
    lib.mkdir(parents=True)
    shutil.copyfile(fx('libk_sm120.so'), str(lib / 'libtorch_cuda.so'))
    shutil.copyfile(fx('libplain.so'), str(lib / 'libtorch_cpu.so'))
    shutil.copyfile(fx('notelf.so'), str(lib / 'libc.so'))
    sgl = tmp_path / 'sgl_kernel' / 'sm100'
    sgl.mkdir(parents=True)
    shutil.copyfile(fx('libk_multi_zstd.so'), str(sgl / 'common_ops.abi3.so'))
    return tmp_path


def test_defaults_scan_directory(capsys, libdir):
    failed, result = run_module(capsys, {'paths': [str(libdir)]})
    assert not failed
    assert result['changed'] is False
    summary = result['summary']
    assert summary['required_arch'] == 'sm_120' and summary['compute_capability'] == '12.0'
    assert summary['scanned'] == 4
    assert summary['sass'] == [str(libdir / 'sgl_kernel' / 'sm100' / 'common_ops.abi3.so'), str(libdir / 'torch' / 'lib' / 'libtorch_cuda.so')]
    assert summary['no_device_code'] == [str(libdir / 'torch' / 'lib' / 'libtorch_cpu.so')]
    assert summary['skipped'] == [str(libdir / 'torch' / 'lib' / 'libc.so')]
    assert summary['missing'] == [] and summary['unreadable'] == [] and summary['ok'] is True
    by_name = dict((os.path.basename(f['path']), f) for f in result['files'])
    ops = by_name['common_ops.abi3.so']
    assert ops['verdict'] == 'sass' and ops['matching'] == {'sass': ['sm_120f'], 'ptx': ['sm_120']}
    assert ops['sass'] == ['sm_90', 'sm_90a', 'sm_100a', 'sm_120f'] and ops['compression'] == ['zstd']
    assert ops['counts'] == {'elf': 8, 'ptx': 1, 'other': 0}
    assert 'entries' not in ops
    assert result['msg'] == 'sm_120: 4 file(s) scanned: 2 sass, 0 missing, 1 no_device_code, 1 skipped'


def test_real_library_and_entries(capsys):
    failed, result = run_module(capsys, {'paths': [os.path.join(REAL, 'libk_multi.so')], 'include_entries': True,
                                         'fail_on_missing': True})
    assert not failed
    (report,) = result['files']
    assert report['explicit'] is True and report['verdict'] == 'sass'
    assert report['sass'] == ['sm_90', 'sm_100', 'sm_120'] and report['ptx'] == ['sm_120']
    assert [(e['kind'], e['arch']) for e in report['entries']] == [
        ('elf', 'sm_90'), ('elf', 'sm_100'), ('elf', 'sm_120'), ('elf', 'sm_90'), ('elf', 'sm_100'), ('ptx', 'sm_120'), ('elf', 'sm_120')]


def test_fail_on_missing_names_each_file(capsys, libdir, tmp_path):
    gone = str(tmp_path / 'gone.so')
    failed, result = run_module(capsys, {
        'paths': [fx('libk_sm90.so'), fx('libk_sm120a.so'), fx('libk_truncated.so'), gone, str(libdir)],
        'required_arch': 'sm_121',
        'fail_on_missing': True,
    })
    assert failed
    msg = result['msg']
    assert msg.startswith('sm_121: 8 file(s) scanned: ')
    assert '%s: no SASS or PTX for sm_121 (SASS: sm_90; PTX: none)' % fx('libk_sm90.so') in msg
    assert '%s: no SASS or PTX for sm_121 (SASS: sm_120a; PTX: none)' % fx('libk_sm120a.so') in msg
    assert '%s: unreadable (truncated: ' % fx('libk_truncated.so') in msg
    assert '%s: unreadable (missing: no such file: %s)' % (gone, gone) in msg
    assert 'libtorch_cuda.so' not in msg  # sm_120 SASS runs on 12.1
    assert 'common_ops.abi3.so' not in msg  # sm_120f too
    assert result['summary']['failed'] == [fx('libk_sm90.so'), fx('libk_sm120a.so'), fx('libk_truncated.so'), gone]
    assert len(result['files']) == 8


def test_missing_is_reported_without_failing_by_default(capsys):
    failed, result = run_module(capsys, {'paths': [fx('libk_sm90.so'), fx('notelf.so')]})
    assert not failed
    assert [f['verdict'] for f in result['files']] == ['missing', 'unreadable']
    assert result['summary']['ok'] is False


def test_ptx_only_and_accept_ptx(capsys):
    failed, result = run_module(capsys, {'paths': [fx('libk_ptx120.so')], 'fail_on_missing': True})
    assert not failed and result['files'][0]['verdict'] == 'ptx_jit'
    failed, result = run_module(capsys, {'paths': [fx('libk_ptx120.so')], 'fail_on_missing': True, 'accept_ptx': False})
    assert failed
    assert '%s: only PTX (sm_120), no SASS for sm_120' % fx('libk_ptx120.so') in result['msg']


def test_empty_directory_fails_with_fail_on_missing(capsys, tmp_path):
    failed, result = run_module(capsys, {'paths': [str(tmp_path)], 'fail_on_missing': True})
    assert failed
    assert '%s: no file matching *.so *.so.[0-9]*' % tmp_path in result['msg']
    assert result['summary']['empty_paths'] == [str(tmp_path)]


def test_options_all_fatbins_embedded_patterns(capsys, tmp_path):
    failed, result = run_module(capsys, {'paths': [fx('libk_rdc.so')], 'all_fatbins': True, 'include_entries': True})
    assert not failed
    assert result['files'][0]['sections'] == ['.nv_fatbin', '__nv_relfatbin']
    assert result['files'][0]['counts'] == {'elf': 4, 'ptx': 1, 'other': 0}
    failed, result = run_module(capsys, {'paths': [fx('libk_embedded.so')], 'embedded': 'never'})
    assert result['files'][0]['error'] == 'no_fatbin' and result['files'][0]['verdict'] == 'missing'
    failed, result = run_module(capsys, {'paths': [fx('libk_embedded.so')]})
    assert result['files'][0]['source'] == 'embedded' and result['files'][0]['verdict'] == 'sass'
    shutil.copyfile(fx('libk_sm120.so'), str(tmp_path / 'kernels.bin'))
    shutil.copyfile(fx('libk_sm90.so'), str(tmp_path / 'libx.so'))
    failed, result = run_module(capsys, {'paths': [str(tmp_path)], 'patterns': ['*.bin']})
    assert [os.path.basename(f['path']) for f in result['files']] == ['kernels.bin']


def test_check_mode_changes_nothing(capsys, libdir):
    before = snapshot(str(libdir))
    failed, result = run_module(capsys, {'paths': [str(libdir)], '_ansible_check_mode': True, 'fail_on_missing': True})
    assert not failed and result['changed'] is False
    assert result['summary']['scanned'] == 4
    assert snapshot(str(libdir)) == before


def test_bad_required_arch(capsys):
    failed, result = run_module(capsys, {'paths': [fx('libk_sm120.so')], 'required_arch': 'blackwell'})
    assert failed
    assert 'not a CUDA architecture' in result['msg']


def test_dotted_required_arch(capsys):
    failed, result = run_module(capsys, {'paths': [fx('libk_sm100.so')], 'required_arch': '10.3', 'fail_on_missing': True})
    assert not failed
    assert result['summary']['required_arch'] == 'sm_103'
    assert result['files'][0]['matching'] == {'sass': ['sm_100'], 'ptx': []}


FLASHINFER = os.path.join(FIXTURES, 'real', 'flashinfer-cubin-0.6.4')


def test_real_flashinfer_cubins(capsys, tmp_path):
    """The real wheel's layout: bare cubins for SM100-class GPUs only, named as cuobjdump names them."""
    pkg = tmp_path / 'flashinfer_cubin' / 'cubins'
    pkg.mkdir(parents=True)
    for name in os.listdir(FLASHINFER):
        if name.endswith('.cubin'):
            shutil.copyfile(os.path.join(FLASHINFER, name), str(pkg / name))
    args = {'paths': [str(tmp_path / 'flashinfer_cubin')], 'patterns': ['*.so', '*.so.[0-9]*', '*.cubin'], 'include_entries': True}
    failed, result = run_module(capsys, dict(args, required_arch='sm_100'))
    assert not failed
    by_sass = sorted((f['sass'][0], [e['arch'] for e in f['entries']][0], f['verdict']) for f in result['files'])
    assert by_sass == [('sm_100a', 'sm_100a', 'sass'), ('sm_100f', 'sm_100', 'sass'),
                       ('sm_103a', 'sm_103a', 'missing'), ('sm_103a', 'sm_103a', 'missing')]
    failed, result = run_module(capsys, dict(args, required_arch='sm_120', fail_on_missing=True))
    assert failed and result['summary']['scanned'] == 4 and len(result['summary']['missing']) == 4
    assert 'no SASS or PTX for sm_120 (SASS: sm_100f; PTX: none)' in result['msg']


def test_file_name_that_is_not_utf8(capsys, tmp_path):
    """The controller refuses a module result with lone surrogates (MODULE_STRICT_UTF8_RESPONSE); the old
    result carried 'libk_\\udcff.so' and the task failed. The name is now reported with a backslash escape."""
    shutil.copyfile(fx('libk_sm120.so'), os.path.join(os.fsencode(str(tmp_path)), b'libk_\xff.so'))
    failed, result = run_module(capsys, {'paths': [str(tmp_path)], 'fail_on_missing': True})
    assert not failed
    json.dumps(result, ensure_ascii=False).encode('utf-8')  # raises on a lone surrogate
    assert [f['path'] for f in result['files']] == [os.path.join(str(tmp_path), 'libk_\\xff.so')]
    assert result['summary']['sass'] == [os.path.join(str(tmp_path), 'libk_\\xff.so')]


def test_more_images_than_the_limit(capsys, tmp_path):
    path = tmp_path / 'libmany.so'
    count = 65537
    with open(str(path), 'wb') as handle:
        handle.write(struct.pack('<IHHQ', 0xBA55ED50, 1, 16, 64 * count))
        handle.write(struct.pack('<HHIQIIHHIIIQQQ', 2, 0x0101, 64, 0, 0, 0, 8, 1, 100, 0, 0, 0x11, 0, 0) * count)
    failed, result = run_module(capsys, {'paths': [str(path)], 'fail_on_missing': True})
    assert failed
    (report,) = result['files']
    assert report['entries_truncated'] is True and report['verdict'] == 'unreadable' and report['error'] is None
    assert '%s: unreadable (more than 65536 images: stopped reading after 65536; no SASS for sm_120 in what was read)' % path in result['msg']
    failed, result = run_module(capsys, {'paths': [str(path)], 'required_arch': 'sm_100', 'fail_on_missing': True})
    assert not failed and result['files'][0]['verdict'] == 'sass'

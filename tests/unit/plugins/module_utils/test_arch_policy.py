# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""arch_policy: the shipped verify policies judged against what the real wheels install.

Two kinds of real data:
- tests/unit/fixtures/arch_policy/*.tsv.gz: every path of the real wheels' RECORD (sgl-kernel 0.3.21
  from PyPI, flashinfer-cubin 0.6.4, torch 2.11.0 and torchvision 0.26.0 cp312) with the SASS/PTX of
  each library as the fatbin reader read it from the real files (README there; sgl-kernel's sets are
  stack-facts 10.2's). The scanner is replaced by those records, the files themselves (2 GB) are not here.
- tests/unit/fixtures/fatbin and fixtures/real: small libraries built by the real nvcc 13.0, scanned for real.
"""

from __future__ import annotations

import copy
import functools
import gzip
import os
import shutil

import pytest
import yaml

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import arch_policy, fatbin
from ansible_collections.gpuops.sglang_stack.tests.unit.plugins.module_utils.test_fatbin import overlapping_candidates

HERE = os.path.dirname(__file__)
FIXTURES = os.path.join(HERE, '..', '..', 'fixtures')
RECORDS = os.path.join(FIXTURES, 'arch_policy')
FATBIN = os.path.join(FIXTURES, 'fatbin')
REAL_MULTI = os.path.join(FIXTURES, 'real', 'h200-ubuntu2404-cuda13', 'libk_multi.so')
DEFAULTS = os.path.join(HERE, '..', '..', '..', '..', 'roles', 'stack_declaration', 'defaults', 'main.yml')

WHEELS = {
    'sgl-kernel': ('sgl_kernel-0.3.21-cp310-abi3.tsv.gz', '0.3.21'),
    'flashinfer-cubin': ('flashinfer_cubin-0.6.4.tsv.gz', '0.6.4'),
    'torch': ('torch-2.11.0-cp312.tsv.gz', '2.11.0'),
    'torchvision': ('torchvision-0.26.0-cp312.tsv.gz', '0.26.0'),
}
COMMON_OPS_REAL = ['sm_80', 'sm_89', 'sm_90', 'sm_90a', 'sm_100a', 'sm_120a']  # stack-facts 10.2


def shipped_packages():
    with open(DEFAULTS) as handle:
        defaults = yaml.safe_load(handle)
    return [dict(pkg, layer=layer['name']) for layer in defaults['stack_declaration_layers'] for pkg in layer['packages']]


def policy_of(name):
    return [p for p in shipped_packages() if p['name'] == name][0]


def load_record(name):
    """{path: (error, sass, ptx)} of a real wheel, in RECORD order."""
    with gzip.open(os.path.join(RECORDS, WHEELS[name][0]), 'rt') as handle:
        rows = [line.rstrip('\n').split('\t') for line in handle if line.strip()]
    return dict((path, (None if error == '-' else error, sass.split(), ptx.split())) for path, error, sass, ptx in rows)


def entry(kind, target):
    major, minor, variant = fatbin.parse_arch(target)
    return {'kind': kind, 'sm': major * 10 + minor, 'variant': variant, 'target': target, 'arch': target}


class RecordedScan(object):
    """scan_file() answering from the recorded arch sets; overrides replace a file's sets."""

    def __init__(self, site, records):
        self.site = str(site)
        self.records = records
        self.scanned = []

    def __call__(self, path):
        rel = os.path.relpath(path, self.site).replace(os.sep, '/')
        self.scanned.append(rel)
        error, sass, ptx = self.records.get(rel, ('missing', [], []))
        if error == 'not_scanned':
            raise AssertionError('%s is not a library; no policy should scan it' % rel)
        return {'path': path, 'error': error, 'error_detail': error and 'recorded: %s' % error, 'sass': sass, 'ptx': ptx,
                'entries': [entry('elf', t) for t in sass] + [entry('ptx', t) for t in ptx]}


def make_site(tmp_path, wheels, overrides=None):
    """A site-packages holding the dist-info (METADATA, RECORD) of the given real wheels; returns (site, scan)."""
    site = tmp_path / 'site-packages'
    site.mkdir(exist_ok=True)
    records = {}
    for name in wheels:
        record = load_record(name)
        version = WHEELS[name][1]
        dist = site / ('%s-%s.dist-info' % (name.replace('-', '_'), version))
        dist.mkdir()
        (dist / 'METADATA').write_text('Metadata-Version: 2.1\nName: %s\nVersion: %s\n\n' % (name, version))
        (dist / 'RECORD').write_text(''.join('%s,sha256=x,1\n' % path for path in record))
        records.update(record)
    records.update(overrides or {})
    return site, RecordedScan(site, records)


def judge_one(tmp_path, name, policy_pkg=None, overrides=None):
    site, scan = make_site(tmp_path, [name], overrides)
    return arch_policy.judge_package(policy_pkg or policy_of(name), arch_policy.read_installed(str(site)), str(site), 'sm_120', scan), scan


# --- globs ---------------------------------------------------------------------------------------

@pytest.mark.parametrize('pattern, path, hit', [
    ('sgl_kernel/sm100/common_ops.abi3.so', 'sgl_kernel/sm100/common_ops.abi3.so', True),
    ('sgl_kernel/*.so', 'sgl_kernel/sm100/common_ops.abi3.so', False),
    ('sgl_kernel/**/*.so', 'sgl_kernel/flash_ops.abi3.so', True),
    ('sgl_kernel/**/*.so', 'sgl_kernel/sm100/common_ops.abi3.so', True),
    ('_mscclpp*.so', '_mscclpp.cpython-310-x86_64-linux-gnu.so', True),
    ('lib/mscclpp*.so*', 'lib/mscclpp_nccl.so.0.6.0', True),
    ('lib/mscclpp*.so*', 'lib64/mscclpp.so', False),
    ('flashinfer_cubin/**/*.cubin', 'flashinfer_cubin/cubins/abc/fmha/trtllm-gen/x_sm100f.cubin', True),
    ('torch/lib/libtorch_cuda.so', 'torch/lib/libtorch_cuda_linalg.so', False),
    ('torch/lib/libtorch_cuda?so', 'torch/lib/libtorch_cuda.so', True),
    ('torch/lib/libc10[_.]*.so', 'torch/lib/libc10_cuda.so', True),
    ('torch/lib/libc10[!_]so', 'torch/lib/libc10.so', True),
])
def test_glob(pattern, path, hit):
    assert bool(arch_policy.glob_regex(pattern).match(path)) is hit


@pytest.mark.parametrize('pattern, problem', [
    ('/abs/x.so', 'must be relative to site-packages'),
    ('../bin/x.so', 'must not leave site-packages'),
    ('a\\b.so', 'must be relative'),
    ('', 'non-empty string'),
    (3, 'non-empty string'),
])
def test_glob_problems(pattern, problem):
    assert problem in arch_policy.glob_problem(pattern)


def test_record_files_skips_scripts_and_dist_info(tmp_path):
    dist = tmp_path / 'x-1.dist-info'
    dist.mkdir()
    (dist / 'RECORD').write_text('x/a.so,sha256=1,2\n"x/b,c.so",,\n../../../bin/x,,\nx-1.dist-info/METADATA,,\nx/a.so,,\n\n')
    assert arch_policy.record_files(str(tmp_path), 'x-1.dist-info') == ['x/a.so', 'x/b,c.so']


# --- the shipped policies against the real wheels -------------------------------------------------

def test_real_sgl_kernel_passes_on_its_sm100_common_ops(tmp_path):
    result, scan = judge_one(tmp_path, 'sgl-kernel')
    assert result['verdict'] == 'ok' and result['ok']
    assert [(e['path'], e['verdict'], e['sass']) for e in result['required']] == [
        ('sgl_kernel/sm100/common_ops.abi3.so', 'sass', COMMON_OPS_REAL)]
    assert result['required'][0]['matching'] == {'sass': ['sm_120a'], 'ptx': []}
    reported = result['reported']
    # flash_ops, flashmla_ops, spatial_ops, sm90/common_ops, deep_gemm, _mscclpp and six lib/mscclpp* files.
    assert reported['files'] == 12 and reported['serving'] == 9
    groups = dict((tuple(g['sass']), (g['count'], g['examples'], g['serves'])) for g in reported['groups'])
    assert groups[('sm_80', 'sm_86', 'sm_90a')] == (1, ['sgl_kernel/flash_ops.abi3.so'], False)
    assert groups[('sm_90a', 'sm_100a')] == (1, ['sgl_kernel/flashmla_ops.abi3.so'], False)
    assert groups[tuple(COMMON_OPS_REAL)] == (2, ['sgl_kernel/sm90/common_ops.abi3.so', 'sgl_kernel/spatial_ops.abi3.so'], True)
    assert groups[('sm_80', 'sm_90')][0] == 7
    assert reported['no_device_code'] == ['deep_gemm/deep_gemm_cpp.abi3.so']
    assert result['detail'] == (
        '1 required, 1 passed: sgl_kernel/sm100/common_ops.abi3.so [sm_80 sm_89 sm_90 sm_90a sm_100a sm_120a]; '
        '12 reported, 9 with sm_120 SASS or PTX: 7 [sm_80 sm_90; PTX sm_80 sm_90] (_mscclpp.cpython-310-x86_64-linux-gnu.so, '
        'lib/mscclpp.so, lib/mscclpp.so.0, +4 more), 2 [sm_80 sm_89 sm_90 sm_90a sm_100a sm_120a] '
        '(sgl_kernel/sm90/common_ops.abi3.so, sgl_kernel/spatial_ops.abi3.so), 1 [sm_80 sm_86 sm_90a] (sgl_kernel/flash_ops.abi3.so), '
        '1 [sm_90a sm_100a] (sgl_kernel/flashmla_ops.abi3.so), 1 without device code')
    # Only libraries are read: the 1,000 Python files and headers of the RECORD are not.
    assert len(scan.scanned) == 13


def test_sgl_kernel_whose_sm100_common_ops_lacks_sm120_fails_naming_the_file(tmp_path):
    """The sm90 set without sm_120a, as a build for CUDA < 12.8 would be."""
    wrong = ['sm_80', 'sm_89', 'sm_90', 'sm_90a', 'sm_100a']
    result, _scan = judge_one(tmp_path, 'sgl-kernel', overrides={'sgl_kernel/sm100/common_ops.abi3.so': (None, wrong, [])})
    assert result['verdict'] == 'wrong_arch' and not result['ok']
    assert '1 required, 0 passed; FAILED: sgl_kernel/sm100/common_ops.abi3.so has no sm_120 code (sm_80 sm_89 sm_90 sm_90a sm_100a)' \
        in result['detail']


def test_sgl_kernel_sm90_common_ops_alone_does_not_satisfy_the_policy(tmp_path):
    """sm90/common_ops carries sm_120a too, but SGLang loads sm100/common_ops on SM120: its absence fails."""
    site, scan = make_site(tmp_path, ['sgl-kernel'])
    record = site / 'sgl_kernel-0.3.21.dist-info' / 'RECORD'
    record.write_text(''.join(line + '\n' for line in record.read_text().splitlines() if 'sm100/common_ops' not in line))
    result = arch_policy.judge_package(policy_of('sgl-kernel'), arch_policy.read_installed(str(site)), str(site), 'sm_120', scan)
    assert result['verdict'] == 'missing' and not result['ok']
    assert result['unmatched'] == ['sgl_kernel/sm100/common_ops.abi3.so']
    assert 'FAILED: no file matches sgl_kernel/sm100/common_ops.abi3.so' in result['detail']


def test_every_library_required_fails_the_real_sgl_kernel(tmp_path):
    """Why the policy exists: 'every .so must carry sm_120' fails the real wheel on files SM120 never loads."""
    pkg = copy.deepcopy(policy_of('sgl-kernel'))
    pkg['verify'] = {'reason': 'the old rule', 'require': ['sgl_kernel/**/*.so', 'deep_gemm/**/*.so']}
    result, _scan = judge_one(tmp_path, 'sgl-kernel', policy_pkg=pkg)
    assert result['verdict'] == 'wrong_arch'
    failed = sorted(e['path'] for e in result['required'] if e['verdict'] not in arch_policy.SERVING)
    assert failed == ['deep_gemm/deep_gemm_cpp.abi3.so', 'sgl_kernel/flash_ops.abi3.so', 'sgl_kernel/flashmla_ops.abi3.so']
    assert 'sgl_kernel/flash_ops.abi3.so has no sm_120 code (sm_80 sm_86 sm_90a)' in result['detail']


def test_real_flashinfer_cubin_is_reported_never_failed(tmp_path):
    result, scan = judge_one(tmp_path, 'flashinfer-cubin')
    assert result['verdict'] == 'reported' and result['ok']
    reported = result['reported']
    assert reported['files'] == 8934 and reported['serving'] == 0
    assert sum(g['count'] for g in reported['groups']) == 8934
    assert reported['groups'][0]['sass'] == ['sm_100f'] and reported['groups'][0]['count'] == 7594
    assert not any('120' in target for g in reported['groups'] for target in g['sass'] + g['ptx'])
    assert all(len(g['examples']) <= arch_policy.MAX_LISTED for g in reported['groups'])
    assert result['detail'].startswith('nothing required; 8934 reported, 0 with sm_120 SASS or PTX: 7594 [sm_100f], ')
    assert len(scan.scanned) == 8934


def test_every_cubin_required_fails_the_real_flashinfer_cubin(tmp_path):
    pkg = copy.deepcopy(policy_of('flashinfer-cubin'))
    pkg['verify'] = {'reason': 'the old rule', 'require': ['flashinfer_cubin/**/*.cubin']}
    result, _scan = judge_one(tmp_path, 'flashinfer-cubin', policy_pkg=pkg)
    assert result['verdict'] == 'wrong_arch'
    assert len([e for e in result['required'] if e['verdict'] == 'missing']) == 8934


def test_real_torch_passes_on_libtorch_cuda(tmp_path):
    result, _scan = judge_one(tmp_path, 'torch')
    assert result['verdict'] == 'ok'
    assert result['required'][0]['path'] == 'torch/lib/libtorch_cuda.so'
    assert result['required'][0]['matching'] == {'sass': ['sm_120', 'sm_120a'], 'ptx': []}


def test_torch_without_sm120_fails(tmp_path):
    """torch 2.11.0's libtorch_cuda.so with its SM12x code taken out (a cu126 build stops at sm_90)."""
    record = load_record('torch')['torch/lib/libtorch_cuda.so']
    wrong = [t for t in record[1] if not t.startswith('sm_12')]
    result, _scan = judge_one(tmp_path, 'torch', overrides={'torch/lib/libtorch_cuda.so': (None, wrong, [])})
    assert result['verdict'] == 'wrong_arch'
    assert 'torch/lib/libtorch_cuda.so has no sm_120 code (sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a sm_103a)' in result['detail']


def test_real_torchvision_passes_and_a_cpu_build_fails(tmp_path):
    result, _scan = judge_one(tmp_path, 'torchvision')
    assert result['verdict'] == 'ok'
    assert result['required'][0]['sass'] == ['sm_75', 'sm_80', 'sm_86', 'sm_90', 'sm_100', 'sm_120']
    assert result['reported']['files'] == 7 and result['reported']['no_device_code_count'] == 6
    (tmp_path / 'cpu').mkdir()
    cpu, _scan = judge_one(tmp_path / 'cpu', 'torchvision', overrides={'torchvision/_C.so': ('no_fatbin', [], [])})
    assert cpu['verdict'] == 'wrong_arch'
    assert 'torchvision/_C.so has no sm_120 code (no SASS)' in cpu['detail']


def test_ptx_only_required_file_passes_when_jit_able(tmp_path):
    """compute_90 PTX JIT-compiles for 12.0 (mscclpp ships sm_80/sm_90 SASS and PTX); compute_120a would too."""
    over = {'sgl_kernel/sm100/common_ops.abi3.so': (None, ['sm_90'], ['sm_90'])}
    result, _scan = judge_one(tmp_path, 'sgl-kernel', overrides=over)
    assert result['verdict'] == 'ok'
    assert result['required'][0]['verdict'] == 'ptx_jit'


def test_unreadable_required_file_fails(tmp_path):
    over = {'sgl_kernel/sm100/common_ops.abi3.so': ('truncated', [], [])}
    result, _scan = judge_one(tmp_path, 'sgl-kernel', overrides=over)
    assert result['verdict'] == 'unreadable' and not result['ok']
    assert 'sgl_kernel/sm100/common_ops.abi3.so unreadable (truncated: recorded: truncated)' in result['detail']


def test_not_installed(tmp_path):
    site = tmp_path / 'site'
    site.mkdir()
    installed = arch_policy.read_installed(str(site))
    missing = arch_policy.judge_package(policy_of('sgl-kernel'), installed, str(site))
    assert missing['verdict'] == 'missing' and not missing['ok']
    absent = arch_policy.judge_package(policy_of('flashinfer-cubin'), installed, str(site))
    assert absent['verdict'] == 'absent' and absent['ok']
    pure = arch_policy.judge_package(policy_of('sglang'), installed, str(site))
    assert pure['verdict'] == 'not_scanned' and pure['ok']


def test_judge_the_shipped_declaration_on_the_real_wheels(tmp_path):
    """The four real wheels together; the jit-cache (not on PyPI) is not installed and fails its requirement."""
    site, scan = make_site(tmp_path, list(WHEELS))
    result = arch_policy.judge(shipped_packages(), str(site), 'sm_120', scan=scan)
    rows = dict((row['layer'], row['verdict']) for row in result['layers'])
    assert rows == {'torch': 'ok', 'torchvision': 'ok', 'flashinfer-cubin': 'reported', 'flashinfer-jit-cache': 'missing',
                    'sgl-kernel': 'ok'}
    assert result['failed'] == ['flashinfer-jit-cache'] and not result['ok']
    assert result['msg'].startswith('sm_120: 5 package(s) with device code judged, 1 failed: flashinfer-jit-cache (')


# --- real nvcc 13.0 libraries, scanned for real ---------------------------------------------------

def real_tree(tmp_path, files):
    """A site-packages with sgl-kernel and the flashinfer JIT cache whose files are real nvcc builds."""
    site = tmp_path / 'site-packages'
    for dist, version, paths in (('sgl_kernel', '0.3.21+cu130', [p for p in files if not p.startswith('flashinfer')]),
                                 ('flashinfer_jit_cache', '0.6.4+cu130', [p for p in files if p.startswith('flashinfer')])):
        info = site / ('%s-%s.dist-info' % (dist, version))
        info.mkdir(parents=True)
        (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: %s\nVersion: %s\n\n' % (dist.replace('_', '-'), version))
        (info / 'RECORD').write_text(''.join('%s,,\n' % p for p in paths))
    for rel, source in files.items():
        target = site / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, str(target))
    return str(site)


def test_real_libraries_scanned(tmp_path):
    good = {
        'sgl_kernel/sm100/common_ops.abi3.so': os.path.join(FATBIN, 'libk_sm120a.so'),
        'sgl_kernel/sm90/common_ops.abi3.so': os.path.join(FATBIN, 'libk_sm90.so'),
        'sgl_kernel/flash_ops.abi3.so': os.path.join(FATBIN, 'libk_sm90.so'),
        'lib/mscclpp.so': os.path.join(FATBIN, 'libk_ptx90.so'),
        'deep_gemm/deep_gemm_cpp.abi3.so': os.path.join(FATBIN, 'libplain.so'),
        'flashinfer_jit_cache/jit_cache/norm/norm.so': REAL_MULTI,
        'flashinfer_jit_cache/jit_cache/gemm_sm90/gemm_sm90.so': os.path.join(FATBIN, 'libk_sm90.so'),
    }
    packages = [policy_of('sgl-kernel'), policy_of('flashinfer-jit-cache')]
    result = arch_policy.judge(packages, real_tree(tmp_path / 'good', good))
    assert result['ok'], result['msg']
    jit = result['packages'][1]
    assert jit['required'][0]['sass'] == ['sm_90', 'sm_100', 'sm_120'] and jit['required'][0]['ptx'] == ['sm_120']
    assert jit['detail'].endswith('; 1 reported, 0 with sm_120 SASS or PTX: 1 [sm_90] (gemm_sm90.so)')

    bad = dict(good)
    bad['sgl_kernel/sm100/common_ops.abi3.so'] = os.path.join(FATBIN, 'libk_sm100.so')
    bad['flashinfer_jit_cache/jit_cache/norm/norm.so'] = os.path.join(FATBIN, 'notelf.so')
    result = arch_policy.judge(packages, real_tree(tmp_path / 'bad', bad))
    assert result['failed'] == ['sgl-kernel', 'flashinfer-jit-cache']
    kernel, jit = result['packages']
    assert 'FAILED: sgl_kernel/sm100/common_ops.abi3.so has no sm_120 code (sm_100)' in kernel['detail']
    assert jit['verdict'] == 'unreadable' and 'flashinfer_jit_cache/jit_cache/norm/norm.so unreadable (not_elf' in jit['detail']


def test_a_file_cut_off_at_the_image_limit_names_the_limit(tmp_path):
    """Real nvcc 13.0 library libk_multi_zstd.so: 9 images, sm_90 sm_90a sm_100a first, sm_120f fourth. Read with a
    limit of 3 images it is unreadable for SM120 because of the limit (error None), and the verify detail says so;
    with 4 the sm_120f cubin is read and it passes though cut off; read whole it is not cut off."""
    crafted = tmp_path / 'crafted.so'
    crafted.write_bytes(overlapping_candidates(400))
    files = {
        'sgl_kernel/sm100/common_ops.abi3.so': os.path.join(FATBIN, 'libk_multi_zstd.so'),
        'sgl_kernel/flash_ops.abi3.so': os.path.join(FATBIN, 'libk_multi_zstd.so'),
        'sgl_kernel/sm90/common_ops.abi3.so': os.path.join(FATBIN, 'libk_sm90.so'),
        'deep_gemm/deep_gemm_cpp.abi3.so': str(crafted),
    }
    site = real_tree(tmp_path / 'site', files)
    packages = [policy_of('sgl-kernel')]

    cut = arch_policy.judge(packages, site, 'sm_120', scan=functools.partial(fatbin.scan_file, max_entries=3, max_search_nodes=100))
    kernel = cut['packages'][0]
    assert kernel['verdict'] == 'unreadable' and not kernel['ok'] and cut['failed'] == ['sgl-kernel']
    required = kernel['required'][0]
    assert (required['verdict'], required['error'], required['entries_truncated']) == ('unreadable', None, True)
    assert required['limit_detail'] == 'more than 3 images: stopped reading after 3'
    assert required['sass'] == ['sm_90', 'sm_90a', 'sm_100a']
    assert ('FAILED: sgl_kernel/sm100/common_ops.abi3.so unreadable (more than 3 images: stopped reading after 3; '
            'no sm_120 SASS in what was read: sm_90 sm_90a sm_100a)') in kernel['detail']
    assert 'None' not in kernel['detail']
    # Reported files cut off are unreadable, not a group of what was read nor "without device code" (the embedded
    # search of the crafted file stopped at its node limit before it could tell).
    reported = kernel['reported']
    assert sorted(reported['unreadable']) == ['deep_gemm/deep_gemm_cpp.abi3.so', 'sgl_kernel/flash_ops.abi3.so']
    assert reported['no_device_code'] == []
    assert [(g['sass'], g['count']) for g in reported['groups']] == [(['sm_90'], 1)]
    assert kernel['detail'].endswith('3 reported, 0 with sm_120 SASS or PTX: 1 [sm_90] (sgl_kernel/sm90/common_ops.abi3.so), '
                                     '2 [unreadable] (sgl_kernel/flash_ops.abi3.so, deep_gemm/deep_gemm_cpp.abi3.so)')

    four = arch_policy.judge(packages, site, 'sm_120', scan=functools.partial(fatbin.scan_file, max_entries=4))
    required = four['packages'][0]['required'][0]
    assert four['ok'], four['msg']
    assert (required['verdict'], required['entries_truncated']) == ('sass', True)
    assert required['limit_detail'] == 'more than 4 images: stopped reading after 4'

    whole = arch_policy.judge(packages, site, 'sm_120')
    required = whole['packages'][0]['required'][0]
    assert whole['ok'], whole['msg']
    assert (required['verdict'], required['entries_truncated'], required['limit_detail']) == ('sass', False, None)
    assert whole['packages'][0]['reported']['unreadable'] == []
    assert whole['packages'][0]['reported']['no_device_code'] == ['deep_gemm/deep_gemm_cpp.abi3.so']

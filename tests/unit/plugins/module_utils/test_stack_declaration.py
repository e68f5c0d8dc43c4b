# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import copy
import os

import pytest
import yaml

from ansible.module_utils.compat.version import LooseVersion

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_declaration as sd
from ansible_collections.gpuops.sglang_stack.plugins.module_utils.nvidia_smi import parse_table
from ansible_collections.gpuops.sglang_stack.plugins.module_utils.stack_bom import parse_torch_version
from ansible_collections.gpuops.sglang_stack.tests.unit.recorded import PUBLIC, host_section, read

HERE = os.path.dirname(__file__)
DEFAULTS = os.path.join(HERE, '..', '..', '..', '..', 'roles', 'stack_declaration', 'defaults', 'main.yml')
EXAMPLE = os.path.join(HERE, '..', '..', '..', '..', 'inventories', 'example', 'group_vars', 'sglang_gpu_hosts', 'stack.yml')
REAL_WHEELS = os.path.join(HERE, '..', '..', 'fixtures', 'arch_policy')


def shipped():
    """The shipped declaration, as the role assembles it (torch and torchvision as nightly specs)."""
    with open(DEFAULTS) as f:
        defaults = yaml.safe_load(f)
    return {key[len('stack_declaration_'):]: value for key, value in defaults.items()}


# The build the shipped specs took in the lock of 2025-12-31 (the pin the declaration carried before the specs).
LOCKED_NIGHTLY = {'torch': '2.11.0.dev20251231+cu130', 'torchvision': '0.26.0.dev20251231+cu130'}


@pytest.fixture
def decl():
    """The shipped declaration with its nightly specs taken as one locked build: exact versions and file names."""
    declaration = shipped()
    for package in declaration['layers'][0]['packages']:
        package.pop('version_policy')
        package['version'] = LOCKED_NIGHTLY[package['name']]
        package['filename'] = '%s-%s-cp312-cp312-manylinux_2_28_x86_64.whl' % (package['name'], package['version'])
        package['sha256'] = None
    return declaration


def test_the_shipped_declaration_takes_the_newest_nightly_of_torch_2_11_and_its_torchvision():
    declaration = shipped()
    assert sd.validate(declaration) == []
    torch, vision = declaration['layers'][0]['packages']
    assert (torch['version'], torch['version_policy'], vision['version'], vision['version_policy']) == (
        '2.11.0.dev*+cu130', 'newest', '0.26.0.dev*+cu130', 'newest')
    resolved = sd.resolve(declaration)
    assert [p['pip_requirement'] for p in resolved['packages'][:2]] == [
        'torch>=2.11.0.dev0,<2.11.0a0', 'torchvision>=0.26.0.dev0,<0.26.0a0']


def pkg(declaration, name):
    for layer in declaration['layers']:
        for item in layer['packages']:
            if item['name'] == name:
                return item
    raise KeyError(name)


def test_shipped_declaration_is_valid(decl):
    assert sd.validate(decl) == []


def test_resolve_upstream_urls(decl):
    resolved = sd.resolve(decl)
    names = [p['name'] for p in resolved['packages']]
    assert names == ['torch', 'torchvision', 'flashinfer-python', 'flashinfer-cubin', 'flashinfer-jit-cache', 'sgl-kernel', 'sglang']
    assert [p['order'] for p in resolved['packages']] == [1, 2, 3, 4, 5, 6, 7]
    assert pkg(resolved, 'torch')['index_url'] == 'https://download.pytorch.org/whl/nightly/cu130'
    assert pkg(resolved, 'flashinfer-jit-cache')['index_url'] == 'https://flashinfer.ai/whl/cu130'
    assert pkg(resolved, 'sgl-kernel')['url'] == (
        'https://github.com/sgl-project/whl/releases/download/v0.3.21/sgl_kernel-0.3.21%2Bcu130-cp312-abi3-manylinux2014_x86_64.whl')
    assert pkg(resolved, 'sglang')['pip_requirement'] == 'sglang==0.5.9'
    assert resolved['cuda']['apt_repo_base_url'] == 'https://developer.download.nvidia.com/compute/cuda'
    assert resolved['cuda_tag'] == 'cu130'
    assert resolved['disk_mb'] == 6500 + 7000 + 3500 + 1600 + 1200
    assert resolved['id'].startswith('cu130-sglang-0.5.9-') and len(resolved['id']) == len('cu130-sglang-0.5.9-') + 12


def test_resolve_on_mirror_keeps_the_upstream_layout(decl):
    resolved = sd.resolve(decl, mirror_url='http://upstream-mirror:8080/', allow_insecure_http=True, insecure_http_reason=TESTBED_REASON)
    assert pkg(resolved, 'torch')['index_url'] == 'http://upstream-mirror:8080/pytorch/whl/nightly/cu130'
    assert pkg(resolved, 'flashinfer-python')['index_url'] == 'http://upstream-mirror:8080/pypi/simple'
    assert pkg(resolved, 'sgl-kernel')['url'].startswith('http://upstream-mirror:8080/sgl-whl/releases/download/v0.3.21/')
    assert resolved['cuda']['apt_repo_base_url'] == 'http://upstream-mirror:8080/nvidia/cuda'


def test_id_depends_on_content_not_on_sources(decl):
    upstream = sd.resolve(decl)
    mirrored = sd.resolve(decl, mirror_url='https://upstream-mirror:8443')
    assert upstream['id'] == mirrored['id']
    changed = copy.deepcopy(decl)
    pkg(changed, 'sglang')['version'] = '0.5.10'
    pkg(changed, 'sglang')['filename'] = 'sglang-0.5.10-py3-none-any.whl'
    assert sd.resolve(changed)['id'] != upstream['id']


TESTBED_REASON = 'the local test mirror has no TLS; the content is still hash- and signature-checked'


# --- Plain HTTP: refused unless the site switches it on with a reason (issue: transport) ------------------------------

def test_plain_http_mirror_is_refused_naming_the_url_the_variable_and_the_fix(decl):
    with pytest.raises(sd.StackDeclarationError) as info:
        sd.resolve(decl, mirror_url='http://upstream-mirror:8080')
    assert len(info.value.problems) == 1
    problem = info.value.problems[0]
    assert problem.startswith('stack_declaration_mirror_url "http://upstream-mirror:8080" is plain HTTP')
    assert 'Fix: serve it over https://, or, where the site accepts plain HTTP, set stack_declaration_allow_insecure_http: true ' \
        'with stack_declaration_insecure_http_reason' in problem


@pytest.mark.parametrize('url', ['http://download.pytorch.org', 'HTTP://download.pytorch.org', ' http://download.pytorch.org'])
def test_plain_http_upstream_is_refused(decl, url):
    decl['upstreams']['pytorch']['url'] = url
    with pytest.raises(sd.StackDeclarationError) as info:
        sd.resolve(decl)
    assert [p.split(' is plain HTTP')[0] for p in info.value.problems] == ['stack_declaration_upstreams.pytorch.url "%s"' % url]


def test_plain_http_cuda_repository_upstream_is_refused(decl):
    decl['upstreams']['nvidia_cuda']['url'] = 'http://developer.download.nvidia.com/compute/cuda'
    with pytest.raises(sd.StackDeclarationError, match='stack_declaration_upstreams.nvidia_cuda.url "http://developer.download.nvidia.com'):
        sd.resolve(decl)


def test_the_switch_without_a_reason_is_refused(decl):
    for reason in ('', '   ', None):
        with pytest.raises(sd.StackDeclarationError) as info:
            sd.resolve(decl, mirror_url='http://upstream-mirror:8080', allow_insecure_http=True, insecure_http_reason=reason)
        assert info.value.problems == ['stack_declaration_allow_insecure_http is true but stack_declaration_insecure_http_reason is empty: '
                                       'say why plain HTTP is accepted at this site (it is shown on every run), or drop the switch']


def test_the_switch_with_a_reason_accepts_plain_http_and_says_so(decl):
    resolved = sd.resolve(decl, mirror_url='http://upstream-mirror:8080', allow_insecure_http=True, insecure_http_reason=' ' + TESTBED_REASON)
    assert resolved['insecure_http'] == {'allowed': True, 'reason': TESTBED_REASON}
    assert pkg(resolved, 'torch')['index_url'] == 'http://upstream-mirror:8080/pytorch/whl/nightly/cu130'


def test_https_needs_no_switch_and_the_switch_is_off(decl):
    assert sd.resolve(decl)['insecure_http'] == {'allowed': False, 'reason': ''}
    assert sd.resolve(decl, mirror_url='https://mirror.example:8443')['insecure_http'] == {'allowed': False, 'reason': ''}


def test_an_https_mirror_replaces_plain_http_upstreams(decl):
    """With a mirror no upstream URL is fetched from: only the mirror's scheme counts."""
    decl['upstreams']['pytorch']['url'] = 'http://download.pytorch.org'
    assert sd.resolve(decl, mirror_url='https://mirror.example')['mirror_url'] == 'https://mirror.example'


def test_the_example_inventory_is_https_and_sets_no_switch():
    with open(EXAMPLE) as f:
        example = yaml.safe_load(f)
    assert 'stack_declaration_allow_insecure_http' not in example
    assert not [u['url'] for u in example['stack_declaration_upstreams'].values() if sd.is_plain_http(u['url'])]
    assert not sd.is_plain_http(example['stack_declaration_mirror_url'])


# --- Download caps --------------------------------------------------------------------------------------------------

def test_download_cap_defaults_to_4_gib_and_a_declared_size_is_the_package_cap(decl):
    resolved = sd.resolve(decl)
    assert resolved['download_max_bytes'] == 4096 * 1024 * 1024
    assert set(p['max_bytes'] for p in resolved['packages']) == {4096 * 1024 * 1024}
    pkg(decl, 'sglang')['size'] = 4200000
    resolved = sd.resolve(decl, download_max_mb='100')
    assert pkg(resolved, 'sglang')['max_bytes'] == 4200000 and pkg(resolved, 'torch')['max_bytes'] == 100 * 1024 * 1024


@pytest.mark.parametrize('cap', [0, -1, 'lots', '1.5', None, True])
def test_a_download_cap_that_is_not_a_positive_number_is_refused(decl, cap):
    with pytest.raises(sd.StackDeclarationError, match='stack_declaration_download_max_mb .* must be a positive whole number'):
        sd.resolve(decl, download_max_mb=cap)


@pytest.mark.parametrize('size, message', [(-5, 'must be the wheel'), ('12', 'must be the wheel'), (5 * 1024 * 1024 * 1024, 'above')])
def test_a_declared_size_that_is_not_bytes_within_the_cap_is_refused(decl, size, message):
    pkg(decl, 'sglang')['size'] = size
    with pytest.raises(sd.StackDeclarationError, match='layer sglang, package sglang: size .*' + message):
        sd.resolve(decl)


def problems_after(decl, mutate):
    changed = copy.deepcopy(decl)
    mutate(changed)
    return sd.validate(changed)


def test_cuda_13_1_refused_with_reason(decl):
    def to_13_1(d):
        d['cuda'].update(version='13.1', package='cuda-toolkit-13-1', package_version='13.1.0-1')
    problems = problems_after(decl, to_13_1)
    assert any('cuda.version 13.1 is refused' in p and '590.44.01' in p and 'cu130' in p for p in problems)


def test_cuda_override_needs_a_reason_then_tags_must_follow(decl):
    def to_13_1_with_reason(d):
        d['cuda'].update(version='13.1', package='cuda-toolkit-13-1', package_version='13.1.0-1')
        d['cuda_version_override_reason'] = 'lab host with a 590 driver'
    problems = problems_after(decl, to_13_1_with_reason)
    assert not any('is refused' in p for p in problems)
    # The cu130 wheels no longer match the toolkit: every tagged package is named.
    assert any('torch' in p and '+cu131' in p for p in problems)
    assert any('sgl-kernel' in p and '+cu131' in p for p in problems)


def test_driver_metapackage_refused(decl):
    problems = problems_after(decl, lambda d: d['cuda'].update(package='cuda-13-0'))
    assert any('cuda.package "cuda-13-0"' in p and 'driver' in p for p in problems)


def test_layer_order_enforced(decl):
    def swap(d):
        d['layers'][1], d['layers'][2] = d['layers'][2], d['layers'][1]
    problems = problems_after(decl, swap)
    assert problems == ['layers must be, in this order, torch -> flashinfer -> sgl_kernel -> sglang; '
                        'got torch -> sgl_kernel -> flashinfer -> sglang']


def test_version_ranges_refused(decl):
    problems = problems_after(decl, lambda d: pkg(d, 'sglang').update(version='>=0.5.9'))
    assert problems == ['layer sglang, package sglang: version ">=0.5.9" is not an exact version or a nightly spec (X.Y.Z.dev*[+tag] '
                        'with version_policy: newest); no ranges or operators: pin what was reviewed']


def nightly(d, torch='2.11.0.dev*+cu130', vision='0.26.0.dev*+cu130'):
    for name, version in (('torch', torch), ('torchvision', vision)):
        pkg(d, name)['version'] = version
        if '*' in version:
            pkg(d, name)['version_policy'] = 'newest'
            pkg(d, name).pop('filename')


def test_a_nightly_spec_with_its_torchvision_is_valid_and_resolved_as_a_range(decl):
    assert problems_after(decl, nightly) == []
    changed = copy.deepcopy(decl)
    nightly(changed)
    resolved = sd.resolve(changed)
    assert [p['pip_requirement'] for p in resolved['packages'][:2]] == [
        'torch>=2.11.0.dev0,<2.11.0a0', 'torchvision>=0.26.0.dev0,<0.26.0a0']


@pytest.mark.parametrize('mutate, expected', [
    (lambda d: nightly(d, vision='0.26.0.dev20251231+cu130'), 'declare both as nightly specs with version_policy: newest'),
    (lambda d: nightly(d, vision='0.25.0.dev*+cu130'),
     'torchvision 0.25.0.dev*+cu130 does not follow torch 2.11.0.dev*+cu130: that torch ships with torchvision 0.26.0.dev*'),
    (lambda d: nightly(d, vision='0.26.0.dev*+cu128'), 'version "0.26.0.dev*+cu128" must carry the CUDA tag +cu130'),
    (lambda d: (nightly(d), pkg(d, 'torch').pop('version_policy')), 'say which build the lock takes with version_policy: newest'),
    (lambda d: (nightly(d), pkg(d, 'torch').update(filename='torch-2.11.0.dev20251231+cu130-cp312-cp312-manylinux_2_28_x86_64.whl')),
     'leave filename and sha256 out'),
    (lambda d: pkg(d, 'sglang').update(version='0.5.*'), 'is not an exact version or a nightly spec'),
    (lambda d: pkg(d, 'sglang').update(version_policy='newest'), 'version_policy "newest" is for a nightly spec'),
])
def test_nightly_spec_refusals(decl, mutate, expected):
    problems = problems_after(decl, mutate)
    assert any(expected in p for p in problems), problems


def test_flashinfer_trio_lock_step(decl):
    problems = problems_after(decl, lambda d: pkg(d, 'flashinfer-cubin').update(version='0.6.3'))
    assert len(problems) == 1
    assert 'must share one version' in problems[0] and 'flashinfer-cubin 0.6.3' in problems[0]


def test_flashinfer_trio_incomplete(decl):
    def drop_cubin(d):
        d['layers'][1]['packages'] = [p for p in d['layers'][1]['packages'] if p['name'] != 'flashinfer-cubin']
    problems = problems_after(decl, drop_cubin)
    assert any('flashinfer-python, flashinfer-cubin, flashinfer-jit-cache together' in p for p in problems)


def test_sgl_kernel_sdist_refused(decl):
    problems = problems_after(decl, lambda d: pkg(d, 'sgl-kernel').update(file_path='releases/download/v0.3.21/sgl_kernel-0.3.21.tar.gz'))
    assert any('is a source distribution' in p for p in problems)


def test_sgl_kernel_from_index_refused(decl):
    problems = problems_after(decl, lambda d: pkg(d, 'sgl-kernel').update(source='index', index_path='simple', upstream='pypi'))
    assert any('sgl-kernel must come from a prebuilt wheel URL' in p for p in problems)


def test_sgl_kernel_default_cuda12_wheel_refused(decl):
    def pypi_wheel(d):
        pkg(d, 'sgl-kernel').update(version='0.3.21', cuda_tagged=False,
                                    file_path='releases/download/v0.3.21/sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl')
    problems = problems_after(decl, pypi_wheel)
    assert any('is not the +cu130 build' in p for p in problems)


def test_torch_tag_must_match_toolkit(decl):
    problems = problems_after(decl, lambda d: pkg(d, 'torch').update(version='2.11.0.dev20251231+cu128'))
    assert any('torch' in p and 'must carry the CUDA tag +cu130' in p for p in problems)


def test_sha256_is_pinned_or_left_to_the_lock_and_the_first_fetch_policy_is_gone(decl):
    # No declared sha256: the lock step hashes the file on the controller and the reviewed lock pins it.
    assert problems_after(decl, lambda d: pkg(d, 'sglang').update(sha256=None)) == []
    problems = problems_after(decl, lambda d: pkg(d, 'torch').update(sha256_policy='record_on_first_fetch'))
    assert any('torch' in p and 'sha256_policy is gone' in p and 'playbooks/lock.yml' in p for p in problems)
    problems = problems_after(decl, lambda d: pkg(d, 'sglang').update(sha256='ABC'))
    assert any('is not 64 lower-case hex digits' in p for p in problems)


def test_resolve_raises_with_every_problem(decl):
    broken = copy.deepcopy(decl)
    pkg(broken, 'sglang')['version'] = '0.5.*'
    pkg(broken, 'torch')['upstream'] = 'nowhere'
    with pytest.raises(sd.StackDeclarationError) as err:
        sd.resolve(broken)
    assert len(err.value.problems) == 2
    assert 'upstream "nowhere" is not declared' in str(err.value)


def test_not_a_mapping():
    assert sd.validate(['torch']) == ['the declaration must be a mapping, got list']


def test_cuda_tag():
    assert sd.cuda_tag('13.0') == 'cu130'
    assert sd.cuda_tag('12.8') == 'cu128'


def test_sglang_requirements_exclude_the_layers(decl):
    requirements = decl['layers'][3]['requirements']
    names = set(sd.requirement_name(r) for r in requirements)
    assert {'torch', 'flashinfer-python', 'flashinfer-cubin', 'sgl-kernel', 'cuda-python', 'torchvision'}.isdisjoint(names)
    assert 'transformers' in names and 'xgrammar' in names


def test_unguarded_sglang_requirements_refused(decl):
    """Without the guard, sglang's own pins go back in and would replace the torch and flashinfer layers."""
    def unguarded(d):
        d['layers'][3]['requirements'] = d['layers'][3]['requirements'] + ['torch==2.9.1', 'flashinfer_python==0.6.3']
    problems = problems_after(decl, unguarded)
    assert problems == [
        'layer sglang: requirement "torch==2.9.1" names the declared package torch; it would replace that layer. '
        'Drop it: the layer provides torch.',
        'layer sglang: requirement "flashinfer_python==0.6.3" names the declared package flashinfer-python; it would replace '
        'that layer. Drop it: the layer provides flashinfer-python.',
    ]


def test_constraints_pin_every_declared_package(decl):
    resolved = sd.resolve(decl)
    assert resolved['constraints'] == [
        'torch==2.11.0.dev20251231+cu130', 'torchvision==0.26.0.dev20251231+cu130', 'flashinfer-python==0.6.4', 'flashinfer-cubin==0.6.4',
        'flashinfer-jit-cache==0.6.4+cu130', 'sgl-kernel==0.3.21+cu130', 'sglang==0.5.9']
    assert pkg(resolved, 'torch')['dependencies'] == 'resolve'
    assert pkg(resolved, 'sgl-kernel')['dependencies'] == 'none'


def test_requirement_name():
    assert sd.requirement_name('av; sys_platform == "linux"') == 'av'
    assert sd.requirement_name('Flashinfer_Python==0.6.3') == 'flashinfer-python'
    assert sd.requirement_name('apache-tvm-ffi<0.2,>=0.1.5') == 'apache-tvm-ffi'


def test_dependencies_mode_checked(decl):
    problems = problems_after(decl, lambda d: pkg(d, 'torch').update(dependencies='all'))
    assert problems == ['layer torch, package torch: dependencies "all" must be one of none, resolve']


def test_python_3_11_refused_for_the_cp312_wheels(decl):
    problems = problems_after(decl, lambda d: d.update(python={'version': '3.11', 'tag': 'cp311'}))
    assert problems == [
        'torch: torch-2.11.0.dev20251231+cu130-cp312-cp312-manylinux_2_28_x86_64.whl is built for Python 3.12 only, '
        'the stack interpreter is 3.11',
        'torchvision: torchvision-0.26.0.dev20251231+cu130-cp312-cp312-manylinux_2_28_x86_64.whl is built for Python 3.12 only, '
        'the stack interpreter is 3.11',
        'sgl-kernel: sgl_kernel-0.3.21+cu130-cp312-abi3-manylinux2014_x86_64.whl needs Python >= 3.12, the stack interpreter is 3.11',
    ]


def test_abi3_wheel_accepted_on_newer_python(decl):
    def to_313(d):
        d['python'] = {'version': '3.13', 'tag': 'cp313'}
        pkg(d, 'torch')['filename'] = 'torch-2.11.0.dev20251231+cu130-cp313-cp313-manylinux_2_28_x86_64.whl'
        pkg(d, 'torchvision')['filename'] = 'torchvision-0.26.0.dev20251231+cu130-cp313-cp313-manylinux_2_28_x86_64.whl'
    assert problems_after(decl, to_313) == []


def test_python_tag_must_match_version(decl):
    problems = problems_after(decl, lambda d: d['python'].update(tag='cp311'))
    assert problems == ['python.tag "cp311" does not match python.version 3.12 (expected cp312)']


def test_resolving_dependencies_needs_an_index(decl):
    problems = problems_after(decl, lambda d: pkg(d, 'sgl-kernel').update(dependencies='resolve'))
    assert problems == ['layer sgl_kernel, package sgl-kernel: dependencies "resolve" needs source "index" '
                        '(the requirements are resolved from that index)']


# --- the wheel's own CUDA version: torch 2.11.0 from PyPI ----------------------------------------

def real_torch_version_py():
    """torch/version.py of the real torch-2.11.0-cp312 wheel from PyPI (no +cu130 in the wheel's version)."""
    with open(os.path.join(REAL_WHEELS, 'torch-2.11.0-version.py')) as handle:
        return parse_torch_version(handle.read())


def real_torchvision_requires_torch():
    """The torch pin in the real torchvision 0.26.0 wheel's METADATA."""
    with open(os.path.join(REAL_WHEELS, 'torchvision-0.26.0-METADATA')) as handle:
        lines = handle.read().splitlines()
    version = [line.split(':', 1)[1].strip() for line in lines if line.startswith('Version:')][0]
    pins = [line for line in lines if line.startswith('Requires-Dist: torch ')]
    return version, pins[0].split('==', 1)[1].rstrip(')')


def to_pypi_torch(d, torch_cuda='13.0', vision_cuda='13.0'):
    """The test bed's torch: PyPI's stable 2.11.0 and torchvision 0.26.0, whose versions carry no local tag."""
    pkg(d, 'torch').update(version='2.11.0', upstream='pypi', index_path='simple', sha256='0' * 64,
                           filename='torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl')
    pkg(d, 'torchvision').update(version='0.26.0', upstream='pypi', index_path='simple', sha256='1' * 64,
                                 filename='torchvision-0.26.0-cp312-cp312-manylinux_2_28_x86_64.whl')
    for name, cuda in (('torch', torch_cuda), ('torchvision', vision_cuda)):
        if cuda is None:
            pkg(d, name).pop('cuda', None)
        else:
            pkg(d, name)['cuda'] = cuda


def test_real_pypi_torch_is_a_cu130_build_by_its_own_version_py():
    real = real_torch_version_py()
    assert real == {'version': '2.11.0+cu130', 'cuda': '13.0'}


def test_pypi_torch_accepted_when_it_says_its_cuda(decl):
    real = real_torch_version_py()
    assert problems_after(decl, lambda d: to_pypi_torch(d, torch_cuda=real['cuda'], vision_cuda=real['cuda'])) == []


def test_pypi_torch_without_cuda_refused(decl):
    problems = problems_after(decl, lambda d: to_pypi_torch(d, torch_cuda=None, vision_cuda=None))
    assert problems == [
        'layer torch, package torch: version "2.11.0" must carry the CUDA tag +cu130 of the declared toolkit (or, when the '
        'version has no local tag, say cuda: "<the toolkit version>" as the wheel\'s own CUDA version reads)',
        'layer torch, package torchvision: version "0.26.0" must carry the CUDA tag +cu130 of the declared toolkit (or, when the '
        'version has no local tag, say cuda: "<the toolkit version>" as the wheel\'s own CUDA version reads)']

    def untagged(d):
        to_pypi_torch(d, torch_cuda=None, vision_cuda=None)
        pkg(d, 'torch').pop('cuda_tagged')
        pkg(d, 'torchvision').pop('cuda_tagged')
    problems = problems_after(decl, untagged)
    assert problems[0].startswith('torch 2.11.0 says nothing of its CUDA: its version carries no +cu130 tag and it declares no cuda.')


def test_torch_cuda_of_another_toolkit_refused(decl):
    problems = problems_after(decl, lambda d: to_pypi_torch(d, torch_cuda='12.8', vision_cuda='12.8'))
    assert 'torch 2.11.0 is a CUDA 12.8 build (+cu128), the declared toolkit is 13.0 (+cu130)' in problems


def test_cuda_contradicting_the_tag_refused(decl):
    problems = problems_after(decl, lambda d: pkg(d, 'torch').update(cuda='12.8'))
    assert problems == ['layer torch, package torch: cuda "12.8" contradicts the version\'s tag +cu130']
    problems = problems_after(decl, lambda d: pkg(d, 'torch').update(cuda='13'))
    assert problems[0].startswith('layer torch, package torch: cuda "13" must be MAJOR.MINOR')


# --- torchvision in lock-step with torch ---------------------------------------------------------

def test_torchvision_for():
    version, pin = real_torchvision_requires_torch()
    assert (version, pin) == ('0.26.0', '2.11.0')
    assert sd.torchvision_for(pin) == version
    assert sd.torchvision_for('2.11.0.dev20251231+cu130') == '0.26.0.dev20251231'
    assert sd.torchvision_for('2.9.1') == '0.24.1'
    assert sd.torchvision_for('3.0.0') is None


def test_shipped_torchvision_is_the_nightly_of_the_torch_date(decl):
    torch, vision = pkg(decl, 'torch'), pkg(decl, 'torchvision')
    assert vision['version'] == '0.26.0' + torch['version'][len('2.11.0'):]
    assert vision['filename'] == torch['filename'].replace('torch-' + torch['version'], 'torchvision-' + vision['version'])
    assert [p['name'] for p in decl['layers'][0]['packages']] == ['torch', 'torchvision']
    assert (vision['sha256'], 'sha256_policy' in vision, vision['index_path']) == (None, False, torch['index_path'])


@pytest.mark.parametrize('version, expected', [
    ('0.25.0.dev20251231+cu130', 'torchvision 0.25.0.dev20251231+cu130 is not the build of torch 2.11.0.dev20251231+cu130: '
                                 'that torch ships with torchvision 0.26.0.dev20251231'),
    ('0.26.0.dev20251230+cu130', 'torchvision 0.26.0.dev20251230+cu130 is not the build of torch 2.11.0.dev20251231+cu130'),
    ('0.26.0+cu130', 'torchvision 0.26.0+cu130 is not the build of torch 2.11.0.dev20251231+cu130'),
])
def test_torchvision_of_another_torch_refused(decl, version, expected):
    problems = problems_after(decl, lambda d: pkg(d, 'torchvision').update(version=version))
    assert len(problems) == 1 and problems[0].startswith(expected)


def test_torchvision_of_another_cuda_refused(decl):
    def cpu(d):
        pkg(d, 'torchvision').update(version='0.26.0.dev20251231+cpu', cuda_tagged=False)
    problems = problems_after(decl, cpu)
    assert problems == ['torchvision 0.26.0.dev20251231+cpu and torch 2.11.0.dev20251231+cu130 must carry the same local tag '
                        '(+cu130): both come from one build of one index']
    problems = problems_after(decl, lambda d: to_pypi_torch(d, torch_cuda='13.0', vision_cuda='12.9'))
    assert any('torchvision 0.26.0 is a CUDA 12.9 build, torch 2.11.0 a CUDA 13.0 build' in p for p in problems)


def test_torchvision_required_in_the_torch_layer(decl):
    def drop(d):
        d['layers'][0]['packages'] = [p for p in d['layers'][0]['packages'] if p['name'] != 'torchvision']
    problems = problems_after(decl, drop)
    assert problems == ['layer torch must declare torchvision beside torch: python -m sglang.launch_server imports it at module '
                        'level for every model (srt/multimodal/internvl_utils.py: import torchvision.transforms)']

    def move(d):
        vision = pkg(d, 'torchvision')
        drop(d)
        d['layers'][3]['packages'].append(vision)
    assert problems_after(decl, move) == ['torchvision must be in layer torch, beside the torch it is built for']


# --- verify policies -----------------------------------------------------------------------------

def test_every_shipped_package_has_a_policy_with_a_reason(decl):
    for layer in decl['layers']:
        for item in layer['packages']:
            assert item['verify']['reason'].strip(), item['name']
    assert pkg(decl, 'sgl-kernel')['verify']['require'] == ['sgl_kernel/sm100/common_ops.abi3.so']
    assert pkg(decl, 'torch')['verify']['require'] == ['torch/lib/libtorch_cuda.so']
    assert not pkg(decl, 'flashinfer-cubin')['verify'].get('require')


def test_policy_missing_refused(decl):
    problems = problems_after(decl, lambda d: pkg(d, 'sglang').pop('verify'))
    assert len(problems) == 1 and problems[0].startswith('layer sglang, package sglang: "verify" is missing')


def test_policy_without_reason_refused(decl):
    problems = problems_after(decl, lambda d: pkg(d, 'flashinfer-cubin')['verify'].update(reason='  '))
    assert problems == ['layer flashinfer, package flashinfer-cubin: verify needs a "reason": why these files, and only these, '
                        'must carry code for the GPU']


def test_policy_unknown_key_refused(decl):
    problems = problems_after(decl, lambda d: pkg(d, 'sgl-kernel')['verify'].update(required=['x.so'], dir='sgl_kernel'))
    assert problems == ['layer sgl_kernel, package sgl-kernel: verify has unknown key(s) dir, required (allowed: reason, require, report)']


def test_policy_globs_checked(decl):
    problems = problems_after(decl, lambda d: pkg(d, 'sgl-kernel')['verify'].update(report=['../bin/x.so', '/abs.so']))
    assert problems == ['layer sgl_kernel, package sgl-kernel: verify.report: glob "../bin/x.so" must not leave site-packages ("..")',
                        'layer sgl_kernel, package sgl-kernel: verify.report: glob "/abs.so" must be relative to site-packages, '
                        'with "/" separators']
    problems = problems_after(decl, lambda d: pkg(d, 'torch')['verify'].update(require='torch/lib/libtorch_cuda.so'))
    assert problems == ['layer torch, package torch: verify.require must be a list of globs relative to site-packages']


@pytest.mark.parametrize('name', ['torch', 'flashinfer-jit-cache', 'sgl-kernel'])
def test_policy_of_loaded_code_must_require_a_file(decl, name):
    problems = problems_after(decl, lambda d: pkg(d, name)['verify'].update(require=[]))
    assert len(problems) == 1 and 'verify.require is empty' in problems[0] and name in problems[0]


def test_policy_not_in_the_digest(decl):
    changed = copy.deepcopy(decl)
    pkg(changed, 'flashinfer-cubin')['verify']['reason'] = 'another wording'
    assert sd.resolve(changed)['id'] == sd.resolve(decl)['id']


def test_example_inventory_declares_the_shipped_stack():
    with open(EXAMPLE) as handle:
        example = yaml.safe_load(handle)
    assert example["stack_declaration_layers"] == shipped()["layers"]


# --- Driver floor from the declared toolkit release (issue 16 item 4) and the CUDA apt key (issue 18) ---

def driver_gate(driver, cuda_driver, resolved):
    """The two preflight driver gates (roles/preflight/tasks/main.yml): ``is version(minimum, '>=')``.

    Ansible's ``version`` test without ``version_type`` compares with ansible.module_utils.compat.version's
    LooseVersion (ansible/plugins/test/core.py); ansible.plugins itself is not importable in the module_utils
    context of ``ansible-test units``. tests/unit/test_gpu_standin.py runs the same values through
    Ansible's own test.
    """
    return (LooseVersion(driver) >= LooseVersion(resolved['cuda']['driver_minimum'])
            and (cuda_driver is None or LooseVersion(cuda_driver) >= LooseVersion(resolved['cuda']['version'])))


def test_driver_floor_is_the_table_entry_of_the_declared_release(decl):
    resolved = sd.resolve(decl)
    assert decl['cuda']['package_version'] == '13.0.2-1'
    assert resolved['cuda']['driver_minimum'] == '580.95.05'
    assert 'Release Notes' in resolved['cuda']['driver_minimum_from'] and '13.0.2-1' in resolved['cuda']['driver_minimum_from']
    ga = copy.deepcopy(decl)
    ga['cuda']['package_version'] = '13.0.0-1'
    assert sd.resolve(ga)['cuda']['driver_minimum'] == '580.65.06'


def test_recorded_h200_passes_the_driver_gates(decl):
    # Our GPU test host's recorded table: driver 580.159.04, CUDA 13.0.
    table = parse_table(host_section('nvidia-smi'))
    assert (table['driver_version'], table['cuda_version']) == ('580.159.04', '13.0')
    assert driver_gate(table['driver_version'], table['cuda_version'], sd.resolve(decl))


def test_recorded_rtx_pro_6000_driver_is_exactly_the_floor(decl):
    # The public RTX PRO 6000 Blackwell table (the site's GPU, driver 580.95.05): the boundary of ">=".
    table = parse_table(read(PUBLIC, 'rtx-pro-6000-580.95.05.txt'))
    assert table['driver_version'] == sd.resolve(decl)['cuda']['driver_minimum']
    assert driver_gate(table['driver_version'], table['cuda_version'], sd.resolve(decl))


def test_590_branch_driver_reporting_cuda_13_1_passes(decl):
    real = read(PUBLIC, 'rtx-pro-6000-580.95.05.txt')
    # The real RTX PRO 6000 table with the header a 590 driver prints (13.1's minimum driver, 590.44.01).
    header = '| NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |'
    assert header in real
    table = parse_table(real.replace(header, header.replace('580.95.05', '590.44.01').replace('13.0 ', '13.1 ')))
    assert (table['driver_version'], table['cuda_version']) == ('590.44.01', '13.1')
    assert driver_gate(table['driver_version'], table['cuda_version'], sd.resolve(decl))


@pytest.mark.parametrize('driver, cuda_driver', [('580.82.07', '13.0'), ('580.65.06', '13.0'), ('575.57.08', '12.9'), ('590.44.01', '12.9')])
def test_drivers_below_the_floor_or_cuda_fail(decl, driver, cuda_driver):
    assert not driver_gate(driver, cuda_driver, sd.resolve(decl))


def test_release_missing_from_the_table_refused(decl):
    problems = problems_after(decl, lambda d: d['cuda'].update(package_version='13.0.3-1'))
    assert any('driver_minimums has no entry for cuda-toolkit-13-0=13.0.3-1' in p and '13.0.2-1 -> 580.95.05' in p for p in problems)


def test_explicit_driver_minimum_may_raise_never_lower_the_floor(decl):
    lower = problems_after(decl, lambda d: d['cuda'].update(driver_minimum='580.65.06'))
    assert any('cuda.driver_minimum 580.65.06 is below 580.95.05' in p for p in lower)
    higher = copy.deepcopy(decl)
    higher['cuda']['driver_minimum'] = '590.44.01'
    resolved = sd.resolve(higher)
    assert resolved['cuda']['driver_minimum'] == '590.44.01' and 'above the table' in resolved['cuda']['driver_minimum_from']


def test_declaration_without_table_keeps_its_explicit_minimum(decl):
    # The form inventories that override stack_declaration_cuda wholesale still use (no table).
    old = copy.deepcopy(decl)
    del old['cuda']['driver_minimums']
    old['cuda']['driver_minimum'] = '580.65.06'
    old['cuda']['package_version'] = '13.0.3-1'
    assert sd.validate(old) == []
    assert sd.resolve(old)['cuda']['driver_minimum'] == '580.65.06'
    del old['cuda']['driver_minimum']
    assert any('driver_minimums (toolkit package version -> minimum driver) is missing' in p for p in sd.validate(old))


def test_malformed_driver_versions_refused(decl):
    problems = problems_after(decl, lambda d: d['cuda']['driver_minimums'].update({'13.0.2-1': '>=580.95'}))
    assert any('"13.0.2-1"] ">=580.95" is not a driver version' in p for p in problems)


def test_shipped_apt_signing_keys(decl):
    keys = sd.resolve(decl)['cuda']['apt_signing_keys']
    for distro in ('debian12', 'ubuntu2204', 'ubuntu2404'):
        assert keys[distro] == {'key_file': '3bf863cc.pub', 'fingerprint': 'EB693B3035CD5710E231E123A4B469963BF863CC'}
    # NVIDIA's key id is the fingerprint's tail: 3bf863cc, and 8793F200 for the Debian 13 repository.
    assert keys['debian13']['fingerprint'].endswith(keys['debian13']['key_file'].split('.')[0].upper())
    assert keys['debian12']['fingerprint'].endswith(keys['debian12']['key_file'].split('.')[0].upper())


def test_apt_signing_keys_normalised_and_checked(decl):
    spaced = copy.deepcopy(decl)
    spaced['cuda']['apt_signing_keys']['debian12']['fingerprint'] = 'eb69 3b30 35cd 5710 e231  e123 a4b4 6996 3bf8 63cc'
    assert sd.resolve(spaced)['cuda']['apt_signing_keys']['debian12']['fingerprint'] == 'EB693B3035CD5710E231E123A4B469963BF863CC'
    problems = problems_after(decl, lambda d: d['cuda']['apt_signing_keys']['debian12'].update(fingerprint='3BF863CC', key_file='../k.pub'))
    assert any('apt_signing_keys.debian12.fingerprint "3BF863CC" is not an OpenPGP fingerprint' in p for p in problems)
    assert any('apt_signing_keys.debian12.key_file "../k.pub"' in p for p in problems)


def test_apt_signing_keys_not_in_the_digest(decl):
    changed = copy.deepcopy(decl)
    changed['cuda']['apt_signing_keys']['debian12']['fingerprint'] = 'B84D4D5BF41443954D0DBF397CD91BC4DAF573C9'
    changed['cuda']['driver_minimums']['13.0.1-1'] = '580.82.07'
    assert sd.resolve(changed)['id'] == sd.resolve(decl)['id']


# --- Names and requirement strings that pip or a path would obey (issue 18 item 5) -------------------------
#
# Before: a package named --extra-index-url=... went into the constraints file as "--extra-index-url=...==0.5.9",
# a requirement "foo --index-url http://..." passed (its name parses as foo), and the stack name (a directory
# name) was never checked.

EVIL_INDEX = 'http://evil.invalid/simple'


@pytest.mark.parametrize('name', ['--extra-index-url=' + EVIL_INDEX, '-e', 'sglang extra', 'a/b', '_x', 'x_', 'torch\n--pre'])
def test_package_name_not_pep508_refused(decl, name):
    extra = copy.deepcopy(pkg(decl, 'sglang'))
    extra['name'] = name
    decl['layers'][-1]['packages'].append(extra)
    problems = sd.validate(decl)
    assert any(p.startswith('layer sglang, package %s: name %s is not a PEP 508 package name' % (repr(name), repr(name)))
               for p in problems), problems


@pytest.mark.parametrize('name', ['Flashinfer_Python', 'a', 'sgl-kernel', 'zope.interface', 'A1'])
def test_pep508_package_names_accepted(name):
    assert sd.name_problem('name', name) is None


@pytest.mark.parametrize('requirement', ['foo --index-url ' + EVIL_INDEX, 'foo\t--extra-index-url=' + EVIL_INDEX,
                                         '--extra-index-url=' + EVIL_INDEX, ' -e git+https://evil.invalid/x',
                                         'foo\n--trusted-host evil.invalid', 'aiohttp -r /etc/shadow'])
def test_requirement_with_pip_options_refused(decl, requirement):
    decl['layers'][-1]['requirements'].append(requirement)
    problems = sd.validate(decl)
    assert any(p.startswith('layer sglang: requirement %s' % repr(requirement)) and 'pip option' in p for p in problems), problems


def test_shipped_requirements_have_no_pip_options(decl):
    # The markers of the shipped list (av; sys_platform == "linux" and ...) hold spaces, never an option.
    assert [r for layer in decl['layers'] for r in layer.get('requirements') or [] if sd.requirement_option(r)] == []


@pytest.mark.parametrize('name', ['../../etc', 'a/b', '-rf', '..', 'cu130 sglang', '', 'x' * 101, '.hidden'])
def test_bad_stack_name_refused(decl, name):
    decl['name'] = name
    problems = sd.validate(decl)
    assert any(p.startswith('stack name %s' % repr(name)) for p in problems), problems


def test_shipped_stack_name_accepted(decl):
    assert sd.validate(decl) == [] and decl['name'] == 'cu130-sglang-0.5.9'


# --- Credentials in URLs: refused, and never printed (issue 18 item 1) ---------------------------------------------

@pytest.mark.parametrize('where', ['mirror', 'upstream'])
@pytest.mark.parametrize('userinfo', ['ops:s3cr3t-pw', 'token-abc123', 'ops:'])
def test_a_url_with_credentials_is_refused_without_showing_them(decl, where, userinfo):
    url = 'https://%s@mirror.example.internal/simple' % userinfo
    kwargs = {}
    if where == 'mirror':
        kwargs['mirror_url'] = url
    else:
        decl['upstreams']['pytorch']['url'] = url
    with pytest.raises(sd.StackDeclarationError) as info:
        sd.resolve(decl, **kwargs)
    text = ' '.join(info.value.problems)
    assert 'carries credentials' in text and 'https://***@mirror.example.internal/simple' in text
    assert userinfo.split(':')[0] not in text.replace('***', '')
    assert '/etc/apt/auth.conf.d/' in text and '.netrc' in text


def test_redaction_of_plain_http_messages_too(decl):
    with pytest.raises(sd.StackDeclarationError) as info:
        sd.resolve(decl, mirror_url='http://ops:pw-9d1@upstream-mirror:8080')
    assert 'pw-9d1' not in repr(info.value.problems)
    assert sd.redact_url('https://a:b@h/x') == 'https://***@h/x' and sd.redact_url('https://h/x@y') == 'https://h/x@y'


# The CUDA repository of a host: one map (DEFAULT_APT_REPO_DISTROS, or the declaration's), one URL rule.
@pytest.mark.parametrize('facts, distro', [
    (('Debian', '12.8', '12'), 'debian12'),
    (('Debian', '13.1', '13'), 'debian13'),
    (('Ubuntu', '22.04', '22'), 'ubuntu2204'),
    (('Ubuntu', '24.04', '24'), 'ubuntu2404'),
])
def test_apt_repo_for_host_upstream(decl, facts, distro):
    cuda = sd.resolve(decl)['cuda']
    repo = sd.apt_repo_for_host(cuda, *facts)
    assert repo['distro'] == distro
    assert repo['url'] == 'https://developer.download.nvidia.com/compute/cuda/repos/%s/x86_64/' % distro
    assert repo['upstream_url'] == repo['url']
    assert repo['key_url'] == repo['url'] + decl['cuda']['apt_signing_keys'][distro]['key_file']
    assert repo['fingerprint'] == decl['cuda']['apt_signing_keys'][distro]['fingerprint']


def test_apt_repo_on_the_mirror_keeps_the_upstream_url(decl):
    cuda = sd.resolve(decl, mirror_url='http://upstream-mirror:8080/', allow_insecure_http=True,
                      insecure_http_reason=TESTBED_REASON)['cuda']
    repo = sd.apt_repo_for_host(cuda, 'Debian', '12.8', '12')
    assert repo['url'] == 'http://upstream-mirror:8080/nvidia/cuda/repos/debian12/x86_64/'
    assert repo['key_url'] == 'http://upstream-mirror:8080/nvidia/cuda/repos/debian12/x86_64/3bf863cc.pub'
    assert repo['upstream_url'] == 'https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/'
    assert repo['os'] == 'Debian-12'


def test_apt_repo_for_an_unlisted_os_names_it_and_the_choices(decl):
    cuda = sd.resolve(decl)['cuda']
    with pytest.raises(ValueError) as err:
        sd.apt_repo_for_host(cuda, 'Ubuntu', '24.10', '24')
    assert 'Ubuntu-24.10' in str(err.value) and 'Ubuntu-24.04' in str(err.value) and 'Debian-12' in str(err.value)


def test_declared_distro_map_replaces_the_default(decl):
    decl['cuda']['apt_repo_distros'] = {'Rocky-9': 'rhel9'}
    cuda = sd.resolve(decl)['cuda']
    repo = sd.apt_repo_for_host(cuda, 'Rocky', '9.4', '9')
    assert repo['url'].endswith('/repos/rhel9/x86_64/') and repo['key_url'] == '' and repo['fingerprint'] == ''
    with pytest.raises(ValueError):
        sd.apt_repo_for_host(cuda, 'Debian', '12.8', '12')


@pytest.mark.parametrize('distros', [{}, ['debian12'], {'Debian-12': '../x'}, {'Debian-12': 'Debian12'}])
def test_malformed_distro_map_is_refused(decl, distros):
    decl['cuda']['apt_repo_distros'] = distros
    assert any('cuda.apt_repo_distros' in p for p in sd.validate(decl))

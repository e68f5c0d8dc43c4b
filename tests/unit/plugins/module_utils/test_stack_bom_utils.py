# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""stack_bom: a fake site-packages in tmp_path, and one rebuilt from the real pip list of the H200 host."""

from __future__ import annotations

import os

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_bom

REAL = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'real', 'h200-ubuntu2404-cuda13')
# torch/version.py as torch 2.11.0+cu130 ships it (values from the real host's torch.txt).
TORCH_VERSION_PY = (
    "from typing import Optional\n\n"
    "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n"
    "__version__ = '2.11.0+cu130'\n"
    "debug = False\n"
    "cuda: Optional[str] = '13.0'\n"
    "git_version = '70d99e998b4955e0049d13a98d77ae1b14db1f45'\n"
    "hip: Optional[str] = None\n"
    "xpu: Optional[str] = None\n"
)


def real_pip_list():
    """(name, version) rows of the `pip list` table in the real fixture."""
    rows = []
    with open(os.path.join(REAL, 'pip-list.txt')) as handle:
        lines = handle.read().splitlines()
    for line in lines[2:]:
        if line.startswith('Name:') or not line.strip():
            break
        name, version = line.split()
        rows.append((name, version))
    return rows


def make_dist(site, name, version, dirname=None):
    path = site / (dirname or '%s-%s.dist-info' % (name.replace('-', '_'), version))
    path.mkdir()
    (path / 'METADATA').write_text('Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: x\n\nName: not-this\n' % (name, version))


def make_site(tmp_path, dists, torch_version_py=None):
    site = tmp_path / 'site-packages'
    site.mkdir()
    for name, version in dists:
        make_dist(site, name, version)
    if torch_version_py is not None:
        (site / 'torch').mkdir()
        (site / 'torch' / 'version.py').write_text(torch_version_py)
    return site


def test_normalize_name():
    assert stack_bom.normalize_name('Flashinfer_Python') == 'flashinfer-python'
    assert stack_bom.normalize_name('typing.inspect') == 'typing-inspect'
    assert stack_bom.normalize_name('sgl-kernel') == 'sgl-kernel'


def test_parse_torch_version():
    assert stack_bom.parse_torch_version(TORCH_VERSION_PY) == {'version': '2.11.0+cu130', 'cuda': '13.0'}
    assert stack_bom.parse_torch_version("__version__ = '2.9.1+cpu'\ncuda: Optional[str] = None\n") == {'version': '2.9.1+cpu', 'cuda': None}


def test_cuda_of_tag():
    assert stack_bom.cuda_of_tag('2.11.0.dev20251231+cu130') == '13.0'
    assert stack_bom.cuda_of_tag('2.9.1+cu128') == '12.8'
    assert stack_bom.cuda_of_tag('0.6.4') is None


def test_read_installed_real_pip_list(tmp_path):
    rows = real_pip_list()
    assert ('torch', '2.11.0') in rows and ('nvidia-nccl-cu13', '2.28.9') in rows
    site = make_site(tmp_path, rows, TORCH_VERSION_PY)
    installed = stack_bom.read_installed(str(site))
    assert installed['exists'] is True
    assert installed['errors'] == []
    assert len(installed['distributions']) == len(set(stack_bom.normalize_name(n) for n, _v in rows))
    assert installed['distributions']['torch']['version'] == '2.11.0'
    assert installed['distributions']['typing-extensions']['name'] == 'typing_extensions'
    assert installed['distributions']['werkzeug']['version'] == '3.1.9'
    assert installed['torch'] == {'version': '2.11.0+cu130', 'cuda': '13.0', 'path': str(site / 'torch' / 'version.py')}
    assert installed['nccl'] == '2.28.9'


def test_compare_real_host_against_the_declaration(tmp_path):
    """The real host: torch 2.11.0+cu130 from PyPI, no flashinfer, no sgl-kernel, no sglang."""
    site = make_site(tmp_path, real_pip_list(), TORCH_VERSION_PY)
    installed = stack_bom.read_installed(str(site))
    declared = [
        {'name': 'torch', 'version': '2.11.0.dev20251231+cu130', 'layer': 'torch'},
        {'name': 'flashinfer-python', 'version': '0.6.4', 'layer': 'flashinfer'},
        {'name': 'sgl-kernel', 'version': '0.3.21+cu130', 'layer': 'sgl_kernel'},
    ]
    items = stack_bom.compare(declared, installed)
    assert [(i['name'], i['status'], i['installed']) for i in items] == [
        ('torch', 'drift', '2.11.0+cu130'),
        ('torch.version.cuda', 'ok', '13.0'),
        ('flashinfer-python', 'missing', None),
        ('sgl-kernel', 'missing', None),
    ]
    assert items[0]['detail'] == 'torch 2.11.0.dev20251231+cu130 declared, 2.11.0+cu130 installed'
    assert items[0]['layer'] == 'torch'
    # Declared as what the host has: all ok.
    items = stack_bom.compare([{'name': 'torch', 'version': '2.11.0+cu130'}, {'name': 'nvidia_nccl_cu13', 'version': '2.28.9'}], installed)
    assert [i['status'] for i in items] == ['ok', 'ok', 'ok']
    assert 'drift' not in stack_bom.summary_message(items)


def test_compare_fake_stack(tmp_path):
    site = make_site(tmp_path, [
        ('torch', '2.11.0.dev20251231+cu130'), ('flashinfer_python', '0.6.4'), ('flashinfer-cubin', '0.6.3'),
        ('sgl-kernel', '0.3.21+cu130'),
    ], "__version__ = '2.11.0.dev20251231+cu128'\ncuda: Optional[str] = '12.8'\n")
    installed = stack_bom.read_installed(str(site))
    items = stack_bom.compare([
        {'name': 'torch', 'version': '2.11.0.dev20251231+cu130'},
        {'name': 'flashinfer-python', 'version': '0.6.4'},
        {'name': 'flashinfer-cubin', 'version': '0.6.4'},
        {'name': 'sglang', 'version': '0.5.9'},
    ], installed)
    assert [(i['name'], i['status']) for i in items] == [
        ('torch', 'ok'), ('torch.version.cuda', 'drift'), ('flashinfer-python', 'ok'), ('flashinfer-cubin', 'drift'), ('sglang', 'missing')]
    assert items[1]['detail'] == 'torch/version.py cuda is 12.8, 13.0 declared (+cu130)'
    message = stack_bom.summary_message(items)
    assert message.startswith('5 checked: 2 ok; drift: ')
    assert 'missing: sglang 0.5.9 declared, not installed' in message


def test_missing_site_packages_and_torch(tmp_path):
    installed = stack_bom.read_installed(str(tmp_path / 'nope'))
    assert installed['exists'] is False and installed['distributions'] == {} and installed['torch'] is None
    items = stack_bom.compare([{'name': 'torch', 'version': '2.11.0+cu130'}], installed)
    assert [(i['name'], i['status']) for i in items] == [('torch', 'missing'), ('torch.version.cuda', 'missing')]


def test_unreadable_metadata_is_reported(tmp_path):
    site = tmp_path / 'sp'
    site.mkdir()
    (site / 'broken-1.0.dist-info').mkdir()
    make_dist(site, 'ok-pkg', '1.0')
    installed = stack_bom.read_installed(str(site))
    assert list(installed['distributions']) == ['ok-pkg']
    assert len(installed['errors']) == 1 and 'broken-1.0.dist-info' in installed['errors'][0]


REAL_WHEELS = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'arch_policy')


def real_pypi_torch_site(tmp_path, version_py=None):
    """torch 2.11.0 and torchvision 0.26.0 as PyPI ships them: METADATA without +cu130, the real torch/version.py."""
    if version_py is None:
        with open(os.path.join(REAL_WHEELS, 'torch-2.11.0-version.py')) as handle:
            version_py = handle.read()
    return make_site(tmp_path, [('torch', '2.11.0'), ('torchvision', '0.26.0')], version_py)


def test_pypi_torch_declared_with_its_cuda(tmp_path):
    """Declared as the declaration says PyPI's torch: version 2.11.0, cuda "13.0"; the CUDA is read from torch/version.py."""
    installed = stack_bom.read_installed(str(real_pypi_torch_site(tmp_path)))
    declared = [{'name': 'torch', 'version': '2.11.0', 'cuda': '13.0'}, {'name': 'torchvision', 'version': '0.26.0', 'cuda': '13.0'}]
    items = stack_bom.compare(declared, installed)
    assert [(i['name'], i['status'], i['installed']) for i in items] == [
        ('torch', 'ok', '2.11.0'), ('torch.version.cuda', 'ok', '13.0'), ('torchvision', 'ok', '0.26.0')]
    # The same wheel declared with the tag of its torch/version.py is the same build: ok too.
    items = stack_bom.compare([{'name': 'torch', 'version': '2.11.0+cu130'}], installed)
    assert [i['status'] for i in items] == ['ok', 'ok']


def test_pypi_torch_of_another_cuda_drifts(tmp_path):
    """A torch 2.11.0 whose torch/version.py says 12.8 is not the declared cu130 build, whatever its METADATA says."""
    site = real_pypi_torch_site(tmp_path, "__version__ = '2.11.0+cu128'\ncuda: Optional[str] = '12.8'\n")
    items = stack_bom.compare([{'name': 'torch', 'version': '2.11.0', 'cuda': '13.0'}], stack_bom.read_installed(str(site)))
    assert [(i['name'], i['status']) for i in items] == [('torch', 'ok'), ('torch.version.cuda', 'drift')]
    assert items[1]['detail'] == 'torch/version.py cuda is 12.8, 13.0 declared (cuda: "13.0")'


def test_declared_cuda():
    assert stack_bom.declared_cuda({'version': '2.11.0', 'cuda': '13.0'}) == '13.0'
    assert stack_bom.declared_cuda({'version': '2.11.0.dev20251231+cu130'}) == '13.0'
    assert stack_bom.declared_cuda({'version': '2.11.0'}) is None

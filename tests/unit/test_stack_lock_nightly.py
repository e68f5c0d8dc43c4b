# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lock step (module stack_lock, make_lock) with real uv against an index that offers several nightly builds.

torch and torchvision are declared as nightly specs (``2.11.0.dev*+cu130``, version_policy newest). The index offers
torch builds of 2025-12-30, 2025-12-31 and 2026-01-01, but torchvision builds of the first two dates only (each pins
its torch exactly, as the real ones do). The lock must take the newest torch that has its torchvision: 2025-12-31, and
that torchvision. The wheels are stand-ins (METADATA only): what is tested is the resolution, not the packages.

Needs uv (the controller's requirements pin it): run by scripts/test-all.sh testbed-units with the controller's
virtualenv; skipped where uv is not installed (ansible-test's own unit environments).
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import shutil
import subprocess
import sys
import threading
import zipfile

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_lock as sl
from ansible_collections.gpuops.sglang_stack.plugins.modules import stack_lock as module

UV = os.path.join(os.path.dirname(sys.executable), 'uv')
if not os.access(UV, os.X_OK):
    UV = shutil.which('uv')

pytestmark = pytest.mark.skipif(not UV, reason='uv is not installed here (the controller virtualenv has it)')

TAG = 'cp311-cp311-manylinux_2_28_x86_64'


def _wheel(directory, name, version, requires=()):
    filename = '%s-%s-%s.whl' % (name, version, TAG)
    dist_info = '%s-%s.dist-info' % (name, version)
    metadata = 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n%s\n' % (
        name, version, ''.join('Requires-Dist: %s\n' % req for req in requires))
    files = {dist_info + '/METADATA': metadata,
             dist_info + '/WHEEL': 'Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: %s\n' % TAG,
             '%s/__init__.py' % name: '__version__ = %r\n' % version}
    files[dist_info + '/RECORD'] = ''.join('%s,,\n' % path for path in list(files) + [dist_info + '/RECORD'])
    path = os.path.join(directory, filename)
    with zipfile.ZipFile(path, 'w') as archive:
        for member, text in files.items():
            archive.writestr(member, text)
    with open(path, 'rb') as handle:
        return filename, hashlib.sha256(handle.read()).hexdigest()


@pytest.fixture
def index(tmp_path):
    """A PEP 503 index on 127.0.0.1 with the nightly stand-ins; yields its /simple URL."""
    root = tmp_path / 'index'
    root.mkdir()
    pages = {}
    for date in ('20251230', '20251231', '20260101'):
        pages.setdefault('torch', []).append(_wheel(str(root), 'torch', '2.11.0.dev%s+cu130' % date))
    for date in ('20251230', '20251231'):
        pages.setdefault('torchvision', []).append(_wheel(str(root), 'torchvision', '0.26.0.dev%s+cu130' % date,
                                                          ['torch==2.11.0.dev%s' % date]))
    for project, files in pages.items():
        page = root / 'simple' / project
        page.mkdir(parents=True)
        links = ''.join('<a href="../../%s#sha256=%s">%s</a>\n' % (name.replace('+', '%2B'), sha, name) for name, sha in files)
        (page / 'index.html').write_text('<!DOCTYPE html><html><body>\n%s</body></html>\n' % links)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    handler.log_message = lambda *args: None
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield 'http://127.0.0.1:%d/simple' % server.server_address[1]
    finally:
        server.shutdown()


class _Module(object):
    """What make_lock uses of AnsibleModule: its parameters, run_command, fail_json."""

    def __init__(self, cache_dir):
        self.params = {'uv': UV, 'cache_dir': cache_dir, 'timeout': 60, 'max_bytes': None, 'url_map': []}

    def run_command(self, argv, environ_update=None):
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              env=dict(os.environ, **(environ_update or {})), check=False)
        return proc.returncode, proc.stdout, proc.stderr

    def fail_json(self, **kwargs):
        raise AssertionError(kwargs['msg'])


def _declaration(index_url, torch='2.11.0.dev*+cu130', vision='0.26.0.dev*+cu130'):
    packages = []
    for order, (name, version) in enumerate((('torch', torch), ('torchvision', vision)), 1):
        packages.append({'name': name, 'version': version, 'version_policy': 'newest', 'layer': 'torch', 'order': order,
                         'pip_requirement': sl.spec_requirement(name, version), 'dependencies': 'resolve', 'source': 'index',
                         'index_url': index_url, 'url': None, 'filename': None, 'sha256': None, 'upstream': 'pytorch'})
    return {'python': {'version': '3.11', 'tag': 'cp311', 'platform': 'x86_64-manylinux_2_28'},
            'insecure_http': {'allowed': True}, 'download_max_bytes': 10 ** 8, 'requirements_index_url': index_url,
            'packages': packages, 'layers': [{'name': 'torch', 'packages': packages, 'requirements': []}]}


def test_the_lock_takes_the_newest_torch_that_has_its_torchvision(index, tmp_path):
    lock, computed = module.make_lock(_Module(str(tmp_path / 'uv-cache')), _declaration(index))
    taken = dict((d['name'], d) for d in sl.layer_distributions(lock, 'torch'))
    assert sorted(taken) == ['torch', 'torchvision']
    assert taken['torch']['version'] == '2.11.0.dev20251231+cu130'
    assert taken['torchvision']['version'] == '0.26.0.dev20251231+cu130'
    assert taken['torch']['filename'] == 'torch-2.11.0.dev20251231+cu130-%s.whl' % TAG
    assert taken['torch']['url'] == index.rsplit('/', 1)[0] + '/torch-2.11.0.dev20251231%2Bcu130-' + TAG + '.whl'
    assert all(len(d['sha256']) == 64 for d in taken.values()) and computed == []
    assert lock['inputs']['layers'][0]['packages'][0]['version'] == '2.11.0.dev*+cu130'


def test_a_build_of_another_cuda_is_refused(index, tmp_path):
    # A spec for +cu128 on an index of +cu130 builds: the range cannot say the local tag, the lock step checks it.
    torch_only = _declaration(index)
    torch_only['packages'] = torch_only['packages'][:1]
    torch_only['layers'][0]['packages'] = torch_only['packages']
    torch_only['packages'][0]['version'] = '2.11.0.dev*+cu128'
    torch_only['packages'][0]['pip_requirement'] = sl.spec_requirement('torch', '2.11.0.dev*+cu128')
    with pytest.raises(AssertionError) as err:
        module.make_lock(_Module(str(tmp_path / 'uv-cache')), torch_only)
    assert 'torch: the resolution took 2.11.0.dev20260101+cu130, which is not a build of 2.11.0.dev*+cu128' in str(err.value)

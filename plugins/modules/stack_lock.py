#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: stack_lock
short_description: Resolve the stack declaration once into a lock - every wheel of every layer with its URL and sha256
version_added: 1.0.0
description:
  - Runs on the controller. Resolves the resolved stack declaration (the fact C(stack_declaration_resolved)) for its
    declared Python and platform with uv (C(uv pip compile --format pylock.toml), wheels only, the first index that
    offers a name wins) and writes the lock file O(dest) - JSON, one entry per distribution with its layer, exact version,
    file, URL and sha256.
  - The packages declared with C(dependencies=resolve) and every layer's requirements are resolved together, so a
    distribution has one version in the whole stack; each goes to the first layer that needs it. The packages declared
    without dependencies are locked as declared (file, index or URL, sha256).
  - A file whose index publishes no sha256 is downloaded once here and hashed (within O(max_bytes)). A declared sha256
    that differs from the index's is refused, naming both.
  - While O(dest) holds a valid lock of the same inputs it is kept (a lock is a reviewed file); O(refresh=true) resolves
    again, which takes newer versions of the requirements that are not pinned.
  - The lock's content digest names the stack (C(<name>-<digest[:12]>)), so any change of any distribution is a new stack.
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
attributes:
  check_mode:
    details: Resolves and reports the lock it would write (and its diff), writes nothing.
  diff_mode:
    support: full
options:
  declaration:
    description: The resolved stack declaration (C(stack_declaration_resolved)).
    type: dict
    required: true
  dest:
    description: The lock file to write (its directory must exist).
    type: path
    required: true
  refresh:
    description: Resolve again even when O(dest) is a valid lock of the same inputs.
    type: bool
    default: false
  replace:
    description:
      - Replace an O(dest) that is not a valid lock of these inputs (a changed declaration). V(false) leaves any existing
        O(dest) as it is (the upgrade makes a missing lock, never replaces one; a stale lock is then refused when the
        declaration is resolved with it, naming the difference).
    type: bool
    default: true
  uv:
    description: The uv executable; by default the one beside the controller's Python, else C(uv) on the PATH.
    type: path
  cache_dir:
    description: uv's cache directory (kept between runs, so a second lock step downloads no metadata again).
    type: path
  max_bytes:
    description: The largest file the lock step downloads to hash it; by default the declaration's C(download_max_bytes).
    type: int
  timeout:
    description: Seconds for each HTTP request and for each uv run.
    type: int
    default: 600
  url_map:
    description:
      - Where the controller reaches the declared sources, each C(from) (a declared URL prefix) and C(to) (what the
        controller reaches), as C(fleet_wheelhouse_url_map). uv resolves through C(to); the lock records the declared
        URLs (C(from)), the ones the hosts fetch.
    type: list
    elements: dict
    default: []
"""

EXAMPLES = r"""
- name: Lock the stack
  gpuops.sglang_stack.stack_lock:
    declaration: "{{ stack_declaration_resolved }}"
    dest: "{{ inventory_dir }}/stack.lock.json"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
digest:
  description: The lock's content digest (layers, names, versions, sha256).
  returned: success
  type: str
  sample: 3f6c0b9e...
stack_id:
  description: The id of the stack this lock builds.
  returned: success
  type: str
  sample: cu130-sglang-0.5.9-3f6c0b9e2a41
distributions:
  description: How many distributions the lock holds.
  returned: success
  type: int
  sample: 167
hashed:
  description: How many of them carry a sha256 (equal to RV(distributions), else the module failed).
  returned: success
  type: int
  sample: 167
computed_hashes:
  description: The files whose index published no sha256, downloaded and hashed by this run.
  returned: success
  type: list
  elements: str
  sample: [flashinfer_jit_cache-0.6.4+cu130-cp39-abi3-manylinux_2_28_x86_64.whl]
layers:
  description: Per layer, how many distributions it installs.
  returned: success
  type: dict
  sample: {torch: 31, flashinfer: 9, sgl_kernel: 1, sglang: 126}
resolved:
  description: Whether this run resolved (false when the existing lock was kept).
  returned: success
  type: bool
  sample: true
msg:
  description: A one-line summary.
  returned: always
  type: str
"""

import json
import os
import shutil
import sys
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.urls import fetch_url

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import report_file, stack_lock, wheel_fetch


# Its own User-Agent: a mirror's log tells the lock step's requests from the upgrade's downloads.
HTTP_AGENT = 'gpuops-stack-lock'


class _Opener(object):
    def __init__(self, module, timeout):
        self.module = module
        self.timeout = timeout
        # fetch_url takes the User-Agent from the module's http_agent parameter.
        module.params['http_agent'] = HTTP_AGENT

    def __call__(self, url):
        response, info = fetch_url(self.module, url, timeout=self.timeout)
        return response, info.get('status', -1), info.get('msg'), info.get('content-length')


def _uv(module):
    if module.params['uv']:
        return module.params['uv']
    beside = os.path.join(os.path.dirname(sys.executable), 'uv')
    if os.access(beside, os.X_OK):
        return beside
    found = module.get_bin_path('uv')
    if not found:
        module.fail_json(msg='uv not found beside %s or on the PATH: install it on the controller (requirements/controller.txt '
                             'pins it) or give its path in uv' % sys.executable)
    return found


def _run_uv(module, uv, workdir, name, roots, resolved, constraints=None):
    req = os.path.join(workdir, '%s.in' % name)
    out = os.path.join(workdir, 'pylock.%s.toml' % name)
    with open(req, 'w') as handle:
        handle.write(''.join('%s\n' % line for line in roots))
    con = None
    if constraints:
        con = os.path.join(workdir, '%s.constraints' % name)
        with open(con, 'w') as handle:
            handle.write(''.join('%s\n' % line for line in constraints))
    argv = stack_lock.uv_compile_argv(uv, req, out, resolved, con, module.params['cache_dir'])
    rc, stdout, stderr = module.run_command(argv, environ_update={'UV_HTTP_TIMEOUT': str(module.params['timeout'])})
    if rc != 0:
        module.fail_json(msg='LOCK: uv could not resolve the %s (%s): %s. Nothing was written.' % (
            'whole stack' if name == 'all' else 'layers up to %s' % name, ' '.join(roots[:6]) + (' ...' if len(roots) > 6 else ''),
            (stderr or stdout).strip()[-3000:]), cmd=argv)
    with open(out) as handle:
        return stack_lock.parse_pylock(handle.read(), resolved['python']['tag'], stack_lock.platform_of(resolved))


def _direct(module, opener, pkg, url_map):
    """A package locked as declared: its file on its index page (or its URL) and the sha256 published there, if any."""
    if pkg.get('url'):
        return {'name': pkg['name'], 'version': str(pkg['version']), 'filename': pkg.get('filename') or stack_lock.wheel_filename(pkg['url']),
                'url': pkg['url'], 'sha256': pkg.get('sha256'), 'size': pkg.get('size')}
    page_url = '%s/%s/' % (pkg['index_url'].rstrip('/'), stack_lock.normalize_name(pkg['name']))
    declared_page = wheel_fetch.map_url(page_url, url_map, reverse=True)
    response, status, message, dummy = opener(page_url)
    if response is None or status != 200:
        module.fail_json(msg='LOCK: %s %s: the index page %s was not fetched (HTTP %s: %s). Nothing was written and no host was '
                             'changed.' % (pkg['name'], pkg['version'], declared_page, status, message))
    files = stack_lock.parse_simple_index(response.read().decode('utf-8', 'replace'), page_url)
    if pkg['filename'] not in files:
        module.fail_json(msg='LOCK: %s %s: the index %s does not offer %s (it offers %s; a nightly vanishes from its index after '
                             'about 60 days: serve it from the site\'s mirror). Nothing was written and no host was changed.' % (
                                 pkg['name'], pkg['version'], declared_page, pkg['filename'], ', '.join(sorted(files)[:12]) or 'nothing'))
    url, published = files[pkg['filename']]
    if pkg.get('sha256') and published and published != pkg['sha256']:
        module.fail_json(msg='LOCK: %s: the index publishes sha256 %s, the declaration says %s: the file changed upstream or '
                             'the declared sha256 is wrong. Nothing was written and no host was changed.' % (pkg['filename'], published, pkg['sha256']))
    return {'name': pkg['name'], 'version': str(pkg['version']), 'filename': pkg['filename'], 'url': url,
            'sha256': pkg.get('sha256') or published, 'size': pkg.get('size')}


def _fill_hashes(module, opener, dists, max_bytes):
    """Download once and hash each file that has no sha256 (its index publishes none)."""
    computed = []
    workdir = tempfile.mkdtemp(prefix='stack-lock-hash-')
    try:
        for dist in dists:
            if dist.get('sha256'):
                continue
            try:
                sha, size = wheel_fetch.download(opener, dist['url'], os.path.join(workdir, dist['filename']), max_bytes)
            except wheel_fetch.WheelFetchError as exc:
                module.fail_json(msg='LOCK: %s publishes no sha256 and could not be hashed here: %s. Nothing was written.' % (
                    dist['filename'], exc))
            os.unlink(os.path.join(workdir, dist['filename']))
            dist['sha256'], dist['size'] = sha, size
            computed.append(dist['filename'])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return computed


def _through(resolved, url_map):
    """The declaration as the controller reaches it (the url_map applied to every index and URL)."""
    mapped = dict(resolved)
    mapped['packages'] = [dict(pkg, index_url=wheel_fetch.map_url(pkg.get('index_url'), url_map), url=wheel_fetch.map_url(pkg.get('url'), url_map))
                          for pkg in resolved['packages']]
    by_name = dict((pkg['name'], pkg) for pkg in mapped['packages'])
    mapped['layers'] = [dict(layer, packages=[by_name[pkg['name']] for pkg in layer['packages']]) for layer in resolved['layers']]
    mapped['requirements_index_url'] = wheel_fetch.map_url(stack_lock.requirements_index_url(resolved), url_map)
    return mapped


def make_lock(module, declared):
    url_map = module.params['url_map']
    resolved = _through(declared, url_map)
    uv = _uv(module)
    opener = _Opener(module, module.params['timeout'])
    max_bytes = module.params['max_bytes'] or resolved.get('download_max_bytes') or 4294967296
    roots = stack_lock.resolution_roots(resolved)
    names = [layer for layer, dummy, dummy2 in roots]
    direct = [pkg for dummy, dummy2, pkgs in roots for pkg in pkgs]
    direct_pins = ['%s==%s' % (pkg['name'], pkg['version']) for pkg in direct]
    workdir = tempfile.mkdtemp(prefix='stack-lock-')
    try:
        every_root = [req for dummy, reqs, dummy2 in roots for req in reqs]
        final = _run_uv(module, uv, workdir, 'all', every_root, resolved, direct_pins) if every_root else []
        pins = ['%s==%s' % (dist['name'], dist['version']) for dist in final] + direct_pins
        layer_sets = []
        so_far = []
        for index, (layer, reqs, dummy) in enumerate(roots):
            so_far = so_far + reqs
            if not reqs:
                layer_sets.append(set(layer_sets[-1]) if layer_sets else set())
            elif index == len(roots) - 1 or so_far == every_root:
                layer_sets.append(set(stack_lock.normalize_name(d['name']) for d in final))
            else:
                part = _run_uv(module, uv, workdir, layer, so_far, resolved, pins)
                layer_sets.append(set(stack_lock.normalize_name(d['name']) for d in part))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    by_name = dict((stack_lock.normalize_name(pkg['name']), pkg) for pkg in resolved['packages'])
    problems = []
    for dist in final:
        pkg = by_name.get(stack_lock.normalize_name(dist['name']))
        if pkg is None or pkg.get('dependencies') != 'resolve':
            continue
        if pkg.get('filename') and dist['filename'] != pkg['filename']:
            problems.append('%s: the resolution chose %s, the declaration names %s' % (pkg['name'], dist['filename'], pkg['filename']))
        if not stack_lock.spec_matches(pkg['version'], dist['version']):
            problems.append('%s: the resolution took %s, which is not a build of %s (another local tag: the index\'s newest build '
                            'is not the declared CUDA build)' % (pkg['name'], dist['version'], pkg['version']))
        if pkg.get('sha256') and dist.get('sha256') and dist['sha256'] != pkg['sha256']:
            problems.append('%s: the index publishes sha256 %s, the declaration says %s: the file changed upstream or the declared '
                            'sha256 is wrong' % (dist['filename'], dist['sha256'], pkg['sha256']))
        if pkg.get('sha256'):
            dist['sha256'] = pkg['sha256']
    if problems:
        module.fail_json(msg='LOCK: %s. Nothing was written and no host was changed.' % '; '.join(problems))
    direct_names = set(stack_lock.normalize_name(pkg['name']) for pkg in direct)
    final = [dist for dist in final if stack_lock.normalize_name(dist['name']) not in direct_names]
    per_layer = stack_lock.assign_layers(names, layer_sets, final)
    for pkg in direct:
        per_layer[pkg['layer']].append(_direct(module, opener, pkg, url_map))
    everything = [dist for layer in names for dist in per_layer[layer]]
    computed = _fill_hashes(module, opener, everything, max_bytes)
    for dist in everything:
        dist['url'] = wheel_fetch.map_url(dist['url'], url_map, reverse=True)
    rc, version, dummy = module.run_command([uv, '--version'])
    lock = stack_lock.build_lock(declared, per_layer, {'tool': 'uv', 'version': version.strip() if rc == 0 else 'unknown',
                                                       'platform': stack_lock.platform_of(resolved)})
    return lock, computed


def main():
    module = AnsibleModule(
        argument_spec=dict(
            declaration=dict(type='dict', required=True),
            dest=dict(type='path', required=True),
            refresh=dict(type='bool', default=False),
            replace=dict(type='bool', default=True),
            uv=dict(type='path'),
            cache_dir=dict(type='path'),
            max_bytes=dict(type='int'),
            timeout=dict(type='int', default=600),
            url_map=dict(type='list', elements='dict', default=[]),
        ),
        supports_check_mode=True,
    )
    resolved = module.params['declaration']
    dest = module.params['dest']
    result = dict(changed=False, resolved=False, computed_hashes=[])
    existing = None
    text = report_file.read_text(dest)
    if text is not None and not module.params['replace']:
        result['msg'] = '%s exists: kept as it is (replace=false)' % dest
        module.exit_json(**result)
    if text is not None and not module.params['refresh']:
        try:
            existing = json.loads(text)
        except ValueError:
            existing = None
        if existing is not None and stack_lock.lock_problems(existing, resolved):
            existing = None
    if existing is not None:
        lock = existing
    else:
        lock, result['computed_hashes'] = make_lock(module, resolved)
        result['resolved'] = True
        problems = stack_lock.lock_problems(lock, resolved)
        if problems:
            module.fail_json(msg='LOCK: the resolution does not make a usable lock: %s. Nothing was written.' % '; '.join(problems),
                             **result)
        report_file.write_if_changed(module, dest, stack_lock.render(lock), result)
    total, hashed = stack_lock.count(lock)
    result.update(digest=lock['digest'], stack_id=stack_lock.stack_id(resolved.get('name'), lock), distributions=total, hashed=hashed,
                  layers=dict((layer['name'], len(layer['distributions'])) for layer in lock['layers']))
    result['msg'] = '%s %s: %d distributions, %d with a sha256 (%s)%s' % (
        dest, 'kept' if existing is not None else ('would be written' if module.check_mode and result['changed'] else
                                                   'written' if result['changed'] else 'unchanged'),
        total, hashed, ', '.join('%s %d' % item for item in result['layers'].items()),
        '; hashed here: %s' % ', '.join(result['computed_hashes']) if result['computed_hashes'] else '')
    module.exit_json(**result)


if __name__ == '__main__':
    main()

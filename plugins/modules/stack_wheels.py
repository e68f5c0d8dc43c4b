#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: stack_wheels
short_description: Fetch, check and install one layer of a locked stack - exactly the locked files, nothing resolved
version_added: 1.0.0
description:
  - Takes the distributions the stack lock (M(gpuops.sglang_stack.stack_lock)) puts in one layer and makes O(wheelhouse)
    hold each locked file with its locked sha256 - fetched from its locked URL when missing and O(source=url), else it
    must already be there (O(source=wheelhouse), the controller copied it). A download is hashed while it streams and
    kept only when it matches; a file already there is hashed again.
  - Every file of the layer is checked before anything is installed. A mismatch fails naming the file, the lock's
    sha256 and the one found; nothing is installed and the serving stack is untouched.
  - Then, when O(venv) is given, installs the distributions the virtualenv does not hold at the locked version with
    pip C(--no-deps --no-index --require-hashes) from those files, so pip never resolves and never reaches an index.
  - Without O(venv) it only fills the wheelhouse (the controller's download-once mode).
  - With O(share_root), files identical between the stacks under that root are one inode
    (C(<share_root>/store), M(gpuops.sglang_stack.stack_store) removes what no stack links any more). A locked wheel the
    store holds is linked into O(wheelhouse) instead of fetched (it is still hashed before use); a distribution whose
    wheel an earlier stack installed is laid out from the store by hard links (console scripts rewritten for this
    virtualenv) instead of unpacked by pip; what pip installs is put in the store once every file still hashes as its
    RECORD says. Nothing is written through a shared file; each is replaced by a rename.
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
attributes:
  check_mode:
    details: Fetches and installs nothing; checks the files already in O(wheelhouse) and reports what it would fetch and install.
options:
  distributions:
    description:
      - The locked distributions of the layer, each with C(name), C(version), C(filename), C(url), C(sha256) and
        optionally C(size) (the lock's layer entry).
    type: list
    elements: dict
    required: true
  wheelhouse:
    description: Directory that holds the checked files (created when missing).
    type: path
    required: true
  source:
    description: Fetch missing files from their locked URLs (V(url)), or require them in O(wheelhouse) (V(wheelhouse)).
    type: str
    choices: [url, wheelhouse]
    default: url
  venv:
    description: The stack's virtualenv to install into; omitted, nothing is installed.
    type: path
  layer:
    description: The layer's name, for the messages.
    type: str
    default: ''
  max_bytes:
    description: The largest file a download may write when the lock gives no size.
    type: int
    default: 4294967296
  timeout:
    description: Seconds for each HTTP request.
    type: int
    default: 600
  workers:
    description: Downloads run at once.
    type: int
    default: 4
  url_map:
    description:
      - Rewrites of the locked URLs to what this machine reaches, each C(from) (a URL prefix) and C(to), the first matching
        rule wins (the controller's C(fleet_wheelhouse_url_map)).
    type: list
    elements: dict
    default: []
  share_root:
    description:
      - The stack layout's root (C(/opt/sglang)); its C(store) directory holds the files shared between its stacks. It
        must be on the virtualenv's file system (else nothing is shared, and the result says why). Omitted, nothing
        is shared.
    type: path
  allow_insecure_http:
    description:
      - Fetch from plain C(http://) URLs (the resolved declaration's C(insecure_http.allowed)); without it such a URL is
        refused before anything is fetched.
    type: bool
    default: false
  guard:
    description:
      - The packages the stack must hold once the layer is in, as P(gpuops.sglang_stack.stack_guarded#filter) returns them -
        every locked distribution of the layers so far, every declared package as declared. With O(venv), the
        virtualenv is read back after the install, in the same module run, as M(gpuops.sglang_stack.stack_bom) reads
        it, and the verdict returned as RV(guard). The module does not fail on drift; the caller decides.
    type: list
    elements: dict
"""

EXAMPLES = r"""
- name: Install the packages of layer torch
  gpuops.sglang_stack.stack_wheels:
    distributions: "{{ lock.layers | selectattr('name', 'equalto', 'torch') | map(attribute='distributions') | first }}"
    wheelhouse: /opt/sglang/stacks/cu130-sglang-0.5.9-3f6c0b9e2a41/wheelhouse
    venv: /opt/sglang/stacks/cu130-sglang-0.5.9-3f6c0b9e2a41/venv
    layer: torch
    guard: "{{ stack_declaration_resolved | gpuops.sglang_stack.stack_guarded('torch') }}"
  register: layer_torch

- name: Check the layers so far are intact
  ansible.builtin.assert:
    that: not layer_torch.guard.drift
    fail_msg: "{{ layer_torch.guard.msg }}"
"""

RETURN = r"""
linked:
  description: The files of this layer linked from the store (wheels, and installed files), and the bytes they did not cost.
  returned: always
  type: dict
  sample: {wheels: 3, stored: 3, files: 21034, reused: [torch==2.11.0], shared_bytes: 0, not_shared: []}
  contains:
    stored:
      description: The layer's wheels whose file in the wheelhouse is the store's own object for its locked sha256 (not
        hashed again).
      type: int
fetched:
  description: The files downloaded by this run (or, in check mode, that it would download).
  returned: always
  type: list
  elements: str
installed:
  description: The distributions installed by this run (or, in check mode, that it would install), as C(name==version).
  returned: always
  type: list
  elements: str
checked:
  description: How many files were hashed against the lock by this run. A wheel whose file is the store's own object for
    its locked sha256 (RV(linked.stored)) was hashed when it was stored and is not hashed again.
  returned: always
  type: int
guard:
  description: With O(guard) and O(venv), the virtualenv read back after the install against O(guard), as
    M(gpuops.sglang_stack.stack_bom) returns it (C(drift), C(msg), C(items), C(installed)); in check mode, before it.
  returned: when O(guard) and O(venv) are given, and the module did not fail
  type: dict
  sample: {drift: false, msg: "torch 2.11.0 ok", items: [], installed: {distributions: {}, torch: null}}
msg:
  description: A one-line summary.
  returned: always
  type: str
"""

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.urls import open_url

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_bom, stack_lock, stack_store, wheel_fetch


def _opener(module):
    timeout = module.params['timeout']

    def opener(url):
        try:
            response = open_url(url, timeout=timeout, validate_certs=True)
        except Exception as exc:  # pylint: disable=broad-except
            return None, getattr(exc, 'code', -1), str(exc), None
        return response, response.getcode(), 'OK', response.headers.get('Content-Length')
    return opener


def read_back(guard, site, result):
    """The layer's guard in the same module run: the virtualenv read against ``guard``, as the stack_bom module reads it
    (one round trip per layer instead of two)."""
    if guard is not None and site:
        result['guard'] = stack_bom.judge(site, guard)
    return result


def main():
    module = AnsibleModule(
        argument_spec=dict(
            distributions=dict(type='list', elements='dict', required=True),
            wheelhouse=dict(type='path', required=True),
            source=dict(type='str', choices=['url', 'wheelhouse'], default='url'),
            venv=dict(type='path'),
            layer=dict(type='str', default=''),
            max_bytes=dict(type='int', default=4294967296),
            timeout=dict(type='int', default=600),
            workers=dict(type='int', default=4),
            url_map=dict(type='list', elements='dict', default=[]),
            allow_insecure_http=dict(type='bool', default=False),
            share_root=dict(type='path'),
            guard=dict(type='list', elements='dict'),
        ),
        supports_check_mode=True,
    )
    params = module.params
    dists = params['distributions']
    label = 'layer %s' % params['layer'] if params['layer'] else 'the layer'
    bad = [str(d.get('name')) for d in dists
           if not all(d.get(key) for key in ('name', 'version', 'filename', 'url', 'sha256')) or os.path.basename(d['filename']) != d['filename']]
    if bad:
        module.fail_json(msg='LOCK %s: distributions without name, version, file name, URL or sha256 in the lock: %s' % (label, ', '.join(bad)))
    bad = stack_bom.unjudgeable(params['guard'] or [])
    if bad:
        module.fail_json(msg='every guarded package needs a name and a version: %s' % '; '.join(bad))
    result = dict(changed=False, fetched=[], installed=[], checked=0,
                  linked=dict(wheels=0, stored=0, files=0, reused=[], shared_bytes=0, not_shared=[]))
    dists = [dict(d, url=wheel_fetch.map_url(str(d['url']), params['url_map'])) for d in dists]
    plain = sorted(set(d['url'].split('/')[2] for d in dists if d['url'].lower().startswith('http://')))
    if plain and not params['allow_insecure_http']:
        module.fail_json(msg='LOCK %s: plain-HTTP sources (%s): what comes over them is readable and replaceable on the path. Serve them '
                             'over https://, or set stack_declaration_allow_insecure_http with its reason. Nothing was fetched.'
                             % (label, ', '.join(plain)), **result)

    wanted = dists
    site = None
    have = {}
    if params['venv']:
        pythons = sorted(entry for entry in os.listdir(os.path.join(params['venv'], 'lib')) if entry.startswith('python')) \
            if os.path.isdir(os.path.join(params['venv'], 'lib')) else []
        site = os.path.join(params['venv'], 'lib', pythons[0], 'site-packages') if pythons else None
        have = stack_bom.read_installed(site)['distributions'] if site else {}
        wanted = [d for d in dists if (have.get(stack_lock.normalize_name(d['name'])) or {}).get('version') != str(d['version'])]

    wheelhouse = params['wheelhouse']
    store = stack_store.store_dir(params['share_root']) if params['share_root'] else None
    # The distributions an earlier stack installed from the same locked wheel: laid out from the store, not unpacked.
    manifests = {}
    if store and params['venv']:
        for dist in wanted:
            manifest = stack_store.load_manifest(store, dist['sha256'])
            if manifest:
                manifests[dist['name']] = manifest
    # The wheels the store may hold, by the file name each has in the wheelhouse.
    by_filename = dict((d['filename'], d['sha256']) for d in wanted)
    if module.check_mode:
        result['linked']['reused'] = ['%s==%s' % (d['name'], d['version']) for d in wanted if d['name'] in manifests]
        present = [d for d in wanted if os.path.isfile(os.path.join(wheelhouse, d['filename']))]
        try:
            for dist in present:
                wheel_fetch.check_file(os.path.join(wheelhouse, dist['filename']), dist['sha256'])
            stored = stack_store.link_wheels(store, by_filename, wheelhouse, check=True)[0] if store else []
        except (wheel_fetch.WheelFetchError, stack_store.StoreError) as exc:
            module.fail_json(msg='LOCK %s: %s' % (label, exc), **result)
        result['checked'] = len(present)
        result['fetched'] = [d['filename'] for d in wanted if d not in present and d['filename'] not in stored]
        result['installed'] = ['%s==%s' % (d['name'], d['version']) for d in wanted] if params['venv'] else []
        result['changed'] = bool(result['fetched'] or result['installed'])
        result['msg'] = '%s: would fetch %d files, install %d distributions' % (label, len(result['fetched']), len(result['installed']))
        module.exit_json(**read_back(params['guard'], site, result))

    if not os.path.isdir(wheelhouse):
        os.makedirs(wheelhouse, 0o755)
    # What a run killed mid-download (or mid-install) left: partial downloads and the scratch requirements file.
    for entry in os.listdir(wheelhouse):
        if entry.startswith(('.partial-', '.locked-')):
            os.unlink(os.path.join(wheelhouse, entry))
    if store:
        stack_store.ensure_store(store)
        try:
            linked, _size = stack_store.link_wheels(store, by_filename, wheelhouse)
        except stack_store.StoreError as exc:
            module.fail_json(msg='STORE %s: %s. Nothing of this layer was installed; the serving stack is untouched.' % (label, exc), **result)
        result['linked']['wheels'] += len(linked)
    # A wheel that is the store's own object for its locked sha256 was hashed when it was stored: not hashed again.
    stored = stack_store.stored_wheels(store, by_filename, wheelhouse) if store else set()
    try:
        paths, fetched = wheel_fetch.ensure_wheels(wanted, wheelhouse, _opener(module) if params['source'] == 'url' else None,
                                                   params['max_bytes'], params['workers'], checked_before=stored)
    except wheel_fetch.WheelFetchError as exc:
        module.fail_json(msg='LOCK %s: %s. Nothing of this layer was installed; the serving stack is untouched.' % (label, exc), **result)
    result['checked'] = len(wanted) - len(stored)
    result['linked']['stored'] = len(stored)
    result['fetched'] = [os.path.basename(paths[name]) for name in fetched]
    result['changed'] = bool(fetched)

    if store:
        # Every checked wheel is kept once for the stacks to come (a download, or a copy from the controller).
        for dist in wanted:
            stack_store.put_file(store, paths[dist['name']], dist['sha256'], 0o644)
    if params['venv'] and manifests:
        # A distribution installed at another version (the setuptools and pip of the virtualenv's bootstrap) goes first,
        # as pip would uninstall it before installing the locked one: its files and RECORD must not stay beside.
        stale = [d['name'] for d in wanted if d['name'] in manifests and stack_lock.normalize_name(d['name']) in have]
        if stale:
            argv = [os.path.join(params['venv'], 'bin', 'python'), '-m', 'pip', 'uninstall', '--yes', '--disable-pip-version-check'] + stale
            rc, stdout, stderr = module.run_command(argv)
            if rc != 0:
                module.fail_json(msg='STORE %s: pip could not remove the other versions of %s before laying out the locked ones: %s'
                                     % (label, ', '.join(stale), (stderr or stdout).strip()[-2000:]), cmd=argv, **result)
        try:
            for dist in wanted:
                if dist['name'] in manifests:
                    result['linked']['files'] += stack_store.materialize(store, params['venv'], site, manifests[dist['name']])
                    result['linked']['reused'].append('%s==%s' % (dist['name'], dist['version']))
        except (OSError, stack_store.StoreError) as exc:
            module.fail_json(msg='STORE %s: could not lay out %s from the store %s: %s. The stack is not complete; the serving stack '
                                 'is untouched.' % (label, dist['name'], store, exc), **result)
        result['changed'] = True
    unpack = [d for d in wanted if d['name'] not in manifests]
    if params['venv'] and unpack:
        handle, requirements = tempfile.mkstemp(prefix='.locked-', suffix='.txt', dir=wheelhouse)
        try:
            with os.fdopen(handle, 'w') as out:
                out.write(wheel_fetch.hashed_requirements(unpack, paths))
            argv = wheel_fetch.pip_install_argv(os.path.join(params['venv'], 'bin', 'python'), requirements)
            rc, stdout, stderr = module.run_command(argv)
        finally:
            os.unlink(requirements)
        if rc != 0:
            module.fail_json(msg='LOCK %s: pip could not install the checked files: %s' % (label, (stderr or stdout).strip()[-3000:]),
                             cmd=argv, **result)
        result['changed'] = True
        if store:
            installed = stack_bom.read_installed(site)['distributions']
            for dist in unpack:
                dist_info = (installed.get(stack_lock.normalize_name(dist['name'])) or {}).get('dist_info')
                files, saved = stack_store.ingest(store, params['venv'], site, dist_info, dist['sha256'], dist['name'], str(dist['version'])) \
                    if dist_info else (0, '%s: not installed' % dist['name'])
                if files:
                    result['linked']['shared_bytes'] += saved
                else:
                    result['linked']['not_shared'].append(saved)
    if params['venv']:
        result['installed'] = ['%s==%s' % (d['name'], d['version']) for d in wanted]
    result['msg'] = '%s: %d files checked (%d the store held, checked when stored), %d fetched, %d distributions installed (%d laid out ' \
        'from the store)' % (label, result['checked'], result['linked']['stored'], len(result['fetched']), len(result['installed']),
                             len(result['linked']['reused']))
    module.exit_json(**read_back(params['guard'], site, result))


if __name__ == '__main__':
    main()

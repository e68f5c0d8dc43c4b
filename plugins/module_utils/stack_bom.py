# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The bill-of-materials check: what a site-packages directory holds against the declaration.

Pure Python, standard library only. Reads ``*.dist-info/METADATA`` (Name, Version) of every
distribution, ``torch/version.py`` (``__version__`` and ``cuda``) and the NCCL wheel's version, and
compares them with the declared packages (name, version), exactly: the declaration pins exact
versions, so anything else is drift.

A torch wheel from PyPI records ``2.11.0`` in its METADATA while ``torch/version.py`` says
``2.11.0+cu130``; torch is installed as declared when either matches the declared version. Whether
it is a CUDA X.Y build is read from the wheel itself (``torch/version.py``: ``cuda = '13.0'``), never
from the tag alone: a torch declared with ``cuda: "13.0"`` or a ``+cu130`` tag needs
``torch.version.cuda`` to be ``13.0``.
"""

from __future__ import annotations

import ast
import os
import re

STATUS_OK = 'ok'
STATUS_DRIFT = 'drift'
STATUS_MISSING = 'missing'
NCCL_DISTRIBUTION = 'nvidia-nccl-cu13'

_NORMALISE = re.compile(r'[-_.]+')
_CUDA_TAG = re.compile(r'\+cu(\d+)(\d)$')
_ASSIGNMENT = re.compile(r'^([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=\s*(.+?)\s*$')


def normalize_name(name):
    """PEP 503 normalisation: 'Flashinfer_Python' -> 'flashinfer-python'."""
    return _NORMALISE.sub('-', str(name)).lower()


def parse_metadata(text):
    """Name and Version from the header of a METADATA (RFC 822) text; None where absent."""
    fields = {'Name': None, 'Version': None}
    for line in text.splitlines():
        if not line.strip():
            break
        key, sep, value = line.partition(':')
        if sep and key in fields and fields[key] is None:
            fields[key] = value.strip()
    return fields['Name'], fields['Version']


def parse_torch_version(text):
    """{'version': __version__, 'cuda': cuda} from the text of torch/version.py (None where absent)."""
    values = {}
    for line in text.splitlines():
        match = _ASSIGNMENT.match(line)
        if not match:
            continue
        try:
            values[match.group(1)] = ast.literal_eval(match.group(2))
        except (ValueError, SyntaxError):
            continue
    return {'version': values.get('__version__'), 'cuda': values.get('cuda')}


def _read_text(path):
    with open(path, 'rb') as handle:
        return handle.read().decode('utf-8', 'replace')


def read_installed(site_packages_dir):
    """What a site-packages directory holds.

    Returns {'site_packages', 'exists', 'distributions': {normalised name: {'name', 'version',
    'dist_info'}}, 'torch': {'version', 'cuda', 'path'} or None, 'nccl': version or None,
    'errors': [unreadable METADATA files]}.
    """
    result = {'site_packages': site_packages_dir, 'exists': os.path.isdir(site_packages_dir),
              'distributions': {}, 'torch': None, 'nccl': None, 'errors': []}
    if not result['exists']:
        return result
    for entry in sorted(os.listdir(site_packages_dir)):
        if not entry.endswith('.dist-info'):
            continue
        metadata = os.path.join(site_packages_dir, entry, 'METADATA')
        try:
            name, version = parse_metadata(_read_text(metadata))
        except (IOError, OSError) as exc:
            result['errors'].append('%s: %s' % (metadata, exc))
            continue
        if not name:
            result['errors'].append('%s: no Name' % metadata)
            continue
        result['distributions'][normalize_name(name)] = {'name': name, 'version': version, 'dist_info': entry}
    version_py = os.path.join(site_packages_dir, 'torch', 'version.py')
    if os.path.isfile(version_py):
        try:
            torch = parse_torch_version(_read_text(version_py))
        except (IOError, OSError) as exc:
            result['errors'].append('%s: %s' % (version_py, exc))
        else:
            torch['path'] = version_py
            result['torch'] = torch
    nccl = result['distributions'].get(NCCL_DISTRIBUTION)
    if nccl:
        result['nccl'] = nccl['version']
    return result


def cuda_of_tag(version):
    """'2.11.0+cu130' -> '13.0', '2.9.1+cu128' -> '12.8'; None without a CUDA tag."""
    match = _CUDA_TAG.search(str(version or ''))
    if not match:
        return None
    return '%d.%s' % (int(match.group(1)), match.group(2))


def declared_cuda(pkg):
    """The CUDA a declared package is built for: its ``cuda`` key ("13.0"), else its +cuXYZ tag, else None."""
    if pkg.get('cuda') not in (None, ''):
        return str(pkg['cuda'])
    return cuda_of_tag(pkg.get('version'))


def _installed_version(norm, dist, installed, declared):
    """The installed version to report: for torch, torch/version.py's when it is the declared one or the
    METADATA carries no local tag (PyPI's 2.11.0 is 2.11.0+cu130 there)."""
    version = dist['version']
    torch = installed.get('torch') or {}
    if norm == 'torch' and torch.get('version') and version != declared and (torch['version'] == declared or '+' not in str(version)):
        return torch['version']
    return version


def compare(declared_packages, installed):
    """Compare declared packages (dicts with name and version; layer kept when given) with read_installed().

    Returns a list of {'name', 'declared', 'installed', 'status' (ok, drift, missing), 'detail'} in the
    declared order, plus, when torch is declared as a CUDA build (``cuda: "13.0"`` or a +cuXYZ tag), an
    item 'torch.version.cuda' (declared X.Y, installed the cuda of torch/version.py).
    """
    items = []
    distributions = installed.get('distributions') or {}
    for pkg in declared_packages:
        name = pkg['name']
        declared = str(pkg['version'])
        norm = normalize_name(name)
        dist = distributions.get(norm)
        item = {'name': name, 'declared': declared}
        if pkg.get('layer'):
            item['layer'] = pkg['layer']
        if dist is None:
            item.update(installed=None, status=STATUS_MISSING, detail='%s %s declared, not installed' % (name, declared))
        else:
            version = _installed_version(norm, dist, installed, declared)
            item['installed'] = version
            if version == declared or dist['version'] == declared:
                item.update(status=STATUS_OK, detail='%s %s' % (name, version))
            else:
                item.update(status=STATUS_DRIFT, detail='%s %s declared, %s installed' % (name, declared, version))
        items.append(item)
        if norm == 'torch' and declared_cuda(pkg):
            want = declared_cuda(pkg)
            torch = installed.get('torch')
            check = {'name': 'torch.version.cuda', 'declared': want}
            if pkg.get('layer'):
                check['layer'] = pkg['layer']
            if not torch:
                check.update(installed=None, status=STATUS_MISSING, detail='torch/version.py not found (torch %s needs CUDA %s)' % (declared, want))
            elif torch.get('cuda') == want:
                check.update(installed=want, status=STATUS_OK, detail='torch CUDA %s' % want)
            else:
                check.update(installed=torch.get('cuda'), status=STATUS_DRIFT,
                             detail='torch/version.py cuda is %s, %s declared (%s)' % (
                                 torch.get('cuda'), want, ('+cu' + want.replace('.', '')) if cuda_of_tag(declared) else 'cuda: "%s"' % want))
            items.append(check)
    return items


def summary_message(items):
    """One line: 'N checked: n ok; drift: ...; missing: ...'."""
    parts = ['%d checked: %d ok' % (len(items), len([i for i in items if i['status'] == STATUS_OK]))]
    for status in (STATUS_DRIFT, STATUS_MISSING):
        bad = [i['detail'] for i in items if i['status'] == status]
        if bad:
            parts.append('%s: %s' % (status, ', '.join(bad)))
    return '; '.join(parts)


def unjudgeable(declared):
    """The declared packages compare() cannot judge (no name or no version), each as text: the modules refuse them."""
    return [str(pkg) for pkg in declared if not pkg.get('name') or pkg.get('version') in (None, '')]


def judge(site_packages, declared):
    """``site_packages`` read and compared with ``declared``: dict(installed, items, drift, msg), what the stack_bom
    module returns and stack_verify and stack_wheels (its guard) read."""
    installed = read_installed(site_packages)
    items = compare(declared, installed)
    return dict(installed=installed, items=items, drift=any(item['status'] != STATUS_OK for item in items),
                msg=summary_message(items))

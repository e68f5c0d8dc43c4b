# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Does the built stack hold exactly its lock? Run on the host: lock_record_check.py LOCK SITE_PACKAGES WHEELHOUSE.

Prints one JSON object: how many distributions the lock holds and how many carry a sha256; how many the virtualenv
holds; the installed ones the lock does not name (but pip, the virtualenv's own installer from ensurepip, reported
apart) and the locked ones not installed (name==version); every file that a
RECORD lists, and those that belong to no locked distribution; the locked wheels in the wheelhouse whose sha256 is not
the lock's. Standard library only (it runs with the host's python3).
"""

import csv
import hashlib
import json
import os
import re
import sys


def norm(name):
    return re.sub(r'[-_.]+', '-', name).lower()


def metadata(dist_info):
    name = version = None
    with open(os.path.join(dist_info, 'METADATA'), encoding='utf-8', errors='replace') as handle:
        for line in handle:
            if not line.strip():
                break
            if line.startswith('Name:'):
                name = line.split(':', 1)[1].strip()
            elif line.startswith('Version:'):
                version = line.split(':', 1)[1].strip()
    return name, version


def sha256(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        for block in iter(lambda: handle.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def main(lock_path, site, wheelhouse):
    with open(lock_path) as handle:
        lock = json.load(handle)
    locked = {}
    for layer in lock['layers']:
        for dist in layer['distributions']:
            locked[norm(dist['name'])] = dist
    hashed = [d for d in locked.values() if re.match(r'^[0-9a-f]{64}$', str(d.get('sha256') or ''))]
    installed = {}
    record_files = 0
    bootstrap = None
    unlocked_files = []
    for entry in sorted(os.listdir(site)):
        if not entry.endswith('.dist-info'):
            continue
        name, version = metadata(os.path.join(site, entry))
        if norm(name) == 'pip' and 'pip' not in locked:
            bootstrap = '%s==%s' % (name, version)
            continue
        installed[norm(name)] = version
        owner = locked.get(norm(name))
        with open(os.path.join(site, entry, 'RECORD'), newline='', encoding='utf-8') as handle:
            for row in csv.reader(handle):
                if not row:
                    continue
                record_files += 1
                if owner is None or owner['version'] != version:
                    unlocked_files.append(os.path.normpath(os.path.join(site, row[0])))
    wheel_mismatch = []
    for dist in locked.values():
        path = os.path.join(wheelhouse, dist['filename'])
        if not os.path.isfile(path) or sha256(path) != dist['sha256']:
            wheel_mismatch.append(dist['filename'])
    print(json.dumps({
        'locked': len(locked), 'locked_with_sha256': len(hashed), 'installed': len(installed),
        'installed_not_locked': sorted('%s==%s' % (n, v) for n, v in installed.items()
                                       if n not in locked or locked[n]['version'] != v),
        'locked_not_installed': sorted('%s==%s' % (n, d['version']) for n, d in locked.items() if installed.get(n) != d['version']),
        'bootstrap_installer': bootstrap, 'record_files': record_files, 'record_files_not_locked': unlocked_files[:20],
        'record_files_not_locked_count': len(unlocked_files), 'wheels_not_matching_lock': wheel_mismatch,
    }, sort_keys=True))


if __name__ == '__main__':
    main(*sys.argv[1:4])

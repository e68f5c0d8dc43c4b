# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What two stacks share. Run on the host: share_check.py digest STACK | compare STACK_A STACK_B | disk STACK_A STACK_B.

digest: one sha256 over every regular file of the stack (path, inode, size, mode, mtime), to show a stack is unchanged
by the build of another.
compare: the disk of A alone and of A and B together (each inode once, as du counts it), the files of B that are the
same inode as a file of A, the wheels of B that are not A's (fetched by B's build), every RECORD row of B's virtualenv
that does not hash as the file now is (a laid-out stack must be what pip would have installed: its untrue rows are only
those untrue in A too), and A's digest. Prints one JSON object. Standard library only.
"""

import base64
import csv
import glob
import hashlib
import json
import os
import re
import stat
import sys


def walk(top):
    for folder, dirs, files in os.walk(top):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            yield path, os.lstat(path)


def file_digest(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        for block in iter(lambda: handle.read(1 << 20), b''):
            digest.update(block)
    return digest


def stack_digest(stack):
    """Every regular file's path, inode, size, mode and modification time (ns): a file written through (the mtime of its
    inode moves, in every stack that links it) or replaced (another inode) changes the digest. B's RECORD check reads
    the content of the inodes B shares with A."""
    total = hashlib.sha256()
    count = 0
    for path, info in walk(stack):
        if stat.S_ISREG(info.st_mode):
            total.update(('%s\0%d\0%d\0%o\0%d\n' % (os.path.relpath(path, stack), info.st_ino, info.st_size, info.st_mode,
                                                    info.st_mtime_ns)).encode())
            count += 1
    return {'digest': total.hexdigest(), 'files': count}


def disk(stacks):
    seen = set()
    size = 0
    for stack in stacks:
        for _path, info in walk(stack):
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                size += info.st_blocks * 512
    return size


def record_mismatches(venv):
    bad = []
    rows = 0
    for record in glob.glob(os.path.join(venv, 'lib', 'python*', 'site-packages', '*.dist-info', 'RECORD')):
        site = os.path.dirname(os.path.dirname(record))
        with open(record, newline='', encoding='utf-8') as handle:
            for row in csv.reader(handle):
                if len(row) < 2 or not row[1]:
                    continue
                rows += 1
                path = os.path.normpath(os.path.join(site, row[0]))
                try:
                    digest = file_digest(path).digest()
                except OSError as exc:
                    bad.append('%s: %s' % (row[0], exc))
                    continue
                if row[1] != 'sha256=' + base64.urlsafe_b64encode(digest).rstrip(b'=').decode():
                    bad.append(os.path.relpath(path, venv))
    return rows, bad


# The files a laid-out stack must hold of its own: the stack's records, its virtualenv's (pyvenv.cfg, the activate
# scripts, the pip that `python -m venv` bootstraps, which is not in the lock), and per distribution the RECORD and
# the console scripts and direct_url.json (rewritten for this stack). Any other file of its own is one the store did not share.
OWN = re.compile(r'^([^/]+\.json|venv/pyvenv\.cfg|venv/bin/.*|venv/lib/python[^/]+/site-packages/'
                 r'(pip/.*|pip-[^/]+\.dist-info/.*|[^/]+\.dist-info/(RECORD|direct_url\.json)))$')


def source_of(path):
    """A bytecode file's source (x/__pycache__/m.cpython-311.pyc -> x/m.py), else the path itself."""
    if '/__pycache__/' in path and path.endswith('.pyc'):
        folder, name = path.rsplit('/__pycache__/', 1)
        return '%s/%s.py' % (folder, name.split('.')[0])
    return path


def compare(stack_a, stack_b):
    inodes_a = set((info.st_dev, info.st_ino) for _path, info in walk(stack_a))
    files_b = shared = 0
    own_b = []
    for path, info in walk(stack_b):
        if not stat.S_ISREG(info.st_mode):
            continue
        files_b += 1
        if (info.st_dev, info.st_ino) in inodes_a:
            shared += 1
        else:
            own_b.append(os.path.relpath(path, stack_b))
    disk_a = disk([stack_a])
    disk_ab = disk([stack_a, stack_b])
    rows, bad = record_mismatches(os.path.join(stack_b, 'venv'))
    # Rows untrue in A as well are pip's own doing (two distributions of the closure install the same path; the later
    # one's file wins) or the patch series' (A is patched, B is not), not the store's: B must have no other.
    rows_a, bad_a = record_mismatches(os.path.join(stack_a, 'venv'))
    # A file A's patch series replaced is a new inode in A; B holds the pristine file, shared through the store.
    replaced_in_a = set('venv/' + path for path in bad_a)
    # A wheel B's build fetched is a file of B's own; one linked from the store is the inode of A's wheel.
    wheels_b = sorted(name for name in os.listdir(os.path.join(stack_b, 'wheelhouse')) if name.endswith('.whl'))
    fetched_b = [name for name in wheels_b if not os.path.exists(os.path.join(stack_a, 'wheelhouse', name))
                 or os.stat(os.path.join(stack_a, 'wheelhouse', name)).st_ino != os.stat(os.path.join(stack_b, 'wheelhouse', name)).st_ino]
    return {'disk_a': disk_a, 'disk_b': disk([stack_b]), 'disk_a_and_b': disk_ab, 'ratio': round(float(disk_ab) / disk_a, 4),
            'files_b': files_b, 'shared_with_a': shared, 'own_b': len(own_b), 'own_b_sample': own_b[:20],
            'own_b_unexpected': [path for path in own_b if not OWN.match(path) and source_of(path) not in replaced_in_a][:50],
            'wheels_b': len(wheels_b), 'wheels_b_not_a': fetched_b,
            'record_rows_b': rows, 'record_mismatch_count_b': len(bad), 'record_rows_a': rows_a, 'record_mismatch_count_a': len(bad_a),
            'record_mismatches_b_only': sorted(set(bad) - set(bad_a))[:50], 'record_mismatches_a_sample': sorted(bad_a)[:30],
            'digest_a': stack_digest(stack_a)}


def disk_only(stack_a, stack_b):
    """The benchmark's figures (tests/benchmark/real_stack_bench.py): disk of A, of A and B, the wheels B fetched."""
    wheels_b = sorted(name for name in os.listdir(os.path.join(stack_b, 'wheelhouse')) if name.endswith('.whl'))
    fetched_b = [name for name in wheels_b if not os.path.exists(os.path.join(stack_a, 'wheelhouse', name))
                 or os.stat(os.path.join(stack_a, 'wheelhouse', name)).st_ino != os.stat(os.path.join(stack_b, 'wheelhouse', name)).st_ino]
    disk_a, disk_ab = disk([stack_a]), disk([stack_a, stack_b])
    return {'disk_a': disk_a, 'disk_b': disk([stack_b]), 'disk_a_and_b': disk_ab, 'ratio': round(float(disk_ab) / disk_a, 4),
            'wheels_b': len(wheels_b), 'wheels_b_not_a': fetched_b}


def main(argv):
    if argv[1] == 'digest':
        print(json.dumps(stack_digest(argv[2])))
    elif argv[1] == 'disk':
        print(json.dumps(disk_only(argv[2], argv[3])))
    else:
        print(json.dumps(compare(argv[2], argv[3])))


if __name__ == '__main__':
    main(sys.argv)

# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""A report file on the host, written only when its content differs (check mode and diff honoured)."""

from __future__ import annotations

import os
import tempfile

from ansible.module_utils.common.text.converters import to_bytes, to_native


def read_text(path):
    try:
        with open(path, 'rb') as handle:
            return handle.read().decode('utf-8', 'replace')
    except (IOError, OSError):
        return None


def write_if_changed(module, dest, content, result):
    """Write ``content`` to ``dest`` atomically when it differs; sets result['changed'] (and 'diff' in diff mode).
    Fails the module, naming the path, when the directory is missing or the write fails."""
    before = read_text(dest)
    if before == content:
        return
    result['changed'] = True
    if module._diff:
        result['diff'] = dict(before=before or '', after=content, before_header=dest, after_header=dest)
    if module.check_mode:
        return
    directory = os.path.dirname(os.path.abspath(dest))
    if not os.path.isdir(directory):
        result['msg'] = 'the directory of dest %s does not exist' % dest
        module.fail_json(**result)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix='.report.')
    try:
        with os.fdopen(fd, 'wb') as handle:
            handle.write(to_bytes(content))
        module.atomic_move(tmp, dest)
    except (IOError, OSError) as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        result['msg'] = 'could not write %s: %s' % (dest, to_native(exc))
        module.fail_json(**result)

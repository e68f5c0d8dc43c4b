# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Report files the modules write on the controller (run summaries, qualification reports): each file is replaced
whole, written beside and then moved over, and only when its content differs from what is there."""

from __future__ import annotations

import os


def read_bytes(path):
    """The file's bytes, or None when it cannot be read (missing, a directory)."""
    try:
        with open(path, 'rb') as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def changed(files):
    """The (path, bytes) pairs of files whose content differs from the file at that path (or that is missing)."""
    return [(path, content) for path, content in files if read_bytes(path) != content]


def write(directory, files, move=os.replace):
    """Write (path, bytes) pairs, each path inside directory (created, mode 0755, when missing): each to path.tmp,
    mode 0644, then moved over the path by move (a module passes its atomic_move). Raises OSError."""
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    for path, content in files:
        tmp = path + '.tmp'
        with open(tmp, 'wb') as handle:
            handle.write(content)
        os.chmod(tmp, 0o644)
        move(tmp, path)

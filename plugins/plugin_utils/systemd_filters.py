# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The systemd_* filters (one documented plugin file each under plugins/filter): the rules of
module_utils/systemd_unit.py, with a refusal turned into an AnsibleFilterError in one place.

A value systemd cannot be given becomes an error naming the source, never the value.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import systemd_unit


def _refused_as_filter_error(rule, *args, **kwargs):
    try:
        return rule(*args, **kwargs)
    except systemd_unit.SystemdValueError as exc:
        raise AnsibleFilterError(str(exc))


def systemd_exec_line(argv, source='ExecStart', executable=True):
    """A command line for ExecStart=: the executable and each argument as exactly one word."""
    return _refused_as_filter_error(systemd_unit.exec_line, list(argv), source=source, executable=executable)


def systemd_unit_value(value, source):
    """A one-line unit setting (Description=, WorkingDirectory=, EnvironmentFile=, DeviceAllow=), specifiers escaped."""
    return _refused_as_filter_error(systemd_unit.unit_value, value, source)


def systemd_path_list(paths, source):
    """A space-separated list of absolute paths (ReadWritePaths=)."""
    return _refused_as_filter_error(systemd_unit.path_list, list(paths), source)


def systemd_env_lines(env, source):
    """The KEY=value lines of an environment file (EnvironmentFile=), sorted by name."""
    return _refused_as_filter_error(systemd_unit.env_lines, dict(env), source)

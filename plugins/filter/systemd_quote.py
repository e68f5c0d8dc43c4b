# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters that write values into systemd unit and environment files by systemd's own rules.

The rules live in plugins/module_utils/systemd_unit.py; each filter here turns its refusal into an
AnsibleFilterError. The documentation of each filter is in the YAML file of its name next to this one.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import systemd_unit


def _refusing(function):
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except systemd_unit.SystemdValueError as exc:
            raise AnsibleFilterError(str(exc))
    wrapper.__name__ = function.__name__
    wrapper.__doc__ = function.__doc__
    return wrapper


def systemd_exec_line(argv, source='ExecStart', executable=True):
    """A command line for ExecStart=: the executable and each argument as exactly one word."""
    return systemd_unit.exec_line(list(argv), source=source, executable=executable)


def systemd_unit_value(value, source):
    """A one-line unit setting (Description=, WorkingDirectory=, EnvironmentFile=, DeviceAllow=), specifiers escaped."""
    return systemd_unit.unit_value(value, source)


def systemd_path_list(paths, source):
    """A space-separated list of absolute paths (ReadWritePaths=)."""
    return systemd_unit.path_list(list(paths), source)


def systemd_env_lines(env, source):
    """The KEY=value lines of an environment file (EnvironmentFile=), sorted by name."""
    return systemd_unit.env_lines(dict(env), source)


class FilterModule(object):

    def filters(self):
        return {
            'systemd_exec_line': _refusing(systemd_exec_line),
            'systemd_unit_value': _refusing(systemd_unit_value),
            'systemd_path_list': _refusing(systemd_path_list),
            'systemd_env_lines': _refusing(systemd_env_lines),
        }

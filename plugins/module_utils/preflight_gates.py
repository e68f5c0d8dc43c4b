# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The preflight gates' verdicts: every gate of a host judged at once, from what the preflight role read.

The role reads the host (facts, gpu_info, df, the Python probe, apt_source_info, the upstreams' answers) and
hands it here with the thresholds (``judge(observed, policy)``); every gate gets a verdict (``pass``, ``fail``,
or ``not_checked`` with the reason: the driver gates cannot be judged when nvidia-smi does not answer) and its
figures, and the host fails once, listing every failing gate with its ``PREFLIGHT <gate>:`` message (the cause
and the fix). The messages are the ones the runbooks and tests quote.
"""

from __future__ import annotations

import re

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.nvidia_smi import compare_versions

PASS, FAIL, NOT_CHECKED = 'pass', 'fail', 'not_checked'

# The gates, in the order they are judged and listed (gate id, the word of its PREFLIGHT message).
GATES = (
    ('os', 'os'),
    ('nvidia_smi', 'nvidia-smi'),
    ('driver_minimum', 'driver'),
    ('driver_cuda', 'driver'),
    ('gpu_count', 'gpu_count'),
    ('compute_capability', 'compute_capability'),
    ('device_nodes', 'device_nodes'),
    ('disk', 'disk'),
    ('python_venv', 'python'),
    ('python_ensurepip', 'python'),
    ('transport', 'transport'),
    ('apt_source', 'apt_source'),
    ('upstream', 'upstream'),
)

NVIDIA_SMI_FIXES = {
    'not_found': 'install the user-space driver of the host\'s exact version in the container '
                 '(NVIDIA-Linux-x86_64-<host version>.run --no-kernel-module)',
    'driver_mismatch': 'the container\'s user-space driver must be the host kernel module\'s exact version; '
                       'reinstall it at the host\'s version',
    'no_driver': 'the host\'s kernel module is not loaded or the device nodes are not passed through; see the lxc_gpu_host role',
    'no_devices': 'no GPU is passed through to this container; see the lxc_gpu_host role',
}
NVIDIA_SMI_FIX_DEFAULT = 'check the driver on the LXC host and the GPU passthrough of this container'
PLAIN_HTTP = re.compile(r'(?i)http://')


class PreflightInputError(ValueError):
    """What the role handed over lacks something a gate needs (a bug of the role, not of the host)."""


def _gate(gate, verdict, figures, message=None, reason=None):
    entry = {'gate': gate, 'verdict': verdict, 'figures': figures}
    if message is not None:
        entry['message'] = message
    if reason is not None:
        entry['reason'] = reason
    return entry


def _version_at_least(version, minimum):
    try:
        return compare_versions(version, minimum) >= 0
    except ValueError:
        return False


def gate_os(os_id, supported):
    figures = {'os': os_id, 'supported': list(supported)}
    if os_id in supported:
        return _gate('os', PASS, figures)
    msg = ('PREFLIGHT os: %s is not supported (supported: %s). Fix: run the stack on one of those releases.'
           % (os_id, ', '.join(supported)))
    return _gate('os', FAIL, figures, msg)


def gate_nvidia_smi(gpu):
    smi = gpu.get('nvidia_smi') or {}
    kind = smi.get('error_kind')
    figures = {'path': smi.get('path'), 'error_kind': kind}
    if kind is None:
        return _gate('nvidia_smi', PASS, figures)
    msg = 'PREFLIGHT nvidia-smi: %s: %s. Fix: %s' % (kind, smi.get('error'), NVIDIA_SMI_FIXES.get(kind, NVIDIA_SMI_FIX_DEFAULT))
    return _gate('nvidia_smi', FAIL, figures, msg)


def _no_smi(gate, figures):
    return _gate(gate, NOT_CHECKED, figures, reason='nvidia-smi did not answer')


def gate_driver_minimum(gpu, minimum, cuda):
    driver = gpu.get('driver_version')
    figures = {'driver': driver, 'minimum': minimum}
    if (gpu.get('nvidia_smi') or {}).get('error_kind') is not None:
        return _no_smi('driver_minimum', figures)
    if driver is not None and _version_at_least(driver, minimum):
        return _gate('driver_minimum', PASS, figures)
    msg = ('PREFLIGHT driver: driver %s is below %s, the minimum for %s=%s (CUDA %s; from %s). Fix: upgrade the driver on the '
           'LXC host (and the container\'s user-space driver to the same version) to %s or newer (a later 580 LTS release, '
           'or a newer branch such as 590).'
           % (driver, minimum, cuda.get('package'), cuda.get('package_version'), cuda.get('version'),
              cuda.get('driver_minimum_from') or 'the declaration', minimum))
    return _gate('driver_minimum', FAIL, figures, msg)


def gate_driver_cuda(gpu, minimum, cuda):
    reported = gpu.get('cuda_driver_version')
    figures = {'cuda_driver_version': reported, 'toolkit': cuda.get('version')}
    if (gpu.get('nvidia_smi') or {}).get('error_kind') is not None:
        return _no_smi('driver_cuda', figures)
    if reported is None or _version_at_least(reported, cuda.get('version')):
        return _gate('driver_cuda', PASS, figures)
    msg = ('PREFLIGHT driver: driver %s reports "CUDA Version: %s" in nvidia-smi, older than the CUDA %s toolkit of the stack. '
           'Fix: upgrade the driver on the LXC host (and the container\'s user-space driver) to %s or newer.'
           % (gpu.get('driver_version'), reported, cuda.get('version'), minimum))
    return _gate('driver_cuda', FAIL, figures, msg)


def gate_gpu_count(gpu, expected):
    count = int(gpu.get('gpu_count') or 0)
    figures = {'visible': count, 'expected': int(expected)}
    if (gpu.get('nvidia_smi') or {}).get('error_kind') is not None:
        return _no_smi('gpu_count', figures)
    if count >= int(expected):
        return _gate('gpu_count', PASS, figures)
    msg = ('PREFLIGHT gpu_count: %d GPU(s) visible, %s expected. Fix: pass every GPU through to the container (lxc_gpu_host role) '
           'or set preflight_expected_gpu_count for this host.' % (count, expected))
    return _gate('gpu_count', FAIL, figures, msg)


def gate_compute_capability(gpu, required):
    required = str(required)
    gpus = gpu.get('gpus') or []
    wrong = [g for g in gpus if g.get('compute_cap') != required]
    figures = {'required': required, 'found': sorted(set(g.get('compute_cap') or 'unknown' for g in gpus)), 'wrong': len(wrong)}
    if (gpu.get('nvidia_smi') or {}).get('error_kind') is not None:
        return _no_smi('compute_capability', figures)
    if not wrong:
        return _gate('compute_capability', PASS, figures)
    listed = '; '.join('GPU %s %s is %s' % (g.get('index'), g.get('name'), g.get('compute_cap') or 'unknown') for g in wrong)
    msg = ('PREFLIGHT compute_capability: %d GPU(s) are not compute capability %s: %s. This stack is built and verified for '
           'sm_%s. Fix: run it on the right GPUs, or declare the fleet\'s capability (stack_declaration_gpu) after reviewing '
           'that every layer carries code for it.' % (len(wrong), required, listed, required.replace('.', '')))
    return _gate('compute_capability', FAIL, figures, msg)


def gate_device_nodes(gpu, control_nodes):
    summary = gpu.get('device_node_summary') or {}
    present = set('nvidia%s' % i for i in summary.get('gpu_indices') or [])
    control = summary.get('control') or {}
    missing = [n for n in ('nvidia%s' % g.get('index') for g in gpu.get('gpus') or []) if n not in present]
    missing += [n for n in control_nodes if not control.get(n)]
    not_char = list(summary.get('not_char_device') or [])
    figures = {'gpu_nodes': sorted(present), 'control': sorted(k for k, v in control.items() if v), 'missing': missing}
    if not missing:
        return _gate('device_nodes', PASS, figures)
    msg = 'PREFLIGHT device_nodes: missing or not character devices: %s' % ', '.join('/dev/' + n for n in missing)
    if not_char:
        msg += ' (present but not device nodes: %s)' % ', '.join(not_char)
    msg += '. Fix: bind-mount them into the container and allow their majors in the cgroup (lxc_gpu_host role).'
    return _gate('device_nodes', FAIL, figures, msg)


def parse_df(stdout):
    """'<free MiB> <mount point>' as the role's df line prints it -> (free_mb, mount)."""
    words = (stdout or '').split()
    if len(words) < 2 or not words[0].isdigit():
        raise PreflightInputError('the free-space reading is not "<MiB> <mount>": %r' % (stdout or '')[:200])
    return int(words[0]), words[1]


def gate_disk(disk_stdout, stack_mb, reserve_mb, stack_root):
    free, mount = parse_df(disk_stdout)
    need = int(stack_mb) + int(reserve_mb)
    figures = {'free_mb': free, 'need_mb': need, 'stack_mb': int(stack_mb), 'reserve_mb': int(reserve_mb), 'mount': mount}
    if free >= need:
        return _gate('disk', PASS, figures)
    msg = ('PREFLIGHT disk: %d MiB free on %s (holding %s); the new stack needs %s MiB plus a reserve of %s MiB. Fix: free space '
           'there (old stacks beyond the rollback window can be pruned) or move preflight_stack_root.'
           % (free, mount, stack_root, stack_mb, reserve_mb))
    return _gate('disk', FAIL, figures, msg)


def _last(lines):
    lines = [line for line in lines or [] if line]
    return lines[-1] if lines else ''


def gate_python(probe, version, tag):
    """Two gates: an interpreter with venv (a version line), then ensurepip (the probe's rc 0, a 'pip' line)."""
    out = list(probe.get('stdout_lines') or [])
    figures = {'python': out[0] if out else None, 'pip': out[1] if len(out) > 1 else None}
    if not out:
        msg = ('PREFLIGHT python: no python%s with the venv module on this host (%s). The stack\'s wheels are %s builds. '
               'Fix: install python%s and python%s-venv (Ubuntu 24.04 ships 3.12).'
               % (version, _last(probe.get('stderr_lines')) or probe.get('msg') or '', tag, version, version))
        return [_gate('python_venv', FAIL, figures, msg),
                _gate('python_ensurepip', NOT_CHECKED, figures, reason='no python%s with venv' % version)]
    venv = _gate('python_venv', PASS, figures)
    if probe.get('rc') == 0:
        return [venv, _gate('python_ensurepip', PASS, figures)]
    msg = ('PREFLIGHT python: python%s (%s) imports venv but has no working ensurepip (%s): `python%s -m venv` would fail after '
           'the CUDA toolkit is installed. Fix: install the python%s-venv package (apt-get install python%s-venv). '
           'Nothing was changed.' % (version, out[0], _last(probe.get('stderr_lines')) or 'no pip wheel', version, version, version))
    return [venv, _gate('python_ensurepip', FAIL, figures, msg)]


def gate_transport(key_url, insecure_allowed):
    plain = [u for u in [(key_url or '').strip()] if PLAIN_HTTP.match(u)]
    figures = {'plain_http': plain, 'insecure_http_allowed': bool(insecure_allowed)}
    if insecure_allowed or not plain:
        return _gate('transport', PASS, figures)
    msg = ('PREFLIGHT transport: cuda_toolkit_apt_key_url %s is plain HTTP: anyone on the path could hand over a key of their own. '
           'Fix: use https://, or, where the site accepts plain HTTP, set stack_declaration_allow_insecure_http: true with '
           'stack_declaration_insecure_http_reason. Nothing was changed.' % ', '.join(plain))
    return _gate('transport', FAIL, figures, msg)


def gate_apt_source(apt, fingerprint, repo_url, distro):
    """apt: apt_source_info's result, or None when the sources were not judged (switched off, unknown distribution)."""
    if apt is None:
        reason = 'existing CUDA sources not judged (preflight_check_cuda_apt_sources, or no CUDA repository for this OS)'
        return _gate('apt_source', NOT_CHECKED, {}, reason=reason)
    reuse = apt.get('reuse') or {}
    figures = {'decision': apt.get('decision'), 'reuse_file': reuse.get('file'), 'fingerprint': fingerprint or None}
    if fingerprint and apt.get('decision') != 'refuse':
        return _gate('apt_source', PASS, figures)
    if apt.get('problems'):
        detail = ' '.join(apt['problems'])
    else:
        detail = ('no fingerprint is declared for the key of %s, so neither that key nor an existing source of it can be checked. '
                  'Fix: declare it - stack_declaration_cuda.apt_signing_keys.%s (the NVIDIA key) or cuda_toolkit_apt_key_fingerprint '
                  '(the own key of a mirror).' % (repo_url, distro))
    return _gate('apt_source', FAIL, figures, 'PREFLIGHT apt_source: ' + detail)


def gate_upstream(answers, hostname):
    """answers: the uri loop's results ({item, status, msg}). The apt index must answer 200, a package host at all."""
    answers = list(answers or [])
    unreachable = [a for a in answers if a.get('status') == -1]
    unreachable += [a for a in answers if str(a.get('item', '')).endswith('/InRelease') and a.get('status') not in (-1, 200)]
    figures = {'probed': [a.get('item') for a in answers],
               'unreachable': ['%s -> %s' % (a.get('item'), a.get('status')) for a in unreachable]}
    if not answers:
        return _gate('upstream', NOT_CHECKED, figures, reason='this host fetches from no upstream (the controller serves it)')
    if not unreachable:
        return _gate('upstream', PASS, figures)
    listed = '; '.join('%s -> %s -> %s' % (a.get('item'), a.get('status'), a.get('msg') or '') for a in unreachable)
    msg = ('PREFLIGHT upstream: not reachable from %s: %s. Fix: check the declaration\'s upstream URLs (or stack_declaration_mirror_url), '
           'DNS and the proxy from this host; or fetch on the controller (python_stack_wheelhouse_source: controller). '
           'Nothing was changed.' % (hostname, listed))
    return _gate('upstream', FAIL, figures, msg)


def _need(mapping, key, where):
    if not isinstance(mapping, dict) or key not in mapping:
        raise PreflightInputError('%s lacks %r' % (where, key))
    return mapping[key]


def judge(observed, policy):
    """Every gate's verdict for one host; see the module docstring. Returns the role's preflight_result."""
    gpu = _need(observed, 'gpu', 'observed')
    cuda = _need(policy, 'cuda', 'policy')
    hostname = _need(observed, 'host', 'observed')
    os_id = _need(observed, 'os', 'observed')
    minimum = str(_need(policy, 'driver_minimum', 'policy'))
    python = _need(policy, 'python', 'policy')
    gates = [
        gate_os(os_id, list(_need(policy, 'supported_os', 'policy'))),
        gate_nvidia_smi(gpu),
        gate_driver_minimum(gpu, minimum, cuda),
        gate_driver_cuda(gpu, minimum, cuda),
        gate_gpu_count(gpu, _need(policy, 'expected_gpu_count', 'policy')),
        gate_compute_capability(gpu, _need(policy, 'compute_capability', 'policy')),
        gate_device_nodes(gpu, list(_need(policy, 'control_nodes', 'policy'))),
        gate_disk(_need(observed, 'disk', 'observed'), _need(policy, 'stack_disk_mb', 'policy'),
                  _need(policy, 'disk_reserve_mb', 'policy'), _need(policy, 'stack_root', 'policy')),
    ]
    gates += gate_python(_need(observed, 'python', 'observed'), _need(python, 'version', 'policy.python'),
                         _need(python, 'tag', 'policy.python'))
    gates += [
        gate_transport(policy.get('cuda_key_url'), policy.get('insecure_http_allowed', False)),
        gate_apt_source(observed.get('apt_sources'), policy.get('cuda_key_fingerprint') or '', policy.get('cuda_repo_url'),
                        policy.get('cuda_distro')),
        gate_upstream(observed.get('upstreams'), hostname),
    ]
    failed = [g for g in gates if g['verdict'] == FAIL]
    messages = [g['message'] for g in failed]
    result = {
        'host': hostname,
        'os': os_id,
        'passed': not failed,
        'gates': gates,
        'failed': [g['gate'] for g in failed],
        'not_checked': [g['gate'] for g in gates if g['verdict'] == NOT_CHECKED],
        'messages': messages,
        'msg': '',
    }
    if failed:
        head = 'PREFLIGHT: %d of %d gates failed on %s, nothing was changed:' % (len(failed), len(gates), hostname)
        result['msg'] = '\n'.join([head] + ['- ' + m for m in messages])
    result['lines'] = summary_lines(gates)
    return result


def describe(gate):
    """One line of figures per gate, for the role's summary and the run summary."""
    f = gate['figures']
    name = gate['gate']
    if gate['verdict'] == NOT_CHECKED:
        return 'not checked: %s' % gate.get('reason', '')
    text = {
        'os': lambda: f['os'],
        'nvidia_smi': lambda: f.get('error_kind') or 'answers (%s)' % (f.get('path') or 'PATH'),
        'driver_minimum': lambda: '%s, minimum %s' % (f['driver'], f['minimum']),
        'driver_cuda': lambda: 'CUDA %s (toolkit %s)' % (f['cuda_driver_version'], f['toolkit']),
        'gpu_count': lambda: '%s visible, %s expected' % (f['visible'], f['expected']),
        'compute_capability': lambda: '%s, %s required' % (', '.join(f['found']) or 'none', f['required']),
        'device_nodes': lambda: ('missing ' + ', '.join(f['missing'])) if f['missing'] else ', '.join(f['gpu_nodes'] + f['control']),
        'disk': lambda: '%s MiB free on %s, need %s' % (f['free_mb'], f['mount'], f['need_mb']),
        'python_venv': lambda: f['python'] or 'none',
        'python_ensurepip': lambda: f['pip'] or 'none',
        'transport': lambda: ('plain HTTP%s: %s' % (' (allowed)' if f['insecure_http_allowed'] else '', ', '.join(f['plain_http']))
                              if f['plain_http'] else 'https only'),
        'apt_source': lambda: f['decision'] + (' ' + f['reuse_file'] if f.get('reuse_file') else ''),
        'upstream': lambda: ('unreachable: ' + '; '.join(f['unreachable'])) if f['unreachable'] else '%d answered' % len(f['probed']),
    }[name]
    return text()


def summary_lines(gates):
    return ['%-19s %-11s %s' % (g['gate'], g['verdict'], describe(g)) for g in gates]

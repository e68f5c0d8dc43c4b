# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The verdicts of the verify role, one row (layer) each: GPUs, nvcc, the arch list variables, the bill of materials.

The rows of the per-package SM code come from arch_policy.judge(); this module judges the rest from what the
host answered (nvidia_smi.gather()'s result, nvcc's output, the environment, stack_bom's comparison) and lays
out the summary table. Every row is ``{'layer', 'verdict', 'ok', 'detail'}``.
"""

from __future__ import annotations

import re

ENV_NAMES = ('TORCH_CUDA_ARCH_LIST', 'FLASHINFER_CUDA_ARCH_LIST')
ROW_FORMAT = '%-31s %-11s %s'


def compute_capability(required_arch):
    """'sm_120' / 'sm_120a' / '120' -> '12.0'; '12.0' / '12.0a' -> '12.0'."""
    text = str(required_arch)
    if '.' in text:
        return re.sub(r'[af]$', '', text)
    digits = (re.findall(r'[0-9]+', text) or [''])[0]
    return '%s.%s' % (digits[:-1], digits[-1:])


def judge_gpus(gathered, cc):
    """The GPUs row from nvidia_smi.gather()'s result."""
    smi = gathered.get('nvidia_smi')
    smi_ok = smi is not None and smi.get('error_kind') is None
    count = int(gathered.get('gpu_count') or 0)
    gpus = gathered.get('gpus') or []
    wrong = [g for g in gpus if g.get('compute_cap') != cc]
    if not smi_ok:
        verdict = 'unreadable'
        detail = 'nvidia-smi %s: %s' % ((smi or {}).get('error_kind') or 'no_result', (smi or {}).get('error') or 'no answer')
    elif count == 0:
        verdict, detail = 'missing', 'no GPU visible'
    elif wrong:
        verdict = 'wrong_arch'
        detail = '; '.join('GPU %s %s is %s, not %s' % (g.get('index'), g.get('name'), g.get('compute_cap'), cc) for g in wrong)
    else:
        verdict = 'ok'
        names = []
        for g in gpus:
            if g.get('name') not in names:
                names.append(g.get('name'))
        detail = '%d x %s, compute %s' % (count, ', '.join(str(n) for n in names), cc)
    return {'layer': 'gpus', 'verdict': verdict, 'ok': verdict == 'ok', 'detail': detail}


def parse_nvcc_version(text):
    """(release, build) from ``nvcc --version``: ('13.0', '13.0.88'); '' for what is not there."""
    release = re.findall(r'release ([0-9.]+)', text or '')
    build = re.findall(r'V([0-9][0-9.]*)', text or '')
    return (release[0] if release else ''), (build[0] if build else '')


def judge_nvcc(path, exists, version, arch, declared_version, declared_build, cc):
    """The nvcc row. ``version`` and ``arch`` are (rc, stdout, stderr) of ``nvcc --version`` and
    ``nvcc --list-gpu-arch`` (rc None when they could not run)."""
    release, build = parse_nvcc_version(version[1])
    compute = 'compute_%s' % cc.replace('.', '')
    ran = version[0] == 0 and arch[0] == 0
    want_build = str(declared_build or '')
    drift = release != str(declared_version) or (len(want_build) > 0 and build != want_build)
    has_arch = compute in [line.strip() for line in (arch[1] or '').splitlines()]
    if not exists:
        detail = 'missing file %s' % path
    elif not ran:
        rc = version[0] if version[0] is not None else '?'
        detail = '%s does not run (rc %s): %s' % (path, rc, (version[2] or arch[2] or '').strip())
    elif drift:
        wanted = (' (V%s)' % want_build) if want_build else ''
        detail = '%s is release %s (V%s), declared %s%s' % (path, release or '?', build or '?', declared_version, wanted)
    elif not has_arch:
        detail = '%s --list-gpu-arch has no %s' % (path, compute)
    else:
        detail = 'release %s (V%s), %s listed' % (release, build, compute)
    verdict = 'missing' if not ran else 'drift' if drift else 'wrong_arch' if not has_arch else 'ok'
    return {'layer': 'nvcc', 'verdict': verdict, 'ok': ran and not drift and has_arch, 'detail': detail}


def judge_env(environ, name, cc):
    """The row of one arch list variable: not set, or it names the compute capability (12.0, 12.0a, 12.0+PTX)."""
    value = environ.get(name, '')
    has = re.search(r'(^|[;, ])' + re.escape(cc) + r'[af]?([+]PTX)?($|[;, ])', value) is not None
    if not value:
        detail = 'not set for %s' % (environ.get('USER') or 'the remote user')
    else:
        detail = '%s=%s%s%s' % (name, value, ' contains ' if has else ' lacks ', cc)
    return {'layer': 'env %s' % name, 'verdict': 'not_set' if not value else 'ok' if has else 'wrong_arch',
            'ok': not value or has, 'detail': detail}


def judge_bom(installed_exists, items, drift, msg, site_packages):
    """The bill of materials row from stack_bom.compare()'s items."""
    if not installed_exists:
        verdict = 'missing'
    elif not drift:
        verdict = 'ok'
    elif any(item.get('status') == 'drift' for item in items):
        verdict = 'drift'
    else:
        verdict = 'missing'
    return {'layer': 'bom', 'verdict': verdict, 'ok': installed_exists and not drift,
            'detail': ('site-packages %s does not exist' % site_packages) if not installed_exists else msg}


def summary(layers):
    """(table lines with a header, failure texts) for the summary and the VERIFY failure message."""
    lines = [ROW_FORMAT % ('layer', 'verdict', 'detail')]
    failures = []
    for row in layers:
        lines.append(ROW_FORMAT % (row['layer'], row['verdict'], row['detail']))
        if not row['ok']:
            failures.append('%s (%s)' % (row['layer'], row['detail']))
    return lines, failures

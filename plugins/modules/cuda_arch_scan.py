#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: cuda_arch_scan
short_description: Check that CUDA libraries carry SASS or PTX for a GPU architecture
version_added: 1.0.0
description:
  - Reads the CUDA fatbins of ELF shared libraries (C(libtorch_cuda.so), sgl-kernel's C(common_ops.abi3.so), the
    flashinfer JIT cache) in pure Python, without CUDA tools and without a GPU, and reports per file the SASS (cubin)
    and PTX architectures it contains, as C(cuobjdump --list-elf --list-ptx) lists them.
  - Gives each file a verdict for O(required_arch) - V(sass) (a cubin that runs natively), V(ptx_jit) (only PTX the
    driver can JIT-compile), V(missing) or V(unreadable).
  - "The rule for SASS: a cubin for C(sm_XY) runs on compute capability C(X.Z) with C(Z >= Y); so does a family cubin
    C(sm_XYf); an architecture-specific cubin C(sm_XYa) runs only on exactly C(X.Y). So C(sm_120), C(sm_120a) and
    C(sm_120f) all serve an SM120 GPU (12.0), while only C(sm_120) and C(sm_120f) would serve 12.1."
  - "The rule for PTX: C(compute_XY) PTX can be compiled for C(X.Y) and every later capability; C(compute_XYf) for the
    same major with a minor of at least C(Y); C(compute_XYa) only for exactly C(X.Y)."
  - Directories are walked for files matching O(patterns). Files found that way without any device code (C(libgomp.so),
    C(libtorch_cpu.so)) or that are not ELF (a linker script named C(libc.so)) are reported but are no failure; a file
    named explicitly in O(paths) must carry the architecture.
  - Reads only; changes nothing. Does not fail unless O(fail_on_missing=true).
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
options:
  paths:
    description:
      - Files and directories to scan. A directory is walked for files whose name matches O(patterns).
      - A path that does not exist is reported as V(unreadable).
    type: list
    elements: path
    required: true
  required_arch:
    description:
      - The GPU architecture the files must serve, as C(sm_120), C(120) or C(12.0).
      - A suffix (C(sm_120a)) is ignored, a GPU is C(12.0).
    type: str
    default: sm_120
  patterns:
    description:
      - Shell patterns (fnmatch) for the base names of the files taken from directories.
      - The default takes C(libfoo.so) and versioned names like C(libcudart.so.13), not C(libfoo.so.txt).
    type: list
    elements: str
    default: ['*.so', '*.so.[0-9]*']
  recurse:
    description:
      - Walk directories recursively. Symlinked directories are not followed.
    type: bool
    default: true
  all_fatbins:
    description:
      - Also read the relocatable device code (section C(__nv_relfatbin)) when the file has linked device code
        (C(.nv_fatbin)), like C(cuobjdump --all-fatbin). By default only the code the CUDA runtime loads is read.
    type: bool
    default: false
  embedded:
    description:
      - Whether to look for fatbins outside the fatbin sections, by their magic number.
      - V(auto) looks only in ELF files that have no fatbin section; V(always) also in those that have one (cuFFT keeps
        most of its kernels as fatbins in a data section and only a stub in C(.nv_fatbin)); V(never) does not look.
      - Such images count for the verdict; C(cuobjdump) does not list them.
    type: str
    choices: [auto, always, never]
    default: auto
  accept_ptx:
    description:
      - Whether a file with only JIT-compilable PTX for O(required_arch) (verdict V(ptx_jit)) passes.
    type: bool
    default: true
  fail_on_missing:
    description:
      - Fail when a file lacks the architecture (verdict V(missing), or V(ptx_jit) with O(accept_ptx=false)), cannot be
        read, or a directory has no matching file. The message names each such path.
    type: bool
    default: false
  include_entries:
    description:
      - Return every image of every file in RV(files[].entries), in file order. Large for C(libtorch_cuda.so)
        (thousands of images).
    type: bool
    default: false
notes:
  - "The fatbin format is not documented by NVIDIA. The reader was written against nvcc 13.0 output and checked
    byte-for-byte against C(cuobjdump) 13.2 on test libraries and on torch 2.11.0+cu130, cuRAND, cuFFT and nvJPEG."
  - Compressed images (LZ4, zstd) are recognised from their headers; they are not decompressed.
  - "A bare C(.cubin) is named as cuobjdump names it: C(sm_100a) when its ELF C(e_flags) carries the architecture-specific
    bit (0x8) or its ptxas note says C(-arch sm_100a); an C(sm_100f) cubin (known from the note) is listed as C(sm_100)
    but keeps C(sm_100f) in RV(files[].sass). Checked against cuobjdump 13.2 on all 8,934 cubins of flashinfer-cubin 0.6.4."
  - Files are read with C(pread), a header at a time, never past the size they had when opened (a file truncated while it
    is read is V(truncated), not a crash); time and memory stay linear in the file size. At most 65,536 images per file
    are kept (see RV(files[].entries_truncated)).
  - A path that is not valid UTF-8 is reported with its bytes as backslash escapes (C(libk_\xff.so)).
seealso:
  - name: CUDA binary utilities (cuobjdump)
    description: The NVIDIA tool whose C(--list-elf --list-ptx) listing this module reproduces.
    link: https://docs.nvidia.com/cuda/cuda-binary-utilities/index.html
"""

EXAMPLES = r"""
- name: Check that torch, sgl-kernel and the flashinfer JIT cache carry SM120 code
  gpuops.sglang_stack.cuda_arch_scan:
    paths:
      - /opt/sglang/stacks/current/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so
      - /opt/sglang/stacks/current/venv/lib/python3.12/site-packages/sgl_kernel
      - /opt/sglang/stacks/current/venv/lib/python3.12/site-packages/flashinfer_jit_cache
    required_arch: sm_120
    fail_on_missing: true
  register: sm120

- name: Show what each library carries
  ansible.builtin.debug:
    msg: "{{ item.path }}: {{ item.verdict }} (SASS {{ item.sass | join(' ') }}; PTX {{ item.ptx | join(' ') }})"
  loop: "{{ sm120.files }}"
  loop_control:
    label: "{{ item.path }}"

- name: Require native SASS, PTX JIT not accepted
  gpuops.sglang_stack.cuda_arch_scan:
    paths: /opt/sglang/stacks/current/venv/lib/python3.12/site-packages/sgl_kernel
    required_arch: "12.0"
    accept_ptx: false
  register: sgl

- name: Assert on the summary instead of failing in the module
  ansible.builtin.assert:
    that:
      - sgl.summary.ok
    fail_msg: "{{ sgl.msg }}"
"""

RETURN = r"""
files:
  description: One report per file scanned, in the order of O(paths) (directory contents sorted by path).
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The file.
      type: str
      sample: /opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so
    explicit:
      description: Whether the file was named in O(paths) (V(false) when found by walking a directory).
      type: bool
      sample: true
    verdict:
      description: V(sass), V(ptx_jit), V(missing) or V(unreadable) for O(required_arch).
      type: str
      sample: sass
    status:
      description:
        - RV(files[].verdict), except for a file found in a directory that has no device code (V(no_device_code))
          or is not ELF (V(skipped)).
      type: str
      sample: sass
    ok:
      description: Whether this file passes (see O(fail_on_missing)).
      type: bool
      sample: true
    matching:
      description: The SASS and PTX targets of the file that serve O(required_arch).
      type: dict
      sample: {sass: [sm_120, sm_120a], ptx: []}
    error:
      description:
        - V(null), or why the file could not be read - V(missing) (no such file), V(io_error), V(not_elf),
          V(unsupported) (not 64-bit little endian), V(no_fatbin) (ELF without device code), V(truncated), V(corrupt).
      type: str
      sample: null
    error_detail:
      description: A human readable explanation of RV(files[].error).
      type: str
      sample: null
    format:
      description: V(elf), V(fatbin) (a bare fatbin file), V(cubin) (a bare cubin file), or V(null) when unreadable.
      type: str
      sample: elf
    source:
      description:
        - Where the images were found - V(sections) (C(.nv_fatbin) or C(__nv_relfatbin), as cuobjdump reads them),
          V(embedded) (only outside those sections), V(file) (a bare fatbin or cubin).
      type: str
      sample: sections
    size:
      description: File size in bytes.
      type: int
      sample: 456142457
    sections:
      description: The fatbin sections read.
      type: list
      elements: str
      sample: [.nv_fatbin]
    fatbins:
      description: Number of fatbin containers read.
      type: int
      sample: 444
    sass:
      description:
        - Sorted unique SASS targets. A family cubin keeps its C(f) (V(sm_120f)), although cuobjdump names it V(sm_120).
      type: list
      elements: str
      sample: [sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_103a, sm_120, sm_120a, sm_121a]
    ptx:
      description: Sorted unique PTX targets, named as cuobjdump names them (V(sm_120) for C(compute_120)).
      type: list
      elements: str
      sample: []
    counts:
      description: Number of images by kind (C(other) is LTO IR and unknown kinds).
      type: dict
      sample: {elf: 2789, ptx: 0, other: 0}
    compressed:
      description: Whether any image is compressed.
      type: bool
      sample: true
    compression:
      description: The compression methods seen (V(lz4), V(zstd)).
      type: list
      elements: str
      sample: [zstd]
    embedded:
      description: Number of images found outside the fatbin sections (see O(embedded)).
      type: int
      sample: 0
    entries_truncated:
      description:
        - Whether reading stopped at a limit (more than 65,536 images, or more than 400,000 entry headers examined by the
          search for embedded fatbins); what was read so far is reported. Such a file's verdict is V(unreadable) unless
          the images read already hold SASS for O(required_arch).
      type: bool
      sample: false
    limit_detail:
      description: Which limit stopped the reading, or V(null).
      type: str
      sample: null
    entries:
      description:
        - Every image in file order, when O(include_entries=true) - kind (V(elf), V(ptx), V(lto), V(unknown)), arch
          (as cuobjdump names it), target (with its C(a)/C(f) suffix), sm, variant, compression, size, section,
          fatbin index, offset, and whether cuobjdump lists it.
      type: list
      elements: dict
      returned: when O(include_entries=true)
summary:
  description: Totals over all files.
  returned: always
  type: dict
  contains:
    required_arch:
      description: O(required_arch), normalised.
      type: str
      sample: sm_120
    compute_capability:
      description: The compute capability it stands for.
      type: str
      sample: "12.0"
    scanned:
      description: Number of files scanned.
      type: int
      sample: 3
    sass:
      description: Files with native SASS for the architecture.
      type: list
      elements: str
    ptx_jit:
      description: Files with only JIT-compilable PTX for it.
      type: list
      elements: str
    missing:
      description: Files that lack it.
      type: list
      elements: str
    unreadable:
      description: Files that could not be read.
      type: list
      elements: str
    no_device_code:
      description: Files found in directories that have no CUDA device code at all (not a failure).
      type: list
      elements: str
    skipped:
      description: Files found in directories that are not ELF files (not a failure).
      type: list
      elements: str
    empty_paths:
      description: Directories in which no file matched O(patterns).
      type: list
      elements: str
    failed:
      description: The paths that fail (see O(fail_on_missing)).
      type: list
      elements: str
    ok:
      description: Whether nothing failed.
      type: bool
      sample: true
msg:
  description: A one-line summary.
  returned: always
  type: str
  sample: "sm_120: 3 file(s) scanned: 3 sass, 0 missing"
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import fatbin


def main():
    module = AnsibleModule(
        argument_spec=dict(
            paths=dict(type='list', elements='path', required=True),
            required_arch=dict(type='str', default='sm_120'),
            patterns=dict(type='list', elements='str', default=list(fatbin.DEFAULT_PATTERNS)),
            recurse=dict(type='bool', default=True),
            all_fatbins=dict(type='bool', default=False),
            embedded=dict(type='str', default='auto', choices=['auto', 'always', 'never']),
            accept_ptx=dict(type='bool', default=True),
            fail_on_missing=dict(type='bool', default=False),
            include_entries=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    params = module.params
    try:
        fatbin.parse_arch(params['required_arch'])
    except ValueError as exc:
        module.fail_json(msg=str(exc))

    result = fatbin.scan_paths(
        params['paths'],
        required=params['required_arch'],
        patterns=params['patterns'],
        recurse=params['recurse'],
        all_fatbins=params['all_fatbins'],
        embedded=params['embedded'],
        accept_ptx=params['accept_ptx'],
        include_entries=params['include_entries'],
    )
    summary = result['summary']
    msg = fatbin.summary_message(summary)
    if params['fail_on_missing'] and not summary['ok']:
        reasons = []
        for report in result['files']:
            if not report['ok']:
                if report['status'] == fatbin.VERDICT_UNREADABLE and report['entries_truncated']:
                    reasons.append('%s: unreadable (%s; no SASS for %s in what was read)'
                                   % (report['path'], report['limit_detail'], summary['required_arch']))
                elif report['status'] == fatbin.VERDICT_UNREADABLE:
                    reasons.append('%s: unreadable (%s: %s)' % (report['path'], report['error'], report['error_detail']))
                elif report['status'] == fatbin.VERDICT_PTX_JIT:
                    reasons.append('%s: only PTX (%s), no SASS for %s' % (report['path'], ' '.join(report['matching']['ptx']),
                                                                          summary['required_arch']))
                else:
                    reasons.append('%s: no SASS or PTX for %s (SASS: %s; PTX: %s)' % (
                        report['path'], summary['required_arch'], ' '.join(report['sass']) or 'none', ' '.join(report['ptx']) or 'none'))
        for path in summary['empty_paths']:
            reasons.append('%s: no file matching %s' % (path, ' '.join(params['patterns'])))
        module.fail_json(msg='%s. Failed: %s' % (msg, '; '.join(reasons)), changed=False, **result)
    module.exit_json(changed=False, msg=msg, **result)


if __name__ == '__main__':
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: apt_source_info
short_description: Find the apt sources of a repository and the keys they trust, and say whether a new source may be added
version_added: 1.0.0
description:
  - Reads C(sources.list), C(sources.list.d/*.list) (one-line style) and C(sources.list.d/*.sources) (deb822) and reports
    every source of the repository O(repo_url) (and of O(related_urls)), with or without a trailing slash, over http or
    https, with the OpenPGP fingerprints of the keys each of them trusts (C(signed-by) a binary or armored keyring, a
    list of fingerprints, a key embedded in a deb822 stanza, or apt's global keyrings when there is no Signed-By).
  - Decides, in RV(decision), what a role that wants a source of O(repo_url) signed by O(key_fingerprint) may do -
    V(reuse) an existing source that trusts exactly that key, V(add) its own when there is none, or V(refuse) (with
    the file and the fix in RV(problems)) when an existing source trusts another key (apt would then refuse every
    source with C(Conflicting values set for option Signed-By)), sets C(trusted=yes), or when sources of the URL
    already disagree.
  - Optionally fingerprints key files (O(key_files)), such as a downloaded repository key before it is trusted.
  - Reads only; changes nothing. Fingerprints are computed from the key packets in Python; no gpg is needed.
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
options:
  repo_url:
    description:
      - The repository URL the caller's own source would use (for NVIDIA's CUDA repository
        C(https://developer.download.nvidia.com/compute/cuda/repos/<distro>/x86_64/)).
      - Existing sources of this URL (http or https, trailing slash or not) are the ones that could conflict.
    type: str
    required: true
  related_urls:
    description:
      - Other URLs of the same repository (NVIDIA's when the caller uses a mirror). Their sources are reported, and a
        C(trusted=yes) on any of them is refused, but they do not conflict with a source of O(repo_url).
    type: list
    elements: str
    default: []
  key_fingerprint:
    description:
      - The declared fingerprint of the repository key (40 hex digits for a v4 key, 64 for v6; spaces allowed).
      - An existing source is reused only when its keyring holds exactly this key.
      - Empty means none is declared; an existing source of O(repo_url) is then refused.
    type: str
    default: ""
  managed_files:
    description:
      - Source files the caller writes itself (for example C(/etc/apt/sources.list.d/cuda-debian12.sources)); they are
        not judged, since the caller rewrites or removes them.
    type: list
    elements: path
    default: []
  key_files:
    description:
      - Key files to fingerprint and compare with O(key_fingerprint) (RV(key_files)).
    type: list
    elements: path
    default: []
  apt_dir:
    description:
      - apt's configuration directory (C(sources.list), C(sources.list.d), C(trusted.gpg), C(trusted.gpg.d)).
    type: path
    default: /etc/apt
notes:
  - apt compares Signed-By values as strings, not keys; two existing sources of one URL that point at two files of the
    same key still conflict, and are refused.
seealso:
  - name: sources.list(5)
    description: The one-line and deb822 source formats and the Signed-By option.
    link: https://manpages.debian.org/bookworm/apt/sources.list.5.en.html
"""

EXAMPLES = r"""
- name: Ask whether the CUDA repository may be added
  gpuops.sglang_stack.apt_source_info:
    repo_url: https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/
    key_fingerprint: EB693B3035CD5710E231E123A4B469963BF863CC
    managed_files:
      - /etc/apt/sources.list.d/cuda-debian12.sources
  register: cuda_sources

- name: Refuse before anything changes
  ansible.builtin.assert:
    that: cuda_sources.decision != 'refuse'
    fail_msg: "{{ cuda_sources.problems | join(' ') }}"

- name: Check a downloaded key before it is trusted
  gpuops.sglang_stack.apt_source_info:
    repo_url: https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/
    key_fingerprint: EB693B3035CD5710E231E123A4B469963BF863CC
    key_files:
      - /tmp/cuda-key.download
  register: cuda_key
"""

RETURN = r"""
decision:
  description: V(add) (no source of O(repo_url) besides O(managed_files)), V(reuse) (one trusts exactly the declared key) or V(refuse).
  returned: always
  type: str
  sample: reuse
reuse:
  description: The existing source to use instead of adding one (an element of RV(sources)); null unless RV(decision) is V(reuse).
  returned: always
  type: dict
  sample: {file: /etc/apt/sources.list.d/cuda-debian12-x86_64.list, line: 1, signed_by: /usr/share/keyrings/cuda-archive-keyring.gpg}
problems:
  description: Why RV(decision) is V(refuse), one sentence each, naming the file, the line and the fix.
  returned: always
  type: list
  elements: str
  sample: []
read_problems:
  description: Source files that could not be read or parsed (reported; apt would complain about them itself).
  returned: always
  type: list
  elements: str
  sample: []
fingerprint:
  description: O(key_fingerprint) normalised (upper case, no spaces); null when it is empty or not a fingerprint.
  returned: always
  type: str
  sample: EB693B3035CD5710E231E123A4B469963BF863CC
sources:
  description:
    - The enabled and disabled sources of O(repo_url) and O(related_urls), outside O(managed_files).
    - Each has C(file), C(line), C(format) (V(one-line) or V(deb822)), C(types), C(uris), C(suites), C(signed_by), C(trusted),
      C(enabled), C(same_url) (a source of O(repo_url) itself), C(key_matches) and C(trust) (C(kind), C(keyrings),
      C(primaries), C(subkeys), C(errors)).
  returned: always
  type: list
  elements: dict
key_files:
  description: One entry per O(key_files) - C(path), C(format), C(primaries), C(subkeys), C(uids), C(matches), C(error).
  returned: always
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.apt_sources import (
    check_key_file,
    judge,
    normalize_fingerprint,
    read_sources,
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            repo_url=dict(type='str', required=True),
            related_urls=dict(type='list', elements='str', default=[]),
            # Not secrets: a public key's fingerprint and the paths of keyring files.
            key_fingerprint=dict(type='str', default='', no_log=False),
            managed_files=dict(type='list', elements='path', default=[]),
            key_files=dict(type='list', elements='path', default=[], no_log=False),
            apt_dir=dict(type='path', default='/etc/apt'),
        ),
        supports_check_mode=True,
    )
    params = module.params
    if params['key_fingerprint'] and normalize_fingerprint(params['key_fingerprint']) is None:
        module.fail_json(msg='key_fingerprint "%s" is not an OpenPGP fingerprint (40 hex digits for a v4 key, 64 for v6)'
                         % params['key_fingerprint'])
    entries, read_problems = read_sources(params['apt_dir'])
    verdict = judge(entries, params['repo_url'], params['key_fingerprint'], related_urls=params['related_urls'],
                    managed_files=params['managed_files'], apt_dir=params['apt_dir'])
    key_files = [check_key_file(path, params['key_fingerprint']) for path in params['key_files']]
    module.exit_json(changed=False, decision=verdict['decision'], reuse=verdict['reuse'], problems=verdict['problems'],
                     read_problems=read_problems, fingerprint=verdict['fingerprint'], sources=verdict['sources'],
                     key_files=key_files)


if __name__ == '__main__':
    main()

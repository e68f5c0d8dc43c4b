#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_baseline_info
short_description: Find and describe the SGLang service a host runs, and the baseline recorded of it
version_added: 1.0.0
description:
  - Finds the SGLang server that serves on the host and its systemd unit, and describes it, exactly as
    M(gpuops.sglang_stack.sglang_baseline) does before it records (the same refusals, starting with C(BASELINE:)).
  - Reports the baseline recorded under O(root)C(/baseline), if any.
  - Writes nothing. No value of an environment variable is in the result, only names.
author:
  - gpuops.sglang_stack maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.sglang_stack.attributes
  - gpuops.sglang_stack.sglang_baseline
notes:
  - Run as root (C(/proc/<pid>/environ) of the service user's process and the environment files are root's to read).
  - The collection's C(docs/adoption.md) describes how the service is found and what is refused.
"""

EXAMPLES = r"""
- name: What serves on this host before the first upgrade
  gpuops.sglang_stack.sglang_baseline_info:
  register: serving

- name: Show the checkout commit and port
  ansible.builtin.debug:
    msg: >-
      {{ serving.unit }} serves sglang {{ serving.description.sglang.version }}
      at {{ serving.description.checkout.commit | default('-') }} on port {{ serving.description.port }}
  when: serving.found
"""

RETURN = r"""
found:
  description: Whether an SGLang service serves.
  returned: always
  type: bool
  sample: true
unit:
  description: The unit that serves; null when nothing serves.
  returned: always
  type: str
  sample: sglang.service
description:
  description: What serves, as the C(description) that M(gpuops.sglang_stack.sglang_baseline) returns; null when nothing serves.
  returned: always
  type: dict
unit_file_state:
  description: The unit's C(UnitFileState); null when nothing serves.
  returned: always
  type: str
  sample: enabled
baseline_dir:
  description: Where the baseline is recorded.
  returned: always
  type: str
  sample: /opt/sglang/baseline
recorded:
  description: Whether a baseline is recorded.
  returned: always
  type: bool
manifest:
  description: The recorded manifest; null when none is recorded.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.sglang_stack.plugins.module_utils.sglang_baseline import BaselineError, Host, survey


def main():
    module = AnsibleModule(
        argument_spec=dict(
            unit=dict(type='str'),
            root=dict(type='path', default='/opt/sglang'),
            probe_timeout=dict(type='int', default=120),
        ),
        supports_check_mode=True,
    )
    try:
        out = survey(Host(module), module.params['unit'], module.params['root'], timeout=module.params['probe_timeout'])
    except BaselineError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, **out)


if __name__ == '__main__':
    main()

#!/usr/bin/env bash
# Device run: the collection's playbooks/allreduce_probe.yml through ansible-core (carried as wheels in .whl2/),
# on the GPU machine itself (connection local), under the NCCL environment the nccl_patches role writes for
# PCIe-only Blackwell (rendered from its template and defaults), with issue 9's sweep of NCCL settings.
# The "stack" is a directory whose venv/bin/python is the machine's torch interpreter.
# Usage (repository root): tests/device/probe_playbook_run.sh OUTDIR
set -eu
out=${1:?usage: $0 OUTDIR}
mkdir -p "$out"
# NVLink multicast stays off on the shared hosts (KINDS.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
python3 -m venv /tmp/ansible-venv
/tmp/ansible-venv/bin/pip install -q --no-index .whl2/*.whl
mkdir -p /tmp/ac/ansible_collections/gpuops
ln -sfn "$PWD" /tmp/ac/ansible_collections/gpuops/sglang_stack
export ANSIBLE_COLLECTIONS_PATH=/tmp/ac ANSIBLE_HOST_KEY_CHECKING=False
# The probe runs as the service user (sglang_service's defaults: sglang, /var/lib/sglang, /var/cache/sglang), as on a
# GPU host where the service is installed: the real GPUs and NCCL, opened by a user that is not root.
id sglang >/dev/null 2>&1 || useradd --system --home-dir /var/lib/sglang --shell /usr/sbin/nologin sglang
install -d -o sglang -g sglang -m 0750 /var/lib/sglang /var/cache/sglang
stack=/tmp/stack-probe
mkdir -p $stack/venv/bin
# A wrapper, not a symlink: a symlinked venv interpreter outside its venv loses the venv's site-packages.
printf '#!/bin/sh\nexec /opt/torch/.venv/bin/python "$@"\n' >$stack/venv/bin/python
chmod +x $stack/venv/bin/python
printf '[sglang_gpu_hosts]\nlocalhost ansible_connection=local ansible_python_interpreter=/tmp/ansible-venv/bin/python\n' >/tmp/inv.ini
cat >/tmp/render-nccl-env.yml <<YML
- name: Write the NCCL environment as nccl_patches does (its template and defaults)
  hosts: sglang_gpu_hosts
  gather_facts: false
  vars_files: [$PWD/roles/nccl_patches/defaults/main.yml]
  vars:
    nccl_patches_stack_dir: $stack
  tasks:
    - name: Render nccl.env
      ansible.builtin.template:
        src: $PWD/roles/nccl_patches/templates/nccl.env.j2
        dest: $stack/nccl.env
        mode: "0644"
YML
/tmp/ansible-venv/bin/ansible-playbook -i /tmp/inv.ini /tmp/render-nccl-env.yml >"$out/render.txt" 2>&1
cp $stack/nccl.env "$out/nccl.env"
# PROBE_SWEEP replaces the sweep (a JSON list of settings), e.g. a short one to save device time.
sweep=${PROBE_SWEEP:-'[{"name": "default"}, {"name": "algo_ring", "env": {"NCCL_ALGO": "Ring"}}, {"name": "algo_tree", "env": {"NCCL_ALGO": "Tree"}},
 {"name": "proto_ll", "env": {"NCCL_PROTO": "LL"}}, {"name": "proto_ll128", "env": {"NCCL_PROTO": "LL128"}},
 {"name": "proto_simple", "env": {"NCCL_PROTO": "Simple"}},
 {"name": "channels_2", "env": {"NCCL_MIN_NCHANNELS": "2", "NCCL_MAX_NCHANNELS": "2"}},
 {"name": "channels_4", "env": {"NCCL_MIN_NCHANNELS": "4", "NCCL_MAX_NCHANNELS": "4"}},
 {"name": "channels_8", "env": {"NCCL_MIN_NCHANNELS": "8", "NCCL_MAX_NCHANNELS": "8"}},
 {"name": "channels_16", "env": {"NCCL_MIN_NCHANNELS": "16", "NCCL_MAX_NCHANNELS": "16"}},
 {"name": "p2p_disabled", "env": {"NCCL_P2P_DISABLE": "1"}}]'}
ref='{"4096": 6.15, "16384": 6.70, "65536": 7.11, "262144": 8.38, "1048576": 13.60}'
set +e
/tmp/ansible-venv/bin/ansible-playbook -i /tmp/inv.ini playbooks/allreduce_probe.yml -v \
  -e allreduce_probe_stack_dir=$stack -e allreduce_probe_report_dir="$out" \
  -e "{\"allreduce_probe_env\": {\"NCCL_NVLS_ENABLE\": \"0\"}, \"allreduce_probe_sweep\": $sweep, \"allreduce_probe_reference_us\": $ref}" \
  >"$out/playbook.txt" 2>&1
echo "playbook rc=$?" >>"$out/playbook.txt"

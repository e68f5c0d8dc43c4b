#!/usr/bin/env bash
# The main job, from a fresh clone: set up the controller and the test bed (base images, the local
# upstream mirror), create the containers that stand in for the LXC GPU hosts (molecule scenario
# "default": one Debian 13 host, 8x RTX PRO 6000, replayed nvidia-smi), and run the upgrade playbook
# against them. The containers stay up afterwards for inspection:
#   docker exec -it sglang-gpu-d13 bash        .venv/bin/molecule destroy -s default   (clean up)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scripts/setup-controller.sh
export PATH="$root/.venv/bin:$PATH" ANSIBLE_COLLECTIONS_PATH="$root/build/collections" ANSIBLE_CONFIG="$root/ansible.cfg"
tests/testbed/build_base_images.sh
python3 tests/testbed/mirror/build_mirror.py --out build/mirror
tests/testbed/mirror/serve.sh start
# converge creates and prepares the containers on first use, then runs the upgrade playbook
# and the switch playbook (molecule/default/converge.yml imports gpuops.sglang_stack.upgrade and .switch).
molecule converge -s default
echo "main job done: upgraded and switched $(docker ps --filter name=sglang-gpu- --format '{{.Names}}' | tr '\n' ' ')"

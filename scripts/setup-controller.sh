#!/usr/bin/env bash
# Set up everything the controller needs, from a fresh clone, idempotently:
#   - Debian packages for the test bed (debootstrap, apt repo tools, gpg),
#   - the pinned controller virtualenv in .venv (requirements/controller.txt),
#   - the collection visible to Ansible as gpuops.sglang_stack (build/collections),
#   - the offline pip bootstrap ansible-test --venv needs (its get-pip download is unreachable here).
# Safe to run again: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

need_apt=()
for pkg in debootstrap dpkg-dev apt-utils gnupg python3-venv; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || need_apt+=("$pkg")
done
if [ -f tests/testbed/apt-requirements.txt ]; then
  while read -r pkg; do
    case "$pkg" in ''|'#'*) continue ;; esac
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || need_apt+=("$pkg")
  done < tests/testbed/apt-requirements.txt
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# The controller's interpreter: Debian's python3.11 where it is installed. Debian builds it with profile-guided and
# link-time optimisation and the machine's pyenv build has neither: the same Python loop ran 1.5x as fast, and
# Ansible's controller, ansible-lint and ansible-test are Python (docs/performance.md, 2026-12-05). Else python3.11
# from PATH, else python3; CONTROLLER_PYTHON names another.
python=${CONTROLLER_PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3.11 ] && /usr/bin/python3.11 -c 'import ensurepip, venv' 2>/dev/null; then python=/usr/bin/python3.11
  elif command -v python3.11 >/dev/null; then python=python3.11
  else python=python3; fi
fi
stamp=.venv/.requirements.sha256
want=$(scripts/venv-stamp.sh requirements/controller.txt "$python")
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: controller virtualenv (.venv) from requirements/controller.txt"
  rm -rf .venv
  "$python" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -U 'pip==25.3'
  .venv/bin/pip install -q --disable-pip-version-check -r requirements/controller.txt
  echo "$want" >"$stamp"
fi

# Ansible finds the collection through this path (ansible.cfg: collections_path).
mkdir -p build/collections/ansible_collections/gpuops
ln -sfn "$root" build/collections/ansible_collections/gpuops/sglang_stack

# ansible-test --venv's get-pip download is unreachable here: an offline stand-in (scripts/ansible-test-pip-shim.sh).
scripts/ansible-test-pip-shim.sh .venv/bin/python
ansible_version=$(.venv/bin/ansible --version)  # whole output first: a pipe to head can break ansible's print
echo "setup: controller ready (${ansible_version%%$'\n'*})"

#!/usr/bin/env bash
# ansible-test with an ansible-core other than the controller's (scripts/test-all.sh, stages
# sanity-<version> and units-<version>), run from the checkout's root on a prepared collection tree:
#   scripts/ansible-test-core.sh VERSION PYTHON TREE sanity|units [ANSIBLE-TEST ARGUMENTS...]
# The virtualenv build/core-<version>/venv is made with PYTHON from requirements/core-<version>.txt
# when it is missing or that file or PYTHON changed (their sha256 is kept in the virtualenv).
set -euo pipefail
v=$1 py=$2 tree=$3 what=$4
shift 4
venv=$PWD/build/core-$v/venv req=requirements/core-$v.txt
want=$(scripts/venv-stamp.sh "$req" "$py")
if [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  echo "core $v: virtualenv $venv from $req"
  rm -rf "$venv" && "$py" -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
  echo "$want" >"$venv/.requirements.sha256"
fi
scripts/ansible-test-pip-shim.sh "$venv/bin/python"
export PATH=$venv/bin:$PATH
pyver=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
cd "$tree"
exec ansible-test "$what" --venv --python "$pyver" --color no "$@"

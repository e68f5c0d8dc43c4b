#!/usr/bin/env bash
# ansible-test --venv downloads a get-pip script from a host that is unreachable here; it runs the
# cached file instead when present. This stand-in runs pip from the PyPI pip wheel of the version
# ansible-test asks for (read from ansible-test itself, so a core upgrade keeps working).
# Usage: scripts/ansible-test-pip-shim.sh PYTHON   (the python of a virtualenv holding ansible-core)
# The cache is ansible-test's own: $HOME/.ansible/test/cache. Safe to run again.
set -euo pipefail
py=$1
pipver=$("$py" - <<'PY'
import re, ansible_test, os
src = open(os.path.join(os.path.dirname(ansible_test.__file__), '_internal', 'python_requirements.py')).read()
print(re.search(r"pip='([0-9.]+)'", src).group(1))
PY
)
cache="${HOME}/.ansible/test/cache"
shim="$cache/get_pip_${pipver//./_}.py"
if [ ! -f "$shim" ] || ! ls "$cache"/pip-"$pipver"-py3-none-any.whl >/dev/null 2>&1; then
  echo "setup: offline get-pip bootstrap for ansible-test (pip $pipver)"
  mkdir -p "$cache"
  "$py" -m pip download -q --disable-pip-version-check --no-deps -d "$cache" "pip==$pipver"
  cat >"$shim" <<PY
# Offline stand-in for ansible-test's get-pip download: installs pip from the cached wheel.
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "pip-$pipver-py3-none-any.whl"))
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
from pip._internal.cli.main import main
sys.exit(main(["install"] + args))
PY
fi

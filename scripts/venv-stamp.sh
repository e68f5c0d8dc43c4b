#!/usr/bin/env bash
# The stamp a virtualenv of the test command keeps (scripts/setup-controller.sh, scripts/ansible-test-core.sh):
#   scripts/venv-stamp.sh REQUIREMENTS PYTHON
# prints the sha256 of the requirements file and of the interpreter (its path and version): another of either
# makes the virtualenv again.
set -euo pipefail
(cat "$1"; "$2" -c 'import sys; print(sys.executable, sys.version)') | sha256sum | cut -d' ' -f1

#!/usr/bin/env bash
# The one test command: sets everything up from a fresh clone and runs every gate.
#   ansible-lint (production profile), ansible-test sanity and units on the built collection,
#   galaxy-importer on the built tarball, then the molecule scenarios on the local test bed
#   (debootstrap base images, the signed local upstream mirror, the GPU stand-in).
# Exits non-zero when any stage fails; ends with one summary line "N passed, N failed".
# Usage: scripts/test-all.sh [stage ...]   stages: lint build sanity units sanity-2.18 units-2.18 sanity-2.20
#   units-2.20 importer testbed testbed-units ee molecule lxc-real
#   lxc-real: a real LXC container with the lxc_gpu_host configuration (tests/lxc_real/run.sh; root, lxc, busybox-static)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
export PATH="$root/.venv/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="$root/build/collections"
export ANSIBLE_CONFIG="$root/ansible.cfg"
export ANSIBLE_FORCE_COLOR=0 PY_COLORS=0
log_dir=build/test-logs
# Every folder of molecule/ with a molecule.yml is a scenario (resources/ holds what they share).
# The extended scenarios are left out of the default run, for its time (README, "Tests"): the test command took
# 75 min on this 2-core machine and its CI run stopped at 90 (2026-12-05). What each shows is also shown, in part,
# by the default run: faults' injected faults by preflight_refusals and stack_lifecycle (the same refusals), its
# stale patch by the sglang_patches unit tests (test_conflict_fails_and_changes_nothing); download_once (controller mode) has no other scenario.
# MOLECULE_EXTENDED=1 adds them; MOLECULE_SCENARIOS=<names> runs exactly those.
scenarios_extended=" download_once faults "
scenarios=${MOLECULE_SCENARIOS:-$(for f in molecule/*/molecule.yml; do s=$(basename "$(dirname "$f")")
  [ -n "${MOLECULE_EXTENDED:-}" ] || [[ "$scenarios_extended" != *" $s "* ]] && echo "$s"; done | tr '\n' ' ')}
version=$(awk '/^version:/{print $2}' galaxy.yml)
tarball="build/dist/gpuops-sglang_stack-$version.tar.gz"

passed=0; failed=0; results=()
stage() {  # stage NAME COMMAND... : run, time, log; never stops the run
  local name=$1; shift
  local start end rc
  start=$(date +%s)
  echo "=== $name: $*"
  "$@" > >(tee "$log_dir/$name.log") 2>&1
  rc=$?
  end=$(date +%s)
  if [ $rc -eq 0 ]; then passed=$((passed + 1)); results+=("PASS $name $((end - start))s")
  else failed=$((failed + 1)); results+=("FAIL $name $((end - start))s (rc $rc, log $log_dir/$name.log)"); fi
  echo "=== $name: rc $rc in $((end - start))s"
}

# A scratch HOME: ansible-lint also searches ~/.ansible/collections, where an installed older copy
# of this collection would shadow the working tree.
lint() {
  mkdir -p build/lint-home
  HOME="$root/build/lint-home" ansible-lint --profile production && antsibull-changelog lint
}

build() {
  rm -rf build/dist && mkdir -p build/dist
  ansible-galaxy collection build --force --output-path build/dist .
}

# ansible-test wants the collection at .../ansible_collections/<ns>/<name>, outside the git checkout
# (inside it, ansible-test would list files with git and see none). Units test what ships: the built
# tarball (plus tests/, which it carries). Sanity tests the whole checkout, as collection CI does: every
# file git tracks or would add, molecule/, scripts/ and tests/testbed/ included.
test_tree() {  # test_tree tarball|checkout NAME: a fresh tree; prints its path
  local top=${TMPDIR:-/tmp}/gpuops-sglang_stack-$2
  local tree=$top/ansible_collections/gpuops/sglang_stack
  rm -rf "$top" && mkdir -p "$tree" || return 1
  case $1 in
    tarball) tar -xzf "$root/$tarball" -C "$tree" ;;
    checkout) git ls-files -z -co --exclude-standard | tar --null -T - --ignore-failed-read -cf - | tar -xf - -C "$tree" ;;
  esac || return 1
  echo "$tree"
}
ansible_test() {  # ansible_test sanity|units CORE: ansible-test on the tree it needs, with that ansible-core
  local tree; tree=$(test_tree "$([ "$1" = units ] && echo tarball || echo checkout)" "$1-$2") || return 1
  if [ "$2" = 2.19 ]; then (cd "$tree" && ansible-test "$1" --venv --python 3.11 --color no); else core_run "$2" "$tree" "$1"; fi
}

# The other ansible-core versions that meta/runtime.yml's requires_ansible names, each from
# requirements/core-<v>.txt in its own virtualenv (build/core-<v>/venv), made here when missing or stale.
# 2.18 runs on this Python 3.11. 2.20's controller needs Python >= 3.12: its stages run in the test bed's
# Debian 13 base image (python3.13), the checkout and the test tree mounted at their own paths, with a
# HOME of its own (build/core-<v>/home: ansible-test's cached virtualenvs and its offline pip shim), the
# host's pip index and CA bundle (as the image's system bundle: ansible-test's pip does not see PIP_CERT).
declare -A core_image=([2.20]=sglang-stack-testbed/debian13)
core_versions="2.18 2.20"
core_run() {  # core_run CORE TREE sanity|units
  # The controller virtualenv's own interpreter (scripts/setup-controller.sh chooses it) for the cores that run here.
  local v=$1 tree=$2 what=$3 py ca=${PIP_CERT:-${SSL_CERT_FILE:-}}
  py=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')
  local -a run=(env HOME="$root/build/core-$v/home")
  if [ -n "${core_image[$v]:-}" ]; then
    tests/testbed/build_base_images.sh "${core_image[$v]#*/}" || return 1
    py=python3
    run=(docker run --rm --network host -v "$root:$root" -v "$tree:$tree" -w "$root" -e HOME="$root/build/core-$v/home"
         -e PIP_DISABLE_PIP_VERSION_CHECK=1 ${PIP_INDEX_URL:+-e PIP_INDEX_URL}
         ${ca:+-v "$ca:/etc/ssl/certs/ca-certificates.crt:ro"}
         "${core_image[$v]}")
  fi
  mkdir -p "build/core-$v/home"
  "${run[@]}" scripts/ansible-test-core.sh "$v" "$py" "$tree" "$what"
}

# A fresh, empty HOME, as on Galaxy: the importer's ansible-lint resolves this collection's modules from
# ~/.ansible/collections before the tarball under test, so an older installed copy there (one without
# a module added since) made it report the new module as unknown (syntax-check[unknown-module]).
importer() {
  rm -rf build/importer-home && mkdir -p build/importer-home
  HOME="$root/build/importer-home" GALAXY_IMPORTER_CONFIG="$root/tests/galaxy-importer.cfg" \
    python -m galaxy_importer.main "$tarball" >build/importer.log 2>&1
  local rc=$?
  cat build/importer.log
  [ $rc -eq 0 ] || return $rc
  # Warnings count as failures too: the importer logs lint findings as WARNING and still exits 0.
  if grep -E '^(WARNING|ERROR)' build/importer.log; then echo "galaxy-importer reported the lines above"; return 1; fi
}

# Downloads (the nvcc and PyPI wheels the mirror serves, the real stack's wheels) are kept on the
# machine, outside the clone: a second run, from this clone or a fresh one, downloads nothing.
testbed_cache=${GPUOPS_SGLANG_TESTBED_CACHE:-/var/cache/gpuops-sglang-testbed}
testbed() {
  tests/testbed/build_base_images.sh &&
  python3 tests/testbed/mirror/build_mirror.py --out build/mirror --cache "$testbed_cache/mirror-downloads" &&
  tests/testbed/mirror/serve.sh start
}

# Tests of the test bed itself (the GPU stand-in against the parsers): plain pytest on the working
# tree, because molecule/ is not part of the built collection that ansible-test units sees. Also the
# apt_repo_fetch module tests, which sign a repository with gpg (gpg-agent does not survive ansible-test's
# forked workers; galaxy.yml leaves that file out of the tarball), and the import gate's message on the real sglang
# wheel of the test bed's download cache (so this stage runs after testbed).
testbed_units() {
  GPUOPS_SGLANG_TESTBED_CACHE="$testbed_cache" PYTHONPATH="$root/build/collections" python -m pytest -q -p no:cacheprovider tests/unit/test_gpu_standin.py tests/unit/test_sglang_standin.py \
    tests/unit/plugins/modules/test_apt_repo_fetch.py tests/unit/test_stack_lock_nightly.py tests/unit/test_service_env_gates.py
}

# The execution environment: `ansible-builder create` from meta/execution-environment.yml into
# build/ee (the collection tarball built first when missing), then proof that the context carries
# the collection (this very tarball), its Galaxy requirements, the pinned ansible-core and the
# system requirements, and that ansible-builder's introspection reads the installed collection.
ee() {
  local def=meta/execution-environment.yml ctx=build/ee core
  [ -f "$tarball" ] || build || return 1
  grep -q "gpuops-sglang_stack-$version.tar.gz" "$def" || { echo "ee: $def does not reference gpuops-sglang_stack-$version.tar.gz (galaxy.yml version)"; return 1; }
  rm -rf "$ctx"
  ansible-builder create -f "$def" --context "$ctx" --output-filename Containerfile || return 1
  local ok=0
  check() { if "$@" >/dev/null 2>&1; then echo "ee: ok: $*"; else echo "ee: MISSING: $*"; ok=1; fi; }
  check cmp "$tarball" "$ctx/_build/collections/gpuops-sglang_stack-$version.tar.gz"
  check grep -q "gpuops-sglang_stack-$version.tar.gz" "$ctx/_build/requirements.yml"
  check grep -q "COPY _build/collections/ /tmp/ee-collections/" "$ctx/Containerfile"
  check grep -q "ansible-galaxy collection install.*requirements.yml" "$ctx/Containerfile"
  # ansible-core and the ansible package (ansible.posix, community.general) at the controller's pins.
  for pin in ansible-core ansible; do
    core=$(grep -E "^$pin==" requirements/controller.txt)
    check grep -qF -- "$core" "$ctx/Containerfile"
  done
  check grep -q "ansible-runner==" "$ctx/Containerfile"
  check cmp meta/bindep.txt "$ctx/_build/bindep.txt"
  check cmp meta/bindep.txt bindep.txt
  # What ansible-builder does inside the image: introspect the installed collection (it reads the
  # dependency files named in the collection's meta/execution-environment.yml, from its root).
  local tree=$ctx/introspect/ansible_collections/gpuops/sglang_stack
  mkdir -p "$tree" && tar -xzf "$tarball" -C "$tree" || return 1
  python3 "$ctx/_build/scripts/introspect.py" introspect "$ctx/introspect" >"$ctx/introspect.txt" 2>&1
  check grep -q "openssh-client" "$ctx/introspect.txt"
  cat "$ctx/introspect.txt"
  return $ok
}

# Each action of a scenario's test_sequence runs as its own molecule command, timed, so the run
# shows where the time goes (build/test-logs/molecule-times.tsv: scenario, action, seconds, rc).
# A failing action skips the rest of the sequence but the scenario is still destroyed.
scenario_sequence() {
  python3 - "$1" <<'PY'
import sys, yaml
cfg = yaml.safe_load(open("molecule/%s/molecule.yml" % sys.argv[1]))
seq = (cfg.get("scenario") or {}).get("test_sequence") or [
    "destroy", "syntax", "create", "prepare", "converge", "idempotence", "verify", "destroy"]
print(" ".join(seq))
PY
}
molecule_scenario() {
  local s=$1 rc=0 a t0 seq
  seq=$(scenario_sequence "$s") || return 1
  for a in $seq; do
    if [ $rc -ne 0 ] && [ "$a" != destroy ]; then continue; fi
    t0=$SECONDS
    echo "--- molecule $a -s $s"
    local arc=0
    case $a in
      # `molecule check` alone runs its own whole sequence (destroy, create, converge, then the
      # check); the test sequence's check is the converge playbook in check mode, on the hosts as
      # they are.
      check) molecule converge -s "$s" -- --check || arc=$? ;;
      *) molecule "$a" -s "$s" || arc=$? ;;
    esac
    # The host directories a scenario mounts as its hosts' disks (build/molecule-disk/<scenario>/, real_stack's
    # and download_once's stacks): emptied once its containers are gone, before the first create and after the end.
    [ "$a" != destroy ] || rm -rf "build/molecule-disk/$s"
    printf '%s\t%s\t%s\t%s\n' "$s" "$a" "$((SECONDS - t0))" "$arc" >>"$log_dir/molecule-times.tsv"
    echo "--- molecule $a -s $s: rc $arc in $((SECONDS - t0))s"
    [ $arc -eq 0 ] || rc=$arc
  done
  return $rc
}
# The scenarios run in MOLECULE_LANES parallel lanes (default 2: the controller's Ansible and one
# container's module run mostly take one core at a time, so a 2-core machine runs two scenarios in
# little more than the time of one). Scenarios share nothing but the read-only mirror, its network and
# the base images; each writes its own log, build/test-logs/molecule-<scenario>.log. The lanes are
# filled longest first by the weights below (seconds each scenario took in the last measured run on
# this 2-core machine, two lanes, 2026-12-05, 19:49-20:33: the fresh-clone run of docs/performance.md and the
# extended scenarios after it; one not listed counts 300), so the lanes end at about the same time.
declare -A scenario_weight=([service_rollout]=767 [real_stack]=502 [download_once]=438 [first_upgrade]=395
  [default]=301 [faults]=296 [stack_lifecycle]=293 [preflight_refusals]=197 [lxc_host]=137)
lane_run() {  # lane_run LANE SCENARIO... : run the scenarios one after the other
  local lane=$1 s t0 rc; shift
  for s in "$@"; do
    t0=$SECONDS
    echo "--- lane $lane: molecule test -s $s (log $log_dir/molecule-$s.log)"
    if molecule_scenario "$s" >"$log_dir/molecule-$s.log" 2>&1; then rc=0; else rc=1; fi
    # Scenarios that set secrets use values starting "gpuops-leak-": no task output, diff or result may show
    # one (molecule/default/host_vars/sglang-gpu-d13.yml). The host journals are checked by the scenario itself.
    if grep -n "gpuops-leak-" "$log_dir/molecule-$s.log" >"$log_dir/molecule-$s.leaks"; then
      echo "--- lane $lane: scenario $s printed a secret ($(wc -l <"$log_dir/molecule-$s.leaks") lines, $log_dir/molecule-$s.leaks)"
      rc=1
    else
      rm -f "$log_dir/molecule-$s.leaks"
    fi
    printf '%s\t%s\t%s\n' "$s" "$((SECONDS - t0))" "$rc" >>"$log_dir/molecule-scenarios.tsv"
    if [ $rc -eq 0 ]; then echo "--- lane $lane: scenario $s passed in $((SECONDS - t0))s"
    else
      echo "--- lane $lane: scenario $s FAILED in $((SECONDS - t0))s; the end of its log:"
      tail -n 150 "$log_dir/molecule-$s.log" | sed "s/^/[$s] /"
    fi
  done
}
molecule_all() {
  local lanes=${MOLECULE_LANES:-2} s i best rc=0
  : >"$log_dir/molecule-times.tsv"; : >"$log_dir/molecule-scenarios.tsv"
  local -a lane_load lane_list order
  for ((i = 0; i < lanes; i++)); do lane_load[i]=0; lane_list[i]=""; done
  order=$(for s in $scenarios; do echo "${scenario_weight[$s]:-300} $s"; done | sort -rn | awk '{print $2}')
  for s in $order; do
    best=0
    for ((i = 1; i < lanes; i++)); do [ "${lane_load[i]}" -lt "${lane_load[best]}" ] && best=$i; done
    lane_list[best]="${lane_list[best]} $s"
    lane_load[best]=$(( lane_load[best] + ${scenario_weight[$s]:-300} ))
  done
  local -a pids
  for ((i = 0; i < lanes; i++)); do
    [ -n "${lane_list[i]}" ] || continue
    echo "--- lane $i:${lane_list[i]}"
    # shellcheck disable=SC2086  # the list is words on purpose
    lane_run "$i" ${lane_list[i]} &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i"; done
  local name secs src
  while IFS=$'\t' read -r name secs src; do
    scenario_times+=("$name ${secs}s$([ "$src" = 0 ] || echo ' FAILED')")
    [ "$src" = 0 ] || rc=1
  done <"$log_dir/molecule-scenarios.tsv"
  [ "$(wc -l <"$log_dir/molecule-scenarios.tsv")" -eq "$(echo "$scenarios" | wc -w)" ] || { echo "--- a lane did not report every scenario"; rc=1; }
  return "$rc"
}

run_start=$(date +%s)
scenario_times=()
mkdir -p build
echo "=== setup"
setup_start=$(date +%s)
scripts/setup-controller.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$log_dir"
results+=("PASS setup $(( $(date +%s) - setup_start ))s")

wanted=("$@")
if [ ${#wanted[@]} -eq 0 ]; then
  # Sanity on the controller's core (2.19) and the newest (2.20); units on every core requires_ansible names. 2.18's
  # sanity (sanity-2.18) is left out for time: the same checks as 2.19's, older; units-2.18 imports and runs every
  # module and module_utils on it.
  wanted=(lint build sanity units units-2.18 sanity-2.20 units-2.20)
  wanted+=(importer testbed testbed-units ee molecule lxc-real)
fi
for s in "${wanted[@]}"; do
  case $s in
    lint) stage lint lint ;;
    build) stage build build ;;
    sanity) stage sanity ansible_test sanity 2.19 ;;
    units) stage units ansible_test units 2.19 ;;
    sanity-*|units-*)
      if [[ " $core_versions " == *" ${s#*-} "* ]]; then stage "$s" ansible_test "${s%%-*}" "${s#*-}"
      else echo "unknown stage $s"; failed=$((failed + 1)); fi ;;
    importer) stage importer importer ;;
    testbed) stage testbed testbed ;;
    testbed-units) stage testbed-units testbed_units ;;
    ee) stage ee ee ;;
    molecule) stage molecule molecule_all ;;
    lxc-real) stage lxc-real tests/lxc_real/run.sh ;;
    *) echo "unknown stage $s"; failed=$((failed + 1)) ;;
  esac
done
# Stop the mirror this run started (KEEP_TESTBED=1 keeps it for a later molecule run by hand).
if [[ " ${wanted[*]} " == *" testbed "* ]] && [ -z "${KEEP_TESTBED:-}" ]; then
  tests/testbed/mirror/serve.sh stop >/dev/null 2>&1
fi

echo
echo "=== summary"
printf '%s\n' "${results[@]}"
if [ ${#scenario_times[@]} -gt 0 ]; then
  echo "--- molecule scenarios"; printf '  %s\n' "${scenario_times[@]}"
  echo "--- molecule actions (scenario action seconds rc; $log_dir/molecule-times.tsv)"
  sed 's/^/  /' "$log_dir/molecule-times.tsv"
fi
echo "total $(( $(date +%s) - run_start ))s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

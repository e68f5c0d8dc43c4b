#!/usr/bin/env bash
# The real SGLang 0.5.9 entry points under the real torch 2.11.0+cu130 of the GPU test machine (issue 14 item 8).
#
# Two steps:
#   tests/device/real_entrypoints.sh fetch [DIR]   on the controller (PyPI reachable): the wheels into DIR
#                                                  (default .whl-ep, ignored through .git/info/exclude), sha256 of
#                                                  sglang and flashinfer-python checked, and one real shared object of
#                                                  the PyPI sgl-kernel 0.3.21 (CUDA 12 build) with its NEEDED lists.
#   tests/device/real_entrypoints.sh run OUTDIR [DIR]  on the GPU machine, from the repository root, as root (it adds
#                                                  an unprivileged user). Writes 8 files into OUTDIR, each starting
#                                                  with a "# machine: ...; date: ...; command: ..." line:
#     setup.txt                       machine, interpreter, carried files (size, sha256), install, user
#     entrypoints-home.txt            as the unprivileged user, HOME a writable directory, sglang's pinned
#                                     transformers 4.57.1: the imports, both --help, import flashinfer
#     entrypoints-nonexistent-home.txt  the same with HOME=/nonexistent
#     entrypoints-transformers5.txt   the image's own transformers (5.x) instead of the pin; bench import without GPU
#     sgl-kernel-cu12.txt             the PyPI sgl-kernel's spatial_ops.abi3.so loaded as load_utils loads common_ops
#     allreduce-ws1.txt               sglang's custom all-reduce decisions at world size 1, both homes
#     entrypoints-cache-env.txt       HOME=/nonexistent with the cache variables pointed at a writable directory;
#                                     triton's own error without a home; which carried packages the import loads
#     import-chain-no-torchvision.txt the import chain when torchvision is not importable (a meta-path block, then
#                                     the real package directories moved aside)
# With the device tool: carry [".whl-ep"], command
#   tests/device/real_entrypoints.sh run $OUT
# Recorded output: tests/unit/fixtures/real/h200-ubuntu2404-cuda13/sglang-*.txt (README.md there).
set -u
mode=${1:?usage: $0 fetch [DIR] | run OUTDIR [DIR]}

# What /opt/torch/.venv on the GPU machine lacks for the entry points (found with a static walk of the module-level
# imports of sglang.launch_server, sglang.bench_one_batch_server and flashinfer, resolved by pip for Python 3.12),
# plus sglang's own pins of transformers/huggingface-hub/tokenizers (the image has transformers 5.x, hub 1.x).
BASE="sglang==0.5.9 flashinfer-python==0.6.4 apache-tvm-ffi==0.1.15.post2 annotated-types==0.8.0 asttokens==3.0.2
 compressed-tensors==0.20.1 datasets==5.0.1 dill==0.4.1 distro==1.9.0 executing==2.3.0 fastapi==0.165.0 gguf==0.19.0
 ipython==9.18.1 ipython-pygments-lexers==1.1.1 jedi==0.20.1 jiter==0.19.0 jsonschema==4.26.0
 jsonschema-specifications==2025.9.1 loguru==0.7.3 matplotlib-inline==0.2.2 msgspec==0.23.0 multiprocess==0.70.19
 openai==2.6.1 opentelemetry-api==1.45.2 orjson==3.13.0 parso==0.8.7 partial-json-parser==0.2.1.1.post7 pexpect==4.9.0
 prompt-toolkit==3.0.53 ptyprocess==0.7.0 pure-eval==0.2.4 pybase64==1.5.1 pydantic==2.14.4 pydantic-core==2.50.5
 pyzmq==27.3.0 referencing==0.37.0 rpds-py==2026.9.1 setproctitle==1.3.8 sniffio==1.3.1 stack-data==0.6.3
 starlette==1.10.0 traitlets==5.16.1 typing-inspection==0.4.5 uvicorn==0.54.0 wcwidth==0.9.4"
PIN="transformers==4.57.1 huggingface-hub==0.36.2 tokenizers==0.22.2"
SGLANG_SHA=8a936c4d25fea605f44254e533cff2144c73ceffbc1f8738aba393461bbb64d1
FLASHINFER_SHA=105596b505892ae330af84e250ee0eb6fc2c3a22e8dc42bd46de1b90d36004c8
SPATIAL_OPS_SHA=5acce66b49bb55c2494bca314dc6be5bb4234d88b908f327c8d1f66fd480e129

if [ "$mode" = fetch ]; then
  dir=${2:-.whl-ep}
  py=${FETCH_PYTHON:-python3}
  plat="--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64"
  mkdir -p "$dir/base" "$dir/pin" "$dir/sk"
  # shellcheck disable=SC2086
  "$py" -m pip download -q --no-deps $plat -d "$dir/base" $BASE || exit 1
  # shellcheck disable=SC2086
  "$py" -m pip download -q --no-deps $plat -d "$dir/pin" $PIN || exit 1
  echo "$SGLANG_SHA  $dir/base/sglang-0.5.9-py3-none-any.whl" | sha256sum -c || exit 1
  echo "$FLASHINFER_SHA  $dir/base/flashinfer_python-0.6.4-py3-none-any.whl" | sha256sum -c || exit 1
  # The PyPI sgl-kernel 0.3.21 wheel is about 511 MiB (sm90/ and sm100/common_ops.abi3.so alone are 344 and 356 MiB
  # unpacked): it cannot travel within the 64 MiB a device call carries. Its spatial_ops.abi3.so (108 KiB) links the
  # same CUDA 12 libraries in the same order as common_ops (NEEDED lists below), so loading it shows the same failure.
  tmp=$(mktemp -d)
  # shellcheck disable=SC2086
  "$py" -m pip download -q --no-deps $plat -d "$tmp" sgl-kernel==0.3.21 || exit 1
  (cd "$tmp" && unzip -q sgl_kernel-*.whl 'sgl_kernel/*.so' && ls -l sgl_kernel-*.whl) >"$dir/sk/wheel.txt"
  cp "$tmp/sgl_kernel/spatial_ops.abi3.so" "$dir/sk/"
  echo "$SPATIAL_OPS_SHA  $dir/sk/spatial_ops.abi3.so" | sha256sum -c || exit 1
  for f in sm90/common_ops.abi3.so sm100/common_ops.abi3.so spatial_ops.abi3.so flash_ops.abi3.so; do
    echo "$f: $(readelf -d "$tmp/sgl_kernel/$f" | awk '/NEEDED/ {gsub(/[][]/, "", $5); printf "%s ", $5}')"
  done >"$dir/sk/needed.txt"
  rm -rf "$tmp"
  du -sh "$dir"
  exit 0
fi

[ "$mode" = run ] || { echo "unknown mode $mode" >&2; exit 2; }
out=${2:?usage: $0 run OUTDIR [DIR]}
dir=${3:-.whl-ep}
mkdir -p "$out"
# ASCII messages from coreutils (find quotes names with typographic quotes in a UTF-8 locale, which the
# repository's no-smart-quotes check refuses in a recorded fixture).
export LC_ALL=C.UTF-8 LANGUAGE=C
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
P=${PY:-/opt/torch/.venv/bin/python3}
SITE=/tmp/ep-site PINSITE=/tmp/ep-pin TOOLS=/tmp/ep-tools U=sglang-ep
if command -v setpriv >/dev/null; then RUNAS="setpriv --reuid=$U --regid=$U --clear-groups --"; else RUNAS="runuser -u $U --"; fi
machine="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), $(uname -r)"
hdr() {  # hdr FILE COMMAND: the header line of an output file
  echo "# machine: $machine; date: $(date -u +%Y-%m-%dT%H:%M:%SZ); command: $2" >"$1"
}
START=$(date +%s)

# --- setup: install the carried wheels, add the unprivileged user --------------------------------------------------
S=$out/setup.txt
hdr "$S" "tests/device/real_entrypoints.sh run OUTDIR (setup)"
{
  echo "== machine"; nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv; uname -a
  grep PRETTY_NAME /etc/os-release
  echo "== interpreter"; echo "$P"
  "$P" -c 'import sys, torch, torchvision, transformers; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "torchvision", torchvision.__version__, "transformers(image)", transformers.__version__)'
  "$P" -m pip list 2>/dev/null | grep -iE '^(huggingface.hub|tokenizers|triton|cuda-bindings|cuda-python|nvidia-cuda-nvrtc|sgl|flashinfer|xgrammar|nvidia-cutlass|torchaudio|timm) '
  echo "== environment"; env | grep -E '^(CUDA|LD_LIBRARY|XDG|TRITON|FLASHINFER|HF_|PATH=)' | sort
  echo "== carried files (bytes, sha256)"
  (cd "$dir" && find . -type f | sort | while read -r f; do echo "$(stat -c %s "$f") $(sha256sum "$f" | cut -c1-64) $f"; done)
  echo "== carried total: $(du -sb "$dir" | cut -f1) bytes"
  echo "== sha256 checks"
  echo "$SGLANG_SHA  $dir/base/sglang-0.5.9-py3-none-any.whl" | sha256sum -c
  echo "$FLASHINFER_SHA  $dir/base/flashinfer_python-0.6.4-py3-none-any.whl" | sha256sum -c
  echo "$SPATIAL_OPS_SHA  $dir/sk/spatial_ops.abi3.so" | sha256sum -c
  echo "== install (pip --no-index --no-deps --target)"
  rm -rf $SITE $PINSITE $TOOLS
  "$P" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target $SITE "$dir"/base/*.whl; echo "base rc=$?"
  "$P" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target $PINSITE "$dir"/pin/*.whl; echo "pin rc=$?"
  "$P" -m compileall -q -j 0 $SITE $PINSITE >/dev/null 2>&1; echo "compileall rc=$?"
  mkdir -p $TOOLS && cp tests/device/real_entrypoints_probe.py "$dir/sk/spatial_ops.abi3.so" $TOOLS/
  chmod -R a+rX $SITE $PINSITE $TOOLS
  echo "== user"
  id $U >/dev/null 2>&1 || useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin $U
  getent passwd $U; ls -ld /nonexistent 2>&1
  echo "runs as: $RUNAS"
  for h in 1 2 3 4 5; do rm -rf /tmp/ep-home$h; install -d -o $U -g $U /tmp/ep-home$h; done
  echo "== installed in ~$(du -sm $SITE | cut -f1) MiB + $(du -sm $PINSITE | cut -f1) MiB; setup took $(( $(date +%s) - START )) s"
} >>"$S" 2>&1

# case FILE TITLE HOMEDIR PYTHONPATH HEAD -- ARGS...: run ARGS as $U from /tmp with that HOME and PYTHONPATH;
# HEAD=0 records all of stdout and stderr, HEAD=N the first N lines of stdout and the last 40 of stderr.
case_() {
  local file=$1 title=$2 home=$3 pp=$4 head=$5; shift 6
  local t0 rc o e
  o=$(mktemp) e=$(mktemp)
  {
    echo; echo "### $title"
    echo "\$ HOME=$home PYTHONPATH=$pp $*"
  } >>"$file"
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  (cd /tmp && timeout 240 $RUNAS env HOME="$home" PYTHONPATH="$pp" "$@" >"$o" 2>"$e")
  rc=$?
  {
    if [ "$head" = 0 ]; then echo "--- stdout"; cat "$o"; echo "--- stderr"; head -c 60000 "$e"
    else echo "--- stdout (first $head lines of $(wc -l <"$o"))"; head -n "$head" "$o"
      echo "--- stderr (last 40 lines of $(wc -l <"$e"))"; tail -n 40 "$e"; fi
    echo "### rc=$rc wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
  } >>"$file"
  rm -f "$o" "$e"
}

entry_cases() {  # entry_cases FILE HOMEDIR PYTHONPATH
  local f=$1 h=$2 pp=$3
  case_ "$f" "import sglang.launch_server" "$h" "$pp" 0 -- "$P" -c 'import sglang.launch_server'
  case_ "$f" "import sglang.bench_one_batch_server" "$h" "$pp" 0 -- "$P" -c 'import sglang.bench_one_batch_server'
  case_ "$f" "python -m sglang.launch_server --help" "$h" "$pp" 40 -- "$P" -m sglang.launch_server --help
  case_ "$f" "python -m sglang.bench_one_batch_server --help" "$h" "$pp" 15 -- "$P" -m sglang.bench_one_batch_server --help
  case_ "$f" "import flashinfer (what it decides and creates under HOME)" "$h" "$pp" 0 -- "$P" $TOOLS/real_entrypoints_probe.py flashinfer
  case_ "$f" "import sgl_kernel" "$h" "$pp" 0 -- "$P" -c 'import sgl_kernel'
  # shellcheck disable=SC2016
  case_ "$f" "HOME after the runs" "$h" "$pp" 0 -- sh -c 'ls -la "$HOME" 2>&1; find "$HOME" -maxdepth 3 2>&1 | sort | head -50'
}

F1=$out/entrypoints-home.txt F2=$out/entrypoints-nonexistent-home.txt F3=$out/entrypoints-transformers5.txt
F4=$out/sgl-kernel-cu12.txt F5=$out/allreduce-ws1.txt F6=$out/import-chain-no-torchvision.txt
F7=$out/entrypoints-cache-env.txt
CACHE_ENV="TRITON_CACHE_DIR=/tmp/ep-home5/triton FLASHINFER_WORKSPACE_BASE=/tmp/ep-home5 XDG_CACHE_HOME=/tmp/ep-home5/xdg CUDA_CACHE_PATH=/tmp/ep-home5/nv"
LOADED='import sys, sglang.launch_server
carried = sorted({n.split(".")[0] for n, m in list(sys.modules.items()) if (getattr(m, "__file__", None) or "").startswith(("/tmp/ep-site/", "/tmp/ep-pin/"))})
print("top-level packages loaded from the carried wheels:", " ".join(carried))'
hdr "$F1" "tests/device/real_entrypoints.sh run (as $U, HOME=/tmp/ep-home1, PYTHONPATH=$PINSITE:$SITE)"
hdr "$F2" "tests/device/real_entrypoints.sh run (as $U, HOME=/nonexistent, PYTHONPATH=$PINSITE:$SITE)"
hdr "$F3" "tests/device/real_entrypoints.sh run (as $U, PYTHONPATH=$SITE: the image's transformers)"
hdr "$F4" "tests/device/real_entrypoints.sh run (PyPI sgl-kernel 0.3.21 CUDA 12 build under torch 2.11+cu130)"
hdr "$F5" "tests/device/real_entrypoints.sh run (tests/device/real_entrypoints_probe.py allreduce)"
hdr "$F6" "tests/device/real_entrypoints.sh run (torchvision not importable)"
hdr "$F7" "tests/device/real_entrypoints.sh run (as $U, HOME=/nonexistent with $CACHE_ENV)"

entry_cases "$F1" /tmp/ep-home1 "$PINSITE:$SITE" &
entry_cases "$F2" /nonexistent "$PINSITE:$SITE" &
{
  case_ "$F3" "import sglang.launch_server (image transformers)" /tmp/ep-home2 "$SITE" 0 -- "$P" -c 'import transformers, huggingface_hub; print("transformers", transformers.__version__, "huggingface_hub", huggingface_hub.__version__); import sglang.launch_server'
  case_ "$F3" "python -m sglang.launch_server --help (image transformers)" /tmp/ep-home2 "$SITE" 15 -- "$P" -m sglang.launch_server --help
  case_ "$F3" "import sglang.bench_one_batch_server with CUDA_VISIBLE_DEVICES= (no GPU visible; pinned transformers)" /tmp/ep-home2 "$PINSITE:$SITE" 0 -- env CUDA_VISIBLE_DEVICES= "$P" -c 'import sglang.bench_one_batch_server'
} &
{
  {
    echo "== NEEDED of the wheel's shared objects (readelf on the controller, from the fetch step)"
    cat "$dir/sk/needed.txt" "$dir/sk/wheel.txt"
    echo "== libnvrtc / libcudart / libcublas on this machine"
    ldconfig -p | grep -E 'libnvrtc|libcudart|libcublas'
    find / -xdev \( -name 'libnvrtc.so*' -o -name 'libcudart.so*' \) 2>/dev/null | sort
    echo "== ldd $TOOLS/spatial_ops.abi3.so (with torch's lib directory on LD_LIBRARY_PATH)"
    tl=$("$P" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
    LD_LIBRARY_PATH=$tl${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd $TOOLS/spatial_ops.abi3.so
  } >>"$F4" 2>&1
  case_ "$F4" "load spatial_ops.abi3.so as sgl_kernel.load_utils loads common_ops (importlib, after import torch)" /tmp/ep-home3 "$PINSITE:$SITE" 0 -- "$P" $TOOLS/real_entrypoints_probe.py load-so $TOOLS/spatial_ops.abi3.so
  case_ "$F4" "ctypes.CDLL(spatial_ops.abi3.so) after import torch" /tmp/ep-home3 "$PINSITE:$SITE" 0 -- "$P" -c "import ctypes, torch; ctypes.CDLL('$TOOLS/spatial_ops.abi3.so')"
  case_ "$F5" "custom all-reduce at world size 1, HOME writable" /tmp/ep-home4 "$PINSITE:$SITE" 0 -- env MASTER_PORT=29541 "$P" $TOOLS/real_entrypoints_probe.py allreduce
  case_ "$F7" "triton's driver without a home: get_current_target()" /nonexistent "$PINSITE:$SITE" 0 -- "$P" -c 'import triton; print(triton.runtime.driver.active.get_current_target())'
  # shellcheck disable=SC2086
  case_ "$F7" "import sglang.launch_server, cache variables set" /nonexistent "$PINSITE:$SITE" 0 -- env $CACHE_ENV "$P" -c 'import sglang.launch_server'
  # shellcheck disable=SC2086
  case_ "$F7" "import flashinfer, cache variables set" /nonexistent "$PINSITE:$SITE" 0 -- env $CACHE_ENV "$P" $TOOLS/real_entrypoints_probe.py flashinfer
  # shellcheck disable=SC2086
  case_ "$F7" "custom all-reduce at world size 1, cache variables set" /nonexistent "$PINSITE:$SITE" 0 -- env $CACHE_ENV MASTER_PORT=29543 "$P" $TOOLS/real_entrypoints_probe.py allreduce
  case_ "$F7" "what the writable cache directory holds afterwards" /nonexistent "$PINSITE:$SITE" 0 -- find /tmp/ep-home5 -maxdepth 4
  case_ "$F7" "which carried packages import sglang.launch_server loads (HOME writable)" /tmp/ep-home1 "$PINSITE:$SITE" 0 -- "$P" -c "$LOADED"
  case_ "$F5" "custom all-reduce at world size 1, HOME=/nonexistent" /nonexistent "$PINSITE:$SITE" 0 -- env MASTER_PORT=29542 "$P" $TOOLS/real_entrypoints_probe.py allreduce
} &
wait

# torchvision not importable: first a meta-path block (the package stays installed, so importlib.metadata still sees
# it), then the real directories moved aside (as if not installed); both with sglang's pinned transformers.
case_ "$F6" "meta-path block: import sglang.launch_server" /tmp/ep-home2 "$PINSITE:$SITE" 0 -- "$P" $TOOLS/real_entrypoints_probe.py hide torchvision -c 'import sglang.launch_server'
case_ "$F6" "meta-path block: python -m sglang.launch_server --help" /tmp/ep-home2 "$PINSITE:$SITE" 0 -- "$P" $TOOLS/real_entrypoints_probe.py hide torchvision -m sglang.launch_server --help
case_ "$F6" "meta-path block: import sglang.bench_one_batch_server" /tmp/ep-home2 "$PINSITE:$SITE" 0 -- "$P" $TOOLS/real_entrypoints_probe.py hide torchvision -c 'import sglang.bench_one_batch_server'
sp=$("$P" -c 'import os, torchvision; print(os.path.dirname(os.path.dirname(torchvision.__file__)))')
moved=
for d in "$sp"/torchvision "$sp"/torchvision-*.dist-info "$sp"/torchvision.libs; do
  [ -e "$d" ] && mv "$d" "$d.ep-hidden" && moved="$moved $d"
done
printf '\n== moved aside:%s\n' "$moved" >>"$F6"
if [ -n "$moved" ]; then
  case_ "$F6" "torchvision moved aside: import sglang.launch_server" /tmp/ep-home2 "$PINSITE:$SITE" 0 -- "$P" -c 'import sglang.launch_server'
  case_ "$F6" "torchvision moved aside: python -m sglang.launch_server --help" /tmp/ep-home2 "$PINSITE:$SITE" 0 -- "$P" -m sglang.launch_server --help
  case_ "$F6" "torchvision moved aside: import sglang (package only)" /tmp/ep-home2 "$PINSITE:$SITE" 0 -- "$P" -c 'import sglang; print(sglang.__version__)'
fi
for d in $moved; do mv "$d.ep-hidden" "$d"; done
"$P" -c 'import torchvision; print("torchvision restored", torchvision.__version__)' >>"$F6" 2>&1
echo "== total wall $(( $(date +%s) - START )) s" >>"$S"
exit 0

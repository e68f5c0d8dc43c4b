#!/usr/bin/env bash
# Device run of the all-reduce probe work (docs/allreduce-probe.md): on a machine with 2+ GPUs, from the
# repository root, writes at most 6 files into OUTDIR:
#   machine.txt    GPUs, link topology, torch/NCCL versions
#   direct.txt     tests/device/nccl_direct.cu (NCCL without torch, eager and CUDA graph, in place and out of place)
#   sweep.txt      the probe (plugins/module_utils/allreduce_probe_program.py) once per NCCL setting, then diagnostics; "### name env | args" before each
#                  run and "### end name rc=N wall_s=N" after it
#   nccl_debug.txt NCCL_DEBUG=INFO lines about algorithm/protocol/registration, graph and eager, 256 KB and 1 MB
#   sglang.txt     tests/device/sglang_patched_import.py (real sglang 0.5.9 wheel from .whl/, patched, imported)
#   log.txt        stderr of everything
# Usage: tests/device/allreduce_sweep.sh OUTDIR [parts]
#   parts: any of direct direct_mp sweep sweep_nccl nccl_tree side_stream diag diag_torch debug sglang
#   (default: direct direct_mp sweep sweep_nccl diag sglang)
set -u
out=${1:?usage: $0 OUTDIR [parts]}
shift
parts=${*:-direct direct_mp sweep sweep_nccl diag sglang}
mkdir -p "$out"
# NVLink multicast stays off on the shared hosts (KINDS.md): a program using it can take the GPUs out of service.
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
P=${PROBE_PYTHON:-/opt/torch/.venv/bin/python}
log=$out/log.txt
probe=/tmp/allreduce_probe.py
cp plugins/module_utils/allreduce_probe_program.py "$probe" || exit 1
{
  date -u; nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv; nvidia-smi topo -m
  "$P" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())'
  env | grep -E '^(NCCL|TORCH_SYMM|NVSHMEM)_' | sort
} >"$out/machine.txt" 2>&1

has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

probe_run() {  # probe_run NAME [VAR=VALUE ...] -- [probe args]
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local t0=$SECONDS
  {
    echo "### $name ${envs[*]} | $*"
    env "${envs[@]}" timeout 100 "$P" "$probe" --timeout 90 "$@" 2>>"$log"
    echo "### end $name rc=$? wall_s=$((SECONDS - t0))"
  } >>"$out/sweep.txt"
}

build_direct() {
  [ -x /tmp/nccl_direct ] && return 0
  # NCCL headers and library: torch's own (nvidia-nccl wheel) first, else the system's.
  local inc lib
  inc=$(dirname "$(find /opt/torch/.venv -name nccl.h -path '*nccl*' 2>/dev/null | head -1)" 2>/dev/null)
  lib=$(dirname "$(find /opt/torch/.venv -name 'libnccl.so*' 2>/dev/null | head -1)" 2>/dev/null)
  [ -f "$inc/nccl.h" ] || inc=/usr/include
  echo "# nccl.h from $inc, libnccl from ${lib:-system}" >>"$out/direct.txt"
  timeout 120 nvcc -O2 -std=c++17 -o /tmp/nccl_direct tests/device/nccl_direct.cu -I"$inc" ${lib:+-L"$lib" -Xlinker -rpath="$lib"} -l:libnccl.so.2 >>"$out/direct.txt" 2>&1 \
    || timeout 120 nvcc -O2 -std=c++17 -o /tmp/nccl_direct tests/device/nccl_direct.cu -lnccl >>"$out/direct.txt" 2>&1 \
    || { echo "### nccl_direct: build failed" >>"$out/direct.txt"; return 1; }
}

# One process driving every GPU (nccl-tests -g N style), four NCCL settings.
if has direct && build_direct; then
  for setting in "" NCCL_PROTO=LL128 NCCL_PROTO=Simple "NCCL_MIN_NCHANNELS=32 NCCL_MAX_NCHANNELS=32"; do
    read -ra kv <<<"$setting"
    {
      echo "### nccl_direct ${setting:-default}"
      env "${kv[@]}" timeout 90 /tmp/nccl_direct 50 1000 20 2>>"$log"
      echo "### end rc=$?"
    } >>"$out/direct.txt"
  done
fi

# One process per GPU (as SGLang and the probe run), graphs of 5, 20 and 100 all-reduces.
if has direct_mp && build_direct; then
  gpus=$(nvidia-smi -L | grep -c '^GPU')
  for setting in "" NCCL_P2P_DISABLE=1; do
    read -ra kv <<<"$setting"
    {
      echo "### nccl_direct one process per GPU ${setting:-default}"
      env "${kv[@]}" timeout 120 /tmp/nccl_direct 50 1000 20 "$gpus" 2>>"$log"
      echo "### end rc=$?"
    } >>"$out/direct.txt"
  done
fi

# The sweep of issue 9, always with NCCL_NVLS_ENABLE=0; PROBE_ARGS are added to every run of a part.
sweep() {  # sweep PREFIX [probe args]
  local pre=$1; shift
  probe_run "${pre}default" -- "$@"
  probe_run "${pre}algo_ring" NCCL_ALGO=Ring -- "$@"
  probe_run "${pre}algo_tree" NCCL_ALGO=Tree -- "$@"
  probe_run "${pre}proto_ll" NCCL_PROTO=LL -- "$@"
  probe_run "${pre}proto_ll128" NCCL_PROTO=LL128 -- "$@"
  probe_run "${pre}proto_simple" NCCL_PROTO=Simple -- "$@"
  for n in 2 4 8 16; do probe_run "${pre}channels_$n" NCCL_MIN_NCHANNELS=$n NCCL_MAX_NCHANNELS=$n -- "$@"; done
  probe_run "${pre}p2p_disabled" NCCL_P2P_DISABLE=1 -- "$@"
}

# torch.distributed.all_reduce, the default backend (run 1 of 2026-11-30).
if has sweep; then sweep "" --backend torch; fi
# Direct ncclAllReduce, as SGLang's pynccl in its graphs (run 3 of 2026-11-30, where the names had no prefix).
if has sweep_nccl; then sweep nccl_ --backend nccl; fi

# The direct backend under NCCL_ALGO=Tree (failed in run 3 while the unique id went over an NCCL broadcast).
if has nccl_tree; then probe_run nccl_algo_tree NCCL_ALGO=Tree -- --backend nccl; fi

# Replays and timing on a side stream instead of the default stream, both backends.
if has side_stream; then
  probe_run torch_side_stream -- --backend torch --stream side
  probe_run nccl_side_stream -- --backend nccl --stream side
  probe_run nccl_side_stream_100 -- --backend nccl --stream side --iterations 100 --replays 100
fi

# Run 3's diagnostics (direct ncclAllReduce).
if has diag; then
  probe_run iterations_5 -- --backend nccl --iterations 5 --replays 400
  probe_run iterations_100 -- --backend nccl --iterations 100 --replays 100
  probe_run eager -- --backend nccl --eager
  probe_run one_gpu CUDA_VISIBLE_DEVICES=0 --
fi

# What was tried on the torch backend for the 1 MB gap (runs 1 and 2 of 2026-11-30).
if has diag_torch; then
  probe_run torch_graph_register_0 NCCL_GRAPH_REGISTER=0 -- --backend torch
  probe_run torch_buffers_8 -- --backend torch --buffers 8
  probe_run torch_iterations_100 -- --backend torch --iterations 100 --replays 100
  probe_run torch_iterations_5 -- --backend torch --iterations 5 --replays 400
  probe_run torch_channels_32 NCCL_MIN_NCHANNELS=32 NCCL_MAX_NCHANNELS=32 -- --backend torch
  probe_run torch_eager -- --backend torch --eager
fi

if has debug; then
  for mode in graph eager; do
    echo "### nccl_debug $mode" >>"$out/nccl_debug.txt"
    flag=; [ $mode = eager ] && flag=--eager
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING,REG,GRAPH timeout 100 "$P" "$probe" --timeout 90 --backend torch $flag --sizes 262144 1048576 \
      --iterations 2 --replays 2 --warmup 2 >/tmp/dbg.out 2>/tmp/dbg.err
    echo "### rc=$?" >>"$out/nccl_debug.txt"
    grep -iE 'algo|proto|regist|channel|AllReduce|NCCL version|P2P|via|graph' /tmp/dbg.out /tmp/dbg.err | grep -v 'Ring [0-9]* :' | head -300 >>"$out/nccl_debug.txt"
  done
fi

if has sglang; then
  {
    rm -rf /tmp/sglv && "$P" -m venv --system-site-packages --without-pip /tmp/sglv &&
    site=$(/tmp/sglv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') &&
    # $P is itself a venv: --system-site-packages reaches only the base Python, so add its packages (torch)
    # behind the new venv's own.
    "$P" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' >"$site/zz-torch-venv.pth" &&
    timeout 120 "$P" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .whl/*.whl &&
    timeout 300 /tmp/sglv/bin/python tests/device/sglang_patched_import.py
    echo "### rc=$?"
  } >"$out/sglang.txt" 2>>"$log"
fi
exit 0

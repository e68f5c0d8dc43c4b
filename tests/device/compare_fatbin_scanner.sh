#!/usr/bin/env bash
# Run on the GPU test machine (H200, CUDA 13.0 with cuobjdump, torch 2.11.0+cu130): compare the
# collection's pure-Python fatbin reader with cuobjdump on real CUDA libraries, byte for byte,
# and time both. Writes <out>/<lib>.{scanner,cuobjdump}.txt, <out>/results.tsv.
# Usage: tests/device/compare_fatbin_scanner.sh OUT_DIR [LIB...]
set -uo pipefail
out=${1:?usage: $0 OUT_DIR [LIB...]}; shift
mkdir -p "$out"
here=$(cd "$(dirname "$0")/../.." && pwd)
scanner="$here/plugins/module_utils/fatbin.py"
cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
libs=("$@")
if [ ${#libs[@]} -eq 0 ]; then
  site=$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null) || {
    for site in /opt/torch/.venv/lib/python3*/site-packages; do break; done
  }
  libs=("$site/torch/lib/libtorch_cuda.so" "$site/torch/lib/libc10_cuda.so")
  for f in "$site"/nvidia/*/lib/libcurand.so* "$site"/nvidia/*/lib/libcusparse.so* "$site"/nvidia/*/lib/libnccl.so*; do
    [ -f "$f" ] && libs+=("$f")
  done
fi
printf 'library\tbytes\tcuobjdump_s\tscanner_s\tidentical\tcuobjdump_rc\tscanner_rc\n' >"$out/results.tsv"
echo "cuobjdump: $($cuobjdump --version | tail -1)" >"$out/versions.txt"
python3 --version >>"$out/versions.txt"
for lib in "${libs[@]}"; do
  name=$(basename "$lib")
  # Listings go to stdout; both tools print their notes ("does not contain device code") on stderr.
  t0=$(date +%s%N); "$cuobjdump" --list-elf --list-ptx "$lib" >"$out/$name.cuobjdump.txt" 2>"$out/$name.cuobjdump.err"; crc=$?; t1=$(date +%s%N)
  python3 "$scanner" "$lib" >"$out/$name.scanner.txt" 2>"$out/$name.scanner.err"; src=$?; t2=$(date +%s%N)
  if cmp -s "$out/$name.cuobjdump.txt" "$out/$name.scanner.txt"; then same=yes; else same=no; fi
  printf '%s\t%s\t%.3f\t%.3f\t%s\t%s\t%s\n' "$lib" "$(stat -c %s "$lib")" "$(( (t1 - t0) / 1000000 ))e-3" "$(( (t2 - t1) / 1000000 ))e-3" "$same" "$crc" "$src" >>"$out/results.tsv"
  [ "$same" = yes ] && rm -f "$out/$name.scanner.txt" && head -c 20000 "$out/$name.cuobjdump.txt" >"$out/$name.cuobjdump.head.txt" && rm -f "$out/$name.cuobjdump.txt"
done
python3 "$scanner" --verdict sm_120 "${libs[0]}" >"$out/verdict-sm_120.txt" 2>&1
python3 "$scanner" --verdict sm_90 "${libs[0]}" >"$out/verdict-sm_90.txt" 2>&1
cat "$out/results.tsv"

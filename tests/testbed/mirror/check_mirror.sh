#!/usr/bin/env bash
# Prove the running test mirror works as the real upstreams would, from throwaway containers of the
# test bed's base images on the mirror's network:
#   - apt: the signed flat repo with signed-by (no trusted=yes), `apt-get update` without a warning,
#     `apt-get install cuda-toolkit-13-0=13.0.2-1`, nvcc 13.0.88 that lists compute_120;
#   - pip (--isolated --no-deps): torch from the PyTorch nightly cu130 index, flashinfer-jit-cache from
#     the flashinfer cu130 index, sgl-kernel by direct URL, flashinfer-python/flashinfer-cubin/sglang
#     from the PyPI simple index; then the stand-ins import without a GPU.
#
#   tests/testbed/mirror/check_mirror.sh [debian12|debian13 ...]   (default: both; needs serve.sh start)
#
# pip refuses plain-HTTP indexes on hosts other than localhost unless told --trusted-host: so does any
# role that installs from this mirror.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
network=${MIRROR_NETWORK:-sglang-stack-testnet}
prefix=${TESTBED_IMAGE_PREFIX:-sglang-stack-testbed}
"$here/serve.sh" status >/dev/null || { echo "check_mirror.sh: the mirror is not running (serve.sh start)" >&2; exit 1; }

inside=$(cat <<'INNER'
set -euo pipefail
dist=$1; M=http://upstream-mirror:8080
python3 -c "import urllib.request as u; u.urlretrieve('$M/nvidia/cuda/repos/$dist/x86_64/testbed-archive-keyring.gpg', '/usr/share/keyrings/testbed-archive-keyring.gpg')"
echo "deb [signed-by=/usr/share/keyrings/testbed-archive-keyring.gpg] $M/nvidia/cuda/repos/$dist/x86_64/ /" >/etc/apt/sources.list.d/cuda-testbed.list
apt-get update >/tmp/update.log 2>&1 || { cat /tmp/update.log; exit 1; }
cat /tmp/update.log
if grep -Ei '^(W|E):|NO_PUBKEY|not signed|insecure|untrusted' /tmp/update.log; then echo "FAIL: apt-get update warned"; exit 1; fi
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends cuda-toolkit-13-0=13.0.2-1 >/tmp/install.log 2>&1 || { cat /tmp/install.log; exit 1; }
/usr/local/cuda-13.0/bin/nvcc --version | tee /tmp/nvcc.txt
grep -q 'release 13.0, V13.0.88' /tmp/nvcc.txt
/usr/local/cuda-13.0/bin/nvcc --list-gpu-arch | grep -qx compute_120 && echo "nvcc lists compute_120"
python3 -m venv /tmp/v
pip="/tmp/v/bin/pip install -q --isolated --no-deps --disable-pip-version-check --trusted-host upstream-mirror"
$pip --index-url $M/pytorch/whl/nightly/cu130 torch==2.11.0.dev20251231+cu130
$pip --index-url $M/flashinfer/whl/cu130 flashinfer-jit-cache==0.6.4+cu130
$pip "$M/sgl-whl/releases/download/v0.3.21/sgl_kernel-0.3.21%2Bcu130-cp310-abi3-manylinux2014_x86_64.whl"
$pip --index-url $M/pypi/simple flashinfer-python==0.6.4 flashinfer-cubin==0.6.4 sglang==0.5.9
/tmp/v/bin/python - <<'PY'
import importlib.metadata as md
import torch, sgl_kernel, flashinfer_jit_cache, flashinfer_cubin
for d in ["torch", "flashinfer-jit-cache", "sgl-kernel", "flashinfer-python", "flashinfer-cubin", "sglang"]:
    print(f"{d:22s} {md.version(d)}")
assert torch.version.cuda == "13.0" and "compute_120" in torch.cuda.get_arch_list()
print("imports ok without a GPU")
PY
INNER
)

images=("$@"); [ ${#images[@]} -gt 0 ] || images=(debian12 debian13)
for d in "${images[@]}"; do
  echo "=== $d ($prefix/$d:latest)"
  start=$(date +%s)
  docker run --rm --network "$network" "$prefix/$d:latest" bash -c "$inside" check "$d"
  echo "=== $d: OK in $(( $(date +%s) - start )) s"
done

# Copyright (c) 2026 gpuops.sglang_stack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the content of the test bed's local upstream mirror.

    python3 tests/testbed/mirror/build_mirror.py --out build/mirror

The mirror stands in for the upstreams that the test machine cannot reach (NVIDIA's CUDA apt
repository, the PyTorch nightly cu130 index, the flashinfer cu130 index, the sgl-kernel wheel host)
and for the PyPI files the stack needs. Paths under the mirror root mimic the real URLs; the first
path component stands for the host (see README.md beside this file and MANIFEST.json in the output).

Real where reachable: sglang 0.5.9 and flashinfer-python 0.6.4 (PyPI, sha256 checked), the CUDA 13.0
compiler (nvcc 13.0.88 from PyPI's cuda-toolkit[nvcc] wheels, repackaged as a cuda-toolkit-13-0 deb),
and a small dependency closure from PyPI (pypi-closure.txt: what `import sglang` needs with --no-deps,
torch's pure-Python dependencies) for CPython 3.11, 3.12 and 3.13.
Stand-ins otherwise: torch, sgl-kernel, flashinfer-jit-cache, flashinfer-cubin wheels with the real
names, versions and metadata shape, a pure-Python body, and real fatbins built by that nvcc.

Python 3.11 standard library only, plus these programs: pip (of this interpreter), dpkg-deb,
dpkg-scanpackages (dpkg-dev), gpg (gnupg), g++ and strip (for nvcc's host side).

Incremental: every step keeps a stamp (sha256 of its inputs, including the source of the code that
performs it) under <work>/stamps/ and is skipped while the stamp matches and its outputs exist.
Downloads are cached under <cache>/. The output tree is made to match the recipe exactly: files the
recipe no longer produces are removed from it (only in a tree that carries the mirror's marker file).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import html
import inspect
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE))
import real_stack  # noqa: E402  (beside this file: the real stack's wheels and real-layout stand-ins)
STANDINS = HERE / "standins"
CUDA_SRC = STANDINS / "cuda"

# 2025-12-31T00:00:00Z: the date of the torch nightly the stand-in carries. Used for zip entry
# times, deb file times and Packages.gz so that rebuilds give the same bytes.
SOURCE_DATE_EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "1767139200"))
MARKER = ".sglang-stack-mirror"
GENERATOR = "sglang-stack test bed (tests/testbed/mirror/build_mirror.py)"

# --------------------------------------------------------------------------------------------
# The recipe
# --------------------------------------------------------------------------------------------

CUDA = {
    "package": "cuda-toolkit-13-0",
    "version": "13.0.2-1",
    "sdk_version": "13.0.2",
    "prefix": "usr/local/cuda-13.0",
    # nvidia-cuda-nvcc is pinned beside the meta package so that a later 13.0.x of cuda-toolkit cannot
    # silently change the compiler; stack-facts section 5 records V13.0.88.
    "pip_specs": ["cuda-toolkit[nvcc]==13.0.*", "nvidia-cuda-nvcc==13.0.88"],
    "expect_version": "Cuda compilation tools, release 13.0, V13.0.88",
    "expect_arch": "compute_120",
    "dists": ["debian12", "debian13", "ubuntu2204", "ubuntu2404"],
    "upstream": "https://developer.download.nvidia.com/compute/cuda/repos/{dist}/x86_64/",
}
APT_DIR = "nvidia/cuda/repos/{dist}/x86_64"
KEYRING = "testbed-archive-keyring"
KEY_UID = "sglang-stack test bed archive key (TEST ONLY, generated locally) <testbed-archive@sglang-stack.invalid>"

REAL_PYPI = [
    {
        "project": "sglang",
        "version": "0.5.9",
        "file": "sglang-0.5.9-py3-none-any.whl",
        "sha256": "8a936c4d25fea605f44254e533cff2144c73ceffbc1f8738aba393461bbb64d1",
    },
    {
        "project": "flashinfer-python",
        "version": "0.6.4",
        "file": "flashinfer_python-0.6.4-py3-none-any.whl",
        "sha256": "105596b505892ae330af84e250ee0eb6fc2c3a22e8dc42bd46de1b90d36004c8",
    },
]

TORCH = {
    "dist": "torch",
    "version": "2.11.0.dev20251231+cu130",
    "cuda": "13.0",
    # cp311: Debian 12 test image; cp312: the real stack; cp313: Debian 13 test image.
    "pytags": ["cp311", "cp312", "cp313"],
    "platform": "manylinux_2_28_x86_64",
    "requires_python": ">=3.10",
    # The real cu130 x86_64 build (pytorch .ci/manywheel/build_cuda.sh); it also passes
    # -compress-mode=size, so does the stand-in.
    "arch_list": "7.5;8.0;8.6;9.0;10.0;12.0+PTX",
    "index": "https://download.pytorch.org/whl/nightly/cu130",
}

# The companion of the torch nightly stand-in (the stack declaration's torch layer holds torchvision
# in lock-step with torch): a pure-Python stub pinned to that torch, like the real nightly.
TORCHVISION = {
    "dist": "torchvision",
    "version": "0.26.0.dev20251231+cu130",
    "pytags": TORCH["pytags"],
    "platform": TORCH["platform"],
    "requires_python": ">=3.10",
    "index": "https://download.pytorch.org/whl/nightly/cu130",
}

SGL_KERNEL = {
    "dist": "sgl-kernel",
    "version": "0.3.21+cu130",
    "public_version": "0.3.21",
    "pytags": ["cp310", "cp312"],
    "platform": "manylinux2014_x86_64",
    "requires_python": ">=3.10",
    "release": "v0.3.21",
    # sgl-kernel CMakeLists.txt: sm_80, sm_89 (ENABLE_BELOW_SM90), sm_90, sm_90a, sm_100a, sm_120a,
    # plus sm_103a and --compress-mode=size for CUDA >= 13.0. SASS only, no PTX (stack-facts 2.2).
    "codes": ["sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_103a", "sm_120a"],
    "default_built_against_torch": "2.11.0.dev20251231+cu130",
    "index": "https://docs.sglang.io/whl/cu130/sgl-kernel/",
    "release_url": "https://github.com/sgl-project/whl/releases/download/v0.3.21/",
    # Latest upload of the cp312 file in the sgl-project/whl index (stack-facts 2.1).
    "real_sha256": {"cp312": "62d41f63067bfd8184c19e1ead194f232853f0ff2aa3831ed27bc946867ea163"},
}

FI_JIT = {
    "dist": "flashinfer-jit-cache",
    "version": "0.6.4+cu130",
    "tag": "cp39-abi3-manylinux_2_28_x86_64",
    "requires_python": ">=3.9",
    "release": "v0.6.4",
    # The release CI's FLASHINFER_CUDA_ARCH_LIST for CUDA 13.0 (flashinfer release.yml at v0.6.4).
    # nvcc 13.0.88 accepts every entry, 11.0a (sm_110a) and the family target 12.0f (sm_120f)
    # included, so the list is used as it is.
    "arch_list": "7.5 8.0 8.9 9.0a 10.0a 10.3a 11.0a 12.0f",
    "index": "https://flashinfer.ai/whl/cu130/flashinfer-jit-cache/",
    "release_url": "https://github.com/flashinfer-ai/flashinfer/releases/download/v0.6.4/",
}

FI_CUBIN = {
    "dist": "flashinfer-cubin",
    "version": "0.6.4",
    "tag": "py3-none-any",
    "requires_python": ">=3.8",
    "code": "sm_120",
    "url": "https://pypi.org/project/flashinfer-cubin/0.6.4/",
    "real_file": "flashinfer_cubin-0.6.4-py3-none-any.whl",
    # Observed on PyPI (pip's metadata-only report); 245.7 MB, too large to serve here.
    "real_sha256": "6dd03b97ada344ee37b948b0f69977d4df737042a7acd1b296025341d7a7b75b",
}

# Resolved by pip (nothing pinned by hand) once per Python of the test containers and cached.
CLOSURE_REQUIREMENTS = HERE / "pypi-closure.txt"
PYPI_CLOSURE = {
    # 3.11: Debian 12 test image; 3.12: the real stack; 3.13: Debian 13 test image.
    "python_versions": ["3.11", "3.12", "3.13"],
    "implementation": "cp",
    "platforms": ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "any"],
}

URL_PREFIXES = {
    "nvidia/": "https://developer.download.nvidia.com/compute/",
    "pytorch/": "https://download.pytorch.org/",
    "flashinfer/whl/": "https://flashinfer.ai/whl/",
    "flashinfer/releases/": "https://github.com/flashinfer-ai/flashinfer/releases/",
    "sgl-whl/cu130/": "https://docs.sglang.io/whl/cu130/",
    "sgl-whl/releases/": "https://github.com/sgl-project/whl/releases/",
    "pypi/simple/": "https://pypi.org/simple/",
    "pypi/packages/": "https://files.pythonhosted.org/packages/ (flattened: one folder, no hash path)",
}

# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------

LOG_T0 = time.monotonic()


def log(msg: str) -> None:
    print(f"[{time.monotonic() - LOG_T0:7.1f}s] {msg}", flush=True)


class BuildError(RuntimeError):
    pass


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# One streaming file digest for the whole mirror build (real_stack.py hashes the real wheels with it).
sha256_file = real_stack.sha256_file


def run(cmd: list, cwd: Path | None = None, env: dict | None = None) -> str:
    """Run a program; return its stdout (stderr is shown only when it fails)."""
    try:
        proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, check=False,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except FileNotFoundError as exc:
        raise BuildError(f"program not found: {cmd[0]} ({exc}); see tests/testbed/apt-requirements.txt") from exc
    if proc.returncode != 0:
        raise BuildError(f"command failed ({proc.returncode}): {' '.join(map(str, cmd))}\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def write_if_changed(path: Path, data: bytes, mode: int = 0o644) -> bool:
    if path.is_file() and not path.is_symlink():
        try:
            if path.read_bytes() == data:
                return False
        except OSError:
            pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)
    return True


def recipe_hash(*parts) -> str:
    """sha256 of JSON-able parts; functions are hashed by their source text."""
    norm = []
    for p in parts:
        if callable(p):
            norm.append(inspect.getsource(p))
        elif isinstance(p, Path):
            norm.append({"file": str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(p),
                         "sha256": sha256_file(p)})
        else:
            norm.append(p)
    return sha256_bytes(json.dumps(norm, sort_keys=True, default=str).encode())


class Stamps:
    def __init__(self, root: Path, force: bool):
        self.root = root
        self.force = force
        root.mkdir(parents=True, exist_ok=True)

    def fresh(self, name: str, inputs: str, outputs: list) -> bool:
        if self.force:
            return False
        f = self.root / f"{name}.json"
        if not f.is_file():
            return False
        try:
            data = json.loads(f.read_text())
        except ValueError:
            return False
        return data.get("inputs") == inputs and all(Path(o).exists() for o in outputs)

    def data(self, name: str) -> dict:
        return json.loads((self.root / f"{name}.json").read_text())

    def write(self, name: str, inputs: str, **extra) -> None:
        write_if_changed(self.root / f"{name}.json", json.dumps({"inputs": inputs, **extra}, indent=1, sort_keys=True).encode())


def clean_env() -> dict:
    """The environment for pip: no PIP_* variables of this machine (find-links etc.)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | {"PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def wheel_name_norm(dist: str) -> str:
    return dist.replace("-", "_").replace(".", "_")


def project_name_norm(name: str) -> str:
    """PEP 503 normalised project name (the pypi/simple/<project>/ folder)."""
    return re.sub(r"[-_.]+", "-", name).lower()


# --------------------------------------------------------------------------------------------
# Step 1: downloads (cached)
# --------------------------------------------------------------------------------------------


def fetch_nvcc(cache: Path, stamps: Stamps) -> list:
    dest = cache / "nvcc-13.0"
    inputs = recipe_hash(CUDA["pip_specs"])
    if not stamps.fresh("fetch-nvcc", inputs, [dest]) or not list(dest.glob("*.whl")):
        t0 = time.monotonic()
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        run([sys.executable, "-m", "pip", "download", "--isolated", "--only-binary", ":all:",
             "--no-cache-dir", "--dest", dest, *CUDA["pip_specs"]], env=clean_env())
        stamps.write("fetch-nvcc", inputs, files={w.name: sha256_file(w) for w in sorted(dest.glob("*.whl"))})
        log(f"fetch nvcc wheels: downloaded in {time.monotonic() - t0:.1f}s")
    else:
        log("fetch nvcc wheels: cached")
    return sorted(dest.glob("*.whl"))


def fetch_real_pypi(cache: Path, stamps: Stamps) -> dict:
    dest = cache / "pypi"
    wanted = {r["file"]: r for r in REAL_PYPI}
    missing = [f for f in wanted if not (dest / f).is_file()]
    if missing:
        t0 = time.monotonic()
        dest.mkdir(parents=True, exist_ok=True)
        specs = [f"{r['project']}=={r['version']}" for r in REAL_PYPI if r["file"] in missing]
        run([sys.executable, "-m", "pip", "download", "--isolated", "--no-deps", "--only-binary", ":all:",
             "--no-cache-dir", "--dest", dest, *specs], env=clean_env())
        log(f"fetch PyPI wheels {specs}: downloaded in {time.monotonic() - t0:.1f}s")
    else:
        log("fetch PyPI wheels: cached")
    out = {}
    for f, r in wanted.items():
        p = dest / f
        if not p.is_file():
            raise BuildError(f"pip did not produce {f} in {dest}")
        got = sha256_file(p)
        if got != r["sha256"]:
            raise BuildError(f"SHA256 MISMATCH for {f}: got {got}, stack-facts.md says {r['sha256']}. "
                             f"Refusing to publish it. Delete {p} to download again, or update the pin.")
        out[f] = p
    return out


def _fetch_closure_for(pyver: str, cache: Path, stamps: Stamps) -> dict:
    dest = cache / "pypi-closure" / pyver
    name = f"fetch-pypi-closure-{pyver}"
    inputs = recipe_hash(PYPI_CLOSURE, pyver, CLOSURE_REQUIREMENTS, _fetch_closure_for)
    if stamps.fresh(name, inputs, [dest]) and all((dest / f).is_file() for f in stamps.data(name).get("files", {})):
        log(f"fetch PyPI closure for Python {pyver}: cached")
        return {f: (dest / f, digest) for f, digest in stamps.data(name)["files"].items()}
    t0 = time.monotonic()
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    platforms = [a for p in PYPI_CLOSURE["platforms"] for a in ("--platform", p)]
    run([sys.executable, "-m", "pip", "download", "--isolated", "--only-binary=:all:", "--no-cache-dir",
         "--python-version", pyver, "--implementation", PYPI_CLOSURE["implementation"], *platforms,
         "-d", dest, "-r", CLOSURE_REQUIREMENTS], env=clean_env())
    files = {w.name: sha256_file(w) for w in sorted(dest.iterdir()) if w.is_file()}
    odd = [f for f in files if not f.endswith(".whl")]
    if odd or not files:
        raise BuildError(f"pip download for Python {pyver} gave no wheels or non-wheel files: {odd or 'none'} in {dest}")
    stamps.write(name, inputs, files=files)
    size = sum((dest / f).stat().st_size for f in files)
    log(f"fetch PyPI closure for Python {pyver}: {len(files)} wheels, {size / 1e6:.1f} MB in {time.monotonic() - t0:.1f}s")
    return {f: (dest / f, digest) for f, digest in files.items()}


def fetch_pypi_closure(cache: Path, stamps: Stamps) -> dict:
    """pip download pypi-closure.txt (with dependencies) for each Python; return {wheel file name: (path, sha256)}."""
    with ThreadPoolExecutor(max_workers=len(PYPI_CLOSURE["python_versions"])) as pool:
        per_py = list(pool.map(lambda v: _fetch_closure_for(v, cache, stamps), PYPI_CLOSURE["python_versions"]))
    out: dict = {}
    for files in per_py:
        for f, (p, digest) in files.items():
            # A pure-Python wheel is downloaded once per Python: the same file, so keep one copy.
            if f in out and out[f][1] != digest:
                raise BuildError(f"{f} differs between {out[f][0]} and {p}; delete {cache / 'pypi-closure'} to download again")
            out.setdefault(f, (p, digest))
    return dict(sorted(out.items()))


# --------------------------------------------------------------------------------------------
# Step 2: the cuda-toolkit-13-0 deb (real nvcc 13.0.88 from PyPI, NVIDIA's layout)
# --------------------------------------------------------------------------------------------


def _wheel_component_versions(wheels: list) -> dict:
    vers = {}
    for w in wheels:
        name, ver = w.name.split("-")[:2]
        vers[name] = ver
    return vers


def _stage_cuda_tree(wheels: list, stage: Path) -> dict:
    """Lay the wheels' nvidia/cu13 files out like NVIDIA's /usr/local/cuda-13.0."""
    unpack = stage.parent / "unpacked"
    shutil.rmtree(unpack, ignore_errors=True)
    for w in wheels:
        with zipfile.ZipFile(w) as zf:
            for m in zf.namelist():
                if m.startswith("nvidia/cu13/") and not m.endswith("/"):
                    zf.extract(m, unpack)
    src = unpack / "nvidia" / "cu13"
    top = stage / CUDA["prefix"]
    tgt = top / "targets" / "x86_64-linux"
    layout = [
        # (source relative to cu13/, destination relative to the toolkit prefix, executable)
        ("bin/nvcc", "bin/nvcc", True),
        ("bin/nvcc.profile", "bin/nvcc.profile", False),
        ("bin/ptxas", "bin/ptxas", True),
        ("bin/fatbinary", "bin/fatbinary", True),
        ("bin/nvlink", "bin/nvlink", True),
        ("bin/cudafe++", "bin/cudafe++", True),
        ("bin/bin2c", "bin/bin2c", True),
        ("bin/__nvcc_device_query", "bin/__nvcc_device_query", True),
        ("bin/crt/link.stub", "bin/crt/link.stub", False),
        ("bin/crt/prelink.stub", "bin/crt/prelink.stub", False),
        ("nvvm/bin/cicc", "nvvm/bin/cicc", True),
        ("nvvm/libdevice/libdevice.10.bc", "nvvm/libdevice/libdevice.10.bc", False),
        # nvcc links libcudadevrt and libcudart_static by default; libcudart.so.13 for -cudart shared.
        # Left out on purpose: lib/libnvvm.so.4 (61 MB, the NVVM library API; nvcc does not use it).
        ("lib/libcudadevrt.a", "targets/x86_64-linux/lib/libcudadevrt.a", False),
        ("lib/libcudart_static.a", "targets/x86_64-linux/lib/libcudart_static.a", False),
        ("lib/libcudart.so.13", "targets/x86_64-linux/lib/libcudart.so.13", False),
    ]
    for s, d, exe in layout:
        dst = top / d
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / s, dst)
        os.chmod(dst, 0o755 if exe else 0o644)
    shutil.copytree(src / "include", tgt / "include")
    # NVIDIA's layout: include and lib64 at the top are links into targets/x86_64-linux;
    # nvcc.profile looks in targets/x86_64-linux/lib$(_TARGET_SIZE_), so lib64 -> lib there too.
    os.symlink("libcudart.so.13", tgt / "lib" / "libcudart.so")
    os.symlink("lib", tgt / "lib64")
    os.symlink("targets/x86_64-linux/include", top / "include")
    os.symlink("targets/x86_64-linux/lib", top / "lib64")
    shutil.rmtree(unpack)
    for p in sorted(top.rglob("*")):
        if p.is_dir() and not p.is_symlink():
            os.chmod(p, 0o755)
        elif p.is_file() and not p.is_symlink() and not os.access(p, os.X_OK):
            os.chmod(p, 0o644)
    return _wheel_component_versions(wheels)


def _deb_control(stage: Path, versions: dict) -> str:
    size_kib = sum((p.lstat().st_size + 1023) // 1024 for p in stage.rglob("*") if not p.is_dir())
    comps = ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))
    return (
        f"Package: {CUDA['package']}\n"
        f"Version: {CUDA['version']}\n"
        "Architecture: amd64\n"
        "Maintainer: sglang-stack test bed <testbed@sglang-stack.invalid>\n"
        f"Installed-Size: {size_kib}\n"
        "Section: devel\n"
        "Priority: optional\n"
        "Suggests: g++\n"
        f"Description: TEST STAND-IN for NVIDIA's {CUDA['package']} {CUDA['version']}, not NVIDIA's package\n"
        " Served by the sglang-stack test mirror in place of NVIDIA's CUDA apt repository\n"
        f" ({CUDA['upstream'].format(dist='<distro>')}). It carries the REAL CUDA 13.0\n"
        " compiler (nvcc 13.0.88 with ptxas, fatbinary, nvlink, cudafe++, bin2c, nvvm/bin/cicc,\n"
        " the headers, cudart and the static libraries nvcc links by default), unpacked from the\n"
        f" PyPI wheels of {CUDA['pip_specs'][0]} ({comps})\n"
        f" and laid out under /{CUDA['prefix']} like NVIDIA's packages. Only what compiling\n"
        " a kernel needs: no other CUDA libraries or tools, no libnvvm.so, no documentation,\n"
        " no maintainer scripts (NVIDIA's packages also register the 'cuda' alternatives).\n"
    )


def build_cuda_deb(wheels: list, work: Path, stamps: Stamps) -> tuple:
    """Build the deb, then prove the packaged nvcc works from an extracted copy."""
    out_dir = work / "cuda"
    deb = out_dir / f"{CUDA['package']}_{CUDA['version']}_amd64.deb"
    extract = out_dir / "extract"
    nvcc = extract / CUDA["prefix"] / "bin" / "nvcc"
    inputs = recipe_hash(CUDA, [(w.name, sha256_file(w)) for w in wheels], _stage_cuda_tree, _deb_control,
                         build_cuda_deb, verify_nvcc, CUDA_SRC / "nvcc_selftest.cu", fatbin_entries, check_fatbin)
    if stamps.fresh("cuda-deb", inputs, [deb, nvcc]):
        log(f"cuda deb: up to date ({deb.name})")
        return deb, nvcc
    t0 = time.monotonic()
    stage = out_dir / "stage"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    versions = _stage_cuda_tree(wheels, stage)
    top = stage / CUDA["prefix"]
    version_json = {
        "cuda": {"name": "CUDA SDK", "version": CUDA["sdk_version"]},
        "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": versions.get("nvidia_cuda_runtime", "")},
        "cuda_nvcc": {"name": "CUDA NVCC", "version": versions.get("nvidia_cuda_nvcc", "")},
        "cuda_crt": {"name": "CUDA CRT", "version": versions.get("nvidia_cuda_crt", "")},
        "libnvvm": {"name": "CUDA NVVM", "version": versions.get("nvidia_nvvm", "")},
        "testbed_note": {"name": "TEST STAND-IN: compiler subset repackaged from PyPI wheels, not NVIDIA's package",
                         "version": CUDA["version"]},
    }
    (top / "version.json").write_text(json.dumps(version_json, indent=3, sort_keys=True) + "\n")
    os.chmod(top / "version.json", 0o644)
    (stage / "DEBIAN").mkdir()
    (stage / "DEBIAN" / "control").write_text(_deb_control(stage, versions))
    for p in [stage, *stage.rglob("*")]:
        os.utime(p, (SOURCE_DATE_EPOCH, SOURCE_DATE_EPOCH), follow_symlinks=False)
    tmp = deb.with_name(deb.name + ".tmp")
    # zstd: bookworm's dpkg (1.21.x) and apt read it; much faster than xz, smaller than gzip -1.
    run(["dpkg-deb", "--root-owner-group", "-Zzstd", "-z3", "--build", stage, tmp],
        env=os.environ | {"SOURCE_DATE_EPOCH": str(SOURCE_DATE_EPOCH)})
    os.replace(tmp, deb)
    shutil.rmtree(stage)
    log(f"cuda deb: built {deb.name} ({deb.stat().st_size / 1e6:.1f} MB) in {time.monotonic() - t0:.1f}s")
    shutil.rmtree(extract, ignore_errors=True)
    run(["dpkg-deb", "-x", deb, extract])
    verify_nvcc(nvcc, out_dir / "selftest")
    stamps.write("cuda-deb", inputs, sha256=sha256_file(deb))
    log(f"cuda deb: verified from an extracted copy ({time.monotonic() - t0:.1f}s in all)")
    return deb, nvcc


def verify_nvcc(nvcc: Path, tmpdir: Path) -> None:
    shutil.rmtree(tmpdir, ignore_errors=True)
    tmpdir.mkdir(parents=True)
    out = run([nvcc, "--version"])
    if CUDA["expect_version"] not in out:
        raise BuildError(f"packaged nvcc --version does not say '{CUDA['expect_version']}':\n{out}")
    arches = run([nvcc, "--list-gpu-arch"]).split()
    if CUDA["expect_arch"] not in arches:
        raise BuildError(f"packaged nvcc --list-gpu-arch lacks {CUDA['expect_arch']}: {arches}")
    shutil.copyfile(CUDA_SRC / "nvcc_selftest.cu", tmpdir / "selftest.cu")
    so = tmpdir / "libselftest.so"
    run([nvcc, "-shared", "-Xcompiler", "-fPIC", "-o", so.name, "selftest.cu",
         "-gencode", "arch=compute_120,code=sm_120"], cwd=tmpdir)
    check_fatbin(so, ["sm_120"])
    run([nvcc, "-cubin", "-arch", "sm_120", "-o", "selftest.cubin", "selftest.cu"], cwd=tmpdir)
    shutil.rmtree(tmpdir)


# --------------------------------------------------------------------------------------------
# Fatbin self-check: the stand-ins must carry exactly the targets the recipe asks for
# --------------------------------------------------------------------------------------------


def _elf_section(data: bytes, name: str) -> bytes | None:
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise BuildError("not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    stroff = secs[shstrndx][4]
    for s in secs:
        end = data.index(b"\0", stroff + s[0])
        if data[stroff + s[0]:end].decode() == name:
            return data[s[4]:s[4] + s[5]]
    return None


def fatbin_entries(path: Path) -> list:
    """(kind, target) of every entry of the .nv_fatbin section, e.g. ('elf', 'sm_90a'), ('ptx', 'compute_120').

    Entry header: u16 kind (1 PTX, 2 ELF), u16, u32 header size, u64 payload size, ..., u32 arch at
    offset 28, u64 flags at offset 40 (0x100000: arch-specific 'a' target, 0x200000: family 'f' target).
    This is a build-time self-check only; the collection's scanner is tested against cuobjdump.
    """
    blob = _elf_section(path.read_bytes(), ".nv_fatbin")
    out = []
    off = 0
    while blob and off + 16 <= len(blob):
        magic, _ver, hsz, fsz = struct.unpack_from("<IHHQ", blob, off)
        if magic != 0xBA55ED50:
            break
        p, end = off + hsz, off + hsz + fsz
        while p < end:
            kind, _u, ehsz, psz = struct.unpack_from("<HHIQ", blob, p)
            arch, = struct.unpack_from("<I", blob, p + 28)
            flags, = struct.unpack_from("<Q", blob, p + 40)
            suffix = "a" if flags & 0x100000 else "f" if flags & 0x200000 else ""
            out.append(("ptx", f"compute_{arch}{suffix}") if kind == 1 else ("elf", f"sm_{arch}{suffix}"))
            p += ehsz + psz
        off = (end + 7) // 8 * 8
    return out


def check_fatbin(path: Path, codes: list) -> list:
    want = {("ptx", c) if c.startswith("compute_") else ("elf", c) for c in codes}
    got = set(fatbin_entries(path))
    if got != want:
        raise BuildError(f"{path.name}: fatbin targets {sorted(got)} differ from the recipe's {sorted(want)}")
    return list(codes)


# --------------------------------------------------------------------------------------------
# Step 3: signing key and the flat apt repository
# --------------------------------------------------------------------------------------------


def gpg_cmd(key_dir: Path) -> list:
    return ["gpg", "--homedir", key_dir, "--batch", "--yes", "--no-tty", "--pinentry-mode", "loopback", "--passphrase", ""]


def ensure_key(key_dir: Path, work: Path) -> dict:
    """The OpenPGP key generated for tests; kept under build/mirror-key/, never committed."""
    key_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(key_dir, 0o700)
    fpr_file = key_dir / "fingerprint"

    def secret_fpr() -> str:
        out = run([*gpg_cmd(key_dir), "--with-colons", "--list-secret-keys"])
        fprs = [ln.split(":")[9] for ln in out.splitlines() if ln.startswith("fpr:")]
        return fprs[0] if fprs else ""

    fpr = fpr_file.read_text().strip() if fpr_file.is_file() else ""
    if not fpr or secret_fpr() != fpr:
        t0 = time.monotonic()
        fpr = secret_fpr()
        if not fpr:
            run([*gpg_cmd(key_dir), "--quick-gen-key", KEY_UID, "rsa3072", "sign", "never"])
            fpr = secret_fpr()
            log(f"signing key: generated {fpr} in {time.monotonic() - t0:.1f}s (in {key_dir})")
        fpr_file.write_text(fpr + "\n")
    else:
        log(f"signing key: {fpr}")
    pub = work / "key"
    pub.mkdir(parents=True, exist_ok=True)
    binary = run_bytes([*gpg_cmd(key_dir), "--export", fpr])
    armored = run_bytes([*gpg_cmd(key_dir), "--armor", "--export", fpr])
    write_if_changed(pub / f"{KEYRING}.gpg", binary)
    write_if_changed(pub / f"{KEYRING}.asc", armored)
    return {"fingerprint": fpr, "gpg": pub / f"{KEYRING}.gpg", "asc": pub / f"{KEYRING}.asc"}


def stop_gpg_agent(key_dir: Path) -> None:
    """gpg starts an agent for the key's home; do not leave it behind."""
    if key_dir.is_dir():
        subprocess.run(["gpgconf", "--homedir", str(key_dir), "--kill", "gpg-agent"], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_bytes(cmd: list) -> bytes:
    proc = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0 or not proc.stdout:
        raise BuildError(f"command failed: {' '.join(map(str, cmd))}\n{proc.stderr.decode(errors='replace')}")
    return proc.stdout


def build_apt_repo(deb: Path, key: dict, key_dir: Path, work: Path, stamps: Stamps) -> Path:
    repo = work / "apt"
    names = [deb.name, "Packages", "Packages.gz", "Release", "InRelease", "Release.gpg"]
    inputs = recipe_hash(sha256_file(deb), key["fingerprint"], build_apt_repo, gpg_cmd)
    if stamps.fresh("apt-repo", inputs, [repo / n for n in names]):
        log("apt repo: up to date")
        return repo
    t0 = time.monotonic()
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    os.link(deb, repo / deb.name)
    packages = run(["dpkg-scanpackages", "--multiversion", ".", "/dev/null"], cwd=repo)
    if f"Filename: ./{deb.name}" not in packages or not packages.startswith("Package: "):
        raise BuildError(f"dpkg-scanpackages output lacks ./{deb.name}:\n{packages}")
    pk = packages.encode()
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
        gz.write(pk)
    pkgz = buf.getvalue()
    (repo / "Packages").write_bytes(pk)
    (repo / "Packages.gz").write_bytes(pkgz)
    # Written by hand (SHA256 only) and in memory: the Release file never lists itself.
    date = time.strftime("%a, %d %b %Y %H:%M:%S UTC", time.gmtime())
    release = (
        "Origin: sglang-stack test bed\n"
        "Label: TEST MIRROR standing in for NVIDIA's CUDA repository (not NVIDIA)\n"
        f"Date: {date}\n"
        "Acquire-By-Hash: no\n"
        "SHA256:\n"
        f" {sha256_bytes(pk)} {len(pk):16d} Packages\n"
        f" {sha256_bytes(pkgz)} {len(pkgz):16d} Packages.gz\n"
    )
    tmp = work / "Release.tmp"
    tmp.write_text(release)
    os.replace(tmp, repo / "Release")
    fpr = key["fingerprint"]
    run([*gpg_cmd(key_dir), "--local-user", fpr, "--digest-algo", "SHA256", "--clearsign",
         "--output", repo / "InRelease", repo / "Release"])
    run([*gpg_cmd(key_dir), "--local-user", fpr, "--digest-algo", "SHA256", "--armor", "--detach-sign",
         "--output", repo / "Release.gpg", repo / "Release"])
    # Check the signatures the way apt will: gpgv against the exported public keyring only.
    run(["gpgv", "--keyring", key["gpg"], repo / "InRelease"])
    run(["gpgv", "--keyring", key["gpg"], repo / "Release.gpg", repo / "Release"])
    stamps.write("apt-repo", inputs)
    log(f"apt repo: signed in {time.monotonic() - t0:.1f}s")
    return repo


# --------------------------------------------------------------------------------------------
# Step 4: nvcc builds for the stand-ins
# --------------------------------------------------------------------------------------------


def torch_gencodes(arch_list: str) -> tuple:
    """TORCH_CUDA_ARCH_LIST -> (codes, gencode args, torch-style flags string, get_arch_list())."""
    codes, args, flags, archs = [], [], [], []
    for item in arch_list.split(";"):
        ptx = item.endswith("+PTX")
        num = item.removesuffix("+PTX").replace(".", "")
        codes.append(f"sm_{num}")
        args += ["-gencode", f"arch=compute_{num},code=sm_{num}"]
        flags.append(f"-gencode;arch=compute_{num},code=sm_{num}")
        archs.append(f"sm_{num}")
        if ptx:
            codes.append(f"compute_{num}")
            args += ["-gencode", f"arch=compute_{num},code=compute_{num}"]
            flags.append(f"-gencode;arch=compute_{num},code=compute_{num}")
    archs += [c for c in codes if c.startswith("compute_")]
    return codes, args, ";".join(flags), archs


def sass_gencodes(codes: list) -> list:
    args = []
    for c in codes:
        args += ["-gencode", f"arch={c.replace('sm_', 'compute_')},code={c}"]
    return args


def flashinfer_codes(arch_list: str) -> list:
    return ["sm_" + a.replace(".", "") for a in arch_list.split()]


def cuda_jobs(built_against: str) -> list:
    t_codes, t_args, t_flags, _archs = torch_gencodes(TORCH["arch_list"])
    fi_codes = flashinfer_codes(FI_JIT["arch_list"])
    sgl = SGL_KERNEL["codes"]
    return [
        {"name": "libtorch_cuda", "src": "torch_cuda_kernels.cu", "codes": t_codes,
         "args": [*t_args, "--compress-mode=size"], "defines": {"STANDIN_ARCH_FLAGS": t_flags}},
        {"name": "libc10_cuda", "src": "c10_cuda.cu", "codes": [], "args": [], "defines": {}},
        # torchvision's CUDA ops library is built with torch's arch list (PyPI 0.26.0: SASS sm_75 ... sm_120, PTX 12.0).
        {"name": "torchvision_C", "src": "real_layout_kernel.cu", "codes": t_codes,
         "args": [*t_args, "--compress-mode=size"],
         "defines": {"STANDIN_WHAT": f"torchvision {TORCHVISION['version']} torchvision/_C.so"}},
        {"name": "sgl_sm90_common_ops", "src": "sgl_kernel_common_ops.cu", "codes": sgl,
         "args": [*sass_gencodes(sgl), "--compress-mode=size", "-use_fast_math"], "defines": {}},
        {"name": "sgl_sm100_common_ops", "src": "sgl_kernel_common_ops.cu", "codes": sgl,
         "args": [*sass_gencodes(sgl), "--compress-mode=size"], "defines": {}},
        {"name": "flashinfer_norm", "src": "flashinfer_norm.cu", "codes": fi_codes,
         "args": sass_gencodes(fi_codes), "defines": {}},
        {"name": "flashinfer_cubin_sm120", "src": "flashinfer_cubin_kernel.cu", "codes": [FI_CUBIN["code"]],
         "args": [], "defines": {}, "cubin": True},
    ]


def compile_job(job: dict, nvcc: Path, nvcc_id: str, work: Path, stamps: Stamps) -> dict:
    ext = ".cubin" if job.get("cubin") else ".so"
    out = work / "cuda-out" / f"{job['name']}{ext}"
    src = CUDA_SRC / job["src"]
    inputs = recipe_hash(job, nvcc_id, src, compile_job, check_fatbin, fatbin_entries)
    name = f"nvcc-{job['name']}"
    if stamps.fresh(name, inputs, [out]):
        return {"path": out, "targets": stamps.data(name)["targets"], "built": False}
    t0 = time.monotonic()
    bdir = work / "cuda-build" / job["name"]
    shutil.rmtree(bdir, ignore_errors=True)
    bdir.mkdir(parents=True)
    # The source is copied with its defines in front (nvcc splits -D values at commas) and compiled
    # under a relative name, so no path of this machine ends up in the binary.
    prelude = "".join(f'#define {k} "{v}"\n' for k, v in job["defines"].items())
    (bdir / f"{job['name']}.cu").write_text(prelude + src.read_text())
    tmp = bdir / f"out{ext}"
    if job.get("cubin"):
        code = job["codes"][0]
        run([nvcc, "-cubin", "-O3", "-arch", code, "-o", tmp.name, f"{job['name']}.cu"], cwd=bdir)
        targets = [code]
    else:
        run([nvcc, "-shared", "-O3", "-Xcompiler", "-fPIC", "-cudart", "shared", "-o", tmp.name,
             f"{job['name']}.cu", *job["args"]], cwd=bdir)
        # nvcc names its temporary files after its process id and the host compiler records that name
        # as a FILE symbol; dropping the static symbol table makes the output reproducible.
        run(["strip", "--strip-unneeded", tmp.name], cwd=bdir)
        targets = check_fatbin(tmp, job["codes"]) if job["codes"] else []
        if job.get("host_only") and _elf_section(tmp.read_bytes(), ".nv_fatbin") is not None:
            raise BuildError(f"{job['name']}: a host-code-only library must have no .nv_fatbin section")
    out.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, out)
    shutil.rmtree(bdir)
    stamps.write(name, inputs, targets=targets, sha256=sha256_file(out))
    log(f"nvcc {job['name']}: {', '.join(targets) or 'host code only'} ({out.stat().st_size} B, {time.monotonic() - t0:.1f}s)")
    return {"path": out, "targets": targets, "built": True}


# --------------------------------------------------------------------------------------------
# Step 5: stand-in wheels, written with zipfile (deterministic)
# --------------------------------------------------------------------------------------------


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(out_dir: Path, dist: str, version: str, tags: list, files: dict, metadata: str, purelib: bool) -> Path:
    """files: {archive path: (bytes, mode)}. Returns the wheel path; rewrites it only when its bytes change."""
    norm = wheel_name_norm(dist)
    info = f"{norm}-{version}.dist-info"
    tag_str = "-".join(".".join(sorted(set(part))) for part in zip(*[t.split("-") for t in tags]))
    wheel_meta = (
        "Wheel-Version: 1.0\n"
        f"Generator: {GENERATOR}\n"
        f"Root-Is-Purelib: {'true' if purelib else 'false'}\n"
        + "".join(f"Tag: {t}\n" for t in tags)
    )
    entries = dict(files)
    entries[f"{info}/METADATA"] = (metadata.encode(), 0o644)
    entries[f"{info}/WHEEL"] = (wheel_meta.encode(), 0o644)
    entries[f"{info}/top_level.txt"] = (
        "".join(sorted({p.split("/")[0] + "\n" for p in files if "/" in p})).encode(), 0o644)
    record_path = f"{info}/RECORD"
    names = sorted(entries, key=lambda n: (n.startswith(info), n))
    record = "".join(f"{n},{_record_hash(entries[n][0])},{len(entries[n][0])}\n" for n in names) + f"{record_path},,\n"
    entries[record_path] = (record.encode(), 0o644)
    names.append(record_path)
    buf = io.BytesIO()
    stamp = time.gmtime(SOURCE_DATE_EPOCH)[:6]
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for n in names:
            data, mode = entries[n]
            zi = zipfile.ZipInfo(n, date_time=stamp)
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.create_system = 3
            zf.writestr(zi, data, compresslevel=6)
    path = out_dir / f"{norm}-{version}-{tag_str}.whl"
    write_if_changed(path, buf.getvalue())
    return path


def _pkg_files(pkg_root: Path, subst: dict) -> dict:
    """Python files of a stand-in package, placeholders filled in.

    In code a placeholder is a quoted string ("@NAME@"), replaced by the Python literal of the value
    (so the templates stay valid Python for linters); in docstrings and comments it is replaced by text.
    """
    files = {}
    for p in sorted(pkg_root.rglob("*")):
        if p.is_dir() or "__pycache__" in p.parts or p.suffix == ".pyc":
            continue
        text = p.read_text()
        for k, v in subst.items():
            text = text.replace(f'"@{k}@"', repr(v)).replace(f"'@{k}@'", repr(v)).replace(f"@{k}@", str(v))
        if "@" in text and any(f"@{k}@" in text for k in subst):
            raise BuildError(f"unfilled placeholder in {p}")
        files[p.relative_to(pkg_root).as_posix()] = (text.encode(), 0o644)
    return files


def _metadata(dist: str, version: str, summary: str, body: str, requires_python: str,
              requires: list, classifiers: list, urls: list) -> str:
    if "\n" in summary:
        raise BuildError("Summary must be one line")
    lines = ["Metadata-Version: 2.1", f"Name: {dist}", f"Version: {version}", f"Summary: {summary}",
             "Author: sglang-stack test bed (stand-in)", "License: GPL-3.0-or-later (the stand-in's own code)"]
    lines += [f"Project-URL: {u}" for u in urls]
    lines += [f"Classifier: {c}" for c in classifiers]
    lines.append(f"Requires-Python: {requires_python}")
    lines += [f"Requires-Dist: {r}" for r in requires]
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + body.strip() + "\n"


def build_torch(so: dict, out_dir: Path) -> list:
    codes, _args, flags, arch_list = torch_gencodes(TORCH["arch_list"])
    v = TORCH["version"]
    files = _pkg_files(STANDINS / "torch", {"TORCH_VERSION": v, "TORCH_CUDA": TORCH["cuda"],
                                            "ARCH_LIST": arch_list, "ARCH_FLAGS": flags})
    files["torch/lib/libtorch_cuda.so"] = (so["libtorch_cuda"]["path"].read_bytes(), 0o755)
    files["torch/lib/libc10_cuda.so"] = (so["libc10_cuda"]["path"].read_bytes(), 0o755)
    summary = (f"TEST STAND-IN for torch {v} ({TORCH['index']}): NOT the real PyTorch, a pure-Python stub "
               "with nvcc-built fatbins for the sglang-stack test bed")
    body = f"""
# TEST STAND-IN for torch {v}

Stands in for the PyTorch nightly wheel `torch-{v}-cpXY-cpXY-{TORCH['platform']}.whl` of
{TORCH['index']} in the sglang-stack test bed. **This is not PyTorch**: no tensors, no operators.

- `torch.__version__` = `{v}`, `torch.version.cuda` = `{TORCH['cuda']}` (`torch/version.py` is laid out like
  the generated file; `git_version` is zeros).
- `torch/lib/libtorch_cuda.so`: built by the real nvcc 13.0.88 with `TORCH_CUDA_ARCH_LIST="{TORCH['arch_list']}"`
  and `--compress-mode=size` like the real cu130 x86_64 build: SASS for {', '.join(c for c in codes if c.startswith('sm_'))}
  and PTX for {', '.join(c for c in codes if c.startswith('compute_'))}. `torch/lib/libc10_cuda.so`: host code built by nvcc.
  `import torch` never loads them, so it works without a GPU or a CUDA runtime.
- `torch.cuda.is_available()` is False; `torch.cuda.get_arch_list()` returns {arch_list}
  (the real one returns [] without a GPU: a deliberate difference).
- Requires-Dist: the cu130 pins recorded in the test bed's stack facts (pytorch
  `generate_binary_build_matrix.py`, 13.0 entry) plus torch's usual Python dependencies; the real nightly also
  lists nvrtc, cupti, cufft, curand, cusolver, cusparse(lt), nvtx, nvjitlink, cufile and pytorch-triton, whose
  exact pins are not known here. Install it with `--no-deps`.
"""
    requires = [
        "filelock", "typing-extensions>=4.10.0", 'setuptools; python_version >= "3.12"', "sympy>=1.13.3",
        "networkx>=2.5.1", "jinja2", "fsspec>=0.8.5",
        'cuda-bindings==13.0.3; platform_system == "Linux"',
        'nvidia-cuda-runtime~=13.0.48; platform_system == "Linux"',
        'nvidia-cublas==13.1.0.3; platform_system == "Linux"',
        'nvidia-cudnn-cu13==9.17.1.4; platform_system == "Linux"',
        'nvidia-nccl-cu13==2.28.9; platform_system == "Linux"',
        'nvidia-nvshmem-cu13==3.4.5; platform_system == "Linux"',
    ]
    meta = _metadata("torch", v, summary, body, TORCH["requires_python"], requires,
                     ["Programming Language :: Python :: 3", "Environment :: GPU :: NVIDIA CUDA"],
                     ["Homepage, https://pytorch.org", f"Stands-In-For, {TORCH['index']}"])
    return [build_wheel(out_dir, "torch", v, [f"{t}-{t}-{TORCH['platform']}"], files, meta, purelib=False)
            for t in TORCH["pytags"]]


def build_torchvision(so: dict, out_dir: Path) -> list:
    v = TORCHVISION["version"]
    files = _pkg_files(STANDINS / "torchvision", {"VERSION": v, "TORCH_VERSION": TORCH["version"], "TORCH_CUDA": TORCH["cuda"],
                                                  "INDEX": TORCHVISION["index"]})
    files["torchvision/_C.so"] = (so["torchvision_C"]["path"].read_bytes(), 0o755)
    summary = (f"TEST STAND-IN for torchvision {v} ({TORCHVISION['index']}): NOT the real torchvision, a pure-Python stub "
               f"pinned to the torch stand-in {TORCH['version']} for the sglang-stack test bed")
    body = f"""
# TEST STAND-IN for torchvision {v}

Stands in for the PyTorch nightly wheel `torchvision-{v}-cpXY-cpXY-{TORCHVISION['platform']}.whl` of
{TORCHVISION['index']}, the companion of the torch nightly stand-in. **This is not torchvision**: no operators.

- `torchvision/_C.so`: built by the real nvcc 13.0.88 with torch's `TORCH_CUDA_ARCH_LIST="{TORCH['arch_list']}"`
  (never loaded).
- Requires-Dist: `torch=={TORCH['version']}` (the real nightly pins the torch of its date the same way).
- `import torchvision` raises RuntimeError under any other `torch.__version__`; `torchvision.transforms` exists
  (SGLang 0.5.9 imports it at start-up).
"""
    meta = _metadata("torchvision", v, summary, body, TORCHVISION["requires_python"], [f"torch=={TORCH['version']}"],
                     ["Programming Language :: Python :: 3"],
                     ["Homepage, https://github.com/pytorch/vision", f"Stands-In-For, {TORCHVISION['index']}"])
    return [build_wheel(out_dir, "torchvision", v, [f"{t}-{t}-{TORCHVISION['platform']}"], files, meta, purelib=False)
            for t in TORCHVISION["pytags"]]


def build_real_layout_sgl_kernel(so: dict, out_dir: Path, no_sm120: bool, pypi_wheel: Path) -> tuple:
    """sgl-kernel 0.3.21+cu130 stand-in: the PyPI 0.3.21 wheel's Python files and file names, its per-file targets."""
    rs = real_stack.SGL_REAL
    v = rs["version"]
    wheel_file = f"sgl_kernel-{v}-{rs['tag']}.whl"
    url = SGL_KERNEL["release_url"] + quote(wheel_file)
    files = real_stack.sgl_kernel_python_files(pypi_wheel)
    files.update(_pkg_files(STANDINS / "sgl_kernel_real_layout", {
        "VERSION": v, "BUILT_AGAINST_TORCH": rs["built_against_torch"]}))
    so_files, targets = real_stack.sgl_kernel_files(so, no_sm120=no_sm120)
    files.update(so_files)
    variant = (" This variant's sgl_kernel/sm100/common_ops.abi3.so carries NO SM120 code (a wrong build for verify's "
               "negative case).") if no_sm120 else ""
    summary = (f"TEST STAND-IN for sgl-kernel {v} ({url}): NOT the real sgl-kernel, the real wheel's file layout with "
               f"nvcc-built fatbins for the sglang-stack test bed{' (no SM120 in sm100/common_ops)' if no_sm120 else ''}")
    listing = "\n".join(f"- `{rel}`: {' '.join(t) or 'host code only'}" for rel, t in targets.items())
    body = f"""
# TEST STAND-IN for sgl-kernel {v}

Stands in for `{wheel_file}` ({url}). **This is not sgl-kernel.**{variant}

The Python files are the real ones of the PyPI sgl-kernel 0.3.21 wheel (`{pypi_wheel.name}`, Apache-2.0:
`sgl_kernel/`, `deep_gemm/`, `flash_attn_origin/`, `triton_kernels/`), except `sgl_kernel/load_utils.py`, the
stand-in's loader. The shared libraries have the names of that wheel (the CUDA 12 build of the same CMake) and, per
file, the architectures a fatbin scan of it shows; each is a real nvcc 13.0.88 build without torch operators:

{listing}

`import sgl_kernel` runs the real `__init__.py`; the loader raises `ImportError: ...common_ops.abi3.so: undefined
symbol: ...` unless `torch.__version__` is `{rs['built_against_torch']}` (the real torch 2.11.0 cu130), and loads no
library: the operators are not registered (calling one fails). Requires-Dist: none, like the real wheel.
"""
    meta = _metadata("sgl-kernel", v, summary, body, SGL_KERNEL["requires_python"], [],
                     ["Programming Language :: Python :: 3", "Environment :: GPU :: NVIDIA CUDA"],
                     ["Homepage, https://github.com/sgl-project/sglang/tree/main/sgl-kernel", f"Stands-In-For, {url}"])
    sub = out_dir / ("no-sm120" if no_sm120 else "real-layout")
    sub.mkdir(parents=True, exist_ok=True)
    return build_wheel(sub, "sgl-kernel", v, [rs["tag"]], files, meta, purelib=False), targets


def build_real_layout_fi_jit(so: dict, out_dir: Path) -> tuple:
    """flashinfer-jit-cache 0.6.4+cu130 stand-in laid out where flashinfer 0.6.4 looks: jit_cache/<name>/<name>.so."""
    v = FI_JIT["version"]
    wheel_file = f"flashinfer_jit_cache-{v}-{FI_JIT['tag']}.whl"
    url = FI_JIT["release_url"] + quote(wheel_file)
    files = _pkg_files(STANDINS / "flashinfer_jit_cache", {"VERSION": v, "WHEEL": wheel_file, "ARCH_LIST": FI_JIT["arch_list"]})
    so_files, targets = real_stack.fi_jit_files(so)
    files.update(so_files)
    summary = (f"TEST STAND-IN for flashinfer-jit-cache {v} ({url}): NOT the real package, flashinfer 0.6.4's module "
               "layout with nvcc-built modules for the sglang-stack test bed")
    listing = "\n".join(f"- `{rel}`: {' '.join(t)}" for rel, t in targets.items())
    body = f"""
# TEST STAND-IN for flashinfer-jit-cache {v}

Stands in for `{wheel_file}` ({url}, index {FI_JIT['index']}; the index publishes sha256
`04220efdcee5ba4b63ca8e868dcf559cfb9ad4014ec79ed622e87bf0361dba27`). **This is not FlashInfer.**

flashinfer-python 0.6.4 loads a prebuilt module from `flashinfer_jit_cache.get_jit_cache_dir() / name / f"{{name}}.so"`
(flashinfer/jit/env.py `_get_aot_dir`, flashinfer/jit/core.py `aot_path`). The modules below carry the names of
flashinfer 0.6.4's jit specs; the general ones the release CI's `FLASHINFER_CUDA_ARCH_LIST="{FI_JIT['arch_list']}"`,
the arch-specific ones their own target. Each is a real nvcc 13.0.88 build:

{listing}
"""
    meta = _metadata("flashinfer-jit-cache", v, summary, body, FI_JIT["requires_python"], [],
                     ["Programming Language :: Python :: 3", "Environment :: GPU :: NVIDIA CUDA"],
                     ["Homepage, https://github.com/flashinfer-ai/flashinfer", f"Stands-In-For, {url}"])
    sub = out_dir / "real-layout"
    sub.mkdir(parents=True, exist_ok=True)
    return build_wheel(sub, "flashinfer-jit-cache", v, [FI_JIT["tag"]], files, meta, purelib=False), targets


def build_sgl_kernel(so: dict, out_dir: Path, built_against: str) -> list:
    v = SGL_KERNEL["version"]
    codes = SGL_KERNEL["codes"]
    wheels = []
    for pytag in SGL_KERNEL["pytags"]:
        tag = f"{pytag}-abi3-{SGL_KERNEL['platform']}"
        wheel_file = f"sgl_kernel-{v}-{tag}.whl"
        files = _pkg_files(STANDINS / "sgl_kernel", {
            "VERSION": v, "PUBLIC_VERSION": SGL_KERNEL["public_version"], "WHEEL_GLOB": wheel_file,
            "BUILT_AGAINST_TORCH": built_against, "CUDA_TARGETS": codes})
        files["sgl_kernel/sm90/common_ops.abi3.so"] = (so["sgl_sm90_common_ops"]["path"].read_bytes(), 0o755)
        files["sgl_kernel/sm100/common_ops.abi3.so"] = (so["sgl_sm100_common_ops"]["path"].read_bytes(), 0o755)
        url = SGL_KERNEL["release_url"] + wheel_file
        summary = (f"TEST STAND-IN for sgl-kernel {v} ({url}): NOT the real sgl-kernel, a pure-Python stub "
                   "with nvcc-built fatbins for the sglang-stack test bed")
        body = f"""
# TEST STAND-IN for sgl-kernel {v}

Stands in for `{wheel_file}` ({url}, index {SGL_KERNEL['index']}). **This is not sgl-kernel.**

- `sgl_kernel/sm90/common_ops.abi3.so` (with `-use_fast_math`) and `sgl_kernel/sm100/common_ops.abi3.so`: built by
  the real nvcc 13.0.88 with SASS for {', '.join(codes)} (no PTX) and `--compress-mode=size`, the targets of the
  real cu130 x86_64 build (sgl-kernel CMakeLists.txt). They are never loaded.
- `import sgl_kernel` imports torch and raises `ImportError: ...: undefined symbol: ...` unless
  `torch.__version__` is exactly `{built_against}`, the torch this stand-in was "built against"
  (`sgl_kernel/_build_info.py`; chosen when the mirror is built).
- Requires-Dist: none, like the real wheel, whose metadata declares no dependencies (its description says
  "Requires torch == 2.9.1"; the torch==2.9.1 requirement is deliberately not carried over).
"""
        meta = _metadata("sgl-kernel", v, summary, body, SGL_KERNEL["requires_python"], [],
                         ["Programming Language :: Python :: 3", "License :: OSI Approved :: Apache Software License",
                          "Environment :: GPU :: NVIDIA CUDA"],
                         ["Homepage, https://github.com/sgl-project/sglang/tree/main/sgl-kernel",
                          f"Stands-In-For, {url}"])
        wheels.append(build_wheel(out_dir, "sgl-kernel", v, [tag], files, meta, purelib=False))
    return wheels


def build_fi_jit(so: dict, out_dir: Path) -> Path:
    v = FI_JIT["version"]
    wheel_file = f"flashinfer_jit_cache-{v}-{FI_JIT['tag']}.whl"
    files = _pkg_files(STANDINS / "flashinfer_jit_cache", {"VERSION": v, "WHEEL": wheel_file, "ARCH_LIST": FI_JIT["arch_list"]})
    files["flashinfer_jit_cache/jit_cache/norm/norm.so"] = (so["flashinfer_norm"]["path"].read_bytes(), 0o755)
    url = FI_JIT["release_url"] + wheel_file
    summary = (f"TEST STAND-IN for flashinfer-jit-cache {v} ({url}): NOT the real package, a pure-Python stub "
               "with one nvcc-built module for the sglang-stack test bed")
    body = f"""
# TEST STAND-IN for flashinfer-jit-cache {v}

Stands in for `{wheel_file}` ({url}, index {FI_JIT['index']}). **This is not FlashInfer.**

- `flashinfer_jit_cache.__version__` = `{v}` and `get_jit_cache_dir()`, the API flashinfer-python 0.6.4 uses.
- `flashinfer_jit_cache/jit_cache/norm/norm.so`: built by the real nvcc 13.0.88 for
  `FLASHINFER_CUDA_ARCH_LIST="{FI_JIT['arch_list']}"` (SASS for {', '.join(flashinfer_codes(FI_JIT['arch_list']))}).
- Requires-Dist: none (the real wheel's dependency list was not inspected).
"""
    meta = _metadata("flashinfer-jit-cache", v, summary, body, FI_JIT["requires_python"], [],
                     ["Programming Language :: Python :: 3", "Environment :: GPU :: NVIDIA CUDA"],
                     ["Homepage, https://github.com/flashinfer-ai/flashinfer", f"Stands-In-For, {url}"])
    return build_wheel(out_dir, "flashinfer-jit-cache", v, [FI_JIT["tag"]], files, meta, purelib=False)


def build_fi_cubin(so: dict, out_dir: Path) -> Path:
    v = FI_CUBIN["version"]
    files = _pkg_files(STANDINS / "flashinfer_cubin", {"VERSION": v})
    files["flashinfer_cubin/cubins/standin/standin_scale_sm120.cubin"] = (so["flashinfer_cubin_sm120"]["path"].read_bytes(), 0o644)
    summary = (f"TEST STAND-IN for flashinfer-cubin {v} ({FI_CUBIN['url']}): NOT the real package (245.7 MB), "
               "a small stub with one nvcc-built sm_120 cubin for the sglang-stack test bed")
    body = f"""
# TEST STAND-IN for flashinfer-cubin {v}

Stands in for `{FI_CUBIN['real_file']}` ({FI_CUBIN['url']}, sha256 `{FI_CUBIN['real_sha256']}`, 245.7 MB),
too large to serve in the test bed. **This is not FlashInfer.**

- `flashinfer_cubin.__version__` = `{v}` (flashinfer-python requires it to equal its own) and `get_cubin_dir()`.
- `flashinfer_cubin/cubins/standin/standin_scale_sm120.cubin`: one real cubin, `nvcc -cubin -arch sm_120` (nvcc 13.0.88).
- Requires-Dist: none, like the real wheel.
"""
    meta = _metadata("flashinfer-cubin", v, summary, body, FI_CUBIN["requires_python"], [],
                     ["Programming Language :: Python :: 3", "License :: OSI Approved :: Apache Software License"],
                     ["Homepage, https://github.com/flashinfer-ai/flashinfer", f"Stands-In-For, {FI_CUBIN['url']}"])
    return build_wheel(out_dir, "flashinfer-cubin", v, [FI_CUBIN["tag"]], files, meta, purelib=True)


# --------------------------------------------------------------------------------------------
# Step 6: index pages, MANIFEST, publication into the output tree
# --------------------------------------------------------------------------------------------


def wheel_requires_python(path: Path) -> str:
    with zipfile.ZipFile(path) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        for line in zf.read(meta).decode().splitlines():
            if not line:
                break
            if line.startswith("Requires-Python:"):
                return line.split(":", 1)[1].strip()
    return ""


def simple_page(project: str, links: list) -> bytes:
    """PEP 503 page. links: [(href prefix, file path, sha256)]."""
    rows = []
    for prefix, path, digest in sorted(links, key=lambda x: x[1].name):
        rp = wheel_requires_python(path)
        attr = f' data-requires-python="{html.escape(rp)}"' if rp else ""
        rows.append(f'    <a href="{prefix}{quote(path.name)}#sha256={digest}"{attr}>{html.escape(path.name)}</a><br/>\n')
    return (
        "<!DOCTYPE html>\n<html>\n  <head>\n"
        '    <meta name="pypi:repository-version" content="1.0">\n'
        f"    <title>Links for {html.escape(project)}</title>\n  </head>\n  <body>\n"
        f"    <h1>Links for {html.escape(project)}</h1>\n" + "".join(rows) + "  </body>\n</html>\n"
    ).encode()


def root_page(title: str, projects: list) -> bytes:
    rows = "".join(f'    <a href="{quote(p)}/">{html.escape(p)}</a><br/>\n' for p in sorted(projects))
    return (f"<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" content=\"1.0\">\n"
            f"    <title>{html.escape(title)}</title>\n  </head>\n  <body>\n{rows}  </body>\n</html>\n").encode()


def publish(out: Path, linked: dict, generated: dict) -> dict:
    """Make the output tree exactly linked (rel -> source file, hard-linked) + generated (rel -> bytes)."""
    changed = {"linked": 0, "written": 0, "removed": 0}
    for rel, src in sorted(linked.items()):
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if dst.exists() and not dst.is_symlink():
            ds, ss = dst.stat(), src.stat()
            if (ds.st_ino, ds.st_dev) == (ss.st_ino, ss.st_dev):
                continue
        tmp = dst.with_name(f".{dst.name}.tmp{os.getpid()}")
        tmp.unlink(missing_ok=True)
        try:
            os.link(src, tmp)
        except OSError:
            shutil.copyfile(src, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, dst)
        changed["linked"] += 1
    for rel, data in sorted(generated.items()):
        if write_if_changed(out / rel, data):
            changed["written"] += 1
    keep = set(linked) | set(generated) | {MARKER}
    for p in sorted(out.rglob("*"), reverse=True):
        rel = p.relative_to(out).as_posix()
        if p.is_dir() and not p.is_symlink():
            if not any(p.iterdir()):
                p.rmdir()
        elif rel not in keep:
            p.unlink()
            changed["removed"] += 1
    return changed


def check_out_dir(out: Path) -> None:
    if out.exists() and any(out.iterdir()) and not (out / MARKER).exists():
        raise BuildError(f"{out} exists, is not empty and is not a mirror built by this script (no {MARKER}); "
                         "refusing to prune it. Choose another --out or empty it.")
    out.mkdir(parents=True, exist_ok=True)
    write_if_changed(out / MARKER, b"sglang-stack test bed mirror: built by tests/testbed/mirror/build_mirror.py; "
                                   b"files not produced by the recipe are removed on every build\n")


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(REPO / "build" / "mirror"), help="mirror root (default: build/mirror)")
    ap.add_argument("--work", help="intermediate files and stamps (default: <out>/../mirror-work)")
    ap.add_argument("--cache", help="download cache (default: <out>/../cache)")
    ap.add_argument("--machine-cache", help="download cache of the real stack's wheels, kept across clones and CI runs "
                    f"(default: ${real_stack.MACHINE_CACHE_ENV} or {real_stack.MACHINE_CACHE_DEFAULT})")
    ap.add_argument("--no-real-stack", action="store_true", help="leave out the real stack (the fast scenarios do not need it)")
    ap.add_argument("--key-dir", help="GnuPG home of the test signing key (default: <out>/../mirror-key)")
    ap.add_argument("--sgl-kernel-built-against-torch", default=os.environ.get(
        "SGL_KERNEL_BUILT_AGAINST_TORCH", SGL_KERNEL["default_built_against_torch"]),
        help="torch version the sgl-kernel stand-in claims to be built against "
             "(default: $SGL_KERNEL_BUILT_AGAINST_TORCH or %(default)s)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel nvcc jobs")
    ap.add_argument("--force", action="store_true", help="ignore the stamps and rebuild every step (downloads stay cached)")
    args = ap.parse_args(argv)

    t_start = time.monotonic()
    out = Path(args.out).resolve()
    base = out.parent
    work = Path(args.work).resolve() if args.work else base / "mirror-work"
    cache = Path(args.cache).resolve() if args.cache else base / "cache"
    key_dir = Path(args.key_dir).resolve() if args.key_dir else base / "mirror-key"
    check_out_dir(out)
    stamps = Stamps(work / "stamps", args.force)

    nvcc_wheels = fetch_nvcc(cache, stamps)
    real = fetch_real_pypi(cache, stamps)
    closure = fetch_pypi_closure(cache, stamps)
    mcache = real_stack.machine_cache(args.machine_cache)
    rs_doc = None if args.no_real_stack else real_stack.resolve(mcache)
    rs_files = {} if rs_doc is None else real_stack.fetch(rs_doc, mcache)
    deb, nvcc = build_cuda_deb(nvcc_wheels, work, stamps)
    deb_sha = stamps.data("cuda-deb")["sha256"]
    try:
        key = ensure_key(key_dir, work)
        repo = build_apt_repo(deb, key, key_dir, work, stamps)
    finally:
        stop_gpg_agent(key_dir)

    jobs = cuda_jobs(args.sgl_kernel_built_against_torch) + ([] if rs_doc is None else real_stack.cuda_jobs())
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda j: compile_job(j, nvcc, deb_sha, work, stamps), jobs))
    so = {j["name"]: r for j, r in zip(jobs, results)}
    if not any(r["built"] for r in results):
        log("nvcc stand-in builds: up to date")

    wdir = work / "wheels"
    wdir.mkdir(parents=True, exist_ok=True)
    torch_wheels = build_torch(so, wdir)
    sgl_wheels = build_sgl_kernel(so, wdir, args.sgl_kernel_built_against_torch)
    fi_jit = build_fi_jit(so, wdir)
    fi_cubin = build_fi_cubin(so, wdir)
    tv_wheels = build_torchvision(so, wdir)
    rs_sgl = rs_sgl_bad = rs_fi = None
    if rs_doc is not None:
        pypi_sgl = rs_files[rs_doc["wrong_build"]["file"]]
        rs_sgl = build_real_layout_sgl_kernel(so, wdir, no_sm120=False, pypi_wheel=pypi_sgl)
        rs_sgl_bad = build_real_layout_sgl_kernel(so, wdir, no_sm120=True, pypi_wheel=pypi_sgl)
        rs_fi = build_real_layout_fi_jit(so, wdir)
    keep = {*torch_wheels, *tv_wheels, *sgl_wheels, fi_jit, fi_cubin}
    keep |= {w for w, _t in filter(None, [rs_sgl, rs_sgl_bad, rs_fi])}
    for stale in wdir.rglob("*.whl"):
        if stale not in keep:
            stale.unlink()

    linked, generated, manifest = {}, {}, []
    sha_cache: dict = dict(closure.values())

    def digest(p: Path) -> str:
        if p not in sha_cache:
            sha_cache[p] = sha256_file(p)
        return sha_cache[p]

    def add(rel: str, src: Path, entry: dict) -> None:
        linked[rel] = src
        manifest.append({"path": rel, "sha256": digest(src), "size": src.stat().st_size, **entry})

    # apt: the same signed flat repository under every distro path NVIDIA publishes
    for dist in CUDA["dists"]:
        d = APT_DIR.format(dist=dist)
        upstream = CUDA["upstream"].format(dist=dist)
        add(f"{d}/{deb.name}", repo / deb.name, {
            "kind": "standin", "name": CUDA["package"], "version": CUDA["version"],
            "stands_in_for": {"what": f"NVIDIA's {CUDA['package']} {CUDA['version']} deb", "url": upstream},
            "contains_real": "nvcc 13.0.88 toolchain from PyPI " + " ".join(w.name for w in nvcc_wheels),
            "cuda_prefix": "/" + CUDA["prefix"]})
        for n in ["Packages", "Packages.gz", "Release", "InRelease", "Release.gpg"]:
            linked[f"{d}/{n}"] = repo / n
        for ext in ("gpg", "asc"):
            add(f"{d}/{KEYRING}.{ext}", key[ext], {
                "kind": "standin", "name": "test signing key " + key["fingerprint"],
                "stands_in_for": {"what": "NVIDIA's CUDA repository signing key (cuda-keyring_1.1-1_all.deb)",
                                  "url": upstream + "cuda-keyring_1.1-1_all.deb"}})
    for ext in ("gpg", "asc"):
        linked[f"{KEYRING}.{ext}"] = key[ext]

    # PyTorch nightly cu130 (PEP 503; files beside the project folder like the real index)
    tdir = "pytorch/whl/nightly/cu130"
    for w in torch_wheels:
        add(f"{tdir}/{w.name}", w, {
            "kind": "standin", "name": "torch", "version": TORCH["version"],
            "stands_in_for": {"what": f"PyTorch nightly wheel {w.name}", "url": f"{TORCH['index']}/{quote(w.name)}"},
            "cuda_targets": {"torch/lib/libtorch_cuda.so": so["libtorch_cuda"]["targets"]}})
    generated[f"{tdir}/torch/index.html"] = simple_page("torch", [("../", w, digest(w)) for w in torch_wheels])
    for w in tv_wheels:
        add(f"{tdir}/{w.name}", w, {
            "kind": "standin", "name": "torchvision", "version": TORCHVISION["version"],
            "stands_in_for": {"what": f"PyTorch nightly wheel {w.name}", "url": f"{TORCHVISION['index']}/{quote(w.name)}"},
            "requires": [f"torch=={TORCH['version']}"],
            "cuda_targets": {"torchvision/_C.so": so["torchvision_C"]["targets"]}})
    generated[f"{tdir}/torchvision/index.html"] = simple_page("torchvision", [("../", w, digest(w)) for w in tv_wheels])
    generated[f"{tdir}/index.html"] = root_page("Simple index", ["torch", "torchvision"])

    # flashinfer cu130 index: links to the GitHub release assets
    fdir = f"flashinfer/releases/download/{FI_JIT['release']}"
    add(f"{fdir}/{fi_jit.name}", fi_jit, {
        "kind": "standin", "name": "flashinfer-jit-cache", "version": FI_JIT["version"],
        "stands_in_for": {"what": f"flashinfer release asset {fi_jit.name}", "url": FI_JIT["release_url"] + quote(fi_jit.name),
                          "index": FI_JIT["index"]},
        "cuda_targets": {"flashinfer_jit_cache/jit_cache/norm/norm.so": so["flashinfer_norm"]["targets"]},
        "cuda_arch_list": FI_JIT["arch_list"]})
    generated["flashinfer/whl/cu130/flashinfer-jit-cache/index.html"] = simple_page(
        "flashinfer-jit-cache", [(f"../../../releases/download/{FI_JIT['release']}/", fi_jit, digest(fi_jit))])
    generated["flashinfer/whl/cu130/index.html"] = root_page("Simple index", ["flashinfer-jit-cache"])

    # sgl-kernel cu130 index: links to the sgl-project/whl release assets
    sdir = f"sgl-whl/releases/download/{SGL_KERNEL['release']}"
    for w in sgl_wheels:
        pytag = w.name.split("-")[2]
        add(f"{sdir}/{w.name}", w, {
            "kind": "standin", "name": "sgl-kernel", "version": SGL_KERNEL["version"],
            "stands_in_for": {"what": f"sgl-kernel release asset {w.name}", "url": SGL_KERNEL["release_url"] + quote(w.name),
                              "index": SGL_KERNEL["index"],
                              **({"real_sha256": SGL_KERNEL["real_sha256"][pytag]} if pytag in SGL_KERNEL["real_sha256"] else {})},
            "built_against_torch": args.sgl_kernel_built_against_torch,
            "cuda_targets": {"sgl_kernel/sm90/common_ops.abi3.so": so["sgl_sm90_common_ops"]["targets"],
                             "sgl_kernel/sm100/common_ops.abi3.so": so["sgl_sm100_common_ops"]["targets"]}})
    generated["sgl-whl/cu130/sgl-kernel/index.html"] = simple_page(
        "sgl-kernel", [(f"../../releases/download/{SGL_KERNEL['release']}/", w, digest(w)) for w in sgl_wheels])
    generated["sgl-whl/cu130/index.html"] = root_page("Simple index", ["sgl-kernel"])

    # PyPI: the real wheels, the flashinfer-cubin stand-in and the dependency closure
    pypi: dict = {}
    for r in REAL_PYPI:
        p = real[r["file"]]
        add(f"pypi/packages/{p.name}", p, {
            "kind": "real", "name": r["project"], "version": r["version"],
            "upstream_url": f"https://pypi.org/project/{r['project']}/{r['version']}/#files",
            "source": "PyPI, pip download --isolated --no-deps; sha256 checked against stack-facts.md"})
        pypi.setdefault(r["project"], {})[p.name] = p
    add(f"pypi/packages/{fi_cubin.name}", fi_cubin, {
        "kind": "standin", "name": "flashinfer-cubin", "version": FI_CUBIN["version"],
        "stands_in_for": {"what": f"PyPI {FI_CUBIN['real_file']} (245.7 MB)", "url": FI_CUBIN["url"],
                          "real_sha256": FI_CUBIN["real_sha256"]},
        "cuda_targets": {"flashinfer_cubin/cubins/standin/standin_scale_sm120.cubin": so["flashinfer_cubin_sm120"]["targets"]}})
    pypi.setdefault("flashinfer-cubin", {})[fi_cubin.name] = fi_cubin
    for f, (p, _digest) in closure.items():
        rel = f"pypi/packages/{f}"
        if rel in linked:
            continue
        project, version = project_name_norm(f.split("-")[0]), f.split("-")[1]
        add(rel, p, {
            "kind": "real", "name": project, "version": version,
            "upstream_url": f"https://pypi.org/project/{project}/{version}/",
            "source": "pip download (dependency closure for the test containers)"})
        pypi.setdefault(project, {})[f] = p
    if rs_doc is not None:
        # A PyPI of its own (real-stack/pypi/): the fast scenarios' pypi/ serves small stand-ins under some of
        # the same file names (flashinfer_cubin-0.6.4-py3-none-any.whl).
        rs_pypi: dict = {}
        for e in rs_doc["stack"]:
            p = rs_files[e["file"]]
            sha_cache[p] = e["sha256"]
            add(f"{real_stack.RS_PREFIX}/pypi/packages/{e['file']}", p, {
                "kind": "real", "name": e["name"], "version": e["version"], "upstream_url": e["url"],
                "source": f"pip resolution of the real stack for CPython {real_stack.REAL_STACK['python']}; "
                          "sha256 as PyPI publishes it, checked after download"})
            rs_pypi.setdefault(project_name_norm(e["name"]), {})[e["file"]] = p
        for project, files in rs_pypi.items():
            generated[f"{real_stack.RS_PREFIX}/pypi/simple/{project}/index.html"] = simple_page(
                project, [("../../packages/", f, digest(f)) for f in files.values()])
        generated[f"{real_stack.RS_PREFIX}/pypi/simple/index.html"] = root_page("Simple index", list(rs_pypi))
        # The PyPI sgl-kernel (a CUDA 12 build) on an index of its own: never resolved by accident.
        wb = rs_doc["wrong_build"]
        wprefix = real_stack.WRONG_BUILD["prefix"]
        p = rs_files[wb["file"]]
        sha_cache[p] = wb["sha256"]
        add(f"{wprefix}/packages/{wb['file']}", p, {
            "kind": "real", "name": wb["name"], "version": wb["version"], "upstream_url": wb["url"],
            "note": "a CUDA 12 build: under torch 2.11 cu130 `import sgl_kernel` fails on libnvrtc.so.12 (the import gate's negative case)",
            "source": "PyPI JSON API; sha256 as PyPI publishes it, checked after download"})
        generated[f"{wprefix}/simple/sgl-kernel/index.html"] = simple_page("sgl-kernel", [("../../packages/", p, wb["sha256"])])
        generated[f"{wprefix}/simple/index.html"] = root_page("Simple index", ["sgl-kernel"])
        # The real-layout stand-ins: the upstream layouts below real-stack/ (and the no-SM120 variant).
        for prefix, (w, targets) in ((real_stack.RS_PREFIX, rs_sgl), (real_stack.NO_SM120_PREFIX, rs_sgl_bad)):
            add(f"{prefix}/{sdir}/{w.name}", w, {
                "kind": "standin", "name": "sgl-kernel", "version": real_stack.SGL_REAL["version"], "layout": "real",
                "stands_in_for": {"what": f"sgl-kernel release asset {w.name}", "url": SGL_KERNEL["release_url"] + quote(w.name),
                                  "index": SGL_KERNEL["index"], "layout_from": "PyPI sgl_kernel-0.3.21 (file names, per-file targets)"},
                "built_against_torch": real_stack.SGL_REAL["built_against_torch"], "cuda_targets": targets,
                **({"variant": "no SM120 code in sgl_kernel/sm100/common_ops.abi3.so"} if prefix == real_stack.NO_SM120_PREFIX else {})})
            generated[f"{prefix}/sgl-whl/cu130/sgl-kernel/index.html"] = simple_page(
                "sgl-kernel", [(f"../../releases/download/{SGL_KERNEL['release']}/", w, digest(w))])
        w, targets = rs_fi
        add(f"{real_stack.RS_PREFIX}/{fdir}/{w.name}", w, {
            "kind": "standin", "name": "flashinfer-jit-cache", "version": FI_JIT["version"], "layout": "real",
            "stands_in_for": {"what": f"flashinfer release asset {w.name}", "url": FI_JIT["release_url"] + quote(w.name),
                              "index": FI_JIT["index"], "real_sha256": "04220efdcee5ba4b63ca8e868dcf559cfb9ad4014ec79ed622e87bf0361dba27",
                              "layout_from": "flashinfer-python 0.6.4 flashinfer/jit/env.py _get_aot_dir, core.py aot_path"},
            "cuda_targets": targets})
        generated[f"{real_stack.RS_PREFIX}/flashinfer/whl/cu130/flashinfer-jit-cache/index.html"] = simple_page(
            "flashinfer-jit-cache", [(f"../../../releases/download/{FI_JIT['release']}/", w, digest(w))])
    for project, files in pypi.items():
        generated[f"pypi/simple/{project}/index.html"] = simple_page(
            project, [("../../packages/", f, digest(f)) for f in files.values()])
    generated["pypi/simple/index.html"] = root_page("Simple index", list(pypi))

    doc = {
        "format_version": 1,
        "generator": GENERATOR,
        "note": "Test mirror for the sglang-stack test bed. kind=real: the upstream file itself; "
                "kind=standin: built here, NOT the upstream artifact (see stands_in_for).",
        "url_prefixes": URL_PREFIXES,
        "signing_key": {"fingerprint": key["fingerprint"], "keyring": f"{KEYRING}.gpg", "armored": f"{KEYRING}.asc",
                        "apt_line": "deb [signed-by=/usr/share/keyrings/testbed-archive-keyring.gpg] "
                                    "http://upstream-mirror:8080/nvidia/cuda/repos/debian12/x86_64/ /"},
        "artifacts": sorted(manifest, key=lambda e: e["path"]),
    }
    generated["MANIFEST.json"] = (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode()
    changed = publish(out, linked, generated)

    size = sum(p.stat().st_size for p in {out / r for r in [*linked, *generated]})
    log(f"published {out}: {len(linked)} linked + {len(generated)} generated files, {size / 1e6:.1f} MB apparent "
        f"({changed['linked']} re-linked, {changed['written']} rewritten, {changed['removed']} removed); "
        f"total {time.monotonic() - t_start:.1f}s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BuildError as exc:
        print(f"build_mirror: ERROR: {exc}", file=sys.stderr)
        sys.exit(1)

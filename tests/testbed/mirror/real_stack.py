# Copyright (c) 2026 gpuops.sglang_stack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real stack's part of the test bed mirror (used by build_mirror.py).

Real wheels from PyPI, each checked against the sha256 PyPI publishes:
  torch 2.11.0 (a cu130 build without the +cu130 tag) and its nvidia-* cu13 wheels, torchvision 0.26.0,
  flashinfer-python 0.6.4, flashinfer-cubin 0.6.4 (245 MB), sglang 0.5.9's whole requirement list as the
  stack declaration writes it (roles/stack_declaration/defaults/main.yml, read here, never copied),
  resolved by pip for CPython 3.11 (Debian 12): about 166 wheels, 4+ GB;
  the PyPI sgl-kernel 0.3.21 (a CUDA 12 build: the import gate's real negative case), published under
  its own index (pypi-cu12-sgl-kernel/) so that nothing resolves to it by accident.
Stand-ins only for the two cu130 wheels PyPI does not have, with the real layouts:
  sgl-kernel 0.3.21+cu130: the file names and per-file architecture sets of the PyPI sgl-kernel 0.3.21
  wheel (listed and scanned); flashinfer-jit-cache 0.6.4+cu130: jit_cache/<module>/<module>.so, where
  flashinfer 0.6.4 looks (flashinfer/jit/core.py: FLASHINFER_AOT_DIR / name / f"{name}.so").
  They are published under real-stack/ (the same upstream layouts below it), beside the small stand-ins
  the fast scenarios use, and a second sgl-kernel stand-in whose sm100/common_ops.abi3.so carries no
  SM120 code under real-stack-no-sm120/ (verify's negative case).

Downloads go to a machine-level cache kept across clones and CI runs (default
/var/cache/gpuops-sglang-testbed, env GPUOPS_SGLANG_TESTBED_CACHE): the pip resolution is recorded there
keyed by its inputs, each wheel once, with a verified-sha256 note; the mirror hard-links them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DECLARATION = REPO / "roles" / "stack_declaration" / "defaults" / "main.yml"

MACHINE_CACHE_ENV = "GPUOPS_SGLANG_TESTBED_CACHE"
MACHINE_CACHE_DEFAULT = "/var/cache/gpuops-sglang-testbed"

REAL_STACK = {
    # Debian 12's Python. sglang 0.5.9's closure does not resolve for 3.13 (Debian 13): outlines 0.1.11
    # pins outlines_core==0.1.26, which has no cp313 wheel.
    "python": "3.11",
    "abi": "cp311",
    "platforms": [f"manylinux_2_{n}_x86_64" for n in range(36, 16, -1)] + ["manylinux2014_x86_64", "linux_x86_64"],
    # The layers above sglang, as the real_stack scenario declares them.
    "pins": ["torch==2.11.0", "torchvision==0.26.0", "flashinfer-python==0.6.4", "flashinfer-cubin==0.6.4"],
    # Hashes reviewed in the stack declaration and stack-facts.md: the build refuses any other.
    "expect_sha256": {
        "flashinfer_python-0.6.4-py3-none-any.whl": "105596b505892ae330af84e250ee0eb6fc2c3a22e8dc42bd46de1b90d36004c8",
        "flashinfer_cubin-0.6.4-py3-none-any.whl": "6dd03b97ada344ee37b948b0f69977d4df737042a7acd1b296025341d7a7b75b",
        "sglang-0.5.9-py3-none-any.whl": "8a936c4d25fea605f44254e533cff2144c73ceffbc1f8738aba393461bbb64d1",
    },
    # sglang itself goes in with --no-deps (its pins conflict with the stack); resolved without deps.
    "no_deps": ["sglang==0.5.9"],
}

# The PyPI sgl-kernel: a CUDA 12 build; under torch 2.11 cu130 `import sgl_kernel` fails on libnvrtc.so.12.
WRONG_BUILD = {"project": "sgl-kernel", "version": "0.3.21", "prefix": "pypi-cu12-sgl-kernel"}

# Per-file architecture sets of the PyPI sgl-kernel 0.3.21 wheel (fatbin scan of the real files,
# stack-facts 10.2). The +cu130 wheel is built from the same CMake; its files are modelled on these.
SGL_FILES = {
    "sgl_kernel/sm90/common_ops.abi3.so": "common",
    "sgl_kernel/sm100/common_ops.abi3.so": "common",
    "sgl_kernel/spatial_ops.abi3.so": "common",
    "sgl_kernel/flash_ops.abi3.so": "flash",
    "sgl_kernel/flashmla_ops.abi3.so": "flashmla",
    "_mscclpp.cpython-310-x86_64-linux-gnu.so": "mscclpp",
    "lib/mscclpp.so": "mscclpp",
    "lib/mscclpp.so.0": "mscclpp",
    "lib/mscclpp.so.0.6.0": "mscclpp",
    "lib/mscclpp_nccl.so": "mscclpp",
    "lib/mscclpp_nccl.so.0": "mscclpp",
    "lib/mscclpp_nccl.so.0.6.0": "mscclpp",
    "deep_gemm/deep_gemm_cpp.abi3.so": "host",
}
SGL_SETS = {
    "common": ["sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a"],
    "common_no_sm120": ["sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a"],
    "flash": ["sm_80", "sm_86", "sm_90a"],
    "flashmla": ["sm_90a", "sm_100a"],
    # mscclpp carries SASS and PTX for 8.0 and 9.0
    "mscclpp": ["sm_80", "compute_80", "sm_90", "compute_90"],
    "host": [],
}
SGL_REAL = {
    "version": "0.3.21+cu130",
    # cp310-abi3 installs on CPython 3.10+ (the real_stack host runs 3.11).
    "tag": "cp310-abi3-manylinux2014_x86_64",
    "built_against_torch": "2.11.0+cu130",
}

# flashinfer-jit-cache 0.6.4+cu130: module names from flashinfer 0.6.4's jit specs (flashinfer/jit/*.py,
# aot.py); general modules for the release CI's FLASHINFER_CUDA_ARCH_LIST, the arch-specific ones for
# their own target (sm90a / sm100a+sm103a / sm120a flags of flashinfer/jit/core.py).
FI_GENERAL = ["norm", "sampling", "page", "rope", "quantization", "silu_and_mul", "cascade", "topk"]
FI_SETS = {
    "general": ["sm_75", "sm_80", "sm_89", "sm_90a", "sm_100a", "sm_103a", "sm_110a", "sm_120f"],
    "sm90": ["sm_90a"],
    "sm100": ["sm_100a", "sm_103a"],
    "sm120": ["sm_120a"],
}
FI_MODULES = {**{m: "general" for m in FI_GENERAL},
              "gemm_sm90": "sm90", "gemm_sm100": "sm100", "fused_moe_trtllm_sm100": "sm100",
              "gemm_sm120": "sm120", "fp4_gemm_cutlass_sm120": "sm120", "fused_moe_120": "sm120",
              "fp4_quantization_120": "sm120"}

RS_PREFIX = "real-stack"
NO_SM120_PREFIX = "real-stack-no-sm120"


class RealStackError(RuntimeError):
    pass


def log(msg: str) -> None:
    print(f"[real-stack] {msg}", flush=True)


def machine_cache(arg: str | None) -> Path:
    return Path(arg or os.environ.get(MACHINE_CACHE_ENV) or MACHINE_CACHE_DEFAULT).resolve()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def declaration_requirements(path: Path = DECLARATION) -> list:
    """The sglang layer's `requirements:` list of the stack declaration (stdlib: a narrow YAML reader)."""
    lines = path.read_text().splitlines()
    out, in_sglang, in_reqs = [], False, False
    for line in lines:
        if re.match(r"^  - name: ", line):
            in_sglang = line.strip() == "- name: sglang"
            in_reqs = False
            continue
        if in_sglang and re.match(r"^    requirements:\s*$", line):
            in_reqs = True
            continue
        if in_reqs:
            m = re.match(r"^      - (.*)$", line)
            if m:
                item = m.group(1).strip()
                if item[:1] in "\"'" and item[-1:] == item[:1]:
                    item = item[1:-1]
                out.append(item)
            elif line.strip() and not line.strip().startswith("#"):
                in_reqs = False
    if not out:
        raise RealStackError(f"no sglang requirements found in {path}")
    return out


def _python_for(version: str) -> str:
    if f"{sys.version_info[0]}.{sys.version_info[1]}" == version:
        return sys.executable
    found = shutil.which(f"python{version}")
    if not found:
        raise RealStackError(f"python{version} is needed to resolve the real stack (environment markers are evaluated "
                             "by the interpreter that runs pip)")
    return found


def _pip_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | {"PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _report(python: str, args: list) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        rep = Path(tmp) / "report.json"
        cmd = [python, "-m", "pip", "install", "--isolated", "--dry-run", "--ignore-installed", "--quiet",
               "--only-binary=:all:", "--python-version", REAL_STACK["python"], "--implementation", "cp",
               "--abi", REAL_STACK["abi"], "--abi", "abi3", "--abi", "none",
               *[a for p in REAL_STACK["platforms"] for a in ("--platform", p)],
               "--target", str(Path(tmp) / "target"), "--report", str(rep), *args]
        proc = subprocess.run(cmd, env=_pip_env(), text=True, capture_output=True, check=False)
        if proc.returncode != 0:
            raise RealStackError(f"pip could not resolve the real stack ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
        items = json.loads(rep.read_text())["install"]
    out = []
    for it in items:
        info = it["download_info"]
        url = info["url"]
        digest = (info.get("archive_info", {}).get("hashes") or {}).get("sha256")
        if not digest or not url.endswith(".whl"):
            raise RealStackError(f"{url}: not a wheel with a published sha256")
        out.append({"name": it["metadata"]["name"], "version": it["metadata"]["version"],
                    "file": urllib.request.unquote(url.rsplit("/", 1)[1]), "url": url, "sha256": digest})
    return out


def resolve(mcache: Path) -> dict:
    """{'stack': [...], 'wrong_build': {...}}; recorded in the machine cache keyed by its inputs."""
    reqs = declaration_requirements()
    inputs = {"recipe": REAL_STACK, "requirements": reqs, "wrong_build": WRONG_BUILD, "format": 1}
    key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:20]
    rec = mcache / "real-stack" / f"resolution-{key}.json"
    if rec.is_file():
        log(f"resolution: recorded ({rec})")
        return json.loads(rec.read_text())
    t0 = time.monotonic()
    python = _python_for(REAL_STACK["python"])
    with tempfile.TemporaryDirectory() as tmp:
        req_file, con_file = Path(tmp) / "requirements.txt", Path(tmp) / "constraints.txt"
        req_file.write_text("\n".join(REAL_STACK["pins"] + reqs) + "\n")
        con_file.write_text("\n".join(REAL_STACK["pins"]) + "\n")
        stack = _report(python, ["-r", str(req_file), "-c", str(con_file)])
    stack += _report(python, ["--no-deps", *REAL_STACK["no_deps"]])
    wrong = _report(python, ["--no-deps", f"{WRONG_BUILD['project']}=={WRONG_BUILD['version']}"])
    if len(wrong) != 1 or not wrong[0]["file"].startswith("sgl_kernel-0.3.21-cp310-abi3-"):
        raise RealStackError(f"PyPI sgl-kernel {WRONG_BUILD['version']}: expected the cp310-abi3 wheel, got {wrong}")
    wrong = wrong[0]
    for entry in stack:
        want = REAL_STACK["expect_sha256"].get(entry["file"])
        if want and want != entry["sha256"]:
            raise RealStackError(f"PyPI publishes sha256 {entry['sha256']} for {entry['file']}, the declaration says {want}")
    names = {e["name"].lower() for e in stack}
    if "sgl-kernel" in names:
        raise RealStackError("the resolution pulled in sgl-kernel from PyPI: the real stack must take the cu130 build")
    doc = {"inputs": inputs, "python_used": python, "stack": sorted(stack, key=lambda e: e["file"]), "wrong_build": wrong}
    rec.parent.mkdir(parents=True, exist_ok=True)
    tmp_rec = rec.with_name(rec.name + f".tmp{os.getpid()}")
    tmp_rec.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    os.replace(tmp_rec, rec)
    log(f"resolution: {len(stack)} wheels for CPython {REAL_STACK['python']} in {time.monotonic() - t0:.1f}s ({rec})")
    return doc


def _verified(path: Path, sha256: str) -> bool:
    """True when `path` was verified against `sha256` and has not changed since (size and mtime noted)."""
    note = path.with_name(path.name + ".sha256")
    if not path.is_file() or not note.is_file():
        return False
    st = path.stat()
    try:
        rec = json.loads(note.read_text())
    except ValueError:
        return False
    return rec == {"sha256": sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _fetch_one(entry: dict, dest_dir: Path) -> tuple:
    dest = dest_dir / entry["file"]
    if _verified(dest, entry["sha256"]):
        return dest, 0
    if dest.is_file() and sha256_file(dest) == entry["sha256"]:
        size = dest.stat().st_size
    else:
        tmp = dest.with_name(f".{dest.name}.part{os.getpid()}")
        h = hashlib.sha256()
        size = 0
        for attempt in range(3):
            try:
                h, size = hashlib.sha256(), 0
                with urllib.request.urlopen(entry["url"], timeout=120) as resp, open(tmp, "wb") as fh:
                    for chunk in iter(lambda: resp.read(1 << 20), b""):
                        h.update(chunk)
                        fh.write(chunk)
                        size += len(chunk)
                break
            except OSError as exc:
                if attempt == 2:
                    tmp.unlink(missing_ok=True)
                    raise RealStackError(f"download of {entry['url']} failed: {exc}") from exc
                time.sleep(2 * (attempt + 1))
        if h.hexdigest() != entry["sha256"]:
            tmp.unlink(missing_ok=True)
            raise RealStackError(f"SHA256 MISMATCH for {entry['file']}: got {h.hexdigest()}, PyPI publishes {entry['sha256']}")
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    st = dest.stat()
    dest.with_name(dest.name + ".sha256").write_text(json.dumps({"sha256": entry["sha256"], "size": st.st_size, "mtime_ns": st.st_mtime_ns}))
    return dest, size


def fetch(doc: dict, mcache: Path, jobs: int = 6) -> dict:
    """Download what the resolution lists into <mcache>/real-stack/wheels (each once). {file: path}."""
    dest_dir = mcache / "real-stack" / "wheels"
    dest_dir.mkdir(parents=True, exist_ok=True)
    entries = [*doc["stack"], doc["wrong_build"]]
    t0 = time.monotonic()
    # Largest first: the long downloads overlap the many small ones.
    order = sorted(entries, key=lambda e: -len(e["file"]) if "cu13" in e["file"] or e["name"] in ("torch", "flashinfer-cubin") else 0)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda e: _fetch_one(e, dest_dir), order))
    got = sum(n for _p, n in results)
    total = sum(p.stat().st_size for p, _n in results)
    log(f"wheels: {len(results)} verified ({total / 1e9:.2f} GB), {got / 1e9:.2f} GB downloaded in {time.monotonic() - t0:.1f}s ({dest_dir})")
    return {p.name: p for p, _n in results}


# ---------------------------------------------------------------------------------------------
# Stand-ins with the real layouts (compiled by build_mirror.compile_job)
# ---------------------------------------------------------------------------------------------


def gencode_args(codes: list) -> list:
    args = []
    for c in codes:
        if c.startswith("compute_"):
            args += ["-gencode", f"arch={c},code={c}"]
        else:
            args += ["-gencode", f"arch={c.replace('sm_', 'compute_')},code={c}"]
    return args


def cuda_jobs() -> list:
    jobs = []
    for name, codes in SGL_SETS.items():
        what = f"sgl-kernel 0.3.21+cu130 libraries with the targets {' '.join(codes) or '(host code only)'}"
        job = {"name": f"rs_sgl_{name}", "src": "real_layout_kernel.cu", "codes": codes,
               "args": [*gencode_args(codes), "--compress-mode=size"] if codes else [],
               "defines": {"STANDIN_WHAT": what}}
        if not codes:
            # Host code only, like the real deep_gemm_cpp.abi3.so (no .nv_fatbin section): compiled as C++.
            job["defines"]["STANDIN_HOST_ONLY"] = "1"
            job["args"] = ["-x", "c++", "-cudart", "none"]
            job["host_only"] = True
        jobs.append(job)
    # sm90/common_ops is built with fast math in the real wheel
    jobs.append({"name": "rs_sgl_common_fastmath", "src": "real_layout_kernel.cu", "codes": SGL_SETS["common"],
                 "args": [*gencode_args(SGL_SETS["common"]), "--compress-mode=size", "-use_fast_math"],
                 "defines": {"STANDIN_WHAT": "sgl-kernel 0.3.21+cu130 sgl_kernel/sm90/common_ops.abi3.so (fast math)"}})
    for name, codes in FI_SETS.items():
        jobs.append({"name": f"rs_fi_{name}", "src": "real_layout_kernel.cu", "codes": codes, "args": gencode_args(codes),
                     "defines": {"STANDIN_WHAT": f"flashinfer-jit-cache 0.6.4+cu130 modules with the targets {' '.join(codes)}"}})
    return jobs


def sgl_kernel_python_files(pypi_wheel: Path) -> dict:
    """The Python files of the PyPI sgl-kernel 0.3.21 wheel: {archive path: (bytes, mode)}."""
    files = {}
    with zipfile.ZipFile(pypi_wheel) as zf:
        for name in zf.namelist():
            top = name.split("/", 1)[0]
            if name.endswith(".py") and top in ("sgl_kernel", "deep_gemm", "flash_attn_origin", "triton_kernels"):
                files[name] = (zf.read(name), 0o644)
    if "sgl_kernel/__init__.py" not in files:
        raise RealStackError(f"{pypi_wheel}: no sgl_kernel/__init__.py")
    return files


def sgl_kernel_files(so: dict, no_sm120: bool = False) -> dict:
    """{archive path: (bytes, mode)} of the .so files, with the real names; {archive path: targets}."""
    files, targets = {}, {}
    for rel, kind in SGL_FILES.items():
        job = f"rs_sgl_{kind}"
        if rel == "sgl_kernel/sm90/common_ops.abi3.so":
            job = "rs_sgl_common_fastmath"
        if no_sm120 and rel == "sgl_kernel/sm100/common_ops.abi3.so":
            job = "rs_sgl_common_no_sm120"
        files[rel] = (so[job]["path"].read_bytes(), 0o755)
        targets[rel] = so[job]["targets"]
    return files, targets


def fi_jit_files(so: dict) -> tuple:
    files, targets = {}, {}
    for mod, kind in FI_MODULES.items():
        rel = f"flashinfer_jit_cache/jit_cache/{mod}/{mod}.so"
        files[rel] = (so[f"rs_fi_{kind}"]["path"].read_bytes(), 0o755)
        targets[rel] = so[f"rs_fi_{kind}"]["targets"]
    return files, targets

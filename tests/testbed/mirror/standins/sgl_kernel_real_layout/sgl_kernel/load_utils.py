"""TEST STAND-IN for sgl_kernel/load_utils.py of sgl-kernel @VERSION@ (sglang-stack test bed).

Every other Python file of this package is the real sgl-kernel 0.3.21's (Apache-2.0, copied from the PyPI wheel
by tests/testbed/mirror/build_mirror.py); this one replaces the loader. The real loader picks sm90/ on compute
capability 9.0 and sm100/ otherwise (no GPU included) and loads common_ops.abi3.so, which is compiled against
one libtorch: under another torch it fails with "undefined symbol". The stand-in's shared libraries are nvcc
builds with the real file names and targets but no torch operators, so they are never loaded: the loader checks
the file is there and that torch.__version__ is the torch this stand-in was "built against"
(@BUILT_AGAINST_TORCH@), and raises the real error otherwise. The operators are not registered: calling one fails.
"""

import types
from pathlib import Path

import torch

STANDIN = True
BUILT_AGAINST_TORCH = "@BUILT_AGAINST_TORCH@"


def _get_compute_capability():
    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return props.major * 10 + props.minor


def _load_architecture_specific_ops():
    subdir = "sm90" if _get_compute_capability() == 90 else "sm100"
    path = Path(__file__).parent / subdir / "common_ops.abi3.so"
    if not path.is_file():
        raise ImportError(f"[sgl_kernel] CRITICAL: Could not load any common_ops library! {path} is missing")
    found = str(torch.__version__)
    if found != BUILT_AGAINST_TORCH:
        raise ImportError(
            f"{path}: undefined symbol: _ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib "
            f"(stand-in: sgl-kernel built against torch {BUILT_AGAINST_TORCH}, found {found})"
        )
    return types.SimpleNamespace(__file__=str(path), STANDIN=True)


def _preload_cuda_library():
    """The real one preloads libcudart from CUDA_HOME; the stand-in's libraries are never loaded."""
    return None

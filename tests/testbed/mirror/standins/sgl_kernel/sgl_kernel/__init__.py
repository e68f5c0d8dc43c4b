"""TEST STAND-IN for sgl-kernel @VERSION@ (sglang-stack test bed). NOT the real sgl-kernel.

Stands in for https://github.com/sgl-project/whl/releases/download/v0.3.21/@WHEEL_GLOB@ .
The real extension is compiled against one libtorch; under another torch its import fails with
``ImportError: .../common_ops.abi3.so: undefined symbol: ...``. The stand-in reproduces that gate
without loading any shared library: it compares ``torch.__version__`` with the torch version it was
"built against" (written in ``sgl_kernel/_build_info.py`` when the stand-in wheel was built).
``sm90/common_ops.abi3.so`` and ``sm100/common_ops.abi3.so`` are real nvcc 13.0.88 builds with the
real cu130 x86_64 targets, but they are never loaded.
"""

import os as _os

import torch as _torch

from sgl_kernel._build_info import BUILT_AGAINST_TORCH as _BUILT_AGAINST_TORCH
from sgl_kernel.version import __version__
from sgl_kernel import load_utils as _load_utils

STANDIN = True

__all__ = ["__version__", "common_ops_path", "STANDIN"]

_found = str(_torch.__version__)
if _found != _BUILT_AGAINST_TORCH:
    _path = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), _load_utils.common_ops_subdir(),
                          "common_ops.abi3.so")
    raise ImportError(
        f"{_path}: undefined symbol: _ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib "
        f"(stand-in: sgl-kernel built against torch {_BUILT_AGAINST_TORCH}, found {_found})"
    )

common_ops_path = _load_utils.common_ops_path()

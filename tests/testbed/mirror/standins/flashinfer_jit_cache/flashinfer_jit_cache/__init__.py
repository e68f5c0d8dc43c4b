"""TEST STAND-IN for flashinfer-jit-cache @VERSION@ (sglang-stack test bed). NOT the real package.

Stands in for https://github.com/flashinfer-ai/flashinfer/releases/download/v0.6.4/@WHEEL@ (listed by
https://flashinfer.ai/whl/cu130/flashinfer-jit-cache/). It has the API flashinfer-python 0.6.4 uses
(``__version__``, ``get_jit_cache_dir()``) and one real nvcc 13.0.88 module under ``jit_cache/``,
built for FLASHINFER_CUDA_ARCH_LIST="@ARCH_LIST@" (the release CI's list for CUDA 13.0).
"""

import os

from flashinfer_jit_cache._build_meta import __version__

STANDIN = True

__all__ = ["__version__", "get_jit_cache_dir", "STANDIN"]


def get_jit_cache_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "jit_cache")

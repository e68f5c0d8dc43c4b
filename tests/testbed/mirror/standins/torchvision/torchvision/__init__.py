"""TEST STAND-IN for torchvision @VERSION@ (sglang-stack test bed). NOT the real torchvision.

Stands in for the PyTorch nightly wheel of @INDEX@ that is built for torch @TORCH_VERSION@ only
(its Requires-Dist pins torch==@TORCH_VERSION@, like the real nightly's). It holds no operators; it
imports torch and checks the version it was built for, as the real _C extension does by failing to load.
"""

import torch as _torch

from torchvision.version import __version__, cuda  # noqa: F401

STANDIN = True

_BUILT_FOR = "@TORCH_VERSION@"
if str(_torch.__version__) != _BUILT_FOR:
    raise RuntimeError(
        f"Detected that PyTorch and torchvision were compiled with different CUDA major versions or torch versions "
        f"(stand-in: torchvision {__version__} is built for torch {_BUILT_FOR}, found {_torch.__version__})"
    )

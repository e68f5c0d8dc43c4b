"""TEST STAND-IN for PyTorch (torch @TORCH_VERSION@), sglang-stack test bed. NOT the real PyTorch.

Stands in for the nightly wheel of https://download.pytorch.org/whl/nightly/cu130 so that the
collection's install, pinning, import-gate and SM120-verification code can be exercised without
a GPU and without the 900 MB real wheel. It has:

- the real distribution name and version, and ``torch/version.py`` laid out like the generated file;
- ``torch/lib/libtorch_cuda.so`` and ``torch/lib/libc10_cuda.so`` built by the real nvcc 13.0.88, with
  a real fatbin for the cu130 x86_64 arch list (7.5;8.0;8.6;9.0;10.0;12.0+PTX);
- a minimal ``torch.cuda`` (see its docstring).

It has no tensors and no operators. ``import torch`` never loads the shared libraries.
"""

from torch import cuda, version
from torch.version import __version__

STANDIN = True
"""Marker for tests: True in the stand-in; the real torch has no such attribute."""

__all__ = ["__version__", "version", "cuda", "STANDIN"]

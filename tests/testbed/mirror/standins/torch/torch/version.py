# TEST STAND-IN (sglang-stack test bed): laid out like the torch/version.py that PyTorch's build
# generates; the values are the stand-in's. git_version is all zeros because the commit of the real
# nightly it stands in for is not known here.
from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']
__version__ = '@TORCH_VERSION@'
debug = False
cuda: Optional[str] = '@TORCH_CUDA@'
git_version = '0000000000000000000000000000000000000000'
hip: Optional[str] = None
xpu: Optional[str] = None

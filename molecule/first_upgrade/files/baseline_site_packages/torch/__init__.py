"""TEST STAND-IN for torch 2.9.1+cu128, the baseline's torch (molecule/first_upgrade, see its README.md).

SGLang 0.5.9 pins torch==2.9.1; a CUDA 12.8 host runs its cu128 build. The stand-in server imports torch and
sgl_kernel before it serves, as SGLang does; these answer with the baseline's versions and carry no code.
"""
from torch import version  # noqa: F401

STANDIN = True
__version__ = version.__version__

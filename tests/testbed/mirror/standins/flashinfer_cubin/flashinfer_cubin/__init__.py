"""TEST STAND-IN for flashinfer-cubin @VERSION@ (sglang-stack test bed). NOT the real package.

The real https://pypi.org/project/flashinfer-cubin/@VERSION@/ wheel is 245.7 MB of pre-compiled cubins,
too large for the test bed. This stand-in has the API flashinfer-python 0.6.4 uses (``__version__``,
which must equal flashinfer-python's, and ``get_cubin_dir()``) and one real sm_120 cubin built by
nvcc 13.0.88.
"""

import os

__version__ = "@VERSION@"

STANDIN = True


def get_cubin_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "cubins")

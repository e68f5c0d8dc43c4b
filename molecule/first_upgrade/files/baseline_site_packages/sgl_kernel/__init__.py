"""TEST STAND-IN for sgl-kernel 0.3.21 (PyPI's CUDA 12 build), the baseline's (molecule/first_upgrade, README.md)."""
STANDIN = True
__version__ = "0.3.21"

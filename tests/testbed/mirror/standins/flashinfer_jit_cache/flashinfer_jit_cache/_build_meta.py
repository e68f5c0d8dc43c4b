# TEST STAND-IN (sglang-stack test bed): written by tests/testbed/mirror/build_mirror.py.
__version__ = "@VERSION@"
cuda_arch_list = "@ARCH_LIST@"

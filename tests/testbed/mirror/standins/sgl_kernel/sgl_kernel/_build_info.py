# TEST STAND-IN (sglang-stack test bed): written by tests/testbed/mirror/build_mirror.py.
# The torch version this stand-in pretends to be compiled against; `import sgl_kernel` raises
# ImportError (undefined symbol, like the real extension) under any other torch.__version__.
BUILT_AGAINST_TORCH = "@BUILT_AGAINST_TORCH@"
CUDA_TARGETS = "@CUDA_TARGETS@"

# TEST STAND-IN (sglang-stack test bed): laid out like torchvision's generated version.py.
__version__ = "@VERSION@"
git_version = "0000000000000000000000000000000000000000"
cuda = "@TORCH_CUDA@"

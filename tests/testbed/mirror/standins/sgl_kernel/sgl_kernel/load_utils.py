"""TEST STAND-IN for sgl_kernel/load_utils.py (sglang-stack test bed). NOT the real code.

The real loader picks ``sm90/common_ops`` on compute capability 9.0 and ``sm100/common_ops`` on every
other GPU (SM120 included). The stand-in resolves the same path and never loads it.
"""

import os


def _capability():
    import torch

    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor


def common_ops_subdir() -> str:
    return "sm90" if _capability() == 90 else "sm100"


def common_ops_path() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), common_ops_subdir(), "common_ops.abi3.so")

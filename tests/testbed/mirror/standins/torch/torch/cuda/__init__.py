"""TEST STAND-IN for ``torch.cuda`` (sglang-stack test bed). NOT the real PyTorch module.

- ``is_available()`` is always False and ``device_count()`` is 0: the stand-in never touches a GPU.
- ``get_arch_list()`` returns the arch list compiled into the stand-in's ``torch/lib/libtorch_cuda.so``.
  Deliberate difference from real torch: the real ``get_arch_list()`` returns [] when CUDA is not
  available; the stand-in returns the compiled-in list so that tests can read it without a GPU.
- ``get_device_capability()`` raises like real torch does on a machine without a driver.
"""

from typing import List, Optional, Tuple

_COMPILED_ARCH_LIST: List[str] = "@ARCH_LIST@"  # filled in by build_mirror.py
_COMPILED_ARCH_FLAGS: str = "@ARCH_FLAGS@"  # filled in by build_mirror.py

STANDIN = True


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def device_count() -> int:
    return 0


def get_arch_list() -> List[str]:
    return list(_COMPILED_ARCH_LIST)


def get_gencode_flags() -> str:
    return _COMPILED_ARCH_FLAGS


def _no_driver() -> RuntimeError:
    return RuntimeError(
        "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
        "installed a driver from http://www.nvidia.com/Download/index.aspx (torch stand-in)"
    )


def get_device_capability(device: Optional[object] = None) -> Tuple[int, int]:
    raise _no_driver()


def get_device_name(device: Optional[object] = None) -> str:
    raise _no_driver()


def current_device() -> int:
    raise _no_driver()

// TEST STAND-IN source for torch/lib/libc10_cuda.so (sglang-stack test bed). NOT PyTorch code.
// Host code only (no kernels), compiled by nvcc. It defines the c10 symbol that sgl-kernel's
// common_ops references, so that `nm -D` on the pair looks like the real thing.
#include <cstdint>
#include <cuda_runtime.h>

namespace c10 {
namespace cuda {
__attribute__((visibility("default")))
void c10_cuda_check_implementation(int err, const char* filename, const char* function_name,
                                   int line_number, bool include_device_assertions) {
  (void)err; (void)filename; (void)function_name; (void)line_number; (void)include_device_assertions;
}

__attribute__((visibility("default")))
int standin_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}
}  // namespace cuda
}  // namespace c10

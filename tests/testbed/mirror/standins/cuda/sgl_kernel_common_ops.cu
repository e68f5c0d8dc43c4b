// TEST STAND-IN source for sgl_kernel/{sm90,sm100}/common_ops.abi3.so (sglang-stack test bed).
// NOT sgl-kernel code. Real SASS for the targets of the real cu130 x86_64 build
// (sm_80 sm_89 sm_90 sm_90a sm_100a sm_103a sm_120a, no PTX, --compress-mode=size).
#include <cstdint>
#include <cuda_runtime.h>

// Like the real extension, the library references a libc10_cuda symbol it does not define: this is
// the symbol that goes missing when sgl-kernel meets a torch it was not built against.
namespace c10 { namespace cuda {
void c10_cuda_check_implementation(int err, const char* filename, const char* function_name,
                                   int line_number, bool include_device_assertions);
} }

extern "C" __attribute__((visibility("default"), used))
const char standin_notice[] =
    "TEST STAND-IN for sgl-kernel 0.3.21+cu130 common_ops; not sgl-kernel (sglang-stack test bed)";

__global__ void standin_rmsnorm(const float* x, const float* w, float* out, int hidden, float eps) {
  extern __shared__ float partial[];
  const float* row = x + (int64_t)blockIdx.x * hidden;
  float acc = 0.f;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) acc += row[i] * row[i];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  float scale = rsqrtf(partial[0] / hidden + eps);
  for (int i = threadIdx.x; i < hidden; i += blockDim.x)
    out[(int64_t)blockIdx.x * hidden + i] = row[i] * scale * w[i];
}

extern "C" __attribute__((visibility("default")))
int standin_rmsnorm_launch(const float* x, const float* w, float* out, int rows, int hidden, float eps) {
  standin_rmsnorm<<<rows, 256, 256 * sizeof(float)>>>(x, w, out, hidden, eps);
  int err = (int)cudaGetLastError();
  c10::cuda::c10_cuda_check_implementation(err, "sgl-kernel/csrc/common_ops.cu", "standin_rmsnorm_launch", 42, true);
  return err;
}

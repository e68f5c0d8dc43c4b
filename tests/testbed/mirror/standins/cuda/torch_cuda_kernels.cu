// TEST STAND-IN source for torch/lib/libtorch_cuda.so (sglang-stack test bed).
// NOT PyTorch code. A few tiny kernels so that nvcc emits a real fatbin with one SASS image per
// -gencode target (and PTX for compute_120), like the real cu130 x86_64 build whose
// TORCH_CUDA_ARCH_LIST is "7.5;8.0;8.6;9.0;10.0;12.0+PTX".
#include <cstdint>
#include <cuda_runtime.h>

// The real libtorch_cuda.so records the arch flags it was compiled with (torch._C._cuda_getArchFlags()).
// The stand-in carries the same kind of string; build_mirror.py passes it in with -D.
#ifndef STANDIN_ARCH_FLAGS
#define STANDIN_ARCH_FLAGS "unknown"
#endif
extern "C" __attribute__((visibility("default"), used))
const char standin_torch_cuda_arch_flags[] = STANDIN_ARCH_FLAGS;
extern "C" __attribute__((visibility("default"), used))
const char standin_notice[] =
    "TEST STAND-IN for libtorch_cuda.so of torch 2.11.0.dev+cu130; not PyTorch (sglang-stack test bed)";

__global__ void standin_vectorized_add(const float* a, const float* b, float* out, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

__global__ void standin_fill(float* out, float value, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

extern "C" __attribute__((visibility("default")))
int standin_launch_add(const float* a, const float* b, float* out, int64_t n) {
  standin_vectorized_add<<<(unsigned)((n + 255) / 256), 256>>>(a, b, out, n);
  return (int)cudaGetLastError();
}

extern "C" __attribute__((visibility("default")))
int standin_launch_fill(float* out, float value, int64_t n) {
  standin_fill<<<(unsigned)((n + 255) / 256), 256>>>(out, value, n);
  return (int)cudaGetLastError();
}

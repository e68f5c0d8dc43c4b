// TEST STAND-IN source for a flashinfer-jit-cache AOT module (sglang-stack test bed).
// NOT FlashInfer code. Built for the cu130 FLASHINFER_CUDA_ARCH_LIST of the real release CI.
#include <cstdint>
#include <cuda_runtime.h>

extern "C" __attribute__((visibility("default"), used))
const char standin_notice[] =
    "TEST STAND-IN for flashinfer-jit-cache 0.6.4+cu130; not FlashInfer (sglang-stack test bed)";

__global__ void standin_fused_add_rmsnorm(float* x, float* residual, const float* w, int hidden, float eps) {
  float acc = 0.f;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    int64_t k = (int64_t)blockIdx.x * hidden + i;
    residual[k] += x[k];
    acc += residual[k] * residual[k];
  }
  for (int m = 16; m > 0; m >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, m);
  float scale = rsqrtf(acc / hidden + eps);
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    int64_t k = (int64_t)blockIdx.x * hidden + i;
    x[k] = residual[k] * scale * w[i];
  }
}

extern "C" __attribute__((visibility("default")))
int standin_fused_add_rmsnorm_launch(float* x, float* residual, const float* w, int rows, int hidden, float eps) {
  standin_fused_add_rmsnorm<<<rows, 32>>>(x, residual, w, hidden, eps);
  return (int)cudaGetLastError();
}

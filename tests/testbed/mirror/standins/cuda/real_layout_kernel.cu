// TEST STAND-IN source for the shared libraries of the real-layout stand-in wheels (sglang-stack test bed):
// sgl-kernel 0.3.21+cu130 (sgl_kernel/sm90|sm100/common_ops.abi3.so, spatial_ops, flash_ops, flashmla_ops,
// _mscclpp, lib/mscclpp*.so) and flashinfer-jit-cache 0.6.4+cu130 (jit_cache/<module>/<module>.so).
// NOT upstream code. build_mirror.py compiles it once per architecture set of the real file it stands in
// for (STANDIN_WHAT names that file) and checks the fatbin holds exactly that set.
#include <cstdint>
#ifndef STANDIN_HOST_ONLY
#include <cuda_runtime.h>
#endif

extern "C" __attribute__((visibility("default"), used))
const char standin_notice[] = "TEST STAND-IN for " STANDIN_WHAT "; not the upstream library (sglang-stack test bed)";

#ifndef STANDIN_HOST_ONLY
__global__ void standin_axpy(const float* x, float* y, float a, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __attribute__((visibility("default"))) int standin_launch(const float* x, float* y, float a, int64_t n) {
  standin_axpy<<<(unsigned)((n + 255) / 256), 256>>>(x, y, a, n);
  return (int)cudaGetLastError();
}
#else
extern "C" __attribute__((visibility("default"))) int standin_launch(const float*, float*, float, int64_t) { return 0; }
#endif

// Self-test of the packaged nvcc (build_mirror.py): a tiny kernel compiled for sm_120.
#include <cuda_runtime.h>
__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" int launch_vadd(const float* a, const float* b, float* c, int n) {
  vadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
  return (int)cudaGetLastError();
}

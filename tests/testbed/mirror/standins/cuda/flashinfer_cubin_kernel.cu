// TEST STAND-IN source for one cubin of flashinfer-cubin 0.6.4 (sglang-stack test bed).
// NOT FlashInfer code. Compiled with `nvcc -cubin -arch sm_120` into a bare CUDA ELF (.cubin).
extern "C" __global__ void standin_scale(float* x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

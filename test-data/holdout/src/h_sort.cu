// Holdout kernel: bitonic sort of 256 keys per block in shared memory, warp-level
// compare-exchange with shuffles, and a key/value variant.
#include <cstdint>
__device__ __forceinline__ void cmpx(unsigned &a, unsigned &b, bool up) {
  if ((a > b) == up) { unsigned t = a; a = b; b = t; }
}
extern "C" __global__ void h_bitonic(unsigned *keys, int n) {
  __shared__ unsigned s[256];
  int t = threadIdx.x, base = blockIdx.x * 256;
  s[t] = base + t < n ? keys[base + t] : 0xffffffffu;
  __syncthreads();
  for (int k = 2; k <= 256; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      int ixj = t ^ j;
      if (ixj > t) {
        unsigned a = s[t], b = s[ixj];
        cmpx(a, b, (t & k) == 0);
        s[t] = a; s[ixj] = b;
      }
      __syncthreads();
    }
  }
  if (base + t < n) keys[base + t] = s[t];
}
extern "C" __global__ void h_warp_sort(int *v, float *vals) {
  int lane = threadIdx.x & 31;
  int x = v[blockIdx.x * blockDim.x + threadIdx.x];
  float f = vals[blockIdx.x * blockDim.x + threadIdx.x];
  for (int k = 2; k <= 32; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      int y = __shfl_xor_sync(0xffffffffu, x, j);
      float g = __shfl_xor_sync(0xffffffffu, f, j);
      bool up = ((lane & k) == 0) == ((lane & j) == 0);
      bool take = up ? (y < x) : (y > x);
      if (take) { x = y; f = g; }
    }
  v[blockIdx.x * blockDim.x + threadIdx.x] = x;
  vals[blockIdx.x * blockDim.x + threadIdx.x] = f;
}

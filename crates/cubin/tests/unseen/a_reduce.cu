#include <cstdio>
__constant__ float scale[16];
__device__ int counter;
__device__ __noinline__ float helper(float x, int i) { return x * scale[i & 15] + 1.0f; }
extern "C" __global__ void reduce_sum(const float* __restrict__ in, float* out, int n) {
  __shared__ float buf[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  buf[t] = i < n ? helper(in[i], i) : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (t < s) buf[t] += buf[t + s]; __syncthreads(); }
  if (t == 0) { atomicAdd(out, buf[0]); atomicAdd(&counter, 1); }
}
extern "C" __global__ void __launch_bounds__(128, 4) warp_scan(int* data) {
  int v = data[threadIdx.x];
  for (int o = 1; o < 32; o <<= 1) { int y = __shfl_up_sync(0xffffffff, v, o); if ((threadIdx.x & 31) >= o) v += y; }
  data[threadIdx.x] = v;
  if (v < 0) printf("negative %d at %d\n", v, threadIdx.x);
}

// Holdout kernel: block-wide inclusive scans (warp shuffles up/down/xor, shared-memory warp
// totals), warp reductions (__reduce_*_sync on sm_80+), and a float prefix with min/max.
#include <cstdint>
__device__ unsigned warp_scan(unsigned v) {
  unsigned lane = threadIdx.x & 31;
  for (int d = 1; d < 32; d <<= 1) {
    unsigned t = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += t;
  }
  return v;
}
extern "C" __global__ void h_scan(const unsigned *in, const float *fin, unsigned *out,
                                  float *fout, unsigned *red, int n) {
  __shared__ unsigned totals[32];
  __shared__ float ftotals[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned v = i < n ? in[i] : 0u;
  float f = i < n ? fin[i] : 0.0f;
  unsigned s = warp_scan(v);
  float fs = f;
  for (int d = 1; d < 32; d <<= 1) {
    float t = __shfl_up_sync(0xffffffffu, fs, d);
    if (lane >= d) fs = fmaxf(fs, fs + t);
  }
  if (lane == 31) { totals[warp] = s; ftotals[warp] = fs; }
  __syncthreads();
  if (warp == 0) {
    unsigned nw = (blockDim.x + 31) >> 5;
    unsigned t = lane < nw ? totals[lane] : 0u;
    t = warp_scan(t);
    if (lane < nw) totals[lane] = t;
  }
  __syncthreads();
  if (warp > 0) { s += totals[warp - 1]; fs += ftotals[warp - 1]; }
  unsigned x = v;
  for (int d = 16; d > 0; d >>= 1) x ^= __shfl_xor_sync(0xffffffffu, x, d);
  unsigned y = __shfl_down_sync(0xffffffffu, v * 3u + 1u, 5);
#if __CUDA_ARCH__ >= 800
  unsigned radd = __reduce_add_sync(0xffffffffu, v);
  unsigned rmax = __reduce_max_sync(0xffffffffu, v ^ 7u);
  unsigned ror = __reduce_or_sync(0xffffffffu, v << (lane & 7));
#else
  unsigned radd = x, rmax = y, ror = s;
#endif
  if (i < n) {
    out[i] = s;
    fout[i] = fs;
    red[4 * i + 0] = x;
    red[4 * i + 1] = y;
    red[4 * i + 2] = radd ^ rmax;
    red[4 * i + 3] = ror + __popc(__ballot_sync(0xffffffffu, v > 8u));
  }
}

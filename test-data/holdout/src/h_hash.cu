// Holdout kernel: 64-bit hashing, bit tricks, and atomics (CAS loop, min/max, 64-bit add).
#include <cstdint>
__device__ uint64_t mix(uint64_t k) {
  k ^= k >> 33; k *= 0xff51afd7ed558ccdull; k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ull;
  return k ^ (k >> 33);
}
extern "C" __global__ void h_hash(const uint64_t *in, uint64_t *out, unsigned *bins,
                                  unsigned long long *sum, int *mn, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint64_t h = mix(in[i] + i);
  unsigned lo = (unsigned)h, hi = (unsigned)(h >> 32);
  unsigned f = __funnelshift_l(lo, hi, i & 31) ^ __brev(lo) ^ (__popc(hi) << 8) ^ __clz(lo | 1);
  out[i] = h ^ ((uint64_t)__umulhi(lo, hi) << 17) ^ __byte_perm(lo, hi, 0x7531);
  atomicAdd(&bins[f & 63], 1u);
  atomicAdd(sum, (unsigned long long)(lo & 0xffff));
  atomicMin(mn, (int)(lo % 1000) - 500);
  unsigned old = bins[64 + (hi & 7)], assumed;
  do { assumed = old; old = atomicCAS(&bins[64 + (hi & 7)], assumed, assumed ^ f); } while (old != assumed);
}

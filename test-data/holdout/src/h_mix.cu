// Holdout kernel (written 2026-11-27, after every SASS table had been learned): a mix of
// integer intrinsics (funnel shifts, byte permutes, 64-bit multiply-high, sum of absolute
// differences), fast-math and library float functions, narrow loads and stores, shared-memory
// integer atomics, warp votes and shuffles, and a data-dependent loop with integer division.
#include <cstdint>

__device__ __forceinline__ unsigned mixu(unsigned a, unsigned b, unsigned s) {
  unsigned x = __funnelshift_l(a, b, s) ^ __funnelshift_rc(b, a, s + 3);
  x += __byte_perm(a, b, 0x7351) + __sad(a & 0xffff, b >> 16, s);
  x ^= __brev(x) >> (s & 7);
  return x + __popc(a & ~b) * 17u + __clz(b | 1u) + __ffs(a);
}

extern "C" __global__ void h_mix(const uint8_t *bytes, const short *halfwords, const float *f,
                                 const double *d, unsigned *out_u, float *out_f, short *out_s,
                                 unsigned long long *out_64, int n, int k) {
  __shared__ unsigned smax[4], smin[4], scount;
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < 4) {
    smax[t] = 0u;
    smin[t] = 0xffffffffu;
  }
  if (t == 0) scount = 0u;
  __syncthreads();
  if (i < n) {
    unsigned a = bytes[i] | (unsigned)bytes[(i + 7) % n] << 8 | (unsigned)halfwords[i] << 16;
    unsigned b = (unsigned)halfwords[(i * 3 + 1) % n] * 2654435761u + (unsigned)k;
    unsigned m = mixu(a, b, (unsigned)(i & 31));
    unsigned long long w = (unsigned long long)m * 0x9e3779b97f4a7c15ull;
    w ^= __umul64hi(w, 0xc2b2ae3d27d4eb4full) + (long long)__mulhi((int)a, (int)b);
    // A data-dependent loop with a runtime divisor.
    int steps = (int)(m % 5u) + 1, div = (k & 7) + 2, acc = (int)(a & 0xfff);
    for (int s = 0; s < steps; s++) acc = acc / div * 3 + acc % div - s;
    float x = f[i], y = f[(i + 1) % n];
    float r = __saturatef(fabsf(x) * 0.125f) + copysignf(fminf(fabsf(y), 4.0f), x);
    r += __fdividef(x, fabsf(y) + 1.0f) + rsqrtf(fabsf(x) + 1.0f) + hypotf(x, y) * 0.5f;
    r += fmaf(x, y, -r) * 0.25f + truncf(x * 3.5f) + rintf(y * 2.25f);
    double e = d[i] * 1.5 - (double)x;
    e = fma(e, (double)y, 0.5) + floor(e) + (double)(acc % 97);
    // Warp collectives over the active lanes (every lane of a full warp is active here only
    // when n is a multiple of 32; the masks are the active lanes either way).
    unsigned active = __activemask();
    unsigned votes = __ballot_sync(active, (m & 1u) != 0u);
#if __CUDA_ARCH__ >= 800
    unsigned mx = __reduce_max_sync(active, m >> 8);
#else
    unsigned mx = max(m >> 8, __shfl_xor_sync(active, m >> 8, 1));
#endif
    int any = __any_sync(active, acc < 0);
    atomicMax(&smax[t & 3], m);
    atomicMin(&smin[t & 3], b);
    atomicAdd(&scount, (unsigned)__popc(votes));
    out_u[2 * i] = m ^ votes;
    out_u[2 * i + 1] = mx + (unsigned)any + (unsigned)acc;
    out_f[i] = r;
    out_s[i] = (short)(acc * 7 + (int)(a >> 20));
    out_64[i] = w + (unsigned long long)(long long)e;
  }
  __syncthreads();
  // Each of the first four threads adds the block's results to its own first word.
  if (t < 4 && i < n) out_u[2 * i] += smax[t] ^ smin[t] ^ scount;
}

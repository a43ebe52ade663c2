// Warp collectives, shared-memory atomics and CTA barriers. Launch: 1 CTA of 64 threads,
// in = 64 u32, out = 64 * 8 u32.
extern "C" __global__ void u_warp(const unsigned *in, unsigned *out)
{
    __shared__ unsigned total;
    __shared__ unsigned hist[8];
    unsigned t = threadIdx.x, lane = t & 31;
    if (t == 0)
        total = 0;
    if (t < 8)
        hist[t] = 0;
    __syncthreads();
    unsigned v = in[t];
    unsigned s = v; // inclusive prefix sum within the warp
    for (int d = 1; d < 32; d <<= 1) {
        unsigned y = __shfl_up_sync(0xffffffffu, s, d);
        if (lane >= (unsigned)d)
            s += y;
    }
    unsigned m = v; // butterfly maximum
    for (int d = 16; d > 0; d >>= 1)
        m = max(m, __shfl_xor_sync(0xffffffffu, m, d));
    unsigned odd = __ballot_sync(0xffffffffu, v & 1);
    unsigned grp = __match_any_sync(0xffffffffu, v & 7);
    unsigned third = __ballot_sync(0xffffffffu, v % 3 == 0);
    atomicAdd(&total, v);
    atomicAdd(&hist[v & 7], 1u);
    unsigned rsum = 0;
#if __CUDA_ARCH__ >= 800
    if (lane & 1)
        rsum = __reduce_add_sync(0xaaaaaaaau, v);
#else
    if (lane & 1)
        for (int k = 1; k < 32; k += 2)
            rsum += __shfl_sync(0xaaaaaaaau, v, k);
#endif
    __syncthreads();
    unsigned *o = out + t * 8;
    o[0] = s;
    o[1] = m;
    o[2] = odd;
    o[3] = grp;
    o[4] = total;
    o[5] = hist[t & 7];
    o[6] = rsum;
    o[7] = third;
}

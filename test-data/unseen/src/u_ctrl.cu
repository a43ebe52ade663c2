// Divergent control flow: data-dependent loops with break/continue, early exit of some
// threads, barrier reductions (__syncthreads_count/and/or), warp-level reconvergence.
// Launch: 1 CTA of 64 threads, in = 64 u32, out = 64 * 4 + 4 u32.
extern "C" __global__ void u_ctrl(const unsigned *in, unsigned *out)
{
    unsigned t = threadIdx.x;
    unsigned v = in[t];
    unsigned acc = 0, steps = 0;
    // Collatz-like walk, bounded: divergent trip counts.
    for (unsigned x = v | 1; x != 1 && steps < 200; steps++) {
        if (x & 1)
            x = 3 * x + 1;
        else
            x >>= 1;
        if ((x & 7) == 5)
            continue;
        acc += x & 0xff;
        if (acc > 5000)
            break;
    }
    int c = __syncthreads_count(acc > 1000);
    int a = __syncthreads_and(steps > 3);
    int o = __syncthreads_or(steps == 200);
    out[t * 4 + 0] = acc;
    out[t * 4 + 1] = steps;
    out[t * 4 + 2] = __ballot_sync(0xffffffffu, acc & 1);
    if (t == 0) {
        out[256] = (unsigned)c;
        out[257] = (unsigned)a;
        out[258] = (unsigned)o;
    }
    unsigned stay = __ballot_sync(0xffffffffu, v % 5 != 0);
    if (v % 5 == 0)
        return; // these threads leave early
    out[t * 4 + 3] = __ballot_sync(stay, v & 2) ^ stay;
}

// Device-function calls (struct by value, recursion), local arrays with dynamic indices.
// Launch: 1 CTA of 64 threads, in = 64 u32, out = 64 * 4 u32.
struct Pair {
    unsigned lo, hi;
    unsigned long long w;
};

__device__ __noinline__ Pair mix(Pair p, unsigned k)
{
    Pair r;
    r.lo = p.lo * 2654435761u + k;
    r.hi = p.hi ^ (p.lo >> 3);
    r.w = p.w + ((unsigned long long)r.lo << 17);
    return r;
}

__device__ __noinline__ unsigned fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

extern "C" __global__ void u_calls(const unsigned *in, unsigned *out)
{
    unsigned t = threadIdx.x;
    unsigned v = in[t];
    unsigned table[16];
    for (int i = 0; i < 16; i++)
        table[i] = v * (unsigned)i + (unsigned)(i * i);
    Pair p = {v, t, 0};
    for (unsigned k = 0; k < (v & 7); k++)
        p = mix(p, k);
    unsigned *o = out + t * 4;
    o[0] = table[v & 15] + table[(v >> 4) & 15];
    o[1] = p.lo ^ p.hi;
    o[2] = (unsigned)(p.w >> 7);
    o[3] = fib(t & 15);
}

// Atomics on dynamic shared memory and global memory (32/64-bit, float, CAS loop, inc/dec
// wrap-around), __syncwarp and fences. Only order-independent final values are written.
// Launch: 1 CTA of 64 threads, 1 KiB dynamic shared memory, in = 64 u32, out = 40 u32.
extern "C" __global__ void u_atomics(const unsigned *in, unsigned *out)
{
    extern __shared__ unsigned dyn[];
    unsigned t = threadIdx.x;
    if (t < 32)
        dyn[t] = (t == 17 || t == 20) ? 0xffffffffu : 0u;
    __syncthreads();
    unsigned v = in[t];
    atomicAdd(&dyn[v & 15], 1u);
    atomicMax(&dyn[16], v);
    atomicMin(&dyn[17], v);
    atomicOr(&dyn[18], 1u << (v & 31));
    atomicXor(&dyn[19], v);
    atomicAnd(&dyn[20], ~(1u << (t & 31)));
    atomicInc(&dyn[21], 9u);
    atomicDec(&dyn[22], 7u);
    atomicSub(&dyn[23], v & 0xff);
    __syncwarp();
    unsigned long long *o64 = (unsigned long long *)(out + 32);
    atomicAdd(o64, (unsigned long long)v * 1000003ull);
    float *of = (float *)(out + 34);
    atomicAdd(of, (float)(v & 255));
    // Float maximum through a compare-and-swap loop.
    unsigned *om = out + 35;
    float f = (float)v * 0.5f;
    unsigned old = *(volatile unsigned *)om, assumed;
    do {
        assumed = old;
        if (__uint_as_float(assumed) >= f)
            break;
        old = atomicCAS(om, assumed, __float_as_uint(f));
    } while (old != assumed);
    atomicMax((long long *)(out + 36), (long long)(int)v - 300000);
    __threadfence();
    __syncthreads();
    if (t < 32)
        out[t] = dyn[t];
}

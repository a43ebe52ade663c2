// Double precision, half and bfloat16. Launch: 1 CTA of 64 threads, in = 128 f64 (x = in[t],
// y = in[64 + t]), out = 64 * 8 64-bit words.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void u_f64h(const double *in, unsigned long long *out)
{
    unsigned t = threadIdx.x;
    double x = in[t], y = in[64 + t];
    unsigned long long *o = out + t * 8;
    o[0] = __double_as_longlong(__dadd_rz(x, y));
    o[1] = __double_as_longlong(__dmul_ru(x, y));
    o[2] = __double_as_longlong(__ddiv_rn(x, y));
    o[3] = __double_as_longlong(__dsqrt_rd(fabs(x)));
    o[4] = __double_as_longlong(__fma_rn(x, y, -1.0));
    o[5] = (unsigned long long)__float_as_uint(__double2float_rz(x)) |
           ((unsigned long long)(unsigned)__double2int_rn(y * 1000.0) << 32);
    __half2 hx = __floats2half2_rn((float)x, (float)y);
    __half2 hy = __floats2half2_rn((float)y, (float)(x * 0.5));
    __half2 hs = __hfma2(hx, hy, __hadd2(hx, hy));
    __half2 hm = __hmul2(hx, hy);
    o[6] = (unsigned long long)*(unsigned *)&hs | ((unsigned long long)*(unsigned *)&hm << 32);
    __nv_bfloat162 bx = __floats2bfloat162_rn((float)x, (float)y);
    __nv_bfloat162 by = __floats2bfloat162_rn((float)y, 2.0f);
    __nv_bfloat162 bs = __hadd2(bx, by);
    float back = __bfloat162float(__low2bfloat16(bs)) + __half2float(__high2half(hm));
    o[7] = (unsigned long long)*(unsigned *)&bs | ((unsigned long long)__float_as_uint(back) << 32);
}

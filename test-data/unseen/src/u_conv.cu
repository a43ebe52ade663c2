// Conversions between integer and floating-point types in every rounding mode, saturating
// and narrowing conversions. Launch: 1 CTA of 64 threads, in = 64 f64 (x = in[t]),
// out = 64 * 16 32-bit words.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void u_conv(const double *in, unsigned *out)
{
    unsigned t = threadIdx.x;
    double x = in[t];
    float f = (float)x;
    unsigned *o = out + t * 16;
    o[0] = (unsigned)__double2int_rz(x);
    o[1] = (unsigned)__double2int_ru(x);
    o[2] = __double2uint_rd(x);
    o[3] = __float_as_uint(__double2float_ru(x));
    o[4] = __float_as_uint(__double2float_rd(x));
    long long ll = __double2ll_rn(x * 4294967296.0);
    o[5] = (unsigned)ll;
    o[6] = (unsigned)(ll >> 32);
    o[7] = __float_as_uint(__ll2float_rz(ll));
    o[8] = __float_as_uint(__uint2float_ru((unsigned)ll));
    o[9] = (unsigned)__float2int_rn(f) ^ ((unsigned)__float2int_ru(f) << 8);
    o[10] = (unsigned)(int)(signed char)__float2int_rz(f); // narrowing, sign-extended
    o[11] = (unsigned)__half_as_ushort(__double2half(x)) |
            ((unsigned)__half_as_ushort(__float2half_rz(f)) << 16);
    o[12] = (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(f)) |
            ((unsigned)__bfloat16_as_ushort(__float2bfloat16_rz(f)) << 16);
    o[13] = __float_as_uint(__int2float_rd((int)(t * 0x01234567u)));
    o[14] = (unsigned)(unsigned short)__float2uint_rz(f * 1000.0f);
    o[15] = __float_as_uint(__half2float(__ushort_as_half((unsigned short)(t * 499u))));
}

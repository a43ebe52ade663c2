// Single precision with explicit rounding modes. Launch: 1 CTA of 64 threads, in = 128 f32
// (x = in[t], y = in[64 + t]), out = 64 * 16 32-bit words.
extern "C" __global__ void u_f32(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    float x = in[t], y = in[64 + t];
    float *o = out + t * 16;
    o[0] = __fadd_rn(x, y);
    o[1] = __fadd_rz(x, y);
    o[2] = __fmul_ru(x, y);
    o[3] = __fmul_rd(x, y);
    o[4] = __fdiv_rn(x, y);
    o[5] = __fdiv_rz(x, y);
    o[6] = __fsqrt_rn(fabsf(x));
    o[7] = __fsqrt_ru(fabsf(x));
    o[8] = __fmaf_rn(x, y, 1.5f);
    o[9] = __fmaf_rz(x, y, -x);
    o[10] = fminf(x, y);
    o[11] = fmaxf(x, y);
    o[12] = __saturatef(x);
    o[13] = __int_as_float(__float2int_rd(x));
    o[14] = __uint_as_float(__float2uint_rn(y));
    o[15] = copysignf(x, y);
}

// Holdout kernel: conversions in every rounding mode (float/double/integer/half/bfloat16),
// saturation, and correctly rounded arithmetic intrinsics.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdint>
extern "C" __global__ void h_convert(const float *fin, const double *din, const int *iin,
                                     int *iout, long long *lout, float *fout, double *dout,
                                     unsigned short *hout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float f = fin[i] * 1.37f - 3.1f;
  double d = din[i] * 2.25 + 0.5;
  int k = iin[i] - 9;
  iout[8 * i + 0] = __float2int_rn(f);
  iout[8 * i + 1] = __float2int_rz(f);
  iout[8 * i + 2] = __float2int_rd(f);
  iout[8 * i + 3] = __float2int_ru(f);
  iout[8 * i + 4] = (int)__float2uint_rn(fabsf(f));
  iout[8 * i + 5] = __double2int_rz(d);
  iout[8 * i + 6] = __double2int_rd(d);
  iout[8 * i + 7] = (int)__double2uint_ru(fabs(d));
  lout[3 * i + 0] = __float2ll_rz(f * 1e6f);
  lout[3 * i + 1] = __double2ll_rn(d * 1e12);
  lout[3 * i + 2] = (long long)__double2ull_rd(fabs(d) * 4e9);
  fout[8 * i + 0] = __int2float_rd(k * 123457);
  fout[8 * i + 1] = __ll2float_ru((long long)k << 40);
  fout[8 * i + 2] = __double2float_rz(d / 3.0);
  fout[8 * i + 3] = __saturatef(f * 0.25f);
  fout[8 * i + 4] = __frcp_rn(f + 8.5f);
  fout[8 * i + 5] = __fsqrt_rd(fabsf(f) + 1.0f);
  fout[8 * i + 6] = __fdiv_ru(f, 3.0f) + __fmaf_rz(f, f, -1.0f);
  fout[8 * i + 7] = __bfloat162float(__float2bfloat16_rz(f)) + __half2float(__float2half_rd(f));
  dout[4 * i + 0] = __dadd_ru(d, 1e-17);
  dout[4 * i + 1] = __dmul_rz(d, 1.0 / 3.0);
  dout[4 * i + 2] = __drcp_rn(d + 9.0) + __dsqrt_ru(fabs(d));
  dout[4 * i + 3] = __ll2double_rd((long long)k * 0x123456789ll) + __uint2double_rn((unsigned)k);
  __half2 h = __floats2half2_rn(f, f * 0.5f);
  h = __hfma2(h, __float2half2_rn(1.5f), __floats2half2_rn(-0.25f, 2.0f));
  __nv_bfloat162 b = __floats2bfloat162_rn(f, -f);
  hout[4 * i + 0] = __half_as_ushort(__low2half(h));
  hout[4 * i + 1] = __half_as_ushort(__high2half(h));
  hout[4 * i + 2] = __bfloat16_as_ushort(__low2bfloat16(b));
  hout[4 * i + 3] = __half_as_ushort(__short2half_rn((short)k)) ^ (unsigned short)__half2short_rz(__float2half(f * 9.0f));
}

// Holdout kernel: double precision library math, half2/bfloat162 arithmetic, conversions
// between every width and rounding mode.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void h_dmath(const double *x, double *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  y[i] = sqrt(fabs(v)) + rsqrt(fabs(v) + 1.0) + exp(v * 0.1) + log1p(fabs(v)) + pow(fabs(v), 0.75) + sin(v) * cos(v * 2.0);
}
extern "C" __global__ void h_half(const __half2 *a, const __nv_bfloat162 *b, __half2 *c, __nv_bfloat162 *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2 x = a[i], y = a[n - 1 - i];
  c[i] = __hfma2(x, y, __hmul2(x, __float2half2_rn(0.5f))) + __hmax2(x, y);
  __nv_bfloat162 p = b[i], q = b[n - 1 - i];
#if __CUDA_ARCH__ >= 800
  d[i] = __hfma2(p, q, __float2bfloat162_rn(1.25f));
#else
  float2 pf = __bfloat1622float2(p), qf = __bfloat1622float2(q);
  d[i] = __floats2bfloat162_rn(pf.x * qf.x + 1.25f, pf.y * qf.y + 1.25f);
#endif
}
extern "C" __global__ void h_conv(const float *f, const double *g, int *o, long long *o64, unsigned short *h, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  o[i] = __float2int_rd(f[i]) + __float2int_ru(f[i] * 3.0f) + __double2int_rz(g[i]) + (int)__float2uint_rn(fabsf(f[i]));
  o64[i] = __double2ll_rn(g[i] * 1e10) + __float2ll_rz(f[i] * 1e6f);
  h[i] = __half_as_ushort(__float2half_rz(f[i])) ^ __bfloat16_as_ushort(__double2bfloat16(g[i]));
}

// Probe kernel (compiled by build.sh): every packed half-precision operation with one
// operand a broadcast half (`R.H0_H0`, `R.H1_H1`) and another a pair of immediates, in
// every operand position, in f16x2 and (sm_80 and later) bf16x2. The intrinsics probe has
// only some of these pairings; the holdout kernels showed `HFMA2 R, R, R.H1_H1, 2, -0.25`.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

template <typename H2>
__device__ void ops(H2 a, H2 x, H2 k, H2 c, unsigned *o) {
  H2 r[14] = {__hfma2(a, x, k),      __hfma2(x, a, k),      __hfma2(x, k, c),
              __hfma2(a, k, x),      __hmul2(x, k),         __hmul2(a, x),
              __hadd2(x, k),         __hsub2(x, k),         __hsub2(k, x),
              __hfma2_relu(a, x, k), __hfma2(x, x, k),      __hmax2(x, k),
              __hmin2(x, k),         __hfma2(a, x, c)};
  for (int j = 0; j < 14; j++) o[j] = *(unsigned *)&r[j];
}

template <typename H2>
__device__ void sat_ops(H2 a, H2 x, H2 k, unsigned *o) {
  H2 r[3] = {__hfma2_sat(a, x, k), __hmul2_sat(x, k), __hadd2_sat(x, k)};
  for (int j = 0; j < 3; j++) o[j] = *(unsigned *)&r[j];
}

extern "C" __global__ void probe_broadcasts(const unsigned *in, unsigned *out, unsigned p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned *o = out + 128 * i;
  __half2 a = *(const __half2 *)&in[2 * i], b = *(const __half2 *)&in[2 * i + 1];
  __half2 c = *(__half2 *)&p;
  __half2 lo = __low2half2(b), hi = __high2half2(b);
  __half2 k = __floats2half2_rn(2.0f, -0.25f), k2 = __floats2half2_rn(0.5f, 0.5f);
  ops(a, lo, k, c, o);
  ops(a, hi, k, c, o + 14);
  ops(a, hi, k2, c, o + 28);
  sat_ops(a, lo, k, o + 42);
  sat_ops(a, hi, k, o + 45);
#if __CUDA_ARCH__ >= 800
  __nv_bfloat162 ba = *(const __nv_bfloat162 *)&in[2 * i];
  __nv_bfloat162 bb = *(const __nv_bfloat162 *)&in[2 * i + 1];
  __nv_bfloat162 bc = *(__nv_bfloat162 *)&p;
  __nv_bfloat162 bk = __floats2bfloat162_rn(2.0f, -0.25f);
  ops(ba, __low2bfloat162(bb), bk, bc, o + 48);
  ops(ba, __high2bfloat162(bb), bk, bc, o + 62);
#endif
}

// Seeds for the SASS tables (`cargo xtask sass-probe --collect --also test-data/sass-probe`):
// every CUDA SIMD-video, conversion and correctly rounded arithmetic intrinsic, and packed
// half-precision operations with broadcast halves, each with register, immediate and kernel
// parameter operands (parameters become constant-bank or uniform-register operands), so that
// ptxas emits the instruction forms the corpus never has. Written from the CUDA Math API's
// intrinsic lists, not from any test suite's code. Build: ../build.sh.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// Three operand shapes per binary intrinsic: register/register, register/immediate,
// register/parameter.
#define B3(F, a, b, k, p) F(a, b) ^ F(a, k) ^ F(a, p)

extern "C" __global__ void probe_simd(const unsigned *in, unsigned *out, unsigned p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned a = in[2 * i], b = in[2 * i + 1], k = 0x01fe7f80u;
  unsigned *o = out + 32 * i;
  o[0] = B3(__vabsdiffs2, a, b, k, p) ^ B3(__vabsdiffs4, a, b, k, p);
  o[1] = B3(__vabsdiffu2, a, b, k, p) ^ B3(__vabsdiffu4, a, b, k, p);
  o[2] = B3(__vadd2, a, b, k, p) ^ B3(__vadd4, a, b, k, p);
  o[3] = B3(__vaddss2, a, b, k, p) ^ B3(__vaddss4, a, b, k, p);
  o[4] = B3(__vaddus2, a, b, k, p) ^ B3(__vaddus4, a, b, k, p);
  o[5] = B3(__vavgs2, a, b, k, p) ^ B3(__vavgs4, a, b, k, p);
  o[6] = B3(__vavgu2, a, b, k, p) ^ B3(__vavgu4, a, b, k, p);
  o[7] = B3(__vcmpeq2, a, b, k, p) ^ B3(__vcmpeq4, a, b, k, p);
  o[8] = B3(__vcmpges2, a, b, k, p) ^ B3(__vcmpges4, a, b, k, p);
  o[9] = B3(__vcmpgeu2, a, b, k, p) ^ B3(__vcmpgeu4, a, b, k, p);
  o[10] = B3(__vcmpgts2, a, b, k, p) ^ B3(__vcmpgts4, a, b, k, p);
  o[11] = B3(__vcmpgtu2, a, b, k, p) ^ B3(__vcmpgtu4, a, b, k, p);
  o[12] = B3(__vcmples2, a, b, k, p) ^ B3(__vcmples4, a, b, k, p);
  o[13] = B3(__vcmpleu2, a, b, k, p) ^ B3(__vcmpleu4, a, b, k, p);
  o[14] = B3(__vcmplts2, a, b, k, p) ^ B3(__vcmplts4, a, b, k, p);
  o[15] = B3(__vcmpltu2, a, b, k, p) ^ B3(__vcmpltu4, a, b, k, p);
  o[16] = B3(__vcmpne2, a, b, k, p) ^ B3(__vcmpne4, a, b, k, p);
  o[17] = B3(__vhaddu2, a, b, k, p) ^ B3(__vhaddu4, a, b, k, p);
  o[18] = B3(__vmaxs2, a, b, k, p) ^ B3(__vmaxs4, a, b, k, p);
  o[19] = B3(__vmaxu2, a, b, k, p) ^ B3(__vmaxu4, a, b, k, p);
  o[20] = B3(__vmins2, a, b, k, p) ^ B3(__vmins4, a, b, k, p);
  o[21] = B3(__vminu2, a, b, k, p) ^ B3(__vminu4, a, b, k, p);
  o[22] = B3(__vsads2, a, b, k, p) ^ B3(__vsads4, a, b, k, p);
  o[23] = B3(__vsadu2, a, b, k, p) ^ B3(__vsadu4, a, b, k, p);
  o[24] = B3(__vseteq2, a, b, k, p) ^ B3(__vseteq4, a, b, k, p);
  o[25] = B3(__vsetges2, a, b, k, p) ^ B3(__vsetgeu4, a, b, k, p);
  o[26] = B3(__vsetgts2, a, b, k, p) ^ B3(__vsetltu4, a, b, k, p);
  o[27] = B3(__vsetles2, a, b, k, p) ^ B3(__vsetne4, a, b, k, p);
  o[28] = B3(__vsub2, a, b, k, p) ^ B3(__vsub4, a, b, k, p);
  o[29] = B3(__vsubss2, a, b, k, p) ^ B3(__vsubss4, a, b, k, p);
  o[30] = B3(__vsubus2, a, b, k, p) ^ B3(__vsubus4, a, b, k, p);
  o[31] = __vabs2(a) ^ __vabs4(b) ^ __vabsss2(a) ^ __vabsss4(b) ^ __vneg2(a) ^ __vneg4(b) ^
          __vnegss2(a) ^ __vnegss4(b);
}

// Every rounding suffix of a conversion intrinsic.
#define R4(F, x) (F##_rn(x) + F##_rz(x) + F##_rd(x) + F##_ru(x))

extern "C" __global__ void probe_convert(const float *fin, const double *din, const int *iin,
                                         long long *out, float fp, double dp, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float f = fin[i];
  double d = din[i];
  int k = iin[i];
  long long q = (long long)k * 0x10001ll;
  long long *o = out + 32 * i;
  o[0] = R4(__float2int, f) + R4(__float2uint, f) + R4(__float2ll, f) + R4(__float2ull, f);
  o[1] = R4(__double2int, d) + R4(__double2uint, d) + R4(__double2ll, d) + R4(__double2ull, d);
  o[2] = R4(__float2int, fp) + R4(__double2ull, dp) + R4(__double2ll, dp) + R4(__float2ull, fp);
  o[3] = __float_as_int(R4(__int2float, k) + R4(__uint2float, (unsigned)k));
  o[4] = __float_as_int(R4(__ll2float, q) + R4(__ull2float, (unsigned long long)q));
  o[5] = __double_as_longlong(R4(__ll2double, q) + R4(__ull2double, (unsigned long long)q) +
                              __int2double_rn(k) + __uint2double_rn((unsigned)k));
  o[6] = __float_as_int(R4(__double2float, d) + R4(__double2float, dp));
  __half h = __float2half_rn(f);
  __nv_bfloat16 bh = __float2bfloat16_rn(f);
  o[7] = R4(__half2int, h) + R4(__half2uint, h) + R4(__half2ll, h) + R4(__half2ull, h);
  o[8] = R4(__half2short, h) + R4(__half2ushort, h);
  o[9] = __half_as_ushort(__float2half_rz(f)) + __half_as_ushort(__float2half_rd(f)) +
         __half_as_ushort(__float2half_ru(f)) + __half_as_ushort(__double2half(d));
  o[10] = __half_as_ushort(R4(__int2half, k)) + __half_as_ushort(R4(__uint2half, (unsigned)k)) +
          __half_as_ushort(R4(__short2half, (short)k)) +
          __half_as_ushort(R4(__ushort2half, (unsigned short)k)) +
          __half_as_ushort(R4(__ll2half, q)) + __half_as_ushort(R4(__ull2half, (unsigned long long)q));
  o[11] = R4(__bfloat162int, bh) + R4(__bfloat162uint, bh) + R4(__bfloat162ll, bh) +
          R4(__bfloat162short, bh) + R4(__bfloat162ushort, bh);
  o[12] = __bfloat16_as_ushort(__float2bfloat16_rz(f)) + __bfloat16_as_ushort(__float2bfloat16_rd(f)) +
          __bfloat16_as_ushort(__float2bfloat16_ru(f)) + __bfloat16_as_ushort(__double2bfloat16(d));
  o[13] = __bfloat16_as_ushort(R4(__int2bfloat16, k)) +
          __bfloat16_as_ushort(R4(__short2bfloat16, (short)k)) +
          __bfloat16_as_ushort(R4(__ll2bfloat16, q)) + __bfloat16_as_ushort(R4(__uint2bfloat16, (unsigned)k));
  o[14] = __float_as_int(__half2float(h) + __bfloat162float(bh)) + (long long)__double2hiint(d) +
          __double2loint(d);
}

// Every rounding suffix of a rounded arithmetic intrinsic, with register, immediate and
// parameter operands.
#define A4(F, x, y) (F##_rn(x, y) + F##_rz(x, y) + F##_rd(x, y) + F##_ru(x, y))
#define A3(F, x, y, k, p) (A4(F, x, y) + A4(F, x, k) + A4(F, x, p))
#define F4(F, x, y, z) (F##_rn(x, y, z) + F##_rz(x, y, z) + F##_rd(x, y, z) + F##_ru(x, y, z))

extern "C" __global__ void probe_rounded(const float *fin, const double *din, float *fout,
                                         double *dout, float fp, double dp, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = fin[2 * i], b = fin[2 * i + 1];
  double x = din[2 * i], y = din[2 * i + 1];
  fout[8 * i + 0] = A3(__fadd, a, b, 1.5f, fp) + A3(__fsub, a, b, 0.75f, fp);
  fout[8 * i + 1] = A3(__fmul, a, b, 3.0f, fp) + A3(__fdiv, a, b, 5.0f, fp);
  fout[8 * i + 2] = F4(__fmaf, a, b, fp) + F4(__fmaf, a, 2.5f, b) + F4(__fmaf, fp, a, -1.0f);
  fout[8 * i + 3] = __frcp_rn(a) + __frcp_rz(a) + __frcp_rd(a) + __frcp_ru(a) + __fsqrt_rn(b) +
                    __fsqrt_rz(b) + __fsqrt_rd(b) + __fsqrt_ru(b) + __frsqrt_rn(b);
  fout[8 * i + 4] = __fmul_rz(a, fp) * __fadd_rd(b, fp) + __saturatef(a * fp) + __fdividef(a, fp);
  dout[4 * i + 0] = A3(__dadd, x, y, 1.5, dp) + A3(__dsub, x, y, 0.75, dp);
  dout[4 * i + 1] = A3(__dmul, x, y, 3.0, dp) + A3(__ddiv, x, y, 5.0, dp);
  dout[4 * i + 2] = F4(__fma, x, y, dp) + F4(__fma, x, 2.5, y) + F4(__fma, dp, x, -1.0);
  dout[4 * i + 3] = __drcp_rn(x) + __drcp_rz(x) + __drcp_rd(x) + __drcp_ru(x) + __dsqrt_rn(y) +
                    __dsqrt_rz(y) + __dsqrt_rd(y) + __dsqrt_ru(y);
}

// Packed half-precision operations whose operands are one half broadcast (`R.H0_H0`,
// `R.H1_H1`) or a pair of immediates, in f16x2 and bf16x2.
extern "C" __global__ void probe_halves(const unsigned *in, unsigned *out, unsigned p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2 a = __halves2half2(__ushort_as_half(in[2 * i] & 0xffff), __ushort_as_half(in[2 * i] >> 16));
  __half2 b = __halves2half2(__ushort_as_half(in[2 * i + 1] & 0xffff), __ushort_as_half(in[2 * i + 1] >> 16));
  __half2 c = *(__half2 *)&p;
  __half2 lo = __low2half2(b), hi = __high2half2(b);
  __half2 k = __floats2half2_rn(2.0f, -0.25f), k2 = __floats2half2_rn(0.5f, 0.5f);
  __half2 r0 = __hfma2(a, lo, k), r1 = __hfma2(a, hi, k2), r2 = __hmul2(a, lo), r3 = __hadd2(hi, a);
  __half2 r4 = __hfma2(lo, k, c), r5 = __hsub2(a, hi), r6 = __hmax2(a, lo), r7 = __hmin2(hi, k);
  __half2 r8 = __hfma2_sat(a, hi, k), r9 = __hmul2_sat(lo, k2), r10 = __hfma2_relu(a, lo, c);
  unsigned *o = out + 16 * i;
  __half2 rs[11] = {r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10};
  for (int j = 0; j < 11; j++) o[j] = *(unsigned *)&rs[j];
#if __CUDA_ARCH__ >= 800
  __nv_bfloat162 ba = *(__nv_bfloat162 *)&in[2 * i], bb = *(__nv_bfloat162 *)&in[2 * i + 1];
  __nv_bfloat162 blo = __low2bfloat162(bb), bhi = __high2bfloat162(bb);
  __nv_bfloat162 bk = __floats2bfloat162_rn(2.0f, -0.25f), bc = *(__nv_bfloat162 *)&p;
  __nv_bfloat162 s0 = __hfma2(ba, blo, bk), s1 = __hmul2(ba, bhi), s2 = __hadd2(blo, bc);
  __nv_bfloat162 s3 = __hmax2(ba, bhi), s4 = __hfma2(bhi, bk, bc);
  __nv_bfloat162 ss[5] = {s0, s1, s2, s3, s4};
  for (int j = 0; j < 5; j++) o[11 + j] = *(unsigned *)&ss[j];
#endif
}

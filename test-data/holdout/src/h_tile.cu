// Holdout kernel: a shared-memory tile transpose (dynamic shared memory, float4 loads,
// read-only loads), block-wide predicates (__syncthreads_count/_or/_and), warp votes, and SIMD
// video and 24-bit multiply intrinsics.
extern "C" __global__ void h_tile(const float4 *in, float *out, unsigned *misc, int n) {
  extern __shared__ float tile[];  // 16 x 17 floats
  unsigned t = threadIdx.x;
  unsigned r = t >> 4, c = t & 15;
  int base = blockIdx.x * 64;
  float4 v = __ldg(&in[(base + t) & 255]);
  for (unsigned rr = r; rr < 16; rr += blockDim.x >> 4) {
    tile[rr * 17 + c] = (rr & 1) ? v.x + v.y : v.z - v.w;
  }
  __syncthreads();
  int cnt = __syncthreads_count(v.x > 0.0f);
  int any = __syncthreads_or(v.y > 7.0f);
  int all = __syncthreads_and(v.z > -9.0f);
  int i = blockIdx.x * blockDim.x + t;
  if (i >= n) return;
  out[2 * i] = tile[c * 17 + (r & 15)];
  out[2 * i + 1] = fminf(tile[(r & 15) * 17 + c], fmaxf(v.x, v.w));
  unsigned a = __float_as_uint(v.x), b = __float_as_uint(v.y);
  unsigned ball = __ballot_sync(__activemask(), a & 1u);
  unsigned w = __vadd2(a, b) ^ __vabsdiffu4(a, b) ^ __vmaxu4(a, b) ^ __vsub4(b, a);
  misc[6 * i + 0] = cnt * 65536 + any * 256 + all;
  misc[6 * i + 1] = ball ^ (unsigned)__any_sync(0xffffffffu, b > a) << 31;
  misc[6 * i + 2] = w;
  misc[6 * i + 3] = __sad(a & 0xffff, b & 0xffff, 7u) + __usad(a >> 16, b >> 16, 3u);
  misc[6 * i + 4] = __umul24(a, b) ^ (unsigned)__mul24((int)a, (int)b) ^ __umulhi(a, b);
  misc[6 * i + 5] = (unsigned)__ffs(a) + (unsigned)__ffsll((long long)b << 20) + __uhadd(a, b) + __urhadd(a, b);
}

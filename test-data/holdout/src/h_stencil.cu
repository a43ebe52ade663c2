// Holdout kernel: a 5-point stencil with halo loads, fast-math intrinsics, integer division
// by runtime values and clamped indexing.
extern "C" __global__ void h_stencil(const float *in, float *out, int w, int h, float k) {
  __shared__ float tile[18][18];
  int x = blockIdx.x * 16 + threadIdx.x % 16, y = blockIdx.y * 16 + threadIdx.x / 16;
  int cx = min(max(x, 0), w - 1), cy = min(max(y, 0), h - 1);
  tile[threadIdx.x / 16 + 1][threadIdx.x % 16 + 1] = in[cy * w + cx];
  if (threadIdx.x < 16) {
    tile[0][threadIdx.x + 1] = in[max(cy - 1, 0) * w + cx];
    tile[17][threadIdx.x + 1] = in[min(cy + 16, h - 1) * w + cx];
  }
  __syncthreads();
  int ty = threadIdx.x / 16 + 1, tx = threadIdx.x % 16 + 1;
  float c = tile[ty][tx];
  float s = tile[ty - 1][tx] + tile[ty + 1][tx] + tile[ty][max(tx - 1, 1)] + tile[ty][min(tx + 1, 16)];
  float r = c + k * (s - 4.0f * c);
  r = __fmul_rn(r, __expf(-fabsf(r) * 0.01f)) + __sinf(r) * 1e-3f;
  if (x < w && y < h) out[y * w + x] = r / (1 + (x % (w / 3 + 1)));
}
extern "C" __global__ void h_idiv(const int *a, const int *b, int *q, unsigned *uq, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int d = b[i] | 1;
  q[i] = a[i] / d + a[i] % d;
  uq[i] = (unsigned)a[i] / (unsigned)d - (unsigned)a[i] % 7u;
}

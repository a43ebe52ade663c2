#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;
__global__ void wmma_tile(const half* a, const half* b, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
__global__ void tex_fetch(cudaTextureObject_t t, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i) + tex2D<float>(t, i * 0.5f, 0.25f);
}
__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__global__ void recursive(int* out) { out[threadIdx.x] = fib(threadIdx.x % 12); }
__device__ double atomic_max_double(double* a, double v) {
  unsigned long long* p = (unsigned long long*)a;
  unsigned long long old = *p, assumed;
  do { assumed = old; if (__longlong_as_double(assumed) >= v) break;
       old = atomicCAS(p, assumed, __double_as_longlong(v)); } while (assumed != old);
  return __longlong_as_double(old);
}
__global__ void votes(const int* in, int* out, double* m) {
  int v = in[threadIdx.x];
  unsigned b = __ballot_sync(0xffffffff, v > 0);
  unsigned mm = __match_any_sync(0xffffffff, v);
  __nanosleep(100);
  out[threadIdx.x] = __popc(b) + __popc(mm) + __all_sync(0xffffffff, v != 3);
  atomic_max_double(m, (double)v);
}

#include <cuda/barrier>
#include <cuda_pipeline.h>
__global__ void async_copy(const float4* in, float4* out) {
  __shared__ float4 tile[128];
  __pipeline_memcpy_async(&tile[threadIdx.x], &in[blockIdx.x * 128 + threadIdx.x], sizeof(float4));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[blockIdx.x * 128 + threadIdx.x] = tile[127 - threadIdx.x];
}
__global__ void barrier_kernel(int* data) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  data[threadIdx.x] *= 2;
  bar.arrive_and_wait();
  data[threadIdx.x] += data[(threadIdx.x + 1) % blockDim.x];
}

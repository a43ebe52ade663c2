#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(2, 1, 1) cluster_kernel(int* out) {
  __shared__ int sm[64];
  cg::cluster_group cl = cg::this_cluster();
  sm[threadIdx.x % 64] = threadIdx.x;
  cl.sync();
  int* remote = cl.map_shared_rank(sm, (cl.block_rank() + 1) % 2);
  out[blockIdx.x * blockDim.x + threadIdx.x] = remote[threadIdx.x % 64];
  cl.sync();
}
__global__ void __launch_bounds__(256) grid_sync(int* data) {
  cg::grid_group g = cg::this_grid();
  data[g.thread_rank()] += 1;
  g.sync();
  data[g.thread_rank()] += data[(g.thread_rank() + 1) % g.size()];
}

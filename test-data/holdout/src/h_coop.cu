// Holdout kernel: cooperative groups tiles and reductions, warp match/reduce intrinsics,
// dynamic shared memory, and printf.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>
namespace cg = cooperative_groups;
extern "C" __global__ void h_tiles(const int *in, int *out, int n) {
  extern __shared__ int dyn[];
  cg::thread_block b = cg::this_thread_block();
  cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(b);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int s = cg::reduce(t16, v, cg::plus<int>());
  int m = cg::reduce(t16, v, cg::greater<int>());
  dyn[threadIdx.x] = s ^ m;
  b.sync();
  unsigned peers = __match_any_sync(0xffffffffu, v & 7);
  if (i < n) out[i] = dyn[(threadIdx.x + 5) % blockDim.x] + __popc(peers) + t16.thread_rank();
  if (i == 0) printf("h_tiles n=%d first=%d\n", n, out[0]);
}

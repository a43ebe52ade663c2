extern __device__ float ext_fn(float);
extern __device__ int ext_table[];
__global__ void uses_extern(float* x) { x[threadIdx.x] = ext_fn(x[threadIdx.x]) + ext_table[threadIdx.x]; }

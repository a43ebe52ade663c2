// y[i] = a * x[i] + y[i] — the PTX next to this file is nvcc 13.0.88's output:
//   ../shared/tools/nvcc.sh -ptx -arch=sm_80 saxpy.cu -o saxpy.ptx
extern "C" __global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

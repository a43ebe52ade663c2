template <typename T, int N> __global__ void stencil(const T* a, T* b, int n) {
  extern __shared__ unsigned char smem[];
  T* s = reinterpret_cast<T*>(smem);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? a[i] : T(0);
  __syncthreads();
  T acc = 0;
  #pragma unroll
  for (int k = -N; k <= N; ++k) { int j = (int)threadIdx.x + k; if (j >= 0 && j < (int)blockDim.x) acc += s[j]; }
  if (i < n) b[i] = acc / T(2 * N + 1);
}
template __global__ void stencil<float, 3>(const float*, float*, int);
template __global__ void stencil<double, 5>(const double*, double*, int);
template __global__ void stencil<int, 1>(const int*, int*, int);
struct Big { float v[40]; };
__global__ void big_param(Big p, float* out) { float s = 0; for (int i = 0; i < 40; ++i) s += p.v[i] * (threadIdx.x + i); out[threadIdx.x] = s; }
__global__ void spill(float* out, int k) {
  float r[96];
  for (int i = 0; i < 96; ++i) r[i] = out[(i * k) & 1023];
  float s = 0;
  for (int i = 0; i < 96; ++i) s += r[(i * 7 + k) % 96] * r[i];
  out[threadIdx.x] = s;
}

#include <cstdio>
#include <cassert>

// Prints when the element is large: every conversion kind, a string in global memory and one
// in local memory, twice per thread; stores printf's result.
__global__ void print(int *a, float f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = a[i];
  int r = 0;
  if (v > 20) {
    char s[4] = {'x', 'y', (char)('0' + (v & 7)), 0};
    r = printf("%d: a=%d f=%f l=%ld %s %c|%5.2f|%*d|%s|%p %%\n", i, v, f, (long)v * 100000000000L,
               "str", 'A' + (v & 15), (double)f * v, 3, v & 7, s, a);
    for (int j = 0; j < 2; j++) r += printf("j=%d %lld %hd\n", j, (long long)v << j, (short)v);
  }
  a[i] = r * 1000 + v;
}

// Fails the assertion for elements equal to 7.
__global__ void check(int *a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(a[i] != 7);
  a[i] += 1;
}

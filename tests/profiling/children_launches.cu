// The cubin the children collector's cubin reader is tested on (children_test.cpp): kernels that
// launch kernels, from the host's grid and from a device-launched one, on three kinds of stream,
// and one that launches itself. Compiled and device-linked to a cubin at build time, never run.

__global__ void leaf(int* out, int n) {
  if (threadIdx.x == 0 && out != nullptr) out[blockIdx.x] = n;
}

__global__ void mid(int* out, int n) {
  if (threadIdx.x == 0 && n > 0) leaf<<<n, 32>>>(out, n);
}

__global__ void root(int* out, int n) {
  if (threadIdx.x == 0) {
    mid<<<1, 32>>>(out, n);
    leaf<<<2, 64, 0, cudaStreamTailLaunch>>>(out, n);
  }
  if (threadIdx.x == 1) mid<<<1, 32, 0, cudaStreamFireAndForget>>>(out, n + 1);
}

__global__ void self(int depth) {
  if (threadIdx.x == 0 && depth > 0) self<<<1, 32>>>(depth - 1);
}

// The textbook tiled SGEMM (the sgemm-tiled preset): the kernel the speed targets are stated for.
#define TILE 32
__global__ void sgemm(const float *A, const float *B, float *C, int N) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k = 0; k < N / TILE; k++) {
        As[ty][tx] = A[row * N + k * TILE + tx];
        Bs[ty][tx] = B[(k * TILE + ty) * N + col];
        __syncthreads();
        for (int j = 0; j < TILE; j++)
            acc += As[ty][j] * Bs[j][tx];
        __syncthreads();
    }
    C[row * N + col] = acc;
}

// The tiled transpose with its tile's padding as a template argument: the sweep in docs/warpscope.ipynb and
// tests/python/test_warpscope.py analyse transpose<32, PAD> for PAD = 0..3.
template <int TILE, int PAD>
__global__ void transpose(float *out, const float *in, int n) {
    __shared__ float tile[TILE][TILE + PAD];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

template __global__ void transpose<32, 0>(float *, const float *, int);

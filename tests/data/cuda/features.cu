#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define IDX(r, c, ld) ((r) * (ld) + (c))
#ifdef WIDE
typedef float4 elem_t;
#else
#define SCALE 1
#endif
#if __CUDA_ARCH__ >= 800
#define STRIDE 2
#else
#define STRIDE 1
#endif

template <typename T> __device__ __forceinline__ T load(const T *p, int i) { return p[i]; }
template <> __device__ int load<int>(const int *p, int i) { return p[2 * i]; }

__device__ int twice(int x) { return 2 * x; }

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) k(float *out, const float *in, int *cnt, int n)
{
    cg::thread_block cta = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cta);
    unsigned r = cta.thread_rank();
    float v = load(in, r * STRIDE);
    int w = load(cnt, (int)warp.thread_rank());
    out[IDX(warp.meta_group_rank(), twice(warp.thread_rank()), 64)] = v + w;
    if (r == 0) { atomicAdd(cnt, 1); printf("done %d\n", n); }
    assert(n > 0);
}

int main()
{
    float *d_out, *d_in; int *d_cnt;
    int n = 1 << 10;
    const int bx = 32;
    dim3 block(bx, 2);
    k<64><<<n / 128, block>>>(d_out, d_in, d_cnt, n);
    return 0;
}

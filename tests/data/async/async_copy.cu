// Written for warpscope's tests (not upstream code): one warp copies a 32 x 64 tile of halves from global to
// shared memory with cp.async, 16 bytes per thread, then reads it with ldmatrix.x4, one row address per lane
// (rows 0-31 of column 0). docs/model.md#ldmatrix-and-stmatrix: rows 128 bytes apart are 8-way, x4 = 32 wavefronts; with the 128-byte
// swizzle (byte x -> x ^ ((x >> 3) & 0x70), CuTe Swizzle<3,4,3>) the same rows are conflict-free: 4.
#include <cuda_pipeline.h>

#define ROWS 32
#define COLS 64

__global__ void tile_plain(const unsigned short *g, unsigned *out) {
    __shared__ unsigned short tile[ROWS * COLS];
    for (int i = threadIdx.x; i < ROWS * COLS / 8; i += 32) {
        unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&tile[i * 8]));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(g + i * 8));
    }
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    unsigned a, b, c, d;
    unsigned row = static_cast<unsigned>(__cvta_generic_to_shared(&tile[threadIdx.x * COLS]));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                 : "r"(row));
    out[threadIdx.x] = a ^ b ^ c ^ d;
}

__global__ void tile_swizzled(const unsigned short *g, unsigned *out) {
    __shared__ unsigned short tile[ROWS * COLS];
    for (int i = threadIdx.x; i < ROWS * COLS / 8; i += 32) {
        int x = i * 16;
        int s = x ^ ((x >> 3) & 0x70);
        __pipeline_memcpy_async(&tile[s / 2], g + i * 8, 16);
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    unsigned a, b, c, d;
    int x = threadIdx.x * COLS * 2;
    int s = x ^ ((x >> 3) & 0x70);
    unsigned row = static_cast<unsigned>(__cvta_generic_to_shared(&tile[s / 2]));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                 : "r"(row));
    out[threadIdx.x] = a ^ b ^ c ^ d;
}

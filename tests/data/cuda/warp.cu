__global__ void k(int *out)
{
    int t = threadIdx.x;
    int a = __shfl_sync(0xffffffff, t * 32, 0);
    out[a] = 1;
    int b = __shfl_xor_sync(0xffffffff, t, 16);
    out[b] = 2;
    unsigned m = __ballot_sync(0xffffffff, t < 8);
    out[__popc(m) * t] = 3;
    int c = __shfl_down_sync(0xffffffff, t, 1, 16);
    out[c * 32] = 4;
    float4 f = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
    reinterpret_cast<float4 *>(out)[t] = f;
    out[sizeof(f) / 4 * t] = 5;
    auto g = __activemask();
    out[__popc(g) + t] = 6;
}

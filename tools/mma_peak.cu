/* mma_peak.cu — how fast this GPU runs mma.sync m16n8k16 (bf16 in, fp32
 * accumulate), the instruction flash_mma is built on: every warp of a full
 * grid issues independent chains of mma's on register operands, nothing
 * else; TFLOP/s from CUDA events over a few repetitions, best reported.
 * This is the ceiling for an mma.sync kernel, below the wgmma rate that
 * cuBLAS reaches on Hopper. usage: build/mma_peak */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#define CHAINS 8      /* independent accumulators per warp: hides mma latency */
#define ITERS 4096    /* mma's per chain */
#define WARPS_PER_BLOCK 8

static __global__ void mma_loop(float *sink, uint32_t seed)
{
    uint32_t a[4] = {seed, seed ^ 1u, seed ^ 2u, seed ^ 3u}, b0 = seed * 7u, b1 = seed * 11u;
    float d[CHAINS][4] = {};
    for (int i = 0; i < ITERS; i++) {
#pragma unroll
        for (int c = 0; c < CHAINS; c++)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                         : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
    float acc = 0.f;
    for (int c = 0; c < CHAINS; c++) acc += d[c][0] + d[c][1] + d[c][2] + d[c][3];
    if (acc == 1.2345f) *sink = acc; /* keeps the loop alive; practically never stores */
}

static int check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return 0;
    fprintf(stderr, "mma_peak: %s: %s\n", what, cudaGetErrorString(e));
    return 1;
}

int main(void)
{
    int sms = 0;
    float *sink;
    cudaEvent_t start, stop;
    if (check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "device") ||
        check(cudaMalloc((void **)&sink, sizeof *sink), "cudaMalloc") ||
        check(cudaEventCreate(&start), "event") || check(cudaEventCreate(&stop), "event"))
        return 1;
    const int blocks = sms * 4; /* 32 warps per SM */
    const double flops = 2.0 * 16 * 8 * 16 * (double)CHAINS * ITERS * blocks * WARPS_PER_BLOCK;
    double best = 0;
    for (int rep = 0; rep < 6; rep++) {
        float ms = 0;
        cudaEventRecord(start);
        mma_loop<<<blocks, WARPS_PER_BLOCK * 32>>>(sink, 12345u + rep);
        cudaEventRecord(stop);
        if (check(cudaGetLastError(), "launch") || check(cudaEventSynchronize(stop), "sync") ||
            check(cudaEventElapsedTime(&ms, start, stop), "elapsed"))
            return 1;
        const double tflops = flops / (ms * 1e-3) / 1e12;
        if (rep > 0 && tflops > best) best = tflops; /* rep 0 is warm-up */
    }
    printf("mma.sync m16n8k16 bf16->f32: %.1f TFLOP/s (%d SMs, %d warps/SM)\n", best, sms,
           4 * WARPS_PER_BLOCK);
    return 0;
}

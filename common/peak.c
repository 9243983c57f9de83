/* peak.c — measuring the GEMM, copy and read ceilings (peak.h) with CUDA events:
 * warm-up, then the median of repeated timed calls on random data (a product
 * of zeros runs faster than a real one). */
#include "peak.h"
#include "errors.h"
#include "gpu_util.h"
#include "stats.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#define GEMM_N 8192
#define COPY_BYTES ((size_t)1 << 31) /* 2 GiB each way: far past the L2 */
#define WARMUP 3
#define REPS 15

/* Median milliseconds of REPS timed calls of `op` after WARMUP untimed ones. */
static int time_median(int (*op)(void *), void *arg, cudaStream_t s, double *ms)
{
    cudaEvent_t a, b;
    CUDA_TRY(cudaEventCreate(&a));
    CUDA_TRY(cudaEventCreate(&b));
    double samples[REPS];
    int rc = ATTN_OK;
    for (int i = 0; i < WARMUP + REPS && rc == ATTN_OK; i++) {
        float f = 0;
        if (cudaEventRecord(a, s) != cudaSuccess || (rc = op(arg)) != ATTN_OK ||
            cudaEventRecord(b, s) != cudaSuccess || cudaEventSynchronize(b) != cudaSuccess ||
            cudaEventElapsedTime(&f, a, b) != cudaSuccess) {
            if (rc == ATTN_OK)
                rc = ATTN_FAIL(ATTN_ERR, "timing a peak: %s", cudaGetErrorString(cudaGetLastError()));
        }
        if (i >= WARMUP) samples[i - WARMUP] = f;
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    if (rc != ATTN_OK) return rc;
    struct sample_stats st;
    ATTN_TRY(stats_summarize(samples, REPS, &st));
    *ms = st.median;
    return ATTN_OK;
}

struct gemm_args { cublasHandle_t h; void *a, *b, *c; };

static int gemm_op(void *p)
{
    struct gemm_args *g = p;
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_TRY(cublasGemmEx(g->h, CUBLAS_OP_T, CUBLAS_OP_N, GEMM_N, GEMM_N, GEMM_N, &one, g->a,
                            CUDA_R_16BF, GEMM_N, g->b, CUDA_R_16BF, GEMM_N, &zero, g->c,
                            CUDA_R_16BF, GEMM_N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return ATTN_OK;
}

struct copy_args { void *dst, *src; cudaStream_t s; };

static int copy_op(void *p)
{
    struct copy_args *c = p;
    CUDA_TRY(cudaMemcpyAsync(c->dst, c->src, COPY_BYTES, cudaMemcpyDeviceToDevice, c->s));
    return ATTN_OK;
}

static int read_op(void *p)
{
    struct copy_args *c = p;
    return gpu_read_stream(c->src, COPY_BYTES, (attn_stream_t)c->s);
}

static int measure(struct peaks *out, cudaStream_t s, void **bufs)
{
    const size_t n2 = (size_t)GEMM_N * GEMM_N;
    for (int i = 0; i < 3; i++) CUDA_TRY(cudaMalloc(&bufs[i], n2 * 2));
    CUDA_TRY(cudaMalloc(&bufs[3], COPY_BYTES));
    CUDA_TRY(cudaMalloc(&bufs[4], COPY_BYTES));
    ATTN_TRY(gpu_fill_random(bufs[0], n2, ATTN_BF16, 11, (attn_stream_t)s));
    ATTN_TRY(gpu_fill_random(bufs[1], n2, ATTN_BF16, 12, (attn_stream_t)s));
    ATTN_TRY(gpu_fill_random(bufs[4], COPY_BYTES / 2, ATTN_BF16, 13, (attn_stream_t)s));

    struct gemm_args g = {.a = bufs[0], .b = bufs[1], .c = bufs[2]};
    CUBLAS_TRY(cublasCreate(&g.h));
    double ms = 0;
    int rc = cublasSetStream(g.h, s) == CUBLAS_STATUS_SUCCESS
                 ? time_median(gemm_op, &g, s, &ms)
                 : ATTN_FAIL(ATTN_ERR, "cublasSetStream failed");
    cublasDestroy(g.h);
    ATTN_TRY(rc);
    out->gemm_n = GEMM_N;
    out->gemm_tflops = 2.0 * GEMM_N * (double)GEMM_N * GEMM_N / (ms * 1e-3) / 1e12;

    struct copy_args c = {.dst = bufs[3], .src = bufs[4], .s = s};
    ATTN_TRY(time_median(copy_op, &c, s, &ms));
    out->copy_bytes = COPY_BYTES;
    out->copy_gbps = 2.0 * COPY_BYTES / (ms * 1e-3) / 1e9;
    ATTN_TRY(time_median(read_op, &c, s, &ms));
    out->read_gbps = COPY_BYTES / (ms * 1e-3) / 1e9;
    return ATTN_OK;
}

int peak_measure(struct peaks *out, attn_stream_t stream)
{
    void *bufs[5] = {0};
    int rc = measure(out, (cudaStream_t)stream, bufs);
    for (int i = 0; i < 5; i++) cudaFree(bufs[i]);
    (void)cudaGetLastError();
    return rc;
}

/* gpu_util.cu — random fill, poison and the float32 reference attention
 * (gpu_util.h). The reference favours obviousness over speed: one block per
 * query row, scores kept in shared memory, exact softmax; dense batches and
 * packed ragged ones (attn.h) each have their kernel, sharing the row code. */
#include "gpu_util.h"
#include "errors.h"
#include "problem.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

static __device__ float load_f(const __nv_bfloat16 *p, size_t i) { return __bfloat162float(p[i]); }
static __device__ float load_f(const __half *p, size_t i) { return __half2float(p[i]); }
static __device__ void store_f(__nv_bfloat16 *p, size_t i, float x) { p[i] = __float2bfloat16(x); }
static __device__ void store_f(__half *p, size_t i, float x) { p[i] = __float2half(x); }

static __device__ uint64_t mix64(uint64_t x)
{ /* splitmix64's finalizer */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

template <typename T>
static __global__ void fill_random_kernel(T *dst, size_t n, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ull + i);
        float u = (float)(h >> 40) * (1.0f / 16777216.0f); /* [0, 1) */
        store_f(dst, i, 2.0f * u - 1.0f);
    }
}

/* N(0, sigma²) by Box–Muller from two draws of the same hash: u1 in (0, 1]
 * so that the logarithm is finite. */
template <typename T>
static __global__ void fill_normal_kernel(T *dst, size_t n, uint64_t seed, float sigma)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ull + i);
        float u1 = (float)((h >> 40) + 1) * (1.0f / 16777216.0f);      /* (0, 1] */
        float u2 = (float)((h >> 16) & 0xffffff) * (1.0f / 16777216.0f); /* [0, 1) */
        store_f(dst, i, sigma * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
    }
}

extern "C" int gpu_fill_normal(void *dst, size_t n, enum attn_dtype t, uint64_t seed, float sigma,
                               attn_stream_t s)
{
    unsigned blocks = (unsigned)((n + 255) / 256 < 65536 ? (n + 255) / 256 : 65536);
    if (blocks == 0) return ATTN_OK;
    if (t == ATTN_FP16) fill_normal_kernel<<<blocks, 256, 0, s>>>((__half *)dst, n, seed, sigma);
    else fill_normal_kernel<<<blocks, 256, 0, s>>>((__nv_bfloat16 *)dst, n, seed, sigma);
    LAUNCH_TRY("fill_normal");
    return ATTN_OK;
}

extern "C" int gpu_fill_random(void *dst, size_t n, enum attn_dtype t, uint64_t seed,
                               attn_stream_t s)
{
    unsigned blocks = (unsigned)((n + 255) / 256 < 65536 ? (n + 255) / 256 : 65536);
    if (blocks == 0) return ATTN_OK;
    if (t == ATTN_FP16) fill_random_kernel<<<blocks, 256, 0, s>>>((__half *)dst, n, seed);
    else fill_random_kernel<<<blocks, 256, 0, s>>>((__nv_bfloat16 *)dst, n, seed);
    LAUNCH_TRY("fill_random");
    return ATTN_OK;
}

extern "C" int gpu_fill_input(void *dst, size_t n, const struct attn_problem *p, uint64_t seed,
                              attn_stream_t s)
{
    if (p->init_sigma > 0) return gpu_fill_normal(dst, n, p->dtype, seed, p->init_sigma, s);
    return gpu_fill_random(dst, n, p->dtype, seed, s);
}

extern "C" int gpu_poison(void *dst, size_t bytes, attn_stream_t s)
{
    CUDA_TRY(cudaMemsetAsync(dst, 0xff, bytes, s));
    return ATTN_OK;
}

static __device__ uint64_t globaltimer_ns(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static __global__ void block_kernel(volatile int *release, uint64_t timeout_ns)
{
    const uint64_t t0 = globaltimer_ns();
    while (!*release && globaltimer_ns() - t0 < timeout_ns) __nanosleep(1000);
}

extern "C" int gpu_block_stream(volatile int *release, double timeout_ms, attn_stream_t s)
{
    block_kernel<<<1, 1, 0, s>>>(release, (uint64_t)(timeout_ms * 1e6));
    LAUNCH_TRY("block_kernel");
    return ATTN_OK;
}

/* Every thread runs a dependent FMA chain until its SM has counted `cycles`
 * clock cycles: work that, like a compute-bound kernel, takes longer when the
 * SM clock falls, and loads every SM, unlike a one-thread timer spin. The
 * result is stored only if impossible, so the chain is not optimised away. */
static __global__ void busy_kernel(long long cycles, float *sink)
{
    const long long t0 = clock64();
    float x = threadIdx.x * 1e-3f, y = 1.0f + 1e-7f;
    while (clock64() - t0 < cycles)
        for (int i = 0; i < 64; i++) x = fmaf(x, y, 1e-7f);
    if (x == -1.0f) *sink = x;
}

extern "C" int gpu_busy_cycles(long long cycles, attn_stream_t s)
{
    static int sms; /* one device per process */
    if (!sms) {
        int dev = 0;
        CUDA_TRY(cudaGetDevice(&dev));
        CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    }
    busy_kernel<<<sms, 128, 0, s>>>(cycles, NULL);
    LAUNCH_TRY("busy_kernel");
    return ATTN_OK;
}

#define REF_THREADS 128

static __device__ float block_reduce(float x, bool is_max, float *scratch)
{
    for (int off = 16; off; off >>= 1) {
        float y = __shfl_xor_sync(0xffffffffu, x, off);
        x = is_max ? fmaxf(x, y) : x + y;
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads(); /* scratch may still be read by a previous reduction */
    if (lane == 0) scratch[warp] = x;
    __syncthreads();
    x = scratch[0];
    for (int w = 1; w < REF_THREADS / 32; w++) x = is_max ? fmaxf(x, scratch[w]) : x + scratch[w];
    return x;
}

#define REF_CHUNK 2048 /* scores held in shared memory at a time */

#define REF_MAX_DIM ATTN_HEAD_DIM_MAX /* head_dim: qrow[] and the REF_MAX_DIM / REF_THREADS accumulators */
#define REF_MAX_GRID_Y 65535u

/* Row i of one query head: its Q and O rows r at base + r·qstride, its K and
 * V rows at kvbase + r·kvstride (strides head_dim when dense, heads·head_dim
 * and kv_heads·head_dim in a packed THD batch); S keys (its sequence's
 * length), the first i + 1 of them when causal. Keys are taken a chunk at a
 * time: the warps compute the chunk's scores into shared memory, the block
 * rescales its running sum and accumulators to the new row max (online
 * softmax, exact up to float32 rounding), then each thread accumulates P·V
 * for its columns. */
template <typename T>
static __device__ void reference_row(const T *q, const T *k, const T *v, float *o, int S, int D,
                                     size_t qstride, size_t kvstride, int causal, float scale,
                                     size_t base, size_t kvbase, int i, float *qrow, float *chunk,
                                     float *scratch)
{
    const int keys = causal ? i + 1 : S;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = REF_THREADS / 32;
    constexpr int NACC = REF_MAX_DIM / REF_THREADS; /* columns tid, tid + 128, ... */

    __syncthreads(); /* the previous row's qrow[] is read no more */
    for (int d = threadIdx.x; d < D; d += REF_THREADS) qrow[d] = load_f(q, base + (size_t)i * qstride + d);
    __syncthreads();
    float m = -INFINITY, sum = 0, acc[NACC] = {};
    for (int j0 = 0; j0 < keys; j0 += REF_CHUNK) {
        const int n = min(REF_CHUNK, keys - j0);
        for (int j = warp; j < n; j += warps) {
            const size_t krow = kvbase + (size_t)(j0 + j) * kvstride;
            float dot = 0;
            for (int d = lane; d < D; d += 32) dot += qrow[d] * load_f(k, krow + d);
            for (int off = 16; off; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
            if (lane == 0) chunk[j] = dot * scale;
        }
        float cmax = -INFINITY;
        __syncthreads();
        for (int j = threadIdx.x; j < n; j += REF_THREADS) cmax = fmaxf(cmax, chunk[j]);
        const float m_new = fmaxf(m, block_reduce(cmax, true, scratch));
        float csum = 0;
        for (int j = threadIdx.x; j < n; j += REF_THREADS) {
            chunk[j] = expf(chunk[j] - m_new);
            csum += chunk[j];
        }
        csum = block_reduce(csum, false, scratch); /* its barriers publish chunk[] */
        const float rescale = expf(m - m_new);     /* 0 on the first chunk */
        sum = sum * rescale + csum;
        m = m_new;
        for (int c = 0; c < NACC; c++) {
            const int d = threadIdx.x + c * REF_THREADS;
            if (d >= D) continue;
            float a = acc[c] * rescale;
            for (int j = 0; j < n; j++)
                a += chunk[j] * load_f(v, kvbase + (size_t)(j0 + j) * kvstride + d);
            acc[c] = a;
        }
        __syncthreads(); /* chunk[] is rewritten next round */
    }
    for (int c = 0; c < NACC; c++) {
        const int d = threadIdx.x + c * REF_THREADS;
        if (d < D) o[base + (size_t)i * qstride + d] = acc[c] / sum;
    }
}

/* grid: (seq_len, up to 65535): block (i, y) computes row i of query heads
 * y, y + gridDim.y, ... of the batch·heads, head h reading K/V head h / group
 * (= b·kv_heads + h_in_batch / group). */
template <typename T>
static __global__ void reference_kernel(const T *q, const T *k, const T *v, float *o, int S,
                                        int D, int causal, float scale, size_t heads, int group)
{
    __shared__ float qrow[REF_MAX_DIM], chunk[REF_CHUNK], scratch[REF_THREADS / 32];
    for (size_t h = blockIdx.y; h < heads; h += gridDim.y)
        reference_row(q, k, v, o, S, D, D, D, causal, scale, h * S * D, h / group * S * D,
                      (int)blockIdx.x, qrow, chunk, scratch);
}

/* A packed (THD) ragged batch. grid: (seq_len, up to 65535): block (i, y)
 * computes row i of (sequence, head) pairs y, y + gridDim.y, ... of the
 * batch·heads, pair y being sequence y / heads, head y % heads (reading K/V
 * head h / group); cu[0..batch] are the sequences' first tokens, cu[batch]
 * the total. A row past its sequence's end is skipped: that depends only on
 * blockIdx, so the whole block skips it together and reference_row's
 * barriers stay uniform. */
template <typename T>
static __global__ void reference_varlen_kernel(const T *q, const T *k, const T *v, float *o,
                                               const int *cu, int batch, int heads, int kv_heads,
                                               int D, int causal, float scale)
{
    __shared__ float qrow[REF_MAX_DIM], chunk[REF_CHUNK], scratch[REF_THREADS / 32];
    const int i = (int)blockIdx.x, group = heads / kv_heads;
    const size_t pairs = (size_t)batch * heads;
    for (size_t y = blockIdx.y; y < pairs; y += gridDim.y) {
        const int b = (int)(y / heads), h = (int)(y % heads);
        const int len = cu[b + 1] - cu[b];
        if (i >= len) continue;
        const size_t base = ((size_t)cu[b] * heads + h) * D;
        const size_t kvbase = ((size_t)cu[b] * kv_heads + h / group) * D;
        reference_row(q, k, v, o, len, D, (size_t)heads * D, (size_t)kv_heads * D, causal, scale,
                      base, kvbase, i, qrow, chunk, scratch);
    }
}

/* Copies the offsets cu[0..batch] onto the stream, runs the ragged kernel
 * and waits for it: the copy and the kernel share the stream (the runner's
 * is non-blocking, so a plain cudaMemcpy on the default stream would not be
 * ordered before the kernel), and the wait lets the caller free both copies
 * of cu. */
static int reference_varlen(const struct attn_problem *p, const void *q, const void *k,
                            const void *v, float *o, const int *cu, int *dcu, cudaStream_t s)
{
    CUDA_TRY(cudaMemcpyAsync(dcu, cu, ((size_t)p->batch + 1) * sizeof *cu,
                             cudaMemcpyHostToDevice, s));
    const size_t pairs = (size_t)p->batch * p->heads;
    dim3 grid((unsigned)p->seq_len, (unsigned)(pairs < REF_MAX_GRID_Y ? pairs : REF_MAX_GRID_Y));
    if (p->dtype == ATTN_FP16)
        reference_varlen_kernel<<<grid, REF_THREADS, 0, s>>>(
            (const __half *)q, (const __half *)k, (const __half *)v, o, dcu, p->batch, p->heads,
            attn_kv_heads(p), p->head_dim, p->causal, p->scale);
    else
        reference_varlen_kernel<<<grid, REF_THREADS, 0, s>>>(
            (const __nv_bfloat16 *)q, (const __nv_bfloat16 *)k, (const __nv_bfloat16 *)v, o, dcu,
            p->batch, p->heads, attn_kv_heads(p), p->head_dim, p->causal, p->scale);
    LAUNCH_TRY("reference_varlen_kernel");
    CUDA_TRY(cudaStreamSynchronize(s));
    return ATTN_OK;
}

/* The ragged batch's cumulative offsets cu[0..batch] on the host: the
 * lengths are read into cu[1..batch], then summed in place. malloc'd; NULL
 * and the error in *rc when the lengths are malformed, or the tokens do not
 * fit the kernel's int offsets. */
static int *varlen_offsets(const struct attn_problem *p, int *rc)
{
    int *cu = (int *)malloc(((size_t)p->batch + 1) * sizeof *cu);
    if (!cu) {
        *rc = ATTN_FAIL(ATTN_ERR, "out of host memory for the GPU reference");
        return NULL;
    }
    *rc = attn_seq_lens(p, cu + 1);
    if (*rc != ATTN_OK) {
        free(cu);
        return NULL;
    }
    long long total = 0;
    cu[0] = 0;
    for (int b = 1; b <= p->batch; b++) {
        total += cu[b];
        if (total > INT_MAX) {
            free(cu);
            *rc = ATTN_FAIL(ATTN_ERR, "GPU reference: %lld+ tokens exceed its int offsets", total);
            return NULL;
        }
        cu[b] = (int)total;
    }
    return cu;
}

extern "C" int gpu_reference_f32(const struct attn_problem *p, const void *q, const void *k,
                                 const void *v, float *o, attn_stream_t s)
{
    if (p->head_dim > REF_MAX_DIM)
        return ATTN_FAIL(ATTN_ERR, "GPU reference supports head_dim <= %d, not %d", REF_MAX_DIM,
                         p->head_dim);
    if (attn_is_varlen(p)) {
        int rc;
        int *cu = varlen_offsets(p, &rc);
        if (!cu) return rc;
        int *dcu = NULL;
        cudaError_t e = cudaMalloc(&dcu, ((size_t)p->batch + 1) * sizeof *dcu);
        if (e != cudaSuccess) {
            free(cu);
            (void)cudaGetLastError(); /* as CUDA_TRY: clear a non-sticky error */
            return ATTN_FAIL(e == cudaErrorMemoryAllocation ? ATTN_ERR_OOM : ATTN_ERR,
                             "cudaMalloc(GPU reference offsets): %s", cudaGetErrorString(e));
        }
        rc = reference_varlen(p, q, k, v, o, cu, dcu, s);
        free(cu); /* the copy is done: staged by cudaMemcpyAsync, or waited for */
        if (rc != ATTN_OK) {
            (void)cudaFree(dcu); /* the first error is the one reported */
            return rc;
        }
        CUDA_TRY(cudaFree(dcu));
        return ATTN_OK;
    }
    const size_t heads = (size_t)p->batch * p->heads;
    const int group = p->heads / attn_kv_heads(p);
    dim3 grid((unsigned)p->seq_len, (unsigned)(heads < REF_MAX_GRID_Y ? heads : REF_MAX_GRID_Y));
    if (p->dtype == ATTN_FP16)
        reference_kernel<<<grid, REF_THREADS, 0, s>>>((const __half *)q, (const __half *)k,
                                                      (const __half *)v, o, p->seq_len,
                                                      p->head_dim, p->causal, p->scale, heads, group);
    else
        reference_kernel<<<grid, REF_THREADS, 0, s>>>(
            (const __nv_bfloat16 *)q, (const __nv_bfloat16 *)k, (const __nv_bfloat16 *)v, o,
            p->seq_len, p->head_dim, p->causal, p->scale, heads, group);
    LAUNCH_TRY("reference_kernel");
    return ATTN_OK;
}

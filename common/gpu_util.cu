/* gpu_util.cu — random fill, poison and the float32 reference attention,
 * forward and backward (gpu_util.h). The forward favours obviousness over
 * speed: one block per query row, scores kept in shared memory, exact
 * softmax; dense batches and packed ragged ones (attn.h) each have their
 * kernel, sharing the row code. The backward must reach long rows and wide
 * heads in seconds, so it works on 64×64 tiles staged in shared memory, one
 * kernel for dQ and one for dK and dV, dense and ragged batches alike. */
#include "gpu_util.h"
#include "errors.h"
#include "problem.h"
#include "reference.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <type_traits>
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

/* Each thread XORs the 16-byte words of its grid-stride share, 4 loads in
 * flight; the sum is stored only if impossible (it would need every word
 * to cancel to a marker), so the loads are not optimised away. STREAMING:
 * ld.global.cs (read once, not kept in L1 or L2 for later: the read
 * ceiling); else ld.global.cg (kept in L2 as any load's line: the L2
 * flush, whose lines must displace what is there). */
template <bool STREAMING> static __device__ __forceinline__ uint4 read16(const uint4 *p)
{
    return STREAMING ? __ldcs(p) : __ldcg(p);
}
template <bool STREAMING>
static __global__ void __launch_bounds__(512) read_stream_kernel(const uint4 *src, size_t n16, unsigned *sink)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (; i + 3 * stride < n16; i += 4 * stride) {
        const uint4 a = read16<STREAMING>(src + i), b = read16<STREAMING>(src + i + stride);
        const uint4 c = read16<STREAMING>(src + i + 2 * stride), d = read16<STREAMING>(src + i + 3 * stride);
        acc.x ^= a.x ^ b.x ^ c.x ^ d.x;
        acc.y ^= a.y ^ b.y ^ c.y ^ d.y;
        acc.z ^= a.z ^ b.z ^ c.z ^ d.z;
        acc.w ^= a.w ^ b.w ^ c.w ^ d.w;
    }
    for (; i < n16; i += stride) {
        const uint4 a = read16<STREAMING>(src + i);
        acc.x ^= a.x, acc.y ^= a.y, acc.z ^= a.z, acc.w ^= a.w;
    }
    if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9e3779b9u && acc.x == 0x7f4a7c15u) *sink = acc.w;
}

/* (gpu_util.h) asked once: a static keeps the answer */
/* The current device's attribute attr into *value, asked once into *cache
 * (one device per process; 0 there means not asked yet). */
static int cached_attribute(int *cache, cudaDeviceAttr attr, int *value)
{
    if (!*cache) {
        int dev = 0;
        CUDA_TRY(cudaGetDevice(&dev));
        CUDA_TRY(cudaDeviceGetAttribute(cache, attr, dev));
    }
    *value = *cache;
    return ATTN_OK;
}

extern "C" int gpu_sm_count(int *sms)
{
    static int count;
    return cached_attribute(&count, cudaDevAttrMultiProcessorCount, sms);
}

extern "C" int gpu_smem_optin(size_t *bytes)
{
    static int optin;
    int v = 0;
    ATTN_TRY(cached_attribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, &v));
    *bytes = (size_t)v;
    return ATTN_OK;
}


/* One grid of 4 CTAs of 512 threads an SM over `bytes` (a multiple of 16). */
template <bool STREAMING> static int read_all(const void *src, size_t bytes, attn_stream_t s, const char *who)
{
    int sms = 0;
    ATTN_TRY(gpu_sm_count(&sms));
    if (bytes % 16) return ATTN_FAIL(ATTN_ERR, "%s: %zu bytes is not a multiple of 16", who, bytes);
    read_stream_kernel<STREAMING><<<sms * 4, 512, 0, s>>>((const uint4 *)src, bytes / 16, NULL);
    LAUNCH_TRY(who);
    return ATTN_OK;
}

extern "C" int gpu_read_stream(const void *src, size_t bytes, attn_stream_t s)
{
    return read_all<true>(src, bytes, s, "gpu_read_stream");
}

extern "C" int gpu_flush_l2(const void *buf, size_t bytes, attn_stream_t s)
{
    return read_all<false>(buf, bytes, s, "gpu_flush_l2");
}

extern "C" int gpu_busy_cycles(long long cycles, attn_stream_t s)
{
    int sms = 0;
    ATTN_TRY(gpu_sm_count(&sms));
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
 * length), the first diag + i + 1 of them when causal (diag: S − q_len for
 * a decode, whose queries are the sequence's last; else 0). Keys are taken a chunk at a
 * time: the warps compute the chunk's scores into shared memory, the block
 * rescales its running sum and accumulators to the new row max (online
 * softmax, exact up to float32 rounding), then each thread accumulates P·V
 * for its columns. */
template <typename T>
static __device__ void reference_row(const T *q, const T *k, const T *v, float *o, int S, int D,
                                     size_t qstride, size_t kvstride, int causal, int diag, float scale,
                                     size_t base, size_t kvbase, int i, float *qrow, float *chunk,
                                     float *scratch)
{
    const int keys = causal ? diag + i + 1 : S;
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

/* grid: (QL, up to 65535): block (i, y) computes row i of query heads y, y +
 * gridDim.y, ... of the batch·heads, head h reading K/V head h / group (=
 * b·kv_heads + h_in_batch / group); QL query rows a head (q_len: S but for a
 * decode), S keys of the kv_rows a K/V head holds (S but in a ragged cache). */
template <typename T>
static __global__ void reference_kernel(const T *q, const T *k, const T *v, float *o, int S, int QL,
                                        int D, int causal, float scale, size_t heads, int group, int kv_rows)
{
    __shared__ float qrow[REF_MAX_DIM], chunk[REF_CHUNK], scratch[REF_THREADS / 32];
    for (size_t h = blockIdx.y; h < heads; h += gridDim.y)
        reference_row(q, k, v, o, S, D, D, D, causal, S - QL, scale, h * QL * D, h / group * (size_t)kv_rows * D,
                      (int)blockIdx.x, qrow, chunk, scratch);
}

/* One dense launch of reference_kernel over `heads` query heads from q, k,
 * v, o: S keys of kv_rows a K/V head. */
static int reference_dense(const struct attn_problem *p, const void *q, const void *k, const void *v, float *o,
                           int S, size_t heads, int kv_rows, cudaStream_t s)
{
    const int group = p->heads / attn_kv_heads(p), ql = attn_q_len(p);
    dim3 grid((unsigned)ql, (unsigned)(heads < REF_MAX_GRID_Y ? heads : REF_MAX_GRID_Y));
    if (p->dtype == ATTN_FP16)
        reference_kernel<<<grid, REF_THREADS, 0, s>>>((const __half *)q, (const __half *)k, (const __half *)v, o, S,
                                                      ql, p->head_dim, p->causal, p->scale, heads, group, kv_rows);
    else
        reference_kernel<<<grid, REF_THREADS, 0, s>>>((const __nv_bfloat16 *)q, (const __nv_bfloat16 *)k,
                                                      (const __nv_bfloat16 *)v, o, S, ql, p->head_dim, p->causal,
                                                      p->scale, heads, group, kv_rows);
    LAUNCH_TRY("reference_kernel");
    return ATTN_OK;
}

/* A decode over a ragged cache: sequence by sequence, each over its own
 * cached length of the seq_len rows its K/V heads hold. */
static int reference_ragged_cache(const struct attn_problem *p, const void *q, const void *k, const void *v,
                                  float *o, cudaStream_t s)
{
    int *lens = (int *)malloc((size_t)p->batch * sizeof *lens);
    if (!lens) return ATTN_FAIL(ATTN_ERR, "out of host memory for the GPU reference");
    int rc = attn_seq_lens(p, lens);
    const size_t es = attn_dtype_bytes(p->dtype), D = (size_t)p->head_dim;
    const size_t qper = (size_t)p->heads * attn_q_len(p) * D, kvper = (size_t)attn_kv_heads(p) * p->seq_len * D;
    for (int b = 0; rc == ATTN_OK && b < p->batch; b++)
        rc = reference_dense(p, (const char *)q + b * qper * es, (const char *)k + b * kvper * es,
                             (const char *)v + b * kvper * es, o + b * qper, lens[b], (size_t)p->heads, p->seq_len, s);
    free(lens);
    return rc;
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
        reference_row(q, k, v, o, len, D, (size_t)heads * D, (size_t)kv_heads * D, causal, 0, scale,
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

int gpu_seq_starts_to_device(const struct attn_problem *p, int *dev_cu, const char *what)
{
    int rc;
    int *cu = varlen_offsets(p, &rc);
    if (!cu) return rc;
    rc = gpu_copy_to_device(dev_cu, cu, ((size_t)p->batch + 1) * sizeof *cu, what);
    free(cu);
    return rc;
}

/* dense[b, h, t, :] = paged[table[b·pps + t / page], t % page, h, :], in
 * chunks of VEC 16-bit elements (8: 16 bytes, when head_dim allows). */
template <int VEC>
static __global__ void gather_pages_kernel(const uint16_t *paged, uint16_t *dense, const int *table, int kv_heads,
                                           int seq_len, int head_dim, int page, int pps, size_t chunks)
{
    typedef typename std::conditional<VEC == 8, uint4, uint16_t>::type chunk_t;
    const int per_row = head_dim / VEC;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < chunks; i += (size_t)gridDim.x * blockDim.x) {
        const size_t row = i / per_row; /* (b·kv_heads + h)·seq_len + t */
        const int c = (int)(i % per_row), t = (int)(row % seq_len);
        const size_t bh = row / seq_len;
        const int h = (int)(bh % kv_heads), b = (int)(bh / kv_heads);
        const size_t pg = (size_t)table[(size_t)b * pps + t / page];
        const size_t src = ((pg * page + t % page) * kv_heads + h) * head_dim + (size_t)c * VEC;
        ((chunk_t *)dense)[i] = *(const chunk_t *)(paged + src);
    }
}

extern "C" int gpu_gather_pages(const struct attn_problem *p, const int *table, const void *paged, void *dense,
                                attn_stream_t s)
{
    const int vec = p->head_dim % 8 == 0 ? 8 : 1;
    const size_t chunks = (size_t)p->batch * attn_kv_heads(p) * p->seq_len * (size_t)(p->head_dim / vec);
    int sms = 0;
    ATTN_TRY(gpu_sm_count(&sms));
    const size_t want = (chunks + 255) / 256, most = (size_t)sms * 16;
    const unsigned blocks = (unsigned)(want < most ? want : most);
    if (vec == 8)
        gather_pages_kernel<8><<<blocks, 256, 0, (cudaStream_t)s>>>((const uint16_t *)paged, (uint16_t *)dense, table,
                                                                   attn_kv_heads(p), p->seq_len, p->head_dim,
                                                                   p->page, attn_pages_per_seq(p), chunks);
    else
        gather_pages_kernel<1><<<blocks, 256, 0, (cudaStream_t)s>>>((const uint16_t *)paged, (uint16_t *)dense, table,
                                                                   attn_kv_heads(p), p->seq_len, p->head_dim,
                                                                   p->page, attn_pages_per_seq(p), chunks);
    LAUNCH_TRY("gather_pages_kernel");
    return ATTN_OK;
}

extern "C" int gpu_copy_to_device(void *dev, const void *host, size_t bytes, const char *what)
{
    cudaError_t e = cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaStreamSynchronize(0);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return ATTN_FAIL(ATTN_ERR, "copying %s to the device: %s", what, cudaGetErrorString(e));
    }
    return ATTN_OK;
}

extern "C" int gpu_upload_page_table(const struct attn_problem *p, int *table)
{
    const size_t n = (size_t)p->batch * attn_pages_per_seq(p);
    int *host = (int *)malloc(n * sizeof *host);
    if (!host) return ATTN_FAIL(ATTN_ERR, "out of host memory for the page table");
    int rc = attn_page_table(p, host);
    if (rc == ATTN_OK) rc = gpu_copy_to_device(table, host, n * sizeof *host, "the page table");
    free(host);
    return rc;
}

static __global__ void fill_u16_kernel(uint16_t *dst, size_t n, uint16_t value)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = value;
}

/* n 16-bit elements at dst set to value. */
static int fill_u16(uint16_t *dst, size_t n, uint16_t value, cudaStream_t s)
{
    const size_t want = (n + 255) / 256;
    fill_u16_kernel<<<(unsigned)(want < 1024 ? want : 1024), 256, 0, s>>>(dst, n, value);
    LAUNCH_TRY("fill_u16_kernel");
    return ATTN_OK;
}

/* attn_cache_tail over `tokens` token rows of K or V from row t of
 * sequence b: per K/V head in a contiguous cache, per page (its slots
 * hold every head) in a paged one. */
static int poison_rows(const struct attn_problem *p, const int *table, void *kv, int b, int t, int tokens,
                       cudaStream_t s)
{
    const size_t D = (size_t)p->head_dim, KV = (size_t)attn_kv_heads(p);
    const uint16_t bits = attn_cache_tail(p->dtype);
    uint16_t *base = (uint16_t *)kv;
    while (tokens > 0) {
        int run = tokens;
        if (table) {
            run = p->page - t % p->page < tokens ? p->page - t % p->page : tokens;
            ATTN_TRY(fill_u16(base + attn_kv_offset(p, table, b, 0, t), (size_t)run * KV * D, bits, s));
        } else {
            for (size_t h = 0; h < KV; h++)
                ATTN_TRY(fill_u16(base + attn_kv_offset(p, NULL, b, (int)h, t), (size_t)tokens * D, bits, s));
        }
        t += run;
        tokens -= run;
    }
    return ATTN_OK;
}

extern "C" int gpu_upload_seq_lens(const struct attn_problem *p, int *dev)
{
    int *lens = (int *)malloc((size_t)p->batch * sizeof *lens);
    if (!lens) return ATTN_FAIL(ATTN_ERR, "out of host memory for the batch's %d lengths", p->batch);
    int rc = attn_seq_lens(p, lens);
    if (rc == ATTN_OK) rc = gpu_copy_to_device(dev, lens, (size_t)p->batch * sizeof *lens, "the sequence lengths");
    free(lens);
    return rc;
}

extern "C" int gpu_poison_cache_tails(const struct attn_problem *p, void *kv, attn_stream_t s)
{
    const bool ragged = attn_is_decode(p) && attn_is_varlen(p);
    const int cap = attn_is_paged(p) ? attn_pages_per_seq(p) * p->page : p->seq_len; /* token rows a sequence has */
    if (!ragged && cap == p->seq_len) return ATTN_OK;
    int *lens = (int *)malloc((size_t)p->batch * sizeof *lens);
    int *table = attn_is_paged(p) ? (int *)malloc((size_t)p->batch * attn_pages_per_seq(p) * sizeof *table) : NULL;
    int rc = lens && (table || !attn_is_paged(p)) ? attn_seq_lens(p, lens)
                                                  : ATTN_FAIL(ATTN_ERR, "out of host memory for the cache's tails");
    if (rc == ATTN_OK && table) rc = attn_page_table(p, table);
    for (int b = 0; rc == ATTN_OK && b < p->batch; b++) {
        const int len = ragged ? lens[b] : p->seq_len;
        rc = poison_rows(p, table, kv, b, len, cap - len, (cudaStream_t)s);
    }
    free(lens);
    free(table);
    return rc;
}

/* A paged cache: its table onto the device, K and V gathered into dense
 * copies, the dense reference over them; waits for it all (the caller may
 * free its inputs). */
static int reference_paged(const struct attn_problem *p, const void *q, const void *k, const void *v, float *o,
                           cudaStream_t s)
{
    struct attn_problem dense = *p;
    dense.page = 0;
    const size_t kv_bytes = attn_kv_tensor_elems(&dense) * attn_dtype_bytes(p->dtype);
    int *table = NULL;
    void *dk = NULL, *dv = NULL;
    int rc = ATTN_OK;
    cudaError_t e;
    if ((e = cudaMalloc(&table, (size_t)p->batch * attn_pages_per_seq(p) * sizeof *table)) != cudaSuccess ||
        (e = cudaMalloc(&dk, kv_bytes)) != cudaSuccess || (e = cudaMalloc(&dv, kv_bytes)) != cudaSuccess) {
        (void)cudaGetLastError();
        rc = ATTN_FAIL(e == cudaErrorMemoryAllocation ? ATTN_ERR_OOM : ATTN_ERR,
                       "cudaMalloc(GPU reference, paged cache): %s", cudaGetErrorString(e));
    }
    if (rc == ATTN_OK) rc = gpu_upload_page_table(p, table);
    if (rc == ATTN_OK) rc = gpu_gather_pages(p, table, k, dk, (attn_stream_t)s);
    if (rc == ATTN_OK) rc = gpu_gather_pages(p, table, v, dv, (attn_stream_t)s);
    if (rc == ATTN_OK) rc = gpu_reference_f32(&dense, q, dk, dv, o, (attn_stream_t)s);
    if (rc == ATTN_OK && (e = cudaStreamSynchronize(s)) != cudaSuccess)
        rc = ATTN_FAIL(ATTN_ERR, "GPU reference (paged): %s", cudaGetErrorString(e));
    (void)cudaFree(table);
    (void)cudaFree(dk);
    (void)cudaFree(dv);
    return rc;
}

extern "C" int gpu_reference_f32(const struct attn_problem *p, const void *q, const void *k,
                                 const void *v, float *o, attn_stream_t s)
{
    if (attn_is_paged(p)) return reference_paged(p, q, k, v, o, (cudaStream_t)s);
    if (p->head_dim > REF_MAX_DIM)
        return ATTN_FAIL(ATTN_ERR, "GPU reference supports head_dim <= %d, not %d", REF_MAX_DIM,
                         p->head_dim);
    if (attn_is_packed(p)) {
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
    if (attn_is_varlen(p) && attn_is_decode(p)) return reference_ragged_cache(p, q, k, v, o, (cudaStream_t)s);
    return reference_dense(p, q, k, v, o, p->seq_len, (size_t)p->batch * p->heads, p->seq_len, (cudaStream_t)s);
}

/* ---------------------------------------------------------------- backward */

#define BWD_TILE 64     /* query rows, key rows and output columns of a tile */
#define BWD_THREADS 256 /* 16 × 16 threads, each holding a 4 × 4 patch of a tile */
#define BWD_PATCH 4     /* BWD_TILE / 16 */
#define BWD_DK 16       /* head_dim columns staged per step of the score products */

/* What the backward kernels need of the problem; cu (device) holds the
 * ragged batch's first tokens cu[0..batch], NULL when the batch is dense. */
struct bwd_problem {
    const int *cu;
    int batch, heads, kv_heads, seq_len, head_dim, causal;
    float scale;
};

/* Row r of one head's [rows, head_dim] block starts at base + r·stride. */
struct bwd_rows {
    size_t base, stride;
};

/* The rows of query head h and of its K/V head kvh in sequence b, and the
 * sequence's length: one head's [S, D] block when dense; every heads·D
 * (kv_heads·D) elements from the sequence's first token when ragged. */
static __device__ int bwd_sequence(const bwd_problem &p, int b, int h, int kvh, bwd_rows *qr,
                                   bwd_rows *kr)
{
    const size_t D = (size_t)p.head_dim;
    if (p.cu) {
        qr->base = ((size_t)p.cu[b] * p.heads + h) * D;
        qr->stride = (size_t)p.heads * D;
        kr->base = ((size_t)p.cu[b] * p.kv_heads + kvh) * D;
        kr->stride = (size_t)p.kv_heads * D;
        return p.cu[b + 1] - p.cu[b];
    }
    qr->base = ((size_t)b * p.heads + h) * p.seq_len * D;
    qr->stride = D;
    kr->base = ((size_t)b * p.kv_heads + kvh) * p.seq_len * D;
    kr->stride = D;
    return p.seq_len;
}

/* Query row r's slot in the per-row statistics (log-sum-exp and D): the
 * row's index among all query rows of all heads, laid out as Q's rows. */
static __device__ size_t bwd_stat_index(bwd_rows qr, int r, int D)
{
    return qr.base / (size_t)D + (size_t)r * (qr.stride / (size_t)D);
}

/* Whether query i sees key j in a sequence of len tokens. */
static __device__ bool bwd_visible(int i, int j, int len, int causal)
{
    return i < len && j < len && (!causal || j <= i);
}

struct bwd_smem {
    float tile[BWD_TILE][BWD_TILE + 1]; /* dS (dQ kernel), Pᵀ then dSᵀ (dK/dV kernel) */
    union {
        /* the score products' operands, BWD_DK columns at a time, transposed */
        float cols[4][BWD_DK][BWD_TILE + 1];
        /* 64 rows × 64 columns of the output product's right operand */
        float rows[BWD_TILE][BWD_TILE];
    } u;
};

/* Rows r0 .. r0 + 63 of x, columns d0 .. d0 + BWD_DK - 1, into dst[c][r]:
 * zero past the sequence's len rows or past head_dim. */
template <typename T>
static __device__ void bwd_stage_cols(float (*dst)[BWD_TILE + 1], const T *x, bwd_rows xr, int r0,
                                      int len, int d0, int D)
{
    for (int e = threadIdx.x; e < BWD_TILE * BWD_DK; e += BWD_THREADS) {
        const int r = e / BWD_DK, c = e % BWD_DK;
        dst[c][r] = r0 + r < len && d0 + c < D ? load_f(x, xr.base + (size_t)(r0 + r) * xr.stride + d0 + c)
                                               : 0.0f;
    }
}

/* The two 64 × 64 products of a tile pair over head_dim: p1 = A1·B1ᵀ and
 * p2 = A2·B2ᵀ, A1 and A2 rows a0.. (layout ar), B1 and B2 rows b0.. (layout
 * br); thread (ty, tx) gets rows ty + 16i and columns tx + 16j. S and dP
 * (A = Q, dO; B = K, V) or their transposes (A = K, V; B = Q, dO). Ends at a
 * barrier, so that shared memory is free again. */
template <typename T>
static __device__ void bwd_two_products(const T *a1, const T *a2, bwd_rows ar, int a0, const T *b1,
                                        const T *b2, bwd_rows br, int b0, int len, int D,
                                        bwd_smem *sm, float p1[BWD_PATCH][BWD_PATCH],
                                        float p2[BWD_PATCH][BWD_PATCH])
{
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    for (int i = 0; i < BWD_PATCH; i++)
        for (int j = 0; j < BWD_PATCH; j++) p1[i][j] = p2[i][j] = 0;
    for (int d0 = 0; d0 < D; d0 += BWD_DK) {
        bwd_stage_cols(sm->u.cols[0], a1, ar, a0, len, d0, D);
        bwd_stage_cols(sm->u.cols[1], a2, ar, a0, len, d0, D);
        bwd_stage_cols(sm->u.cols[2], b1, br, b0, len, d0, D);
        bwd_stage_cols(sm->u.cols[3], b2, br, b0, len, d0, D);
        __syncthreads();
        for (int c = 0; c < BWD_DK; c++) {
            float x1[BWD_PATCH], x2[BWD_PATCH], y1[BWD_PATCH], y2[BWD_PATCH];
            for (int i = 0; i < BWD_PATCH; i++) {
                x1[i] = sm->u.cols[0][c][ty + 16 * i];
                x2[i] = sm->u.cols[1][c][ty + 16 * i];
                y1[i] = sm->u.cols[2][c][tx + 16 * i];
                y2[i] = sm->u.cols[3][c][tx + 16 * i];
            }
            for (int i = 0; i < BWD_PATCH; i++)
                for (int j = 0; j < BWD_PATCH; j++) {
                    p1[i][j] += x1[i] * y1[j];
                    p2[i][j] += x2[i] * y2[j];
                }
        }
        __syncthreads(); /* the staged columns are rewritten next step */
    }
}

/* out rows r0 + ty + 16i (those before len) over all head_dim columns:
 * out = (first ? 0 : out) + tile · X, X being rows x0 .. x0 + 63 of x
 * (layout xr), 64 columns at a time. The block owns these out rows: each
 * element is read and written by the one thread that holds it. tile must be
 * written and published (a barrier) before; ends at a barrier. */
template <typename T>
static __device__ void bwd_tile_product(float *out, bwd_rows outr, int r0, const T *x, bwd_rows xr,
                                        int x0, int len, int D, bool first, bwd_smem *sm)
{
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    for (int d0 = 0; d0 < D; d0 += BWD_TILE) {
        for (int e = threadIdx.x; e < BWD_TILE * BWD_TILE; e += BWD_THREADS) {
            const int r = e / BWD_TILE, c = e % BWD_TILE;
            sm->u.rows[r][c] = x0 + r < len && d0 + c < D
                                   ? load_f(x, xr.base + (size_t)(x0 + r) * xr.stride + d0 + c)
                                   : 0.0f;
        }
        __syncthreads();
        float acc[BWD_PATCH][BWD_PATCH] = {};
        for (int m = 0; m < BWD_TILE; m++) {
            float a[BWD_PATCH], y[BWD_PATCH];
            for (int i = 0; i < BWD_PATCH; i++) {
                a[i] = sm->tile[ty + 16 * i][m];
                y[i] = sm->u.rows[m][tx + 16 * i];
            }
            for (int i = 0; i < BWD_PATCH; i++)
                for (int j = 0; j < BWD_PATCH; j++) acc[i][j] += a[i] * y[j];
        }
        for (int i = 0; i < BWD_PATCH; i++)
            for (int j = 0; j < BWD_PATCH; j++) {
                const int r = r0 + ty + 16 * i, c = d0 + tx + 16 * j;
                if (r >= len || c >= D) continue;
                const size_t at = outr.base + (size_t)r * outr.stride + c;
                out[at] = (first ? 0.0f : out[at]) + acc[i][j];
            }
        __syncthreads(); /* u.rows is rewritten next */
    }
}

static __device__ float half_warp_max(float x)
{
    for (int off = 8; off; off >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
    return x;
}

static __device__ float half_warp_sum(float x)
{
    for (int off = 8; off; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
    return x;
}

/* grid: (query tiles, up to 65535): block (x, y) takes query rows 64x ..
 * 64x + 63 of (sequence, head) pairs y, y + gridDim.y, ... of the
 * batch·heads, pair y being sequence y / heads, head y % heads. A tile past
 * its sequence's end is skipped by the whole block (it depends only on
 * blockIdx), so the barriers stay uniform. First pass over the keys: per
 * row, the running max m, Σ exp(s − m) and Σ exp(s − m)·dP, rescaled as m
 * grows (each thread sums its own columns; the 16 threads of a row share m
 * and add their sums up at the end): the log-sum-exp and D = rowsum(P∘dP),
 * written to lse and delta for the dK/dV kernel. Second pass: dS = P∘(dP −
 * D) tile by tile, dQ += scale·dS·K. Keys past the last row's are skipped
 * when causal. */
template <typename T>
static __global__ void __launch_bounds__(BWD_THREADS)
    bwd_dq_kernel(const T *q, const T *k, const T *v, const T *dout, float *dq, float *lse,
                  float *delta, bwd_problem p)
{
    __shared__ bwd_smem sm;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int q0 = (int)blockIdx.x * BWD_TILE, group = p.heads / p.kv_heads;
    const size_t pairs = (size_t)p.batch * p.heads;
    for (size_t y = blockIdx.y; y < pairs; y += gridDim.y) {
        const int b = (int)(y / p.heads), h = (int)(y % p.heads);
        bwd_rows qr, kr;
        const int len = bwd_sequence(p, b, h, h / group, &qr, &kr);
        if (q0 >= len) continue;
        const int keys = p.causal ? min(len, q0 + BWD_TILE) : len;
        float m[BWD_PATCH], l[BWD_PATCH], t[BWD_PATCH];
        for (int i = 0; i < BWD_PATCH; i++) m[i] = -INFINITY, l[i] = t[i] = 0;
        float s[BWD_PATCH][BWD_PATCH], dp[BWD_PATCH][BWD_PATCH];
        for (int k0 = 0; k0 < keys; k0 += BWD_TILE) {
            bwd_two_products(q, dout, qr, q0, k, v, kr, k0, len, p.head_dim, &sm, s, dp);
            for (int i = 0; i < BWD_PATCH; i++) {
                const int row = q0 + ty + 16 * i;
                float tile_max = -INFINITY;
                for (int j = 0; j < BWD_PATCH; j++) {
                    s[i][j] = bwd_visible(row, k0 + tx + 16 * j, len, p.causal) ? s[i][j] * p.scale
                                                                                 : -INFINITY;
                    tile_max = fmaxf(tile_max, s[i][j]);
                }
                const float m_new = fmaxf(m[i], half_warp_max(tile_max));
                if (m_new == -INFINITY) continue; /* no key seen yet: a row past the end */
                const float rescale = expf(m[i] - m_new); /* 0 while m is -inf */
                l[i] *= rescale;
                t[i] *= rescale;
                for (int j = 0; j < BWD_PATCH; j++) {
                    const float e = expf(s[i][j] - m_new);
                    l[i] += e;
                    t[i] += e * dp[i][j];
                }
                m[i] = m_new;
            }
        }
        float row_lse[BWD_PATCH], row_delta[BWD_PATCH];
        for (int i = 0; i < BWD_PATCH; i++) {
            const int row = q0 + ty + 16 * i;
            const float sum = half_warp_sum(l[i]), tsum = half_warp_sum(t[i]);
            row_lse[i] = row < len ? m[i] + logf(sum) : 0.0f;
            row_delta[i] = row < len ? tsum / sum : 0.0f;
            if (tx == 0 && row < len) {
                const size_t at = bwd_stat_index(qr, row, p.head_dim);
                lse[at] = row_lse[i];
                delta[at] = row_delta[i];
            }
        }
        for (int k0 = 0; k0 < keys; k0 += BWD_TILE) {
            bwd_two_products(q, dout, qr, q0, k, v, kr, k0, len, p.head_dim, &sm, s, dp);
            for (int i = 0; i < BWD_PATCH; i++)
                for (int j = 0; j < BWD_PATCH; j++) {
                    const bool seen = bwd_visible(q0 + ty + 16 * i, k0 + tx + 16 * j, len, p.causal);
                    const float pr = seen ? expf(s[i][j] * p.scale - row_lse[i]) : 0.0f;
                    sm.tile[ty + 16 * i][tx + 16 * j] = p.scale * pr * (dp[i][j] - row_delta[i]);
                }
            __syncthreads();
            bwd_tile_product(dq, qr, q0, k, kr, k0, len, p.head_dim, k0 == 0, &sm);
        }
    }
}

/* grid: (K/V tiles, up to 65535): block (x, y) takes K/V rows 64x .. 64x +
 * 63 of (sequence, K/V head) pairs y, y + gridDim.y, ... of the
 * batch·kv_heads, and walks the queries of every query head of its group
 * (from its own first row on when causal: earlier queries see none of its
 * keys), tile by tile: Pᵀ and dSᵀ from the first kernel's lse and delta,
 * dV += Pᵀ·dO, dK += scale·dSᵀ·Q. The block owns its rows of dK and dV. */
template <typename T>
static __global__ void __launch_bounds__(BWD_THREADS)
    bwd_dkdv_kernel(const T *q, const T *k, const T *v, const T *dout, float *dk, float *dv,
                    const float *lse, const float *delta, bwd_problem p)
{
    __shared__ bwd_smem sm;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int k0 = (int)blockIdx.x * BWD_TILE, group = p.heads / p.kv_heads;
    const size_t pairs = (size_t)p.batch * p.kv_heads;
    for (size_t y = blockIdx.y; y < pairs; y += gridDim.y) {
        const int b = (int)(y / p.kv_heads), kvh = (int)(y % p.kv_heads);
        bool first = true;
        for (int h = kvh * group; h < (kvh + 1) * group; h++) {
            bwd_rows qr, kr;
            const int len = bwd_sequence(p, b, h, kvh, &qr, &kr);
            if (k0 >= len) break; /* the same for every head of the sequence */
            for (int q0 = p.causal ? k0 : 0; q0 < len; q0 += BWD_TILE) {
                float s[BWD_PATCH][BWD_PATCH], dp[BWD_PATCH][BWD_PATCH]; /* [key][query] */
                bwd_two_products(k, v, kr, k0, q, dout, qr, q0, len, p.head_dim, &sm, s, dp);
                float row_lse[BWD_PATCH], row_delta[BWD_PATCH];
                for (int j = 0; j < BWD_PATCH; j++) {
                    const int i = q0 + tx + 16 * j;
                    row_lse[j] = i < len ? lse[bwd_stat_index(qr, i, p.head_dim)] : 0.0f;
                    row_delta[j] = i < len ? delta[bwd_stat_index(qr, i, p.head_dim)] : 0.0f;
                }
                for (int i = 0; i < BWD_PATCH; i++)
                    for (int j = 0; j < BWD_PATCH; j++) {
                        const bool seen = bwd_visible(q0 + tx + 16 * j, k0 + ty + 16 * i, len, p.causal);
                        s[i][j] = seen ? expf(s[i][j] * p.scale - row_lse[j]) : 0.0f; /* P */
                        sm.tile[ty + 16 * i][tx + 16 * j] = s[i][j];
                    }
                __syncthreads();
                bwd_tile_product(dv, kr, k0, dout, qr, q0, len, p.head_dim, first, &sm);
                for (int i = 0; i < BWD_PATCH; i++)
                    for (int j = 0; j < BWD_PATCH; j++)
                        sm.tile[ty + 16 * i][tx + 16 * j] = p.scale * s[i][j] * (dp[i][j] - row_delta[j]);
                __syncthreads();
                bwd_tile_product(dk, kr, k0, q, qr, q0, len, p.head_dim, first, &sm);
                first = false;
            }
        }
    }
}

/* Copies the ragged batch's offsets (when cu is set) onto the stream, runs
 * both kernels and waits for them: the caller then frees the scratch and
 * both copies of cu. stats holds lse then delta, rows floats each. */
template <typename T>
static int reference_bwd(const struct attn_problem *p, const T *q, const T *k, const T *v,
                         const T *dout, float *dq, float *dk, float *dv, float *stats, size_t rows,
                         const int *cu, int *dcu, cudaStream_t s)
{
    bwd_problem bp = {NULL, p->batch, p->heads, attn_kv_heads(p), p->seq_len, p->head_dim,
                      p->causal, p->scale};
    if (cu) {
        CUDA_TRY(cudaMemcpyAsync(dcu, cu, ((size_t)p->batch + 1) * sizeof *cu,
                                 cudaMemcpyHostToDevice, s));
        bp.cu = dcu;
    }
    const unsigned tiles = (unsigned)((p->seq_len + BWD_TILE - 1) / BWD_TILE);
    const size_t qpairs = (size_t)p->batch * p->heads, kvpairs = (size_t)p->batch * bp.kv_heads;
    dim3 qgrid(tiles, (unsigned)(qpairs < REF_MAX_GRID_Y ? qpairs : REF_MAX_GRID_Y));
    dim3 kvgrid(tiles, (unsigned)(kvpairs < REF_MAX_GRID_Y ? kvpairs : REF_MAX_GRID_Y));
    bwd_dq_kernel<<<qgrid, BWD_THREADS, 0, s>>>(q, k, v, dout, dq, stats, stats + rows, bp);
    LAUNCH_TRY("bwd_dq_kernel");
    bwd_dkdv_kernel<<<kvgrid, BWD_THREADS, 0, s>>>(q, k, v, dout, dk, dv, stats, stats + rows, bp);
    LAUNCH_TRY("bwd_dkdv_kernel");
    CUDA_TRY(cudaStreamSynchronize(s));
    return ATTN_OK;
}

/* cudaMalloc of `bytes` for `what`; ATTN_ERR_OOM when the device is full. */
static int device_alloc(void **ptr, size_t bytes, const char *what)
{
    cudaError_t e = cudaMalloc(ptr, bytes);
    if (e == cudaSuccess) return ATTN_OK;
    *ptr = NULL;
    (void)cudaGetLastError(); /* as CUDA_TRY: clear a non-sticky error */
    return ATTN_FAIL(e == cudaErrorMemoryAllocation ? ATTN_ERR_OOM : ATTN_ERR, "cudaMalloc(%s): %s",
                     what, cudaGetErrorString(e));
}

/* Frees ptr (NULL is fine); returns rc when it already says a failure (the
 * first error is the one reported), else the free's own result. */
static int device_free(void *ptr, int rc, const char *what)
{
    cudaError_t e = cudaFree(ptr);
    if (rc != ATTN_OK) return rc;
    if (e == cudaSuccess) return ATTN_OK;
    (void)cudaGetLastError();
    return ATTN_FAIL(ATTN_ERR, "cudaFree(%s): %s", what, cudaGetErrorString(e));
}

extern "C" int gpu_reference_bwd_f32(const struct attn_problem *p, const void *q, const void *k,
                                     const void *v, const void *dout, float *dq, float *dk,
                                     float *dv, attn_stream_t s)
{
    if (attn_is_decode(p)) return ATTN_FAIL(ATTN_ERR, "the GPU backward reference takes no decode point");
    int rc = ATTN_OK;
    int *cu = NULL, *dcu = NULL;
    if (attn_is_varlen(p) && !(cu = varlen_offsets(p, &rc))) return rc;
    const size_t rows = attn_tokens(p) * (size_t)p->heads; /* query rows of all heads */
    float *stats = NULL;
    rc = device_alloc((void **)&stats, 2 * rows * sizeof *stats, "GPU backward reference statistics");
    if (rc == ATTN_OK && cu)
        rc = device_alloc((void **)&dcu, ((size_t)p->batch + 1) * sizeof *dcu,
                          "GPU backward reference offsets");
    if (rc == ATTN_OK && p->dtype == ATTN_FP16)
        rc = reference_bwd(p, (const __half *)q, (const __half *)k, (const __half *)v,
                           (const __half *)dout, dq, dk, dv, stats, rows, cu, dcu, s);
    else if (rc == ATTN_OK)
        rc = reference_bwd(p, (const __nv_bfloat16 *)q, (const __nv_bfloat16 *)k,
                           (const __nv_bfloat16 *)v, (const __nv_bfloat16 *)dout, dq, dk, dv, stats,
                           rows, cu, dcu, s);
    free(cu); /* the copy is done: staged by cudaMemcpyAsync, or waited for */
    rc = device_free(dcu, rc, "GPU backward reference offsets");
    return device_free(stats, rc, "GPU backward reference statistics");
}

/* eager_ops.cu — the eager attention steps (eager_ops.h): cuBLAS
 * strided-batched GEMMs (one per product for a dense batch, a few per
 * sequence of a packed ragged one) and three memory-bound kernels over the
 * S×S scores, each moving 16-byte vectors where the row layout allows; and
 * the ctx both eager variants share, with the loop over a ragged batch's
 * sequences. */
#include "eager_ops.h"
#include "errors.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>

static __device__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
static __device__ float to_f(__half x) { return __half2float(x); }
template <typename T> static __device__ T from_f(float x);
template <> __device__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) { return __float2bfloat16(x); }
template <> __device__ __half from_f<__half>(float x) { return __float2half(x); }

#define VEC 8 /* 16-bit elements per 16-byte vector */

union vec8_bf16 { uint4 u; __nv_bfloat16 e[VEC]; };
union vec8_f16 { uint4 u; __half e[VEC]; };
template <typename T> struct vec8;
template <> struct vec8<__nv_bfloat16> { typedef vec8_bf16 type; };
template <> struct vec8<__half> { typedef vec8_f16 type; };

size_t eager_scores_bytes(const struct attn_problem *p)
{
    /* a ragged batch's passes hold one sequence's scores at a time */
    const size_t batch = attn_is_varlen(p) ? 1 : (size_t)p->batch;
    return batch * (size_t)p->heads * (size_t)p->seq_len * (size_t)p->seq_len *
           attn_dtype_bytes(p->dtype);
}

int eager_cublas_create(cublasHandle_t *h, void *workspace)
{
    CUBLAS_TRY(cublasCreate(h));
    cublasStatus_t st = cublasSetWorkspace(*h, workspace, EAGER_CUBLAS_WORKSPACE);
    if (st != CUBLAS_STATUS_SUCCESS) {
        cublasDestroy(*h);
        return ATTN_FAIL(ATTN_ERR, "cublasSetWorkspace: %s", cublasGetStatusString(st));
    }
    return ATTN_OK;
}

static cudaDataType_t cuda_type(enum attn_dtype t)
{
    return t == ATTN_FP16 ? CUDA_R_16F : CUDA_R_16BF;
}

/* Element `elems` of a tensor of the dtype. */
static const void *at(const void *base, size_t elems, enum attn_dtype t)
{
    return (const char *)base + elems * attn_dtype_bytes(t);
}
static void *at(void *base, size_t elems, enum attn_dtype t)
{
    return (char *)base + elems * attn_dtype_bytes(t);
}

/* How a packed sequence's heads are split into strided-batched GEMMs. In THD
 * a query head's rows are heads·D apart, so a group's G·L rows are not one
 * uniform stride as in the dense layout; each GEMM instead batches over
 * query heads a fixed step apart whose K/V heads are also a fixed step apart
 * (1 or 0). GEMM l covers query heads l·first_step + i·step, i < count:
 *   G <= kv_heads: G GEMMs, GEMM g over the g-th head of every group
 *                  (heads g, g + G, ...): Q step G·D, K/V step D;
 *   G > kv_heads:  kv_heads GEMMs, one per K/V head over its group's G query
 *                  heads: Q step D, K/V step 0 (the group shares it).
 * Either way min(G, kv_heads) GEMMs: one without grouping (G = 1) and one
 * for multi-query attention (kv_heads = 1). */
struct head_sweep {
    int gemms, count, first_step, step;
};

static struct head_sweep head_sweep_of(const struct attn_problem *p)
{
    const int KVH = attn_kv_heads(p), G = p->heads / KVH;
    struct head_sweep by_rank = {G, KVH, 1, G}, by_group = {KVH, G, G, 1};
    return G <= KVH ? by_rank : by_group;
}

/* Row-major X is column-major Xᵀ: S = Q·Kᵀ is computed as Sᵀ = K·Qᵀ with K
 * transposed from its [D, S] column-major view. */
int eager_qk_matmul(cublasHandle_t h, const struct eager_pass *pass, const void *q,
                    const void *k, void *scores, attn_stream_t stream)
{
    const struct attn_problem *p = &pass->p;
    const int S = p->seq_len, D = p->head_dim, G = p->heads / attn_kv_heads(p);
    const float one = 1.0f, zero = 0.0f;
    cudaDataType_t t = cuda_type(p->dtype);
    CUBLAS_TRY(cublasSetStream(h, stream));
    if (pass->packed) {
        /* one sequence of S tokens from row pass->first: Q rows heads·D
         * apart, K rows kv_heads·D apart, its scores [heads, S, S] */
        const int H = p->heads, KVH = attn_kv_heads(p);
        const struct head_sweep w = head_sweep_of(p);
        for (int l = 0; l < w.gemms; l++) {
            const size_t h0 = (size_t)l * w.first_step; /* the GEMM's first query head */
            CUBLAS_TRY(cublasGemmStridedBatchedEx(
                h, CUBLAS_OP_T, CUBLAS_OP_N, S, S, D, &one,
                at(k, (pass->first * KVH + h0 / G) * D, p->dtype), t, KVH * D,
                (long long)(w.step / G) * D, at(q, (pass->first * H + h0) * D, p->dtype), t,
                H * D, (long long)w.step * D, &zero, at(scores, h0 * S * S, p->dtype), t, S,
                (long long)w.step * S * S, w.count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        }
        return ATTN_OK;
    }
    /* one GEMM per K/V head: its group's G query heads are G·S consecutive
     * rows of Q, their scores G·S consecutive rows of S×S (SDPA's enable_gqa
     * semantics: K is never repeated) */
    CUBLAS_TRY(cublasGemmStridedBatchedEx(
        h, CUBLAS_OP_T, CUBLAS_OP_N, S, G * S, D, &one, k, t, D, (long long)S * D, q, t, D,
        (long long)G * S * D, &zero, scores, t, S, (long long)G * S * S,
        p->batch * attn_kv_heads(p), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return ATTN_OK;
}

/* O = P·V as Oᵀ = Vᵀ·Pᵀ in column-major terms. */
int eager_pv_matmul(cublasHandle_t h, const struct eager_pass *pass, const void *probs,
                    const void *v, void *o, attn_stream_t stream)
{
    const struct attn_problem *p = &pass->p;
    const int S = p->seq_len, D = p->head_dim, G = p->heads / attn_kv_heads(p);
    const float one = 1.0f, zero = 0.0f;
    cudaDataType_t t = cuda_type(p->dtype);
    CUBLAS_TRY(cublasSetStream(h, stream));
    if (pass->packed) {
        /* as eager_qk_matmul: V rows kv_heads·D apart, O rows heads·D apart */
        const int H = p->heads, KVH = attn_kv_heads(p);
        const struct head_sweep w = head_sweep_of(p);
        for (int l = 0; l < w.gemms; l++) {
            const size_t h0 = (size_t)l * w.first_step;
            CUBLAS_TRY(cublasGemmStridedBatchedEx(
                h, CUBLAS_OP_N, CUBLAS_OP_N, D, S, S, &one,
                at(v, (pass->first * KVH + h0 / G) * D, p->dtype), t, KVH * D,
                (long long)(w.step / G) * D, at(probs, h0 * S * S, p->dtype), t, S,
                (long long)w.step * S * S, &zero, at(o, (pass->first * H + h0) * D, p->dtype), t,
                H * D, (long long)w.step * D, w.count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        }
        return ATTN_OK;
    }
    /* per K/V head, as eager_qk_matmul: the group's G·S rows of P against one V */
    CUBLAS_TRY(cublasGemmStridedBatchedEx(
        h, CUBLAS_OP_N, CUBLAS_OP_N, D, G * S, S, &one, v, t, D, (long long)S * D, probs, t, S,
        (long long)G * S * S, &zero, o, t, D, (long long)G * S * D, p->batch * attn_kv_heads(p),
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return ATTN_OK;
}

int eager_copy(void *dst, const void *src, size_t bytes, attn_stream_t stream)
{
    CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
    return ATTN_OK;
}

static unsigned grid_for(size_t work, unsigned threads)
{
    size_t blocks = (work + threads - 1) / threads;
    const size_t cap = 132u * 32u; /* enough resident blocks to fill any current GPU */
    return (unsigned)(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
}

template <typename T>
static __global__ void scale_kernel(T *x, size_t n, float scale)
{
    typedef typename vec8<T>::type V;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t nvec = n / VEC;
    for (size_t i = tid; i < nvec; i += stride) {
        V v;
        v.u = reinterpret_cast<uint4 *>(x)[i];
#pragma unroll
        for (int e = 0; e < VEC; e++) v.e[e] = from_f<T>(to_f(v.e[e]) * scale);
        reinterpret_cast<uint4 *>(x)[i] = v.u;
    }
    for (size_t i = nvec * VEC + tid; i < n; i += stride) x[i] = from_f<T>(to_f(x[i]) * scale);
}

int eager_scale(const struct attn_problem *p, void *scores, attn_stream_t stream)
{
    size_t n = eager_scores_bytes(p) / attn_dtype_bytes(p->dtype);
    unsigned blocks = grid_for(n / VEC + 1, 256);
    if (p->dtype == ATTN_FP16) scale_kernel<<<blocks, 256, 0, stream>>>((__half *)scores, n, p->scale);
    else scale_kernel<<<blocks, 256, 0, stream>>>((__nv_bfloat16 *)scores, n, p->scale);
    LAUNCH_TRY("scale_kernel");
    return ATTN_OK;
}

#define MASK_ROWS_PER_BLOCK 8 /* one warp per score row */

/* Row r of the scores is query i = r % S of its head. Each warp writes -inf
 * to columns i+1..S-1 of its row: scalar stores up to a 16-byte boundary,
 * then vectors, then a scalar tail. */
template <typename T>
static __global__ void mask_kernel(T *x, size_t rows, int S, int causal, T neg_inf)
{
    const size_t row = (size_t)blockIdx.x * MASK_ROWS_PER_BLOCK + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (!causal || row >= rows) return;
    const int i = (int)(row % (size_t)S);
    T *r = x + row * (size_t)S;
    const int lo = i + 1;
    const int misalign = (int)((row * (size_t)S + lo) % VEC);
    const int head_end = min(S, lo + (misalign ? VEC - misalign : 0));
    for (int j = lo + lane; j < head_end; j += 32) r[j] = neg_inf;
    const int nvec = (S - head_end) / VEC;
    typename vec8<T>::type fill;
#pragma unroll
    for (int e = 0; e < VEC; e++) fill.e[e] = neg_inf;
    uint4 *rv = reinterpret_cast<uint4 *>(r + head_end);
    for (int j = lane; j < nvec; j += 32) rv[j] = fill.u;
    for (int j = head_end + nvec * VEC + lane; j < S; j += 32) r[j] = neg_inf;
}

int eager_mask_fill(const struct attn_problem *p, void *scores, attn_stream_t stream)
{
    const size_t rows = (size_t)p->batch * p->heads * p->seq_len;
    /* An empty (non-causal) mask still gets its launch, one block with nothing to do. */
    const size_t blocks = p->causal ? (rows + MASK_ROWS_PER_BLOCK - 1) / MASK_ROWS_PER_BLOCK : 1;
    if (blocks > 0x7fffffffu) return ATTN_FAIL(ATTN_ERR, "mask: %zu rows exceed the grid", rows);
    const unsigned threads = 32 * MASK_ROWS_PER_BLOCK;
    if (p->dtype == ATTN_FP16)
        mask_kernel<<<(unsigned)blocks, threads, 0, stream>>>((__half *)scores, rows, p->seq_len,
                                                              p->causal, __ushort_as_half(0xfc00));
    else
        mask_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
            (__nv_bfloat16 *)scores, rows, p->seq_len, p->causal, __ushort_as_bfloat16(0xff80));
    LAUNCH_TRY("mask_kernel");
    return ATTN_OK;
}

/* 16-byte vectors a thread keeps in registers: 8, or 4 in 1024-thread
 * blocks, whose 64-register cap would spill 8. */
#define SOFTMAX_CACHE(TPR) ((TPR) > 256 ? 4 : 8)

/* Running (max, sum of exp(x - max)) pairs, merged associatively. */
static __device__ void online_merge(float &m, float &s, float m2, float s2)
{
    if (m2 == -INFINITY) return;
    if (m == -INFINITY) { m = m2; s = s2; return; }
    const float mm = fmaxf(m, m2);
    s = s * __expf(m - mm) + s2 * __expf(m2 - mm);
    m = mm;
}

/* Combines (m, s) over the TPR threads that share a row: shuffles inside a
 * warp, then shared memory across the TPR / 32 warps of the row when a row
 * spans several (the block may hold several such rows). */
template <int TPR>
static __device__ void row_combine(float &m, float &s)
{
    for (int off = (TPR < 32 ? TPR : 32) / 2; off; off >>= 1)
        online_merge(m, s, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, s, off));
    if (TPR <= 32) return;
    __shared__ float sm_m[32], sm_s[32]; /* one pair per warp of the block */
    const int warp = threadIdx.x / 32, first = (threadIdx.x / TPR) * (TPR / 32);
    if (threadIdx.x % 32 == 0) {
        sm_m[warp] = m;
        sm_s[warp] = s;
    }
    __syncthreads();
    m = sm_m[first];
    s = sm_s[first];
    for (int w = 1; w < TPR / 32; w++) online_merge(m, s, sm_m[first + w], sm_s[first + w]);
}

/* TPR threads per row, blockDim.x / TPR rows per block. When the row fits in
 * the threads' register caches (SOFTMAX_CACHE(TPR) vectors each) it is read once;
 * otherwise, or when S is not a multiple of 8, it is read twice (the second
 * read mostly from L2). */
template <typename T, int TPR>
static __global__ void __launch_bounds__(TPR > 256 ? TPR : 256, TPR > 256 ? 1 : 2) softmax_kernel(T *x, size_t rows, int S)
{
    typedef typename vec8<T>::type V;
    const size_t row = (size_t)blockIdx.x * (blockDim.x / TPR) + threadIdx.x / TPR;
    const int t = threadIdx.x % TPR;
    const bool live = row < rows; /* dead threads still join the reductions */
    T *r = x + (live ? row : 0) * (size_t)S;
    const int nvec = S / VEC;
    float m = -INFINITY, s = 0.0f;

    constexpr int CACHE = SOFTMAX_CACHE(TPR);
    if (S % VEC == 0 && nvec <= TPR * CACHE) {
        V cache[CACHE];
        /* every load issued before any is used: CACHE loads in flight per thread */
#pragma unroll
        for (int c = 0; c < CACHE; c++) {
            const int j = t + c * TPR;
            cache[c].u = live && j < nvec ? reinterpret_cast<const uint4 *>(r)[j] : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int c = 0; c < CACHE; c++)
            if (live && t + c * TPR < nvec)
#pragma unroll
                for (int e = 0; e < VEC; e++) m = fmaxf(m, to_f(cache[c].e[e]));
        if (m != -INFINITY) /* this thread's share of the normaliser, relative to its max */
#pragma unroll
            for (int c = 0; c < CACHE; c++)
                if (live && t + c * TPR < nvec)
#pragma unroll
                    for (int e = 0; e < VEC; e++) s += __expf(to_f(cache[c].e[e]) - m);
        row_combine<TPR>(m, s); /* (m, s) now describe the whole row */
        const float inv = 1.0f / s;
#pragma unroll
        for (int c = 0; c < CACHE; c++) {
            const int j = t + c * TPR;
            if (live && j < nvec) {
#pragma unroll
                for (int e = 0; e < VEC; e++) cache[c].e[e] = from_f<T>(__expf(to_f(cache[c].e[e]) - m) * inv);
                reinterpret_cast<uint4 *>(r)[j] = cache[c].u;
            }
        }
        return;
    }
    /* large or ragged rows: online (max, sum) in one read, normalise in a second */
    for (int j = t; live && j < S; j += TPR) online_merge(m, s, to_f(r[j]), 1.0f);
    row_combine<TPR>(m, s);
    const float inv = 1.0f / s;
    for (int j = t; live && j < S; j += TPR) r[j] = from_f<T>(__expf(to_f(r[j]) - m) * inv);
}

template <typename T, int TPR>
static int launch_softmax_tpr(T *x, size_t rows, int S, cudaStream_t stream)
{
    const unsigned threads = TPR > 256 ? TPR : 256, rows_per_block = threads / TPR;
    const size_t blocks = (rows + rows_per_block - 1) / rows_per_block;
    if (blocks > 0x7fffffffu) return ATTN_FAIL(ATTN_ERR, "softmax: %zu rows exceed the grid", rows);
    softmax_kernel<T, TPR><<<(unsigned)blocks, threads, 0, stream>>>(x, rows, S);
    LAUNCH_TRY("softmax_kernel");
    return ATTN_OK;
}

/* The fewest threads per row (a warp at least) that hold the row in their
 * register caches: each thread then has a full cache of loads in flight,
 * which is what keeps the memory system busy. */
template <typename T>
static int launch_softmax(T *x, size_t rows, int S, cudaStream_t stream)
{
    const int nvec = (S + VEC - 1) / VEC;
    if (nvec <= 32 * SOFTMAX_CACHE(32)) return launch_softmax_tpr<T, 32>(x, rows, S, stream);
    if (nvec <= 64 * SOFTMAX_CACHE(64)) return launch_softmax_tpr<T, 64>(x, rows, S, stream);
    if (nvec <= 128 * SOFTMAX_CACHE(128)) return launch_softmax_tpr<T, 128>(x, rows, S, stream);
    if (nvec <= 256 * SOFTMAX_CACHE(256)) return launch_softmax_tpr<T, 256>(x, rows, S, stream);
    if (nvec <= 512 * SOFTMAX_CACHE(512)) return launch_softmax_tpr<T, 512>(x, rows, S, stream);
    return launch_softmax_tpr<T, 1024>(x, rows, S, stream);
}

int eager_softmax(const struct attn_problem *p, void *scores, attn_stream_t stream)
{
    const size_t rows = (size_t)p->batch * p->heads * p->seq_len;
    if (p->dtype == ATTN_FP16) return launch_softmax((__half *)scores, rows, p->seq_len, stream);
    return launch_softmax((__nv_bfloat16 *)scores, rows, p->seq_len, stream);
}

/* Score buffers start on 256-byte boundaries: the kernels move 16-byte vectors. */
static size_t aligned_scores_bytes(const struct attn_problem *p)
{
    return (eager_scores_bytes(p) + 255) & ~(size_t)255;
}

size_t eager_workspace_bytes(const struct attn_problem *p, int score_buffers)
{
    return EAGER_CUBLAS_WORKSPACE + (size_t)score_buffers * aligned_scores_bytes(p);
}

int eager_ctx_create(void **out, const struct attn_problem *p, void *workspace, int score_buffers)
{
    struct eager_ctx *c = (struct eager_ctx *)calloc(1, sizeof *c);
    if (!c) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    c->p = *p;
    if (attn_is_varlen(p)) { /* the lengths, read here once: run() only loops over them */
        c->lens = (int *)malloc((p->batch > 0 ? (size_t)p->batch : 1) * sizeof *c->lens);
        int rc = c->lens ? attn_seq_lens(p, c->lens) : ATTN_FAIL(ATTN_ERR, "out of host memory");
        if (rc != ATTN_OK) {
            free(c->lens);
            free(c);
            return rc;
        }
    }
    char *ws = (char *)workspace;
    c->scores = ws + EAGER_CUBLAS_WORKSPACE;
    c->masked = score_buffers > 1 ? ws + EAGER_CUBLAS_WORKSPACE + aligned_scores_bytes(p) : NULL;
    int rc = eager_cublas_create(&c->blas, workspace);
    if (rc != ATTN_OK) {
        free(c->lens);
        free(c);
        return rc;
    }
    *out = c;
    return ATTN_OK;
}

void eager_ctx_destroy(void *ctx)
{
    struct eager_ctx *c = (struct eager_ctx *)ctx;
    if (!c) return;
    cublasDestroy(c->blas);
    free(c->lens);
    free(c);
}

int eager_run(struct eager_ctx *c, eager_steps_fn steps, const void *q, const void *k,
              const void *v, void *o, attn_stream_t stream)
{
    if (!attn_is_varlen(&c->p)) {
        const struct eager_pass whole = {c->p, false, 0};
        return steps(c, &whole, q, k, v, o, stream);
    }
    /* sequence b: a dense batch of one of its length, at its first token */
    struct eager_pass seq = {c->p, true, 0};
    seq.p.batch = 1;
    seq.p.varlen[0] = '\0';
    for (int b = 0; b < c->p.batch; b++) {
        seq.p.seq_len = c->lens[b];
        ATTN_TRY(steps(c, &seq, q, k, v, o, stream));
        seq.first += (size_t)c->lens[b];
    }
    return ATTN_OK;
}

const char *eager_supports(const struct attn_problem *p, const struct device_info *dev)
{
    if (!dev->present) return "no CUDA device";
    if (dev->cc_major < 8) return "needs compute capability 8.0 or newer (bf16 GEMMs)";
    /* the mask and softmax launches cover one pass's score rows: the whole
     * batch's when dense, one sequence's (at most heads·seq_len) when ragged */
    if (attn_is_varlen(p)) {
        if ((size_t)p->heads * p->seq_len > 0x7fffffffu)
            return "heads*seq_len rows exceed one launch's grid";
    } else if ((size_t)p->batch * p->heads * p->seq_len > 0x7fffffffu)
        return "batch*heads*seq_len rows exceed one launch's grid";
    return NULL;
}

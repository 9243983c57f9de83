/* eager_ops.cu — the eager attention steps (eager_ops.h): cuBLAS
 * strided-batched GEMMs (one per product for a dense batch, a few per
 * sequence of a packed ragged one) and the memory-bound kernels over the
 * S×S scores (scale, masked fill, softmax and their backward), each moving
 * 16-byte vectors where the row layout allows; the ctx both eager variants
 * share, with the loop over a ragged batch's sequences; and the backward
 * both share. */
#include "eager_ops.h"
#include "errors.h"
#include "gpu_util.h"
#include "nvtx.h"

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
    /* a packed ragged batch's passes hold one sequence's scores at a time */
    const size_t batch = attn_is_packed(p) ? 1 : (size_t)p->batch;
    return batch * (size_t)p->heads * (size_t)attn_q_len(p) * (size_t)p->seq_len *
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
    /* one GEMM per K/V head: its group's G query heads are G·QL consecutive
     * rows of Q, their scores G·QL consecutive rows of QL×S (QL = S but for
     * a decode; SDPA's enable_gqa semantics: K is never repeated) */
    const int QL = attn_q_len(p);
    CUBLAS_TRY(cublasGemmStridedBatchedEx(
        h, CUBLAS_OP_T, CUBLAS_OP_N, S, G * QL, D, &one, k, t, D, (long long)S * D, q, t, D,
        (long long)G * QL * D, &zero, scores, t, S, (long long)G * QL * S,
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
    /* per K/V head, as eager_qk_matmul: the group's G·QL rows of P against one V */
    const int QL = attn_q_len(p);
    CUBLAS_TRY(cublasGemmStridedBatchedEx(
        h, CUBLAS_OP_N, CUBLAS_OP_N, D, G * QL, S, &one, v, t, D, (long long)S * D, probs, t, S,
        (long long)G * QL * S, &zero, o, t, D, (long long)G * QL * D, p->batch * attn_kv_heads(p),
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return ATTN_OK;
}

/* out = scoresᵀ·x (dV = Pᵀ·dO, dK = dSᵀ·Q): row-major out [S, D] is
 * column-major outᵀ [D, S] = xᵀ·scores, m = D, n = S. x's row-major rows
 * read column-major are xᵀ already (op N, ld its row step); the scores'
 * rows read column-major are scoresᵀ, transposed back (op T, ld S); the
 * inner dimension k runs over query rows. */
int eager_kv_grad_matmul(cublasHandle_t h, const struct eager_pass *pass, const void *scores,
                         const void *x, void *out, attn_stream_t stream)
{
    const struct attn_problem *p = &pass->p;
    const int S = p->seq_len, D = p->head_dim, G = p->heads / attn_kv_heads(p);
    const float one = 1.0f, zero = 0.0f;
    cudaDataType_t t = cuda_type(p->dtype);
    CUBLAS_TRY(cublasSetStream(h, stream));
    if (pass->packed) {
        /* A group's query rows are not one stride apart in THD (head_sweep),
         * so no inner dimension spans the group: GEMM g takes the g-th query
         * head of every group (heads g, g + G, ...: x step G·D, scores step
         * G·S·S) against its K/V head (out step D), k = S, and adds its
         * product to the ones before (beta 1 after the first). The batch
         * never holds two query heads of one group, whose outputs would
         * collide: G GEMMs of kv_heads each, whatever G. */
        const int H = p->heads, KVH = attn_kv_heads(p);
        for (int g = 0; g < G; g++) {
            const float *beta = g ? &one : &zero;
            CUBLAS_TRY(cublasGemmStridedBatchedEx(
                h, CUBLAS_OP_N, CUBLAS_OP_T, D, S, S, &one,
                at(x, (pass->first * H + g) * D, p->dtype), t, H * D, (long long)G * D,
                at(scores, (size_t)g * S * S, p->dtype), t, S, (long long)G * S * S, beta,
                at(out, pass->first * KVH * D, p->dtype), t, KVH * D, (long long)D, KVH,
                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        }
        return ATTN_OK;
    }
    /* per K/V head: its group's G·S rows of the scores and of x are
     * consecutive, so k = G·S sums the group inside the GEMM, in float32 */
    CUBLAS_TRY(cublasGemmStridedBatchedEx(
        h, CUBLAS_OP_N, CUBLAS_OP_T, D, S, G * S, &one, x, t, D, (long long)G * S * D, scores, t,
        S, (long long)G * S * S, &zero, out, t, D, (long long)S * D, p->batch * attn_kv_heads(p),
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

/* y = x · scale; y may be x. */
template <typename T>
static __global__ void scale_kernel(const T *x, T *y, size_t n, float scale)
{
    typedef typename vec8<T>::type V;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t nvec = n / VEC;
    for (size_t i = tid; i < nvec; i += stride) {
        V v;
        v.u = reinterpret_cast<const uint4 *>(x)[i];
#pragma unroll
        for (int e = 0; e < VEC; e++) v.e[e] = from_f<T>(to_f(v.e[e]) * scale);
        reinterpret_cast<uint4 *>(y)[i] = v.u;
    }
    for (size_t i = nvec * VEC + tid; i < n; i += stride) y[i] = from_f<T>(to_f(x[i]) * scale);
}

int eager_scale_to(const struct attn_problem *p, const void *src, void *dst, attn_stream_t stream)
{
    size_t n = eager_scores_bytes(p) / attn_dtype_bytes(p->dtype);
    unsigned blocks = grid_for(n / VEC + 1, 256);
    if (p->dtype == ATTN_FP16)
        scale_kernel<<<blocks, 256, 0, stream>>>((const __half *)src, (__half *)dst, n, p->scale);
    else
        scale_kernel<<<blocks, 256, 0, stream>>>((const __nv_bfloat16 *)src, (__nv_bfloat16 *)dst,
                                                 n, p->scale);
    LAUNCH_TRY("scale_kernel");
    return ATTN_OK;
}

int eager_scale(const struct attn_problem *p, void *scores, attn_stream_t stream)
{
    return eager_scale_to(p, scores, scores, stream);
}

#define MASK_ROWS_PER_BLOCK 8 /* one warp per score row */

/* Row r of the scores is query i = r % QL of its head (QL rows a head: S,
 * or a decode's q_len, whose queries are the sequence's last: query i sees
 * keys 0 .. L − QL + i, L its sequence's length: S, or with lens, a ragged
 * cache's lens[r / seq_rows]). Each warp writes `fill` (-inf forward, 0
 * backward) to columns L − QL + i + 1 (causal; else L) .. S − 1 of its row:
 * scalar stores up to a 16-byte boundary, then vectors, then a scalar
 * tail. */
template <typename T>
static __global__ void mask_kernel(T *x, size_t rows, int S, int QL, int causal, const int *lens,
                                   size_t seq_rows, T fill)
{
    const size_t row = (size_t)blockIdx.x * MASK_ROWS_PER_BLOCK + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if ((!causal && !lens) || row >= rows) return;
    const int i = (int)(row % (size_t)QL), L = lens ? lens[row / seq_rows] : S;
    T *r = x + row * (size_t)S;
    const int lo = causal ? L - QL + i + 1 : L;
    const int misalign = (int)((row * (size_t)S + lo) % VEC);
    const int head_end = min(S, lo + (misalign ? VEC - misalign : 0));
    for (int j = lo + lane; j < head_end; j += 32) r[j] = fill;
    const int nvec = (S - head_end) / VEC;
    typename vec8<T>::type f;
#pragma unroll
    for (int e = 0; e < VEC; e++) f.e[e] = fill;
    uint4 *rv = reinterpret_cast<uint4 *>(r + head_end);
    for (int j = lane; j < nvec; j += 32) rv[j] = f.u;
    for (int j = head_end + nvec * VEC + lane; j < S; j += 32) r[j] = fill;
}

/* The mask's launch over the pass's score rows, writing the bit pattern
 * `fill` of the dtype. */
static int mask_launch(const struct eager_pass *s, void *x, unsigned short fill, attn_stream_t stream)
{
    const struct attn_problem *p = &s->p;
    const size_t seq_rows = (size_t)p->heads * attn_q_len(p), rows = (size_t)p->batch * seq_rows;
    /* An empty mask (non-causal, no padding) still gets its launch, one block with nothing to do. */
    const bool masks = p->causal || s->cache_lens;
    const size_t blocks = masks ? (rows + MASK_ROWS_PER_BLOCK - 1) / MASK_ROWS_PER_BLOCK : 1;
    if (blocks > 0x7fffffffu) return ATTN_FAIL(ATTN_ERR, "mask: %zu rows exceed the grid", rows);
    const unsigned threads = 32 * MASK_ROWS_PER_BLOCK;
    if (p->dtype == ATTN_FP16)
        mask_kernel<<<(unsigned)blocks, threads, 0, stream>>>((__half *)x, rows, p->seq_len, attn_q_len(p),
                                                              p->causal, s->cache_lens, seq_rows,
                                                              __ushort_as_half(fill));
    else
        mask_kernel<<<(unsigned)blocks, threads, 0, stream>>>((__nv_bfloat16 *)x, rows, p->seq_len,
                                                              attn_q_len(p), p->causal, s->cache_lens, seq_rows,
                                                              __ushort_as_bfloat16(fill));
    LAUNCH_TRY("mask_kernel");
    return ATTN_OK;
}

int eager_mask_fill(const struct eager_pass *s, void *scores, attn_stream_t stream)
{
    return mask_launch(s, scores, s->p.dtype == ATTN_FP16 ? 0xfc00 : 0xff80, stream); /* -inf */
}

int eager_mask_zero(const struct eager_pass *s, void *grad, attn_stream_t stream)
{
    return mask_launch(s, grad, 0x0000, stream); /* +0 in either dtype */
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
    const size_t rows = (size_t)p->batch * p->heads * attn_q_len(p);
    if (p->dtype == ATTN_FP16) return launch_softmax((__half *)scores, rows, p->seq_len, stream);
    return launch_softmax((__nv_bfloat16 *)scores, rows, p->seq_len, stream);
}

/* The backward caches two rows (dP's and P's), so half the forward's
 * vectors of each: the same 16-byte loads in flight per thread. */
#define SOFTMAX_BWD_CACHE(TPR) (SOFTMAX_CACHE(TPR) / 2)

/* Sums s over the TPR threads that share a row, as row_combine. */
template <int TPR>
static __device__ float row_sum(float s)
{
    for (int off = (TPR < 32 ? TPR : 32) / 2; off; off >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, off);
    if (TPR <= 32) return s;
    __shared__ float sm[32]; /* one partial sum per warp of the block */
    const int warp = threadIdx.x / 32, first = (threadIdx.x / TPR) * (TPR / 32);
    if (threadIdx.x % 32 == 0) sm[warp] = s;
    __syncthreads();
    s = sm[first];
    for (int w = 1; w < TPR / 32; w++) s += sm[first + w];
    return s;
}

/* dS = P∘(dP − Σ_j dP_j·P_j) per row, as PyTorch's softmax backward
 * computes it: 16-bit in and out, float32 in between. Rows and threads as
 * softmax_kernel: the two rows in registers when they fit, else read twice. */
template <typename T, int TPR>
static __global__ void __launch_bounds__(TPR > 256 ? TPR : 256, TPR > 256 ? 1 : 2)
    softmax_backward_kernel(const T *dp, const T *probs, T *ds, size_t rows, int S)
{
    typedef typename vec8<T>::type V;
    const size_t row = (size_t)blockIdx.x * (blockDim.x / TPR) + threadIdx.x / TPR;
    const int t = threadIdx.x % TPR;
    const bool live = row < rows; /* dead threads still join the reduction */
    const size_t off = (live ? row : 0) * (size_t)S;
    const T *g = dp + off, *pr = probs + off;
    T *out = ds + off;
    const int nvec = S / VEC;
    float dot = 0.0f;

    constexpr int CACHE = SOFTMAX_BWD_CACHE(TPR);
    if (S % VEC == 0 && nvec <= TPR * CACHE) {
        V gc[CACHE], pc[CACHE];
#pragma unroll
        for (int c = 0; c < CACHE; c++) {
            const int j = t + c * TPR;
            const bool in = live && j < nvec;
            gc[c].u = in ? reinterpret_cast<const uint4 *>(g)[j] : make_uint4(0, 0, 0, 0);
            pc[c].u = in ? reinterpret_cast<const uint4 *>(pr)[j] : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int c = 0; c < CACHE; c++)
#pragma unroll
            for (int e = 0; e < VEC; e++) dot += to_f(gc[c].e[e]) * to_f(pc[c].e[e]);
        dot = row_sum<TPR>(dot); /* zeros past the row add nothing */
#pragma unroll
        for (int c = 0; c < CACHE; c++) {
            const int j = t + c * TPR;
            if (live && j < nvec) {
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    gc[c].e[e] = from_f<T>(to_f(pc[c].e[e]) * (to_f(gc[c].e[e]) - dot));
                reinterpret_cast<uint4 *>(out)[j] = gc[c].u;
            }
        }
        return;
    }
    /* large or ragged rows: the dot product in one read, dS in a second */
    for (int j = t; live && j < S; j += TPR) dot += to_f(g[j]) * to_f(pr[j]);
    dot = row_sum<TPR>(dot);
    for (int j = t; live && j < S; j += TPR) out[j] = from_f<T>(to_f(pr[j]) * (to_f(g[j]) - dot));
}

template <typename T, int TPR>
static int launch_softmax_backward_tpr(const T *dp, const T *probs, T *ds, size_t rows, int S,
                                       cudaStream_t stream)
{
    const unsigned threads = TPR > 256 ? TPR : 256, rows_per_block = threads / TPR;
    const size_t blocks = (rows + rows_per_block - 1) / rows_per_block;
    if (blocks > 0x7fffffffu)
        return ATTN_FAIL(ATTN_ERR, "softmax backward: %zu rows exceed the grid", rows);
    softmax_backward_kernel<T, TPR>
        <<<(unsigned)blocks, threads, 0, stream>>>(dp, probs, ds, rows, S);
    LAUNCH_TRY("softmax_backward_kernel");
    return ATTN_OK;
}

/* The fewest threads per row that hold both rows in their caches, as
 * launch_softmax (512 would hold no more than 256: its cache is half). */
template <typename T>
static int launch_softmax_backward(const T *dp, const T *probs, T *ds, size_t rows, int S,
                                   cudaStream_t stream)
{
    const int nvec = (S + VEC - 1) / VEC;
    if (nvec <= 32 * SOFTMAX_BWD_CACHE(32))
        return launch_softmax_backward_tpr<T, 32>(dp, probs, ds, rows, S, stream);
    if (nvec <= 64 * SOFTMAX_BWD_CACHE(64))
        return launch_softmax_backward_tpr<T, 64>(dp, probs, ds, rows, S, stream);
    if (nvec <= 128 * SOFTMAX_BWD_CACHE(128))
        return launch_softmax_backward_tpr<T, 128>(dp, probs, ds, rows, S, stream);
    if (nvec <= 256 * SOFTMAX_BWD_CACHE(256))
        return launch_softmax_backward_tpr<T, 256>(dp, probs, ds, rows, S, stream);
    return launch_softmax_backward_tpr<T, 1024>(dp, probs, ds, rows, S, stream);
}

int eager_softmax_backward(const struct attn_problem *p, const void *dp, const void *probs,
                           void *ds, attn_stream_t stream)
{
    const size_t rows = (size_t)p->batch * p->heads * p->seq_len;
    if (p->dtype == ATTN_FP16)
        return launch_softmax_backward((const __half *)dp, (const __half *)probs, (__half *)ds,
                                       rows, p->seq_len, stream);
    return launch_softmax_backward((const __nv_bfloat16 *)dp, (const __nv_bfloat16 *)probs,
                                   (__nv_bfloat16 *)ds, rows, p->seq_len, stream);
}

/* Score buffers start on 256-byte boundaries: the kernels move 16-byte vectors. */
static size_t align256(size_t bytes) { return (bytes + 255) & ~(size_t)255; }

static size_t aligned_scores_bytes(const struct attn_problem *p)
{
    return align256(eager_scores_bytes(p));
}

/* Whether the buffer that holds P keeps every sequence's: a ragged batch at
 * a point with a backward pass (autograd keeps each sequence's P alive until
 * the backward); a dense batch keeps its one P anyway. */
static bool keeps_every_probs(const struct attn_problem *p)
{
    return p->pass != ATTN_PASS_FWD && attn_is_packed(p);
}

/* Sequence slice of the P buffer: [heads, L, L], 256-byte aligned. */
static size_t probs_slice_bytes(const struct attn_problem *p, int L)
{
    return align256((size_t)p->heads * (size_t)L * (size_t)L * attn_dtype_bytes(p->dtype));
}

/* Bytes of the buffer that ends up holding P: one pass's scores, or every
 * sequence's slice; lens NULL counts every sequence as the longest. */
static size_t probs_buffer_bytes(const struct attn_problem *p, const int *lens)
{
    if (!keeps_every_probs(p)) return aligned_scores_bytes(p);
    size_t sum = 0;
    for (int b = 0; b < p->batch; b++) sum += probs_slice_bytes(p, lens ? lens[b] : p->seq_len);
    return sum;
}

/* The backward's S×S buffers the workspace adds: the two it writes in turn,
 * less the forward's buffers that do not hold P (free in the backward). */
static int own_grad_buffers(const struct attn_problem *p, int score_buffers)
{
    if (p->pass == ATTN_PASS_FWD) return 0;
    const int free_fwd = score_buffers - 1;
    return free_fwd >= EAGER_GRAD_BUFFERS ? 0 : EAGER_GRAD_BUFFERS - free_fwd;
}

/* A paged cache's K or V gathered contiguous, 256-byte aligned. */
static size_t gathered_kv_bytes(const struct attn_problem *p)
{
    struct attn_problem dense = *p;
    dense.page = 0;
    return (attn_kv_tensor_elems(&dense) * attn_dtype_bytes(p->dtype) + 255) / 256 * 256;
}

/* A paged cache's extra: K and V gathered contiguous, then the page table
 * on the device. */
static size_t paged_bytes(const struct attn_problem *p)
{
    if (!attn_is_paged(p)) return 0;
    return 2 * gathered_kv_bytes(p) + (size_t)p->batch * attn_pages_per_seq(p) * sizeof(int);
}

/* Whether p is a decode against a ragged cache (each sequence its own
 * cached length in a cache padded to seq_len), and its lengths' bytes on
 * the device. */
static bool ragged_cache(const struct attn_problem *p) { return attn_is_varlen(p) && attn_is_decode(p); }
static size_t cache_lens_bytes(const struct attn_problem *p)
{
    return ragged_cache(p) ? (size_t)p->batch * sizeof(int) : 0;
}

static size_t workspace_of(const struct attn_problem *p, const int *lens, int score_buffers)
{
    return EAGER_CUBLAS_WORKSPACE + (size_t)(score_buffers - 1) * aligned_scores_bytes(p) +
           probs_buffer_bytes(p, lens) +
           (size_t)own_grad_buffers(p, score_buffers) * aligned_scores_bytes(p) + paged_bytes(p) +
           cache_lens_bytes(p);
}

size_t eager_workspace_bytes(const struct attn_problem *p, int score_buffers)
{
    if (!keeps_every_probs(p)) return workspace_of(p, NULL, score_buffers);
    /* the sum over the batch's lengths; should they not be read, the bound
     * of every sequence the longest (setup then says why it cannot run) */
    int *lens = (int *)malloc((p->batch > 0 ? (size_t)p->batch : 1) * sizeof *lens);
    const bool known = lens && attn_seq_lens(p, lens) == ATTN_OK;
    const size_t bytes = workspace_of(p, known ? lens : NULL, score_buffers);
    free(lens);
    return bytes;
}

int eager_ctx_create(void **out, const struct attn_problem *p, void *workspace, int score_buffers)
{
    if (score_buffers < 1 || score_buffers > 2) /* scores, and masked for naive */
        return ATTN_FAIL(ATTN_ERR, "eager: %d score buffers", score_buffers);
    struct eager_ctx *c = (struct eager_ctx *)calloc(1, sizeof *c);
    if (!c) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    c->p = *p;
    if (attn_is_packed(p)) { /* the lengths, read here once: run() only loops over them */
        c->lens = (int *)malloc((p->batch > 0 ? (size_t)p->batch : 1) * sizeof *c->lens);
        int rc = c->lens ? attn_seq_lens(p, c->lens) : ATTN_FAIL(ATTN_ERR, "out of host memory");
        if (rc != ATTN_OK) {
            free(c->lens);
            free(c);
            return rc;
        }
    }
    /* the layout eager_workspace_bytes sized: the forward's buffers, P's
     * last, then the backward's own */
    char *ws = (char *)workspace + EAGER_CUBLAS_WORKSPACE;
    void *fwd_free[2] = {NULL, NULL}; /* the forward's buffers that do not hold P */
    c->scores = ws;
    if (score_buffers > 1) {
        fwd_free[0] = c->scores;
        ws += aligned_scores_bytes(p);
        c->masked = ws;
    }
    c->probs = ws;
    c->keep_probs = keeps_every_probs(p);
    ws += probs_buffer_bytes(p, c->lens);
    if (p->pass != ATTN_PASS_FWD) {
        const int own = own_grad_buffers(p, score_buffers);
        for (int i = 0; i < EAGER_GRAD_BUFFERS; i++) {
            if (i < own) {
                c->grad[i] = ws;
                ws += aligned_scores_bytes(p);
            } else {
                c->grad[i] = fwd_free[i - own];
            }
        }
    }
    int rc = ATTN_OK;
    /* The backward's buffers zeroed once: its vectorized kernels load whole
     * 16-byte chunks of rows that the forward's and the GEMMs' writes (each
     * sequence's own extent in a ragged batch) may leave partly unwritten,
     * and compute-sanitizer's initcheck counts any such load, even of lanes
     * whose values are never used. */
    if (p->pass != ATTN_PASS_FWD && (cudaMemset(c->scores, 0, (size_t)(ws - (char *)c->scores)) != cudaSuccess ||
                                     cudaStreamSynchronize(0) != cudaSuccess)) {
        (void)cudaGetLastError();
        rc = ATTN_FAIL(ATTN_ERR, "eager: zeroing the backward's buffers");
    }
    if (rc == ATTN_OK && attn_is_paged(p)) { /* K and V gathered here before each forward */
        const size_t kv = gathered_kv_bytes(p);
        c->k_dense = ws;
        c->v_dense = ws + kv;
        c->table = (int *)(ws + 2 * kv);
        rc = gpu_upload_page_table(p, c->table);
        ws += paged_bytes(p);
    }
    if (rc == ATTN_OK && ragged_cache(p)) { /* the lengths the mask pads each sequence to */
        c->cache_lens = (int *)ws;
        rc = gpu_upload_seq_lens(p, c->cache_lens);
    }
    if (rc == ATTN_OK) rc = eager_cublas_create(&c->blas, workspace);
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
    if (attn_is_paged(&c->p)) { /* eager PyTorch's k_cache[block_table]: a gather each, then dense */
        ATTN_STEP("gather_k", gpu_gather_pages(&c->p, c->table, k, c->k_dense, stream));
        ATTN_STEP("gather_v", gpu_gather_pages(&c->p, c->table, v, c->v_dense, stream));
        struct eager_pass whole = {c->p, false, 0, 0, c->cache_lens};
        whole.p.page = 0;
        return steps(c, &whole, q, c->k_dense, c->v_dense, o, stream);
    }
    if (!attn_is_packed(&c->p)) {
        const struct eager_pass whole = {c->p, false, 0, 0, c->cache_lens};
        return steps(c, &whole, q, k, v, o, stream);
    }
    /* sequence b: a dense batch of one of its length, at its first token;
     * its P in its own slice when every sequence's is kept, else at the
     * buffer's start */
    struct eager_pass seq = {c->p, true, 0, 0, NULL};
    seq.p.batch = 1;
    seq.p.varlen[0] = '\0';
    for (int b = 0; b < c->p.batch; b++) {
        seq.p.seq_len = c->lens[b];
        ATTN_TRY(steps(c, &seq, q, k, v, o, stream));
        seq.first += (size_t)c->lens[b];
        if (c->keep_probs) seq.probs_at += probs_slice_bytes(&c->p, c->lens[b]);
    }
    return ATTN_OK;
}

/* Autograd's backward of the forward's ops over one pass, one launch per op
 * (two for the masked fill's), in the order its engine runs them: BmmBackward0
 * of O = P·V (its mat2's gradient first: dV, then dP), SoftmaxBackward0,
 * MaskedFillBackward0 (grad.masked_fill(mask, 0): masked_fill out of place
 * is a clone, a device-to-device copy, and masked_fill_ on the clone; the
 * formula is the same for the in-place masked_fill_), MulBackward0 (grad *
 * scale, a new tensor), BmmBackward0 of S = Q·Kᵀ (dK, then dQ). Each op
 * writes the other of the two gradient buffers, as each returns a new
 * tensor: dP in grad[0], dS in grad[1], its masked copy in grad[0], the
 * scaled one in grad[1]. P is only read, so that every backward of the bwd
 * pass reads the one forward's. PyTorch gets dK as the contiguous Qᵀ·dS
 * (dKᵀ) and a transposed view of it; the GEMM here writes dK in K's layout,
 * the same product. */
static int backward_steps(struct eager_ctx *c, const struct eager_pass *s, const void *q,
                          const void *k, const void *v, const void *dout, void *dq, void *dk,
                          void *dv, attn_stream_t stream)
{
    const void *probs = eager_probs(c, s);
    void *g0 = c->grad[0], *g1 = c->grad[1];
    const size_t bytes = eager_scores_bytes(&s->p);
    ATTN_STEP("dv_matmul", eager_kv_grad_matmul(c->blas, s, probs, dout, dv, stream));
    ATTN_STEP("dp_matmul", eager_qk_matmul(c->blas, s, dout, v, g0, stream));
    ATTN_STEP("softmax_bwd", eager_softmax_backward(&s->p, g0, probs, g1, stream));
    ATTN_STEP("mask_bwd_copy", eager_copy(g0, g1, bytes, stream));
    ATTN_STEP("mask_bwd", eager_mask_zero(s, g0, stream));
    ATTN_STEP("scale_bwd", eager_scale_to(&s->p, g0, g1, stream));
    ATTN_STEP("dk_matmul", eager_kv_grad_matmul(c->blas, s, g1, q, dk, stream));
    ATTN_STEP("dq_matmul", eager_pv_matmul(c->blas, s, g1, k, dq, stream));
    return ATTN_OK;
}

int eager_backward(void *ctx, const void *q, const void *k, const void *v, const void *o,
                   const void *dout, void *dq, void *dk, void *dv, attn_stream_t stream)
{
    struct eager_ctx *c = (struct eager_ctx *)ctx;
    (void)o; /* the softmax backward reads P, not O */
    if (c->p.pass == ATTN_PASS_FWD || !c->grad[0] || !c->grad[1])
        return ATTN_FAIL(ATTN_ERR, "eager backward: set up for a forward-only point");
    if (!attn_is_packed(&c->p)) {
        const struct eager_pass whole = {c->p, false, 0, 0, c->cache_lens};
        return backward_steps(c, &whole, q, k, v, dout, dq, dk, dv, stream);
    }
    /* the sequences as eager_run lays them out, walked from the last */
    struct eager_pass seq = {c->p, true, 0, 0, NULL};
    seq.p.batch = 1;
    seq.p.varlen[0] = '\0';
    for (int b = 0; b < c->p.batch; b++) {
        seq.first += (size_t)c->lens[b];
        seq.probs_at += probs_slice_bytes(&c->p, c->lens[b]);
    }
    for (int b = c->p.batch - 1; b >= 0; b--) {
        seq.p.seq_len = c->lens[b];
        seq.first -= (size_t)c->lens[b];
        seq.probs_at -= probs_slice_bytes(&c->p, c->lens[b]);
        ATTN_TRY(backward_steps(c, &seq, q, k, v, dout, dq, dk, dv, stream));
    }
    return ATTN_OK;
}

const char *eager_supports(const struct attn_problem *p, const struct device_info *dev)
{
    if (!dev->present) return "no CUDA device";
    if (dev->cc_major < 8) return "needs compute capability 8.0 or newer (bf16 GEMMs)";
    /* the mask and softmax launches cover one pass's score rows: the whole
     * batch's when dense (a ragged cache's too, padded), one sequence's (at
     * most heads·seq_len) when packed */
    if (attn_is_packed(p)) {
        if ((size_t)p->heads * p->seq_len > 0x7fffffffu)
            return "heads*seq_len rows exceed one launch's grid";
    } else if ((size_t)p->batch * p->heads * p->seq_len > 0x7fffffffu)
        return "batch*heads*seq_len rows exceed one launch's grid";
    return NULL;
}

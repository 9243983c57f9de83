/* eager_ops.cu — the eager attention steps (eager_ops.h): two cuBLAS
 * strided-batched GEMMs and three memory-bound kernels over the S×S scores,
 * each moving 16-byte vectors where the row layout allows. */
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
    return (size_t)p->batch * (size_t)p->heads * (size_t)p->seq_len * (size_t)p->seq_len *
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

/* Row-major X is column-major Xᵀ: S = Q·Kᵀ is computed as Sᵀ = K·Qᵀ with K
 * transposed from its [D, S] column-major view. */
int eager_qk_matmul(cublasHandle_t h, const struct attn_problem *p, const void *q,
                    const void *k, void *scores, attn_stream_t stream)
{
    const int S = p->seq_len, D = p->head_dim;
    const float one = 1.0f, zero = 0.0f;
    cudaDataType_t t = cuda_type(p->dtype);
    CUBLAS_TRY(cublasSetStream(h, stream));
    CUBLAS_TRY(cublasGemmStridedBatchedEx(
        h, CUBLAS_OP_T, CUBLAS_OP_N, S, S, D, &one, k, t, D, (long long)S * D, q, t, D,
        (long long)S * D, &zero, scores, t, S, (long long)S * S, p->batch * p->heads,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return ATTN_OK;
}

/* O = P·V as Oᵀ = Vᵀ·Pᵀ in column-major terms. */
int eager_pv_matmul(cublasHandle_t h, const struct attn_problem *p, const void *probs,
                    const void *v, void *o, attn_stream_t stream)
{
    const int S = p->seq_len, D = p->head_dim;
    const float one = 1.0f, zero = 0.0f;
    cudaDataType_t t = cuda_type(p->dtype);
    CUBLAS_TRY(cublasSetStream(h, stream));
    CUBLAS_TRY(cublasGemmStridedBatchedEx(
        h, CUBLAS_OP_N, CUBLAS_OP_N, D, S, S, &one, v, t, D, (long long)S * D, probs, t, S,
        (long long)S * S, &zero, o, t, D, (long long)S * D, p->batch * p->heads,
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

/* One block per score row; row r is query i = r % S of its head. Writes -inf
 * to columns i+1..S-1 when causal, nothing otherwise. */
template <typename T>
static __global__ void mask_kernel(T *x, int S, int causal, T neg_inf)
{
    if (!causal) return;
    const size_t row = blockIdx.x;
    const int i = (int)(row % (size_t)S);
    T *r = x + row * (size_t)S;
    int lo = i + 1;
    /* scalar head up to a 16-byte boundary of the whole tensor, vectors, scalar tail */
    int head_end = lo;
    while (head_end < S && ((row * (size_t)S + head_end) % VEC)) head_end++;
    for (int j = lo + threadIdx.x; j < head_end; j += blockDim.x) r[j] = neg_inf;
    int nvec = (S - head_end) / VEC;
    typename vec8<T>::type fill;
#pragma unroll
    for (int e = 0; e < VEC; e++) fill.e[e] = neg_inf;
    uint4 *rv = reinterpret_cast<uint4 *>(r + head_end);
    for (int j = threadIdx.x; j < nvec; j += blockDim.x) rv[j] = fill.u;
    for (int j = head_end + nvec * VEC + threadIdx.x; j < S; j += blockDim.x) r[j] = neg_inf;
}

int eager_mask_fill(const struct attn_problem *p, void *scores, attn_stream_t stream)
{
    size_t rows = (size_t)p->batch * p->heads * p->seq_len;
    if (rows > 0x7fffffffu) return ATTN_FAIL(ATTN_ERR, "mask: %zu rows exceed the grid", rows);
    if (p->dtype == ATTN_FP16)
        mask_kernel<<<(unsigned)rows, 128, 0, stream>>>((__half *)scores, p->seq_len, p->causal,
                                                        __ushort_as_half(0xfc00));
    else
        mask_kernel<<<(unsigned)rows, 128, 0, stream>>>((__nv_bfloat16 *)scores, p->seq_len,
                                                        p->causal, __ushort_as_bfloat16(0xff80));
    LAUNCH_TRY("mask_kernel");
    return ATTN_OK;
}

#define SOFTMAX_THREADS 256

/* Running (max, sum of exp(x - max)) pairs merge associatively. */
static __device__ void online_add(float &m, float &s, float x)
{
    if (x == -INFINITY) return;
    if (x > m) {
        s = s * __expf(m - x) + 1.0f;
        m = x;
    } else {
        s += __expf(x - m);
    }
}

static __device__ void online_merge(float &m, float &s, float m2, float s2)
{
    if (m2 == -INFINITY) return;
    if (m == -INFINITY) { m = m2; s = s2; return; }
    float mm = fmaxf(m, m2);
    s = s * __expf(m - mm) + s2 * __expf(m2 - mm);
    m = mm;
}

/* One block per row: pass 1 finds the row's max and normalizer online, pass 2
 * (reading the row again, mostly from L2) writes exp(x - max) / sum. */
template <typename T>
static __global__ void softmax_kernel(T *x, int S)
{
    typedef typename vec8<T>::type V;
    __shared__ float sm_m[SOFTMAX_THREADS / 32], sm_s[SOFTMAX_THREADS / 32];
    T *r = x + (size_t)blockIdx.x * S;
    const bool vectorized = (S % VEC) == 0;
    float m = -INFINITY, s = 0.0f;
    if (vectorized) {
        for (int j = threadIdx.x; j < S / VEC; j += blockDim.x) {
            V v;
            v.u = reinterpret_cast<const uint4 *>(r)[j];
#pragma unroll
            for (int e = 0; e < VEC; e++) online_add(m, s, to_f(v.e[e]));
        }
    } else {
        for (int j = threadIdx.x; j < S; j += blockDim.x) online_add(m, s, to_f(r[j]));
    }
    for (int off = 16; off; off >>= 1)
        online_merge(m, s, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, s, off));
    if (threadIdx.x % 32 == 0) {
        sm_m[threadIdx.x / 32] = m;
        sm_s[threadIdx.x / 32] = s;
    }
    __syncthreads();
    m = sm_m[0];
    s = sm_s[0];
    for (int w = 1; w < SOFTMAX_THREADS / 32; w++) online_merge(m, s, sm_m[w], sm_s[w]);
    const float inv = 1.0f / s;
    if (vectorized) {
        for (int j = threadIdx.x; j < S / VEC; j += blockDim.x) {
            V v;
            v.u = reinterpret_cast<const uint4 *>(r)[j];
#pragma unroll
            for (int e = 0; e < VEC; e++) v.e[e] = from_f<T>(__expf(to_f(v.e[e]) - m) * inv);
            reinterpret_cast<uint4 *>(r)[j] = v.u;
        }
    } else {
        for (int j = threadIdx.x; j < S; j += blockDim.x) r[j] = from_f<T>(__expf(to_f(r[j]) - m) * inv);
    }
}

int eager_softmax(const struct attn_problem *p, void *scores, attn_stream_t stream)
{
    size_t rows = (size_t)p->batch * p->heads * p->seq_len;
    if (rows > 0x7fffffffu) return ATTN_FAIL(ATTN_ERR, "softmax: %zu rows exceed the grid", rows);
    if (p->dtype == ATTN_FP16)
        softmax_kernel<<<(unsigned)rows, SOFTMAX_THREADS, 0, stream>>>((__half *)scores, p->seq_len);
    else
        softmax_kernel<<<(unsigned)rows, SOFTMAX_THREADS, 0, stream>>>((__nv_bfloat16 *)scores, p->seq_len);
    LAUNCH_TRY("softmax_kernel");
    return ATTN_OK;
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
    char *ws = (char *)workspace;
    c->scores = ws + EAGER_CUBLAS_WORKSPACE;
    c->masked = score_buffers > 1 ? ws + EAGER_CUBLAS_WORKSPACE + aligned_scores_bytes(p) : NULL;
    int rc = eager_cublas_create(&c->blas, workspace);
    if (rc != ATTN_OK) {
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
    free(c);
}

const char *eager_supports(const struct attn_problem *p, const struct device_info *dev)
{
    if (!dev->present) return "no CUDA device";
    if (dev->cc_major < 8) return "needs compute capability 8.0 or newer (bf16 GEMMs)";
    if ((size_t)p->batch * p->heads * p->seq_len > 0x7fffffffu)
        return "batch*heads*seq_len rows exceed one launch's grid";
    return NULL;
}

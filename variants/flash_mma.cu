/* flash_mma.cu — fused FlashAttention-2-style forward on tensor cores
 * (mma.sync m16n8k16, sm_80+), bf16 and fp16 in, fp32 accumulation.
 *
 * STATUS: v0 draft, compiled but not yet run on a GPU. It is deliberately
 * NOT in the registry (common/registry.c) until the GPU tests have passed on
 * the H200 (issue 6); register it with X(flash_mma) then.
 *
 * One block of 4 warps owns 64 query rows of one (batch, head); each warp
 * owns 16 of them. K and V stream through shared memory in 64-key tiles,
 * double-buffered with cp.async so the next tile loads while this one is
 * multiplied. Per tile, per warp:
 *   S = Q·Kᵀ       16×64 in fp32 registers (A from ldmatrix of Q, B from
 *                  ldmatrix of K rows: K's row-major layout is Kᵀ's column-major)
 *   online softmax in fp32 with exp2 and the scale folded into log2(e)·scale;
 *                  the 4 threads of a quad share a row
 *   O += P·V       P re-packed to 16-bit straight from S's accumulator
 *                  fragments (their layout is the A operand's), V through
 *                  ldmatrix.trans
 * Causal: key tiles past the block's last row are never loaded; only tiles
 * that cross the diagonal are masked. Ragged S: rows past S load as zeros and
 * keys past S are masked to -inf. Shared rows are padded by 16 bytes so that
 * ldmatrix's 8 rows fall in distinct banks. No workspace: nothing of size S². */
#include "../common/errors.h"
#include "../common/nvtx.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#define BLOCK_M 64 /* query rows per block */
#define BLOCK_N 64 /* keys per tile */
#define WARPS 4
#define THREADS (WARPS * 32)
#define PAD 8      /* 16-bit elements of padding per shared row */

/* ---------------------------------------------------------------- PTX */

static __device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* 16 bytes global → shared; src_bytes 0 writes zeros (rows past S). */
static __device__ __forceinline__ void cp_async_16(void *dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
                 "r"(src_bytes));
}
static __device__ __forceinline__ void cp_async_commit(void) { asm volatile("cp.async.commit_group;\n"); }
template <int N> static __device__ __forceinline__ void cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

static __device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}
static __device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

template <typename T> struct mma_type;
template <> struct mma_type<__nv_bfloat16> { static constexpr bool bf16 = true; };
template <> struct mma_type<__half> { static constexpr bool bf16 = false; };

/* d += a·b for one m16n8k16 tile, fp32 accumulators. */
template <typename T>
static __device__ __forceinline__ void mma_16816(float d[4], const uint32_t a[4], uint32_t b0,
                                                 uint32_t b1)
{
    if (mma_type<T>::bf16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

static __device__ __forceinline__ uint32_t pack2(float lo, float hi, __nv_bfloat16 *)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
static __device__ __forceinline__ uint32_t pack2(float lo, float hi, __half *)
{
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

/* ------------------------------------------------------------- kernel */

/* Copies `rows` rows of D elements (a tile starting at row0 of a head) into
 * shared memory with padded rows; rows at or past S become zeros. */
template <typename T, int D>
static __device__ __forceinline__ void load_tile(T *dst, const T *src, int row0, int S)
{
    constexpr int CHUNKS = D / 8; /* 16-byte chunks per row */
    for (int c = threadIdx.x; c < BLOCK_N * CHUNKS; c += THREADS) {
        const int r = c / CHUNKS, k = (c % CHUNKS) * 8;
        const bool in = row0 + r < S;
        const T *g = src + (size_t)(in ? row0 + r : 0) * D + k;
        cp_async_16(dst + r * (D + PAD) + k, g, in ? 16 : 0);
    }
}

template <typename T, int D>
static __global__ void __launch_bounds__(THREADS)
flash_fwd_kernel(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
                 T *__restrict__ o, int S, int causal, float scale_log2)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sQ = reinterpret_cast<T *>(smem_raw);
    T *sK = sQ + BLOCK_M * (D + PAD);     /* two stages */
    T *sV = sK + 2 * BLOCK_N * (D + PAD); /* two stages */

    /* heavier causal blocks (later rows) first */
    const int m_block = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const int m0 = m_block * BLOCK_M;
    const size_t head = (size_t)blockIdx.y * S * D;
    const T *qh = q + head, *kh = k + head, *vh = v + head;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4; /* quad row, thread in quad */

    const int n_end = causal ? min(S, m0 + BLOCK_M) : S;
    const int n_tiles = (n_end + BLOCK_N - 1) / BLOCK_N;

    load_tile<T, D>(sQ, qh, m0, S);
    load_tile<T, D>(sK, kh, 0, S);
    load_tile<T, D>(sV, vh, 0, S);
    cp_async_commit();

    float acc_o[D / 8][4];
#pragma unroll
    for (int j = 0; j < D / 8; j++) acc_o[j][0] = acc_o[j][1] = acc_o[j][2] = acc_o[j][3] = 0.f;
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};
    uint32_t qf[D / 16][4]; /* this warp's Q fragments, loaded once */

    for (int tile = 0; tile < n_tiles; tile++) {
        const int stage = tile & 1;
        if (tile + 1 < n_tiles) { /* prefetch the next tile into the other stage */
            load_tile<T, D>(sK + (stage ^ 1) * BLOCK_N * (D + PAD), kh, (tile + 1) * BLOCK_N, S);
            load_tile<T, D>(sV + (stage ^ 1) * BLOCK_N * (D + PAD), vh, (tile + 1) * BLOCK_N, S);
        }
        cp_async_commit();
        cp_async_wait<1>(); /* this tile (and Q) have landed */
        __syncthreads();

        if (tile == 0) {
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++) {
                /* x4: rows 0-7/8-15 × cols kk*16 + 0-7/8-15 */
                const T *p = sQ + (warp * 16 + (lane % 16)) * (D + PAD) + kk * 16 + (lane / 16) * 8;
                ldmatrix_x4(qf[kk], p);
            }
        }

        /* S = Q·Kᵀ for this warp's 16 rows × 64 keys */
        const T *sk = sK + stage * BLOCK_N * (D + PAD);
        float s[BLOCK_N / 8][4];
#pragma unroll
        for (int j = 0; j < BLOCK_N / 8; j++) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++) {
#pragma unroll
            for (int j = 0; j < BLOCK_N / 8; j += 2) {
                /* x4 over keys j*8..j*8+15 and dims kk*16..+15: b0,b1 of tile j, b0,b1 of j+1 */
                uint32_t b[4];
                const int key = j * 8 + (lane % 8) + (lane / 16) * 8;
                const int dim = kk * 16 + ((lane / 8) % 2) * 8;
                ldmatrix_x4(b, sk + key * (D + PAD) + dim);
                mma_16816<T>(s[j], qf[kk], b[0], b[1]);
                mma_16816<T>(s[j + 1], qf[kk], b[2], b[3]);
            }
        }

        /* mask keys past S, and above the diagonal on tiles that cross it */
        const int n0 = tile * BLOCK_N;
        const bool ragged = n0 + BLOCK_N > S;
        const bool diagonal = causal && n0 + BLOCK_N - 1 > m0 + warp * 16;
        if (ragged || diagonal) {
#pragma unroll
            for (int j = 0; j < BLOCK_N / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int key = n0 + j * 8 + 2 * t + (e & 1);
                    const int row = m0 + warp * 16 + g + (e >> 1) * 8;
                    if (key >= S || (causal && key > row)) s[j][e] = -INFINITY;
                }
        }

        /* online softmax: rows g (e = 0,1) and g + 8 (e = 2,3) of the warp */
        float new_max[2] = {row_max[0], row_max[1]};
#pragma unroll
        for (int j = 0; j < BLOCK_N / 8; j++) {
            new_max[0] = fmaxf(new_max[0], fmaxf(s[j][0], s[j][1]));
            new_max[1] = fmaxf(new_max[1], fmaxf(s[j][2], s[j][3]));
        }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            new_max[h] = fmaxf(new_max[h], __shfl_xor_sync(0xffffffffu, new_max[h], 1));
            new_max[h] = fmaxf(new_max[h], __shfl_xor_sync(0xffffffffu, new_max[h], 2));
        }
        float rescale[2], base[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            /* a row with nothing unmasked yet keeps max -inf: use 0 as its base */
            base[h] = new_max[h] == -INFINITY ? 0.f : new_max[h] * scale_log2;
            rescale[h] = exp2f(row_max[h] * scale_log2 - base[h]);
            row_max[h] = new_max[h];
            row_sum[h] *= rescale[h];
        }
#pragma unroll
        for (int j = 0; j < D / 8; j++) {
            acc_o[j][0] *= rescale[0];
            acc_o[j][1] *= rescale[0];
            acc_o[j][2] *= rescale[1];
            acc_o[j][3] *= rescale[1];
        }
#pragma unroll
        for (int j = 0; j < BLOCK_N / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                s[j][e] = exp2f(s[j][e] * scale_log2 - base[e >> 1]);
                row_sum[e >> 1] += s[j][e];
            }

        /* O += P·V: P's accumulator fragments are the A operand, two key tiles at a time */
        const T *sv = sV + stage * BLOCK_N * (D + PAD);
#pragma unroll
        for (int kk = 0; kk < BLOCK_N / 16; kk++) {
            uint32_t a[4];
            a[0] = pack2(s[2 * kk][0], s[2 * kk][1], (T *)nullptr);
            a[1] = pack2(s[2 * kk][2], s[2 * kk][3], (T *)nullptr);
            a[2] = pack2(s[2 * kk + 1][0], s[2 * kk + 1][1], (T *)nullptr);
            a[3] = pack2(s[2 * kk + 1][2], s[2 * kk + 1][3], (T *)nullptr);
#pragma unroll
            for (int j = 0; j < D / 8; j += 2) {
                /* x4.trans over keys kk*16..+15 and dims j*8..j*8+15 */
                uint32_t b[4];
                const int key = kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
                const int dim = j * 8 + (lane / 16) * 8;
                ldmatrix_x4_trans(b, sv + key * (D + PAD) + dim);
                mma_16816<T>(acc_o[j], a, b[0], b[1]);
                mma_16816<T>(acc_o[j + 1], a, b[2], b[3]);
            }
        }
        __syncthreads(); /* the stage is overwritten by the prefetch two tiles on */
    }

    /* finish the row sums across the quad, normalise, store rows < S */
#pragma unroll
    for (int h = 0; h < 2; h++) {
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 1);
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 2);
    }
    T *oh = o + head;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int row = m0 + warp * 16 + g + h * 8;
        if (row >= S) continue;
        const float inv = 1.f / row_sum[h];
#pragma unroll
        for (int j = 0; j < D / 8; j++) {
            const uint32_t pair = pack2(acc_o[j][2 * h] * inv, acc_o[j][2 * h + 1] * inv, (T *)nullptr);
            *reinterpret_cast<uint32_t *>(oh + (size_t)row * D + j * 8 + 2 * t) = pair;
        }
    }
}

/* ------------------------------------------------------------ the variant */

struct flash_ctx {
    struct attn_problem p;
};

static size_t smem_bytes(int D)
{
    return (size_t)(BLOCK_M + 4 * BLOCK_N) * (D + PAD) * 2;
}

static const char *flash_supports(const struct attn_problem *p, const struct device_info *dev)
{
    if (!dev->present) return "no CUDA device";
    if (dev->cc_major < 8) return "needs compute capability 8.0 or newer (mma.sync bf16)";
    if (p->head_dim != 64 && p->head_dim != 128) return "head_dim 64 and 128 only";
    if (smem_bytes(p->head_dim) > dev->smem_optin_bytes) return "not enough shared memory per block";
    if ((size_t)p->batch * p->heads > 65535) return "batch*heads above 65535";
    return NULL;
}

static size_t flash_workspace_bytes(const struct attn_problem *p)
{
    (void)p;
    return 0;
}

static int flash_setup(void **ctx, const struct attn_problem *p, void *workspace)
{
    (void)workspace;
    struct flash_ctx *c = (struct flash_ctx *)malloc(sizeof *c);
    if (!c) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    c->p = *p;
    *ctx = c;
    return ATTN_OK;
}

template <typename T, int D>
static int launch(const struct attn_problem *p, const void *q, const void *k, const void *v, void *o,
                  cudaStream_t s)
{
    const size_t smem = smem_bytes(D);
    CUDA_TRY(cudaFuncSetAttribute(flash_fwd_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem));
    dim3 grid((unsigned)((p->seq_len + BLOCK_M - 1) / BLOCK_M), (unsigned)(p->batch * p->heads));
    const float scale_log2 = p->scale * 1.4426950408889634f; /* exp(x·scale) = exp2(x·scale·log2 e) */
    flash_fwd_kernel<T, D><<<grid, THREADS, smem, s>>>((const T *)q, (const T *)k, (const T *)v,
                                                       (T *)o, p->seq_len, p->causal, scale_log2);
    LAUNCH_TRY("flash_fwd_kernel");
    return ATTN_OK;
}

static int flash_run(void *ctx, const void *q, const void *k, const void *v, void *o,
                     attn_stream_t stream)
{
    const struct attn_problem *p = &((struct flash_ctx *)ctx)->p;
    cudaStream_t s = (cudaStream_t)stream;
    attn_range_push("flash_fwd");
    int rc;
    if (p->dtype == ATTN_FP16)
        rc = p->head_dim == 64 ? launch<__half, 64>(p, q, k, v, o, s) : launch<__half, 128>(p, q, k, v, o, s);
    else
        rc = p->head_dim == 64 ? launch<__nv_bfloat16, 64>(p, q, k, v, o, s)
                               : launch<__nv_bfloat16, 128>(p, q, k, v, o, s);
    attn_range_pop();
    return rc;
}

static void flash_teardown(void *ctx) { free(ctx); }

extern "C" const struct attn_variant attn_variant_flash_mma = {
    .name = "flash_mma",
    .summary = "fused FlashAttention-2-style kernel: mma.sync, cp.async double buffer, online softmax",
    .fused = true,
    .supports = flash_supports,
    .workspace_bytes = flash_workspace_bytes,
    .setup = flash_setup,
    .run = flash_run,
    .teardown = flash_teardown,
};

/* flash_mma.cu — fused FlashAttention-2-style attention on tensor cores
 * (mma.sync m16n8k16, sm_80+), bf16 and fp16 in, fp32 accumulation: the
 * forward, and the backward of FlashAttention-2 (flash_mma_bwd.cuh, part of
 * this translation unit).
 *
 * Forward. A block of W warps owns BM = W·16·MT query rows of one (batch,
 * head); each warp owns 16·MT of them (MT m16 tiles). K and V stream through
 * shared memory in BN-key tiles, double-buffered with cp.async so the next
 * tile loads while this one is multiplied. Per tile, per warp:
 *   S = Q·Kᵀ       16·MT × BN in fp32 registers (A from ldmatrix of Q, B from
 *                  ldmatrix of K rows: K's row-major layout is Kᵀ's column-major);
 *                  each K fragment feeds MT mma's, which is why MT = 2 halves
 *                  the shared-memory traffic per FLOP of MT = 1
 *   online softmax in fp32 with exp2 and log2(e)·scale folded in; the 4
 *                  threads of a quad share a row; O is rescaled only when a
 *                  row max of the warp moved
 *   O += P·V       P re-packed to 16-bit straight from S's accumulator
 *                  fragments (their layout is the A operand's), V through
 *                  ldmatrix.trans
 * Causal: key tiles past the block's last row are never loaded, a warp skips
 * tiles wholly above its rows, only tiles that cross the diagonal are masked;
 * the grid runs the heaviest row blocks first. Ragged S: rows past S load as
 * zeros and keys past S are masked to -inf. Shared rows are padded by 16
 * bytes so that ldmatrix's 8 rows fall in distinct banks. Grouped K/V heads:
 * a block of query head bh streams K/V head bh / (heads / kv_heads); the
 * group's blocks each load it (no sharing). Ragged batches (packed THD) run
 * the same kernel compiled with RAGGED: a block finds its sequence's start
 * in the sequence-start table and its length, walks rows heads·D apart,
 * and exits when its rows start past the sequence's end; the grid is sized
 * for the longest sequence. The dense forward of pass fwd is the kernel with
 * both flags off: no instruction of the other paths in it.
 *
 * Backward (passes bwd and fwd_bwd): the forward compiled with LSE also
 * writes each query row's log-sum-exp in log2 units (max·scale·log2 e +
 * log2 sum), so that the backward recomputes P = exp2(S·scale·log2 e − lse)
 * with one FFMA and one ex2. Then three launches: D = rowsum(dO∘O) with the
 * fp32 dQ accumulator zeroed; the main kernel, one CTA per (batch, K/V head,
 * 128-key tile) holding K and V in shared memory and its keys' dK, dV in
 * registers over the group's query heads and query tiles, dQ's share added
 * with red.global.add; dQ converted to the dtype. Why this shape, the five
 * products' operands and the register and shared-memory budget:
 * flash_mma_bwd.cuh's header.
 *
 * Extra memory: none for a dense forward; a ragged batch's sequence starts
 * (batch + 1 ints); with a backward pass, per query row and head two floats
 * (lse, D) and an fp32 dQ accumulator of Q's size: tokens·heads·(2 + D)·4
 * bytes (twice Q's bytes and a little more), each array 256-byte aligned.
 *
 * Tile shapes are compiled per (dtype, head_dim) in cfgs[] and bwd_cfgs[]
 * below; the first of each is the default (the backward's: the first that
 * fits the card's shared memory), ATTN_FLASH_MMA_TILE=NAME and
 * ATTN_FLASH_MMA_BWD_TILE=NAME pick another in the lab (tuning only).
 * variants/NOTES.md has the measurements behind the defaults and the
 * backward's floor and prediction. */
#include "../common/errors.h"
#include "../common/gpu_util.h"
#include "../common/kernel_util.cuh"
#include "../common/nvtx.h"
#include "mma_sync.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PAD 8 /* 16-bit elements of padding per shared row */

/* ---------------------------------------------------------------- PTX
 * (the shared part in mma_sync.cuh) */

/* 4 bytes global → shared (a softmax statistic); src_bytes 0 writes zero. */
static __device__ __forceinline__ void cp_async_4(void *dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
                 "r"(src_bytes));
}
/* ------------------------------------------------------------- kernel */

/* One tile shape: WARPS warps per block, each owning MT m16 tiles (16·MT
 * query rows), so a block owns BM = WARPS·16·MT rows; BN keys per K/V tile;
 * KU: how far S = Q·Kᵀ's loop over the head dimension is unrolled (0: fully). */
template <int WARPS_, int MT_, int BN_, int KU_ = 0> struct tile_cfg {
    static constexpr int WARPS = WARPS_, MT = MT_, BN = BN_, KU = KU_;
    static constexpr int THREADS = WARPS * 32, BM = WARPS * 16 * MT;
};

/* Copies `rows` rows of D elements (a tile starting at row0 of a head whose
 * rows lie ld elements apart: D in a dense tensor, heads·D in a packed one)
 * into shared memory with padded rows; rows at or past S become zeros. */
template <typename T, int D, int ROWS, int THREADS>
static __device__ __forceinline__ void load_tile(T *dst, const T *src, int row0, int S, int ld)
{
    constexpr int CHUNKS = D / 8;                 /* 16-byte chunks per row */
    constexpr int ROWS_PER_PASS = THREADS / CHUNKS; /* each thread keeps one chunk column */
    static_assert(THREADS % CHUNKS == 0 && ROWS % ROWS_PER_PASS == 0, "tile rows and threads");
    const int r0 = threadIdx.x / CHUNKS, col = (threadIdx.x % CHUNKS) * 8;
    const T *g = src + (size_t)(row0 + r0) * ld + col;
    T *d = dst + r0 * (D + PAD) + col;
#pragma unroll
    for (int i = 0; i < ROWS / ROWS_PER_PASS; i++) {
        const bool in = row0 + r0 + i * ROWS_PER_PASS < S;
        cp_async_16(d + i * ROWS_PER_PASS * (D + PAD), in ? g + (size_t)i * ROWS_PER_PASS * ld : src, in ? 16 : 0);
    }
}

/* What one warp carries from key tile to key tile for its 16·MT rows; each
 * thread holds rows g and g + 8 of every m16 tile (the mma C layout). */
template <int D, int MT> struct warp_acc {
    float o[MT][D / 8][4]; /* unnormalised output */
    float row_max[MT][2];  /* running max of the raw scores, -inf before any key */
    float row_sum[MT][2];  /* this thread's share of the row's sum of exp2 terms */
};

/* One key tile for one warp: S = Q·Kᵀ, (mask), online softmax, O += P·V.
 * Tiles that need_mask may cross the causal diagonal or run past S; the
 * others are whole and below the diagonal, and skip the mask. (One body with
 * a run-time flag: two inlined bodies, one per case, spill registers.) */
template <typename T, int D, typename C>
static __device__ __forceinline__ void attend_tile(warp_acc<D, C::MT> &acc, const T *sQ, const T *sk,
                                                   const T *sv, int n0, int w0, int S, int causal,
                                                   float scale_log2, bool need_mask)
{
    constexpr int BN = C::BN, MT = C::MT, LD = D + PAD;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4; /* quad row, thread in quad */
    /* causal: a tile whose first key is past this warp's last row is all masked */
    if (need_mask && causal && n0 > w0 + 16 * MT - 1) return;

    /* S = Q·Kᵀ for the warp's 16·MT rows × BN keys, over the head dimension
     * in steps of 16 unrolled by KU (variants/NOTES.md, 'no spills, rescale
     * only when a max moved': the loop not unrolled was 5-7% slower). */
    constexpr int KU = C::KU > 0 ? C::KU : D / 16;
    float s[MT][BN / 8][4];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int j = 0; j < BN / 8; j++) s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.f;
#pragma unroll KU
    for (int kk = 0; kk < D / 16; kk++) {
        uint32_t qf[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) /* x4: rows 0-7/8-15 × dims kk*16 + 0-7/8-15 */
            ldmatrix_x4(qf[mt], sQ + (warp * 16 * MT + mt * 16 + (lane % 16)) * LD + kk * 16 + (lane / 16) * 8);
#pragma unroll
        for (int j = 0; j < BN / 8; j += 2) {
            /* x4 over keys j*8..j*8+15 and dims kk*16..+15: b0,b1 of tile j, b0,b1 of j+1 */
            uint32_t b[4];
            const int key = j * 8 + (lane % 8) + (lane / 16) * 8;
            const int dim = kk * 16 + ((lane / 8) % 2) * 8;
            ldmatrix_x4(b, sk + key * LD + dim);
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                mma_16816<T>(s[mt][j], qf[mt], b[0], b[1]);
                mma_16816<T>(s[mt][j + 1], qf[mt], b[2], b[3]);
            }
        }
    }

    if (need_mask) {
        /* key = n0 + 2t + c with c = j*8 + (e&1); row = w0 + g + r with r = mt*16 + (e>>1)*8 */
        const int key_limit = S - n0 - 2 * t; /* past S when c >= key_limit */
        const int diag = w0 + g - n0 - 2 * t; /* above the diagonal when c > diag + r */
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int j = 0; j < BN / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int c = j * 8 + (e & 1), r = mt * 16 + (e >> 1) * 8;
                    if (c >= key_limit || (causal && c > diag + r)) s[mt][j][e] = -INFINITY;
                }
    }

    /* online softmax: rows g (e = 0,1) and g + 8 (e = 2,3) of each m16 tile */
    float rescale[MT][2];
    bool max_moved = false;
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
        float new_max[2] = {acc.row_max[mt][0], acc.row_max[mt][1]};
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
            new_max[0] = fmaxf(new_max[0], fmaxf(s[mt][j][0], s[mt][j][1]));
            new_max[1] = fmaxf(new_max[1], fmaxf(s[mt][j][2], s[mt][j][3]));
        }
        float base[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            new_max[h] = fmaxf(new_max[h], __shfl_xor_sync(0xffffffffu, new_max[h], 1));
            new_max[h] = fmaxf(new_max[h], __shfl_xor_sync(0xffffffffu, new_max[h], 2));
            /* a row with nothing unmasked yet keeps max -inf: use 0 as its base */
            base[h] = new_max[h] == -INFINITY ? 0.f : new_max[h] * scale_log2;
            max_moved |= new_max[h] != acc.row_max[mt][h];
            rescale[mt][h] = ex2(acc.row_max[mt][h] * scale_log2 - base[h]);
            acc.row_max[mt][h] = new_max[h];
            acc.row_sum[mt][h] *= rescale[mt][h];
        }
#pragma unroll
        for (int j = 0; j < BN / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                s[mt][j][e] = ex2(fmaf(s[mt][j][e], scale_log2, -base[e >> 1]));
                acc.row_sum[mt][e >> 1] += s[mt][j][e];
            }
    }
    /* Once the running maxima settle, most tiles move none of the warp's:
     * then every rescale factor is exactly 1 and O is left alone. */
    if (__any_sync(0xffffffffu, max_moved)) {
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int j = 0; j < D / 8; j++) {
                acc.o[mt][j][0] *= rescale[mt][0];
                acc.o[mt][j][1] *= rescale[mt][0];
                acc.o[mt][j][2] *= rescale[mt][1];
                acc.o[mt][j][3] *= rescale[mt][1];
            }
    }

    /* O += P·V: P's accumulator fragments are the A operand, 16 keys at a time */
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++) {
        uint32_t a[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            a[mt][0] = pack2(s[mt][2 * kk][0], s[mt][2 * kk][1], (T *)nullptr);
            a[mt][1] = pack2(s[mt][2 * kk][2], s[mt][2 * kk][3], (T *)nullptr);
            a[mt][2] = pack2(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1], (T *)nullptr);
            a[mt][3] = pack2(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3], (T *)nullptr);
        }
#pragma unroll
        for (int j = 0; j < D / 8; j += 2) {
            /* x4.trans over keys kk*16..+15 and dims j*8..j*8+15 */
            uint32_t b[4];
            const int key = kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
            const int dim = j * 8 + (lane / 16) * 8;
            ldmatrix_x4_trans(b, sv + key * LD + dim);
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                mma_16816<T>(acc.o[mt][j], a[mt], b[0], b[1]);
                mma_16816<T>(acc.o[mt][j + 1], a[mt], b[2], b[3]);
            }
        }
    }
}

/* What the forward needs beyond the plain dense pass: where to keep the
 * statistics (LSE instances) and the ragged batch's sequence starts
 * (RAGGED instances: cu[b] is sequence b's first token, cu[batch] the
 * token count). The plain instance reads none of it. */
struct fwd_extra {
    float *lse;    /* log2-domain log-sum-exp per query row and head */
    const int *cu; /* batch + 1 sequence starts, on the device */
    int heads;
};

/* LSE: also keep each query row's softmax statistic for the backward,
 *     lse = max·scale·log2(e) + log2(sum),
 * the log-sum-exp of the scaled scores in log2 units, so that the backward
 * gets P = exp2(s·scale·log2(e) − lse) with one FFMA and one ex2. Dense:
 * [batch, heads, S]; ragged: [tokens, heads] (both: the index of the row in
 * Q seen as rows of D elements). RAGGED: a packed batch, one sequence per
 * batch entry (heads·D elements between a head's rows), blocks past the
 * sequence's end exit. Both false: the plain dense forward. */
template <typename T, int D, typename C, bool LSE = false, bool RAGGED = false>
static __global__ void __launch_bounds__(C::THREADS)
flash_fwd_kernel(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
                 T *__restrict__ o, int S, int causal, float scale_log2, int group, fwd_extra x)
{
    constexpr int BM = C::BM, BN = C::BN, MT = C::MT, THREADS = C::THREADS, LD = D + PAD;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sQ = reinterpret_cast<T *>(smem_raw);
    T *sK = sQ + BM * LD;     /* two stages */
    T *sV = sK + 2 * BN * LD; /* two stages */

    /* Causal grids put the heads on x and the row blocks on y, heaviest
     * (last) row blocks first, so every wave starts with the longest work. */
    const int m_block = causal ? gridDim.y - 1 - blockIdx.y : blockIdx.x;
    const int bh = causal ? blockIdx.x : blockIdx.y;
    const int m0 = m_block * BM;
    /* grouped K/V heads: query head bh reads K/V head bh / group. Rows of a
     * head lie ld elements apart; its statistic of row r is at
     * lse[stat0 + r·stat_ld]. */
    size_t head, kv_head, stat0 = 0;
    int ld_q = D, ld_kv = D, stat_ld = 1;
    if (RAGGED) {
        const int b = bh / x.heads, h = bh % x.heads, kv_heads = x.heads / group, start = x.cu[b];
        S = x.cu[b + 1] - start; /* this sequence's length */
        if (m0 >= S) return;
        ld_q = x.heads * D;
        ld_kv = kv_heads * D;
        head = ((size_t)start * x.heads + h) * D;
        kv_head = ((size_t)start * kv_heads + h / group) * D;
        stat0 = (size_t)start * x.heads + h;
        stat_ld = x.heads;
    } else {
        head = (size_t)bh * S * D;
        kv_head = (size_t)(bh / group) * S * D;
        stat0 = (size_t)bh * S;
    }
    const T *qh = q + head, *kh = k + kv_head, *vh = v + kv_head;
    const int w0 = m0 + (threadIdx.x / 32) * 16 * MT; /* this warp's first row */

    /* Key tiles: causal blocks stop at their last row. Tiles before
     * n_whole are full and below every row of the block: no masking. */
    const int n_end = causal ? min(S, m0 + BM) : S;
    const int n_tiles = (n_end + BN - 1) / BN;
    const int n_whole = min(causal ? (m0 + 1) / BN : n_tiles, S / BN);

    load_tile<T, D, BM, THREADS>(sQ, qh, m0, S, ld_q);
    load_tile<T, D, BN, THREADS>(sK, kh, 0, S, ld_kv);
    load_tile<T, D, BN, THREADS>(sV, vh, 0, S, ld_kv);
    cp_async_commit();

    warp_acc<D, MT> acc;
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
#pragma unroll
        for (int j = 0; j < D / 8; j++) acc.o[mt][j][0] = acc.o[mt][j][1] = acc.o[mt][j][2] = acc.o[mt][j][3] = 0.f;
        acc.row_max[mt][0] = acc.row_max[mt][1] = -INFINITY;
        acc.row_sum[mt][0] = acc.row_sum[mt][1] = 0.f;
    }

    for (int tile = 0; tile < n_tiles; tile++) {
        const int stage = tile & 1;
        if (tile + 1 < n_tiles) { /* prefetch the next tile into the other stage */
            load_tile<T, D, BN, THREADS>(sK + (stage ^ 1) * BN * LD, kh, (tile + 1) * BN, S, ld_kv);
            load_tile<T, D, BN, THREADS>(sV + (stage ^ 1) * BN * LD, vh, (tile + 1) * BN, S, ld_kv);
        }
        cp_async_commit();
        cp_async_wait<1>(); /* this tile (and Q) have landed */
        __syncthreads();
        const T *sk = sK + stage * BN * LD, *sv = sV + stage * BN * LD;
        attend_tile<T, D, C>(acc, sQ, sk, sv, tile * BN, w0, S, causal, scale_log2, tile >= n_whole);
        __syncthreads(); /* the stage is overwritten by the prefetch two tiles on */
    }

    /* finish the row sums across the quad, normalise, store rows < S */
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    T *oh = o + head;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float sum = acc.row_sum[mt][h];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            const int row = w0 + mt * 16 + g + h * 8;
            if (row >= S) continue;
            const float inv = 1.f / sum;
#pragma unroll
            for (int j = 0; j < D / 8; j++) {
                const uint32_t pair =
                    pack2(acc.o[mt][j][2 * h] * inv, acc.o[mt][j][2 * h + 1] * inv, (T *)nullptr);
                *reinterpret_cast<uint32_t *>(oh + (size_t)row * ld_q + j * 8 + 2 * t) = pair;
            }
            /* every row < S saw its own key at least, so its max is finite */
            if (LSE && t == 0) x.lse[stat0 + (size_t)row * stat_ld] = acc.row_max[mt][h] * scale_log2 + log2f(sum);
        }
}

#include "flash_mma_bwd.cuh"

/* ------------------------------------------------------------ the variant */

template <int D, typename C> static constexpr size_t smem_bytes(void)
{
    return (size_t)(C::BM + 4 * C::BN) * (D + PAD) * 2; /* Q, 2 stages of K and of V */
}

template <typename T, int D, typename C> static int prepare_cfg(void)
{
    const int bytes = (int)smem_bytes<D, C>();
    CUDA_TRY(cudaFuncSetAttribute(flash_fwd_kernel<T, D, C>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    CUDA_TRY(cudaFuncSetAttribute(flash_fwd_kernel<T, D, C, false, true>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    CUDA_TRY(cudaFuncSetAttribute(flash_fwd_kernel<T, D, C, true, false>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    CUDA_TRY(cudaFuncSetAttribute(flash_fwd_kernel<T, D, C, true, true>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return ATTN_OK;
}

/* One forward: the tensors; lse set for the backward's forward, cu (the
 * sequence starts on the device) for a ragged batch. */
struct fwd_call {
    const void *q, *k, *v;
    void *o;
    float *lse;
    const int *cu;
};

template <typename T, int D, typename C, bool LSE, bool RAGGED>
static int launch_fwd(const struct attn_problem *p, const struct fwd_call *a, cudaStream_t s)
{
    /* ragged: the row blocks of the longest sequence (seq_len) */
    const unsigned m_blocks = (unsigned)((p->seq_len + C::BM - 1) / C::BM), bh = (unsigned)(p->batch * p->heads);
    const dim3 grid = p->causal ? dim3(bh, m_blocks) : dim3(m_blocks, bh);
    const float scale_log2 = p->scale * 1.4426950408889634f; /* exp(x·scale) = exp2(x·scale·log2 e) */
    const fwd_extra x = {a->lse, a->cu, p->heads};
    flash_fwd_kernel<T, D, C, LSE, RAGGED><<<grid, C::THREADS, smem_bytes<D, C>(), s>>>(
        (const T *)a->q, (const T *)a->k, (const T *)a->v, (T *)a->o, p->seq_len, p->causal, scale_log2,
        p->heads / attn_kv_heads(p), x);
    LAUNCH_TRY("flash_fwd_kernel");
    return ATTN_OK;
}

template <typename T, int D, typename C>
static int launch_cfg(const struct attn_problem *p, const struct fwd_call *a, cudaStream_t s)
{
    if (a->cu) return a->lse ? launch_fwd<T, D, C, true, true>(p, a, s) : launch_fwd<T, D, C, false, true>(p, a, s);
    return a->lse ? launch_fwd<T, D, C, true, false>(p, a, s) : launch_fwd<T, D, C, false, false>(p, a, s);
}

/* Every compiled tile shape: "wWmMnN[uU]" = W warps × M m16 tiles per warp, N keys per
 * tile, [the head-dimension loop unrolled U times; else fully]. */
struct flash_cfg {
    const char *name;
    enum attn_dtype dtype;
    int head_dim;
    size_t smem;
    int (*prepare)(void);
    int (*launch)(const struct attn_problem *, const struct fwd_call *, cudaStream_t);
};

#define CFG(NAME, TYPE, DTYPE, D, W, M, N, U)                                                            \
    {NAME, DTYPE, D, smem_bytes<D, tile_cfg<W, M, N, U>>(), prepare_cfg<TYPE, D, tile_cfg<W, M, N, U>>, \
     launch_cfg<TYPE, D, tile_cfg<W, M, N, U>>}
#define CFG_BF16(NAME, D, W, M, N, U) CFG(NAME, __nv_bfloat16, ATTN_BF16, D, W, M, N, U)
#define CFG_FP16(NAME, D, W, M, N, U) CFG(NAME, __half, ATTN_FP16, D, W, M, N, U)

/* One tile shape per (dtype, head_dim) ships. The tuning lab (variants/lab/,
 * `make lab`) compiles this file again with FLASH_MMA_LAB, as the variant
 * flash_mma_lab: the other shapes too (bf16), picked with
 * ATTN_FLASH_MMA_TILE=NAME; the first entry of each (dtype, head_dim) stays
 * the default. */
static const struct flash_cfg cfgs[] = {
    CFG_BF16("w4m2n64", 128, 4, 2, 64, 0),
#ifdef FLASH_MMA_LAB
    CFG_BF16("w4m2n64u1", 128, 4, 2, 64, 1),
    CFG_BF16("w4m2n64u2", 128, 4, 2, 64, 2),
    CFG_BF16("w4m2n32", 128, 4, 2, 32, 0),
#endif
    CFG_BF16("w4m2n128", 64, 4, 2, 128, 0),
#ifdef FLASH_MMA_LAB
    CFG_BF16("w4m2n128u1", 64, 4, 2, 128, 1),
    CFG_BF16("w4m2n64", 64, 4, 2, 64, 0),
#endif
    CFG_FP16("w4m2n64", 128, 4, 2, 64, 0),
    CFG_FP16("w4m2n128", 64, 4, 2, 128, 0),
};
#define N_CFGS (sizeof cfgs / sizeof cfgs[0])

/* One backward: the tensors and the workspace's arrays (fwd_call's cu). */
struct bwd_call {
    const void *q, *k, *v, *o, *dout;
    void *dq, *dk, *dv;
    const float *lse;
    float *dsum, *dq_acc;
    const int *cu;
    size_t tokens; /* batch·seq_len dense, the lengths' sum ragged */
};

template <typename T, int D, typename C> static int prepare_bwd(void)
{
    CUDA_TRY(cudaFuncSetAttribute(flash_bwd_kernel<T, D, C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)bwd_smem_bytes<D, C>()));
    return ATTN_OK;
}

/* The rows of D between a token and the next of one head in Q (and dQ's
 * accumulator, dq_acc_at's ld): 1 dense [B,H,S], the heads ragged
 * [tokens,H]. */
static size_t token_step(const struct attn_problem *p) { return attn_is_varlen(p) ? (size_t)p->heads : 1; }

/* The backward's three launches on the stream, each checked. */
template <typename T, int D, typename C>
static int launch_bwd(const struct attn_problem *p, const struct bwd_call *a, cudaStream_t s)
{
    const size_t rows = a->tokens * p->heads; /* of Q, O, dO, dQ: the statistics' count */
    const size_t ld = token_step(p), acc_rows = rows + (C::VEC_DQ == 2 ? ld : 0); /* the accumulator's rows */
    constexpr int PREP_ROWS = 256 / (D / 8);
    flash_bwd_prep_kernel<T, D><<<(unsigned)((acc_rows + PREP_ROWS - 1) / PREP_ROWS), 256, 0, s>>>(
        (const T *)a->o, (const T *)a->dout, a->dsum, a->dq_acc, rows, acc_rows);
    LAUNCH_TRY("flash_bwd_prep_kernel");

    const int kv_heads = attn_kv_heads(p);
    const unsigned n_blocks = (unsigned)((p->seq_len + C::BN - 1) / C::BN), bkv = (unsigned)(p->batch * kv_heads);
    const dim3 grid = p->causal ? dim3(bkv, n_blocks) : dim3(n_blocks, bkv);
    flash_bwd_kernel<T, D, C><<<grid, C::THREADS, bwd_smem_bytes<D, C>(), s>>>(
        (const T *)a->q, (const T *)a->k, (const T *)a->v, (const T *)a->dout, a->lse, a->dsum, a->dq_acc,
        (T *)a->dk, (T *)a->dv, a->cu, p->seq_len, p->heads, p->heads / kv_heads, p->causal,
        p->scale * 1.4426950408889634f, p->scale);
    LAUNCH_TRY("flash_bwd_kernel");

    const size_t n8 = rows * D / 8;
    flash_bwd_dq_kernel<T, D, C::VEC_DQ><<<(unsigned)((n8 + 255) / 256), 256, 0, s>>>(a->dq_acc, (T *)a->dq, n8, ld,
                                                                                      p->scale);
    LAUNCH_TRY("flash_bwd_dq_kernel");
    return ATTN_OK;
}

/* Every compiled backward shape: "wWmM[bB]" = W warps of 16 keys (BN = 16·W),
 * M query rows per query tile, [B CTAs per SM asked of __launch_bounds__];
 * "pWmM": W warps in pairs sharing 32 keys (bwd_tile_pair); a trailing "l":
 * dQ one tile behind, one barrier per query tile (bwd_tile_cfg's LAG); then
 * "w": dQ branch-free on whole tiles (WHOLE_DQ); "v": dQ's accumulator
 * permuted for 16-byte reductions (VEC_DQ 1), "vq": and two tokens' rows
 * interleaved so that each reduction covers whole 128-byte lines (2). */
struct flash_bwd_cfg {
    const char *name;
    enum attn_dtype dtype;
    int head_dim;
    size_t smem;
    int (*prepare)(void);
    int (*launch)(const struct attn_problem *, const struct bwd_call *, cudaStream_t);
};

#define BWD_CFG(NAME, TYPE, DTYPE, D, W, M, WQ, B, PAIRS, LAG, WHOLE, VEC)                                \
    {NAME, DTYPE, D, bwd_smem_bytes<D, bwd_tile_cfg<W, M, WQ, B, PAIRS, LAG, WHOLE, VEC>>(),               \
     prepare_bwd<TYPE, D, bwd_tile_cfg<W, M, WQ, B, PAIRS, LAG, WHOLE, VEC>>,                              \
     launch_bwd<TYPE, D, bwd_tile_cfg<W, M, WQ, B, PAIRS, LAG, WHOLE, VEC>>}
#define BWD_BF16(NAME, D, W, M, WQ, B, PAIRS, LAG) BWD_CFG(NAME, __nv_bfloat16, ATTN_BF16, D, W, M, WQ, B, PAIRS, LAG, false, false)
#define BWD_FP16(NAME, D, W, M, WQ, B, PAIRS, LAG) BWD_CFG(NAME, __half, ATTN_FP16, D, W, M, WQ, B, PAIRS, LAG, false, false)
/* shapes with dQ branch-free on whole tiles (bwd_tile_cfg's WHOLE_DQ)
 * and/or its accumulator permuted for 16-byte reductions (VEC_DQ) */
#define BWD_BF16_DQ(NAME, D, W, M, WQ, B, PAIRS, LAG, WHOLE, VEC)                                         \
    BWD_CFG(NAME, __nv_bfloat16, ATTN_BF16, D, W, M, WQ, B, PAIRS, LAG, WHOLE, VEC)
#define BWD_FP16_DQ(NAME, D, W, M, WQ, B, PAIRS, LAG, WHOLE, VEC)                                         \
    BWD_CFG(NAME, __half, ATTN_FP16, D, W, M, WQ, B, PAIRS, LAG, WHOLE, VEC)

/* The backward shapes per (dtype, head_dim), fastest first: the first whose
 * shared memory the card allows ships (at D = 128, p8m64lwvq's 196 KB, at D
 * = 64 w8m128lwvq's 182 KB; w8m64's 159 KB and w8m64l's on a card with less,
 * such as the A100's 163 KB); the lab adds the
 * others (bf16), picked with ATTN_FLASH_MMA_BWD_TILE=NAME. The lab's
 * measurements behind the order: variants/NOTES.md. */
static const struct flash_bwd_cfg bwd_cfgs[] = {
    BWD_BF16_DQ("p8m64lwvq", 128, 8, 64, 2, 1, true, true, true, 2),
    BWD_BF16("w8m64", 128, 8, 64, 2, 1, false, false),
#ifdef FLASH_MMA_LAB
    BWD_BF16_DQ("p8m64lwv", 128, 8, 64, 2, 1, true, true, true, 1),
    BWD_BF16("p8m64l", 128, 8, 64, 2, 1, true, true),
    BWD_BF16("w4m64b2", 128, 4, 64, 2, 2, false, false),
    BWD_BF16("p8m64", 128, 8, 64, 2, 1, true, false),
    BWD_BF16("w8m64l", 128, 8, 64, 2, 1, false, true),
    BWD_BF16_DQ("p8m64lw", 128, 8, 64, 2, 1, true, true, true, false),
    BWD_BF16_DQ("p8m64lv", 128, 8, 64, 2, 1, true, true, false, true),
#endif
    BWD_BF16_DQ("w8m128lwvq", 64, 8, 128, 4, 1, false, true, true, 2),
    BWD_BF16("w8m64l", 64, 8, 64, 2, 1, false, true),
#ifdef FLASH_MMA_LAB
    BWD_BF16_DQ("w8m128lwv", 64, 8, 128, 4, 1, false, true, true, 1),
    BWD_BF16("w8m64", 64, 8, 64, 2, 1, false, false),
    BWD_BF16("w4m64b2", 64, 4, 64, 2, 2, false, false),
    BWD_BF16("p8m64", 64, 8, 64, 2, 1, true, false),
    BWD_BF16("p8m64l", 64, 8, 64, 2, 1, true, true),
    BWD_BF16_DQ("w8m64lw", 64, 8, 64, 2, 1, false, true, true, false),
    BWD_BF16_DQ("w8m64lv", 64, 8, 64, 2, 1, false, true, false, true),
    BWD_BF16_DQ("w8m64lwv", 64, 8, 64, 2, 1, false, true, true, true),
    BWD_BF16("w8m128l", 64, 8, 128, 4, 1, false, true),
#endif
    BWD_FP16_DQ("p8m64lwvq", 128, 8, 64, 2, 1, true, true, true, 2),
    BWD_FP16("w8m64", 128, 8, 64, 2, 1, false, false),
    BWD_FP16_DQ("w8m128lwvq", 64, 8, 128, 4, 1, false, true, true, 2),
    BWD_FP16("w8m64l", 64, 8, 64, 2, 1, false, true),
};
#define N_BWD_CFGS (sizeof bwd_cfgs / sizeof bwd_cfgs[0])

/* The tile shape for p: in the lab, ATTN_FLASH_MMA_TILE when set (NULL if it
 * names none compiled for p's dtype and head_dim); else the default. */
static const struct flash_cfg *pick_cfg(const struct attn_problem *p)
{
#ifdef FLASH_MMA_LAB
    const char *want = getenv("ATTN_FLASH_MMA_TILE");
#else
    const char *want = NULL;
#endif
    for (size_t i = 0; i < N_CFGS; i++) {
        const struct flash_cfg *c = &cfgs[i];
        if (c->dtype != p->dtype || c->head_dim != p->head_dim) continue;
        if (!want || !*want || strcmp(want, c->name) == 0) return c;
    }
    return NULL;
}

/* The backward's shape for p: in the lab, ATTN_FLASH_MMA_BWD_TILE's when
 * set (NULL if it names none compiled for p's dtype and head_dim); else the
 * first compiled for them whose shared memory fits smem_optin bytes. */
static const struct flash_bwd_cfg *pick_bwd_cfg(const struct attn_problem *p, size_t smem_optin)
{
#ifdef FLASH_MMA_LAB
    const char *want = getenv("ATTN_FLASH_MMA_BWD_TILE");
#else
    const char *want = NULL;
#endif
    for (size_t i = 0; i < N_BWD_CFGS; i++) {
        const struct flash_bwd_cfg *c = &bwd_cfgs[i];
        if (c->dtype != p->dtype || c->head_dim != p->head_dim) continue;
        if (want && *want) {
            if (strcmp(want, c->name) == 0) return c;
        } else if (c->smem <= smem_optin) {
            return c;
        }
    }
    return NULL;
}

/* The workspace, each array 256-byte aligned: a ragged batch's sequence
 * starts (batch + 1 ints); with a backward pass the statistics (lse and
 * Dsum, one float per query row and head) and dQ's fp32 accumulator (Q's
 * layout). A dense forward-only point needs none. */
struct ws_layout {
    size_t cu, lse, dsum, dq_acc, total;
};

static struct ws_layout layout_of(const struct attn_problem *p)
{
    struct ws_layout l = {0, 0, 0, 0, 0};
    size_t at = 0;
    if (attn_is_varlen(p)) {
        l.cu = at;
        at += gpu_round256(((size_t)p->batch + 1) * sizeof(int));
    }
    if (p->pass != ATTN_PASS_FWD) {
        const size_t rows = attn_tokens(p) * p->heads;
        l.lse = at;
        at += gpu_round256(rows * sizeof(float));
        l.dsum = at;
        at += gpu_round256(rows * sizeof(float));
        l.dq_acc = at;
        /* a token's rows more: the layout that pairs tokens' rows (dq_acc_at) */
        at += gpu_round256((rows + token_step(p)) * p->head_dim * sizeof(float));
    }
    l.total = at;
    return l;
}

struct flash_ctx {
    struct attn_problem p;
    const struct flash_cfg *cfg;
    const struct flash_bwd_cfg *bwd; /* NULL for a forward-only point */
    int *cu;                         /* ragged: the sequence starts; else NULL */
    float *lse, *dsum, *dq_acc;      /* with a backward pass */
    size_t tokens;
};

static const char *flash_supports(const struct attn_problem *p, const struct device_info *dev)
{
    if (!dev->present) return "no CUDA device";
    if (dev->cc_major < 8) return "needs compute capability 8.0 or newer (mma.sync bf16)";
    if (p->head_dim != 64 && p->head_dim != 128) return "head_dim 64 and 128 only";
    if (attn_is_decode(p)) return "decode (q_len below kv_len): not implemented yet (flash_decode runs it)";
    if (attn_is_paged(p)) return "a paged cache: not implemented (flash_decode reads one)";
    const struct flash_cfg *c = pick_cfg(p);
    if (!c) return "ATTN_FLASH_MMA_TILE names no tile shape compiled for this dtype and head_dim (lab)";
    if (c->smem > dev->smem_optin_bytes) return "not enough shared memory per block";
    if ((size_t)p->batch * p->heads > 65535) return "batch*heads above 65535";
    if (p->pass != ATTN_PASS_FWD) {
        const struct flash_bwd_cfg *b = pick_bwd_cfg(p, dev->smem_optin_bytes);
        if (!b)
            return "no backward shape compiled for this dtype and head_dim fits the card's shared memory (or "
                   "ATTN_FLASH_MMA_BWD_TILE names none, lab)";
        if (b->smem > dev->smem_optin_bytes) return "not enough shared memory per block for the backward";
    }
    return NULL;
}

static size_t flash_workspace_bytes(const struct attn_problem *p) { return layout_of(p).total; }

static int flash_setup(void **ctx, const struct attn_problem *p, void *workspace)
{
    const struct flash_cfg *cfg = pick_cfg(p);
    if (!cfg) return ATTN_FAIL(ATTN_ERR, "flash_mma: no tile shape for this dtype and head_dim");
    const struct flash_bwd_cfg *bwd = NULL;
    if (p->pass != ATTN_PASS_FWD) {
        size_t smem_optin = 0;
        ATTN_TRY(gpu_smem_optin(&smem_optin));
        bwd = pick_bwd_cfg(p, smem_optin);
        if (!bwd) return ATTN_FAIL(ATTN_ERR, "flash_mma: no backward shape for this dtype and head_dim");
        ATTN_TRY(bwd->prepare());
    }
    ATTN_TRY(cfg->prepare());
    const struct ws_layout l = layout_of(p);
    if (l.total && !workspace) return ATTN_FAIL(ATTN_ERR, "flash_mma: no workspace");
    unsigned char *ws = (unsigned char *)workspace;
    int *cu = attn_is_varlen(p) ? (int *)(ws + l.cu) : NULL;
    if (cu) ATTN_TRY(gpu_seq_starts_to_device(p, cu, "flash_mma's sequence starts"));
    if (bwd)
        attn_set_impl("tile %s bwd %s", cfg->name, bwd->name);
    else
        attn_set_impl("tile %s", cfg->name);
    struct flash_ctx *c = (struct flash_ctx *)malloc(sizeof *c);
    if (!c) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    c->p = *p;
    c->cfg = cfg;
    c->bwd = bwd;
    c->cu = cu;
    c->lse = bwd ? (float *)(ws + l.lse) : NULL;
    c->dsum = bwd ? (float *)(ws + l.dsum) : NULL;
    c->dq_acc = bwd ? (float *)(ws + l.dq_acc) : NULL;
    c->tokens = attn_tokens(p);
    *ctx = c;
    return ATTN_OK;
}

static int flash_run(void *ctx, const void *q, const void *k, const void *v, void *o,
                     attn_stream_t stream)
{
    const struct flash_ctx *c = (const struct flash_ctx *)ctx;
    const struct fwd_call a = {q, k, v, o, NULL, c->cu};
    attn_range_push("flash_fwd");
    const int rc = c->cfg->launch(&c->p, &a, (cudaStream_t)stream);
    attn_range_pop();
    return rc;
}

/* The backward's forward: the plain one that also keeps lse. */
static int flash_fwd_stats(void *ctx, const void *q, const void *k, const void *v, void *o,
                           attn_stream_t stream)
{
    const struct flash_ctx *c = (const struct flash_ctx *)ctx;
    if (!c->bwd) return ATTN_FAIL(ATTN_ERR, "flash_mma: set up for a forward-only point");
    const struct fwd_call a = {q, k, v, o, c->lse, c->cu};
    attn_range_push("flash_fwd_lse");
    const int rc = c->cfg->launch(&c->p, &a, (cudaStream_t)stream);
    attn_range_pop();
    return rc;
}

static int flash_backward(void *ctx, const void *q, const void *k, const void *v, const void *o,
                          const void *dout, void *dq, void *dk, void *dv, attn_stream_t stream)
{
    const struct flash_ctx *c = (const struct flash_ctx *)ctx;
    if (!c->bwd) return ATTN_FAIL(ATTN_ERR, "flash_mma: set up for a forward-only point");
    const struct bwd_call a = {q, k, v, o, dout, dq, dk, dv, c->lse, c->dsum, c->dq_acc, c->cu, c->tokens};
    attn_range_push("flash_bwd");
    const int rc = c->bwd->launch(&c->p, &a, (cudaStream_t)stream);
    attn_range_pop();
    return rc;
}

static void flash_teardown(void *ctx) { free(ctx); }

static const struct attn_backward_ops flash_backward_ops = {
    .forward = flash_fwd_stats,
    .backward = flash_backward,
};

#ifdef FLASH_MMA_LAB
extern "C" const struct attn_variant attn_variant_flash_mma_lab = {
    .name = "flash_mma_lab",
    .summary = "lab: flash_mma with every compiled tile shape (ATTN_FLASH_MMA_TILE=NAME)",
#else
extern "C" const struct attn_variant attn_variant_flash_mma = {
    .name = "flash_mma",
    .summary = "fused FlashAttention-2-style kernel: mma.sync, cp.async double buffer, online softmax",
#endif
    .fused = true,
    .supports = flash_supports,
    .workspace_bytes = flash_workspace_bytes,
    .setup = flash_setup,
    .run = flash_run,
    .teardown = flash_teardown,
    .framework = NULL,
    .backward = &flash_backward_ops,
};

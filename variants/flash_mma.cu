/* flash_mma.cu — fused FlashAttention-2-style forward on tensor cores
 * (mma.sync m16n8k16, sm_80+), bf16 and fp16 in, fp32 accumulation.
 *
 * A block of W warps owns BM = W·16·MT query rows of one (batch, head); each
 * warp owns 16·MT of them (MT m16 tiles). K and V stream through shared
 * memory in BN-key tiles, double-buffered with cp.async so the next tile
 * loads while this one is multiplied. Per tile, per warp:
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
 * group's blocks each load it (no sharing). No workspace.
 * Tile shapes are compiled per (dtype, head_dim) in cfgs[] below; the first
 * is the default, ATTN_FLASH_MMA_TILE=NAME picks another (tuning only).
 * variants/NOTES.md has the measurements behind the defaults. */
#include "../common/errors.h"
#include "../common/kernel_util.cuh"
#include "../common/nvtx.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PAD 8 /* 16-bit elements of padding per shared row */

/* ---------------------------------------------------------------- PTX */

/* 16 bytes global → shared; src_bytes 0 writes zeros (rows past S). */
static __device__ __forceinline__ void cp_async_16(void *dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
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
                 : "r"(smem_u32(p)));
}
static __device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_u32(p)));
}


/* d += a·b for one m16n8k16 tile, fp32 accumulators. */
template <typename T>
static __device__ __forceinline__ void mma_16816(float d[4], const uint32_t a[4], uint32_t b0,
                                                 uint32_t b1)
{
    if (is_bf16<T>::value)
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

/* ------------------------------------------------------------- kernel */

/* One tile shape: WARPS warps per block, each owning MT m16 tiles (16·MT
 * query rows), so a block owns BM = WARPS·16·MT rows; BN keys per K/V tile;
 * KU: how far S = Q·Kᵀ's loop over the head dimension is unrolled (0: fully). */
template <int WARPS_, int MT_, int BN_, int KU_ = 0> struct tile_cfg {
    static constexpr int WARPS = WARPS_, MT = MT_, BN = BN_, KU = KU_;
    static constexpr int THREADS = WARPS * 32, BM = WARPS * 16 * MT;
};

/* Copies `rows` rows of D elements (a tile starting at row0 of a head) into
 * shared memory with padded rows; rows at or past S become zeros. */
template <typename T, int D, int ROWS, int THREADS>
static __device__ __forceinline__ void load_tile(T *dst, const T *src, int row0, int S)
{
    constexpr int CHUNKS = D / 8;                 /* 16-byte chunks per row */
    constexpr int ROWS_PER_PASS = THREADS / CHUNKS; /* each thread keeps one chunk column */
    static_assert(THREADS % CHUNKS == 0 && ROWS % ROWS_PER_PASS == 0, "tile rows and threads");
    const int r0 = threadIdx.x / CHUNKS, col = (threadIdx.x % CHUNKS) * 8;
    const T *g = src + (size_t)(row0 + r0) * D + col;
    T *d = dst + r0 * (D + PAD) + col;
#pragma unroll
    for (int i = 0; i < ROWS / ROWS_PER_PASS; i++) {
        const bool in = row0 + r0 + i * ROWS_PER_PASS < S;
        cp_async_16(d + i * ROWS_PER_PASS * (D + PAD), in ? g + (size_t)i * ROWS_PER_PASS * D : src, in ? 16 : 0);
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

template <typename T, int D, typename C>
static __global__ void __launch_bounds__(C::THREADS)
flash_fwd_kernel(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
                 T *__restrict__ o, int S, int causal, float scale_log2, int group)
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
    /* grouped K/V heads: query head bh reads K/V head bh / group */
    const size_t head = (size_t)bh * S * D, kv_head = (size_t)(bh / group) * S * D;
    const T *qh = q + head, *kh = k + kv_head, *vh = v + kv_head;
    const int w0 = m0 + (threadIdx.x / 32) * 16 * MT; /* this warp's first row */

    /* Key tiles: causal blocks stop at their last row. Tiles before
     * n_whole are full and below every row of the block: no masking. */
    const int n_end = causal ? min(S, m0 + BM) : S;
    const int n_tiles = (n_end + BN - 1) / BN;
    const int n_whole = min(causal ? (m0 + 1) / BN : n_tiles, S / BN);

    load_tile<T, D, BM, THREADS>(sQ, qh, m0, S);
    load_tile<T, D, BN, THREADS>(sK, kh, 0, S);
    load_tile<T, D, BN, THREADS>(sV, vh, 0, S);
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
            load_tile<T, D, BN, THREADS>(sK + (stage ^ 1) * BN * LD, kh, (tile + 1) * BN, S);
            load_tile<T, D, BN, THREADS>(sV + (stage ^ 1) * BN * LD, vh, (tile + 1) * BN, S);
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
                *reinterpret_cast<uint32_t *>(oh + (size_t)row * D + j * 8 + 2 * t) = pair;
            }
        }
}

/* ------------------------------------------------------------ the variant */

template <int D, typename C> static constexpr size_t smem_bytes(void)
{
    return (size_t)(C::BM + 4 * C::BN) * (D + PAD) * 2; /* Q, 2 stages of K and of V */
}

template <typename T, int D, typename C> static int prepare_cfg(void)
{
    CUDA_TRY(cudaFuncSetAttribute(flash_fwd_kernel<T, D, C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem_bytes<D, C>()));
    return ATTN_OK;
}

template <typename T, int D, typename C>
static int launch_cfg(const struct attn_problem *p, const void *q, const void *k, const void *v, void *o,
                      cudaStream_t s)
{
    const unsigned m_blocks = (unsigned)((p->seq_len + C::BM - 1) / C::BM), bh = (unsigned)(p->batch * p->heads);
    const dim3 grid = p->causal ? dim3(bh, m_blocks) : dim3(m_blocks, bh);
    const float scale_log2 = p->scale * 1.4426950408889634f; /* exp(x·scale) = exp2(x·scale·log2 e) */
    flash_fwd_kernel<T, D, C><<<grid, C::THREADS, smem_bytes<D, C>(), s>>>(
        (const T *)q, (const T *)k, (const T *)v, (T *)o, p->seq_len, p->causal, scale_log2,
        p->heads / attn_kv_heads(p));
    LAUNCH_TRY("flash_fwd_kernel");
    return ATTN_OK;
}

/* Every compiled tile shape: "wWmMnN[uU]" = W warps × M m16 tiles per warp, N keys per
 * tile, [the head-dimension loop unrolled U times; else fully]. */
struct flash_cfg {
    const char *name;
    enum attn_dtype dtype;
    int head_dim;
    size_t smem;
    int (*prepare)(void);
    int (*launch)(const struct attn_problem *, const void *, const void *, const void *, void *, cudaStream_t);
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

struct flash_ctx {
    struct attn_problem p;
    const struct flash_cfg *cfg;
};

static const char *flash_supports(const struct attn_problem *p, const struct device_info *dev)
{
    if (!dev->present) return "no CUDA device";
    if (dev->cc_major < 8) return "needs compute capability 8.0 or newer (mma.sync bf16)";
    if (p->head_dim != 64 && p->head_dim != 128) return "head_dim 64 and 128 only";
    if (attn_is_varlen(p)) return "ragged batches (varlen): not implemented yet";
    const struct flash_cfg *c = pick_cfg(p);
    if (!c) return "ATTN_FLASH_MMA_TILE names no tile shape compiled for this dtype and head_dim (lab)";
    if (c->smem > dev->smem_optin_bytes) return "not enough shared memory per block";
    if ((size_t)p->batch * p->heads > 65535) return "batch*heads above 65535";
    return NULL;
}

static int flash_setup(void **ctx, const struct attn_problem *p, void *workspace)
{
    (void)workspace;
    const struct flash_cfg *cfg = pick_cfg(p);
    if (!cfg) return ATTN_FAIL(ATTN_ERR, "flash_mma: no tile shape for this dtype and head_dim");
    ATTN_TRY(cfg->prepare());
    attn_set_impl("tile %s", cfg->name);
    struct flash_ctx *c = (struct flash_ctx *)malloc(sizeof *c);
    if (!c) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    c->p = *p;
    c->cfg = cfg;
    *ctx = c;
    return ATTN_OK;
}

static int flash_run(void *ctx, const void *q, const void *k, const void *v, void *o,
                     attn_stream_t stream)
{
    const struct flash_ctx *c = (const struct flash_ctx *)ctx;
    attn_range_push("flash_fwd");
    const int rc = c->cfg->launch(&c->p, q, k, v, o, (cudaStream_t)stream);
    attn_range_pop();
    return rc;
}

static void flash_teardown(void *ctx) { free(ctx); }

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
    .workspace_bytes = attn_no_workspace,
    .setup = flash_setup,
    .run = flash_run,
    .teardown = flash_teardown,
    .framework = NULL,
    .backward = NULL, /* none: its backward points are skipped, the row says why */
};

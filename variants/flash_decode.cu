/* flash_decode.cu — decode attention: a few new query tokens per sequence
 * (q_len 1–8) against its whole cached K and V, on tensor cores (mma.sync
 * m16n8k16, sm_80+), bf16 and fp16 in, fp32 accumulation.
 *
 * Decode moves bytes, not FLOPs: every key and value of the cache is read
 * once per step and used by only the G·q_len query rows of its K/V head
 * (G = heads / kv_heads). So:
 *
 * - One CTA serves all G·q_len rows of one K/V head (up to 64; more take
 *   more row blocks): each K and V byte is read once for the whole group,
 *   the rows (G heads × q_len tokens, contiguous in Q and O) stacked as the
 *   M dimension of the products, padded to a multiple of 16.
 * - The cache is split across CTAs (split-KV, "flash-decoding"): with few
 *   sequences or K/V heads, batch·kv_heads CTAs would leave most SMs idle,
 *   so each (sequence, K/V head) is cut into `splits` runs of whole 64-key
 *   chunks, as many as fit one wave of resident CTAs; each CTA writes its rows'
 *   partial output, normalised, and their log-sum-exp, and a second kernel
 *   combines the splits (weights 2^(lse − max)). With one split the first
 *   kernel writes O itself and the second is not launched.
 * - K and V stream through shared memory in 64-key chunks, three stages
 *   deep with cp.async (a contiguous cache's copies asking the L2 for 256
 *   bytes at a time). 4 warps: with R m16 row tiles (R = 1, 2, 4) the
 *   warps form R row tiles × 4/R key groups; each warp computes its 16 rows
 *   against its 16·R keys of a chunk (S = Q·Kᵀ, Q's fragments held in
 *   registers for the whole run), an online softmax in fp32 (log2 domain,
 *   scale folded in) and O += P·V with P re-packed from S's accumulators,
 *   as flash_mma's forward. At the end the key groups' partials meet in
 *   shared memory.
 * - Causal is aligned bottom-right (attn.h): query token i of q_len sees
 *   keys 0 .. kv_len − q_len + i; only the last chunk or two are masked.
 *
 * Layouts (attn.h): Q and O [batch, heads, q_len, head_dim], K and V
 * [batch, kv_heads, kv_len, head_dim], or a paged cache [pages, page,
 * kv_heads, head_dim] read through the page table: each key row's address
 * from its page's entry, so pages of any size (16 tokens: four pages a
 * chunk) stream as a contiguous cache does. A ragged cache (each
 * sequence its own cached length, attn.h) gives each CTA its sequence's
 * length: its chunks, its causal limit; its splits are runs of one length
 * over the whole batch (not the longest sequence's), and a split past a
 * sequence's end writes an empty part (log-sum-exp −inf) that the combine
 * weighs 0. Extra memory:
 * with more than one split, splits·batch·heads·q_len·(head_dim + 1) floats;
 * with a paged cache, its table (batch·pages per sequence ints); with a
 * ragged one, its lengths (batch ints). */
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

#define DEC_PAD 8       /* 16-bit elements of padding per shared row */
#define DEC_BN 64       /* keys per chunk */
#define DEC_STAGES 3    /* chunks in flight */
#define DEC_WARPS 4
#define DEC_THREADS (DEC_WARPS * 32)
#define DEC_MAX_ROWS 64 /* query rows per CTA: 4 m16 tiles */
#define DEC_MAX_Q 8     /* query tokens per sequence */

/* A ragged cache's runs: about this many to each resident CTA slot over
 * the whole batch (plan_of). */
#define DEC_RAGGED_RUNS 8

/* A choice as shipped, or in the lab (variants/lab/README.md) as its
 * switch, the environment variable `name`, says when set. */
static int lab_switch(const char *name, int shipped)
{
#ifdef FLASH_DECODE_LAB
    const char *e = getenv(name);
    if (e && *e) return atoi(e);
#else
    (void)name;
#endif
    return shipped;
}
/* Whether a contiguous cache's copies ask the L2 for 256 bytes (the
 * sector's neighbours, which the stream of whole rows wants next). */
static bool l2_prefetch(void) { return lab_switch("ATTN_FLASH_DECODE_L2", 1) != 0; }
/* Whether, with more than one split, the last CTA of each row block to
 * finish combines the splits (an arrival count per row block in the
 * workspace) instead of a second kernel: off as shipped. */
static bool fold_combine(void) { return lab_switch("ATTN_FLASH_DECODE_FOLD", 0) != 0; }
#ifdef FLASH_DECODE_LAB
/* Whether a paged cache's copies find each row's page by stepping from one
 * division per chunk instead of dividing for every row: the lab's only
 * (its kernel instances are compiled there alone). */
static bool page_step(void) { return lab_switch("ATTN_FLASH_DECODE_PAGE_STEP", 0) != 0; }
#endif
/* A ragged cache's runs per resident slot (plan_of; 0: the longest
 * sequence's plan). */
static int ragged_runs(void) { return lab_switch("ATTN_FLASH_DECODE_RUNS", DEC_RAGGED_RUNS); }

/* R m16 row tiles: the warps' split into row tiles and key groups. */
template <int D, int R> struct dec_cfg {
    static constexpr int ROWS = 16 * R;         /* the CTA's rows, padded */
    static constexpr int KEY_GROUPS = DEC_WARPS / R;
    static constexpr int KPW = DEC_BN / KEY_GROUPS; /* keys per warp and chunk: 16·R */
    static constexpr int LD = D + DEC_PAD;
    static constexpr int STAGE = 2 * DEC_BN * LD;   /* K then V, 16-bit elements */
    static constexpr int OLD = D + 8;               /* a partial's row in floats, padded */
    static constexpr size_t TILES = (size_t)DEC_STAGES * STAGE * 2;
    static constexpr size_t PARTS = (size_t)DEC_WARPS * 16 * (OLD + 2) * 4;
    /* Q waits in the last stage until the warps hold it in registers; the
     * partials reuse the stages once the last chunk is done. At D = 128,
     * 102 KB: two CTAs per SM. */
    static constexpr size_t SMEM = TILES > PARTS ? TILES : PARTS;
    static_assert(KPW % 16 == 0 && DEC_BN % KEY_GROUPS == 0, "tile shape");
    static_assert(ROWS * LD <= STAGE, "Q fits a stage");
};

struct dec_args {
    const void *q, *k, *v;
    void *o;
    const int *table; /* a paged cache's page table (device), else NULL */
    const int *lens;  /* a ragged cache's lengths (device), else NULL: kv_len each */
    int page, pages_per_seq;
    float *part_o;   /* splits > 1: [split][row][D], normalised */
    int *arrivals;   /* fold_combine: the CTAs done per row block, else NULL */
    float *part_lse; /* [split][row], log2 units, -inf for a row with no key */
    int heads, kv_heads, q_len, kv_len, causal;
    int group_rows;       /* G·q_len: the rows of one K/V head */
    int row_blocks;       /* CTAs per K/V head along the rows */
    int chunks_per_split; /* 64-key chunks per split */
    int splits;
    size_t total_rows;    /* batch·heads·q_len */
    float scale_log2;
};

/* `n` rows of D elements from src (D apart) into shared rows LD apart;
 * rows n .. ROWS-1 become zeros. L2P: with the L2's 256-byte prefetch. */
template <typename T, int D, int ROWS, bool L2P = false>
static __device__ __forceinline__ void load_rows(T *dst, const T *src, int n)
{
    constexpr int CHUNKS = D / 8, PER_PASS = DEC_THREADS / CHUNKS, LD = D + DEC_PAD;
    static_assert(DEC_THREADS % CHUNKS == 0, "threads per row");
    const int r0 = threadIdx.x / CHUNKS, col = (threadIdx.x % CHUNKS) * 8;
#pragma unroll
    for (int r = r0; r < ROWS; r += PER_PASS) {
        const bool in = r < n;
        if constexpr (L2P)
            cp_async_16_l2(dst + r * LD + col, in ? src + (size_t)r * D + col : src, in ? 16 : 0);
        else
            cp_async_16(dst + r * LD + col, in ? src + (size_t)r * D + col : src, in ? 16 : 0);
    }
}

/* L2P: a contiguous cache's K and V copies with the L2's 256-byte prefetch
 * (l2_prefetch; a paged cache's rows, a page apart, go without: measured
 * slower at 16 tokens a page). FOLD: with more than one split, the last
 * CTA of the row block to finish combines the splits (fold_combine).
 * PSTEP: a paged cache's rows located by stepping (page_step). */
template <typename T, int D, int R, bool L2P = false, bool FOLD = false, bool PSTEP = false>
static __global__ void __launch_bounds__(DEC_THREADS) flash_decode_kernel(const dec_args a)
{
    using C = dec_cfg<D, R>;
    constexpr int LD = C::LD, KPW = C::KPW;
    extern __shared__ __align__(16) unsigned char smem[];
    T *sKV = (T *)smem;
    T *sQ = sKV + (DEC_STAGES - 1) * C::STAGE; /* the stage the prologue leaves free */

    const int split = blockIdx.x, b = blockIdx.z;
    const int kvh = blockIdx.y / a.row_blocks, rb = blockIdx.y % a.row_blocks;
    const int row0 = rb * DEC_MAX_ROWS; /* first of this CTA's rows within the K/V head's group */
    const int rows = min(a.group_rows - row0, C::ROWS);
    const int G = a.heads / a.kv_heads, S = a.lens ? a.lens[b] : a.kv_len, L = a.q_len;
    /* the group's rows are contiguous in Q and O: heads kvh·G .. kvh·G + G − 1, q_len each */
    const size_t qrow0 = ((size_t)b * a.heads + (size_t)kvh * G) * L + row0;
    const size_t kv_off = ((size_t)b * a.kv_heads + kvh) * (size_t)a.kv_len * D; /* kv_len rows a head */

    const int nchunks = (S + DEC_BN - 1) / DEC_BN;
    const int c0 = split * a.chunks_per_split, c1 = min(c0 + a.chunks_per_split, nchunks);

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int rt = warp % R, kbase = (warp / R) * KPW;

    load_rows<T, D, C::ROWS>(sQ, (const T *)a.q + qrow0 * D, rows);
    cp_async_commit();
    /* K and V of chunk c into stage st; keys past S as zeros. Token t's
     * row: kv_off + t·D in a contiguous cache; in a paged one slot t % page
     * of page table[b·pages_per_seq + t / page], its K/V head's D elements
     * at (slot's row)·kv_heads + kvh. */
    auto load_chunk = [&](int c, int st) {
        T *sk = sKV + st * C::STAGE, *sv = sk + DEC_BN * LD;
        const int n = min(DEC_BN, S - c * DEC_BN);
        if (!a.table) {
            load_rows<T, D, DEC_BN, L2P>(sk, (const T *)a.k + kv_off + (size_t)c * DEC_BN * D, n);
            load_rows<T, D, DEC_BN, L2P>(sv, (const T *)a.v + kv_off + (size_t)c * DEC_BN * D, n);
            return;
        }
        constexpr int CHUNKS = D / 8, PER_PASS = DEC_THREADS / CHUNKS;
        const int r0 = threadIdx.x / CHUNKS, col = (threadIdx.x % CHUNKS) * 8;
        const int *pages = a.table + (size_t)b * a.pages_per_seq;
        if constexpr (PSTEP) {
            /* the thread's first token's page and slot by one division, then
             * each next row PER_PASS tokens on: the slot carried over pages */
            const int t0 = c * DEC_BN + r0;
            int pg = t0 / a.page, slot = t0 % a.page;
#pragma unroll
            for (int r = r0; r < DEC_BN; r += PER_PASS) {
                const bool in = r < n;
                const size_t row = in ? ((size_t)pages[pg] * a.page + slot) * a.kv_heads + kvh : 0;
                cp_async_16(sk + r * LD + col, (const T *)a.k + row * D + col, in ? 16 : 0);
                cp_async_16(sv + r * LD + col, (const T *)a.v + row * D + col, in ? 16 : 0);
                for (slot += PER_PASS; slot >= a.page; slot -= a.page) pg++;
            }
        } else {
#pragma unroll
            for (int r = r0; r < DEC_BN; r += PER_PASS) {
                const int t = c * DEC_BN + r;
                const bool in = r < n;
                const size_t row = in ? ((size_t)pages[t / a.page] * a.page + t % a.page) * a.kv_heads + kvh : 0;
                cp_async_16(sk + r * LD + col, (const T *)a.k + row * D + col, in ? 16 : 0);
                cp_async_16(sv + r * LD + col, (const T *)a.v + row * D + col, in ? 16 : 0);
            }
        }
    };
#pragma unroll
    for (int st = 0; st < DEC_STAGES - 1; st++) {
        if (c0 + st < c1) load_chunk(c0 + st, st);
        cp_async_commit();
    }

    float o[D / 8][4];
#pragma unroll
    for (int j = 0; j < D / 8; j++) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};
    uint32_t qf[D / 16][4];
    /* the token of each of this thread's two rows, for the causal limit */
    const int tok0 = (row0 + rt * 16 + g) % L, tok1 = (row0 + rt * 16 + g + 8) % L;
    const int last_full = a.causal ? S - L + 1 : S; /* keys below it are seen by every row */

    for (int c = c0; c < c1; c++) {
        cp_async_wait<DEC_STAGES - 2>();
        __syncthreads(); /* chunk c landed; every warp is done with chunk c − 1's stage */
        if (c == c0) {
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++)
                ldmatrix_x4(qf[kk], sQ + (rt * 16 + (lane % 16)) * LD + kk * 16 + (lane / 16) * 8);
            __syncthreads(); /* Q's stage is free for the load below */
        }
        if (c + DEC_STAGES - 1 < c1) load_chunk(c + DEC_STAGES - 1, (c - c0 + DEC_STAGES - 1) % DEC_STAGES);
        cp_async_commit();
        const T *sk = sKV + ((c - c0) % DEC_STAGES) * C::STAGE, *sv = sk + DEC_BN * LD;

        /* S = Q·Kᵀ: 16 rows × KPW keys */
        float s[KPW / 8][4];
#pragma unroll
        for (int j = 0; j < KPW / 8; j++) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++)
#pragma unroll
            for (int j = 0; j < KPW / 8; j += 2) {
                uint32_t bf[4];
                const int key = kbase + j * 8 + (lane % 8) + (lane / 16) * 8;
                ldmatrix_x4(bf, sk + key * LD + kk * 16 + ((lane / 8) % 2) * 8);
                mma_16816<T>(s[j], qf[kk], bf[0], bf[1]);
                mma_16816<T>(s[j + 1], qf[kk], bf[2], bf[3]);
            }
        /* keys past S, and past a row's causal limit, to -inf */
        const int n0 = c * DEC_BN + kbase;
        if (n0 + KPW > last_full) {
#pragma unroll
            for (int j = 0; j < KPW / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int key = n0 + j * 8 + 2 * t + (e & 1);
                    const int limit = a.causal ? S - L + ((e >> 1) ? tok1 : tok0) : S - 1;
                    if (key > limit || key >= S) s[j][e] = -INFINITY;
                }
        }

        /* online softmax of rows g (e = 0, 1) and g + 8 (e = 2, 3) */
        float new_max[2] = {row_max[0], row_max[1]}, base[2], rescale[2];
#pragma unroll
        for (int j = 0; j < KPW / 8; j++) {
            new_max[0] = fmaxf(new_max[0], fmaxf(s[j][0], s[j][1]));
            new_max[1] = fmaxf(new_max[1], fmaxf(s[j][2], s[j][3]));
        }
        bool moved = false;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            new_max[h] = fmaxf(new_max[h], __shfl_xor_sync(0xffffffffu, new_max[h], 1));
            new_max[h] = fmaxf(new_max[h], __shfl_xor_sync(0xffffffffu, new_max[h], 2));
            base[h] = new_max[h] == -INFINITY ? 0.f : new_max[h] * a.scale_log2;
            moved |= new_max[h] != row_max[h];
            rescale[h] = ex2(row_max[h] * a.scale_log2 - base[h]);
            row_max[h] = new_max[h];
            row_sum[h] *= rescale[h];
        }
#pragma unroll
        for (int j = 0; j < KPW / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                s[j][e] = ex2(fmaf(s[j][e], a.scale_log2, -base[e >> 1]));
                row_sum[e >> 1] += s[j][e];
            }
        if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
            for (int j = 0; j < D / 8; j++) {
                o[j][0] *= rescale[0];
                o[j][1] *= rescale[0];
                o[j][2] *= rescale[1];
                o[j][3] *= rescale[1];
            }
        }

        /* O += P·V, 16 keys at a time */
#pragma unroll
        for (int kk = 0; kk < KPW / 16; kk++) {
            uint32_t pa[4];
            pa[0] = pack2(s[2 * kk][0], s[2 * kk][1], (T *)nullptr);
            pa[1] = pack2(s[2 * kk][2], s[2 * kk][3], (T *)nullptr);
            pa[2] = pack2(s[2 * kk + 1][0], s[2 * kk + 1][1], (T *)nullptr);
            pa[3] = pack2(s[2 * kk + 1][2], s[2 * kk + 1][3], (T *)nullptr);
#pragma unroll
            for (int j = 0; j < D / 8; j += 2) {
                uint32_t bf[4];
                const int key = kbase + kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
                ldmatrix_x4_trans(bf, sv + key * LD + j * 8 + (lane / 16) * 8);
                mma_16816<T>(o[j], pa, bf[0], bf[1]);
                mma_16816<T>(o[j + 1], pa, bf[2], bf[3]);
            }
        }
    }
    cp_async_wait<0>();
    __syncthreads(); /* every warp is done with the stages: the partials take their room */

    /* each warp's partial: o unnormalised, its row max (raw score) and sum */
    float *po = (float *)smem;
    float *pm = po + DEC_WARPS * 16 * C::OLD, *pl = pm + DEC_WARPS * 16;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 1);
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 2);
    }
    float *mine = po + warp * 16 * C::OLD;
#pragma unroll
    for (int j = 0; j < D / 8; j++) {
        *(float2 *)(mine + g * C::OLD + j * 8 + 2 * t) = make_float2(o[j][0], o[j][1]);
        *(float2 *)(mine + (g + 8) * C::OLD + j * 8 + 2 * t) = make_float2(o[j][2], o[j][3]);
    }
    if (t == 0) {
        pm[warp * 16 + g] = row_max[0];
        pm[warp * 16 + g + 8] = row_max[1];
        pl[warp * 16 + g] = row_sum[0];
        pl[warp * 16 + g + 8] = row_sum[1];
    }
    __syncthreads();

    /* the key groups of each row tile combined, two columns per thread;
     * then O, or this split's part */
    for (int idx = threadIdx.x; idx < rows * (D / 2); idx += DEC_THREADS) {
        const int r = idx / (D / 2), d = 2 * (idx % (D / 2)), tile = r / 16, lr = r % 16;
        float m = -INFINITY;
#pragma unroll
        for (int kg = 0; kg < C::KEY_GROUPS; kg++) m = fmaxf(m, pm[(tile + kg * R) * 16 + lr]);
        float sum = 0.f, acc0 = 0.f, acc1 = 0.f;
        if (m != -INFINITY) {
#pragma unroll
            for (int kg = 0; kg < C::KEY_GROUPS; kg++) {
                const int w = tile + kg * R;
                const float wgt = ex2((pm[w * 16 + lr] - m) * a.scale_log2); /* 0 for a group that saw no key */
                const float2 part = *(const float2 *)(po + (w * 16 + lr) * C::OLD + d);
                sum += pl[w * 16 + lr] * wgt;
                acc0 += part.x * wgt;
                acc1 += part.y * wgt;
            }
        }
        const float inv = sum > 0.f ? 1.f / sum : 0.f;
        const size_t row = qrow0 + r;
        if (a.splits == 1) {
            *(uint32_t *)((T *)a.o + row * D + d) = pack2(acc0 * inv, acc1 * inv, (T *)nullptr);
        } else {
            *(float2 *)(a.part_o + ((size_t)split * a.total_rows + row) * D + d) = make_float2(acc0 * inv, acc1 * inv);
            if (d == 0)
                a.part_lse[(size_t)split * a.total_rows + row] = sum > 0.f ? m * a.scale_log2 + log2f(sum) : -INFINITY;
        }
    }
    if constexpr (FOLD) {
        if (a.splits == 1) return;
        /* this CTA's parts written and visible device-wide, then counted;
         * the last of the row block's splits combines them (weights
         * 2^(lse_s − max lse), as the combine kernel) and resets the count */
        __shared__ int last;
        __shared__ float row_max[DEC_MAX_ROWS]; /* each row's largest lse over the splits */
        __threadfence();
        __syncthreads();
        const size_t slot = (size_t)b * gridDim.y + blockIdx.y;
        if (threadIdx.x == 0) last = atomicAdd(&a.arrivals[slot], 1) == a.splits - 1;
        __syncthreads();
        if (!last) return;
        __threadfence();
        for (int r = threadIdx.x; r < rows; r += DEC_THREADS) {
            float mx = -INFINITY;
            for (int sp = 0; sp < a.splits; sp++)
                mx = fmaxf(mx, __ldcg(a.part_lse + (size_t)sp * a.total_rows + qrow0 + r));
            row_max[r] = mx;
        }
        __syncthreads();
        for (int idx = threadIdx.x; idx < rows * D; idx += DEC_THREADS) {
            const size_t row = qrow0 + idx / D;
            const int d = idx % D;
            const float mx = row_max[idx / D];
            float sum = 0.f, acc = 0.f;
            if (mx != -INFINITY)
                for (int sp = 0; sp < a.splits; sp++) {
                    const float w = ex2(__ldcg(a.part_lse + (size_t)sp * a.total_rows + row) - mx);
                    sum += w;
                    acc += w * __ldcg(a.part_o + ((size_t)sp * a.total_rows + row) * D + d);
                }
            ((T *)a.o)[row * D + d] = from_float(sum > 0.f ? acc / sum : 0.f, (T *)nullptr);
        }
        if (threadIdx.x == 0) a.arrivals[slot] = 0;
    }
}

/* O of each row from the splits' parts: weights 2^(lse_s − max lse). One
 * block of D threads per row: the splits' lse read at once into shared
 * memory (one pass, not one dependent load a split), their max over the
 * block, then each thread's column summed over the splits eight loads at a
 * time. Shared memory: splits floats. */
template <typename T, int D>
static __global__ void __launch_bounds__(D) flash_decode_combine_kernel(const dec_args a)
{
    extern __shared__ float wgt[];
    __shared__ float warp_max[D / 32];
    const size_t row = blockIdx.x;
    const int d = threadIdx.x;
    float m = -INFINITY;
    for (int s = d; s < a.splits; s += D) {
        wgt[s] = a.part_lse[(size_t)s * a.total_rows + row];
        m = fmaxf(m, wgt[s]);
    }
#pragma unroll
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (d % 32 == 0) warp_max[d / 32] = m;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < D / 32; i++) m = fmaxf(m, warp_max[i]);
    for (int s = d; s < a.splits; s += D) wgt[s] = m == -INFINITY ? 0.f : ex2(wgt[s] - m);
    __syncthreads();
    float sum = 0.f, acc = 0.f;
    const float *part = a.part_o + row * D + d;
    const size_t stride = a.total_rows * D;
#pragma unroll 8
    for (int s = 0; s < a.splits; s++) {
        sum += wgt[s];
        acc += wgt[s] * part[s * stride];
    }
    ((T *)a.o)[row * D + d] = from_float(sum > 0.f ? acc / sum : 0.f, (T *)nullptr);
}

/* ------------------------------------------------------------------ host */

/* Row tiles for a CTA of n rows. */
static int tiles_for(int n) { return n <= 16 ? 1 : n <= 32 ? 2 : 4; }

template <typename T, int D, int R, bool FOLD> static void launch_kernel(const dec_args &a, dim3 grid, cudaStream_t s)
{
    if (!a.table && l2_prefetch())
        flash_decode_kernel<T, D, R, true, FOLD><<<grid, DEC_THREADS, dec_cfg<D, R>::SMEM, s>>>(a);
#ifdef FLASH_DECODE_LAB
    else if (a.table && page_step() && !FOLD)
        flash_decode_kernel<T, D, R, false, false, true><<<grid, DEC_THREADS, dec_cfg<D, R>::SMEM, s>>>(a);
#endif
    else
        flash_decode_kernel<T, D, R, false, FOLD><<<grid, DEC_THREADS, dec_cfg<D, R>::SMEM, s>>>(a);
}

template <typename T, int D, int R> static int launch_rows(const dec_args &a, dim3 grid, cudaStream_t s)
{
#ifdef FLASH_DECODE_LAB
    if (a.arrivals)
        launch_kernel<T, D, R, true>(a, grid, s);
    else
#endif
        launch_kernel<T, D, R, false>(a, grid, s);
    LAUNCH_TRY("flash_decode_kernel");
    return ATTN_OK;
}

/* Their shared memory allowed to the instances of every row-tile count
 * with these switches. */
template <typename T, int D, bool L2P, bool FOLD, bool PSTEP = false> static int allow_smem(void)
{
    CUDA_TRY(cudaFuncSetAttribute(flash_decode_kernel<T, D, 1, L2P, FOLD, PSTEP>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dec_cfg<D, 1>::SMEM));
    CUDA_TRY(cudaFuncSetAttribute(flash_decode_kernel<T, D, 2, L2P, FOLD, PSTEP>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dec_cfg<D, 2>::SMEM));
    CUDA_TRY(cudaFuncSetAttribute(flash_decode_kernel<T, D, 4, L2P, FOLD, PSTEP>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dec_cfg<D, 4>::SMEM));
    return ATTN_OK;
}

/* The shared memory every instance of (T, D) asks for, allowed once at
 * setup (an attribute set while a stream is being captured is no launch). */
template <typename T, int D> static int prepare(void)
{
    ATTN_TRY((allow_smem<T, D, false, false>()));
    ATTN_TRY((allow_smem<T, D, true, false>()));
#ifdef FLASH_DECODE_LAB
    ATTN_TRY((allow_smem<T, D, false, true>()));
    ATTN_TRY((allow_smem<T, D, true, true>()));
    ATTN_TRY((allow_smem<T, D, false, false, true>()));
#endif
    return ATTN_OK;
}

/* CTAs of the (T, D, R) instance the GPU holds at once: the occupancy
 * calculator's blocks per SM (after its shared memory is allowed) times
 * the SMs, asked once; two per SM on the H200's 132 if either cannot be
 * asked. */
template <typename T, int D, int R> static long resident_ctas(void)
{
    static long resident; /* one device per process: asked once per instance */
    if (resident) return resident;
    int per_sm = 0, sms = 0;
    if (prepare<T, D>() != ATTN_OK ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, flash_decode_kernel<T, D, R>, DEC_THREADS,
                                                      dec_cfg<D, R>::SMEM) != cudaSuccess ||
        per_sm < 1) {
        (void)cudaGetLastError();
        per_sm = 2;
    }
    if (gpu_sm_count(&sms) != ATTN_OK || sms < 1) sms = 132;
    resident = (long)per_sm * sms;
    return resident;
}

template <typename T, int D> static long resident_for(int tiles)
{
    return tiles == 1 ? resident_ctas<T, D, 1>() : tiles == 2 ? resident_ctas<T, D, 2>() : resident_ctas<T, D, 4>();
}

/* How the cache is split: whole 64-key chunks, at least two per split; as
 * many splits as keep the grid within one wave of resident CTAs (a second,
 * nearly empty wave would cost as much as the first), one when
 * batch·kv_heads fills the GPU already. */
struct dec_plan {
    int row_blocks, splits, chunks_per_split;
};

static struct dec_plan plan_of(const struct attn_problem *p)
{
    struct dec_plan pl;
    const int G = p->heads / attn_kv_heads(p), rows = G * attn_q_len(p);
    pl.row_blocks = (rows + DEC_MAX_ROWS - 1) / DEC_MAX_ROWS;
    const int tiles = tiles_for(rows < DEC_MAX_ROWS ? rows : DEC_MAX_ROWS);
    const bool bf16 = p->dtype == ATTN_BF16, d64 = p->head_dim == 64;
    const long slots = bf16 ? (d64 ? resident_for<__nv_bfloat16, 64>(tiles) : resident_for<__nv_bfloat16, 128>(tiles))
                            : (d64 ? resident_for<__half, 64>(tiles) : resident_for<__half, 128>(tiles));
    const long ctas = (long)p->batch * attn_kv_heads(p) * pl.row_blocks;
    const int nchunks = (p->seq_len + DEC_BN - 1) / DEC_BN;
    long want = ctas >= slots ? 1 : slots / ctas;
    const int most = nchunks / 2 > 1 ? nchunks / 2 : 1;
    if (want > most) want = most;
    pl.chunks_per_split = (nchunks + (int)want - 1) / (int)want;
    /* A ragged cache: runs of one length for every sequence, about
     * ragged_runs() to each resident slot over the whole batch (its chunks
     * times the CTAs of a sequence's K/V heads, at least two chunks a run),
     * so that the grid's last wave is short whatever the lengths; a short
     * sequence's runs past its end are CTAs that write an empty part. (The
     * lengths were checked with the problem; should they not be read here,
     * the longest sequence's plan above stands.) */
    const int runs = ragged_runs();
    int *lens = runs > 0 && attn_is_varlen(p) ? (int *)malloc((size_t)p->batch * sizeof *lens) : NULL;
    if (lens && attn_seq_lens(p, lens) == ATTN_OK) {
        long chunks = 0;
        for (int b = 0; b < p->batch; b++) chunks += (lens[b] + DEC_BN - 1) / DEC_BN;
        const long total = (long)runs * slots;
        long cps = (chunks * (ctas / p->batch) + total - 1) / total;
        if (cps < 2) cps = 2;
        pl.chunks_per_split = cps < nchunks ? (int)cps : nchunks;
    }
    free(lens);
    pl.splits = (nchunks + pl.chunks_per_split - 1) / pl.chunks_per_split;
    return pl;
}

template <typename T, int D> static int launch(const struct attn_problem *p, const dec_args &a, cudaStream_t s)
{
    const dim3 grid((unsigned)a.splits, (unsigned)(a.kv_heads * a.row_blocks), (unsigned)p->batch);
    const int rows = a.group_rows < DEC_MAX_ROWS ? a.group_rows : DEC_MAX_ROWS;
    switch (tiles_for(rows)) {
    case 1: ATTN_TRY((launch_rows<T, D, 1>(a, grid, s))); break;
    case 2: ATTN_TRY((launch_rows<T, D, 2>(a, grid, s))); break;
    default: ATTN_TRY((launch_rows<T, D, 4>(a, grid, s))); break;
    }
    if (a.splits > 1 && !a.arrivals) {
        flash_decode_combine_kernel<T, D><<<(unsigned)a.total_rows, D, (size_t)a.splits * sizeof(float), s>>>(a);
        LAUNCH_TRY("flash_decode_combine_kernel");
    }
    return ATTN_OK;
}

/* The most shared memory any instance asks for at this head_dim. */
static size_t smem_for(int head_dim)
{
    return head_dim == 64 ? dec_cfg<64, 1>::SMEM : dec_cfg<128, 1>::SMEM; /* the same for every R */
}

struct dec_ctx {
    struct attn_problem p;
    struct dec_plan plan;
    float *part_o, *part_lse;
    int *table; /* a paged cache's page table, on the device */
    int *lens;  /* a ragged cache's lengths, on the device */
    int *arrivals; /* fold_combine: the count per row block, zeroed at setup */
};

static size_t part_rows(const struct attn_problem *p)
{
    return (size_t)p->batch * p->heads * attn_q_len(p);
}

/* The workspace: with more than one split, the parts' lse then their O;
 * with a paged cache, the page table after them; with a ragged cache, its
 * lengths; with fold_combine and more than one split, an arrival count per
 * row block last. */
struct dec_layout {
    size_t lse, o, table, lens, arrivals, total;
};

/* The CTAs along a grid's batch and K/V-head axes: the row blocks. */
static size_t row_blocks_of(const struct attn_problem *p, const struct dec_plan *pl)
{
    return (size_t)p->batch * attn_kv_heads(p) * pl->row_blocks;
}

static struct dec_layout layout_of(const struct attn_problem *p, const struct dec_plan *pl)
{
    struct dec_layout l = {0, 0, 0, 0, 0, 0};
    if (pl->splits > 1) {
        l.o = gpu_round256((size_t)pl->splits * part_rows(p) * sizeof(float));
        l.total = l.o + gpu_round256((size_t)pl->splits * part_rows(p) * p->head_dim * sizeof(float));
    }
    l.table = l.total;
    if (attn_is_paged(p)) l.total += gpu_round256((size_t)p->batch * attn_pages_per_seq(p) * sizeof(int));
    l.lens = l.total;
    if (attn_is_varlen(p)) l.total += (size_t)p->batch * sizeof(int);
    l.arrivals = l.total;
    if (pl->splits > 1 && fold_combine()) l.total += row_blocks_of(p, pl) * sizeof(int);
    return l;
}

static size_t decode_workspace_bytes(const struct attn_problem *p)
{
    const struct dec_plan pl = plan_of(p);
    return layout_of(p, &pl).total;
}

static const char *decode_supports(const struct attn_problem *p, const struct device_info *dev)
{
    if (!dev->present) return "no CUDA device";
    if (dev->cc_major < 8) return "needs compute capability 8.0 or newer (mma.sync bf16)";
    if (p->pass != ATTN_PASS_FWD) return "decode is a forward pass: no backward";
    if (attn_q_len(p) > DEC_MAX_Q) return "q_len above 8: a prefill (flash_mma, flash_hopper)";
    if (p->head_dim != 64 && p->head_dim != 128) return "head_dim 64 and 128 only";
    if (attn_is_packed(p)) return "a packed ragged batch: a prefill (flash_mma, flash_hopper)";
    if (smem_for(p->head_dim) > dev->smem_optin_bytes) return "not enough shared memory per block";
    const struct dec_plan pl = plan_of(p);
    if (p->batch > 65535 || (long)attn_kv_heads(p) * pl.row_blocks > 65535) return "batch or kv_heads above the grid's limit";
    return NULL;
}

static int decode_setup(void **ctx, const struct attn_problem *p, void *workspace)
{
    const int prepared = p->dtype == ATTN_BF16
                             ? (p->head_dim == 64 ? prepare<__nv_bfloat16, 64>() : prepare<__nv_bfloat16, 128>())
                             : (p->head_dim == 64 ? prepare<__half, 64>() : prepare<__half, 128>());
    ATTN_TRY(prepared);
    struct dec_ctx *c = (struct dec_ctx *)malloc(sizeof *c);
    if (!c) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    c->p = *p;
    c->plan = plan_of(p);
    const struct dec_layout l = layout_of(p, &c->plan);
    unsigned char *ws = (unsigned char *)workspace;
    c->part_lse = c->plan.splits > 1 ? (float *)(ws + l.lse) : NULL;
    c->part_o = c->plan.splits > 1 ? (float *)(ws + l.o) : NULL;
    c->table = attn_is_paged(p) ? (int *)(ws + l.table) : NULL;
    c->lens = attn_is_varlen(p) ? (int *)(ws + l.lens) : NULL;
    c->arrivals = c->plan.splits > 1 && fold_combine() ? (int *)(ws + l.arrivals) : NULL;
    int rc = l.total && !ws ? ATTN_FAIL(ATTN_ERR, "flash_decode: no workspace") : ATTN_OK;
    if (rc == ATTN_OK && c->table) rc = gpu_upload_page_table(p, c->table);
    if (rc == ATTN_OK && c->lens) rc = gpu_upload_seq_lens(p, c->lens);
    if (rc == ATTN_OK && c->arrivals &&
        (cudaMemset(c->arrivals, 0, row_blocks_of(p, &c->plan) * sizeof(int)) != cudaSuccess ||
         cudaStreamSynchronize(0) != cudaSuccess)) {
        (void)cudaGetLastError();
        rc = ATTN_FAIL(ATTN_ERR, "flash_decode: zeroing the arrival counts");
    }
    if (rc != ATTN_OK) {
        free(c);
        return rc;
    }
    const int G = p->heads / attn_kv_heads(p), rows = G * attn_q_len(p);
    attn_set_impl("rows %d (%d m16 tiles), %d split%s of %d keys%s", rows,
                  tiles_for(rows < DEC_MAX_ROWS ? rows : DEC_MAX_ROWS), c->plan.splits, c->plan.splits == 1 ? "" : "s",
                  c->plan.chunks_per_split * DEC_BN, c->arrivals ? ", combined by the last CTA" : "");
    *ctx = c;
    return ATTN_OK;
}

static int decode_run(void *ctx, const void *q, const void *k, const void *v, void *o, attn_stream_t stream)
{
    const struct dec_ctx *c = (const struct dec_ctx *)ctx;
    const struct attn_problem *p = &c->p;
    dec_args a;
    a.q = q;
    a.k = k;
    a.v = v;
    a.o = o;
    a.table = c->table;
    a.lens = c->lens;
    a.page = p->page;
    a.pages_per_seq = attn_pages_per_seq(p);
    a.part_o = c->part_o;
    a.part_lse = c->part_lse;
    a.arrivals = c->arrivals;
    a.heads = p->heads;
    a.kv_heads = attn_kv_heads(p);
    a.q_len = attn_q_len(p);
    a.kv_len = p->seq_len;
    a.causal = p->causal;
    a.group_rows = p->heads / a.kv_heads * a.q_len;
    a.row_blocks = c->plan.row_blocks;
    a.chunks_per_split = c->plan.chunks_per_split;
    a.splits = c->plan.splits;
    a.total_rows = part_rows(p);
    a.scale_log2 = p->scale * 1.4426950408889634f;
    const cudaStream_t s = (cudaStream_t)stream;
    attn_range_push("flash_decode");
    int rc;
    if (p->dtype == ATTN_BF16)
        rc = p->head_dim == 64 ? launch<__nv_bfloat16, 64>(p, a, s) : launch<__nv_bfloat16, 128>(p, a, s);
    else
        rc = p->head_dim == 64 ? launch<__half, 64>(p, a, s) : launch<__half, 128>(p, a, s);
    attn_range_pop();
    return rc;
}

static void decode_teardown(void *ctx) { free(ctx); }

#ifdef FLASH_DECODE_LAB
extern "C" const struct attn_variant attn_variant_flash_decode_lab = {
    .name = "flash_decode_lab",
    .summary = "lab: flash_decode with its switches (ATTN_FLASH_DECODE_L2=0|1, _RUNS=N, _FOLD=0|1, _PAGE_STEP=0|1)",
#else
extern "C" const struct attn_variant attn_variant_flash_decode = {
    .name = "flash_decode",
    .summary = "fused decode kernel: the cache split across CTAs, a K/V head's query rows in one read, mma.sync",
#endif
    .fused = true,
    .supports = decode_supports,
    .workspace_bytes = decode_workspace_bytes,
    .setup = decode_setup,
    .run = decode_run,
    .teardown = decode_teardown,
    .framework = NULL,
    .backward = NULL,
};

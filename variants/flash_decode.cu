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
 *   chunks, as many as fit one wave of resident CTAs (a ragged cache: runs
 *   of one length for every sequence, about eight per resident CTA over the
 *   batch, so that the last wave is short whatever the lengths); each CTA
 *   writes its rows' partial output, normalised, and their log-sum-exp, and
 *   a second kernel combines the splits (weights 2^(lse − max)). With one
 *   split the first kernel writes O itself and the second is not launched.
 * - K and V stream through shared memory in 64-key chunks, three stages
 *   deep. On sm_90 a fifth warp copies (one bulk copy a K or V row onto the
 *   stage's mbarrier, a paged cache's table read ahead of the wait) and
 *   the four compute warps free each stage on another mbarrier: no
 *   block-wide barrier a chunk. Before sm_90 every thread copies with
 *   cp.async and computes, one barrier a chunk. 4 compute warps: with R
 *   m16 row tiles (R = 1, 2, 4) they form R row tiles × 4/R key groups; each
 *   warp computes its 16 rows against its 16·R keys of a chunk (S = Q·Kᵀ,
 *   Q's fragments held in registers for the whole run), an online softmax
 *   in fp32 (log2 domain, scale folded in) and O += P·V with P re-packed
 *   from S's accumulators, as flash_mma's forward. At the end the key
 *   groups' partials meet in shared memory.
 * - Causal is aligned bottom-right (attn.h): query token i of q_len sees
 *   keys 0 .. kv_len − q_len + i; only the last chunk or two are masked.
 *
 * Layouts (attn.h): Q and O [batch, heads, q_len, head_dim], K and V
 * [batch, kv_heads, kv_len, head_dim], or a paged cache [pages, page,
 * kv_heads, head_dim] read through the page table: each key row's address
 * from its page's entry, so pages of any size (16 tokens: four pages a
 * chunk) stream as a contiguous cache does. A ragged cache (each
 * sequence its own cached length, attn.h) gives each CTA its sequence's
 * length: its chunks, its causal limit; a split past the end writes an
 * empty part (log-sum-exp −inf) that the combine weighs 0. Extra memory:
 * with more than one split, splits·batch·heads·q_len·(head_dim + 1) floats;
 * with a paged cache, its table (batch·pages per sequence ints); with a
 * ragged one, its lengths (batch ints). */
#include "../common/errors.h"
#include "../common/gpu_util.h"
#include "../common/kernel_util.cuh"
#include "../common/nvtx.h"
#include "hopper_ptx.cuh"
#include "mma_sync.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEC_PAD 8       /* 16-bit elements of padding per shared row */
#define DEC_BN 64       /* keys per chunk */
#define DEC_STAGES 3    /* chunks in flight */
#define DEC_WARPS 4
#define DEC_THREADS (DEC_WARPS * 32)
#define DEC_MAX_ROWS 64 /* query rows per CTA: 4 m16 tiles */
#define DEC_MAX_Q 8     /* query tokens per sequence */

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
    float *part_lse; /* [split][row], log2 units, -inf for a row with no key */
    int heads, kv_heads, q_len, kv_len, causal;
    int group_rows;       /* G·q_len: the rows of one K/V head */
    int row_blocks;       /* CTAs per K/V head along the rows */
    int chunks_per_split; /* 64-key chunks per split */
    int splits;
    size_t total_rows;    /* batch·heads·q_len */
    bool ws;              /* the host's choice: the copy-warp kernel */
    float scale_log2;
};

/* `n` rows of D elements from src (D apart) into shared rows LD apart;
 * rows n .. ROWS-1 become zeros. */
template <typename T, int D, int ROWS>
static __device__ __forceinline__ void load_rows(T *dst, const T *src, int n)
{
    constexpr int CHUNKS = D / 8, PER_PASS = DEC_THREADS / CHUNKS, LD = D + DEC_PAD;
    static_assert(DEC_THREADS % CHUNKS == 0, "threads per row");
    const int r0 = threadIdx.x / CHUNKS, col = (threadIdx.x % CHUNKS) * 8;
#pragma unroll
    for (int r = r0; r < ROWS; r += PER_PASS) {
        const bool in = r < n;
        cp_async_16(dst + r * LD + col, in ? src + (size_t)r * D + col : src, in ? 16 : 0);
    }
}

/* Where a CTA stands: its sequence, K/V head, rows, run of chunks, and
 * each thread's place in the warps' row tiles and key groups. */
struct dec_cta {
    int b, kvh, row0, rows, S, L, c0, c1, nchunks, last_full;
    size_t qrow0, kv_off;
    int warp, lane, g, t, rt, kbase, tok0, tok1;
};

template <int D, int R> static __device__ __forceinline__ dec_cta locate(const dec_args &a)
{
    dec_cta w;
    w.b = blockIdx.z;
    w.kvh = blockIdx.y / a.row_blocks;
    w.row0 = (blockIdx.y % a.row_blocks) * DEC_MAX_ROWS; /* first of the CTA's rows within the K/V head's group */
    w.rows = min(a.group_rows - w.row0, dec_cfg<D, R>::ROWS);
    const int G = a.heads / a.kv_heads;
    w.S = a.lens ? a.lens[w.b] : a.kv_len;
    w.L = a.q_len;
    /* the group's rows are contiguous in Q and O: heads kvh·G .. kvh·G + G − 1, q_len each */
    w.qrow0 = ((size_t)w.b * a.heads + (size_t)w.kvh * G) * w.L + w.row0;
    w.kv_off = ((size_t)w.b * a.kv_heads + w.kvh) * (size_t)a.kv_len * D; /* kv_len rows a head */
    w.nchunks = (w.S + DEC_BN - 1) / DEC_BN;
    w.c0 = blockIdx.x * a.chunks_per_split;
    w.c1 = min(w.c0 + a.chunks_per_split, w.nchunks);
    w.last_full = a.causal ? w.S - w.L + 1 : w.S; /* keys below it are seen by every row */
    w.warp = threadIdx.x / 32;
    w.lane = threadIdx.x % 32;
    w.g = w.lane / 4;
    w.t = w.lane % 4;
    w.rt = w.warp % R;
    w.kbase = (w.warp / R) * dec_cfg<D, R>::KPW;
    /* the token of each of this thread's two rows, for the causal limit */
    w.tok0 = (w.row0 + w.rt * 16 + w.g) % w.L;
    w.tok1 = (w.row0 + w.rt * 16 + w.g + 8) % w.L;
    return w;
}

/* A warp's running state: O's accumulators, each row's max and sum. */
template <int D> struct dec_acc {
    float o[D / 8][4];
    float row_max[2], row_sum[2];
};

/* One chunk c (its K and V in shared memory, rows LD apart) into the
 * warp's state: S = Q·Kᵀ for its 16 rows × KPW keys, keys past S and past
 * a row's causal limit to −inf, the online softmax (rows g: e = 0, 1; g + 8:
 * e = 2, 3) and O += P·V, 16 keys at a time. */
template <typename T, int D, int R>
static __device__ __forceinline__ void attend_chunk(dec_acc<D> &acc, const uint32_t (&qf)[D / 16][4], const T *sk,
                                                    const T *sv, int c, const dec_cta &w, const dec_args &a)
{
    constexpr int LD = dec_cfg<D, R>::LD, KPW = dec_cfg<D, R>::KPW;
    const int lane = w.lane;
    float s[KPW / 8][4];
#pragma unroll
    for (int j = 0; j < KPW / 8; j++) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++)
#pragma unroll
        for (int j = 0; j < KPW / 8; j += 2) {
            uint32_t bf[4];
            const int key = w.kbase + j * 8 + (lane % 8) + (lane / 16) * 8;
            ldmatrix_x4(bf, sk + key * LD + kk * 16 + ((lane / 8) % 2) * 8);
            mma_16816<T>(s[j], qf[kk], bf[0], bf[1]);
            mma_16816<T>(s[j + 1], qf[kk], bf[2], bf[3]);
        }
    const int n0 = c * DEC_BN + w.kbase;
    if (n0 + KPW > w.last_full) {
#pragma unroll
        for (int j = 0; j < KPW / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int key = n0 + j * 8 + 2 * w.t + (e & 1);
                const int limit = a.causal ? w.S - w.L + ((e >> 1) ? w.tok1 : w.tok0) : w.S - 1;
                if (key > limit || key >= w.S) s[j][e] = -INFINITY;
            }
    }

    float new_max[2] = {acc.row_max[0], acc.row_max[1]}, base[2], rescale[2];
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
        moved |= new_max[h] != acc.row_max[h];
        rescale[h] = ex2(acc.row_max[h] * a.scale_log2 - base[h]);
        acc.row_max[h] = new_max[h];
        acc.row_sum[h] *= rescale[h];
    }
#pragma unroll
    for (int j = 0; j < KPW / 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            s[j][e] = ex2(fmaf(s[j][e], a.scale_log2, -base[e >> 1]));
            acc.row_sum[e >> 1] += s[j][e];
        }
    if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
        for (int j = 0; j < D / 8; j++) {
            acc.o[j][0] *= rescale[0];
            acc.o[j][1] *= rescale[0];
            acc.o[j][2] *= rescale[1];
            acc.o[j][3] *= rescale[1];
        }
    }

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
            const int key = w.kbase + kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
            ldmatrix_x4_trans(bf, sv + key * LD + j * 8 + (lane / 16) * 8);
            mma_16816<T>(acc.o[j], pa, bf[0], bf[1]);
            mma_16816<T>(acc.o[j + 1], pa, bf[2], bf[3]);
        }
    }
}

/* After the last chunk, with every warp done with the stages (the caller's
 * barrier): the compute warps' partials (o unnormalised, each row's max and
 * sum) meet in shared memory, the key groups of each row tile are combined
 * two columns a thread, and O — or this split's part and its log-sum-exp —
 * is written. Every thread of the block calls it; warps past DEC_WARPS (a
 * copy warp) only keep the barriers. */
template <typename T, int D, int R>
static __device__ __forceinline__ void finish(dec_acc<D> &acc, unsigned char *smem, const dec_cta &w,
                                              const dec_args &a)
{
    using C = dec_cfg<D, R>;
    float *po = (float *)smem;
    float *pm = po + DEC_WARPS * 16 * C::OLD, *pl = pm + DEC_WARPS * 16;
    if (w.warp < DEC_WARPS) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            acc.row_sum[h] += __shfl_xor_sync(0xffffffffu, acc.row_sum[h], 1);
            acc.row_sum[h] += __shfl_xor_sync(0xffffffffu, acc.row_sum[h], 2);
        }
        float *mine = po + w.warp * 16 * C::OLD;
#pragma unroll
        for (int j = 0; j < D / 8; j++) {
            *(float2 *)(mine + w.g * C::OLD + j * 8 + 2 * w.t) = make_float2(acc.o[j][0], acc.o[j][1]);
            *(float2 *)(mine + (w.g + 8) * C::OLD + j * 8 + 2 * w.t) = make_float2(acc.o[j][2], acc.o[j][3]);
        }
        if (w.t == 0) {
            pm[w.warp * 16 + w.g] = acc.row_max[0];
            pm[w.warp * 16 + w.g + 8] = acc.row_max[1];
            pl[w.warp * 16 + w.g] = acc.row_sum[0];
            pl[w.warp * 16 + w.g + 8] = acc.row_sum[1];
        }
    }
    __syncthreads();
    if (w.warp >= DEC_WARPS) return;

    const int split = blockIdx.x;
    for (int idx = threadIdx.x; idx < w.rows * (D / 2); idx += DEC_THREADS) {
        const int r = idx / (D / 2), d = 2 * (idx % (D / 2)), tile = r / 16, lr = r % 16;
        float m = -INFINITY;
#pragma unroll
        for (int kg = 0; kg < C::KEY_GROUPS; kg++) m = fmaxf(m, pm[(tile + kg * R) * 16 + lr]);
        float sum = 0.f, acc0 = 0.f, acc1 = 0.f;
        if (m != -INFINITY) {
#pragma unroll
            for (int kg = 0; kg < C::KEY_GROUPS; kg++) {
                const int wi = tile + kg * R;
                const float wgt = ex2((pm[wi * 16 + lr] - m) * a.scale_log2); /* 0 for a group that saw no key */
                const float2 part = *(const float2 *)(po + (wi * 16 + lr) * C::OLD + d);
                sum += pl[wi * 16 + lr] * wgt;
                acc0 += part.x * wgt;
                acc1 += part.y * wgt;
            }
        }
        const float inv = sum > 0.f ? 1.f / sum : 0.f;
        const size_t row = w.qrow0 + r;
        if (a.splits == 1) {
            *(uint32_t *)((T *)a.o + row * D + d) = pack2(acc0 * inv, acc1 * inv, (T *)nullptr);
        } else {
            *(float2 *)(a.part_o + ((size_t)split * a.total_rows + row) * D + d) = make_float2(acc0 * inv, acc1 * inv);
            if (d == 0)
                a.part_lse[(size_t)split * a.total_rows + row] = sum > 0.f ? m * a.scale_log2 + log2f(sum) : -INFINITY;
        }
    }
}

static __device__ __forceinline__ void init_acc_rows(float (&row_max)[2], float (&row_sum)[2])
{
    row_max[0] = row_max[1] = -INFINITY;
    row_sum[0] = row_sum[1] = 0.f;
}

template <int D> static __device__ __forceinline__ void init_acc(dec_acc<D> &acc)
{
#pragma unroll
    for (int j = 0; j < D / 8; j++) acc.o[j][0] = acc.o[j][1] = acc.o[j][2] = acc.o[j][3] = 0.f;
    init_acc_rows(acc.row_max, acc.row_sum);
}

/* Token tok's K/V row (elements from the tensor's start) for K/V head kvh
 * of sequence b: kv_off + tok·D in a contiguous cache; in a paged one slot
 * tok % page of page table[b·pages_per_seq + tok / page], the head's D
 * elements at (slot's row)·kv_heads + kvh. */
template <int D>
static __device__ __forceinline__ size_t kv_row(const dec_args &a, const dec_cta &w, int tok)
{
    if (!a.table) return w.kv_off + (size_t)tok * D;
    const int page = a.table[(size_t)w.b * a.pages_per_seq + tok / a.page];
    return (((size_t)page * a.page + tok % a.page) * a.kv_heads + w.kvh) * D;
}

/* The sm_80 kernel: every thread copies (cp.async, three chunks in the
 * ring) and computes; one block-wide barrier per chunk. */
template <typename T, int D, int R>
static __global__ void __launch_bounds__(DEC_THREADS) flash_decode_kernel(const dec_args a)
{
    using C = dec_cfg<D, R>;
    constexpr int LD = C::LD;
    extern __shared__ __align__(16) unsigned char smem[];
    T *sKV = (T *)smem;
    T *sQ = sKV + (DEC_STAGES - 1) * C::STAGE; /* the stage the prologue leaves free */
    const dec_cta w = locate<D, R>(a);

    load_rows<T, D, C::ROWS>(sQ, (const T *)a.q + w.qrow0 * D, w.rows);
    cp_async_commit();
    /* K and V of chunk c into stage st; keys past S as zeros */
    auto load_chunk = [&](int c, int st) {
        T *sk = sKV + st * C::STAGE, *sv = sk + DEC_BN * LD;
        const int n = min(DEC_BN, w.S - c * DEC_BN);
        if (!a.table) {
            load_rows<T, D, DEC_BN>(sk, (const T *)a.k + w.kv_off + (size_t)c * DEC_BN * D, n);
            load_rows<T, D, DEC_BN>(sv, (const T *)a.v + w.kv_off + (size_t)c * DEC_BN * D, n);
            return;
        }
        constexpr int CHUNKS = D / 8, PER_PASS = DEC_THREADS / CHUNKS;
        const int r0 = threadIdx.x / CHUNKS, col = (threadIdx.x % CHUNKS) * 8;
#pragma unroll
        for (int r = r0; r < DEC_BN; r += PER_PASS) {
            const bool in = r < n;
            const size_t row = in ? kv_row<D>(a, w, c * DEC_BN + r) : 0;
            cp_async_16(sk + r * LD + col, (const T *)a.k + row + col, in ? 16 : 0);
            cp_async_16(sv + r * LD + col, (const T *)a.v + row + col, in ? 16 : 0);
        }
    };
#pragma unroll
    for (int st = 0; st < DEC_STAGES - 1; st++) {
        if (w.c0 + st < w.c1) load_chunk(w.c0 + st, st);
        cp_async_commit();
    }

    dec_acc<D> acc;
    init_acc(acc);
    uint32_t qf[D / 16][4];
    for (int c = w.c0; c < w.c1; c++) {
        cp_async_wait<DEC_STAGES - 2>();
        __syncthreads(); /* chunk c landed; every warp is done with chunk c − 1's stage */
        if (c == w.c0) {
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++)
                ldmatrix_x4(qf[kk], sQ + (w.rt * 16 + (w.lane % 16)) * LD + kk * 16 + (w.lane / 16) * 8);
            __syncthreads(); /* Q's stage is free for the load below */
        }
        if (c + DEC_STAGES - 1 < w.c1) load_chunk(c + DEC_STAGES - 1, (c - w.c0 + DEC_STAGES - 1) % DEC_STAGES);
        cp_async_commit();
        const T *sk = sKV + ((c - w.c0) % DEC_STAGES) * C::STAGE;
        attend_chunk<T, D, R>(acc, qf, sk, sk + DEC_BN * LD, c, w, a);
    }
    cp_async_wait<0>();
    __syncthreads(); /* every warp is done with the stages: the partials take their room */
    finish<T, D, R>(acc, smem, w, a);
}

/* The shared memory of the sm_90 kernel: the stages, then a full and an
 * empty mbarrier per stage (the partials, smaller than the stages, reuse
 * them at the end). */
template <int D, int R> struct dec_ws_cfg {
    static constexpr size_t BARS = dec_cfg<D, R>::TILES; /* 8-byte aligned */
    static constexpr size_t SMEM = BARS + 2 * DEC_STAGES * 8;
    static_assert(dec_cfg<D, R>::PARTS <= BARS, "the partials stay below the mbarriers");
};
#define DEC_WS_THREADS (DEC_THREADS + 32)

/* The sm_90 kernel: a fifth warp does every copy — one bulk copy (the copy
 * engine, no registers) per K and V row, counted in bytes on the stage's
 * full mbarrier — and reads a paged cache's table while the stages drain;
 * each compute warp frees a stage on its empty mbarrier once its ldmatrix
 * reads are done. No block-wide barrier per chunk: a stage refills as soon
 * as the four compute warps have left it. Q's fragments come from global
 * memory. The rows past S of a partial last chunk are not copied: the
 * copy warp writes zeros into their V rows before it arms the stage (P is 0
 * there, and 0 times a stale NaN would not be; a stale K row's score is
 * masked to −inf). */
template <typename T, int D, int R>
static __global__ void __launch_bounds__(DEC_WS_THREADS) flash_decode_ws_kernel(const dec_args a)
{
#if HOP_SM90
    using C = dec_cfg<D, R>;
    constexpr int LD = C::LD, ROW_BYTES = D * (int)sizeof(T);
    extern __shared__ __align__(16) unsigned char smem[];
    T *sKV = (T *)smem;
    const uint32_t full0 = smem_u32(smem + dec_ws_cfg<D, R>::BARS), empty0 = full0 + DEC_STAGES * 8;
    const dec_cta w = locate<D, R>(a);
    if (threadIdx.x == 0) {
        for (int st = 0; st < DEC_STAGES; st++) {
            mbar_init(full0 + st * 8, 1);
            mbar_init(empty0 + st * 8, DEC_WARPS);
        }
        mbar_init_fence();
    }
    __syncthreads();

    dec_acc<D> acc;
    init_acc(acc);
    if (w.warp == DEC_WARPS) {
        for (int c = w.c0; c < w.c1; c++) {
            const int i = c - w.c0, st = i % DEC_STAGES, n = min(DEC_BN, w.S - c * DEC_BN);
            /* this lane's rows of the chunk: its addresses before the wait */
            size_t row[DEC_BN / 32];
#pragma unroll
            for (int h = 0; h < DEC_BN / 32; h++) {
                const int r = w.lane + 32 * h;
                row[h] = r < n ? kv_row<D>(a, w, c * DEC_BN + r) : 0;
            }
            if (i >= DEC_STAGES) mbar_wait(empty0 + st * 8, (i / DEC_STAGES - 1) & 1, "empty stage");
            if (n < DEC_BN) {
                /* the last chunk's V rows past S, not copied: zeros (16 bytes a lane a step) */
                constexpr int PER_ROW = D / 8;
                T *sv_rows = sKV + st * C::STAGE + DEC_BN * LD;
                for (int idx = w.lane; idx < (DEC_BN - n) * PER_ROW; idx += 32)
                    *(uint4 *)(sv_rows + (n + idx / PER_ROW) * LD + (idx % PER_ROW) * 8) = make_uint4(0, 0, 0, 0);
            }
            __syncwarp(); /* the zeros before lane 0's arrival releases the stage */
            if (w.lane == 0) mbar_arrive_expect_tx(full0 + st * 8, (uint32_t)(2 * n * ROW_BYTES));
            __syncwarp();
            const uint32_t sk = smem_u32(sKV + st * C::STAGE), sv = sk + DEC_BN * LD * (uint32_t)sizeof(T);
#pragma unroll
            for (int h = 0; h < DEC_BN / 32; h++) {
                const int r = w.lane + 32 * h;
                if (r < n) {
                    const uint32_t at = (uint32_t)(r * LD * (int)sizeof(T));
                    bulk_copy_to_shared(sk + at, (const T *)a.k + row[h], ROW_BYTES, full0 + st * 8);
                    bulk_copy_to_shared(sv + at, (const T *)a.v + row[h], ROW_BYTES, full0 + st * 8);
                }
            }
        }
    } else {
        /* Q's A fragments (m16n8k16: rows g and g + 8, columns 2t, 2t + 1
         * and 8 beyond) straight from global memory; rows past the CTA's as zeros */
        uint32_t qf[D / 16][4];
        const int r_lo = w.rt * 16 + w.g, r_hi = r_lo + 8;
        const uint32_t *q_lo = (const uint32_t *)((const T *)a.q + (w.qrow0 + r_lo) * D);
        const uint32_t *q_hi = (const uint32_t *)((const T *)a.q + (w.qrow0 + r_hi) * D);
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++) {
            const int col = (kk * 16 + 2 * w.t) / 2; /* in pairs */
            qf[kk][0] = r_lo < w.rows ? q_lo[col] : 0u;
            qf[kk][1] = r_hi < w.rows ? q_hi[col] : 0u;
            qf[kk][2] = r_lo < w.rows ? q_lo[col + 4] : 0u;
            qf[kk][3] = r_hi < w.rows ? q_hi[col + 4] : 0u;
        }
        for (int c = w.c0; c < w.c1; c++) {
            const int i = c - w.c0, st = i % DEC_STAGES;
            T *sk = sKV + st * C::STAGE, *sv = sk + DEC_BN * LD;
            mbar_wait(full0 + st * 8, (i / DEC_STAGES) & 1, "full stage");
            attend_chunk<T, D, R>(acc, qf, sk, sv, c, w, a);
            __syncwarp();
            if (w.lane == 0) mbar_arrive(empty0 + st * 8);
        }
    }
    __syncthreads(); /* every chunk landed and was read: the partials take the stages' room */
    finish<T, D, R>(acc, smem, w, a);
#else
    (void)a;
    __trap();
#endif
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

/* Which kernel a setup picks: the copy-warp one on sm_90 and newer, the
 * cp.async one before; ATTN_FLASH_DECODE_KERNEL=cp.async asks for the
 * cp.async one on any card (the GPU suite checks both on one Hopper). */
static bool ws_kernel_wanted(void)
{
    static int sm90 = -1; /* one device per process: asked once */
    if (sm90 < 0) {
        int dev = 0, major = 0;
        sm90 = cudaGetDevice(&dev) == cudaSuccess &&
               cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess && major >= 9;
        (void)cudaGetLastError();
    }
    const char *want = getenv("ATTN_FLASH_DECODE_KERNEL");
    return sm90 == 1 && !(want && strcmp(want, "cp.async") == 0);
}

template <typename T, int D, int R> static int launch_rows(const dec_args &a, dim3 grid, cudaStream_t s)
{
    if (a.ws) {
        flash_decode_ws_kernel<T, D, R><<<grid, DEC_WS_THREADS, dec_ws_cfg<D, R>::SMEM, s>>>(a);
        LAUNCH_TRY("flash_decode_ws_kernel");
    } else {
        flash_decode_kernel<T, D, R><<<grid, DEC_THREADS, dec_cfg<D, R>::SMEM, s>>>(a);
        LAUNCH_TRY("flash_decode_kernel");
    }
    return ATTN_OK;
}

/* The shared memory of one (T, D, R) instance of both kernels, allowed. */
template <typename T, int D, int R> static int allow_smem(void)
{
    CUDA_TRY(cudaFuncSetAttribute(flash_decode_kernel<T, D, R>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)dec_cfg<D, R>::SMEM));
    CUDA_TRY(cudaFuncSetAttribute(flash_decode_ws_kernel<T, D, R>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)dec_ws_cfg<D, R>::SMEM));
    return ATTN_OK;
}

/* The shared memory every instance of (T, D) asks for, allowed once at
 * setup (an attribute set while a stream is being captured is no launch). */
template <typename T, int D> static int prepare(void)
{
    ATTN_TRY((allow_smem<T, D, 1>()));
    ATTN_TRY((allow_smem<T, D, 2>()));
    ATTN_TRY((allow_smem<T, D, 4>()));
    return ATTN_OK;
}

/* CTAs of the (T, D, R) instance the GPU holds at once: the occupancy
 * calculator's blocks per SM (after its shared memory is allowed) times
 * the SMs, asked once; two per SM on the H200's 132 if either cannot be
 * asked. */
template <typename T, int D, int R> static long resident_ctas(bool ws)
{
    static long resident[2]; /* one device per process: asked once per instance and kernel */
    if (resident[ws]) return resident[ws];
    int per_sm = 0, sms = 0;
    const int allowed = prepare<T, D>();
    const cudaError_t asked =
        ws ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, flash_decode_ws_kernel<T, D, R>,
                                                                        DEC_WS_THREADS, dec_ws_cfg<D, R>::SMEM)
                        : cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, flash_decode_kernel<T, D, R>,
                                                                        DEC_THREADS, dec_cfg<D, R>::SMEM);
    if (allowed != ATTN_OK || asked != cudaSuccess || per_sm < 1) {
        (void)cudaGetLastError();
        per_sm = 2;
    }
    if (gpu_sm_count(&sms) != ATTN_OK || sms < 1) sms = 132;
    resident[ws] = (long)per_sm * sms;
    return resident[ws];
}

template <typename T, int D> static long resident_for(int tiles, bool ws)
{
    return tiles == 1   ? resident_ctas<T, D, 1>(ws)
           : tiles == 2 ? resident_ctas<T, D, 2>(ws)
                        : resident_ctas<T, D, 4>(ws);
}

/* How the cache is split into runs of whole 64-key chunks, at least two a
 * run. A cache of one length: as many splits as keep the grid within one
 * wave of resident CTAs (a second, nearly empty wave would cost as much as
 * the first), one when batch·kv_heads fills the GPU already. A ragged
 * cache: runs of equal length for every sequence, about eight to each
 * resident slot over the whole batch, so that the GPU's last wave is short
 * whatever the lengths; a short sequence's runs past its end are CTAs that
 * only write an empty part. */
#define DEC_RAGGED_RUNS_PER_SLOT 8

struct dec_plan {
    int row_blocks, splits, chunks_per_split;
};

static int plan_of(const struct attn_problem *p, bool ws, struct dec_plan *pl)
{
    const int G = p->heads / attn_kv_heads(p), rows = G * attn_q_len(p);
    pl->row_blocks = (rows + DEC_MAX_ROWS - 1) / DEC_MAX_ROWS;
    const int tiles = tiles_for(rows < DEC_MAX_ROWS ? rows : DEC_MAX_ROWS);
    const bool bf16 = p->dtype == ATTN_BF16, d64 = p->head_dim == 64;
    const long slots = bf16 ? (d64 ? resident_for<__nv_bfloat16, 64>(tiles, ws)
                                   : resident_for<__nv_bfloat16, 128>(tiles, ws))
                            : (d64 ? resident_for<__half, 64>(tiles, ws) : resident_for<__half, 128>(tiles, ws));
    const long heads_ctas = (long)attn_kv_heads(p) * pl->row_blocks;
    const int nchunks = (p->seq_len + DEC_BN - 1) / DEC_BN;
    long cps;
    if (attn_is_varlen(p)) {
        int *lens = (int *)malloc((size_t)p->batch * sizeof *lens);
        if (!lens) return ATTN_FAIL(ATTN_ERR, "out of host memory");
        const int rc = attn_seq_lens(p, lens);
        long chunks = 0;
        for (int b = 0; rc == ATTN_OK && b < p->batch; b++) chunks += (lens[b] + DEC_BN - 1) / DEC_BN;
        free(lens);
        ATTN_TRY(rc);
        const long runs = slots * DEC_RAGGED_RUNS_PER_SLOT;
        cps = (chunks * heads_ctas + runs - 1) / runs;
    } else {
        const long ctas = (long)p->batch * heads_ctas;
        const long want = ctas >= slots ? 1 : slots / ctas;
        cps = (nchunks + want - 1) / want;
    }
    if (cps < 2) cps = 2;
    if (cps > nchunks) cps = nchunks > 0 ? nchunks : 1;
    pl->chunks_per_split = (int)cps;
    pl->splits = (nchunks + pl->chunks_per_split - 1) / pl->chunks_per_split;
    if (pl->splits < 1) pl->splits = 1;
    return ATTN_OK;
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
    if (a.splits > 1) {
        flash_decode_combine_kernel<T, D><<<(unsigned)a.total_rows, D, (size_t)a.splits * sizeof(float), s>>>(a);
        LAUNCH_TRY("flash_decode_combine_kernel");
    }
    return ATTN_OK;
}

/* The most shared memory any instance of either kernel asks for at this
 * head_dim (the same for every R). */
static size_t smem_for(int head_dim)
{
    return head_dim == 64 ? dec_ws_cfg<64, 1>::SMEM : dec_ws_cfg<128, 1>::SMEM;
}

struct dec_ctx {
    struct attn_problem p;
    struct dec_plan plan;
    bool ws; /* the copy-warp kernel (sm_90), else the cp.async one */
    float *part_o, *part_lse;
    int *table; /* a paged cache's page table, on the device */
    int *lens;  /* a ragged cache's lengths, on the device */
};

static size_t part_rows(const struct attn_problem *p)
{
    return (size_t)p->batch * p->heads * attn_q_len(p);
}

static size_t round256(size_t n) { return (n + 255) / 256 * 256; }

/* The workspace: with more than one split, the parts' lse then their O;
 * with a paged cache, the page table after them; with a ragged cache, its
 * lengths last. */
struct dec_layout {
    size_t lse, o, table, lens, total;
};

static struct dec_layout layout_of(const struct attn_problem *p, const struct dec_plan *pl)
{
    struct dec_layout l = {0, 0, 0, 0, 0};
    if (pl->splits > 1) {
        l.o = round256((size_t)pl->splits * part_rows(p) * sizeof(float));
        l.total = l.o + round256((size_t)pl->splits * part_rows(p) * p->head_dim * sizeof(float));
    }
    l.table = l.total;
    if (attn_is_paged(p)) l.total += round256((size_t)p->batch * attn_pages_per_seq(p) * sizeof(int));
    l.lens = l.total;
    if (attn_is_varlen(p)) l.total += (size_t)p->batch * sizeof(int);
    return l;
}

/* 0 when the plan cannot be made: setup then says why. */
static size_t decode_workspace_bytes(const struct attn_problem *p)
{
    struct dec_plan pl;
    return plan_of(p, ws_kernel_wanted(), &pl) == ATTN_OK ? layout_of(p, &pl).total : 0;
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
    const long row_blocks = (p->heads / attn_kv_heads(p) * attn_q_len(p) + DEC_MAX_ROWS - 1) / DEC_MAX_ROWS;
    if (p->batch > 65535 || attn_kv_heads(p) * row_blocks > 65535) return "batch or kv_heads above the grid's limit";
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
    c->ws = ws_kernel_wanted();
    if (plan_of(p, c->ws, &c->plan) != ATTN_OK) {
        free(c);
        return ATTN_ERR;
    }
    const struct dec_layout l = layout_of(p, &c->plan);
    unsigned char *ws = (unsigned char *)workspace;
    c->part_lse = c->plan.splits > 1 ? (float *)(ws + l.lse) : NULL;
    c->part_o = c->plan.splits > 1 ? (float *)(ws + l.o) : NULL;
    c->table = attn_is_paged(p) ? (int *)(ws + l.table) : NULL;
    c->lens = attn_is_varlen(p) ? (int *)(ws + l.lens) : NULL;
    int rc = l.total && !ws ? ATTN_FAIL(ATTN_ERR, "flash_decode: no workspace") : ATTN_OK;
    if (rc == ATTN_OK && c->table) rc = gpu_upload_page_table(p, c->table);
    if (rc == ATTN_OK && c->lens) rc = gpu_upload_seq_lens(p, c->lens);
    if (rc != ATTN_OK) {
        free(c);
        return rc;
    }
    const int G = p->heads / attn_kv_heads(p), rows = G * attn_q_len(p);
    attn_set_impl("%s, rows %d (%d m16 tiles), %d split%s of %d keys", c->ws ? "copy warp" : "cp.async",
                  rows, tiles_for(rows < DEC_MAX_ROWS ? rows : DEC_MAX_ROWS), c->plan.splits,
                  c->plan.splits == 1 ? "" : "s", c->plan.chunks_per_split * DEC_BN);
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
    a.ws = c->ws;
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

extern "C" const struct attn_variant attn_variant_flash_decode = {
    .name = "flash_decode",
    .summary = "fused decode kernel: the cache split across CTAs, a K/V head's query rows in one read, mma.sync",
    .fused = true,
    .supports = decode_supports,
    .workspace_bytes = decode_workspace_bytes,
    .setup = decode_setup,
    .run = decode_run,
    .teardown = decode_teardown,
    .framework = NULL,
    .backward = NULL,
};

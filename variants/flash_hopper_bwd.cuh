/* flash_hopper_bwd.cuh — flash_hopper's backward for Hopper (sm_90a): dQ,
 * dK and dV of dense and ragged batches, head_dim 64, 96 and 128, bf16
 * and fp16, grouped K/V heads, causal or not. Part of flash_hopper.cu's
 * translation unit (its host side launches these); the forward that keeps
 * the statistics this reads is flash_hopper_lse_kernel
 * (flash_hopper_kernel.cuh).
 *
 * Three launches per backward (and a memset of dQ's accumulator):
 *   hbw_prep_kernel     Dsum = rowsum(dO∘O), fp32, per query row and head
 *                       (and the padding rows' statistics)
 *   hbw_kernel          one CTA per (batch, K/V head, 128-key tile), the
 *                       tiles of one head adjacent in the grid: dK and
 *                       dV of its keys summed over the K/V head's group of
 *                       query heads; dQ's share of its keys added to the
 *                       fp32 accumulator by bulk reductions
 *   hbw_dq_kernel       dQ = scale · accumulator, to the 16-bit dtype
 *
 * ------------------------------------------------------- what runs where
 * hbw_kernel: 384 threads. Warpgroup 0 is the producer (setmaxnreg 24; its
 * thread 0 issues every load): K and V of the CTA's 128 keys once, by TMA,
 * then per step the BM-row tiles of Q and dO (TMA; BM = 64 at D = 96 and
 * 128, 128 at D = 64: hbw_bm) and their BM lse and Dsum values (bulk
 * copies) into one of two stages. Warpgroups 1 and 2 are consumers
 * (setmaxnreg 240) and own keys 64w .. 64w+63 of the tile; their dK and dV
 * (64 keys × D, fp32) stay in registers for the whole sweep: the group's
 * query heads, and per head the BM-row query tiles that see the keys
 * (causal: from the tile of the first key on). Per step, consumer w:
 *   Sᵀ  = K_w·Qᵀ       64 keys × BM queries, SS (K and Q K-major), D/16 k-steps
 *   dPᵀ = V_w·dOᵀ      the same with V and dO, a wgmma group of its own
 *   P   = exp2(Sᵀ·scale·log2 e − lse[q])   (masked entries: keys or
 *         queries past S, causal keys past the query, set to 0 by select,
 *         tested only on the steps that hold any: a loop without the test
 *         on the others)
 *   dSᵀ = P∘(dPᵀ − Dsum[q])
 *   dV += Pᵀ·dO        RS: P from the accumulator, dO N-major (trans-b), as
 *                      the forward's P·V (hop_issue_pv)
 *   dSᵀ → shared       [key][query], the 128-byte swizzle (stmatrix), buffer
 *                      i % 2; a named barrier of both consumers
 *   dQ  = dS·K         64 queries × 64 columns over the 128 keys: SS with
 *                      both operands MN-major (dSᵀ read transposed, K as the
 *                      forward reads V). BM = 64: the step's 64 queries ×
 *                      consumer w's column half of D (the padded 128);
 *                      BM = 128: queries 64w.. × all 64 columns
 *   dK += dSᵀ·Q        RS: the same form as dV with dS and Q, issued after
 *                      dQ, so that it runs while dQ goes to shared memory
 * The order of the middle differs by tile: at BM = 64, P is formed once Sᵀ
 * is complete (under dPᵀ's wgmmas) and dV is issued before dS (under its
 * arithmetic); at BM = 128, the two 64-float accumulators beside dK and dV
 * leave no room for that overlap, so P and dS are formed in one pass once
 * both are complete, each pair packed at once, and dV issued after them.
 * Once dV and dQ are complete, each consumer writes its dQ into its part
 * of the step's shared buffer in fragment order (hbw_dq_at: every warp's
 * stores contiguous, each consumer's part too), and after a barrier of its
 * own warps one of its threads adds that 64 × 64 part to the accumulator
 * with one bulk reduction (cp.reduce.async.bulk .add.f32): the same bytes
 * as per-thread atomics, in whole lines, off the consumers' path, and no
 * wait for the other consumer. Once dK is complete the stage goes back to
 * the producer. At the end dK (× scale) and dV to global.
 *
 * dS's buffers double: step i writes buffer i % 2 after the first barrier
 * of step i − 1, which both consumers reach only after their dQ product of
 * step i − 2 (its last reader) is complete. dQ's buffers: DQ_BUFS (2 at
 * BM = 64, 1 at BM = 128, where one holds 32 KB); each consumer's issuer
 * lets the first barrier of step i pass only once its bulk reduction of
 * step i − DQ_BUFS has read its part (cp.async.bulk.wait_group.read).
 *
 * ------------------------------------------------- shared-memory map
 * From a 1024-byte-aligned base, every region a multiple of 1024 bytes:
 *   K, V    CH (D/64 rounded up) boxes of 128 rows × 128 B each
 *   Q, dO   2 stages × CH chunks of BM rows × 128 B (BM / 64 TMA boxes each)
 *   dS      2 buffers × 128 keys × BM queries × 2 B, in chunks of 64 queries
 *   dQ      DQ_BUFS buffers × BM rows × DP fp32 (hbw_dq_at's order)
 *   stats   2 stages × (BM lse + BM Dsum floats)
 *   bars    kv_full, full[2], empty[2]
 * Descriptors: K and V as A (K-major) at + 64w rows, Q and dO as B
 * (K-major) — the forward's Q·Kᵀ forms; dO and Q as N-major B of the RS
 * products — the forward's V; dSᵀ as M-major A and K as N-major B of dQ:
 * SBO 1024 (8 rows), k-step 16 rows = 2048 bytes, one 64-column atom per
 * operand (the swizzle is applied to the final address, as for the
 * K-major k-steps).
 *
 * ------------------------------------------------- the barrier protocol
 * Step i uses stage i % 2 in round i / 2: the producer waits empty with
 * parity (round & 1) ^ 1, arms full with the stage's bytes and loads; a
 * consumer waits full with parity round & 1 and, once every wgmma that read
 * the stage is complete, each of its threads arrives on empty (256
 * arrivals: every reader of the statistics releases them itself, an order
 * compute-sanitizer's racecheck follows). kv_full: one phase, the K and V
 * bytes.
 *
 * Ragged batches: a CTA's sequence from cu (its key tiles past the
 * sequence's end exit at once), rows and keys past the end masked as past
 * S (the tiles' boxes read the next sequence's tokens there), gradients
 * written into the packed [tokens, heads, D] layouts.
 *
 * head_dim 96: the tiles padded to 128 columns (two 64-column boxes, TMA
 * reads the columns past D as zeros); Sᵀ and dPᵀ take the 6 k-steps of the
 * 96 columns, dV, dK and dQ run over the padded 128 (their last 32 columns
 * are zeros, and not written).
 *
 * Statistics: lse and Dsum are [B·H, s_pad] (s_pad: S, the longest
 * sequence, rounded up to BM), so that a step's BM values are one bulk
 * copy; the rows past S hold 0 (hbw_prep_kernel), and their P and dS are 0
 * by select. dQ's accumulator is [B·H, s_pad / 64] blocks of 64 × DP fp32
 * (DP: D padded to 64 columns), each in hbw_dq_at's order. */
#ifndef ATTN_FLASH_HOPPER_BWD_CUH
#define ATTN_FLASH_HOPPER_BWD_CUH

#include "flash_hopper_phases.cuh"

#include <type_traits>

/* Keys per CTA (the K and V tensor maps' box rows), at every head_dim. */
#define HBW_KEYS 128

/* Query rows per step at head_dim d: 128 at D = 64 (each consumer's Sᵀ
 * 64 keys × 128 queries, twice the work per barrier; its registers fit),
 * 64 at D = 96 and 128. The statistics' padded rows (s_pad) are a
 * multiple of it. */
static constexpr __host__ __device__ int hbw_bm(int d) { return d == 64 ? 128 : 64; }

/* The backward's tile and shared-memory layout for head_dim D. */
template <int D> struct hbw_cfg {
    static_assert(D == 64 || D == 96 || D == 128, "the backward: head_dim 64, 96 and 128");
    /* DP: D padded to whole 64-column boxes (96: 128, the columns past D
     * read as zeros by TMA, as the forward's) */
    static constexpr int BM = hbw_bm(D), BN = HBW_KEYS, THREADS = 384, CH = hop_chunks(D), DP = hop_dpad(D);
    /* dQ's 64-row blocks: at BM = 64 one per step, its columns split
     * between the consumers (DQW 2); at BM = 128 one per consumer, whole */
    static constexpr int DQW = 128 / BM, DQN = DP / DQW; /* DQN: dQ's columns per consumer */
    static constexpr int DQ_BUFS = BM == 64 ? 2 : 1;     /* a step's dQ buffers (shared memory) */
    static constexpr uint32_t KV_BOX = BN * 128, Q_BOX = BM * 128; /* bytes of one 64-column chunk */
    static constexpr uint32_t KV_BYTES = CH * KV_BOX, Q_BYTES = CH * Q_BOX, DS_BYTES = BN * BM * 2;
    static constexpr uint32_t STAT_BYTES = 2 * BM * 4; /* lse then Dsum */
    static constexpr uint32_t DQ_BYTES = BM * DP * 4;   /* a step's dQ, fp32, fragment order */
    static constexpr uint32_t DQ_PART = 64 * DQN * 4;   /* one consumer's share of it */
    static constexpr uint32_t K_OFF = 0, V_OFF = KV_BYTES, Q_OFF = 2 * KV_BYTES, DO_OFF = Q_OFF + 2 * Q_BYTES,
                              DS_OFF = DO_OFF + 2 * Q_BYTES, DQ_OFF = DS_OFF + 2 * DS_BYTES,
                              STAT_OFF = DQ_OFF + DQ_BUFS * DQ_BYTES, BAR_OFF = STAT_OFF + 2 * STAT_BYTES;
    /* the barriers (5 × 8 bytes) and the alignment's slack */
    static constexpr size_t SMEM = BAR_OFF + 64 + 1024;
    static_assert(DQN == 64, "dQ's product: 64 columns a consumer");
};
static_assert(hbw_cfg<64>::SMEM <= HOP_SMEM_OPTIN && hbw_cfg<128>::SMEM <= HOP_SMEM_OPTIN,
              "the backward's shared memory above the opt-in limit");

/* What the backward kernel reads and writes besides its tensor maps. */
struct hbw_args {
    const float *lse, *dsum;
    float *dq_acc;
    void *dk, *dv;  /* [B·KVH, S, D]; ragged [tokens, KVH, D] */
    const int *cu;  /* ragged: the batch + 1 sequence starts; NULL: dense */
    int S, s_pad, causal, heads, group; /* ragged: S the longest sequence */
    float scale_log2, scale;
};

/* dQ's fragment order within a (head, 64-row tile) block of the
 * accumulator (64 × DP floats, DP the padded head_dim), written in parts
 * of DQN columns (hbw_cfg): the float index of element 4j + 2h (and + 1)
 * of lane `lane` of warp `warp` in part wc — runs of 64 floats per (wc,
 * warp, j, h), lanes in order, so that a warp's store and the bulk
 * reduction are contiguous. hbw_dq_kernel reads it back by (row, column). */
template <int DQN>
static __host__ __device__ __forceinline__ int hbw_dq_at(int wc, int warp, int j, int h, int lane)
{
    return ((((wc * 4 + warp) * (DQN / 8) + j) * 2 + h) * 32 + lane) * 2;
}

/* Sequence b's first token and length: dense 0 and S, ragged from cu. */
struct hbw_seq {
    int tok0, len;
    bool ragged;
    __host__ __device__ __forceinline__ hbw_seq(const int *cu, int b, int S)
        : tok0(cu ? cu[b] : 0), len(cu ? cu[b + 1] - cu[b] : S), ragged(cu != nullptr)
    {
    }
    /* the row of position q of plane bh = b · heads + h: dense [B·heads,
     * S], ragged [tokens, heads] */
    __host__ __device__ __forceinline__ size_t row(size_t bh, int h, int heads, int S, int q) const
    {
        return ragged ? (size_t)(tok0 + q) * heads + h : bh * S + q;
    }
};

#if HOP_DEVICE
/* The barriers at base + BAR_OFF: kv_full, full[2], empty[2]. */
struct hbw_bars {
    uint32_t base;
    __device__ __forceinline__ uint32_t kv_full(void) const { return base; }
    __device__ __forceinline__ uint32_t full(int s) const { return base + 8 + 8 * s; }
    __device__ __forceinline__ uint32_t empty(int s) const { return base + 24 + 8 * s; }
};

/* The query tiles (bm rows) a CTA sweeps: per query head of the group,
 * tiles m_first .. n_m − 1; step i is head i / per_head, tile m_first +
 * i % per_head. */
struct hbw_sweep {
    int m_first, per_head, steps;
    /* step i's query head within the group, and its query tile */
    __device__ __forceinline__ int head(int i) const { return i / per_head; }
    __device__ __forceinline__ int tile(int i) const { return m_first + i % per_head; }
    __device__ __forceinline__ hbw_sweep(int len, int n0, int causal, int group, int bm)
    {
        const int n_m = (len + bm - 1) / bm;
        m_first = causal ? n0 / bm : 0;
        per_head = n_m - m_first;
        steps = group * per_head;
    }
};

/* A K-major k-step's descriptor offset: 16 columns of a 64-column box of
 * `box` bytes (4 k-steps a box, 32 bytes apart) */
static __device__ __forceinline__ uint64_t hbw_kstep(int kk, uint32_t box)
{
    return (uint64_t)(((kk / 4) * box + (kk % 4) * 32) >> 4);
}

/* Sᵀ or dPᵀ's k-step: 64 keys × BM queries, both operands K-major */
template <typename T, int BM>
static __device__ __forceinline__ void hbw_ss(float (&acc)[BM / 2], uint64_t da, uint64_t db, int accumulate)
{
    if constexpr (BM == 64)
        wgmma_ss_n64<T>(acc, da, db, accumulate);
    else
        wgmma_ss_n128<T>(acc, da, db, accumulate);
}

/* dSᵀ of this consumer's 64 keys (16-bit, in P's register layout: ds[kk] is
 * queries 16kk..) into rows 64w.. of the [key][query] buffer, 128-byte
 * swizzled, its BM queries in chunks of 64 (HBW_KEYS · 128 bytes apart):
 * the forward's staging of O (hop_stage_o), the registers already packed. */
template <int BM>
static __device__ __forceinline__ void hbw_stage_ds(const uint32_t (&ds)[BM / 16][4], uint32_t rows, int warp,
                                                    int lane)
{
    const int m = lane / 8;
    const uint32_t lane_row = rows + (16 * warp + 8 * (m & 1) + lane % 8) * 128;
    const uint32_t lane_xor = (uint32_t)((m >> 1) ^ (lane % 8));
#pragma unroll
    for (int kk = 0; kk < BM / 16; kk++)
        stmatrix_x4(lane_row + (kk / 4) * (HBW_KEYS * 128) + (((uint32_t)(2 * (kk % 4)) ^ lane_xor) * 16), ds[kk][0],
                    ds[kk][1], ds[kk][2], ds[kk][3]);
}

/* The producer: K and V once, then each step's Q, dO, lse and Dsum. */
template <int D>
static __device__ __forceinline__ void hbw_produce(uint32_t sm, const hbw_bars &bar, const CUtensorMap *tm_q,
                                                   const CUtensorMap *tm_k, const CUtensorMap *tm_v,
                                                   const CUtensorMap *tm_do, const hbw_args &a, int n0, int b,
                                                   int kvh, const hbw_seq &seq, const hbw_sweep &sw)
{
    using C = hbw_cfg<D>;
    /* the maps' third coordinate: dense B·heads planes, ragged one per head
     * (rows count the batch's tokens; hop_encode_map) */
    const int kv_plane = a.cu ? kvh : b * (a.heads / a.group) + kvh;
    mbar_arrive_expect_tx(bar.kv_full(), 2 * C::KV_BYTES);
#pragma unroll
    for (int c = 0; c < C::CH; c++) {
        tma_load_3d(sm + C::K_OFF + c * C::KV_BOX, tm_k, bar.kv_full(), c * HOP_CHUNK_COLS, seq.tok0 + n0, kv_plane);
        tma_load_3d(sm + C::V_OFF + c * C::KV_BOX, tm_v, bar.kv_full(), c * HOP_CHUNK_COLS, seq.tok0 + n0, kv_plane);
    }
    for (int i = 0; i < sw.steps; i++) {
        const int s = i % 2, round = i / 2;
        const int h = kvh * a.group + sw.head(i), q_bh = b * a.heads + h, m0 = C::BM * sw.tile(i);
        const int q_plane = a.cu ? h : q_bh;
        mbar_wait(bar.empty(s), (round & 1) ^ 1, "bwd empty");
        mbar_arrive_expect_tx(bar.full(s), 2 * C::Q_BYTES + C::STAT_BYTES);
        /* the tile's 64-row boxes (the maps' box rows), stacked: the 128-byte
         * swizzle repeats every 8 rows */
#pragma unroll
        for (int c = 0; c < C::CH; c++)
#pragma unroll
            for (int r = 0; r < C::BM / 64; r++) {
                const uint32_t at = s * C::Q_BYTES + c * C::Q_BOX + r * 64 * 128;
                tma_load_3d(sm + C::Q_OFF + at, tm_q, bar.full(s), c * HOP_CHUNK_COLS, seq.tok0 + m0 + 64 * r,
                            q_plane);
                tma_load_3d(sm + C::DO_OFF + at, tm_do, bar.full(s), c * HOP_CHUNK_COLS, seq.tok0 + m0 + 64 * r,
                            q_plane);
            }
        const size_t stat = (size_t)q_bh * a.s_pad + m0;
        bulk_load(sm + C::STAT_OFF + s * C::STAT_BYTES, a.lse + stat, 4 * C::BM, bar.full(s));
        bulk_load(sm + C::STAT_OFF + s * C::STAT_BYTES + 4 * C::BM, a.dsum + stat, 4 * C::BM, bar.full(s));
    }
}

/* Consumer w (0, 1): keys n0 + 64w .. of the tile, the whole sweep. */
template <typename T, int D>
static __device__ __forceinline__ void hbw_consume(uint32_t sm, const hbw_bars &bar, const hbw_args &a, int n0,
                                                   int b, int kvh, const hbw_seq &seq, const hbw_sweep &sw, int w)
{
    using C = hbw_cfg<D>;
    const int tid = (int)threadIdx.x % 128, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int warp = __shfl_sync(0xffffffffu, tid / 32, 0);
    float dk[C::DP / 2], dv[C::DP / 2];
#pragma unroll
    for (int i = 0; i < C::DP / 2; i++) dk[i] = dv[i] = 0.f;
    const uint64_t desc_k = make_desc(sm + C::K_OFF + 64 * w * 128, 16, 1024);
    const uint64_t desc_v = make_desc(sm + C::V_OFF + 64 * w * 128, 16, 1024);
    /* this thread's keys in the accumulators' rows: key0 and key0 + 8 */
    const int key0 = n0 + 64 * w + 16 * warp + g;
    const bool issuer = tid == 0; /* issues this consumer's dQ reductions */
    mbar_wait(bar.kv_full(), 0, "bwd kv_full");
    for (int i = 0; i < sw.steps; i++) {
        const int s = i % 2, round = i / 2;
        const int q_bh = b * a.heads + kvh * a.group + sw.head(i), m0 = C::BM * sw.tile(i);
        const uint32_t q_st = sm + C::Q_OFF + s * C::Q_BYTES, do_st = sm + C::DO_OFF + s * C::Q_BYTES;
        mbar_wait(bar.full(s), round & 1, "bwd full");
        float acc_s[C::BM / 2], acc_dp[C::BM / 2];
        /* Sᵀ, then dPᵀ, as two groups (BM = 64: P's exponentials run under
         * dPᵀ) */
        {
            const uint64_t desc_q = make_desc(q_st, 16, 1024), desc_do = make_desc(do_st, 16, 1024);
            fence_regs(acc_s);
            fence_regs(acc_dp);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++)
                hbw_ss<T, C::BM>(acc_s, desc_k + hbw_kstep(kk, C::KV_BOX), desc_q + hbw_kstep(kk, C::Q_BOX),
                                 kk > 0);
            wgmma_commit();
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++)
                hbw_ss<T, C::BM>(acc_dp, desc_v + hbw_kstep(kk, C::KV_BOX), desc_do + hbw_kstep(kk, C::Q_BOX),
                                 kk > 0);
            wgmma_commit();
            if constexpr (C::BM == 64) {
                wgmma_wait<1>();
            } else {
                wgmma_wait<0>();
                fence_regs(acc_dp);
            }
            fence_regs(acc_s);
        }
        /* accumulator element 4j + 2h + e is key key0 + 8h, query m0 + 8j +
         * 2t + e; the stage's lse at st[0 .. BM − 1], Dsum at st[BM ..] */
        const float *st =
            reinterpret_cast<const float *>(__cvta_shared_to_generic(sm + C::STAT_OFF + s * C::STAT_BYTES));
        uint32_t p[C::BM / 16][4], ds[C::BM / 16][4];
        /* an edge step holds masked entries (queries or keys past the
         * sequence's end, causal keys past a query); the others take the
         * pointwise loops without the per-element test (the form below is
         * instantiated for both: `masked` is std::true_type or false_type) */
        const bool edge = m0 + C::BM > seq.len || n0 + 64 * w + 64 > seq.len || (a.causal && n0 + 64 * w + 63 > m0);
        const auto off = [&](auto masked, int key, int q) {
            return decltype(masked)::value && (q >= seq.len || key >= seq.len || (a.causal && key > q));
        };
        if constexpr (C::BM == 64) {
            /* P (masked entries 0 by select: their lse may be any value),
             * under dPᵀ's wgmmas */
            const auto form_p = [&](auto masked) {
#pragma unroll
                for (int j = 0; j < C::BM / 8; j++) {
                    const float2 lse = *reinterpret_cast<const float2 *>(st + 8 * j + 2 * t);
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const int key = key0 + 8 * (e >> 1), q = m0 + 8 * j + 2 * t + (e & 1);
                        const float x = ex2(fmaf(acc_s[4 * j + e], a.scale_log2, -((e & 1) ? lse.y : lse.x)));
                        acc_s[4 * j + e] = off(masked, key, q) ? 0.f : x;
                    }
                }
            };
            if (edge)
                form_p(std::true_type{});
            else
                form_p(std::false_type{});
            hop_convert_p<T, C::BM>(p, acc_s);
            /* dV += Pᵀ·dO under dS's arithmetic */
            hop_issue_pv<T, D, C::BM, C::BM / 16, true>(dv, p, do_st);
            wgmma_wait<1>(); /* dPᵀ complete, dV may run */
            fence_regs(acc_dp);
            /* dS = P∘(dPᵀ − Dsum): 0 wherever P is (dPᵀ and Dsum are finite) */
#pragma unroll
            for (int j = 0; j < C::BM / 8; j++) {
                const float2 dsum = *reinterpret_cast<const float2 *>(st + C::BM + 8 * j + 2 * t);
#pragma unroll
                for (int e = 0; e < 4; e++)
                    acc_dp[4 * j + e] = acc_s[4 * j + e] * (acc_dp[4 * j + e] - ((e & 1) ? dsum.y : dsum.x));
            }
            hop_convert_p<T, C::BM>(ds, acc_dp);
        } else {
            /* BM = 128: P and dS in one pass once dPᵀ is complete, each pair
             * packed (hop_convert_p's layout) as soon as it is formed, so
             * that the two 64-float accumulators die as they go: with dK and
             * dV beside them they leave no room for P's packed copy or for
             * Dsum loaded ahead (the BM = 64 order spills here) */
            const auto form_p_ds = [&](auto masked) {
#pragma unroll
                for (int kk = 0; kk < C::BM / 16; kk++)
#pragma unroll
                    for (int r = 0; r < 4; r++) {
                        const int at = 8 * kk + 2 * r, j = at / 4;
                        const float2 lse = *reinterpret_cast<const float2 *>(st + 8 * j + 2 * t);
                        const float2 dsum = *reinterpret_cast<const float2 *>(st + C::BM + 8 * j + 2 * t);
                        float pv[2], dv_s[2];
#pragma unroll
                        for (int u = 0; u < 2; u++) {
                            const int e = at % 4 + u, key = key0 + 8 * (e >> 1), q = m0 + 8 * j + 2 * t + u;
                            const float x = ex2(fmaf(acc_s[at + u], a.scale_log2, -(u ? lse.y : lse.x)));
                            pv[u] = off(masked, key, q) ? 0.f : x;
                            dv_s[u] = pv[u] * (acc_dp[at + u] - (u ? dsum.y : dsum.x));
                        }
                        p[kk][r] = pack2(pv[0], pv[1], (T *)nullptr);
                        ds[kk][r] = pack2(dv_s[0], dv_s[1], (T *)nullptr);
                    }
            };
            if (edge)
                form_p_ds(std::true_type{});
            else
                form_p_ds(std::false_type{});
            hop_issue_pv<T, D, C::BM, C::BM / 16, true>(dv, p, do_st); /* under dSᵀ's staging */
        }
        /* dSᵀ of both consumers into buffer i % 2, then dQ from all 128 keys;
         * the issuer first sees the dQ reduction of step i − DQ_BUFS read
         * its buffer */
        const uint32_t ds_buf = sm + C::DS_OFF + (i % 2) * C::DS_BYTES;
        const uint32_t dq_buf = sm + C::DQ_OFF + (i % C::DQ_BUFS) * C::DQ_BYTES;
        hbw_stage_ds<C::BM>(ds, ds_buf + 64 * w * 128, warp, lane);
        fence_proxy_async();
        if (issuer) bulk_wait_reads<C::DQ_BUFS - 1>();
        named_sync(1, 256);
        float dq[C::DQN / 2];
        {
            /* consumer w's dQ: DQW 2, the step's 64 queries × column box w
             * of K; DQW 1, queries 64w.. (dSᵀ's query chunk w) × all of K */
            const uint32_t ds_rows = ds_buf + (C::DQW == 1 ? w * C::BN * 128 : 0);
            const uint32_t k_cols = sm + C::K_OFF + (C::DQW == 2 ? w * C::KV_BOX : 0);
            fence_regs(dq);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < C::BN / 16; kk++)
                wgmma_ss_tt<T, C::DQN>(dq, make_desc(ds_rows + kk * 2048, 1024, 1024),
                                       make_desc(k_cols + kk * 2048, 1024, 1024), kk > 0);
            wgmma_commit();
        }
        /* dK += dSᵀ·Q after dQ: it runs while dQ leaves for shared memory */
        hop_issue_pv<T, D, C::BM, C::BM / 16, true>(dk, ds, q_st);
        wgmma_wait<1>(); /* dV and dQ complete, dK may run */
        fence_regs(dq);
        /* dQ into this consumer's part of the buffer in fragment order
         * (hbw_dq_at: each warp's store a run of 256 bytes), then one bulk
         * add of the part into the accumulator: DQW 2, its column half of
         * the step's 64-row block; DQW 1, the whole block of its 64 rows */
#pragma unroll
        for (int j = 0; j < C::DQN / 8; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int wc = C::DQW == 2 ? w : 0; /* the part's index in the block */
                const uint32_t at = dq_buf + 4 * (uint32_t)hbw_dq_at<C::DQN>(wc, warp, j, h, lane) +
                                    (C::DQW == 1 ? w * C::DQ_PART : 0);
                asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(at), "f"(dq[4 * j + 2 * h]),
                             "f"(dq[4 * j + 2 * h + 1])
                             : "memory");
            }
        fence_proxy_async();
        named_sync(2 + w, 128);
        if (issuer) {
            bulk_reduce_add_f32(a.dq_acc + ((size_t)q_bh * a.s_pad + m0) * C::DP + w * (C::DQ_PART / 4),
                                dq_buf + w * C::DQ_PART, C::DQ_PART);
            bulk_commit_group();
        }
        wgmma_wait<0>(); /* dK complete: the stage's Q, and P and dS, free */
        fence_regs(dv);
        fence_regs(dk);
        hop_fence_p<C::BM>(p);
        hop_fence_p<C::BM>(ds);
        /* the stage's statistics were read by generic loads: ordered before
         * the bulk copy that refills it (as the forward's release_q); each
         * reader arrives itself (one arrival a warp after __syncwarp orders
         * the same, but racecheck does not follow it) */
        fence_proxy_async();
        mbar_arrive(bar.empty(s));
    }
    /* the last reductions complete (shared memory read, global memory
     * written) before the CTA exits */
    if (issuer) bulk_wait_writes();
    /* dK (× scale) and dV of the keys < S; element 4j + 2h + e: key key0 +
     * 8h, column 8j + 2t + e */
    const int kv_heads = a.heads / a.group;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int key = key0 + 8 * h;
        if (key >= seq.len) continue;
        const size_t at = seq.row((size_t)b * kv_heads + kvh, kvh, kv_heads, a.S, key) * D;
        T *dk_row = (T *)a.dk + at + 2 * t;
        T *dv_row = (T *)a.dv + at + 2 * t;
#pragma unroll
        for (int j = 0; j < D / 8; j++) {
            *reinterpret_cast<uint32_t *>(dk_row + 8 * j) =
                pack2(dk[4 * j + 2 * h] * a.scale, dk[4 * j + 2 * h + 1] * a.scale, (T *)nullptr);
            *reinterpret_cast<uint32_t *>(dv_row + 8 * j) = pack2(dv[4 * j + 2 * h], dv[4 * j + 2 * h + 1], (T *)nullptr);
        }
    }
}
#endif /* HOP_DEVICE */

/* One CTA per (batch · K/V head, 128-key tile), a one-dimensional grid
 * with the tiles of one head adjacent: the CTAs resident at once then span
 * few heads, whose Q, dO and fp32 dQ accumulators stay in L2 (with the
 * heads adjacent instead, the 132 CTAs of a wave at S = 4096 span 66 heads
 * and their dQ accumulators alone exceed L2). Within a head tile 0 comes
 * first: a causal head starts with its heaviest tile (the first keys see
 * every query). */
template <typename T, int D>
static __global__ void __launch_bounds__(384, 1)
hbw_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
           const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_do, const hbw_args a)
{
#if HOP_DEVICE
    using C = hbw_cfg<D>;
    extern __shared__ unsigned char smem_raw[];
    const uint32_t sm = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const hbw_bars bar{sm + C::BAR_OFF};
    const int kv_heads = a.heads / a.group;
    const int key_tiles = (a.S + C::BN - 1) / C::BN, kv_bh = (int)blockIdx.x / key_tiles;
    const int b = kv_bh / kv_heads, kvh = kv_bh % kv_heads, n0 = ((int)blockIdx.x % key_tiles) * C::BN;
    const hbw_seq seq(a.cu, b, a.S);
    if (n0 >= seq.len) return; /* ragged: a key tile past this sequence's end */
    const hbw_sweep sw(seq.len, n0, a.causal, a.group, C::BM);
    const int wg = __shfl_sync(0xffffffffu, (int)(threadIdx.x / 128), 0);
    if (threadIdx.x == 0) {
        mbar_init(bar.kv_full(), 1);
        for (int s = 0; s < 2; s++) {
            mbar_init(bar.full(s), 1);
            mbar_init(bar.empty(s), 256);
        }
        mbar_init_fence();
    }
    __syncthreads();
    if (wg == 0) {
        setmaxnreg_dec<24>();
        if (threadIdx.x == 0) hbw_produce<D>(sm, bar, &tm_q, &tm_k, &tm_v, &tm_do, a, n0, b, kvh, seq, sw);
        return;
    }
    setmaxnreg_inc<240>();
    hbw_consume<T, D>(sm, bar, a, n0, b, kvh, seq, sw, wg - 1);
#elif defined(__CUDA_ARCH__)
    (void)tm_q, (void)tm_k, (void)tm_v, (void)tm_do, (void)a;
    __trap();
#endif
}

/* Dsum[bh·s_pad + q] = Σ_d dO·O over the row (fp32), one warp per row of
 * the B·H·s_pad padded rows; the padding rows (q >= the sequence's length)
 * get Dsum and lse 0, so that every statistic a step copies is written.
 * Ragged (cu set): O and dO are [tokens, heads, D], and each row's lse is
 * moved from the forward's [tokens, heads] (lse_tok) to lse's padded
 * layout. */
template <typename T, int D>
static __global__ void hbw_prep_kernel(const T *__restrict__ o, const T *__restrict__ dout, float *__restrict__ dsum,
                                       float *__restrict__ lse, const float *__restrict__ lse_tok,
                                       const int *__restrict__ cu, size_t n_rows, int S, int s_pad, int heads)
{
    const size_t row = (size_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= n_rows) return;
    const int lane = (int)threadIdx.x % 32;
    const size_t bh = row / s_pad;
    const int q = (int)(row % s_pad), b = (int)(bh / heads), h = (int)(bh % heads);
    const hbw_seq seq(cu, b, S);
    if (q >= seq.len) {
        if (lane == 0) dsum[row] = lse[row] = 0.f;
        return;
    }
    const size_t tok_row = seq.row(bh, h, heads, S, q), at = tok_row * D;
    const T *orow = o + at, *drow = dout + at;
    float acc = 0.f;
#pragma unroll
    for (int c = 2 * lane; c < D; c += 64) {
        acc += (float)orow[c] * (float)drow[c];
        acc += (float)orow[c + 1] * (float)drow[c + 1];
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) {
        dsum[row] = acc;
        if (cu) lse[row] = lse_tok[tok_row];
    }
}

/* dq = scale · the accumulator's rows < the sequence's length, to the
 * 16-bit type, four columns a thread (consecutive in hbw_dq_at's order too)
 * over the B·H·s_pad padded rows and the D columns of each; ragged (cu set)
 * into [tokens, heads, D]. Column d of row r of a block is part d / DQN's
 * element of warp r / 16, lane 4·(r % 8) + (d % 8) / 2, j (d % DQN) / 8,
 * h (r / 8) % 2. */
template <typename T, int D>
static __global__ void hbw_dq_kernel(const float *__restrict__ dq_acc, T *__restrict__ dq, const int *__restrict__ cu,
                                     size_t n_quads, int S, int s_pad, int heads, float scale)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_quads) return;
    const size_t e = 4 * i, row = e / D, bh = row / s_pad;
    constexpr int DP = hbw_cfg<D>::DP, DQN = hbw_cfg<D>::DQN;
    const int col = (int)(e % D), q = (int)(row % s_pad), r = q % 64, dd = col % DQN;
    const hbw_seq seq(cu, (int)(bh / heads), S);
    if (q >= seq.len) return;
    const float *block = dq_acc + (bh * s_pad + (q - r)) * DP;
    const float4 v = *reinterpret_cast<const float4 *>(
        block + hbw_dq_at<DQN>(col / DQN, r / 16, dd / 8, (r / 8) % 2, 4 * (r % 8) + (dd % 8) / 2));
    const size_t at = seq.row(bh, (int)(bh % heads), heads, S, q) * D + col;
    uint2 out;
    out.x = pack2(v.x * scale, v.y * scale, (T *)nullptr);
    out.y = pack2(v.z * scale, v.w * scale, (T *)nullptr);
    *reinterpret_cast<uint2 *>(dq + at) = out;
}

#endif

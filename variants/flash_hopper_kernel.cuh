/* flash_hopper_kernel.cuh — flash_hopper's kernel: fused attention forward
 * for Hopper (sm_90a), bf16 and fp16 in, fp32 accumulation, head_dim 64,
 * 96, 128, 192 and 256, grouped K/V heads, ragged batches, any B, H, S.
 * Here: the design, the consumer's work loop and the kernel (and its twin
 * that also keeps each row's log-sum-exp for the backward); its parts
 * (barrier protocol, tile scheduler, producer, math phases) are in
 * flash_hopper_phases.cuh, the PTX wrappers in hopper_ptx.cuh, the host
 * side (configuration table, tensor maps, work-tile lists, launch) in
 * flash_hopper.cu.
 *
 * ------------------------------------------------------- what runs where
 * A block of 128·(NCW + 1) threads: warpgroup 0 is the producer
 * (setmaxnreg down to 24; its thread 0 alone issues every TMA load, the
 * other 127 threads exit), warpgroups 1..NCW are consumers, 64 query rows
 * each (setmaxnreg up to 240 with 2 consumers, 160 with 3). A work tile is
 * BM = 64·NCW rows of one head (or, SPAN, NCW consecutive 64-row slices
 * of the sequence of every head's slices); its keys stream through shared
 * memory in tiles of BN keys (64, 80, 96, 128 or 192: the wider D, the
 * fewer, as O's accumulator takes D/2 of a thread's registers). D = 96
 * runs as D = 128 on rows padded with zeros (TMA fills the columns past
 * D; the padding is never stored). Per key tile, per consumer:
 *   S = Q·Kᵀ  64×BN fp32: D/16 k-steps of one wgmma.m64n128k16 per 128
 *             keys and one m64n64k16, m64n80k16 or m64n96k16 for the rest,
 *             A = Q, B = K, both K-major in shared memory.
 *   mask      keys >= S and (causal) key > row set to -inf, only on tiles
 *             that reach past S or cross the diagonal.
 *   softmax   online, fp32, exp2 with scale·log2(e) folded into one FFMA;
 *             a row is spread over the 4 threads of a quad (shfl.xor 1, 2).
 *   O += P·V  P packed to 16 bits in registers as the A operand; V
 *             (keys × D, row-major = N-major B) from shared memory; per
 *             k-step one m64n128k16 per 128 columns of D (PVN, and an
 *             m64n64k16 for D = 192's last 64) or D/64 m64n64k16.
 * Pipelined inside a consumer (FA3): step j issues Q·K(j)ᵀ and P(j-1)·V(j-1)
 * together, waits for the first only, runs the softmax of j while the
 * second runs, then waits for it, rescales O and packs P(j). Consumers
 * take turns issuing their GEMMs (ping-pong on named barriers 1..NCW), so
 * one consumer's softmax runs under the other's GEMMs. Epilogue: O / row
 * sum into the consumer's own Q slice (same swizzle, stmatrix), then
 * 16-byte coalesced stores of rows < S; OBUF: into a buffer of its own,
 * then (dense) one TMA store per 64-column box, issued by one thread.
 *
 * Grids: plain (one work tile per CTA; sections of sec_heads heads, causal
 * row blocks heaviest first) or persistent (PERS: one CTA per SM walks a
 * static snake over the work tiles, Q double-buffered where it fits; XT:
 * the next tile's first Q·Kᵀ goes out with this tile's last P·V, so the
 * tensor cores do not drain between work tiles); hop_schedule
 * (flash_hopper_phases.cuh) has the order. MC: a persistent grid of
 * clusters of two CTAs, each pair of work tiles reading the same K/V
 * tiles (two query heads of one K/V group at one row block, or two row
 * blocks of one head: hop_pairs); each K/V tile is loaded once for the
 * pair, half of its boxes by each CTA, multicast into both.
 *
 * ------------------------------------------------- shared-memory map
 * From a 1024-byte-aligned base (the 128B swizzle pattern repeats every
 * 1024 bytes and wgmma assumes that phase), every box 1024-aligned:
 *   Q       QB buffers × NCW consumers × D/64 boxes of 64 rows × 128 B
 *   K       STAGES tiles   × D/64 boxes of BN rows × 128 B
 *   V       VSTAGES tiles  × D/64 boxes of BN rows × 128 B
 *   O       OBUF only: NCW consumers × D/64 boxes of 64 rows × 128 B
 *   bars    mbarriers (256 B; 512 with separate K and V rings), its last
 *           64 bytes of scratch words, one per warp (pin_above)
 * Q, K, V (and O) are seen by TMA as 3-D tensors (D, S, B·H), innermost
 * first, so a box never straddles two heads, rows >= S arrive as zeros and
 * (O) are not written. A box is
 * 64 columns (128 bytes) × rows, CU_TENSOR_MAP_SWIZZLE_128B: row r's
 * 16-byte piece i sits at piece i ^ (r % 8).
 *
 * ----------------------------------------- register layouts (PTX ISA 9.7.15)
 * wgmma m64nNk16 accumulator, f32: warp w of the warpgroup owns rows
 * 16w..16w+15; lane = 4g + t; d[4j + 2h + e] = D[16w + g + 8h][8j + 2t + e].
 * A from registers, 16-bit: register r holds A[16w + g + 8(r&1)][8(r>>1) +
 * 2t + {0,1}], the accumulator layout of an m64n16 tile (CUTLASS:
 * ALayout_64x16 == CLayout_64x16), so P's k-step kk is d[8kk .. 8kk+7] and
 * a[r] = pack(d[8kk+2r], d[8kk+2r+1]): no shuffles.
 *
 * ------------------------------------- shared-memory matrix descriptors
 *   Q, K (K-major, 128B swizzle): SBO = 1024 (8 rows × 128 B), LBO unused
 *        ("assumed 1": we put 16). k-step kk: box kk/4, + (kk%4)·32 bytes
 *        on the start address; the hardware applies the XOR to the final
 *        address bits, which is where TMA put the data.
 *   V (MN-major, 128B swizzle): SBO = 1024 between groups of 8 keys;
 *        k-step kk (16 keys) at + kk·2048. N = 64 per wgmma: box c of D at
 *        + c·BN·128, LBO = SBO (never read). N = 128 (PVN): LBO = BN·128,
 *        the next 64-column box (CUTLASS canonical ((T,8,m),(8,k))).
 *
 * ------------------------------------------------- the barrier protocol
 * hop_barriers (flash_hopper_phases.cuh) holds every count and parity.
 * Ring position n (the CTA's n-th K/V tile, counted over all its work
 * tiles) is slot n % depth, round n / depth; full barriers count 1 arrival + the tile's TMA bytes,
 * empty barriers one arrival per consumer warp (4·NCW). The producer waits
 * empty with parity (round & 1) ^ 1 — round 0 passes at once: a fresh
 * barrier is in phase 0 and parity 1 names the complete "preceding"
 * phase — then arms full and issues the loads; a consumer waits full with
 * parity round & 1 and, once its wgmmas that read the slot are complete,
 * lane 0 of each warp arrives on empty. full[s] completes phase r+1 only
 * after empty[s] completed phase r and vice versa, so no waiter sees a
 * barrier two phases ahead. A ragged box still counts its full bytes
 * (zero-filled), so expect_tx is always the full tile.
 *   K and V share one ring (VSTAGES = 0, d128_grid_ring3) or have one each
 *   (K STAGES deep, V VSTAGES deep): the producer's step it loads K(it),
 *   then V(it-1), as the consumers need V one step after K; a K load then
 *   waits only for a K slot. No deadlock at any depth >= 1: the producer's
 *   loads of step it need slots freed at consumer step it - STAGES (K) or
 *   it - 1 - VSTAGES (V), and a consumer at step it needs only K(it) and
 *   V(it-1), which come before any load that waits for step it.
 *   Q: per buffer b and consumer w a qfull (1 + bytes) and a qempty (4,
 *   one per warp) barrier; tile k uses buffer k % QB in use k / QB. After
 *   its epilogue (O was staged in the Q slice) a consumer fences the
 *   generic proxy against the next TMA write and releases the slice. With
 *   one Q buffer the producer issues a tile's first K/V loads before its
 *   Q (their slots free up while the previous tile finishes). OBUF: the
 *   slice goes back as soon as the tile's last Q·Kᵀ is complete (only
 *   wgmmas read it: no proxy fence), and O's buffer is written again only
 *   after thread 0 saw the previous store's reads complete.
 *   MC: box c of a K/V tile comes from CTA c % 2 of the cluster, multicast
 *   into the same slot of both CTAs and counted on each one's full barrier,
 *   which its own producer arms for the whole tile (the other half may land
 *   first: the phase still waits for the arming's arrival); empty barriers
 *   count the consumer warps of both CTAs (8·NCW), lane r of each warp
 *   arriving on CTA r's, so that no producer writes into a slot that a
 *   consumer of either CTA still reads; both CTAs walk the same ring
 *   positions (a pair's tiles have the same key tiles). barrier.cluster
 *   replaces __syncthreads() after the initialisation, and the producer
 *   ends by waiting for every slot's next release (drain), so that no
 *   arrival of the other CTA reaches one that has exited.
 *   SPAN: a step loads one K and one V tile per head of the work tile
 *   (position kv0 + ns·it + h); each consumer waits for and releases only
 *   its own head's slot, and the producer arrives on that slot's empty
 *   barrier for the consumer warps of the other heads, so every phase
 *   still completes at 4·NCW arrivals.
 *   A consumer whose rows all lie outside [0, S) (a ragged row block) and,
 *   causal, the key tiles past a consumer's last row keep every wait, turn
 *   and release of the pipeline but issue no math (pass_*).
 * Thread 0 initialises the barriers, fence.mbarrier_init, __syncthreads()
 * (MC: barrier.cluster), then the roles split; no block-wide barrier after
 * that. The "+f" fences around wgmma commit/wait keep the compiler off
 * accumulators in flight.
 *
 * Why it is written this way, and every measurement behind it:
 * variants/NOTES-flash_hopper.md. ptxas serialises the
 * wgmmas (C75xx) when the GEMMs sit in control flow that can skip them
 * (an early return, a branch that stays open across a wgmma wait), and the
 * Makefile fails the build if it does, or if an instance spills. */
#ifndef ATTN_FLASH_HOPPER_KERNEL_CUH
#define ATTN_FLASH_HOPPER_KERNEL_CUH

#include "flash_hopper_phases.cuh"

#include <type_traits>

#if HOP_DEVICE
/* ------------------------------------------------------------ consumer */

/* The consumer's choices that the tuning lab varies (lab/: its lab_policy
 * turns each off or swaps it); here, the shipped kernel's, all fixed. */
struct hop_policy {
    /* consumers take turns issuing their GEMMs (named barriers 1..NCW) */
    static constexpr bool PINGPONG = true;
    /* O by a TMA store (store_o_tma), the Q slice released one step into
     * the next work tile (the lab's EPI 2; dense, persistent, not XT) */
    static constexpr bool TMA_STORE = false;
    /* causal: a consumer computes only the key tiles up to its last row's */
    __device__ __forceinline__ constexpr bool skip_masked_tiles(void) const { return true; }
    /* BN > 128: a last tile with at most 128 useful keys runs 128 keys' wgmmas */
    __device__ __forceinline__ constexpr bool short_last_tile(void) const { return true; }
    /* the softmax's exponentials (MUFU) */
    template <int BN>
    __device__ __forceinline__ void exp2_tile(float (&acc_s)[BN / 2], float (&row_sum)[2],
                                              const float (&neg_base)[2], float scale_log2) const
    {
        hop_softmax_exp<BN>(acc_s, row_sum, neg_base, scale_log2);
    }
    /* O of one consumer's rows to global (through its Q slice s_o) */
    template <typename T, int D>
    __device__ __forceinline__ void store_o(const float (&acc_o)[hop_dpad(D) / 2], const float (&sum)[2],
                                            uint32_t s_o, T *oh, size_t ostride, int r_base, int S, int warp, int g,
                                            int t, int tid, uint32_t bar_id) const
    {
        hop_store_o<T, D>(acc_o, sum, s_o, oh, ostride, r_base, S, warp, tid, bar_id);
    }
};

/* Whether a consumer policy keeps the softmax statistics (Policy::LSE; the
 * lab's policies have no such member: they do not). */
template <typename P, typename = void> struct hop_keeps_lse : std::false_type {};
template <typename P> struct hop_keeps_lse<P, std::void_t<decltype(P::LSE)>> : std::bool_constant<P::LSE> {};

/* The backward's saving forward: the shipped policy, and each row's softmax
 * statistic for the backward, lse = max·scale·log2(e) + log2(sum) (the
 * log-sum-exp of the scaled scores in log2 units, as flash_mma keeps it):
 * dense, at lse[head·s_pad + row]; ragged, at lse[(tok0 + row)·heads +
 * head] (the backward's prep kernel lays it out as the dense one). Rows in
 * [0, len) only; plain grids (no XT: the statistic is written where the
 * work tile ends). */
struct hop_policy_lse : hop_policy {
    static constexpr bool LSE = true;
    float *lse;
    int s_pad;
    __device__ __forceinline__ void keep_lse(const float (&row_max)[2], const float (&row_sum)[2], const hop_rows &r,
                                             int bh, int len, int tok0, int n_heads, bool ragged,
                                             float scale_log2) const
    {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float s = row_sum[h];
            s += __shfl_xor_sync(0xffffffffu, s, 1);
            s += __shfl_xor_sync(0xffffffffu, s, 2);
            const int row = r.row0 + 8 * h;
            /* every row in [0, len) saw a key at least: its max is finite */
            if (r.t != 0 || row < 0 || row >= len) continue;
            const size_t at = ragged ? (size_t)(tok0 + row) * n_heads + bh : (size_t)bh * s_pad + row;
            lse[at] = row_max[h] * scale_log2 + log2f(s);
        }
    }
};

/* One consumer warpgroup: 64 query rows of each of its work tiles. Ring
 * positions n below count K/V tiles over all of this CTA's work tiles
 * (tile it of the current work tile is slot(it)). */
template <typename T, int D, typename C, typename Schedule = hop_schedule<C>, typename Policy = hop_policy>
struct hop_consumer {
    static constexpr int BN = C::BN, NCW = C::NCW, QB = hop_smem<D, C>::QB;
    const Schedule &sch;
    const hop_smem<D, C> &sm;
    const hop_barriers<D, C> &bar;
    T *o;
    const CUtensorMap *tm_o; /* O as TMA sees it (OBUF, dense: the epilogue stores through it) */
    float scale_log2;
    Policy pol;
    int cw;                 /* consumer 0 .. NCW-1: its 64-row slice of the work tile */
    int tid, warp, lane, g; /* thread in the warpgroup, warp, lane, quad row */
    hop_rows rows;

    /* the current work tile; its sequence's length and first token (dense:
     * S and 0) */
    int m0 = 0, bh = 0, n_tiles = 0, len = 0, tok0 = 0;
    /* tiles this consumer computes (causal: up to its last row's tile; the
     * later ones are masked for all its rows and get barrier turns only),
     * and whether its last one needs only its first 128 keys (BN > 128: the
     * rest lie past S or past its last row, so their wgmmas are not issued) */
    int n_mine = 0;
    bool short_last = false;
    int kv0 = 0;                   /* ring position of the tile's first K/V tile */
    int span_ns = 1, span_sig = 0; /* SPAN: the work tile's heads, and this consumer's head minus the first */
    int qb = 0;                    /* the tile's Q buffer */
    bool idle = false;             /* all of this consumer's rows lie outside [0, S) */
    bool final_tile = true;        /* no work tile after this one (ping-pong's last turn) */
    bool next_idle = false;        /* XT: the next work tile is idle for this consumer */
    /* TMA_STORE: a Q buffer whose O store may still read it (-1: none) */
    struct pending_q {
        int qb = -1;
    };
    struct no_pending_q {};
    std::conditional_t<Policy::TMA_STORE, pending_q, no_pending_q> pending;
    uint64_t desc_q = 0;

    /* m64nD accumulator, D padded to 64 columns; piece c is acc_o[32c .. 32c+31] */
    float acc_o[hop_dpad(D) / 2];
    float acc_s[BN / 2];
    uint32_t p[BN / 16][4];
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};

    __device__ __forceinline__ hop_consumer(const Schedule &sch_, const hop_smem<D, C> &sm_,
                                            const hop_barriers<D, C> &bar_, T *o_, const CUtensorMap *tm_o_,
                                            float scale_log2_, int cw_, Policy pol_ = Policy())
        : sch(sch_), sm(sm_), bar(bar_), o(o_), tm_o(tm_o_), scale_log2(scale_log2_), pol(pol_), cw(cw_),
          tid((int)threadIdx.x % 128)
    {
        /* warp-uniform too (broadcast): the mask test on warp_row0 is a uniform branch */
        warp = __shfl_sync(0xffffffffu, tid / 32, 0);
        lane = tid % 32;
        g = lane / 4;
        rows = {0, 0, lane % 4};
#pragma unroll
        for (int i = 0; i < BN / 2; i++) acc_s[i] = 0.f;
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
            for (int r = 0; r < 4; r++) p[kk][r] = 0u;
    }

    __device__ __forceinline__ int n_streams(void) const { return C::SPAN ? span_ns : 1; }
    /* SPAN: step it has one K/V tile per head of the work tile, at ring
     * positions kv0 + ns·it + h; this consumer uses its own head's */
    __device__ __forceinline__ int slot(int it) const { return kv0 + n_streams() * it + (C::SPAN ? span_sig : 0); }

    /* Ping-pong: consumer w issues its GEMMs between pp_wait (bar 1 + w) and
     * pp_pass (bar 1 + next); the last consumer opens the first round (run)
     * and skips its very last pass, so every barrier gets as many arrives
     * as syncs (every consumer runs the same tiles with the same n_tiles). */
    __device__ __forceinline__ void pp_open(void) const
    {
        if constexpr (Policy::PINGPONG)
            if (cw == NCW - 1) named_arrive(1, 256);
    }
    __device__ __forceinline__ void pp_wait(void) const
    {
        if constexpr (Policy::PINGPONG) named_sync(1 + cw, 256);
    }
    __device__ __forceinline__ void pp_pass(bool last_step) const
    {
        if constexpr (Policy::PINGPONG)
            if (!(last_step && final_tile && cw == NCW - 1)) named_arrive(1 + (cw + 1) % NCW, 256);
    }

    template <bool SHORT> __device__ __forceinline__ void issue_qk(int n)
    {
        hop_issue_qk<T, D, BN, SHORT>(acc_s, desc_q, sm.k_tile(n));
    }
    template <bool SHORT> __device__ __forceinline__ void issue_pv(int n)
    {
        hop_issue_pv<T, D, BN, SHORT ? 128 / 16 : BN / 16, C::PVN>(acc_o, p, sm.v_tile(n));
    }
    __device__ __forceinline__ void softmax(int it, float (&rescale)[2])
    {
        float neg_base[2];
        hop_softmax_max<BN>(acc_s, row_max, row_sum, rescale, neg_base, rows, it, len, sch.causal, scale_log2);
        pol.template exp2_tile<BN>(acc_s, row_sum, neg_base, scale_log2);
    }
    __device__ __forceinline__ void zero_o(void)
    {
#pragma unroll
        for (int i = 0; i < hop_dpad(D) / 2; i++) acc_o[i] = 0.f;
    }

    /* Work tile k becomes the current one: its rows, Q buffer and length;
     * waits until its Q has arrived. false: no work tile k. */
    __device__ __forceinline__ bool begin_tile(int k)
    {
        const int tile = sch.tile_at(k);
        if (tile >= sch.n_work) return false;
        sch.decode(tile, cw, m0, bh, n_tiles, len, tok0);
        if constexpr (C::SPAN) {
            int h0;
            sch.heads(tile, bh, h0, span_ns);
            span_sig = m0 + 64 * cw >= len ? 0 : bh - h0;
        }
        final_tile = sch.tile_at(k + 1) >= sch.n_work;
        if constexpr (C::XT) {
            next_idle = false;
            if (!final_tile) {
                int nx_m0, nx_bh, nx_n, nx_len, nx_tok0;
                sch.decode(sch.tile_at(k + 1), cw, nx_m0, nx_bh, nx_n, nx_len, nx_tok0);
                next_idle = nx_m0 + 64 * cw >= nx_len || nx_m0 + 64 * cw < 0;
            }
        }
        qb = k % QB;
        desc_q = make_desc(sm.q_slice(qb, cw), 16, 1024);
        rows.warp_row0 = m0 + 64 * cw + 16 * warp;
        rows.row0 = rows.warp_row0 + g;
        /* rows past the sequence, or (RAGGED_FIRST) before 0: m0 is then a
         * multiple of 64, so a slice is either wholly outside or wholly inside */
        idle = m0 + 64 * cw >= len || m0 + 64 * cw < 0;
        /* keys this consumer's rows can see: all of the sequence, or (causal) up to its last row */
        const int own_end = sch.causal ? min(len, m0 + 64 * cw + 64) : len;
        n_mine = n_tiles;
        if (sch.causal && pol.skip_masked_tiles()) n_mine = min(n_tiles, (own_end + BN - 1) / BN);
        short_last = !C::XT && BN > 128 && pol.short_last_tile() && (n_mine - 1) * BN + 128 >= own_end;
        row_max[0] = row_max[1] = -INFINITY;
        row_sum[0] = row_sum[1] = 0.f;
        bar.wait_q(qb, cw, k / QB);
        return true;
    }

    /* OBUF: this work tile's last Q·Kᵀ is complete (the caller waited for
     * it), so its Q slice goes back to the producer now: the next-but-one
     * tile's Q loads during this tile's last P·V and epilogue */
    __device__ __forceinline__ void q_read_done(void) const
    {
        if constexpr (C::OBUF) bar.release_q_read(qb, cw, lane);
    }

    /* O of a finished work tile (rows e_m0 + 64·cw.. of head e_bh, of a
     * sequence of e_len rows from token e_tok0; row sums sum) to global;
     * then (unless OBUF: released already) its Q buffer e_qb goes back to
     * the producer. Dense O is [B·H, S, D]; ragged, [tokens, H, D]: OBUF
     * stores a dense O by TMA, a ragged one (whose boxes would cross into
     * the next sequence's rows) by 16-byte copies from its buffer. */
    __device__ __forceinline__ void epilogue(int e_m0, int e_bh, int e_len, int e_tok0, int e_qb,
                                             const float (&sum)[2])
    {
        T *oh = sch.tiles ? o + ((size_t)e_tok0 * sch.n_bh + e_bh) * D : o + (size_t)e_bh * sch.S * D;
        const size_t ostride = sch.tiles ? (size_t)sch.n_bh * D : (size_t)D;
        if constexpr (C::OBUF) {
            if (!sch.tiles)
                hop_store_o_tma<T, D>(acc_o, sum, sm.o_slice(e_qb, cw), tm_o, e_m0 + 64 * cw, e_bh, warp, tid,
                                      8 + cw);
            else
                pol.template store_o<T, D>(acc_o, sum, sm.o_slice(e_qb, cw), oh, ostride, e_m0 + 64 * cw, e_len,
                                           warp, g, rows.t, tid, 8 + cw);
        } else if constexpr (Policy::TMA_STORE) {
            static_assert(QB == 2 && !C::XT, "a TMA store of O: two Q buffers, no XT");
            pol.template store_o_tma<T, D>(acc_o, sum, sm.q_slice(e_qb, cw), e_m0 + 64 * cw, e_bh, warp, tid,
                                           8 + cw);
            pending.qb = e_qb;
        } else {
            pol.template store_o<T, D>(acc_o, sum, sm.q_slice(e_qb, cw), oh, ostride, e_m0 + 64 * cw, e_len, warp,
                                       g, rows.t, tid, 8 + cw);
            bar.release_q(e_qb, cw, lane);
        }
    }

    /* TMA_STORE: the previous work tile's Q slice back to the producer, once
     * its O store has read it (by then long done: a step has passed) */
    __device__ __forceinline__ void release_pending(void)
    {
        if constexpr (Policy::TMA_STORE) {
            if (pending.qb >= 0) {
                if (tid == 0) bulk_wait_reads();
                bar.release_q(pending.qb, cw, lane);
                pending.qb = -1;
            }
        }
    }

    /* -------- the pipeline's steps: the barrier turns of each, with or
     * without math. A consumer with no rows in [0, S) and the key tiles
     * past a consumer's last row take the same waits, ping-pong turns and
     * releases with no math, so that the producer and the other consumers
     * see the usual counts. (Separate paths, not early returns in the GEMM
     * code: those made ptxas serialise the wgmmas, C7514.) */

    /* step 0: Q·K(0)ᵀ and its softmax (O is still 0: nothing to rescale);
     * a short Q·Kᵀ's branch closes after the wait, or ptxas serialises
     * the wgmmas (C7515) */
    __device__ __forceinline__ void first_step(float (&rescale)[2])
    {
        zero_o();
        bar.wait_k(slot(0));
        pp_wait();
        if (BN > 128 && short_last && n_mine == 1) {
            issue_qk<true>(slot(0));
            pp_pass(n_tiles == 1);
            wgmma_wait<0>();
        } else {
            issue_qk<false>(slot(0));
            pp_pass(n_tiles == 1);
            wgmma_wait<0>();
        }
        fence_regs(acc_s);
        bar.release_k(slot(0), lane);
        if (n_mine == 1) q_read_done();
        softmax(0, rescale);
        hop_convert_p<T, BN>(p, acc_s);
    }

    /* step it's GEMMs: Q·K(it)ᵀ with P·V of it-1, then the wait for the first */
    template <bool SHORT> __device__ __forceinline__ void issue_step(int it)
    {
        issue_qk<SHORT>(slot(it));
        bar.wait_v(slot(it - 1)); /* separate rings: V arrives after K of the next tile */
        issue_pv<false>(slot(it - 1));
        pp_pass(it == n_tiles - 1);
        wgmma_wait<1>();
    }

    /* step it >= 1: S of tile it is ready after wait_group 1 while P·V of
     * it-1 may still run; the softmax of it runs under that P·V */
    __device__ __forceinline__ void step(int it, float (&rescale)[2])
    {
        bar.wait_k(slot(it));
        pp_wait();
        if (BN > 128 && short_last && it == n_mine - 1)
            issue_step<true>(it);
        else
            issue_step<false>(it);
        fence_regs(acc_s);
        bar.release_k(slot(it), lane); /* Q·Kᵀ of tile it has read its K */
        if (it == n_mine - 1) q_read_done();
        softmax(it, rescale);
        /* ptxas hoists the wait below above the whole softmax, which
         * serialises it with P·V; a store of a value that depends on every
         * exp2 pins it here */
        pin_above(sm.scratch(), row_sum[0] + row_sum[1]);
        wgmma_wait<0>();
        fence_regs(acc_o);
        hop_fence_p<BN>(p);
        bar.release_v(slot(it - 1), lane);
        hop_rescale_o<D>(acc_o, rescale);
        hop_convert_p<T, BN>(p, acc_s);
    }

    /* the last P·V of the tile (V already waited for) */
    __device__ __forceinline__ void last_pv(int last)
    {
        if (BN > 128 && short_last)
            issue_pv<true>(slot(last));
        else
            issue_pv<false>(slot(last));
        wgmma_wait<0>();
        fence_regs(acc_o);
        hop_fence_p<BN>(p);
        bar.release_v(slot(last), lane);
    }

    /* causal: the tiles after this consumer's last row's, masked for all
     * of its rows: K's turn and release, then V's */
    __device__ __forceinline__ void pass_masked_tail(void)
    {
        for (int it = n_mine; it < n_tiles; it++) {
            bar.wait_k(slot(it));
            pp_wait();
            pp_pass(it == n_tiles - 1);
            bar.release_k(slot(it), lane);
            bar.wait_v(slot(it));
            bar.release_v(slot(it), lane);
        }
    }

    /* an idle work tile: the steps above without their math, and the Q
     * slice back to the producer */
    __device__ __forceinline__ void pass_idle_tile(void)
    {
        bar.wait_k(slot(0));
        pp_wait();
        pp_pass(n_tiles == 1);
        bar.release_k(slot(0), lane);
        for (int it = 1; it < n_tiles; it++) {
            bar.wait_k(slot(it));
            pp_wait();
            bar.wait_v(slot(it - 1));
            pp_pass(it == n_tiles - 1);
            bar.release_k(slot(it), lane);
            bar.release_v(slot(it - 1), lane);
        }
        bar.wait_v(slot(n_tiles - 1));
        bar.release_v(slot(n_tiles - 1), lane);
        bar.release_q(qb, cw, lane);
    }

    /* XT: the switch to work tile k + 1 without draining. Its Q·K(0)ᵀ goes
     * with this tile's last P·V (V(last) already waited for); XT_EARLY
     * waits for both, writes this tile's O, then runs the new first
     * softmax, otherwise the softmax runs under that P·V and the epilogue
     * follows. P then holds the new tile's first tile and O is zero. */
    __device__ __forceinline__ void switch_tile(int &k, int last, float (&rescale)[2])
    {
        static_assert(!hop_keeps_lse<Policy>::value, "the statistics are kept by configurations without XT only");
        [[maybe_unused]] const int e_m0 = m0, e_bh = bh, e_len = len, e_tok0 = tok0, e_qb = qb;
        const float e_sum[2] = {row_sum[0], row_sum[1]};
        const int last_v = slot(last); /* this tile's last V */
        kv0 += n_streams() * n_tiles;
        k++;
        begin_tile(k);
        bar.wait_k(slot(0));
        pp_wait();
        issue_qk<false>(slot(0));
        issue_pv<false>(last_v);
        pp_pass(n_tiles == 1);
        if constexpr (C::XT_EARLY) {
            wgmma_wait<0>();
            fence_regs(acc_s);
            fence_regs(acc_o);
            hop_fence_p<BN>(p);
            bar.release_k(slot(0), lane);
            bar.release_v(last_v, lane);
            /* the finished tile's rows and head again from its index
             * (fewer registers live across the switch than keeping them) */
            int f_m0, f_bh, f_n, f_len, f_tok0;
            sch.decode(sch.tile_at(k - 1), cw, f_m0, f_bh, f_n, f_len, f_tok0);
            epilogue(f_m0, f_bh, f_len, f_tok0, (k - 1) % QB, e_sum);
            zero_o();
            softmax(0, rescale);
        } else {
            wgmma_wait<1>();
            fence_regs(acc_s);
            bar.release_k(slot(0), lane);
            softmax(0, rescale);
            pin_above(sm.scratch(), row_sum[0] + row_sum[1]);
            wgmma_wait<0>();
            fence_regs(acc_o);
            hop_fence_p<BN>(p);
            bar.release_v(last_v, lane);
            epilogue(e_m0, e_bh, e_len, e_tok0, e_qb, e_sum);
            zero_o();
        }
        hop_convert_p<T, BN>(p, acc_s);
    }

    /* every work tile of this CTA */
    __device__ __forceinline__ void run(void)
    {
        pp_open();
        float rescale[2];
        /* XT: the current work tile's first Q·Kᵀ and softmax were done at
         * the previous tile's end (P holds its first tile, O is zero) */
        bool carried = false;
        for (int k = 0; carried || begin_tile(k);) {
            if (idle) {
                release_pending();
                pass_idle_tile();
                kv0 += n_streams() * n_tiles;
                k++;
                continue;
            }
            if (!carried) first_step(rescale);
            carried = false;
            release_pending();
            for (int it = 1; it < n_mine; it++) step(it, rescale);
            const int last = n_mine - 1; /* the step of this consumer's last P·V */
            bar.wait_v(slot(last));
            if constexpr (C::XT) {
                /* not into an idle next tile, nor when this tile's last key
                 * tiles are skipped (causal): those drain as without XT */
                if (!final_tile && !next_idle && n_mine == n_tiles) {
                    static_assert(QB == 2, "XT needs two Q buffers");
                    switch_tile(k, last, rescale);
                    carried = true;
                    continue;
                }
            }
            last_pv(last);
            pass_masked_tail();
            if constexpr (hop_keeps_lse<Policy>::value)
                pol.keep_lse(row_max, row_sum, rows, bh, len, tok0, sch.n_bh, sch.tiles != nullptr, scale_log2);
            epilogue(m0, bh, len, tok0, qb, row_sum);
            kv0 += n_streams() * n_tiles;
            k++;
        }
        release_pending();
        if constexpr (Policy::TMA_STORE || C::OBUF)
            if (tid == 0) bulk_wait_writes(); /* the last store has read shared memory before the CTA exits */
    }
};
#endif /* HOP_DEVICE */

/* ---------------------------------------------------------------- kernel */

#if HOP_DEVICE
/* One block (the kernel's body, and the lab's): thread 0 sets up the
 * barriers; warpgroup 0 is the producer, the others are consumers, and
 * consume(consumer) runs a consumer's work loop (hop_consumer::run). */
template <typename T, int D, typename C, typename Schedule, typename Policy, typename Consume>
static __device__ __forceinline__ void hop_block(const Schedule &sch, Policy pol, const CUtensorMap *tm_q,
                                                 const CUtensorMap *tm_k, const CUtensorMap *tm_v,
                                                 const CUtensorMap *tm_o, T *o, float scale_log2, Consume consume)
{
    static_assert(hop_smem_bytes<D, C>() <= HOP_SMEM_OPTIN, "shared memory above the opt-in limit");
    extern __shared__ unsigned char smem_raw[];
    const hop_smem<D, C> sm((smem_u32(smem_raw) + 1023u) & ~1023u);
    const hop_barriers<D, C> bar{sm.bars};
    /* warpgroup index broadcast from lane 0: the compiler then knows it is
     * warp-uniform, and so is everything derived from it (the consumer
     * index, its rows, the idle test), which keeps ring positions and wgmma
     * descriptors in uniform registers */
    const int wg = __shfl_sync(0xffffffffu, (int)(threadIdx.x / 128), 0);
    if (threadIdx.x == 0) bar.init();
    /* MC: the other CTA's multicast loads and arrivals target these barriers */
    if constexpr (C::MC)
        cluster_sync();
    else
        __syncthreads();
    if (wg == 0) {
        setmaxnreg_dec<C::PREG>();
        if (threadIdx.x == 0) hop_produce<D, C>(sch, sm, bar, tm_q, tm_k, tm_v);
        return;
    }
    setmaxnreg_inc<C::CREG>();
    hop_consumer<T, D, C, Schedule, Policy> consumer(sch, sm, bar, o, tm_o, scale_log2, wg - 1, pol);
    consume(consumer);
}
#endif

/* Dense: S rows of n_bh = B·H heads, tiles NULL. Ragged: n_ragged work
 * tiles listed in tiles, S the longest sequence, n_bh = H. */
template <typename T, int D, typename C>
static __global__ void __launch_bounds__(C::THREADS, 1)
flash_hopper_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                    const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_o,
                    T *__restrict__ o, int S, int causal,
                    float scale_log2, int n_bh, int sec_heads, int group, const hop_ragged_tile *tiles,
                    int n_ragged)
{
#if HOP_DEVICE
    const hop_schedule<C> sch(S, causal, n_bh, sec_heads, hop_order_all(), group, tiles, n_ragged);
    hop_block<T, D, C>(sch, hop_policy(), &tm_q, &tm_k, &tm_v, &tm_o, o, scale_log2,
                       [](auto &consumer) { consumer.run(); });
#elif defined(__CUDA_ARCH__)
    /* built for a target without wgmma/TMA: supports() never lets this run */
    (void)tm_q, (void)tm_k, (void)tm_v, (void)tm_o, (void)o, (void)S, (void)causal, (void)scale_log2, (void)n_bh,
        (void)sec_heads, (void)group, (void)tiles, (void)n_ragged;
    __trap();
#endif
}

/* flash_hopper_kernel that also keeps each row's softmax statistic
 * (hop_policy_lse) in lse — s_pad rows per head of a dense batch, [tokens,
 * heads] of a ragged one: the backward's saving forward. */
template <typename T, int D, typename C>
static __global__ void __launch_bounds__(C::THREADS, 1)
flash_hopper_lse_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                        const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_o,
                        T *__restrict__ o, int S, int causal, float scale_log2, int n_bh, int sec_heads, int group,
                        const hop_ragged_tile *tiles, int n_ragged, float *__restrict__ lse, int s_pad)
{
#if HOP_DEVICE
    static_assert(!C::XT && !C::MC, "the statistics: plain grids or persistent ones without XT or clusters");
    const hop_schedule<C> sch(S, causal, n_bh, sec_heads, hop_order_all(), group, tiles, n_ragged);
    hop_block<T, D, C>(sch, hop_policy_lse{{}, lse, s_pad}, &tm_q, &tm_k, &tm_v, &tm_o, o, scale_log2,
                       [](auto &consumer) { consumer.run(); });
#elif defined(__CUDA_ARCH__)
    (void)tm_q, (void)tm_k, (void)tm_v, (void)tm_o, (void)o, (void)S, (void)causal, (void)scale_log2, (void)n_bh,
        (void)sec_heads, (void)group, (void)tiles, (void)n_ragged, (void)lse, (void)s_pad;
    __trap();
#endif
}

#endif

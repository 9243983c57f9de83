/* flash_hopper_phases.cuh — the parts flash_hopper's kernel is made of:
 * its configuration type and shared-memory map, the barrier protocol
 * (every mbarrier, its count and each role's waits and arrivals, in one
 * place), the tile scheduler, the producer, and the consumer's math
 * phases (Q·Kᵀ, softmax, P·V, the epilogue's store). The consumer's work
 * loop and the kernel are in flash_hopper_kernel.cuh, whose header
 * comment is the design: what runs where, the shared-memory map, the
 * pipeline and the protocol. The tuning lab (lab/) builds its kernels
 * from the same parts. */
#ifndef ATTN_FLASH_HOPPER_PHASES_CUH
#define ATTN_FLASH_HOPPER_PHASES_CUH

#include <cuda.h> /* CUtensorMap */
#include <math.h>
#include <stdint.h>


#include "hopper_ptx.cuh"

/* One compiled configuration of the kernel (the table in flash_hopper.cu
 * names each instance). */
template <int NCW_, int STAGES_, int VSTAGES_, int BN_, bool PVN_, bool PERS_ = false, int XT_ = 0,
          bool SPAN_ = false, bool MC_ = false, bool OBUF_ = false>
struct hop_cfg {
    static constexpr int NCW = NCW_;       /* consumer warpgroups, 64 query rows each */
    static constexpr int STAGES = STAGES_; /* K ring depth (K+V ring when VSTAGES_ = 0) */
    static constexpr bool SEPKV = VSTAGES_ > 0; /* K and V in rings of their own */
    static constexpr int VSTAGES = SEPKV ? VSTAGES_ : STAGES_;
    static constexpr int BN = BN_;         /* keys per K/V tile */
    static constexpr bool PVN = PVN_;      /* P·V as m64n128k16 per 128 columns of D (else m64n64k16 per 64) */
    static constexpr bool PERS = PERS_;    /* persistent grid: one CTA per SM walks the work tiles */
    /* XT_ 1: the next work tile's first Q·Kᵀ goes out with this tile's last
     * P·V and its softmax runs under it, then this tile's epilogue; 2: both
     * GEMMs are waited for, the epilogue, then the softmax (fewer registers
     * live: what fits the 3-consumer kernel's 160) */
    static constexpr bool XT = XT_ != 0;
    static constexpr bool XT_EARLY = XT_ == 2;
    /* a work tile is NCW consecutive 64-row slices of every head's slices */
    static constexpr bool SPAN = SPAN_;
    /* persistent, on 2-CTA clusters: the two CTAs run work tiles that read
     * the same K/V tiles (the query heads 2v, 2v + 1 of one K/V group at one
     * row block, or two row blocks of one head) and load each K/V tile once
     * for both: each CTA issues half of its boxes, multicast to the two
     * (hop_pairs; plain grids on clusters lost 1-3% to their single-CTA
     * twins: variants/NOTES-flash_hopper.md, 'K/V multicast to a 2-CTA
     * cluster') */
    static constexpr bool MC = MC_;
    static constexpr int CL = MC_ ? 2 : 1; /* CTAs per cluster */
    static_assert(!MC_ || (PERS_ && !SPAN_), "MC: a persistent grid of work tiles of one head each");
    /* O staged in a buffer of its own (not the Q slice) and, dense, stored
     * by TMA; the Q slice goes back to the producer once the work tile's
     * last Q·Kᵀ is complete, before its last P·V and epilogue */
    static constexpr bool OBUF = OBUF_;
    static_assert(!OBUF_ || (PERS_ && XT_ == 0 && !SPAN_), "OBUF: the persistent kernel that drains between tiles");
    static_assert(BN_ == 64 || BN_ == 80 || BN_ == 96 || BN_ == 128 || BN_ == 192, "BN: 64, 80, 96, 128 or 192");
    static_assert(!XT || (PERS_ && SEPKV), "XT: the persistent kernel with separate K and V rings");
    static_assert(!SPAN_ || (PERS_ && VSTAGES_ >= NCW_ && STAGES_ >= NCW_ && XT),
                  "SPAN: persistent XT kernel, K and V rings at least NCW deep");
    static constexpr int BM = 64 * NCW;
    static constexpr int THREADS = 128 * (NCW + 1);
    static constexpr int PREG = 24;
    /* 2 consumers: 24 + 2·240 = 3·168; 3 consumers: 24 + 3·160 <= 4·128 */
    static constexpr int CREG = NCW == 2 ? 240 : 160;
};

#define HOP_Q_CHUNK (64 * 128) /* one Q box: 64 rows × 128 bytes */

/* Boxes of 64 columns that hold a row of head_dim d, and d padded to them:
 * a D = 96 row is two boxes, the second half zeros (TMA fills the columns
 * past D), so the GEMMs and O's accumulator see D = 128; the padded
 * columns of O are never stored. */
static constexpr __host__ __device__ int hop_chunks(int d) { return (d + HOP_CHUNK_COLS - 1) / HOP_CHUNK_COLS; }
static constexpr __host__ __device__ int hop_dpad(int d) { return hop_chunks(d) * HOP_CHUNK_COLS; }
#define HOP_SMEM_OPTIN 232448  /* 227 KiB, the sm_90 opt-in limit per block */
#define HOP_BAR_BYTES 256      /* mbarriers of one ring; the last 64 bytes hold the scratch words */

template <typename C> static constexpr __host__ __device__ uint32_t hop_bar_bytes(void)
{
    return C::SEPKV ? 2 * HOP_BAR_BYTES : HOP_BAR_BYTES;
}
template <int D, typename C> static constexpr __host__ __device__ size_t hop_smem_with(int qbufs)
{
    return (size_t)(qbufs + (C::OBUF ? 1 : 0)) * C::NCW * hop_chunks(D) * HOP_Q_CHUNK +
           (size_t)(C::STAGES + C::VSTAGES) * hop_chunks(D) * C::BN * 128 + hop_bar_bytes<C>() + 1024;
}
/* Q buffers: persistent configs double-buffer Q where it fits (the next
 * tile's Q loads while this tile's epilogue still uses the current one). */
template <int D, typename C> static constexpr __host__ __device__ int hop_qbufs(void)
{
    return C::PERS && hop_smem_with<D, C>(2) <= HOP_SMEM_OPTIN ? 2 : 1;
}
template <int D, typename C> static constexpr __host__ __device__ size_t hop_smem_bytes(void)
{
    return hop_smem_with<D, C>(hop_qbufs<D, C>());
}

/* A ragged batch's work tile: its sequence's first token and length, its
 * query head, and its first row within the sequence (may be below 0: idle
 * consumers, as ragged_first). The host lists them (flash_hopper.cu). */
struct hop_ragged_tile {
    int tok0, len, head, m0;
};

/* MC: the pairs of work tiles of a dense problem of S rows and n_bh query
 * heads, row blocks of bm rows (hop_schedule's order): with an even group
 * of query heads per K/V head, two query heads at each row block; else two
 * row blocks of each head. */
static constexpr __host__ __device__ int hop_pairs(int S, int bm, int n_bh, int group)
{
    return group % 2 == 0 ? (S + bm - 1) / bm * (n_bh / 2) : (S + 2 * bm - 1) / (2 * bm) * n_bh;
}

#if HOP_DEVICE
/* ------------------------------------------------------ shared memory */

/* The addresses of the shared-memory map (flash_hopper_kernel.cuh's header),
 * from the 1024-aligned base. */
template <int D, typename C> struct hop_smem {
    static constexpr int CHUNKS = hop_chunks(D);
    static constexpr uint32_t KCH = C::BN * 128;           /* one K or V box: BN rows × 128 bytes */
    static constexpr uint32_t TILE = CHUNKS * KCH;         /* one K or V tile */
    static constexpr uint32_t QWG = CHUNKS * HOP_Q_CHUNK;  /* one consumer's 64 Q rows */
    static constexpr int QB = hop_qbufs<D, C>();
    uint32_t q, k, v, ob, bars;
    __device__ __forceinline__ explicit hop_smem(uint32_t base)
        : q(base), k(base + QB * C::NCW * QWG), v(k + C::STAGES * TILE), ob(v + C::VSTAGES * TILE),
          bars(ob + (C::OBUF ? C::NCW * QWG : 0))
    {
    }
    __device__ __forceinline__ uint32_t q_slice(int b, int w) const { return q + (b * C::NCW + w) * QWG; }
    /* where consumer w stages O: OBUF, a buffer of its own (Q's layout);
     * otherwise its slice of Q buffer b */
    __device__ __forceinline__ uint32_t o_slice(int b, int w) const
    {
        return C::OBUF ? ob + w * QWG : q_slice(b, w);
    }
    __device__ __forceinline__ uint32_t k_tile(int n) const { return k + (n % C::STAGES) * TILE; }
    __device__ __forceinline__ uint32_t v_tile(int n) const { return v + (n % C::VSTAGES) * TILE; }
    __device__ __forceinline__ uint32_t scratch(void) const { return bars + hop_bar_bytes<C>() - 4 * HOP_SCRATCH_WORDS; }
};

/* -------------------------------------------------- the barrier protocol */

/* Every mbarrier of the block, its arrival count, and each role's side of
 * the protocol (flash_hopper_kernel.cuh's header). n is a ring position;
 * with one shared ring, the V calls of the producer and the K release of a
 * consumer are folded into the K ones. */
template <int D, typename C> struct hop_barriers {
    static constexpr int STAGES = C::STAGES, VSTAGES = C::VSTAGES, NCW = C::NCW;
    static constexpr int QB = hop_qbufs<D, C>();
    static constexpr int NRING = C::SEPKV ? 2 * (STAGES + VSTAGES) : 2 * STAGES;
    static constexpr uint32_t TILE = hop_smem<D, C>::TILE;
    /* arrivals that free a K/V slot: every consumer warp of the cluster (MC:
     * the other CTA's multicast writes into this CTA's slot too) */
    static constexpr uint32_t CONSUMER_WARPS = 4 * NCW * C::CL;
    static_assert((NRING + 2 * QB * NCW) * 8 <= (int)hop_bar_bytes<C>() - 4 * HOP_SCRATCH_WORDS,
                  "mbarriers must end before the scratch words");
    static_assert(4 * (NCW + 1) <= HOP_SCRATCH_WORDS, "a scratch word per warp");
    uint32_t bars;

    /* full/empty: the K ring (or the shared K+V ring); vfull/vempty: the V ring */
    __device__ __forceinline__ uint32_t full(int s) const { return bars + 8u * s; }
    __device__ __forceinline__ uint32_t empty(int s) const { return bars + 8u * (STAGES + s); }
    __device__ __forceinline__ uint32_t vfull(int s) const { return bars + 8u * (2 * STAGES + s); }
    __device__ __forceinline__ uint32_t vempty(int s) const { return bars + 8u * (2 * STAGES + VSTAGES + s); }
    __device__ __forceinline__ uint32_t qfull(int b, int w) const { return bars + 8u * (NRING + b * NCW + w); }
    __device__ __forceinline__ uint32_t qempty(int b, int w) const
    {
        return bars + 8u * (NRING + QB * NCW + b * NCW + w);
    }

    /* thread 0, before the __syncthreads() that splits the roles */
    __device__ __forceinline__ void init(void) const
    {
#pragma unroll
        for (int s = 0; s < STAGES; s++) {
            mbar_init(full(s), 1);
            mbar_init(empty(s), CONSUMER_WARPS);
        }
        if constexpr (C::SEPKV) {
#pragma unroll
            for (int s = 0; s < VSTAGES; s++) {
                mbar_init(vfull(s), 1);
                mbar_init(vempty(s), CONSUMER_WARPS);
            }
        }
#pragma unroll
        for (int b = 0; b < QB; b++)
#pragma unroll
            for (int w = 0; w < NCW; w++) {
                mbar_init(qfull(b, w), 1);
                mbar_init(qempty(b, w), 4);
            }
        mbar_init_fence();
    }

    /* ---- producer: wait until slot n is free, arm its full barrier for the
     * bytes about to be loaded; returns that barrier for the TMA loads.
     * SPAN, when the work tile spans heads (spans): first arrive stand_in
     * times for the consumer warps of the other heads, which do not use
     * this slot. */
    __device__ __forceinline__ uint32_t acquire_k(int n, bool spans, uint32_t stand_in) const
    {
        const int s = n % STAGES;
        mbar_wait(empty(s), ((uint32_t)(n / STAGES) & 1u) ^ 1u, "kempty");
        if (C::SPAN && spans) mbar_arrive_n(empty(s), stand_in);
        mbar_arrive_expect_tx(full(s), C::SEPKV ? TILE : 2 * TILE);
        return full(s);
    }
    __device__ __forceinline__ uint32_t acquire_v(int n, bool spans, uint32_t stand_in) const
    {
        static_assert(C::SEPKV, "one shared ring: V comes with K");
        const int s = n % VSTAGES;
        mbar_wait(vempty(s), ((uint32_t)(n / VSTAGES) & 1u) ^ 1u, "vempty");
        if (C::SPAN && spans) mbar_arrive_n(vempty(s), stand_in);
        mbar_arrive_expect_tx(vfull(s), TILE);
        return vfull(s);
    }
    /* MC, the producer's last act: every K/V slot released by every consumer
     * warp of the cluster, from ring position n on (the next one it would
     * load), so that no arrival of the other CTA's consumers reaches this
     * CTA after it has exited */
    __device__ __forceinline__ void drain(int n) const
    {
        for (int i = n; i < n + STAGES; i++)
            mbar_wait(empty(i % STAGES), ((uint32_t)(i / STAGES) & 1u) ^ 1u, "kempty (drain)");
        if constexpr (C::SEPKV)
            for (int i = n; i < n + VSTAGES; i++)
                mbar_wait(vempty(i % VSTAGES), ((uint32_t)(i / VSTAGES) & 1u) ^ 1u, "vempty (drain)");
    }

    /* Q buffer b of consumer w, its use-th use; bytes 0: no rows to load
     * (the consumer is idle), a plain arrival completes the phase */
    __device__ __forceinline__ void acquire_q(int b, int w, int use, uint32_t bytes) const
    {
        mbar_wait(qempty(b, w), ((uint32_t)use & 1u) ^ 1u, "qempty");
        if (bytes)
            mbar_arrive_expect_tx(qfull(b, w), bytes);
        else
            mbar_arrive(qfull(b, w));
    }

    /* ---- consumer: wait until slot n has arrived; release it once every
     * wgmma that reads it is complete (one arrival per warp; MC, lane r of
     * each warp arrives on CTA r's barrier) */
    __device__ __forceinline__ void wait_k(int n) const
    {
        mbar_wait(full(n % STAGES), (uint32_t)(n / STAGES) & 1u, "full");
    }
    __device__ __forceinline__ void wait_v(int n) const
    {
        if constexpr (C::SEPKV) mbar_wait(vfull(n % VSTAGES), (uint32_t)(n / VSTAGES) & 1u, "vfull");
    }
    __device__ __forceinline__ void release_slot(uint32_t bar, int lane) const
    {
        if constexpr (C::MC) {
            if (lane < C::CL) mbar_arrive_cluster(bar, (uint32_t)lane);
        } else {
            if (lane == 0) mbar_arrive(bar);
        }
    }
    __device__ __forceinline__ void release_k(int n, int lane) const
    {
        if constexpr (C::SEPKV) {
            __syncwarp();
            release_slot(empty(n % STAGES), lane);
        }
    }
    /* V of slot n; with one shared ring, K and V of slot n */
    __device__ __forceinline__ void release_v(int n, int lane) const
    {
        __syncwarp();
        release_slot(C::SEPKV ? vempty(n % VSTAGES) : empty(n % STAGES), lane);
    }
    __device__ __forceinline__ void wait_q(int b, int w, int use) const
    {
        mbar_wait(qfull(b, w), (uint32_t)use & 1u, "qfull");
    }
    /* the consumer's Q slice (read by its wgmmas, then O's staging) goes
     * back to the producer: generic accesses before the next TMA write */
    __device__ __forceinline__ void release_q(int b, int w, int lane) const
    {
        fence_proxy_async();
        __syncwarp();
        if (lane == 0) mbar_arrive(qempty(b, w));
    }
    /* OBUF: the slice was read by wgmmas only (already complete), so no
     * generic access needs ordering against the next TMA write */
    __device__ __forceinline__ void release_q_read(int b, int w, int lane) const
    {
        __syncwarp();
        if (lane == 0) mbar_arrive(qempty(b, w));
    }
};

/* ------------------------------------------------------ tile scheduler */

/* Work tiles and their order. Persistent: CTA x takes in round k the tile
 * k·G + (k odd ? G-1-x : x) (G CTAs; a snake, so that the CTAs that got the
 * heavier tile of a round get the lighter one of the next); plain: one
 * tile, its index the linear block index (the order the hardware
 * dispatches CTAs in). Tile index → section of sec_heads heads → row block
 * → head within the section: the CTAs running at one time share a few
 * heads' K/V in L2, and causal row blocks run last-first (heaviest first).
 * Two refinements (Order): non-causal, S not a multiple of the row block,
 * every head's short last block comes after all the full ones (the grid's
 * tail is made of short blocks: ragged_last); causal, S % 64 == 0, the row
 * blocks are laid to end at S, so that the block with idle consumers (rows
 * < 0) is the lightest one (one key tile) instead of the heaviest
 * (ragged_first). SPAN: tile t is slices NCW·t .. NCW·t + NCW-1 of the
 * sequence of every head's 64-row slices; only the grid's last tile can
 * leave a consumer idle.
 * Ragged batches (tiles set; not SPAN): the host lists every work tile —
 * (first token of its sequence, the sequence's length, query head, first
 * row) — heaviest first (hop_ragged_tiles, flash_hopper.cu), and tile i
 * is entry i: a persistent grid's snake then deals the longest work out
 * first, a plain grid's hardware order runs it first.
 * MC (hop_pairs): the order above is that of pairs of work tiles, one per
 * CTA of a 2-CTA cluster, that read the same K/V tiles: with an even group
 * of query heads per K/V head, the pair is query heads 2v and 2v + 1 at one
 * row block (the order of a problem with half the heads; causal too);
 * otherwise (non-causal only) rows 2·BM·j .. of one head, BM each (the
 * order of a problem with row blocks of 2·BM rows; past S, an idle tile).
 * A persistent grid's snake runs over clusters. */

/* Both refinements on: the shipped kernel's order (the lab's scheduler
 * turns them off one by one for A/B). */
struct hop_order_all {
    __device__ __forceinline__ constexpr bool ragged_last(void) const { return true; }
    __device__ __forceinline__ constexpr bool ragged_first(void) const { return true; }
};

/* n / d for n >= 0 and d >= 1: a shift when d is a power of two (the
 * sequence lengths, head counts and group sizes of every grid), the
 * run-time division otherwise. A division is ~25 dependent instructions,
 * and the decode of a work tile below sits between one tile's last P·V and
 * the next tile's first Q·Kᵀ of each consumer (ncu at D = 128, S = 512:
 * 3.4% of the consumers' stall samples). */
static __device__ __forceinline__ int hop_div(int n, int d)
{
    return (d & (d - 1)) == 0 ? n >> (__ffs(d) - 1) : n / d;
}

template <typename C, typename Order = hop_order_all> struct hop_schedule {
    int S, causal, n_bh, sec_heads; /* ragged: S the longest sequence, n_bh the query heads */
    int group;  /* query heads per K/V head: head bh reads K/V head bh / group */
    int n_mb;   /* row blocks per head */
    int n_sl;   /* SPAN: 64-row slices per head */
    int n_work; /* work tiles of the grid (plain: the CTA's one); MC: pairs of them */
    int pair_heads; /* MC: a pair is two query heads of one K/V group (else two row blocks) */
    int rank;       /* MC: this CTA's rank in its cluster, its tile of each pair */
    const hop_ragged_tile *tiles; /* ragged: the work tiles in order; NULL: a dense batch */
    Order order;

    __device__ __forceinline__ hop_schedule(int S_, int causal_, int n_bh_, int sec_heads_, Order order_ = Order(),
                                            int group_ = 1, const hop_ragged_tile *tiles_ = nullptr,
                                            int n_ragged = 0)
        : S(S_), causal(causal_), n_bh(n_bh_), sec_heads(sec_heads_), group(group_), n_mb((S_ + C::BM - 1) / C::BM),
          n_sl((S_ + 63) / 64),
          n_work(C::SPAN ? (n_sl * n_bh_ + C::NCW - 1) / C::NCW
                 : !C::PERS ? 1
                 : C::MC    ? hop_pairs(S_, C::BM, n_bh_, group_)
                            : (tiles_ ? n_ragged : n_mb * n_bh_)),
          pair_heads(group_ % 2 == 0), rank(0), tiles(tiles_), order(order_)
    {
        if constexpr (C::MC) rank = (int)cluster_rank();
    }

    /* the K/V head (row of K's and V's tensor maps) of query head bh: with
     * grouped heads (B·H query heads over B·KV K/V heads, H = group·KV) the
     * group's consecutive query heads read one, b·KV + h / group = bh / group */
    __device__ __forceinline__ int kv_head(int bh) const { return hop_div(bh, group); }

    /* this CTA's k-th work tile (>= n_work: none) */
    __device__ __forceinline__ int tile_at(int k) const
    {
        if constexpr (C::PERS) {
            const int G = (int)gridDim.x / C::CL, x = (int)blockIdx.x / C::CL;
            return k * G + ((k & 1) ? G - 1 - x : x);
        } else {
            return k;
        }
    }

    /* consumer w's rows of work tile `tile`: m0 + 64·w .. of head bh (m0 may
     * be below 0, and rows may reach past the sequence: an idle consumer),
     * the key tiles the tile's rows see, the sequence's length len and its
     * first token tok0 (dense: S and 0; ragged: bh is the query head, and
     * rows and keys are tok0 + m0.. of the packed tensors) */
    __device__ __forceinline__ void decode(int tile, int w, int &m0, int &bh, int &n_tiles, int &len,
                                           int &tok0) const
    {
        constexpr int BN = C::BN;
        len = S;
        tok0 = 0;
        if constexpr (C::SPAN) {
            const int g = tile * C::NCW + w;
            if (g < n_sl * n_bh) {
                bh = hop_div(g, n_sl);
                m0 = (g - bh * n_sl - w) * 64;
            } else { /* past the last slice: rows from S */
                bh = n_bh - 1;
                m0 = S - 64 * w;
            }
            n_tiles = (S + BN - 1) / BN;
            return;
        }
        if constexpr (C::MC) {
            /* pair `tile`; this CTA's tile of it */
            if (pair_heads) {
                dense_tile(tile, n_bh / 2, C::BM, n_mb, m0, bh);
                bh = 2 * bh + rank;
            } else {
                dense_tile(tile, n_bh, 2 * C::BM, (S + 2 * C::BM - 1) / (2 * C::BM), m0, bh);
                m0 += rank * C::BM;
            }
        } else {
            const int lin = C::PERS ? tile : (int)(blockIdx.x + blockIdx.y * gridDim.x);
            if (tiles) {
                const hop_ragged_tile e = tiles[lin];
                tok0 = e.tok0, len = e.len, bh = e.head, m0 = e.m0;
                const int n_end = causal ? min(len, m0 + C::BM) : len;
                n_tiles = (n_end + BN - 1) / BN;
                return;
            }
            dense_tile(lin, n_bh, C::BM, n_mb, m0, bh);
        }
        const int n_end = causal ? min(S, m0 + C::BM) : S;
        n_tiles = (n_end + BN - 1) / BN;
    }

    /* Dense tile lin of nbh heads cut into nmb row blocks of bm rows: its
     * first row m0 and head bh, in the order of the comment above. */
    __device__ __forceinline__ void dense_tile(int lin, int nbh, int bm, int nmb, int &m0, int &bh) const
    {
        int mb_sec = nmb;
        if (!causal && order.ragged_last() && nmb > 1 && nmb * bm > S) {
            mb_sec = nmb - 1;
            if (lin >= mb_sec * nbh) {
                bh = lin - mb_sec * nbh;
                m0 = mb_sec * bm;
                return;
            }
        }
        const int sec_tiles = sec_heads * mb_sec;
        const int sec = hop_div(lin, sec_tiles);
        const int r = lin - sec * sec_tiles;
        const int h0 = sec * sec_heads;
        const int nh = min(sec_heads, nbh - h0);
        const int mi = hop_div(r, nh);
        bh = h0 + (r - mi * nh);
        const int m_block = causal ? nmb - 1 - mi : mi; /* causal: mb_sec == nmb */
        m0 = m_block * bm;
        if (causal && order.ragged_first() && S % 64 == 0) m0 -= nmb * bm - S;
    }

    /* the first head of a work tile and how many heads its rows span (SPAN:
     * up to NCW; otherwise the tile's one head bh) */
    __device__ __forceinline__ void heads(int tile, int bh, int &h0, int &ns) const
    {
        h0 = bh;
        ns = 1;
        if constexpr (C::SPAN) {
            const int g0 = tile * C::NCW;
            h0 = hop_div(g0, n_sl);
            ns = hop_div(min(g0 + C::NCW, n_sl * n_bh) - 1, n_sl) - h0 + 1;
        }
    }

    /* SPAN: the arrivals on an empty barrier of head h0 + h's slot that the
     * consumer warps of the tile's other heads do not make (idle consumers
     * of the grid's last tile keep head 0's protocol) */
    __device__ __forceinline__ uint32_t stand_in(int tile, int h0, int h) const
    {
        const int g0 = tile * C::NCW, g_end = min(g0 + C::NCW, n_sl * n_bh);
        int users = min(g_end, (h0 + h + 1) * n_sl) - max(g0, (h0 + h) * n_sl);
        if (h == 0) users += g0 + C::NCW - g_end;
        return 4u * (uint32_t)(C::NCW - users);
    }
};

/* ------------------------------------------------------------ producer */

/* Thread 0 of warpgroup 0: every TMA load of the CTA, in the order the
 * consumers use them. MC: box c of each K/V tile comes from the cluster's
 * CTA c % 2, multicast to both; each CTA arms its own full barrier for the
 * whole tile, since both halves land in it (the other CTA's bytes may
 * arrive before the arming: a phase completes only once its one arrival
 * has come and its byte count is back at zero). */
template <int D, typename C, typename Schedule>
static __device__ __forceinline__ void hop_produce(const Schedule &sch, const hop_smem<D, C> &sm,
                                                   const hop_barriers<D, C> &bar, const CUtensorMap *tm_q,
                                                   const CUtensorMap *tm_k, const CUtensorMap *tm_v)
{
    constexpr int CHUNKS = hop_smem<D, C>::CHUNKS, QB = hop_smem<D, C>::QB;
    constexpr uint32_t KCH = hop_smem<D, C>::KCH, QWG = hop_smem<D, C>::QWG;
    int gi = 0; /* K/V tiles issued so far, over all work tiles: the ring position */
    for (int k = 0;; k++) {
        const int tile = sch.tile_at(k);
        if (tile >= sch.n_work) break;
        int m0, bh, n_tiles, h0, ns, len, tok0;
        sch.decode(tile, 0, m0, bh, n_tiles, len, tok0);
        sch.heads(tile, bh, h0, ns);
        /* the K/V head, once per work tile: a division by the group size
         * (a run-time value) per TMA load kept the single producer thread
         * busy enough to starve the consumers at D = 256 */
        const int kvh = sch.kv_head(bh);
        const int b = k % QB;
        /* one Q buffer: the first STAGES K/V tiles go ahead of Q, whose
         * buffer is free only once the previous tile's epilogue is done */
        const int q_at = (QB == 2 || k == 0) ? 0 : min(n_tiles, C::STAGES);
        /* each consumer's 64 Q rows: m0 + 64·w of head bh (SPAN: its own slice) */
        auto load_q = [&]() {
#pragma unroll
            for (int w = 0; w < C::NCW; w++) {
                int q_m0 = m0, q_bh = bh, q_n, q_len, q_tok0;
                if constexpr (C::SPAN) sch.decode(tile, w, q_m0, q_bh, q_n, q_len, q_tok0);
                const bool rows = q_m0 + 64 * w >= 0; /* RAGGED_FIRST: rows before 0, an idle consumer */
                bar.acquire_q(b, w, k / QB, rows ? QWG : 0);
                if (!rows) continue;
#pragma unroll
                for (int c = 0; c < CHUNKS; c++)
                    tma_load_3d(sm.q_slice(b, w) + c * HOP_Q_CHUNK, tm_q, bar.qfull(b, w), c * HOP_CHUNK_COLS,
                                tok0 + q_m0 + 64 * w, q_bh);
            }
        };
        /* the boxes of one K or V tile (keys row.. of K/V head kv) into the
         * slot at dst, counted on barrier full */
        auto load_kv = [&](uint32_t dst, const CUtensorMap *map, uint32_t full, int row, int kv) {
#pragma unroll
            for (int c = 0; c < CHUNKS; c++) {
                if constexpr (C::MC) {
                    if (c % 2 == sch.rank)
                        tma_load_3d_multicast(dst + c * KCH, map, full, c * HOP_CHUNK_COLS, row, kv, 0x3);
                } else {
                    tma_load_3d(dst + c * KCH, map, full, c * HOP_CHUNK_COLS, row, kv);
                }
            }
        };
        if constexpr (C::SEPKV) {
            /* step it loads K(it), then V(it-1); SPAN: one tile per head of
             * the work tile, head h0 + h at ring position gi + ns·it + h */
            for (int it = 0; it <= n_tiles; it++) {
                if (it == q_at) load_q();
                if (it < n_tiles) {
                    for (int h = 0; h < ns; h++) {
                        const int n = gi + ns * it + h;
                        const int kv = C::SPAN ? sch.kv_head(h0 + h) : kvh;
                        const uint32_t full = bar.acquire_k(n, ns > 1, sch.stand_in(tile, h0, h));
                        load_kv(sm.k_tile(n), tm_k, full, tok0 + it * C::BN, kv);
                    }
                }
                if (it > 0) {
                    for (int h = 0; h < ns; h++) {
                        const int n = gi + ns * (it - 1) + h;
                        const int kv = C::SPAN ? sch.kv_head(h0 + h) : kvh;
                        const uint32_t full = bar.acquire_v(n, ns > 1, sch.stand_in(tile, h0, h));
                        load_kv(sm.v_tile(n), tm_v, full, tok0 + (it - 1) * C::BN, kv);
                    }
                }
            }
            gi += ns * n_tiles;
        } else {
            for (int it = 0;; it++) {
                if (it == q_at) load_q();
                if (it == n_tiles) break;
                const uint32_t full = bar.acquire_k(gi, false, 0u);
                load_kv(sm.k_tile(gi), tm_k, full, tok0 + it * C::BN, kvh);
                load_kv(sm.v_tile(gi), tm_v, full, tok0 + it * C::BN, kvh);
                gi++;
            }
        }
    }
    if constexpr (C::MC) bar.drain(gi);
}

/* ------------------------------------------------- the consumer's math */

/* S = Q·Kᵀ of the K tile at k_tile into acc_s (BN keys: one m64n128k16 per
 * 128, then one m64n64k16, m64n80k16 or m64n96k16 for the rest; SHORT: only the
 * first 128, the rest of acc_s keeps stale values that the mask sets to
 * -inf). k-step kk is box kk/4, 32 bytes per 16 columns within it; D / 16
 * k-steps, so a padded D = 96 skips the zero columns. */
template <typename T, int D, int BN, bool SHORT>
static __device__ __forceinline__ void hop_issue_qk(float (&acc_s)[BN / 2], uint64_t desc_q, uint32_t k_tile)
{
    constexpr uint32_t KCH = BN * 128;
    const uint64_t desc_k = make_desc(k_tile, 16, 1024);
    fence_regs(acc_s);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        const uint64_t oq = (uint64_t)(((kk / 4) * HOP_Q_CHUNK + (kk % 4) * 32) >> 4);
        const uint64_t ok = (uint64_t)(((kk / 4) * KCH + (kk % 4) * 32) >> 4);
        /* keys 128·c.. of the tile: 128 rows of 128 bytes further on */
#pragma unroll
        for (int c = 0; c < (SHORT ? 1 : BN / 128); c++)
            wgmma_ss_n128<T>(acc_s + 64 * c, desc_q + oq, desc_k + ok + (uint64_t)((c * 128 * 128) >> 4), kk > 0);
        constexpr int REST = BN % 128;
        const uint64_t ok_rest = ok + (uint64_t)(((BN / 128) * 128 * 128) >> 4);
        float *acc_rest = acc_s + 64 * (BN / 128);
        if constexpr (REST == 64 && !SHORT) wgmma_ss_n64<T>(acc_rest, desc_q + oq, desc_k + ok_rest, kk > 0);
        if constexpr (REST == 80 && !SHORT) wgmma_ss_n80<T>(acc_rest, desc_q + oq, desc_k + ok_rest, kk > 0);
        if constexpr (REST == 96 && !SHORT) wgmma_ss_n96<T>(acc_rest, desc_q + oq, desc_k + ok_rest, kk > 0);
    }
    wgmma_commit();
}

template <int BN> static __device__ __forceinline__ void hop_fence_p(uint32_t (&p)[BN / 16][4])
{
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++) fence_regs(p[kk]);
}

/* O += P·V of the V tile at v_tile, KSTEPS k-steps of 16 keys, 2048 bytes
 * apart (fewer than BN / 16: P is 0 beyond them). Over the padded D: PVN,
 * one m64n128k16 per 128 columns (two boxes) and an m64n64k16 for a last
 * odd box; otherwise one m64n64k16 per box. */
template <typename T, int D, int BN, int KSTEPS, bool PVN>
static __device__ __forceinline__ void hop_issue_pv(float (&acc_o)[hop_dpad(D) / 2], uint32_t (&p)[BN / 16][4],
                                                    uint32_t v_tile)
{
    constexpr uint32_t KCH = BN * 128;
    constexpr int CHUNKS = hop_chunks(D), WIDE = PVN ? CHUNKS / 2 : 0;
    /* D = 64: one descriptor, each wgmma's a constant step from it (as
     * Q·Kᵀ's; the tile and its steps lie below 256 KiB, so the address
     * field takes the step without a carry): 1.2-1.5 % faster there, 3.5 %
     * slower on d128_grid (variants/NOTES-flash_hopper.md) */
    const uint64_t desc_box = make_desc(v_tile, 1024, 1024);
    fence_regs(acc_o);
    hop_fence_p<BN>(p);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < KSTEPS; kk++) {
        /* MN-major SW128: LBO = bytes between 64-column atoms, SBO = 8 keys */
#pragma unroll
        for (int c = 0; c < WIDE; c++)
            wgmma_rs_n128_tb<T>(acc_o + 64 * c, p[kk], make_desc(v_tile + 2 * c * KCH + kk * 2048, KCH, 1024));
#pragma unroll
        for (int c = 2 * WIDE; c < CHUNKS; c++) {
            if constexpr (D == 64)
                wgmma_rs_n64_tb<T>(acc_o + 32 * c, p[kk], desc_box + (uint64_t)((c * KCH + kk * 2048) >> 4));
            else
                wgmma_rs_n64_tb<T>(acc_o + 32 * c, p[kk], make_desc(v_tile + c * KCH + kk * 2048, 1024, 1024));
        }
    }
    wgmma_commit();
}

/* The thread's place in the accumulator layout, and what the softmax needs
 * of the problem. */
struct hop_rows {
    int warp_row0; /* first row of this warp */
    int row0;      /* this thread's rows: row0 and row0 + 8 */
    int t;         /* thread in its quad: columns 2t, 2t + 1 of every 8 */
};

/* First half of the online softmax of key tile `it` (keys it·BN ..): the
 * mask (keys past S, causal: keys past the row) on tiles that need it, the
 * new row maxima, O's rescale factors, and the exponent base; row_sum is
 * rescaled. Rows row0 (e = 0, 1) and row0 + 8 (e = 2, 3). */
template <int BN>
static __device__ __forceinline__ void hop_softmax_max(float (&acc_s)[BN / 2], float (&row_max)[2],
                                                       float (&row_sum)[2], float (&rescale)[2],
                                                       float (&neg_base)[2], const hop_rows &r, int it, int S,
                                                       int causal, float scale_log2)
{
    const int n0 = it * BN;
    /* two loops, each under a uniform branch: one mask loop with both tests
     * on every tile costs a select per score on tiles that need none
     * (ptxas if-converts it) */
    if (n0 + BN > S || (causal && n0 + BN - 1 > r.warp_row0)) {
        if (causal) {
#pragma unroll
            for (int j = 0; j < BN / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int key = n0 + 8 * j + 2 * r.t + (e & 1);
                    const int row = r.row0 + 8 * (e >> 1);
                    if (key >= S || key > row) acc_s[4 * j + e] = -INFINITY;
                }
        } else {
#pragma unroll
            for (int j = 0; j < BN / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    if (n0 + 8 * j + 2 * r.t + (e & 1) >= S) acc_s[4 * j + e] = -INFINITY;
        }
    }
    float new_max[2] = {row_max[0], row_max[1]};
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
        new_max[0] = fmaxf(new_max[0], fmaxf(acc_s[4 * j], acc_s[4 * j + 1]));
        new_max[1] = fmaxf(new_max[1], fmaxf(acc_s[4 * j + 2], acc_s[4 * j + 3]));
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        new_max[h] = fmaxf(new_max[h], __shfl_xor_sync(0xffffffffu, new_max[h], 1));
        new_max[h] = fmaxf(new_max[h], __shfl_xor_sync(0xffffffffu, new_max[h], 2));
        /* a row with nothing unmasked yet keeps max -inf: use 0 as its base */
        neg_base[h] = new_max[h] == -INFINITY ? 0.f : -new_max[h] * scale_log2;
        rescale[h] = ex2(fmaf(row_max[h], scale_log2, neg_base[h]));
        row_max[h] = new_max[h];
        row_sum[h] *= rescale[h];
    }
}

/* Second half: acc_s becomes exp2(s·scale·log2 e - max·...) in place, and
 * the row sums grow by it. */
template <int BN>
static __device__ __forceinline__ void hop_softmax_exp(float (&acc_s)[BN / 2], float (&row_sum)[2],
                                                       const float (&neg_base)[2], float scale_log2)
{
#pragma unroll
    for (int j = 0; j < BN / 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const float x = ex2(fmaf(acc_s[4 * j + e], scale_log2, neg_base[e >> 1]));
            acc_s[4 * j + e] = x;
            row_sum[e >> 1] += x;
        }
}

/* O's columns past D (padding) stay 0: not rescaled */
template <int D>
static __device__ __forceinline__ void hop_rescale_o(float (&acc_o)[hop_dpad(D) / 2], const float (&rescale)[2])
{
#pragma unroll
    for (int j = 0; j < D / 8; j++) {
        acc_o[4 * j + 0] *= rescale[0];
        acc_o[4 * j + 1] *= rescale[0];
        acc_o[4 * j + 2] *= rescale[1];
        acc_o[4 * j + 3] *= rescale[1];
    }
}

/* P's k-step kk = accumulator columns 16kk.. = acc_s[8kk .. 8kk+7] */
template <typename T, int BN>
static __device__ __forceinline__ void hop_convert_p(uint32_t (&p)[BN / 16][4], const float (&acc_s)[BN / 2])
{
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
        for (int r = 0; r < 4; r++) p[kk][r] = pack2(acc_s[8 * kk + 2 * r], acc_s[8 * kk + 2 * r + 1], (T *)nullptr);
}

/* 1 / the sums of the thread's two rows, each spread over its quad */
static __device__ __forceinline__ void hop_row_inverse(const float (&sum)[2], float (&inv)[2])
{
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float s = sum[h];
        s += __shfl_xor_sync(0xffffffffu, s, 1);
        s += __shfl_xor_sync(0xffffffffu, s, 2);
        inv[h] = 1.f / s;
    }
}

/* O / row sums of one consumer's 64 rows into its Q slice s_o (all its
 * wgmma reads are complete), in the layout TMA gave Q (16-byte piece j of
 * row r at j ^ (r % 8)). The accumulator is already in the layout of
 * stmatrix's 8x8 matrices (rows g, g + 8 of each 8-column block), so a
 * warp stores two column blocks of its 16 rows per stmatrix.x4; each
 * matrix's 8 rows land on 8 different pieces, all 32 banks. Columns past
 * D (D = 96's padding) are not written. */
template <typename T, int D>
static __device__ __forceinline__ void hop_stage_o(const float (&acc_o)[hop_dpad(D) / 2], const float (&sum)[2],
                                                   uint32_t s_o, int warp, int tid)
{
    float inv[2];
    hop_row_inverse(sum, inv);
    /* lane l addresses row l % 8 of matrix m = l / 8: rows 16·warp + 8·(m & 1)
     * + l % 8, column block j + (m >> 1) for an even j, whose piece is
     * (j % 8) ^ (m >> 1) ^ (l % 8) */
    const int lane = tid % 32, m = lane / 8;
    const uint32_t lane_row = s_o + (16 * warp + 8 * (m & 1) + lane % 8) * 128;
    const uint32_t lane_xor = (uint32_t)((m >> 1) ^ (lane % 8));
#pragma unroll
    for (int j = 0; j < D / 8; j += 2) {
        uint32_t r[4];
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const int jj = j + (q >> 1), h = q & 1;
            r[q] = pack2(acc_o[4 * jj + 2 * h] * inv[h], acc_o[4 * jj + 2 * h + 1] * inv[h], (T *)nullptr);
        }
        stmatrix_x4(lane_row + (j / 8) * HOP_Q_CHUNK + (((uint32_t)(j % 8) ^ lane_xor) * 16), r[0], r[1], r[2], r[3]);
    }
}

/* O / row sums of one consumer's 64 rows (r_base.. of the head at oh, rows
 * ostride elements apart) to global, rows < S only, D columns: staged in
 * the consumer's Q slice s_o (hop_stage_o), then 16-byte coalesced loads
 * and stores. bar_id: a named barrier of the consumer's 128 threads. */
template <typename T, int D>
static __device__ __forceinline__ void hop_store_o(const float (&acc_o)[hop_dpad(D) / 2], const float (&sum)[2],
                                                   uint32_t s_o, T *oh, size_t ostride, int r_base, int S, int warp,
                                                   int tid, uint32_t bar_id)
{
    /* computed here, at each call: hoisted out of the work-tile loop (they
     * are the same for every tile), the addresses stay live across the
     * whole loop and spill */
    asm volatile("" : "+r"(s_o), "+r"(warp), "+r"(tid));
    hop_stage_o<T, D>(acc_o, sum, s_o, warp, tid);
    named_sync(bar_id, 128);
    constexpr int PIECES_PER_ROW = D / 8, ROWS = 128 / PIECES_PER_ROW;
    if constexpr (128 % PIECES_PER_ROW != 0 || ROWS % 8 != 0) {
        /* D = 96, 192, 256: 16-byte piece tid + 128·i of the 64 rows' pieces */
        static_assert(64 * PIECES_PER_ROW % 128 == 0, "whole rounds of 128 pieces");
#pragma unroll
        for (int i = 0; i < 64 * PIECES_PER_ROW / 128; i++) {
            const int idx = tid + 128 * i, r = idx / PIECES_PER_ROW, cp = idx % PIECES_PER_ROW;
            if (r_base + r >= S) continue;
            copy16_shared_to_global(oh + (size_t)(r_base + r) * ostride + 8 * cp,
                                    s_o + (cp / 8) * HOP_Q_CHUNK + r * 128 + (((cp % 8) ^ (r % 8)) * 16));
        }
    } else {
        /* D = 64, 128: thread tid copies 16-byte piece cp of rows r0, r0 +
         * ROWS, ... (ROWS a multiple of 8: the same swizzle for all of them) */
        const int r0 = tid / PIECES_PER_ROW, cp = tid % PIECES_PER_ROW;
        const uint32_t piece_addr = s_o + (cp / 8) * HOP_Q_CHUNK + r0 * 128 + (((cp % 8) ^ (r0 % 8)) * 16);
#pragma unroll
        for (int i = 0; i < 64 / ROWS; i++) {
            const int r = r0 + ROWS * i;
            if (r_base + r >= S) continue;
            copy16_shared_to_global(oh + (size_t)(r_base + r) * ostride + 8 * cp, piece_addr + i * ROWS * 128);
        }
    }
}

/* O / row sums of one consumer's 64 rows (row r_base.. of head bh of a
 * dense O) staged in s_o, then one thread stores its 64-column boxes
 * through O's tensor map (rows >= S and D = 96's padding fall outside the
 * tensor and are not written), into its bulk group. The caller makes sure
 * that no earlier store still reads s_o. bar_id: a named barrier of the
 * consumer's 128 threads. */
template <typename T, int D>
static __device__ __forceinline__ void hop_stage_store_o_tma(const float (&acc_o)[hop_dpad(D) / 2],
                                                             const float (&sum)[2], uint32_t s_o,
                                                             const CUtensorMap *tm_o, int r_base, int bh, int warp,
                                                             int tid, uint32_t bar_id)
{
    hop_stage_o<T, D>(acc_o, sum, s_o, warp, tid);
    fence_proxy_async(); /* this thread's shared writes before the store's reads */
    named_sync(bar_id, 128);
    if (tid == 0) {
#pragma unroll
        for (int c = 0; c < hop_chunks(D); c++)
            tma_store_3d(tm_o, s_o + c * HOP_Q_CHUNK, c * HOP_CHUNK_COLS, r_base, bh);
        bulk_commit_group();
    }
}

/* OBUF's epilogue for a dense O: the above into the consumer's own O
 * buffer s_o, once the previous work tile's store from it has read it
 * (long done: thread 0 waits, the barrier tells the others). */
template <typename T, int D>
static __device__ __forceinline__ void hop_store_o_tma(const float (&acc_o)[hop_dpad(D) / 2], const float (&sum)[2],
                                                       uint32_t s_o, const CUtensorMap *tm_o, int r_base, int bh,
                                                       int warp, int tid, uint32_t bar_id)
{
    asm volatile("" : "+r"(s_o), "+r"(warp), "+r"(tid));
    if (tid == 0) bulk_wait_reads();
    named_sync(bar_id, 128);
    hop_stage_store_o_tma<T, D>(acc_o, sum, s_o, tm_o, r_base, bh, warp, tid, bar_id);
}

#endif /* HOP_DEVICE */
#endif

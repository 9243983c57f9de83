/* flash_mma_bwd.cuh — flash_mma's backward kernels (FlashAttention-2's
 * scheme on mma.sync m16n8k16, sm_80+). Part of flash_mma.cu's translation
 * unit: included by it after its PTX wrappers (cp.async, ldmatrix, mma,
 * red) and load_tile, which it uses; nothing else includes it.
 *
 * Three launches per backward:
 *   flash_bwd_prep_kernel  D = rowsum(dO∘O) in fp32 per query row and head;
 *                          zeroes the fp32 dQ accumulator
 *   flash_bwd_kernel       one CTA per (batch, K/V head, BN-key tile): dK, dV
 *                          of its keys, summed over the K/V head's group of
 *                          query heads; dQ's share of its keys added to the
 *                          accumulator with red.global.add
 *   flash_bwd_dq_kernel    dQ = scale · accumulator, to the 16-bit dtype
 *
 * flash_bwd_kernel, per CTA: K and V of its BN = 16·W keys stay in shared
 * memory for the whole sweep; warp w owns keys 16w .. 16w+15 of the tile
 * and keeps their dK and dV (16 × D each) in fp32 registers. The CTA walks
 * the group's query heads and, per head, the BM-row query tiles that can
 * see its keys (causal: from the tile holding its first key on), with Q,
 * dO and the two statistics of the next tile cp.async-loaded into the
 * other of two stages while this one is worked on. Per query tile, warp w
 * (keys k of its 16, queries q of the tile's BM; the scores transposed, so
 * that every product that sums over queries takes its A operand straight
 * from the accumulators, as the forward's P·V does):
 *   Sᵀ  = K_w·Qᵀ            16 × BM, sum over D. A: ldmatrix of K rows (row-
 *                           major K_w); B: ldmatrix of Q rows (Q's row-major
 *                           layout is Qᵀ's column-major one)
 *   P   = exp2(Sᵀ·scale·log2 e − lse[q])   fp32, masked entries 0
 *   dV += Pᵀ·dO             16 × D, sum over the BM queries. A: P re-packed
 *                           to 16-bit from its accumulator fragments (rows =
 *                           keys, the sum's index = queries = their columns:
 *                           the A layout); B: ldmatrix.trans of dO rows (dO
 *                           is row-major in the summed index)
 *   dPᵀ = V_w·dOᵀ           16 × BM, sum over D; operands as for Sᵀ
 *   dSᵀ = P∘(dPᵀ − Dsum[q]) fp32, re-packed to 16-bit
 *   dK += dSᵀ·Q             16 × D, sum over queries; A: dSᵀ's fragments,
 *                           B: ldmatrix.trans of Q rows (the scale is
 *                           applied once, when dK is written)
 *   dSᵀ → shared memory     [key][query], 16-bit, for dQ
 * then, after a barrier, the CTA's whole dS is there and warps split dQ's
 * product by (queries, head-dimension columns):
 *   dQ_part = dS·K          BM × D, sum over the tile's keys. A: ldmatrix
 *                           .trans of the stored dSᵀ (its transpose is the A
 *                           operand); B: ldmatrix.trans of K rows (row-major
 *                           in the summed index, as V in the forward)
 *                           — added to the fp32 accumulator with
 *                           red.global.add: the shipped shapes 16 bytes at
 *                           a time (sm_90), the accumulator laid out so
 *                           that each warp's reduction writes whole 128-byte
 *                           lines (bwd_tile_cfg's VEC_DQ, dq_acc_at)
 * Causal: warps whose 16 keys all lie past the tile's last query skip the
 * tile (their dS rows are not read: dQ's sum stops at the last key a query
 * of the tile can see); only tiles that cross the diagonal or the
 * sequence's end are masked. Ragged batches: sequence b's tokens start at
 * cu[b]; a head's rows lie heads·D (K, V: kv_heads·D) elements apart; key
 * tiles past the sequence's end exit at once. Rows and keys past the end
 * load as zeros, their P is 0, their gradients are not written.
 *
 * Why this shape. dK and dV of a CTA's BN keys live in fp32 registers for
 * the whole sweep: at D = 128 that is 2·16·128 floats per 32 lanes = 128
 * registers per thread for 16 keys a warp, half the register file, which
 * caps a warp at 16 keys. Giving each warp all queries of its own keys keeps
 * P and dS in registers for dV and dK (no shared-memory round trip, no
 * barrier between the products); only dQ, a sum over the keys that all
 * warps hold, goes through shared memory. BN = 128 (8 warps) rather than 64
 * halves dQ's reductions and the reloads of Q and dO per key, both L2
 * traffic. What that costs: every warp reads the whole Q and dO tile twice
 * (plain for Sᵀ and dPᵀ, transposed for dK and dV), each fragment feeding
 * one 16-key mma: 176 ldmatrix.x4 per warp per tile, 720 KB of shared-
 * memory reads per 10.5 MFLOP, 14.6 FLOP per byte, under the ~20 the
 * tensor pipe needs at 128 B/clk (variants/NOTES.md, "flash_mma backward").
 *
 * Budget at D = 128 (W = 8 warps, BN = 128 keys, BM = 64 queries; 256
 * threads, one CTA per SM; ptxas: 255 registers, no spill):
 *   registers per thread: dK 64 + dV 64 (fp32, 16 keys × 128 / 32 lanes
 *   each), Sᵀ/P 32 + dPᵀ/dS 32 (16 × 64 / 32), fragments and addresses;
 *   dQ's product (32 accumulators) runs when Sᵀ and dPᵀ are dead.
 *   shared memory: K, V 2 × 128 × 136 × 2 B = 69.6 KB; Q, dO two stages
 *   each, 4 × 64 × 136 × 2 B = 69.6 KB; dSᵀ 128 × 72 × 2 B = 18.4 KB; lse,
 *   Dsum two stages 1 KB: 158.7 KB (rows padded by 16 bytes, as the
 *   forward's, so that ldmatrix's 8 rows fall in distinct banks; dSᵀ's
 *   4-byte stores are conflict-free too: a row of 72 elements is 36 words).
 * At D = 64 the same shape takes 216 registers and 93.2 KB. */

/* One backward tile shape: WARPS warps, BN = 16·WARPS keys per CTA; BM
 * query rows per query tile; dQ's product split over WQ warps along the
 * queries × WARPS/WQ along the head dimension; MINB: CTAs per SM that
 * __launch_bounds__ asks for. PAIRS false: each warp owns 16 keys, all
 * BM queries and all D columns of their dK and dV (bwd_tile). PAIRS true:
 * two warps share 32 keys (bwd_tile_pair): each computes Sᵀ and dPᵀ for
 * its half of the BM queries and accumulates dK and dV for its half of
 * the D columns, the halves of P and dS exchanged through shared memory.
 * LAG false: per query tile, a barrier, the tile's products, a barrier,
 * its dQ. LAG true: dSᵀ double-buffered and dQ one tile behind, so that one
 * barrier per tile orders everything (the flash_bwd_kernel's loop says how)
 * and a warp's dQ of the last tile overlaps the other warps' products. */
template <int WARPS_, int BM_, int WQ_, int MINB_ = 1, bool PAIRS_ = false, bool LAG_ = false,
          bool WHOLE_DQ_ = false, int VEC_DQ_ = 0>
struct bwd_tile_cfg {
    static constexpr int WARPS = WARPS_, BM = BM_, WQ = WQ_, WD = WARPS_ / WQ_, MINB = MINB_;
    static constexpr int THREADS = WARPS * 32, BN = WARPS * 16;
    static constexpr bool PAIRS = PAIRS_, LAG = LAG_;
    /* dQ of a whole tile (every key step, every query row in the sequence)
     * as code without a branch, so that ptxas can overlap its loads and
     * products; partial tiles keep the guarded loop */
    static constexpr bool WHOLE_DQ = WHOLE_DQ_;
    /* dQ's accumulator layout (dq_acc_at; flash_bwd_dq_kernel undoes it).
     * 0: Q's. 1: the columns of each 16-column group permuted, so that a
     * thread's four values of two neighbouring n8 tiles lie side by side:
     * one 16-byte vector red.global.add (sm_90) where two 8-byte ones went,
     * each warp covering 64 contiguous bytes of 8 rows. 2: as 1, and the
     * rows of two neighbouring tokens (of one head) interleaved a group at
     * a time, so that the 8 rows' halves make 4 whole 128-byte lines. */
    static constexpr int VEC_DQ = VEC_DQ_;
};

/* Within a 16-column group, column c = 8·jj + 2·t + e (jj, e: 0 or 1; t:
 * 0..3, the mma fragment's thread column) at 4·t + 2·jj + e. */
static __device__ __forceinline__ int dq_group_perm(int c)
{
    return 4 * ((c % 8) / 2) + 2 * (c / 8) + c % 2;
}

/* Where dQ's element (row r of Q seen as rows of D, column c) lies in its
 * fp32 accumulator under layout VEC (bwd_tile_cfg's VEC_DQ). ld: the rows
 * between one token and the next of the same head (1 dense [B,H,S], the
 * heads ragged [tokens,H]); tp: the parity of r's token (r / ld). Layout
 * 2 pairs each even token with the next: group G of both rows goes to the
 * (G odd ? odd : even) row's 128 bytes (G / 2)·32 .. + 31, the even
 * token's 16 values first. The accumulator then holds ld rows more than
 * Q (a last even token's partner). */
template <int D, int VEC>
static __device__ __forceinline__ size_t dq_acc_at(size_t r, int c, size_t ld, int tp)
{
    static_assert(VEC < 2 || D % 32 == 0, "row pairs interleave pairs of 16-column groups");
    if constexpr (VEC == 0) return r * D + c;
    if constexpr (VEC == 1) return r * D + (c - c % 16) + dq_group_perm(c % 16);
    const int grp = c / 16;
    return (r - (size_t)tp * ld + (size_t)(grp % 2) * ld) * D + (grp / 2) * 32 + tp * 16 + dq_group_perm(c % 16);
}

/* Shared memory of flash_bwd_kernel: K, V; two stages of Q and dO; dSᵀ
 * (two with LAG), Pᵀ with PAIRS; two stages of lse and Dsum. */
template <int D, typename C> static constexpr size_t bwd_smem_bytes(void)
{
    return (size_t)(2 * C::BN + 4 * C::BM) * (D + PAD) * 2 +
           (size_t)((C::LAG ? 2 : 1) + (C::PAIRS ? 1 : 0)) * C::BN * (C::BM + PAD) * 2 +
           (size_t)4 * C::BM * sizeof(float);
}

/* Two 16-bit values of one register as floats, lo first. */
static __device__ __forceinline__ float2 unpack2(uint32_t r, __nv_bfloat16 *)
{
    return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162 *>(&r));
}
static __device__ __forceinline__ float2 unpack2(uint32_t r, __half *)
{
    return __half22float2(*reinterpret_cast<__half2 *>(&r));
}

/* Dsum[row] = Σ_d dO[row][d]·O[row][d] in fp32 over `rows` rows of D
 * elements (Q's rows: [B,H,S] dense, [tokens,H] ragged, the statistics'
 * index), and dQ's accumulator zeroed: acc_rows rows (rows, or more:
 * dq_acc_at's layout 2). D/8 threads per row, 16 bytes each. */
template <typename T, int D>
static __global__ void __launch_bounds__(256)
flash_bwd_prep_kernel(const T *__restrict__ o, const T *__restrict__ dout, float *__restrict__ dsum,
                      float *__restrict__ dq_acc, size_t rows, size_t acc_rows)
{
    constexpr int TPR = D / 8, RPB = 256 / TPR; /* threads per row, rows per block */
    const size_t row = (size_t)blockIdx.x * RPB + threadIdx.x / TPR;
    const int col = (threadIdx.x % TPR) * 8;
    float acc = 0.f;
    if (row >= rows && row < acc_rows) {
        float4 *z = reinterpret_cast<float4 *>(dq_acc + row * D + col);
        z[0] = z[1] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    if (row < rows) {
        const uint4 a = *reinterpret_cast<const uint4 *>(o + row * D + col);
        const uint4 b = *reinterpret_cast<const uint4 *>(dout + row * D + col);
        const uint32_t av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float2 x = unpack2(av[i], (T *)nullptr), y = unpack2(bv[i], (T *)nullptr);
            acc = fmaf(x.x, y.x, fmaf(x.y, y.y, acc));
        }
        float4 *z = reinterpret_cast<float4 *>(dq_acc + row * D + col);
        z[0] = z[1] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int off = TPR / 2; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (row < rows && threadIdx.x % TPR == 0) dsum[row] = acc;
}

/* dQ = scale · accumulator in the 16-bit dtype, 8 elements per thread
 * (with VEC, gathered from the accumulator's layout: dq_acc_at; ld as
 * there). */
template <typename T, int D, int VEC>
static __global__ void __launch_bounds__(256)
flash_bwd_dq_kernel(const float *__restrict__ acc, T *__restrict__ dq, size_t n8, size_t ld, float scale)
{
    const size_t i = (size_t)blockIdx.x * 256 + threadIdx.x;
    if (i >= n8) return;
    float4 a, b;
    if constexpr (VEC) {
        /* elements 8i .. 8i+7 (one row, one half of a 16-column group) in
         * pairs, each pair side by side in the accumulator */
        const size_t r = 8 * i / D;
        const int c = (int)(8 * i % D), tp = VEC == 2 ? (int)((r / ld) % 2) : 0;
        float2 pr[4];
#pragma unroll
        for (int u = 0; u < 4; u++) pr[u] = *reinterpret_cast<const float2 *>(acc + dq_acc_at<D, VEC>(r, c + 2 * u, ld, tp));
        a = make_float4(pr[0].x, pr[0].y, pr[1].x, pr[1].y);
        b = make_float4(pr[2].x, pr[2].y, pr[3].x, pr[3].y);
    } else {
        a = reinterpret_cast<const float4 *>(acc)[2 * i];
        b = reinterpret_cast<const float4 *>(acc)[2 * i + 1];
    }
    uint4 out;
    out.x = pack2(a.x * scale, a.y * scale, (T *)nullptr);
    out.y = pack2(a.z * scale, a.w * scale, (T *)nullptr);
    out.z = pack2(b.x * scale, b.y * scale, (T *)nullptr);
    out.w = pack2(b.z * scale, b.w * scale, (T *)nullptr);
    reinterpret_cast<uint4 *>(dq)[i] = out;
}

/* One warp's 16 × BM transposed scores acc = A_w·Bᵀ (A's rows kw .. kw+15,
 * B's BM rows; the sum over D): Sᵀ = K_w·Qᵀ and dPᵀ = V_w·dOᵀ. A x4: A
 * rows 0-7 / 8-15 × dims kk·16 + 0-7 / 8-15; B x4: B rows j·8 .. j·8+15 ×
 * the same dims, b0,b1 of n8 tile j then of j+1 (the forward's S = Q·Kᵀ
 * with the roles of Q and K exchanged). */
template <typename T, int D, int BM>
static __device__ __forceinline__ void transposed_scores(float (&acc)[BM / 8][4], const T *sA, const T *sB, int kw,
                                                         int lane)
{
    constexpr int LD = D + PAD;
#pragma unroll
    for (int j = 0; j < BM / 8; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        uint32_t a[4];
        ldmatrix_x4(a, sA + (kw + lane % 16) * LD + kk * 16 + (lane / 16) * 8);
#pragma unroll
        for (int j = 0; j < BM / 8; j += 2) {
            uint32_t b[4];
            ldmatrix_x4(b, sB + (j * 8 + lane % 8 + (lane / 16) * 8) * LD + kk * 16 + ((lane / 8) % 2) * 8);
            mma_16816<T>(acc[j], a, b[0], b[1]);
            mma_16816<T>(acc[j + 1], a, b[2], b[3]);
        }
    }
}

/* One query tile for one warp's 16 keys (keys kw .. kw+15 of the tile, from
 * n0; queries m0 .. m0+BM-1): dV and dK accumulated, dSᵀ stored for dQ.
 * Each thread holds accumulator rows (keys) g and g + 8 and columns
 * (queries) j·8 + 2t, j·8 + 2t + 1 of every n8 tile j. need_mask: the tile
 * crosses the diagonal or the sequence's end. (One body with a run-time
 * flag, as the forward's attend_tile.) */
template <typename T, int D, typename C>
static __device__ __forceinline__ void bwd_tile(float (&dk)[D / 8][4], float (&dv)[D / 8][4], const T *sQ,
                                                const T *sdO, const float *sL, const float *sDs, const T *sK,
                                                const T *sV, T *sdS, int m0, int n0, int S, int causal,
                                                float scale_log2, bool need_mask)
{
    constexpr int BM = C::BM, LD = D + PAD, LDS = BM + PAD;
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int kw = (threadIdx.x / 32) * 16; /* the warp's first key in the tile */

    /* Sᵀ = K_w·Qᵀ: M = 16 keys, N = BM queries, K = D */
    float s[BM / 8][4];
    transposed_scores<T, D, BM>(s, sK, sQ, kw, lane);

    /* P = exp2(Sᵀ·scale·log2 e − lse[query]); masked entries 0. Element e
     * of tile j: key n0 + kw + g + r with r = (e>>1)·8, query m0 + c + 2t
     * with c = j·8 + (e&1). */
#pragma unroll
    for (int j = 0; j < BM / 8; j++) {
        const float2 l = *reinterpret_cast<const float2 *>(sL + j * 8 + 2 * t);
#pragma unroll
        for (int e = 0; e < 4; e++) s[j][e] = ex2(fmaf(s[j][e], scale_log2, -(e & 1 ? l.y : l.x)));
    }
    if (need_mask) {
        const int key_limit = S - n0 - kw - g; /* key past S when r >= key_limit */
        const int q_limit = S - m0 - 2 * t;    /* query past S when c >= q_limit */
        const int diag = n0 + kw + g - m0 - 2 * t; /* key after the query when c - r < diag */
#pragma unroll
        for (int j = 0; j < BM / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int c = j * 8 + (e & 1), r = (e >> 1) * 8;
                if (r >= key_limit || c >= q_limit || (causal && c - r < diag)) s[j][e] = 0.f;
            }
    }

    /* dV += Pᵀ·dO: M = 16 keys, N = D, K = BM queries, 16 at a time. A: P's
     * n8 tiles 2kk and 2kk+1 re-packed (rows g / g+8, queries 2t / 8+2t: the
     * A layout, as the forward's P); B x4.trans: dO rows kk·16 + 0-7 / 8-15
     * × dims j·8 .. j·8+15, b0,b1 of n8 tile j then of j+1. */
#pragma unroll
    for (int kk = 0; kk < BM / 16; kk++) {
        uint32_t a[4];
        a[0] = pack2(s[2 * kk][0], s[2 * kk][1], (T *)nullptr);
        a[1] = pack2(s[2 * kk][2], s[2 * kk][3], (T *)nullptr);
        a[2] = pack2(s[2 * kk + 1][0], s[2 * kk + 1][1], (T *)nullptr);
        a[3] = pack2(s[2 * kk + 1][2], s[2 * kk + 1][3], (T *)nullptr);
#pragma unroll
        for (int j = 0; j < D / 8; j += 2) {
            uint32_t b[4];
            ldmatrix_x4_trans(b, sdO + (kk * 16 + lane % 8 + ((lane / 8) % 2) * 8) * LD + j * 8 + (lane / 16) * 8);
            mma_16816<T>(dv[j], a, b[0], b[1]);
            mma_16816<T>(dv[j + 1], a, b[2], b[3]);
        }
    }

    /* dPᵀ = V_w·dOᵀ: as Sᵀ, with V for K and dO for Q */
    float dp[BM / 8][4];
    transposed_scores<T, D, BM>(dp, sV, sdO, kw, lane);

    /* dSᵀ = P∘(dPᵀ − Dsum[query]), packed to 16-bit once for dK and dQ
     * (rows g and g + 8 of tile j in ds[j][0], ds[j][1]); masked entries
     * stay 0 through P. */
    uint32_t ds[BM / 8][2];
#pragma unroll
    for (int j = 0; j < BM / 8; j++) {
        const float2 d = *reinterpret_cast<const float2 *>(sDs + j * 8 + 2 * t);
        ds[j][0] = pack2(s[j][0] * (dp[j][0] - d.x), s[j][1] * (dp[j][1] - d.y), (T *)nullptr);
        ds[j][1] = pack2(s[j][2] * (dp[j][2] - d.x), s[j][3] * (dp[j][3] - d.y), (T *)nullptr);
    }

    /* dK += dSᵀ·Q: as dV, A from dSᵀ's fragments, B x4.trans of Q rows. */
#pragma unroll
    for (int kk = 0; kk < BM / 16; kk++) {
        const uint32_t a[4] = {ds[2 * kk][0], ds[2 * kk][1], ds[2 * kk + 1][0], ds[2 * kk + 1][1]};
#pragma unroll
        for (int j = 0; j < D / 8; j += 2) {
            uint32_t b[4];
            ldmatrix_x4_trans(b, sQ + (kk * 16 + lane % 8 + ((lane / 8) % 2) * 8) * LD + j * 8 + (lane / 16) * 8);
            mma_16816<T>(dk[j], a, b[0], b[1]);
            mma_16816<T>(dk[j + 1], a, b[2], b[3]);
        }
    }

    /* dSᵀ to shared memory, [key][query]: 4-byte stores of query pairs */
#pragma unroll
    for (int j = 0; j < BM / 8; j++) {
        *reinterpret_cast<uint32_t *>(sdS + (kw + g) * LDS + j * 8 + 2 * t) = ds[j][0];
        *reinterpret_cast<uint32_t *>(sdS + (kw + g + 8) * LDS + j * 8 + 2 * t) = ds[j][1];
    }
}

/* The barrier of the two warps of a pair (PAIRS): named barrier 1 + pair,
 * 64 threads. */
static __device__ __forceinline__ void pair_sync(int warp)
{
    asm volatile("bar.sync %0, 64;" ::"r"(1 + warp / 2) : "memory");
}

/* bwd_tile's work for a pair of warps sharing 32 keys (PAIRS): keys
 * kp .. kp+31 of the tile (kp = 32·(warp / 2)); warp half h = warp % 2
 * computes Sᵀ, P, dPᵀ and dS for queries 32h .. 32h+31 (M = 32 keys, two
 * m16 tiles; N = 32 queries) and accumulates dV and dK for columns
 * D/2·h .. D/2·h + D/2 − 1 over all BM queries: its own half of Pᵀ and dSᵀ
 * straight from its accumulators (as bwd_tile), the partner's from shared
 * memory (sP, sdS: [key][query]) after a barrier of the two warps. Per
 * query tile a warp reads 32 fragments of Q and of dO for Sᵀ and dPᵀ (bwd_tile:
 * 40) and 20 for each of dV and dK (bwd_tile: 32), and stores its Pᵀ beside
 * its dSᵀ. dk, dv: [m16 tile · (D/16) + n8 tile][4], rows keys g, g + 8 of
 * the m16 tile, columns D/2·h + 8·tile + 2t, +1. BM = 64 (two k16 steps a half). */
template <typename T, int D, typename C>
static __device__ __forceinline__ void bwd_tile_pair(float (&dk)[D / 8][4], float (&dv)[D / 8][4], const T *sQ,
                                                     const T *sdO, const float *sL, const float *sDs, const T *sK,
                                                     const T *sV, T *sdS, T *sP, int m0, int n0, int S, int causal,
                                                     float scale_log2, bool need_mask)
{
    constexpr int BM = C::BM, LD = D + PAD, LDS = BM + PAD, QH = BM / 2, DH = D / 2, NT = DH / 8;
    static_assert(BM == 64, "a warp's half of the queries is two k16 steps");
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int kp = (warp / 2) * 32, h = warp % 2, q0 = h * QH, d0 = h * DH;

    /* Sᵀ and dPᵀ: M = 32 keys (m16 tiles mt), N = the half's 32 queries (n8
     * tiles j), K = D. A x4: K (V) rows kp + mt·16 + 0-15; B x4: Q (dO) rows
     * q0 + j·8 .. +15, as bwd_tile. */
    float s[2][QH / 8][4], dp[2][QH / 8][4];
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int j = 0; j < QH / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) s[mt][j][e] = dp[mt][j][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        uint32_t a[2][4], av[2][4];
#pragma unroll
        for (int mt = 0; mt < 2; mt++) {
            ldmatrix_x4(a[mt], sK + (kp + mt * 16 + lane % 16) * LD + kk * 16 + (lane / 16) * 8);
            ldmatrix_x4(av[mt], sV + (kp + mt * 16 + lane % 16) * LD + kk * 16 + (lane / 16) * 8);
        }
#pragma unroll
        for (int j = 0; j < QH / 8; j += 2) {
            uint32_t b[4], bd[4];
            const int row = q0 + j * 8 + lane % 8 + (lane / 16) * 8, col = kk * 16 + ((lane / 8) % 2) * 8;
            ldmatrix_x4(b, sQ + row * LD + col);
            ldmatrix_x4(bd, sdO + row * LD + col);
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                mma_16816<T>(s[mt][j], a[mt], b[0], b[1]);
                mma_16816<T>(s[mt][j + 1], a[mt], b[2], b[3]);
                mma_16816<T>(dp[mt][j], av[mt], bd[0], bd[1]);
                mma_16816<T>(dp[mt][j + 1], av[mt], bd[2], bd[3]);
            }
        }
    }

    /* P = exp2(Sᵀ·scale·log2 e − lse[query]), masked entries 0; dSᵀ =
     * P∘(dPᵀ − Dsum[query]). Element e of (mt, j): key n0 + kp + mt·16 + g +
     * (e>>1)·8, query m0 + q0 + j·8 + 2t + (e&1). Both packed to 16-bit and
     * stored, [key][query], for the partner (and dSᵀ for dQ). */
    uint32_t pk[2][QH / 8][2], ds[2][QH / 8][2];
#pragma unroll
    for (int mt = 0; mt < 2; mt++) {
        const int key_limit = S - n0 - kp - mt * 16 - g;
        const int q_limit = S - m0 - q0 - 2 * t;
        const int diag = n0 + kp + mt * 16 + g - m0 - q0 - 2 * t;
#pragma unroll
        for (int j = 0; j < QH / 8; j++) {
            const float2 l = *reinterpret_cast<const float2 *>(sL + q0 + j * 8 + 2 * t);
            const float2 dd = *reinterpret_cast<const float2 *>(sDs + q0 + j * 8 + 2 * t);
            float p[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                p[e] = ex2(fmaf(s[mt][j][e], scale_log2, -(e & 1 ? l.y : l.x)));
                if (need_mask) {
                    const int c = j * 8 + (e & 1), r = (e >> 1) * 8;
                    if (r >= key_limit || c >= q_limit || (causal && c - r < diag)) p[e] = 0.f;
                }
            }
            pk[mt][j][0] = pack2(p[0], p[1], (T *)nullptr);
            pk[mt][j][1] = pack2(p[2], p[3], (T *)nullptr);
            ds[mt][j][0] = pack2(p[0] * (dp[mt][j][0] - dd.x), p[1] * (dp[mt][j][1] - dd.y), (T *)nullptr);
            ds[mt][j][1] = pack2(p[2] * (dp[mt][j][2] - dd.x), p[3] * (dp[mt][j][3] - dd.y), (T *)nullptr);
            const int at = (kp + mt * 16 + g) * LDS + q0 + j * 8 + 2 * t;
            *reinterpret_cast<uint32_t *>(sP + at) = pk[mt][j][0];
            *reinterpret_cast<uint32_t *>(sP + at + 8 * LDS) = pk[mt][j][1];
            *reinterpret_cast<uint32_t *>(sdS + at) = ds[mt][j][0];
            *reinterpret_cast<uint32_t *>(sdS + at + 8 * LDS) = ds[mt][j][1];
        }
    }
    /* the pair's halves of Pᵀ and dSᵀ in shared memory */
    pair_sync(warp);

    /* dV += Pᵀ·dO and dK += dSᵀ·Q over the BM queries, 16 at a time (kq),
     * for the warp's D/2 columns: M = 32 keys, N = D/2. A: the warp's own
     * half from registers (the bwd_tile re-pack), the partner's by ldmatrix
     * x4 of sP / sdS rows kp + mt·16 + 0-15 × queries kq·16 + 0-15; B
     * x4.trans: dO (Q) rows kq·16 + 0-15 × columns d0 + j·8 .. +15. */
#pragma unroll
    for (int kq = 0; kq < BM / 16; kq++) {
        uint32_t ap[2][4], ad[2][4];
        const bool own = kq / 2 == h;
#pragma unroll
        for (int mt = 0; mt < 2; mt++) {
            if (own) {
                const int j = (kq % 2) * 2;
                ap[mt][0] = pk[mt][j][0], ap[mt][1] = pk[mt][j][1], ap[mt][2] = pk[mt][j + 1][0], ap[mt][3] = pk[mt][j + 1][1];
                ad[mt][0] = ds[mt][j][0], ad[mt][1] = ds[mt][j][1], ad[mt][2] = ds[mt][j + 1][0], ad[mt][3] = ds[mt][j + 1][1];
            } else {
                const int at = (kp + mt * 16 + lane % 16) * LDS + kq * 16 + (lane / 16) * 8;
                ldmatrix_x4(ap[mt], sP + at);
                ldmatrix_x4(ad[mt], sdS + at);
            }
        }
#pragma unroll
        for (int j = 0; j < NT; j += 2) {
            uint32_t bo[4], bq[4];
            const int row = kq * 16 + lane % 8 + ((lane / 8) % 2) * 8, col = d0 + j * 8 + (lane / 16) * 8;
            ldmatrix_x4_trans(bo, sdO + row * LD + col);
            ldmatrix_x4_trans(bq, sQ + row * LD + col);
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                mma_16816<T>(dv[mt * NT + j], ap[mt], bo[0], bo[1]);
                mma_16816<T>(dv[mt * NT + j + 1], ap[mt], bo[2], bo[3]);
                mma_16816<T>(dk[mt * NT + j], ad[mt], bq[0], bq[1]);
                mma_16816<T>(dk[mt * NT + j + 1], ad[mt], bq[2], bq[3]);
            }
        }
    }
}

/* dQ's share of this key tile for one query tile: dQ_part = dS·K over the
 * tile's first 16·k_steps keys (the others' dS is 0 for every query of the
 * tile), added to the fp32 accumulator. Warp (wq, wd) of the WQ × WD grid
 * owns queries wq·BM/WQ .. +BM/WQ and columns wd·D/WD .. +D/WD, in chunks
 * of at most 32 columns (32 accumulators a chunk at BM/WQ = 32). M = BM/WQ
 * queries, N = the chunk, K = keys, 16 at a time. A x4.trans: dSᵀ rows (keys)
 * kk·16 + 0-7 / 8-15 × queries 0-7 / 8-15 of m16 tile mq — the transpose of
 * the stored [key][query] blocks is dS's A fragment (rows = queries, the
 * summed index = keys); B x4.trans: K rows kk·16 + 0-7 / 8-15 × dims
 * j·8 .. j·8+15, b0,b1 of n8 tile j then of j+1. q_row0 + q·q_ld: query q's
 * row of the head, seen as rows of D (dq_acc_at places it in the
 * accumulator); par0: the parity of query 0's token. */
template <typename T, int D, typename C, bool WHOLE>
static __device__ __forceinline__ void bwd_dq_part(const T *sdS, const T *sK, float *__restrict__ dq_acc,
                                                   size_t q_row0, size_t q_ld, int par0, int m0, int S, int k_steps)
{
    constexpr int BM = C::BM, BN = C::BN, LD = D + PAD, LDS = BM + PAD;
    constexpr int MQ = BM / C::WQ / 16, DW = D / C::WD, DC = DW > 32 ? 32 : DW, NC = DC / 8;
    static_assert(BM % (C::WQ * 16) == 0 && D % (C::WD * 16) == 0 && DW % DC == 0 && NC % 2 == 0,
                  "dQ's warp grid");
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int q0 = (warp / C::WD) * (BM / C::WQ), d0 = (warp % C::WD) * DW;
    /* VEC_DQ 2 (dq_acc_at's layout, spelled out so that the address is one
     * 64-bit base and constant steps): the rows this thread writes, q_first
     * + 16·mq + 8·h, are all of one token parity tp, so each one's pair
     * starts (16·mq + 8·h)·q_ld rows after q_first's pair, at the same
     * place in its lines; group G of a row lies G % 2 rows of q_ld on and
     * (G / 2)·32 floats in, and a warp's columns start at a multiple of 32 */
    static_assert(C::VEC_DQ != 2 || DW % 32 == 0, "row pairs: a warp's columns in whole pairs of groups");
    const int q_first = m0 + q0 + g, tp = (par0 + q_first) & 1;
    const size_t ld_d = q_ld * D;
    float *const pair_base = dq_acc + (q_row0 + (size_t)q_first * q_ld - (size_t)tp * q_ld) * D + d0 + tp * 16 + 4 * t;
#pragma unroll
    for (int dc = 0; dc < DW; dc += DC) {
        float acc[MQ][NC][4];
#pragma unroll
        for (int mq = 0; mq < MQ; mq++)
#pragma unroll
            for (int j = 0; j < NC; j++) acc[mq][j][0] = acc[mq][j][1] = acc[mq][j][2] = acc[mq][j][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) {
            if (!WHOLE && kk >= k_steps) break;
            uint32_t a[MQ][4];
#pragma unroll
            for (int mq = 0; mq < MQ; mq++)
                ldmatrix_x4_trans(a[mq], sdS + (kk * 16 + lane % 8 + (lane / 16) * 8) * LDS + q0 + mq * 16 +
                                             ((lane / 8) % 2) * 8);
#pragma unroll
            for (int j = 0; j < NC; j += 2) {
                uint32_t b[4];
                ldmatrix_x4_trans(b, sK + (kk * 16 + lane % 8 + ((lane / 8) % 2) * 8) * LD + d0 + dc + j * 8 +
                                         (lane / 16) * 8);
#pragma unroll
                for (int mq = 0; mq < MQ; mq++) {
                    mma_16816<T>(acc[mq][j], a[mq], b[0], b[1]);
                    mma_16816<T>(acc[mq][j + 1], a[mq], b[2], b[3]);
                }
            }
        }
#pragma unroll
        for (int mq = 0; mq < MQ; mq++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int q = m0 + q0 + mq * 16 + g + h * 8;
                if (!WHOLE && q >= S) continue;
                float *row = dq_acc + (q_row0 + (size_t)q * q_ld) * D + d0 + dc;
                /* with VEC_DQ, n8 tiles j, j + 1 form one 16-column group (d0 + dc is a multiple of 16) */
                if constexpr (C::VEC_DQ == 2) {
                    float *const pair = pair_base + (size_t)(mq * 16 + h * 8) * ld_d;
#pragma unroll
                    for (int j = 0; j < NC; j += 2) {
                        const int grp = (dc + j * 8) / 16; /* of the warp's columns */
                        red_add_f32x4(pair + (grp % 2) * ld_d + (grp / 2) * 32, acc[mq][j][2 * h],
                                      acc[mq][j][2 * h + 1], acc[mq][j + 1][2 * h], acc[mq][j + 1][2 * h + 1]);
                    }
                } else if constexpr (C::VEC_DQ == 1) {
#pragma unroll
                    for (int j = 0; j < NC; j += 2)
                        red_add_f32x4(row + j * 8 + dq_group_perm(2 * t), acc[mq][j][2 * h], acc[mq][j][2 * h + 1],
                                      acc[mq][j + 1][2 * h], acc[mq][j + 1][2 * h + 1]);
                } else {
#pragma unroll
                    for (int j = 0; j < NC; j++) red_add_f32x2(row + j * 8 + 2 * t, acc[mq][j][2 * h], acc[mq][j][2 * h + 1]);
                }
            }
    }
}

/* dQ's share (bwd_dq_part): with WHOLE_DQ, a tile whose every key step and
 * query row counts takes the branch-free copy. */
template <typename T, int D, typename C>
static __device__ __forceinline__ void bwd_dq(const T *sdS, const T *sK, float *__restrict__ dq_acc, size_t q_row0,
                                              size_t q_ld, int par0, int m0, int S, int k_steps)
{
    if constexpr (C::WHOLE_DQ) {
        if (k_steps == C::BN / 16 && m0 + C::BM <= S) {
            bwd_dq_part<T, D, C, true>(sdS, sK, dq_acc, q_row0, q_ld, par0, m0, S, k_steps);
            return;
        }
    }
    bwd_dq_part<T, D, C, false>(sdS, sK, dq_acc, q_row0, q_ld, par0, m0, S, k_steps);
}

/* The main backward kernel (this file's header). Grid: causal (batch ·
 * kv_heads, key tiles), the heaviest key tiles (the first: they see the
 * most query tiles) in the first wave; else (key tiles, batch · kv_heads),
 * the key tiles of one head side by side (they sweep the same Q and dO,
 * which L2 then holds). cu: the ragged batch's sequence starts, NULL for a
 * dense batch. lse and dsum are indexed by Q's row; dq_acc has Q's layout
 * in fp32. */
template <typename T, int D, typename C>
static __global__ void __launch_bounds__(C::THREADS, C::MINB)
flash_bwd_kernel(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
                 const T *__restrict__ dout, const float *__restrict__ lse, const float *__restrict__ dsum,
                 float *__restrict__ dq_acc, T *__restrict__ dk, T *__restrict__ dv, const int *__restrict__ cu,
                 int S, int heads, int group, int causal, float scale_log2, float scale)
{
    constexpr int BM = C::BM, BN = C::BN, THREADS = C::THREADS, LD = D + PAD;
    static_assert(THREADS >= 2 * BM, "one thread per statistic of a query tile");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sK = reinterpret_cast<T *>(smem_raw);
    T *sV = sK + BN * LD;
    T *sQ = sV + BN * LD;      /* two stages */
    T *sdO = sQ + 2 * BM * LD; /* two stages */
    T *sdS = sdO + 2 * BM * LD;                          /* two buffers with LAG */
    T *sP = sdS + (C::LAG ? 2 : 1) * BN * (BM + PAD);    /* PAIRS only */
    float *sL = reinterpret_cast<float *>(sP + (C::PAIRS ? BN * (BM + PAD) : 0)); /* two stages */
    float *sDs = sL + 2 * BM;                                     /* two stages */

    const int n_block = causal ? blockIdx.y : blockIdx.x;
    const int bkv = causal ? blockIdx.x : blockIdx.y;
    const int n0 = n_block * BN;
    const int kv_heads = heads / group, b = bkv / kv_heads, kvh = bkv % kv_heads;
    /* Row r of a head is row row0 + r·ld of its tensor seen as rows of D
     * elements (the statistics: index row0 + r·ld). */
    size_t kv_row0, q_row0, q_ld, kv_ld;
    int start_par = 0; /* a ragged sequence's first token's parity (dq_acc_at) */
    if (cu) {
        const int start = cu[b];
        start_par = start & 1;
        S = cu[b + 1] - start;
        kv_row0 = (size_t)start * kv_heads + kvh;
        q_row0 = (size_t)start * heads + (size_t)kvh * group; /* the group's first query head */
        kv_ld = kv_heads;
        q_ld = heads;
    } else {
        kv_row0 = (size_t)bkv * S;
        q_row0 = ((size_t)b * heads + (size_t)kvh * group) * S;
        kv_ld = 1;
        q_ld = 1;
    }
    if (n0 >= S) return;
    /* the next query head's rows start q_head_step rows on */
    const size_t q_head_step = cu ? 1 : (size_t)S;
    /* the parity of the token of a head's first row row0 (dq_acc_at's tp) */
    auto row_par = [&](size_t row0) { return cu ? start_par : (int)(row0 & 1); };

    /* Query tiles: causal, from the one holding key n0 (earlier rows see
     * none of the tile's keys); per head of the group. */
    const int m_first = causal ? n0 / BM : 0, m_count = (S + BM - 1) / BM - m_first;
    const int n_iter = group * m_count;

    const int tid = threadIdx.x;
    auto load_query_tile = [&](int stage, int hh, int m_tile) {
        const size_t row0 = q_row0 + (size_t)hh * q_head_step;
        const int m0 = m_tile * BM;
        load_tile<T, D, BM, THREADS>(sQ + stage * BM * LD, q + row0 * D, m0, S, (int)q_ld * D);
        load_tile<T, D, BM, THREADS>(sdO + stage * BM * LD, dout + row0 * D, m0, S, (int)q_ld * D);
        if (tid < 2 * BM) {
            const int r = tid % BM, in = m0 + r < S;
            const float *src = tid < BM ? lse : dsum;
            float *dst = (tid < BM ? sL : sDs) + stage * BM + r;
            cp_async_4(dst, in ? src + row0 + (size_t)(m0 + r) * q_ld : src, in ? 4 : 0);
        }
    };

    load_tile<T, D, BN, THREADS>(sK, k + kv_row0 * D, n0, S, (int)kv_ld * D);
    load_tile<T, D, BN, THREADS>(sV, v + kv_row0 * D, n0, S, (int)kv_ld * D);
    load_query_tile(0, 0, m_first);
    cp_async_commit();

    float dk_acc[D / 8][4], dv_acc[D / 8][4];
#pragma unroll
    for (int j = 0; j < D / 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) dk_acc[j][e] = dv_acc[j][e] = 0.f;

    /* the first key of the warp's own (PAIRS: its pair's) keys */
    const int warp_key = C::PAIRS ? (tid / 64) * 32 : (tid / 32) * 16;
    int hh = 0, m_tile = m_first; /* this iteration's query head (in the group) and tile */
    /* LAG: the last tile's dQ, done one iteration late */
    int lag_m0 = 0, lag_steps = 0;
    size_t lag_row0 = 0;
    for (int it = 0; it < n_iter; it++) {
        const int stage = it & 1;
        const int next_m = m_tile + 1 < m_first + m_count ? m_tile + 1 : m_first;
        const int next_h = next_m == m_first ? hh + 1 : hh;
        if constexpr (C::LAG) {
            /* One barrier: after it this tile's Q and dO are visible, every
             * warp has finished the last tile's products (so its dSᵀ buffer
             * is whole and the other stage is free for the next tile's load),
             * and the dQ two tiles back, which read this tile's dSᵀ buffer. */
            cp_async_wait<0>();
            __syncthreads();
            if (it + 1 < n_iter) load_query_tile(stage ^ 1, next_h, next_m);
            cp_async_commit();
            if (it > 0)
                bwd_dq<T, D, C>(sdS + (stage ^ 1) * BN * (BM + PAD), sK, dq_acc, lag_row0, q_ld, row_par(lag_row0),
                                lag_m0, S, lag_steps);
        } else {
            if (it + 1 < n_iter) load_query_tile(stage ^ 1, next_h, next_m); /* its stage was read two tiles ago */
            cp_async_commit();
            cp_async_wait<1>(); /* this tile (and K, V) have landed */
            __syncthreads();
        }

        const int m0 = m_tile * BM;
        /* keys of the tile that any query of this tile sees */
        int k_end = min(BN, S - n0);
        if (causal) k_end = min(k_end, m0 + BM - n0);
        const bool need_mask = (causal && m0 < n0 + BN - 1) || m0 + BM > S || n0 + BN > S;
        T *tile_dS = sdS + (C::LAG ? stage * BN * (BM + PAD) : 0);
        if (warp_key < k_end) {
            if constexpr (C::PAIRS)
                bwd_tile_pair<T, D, C>(dk_acc, dv_acc, sQ + stage * BM * LD, sdO + stage * BM * LD, sL + stage * BM,
                                       sDs + stage * BM, sK, sV, tile_dS, sP, m0, n0, S, causal, scale_log2, need_mask);
            else
                bwd_tile<T, D, C>(dk_acc, dv_acc, sQ + stage * BM * LD, sdO + stage * BM * LD, sL + stage * BM,
                                  sDs + stage * BM, sK, sV, tile_dS, m0, n0, S, causal, scale_log2, need_mask);
        } else if constexpr (C::PAIRS) {
            /* a pair with no key in the tile still meets its barrier, so
             * that every warp passes the same barriers in the same order:
             * without it racecheck reports the next stage's copies as
             * racing this tile's reads, across the one CTA barrier that
             * orders them (variants/NOTES.md, flash_mma backward) */
            pair_sync(tid / 32);
        }
        if constexpr (C::LAG) {
            lag_m0 = m0;
            lag_row0 = q_row0 + (size_t)hh * q_head_step;
            lag_steps = (k_end + 15) / 16;
        } else {
            __syncthreads(); /* dSᵀ complete */
            const size_t row0 = q_row0 + (size_t)hh * q_head_step;
            bwd_dq<T, D, C>(sdS, sK, dq_acc, row0, q_ld, row_par(row0), m0, S, (k_end + 15) / 16);
            /* the next iteration's barrier orders these reads of dSᵀ before its writes */
        }
        hh = next_h;
        m_tile = next_m;
    }
    if constexpr (C::LAG) { /* the last tile's dQ */
        __syncthreads();
        bwd_dq<T, D, C>(sdS + ((n_iter - 1) & 1) * BN * (BM + PAD), sK, dq_acc, lag_row0, q_ld, row_par(lag_row0),
                        lag_m0, S, lag_steps);
    }

    /* dK (scaled) and dV of the warp's keys < S: rows g and g + 8 of each
     * m16 tile (PAIRS: two, and the warp's half of the columns) */
    const int lane = tid % 32, g = lane / 4, t = lane % 4;
    constexpr int MT = C::PAIRS ? 2 : 1, NT = D / 8 / MT;
    const int col0 = C::PAIRS ? ((tid / 32) % 2) * (D / 2) : 0;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int key = n0 + warp_key + mt * 16 + g + h * 8;
            if (key >= S) continue;
            const size_t at = (kv_row0 + (size_t)key * kv_ld) * D + col0 + 2 * t;
#pragma unroll
            for (int j = 0; j < NT; j++) {
                const float *kf = dk_acc[mt * NT + j], *vf = dv_acc[mt * NT + j];
                *reinterpret_cast<uint32_t *>(dk + at + j * 8) = pack2(kf[2 * h] * scale, kf[2 * h + 1] * scale, (T *)nullptr);
                *reinterpret_cast<uint32_t *>(dv + at + j * 8) = pack2(vf[2 * h], vf[2 * h + 1], (T *)nullptr);
            }
        }
}

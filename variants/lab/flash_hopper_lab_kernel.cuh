/* flash_hopper_lab_kernel.cuh — the tuning lab's kernel: flash_hopper's
 * kernel (../flash_hopper_kernel.cuh, whose header is the design) with
 * every switch that was ever A/B'd still in it, as a 12-parameter
 * template, lab_cfg, and run-time option bits. It is the shipped kernel's
 * producer and consumer (the same parts, ../flash_hopper_phases.cuh)
 * under a policy of the lab's (lab_policy: ping-pong off, the causal skip
 * and the short last tile off, exp2 partly on the FMA pipe, O stored
 * straight from registers or by a TMA store) and the option bits; only the
 * consumer loop without the intra-warpgroup overlap (PIPE off) is the
 * lab's own. What each parameter did and what it measured:
 * variants/NOTES-flash_hopper.md, and PARAMETERS.md beside this file. Built
 * by `make lab`; `make test` compiles it too, `make` does not. */
#ifndef ATTN_FLASH_HOPPER_LAB_KERNEL_CUH
#define ATTN_FLASH_HOPPER_LAB_KERNEL_CUH

#include "../flash_hopper_kernel.cuh"


/* One lab configuration. The shipped kernel's hop_cfg has the parameters
 * its configurations use, with PIPE, PP, EPI on and PE 0. */
template <int NCW_, int STAGES_, bool PIPE_, bool PP_, bool PVN_, int EPI_, bool PERS_ = false, int KV_ = 0,
          int PE_ = 0, int XT_ = 0, int BN_ = 128, bool SPAN_ = false>
struct lab_cfg {
    static constexpr int NCW = NCW_;       /* consumer warpgroups, 64 query rows each */
    static constexpr int STAGES = STAGES_; /* K ring depth (K+V ring when KV_ = 0) */
    static constexpr bool PIPE = PIPE_;    /* issue Q·K(j)ᵀ with P·V(j-1), softmax under the P·V */
    static constexpr bool PP = PP_;        /* ping-pong the consumers' GEMMs (named barriers) */
    static constexpr bool PVN = PVN_;      /* P·V as m64n128k16 per 128 columns of D (else m64n64k16) */
    static constexpr int EPI = EPI_;       /* O from registers (0), through shared memory and 16-byte
                                            * stores (1), through shared memory and a TMA store (2) */
    static constexpr bool PERS = PERS_;    /* persistent: grid = SMs, each CTA loops over tiles */
    static constexpr bool SEPKV = KV_ > 0; /* K and V in rings of their own, V KV_ deep */
    static constexpr int VSTAGES = SEPKV ? KV_ : STAGES;
    static constexpr int PE = PE_; /* of 16 column groups, PE take exp2 from ex2_poly (FMA pipe) */
    static constexpr bool XT = XT_ != 0; /* no drain between persistent work tiles */
    static constexpr bool XT_EARLY = XT_ == 2; /* ... the epilogue before the new first softmax */
    static constexpr int BN = BN_;             /* keys per K/V tile */
    static constexpr bool SPAN = SPAN_;        /* work tiles of NCW 64-row slices, spanning heads */
    static constexpr bool MC = false;          /* 2-CTA clusters: the shipped table's *_mc configurations only */
    static constexpr bool OBUF = false;        /* O in a buffer of its own: the shipped table's only */
    static constexpr int CL = 1;
    static_assert(BN_ == 64 || BN_ == 80 || BN_ == 96 || BN_ == 128 || BN_ == 192 || BN_ == 256,
                  "BN: 64, 80, 96, 128, 192 or 256");
    static_assert(!SEPKV || PIPE_, "separate K/V rings are written for the PIPE schedule");
    static_assert(!XT || (PERS_ && SEPKV && PIPE_), "XT: persistent, separate rings");
    static_assert(!SPAN_ || (PERS_ && KV_ >= NCW_ && STAGES_ >= NCW_ && XT_ != 0),
                  "SPAN: persistent XT kernel, K and V rings at least NCW deep");
    static_assert(EPI_ != 2 || (PIPE_ && PERS_ && XT_ == 0 && !SPAN_),
                  "EPI 2 (TMA store): the PIPE loop of a persistent kernel without XT");
    static constexpr int BM = 64 * NCW;
    static constexpr int THREADS = 128 * (NCW + 1);
    static constexpr int PREG = 24;
    static constexpr int CREG = NCW == 2 ? 240 : 160;
};

/* run-time options (kernel argument opts; ATTN_FLASH_HOPPER_OPTS=N), all on
 * by default and in the shipped kernel */
#define LAB_OPT_SHORT 1        /* BN > 128: a last tile with <= 128 useful keys runs 128 keys' wgmmas */
#define LAB_OPT_SKIP 2         /* causal: a consumer skips the math of tiles past its last row */
#define LAB_OPT_RAGGED_LAST 4  /* non-causal: the short last row blocks run after all full ones */
#define LAB_OPT_RAGGED_FIRST 8 /* causal, S % 64 == 0: row blocks end at S, the short one is the first */
#define LAB_OPT_DEFAULT (LAB_OPT_SHORT | LAB_OPT_SKIP | LAB_OPT_RAGGED_LAST | LAB_OPT_RAGGED_FIRST)

#if HOP_DEVICE
/* the scheduler's two refinements, from the option bits */
struct lab_order {
    int opts;
    __device__ __forceinline__ bool ragged_last(void) const { return opts & LAB_OPT_RAGGED_LAST; }
    __device__ __forceinline__ bool ragged_first(void) const { return opts & LAB_OPT_RAGGED_FIRST; }
};

/* 2^x on the FMA pipe, for x <= 0 (the softmax's exponents): floor(x) by
 * adding 1.5·2^23 rounding down, f = x - floor(x) in [0, 1), 2^f by a
 * degree-3 polynomial (max relative error 8.6e-5, under bf16's 3.9e-3),
 * floor(x) added to the exponent field; x is clamped at -127, where the
 * result is 0 exactly, as ex2.approx gives for -inf. (Slower than MUFU.EX2:
 * variants/NOTES-flash_hopper.md, 'a profile against cuDNN, three changes,
 * one kept'.) */
static __device__ __forceinline__ float ex2_poly(float x)
{
    const float magic = 12582912.f; /* 1.5·2^23 */
    x = fmaxf(x, -127.f);
    float t;
    asm("add.rm.f32 %0, %1, %2;\n" : "=f"(t) : "f"(x), "f"(magic));
    const float f = x - (t - magic);
    float p = fmaf(f, 0.0770652f, 0.2276470f);
    p = fmaf(p, f, 0.6951163f);
    p = fmaf(p, f, 1.f);
    return __int_as_float(__float_as_int(p) + (__float_as_int(t) << 23));
}

/* the softmax's exponentials with PE of every 16 column groups on ex2_poly */
template <int BN, int PE>
static __device__ __forceinline__ void lab_softmax_exp(float (&acc_s)[BN / 2], float (&row_sum)[2],
                                                       const float (&neg_base)[2], float scale_log2)
{
#pragma unroll
    for (int j = 0; j < BN / 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const float arg = fmaf(acc_s[4 * j + e], scale_log2, neg_base[e >> 1]);
            const float x = (j * PE) % 16 < PE ? ex2_poly(arg) : ex2(arg);
            acc_s[4 * j + e] = x;
            row_sum[e >> 1] += x;
        }
}

/* O / row sums straight from registers to global (no EPI), rows < S only */
template <typename T, int D>
static __device__ __forceinline__ void lab_store_o_direct(const float (&acc_o)[hop_dpad(D) / 2], const float (&sum)[2],
                                                          T *oh, size_t ostride, int row0, int S, int t)
{
    float inv[2];
    hop_row_inverse(sum, inv);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int row = row0 + 8 * h;
        if (row >= S) continue;
#pragma unroll
        for (int j = 0; j < D / 8; j++) {
            const uint32_t pair =
                pack2(acc_o[4 * j + 2 * h] * inv[h], acc_o[4 * j + 2 * h + 1] * inv[h], (T *)nullptr);
            *reinterpret_cast<uint32_t *>(oh + (size_t)row * ostride + 8 * j + 2 * t) = pair;
        }
    }
}

/* The consumer's choices (the shipped kernel's hop_policy) from the
 * configuration and the option bits. */
template <typename C> struct lab_policy {
    int opts;
    const CUtensorMap *tm_o; /* EPI 2: O's tensor map (dense, boxes of 64 rows) */
    static constexpr bool PINGPONG = C::PP;
    static constexpr bool TMA_STORE = C::EPI == 2;
    __device__ __forceinline__ bool skip_masked_tiles(void) const { return C::PIPE && (opts & LAB_OPT_SKIP); }
    __device__ __forceinline__ bool short_last_tile(void) const { return opts & LAB_OPT_SHORT; }
    template <int BN>
    __device__ __forceinline__ void exp2_tile(float (&acc_s)[BN / 2], float (&row_sum)[2],
                                              const float (&neg_base)[2], float scale_log2) const
    {
        if constexpr (C::PE > 0)
            lab_softmax_exp<BN, C::PE>(acc_s, row_sum, neg_base, scale_log2);
        else
            hop_softmax_exp<BN>(acc_s, row_sum, neg_base, scale_log2);
    }
    template <typename T, int D>
    __device__ __forceinline__ void store_o(const float (&acc_o)[hop_dpad(D) / 2], const float (&sum)[2],
                                            uint32_t s_o, T *oh, size_t ostride, int r_base, int S, int warp, int g,
                                            int t, int tid, uint32_t bar_id) const
    {
        if constexpr (C::EPI)
            hop_store_o<T, D>(acc_o, sum, s_o, oh, ostride, r_base, S, warp, tid, bar_id);
        else
            lab_store_o_direct<T, D>(acc_o, sum, oh, ostride, r_base + 16 * warp + g, S, t);
    }
    /* EPI 2: O staged in the Q slice, then one thread stores its 64-column
     * boxes (rows >= S and D = 96's padding fall outside the tensor and are
     * not written); the consumer releases the slice once the store has read
     * it (hop_consumer::release_pending) */
    template <typename T, int D>
    __device__ __forceinline__ void store_o_tma(const float (&acc_o)[hop_dpad(D) / 2], const float (&sum)[2],
                                                uint32_t s_o, int row, int bh, int warp, int tid,
                                                uint32_t bar_id) const
    {
        asm volatile("" : "+r"(s_o), "+r"(warp), "+r"(tid));
        hop_stage_store_o_tma<T, D>(acc_o, sum, s_o, tm_o, row, bh, warp, tid, bar_id);
    }
};

/* PIPE off: per key tile Q·Kᵀ, its softmax, then P·V, one after the other
 * (one shared K+V ring: lab_cfg allows separate rings with PIPE only). */
template <typename T, int D, typename C, typename Consumer>
static __device__ __forceinline__ void lab_consume_serial(Consumer &c)
{
    static_assert(!C::SEPKV && !C::XT && !C::SPAN, "the serial loop has one K+V ring and no XT");
    float rescale[2];
    c.pp_open();
    for (int k = 0; c.begin_tile(k); k++) {
        if (c.idle) { /* barrier turns only */
            for (int it = 0; it < c.n_tiles; it++) {
                c.bar.wait_k(c.slot(it));
                c.pp_wait();
                c.pp_pass(it == c.n_tiles - 1);
                c.bar.release_v(c.slot(it), c.lane);
            }
            c.bar.release_q(c.qb, c.cw, c.lane);
        } else {
            c.zero_o();
            for (int it = 0; it < c.n_tiles; it++) {
                c.bar.wait_k(c.slot(it));
                c.pp_wait();
                c.template issue_qk<false>(c.slot(it));
                c.pp_pass(it == c.n_tiles - 1);
                wgmma_wait<0>();
                fence_regs(c.acc_s);
                c.softmax(it, rescale);
                hop_rescale_o<D>(c.acc_o, rescale);
                hop_convert_p<T, C::BN>(c.p, c.acc_s);
                c.template issue_pv<false>(c.slot(it));
                wgmma_wait<0>();
                fence_regs(c.acc_o);
                hop_fence_p<C::BN>(c.p);
                c.bar.release_v(c.slot(it), c.lane);
            }
            c.epilogue(c.m0, c.bh, c.len, c.tok0, c.qb, c.row_sum);
        }
        c.kv0 += c.n_tiles;
    }
}
#endif /* HOP_DEVICE */

template <typename T, int D, typename C>
static __global__ void __launch_bounds__(C::THREADS, 1)
flash_hopper_lab_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                        const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_o,
                        T *__restrict__ o, int S, int causal, float scale_log2, int n_bh, int sec_heads, int opts)
{
#if HOP_DEVICE
    const hop_schedule<C, lab_order> sch(S, causal, n_bh, sec_heads, lab_order{opts});
    hop_block<T, D, C>(sch, lab_policy<C>{opts, &tm_o}, &tm_q, &tm_k, &tm_v, &tm_o, o, scale_log2,
                       [](auto &consumer) {
        if constexpr (C::PIPE)
            consumer.run();
        else
            lab_consume_serial<T, D, C>(consumer);
    });
#elif defined(__CUDA_ARCH__)
    (void)tm_q, (void)tm_k, (void)tm_v, (void)tm_o, (void)o, (void)S, (void)causal, (void)scale_log2, (void)n_bh,
        (void)sec_heads, (void)opts;
    __trap();
#endif
}

#endif

/* flash_hopper.cu — the flash_hopper variant's host side: its compiled
 * configurations (the kernel of flash_hopper_kernel.cuh, where the design
 * is described, instantiated per head_dim and dtype), the choice of one per
 * problem, a ragged batch's list of work tiles, the tensor maps and the
 * launch; and the backward's (flash_hopper_bwd.cuh): its saving forward,
 * workspace and launches. Every forward configuration here is the
 * default for some (head_dim, causal, seq_len); A/B candidates live in the
 * tuning lab (variants/lab/, `make lab`), whose README says how a winner
 * is promoted into this table. variants/NOTES-flash_hopper.md has the measurements
 * behind each choice.
 *
 * Device code exists only in the sm_90a pass: any other target compiles a
 * kernel that traps, and supports() refuses every device that is not
 * compute capability 9.0, so it is never launched. */
#include "flash_hopper.h"

#include "../common/errors.h"
#include "../common/gpu_util.h"
#include "../common/nvtx.h"
#include "flash_hopper_bwd.cuh"
#include "flash_hopper_kernel.cuh"
#include "hopper_host.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------- configurations */

/*      hop_cfg<consumers, K stages, V stages (0: one K+V ring), keys per tile,
 *              P·V as N = 128, persistent, XT, span, K/V multicast to a 2-CTA cluster,
 *              O in a buffer of its own and stored by TMA> */
/* D=128: a plain grid of 128-row blocks, K and V of a tile in one 3-stage ring */
typedef hop_cfg<2, 3, 0, 128, true> cfg_d128_grid_ring3;
/* D=128: 128-key tiles, K and V rings of 2, P·V as one N = 128 wgmma per k-step */
typedef hop_cfg<2, 2, 2, 128, true> cfg_d128_grid;
/* D=128: 192-key tiles, K and V rings of 2 */
typedef hop_cfg<2, 2, 2, 192, true> cfg_d128_grid_192keys;
/* D=128: one CTA per SM, two Q buffers, K and V rings of 2, O staged
 * apart and stored by TMA */
typedef hop_cfg<2, 2, 2, 128, true, true, 0, false, false, true> cfg_d128_persistent;
/* D=128: persistent, the next work tile's first Q·Kᵀ and softmax under this one's last P·V */
typedef hop_cfg<2, 2, 2, 128, true, true, 1> cfg_d128_persistent_overlap;
/* D=64: a plain grid of 192-row blocks (3 consumers), K and V rings of 4 */
typedef hop_cfg<3, 4, 4, 128, false> cfg_d64_grid;
/* D=64: persistent, 3 consumers, two Q buffers, K and V rings of 4 (O
 * staged apart and stored by TMA was 2.4% faster at S = 512 causal, 1.7%
 * slower at S = 1024: variants/NOTES-flash_hopper.md, 'O staged apart and
 * stored by TMA, Q released after the last Q·Kᵀ') */
typedef hop_cfg<3, 4, 4, 128, false, true> cfg_d64_persistent;
/* D=64: persistent, 3 consumers, no drain between work tiles (XT 2), work
 * tiles of three 64-row slices that may span heads; non-causal only */
typedef hop_cfg<3, 4, 4, 128, false, true, 2, true> cfg_d64_persistent_span;

/* D=192: 96-key tiles, K and V rings of 2 (O's 96 accumulators per thread
 * leave room for 96 keys' scores and P; 128-key tiles do not fit 2 + 2
 * rings in shared memory) */
typedef hop_cfg<2, 2, 2, 96, true> cfg_d192_grid_96keys;
/* D=256: 80-key tiles, K and V rings of 2 (O's 128 accumulators per thread
 * leave room for 80 keys' scores and P; the rings fill shared memory) */
typedef hop_cfg<2, 2, 2, 80, true> cfg_d256_grid_80keys;
/* D=256: persistent, 64-key tiles, K and V rings of 2 (one Q buffer) */
typedef hop_cfg<2, 2, 2, 64, true, true> cfg_persistent_64keys;
/* D=192: the same with O staged apart and stored by TMA: one Q buffer, whose
 * next tile's Q loads under the last P·V and the epilogue */
typedef hop_cfg<2, 2, 2, 64, true, true, 0, false, false, true> cfg_d192_persistent_64keys;

/* D=128: d128_persistent on 2-CTA clusters (MC): the cluster's pair of
 * work tiles reads the same K/V tiles (two query heads of one K/V group, or
 * two row blocks of one head: hop_pairs), and each CTA loads half of every
 * tile's boxes for both, so K/V cross from L2 to the SMs once per pair */
typedef hop_cfg<2, 2, 2, 128, true, true, 0, false, true, true> cfg_d128_persistent_mc;

template <typename T, int D, typename C> static int prepare_cfg(void)
{
    CUDA_TRY(cudaFuncSetAttribute(flash_hopper_kernel<T, D, C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)hop_smem_bytes<D, C>()));
    return ATTN_OK;
}

/* What a launch needs besides the tensor maps. */
struct hop_launch {
    int S, causal;
    int n_sm;      /* CTAs of a persistent grid at most */
    int sec_heads; /* heads per section of the tile order */
    int group;     /* query heads per K/V head (1: every head its own K and V) */
    size_t bh;     /* B·H; ragged: H */
    int clusters;  /* MC, persistent: 2-CTA clusters that fit on the device at once */
    float scale_log2;
    const hop_ragged_tile *tiles; /* ragged: the work tiles on the device; NULL: dense */
    int n_ragged;                 /* ... and how many */
};

template <typename T, int D, typename C>
static int launch_cfg(const CUtensorMap *tm, void *o, const struct hop_launch *l, cudaStream_t s)
{
    const dim3 grid = hop_grid<C>(l->S, l->bh, C::MC ? 2 * l->clusters : l->n_sm, l->n_ragged, l->group);
    if constexpr (C::MC) {
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t cfg = hop_pair_launch(&attr, grid, C::THREADS, hop_smem_bytes<D, C>(), s);
        CUDA_TRY(cudaLaunchKernelEx(&cfg, flash_hopper_kernel<T, D, C>, tm[0], tm[1], tm[2], tm[3], (T *)o, l->S,
                                    l->causal, l->scale_log2, (int)l->bh, l->sec_heads, l->group, l->tiles,
                                    l->n_ragged));
    } else {
        flash_hopper_kernel<T, D, C><<<grid, C::THREADS, hop_smem_bytes<D, C>(), s>>>(
            tm[0], tm[1], tm[2], tm[3], (T *)o, l->S, l->causal, l->scale_log2, (int)l->bh, l->sec_heads, l->group,
            l->tiles, l->n_ragged);
    }
    LAUNCH_TRY("flash_hopper_kernel");
    return ATTN_OK;
}

/* The backward's saving forward: configuration C (no XT, no clusters)
 * keeping each row's statistic in lse (hop_policy_lse's layouts). */
template <typename T, int D, typename C>
static int launch_cfg_lse(const CUtensorMap *tm, void *o, const struct hop_launch *l, float *lse, int s_pad,
                          cudaStream_t s)
{
    const dim3 grid = hop_grid<C>(l->S, l->bh, l->n_sm, l->n_ragged, l->group);
    flash_hopper_lse_kernel<T, D, C><<<grid, C::THREADS, hop_smem_bytes<D, C>(), s>>>(
        tm[0], tm[1], tm[2], tm[3], (T *)o, l->S, l->causal, l->scale_log2, (int)l->bh, l->sec_heads, l->group,
        l->tiles, l->n_ragged, lse, s_pad);
    LAUNCH_TRY("flash_hopper_lse_kernel");
    return ATTN_OK;
}

template <typename T, int D, typename C> static const void *kernel_ptr(void)
{
    return (const void *)flash_hopper_kernel<T, D, C>;
}

struct hopper_cfg {
    const char *name;
    enum attn_dtype dtype;
    int head_dim;
    int bn;    /* keys per K/V tile: the K and V tensor maps' box rows */
    int bm;    /* query rows per work tile */
    bool pers; /* persistent grid */
    bool span; /* work tiles span heads: non-causal only */
    bool mc;   /* 2-CTA clusters sharing K/V loads: dense only; causal with an even group only */
    int threads;
    size_t smem;
    const void *(*kernel)(void);
    int (*prepare)(void);
    int (*launch)(const CUtensorMap *, void *, const struct hop_launch *, cudaStream_t);
};

#define HCFG(NAME, TYPE, DTYPE, D, C)                                                                              \
    {NAME, DTYPE, D, C::BN, C::BM, C::PERS, C::SPAN, C::MC, C::THREADS, hop_smem_bytes<D, C>(),                  \
     kernel_ptr<TYPE, D, C>, prepare_cfg<TYPE, D, C>, launch_cfg<TYPE, D, C>}
#define HCFG_BOTH(NAME, D, C) HCFG(NAME, __nv_bfloat16, ATTN_BF16, D, C), HCFG(NAME, __half, ATTN_FP16, D, C)

static const struct hopper_cfg cfgs[] = {
    HCFG_BOTH("d128_grid_ring3", 128, cfg_d128_grid_ring3),
    HCFG_BOTH("d128_grid", 128, cfg_d128_grid),
    HCFG_BOTH("d128_grid_192keys", 128, cfg_d128_grid_192keys),
    HCFG_BOTH("d128_persistent", 128, cfg_d128_persistent),
    HCFG_BOTH("d128_persistent_overlap", 128, cfg_d128_persistent_overlap),
    HCFG_BOTH("d64_grid", 64, cfg_d64_grid),
    HCFG_BOTH("d64_persistent", 64, cfg_d64_persistent),
    HCFG_BOTH("d64_persistent_span", 64, cfg_d64_persistent_span),
    /* D=96: D=128 kernels, the rows padded to 128 columns with zeros */
    HCFG_BOTH("d96_persistent", 96, cfg_d128_persistent),
    HCFG_BOTH("d96_persistent_overlap", 96, cfg_d128_persistent_overlap),
    HCFG_BOTH("d96_grid_192keys", 96, cfg_d128_grid_192keys),
    HCFG_BOTH("d192_grid_96keys", 192, cfg_d192_grid_96keys),
    HCFG_BOTH("d192_persistent_64keys", 192, cfg_d192_persistent_64keys),
    HCFG_BOTH("d256_grid_80keys", 256, cfg_d256_grid_80keys),
    HCFG_BOTH("d256_persistent_64keys", 256, cfg_persistent_64keys),
    HCFG_BOTH("d128_persistent_mc", 128, cfg_d128_persistent_mc),
};
#define N_CFGS ((int)(sizeof cfgs / sizeof cfgs[0]))
static_assert(sizeof cfgs / sizeof cfgs[0] == FLASH_HOPPER_CONFIGS, "flash_hopper.h counts the table");

/* The configuration per (head_dim, causal, seq_len), both dtypes, from the
 * A/Bs on the H200: each choice names the entry of
 * variants/NOTES-flash_hopper.md that measured it, and the lab's names of
 * its configurations in brackets. A ragged batch: the one for its longest
 * sequence, but never one whose work tiles span heads. */
static const char *default_cfg(int head_dim, bool causal, int seq_len, bool ragged)
{
    /* 'K/V multicast to a 2-CTA cluster': non-causal, dense, S <= 4096
     * where d128_persistent runs, its twin on 2-CTA clusters [none in the
     * lab] was level or 0.8-0.9% faster (cluster twins of the other
     * configurations lost 1-3%) */
    if (head_dim == 128 && !causal && !ragged && (seq_len <= 1024 || (seq_len >= 2048 && seq_len <= 4096)))
        return "d128_persistent_mc";
    /* 'head_dim 96, 192, 256; ragged batches; short sequences': at
     * S <= 1024 (few key tiles per work tile) the persistent kernel that
     * drains between work tiles [pers_kv_pp, pers_kv_pp3] beats the plain
     * grids and the overlapping kernel, D=128 and D=64 causal */
    if (head_dim == 128 && seq_len <= 1024) return "d128_persistent";
    if (head_dim == 64 && causal && seq_len <= 1024) return "d64_persistent";
    if (head_dim == 128 && causal) {
        /* 'a profile against cuDNN, three changes, one kept': at S <= 4096
         * the persistent kernel that does not drain between work tiles
         * [pers_kv_pp_xt]; 'keys per tile, idle consumers, and the power
         * cap': 192-key tiles pay once the diagonal's extra masked keys are
         * amortised (S = 16384), not at 8192; there 'FlashAttention-4's
         * sm90 forward, read beside ours': the 2+2-ring kernel with one
         * N = 128 P·V [kv_pp], FA4's tile, beat N = 64 [kv_n64] */
        if (seq_len <= 4096) return "d128_persistent_overlap";
        return seq_len <= 8192 ? "d128_grid" : "d128_grid_192keys";
    }
    /* 'one protocol for every row, heavy-first causal grids': below
     * S = 2048 192-key tiles waste up to 12.5% of the keys [pp]; 'causal
     * skip per consumer, XE, warp-uniform indices': the persistent kernel
     * [pers_kv_pp] at 2048 <= S < 8192; 'keys per tile, idle consumers,
     * and the power cap': 192-key tiles [kv_pp_n192] beyond */
    if (head_dim == 128) {
        if (seq_len < 2048) return "d128_grid_ring3";
        return seq_len < 8192 ? "d128_persistent" : "d128_grid_192keys";
    }
    /* 'head_dim 96, 192, 256; ragged batches; short sequences': D=96 as
     * D=128, persistent below S = 2048 too */
    if (head_dim == 96) {
        if (causal) return seq_len <= 4096 ? "d96_persistent_overlap" : "d96_grid_192keys";
        return seq_len < 8192 ? "d96_persistent" : "d96_grid_192keys";
    }
    /* 'head_dim 96, 192, 256; ragged batches; short sequences': D=192
     * 96-key tiles [kv_pp_n96k], D=256 80-key tiles [kv_pp_n80k],
     * persistent 64-key ones at S <= 1024 [pers_kv_pp_n64k]; 'O staged
     * apart and stored by TMA, Q released after the last Q·Kᵀ': D=192's
     * with O staged apart also non-causal [none in the lab] */
    if (head_dim == 192) return seq_len <= 1024 ? "d192_persistent_64keys" : "d192_grid_96keys";
    if (head_dim == 256) return seq_len <= 1024 ? "d256_persistent_64keys" : "d256_grid_80keys";
    /* 'work tiles that span heads': D=64 non-causal up to S = 4096 the
     * persistent kernel with work tiles spanning heads [pers_kv_pp3_xs];
     * level beyond, where the plain grid [kv_pp3] stays, as it does for
     * causal work */
    if (!causal && seq_len <= 4096) return ragged ? "d64_persistent" : "d64_persistent_span";
    return "d64_grid";
}

/* Heads per section of the tile order (variants/NOTES-flash_hopper.md).
 * Persistent grids and non-causal work: one ('a profile against cuDNN,
 * three changes, one kept'). Plain causal grids ('one protocol for every
 * row, heavy-first causal grids'): the heaviest row blocks of several
 * heads first shorten the tail of light blocks — D=64 16 heads up to
 * S = 8192, 4 beyond; D=128 with 128-key tiles 4; 192-key tiles 1. */
static int default_sec(const struct hopper_cfg *c, const struct attn_problem *p)
{
    if (c->pers || !p->causal) return 1;
    if (p->head_dim == 64) return p->seq_len <= 8192 ? 16 : 4;
    return c->bn <= 128 ? 4 : 1;
}

static const struct hopper_cfg *find_cfg(const char *name, enum attn_dtype dtype, int head_dim)
{
    for (int i = 0; i < N_CFGS; i++)
        if (cfgs[i].dtype == dtype && cfgs[i].head_dim == head_dim && strcmp(cfgs[i].name, name) == 0)
            return &cfgs[i];
    return NULL;
}

/* Whether p's work tiles pair up for the MC configurations' 2-CTA
 * clusters (hop_pairs): a dense batch, and causal only with an even group
 * of query heads per K/V head (two heads of a group at one row block see
 * the same keys; two causal row blocks do not). */
static bool pairs_up(const struct attn_problem *p)
{
    return !attn_is_varlen(p) && (!p->causal || (p->heads / attn_kv_heads(p)) % 2 == 0);
}

static const struct hopper_cfg *pick_cfg(const struct attn_problem *p)
{
    return find_cfg(default_cfg(p->head_dim, p->causal, p->seq_len, attn_is_varlen(p)), p->dtype, p->head_dim);
}

/* ------------------------------------------------------- the backward */

/* What one backward launches on besides the tensor maps (Q, K, V, dO). */
struct hbw_call {
    hbw_args a;
    size_t bh;            /* B·H */
    const void *o, *dout; /* [B·H, S, D]; ragged [tokens, H, D] */
    void *dq;             /* the same */
    const float *lse_tok; /* ragged: the saving forward's statistics, [tokens, H] */
};

/* the saving forward's kernel (configuration C) and the backward's */
template <typename T, int D, typename C> static int prepare_bwd(void)
{
    CUDA_TRY(cudaFuncSetAttribute(flash_hopper_lse_kernel<T, D, C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)hop_smem_bytes<D, C>()));
    CUDA_TRY(cudaFuncSetAttribute(hbw_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)hbw_cfg<D>::SMEM));
    return ATTN_OK;
}

/* Dsum and dQ's zeroed accumulator, the main kernel, dQ's conversion */
template <typename T, int D> static int launch_bwd(const CUtensorMap *tm, const struct hbw_call *c, cudaStream_t s)
{
    const hbw_args &a = c->a;
    const size_t padded = c->bh * (size_t)a.s_pad;
    hbw_prep_kernel<T, D><<<(unsigned)((padded + 7) / 8), 256, 0, s>>>((const T *)c->o, (const T *)c->dout,
                                                                        (float *)a.dsum, (float *)a.lse, c->lse_tok,
                                                                        a.cu, padded, a.S, a.s_pad, a.heads);
    LAUNCH_TRY("hbw_prep_kernel");
    CUDA_TRY(cudaMemsetAsync(a.dq_acc, 0, c->bh * (size_t)a.s_pad * hop_dpad(D) * sizeof(float), s));
    const unsigned kv_bh = (unsigned)(c->bh / (size_t)a.group), key_tiles = (unsigned)((a.S + HBW_KEYS - 1) / HBW_KEYS);
    hbw_kernel<T, D><<<kv_bh * key_tiles, hbw_cfg<D>::THREADS, hbw_cfg<D>::SMEM, s>>>(tm[0], tm[1], tm[2], tm[3],
                                                                                     a);
    LAUNCH_TRY("hbw_kernel");
    const size_t quads = padded * D / 4;
    hbw_dq_kernel<T, D><<<(unsigned)((quads + 255) / 256), 256, 0, s>>>(a.dq_acc, (T *)c->dq, a.cu, quads, a.S,
                                                                        a.s_pad, a.heads, a.scale);
    LAUNCH_TRY("hbw_dq_kernel");
    return ATTN_OK;
}

/* The backward of one dtype and head_dim: the forward configuration that
 * keeps its statistics (a plain grid of the table above), and its kernels. */
struct hopper_bwd_cfg {
    enum attn_dtype dtype;
    int head_dim;
    const char *fwd_name;
    size_t smem;
    const void *(*kernel)(void);
    int (*prepare)(void);
    int (*launch_fwd)(const CUtensorMap *, void *, const struct hop_launch *, float *, int, cudaStream_t);
    int (*launch)(const CUtensorMap *, const struct hbw_call *, cudaStream_t);
};

template <typename T, int D> static const void *bwd_kernel_ptr(void) { return (const void *)hbw_kernel<T, D>; }

#define HBCFG(TYPE, DTYPE, D, FWD_NAME, C)                                                                         \
    {DTYPE, D, FWD_NAME, hbw_cfg<D>::SMEM, bwd_kernel_ptr<TYPE, D>, prepare_bwd<TYPE, D, C>,                        \
     launch_cfg_lse<TYPE, D, C>, launch_bwd<TYPE, D>}
#define HBCFG_BOTH(D, FWD_NAME, C) HBCFG(__nv_bfloat16, ATTN_BF16, D, FWD_NAME, C), HBCFG(__half, ATTN_FP16, D, FWD_NAME, C)

/* the head dims here are those bwd_supports names */
static const struct hopper_bwd_cfg bwd_cfgs[] = {
    HBCFG_BOTH(128, "d128_grid", cfg_d128_grid),
    HBCFG_BOTH(64, "d64_grid", cfg_d64_grid),
    HBCFG_BOTH(96, "d96_grid_192keys", cfg_d128_grid_192keys),
};

static const struct hopper_bwd_cfg *find_bwd_cfg(const struct attn_problem *p)
{
    for (size_t i = 0; i < sizeof bwd_cfgs / sizeof bwd_cfgs[0]; i++)
        if (bwd_cfgs[i].dtype == p->dtype && bwd_cfgs[i].head_dim == p->head_dim) return &bwd_cfgs[i];
    return NULL;
}

/* The backward's workspace, each array 256-byte aligned: lse and Dsum
 * ([B·H, s_pad] floats), dQ's accumulator (B·H·s_pad·DP floats, DP the
 * padded head_dim, in blocks of 64 rows: flash_hopper_bwd.cuh); ragged also
 * the sequence starts (batch + 1 ints) and the forward's statistics as it
 * keeps them ([tokens, H] floats). */
struct bwd_layout {
    size_t lse, dsum, dq_acc, cu, lse_tok, total;
    int s_pad;
};

static struct bwd_layout bwd_layout_of(const struct attn_problem *p)
{
    struct bwd_layout l = {0, 0, 0, 0, 0, 0, 0};
    if (p->pass == ATTN_PASS_FWD) return l;
    const int bm = hbw_bm(p->head_dim); /* a step's query rows: the statistics' copies read whole tiles */
    l.s_pad = (p->seq_len + bm - 1) / bm * bm;
    const size_t rows = (size_t)p->batch * p->heads * l.s_pad;
    l.dsum = gpu_round256(rows * sizeof(float));
    l.dq_acc = 2 * l.dsum;
    l.total = l.dq_acc + gpu_round256(rows * hop_dpad(p->head_dim) * sizeof(float));
    if (attn_is_varlen(p)) {
        l.cu = l.total;
        l.lse_tok = l.cu + gpu_round256(((size_t)p->batch + 1) * sizeof(int));
        l.total = l.lse_tok + gpu_round256(attn_tokens(p) * p->heads * sizeof(float));
    }
    return l;
}

/* --------------------------------------------------- ragged batches */

/* One work tile of a ragged batch, its cost (key tiles) and where the
 * listing put it (ties keep that order). */
struct ragged_entry {
    hop_ragged_tile t;
    int cost, at;
};

static int heavier_first(const void *a, const void *b)
{
    const struct ragged_entry *x = (const struct ragged_entry *)a, *y = (const struct ragged_entry *)b;
    if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* The rows a sequence of len rows is cut into blocks over: causal, len
 * rounded up to 64, the blocks ending there (the first may start below row
 * 0: its idle consumers cost nothing), as the dense schedule's
 * ragged_first; otherwise len, from row 0. */
static int ragged_rows(int len, bool causal) { return causal ? (len + 63) / 64 * 64 : len; }

/* The work tiles of ragged batch p for row blocks of bm rows and key tiles
 * of bn keys, heaviest first, into *out (malloc'd, *n of them, at least
 * one: every length is >= 1): per sequence, per row block, per head. */
static int hop_ragged_tiles(const struct attn_problem *p, int bm, int bn, hop_ragged_tile **out, int *n)
{
    int *lens = (int *)malloc((size_t)p->batch * sizeof *lens);
    if (!lens) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    const int rc = attn_seq_lens(p, lens);
    if (rc != ATTN_OK) {
        free(lens);
        return rc;
    }
    size_t count = 0;
    for (int i = 0; i < p->batch; i++) count += (size_t)p->heads * ((ragged_rows(lens[i], p->causal) + bm - 1) / bm);
    struct ragged_entry *e = count <= (size_t)INT_MAX ? (struct ragged_entry *)malloc(count * sizeof *e) : NULL;
    hop_ragged_tile *t = e ? (hop_ragged_tile *)malloc(count * sizeof *t) : NULL;
    if (!t) {
        free(e);
        free(lens);
        return ATTN_FAIL(ATTN_ERR, "flash_hopper: no host memory for %zu work tiles", count);
    }
    int k = 0, tok0 = 0;
    for (int i = 0; i < p->batch; i++) {
        const int len = lens[i], end = ragged_rows(len, p->causal), blocks = (end + bm - 1) / bm;
        for (int b = 0; b < blocks; b++) {
            const int m0 = p->causal ? end - (b + 1) * bm : b * bm;
            const int keys = p->causal ? (len < m0 + bm ? len : m0 + bm) : len;
            for (int h = 0; h < p->heads; h++, k++) e[k] = {{tok0, len, h, m0}, (keys + bn - 1) / bn, k};
        }
        tok0 += len;
    }
    qsort(e, count, sizeof *e, heavier_first);
    for (size_t j = 0; j < count; j++) t[j] = e[j].t;
    free(e);
    free(lens);
    *out = t;
    *n = (int)count;
    return ATTN_OK;
}

/* ------------------------------------------------------------ the variant */

struct hopper_ctx {
    struct attn_problem p;
    const struct hopper_cfg *cfg;
    struct hop_maps maps;
    struct hop_launch launch; /* ragged: launch.tiles is the device's copy of the work-tile list */
    /* a backward point: its kernels, tensor maps (Q, K, V, dO) and workspace */
    const struct hopper_bwd_cfg *bwd;
    struct hop_maps bwd_maps;
    float *lse, *dsum, *dq_acc;
    int *cu;        /* ragged: the sequence starts; NULL: dense */
    float *lse_tok; /* ragged: the forward's statistics, [tokens, H] */
    int s_pad;
};

static const char *cfg_supports(const struct hopper_cfg *c, const struct attn_problem *p,
                                const struct device_info *dev)
{
    const char *why = hop_supports_shape(p, dev, true, true);
    if (why) return why;
    if (c->dtype != p->dtype || c->head_dim != p->head_dim)
        return "configuration compiled for another dtype or head_dim";
    if (c->span && p->causal) return "non-causal configuration (work tiles span heads)";
    if (c->span && attn_is_varlen(p)) return "dense batches only (work tiles span heads)";
    if (c->mc && attn_is_varlen(p)) return "dense batches only (2-CTA clusters)";
    if (c->mc && !pairs_up(p))
        return "causal work on 2-CTA clusters needs an even number of query heads per K/V head";
    return hop_supports_kernel(c->kernel(), c->smem, dev);
}

/* NULL when the backward can run p on dev, else why not. */
static const char *bwd_supports(const struct attn_problem *p, const struct device_info *dev)
{
    const struct hopper_bwd_cfg *b = find_bwd_cfg(p);
    if (!b) return "backward: head_dim 64, 96 and 128 only (the others not implemented yet)";
    const struct hopper_cfg *f = find_cfg(b->fwd_name, p->dtype, p->head_dim);
    if (!f) return "backward: its forward's configuration is not compiled";
    const char *why = cfg_supports(f, p, dev);
    if (why) return why;
    return hop_supports_kernel(b->kernel(), b->smem, dev);
}

static const char *hopper_supports(const struct attn_problem *p, const struct device_info *dev)
{
    const char *why = hop_supports_shape(p, dev, true, true);
    if (why) return why;
    if (p->pass != ATTN_PASS_FWD) return bwd_supports(p, dev);
    const struct hopper_cfg *c = pick_cfg(p);
    if (!c) return "no configuration compiled for this dtype and head_dim";
    return cfg_supports(c, p, dev);
}

static void hopper_teardown(void *ctx)
{
    struct hopper_ctx *c = (struct hopper_ctx *)ctx;
    if (!c) return;
    if (c->launch.tiles) (void)cudaFree((void *)c->launch.tiles);
    free(c);
}

/* A ragged batch's work-tile list, built for configuration cfg, onto the
 * device (setup time: run() only launches). */
static int setup_ragged(struct hopper_ctx *c, const struct hopper_cfg *cfg)
{
    hop_ragged_tile *host = NULL, *dev = NULL;
    int n = 0;
    ATTN_TRY(hop_ragged_tiles(&c->p, cfg->bm, cfg->bn, &host, &n));
    const cudaError_t e = cudaMalloc((void **)&dev, (size_t)n * sizeof *host);
    int rc = e == cudaSuccess ? ATTN_OK : ATTN_FAIL(ATTN_ERR, "flash_hopper: work-tile list: %s", cudaGetErrorString(e));
    if (rc == ATTN_OK) {
        c->launch.tiles = dev;
        rc = gpu_copy_to_device(dev, host, (size_t)n * sizeof *host, "flash_hopper's work-tile list");
    }
    free(host);
    if (rc != ATTN_OK) return rc;
    c->launch.n_ragged = n;
    return ATTN_OK;
}

/* setup() with configuration cfg; max_ctas > 0 caps a persistent grid */
static int setup_cfg(void **ctx, const struct attn_problem *p, const struct hopper_cfg *cfg, int max_ctas)
{
    ATTN_TRY(cfg->prepare());
    struct hopper_ctx *c = (struct hopper_ctx *)calloc(1, sizeof *c);
    if (!c) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    c->p = *p;
    c->cfg = cfg;
    const bool ragged = attn_is_varlen(p);
    const int rc = hop_maps_init(&c->maps, cfg->bn, ragged ? (long)attn_tokens(p) : 0);
    if (rc != ATTN_OK) {
        free(c);
        return rc;
    }
    const size_t bh = (size_t)p->batch * p->heads;
    size_t sec = ragged ? 1 : (size_t)default_sec(cfg, p); /* ragged: the tile list has the order */
    if (sec > bh) sec = bh;
    c->launch.S = p->seq_len;
    c->launch.causal = p->causal ? 1 : 0;
    /* persistent configs: one CTA per SM; MC, as many 2-CTA clusters as fit */
    c->launch.n_sm = max_ctas > 0 ? max_ctas : hop_sm_count();
    if (cfg->mc) {
        const int fit = hop_max_pair_clusters(cfg->kernel(), cfg->threads, cfg->smem, hop_sm_count());
        const int cap = max_ctas > 0 ? (max_ctas >= 4 ? max_ctas / 2 : 1) : fit;
        c->launch.clusters = cap < fit ? cap : fit;
    }
    c->launch.sec_heads = (int)sec;
    c->launch.group = p->heads / attn_kv_heads(p);
    c->launch.bh = ragged ? (size_t)p->heads : bh;
    c->launch.scale_log2 = p->scale * 1.4426950408889634f; /* exp(x·scale) = exp2(x·scale·log2 e) */
    if (ragged) {
        const int rr = setup_ragged(c, cfg);
        if (rr != ATTN_OK) {
            hopper_teardown(c);
            return rr;
        }
    }
    if (sec > 1)
        attn_set_impl("cfg %s sec %zu", cfg->name, sec);
    else
        attn_set_impl("cfg %s", cfg->name);
    *ctx = c;
    return ATTN_OK;
}

/* A backward point: the saving forward's configuration, the backward's
 * kernels and maps, the workspace's arrays. */
static int setup_bwd(void **ctx, const struct attn_problem *p, void *workspace)
{
    const struct hopper_bwd_cfg *b = find_bwd_cfg(p);
    const struct hopper_cfg *cfg = b ? find_cfg(b->fwd_name, p->dtype, p->head_dim) : NULL;
    if (!cfg) return ATTN_FAIL(ATTN_ERR, "flash_hopper: no backward for this dtype and head_dim");
    if (!workspace) return ATTN_FAIL(ATTN_ERR, "flash_hopper: the backward needs its workspace");
    ATTN_TRY(b->prepare());
    ATTN_TRY(setup_cfg(ctx, p, cfg, 0));
    struct hopper_ctx *c = (struct hopper_ctx *)*ctx;
    const bool ragged = attn_is_varlen(p);
    const struct bwd_layout l = bwd_layout_of(p);
    unsigned char *ws = (unsigned char *)workspace;
    c->bwd = b;
    c->lse = (float *)(ws + l.lse);
    c->dsum = (float *)(ws + l.dsum);
    c->dq_acc = (float *)(ws + l.dq_acc);
    c->cu = ragged ? (int *)(ws + l.cu) : NULL;
    c->lse_tok = ragged ? (float *)(ws + l.lse_tok) : NULL;
    c->s_pad = l.s_pad;
    int rc = hop_maps_init(&c->bwd_maps, HBW_KEYS, ragged ? (long)attn_tokens(p) : 0);
    if (rc == ATTN_OK && ragged) rc = gpu_seq_starts_to_device(p, c->cu, "flash_hopper's sequence starts");
    if (rc != ATTN_OK) {
        hopper_teardown(c);
        *ctx = NULL;
        return rc;
    }
    attn_set_impl("cfg %s, backward bwd_d%d", cfg->name, p->head_dim);
    return ATTN_OK;
}

static int hopper_setup(void **ctx, const struct attn_problem *p, void *workspace)
{
    if (p->pass != ATTN_PASS_FWD) return setup_bwd(ctx, p, workspace);
    const struct hopper_cfg *cfg = pick_cfg(p);
    if (!cfg) return ATTN_FAIL(ATTN_ERR, "flash_hopper: no configuration for this dtype and head_dim");
    return setup_cfg(ctx, p, cfg, 0);
}

static size_t hopper_workspace_bytes(const struct attn_problem *p) { return bwd_layout_of(p).total; }

static int hopper_run(void *ctx, const void *q, const void *k, const void *v, void *o, attn_stream_t stream)
{
    struct hopper_ctx *c = (struct hopper_ctx *)ctx;
    ATTN_TRY(hop_maps_for(&c->maps, &c->p, q, k, v, o));
    attn_range_push("flash_hopper_fwd");
    const int rc = c->cfg->launch(c->maps.tm, o, &c->launch, (cudaStream_t)stream);
    attn_range_pop();
    return rc;
}

/* The backward's forward: O, and each row's statistic in lse. */
static int hopper_fwd_stats(void *ctx, const void *q, const void *k, const void *v, void *o, attn_stream_t stream)
{
    struct hopper_ctx *c = (struct hopper_ctx *)ctx;
    if (!c->bwd) return ATTN_FAIL(ATTN_ERR, "flash_hopper: set up for a forward-only point");
    ATTN_TRY(hop_maps_for(&c->maps, &c->p, q, k, v, o));
    attn_range_push("flash_hopper_fwd_lse");
    float *lse = c->lse_tok ? c->lse_tok : c->lse; /* ragged: [tokens, H], laid out by the backward's prep */
    const int rc = c->bwd->launch_fwd(c->maps.tm, o, &c->launch, lse, c->s_pad, (cudaStream_t)stream);
    attn_range_pop();
    return rc;
}

static int hopper_backward(void *ctx, const void *q, const void *k, const void *v, const void *o, const void *dout,
                           void *dq, void *dk, void *dv, attn_stream_t stream)
{
    struct hopper_ctx *c = (struct hopper_ctx *)ctx;
    if (!c->bwd) return ATTN_FAIL(ATTN_ERR, "flash_hopper: set up for a forward-only point");
    ATTN_TRY(hop_maps_for(&c->bwd_maps, &c->p, q, k, v, dout));
    const struct attn_problem *p = &c->p;
    struct hbw_call call;
    call.a = {c->lse, c->dsum, c->dq_acc, dk, dv, c->cu, p->seq_len, c->s_pad, p->causal ? 1 : 0, p->heads,
              p->heads / attn_kv_heads(p), c->launch.scale_log2, p->scale};
    call.lse_tok = c->lse_tok;
    call.bh = (size_t)p->batch * p->heads;
    call.o = o;
    call.dout = dout;
    call.dq = dq;
    attn_range_push("flash_hopper_bwd");
    const int rc = c->bwd->launch(c->bwd_maps.tm, &call, (cudaStream_t)stream);
    attn_range_pop();
    return rc;
}

static const struct attn_backward_ops hopper_backward_ops = {
    .forward = hopper_fwd_stats,
    .backward = hopper_backward,
};

extern "C" const struct attn_variant attn_variant_flash_hopper = {
    .name = "flash_hopper",
    .summary = "fused Hopper kernel (sm_90a): TMA + mbarrier ring, producer/consumer "
               "warpgroups, wgmma, softmax overlapped with the GEMMs, ping-pong",
    .fused = true,
    .supports = hopper_supports,
    .workspace_bytes = hopper_workspace_bytes,
    .setup = hopper_setup,
    .run = hopper_run,
    .teardown = hopper_teardown,
    .framework = NULL,
    .backward = &hopper_backward_ops,
};

/* ------------------------------------------------------ the test hooks */

static const struct hopper_cfg *cfg_at(int i) { return i >= 0 && i < N_CFGS ? &cfgs[i] : NULL; }

extern "C" const char *flash_hopper_config_name(int i) { return cfg_at(i) ? cfgs[i].name : NULL; }

extern "C" enum attn_dtype flash_hopper_config_dtype(int i) { return cfg_at(i) ? cfgs[i].dtype : ATTN_BF16; }

extern "C" int flash_hopper_config_head_dim(int i) { return cfg_at(i) ? cfgs[i].head_dim : 0; }

extern "C" bool flash_hopper_config_causal_ok(int i) { return cfg_at(i) && !cfgs[i].span; }

extern "C" bool flash_hopper_config_persistent(int i) { return cfg_at(i) && cfgs[i].pers; }

extern "C" bool flash_hopper_config_spans_heads(int i) { return cfg_at(i) && cfgs[i].span; }

extern "C" bool flash_hopper_config_clusters(int i) { return cfg_at(i) && cfgs[i].mc; }

extern "C" const char *flash_hopper_config_supports(int i, const struct attn_problem *p,
                                                    const struct device_info *dev)
{
    if (!cfg_at(i)) return "no such configuration";
    return cfg_supports(&cfgs[i], p, dev);
}

extern "C" int flash_hopper_config_setup(int i, int max_ctas, void **ctx, const struct attn_problem *p)
{
    if (!cfg_at(i)) return ATTN_FAIL(ATTN_ERR, "flash_hopper: no configuration %d", i);
    return setup_cfg(ctx, p, &cfgs[i], max_ctas);
}

extern "C" const char *flash_hopper_default_config(const struct attn_problem *p)
{
    return default_cfg(p->head_dim, p->causal, p->seq_len, attn_is_varlen(p));
}

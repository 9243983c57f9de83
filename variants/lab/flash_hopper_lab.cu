/* flash_hopper_lab.cu — the tuning lab's variant, flash_hopper_lab (built
 * by `make lab`, which `make test` runs too; registered under ATTN_LAB):
 * every configuration that flash_hopper was A/B'd with on single CTAs, as
 * the 12-parameter lab_cfg of flash_hopper_lab_kernel.cuh (the shipped
 * epilogue with O staged apart has no lab twin), and the run-time
 * switches to pick one and to change its schedule. README.md beside this
 * file says how to A/B a configuration here and promote a winner into
 * flash_hopper.cu.
 *   ATTN_FLASH_HOPPER_CFG=NAME   a configuration of the table below (for
 *                                the problem's dtype and head_dim); unset:
 *                                the one flash_hopper would pick
 *   ATTN_FLASH_HOPPER_OPTS=N     LAB_OPT_* bits (default all, 15)
 *   ATTN_FLASH_HOPPER_SEC=N      heads per section of the tile order
 *   ATTN_FLASH_HOPPER_CTAS=N     a persistent grid's CTAs at most
 * setup() records what ran in the impl column ("cfg NAME", plus "sec N" and
 * "opts N" when not the default). */
#include "../../common/errors.h"
#include "../../common/nvtx.h"
#include "../hopper_host.cuh"
#include "flash_hopper_lab_kernel.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a launch needs besides the tensor maps. */
struct lab_launch {
    int S, causal;
    int n_sm;      /* CTAs of a persistent grid at most */
    int sec_heads; /* heads per section of the tile order */
    int opts;      /* LAB_OPT_* */
    size_t bh;
    float scale_log2;
};

template <typename T, int D, typename C> static int prepare_cfg(void)
{
    CUDA_TRY(cudaFuncSetAttribute(flash_hopper_lab_kernel<T, D, C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)hop_smem_bytes<D, C>()));
    return ATTN_OK;
}

template <typename T, int D, typename C>
static int launch_cfg(const CUtensorMap *tm, void *o, const struct lab_launch *l, cudaStream_t s)
{
    flash_hopper_lab_kernel<T, D, C><<<hop_grid<C>(l->S, l->bh, l->n_sm, 0, 1), C::THREADS, hop_smem_bytes<D, C>(), s>>>(
        tm[0], tm[1], tm[2], tm[3], (T *)o, l->S, l->causal, l->scale_log2, (int)l->bh, l->sec_heads, l->opts);
    LAUNCH_TRY("flash_hopper_lab_kernel");
    return ATTN_OK;
}

template <typename T, int D, typename C> static const void *kernel_ptr(void)
{
    return (const void *)flash_hopper_lab_kernel<T, D, C>;
}

struct lab_hopper_cfg {
    const char *name;
    enum attn_dtype dtype;
    int head_dim;
    int bn;    /* keys per K/V tile: the K and V tensor maps' box rows */
    bool pers; /* persistent grid */
    bool span; /* work tiles span heads: non-causal only */
    size_t smem;
    const void *(*kernel)(void);
    int (*prepare)(void);
    int (*launch)(const CUtensorMap *, void *, const struct lab_launch *, cudaStream_t);
};

/* Every configuration, in the order they were added, grouped by the
 * parameter each group brought (variants/NOTES-flash_hopper.md has what
 * each measured). The shipped table (flash_hopper.cu) holds these of them,
 * renamed: pp = d128_grid_ring3, kv_pp = d128_grid, kv_pp_n192 =
 * d128_grid_192keys and d96_grid_192keys, pers_kv_pp = d128_persistent
 * and d96_persistent, pers_kv_pp_xt = d128_persistent_overlap and
 * d96_persistent_overlap, kv_pp3 = d64_grid, pers_kv_pp3 = d64_persistent,
 * pers_kv_pp3_xs = d64_persistent_span, kv_pp_n96k = d192_grid_96keys,
 * kv_pp_n80k = d256_grid_80keys, pers_kv_pp_n64k = d192_persistent_64keys
 * and d256_persistent_64keys.
 *          lab_cfg<consumers, stages, pipe, ping-pong, P·V N=D, epilogue (0, 1, 2: TMA store),
 *                  persistent, V stages, exp2 groups on FMA, XT, keys per tile, span> */
/*          the first six parameters; cfg_v1: the simplest kernel, without overlap or ping-pong */
typedef lab_cfg<2, 2, false, false, false, false> cfg_v1;
typedef lab_cfg<2, 3, true, true, true, true> cfg_pp;
typedef lab_cfg<2, 3, true, false, true, true> cfg_ip;
typedef lab_cfg<2, 2, true, true, true, true> cfg_pp_s2;
typedef lab_cfg<2, 3, true, true, false, true> cfg_pp_n64;
typedef lab_cfg<2, 3, true, true, true, false> cfg_pp_gst;
typedef lab_cfg<2, 4, true, true, false, true> cfg_pp_s4; /* D = 64 */
typedef lab_cfg<3, 4, true, true, false, true> cfg_pp3;   /* D = 64 */
typedef lab_cfg<3, 4, true, false, false, true> cfg_ip3;  /* D = 64 */
typedef lab_cfg<3, 2, true, true, false, true> cfg_pp3_s2;
/*          persistent grids (7th parameter) */
typedef lab_cfg<2, 3, true, true, true, true, true> cfg_pers_pp;
typedef lab_cfg<2, 3, true, false, true, true, true> cfg_pers_ip;
typedef lab_cfg<2, 3, true, true, false, true, true> cfg_pers_n64;
typedef lab_cfg<2, 3, true, false, false, true, true> cfg_pers_ip_n64;
typedef lab_cfg<3, 4, true, true, false, true, true> cfg_pers_pp3; /* D = 64 */
typedef lab_cfg<3, 4, true, false, false, true, true> cfg_pers_ip3; /* D = 64 */
typedef lab_cfg<2, 4, true, true, false, true, true> cfg_pers_pp_s4; /* D = 64 */
/*          separate K and V rings (8th parameter: V ring depth; K ring = stages) */
typedef lab_cfg<2, 2, true, true, true, true, false, 2> cfg_kv_pp;        /* D = 128: 2 K + 2 V */
typedef lab_cfg<2, 3, true, true, true, true, false, 3> cfg_kv_pp_s3;     /* D = 128: 3 K + 3 V */
typedef lab_cfg<2, 2, true, true, false, true, false, 2> cfg_kv_n64;      /* D = 128 */
typedef lab_cfg<2, 2, true, true, true, true, true, 2> cfg_pers_kv_pp;    /* D = 128: 2 Q bufs */
typedef lab_cfg<2, 3, true, true, true, true, true, 2> cfg_pers_kv_pp_k3; /* D = 128: 2 Q, 3 K, 2 V */
typedef lab_cfg<2, 2, true, true, false, true, true, 2> cfg_pers_kv_n64;  /* D = 128: 2 Q bufs */
typedef lab_cfg<2, 2, true, false, true, true, true, 2> cfg_pers_kv_ip;   /* D = 128: 2 Q bufs */
typedef lab_cfg<3, 4, true, true, false, true, false, 4> cfg_kv_pp3;      /* D = 64: 4 K + 4 V */
typedef lab_cfg<3, 4, true, true, false, true, true, 4> cfg_pers_kv_pp3;  /* D = 64: 2 Q bufs */
typedef lab_cfg<3, 5, true, true, false, true, true, 5> cfg_pers_kv_pp3_s5; /* D = 64: 2 Q, 5 K + 5 V */
typedef lab_cfg<3, 4, true, false, false, true, true, 4> cfg_pers_kv_ip3; /* D = 64: 2 Q bufs */
/*          exponentials partly on the FMA pipe (9th: groups of 16), no drain
 *          between persistent work tiles (10th, XT) */
typedef lab_cfg<3, 4, true, true, false, true, false, 4, 2> cfg_kv_pp3_e2;   /* D = 64 */
typedef lab_cfg<2, 3, true, true, true, true, false, 0, 4> cfg_pp_e4;        /* D = 128 */
typedef lab_cfg<2, 2, true, true, true, true, true, 2, 0, true> cfg_pers_kv_pp_xt;   /* D = 128 */
typedef lab_cfg<2, 2, true, true, false, true, true, 2, 0, true> cfg_pers_kv_n64_xt; /* D = 128 */
typedef lab_cfg<2, 2, true, false, true, true, true, 2, 0, true> cfg_pers_kv_ip_xt;  /* D = 128 */
/*          keys per tile (11th) */
typedef lab_cfg<2, 4, true, true, false, true, false, 4, 0, false, 192> cfg_kv2_n192;  /* D = 64: 4 K + 4 V */
typedef lab_cfg<2, 3, false, true, false, true, false, 0, 0, false, 256> cfg_pp2_n256; /* D = 64: no overlap */
typedef lab_cfg<2, 2, true, true, true, true, false, 2, 0, false, 192> cfg_kv_pp_n192; /* D = 128 */
typedef lab_cfg<3, 4, true, true, false, true, true, 4, 0, 2> cfg_pers_kv_pp3_xe; /* D = 64, XE (XT 2) */
typedef lab_cfg<2, 2, true, true, true, true, true, 2, 0, 2> cfg_pers_kv_pp_xe;   /* D = 128, XE (XT 2) */
/*          work tiles spanning heads (12th) */
typedef lab_cfg<3, 4, true, true, false, true, true, 4, 0, 2, 128, true> cfg_pers_kv_pp3_xs; /* D = 64 */
/*          head_dim 96 (the D = 128 kernels on rows padded with zeros), 192 and 256:
 *          keys per tile 64, 96 or 128, K and V ring depths */
typedef lab_cfg<2, 2, true, true, true, true, false, 2, 0, 0, 64> cfg_kv_pp_n64k;       /* 2 K + 2 V, 64 keys */
typedef lab_cfg<2, 3, true, true, true, true, false, 2, 0, 0, 64> cfg_kv_pp_n64k_k3;    /* 3 K + 2 V, 64 keys */
typedef lab_cfg<2, 2, true, true, true, true, false, 1, 0, 0, 128> cfg_kv_pp_v1;        /* 2 K + 1 V */
typedef lab_cfg<2, 2, true, true, true, true, false, 2, 0, 0, 96> cfg_kv_pp_n96k;       /* 2 K + 2 V, 96 keys */
typedef lab_cfg<2, 2, true, true, true, true, false, 1, 0, 0, 96> cfg_kv_pp_n96k_v1;    /* 2 K + 1 V, 96 keys */
typedef lab_cfg<2, 2, true, true, true, true, true, 2, 0, 0, 64> cfg_pers_kv_pp_n64k;   /* persistent, 64 keys */
typedef lab_cfg<2, 2, true, true, true, true, true, 2, 0, 1, 64> cfg_pers_kv_pp_xt_n64k; /* ... XT (2 Q bufs) */
typedef lab_cfg<2, 3, true, true, true, true, true, 2, 0, 0, 64> cfg_pers_kv_pp_n64k_k3; /* ... 3 K + 2 V */
typedef lab_cfg<2, 2, true, true, true, true, true, 2, 0, 0, 96> cfg_pers_kv_pp_n96k;   /* persistent, 96 keys */
typedef lab_cfg<2, 2, true, true, true, true, false, 2, 0, 0, 80> cfg_kv_pp_n80k;       /* 2 K + 2 V, 80 keys */
/*          O by a TMA store (EPI 2), the Q slice released one step into the next tile */
typedef lab_cfg<2, 2, true, true, true, 2, true, 2> cfg_pers_kv_pp_tma;  /* D = 128: pers_kv_pp's */
typedef lab_cfg<3, 4, true, true, false, 2, true, 4> cfg_pers_kv_pp3_tma; /* D = 64: pers_kv_pp3's */

#define HCFG(NAME, TYPE, DTYPE, D, C)                                                                              \
    {NAME, DTYPE, D, C::BN, C::PERS, C::SPAN, hop_smem_bytes<D, C>(), kernel_ptr<TYPE, D, C>, prepare_cfg<TYPE, D, C>, \
     launch_cfg<TYPE, D, C>}
#define HCFG_BF16(NAME, D, C) HCFG(NAME, __nv_bfloat16, ATTN_BF16, D, C)
#define HCFG_FP16(NAME, D, C) HCFG(NAME, __half, ATTN_FP16, D, C)

static const struct lab_hopper_cfg cfgs[] = {
    HCFG_BF16("pp", 128, cfg_pp),
    HCFG_BF16("v1", 128, cfg_v1),
    HCFG_BF16("ip", 128, cfg_ip),
    HCFG_BF16("pp_s2", 128, cfg_pp_s2),
    HCFG_BF16("pp_n64", 128, cfg_pp_n64),
    HCFG_BF16("pp_gst", 128, cfg_pp_gst),
    HCFG_BF16("pp3", 64, cfg_pp3),
    HCFG_BF16("v1", 64, cfg_v1),
    HCFG_BF16("ip3", 64, cfg_ip3),
    HCFG_BF16("pp", 64, cfg_pp_s4),
    HCFG_BF16("ip", 64, cfg_ip),
    HCFG_BF16("pp3_s2", 64, cfg_pp3_s2),
    HCFG_BF16("pers_pp", 128, cfg_pers_pp),
    HCFG_BF16("pers_ip", 128, cfg_pers_ip),
    HCFG_BF16("pers_n64", 128, cfg_pers_n64),
    HCFG_BF16("pers_ip_n64", 128, cfg_pers_ip_n64),
    HCFG_BF16("pers_pp3", 64, cfg_pers_pp3),
    HCFG_BF16("pers_ip3", 64, cfg_pers_ip3),
    HCFG_BF16("pers_pp", 64, cfg_pers_pp_s4),
    HCFG_BF16("kv_pp", 128, cfg_kv_pp),
    HCFG_BF16("kv_pp_s3", 128, cfg_kv_pp_s3),
    HCFG_BF16("kv_n64", 128, cfg_kv_n64),
    HCFG_BF16("pers_kv_pp", 128, cfg_pers_kv_pp),
    HCFG_BF16("pers_kv_pp_k3", 128, cfg_pers_kv_pp_k3),
    HCFG_BF16("pers_kv_n64", 128, cfg_pers_kv_n64),
    HCFG_BF16("pers_kv_ip", 128, cfg_pers_kv_ip),
    HCFG_BF16("kv_pp3", 64, cfg_kv_pp3),
    HCFG_BF16("pers_kv_pp3", 64, cfg_pers_kv_pp3),
    HCFG_BF16("pers_kv_pp3_s5", 64, cfg_pers_kv_pp3_s5),
    HCFG_BF16("pers_kv_ip3", 64, cfg_pers_kv_ip3),
    HCFG_BF16("kv_pp3_e2", 64, cfg_kv_pp3_e2),
    HCFG_BF16("pp_e4", 128, cfg_pp_e4),
    HCFG_BF16("pers_kv_pp_xt", 128, cfg_pers_kv_pp_xt),
    HCFG_BF16("pers_kv_n64_xt", 128, cfg_pers_kv_n64_xt),
    HCFG_BF16("pers_kv_ip_xt", 128, cfg_pers_kv_ip_xt),
    HCFG_BF16("kv2_n192", 64, cfg_kv2_n192),
    HCFG_BF16("pp2_n256", 64, cfg_pp2_n256),
    HCFG_BF16("kv_pp_n192", 128, cfg_kv_pp_n192),
    HCFG_BF16("pers_kv_pp3_xe", 64, cfg_pers_kv_pp3_xe),
    HCFG_BF16("pers_kv_pp_xe", 128, cfg_pers_kv_pp_xe),
    HCFG_BF16("pers_kv_pp3_xs", 64, cfg_pers_kv_pp3_xs),
    HCFG_BF16("pp", 96, cfg_pp),
    HCFG_BF16("kv_n64", 96, cfg_kv_n64),
    HCFG_BF16("pers_kv_pp", 96, cfg_pers_kv_pp),
    HCFG_BF16("pers_kv_pp_xt", 96, cfg_pers_kv_pp_xt),
    HCFG_BF16("kv_pp_n192", 96, cfg_kv_pp_n192),
    HCFG_BF16("kv_pp_n64k", 192, cfg_kv_pp_n64k),
    HCFG_BF16("kv_pp_n64k_k3", 192, cfg_kv_pp_n64k_k3),
    HCFG_BF16("kv_pp_v1", 192, cfg_kv_pp_v1),
    HCFG_BF16("kv_pp_n96k", 192, cfg_kv_pp_n96k),
    HCFG_BF16("pers_kv_pp_n64k", 192, cfg_pers_kv_pp_n64k),
    HCFG_BF16("pers_kv_pp_xt_n64k", 192, cfg_pers_kv_pp_xt_n64k),
    HCFG_BF16("kv_pp_n64k", 256, cfg_kv_pp_n64k),
    HCFG_BF16("kv_pp_n64k_k3", 256, cfg_kv_pp_n64k_k3),
    HCFG_BF16("kv_pp_n96k_v1", 256, cfg_kv_pp_n96k_v1),
    HCFG_BF16("pers_kv_pp_n64k", 256, cfg_pers_kv_pp_n64k),
    HCFG_BF16("pers_kv_pp_n64k_k3", 256, cfg_pers_kv_pp_n64k_k3),
    HCFG_BF16("kv_pp_n80k", 256, cfg_kv_pp_n80k),
    HCFG_BF16("pers_kv_pp_n96k", 192, cfg_pers_kv_pp_n96k),
    HCFG_BF16("kv_pp_n80k", 192, cfg_kv_pp_n80k),
    HCFG_BF16("pers_kv_pp_tma", 128, cfg_pers_kv_pp_tma),
    HCFG_BF16("pers_kv_pp3_tma", 64, cfg_pers_kv_pp3_tma),
    HCFG_FP16("pp", 128, cfg_pp),
    HCFG_FP16("v1", 128, cfg_v1),
    HCFG_FP16("ip", 128, cfg_ip),
    HCFG_FP16("pp_n64", 128, cfg_pp_n64),
    HCFG_FP16("pers_ip", 128, cfg_pers_ip),
    HCFG_FP16("pers_n64", 128, cfg_pers_n64),
    HCFG_FP16("pp3", 64, cfg_pp3),
    HCFG_FP16("v1", 64, cfg_v1),
    HCFG_FP16("ip3", 64, cfg_ip3),
    HCFG_FP16("pers_pp3", 64, cfg_pers_pp3),
    HCFG_FP16("pers_ip3", 64, cfg_pers_ip3),
    HCFG_FP16("kv_pp", 128, cfg_kv_pp),
    HCFG_FP16("kv_pp_s3", 128, cfg_kv_pp_s3),
    HCFG_FP16("kv_n64", 128, cfg_kv_n64),
    HCFG_FP16("pers_kv_pp", 128, cfg_pers_kv_pp),
    HCFG_FP16("pers_kv_pp_k3", 128, cfg_pers_kv_pp_k3),
    HCFG_FP16("pers_kv_n64", 128, cfg_pers_kv_n64),
    HCFG_FP16("pers_kv_ip", 128, cfg_pers_kv_ip),
    HCFG_FP16("kv_pp3", 64, cfg_kv_pp3),
    HCFG_FP16("pers_kv_pp3", 64, cfg_pers_kv_pp3),
    HCFG_FP16("pers_kv_pp3_s5", 64, cfg_pers_kv_pp3_s5),
    HCFG_FP16("pers_kv_ip3", 64, cfg_pers_kv_ip3),
    HCFG_FP16("pers_kv_pp_xt", 128, cfg_pers_kv_pp_xt),
    HCFG_FP16("kv_pp_n192", 128, cfg_kv_pp_n192),
    HCFG_FP16("pers_kv_pp3_xe", 64, cfg_pers_kv_pp3_xe),
    HCFG_FP16("pers_kv_pp3_xs", 64, cfg_pers_kv_pp3_xs),
};
#define N_CFGS (sizeof cfgs / sizeof cfgs[0])

/* flash_hopper's own choice per (head_dim, causal, seq_len) in the lab's
 * names (keep in step with default_cfg() in flash_hopper.cu), so that an
 * unset ATTN_FLASH_HOPPER_CFG runs what the shipped variant runs; but for
 * D=128 non-causal S <= 4096, where flash_hopper runs d128_persistent on
 * 2-CTA clusters (d128_persistent_mc) and the lab has no clusters, the lab
 * runs the same kernel on single CTAs (pers_kv_pp). */
static const char *default_cfg(int head_dim, bool causal, int seq_len)
{
    if (head_dim == 128 && seq_len <= 1024) return "pers_kv_pp";
    if (head_dim == 64 && causal && seq_len <= 1024) return "pers_kv_pp3";
    if (head_dim == 128 && causal) {
        if (seq_len <= 4096) return "pers_kv_pp_xt";
        return seq_len <= 8192 ? "kv_pp" : "kv_pp_n192";
    }
    if (head_dim == 128) return seq_len < 2048 ? "pp" : seq_len < 8192 ? "pers_kv_pp" : "kv_pp_n192";
    if (head_dim == 96) {
        if (causal) return seq_len <= 4096 ? "pers_kv_pp_xt" : "kv_pp_n192";
        return seq_len < 8192 ? "pers_kv_pp" : "kv_pp_n192";
    }
    if (head_dim == 192) return causal && seq_len <= 1024 ? "pers_kv_pp_n64k" : "kv_pp_n96k";
    if (head_dim == 256) return seq_len <= 1024 ? "pers_kv_pp_n64k" : "kv_pp_n80k";
    if (!causal && seq_len <= 4096) return "pers_kv_pp3_xs";
    return "kv_pp3";
}

/* Heads per schedule section, as flash_hopper's default_sec(). */
static int default_sec(const struct lab_hopper_cfg *c, const struct attn_problem *p)
{
    if (c->pers || !p->causal) return 1;
    if (p->head_dim == 64) return p->seq_len <= 8192 ? 16 : 4;
    return c->bn <= 128 ? 4 : 1;
}

/* ATTN_FLASH_HOPPER_CFG when set (NULL if it names none compiled for p's
 * dtype and head_dim), else default_cfg(). */
static const struct lab_hopper_cfg *pick_cfg(const struct attn_problem *p)
{
    const char *want = getenv("ATTN_FLASH_HOPPER_CFG");
    if (!want || !*want) want = default_cfg(p->head_dim, p->causal, p->seq_len);
    for (size_t i = 0; i < N_CFGS; i++) {
        const struct lab_hopper_cfg *c = &cfgs[i];
        if (c->dtype == p->dtype && c->head_dim == p->head_dim && strcmp(want, c->name) == 0) return c;
    }
    return NULL;
}

/* a positive integer from the environment, or 0 when unset or not one */
static int env_positive(const char *name)
{
    const char *s = getenv(name);
    return s && atoi(s) > 0 ? atoi(s) : 0;
}

struct lab_ctx {
    struct attn_problem p;
    const struct lab_hopper_cfg *cfg;
    struct hop_maps maps; /* Q, K, V and O (the EPI 2 configurations store through O's) */
    struct lab_launch launch;
};

static const char *lab_supports(const struct attn_problem *p, const struct device_info *dev)
{
    /* the lab's kernel reads K/V head bh, of dense batches */
    const char *why = hop_supports_shape(p, dev, false, false);
    if (why) return why;
    const struct lab_hopper_cfg *c = pick_cfg(p);
    if (!c) return "ATTN_FLASH_HOPPER_CFG names no configuration compiled for this dtype and head_dim";
    if (c->span && p->causal) return "ATTN_FLASH_HOPPER_CFG names a non-causal configuration (work tiles span heads)";
    return hop_supports_kernel(c->kernel(), c->smem, dev);
}

static int lab_setup(void **ctx, const struct attn_problem *p, void *workspace)
{
    (void)workspace;
    const struct lab_hopper_cfg *cfg = pick_cfg(p);
    if (!cfg) return ATTN_FAIL(ATTN_ERR, "flash_hopper_lab: no configuration for this dtype and head_dim");
    ATTN_TRY(cfg->prepare());
    struct lab_ctx *c = (struct lab_ctx *)calloc(1, sizeof *c);
    if (!c) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    c->p = *p;
    c->cfg = cfg;
    const int rc = hop_maps_init(&c->maps, cfg->bn, 0);
    if (rc != ATTN_OK) {
        free(c);
        return rc;
    }
    const size_t bh = (size_t)p->batch * p->heads;
    size_t sec = env_positive("ATTN_FLASH_HOPPER_SEC") ? (size_t)env_positive("ATTN_FLASH_HOPPER_SEC")
                                                       : (size_t)default_sec(cfg, p);
    if (sec > bh) sec = bh;
    c->launch.S = p->seq_len;
    c->launch.causal = p->causal ? 1 : 0;
    c->launch.n_sm = env_positive("ATTN_FLASH_HOPPER_CTAS") ? env_positive("ATTN_FLASH_HOPPER_CTAS") : hop_sm_count();
    c->launch.sec_heads = (int)sec;
    c->launch.opts = LAB_OPT_DEFAULT;
    const char *opts_env = getenv("ATTN_FLASH_HOPPER_OPTS");
    if (opts_env && *opts_env) c->launch.opts = atoi(opts_env) & LAB_OPT_DEFAULT;
    char opts_note[16] = "";
    if (c->launch.opts != LAB_OPT_DEFAULT) snprintf(opts_note, sizeof opts_note, " opts %d", c->launch.opts);
    if (sec > 1)
        attn_set_impl("cfg %s sec %zu%s", cfg->name, sec, opts_note);
    else
        attn_set_impl("cfg %s%s", cfg->name, opts_note);
    c->launch.bh = bh;
    c->launch.scale_log2 = p->scale * 1.4426950408889634f; /* exp(x·scale) = exp2(x·scale·log2 e) */
    *ctx = c;
    return ATTN_OK;
}

static int lab_run(void *ctx, const void *q, const void *k, const void *v, void *o, attn_stream_t stream)
{
    struct lab_ctx *c = (struct lab_ctx *)ctx;
    ATTN_TRY(hop_maps_for(&c->maps, &c->p, q, k, v, o));
    attn_range_push("flash_hopper_lab_fwd");
    const int rc = c->cfg->launch(c->maps.tm, o, &c->launch, (cudaStream_t)stream);
    attn_range_pop();
    return rc;
}

static void lab_teardown(void *ctx) { free(ctx); }

extern "C" const struct attn_variant attn_variant_flash_hopper_lab = {
    .name = "flash_hopper_lab",
    .summary = "flash_hopper's tuning lab (make lab): every A/B'd configuration, "
               "ATTN_FLASH_HOPPER_CFG / _OPTS / _SEC / _CTAS pick and shape it",
    .fused = true,
    .supports = lab_supports,
    .workspace_bytes = attn_no_workspace,
    .setup = lab_setup,
    .run = lab_run,
    .teardown = lab_teardown,
    .framework = NULL,
    .backward = NULL,
};

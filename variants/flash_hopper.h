/* flash_hopper.h — flash_hopper's shipped configurations, one by one, for
 * the GPU tests (tests/check_gpu.c): the variant (attn_variant_flash_hopper)
 * picks one per problem, and these hooks run each of them on any problem it
 * can take, so that every compiled kernel is tested, not only those the
 * default picks at the tests' shapes. */
#ifndef ATTN_FLASH_HOPPER_H
#define ATTN_FLASH_HOPPER_H

#include "../common/attn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The compiled configurations: 16 kernels × 2 dtypes (flash_hopper.cu
 * checks that its table has this many). */
#define FLASH_HOPPER_CONFIGS 32

/* Configuration i (0 <= i < FLASH_HOPPER_CONFIGS): its name, the dtype and
 * head_dim it is compiled for, whether it takes causal problems, and
 * whether its grid is persistent. */
const char *flash_hopper_config_name(int i);
enum attn_dtype flash_hopper_config_dtype(int i);
int flash_hopper_config_head_dim(int i);
bool flash_hopper_config_causal_ok(int i);
bool flash_hopper_config_persistent(int i); /* a grid of at most one CTA per SM */
bool flash_hopper_config_spans_heads(int i); /* work tiles span heads: dense, non-causal only */
/* 2-CTA clusters that share K/V loads: dense only; causal only with an even
 * number of query heads per K/V head */
bool flash_hopper_config_clusters(int i);

/* NULL when configuration i can run p on dev, else why not. */
const char *flash_hopper_config_supports(int i, const struct attn_problem *p, const struct device_info *dev);

/* The variant's setup() with configuration i instead of the default one, and
 * a persistent grid capped at max_ctas CTAs (0: one per SM; a few make each
 * CTA run several work tiles at small shapes). run() and teardown() are
 * the variant's. */
int flash_hopper_config_setup(int i, int max_ctas, void **ctx, const struct attn_problem *p);

/* The name of the configuration the variant picks for p. */
const char *flash_hopper_default_config(const struct attn_problem *p);

#ifdef __cplusplus
}
#endif
#endif

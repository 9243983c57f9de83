/* inplace.cu — the seed's 04_b_inplace_ops_attention.py: the naive steps with
 * masked_fill_ applied in place, so the device-to-device copy and the second
 * S×S buffer are gone:
 *     scores = q @ k.T;  scores *= scale;  scores.masked_fill_(mask, -inf);
 *     attn = softmax(scores);  out = attn @ v */
#include "../common/eager_ops.h"
#include "../common/nvtx.h"

static size_t inplace_workspace_bytes(const struct attn_problem *p)
{
    return eager_workspace_bytes(p, 1);
}

static int inplace_setup(void **ctx, const struct attn_problem *p, void *workspace)
{
    return eager_ctx_create(ctx, p, workspace, 1);
}

static int inplace_run(void *ctx, const void *q, const void *k, const void *v, void *o,
                       attn_stream_t stream)
{
    struct eager_ctx *c = (struct eager_ctx *)ctx;
    ATTN_STEP("qk_matmul", eager_qk_matmul(c->blas, &c->p, q, k, c->scores, stream));
    ATTN_STEP("scale", eager_scale(&c->p, c->scores, stream));
    ATTN_STEP("mask", eager_mask_fill(&c->p, c->scores, stream));
    ATTN_STEP("softmax", eager_softmax(&c->p, c->scores, stream));
    ATTN_STEP("pv_matmul", eager_pv_matmul(c->blas, &c->p, c->scores, v, o, stream));
    return ATTN_OK;
}

extern "C" const struct attn_variant attn_variant_inplace = {
    .name = "inplace",
    .summary = "eager steps with masked_fill_ in place: no copy, one S*S buffer",
    .fused = false,
    .supports = eager_supports,
    .workspace_bytes = inplace_workspace_bytes,
    .setup = inplace_setup,
    .run = inplace_run,
    .teardown = eager_ctx_destroy,
    .framework = NULL,
};

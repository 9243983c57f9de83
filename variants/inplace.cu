/* inplace.cu — the seed's 04_b_inplace_ops_attention.py: the naive steps with
 * masked_fill_ applied in place, so the device-to-device copy and the second
 * S×S buffer are gone:
 *     scores = q @ k.T;  scores *= scale;  scores.masked_fill_(mask, -inf);
 *     attn = softmax(scores);  out = attn @ v
 * A ragged batch runs these steps once per sequence (eager_run), as a PyTorch
 * loop over packed sequences would: each on the sequence's own [heads, L, L]
 * scores, the GEMMs reading and writing the THD tensors in place. Grouped K/V
 * heads are read per group, never repeated: one GEMM per product for a dense
 * batch, min(G, kv_heads) per sequence of a ragged one (eager_ops.cu). Extra
 * memory: the cuBLAS workspace and one score buffer, [batch, heads, S, S] for
 * a dense batch, [heads, S, S] (the longest sequence's, reused by every
 * sequence) for a ragged one; grouped heads add none. */
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

/* The steps over one pass: the dense batch, or one sequence of a ragged one. */
static int inplace_steps(struct eager_ctx *c, const struct eager_pass *s, const void *q,
                         const void *k, const void *v, void *o, attn_stream_t stream)
{
    ATTN_STEP("qk_matmul", eager_qk_matmul(c->blas, s, q, k, c->scores, stream));
    ATTN_STEP("scale", eager_scale(&s->p, c->scores, stream));
    ATTN_STEP("mask", eager_mask_fill(&s->p, c->scores, stream));
    ATTN_STEP("softmax", eager_softmax(&s->p, c->scores, stream));
    ATTN_STEP("pv_matmul", eager_pv_matmul(c->blas, s, c->scores, v, o, stream));
    return ATTN_OK;
}

static int inplace_run(void *ctx, const void *q, const void *k, const void *v, void *o,
                       attn_stream_t stream)
{
    return eager_run((struct eager_ctx *)ctx, inplace_steps, q, k, v, o, stream);
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

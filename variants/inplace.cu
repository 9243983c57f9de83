/* inplace.cu — the seed's 04_b_inplace_ops_attention.py: the naive steps with
 * masked_fill_ applied in place, so the device-to-device copy and the second
 * S×S buffer are gone:
 *     scores = q @ k.T;  scores *= scale;  scores.masked_fill_(mask, -inf);
 *     attn = softmax(scores);  out = attn @ v
 * The backward is naive's (eager_backward): autograd's formula for
 * masked_fill_ is the out-of-place grad.masked_fill(mask, 0) of masked_fill,
 * so the backward keeps its copy. One launch per op, from the P the forward
 * left in the score buffer:
 *     dV = Pᵀ·dO;  dP = dO·Vᵀ;  dS = P∘(dP − rowsum(dP∘P));
 *     copy dS, fill 0 where masked;  dS * scale;  dK = dSᵀ·Q;  dQ = dS·K
 * A ragged batch runs these steps once per sequence (eager_run; the backward
 * from the last sequence), as a PyTorch loop over packed sequences would:
 * each on the sequence's own [heads, L, L] scores, the GEMMs reading and
 * writing the THD tensors in place. Grouped K/V heads are read per group,
 * never repeated: one GEMM per product for a dense batch, min(G, kv_heads)
 * per forward product and G per dK or dV product per sequence of a ragged
 * one (eager_ops.cu).
 * Extra memory (s = one S×S buffer: [batch, heads, S, S] of the dtype for a
 * dense batch, [heads, S, S], the longest sequence's, reused by every
 * sequence, for a ragged one; each rounded up to 256 bytes): the 32 MiB
 * cuBLAS workspace and one score buffer, s. With a backward pass (bwd,
 * fwd_bwd) two more s for the backward's gradients (the score buffer holds
 * P, which the backward reads): 3s, as naive's; and for a ragged batch the
 * score buffer holds every sequence's P, the sum over sequences of heads·L²
 * elements, instead of s. Grouped heads add none. */
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

/* The steps over one pass: the dense batch, or one sequence of a ragged one,
 * on the pass's slice of the score buffer (eager_probs), where P ends up. */
static int inplace_steps(struct eager_ctx *c, const struct eager_pass *s, const void *q,
                         const void *k, const void *v, void *o, attn_stream_t stream)
{
    void *scores = eager_probs(c, s);
    ATTN_STEP("qk_matmul", eager_qk_matmul(c->blas, s, q, k, scores, stream));
    ATTN_STEP("scale", eager_scale(&s->p, scores, stream));
    ATTN_STEP("mask", eager_mask_fill(s, scores, stream));
    ATTN_STEP("softmax", eager_softmax(&s->p, scores, stream));
    ATTN_STEP("pv_matmul", eager_pv_matmul(c->blas, s, scores, v, o, stream));
    return ATTN_OK;
}

static int inplace_run(void *ctx, const void *q, const void *k, const void *v, void *o,
                       attn_stream_t stream)
{
    return eager_run((struct eager_ctx *)ctx, inplace_steps, q, k, v, o, stream);
}

/* The forward of a backward pass is the forward itself: it leaves P where
 * the backward reads it. */
static const struct attn_backward_ops inplace_backward_ops = {
    .forward = inplace_run,
    .backward = eager_backward,
};

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
    .backward = &inplace_backward_ops,
};

/* naive.cu — the seed's NaiveCausalAttention (04_a_naive_attention.py) step by
 * step, one launch per PyTorch op:
 *     scores = q @ k.T               cuBLAS strided-batched GEMM
 *     scores = scores * scale        scale kernel
 *     scores = scores.masked_fill()  OUT OF PLACE: a device-to-device copy into
 *                                    a second S×S buffer, then the mask on it
 *     attn = softmax(scores)         row softmax
 *     out = attn @ v                 cuBLAS strided-batched GEMM
 * The copy is the seed's finding: masked_fill returns a new tensor.
 * The backward is what autograd runs for those ops, one launch per op
 * (eager_backward, shared with inplace: autograd's formulas are the same for
 * the in-place mask), from the P the forward left in the second buffer:
 *     dV = Pᵀ·dO, dP = dO·Vᵀ         cuBLAS GEMMs (BmmBackward0 of out)
 *     dS = P∘(dP − rowsum(dP∘P))     softmax backward kernel
 *     dS.masked_fill(mask, 0)        a device-to-device copy and the fill
 *                                    (masked_fill's backward is out of place)
 *     dS * scale                     scale kernel into a new buffer
 *     dK = dSᵀ·Q, dQ = dS·K          cuBLAS GEMMs (BmmBackward0 of scores)
 * A ragged batch runs these steps once per sequence (eager_run; the backward
 * from the last sequence), as a PyTorch loop over packed sequences would, the
 * copies included: each on the sequence's own [heads, L, L] scores, the
 * GEMMs reading and writing the THD tensors in place. Grouped K/V heads are
 * read per group, never repeated: one GEMM per product for a dense batch,
 * min(G, kv_heads) per forward product and G per dK or dV product per
 * sequence of a ragged one (eager_ops.cu).
 * Extra memory (s = one S×S buffer: [batch, heads, S, S] of the dtype for a
 * dense batch, [heads, S, S], the longest sequence's, reused by every
 * sequence, for a ragged one; each rounded up to 256 bytes): the 32 MiB
 * cuBLAS workspace and two score buffers, 2s. With a backward pass (bwd,
 * fwd_bwd) one more s for the backward's gradients (the other it needs is
 * the pre-mask scores buffer, dead once the forward is done): 3s; and for a
 * ragged batch the buffer that keeps P holds every sequence's, the sum over
 * sequences of heads·L² elements, instead of s. Grouped heads add none. */
#include "../common/eager_ops.h"
#include "../common/nvtx.h"

static size_t naive_workspace_bytes(const struct attn_problem *p)
{
    return eager_workspace_bytes(p, 2);
}

static int naive_setup(void **ctx, const struct attn_problem *p, void *workspace)
{
    return eager_ctx_create(ctx, p, workspace, 2);
}

/* The steps over one pass: the dense batch, or one sequence of a ragged one.
 * P ends up in the pass's slice of the second buffer (eager_probs). */
static int naive_steps(struct eager_ctx *c, const struct eager_pass *s, const void *q,
                       const void *k, const void *v, void *o, attn_stream_t stream)
{
    void *masked = eager_probs(c, s);
    ATTN_STEP("qk_matmul", eager_qk_matmul(c->blas, s, q, k, c->scores, stream));
    ATTN_STEP("scale", eager_scale(&s->p, c->scores, stream));
    ATTN_STEP("copy", eager_copy(masked, c->scores, eager_scores_bytes(&s->p), stream));
    ATTN_STEP("mask", eager_mask_fill(s, masked, stream));
    ATTN_STEP("softmax", eager_softmax(&s->p, masked, stream));
    ATTN_STEP("pv_matmul", eager_pv_matmul(c->blas, s, masked, v, o, stream));
    return ATTN_OK;
}

static int naive_run(void *ctx, const void *q, const void *k, const void *v, void *o,
                     attn_stream_t stream)
{
    return eager_run((struct eager_ctx *)ctx, naive_steps, q, k, v, o, stream);
}

/* The forward of a backward pass is the forward itself: it leaves P where
 * the backward reads it. */
static const struct attn_backward_ops naive_backward_ops = {
    .forward = naive_run,
    .backward = eager_backward,
};

extern "C" const struct attn_variant attn_variant_naive = {
    .name = "naive",
    .summary = "eager steps as PyTorch runs them; out-of-place masked_fill (D2D copy)",
    .fused = false,
    .supports = eager_supports,
    .workspace_bytes = naive_workspace_bytes,
    .setup = naive_setup,
    .run = naive_run,
    .teardown = eager_ctx_destroy,
    .framework = NULL,
    .backward = &naive_backward_ops,
};

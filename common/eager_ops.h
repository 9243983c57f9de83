/* eager_ops.h — the steps of eager (unfused) attention, one launch each, as
 * PyTorch runs the seed's code: S = Q·Kᵀ (cuBLAS), S *= scale, the masked
 * fill, row softmax, O = P·V (cuBLAS); and the steps autograd runs for its
 * backward: dV = Pᵀ·dO, dP = dO·Vᵀ, the softmax backward, the masked fill's
 * backward (a copy and a fill), the scale's, dK = dSᵀ·Q, dQ = dS·K. Scores,
 * probabilities and their gradients are stored in the problem's dtype,
 * accumulation and softmax arithmetic are float32.
 * The naive and inplace variants compose these; they differ only in how the
 * forward applies the mask, and share the backward (eager_backward):
 * autograd's formulas are the same for masked_fill and masked_fill_. Every
 * function enqueues on `stream` and returns an attn_rc.
 *
 * A dense batch is one pass of the steps over its [batch, heads, S, S]
 * scores. A ragged batch (packed THD tensors, attn.h) runs as a PyTorch user
 * runs packed sequences eagerly: a loop over the sequences (eager_run), each
 * one pass of the same steps over its own [heads, L, L] scores (L its length,
 * the causal mask within the sequence). The score buffers are reused from
 * sequence to sequence, so they are sized for the longest: [heads, S, S]
 * each instead of the dense [batch, heads, S, S]. The one exception is the
 * buffer that ends up holding P at a point with a backward pass: autograd
 * keeps every sequence's P alive for its backward, so that buffer holds all
 * of them, sequence b's [heads, L_b, L_b] in its own slice. The GEMMs read
 * Q, K, V (dO) and write O (dQ, dK, dV) in the THD layout directly through
 * their leading dimensions: no repacking copy, no extra memory.
 * Grouped K/V heads (G = heads / kv_heads query heads per K/V head) are never
 * repeated: a dense GEMM runs per K/V head over its group's G·S query rows
 * (for dK and dV that inner dimension of G·S rows sums the group); a packed
 * sequence's heads take min(G, kv_heads) strided-batched GEMMs per forward
 * product (eager_ops.cu, head_sweep) and G per dK or dV product, which sum
 * the group by accumulating into the output (eager_kv_grad_matmul). The
 * lengths live in the ctx (host memory, batch ints), read once at setup. */
#ifndef ATTN_EAGER_OPS_H
#define ATTN_EAGER_OPS_H

#include "attn.h"

#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What one pass of the steps covers: a dense batch whole, or one sequence of
 * a packed ragged batch. p is that part as a dense problem: the problem
 * itself, or for a sequence a batch of one of its length (varlen cleared),
 * which the scale, mask and softmax steps and eager_scores_bytes take as it
 * is. For a sequence, packed is set: Q, K, V and O are the batch's THD
 * tensors and the sequence is on their token rows first .. first +
 * p.seq_len - 1. probs_at is the byte offset of the pass's P in the buffer
 * that keeps it (eager_probs): 0 unless a ragged batch keeps every
 * sequence's P. cache_lens: a ragged cache's lengths on the device (a
 * decode whose sequences each hold their own cached length; the cache is
 * padded to seq_len), else NULL: the GEMMs run over the padded cache and
 * the mask adds each sequence's padding, as eager PyTorch's key-padding
 * mask does. */
struct eager_pass {
    struct attn_problem p;
    bool packed;
    size_t first;
    size_t probs_at;
    const int *cache_lens;
};

/* Bytes of one score buffer: [batch, heads, seq_len, seq_len] for a dense
 * problem, [heads, seq_len, seq_len] for a ragged one (one sequence at a
 * time, the longest being seq_len). */
size_t eager_scores_bytes(const struct attn_problem *);
/* cuBLAS workspace the variants hand to cublasSetWorkspace (graph capture
 * needs a fixed one), counted in their extra memory. */
#define EAGER_CUBLAS_WORKSPACE ((size_t)32 << 20)

/* A cuBLAS handle bound to a workspace; the stream is set per call. */
int eager_cublas_create(cublasHandle_t *, void *workspace);

/* scores = Q·Kᵀ of the pass's heads, [heads, L, L] per sequence (L the
 * pass's seq_len), unscaled. The backward's dP = dO·Vᵀ is the same product
 * (q = dO, k = V). */
int eager_qk_matmul(cublasHandle_t, const struct eager_pass *, const void *q, const void *k,
                    void *scores, attn_stream_t);
/* The device-to-device copy out-of-place masked_fill makes of its input. */
int eager_copy(void *dst, const void *src, size_t bytes, attn_stream_t);
int eager_scale(const struct attn_problem *, void *scores, attn_stream_t);
/* dst = src · scale, out of place (autograd's mul backward: grad * scale, a
 * new tensor); dst may be src. */
int eager_scale_to(const struct attn_problem *, const void *src, void *dst, attn_stream_t);
/* Writes -inf where the mask is set: above the diagonal when causal (aligned
 * bottom-right on each sequence's own length), and a ragged cache's keys
 * past each sequence's length; for a non-causal problem without one the
 * mask is empty (a padding mask that masks nothing), so the launch writes
 * nothing but is still made, as masked_fill would be. */
int eager_mask_fill(const struct eager_pass *, void *scores, attn_stream_t);
/* The same launch writing 0 instead: the fill of masked_fill's backward,
 * grad.masked_fill(mask, 0). */
int eager_mask_zero(const struct eager_pass *, void *grad, attn_stream_t);
int eager_softmax(const struct attn_problem *, void *scores, attn_stream_t);
/* PyTorch's _softmax_backward_data: dS = P∘(dP − rowsum(dP∘P)) per score
 * row, float32 arithmetic, one kernel; ds is a buffer of its own. */
int eager_softmax_backward(const struct attn_problem *, const void *dp, const void *probs,
                           void *ds, attn_stream_t);
/* O = P·V for the pass's rows of O. The backward's dQ = dS·K is the same
 * product (probs = dS, v = K, o = dQ). */
int eager_pv_matmul(cublasHandle_t, const struct eager_pass *, const void *probs,
                    const void *v, void *o, attn_stream_t);
/* out = scoresᵀ·x per K/V head, summed over its group's query heads, for the
 * pass's rows of out (K's layout), x having Q's: dV = Pᵀ·dO and
 * dK = dSᵀ·Q. */
int eager_kv_grad_matmul(cublasHandle_t, const struct eager_pass *, const void *scores,
                         const void *x, void *out, attn_stream_t);

#ifdef __cplusplus
}
#endif
#endif

#ifndef ATTN_EAGER_CTX
#define ATTN_EAGER_CTX
#ifdef __cplusplus
extern "C" {
#endif
/* What both eager variants keep between calls: the problem, a cuBLAS handle,
 * the score buffers carved out of their workspace, and for a ragged batch
 * its sequence lengths (malloc'd, batch ints; NULL when dense). The
 * workspace is [cuBLAS workspace][scores][masked, naive only][the
 * backward's own buffers, when the pass is not fwd]:
 *   scores, masked: the forward's score_buffers (1 or 2) S×S buffers; the
 *     last of them ends up holding P (probs: inplace's scores, naive's
 *     masked). At a ragged point with a backward pass that one holds every
 *     sequence's P (sum over sequences of heads·L² elements, each slice
 *     256-byte aligned); every other buffer is one pass's S×S.
 *   grad[0], grad[1]: the backward's two S×S buffers (dP, then dS and its
 *     masked, scaled copies, each op writing the other buffer, as each of
 *     autograd's ops returns a new tensor). The forward's buffers other than
 *     P's hold nothing the backward needs (autograd frees them: naive's
 *     scores) and serve first; the workspace adds the rest (naive 1,
 *     inplace 2). NULL when the pass is fwd. */
struct eager_ctx {
    struct attn_problem p;
    cublasHandle_t blas;
    void *scores, *masked;
    void *probs;
    void *grad[2];
    bool keep_probs; /* every sequence's P in its own slice of probs */
    int *lens;
    /* a paged cache: K and V gathered contiguous, and the page table (device) */
    void *k_dense, *v_dense;
    int *table;
    int *cache_lens; /* a ragged cache's lengths (device), else NULL */
};
/* The two S×S buffers the backward writes in turn. */
#define EAGER_GRAD_BUFFERS 2
size_t eager_workspace_bytes(const struct attn_problem *, int score_buffers);
int eager_ctx_create(void **ctx, const struct attn_problem *, void *workspace, int score_buffers);
void eager_ctx_destroy(void *ctx);
/* supports() of both eager variants: any shape, bf16/fp16, with a device. */
const char *eager_supports(const struct attn_problem *, const struct device_info *);

/* Where the pass's P lives: its slice of probs. */
static inline void *eager_probs(const struct eager_ctx *c, const struct eager_pass *s)
{
    return (char *)c->probs + s->probs_at;
}

/* A variant's steps, one pass (the GEMMs take the pass, the kernels its p). */
typedef int (*eager_steps_fn)(struct eager_ctx *, const struct eager_pass *, const void *q,
                              const void *k, const void *v, void *o, attn_stream_t);
/* Runs `steps` once over a dense batch, or once per sequence of a ragged
 * one, in order; stops at the first error. */
int eager_run(struct eager_ctx *, eager_steps_fn steps, const void *q, const void *k,
              const void *v, void *o, attn_stream_t);
/* attn_backward_ops.backward of both eager variants: autograd's steps over
 * the P the last forward kept, once over a dense batch, or once per
 * sequence of a ragged one, the last sequence first (autograd walks the
 * graph from the op recorded last). */
int eager_backward(void *ctx, const void *q, const void *k, const void *v, const void *o,
                   const void *dout, void *dq, void *dk, void *dv, attn_stream_t);
#ifdef __cplusplus
}
#endif
#endif

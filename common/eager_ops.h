/* eager_ops.h — the steps of eager (unfused) attention, one launch each, as
 * PyTorch runs the seed's code: S = Q·Kᵀ (cuBLAS), S *= scale, the masked
 * fill, row softmax, O = P·V (cuBLAS). Scores and probabilities are stored in
 * the problem's dtype, accumulation and softmax arithmetic are float32.
 * The naive and inplace variants compose these; they differ only in how the
 * mask is applied. Every function enqueues on `stream` and returns an attn_rc.
 *
 * A dense batch is one pass of the steps over its [batch, heads, S, S]
 * scores. A ragged batch (packed THD tensors, attn.h) runs as a PyTorch user
 * runs packed sequences eagerly: a loop over the sequences (eager_run), each
 * one pass of the same steps over its own [heads, L, L] scores (L its length,
 * the causal mask within the sequence). The score buffers are reused from
 * sequence to sequence, so they are sized for the longest: [heads, S, S]
 * each instead of the dense [batch, heads, S, S]. The GEMMs read Q, K, V and
 * write O in the THD layout directly through their leading dimensions: no
 * repacking copy, no extra memory.
 * Grouped K/V heads (G = heads / kv_heads query heads per K/V head) are never
 * repeated: a dense GEMM runs per K/V head over its group's G·S query rows;
 * a packed sequence's heads take min(G, kv_heads) strided-batched GEMMs per
 * product (eager_ops.cu, head_sweep). The lengths live in the ctx (host
 * memory, batch ints), read once at setup. */
#ifndef ATTN_EAGER_OPS_H
#define ATTN_EAGER_OPS_H

#include "attn.h"

#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What one pass of the steps covers: a dense batch whole, or one sequence of
 * a ragged batch. p is that part as a dense problem: the problem itself, or
 * for a sequence a batch of one of its length (varlen cleared), which the
 * scale, mask and softmax steps and eager_scores_bytes take as it is. For a
 * sequence, packed is set: Q, K, V and O are the batch's THD tensors and the
 * sequence is on their token rows first .. first + p.seq_len - 1. */
struct eager_pass {
    struct attn_problem p;
    bool packed;
    size_t first;
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
 * pass's seq_len), unscaled. */
int eager_qk_matmul(cublasHandle_t, const struct eager_pass *, const void *q, const void *k,
                    void *scores, attn_stream_t);
/* The device-to-device copy out-of-place masked_fill makes of its input. */
int eager_copy(void *dst, const void *src, size_t bytes, attn_stream_t);
int eager_scale(const struct attn_problem *, void *scores, attn_stream_t);
/* Writes -inf where the mask is set: above the diagonal when causal; for a
 * non-causal problem the mask is empty (a padding mask that masks nothing),
 * so the launch writes nothing but is still made, as masked_fill would be. */
int eager_mask_fill(const struct attn_problem *, void *scores, attn_stream_t);
int eager_softmax(const struct attn_problem *, void *scores, attn_stream_t);
/* O = P·V for the pass's rows of O. */
int eager_pv_matmul(cublasHandle_t, const struct eager_pass *, const void *probs,
                    const void *v, void *o, attn_stream_t);

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
 * the score buffers carved out of their workspace
 * ([cuBLAS workspace][scores][second scores buffer, naive only]), and for a
 * ragged batch its sequence lengths (malloc'd, batch ints; NULL when dense). */
struct eager_ctx {
    struct attn_problem p;
    cublasHandle_t blas;
    void *scores, *masked;
    int *lens;
};
size_t eager_workspace_bytes(const struct attn_problem *, int score_buffers);
int eager_ctx_create(void **ctx, const struct attn_problem *, void *workspace, int score_buffers);
void eager_ctx_destroy(void *ctx);
/* supports() of both eager variants: any shape, bf16/fp16, with a device. */
const char *eager_supports(const struct attn_problem *, const struct device_info *);

/* A variant's steps, one pass (the GEMMs take the pass, the kernels its p). */
typedef int (*eager_steps_fn)(struct eager_ctx *, const struct eager_pass *, const void *q,
                              const void *k, const void *v, void *o, attn_stream_t);
/* Runs `steps` once over a dense batch, or once per sequence of a ragged
 * one, in order; stops at the first error. */
int eager_run(struct eager_ctx *, eager_steps_fn steps, const void *q, const void *k,
              const void *v, void *o, attn_stream_t);
#ifdef __cplusplus
}
#endif
#endif

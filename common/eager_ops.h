/* eager_ops.h — the steps of eager (unfused) attention, one launch each, as
 * PyTorch runs the seed's code: S = Q·Kᵀ (cuBLAS), S *= scale, the masked
 * fill, row softmax, O = P·V (cuBLAS). Scores and probabilities are stored in
 * the problem's dtype, accumulation and softmax arithmetic are float32.
 * The naive and inplace variants compose these; they differ only in how the
 * mask is applied. Every function enqueues on `stream` and returns an attn_rc. */
#ifndef ATTN_EAGER_OPS_H
#define ATTN_EAGER_OPS_H

#include "attn.h"

#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of one [batch, heads, seq_len, seq_len] score tensor. */
size_t eager_scores_bytes(const struct attn_problem *);
/* cuBLAS workspace the variants hand to cublasSetWorkspace (graph capture
 * needs a fixed one), counted in their extra memory. */
#define EAGER_CUBLAS_WORKSPACE ((size_t)32 << 20)

/* A cuBLAS handle bound to a workspace; the stream is set per call. */
int eager_cublas_create(cublasHandle_t *, void *workspace);

int eager_qk_matmul(cublasHandle_t, const struct attn_problem *, const void *q, const void *k,
                    void *scores, attn_stream_t);
/* The device-to-device copy out-of-place masked_fill makes of its input. */
int eager_copy(void *dst, const void *src, size_t bytes, attn_stream_t);
int eager_scale(const struct attn_problem *, void *scores, attn_stream_t);
/* Writes -inf where the mask is set: above the diagonal when causal; for a
 * non-causal problem the mask is empty (a padding mask that masks nothing),
 * so the launch writes nothing but is still made, as masked_fill would be. */
int eager_mask_fill(const struct attn_problem *, void *scores, attn_stream_t);
int eager_softmax(const struct attn_problem *, void *scores, attn_stream_t);
int eager_pv_matmul(cublasHandle_t, const struct attn_problem *, const void *probs,
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
 * and the score buffers carved out of their workspace
 * ([cuBLAS workspace][scores][second scores buffer, naive only]). */
struct eager_ctx {
    struct attn_problem p;
    cublasHandle_t blas;
    void *scores, *masked;
};
size_t eager_workspace_bytes(const struct attn_problem *, int score_buffers);
int eager_ctx_create(void **ctx, const struct attn_problem *, void *workspace, int score_buffers);
void eager_ctx_destroy(void *ctx);
/* supports() of both eager variants: any shape, bf16/fp16, with a device. */
const char *eager_supports(const struct attn_problem *, const struct device_info *);
#ifdef __cplusplus
}
#endif
#endif

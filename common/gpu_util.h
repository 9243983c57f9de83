/* gpu_util.h — device helpers the runner and tests share: random inputs,
 * output poisoning, and the float32 GPU references, forward and backward,
 * used to check shapes too large for the float64 CPU references. */
#ifndef ATTN_GPU_UTIL_H
#define ATTN_GPU_UTIL_H

#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* n elements uniform in [-1, 1), from a counter-based hash of (seed, index). */
int gpu_fill_random(void *dst, size_t n, enum attn_dtype, uint64_t seed, attn_stream_t);
/* n elements from N(0, sigma²), the same way (Box–Muller over the hash). */
int gpu_fill_normal(void *dst, size_t n, enum attn_dtype, uint64_t seed, float sigma, attn_stream_t);
/* A point's input tensor as its init key says (attn_problem.init_sigma):
 * gpu_fill_random for uniform, else gpu_fill_normal. */
int gpu_fill_input(void *dst, size_t n, const struct attn_problem *, uint64_t seed, attn_stream_t);
/* Every byte 0xFF: NaN in bf16 and fp16, so an unwritten element fails validation. */
int gpu_poison(void *dst, size_t bytes, attn_stream_t);
/* O = softmax(scale·QKᵀ [+ mask])·V in float32, one block per query row;
 * online softmax, no rounding of S or P; grouped K/V heads as attn.h lays
 * them out; head_dim <= 512, any batch·heads. */
int gpu_reference_f32(const struct attn_problem *, const void *q, const void *k,
                      const void *v, float *o, attn_stream_t);
/* The backward in float32: dq, dk and dv (floats, laid out as Q, K and V)
 * from the 16-bit q, k, v and dout, P and dS kept in float32 (never rounded
 * to the dtype); the dK and dV of a K/V head sum its group's query heads;
 * causal and ragged batches as gpu_reference_f32. Any head_dim. Two kernels
 * over 64-row tiles: one per query tile finds each row's log-sum-exp and
 * D_i = rowsum(P∘dP) (= rowsum(dO∘O)) by an online softmax, then dQ; one per
 * K/V tile walks every query of its group's heads for dK and dV, so that no
 * two blocks write one element. Allocates its scratch (two floats per query
 * row and head) and waits for the stream before it frees it. */
int gpu_reference_bwd_f32(const struct attn_problem *, const void *q, const void *k,
                          const void *v, const void *dout, float *dq, float *dk, float *dv,
                          attn_stream_t);

/* Holds the stream until *release becomes non-zero (host-mapped memory) or
 * `timeout_ms` passes: enqueued before a timed region, it lets the host queue
 * the whole region before the GPU starts on it, so launch latency stays out
 * of the measurement. */
int gpu_block_stream(volatile int *release, double timeout_ms, attn_stream_t);

/* Keeps every SM busy with FMAs for `cycles` SM clock cycles (the gate's
 * injected slowdown): its time scales with the SM clock as the variant's own
 * does, so the injected share of a call stays the same when the clock falls. */
int gpu_busy_cycles(long long cycles, attn_stream_t);
/* Reads `bytes` (a multiple of 16) at src once, 16 bytes a load, from every
 * SM, and writes nothing but an impossible result: the card's read-only
 * bandwidth (peak.c). */
int gpu_read_stream(const void *src, size_t bytes, attn_stream_t);
/* Reads `bytes` (a multiple of 16) at buf once, from every SM, with loads
 * the L2 keeps, so that its lines displace what the L2 held: cold mode's
 * FLUSH_READ (timing.h says why). buf's bytes must have been written once. */
int gpu_flush_l2(const void *buf, size_t bytes, attn_stream_t);
/* K or V of a paged cache (attn.h) gathered into the contiguous [batch,
 * kv_heads, seq_len, head_dim]: what `k_cache[block_table]` is in eager
 * PyTorch. table: attn_page_table's, on the device. One launch. */
int gpu_gather_pages(const struct attn_problem *, const int *table, const void *paged, void *dense,
                     attn_stream_t);
/* bytes rounded up to a multiple of 256: where the next array of a
 * variant's workspace starts (each one 256-byte aligned) */
static inline size_t gpu_round256(size_t bytes) { return (bytes + 255) / 256 * 256; }

/* bytes from host memory to dev, finished when it returns: a copy from
 * pageable memory may return before its DMA is done, and a kernel on a
 * non-blocking stream could then read the old bytes, so the legacy stream
 * is waited for. what names the data in the error. */
int gpu_copy_to_device(void *dev, const void *host, size_t bytes, const char *what);

/* A ragged batch's sequence starts onto the device: dev_cu[b] = the tokens
 * before sequence b, dev_cu[batch] = all of them (batch + 1 ints); what
 * names them in errors. Finished when it returns. */
int gpu_seq_starts_to_device(const struct attn_problem *p, int *dev_cu, const char *what);

/* The point's page table (attn_page_table) into table on the device;
 * finished when it returns. */
int gpu_upload_page_table(const struct attn_problem *, int *table);
/* The batch's sequence lengths (attn_seq_lens) into lens on the device;
 * finished when it returns. */
int gpu_upload_seq_lens(const struct attn_problem *, int *lens);
/* K's or V's token rows that hold no token set to attn_cache_tail
 * (reference.h): a sequence's rows past its cached length in a ragged
 * cache, and the spare slots of each last page of a paged one. Nothing
 * when there are none. */
int gpu_poison_cache_tails(const struct attn_problem *, void *kv, attn_stream_t);
/* The current device's SM count into *sms, asked once (one device per
 * process): how wide the streaming kernels and flash_decode's split go. */
int gpu_sm_count(int *sms);
/* The current device's largest shared memory per block (opt-in) into
 * *bytes, asked once: which of flash_mma's backward shapes fits. */
int gpu_smem_optin(size_t *bytes);

#ifdef __cplusplus
}
#endif
#endif

/* problem.h — the largest attention problem attnbench takes, one limit per
 * size, and the check of a point against them (problem.c). The grid parser
 * (grid.c) refuses a point past any of them, naming the size and the limit,
 * before a row is planned; the GPU reference (gpu_util.cu) is built to them.
 * A variant may take less: its supports() says so and its rows are skipped. */
#ifndef ATTN_PROBLEM_H
#define ATTN_PROBLEM_H

#include "attn.h"

#include <limits.h>

#ifdef __cplusplus
extern "C" {
#endif

/* head_dim: every row is checked against a reference, and the float32 GPU
 * reference (every point past the CPU reference's size) holds one query row
 * in shared memory and ATTN_HEAD_DIM_MAX / 128 accumulators per thread.
 * naive, inplace and cudnn_sdpa (on an H200) run 512; flash_hopper and
 * flash_mma take at most 256. */
#define ATTN_HEAD_DIM_MAX 512
/* batch, heads and seq_len (each length of a ragged batch too): no kernel
 * stops short of int's range on its own (those that do say so in supports());
 * 2^24 each bounds the host's work per point (a uniform ragged batch's
 * lengths are drawn one by one, at every count of its tokens) and keeps the
 * product of any two of them within 2^48. */
#define ATTN_BATCH_MAX (1 << 24)
#define ATTN_HEADS_MAX (1 << 24)
#define ATTN_SEQ_LEN_MAX (1 << 24)
/* The tokens of a ragged batch (its lengths' sum): the GPU reference's
 * ragged kernel and flash_hopper's work-tile list index them with ints. */
#define ATTN_TOKENS_MAX INT_MAX

/* ATTN_OK when p is within every limit above, its K/V heads divide its heads
 * and its varlen is well formed (attn_varlen_check); else ATTN_ERR_INPUT
 * with a one-line message naming the size as the grid spells it ("dim=1024
 * is above ... (512)"). */
int attn_problem_check(const struct attn_problem *p);

#ifdef __cplusplus
}
#endif
#endif

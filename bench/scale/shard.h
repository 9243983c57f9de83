/* shard.h — one sweep split over N processes (attnbench --shard I/N): the
 * sweep's units (a grid point × a variant, with all its modes: they share
 * the variant's setup and validation) get a predicted cost, and a
 * deterministic longest-first assignment gives each unit to the least
 * loaded shard, so that shards end together and the union of the N shards
 * is the sweep, each row once, for any N. Every shard computes the same
 * plan from the same command line; no GPU is needed. */
#ifndef ATTN_SHARD_H
#define ATTN_SHARD_H

#include "../options.h"

#define SHARD_MAX 1024

/* Parses "I/N" (1 <= I <= N <= SHARD_MAX); ATTN_ERR_INPUT with why not. */
int shard_parse(const char *text, int *index, int *count);

/* The predicted milliseconds of one row: warm-up, sampling until the stop
 * rule's minimums or its budget, and the row's own overhead, from the
 * point's FLOP and byte counts (fused kernels move Q, K, V, O once; the
 * eager ones also write and read the S×S scores). A model for balancing,
 * not a forecast: only the ratios between rows matter. */
double shard_row_cost_ms(const struct attn_problem *, const struct attn_variant *, enum attn_mode,
                         const struct stop_rule *);

/* The plan for `count` shards: *assign (freed by the caller) holds, for
 * unit u = point * nvariants + variant, its shard (1..count); loads[s - 1]
 * (count entries, may be NULL) the predicted milliseconds of shard s. */
int shard_plan(const struct options *, int count, int **assign, double *loads);

#endif

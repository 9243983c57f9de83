/* grid.h — the benchmark grid: a list of attention problems built from grid
 * specs. One spec line is a product of axes, e.g.
 *     tokens=16384 hidden=2048 seq=512..16384 dim=64,128 causal=0,1
 * keys: batch | tokens (batch = tokens/seq), heads | hidden (heads =
 * hidden/dim), kv_heads (K/V heads, dividing heads; default heads; 1 is
 * multi-query), seq, dim, causal (0/1), dtype (bf16/fp16), varlen (a ragged
 * batch: none, uniform:F — lengths uniform in [ceil(F·seq), seq] — or
 * lens:L1+L2+...), lens (L1+L2+...: a ragged batch of these lengths; batch is
 * their count and seq the longest, so neither is given), init (the inputs'
 * distribution: uniform, [-1, 1]; normal, N(0, 1); or normal:SIGMA; a point
 * that names none takes the grid's: attn.h's ATTN_INIT_DEFAULT_SIGMA unless
 * --init set one), pass (what a row times: fwd, bwd or fwd_bwd, attn.h; a
 * point that names none takes the grid's, fwd unless --pass set one).
 * Values are comma
 * lists; a..b is the powers of two p with a <= p <= b (at least one). Grid
 * files hold one spec per line; '#' starts a comment. */
#ifndef ATTN_GRID_H
#define ATTN_GRID_H

#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most points a grid may hold. Far more than any run can time, small
 * enough that a spec's product is refused before it is expanded. */
#define GRID_MAX_POINTS 100000
/* The most elements one of Q, K, V, O may have: 2^40 (2 TiB of bf16) is
 * beyond every GPU, and keeps B·H·S·D and its byte count far from size_t
 * overflow wherever the runner multiplies them. */
#define GRID_MAX_TENSOR_ELEMS ((size_t)1 << 40)

/* Zero-initialise; free with grid_free(). points[0..count) is the run order. */
struct grid {
    struct attn_problem *points;
    size_t count, cap;
    /* private to grid.c: a hash index of points, so that de-duplication is
     * linear; slots[i] is a point's index + 1, 0 when empty. It covers the
     * first `indexed` points and is rebuilt when that is not count. */
    size_t *slots, nslots, indexed;
    /* The init of points whose spec names none (attnbench --init): set
     * before the specs are added; when not given, ATTN_INIT_DEFAULT_SIGMA. */
    bool init_given;
    float init_sigma;
    /* The pass of points whose spec names none (attnbench --pass): set
     * before the specs are added; zero, the forward, when not given. */
    enum attn_pass pass;
};

/* Appends the points of one spec line (duplicates dropped; a point already
 * in the grid keeps its place). `where` names the line in messages
 * ("file:line" or "--point"). Returns ATTN_ERR_INPUT with a one-line message
 * on a malformed spec, a grid past GRID_MAX_POINTS, a point past a size
 * limit of problem.h (attn_problem_check) or past GRID_MAX_TENSOR_ELEMS; a
 * refused spec adds no point. */
int grid_add_spec(struct grid *, const char *spec, const char *where);
/* Appends every spec of a grid file; a file with no point, a directory, a NUL
 * byte or a spec over 1023 bytes (before any '#') is an error. */
int grid_add_file(struct grid *, const char *path);
/* NAME (a file grids_dir/NAME.grid; NAME is a safe name, names.h) or a path
 * (contains '/' or ends in .grid). */
int grid_add_named(struct grid *, const char *name_or_path, const char *grids_dir);
void grid_free(struct grid *);


#ifdef __cplusplus
}
#endif
#endif

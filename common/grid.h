/* grid.h — the benchmark grid: a list of attention problems built from grid
 * specs. One spec line is a product of axes, e.g.
 *     tokens=16384 hidden=2048 seq=512..16384 dim=64,128 causal=0,1
 * keys: batch | tokens (batch = tokens/seq), heads | hidden (heads =
 * hidden/dim), seq, dim, causal (0/1), dtype (bf16/fp16). Values are comma
 * lists; a..b is the powers-of-two run from a to b. Grid files hold one spec
 * per line; '#' starts a comment. */
#ifndef ATTN_GRID_H
#define ATTN_GRID_H

#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

struct grid {
    struct attn_problem *points;
    size_t count, cap;
};

/* Appends the points of one spec line (duplicates dropped). `where` names the
 * line in messages ("file:line" or "--point"). Returns ATTN_ERR_INPUT with a
 * one-line message on a malformed spec. */
int grid_add_spec(struct grid *, const char *spec, const char *where);
/* Appends every spec of a grid file; a file with no point is an error. */
int grid_add_file(struct grid *, const char *path);
/* NAME (a file grids_dir/NAME.grid) or a path (contains '/' or ends in .grid). */
int grid_add_named(struct grid *, const char *name_or_path, const char *grids_dir);
void grid_free(struct grid *);

/* "B=4 H=16 S=4096 D=128 causal" into buf. */
const char *grid_point_label(const struct attn_problem *, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif

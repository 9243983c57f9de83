/* compare.h — the verdicts of a compare run (make compare): at each point,
 * mode and regime, every variant's time relative to the reference
 * variant's, from the two rows' samples (the Hodges–Lehmann ratio and its
 * confidence bounds, shift.h), and whether the variant is faster, slower or
 * level with the reference at that confidence.
 *
 * The variants of a compare run took turns on one GPU at each point (build/ab
 * --compare), so drift of clock and power fell on all of them alike and the
 * ratio measures the kernels. A ratio is time / reference time: 0.95 is 5 %
 * faster than the reference. Verdict: `faster` when the upper bound is under
 * 1, `slower` when the lower bound is over 1, else `level`. */
#ifndef ATTN_COMPARE_H
#define ATTN_COMPARE_H

#include "../../common/results_read.h"

#include <stdio.h>

#define COMPARE_CONFIDENCE 0.99 /* each one-sided bound, as the gate's default */

enum compare_verdict { VERDICT_REF, VERDICT_FASTER, VERDICT_LEVEL, VERDICT_SLOWER, VERDICT_NONE };
extern const char *const compare_verdict_names[];

/* One variant's row at a point against the reference's. */
struct compare_ratio {
    const struct result_rec *row, *ref; /* ref NULL: no ok reference row with samples */
    double ratio, lo, hi;               /* time / ref time and its bounds; NaN when none */
    enum compare_verdict verdict;       /* VERDICT_NONE: not compared (why: row's status) */
};

/* The ratio of `row` to `ref` (either may be NULL or not ok) at confidence. */
int compare_ratio_of(const struct result_rec *row, const struct result_rec *ref, double confidence,
                     struct compare_ratio *out);

/* The table of the run in `set` against variant `ref`, at confidence, to f:
 * a heading naming the run, the reference and the bounds, then per point,
 * mode and regime one line per variant (the reference first): median ms,
 * TFLOP/s, the ratio, its bounds and the verdict; a row that is not ok says
 * its status and reason. *slower counts the verdicts `slower`, *failed the
 * rows that are mismatch or error. ATTN_ERR_INPUT when the run holds no row
 * of ref. */
int compare_print(const struct result_set *set, const char *ref, double confidence, FILE *f,
                  size_t *slower, size_t *failed);

#endif

/* shift.h — how much slower one set of timing samples is than another: the
 * Hodges–Lehmann (HL) estimate of the shift between log(cur) and log(base),
 * with the distribution-free confidence bounds that go with the Mann–Whitney
 * U statistic (Moses' method: order statistics of the pairwise differences).
 *
 * Why this estimator for the regression gate:
 *  - distribution-free: no normality is assumed; timing samples are skewed,
 *    heavy-tailed and sometimes bimodal (clock or scheduling states);
 *  - robust: one outlier (a preempted sample) moves the estimate by at most
 *    one rank, not by its size as it would a mean;
 *  - deterministic: no resampling, so the same files always give the same
 *    verdict;
 *  - on log scale the shift is a ratio cur/base, read like the gate's other
 *    numbers (1.03 = 3 % slower).
 *
 * The bounds rest on the location-shift model: cur is distributed as base
 * times the true ratio. They are exact (exact U distribution) for small
 * samples and a normal approximation with continuity correction otherwise;
 * ties (quantized timers) make them approximate. */
#ifndef ATTN_SHIFT_H
#define ATTN_SHIFT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct shift_estimate {
    size_t n_base, n_cur;
    double ratio;  /* exp(HL estimate of median over all pairs of log(cur_j) - log(base_i)) */
    double lo, hi; /* one-sided confidence bounds of that ratio at level `confidence` each:
                      P(true ratio < lo) <= 1-c and P(true ratio > hi) <= 1-c
                      (so [lo, hi] is a two-sided interval at level 2c-1) */
    double confidence;
};

/* Samples must be > 0 and finite. Returns ATTN_OK, or ATTN_ERR_INPUT with a message (via ATTN_FAIL from
   common/errors.h) when a side has fewer than SHIFT_MIN_SAMPLES samples, a sample is not a positive finite
   number, or confidence is not in (0.5, 1). Inputs are not modified. */
#define SHIFT_MIN_SAMPLES 5
int shift_estimate(const double *base, size_t n_base, const double *cur, size_t n_cur,
                   double confidence, struct shift_estimate *out);

/* The standard normal quantile (inverse CDF) for p in (0,1); used for the interval. */
double shift_normal_quantile(double p);

/* ---- The parts of shift_estimate, exposed for the tests. ---- */

/* The k-th smallest (1-based, 1 <= k <= n*m) of the n*m differences
 * b[j] - a[i] (as computed in double), a and b sorted ascending, finite,
 * n, m >= 1. Always one of the differences, exactly. O((n + m) * 64) time,
 * O(1) memory: bisection over the doubles' bit patterns, each step counting
 * the pairs <= t with two pointers. */
double shift_kth_difference(const double *a, size_t n, const double *b, size_t m, uint64_t k);

/* How the rank of the bounds is found. AUTO: EXACT when n_base * n_cur <=
 * SHIFT_EXACT_MAX_PAIRS, else NORMAL. */
enum shift_rank_method { SHIFT_RANK_AUTO, SHIFT_RANK_NORMAL, SHIFT_RANK_EXACT };
#define SHIFT_EXACT_MAX_PAIRS 2500

/* C, the rank of the lower bound among the N = n_base * n_cur sorted
 * differences (lo = d_(C), hi = d_(N-C+1)), for n_base, n_cur >= 1 and
 * confidence in (0.5, 1).
 * With U = #{pairs with d < true shift}, lo > true shift iff U <= C-1, so C is
 * the largest rank with P(U <= C-1) <= 1-c:
 *   NORMAL: C = floor(N/2 - z*sqrt(N*(n_base+n_cur+1)/12) + 1/2), z = Phi^-1(c)
 *           (the + 1/2 is the continuity correction of P(U <= C-1));
 *   EXACT:  from U's null distribution (the counting recurrence), in
 *           O(N^2 / 4) time and O(N * min(n_base, n_cur)) memory.
 * Clamped to 1 <= C <= N; C = 1 means the samples are too few for that
 * confidence and the bounds are the extreme differences.
 * 0 (and ATTN_FAIL's message) only when out of host memory. */
uint64_t shift_bound_rank(size_t n_base, size_t n_cur, double confidence,
                          enum shift_rank_method method);

#ifdef __cplusplus
}
#endif
#endif

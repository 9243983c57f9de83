/* shift.c — the Hodges–Lehmann shift of log timings and its Mann–Whitney
 * (Moses) confidence bounds (shift.h): the k-th smallest pairwise difference
 * of two sorted arrays without materializing the pairs, the rank of the
 * bounds (exact U distribution or its normal approximation) and the normal
 * quantile. */
#include "shift.h"
#include "../../common/attn.h"
#include "../../common/errors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------- quantile */

/* Acklam's rational approximation (relative error 1.15e-9) polished by one
 * Halley step on erfc, which brings it to about machine precision. Only the
 * lower half is computed: 1 - p is exact for p >= 0.5 (Sterbenz), and in the
 * lower half erfc is accurate relative to the tail, so the step keeps its
 * precision far out (p = 1e-300). */
static double lower_quantile(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00};
    double x;
    if (p < 0.02425) {
        double q = sqrt(-2 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else {
        double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    double e = 0.5 * erfc(-x / sqrt(2.0)) - p;
    double u = e * 2.5066282746310002 /* sqrt(2 pi) */ * exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}

double shift_normal_quantile(double p)
{
    if (!(p > 0 && p < 1)) return NAN;
    if (p == 0.5) return 0;
    return p < 0.5 ? lower_quantile(p) : -lower_quantile(1 - p);
}

/* ------------------------------------------------------------ selection */

/* The doubles in the order of their values as unsigned integers: negative
 * numbers flipped whole, positive ones with the sign bit set. Bisection over
 * these keys ends in at most 64 steps on an exact double, whatever the range
 * of the values (bisecting the values themselves may never end on one). */
static uint64_t key_of(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

static double value_of(uint64_t k)
{
    uint64_t u = (k >> 63) ? k & ~(UINT64_C(1) << 63) : ~k;
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Pairs with b[j] - a[i] <= t. The predicate is evaluated on the computed
 * difference itself, the very value selection returns: rounding is monotone,
 * so for each j the i that satisfy it are a suffix of a, and that suffix only
 * shrinks as j grows — two pointers, O(n + m). */
static uint64_t count_le(const double *a, size_t n, const double *b, size_t m, double t)
{
    uint64_t count = 0;
    size_t i = 0;
    for (size_t j = 0; j < m; j++) {
        while (i < n && !(b[j] - a[i] <= t)) i++;
        if (i == n) break; /* no later row has any pair <= t either */
        count += n - i;
    }
    return count;
}

double shift_kth_difference(const double *a, size_t n, const double *b, size_t m, uint64_t k)
{
    /* The smallest t with count_le(t) >= k is the k-th difference: the count
     * changes only at differences. */
    uint64_t lo = key_of(b[0] - a[n - 1]), hi = key_of(b[m - 1] - a[0]);
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (count_le(a, n, b, m, value_of(mid)) >= k)
            hi = mid;
        else
            lo = mid + 1;
    }
    /* t is that difference's value; return the largest difference <= t, the
     * one the bisection ended on, read from the pairs themselves (this also
     * turns a -0 key into the +0 difference). */
    double t = value_of(lo), best = -INFINITY;
    size_t i = 0;
    for (size_t j = 0; j < m; j++) {
        while (i < n && !(b[j] - a[i] <= t)) i++;
        if (i == n) break;
        if (b[j] - a[i] > best) best = b[j] - a[i];
    }
    return best;
}

/* ----------------------------------------------------------------- rank */

/* P(U = u) under the null, for sample sizes n and m: with the largest of
 * the i + j values from the first sample (probability i/(i+j)) it beats all
 * j of the second, so
 *   p[i][j](u) = i/(i+j) p[i-1][j](u-j) + j/(i+j) p[i][j-1](u).
 * Probabilities rather than counts: every term is a positive sum, so the far
 * tail the bound needs keeps full relative precision (the q-binomial product
 * subtracts, and counts overflow). Row i holds p[i][j] for j = 0..jm, at
 * offset i*j*(j-1)/2 + j. Returns the malloc'd p[n][m](0..n*m), or NULL. */
static double *exact_u_distribution(size_t n, size_t m)
{
    size_t im = n > m ? n : m, jm = n > m ? m : n; /* fewer, longer arrays */
    size_t cap = im * jm * (jm + 1) / 2 + jm + 1;
    double *prev = malloc(cap * sizeof *prev), *row = malloc(cap * sizeof *row);
    double *out = malloc((n * m + 1) * sizeof *out);
    if (!prev || !row || !out) {
        free(prev);
        free(row);
        free(out);
        return NULL;
    }
    for (size_t i = 0; i <= im; i++) {
        for (size_t j = 0; j <= jm; j++) {
            double *p = row + i * j * (j - 1) / 2 + j;
            if (i == 0 || j == 0) {
                p[0] = 1;
                continue;
            }
            const double *up = prev + (i - 1) * j * (j - 1) / 2 + j; /* p[i-1][j] */
            const double *left = p - (i * (j - 1) + 1);              /* p[i][j-1] */
            double wi = (double)i / (double)(i + j), wj = (double)j / (double)(i + j);
            for (size_t u = 0; u <= i * j; u++) {
                double v = 0;
                if (u >= j) v += wi * up[u - j];
                if (u <= i * (j - 1)) v += wj * left[u];
                p[u] = v;
            }
        }
        double *t = prev;
        prev = row;
        row = t;
    }
    memcpy(out, prev + im * jm * (jm - 1) / 2 + jm, (n * m + 1) * sizeof *out);
    free(prev);
    free(row);
    return out;
}

uint64_t shift_bound_rank(size_t n_base, size_t n_cur, double confidence,
                          enum shift_rank_method method)
{
    uint64_t N = (uint64_t)n_base * n_cur;
    double alpha = 1 - confidence;
    if (method == SHIFT_RANK_AUTO)
        method = N <= SHIFT_EXACT_MAX_PAIRS ? SHIFT_RANK_EXACT : SHIFT_RANK_NORMAL;
    uint64_t C;
    if (method == SHIFT_RANK_EXACT) {
        double *p = exact_u_distribution(n_base, n_cur);
        if (!p) {
            ATTN_FAIL(ATTN_ERR, "out of host memory");
            return 0;
        }
        /* C - 1 = the largest u with P(U <= u) <= alpha; the slack absorbs
         * rounding in the sum when alpha is exactly a tail probability. */
        double cdf = 0;
        uint64_t u = 0;
        while (u <= N && cdf + p[u] <= alpha * (1 + 1e-12)) cdf += p[u++];
        free(p);
        C = u; /* u values 0..C-1 fit under alpha */
    } else {
        double Nd = (double)N;
        double z = shift_normal_quantile(confidence);
        double sigma = sqrt(Nd * (double)(n_base + n_cur + 1) / 12);
        double c = floor(Nd / 2 - z * sigma + 0.5);
        C = c >= 1 ? (uint64_t)c : 1; /* also when c is NaN (confidence outside (0, 1)) */
    }
    if (C < 1) C = 1;
    if (C > N) C = N;
    return C;
}

/* ------------------------------------------------------------- estimate */

/* 0, or the ATTN_ERR_INPUT that names which side and which sample. */
static int check_side(const char *side, const double *v, size_t n)
{
    if (n < SHIFT_MIN_SAMPLES)
        return ATTN_FAIL(ATTN_ERR_INPUT,
                         "%s has %zu samples; the shift estimate needs at least %d",
                         side, n, SHIFT_MIN_SAMPLES);
    for (size_t i = 0; i < n; i++)
        if (!(v[i] > 0) || !isfinite(v[i]))
            return ATTN_FAIL(ATTN_ERR_INPUT,
                             "%s sample %zu is %g; samples must be positive finite times",
                             side, i + 1, v[i]);
    return ATTN_OK;
}

/* Sorted logs of v in a new array (log first, then sort, so the order is
 * that of the values subtracted). NULL when out of memory. */
static double *sorted_logs(const double *v, size_t n)
{
    double *s = malloc(n * sizeof *s);
    if (!s) return NULL;
    for (size_t i = 0; i < n; i++) s[i] = log(v[i]);
    qsort(s, n, sizeof *s, cmp_double);
    return s;
}

int shift_estimate(const double *base, size_t n_base, const double *cur, size_t n_cur,
                   double confidence, struct shift_estimate *out)
{
    if (!base || !cur || !out) return ATTN_FAIL(ATTN_ERR, "shift_estimate: NULL argument");
    ATTN_TRY(check_side("baseline", base, n_base));
    ATTN_TRY(check_side("candidate", cur, n_cur));
    if (!(confidence > 0.5 && confidence < 1))
        return ATTN_FAIL(ATTN_ERR_INPUT, "confidence %g is not in (0.5, 1)", confidence);
    if (n_cur > UINT64_MAX / 2 / n_base)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%zu x %zu samples are too many pairs", n_base, n_cur);

    double *x = sorted_logs(base, n_base), *y = sorted_logs(cur, n_cur);
    if (!x || !y) {
        free(x);
        free(y);
        return ATTN_FAIL(ATTN_ERR, "out of host memory");
    }
    const uint64_t N = (uint64_t)n_base * n_cur;
    uint64_t C = shift_bound_rank(n_base, n_cur, confidence, SHIFT_RANK_AUTO);
    if (C == 0) {
        free(x);
        free(y);
        return ATTN_ERR; /* out of memory, message set */
    }
    double hl = N % 2 ? shift_kth_difference(x, n_base, y, n_cur, (N + 1) / 2)
                      : 0.5 * (shift_kth_difference(x, n_base, y, n_cur, N / 2) +
                               shift_kth_difference(x, n_base, y, n_cur, N / 2 + 1));
    double dlo = shift_kth_difference(x, n_base, y, n_cur, C);
    double dhi = shift_kth_difference(x, n_base, y, n_cur, N - C + 1);
    free(x);
    free(y);

    out->n_base = n_base;
    out->n_cur = n_cur;
    out->ratio = exp(hl);
    out->lo = exp(dlo);
    out->hi = exp(dhi);
    out->confidence = confidence;
    return ATTN_OK;
}

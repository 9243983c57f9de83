/* stats.c — order statistics, noise and the stop rule (stats.h). */
#include "stats.h"
#include "attn.h"
#include "errors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double stats_quantile(const double *sorted, size_t n, double q)
{
    if (n == 1) return sorted[0];
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    if (lo >= n - 1) return sorted[n - 1];
    double frac = pos - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

int stats_summarize(const double *samples, size_t n, struct sample_stats *out)
{
    if (n == 0) return ATTN_FAIL(ATTN_ERR, "no samples to summarize");
    double *s = malloc(n * sizeof *s);
    if (!s) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    memcpy(s, samples, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += s[i];
    out->n = n;
    out->min = s[0];
    out->max = s[n - 1];
    out->median = stats_quantile(s, n, 0.5);
    out->p10 = stats_quantile(s, n, 0.10);
    out->p25 = stats_quantile(s, n, 0.25);
    out->p75 = stats_quantile(s, n, 0.75);
    out->p90 = stats_quantile(s, n, 0.90);
    out->mean = sum / (double)n;
    out->noise_rel = out->median > 0 ? (out->p75 - out->p25) / out->median : NAN;
    free(s);
    return ATTN_OK;
}

bool stats_keep_warming(const struct stop_rule *r, size_t calls, double elapsed_ms)
{
    if (calls < STATS_WARMUP_MIN_CALLS) return true;
    const double warm_for = r->warm_ms > STATS_WARMUP_MIN_MS ? r->warm_ms : STATS_WARMUP_MIN_MS;
    if (elapsed_ms >= warm_for) return false;
    return r->warm_ms > 0 || calls < STATS_WARMUP_MAX_CALLS;
}

bool stats_should_stop(const struct stop_rule *r, const struct sample_stats *st,
                       double timed_ms, double elapsed_ms, bool *converged)
{
    *converged = false;
    if (st->n >= r->min_samples && timed_ms >= r->min_ms && st->noise_rel <= r->target_noise) {
        *converged = true;
        return true;
    }
    return elapsed_ms >= r->budget_ms || st->n >= r->max_samples;
}

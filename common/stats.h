/* stats.h — statistics of timing samples: order statistics, the noise
 * estimator and the rule that decides when sampling may stop.
 *
 * Noise is the interquartile range over the median, (p75 - p25) / median: a
 * robust relative spread that one preempted sample cannot inflate, unlike
 * stdev/mean. */
#ifndef ATTN_STATS_H
#define ATTN_STATS_H

#include "schema.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sample_stats {
    size_t n;
    double median, min, max, p10, p25, p75, p90, mean;
    double noise_rel; /* (p75 - p25) / median */
};

/* q in [0, 1]; linear interpolation between closest ranks (numpy's default).
 * sorted must be ascending and n >= 1. */
double stats_quantile(const double *sorted, size_t n, double q);
/* Summarizes n >= 1 samples (the input is left unchanged). 0, or ATTN_ERR. */
int stats_summarize(const double *samples, size_t n, struct sample_stats *out);

struct stop_rule {
    size_t min_samples;  /* never stop before this many samples */
    double min_ms;       /* nor before this much timed device time */
    double target_noise; /* stop once noise_rel is at or under this */
    double budget_ms;    /* stop regardless once the row has spent this long */
    size_t max_samples;  /* and never keep more than this */
    double warm_ms;      /* warm up at least this long before the first sample (0: the
                            built-in 25 ms / 200 calls); long enough, every row starts in
                            the board's steady power state (variants/NOTES-flash_hopper.md:
                            the two states in 'keys per tile, idle consumers, and the
                            power cap', 500 ms enough in 'one protocol for every row,
                            heavy-first causal grids') */
    double sustain_s;    /* > 0: the sustained regime — after the warm-up, load the board back
                            to back until its clock and power settle (settle.h), at most this
                            many seconds, and sample under that load; 0: burst */
};

/* The regime of the rows a stop rule samples: sustained with sustain_s. */
static inline enum attn_regime stats_regime(const struct stop_rule *r)
{
    return r->sustain_s > 0 ? REGIME_SUSTAINED : REGIME_BURST;
}

/* Warm-up: at least 3 calls, then more while under max(25 ms, warm_ms) of
 * wall time; the 200-call cap applies only when no warm_ms was asked for. */
#define STATS_WARMUP_MIN_CALLS 3
#define STATS_WARMUP_MIN_MS 25.0
#define STATS_WARMUP_MAX_CALLS 200
bool stats_keep_warming(const struct stop_rule *, size_t calls, double elapsed_ms);

/* True when sampling may stop; *converged says whether it stopped because
 * the noise target was met (false: budget or sample cap). */
bool stats_should_stop(const struct stop_rule *, const struct sample_stats *,
                       double timed_ms, double elapsed_ms, bool *converged);

#ifdef __cplusplus
}
#endif
#endif

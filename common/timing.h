/* timing.h — timing one variant call with CUDA events on the runner's stream.
 *   cold:  the L2 is flushed (a memset over twice its size) before every
 *          sample; only the call is between the events.
 *   hot:   a batch of back-to-back calls between two events; a sample is the
 *          batch's time over its size.
 *   graph: the call's launches captured once into a CUDA graph; a sample is
 *          a batch of back-to-back replays, so host launch gaps vanish.
 * Each mode warms up first (bounded by count and time), then samples until
 * the stop rule (stats.h) says so. */
#ifndef ATTN_TIMING_H
#define ATTN_TIMING_H

#include "attn.h"
#include "stats.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

enum attn_mode { MODE_COLD = 0, MODE_HOT = 1, MODE_GRAPH = 2, MODE_COUNT = 3 };
const char *attn_mode_name(enum attn_mode);
int attn_mode_parse(const char *name, enum attn_mode *out);

struct timed_call {
    const struct attn_variant *variant;
    void *ctx;
    const void *q, *k, *v;
    void *o;
    attn_stream_t stream;
    double extra_ms; /* injected slowdown after each call (timing_slowdown); 0 normally */
};


struct bench_timer; /* events and the L2 flush buffer */

/* With a build made with SLOWDOWN=VARIANT:PCT (ATTN_SLOWDOWN), the fraction
 * of extra work that variant does per timed call (0.05 for 5), else 0. */
double timing_slowdown_fraction(const char *variant);
/* Sets c->extra_ms to the injected fraction of a plain call's median time. */
int timing_calibrate_slowdown(struct bench_timer *, struct timed_call *c);

int bench_timer_create(struct bench_timer **, size_t l2_bytes);
void bench_timer_destroy(struct bench_timer *);

struct timing_result {
    struct sample_stats stats;
    bool converged;
    double warmup_ms; /* wall time spent warming up */
    int calls_per_sample;
    unsigned clock_start_mhz, clock_end_mhz; /* SM clock after warm-up and after the
                                                last sample; 0 without NVML */
};

int time_call(struct bench_timer *, enum attn_mode, const struct timed_call *,
              const struct stop_rule *, struct timing_result *);

/* One extra call in the mode's own way (after an L2 flush for cold, a graph
 * replay for graph), outside any timed sample, under the tracer: what it
 * launched lands in *cap (the caller frees it). ATTN_ERR when tracing is
 * unavailable or fails. */
int trace_call(struct bench_timer *, enum attn_mode, const struct timed_call *,
               struct trace_capture *cap);

#ifdef __cplusplus
}
#endif
#endif

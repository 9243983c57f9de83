/* timing.h — timing one variant call with CUDA events on the runner's stream.
 *   cold:  the L2 is flushed before every sample (enum l2_flush says how);
 *          only the call is between the events.
 *   hot:   a batch of back-to-back calls between two events; a sample is the
 *          batch's time over its size.
 *   graph: the call's launches captured once into a CUDA graph; a sample is
 *          a batch of back-to-back replays, so host launch gaps vanish.
 * Each mode warms up first (bounded by count and time), then samples until
 * the stop rule (stats.h) says so. */
#ifndef ATTN_TIMING_H
#define ATTN_TIMING_H

#include "attn.h"
#include "schema.h"
#include "stats.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* enum attn_mode (MODE_COLD, MODE_HOT, MODE_GRAPH) is in schema.h. */
const char *attn_mode_name(enum attn_mode);
int attn_mode_parse(const char *name, enum attn_mode *out);

/* How cold mode flushes the L2 before a sample, over a buffer of twice its
 * size: FLUSH_MEMSET writes it (cudaMemsetAsync), and its last lines stay
 * in the L2 dirty, so the timed call that displaces them pays their
 * write-back to DRAM (up to the L2's size written during a call that
 * only reads: a short memory-bound call is charged for it); FLUSH_READ
 * reads it with loads the L2 keeps (gpu_flush_l2), which writes back what
 * the last call left dirty before the events and leaves only clean lines.
 * Both displace the call's inputs. */
enum l2_flush { FLUSH_MEMSET, FLUSH_READ, FLUSH_COUNT };
#define L2_FLUSHES_LISTED "memset or read"
const char *l2_flush_name(enum l2_flush);
int l2_flush_parse(const char *name, enum l2_flush *out);

struct timed_call {
    const struct attn_variant *variant;
    void *ctx;
    const void *q, *k, *v;
    void *o;
    attn_stream_t stream;
    /* What one call is (enum attn_pass): the forward (run), the backward
     * alone, or the variant's saving forward and its backward; dout, dq, dk
     * and dv are set for the last two. */
    enum attn_pass pass;
    const void *dout;
    void *dq, *dk, *dv;
};

/* Enqueues one call as c->pass says (the variant's own ops, no graph). */
int timed_call_enqueue(const struct timed_call *c);


struct bench_timer; /* events and the L2 flush buffer */

/* With a build made with SLOWDOWN=VARIANT:PCT (ATTN_SLOWDOWN), the fraction
 * of extra work that variant does per timed call (0.05 for 5), else 0. The
 * work (gpu_busy_cycles after each call, in every mode) is calibrated at the
 * start of each mode, after the warm-up, to that fraction of the call's own
 * time there; graph mode captures it into the graph. */
double timing_slowdown_fraction(const char *variant);

/* CLOCK_MONOTONIC in milliseconds: how long host-side steps take. */
double timing_wall_ms(void);

int bench_timer_create(struct bench_timer **, size_t l2_bytes, enum l2_flush);
void bench_timer_destroy(struct bench_timer *);

struct timing_result {
    struct sample_stats stats;
    bool converged;
    double warmup_ms; /* wall time spent warming up */
    int calls_per_sample;
    unsigned clock_start_mhz, clock_end_mhz; /* SM clock after warm-up and after the
                                                last sample; 0 without NVML */
    /* From NVML, polled during the mode's warm-up (never between timed
     * samples) and read after its last sample */
    double watts;              /* average board power during the warm-up: the energy counter's
                                  rise between the first and last of its steps, over their
                                  time; else the mean of polled power; NaN unknown */
    bool watts_from_counter;   /* which of the two */
    unsigned long long throttle; /* clock event reasons seen in the warm-up or after the last
                                    sample (schema.h) */
    bool throttle_known;
    double temperature_c;      /* at the window's end; NaN unknown */
    /* The sustained regime (stop_rule.sustain_s > 0, or a driver's round
     * robin: worker.c): loaded until settled (settle.h) before the samples;
     * the load's settled clock and power; watts is then the load's power */
    bool sustained, settled;
    double settle_s, settled_mhz, settled_watts; /* NaN: burst or unknown */
};

/* Times one mode with the stop rule: time_start, then one sample at a time
 * until stats_should_stop, then time_finish. */
int time_call(struct bench_timer *, enum attn_mode, const struct timed_call *,
              const struct stop_rule *, struct timing_result *);

/* The same in steps, for a caller that decides itself when to stop (the A/B
 * runner interleaves two builds in blocks). One mode at a time per timer.
 * time_start captures the graph (graph mode), warms up by the rule and sets
 * res->warmup_ms, calls_per_sample and clock_start_mhz. */
int time_start(struct bench_timer *, enum attn_mode, const struct timed_call *,
               const struct stop_rule *, struct timing_result *res);
/* After time_start with rule->sustain_s > 0 the mode's call has run back to
 * back until the SM clock and power settled (settle.h) or sustain_s seconds
 * passed: res->sustained and the settled fields say how it ended.
 * time_load runs the mode's call back to back, untimed, for ms of wall
 * time, and reads the SM clock (MHz, 0 unknown) and board power (W, NaN
 * unknown) after it: a driver's load between blocks (worker.c). */
int time_load(struct bench_timer *, double ms, double *mhz, double *watts);
/* One block: with `rewarm`, one untimed batch first (the GPU may have run
 * other work since the last block), then samples until at least min_samples
 * and min_timed_ms of timed device time. Fails past the sample cap. */
int time_take(struct bench_timer *, size_t min_samples, double min_timed_ms, bool rewarm);
/* The samples taken since time_start, ms per call, in order. */
const double *time_samples(const struct bench_timer *, size_t *n);
/* Summarizes the samples into res->stats, reads clock_end_mhz and releases
 * the mode (res->converged is the caller's); time_abort only releases. */
int time_finish(struct bench_timer *, struct timing_result *res);
void time_abort(struct bench_timer *);

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

/* timing.c — cold, hot and graph timing of one variant call (timing.h). */
#include "timing.h"
#include "clocks.h"
#include "errors.h"
#include "gpu_util.h"
#include "nvtx.h"
#include "settle.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH_TARGET_MS 2.0 /* hot and graph: device time of one batch */
#define BATCH_MAX_CALLS 200  /* keeps a batch's launches within the launch queue */
#define BLOCK_TIMEOUT_MS 50.0
#define SAMPLES_CAP 100000
#define POWER_POLL_MS 50.0  /* NVML's power and clock reasons, at most this often */
#define ENERGY_POLL_MS 1.0  /* the energy counter, at most this often */

/* NVML readings of a mode: polled during its warm-up only (the same calls in
 * the same mode, untimed), and read once after the last sample; never
 * between timed samples, whose gaps they would widen (the first run with
 * these readings polled between samples, and its fused rows' noise was
 * 2.5x the previous run's). The board's energy counter moves in steps
 * (about every 100 ms on the H200), so a window's own rise says little
 * about a short window: the power is the rise between the first and the
 * last step seen during the warm-up, over the time between them (seen
 * within ENERGY_POLL_MS). Power readings and the clock event reasons are
 * polled every POWER_POLL_MS of it; their mean is the power when fewer than
 * two steps were seen. */
struct power_watch {
    double last_poll_ms, last_energy_ms;
    double power_sum;
    int power_n;
    unsigned long long throttle;
    bool throttle_known;
    double e_seen;                 /* the counter's last value; NaN: no counter */
    double e_first, t_first, e_last, t_last;
    int steps;
};

/* A call captured for graph mode: the runner's CUDA graph of run(), or the
 * variant's own (attn_variant.graph: a framework that captures itself). */
struct captured_call {
    cudaGraphExec_t exec;
    bool by_variant;
};

struct bench_timer {
    cudaEvent_t start, stop;
    volatile int *release; /* host-mapped: lets the stream go once a batch is queued */
    void *flush;
    size_t flush_bytes;
    enum l2_flush flush_kind;
    double *samples;
    /* the mode being timed, between time_start and time_finish */
    const struct timed_call *call;
    struct captured_call graph;
    bool flush_each; /* cold: flush L2 before every sample */
    int batch;       /* calls per sample */
    size_t n;        /* samples taken */
    long long extra_cycles; /* the injected slowdown after each call (SLOWDOWN=); 0 normally */
    struct power_watch watch;
    struct settle_watch settle; /* the sustained regime's readings (time_start) */
};

const char *attn_mode_name(enum attn_mode m) { return m < MODE_COUNT ? timing_mode_names[m] : "?"; }

int attn_mode_parse(const char *name, enum attn_mode *out)
{
    for (int m = 0; m < MODE_COUNT; m++)
        if (strcmp(name, timing_mode_names[m]) == 0) {
            *out = (enum attn_mode)m;
            return ATTN_OK;
        }
    return ATTN_FAIL(ATTN_ERR_INPUT, "unknown mode '%s' (%s)", name, TIMING_MODES_LISTED);
}

static const char *const l2_flush_names[FLUSH_COUNT] = {"memset", "read"};

const char *l2_flush_name(enum l2_flush f) { return f < FLUSH_COUNT ? l2_flush_names[f] : "?"; }

int l2_flush_parse(const char *name, enum l2_flush *out)
{
    for (int f = 0; f < FLUSH_COUNT; f++)
        if (strcmp(name, l2_flush_names[f]) == 0) {
            *out = (enum l2_flush)f;
            return ATTN_OK;
        }
    return ATTN_FAIL(ATTN_ERR_INPUT, "unknown L2 flush '%s' (%s)", name, L2_FLUSHES_LISTED);
}

double timing_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int bench_timer_create(struct bench_timer **out, size_t l2_bytes, enum l2_flush flush)
{
    if (flush >= FLUSH_COUNT) return ATTN_FAIL(ATTN_ERR_INPUT, "bench_timer_create: no L2 flush %d", (int)flush);
    struct bench_timer *t = calloc(1, sizeof *t);
    if (!t) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    t->flush_kind = flush;
    t->samples = malloc(SAMPLES_CAP * sizeof *t->samples);
    t->flush_bytes = 2 * (l2_bytes ? l2_bytes : ((size_t)64 << 20));
    int rc = ATTN_OK;
    if (!t->samples) rc = ATTN_FAIL(ATTN_ERR, "out of host memory");
    else if (cudaEventCreate(&t->start) != cudaSuccess || cudaEventCreate(&t->stop) != cudaSuccess)
        rc = ATTN_FAIL(ATTN_ERR, "cudaEventCreate failed");
    else if (cudaHostAlloc((void **)&t->release, sizeof *t->release, cudaHostAllocMapped) != cudaSuccess)
        rc = ATTN_FAIL(ATTN_ERR, "cudaHostAlloc of the release flag failed");
    else if (cudaMalloc(&t->flush, t->flush_bytes) != cudaSuccess)
        rc = ATTN_FAIL(ATTN_ERR_OOM, "no device memory for the %zu-byte L2 flush buffer",
                       t->flush_bytes);
    /* written once, so that FLUSH_READ reads initialised memory */
    else if (cudaMemset(t->flush, 0x5a, t->flush_bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
        rc = ATTN_FAIL(ATTN_ERR, "writing the L2 flush buffer: %s", cudaGetErrorString(cudaGetLastError()));
    if (rc != ATTN_OK) {
        (void)cudaGetLastError();
        bench_timer_destroy(t);
        return rc;
    }
    *out = t;
    return ATTN_OK;
}

void bench_timer_destroy(struct bench_timer *t)
{
    if (!t) return;
    time_abort(t);
    if (t->start) cudaEventDestroy(t->start);
    if (t->stop) cudaEventDestroy(t->stop);
    if (t->flush) cudaFree(t->flush);
    if (t->release) cudaFreeHost((void *)t->release);
    free(t->samples);
    free(t);
}

int timed_call_enqueue(const struct timed_call *c)
{
    if (c->pass == ATTN_PASS_FWD) return c->variant->run(c->ctx, c->q, c->k, c->v, c->o, c->stream);
    const struct attn_backward_ops *b = c->variant->backward;
    if (!b) return ATTN_FAIL(ATTN_ERR, "%s has no backward pass", c->variant->name);
    if (c->pass == ATTN_PASS_FWD_BWD) ATTN_TRY(b->forward(c->ctx, c->q, c->k, c->v, c->o, c->stream));
    return b->backward(c->ctx, c->q, c->k, c->v, c->o, c->dout, c->dq, c->dk, c->dv, c->stream);
}

/* One call of the variant, or (replay) one launch of the graph its
 * framework captured; then the injected slowdown's work, if any. */
static int call_once(const struct bench_timer *t, const struct timed_call *c, bool replay)
{
    if (replay) ATTN_TRY(c->variant->framework->graph(c->ctx, c->q, c->k, c->v, c->o, c->stream, true));
    else ATTN_TRY(timed_call_enqueue(c));
    if (t->extra_cycles > 0) ATTN_TRY(gpu_busy_cycles(t->extra_cycles, c->stream));
    return ATTN_OK;
}

double timing_slowdown_fraction(const char *variant)
{
#ifdef ATTN_SLOWDOWN
    const char *spec = ATTN_SLOWDOWN, *colon = strchr(spec, ':');
    if (colon && (size_t)(colon - spec) == strlen(variant) && !strncmp(spec, variant, strlen(variant)))
        return atof(colon + 1) / 100.0;
#else
    (void)variant;
#endif
    return 0;
}

/* Enqueues `calls` calls (or graph replays: graph not NULL) of the variant. */
static int enqueue(const struct bench_timer *t, const struct timed_call *c,
                   const struct captured_call *graph, int calls)
{
    for (int i = 0; i < calls; i++) {
        if (graph && graph->exec) CUDA_TRY(cudaGraphLaunch(graph->exec, (cudaStream_t)c->stream));
        else ATTN_TRY(call_once(t, c, graph && graph->by_variant));
    }
    return ATTN_OK;
}

/* Enqueues the L2 flush of the timer's kind on stream s. */
static int flush_l2(const struct bench_timer *t, attn_stream_t s)
{
    if (t->flush_kind == FLUSH_READ) return gpu_flush_l2(t->flush, t->flush_bytes, s);
    CUDA_TRY(cudaMemsetAsync(t->flush, (int)(timing_wall_ms()) & 0xff, t->flush_bytes, (cudaStream_t)s));
    return ATTN_OK;
}

/* Device milliseconds of `calls` enqueued calls, the L2 flushed first if
 * asked. The stream is held by a blocking kernel until the whole batch and
 * its stop event are queued, so the first launch's latency is not timed. */
static int timed_batch(struct bench_timer *t, const struct timed_call *c,
                       const struct captured_call *graph, int calls, bool flush, double *ms)
{
    cudaStream_t s = (cudaStream_t)c->stream;
    if (flush) ATTN_TRY(flush_l2(t, c->stream));
    *t->release = 0;
    ATTN_TRY(gpu_block_stream(t->release, BLOCK_TIMEOUT_MS, c->stream));
    int rc = ATTN_OK;
    if (cudaEventRecord(t->start, s) != cudaSuccess)
        rc = ATTN_FAIL(ATTN_ERR, "cudaEventRecord: %s", cudaGetErrorString(cudaGetLastError()));
    if (rc == ATTN_OK) rc = enqueue(t, c, graph, calls);
    if (rc == ATTN_OK && cudaEventRecord(t->stop, s) != cudaSuccess)
        rc = ATTN_FAIL(ATTN_ERR, "cudaEventRecord: %s", cudaGetErrorString(cudaGetLastError()));
    *t->release = 1; /* after the stop event is queued; on failure too: never hold the stream */
    ATTN_TRY(rc);
    CUDA_TRY(cudaEventSynchronize(t->stop));
    float f = 0;
    CUDA_TRY(cudaEventElapsedTime(&f, t->start, t->stop));
    *ms = f;
    return ATTN_OK;
}

static int capture_graph(const struct bench_timer *t, const struct timed_call *c,
                         struct captured_call *out)
{
    memset(out, 0, sizeof *out);
    if (c->variant->framework && c->variant->framework->graph) {
        ATTN_TRY(c->variant->framework->graph(c->ctx, c->q, c->k, c->v, c->o, c->stream, false));
        out->by_variant = true;
        return ATTN_OK;
    }
    cudaGraphExec_t *exec = &out->exec;
    cudaStream_t s = (cudaStream_t)c->stream;
    cudaGraph_t graph = NULL;
    CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    int rc = call_once(t, c, false);
    cudaError_t e = cudaStreamEndCapture(s, &graph);
    if (rc != ATTN_OK) {
        if (graph) cudaGraphDestroy(graph);
        return rc;
    }
    CUDA_TRY(e);
    e = cudaGraphInstantiate(exec, graph, 0);
    cudaGraphDestroy(graph);
    CUDA_TRY(e);
    return ATTN_OK;
}

/* One NVML reading into the window's sums; the reading itself in *c (sm_mhz
 * 0 when NVML cannot say). */
static void watch_read(struct power_watch *w, struct gpu_clocks *c)
{
    if (!clocks_ready() || clocks_read(c) != ATTN_OK) {
        memset(c, 0, sizeof *c);
        c->power_w = c->energy_mj = NAN;
        return;
    }
    w->last_poll_ms = timing_wall_ms();
    if (!isnan(c->power_w)) {
        w->power_sum += c->power_w;
        w->power_n++;
    }
    w->throttle |= c->throttle;
    w->throttle_known |= c->throttle_known;
}

/* The energy counter, when ENERGY_POLL_MS have passed: a step is noted. */
static void watch_energy(struct power_watch *w)
{
    const double now = timing_wall_ms();
    if (isnan(w->e_seen) || now - w->last_energy_ms < ENERGY_POLL_MS) return;
    w->last_energy_ms = now;
    const double e = clocks_energy_mj();
    if (isnan(e) || e == w->e_seen) return;
    if (w->steps++ == 0) w->e_first = e, w->t_first = now;
    else w->e_last = e, w->t_last = now;
    w->e_seen = e;
}

/* The window opens (before the warm-up). */
static void watch_begin(struct power_watch *w)
{
    struct gpu_clocks c;
    memset(w, 0, sizeof *w);
    w->e_seen = clocks_ready() ? clocks_energy_mj() : NAN;
    w->last_energy_ms = timing_wall_ms();
    watch_read(w, &c);
}

/* Between warm-up calls: the counter, and a full reading when the last is
 * POWER_POLL_MS old. */
static void watch_poll(struct power_watch *w)
{
    struct gpu_clocks c;
    if (!clocks_ready()) return;
    watch_energy(w);
    if (timing_wall_ms() - w->last_poll_ms >= POWER_POLL_MS) watch_read(w, &c);
}

/* The SM clock now (after the warm-up), 0 when NVML cannot say. */
static unsigned watch_clock(struct power_watch *w)
{
    struct gpu_clocks c;
    watch_read(w, &c);
    return c.sm_mhz;
}

/* After the last sample: one more reading (the clock, the temperature, the
 * reasons now), and the warm-up's power into res. */
static void watch_end(struct power_watch *w, struct timing_result *res)
{
    struct gpu_clocks c;
    watch_read(w, &c);
    res->clock_end_mhz = c.sm_mhz;
    res->temperature_c = c.sm_mhz && c.temperature_c ? c.temperature_c : NAN;
    res->throttle = w->throttle;
    res->throttle_known = w->throttle_known;
    res->watts_from_counter = w->steps >= 2 && w->t_last > w->t_first && w->e_last > w->e_first;
    if (res->watts_from_counter) res->watts = (w->e_last - w->e_first) / (w->t_last - w->t_first); /* mJ/ms = W */
    else res->watts = w->power_n ? w->power_sum / w->power_n : NAN;
}

/* Median ms of `calls` single calls, each timed alone, as the mode times them. */
static int median_call_ms(struct bench_timer *t, const struct timed_call *c, int calls, double *ms)
{
    double v[32];
    if (calls > 32) calls = 32;
    for (int i = 0; i < calls; i++) ATTN_TRY(timed_batch(t, c, NULL, 1, t->flush_each, &v[i]));
    struct sample_stats st;
    ATTN_TRY(stats_summarize(v, (size_t)calls, &st));
    *ms = st.median;
    return ATTN_OK;
}

/* Sets t->extra_cycles so that a call with the busy kernel takes the injected
 * fraction longer than one without, in the steady state after the warm-up: a
 * first guess from the busy kernel's cycles per ms, then corrections from
 * measured ratios. Each ratio compares a block of plain calls with a block
 * of injected ones, blocks of about an A/B block's length, so that the
 * board's power and clock answer the extra work as they will when measured;
 * each correction is bounded (x0.5 .. x2) so that one noisy ratio cannot
 * throw the injection far off. */
static int calibrate_slowdown(struct bench_timer *t, const struct timed_call *c)
{
    const double frac = timing_slowdown_fraction(c->variant->name);
    const long long probe_cycles = 2000000;
    double plain_ms, busy_ms[5];
    t->extra_cycles = 0;
    ATTN_TRY(median_call_ms(t, c, 15, &plain_ms));
    cudaStream_t s = (cudaStream_t)c->stream;
    for (int i = 0; i < 5; i++) {
        CUDA_TRY(cudaEventRecord(t->start, s));
        ATTN_TRY(gpu_busy_cycles(probe_cycles, c->stream));
        CUDA_TRY(cudaEventRecord(t->stop, s));
        CUDA_TRY(cudaEventSynchronize(t->stop));
        float f = 0;
        CUDA_TRY(cudaEventElapsedTime(&f, t->start, t->stop));
        busy_ms[i] = f;
    }
    struct sample_stats busy;
    ATTN_TRY(stats_summarize(busy_ms, 5, &busy));
    double cycles = frac * plain_ms / busy.median * (double)probe_cycles;
    const double per_block = 25.0 / plain_ms;
    const int calls = per_block < 3 ? 3 : per_block > 32 ? 32 : (int)per_block;
    for (int round = 0; round < 4; round++) {
        double ratio[4];
        for (int k = 0; k < 4; k++) {
            double p, w;
            t->extra_cycles = 0;
            ATTN_TRY(median_call_ms(t, c, calls, &p));
            t->extra_cycles = (long long)cycles;
            ATTN_TRY(median_call_ms(t, c, calls, &w));
            ratio[k] = w / p;
        }
        struct sample_stats st;
        ATTN_TRY(stats_summarize(ratio, 4, &st));
        const double achieved = st.median - 1;
        double factor = achieved > 0 ? frac / achieved : 2;
        factor = factor < 0.5 ? 0.5 : factor > 2 ? 2 : factor;
        cycles *= factor;
    }
    t->extra_cycles = cycles > 1 ? (long long)cycles : 1;
    return ATTN_OK;
}

static int sustain(struct bench_timer *t, const struct timed_call *c, double max_s,
                   struct timing_result *res);

/* The SM clock (MHz, 0 unknown) and board power (W, NaN unknown) now. */
static void board_now(double *mhz, double *watts)
{
    struct gpu_clocks g;
    *mhz = 0;
    *watts = NAN;
    if (clocks_ready() && clocks_read(&g) == ATTN_OK) {
        *mhz = g.sm_mhz;
        *watts = g.power_w;
    }
}

int time_start(struct bench_timer *t, enum attn_mode mode, const struct timed_call *c,
               const struct stop_rule *rule, struct timing_result *res)
{
    memset(res, 0, sizeof *res);
    res->watts = res->temperature_c = NAN;
    res->settle_s = res->settled_mhz = res->settled_watts = NAN;
    time_abort(t);
    const bool inject = timing_slowdown_fraction(c->variant->name) > 0;
    t->extra_cycles = 0;
    /* with an injected slowdown the graph is captured after the calibration
     * that follows the warm-up: it holds the busy kernel */
    if (mode == MODE_GRAPH && !inject) ATTN_TRY(capture_graph(t, c, &t->graph));
    t->call = c;
    t->flush_each = mode == MODE_COLD;
    t->n = 0;
    const double t0 = timing_wall_ms();
    double one_ms = 0, ms;
    size_t warm = 0;
    watch_begin(&t->watch);
    while (stats_keep_warming(rule, warm, timing_wall_ms() - t0)) {
        if (attn_interrupted) return ATTN_FAIL(ATTN_ERR_INTERRUPTED, "interrupted");
        ATTN_TRY(timed_batch(t, c, &t->graph, 1, t->flush_each, &ms));
        watch_poll(&t->watch);
        one_ms = ms; /* the last warm-up call estimates a call's time */
        warm++;
    }
    if (inject) {
        ATTN_TRY(calibrate_slowdown(t, c));
        if (mode == MODE_GRAPH) ATTN_TRY(capture_graph(t, c, &t->graph));
    }
    res->warmup_ms = timing_wall_ms() - t0;
    res->clock_start_mhz = watch_clock(&t->watch);
    t->batch = 1;
    if (mode != MODE_COLD && one_ms > 0) {
        double b = BATCH_TARGET_MS / one_ms;
        t->batch = b < 1 ? 1 : b > BATCH_MAX_CALLS ? BATCH_MAX_CALLS : (int)b;
    }
    res->calls_per_sample = t->batch;
    if (rule->sustain_s > 0) ATTN_TRY(sustain(t, c, rule->sustain_s, res));
    return ATTN_OK;
}

/* The sustained regime (settle.h): the mode's call back to back, untimed,
 * the SM clock and power read every POWER_POLL_MS, until they settle or
 * max_s seconds pass. */
static int sustain(struct bench_timer *t, const struct timed_call *c, double max_s,
                   struct timing_result *res)
{
    settle_begin(&t->settle);
    const double t0 = timing_wall_ms();
    double last_read = -INFINITY, ms;
    struct settle_state st = {0};
    for (;;) {
        if (attn_interrupted) return ATTN_FAIL(ATTN_ERR_INTERRUPTED, "interrupted");
        ATTN_TRY(timed_batch(t, c, &t->graph, t->batch, t->flush_each, &ms));
        const double now = timing_wall_ms();
        if (now - last_read < POWER_POLL_MS) continue;
        last_read = now;
        double mhz, watts;
        board_now(&mhz, &watts);
        settle_add(&t->settle, now, mhz, watts);
        st = settle_check(&t->settle);
        if (st.settled || now - t0 >= max_s * 1000) break;
    }
    res->sustained = true;
    res->settled = st.settled;
    res->settle_s = (timing_wall_ms() - t0) / 1000;
    res->settled_mhz = st.mhz;
    res->settled_watts = st.watts;
    return ATTN_OK;
}

int time_load(struct bench_timer *t, double ms, double *mhz, double *watts)
{
    if (!t->call) return ATTN_FAIL(ATTN_ERR, "time_load outside time_start/time_finish");
    const double t0 = timing_wall_ms();
    double one;
    do {
        if (attn_interrupted) return ATTN_FAIL(ATTN_ERR_INTERRUPTED, "interrupted");
        ATTN_TRY(timed_batch(t, t->call, &t->graph, t->batch, t->flush_each, &one));
    } while (timing_wall_ms() - t0 < ms);
    board_now(mhz, watts);
    return ATTN_OK;
}

int time_take(struct bench_timer *t, size_t min_samples, double min_timed_ms, bool rewarm)
{
    if (!t->call) return ATTN_FAIL(ATTN_ERR, "time_take outside time_start/time_finish");
    double ms, timed = 0;
    if (rewarm) ATTN_TRY(timed_batch(t, t->call, &t->graph, t->batch, t->flush_each, &ms));
    for (size_t taken = 0; taken < min_samples || timed < min_timed_ms; taken++) {
        if (attn_interrupted) return ATTN_FAIL(ATTN_ERR_INTERRUPTED, "interrupted");
        if (t->n == SAMPLES_CAP) return ATTN_FAIL(ATTN_ERR, "more than %d samples", SAMPLES_CAP);
        ATTN_TRY(timed_batch(t, t->call, &t->graph, t->batch, t->flush_each, &ms));
        t->samples[t->n++] = ms / t->batch;
        timed += ms;
    }
    return ATTN_OK;
}

const double *time_samples(const struct bench_timer *t, size_t *n)
{
    *n = t->n;
    return t->samples;
}

int time_finish(struct bench_timer *t, struct timing_result *res)
{
    watch_end(&t->watch, res);
    if (res->sustained && res->settled_watts > 0) res->watts = res->settled_watts; /* the load's, not the warm-up's */
    int rc = stats_summarize(t->samples, t->n, &res->stats);
    time_abort(t);
    return rc;
}

void time_abort(struct bench_timer *t)
{
    if (t->graph.exec) cudaGraphExecDestroy(t->graph.exec);
    memset(&t->graph, 0, sizeof t->graph);
    t->call = NULL;
}

int trace_call(struct bench_timer *t, enum attn_mode mode, const struct timed_call *c,
               struct trace_capture *cap)
{
    cudaStream_t s = (cudaStream_t)c->stream;
    struct captured_call graph = {0};
    if (mode == MODE_GRAPH) ATTN_TRY(capture_graph(t, c, &graph));
    int rc = ATTN_OK;
    /* the flush runs and finishes before the capture starts: it is not the call's */
    if (mode == MODE_COLD && (flush_l2(t, c->stream) != ATTN_OK || cudaStreamSynchronize(s) != cudaSuccess))
        rc = ATTN_FAIL(ATTN_ERR, "flushing L2: %s", cudaGetErrorString(cudaGetLastError()));
    if (rc == ATTN_OK) rc = trace_begin();
    if (rc == ATTN_OK) {
        attn_range_push("traced call");
        int erc = enqueue(t, c, mode == MODE_GRAPH ? &graph : NULL, 1);
        attn_range_pop();
        int trc = trace_end(cap); /* always ends the capture */
        rc = erc != ATTN_OK ? erc : trc;
        if (erc != ATTN_OK) trace_capture_free(cap);
    }
    if (graph.exec) cudaGraphExecDestroy(graph.exec);
    return rc;
}

int time_call(struct bench_timer *t, enum attn_mode mode, const struct timed_call *c,
              const struct stop_rule *rule, struct timing_result *res)
{
    int rc = time_start(t, mode, c, rule, res);
    const double t1 = timing_wall_ms();
    double timed = 0;
    bool converged = false;
    while (rc == ATTN_OK) {
        if ((rc = time_take(t, 1, 0, false)) != ATTN_OK) break;
        size_t n;
        const double *samples = time_samples(t, &n);
        timed += samples[n - 1] * res->calls_per_sample;
        if ((rc = stats_summarize(samples, n, &res->stats)) != ATTN_OK) break;
        if (n == SAMPLES_CAP || stats_should_stop(rule, &res->stats, timed, timing_wall_ms() - t1, &converged))
            break;
    }
    if (rc != ATTN_OK) {
        time_abort(t);
        return rc;
    }
    rc = time_finish(t, res);
    res->converged = converged;
    return rc;
}

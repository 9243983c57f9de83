/* timing.c — cold, hot and graph timing of one variant call (timing.h). */
#include "timing.h"
#include "clocks.h"
#include "errors.h"
#include "gpu_util.h"
#include "nvtx.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH_TARGET_MS 2.0 /* hot and graph: device time of one batch */
#define BATCH_MAX_CALLS 200  /* keeps a batch's launches within the launch queue */
#define BLOCK_TIMEOUT_MS 50.0
#define SAMPLES_CAP 100000

struct bench_timer {
    cudaEvent_t start, stop;
    volatile int *release; /* host-mapped: lets the stream go once a batch is queued */
    void *flush;
    size_t flush_bytes;
    double *samples;
};

static const char *const mode_names[MODE_COUNT] = {"cold", "hot", "graph"};

const char *attn_mode_name(enum attn_mode m) { return m < MODE_COUNT ? mode_names[m] : "?"; }

int attn_mode_parse(const char *name, enum attn_mode *out)
{
    for (int m = 0; m < MODE_COUNT; m++)
        if (strcmp(name, mode_names[m]) == 0) {
            *out = (enum attn_mode)m;
            return ATTN_OK;
        }
    return ATTN_FAIL(ATTN_ERR_INPUT, "unknown mode '%s' (cold, hot, graph)", name);
}

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int bench_timer_create(struct bench_timer **out, size_t l2_bytes)
{
    struct bench_timer *t = calloc(1, sizeof *t);
    if (!t) return ATTN_FAIL(ATTN_ERR, "out of host memory");
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
    if (t->start) cudaEventDestroy(t->start);
    if (t->stop) cudaEventDestroy(t->stop);
    if (t->flush) cudaFree(t->flush);
    if (t->release) cudaFreeHost((void *)t->release);
    free(t->samples);
    free(t);
}

static int call_once(const struct timed_call *c)
{
    ATTN_TRY(c->variant->run(c->ctx, c->q, c->k, c->v, c->o, c->stream));
    if (c->extra_ms > 0) ATTN_TRY(gpu_spin(c->extra_ms, c->stream));
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

/* Enqueues `calls` calls (or graph replays) of the variant. */
static int enqueue(const struct timed_call *c, cudaGraphExec_t graph, int calls)
{
    for (int i = 0; i < calls; i++) {
        if (graph) CUDA_TRY(cudaGraphLaunch(graph, (cudaStream_t)c->stream));
        else ATTN_TRY(call_once(c));
    }
    return ATTN_OK;
}

/* Device milliseconds of `calls` enqueued calls, the L2 flushed first if
 * asked. The stream is held by a blocking kernel until the whole batch and
 * its stop event are queued, so the first launch's latency is not timed. */
static int timed_batch(struct bench_timer *t, const struct timed_call *c, cudaGraphExec_t graph,
                       int calls, bool flush, double *ms)
{
    cudaStream_t s = (cudaStream_t)c->stream;
    if (flush) CUDA_TRY(cudaMemsetAsync(t->flush, (int)(wall_ms()) & 0xff, t->flush_bytes, s));
    *t->release = 0;
    ATTN_TRY(gpu_block_stream(t->release, BLOCK_TIMEOUT_MS, c->stream));
    int rc = ATTN_OK;
    if (cudaEventRecord(t->start, s) != cudaSuccess)
        rc = ATTN_FAIL(ATTN_ERR, "cudaEventRecord: %s", cudaGetErrorString(cudaGetLastError()));
    if (rc == ATTN_OK) rc = enqueue(c, graph, calls);
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

static int capture_graph(const struct timed_call *c, cudaGraphExec_t *exec)
{
    cudaStream_t s = (cudaStream_t)c->stream;
    cudaGraph_t graph = NULL;
    CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    int rc = call_once(c);
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

/* The current SM clock, 0 when NVML cannot say. */
static unsigned sm_clock_now(void)
{
    struct gpu_clocks c;
    return clocks_ready() && clocks_read(&c) == ATTN_OK ? c.sm_mhz : 0;
}

static int run_mode(struct bench_timer *t, enum attn_mode mode, const struct timed_call *c,
                    cudaGraphExec_t graph, const struct stop_rule *rule,
                    struct timing_result *res)
{
    const bool flush = mode == MODE_COLD;
    const double t0 = wall_ms();
    double one_ms = 0, ms;
    size_t warm = 0;
    while (stats_keep_warming(rule, warm, wall_ms() - t0)) {
        if (attn_interrupted) return ATTN_FAIL(ATTN_ERR_INTERRUPTED, "interrupted");
        ATTN_TRY(timed_batch(t, c, graph, 1, flush, &ms));
        one_ms = ms; /* the last warm-up call estimates a call's time */
        warm++;
    }
    res->warmup_ms = wall_ms() - t0;
    res->clock_start_mhz = sm_clock_now();

    int batch = 1;
    if (mode != MODE_COLD && one_ms > 0) {
        double b = BATCH_TARGET_MS / one_ms;
        batch = b < 1 ? 1 : b > BATCH_MAX_CALLS ? BATCH_MAX_CALLS : (int)b;
    }
    res->calls_per_sample = batch;

    const double t1 = wall_ms();
    double timed = 0;
    size_t n = 0;
    for (;;) {
        if (attn_interrupted) return ATTN_FAIL(ATTN_ERR_INTERRUPTED, "interrupted");
        ATTN_TRY(timed_batch(t, c, graph, batch, flush, &ms));
        t->samples[n++] = ms / batch;
        timed += ms;
        ATTN_TRY(stats_summarize(t->samples, n, &res->stats));
        if (n == SAMPLES_CAP ||
            stats_should_stop(rule, &res->stats, timed, wall_ms() - t1, &res->converged)) {
            res->clock_end_mhz = sm_clock_now();
            return ATTN_OK;
        }
    }
}

int timing_calibrate_slowdown(struct bench_timer *t, struct timed_call *c)
{
    c->extra_ms = 0;
    const double frac = timing_slowdown_fraction(c->variant->name);
    if (frac <= 0) return ATTN_OK;
    double ms[5];
    for (int i = 0; i < 5; i++) ATTN_TRY(timed_batch(t, c, NULL, 1, false, &ms[i]));
    struct sample_stats st;
    ATTN_TRY(stats_summarize(ms, 5, &st));
    c->extra_ms = frac * st.median;
    return ATTN_OK;
}

int trace_call(struct bench_timer *t, enum attn_mode mode, const struct timed_call *c,
               struct trace_capture *cap)
{
    cudaStream_t s = (cudaStream_t)c->stream;
    cudaGraphExec_t graph = NULL;
    if (mode == MODE_GRAPH) ATTN_TRY(capture_graph(c, &graph));
    int rc = ATTN_OK;
    /* the flush runs and finishes before the capture starts: it is not the call's */
    if (mode == MODE_COLD && (cudaMemsetAsync(t->flush, 0, t->flush_bytes, s) != cudaSuccess ||
                              cudaStreamSynchronize(s) != cudaSuccess))
        rc = ATTN_FAIL(ATTN_ERR, "flushing L2: %s", cudaGetErrorString(cudaGetLastError()));
    if (rc == ATTN_OK) rc = trace_begin();
    if (rc == ATTN_OK) {
        attn_range_push("traced call");
        int erc = enqueue(c, graph, 1);
        attn_range_pop();
        int trc = trace_end(cap); /* always ends the capture */
        rc = erc != ATTN_OK ? erc : trc;
        if (erc != ATTN_OK) trace_capture_free(cap);
    }
    if (graph) cudaGraphExecDestroy(graph);
    return rc;
}

int time_call(struct bench_timer *t, enum attn_mode mode, const struct timed_call *c,
              const struct stop_rule *rule, struct timing_result *res)
{
    memset(res, 0, sizeof *res);
    cudaGraphExec_t graph = NULL;
    if (mode == MODE_GRAPH) ATTN_TRY(capture_graph(c, &graph));
    int rc = run_mode(t, mode, c, graph, rule, res);
    if (graph) cudaGraphExecDestroy(graph);
    return rc;
}

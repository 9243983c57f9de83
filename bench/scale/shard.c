/* shard.c — splitting a sweep into balanced shards (shard.h). */
#include "shard.h"
#include "../../common/errors.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What the model assumes of a GPU: rates in the H200's range; only the
 * rows' ratios matter, so another card balances as well. */
#define MODEL_TFLOPS 400.0         /* a fused kernel's sustained rate */
#define MODEL_GBPS 3000.0          /* memory traffic */
#define MODEL_CALL_MS 0.01         /* a launch's fixed cost */
#define MODEL_FLUSH_MS 0.05        /* cold mode's L2 flush and sync, per sample */
#define MODEL_BATCH_MS 2.0         /* hot and graph: device time of one sample */
#define MODEL_ROW_MS 20.0          /* a row's own overhead: traced call, writing it */
#define MODEL_SAMPLE_HOST_MS 0.3   /* a sample's host side: events, synchronisation */
/* Cold samples of calls shorter than this rarely reach the noise target on
 * the H200 (the flush's and the host's jitter are a large share of them):
 * such rows run to the sample cap or the budget (the committed default run:
 * 7 of 25 flash_hopper cold rows, all under 0.26 ms). */
#define MODEL_COLD_NOISY_MS 0.3
#define MODEL_DEFAULT_WARM_MS 25.0 /* attnbench's warm-up without --warm-ms */

int shard_parse(const char *text, int *index, int *count)
{
    char *end;
    errno = 0;
    long i = strtol(text, &end, 10);
    if (errno || end == text || *end != '/')
        return ATTN_FAIL(ATTN_ERR_INPUT, "--shard: '%s' is not I/N (e.g. 2/8)", text);
    const char *n_text = end + 1;
    long n = strtol(n_text, &end, 10);
    if (errno || end == n_text || *end)
        return ATTN_FAIL(ATTN_ERR_INPUT, "--shard: '%s' is not I/N (e.g. 2/8)", text);
    if (n < 1 || n > SHARD_MAX || i < 1 || i > n)
        return ATTN_FAIL(ATTN_ERR_INPUT, "--shard: '%s' needs 1 <= I <= N <= %d", text, SHARD_MAX);
    *index = (int)i;
    *count = (int)n;
    return ATTN_OK;
}

/* One call's predicted milliseconds. */
static double call_ms(const struct attn_problem *p, const struct attn_variant *v)
{
    double bytes = attn_bytes(p);
    if (!v->fused) /* the eager steps write and read the fp32 scores about three times */
        bytes += 3.0 * 2 * 4.0 * (double)p->batch * p->heads * (double)p->seq_len * p->seq_len;
    const double flop_ms = attn_flops(p) / (MODEL_TFLOPS * 1e9);
    const double byte_ms = bytes / (MODEL_GBPS * 1e6);
    return (flop_ms > byte_ms ? flop_ms : byte_ms) + MODEL_CALL_MS;
}

double shard_row_cost_ms(const struct attn_problem *p, const struct attn_variant *v, enum attn_mode mode,
                         const struct stop_rule *rule)
{
    const double call = call_ms(p, v);
    const double sample = mode == MODE_COLD ? call + MODEL_FLUSH_MS
                                            : (call > MODEL_BATCH_MS ? call : MODEL_BATCH_MS);
    /* the stop rule's minimums: min_samples, and min_ms of timed time */
    double n = (double)rule->min_samples;
    if (n * sample < rule->min_ms) n = rule->min_ms / sample;
    if (mode == MODE_COLD && call < MODEL_COLD_NOISY_MS) n = (double)rule->max_samples;
    double timed = n * (sample + MODEL_SAMPLE_HOST_MS);
    if (timed > rule->budget_ms) timed = rule->budget_ms;
    const double warm = rule->warm_ms > 0 ? rule->warm_ms : MODEL_DEFAULT_WARM_MS;
    /* a sustained row's load: settled in about two windows, at most sustain_s */
    const double load = rule->sustain_s > 0 ? fmin(rule->sustain_s * 1000, 2500) : 0;
    return warm + load + timed + MODEL_ROW_MS + call;
}

/* A unit: a point × variant, its cost, its place in the sweep. */
struct unit {
    double cost;
    size_t index;
};

static int by_cost_desc(const void *a, const void *b)
{
    const struct unit *x = a, *y = b;
    if (x->cost != y->cost) return x->cost < y->cost ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index; /* the sweep's order breaks ties */
}

/* heap order: the lower load first, the lower shard on a tie */
static bool lighter(const double *loads, int a, int b)
{
    return loads[a] < loads[b] || (loads[a] == loads[b] && a < b);
}

/* The root's load grew: moves it down to its place. */
static void sift_down(int *heap, int n, const double *loads)
{
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && lighter(loads, heap[l], heap[m])) m = l;
        if (r < n && lighter(loads, heap[r], heap[m])) m = r;
        if (m == i) return;
        int t = heap[i];
        heap[i] = heap[m];
        heap[m] = t;
        i = m;
    }
}

int shard_plan(const struct options *o, int count, int **assign_out, double *loads_out)
{
    if (count < 1 || count > SHARD_MAX) return ATTN_FAIL(ATTN_ERR_INPUT, "shard count %d out of range", count);
    const size_t nv = (size_t)o->nvariants, nunits = o->grid.count * nv;
    struct unit *units = malloc((nunits ? nunits : 1) * sizeof *units);
    int *assign = malloc((nunits ? nunits : 1) * sizeof *assign);
    double *loads = calloc((size_t)count, sizeof *loads);
    if (!units || !assign || !loads) {
        free(units);
        free(assign);
        free(loads);
        return ATTN_FAIL(ATTN_ERR, "out of host memory for a plan of %zu units", nunits);
    }
    for (size_t u = 0; u < nunits; u++) {
        const struct attn_problem *p = &o->grid.points[u / nv];
        units[u].index = u;
        units[u].cost = 0;
        for (int m = 0; m < o->nmodes; m++)
            units[u].cost += shard_row_cost_ms(p, o->variants[u % nv], o->modes[m], &o->rule);
    }
    /* longest first, each to the least loaded shard (the lowest on a tie),
     * found through a min-heap of shards: O(units · log N) */
    qsort(units, nunits, sizeof *units, by_cost_desc);
    int heap[SHARD_MAX];
    for (int s = 0; s < count; s++) heap[s] = s; /* all loads 0: in index order, a heap */
    for (size_t k = 0; k < nunits; k++) {
        const int best = heap[0];
        loads[best] += units[k].cost;
        assign[units[k].index] = best + 1;
        sift_down(heap, count, loads);
    }
    if (loads_out) memcpy(loads_out, loads, (size_t)count * sizeof *loads);
    free(units);
    free(loads);
    *assign_out = assign;
    return ATTN_OK;
}

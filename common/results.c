/* results.c — formatting result rows as CSV lines (results.h). The column
 * list below is the schema: header and rows are both written from it. */
#include "results.h"
#include "errors.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const columns[] = {
    "run_id", "timestamp", "git_rev", "gpu",
    "variant", "dtype", "batch", "heads", "seq_len", "head_dim", "causal", "mode",
    "status", "reason",
    "samples", "ms_median", "ms_min", "ms_p10", "ms_p90", "ms_mean", "noise_rel", "converged",
    "calls_per_sample", "tflops", "gbps", "pct_peak_tflops", "pct_peak_gbps", "extra_mem_mib",
    "max_abs_err", "rel_err", "ref",
    "kernels_per_call", "memcpy_per_call", "memset_per_call", "gpu_busy_ms", "launch_gap_ms",
    "sm_clock_start_mhz", "sm_clock_end_mhz", "clock_low",
    "impl", "ab_run",
};
#define NCOLUMNS ((int)(sizeof columns / sizeof columns[0]))

int results_column_count(void) { return NCOLUMNS; }

const char *results_column_name(int i) { return i >= 0 && i < NCOLUMNS ? columns[i] : NULL; }

void results_row_init(struct result_row *r)
{
    memset(r, 0, sizeof *r);
    r->extra_mem_mib = r->max_abs_err = r->rel_err = NAN;
    r->clock_low = -1;
}

void results_set_reason(struct result_row *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof r->reason, fmt, ap);
    va_end(ap);
    for (char *c = r->reason; *c; c++)
        if ((unsigned char)*c < 0x20) *c = ' ';
}

void results_header(struct csv_line *l)
{
    csv_line_init(l);
    for (int i = 0; i < NCOLUMNS; i++) csv_add_str(l, columns[i]);
    csv_line_end(l);
}

static void add_opt_int(struct csv_line *l, long long v)
{
    if (v < 0) csv_add_str(l, "");
    else csv_add_int(l, v);
}

/* The row's key, in the order both files give it. */
static void add_key(struct csv_line *l, const struct result_row *r)
{
    const struct attn_problem *p = &r->problem;
    csv_add_str(l, r->variant);
    csv_add_str(l, attn_dtype_name(p->dtype));
    csv_add_int(l, p->batch);
    csv_add_int(l, p->heads);
    csv_add_int(l, p->seq_len);
    csv_add_int(l, p->head_dim);
    csv_add_int(l, p->causal);
    csv_add_str(l, r->mode);
}

int results_format(const struct result_row *r, struct csv_line *l)
{
    const struct attn_problem *p = &r->problem;
    const struct sample_stats *s = &r->stats;
    const double nan = NAN;
    csv_line_init(l);
    csv_add_str(l, r->run_id);
    csv_add_str(l, r->timestamp);
    csv_add_str(l, r->git_rev);
    csv_add_str(l, r->gpu);
    add_key(l, r);
    csv_add_str(l, r->status);
    csv_add_str(l, r->reason);
    add_opt_int(l, r->timed ? (long long)s->n : -1);
    csv_add_num(l, r->timed ? s->median : nan, 6);
    csv_add_num(l, r->timed ? s->min : nan, 6);
    csv_add_num(l, r->timed ? s->p10 : nan, 6);
    csv_add_num(l, r->timed ? s->p90 : nan, 6);
    csv_add_num(l, r->timed ? s->mean : nan, 6);
    csv_add_num(l, r->timed ? s->noise_rel : nan, 4);
    add_opt_int(l, r->timed ? r->converged : -1);
    add_opt_int(l, r->timed ? r->calls_per_sample : -1);
    const double tflops = r->timed ? attn_flops(p) / (s->median * 1e-3) / 1e12 : nan;
    const double gbps = r->timed ? attn_bytes(p) / (s->median * 1e-3) / 1e9 : nan;
    csv_add_num(l, tflops, 5);
    csv_add_num(l, gbps, 5);
    csv_add_num(l, r->peaks ? 100.0 * tflops / r->peaks->gemm_tflops : nan, 4);
    csv_add_num(l, r->peaks ? 100.0 * gbps / r->peaks->copy_gbps : nan, 4);
    csv_add_num(l, r->extra_mem_mib, 6);
    csv_add_num(l, r->max_abs_err, 4);
    csv_add_num(l, r->rel_err, 4);
    csv_add_str(l, r->ref);
    csv_add_num(l, r->traced ? r->kernels_per_call : nan, 6);
    csv_add_num(l, r->traced ? r->memcpy_per_call : nan, 6);
    csv_add_num(l, r->traced ? r->memset_per_call : nan, 6);
    csv_add_num(l, r->traced ? r->gpu_busy_ms : nan, 6);
    csv_add_num(l, r->traced ? r->launch_gap_ms : nan, 4);
    add_opt_int(l, r->clock_start_mhz ? (long long)r->clock_start_mhz : -1);
    add_opt_int(l, r->clock_end_mhz ? (long long)r->clock_end_mhz : -1);
    add_opt_int(l, r->clock_low);
    csv_add_str(l, r->impl);
    csv_add_str(l, r->ab_run);
    return csv_line_end(l);
}

static const char *const sample_columns[] = {"variant", "dtype", "batch", "heads", "seq_len",
                                             "head_dim", "causal", "mode", "sample", "ms"};

void results_samples_header(struct csv_line *l)
{
    csv_line_init(l);
    for (size_t i = 0; i < sizeof sample_columns / sizeof sample_columns[0]; i++)
        csv_add_str(l, sample_columns[i]);
    csv_line_end(l);
}

int results_samples_append(int fd, const struct result_row *r)
{
    char key[CSV_LINE_MAX];
    struct csv_line l;
    csv_line_init(&l);
    add_key(&l, r);
    if (l.overflow) return ATTN_FAIL(ATTN_ERR, "samples key longer than %d bytes", CSV_LINE_MAX);
    snprintf(key, sizeof key, "%s", l.text);
    const size_t per_line = l.len + 48;
    char *buf = malloc(r->nsample_ms * per_line + 1);
    if (!buf) return ATTN_FAIL(ATTN_ERR, "out of host memory for %zu samples", r->nsample_ms);
    size_t len = 0;
    for (size_t i = 0; i < r->nsample_ms; i++)
        len += (size_t)snprintf(buf + len, per_line + 1, "%s,%zu,%.7g\n", key, i, r->sample_ms[i]);
    int rc = csv_write_all(fd, buf, len);
    free(buf);
    return rc;
}

int results_samples_path(const char *csv_path, char *buf, size_t len)
{
    size_t n = strlen(csv_path);
    if (n < 4 || strcmp(csv_path + n - 4, ".csv") != 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "'%s' does not end in .csv", csv_path);
    if ((size_t)snprintf(buf, len, "%.*s.samples.csv", (int)(n - 4), csv_path) >= len)
        return ATTN_FAIL(ATTN_ERR_INPUT, "path too long: '%s'", csv_path);
    return ATTN_OK;
}

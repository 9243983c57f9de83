/* results.c — formatting result rows as CSV lines (results.h). The column
 * list below is the schema: header and rows are both written from it. */
#include "results.h"
#include "errors.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
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
    "impl",
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
    csv_add_str(l, r->variant);
    csv_add_str(l, attn_dtype_name(p->dtype));
    csv_add_int(l, p->batch);
    csv_add_int(l, p->heads);
    csv_add_int(l, p->seq_len);
    csv_add_int(l, p->head_dim);
    csv_add_int(l, p->causal);
    csv_add_str(l, r->mode);
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
    return csv_line_end(l);
}

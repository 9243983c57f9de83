/* attnbench.c — the runner: for every grid point × variant × timing mode,
 * supports → allocate → validate → time → one CSV row. Rows are appended as
 * they finish, so an interrupted run keeps everything it measured; a point a
 * variant cannot run becomes a skipped/oom/error row and the sweep goes on.
 * Usage: attnbench --help. */
#include "options.h"
#include "../common/clocks.h"
#include "../common/csv.h"
#include "../common/device.h"
#include "../common/env.h"
#include "../common/errors.h"
#include "../common/gpu_util.h"
#include "../common/nvtx.h"
#include "../common/peak.h"
#include "../common/reference.h"
#include "../common/registry.h"
#include "../common/results.h"
#include "../common/timing.h"
#include "../common/trace.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Points whose float64 CPU reference costs at most this many FLOPs are checked
 * on the CPU; larger ones against the float32 GPU reference. */
#define CPU_REFERENCE_MAX_FLOPS 3e8
#define MEMORY_MARGIN ((size_t)256 << 20) /* left free for cuBLAS and the driver */
#define MIB (1024.0 * 1024.0)

struct runner {
    const struct options *opt;
    struct device_info dev;
    char gpu[64], run_id[64], csv_path[1200];
    int csv_fd;
    struct bench_timer *timer;
    attn_stream_t stream;
    size_t rows_done, rows_total, rows_failed;
    struct peaks peaks;
    bool have_peaks;
    unsigned ref_clock_mhz; /* the run's first busy SM clock reading, 0 unknown */
    bool tracing;           /* a traced call per row */
    FILE *ops_txt;          /* DIR/ops.txt with --trace */
};

/* The tensors of one grid point, shared by every variant run on it. */
struct point_data {
    void *q, *k, *v, *o;
    double *ref;        /* reference output, host; computed on first need */
    uint16_t *out;      /* a variant's output copied back, host */
    const char *ref_kind; /* NULL until the reference is computed */
};

static void on_signal(int sig)
{
    if (attn_interrupted) _exit(128 + sig); /* a second ^C: stop now; rows are whole */
    attn_interrupted = 1;
}

static void iso_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int mkdir_p(const char *path)
{
    char buf[1024];
    if (strlen(path) >= sizeof buf) return ATTN_FAIL(ATTN_ERR_INPUT, "path too long: '%s'", path);
    strcpy(buf, path);
    for (char *s = buf + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create directory '%s': %s", buf,
                                 strerror(errno));
            *s = c;
            if (!c) return ATTN_OK;
        }
    }
}

static int open_results(struct runner *r, int argc, char **argv)
{
    char dir[1024], stamp[32], env_path[1100];
    if (r->opt->out_dir) snprintf(dir, sizeof dir, "%s", r->opt->out_dir);
    else snprintf(dir, sizeof dir, "results/%s", r->gpu);
    ATTN_TRY(mkdir_p(dir));
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    struct csv_line header;
    results_header(&header);
    for (int attempt = 1; attempt < 100; attempt++) {
        if (attempt == 1) snprintf(r->run_id, sizeof r->run_id, "%s", stamp);
        else snprintf(r->run_id, sizeof r->run_id, "%s-%d", stamp, attempt);
        snprintf(r->csv_path, sizeof r->csv_path, "%s/%s.csv", dir, r->run_id);
        if (access(r->csv_path, F_OK) == 0) continue;
        ATTN_TRY(csv_create(r->csv_path, &header, &r->csv_fd));
        char when[32];
        iso_now(when, sizeof when);
        snprintf(env_path, sizeof env_path, "%s/%s.env", dir, r->run_id);
        return env_write(env_path, &r->dev, r->have_peaks ? &r->peaks : NULL, r->run_id, when,
                         argc, argv);
    }
    return ATTN_FAIL(ATTN_ERR_INPUT, "no free run id in '%s'", dir);
}

/* Writes one row and prints its progress line. */
static int emit(struct runner *r, struct result_row *row)
{
    char when[32], label[96];
    iso_now(when, sizeof when);
    row->run_id = r->run_id;
    row->timestamp = when;
    row->git_rev = env_git_rev();
    row->gpu = r->gpu;
    row->peaks = r->have_peaks ? &r->peaks : NULL;
    if (row->clock_start_mhz && !r->ref_clock_mhz) r->ref_clock_mhz = row->clock_start_mhz;
    if (row->clock_start_mhz && row->clock_end_mhz && r->ref_clock_mhz) {
        unsigned lowest = row->clock_start_mhz < row->clock_end_mhz ? row->clock_start_mhz
                                                                    : row->clock_end_mhz;
        row->clock_low = lowest < 0.9 * r->ref_clock_mhz;
    }
    struct csv_line line;
    ATTN_TRY(results_format(row, &line));
    ATTN_TRY(csv_append(r->csv_fd, &line));
    r->rows_done++;
    bool failed = !strcmp(row->status, "mismatch") || !strcmp(row->status, "error");
    r->rows_failed += failed;
    if (r->opt->quiet) return ATTN_OK;
    grid_point_label(&row->problem, label, sizeof label);
    fprintf(stderr, "[%zu/%zu] %s %s %s", r->rows_done, r->rows_total, row->variant, label,
            row->mode);
    if (row->timed) {
        double ms = row->stats.median;
        fprintf(stderr, "  %.4g ms  %.0f TFLOP/s%s%s\n", ms,
                attn_flops(&row->problem) / (ms * 1e-3) / 1e12, row->converged ? "" : "  (noisy)",
                row->clock_low == 1 ? "  (clock low)" : "");
    } else {
        fprintf(stderr, "  %s: %s\n", row->status, row->reason);
    }
    return ATTN_OK;
}

/* One row per mode with the same status and reason (nothing was timed). */
static int emit_untimed(struct runner *r, const struct attn_variant *v,
                        const struct attn_problem *p, const char *status, const char *reason,
                        const struct result_row *partial)
{
    for (int m = 0; m < r->opt->nmodes; m++) {
        struct result_row row;
        if (partial) row = *partial;
        else results_row_init(&row);
        row.variant = v->name;
        row.problem = *p;
        row.mode = attn_mode_name(r->opt->modes[m]);
        row.status = status;
        row.timed = false;
        results_set_reason(&row, "%s", reason);
        ATTN_TRY(emit(r, &row));
    }
    return ATTN_OK;
}

static const char *status_of(int rc) { return rc == ATTN_ERR_OOM ? "oom" : "error"; }

static void free_point(struct point_data *d)
{
    cudaFree(d->q);
    cudaFree(d->k);
    cudaFree(d->v);
    cudaFree(d->o);
    free(d->ref);
    free(d->out);
    memset(d, 0, sizeof *d);
}

static bool use_cpu_reference(const struct attn_problem *p)
{
    struct attn_problem full = *p;
    full.causal = false;
    return attn_flops(&full) <= CPU_REFERENCE_MAX_FLOPS;
}

/* Allocates Q, K, V, O and fills the inputs with fresh random values. */
static int prepare_point(struct runner *r, const struct attn_problem *p, uint64_t seed,
                         struct point_data *d)
{
    const size_t n = attn_tensor_elems(p), bytes = n * attn_dtype_bytes(p->dtype);
    size_t free_b = 0, total_b = 0;
    CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    if (4 * bytes + MEMORY_MARGIN > free_b)
        return ATTN_FAIL(ATTN_ERR_OOM, "Q, K, V, O need %.0f MiB, %.0f MiB free",
                         4 * bytes / MIB, free_b / MIB);
    CUDA_TRY(cudaMalloc(&d->q, bytes));
    CUDA_TRY(cudaMalloc(&d->k, bytes));
    CUDA_TRY(cudaMalloc(&d->v, bytes));
    CUDA_TRY(cudaMalloc(&d->o, bytes));
    d->ref = malloc(n * sizeof *d->ref);
    d->out = malloc(bytes);
    if (!d->ref || !d->out) return ATTN_FAIL(ATTN_ERR, "out of host memory for %zu outputs", n);
    ATTN_TRY(gpu_fill_random(d->q, n, p->dtype, seed * 3 + 0, r->stream));
    ATTN_TRY(gpu_fill_random(d->k, n, p->dtype, seed * 3 + 1, r->stream));
    ATTN_TRY(gpu_fill_random(d->v, n, p->dtype, seed * 3 + 2, r->stream));
    return ATTN_OK;
}

/* The reference output of the point, computed once, when the first variant
 * that runs needs it: on the CPU in float64 for small points, else on the GPU
 * in float32. */
static int ensure_reference(struct runner *r, const struct attn_problem *p, struct point_data *d)
{
    if (d->ref_kind) return ATTN_OK;
    const size_t n = attn_tensor_elems(p), bytes = n * attn_dtype_bytes(p->dtype);
    if (use_cpu_reference(p)) {
        uint16_t *hq = malloc(3 * bytes);
        if (!hq) return ATTN_FAIL(ATTN_ERR, "out of host memory for the inputs");
        uint16_t *hk = hq + n, *hv = hq + 2 * n;
        int rc = ATTN_OK;
        if (cudaMemcpyAsync(hq, d->q, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)r->stream) ||
            cudaMemcpyAsync(hk, d->k, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)r->stream) ||
            cudaMemcpyAsync(hv, d->v, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)r->stream) ||
            cudaStreamSynchronize((cudaStream_t)r->stream))
            rc = ATTN_FAIL(ATTN_ERR, "copying inputs to the host: %s",
                           cudaGetErrorString(cudaGetLastError()));
        if (rc == ATTN_OK) rc = attn_reference_f64(p, hq, hk, hv, d->ref);
        free(hq);
        if (rc == ATTN_OK) d->ref_kind = "cpu_f64";
        return rc;
    }
    float *dref = NULL, *href = malloc(n * sizeof *href);
    if (!href) return ATTN_FAIL(ATTN_ERR, "out of host memory for the reference");
    int rc = ATTN_OK;
    if (cudaMalloc((void **)&dref, n * sizeof *dref) != cudaSuccess)
        rc = ATTN_FAIL(ATTN_ERR_OOM, "no device memory for the float32 reference");
    if (rc == ATTN_OK) rc = gpu_reference_f32(p, d->q, d->k, d->v, dref, r->stream);
    if (rc == ATTN_OK &&
        (cudaMemcpyAsync(href, dref, n * sizeof *dref, cudaMemcpyDeviceToHost,
                         (cudaStream_t)r->stream) != cudaSuccess ||
         cudaStreamSynchronize((cudaStream_t)r->stream) != cudaSuccess))
        rc = ATTN_FAIL(ATTN_ERR, "GPU reference: %s", cudaGetErrorString(cudaGetLastError()));
    for (size_t i = 0; rc == ATTN_OK && i < n; i++) d->ref[i] = href[i];
    cudaFree(dref);
    free(href);
    if (rc == ATTN_OK) d->ref_kind = "gpu_f32";
    return rc;
}

/* Poisons O, runs the variant once and compares with the reference. */
static int validate(struct runner *r, const struct attn_variant *v, void *ctx,
                    const struct attn_problem *p, struct point_data *d,
                    struct attn_comparison *cmp)
{
    const size_t n = attn_tensor_elems(p), bytes = n * attn_dtype_bytes(p->dtype);
    cudaStream_t s = (cudaStream_t)r->stream;
    ATTN_TRY(gpu_poison(d->o, bytes, r->stream));
    ATTN_TRY(v->run(ctx, d->q, d->k, d->v, d->o, r->stream));
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaStreamSynchronize(s));
    CUDA_TRY(cudaMemcpy(d->out, d->o, bytes, cudaMemcpyDeviceToHost));
    *cmp = attn_compare(d->ref, d->out, n, p->dtype, attn_tolerance_for(p->dtype));
    return ATTN_OK;
}

/* The row's traced call: op counts, busy time and launch gap into the row;
 * with --trace, the capture also goes to DIR/VARIANT_POINT_MODE.json and its
 * op sequence to DIR/ops.txt. */
static int trace_row(struct runner *r, enum attn_mode mode, const struct timed_call *call,
                     struct result_row *row)
{
    struct trace_capture cap = {0};
    attn_range_push("trace");
    int rc = trace_call(r->timer, mode, call, &cap);
    attn_range_pop();
    if (rc != ATTN_OK) return rc;
    struct trace_summary sum;
    trace_summarize(&cap, 1, &sum);
    row->traced = true;
    row->kernels_per_call = sum.kernels_per_call;
    row->memcpy_per_call = sum.memcpy_per_call;
    row->memset_per_call = sum.memset_per_call;
    row->gpu_busy_ms = sum.busy_ms_per_call;
    row->launch_gap_ms = sum.span_ms_per_call - sum.busy_ms_per_call;
    if (r->opt->trace_dir) {
        char label[96], file[160], path[1200], ops[1024];
        const struct attn_problem *p = &row->problem;
        snprintf(file, sizeof file, "%s_B%d_H%d_S%d_D%d_%s_%s_%s.json", row->variant, p->batch,
                 p->heads, p->seq_len, p->head_dim, p->causal ? "causal" : "full",
                 attn_dtype_name(p->dtype), row->mode);
        snprintf(path, sizeof path, "%s/%s", r->opt->trace_dir, file);
        snprintf(label, sizeof label, "%s ", row->variant);
        grid_point_label(p, label + strlen(label), sizeof label - strlen(label));
        rc = trace_write_json(&cap, label, path);
        trace_ops_line(&cap, 0, ops, sizeof ops);
        if (rc == ATTN_OK && r->ops_txt) {
            fprintf(r->ops_txt, "%-8s %-36s %-5s %s\n", row->variant, label + strlen(row->variant) + 1,
                    row->mode, ops);
            fflush(r->ops_txt);
        }
    }
    trace_capture_free(&cap);
    return rc;
}

/* Everything one variant does at one point; returns only runner-fatal errors
 * (a failed CSV write, an interrupt): the variant's own failures become rows. */
static int run_variant(struct runner *r, const struct attn_variant *v,
                       const struct attn_problem *p, struct point_data *d)
{
    const char *why = v->supports(p, &r->dev);
    if (why) return emit_untimed(r, v, p, "skipped", why, NULL);

    struct result_row base;
    results_row_init(&base);
    size_t ws_bytes = v->workspace_bytes(p), free_b = 0, total_b = 0;
    char reason[640];
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        return emit_untimed(r, v, p, "error", "cudaMemGetInfo failed", NULL);
    if (ws_bytes + MEMORY_MARGIN > free_b) {
        snprintf(reason, sizeof reason, "needs %.0f MiB of workspace, %.0f MiB free",
                 ws_bytes / MIB, free_b / MIB);
        return emit_untimed(r, v, p, "oom", reason, NULL);
    }
    void *ws = NULL, *ctx = NULL;
    if (ws_bytes && cudaMalloc(&ws, ws_bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(reason, sizeof reason, "cudaMalloc of %.0f MiB workspace failed", ws_bytes / MIB);
        return emit_untimed(r, v, p, "oom", reason, NULL);
    }
    size_t free_before = 0, free_after = 0;
    cudaMemGetInfo(&free_before, &total_b);

    int rc = ATTN_OK;
    attn_range_push("setup");
    attn_error_clear();
    attn_impl_clear();
    int vrc = v->setup(&ctx, p, ws);
    attn_range_pop();
    if (vrc != ATTN_OK) {
        rc = emit_untimed(r, v, p, status_of(vrc), attn_error_message(), NULL);
        goto out_free;
    }
    snprintf(base.impl, sizeof base.impl, "%s", attn_impl());

    struct attn_comparison cmp;
    attn_range_push("reference");
    vrc = ensure_reference(r, p, d);
    attn_range_pop();
    if (vrc != ATTN_OK) {
        char msg[600];
        snprintf(msg, sizeof msg, "reference: %s", attn_error_message());
        rc = emit_untimed(r, v, p, status_of(vrc), msg, &base);
        goto out_teardown;
    }
    attn_range_push("validate");
    vrc = validate(r, v, ctx, p, d, &cmp);
    attn_range_pop();
    cudaMemGetInfo(&free_after, &total_b);
    base.extra_mem_mib = (ws_bytes + (free_before > free_after ? free_before - free_after : 0)) / MIB;
    base.ref = d->ref_kind;
    if (vrc != ATTN_OK) {
        rc = emit_untimed(r, v, p, status_of(vrc), attn_error_message(), &base);
        goto out_teardown;
    }
    base.max_abs_err = cmp.max_abs_err;
    base.rel_err = cmp.rel_err;
    if (!cmp.ok) {
        struct attn_tolerance tol = attn_tolerance_for(p->dtype);
        snprintf(reason, sizeof reason,
                 "%zu elements over atol %g + rtol %g, %zu non-finite, rel_err %.3g (limit %g); "
                 "first at index %zu", cmp.bad, tol.atol, tol.rtol, cmp.nonfinite, cmp.rel_err,
                 tol.rel_l2, cmp.first_bad);
        rc = emit_untimed(r, v, p, "mismatch", reason, &base);
        goto out_teardown;
    }

    struct timed_call call = {.variant = v, .ctx = ctx, .q = d->q, .k = d->k, .v = d->v,
                              .o = d->o, .stream = r->stream};
    if (timing_slowdown_fraction(v->name) > 0 && timing_calibrate_slowdown(r->timer, &call) != ATTN_OK) {
        rc = emit_untimed(r, v, p, "error", attn_error_message(), &base);
        goto out_teardown;
    }
    for (int m = 0; m < r->opt->nmodes && rc == ATTN_OK; m++) {
        enum attn_mode mode = r->opt->modes[m];
        struct result_row row = base;
        row.variant = v->name;
        row.problem = *p;
        row.mode = attn_mode_name(mode);
        struct timing_result tr;
        char range[32];
        snprintf(range, sizeof range, "time %s", row.mode);
        attn_range_push(range);
        attn_error_clear();
        vrc = time_call(r->timer, mode, &call, &r->opt->rule, &tr);
        attn_range_pop();
        if (vrc == ATTN_ERR_INTERRUPTED) {
            rc = vrc;
            break;
        }
        if (vrc == ATTN_OK && r->tracing && trace_row(r, mode, &call, &row) != ATTN_OK) {
            /* the timing stands; only the op columns are lost, from here on */
            fprintf(stderr, "attnbench: tracing failed: %s; op columns left empty from here\n",
                    attn_error_message());
            r->tracing = false;
            row.traced = false;
        }
        if (vrc != ATTN_OK) {
            row.status = status_of(vrc);
            results_set_reason(&row, "%s", attn_error_message());
        } else {
            row.status = "ok";
            row.timed = true;
            row.stats = tr.stats;
            row.converged = tr.converged;
            row.calls_per_sample = tr.calls_per_sample;
            row.clock_start_mhz = tr.clock_start_mhz;
            row.clock_end_mhz = tr.clock_end_mhz;
        }
        rc = emit(r, &row);
    }
out_teardown:
    v->teardown(ctx);
out_free:
    cudaFree(ws);
    (void)cudaGetLastError();
    return rc;
}

static int run_point(struct runner *r, const struct attn_problem *p, uint64_t seed)
{
    char label[96];
    grid_point_label(p, label, sizeof label);
    attn_range_push(label);
    struct point_data d = {0};
    attn_error_clear();
    int prc = prepare_point(r, p, seed, &d), rc = ATTN_OK;
    for (int i = 0; i < r->opt->nvariants && rc == ATTN_OK; i++) {
        const struct attn_variant *v = r->opt->variants[i];
        if (attn_interrupted) {
            rc = ATTN_ERR_INTERRUPTED;
            break;
        }
        char vlabel[160];
        snprintf(vlabel, sizeof vlabel, "%s %s", v->name, label);
        attn_range_push(vlabel);
        if (prc != ATTN_OK) {
            const char *why = v->supports(p, &r->dev);
            rc = why ? emit_untimed(r, v, p, "skipped", why, NULL)
                     : emit_untimed(r, v, p, status_of(prc), attn_error_message(), NULL);
        } else {
            rc = run_variant(r, v, p, &d);
        }
        attn_range_pop();
    }
    free_point(&d);
    (void)cudaGetLastError();
    attn_range_pop();
    return rc;
}

static void print_list(void)
{
    printf("%-12s %s\n", "variant", "summary");
    for (size_t i = 0; i < registry_count(); i++)
        printf("%-12s %s\n", registry_get(i)->name, registry_get(i)->summary);
}

int main(int argc, char **argv)
{
    struct options opt;
    if (registry_check() != ATTN_OK) {
        fprintf(stderr, "attnbench: %s\n", attn_error_message());
        return 2;
    }
    if (options_parse(&opt, argc, argv) != ATTN_OK) {
        fprintf(stderr, "attnbench: %s\n", attn_error_message());
        grid_free(&opt.grid);
        return 2;
    }
    if (opt.help) {
        options_usage(stdout);
        return 0;
    }
    if (opt.list) {
        print_list();
        return 0;
    }

    struct runner r = {.opt = &opt, .csv_fd = -1};
    if (device_query(&r.dev) != ATTN_OK) {
        fprintf(stderr, "attnbench: %s\n", attn_error_message());
        grid_free(&opt.grid);
        return 2;
    }
    device_short_name(r.dev.name, r.gpu, sizeof r.gpu);
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
        bench_timer_create(&r.timer, r.dev.l2_bytes) != ATTN_OK) {
        fprintf(stderr, "attnbench: %s\n", attn_error_message());
        grid_free(&opt.grid);
        return 2;
    }
    r.stream = (attn_stream_t)s;
    if (clocks_open(r.dev.ordinal) != ATTN_OK)
        fprintf(stderr, "attnbench: %s; clock columns left empty\n", attn_error_message());
    if (opt.peak) {
        if (peak_measure(&r.peaks, r.stream) != ATTN_OK) {
            fprintf(stderr, "attnbench: measuring peaks: %s\n", attn_error_message());
            grid_free(&opt.grid);
            return 2;
        }
        struct gpu_clocks c;
        if (clocks_ready() && clocks_read(&c) == ATTN_OK) r.ref_clock_mhz = c.sm_mhz;
        r.have_peaks = true;
        fprintf(stderr, "attnbench: peaks: bf16 GEMM %d^3 %.0f TFLOP/s, D2D copy %.0f GB/s\n",
                r.peaks.gemm_n, r.peaks.gemm_tflops, r.peaks.copy_gbps);
    }
    if (open_results(&r, argc, argv) != ATTN_OK) {
        fprintf(stderr, "attnbench: %s\n", attn_error_message());
        grid_free(&opt.grid);
        return 2;
    }
    for (int i = 0; i < opt.nvariants; i++)
        if (timing_slowdown_fraction(opt.variants[i]->name) > 0)
            fprintf(stderr, "attnbench: this build injects a %.0f%% slowdown into %s (SLOWDOWN=)\n",
                    100 * timing_slowdown_fraction(opt.variants[i]->name), opt.variants[i]->name);
    r.tracing = !opt.no_trace && trace_available();
    if (!opt.no_trace && !r.tracing)
        fprintf(stderr, "attnbench: built without CUPTI: tracing disabled, op columns left empty\n");
    if (opt.trace_dir) {
        char path[1100];
        snprintf(path, sizeof path, "%s/ops.txt", opt.trace_dir);
        if (!r.tracing || mkdir_p(opt.trace_dir) != ATTN_OK || !(r.ops_txt = fopen(path, "w"))) {
            fprintf(stderr, "attnbench: --trace %s: %s\n", opt.trace_dir,
                    r.tracing ? "unable to create it" : "tracing is unavailable");
            grid_free(&opt.grid);
            return 2;
        }
    }
    r.rows_total = opt.grid.count * (size_t)opt.nvariants * (size_t)opt.nmodes;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    uint64_t seed = opt.seed ? opt.seed : (uint64_t)time(NULL) * 1000003u + (uint64_t)getpid();
    int rc = ATTN_OK;
    for (size_t i = 0; i < opt.grid.count && rc == ATTN_OK; i++)
        rc = run_point(&r, &opt.grid.points[i], seed + 7919u * i);

    close(r.csv_fd);
    if (r.ops_txt) {
        fclose(r.ops_txt);
        fprintf(stderr, "attnbench: op sequences in %s/ops.txt, traces beside it\n", opt.trace_dir);
    }
    clocks_close();
    bench_timer_destroy(r.timer);
    cudaStreamDestroy(s);
    grid_free(&opt.grid);
    if (rc == ATTN_ERR_INTERRUPTED || attn_interrupted) {
        fprintf(stderr, "attnbench: interrupted; %zu finished rows kept in %s\n", r.rows_done,
                r.csv_path);
        return 130;
    }
    if (rc != ATTN_OK) {
        fprintf(stderr, "attnbench: %s; %zu finished rows kept in %s\n", attn_error_message(),
                r.rows_done, r.csv_path);
        return 2;
    }
    fprintf(stderr, "attnbench: %zu rows (%zu failed) written to %s\n", r.rows_done,
            r.rows_failed, r.csv_path);
    return r.rows_failed ? 1 : 0;
}

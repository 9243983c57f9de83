/* runner.c — measuring rows (runner.h): the run's files, a point's tensors
 * and reference, and one variant's row in steps. Rows are appended as they
 * finish, so an interrupted run keeps everything it measured; a point a
 * variant cannot run becomes a skipped/oom/error row and the sweep goes on. */
#include "runner.h"
#include "../common/clocks.h"
#include "../common/csv.h"
#include "../common/device.h"
#include "../common/env.h"
#include "../common/errors.h"
#include "../common/files.h"
#include "../common/gpu_util.h"
#include "../common/nvtx.h"
#include "../common/reference.h"
#include "../common/schema.h"
#include "../common/trace.h"
#include "resume.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
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

static void iso_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int runner_init(struct runner *r, const struct options *opt)
{
    memset(r, 0, sizeof *r);
    r->opt = opt;
    r->csv_fd = r->samples_fd = -1;
    r->regime = stats_regime(&opt->rule);
    if (device_query(&r->dev) != ATTN_OK) return ATTN_ERR_INPUT;
    device_short_name(r->dev.name, r->gpu, sizeof r->gpu);
    cudaStream_t s;
    CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    r->stream = (attn_stream_t)s;
    ATTN_TRY(bench_timer_create(&r->timer, r->dev.l2_bytes, opt->flush));
    if (clocks_open(r->dev.ordinal) != ATTN_OK && !opt->quiet)
        fprintf(stderr, "attnbench: %s; clock columns left empty\n", attn_error_message());
    if (opt->peak) {
        ATTN_TRY(peak_measure(&r->peaks, r->stream));
        struct gpu_clocks c;
        if (clocks_ready() && clocks_read(&c) == ATTN_OK) r->ref_clock_mhz = c.sm_mhz;
        r->have_peaks = true;
        fprintf(stderr, "attnbench: peaks: bf16 GEMM %d^3 %.0f TFLOP/s, D2D copy %.0f GB/s, read %.0f GB/s\n",
                r->peaks.gemm_n, r->peaks.gemm_tflops, r->peaks.copy_gbps, r->peaks.read_gbps);
    }
    r->tracing = !opt->no_trace && trace_available();
    if (!opt->no_trace && !r->tracing)
        fprintf(stderr, "attnbench: built without CUPTI: tracing disabled, op columns left empty\n");
    if (opt->trace_dir) {
        char path[1100];
        snprintf(path, sizeof path, "%s/ops.txt", opt->trace_dir);
        if (!r->tracing || files_mkdir_p(opt->trace_dir) != ATTN_OK ||
            !(r->ops_txt = fopen(path, opt->resume_id ? "a" : "w")))
            return ATTN_FAIL(ATTN_ERR_INPUT, "--trace %s: %s", opt->trace_dir,
                             r->tracing ? "unable to create it" : "tracing is unavailable");
    }
    return ATTN_OK;
}

void runner_print_spent(const struct runner *r, const char *who, double wall_s)
{
    const struct sweep_spent *t = &r->spent;
    const double parts = (t->inputs + t->reference + t->validation + t->timing + t->trace) / 1e3;
    fprintf(stderr,
            "%s: %.0f s for %zu rows: inputs %.0f s, references %.0f s, setup and validation %.0f s, "
            "warm-up and samples %.0f s, traced calls %.0f s, the rest %.0f s\n",
            who, wall_s, r->rows_done, t->inputs / 1e3, t->reference / 1e3, t->validation / 1e3, t->timing / 1e3,
            t->trace / 1e3, wall_s > parts ? wall_s - parts : 0);
}

void runner_close(struct runner *r)
{
    if (r->csv_fd >= 0) close(r->csv_fd);
    if (r->samples_fd >= 0) close(r->samples_fd);
    r->csv_fd = r->samples_fd = -1;
    if (r->ops_txt) fclose(r->ops_txt);
    r->ops_txt = NULL;
    clocks_close();
    bench_timer_destroy(r->timer);
    r->timer = NULL;
    if (r->stream) cudaStreamDestroy((cudaStream_t)r->stream);
    r->stream = NULL;
    results_free(&r->done);
}

/* The run's directory: dir_arg, else --out, else results/<gpu>. */
static void run_dir(const struct runner *r, const char *dir_arg, char *dir, size_t len)
{
    if (dir_arg) snprintf(dir, len, "%s", dir_arg);
    else if (r->opt->out_dir) snprintf(dir, len, "%s", r->opt->out_dir);
    else snprintf(dir, len, "results/%s", r->gpu);
}

int runner_open_files(struct runner *r, const char *dir_arg, const char *run_id, int argc,
                      char **argv)
{
    char dir[1024], stamp[32], env_path[1200];
    run_dir(r, dir_arg, dir, sizeof dir);
    ATTN_TRY(files_mkdir_p(dir));
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    struct csv_line header;
    results_header(&header);
    for (int attempt = 1; attempt < 100; attempt++) {
        if (run_id) snprintf(r->run_id, sizeof r->run_id, "%s", run_id);
        else if (attempt == 1) snprintf(r->run_id, sizeof r->run_id, "%s", stamp);
        else snprintf(r->run_id, sizeof r->run_id, "%s-%d", stamp, attempt);
        snprintf(r->csv_path, sizeof r->csv_path, "%s/%s.csv", dir, r->run_id);
        ATTN_TRY(results_samples_path(r->csv_path, r->samples_path, sizeof r->samples_path));
        if (access(r->csv_path, F_OK) == 0 || access(r->samples_path, F_OK) == 0) {
            if (run_id) return ATTN_FAIL(ATTN_ERR_INPUT, "'%s' exists already", r->csv_path);
            continue;
        }
        ATTN_TRY(csv_create(r->csv_path, &header, &r->csv_fd));
        ATTN_TRY(results_samples_create(r->csv_path, r->samples_path, sizeof r->samples_path, &r->samples_fd));
        char when[32];
        iso_now(when, sizeof when);
        ATTN_TRY(results_beside_path(r->csv_path, ".env", env_path, sizeof env_path));
        return env_write(env_path, &r->dev, r->have_peaks ? &r->peaks : NULL, r->run_id, when,
                         r->seed, l2_flush_name(r->opt->flush), argc, argv);
    }
    return ATTN_FAIL(ATTN_ERR_INPUT, "no free run id in '%s'", dir);
}

/* mismatch and error make attnbench exit 1 */
static bool status_failed(const char *status)
{
    return !strcmp(status, row_status_names[STATUS_MISMATCH]) ||
           !strcmp(status, row_status_names[STATUS_ERROR]);
}

static int open_append(const char *path, int *fd)
{
    *fd = open(path, O_WRONLY | O_APPEND);
    return *fd >= 0 ? ATTN_OK : ATTN_FAIL(ATTN_ERR_INPUT, "unable to open '%s': %s", path, strerror(errno));
}

int runner_reopen_files(struct runner *r, const char *dir, const char *run_id, const char *what)
{
    snprintf(r->run_id, sizeof r->run_id, "%s", run_id);
    if ((size_t)snprintf(r->csv_path, sizeof r->csv_path, "%s/%s.csv", dir, run_id) >= sizeof r->csv_path ||
        results_samples_path(r->csv_path, r->samples_path, sizeof r->samples_path) != ATTN_OK)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: path too long", what);
    if (access(r->csv_path, F_OK) != 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no run '%s' (%s)", what, r->csv_path, strerror(errno));
    /* another schema's run is refused before the trim rewrites any of it */
    ATTN_TRY(resume_check_schema(r->csv_path, r->samples_path));
    ATTN_TRY(resume_trim(r->csv_path, &r->done));
    /* the trim leaves the samples gzipped (an older run's plain file converted) */
    ATTN_TRY(results_samples_path(r->csv_path, r->samples_path, sizeof r->samples_path));
    ATTN_TRY(open_append(r->csv_path, &r->csv_fd));
    return open_append(r->samples_path, &r->samples_fd);
}

int runner_resume_files(struct runner *r, const char *run_id, bool force, int argc, char **argv)
{
    char dir[1024], env_path[1200], when[32], what[160];
    run_dir(r, NULL, dir, sizeof dir);
    snprintf(what, sizeof what, "--resume %s", run_id);
    ATTN_TRY(runner_reopen_files(r, dir, run_id, what));
    if (results_beside_path(r->csv_path, ".env", env_path, sizeof env_path) != ATTN_OK)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: path too long", what);
    ATTN_TRY(resume_check(&r->done, r->gpu, env_git_rev(), force));
    /* one flush for the run's cold rows (a run from before --flush, whose
     * .env names none: memset, the only flush then; resume_env_value leaves
     * the buffer as it was when the key is missing) */
    char flush[16] = "memset";
    (void)resume_env_value(r->csv_path, "cold_flush", flush, sizeof flush);
    const char *mine = l2_flush_name(r->opt->flush);
    if (strcmp(flush, mine))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: its cold rows were timed after a %s flush of the L2, this command's "
                         "is %s: give --flush %s (FLUSH=%s)", what, flush, mine, flush, flush);
    for (size_t i = 0; i < r->done.count; i++) {
        const char *st = r->done.rows[i].status;
        r->rows_failed += status_failed(st);
    }
    r->rows_done = r->done.count;
    FILE *env = fopen(env_path, "a");
    if (!env) return ATTN_FAIL(ATTN_ERR_INPUT, "unable to open '%s': %s", env_path, strerror(errno));
    iso_now(when, sizeof when);
    fprintf(env, "%s=%s git_rev=%s rows_kept=%zu command=", r->opt->extend ? "extended" : "resumed",
            when, env_git_rev(), r->done.count);
    for (int i = 0; i < argc; i++) fprintf(env, "%s%s", i ? " " : "", argv[i]);
    fprintf(env, "\n");
    if (fclose(env) != 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "unable to write '%s': %s", env_path, strerror(errno));
    return ATTN_OK;
}

bool runner_row_done(const struct runner *r, const char *variant, const struct attn_problem *p,
                     enum attn_mode mode)
{
    if (!r->done.count) return false;
    struct result_key k;
    result_key_of(variant, p, mode, r->regime, &k);
    return results_find(&r->done, &k) != NULL;
}

/* Writes one row (its samples first, so that a row in the CSV always has its
 * samples whole) and prints its progress line. */
int runner_format_row(struct runner *r, struct result_row *row, struct csv_line *line)
{
    char when[32];
    iso_now(when, sizeof when);
    row->run_id = r->run_id;
    row->ab_run = r->ab_run;
    row->compare_run = r->compare_run;
    row->regime = regime_names[r->regime];
    row->shard = r->shard;
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
    int rc = results_format(row, line);
    row->timestamp = NULL; /* `when` ends here */
    return rc;
}

static int emit(struct runner *r, struct result_row *row)
{
    char label[ATTN_LABEL_MAX];
    struct csv_line line;
    ATTN_TRY(runner_format_row(r, row, &line));
    /* the samples first, on the disk before the row: a row in the CSV always
     * has its samples whole, and a crash costs at most the row in flight */
    if (row->timed) {
        ATTN_TRY(results_samples_append(r->samples_fd, row));
        if (fsync(r->samples_fd) != 0)
            return ATTN_FAIL(ATTN_ERR, "unable to sync '%s': %s", r->samples_path, strerror(errno));
    }
    ATTN_TRY(csv_append(r->csv_fd, &line));
    r->rows_done++;
    r->rows_failed += status_failed(row->status);
    if (r->opt->quiet) return ATTN_OK;
    attn_problem_label(&row->problem, label, sizeof label);
    if (r->opt->shard_count > 1) fprintf(stderr, "[shard %s] ", r->shard);
    fprintf(stderr, "[%zu/%zu] %s %s %s %s", r->rows_done, r->rows_total, row->variant, label,
            row->mode, row->regime);
    if (row->timed) {
        double ms = row->stats.median;
        char settled[96] = "";
        if (row->settled >= 0)
            snprintf(settled, sizeof settled, "  %s after %.1f s at %.0f MHz %.0f W",
                     row->settled ? "settled" : "NOT settled", row->settle_s, row->settled_mhz,
                     row->settled_watts);
        fprintf(stderr, "  %.4g ms  %.0f TFLOP/s%s%s%s\n", ms,
                attn_tflops(&row->problem, ms), settled, row->converged ? "" : "  (noisy)",
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
        if (runner_row_done(r, v->name, p, r->opt->modes[m])) continue; /* a resumed run's */
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

static const char *status_of(int rc)
{
    return row_status_names[rc == ATTN_ERR_OOM           ? STATUS_OOM
                            : rc == ATTN_ERR_UNSUPPORTED ? STATUS_SKIPPED
                                                         : STATUS_ERROR];
}

void point_free(struct point_data *d)
{
    cudaFree(d->q);
    cudaFree(d->k);
    cudaFree(d->v);
    cudaFree(d->o);
    cudaFree(d->dout);
    cudaFree(d->dq);
    cudaFree(d->dk);
    cudaFree(d->dv);
    free(d->ref);
    free(d->out);
    free(d->ref_dq);
    free(d->ref_dk);
    free(d->ref_dv);
    free(d->out_grad);
    memset(d, 0, sizeof *d);
    (void)cudaGetLastError();
}

static int prepare(struct runner *r, const struct attn_problem *p, uint64_t seed,
                   struct point_data *d)
{
    const size_t n = attn_tensor_elems(p), bytes = n * attn_dtype_bytes(p->dtype);
    const size_t nkv = attn_kv_tensor_elems(p), kv_bytes = nkv * attn_dtype_bytes(p->dtype);
    const bool grads = p->pass != ATTN_PASS_FWD;
    /* Q, K, V, O; with gradients also dO, dQ, dK, dV */
    const size_t need = (grads ? 2 : 1) * 2 * (bytes + kv_bytes);
    size_t free_b = 0, total_b = 0;
    CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    if (need + MEMORY_MARGIN > free_b)
        return ATTN_FAIL(ATTN_ERR_OOM, "Q, K, V, O%s need %.0f MiB, %.0f MiB free",
                         grads ? " and dO, dQ, dK, dV" : "", need / MIB, free_b / MIB);
    CUDA_TRY(cudaMalloc(&d->q, bytes));
    CUDA_TRY(cudaMalloc(&d->k, kv_bytes));
    CUDA_TRY(cudaMalloc(&d->v, kv_bytes));
    CUDA_TRY(cudaMalloc(&d->o, bytes));
    d->ref = malloc(n * sizeof *d->ref);
    d->out = malloc(bytes);
    if (!d->ref || !d->out) return ATTN_FAIL(ATTN_ERR, "out of host memory for %zu outputs", n);
    ATTN_TRY(gpu_fill_input(d->q, n, p, seed * 3 + 0, r->stream));
    ATTN_TRY(gpu_fill_input(d->k, nkv, p, seed * 3 + 1, r->stream));
    ATTN_TRY(gpu_fill_input(d->v, nkv, p, seed * 3 + 2, r->stream));
    /* cache rows that hold no token (past a ragged cache's length, a last page's spare
     * slots): 256s, so that a kernel attending to them fails validation */
    ATTN_TRY(gpu_poison_cache_tails(p, d->k, r->stream));
    ATTN_TRY(gpu_poison_cache_tails(p, d->v, r->stream));
    if (!grads) return ATTN_OK;
    CUDA_TRY(cudaMalloc(&d->dout, bytes));
    CUDA_TRY(cudaMalloc(&d->dq, bytes));
    CUDA_TRY(cudaMalloc(&d->dk, kv_bytes));
    CUDA_TRY(cudaMalloc(&d->dv, kv_bytes));
    d->ref_dq = malloc(n * sizeof *d->ref_dq);
    d->ref_dk = malloc(nkv * sizeof *d->ref_dk);
    d->ref_dv = malloc(nkv * sizeof *d->ref_dv);
    d->out_grad = malloc(bytes > kv_bytes ? bytes : kv_bytes);
    if (!d->ref_dq || !d->ref_dk || !d->ref_dv || !d->out_grad)
        return ATTN_FAIL(ATTN_ERR, "out of host memory for the gradients' references");
    /* dO from a seed of its own: not any seed's Q, K or V */
    return gpu_fill_input(d->dout, n, p, ~(seed * 3), r->stream);
}

void point_prepare(struct runner *r, const struct attn_problem *p, uint64_t seed,
                   struct point_data *d)
{
    memset(d, 0, sizeof *d);
    attn_error_clear();
    const double t0 = timing_wall_ms();
    d->prepare_rc = prepare(r, p, seed, d);
    r->spent.inputs += timing_wall_ms() - t0;
    if (d->prepare_rc != ATTN_OK)
        snprintf(d->prepare_why, sizeof d->prepare_why, "%s", attn_error_message());
}

static bool use_cpu_reference(const struct attn_problem *p)
{
    struct attn_problem full = *p;
    full.causal = false;
    return attn_flops(&full) <= CPU_REFERENCE_MAX_FLOPS;
}

/* The float32 GPU reference's n values at dev, widened into ref. */
static int fetch_f32(const float *dev, size_t n, double *ref, attn_stream_t stream)
{
    float *host = malloc(n * sizeof *host);
    if (!host) return ATTN_FAIL(ATTN_ERR, "out of host memory for the reference");
    int rc = ATTN_OK;
    if (cudaMemcpyAsync(host, dev, n * sizeof *host, cudaMemcpyDeviceToHost, (cudaStream_t)stream) !=
            cudaSuccess ||
        cudaStreamSynchronize((cudaStream_t)stream) != cudaSuccess)
        rc = ATTN_FAIL(ATTN_ERR, "GPU reference: %s", cudaGetErrorString(cudaGetLastError()));
    for (size_t i = 0; rc == ATTN_OK && i < n; i++) ref[i] = host[i];
    free(host);
    return rc;
}

/* The point's references on the GPU in float32: O, and with gradients dQ,
 * dK, dV (one device buffer, the four one after the other). */
static int gpu_references(struct runner *r, const struct attn_problem *p, struct point_data *d)
{
    const size_t n = attn_tensor_elems(p), nkv = attn_kv_tensor_elems(p);
    const bool grads = p->pass != ATTN_PASS_FWD;
    const size_t total = n + (grads ? n + 2 * nkv : 0);
    float *dref = NULL;
    if (cudaMalloc((void **)&dref, total * sizeof *dref) != cudaSuccess) {
        (void)cudaGetLastError();
        return ATTN_FAIL(ATTN_ERR_OOM, "no device memory for the float32 reference");
    }
    int rc = gpu_reference_f32(p, d->q, d->k, d->v, dref, r->stream);
    if (rc == ATTN_OK) rc = fetch_f32(dref, n, d->ref, r->stream);
    if (rc == ATTN_OK && grads)
        rc = gpu_reference_bwd_f32(p, d->q, d->k, d->v, d->dout, dref + n, dref + 2 * n,
                                   dref + 2 * n + nkv, r->stream);
    if (rc == ATTN_OK && grads) rc = fetch_f32(dref + n, n, d->ref_dq, r->stream);
    if (rc == ATTN_OK && grads) rc = fetch_f32(dref + 2 * n, nkv, d->ref_dk, r->stream);
    if (rc == ATTN_OK && grads) rc = fetch_f32(dref + 2 * n + nkv, nkv, d->ref_dv, r->stream);
    cudaFree(dref);
    return rc;
}

/* The point's references on the CPU in float64: O, and with gradients dQ,
 * dK, dV. */
static int cpu_references(struct runner *r, const struct attn_problem *p, struct point_data *d)
{
    const size_t n = attn_tensor_elems(p), bytes = n * attn_dtype_bytes(p->dtype);
    const size_t nkv = attn_kv_tensor_elems(p), kv_bytes = nkv * attn_dtype_bytes(p->dtype);
    const bool grads = p->pass != ATTN_PASS_FWD;
    uint16_t *hq = malloc(2 * bytes + 2 * kv_bytes);
    if (!hq) return ATTN_FAIL(ATTN_ERR, "out of host memory for the inputs");
    uint16_t *hk = hq + n, *hv = hq + n + nkv, *hdo = hq + n + 2 * nkv;
    const cudaStream_t s = (cudaStream_t)r->stream;
    int rc = ATTN_OK;
    if (cudaMemcpyAsync(hq, d->q, bytes, cudaMemcpyDeviceToHost, s) ||
        cudaMemcpyAsync(hk, d->k, kv_bytes, cudaMemcpyDeviceToHost, s) ||
        cudaMemcpyAsync(hv, d->v, kv_bytes, cudaMemcpyDeviceToHost, s) ||
        (grads && cudaMemcpyAsync(hdo, d->dout, bytes, cudaMemcpyDeviceToHost, s)) ||
        cudaStreamSynchronize(s))
        rc = ATTN_FAIL(ATTN_ERR, "copying inputs to the host: %s",
                       cudaGetErrorString(cudaGetLastError()));
    if (rc == ATTN_OK) rc = attn_reference_f64(p, hq, hk, hv, d->ref);
    if (rc == ATTN_OK && grads)
        rc = attn_reference_bwd_f64(p, hq, hk, hv, hdo, d->ref_dq, d->ref_dk, d->ref_dv);
    free(hq);
    return rc;
}

/* The point's references, computed once, when the first variant that runs
 * needs them: on the CPU in float64 for small points, else on the GPU in
 * float32. */
static int ensure_reference(struct runner *r, const struct attn_problem *p, struct point_data *d)
{
    if (d->ref_kind) return ATTN_OK;
    const bool cpu = use_cpu_reference(p);
    const double t0 = timing_wall_ms();
    const int rc = cpu ? cpu_references(r, p, d) : gpu_references(r, p, d);
    r->spent.reference += timing_wall_ms() - t0;
    ATTN_TRY(rc);
    d->ref_kind = cpu ? "cpu_f64" : "gpu_f32";
    return ATTN_OK;
}

/* One validated tensor: its name, the comparison and, when it failed, the
 * element furthest from the reference. */
struct checked_tensor {
    const char *name;
    struct attn_comparison cmp;
    struct attn_tolerance tol;
    size_t worst;
    double got, want;
};

/* The element of out furthest from ref (a non-finite one first). */
static void find_worst(const double *ref, const uint16_t *out, size_t n, enum attn_dtype t,
                       struct checked_tensor *c)
{
    double worst = -1;
    for (size_t i = 0; i < n; i++) {
        const double got = attn_half_to_float(out[i], t);
        const double e = isfinite(got) ? fabs(got - ref[i]) : INFINITY;
        if (e > worst) {
            worst = e;
            c->worst = i;
            c->got = got;
            c->want = ref[i];
        }
        if (isinf(e)) break;
    }
}

/* Copies n 16-bit values at dev to host and compares them with ref. */
static int check_tensor(const char *name, const void *dev, size_t n, const double *ref,
                        uint16_t *host, const struct attn_problem *p, struct attn_tolerance tol,
                        struct checked_tensor *c)
{
    CUDA_TRY(cudaMemcpy(host, dev, n * attn_dtype_bytes(p->dtype), cudaMemcpyDeviceToHost));
    c->name = name;
    c->tol = tol;
    c->cmp = attn_compare(ref, host, n, p->dtype, tol);
    if (!c->cmp.ok) find_worst(ref, host, n, p->dtype, c);
    return ATTN_OK;
}

/* Poisons the outputs, runs the variant once as the pass's timed call runs
 * it and compares with the references: O, then dQ, dK, dV. checked[] gets
 * each compared tensor; *nchecked says how many. The forward of a backward
 * pass (bwd) runs here too: it keeps the statistics the timed calls read. */
static int validate(struct runner *r, const struct attn_variant *v, void *ctx,
                    const struct attn_problem *p, struct point_data *d,
                    struct checked_tensor checked[4], int *nchecked)
{
    const size_t n = attn_tensor_elems(p), bytes = n * attn_dtype_bytes(p->dtype);
    const size_t nkv = attn_kv_tensor_elems(p), kv_bytes = nkv * attn_dtype_bytes(p->dtype);
    const bool grads = p->pass != ATTN_PASS_FWD;
    cudaStream_t s = (cudaStream_t)r->stream;
    *nchecked = 0;
    ATTN_TRY(gpu_poison(d->o, bytes, r->stream));
    if (grads) {
        ATTN_TRY(gpu_poison(d->dq, bytes, r->stream));
        ATTN_TRY(gpu_poison(d->dk, kv_bytes, r->stream));
        ATTN_TRY(gpu_poison(d->dv, kv_bytes, r->stream));
        ATTN_TRY(v->backward->forward(ctx, d->q, d->k, d->v, d->o, r->stream));
        ATTN_TRY(v->backward->backward(ctx, d->q, d->k, d->v, d->o, d->dout, d->dq, d->dk, d->dv,
                                       r->stream));
    } else {
        ATTN_TRY(v->run(ctx, d->q, d->k, d->v, d->o, r->stream));
    }
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaStreamSynchronize(s));
    const void *out = v->framework && v->framework->output ? v->framework->output(ctx) : d->o;
    if (!out) return ATTN_FAIL(ATTN_ERR, "%s: no output after its call", v->name);
    ATTN_TRY(check_tensor("O", out, n, d->ref, d->out, p, attn_tolerance_for(p->dtype),
                          &checked[(*nchecked)++]));
    if (!grads) return ATTN_OK;
    const struct attn_tolerance tol = attn_grad_tolerance_for(p->dtype, p->head_dim);
    static const char *const grad_names[3] = {"dQ", "dK", "dV"};
    const void *grad[3] = {d->dq, d->dk, d->dv};
    const double *ref[3] = {d->ref_dq, d->ref_dk, d->ref_dv};
    for (int g = 0; g < 3; g++) {
        if (v->framework && v->framework->gradient) grad[g] = v->framework->gradient(ctx, g);
        if (!grad[g]) return ATTN_FAIL(ATTN_ERR, "%s: no %s after its backward", v->name, grad_names[g]);
        ATTN_TRY(check_tensor(grad_names[g], grad[g], g == 0 ? n : nkv, ref[g], d->out_grad, p, tol,
                              &checked[(*nchecked)++]));
    }
    return ATTN_OK;
}

/* A variant without a backward at a bwd or fwd_bwd point: why it is skipped. */
static const char *pass_unsupported(const struct attn_variant *v, const struct attn_problem *p)
{
    if (p->pass == ATTN_PASS_FWD || v->backward) return NULL;
    return v->framework ? "no backward pass in this peer" : "no backward pass in this variant";
}

/* The op columns of a row from one call's counts (the tracer's or a framework's). */
static void set_op_columns(struct result_row *row, const struct attn_op_counts *n)
{
    row->traced = true;
    row->kernels_per_call = n->kernels;
    row->memcpy_per_call = n->memcpy;
    row->memset_per_call = n->memset;
    row->gpu_busy_ms = n->busy_ms;
    row->launch_gap_ms = n->span_ms - n->busy_ms;
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
    set_op_columns(row, &(struct attn_op_counts){.kernels = sum.kernels_per_call,
                                                 .memcpy = sum.memcpy_per_call,
                                                 .memset = sum.memset_per_call,
                                                 .busy_ms = sum.busy_ms_per_call,
                                                 .span_ms = sum.span_ms_per_call});
    if (r->opt->trace_dir) {
        char label[ATTN_LABEL_MAX + 64], file[160 + ATTN_VARLEN_MAX], path[1200], ops[1024];
        const struct attn_problem *p = &row->problem;
        /* only where K/V heads are grouped, the point a decode, the cache
         * paged or the batch ragged: other traces keep their names */
        char kv[48] = "", varlen[ATTN_VARLEN_MAX + 8] = "";
        if (attn_kv_heads(p) != p->heads) snprintf(kv, sizeof kv, "_KV%d", attn_kv_heads(p));
        if (attn_is_decode(p)) snprintf(kv + strlen(kv), sizeof kv - strlen(kv), "_Q%d", attn_q_len(p));
        if (attn_is_paged(p)) snprintf(kv + strlen(kv), sizeof kv - strlen(kv), "_page%d", p->page);
        if (attn_is_varlen(p)) snprintf(varlen, sizeof varlen, "_varlen-%s", p->varlen);
        for (char *c = varlen; *c; c++)
            if (*c == ':') *c = '-';
        snprintf(file, sizeof file, "%s_B%d_H%d%s_S%d_D%d%s_%s_%s_%s.json", row->variant, p->batch,
                 p->heads, kv, p->seq_len, p->head_dim, varlen, p->causal ? "causal" : "full",
                 attn_dtype_name(p->dtype), row->mode);
        snprintf(path, sizeof path, "%s/%s", r->opt->trace_dir, file);
        snprintf(label, sizeof label, "%s ", row->variant);
        attn_problem_label(p, label + strlen(label), sizeof label - strlen(label));
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

int row_open(struct runner *r, const struct attn_variant *v, const struct attn_problem *p,
             struct point_data *d, struct variant_row *vr, bool *opened)
{
    *opened = false;
    memset(vr, 0, sizeof *vr);
    vr->v = v;
    vr->p = *p;
    vr->d = d;
    const char *why = pass_unsupported(v, p);
    if (!why) why = v->supports(p, &r->dev);
    if (why) return emit_untimed(r, v, p, row_status_names[STATUS_SKIPPED], why, NULL);
    if (d->prepare_rc != ATTN_OK)
        return emit_untimed(r, v, p, status_of(d->prepare_rc), d->prepare_why, NULL);

    struct result_row *base = &vr->base;
    results_row_init(base);
    size_t ws_bytes = v->workspace_bytes(p), free_b = 0, total_b = 0;
    char reason[640];
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        return emit_untimed(r, v, p, row_status_names[STATUS_ERROR], "cudaMemGetInfo failed", NULL);
    if (ws_bytes + MEMORY_MARGIN > free_b) {
        snprintf(reason, sizeof reason, "needs %.0f MiB of workspace, %.0f MiB free",
                 ws_bytes / MIB, free_b / MIB);
        return emit_untimed(r, v, p, row_status_names[STATUS_OOM], reason, NULL);
    }
    if (ws_bytes && cudaMalloc(&vr->ws, ws_bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(reason, sizeof reason, "cudaMalloc of %.0f MiB workspace failed", ws_bytes / MIB);
        return emit_untimed(r, v, p, row_status_names[STATUS_OOM], reason, NULL);
    }
    size_t free_before = 0, free_after = 0;
    cudaMemGetInfo(&free_before, &total_b);

    attn_range_push("setup");
    attn_error_clear();
    attn_impl_clear();
    double t0 = timing_wall_ms();
    int vrc = v->setup(&vr->ctx, p, vr->ws);
    r->spent.validation += timing_wall_ms() - t0;
    attn_range_pop();
    if (vrc != ATTN_OK) {
        int rc = emit_untimed(r, v, p, status_of(vrc), attn_error_message(), NULL);
        cudaFree(vr->ws);
        (void)cudaGetLastError();
        return rc;
    }
    snprintf(base->impl, sizeof base->impl, "%s", attn_impl());

    struct checked_tensor checked[4];
    int nchecked = 0;
    attn_range_push("reference");
    vrc = ensure_reference(r, p, d);
    attn_range_pop();
    if (vrc != ATTN_OK) {
        char msg[600];
        snprintf(msg, sizeof msg, "reference: %s", attn_error_message());
        int rc = emit_untimed(r, v, p, status_of(vrc), msg, base);
        row_close(vr);
        return rc;
    }
    attn_range_push("validate");
    t0 = timing_wall_ms();
    vrc = validate(r, v, vr->ctx, p, d, checked, &nchecked);
    r->spent.validation += timing_wall_ms() - t0;
    attn_range_pop();
    cudaMemGetInfo(&free_after, &total_b);
    base->extra_mem_mib = (ws_bytes + (free_before > free_after ? free_before - free_after : 0)) / MIB;
    base->ref = d->ref_kind;
    if (vrc != ATTN_OK) {
        int rc = emit_untimed(r, v, p, status_of(vrc), attn_error_message(), base);
        row_close(vr);
        return rc;
    }
    /* the row's errors: the largest over the tensors checked */
    base->max_abs_err = base->rel_err = 0;
    const struct checked_tensor *failed = NULL;
    for (int i = 0; i < nchecked; i++) {
        const struct checked_tensor *c = &checked[i];
        if (!(c->cmp.max_abs_err <= base->max_abs_err)) base->max_abs_err = c->cmp.max_abs_err;
        if (!(c->cmp.rel_err <= base->rel_err)) base->rel_err = c->cmp.rel_err;
        if (!c->cmp.ok && !failed) failed = c;
    }
    if (failed) {
        const struct attn_comparison *cmp = &failed->cmp;
        const struct attn_tolerance *tol = &failed->tol;
        char which[16] = "";
        if (nchecked > 1) snprintf(which, sizeof which, "%s: ", failed->name);
        snprintf(reason, sizeof reason,
                 "%s%zu elements over atol %g + rtol %g%s, %zu non-finite, rel_err %.3g (limit %g); "
                 "first at index %zu, worst at %zu (%.6g, reference %.6g)", which, cmp->bad,
                 tol->atol, tol->rtol, tol->row ? " x max(|ref|, its row's rms)" : "", cmp->nonfinite,
                 cmp->rel_err, tol->rel_l2, cmp->first_bad, failed->worst, failed->got, failed->want);
        int rc = emit_untimed(r, v, p, row_status_names[STATUS_MISMATCH], reason, base);
        row_close(vr);
        return rc;
    }
    vr->call = (struct timed_call){.variant = v, .ctx = vr->ctx, .q = d->q, .k = d->k,
                                   .v = d->v, .o = d->o, .stream = r->stream, .pass = p->pass,
                                   .dout = d->dout, .dq = d->dq, .dk = d->dk, .dv = d->dv};
    *opened = true;
    return ATTN_OK;
}

void row_close(struct variant_row *vr)
{
    if (vr->ctx) vr->v->teardown(vr->ctx);
    vr->ctx = NULL;
    cudaFree(vr->ws);
    vr->ws = NULL;
    (void)cudaGetLastError();
}

/* The mode's row with the fields every mode shares. */
static struct result_row mode_row(const struct variant_row *vr)
{
    struct result_row row = vr->base;
    row.variant = vr->v->name;
    row.problem = vr->p;
    row.mode = attn_mode_name(vr->mode);
    return row;
}

/* The variant failed while being timed: its row says why, the mode ends.
 * An interrupt is passed up instead: the sweep stops. */
static int mode_failed(struct runner *r, struct variant_row *vr, int vrc, bool *ended)
{
    time_abort(r->timer);
    if (vrc == ATTN_ERR_INTERRUPTED) return vrc;
    *ended = true;
    struct result_row row = mode_row(vr);
    row.status = status_of(vrc);
    results_set_reason(&row, "%s", attn_error_message());
    return emit(r, &row);
}

int row_mode_fail(struct runner *r, struct variant_row *vr, int vrc, bool *ended)
{
    return mode_failed(r, vr, vrc, ended);
}

int row_mode_start(struct runner *r, struct variant_row *vr, enum attn_mode mode, bool *ended)
{
    *ended = false;
    vr->mode = mode;
    attn_error_clear();
    struct stop_rule rule = r->opt->rule;
    if (r->driver_loads) rule.sustain_s = 0; /* the driver's round robin loads the board */
    const double t0 = timing_wall_ms();
    int vrc = time_start(r->timer, mode, &vr->call, &rule, &vr->tr);
    r->spent.timing += timing_wall_ms() - t0;
    return vrc == ATTN_OK ? ATTN_OK : mode_failed(r, vr, vrc, ended);
}

int row_mode_take(struct runner *r, struct variant_row *vr, size_t min_samples, double min_ms,
                  bool rewarm, bool *ended)
{
    *ended = false;
    attn_error_clear();
    const double t0 = timing_wall_ms();
    int vrc = time_take(r->timer, min_samples, min_ms, rewarm);
    r->spent.timing += timing_wall_ms() - t0;
    return vrc == ATTN_OK ? ATTN_OK : mode_failed(r, vr, vrc, ended);
}

/* A variant that counts its own ops (its framework's profiler): the op
 * columns from it; a failure leaves them empty and the row standing. */
static int emit_counted(struct runner *r, struct variant_row *vr, struct result_row *row)
{
    struct attn_op_counts n;
    attn_error_clear();
    const double t0 = timing_wall_ms();
    const int counted = vr->v->framework->count_ops(vr->ctx, (int)vr->mode, &n);
    r->spent.trace += timing_wall_ms() - t0;
    if (counted == ATTN_OK) {
        set_op_columns(row, &n);
    } else {
        fprintf(stderr, "attnbench: %s: counting its ops failed: %s; op columns left empty\n",
                vr->v->name, attn_error_message());
    }
    return emit(r, row);
}

/* Writes the timed row: statistics, then the traced call (its failure leaves
 * the timing standing; only the op columns are lost, from here on). */
static int emit_timed(struct runner *r, struct variant_row *vr)
{
    struct result_row row = mode_row(vr);
    row.status = row_status_names[STATUS_OK];
    row.timed = true;
    row.stats = vr->tr.stats;
    row.converged = vr->tr.converged;
    row.calls_per_sample = vr->tr.calls_per_sample;
    row.clock_start_mhz = vr->tr.clock_start_mhz;
    row.clock_end_mhz = vr->tr.clock_end_mhz;
    row.watts = vr->tr.watts;
    row.temperature_c = vr->tr.temperature_c;
    if (vr->tr.sustained) {
        row.settled = vr->tr.settled;
        row.settle_s = vr->tr.settle_s;
        row.settled_mhz = vr->tr.settled_mhz;
        row.settled_watts = vr->tr.settled_watts;
    }
    char throttle[160];
    row.throttle = vr->tr.throttle_known
                       ? results_throttle_names(vr->tr.throttle, throttle, sizeof throttle) : NULL;
    row.sample_ms = time_samples(r->timer, &row.nsample_ms);
    if (vr->v->framework && vr->v->framework->count_ops) return emit_counted(r, vr, &row);
    const double t0 = timing_wall_ms();
    if (r->tracing && trace_row(r, vr->mode, &vr->call, &row) != ATTN_OK) {
        fprintf(stderr, "attnbench: tracing failed: %s; op columns left empty from here\n",
                attn_error_message());
        r->tracing = false;
        row.traced = false;
    }
    r->spent.trace += timing_wall_ms() - t0;
    return emit(r, &row);
}

int row_mode_finish(struct runner *r, struct variant_row *vr, bool converged)
{
    attn_error_clear();
    int vrc = time_finish(r->timer, &vr->tr);
    bool ended;
    if (vrc != ATTN_OK) return mode_failed(r, vr, vrc, &ended);
    vr->tr.converged = converged;
    return emit_timed(r, vr);
}

int row_mode_time(struct runner *r, struct variant_row *vr, enum attn_mode mode)
{
    char range[32];
    snprintf(range, sizeof range, "time %s", attn_mode_name(mode));
    vr->mode = mode;
    attn_range_push(range);
    attn_error_clear();
    const double t0 = timing_wall_ms();
    int vrc = time_call(r->timer, mode, &vr->call, &r->opt->rule, &vr->tr);
    r->spent.timing += timing_wall_ms() - t0;
    attn_range_pop();
    bool ended;
    return vrc == ATTN_OK ? emit_timed(r, vr) : mode_failed(r, vr, vrc, &ended);
}

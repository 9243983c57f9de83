/* attnbench.c — the runner's command line: for every grid point × variant ×
 * timing mode, one CSV row (runner.c measures it). The sweep runs in a
 * child process under a watchdog (supervise.c) unless --row-timeout 0; with
 * --resume it continues a run, with --extend it adds variants to one; with
 * --worker it serves an A/B run instead (worker.c). attnbench_main is the
 * executable's (attnbench_main.c) and the PyTorch peers' (peer_api.c), who
 * run it in their Python process. Usage: attnbench --help. */
#include "attnbench.h"
#include "options.h"
#include "resume.h"
#include "runner.h"
#include "scale/shard.h"
#include "supervise.h"
#include "gate/worker.h"
#include "../common/errors.h"
#include "../common/nvtx.h"
#include "../common/registry.h"
#include "../common/csv.h"
#include "../common/schema.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void on_signal(int sig)
{
    if (attn_interrupted) _exit(128 + sig); /* a second ^C: stop now; rows are whole */
    attn_interrupted = 1;
}

/* The modes of v at p the run does not hold yet, in --mode order. */
static int modes_to_do(const struct runner *r, const struct attn_variant *v,
                       const struct attn_problem *p, enum attn_mode *todo)
{
    int n = 0;
    for (int m = 0; m < r->opt->nmodes; m++)
        if (!runner_row_done(r, v->name, p, r->opt->modes[m])) todo[n++] = r->opt->modes[m];
    return n;
}

/* Tells the watchdog which rows are at stake: v's rows at p in these modes,
 * written as error if the process does not come back in time. */
static int arm(struct runner *r, const struct attn_variant *v, const struct attn_problem *p,
               const enum attn_mode *modes, int n)
{
    if (!supervised()) return ATTN_OK;
    struct csv_line lines[MODE_COUNT];
    for (int i = 0; i < n; i++) {
        struct result_row row;
        results_row_init(&row);
        row.variant = v->name;
        row.problem = *p;
        row.mode = attn_mode_name(modes[i]);
        row.status = row_status_names[STATUS_ERROR];
        ATTN_TRY(runner_format_row(r, &row, &lines[i]));
    }
    return supervised_arm(lines, n);
}

/* v's rows at p: opened (setup, validation) with every row it still owes at
 * stake, then each mode's timing with its own row at stake. */
static int run_variant(struct runner *r, const struct attn_variant *v, const struct attn_problem *p,
                       struct point_data *d)
{
    enum attn_mode todo[MODE_COUNT];
    int n = modes_to_do(r, v, p, todo);
    if (n == 0) return ATTN_OK;
    ATTN_TRY(arm(r, v, p, todo, n));
    struct variant_row vr;
    bool opened;
    int rc = row_open(r, v, p, d, &vr, &opened);
    for (int m = 0; opened && m < n && rc == ATTN_OK; m++) {
        rc = arm(r, v, p, &todo[m], 1);
        if (rc == ATTN_OK) rc = row_mode_time(r, &vr, todo[m]);
    }
    if (opened) row_close(&vr);
    int drc = supervised_disarm();
    return rc != ATTN_OK ? rc : drc;
}

/* A variant's rows at point i are this process's: its shard's (shard.h). */
static bool mine(const struct options *o, const int *assign, size_t i, int v)
{
    return !assign || assign[i * (size_t)o->nvariants + (size_t)v] == o->shard_index;
}

static int run_point(struct runner *r, size_t pi, const int *assign, uint64_t seed)
{
    const struct attn_problem *p = &r->opt->grid.points[pi];
    enum attn_mode todo[MODE_COUNT];
    bool work = false;
    for (int i = 0; i < r->opt->nvariants && !work; i++)
        work = mine(r->opt, assign, pi, i) && modes_to_do(r, r->opt->variants[i], p, todo) > 0;
    if (!work) return ATTN_OK; /* a resumed run holds every row of it */
    char label[ATTN_LABEL_MAX];
    attn_problem_label(p, label, sizeof label);
    attn_range_push(label);
    struct point_data d;
    point_prepare(r, p, seed, &d);
    int rc = ATTN_OK;
    for (int i = 0; i < r->opt->nvariants && rc == ATTN_OK; i++) {
        const struct attn_variant *v = r->opt->variants[i];
        if (!mine(r->opt, assign, pi, i)) continue;
        if (attn_interrupted) {
            rc = ATTN_ERR_INTERRUPTED;
            break;
        }
        char vlabel[ATTN_LABEL_MAX + 64];
        snprintf(vlabel, sizeof vlabel, "%s %s", v->name, label);
        attn_range_push(vlabel);
        rc = run_variant(r, v, p, &d);
        attn_range_pop();
    }
    point_free(&d);
    attn_range_pop();
    return rc;
}

/* A resumed run continues only the sweep that started it: every row it holds
 * must be one this command line would measure (with --extend: every row of
 * the variants this command line names; the others' rows are not its). */
static bool selected(const struct options *o, const char *variant)
{
    for (int v = 0; v < o->nvariants; v++)
        if (!strcmp(o->variants[v]->name, variant)) return true;
    return false;
}

static int check_resumed_rows(const struct runner *r)
{
    const struct result_set *done = &r->done;
    if (!done->count) return ATTN_OK;
    bool *planned = calloc(done->count, sizeof *planned);
    if (!planned) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    const struct options *o = r->opt;
    for (size_t i = 0; i < o->grid.count; i++)
        for (int v = 0; v < o->nvariants; v++)
            for (int m = 0; m < o->nmodes; m++) {
                struct result_key k;
                result_key_of(o->variants[v]->name, &o->grid.points[i], o->modes[m], r->regime, &k);
                const struct result_rec *rec = results_find(done, &k);
                if (rec) planned[rec - done->rows] = true;
            }
    int rc = ATTN_OK;
    for (size_t i = 0; i < done->count && rc == ATTN_OK; i++)
        if (!planned[i] && !(o->extend && !selected(o, done->rows[i].key.variant))) {
            char label[256];
            rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: the row %s is not in this sweep: resume with "
                           "the grid, variants and modes that started the run (its .env's command=)",
                           done->path, done->rows[i].line,
                           result_key_label(&done->rows[i].key, label, sizeof label));
        }
    free(planned);
    return rc;
}

/* The run's seed: --seed, else a resumed run's own (its .env), else fresh. */
static unsigned long long run_seed(const struct options *o, const struct runner *r)
{
    if (o->seed) return o->seed;
    char text[32];
    if (o->resume_id && resume_env_value(r->csv_path, "seed", text, sizeof text) == ATTN_OK)
        return strtoull(text, NULL, 10);
    if (o->resume_id)
        fprintf(stderr, "attnbench: %s records no seed: the rest of the run draws fresh inputs\n",
                r->csv_path);
    return (uint64_t)time(NULL) * 1000003u + (uint64_t)getpid();
}

/* --dry-run: the rows this command would run, CSV on stdout: the key
 * columns, the shard, the predicted ms. */
static int dry_run(const struct options *o, const int *assign)
{
    struct csv_line l;
    csv_line_init(&l);
    for (int c = RESULT_KEY_FIRST; c <= RESULT_KEY_LAST; c++) csv_add_str(&l, result_column_names[c]);
    csv_add_str(&l, result_column_names[COL_SHARD]);
    csv_add_str(&l, "cost");
    ATTN_TRY(csv_line_end(&l));
    fputs(l.text, stdout);
    char shard[24];
    snprintf(shard, sizeof shard, "%d/%d", o->shard_index, o->shard_count);
    for (size_t i = 0; i < o->grid.count; i++)
        for (int v = 0; v < o->nvariants; v++) {
            if (!mine(o, assign, i, v)) continue;
            const struct attn_problem *p = &o->grid.points[i];
            for (int m = 0; m < o->nmodes; m++) {
                csv_line_init(&l);
                csv_add_str(&l, o->variants[v]->name);
                csv_add_str(&l, attn_dtype_name(p->dtype));
                csv_add_int(&l, p->batch);
                csv_add_int(&l, p->heads);
                csv_add_int(&l, attn_kv_heads(p));
                csv_add_int(&l, p->seq_len);
                csv_add_int(&l, attn_q_len(p));
                csv_add_int(&l, p->head_dim);
                csv_add_int(&l, p->causal);
                csv_add_str(&l, p->varlen);
                csv_add_int(&l, p->page);
                char init[ATTN_INIT_MAX];
                csv_add_str(&l, attn_init_name(p->init_sigma, init, sizeof init));
                csv_add_str(&l, attn_pass_name(p->pass));
                csv_add_str(&l, attn_mode_name(o->modes[m]));
                csv_add_str(&l, regime_names[stats_regime(&o->rule)]);
                csv_add_str(&l, shard);
                csv_add_num(&l, shard_row_cost_ms(p, o->variants[v], o->modes[m], &o->rule), 5);
                ATTN_TRY(csv_line_end(&l));
                fputs(l.text, stdout);
            }
        }
    if (fflush(stdout) != 0 || ferror(stdout))
        return ATTN_FAIL(ATTN_ERR_INPUT, "writing the rows to stdout failed");
    return ATTN_OK;
}

int attnbench_main(int argc, char **argv, bool may_fork)
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
        char peers_dir[PATH_MAX];
        registry_print(stdout);
        registry_print_peers(stdout, options_peers_dir(peers_dir, sizeof peers_dir));
        return 0;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (opt.worker) { /* a Python peer's process serves as a worker too (compare runs) */
        int code = worker_main(&opt, argc, argv);
        grid_free(&opt.grid);
        return code;
    }
    int *assign = NULL; /* the shard plan; NULL: every unit is this process's */
    if (opt.shard_count > 1 && shard_plan(&opt, opt.shard_count, &assign, NULL) != ATTN_OK) {
        fprintf(stderr, "attnbench: %s\n", attn_error_message());
        grid_free(&opt.grid);
        return 2;
    }
    if (opt.dry_run) {
        int rc = dry_run(&opt, assign);
        if (rc != ATTN_OK) fprintf(stderr, "attnbench: %s\n", attn_error_message());
        free(assign);
        grid_free(&opt.grid);
        return rc == ATTN_OK ? 0 : 2;
    }
    if (!may_fork && opt.supervised_fd >= 0) {
        fprintf(stderr, "attnbench: --supervised-fd is the executable's\n");
        grid_free(&opt.grid);
        return 2;
    }
    if (may_fork && opt.row_timeout_s > 0 && opt.supervised_fd < 0) {
        free(assign);
        /* the supervisor: no CUDA here; the sweep runs in its children */
        grid_free(&opt.grid);
        return supervise("/proc/self/exe", argv, opt.row_timeout_s);
    }
    if (opt.supervised_fd >= 0) supervised_attach(opt.supervised_fd);

    struct runner r;
    int rc = runner_init(&r, &opt);
    snprintf(r.shard, sizeof r.shard, "%d/%d", opt.shard_index, opt.shard_count);
    if (rc == ATTN_OK && opt.resume_id) {
        rc = runner_resume_files(&r, opt.resume_id, opt.force, argc, argv);
        if (rc == ATTN_OK) rc = check_resumed_rows(&r);
        r.seed = run_seed(&opt, &r);
    } else if (rc == ATTN_OK) {
        r.seed = run_seed(&opt, &r);
        rc = runner_open_files(&r, NULL, opt.run_id, argc, argv);
    }
    if (rc == ATTN_OK) rc = supervised_run(r.csv_path);
    if (rc != ATTN_OK) {
        fprintf(stderr, "attnbench: %s\n", attn_error_message());
        runner_close(&r);
        grid_free(&opt.grid);
        free(assign);
        return 2;
    }
    r.rows_total = 0; /* this process's rows: its shard's */
    for (size_t i = 0; i < opt.grid.count; i++)
        for (int v = 0; v < opt.nvariants; v++) r.rows_total += mine(&opt, assign, i, v) ? (size_t)opt.nmodes : 0;
    if (opt.extend) /* the run's rows of other variants count among its rows, done */
        for (size_t i = 0; i < r.done.count; i++) r.rows_total += !selected(&opt, r.done.rows[i].key.variant);
    if (opt.resume_id)
        fprintf(stderr, "attnbench: %s %s: %zu rows kept, %zu to go\n",
                opt.extend ? "extending" : "resuming", r.csv_path, r.rows_done,
                r.rows_total > r.rows_done ? r.rows_total - r.rows_done : 0);
    for (int i = 0; i < opt.nvariants; i++)
        if (timing_slowdown_fraction(opt.variants[i]->name) > 0)
            fprintf(stderr, "attnbench: this build injects a %.0f%% slowdown into %s (SLOWDOWN=)\n",
                    100 * timing_slowdown_fraction(opt.variants[i]->name), opt.variants[i]->name);

    const double sweep_start = timing_wall_ms();
    for (size_t i = 0; i < opt.grid.count && rc == ATTN_OK; i++)
        rc = run_point(&r, i, assign, r.seed + 7919u * i);
    free(assign);
    if (!opt.quiet) runner_print_spent(&r, "attnbench", (timing_wall_ms() - sweep_start) / 1e3);

    bool traced = r.ops_txt != NULL;
    runner_close(&r);
    if (traced) fprintf(stderr, "attnbench: op sequences in %s/ops.txt, traces beside it\n", opt.trace_dir);
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

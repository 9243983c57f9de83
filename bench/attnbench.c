/* attnbench.c — the runner's command line: for every grid point × variant ×
 * timing mode, one CSV row (runner.c measures it). With --worker it serves
 * an A/B run instead (worker.c). Usage: attnbench --help. */
#include "options.h"
#include "runner.h"
#include "worker.h"
#include "../common/errors.h"
#include "../common/nvtx.h"
#include "../common/registry.h"

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

static int run_point(struct runner *r, const struct attn_problem *p, uint64_t seed)
{
    char label[96];
    attn_problem_label(p, label, sizeof label);
    attn_range_push(label);
    struct point_data d;
    point_prepare(r, p, seed, &d);
    int rc = ATTN_OK;
    for (int i = 0; i < r->opt->nvariants && rc == ATTN_OK; i++) {
        const struct attn_variant *v = r->opt->variants[i];
        if (attn_interrupted) {
            rc = ATTN_ERR_INTERRUPTED;
            break;
        }
        char vlabel[160];
        snprintf(vlabel, sizeof vlabel, "%s %s", v->name, label);
        attn_range_push(vlabel);
        struct variant_row vr;
        bool opened;
        rc = row_open(r, v, p, &d, &vr, &opened);
        for (int m = 0; opened && m < r->opt->nmodes && rc == ATTN_OK; m++)
            rc = row_mode_time(r, &vr, r->opt->modes[m]);
        if (opened) row_close(&vr);
        attn_range_pop();
    }
    point_free(&d);
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
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (opt.worker) {
        int code = worker_main(&opt, argc, argv);
        grid_free(&opt.grid);
        return code;
    }

    struct runner r;
    if (runner_init(&r, &opt) != ATTN_OK || runner_open_files(&r, NULL, NULL, argc, argv) != ATTN_OK) {
        fprintf(stderr, "attnbench: %s\n", attn_error_message());
        runner_close(&r);
        grid_free(&opt.grid);
        return 2;
    }
    for (int i = 0; i < opt.nvariants; i++)
        if (timing_slowdown_fraction(opt.variants[i]->name) > 0)
            fprintf(stderr, "attnbench: this build injects a %.0f%% slowdown into %s (SLOWDOWN=)\n",
                    100 * timing_slowdown_fraction(opt.variants[i]->name), opt.variants[i]->name);
    r.rows_total = opt.grid.count * (size_t)opt.nvariants * (size_t)opt.nmodes;

    uint64_t seed = opt.seed ? opt.seed : (uint64_t)time(NULL) * 1000003u + (uint64_t)getpid();
    int rc = ATTN_OK;
    for (size_t i = 0; i < opt.grid.count && rc == ATTN_OK; i++)
        rc = run_point(&r, &opt.grid.points[i], seed + 7919u * i);

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

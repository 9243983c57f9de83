/* ab.c — build/ab, the engine of `make ab`: two builds of attnbench (BASE and
 * CAND) measured interleaved in one run on one GPU, then gated.
 *
 *   ab --base BIN --cand BIN [--out DIR] [--block-ms MS] [--thresholds FILE]
 *      [--markdown FILE] [attnbench's grid, variant, mode, warm-up and stop-rule options]
 *   ab --list
 *
 * Each build runs as `BIN --worker` (worker.c), both on the GPU this process
 * sees. For every row both open the variant at the same point with the same
 * inputs (one seed), warm up, then take blocks of samples in the order
 * A B B A A B B A …, so that clock, power and neighbour drift during the row
 * fall on both sides alike, until both sides meet the stop rule (or the
 * budget, per side, ends). Each side writes its own run — DIR/AB_ID/AB_ID-base
 * and -cand .csv, .samples.csv, .env, every row marked with ab_run = AB_ID —
 * and the gate's verdict goes to stdout and DIR/AB_ID/gate.txt.
 * Exit: 0 pass, 1 regression (or a row that failed), 2 bad input or a worker
 * that died, 130 interrupted. */
#include "ab_proto.h"
#include "gate.h"
#include "../options.h"
#include "../../common/errors.h"
#include "../../common/files.h"
#include "../../common/grid.h"
#include "../../common/registry.h"
#include "../../common/stats.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIN_PAIRS 4           /* at least A B B A A B B A before the stop rule is asked */
#define DEFAULT_BLOCK_MS 25.0 /* timed device time of one block */

struct side {
    const char *name; /* base, cand */
    const char *bin;
    pid_t pid;
    FILE *to, *from;
    char *line; /* the last reply */
    size_t line_cap;
    char gpu[64], rev[96];
    bool opened, timing; /* the variant is open; a mode is being timed */
    double *samples;     /* this mode's samples so far */
    size_t n, cap;
    int calls_per_sample;
    double timed_ms, elapsed_ms;
    bool stop, converged;
};

struct ab_args {
    const char *base_bin, *cand_bin, *out_dir, *thresholds, *markdown;
    double block_ms;
    bool help;
    struct options opt;
};

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void on_signal(int sig)
{
    (void)sig;
    attn_interrupted = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ab --base BIN --cand BIN [--out DIR] [--block-ms MS] [--thresholds FILE]\n"
        "          [--markdown FILE]\n"
        "          [attnbench options: --grid --point --variants --mode --grids-dir --warm-ms\n"
        "           --budget-ms --noise --min-samples --seed --peak --no-trace --quiet]\n"
        "       ab --list\n"
        "Measures two attnbench builds interleaved on one GPU (blocks A B B A ..., MS of\n"
        "timed work each, default %g) and gates CAND against BASE. Writes DIR/AB_ID/\n"
        "(default DIR: results/<gpu>/ab). Other attnbench options are refused. --list\n"
        "prints the variants. Exit: 0 pass, 1 regression, 2 bad input, 130 interrupted.\n"
        "`make ab BASE=rev` builds both sides and runs this.\n",
        DEFAULT_BLOCK_MS);
}

/* The attnbench options an A/B run implements, passed on to options_parse;
 * every other one is refused by name, not accepted and ignored. */
static const struct {
    const char *name;
    bool value;
} passed_options[] = {
    {"--grid", true},      {"--point", true},       {"--variants", true}, {"--mode", true},
    {"--grids-dir", true}, {"--budget-ms", true},   {"--noise", true},    {"--min-samples", true},
    {"--warm-ms", true},   {"--seed", true},
    {"--peak", false},     {"--no-trace", false},   {"--quiet", false},   {"--list", false},
};

/* Takes ab's own options out of argv; the rest must be attnbench options
 * that an A/B run implements. */
static int parse_args(int argc, char **argv, struct ab_args *a)
{
    memset(a, 0, sizeof *a);
    a->block_ms = DEFAULT_BLOCK_MS;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    if (!rest) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    int nrest = 0, rc = ATTN_OK;
    rest[nrest++] = argv[0];
    for (int i = 1; i < argc && rc == ATTN_OK; i++) {
        const char *o = argv[i];
        const char **slot = !strcmp(o, "--base") ? &a->base_bin
                          : !strcmp(o, "--cand") ? &a->cand_bin
                          : !strcmp(o, "--out") ? &a->out_dir
                          : !strcmp(o, "--thresholds") ? &a->thresholds
                          : !strcmp(o, "--markdown") ? &a->markdown : NULL;
        bool block = !strcmp(o, "--block-ms");
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            a->help = true;
            break;
        }
        if (!slot && !block) {
            int known = -1;
            for (size_t k = 0; k < sizeof passed_options / sizeof passed_options[0]; k++)
                if (!strcmp(o, passed_options[k].name)) known = (int)k;
            if (known < 0 && !strncmp(o, "--", 2)) {
                rc = ATTN_FAIL(ATTN_ERR_INPUT, "'%s': not an option of an A/B run (see --help)", o);
                break;
            }
            rest[nrest++] = argv[i];
            if (known >= 0 && passed_options[known].value && i + 1 < argc) rest[nrest++] = argv[++i];
            continue;
        }
        if (i + 1 >= argc) {
            rc = ATTN_FAIL(ATTN_ERR_INPUT, "option '%s' needs a value", o);
            break;
        }
        const char *val = argv[++i];
        if (slot) {
            *slot = val;
        } else {
            char *end;
            a->block_ms = strtod(val, &end);
            if (end == val || *end || !(a->block_ms > 0 && a->block_ms <= 10000))
                rc = ATTN_FAIL(ATTN_ERR_INPUT, "--block-ms: '%s' is not a number in (0, 10000]", val);
        }
    }
    if (rc == ATTN_OK && !a->help) rc = options_parse(&a->opt, nrest, rest);
    free(rest);
    if (rc != ATTN_OK || a->help || a->opt.list) return rc;
    if (!a->base_bin || !a->cand_bin)
        return ATTN_FAIL(ATTN_ERR_INPUT, "--base BIN and --cand BIN are required (see --help)");
    if (a->out_dir && strpbrk(a->out_dir, " \t\n"))
        return ATTN_FAIL(ATTN_ERR_INPUT, "--out '%s': a directory without spaces, please", a->out_dir);
    return ATTN_OK;
}

/* ---------------------------------------------------------------- workers */

static int side_spawn(struct side *s, const struct options *o)
{
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC)) /* the other worker inherits none */
        return ATTN_FAIL(ATTN_ERR, "pipe: %s", strerror(errno));
    char warm[32], budget[32], noise[32], mins[32];
    snprintf(warm, sizeof warm, "%.17g", o->rule.warm_ms);
    snprintf(budget, sizeof budget, "%.17g", o->rule.budget_ms);
    snprintf(noise, sizeof noise, "%.17g", o->rule.target_noise);
    snprintf(mins, sizeof mins, "%zu", o->rule.min_samples);
    char *argv[16] = {(char *)s->bin, "--worker", "--warm-ms", warm, "--budget-ms", budget,
                      "--noise", noise, "--min-samples", mins};
    int n = 10;
    if (o->peak) argv[n++] = "--peak";
    if (o->no_trace) argv[n++] = "--no-trace";
    argv[n] = NULL;
    s->pid = fork();
    if (s->pid < 0) return ATTN_FAIL(ATTN_ERR, "fork: %s", strerror(errno));
    if (s->pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[0]);
        close(to[1]);
        close(from[0]);
        close(from[1]);
        execv(s->bin, argv);
        fprintf(stderr, "ab: unable to run '%s': %s\n", s->bin, strerror(errno));
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    s->to = fdopen(to[1], "w");
    s->from = fdopen(from[0], "r");
    if (!s->to || !s->from) return ATTN_FAIL(ATTN_ERR, "fdopen: %s", strerror(errno));
    return ATTN_OK;
}

/* Why the worker's pipe closed: its exit status. */
static int side_died(struct side *s)
{
    int status = 0;
    if (s->pid > 0 && waitpid(s->pid, &status, 0) == s->pid) {
        s->pid = 0;
        if (WIFSIGNALED(status))
            return ATTN_FAIL(ATTN_ERR, "the %s worker (%s) was killed by signal %d", s->name,
                             s->bin, WTERMSIG(status));
        return ATTN_FAIL(ATTN_ERR, "the %s worker (%s) exited with status %d", s->name, s->bin,
                         WEXITSTATUS(status));
    }
    return ATTN_FAIL(ATTN_ERR, "the %s worker (%s) stopped answering", s->name, s->bin);
}

static int side_read(struct side *s)
{
    ssize_t n = getline(&s->line, &s->line_cap, s->from);
    if (n <= 0) return side_died(s);
    s->line[strcspn(s->line, "\n")] = '\0';
    if (!strncmp(s->line, "fatal ", 6))
        return ATTN_FAIL(ATTN_ERR, "the %s worker: %s", s->name, s->line + 6);
    return ATTN_OK;
}

/* Sends one command and reads its reply into s->line. */
static int side_cmd(struct side *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int side_cmd(struct side *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(s->to, fmt, ap);
    va_end(ap);
    fputc('\n', s->to);
    if (fflush(s->to) != 0) return side_died(s);
    return side_read(s);
}

static bool reply_is(const struct side *s, const char *word)
{
    size_t n = strlen(word);
    return !strncmp(s->line, word, n) && (s->line[n] == '\0' || s->line[n] == ' ');
}

static int unexpected(const struct side *s, const char *cmd)
{
    return ATTN_FAIL(ATTN_ERR, "the %s worker answered '%.60s' to %s", s->name, s->line, cmd);
}

static int side_hello(struct side *s)
{
    ATTN_TRY(side_read(s));
    int version = 0;
    if (sscanf(s->line, "hello %d %63s %95s", &version, s->gpu, s->rev) != 3)
        return unexpected(s, "start-up");
    if (version != AB_PROTO_VERSION)
        return ATTN_FAIL(ATTN_ERR_INPUT,
                         "%s (rev %s) speaks A/B protocol %d, this driver %d: rebuild it from a "
                         "revision with this one", s->bin, s->rev, version, AB_PROTO_VERSION);
    return ATTN_OK;
}

static void side_stop(struct side *s)
{
    if (s->to) {
        fputs("quit\n", s->to);
        fclose(s->to);
    }
    if (s->from) fclose(s->from);
    s->to = s->from = NULL;
    if (s->pid > 0) waitpid(s->pid, NULL, 0);
    s->pid = 0;
    free(s->line);
    free(s->samples);
    s->line = NULL;
    s->samples = NULL;
}

/* ------------------------------------------------------------------ rows */

static int add_samples(struct side *s, const char *reply)
{
    char *end;
    unsigned long n = reply[2] ? strtoul(reply + 3, &end, 10) : 0;
    if (n == 0) return unexpected(s, "block");
    for (unsigned long i = 0; i < n; i++) {
        const char *p = end;
        double ms = strtod(p, &end);
        if (end == p || !(ms > 0)) return unexpected(s, "block");
        if (s->n == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 256;
            double *grown = realloc(s->samples, cap * sizeof *grown);
            if (!grown) return ATTN_FAIL(ATTN_ERR, "out of host memory");
            s->samples = grown;
            s->cap = cap;
        }
        s->samples[s->n++] = ms;
        s->timed_ms += ms * s->calls_per_sample;
    }
    return *end ? unexpected(s, "block") : ATTN_OK;
}

static int take_block(struct side *s, const struct ab_args *a)
{
    double t0 = wall_ms();
    ATTN_TRY(side_cmd(s, "block 1 %.17g", a->block_ms));
    s->elapsed_ms += wall_ms() - t0;
    if (reply_is(s, "done")) { /* the variant failed; its row says why */
        s->timing = false;
        return ATTN_OK;
    }
    if (!reply_is(s, "ok")) return unexpected(s, "block");
    return add_samples(s, s->line);
}

static double median_of(const struct side *s)
{
    struct sample_stats st;
    return s->n && stats_summarize(s->samples, s->n, &st) == ATTN_OK ? st.median : 0;
}

/* One mode of one open variant: both sides interleaved until both stop. */
static int time_mode(struct side sides[2], const struct ab_args *a, enum attn_mode m,
                     const char *label, size_t *done, size_t total)
{
    for (int i = 0; i < 2; i++) {
        struct side *s = &sides[i];
        s->timing = s->stop = s->converged = false;
        s->n = 0;
        s->timed_ms = s->elapsed_ms = 0;
        if (!s->opened) continue;
        ATTN_TRY(side_cmd(s, "mode %s", attn_mode_name(m)));
        if (reply_is(s, "ok")) {
            s->timing = true;
            s->calls_per_sample = s->line[2] ? atoi(s->line + 3) : 0;
            if (s->calls_per_sample < 1) return unexpected(s, "mode");
        } else if (!reply_is(s, "done")) {
            return unexpected(s, "mode");
        }
    }
    for (int pair = 0; sides[0].timing || sides[1].timing; pair++) {
        for (int k = 0; k < 2; k++) {
            struct side *s = &sides[(pair % 2) ^ k]; /* A B, B A, A B, ... */
            if (attn_interrupted) return ATTN_FAIL(ATTN_ERR_INTERRUPTED, "interrupted");
            if (s->timing) ATTN_TRY(take_block(s, a));
        }
        /* only after a whole A B B A: a linear drift then cancels */
        if (pair + 1 < MIN_PAIRS || pair % 2 == 0) continue;
        bool all_stop = true;
        for (int i = 0; i < 2; i++) {
            struct side *s = &sides[i];
            if (!s->timing) continue;
            struct sample_stats st;
            ATTN_TRY(stats_summarize(s->samples, s->n, &st));
            s->stop = stats_should_stop(&a->opt.rule, &st, s->timed_ms, s->elapsed_ms, &s->converged);
            all_stop &= s->stop;
        }
        if (all_stop) break;
    }
    for (int i = 0; i < 2; i++) {
        struct side *s = &sides[i];
        if (!s->timing) continue;
        ATTN_TRY(side_cmd(s, "finish %d", s->converged));
        if (!reply_is(s, "ok")) return unexpected(s, "finish");
    }
    (*done)++;
    if (a->opt.quiet) return ATTN_OK;
    double mb = sides[0].timing ? median_of(&sides[0]) : 0, mc = sides[1].timing ? median_of(&sides[1]) : 0;
    fprintf(stderr, "[%zu/%zu] %s %s", *done, total, label, attn_mode_name(m));
    if (mb > 0 && mc > 0)
        fprintf(stderr, "  base %.4g ms  cand %.4g ms  cand/base %.4f  (%zu + %zu samples)\n", mb,
                mc, mc / mb, sides[0].n, sides[1].n);
    else
        fprintf(stderr, "  base %s  cand %s\n", mb > 0 ? "timed" : "not timed",
                mc > 0 ? "timed" : "not timed");
    return ATTN_OK;
}

/* "batch=8 heads=16 seq=1024 dim=64 causal=1 dtype=bf16": a point in grid
 * syntax; kv_heads= and varlen= only when grouped or ragged, so that a base
 * revision from before those keys still reads the points it can run. */
static void point_spec(const struct attn_problem *p, char *buf, size_t len)
{
    char kv[32] = "", varlen[ATTN_VARLEN_MAX + 8] = "";
    if (attn_kv_heads(p) != p->heads) snprintf(kv, sizeof kv, " kv_heads=%d", attn_kv_heads(p));
    if (attn_is_varlen(p)) snprintf(varlen, sizeof varlen, " varlen=%s", p->varlen);
    snprintf(buf, len, "batch=%d heads=%d%s seq=%d dim=%d causal=%d dtype=%s%s", p->batch, p->heads, kv,
             p->seq_len, p->head_dim, p->causal ? 1 : 0, attn_dtype_name(p->dtype), varlen);
}

static int sweep(struct side sides[2], const struct ab_args *a)
{
    const struct options *o = &a->opt;
    char modes[64] = "";
    for (int m = 0; m < o->nmodes; m++)
        snprintf(modes + strlen(modes), sizeof modes - strlen(modes), "%s%s", m ? "," : "",
                 attn_mode_name(o->modes[m]));
    uint64_t seed = o->seed ? o->seed : (uint64_t)time(NULL) * 1000003u + (uint64_t)getpid();
    size_t done = 0, total = o->grid.count * (size_t)o->nvariants * (size_t)o->nmodes;
    for (size_t i = 0; i < o->grid.count; i++) {
        const struct attn_problem *p = &o->grid.points[i];
        char spec[160 + ATTN_VARLEN_MAX], label[ATTN_LABEL_MAX + 64], plabel[ATTN_LABEL_MAX];
        point_spec(p, spec, sizeof spec);
        attn_problem_label(p, plabel, sizeof plabel);
        for (int k = 0; k < 2; k++) {
            ATTN_TRY(side_cmd(&sides[k], "point %llu %s", (unsigned long long)(seed + 7919u * i), spec));
            if (!reply_is(&sides[k], "ok")) return unexpected(&sides[k], "point");
        }
        for (int v = 0; v < o->nvariants; v++) {
            const char *name = o->variants[v]->name;
            snprintf(label, sizeof label, "%s %s", name, plabel);
            for (int k = 0; k < 2; k++) {
                struct side *s = &sides[k];
                ATTN_TRY(side_cmd(s, "row %s %s", name, modes));
                s->opened = reply_is(s, "ok");
                if (!s->opened && !reply_is(s, "done") && !reply_is(s, "absent"))
                    return unexpected(s, "row");
                if (reply_is(s, "absent") && !o->quiet)
                    fprintf(stderr, "ab: the %s build (%s) has no variant %s\n", s->name, s->rev, name);
            }
            for (int m = 0; m < o->nmodes; m++)
                ATTN_TRY(time_mode(sides, a, o->modes[m], label, &done, total));
            for (int k = 0; k < 2; k++) {
                if (!sides[k].opened) continue;
                ATTN_TRY(side_cmd(&sides[k], "close"));
                if (!reply_is(&sides[k], "ok")) return unexpected(&sides[k], "close");
            }
        }
    }
    return ATTN_OK;
}

/* DIR/AB_ID: the UTC start time, made unique. */
static int make_run_dir(const char *parent, char *ab_id, size_t id_len, char *dir, size_t dir_len)
{
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    ATTN_TRY(files_mkdir_p(parent));
    for (int attempt = 1; attempt < 100; attempt++) {
        if (attempt == 1) snprintf(ab_id, id_len, "%s", stamp);
        else snprintf(ab_id, id_len, "%s-%d", stamp, attempt);
        if ((size_t)snprintf(dir, dir_len, "%s/%s", parent, ab_id) >= dir_len)
            return ATTN_FAIL(ATTN_ERR_INPUT, "path too long: '%s'", parent);
        if (mkdir(dir, 0755) == 0) return ATTN_OK;
        if (errno != EEXIST)
            return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", dir, strerror(errno));
    }
    return ATTN_FAIL(ATTN_ERR_INPUT, "no free A/B run id in '%s'", parent);
}

static int run(struct ab_args *a, struct side sides[2], int *code)
{
    for (int k = 0; k < 2; k++) ATTN_TRY(side_spawn(&sides[k], &a->opt));
    for (int k = 0; k < 2; k++) ATTN_TRY(side_hello(&sides[k]));
    if (strcmp(sides[0].gpu, sides[1].gpu) != 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "the base worker sees GPU '%s', the cand worker '%s'",
                         sides[0].gpu, sides[1].gpu);
    char parent[1024], dir[1200], ab_id[64], path[2][1400];
    if (a->out_dir) snprintf(parent, sizeof parent, "%s", a->out_dir);
    else snprintf(parent, sizeof parent, "results/%s/ab", sides[0].gpu);
    ATTN_TRY(make_run_dir(parent, ab_id, sizeof ab_id, dir, sizeof dir));
    fprintf(stderr, "ab: %s: base %s (%s) vs cand %s (%s), one GPU (%s), into %s/\n", ab_id,
            sides[0].rev, sides[0].bin, sides[1].rev, sides[1].bin, sides[0].gpu, dir);
    for (int k = 0; k < 2; k++) {
        ATTN_TRY(side_cmd(&sides[k], "open %s %s-%s %s", dir, ab_id, sides[k].name, ab_id));
        if (!reply_is(&sides[k], "ok") || !sides[k].line[2]) return unexpected(&sides[k], "open");
        snprintf(path[k], sizeof path[k], "%s", sides[k].line + 3);
    }
    ATTN_TRY(sweep(sides, a));
    for (int k = 0; k < 2; k++) side_stop(&sides[k]);

    char gate_path[1300];
    snprintf(gate_path, sizeof gate_path, "%s/gate.txt", dir);
    struct gate_files_request req = {.baseline = path[0], .results = path[1],
                                     .thresholds = a->thresholds, .copy_to = gate_path,
                                     .markdown = a->markdown};
    ATTN_TRY(gate_files(&req, stdout, code));
    /* a candidate row that failed is a failure even where the base failed too
     * (the gate leaves such rows uncompared) */
    struct result_set cand;
    ATTN_TRY(results_read(path[1], &cand));
    size_t failed = 0;
    for (size_t i = 0; i < cand.count; i++)
        failed += !strcmp(cand.rows[i].status, row_status_names[STATUS_MISMATCH]) ||
                  !strcmp(cand.rows[i].status, row_status_names[STATUS_ERROR]);
    results_free(&cand);
    if (failed) {
        fprintf(stderr, "ab: %zu candidate rows are mismatch or error (their reasons are in %s)\n",
                failed, path[1]);
        *code = 1;
    }
    return ATTN_OK;
}

int main(int argc, char **argv)
{
    struct ab_args a;
    struct side sides[2] = {{.name = "base"}, {.name = "cand"}};
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN); /* a dead worker is found by its exit status */
    int code = 0, rc = parse_args(argc, argv, &a);
    if (rc == ATTN_OK && a.help) {
        usage(stdout);
        return 0;
    }
    if (rc == ATTN_OK && a.opt.list) {
        registry_print(stdout);
        return 0;
    }
    if (rc == ATTN_OK) {
        sides[0].bin = a.base_bin;
        sides[1].bin = a.cand_bin;
        rc = run(&a, sides, &code);
    }
    if (rc != ATTN_OK) fprintf(stderr, "ab: %s\n", attn_error_message());
    for (int k = 0; k < 2; k++) side_stop(&sides[k]);
    grid_free(&a.opt.grid);
    if (rc == ATTN_ERR_INTERRUPTED || attn_interrupted) return 130;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ab: writing the report to stdout failed: %s\n", strerror(errno));
        return 2;
    }
    return rc != ATTN_OK ? 2 : code;
}

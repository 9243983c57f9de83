/* worker.c — attnbench --worker: one side of an A/B run (worker.h), measuring
 * through the same runner steps as a plain sweep (runner.h). Commands arrive
 * on stdin, one reply per command on stdout (ab_proto.h); errors go to
 * stderr. A command the protocol does not allow is answered `fatal`. The
 * worker runs without attnbench's watchdog: the driver keeps the deadlines
 * and stops a worker that misses one. The replies go out on the stdout the
 * worker was started with; whatever else writes to file descriptor 1 (a
 * Python peer's framework, a library's banner) goes to stderr instead, so
 * that nothing but replies reaches the driver. */
#include "worker.h"
#include "ab_proto.h"
#include "../runner.h"
#include "../../common/env.h"
#include "../../common/errors.h"
#include "../../common/registry.h"

#include <math.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct worker {
    struct runner r;
    struct options *opt;
    int argc;
    char **argv;
    bool files_open, have_point, in_row, in_mode;
    struct attn_problem problem;
    struct point_data point;
    struct variant_row row;
    char *out;       /* the reply being built */
    size_t out_cap;
};

/* Sets the reply to fmt (printf-style). */
static int answer(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int answer(struct worker *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(w->out, w->out_cap, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= w->out_cap) return ATTN_FAIL(ATTN_ERR, "reply too long");
    return ATTN_OK;
}

/* "open DIR RUN_ID AB_RUN": a new run; "reopen ...": the run this side's
 * previous worker wrote, continued (after it was stopped for missing its
 * deadline, or died). "open DIR RUN_ID ID compare": the run of one variant
 * of compare run ID (its rows' compare_run, not ab_run). */
static int cmd_open(struct worker *w, char *args, bool reopen)
{
    char *save = NULL, *dir = strtok_r(args, " ", &save), *run_id = strtok_r(NULL, " ", &save),
         *ab_run = strtok_r(NULL, " ", &save), *kind = strtok_r(NULL, " ", &save);
    if (!ab_run || w->files_open || (kind && strcmp(kind, "compare")))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: expected DIR RUN_ID AB_RUN [compare], once",
                         reopen ? "reopen" : "open");
    snprintf(kind ? w->r.compare_run : w->r.ab_run, sizeof w->r.ab_run, "%s", ab_run);
    if (reopen) ATTN_TRY(runner_reopen_files(&w->r, dir, run_id, "reopen"));
    else ATTN_TRY(runner_open_files(&w->r, dir, run_id, w->argc, w->argv));
    w->files_open = true;
    return answer(w, "ok %s", w->r.csv_path);
}

static int cmd_point(struct worker *w, char *args)
{
    char *end;
    unsigned long long seed = strtoull(args, &end, 10);
    if (end == args || *end != ' ' || w->in_row)
        return ATTN_FAIL(ATTN_ERR_INPUT, "point: expected SEED SPEC, outside a row");
    struct grid g = {0};
    int rc = grid_add_spec(&g, end + 1, "point");
    if (rc == ATTN_OK && g.count != 1)
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "point: '%s' is not one point", end + 1);
    if (rc == ATTN_OK) {
        if (w->have_point) point_free(&w->point);
        w->problem = g.points[0];
        point_prepare(&w->r, &w->problem, seed, &w->point);
        w->have_point = true;
    }
    grid_free(&g);
    return rc == ATTN_OK ? answer(w, "ok") : rc;
}

static int cmd_row(struct worker *w, char *args)
{
    char *modes = strchr(args, ' ');
    if (!modes || !w->files_open || !w->have_point || w->in_row)
        return ATTN_FAIL(ATTN_ERR_INPUT, "row: expected VARIANT MODES, after open and point, outside a row");
    *modes++ = '\0';
    const struct attn_variant *v = registry_find(args);
    if (!v) return answer(w, "absent");
    w->opt->nmodes = 0;
    for (char *save = NULL, *m = strtok_r(modes, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
        if (w->opt->nmodes == MODE_COUNT) return ATTN_FAIL(ATTN_ERR_INPUT, "row: too many modes");
        ATTN_TRY(attn_mode_parse(m, &w->opt->modes[w->opt->nmodes++]));
    }
    if (!w->opt->nmodes) return ATTN_FAIL(ATTN_ERR_INPUT, "row: no mode");
    ATTN_TRY(row_open(&w->r, v, &w->problem, &w->point, &w->row, &w->in_row));
    return answer(w, "%s", w->in_row ? "ok" : "done");
}

static int cmd_mode(struct worker *w, char *args)
{
    enum attn_mode m;
    if (!w->in_row || w->in_mode) return ATTN_FAIL(ATTN_ERR_INPUT, "mode: outside an open row");
    ATTN_TRY(attn_mode_parse(args, &m));
    bool ended;
    ATTN_TRY(row_mode_start(&w->r, &w->row, m, &ended));
    w->in_mode = !ended;
    return ended ? answer(w, "done") : answer(w, "ok %d", w->row.tr.calls_per_sample);
}

/* "block MIN_SAMPLES MIN_MS" → "ok N MS MS ...": the block's samples. */
static int cmd_block(struct worker *w, char *args)
{
    char *end;
    unsigned long min_samples = strtoul(args, &end, 10);
    double min_ms = end != args && *end == ' ' ? strtod(end + 1, &end) : -1;
    if (*end || min_ms < 0 || !w->in_mode)
        return ATTN_FAIL(ATTN_ERR_INPUT, "block: expected MIN_SAMPLES MIN_MS in a timed mode");
    size_t before, after;
    time_samples(w->r.timer, &before);
    bool ended;
    ATTN_TRY(row_mode_take(&w->r, &w->row, min_samples, min_ms, true, &ended));
    if (ended) {
        w->in_mode = false;
        return answer(w, "done");
    }
    const double *s = time_samples(w->r.timer, &after);
    size_t need = 32 + 24 * (after - before);
    if (need > w->out_cap) {
        char *grown = realloc(w->out, need);
        if (!grown) return ATTN_FAIL(ATTN_ERR, "out of host memory");
        w->out = grown;
        w->out_cap = need;
    }
    size_t len = (size_t)snprintf(w->out, w->out_cap, "ok %zu", after - before);
    for (size_t i = before; i < after; i++)
        len += (size_t)snprintf(w->out + len, w->out_cap - len, " %.9g", s[i]);
    return ATTN_OK;
}

/* "load MS" → "ok MHZ WATTS": the mode's call back to back for MS of wall
 * time, nothing kept, then the SM clock and board power: the driver's round
 * robin loading the board until it settles (the sustained regime). */
static int cmd_load(struct worker *w, char *args)
{
    char *end;
    const double ms = strtod(args, &end);
    if (end == args || *end || !(ms > 0 && ms <= 10000) || !w->in_mode)
        return ATTN_FAIL(ATTN_ERR_INPUT, "load: expected MS in (0, 10000] in a timed mode");
    double mhz, watts;
    attn_error_clear();
    int vrc = time_load(w->r.timer, ms, &mhz, &watts);
    if (vrc != ATTN_OK) {
        bool ended;
        ATTN_TRY(row_mode_fail(&w->r, &w->row, vrc, &ended));
        w->in_mode = false;
        return answer(w, "done");
    }
    return answer(w, "ok %.0f %.6g", mhz, watts);
}

/* "settled FLAG SECONDS MHZ WATTS": how the driver's load ended (settled 1
 * or 0 after SECONDS; the board's clock and power over its last second), for
 * the row being timed. */
static int cmd_settled(struct worker *w, char *args)
{
    int flag;
    double seconds, mhz, watts;
    char extra;
    if (!w->in_mode || sscanf(args, "%d %lf %lf %lf %c", &flag, &seconds, &mhz, &watts, &extra) != 4 ||
        (flag != 0 && flag != 1) || !(seconds >= 0))
        return ATTN_FAIL(ATTN_ERR_INPUT, "settled: expected FLAG SECONDS MHZ WATTS in a timed mode");
    struct timing_result *tr = &w->row.tr;
    tr->sustained = true;
    tr->settled = flag;
    tr->settle_s = seconds;
    tr->settled_mhz = mhz > 0 ? mhz : NAN;
    tr->settled_watts = watts > 0 ? watts : NAN;
    return answer(w, "ok");
}

static int cmd_finish(struct worker *w, char *args)
{
    if (!w->in_mode || (strcmp(args, "0") && strcmp(args, "1")))
        return ATTN_FAIL(ATTN_ERR_INPUT, "finish: expected 0 or 1 in a timed mode");
    w->in_mode = false;
    ATTN_TRY(row_mode_finish(&w->r, &w->row, args[0] == '1'));
    return answer(w, "ok");
}

static int cmd_close(struct worker *w)
{
    if (!w->in_row || w->in_mode) return ATTN_FAIL(ATTN_ERR_INPUT, "close: no open row, or a mode unfinished");
    row_close(&w->row);
    w->in_row = false;
    return answer(w, "ok");
}

/* "fail VARIANT MODE REASON": VARIANT's row at the point in MODE written as
 * error with REASON, measuring nothing: the driver's account of a row that
 * was lost (this side's previous worker missed its deadline or died) or
 * that the other side lost (a pair's rows stay matched). The timing of
 * MODE, if under way, is abandoned; the variant stays open. A row the run
 * holds already (one the previous worker wrote before it ended) is kept. */
static int cmd_fail(struct worker *w, char *args)
{
    char *save = NULL, *variant = strtok_r(args, " ", &save), *mode_name = strtok_r(NULL, " ", &save);
    const char *reason = save && *save ? save : NULL;
    enum attn_mode mode;
    if (!reason || !w->files_open || !w->have_point)
        return ATTN_FAIL(ATTN_ERR_INPUT, "fail: expected VARIANT MODE REASON, after open and point");
    ATTN_TRY(attn_mode_parse(mode_name, &mode));
    if (w->in_mode) {
        if (strcmp(w->row.v->name, variant) || w->row.mode != mode)
            return ATTN_FAIL(ATTN_ERR_INPUT, "fail: %s %s while %s %s is being timed", variant,
                             mode_name, w->row.v->name, attn_mode_name(w->row.mode));
        time_abort(w->r.timer);
        w->in_mode = false;
    }
    struct result_key key;
    result_key_of(variant, &w->problem, mode, w->r.regime, &key);
    if (w->r.done.count && results_find(&w->r.done, &key)) return answer(w, "ok");
    struct result_row row;
    results_row_init(&row);
    row.variant = variant;
    row.problem = w->problem;
    row.mode = attn_mode_name(mode);
    row.status = row_status_names[STATUS_ERROR];
    results_set_reason(&row, "%s", reason);
    struct csv_line line;
    ATTN_TRY(runner_format_row(&w->r, &row, &line));
    ATTN_TRY(csv_append(w->r.csv_fd, &line));
    return answer(w, "ok");
}

/* One command; ATTN_OK with the reply in w->out, else a fatal error. */
static int serve(struct worker *w, char *line)
{
    char *args = strchr(line, ' ');
    if (args) *args++ = '\0';
    else args = line + strlen(line);
    if (!strcmp(line, "open")) return cmd_open(w, args, false);
    if (!strcmp(line, "reopen")) return cmd_open(w, args, true);
    if (!strcmp(line, "fail")) return cmd_fail(w, args);
    if (!strcmp(line, "point")) return cmd_point(w, args);
    if (!strcmp(line, "row")) return cmd_row(w, args);
    if (!strcmp(line, "mode")) return cmd_mode(w, args);
    if (!strcmp(line, "block")) return cmd_block(w, args);
    if (!strcmp(line, "finish")) return cmd_finish(w, args);
    if (!strcmp(line, "load")) return cmd_load(w, args);
    if (!strcmp(line, "settled")) return cmd_settled(w, args);
    if (!strcmp(line, "close")) return cmd_close(w);
    return ATTN_FAIL(ATTN_ERR_INPUT, "unknown command '%.40s'", line);
}

/* The driver's channel: a copy of stdout, fd 1 itself then sent to stderr. */
static FILE *driver_channel(void)
{
    fflush(stdout);
    const int fd = dup(STDOUT_FILENO);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return NULL;
    return f;
}

int worker_main(struct options *opt, int argc, char **argv)
{
    struct worker w = {.opt = opt, .argc = argc, .argv = argv, .out_cap = AB_LINE_MAX};
    opt->quiet = true;
    FILE *driver = driver_channel();
    if (!driver) {
        fprintf(stderr, "attnbench --worker: unable to set up the driver's channel on stdout\n");
        return 2;
    }
    w.out = malloc(w.out_cap);
    char line[AB_LINE_MAX];
    int rc = w.out ? runner_init(&w.r, opt) : ATTN_FAIL(ATTN_ERR, "out of host memory");
    w.r.driver_loads = true; /* with --sustain the rows are sustained, loaded by the driver */
    if (rc == ATTN_OK)
        fprintf(driver, "hello %d %s %s %s\n", AB_PROTO_VERSION, w.r.gpu, env_git_rev(), l2_flush_name(opt->flush));
    fflush(driver);
    const double started = timing_wall_ms();
    while (rc == ATTN_OK && fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!strcmp(line, "quit")) break;
        if ((rc = serve(&w, line)) == ATTN_OK) {
            fprintf(driver, "%s\n", w.out);
            fflush(driver);
        }
    }
    if (rc != ATTN_OK) {
        fprintf(driver, "fatal %s\n", attn_error_message());
        fflush(driver);
        fprintf(stderr, "attnbench --worker: %s\n", attn_error_message());
    }
    if (rc == ATTN_OK && w.r.rows_done) {
        char who[96];
        snprintf(who, sizeof who, "attnbench --worker (%s)", w.row.v ? w.row.v->name : "?");
        runner_print_spent(&w.r, who, (timing_wall_ms() - started) / 1e3);
    }
    if (w.in_mode) time_abort(w.r.timer);
    if (w.in_row) row_close(&w.row);
    if (w.have_point) point_free(&w.point);
    runner_close(&w.r);
    free(w.out);
    fclose(driver);
    if (rc == ATTN_ERR_INTERRUPTED) return 130;
    return rc == ATTN_OK ? 0 : 2;
}

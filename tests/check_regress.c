/* check_regress.c — the tests of the regression gate (Check): reading a
 * results CSV back (results_read: columns by name, quoting, CRLF, '#' lines,
 * every rejection named file:line), the thresholds file (defaults, match
 * lines, later lines winning), the comparison of a run with a baseline
 * (slowdown limit, recorded noise, min_ms, status / NaN / error failures,
 * missing and new rows, improvements, GPU mismatch), the report (text and
 * markdown), and the build/regress binary's exit codes (0 pass, 1
 * regression, 2 bad input) and one-line messages. Nothing here touches a GPU.
 * Fixtures are written into one mkdtemp directory under /tmp per test case
 * and removed after it. Run from the repository root (the binary tests run
 * build/regress; one test reads the committed results/h200 runs). */
#include "../bench/gate/gate.h"
#include "../common/attn.h"
#include "../common/csv.h"
#include "../common/errors.h"
#include "../common/results.h"
#include "../common/results_read.h"
#include "testutil.h"

#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every test case's time limit, per test. A test runs build/regress a few
 * times at most; a run takes under half a second even in the ASan build,
 * most of it loading the CUDA libraries, and the slowest tests take about
 * 1.5 s under ASan on an idle machine: the limit holds on one ten times
 * slower (a loaded 2-core machine), and Check's CK_TIMEOUT_MULTIPLIER
 * scales it further. */
#define TCASE_TIMEOUT_S 20

/* ------------------------------------------------------------------ helpers */

#define REGRESS tool_path("regress")
#define QUIET 0.002 /* noise_rel of a quiet row */
#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* The last error message must contain `needle`. */
#define ck_assert_message_has(needle)                                             \
    ck_assert_msg(strstr(attn_error_message(), (needle)) != NULL,                 \
                  "error message \"%s\" does not mention \"%s\"",                 \
                  attn_error_message(), (needle))

/* The test case's fixture directory: made before its tests, removed after. */
static char tmpdir[64];

static void tmpdir_setup(void)
{
    strcpy(tmpdir, "/tmp/check_regress_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("check_regress: mkdtemp");
        abort();
    }
}

/* The fixtures, nested folders (A/B runs) included. */
static void tmpdir_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "check_regress: could not remove %s\n", tmpdir);
}

typedef struct {
    char s[256];
} path_t;

static path_t tmp_path(const char *name)
{
    path_t p;
    snprintf(p.s, sizeof p.s, "%s/%s", tmpdir, name);
    return p;
}

/* Writes text, byte for byte, to the fixture `name`; returns its path. */
static path_t write_text(const char *name, const char *text)
{
    path_t p = tmp_path(name);
    FILE *f = fopen(p.s, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", p.s);
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    ck_assert_int_eq(fclose(f), 0);
    return p;
}

/* One row of a results file, as the runner would write it (results_format).
 * Zero / NULL members take the defaults in the comments. The key is always
 * B=2 H=16 D=64 causal, dtype bf16 unless given. */
struct rspec {
    const char *variant;
    int seq;
    const char *mode;   /* NULL: cold */
    double ms;          /* ms_median */
    double noise;       /* noise_rel; 0: QUIET */
    const char *status; /* NULL: ok (timed); anything else: untimed, with a reason */
    double rel_err;     /* 0: 0.002 */
    const char *gpu;    /* NULL: h200 */
    const char *dtype;  /* NULL: bf16 */
    const char *set_column, *set_value; /* a column's text replaced after formatting */
    unsigned clock_mhz; /* both SM clock readings; 0: unknown */
    int nsamples;       /* > 0: that many samples in NAME.samples.csv, ms ± jitter */
    double jitter;      /* relative half-width of the samples' spread; 0: 0.003 */
    const char *ab_run; /* the ab_run column; NULL: plain run */
    const char *throttle; /* the throttle column; NULL: not recorded */
    double watts;         /* average board power; 0: unknown */
};

/* Sample i of a row: ms spread evenly over ±jitter in a fixed shuffled order. */
static double sample_of(const struct rspec *s, int i)
{
    const double j = s->jitter ? s->jitter : 0.003;
    return s->ms * (1 + j * ((double)((i * 7919) % 13) - 6) / 6);
}

/* Replaces the text of one column of a formatted line (the line is rebuilt). */
static void line_set(struct csv_line *l, const char *column, const char *value)
{
    char *fields[64];
    ck_assert_int_gt(l->len, 0);
    l->text[l->len - 1] = '\0'; /* drop the '\n' */
    int n = csv_split(l->text, fields, 64);
    ck_assert_int_eq(n, results_column_count());
    char copy[64][256];
    for (int i = 0; i < n; i++) {
        const char *name = results_column_name(i);
        snprintf(copy[i], sizeof copy[i], "%s", strcmp(name, column) == 0 ? value : fields[i]);
    }
    bool found = false;
    for (int i = 0; i < n; i++) found |= strcmp(results_column_name(i), column) == 0;
    ck_assert_msg(found, "no column %s", column);
    csv_line_init(l);
    for (int i = 0; i < n; i++) csv_add_str(l, copy[i]);
    ck_assert_int_eq(csv_line_end(l), ATTN_OK);
}

static void format_row(const struct rspec *s, const char *run_id, struct csv_line *l)
{
    struct result_row r;
    results_row_init(&r);
    r.run_id = run_id;
    r.timestamp = "2026-11-30T00:00:00Z";
    r.git_rev = "0123456789ab";
    r.gpu = s->gpu ? s->gpu : "h200";
    r.variant = s->variant;
    enum attn_dtype dt = ATTN_BF16;
    ck_assert_int_eq(attn_dtype_parse(s->dtype ? s->dtype : "bf16", &dt), ATTN_OK);
    r.problem = (struct attn_problem){.batch = 2, .heads = 16, .seq_len = s->seq, .head_dim = 64,
                                      .causal = true, .dtype = dt, .scale = 0.125f};
    r.mode = s->mode ? s->mode : "cold";
    r.status = s->status ? s->status : "ok";
    r.ab_run = s->ab_run;
    if (strcmp(r.status, "ok") == 0) {
        r.timed = true;
        r.stats = (struct sample_stats){.n = s->nsamples > 0 ? (size_t)s->nsamples : 20, .median = s->ms, .min = s->ms * 0.99,
                                        .max = s->ms * 1.02, .p10 = s->ms * 0.995,
                                        .p25 = s->ms, .p75 = s->ms, .p90 = s->ms * 1.005,
                                        .mean = s->ms, .noise_rel = s->noise ? s->noise : QUIET};
        r.converged = true;
        r.calls_per_sample = 1;
        r.extra_mem_mib = 16;
        r.rel_err = s->rel_err ? s->rel_err : 0.002;
        r.max_abs_err = r.rel_err;
        r.ref = "cpu_f64";
        r.clock_start_mhz = r.clock_end_mhz = s->clock_mhz;
        r.throttle = s->throttle;
        r.watts = s->watts ? s->watts : NAN;
        r.temperature_c = s->watts ? 61 : NAN;
    } else {
        results_set_reason(&r, "%s: made up for the gate's tests, with a comma", r.status);
    }
    ck_assert_int_eq(results_format(&r, l), ATTN_OK);
    if (s->set_column) line_set(l, s->set_column, s->set_value);
}

/* Writes the header and the rows to the fixture `name` (a path under the
 * fixture directory), and their samples to NAME.samples.csv.gz when a row
 * has any; the run id is the file name without ".csv", so that two fixtures are
 * two runs. */
static path_t write_rows(const char *name, const struct rspec *rows, size_t n)
{
    path_t p = tmp_path(name);
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    char run_id[64], spath[300];
    snprintf(run_id, sizeof run_id, "%.*s", (int)strcspn(base, "."), base);
    FILE *f = fopen(p.s, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", p.s);
    static struct csv_line l;
    results_header(&l);
    fputs(l.text, f);
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        format_row(&rows[i], run_id, &l);
        fputs(l.text, f);
        any |= rows[i].nsamples > 0;
    }
    ck_assert_int_eq(fclose(f), 0);
    /* a fixture of an earlier test may have left one */
    ck_assert_int_eq(results_samples_remove(p.s), ATTN_OK);
    if (!any) return p;
    int fd;
    ck_assert_int_eq(results_samples_create(p.s, spath, sizeof spath, &fd), ATTN_OK);
    for (size_t i = 0; i < n; i++) {
        if (rows[i].nsamples <= 0) continue;
        struct result_row r;
        results_row_init(&r);
        double ms[256];
        ck_assert_int_le(rows[i].nsamples, 256);
        for (int k = 0; k < rows[i].nsamples; k++) ms[k] = sample_of(&rows[i], k);
        enum attn_dtype dt = ATTN_BF16;
        attn_dtype_parse(rows[i].dtype ? rows[i].dtype : "bf16", &dt);
        r.variant = rows[i].variant;
        r.problem = (struct attn_problem){.batch = 2, .heads = 16, .seq_len = rows[i].seq,
                                          .head_dim = 64, .causal = true, .dtype = dt};
        r.mode = rows[i].mode ? rows[i].mode : "cold";
        r.sample_ms = ms;
        r.nsample_ms = (size_t)rows[i].nsamples;
        ck_assert_int_eq(results_samples_append(fd, &r), ATTN_OK);
    }
    ck_assert_int_eq(close(fd), 0);
    return p;
}

/* mkdir -p of a folder under the fixture directory. */
static path_t make_dir(const char *name)
{
    path_t p = tmp_path(name);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p.s);
    ck_assert_int_eq(system(cmd), 0);
    return p;
}

static void read_ok(const char *path, struct result_set *set)
{
    int rc = results_read(path, set);
    ck_assert_msg(rc == ATTN_OK, "results_read(%s) = %d: %s", path, rc, attn_error_message());
}

/* Reads both files and compares them (th NULL: the built-in defaults). */
static int compare(path_t base, path_t cur, const struct gate_thresholds *th,
                   const struct gate_options *opt, struct gate_report *rep)
{
    struct result_set b, c;
    read_ok(base.s, &b);
    read_ok(cur.s, &c);
    struct gate_thresholds def;
    gate_thresholds_default(&def);
    struct gate_options none = {0};
    memset(rep, 0, sizeof *rep);
    int rc = gate_compare(&b, &c, th ? th : &def, opt ? opt : &none, rep);
    results_free(&b);
    results_free(&c);
    return rc;
}

/* The report's line for a key (B=2 H=16 D=64 causal), NULL when absent. */
static const struct gate_line *find_line(const struct gate_report *rep, const char *variant,
                                         int seq, const char *mode)
{
    for (size_t i = 0; i < rep->count; i++) {
        const struct result_key *k = &rep->lines[i].key;
        if (strcmp(k->variant, variant) == 0 && k->seq_len == seq && strcmp(k->mode, mode) == 0)
            return &rep->lines[i];
    }
    return NULL;
}

#define ck_assert_verdict(rep, variant, seq, mode, want)                                     \
    do {                                                                                     \
        const struct gate_line *gl_ = find_line((rep), (variant), (seq), (mode));            \
        ck_assert_msg(gl_ != NULL, "no report line for %s S=%d %s", (variant), (seq), (mode)); \
        ck_assert_msg(gl_->verdict == (want), "%s S=%d %s: verdict %s (%s), expected %s",     \
                      (variant), (seq), (mode), gate_verdict_name(gl_->verdict), gl_->why,   \
                      gate_verdict_name(want));                                              \
    } while (0)

/* Runs build/regress with the NULL-terminated arguments (each quoted). */
static struct run run_regress(const char *arg, ...)
{
    const char *regress = REGRESS;
    ck_assert_msg(access(regress, X_OK) == 0, "%s is not built (make it; run from the repository root)",
                  regress);
    char cmd[4096];
    size_t n = (size_t)snprintf(cmd, sizeof cmd, "%s", regress);
    va_list ap;
    va_start(ap, arg);
    for (const char *a = arg; a; a = va_arg(ap, const char *)) {
        ck_assert_ptr_null(strchr(a, '\''));
        n += (size_t)snprintf(cmd + n, sizeof cmd - n, " '%s'", a);
        ck_assert_uint_lt(n, sizeof cmd);
    }
    va_end(ap);
    return run_shell(cmd, tmpdir);
}

#define ck_assert_exit(run, code)                                                         \
    ck_assert_msg((run).status == (code), "build/regress exited %d, expected %d; stderr: %s", \
                  (run).status, (code), (run).err)

/* msg names "path:line:"; line < 0: any line number. */
static bool names_place(const char *msg, const char *path, int line)
{
    char needle[320];
    if (line >= 0) {
        snprintf(needle, sizeof needle, "%s:%d:", path, line);
        return strstr(msg, needle) != NULL;
    }
    snprintf(needle, sizeof needle, "%s:", path);
    for (const char *p = strstr(msg, needle); p; p = strstr(p + 1, needle)) {
        const char *q = p + strlen(needle);
        if (!isdigit((unsigned char)*q)) continue;
        while (isdigit((unsigned char)*q)) q++;
        if (*q == ':') return true;
    }
    return false;
}

/* Exit 2 with exactly one line on stderr, "regress: ...", naming path:line. */
static void assert_bad_input(const struct run *r, const char *path, int line)
{
    ck_assert_exit(*r, 2);
    const char *nl = strchr(r->err, '\n');
    ck_assert_msg(nl != NULL && nl[1] == '\0', "stderr is not one line: \"%s\"", r->err);
    ck_assert_msg(strncmp(r->err, "regress: ", 9) == 0, "stderr does not start with "
                  "\"regress: \": \"%s\"", r->err);
    if (line >= 0)
        ck_assert_msg(names_place(r->err, path, line), "stderr \"%s\" does not name %s:%d:",
                      r->err, path, line);
    else
        ck_assert_msg(names_place(r->err, path, -1), "stderr \"%s\" does not name %s:LINE:",
                      r->err, path);
}

static struct result_key key(const char *variant, const char *dtype, int batch, int heads,
                             int seq, int dim, int causal, const char *mode)
{
    struct result_key k;
    memset(&k, 0, sizeof k);
    snprintf(k.variant, sizeof k.variant, "%s", variant);
    snprintf(k.dtype, sizeof k.dtype, "%s", dtype);
    k.batch = batch;
    k.heads = heads;
    k.seq_len = seq;
    k.head_dim = dim;
    k.causal = causal;
    snprintf(k.mode, sizeof k.mode, "%s", mode);
    return k;
}

static void read_thresholds_ok(const char *path, struct gate_thresholds *th)
{
    int rc = gate_thresholds_read(path, th);
    ck_assert_msg(rc == ATTN_OK, "gate_thresholds_read(%s) = %d: %s", path, rc,
                  attn_error_message());
}

#define ck_assert_settings(th, k, slow, minms, k_)                                          \
    do {                                                                                    \
        struct result_key key_ = (k);                                                       \
        struct gate_settings s_ = gate_settings_for((th), &key_);                           \
        char lab_[160];                                                                     \
        result_key_label(&key_, lab_, sizeof lab_);                                         \
        ck_assert_msg(fabs(s_.slowdown - (slow)) < 1e-12 && fabs(s_.min_ms - (minms)) < 1e-12 \
                          && fabs(s_.noise_k - (k_)) < 1e-12,                               \
                      "%s: slowdown=%g min_ms=%g noise_k=%g, expected %g %g %g", lab_,     \
                      s_.slowdown, s_.min_ms, s_.noise_k, (double)(slow), (double)(minms),  \
                      (double)(k_));                                                        \
    } while (0)

/* The four rows of a small quiet run: naive and inplace, cold and graph. */
static const struct rspec base4[] = {
    {.variant = "naive", .seq = 1024, .mode = "cold", .ms = 1.0},
    {.variant = "naive", .seq = 1024, .mode = "graph", .ms = 1.2},
    {.variant = "inplace", .seq = 1024, .mode = "cold", .ms = 0.8},
    {.variant = "inplace", .seq = 1024, .mode = "graph", .ms = 0.9},
};

/* ============================================================== comparison */

START_TEST(test_identical_files_pass)
{
    path_t base = write_rows("base.csv", base4, NELEMS(base4));
    path_t cur = write_rows("cur.csv", base4, NELEMS(base4));
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_uint_eq(rep.compared, NELEMS(base4));
    ck_assert_uint_eq(rep.regressed, 0);
    ck_assert_uint_eq(rep.failed, 0);
    ck_assert_uint_eq(rep.missing, 0);
    ck_assert_uint_eq(rep.added, 0);
    ck_assert_uint_eq(rep.improved, 0);
    ck_assert_uint_eq(rep.count, NELEMS(base4));
    for (size_t i = 0; i < NELEMS(base4); i++) {
        ck_assert_verdict(&rep, base4[i].variant, base4[i].seq, base4[i].mode, V_PASS);
        const struct gate_line *l = find_line(&rep, base4[i].variant, base4[i].seq, base4[i].mode);
        ck_assert_double_eq_tol(l->base_ms, base4[i].ms, 1e-9);
        ck_assert_double_eq_tol(l->cur_ms, base4[i].ms, 1e-9);
        ck_assert_double_eq_tol(l->ratio, 1.0, 1e-9);
    }
    ck_assert_int_eq(gate_exit_code(&rep), 0);
    gate_report_free(&rep);

    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 0);
    run_free(&r);
}
END_TEST

START_TEST(test_slowdown_past_limit_fails)
{
    struct rspec cur4[NELEMS(base4)];
    memcpy(cur4, base4, sizeof cur4);
    cur4[2].ms = 0.88;  /* inplace cold: +10% */
    cur4[1].ms = 1.248; /* naive graph: +4%, under the 5% limit */
    path_t base = write_rows("base.csv", base4, NELEMS(base4));
    path_t cur = write_rows("cur.csv", cur4, NELEMS(cur4));
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "inplace", 1024, "cold", V_SLOWER);
    ck_assert_verdict(&rep, "naive", 1024, "graph", V_PASS);
    ck_assert_verdict(&rep, "naive", 1024, "cold", V_PASS);
    ck_assert_verdict(&rep, "inplace", 1024, "graph", V_PASS);
    const struct gate_line *l = find_line(&rep, "inplace", 1024, "cold");
    ck_assert_double_eq_tol(l->base_ms, 0.8, 1e-9);
    ck_assert_double_eq_tol(l->cur_ms, 0.88, 1e-9);
    ck_assert_double_eq_tol(l->ratio, 1.10, 1e-9);
    ck_assert_double_eq_tol(l->limit, 0.05, 1e-12);
    ck_assert_double_eq_tol(l->noise, sqrt(2.0) * QUIET, 1e-6);
    ck_assert_uint_eq(rep.compared, 4);
    ck_assert_uint_eq(rep.regressed, 1);
    ck_assert_int_eq(gate_exit_code(&rep), 1);
    gate_report_free(&rep);

    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 1);
    run_free(&r);
}
END_TEST

/* A slowdown past the limits at an SM clock lower than the baseline row's by
 * more than the limit is "throttled": reported, exit 0; the same slowdown
 * at (nearly) the same clock, or with a clock unknown, still fails. */
START_TEST(test_slowdown_at_lower_clock_is_throttled)
{
    struct rspec b[NELEMS(base4)], c[NELEMS(base4)];
    memcpy(b, base4, sizeof b);
    for (size_t i = 0; i < NELEMS(b); i++) b[i].clock_mhz = 1980;
    memcpy(c, b, sizeof c);
    c[2].ms = 0.88, c[2].clock_mhz = 1700; /* inplace cold: +10% at a 16% lower clock */
    path_t base = write_rows("base.csv", b, NELEMS(b));
    path_t cur = write_rows("cur.csv", c, NELEMS(c));
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "inplace", 1024, "cold", V_THROTTLED);
    ck_assert_uint_eq(rep.throttled, 1);
    ck_assert_uint_eq(rep.regressed, 0);
    ck_assert_int_eq(gate_exit_code(&rep), 0);
    gate_report_free(&rep);
    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 0);
    ck_assert_msg(strstr(r.out, "1 throttled") != NULL, "summary: %s", r.out);
    run_free(&r);

    c[2].clock_mhz = 1950; /* 1.5% lower: the clock does not explain 10% */
    cur = write_rows("cur.csv", c, NELEMS(c));
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "inplace", 1024, "cold", V_SLOWER);
    ck_assert_int_eq(gate_exit_code(&rep), 1);
    gate_report_free(&rep);

    c[2].clock_mhz = 0; /* clock unknown */
    cur = write_rows("cur.csv", c, NELEMS(c));
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "inplace", 1024, "cold", V_SLOWER);
    gate_report_free(&rep);
}
END_TEST

/* The recorded clock event reasons: a thermal or hardware slowdown this row
 * had and the baseline's did not excuses a slowdown (throttled, named); the
 * power cap both had does not, nor a reason the baseline could not record. */
START_TEST(test_slowdown_with_new_thermal_reason_is_throttled)
{
    struct rspec b[NELEMS(base4)], c[NELEMS(base4)];
    memcpy(b, base4, sizeof b);
    for (size_t i = 0; i < NELEMS(b); i++) b[i].throttle = "sw_power_cap";
    memcpy(c, b, sizeof c);
    c[2].ms = 0.88, c[2].throttle = "sw_power_cap|hw_thermal"; /* inplace cold: +10% */
    path_t base = write_rows("base.csv", b, NELEMS(b));
    path_t cur = write_rows("cur.csv", c, NELEMS(c));
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "inplace", 1024, "cold", V_THROTTLED);
    const struct gate_line *l = find_line(&rep, "inplace", 1024, "cold");
    ck_assert_msg(strstr(l->why, "throttle: sw_power_cap|hw_thermal"), "why: %s", l->why);
    ck_assert_int_eq(gate_exit_code(&rep), 0);
    gate_report_free(&rep);

    c[2].throttle = "sw_power_cap"; /* the cap both rows had explains nothing */
    cur = write_rows("cur.csv", c, NELEMS(c));
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "inplace", 1024, "cold", V_SLOWER);
    gate_report_free(&rep);

    c[2].throttle = "sw_power_cap|hw_thermal";
    for (size_t i = 0; i < NELEMS(b); i++) b[i].throttle = NULL; /* a baseline without reasons */
    base = write_rows("base.csv", b, NELEMS(b));
    cur = write_rows("cur.csv", c, NELEMS(c));
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "inplace", 1024, "cold", V_SLOWER);
    gate_report_free(&rep);

    /* a lower clock names the reasons the row recorded */
    for (size_t i = 0; i < NELEMS(b); i++) b[i].clock_mhz = 1980, c[i].clock_mhz = 1980;
    c[2].clock_mhz = 1700;
    base = write_rows("base.csv", b, NELEMS(b));
    cur = write_rows("cur.csv", c, NELEMS(c));
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "inplace", 1024, "cold", V_THROTTLED);
    l = find_line(&rep, "inplace", 1024, "cold");
    ck_assert_msg(strstr(l->why, "lower SM clock") && strstr(l->why, "hw_thermal"), "why: %s", l->why);
    gate_report_free(&rep);
}
END_TEST

/* The power columns: derived as W × ms and TFLOP/s per W, read back; empty
 * (not zero) where power is unknown; an older run without them still loads;
 * a bad value or word is refused with file:line. */
START_TEST(test_power_columns)
{
    struct rspec rows[2] = {{.variant = "naive", .seq = 1024, .ms = 2.0, .watts = 500,
                             .throttle = "sw_power_cap|0x200"},
                            {.variant = "inplace", .seq = 1024, .ms = 1.0}};
    path_t p = write_rows("power.csv", rows, 2);
    struct result_set set;
    read_ok(p.s, &set);
    const struct result_rec *r = &set.rows[0];
    ck_assert_double_eq_tol(r->watts, 500, 1e-9);
    ck_assert_double_eq_tol(r->mj_per_call, 1000, 1e-6); /* 500 W × 2 ms */
    ck_assert_double_eq_tol(r->tflops_per_watt, r->tflops / 500, 1e-6 * r->tflops);
    ck_assert_double_eq_tol(r->temp_c, 61, 1e-9);
    ck_assert(r->throttle_known);
    ck_assert_uint_eq(r->throttle, 0x4 | 0x200);
    r = &set.rows[1];
    ck_assert(isnan(r->watts) && isnan(r->mj_per_call) && isnan(r->tflops_per_watt) && isnan(r->temp_c));
    ck_assert(!r->throttle_known);
    results_free(&set);

    char names[64];
    ck_assert_str_eq(results_throttle_names(0x4 | 0x40, names, sizeof names), "sw_power_cap|hw_thermal");
    ck_assert_str_eq(results_throttle_names(0, names, sizeof names), "");
    unsigned long long mask;
    ck_assert_int_eq(results_throttle_parse("idle|hw_slowdown", &mask), ATTN_OK);
    ck_assert_uint_eq(mask, 0x9);

    path_t old = write_text("old.csv", "variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,ms_median,noise_rel\n"
                                       "naive,bf16,2,16,1024,64,1,cold,ok,0.69,0.01\n");
    read_ok(old.s, &set);
    ck_assert(isnan(set.rows[0].watts) && !set.rows[0].throttle_known);
    results_free(&set);

    static const struct { const char *column, *value, *says; } bad[] = {
        {"throttle", "sw_power_cap|fast", "unknown throttle reason 'fast'"},
        {"watts", "inf", "watts 'inf'"},
        {"watts", "-3", "watts '-3'"},
        {"tflops_per_watt", "nan", "tflops_per_watt 'nan'"},
        {"temp_c", "1e999", "temp_c '1e999'"},
    };
    for (size_t i = 0; i < NELEMS(bad); i++) {
        struct rspec row = {.variant = "naive", .seq = 1024, .ms = 2.0, .watts = 500,
                            .set_column = bad[i].column, .set_value = bad[i].value};
        path_t q = write_rows("bad.csv", &row, 1);
        ck_assert_int_eq(results_read(q.s, &set), ATTN_ERR_INPUT);
        ck_assert_msg(strstr(attn_error_message(), bad[i].says) && names_place(attn_error_message(), q.s, 2),
                      "%s=%s: %s", bad[i].column, bad[i].value, attn_error_message());
    }
}
END_TEST

START_TEST(test_slowdown_inside_noise_passes)
{
    const struct rspec noisy_base[] = {{.variant = "naive", .seq = 2048, .ms = 1.0, .noise = 0.05},
                                       {.variant = "inplace", .seq = 2048, .ms = 0.8, .noise = 0.05}};
    const struct rspec noisy_cur[] = {{.variant = "naive", .seq = 2048, .ms = 1.06, .noise = 0.05},
                                      {.variant = "inplace", .seq = 2048, .ms = 0.8, .noise = 0.05}};
    path_t base = write_rows("noisy_base.csv", noisy_base, 2);
    path_t cur = write_rows("noisy_cur.csv", noisy_cur, 2);
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    /* +6% < 2·√(0.05² + 0.05²) = 14% */
    ck_assert_verdict(&rep, "naive", 2048, "cold", V_PASS);
    const struct gate_line *l = find_line(&rep, "naive", 2048, "cold");
    ck_assert_double_eq_tol(l->noise, sqrt(0.05 * 0.05 * 2), 1e-6);
    ck_assert_uint_eq(rep.regressed, 0);
    ck_assert_int_eq(gate_exit_code(&rep), 0);
    gate_report_free(&rep);
    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 0);
    run_free(&r);

    /* The same +6% on quiet rows is a regression. */
    const struct rspec quiet_base[] = {{.variant = "naive", .seq = 2048, .ms = 1.0},
                                       {.variant = "inplace", .seq = 2048, .ms = 0.8}};
    const struct rspec quiet_cur[] = {{.variant = "naive", .seq = 2048, .ms = 1.06},
                                      {.variant = "inplace", .seq = 2048, .ms = 0.8}};
    base = write_rows("quiet_base.csv", quiet_base, 2);
    cur = write_rows("quiet_cur.csv", quiet_cur, 2);
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "naive", 2048, "cold", V_SLOWER);
    ck_assert_verdict(&rep, "inplace", 2048, "cold", V_PASS);
    ck_assert_uint_eq(rep.regressed, 1);
    ck_assert_int_eq(gate_exit_code(&rep), 1);
    gate_report_free(&rep);
    r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 1);
    run_free(&r);
}
END_TEST

START_TEST(test_tiny_difference_under_min_ms_passes)
{
    /* +10% of 0.01 ms is 0.001 ms, under min_ms = 0.002. */
    const struct rspec b[] = {{.variant = "naive", .seq = 128, .ms = 0.01},
                              {.variant = "inplace", .seq = 128, .ms = 0.01}};
    const struct rspec c[] = {{.variant = "naive", .seq = 128, .ms = 0.011},
                              {.variant = "inplace", .seq = 128, .ms = 0.01}};
    path_t base = write_rows("base.csv", b, 2);
    path_t cur = write_rows("cur.csv", c, 2);
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "naive", 128, "cold", V_PASS);
    ck_assert_int_eq(gate_exit_code(&rep), 0);
    gate_report_free(&rep);
    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 0);
    run_free(&r);

    /* With a smaller min_ms the same change counts. */
    struct gate_thresholds th;
    gate_thresholds_default(&th);
    th.defaults.min_ms = 0.0005;
    ck_assert_int_eq(compare(base, cur, &th, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "naive", 128, "cold", V_SLOWER);
    ck_assert_int_eq(gate_exit_code(&rep), 1);
    gate_report_free(&rep);
    path_t conf = write_text("min.conf", "default slowdown=5% min_ms=0.0005 noise_k=2\n");
    r = run_regress("--results", cur.s, "--baseline", base.s, "--thresholds", conf.s, NULL);
    ck_assert_exit(r, 1);
    run_free(&r);
}
END_TEST

START_TEST(test_improvement_is_faster_and_passes)
{
    struct rspec cur4[NELEMS(base4)];
    memcpy(cur4, base4, sizeof cur4);
    cur4[0].ms = 0.8; /* naive cold: 20% faster */
    path_t base = write_rows("base.csv", base4, NELEMS(base4));
    path_t cur = write_rows("cur.csv", cur4, NELEMS(cur4));
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "naive", 1024, "cold", V_FASTER);
    ck_assert_uint_eq(rep.improved, 1);
    ck_assert_uint_eq(rep.regressed, 0);
    ck_assert_int_eq(gate_exit_code(&rep), 0);
    gate_report_free(&rep);
    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 0);
    run_free(&r);
}
END_TEST

START_TEST(test_committed_repeat_agrees)
{
    /* The committed repeat run agrees with its run within 0.30% on every row. */
    path_t base = {"results/h200/20261129T230002Z.csv"};
    path_t cur = {"results/h200/repeats/20261129T230032Z.csv"};
    struct result_set set;
    read_ok(base.s, &set);
    ck_assert_uint_eq(set.count, 100);
    ck_assert_str_eq(set.rows[0].gpu, "h200");
    ck_assert_int_eq(set.rows[0].line, 2);
    ck_assert_int_eq(set.rows[99].line, 101);
    results_free(&set);
    read_ok("results/h200/20261129T224013Z.csv", &set); /* the older, shorter schema */
    ck_assert_uint_eq(set.count, 100);
    results_free(&set);

    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_uint_eq(rep.compared, 100);
    ck_assert_uint_eq(rep.regressed + rep.failed + rep.missing + rep.added, 0);
    ck_assert_int_eq(gate_exit_code(&rep), 0);
    gate_report_free(&rep);
    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 0);
    run_free(&r);
}
END_TEST

/* ================================================================= failures */

START_TEST(test_status_failures)
{
    static const char *const bad[] = {"mismatch", "error", "oom", "skipped"};
    struct rspec b[NELEMS(bad) + 1], c[NELEMS(bad) + 1];
    for (size_t i = 0; i < NELEMS(bad) + 1; i++) {
        b[i] = (struct rspec){.variant = "naive", .seq = 256 << i, .ms = 1.0};
        c[i] = b[i];
        if (i < NELEMS(bad)) c[i].status = bad[i];
    }
    path_t base = write_rows("base.csv", b, NELEMS(b));
    path_t cur = write_rows("cur.csv", c, NELEMS(c));
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    for (size_t i = 0; i < NELEMS(bad); i++)
        ck_assert_verdict(&rep, "naive", 256 << i, "cold", V_FAIL_STATUS);
    ck_assert_verdict(&rep, "naive", 256 << NELEMS(bad), "cold", V_PASS);
    ck_assert_uint_eq(rep.failed, NELEMS(bad));
    ck_assert_int_eq(gate_exit_code(&rep), 1);
    gate_report_free(&rep);

    /* One failing row alone is enough, through the binary too. */
    for (size_t i = 0; i < NELEMS(bad); i++) {
        struct rspec one[2] = {b[NELEMS(bad)], b[i]};
        one[1].status = bad[i];
        char name[32];
        snprintf(name, sizeof name, "cur_%s.csv", bad[i]);
        cur = write_rows(name, one, 2);
        struct rspec bb[2] = {b[NELEMS(bad)], b[i]};
        path_t base1 = write_rows("base1.csv", bb, 2);
        struct run r = run_regress("--results", cur.s, "--baseline", base1.s, NULL);
        ck_assert_msg(r.status == 1, "ok -> %s: exit %d, expected 1 (stderr: %s)", bad[i],
                      r.status, r.err);
        run_free(&r);
    }
}
END_TEST

START_TEST(test_status_unchanged_or_recovered_passes)
{
    /* skipped in both runs, and mismatch in the baseline but ok now. */
    const struct rspec b[] = {{.variant = "naive", .seq = 1024, .ms = 1.0},
                              {.variant = "naive", .seq = 65536, .status = "skipped"},
                              {.variant = "inplace", .seq = 1024, .status = "mismatch"}};
    const struct rspec c[] = {{.variant = "naive", .seq = 1024, .ms = 1.0},
                              {.variant = "naive", .seq = 65536, .status = "skipped"},
                              {.variant = "inplace", .seq = 1024, .ms = 0.8}};
    path_t base = write_rows("base.csv", b, 3);
    path_t cur = write_rows("cur.csv", c, 3);
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_uint_eq(rep.failed, 0);
    ck_assert_uint_eq(rep.regressed, 0);
    ck_assert_int_eq(gate_exit_code(&rep), 0);
    gate_report_free(&rep);
    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 0);
    run_free(&r);
}
END_TEST

START_TEST(test_nan_time_fails)
{
    const struct rspec b[] = {{.variant = "naive", .seq = 1024, .ms = 1.0},
                              {.variant = "naive", .seq = 2048, .ms = 2.0},
                              {.variant = "naive", .seq = 4096, .ms = 4.0}};
    const struct rspec c[] = {
        {.variant = "naive", .seq = 1024, .ms = 1.0, .set_column = "ms_median", .set_value = ""},
        {.variant = "naive", .seq = 2048, .ms = 2.0, .set_column = "ms_median", .set_value = "nan"},
        {.variant = "naive", .seq = 4096, .ms = 4.0}};
    path_t base = write_rows("base.csv", b, 3);
    path_t cur = write_rows("cur.csv", c, 3);
    struct result_set set;
    read_ok(cur.s, &set);
    ck_assert(isnan(set.rows[0].ms_median));
    ck_assert(isnan(set.rows[1].ms_median));
    results_free(&set);
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "naive", 1024, "cold", V_FAIL_NAN);
    ck_assert_verdict(&rep, "naive", 2048, "cold", V_FAIL_NAN);
    ck_assert_verdict(&rep, "naive", 4096, "cold", V_PASS);
    ck_assert_uint_eq(rep.failed, 2);
    ck_assert_int_eq(gate_exit_code(&rep), 1);
    gate_report_free(&rep);
    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 1);
    run_free(&r);
}
END_TEST

START_TEST(test_rel_err_over_tolerance_fails)
{
    const struct rspec b[] = {{.variant = "naive", .seq = 1024, .ms = 1.0},
                              {.variant = "naive", .seq = 2048, .ms = 2.0},
                              {.variant = "naive", .seq = 1024, .ms = 1.0, .dtype = "fp16"}};
    const struct rspec c[] = {{.variant = "naive", .seq = 1024, .ms = 1.0, .rel_err = 0.02},
                              {.variant = "naive", .seq = 2048, .ms = 2.0, .rel_err = 0.005},
                              {.variant = "naive", .seq = 1024, .ms = 1.0, .dtype = "fp16",
                               .rel_err = 0.02}};
    path_t base = write_rows("base.csv", b, 3);
    path_t cur = write_rows("cur.csv", c, 3);
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    int bf16_1024 = -1, fp16_1024 = -1;
    for (size_t i = 0; i < rep.count; i++)
        if (rep.lines[i].key.seq_len == 1024)
            *(strcmp(rep.lines[i].key.dtype, "fp16") == 0 ? &fp16_1024 : &bf16_1024) = (int)i;
    ck_assert_int_ge(bf16_1024, 0);
    ck_assert_int_ge(fp16_1024, 0);
    ck_assert_msg(rep.lines[bf16_1024].verdict == V_FAIL_ERROR, "bf16 rel_err 0.02: %s",
                  gate_verdict_name(rep.lines[bf16_1024].verdict));
    ck_assert_msg(rep.lines[fp16_1024].verdict == V_FAIL_ERROR, "fp16 rel_err 0.02: %s",
                  gate_verdict_name(rep.lines[fp16_1024].verdict));
    ck_assert_verdict(&rep, "naive", 2048, "cold", V_PASS); /* 0.005 is within bf16's 0.01 */
    ck_assert_uint_eq(rep.failed, 2);
    ck_assert_int_eq(gate_exit_code(&rep), 1);
    gate_report_free(&rep);
    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 1);
    run_free(&r);
}
END_TEST

START_TEST(test_missing_row_fails_unless_allowed)
{
    path_t base = write_rows("base.csv", base4, NELEMS(base4));
    path_t cur = write_rows("cur.csv", base4, NELEMS(base4) - 1); /* inplace graph gone */
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "inplace", 1024, "graph", V_MISSING);
    ck_assert_uint_eq(rep.missing, 1);
    ck_assert_int_eq(gate_exit_code(&rep), 1);
    gate_report_free(&rep);
    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 1);
    run_free(&r);

    const struct gate_options allow = {.allow_missing = true};
    ck_assert_int_eq(compare(base, cur, NULL, &allow, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "inplace", 1024, "graph", V_MISSING); /* still listed, as a warning */
    ck_assert_int_eq(gate_exit_code(&rep), 0);
    gate_report_free(&rep);
    r = run_regress("--results", cur.s, "--baseline", base.s, "--allow-missing", NULL);
    ck_assert_exit(r, 0);
    run_free(&r);
}
END_TEST

START_TEST(test_new_row_only_warns)
{
    path_t base = write_rows("base.csv", base4, NELEMS(base4) - 1);
    path_t cur = write_rows("cur.csv", base4, NELEMS(base4)); /* inplace graph is new */
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "inplace", 1024, "graph", V_NEW);
    ck_assert_uint_eq(rep.added, 1);
    ck_assert_uint_eq(rep.compared, NELEMS(base4) - 1);
    ck_assert_int_eq(gate_exit_code(&rep), 0);
    gate_report_free(&rep);
    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 0);
    run_free(&r);
}
END_TEST

START_TEST(test_gpu_mismatch_refused_unless_allowed)
{
    struct rspec cur4[NELEMS(base4)];
    memcpy(cur4, base4, sizeof cur4);
    for (size_t i = 0; i < NELEMS(cur4); i++) cur4[i].gpu = "h100";
    path_t base = write_rows("base.csv", base4, NELEMS(base4));
    path_t cur = write_rows("cur.csv", cur4, NELEMS(cur4));
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_ERR_INPUT);
    ck_assert_message_has("h100");
    ck_assert_message_has("h200");
    gate_report_free(&rep);
    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "h100") && strstr(r.err, "h200"),
                  "stderr does not name both GPUs: %s", r.err);
    ck_assert_msg(strncmp(r.err, "regress: ", 9) == 0, "stderr: %s", r.err);
    run_free(&r);

    const struct gate_options allow = {.allow_gpu_mismatch = true};
    ck_assert_int_eq(compare(base, cur, NULL, &allow, &rep), ATTN_OK);
    ck_assert_uint_eq(rep.compared, NELEMS(base4));
    ck_assert_int_eq(gate_exit_code(&rep), 0);
    gate_report_free(&rep);
    r = run_regress("--results", cur.s, "--baseline", base.s, "--allow-gpu-mismatch", NULL);
    ck_assert_exit(r, 0);
    run_free(&r);
}
END_TEST

/* One row of the results from another GPU is enough to refuse the pair. */
START_TEST(test_gpu_mismatch_in_one_row_refused)
{
    struct rspec cur4[NELEMS(base4)];
    memcpy(cur4, base4, sizeof cur4);
    cur4[2].gpu = "h100";
    path_t base = write_rows("base.csv", base4, NELEMS(base4));
    path_t cur = write_rows("cur.csv", cur4, NELEMS(cur4));
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, NULL, NULL, &rep), ATTN_ERR_INPUT);
    ck_assert_message_has("h100");
    gate_report_free(&rep);
}
END_TEST

/* A blank line at the end (an editor's habit) is not a malformed row. */
START_TEST(test_read_trailing_blank_line)
{
    path_t base = write_rows("base.csv", base4, NELEMS(base4));
    char *text = slurp(base.s);
    size_t n = strlen(text);
    char *more = malloc(n + 2);
    ck_assert_ptr_nonnull(more);
    memcpy(more, text, n);
    strcpy(more + n, "\n");
    path_t blank = write_text("blank.csv", more);
    struct result_set set;
    read_ok(blank.s, &set);
    ck_assert_uint_eq(set.count, NELEMS(base4));
    results_free(&set);
    free(more);
    free(text);
}
END_TEST

START_TEST(test_verdict_names)
{
    const enum gate_verdict all[] = {V_PASS, V_SLOWER, V_FAIL_STATUS, V_FAIL_NAN,
                                     V_FAIL_ERROR, V_MISSING, V_NEW, V_FASTER, V_THROTTLED};
    for (size_t i = 0; i < NELEMS(all); i++) {
        const char *n = gate_verdict_name(all[i]);
        ck_assert_ptr_nonnull(n);
        ck_assert_int_gt(strlen(n), 0);
        for (size_t j = 0; j < i; j++) ck_assert_str_ne(n, gate_verdict_name(all[j]));
    }
}
END_TEST

/* =============================================================== thresholds */

START_TEST(test_thresholds_defaults)
{
    struct gate_thresholds th;
    gate_thresholds_default(&th);
    ck_assert_double_eq_tol(th.defaults.slowdown, 0.05, 1e-12);
    ck_assert_double_eq_tol(th.defaults.min_ms, 0.002, 1e-12);
    ck_assert_double_eq_tol(th.defaults.noise_k, 2, 1e-12);
    ck_assert_int_eq(th.nrules, 0);
    ck_assert_settings(&th, key("naive", "bf16", 8, 16, 1024, 64, 1, "cold"), 0.05, 0.002, 2);
    ck_assert_settings(&th, key("x", "fp16", 1, 1, 16384, 128, 0, "graph"), 0.05, 0.002, 2);
}
END_TEST

START_TEST(test_thresholds_match_lines)
{
    path_t conf = write_text("t.conf",
                             "# the gate's thresholds\n"
                             "\n"
                             "default slowdown=5% min_ms=0.002 noise_k=2   # built-ins\n"
                             "match variant=naive slowdown=10%\n"
                             "match variant=naive seq_len<=1024 slowdown=20% min_ms=0.01\n"
                             "match mode!=graph noise_k=3\n"
                             "match head_dim=128 causal=1 slowdown=0.07\n"
                             "match seq_len>4096 min_ms=0.5\n"
                             "match seq_len<256 slowdown=50%\n"
                             "match batch>=16 dtype=fp16 noise_k=4\n");
    struct gate_thresholds th;
    read_thresholds_ok(conf.s, &th);
    ck_assert_int_eq(th.nrules, 7);
    ck_assert_double_eq_tol(th.defaults.slowdown, 0.05, 1e-12);
    ck_assert_int_eq(th.rules[0].line, 4);
    ck_assert_int_eq(th.rules[6].line, 10);

    /* no rule */
    ck_assert_settings(&th, key("inplace", "bf16", 2, 16, 1024, 64, 1, "graph"), 0.05, 0.002, 2);
    /* variant=naive; mode!=graph */
    ck_assert_settings(&th, key("naive", "bf16", 2, 16, 2048, 64, 1, "cold"), 0.10, 0.002, 3);
    /* the later naive line wins for slowdown and sets min_ms */
    ck_assert_settings(&th, key("naive", "bf16", 2, 16, 1024, 64, 1, "graph"), 0.20, 0.01, 2);
    ck_assert_settings(&th, key("naive", "bf16", 2, 16, 512, 64, 0, "hot"), 0.20, 0.01, 3);
    /* head_dim=128 causal=1 comes later still: 7% over naive's 20%, min_ms stays */
    ck_assert_settings(&th, key("naive", "bf16", 2, 16, 512, 128, 1, "cold"), 0.07, 0.01, 3);
    ck_assert_settings(&th, key("inplace", "bf16", 2, 16, 2048, 128, 1, "graph"), 0.07, 0.002, 2);
    ck_assert_settings(&th, key("inplace", "bf16", 2, 16, 2048, 128, 0, "graph"), 0.05, 0.002, 2);
    /* seq_len>4096: 4096 is not, 8192 is */
    ck_assert_settings(&th, key("inplace", "bf16", 2, 16, 4096, 64, 1, "graph"), 0.05, 0.002, 2);
    ck_assert_settings(&th, key("inplace", "bf16", 2, 16, 8192, 64, 1, "graph"), 0.05, 0.5, 2);
    /* seq_len<256: 128 is, 256 is not */
    ck_assert_settings(&th, key("inplace", "bf16", 2, 16, 128, 64, 0, "graph"), 0.50, 0.002, 2);
    ck_assert_settings(&th, key("inplace", "bf16", 2, 16, 256, 64, 0, "graph"), 0.05, 0.002, 2);
    /* batch>=16 and dtype=fp16, both needed */
    ck_assert_settings(&th, key("inplace", "fp16", 16, 16, 2048, 64, 0, "graph"), 0.05, 0.002, 4);
    ck_assert_settings(&th, key("inplace", "fp16", 15, 16, 2048, 64, 0, "graph"), 0.05, 0.002, 2);
    ck_assert_settings(&th, key("inplace", "bf16", 16, 16, 2048, 64, 0, "graph"), 0.05, 0.002, 2);
}
END_TEST

START_TEST(test_thresholds_percent_and_fraction)
{
    const char *const forms[] = {"default slowdown=5%\n", "default slowdown=0.05\n"};
    for (size_t i = 0; i < NELEMS(forms); i++) {
        char name[32];
        snprintf(name, sizeof name, "form%zu.conf", i);
        path_t conf = write_text(name, forms[i]);
        struct gate_thresholds th;
        read_thresholds_ok(conf.s, &th);
        ck_assert_msg(fabs(th.defaults.slowdown - 0.05) < 1e-12, "%s gives %g", forms[i],
                      th.defaults.slowdown);
    }
    path_t conf = write_text("match.conf", "match variant=naive slowdown=12.5%\n"
                                           "match variant=inplace slowdown=0.125\n");
    struct gate_thresholds th;
    read_thresholds_ok(conf.s, &th);
    ck_assert_settings(&th, key("naive", "bf16", 2, 16, 1024, 64, 1, "cold"), 0.125, 0.002, 2);
    ck_assert_settings(&th, key("inplace", "bf16", 2, 16, 1024, 64, 1, "cold"), 0.125, 0.002, 2);
}
END_TEST

START_TEST(test_thresholds_partial_default_keeps_builtins)
{
    path_t conf = write_text("partial.conf", "default slowdown=8%\r\nmatch mode=graph min_ms=0.01\r\n");
    struct gate_thresholds th;
    read_thresholds_ok(conf.s, &th);
    ck_assert_settings(&th, key("naive", "bf16", 2, 16, 1024, 64, 1, "cold"), 0.08, 0.002, 2);
    ck_assert_settings(&th, key("naive", "bf16", 2, 16, 1024, 64, 1, "graph"), 0.08, 0.01, 2);
}
END_TEST

START_TEST(test_thresholds_committed_file)
{
    struct gate_thresholds th;
    read_thresholds_ok("bench/gate/thresholds.conf", &th);
    struct result_key k = key("naive", "bf16", 2, 16, 1024, 64, 1, "cold");
    struct gate_settings s = gate_settings_for(&th, &k);
    ck_assert(s.slowdown > 0 && s.slowdown < 1);
    ck_assert(s.min_ms >= 0);
    ck_assert(s.noise_k >= 0);
}
END_TEST

/* Lines the parser must refuse, naming file:line and what is wrong: a
 * setting given twice on one line (which one won was an accident of the
 * code), conditions no row can meet (the line would apply to nothing), and
 * unknown keys. The line in error is always the file's second. */
static const struct {
    const char *line, *needle;
} refused_lines[] = {
    {"default slowdown=3% slowdown=900%", "slowdown is set twice"},
    {"match variant=naive ab_slowdown=1% ab_slowdown=2%", "ab_slowdown is set twice"},
    {"match mode=cold confidence=95% min_ms=0.01 confidence=0.9", "confidence is set twice"},
    {"match variant==x slowdown=10%", "no variant name"},
    {"match variant= slowdown=10%", "missing value"},
    {"match dtype=fp32 slowdown=10%", "unknown dtype 'fp32'"},
    {"match mode=warm slowdown=10%", "unknown mode 'warm'"},
    {"match varlen=ragged slowdown=10%", "no varlen"},
    {"match causal=2 slowdown=10%", "no causal meets"},
    {"match causal>1 slowdown=10%", "no causal meets"},
    {"match causal!=0 causal!=1 slowdown=10%", "'causal!=0 causal!=1'"},
    {"match head_dim=0 slowdown=10%", "no head_dim meets"},
    {"match batch<1 slowdown=10%", "no batch meets"},
    {"match kv_heads<=0 slowdown=10%", "no kv_heads meets"},
    {"match seq_len=-512 slowdown=10%", "no seq_len meets"},
    {"match seq_len=512 seq_len=1024 slowdown=10%", "'seq_len=512 seq_len=1024'"},
    {"match seq_len<4 seq_len>8 slowdown=10%", "'seq_len<4 seq_len>8'"},
    {"match seq_len>=512 seq_len!=512 seq_len<513 slowdown=10%", "no seq_len meets"},
    {"match seq_len=99999999999 slowdown=10%", "no seq_len meets"},
    {"match variant=naive variant=inplace slowdown=10%", "'variant=naive variant=inplace'"},
    {"match variant=naive variant!=naive slowdown=10%", "no variant meets"},
    {"match mode!=cold mode!=hot mode!=graph slowdown=10%", "no mode meets"},
    {"match dtype!=bf16 dtype!=fp16 slowdown=10%", "no dtype meets"},
    {"match seq_len=512 slowdwn=5%", "'slowdwn': unknown key"},
    {"match colour=red slowdown=5%", "'colour': unknown key"},
    {"default slowdown=5% speed=3", "'speed': unknown setting"},
    {"default min_ms=5%", "min_ms takes a plain number"},
    {"default confidence=100%", "confidence must be in (50%, 100%)"},
    {"default slowdown=1000%", "slowdown must be under 1000%"},
};

START_TEST(test_thresholds_refused_lines)
{
    char text[256];
    snprintf(text, sizeof text, "default slowdown=3%%\n%s\n", refused_lines[_i].line);
    path_t conf = write_text("refused.conf", text);
    struct gate_thresholds th;
    attn_error_clear();
    ck_assert_msg(gate_thresholds_read(conf.s, &th) == ATTN_ERR_INPUT, "'%s' was accepted",
                  refused_lines[_i].line);
    ck_assert_msg(names_place(attn_error_message(), conf.s, 2), "'%s': message \"%s\" does not "
                  "name line 2", refused_lines[_i].line, attn_error_message());
    ck_assert_message_has(refused_lines[_i].needle);
}
END_TEST

/* What the checks above must not refuse: ranges, exclusions that leave a
 * value, and every field's valid forms. */
START_TEST(test_thresholds_satisfiable_lines_accepted)
{
    path_t conf = write_text("ok.conf",
                             "match seq_len>=512 seq_len<=2048 seq_len!=1024 slowdown=10%\n"
                             "match seq_len>=512 seq_len<513 min_ms=0.01\n"
                             "match causal!=0 noise_k=3\n"
                             "match causal<1 causal>=0 noise_k=4\n"
                             "match mode!=cold mode!=hot ab_slowdown=3%\n"
                             "match dtype!=bf16 confidence=95%\n"
                             "match variant!=naive variant!=inplace variant=flash_mma slowdown=7%\n"
                             "match variant=flash_hopper_lab kv_heads=8 heads>=8 slowdown=8%\n"
                             "match varlen=none batch=1 slowdown=9%\n"
                             "match varlen=uniform:0.5 slowdown=11%\n"
                             "match varlen=lens:128+256 seq_len=256 slowdown=12%\n"
                             "match seq_len<=1073741824 head_dim>=1 slowdown=13%\n");
    struct gate_thresholds th;
    read_thresholds_ok(conf.s, &th);
    ck_assert_int_eq(th.nrules, 12);
    struct result_key k = key("flash_mma", "fp16", 2, 16, 2048, 64, 0, "graph");
    ck_assert_double_eq_tol(gate_settings_for(&th, &k).slowdown, 0.13, 1e-12);
    ck_assert_double_eq_tol(gate_settings_for(&th, &k).ab_slowdown, 0.03, 1e-12);
    ck_assert_double_eq_tol(gate_settings_for(&th, &k).noise_k, 4, 1e-12);
}
END_TEST

START_TEST(test_thresholds_applied_by_compare)
{
    /* +8% on both: naive's 10% limit lets it pass, inplace's 5% does not. */
    const struct rspec b[] = {{.variant = "naive", .seq = 1024, .ms = 1.0},
                              {.variant = "inplace", .seq = 1024, .ms = 1.0}};
    const struct rspec c[] = {{.variant = "naive", .seq = 1024, .ms = 1.08},
                              {.variant = "inplace", .seq = 1024, .ms = 1.08}};
    path_t base = write_rows("base.csv", b, 2);
    path_t cur = write_rows("cur.csv", c, 2);
    path_t conf = write_text("t.conf", "default slowdown=5% min_ms=0.002 noise_k=2\n"
                                       "match variant=naive slowdown=10%\n");
    struct gate_thresholds th;
    read_thresholds_ok(conf.s, &th);
    struct gate_report rep;
    ck_assert_int_eq(compare(base, cur, &th, NULL, &rep), ATTN_OK);
    ck_assert_verdict(&rep, "naive", 1024, "cold", V_PASS);
    ck_assert_verdict(&rep, "inplace", 1024, "cold", V_SLOWER);
    ck_assert_double_eq_tol(find_line(&rep, "naive", 1024, "cold")->limit, 0.10, 1e-12);
    ck_assert_double_eq_tol(find_line(&rep, "inplace", 1024, "cold")->limit, 0.05, 1e-12);
    ck_assert_int_eq(gate_exit_code(&rep), 1);
    gate_report_free(&rep);
    struct run r = run_regress("--results", cur.s, "--baseline", base.s, "--thresholds",
                               conf.s, NULL);
    ck_assert_exit(r, 1);
    run_free(&r);

    /* Raising everything to 10% passes both. */
    conf = write_text("t10.conf", "default slowdown=10%\n");
    r = run_regress("--results", cur.s, "--baseline", base.s, "--thresholds", conf.s, NULL);
    ck_assert_exit(r, 0);
    run_free(&r);
}
END_TEST

/* ======================================================== reading, awkward */

/* A hand-written header with the required columns and a few more. */
#define HDR "gpu,variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,reason,samples," \
            "ms_median,noise_rel,rel_err\n"
#define ROW(variant, seq, mode, ms) \
    "h200," variant ",bf16,2,16," seq ",64,1," mode ",ok,,20," ms ",0.002,0.002\n"

START_TEST(test_read_values)
{
    path_t p = write_rows("rows.csv", base4, NELEMS(base4));
    struct result_set set;
    read_ok(p.s, &set);
    ck_assert_uint_eq(set.count, 4);
    ck_assert_str_eq(set.path, p.s);
    const struct result_rec *r = &set.rows[2];
    ck_assert_str_eq(r->key.variant, "inplace");
    ck_assert_str_eq(r->key.dtype, "bf16");
    ck_assert_int_eq(r->key.batch, 2);
    ck_assert_int_eq(r->key.heads, 16);
    ck_assert_int_eq(r->key.seq_len, 1024);
    ck_assert_int_eq(r->key.head_dim, 64);
    ck_assert_int_eq(r->key.causal, 1);
    ck_assert_str_eq(r->key.mode, "cold");
    ck_assert_str_eq(r->gpu, "h200");
    ck_assert_str_eq(r->status, "ok");
    ck_assert_int_eq(r->line, 4);
    ck_assert_double_eq_tol(r->ms_median, 0.8, 1e-12);
    ck_assert_double_eq_tol(r->noise_rel, QUIET, 1e-12);
    ck_assert_double_eq_tol(r->rel_err, 0.002, 1e-12);
    ck_assert_int_eq(r->samples, 20);
    ck_assert(result_key_equal(&set.rows[0].key, &set.rows[0].key));
    ck_assert(!result_key_equal(&set.rows[0].key, &set.rows[1].key)); /* mode differs */
    ck_assert(!result_key_equal(&set.rows[0].key, &set.rows[2].key)); /* variant differs */
    results_free(&set);

    struct result_key k = key("naive", "bf16", 2, 16, 1024, 64, 1, "cold");
    char buf[128];
    ck_assert_str_eq(result_key_label(&k, buf, sizeof buf),
                     "naive bf16 B=2 H=16 S=1024 D=64 causal init=uniform cold");
}
END_TEST

START_TEST(test_read_quoted_fields)
{
    path_t p = write_text("quoted.csv",
                          HDR
                          "h200,\"naive\",bf16,2,16,65536,64,1,cold,skipped,"
                          "\"needs 8 GiB, has 4; said \"\"no\"\", twice\",,,,\n"
                          "h200,inplace,bf16,2,16,1024,64,1,cold,mismatch,"
                          "\"max err 0.5 at (1, 2, 3)\",,,,0.3\n" ROW("inplace", "2048", "cold", "0.75"));
    struct result_set set;
    read_ok(p.s, &set);
    ck_assert_uint_eq(set.count, 3);
    const struct result_rec *r = &set.rows[0];
    ck_assert_str_eq(r->key.variant, "naive");
    ck_assert_int_eq(r->key.seq_len, 65536);
    ck_assert_str_eq(r->key.mode, "cold");
    ck_assert_str_eq(r->status, "skipped");
    ck_assert(isnan(r->ms_median));
    ck_assert(isnan(r->noise_rel));
    ck_assert(isnan(r->rel_err));
    ck_assert_int_eq(r->samples, -1);
    r = &set.rows[1];
    ck_assert_str_eq(r->status, "mismatch");
    ck_assert_double_eq_tol(r->rel_err, 0.3, 1e-12);
    r = &set.rows[2];
    ck_assert_int_eq(r->key.seq_len, 2048);
    ck_assert_double_eq_tol(r->ms_median, 0.75, 1e-12);
    ck_assert_int_eq(r->line, 4);
    results_free(&set);
}
END_TEST

START_TEST(test_read_crlf)
{
    /* mode last, so a kept '\r' would show in a string, not vanish in strtod */
    path_t p = write_text("crlf.csv",
                          "variant,dtype,batch,heads,seq_len,head_dim,causal,status,ms_median,"
                          "noise_rel,mode\r\n"
                          "naive,bf16,2,16,1024,64,1,ok,1.25,0.003,cold\r\n"
                          "naive,bf16,2,16,1024,64,1,ok,1.5,0.004,graph\r\n");
    struct result_set set;
    read_ok(p.s, &set);
    ck_assert_uint_eq(set.count, 2);
    ck_assert_str_eq(set.rows[0].key.mode, "cold");
    ck_assert_str_eq(set.rows[1].key.mode, "graph");
    ck_assert_double_eq_tol(set.rows[0].ms_median, 1.25, 1e-12);
    ck_assert_double_eq_tol(set.rows[1].noise_rel, 0.004, 1e-12);
    ck_assert_int_eq(set.rows[1].line, 3);
    results_free(&set);
}
END_TEST

START_TEST(test_read_comment_lines_before_header)
{
    path_t p = write_text("comments.csv",
                          "# attnbench run 20261130T000000Z\n"
                          "# gpu: NVIDIA H200, driver 560.35.03, cuda 12.6\n"
                          HDR ROW("naive", "1024", "cold", "1.0") ROW("naive", "1024", "graph", "1.1"));
    struct result_set set;
    read_ok(p.s, &set);
    ck_assert_uint_eq(set.count, 2);
    ck_assert_int_eq(set.rows[0].line, 4);
    ck_assert_int_eq(set.rows[1].line, 5);
    ck_assert_str_eq(set.rows[1].key.mode, "graph");
    ck_assert_double_eq_tol(set.rows[1].ms_median, 1.1, 1e-12);
    results_free(&set);
}
END_TEST

START_TEST(test_read_column_order_and_extra_columns)
{
    path_t p = write_text("order.csv",
                          "mode,foo,noise_rel,ms_median,status,causal,head_dim,seq_len,bar,heads,"
                          "batch,dtype,variant,gpu,rel_err,samples,zzz\n"
                          "graph,x,0.004,2.5,ok,0,128,4096,\"y, z\",32,4,fp16,inplace,h200,0.0007,17,\n"
                          "cold,,0.001,0.125,ok,1,64,512,,8,1,bf16,naive,h200,,33,9\n");
    struct result_set set;
    read_ok(p.s, &set);
    ck_assert_uint_eq(set.count, 2);
    const struct result_rec *r = &set.rows[0];
    ck_assert_str_eq(r->key.variant, "inplace");
    ck_assert_str_eq(r->key.dtype, "fp16");
    ck_assert_int_eq(r->key.batch, 4);
    ck_assert_int_eq(r->key.heads, 32);
    ck_assert_int_eq(r->key.seq_len, 4096);
    ck_assert_int_eq(r->key.head_dim, 128);
    ck_assert_int_eq(r->key.causal, 0);
    ck_assert_str_eq(r->key.mode, "graph");
    ck_assert_str_eq(r->gpu, "h200");
    ck_assert_str_eq(r->status, "ok");
    ck_assert_double_eq_tol(r->ms_median, 2.5, 1e-12);
    ck_assert_double_eq_tol(r->noise_rel, 0.004, 1e-12);
    ck_assert_double_eq_tol(r->rel_err, 0.0007, 1e-12);
    ck_assert_int_eq(r->samples, 17);
    r = &set.rows[1];
    ck_assert_str_eq(r->key.variant, "naive");
    ck_assert_int_eq(r->key.batch, 1);
    ck_assert_int_eq(r->key.heads, 8);
    ck_assert_int_eq(r->key.seq_len, 512);
    ck_assert_int_eq(r->key.causal, 1);
    ck_assert(isnan(r->rel_err));
    ck_assert_int_eq(r->samples, 33);
    results_free(&set);
}
END_TEST

START_TEST(test_read_missing_file)
{
    path_t p = tmp_path("no_such_file.csv");
    struct result_set set;
    ck_assert_int_eq(results_read(p.s, &set), ATTN_ERR_INPUT);
    ck_assert_message_has(p.s);
    path_t ok = write_rows("ok.csv", base4, NELEMS(base4));
    struct run r = run_regress("--results", p.s, "--baseline", ok.s, NULL);
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, p.s) != NULL, "stderr does not name %s: %s", p.s, r.err);
    run_free(&r);
    struct gate_thresholds th;
    ck_assert_int_eq(gate_thresholds_read(p.s, &th), ATTN_ERR_INPUT);
    ck_assert_message_has(p.s);
}
END_TEST

START_TEST(test_usage_errors)
{
    path_t ok = write_rows("ok.csv", base4, NELEMS(base4));
    struct run r = run_regress("--results", ok.s, "--baseline", NULL); /* no value */
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "--baseline") != NULL, "stderr: %s", r.err);
    run_free(&r);
    r = run_regress("--results", ok.s, "--baseline", ok.s, "--frobnicate", NULL);
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "--frobnicate") != NULL, "stderr: %s", r.err);
    run_free(&r);
}
END_TEST

/* ========================================================== malformed input */

/* One malformed input: a results file (given as --results on even cases, as
 * --baseline on odd ones) or a thresholds file, and the line its message must
 * name (-1: any line number). */
static const struct {
    const char *what;
    const char *results;    /* NULL: a valid file */
    const char *thresholds; /* NULL: none */
    int line;
} malformed[] = {
    {"empty file", "", NULL, -1},
    {"header only", HDR, NULL, -1},
    {"no ms_median column",
     "gpu,variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,noise_rel\n"
     "h200,naive,bf16,2,16,1024,64,1,cold,ok,0.002\n", NULL, 1},
    {"batch=abc", HDR ROW("naive", "1024", "cold", "1.0")
     "h200,naive,bf16,abc,16,1024,64,1,graph,ok,,20,1.0,0.002,0.002\n", NULL, 3},
    {"a field too many", HDR "h200,naive,bf16,2,16,1024,64,1,cold,ok,,20,1.0,0.002,0.002,7\n",
     NULL, 2},
    {"a field too few", HDR ROW("naive", "1024", "cold", "1.0")
     "h200,naive,bf16,2,16,1024,64,1,graph,ok,,20,1.0,0.002\n", NULL, 3},
    {"duplicate key", HDR ROW("naive", "1024", "cold", "1.0") ROW("naive", "1024", "graph", "1.1")
     ROW("naive", "1024", "cold", "1.2"), NULL, 4},
    {"torn only line", HDR "h200,naive,bf16,2,16,2048,64,1,cold,ok,,20,2.0,0.002,0.002", NULL, 2},
    {"mode warm", HDR ROW("naive", "1024", "cold", "1.0") ROW("naive", "1024", "warm", "1.1"),
     NULL, 3},
    {"status great after '#' lines", "# run 1\n# gpu h200\n" HDR ROW("naive", "1024", "cold", "1.0")
     "h200,naive,bf16,2,16,1024,64,1,graph,great,,20,1.0,0.002,0.002\n", NULL, 5},
    {"ms_median=fast", HDR "h200,naive,bf16,2,16,1024,64,1,cold,ok,,20,fast,0.002,0.002\n", NULL, 2},
    {"unterminated quote", HDR ROW("naive", "1024", "cold", "1.0")
     "h200,naive,bf16,2,16,1024,64,1,graph,ok,\"oops,20,1.0,0.002,0.002\n", NULL, 3},
    {"seq_len=1024x", HDR "h200,naive,bf16,2,16,1024x,64,1,cold,ok,,20,1.0,0.002,0.002\n", NULL, 2},
    {"thresholds: unknown key", NULL, "# thresholds\ndefault slowdown=5% speed=3\n", 2},
    {"thresholds: unknown field", NULL, "default slowdown=5%\n\nmatch color=red slowdown=10%\n", 3},
    {"thresholds: slowdown=abc%", NULL, "default slowdown=abc%\n", 1},
    {"thresholds: unknown operator", NULL, "default slowdown=5%\nmatch seq_len~1024 slowdown=10%\n", 2},
    {"thresholds: unknown verb", NULL, "defaults slowdown=5%\n", 1},
    {"thresholds: text for a number", NULL, "# x\n# y\nmatch seq_len<=long slowdown=10%\n", 3},
    {"thresholds: empty value", NULL, "default min_ms=\n", 1},
    {"thresholds: min_ms=2ms", NULL, "default slowdown=5%\ndefault min_ms=2ms\n", 2},
    /* no number may switch a comparison off: inf, nan, out of range are bad input */
    {"ms_median=inf", HDR "h200,naive,bf16,2,16,1024,64,1,cold,ok,,20,inf,0.002,0.002\n", NULL, 2},
    {"ms_median=1e999", HDR "h200,naive,bf16,2,16,1024,64,1,cold,ok,,20,1e999,0.002,0.002\n", NULL, 2},
    {"noise_rel=nan", HDR "h200,naive,bf16,2,16,1024,64,1,cold,ok,,20,1.0,nan,0.002\n", NULL, 2},
    {"noise_rel=inf", HDR ROW("naive", "1024", "cold", "1.0")
     "h200,naive,bf16,2,16,1024,64,1,graph,ok,,20,1.0,inf,0.002\n", NULL, 3},
    {"rel_err=-1", HDR "h200,naive,bf16,2,16,1024,64,1,cold,ok,,20,1.0,0.002,-1\n", NULL, 2},
    {"clock 1e-300", "gpu,variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,ms_median,"
     "noise_rel,sm_clock_start_mhz,sm_clock_end_mhz\nh200,naive,bf16,2,16,1024,64,1,cold,ok,1.0,0.002,"
     "1e-300,1980\n", NULL, 2},
    {"clock inf", "gpu,variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,ms_median,"
     "noise_rel,sm_clock_start_mhz,sm_clock_end_mhz\nh200,naive,bf16,2,16,1024,64,1,cold,ok,1.0,0.002,"
     "1980,inf\n", NULL, 2},
    {"dtype=fp32", HDR "h200,naive,fp32,2,16,1024,64,1,cold,ok,,20,1.0,0.002,0.002\n", NULL, 2},
    {"a column named twice", "gpu,variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,"
     "ms_median,noise_rel,ms_median\nh200,naive,bf16,2,16,1024,64,1,cold,ok,1.0,0.002,9.0\n", NULL, 1},
    {"a 64-byte variant name", HDR "h200,v234567890123456789012345678901234567890123456789012345678901234,"
     "bf16,2,16,1024,64,1,cold,ok,,20,1.0,0.002,0.002\n", NULL, 2},
    {"thresholds: min_ms=inf", NULL, "default min_ms=inf\n", 1},
    {"thresholds: noise_k=inf", NULL, "# k\ndefault noise_k=inf\n", 2},
    {"thresholds: slowdown=nan", NULL, "default slowdown=nan\n", 1},
};

START_TEST(test_malformed_input)
{
    const int i = _i;
    const char *what = malformed[i].what;
    path_t good = write_rows("good.csv", base4, NELEMS(base4));
    char name[32];
    if (malformed[i].results) {
        snprintf(name, sizeof name, "bad_%d.csv", i);
        path_t bad = write_text(name, malformed[i].results);
        struct result_set set;
        attn_error_clear();
        int rc = results_read(bad.s, &set);
        if (rc == ATTN_OK) results_free(&set);
        ck_assert_msg(rc == ATTN_ERR_INPUT, "%s: results_read = %d, expected ATTN_ERR_INPUT",
                      what, rc);
        ck_assert_msg(names_place(attn_error_message(), bad.s, malformed[i].line),
                      "%s: message \"%s\" does not name %s:%d:", what, attn_error_message(),
                      bad.s, malformed[i].line);
        struct run r = i % 2 == 0 ? run_regress("--results", bad.s, "--baseline", good.s, NULL)
                                  : run_regress("--results", good.s, "--baseline", bad.s, NULL);
        ck_assert_msg(r.status == 2, "%s: build/regress exited %d, expected 2; stderr: %s",
                      what, r.status, r.err);
        assert_bad_input(&r, bad.s, malformed[i].line);
        run_free(&r);
    } else {
        snprintf(name, sizeof name, "bad_%d.conf", i);
        path_t bad = write_text(name, malformed[i].thresholds);
        struct gate_thresholds th;
        attn_error_clear();
        int rc = gate_thresholds_read(bad.s, &th);
        ck_assert_msg(rc == ATTN_ERR_INPUT,
                      "%s: gate_thresholds_read = %d, expected ATTN_ERR_INPUT", what, rc);
        ck_assert_msg(names_place(attn_error_message(), bad.s, malformed[i].line),
                      "%s: message \"%s\" does not name %s:%d:", what, attn_error_message(),
                      bad.s, malformed[i].line);
        struct run r = run_regress("--results", good.s, "--baseline", good.s, "--thresholds",
                                   bad.s, NULL);
        ck_assert_msg(r.status == 2, "%s: build/regress exited %d, expected 2; stderr: %s",
                      what, r.status, r.err);
        assert_bad_input(&r, bad.s, malformed[i].line);
        run_free(&r);
    }
}
END_TEST

/* =================================================================== report */

/* A report with two regressions of different size and two passing rows, the
 * worst one last in the files. */
static void worst_last_report(struct gate_report *rep, path_t *base, path_t *cur)
{
    const struct rspec b[] = {{.variant = "calm_v", .seq = 1024, .ms = 1.0},
                              {.variant = "mild_v", .seq = 1024, .ms = 1.0},
                              {.variant = "quiet_v", .seq = 1024, .ms = 1.0},
                              {.variant = "worst_v", .seq = 1024, .ms = 1.0}};
    const struct rspec c[] = {{.variant = "calm_v", .seq = 1024, .ms = 1.0},
                              {.variant = "mild_v", .seq = 1024, .ms = 1.10},
                              {.variant = "quiet_v", .seq = 1024, .ms = 1.01},
                              {.variant = "worst_v", .seq = 1024, .ms = 1.40}};
    *base = write_rows("base.csv", b, 4);
    *cur = write_rows("cur.csv", c, 4);
    ck_assert_int_eq(compare(*base, *cur, NULL, NULL, rep), ATTN_OK);
    ck_assert_verdict(rep, "worst_v", 1024, "cold", V_SLOWER);
    ck_assert_verdict(rep, "mild_v", 1024, "cold", V_SLOWER);
    ck_assert_uint_eq(rep->regressed, 2);
}

/* gate_print / gate_print_markdown into a string. */
static char *print_to_string(struct gate_report *rep, path_t base, path_t cur,
                             bool markdown)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    if (markdown) gate_print_markdown(rep, base.s, cur.s, f);
    else gate_print(rep, base.s, cur.s, f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_ptr_nonnull(text);
    return text;
}

/* The offset of needle in text; -1 when absent. */
static long offset_of(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    return p ? (long)(p - text) : -1;
}

/* worst_v, then mild_v; any passing row listed comes after both. */
static void assert_worst_first(const char *text)
{
    long worst = offset_of(text, "worst_v"), mild = offset_of(text, "mild_v");
    ck_assert_msg(worst >= 0, "worst_v is not listed:\n%s", text);
    ck_assert_msg(mild >= 0, "mild_v is not listed:\n%s", text);
    ck_assert_msg(worst < mild, "mild_v listed before worst_v:\n%s", text);
    const char *passing[] = {"calm_v", "quiet_v"};
    for (size_t i = 0; i < 2; i++) {
        long at = offset_of(text, passing[i]);
        ck_assert_msg(at < 0 || at > mild, "%s listed before a regression:\n%s", passing[i], text);
    }
}

/* A summary line: one line with "N compared" and "M slower" (or "M regressed"). */
static bool has_summary_line(const char *text, size_t compared, size_t regressed)
{
    char c[32], r[32], r2[32];
    snprintf(c, sizeof c, "%zu compared", compared);
    snprintf(r, sizeof r, "%zu slower", regressed);
    snprintf(r2, sizeof r2, "%zu regress", regressed);
    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf ? n : sizeof buf - 1), line);
        for (char *p = buf; *p; p++) *p = (char)tolower((unsigned char)*p);
        if (strstr(buf, c) && (strstr(buf, r) || strstr(buf, r2)))
            return true;
        if (!end) break;
        line = end + 1;
    }
    return false;
}

START_TEST(test_print_worst_first)
{
    struct gate_report rep;
    path_t base, cur;
    worst_last_report(&rep, &base, &cur);
    char *text = print_to_string(&rep, base, cur, false);
    assert_worst_first(text);
    ck_assert_msg(has_summary_line(text, rep.compared, rep.regressed),
                  "no summary line with the counts (compared 4, regressed 2):\n%s", text);
    free(text);
    gate_report_free(&rep);

    struct run r = run_regress("--results", cur.s, "--baseline", base.s, NULL);
    ck_assert_exit(r, 1);
    assert_worst_first(r.out);
    run_free(&r);
}
END_TEST

/* A markdown table: a line starting with '|' and a "|---" separator under it. */
static void assert_markdown_table(const char *text)
{
    bool row = false, sep = false;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        if (n > 0 && line[0] == '|') {
            bool only = true;
            for (size_t i = 0; i < n; i++)
                only &= strchr("|-: ", line[i]) != NULL;
            if (only && memmem(line, n, "---", 3) && row) sep = true;
            else if (!only) row = true;
        }
        if (!end) break;
        line = end + 1;
    }
    ck_assert_msg(row && sep, "no markdown table (a '|' line and a '|---' separator):\n%s", text);
}

START_TEST(test_print_markdown)
{
    struct gate_report rep;
    path_t base, cur;
    worst_last_report(&rep, &base, &cur);
    char *text = print_to_string(&rep, base, cur, true);
    assert_markdown_table(text);
    assert_worst_first(text);
    free(text);
    gate_report_free(&rep);

    path_t md = tmp_path("summary.md");
    struct run r = run_regress("--results", cur.s, "--baseline", base.s, "--markdown", md.s, NULL);
    ck_assert_exit(r, 1);
    run_free(&r);
    text = slurp(md.s);
    assert_markdown_table(text);
    assert_worst_first(text);
    free(text);
}
END_TEST

/* =================================================================== suites */

static Suite *compare_suite(void)
{
    Suite *s = suite_create("compare");
    TCase *tc = tcase_create("timing");
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    tcase_add_unchecked_fixture(tc, tmpdir_setup, tmpdir_teardown);
    tcase_add_test(tc, test_identical_files_pass);
    tcase_add_test(tc, test_slowdown_past_limit_fails);
    tcase_add_test(tc, test_slowdown_at_lower_clock_is_throttled);
    tcase_add_test(tc, test_slowdown_with_new_thermal_reason_is_throttled);
    tcase_add_test(tc, test_power_columns);
    tcase_add_test(tc, test_slowdown_inside_noise_passes);
    tcase_add_test(tc, test_tiny_difference_under_min_ms_passes);
    tcase_add_test(tc, test_improvement_is_faster_and_passes);
    tcase_add_test(tc, test_committed_repeat_agrees);
    suite_add_tcase(s, tc);

    tc = tcase_create("failures");
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    tcase_add_unchecked_fixture(tc, tmpdir_setup, tmpdir_teardown);
    tcase_add_test(tc, test_status_failures);
    tcase_add_test(tc, test_status_unchanged_or_recovered_passes);
    tcase_add_test(tc, test_nan_time_fails);
    tcase_add_test(tc, test_rel_err_over_tolerance_fails);
    tcase_add_test(tc, test_missing_row_fails_unless_allowed);
    tcase_add_test(tc, test_new_row_only_warns);
    tcase_add_test(tc, test_gpu_mismatch_refused_unless_allowed);
    tcase_add_test(tc, test_gpu_mismatch_in_one_row_refused);
    tcase_add_test(tc, test_verdict_names);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *thresholds_suite(void)
{
    Suite *s = suite_create("thresholds");
    TCase *tc = tcase_create("rules");
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    tcase_add_unchecked_fixture(tc, tmpdir_setup, tmpdir_teardown);
    tcase_add_test(tc, test_thresholds_defaults);
    tcase_add_test(tc, test_thresholds_match_lines);
    tcase_add_test(tc, test_thresholds_percent_and_fraction);
    tcase_add_test(tc, test_thresholds_partial_default_keeps_builtins);
    tcase_add_test(tc, test_thresholds_committed_file);
    tcase_add_test(tc, test_thresholds_applied_by_compare);
    tcase_add_loop_test(tc, test_thresholds_refused_lines, 0, (int)NELEMS(refused_lines));
    tcase_add_test(tc, test_thresholds_satisfiable_lines_accepted);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *read_suite(void)
{
    Suite *s = suite_create("read");
    TCase *tc = tcase_create("awkward");
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    tcase_add_unchecked_fixture(tc, tmpdir_setup, tmpdir_teardown);
    tcase_add_test(tc, test_read_values);
    tcase_add_test(tc, test_read_quoted_fields);
    tcase_add_test(tc, test_read_crlf);
    tcase_add_test(tc, test_read_trailing_blank_line);
    tcase_add_test(tc, test_read_comment_lines_before_header);
    tcase_add_test(tc, test_read_column_order_and_extra_columns);
    suite_add_tcase(s, tc);

    tc = tcase_create("malformed");
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    tcase_add_unchecked_fixture(tc, tmpdir_setup, tmpdir_teardown);
    tcase_add_test(tc, test_read_missing_file);
    tcase_add_test(tc, test_usage_errors);
    tcase_add_loop_test(tc, test_malformed_input, 0, (int)NELEMS(malformed));
    suite_add_tcase(s, tc);
    return s;
}

static Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("print");
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    tcase_add_unchecked_fixture(tc, tmpdir_setup, tmpdir_teardown);
    tcase_add_test(tc, test_print_worst_first);
    tcase_add_test(tc, test_print_markdown);
    suite_add_tcase(s, tc);
    return s;
}

/* --------------------------------------------------- samples and A/B pairs */

/* n rows of one variant at S = 1024, 2048, ...: ms, samples, ab_run. */
static void rows_of(struct rspec *out, int n, const char *variant, double ms, int nsamples,
                    const char *ab_run)
{
    for (int i = 0; i < n; i++)
        out[i] = (struct rspec){.variant = variant, .seq = 1024 << i, .ms = ms * (1 << i),
                                .nsamples = nsamples, .ab_run = ab_run};
}

static void scale_rows(struct rspec *rows, int n, double factor)
{
    for (int i = 0; i < n; i++) rows[i].ms *= factor;
}

START_TEST(test_samples_read_back)
{
    struct rspec rows[2];
    rows_of(rows, 2, "flash_hopper", 1.0, 24, NULL);
    path_t p = write_rows("run.csv", rows, 2);
    struct result_set set;
    read_ok(p.s, &set);
    ck_assert_uint_eq(set.count, 2);
    for (int r = 0; r < 2; r++) {
        ck_assert_uint_eq(set.rows[r].nsample_ms, 24);
        for (int i = 0; i < 24; i++)
            ck_assert_double_eq_tol(set.rows[r].sample_ms[i], sample_of(&rows[r], i), 1e-6 * rows[r].ms);
    }
    results_free(&set);
    /* without the samples file the run still loads, with summaries only */
    path_t sp = tmp_path("run.samples.csv.gz");
    ck_assert_int_eq(unlink(sp.s), 0);
    read_ok(p.s, &set);
    ck_assert_ptr_null(set.rows[0].sample_ms);
    ck_assert_uint_eq(set.rows[0].nsample_ms, 0);
    results_free(&set);
}
END_TEST

/* A samples file that disagrees with its run is refused, naming the file. */
START_TEST(test_samples_malformed)
{
    struct rspec rows[1];
    rows_of(rows, 1, "naive", 1.0, 6, NULL);
    static const char *const head = "variant,dtype,batch,heads,seq_len,head_dim,causal,mode,sample,ms\n";
    static const char *const key = "naive,bf16,2,16,1024,64,1,cold,";
    const struct {
        const char *body; /* the lines after the header */
        int line;         /* the line named, -1: the file only */
        const char *says;
    } cases[] = {
        {"0,1\n1,1\n2,1\n3,1\n4,1\n", -1, "5 samples"},
        {"0,1\n1,1\n3,1\n4,1\n5,1\n6,1\n", 4, "sample 3"},
        {"0,1\n1,1\n2,0\n3,1\n4,1\n5,1\n", 4, "not a positive number"},
        {"0,1\n1,1\n2,nan\n3,1\n4,1\n5,1\n", 4, "not a positive number"},
        {"0,1\n1,1\n2,x\n3,1\n4,1\n5,1\n", 4, "not a positive number"},
    };
    for (size_t c = 0; c < NELEMS(cases); c++) {
        path_t p = write_rows("run.csv", rows, 1);
        char text[1024] = "";
        strcat(text, head);
        for (const char *l = cases[c].body; *l; l = strchr(l, '\n') + 1) {
            strcat(text, key);
            strncat(text, l, (size_t)(strchr(l, '\n') - l + 1));
        }
        unlink(tmp_path("run.samples.csv.gz").s); /* an older run's plain file instead */
        path_t sp = write_text("run.samples.csv", text);
        struct result_set set;
        ck_assert_int_eq(results_read(p.s, &set), ATTN_ERR_INPUT);
        ck_assert_msg(names_place(attn_error_message(), sp.s, cases[c].line) ||
                          (cases[c].line < 0 && strstr(attn_error_message(), sp.s)),
                      "case %zu: \"%s\" does not name %s", c, attn_error_message(), sp.s);
        ck_assert_message_has(cases[c].says);
    }
    /* samples of a key the run lacks (a row cut by a crash) are ignored */
    path_t p = write_rows("run.csv", rows, 1);
    char text[2048] = "";
    strcat(text, head);
    for (int i = 0; i < 6; i++) sprintf(text + strlen(text), "%s%d,1\n", key, i);
    strcat(text, "naive,bf16,2,16,2048,64,1,cold,0,4\n");
    unlink(tmp_path("run.samples.csv.gz").s);
    write_text("run.samples.csv", text);
    struct result_set set;
    read_ok(p.s, &set);
    ck_assert_uint_eq(set.rows[0].nsample_ms, 6);
    results_free(&set);
}
END_TEST

/* With samples on both sides the verdict is the Hodges–Lehmann ratio's lower
 * bound against the limit: `slowdown` for runs measured apart, `ab_slowdown`
 * for the rows of one A/B run. */
START_TEST(test_sample_rule_limits)
{
    path_t conf = write_text("t.conf", "default slowdown=3% ab_slowdown=1% confidence=99%\n");
    struct gate_thresholds th;
    read_thresholds_ok(conf.s, &th);
    const struct {
        double factor;
        const char *ab_run; /* the same in both files, or NULL */
        enum gate_verdict want;
    } cases[] = {
        {1.05, NULL, V_SLOWER},  {1.02, NULL, V_PASS},   {1.02, "AB1", V_SLOWER},
        {1.005, "AB1", V_PASS},  {1.00, "AB1", V_PASS},  {0.95, NULL, V_FASTER},
    };
    for (size_t c = 0; c < NELEMS(cases); c++) {
        struct rspec b[3], k[3];
        rows_of(b, 3, "flash_hopper", 1.0, 40, cases[c].ab_run);
        rows_of(k, 3, "flash_hopper", 1.0, 40, cases[c].ab_run);
        scale_rows(k, 3, cases[c].factor);
        path_t bp = write_rows("base.csv", b, 3), cp = write_rows("cur.csv", k, 3);
        struct gate_report rep;
        ck_assert_int_eq(compare(bp, cp, &th, NULL, &rep), ATTN_OK);
        for (int i = 0; i < 3; i++) {
            const struct gate_line *l = &rep.lines[i];
            ck_assert_msg(l->verdict == cases[c].want, "case %zu row %d: %s, expected %s (%s)", c,
                          i, gate_verdict_name(l->verdict), gate_verdict_name(cases[c].want), l->why);
            ck_assert_msg(l->lo <= l->ratio && l->ratio <= l->hi, "case %zu: bounds", c);
            ck_assert_double_eq_tol(l->ratio, cases[c].factor, 0.002);
            ck_assert(l->paired == (cases[c].ab_run != NULL));
            ck_assert_double_eq_tol(l->limit, cases[c].ab_run ? 0.01 : 0.03, 1e-12);
        }
        gate_report_free(&rep);
    }
}
END_TEST

/* Rows of different A/B runs are not a pair: the wider limit applies. */
START_TEST(test_different_ab_runs_are_not_paired)
{
    struct gate_thresholds th;
    path_t conf = write_text("t.conf", "default slowdown=3% ab_slowdown=1%\n");
    read_thresholds_ok(conf.s, &th);
    struct rspec b[2], k[2];
    rows_of(b, 2, "flash_mma", 1.0, 30, "AB1");
    rows_of(k, 2, "flash_mma", 1.02, 30, "AB2");
    path_t bp = write_rows("base.csv", b, 2), cp = write_rows("cur.csv", k, 2);
    struct gate_report rep;
    ck_assert_int_eq(compare(bp, cp, &th, NULL, &rep), ATTN_OK);
    ck_assert(!rep.lines[0].paired);
    ck_assert_int_eq(rep.lines[0].verdict, V_PASS);
    gate_report_free(&rep);
}
END_TEST

/* A lower clock excuses a slowdown between runs measured apart, never
 * inside an A/B pair (both sides ran on the same board state). */
START_TEST(test_pair_is_never_throttled)
{
    struct gate_thresholds th;
    gate_thresholds_default(&th);
    for (int paired = 0; paired < 2; paired++) {
        struct rspec b[1], k[1];
        rows_of(b, 1, "flash_hopper", 1.0, 30, paired ? "AB1" : NULL);
        rows_of(k, 1, "flash_hopper", 1.08, 30, paired ? "AB1" : NULL);
        b[0].clock_mhz = 1980;
        k[0].clock_mhz = 1700;
        path_t bp = write_rows("base.csv", b, 1), cp = write_rows("cur.csv", k, 1);
        struct gate_report rep;
        ck_assert_int_eq(compare(bp, cp, &th, NULL, &rep), ATTN_OK);
        ck_assert_verdict(&rep, "flash_hopper", 1024, "cold", paired ? V_SLOWER : V_THROTTLED);
        gate_report_free(&rep);
    }
}
END_TEST

/* Summaries on one side only: the summary rule. */
START_TEST(test_samples_on_one_side_use_summaries)
{
    struct gate_thresholds th;
    gate_thresholds_default(&th);
    struct rspec b[1], k[1];
    rows_of(b, 1, "naive", 1.0, 30, NULL);
    rows_of(k, 1, "naive", 1.0, 0, NULL);
    path_t bp = write_rows("base.csv", b, 1), cp = write_rows("cur.csv", k, 1);
    struct gate_report rep;
    ck_assert_int_eq(compare(bp, cp, &th, NULL, &rep), ATTN_OK);
    ck_assert(isnan(rep.lines[0].lo));
    ck_assert_int_eq(rep.lines[0].verdict, V_PASS);
    gate_report_free(&rep);
}
END_TEST

START_TEST(test_run_against_itself_refused)
{
    path_t p = write_rows("run.csv", base4, NELEMS(base4));
    path_t copy = tmp_path("copy.csv");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", p.s, copy.s);
    ck_assert_int_eq(system(cmd), 0);
    struct run r = run_regress("--results", p.s, "--baseline", p.s, NULL);
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "compared with itself"), "stderr: %s", r.err);
    run_free(&r);
    r = run_regress("--results", copy.s, "--baseline", p.s, NULL); /* a copy is the same run */
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.out, "BAD INPUT (exit 2)"), "stdout: %s", r.out);
    run_free(&r);
}
END_TEST

/* res/h200/ab/DIR/ID-base.csv and -cand.csv (DIR: the id, or a partial
 * name), nbase and ncand rows of flash_hopper (at most 2), the candidate
 * `factor` slower, and gate.txt when `published` (what ab writes last). */
static void write_pair_rows(const char *dir, const char *id, double factor, int nbase, int ncand,
                            bool published)
{
    char name[300];
    snprintf(name, sizeof name, "res/h200/ab/%s", dir);
    make_dir(name);
    struct rspec b[2], k[2];
    rows_of(b, 2, "flash_hopper", 1.0, 30, id);
    rows_of(k, 2, "flash_hopper", factor, 30, id);
    snprintf(name, sizeof name, "res/h200/ab/%s/%s-base.csv", dir, id);
    write_rows(name, b, (size_t)nbase);
    snprintf(name, sizeof name, "res/h200/ab/%s/%s-cand.csv", dir, id);
    write_rows(name, k, (size_t)ncand);
    snprintf(name, sizeof name, "res/h200/ab/%s/gate.txt", dir);
    if (published) write_text(name, "regress: PASS\n");
}

/* A whole, published pair: both rows on both sides. */
static void write_pair(const char *id, double factor)
{
    write_pair_rows(id, id, factor, 2, 2, true);
}

/* With no arguments the newest A/B pair is gated, and says which. */
START_TEST(test_newest_ab_pair_gated)
{
    path_t dir = make_dir("res/h200");
    struct run r = run_regress("--results-dir", tmp_path("res").s, NULL);
    ck_assert_exit(r, 2); /* no A/B run at all: nothing it may compare */
    run_free(&r);
    make_dir("res/h200/ab");
    write_pair("20261201T000000Z", 1.10); /* an older pair that regressed */
    write_pair("20261202T000000Z", 1.00);
    r = run_regress("--results-dir", tmp_path("res").s, NULL);
    ck_assert_exit(r, 0);
    ck_assert_msg(!strncmp(r.out, "compare: 20261202T000000Z-base (rev ", 36), "stdout: %s", r.out);
    ck_assert_msg(strstr(r.out, " vs 20261202T000000Z-cand (rev "), "stdout: %s", r.out);
    run_free(&r);
    path_t older = tmp_path("res/h200/ab/20261201T000000Z");
    r = run_regress("--ab", older.s, NULL);
    ck_assert_exit(r, 1);
    ck_assert_msg(strstr(r.out, "(interleaved)") && strstr(r.out, "regress: REGRESSION"), "%s", r.out);
    run_free(&r);
    r = run_regress("--ab", dir.s, NULL);
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "not an A/B run"), "stderr: %s", r.err);
    run_free(&r);
}
END_TEST

/* stdout says no "regress: PASS": half a pair must never read as a pass. */
#define ck_assert_no_pass(r) ck_assert_msg(!strstr((r).out, "regress: PASS"), "stdout: %s", (r).out)

/* A pair that is not whole is refused (exit 2, with its reason), whether it
 * is named with --ab or is the newest: a run that stopped early (no
 * gate.txt: what ab left before it published pairs whole), a partial name,
 * two sides with different rows, a side with fewer rows than its .env plans.
 * The newest-pair search passes over partial names (a run in progress). */
START_TEST(test_incomplete_pairs_refused)
{
    make_dir("res/h200/ab");
    write_pair("20261201T000000Z", 1.0); /* an older whole pair */
    path_t res = tmp_path("res");
    /* a worker died after the first row: one row a side, no gate.txt */
    write_pair_rows("20261202T000000Z", "20261202T000000Z", 1.0, 1, 1, false);
    struct run r = run_regress("--results-dir", res.s, NULL);
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "20261202T000000Z: no gate.txt"), "stderr: %s", r.err);
    ck_assert_no_pass(r);
    run_free(&r);
    path_t dir = tmp_path("res/h200/ab/20261202T000000Z");
    r = run_regress("--ab", dir.s, NULL);
    ck_assert_exit(r, 2);
    ck_assert_no_pass(r);
    run_free(&r);
    /* the same under a partial name: refused by name, passed over by the search */
    char cmd[800];
    snprintf(cmd, sizeof cmd, "mv '%s' '%s/res/h200/ab/.20261202T000000Z.partial'", dir.s, tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    path_t partial = tmp_path("res/h200/ab/.20261202T000000Z.partial");
    r = run_regress("--ab", partial.s, NULL);
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "a partial A/B run"), "stderr: %s", r.err);
    run_free(&r);
    r = run_regress("--results-dir", res.s, NULL);
    ck_assert_exit(r, 0);
    ck_assert_msg(!strncmp(r.out, "compare: 20261201T000000Z-base ", 31), "stdout: %s", r.out);
    run_free(&r);
    /* published, but the candidate lacks a row of a variant it has */
    write_pair_rows("20261203T000000Z", "20261203T000000Z", 1.0, 2, 1, true);
    r = run_regress("--results-dir", res.s, NULL);
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "the two sides' rows differ"), "stderr: %s", r.err);
    ck_assert_no_pass(r);
    run_free(&r);
    /* both sides alike, but fewer rows than ab planned */
    write_pair_rows("20261204T000000Z", "20261204T000000Z", 1.0, 1, 1, true);
    const char *sides[] = {"base", "cand"};
    for (int k = 0; k < 2; k++) {
        char env[200];
        snprintf(env, sizeof env, "res/h200/ab/20261204T000000Z/20261204T000000Z-%s.env", sides[k]);
        write_text(env, "schema=1\nab_run=20261204T000000Z\nab_rows_planned=2\n");
    }
    r = run_regress("--results-dir", res.s, NULL);
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "holds 1 rows where 2 were planned"), "stderr: %s", r.err);
    ck_assert_no_pass(r);
    run_free(&r);
}
END_TEST

/* What a pair may lack and stay whole: a variant one build does not have
 * (none of its rows on that side; they are new rows). And a pair is named
 * as the user types it: DIR/, ./ from inside it, a relative path. */
START_TEST(test_whole_pairs_gated)
{
    make_dir("res/h200/ab/20261201T000000Z");
    const char *id = "20261201T000000Z";
    struct rspec b[2], k[4];
    rows_of(b, 2, "flash_hopper", 1.0, 30, id);
    rows_of(k, 2, "flash_hopper", 1.0, 30, id);
    rows_of(k + 2, 2, "flash_mma", 1.0, 30, id);
    write_rows("res/h200/ab/20261201T000000Z/20261201T000000Z-base.csv", b, 2);
    write_rows("res/h200/ab/20261201T000000Z/20261201T000000Z-cand.csv", k, 4);
    write_text("res/h200/ab/20261201T000000Z/20261201T000000Z-base.env", "ab_rows_planned=2\n");
    write_text("res/h200/ab/20261201T000000Z/20261201T000000Z-cand.env", "ab_rows_planned=4\n");
    write_text("res/h200/ab/20261201T000000Z/gate.txt", "regress: PASS\n");
    path_t dir = tmp_path("res/h200/ab/20261201T000000Z/");
    struct run r = run_regress("--ab", dir.s, NULL);
    ck_assert_exit(r, 0);
    ck_assert_msg(strstr(r.out, "2 compared") && strstr(r.out, "2 new"), "stdout: %s", r.out);
    run_free(&r);
    char regress[PATH_MAX], cmd[PATH_MAX + 600];
    ck_assert_ptr_nonnull(realpath(REGRESS, regress));
    const char *forms[] = {"cd '%s/res/h200/ab/20261201T000000Z' && '%s' --ab .",
                           "cd '%s/res/h200/ab/20261201T000000Z' && '%s' --ab ./",
                           "cd '%s/res/h200' && '%s' --ab ab/20261201T000000Z/",
                           "cd '%s/res/h200/ab' && '%s' --ab ../ab/./20261201T000000Z"};
    for (size_t i = 0; i < NELEMS(forms); i++) {
        snprintf(cmd, sizeof cmd, forms[i], tmpdir, regress);
        r = run_shell(cmd, tmpdir);
        ck_assert_msg(r.status == 0, "%s: exit %d; stderr: %s", cmd, r.status, r.err);
        ck_assert_msg(!strncmp(r.out, "compare: 20261201T000000Z-base ", 31), "%s: %s", cmd, r.out);
        run_free(&r);
    }
}
END_TEST

/* --trend holds the baseline against the newest run that measured its rows
 * (the newest run is often of another grid), says which and why on its
 * first line, takes the run with the most of them when none has all, and
 * refuses (exit 2) when no run shares a row. The baseline's own run is
 * passed over. */
START_TEST(test_trend_chooses_a_run_with_the_baselines_rows)
{
    make_dir("res/h200");
    struct rspec two[2], one[1], other[2];
    rows_of(two, 2, "naive", 1.0, 0, NULL);
    rows_of(one, 1, "naive", 1.0, 0, NULL);
    rows_of(other, 2, "flash_mma", 1.0, 0, NULL);
    write_rows("res/h200/20261201T000000Z.csv", two, 2);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "cp '%s/res/h200/20261201T000000Z.csv' '%s/res/h200/baseline.csv'",
             tmpdir, tmpdir);
    ck_assert_int_eq(system(cmd), 0); /* the baseline: the first run, blessed */
    write_rows("res/h200/20261202T000000Z.csv", two, 2);   /* all of them */
    write_rows("res/h200/20261203T000000Z.csv", one, 1);   /* one of them */
    write_rows("res/h200/20261204T000000Z.csv", other, 2); /* none: another grid */
    path_t res = tmp_path("res");
    struct run r = run_regress("--results-dir", res.s, "--trend", NULL);
    ck_assert_exit(r, 0);
    char want[1000];
    snprintf(want, sizeof want, "trend: %s/h200/20261202T000000Z.csv, the newest run that holds all 2 "
             "rows of %s/h200/baseline.csv (newer: 20261204T000000Z.csv holds none, "
             "20261203T000000Z.csv holds fewer)\ncompare: ", res.s, res.s);
    ck_assert_msg(!strncmp(r.out, want, strlen(want)), "stdout: %s", r.out);
    ck_assert_msg(strstr(r.out, "regress: PASS: 2 compared"), "stdout: %s", r.out);
    run_free(&r);
    unlink(tmp_path("res/h200/20261202T000000Z.csv").s);
    r = run_regress("--results-dir", res.s, "--trend", NULL);
    ck_assert_exit(r, 1); /* one row compared, one missing */
    ck_assert_msg(strstr(r.out, "20261203T000000Z.csv, which holds 1 of the 2 rows"), "stdout: %s", r.out);
    run_free(&r);
    unlink(tmp_path("res/h200/20261203T000000Z.csv").s);
    r = run_regress("--results-dir", res.s, "--trend", NULL);
    ck_assert_exit(r, 2); /* left: the baseline's own run, and another grid */
    ck_assert_msg(strstr(r.err, "no run shares a row with"), "stderr: %s", r.err);
    run_free(&r);
}
END_TEST

/* The committed runs (their CSVs copied, not their samples): --trend finds
 * the newest that covers the baseline and gates it — a verdict (0 pass, 1
 * slower: runs measured days apart may well differ), never bad input. */
START_TEST(test_trend_on_the_committed_runs)
{
    path_t dir = make_dir("res/h200");
    char cmd[800];
    snprintf(cmd, sizeof cmd, "cp results/h200/baseline.csv results/h200/2*Z.csv '%s/'", dir.s);
    ck_assert_int_eq(system(cmd), 0);
    struct run r = run_regress("--results-dir", tmp_path("res").s, "--trend", NULL);
    ck_assert_msg(r.status == 0 || r.status == 1, "build/regress exited %d; stderr: %s", r.status, r.err);
    ck_assert_msg(!strncmp(r.out, "trend: ", 7) && strstr(r.out, ", the newest run that holds all "),
                  "stdout: %s", r.out);
    ck_assert_msg(strstr(r.out, " 0 missing, "), "stdout: %s", r.out);
    run_free(&r);
}
END_TEST

/* --reason is stored in baselines/LOG exactly as given, shell syntax and
 * UTF-8 included; a control character (a line end, a tab, an escape) is
 * refused before anything is written. */
START_TEST(test_bless_reason_stored_literally)
{
    make_dir("res/h200");
    struct rspec b[2];
    rows_of(b, 2, "naive", 1.0, 0, NULL);
    write_rows("res/h200/20261201T000000Z.csv", b, 2);
    path_t res = tmp_path("res");
    static const char *const refused[] = {"two\nlines", "a\ttab", "\x1b[31mred", "cr\r", "del\x7f"};
    for (size_t i = 0; i < NELEMS(refused); i++) {
        struct run r = run_regress("--results-dir", res.s, "--bless", "--reason", refused[i], NULL);
        ck_assert_exit(r, 2);
        ck_assert_msg(strstr(r.err, "--reason: control character 0x"), "stderr: %s", r.err);
        run_free(&r);
        ck_assert_int_eq(access(tmp_path("res/h200/baseline.csv").s, F_OK), -1);
        ck_assert_int_eq(access(tmp_path("res/h200/baselines/LOG").s, F_OK), -1);
    }
    const char *literal = "keeps `id` and $(whoami) and \"$HOME\" \\n 100% caf\xc3\xa9";
    struct run r = run_regress("--results-dir", res.s, "--bless", "--reason", literal, NULL);
    ck_assert_exit(r, 0);
    run_free(&r);
    char *log = slurp(tmp_path("res/h200/baselines/LOG").s), want[300];
    snprintf(want, sizeof want, "\tfirst\t%s\n", literal);
    ck_assert_msg(strstr(log, want), "LOG: %s", log);
    free(log);
}
END_TEST

/* Blessing gates the run first: a regression is blessed only with a reason,
 * every blessing is logged, and the replaced baseline is kept. */
START_TEST(test_bless_gates_and_logs)
{
    make_dir("res/h200");
    struct rspec b[2], k[2];
    rows_of(b, 2, "naive", 1.0, 30, NULL);
    rows_of(k, 2, "naive", 1.10, 30, NULL);
    write_rows("res/h200/20261201T000000Z.csv", b, 2);
    path_t res = tmp_path("res");
    struct run r = run_regress("--results-dir", res.s, "--bless", NULL);
    ck_assert_exit(r, 0); /* the first blessing has nothing to pass */
    run_free(&r);
    write_rows("res/h200/20261202T000000Z.csv", k, 2);
    path_t base = tmp_path("res/h200/baseline.csv");
    char *before = slurp(base.s);
    r = run_regress("--results-dir", res.s, "--bless", NULL);
    ck_assert_exit(r, 1);
    ck_assert_msg(strstr(r.err, "REASON="), "stderr: %s", r.err);
    run_free(&r);
    char *after = slurp(base.s);
    ck_assert_str_eq(before, after); /* refused: the baseline is untouched */
    free(after);
    r = run_regress("--results-dir", res.s, "--bless", "--reason", "the new tiling trades 10% here", NULL);
    ck_assert_exit(r, 0);
    run_free(&r);
    after = slurp(base.s);
    ck_assert_str_ne(before, after);
    ck_assert_msg(strstr(after, "20261202T000000Z"), "baseline.csv is not the new run");
    free(after);
    char *kept = slurp(tmp_path("res/h200/baselines/baseline-20261201T000000Z.csv").s);
    ck_assert_str_eq(kept, before);
    char *ks = slurp(tmp_path("res/h200/baselines/baseline-20261201T000000Z.samples.csv.gz").s);
    ck_assert_msg(strlen(ks) > 0, "the kept baseline's samples are missing");
    free(ks);
    free(kept);
    free(before);
    char *log = slurp(tmp_path("res/h200/baselines/LOG").s);
    ck_assert_msg(strstr(log, "\t20261201T000000Z\t0123456789ab\tfirst\t-\n"), "LOG: %s", log);
    ck_assert_msg(strstr(log, "\t20261202T000000Z\t0123456789ab\tREGRESSION\tthe new tiling trades 10% here\n"),
                  "LOG: %s", log);
    free(log);
}
END_TEST

/* Multiplies VARIANT's samples in the samples file beside csv by factor,
 * rewriting the file through the common reader and writer. */
static void doctor_samples(const char *csv, const char *variant, double factor)
{
    struct result_set set;
    ck_assert_msg(results_read(csv, &set) == ATTN_OK, "%s", attn_error_message());
    struct samples_rewrite w;
    ck_assert_msg(results_samples_begin(csv, &w) == ATTN_OK, "%s", attn_error_message());
    const int fd = w.fd;
    for (size_t i = 0; i < set.count; i++) {
        struct result_rec *rec = &set.rows[i];
        if (!rec->sample_ms) continue;
        if (!strcmp(rec->key.variant, variant))
            for (size_t k = 0; k < rec->nsample_ms; k++) rec->sample_ms[k] *= factor;
        struct result_row row;
        results_row_init(&row);
        row.variant = rec->key.variant;
        result_key_problem(&rec->key, &row.problem);
        row.mode = rec->key.mode;
        row.sample_ms = rec->sample_ms;
        row.nsample_ms = rec->nsample_ms;
        ck_assert_int_eq(results_samples_append(fd, &row), ATTN_OK);
    }
    ck_assert_msg(results_samples_commit(&w) == ATTN_OK, "%s", attn_error_message());
    results_free(&set);
}

/* Multiplies the ms columns of VARIANT's rows in a results CSV, and its
 * samples, by factor: a doctored candidate. */
static void doctor(const char *csv, const char *variant, double factor)
{
    static const char *const ms_columns[] = {"ms_median", "ms_min", "ms_p10", "ms_p90", "ms_mean"};
    doctor_samples(csv, variant, factor);
    char *text = slurp(csv), *out = malloc(strlen(text) * 2 + 64), *save = NULL;
    ck_assert_ptr_nonnull(out);
    out[0] = '\0';
    int idx[64], nidx = 0, vcol = -1;
    size_t len = 0;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *fields[64];
        int n = csv_split(line, fields, 64);
        ck_assert_int_gt(n, 0);
        if (vcol < 0) { /* the header */
            for (int i = 0; i < n; i++) {
                if (!strcmp(fields[i], "variant")) vcol = i;
                for (size_t c = 0; c < NELEMS(ms_columns); c++)
                    if (!strcmp(fields[i], ms_columns[c])) idx[nidx++] = i;
            }
        }
        struct csv_line l;
        csv_line_init(&l);
        for (int i = 0; i < n; i++) {
            bool scale = false;
            for (int c = 0; c < nidx; c++) scale |= idx[c] == i;
            char num[64];
            if (scale && fields[i][0] && !strcmp(fields[vcol], variant)) {
                snprintf(num, sizeof num, "%.9g", atof(fields[i]) * factor);
                csv_add_str(&l, num);
            } else {
                csv_add_str(&l, fields[i]);
            }
        }
        ck_assert_int_eq(csv_line_end(&l), ATTN_OK);
        len += (size_t)sprintf(out + len, "%s", l.text);
    }
    FILE *w = fopen(csv, "w");
    ck_assert_ptr_nonnull(w);
    fputs(out, w);
    ck_assert_int_eq(fclose(w), 0);
    free(out);
    free(text);
}

/* The newest committed A/B pair passes; the same pair with one variant's
 * (its first row's) medians and samples 5% slower does not — what `make
 * test` gates. tests/check_committed.sh gates the committed pair itself; here
 * the copy is gated before and after the doctoring, no more: each run of
 * the gate reads every sample of both sides. */
START_TEST(test_doctored_committed_pair_fails)
{
    char id[64] = "", cmd[1200];
    FILE *ls = popen("ls results/h200/ab | sort | tail -n 1", "r");
    ck_assert_ptr_nonnull(ls);
    ck_assert_ptr_nonnull(fgets(id, sizeof id, ls));
    pclose(ls);
    id[strcspn(id, "\n")] = '\0';
    ck_assert_msg(id[0], "no committed A/B pair under results/h200/ab");
    path_t copy = make_dir("res/h200/ab");
    snprintf(cmd, sizeof cmd, "cp -r results/h200/ab/%s '%s/'", id, copy.s);
    ck_assert_int_eq(system(cmd), 0);
    char cand[900], dir[400];
    snprintf(dir, sizeof dir, "%s/%s", copy.s, id);
    snprintf(cand, sizeof cand, "%s/%s-cand.csv", dir, id);
    struct run r = run_regress("--ab", dir, NULL);
    ck_assert_exit(r, 0);
    ck_assert_msg(!strncmp(r.out, "compare: ", 9), "stdout: %s", r.out);
    run_free(&r);
    char variant[64] = "", head[64];
    snprintf(cmd, sizeof cmd, "sed -n 2p '%s' | cut -d, -f5", cand);
    FILE *first = popen(cmd, "r");
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_nonnull(fgets(variant, sizeof variant, first));
    pclose(first);
    variant[strcspn(variant, "\n")] = '\0';
    ck_assert_msg(variant[0], "no variant in the pair's first row");
    doctor(cand, variant, 1.05);
    snprintf(head, sizeof head, "SLOWER       %s ", variant);
    r = run_regress("--ab", dir, NULL);
    ck_assert_exit(r, 1);
    int slower = 0, doctored = 0;
    for (const char *l = r.out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        slower += !strncmp(l, "SLOWER ", 7);
        doctored += !strncmp(l, head, strlen(head));
    }
    ck_assert_int_gt(slower, 0);
    ck_assert_int_eq(slower, doctored); /* only the doctored variant */
    run_free(&r);
}
END_TEST

START_TEST(test_thresholds_ab_settings)
{
    path_t conf = write_text("t.conf", "default ab_slowdown=0.5% confidence=0.95\n"
                                       "match seq_len<1024 ab_slowdown=2% confidence=99.9%\n");
    struct gate_thresholds th;
    read_thresholds_ok(conf.s, &th);
    struct result_key k = key("naive", "bf16", 2, 16, 1024, 64, 1, "cold");
    struct gate_settings s = gate_settings_for(&th, &k);
    ck_assert_double_eq_tol(s.ab_slowdown, 0.005, 1e-12);
    ck_assert_double_eq_tol(s.confidence, 0.95, 1e-12);
    ck_assert_double_eq_tol(s.slowdown, 0.05, 1e-12); /* untouched: the built-in */
    k.seq_len = 512;
    s = gate_settings_for(&th, &k);
    ck_assert_double_eq_tol(s.ab_slowdown, 0.02, 1e-12);
    ck_assert_double_eq_tol(s.confidence, 0.999, 1e-12);
    static const char *const bad[] = {"default confidence=50%\n", "default confidence=1\n",
                                      "default confidence=x\n", "default ab_slowdown=-1%\n"};
    for (size_t i = 0; i < NELEMS(bad); i++) {
        path_t b = write_text("bad.conf", bad[i]);
        ck_assert_int_eq(gate_thresholds_read(b.s, &th), ATTN_ERR_INPUT);
        char where[300];
        snprintf(where, sizeof where, "%s:1:", b.s);
        ck_assert_message_has(where);
    }
}
END_TEST

static Suite *ab_suite(void)
{
    Suite *s = suite_create("samples and A/B pairs");
    TCase *tc = tcase_create("samples");
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    tcase_add_unchecked_fixture(tc, tmpdir_setup, tmpdir_teardown);
    tcase_add_test(tc, test_samples_read_back);
    tcase_add_test(tc, test_samples_malformed);
    tcase_add_test(tc, test_sample_rule_limits);
    tcase_add_test(tc, test_different_ab_runs_are_not_paired);
    tcase_add_test(tc, test_pair_is_never_throttled);
    tcase_add_test(tc, test_samples_on_one_side_use_summaries);
    tcase_add_test(tc, test_thresholds_ab_settings);
    suite_add_tcase(s, tc);
    tc = tcase_create("command");
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
    tcase_add_test(tc, test_run_against_itself_refused);
    tcase_add_test(tc, test_newest_ab_pair_gated);
    tcase_add_test(tc, test_bless_gates_and_logs);
    tcase_add_test(tc, test_doctored_committed_pair_fails);
    tcase_add_test(tc, test_incomplete_pairs_refused);
    tcase_add_test(tc, test_whole_pairs_gated);
    tcase_add_test(tc, test_trend_chooses_a_run_with_the_baselines_rows);
    tcase_add_test(tc, test_trend_on_the_committed_runs);
    tcase_add_test(tc, test_bless_reason_stored_literally);
    suite_add_tcase(s, tc);
    return s;
}

/* ------------------ hostile input: NUL bytes, endless lines, cut files, a full stdout */

/* Writes len bytes (NULs included) to the fixture `name`. */
static path_t write_bytes(const char *name, const char *bytes, size_t len)
{
    path_t p = tmp_path(name);
    FILE *f = fopen(p.s, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
    return p;
}

/* A NUL byte is named as such, in a results file and in a thresholds file:
 * not taken for a line too long, nor for the end of a thresholds line. */
START_TEST(test_nul_byte_refused)
{
    static const char rows[] = HDR "h200,naive,bf16,2,16,1024,64,1,cold,ok,,20,1.0,0.002,0.002\n"
                                   "h200,naive,bf16,2,16,2048,64,1,cold,ok,,20,1.0\0,0.002,0.002\n";
    path_t p = write_bytes("nul.csv", rows, sizeof rows - 1);
    struct result_set set;
    ck_assert_int_eq(results_read(p.s, &set), ATTN_ERR_INPUT);
    ck_assert(names_place(attn_error_message(), p.s, 3));
    ck_assert_message_has("NUL");
    static const char conf[] = "default slowdown=3%\0 slowdown=900%\n";
    path_t c = write_bytes("nul.conf", conf, sizeof conf - 1);
    struct gate_thresholds th;
    ck_assert_int_eq(gate_thresholds_read(c.s, &th), ATTN_ERR_INPUT);
    ck_assert(names_place(attn_error_message(), c.s, 1));
    ck_assert_message_has("NUL");
}
END_TEST

/* A comment longer than any buffer stays a comment: its tail is not a rule. */
START_TEST(test_long_comment_is_not_obeyed)
{
    char text[1200];
    memset(text, ' ', sizeof text);
    text[0] = '#';
    snprintf(text + 1023, sizeof text - 1023, "default slowdown=900%%\n");
    path_t c = write_text("long.conf", text);
    struct gate_thresholds th;
    read_thresholds_ok(c.s, &th);
    ck_assert_double_eq_tol(th.defaults.slowdown, 0.05, 1e-12);
    /* and a line past the reader's limit is refused, not cut */
    char *big = malloc(CSV_LINE_MAX + 64);
    ck_assert_ptr_nonnull(big);
    memset(big, ' ', CSV_LINE_MAX + 32);
    memcpy(big, "default slowdown=3%", 19);
    strcpy(big + CSV_LINE_MAX + 32, "\n");
    path_t b = write_text("big.conf", big);
    free(big);
    ck_assert_int_eq(gate_thresholds_read(b.s, &th), ATTN_ERR_INPUT);
    ck_assert_message_has("line too long");
}
END_TEST

START_TEST(test_directory_is_named)
{
    struct result_set set;
    ck_assert_int_eq(results_read(tmpdir, &set), ATTN_ERR_INPUT);
    ck_assert_message_has("is a directory");
    struct gate_thresholds th;
    ck_assert_int_eq(gate_thresholds_read(tmpdir, &th), ATTN_ERR_INPUT);
    ck_assert_message_has("is a directory");
}
END_TEST

/* A run whose last line a crash cut keeps its whole rows, with a warning. */
START_TEST(test_cut_last_line_keeps_whole_rows)
{
    path_t p = write_text("cut.csv", HDR ROW("naive", "1024", "cold", "1.0") ROW("naive", "1024", "graph", "1.1")
                                     "h200,naive,bf16,2,16,2048,64,1,cold,ok,,20,2.0,0.0");
    struct result_set set;
    read_ok(p.s, &set);
    ck_assert_uint_eq(set.count, 2);
    results_free(&set);
    struct run r = run_regress("--results", p.s, "--baseline", write_rows("base.csv", base4, 2).s, NULL);
    ck_assert_exit(r, 0);
    ck_assert_msg(strstr(r.err, "warning: ") && strstr(r.err, "cut short"), "stderr: %s", r.err);
    run_free(&r);
}
END_TEST

/* Every row names the GPU: an empty name on the baseline's first row no
 * longer lets another GPU's results through. */
START_TEST(test_gpu_checked_on_every_row)
{
    struct rspec b[4], k[4];
    memcpy(b, base4, sizeof b);
    memcpy(k, base4, sizeof k);
    b[0].set_column = "gpu";
    b[0].set_value = "";
    for (int i = 0; i < 4; i++) k[i].gpu = "a100";
    path_t bp = write_rows("base.csv", b, 4), cp = write_rows("cur.csv", k, 4);
    struct run r = run_regress("--results", cp.s, "--baseline", bp.s, NULL);
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "GPU '"), "stderr: %s", r.err);
    run_free(&r);
    /* with a name on every baseline row, the other GPU is what is named */
    b[0].set_column = NULL;
    bp = write_rows("base.csv", b, 4);
    r = run_regress("--results", cp.s, "--baseline", bp.s, NULL);
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "'a100'") && strstr(r.err, "'h200'"), "stderr: %s", r.err);
    run_free(&r);
}
END_TEST

/* 80,000 rows: the duplicate-key check is linear (pairwise it took 26 s, past
 * this test case's timeout) and still finds the one duplicate. */
START_TEST(test_duplicate_check_scales)
{
    path_t p = tmp_path("big.csv");
    FILE *f = fopen(p.s, "w");
    ck_assert_ptr_nonnull(f);
    fputs(HDR, f);
    const int n = 80000;
    for (int i = 0; i < n; i++)
        fprintf(f, "h200,v%d,bf16,%d,16,1024,64,1,cold,ok,,20,1.0,0.002,0.002\n", i % 50, 1 + i / 50);
    fprintf(f, "h200,v7,bf16,%d,16,1024,64,1,cold,ok,,20,1.0,0.002,0.002\n", 1 + 4321 / 50);
    ck_assert_int_eq(fclose(f), 0);
    struct result_set set;
    ck_assert_int_eq(results_read(p.s, &set), ATTN_ERR_INPUT);
    ck_assert(names_place(attn_error_message(), p.s, n + 2));
    ck_assert_message_has("duplicate key");
}
END_TEST

/* A row is written whole or not at all: past the file-size limit (as on a
 * full disk) csv_append fails and leaves only whole lines. */
START_TEST(test_append_is_whole_or_nothing)
{
    path_t p = tmp_path("limited.csv");
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {.rlim_cur = 1000, .rlim_max = 1000};
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(3);
        int fd = open(p.s, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
        struct csv_line l;
        csv_line_init(&l);
        csv_add_str(&l, "a line of about sixty bytes, written again and again........");
        csv_line_end(&l);
        for (int i = 0; i < 100; i++)
            if (csv_append(fd, &l) != ATTN_OK) _exit(0); /* failed, as it must */
        _exit(4);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
    char *text = slurp(p.s);
    size_t len = strlen(text);
    ck_assert_uint_gt(len, 0);
    ck_assert_msg(text[len - 1] == '\n', "the file ends in a partial line (%zu bytes)", len);
    free(text);
}
END_TEST

/* A report nobody can read is no pass: stdout on a full device, exit 2. */
START_TEST(test_full_stdout_fails)
{
    path_t b = write_rows("base.csv", base4, NELEMS(base4)), c = write_rows("cur.csv", base4, NELEMS(base4));
    char cmd[700];
    snprintf(cmd, sizeof cmd, "%s --results '%s' --baseline '%s' >/dev/full 2>/dev/null", REGRESS, c.s, b.s);
    int st = system(cmd);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 2);
    snprintf(cmd, sizeof cmd, "%s --results '%s' --baseline '%s' --markdown /dev/full >/dev/null 2>&1",
             REGRESS, c.s, b.s);
    st = system(cmd);
    ck_assert_int_eq(WEXITSTATUS(st), 2);
}
END_TEST

/* A message quotes the input, never its control bytes. */
START_TEST(test_control_bytes_not_echoed)
{
    path_t p = write_text("esc.csv", HDR "h200,naive,bf16,2,16,1024,64,1,cold,\x1b[31mgreat\r,,20,1.0,0.002,0.002\n");
    struct run r = run_regress("--results", p.s, "--baseline", p.s, NULL);
    ck_assert_exit(r, 2);
    for (const char *c = r.err; *c; c++)
        ck_assert_msg((unsigned char)*c >= 0x20 || *c == '\n', "stderr holds byte 0x%02x: %s",
                      (unsigned char)*c, r.err);
    ck_assert_msg(strstr(r.err, "?[31mgreat?"), "stderr: %s", r.err);
    run_free(&r);
}
END_TEST

/* A blessing that cannot be written (the file-size limit, as on a full disk)
 * leaves the old baseline whole and no temporary file; two blessings in one
 * second keep both replaced baselines. */
START_TEST(test_bless_never_loses_a_baseline)
{
    make_dir("res/h200");
    struct rspec b[2], k[2];
    rows_of(b, 2, "naive", 1.0, 30, NULL);
    rows_of(k, 2, "naive", 1.0, 30, NULL);
    write_rows("res/h200/20261201T000000Z.csv", b, 2);
    path_t res = tmp_path("res");
    struct run r = run_regress("--results-dir", res.s, "--bless", NULL);
    ck_assert_exit(r, 0);
    run_free(&r);
    path_t base = tmp_path("res/h200/baseline.csv");
    char *before = slurp(base.s);
    write_rows("res/h200/20261202T000000Z.csv", k, 2);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "trap '' XFSZ; ulimit -f 1; %s --results-dir '%s' --bless", REGRESS, res.s);
    r = run_shell(cmd, tmpdir);
    ck_assert_msg(r.status == 2, "a blessing past the file-size limit exited %d: %s", r.status, r.err);
    run_free(&r);
    char *after = slurp(base.s);
    ck_assert_str_eq(before, after);
    free(after);
    free(before);
    ck_assert_msg(access(tmp_path("res/h200/baseline.csv.tmp").s, F_OK) != 0, "a .tmp file was left");
    /* now twice in one second: each replaced baseline is kept under its own name */
    r = run_regress("--results-dir", res.s, "--bless", NULL);
    ck_assert_exit(r, 0);
    run_free(&r);
    r = run_regress("--results-dir", res.s, "--bless", "--results", tmp_path("res/h200/20261201T000000Z.csv").s, NULL);
    ck_assert_exit(r, 0);
    run_free(&r);
    ck_assert(access(tmp_path("res/h200/baselines/baseline-20261201T000000Z.csv").s, F_OK) == 0);
    ck_assert(access(tmp_path("res/h200/baselines/baseline-20261202T000000Z.csv").s, F_OK) == 0);
}
END_TEST

static Suite *hostile_suite(void)
{
    Suite *s = suite_create("hostile input");
    TCase *tc = tcase_create("refused or recovered");
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
    tcase_add_test(tc, test_nul_byte_refused);
    tcase_add_test(tc, test_long_comment_is_not_obeyed);
    tcase_add_test(tc, test_directory_is_named);
    tcase_add_test(tc, test_cut_last_line_keeps_whole_rows);
    tcase_add_test(tc, test_gpu_checked_on_every_row);
    tcase_add_test(tc, test_duplicate_check_scales);
    tcase_add_test(tc, test_append_is_whole_or_nothing);
    tcase_add_test(tc, test_full_stdout_fails);
    tcase_add_test(tc, test_control_bytes_not_echoed);
    tcase_add_test(tc, test_bless_never_loses_a_baseline);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(compare_suite());
    srunner_add_suite(sr, thresholds_suite());
    srunner_add_suite(sr, read_suite());
    srunner_add_suite(sr, report_suite());
    srunner_add_suite(sr, ab_suite());
    srunner_add_suite(sr, hostile_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

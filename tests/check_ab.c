/* check_ab.c — the tests of the A/B driver build/ab (Check), without a GPU:
 * both of its workers are tests/fake_worker.sh, which speaks the protocol of
 * bench/gate/ab_proto.h and writes plausible run files. Each test case links the
 * script twice into its own mkdtemp directory under /tmp, as base_worker and
 * cand_worker (the script takes its side from its name, and reads settings
 * such as FAKE_FACTOR_cand for that side only), runs build/ab on one small
 * point × two variants × two modes, and checks: an A/A run that passes, with
 * its A/B directory (both runs, samples, gate.txt) and every row marked with
 * the A/B id; the block order A B B A … within each mode, and one seed per
 * point for both sides; a 5% slower candidate that fails the gate and a 0.5%
 * slower one that does not (thresholds from the test's own file: ab_slowdown
 * 1%); a worker that dies or hangs at one row (that row error on both
 * sides, saying why, the rest measured and the pair published), in the setup
 * of every row of a variant, or that cannot go on (exit 2, the partial run
 * left and named), or that does not start; a worker that speaks another
 * protocol; a variant the base
 * build lacks (new rows); a variant the candidate skips (failed rows); bad
 * usage, attnbench options an A/B run does not implement, and --list. Run
 * from the repository root, after `make all` (build/ab). The directory is removed after each test. */
#include "../bench/gate/gate.h"
#include "../common/errors.h"
#include "../common/results_read.h"
#include "testutil.h"

#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------ helpers */

#define AB tool_path("ab")
#define FAKE_WORKER "tests/fake_worker.sh"
#define MIN_PAIRS 4 /* bench/gate/ab.c: blocks per side per mode before the stop rule is asked */
/* The run every test makes (the workers and --out are added by run_ab):
 * 2 points × 2 variants × 2 modes = 8 rows per side. A budget far above what
 * the fake's samples need keeps the number of blocks per mode deterministic:
 * the stop rule's noise and min_ms targets end each mode, not the clock. */
#define POINT "batch=2 heads=4 seq=128 dim=64 causal=0,1"
#define VARIANTS "naive,flash_mma"
#define MODES "cold,graph"
#define NROWS 8
#define ID_LEN 256 /* an A/B id: a directory name */
#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* The test's fixture directory: made before it, removed after it. */
static char tmpdir[64];

typedef struct {
    char s[512];
} path_t;

static path_t tmp_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static path_t tmp_path(const char *fmt, ...)
{
    path_t p;
    int n = snprintf(p.s, sizeof p.s, "%s/", tmpdir);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p.s + n, sizeof p.s - (size_t)n, fmt, ap);
    va_end(ap);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert_int_ge(fputs(text, f), 0);
    ck_assert_int_eq(fclose(f), 0);
}

/* The fixture: DIR/base_worker and DIR/cand_worker, links to the fake worker,
 * and DIR/thresholds.conf (independent of the committed bench/gate/thresholds.conf). */
static void tmpdir_setup(void)
{
    strcpy(tmpdir, "/tmp/check_ab_XXXXXX");
    ck_assert_msg(mkdtemp(tmpdir) != NULL, "mkdtemp failed");
    char cwd[PATH_MAX], worker[PATH_MAX + 64];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(worker, sizeof worker, "%s/%s", cwd, FAKE_WORKER);
    ck_assert_msg(access(worker, X_OK) == 0,
                  "%s is missing or not executable (run from the repository root)", worker);
    const char *sides[] = {"base_worker", "cand_worker"};
    for (size_t i = 0; i < NELEMS(sides); i++)
        ck_assert_int_eq(symlink(worker, tmp_path("%s", sides[i]).s), 0);
    write_text(tmp_path("thresholds.conf").s, "default ab_slowdown=1% confidence=99%\n");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void tmpdir_teardown(void)
{
    nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The row timeout of the tests that make a worker hang: small, so that a
 * hang costs the suite about a second, yet far above the milliseconds a
 * fake worker takes to answer; CK_TIMEOUT_MULTIPLIER (Check's own scale
 * for slow machines) scales it too. */
static double hang_timeout_s(void)
{
    const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
    double x = m && *m ? atof(m) : 1;
    return x >= 1 ? x : 1;
}

/* Runs build/ab with the fake workers on the test's run (POINT, VARIANTS,
 * MODES) into DIR/out, commands logged to DIR/log, with `env` (shell words,
 * e.g. "FAKE_FACTOR_cand=1.05"; "" for none) in its environment and `args`
 * (more options for ab, "" for none) after the others. */
static struct run run_ab_with(const char *env, const char *args)
{
    const char *ab = AB;
    ck_assert_msg(access(ab, X_OK) == 0,
                  "%s is not built: run make all first (and the tests from the repository root)", ab);
    path_t base = tmp_path("base_worker"), cand = tmp_path("cand_worker"),
           thr = tmp_path("thresholds.conf"), out = tmp_path("out"), log = tmp_path("log");
    char cmd[8192];
    size_t n = (size_t)snprintf(cmd, sizeof cmd,
        "FAKE_LOG='%s' %s %s --base '%s' --cand '%s' --point '" POINT "' --variants " VARIANTS
        " --mode " MODES " --warm-ms 0 --budget-ms 5000 --seed 42 --thresholds '%s' --out '%s' %s",
        log.s, env, ab, base.s, cand.s, thr.s, out.s, args);
    ck_assert_uint_lt(n, sizeof cmd);
    return run_shell(cmd, tmpdir);
}

static struct run run_ab(const char *env)
{
    return run_ab_with(env, "");
}

/* run_ab_with, the workers' deadlines hang_timeout_s. */
static struct run run_ab_hang(const char *env, const char *args)
{
    char more[512];
    snprintf(more, sizeof more, "--row-timeout %g %s", hang_timeout_s(), args);
    return run_ab_with(env, more);
}

/* Runs build/ab with exactly these arguments (no workers added). */
static struct run run_ab_args(const char *args)
{
    const char *ab = AB;
    ck_assert_msg(access(ab, X_OK) == 0,
                  "%s is not built: run make all first (and the tests from the repository root)", ab);
    char cmd[4096];
    size_t n = (size_t)snprintf(cmd, sizeof cmd, "%s %s", ab, args);
    ck_assert_uint_lt(n, sizeof cmd);
    return run_shell(cmd, tmpdir);
}

#define ck_assert_exit(run, code)                                                              \
    ck_assert_msg((run).status == (code), "build/ab exited %d, expected %d; stderr: %s\nstdout: %s", \
                  (run).status, (code), (run).err, (run).out)

/* The last line of text (without its '\n'), into buf. */
static const char *last_line(const char *text, char *buf, size_t len)
{
    size_t n = strlen(text);
    while (n && text[n - 1] == '\n') n--;
    size_t start = n;
    while (start && text[start - 1] != '\n') start--;
    snprintf(buf, len, "%.*s", (int)(n - start), text + start);
    return buf;
}

/* Lines of text that start with prefix and contain needle (NULL: any). */
static int count_lines(const char *text, const char *prefix, const char *needle)
{
    int count = 0;
    for (const char *l = text; *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)len, l);
        if (!strncmp(line, prefix, strlen(prefix)) && (!needle || strstr(line, needle))) count++;
        l += len + (nl ? 1 : 0);
    }
    return count;
}

/* The A/B directories under DIR/out; the name of the last one into id. */
static int ab_dirs(char *id, size_t len)
{
    DIR *d = opendir(tmp_path("out").s);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        struct stat st;
        if (stat(tmp_path("out/%s", e->d_name).s, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(id, len, "%s", e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

/* The partial directories (DIR/out/.AB_ID.partial) ab left; the last one's
 * path into path. */
static int partial_dirs(char *path, size_t len)
{
    DIR *d = opendir(tmp_path("out").s);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    const char *suffix = ".partial";
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] != '.' || l <= strlen(suffix) || strcmp(e->d_name + l - strlen(suffix), suffix))
            continue;
        snprintf(path, len, "%s", tmp_path("out/%s", e->d_name).s);
        n++;
    }
    closedir(d);
    return n;
}

/* The one A/B directory's id. */
static void the_ab_id(char *id, size_t len)
{
    int n = ab_dirs(id, len);
    ck_assert_msg(n == 1, "%d A/B directories under %s/out, expected 1", n, tmpdir);
}

/* DIR/out/AB_ID/AB_ID-SIDE.EXT */
static path_t run_file(const char *id, const char *side, const char *ext)
{
    return tmp_path("out/%s/%s-%s.%s", id, id, side, ext);
}

/* Reads AB_ID-SIDE.csv (with its samples) and checks what every row of an
 * A/B run must carry: its run id, the A/B id, the fake GPU, and for ok rows
 * as many samples in the samples file as the row says. */
static void read_side(const char *id, const char *side, struct result_set *set)
{
    path_t p = run_file(id, side, "csv");
    int rc = results_read(p.s, set);
    ck_assert_msg(rc == ATTN_OK, "results_read %s: %s", p.s, attn_error_message());
    char run_id[ID_LEN + 8];
    snprintf(run_id, sizeof run_id, "%s-%s", id, side);
    for (size_t i = 0; i < set->count; i++) {
        const struct result_rec *r = &set->rows[i];
        char label[160];
        result_key_label(&r->key, label, sizeof label);
        ck_assert_msg(!strcmp(r->ab_run, id), "%s %s: ab_run '%s', expected '%s'", p.s, label,
                      r->ab_run, id);
        ck_assert_msg(!strcmp(r->run_id, run_id), "%s %s: run_id '%s', expected '%s'", p.s,
                      label, r->run_id, run_id);
        ck_assert_str_eq(r->gpu, "fakegpu");
        if (!strcmp(r->status, "ok")) {
            ck_assert_msg(r->samples > 0 && (size_t)r->samples == r->nsample_ms,
                          "%s %s: samples %ld, %zu in the samples file", p.s, label, r->samples,
                          r->nsample_ms);
            ck_assert_msg(r->ms_median > 0, "%s %s: no time", p.s, label);
        }
    }
}

/* Rows of set whose variant is `variant` (NULL: any) and status `status`. */
static int count_rows(const struct result_set *set, const char *variant, const char *status)
{
    int n = 0;
    for (size_t i = 0; i < set->count; i++)
        n += (!variant || !strcmp(set->rows[i].key.variant, variant)) &&
             !strcmp(set->rows[i].status, status);
    return n;
}

/* ============================================================ the A/A run */

/* Both sides the same build: a pass, the A/B directory whole, every row of
 * both runs marked with the A/B id. */
START_TEST(test_ab_aa_passes)
{
    struct run r = run_ab("");
    ck_assert_exit(r, 0);
    char id[ID_LEN], line[1024], partial[600];
    the_ab_id(id, sizeof id);
    /* published whole: nothing left under the partial name */
    ck_assert_int_eq(partial_dirs(partial, sizeof partial), 0);

    /* stdout: the compare line naming both runs, the table, the verdict */
    char want[600];
    snprintf(want, sizeof want, "compare: %s-base (rev fake) vs %s-cand (rev fake)\n", id, id);
    ck_assert_msg(!strncmp(r.out, want, strlen(want)), "stdout does not start with \"%s\": %s",
                  want, r.out);
    last_line(r.out, line, sizeof line);
    ck_assert_msg(!strncmp(line, "regress: PASS", 13), "last line: %s", line);
    ck_assert_msg(strstr(line, "8 compared, 0 slower, 0 failed, 0 missing, 0 new, 0 faster"),
                  "last line: %s", line);
    ck_assert_int_eq(count_lines(r.out, "pass ", NULL), NROWS);

    /* the A/B directory: both runs, their samples and environments, gate.txt */
    const char *sides[] = {"base", "cand"}, *exts[] = {"csv", "samples.csv", "env"};
    for (size_t s = 0; s < 2; s++)
        for (size_t e = 0; e < NELEMS(exts); e++) {
            path_t p = run_file(id, sides[s], exts[e]);
            ck_assert_msg(access(p.s, R_OK) == 0, "%s is missing", p.s);
        }
    char *gate = slurp(tmp_path("out/%s/gate.txt", id).s);
    ck_assert_msg(!strcmp(gate, r.out), "gate.txt differs from stdout:\n%s\n---\n%s", gate, r.out);
    free(gate);

    struct result_set base, cand;
    read_side(id, "base", &base);
    read_side(id, "cand", &cand);
    ck_assert_uint_eq(base.count, NROWS);
    ck_assert_uint_eq(cand.count, NROWS);
    ck_assert_int_eq(count_rows(&base, NULL, "ok"), NROWS);
    ck_assert_int_eq(count_rows(&cand, NULL, "ok"), NROWS);
    /* the same rows in the same order on both sides */
    for (size_t i = 0; i < NROWS; i++)
        ck_assert(result_key_equal(&base.rows[i].key, &cand.rows[i].key));
    results_free(&base);
    results_free(&cand);
    run_free(&r);
}
END_TEST

/* The commands both workers received (DIR/log): within each mode the blocks
 * go base, cand, cand, base, base, cand, … (A B B A), at least MIN_PAIRS per
 * side; both sides get the same point with the same seed, and the same rows. */
START_TEST(test_ab_blocks_interleave)
{
    struct run r = run_ab("");
    ck_assert_exit(r, 0);
    run_free(&r);
    FILE *f = fopen(tmp_path("log").s, "r");
    ck_assert_msg(f != NULL, "the fake workers wrote no log");
    char line[1024], prev[1024] = "";
    int seq[4096], nseq = 0, modes = 0, points = 0, rows = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        char side[16], cmd[16];
        ck_assert_msg(sscanf(line, "%15s %15s", side, cmd) == 2, "log line %d: '%s'", lineno, line);
        ck_assert_msg(!strcmp(side, "base") || !strcmp(side, "cand"), "log line %d: '%s'", lineno,
                      line);
        const bool is_cand = side[0] == 'c';
        if (!strcmp(cmd, "block")) {
            ck_assert_int_lt(nseq, (int)NELEMS(seq));
            seq[nseq++] = is_cand;
        } else if (!strcmp(cmd, "finish") && nseq > 0) { /* the mode's first finish */
            int per_side[2] = {0, 0};
            for (int i = 0; i < nseq; i++) {
                const int want = ((i / 2) % 2) ^ (i % 2); /* A B, B A, A B, ... */
                ck_assert_msg(seq[i] == want, "mode %d (ending at log line %d): block %d is %s's, "
                              "expected %s's", modes + 1, lineno, i + 1, seq[i] ? "cand" : "base",
                              want ? "cand" : "base");
                per_side[seq[i]]++;
            }
            ck_assert_msg(per_side[0] >= MIN_PAIRS && per_side[1] >= MIN_PAIRS,
                          "mode %d: %d base and %d cand blocks, expected at least %d each",
                          modes + 1, per_side[0], per_side[1], MIN_PAIRS);
            nseq = 0;
            modes++;
        } else if ((!strcmp(cmd, "point") || !strcmp(cmd, "row")) && is_cand) {
            /* the cand's command follows the base's, word for word */
            ck_assert_msg(!strncmp(prev, "base ", 5) && !strcmp(prev + 5, line + 5),
                          "log line %d: '%s' after '%s'", lineno, line, prev);
            points += cmd[0] == 'p';
            rows += cmd[0] == 'r';
        }
        snprintf(prev, sizeof prev, "%s", line);
    }
    fclose(f);
    ck_assert_int_eq(nseq, 0);
    ck_assert_int_eq(modes, NROWS);
    ck_assert_int_eq(points, 2);
    ck_assert_int_eq(rows, 4);
    ck_assert_msg(!strcmp(prev, "cand quit") || !strcmp(prev, "base quit"), "last log line: %s",
                  prev);
}
END_TEST

/* ===================================================== slower candidates */

/* 5% slower on every row: past the 1% ab_slowdown of interleaved rows. */
START_TEST(test_ab_slower_candidate_fails)
{
    struct run r = run_ab("FAKE_FACTOR_cand=1.05");
    ck_assert_exit(r, 1);
    ck_assert_int_eq(count_lines(r.out, "SLOWER ", NULL), NROWS);
    /* judged as a pair (one ab_run): the 1% limit, not the 5% built-in slowdown */
    ck_assert_int_eq(count_lines(r.out, "SLOWER ", "(interleaved)"), NROWS);
    char line[1024];
    last_line(r.out, line, sizeof line);
    ck_assert_msg(!strncmp(line, "regress: REGRESSION", 19), "last line: %s", line);
    run_free(&r);
}
END_TEST

/* 0.5% slower: under the 1% ab_slowdown. */
START_TEST(test_ab_slightly_slower_candidate_passes)
{
    struct run r = run_ab("FAKE_FACTOR_cand=1.005");
    ck_assert_exit(r, 0);
    ck_assert_int_eq(count_lines(r.out, "SLOWER ", NULL), 0);
    ck_assert_int_eq(count_lines(r.out, "pass ", NULL), NROWS);
    char line[1024];
    last_line(r.out, line, sizeof line);
    ck_assert_msg(!strncmp(line, "regress: PASS", 13), "last line: %s", line);
    run_free(&r);
}
END_TEST

/* ============================================================ bad workers */

/* The row of set at index i: its status is `status` and its reason holds
 * each of the (NULL-ended) needles. */
static void assert_row(const struct result_set *set, size_t i, const char *status, ...)
{
    ck_assert_uint_lt(i, set->count);
    const struct result_rec *r = &set->rows[i];
    char label[160];
    result_key_label(&r->key, label, sizeof label);
    ck_assert_msg(!strcmp(r->status, status), "%s row %zu (%s): status %s, expected %s (reason: %s)",
                  set->path, i, label, r->status, status, r->reason);
    va_list ap;
    va_start(ap, status);
    for (const char *needle; (needle = va_arg(ap, const char *));)
        ck_assert_msg(strstr(r->reason, needle), "%s row %zu (%s): reason \"%s\" lacks \"%s\"",
                      set->path, i, label, r->reason, needle);
    va_end(ap);
}

/* A cand worker that is lost at one row (dies or hangs there): the run goes
 * on with a fresh worker and is published whole, NROWS rows a side; that
 * row is error on both sides, the cand's with how its worker was lost and
 * in which step, the base's saying the pair is kept matched; every other
 * row is ok; exit 1 (a candidate row failed). `hang` runs with the tests'
 * small row timeout; the others with no deadline at all (--row-timeout 0),
 * as a death needs none to be found. */
static const struct {
    const char *env;
    bool hang;
    size_t row;               /* the row lost, in the order both sides write them */
    const char *why, *step;   /* in the cand row's reason */
} lost_workers[] = {
    {"FAKE_DIE_cand=row:1", false, 0, "worker exited 3", "(a block)"},
    {"FAKE_DIE_cand=row:5 FAKE_DIE_SIGNAL_cand=9", false, 4, "worker died of signal 9", "(a block)"},
    {"FAKE_HANG_cand=row:2", true, 1, "timed out after ", "(a block)"},
    {"FAKE_HANG_cand=row:8", true, 7, "timed out after ", "(a block)"},
};

START_TEST(test_ab_worker_lost_row_is_error)
{
    struct run r = lost_workers[_i].hang ? run_ab_hang(lost_workers[_i].env, "")
                                         : run_ab_with(lost_workers[_i].env, "--row-timeout 0");
    ck_assert_exit(r, 1);
    ck_assert_msg(strstr(r.err, "ab: the cand side (") && strstr(r.err, lost_workers[_i].why) &&
                  strstr(r.err, "a fresh worker goes on"), "stderr: %s", r.err);
    ck_assert_msg(strstr(r.err, "1 candidate rows are mismatch or error"), "stderr: %s", r.err);
    char id[ID_LEN], partial[600];
    the_ab_id(id, sizeof id);
    ck_assert_int_eq(partial_dirs(partial, sizeof partial), 0);
    ck_assert_int_eq(access(tmp_path("out/%s/gate.txt", id).s, R_OK), 0);
    struct result_set base, cand;
    read_side(id, "base", &base);
    read_side(id, "cand", &cand);
    ck_assert_uint_eq(base.count, NROWS);
    ck_assert_uint_eq(cand.count, NROWS);
    const size_t lost = lost_workers[_i].row;
    for (size_t i = 0; i < NROWS; i++) {
        ck_assert(result_key_equal(&base.rows[i].key, &cand.rows[i].key));
        if (i != lost) {
            assert_row(&base, i, "ok", NULL);
            assert_row(&cand, i, "ok", NULL);
        }
    }
    assert_row(&cand, lost, "error", lost_workers[_i].why, lost_workers[_i].step, NULL);
    assert_row(&base, lost, "error", "not measured: on the cand side, ", lost_workers[_i].why,
               "written as error on both sides to keep the pair matched", NULL);
    results_free(&base);
    results_free(&cand);
    /* the gate compared the rows both sides measured */
    char line[1024];
    last_line(r.out, line, sizeof line);
    ck_assert_msg(strstr(line, "7 compared"), "last line: %s", line);
    run_free(&r);
}
END_TEST

/* The cand worker hangs in the setup of flash_mma, every time: each of its
 * rows (both points, both modes) times out, on both sides, and naive's are
 * measured in between — the run goes on with the next row. */
START_TEST(test_ab_worker_hangs_in_setup)
{
    struct run r = run_ab_hang("FAKE_HANG_cand=variant:flash_mma", "");
    ck_assert_exit(r, 1);
    char id[ID_LEN];
    the_ab_id(id, sizeof id);
    struct result_set base, cand;
    read_side(id, "base", &base);
    read_side(id, "cand", &cand);
    ck_assert_uint_eq(base.count, NROWS);
    ck_assert_uint_eq(cand.count, NROWS);
    for (size_t i = 0; i < NROWS; i++) {
        const bool naive = !strcmp(cand.rows[i].key.variant, "naive");
        assert_row(&cand, i, naive ? "ok" : "error", naive ? NULL : "timed out after ",
                   "(setup and validation)", NULL);
        assert_row(&base, i, naive ? "ok" : "error", naive ? NULL : "not measured: on the cand side",
                   NULL);
    }
    ck_assert_int_eq(count_rows(&cand, "naive", "ok"), NROWS / 2);
    results_free(&base);
    results_free(&cand);
    run_free(&r);
}
END_TEST

/* A fake worker's settings, and what ab's stderr must say of it. */
struct worker_case {
    const char *env, *needle;
};

/* Runs that cannot go on: exit 2, the last line of stderr says where the
 * partial run is, nothing is published, and the sides' runs are in the
 * partial directory; a line before names the cand side and why. A worker
 * that hangs in every row's setup (a wedged GPU) hangs again in its fresh
 * successor's first; a fresh worker that cannot take over (it dies or
 * hangs at reopen); a worker of protocol 1, which has no reopen. */
static const struct worker_case stuck_workers[] = {
    {"FAKE_HANG_cand=setup", "again right after a restart: giving up"},
    {"FAKE_DIE_cand=row:2 FAKE_HANG_cand=reopen", "a fresh worker could not take over: timed out after"},
    {"FAKE_HANG_cand=row:2 FAKE_DIE_cand=reopen FAKE_DIE_STATUS_cand=4",
     "a fresh worker could not take over: worker exited 4"},
    {"FAKE_DIE_cand=row:2 FAKE_PROTO_cand=1", "protocol 1, which cannot continue a run"},
};

/* A base build from before the init key (protocol 2: it draws uniform
 * inputs) against normal points: refused up front, one line, nothing
 * written; on uniform points the pair runs, and the points go without init=. */
START_TEST(test_ab_old_base_and_the_init_key)
{
    struct run r = run_ab("FAKE_PROTO_base=2");
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "predates the init key") && strstr(r.err, "INIT=uniform"), "stderr: %s", r.err);
    char id[ID_LEN];
    ck_assert_int_eq(ab_dirs(id, sizeof id), 0);
    run_free(&r);
    r = run_ab_with("FAKE_PROTO_base=2", "--init uniform");
    ck_assert_exit(r, 0);
    run_free(&r);
    char *log = slurp(tmp_path("log").s);
    ck_assert_ptr_nonnull(log);
    ck_assert_msg(strstr(log, "base point ") && !strstr(log, "init="), "log: %s", log);
    free(log);
}
END_TEST

/* --flush reaches both workers, with its value, only when given: a build
 * from before the option still serves a pair that does not ask for it. */
START_TEST(test_ab_passes_the_flush)
{
    path_t argv_log = tmp_path("argv");
    char env[600];
    snprintf(env, sizeof env, "FAKE_ARGV='%s'", argv_log.s);
    struct run r = run_ab_with(env, "--flush read");
    ck_assert_exit(r, 0);
    run_free(&r);
    char *log = slurp(argv_log.s);
    ck_assert_ptr_nonnull(log);
    ck_assert_msg(strstr(log, "base --worker") && strstr(log, "cand --worker"), "argv: %s", log);
    int asked = 0;
    for (const char *at = log; (at = strstr(at, " --flush read")); at++) asked++;
    ck_assert_msg(asked == 2, "argv (--flush read %d times): %s", asked, log);
    free(log);
    unlink(argv_log.s);
    r = run_ab_with(env, "");
    ck_assert_exit(r, 0);
    run_free(&r);
    log = slurp(argv_log.s);
    ck_assert_ptr_nonnull(log);
    ck_assert_msg(!strstr(log, "--flush"), "argv: %s", log);
    free(log);
    r = run_ab_with("", "--flush zero");
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "--flush: 'zero' is not memset or read"), "stderr: %s", r.err);
    run_free(&r);
}
END_TEST

/* Two revisions whose cold rows would follow different L2 flushes (a base
 * of protocol 6, memset alone, against a read candidate; or two of
 * protocol 7) are refused before anything is measured, naming both; one
 * revision under two flushes is the comparison asked for and runs; hot
 * rows need no flush. */
START_TEST(test_ab_refuses_two_flushes_of_two_revisions)
{
    static const char *const refused[] = {
        "FAKE_PROTO_base=6 FAKE_PROTO_cand=7 FAKE_FLUSH_cand=read FAKE_REV_base=aaa FAKE_REV_cand=bbb",
        "FAKE_PROTO=7 FAKE_FLUSH_base=read FAKE_REV_base=aaa FAKE_REV_cand=bbb",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        struct run r = run_ab(refused[i]);
        ck_assert_exit(r, 2);
        ck_assert_msg(strstr(r.err, "flushes the L2 before a cold sample with") && strstr(r.err, "rev aaa") &&
                          strstr(r.err, "rev bbb") && strstr(r.err, "give both one flush"),
                      "%s: stderr: %s", refused[i], r.err);
        char id[ID_LEN];
        ck_assert_int_eq(ab_dirs(id, sizeof id), 0);
        run_free(&r);
    }
    struct run r = run_ab_with(refused[1], "--mode graph");
    ck_assert_exit(r, 0);
    run_free(&r);
    r = run_ab("FAKE_PROTO=7 FAKE_FLUSH_cand=read");
    ck_assert_exit(r, 0);
    run_free(&r);
    r = run_ab("FAKE_PROTO=7 FAKE_REV_base=aaa FAKE_REV_cand=bbb");
    ck_assert_exit(r, 0);
    run_free(&r);
}
END_TEST

START_TEST(test_ab_worker_that_cannot_go_on)
{
    struct run r = run_ab_hang(stuck_workers[_i].env, "--init uniform"); /* a protocol-1 build reads no init= */
    ck_assert_exit(r, 2);
    char id[ID_LEN], partial[600], line[1024];
    ck_assert_int_eq(ab_dirs(id, sizeof id), 0);
    ck_assert_int_eq(partial_dirs(partial, sizeof partial), 1);
    last_line(r.err, line, sizeof line);
    ck_assert_msg(!strncmp(line, "ab: stopped before every side had finished every row", 52) &&
                  strstr(line, partial), "stderr's last line: %s (the partial run: %s)", line, partial);
    ck_assert_msg(strstr(r.err, "ab: the cand side (") && strstr(r.err, stuck_workers[_i].needle),
                  "stderr: %s", r.err);
    ck_assert_int_eq(count_lines(r.out, "regress: ", NULL), 0);
    const char *slash = strrchr(partial, '/');
    snprintf(id, sizeof id, "%.*s", (int)(strlen(slash + 2) - strlen(".partial")), slash + 2);
    path_t csv = tmp_path("out/.%s.partial/%s-base.csv", id, id);
    char *text = slurp(csv.s);
    ck_assert_msg(!strncmp(text, "run_id,", 7), "%s: '%s'", csv.s, text);
    free(text);
    run_free(&r);
}
END_TEST

/* A worker that does not start (it hangs or dies before its greeting):
 * exit 2 naming the side and why, before anything is written. */
static const struct worker_case unstarted_workers[] = {
    {"FAKE_HANG_cand=start", "did not start: timed out after"},
    {"FAKE_DIE_cand=start", "did not start: worker exited 3"},
};

START_TEST(test_ab_worker_does_not_start)
{
    struct run r = run_ab_hang(unstarted_workers[_i].env, "");
    ck_assert_exit(r, 2);
    char line[1024], id[ID_LEN], partial[600];
    last_line(r.err, line, sizeof line);
    ck_assert_msg(!strncmp(line, "ab: the cand side (", 19) && strstr(line, unstarted_workers[_i].needle),
                  "stderr's last line: %s", line);
    ck_assert_int_eq(ab_dirs(id, sizeof id), 0);
    ck_assert_int_eq(partial_dirs(partial, sizeof partial), 0);
    ck_assert_str_eq(r.out, "");
    run_free(&r);
}
END_TEST

/* The cand worker greets with protocol 9: refused before anything is
 * written, exit 2, stderr names the worker and the protocol. */
START_TEST(test_ab_other_protocol_refused)
{
    struct run r = run_ab("FAKE_PROTO_cand=9");
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "cand_worker") && strstr(r.err, "protocol 9"), "stderr: %s",
                  r.err);
    char line[1024];
    last_line(r.err, line, sizeof line);
    ck_assert_msg(!strncmp(line, "ab: ", 4) && strstr(line, "protocol"), "stderr's last line: %s",
                  line);
    char id[ID_LEN];
    ck_assert_int_eq(ab_dirs(id, sizeof id), 0);
    ck_assert_str_eq(r.out, "");
    run_free(&r);
}
END_TEST

/* ===================================================== variants that differ */

/* The base build has no flash_mma: its rows in the candidate are new, the
 * rest compared; a pass. */
START_TEST(test_ab_variant_absent_from_base)
{
    struct run r = run_ab("FAKE_ABSENT_base=flash_mma");
    ck_assert_exit(r, 0);
    ck_assert_msg(strstr(r.err, "the base build (fake) has no variant flash_mma"), "stderr: %s",
                  r.err);
    ck_assert_int_eq(count_lines(r.out, "new ", "flash_mma"), NROWS / 2);
    ck_assert_int_eq(count_lines(r.out, "new ", NULL), NROWS / 2);
    ck_assert_int_eq(count_lines(r.out, "pass ", "naive"), NROWS / 2);
    char line[1024], id[ID_LEN];
    last_line(r.out, line, sizeof line);
    ck_assert_msg(!strncmp(line, "regress: PASS: 4 compared", 25) && strstr(line, "4 new"),
                  "last line: %s", line);
    the_ab_id(id, sizeof id);
    struct result_set base, cand;
    read_side(id, "base", &base);
    read_side(id, "cand", &cand);
    ck_assert_int_eq(count_rows(&base, "flash_mma", "ok"), 0);
    ck_assert_uint_eq(base.count, NROWS / 2);
    ck_assert_int_eq(count_rows(&cand, "flash_mma", "ok"), NROWS / 2);
    results_free(&base);
    results_free(&cand);
    run_free(&r);
}
END_TEST

/* The candidate skips naive (its rows say why): rows that were ok and are not
 * fail the gate, the base side timed alone meanwhile. */
START_TEST(test_ab_candidate_skips_a_variant)
{
    struct run r = run_ab("FAKE_SKIP_cand=naive");
    ck_assert_exit(r, 1);
    ck_assert_int_eq(count_lines(r.out, "FAIL status ", "naive"), NROWS / 2);
    ck_assert_int_eq(count_lines(r.out, "pass ", "flash_mma"), NROWS / 2);
    char line[1024], id[ID_LEN];
    last_line(r.out, line, sizeof line);
    ck_assert_msg(!strncmp(line, "regress: REGRESSION", 19) && strstr(line, "4 failed"),
                  "last line: %s", line);
    the_ab_id(id, sizeof id);
    struct result_set base, cand;
    read_side(id, "base", &base);
    read_side(id, "cand", &cand);
    ck_assert_int_eq(count_rows(&base, NULL, "ok"), NROWS);
    ck_assert_int_eq(count_rows(&cand, "naive", "skipped"), NROWS / 2);
    results_free(&base);
    results_free(&cand);
    run_free(&r);
}
END_TEST

/* ================================================================== usage */

/* Exit 2 with exactly one line on stderr, "ab: ...", that mentions needle. */
static void assert_usage_error(const struct run *r, const char *needle)
{
    ck_assert_exit(*r, 2);
    const char *nl = strchr(r->err, '\n');
    ck_assert_msg(nl != NULL && nl[1] == '\0', "stderr is not one line: \"%s\"", r->err);
    ck_assert_msg(!strncmp(r->err, "ab: ", 4), "stderr does not start with \"ab: \": \"%s\"", r->err);
    ck_assert_msg(strstr(r->err, needle) != NULL, "stderr \"%s\" does not mention \"%s\"", r->err,
                  needle);
    ck_assert_str_eq(r->out, "");
}

static const struct {
    const char *args, *needle;
} usage_errors[] = {
    {"--base build/attnbench --point 'batch=2 heads=4 seq=128 dim=64'", "--cand"},
    {"--cand build/attnbench --point 'batch=2 heads=4 seq=128 dim=64'", "--base"},
    {"--base x --cand y --block-ms fast", "--block-ms"},
    {"--base x --cand y --point 'batch=2 heads=4 seq=128 dim=64' --frobnicate", "--frobnicate"},
    {"--base x --cand y --point 'batch=2 heads=4 seq=128 dim=64' --trace /tmp/t", "--trace"},
    {"--base x --cand", "--cand"},
    /* attnbench options an A/B run does not implement: refused, not ignored */
    {"--base x --cand y --point 'batch=2 heads=4 seq=128 dim=64' --dry-run", "'--dry-run'"},
    {"--base x --cand y --shard 1/2", "'--shard'"},
    {"--base x --cand y --resume 20261201T000000Z", "'--resume'"},
    {"--base x --cand y --extend 20261201T000000Z", "'--extend'"},
    {"--base x --cand y --run-id mine", "'--run-id'"},
    {"--base x --cand y --force", "'--force'"},
    {"--base x --cand y --worker", "'--worker'"},
    {"--base x --cand y --supervised-fd 3", "'--supervised-fd'"},
    {"--base x --cand y --row-timeout soon", "--row-timeout"},
};

START_TEST(test_ab_usage_errors)
{
    struct run r = run_ab_args(usage_errors[_i].args);
    assert_usage_error(&r, usage_errors[_i].needle);
    run_free(&r);
    char id[ID_LEN];
    ck_assert_int_eq(ab_dirs(id, sizeof id), 0);
}
END_TEST

/* --list prints the variants and does nothing else: no worker started,
 * nothing written, even with workers and --out given. */
START_TEST(test_ab_list_touches_nothing)
{
    struct run r = run_ab_with("", "--list");
    ck_assert_exit(r, 0);
    ck_assert_msg(!strncmp(r.out, "variant ", 8) && strstr(r.out, "\nnaive ") &&
                  strstr(r.out, "\nflash_mma "), "stdout: %s", r.out);
    ck_assert_str_eq(r.err, "");
    ck_assert_int_eq(access(tmp_path("out").s, F_OK), -1);
    ck_assert_int_eq(access(tmp_path("log").s, F_OK), -1);
    run_free(&r);
    struct run alone = run_ab_args("--list");
    ck_assert_exit(alone, 0);
    ck_assert_msg(!strncmp(alone.out, "variant ", 8), "stdout: %s", alone.out);
    run_free(&alone);
}
END_TEST

/* ============================================================ compare runs */

/* A compare run's fixture beside the A/B one: DIR/py_worker, a link to the
 * fake worker standing in for Python (the peer's side, "py"), and
 * DIR/peers/fake_peers.py, a peer module whose text names `fakepeer`. */
static void compare_setup(void)
{
    tmpdir_setup();
    char cwd[PATH_MAX], worker[PATH_MAX + 64];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(worker, sizeof worker, "%s/%s", cwd, FAKE_WORKER);
    ck_assert_int_eq(symlink(worker, tmp_path("py_worker").s), 0);
    ck_assert_int_eq(mkdir(tmp_path("peers").s, 0755), 0);
    write_text(tmp_path("peers/fake_peers.py").s, "class FakePeer:\n    name = \"fakepeer\"\n");
}

#define COMPARE_ROWS (3 * 2 * 2) /* naive, flash_mma, fakepeer × POINT's 2 points × MODES */

/* build/ab --compare LIST with the fake workers (attnbench: base_worker; the
 * peer's Python: py_worker), protocol 3, the log naming each command's
 * variant, on POINT and MODES unless args give others, into DIR/out. */
static struct run run_compare(const char *env, const char *list, const char *args)
{
    const char *ab = AB;
    ck_assert_msg(access(ab, X_OK) == 0, "%s is not built: run make all first", ab);
    char cmd[8192];
    size_t n = (size_t)snprintf(cmd, sizeof cmd,
        "FAKE_LOG='%s' FAKE_LOG_VARIANT=1 FAKE_PROTO=3 ATTN_PEERS_DIR='%s' %s %s --compare %s --bin '%s' "
        "--python '%s' --warm-ms 0 --budget-ms 5000 --seed 42 --out '%s' %s",
        tmp_path("log").s, tmp_path("peers").s, env, ab, list, tmp_path("base_worker").s,
        tmp_path("py_worker").s, tmp_path("out").s, args);
    ck_assert_uint_lt(n, sizeof cmd);
    return run_shell(cmd, tmpdir);
}

/* The one run DIR/out/ID.csv a compare run published: its ID. */
static void the_compare_id(char *id, size_t len)
{
    DIR *d = opendir(tmp_path("out").s);
    ck_assert_msg(d != NULL, "no %s/out", tmpdir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l <= 4 || strcmp(e->d_name + l - 4, ".csv")) continue;
        snprintf(id, len, "%.*s", (int)(l - 4), e->d_name);
        n++;
    }
    closedir(d);
    ck_assert_msg(n == 1, "%d runs in %s/out, expected 1", n, tmpdir);
}

/* Three variants, one a Python peer: one run of every row, each marked with
 * the compare run, in point order; the reference's verdict and a faster and
 * a slower variant found; the table kept beside the run; the sides' parts
 * gone; the blocks in whole rotating rounds. */
START_TEST(test_compare_three_variants)
{
    struct run r = run_compare("FAKE_VFACTOR_flash_mma=0.9 FAKE_VFACTOR_fakepeer=1.2", "naive,flash_mma,fakepeer",
                               "--point '" POINT "' --mode " MODES);
    ck_assert_exit(r, 0);
    char id[ID_LEN], partial[600];
    the_compare_id(id, sizeof id);
    ck_assert_int_eq(partial_dirs(partial, sizeof partial), 0);
    struct result_set set;
    path_t csv = tmp_path("out/%s.csv", id);
    ck_assert_msg(results_read(csv.s, &set) == ATTN_OK, "%s: %s", csv.s, attn_error_message());
    ck_assert_int_eq(set.count, COMPARE_ROWS);
    static const char *const order[] = {"naive", "flash_mma", "fakepeer"};
    for (size_t i = 0; i < set.count; i++) {
        const struct result_rec *row = &set.rows[i];
        ck_assert_str_eq(row->status, "ok");
        ck_assert_str_eq(row->compare_run, id);
        ck_assert_str_eq(row->run_id, id);
        ck_assert_str_eq(row->ab_run, "");
        ck_assert_str_eq(row->key.regime, "burst");
        ck_assert_str_eq(row->key.variant, order[i % 3]); /* each point's and mode's rows together */
        ck_assert_uint_eq(row->nsample_ms, (size_t)row->samples);
    }
    results_free(&set);
    char *env = slurp(tmp_path("out/%s.env", id).s), *txt = slurp(tmp_path("out/%s.txt", id).s);
    ck_assert_ptr_nonnull(env);
    ck_assert_ptr_nonnull(txt);
    ck_assert_msg(strstr(env, "\ncompare_ref=naive\n") && strstr(env, "\ncompare_variants=naive,flash_mma,fakepeer\n") &&
                  strstr(env, "compare_worker.fakepeer=") && strstr(env, "peers/fake_peers.py"), "env: %s", env);
    ck_assert_int_eq(count_lines(r.out, "", "1 (reference)"), 4);
    ck_assert_int_eq(count_lines(r.out, "", "faster"), 4);
    ck_assert_int_eq(count_lines(r.out, "", "slower"), 4);
    ck_assert_int_eq(count_lines(r.out, "", "level"), 0);
    ck_assert_str_eq(txt, r.out);
    run_free(&r);
    /* --table prints it again from the run's files, against its own reference or --ref */
    char args[600];
    snprintf(args, sizeof args, "--table '%s'", csv.s);
    struct run again = run_ab_args(args);
    ck_assert_exit(again, 0);
    ck_assert_str_eq(again.out, txt);
    run_free(&again);
    snprintf(args, sizeof args, "--table '%s' --ref fakepeer", csv.s);
    again = run_ab_args(args);
    ck_assert_exit(again, 0);
    ck_assert_int_eq(count_lines(again.out, "", "faster"), 8);
    run_free(&again);
    free(env);
    free(txt);
    /* the first mode's blocks: naive flash_mma fakepeer, flash_mma fakepeer naive, fakepeer naive flash_mma, ... */
    FILE *f = fopen(tmp_path("log").s, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024], variant[64], cmd[16];
    int nblock = 0;
    while (fgets(line, sizeof line, f) && nblock < 9)
        if (sscanf(line, "%63s %15s", variant, cmd) == 2 && !strcmp(cmd, "block")) {
            ck_assert_msg(!strcmp(variant, order[(nblock / 3 + nblock % 3) % 3]), "block %d is %s's",
                          nblock + 1, variant);
            nblock++;
        }
    fclose(f);
    ck_assert_int_eq(nblock, 9);
}
END_TEST

/* --ref names the reference; the table's ratios are against it. */
START_TEST(test_compare_ref)
{
    struct run r = run_compare("FAKE_VFACTOR_flash_mma=0.9", "naive,flash_mma", "--ref flash_mma --point "
                               "'batch=2 heads=4 seq=128 dim=64' --mode cold");
    ck_assert_exit(r, 0);
    ck_assert_int_eq(count_lines(r.out, "", "1 (reference)"), 1);
    ck_assert_int_eq(count_lines(r.out, "", "slower"), 1); /* naive, 1/0.9 of flash_mma's time */
    ck_assert_msg(strstr(r.out, "flash_mma's"), "stdout: %s", r.out);
    run_free(&r);
}
END_TEST

/* --sustain: the board loaded in turns (load) until the readings settle,
 * each side told so (settled), the rows sustained with the settled clock
 * and power. */
START_TEST(test_compare_sustained)
{
    struct run r = run_compare("FAKE_MHZ=1680 FAKE_WATTS=699", "naive,fakepeer",
                               "--sustain 4 --point 'batch=2 heads=4 seq=128 dim=64' --mode cold");
    ck_assert_exit(r, 0);
    ck_assert_msg(strstr(r.err, "settled after"), "stderr: %s", r.err);
    char id[ID_LEN];
    the_compare_id(id, sizeof id);
    struct result_set set;
    ck_assert_int_eq(results_read(tmp_path("out/%s.csv", id).s, &set), ATTN_OK);
    ck_assert_int_eq(set.count, 2);
    for (size_t i = 0; i < set.count; i++) {
        ck_assert_str_eq(set.rows[i].key.regime, "sustained");
        ck_assert_int_eq(set.rows[i].settled, 1);
        ck_assert_double_eq_tol(set.rows[i].settled_mhz, 1680, 0.5);
        ck_assert_double_eq_tol(set.rows[i].settled_watts, 699, 0.5);
    }
    results_free(&set);
    run_free(&r);
    /* every load before the first block, and both sides told */
    char *log = slurp(tmp_path("log").s);
    ck_assert_ptr_nonnull(log);
    const char *first_block = strstr(log, " block ");
    ck_assert_ptr_nonnull(first_block);
    ck_assert_int_ge(count_lines(log, "naive load ", NULL), 2);
    ck_assert_int_ge(count_lines(log, "fakepeer load ", NULL), 2);
    ck_assert_int_eq(count_lines(log, "naive settled 1 ", NULL), 1);
    ck_assert_int_eq(count_lines(log, "fakepeer settled 1 ", NULL), 1);
    ck_assert_msg(strstr(log, "settled 1 ") < first_block, "a block before the load ended: %s", log);
    free(log);
}
END_TEST

/* A peer's worker that dies in a block: its row is error, saying why, a
 * fresh worker goes on; the other variants' rows are measured; exit 1. */
START_TEST(test_compare_lost_worker)
{
    struct run r = run_compare("FAKE_DIE_py=block:2", "naive,flash_mma,fakepeer",
                               "--row-timeout 60 --point '" POINT "' --mode " MODES);
    ck_assert_exit(r, 1);
    char id[ID_LEN];
    the_compare_id(id, sizeof id);
    struct result_set set;
    ck_assert_int_eq(results_read(tmp_path("out/%s.csv", id).s, &set), ATTN_OK);
    ck_assert_int_eq(set.count, COMPARE_ROWS);
    ck_assert_int_eq(count_rows(&set, "naive", "ok"), 4);
    ck_assert_int_eq(count_rows(&set, "flash_mma", "ok"), 4);
    ck_assert_int_ge(count_rows(&set, "fakepeer", "error"), 1);
    for (size_t i = 0; i < set.count; i++)
        if (!strcmp(set.rows[i].status, "error"))
            ck_assert_msg(strstr(set.rows[i].reason, "worker exited 3"), "reason: %s", set.rows[i].reason);
    results_free(&set);
    run_free(&r);
}
END_TEST

/* The partial folder a stopped compare run left in DIR/out: its ID. */
static void the_partial_id(char *id, size_t len)
{
    DIR *d = opendir(tmp_path("out").s);
    ck_assert_msg(d != NULL, "no %s/out", tmpdir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name), sl = strlen(GATE_AB_PARTIAL_SUFFIX);
        if (e->d_name[0] != '.' || l <= sl + 1 || strcmp(e->d_name + l - sl, GATE_AB_PARTIAL_SUFFIX)) continue;
        snprintf(id, len, "%.*s", (int)(l - sl - 1), e->d_name + 1);
        n++;
    }
    closedir(d);
    ck_assert_msg(n == 1, "%d partial runs in %s/out, expected 1", n, tmpdir);
}

/* A compare run stopped part way (the peer's worker hangs in its fourth
 * row, POINT's second point in graph mode, and a fresh one cannot take
 * over) says how to go on; --resume ID with another variant list, other
 * modes or another revision is refused, nothing changed; with the same
 * (its parts rewritten as a build from before the q_len column wrote them) it
 * keeps the first point, measures the second again in turns (its cold rows,
 * written before the stop, dropped), and joins one run holding every row
 * once, the resume in its .env; the joined run is not resumed again. */
START_TEST(test_compare_resume)
{
    char args[512], resume[1024], id[ID_LEN];
    snprintf(args, sizeof args, "--row-timeout %g --point '" POINT "' --mode " MODES, hang_timeout_s());
    struct run r = run_compare("FAKE_HANG_py=row:4 FAKE_DIE_py=reopen FAKE_DIE_STATUS_py=4", "naive,flash_mma,fakepeer",
                               args);
    ck_assert_exit(r, 2);
    the_partial_id(id, sizeof id);
    snprintf(resume, sizeof resume, "the same command with --resume %s continues it", id);
    ck_assert_msg(strstr(r.err, resume), "stderr: %s", r.err);
    run_free(&r);
    path_t part = tmp_path("out/.%s%s/naive/%s.csv", id, GATE_AB_PARTIAL_SUFFIX, id);
    struct result_set set;
    ck_assert_int_eq(results_read(part.s, &set), ATTN_OK);
    ck_assert_int_eq(set.count, 3); /* the first point's two modes, the second's cold */
    results_free(&set);

    static const struct {
        const char *env, *list, *more, *needle;
    } refused[] = {
        {"", "naive,flash_mma,inplace", "", "no run of inplace in"},
        {"", "naive,flash_mma,fakepeer", "--mode cold", "a row at a point, mode or regime this run does not have"},
        {"FAKE_REV=other", "naive,flash_mma,fakepeer", "", "measured by revision fake, the naive worker is other"},
        {"FAKE_GPU=other", "naive,flash_mma,fakepeer", "--force", "measured on 'fakegpu', this GPU is 'other'"},
    };
    for (size_t i = 0; i < NELEMS(refused); i++) {
        snprintf(resume, sizeof resume, "%s --resume %s %s", args, id, refused[i].more);
        r = run_compare(refused[i].env, refused[i].list, resume);
        assert_usage_error(&r, refused[i].needle);
        run_free(&r);
        ck_assert_int_eq(results_read(part.s, &set), ATTN_OK);
        ck_assert_int_eq(set.count, 3);
        results_free(&set);
    }

    /* the parts' rows as a build from before the q_len column wrote them:
     * resumed all the same, put in this build's schema */
    char strip[2048];
    snprintf(strip, sizeof strip,
             "for f in '%s'/*/%s.csv; do "
             "c=$(head -n 1 \"$f\" | tr , '\\n' | grep -nx q_len | cut -d: -f1) && "
             "cut -d, --complement -f\"$c\" \"$f\" > \"$f.t\" && mv \"$f.t\" \"$f\" || exit 1; done",
             tmp_path("out/.%s%s", id, GATE_AB_PARTIAL_SUFFIX).s, id);
    ck_assert_int_eq(system(strip), 0);
    char *old = slurp(part.s);
    ck_assert_msg(!strstr(old, ",q_len,"), "%s: %s", part.s, old);
    free(old);
    ck_assert_int_eq(unlink(tmp_path("log").s), 0);
    snprintf(resume, sizeof resume, "%s --resume %s", args, id);
    r = run_compare("", "naive,flash_mma,fakepeer", resume);
    ck_assert_exit(r, 0);
    ck_assert_msg(strstr(r.err, "resumed: 1 of 2 points measured already, kept"), "stderr: %s", r.err);
    run_free(&r);
    char *log = slurp(tmp_path("log").s);
    ck_assert_int_eq(count_lines(log, "", " point "), 3); /* the second point only, once per side */
    free(log);
    ck_assert_int_eq(results_read(tmp_path("out/%s.csv", id).s, &set), ATTN_OK);
    ck_assert_int_eq(set.count, COMPARE_ROWS);
    ck_assert_int_eq(count_rows(&set, "fakepeer", "ok"), 4);
    for (size_t i = 0; i < set.count; i++) ck_assert_int_eq(set.rows[i].nsample_ms > 0, 1);
    results_free(&set);
    char *env = slurp(tmp_path("out/%s.env", id).s);
    ck_assert_msg(strstr(env, "\ncompare_resumed=") && strstr(env, " points_kept=1 of 2\n"), "env: %s", env);
    free(env);
    ck_assert_int_eq(access(tmp_path("out/.%s%s", id, GATE_AB_PARTIAL_SUFFIX).s, F_OK), -1);

    r = run_compare("", "naive,flash_mma,fakepeer", resume);
    assert_usage_error(&r, "is joined already: nothing to continue");
    run_free(&r);
}
END_TEST

static const struct {
    const char *list, *args, *needle;
} compare_errors[] = {
    {"naive", "", "at least two variants"},
    {"naive,nosuch", "", "unknown variant 'nosuch'"},
    {"naive,naive", "", "'naive' named twice"},
    {"naive,flash_mma", "--ref inplace", "--ref 'inplace'"},
    {"naive,flash_mma", "--variants naive", "--variants"},
    {"naive,flash_mma", "--base x", "--base"},
    {"naive,flash_mma", "--force", "--force goes with --resume ID"},
    {"naive,flash_mma", "--point 'batch=2 heads=4 seq=128 q_len=1 dim=64'", "predates the q_len key"},
    {"naive,flash_mma", "--resume a/b", "--resume: 'a/b' is not a run id"},
    {"naive,flash_mma", "--resume 20990101T000000Z", "no interrupted compare run"},
};

/* Bad input: exit 2, one line naming it, nothing written. */
START_TEST(test_compare_usage_errors)
{
    struct run r = run_compare("", compare_errors[_i].list, compare_errors[_i].args);
    assert_usage_error(&r, compare_errors[_i].needle);
    run_free(&r);
    ck_assert_int_eq(access(tmp_path("out").s, F_OK), -1);
}
END_TEST

/* A peer whose worker cannot start (its framework missing: exit 3) is
 * named, exit 2. */
START_TEST(test_compare_peer_does_not_start)
{
    struct run r = run_compare("FAKE_DIE_py=start", "naive,fakepeer", "--point 'batch=2 heads=4 seq=128 dim=64'");
    ck_assert_exit(r, 2);
    ck_assert_msg(strstr(r.err, "ab: the fakepeer side (") && strstr(r.err, "fake_peers.py) did not start: worker exited 3"),
                  "stderr: %s", r.err);
    run_free(&r);
}
END_TEST

/* ------------------------------------------------------------------ suite */

static Suite *ab_suite(void)
{
    Suite *s = suite_create("ab");
    TCase *tc = tcase_create("fake workers");
    tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
    /* a test runs build/ab once or twice: under a second, or about one
     * hang_timeout_s per hang it provokes (two at most); Check's
     * CK_TIMEOUT_MULTIPLIER scales this limit and hang_timeout_s alike */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ab_aa_passes);
    tcase_add_test(tc, test_ab_blocks_interleave);
    tcase_add_test(tc, test_ab_slower_candidate_fails);
    tcase_add_test(tc, test_ab_slightly_slower_candidate_passes);
    tcase_add_loop_test(tc, test_ab_worker_lost_row_is_error, 0, (int)NELEMS(lost_workers));
    tcase_add_test(tc, test_ab_worker_hangs_in_setup);
    tcase_add_loop_test(tc, test_ab_worker_that_cannot_go_on, 0, (int)NELEMS(stuck_workers));
    tcase_add_loop_test(tc, test_ab_worker_does_not_start, 0, (int)NELEMS(unstarted_workers));
    tcase_add_test(tc, test_ab_other_protocol_refused);
    tcase_add_test(tc, test_ab_old_base_and_the_init_key);
    tcase_add_test(tc, test_ab_passes_the_flush);
    tcase_add_test(tc, test_ab_refuses_two_flushes_of_two_revisions);
    tcase_add_test(tc, test_ab_variant_absent_from_base);
    tcase_add_test(tc, test_ab_candidate_skips_a_variant);
    suite_add_tcase(s, tc);
    tc = tcase_create("usage");
    tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
    tcase_set_timeout(tc, 60); /* a run of build/ab each */
    tcase_add_loop_test(tc, test_ab_usage_errors, 0, (int)NELEMS(usage_errors));
    tcase_add_test(tc, test_ab_list_touches_nothing);
    suite_add_tcase(s, tc);
    tc = tcase_create("compare");
    tcase_add_checked_fixture(tc, compare_setup, tmpdir_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_compare_three_variants);
    tcase_add_test(tc, test_compare_ref);
    tcase_add_test(tc, test_compare_sustained);
    tcase_add_test(tc, test_compare_lost_worker);
    tcase_add_test(tc, test_compare_resume);
    tcase_add_loop_test(tc, test_compare_usage_errors, 0, (int)NELEMS(compare_errors));
    tcase_add_test(tc, test_compare_peer_does_not_start);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    /* the fake workers' settings come from the environment: start from none */
    extern char **environ;
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; *e; e++)
            if (!strncmp(*e, "FAKE_", 5)) {
                char name[256];
                snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
                unsetenv(name);
                again = 1;
                break;
            }
    }
    if (access(AB, X_OK) != 0) {
        fprintf(stderr, "check_ab: %s is not built: run make all first (from the repository root)\n", AB);
        return EXIT_FAILURE;
    }
    SRunner *sr = srunner_create(ab_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

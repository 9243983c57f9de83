/* regress.c — the regression gate's command line (rules in gate.h).
 *   regress [--gpu NAME] [--results-dir DIR]            the newest A/B pair
 *   regress --ab DIR                                     the A/B pair in DIR
 *   regress --results FILE --baseline FILE               two given runs
 *   regress --trend [--results FILE]                     a run against the blessed baseline
 *   regress --bless [--results FILE] [--reason TEXT]     make a run the baseline
 * Common: [--thresholds FILE] [--markdown FILE] [--allow-missing]
 *         [--allow-gpu-mismatch].
 * An A/B pair is DIR/<gpu>/ab/AB_ID/AB_ID-base.csv and AB_ID-cand.csv (make ab);
 * the newest is the greatest AB_ID, and only a whole pair is gated (ab_pair,
 * gate_check_pair). <gpu> comes from --gpu, else the one GPU under DIR
 * (default: results) that has what the mode needs. --trend without
 * --results takes the newest run that holds the baseline's rows
 * (choose_trend_run).
 * Exit 0 pass, 1 regression (or a refused blessing), 2 bad input. */
#include "gate.h"
#include "../../common/errors.h"
#include "../../common/files.h"
#include "../../common/results.h"
#include "../resume.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct regress_args {
    const char *results, *baseline, *thresholds, *gpu, *dir, *markdown, *ab, *reason;
    bool allow_missing, allow_gpu_mismatch, bless, trend, help;
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: regress [--gpu NAME] [--results-dir DIR]     gate the newest A/B pair (make ab)\n"
        "       regress --ab DIR                              gate the A/B pair in DIR\n"
        "       regress --results FILE --baseline FILE        gate FILE against a baseline FILE\n"
        "       regress --trend [--results FILE]              a run against DIR/<gpu>/baseline.csv\n"
        "                                                     (default: the newest run that holds\n"
        "                                                     the baseline's rows)\n"
        "       regress --bless [--results FILE] [--reason TEXT]  make a run (default: the newest)\n"
        "                                                     the baseline\n"
        "options: --thresholds FILE --markdown FILE --allow-missing --allow-gpu-mismatch\n"
        "An A/B pair is DIR/<gpu>/ab/AB_ID/AB_ID-base.csv and -cand.csv (default DIR: results),\n"
        "gated only when whole: gate.txt written, both sides with the rows ab planned.\n"
        "A run is never compared with itself. --bless gates the run against the current\n"
        "baseline first and refuses a regression unless --reason says why; every blessing\n"
        "is logged in DIR/<gpu>/baselines/LOG.\n"
        "Exit: 0 pass, 1 regression (or a refused blessing), 2 bad input. The last line of\n"
        "a comparison is `regress: PASS ...` or `regress: REGRESSION ...`.\n");
}

/* --reason is stored as given, one field of one line of baselines/LOG
 * (tab-separated): every byte printable text, UTF-8 included; a tab, a line
 * end or another control character is refused, not escaped, so that what the
 * LOG says is exactly what was typed. */
static int check_reason(const char *reason)
{
    if (!reason[strspn(reason, " ")]) return ATTN_FAIL(ATTN_ERR_INPUT, "--reason: empty");
    for (const unsigned char *c = (const unsigned char *)reason; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return ATTN_FAIL(ATTN_ERR_INPUT, "--reason: control character 0x%02x at byte %zu: the "
                             "reason is one line of printable text, stored as given in "
                             "baselines/LOG", *c, (size_t)(c - (const unsigned char *)reason) + 1);
    return ATTN_OK;
}

static int parse_args(int argc, char **argv, struct regress_args *a)
{
    memset(a, 0, sizeof *a);
    a->dir = "results";
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--allow-missing")) { a->allow_missing = true; continue; }
        if (!strcmp(o, "--allow-gpu-mismatch")) { a->allow_gpu_mismatch = true; continue; }
        if (!strcmp(o, "--bless")) { a->bless = true; continue; }
        if (!strcmp(o, "--trend")) { a->trend = true; continue; }
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) { a->help = true; return ATTN_OK; }
        const char **slot = !strcmp(o, "--results") ? &a->results
                          : !strcmp(o, "--baseline") ? &a->baseline
                          : !strcmp(o, "--thresholds") ? &a->thresholds
                          : !strcmp(o, "--gpu") ? &a->gpu
                          : !strcmp(o, "--results-dir") ? &a->dir
                          : !strcmp(o, "--markdown") ? &a->markdown
                          : !strcmp(o, "--ab") ? &a->ab
                          : !strcmp(o, "--reason") ? &a->reason : NULL;
        if (!slot) return ATTN_FAIL(ATTN_ERR_INPUT, "unknown option '%s' (see --help)", o);
        if (i + 1 >= argc) return ATTN_FAIL(ATTN_ERR_INPUT, "option '%s' needs a value", o);
        *slot = argv[++i];
    }
    if (a->reason) ATTN_TRY(check_reason(a->reason));
    int modes = a->bless + a->trend + (a->ab != NULL) + (a->baseline && !a->trend && !a->bless);
    if (modes > 1)
        return ATTN_FAIL(ATTN_ERR_INPUT, "choose one of --bless, --trend, --ab DIR, --baseline FILE");
    if (a->results && !a->baseline && !a->trend && !a->bless)
        return ATTN_FAIL(ATTN_ERR_INPUT,
                         "--results FILE needs --baseline FILE, --trend or --bless (see --help)");
    if (a->reason && !a->bless) return ATTN_FAIL(ATTN_ERR_INPUT, "--reason goes with --bless");
    return ATTN_OK;
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The GPU whose directory under dir passes `has` (what names it in messages). */
static int find_gpu(const char *dir, bool (*has)(const char *gpu_dir), const char *what, char *out,
                    size_t len)
{
    DIR *d = opendir(dir);
    if (!d) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", dir, strerror(errno));
    int found = 0;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (!is_dir(path) || !has(path)) continue;
        if (found++ == 0) snprintf(out, len, "%s", e->d_name);
    }
    closedir(d);
    if (found == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no <gpu>/ with %s under it", dir, what);
    if (found > 1) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: several GPUs have %s: pass --gpu (GPU=)", dir, what);
    return ATTN_OK;
}

/* A run or A/B run is named by its start time, YYYYMMDDTHHMMSSZ[-N]: the
 * greatest name is the newest. */
static bool is_stamp(const char *n)
{
    if (strlen(n) < 16) return false;
    for (int i = 0; i < 16; i++) {
        char c = n[i];
        bool ok = i == 8 ? c == 'T' : i == 15 ? c == 'Z' : (c >= '0' && c <= '9');
        if (!ok) return false;
    }
    return n[16] == '\0' || n[16] == '-' || n[16] == '.';
}

static bool is_run_name(const char *n)
{
    size_t len = strlen(n);
    return is_stamp(n) && len > 4 && !strcmp(n + len - 4, ".csv") && !strstr(n, ".samples.");
}

/* The greatest entry of dir that `accept` takes, as dir/name. */
static int newest(const char *dir, bool (*accept)(const char *), const char *what, char *out,
                  size_t len)
{
    DIR *d = opendir(dir);
    if (!d) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", dir, strerror(errno));
    char best[256] = "";
    struct dirent *e;
    while ((e = readdir(d)))
        if (accept(e->d_name) && strcmp(e->d_name, best) > 0) snprintf(best, sizeof best, "%s", e->d_name);
    closedir(d);
    if (!best[0]) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no %s in it", dir, what);
    if ((size_t)snprintf(out, len, "%s/%s", dir, best) >= len)
        return ATTN_FAIL(ATTN_ERR_INPUT, "path too long under '%s'", dir);
    return ATTN_OK;
}

static bool has_ab(const char *gpu_dir)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/ab", gpu_dir);
    return is_dir(path);
}

static bool has_baseline(const char *gpu_dir)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/baseline.csv", gpu_dir);
    return is_file(path);
}

static bool has_run(const char *gpu_dir)
{
    char path[1100];
    return newest(gpu_dir, is_run_name, "run", path, sizeof path) == ATTN_OK;
}

/* One A/B run to gate: its two sides' files and what its .env files say
 * was planned (-1: not recorded). */
struct ab_run {
    char base[1300], cand[1300];
    long planned[2];
};

/* The rows ab planned for the side at csv (GATE_AB_ROWS_PLANNED in its
 * .env); -1 for a pair from before ab recorded it. */
static int planned_rows(const char *csv, long *planned)
{
    char text[32], *end;
    *planned = -1;
    if (resume_env_value(csv, GATE_AB_ROWS_PLANNED, text, sizeof text) != ATTN_OK) return ATTN_OK;
    errno = 0;
    long n = strtol(text, &end, 10);
    if (errno || end == text || *end || n < 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: its .env says %s=%s, which is no count", csv,
                         GATE_AB_ROWS_PLANNED, text);
    *planned = n;
    return ATTN_OK;
}

/* The A/B run in ab_dir (as given: DIR, DIR/, ./ and relative paths alike;
 * its id is the directory's own name). Only a pair ab published is gated:
 * not one still under its partial name, and not one without gate.txt (ab
 * writes it last, in the same step that publishes the pair; a directory
 * without it is a run that stopped early, from before partial names). */
static int ab_pair(const char *ab_dir, struct ab_run *run)
{
    char real[PATH_MAX], dir[1100];
    if (!realpath(ab_dir, real))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", ab_dir, strerror(errno));
    size_t n = strlen(ab_dir);
    while (n > 1 && ab_dir[n - 1] == '/') n--;
    if ((size_t)snprintf(dir, sizeof dir, "%.*s", (int)n, ab_dir) >= sizeof dir)
        return ATTN_FAIL(ATTN_ERR_INPUT, "path too long: '%s'", ab_dir);
    const char *id = strrchr(real, '/') + 1;
    const size_t idlen = strlen(id), plen = strlen(GATE_AB_PARTIAL_SUFFIX);
    if (id[0] == '.' || (idlen > plen && !strcmp(id + idlen - plen, GATE_AB_PARTIAL_SUFFIX)))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: a partial A/B run (ab stopped before both sides had "
                         "finished every row): not gated", ab_dir);
    if ((size_t)snprintf(run->base, sizeof run->base, "%s/%s-base.csv", dir, id) >= sizeof run->base ||
        (size_t)snprintf(run->cand, sizeof run->cand, "%s/%s-cand.csv", dir, id) >= sizeof run->cand)
        return ATTN_FAIL(ATTN_ERR_INPUT, "path too long: '%s'", ab_dir);
    if (!is_file(run->base) || !is_file(run->cand))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: not an A/B run (no %s-base.csv and %s-cand.csv in it)",
                         ab_dir, id, id);
    char gate_txt[1200];
    snprintf(gate_txt, sizeof gate_txt, "%s/gate.txt", dir);
    if (!is_file(gate_txt))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no gate.txt: ab did not finish this pair (it writes "
                         "gate.txt when both sides have finished every row): not gated", ab_dir);
    ATTN_TRY(planned_rows(run->base, &run->planned[0]));
    return planned_rows(run->cand, &run->planned[1]);
}

/* ---------------------------------------------------------------- trend */

/* Baseline rows that run holds too. */
static size_t rows_shared(const struct result_set *baseline, const struct result_set *run)
{
    size_t n = 0;
    for (size_t i = 0; i < baseline->count; i++) n += results_find(run, &baseline->rows[i].key) != NULL;
    return n;
}

static int newest_first(const void *a, const void *b)
{
    return -strcmp(*(char *const *)a, *(char *const *)b);
}

/* The run --trend holds against the baseline when none is named. The newest
 * run is often of another grid (a study of a few shapes) sharing few or no
 * rows with the baseline, and a trend over no rows says nothing. So: the
 * newest run that holds every baseline row; when none does, the one that
 * holds the most of them (the newest of equals), which still shows the
 * trend of those rows (the rest are reported missing). The baseline's own
 * run is passed over. *why says which was chosen and why, for the report's
 * first line. */
static int choose_trend_run(const char *gpu_dir, const char *baseline, char *out, size_t len,
                            char *why, size_t wlen)
{
    struct result_set base;
    ATTN_TRY(results_read(baseline, &base));
    DIR *d = opendir(gpu_dir);
    if (!d) {
        results_free(&base);
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", gpu_dir, strerror(errno));
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    int rc = ATTN_OK;
    for (struct dirent *e; rc == ATTN_OK && (e = readdir(d));) {
        if (!is_run_name(e->d_name)) continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof *grown);
            if (!grown) rc = ATTN_FAIL(ATTN_ERR, "out of host memory");
            else names = grown;
        }
        if (rc == ATTN_OK && !(names[count++] = strdup(e->d_name))) rc = ATTN_FAIL(ATTN_ERR, "out of host memory");
    }
    closedir(d);
    if (rc == ATTN_OK) qsort(names, count, sizeof *names, newest_first);
    size_t best = 0, best_i = 0, newer = 0;
    char passed[300] = ""; /* newer runs passed over, for *why */
    for (size_t i = 0; i < count && rc == ATTN_OK && best < base.count; i++) {
        char path[1300];
        struct result_set run;
        snprintf(path, sizeof path, "%s/%s", gpu_dir, names[i]);
        rc = results_read_run(path, RESULTS_ALLOW_EMPTY, &run);
        if (rc != ATTN_OK) break;
        const bool own = run.count && base.count && !strcmp(run.rows[0].run_id, base.rows[0].run_id);
        const size_t shared = own ? 0 : rows_shared(&base, &run);
        results_free(&run);
        if (shared > best) {
            best = shared;
            best_i = i;
        }
        if (shared < base.count && newer < 3) {
            size_t used = strlen(passed);
            snprintf(passed + used, sizeof passed - used, "%s%s %s", used ? ", " : "", names[i],
                     own ? "(the baseline's own run)" : shared ? "holds fewer" : "holds none");
            newer++;
        }
    }
    if (rc == ATTN_OK && best == 0)
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: no run shares a row with %s (%zu runs looked at): "
                       "measure the baseline's grid, or name a run with --results FILE", gpu_dir,
                       baseline, count);
    if (rc == ATTN_OK) {
        snprintf(out, len, "%s/%s", gpu_dir, names[best_i]);
        if (best == base.count)
            snprintf(why, wlen, "%s, the newest run that holds all %zu rows of %s%s%s%s", out,
                     base.count, baseline, passed[0] ? " (newer: " : "", passed, passed[0] ? ")" : "");
        else
            snprintf(why, wlen, "%s, which holds %zu of the %zu rows of %s, more than any other run "
                     "(none holds all)", out, best, base.count, baseline);
    }
    for (size_t i = 0; i < count; i++) free(names[i]);
    free(names);
    results_free(&base);
    return rc;
}

/* ---------------------------------------------------------------- bless */

/* A run copied to DEST.csv, and its samples, when it has any, written
 * beside it (results_samples_rewrite: DEST.samples.csv.gz; a stale samples
 * file of either name replaced or removed). */
static int copy_run(const struct result_set *from, const char *to)
{
    ATTN_TRY(results_samples_rewrite(to, from));
    return files_copy_atomic(from->path, to);
}

/* baselines/baseline-RUN_ID[-N].csv: never an existing name. */
static int keep_name(const char *hist, const char *run_id, char *out, size_t len)
{
    for (int n = 1; n < 1000; n++) {
        if (n == 1) snprintf(out, len, "%s/baseline-%s.csv", hist, run_id);
        else snprintf(out, len, "%s/baseline-%s-%d.csv", hist, run_id, n);
        if (access(out, F_OK) != 0) return ATTN_OK;
    }
    return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no free name for the kept baseline", hist);
}

static int log_blessing(const char *hist, const struct result_set *run, const char *verdict,
                        const char *reason)
{
    char path[1200], when[32];
    snprintf(path, sizeof path, "%s/LOG", hist);
    bool fresh = !is_file(path);
    FILE *f = fopen(path, "a");
    if (!f) return ATTN_FAIL(ATTN_ERR, "unable to open '%s': %s", path, strerror(errno));
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (fresh) fprintf(f, "# date\trun\trev\tverdict\treason\n");
    fprintf(f, "%s\t%s\t%s\t%s\t%s\n", when, run->rows[0].run_id[0] ? run->rows[0].run_id : run->path,
            run->rows[0].git_rev[0] ? run->rows[0].git_rev : "?", verdict, reason ? reason : "-");
    if (fclose(f) != 0) return ATTN_FAIL(ATTN_ERR, "unable to write '%s': %s", path, strerror(errno));
    return ATTN_OK;
}

/* Gates the run against the current baseline; a regression is refused
 * without a reason. Then the old baseline is kept, the run copied into
 * place, and the blessing logged. */
static int bless(const struct regress_args *a, const char *gpu_dir, const char *run, int *code)
{
    char base[1100], hist[1100], keep[1300];
    snprintf(base, sizeof base, "%s/baseline.csv", gpu_dir);
    snprintf(hist, sizeof hist, "%s/baselines", gpu_dir);
    struct result_set rs;
    ATTN_TRY(results_read(run, &rs)); /* a malformed run is never blessed */
    const char *verdict = "first";
    int rc = ATTN_OK, gate = 0;
    struct result_set old = {0};
    if (is_file(base)) {
        struct gate_files_request q = {.baseline = base, .results = run, .thresholds = a->thresholds,
                                       .options = {.allow_missing = a->allow_missing,
                                                   .allow_gpu_mismatch = a->allow_gpu_mismatch}};
        rc = gate_files(&q, stdout, &gate);
        if (rc == ATTN_OK) rc = results_read(base, &old);
        verdict = gate ? "REGRESSION" : "PASS";
    }
    if (rc == ATTN_OK && gate && !a->reason) {
        fprintf(stderr, "regress: %s fails the gate against %s (above): not blessed; "
                        "REASON=\"why\" (make baseline) or --reason blesses it anyway\n", run, base);
        *code = 1;
    } else if (rc == ATTN_OK) {
        if (mkdir(hist, 0755) != 0 && errno != EEXIST)
            rc = ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", hist, strerror(errno));
        if (rc == ATTN_OK && old.count) {
            rc = keep_name(hist, old.rows[0].run_id[0] ? old.rows[0].run_id : "unknown", keep, sizeof keep);
            if (rc == ATTN_OK) rc = copy_run(&old, keep);
            if (rc == ATTN_OK) printf("regress: previous baseline kept as %s\n", keep);
        }
        if (rc == ATTN_OK) rc = copy_run(&rs, base);
        if (rc == ATTN_OK) rc = log_blessing(hist, &rs, verdict, a->reason);
        if (rc == ATTN_OK) printf("regress: %s is the baseline now (from %s, %s)\n", base, run, verdict);
    }
    results_free(&old);
    results_free(&rs);
    return rc;
}

/* ------------------------------------------------------------------ main */

static int run(const struct regress_args *a, int *code)
{
    char gpu[256] = "", gpu_dir[600] = "", results[1300], baseline[1300], ab_dir[1200];
    const bool explicit_pair = a->results && a->baseline && !a->bless;
    if (!explicit_pair && !a->ab) {
        if (a->gpu) snprintf(gpu, sizeof gpu, "%s", a->gpu);
        else if (a->bless) ATTN_TRY(find_gpu(a->dir, has_run, "a run", gpu, sizeof gpu));
        else if (a->trend) ATTN_TRY(find_gpu(a->dir, has_baseline, "baseline.csv", gpu, sizeof gpu));
        else ATTN_TRY(find_gpu(a->dir, has_ab, "ab/ (A/B runs)", gpu, sizeof gpu));
        snprintf(gpu_dir, sizeof gpu_dir, "%s/%s", a->dir, gpu);
    }
    struct gate_files_request q = {.baseline = baseline, .results = results,
                                   .thresholds = a->thresholds, .markdown = a->markdown,
                                   .options = {.allow_missing = a->allow_missing,
                                               .allow_gpu_mismatch = a->allow_gpu_mismatch}};
    if (a->bless) {
        if (a->results) snprintf(results, sizeof results, "%s", a->results);
        else ATTN_TRY(newest(gpu_dir, is_run_name, "run (RUN_ID.csv)", results, sizeof results));
        return bless(a, gpu_dir, results, code);
    } else if (a->trend) {
        snprintf(baseline, sizeof baseline, "%s/baseline.csv", gpu_dir);
        if (!is_file(baseline))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no blessed baseline (make baseline)", baseline);
        char why[4096];
        if (a->results) {
            snprintf(results, sizeof results, "%s", a->results);
            snprintf(why, sizeof why, "%s, as named by --results", results);
        } else {
            ATTN_TRY(choose_trend_run(gpu_dir, baseline, results, sizeof results, why, sizeof why));
        }
        printf("trend: %s\n", why);
    } else if (explicit_pair) {
        snprintf(results, sizeof results, "%s", a->results);
        snprintf(baseline, sizeof baseline, "%s", a->baseline);
    } else {
        if (a->ab) {
            snprintf(ab_dir, sizeof ab_dir, "%s", a->ab);
        } else {
            char abs[700];
            snprintf(abs, sizeof abs, "%s/ab", gpu_dir);
            if (!is_dir(abs))
                return ATTN_FAIL(ATTN_ERR_INPUT,
                                 "%s: no A/B run to gate (make ab BASE=main, and commit its "
                                 "directory); a run is never compared with itself", abs);
            ATTN_TRY(newest(abs, is_stamp, "A/B run (AB_ID/)", ab_dir, sizeof ab_dir));
        }
        struct ab_run pair;
        ATTN_TRY(ab_pair(ab_dir, &pair));
        snprintf(baseline, sizeof baseline, "%s", pair.base);
        snprintf(results, sizeof results, "%s", pair.cand);
        q.pair = true;
        memcpy(q.planned, pair.planned, sizeof q.planned);
    }
    return gate_files(&q, stdout, code);
}

int main(int argc, char **argv)
{
    struct regress_args a;
    int code = 0;
    int rc = parse_args(argc, argv, &a);
    if (rc == ATTN_OK && a.help) {
        usage(stdout);
        return 0;
    }
    if (rc == ATTN_OK) rc = run(&a, &code);
    if (rc != ATTN_OK) {
        fprintf(stderr, "regress: %s\n", attn_error_message());
        printf("regress: BAD INPUT (exit 2)\n");
    }
    /* a verdict nobody could read is no verdict: a full disk is exit 2 */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "regress: writing the report to stdout failed: %s\n", strerror(errno));
        return 2;
    }
    return rc != ATTN_OK ? 2 : code;
}

/* regress.c — the regression gate's command line: compare a results CSV with
 * a baseline (rules in gate.h), or bless the newest run as the baseline.
 *   regress [--results FILE] [--baseline FILE] [--thresholds FILE]
 *           [--gpu NAME] [--results-dir DIR] [--markdown FILE]
 *           [--allow-missing] [--allow-gpu-mismatch]
 *   regress --bless [--gpu NAME] [--results-dir DIR]
 * Defaults: the newest RUN_ID.csv in DIR/<gpu>/ against DIR/<gpu>/baseline.csv,
 * thresholds from bench/thresholds.conf; <gpu> from --gpu, else the one GPU
 * under DIR that has a baseline. Exit 0 pass, 1 regression, 2 bad input. */
#include "gate.h"
#include "../common/errors.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct regress_args {
    const char *results, *baseline, *thresholds, *gpu, *dir, *markdown;
    bool allow_missing, allow_gpu_mismatch, bless;
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: regress [--results FILE] [--baseline FILE] [--thresholds FILE] [--gpu NAME]\n"
        "               [--results-dir DIR] [--markdown FILE] [--allow-missing]\n"
        "               [--allow-gpu-mismatch]\n"
        "       regress --bless [--gpu NAME] [--results-dir DIR]\n"
        "Compares the newest run in DIR/<gpu>/ (default DIR: results) with\n"
        "DIR/<gpu>/baseline.csv; --bless makes the newest run the baseline and keeps\n"
        "the previous one in DIR/<gpu>/baselines/. Exit: 0 pass, 1 regression, 2 bad input.\n");
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
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) { usage(stdout); exit(0); }
        const char **slot = !strcmp(o, "--results") ? &a->results
                          : !strcmp(o, "--baseline") ? &a->baseline
                          : !strcmp(o, "--thresholds") ? &a->thresholds
                          : !strcmp(o, "--gpu") ? &a->gpu
                          : !strcmp(o, "--results-dir") ? &a->dir
                          : !strcmp(o, "--markdown") ? &a->markdown : NULL;
        if (!slot) return ATTN_FAIL(ATTN_ERR_INPUT, "unknown option '%s' (see --help)", o);
        if (i + 1 >= argc) return ATTN_FAIL(ATTN_ERR_INPUT, "option '%s' needs a value", o);
        *slot = argv[++i];
    }
    return ATTN_OK;
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The GPU whose directory under dir holds a baseline, when there is one. */
static int find_gpu(const char *dir, char *out, size_t len)
{
    DIR *d = opendir(dir);
    if (!d) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", dir, strerror(errno));
    int found = 0;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s/baseline.csv", dir, e->d_name);
        if (!is_file(path)) continue;
        if (found++ == 0) snprintf(out, len, "%s", e->d_name);
    }
    closedir(d);
    if (found == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no <gpu>/baseline.csv under it (make baseline)", dir);
    if (found > 1) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: several GPUs have baselines: pass --gpu", dir);
    return ATTN_OK;
}

/* A run file is named by its start time, YYYYMMDDTHHMMSSZ[-N].csv: the
 * greatest name is the newest run. */
static bool is_run_name(const char *n)
{
    size_t len = strlen(n);
    if (len < 20 || strcmp(n + len - 4, ".csv")) return false;
    for (int i = 0; i < 16; i++) {
        char c = n[i];
        bool ok = i == 8 ? c == 'T' : i == 15 ? c == 'Z' : (c >= '0' && c <= '9');
        if (!ok) return false;
    }
    return true;
}

static int newest_run(const char *gpu_dir, char *out, size_t len)
{
    DIR *d = opendir(gpu_dir);
    if (!d) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", gpu_dir, strerror(errno));
    char best[256] = "";
    struct dirent *e;
    while ((e = readdir(d)))
        if (is_run_name(e->d_name) && strcmp(e->d_name, best) > 0)
            snprintf(best, sizeof best, "%s", e->d_name);
    closedir(d);
    if (!best[0]) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no run (RUN_ID.csv) in it", gpu_dir);
    snprintf(out, len, "%s/%s", gpu_dir, best);
    return ATTN_OK;
}

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    if (!in || !out) {
        if (in) fclose(in);
        return ATTN_FAIL(ATTN_ERR_INPUT, "unable to copy '%s' to '%s': %s", from, to, strerror(errno));
    }
    char buf[65536];
    size_t n;
    int rc = ATTN_OK;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) rc = ATTN_FAIL(ATTN_ERR, "writing '%s' failed", to);
    fclose(in);
    if (fclose(out) != 0 && rc == ATTN_OK) rc = ATTN_FAIL(ATTN_ERR, "writing '%s' failed", to);
    return rc;
}

/* The newest run becomes baseline.csv; the one it replaces moves to
 * baselines/baseline-<UTC time>.csv. The newest run is read first: a
 * malformed run is never blessed. */
static int bless(const char *gpu_dir)
{
    char run[1200], base[1100], keep[1200];
    ATTN_TRY(newest_run(gpu_dir, run, sizeof run));
    struct result_set s;
    ATTN_TRY(results_read(run, &s));
    results_free(&s);
    snprintf(base, sizeof base, "%s/baseline.csv", gpu_dir);
    if (is_file(base)) {
        char hist[1100], stamp[32];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
        snprintf(hist, sizeof hist, "%s/baselines", gpu_dir);
        if (mkdir(hist, 0755) != 0 && errno != EEXIST)
            return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", hist, strerror(errno));
        snprintf(keep, sizeof keep, "%s/baseline-%s.csv", hist, stamp);
        if (rename(base, keep) != 0)
            return ATTN_FAIL(ATTN_ERR_INPUT, "unable to move '%s': %s", base, strerror(errno));
        printf("regress: previous baseline kept as %s\n", keep);
    }
    ATTN_TRY(copy_file(run, base));
    printf("regress: %s is the baseline now (from %s)\n", base, run);
    return ATTN_OK;
}

static int run(const struct regress_args *a, int *exit_code)
{
    char gpu[256] = "", gpu_dir[600] = "", results[1200], baseline[1200];
    const bool need_dir = a->bless || !a->results || !a->baseline;
    if (need_dir) {
        if (a->gpu) snprintf(gpu, sizeof gpu, "%s", a->gpu);
        else ATTN_TRY(find_gpu(a->dir, gpu, sizeof gpu));
        snprintf(gpu_dir, sizeof gpu_dir, "%s/%s", a->dir, gpu);
    }
    if (a->bless) return bless(gpu_dir);

    if (a->results) snprintf(results, sizeof results, "%s", a->results);
    else ATTN_TRY(newest_run(gpu_dir, results, sizeof results));
    if (a->baseline) snprintf(baseline, sizeof baseline, "%s", a->baseline);
    else snprintf(baseline, sizeof baseline, "%s/baseline.csv", gpu_dir);

    struct gate_thresholds t;
    if (a->thresholds) ATTN_TRY(gate_thresholds_read(a->thresholds, &t));
    else if (is_file("bench/thresholds.conf")) ATTN_TRY(gate_thresholds_read("bench/thresholds.conf", &t));
    else gate_thresholds_default(&t);

    struct result_set base, cur;
    ATTN_TRY(results_read(baseline, &base));
    int rc = results_read(results, &cur);
    if (rc != ATTN_OK) {
        results_free(&base);
        return rc;
    }
    struct gate_options o = {.allow_missing = a->allow_missing, .allow_gpu_mismatch = a->allow_gpu_mismatch};
    struct gate_report rep;
    rc = gate_compare(&base, &cur, &t, &o, &rep);
    if (rc == ATTN_OK) {
        gate_print(&rep, baseline, results, stdout);
        if (a->markdown) {
            FILE *m = fopen(a->markdown, "w");
            if (!m) rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create: %s", a->markdown, strerror(errno));
            else {
                gate_print_markdown(&rep, baseline, results, m);
                fclose(m);
            }
        }
        *exit_code = gate_exit_code(&rep);
    }
    gate_report_free(&rep);
    results_free(&base);
    results_free(&cur);
    return rc;
}

int main(int argc, char **argv)
{
    struct regress_args a;
    int code = 0;
    if (parse_args(argc, argv, &a) != ATTN_OK || run(&a, &code) != ATTN_OK) {
        fprintf(stderr, "regress: %s\n", attn_error_message());
        return 2;
    }
    return code;
}

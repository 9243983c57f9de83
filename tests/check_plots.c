/* check_plots.c — tests of the figures and the report page (Check): on the
 * fixture CSVs in tests/fixtures/ (a full run, one with gaps — oom and
 * skipped rows and a variant absent at a point —, a single point, one
 * variant only, a run of the fused kernels with cudnn_sdpa and its .env
 * (peak) against a baseline with a throttled and a slower row, one whose
 * gpu field, variant name and .env hold gnuplot code, and a malformed
 * file), build/report and every plots/ script must produce PNG files with
 * the PNG signature and SVG files that parse as XML (xmllint) — or, where
 * the run lacks what a figure needs (cudnn_sdpa, naive, a baseline), say so
 * and exit 0 without a file —, the report page must parse as HTML, nothing
 * in a results file may run when gnuplot loads the data, and the malformed
 * CSV must give exit 2 and a message naming file:line. Needs gnuplot and
 * xmllint (`make test` installs them); run from the repository root after
 * `make all`. */
#include "testutil.h"

#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char dir[64];

static void dir_setup(void)
{
    strcpy(dir, "/tmp/attnbench-plots-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void dir_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Runs a shell command; returns its exit status, -1 when it did not exit. */
/* Runs a shell command made by printf(fmt, ...). */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void assert_png(const char *path)
{
    static const unsigned char magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char head[8] = {0};
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s was not written", path);
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    ck_assert_msg(n == 8 && memcmp(head, magic, 8) == 0, "%s lacks the PNG signature", path);
    ck_assert_msg(file_size(path) > 1000, "%s is too small to hold a figure", path);
}

static void assert_svg(const char *path)
{
    ck_assert_msg(file_size(path) > 1000, "%s missing or too small", path);
    ck_assert_msg(sh("xmllint --noout %s 2>/dev/null", path) == 0, "%s is not well-formed XML", path);
}

/* What a fixture has; a script that needs what it lacks draws nothing. */
struct fixture {
    const char *csv, *baseline; /* baseline NULL: no ratio figure */
    bool cudnn, naive;          /* headline needs cudnn_sdpa rows, speedup naive rows */
    bool power;                 /* energy needs rows with a TFLOP per joule */
};

static const char *const scripts[] = {"headline", "throughput", "latency", "speedup", "memory", "energy", "ratio"};
#define NSCRIPTS (sizeof scripts / sizeof scripts[0])

static bool draws(const struct fixture *fx, const char *script)
{
    return !(!strcmp(script, "headline") && !fx->cudnn) && !(!strcmp(script, "speedup") && !fx->naive) &&
           !(!strcmp(script, "ratio") && !fx->baseline) && !(!strcmp(script, "energy") && !fx->power);
}

static void report_data(const struct fixture *fx)
{
    char data[128], base[512] = "";
    snprintf(data, sizeof data, "%s/data", dir);
    if (fx->baseline) snprintf(base, sizeof base, "--baseline %s --thresholds bench/thresholds.conf", fx->baseline);
    ck_assert_msg(sh("%s data %s %s %s >/dev/null", tool_path("report"), fx->csv, data, base) == 0,
                  "build/report data %s failed", fx->csv);
}

/* One script in one format: a figure, or its one-line refusal and no file. */
static void render(const struct fixture *fx, const char *script, bool png)
{
    char out[192], path[64], args[512], err[160];
    snprintf(out, sizeof out, "%s/%s.%s", dir, script, png ? "png" : "svg");
    snprintf(path, sizeof path, "plots/%s.gp", script);
    snprintf(args, sizeof args, "%s/data %s %s", dir, out, png ? "png" : "svg");
    snprintf(err, sizeof err, "%s/gnuplot.err", dir);
    ck_assert_msg(sh("gnuplot -c %s %s 2>%s", path, args, err) == 0, "gnuplot %s on %s failed", path, fx->csv);
    if (!draws(fx, script)) {
        ck_assert_msg(file_size(out) < 0, "%s drew %s, which %s lacks the data for", path, out, fx->csv);
        ck_assert_msg(sh("grep -q 'nothing to draw' %s", err) == 0, "%s did not say why it drew nothing", path);
    } else if (png) {
        assert_png(out);
    } else {
        assert_svg(out);
    }
}

/* report data, then every script in both formats. */
static void render_all(const struct fixture *fx)
{
    report_data(fx);
    for (size_t i = 0; i < NSCRIPTS; i++)
        for (int png = 0; png <= 1; png++) render(fx, scripts[i], png);
}

/* grep -q PATTERN DIR/data/FILE */
static bool data_has(const char *file, const char *pattern)
{
    char path[192];
    snprintf(path, sizeof path, "%s/data/%s", dir, file);
    return sh("grep -q -- \"%s\" %s", pattern, path) == 0;
}

static void assert_report_page(const char *fixture)
{
    ck_assert_int_eq(sh("%s html %s %s >/dev/null", tool_path("report"), fixture, dir), 0);
    char page[128];
    snprintf(page, sizeof page, "%s/report.html", dir);
    ck_assert_msg(file_size(page) > 500, "%s missing", page);
    ck_assert_msg(sh("xmllint --html --noout %s 2>/dev/null", page) == 0, "%s does not parse", page);
    ck_assert_msg(sh("grep -q 'latency.png' %s", page) == 0, "the page does not show the latency figure");
}

START_TEST(test_tools_present)
{
    ck_assert_msg(sh("command -v gnuplot >/dev/null") == 0,
                  "gnuplot not found: `make plot-deps` installs gnuplot-nox");
    ck_assert_msg(sh("command -v xmllint >/dev/null") == 0,
                  "xmllint not found: `make plot-deps` installs libxml2-utils");
    ck_assert_msg(file_size(tool_path("report")) > 0, "%s missing: run `make all` first", tool_path("report"));
}
END_TEST

START_TEST(test_full_run_renders)
{
    render_all(&(struct fixture){"tests/fixtures/full.csv", "tests/fixtures/full.csv", false, true, false});
    assert_report_page("tests/fixtures/full.csv");
}
END_TEST

/* A run with the power columns (H200, tune grid, flash_hopper and
 * cudnn_sdpa; results/h200/power/): the energy figure is drawn. */
START_TEST(test_power_run_renders)
{
    render_all(&(struct fixture){"tests/fixtures/power.csv", NULL, true, false, true});
    ck_assert_msg(data_has("meta.gp", "^have_energy = 1$"), "meta.gp does not say the run has power");
}
END_TEST

START_TEST(test_fused_run_renders)
{
    /* cudnn_sdpa and the fused kernels, a peak in fused.env, and a baseline
     * in which flash_hopper S=4096 D=128 causal cold ran at a higher clock
     * (the gate: throttled) and flash_mma S=512 D=64 full graph was faster
     * at the same clock (the gate: SLOWER) */
    render_all(&(struct fixture){"tests/fixtures/fused.csv", "tests/fixtures/fused_base.csv", true, true, false});
    ck_assert_msg(data_has("meta.gp", "^peak_tflops = 798.2$"), "the peak of fused.env is not in meta.gp");
    ck_assert_msg(data_has("meta.gp", "^grid_note = 'batch = 16384 / S, heads = 2048 / D, bf16, cold mode'$"),
                  "meta.gp lacks the grid's note");
    /* the headline leaves the eager variants out and says so */
    ck_assert_msg(data_has("meta.gp", "^array headline_show\\[5\\] = \\[0, 0, 0, 1, 1\\]$"),
                  "the headline does not show exactly flash_mma and flash_hopper");
    ck_assert_msg(data_has("meta.gp", "^headline_note = 'not shown: naive, inplace, "), "no note on what is left out");
    /* the ratio data carry the gate's verdicts: seq ratio allowed lo hi mode throttled slower batch */
    ck_assert_msg(data_has("ratio_D128_causal.dat", "^4096 1.05[0-9]* 1.03 NaN NaN 0 1 0 4$"),
                  "the throttled row is not marked in ratio_D128_causal.dat");
    ck_assert_msg(data_has("ratio_D64_full.dat", "^512 1.09[0-9]* 1.06 NaN NaN 1 0 1 32$"),
                  "the slower row is not marked in ratio_D64_full.dat");
    ck_assert_msg(data_has("meta.gp", "^ratio_throttled = 1$") && data_has("meta.gp", "^ratio_slower = 1$"),
                  "meta.gp does not count the throttled and slower rows");
    assert_report_page("tests/fixtures/fused.csv");
}
END_TEST

START_TEST(test_gaps_render)
{
    /* oom and skipped rows and a variant missing at one point: still figures */
    render_all(&(struct fixture){"tests/fixtures/gaps.csv", "tests/fixtures/full.csv", false, true, false});
    char path[128];
    snprintf(path, sizeof path, "%s/data/panel_D128_full.dat", dir);
    /* the gap is kept as a gap: NaN where naive was oom at S=4096 */
    ck_assert_msg(sh("grep -q '^4096 NaN' %s", path) == 0, "%s: the oom row is not a gap", path);
    assert_report_page("tests/fixtures/gaps.csv");
    snprintf(path, sizeof path, "%s/report.html", dir);
    ck_assert_msg(sh("grep -q 'oom' %s", path) == 0, "the page does not show the oom row");
}
END_TEST

START_TEST(test_single_point_renders)
{
    render_all(&(struct fixture){"tests/fixtures/single.csv", NULL, false, true, false});
}
END_TEST

START_TEST(test_one_variant_renders)
{
    /* inplace only: no naive to be faster than, no cudnn_sdpa */
    render_all(&(struct fixture){"tests/fixtures/one_variant.csv", NULL, false, false, false});
}
END_TEST

START_TEST(test_headline_without_cudnn_draws_nothing)
{
    char data[128], out[192], err[160];
    snprintf(data, sizeof data, "%s/data", dir);
    snprintf(out, sizeof out, "%s/headline.png", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    ck_assert_int_eq(sh("%s data %s %s %s >/dev/null", tool_path("report"), "tests/fixtures/full.csv", data, ""), 0);
    ck_assert_int_eq(sh("gnuplot -c plots/headline.gp %s %s png 2>%s", data, out, err), 0);
    ck_assert_msg(file_size(out) < 0, "a headline figure was drawn without cudnn_sdpa rows");
    ck_assert_msg(sh("grep -q 'headline.gp: no cudnn_sdpa rows' %s", err) == 0, "headline.gp did not say why");
}
END_TEST

START_TEST(test_data_strings_do_not_run)
{
    /* hostile.csv: gpu = x";system("touch /tmp/attnbench-pwned-gpu");y=" and a
     * variant in'place`touch /tmp/attnbench-pwned-variant`; hostile.env:
     * gpu_name with a backquoted command and quotes. Loading meta.gp must
     * run none of them, and every figure still renders. */
    static const char *const pwned[] = {"/tmp/attnbench-pwned-gpu", "/tmp/attnbench-pwned-variant",
                                        "/tmp/attnbench-pwned-env"};
    for (size_t i = 0; i < 3; i++) remove(pwned[i]);
    render_all(&(struct fixture){"tests/fixtures/hostile.csv", "tests/fixtures/hostile.csv", false, true, false});
    for (size_t i = 0; i < 3; i++) ck_assert_msg(file_size(pwned[i]) < 0, "loading the data ran a command: %s", pwned[i]);
    /* the text is kept, as text */
    ck_assert_msg(data_has("meta.gp", "^gpu = 'x\\\";system(\\\"touch /tmp/attnbench-pwned-gpu\\\");y=\\\"'$"),
                  "meta.gp does not hold the gpu field as a plain string");
}
END_TEST

START_TEST(test_malformed_csv_is_refused)
{
    char err[128], data[128];
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(data, sizeof data, "%s/data", dir);
    ck_assert_int_eq(sh("%s data tests/fixtures/malformed.csv %s 2>%s >/dev/null", tool_path("report"), data, err), 2);
    ck_assert_msg(sh("grep -q 'malformed.csv:3:' %s", err) == 0,
                  "the message does not name malformed.csv:3");
    ck_assert_int_eq(sh("%s html tests/fixtures/malformed.csv %s 2>/dev/null >/dev/null", tool_path("report"), dir), 2);
    ck_assert_int_eq(sh("%s data tests/fixtures/no-such.csv %s 2>/dev/null >/dev/null", tool_path("report"), data), 2);
}
END_TEST

static Suite *plots_suite(void)
{
    Suite *s = suite_create("plots");
    TCase *t = tcase_create("render");
    tcase_set_timeout(t, 120);
    tcase_add_checked_fixture(t, dir_setup, dir_teardown);
    tcase_add_test(t, test_tools_present);
    tcase_add_test(t, test_full_run_renders);
    tcase_add_test(t, test_fused_run_renders);
    tcase_add_test(t, test_power_run_renders);
    tcase_add_test(t, test_gaps_render);
    tcase_add_test(t, test_single_point_renders);
    tcase_add_test(t, test_one_variant_renders);
    tcase_add_test(t, test_headline_without_cudnn_draws_nothing);
    tcase_add_test(t, test_data_strings_do_not_run);
    tcase_add_test(t, test_malformed_csv_is_refused);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(plots_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

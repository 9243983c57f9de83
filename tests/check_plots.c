/* check_plots.c — tests of the figures and the report page (Check): on the
 * fixture CSVs in tests/fixtures/ (a full run, one with gaps — oom and
 * skipped rows and a variant absent at a point —, a single point, one
 * variant only, and a malformed file), build/report and every plots/ scripts
 * script must produce PNG files with the PNG signature and SVG files that
 * parse as XML (xmllint), the report page must parse as HTML, and the
 * malformed CSV must give exit 2 and a message naming file:line. Needs
 * gnuplot and xmllint (`make test` installs them); run from the repository
 * root after `make all`. */
#include <check.h>
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
static int sh(const char *fmt, const char *a, const char *b, const char *c)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, a, b, c);
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
    ck_assert_msg(sh("xmllint --noout %s 2>/dev/null", path, "", "") == 0, "%s is not well-formed XML", path);
}

/* report data, then every script in both formats; with a baseline, ratio too. */
static void render_all(const char *fixture, const char *baseline)
{
    char data[128], cmd_base[512] = "";
    snprintf(data, sizeof data, "%s/data", dir);
    if (baseline) snprintf(cmd_base, sizeof cmd_base, "--baseline %s --thresholds bench/thresholds.conf", baseline);
    ck_assert_msg(sh("./build/report data %s %s %s >/dev/null", fixture, data, cmd_base) == 0,
                  "build/report data %s failed", fixture);
    static const char *const scripts[] = {"latency", "throughput", "speedup", "memory", "ratio"};
    for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
        if (!baseline && !strcmp(scripts[i], "ratio")) continue;
        for (int png = 0; png <= 1; png++) {
            char out[192], script[64];
            snprintf(out, sizeof out, "%s/%s.%s", dir, scripts[i], png ? "png" : "svg");
            snprintf(script, sizeof script, "plots/%s.gp", scripts[i]);
            char args[512];
            snprintf(args, sizeof args, "%s %s %s", data, out, png ? "png" : "svg");
            ck_assert_msg(sh("gnuplot -c %s %s 2>%s/gnuplot.err", script, args, dir) == 0,
                          "gnuplot %s on %s failed", script, fixture);
            if (png) assert_png(out);
            else assert_svg(out);
        }
    }
}

static void assert_report_page(const char *fixture)
{
    ck_assert_int_eq(sh("./build/report html %s %s >/dev/null", fixture, dir, ""), 0);
    char page[128];
    snprintf(page, sizeof page, "%s/report.html", dir);
    ck_assert_msg(file_size(page) > 500, "%s missing", page);
    ck_assert_msg(sh("xmllint --html --noout %s 2>/dev/null", page, "", "") == 0, "%s does not parse", page);
    ck_assert_msg(sh("grep -q 'latency.png' %s", page, "", "") == 0, "the page does not show the latency figure");
}

START_TEST(test_tools_present)
{
    ck_assert_msg(sh("command -v gnuplot >/dev/null", "", "", "") == 0,
                  "gnuplot not found: `make plot-deps` installs gnuplot-nox");
    ck_assert_msg(sh("command -v xmllint >/dev/null", "", "", "") == 0,
                  "xmllint not found: `make plot-deps` installs libxml2-utils");
    ck_assert_msg(file_size("build/report") > 0, "build/report missing: run `make all` first");
}
END_TEST

START_TEST(test_full_run_renders)
{
    render_all("tests/fixtures/full.csv", "tests/fixtures/full.csv");
    assert_report_page("tests/fixtures/full.csv");
}
END_TEST

START_TEST(test_gaps_render)
{
    /* oom and skipped rows and a variant missing at one point: still figures */
    render_all("tests/fixtures/gaps.csv", "tests/fixtures/full.csv");
    char path[128];
    snprintf(path, sizeof path, "%s/data/panel_D128_full.dat", dir);
    /* the gap is kept as a gap: NaN where naive was oom at S=4096 */
    ck_assert_msg(sh("grep -q '^4096 NaN' %s", path, "", "") == 0, "%s: the oom row is not a gap", path);
    assert_report_page("tests/fixtures/gaps.csv");
    snprintf(path, sizeof path, "%s/report.html", dir);
    ck_assert_msg(sh("grep -q 'oom' %s", path, "", "") == 0, "the page does not show the oom row");
}
END_TEST

START_TEST(test_single_point_renders)
{
    render_all("tests/fixtures/single.csv", NULL);
}
END_TEST

START_TEST(test_one_variant_renders)
{
    render_all("tests/fixtures/one_variant.csv", NULL);
}
END_TEST

START_TEST(test_no_cudnn_no_cudnn_figure)
{
    char data[128], out[192];
    snprintf(data, sizeof data, "%s/data", dir);
    snprintf(out, sizeof out, "%s/speedup_cudnn.png", dir);
    ck_assert_int_eq(sh("./build/report data %s %s %s >/dev/null", "tests/fixtures/full.csv", data, ""), 0);
    ck_assert_int_eq(sh("gnuplot -c plots/speedup.gp %s %s png cudnn_sdpa >/dev/null 2>&1", data, out, ""), 0);
    ck_assert_msg(file_size(out) < 0, "a speedup-over-cudnn figure was drawn without cudnn rows");
}
END_TEST

START_TEST(test_malformed_csv_is_refused)
{
    char err[128], data[128];
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(data, sizeof data, "%s/data", dir);
    ck_assert_int_eq(sh("./build/report data tests/fixtures/malformed.csv %s 2>%s >/dev/null", data, err, ""), 2);
    ck_assert_msg(sh("grep -q 'malformed.csv:3:' %s", err, "", "") == 0,
                  "the message does not name malformed.csv:3");
    ck_assert_int_eq(sh("./build/report html tests/fixtures/malformed.csv %s 2>/dev/null >/dev/null", dir, "", ""), 2);
    ck_assert_int_eq(sh("./build/report data tests/fixtures/no-such.csv %s 2>/dev/null >/dev/null", data, "", ""), 2);
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
    tcase_add_test(t, test_gaps_render);
    tcase_add_test(t, test_single_point_renders);
    tcase_add_test(t, test_one_variant_renders);
    tcase_add_test(t, test_no_cudnn_no_cudnn_figure);
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

/* check_plots.c — tests of the figures and the report page (Check): on the
 * fixture CSVs in tests/fixtures/ (a full run, one with gaps — oom and
 * skipped rows and a variant absent at a point —, a single point, one
 * variant only, a run of the fused kernels with cudnn_sdpa and its .env
 * (peak) against a baseline with a throttled and a slower row, a run with
 * power readings, an H200 run of ours beside the seven PyTorch peers and
 * its peer rows alone, a run of the llm grid's model shapes (llm.csv,
 * grouped K/V heads; hand-written numbers, not a measurement), one whose gpu field, variant name and .env hold
 * gnuplot code, and a malformed file), build/report and every plots/
 * script must produce PNG files with the PNG signature and SVG files that
 * parse as XML (xmllint) — or, where the run lacks what a figure needs
 * (cudnn_sdpa, naive, a baseline, power, PyTorch peers beside ours), say
 * so and exit 0 without a file —, the report page must parse as HTML, the
 * peers must be drawn dashed and marked on the page, a run of several
 * model shapes must get a panel per shape (titles, files, the page's
 * tables) while the default grid keeps its head_dim × causal panels, nothing
 * in a results file may run when gnuplot loads the data, and the malformed
 * CSV must give exit 2 and a message naming file:line. Needs gnuplot and
 * xmllint (`make test` installs them); run from the repository root after
 * `make all`. */
#include "testutil.h"

#include <check.h>
#include <math.h>
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
    bool torch;                 /* speedup_torch needs PyTorch peer rows beside ours */
};

static const char *const scripts[] = {"headline", "throughput",    "latency", "speedup",
                                      "memory",   "speedup_torch", "energy",  "ratio"};
#define NSCRIPTS (sizeof scripts / sizeof scripts[0])

static bool draws(const struct fixture *fx, const char *script)
{
    return !(!strcmp(script, "headline") && !fx->cudnn) && !(!strcmp(script, "speedup") && !fx->naive) &&
           !(!strcmp(script, "ratio") && !fx->baseline) && !(!strcmp(script, "energy") && !fx->power) &&
           !(!strcmp(script, "speedup_torch") && !fx->torch);
}

static void report_data(const struct fixture *fx)
{
    char data[128], base[512] = "";
    snprintf(data, sizeof data, "%s/data", dir);
    if (fx->baseline) snprintf(base, sizeof base, "--baseline %s --thresholds bench/gate/thresholds.conf", fx->baseline);
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

/* Column col (1: seq_len) of the line for seq in the block "# variant" of
 * DIR/data/FILE, a panel file; NAN where the file, block or line is missing
 * (and where the file holds NaN). */
static double panel_value(const char *file, const char *variant, int seq, int col)
{
    char path[192], line[512], want[96];
    snprintf(path, sizeof path, "%s/data/%s", dir, file);
    snprintf(want, sizeof want, "# %s\n", variant);
    FILE *f = fopen(path, "r");
    if (!f) return NAN;
    bool in_block = false;
    double v = NAN;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') in_block = !strcmp(line, want);
        if (!in_block || atoi(line) != seq) continue;
        char *p = line;
        for (int c = 1; c <= col; c++) {
            char *end;
            v = strtod(p, &end);
            if (end == p) v = NAN;
            p = end;
        }
        break;
    }
    fclose(f);
    return v;
}

/* Whether FILE (an SVG of gnuplot's) strokes a dashed path in rgb(r, g, b). */
static bool svg_dashed_in(const char *file, int r, int g, int b)
{
    return sh("grep -Eq \"stroke='rgb\\( *%d, *%d, *%d\\)' stroke-dasharray\" %s/%s", r, g, b, dir, file) == 0;
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
    render_all(&(struct fixture){"tests/fixtures/full.csv", "tests/fixtures/full.csv", false, true, false, false});
    assert_report_page("tests/fixtures/full.csv");
}
END_TEST

/* A run with the power columns (H200, tune grid, flash_hopper and
 * cudnn_sdpa; results/h200/power/): the energy figure is drawn. */
START_TEST(test_power_run_renders)
{
    render_all(&(struct fixture){"tests/fixtures/power.csv", NULL, true, false, true, false});
    ck_assert_msg(data_has("meta.gp", "^have_energy = 1$"), "meta.gp does not say the run has power");
}
END_TEST

START_TEST(test_fused_run_renders)
{
    /* cudnn_sdpa and the fused kernels, a peak in fused.env, and a baseline
     * in which flash_hopper S=4096 D=128 causal cold ran at a higher clock
     * (the gate: throttled) and flash_mma S=512 D=64 full graph was faster
     * at the same clock (the gate: SLOWER) */
    render_all(&(struct fixture){"tests/fixtures/fused.csv", "tests/fixtures/fused_base.csv", true, true, false, false});
    ck_assert_msg(data_has("meta.gp", "^peak_tflops = 798.2$"), "the peak of fused.env is not in meta.gp");
    /* no peers: every variant solid, linetypes 1-5 in the run's order, and
     * speedup_torch has nothing to draw */
    ck_assert_msg(data_has("meta.gp", "^array variant_peer\\[5\\] = \\[0, 0, 0, 0, 0\\]$") &&
                      data_has("meta.gp", "^array variant_colour\\[5\\] = \\[1, 2, 3, 4, 5\\]$"),
                  "meta.gp changes the look of a run without peers");
    ck_assert_msg(data_has("meta.gp", "^have_torch = 0$"), "meta.gp claims PyTorch rows in a run without peers");
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

/* tests/fixtures/peers.csv: an H200 run of our five variants and the seven
 * PyTorch peers (torch_*) at three points, cold and graph. */
START_TEST(test_peers_run_renders)
{
    render_all(&(struct fixture){"tests/fixtures/peers.csv", NULL, true, true, true, true});
    /* the peers are marked, and paired by colour with ours: torch_naive and
     * torch_inplace with naive and inplace, torch_sdpa_flash with flash_mma,
     * torch_sdpa_cudnn with cudnn_sdpa; ours keep linetypes 1-5 */
    ck_assert_msg(data_has("meta.gp", "^array variant_peer\\[12\\] = \\[0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1\\]$"),
                  "meta.gp does not mark exactly the torch_* variants as peers");
    ck_assert_msg(data_has("meta.gp", "^array variant_colour\\[12\\] = \\[1, 2, 3, 4, 5, 1, 2, 6, 7, 4, 3, 8\\]$"),
                  "meta.gp does not pair the peers' colours with ours");
    /* drawn dashed: torch_sdpa_cudnn (#00674b) and torch_naive (#004c78) in
     * dashes, cudnn_sdpa (#009e73) and naive (#0072b2) solid */
    ck_assert_msg(svg_dashed_in("latency.svg", 0, 103, 75) && svg_dashed_in("latency.svg", 0, 76, 120),
                  "latency.svg does not draw torch_sdpa_cudnn and torch_naive dashed");
    ck_assert_msg(!svg_dashed_in("latency.svg", 0, 158, 115) && !svg_dashed_in("latency.svg", 0, 114, 178),
                  "latency.svg draws one of our variants dashed");
    /* speedup over the best peer, by hand from the fixture: at S=16384 D=128
     * non-causal cold the fastest torch_* row is torch_sdpa_cudnn, 3.17006 ms
     * (torch_flex 4.31461, torch_sdpa_flash 6.05422, ...); flash_hopper
     * takes 3.04902 ms */
    ck_assert_double_eq_tol(panel_value("panel_D128_full.dat", "flash_hopper", 16384, 8), 3.17006 / 3.04902, 1e-4);
    ck_assert_double_eq_tol(panel_value("panel_D128_full.dat", "naive", 16384, 8), 3.17006 / 17.6944, 1e-4);
    ck_assert_msg(isnan(panel_value("panel_D128_full.dat", "torch_flex", 16384, 8)),
                  "a peer's own row has a speedup over the peers");
    ck_assert_msg(data_has("meta.gp", "^have_torch = 1$"), "meta.gp does not say speedup_torch has data");
    ck_assert_msg(data_has("meta.gp", "^torch_note = 'fastest PyTorch peer: torch_sdpa_cudnn at all 3 points'$"),
                  "meta.gp does not name the fastest peer");
    /* the page: peers compete for the fastest kernel per point
     * (torch_sdpa_cudnn wins D=64 causal, marked), and the speedup table */
    assert_report_page("tests/fixtures/peers.csv");
    char page[128];
    snprintf(page, sizeof page, "%s/report.html", dir);
    ck_assert_msg(sh("grep -q '<td class=\"grp name\">torch_sdpa_cudnn <span class=\"peer\">(PyTorch)</span></td>' %s",
                     page) == 0,
                  "the fastest-kernel table does not show the peer torch_sdpa_cudnn, marked (PyTorch)");
    ck_assert_msg(sh("grep -q 'id=\"fig-speedup_torch\"' %s && grep -q 'id=\"table-speedup-torch\"' %s", page, page) == 0,
                  "the page lacks the speedup_torch figure or its table");
    ck_assert_msg(sh("sed -n '/id=\"table-speedup-torch\"/,/<\\/table>/p' %s | "
                     "grep -q '<td>3.17</td>.*<td class=\"best\">1.04</td></tr>'", page) == 0,
                  "the speedup table lacks flash_hopper's 1.04 over torch_sdpa_cudnn's 3.17 ms at D=128 non-causal");
}
END_TEST

/* The peers' rows alone (tests/fixtures/peers_only.csv, cut from peers.csv):
 * every figure still renders (dashed), speedup_torch says it has nothing to
 * set the peers against. */
START_TEST(test_peers_only_run_renders)
{
    render_all(&(struct fixture){"tests/fixtures/peers_only.csv", NULL, false, false, true, false});
    ck_assert_msg(data_has("meta.gp", "^array variant_peer\\[7\\] = \\[1, 1, 1, 1, 1, 1, 1\\]$"),
                  "meta.gp does not mark the peers");
    ck_assert_msg(data_has("meta.gp", "^have_torch = 0$"), "speedup_torch claims data without our variants");
}
END_TEST

/* tests/fixtures/llm.csv: the llm grid's five model shapes (H=32 KV=8,
 * H=64 KV=8 and H=16 KV=1 at D=128; H=16 KV=8 at D=256; H=16 at D=192),
 * causal, S = 2048, 4096, 8192 at 16384 tokens, in the current schema
 * (kv_heads after heads). Three shapes share D=128 causal: drawn by
 * head_dim × causal they would collide at every S; a panel per shape
 * keeps them apart, on the figures and on the page. */
static const char *const llm_files[] = {"H16_KV1_D128_causal", "H32_KV8_D128_causal", "H64_KV8_D128_causal",
                                        "H16_KV16_D192_causal", "H16_KV8_D256_causal"};

START_TEST(test_llm_run_has_a_panel_per_shape)
{
    /* cudnn_sdpa has rows (ok at D=192 only), so has naive, power and a
     * PyTorch peer; the run against itself as its baseline for the ratio
     * panels */
    render_all(&(struct fixture){"tests/fixtures/llm.csv", "tests/fixtures/llm.csv", true, true, true, true});
    ck_assert_msg(data_has("meta.gp", "^npanels = 5$"), "meta.gp does not have one panel per model shape");
    ck_assert_msg(data_has("meta.gp", "^array panel_title\\[5\\] = \\['H=16 KV=1 (MQA), D=128, causal', "
                                      "'H=32 KV=8, D=128, causal', 'H=64 KV=8, D=128, causal', "
                                      "'H=16, D=192, causal', 'H=16 KV=8, D=256, causal'\\]$"),
                  "the panel titles do not say the model shapes, in order");
    for (size_t i = 0; i < sizeof llm_files / sizeof llm_files[0]; i++) {
        char name[64], path[192];
        snprintf(name, sizeof name, "panel_%s.dat", llm_files[i]);
        ck_assert_msg(data_has("meta.gp", name), "meta.gp does not name %s", name);
        snprintf(path, sizeof path, "%s/data/%s", dir, name);
        ck_assert_msg(file_size(path) > 0, "%s was not written", path);
        /* one line per S in each of the five variants' blocks: no shape's
         * rows fell into another's panel */
        ck_assert_msg(sh("test $(grep -c '^4096 ' %s) -eq 5", path) == 0, "%s: not one S=4096 line per variant", name);
        snprintf(name, sizeof name, "ratio_%s.dat", llm_files[i]);
        snprintf(path, sizeof path, "%s/data/%s", dir, name);
        ck_assert_msg(file_size(path) > 0, "the ratio figure has no panel %s", name);
    }
    ck_assert_msg(data_has("meta.gp", "^nratio_panels = 5$"), "the ratio figure does not have a panel per shape");
    char path[192];
    snprintf(path, sizeof path, "%s/data/panel_D128_causal.dat", dir);
    ck_assert_msg(file_size(path) < 0, "the model shapes were also drawn together in panel_D128_causal.dat");
    /* each row in its own panel: naive at S=4096 (B=4) takes 9.76476 ms
     * at H=32 KV=8, 19.5295 at H=64 KV=8, 4.88238 at H=16 KV=1 */
    ck_assert_double_eq_tol(panel_value("panel_H32_KV8_D128_causal.dat", "naive", 4096, 2), 9.76476, 1e-9);
    ck_assert_double_eq_tol(panel_value("panel_H64_KV8_D128_causal.dat", "naive", 4096, 2), 19.5295, 1e-9);
    ck_assert_double_eq_tol(panel_value("panel_H16_KV1_D128_causal.dat", "naive", 4096, 2), 4.88238, 1e-9);
    ck_assert_double_eq_tol(panel_value("panel_H16_KV16_D192_causal.dat", "naive", 4096, 2), 5.87346, 1e-9);
    ck_assert_msg(data_has("meta.gp", "^grid_note = 'batch = 16384 / S, heads per panel, bf16, cold mode'$"),
                  "the grid note does not defer the heads to the panels");

    /* the page: a table section per shape under the figures' titles, and
     * the grid named by its shapes */
    assert_report_page("tests/fixtures/llm.csv");
    char page[128];
    snprintf(page, sizeof page, "%s/report.html", dir);
    ck_assert_msg(sh("grep -q '5 model shapes (H=16 KV=1 D=128, H=32 KV=8 D=128, H=64 KV=8 D=128, H=16 D=192, "
                     "H=16 KV=8 D=256), causal only' %s", page) == 0,
                  "the page does not name the grid's model shapes");
    static const char *const headers[] = {"H=16 KV=1 (MQA), D=128, causal", "H=32 KV=8, D=128, causal",
                                          "H=64 KV=8, D=128, causal", "H=16, D=192, causal",
                                          "H=16 KV=8, D=256, causal"};
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++)
        /* the fastest-kernel table, the speedup-over-PyTorch table, the cold table */
        ck_assert_msg(sh("test $(grep -c '<tr class=\"panel\"><th colspan=\"[0-9]*\">%s</th></tr>' %s) -eq 3",
                         headers[i], page) == 0,
                      "the page's tables lack the panel '%s' or repeat it", headers[i]);
    /* under a shape's header, that shape's rows: S B H */
    ck_assert_msg(sh("grep -A1 '>H=64 KV=8, D=128, causal</th></tr>' %s | grep -q '^<tr><td>2048</td><td>8</td><td>64</td>'",
                     page) == 0,
                  "the first row under H=64 KV=8 is not the H=64 point at S=2048");
}
END_TEST

/* One grouped shape alone still gets its shape's title: a panel titled
 * "D=128, causal" would hide that K and V have 8 heads, not 64. */
START_TEST(test_one_grouped_shape_is_named)
{
    char csv[128];
    snprintf(csv, sizeof csv, "%s/one_shape.csv", dir);
    ck_assert_int_eq(sh("(head -1 tests/fixtures/llm.csv; grep ',bf16,[0-9]*,64,8,' tests/fixtures/llm.csv) >%s", csv), 0);
    /* cudnn_sdpa skips every grouped point: the headline has nothing to draw */
    render_all(&(struct fixture){csv, NULL, false, true, true, true});
    ck_assert_msg(data_has("meta.gp", "^array panel_title\\[1\\] = \\['H=64 KV=8, D=128, causal'\\]$"),
                  "a run of one grouped shape does not name it");
    ck_assert_msg(data_has("meta.gp", "panel_H64_KV8_D128_causal.dat"), "its panel file is not named by the shape");
}
END_TEST

/* The default grid keeps its head_dim × causal panels, names and titles:
 * fused.csv (written before kv_heads: it reads as kv_heads = heads) and the
 * committed H200 run, whose seed point (B=8 H=16 S=1024, D=64 causal)
 * differs in heads from the D=64 causal family (H=32) but not in
 * batch·seq_len alone: it stays off the panels, as before. */
START_TEST(test_default_grid_panels_unchanged)
{
    static const char *const runs[] = {"tests/fixtures/fused.csv", "results/h200/20261201T034152Z.csv"};
    for (size_t r = 0; r < 2; r++) {
        char data[128];
        snprintf(data, sizeof data, "%s/data", dir);
        ck_assert_int_eq(sh("rm -rf %s && %s data %s %s >/dev/null", data, tool_path("report"), runs[r], data), 0);
        ck_assert_msg(data_has("meta.gp", "^npanels = 4$"), "%s: not the four head_dim × causal panels", runs[r]);
        ck_assert_msg(data_has("meta.gp", "^array panel_title\\[4\\] = \\['D = 64, non-causal', 'D = 64, causal', "
                                          "'D = 128, non-causal', 'D = 128, causal'\\]$"),
                      "%s: the panel titles changed", runs[r]);
        static const char *const files[] = {"panel_D64_full.dat", "panel_D64_causal.dat", "panel_D128_full.dat",
                                            "panel_D128_causal.dat"};
        for (size_t i = 0; i < 4; i++) {
            char path[192];
            snprintf(path, sizeof path, "%s/%s", data, files[i]);
            ck_assert_msg(file_size(path) > 0, "%s: %s was not written", runs[r], files[i]);
        }
        ck_assert_msg(sh("ls %s | grep -q '_H[0-9]*_KV'", data) != 0, "%s: a model-shape panel appeared", runs[r]);
        ck_assert_msg(data_has("meta.gp", "^grid_shape = 'batch = 16384 / S, heads = 2048 / D, bf16'$"),
                      "%s: the grid note changed", runs[r]);
    }
    /* the page's table headers too */
    ck_assert_int_eq(sh("%s html results/h200/20261201T034152Z.csv %s >/dev/null", tool_path("report"), dir), 0);
    char page[128];
    snprintf(page, sizeof page, "%s/report.html", dir);
    ck_assert_msg(sh("grep -q '<tr class=\"panel\"><th colspan=\"[0-9]*\">D = 64, causal</th></tr>' %s", page) == 0 &&
                      sh("grep -q 'model shape\\|KV=' %s", page) != 0,
                  "the committed run's page is not grouped by head_dim × causal");
}
END_TEST

START_TEST(test_gaps_render)
{
    /* oom and skipped rows and a variant missing at one point: still figures */
    render_all(&(struct fixture){"tests/fixtures/gaps.csv", "tests/fixtures/full.csv", false, true, false, false});
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
    render_all(&(struct fixture){"tests/fixtures/single.csv", NULL, false, true, false, false});
}
END_TEST

START_TEST(test_one_variant_renders)
{
    /* inplace only: no naive to be faster than, no cudnn_sdpa */
    render_all(&(struct fixture){"tests/fixtures/one_variant.csv", NULL, false, false, false, false});
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
    render_all(&(struct fixture){"tests/fixtures/hostile.csv", "tests/fixtures/hostile.csv", false, true, false, false});
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
    tcase_add_test(t, test_peers_run_renders);
    tcase_add_test(t, test_peers_only_run_renders);
    tcase_add_test(t, test_llm_run_has_a_panel_per_shape);
    tcase_add_test(t, test_one_grouped_shape_is_named);
    tcase_add_test(t, test_default_grid_panels_unchanged);
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

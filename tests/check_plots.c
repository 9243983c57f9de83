/* check_plots.c — tests of the figures and the report page (Check): on the
 * fixture CSVs in tests/fixtures/ (a full run, one with gaps — oom and
 * skipped rows and a variant absent at a point —, a single point, one
 * variant only, a run of the fused kernels with cudnn_sdpa and its .env
 * (peak) against a baseline with a throttled and a slower row, a run with
 * power readings, an H200 run of ours beside the seven PyTorch peers and
 * its peer rows alone, a run of the llm grid's model shapes (llm.csv,
 * grouped K/V heads; hand-written numbers, not a measurement), one whose gpu field, variant name and .env hold
 * gnuplot code, a malformed file, and in tests/fixtures/compare/ a compare
 * run with its samples and a run of burst and sustained rows, both
 * hand-made, and passes.csv, the forward, the backward and forward +
 * backward of two variants, hand-made, and decode.csv, an H200 run of the
 * decode grid with its .env, made without --peak), build/report and every plots/
 * script must produce PNG files with the PNG signature and SVG files that
 * parse as XML (xmllint) — or, where the run lacks what a figure needs
 * (cudnn_sdpa, naive, a baseline, power, PyTorch peers beside ours, decode
 * rows), say
 * so and exit 0 without a file —, the report page must parse as HTML, the
 * peers must be drawn dashed and marked on the page, a run of several
 * model shapes must get a panel per shape (titles, files, the page's
 * tables) while the default grid keeps its head_dim × causal panels, a
 * compare run's headline ratios must be the Hodges–Lehmann estimates of its
 * samples with their bounds (a value worked by hand) while the same rows
 * measured row after row keep the medians' ratio, burst and sustained rows
 * (and two inits) must be separate series, every subtitle must say the
 * regime, each pass must be a family of figures of its own (the forward's
 * files those of its rows alone, the backward's in files, panels, titles
 * and page sections of their own), a decode run's bandwidth figure must
 * draw its decode panels in GB/s titled with their q_len, with the read
 * ceiling's line where the .env has one and the words that it was not
 * measured where not, while a run without decode rows draws none and its
 * page has no decode section, nothing in a results file may run when
 * gnuplot loads the data, and the malformed CSV must give exit 2 and a
 * message naming file:line. Needs gnuplot and xmllint (`make test`
 * installs them); run from the repository root after `make all`. */
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
    bool together;              /* ratio needs the baseline measured with the run: one A/B pair */
    bool decode;                /* bandwidth needs decode rows (q_len < seq_len) */
};

static const char *const scripts[] = {"headline", "throughput",    "bandwidth", "latency", "speedup",
                                      "memory",   "speedup_torch", "energy",    "ratio"};
#define NSCRIPTS (sizeof scripts / sizeof scripts[0])

static bool draws(const struct fixture *fx, const char *script)
{
    return !(!strcmp(script, "headline") && !fx->cudnn) && !(!strcmp(script, "speedup") && !fx->naive) &&
           !(!strcmp(script, "ratio") && !(fx->baseline && fx->together)) &&
           !(!strcmp(script, "energy") && !fx->power) &&
           !(!strcmp(script, "speedup_torch") && !fx->torch) && !(!strcmp(script, "bandwidth") && !fx->decode);
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

/* Whether FILE (an SVG of gnuplot's) strokes n paths in rgb(r, g, b),
 * dashed or solid. */
static bool svg_paths_in(const char *file, int r, int g, int b, bool dashed, int n)
{
    return sh("test $(grep -Ec \"stroke='rgb\\( *%d, *%d, *%d\\)' +%s\" %s/%s) -eq %d", r, g, b,
              dashed ? "stroke-dasharray" : "d=", dir, file, n) == 0;
}

/* build/report html of fixture into DIR/report.html, which must parse. */
static void write_page(const char *fixture)
{
    ck_assert_int_eq(sh("%s html %s %s >/dev/null", tool_path("report"), fixture, dir), 0);
    char page[128];
    snprintf(page, sizeof page, "%s/report.html", dir);
    ck_assert_msg(file_size(page) > 500, "%s missing", page);
    ck_assert_msg(sh("xmllint --html --noout %s 2>/dev/null", page) == 0, "%s does not parse", page);
}

/* The page, showing the latency figure drawn beside it. */
static void assert_report_page(const char *fixture)
{
    write_page(fixture);
    ck_assert_msg(sh("grep -q 'latency.png' %s/report.html", dir) == 0, "the page does not show the latency figure");
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
    render_all(&(struct fixture){"tests/fixtures/full.csv", "tests/fixtures/full.csv", false, true, false, false, false, false});
    ck_assert_msg(data_has("meta.gp", "^ratio_why = 'the baseline is the run itself'$"), "no reason for the missing ratio figure");
    assert_report_page("tests/fixtures/full.csv");
}
END_TEST

/* A run with the power columns (H200, tune grid, flash_hopper and
 * cudnn_sdpa; results/h200/power/): the energy figure is drawn. */
START_TEST(test_power_run_renders)
{
    render_all(&(struct fixture){"tests/fixtures/power.csv", NULL, true, false, true, false, false, false});
    ck_assert_msg(data_has("meta.gp", "^have_energy = 1$"), "meta.gp does not say the run has power");
}
END_TEST

START_TEST(test_fused_run_renders)
{
    /* cudnn_sdpa and the fused kernels, a peak in fused.env, and a baseline
     * measured a day apart (fused_base.csv, no A/B run in common): its
     * ratio is not drawn, and meta.gp and the page say why */
    render_all(&(struct fixture){"tests/fixtures/fused.csv", "tests/fixtures/fused_base.csv", true, true, false, false,
                                 false, false});
    ck_assert_msg(data_has("meta.gp", "^peak_tflops = 798.2$"), "the peak of fused.env is not in meta.gp");
    /* no peers: every variant solid, each in its own look */
    ck_assert_msg(data_has("meta.gp", "^array variant_peer\\[5\\] = \\[0, 0, 0, 0, 0\\]$"),
                  "meta.gp marks a peer in a run without peers");
    ck_assert_msg(data_has("meta.gp", "^have_torch = 0$"), "meta.gp claims PyTorch rows in a run without peers");
    /* a run written before the regime column: burst rows, and its subtitles say so */
    ck_assert_msg(data_has("meta.gp", "^grid_note = 'batch = 16384 / S, heads = 2048 / D, bf16, cold mode, burst, init=uniform'$"),
                  "meta.gp lacks the grid's note, or it does not say burst");
    ck_assert_msg(data_has("meta.gp", "^headline_how = 'ratios of medians, measured row after row'$") &&
                      data_has("meta.gp", "^headline_bars = 0$"),
                  "the headline of a run measured row after row does not say so, or draws bars");
    /* the headline leaves the eager variants out and says so */
    ck_assert_msg(data_has("meta.gp", "^array headline_show\\[5\\] = \\[0, 0, 0, 1, 1\\]$"),
                  "the headline does not show exactly flash_mma and flash_hopper");
    ck_assert_msg(data_has("meta.gp", "^headline_note = 'not shown: naive, inplace, "), "no note on what is left out");
    /* measured apart: no ratio data, the reason in meta.gp and on the page */
    ck_assert_msg(data_has("meta.gp", "^have_ratio = 0$") &&
                      data_has("meta.gp", "^ratio_why = 'the run (20261130T045458Z) and the baseline "
                                          "(20261130T042431Z) were measured apart"),
                  "a baseline measured apart is not refused with its reason");
    ck_assert_msg(sh("ls %s/data | grep -q '^ratio_'", dir) != 0, "ratio files were written for runs measured apart");
    ck_assert_int_eq(sh("%s html tests/fixtures/fused.csv %s --baseline tests/fixtures/fused_base.csv >/dev/null",
                        tool_path("report"), dir), 0);
    ck_assert_msg(sh("grep -q 'Current / baseline per row: not drawn</p>' %s/report.html && "
                     "grep -q 'were measured apart, not as the two sides of one A/B run' %s/report.html", dir, dir) == 0,
                  "the page does not say why the ratio figure is missing");
    assert_report_page("tests/fixtures/fused.csv");
}
END_TEST

/* A real A/B pair (tests/fixtures/ab_base.csv, ab_cand.csv: one ab_run on
 * both sides, results/h200/ab/20261202T004443Z without its samples): the
 * ratio figure is drawn, with the gate's verdicts; a candidate row made 8%
 * slower is marked SLOWER. */
START_TEST(test_ab_pair_ratio_drawn)
{
    char cand[160];
    snprintf(cand, sizeof cand, "%s/cand.csv", dir);
    /* the D=128 causal S=1024 row's times 8% longer */
    ck_assert_int_eq(sh("awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } "
                        "NR > 1 && $c[\"seq_len\"] == 1024 && $c[\"head_dim\"] == 128 && $c[\"causal\"] == 1 "
                        "{ $c[\"ms_median\"] *= 1.08 } { print }' tests/fixtures/ab_cand.csv > %s",
                        cand), 0);
    render_all(&(struct fixture){cand, "tests/fixtures/ab_base.csv", false, false, true, false, true, false});
    ck_assert_msg(data_has("meta.gp", "^have_ratio = 1$") && data_has("meta.gp", "^ratio_rows = 12$") &&
                      data_has("meta.gp", "^nratio_panels = 6$"),
                  "the A/B pair's ratio figure lacks its 12 rows in 6 panels");
    ck_assert_msg(data_has("ratio_D128_causal.dat", "^1024 1.08[0-9]* 1.0[0-9]* NaN NaN 0 0 1 16$"),
                  "the slowed row is not marked SLOWER in ratio_D128_causal.dat");
    ck_assert_msg(data_has("meta.gp", "^ratio_slower = 1$") && data_has("meta.gp", "^ratio_throttled = 0$"),
                  "meta.gp does not count the slower row");
    ck_assert_int_eq(sh("%s html %s %s --baseline tests/fixtures/ab_base.csv >/dev/null", tool_path("report"), cand, dir), 0);
    ck_assert_msg(sh("grep -q 'id=\"fig-ratio\".*<img src=\"ratio.png\"' %s/report.html || "
                     "grep -A2 'id=\"fig-ratio\"' %s/report.html | grep -q 'src=\"ratio.png\"'", dir, dir) == 0,
                  "the page does not show the pair's ratio figure");
}
END_TEST

/* tests/fixtures/peers.csv: an H200 run of our five variants and the seven
 * PyTorch peers (torch_*) at three points, cold and graph. */
START_TEST(test_peers_run_renders)
{
    render_all(&(struct fixture){"tests/fixtures/peers.csv", NULL, true, true, true, true, false, false});
    /* the peers are marked, and paired by hue with ours (a darker shade):
     * torch_naive with naive, torch_sdpa_cudnn with cudnn_sdpa */
    ck_assert_msg(data_has("meta.gp", "^array variant_peer\\[12\\] = \\[0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1\\]$"),
                  "meta.gp does not mark exactly the torch_* variants as peers");
    ck_assert_msg(data_has("meta.gp", "^array variant_rgb\\[12\\] = \\['#0072b2', '#e69f00', '#009e73', '#cc79a7', "
                                      "'#d55e00', '#004c78', '#a87400', '#9c4400', '#2a86bd', '#a34d80', '#00674b', "
                                      "'#000000'\\]$"),
                  "meta.gp does not give the variants their listed colours");
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
    render_all(&(struct fixture){"tests/fixtures/peers_only.csv", NULL, false, false, true, false, false, false});
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
     * PyTorch peer; for the ratio panels, the run against a copy of itself
     * as the two sides of one A/B run (its ab_run set on both) */
    char llm[160], base[160];
    snprintf(llm, sizeof llm, "%s/llm.csv", dir);
    snprintf(base, sizeof base, "%s/llm_base.csv", dir);
    /* ab_run is the last column but one (a reason before it may hold quoted commas) */
    ck_assert_int_eq(sh("sed -E '2,$ s/,[^,]*,([^,]*)$/,AB1,\\1/' tests/fixtures/llm.csv > %s && cp %s %s && "
                        "cp tests/fixtures/llm.env %s/llm.env", llm, llm, base, dir), 0);
    render_all(&(struct fixture){llm, base, true, true, true, true, true, false});
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
    ck_assert_msg(data_has("meta.gp", "^grid_note = 'batch = 16384 / S, heads per panel, bf16, cold mode, burst, init=uniform'$"),
                  "the grid note does not defer the heads to the panels");

    /* the page: a table section per shape under the figures' titles, and
     * the grid named by its shapes */
    assert_report_page(llm);
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
    render_all(&(struct fixture){csv, NULL, false, true, true, true, false, false});
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
    render_all(&(struct fixture){"tests/fixtures/gaps.csv", "tests/fixtures/full.csv", false, true, false, false, false, false});
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
    render_all(&(struct fixture){"tests/fixtures/single.csv", NULL, false, true, false, false, false, false});
}
END_TEST

START_TEST(test_one_variant_renders)
{
    /* inplace only: no naive to be faster than, no cudnn_sdpa */
    render_all(&(struct fixture){"tests/fixtures/one_variant.csv", NULL, false, false, false, false, false, false});
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
    render_all(&(struct fixture){"tests/fixtures/hostile.csv", "tests/fixtures/hostile.csv", false, true, false, false, false, false});
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

/* ---------------------------------------- compare runs and regimes */

/* tests/fixtures/compare/20261210T120000Z: a compare run (every row's
 * compare_run the run's id) of cudnn_sdpa, flash_hopper and flash_mma at D =
 * 128 causal, S = 1024, 2048, 4096, cold, sustained, five samples a row in
 * its .samples.csv; hand-made numbers, not a measurement. */
#define COMPARE_RUN "tests/fixtures/compare/20261210T120000Z"

/* The headline's ratios of a compare run come from the samples: the
 * Hodges–Lehmann estimate and its bounds, drawn as bars. By hand, at S =
 * 2048: cudnn_sdpa's samples 1.12 1.00 1.02 1.14 1.01, flash_hopper's 0.95
 * 0.90 0.97 0.91 0.96 (ms). Of the 25 time ratios hopper/cudnn, sorted, the
 * 13th (the median) is 0.91/1.02, the 2nd 0.91/1.14 and the 24th 0.97/1.01;
 * with 5 and 5 samples and each bound at 99 % the bounds are the 2nd and
 * the 24th (the exact Mann–Whitney U: P(U <= 1) = 2/252 <= 1 %, P(U <= 2) =
 * 4/252 > 1 %). As a speed ratio, inverted: 1.02/0.91 = 1.1209 in
 * [1.01/0.97, 1.14/0.91] = [1.0412, 1.2527] — where the medians give
 * 1.02/0.95 = 1.0737. */
START_TEST(test_compare_run_headline_interleaved)
{
    render_all(&(struct fixture){COMPARE_RUN ".csv", NULL, true, false, false, false, false, false});
    const char *panel = "panel_D128_causal.dat";
    ck_assert_double_eq_tol(panel_value(panel, "flash_hopper", 2048, 6), 1.02 / 0.91, 1e-5);
    ck_assert_double_eq_tol(panel_value(panel, "flash_hopper", 2048, 10), 1.01 / 0.97, 1e-5);
    ck_assert_double_eq_tol(panel_value(panel, "flash_hopper", 2048, 11), 1.14 / 0.91, 1e-5);
    /* the reference against itself: 1, no bar */
    ck_assert_double_eq_tol(panel_value(panel, "cudnn_sdpa", 2048, 6), 1, 1e-12);
    ck_assert_msg(isnan(panel_value(panel, "cudnn_sdpa", 2048, 10)), "cudnn_sdpa has a bar against itself");
    ck_assert_msg(data_has("meta.gp", "^headline_bars = 1$") && data_has("meta.gp", "^array panel_bars\\[1\\] = \\['2 3'\\]$"),
                  "meta.gp does not draw bars for flash_hopper and flash_mma");
    ck_assert_msg(data_has("meta.gp", "^headline_how = 'interleaved ratios: Hodges–Lehmann of the samples, bars the 98 % "
                                      "interval (bounds at 99 %, the gate'"),
                  "the headline's subtitle does not say the ratios are interleaved, with their interval's level");
    ck_assert_msg(data_has("meta.gp", "^grid_note = 'batch = 16384 / S, heads = 16, bf16, cold mode, sustained, init=uniform'$"),
                  "the subtitles do not say the rows are sustained");
    /* the figure: its subtitle lines, and an error bar's path */
    char svg[192];
    snprintf(svg, sizeof svg, "%s/headline.svg", dir);
    ck_assert_msg(sh("grep -q 'cold mode, sustained' %s && grep -q 'interleaved ratios: Hodges' %s && "
                     "grep -q '98 %% interval' %s", svg, svg, svg) == 0,
                  "headline.svg lacks its subtitles or the bars' legend entry");
    /* the page: the interval of S = 2048 in the fastest-kernel table, the
     * interleaved sentence, and where it stands at S = 4096 */
    assert_report_page(COMPARE_RUN ".csv");
    char page[128];
    snprintf(page, sizeof page, "%s/report.html", dir);
    ck_assert_msg(sh("grep -q '<td title=\"98 %% interval \\[1.041, 1.253\\]\">1.12</td>' %s", page) == 0,
                  "the page's fastest-kernel table lacks flash_hopper's 1.12 [1.041, 1.253] at S = 2048");
    ck_assert_msg(sh("grep -q 'as fast (cudnn_sdpa ms / its ms, interleaved: Hodges–Lehmann ratios of the samples' %s", page) == 0,
                  "the headline's sentence does not say its ratios are interleaved");
    ck_assert_msg(sh("grep -q 'id=\"stands\"' %s && grep -q '<li><b>D = 128, causal</b>, S = 4096 (sustained): flash_hopper "
                     "1.0[0-9]× \\[1.0[0-9], 1.[01][0-9]\\], flash_mma 0.5[0-9]× \\[' %s", page, page) == 0,
                  "the page does not say where flash_hopper and flash_mma stand at S = 4096, with intervals");
    ck_assert_msg(sh("grep -q '<b>in turns</b>: compare run <code>20261210T120000Z</code>' %s", page) == 0,
                  "the page does not say the rows were measured in turns");
    ck_assert_msg(sh("grep -q '<th title=\"settled SM clock\">MHz</th>' %s && grep -q '<td>1755</td><td>688</td>' %s",
                     page, page) == 0,
                  "the page's tables lack the sustained rows' settled clock and power");
}
END_TEST

/* The same rows measured row after row (compare_run emptied, the samples
 * kept beside them): the old ratio of medians, no bars, and both the
 * figure and the page say "row after row". */
START_TEST(test_plain_run_keeps_median_ratio)
{
    char csv[160];
    snprintf(csv, sizeof csv, "%s/20261210T120000Z.csv", dir);
    /* compare_run is the last column but one */
    ck_assert_int_eq(sh("sed -E '2,$ s/,[^,]*,([^,]*)$/,,\\1/' " COMPARE_RUN ".csv > %s && "
                        "cp " COMPARE_RUN ".samples.csv " COMPARE_RUN ".env %s/", csv, dir), 0);
    ck_assert_msg(sh("grep -q ',20261210T120000Z,$' %s", csv) != 0, "a row keeps its compare_run");
    render_all(&(struct fixture){csv, NULL, true, false, false, false, false, false});
    const char *panel = "panel_D128_causal.dat";
    ck_assert_double_eq_tol(panel_value(panel, "flash_hopper", 2048, 6), 1.02 / 0.95, 1e-5);
    ck_assert_msg(isnan(panel_value(panel, "flash_hopper", 2048, 10)) && isnan(panel_value(panel, "flash_hopper", 2048, 11)),
                  "a run measured row after row has bars");
    ck_assert_msg(data_has("meta.gp", "^headline_bars = 0$") &&
                      data_has("meta.gp", "^headline_how = 'ratios of medians, measured row after row'$"),
                  "the headline of a plain run does not say row after row");
    assert_report_page(csv);
    char page[128];
    snprintf(page, sizeof page, "%s/report.html", dir);
    ck_assert_msg(sh("grep -q '<b>row after row</b>' %s && grep -q 'flash_hopper 1.0[0-9]×, flash_mma 0.5[0-9]× (row after row)</li>' %s",
                     page, page) == 0,
                  "the page of a plain run does not say row after row");
    ck_assert_msg(sh("grep -q '<td>1.07</td>' %s && ! grep -q 'interval \\[' %s", page, page) == 0,
                  "the page of a plain run gives an interval, or not the medians' 1.07 at S = 2048");
}
END_TEST

/* tests/fixtures/compare/regimes.csv: cudnn_sdpa and flash_hopper, burst
 * and sustained rows at each point (a plain run). The regimes are separate
 * series, each set against its own regime's cudnn_sdpa: by hand at S = 2048
 * 1.00/0.95 burst, 1.10/1.00 sustained. */
START_TEST(test_regimes_are_separate_series)
{
    render_all(&(struct fixture){"tests/fixtures/compare/regimes.csv", NULL, true, false, false, false, false, false});
    ck_assert_msg(data_has("meta.gp", "^array variant_name\\[4\\] = \\['cudnn_sdpa', 'cudnn_sdpa (sustained)', "
                                      "'flash_hopper', 'flash_hopper (sustained)'\\]$"),
                  "the regimes are not four series, the sustained ones named so");
    ck_assert_msg(data_has("meta.gp", "^array variant_dash\\[4\\] = \\['solid', '(3, 3)', 'solid', '(3, 3)'\\]$"),
                  "the sustained series are not drawn in a dash of their own");
    const char *panel = "panel_D128_causal.dat";
    ck_assert_double_eq_tol(panel_value(panel, "flash_hopper", 2048, 6), 1.00 / 0.95, 1e-5);
    ck_assert_double_eq_tol(panel_value(panel, "flash_hopper (sustained)", 2048, 6), 1.10 / 1.00, 1e-5);
    ck_assert_double_eq_tol(panel_value(panel, "flash_hopper", 2048, 2), 0.95, 1e-9);
    ck_assert_double_eq_tol(panel_value(panel, "flash_hopper (sustained)", 2048, 2), 1.00, 1e-9);
    ck_assert_msg(data_has("meta.gp", "^grid_note = 'batch = 16384 / S, heads = 16, bf16, cold mode, burst and sustained, "
                                      "init=uniform, separate series'$"),
                  "the subtitles do not say the run holds both regimes");
    char svg[192];
    snprintf(svg, sizeof svg, "%s/latency.svg", dir);
    ck_assert_msg(sh("grep -q 'burst and sustained, init=uniform, separate series' %s && grep -q 'flash_hopper (sustained)' %s", svg,
                     svg) == 0,
                  "latency.svg does not say both regimes or name the sustained series");
    /* the page: a table per regime, the sustained one with the settled clock and power */
    assert_report_page("tests/fixtures/compare/regimes.csv");
    char page[128];
    snprintf(page, sizeof page, "%s/report.html", dir);
    ck_assert_msg(sh("grep -q '<h3 id=\"table-cold\">cold, burst ' %s && grep -q '<h3 id=\"table-cold-sustained\">cold, sustained ' %s",
                     page, page) == 0,
                  "the page has not a table per regime, each saying its regime");
    ck_assert_msg(sh("sed -n '/id=\"table-cold-sustained\"/,/<\\/table>/p' %s | grep -q '<td>1755</td><td>688</td>' && "
                     "! sed -n '/id=\"table-cold\"/,/<\\/table>/p' %s | grep -q 'MHz'", page, page) == 0,
                  "the sustained table lacks the settled clock and power, or the burst table has them");
    ck_assert_msg(sh("grep -q '<b>cold, burst</b>: ' %s && grep -q '<b>cold, sustained</b>: ' %s", page, page) == 0,
                  "the headline's sentences are not per regime");
    /* every input drawn from N(0, 1): the subtitles and the page say so */
    char csv[160];
    snprintf(csv, sizeof csv, "%s/normal.csv", dir);
    ck_assert_int_eq(sh("sed 's/,uniform,/,normal,/' tests/fixtures/compare/regimes.csv > %s && rm -rf %s/data", csv, dir), 0);
    report_data(&(struct fixture){csv, NULL, true, false, false, false, false, false});
    ck_assert_msg(data_has("meta.gp", "cold mode, burst and sustained, init=normal, separate series'$"),
                  "the subtitles do not name the inputs' init");
    ck_assert_int_eq(sh("%s html %s %s >/dev/null", tool_path("report"), csv, dir), 0);
    ck_assert_msg(sh("grep -q '<dt>Inputs</dt><dd><b>init=normal</b>' %s", page) == 0,
                  "the page does not name the inputs' init");
}
END_TEST

/* Init uniform and normal in one run: separate series too. */
START_TEST(test_inits_are_separate_series)
{
    char csv[160];
    snprintf(csv, sizeof csv, "%s/inits.csv", dir);
    ck_assert_int_eq(sh("(cat tests/fixtures/compare/regimes.csv; grep ',burst,' tests/fixtures/compare/regimes.csv | "
                        "sed 's/,uniform,/,normal:0.5,/') > %s", csv), 0);
    render_all(&(struct fixture){csv, NULL, true, false, false, false, false, false});
    ck_assert_msg(data_has("meta.gp", "'flash_hopper (init=uniform)', 'flash_hopper (init=normal:0.5)', "
                                      "'flash_hopper (sustained, init=uniform)'\\]$"),
                  "a second init is not a series of its own");
    ck_assert_msg(data_has("meta.gp", "cold mode, burst and sustained, init uniform and normal:0.5, separate series'$"),
                  "the subtitles do not name both inits");
}
END_TEST

/* ------------------------------------------------------------- passes */

/* tests/fixtures/passes.csv: cudnn_sdpa and flash_hopper at D = 128,
 * causal and not, S = 1024, 2048, 4096 (B·S = 16384, H = 16), cold,
 * burst, each point timed as the forward, the backward and forward +
 * backward (pass fwd, bwd, fwd_bwd); hand-made numbers, not a measurement,
 * every backward time unlike any forward one. At S = 2048 non-causal:
 * cudnn_sdpa 0.52 / 1.60 / 2.12 ms, flash_hopper 0.50 / 1.80 / 2.30 ms. */
#define PASSES_RUN "tests/fixtures/passes.csv"

/* DIR/NAME/passes.csv: the fixture's rows whose pass matches the extended
 * regular expression pass (all of them for ".*"), and its data by report
 * data into data (a directory under DIR). */
static void passes_copy(const char *name, const char *pass, const char *data)
{
    ck_assert_int_eq(sh("mkdir -p %s/%s && awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next } "
                        "$c[\"pass\"] ~ /^(%s)$/' " PASSES_RUN " > %s/%s/passes.csv",
                        dir, name, pass, dir, name), 0);
    ck_assert_int_eq(sh("%s data %s/%s/passes.csv %s/%s >/dev/null", tool_path("report"), dir, name, dir, data), 0);
}

/* Whether FILE is the same in DIR/data (the run DIR/mixed/passes.csv) and
 * in DIR/fwd/data (DIR/fwd/passes.csv) once each one's paths are written
 * alike (meta.gp names its files and run by path). */
static bool same_as_fwd_alone(const char *file)
{
    return sh("sed -e 's#%s/data/#D/#g' -e 's#%s/mixed/#R/#g' %s/data/%s > %s/a.txt && "
              "sed -e 's#%s/fwd/data/#D/#g' -e 's#%s/fwd/#R/#g' %s/fwd/data/%s > %s/b.txt && cmp -s %s/a.txt %s/b.txt",
              dir, dir, dir, file, dir, dir, dir, dir, file, dir, dir, dir) == 0;
}

/* A pass is a family of figures of its own: the forward's files are
 * byte for byte those of the run's forward rows alone, the backward's and
 * forward + backward's panels have their own files (_bwd, _fwd_bwd), meta.gp
 * (data/bwd/, data/fwd_bwd/) and titles, and no row of one pass is drawn
 * in another's panel or set against another pass's row. */
START_TEST(test_passes_are_separate_figures)
{
    passes_copy("mixed", ".*", "data");
    passes_copy("fwd", "fwd", "fwd/data");
    static const char *const fwd_files[] = {"meta.gp", "panel_D128_full.dat", "panel_D128_causal.dat"};
    for (size_t i = 0; i < 3; i++)
        ck_assert_msg(same_as_fwd_alone(fwd_files[i]), "the forward's %s differs from the one of the forward rows alone",
                      fwd_files[i]);
    ck_assert_msg(sh("test $(ls %s/fwd/data | wc -l) -eq 3", dir) == 0,
                  "the forward rows alone draw more than meta.gp and two panels");
    /* the backward's and forward + backward's own files */
    static const char *const other[] = {"bwd", "fwd_bwd"};
    for (size_t k = 0; k < 2; k++) {
        char meta[64], want[512];
        snprintf(meta, sizeof meta, "%s/meta.gp", other[k]);
        snprintf(want, sizeof want, "^array panel_file\\[2\\] = \\['%s/data/panel_D128_full_%s.dat', "
                                    "'%s/data/panel_D128_causal_%s.dat'\\]$", dir, other[k], dir, other[k]);
        ck_assert_msg(data_has(meta, want), "the %s figures' panels are not panel_D128_full_%s.dat and "
                                            "panel_D128_causal_%s.dat", other[k], other[k], other[k]);
        snprintf(want, sizeof want, "^pass = '%s'$", other[k]);
        ck_assert_msg(data_has(meta, want), "meta.gp does not name the pass %s", other[k]);
    }
    ck_assert_msg(data_has("bwd/meta.gp", "^array panel_title\\[2\\] = \\['D = 128, non-causal, backward (dQ, dK, dV)', "
                                          "'D = 128, causal, backward (dQ, dK, dV)'\\]$") &&
                      data_has("fwd_bwd/meta.gp", "^array panel_title\\[2\\] = \\['D = 128, non-causal, forward + "
                                                  "backward', 'D = 128, causal, forward + backward'\\]$"),
                  "the backward panels' titles do not say their pass");
    ck_assert_msg(data_has("bwd/meta.gp", "^grid_note = 'batch = 16384 / S, heads = 16, bf16, cold mode, backward "
                                          "(dQ, dK, dV), burst, init=uniform'$"),
                  "the backward figures' subtitle does not say the pass beside the regime and init");
    ck_assert_msg(!data_has("meta.gp", "^pass"), "the forward's meta.gp names a pass");
    /* each row in its own pass's panel, set against cudnn_sdpa's row of its pass */
    ck_assert_double_eq_tol(panel_value("panel_D128_full.dat", "flash_hopper", 2048, 2), 0.50, 1e-9);
    ck_assert_double_eq_tol(panel_value("panel_D128_full_bwd.dat", "flash_hopper", 2048, 2), 1.80, 1e-9);
    ck_assert_double_eq_tol(panel_value("panel_D128_full_fwd_bwd.dat", "flash_hopper", 2048, 2), 2.30, 1e-9);
    ck_assert_double_eq_tol(panel_value("panel_D128_full_bwd.dat", "flash_hopper", 2048, 6), 1.60 / 1.80, 1e-5);
    ck_assert_double_eq_tol(panel_value("panel_D128_full_fwd_bwd.dat", "flash_hopper", 2048, 6), 2.12 / 2.30, 1e-5);
    /* no ms of a backward or forward + backward row in a forward panel,
     * and no forward ms in theirs */
    ck_assert_int_eq(sh("awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } "
                        "{ print $c[\"pass\"], $c[\"ms_median\"] + 0 }' " PASSES_RUN " > %s/ms.txt", dir), 0);
    for (int fwd = 0; fwd <= 1; fwd++)
        ck_assert_msg(sh("awk 'FNR == NR { if (($1 == \"fwd\") == %d) ms[$2] = 1; next } "
                         "/^[0-9]/ && ($2 + 0) in ms { bad = 1 } END { exit bad }' %s/ms.txt %s/data/panel_D128_%s.dat",
                         fwd, dir, dir, fwd ? "*_*bwd" : "*[lL]") == 0,
                      fwd ? "a forward row's time is in a backward panel" : "a backward row's time is in a forward panel");
}
END_TEST

/* The figures of each pass render, their titles saying the pass; a run of
 * the backward alone draws its figures only (no forward meta.gp). */
START_TEST(test_passes_render_titled)
{
    passes_copy("mixed", ".*", "data");
    static const char *const other[] = {"bwd", "fwd_bwd"};
    static const char *const title[] = {"backward (dQ, dK, dV)", "forward + backward"};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < NSCRIPTS; i++)
            for (int png = 0; png <= 1; png++) {
                char out[256];
                snprintf(out, sizeof out, "%s/%s-%s.%s", dir, scripts[i], other[k], png ? "png" : "svg");
                ck_assert_msg(sh("gnuplot -c plots/%s.gp %s/data/%s %s %s 2>/dev/null", scripts[i], dir, other[k],
                                 out, png ? "png" : "svg") == 0,
                              "gnuplot %s on the %s figures failed", scripts[i], other[k]);
                const bool drawn = strcmp(scripts[i], "speedup") && strcmp(scripts[i], "speedup_torch") &&
                                   strcmp(scripts[i], "energy") && strcmp(scripts[i], "ratio") &&
                                   strcmp(scripts[i], "bandwidth");
                if (!drawn) ck_assert_msg(file_size(out) < 0, "%s drew what the run lacks", out);
                else if (png) assert_png(out);
                else assert_svg(out);
            }
    for (size_t k = 0; k < 2; k++) {
        ck_assert_msg(sh("grep -q 'Attention %s latency — h200' %s/latency-%s.svg && "
                         "grep -q 'D = 128, causal, %s' %s/latency-%s.svg",
                         title[k], dir, other[k], title[k], dir, other[k]) == 0,
                      "latency-%s.svg does not say its pass in the title and the panels' titles", other[k]);
        ck_assert_msg(sh("grep -q 'Speed relative to cuDNN (cudnn_sdpa), %s — h200' %s/headline-%s.svg && "
                         "grep -q 'cold mode, %s, burst, init=uniform' %s/headline-%s.svg",
                         title[k], dir, other[k], title[k], dir, other[k]) == 0,
                      "headline-%s.svg does not say its pass in the title and the subtitle", other[k]);
    }
    /* the forward's titles as in a run of the forward alone */
    ck_assert_int_eq(sh("gnuplot -c plots/latency.gp %s/data %s/latency.svg svg 2>/dev/null", dir, dir), 0);
    ck_assert_msg(sh("grep -q 'Attention forward latency — h200' %s/latency.svg && ! grep -q 'backward' %s/latency.svg",
                     dir, dir) == 0,
                  "the forward's latency figure does not say forward, or says backward");
    /* the backward alone */
    passes_copy("bwd", "bwd", "bwd/data");
    char path[256];
    snprintf(path, sizeof path, "%s/bwd/data/meta.gp", dir);
    ck_assert_msg(file_size(path) < 0, "a run without forward rows has a forward meta.gp");
    snprintf(path, sizeof path, "%s/bwd/data/bwd/meta.gp", dir);
    ck_assert_msg(file_size(path) > 0, "a run of the backward alone has no backward figures");
}
END_TEST

/* The ratio figure, per pass: the run against a copy of itself as the two
 * sides of one A/B run, each pass's ratios in its own panels and figure. */
START_TEST(test_passes_ratio_per_pass)
{
    char run[160], base[160];
    snprintf(run, sizeof run, "%s/passes.csv", dir);
    snprintf(base, sizeof base, "%s/passes_base.csv", dir);
    /* ab_run is the last column but two (compare_run and shard after it) */
    ck_assert_int_eq(sh("sed -E '2,$ s/,[^,]*,([^,]*),([^,]*)$/,AB1,\\1,\\2/' " PASSES_RUN " > %s && cp %s %s", run, run,
                        base), 0);
    report_data(&(struct fixture){run, base, true, false, false, false, true, false});
    ck_assert_msg(data_has("meta.gp", "^nratio_panels = 2$") && data_has("bwd/meta.gp", "^nratio_panels = 2$") &&
                      data_has("fwd_bwd/meta.gp", "^nratio_panels = 2$"),
                  "each pass's ratio figure does not have its two panels");
    ck_assert_msg(data_has("bwd/meta.gp", "^array ratio_panel_title\\[2\\] = \\['D = 128, non-causal, backward (dQ, dK, dV)', ") &&
                      data_has("meta.gp", "^array ratio_panel_title\\[2\\] = \\['D = 128, non-causal', 'D = 128, causal'\\]$"),
                  "the ratio panels are not per pass");
    ck_assert_msg(data_has("meta.gp", "^ratio_rows = 12$") && data_has("bwd/meta.gp", "^ratio_rows = 12$"),
                  "a pass's ratio figure does not hold its 12 rows alone");
    char path[256];
    snprintf(path, sizeof path, "%s/data/ratio_D128_causal_fwd_bwd.dat", dir);
    ck_assert_msg(file_size(path) > 0, "ratio_D128_causal_fwd_bwd.dat was not written");
}
END_TEST

/* The page: the headline's sentences and fastest-kernel tables per pass,
 * the backward's and forward + backward's full tables in sections of their
 * own, and each pass's figures. */
START_TEST(test_passes_page)
{
    passes_copy("mixed", ".*", "data");
    ck_assert_int_eq(sh("for s in headline latency; do for p in '' bwd fwd_bwd; do "
                        "gnuplot -c plots/$s.gp %s/data${p:+/$p} %s/mixed/$s${p:+-$p}.png png 2>/dev/null || exit 1; "
                        "done; done", dir, dir), 0);
    ck_assert_int_eq(sh("%s html %s/mixed/passes.csv %s/mixed >/dev/null", tool_path("report"), dir, dir), 0);
    char page[160];
    snprintf(page, sizeof page, "%s/mixed/report.html", dir);
    ck_assert_msg(sh("xmllint --html --noout %s 2>/dev/null", page) == 0, "%s does not parse", page);
    ck_assert_msg(sh("grep -q '<div class=\"section\" id=\"tables-bwd\">' %s && "
                     "grep -q '<h2>Backward (dQ, dK, dV)</h2>' %s && grep -q '<h2>Forward + backward</h2>' %s",
                     page, page, page) == 0,
                  "the page has no backward or forward + backward tables section");
    /* the backward section: its panels' headers and flash_hopper's 1.8 ms
     * at S = 2048 non-causal, cudnn_sdpa's 1.6 the best */
    ck_assert_msg(sh("sed -n '/id=\"tables-bwd\"/,/id=\"tables-fwd_bwd\"/p' %s > %s/bwd.html && "
                     "grep -q '<h3 id=\"table-cold-bwd\">cold, burst, backward (dQ, dK, dV) ' %s/bwd.html && "
                     "grep -q '<tr class=\"panel\"><th colspan=\"7\">D = 128, non-causal, backward (dQ, dK, dV)</th></tr>' "
                     "%s/bwd.html && "
                     "grep -q '^<tr><td>2048</td><td>8</td><td>16</td><td class=\"grp best\">1.6</td><td class=\"best\">430</td>"
                     "<td class=\"grp\">1.8</td><td>382</td></tr>' %s/bwd.html",
                     page, dir, dir, dir, dir) == 0,
                  "the backward tables lack their header, panel titles or the S = 2048 row");
    /* the forward's tables say no pass and hold no backward row */
    ck_assert_msg(sh("sed -n '/id=\"tables\"/,/id=\"tables-bwd\"/p' %s | grep -v 'tables-bwd' > %s/fwd.html && "
                     "grep -q '<h3 id=\"table-cold\">cold, burst ' %s/fwd.html && ! grep -q 'backward\\|>1.8<' %s/fwd.html",
                     page, dir, dir, dir) == 0,
                  "the forward's tables mix in the backward's rows or titles");
    ck_assert_msg(sh("grep -q '<b>cold, burst, forward + backward</b>: cudnn_sdpa is fastest at 6 of 6 points' %s", page) == 0,
                  "the headline's sentences are not per pass");
    ck_assert_msg(sh("grep -q '<dt>Passes</dt><dd><b>fwd</b> (the forward; 12 rows); <b>bwd</b> ' %s && "
                     "grep -q '<dt>Grid</dt><dd>6 points, ' %s", page, page) == 0,
                  "What ran does not give the passes, or counts a point once per pass");
    ck_assert_msg(sh("grep -q 'src=\"headline-fwd_bwd.png\"' %s && grep -q 'id=\"fig-latency-bwd\"' %s && "
                     "grep -q 'Each fused kernel.s speed relative to cudnn_sdpa — forward + backward' %s",
                     page, page, page) == 0,
                  "the page does not show each pass's figures, named");
}
END_TEST

/* ------------------------------------------------------- looks, limits */

/* A run written for a test: DIR/NAME, every variant at S = 512, 1024, 2048
 * (batch·S = 16384, H = 16) for each head_dim of dims, non-causal and
 * causal, cold; ok rows, except a variant named skip_* (all skipped) and
 * naive made slow enough to leave the headline. */
static void write_run(const char *name, const char *const *variants, int nv, const int *dims, int nd)
{
    char path[192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("run_id,gpu,variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,reason,samples,"
          "ms_median,noise_rel,tflops,extra_mem_mib\n", f);
    for (int v = 0; v < nv; v++)
        for (int d = 0; d < nd; d++)
            for (int c = 0; c <= 1; c++)
                for (int seq = 512; seq <= 2048; seq *= 2) {
                    const bool skip = !strncmp(variants[v], "skip_", 5);
                    const double ms = (1 + 0.05 * v) * (seq / 512.0) * (c ? 0.6 : 1) * (strcmp(variants[v], "naive") ? 1 : 4);
                    fprintf(f, "T,h200,%s,bf16,%d,16,%d,%d,%d,cold,%s,%s,%s,", variants[v], 16384 / seq, seq, dims[d], c,
                            skip ? "skipped" : "ok", skip ? "made up" : "", skip ? "" : "10");
                    if (skip) fputs(",,,\n", f);
                    else fprintf(f, "%.6g,0.002,%.6g,0\n", ms, 100 / ms);
                }
    ck_assert_int_eq(fclose(f), 0);
}

/* Item i (0-based) of "array NAME[N] = [a, b, ...]" in DIR/data/meta.gp
 * (or PAGE/meta.gp under it), into buf; false when there is none. */
static bool meta_item(const char *page, const char *name, int i, char *buf, size_t len)
{
    char path[256], want[96];
    snprintf(path, sizeof path, "%s/data/%s%smeta.gp", dir, page, page[0] ? "/" : "");
    char *text = slurp(path);
    snprintf(want, sizeof want, "\narray %s[", name);
    char *at = strstr(text, want);
    bool found = false;
    if (at && (at = strstr(at, "= ["))) {
        at += 3;
        for (int k = 0; k < i && at; k++) at = strstr(at, ", ") ? strstr(at, ", ") + 2 : NULL;
        if (at) {
            size_t n = strcspn(at, ",]\n");
            snprintf(buf, len, "%.*s", (int)n, at);
            found = true;
        }
    }
    free(text);
    return found;
}

/* Variant name's index in meta.gp's variant_name[] (0-based), -1 if absent. */
static int meta_variant(const char *name)
{
    char item[96], want[96];
    snprintf(want, sizeof want, "'%s'", name);
    for (int i = 0; meta_item("", "variant_name", i, item, sizeof item); i++)
        if (!strcmp(item, want)) return i;
    return -1;
}

/* "RGB PT" of a variant in meta.gp: its look. */
static void look_of(const char *variant, char *buf, size_t len)
{
    char rgb[32] = "?", pt[16] = "?";
    const int i = meta_variant(variant);
    ck_assert_msg(i >= 0, "meta.gp lacks the variant %s", variant);
    ck_assert_msg(meta_item("", "variant_rgb", i, rgb, sizeof rgb) && meta_item("", "variant_pt", i, pt, sizeof pt),
                  "meta.gp gives %s no colour and marker", variant);
    snprintf(buf, len, "%s %s", rgb, pt);
}

/* A variant has one colour and marker in every run, whatever the run's
 * order of variants: cudnn_sdpa and flash_hopper in fused.csv (3rd and 5th
 * of 5 variants), in the peers' run (of 12) and in the hopper-shapes set's
 * run (flash_hopper first of 2). */
START_TEST(test_looks_are_the_variants_own)
{
    static const char *const runs[] = {"tests/fixtures/fused.csv", "tests/fixtures/peers.csv",
                                       "results/h200/hopper-shapes/20261202T000042Z.csv"};
    static const char *const named[] = {"cudnn_sdpa", "flash_hopper"};
    char first[2][64];
    for (size_t r = 0; r < 3; r++) {
        report_data(&(struct fixture){runs[r], NULL, false, false, false, false, false, false});
        for (int v = 0; v < 2; v++) {
            char look[64];
            look_of(named[v], look, sizeof look);
            if (!r) snprintf(first[v], sizeof first[v], "%s", look);
            else ck_assert_msg(!strcmp(look, first[v]), "%s looks '%s' in %s, '%s' in %s", named[v], look, runs[r],
                               first[v], runs[0]);
        }
        ck_assert_int_eq(sh("rm -rf %s/data", dir), 0);
    }
    ck_assert_str_eq(first[0], "'#009e73' 9");
    ck_assert_str_eq(first[1], "'#d55e00' 13");
}
END_TEST

/* A variant the table does not list gets a look from its name's hash: the
 * same in two runs with other company, none of a listed variant's colours,
 * and two such variants of one run never alike. */
START_TEST(test_unlisted_variant_keeps_one_look)
{
    static const int dims[] = {64};
    static const char *const a[] = {"zeta_kernel", "naive"};
    static const char *const b[] = {"naive", "cudnn_sdpa", "omega_kernel", "zeta_kernel", "torch_new_peer"};
    char csv[192], look_a[64], look_b[64], other[64], peer[64];
    write_run("a.csv", a, 2, dims, 1);
    write_run("b.csv", b, 5, dims, 1);
    snprintf(csv, sizeof csv, "%s/a.csv", dir);
    report_data(&(struct fixture){csv, NULL, false, false, false, false, false, false});
    look_of("zeta_kernel", look_a, sizeof look_a);
    ck_assert_int_eq(sh("rm -rf %s/data", dir), 0);
    snprintf(csv, sizeof csv, "%s/b.csv", dir);
    report_data(&(struct fixture){csv, NULL, false, false, false, false, false, false});
    look_of("zeta_kernel", look_b, sizeof look_b);
    look_of("omega_kernel", other, sizeof other);
    look_of("torch_new_peer", peer, sizeof peer);
    ck_assert_msg(!strcmp(look_a, look_b), "zeta_kernel looks '%s' in one run, '%s' in another", look_a, look_b);
    ck_assert_msg(strcmp(look_b, other) && strcmp(look_b, peer) && strcmp(other, peer),
                  "two unlisted variants look alike: %s / %s / %s", look_b, other, peer);
    /* an unlisted peer is a peer: dashed */
    char dashed[8];
    ck_assert(meta_item("", "variant_peer", meta_variant("torch_new_peer"), dashed, sizeof dashed));
    ck_assert_str_eq(dashed, "1");
    /* none of the listed colours (the twelve of the peers' run) */
    ck_assert_int_eq(sh("rm -rf %s/data", dir), 0);
    report_data(&(struct fixture){"tests/fixtures/peers.csv", NULL, false, false, false, false, false, false});
    for (int i = 0; i < 12; i++) {
        char rgb[32];
        ck_assert(meta_item("", "variant_rgb", i, rgb, sizeof rgb));
        ck_assert_msg(strncmp(look_a, rgb, strlen(rgb)), "zeta_kernel takes the listed colour %s", rgb);
        ck_assert_msg(strncmp(other, rgb, strlen(rgb)), "omega_kernel takes the listed colour %s", rgb);
    }
}
END_TEST

/* 17 variants and 40 panels: every variant and panel is drawn, the panels
 * over two figures of REPORT_PAGE_PANELS (24) and 16, the page showing
 * both; a variant with no ok row is left out of every legend. */
START_TEST(test_every_variant_and_panel_drawn)
{
    const char *variants[17] = {"naive", "cudnn_sdpa", "flash_hopper", "skip_me"};
    char names[17][16];
    for (int v = 4; v < 17; v++) {
        snprintf(names[v], sizeof names[v], "kernel_%02d", v);
        variants[v] = names[v];
    }
    int dims[20];
    for (int d = 0; d < 20; d++) dims[d] = 8 * (d + 1);
    write_run("wide.csv", variants, 17, dims, 20);
    char csv[192];
    snprintf(csv, sizeof csv, "%s/wide.csv", dir);
    report_data(&(struct fixture){csv, NULL, true, true, false, false, false, false});
    ck_assert_msg(data_has("meta.gp", "^nvariants = 17$"), "not every variant is in meta.gp");
    ck_assert_msg(data_has("meta.gp", "^npanels = 24$") && data_has("page-2/meta.gp", "^npanels = 16$") &&
                      data_has("meta.gp", "^figure_pages = 2$"),
                  "the 40 panels are not split 24 + 16 over two figures");
    ck_assert_int_eq(sh("test $(ls %s/data/panel_*.dat | wc -l) -eq 40", dir), 0);
    /* the 17th variant's block is in the files, and it has a look */
    ck_assert_msg(data_has("panel_D160_causal.dat", "^# kernel_16$"), "the 17th variant's block is missing");
    char item[32];
    ck_assert_msg(meta_item("page-2", "variant_rgb", 16, item, sizeof item), "the 17th variant has no colour");
    /* legends: skip_me has no point anywhere; kernel_16 has */
    ck_assert_msg(meta_item("", "legend_ms", 3, item, sizeof item) && !strcmp(item, "0"), "skip_me is in the legend");
    ck_assert_msg(meta_item("page-2", "legend_ms", 16, item, sizeof item) && !strcmp(item, "1"),
                  "kernel_16 is left out of the legend");
    /* both figures render, and the page shows both */
    char out[192];
    snprintf(out, sizeof out, "%s/latency.png", dir);
    ck_assert_int_eq(sh("gnuplot -c plots/latency.gp %s/data %s png 2>/dev/null", dir, out), 0);
    assert_png(out);
    snprintf(out, sizeof out, "%s/latency-2.png", dir);
    ck_assert_int_eq(sh("gnuplot -c plots/latency.gp %s/data/page-2 %s png 2>/dev/null", dir, out), 0);
    assert_png(out);
    ck_assert_int_eq(sh("%s html %s %s >/dev/null", tool_path("report"), csv, dir), 0);
    ck_assert_msg(sh("grep -q 'src=\"latency-2.png\"' %s/report.html && grep -q '(figure 2 of 2)' %s/report.html", dir,
                     dir) == 0,
                  "the page does not show the second latency figure");
    ck_assert_msg(sh("grep -q '>kernel_16<' %s/report.html", dir) == 0, "the page's tables lack the 17th variant");
}
END_TEST

/* The headline's value labels, as meta.gp and the panel files place them,
 * in a panel's plot fractions: no label box meets another label, a drawn
 * series' line, point or error bar, or the parity line, nor leaves the
 * plot, and no other series passes between a label and its point — in the
 * crowded committed runs (12 variants, 5 drawn), in fused.csv and in the
 * compare run's fixture (bars). */
static int labels_checked, bars_checked;

static double frac_x(double seq, double lo, double span) { return (log2(seq) - lo) / span; }

static void check_labels_of(const char *panel_file, int nv, const bool *shown, double ymin, double ymax,
                            double lo, double span, double w, double h)
{
    /* per variant: up to 16 points (x, y, label y, the bar's ends) */
    enum { MAXP = 16 };
    double x[64][MAXP], y[64][MAXP], ly[64][MAXP], blo[64][MAXP], bhi[64][MAXP];
    int n[64] = {0}, v = -1;
    FILE *f = fopen(panel_file, "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') v++;
        if (line[0] == '#' || line[0] == '\n') continue;
        double c[12];
        char *p = line;
        for (int k = 0; k < 12; k++) c[k] = strtod(p, &p);
        ck_assert(v >= 0 && v < 64 && n[v] < MAXP);
        x[v][n[v]] = frac_x(c[0], lo, span);
        y[v][n[v]] = (c[5] - ymin) / (ymax - ymin);
        ly[v][n[v]] = (c[8] - ymin) / (ymax - ymin);
        blo[v][n[v]] = (c[9] - ymin) / (ymax - ymin);
        bhi[v][n[v]] = (c[10] - ymin) / (ymax - ymin);
        n[v]++;
    }
    fclose(f);
    ck_assert_int_eq(v + 1, nv);
    const double one = (1 - ymin) / (ymax - ymin);
    for (int a = 0; a < nv; a++)
        for (int i = 0; i < n[a]; i++) {
            if (!isfinite(ly[a][i])) continue;
            labels_checked++;
            const double x0 = x[a][i] - w / 2, x1 = x[a][i] + w / 2, y0 = ly[a][i] - h / 2, y1 = ly[a][i] + h / 2;
            ck_assert_msg(x0 >= 0 && x1 <= 1 && y0 >= 0 && y1 <= 1, "%s: a label leaves the plot", panel_file);
            ck_assert_msg(one < y0 || one > y1, "%s: a label sits on the parity line", panel_file);
            for (int b = 0; b < nv; b++)
                for (int j = 0; j < n[b]; j++) {
                    if (b != a || j != i) /* another label */
                        ck_assert_msg(!(isfinite(ly[b][j]) && fabs(x[b][j] - x[a][i]) < w && fabs(ly[b][j] - ly[a][i]) < h),
                                      "%s: two labels meet", panel_file);
                    if (!shown[b] || !isfinite(y[b][j])) continue;
                    /* another series' point between this point and its label: the value would
                     * read as that series' */
                    if (b != a && j == i && fabs(x[b][j] - x[a][i]) < 1e-9) {
                        const double near = ly[a][i] > y[a][i] ? y0 : y1;
                        ck_assert_msg(!((y[b][j] - y[a][i]) * (near - y[a][i]) > 0 &&
                                        fabs(y[b][j] - y[a][i]) < fabs(near - y[a][i])),
                                      "%s: a label lies across another series from its point", panel_file);
                    }
                    /* a point, or the segment to the next one, inside the box */
                    ck_assert_msg(!(x[b][j] > x0 && x[b][j] < x1 && y[b][j] > y0 && y[b][j] < y1),
                                  "%s: a label covers a point", panel_file);
                    /* an error bar through the box */
                    if (isfinite(blo[b][j]) && isfinite(bhi[b][j])) {
                        bars_checked++;
                        ck_assert_msg(!(x[b][j] > x0 && x[b][j] < x1 && blo[b][j] < y1 && bhi[b][j] > y0),
                                      "%s: a label sits on an error bar", panel_file);
                    }
                    if (j + 1 >= n[b] || !isfinite(y[b][j + 1])) continue;
                    for (int k = 0; k <= 20; k++) {
                        const double t = k / 20.0, px = x[b][j] + t * (x[b][j + 1] - x[b][j]),
                                     py = y[b][j] + t * (y[b][j + 1] - y[b][j]);
                        ck_assert_msg(!(px > x0 && px < x1 && py > y0 && py < y1), "%s: a label sits on a line",
                                      panel_file);
                    }
                }
        }
}

static double meta_number(const char *name)
{
    char path[192], want[64];
    snprintf(path, sizeof path, "%s/data/meta.gp", dir);
    snprintf(want, sizeof want, "\n%s = ", name);
    char *text = slurp(path), *at = strstr(text, want);
    double v = at ? atof(at + strlen(want)) : NAN;
    free(text);
    ck_assert_msg(isfinite(v), "meta.gp lacks %s", name);
    return v;
}

/* The PNG's height (IHDR, big-endian at byte 16 + 4). */
static long png_height(const char *path)
{
    unsigned char h[24] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    const size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    return n == sizeof h ? ((long)h[20] << 24) | ((long)h[21] << 16) | ((long)h[22] << 8) | h[23] : -1;
}

/* A legend of 48 variants takes five rows of ten: its strip grows with
 * them (the panels move down, the figure grows), so that no entry runs into
 * the subtitle or a panel's title; 12 variants keep the strip of two rows. */
START_TEST(test_legend_strip_grows_with_its_rows)
{
    const char *variants[48] = {"naive", "cudnn_sdpa"};
    char names[48][16];
    for (int v = 2; v < 48; v++) {
        snprintf(names[v], sizeof names[v], "kernel_%02d", v);
        variants[v] = names[v];
    }
    const int dims[1] = {64};
    for (int many = 0; many <= 1; many++) {
        write_run("legend.csv", variants, many ? 48 : 12, dims, 1);
        char csv[192], out[192];
        snprintf(csv, sizeof csv, "%s/legend.csv", dir);
        snprintf(out, sizeof out, "%s/latency.png", dir);
        ck_assert_int_eq(sh("rm -rf %s/data", dir), 0);
        report_data(&(struct fixture){csv, NULL, true, true, false, false, false, false});
        ck_assert_int_eq(sh("gnuplot -c plots/latency.gp %s/data %s png 2>/dev/null", dir, out), 0);
        /* one row of two panels, 430 px, under a strip of 112 px for two legend rows, 17 px a row more */
        ck_assert_int_eq(png_height(out), 112 + 430 + (many ? 3 * 17 : 0));
    }
}
END_TEST

/* A headline value a little under 1 is written with the digits that keep
 * it under 1 (flash_hopper's 0.9954 at D = 64, S = 8192 in the committed
 * run is "0.995", below the parity line, not "1.00"). */
START_TEST(test_headline_label_keeps_its_side)
{
    report_data(&(struct fixture){"results/h200/20261201T034152Z.csv", NULL, false, false, false, false, false, false});
    const double v = panel_value("panel_D64_full.dat", "flash_hopper", 8192, 6);
    ck_assert_msg(v >= 0.995 && v < 1, "the committed run's value moved (%g)", v);
    ck_assert_msg(isfinite(panel_value("panel_D64_full.dat", "flash_hopper", 8192, 9)), "the value has no label");
    ck_assert_int_eq(sh("gnuplot -c plots/headline.gp %s/data %s/h.svg svg 2>/dev/null", dir, dir), 0);
    ck_assert_msg(sh("grep -q '>%.3f<' %s/h.svg", v, dir) == 0, "the label of %g is not written %.3f", v, v);
}
END_TEST

START_TEST(test_headline_labels_clear)
{
    static const char *const runs[] = {"results/h200/20261201T034152Z.csv", "results/h200/20261202T191456Z.csv",
                                       "tests/fixtures/fused.csv", COMPARE_RUN ".csv"};
    labels_checked = bars_checked = 0;
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        ck_assert_int_eq(sh("rm -rf %s/data", dir), 0);
        report_data(&(struct fixture){runs[r], NULL, false, false, false, false, false, false});
        const int nv = (int)meta_number("nvariants"), np = (int)meta_number("npanels");
        bool shown[64];
        for (int v = 0; v < nv; v++) {
            char item[8];
            ck_assert(meta_item("", "headline_show", v, item, sizeof item));
            shown[v] = !strcmp(item, "1");
        }
        const double pad = meta_number("seq_pad"), lo = log2(meta_number("seq_min")) - pad,
                     span = log2(meta_number("seq_max")) + pad - lo;
        for (int p = 0; p < np; p++) {
            char file[256];
            ck_assert(meta_item("", "panel_file", p, file, sizeof file));
            file[strlen(file) - 1] = '\0'; /* the quotes */
            check_labels_of(file + 1, nv, shown, meta_number("headline_ymin"), meta_number("headline_ymax"), lo, span,
                            meta_number("label_w"), meta_number("label_h"));
        }
    }
    ck_assert_msg(labels_checked > 40, "only %d labels placed", labels_checked);
    ck_assert_msg(bars_checked > 0, "no error bar checked");
}
END_TEST

/* tests/fixtures/decode.csv: an H200 run of the decode grid (naive and
 * inplace; q_len 1 and 4 against 1024 to 131072 cached keys; four model
 * shapes; two batch-1 caches), made without --peak. The bandwidth figure
 * has a panel per decode family, titled with its shape and q_len (the
 * batch-1 points a panel of their own), its values the GB/s attnbench
 * wrote (the bytes K and V at kv_len, Q and O at q_len, over the median);
 * without a read ceiling its subtitle says it was not measured and no peak
 * line is drawn. The throughput figure draws the same panels. */
START_TEST(test_decode_run_draws_bandwidth)
{
    render_all(&(struct fixture){"tests/fixtures/decode.csv", NULL, false, true, true, false, false, true});
    ck_assert_msg(data_has("meta.gp", "^have_decode = 1$") && data_has("meta.gp", "^nbw_panels = 6$") &&
                      data_has("meta.gp", "^npanels = 6$"),
                  "meta.gp does not give the bandwidth figure the run's 6 decode panels");
    ck_assert_msg(data_has("meta.gp", "^array bw_panel_title\\[6\\] = \\['H=32 KV=8 Q=1, D=64, causal', "
                                      "'H=16 KV=1 (MQA) Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal', "
                                      "'H=64 KV=8 Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal, batch 1', "
                                      "'H=32 KV=8 Q=4, D=128, causal'\\]$"),
                  "the bandwidth panels' titles do not name their shapes and q_len, in order");
    ck_assert_msg(data_has("meta.gp", "^peak_read_gbps = NaN$"), "a read peak appeared in a run without --peak");
    /* GB/s (column 12) as the fixture's gbps column has them, to its 5 digits */
    ck_assert_double_eq_tol(panel_value("panel_H32_KV8_D128_causal_q1.dat", "naive", 1024, 12), 3667.2, 0.06);
    ck_assert_double_eq_tol(panel_value("panel_H32_KV8_D128_causal_q4.dat", "inplace", 131072, 12), 2200.4, 0.06);
    ck_assert_double_eq_tol(panel_value("panel_H16_KV1_D128_causal_q1.dat", "naive", 32768, 12), 1957.7, 0.06);
    /* the batch-1 points are off the family (their tokens differ): a panel of their own */
    ck_assert_msg(!data_has("panel_H32_KV8_D128_causal_q1.dat", "^32768 0.0897"), "a batch-1 point was drawn among B·S = 2^19");
    ck_assert_msg(data_has("panel_H32_KV8_D128_causal_q1_b1.dat", "^32768 0.0897") &&
                      data_has("panel_H32_KV8_D128_causal_q1_b1.dat", "^131072 0.315888") &&
                      !data_has("panel_H32_KV8_D128_causal_q1_b1.dat", "^16384 "),
                  "the batch-1 panel does not hold the batch-1 points alone");
    char svg[192];
    snprintf(svg, sizeof svg, "%s/bandwidth.svg", dir);
    ck_assert_msg(sh("grep -q 'Decode bandwidth — NVIDIA H200' %s && grep -q '>bandwidth (GB/s)<' %s && "
                     "grep -q '>H=32 KV=8 Q=4, D=128, causal<' %s && grep -q '>H=16 KV=1 (MQA) Q=1, D=128, causal<' %s",
                     svg, svg, svg, svg) == 0,
                  "bandwidth.svg lacks its title, its GB/s axis or the panels' q_len");
    ck_assert_msg(sh("grep -q 'read peak not measured (run with --peak)' %s", svg) == 0 &&
                      sh("grep -q 'read peak [0-9]* GB/s (measured)' %s", svg) != 0 &&
                      svg_paths_in("bandwidth.svg", 68, 68, 68, false, 0) &&
                      svg_paths_in("bandwidth.svg", 68, 68, 68, true, 0),
                  "bandwidth.svg of a run without --peak does not say the peak was not measured, or draws one");
    snprintf(svg, sizeof svg, "%s/throughput.svg", dir);
    ck_assert_msg(sh("grep -q '>H=32 KV=8 Q=4, D=128, causal<' %s", svg) == 0,
                  "the throughput figure does not draw the decode panels");
}
END_TEST

/* The decode run with a read ceiling: its .env with a peak_read_gbps line,
 * written here (a test value, not a measurement): the line at the peak,
 * labelled, and a dashed one at 90 % of it; the subtitle names the ceiling. */
START_TEST(test_decode_peak_line_drawn)
{
    char run[160];
    snprintf(run, sizeof run, "%s/decode.csv", dir);
    ck_assert_int_eq(sh("cp tests/fixtures/decode.csv %s && (cat tests/fixtures/decode.env; echo peak_read_gbps=4000.0) "
                        "> %s/decode.env", run, dir), 0);
    const struct fixture fx = {run, NULL, false, true, true, false, false, true};
    report_data(&fx);
    ck_assert_msg(data_has("meta.gp", "^peak_read_gbps = 4000$"), "the .env's read peak is not in meta.gp");
    render(&fx, "bandwidth", false);
    render(&fx, "bandwidth", true);
    char svg[192];
    snprintf(svg, sizeof svg, "%s/bandwidth.svg", dir);
    ck_assert_msg(sh("grep -q '>read peak 4000 GB/s (measured)<' %s && grep -q '>90 %% of the read peak<' %s", svg,
                     svg) == 0,
                  "bandwidth.svg does not label the read peak and its 90 %% line");
    /* in #444444, in each of the 6 panels and the legend: the peak solid, 90 % of it dashed */
    ck_assert_msg(svg_paths_in("bandwidth.svg", 68, 68, 68, false, 7) && svg_paths_in("bandwidth.svg", 68, 68, 68, true, 7),
                  "bandwidth.svg does not draw the peak's line and the 90 %% line dashed in every panel");
    ck_assert_msg(sh("grep -q 'not measured' %s", svg) != 0 &&
                      sh("grep -q 'read peak: the read-only stream measured at the start of the run (--peak)' %s", svg) == 0,
                  "bandwidth.svg's subtitle does not name the measured read peak");
}
END_TEST

/* A run without decode rows (fused.csv, the default grid's prefill): no
 * bandwidth figure, said in one line, and no decode section on its page. */
START_TEST(test_prefill_run_has_no_bandwidth)
{
    char data[128], out[192], err[160];
    snprintf(data, sizeof data, "%s/data", dir);
    snprintf(out, sizeof out, "%s/bandwidth.png", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    ck_assert_int_eq(sh("%s data tests/fixtures/fused.csv %s >/dev/null", tool_path("report"), data), 0);
    ck_assert_msg(data_has("meta.gp", "^have_decode = 0$") && data_has("meta.gp", "^nbw_panels = 0$"),
                  "meta.gp of a prefill run claims decode panels");
    ck_assert_int_eq(sh("gnuplot -c plots/bandwidth.gp %s %s png 2>%s", data, out, err), 0);
    ck_assert_msg(file_size(out) < 0, "a bandwidth figure was drawn without decode rows");
    ck_assert_msg(sh("grep -q '^bandwidth.gp: no decode rows in this run: nothing to draw$' %s", err) == 0,
                  "bandwidth.gp did not say why it drew nothing");
    write_page("tests/fixtures/fused.csv");
    ck_assert_msg(sh("grep -q 'id=\"decode\\|href=\"#decode\"\\|bandwidth.png' %s/report.html", dir) != 0,
                  "the page of a prefill run has a decode section, link or figure");
    /* the decode run's page has all three */
    ck_assert_int_eq(sh("%s data tests/fixtures/decode.csv %s >/dev/null && gnuplot -c plots/bandwidth.gp %s %s png",
                        tool_path("report"), data, data, out), 0);
    write_page("tests/fixtures/decode.csv");
    ck_assert_msg(sh("grep -q '<div class=\"section\" id=\"decode\">' %s/report.html && "
                     "grep -q '<a href=\"#decode\">Decode</a>' %s/report.html && "
                     "grep -q '<img src=\"bandwidth.png\"' %s/report.html", dir, dir, dir) == 0,
                  "the decode run's page lacks its decode section, its link or the bandwidth figure");
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
    tcase_add_test(t, test_ab_pair_ratio_drawn);
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
    tcase_add_test(t, test_looks_are_the_variants_own);
    tcase_add_test(t, test_unlisted_variant_keeps_one_look);
    tcase_add_test(t, test_every_variant_and_panel_drawn);
    tcase_add_test(t, test_headline_labels_clear);
    tcase_add_test(t, test_headline_label_keeps_its_side);
    tcase_add_test(t, test_legend_strip_grows_with_its_rows);
    tcase_add_test(t, test_compare_run_headline_interleaved);
    tcase_add_test(t, test_plain_run_keeps_median_ratio);
    tcase_add_test(t, test_regimes_are_separate_series);
    tcase_add_test(t, test_inits_are_separate_series);
    tcase_add_test(t, test_passes_are_separate_figures);
    tcase_add_test(t, test_passes_render_titled);
    tcase_add_test(t, test_passes_ratio_per_pass);
    tcase_add_test(t, test_passes_page);
    tcase_add_test(t, test_decode_run_draws_bandwidth);
    tcase_add_test(t, test_decode_peak_line_drawn);
    tcase_add_test(t, test_prefill_run_has_no_bandwidth);
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

/* report.c — turns a results CSV into what the gnuplot scripts in plots/
 * draw, and into the HTML report page. Data and plotting stay apart: this
 * tool only writes tidy data files, gnuplot only draws them.
 *
 *   report data RESULTS OUTDIR [--mode M] [--baseline B [--thresholds T]]
 *       OUTDIR/panel_D{d}_{full,causal}.dat: one block per variant (first line
 *       its name, then "seq_len ms tflops extra_mib speedup_naive
 *       speedup_cudnn"; NaN where the row is not ok: gaps stay gaps), for the
 *       mode M (default: cold, else the first mode present) and, in each
 *       panel, the largest family of points with one batch·seq_len (the
 *       FlashAttention grid keeps batch·seq_len = 16384); OUTDIR/ratio.dat
 *       with a baseline: one line per compared row, "index ratio limit label";
 *       OUTDIR/meta.gp: what the scripts need to know (panels, peak, run).
 *   report html RESULTS OUTDIR [--env ENVFILE] [--baseline B]
 *       OUTDIR/report.html: the figures found in OUTDIR, the run's environment
 *       and the summary table (best variant per point).
 * Exit 0, or 2 with "report: file:line: why" on bad input. */
#include "gate.h"
#include "../common/errors.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_VARIANTS 16
#define MAX_SEQ 64

struct args {
    const char *cmd, *results, *outdir, *mode, *baseline, *thresholds, *env;
};

/* --------------------------------------------------------------- helpers */

static int find_variants(const struct result_set *s, const char *names[MAX_VARIANTS])
{
    int n = 0;
    for (size_t i = 0; i < s->count; i++) {
        bool seen = false;
        for (int v = 0; v < n; v++) seen |= !strcmp(names[v], s->rows[i].key.variant);
        if (!seen && n < MAX_VARIANTS) names[n++] = s->rows[i].key.variant;
    }
    return n;
}

/* The row of `variant` at the same point and mode as k, or NULL. */
static const struct result_rec *twin(const struct result_set *s, const struct result_key *k,
                                     const char *variant)
{
    struct result_key t = *k;
    snprintf(t.variant, sizeof t.variant, "%s", variant);
    for (size_t i = 0; i < s->count; i++)
        if (result_key_equal(&s->rows[i].key, &t)) return &s->rows[i];
    return NULL;
}

static bool is_ok(const struct result_rec *r)
{
    return r && !strcmp(r->status, "ok") && isfinite(r->ms_median) && r->ms_median > 0;
}

static const char *pick_mode(const struct result_set *s, const char *want)
{
    if (want) return want;
    for (size_t i = 0; i < s->count; i++)
        if (!strcmp(s->rows[i].key.mode, "cold")) return "cold";
    return s->rows[0].key.mode;
}

/* The batch·seq_len most rows of a panel share. */
static long main_family(const struct result_set *s, const char *mode, int dim, int causal)
{
    long best = -1;
    size_t best_n = 0;
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        if (strcmp(k->mode, mode) || k->head_dim != dim || k->causal != causal) continue;
        long tokens = (long)k->batch * k->seq_len;
        size_t n = 0;
        for (size_t j = 0; j < s->count; j++) {
            const struct result_key *o = &s->rows[j].key;
            n += !strcmp(o->mode, mode) && o->head_dim == dim && o->causal == causal &&
                 (long)o->batch * o->seq_len == tokens;
        }
        if (n > best_n) {
            best_n = n;
            best = tokens;
        }
    }
    return best;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static double nan_if_bad(double v) { return isfinite(v) ? v : NAN; }

/* A number for gnuplot: "NaN" (a gap in a line) when not finite. */
static void put_num(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, " %.6g", v);
    else fputs(" NaN", f);
}

/* ------------------------------------------------------------------ data */

/* One panel's file: a block per variant over the family's seq_lens. */
static int write_panel(const struct result_set *s, const char *mode, int dim, int causal,
                       const char *path, const char *const *variants, int nv)
{
    long tokens = main_family(s, mode, dim, causal);
    int seqs[MAX_SEQ], ns = 0;
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        if (strcmp(k->mode, mode) || k->head_dim != dim || k->causal != causal ||
            (long)k->batch * k->seq_len != tokens)
            continue;
        bool seen = false;
        for (int j = 0; j < ns; j++) seen |= seqs[j] == k->seq_len;
        if (!seen && ns < MAX_SEQ) seqs[ns++] = k->seq_len;
    }
    qsort(seqs, (size_t)ns, sizeof *seqs, cmp_int);
    FILE *f = fopen(path, "w");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create: %s", path, strerror(errno));
    for (int v = 0; v < nv; v++) {
        fprintf(f, "%s%s\n", v ? "\n\n" : "", variants[v]);
        for (int j = 0; j < ns; j++) {
            struct result_key k = {.batch = (int)(tokens / seqs[j]), .seq_len = seqs[j],
                                   .head_dim = dim, .causal = causal};
            const struct result_rec *r = NULL;
            for (size_t i = 0; i < s->count && !r; i++) {
                const struct result_key *o = &s->rows[i].key;
                if (strcmp(o->mode, mode) || o->head_dim != dim || o->causal != causal ||
                    o->seq_len != seqs[j] || o->batch != k.batch)
                    continue;
                if (!strcmp(o->variant, variants[v])) r = &s->rows[i];
            }
            double ms = NAN, tf = NAN, mem = NAN, sp_naive = NAN, sp_cudnn = NAN;
            if (is_ok(r)) {
                ms = r->ms_median;
                tf = nan_if_bad(r->tflops);
                mem = nan_if_bad(r->extra_mem_mib);
                const struct result_rec *n = twin(s, &r->key, "naive");
                const struct result_rec *c = twin(s, &r->key, "cudnn_sdpa");
                if (is_ok(n)) sp_naive = n->ms_median / ms;
                if (is_ok(c)) sp_cudnn = c->ms_median / ms;
            }
            fprintf(f, "%d", seqs[j]);
            const double cols[] = {ms, tf, mem, sp_naive, sp_cudnn};
            for (int c = 0; c < 5; c++) put_num(f, cols[c]);
            fputc('\n', f);
        }
    }
    if (fclose(f) != 0) return ATTN_FAIL(ATTN_ERR, "%s: write failed", path);
    return ATTN_OK;
}

static int write_ratio(const struct result_set *s, const char *bpath, const char *tpath,
                       const char *outdir)
{
    struct result_set base;
    struct gate_thresholds t;
    if (tpath) ATTN_TRY(gate_thresholds_read(tpath, &t));
    else gate_thresholds_default(&t);
    ATTN_TRY(results_read(bpath, &base));
    struct gate_options o = {.allow_missing = true, .allow_gpu_mismatch = true};
    struct gate_report rep;
    int rc = gate_compare(&base, s, &t, &o, &rep);
    char path[1100];
    snprintf(path, sizeof path, "%s/ratio.dat", outdir);
    FILE *f = rc == ATTN_OK ? fopen(path, "w") : NULL;
    if (rc == ATTN_OK && !f) rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create", path);
    int n = 0;
    for (size_t i = 0; f && i < rep.count; i++) {
        const struct gate_line *l = &rep.lines[i];
        if (isnan(l->ratio)) continue;
        const struct result_key *k = &l->key;
        fprintf(f, "%d %.6g %.6g \"%s S=%d D=%d %s %s\"\n", n++, l->ratio, 1 + l->limit,
                k->variant, k->seq_len, k->head_dim, k->causal ? "c" : "f", k->mode);
    }
    if (f && fclose(f) != 0) rc = ATTN_FAIL(ATTN_ERR, "%s: write failed", path);
    gate_report_free(&rep);
    results_free(&base);
    if (rc == ATTN_OK && n == 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no row in common with %s", bpath, s->path);
    return rc;
}

/* The peak recorded in the run's .env (beside the CSV), NaN when absent. */
static double env_value(const char *env, const char *key)
{
    FILE *f = env ? fopen(env, "r") : NULL;
    if (!f) return NAN;
    char line[1024];
    double v = NAN;
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, klen) && line[klen] == '=') v = atof(line + klen + 1);
    fclose(f);
    return v;
}

/* RESULTS.csv → RESULTS.env */
static void env_beside(const char *csv, char *out, size_t len)
{
    snprintf(out, len, "%s", csv);
    size_t n = strlen(out);
    if (n > 4 && !strcmp(out + n - 4, ".csv")) strcpy(out + n - 4, ".env");
}

static int cmd_data(const struct args *a, const struct result_set *s)
{
    if (mkdir(a->outdir, 0755) != 0 && errno != EEXIST)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create: %s", a->outdir, strerror(errno));
    const char *mode = pick_mode(s, a->mode);
    const char *variants[MAX_VARIANTS];
    int nv = find_variants(s, variants);
    char path[1100], files[4096] = "", titles[2048] = "";
    int panels = 0;
    bool have_cudnn = false;
    for (int v = 0; v < nv; v++) have_cudnn |= !strcmp(variants[v], "cudnn_sdpa");
    const int dims[] = {64, 128, 256, 32, 96};
    for (int d = 0; d < 5; d++)
        for (int c = 0; c <= 1; c++) {
            if (main_family(s, mode, dims[d], c) < 0) continue;
            snprintf(path, sizeof path, "%s/panel_D%d_%s.dat", a->outdir, dims[d], c ? "causal" : "full");
            ATTN_TRY(write_panel(s, mode, dims[d], c, path, variants, nv));
            char t[64];
            snprintf(t, sizeof t, "head_dim %d, %s", dims[d], c ? "causal" : "non-causal");
            snprintf(files + strlen(files), sizeof files - strlen(files), "%s\"%s\"", panels ? ", " : "", path);
            snprintf(titles + strlen(titles), sizeof titles - strlen(titles), "%s\"%s\"", panels ? ", " : "", t);
            panels++;
        }
    if (!panels) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no %s-mode rows to plot", s->path, mode);
    bool ratio = a->baseline != NULL;
    if (ratio) ATTN_TRY(write_ratio(s, a->baseline, a->thresholds, a->outdir));

    char env[1100];
    env_beside(a->results, env, sizeof env);
    double peak = env_value(env, "peak_gemm_bf16_tflops");
    snprintf(path, sizeof path, "%s/meta.gp", a->outdir);
    FILE *f = fopen(path, "w");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create", path);
    fprintf(f, "# written by build/report from %s\n", a->results);
    fprintf(f, "run = \"%s\"\ngpu = \"%s\"\nmode = \"%s\"\n", s->path, s->rows[0].gpu, mode);
    fprintf(f, "npanels = %d\narray panel_file[%d] = [%s]\narray panel_title[%d] = [%s]\n", panels,
            panels, files, panels, titles);
    fprintf(f, "nvariants = %d\nhave_cudnn = %d\nhave_ratio = %d\n", nv, have_cudnn, ratio);
    if (isnan(peak)) fprintf(f, "peak_tflops = NaN\n");
    else fprintf(f, "peak_tflops = %.1f\n", peak);
    fprintf(f, "ratio_file = \"%s/ratio.dat\"\nbaseline = \"%s\"\n", a->outdir,
            a->baseline ? a->baseline : "");
    if (fclose(f) != 0) return ATTN_FAIL(ATTN_ERR, "%s: write failed", path);
    printf("report: %d panel(s), %d variant(s), mode %s, data in %s\n", panels, nv, mode, a->outdir);
    return ATTN_OK;
}

/* ------------------------------------------------------------------ html */

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

static bool exists(const char *dir, const char *name)
{
    char p[1100];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0 && st.st_size > 0;
}

static void html_summary(FILE *f, const struct result_set *s, const char *const *variants, int nv)
{
    fputs("<table>\n<tr><th>mode</th><th>point</th>", f);
    for (int v = 0; v < nv; v++) {
        fputs("<th>", f);
        html_text(f, variants[v]);
        fputs(" ms</th>", f);
    }
    fputs("<th>best</th><th>TFLOP/s</th><th>speedup over naive</th></tr>\n", f);
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        bool first = true; /* one table row per point: its first variant's row */
        for (size_t j = 0; j < i && first; j++) {
            struct result_key a = s->rows[j].key, b = *k;
            snprintf(a.variant, sizeof a.variant, "-");
            snprintf(b.variant, sizeof b.variant, "-");
            first = !result_key_equal(&a, &b);
        }
        if (!first) continue;
        fprintf(f, "<tr><td>%s</td><td>B=%d H=%d S=%d D=%d %s %s</td>", k->mode, k->batch, k->heads,
                k->seq_len, k->head_dim, k->causal ? "causal" : "full", k->dtype);
        const struct result_rec *best = NULL;
        for (int v = 0; v < nv; v++) {
            const struct result_rec *r = twin(s, k, variants[v]);
            if (is_ok(r)) {
                fprintf(f, "<td>%.4g</td>", r->ms_median);
                if (!best || r->ms_median < best->ms_median) best = r;
            } else {
                fprintf(f, "<td class=\"gap\">%s</td>", r ? r->status : "—");
            }
        }
        const struct result_rec *n = twin(s, k, "naive");
        if (best) {
            fputs("<td>", f);
            html_text(f, best->key.variant);
            fprintf(f, "</td><td>%.1f</td>", best->tflops);
            if (is_ok(n)) fprintf(f, "<td>%.2f×</td>", n->ms_median / best->ms_median);
            else fputs("<td>—</td>", f);
        } else {
            fputs("<td colspan=\"3\" class=\"gap\">no ok row</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

static int cmd_html(const struct args *a, const struct result_set *s)
{
    char path[1100], env[1100];
    snprintf(path, sizeof path, "%s/report.html", a->outdir);
    if (a->env) snprintf(env, sizeof env, "%s", a->env);
    else env_beside(a->results, env, sizeof env);
    FILE *f = fopen(path, "w");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create: %s", path, strerror(errno));
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<title>attnbench report</title>\n<style>\n"
          "body{font-family:sans-serif;max-width:1400px;margin:2em auto;color:#222}\n"
          "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;"
          "text-align:right}th{background:#eee}td:nth-child(2){text-align:left}\n"
          ".gap{color:#a00}img{max-width:100%;border:1px solid #ddd;margin:1em 0}\n"
          "</style></head><body>\n<h1>attnbench report</h1>\n<p>Results <code>", f);
    html_text(f, a->results);
    fprintf(f, "</code>, %zu rows, GPU <b>", s->count);
    html_text(f, s->rows[0].gpu);
    fputs("</b>.</p>\n", f);
    static const char *const figs[][2] = {
        {"latency", "Latency vs sequence length"},
        {"throughput", "Throughput vs sequence length (dashed: measured bf16 GEMM peak)"},
        {"speedup", "Speedup over naive"},
        {"speedup_cudnn", "Speedup over cudnn_sdpa"},
        {"memory", "Extra device memory vs sequence length"},
        {"ratio", "Current / baseline per row (red: the allowed slowdown)"},
    };
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        char svg[64], png[64];
        snprintf(svg, sizeof svg, "%s.svg", figs[i][0]);
        snprintf(png, sizeof png, "%s.png", figs[i][0]);
        if (!exists(a->outdir, png) && !exists(a->outdir, svg)) continue;
        fprintf(f, "<h2>%s</h2>\n<a href=\"%s\"><img src=\"%s\" alt=\"%s\"></a>\n", figs[i][1],
                exists(a->outdir, svg) ? svg : png, png, figs[i][1]);
    }
    const char *variants[MAX_VARIANTS];
    int nv = find_variants(s, variants);
    fputs("<h2>Summary: best variant per point</h2>\n", f);
    html_summary(f, s, variants, nv);
    fputs("<h2>Environment</h2>\n<table>\n", f);
    FILE *e = fopen(env, "r");
    char line[2048];
    while (e && fgets(line, sizeof line, e)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *eq = strchr(line, '=');
        if (!eq) continue;
        *eq = '\0';
        fputs("<tr><th>", f);
        html_text(f, line);
        fputs("</th><td style=\"text-align:left\">", f);
        html_text(f, eq + 1);
        fputs("</td></tr>\n", f);
    }
    if (e) fclose(e);
    else fputs("<tr><td>no environment file found beside the CSV</td></tr>\n", f);
    fputs("</table>\n</body></html>\n", f);
    if (fclose(f) != 0) return ATTN_FAIL(ATTN_ERR, "%s: write failed", path);
    printf("report: %s\n", path);
    return ATTN_OK;
}

/* ------------------------------------------------------------------ main */

static int parse_args(int argc, char **argv, struct args *a)
{
    memset(a, 0, sizeof *a);
    if (argc < 4) return ATTN_FAIL(ATTN_ERR_INPUT, "usage: report data|html RESULTS OUTDIR [options]");
    a->cmd = argv[1];
    a->results = argv[2];
    a->outdir = argv[3];
    if (strcmp(a->cmd, "data") && strcmp(a->cmd, "html"))
        return ATTN_FAIL(ATTN_ERR_INPUT, "unknown command '%s' (data, html)", a->cmd);
    for (int i = 4; i < argc; i++) {
        const char **slot = !strcmp(argv[i], "--mode") ? &a->mode
                          : !strcmp(argv[i], "--baseline") ? &a->baseline
                          : !strcmp(argv[i], "--thresholds") ? &a->thresholds
                          : !strcmp(argv[i], "--env") ? &a->env : NULL;
        if (!slot) return ATTN_FAIL(ATTN_ERR_INPUT, "unknown option '%s'", argv[i]);
        if (i + 1 >= argc) return ATTN_FAIL(ATTN_ERR_INPUT, "option '%s' needs a value", argv[i]);
        *slot = argv[++i];
    }
    return ATTN_OK;
}

int main(int argc, char **argv)
{
    struct args a;
    struct result_set s = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc == ATTN_OK) rc = results_read(a.results, &s);
    if (rc == ATTN_OK) rc = !strcmp(a.cmd, "data") ? cmd_data(&a, &s) : cmd_html(&a, &s);
    results_free(&s);
    if (rc != ATTN_OK) {
        fprintf(stderr, "report: %s\n", attn_error_message());
        return 2;
    }
    return 0;
}

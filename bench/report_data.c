/* report_data.c — `report data`: a results CSV into the tidy files the
 * gnuplot scripts in plots/ draw (report.c's header comment has the formats). */
#include "report.h"
#include "gate.h"
#include "../common/errors.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SEQ 64

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
            if (report_row_ok(r)) {
                ms = r->ms_median;
                tf = nan_if_bad(r->tflops);
                mem = nan_if_bad(r->extra_mem_mib);
                const struct result_rec *n = report_twin(s, &r->key, "naive");
                const struct result_rec *c = report_twin(s, &r->key, "cudnn_sdpa");
                if (report_row_ok(n)) sp_naive = n->ms_median / ms;
                if (report_row_ok(c)) sp_cudnn = c->ms_median / ms;
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

int report_data(const struct report_args *a, const struct result_set *s)
{
    if (mkdir(a->outdir, 0755) != 0 && errno != EEXIST)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create: %s", a->outdir, strerror(errno));
    const char *mode = report_pick_mode(s, a->mode);
    const char *variants[MAX_VARIANTS];
    int nv = report_variants(s, variants);
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
    report_env_beside(a->results, env, sizeof env);
    double peak = report_env_value(env, "peak_gemm_bf16_tflops");
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


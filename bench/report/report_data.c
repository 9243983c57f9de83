/* report_data.c — `report data`: a results CSV into the tidy files the
 * gnuplot scripts in plots/ draw. Data and plotting stay apart: every number
 * a figure shows is computed here; the scripts only place it.
 *
 *   OUTDIR/panel_D{d}_{full,causal}.dat, one per head_dim × causal of the
 *       mode (default cold, else the first mode present) — in a run of
 *       several model shapes (report_by_shape: the llm grid) one per shape
 *       instead, panel_H{h}_KV{kv}_D{d}_{full,causal}.dat —, over the largest
 *       family of points with one batch·seq_len in that panel (the
 *       FlashAttention grid keeps batch·seq_len = 16384): a block per variant
 *       in the run's order (block i = variant i, so colours match across
 *       figures), each "# VARIANT" then one line per seq_len:
 *       "seq_len ms tflops extra_mib speedup_naive speedup_cudnn
 *       tflops_per_watt speedup_torch"; NaN where the row is not ok, so gaps
 *       stay gaps. speedup_torch is the fastest PyTorch peer's ms at the same
 *       point (report_best_peer) over this row's, for our variants only
 *       (NaN on a peer's own rows).
 *   OUTDIR/ratio_D{d}_{full,causal}.dat (or ratio_H{h}_KV{kv}_..., as the
 *       panel files), with a baseline: the gate's (gate_compare) compared
 *       rows of that panel, every mode, a block per variant as above, one
 *       line per row: "seq_len ratio allowed lo hi mode throttled slower
 *       batch" — allowed = 1 + the row's limit, lo/hi the ratio's confidence
 *       bounds (NaN under the summary rule), mode 0 cold / 1 graph / 2 hot,
 *       throttled and slower the gate's verdicts (0/1); then a last block
 *       "# allowed": "seq_len allowed" once per distinct pair.
 *   OUTDIR/meta.gp: what the scripts need to know (panels, variants, which
 *       are PyTorch peers and each one's colour, peak, the grid in words,
 *       axis ranges, what each figure leaves out; every key is listed in
 *       plots/README.md). Every string from the data is written by
 *       gp_quote, which no results file can make gnuplot run. */
#include "report.h"
#include "../gate/gate.h"
#include "../../common/errors.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SEQ 64
#define MAX_PANELS 32

/* A panel (report_panel: head_dim × causal, or a model shape) and the
 * family of its points that the figures draw. */
struct panel {
    struct report_panel key;
    long tokens; /* the family's batch·seq_len */
};

/* The columns of a panel file after seq_len (not the results file's COL_*). */
enum { PANEL_MS, PANEL_TFLOPS, PANEL_MEM, PANEL_NAIVE, PANEL_CUDNN, PANEL_TFLOPS_W, PANEL_TORCH, PANEL_NCOLS };

/* What meta.gp says about the drawn data, gathered while writing it. */
struct facts {
    double mem_max[MAX_VARIANTS];                     /* MiB, over every panel */
    double hl_lo[MAX_VARIANTS], hl_hi[MAX_VARIANTS];  /* cudnn_sdpa ms / variant ms */
    double tflops_max;
    double torch_hi; /* the highest best-peer ms / our ms, over every panel */
    int seq_min, seq_max;
    int best_peer[MAX_VARIANTS]; /* drawn points at which variant v is the fastest peer */
    /* finite values per panel, column and variant: a panel with none gets
     * an empty frame (gnuplot refuses a plot with no point at all) */
    int n[MAX_PANELS][PANEL_NCOLS][MAX_VARIANTS];
};

/* What the ratio files hold, for meta.gp. */
struct ratio_facts {
    struct panel panels[MAX_PANELS];
    int npanels;
    int rows, throttled, slower;
    bool mode_seen[MODE_COUNT]; /* by mode code */
    double lo, hi; /* over every drawn ratio, bound and allowed line: the y axis */
    int seq_min, seq_max;
    char baseline_run[96];
};

/* A ratio file's mode code: the mode's place in report_modes (0 cold, 1
 * graph, 2 hot). */
static int mode_code(const char *mode)
{
    for (int i = 0; i < MODE_COUNT; i++)
        if (!strcmp(mode, timing_mode_names[report_modes[i]])) return i;
    return 0;
}

/* ------------------------------------------------------- gnuplot strings */

/* A gnuplot string expression that cannot run anything: single-quoted
 * pieces, since inside double quotes gnuplot substitutes `backquoted`
 * commands and reads backslash escapes, and inside single quotes it does
 * neither. A single quote in the text becomes its own piece "'" (joined with
 * the . operator): gnuplot's '' escape fails where two of them meet or one
 * opens the string. Control characters, which would end the command line,
 * become '?'. */
static void gp_quote(FILE *f, const char *s)
{
    bool open = false;
    if (!*s) fputs("''", f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\'') {
            fprintf(f, "%s\"'\"%s", open ? "'." : "", s[1] ? "." : "");
            open = false;
            continue;
        }
        if (!open) fputc('\'', f);
        open = true;
        fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
    }
    if (open) fputc('\'', f);
}

static void gp_string(FILE *f, const char *name, const char *value)
{
    fprintf(f, "%s = ", name);
    gp_quote(f, value);
    fputc('\n', f);
}

static void gp_number(FILE *f, const char *name, double v)
{
    if (isfinite(v)) fprintf(f, "%s = %.6g\n", name, v);
    else fprintf(f, "%s = NaN\n", name);
}

/* A comment line in a data file: the variant's name, for readers. Control
 * characters would end the comment early; they become '?'. */
static void put_comment(FILE *f, const char *s)
{
    fputs("# ", f);
    for (; *s; s++) fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
    fputc('\n', f);
}

/* A number for gnuplot: "NaN" (a gap in a line) when not finite. */
static void put_num(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, " %.6g", v);
    else fputs(" NaN", f);
}

static double nan_if_bad(double v) { return isfinite(v) ? v : NAN; }

/* ---------------------------------------------------------------- panels */

/* The panel of the row with key k (report_panel_of: the rule the page's
 * tables follow too). */
static struct report_panel panel_of_key(const struct result_key *k, bool by_shape)
{
    struct attn_problem p;
    result_key_problem(k, &p);
    return report_panel_of(&p, by_shape);
}

static bool in_panel(const struct result_key *k, const char *mode, const struct report_panel *panel)
{
    return !strcmp(k->mode, mode) && report_panel_has(panel, k);
}

static bool in_family(const struct result_key *k, const char *mode, const struct panel *p)
{
    return in_panel(k, mode, &p->key) && (long)k->batch * k->seq_len == p->tokens;
}

/* The batch·seq_len most rows of a panel share; -1 when the panel is empty. */
static long main_family(const struct result_set *s, const char *mode, const struct report_panel *panel)
{
    long best = -1;
    size_t best_n = 0;
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        if (!in_panel(k, mode, panel)) continue;
        long tokens = (long)k->batch * k->seq_len;
        size_t n = 0;
        for (size_t j = 0; j < s->count; j++) {
            const struct result_key *o = &s->rows[j].key;
            n += in_panel(o, mode, panel) && (long)o->batch * o->seq_len == tokens;
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

/* Adds v to a set of ints kept sorted; returns the new size. */
static int add_sorted(int *set, int n, int cap, int v)
{
    for (int i = 0; i < n; i++)
        if (set[i] == v) return n;
    if (n == cap) return n;
    set[n++] = v;
    qsort(set, (size_t)n, sizeof *set, cmp_int);
    return n;
}

/* Adds p to a set of panels kept in report_panel_cmp's order; returns the
 * new size. */
static int add_panel(struct report_panel *set, int n, int cap, const struct report_panel *p)
{
    for (int i = 0; i < n; i++)
        if (report_panel_equal(&set[i], p)) return n;
    if (n == cap) return n;
    int at = n++;
    for (; at > 0 && report_panel_cmp(&set[at - 1], p) > 0; at--) set[at] = set[at - 1];
    set[at] = *p;
    return n;
}

/* The panels of a mode in report_panel_cmp's order (head_dim ascending,
 * non-causal then causal, and by shape in a run of model shapes), each with
 * its main family. */
static int find_panels(const struct result_set *s, const char *mode, bool by_shape, struct panel *out)
{
    struct report_panel keys[MAX_PANELS];
    int nk = 0, n = 0;
    for (size_t i = 0; i < s->count; i++)
        if (!strcmp(s->rows[i].key.mode, mode)) {
            const struct report_panel key = panel_of_key(&s->rows[i].key, by_shape);
            nk = add_panel(keys, nk, MAX_PANELS, &key);
        }
    for (int i = 0; i < nk; i++) {
        long tokens = main_family(s, mode, &keys[i]);
        if (tokens > 0) out[n++] = (struct panel){keys[i], tokens};
    }
    return n;
}

static void panel_name(const char *outdir, const char *prefix, const struct panel *p, char *buf,
                       size_t len)
{
    char stem[64 + ATTN_VARLEN_MAX];
    snprintf(buf, len, "%s/%s_%s.dat", outdir, prefix, report_panel_stem(&p->key, stem, sizeof stem));
}

static void panel_title(const struct panel *p, char *buf, size_t len)
{
    report_panel_title(&p->key, buf, len);
}

static const struct result_rec *find_row(const struct result_set *s, const char *mode,
                                         const struct panel *p, int seq, const char *variant)
{
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        if (in_family(k, mode, p) && k->seq_len == seq && !strcmp(k->variant, variant))
            return &s->rows[i];
    }
    return NULL;
}

/* max and min that ignore a NaN on either side */
static double fmax_nan(double a, double b) { return isnan(a) ? b : isnan(b) ? a : fmax(a, b); }
static double fmin_nan(double a, double b) { return isnan(a) ? b : isnan(b) ? a : fmin(a, b); }

/* One line of a panel file; folds what meta.gp needs into *fx. */
static void write_panel_line(FILE *f, const struct result_set *s, const struct result_rec *r,
                             int seq, int p, int v, struct facts *fx)
{
    double ms = NAN, tf = NAN, mem = NAN, sp_naive = NAN, sp_cudnn = NAN, tf_w = NAN, sp_torch = NAN;
    if (report_row_ok(r)) {
        ms = r->ms_median;
        tf = nan_if_bad(r->tflops);
        tf_w = nan_if_bad(r->tflops_per_watt);
        mem = nan_if_bad(r->extra_mem_mib);
        const struct result_rec *n = report_twin(s, &r->key, "naive");
        const struct result_rec *c = report_twin(s, &r->key, "cudnn_sdpa");
        const struct result_rec *t = report_is_peer(r->key.variant) ? NULL : report_best_peer(s, &r->key);
        if (report_row_ok(n)) sp_naive = n->ms_median / ms;
        if (report_row_ok(c)) sp_cudnn = c->ms_median / ms;
        if (t) sp_torch = t->ms_median / ms;
    }
    fx->mem_max[v] = fmax_nan(fx->mem_max[v], mem);
    fx->tflops_max = fmax_nan(fx->tflops_max, tf);
    fx->hl_lo[v] = fmin_nan(fx->hl_lo[v], sp_cudnn);
    fx->hl_hi[v] = fmax_nan(fx->hl_hi[v], sp_cudnn);
    fx->torch_hi = fmax_nan(fx->torch_hi, sp_torch);
    fprintf(f, "%d", seq);
    const double cols[PANEL_NCOLS] = {ms, tf, mem, sp_naive, sp_cudnn, tf_w, sp_torch};
    for (int c = 0; c < PANEL_NCOLS; c++) {
        put_num(f, cols[c]);
        fx->n[p][c][v] += isfinite(cols[c]);
    }
    fputc('\n', f);
}

/* Tallies, for the speedup_torch figure's subtitle, which peer is the
 * fastest at the point of panel p at seq (any row there names the point). */
static void tally_best_peer(const struct result_set *s, const char *mode, const struct panel *p, int seq,
                            const char *const *variants, int nv, struct facts *fx)
{
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        if (!in_family(k, mode, p) || k->seq_len != seq) continue;
        const struct result_rec *best = report_best_peer(s, k);
        for (int v = 0; best && v < nv; v++) fx->best_peer[v] += !strcmp(variants[v], best->key.variant);
        return;
    }
}

/* One panel's file: a block per variant over the family's seq_lens. */
static int write_panel(const struct result_set *s, const char *mode, const struct panel *panels,
                       int p, const char *path, const char *const *variants, int nv, struct facts *fx)
{
    int seqs[MAX_SEQ], ns = 0;
    for (size_t i = 0; i < s->count; i++)
        if (in_family(&s->rows[i].key, mode, &panels[p]))
            ns = add_sorted(seqs, ns, MAX_SEQ, s->rows[i].key.seq_len);
    if (ns && (!fx->seq_min || seqs[0] < fx->seq_min)) fx->seq_min = seqs[0];
    if (ns && seqs[ns - 1] > fx->seq_max) fx->seq_max = seqs[ns - 1];
    FILE *f = fopen(path, "w");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create: %s", path, strerror(errno));
    for (int v = 0; v < nv; v++) {
        if (v) fputs("\n\n", f);
        put_comment(f, variants[v]);
        for (int j = 0; j < ns; j++)
            write_panel_line(f, s, find_row(s, mode, &panels[p], seqs[j], variants[v]), seqs[j], p, v, fx);
    }
    for (int j = 0; j < ns; j++) tally_best_peer(s, mode, &panels[p], seqs[j], variants, nv, fx);
    if (fclose(f) != 0) return ATTN_FAIL(ATTN_ERR, "%s: write failed", path);
    return ATTN_OK;
}

/* ------------------------------------------------------------- grid note */

/* How a set of ints varied: one value, or several. */
struct spread {
    long first;
    bool any, several;
};

static void spread_add(struct spread *sp, long v)
{
    if (!sp->any) sp->first = v;
    else if (v != sp->first) sp->several = true;
    sp->any = true;
}

/* "batch = 16384 / S, heads = 2048 / D, bf16": the grid of the drawn rows
 * in words, so that no figure leaves the reader guessing B and H ("heads
 * per panel" when the panels are model shapes whose titles say them). */
static void grid_note(const struct result_set *s, const char *mode, const struct panel *panels,
                      int np, char *buf, size_t len)
{
    struct spread tokens = {0}, batch = {0}, heads = {0}, hidden = {0};
    char dtypes[64] = "";
    for (int p = 0; p < np; p++) spread_add(&tokens, panels[p].tokens);
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        bool drawn = false;
        for (int p = 0; p < np && !drawn; p++) drawn = in_family(k, mode, &panels[p]);
        if (!drawn) continue;
        spread_add(&batch, k->batch);
        spread_add(&heads, k->heads);
        spread_add(&hidden, (long)k->heads * k->head_dim);
        if (!strstr(dtypes, k->dtype) && strlen(dtypes) + strlen(k->dtype) + 2 < sizeof dtypes)
            snprintf(dtypes + strlen(dtypes), sizeof dtypes - strlen(dtypes), "%s%s", dtypes[0] ? "/" : "",
                     k->dtype);
    }
    char b[64], h[64];
    if (!batch.several) snprintf(b, sizeof b, "batch = %ld", batch.first);
    else if (!tokens.several) snprintf(b, sizeof b, "batch = %ld / S", tokens.first);
    else snprintf(b, sizeof b, "batch = tokens / S (per panel)");
    const bool shapes = np > 0 && panels[0].key.shape; /* each panel's title names its heads */
    if (!heads.several) snprintf(h, sizeof h, "heads = %ld", heads.first);
    else if (shapes) snprintf(h, sizeof h, "heads per panel");
    else if (!hidden.several) snprintf(h, sizeof h, "heads = %ld / D", hidden.first);
    else snprintf(h, sizeof h, "heads vary");
    snprintf(buf, len, "%s, %s, %s", b, h, dtypes);
}

/* ------------------------------------------------------------------ ratio */

struct ratio_row {
    int variant, seq, batch, mode;
    bool throttled, slower;
    double ratio, allowed, lo, hi;
};

static int cmp_ratio_row(const void *a, const void *b)
{
    const struct ratio_row *x = a, *y = b;
    if (x->seq != y->seq) return x->seq - y->seq;
    if (x->mode != y->mode) return x->mode - y->mode;
    return x->batch - y->batch;
}

static int variant_index(const char *const *variants, int nv, const char *name)
{
    for (int v = 0; v < nv; v++)
        if (!strcmp(variants[v], name)) return v;
    return -1;
}

/* The gate's compared rows of one panel (rows off the panels' family
 * included: the gate judges them too), sorted by seq_len then mode. */
static size_t ratio_rows_of(const struct gate_report *rep, const struct panel *p,
                            const char *const *variants, int nv, struct ratio_row *out)
{
    size_t n = 0;
    for (size_t i = 0; i < rep->count; i++) {
        const struct gate_line *l = &rep->lines[i];
        int v = variant_index(variants, nv, l->key.variant);
        if (isnan(l->ratio) || v < 0 || !report_panel_has(&p->key, &l->key)) continue;
        out[n++] = (struct ratio_row){
            .variant = v, .seq = l->key.seq_len, .batch = l->key.batch, .mode = mode_code(l->key.mode),
            .throttled = l->verdict == V_THROTTLED, .slower = l->verdict == V_SLOWER,
            .ratio = l->ratio, .allowed = 1 + l->limit, .lo = l->lo, .hi = l->hi};
    }
    qsort(out, n, sizeof *out, cmp_ratio_row);
    return n;
}

/* Folds a written row into what meta.gp says: counts, modes, axes. */
static void ratio_facts_add(struct ratio_facts *rf, const struct ratio_row *r)
{
    rf->rows++;
    rf->throttled += r->throttled;
    rf->slower += r->slower;
    rf->mode_seen[r->mode] = true;
    if (!rf->seq_min || r->seq < rf->seq_min) rf->seq_min = r->seq;
    if (r->seq > rf->seq_max) rf->seq_max = r->seq;
    rf->lo = fmin_nan(rf->lo, fmin_nan(r->ratio, r->lo));
    rf->hi = fmax_nan(rf->hi, fmax_nan(fmax_nan(r->ratio, r->hi), r->allowed));
}

static int write_ratio_panel(const char *path, const struct ratio_row *rows, size_t n,
                             const char *const *variants, int nv, struct ratio_facts *rf)
{
    FILE *f = fopen(path, "w");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create: %s", path, strerror(errno));
    for (int v = 0; v < nv; v++) {
        if (v) fputs("\n\n", f);
        put_comment(f, variants[v]);
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            const struct ratio_row *r = &rows[i];
            if (r->variant != v) continue;
            fprintf(f, "%d", r->seq);
            const double cols[] = {r->ratio, r->allowed, r->lo, r->hi};
            for (int c = 0; c < 4; c++) put_num(f, cols[c]);
            fprintf(f, " %d %d %d %d\n", r->mode, r->throttled, r->slower, r->batch);
            ratio_facts_add(rf, r);
            any = true;
        }
        /* a variant without rows here still gets a (gap) line: an empty
         * block makes gnuplot warn about the file */
        if (!any) fprintf(f, "%d NaN NaN NaN NaN 0 0 0 0\n", rows[0].seq);
    }
    fputs("\n\n# allowed\n", f);
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++) seen |= rows[j].seq == rows[i].seq && rows[j].allowed == rows[i].allowed;
        if (!seen) fprintf(f, "%d %.6g\n", rows[i].seq, rows[i].allowed);
    }
    if (fclose(f) != 0) return ATTN_FAIL(ATTN_ERR, "%s: write failed", path);
    return ATTN_OK;
}

/* The ratio panels: every panel (head_dim × causal, or model shape as the
 * figures have them) among the compared rows. */
static int write_ratio_panels(const struct gate_report *rep, const char *outdir, bool by_shape,
                              const char *const *variants, int nv, struct ratio_facts *rf)
{
    struct report_panel keys[MAX_PANELS];
    int nk = 0;
    for (size_t i = 0; i < rep->count; i++)
        if (!isnan(rep->lines[i].ratio)) {
            const struct report_panel key = panel_of_key(&rep->lines[i].key, by_shape);
            nk = add_panel(keys, nk, MAX_PANELS, &key);
        }
    struct ratio_row *rows = malloc((rep->count ? rep->count : 1) * sizeof *rows);
    if (!rows) return ATTN_FAIL(ATTN_ERR, "out of memory");
    int rc = ATTN_OK;
    for (int i = 0; i < nk && rc == ATTN_OK; i++) {
        struct panel p = {keys[i], 0};
        size_t n = ratio_rows_of(rep, &p, variants, nv, rows);
        if (!n) continue;
        char path[1100];
        panel_name(outdir, "ratio", &p, path, sizeof path);
        rc = write_ratio_panel(path, rows, n, variants, nv, rf);
        rf->panels[rf->npanels++] = p;
    }
    free(rows);
    return rc;
}

/* The baseline through the gate (gate_compare: the one source of truth for
 * ratio, limit and verdict), written per panel. */
static int write_ratio(const struct report_args *a, const struct result_set *s, bool by_shape,
                       const char *const *variants, int nv, struct ratio_facts *rf)
{
    struct result_set base;
    struct gate_thresholds t;
    if (a->thresholds) ATTN_TRY(gate_thresholds_read(a->thresholds, &t));
    else gate_thresholds_default(&t);
    ATTN_TRY(results_read(a->baseline, &base));
    snprintf(rf->baseline_run, sizeof rf->baseline_run, "%s", base.rows[0].run_id);
    struct gate_options o = {.allow_missing = true, .allow_gpu_mismatch = true};
    struct gate_report rep = {0};
    int rc = gate_compare(&base, s, &t, &o, &rep);
    if (rc == ATTN_OK) rc = write_ratio_panels(&rep, a->outdir, by_shape, variants, nv, rf);
    gate_report_free(&rep);
    results_free(&base);
    if (rc == ATTN_OK && rf->rows == 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no row in common with %s", a->baseline, s->path);
    return rc;
}

/* ------------------------------------------------------------------ meta */

/* A string value of key in a .env file ("" when absent). */
static void env_string(const char *env, const char *key, char *out, size_t len)
{
    FILE *f = fopen(env, "r");
    out[0] = '\0';
    if (!f) return;
    char line[1024];
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, klen) && line[klen] == '=') {
            line[strcspn(line, "\r\n")] = '\0';
            snprintf(out, len, "%.*s", (int)len - 1, line + klen + 1);
        }
    fclose(f);
}

static void gp_string_array(FILE *f, const char *name, const char *const *v, int n)
{
    fprintf(f, "array %s[%d] = [", name, n);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        gp_quote(f, v[i]);
    }
    fputs("]\n", f);
}

static void panels_meta(FILE *f, const char *outdir, const char *prefix, const char *nname,
                        const char *fname, const char *tname, const struct panel *p, int n)
{
    char files[MAX_PANELS][1100], titles[MAX_PANELS][64];
    const char *fp[MAX_PANELS], *tp[MAX_PANELS];
    for (int i = 0; i < n; i++) {
        panel_name(outdir, prefix, &p[i], files[i], sizeof files[i]);
        panel_title(&p[i], titles[i], sizeof titles[i]);
        fp[i] = files[i];
        tp[i] = titles[i];
    }
    fprintf(f, "%s = %d\n", nname, n);
    gp_string_array(f, fname, fp, n);
    gp_string_array(f, tname, tp, n);
}

/* "array NAME[np] = [...]": per panel, the finite values of column col
 * over the variants in mask (NULL: all). */
static void panel_counts(FILE *f, const char *name, const struct facts *fx, int np, int nv, int col,
                         const int *mask)
{
    fprintf(f, "array %s[%d] = [", name, np);
    for (int p = 0; p < np; p++) {
        int n = 0;
        for (int v = 0; v < nv; v++) n += mask && !mask[v] ? 0 : fx->n[p][col][v];
        fprintf(f, "%s%d", p ? ", " : "", n);
    }
    fputs("]\n", f);
}

/* Variants named in a subtitle: ours by name, the PyTorch peers counted
 * ("naive, inplace and 4 PyTorch peers"), since seven peers' names would run
 * past the figure's width. */
struct name_list {
    char names[256];
    int peers;
};

static void name_list_add(struct name_list *l, const char *variant)
{
    size_t n = strlen(l->names);
    if (report_is_peer(variant)) l->peers++;
    else snprintf(l->names + n, sizeof l->names - n, "%s%s", n ? ", " : "", variant);
}

static bool name_list_empty(const struct name_list *l) { return !l->names[0] && !l->peers; }

static void name_list_text(const struct name_list *l, char *buf, size_t len)
{
    if (!l->peers) snprintf(buf, len, "%s", l->names);
    else snprintf(buf, len, "%s%s%d PyTorch peer%s", l->names, l->names[0] ? " and " : "", l->peers,
                  l->peers == 1 ? "" : "s");
}

/* Which variants the headline draws: all but cudnn_sdpa itself and those
 * more than 2× slower than it at every point (the eager ones), which would
 * crush the axis that has to show a few percent; the note names ours among
 * them and counts the PyTorch peers, which would make it too long to read. */
static void headline_meta(FILE *f, const char *const *variants, int nv, int np, const struct facts *fx)
{
    int show[MAX_VARIANTS], shown = 0;
    double lo = 1, hi = 1, slow_lo = NAN, slow_hi = NAN;
    struct name_list left_out = {0};
    for (int v = 0; v < nv; v++) {
        bool has = !isnan(fx->hl_hi[v]) && strcmp(variants[v], "cudnn_sdpa") != 0;
        show[v] = has && fx->hl_hi[v] >= 0.5;
        shown += show[v];
        if (show[v]) {
            lo = fmin(lo, fx->hl_lo[v]);
            hi = fmax(hi, fx->hl_hi[v]);
        } else if (has) {
            slow_lo = fmin_nan(slow_lo, 1 / fx->hl_hi[v]);
            slow_hi = fmax_nan(slow_hi, 1 / fx->hl_lo[v]);
            name_list_add(&left_out, variants[v]);
        }
    }
    fprintf(f, "headline_n = %d\narray headline_show[%d] = [", shown, nv);
    for (int v = 0; v < nv; v++) fprintf(f, "%s%d", v ? ", " : "", show[v]);
    fputs("]\n", f);
    panel_counts(f, "panel_n_headline", fx, np, nv, PANEL_CUDNN, show);
    const double pad = 0.12 * (hi - lo) + 0.01; /* room for the values written beside the points */
    gp_number(f, "headline_ymin", lo - pad);
    gp_number(f, "headline_ymax", hi + pad);
    char names[320], note[400] = "";
    name_list_text(&left_out, names, sizeof names);
    if (!name_list_empty(&left_out))
        snprintf(note, sizeof note, "not shown: %s, %.2g–%.2g× slower than cudnn_sdpa", names, slow_lo, slow_hi);
    gp_string(f, "headline_note", note);
}

/* Extra memory: GiB when any variant needs 1 GiB or more, else MiB, on a
 * linear axis from 0, so that the fused kernels' zero shows; the note names
 * the variants that lie on the zero line (under 1% of the largest value;
 * the PyTorch peers among them counted) and the most any of them needed,
 * since their markers hide one another there. */
static void memory_meta(FILE *f, const char *const *variants, int nv, const struct facts *fx)
{
    double max = 0, zero_max = 0;
    for (int v = 0; v < nv; v++) max = fmax_nan(max, fx->mem_max[v]);
    bool gib = max >= 1024;
    gp_string(f, "mem_unit", gib ? "GiB" : "MiB");
    gp_number(f, "mem_per_unit", gib ? 1024 : 1);
    gp_number(f, "mem_max", max);
    struct name_list zero = {0};
    char names[320], note[400] = "";
    for (int v = 0; v < nv; v++)
        if (!isnan(fx->mem_max[v]) && fx->mem_max[v] < 0.01 * max) {
            zero_max = fmax(zero_max, fx->mem_max[v]);
            name_list_add(&zero, variants[v]);
        }
    name_list_text(&zero, names, sizeof names);
    if (!name_list_empty(&zero))
        snprintf(note, sizeof note, "on the zero line: %s (at most %.3g MiB at any S)", names, zero_max);
    gp_string(f, "mem_note", note);
}

/* ------------------------------------------------------------ line styles */

/* The colours of plots/style.gp's palette: linetypes 1–8 draw our variants,
 * 11–18 the same colours, darker and dashed, the PyTorch peers. */
#define PALETTE 8

/* Each PyTorch peer that computes what one of our variants computes, and
 * that variant: a pair shares a colour, so the figures read as pairs. */
static const char *const counterparts[][2] = {
    {"torch_naive", "naive"},
    {"torch_inplace", "inplace"},
    {"torch_sdpa_cudnn", "cudnn_sdpa"},
    {"torch_sdpa_flash", "flash_mma"},
};

static int counterpart_of(const char *peer, const char *const *variants, int nv)
{
    for (size_t c = 0; c < sizeof counterparts / sizeof counterparts[0]; c++)
        if (!strcmp(peer, counterparts[c][0])) return variant_index(variants, nv, counterparts[c][1]);
    return -1;
}

/* colour[v], 1..PALETTE. Our variants take the palette in the run's order,
 * skipping the peers, so each keeps the colour it has in a run without
 * peers; a peer takes its counterpart's colour when the run has that
 * variant, else the first colour none of ours uses (past the palette's end,
 * the colours again: the dash still tells a peer from ours). */
static void variant_colours(const char *const *variants, int nv, int *colour)
{
    bool used[PALETTE + 1] = {false};
    int ours = 0, reused = 0;
    for (int v = 0; v < nv; v++)
        if (!report_is_peer(variants[v])) {
            colour[v] = ours++ % PALETTE + 1;
            used[colour[v]] = true;
        }
    for (int v = 0; v < nv; v++) {
        if (!report_is_peer(variants[v])) continue;
        int partner = counterpart_of(variants[v], variants, nv);
        if (partner >= 0) {
            colour[v] = colour[partner];
            continue;
        }
        int c = 1;
        while (c <= PALETTE && used[c]) c++;
        if (c > PALETTE) c = reused++ % PALETTE + 1;
        colour[v] = c;
        used[c] = true;
    }
}

static void gp_int_array(FILE *f, const char *name, const int *v, int n)
{
    fprintf(f, "array %s[%d] = [", name, n);
    for (int i = 0; i < n; i++) fprintf(f, "%s%d", i ? ", " : "", v[i]);
    fputs("]\n", f);
}

/* variant_peer[] (1: a PyTorch peer, drawn dashed), npeers and
 * variant_colour[]. */
static void style_meta(FILE *f, const char *const *variants, int nv)
{
    int peer[MAX_VARIANTS], colour[MAX_VARIANTS], npeers = 0;
    for (int v = 0; v < nv; v++) npeers += peer[v] = report_is_peer(variants[v]);
    variant_colours(variants, nv, colour);
    fprintf(f, "npeers = %d\n", npeers);
    gp_int_array(f, "variant_peer", peer, nv);
    gp_int_array(f, "variant_colour", colour, nv);
}

/* The speedup_torch figure: whether it has anything to draw, its y range
 * (from 0, the parity line in view), and which peers were the fastest, for
 * its subtitle ("fastest PyTorch peer: torch_sdpa_cudnn at 2 points,
 * torch_flex at 1", the most frequent first). */
static void torch_meta(FILE *f, const char *const *variants, int nv, int np, const struct facts *fx)
{
    int drawn = 0;
    for (int p = 0; p < np; p++)
        for (int v = 0; v < nv; v++) drawn += fx->n[p][PANEL_TORCH][v];
    fprintf(f, "have_torch = %d\n", drawn > 0);
    panel_counts(f, "panel_n_torch", fx, np, nv, PANEL_TORCH, NULL);
    gp_number(f, "torch_ymax", 1.1 * fmax_nan(1, fx->torch_hi));
    int points = 0;
    for (int v = 0; v < nv; v++) points += fx->best_peer[v];
    char note[400] = "";
    bool done[MAX_VARIANTS] = {false};
    for (;;) {
        int top = -1;
        for (int v = 0; v < nv; v++)
            if (!done[v] && fx->best_peer[v] && (top < 0 || fx->best_peer[v] > fx->best_peer[top])) top = v;
        if (top < 0) break;
        done[top] = true;
        size_t len = strlen(note);
        const int n = fx->best_peer[top];
        if (!len && n == points) /* one peer was the fastest everywhere */
            snprintf(note, sizeof note, "fastest PyTorch peer: %s at %s %d point%s", variants[top],
                     n > 2 ? "all" : n == 2 ? "both" : "the", n, n == 1 ? "" : "s");
        else
            snprintf(note + len, sizeof note - len, "%s%s at %d%s", len ? ", " : "fastest PyTorch peer: ",
                     variants[top], n, len ? "" : n == 1 ? " point" : " points");
    }
    gp_string(f, "torch_note", note);
}

static void ratio_meta(FILE *f, const struct report_args *a, const struct ratio_facts *rf)
{
    fprintf(f, "have_ratio = %d\n", a->baseline != NULL);
    gp_string(f, "baseline", a->baseline ? a->baseline : "");
    if (!a->baseline) return;
    gp_string(f, "baseline_run_id", rf->baseline_run);
    fprintf(f, "ratio_rows = %d\nratio_throttled = %d\nratio_slower = %d\n", rf->rows, rf->throttled,
            rf->slower);
    const double lo = fmin(rf->lo, 1), hi = fmax(rf->hi, 1), pad = 0.1 * (hi - lo) + 0.002;
    gp_number(f, "ratio_ymin", lo - pad);
    gp_number(f, "ratio_ymax", hi + pad);
    fprintf(f, "ratio_seq_min = %d\nratio_seq_max = %d\n", rf->seq_min, rf->seq_max);
    char modes[32] = "";
    for (int m = 0; m < MODE_COUNT; m++)
        if (rf->mode_seen[m])
            snprintf(modes + strlen(modes), sizeof modes - strlen(modes), "%s%s", modes[0] ? " " : "",
                     timing_mode_names[report_modes[m]]);
    gp_string(f, "ratio_modes", modes);
    panels_meta(f, a->outdir, "ratio", "nratio_panels", "ratio_panel_file", "ratio_panel_title", rf->panels,
                rf->npanels);
}

/* Which run, which GPU, which grid: the titles and subtitles. */
static void run_meta(FILE *f, const struct result_set *s, const char *env, const char *mode,
                     const struct panel *panels, int np)
{
    char gpu_name[128], note[256], with_mode[300];
    env_string(env, "gpu_name", gpu_name, sizeof gpu_name);
    grid_note(s, mode, panels, np, note, sizeof note);
    snprintf(with_mode, sizeof with_mode, "%s, %s mode", note, mode);
    gp_string(f, "run", s->path);
    gp_string(f, "run_id", s->rows[0].run_id);
    gp_string(f, "gpu", s->rows[0].gpu);
    gp_string(f, "gpu_name", gpu_name[0] ? gpu_name : s->rows[0].gpu);
    gp_string(f, "mode", mode);
    gp_string(f, "grid_shape", note);
    gp_string(f, "grid_note", with_mode);
}

static int write_meta(const struct report_args *a, const struct result_set *s, const char *mode,
                      const struct panel *panels, int np, const char *const *variants, int nv,
                      const struct facts *fx, const struct ratio_facts *rf)
{
    char path[1100], env[1100];
    report_env_beside(a->results, env, sizeof env);
    snprintf(path, sizeof path, "%s/meta.gp", a->outdir);
    FILE *f = fopen(path, "w");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create", path);
    fputs("# written by build/report data; strings from the data are single-quoted (gp_quote)\n", f);
    run_meta(f, s, env, mode, panels, np);
    panels_meta(f, a->outdir, "panel", "npanels", "panel_file", "panel_title", panels, np);
    fprintf(f, "nvariants = %d\n", nv);
    gp_string_array(f, "variant_name", variants, nv);
    style_meta(f, variants, nv);
    fprintf(f, "have_cudnn = %d\n", variant_index(variants, nv, "cudnn_sdpa") >= 0);
    fprintf(f, "have_naive = %d\n", variant_index(variants, nv, "naive") >= 0);
    fprintf(f, "seq_min = %d\nseq_max = %d\n", fx->seq_min, fx->seq_max);
    panel_counts(f, "panel_n_ms", fx, np, nv, PANEL_MS, NULL);
    panel_counts(f, "panel_n_tflops", fx, np, nv, PANEL_TFLOPS, NULL);
    panel_counts(f, "panel_n_mem", fx, np, nv, PANEL_MEM, NULL);
    panel_counts(f, "panel_n_naive", fx, np, nv, PANEL_NAIVE, NULL);
    panel_counts(f, "panel_n_energy", fx, np, nv, PANEL_TFLOPS_W, NULL);
    int energy = 0; /* rows with a TFLOP per joule: none in a run without power readings */
    for (int p = 0; p < np; p++)
        for (int v = 0; v < nv; v++) energy += fx->n[p][PANEL_TFLOPS_W][v];
    fprintf(f, "have_energy = %d\n", energy > 0);
    headline_meta(f, variants, nv, np, fx);
    gp_number(f, "peak_tflops", report_env_value(env, "peak_gemm_bf16_tflops"));
    gp_number(f, "tflops_max", fx->tflops_max);
    memory_meta(f, variants, nv, fx);
    torch_meta(f, variants, nv, np, fx);
    ratio_meta(f, a, rf);
    if (fclose(f) != 0) return ATTN_FAIL(ATTN_ERR, "%s: write failed", path);
    return ATTN_OK;
}

int report_data(const struct report_args *a, const struct result_set *s)
{
    if (mkdir(a->outdir, 0755) != 0 && errno != EEXIST)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create: %s", a->outdir, strerror(errno));
    const char *mode = report_pick_mode(s, a->mode);
    const char *variants[MAX_VARIANTS];
    int nv = report_variants(s, variants);
    const bool by_shape = report_by_shape(s);
    struct panel panels[MAX_PANELS];
    int np = find_panels(s, mode, by_shape, panels);
    if (!np) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no %s-mode rows to plot", s->path, mode);
    struct facts fx = {.tflops_max = NAN, .torch_hi = NAN};
    for (int v = 0; v < MAX_VARIANTS; v++) fx.mem_max[v] = fx.hl_lo[v] = fx.hl_hi[v] = NAN;
    for (int p = 0; p < np; p++) {
        char path[1100];
        panel_name(a->outdir, "panel", &panels[p], path, sizeof path);
        ATTN_TRY(write_panel(s, mode, panels, p, path, variants, nv, &fx));
    }
    struct ratio_facts rf = {.lo = NAN, .hi = NAN};
    if (a->baseline) ATTN_TRY(write_ratio(a, s, by_shape, variants, nv, &rf));
    ATTN_TRY(write_meta(a, s, mode, panels, np, variants, nv, &fx, &rf));
    printf("report: %d panel(s), %d variant(s), mode %s, data in %s\n", np, nv, mode, a->outdir);
    return ATTN_OK;
}

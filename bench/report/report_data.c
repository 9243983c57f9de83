/* report_data.c — `report data`: a results CSV into the tidy files the
 * gnuplot scripts in plots/ draw. Data and plotting stay apart: every number
 * a figure shows is computed here, and so is every series' look and where
 * the headline's value labels go; the scripts only place what they are told.
 *
 * Each pass (what the rows time: the forward, the backward, forward +
 * backward) is a family of figures of its own, drawn from the run's rows
 * of that pass alone (report_pass_rows), as a run of that pass alone would
 * be: the forward's files are named as below, another pass's panel and
 * ratio files end in _bwd or _fwd_bwd (report_panel_stem), its meta.gp
 * files go to OUTDIR/bwd/ or OUTDIR/fwd_bwd/, and its meta.gp names the
 * pass (pass, pass_title) for the titles and subtitles.
 *
 * A line of a figure is a series: one variant's rows of one regime (burst,
 * sustained) and one init. A run of one kind of rows has a series per
 * variant, named by it; a run of both regimes (or several inits) draws each
 * kind apart, "flash_hopper (sustained)", never one line through both.
 *
 *   OUTDIR/panel_D{d}_{full,causal}.dat, one per head_dim × causal of the
 *       mode (default cold, else the first mode present) — in a run of
 *       several model shapes (report_by_shape: the llm grid) one per shape
 *       instead, panel_H{h}_KV{kv}_D{d}_{full,causal}.dat —, over the largest
 *       family of points with one batch·seq_len in that panel (the
 *       FlashAttention grid keeps batch·seq_len = 16384; report_families): a
 *       block per series in the run's order (block i = series i), each
 *       "# SERIES" then one line per seq_len: "seq_len ms tflops extra_mib
 *       speedup_naive speedup_cudnn tflops_per_watt speedup_torch label_y
 *       cudnn_lo cudnn_hi gbps"; NaN where the row is not ok, so gaps stay
 *       gaps. gbps is report_row_gbps's (the point's bytes over the median),
 *       which the bandwidth figure draws for the decode panels (q_len <
 *       seq_len: panels of their own, report_panel_of; a decode panel's
 *       points off its family, one more panel per batch size, _b{batch}).
 *       Every ratio is report_speed_ratio's, between rows of one point, mode,
 *       regime and init: in a compare run the Hodges–Lehmann estimate from
 *       the samples, cudnn_lo and cudnn_hi speedup_cudnn's interval (the
 *       headline's error bars), else of the medians (no interval: NaN).
 *       speedup_torch is the fastest PyTorch peer's ms at the same point
 *       (report_best_peer) over this row's, for our variants only (NaN on a
 *       peer's own rows); label_y is where the headline writes
 *       speedup_cudnn's value (place_labels: clear of every line, point,
 *       error bar and other label), NaN for no label.
 *   OUTDIR/ratio_D{d}_{full,causal}.dat (or ratio_H{h}_KV{kv}_..., as the
 *       panel files), with a baseline measured together with the run
 *       (report_measured_together: one A/B pair): the gate's (gate_compare)
 *       compared rows of that panel, every mode, a block per series as
 *       above, one line per row: "seq_len ratio allowed lo hi mode throttled
 *       slower batch" — allowed = 1 + the row's limit, lo/hi the ratio's
 *       confidence bounds (NaN under the summary rule), mode 0 cold / 1 graph
 *       / 2 hot, throttled and slower the gate's verdicts (0/1); then a last
 *       block "# allowed": "seq_len allowed" once per distinct pair. A
 *       baseline measured apart is not drawn: meta.gp says why.
 *   OUTDIR/meta.gp: what the scripts need to know (panels, series and
 *       their looks, peak, the grid, mode and regime in words, how the
 *       headline's ratios were measured, axis ranges, which series each
 *       figure's legend lists, what each figure leaves out; the bandwidth
 *       figure's decode panels and the run's read ceiling, peak_read_gbps
 *       from the .env; every key is listed in plots/README.md). A run of
 *       more than REPORT_PAGE_PANELS
 *       panels is drawn as several figures: OUTDIR/page-K/meta.gp for page K
 *       >= 2, each with its share of the panels. Every string from the data
 *       is written by gp_quote, which no results file can make gnuplot run. */
#include "report.h"
#include "../gate/gate.h"
#include "../../common/errors.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The columns of a panel file after seq_len (not the results file's COL_*);
 * PANEL_CUDNN_LO and _HI are speedup_cudnn's interval (the headline's
 * bars), NaN unless the two rows were measured interleaved; PANEL_GBPS the
 * row's GB/s (report_row_gbps), the bandwidth figure's. */
enum { PANEL_MS, PANEL_TFLOPS, PANEL_MEM, PANEL_NAIVE, PANEL_CUDNN, PANEL_TFLOPS_W, PANEL_TORCH, PANEL_LABEL,
       PANEL_CUDNN_LO, PANEL_CUDNN_HI, PANEL_GBPS, PANEL_NCOLS };

/* A series of the figures: one variant's rows of one regime and one init
 * (its kind). A run of one kind has one series per variant, named by it; a
 * run holding burst and sustained rows (or several inits) draws each kind
 * apart, never one line through rows of two kinds: the sustained series'
 * name gains " (sustained)", one of a second init " (init=normal)", and
 * each kind after the first its own dash (series_dash). Series are in the
 * run's order of variants, a variant's kinds together. */
struct series {
    const char *variant, *regime; /* pointing into the set */
    float init_sigma;
    int kind; /* the kind's place among the run's (burst first, then by init) */
    char name[160];
};

/* The run's kinds (regime × init) and series. */
struct series_set {
    struct series *s;
    const char **names; /* s[i].name: what meta.gp and the data files call series i */
    int n;
    int nkinds;
    bool regimes[REGIME_COUNT]; /* the regimes the run has */
    int ninits;                 /* how many inits it has */
};

/* A panel's numbers: its seq_lens, and per series and seq_len the line's
 * columns. */
struct panel_data {
    int *seq, nseq;
    double *val; /* [series][seq][PANEL_NCOLS] */
};

static double *cell(const struct panel_data *d, int v, int j, int col)
{
    return &d->val[((size_t)v * (size_t)d->nseq + (size_t)j) * PANEL_NCOLS + col];
}

/* What meta.gp says about the drawn data. */
struct facts {
    int nv, np;
    double *mem_max;        /* MiB, over every panel, by series */
    double *hl_lo, *hl_hi;  /* cudnn_sdpa ms / series ms, by series */
    double *hl_bar_lo, *hl_bar_hi; /* the lowest and the highest bound of its headline bars, by series */
    int hl_drawn, hl_interleaved; /* the headline's drawn ratios, and those from interleaved samples */
    int *best_peer;         /* drawn points at which series v is the fastest peer */
    int *n;                 /* finite values by panel, column, series (count_of) */
    bool *headline_show;    /* by series: drawn on the headline */
    double tflops_max;
    double gbps_max;         /* the highest GB/s of a decode panel (the bandwidth figure's) */
    int decode_seq_min, decode_seq_max; /* the decode panels' kv_len range */
    double torch_hi; /* the highest best-peer ms / our ms, over every panel */
    double headline_ymin, headline_ymax;
    int seq_min, seq_max;
    double confidence; /* of each bound of an interleaved ratio: the gate's */
    const char *compare_run; /* the run's compare run, "" for a run measured row after row */
};

static int *count_of(const struct facts *fx, int p, int col, int v)
{
    return &fx->n[((size_t)p * PANEL_NCOLS + (size_t)col) * (size_t)fx->nv + (size_t)v];
}

/* What the ratio files hold, for meta.gp. */
struct ratio_facts {
    bool drawn;      /* a baseline measured together with the run */
    char why[400];   /* else why not ("" without a baseline) */
    struct report_family *panels;
    int npanels;
    int *n;          /* rows by ratio panel and series */
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

/* max and min that ignore a NaN on either side */
static double fmax_nan(double a, double b) { return isnan(a) ? b : isnan(b) ? a : fmax(a, b); }
static double fmin_nan(double a, double b) { return isnan(a) ? b : isnan(b) ? a : fmin(a, b); }

static int variant_index(const char *const *variants, int nv, const char *name)
{
    for (int v = 0; v < nv; v++)
        if (!strcmp(variants[v], name)) return v;
    return -1;
}

/* ---------------------------------------------------------------- series */

/* The pass of the set's rows: report_data draws each pass from a set of its
 * rows alone (report_pass_rows). */
static enum attn_pass pass_of(const struct result_set *s)
{
    return s->count ? (enum attn_pass)s->rows[0].key.pass : ATTN_PASS_FWD;
}

/* A kind of rows: its regime and init. */
struct kind {
    bool sustained;
    float init_sigma;
};

static int cmp_kind(const void *a, const void *b)
{
    const struct kind *x = a, *y = b;
    if (x->sustained != y->sustained) return (int)x->sustained - (int)y->sustained;
    return (x->init_sigma > y->init_sigma) - (x->init_sigma < y->init_sigma);
}

static struct kind kind_of(const struct result_key *k)
{
    return (struct kind){report_sustained(k), k->init_sigma};
}

/* Whether the row with key k is one of the series' rows. */
static bool series_has(const struct series *se, const struct result_key *k)
{
    return !strcmp(k->variant, se->variant) && !strcmp(k->regime, se->regime) && k->init_sigma == se->init_sigma;
}

/* The series of the row with key k, or -1. */
static int series_of(const struct series_set *ss, const struct result_key *k)
{
    for (int v = 0; v < ss->n; v++)
        if (series_has(&ss->s[v], k)) return v;
    return -1;
}

static bool has_variant(const struct series_set *ss, const char *variant)
{
    for (int v = 0; v < ss->n; v++)
        if (!strcmp(ss->s[v].variant, variant)) return true;
    return false;
}

/* "flash_hopper", "flash_hopper (sustained)", "flash_hopper (sustained,
 * init=normal)": a kind is named where the run has another. */
static void series_name(const struct series_set *ss, struct series *se)
{
    char init[ATTN_INIT_MAX], extra[64] = "";
    const bool sustained = !strcmp(se->regime, regime_names[REGIME_SUSTAINED]);
    if (sustained && ss->regimes[REGIME_BURST]) snprintf(extra, sizeof extra, "sustained");
    if (ss->ninits > 1 && se->init_sigma != ATTN_INIT_DEFAULT_SIGMA)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%sinit=%s", extra[0] ? ", " : "",
                 attn_init_name(se->init_sigma, init, sizeof init));
    if (extra[0]) snprintf(se->name, sizeof se->name, "%s (%s)", se->variant, extra);
    else snprintf(se->name, sizeof se->name, "%s", se->variant);
}

/* The run's series: its variants in order of appearance, each variant's
 * kinds in cmp_kind's order, only those with rows. */
static int series_build(const struct result_set *s, struct series_set *ss)
{
    *ss = (struct series_set){0};
    const char **variants = NULL;
    int nvar = 0, nk = 0;
    struct kind *kinds = malloc((s->count + 1) * sizeof *kinds);
    float *inits = malloc((s->count + 1) * sizeof *inits);
    int rc = kinds && inits ? report_variants(s, &variants, &nvar) : ATTN_FAIL(ATTN_ERR, "out of host memory");
    for (size_t i = 0; i < s->count && rc == ATTN_OK; i++) {
        const struct kind k = kind_of(&s->rows[i].key);
        bool seen = false;
        for (int j = 0; j < nk && !seen; j++) seen = !cmp_kind(&kinds[j], &k);
        if (!seen) kinds[nk++] = k;
        ss->regimes[k.sustained ? REGIME_SUSTAINED : REGIME_BURST] = true;
        seen = false;
        for (int j = 0; j < ss->ninits && !seen; j++) seen = inits[j] == k.init_sigma;
        if (!seen) inits[ss->ninits++] = k.init_sigma;
    }
    qsort(kinds, (size_t)nk, sizeof *kinds, cmp_kind);
    ss->nkinds = nk;
    if (rc == ATTN_OK) {
        ss->s = calloc((size_t)nvar * (size_t)nk + 1, sizeof *ss->s);
        ss->names = malloc(((size_t)nvar * (size_t)nk + 1) * sizeof *ss->names);
        if (!ss->s || !ss->names) rc = ATTN_FAIL(ATTN_ERR, "out of host memory");
    }
    for (int v = 0; v < nvar && rc == ATTN_OK; v++)
        for (int k = 0; k < nk; k++)
            for (size_t i = 0; i < s->count; i++) {
                const struct result_key *key = &s->rows[i].key;
                const struct kind ki = kind_of(key);
                if (strcmp(key->variant, variants[v]) || cmp_kind(&ki, &kinds[k])) continue;
                struct series *se = &ss->s[ss->n];
                *se = (struct series){.variant = key->variant, .regime = key->regime,
                                      .init_sigma = key->init_sigma, .kind = k};
                series_name(ss, se);
                ss->names[ss->n++] = se->name;
                break;
            }
    free(variants);
    free(kinds);
    free(inits);
    return rc;
}

static void series_free(struct series_set *ss)
{
    free(ss->s);
    free(ss->names);
    *ss = (struct series_set){0};
}

/* A series' dash (gnuplot's dt): ours solid, a PyTorch peer's dashed; a
 * kind after the run's first in a pattern of its own, so that burst and
 * sustained rows of one variant (same colour, same marker) stay apart. */
static const char *series_dash(const struct series *se)
{
    static const char *const ours[] = {"solid", "(3, 3)", "(8, 3, 2, 3)", "(2, 6)"};
    static const char *const peers[] = {"(12, 6)", "(12, 4, 3, 4)", "(12, 4, 3, 4, 3, 4)", "(20, 6)"};
    return (report_is_peer(se->variant) ? peers : ours)[se->kind % 4];
}

/* ---------------------------------------------------------------- panels */

/* The panel of the row with key k (report_panel_of: the rule the page's
 * tables follow too). */
static struct report_panel panel_of_key(const struct result_key *k, bool by_shape)
{
    struct attn_problem p;
    result_key_problem(k, &p);
    return report_panel_of(&p, by_shape);
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void panel_name(const char *outdir, const char *prefix, const struct report_family *p, char *buf,
                       size_t len)
{
    char stem[REPORT_PANEL_TITLE_MAX];
    snprintf(buf, len, "%s/%s_%s.dat", outdir, prefix, report_panel_stem(&p->key, stem, sizeof stem));
}

static const struct result_rec *find_row(const struct result_set *s, const char *mode,
                                         const struct report_family *p, int seq, const struct series *se)
{
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        if (report_in_family(p, k, mode) && k->seq_len == seq && series_has(se, k)) return &s->rows[i];
    }
    return NULL;
}

/* A panel's line for row r (NULL: none): every column but the label. Its
 * ratios to naive, cudnn_sdpa and the best peer are report_speed_ratio's
 * (interleaved from the samples in a compare run, else of the medians), of
 * the rows of r's own point, mode, regime and init. */
static int panel_line(const struct result_set *s, const struct result_rec *r, double confidence, double *cols)
{
    for (int c = 0; c < PANEL_NCOLS; c++) cols[c] = NAN;
    if (!report_row_ok(r)) return ATTN_OK;
    cols[PANEL_MS] = r->ms_median;
    cols[PANEL_TFLOPS] = nan_if_bad(r->tflops);
    cols[PANEL_TFLOPS_W] = nan_if_bad(r->tflops_per_watt);
    cols[PANEL_MEM] = nan_if_bad(r->extra_mem_mib);
    cols[PANEL_GBPS] = report_row_gbps(r);
    const struct result_rec *n = report_twin(s, &r->key, "naive");
    const struct result_rec *c = report_twin(s, &r->key, REPORT_HEADLINE_REF);
    const struct result_rec *t = report_is_peer(r->key.variant) ? NULL : report_best_peer(s, &r->key);
    struct report_ratio q;
    ATTN_TRY(report_speed_ratio(n, r, confidence, &q));
    cols[PANEL_NAIVE] = q.ratio;
    ATTN_TRY(report_speed_ratio(c, r, confidence, &q));
    cols[PANEL_CUDNN] = q.ratio;
    cols[PANEL_CUDNN_LO] = q.lo;
    cols[PANEL_CUDNN_HI] = q.hi;
    ATTN_TRY(report_speed_ratio(t, r, confidence, &q));
    cols[PANEL_TORCH] = q.ratio;
    return ATTN_OK;
}

/* A panel's numbers over its family's seq_lens, every series. */
static int collect_panel(const struct result_set *s, const char *mode, const struct report_family *p,
                         const struct series_set *ss, double confidence, struct panel_data *d)
{
    const int nv = ss->n;
    *d = (struct panel_data){0};
    size_t cap = 0;
    for (size_t i = 0; i < s->count; i++) {
        if (!report_in_family(p, &s->rows[i].key, mode)) continue;
        const int seq = s->rows[i].key.seq_len;
        bool seen = false;
        for (int j = 0; j < d->nseq && !seen; j++) seen = d->seq[j] == seq;
        if (seen) continue;
        if ((size_t)d->nseq == cap) {
            cap = cap ? 2 * cap : 16;
            int *g = realloc(d->seq, cap * sizeof *g);
            if (!g) return ATTN_FAIL(ATTN_ERR, "out of host memory");
            d->seq = g;
        }
        d->seq[d->nseq++] = seq;
    }
    qsort(d->seq, (size_t)d->nseq, sizeof *d->seq, cmp_int);
    d->val = malloc(((size_t)nv * (size_t)d->nseq + 1) * PANEL_NCOLS * sizeof *d->val);
    if (!d->val) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    for (int v = 0; v < nv; v++)
        for (int j = 0; j < d->nseq; j++)
            ATTN_TRY(panel_line(s, find_row(s, mode, p, d->seq[j], &ss->s[v]), confidence, cell(d, v, j, 0)));
    return ATTN_OK;
}

static void panel_data_free(struct panel_data *d)
{
    free(d->seq);
    free(d->val);
    *d = (struct panel_data){0};
}

/* Folds the seq_lens of d into the range [*lo, *hi] (0 and 0: empty). */
static void seq_range(const struct panel_data *d, int *lo, int *hi)
{
    if (d->nseq && (!*lo || d->seq[0] < *lo)) *lo = d->seq[0];
    if (d->nseq && d->seq[d->nseq - 1] > *hi) *hi = d->seq[d->nseq - 1];
}

/* Folds panel p's numbers into *fx; a decode panel's also into the
 * bandwidth figure's ranges. */
static void panel_facts(const struct panel_data *d, int p, bool decode, int nv, struct facts *fx)
{
    seq_range(d, &fx->seq_min, &fx->seq_max);
    if (decode) seq_range(d, &fx->decode_seq_min, &fx->decode_seq_max);
    for (int v = 0; v < nv; v++)
        for (int j = 0; j < d->nseq; j++) {
            const double *c = cell(d, v, j, 0);
            fx->mem_max[v] = fmax_nan(fx->mem_max[v], c[PANEL_MEM]);
            fx->tflops_max = fmax_nan(fx->tflops_max, c[PANEL_TFLOPS]);
            if (decode) fx->gbps_max = fmax_nan(fx->gbps_max, c[PANEL_GBPS]);
            fx->hl_lo[v] = fmin_nan(fx->hl_lo[v], c[PANEL_CUDNN]);
            fx->hl_hi[v] = fmax_nan(fx->hl_hi[v], c[PANEL_CUDNN]);
            fx->hl_bar_lo[v] = fmin_nan(fx->hl_bar_lo[v], c[PANEL_CUDNN_LO]);
            fx->hl_bar_hi[v] = fmax_nan(fx->hl_bar_hi[v], c[PANEL_CUDNN_HI]);
            fx->torch_hi = fmax_nan(fx->torch_hi, c[PANEL_TORCH]);
            for (int col = 0; col < PANEL_NCOLS; col++)
                if (col != PANEL_LABEL) *count_of(fx, p, col, v) += isfinite(c[col]);
        }
}

/* Tallies, for the speedup_torch figure's subtitle, which peer series is
 * the fastest at each drawn point of panel p and each kind of rows there
 * (any row of the kind names the point). */
static void tally_best_peer(const struct result_set *s, const char *mode, const struct report_family *p,
                            const struct panel_data *d, const struct series_set *ss, struct facts *fx)
{
    struct kind *seen = malloc(((size_t)ss->nkinds + 1) * sizeof *seen);
    if (!seen) return; /* a subtitle's tally, not a number drawn */
    for (int j = 0; j < d->nseq; j++) {
        int nseen = 0;
        for (size_t i = 0; i < s->count; i++) {
            const struct result_key *k = &s->rows[i].key;
            if (!report_in_family(p, k, mode) || k->seq_len != d->seq[j]) continue;
            const struct kind ki = kind_of(k);
            bool done = false;
            for (int q = 0; q < nseen && !done; q++) done = !cmp_kind(&seen[q], &ki);
            if (done || nseen >= ss->nkinds) continue;
            seen[nseen++] = ki;
            const struct result_rec *best = report_best_peer(s, k);
            const int v = best ? series_of(ss, &best->key) : -1;
            if (v >= 0) fx->best_peer[v]++;
        }
    }
    free(seen);
}

/* Which series the headline draws: all but cudnn_sdpa's own and those
 * more than 2× slower than it at every point (REPORT_HEADLINE_MIN: the
 * eager ones), which would crush the axis that has to show a few percent;
 * and its y range, fitted to those and their bars, with room for the value
 * labels. */
static void headline_range(const struct series_set *ss, struct facts *fx)
{
    double lo = 1, hi = 1;
    for (int v = 0; v < ss->n; v++) {
        bool has = !isnan(fx->hl_hi[v]) && strcmp(ss->s[v].variant, REPORT_HEADLINE_REF) != 0;
        fx->headline_show[v] = has && fx->hl_hi[v] >= REPORT_HEADLINE_MIN;
        if (fx->headline_show[v]) {
            lo = fmin(lo, fmin_nan(fx->hl_lo[v], fx->hl_bar_lo[v]));
            hi = fmax(hi, fmax_nan(fx->hl_hi[v], fx->hl_bar_hi[v]));
        }
    }
    const double pad = 0.12 * (hi - lo) + 0.01;
    fx->headline_ymin = lo - pad;
    fx->headline_ymax = hi + pad;
}

/* ---------------------------------------------------- headline's labels */

/* The headline's value labels, placed in a panel's plot area in fractions
 * of it (x by log2 S, y linear): a label's box (LABEL_W × LABEL_H: the 9 pt
 * text "1.04" in a panel of plots/style.gp, 518 × 336 px, with a margin),
 * its nearest place LABEL_GAP above or below its point's centre, a
 * marker's half size MARK_R. X_PAD is the x range's room past the smallest
 * and the largest S, in octaves (style.gp's xrange, from meta.gp). */
#define LABEL_W 0.07
#define LABEL_H 0.05
#define LABEL_GAP 0.055
#define MARK_R 0.02
#define X_PAD 0.4

struct box {
    double x0, x1, y0, y1;
};

static bool boxes_meet(const struct box *a, const struct box *b)
{
    return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* Whether the segment (x1, y1)–(x2, y2), x1 <= x2, crosses box b. */
static bool segment_meets(double x1, double y1, double x2, double y2, const struct box *b)
{
    if (x2 < b->x0 || x1 > b->x1) return false;
    const double xa = fmax(x1, b->x0), xb = fmin(x2, b->x1);
    const double t = x2 > x1 ? (y2 - y1) / (x2 - x1) : 0;
    const double ya = y1 + t * (xa - x1), yb = y1 + t * (xb - x1);
    return fmax(ya, yb) >= b->y0 && fmin(ya, yb) <= b->y1;
}

/* A panel's drawn headline in plot fractions: per shown variant its points
 * (NaN where there is none), and the labels placed so far. */
struct label_space {
    const struct panel_data *d;
    const struct facts *fx;
    double *fx_of_seq;      /* [seq] */
    struct box *placed;
    int nplaced;
};

static double frac_y(const struct facts *fx, double v)
{
    return (v - fx->headline_ymin) / (fx->headline_ymax - fx->headline_ymin);
}

/* Whether a label box at b, for a point on the `above` side of the parity
 * line at 1, stays in the plot area and on that side, clear of every drawn
 * line, point, error bar (as wide as a marker) and label. */
static bool box_free(const struct label_space *ls, int nv, const struct box *b, bool above)
{
    if (b->y0 < 0 || b->y1 > 1 || b->x0 < 0 || b->x1 > 1) return false;
    const double one = frac_y(ls->fx, 1);
    if (above ? b->y0 <= one : b->y1 >= one) return false;
    for (int i = 0; i < ls->nplaced; i++)
        if (boxes_meet(&ls->placed[i], b)) return false;
    const struct panel_data *d = ls->d;
    for (int v = 0; v < nv; v++) {
        if (!ls->fx->headline_show[v]) continue;
        for (int j = 0; j < d->nseq; j++) {
            const double y = *cell(d, v, j, PANEL_CUDNN);
            if (!isfinite(y)) continue;
            const double x = ls->fx_of_seq[j], fy = frac_y(ls->fx, y);
            const struct box mark = {x - MARK_R, x + MARK_R, fy - MARK_R, fy + MARK_R};
            if (boxes_meet(&mark, b)) return false;
            const double lo = *cell(d, v, j, PANEL_CUDNN_LO), hi = *cell(d, v, j, PANEL_CUDNN_HI);
            const struct box bar = {x - MARK_R, x + MARK_R, frac_y(ls->fx, lo), frac_y(ls->fx, hi)};
            if (isfinite(lo) && isfinite(hi) && boxes_meet(&bar, b)) return false;
            const double next = j + 1 < d->nseq ? *cell(d, v, j + 1, PANEL_CUDNN) : NAN;
            if (isfinite(next) && segment_meets(x, fy, ls->fx_of_seq[j + 1], frac_y(ls->fx, next), b)) return false;
        }
    }
    return true;
}

/* Whether another drawn series passes between point (x, fy) of variant v
 * at seq index j and a label box b beside it: its point at the same S lies
 * between the two, and the value would read as that series'. */
static bool label_crosses(const struct label_space *ls, int nv, int v, int j, double fy, const struct box *b)
{
    const double near = b->y0 > fy ? b->y0 : b->y1;
    for (int u = 0; u < nv; u++) {
        if (u == v || !ls->fx->headline_show[u]) continue;
        const double y = *cell(ls->d, u, j, PANEL_CUDNN);
        if (!isfinite(y)) continue;
        const double fu = frac_y(ls->fx, y);
        if ((fu - fy) * (near - fy) > 0 && fabs(fu - fy) < fabs(near - fy)) return true;
    }
    return false;
}

/* Every shown variant of ours gets the value of each of its points written
 * beside it, in the first free place on its side of the parity line (a
 * label across it would read as the other side's) with no other series
 * between it and its point: away from the line, then towards it, then
 * further out on either; a value with no such place near its point is not
 * written (the page's tables hold it). The label's y (in the data's units)
 * goes into the panel's PANEL_LABEL column. */
static int place_labels(struct panel_data *d, const struct facts *fx, const struct series_set *ss)
{
    const int nv = ss->n;
    for (int v = 0; v < nv; v++)
        for (int j = 0; j < d->nseq; j++) *cell(d, v, j, PANEL_LABEL) = NAN;
    if (!d->nseq) return ATTN_OK;
    struct label_space ls = {.d = d, .fx = fx};
    ls.fx_of_seq = malloc((size_t)d->nseq * sizeof *ls.fx_of_seq);
    ls.placed = malloc(((size_t)nv * (size_t)d->nseq + 1) * sizeof *ls.placed);
    if (!ls.fx_of_seq || !ls.placed) {
        free(ls.fx_of_seq);
        free(ls.placed);
        return ATTN_FAIL(ATTN_ERR, "out of host memory");
    }
    const double lo = log2(fx->seq_min) - X_PAD, span = log2(fx->seq_max) + X_PAD - lo;
    for (int j = 0; j < d->nseq; j++) ls.fx_of_seq[j] = (log2(d->seq[j]) - lo) / span;
    for (int v = 0; v < nv; v++) {
        if (!fx->headline_show[v] || report_is_peer(ss->s[v].variant)) continue;
        for (int j = 0; j < d->nseq; j++) {
            const double y = *cell(d, v, j, PANEL_CUDNN);
            if (!isfinite(y)) continue;
            const double x = ls.fx_of_seq[j], fy = frac_y(fx, y);
            const int away = y >= 1 ? 1 : -1;
            for (int k = 0; k < 6; k++) {
                const int side = k % 2 ? -away : away;
                const double cy = fy + side * (LABEL_GAP + (k / 2) * LABEL_H);
                const struct box b = {x - LABEL_W / 2, x + LABEL_W / 2, cy - LABEL_H / 2, cy + LABEL_H / 2};
                if (!box_free(&ls, nv, &b, away > 0) || label_crosses(&ls, nv, v, j, fy, &b)) continue;
                ls.placed[ls.nplaced++] = b;
                *cell(d, v, j, PANEL_LABEL) = fx->headline_ymin + cy * (fx->headline_ymax - fx->headline_ymin);
                break;
            }
        }
    }
    free(ls.fx_of_seq);
    free(ls.placed);
    return ATTN_OK;
}

/* One panel's file: a block per variant over the family's seq_lens. */
static int write_panel(const char *path, const struct panel_data *d, const char *const *variants, int nv)
{
    FILE *f = fopen(path, "w");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create: %s", path, strerror(errno));
    for (int v = 0; v < nv; v++) {
        if (v) fputs("\n\n", f);
        put_comment(f, variants[v]);
        for (int j = 0; j < d->nseq; j++) {
            fprintf(f, "%d", d->seq[j]);
            for (int c = 0; c < PANEL_NCOLS; c++) put_num(f, *cell(d, v, j, c));
            fputc('\n', f);
        }
    }
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
static void grid_note(const struct result_set *s, const char *mode, const struct report_family *panels,
                      int np, char *buf, size_t len)
{
    struct spread tokens = {0}, batch = {0}, heads = {0}, hidden = {0};
    char dtypes[64] = "";
    for (int p = 0; p < np; p++) spread_add(&tokens, panels[p].tokens);
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        bool drawn = false;
        for (int p = 0; p < np && !drawn; p++) drawn = report_in_family(&panels[p], k, mode);
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

/* The gate's compared rows of one panel (rows off the panels' family
 * included: the gate judges them too), sorted by seq_len then mode. */
static size_t ratio_rows_of(const struct gate_report *rep, const struct report_family *p,
                            const struct series_set *ss, struct ratio_row *out)
{
    size_t n = 0;
    for (size_t i = 0; i < rep->count; i++) {
        const struct gate_line *l = &rep->lines[i];
        int v = series_of(ss, &l->key);
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

/* Ratio panel p's file; its rows are counted by variant in rf->n. */
static int write_ratio_panel(const char *path, const struct ratio_row *rows, size_t n,
                             const char *const *variants, int nv, int p, struct ratio_facts *rf)
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
            rf->n[(size_t)p * (size_t)nv + (size_t)v]++;
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
                              const struct series_set *ss, struct ratio_facts *rf)
{
    const char *const *variants = ss->names;
    const int nv = ss->n;
    struct report_family *keys = NULL;
    int nk = 0, cap = 0, rc = ATTN_OK;
    for (size_t i = 0; i < rep->count && rc == ATTN_OK; i++)
        if (!isnan(rep->lines[i].ratio)) {
            const struct report_panel key = panel_of_key(&rep->lines[i].key, by_shape);
            rc = report_family_add(&keys, &nk, &cap, &key);
        }
    struct ratio_row *rows = malloc((rep->count ? rep->count : 1) * sizeof *rows);
    rf->panels = malloc(((size_t)nk + 1) * sizeof *rf->panels);
    rf->n = calloc(((size_t)nk + 1) * (size_t)nv, sizeof *rf->n);
    if (rc == ATTN_OK && (!rows || !rf->panels || !rf->n)) rc = ATTN_FAIL(ATTN_ERR, "out of host memory");
    for (int i = 0; i < nk && rc == ATTN_OK; i++) {
        size_t n = ratio_rows_of(rep, &keys[i], ss, rows);
        if (!n) continue;
        char path[1100];
        panel_name(outdir, "ratio", &keys[i], path, sizeof path);
        rc = write_ratio_panel(path, rows, n, variants, nv, rf->npanels, rf);
        rf->panels[rf->npanels++] = keys[i];
    }
    free(rows);
    free(keys);
    return rc;
}

/* The baseline's rows of s's pass through the gate (gate_compare: the one
 * source of truth for ratio, limit and verdict), written per panel — when
 * the two runs were measured together (report_measured_together); else rf
 * says why not (a baseline without rows of the pass among the reasons). */
static int write_ratio(const struct report_args *a, const struct result_set *s, bool by_shape,
                       const struct series_set *ss, struct ratio_facts *rf)
{
    struct result_set file, base;
    struct gate_thresholds t;
    if (a->thresholds) ATTN_TRY(gate_thresholds_read(a->thresholds, &t));
    else gate_thresholds_default(&t);
    ATTN_TRY(results_read(a->baseline, &file));
    snprintf(rf->baseline_run, sizeof rf->baseline_run, "%s", file.rows[0].run_id);
    int rc = report_pass_rows(&file, pass_of(s), &base);
    if (rc == ATTN_OK && !base.count)
        snprintf(rf->why, sizeof rf->why, "the baseline has no %s rows", attn_pass_name(pass_of(s)));
    else if (rc == ATTN_OK)
        rf->drawn = report_measured_together(s, &base, rf->why, sizeof rf->why);
    if (rc == ATTN_OK && rf->drawn) {
        struct gate_options o = {.allow_missing = true, .allow_gpu_mismatch = true};
        struct gate_report rep = {0};
        rc = gate_compare(&base, s, &t, &o, &rep);
        if (rc == ATTN_OK) rc = write_ratio_panels(&rep, a->outdir, by_shape, ss, rf);
        gate_report_free(&rep);
        if (rc == ATTN_OK && rf->rows == 0)
            rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: no row in common with %s", a->baseline, s->path);
    }
    report_pass_rows_free(&base);
    results_free(&file);
    return rc;
}

/* ------------------------------------------------------------------ looks */

/* Every variant's look, the same in every figure of every run: a colour
 * and a marker shape. Our variants are drawn solid with the shape filled, a
 * PyTorch peer (report_is_peer) dashed with it open, in a darker shade of
 * the colour of the variant of ours it computes like (torch_naive and
 * naive, torch_sdpa_cudnn and cudnn_sdpa, torch_sdpa_flash and flash_mma,
 * the FlashAttention-2 kernel); a lab variant shares its shipped twin's
 * colour with another shape. Colours are Okabe and Ito's (colour-blind
 * safe) and their darker shades. A variant not listed takes a look from
 * the fallback colours (none of them listed here) by a hash of its name. */
enum { SHAPE_CIRCLE, SHAPE_SQUARE, SHAPE_TRIANGLE, SHAPE_DOWN, SHAPE_DIAMOND, SHAPE_PENTAGON, NSHAPES };
/* gnuplot's point types of each shape, filled and open, and their sizes */
static const int shape_filled[NSHAPES] = {7, 5, 9, 11, 13, 15};
static const int shape_open[NSHAPES] = {6, 4, 8, 10, 12, 14};
static const double shape_size[NSHAPES] = {1.0, 1.0, 1.1, 1.1, 1.1, 1.1};

struct look {
    const char *rgb;
    int shape;
};

static const struct {
    const char *variant;
    struct look look;
} known_looks[] = {
    {"naive", {"#0072b2", SHAPE_CIRCLE}},
    {"inplace", {"#e69f00", SHAPE_SQUARE}},
    {"cudnn_sdpa", {"#009e73", SHAPE_TRIANGLE}},
    {"flash_mma", {"#cc79a7", SHAPE_DOWN}},
    {"flash_hopper", {"#d55e00", SHAPE_DIAMOND}},
    {"flash_mma_lab", {"#cc79a7", SHAPE_PENTAGON}},
    {"flash_hopper_lab", {"#d55e00", SHAPE_PENTAGON}},
    {"torch_naive", {"#004c78", SHAPE_CIRCLE}},
    {"torch_inplace", {"#a87400", SHAPE_SQUARE}},
    {"torch_sdpa_cudnn", {"#00674b", SHAPE_TRIANGLE}},
    {"torch_sdpa_flash", {"#a34d80", SHAPE_DOWN}},
    {"torch_sdpa_math", {"#9c4400", SHAPE_DIAMOND}},
    {"torch_sdpa_efficient", {"#2a86bd", SHAPE_PENTAGON}},
    {"torch_flex", {"#000000", SHAPE_CIRCLE}},
};
#define NKNOWN_LOOKS (sizeof known_looks / sizeof known_looks[0])

/* Paul Tol's muted colours, none of them one of known_looks' */
static const char *const fallback_rgb[] = {"#44aa99", "#882255", "#ddcc77", "#117733",
                                           "#332288", "#aa4499", "#88ccee", "#999933"};
#define NFALLBACK_RGB (sizeof fallback_rgb / sizeof fallback_rgb[0])
#define NFALLBACK (NFALLBACK_RGB * NSHAPES)

static const struct look *known_look(const char *variant)
{
    for (size_t i = 0; i < NKNOWN_LOOKS; i++)
        if (!strcmp(known_looks[i].variant, variant)) return &known_looks[i].look;
    return NULL;
}

/* FNV-1a of the name: a fallback look's slot */
static size_t fallback_slot(const char *variant)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = variant; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return (size_t)(h % NFALLBACK);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* looks[v] for the run's variants: known_looks', else the fallback slot of
 * the name's hash; two unlisted variants of one run with the same slot are
 * told apart by the name that sorts later taking the next free slot. */
static int variant_looks(const char *const *variants, int nv, struct look *looks)
{
    bool taken[NFALLBACK] = {false};
    const char **unknown = malloc(((size_t)nv + 1) * sizeof *unknown);
    if (!unknown) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    int nu = 0;
    for (int v = 0; v < nv; v++) {
        const struct look *k = known_look(variants[v]);
        if (k) looks[v] = *k;
        else unknown[nu++] = variants[v];
    }
    qsort(unknown, (size_t)nu, sizeof *unknown, cmp_names);
    for (int u = 0; u < nu; u++) {
        size_t slot = fallback_slot(unknown[u]);
        for (size_t tries = 0; taken[slot] && tries < NFALLBACK; tries++) slot = (slot + 1) % NFALLBACK;
        taken[slot] = true;
        const struct look l = {fallback_rgb[slot % NFALLBACK_RGB], (int)(slot / NFALLBACK_RGB)};
        looks[variant_index(variants, nv, unknown[u])] = l;
    }
    free(unknown);
    return ATTN_OK;
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

/* gnuplot has no array of size 0: none is written (the scripts stop at a
 * count of 0 first) */
static void gp_string_array(FILE *f, const char *name, const char *const *v, int n)
{
    if (n <= 0) return;
    fprintf(f, "array %s[%d] = [", name, n);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        gp_quote(f, v[i]);
    }
    fputs("]\n", f);
}

static void gp_int_array(FILE *f, const char *name, const int *v, int n)
{
    fprintf(f, "array %s[%d] = [", name, n);
    for (int i = 0; i < n; i++) fprintf(f, "%s%d", i ? ", " : "", v[i]);
    fputs("]\n", f);
}

/* A page of the figures: the panels [first, first + n) of the run's, of
 * the ratio figure's [rfirst, rfirst + rn), and of the bandwidth figure's
 * decode panels [dfirst, dfirst + dn) (counted from the first decode
 * panel; dpages pages of them). */
struct page {
    int number, pages;
    int first, n, rfirst, rn;
    int dfirst, dn, dpages;
};

/* The first of the decode panels, np when there is none: they are the last
 * of a pass's (report_panel_cmp orders the panels by q_len, 0 first). */
static int first_decode(const struct report_family *panels, int np)
{
    int d = 0;
    while (d < np && !panels[d].key.q_len) d++;
    return d;
}

static int panels_meta(FILE *f, const char *outdir, const char *prefix, const char *nname,
                       const char *fname, const char *tname, const struct report_family *p, int n)
{
    char (*files)[1100] = malloc(((size_t)n + 1) * sizeof *files);
    char (*titles)[REPORT_PANEL_TITLE_MAX] = malloc(((size_t)n + 1) * sizeof *titles);
    const char **fp = malloc(((size_t)n + 1) * sizeof *fp), **tp = malloc(((size_t)n + 1) * sizeof *tp);
    int rc = files && titles && fp && tp ? ATTN_OK : ATTN_FAIL(ATTN_ERR, "out of host memory");
    for (int i = 0; i < n && rc == ATTN_OK; i++) {
        panel_name(outdir, prefix, &p[i], files[i], sizeof files[i]);
        report_panel_title(&p[i].key, titles[i], sizeof titles[i]);
        fp[i] = files[i];
        tp[i] = titles[i];
    }
    if (rc == ATTN_OK) {
        fprintf(f, "%s = %d\n", nname, n);
        gp_string_array(f, fname, fp, n);
        gp_string_array(f, tname, tp, n);
    }
    free(files);
    free(titles);
    free(fp);
    free(tp);
    return rc;
}

/* "array NAME[n] = [...]": per panel of the page, the finite values of
 * column col over the variants in mask (NULL: all). */
static void panel_counts(FILE *f, const char *name, const struct facts *fx, const struct page *pg, int col,
                         const bool *mask)
{
    if (pg->n <= 0) return;
    fprintf(f, "array %s[%d] = [", name, pg->n);
    for (int p = pg->first; p < pg->first + pg->n; p++) {
        int n = 0;
        for (int v = 0; v < fx->nv; v++) n += mask && !mask[v] ? 0 : *count_of(fx, p, col, v);
        fprintf(f, "%s%d", p > pg->first ? ", " : "", n);
    }
    fputs("]\n", f);
}

/* "array legend_NAME[nv] = [...]": 1 where variant v has a value of column
 * col (and is in mask) in a panel of the page: the legend lists those only. */
static void legend_of(FILE *f, const char *name, const struct facts *fx, const struct page *pg, int col,
                      const bool *mask)
{
    fprintf(f, "array legend_%s[%d] = [", name, fx->nv);
    for (int v = 0; v < fx->nv; v++) {
        int n = 0;
        for (int p = pg->first; p < pg->first + pg->n; p++) n += *count_of(fx, p, col, v);
        fprintf(f, "%s%d", v ? ", " : "", n > 0 && (!mask || mask[v]));
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

/* Whether series v is the first of the series in mask (NULL: all) of its
 * variant: a list of names says each variant once. */
static bool first_of_variant(const struct series_set *ss, int v, const bool *mask)
{
    for (int u = 0; u < v; u++)
        if ((!mask || mask[u]) && !strcmp(ss->s[u].variant, ss->s[v].variant)) return false;
    return true;
}

/* "98 %": the two-sided level of an interval whose bounds are each at
 * confidence c (shift.h). */
static void interval_level(double c, char *buf, size_t len)
{
    snprintf(buf, len, "%.3g %%", 100 * (2 * c - 1));
}

/* How the headline's ratios were measured, for its second subtitle line
 * (short enough for a figure of one panel; the first line names the run):
 * interleaved (a compare run's samples: Hodges–Lehmann, with bars), or the
 * medians of rows measured row after row. */
static void headline_how(const struct facts *fx, char *buf, size_t len)
{
    char level[32];
    interval_level(fx->confidence, level, sizeof level);
    if (!fx->hl_drawn) buf[0] = '\0';
    else if (fx->hl_interleaved == fx->hl_drawn)
        snprintf(buf, len, "interleaved ratios: Hodges–Lehmann of the samples, bars the %s interval (bounds at %.3g %%, "
                           "the gate's)", level, 100 * fx->confidence);
    else if (fx->hl_interleaved)
        snprintf(buf, len, "interleaved ratios with %s bars where both rows have samples (%d of %d), else of medians",
                 level, fx->hl_interleaved, fx->hl_drawn);
    else if (fx->compare_run[0]) snprintf(buf, len, "measured in turns, but without samples: ratios of medians");
    else snprintf(buf, len, "ratios of medians, measured row after row");
}

/* The headline (headline_range): its series and y range, the note that
 * names ours left out (each variant once) and counts the PyTorch peers
 * among them, and how its ratios were measured (headline_how; bars where
 * interleaved). */
static void headline_meta(FILE *f, const struct series_set *ss, const struct facts *fx, const struct page *pg)
{
    const int nv = ss->n;
    int shown = 0;
    double slow_lo = NAN, slow_hi = NAN;
    struct name_list left_out = {0};
    bool *left = calloc((size_t)nv + 1, sizeof *left);
    for (int v = 0; v < nv && left; v++) {
        shown += fx->headline_show[v];
        if (!fx->headline_show[v] && !isnan(fx->hl_hi[v]) && strcmp(ss->s[v].variant, REPORT_HEADLINE_REF) != 0) {
            slow_lo = fmin_nan(slow_lo, 1 / fx->hl_hi[v]);
            slow_hi = fmax_nan(slow_hi, 1 / fx->hl_lo[v]);
            left[v] = true;
            if (first_of_variant(ss, v, left)) name_list_add(&left_out, ss->s[v].variant);
        }
    }
    free(left);
    fprintf(f, "headline_n = %d\narray headline_show[%d] = [", shown, nv);
    for (int v = 0; v < nv; v++) fprintf(f, "%s%d", v ? ", " : "", fx->headline_show[v]);
    fputs("]\n", f);
    panel_counts(f, "panel_n_headline", fx, pg, PANEL_CUDNN, fx->headline_show);
    legend_of(f, "headline", fx, pg, PANEL_CUDNN, fx->headline_show);
    gp_number(f, "headline_ymin", fx->headline_ymin);
    gp_number(f, "headline_ymax", fx->headline_ymax);
    char names[320], note[400] = "";
    name_list_text(&left_out, names, sizeof names);
    if (!name_list_empty(&left_out))
        snprintf(note, sizeof note, "not shown: %s, %.2g–%.2g× slower than cudnn_sdpa", names, slow_lo, slow_hi);
    gp_string(f, "headline_note", note);
    char how[400], level[32];
    headline_how(fx, how, sizeof how);
    interval_level(fx->confidence, level, sizeof level);
    fprintf(f, "headline_bars = %d\n", fx->hl_interleaved > 0);
    /* per panel of the page, the shown series (1-based) with a bar there */
    if (pg->n > 0) fprintf(f, "array panel_bars[%d] = [", pg->n);
    for (int p = pg->first; p < pg->first + pg->n; p++) {
        fputs(p > pg->first ? ", '" : "'", f);
        for (int v = 0, k = 0; v < nv; v++)
            if (fx->headline_show[v] && *count_of(fx, p, PANEL_CUDNN_LO, v) > 0) fprintf(f, "%s%d", k++ ? " " : "", v + 1);
        fputs(p + 1 == pg->first + pg->n ? "']\n" : "'", f);
    }
    gp_string(f, "headline_how", how);
    gp_string(f, "headline_level", level);
}

/* Extra memory: GiB when any variant needs 1 GiB or more, else MiB, on a
 * linear axis from 0, so that the fused kernels' zero shows; the note names
 * the variants that lie on the zero line (under 1% of the largest value;
 * the PyTorch peers among them counted) and the most any of them needed,
 * since their markers hide one another there. */
static void memory_meta(FILE *f, const struct series_set *ss, const struct facts *fx)
{
    const int nv = ss->n;
    double max = 0, zero_max = 0;
    for (int v = 0; v < nv; v++) max = fmax_nan(max, fx->mem_max[v]);
    bool gib = max >= 1024;
    gp_string(f, "mem_unit", gib ? "GiB" : "MiB");
    gp_number(f, "mem_per_unit", gib ? 1024 : 1);
    gp_number(f, "mem_max", max);
    struct name_list zero = {0};
    char names[320], note[400] = "";
    bool *on_zero = calloc((size_t)nv + 1, sizeof *on_zero);
    for (int v = 0; v < nv && on_zero; v++)
        if (!isnan(fx->mem_max[v]) && fx->mem_max[v] < 0.01 * max) {
            zero_max = fmax(zero_max, fx->mem_max[v]);
            on_zero[v] = true;
            if (first_of_variant(ss, v, on_zero)) name_list_add(&zero, ss->s[v].variant);
        }
    free(on_zero);
    name_list_text(&zero, names, sizeof names);
    if (!name_list_empty(&zero))
        snprintf(note, sizeof note, "on the zero line: %s (at most %.3g MiB at any S)", names, zero_max);
    gp_string(f, "mem_note", note);
}

/* The series' looks, each its variant's (variant_looks): variant_rgb[], the
 * marker of the line figures variant_pt[] (filled for ours, open for a
 * peer), both forms (variant_pt_filled[], variant_pt_open[]: ratio.gp's
 * cold and graph rows), variant_ps[], variant_peer[] (1: a PyTorch peer),
 * npeers, and variant_dash[], the line's dash (series_dash: a peer's
 * dashed, a second kind of rows in a pattern of its own). */
static int style_meta(FILE *f, const struct series_set *ss)
{
    const int nv = ss->n;
    struct look *looks = malloc(((size_t)nv + 1) * sizeof *looks), *of_variant = malloc(((size_t)nv + 1) * sizeof *looks);
    int *peer = malloc(((size_t)nv + 1) * sizeof *peer), *pt = malloc(((size_t)nv + 1) * 3 * sizeof *pt);
    const char **variants = malloc(((size_t)nv + 1) * sizeof *variants), **dash = malloc(((size_t)nv + 1) * sizeof *dash);
    int rc = looks && of_variant && peer && pt && variants && dash ? ATTN_OK : ATTN_FAIL(ATTN_ERR, "out of host memory");
    /* each variant once (its series share its look), then each series its variant's */
    int nvar = 0;
    for (int v = 0; v < nv && rc == ATTN_OK; v++)
        if (variant_index(variants, nvar, ss->s[v].variant) < 0) variants[nvar++] = ss->s[v].variant;
    if (rc == ATTN_OK) rc = variant_looks(variants, nvar, of_variant);
    for (int v = 0; v < nv && rc == ATTN_OK; v++) looks[v] = of_variant[variant_index(variants, nvar, ss->s[v].variant)];
    if (rc == ATTN_OK) {
        int npeers = 0;
        const char **rgb = (const char **)malloc(((size_t)nv + 1) * sizeof *rgb);
        if (!rgb) rc = ATTN_FAIL(ATTN_ERR, "out of host memory");
        for (int v = 0; v < nv && rgb; v++) {
            npeers += peer[v] = report_is_peer(ss->s[v].variant);
            dash[v] = series_dash(&ss->s[v]);
            rgb[v] = looks[v].rgb;
            pt[nv + v] = shape_filled[looks[v].shape];
            pt[2 * nv + v] = shape_open[looks[v].shape];
            pt[v] = peer[v] ? pt[2 * nv + v] : pt[nv + v];
        }
        if (rgb) {
            fprintf(f, "npeers = %d\n", npeers);
            gp_int_array(f, "variant_peer", peer, nv);
            gp_string_array(f, "variant_dash", dash, nv);
            gp_string_array(f, "variant_rgb", rgb, nv);
            gp_int_array(f, "variant_pt", pt, nv);
            gp_int_array(f, "variant_pt_filled", pt + nv, nv);
            gp_int_array(f, "variant_pt_open", pt + 2 * nv, nv);
            fprintf(f, "array variant_ps[%d] = [", nv);
            for (int v = 0; v < nv; v++) fprintf(f, "%s%.1f", v ? ", " : "", shape_size[looks[v].shape] + 0.1 * peer[v]);
            fputs("]\n", f);
        }
        free(rgb);
    }
    free(looks);
    free(of_variant);
    free(peer);
    free(pt);
    free(variants);
    free(dash);
    return rc;
}

/* The speedup_torch figure: whether it has anything to draw, its y range
 * (from 0, the parity line in view), and which peers were the fastest, for
 * its subtitle ("fastest PyTorch peer: torch_sdpa_cudnn at 2 points,
 * torch_flex at 1", the most frequent first). */
static int torch_meta(FILE *f, const char *const *variants, int nv, const struct facts *fx, const struct page *pg)
{
    int drawn = 0;
    for (int p = 0; p < fx->np; p++)
        for (int v = 0; v < nv; v++) drawn += *count_of(fx, p, PANEL_TORCH, v);
    fprintf(f, "have_torch = %d\n", drawn > 0);
    panel_counts(f, "panel_n_torch", fx, pg, PANEL_TORCH, NULL);
    legend_of(f, "torch", fx, pg, PANEL_TORCH, NULL);
    gp_number(f, "torch_ymax", 1.1 * fmax_nan(1, fx->torch_hi));
    int points = 0;
    for (int v = 0; v < nv; v++) points += fx->best_peer[v];
    char note[400] = "";
    bool *done = calloc((size_t)nv + 1, sizeof *done);
    if (!done) return ATTN_FAIL(ATTN_ERR, "out of host memory");
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
    free(done);
    gp_string(f, "torch_note", note);
    return ATTN_OK;
}

/* The ratio figure: drawn only for a baseline measured together with the
 * run, and not on a page without a ratio panel; ratio_why says why not. */
static int ratio_meta(FILE *f, const struct report_args *a, const struct ratio_facts *rf, int nv,
                      const struct page *pg)
{
    const bool drawn = rf->drawn && pg->rn > 0;
    fprintf(f, "have_ratio = %d\n", drawn);
    gp_string(f, "baseline", a->baseline ? a->baseline : "");
    gp_string(f, "ratio_why", !a->baseline ? "no baseline given" : !rf->drawn ? rf->why
                                                                               : drawn ? "" : "no ratio panel on this page");
    if (!drawn) return ATTN_OK;
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
    fprintf(f, "array legend_ratio[%d] = [", nv);
    for (int v = 0; v < nv; v++) {
        int n = 0;
        for (int p = pg->rfirst; p < pg->rfirst + pg->rn; p++) n += rf->n[(size_t)p * (size_t)nv + (size_t)v];
        fprintf(f, "%s%d", v ? ", " : "", n > 0);
    }
    fputs("]\n", f);
    return panels_meta(f, a->outdir, "ratio", "nratio_panels", "ratio_panel_file", "ratio_panel_title",
                       rf->panels + pg->rfirst, pg->rn);
}

/* "burst", "sustained", "burst and sustained, separate series", and the
 * inputs' init ("burst, init=normal"; "burst, init uniform and normal,
 * separate series"): the kinds of the rows drawn (in
 * the families of mode; every row of s when mode is NULL), for every
 * subtitle; the rows of another pass than the forward say it first
 * ("backward (dQ, dK, dV), burst, init=normal"). */
static void kinds_note(const struct result_set *s, const char *mode, const struct report_family *panels, int np,
                       char *buf, size_t len)
{
    bool regimes[REGIME_COUNT] = {false};
    float inits[8];
    int ninits = 0;
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        bool drawn = !mode;
        for (int p = 0; p < np && !drawn; p++) drawn = report_in_family(&panels[p], k, mode);
        if (!drawn) continue;
        regimes[report_sustained(k) ? REGIME_SUSTAINED : REGIME_BURST] = true;
        bool seen = false;
        for (int j = 0; j < ninits && !seen; j++) seen = inits[j] == k->init_sigma;
        if (!seen && ninits < 8) inits[ninits++] = k->init_sigma;
    }
    qsort(inits, (size_t)ninits, sizeof *inits, cmp_float);
    const bool both = regimes[REGIME_BURST] && regimes[REGIME_SUSTAINED];
    buf[0] = '\0';
    if (pass_of(s) != ATTN_PASS_FWD) snprintf(buf, len, "%s, ", report_pass_title(pass_of(s)));
    snprintf(buf + strlen(buf), len - strlen(buf), "%s",
             both                        ? "burst and sustained"
             : regimes[REGIME_SUSTAINED] ? regime_names[REGIME_SUSTAINED]
                                         : regime_names[REGIME_BURST]);
    char name[ATTN_INIT_MAX];
    if (ninits == 1) /* one init: "init=normal" */
        snprintf(buf + strlen(buf), len - strlen(buf), ", init=%s", attn_init_name(inits[0], name, sizeof name));
    for (int j = 0; ninits > 1 && j < ninits; j++) /* several: "init uniform and normal" */
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", !j ? ", init " : j + 1 < ninits ? ", " : " and ",
                 attn_init_name(inits[j], name, sizeof name));
    if (both || ninits > 1) snprintf(buf + strlen(buf), len - strlen(buf), ", separate series");
}

/* A figure's subtitle: the grid of its panels (grid_note), the mode and
 * the kinds of rows (kinds_note), and, for a figure of several pages,
 * which page: "· panels 25–30 of 30 (figure 2 of 2)". */
static void figure_note(const struct result_set *s, const char *mode, const struct report_family *panels, int np,
                        const struct page *pg, char *buf, size_t len)
{
    char note[256], kinds[320];
    grid_note(s, mode, panels, np, note, sizeof note);
    kinds_note(s, mode, panels, np, kinds, sizeof kinds);
    snprintf(buf, len, "%s, %s mode, %s", note, mode, kinds);
    if (pg->pages > 1)
        snprintf(buf + strlen(buf), len - strlen(buf), " · panels %d–%d of %d (figure %d of %d)", pg->first + 1,
                 pg->first + pg->n, np, pg->number, pg->pages);
}

/* Which run, which GPU, which grid, which pass, which page: the titles and
 * subtitles. A pass other than the forward is named (pass, pass_title);
 * the forward's meta.gp has neither key, which the scripts read as the
 * forward. */
static void run_meta(FILE *f, const struct result_set *s, const char *env, const char *mode,
                     const struct report_family *panels, int np, const struct page *pg)
{
    char gpu_name[128], note[256], kinds[320], with_mode[700];
    env_string(env, "gpu_name", gpu_name, sizeof gpu_name);
    grid_note(s, mode, panels, np, note, sizeof note);
    kinds_note(s, mode, panels, np, kinds, sizeof kinds);
    figure_note(s, mode, panels, np, pg, with_mode, sizeof with_mode);
    gp_string(f, "run", s->path);
    gp_string(f, "run_id", s->rows[0].run_id);
    gp_string(f, "gpu", s->rows[0].gpu);
    gp_string(f, "gpu_name", gpu_name[0] ? gpu_name : s->rows[0].gpu);
    gp_string(f, "mode", mode);
    if (pass_of(s) != ATTN_PASS_FWD) {
        gp_string(f, "pass", attn_pass_name(pass_of(s)));
        gp_string(f, "pass_title", report_pass_title(pass_of(s)));
    }
    gp_string(f, "grid_shape", note);
    gp_string(f, "grid_note", with_mode);
    gp_string(f, "kinds_note", kinds);
    kinds_note(s, NULL, NULL, 0, kinds, sizeof kinds);
    gp_string(f, "kinds_note_all", kinds);
    fprintf(f, "figure_page = %d\nfigure_pages = %d\n", pg->number, pg->pages);
}

/* The bandwidth figure: whether the pass has decode panels, the run's
 * read-only ceiling from the .env (NaN: run without --peak), and where it
 * has some the page's (bw_panel_file[], their values per panel and their
 * legend), their grid in words with the page among the bandwidth figure's
 * own pages, and their kv_len and GB/s ranges. */
static int bandwidth_meta(FILE *f, const struct result_set *s, const char *mode, const char *outdir, const char *env,
                          const struct report_family *panels, int np, const struct facts *fx, const struct page *pg)
{
    const int d0 = first_decode(panels, np);
    fprintf(f, "have_decode = %d\n", d0 < np);
    gp_number(f, "peak_read_gbps", report_env_value(env, "peak_read_gbps"));
    if (d0 == np) { /* nothing to draw: the script says so */
        fputs("nbw_panels = 0\n", f);
        return ATTN_OK;
    }
    gp_number(f, "bw_gbps_max", fx->gbps_max);
    fprintf(f, "bw_seq_min = %d\nbw_seq_max = %d\n", fx->decode_seq_min, fx->decode_seq_max);
    /* the page among the decode panels (the subtitle), and in fx's panel order */
    const struct page of_decodes = {.number = pg->number, .pages = pg->dpages, .first = pg->dfirst, .n = pg->dn};
    const struct page of_run = {.first = d0 + pg->dfirst, .n = pg->dn};
    char note[700];
    figure_note(s, mode, panels + d0, np - d0, &of_decodes, note, sizeof note);
    gp_string(f, "bw_grid_note", note);
    panel_counts(f, "panel_n_bandwidth", fx, &of_run, PANEL_GBPS, NULL);
    legend_of(f, "bandwidth", fx, &of_run, PANEL_GBPS, NULL);
    return panels_meta(f, outdir, "panel", "nbw_panels", "bw_panel_file", "bw_panel_title", panels + of_run.first,
                       of_run.n);
}

static int write_meta(const struct report_args *a, const struct result_set *s, const char *mode,
                      const struct report_family *panels, int np, const struct series_set *ss,
                      const struct facts *fx, const struct ratio_facts *rf, const struct page *pg,
                      const char *dir)
{
    const char *const *variants = ss->names;
    const int nv = ss->n;
    char path[1300], env[1100];
    report_env_beside(a->results, env, sizeof env);
    snprintf(path, sizeof path, "%s/meta.gp", dir);
    FILE *f = fopen(path, "w");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create", path);
    fputs("# written by build/report data; strings from the data are single-quoted (gp_quote)\n", f);
    run_meta(f, s, env, mode, panels, np, pg);
    int rc = panels_meta(f, a->outdir, "panel", "npanels", "panel_file", "panel_title", panels + pg->first, pg->n);
    fprintf(f, "nvariants = %d\n", nv);
    gp_string_array(f, "variant_name", variants, nv);
    if (rc == ATTN_OK) rc = style_meta(f, ss);
    fprintf(f, "have_cudnn = %d\n", has_variant(ss, REPORT_HEADLINE_REF));
    fprintf(f, "have_naive = %d\n", has_variant(ss, "naive"));
    fprintf(f, "seq_min = %d\nseq_max = %d\nseq_pad = %g\n", fx->seq_min, fx->seq_max, X_PAD);
    static const struct { const char *name; int col; } figures[] = {
        {"ms", PANEL_MS}, {"tflops", PANEL_TFLOPS}, {"mem", PANEL_MEM}, {"naive", PANEL_NAIVE},
        {"energy", PANEL_TFLOPS_W},
    };
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "panel_n_%s", figures[i].name);
        panel_counts(f, name, fx, pg, figures[i].col, NULL);
        legend_of(f, figures[i].name, fx, pg, figures[i].col, NULL);
    }
    int energy = 0; /* rows with a TFLOP per joule: none in a run without power readings */
    for (int p = 0; p < fx->np; p++)
        for (int v = 0; v < nv; v++) energy += *count_of(fx, p, PANEL_TFLOPS_W, v);
    fprintf(f, "have_energy = %d\n", energy > 0);
    headline_meta(f, ss, fx, pg);
    gp_number(f, "label_w", LABEL_W);
    gp_number(f, "label_h", LABEL_H);
    gp_number(f, "peak_tflops", report_env_value(env, "peak_gemm_bf16_tflops"));
    gp_number(f, "tflops_max", fx->tflops_max);
    memory_meta(f, ss, fx);
    if (rc == ATTN_OK) rc = torch_meta(f, variants, nv, fx, pg);
    if (rc == ATTN_OK) rc = ratio_meta(f, a, rf, nv, pg);
    if (rc == ATTN_OK) rc = bandwidth_meta(f, s, mode, a->outdir, env, panels, np, fx, pg);
    if (fclose(f) != 0 && rc == ATTN_OK) rc = ATTN_FAIL(ATTN_ERR, "%s: write failed", path);
    return rc;
}

/* ------------------------------------------------------------------ main */

static int facts_alloc(struct facts *fx, int nv, int np)
{
    *fx = (struct facts){.nv = nv, .np = np, .tflops_max = NAN, .gbps_max = NAN, .torch_hi = NAN};
    const size_t v = (size_t)nv + 1;
    fx->mem_max = malloc(v * sizeof *fx->mem_max);
    fx->hl_lo = malloc(v * sizeof *fx->hl_lo);
    fx->hl_hi = malloc(v * sizeof *fx->hl_hi);
    fx->hl_bar_lo = malloc(v * sizeof *fx->hl_bar_lo);
    fx->hl_bar_hi = malloc(v * sizeof *fx->hl_bar_hi);
    fx->best_peer = calloc(v, sizeof *fx->best_peer);
    fx->headline_show = calloc(v, sizeof *fx->headline_show);
    fx->n = calloc(((size_t)np + 1) * PANEL_NCOLS * v, sizeof *fx->n);
    if (!fx->mem_max || !fx->hl_lo || !fx->hl_hi || !fx->hl_bar_lo || !fx->hl_bar_hi || !fx->best_peer ||
        !fx->headline_show || !fx->n)
        return ATTN_FAIL(ATTN_ERR, "out of host memory");
    for (int i = 0; i < nv; i++) fx->mem_max[i] = fx->hl_lo[i] = fx->hl_hi[i] = fx->hl_bar_lo[i] = fx->hl_bar_hi[i] = NAN;
    return ATTN_OK;
}

static void facts_free(struct facts *fx)
{
    free(fx->mem_max);
    free(fx->hl_lo);
    free(fx->hl_hi);
    free(fx->hl_bar_lo);
    free(fx->hl_bar_hi);
    free(fx->best_peer);
    free(fx->headline_show);
    free(fx->n);
}

/* The panels' numbers, what meta.gp says of them, the headline's labels,
 * and the panel files. */
static int write_panels(const struct result_set *s, const char *mode, const char *outdir,
                        const struct report_family *panels, int np, const struct series_set *ss, struct facts *fx)
{
    const int nv = ss->n;
    struct panel_data *d = calloc((size_t)np + 1, sizeof *d);
    if (!d) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    int rc = ATTN_OK;
    for (int p = 0; p < np && rc == ATTN_OK; p++) {
        rc = collect_panel(s, mode, &panels[p], ss, fx->confidence, &d[p]);
        if (rc == ATTN_OK) {
            panel_facts(&d[p], p, panels[p].key.q_len > 0, nv, fx);
            tally_best_peer(s, mode, &panels[p], &d[p], ss, fx);
        }
    }
    if (rc == ATTN_OK) headline_range(ss, fx);
    /* the headline's drawn ratios, and how many of them are interleaved */
    for (int p = 0; p < np && rc == ATTN_OK; p++)
        for (int v = 0; v < nv; v++)
            for (int j = 0; j < d[p].nseq && fx->headline_show[v]; j++) {
                fx->hl_drawn += isfinite(*cell(&d[p], v, j, PANEL_CUDNN));
                fx->hl_interleaved += isfinite(*cell(&d[p], v, j, PANEL_CUDNN_LO));
            }
    for (int p = 0; p < np && rc == ATTN_OK; p++) {
        char path[1100];
        panel_name(outdir, "panel", &panels[p], path, sizeof path);
        rc = place_labels(&d[p], fx, ss);
        if (rc == ATTN_OK) rc = write_panel(path, &d[p], ss->names, nv);
    }
    for (int p = 0; p < np; p++) panel_data_free(&d[p]);
    free(d);
    return rc;
}

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create: %s", dir, strerror(errno));
    return ATTN_OK;
}

/* How many of n panels page k (from 0) holds. */
static int on_page(int n, int k)
{
    const int left = n - k * REPORT_PAGE_PANELS;
    return left <= 0 ? 0 : left < REPORT_PAGE_PANELS ? left : REPORT_PAGE_PANELS;
}

/* The meta.gp files of one pass's figures in dir: a figure per
 * REPORT_PAGE_PANELS panels (of the panels, or of the ratio panels where
 * those are more), each page after the first in dir/page-K; *pages of them.
 * The bandwidth figure's decode panels, a part of the panels, take as
 * many pages as they need of those. */
static int write_pages(const struct report_args *a, const struct result_set *s, const char *mode,
                       const struct report_family *panels, int np, const struct series_set *ss,
                       const struct facts *fx, const struct ratio_facts *rf, const char *dir, int *pages)
{
    const int most = np > rf->npanels ? np : rf->npanels;
    *pages = (most + REPORT_PAGE_PANELS - 1) / REPORT_PAGE_PANELS;
    int rc = ATTN_OK;
    const int decodes = np - first_decode(panels, np);
    for (int k = 0; k < *pages && rc == ATTN_OK; k++) {
        const int first = k * REPORT_PAGE_PANELS;
        struct page pg = {.number = k + 1, .pages = *pages, .first = first, .n = on_page(np, k),
                          .rfirst = first, .rn = on_page(rf->npanels, k),
                          .dfirst = first, .dn = on_page(decodes, k),
                          .dpages = (decodes + REPORT_PAGE_PANELS - 1) / REPORT_PAGE_PANELS};
        char page_dir[1200];
        if (k) snprintf(page_dir, sizeof page_dir, "%s/page-%d", dir, k + 1);
        else snprintf(page_dir, sizeof page_dir, "%s", dir);
        rc = make_dir(page_dir);
        if (rc == ATTN_OK) rc = write_meta(a, s, mode, panels, np, ss, fx, rf, &pg, page_dir);
    }
    return rc;
}

/* One pass's figures from s, the run's rows of that pass (report_pass_rows),
 * as a run of that pass alone would draw them in mode: the panel and ratio
 * files in a->outdir (a pass other than the forward's named with its
 * suffix, report_panel_stem), the meta.gp files in a->outdir for the
 * forward, else in a->outdir/PASS (bwd, fwd_bwd). by_shape is the whole
 * run's (report_by_shape), the same for every pass and for the page. */
static int pass_data(const struct report_args *a, const struct result_set *s, const char *mode, bool by_shape)
{
    char dir[1100];
    if (pass_of(s) == ATTN_PASS_FWD) snprintf(dir, sizeof dir, "%s", a->outdir);
    else snprintf(dir, sizeof dir, "%s/%s", a->outdir, attn_pass_name(pass_of(s)));
    struct series_set ss = {0};
    struct report_family *panels = NULL;
    int np = 0, pages = 0;
    double confidence = 0;
    struct facts fx = {0};
    struct ratio_facts rf = {.lo = NAN, .hi = NAN};
    int rc = series_build(s, &ss);
    if (rc == ATTN_OK) rc = report_confidence(a->thresholds, &confidence);
    if (rc == ATTN_OK) rc = report_families(s, mode, by_shape, &panels, &np);
    if (rc == ATTN_OK && !np) rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: no %s-mode rows to plot", s->path, mode);
    if (rc == ATTN_OK) rc = facts_alloc(&fx, ss.n, np);
    fx.confidence = confidence;
    fx.compare_run = report_compare_run(s);
    if (rc == ATTN_OK) rc = write_panels(s, mode, a->outdir, panels, np, &ss, &fx);
    if (rc == ATTN_OK && a->baseline) rc = write_ratio(a, s, by_shape, &ss, &rf);
    if (rc == ATTN_OK) rc = make_dir(dir);
    if (rc == ATTN_OK) rc = write_pages(a, s, mode, panels, np, &ss, &fx, &rf, dir, &pages);
    if (rc == ATTN_OK)
        printf("report: %s%s%d panel(s) in %d figure page(s), %d series, mode %s, data in %s%s%s\n",
               pass_of(s) == ATTN_PASS_FWD ? "" : attn_pass_name(pass_of(s)),
               pass_of(s) == ATTN_PASS_FWD ? "" : ": ", np, pages, ss.n, mode, dir,
               a->baseline && !rf.drawn ? "; no ratio figure: " : "", a->baseline && !rf.drawn ? rf.why : "");
    facts_free(&fx);
    free(rf.panels);
    free(rf.n);
    free(panels);
    series_free(&ss);
    return rc;
}

/* Every pass of the run in the figures' mode, each a family of figures of
 * its own (pass_data): no panel, series or ratio mixes two passes. */
int report_data(const struct report_args *a, const struct result_set *s)
{
    ATTN_TRY(make_dir(a->outdir));
    const char *mode = report_pick_mode(s, a->mode);
    enum attn_pass passes[ATTN_PASS_COUNT];
    const int npasses = report_passes(s, mode, passes);
    if (!npasses) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no %s-mode rows to plot", s->path, mode);
    const bool by_shape = report_by_shape(s);
    int rc = ATTN_OK;
    for (int i = 0; i < npasses && rc == ATTN_OK; i++) {
        struct result_set rows;
        rc = report_pass_rows(s, passes[i], &rows);
        if (rc != ATTN_OK) break;
        rc = pass_data(a, &rows, mode, by_shape);
        report_pass_rows_free(&rows);
    }
    return rc;
}

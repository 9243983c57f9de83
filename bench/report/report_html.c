/* report_html.c — `report html`: the report page of a run, from the top:
 *   1. what ran: GPU, date, code revision (each revision with its rows and
 *      their dates, and the .env's extended=/resumed= lines, when the rows
 *      come from several), grid, modes, variants, rows by status;
 *   2. the headline: sentences generated from the rows (who is fastest where,
 *      against cudnn_sdpa and naive), the run's measured peaks, and the best
 *      kernel per point in every mode, PyTorch peers (torch_*) competing;
 *   3. the figures found in OUTDIR (headline, throughput, latency, speedup,
 *      speedup_torch, memory, energy, each as several figures NAME-K when
 *      the run has more panels than one holds, and ratio with a baseline
 *      measured together with the run, else why it is not drawn); beside
 *      speedup_torch, when the run has PyTorch peers, its numbers as a table;
 *   4. one full table per mode: every point × variant, the point's best in
 *      bold, a row that is not ok showing its status with its reason as a tooltip;
 *      this table and those of 2 and 3 are grouped by the figures' panels
 *      (report_panel_of: head_dim × causal, or model shape), under their titles;
 *   5. the run's environment (.env).
 * A PyTorch peer's name is marked "(PyTorch)" wherever the page shows it.
 * Fits 1400 px without sideways scrolling (wide tables scroll inside their own
 * box); everything taken from an input file is HTML-escaped; no JavaScript.
 * tests/check_report.sh renders the page in headless Chromium. */
#include "report.h"
#include "../../common/errors.h"
#include "../../common/results.h"
#include "../../common/schema.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* A variant's name, a PyTorch peer's marked as such. */
static void put_variant(FILE *f, const char *variant)
{
    html_text(f, variant);
    if (report_is_peer(variant)) fputs(" <span class=\"peer\">(PyTorch)</span>", f);
}

static bool exists(const char *dir, const char *name)
{
    char p[1100];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0 && st.st_size > 0;
}

/* ------------------------------------------------------------ the .env */

struct env {
    int n, cap;
    bool found;
    char **key, **val;
};

/* Every KEY=VALUE line of the .env, in order (a key may come back: a run's
 * extended= and resumed= lines), whatever their length. */
static void env_read(const char *path, struct env *e)
{
    memset(e, 0, sizeof *e);
    FILE *f = fopen(path, "r");
    if (!f) return;
    e->found = true;
    char *line = NULL;
    size_t len = 0;
    while (getline(&line, &len, f) > 0) {
        line[strcspn(line, "\r\n")] = '\0';
        char *eq = strchr(line, '=');
        if (!eq || line[0] == '#') continue;
        if (e->n == e->cap) {
            int cap = e->cap ? 2 * e->cap : 64;
            char **k = realloc(e->key, (size_t)cap * sizeof *k);
            if (k) e->key = k;
            char **v = realloc(e->val, (size_t)cap * sizeof *v);
            if (v) e->val = v;
            if (!k || !v) break;
            e->cap = cap;
        }
        *eq = '\0';
        e->key[e->n] = strdup(line);
        e->val[e->n] = strdup(eq + 1);
        if (!e->key[e->n] || !e->val[e->n]) {
            free(e->key[e->n]);
            free(e->val[e->n]);
            break;
        }
        e->n++;
    }
    free(line);
    fclose(f);
}

/* The value of key, NULL when absent or empty. */
static const char *env_get(const struct env *e, const char *key)
{
    for (int i = e->n - 1; i >= 0; i--)
        if (!strcmp(e->key[i], key)) return e->val[i][0] ? e->val[i] : NULL;
    return NULL;
}

static double env_num(const struct env *e, const char *key)
{
    const char *v = env_get(e, key);
    char *end;
    double d = v ? strtod(v, &end) : NAN;
    return v && end != v && isfinite(d) ? d : NAN;
}

static void env_free(struct env *e)
{
    for (int i = 0; i < e->n; i++) {
        free(e->key[i]);
        free(e->val[i]);
    }
    free(e->key);
    free(e->val);
}

/* ------------------------------------------------------ points and modes */

/* A point is a struct attn_problem (attn.h): a row is at it when its key's
 * point is equal to it (result_key_problem, attn_problem_equal). */
static bool at_point(const struct result_key *k, const struct attn_problem *p)
{
    struct attn_problem q;
    result_key_problem(k, &q);
    return attn_problem_equal(&q, p);
}

/* A point and the panel it is shown in (report_panel_of), for sorting. */
struct placed_point {
    struct report_panel panel;
    struct attn_problem p;
};

/* Panels as the figures draw them (dtype, then report_panel_cmp: head_dim,
 * causal, and the model shape in a run of shapes), then S. */
static int cmp_point(const void *va, const void *vb)
{
    const struct placed_point *x = va, *y = vb;
    const struct attn_problem *a = &x->p, *b = &y->p;
    if (a->dtype != b->dtype) return (int)a->dtype - (int)b->dtype;
    const int panel = report_panel_cmp(&x->panel, &y->panel);
    if (panel) return panel;
    if (a->seq_len != b->seq_len) return a->seq_len - b->seq_len;
    if (a->batch != b->batch) return b->batch - a->batch;
    if (a->heads != b->heads) return a->heads - b->heads;
    return attn_kv_heads(b) - attn_kv_heads(a);
}

/* Whether a table row at b stays under the panel header of a's. */
static bool same_panel(const struct attn_problem *a, const struct attn_problem *b, bool by_shape)
{
    const struct report_panel pa = report_panel_of(a, by_shape), pb = report_panel_of(b, by_shape);
    return a->dtype == b->dtype && report_panel_equal(&pa, &pb);
}

/* The run's points, sorted by panel then S; *n of them (the caller frees). */
static struct attn_problem *collect_points(const struct result_set *s, bool by_shape, int *n)
{
    struct placed_point *placed = calloc(s->count ? s->count : 1, sizeof *placed);
    struct attn_problem *p = calloc(s->count ? s->count : 1, sizeof *p);
    *n = 0;
    if (!placed || !p) {
        free(placed);
        free(p);
        return NULL;
    }
    for (size_t i = 0; i < s->count; i++) {
        struct attn_problem q;
        result_key_problem(&s->rows[i].key, &q);
        bool seen = false;
        for (int j = 0; j < *n && !seen; j++) seen = attn_problem_equal(&q, &placed[j].p);
        if (!seen) placed[(*n)++] = (struct placed_point){report_panel_of(&q, by_shape), q};
    }
    qsort(placed, (size_t)*n, sizeof *placed, cmp_point);
    for (int i = 0; i < *n; i++) p[i] = placed[i].p;
    free(placed);
    return p;
}

static const struct result_rec *find_row(const struct result_set *s, const struct attn_problem *p,
                                         const char *mode, const char *variant)
{
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        if (at_point(k, p) && !strcmp(k->mode, mode) && !strcmp(k->variant, variant)) return &s->rows[i];
    }
    return NULL;
}

static bool point_has_mode(const struct result_set *s, const struct attn_problem *p, const char *mode)
{
    for (size_t i = 0; i < s->count; i++)
        if (at_point(&s->rows[i].key, p) && !strcmp(s->rows[i].key.mode, mode)) return true;
    return false;
}

/* The fastest ok row at p in mode, or NULL. */
static const struct result_rec *best_row(const struct result_set *s, const struct attn_problem *p,
                                         const char *mode)
{
    const struct result_rec *best = NULL;
    for (size_t i = 0; i < s->count; i++) {
        const struct result_rec *r = &s->rows[i];
        if (at_point(&r->key, p) && !strcmp(r->key.mode, mode) && report_row_ok(r) &&
            (!best || r->ms_median < best->ms_median))
            best = r;
    }
    return best;
}

/* What a mode measures, in a few words. */
static const char *mode_what(const char *mode)
{
    static const char *const what[MODE_COUNT] = {
        [MODE_COLD] = "L2 flushed before each call",
        [MODE_GRAPH] = "replayed as a CUDA graph: no launch gaps",
        [MODE_HOT] = "back-to-back calls, L2 hot",
    };
    for (int m = 0; m < MODE_COUNT; m++)
        if (!strcmp(mode, timing_mode_names[m])) return what[m];
    return "";
}

/* The modes present, in the page's order (report_modes); returns how many. */
static int modes_present(const struct result_set *s, const char *out[MODE_COUNT])
{
    int n = 0;
    for (int m = 0; m < MODE_COUNT; m++) {
        const char *name = timing_mode_names[report_modes[m]];
        for (size_t i = 0; i < s->count; i++)
            if (!strcmp(s->rows[i].key.mode, name)) {
                out[n++] = name;
                break;
            }
    }
    return n;
}

static bool has_variant(const char *const *variants, int nv, const char *name)
{
    for (int v = 0; v < nv; v++)
        if (!strcmp(variants[v], name)) return true;
    return false;
}

/* ------------------------------------------------------------ formatting */

static void put_ms(FILE *f, double ms)
{
    fprintf(f, "%.4g", ms);
}

static void put_tflops(FILE *f, double tf)
{
    if (!isfinite(tf)) fputs("—", f);
    else fprintf(f, tf >= 99.95 ? "%.0f" : tf >= 9.995 ? "%.1f" : "%.2f", tf);
}

/* The reasons NVML gave for holding the row's clocks down, as a short mark
 * (cap: the power cap; therm: a thermal limit; hw: a hardware slowdown or
 * power brake) whose tooltip lists them with the row's average power;
 * nothing for a row without such a reason or without a record. */
static void put_throttle(FILE *f, const struct result_rec *r)
{
    const unsigned long long t = r->throttle_known ? r->throttle & THROTTLE_LIMITING : 0;
    if (!t) return;
    char names[128];
    results_throttle_names(r->throttle, names, sizeof names);
    fputs(" <span class=\"thr\" title=\"throttle: ", f);
    html_text(f, names);
    if (isfinite(r->watts)) fprintf(f, "; %.0f W", r->watts);
    if (isfinite(r->tflops_per_watt)) fprintf(f, ", %.3g TFLOP/J", r->tflops_per_watt);
    fputs("\">", f);
    const char *sep = "";
    if (t & THROTTLE_SW_POWER_CAP) fputs("cap", f), sep = "+";
    if (t & THROTTLE_THERMAL) fprintf(f, "%stherm", sep), sep = "+";
    if (t & THROTTLE_HARDWARE) fprintf(f, "%shw", sep);
    fputs("</span>", f);
}

/* A panel's header: the figures' panel title (report_panel_title), and
 * the dtype when the run has several. */
static void put_panel(FILE *f, const struct attn_problem *p, bool with_dtype, bool by_shape)
{
    char title[64 + ATTN_VARLEN_MAX];
    const struct report_panel panel = report_panel_of(p, by_shape);
    html_text(f, report_panel_title(&panel, title, sizeof title));
    if (with_dtype) fprintf(f, ", %s", attn_dtype_name(p->dtype));
}

/* The point's label (attn_problem_label: its dtype named when not bf16). */
static void put_point(FILE *f, const struct attn_problem *p)
{
    char label[ATTN_LABEL_MAX];
    html_text(f, attn_problem_label(p, label, sizeof label));
}

/* ", bf16" or ", bf16 and fp16": the dtypes of the run's points, named once
 * since a point's label names only a dtype other than bf16. */
static void put_dtypes(FILE *f, const struct attn_problem *pts, int np)
{
    int named = 0;
    for (enum attn_dtype t = ATTN_BF16; t <= ATTN_FP16; t++) {
        bool used = false;
        for (int i = 0; i < np && !used; i++) used = pts[i].dtype == t;
        if (used) fprintf(f, "%s%s", named++ ? " and " : ", ", attn_dtype_name(t));
    }
    if (named > 1) fprintf(f, " (a point's dtype named when not %s)", attn_dtype_name(ATTN_BF16));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* "a", "a and b", "a, b and c" over sorted distinct ints. */
static void put_int_list(FILE *f, const int *v, int n)
{
    for (int i = 0; i < n; i++) fprintf(f, "%s%d", i == 0 ? "" : i == n - 1 ? " and " : ", ", v[i]);
}

static int distinct_sorted(int *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_int);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || v[m - 1] != v[i]) v[m++] = v[i];
    return m;
}

/* Whether q belongs to p's family of points: the same batch·S and dtype,
 * and the same heads·D, unless the run's panels are model shapes, whose
 * heads vary by design (the llm grid). */
static bool same_family(const struct attn_problem *p, const struct attn_problem *q, bool by_shape)
{
    return (long)p->batch * p->seq_len == (long)q->batch * q->seq_len && p->dtype == q->dtype &&
           (by_shape || (long)p->heads * p->head_dim == (long)q->heads * q->head_dim);
}

/* A model shape in a few words: "H=32 KV=8 D=128", "H=16 D=192",
 * "H=32 KV=8 D=128 varlen=uniform:0". */
static void put_shape(FILE *f, const struct attn_problem *p)
{
    fprintf(f, "H=%d", p->heads);
    if (attn_kv_heads(p) != p->heads) fprintf(f, " KV=%d", attn_kv_heads(p));
    fprintf(f, " D=%d", p->head_dim);
    if (attn_is_varlen(p)) {
        fputs(" varlen=", f);
        html_text(f, p->varlen);
    }
}

/* Whether pts[i] is marked in[] and the first marked point of its shape. */
static bool first_of_shape(const struct attn_problem *pts, const bool *in, int i)
{
    if (!in[i]) return false;
    for (int j = 0; j < i; j++)
        if (in[j] && pts[j].heads == pts[i].heads && attn_kv_heads(&pts[j]) == attn_kv_heads(&pts[i]) &&
            pts[j].head_dim == pts[i].head_dim && !strcmp(pts[j].varlen, pts[i].varlen))
            return false;
    return true;
}

/* The model shapes of the points marked in[], each once, in the points'
 * order: "3 model shapes (H=32 KV=8 D=128, H=64 KV=8 D=128, H=16 D=192)". */
static void put_shapes(FILE *f, const struct attn_problem *pts, int np, const bool *in)
{
    int n = 0;
    for (int i = 0; i < np; i++) n += first_of_shape(pts, in, i);
    fprintf(f, "%d model shape%s (", n, n == 1 ? "" : "s");
    for (int i = 0, k = 0; i < np; i++)
        if (first_of_shape(pts, in, i)) {
            fputs(k++ ? ", " : "", f);
            put_shape(f, &pts[i]);
        }
    fputs(")", f);
}

/* The grid in a line: the count and dtypes of the points, the largest
 * family of points (same_family: the FlashAttention grid's batch·S = 16384
 * and heads·D = 2048; the llm grid's 16384 tokens) by its axes, then the
 * other points. */
static void put_grid(FILE *f, const struct attn_problem *pts, int np, bool by_shape)
{
    int *seqs = malloc(3 * (size_t)np * sizeof *seqs);
    bool *in = calloc((size_t)np, sizeof *in);
    if (!seqs || !in) {
        free(seqs);
        free(in);
        return;
    }
    int *dims = seqs + np, *causal = seqs + 2 * np;
    int fam = 0, head = 0; /* the family's size and one of its points */
    bool dtypes = false;   /* more than one dtype in the run */
    for (int i = 0; i < np; i++) {
        int n = 0;
        for (int j = 0; j < np; j++) n += same_family(&pts[i], &pts[j], by_shape);
        if (n > fam) {
            fam = n;
            head = i;
        }
        dtypes |= pts[i].dtype != pts[0].dtype;
    }
    fprintf(f, "%d point%s", np, np == 1 ? "" : "s");
    put_dtypes(f, pts, np);
    int others = np;
    if (fam >= 2) {
        const struct attn_problem *h = &pts[head];
        int ns = 0, nd = 0, nc = 0;
        for (int i = 0; i < np; i++) {
            if (!same_family(h, &pts[i], by_shape)) continue;
            in[i] = true;
            seqs[ns++] = pts[i].seq_len;
            dims[nd++] = pts[i].head_dim;
            causal[nc++] = pts[i].causal;
        }
        others = np - ns;
        ns = distinct_sorted(seqs, ns);
        nd = distinct_sorted(dims, nd);
        nc = distinct_sorted(causal, nc);
        fprintf(f, ": %ld tokens", (long)h->batch * h->seq_len);
        if (!by_shape) fprintf(f, ", %ld hidden", (long)h->heads * h->head_dim);
        fputs(": S = ", f);
        bool doubling = ns >= 3;
        for (int i = 1; i < ns; i++) doubling &= seqs[i] == 2 * seqs[i - 1];
        if (doubling) fprintf(f, "%d … %d", seqs[0], seqs[ns - 1]);
        else put_int_list(f, seqs, ns);
        if (by_shape) {
            fputs(", ", f);
            put_shapes(f, pts, np, in);
        } else {
            fputs(", D = ", f);
            put_int_list(f, dims, nd);
        }
        fputs(nc == 2 ? ", causal and not" : causal[0] ? ", causal only" : ", non-causal", f);
        if (dtypes) fprintf(f, ", %s", attn_dtype_name(h->dtype));
    } else {
        fputs(":", f);
    }
    /* the rest, by name when few */
    if (others > 0) {
        if (fam >= 2) fprintf(f, "; + %d other point%s", others, others == 1 ? "" : "s");
        if (others <= 3) {
            fputs(fam >= 2 ? " (" : " ", f);
            int k = 0;
            for (int i = 0; i < np; i++) {
                if (in[i]) continue;
                if (k++) fputs("; ", f);
                put_point(f, &pts[i]);
            }
            if (fam >= 2) fputs(")", f);
        }
    }
    free(seqs);
    free(in);
}

/* ------------------------------------------------------------- sections */

/* A revision the run's rows come from: how many, and the span of their
 * timestamps (ISO 8601 UTC: they sort as text). */
struct revision {
    const char *rev, *first, *last;
    size_t rows;
};

/* The rows' revisions in the order first seen; *n of them (the caller
 * frees), NULL when out of memory. */
static struct revision *collect_revisions(const struct result_set *s, int *n)
{
    struct revision *r = calloc(s->count + 1, sizeof *r);
    *n = 0;
    for (size_t i = 0; r && i < s->count; i++) {
        const struct result_rec *row = &s->rows[i];
        int k = 0;
        while (k < *n && strcmp(r[k].rev, row->git_rev)) k++;
        if (k == *n) r[(*n)++] = (struct revision){row->git_rev, row->timestamp, row->timestamp, 0};
        r[k].rows++;
        if (row->timestamp[0] && (!r[k].first[0] || strcmp(row->timestamp, r[k].first) < 0)) r[k].first = row->timestamp;
        if (strcmp(row->timestamp, r[k].last) > 0) r[k].last = row->timestamp;
    }
    return r;
}

/* "2026-12-01T03:45:11Z git_rev=cbd4fe390dd5 rows_kept=250 command=..."
 * (an extended= or resumed= line of the .env) in words. */
static void put_continuation(FILE *f, const char *how, const char *value)
{
    char when[40], rev[64] = "?", kept[24] = "?";
    sscanf(value, "%39s", when);
    const char *r = strstr(value, " git_rev="), *k = strstr(value, " rows_kept=");
    if (r) sscanf(r + 9, "%63s", rev);
    if (k) sscanf(k + 11, "%23s", kept);
    fprintf(f, "%s ", how);
    html_text(f, when);
    fputs(" by <code>", f);
    html_text(f, rev);
    fputs("</code> (", f);
    html_text(f, kept);
    fputs(" rows kept)", f);
}

/* Date and code: the run's start and revision; for a run whose rows come
 * from several revisions (a run continued with --extend --force, or
 * --resume --force), each revision with its rows and when they were
 * measured, and the .env's continuations (extended=, resumed=), on the
 * page's first screen. */
static void section_revisions(FILE *f, const struct result_set *s, const struct env *e)
{
    int nrev = 0;
    struct revision *revs = collect_revisions(s, &nrev);
    const char *ts = env_get(e, "timestamp");
    fputs("<dt>Date</dt><dd>", f);
    html_text(f, ts ? ts : s->rows[0].timestamp[0] ? s->rows[0].timestamp : "unknown");
    int continued = 0;
    for (int i = 0; i < e->n; i++) continued += !strcmp(e->key[i], "extended") || !strcmp(e->key[i], "resumed");
    if (revs && (nrev > 1 || continued)) {
        const char *first = "", *last = "";
        for (int k = 0; k < nrev; k++) {
            if (revs[k].first[0] && (!first[0] || strcmp(revs[k].first, first) < 0)) first = revs[k].first;
            if (strcmp(revs[k].last, last) > 0) last = revs[k].last;
        }
        fputs(" (started); rows measured ", f);
        html_text(f, first);
        fputs(" – ", f);
        html_text(f, last);
    }
    fputs("</dd>\n", f);
    if (!revs || nrev <= 1) {
        fputs("<dt>Code revision</dt><dd><code>", f);
        const char *rev = env_get(e, "git_rev");
        html_text(f, rev ? rev : s->rows[0].git_rev[0] ? s->rows[0].git_rev : "unknown");
        fputs("</code></dd>\n", f);
    } else {
        fprintf(f, "<dt>Code revisions</dt><dd><span class=\"bad\">the rows come from %d revisions</span>:", nrev);
        for (int k = 0; k < nrev; k++) {
            fputs(k ? "; <code>" : " <code>", f);
            html_text(f, revs[k].rev[0] ? revs[k].rev : "unknown");
            fprintf(f, "</code> (%zu rows, ", revs[k].rows);
            html_text(f, revs[k].first);
            if (strcmp(revs[k].first, revs[k].last)) {
                fputs(" – ", f);
                html_text(f, revs[k].last);
            }
            fputs(")", f);
        }
        fputs("</dd>\n", f);
    }
    if (continued) {
        fputs("<dt>Continued</dt><dd>", f);
        for (int i = 0, k = 0; i < e->n; i++)
            if (!strcmp(e->key[i], "extended") || !strcmp(e->key[i], "resumed")) {
                fputs(k++ ? "; " : "", f);
                put_continuation(f, e->key[i], e->val[i]);
            }
        fputs("</dd>\n", f);
    }
    free(revs);
}

static void section_run(FILE *f, const struct report_args *a, const struct result_set *s,
                        const struct env *e, const struct attn_problem *pts, int np,
                        const char *const *modes, int nm, const char *const *variants, int nv,
                        bool by_shape)
{
    fputs("<div class=\"section\" id=\"run\">\n<h2>What ran</h2>\n<dl class=\"facts\">\n<dt>GPU</dt><dd>", f);
    const char *gpu_name = env_get(e, "gpu_name");
    if (gpu_name) {
        fputs("<b>", f);
        html_text(f, gpu_name);
        fputs("</b> (", f);
        html_text(f, s->rows[0].gpu);
        fputs(")", f);
    } else {
        fputs("<b>", f);
        html_text(f, s->rows[0].gpu);
        fputs("</b>", f);
    }
    const char *cc = env_get(e, "compute_capability"), *sms = env_get(e, "sm_count");
    if (cc) {
        fputs(", compute capability ", f);
        html_text(f, cc);
    }
    if (sms) {
        fputs(", ", f);
        html_text(f, sms);
        fputs(" SMs", f);
    }
    fputs("</dd>\n", f);
    section_revisions(f, s, e);
    fputs("<dt>Run</dt><dd><code>", f);
    html_text(f, s->rows[0].run_id);
    fputs("</code>, from <code>", f);
    html_text(f, a->results);
    fputs("</code></dd>\n<dt>Grid</dt><dd>", f);
    put_grid(f, pts, np, by_shape);
    fputs("</dd>\n<dt>Modes</dt><dd>", f);
    for (int m = 0; m < nm; m++) {
        size_t n = 0;
        for (size_t i = 0; i < s->count; i++) n += !strcmp(s->rows[i].key.mode, modes[m]);
        fprintf(f, "%s<b>%s</b> (%s; %zu rows)", m ? ", " : "", modes[m], mode_what(modes[m]), n);
    }
    fputs("</dd>\n<dt>Variants</dt><dd>", f);
    for (int v = 0; v < nv; v++) {
        fputs(v ? ", " : "", f);
        put_variant(f, variants[v]);
    }
    fprintf(f, "</dd>\n<dt>Rows</dt><dd>%zu:", s->count);
    for (int i = 0; i < STATUS_COUNT; i++) {
        size_t n = 0;
        for (size_t j = 0; j < s->count; j++) n += !strcmp(s->rows[j].status, row_status_names[i]);
        fprintf(f, "%s <span class=\"%s\">%zu %s</span>", i ? "," : "", i != STATUS_OK && n ? "bad" : "n", n,
                row_status_names[i]);
    }
    fputs("</dd>\n</dl>\n</div>\n", f);
}

/* The sentences of one mode: who is fastest where, the challenger of
 * cudnn_sdpa, the gain over naive, the highest throughput. */
static void headline_text(FILE *f, const struct result_set *s, const char *mode, const struct attn_problem *pts,
                          int np, const char *const *variants, int nv, double peak)
{
    int npts = 0, nobest = 0;
    int *wins = calloc((size_t)nv + 1, sizeof *wins), *order = malloc(((size_t)nv + 1) * sizeof *order);
    double *ratio = malloc((size_t)(np ? np : 1) * sizeof *ratio);
    if (!ratio || !wins || !order) {
        free(wins);
        free(order);
        free(ratio);
        return;
    }
    for (int i = 0; i < np; i++) {
        if (!point_has_mode(s, &pts[i], mode)) continue;
        npts++;
        const struct result_rec *b = best_row(s, &pts[i], mode);
        if (!b) {
            nobest++;
            continue;
        }
        for (int v = 0; v < nv; v++)
            if (!strcmp(variants[v], b->key.variant)) wins[v]++;
    }
    fprintf(f, "<p><b>%s</b>: ", mode);
    for (int v = 0; v < nv; v++) order[v] = v;
    for (int i = 1; i < nv; i++) /* by wins, stable */
        for (int j = i; j > 0 && wins[order[j]] > wins[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    if (nv == 0 || wins[order[0]] == 0) {
        fprintf(f, "no variant has an ok row at any of the %d points.</p>\n", npts);
        free(wins);
        free(order);
        free(ratio);
        return;
    }
    put_variant(f, variants[order[0]]);
    fprintf(f, " is fastest at %d of %d point%s", wins[order[0]], npts, npts == 1 ? "" : "s");
    for (int i = 1; i < nv && wins[order[i]]; i++) {
        fputs(i + 1 < nv && wins[order[i + 1]] ? ", " : " and ", f);
        put_variant(f, variants[order[i]]);
        fprintf(f, " at %d", wins[order[i]]);
    }
    fputs(".", f);
    if (nobest) fprintf(f, " At %d point%s no variant has an ok row.", nobest, nobest == 1 ? "" : "s");

    /* against cudnn_sdpa: the other variant of ours with the best median
     * ratio (the peers' standing is in the tables and speedup_torch) */
    if (has_variant(variants, nv, "cudnn_sdpa")) {
        int who = -1, who_n = 0;
        double who_med = 0;
        for (int v = 0; v < nv; v++) {
            if (!strcmp(variants[v], "cudnn_sdpa") || report_is_peer(variants[v])) continue;
            int n = 0;
            for (int i = 0; i < np; i++) {
                const struct result_rec *r = find_row(s, &pts[i], mode, variants[v]);
                const struct result_rec *c = find_row(s, &pts[i], mode, "cudnn_sdpa");
                if (report_row_ok(r) && report_row_ok(c)) ratio[n++] = c->ms_median / r->ms_median;
            }
            if (!n) continue;
            qsort(ratio, (size_t)n, sizeof *ratio, cmp_double);
            double med = n % 2 ? ratio[n / 2] : (ratio[n / 2 - 1] + ratio[n / 2]) / 2;
            if (who < 0 || med > who_med) {
                who = v;
                who_med = med;
                who_n = n;
            }
        }
        if (who >= 0) {
            int n = 0, ahead = 0;
            for (int i = 0; i < np; i++) {
                const struct result_rec *r = find_row(s, &pts[i], mode, variants[who]);
                const struct result_rec *c = find_row(s, &pts[i], mode, "cudnn_sdpa");
                if (report_row_ok(r) && report_row_ok(c)) {
                    ratio[n] = c->ms_median / r->ms_median;
                    ahead += ratio[n++] > 1;
                }
            }
            qsort(ratio, (size_t)n, sizeof *ratio, cmp_double);
            fputs(" Against the vendor kernel cudnn_sdpa, ", f);
            put_variant(f, variants[who]);
            if (fabs(ratio[0] - ratio[n - 1]) < 0.005) fprintf(f, " runs %.2f× as fast", ratio[0]);
            else fprintf(f, " runs %.2f–%.2f× as fast", ratio[0], ratio[n - 1]);
            fprintf(f, " (cudnn_sdpa ms / its ms; median %.2f×), ahead at %d of %d points.", who_med, ahead,
                    who_n);
        }
    }
    /* over naive */
    if (has_variant(variants, nv, "naive")) {
        int n = 0;
        for (int i = 0; i < np; i++) {
            const struct result_rec *b = best_row(s, &pts[i], mode);
            const struct result_rec *r = find_row(s, &pts[i], mode, "naive");
            if (b && report_row_ok(r) && b != r) ratio[n++] = r->ms_median / b->ms_median;
        }
        if (n) {
            qsort(ratio, (size_t)n, sizeof *ratio, cmp_double);
            fprintf(f, " The fastest kernel of a point beats naive by %.1f–%.1f×.", ratio[0], ratio[n - 1]);
        }
    }
    /* the highest throughput */
    const struct result_rec *top = NULL;
    for (size_t i = 0; i < s->count; i++) {
        const struct result_rec *r = &s->rows[i];
        if (!strcmp(r->key.mode, mode) && report_row_ok(r) && isfinite(r->tflops) &&
            (!top || r->tflops > top->tflops))
            top = r;
    }
    if (top) {
        fputs(" Highest throughput: ", f);
        put_tflops(f, top->tflops);
        fputs(" TFLOP/s (", f);
        put_variant(f, top->key.variant);
        struct attn_problem at;
        result_key_problem(&top->key, &at);
        fputs(", ", f);
        put_point(f, &at);
        fputs(")", f);
        if (isfinite(peak) && peak > 0)
            fprintf(f, ", %.0f%% of the measured bf16 GEMM peak", 100 * top->tflops / peak);
        fputs(".", f);
    }
    fputs("</p>\n", f);
    free(wins);
    free(order);
    free(ratio);
}

/* A table row's start: the panel's header row when p opens a new panel
 * (prev NULL or of another panel), then the point's S, B and H cells. */
static void put_point_start(FILE *f, const struct attn_problem *p, const struct attn_problem *prev,
                            int columns, bool dtypes, bool by_shape)
{
    if (!prev || !same_panel(p, prev, by_shape)) {
        fprintf(f, "<tr class=\"panel\"><th colspan=\"%d\">", columns);
        put_panel(f, p, dtypes, by_shape);
        fputs("</th></tr>\n", f);
    }
    fprintf(f, "<tr><td>%d</td><td>%d</td><td>%d</td>", p->seq_len, p->batch, p->heads);
}

/* The best kernel per point: a column group per mode. */
static void headline_table(FILE *f, const struct result_set *s, const struct attn_problem *pts, int np,
                           const char *const *modes, int nm, const char *const *variants, int nv,
                           bool by_shape)
{
    bool cudnn = has_variant(variants, nv, "cudnn_sdpa"), naive = has_variant(variants, nv, "naive");
    int per = 3 + cudnn + naive;
    bool dtypes = false;
    for (int i = 1; i < np; i++) dtypes |= pts[i].dtype != pts[0].dtype;
    fputs("<div class=\"scroll\"><table class=\"best\">\n<thead><tr><th colspan=\"3\">point</th>", f);
    for (int m = 0; m < nm; m++) fprintf(f, "<th colspan=\"%d\" class=\"grp\">%s</th>", per, modes[m]);
    fputs("</tr>\n<tr><th>S</th><th>B</th><th>H</th>", f);
    for (int m = 0; m < nm; m++) {
        fputs("<th class=\"grp\">fastest</th><th>ms</th><th>TFLOP/s</th>", f);
        if (cudnn) fputs("<th title=\"cudnn_sdpa ms / fastest ms\">× cudnn_sdpa</th>", f);
        if (naive) fputs("<th title=\"naive ms / fastest ms\">× naive</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    for (int i = 0; i < np; i++) {
        const struct attn_problem *p = &pts[i];
        put_point_start(f, p, i ? &pts[i - 1] : NULL, 3 + per * nm, dtypes, by_shape);
        for (int m = 0; m < nm; m++) {
            const struct result_rec *b = best_row(s, p, modes[m]);
            if (!b) {
                fprintf(f, "<td colspan=\"%d\" class=\"%s grp\">%s</td>", per,
                        point_has_mode(s, p, modes[m]) ? "gap" : "none",
                        point_has_mode(s, p, modes[m]) ? "no ok row" : "not run");
                continue;
            }
            fputs("<td class=\"grp name\">", f);
            put_variant(f, b->key.variant);
            fputs("</td><td>", f);
            put_ms(f, b->ms_median);
            fputs("</td><td>", f);
            put_tflops(f, b->tflops);
            fputs("</td>", f);
            const char *const vs[2] = {cudnn ? "cudnn_sdpa" : NULL, naive ? "naive" : NULL};
            for (int k = 0; k < 2; k++) {
                if (!vs[k]) continue;
                const struct result_rec *r = find_row(s, p, modes[m], vs[k]);
                if (report_row_ok(r)) fprintf(f, "<td>%.2f</td>", r->ms_median / b->ms_median);
                else fprintf(f, "<td class=\"none\">%s</td>", r ? r->status : "—");
            }
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
}

static void section_headline(FILE *f, const struct result_set *s, const struct env *e, const struct attn_problem *pts,
                             int np, const char *const *modes, int nm, const char *const *variants, int nv,
                             bool by_shape)
{
    double peak = env_num(e, "peak_gemm_bf16_tflops"), copy = env_num(e, "peak_copy_gbps");
    fputs("<div class=\"section\" id=\"headline\">\n<h2>Headline</h2>\n", f);
    for (int m = 0; m < nm; m++) headline_text(f, s, modes[m], pts, np, variants, nv, peak);
    fputs("<p class=\"peaks\">Measured at the start of the run: ", f);
    if (isfinite(peak) || isfinite(copy)) {
        if (isfinite(peak)) {
            fprintf(f, "bf16 GEMM <b>%.1f TFLOP/s</b>", peak);
            const char *n = env_get(e, "peak_gemm_n");
            if (n) {
                fputs(" (", f);
                html_text(f, n);
                fputs("³ cuBLAS)", f);
            }
        }
        if (isfinite(copy)) fprintf(f, "%sdevice-to-device copy <b>%.0f GB/s</b>", isfinite(peak) ? ", " : "", copy);
        fputs(".", f);
    } else {
        fputs(e->found ? "no peaks (the run was made without <code>--peak</code>)."
                       : "no peaks known (no environment file found).",
              f);
    }
    fputs("</p>\n<h3>Fastest kernel per point</h3>\n"
          "<p class=\"note\">ms: median per call; × cudnn_sdpa and × naive: their ms over the fastest "
          "kernel's (1.00 where it is the fastest).</p>\n",
          f);
    headline_table(f, s, pts, np, modes, nm, variants, nv, by_shape);
    fputs("</div>\n", f);
}

/* Any row at p in mode, whose key names the point for report_best_peer. */
static const struct result_key *point_key(const struct result_set *s, const struct attn_problem *p,
                                          const char *mode)
{
    for (size_t i = 0; i < s->count; i++)
        if (at_point(&s->rows[i].key, p) && !strcmp(s->rows[i].key.mode, mode)) return &s->rows[i].key;
    return NULL;
}

/* The speedup_torch figure's numbers, at every point of the figures' mode:
 * the fastest PyTorch peer (report_best_peer) and its ms, and each of our
 * variants' speedup over it, its ms over ours (> 1, ours is faster: shaded).
 * Nothing when the run has no peer or none of ours. */
static void torch_table(FILE *f, const struct result_set *s, const char *mode, const struct attn_problem *pts,
                        int np, const char *const *variants, int nv, bool by_shape)
{
    int *ours = malloc(((size_t)nv + 1) * sizeof *ours), no = 0, npeers = 0;
    if (!ours) return;
    for (int v = 0; v < nv; v++) {
        if (report_is_peer(variants[v])) npeers++;
        else ours[no++] = v;
    }
    if (!npeers || !no) {
        free(ours);
        return;
    }
    bool dtypes = false;
    for (int i = 1; i < np; i++) dtypes |= pts[i].dtype != pts[0].dtype;
    fputs("<div class=\"fig\" id=\"table-speedup-torch\">\n<p class=\"cap\">Speedup over the best PyTorch peer, ", f);
    html_text(f, mode);
    fprintf(f, " mode</p>\n<p class=\"note\">At each point the fastest of the run's %d PyTorch peers and its "
               "median ms; for each of our variants, that ms over the variant's (&gt; 1: ours is faster, "
               "shaded).</p>\n",
            npeers);
    fprintf(f, "<div class=\"scroll\"><table class=\"best\">\n<thead><tr><th colspan=\"3\">point</th>"
               "<th colspan=\"2\" class=\"grp\">fastest PyTorch peer</th><th colspan=\"%d\" class=\"grp\">"
               "speedup over it</th></tr>\n<tr><th>S</th><th>B</th><th>H</th><th class=\"grp\">peer</th><th>ms</th>",
            no);
    for (int k = 0; k < no; k++) {
        fputs(k ? "<th>" : "<th class=\"grp\">", f);
        html_text(f, variants[ours[k]]);
        fputs("</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    const struct attn_problem *prev = NULL;
    for (int i = 0; i < np; i++) {
        const struct attn_problem *p = &pts[i];
        const struct result_key *k = point_key(s, p, mode);
        if (!k) continue;
        put_point_start(f, p, prev, 5 + no, dtypes, by_shape);
        prev = p;
        const struct result_rec *best = report_best_peer(s, k);
        if (!best) {
            fprintf(f, "<td colspan=\"%d\" class=\"gap grp\">no ok PyTorch row</td></tr>\n", 2 + no);
            continue;
        }
        fputs("<td class=\"grp name\">", f);
        html_text(f, best->key.variant);
        fputs("</td><td>", f);
        put_ms(f, best->ms_median);
        fputs("</td>", f);
        for (int j = 0; j < no; j++) {
            const struct result_rec *r = find_row(s, p, mode, variants[ours[j]]);
            const char *grp = j ? "" : " grp"; /* the first column opens the group */
            if (!report_row_ok(r)) {
                fprintf(f, "<td class=\"none%s\">%s</td>", grp, r ? r->status : "—");
                continue;
            }
            const double speedup = best->ms_median / r->ms_median;
            fprintf(f, "<td class=\"%s%s\">%.2f</td>", speedup > 1 ? "best" : "num", grp, speedup);
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n</div>\n", f);
    free(ours);
}

/* A figure's page k (1: NAME, k >= 2: NAME-k) found beside the page:
 * whether its PNG and SVG are there. */
static bool figure_page(const char *dir, const char *name, int k, bool *png, bool *svg, char *stem, size_t len)
{
    if (k == 1) snprintf(stem, len, "%s", name);
    else snprintf(stem, len, "%s-%d", name, k);
    char file[96];
    snprintf(file, sizeof file, "%s.png", stem);
    *png = exists(dir, file);
    snprintf(file, sizeof file, "%s.svg", stem);
    *svg = exists(dir, file);
    return *png || *svg;
}

static void section_figures(FILE *f, const struct report_args *a, const struct result_set *s,
                            const struct attn_problem *pts, int np, const char *const *variants, int nv,
                            bool by_shape, const char *ratio_why)
{
    static const char *const figs[][3] = {
        {"headline", "Each fused kernel's speed relative to cudnn_sdpa", ""},
        {"throughput", "Throughput vs sequence length", ""},
        {"latency", "Latency vs sequence length", ""},
        {"speedup", "Speedup over naive", ""},
        {"speedup_torch", "Speedup of our variants over the best PyTorch peer", ""},
        {"memory", "Extra device memory", ""},
        {"energy", "Energy efficiency: TFLOP per joule", ""},
        {"ratio", "Current / baseline per row", "baseline"},
    };
    fputs("<div class=\"section\" id=\"figures\">\n<h2>Figures</h2>\n", f);
    int shown = 0;
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        if (figs[i][2][0] && !a->baseline) continue;
        if (figs[i][2][0] && ratio_why[0]) {
            fprintf(f, "<div class=\"fig\" id=\"fig-%s\">\n<p class=\"cap\">%s: not drawn</p>\n<p class=\"note\">",
                    figs[i][0], figs[i][1]);
            html_text(f, ratio_why);
            fputs(". A ratio of two runs measured apart holds the GPU's drift between the two sessions (clocks, "
                  "power, neighbours: a few percent per row) as much as the code's change; <code>make ab</code> "
                  "measures both sides interleaved in one run, and its pair is drawn here.</p>\n</div>\n", f);
            continue;
        }
        char stem[80];
        bool png, svg;
        int pages = 0;
        while (figure_page(a->outdir, figs[i][0], pages + 1, &png, &svg, stem, sizeof stem)) pages++;
        for (int k = 1; k <= pages; k++) {
            figure_page(a->outdir, figs[i][0], k, &png, &svg, stem, sizeof stem);
            fprintf(f, "<div class=\"fig\" id=\"fig-%s\">\n<p class=\"cap\">%s", stem, figs[i][1]);
            if (pages > 1) fprintf(f, " (figure %d of %d)", k, pages);
            if (svg) fprintf(f, " (<a href=\"%s.svg\">SVG</a>)", stem);
            fprintf(f, "</p>\n<a href=\"%s.%s\"><img src=\"%s.%s\" alt=\"%s\"></a>\n</div>\n", stem,
                    svg ? "svg" : "png", stem, png ? "png" : "svg", figs[i][1]);
            shown++;
        }
        /* the figure's numbers, also where the figure was not drawn */
        if (!strcmp(figs[i][0], "speedup_torch"))
            torch_table(f, s, report_pick_mode(s, a->mode), pts, np, variants, nv, by_shape);
    }
    if (!shown) fputs("<p>No figures beside this page (<code>make plots</code> draws them).</p>\n", f);
    fputs("</div>\n", f);
}

static void full_table(FILE *f, const struct result_set *s, const char *mode,
                       const struct attn_problem *pts, int np, const char *const *variants, int nv,
                       bool by_shape)
{
    bool dtypes = false;
    for (int i = 1; i < np; i++) dtypes |= pts[i].dtype != pts[0].dtype;
    fprintf(f, "<h3 id=\"table-%s\">%s <span class=\"note\">(%s)</span></h3>\n", mode, mode, mode_what(mode));
    bool recorded = false; /* the note only for a run that recorded the reasons */
    for (size_t i = 0; i < s->count && !recorded; i++) recorded = s->rows[i].throttle_known;
    if (recorded)
        fputs("<p class=\"note\">A mark beside TFLOP/s says why NVML held the row's clocks down: <span class=\"thr\">cap</span> "
          "the board's power cap, <span class=\"thr\">therm</span> a thermal limit, <span class=\"thr\">hw</span> a "
          "hardware slowdown; hover it for the reasons, the row's average power and its TFLOP per joule.</p>\n", f);
    fputs("<div class=\"scroll\"><table class=\"full\">\n<thead><tr><th colspan=\"3\">point</th>", f);
    for (int v = 0; v < nv; v++) {
        fputs("<th colspan=\"2\" class=\"grp\">", f);
        put_variant(f, variants[v]);
        fputs("</th>", f);
    }
    fputs("</tr>\n<tr><th>S</th><th>B</th><th>H</th>", f);
    for (int v = 0; v < nv; v++) fputs("<th class=\"grp\">ms</th><th>TFLOP/s</th>", f);
    fputs("</tr></thead>\n<tbody>\n", f);
    const struct attn_problem *prev = NULL;
    for (int i = 0; i < np; i++) {
        const struct attn_problem *p = &pts[i];
        if (!point_has_mode(s, p, mode)) continue;
        put_point_start(f, p, prev, 3 + 2 * nv, dtypes, by_shape);
        prev = p;
        const struct result_rec *b = best_row(s, p, mode);
        for (int v = 0; v < nv; v++) {
            const struct result_rec *r = find_row(s, p, mode, variants[v]);
            if (report_row_ok(r)) {
                bool best = r == b;
                fprintf(f, "<td class=\"grp%s\">", best ? " best" : "");
                put_ms(f, r->ms_median);
                fputs(best ? "</td><td class=\"best\">" : "</td><td>", f);
                put_tflops(f, r->tflops);
                put_throttle(f, r);
                fputs("</td>", f);
            } else if (r) {
                const char *why = r->reason;
                fputs("<td colspan=\"2\" class=\"grp st\" title=\"", f);
                html_text(f, why[0] ? why : r->status);
                fputs("\">", f);
                html_text(f, r->status);
                fputs("</td>", f);
            } else {
                fputs("<td colspan=\"2\" class=\"grp none\" title=\"no row\">—</td>", f);
            }
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
}

static void section_env(FILE *f, const struct env *e, const char *path)
{
    fputs("<div class=\"section\" id=\"environment\">\n<h2>Environment</h2>\n<p class=\"note\">From <code>", f);
    html_text(f, path);
    fputs("</code>.</p>\n", f);
    if (!e->found) {
        fputs("<p>No environment file found.</p>\n</div>\n", f);
        return;
    }
    fputs("<table class=\"env\">\n", f);
    for (int i = 0; i < e->n; i++) {
        fputs("<tr><th>", f);
        html_text(f, e->key[i]);
        fputs("</th><td>", f);
        html_text(f, e->val[i]);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n</div>\n", f);
}

static const char style[] =
    "*{box-sizing:border-box}\n"
    "body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1320px;margin:0 auto;"
    "padding:0 24px 3em;color:#222;background:#fff}\n"
    "h1{font-size:1.6em;margin:.8em 0 .2em}h2{margin:1.6em 0 .5em;padding-bottom:.15em;border-bottom:2px solid #ddd}"
    "h3{margin:1.3em 0 .4em}\n"
    ".toc{margin:.4em 0 1em;padding:.4em .8em;background:#f4f6f8;border-radius:4px}"
    ".toc a{margin-right:.3em}\n"
    "code{font-size:.92em;overflow-wrap:anywhere}a{color:#0b5cad}\n"
    "dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2em 1.2em;margin:0}"
    "dl.facts dt{font-weight:600;color:#555}dl.facts dd{margin:0;overflow-wrap:anywhere}\n"
    ".note{color:#666;font-size:.9em;font-weight:normal}.bad{color:#b00;font-weight:600}\n"
    ".scroll{max-width:100%;overflow-x:auto}\n"
    "table{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums;margin:.3em 0}\n"
    "td,th{border:1px solid #d4d4d4;padding:2px 7px;text-align:right;white-space:nowrap}"
    "thead th{background:#eef0f2;text-align:center}\n"
    "tr.panel th{background:#f7f7f7;text-align:left;font-weight:600}\n"
    ".grp{border-left:2px solid #999}td.name{text-align:left}\n"
    "td.best{font-weight:700;background:#e3f4e3}span.peer{color:#777;font-size:.85em;font-weight:normal}\n"
    "td.st{color:#b00;text-align:center;cursor:help}td.gap{color:#b00;text-align:center}"
    "span.thr{font-size:75%;color:#a60;cursor:help}"
    "td.none{color:#999;text-align:center}\n"
    "table.env th{text-align:left;background:#f4f4f4;font-weight:600}"
    "table.env td{text-align:left;white-space:normal;overflow-wrap:anywhere}\n"
    ".fig{margin:1em 0 2em}.cap{margin:0 0 .3em;font-weight:600;margin-bottom:.3em}\n"
    "img{display:block;max-width:100%;height:auto;border:1px solid #ddd}\n";

int report_html(const struct report_args *a, const struct result_set *s)
{
    char path[1100], envpath[1100];
    snprintf(path, sizeof path, "%s/report.html", a->outdir);
    if (a->env) snprintf(envpath, sizeof envpath, "%s", a->env);
    else report_env_beside(a->results, envpath, sizeof envpath);

    /* the ratio figure's rule (report_measured_together), for saying why
     * it is not drawn */
    char ratio_why[400] = "";
    if (a->baseline) {
        struct result_set base;
        ATTN_TRY(results_read(a->baseline, &base));
        report_measured_together(s, &base, ratio_why, sizeof ratio_why);
        results_free(&base);
    }
    struct env e;
    env_read(envpath, &e);
    int np = 0, nm, nv = 0;
    const bool by_shape = report_by_shape(s);
    struct attn_problem *pts = collect_points(s, by_shape, &np);
    const char *modes[MODE_COUNT], **variants = NULL;
    nm = modes_present(s, modes);
    int rc = report_variants(s, &variants, &nv);
    FILE *f = pts && rc == ATTN_OK ? fopen(path, "w") : NULL;
    if (!f) {
        if (rc == ATTN_OK)
            rc = pts ? ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create: %s", path, strerror(errno))
                     : ATTN_FAIL(ATTN_ERR, "out of host memory");
        free(pts);
        free(variants);
        env_free(&e);
        return rc;
    }

    const char *gpu = env_get(&e, "gpu_name");
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>attnbench report: ",
          f);
    html_text(f, gpu ? gpu : s->rows[0].gpu);
    fputs(", run ", f);
    html_text(f, s->rows[0].run_id);
    fprintf(f, "</title>\n<style>\n%s</style></head><body>\n<h1>attnbench report: ", style);
    html_text(f, gpu ? gpu : s->rows[0].gpu);
    fputs(", run ", f);
    html_text(f, s->rows[0].run_id);
    fputs("</h1>\n<div class=\"toc\"><a href=\"#run\">What ran</a> · <a href=\"#headline\">Headline</a> · "
          "<a href=\"#figures\">Figures</a> · Tables:",
          f);
    for (int m = 0; m < nm; m++) fprintf(f, " <a href=\"#table-%s\">%s</a>", modes[m], modes[m]);
    fputs(" · <a href=\"#environment\">Environment</a></div>\n", f);

    section_run(f, a, s, &e, pts, np, modes, nm, variants, nv, by_shape);
    section_headline(f, s, &e, pts, np, modes, nm, variants, nv, by_shape);
    section_figures(f, a, s, pts, np, variants, nv, by_shape, ratio_why);
    fputs("<div class=\"section\" id=\"tables\">\n<h2>Full tables</h2>\n<p class=\"note\">Every point × variant: median ms "
          "per call and TFLOP/s; the point's fastest in bold; a row that is not ok shows its status "
          "(hover for the reason).</p>\n",
          f);
    for (int m = 0; m < nm; m++) full_table(f, s, modes[m], pts, np, variants, nv, by_shape);
    fputs("</div>\n", f);
    section_env(f, &e, envpath);
    fputs("</body></html>\n", f);

    free(pts);
    free(variants);
    env_free(&e);
    if (fclose(f) != 0) return ATTN_FAIL(ATTN_ERR, "%s: write failed", path);
    printf("report: %s\n", path);
    return ATTN_OK;
}

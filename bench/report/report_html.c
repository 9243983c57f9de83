/* report_html.c — `report html`: the report page of a run, from the top:
 *   1. what ran: GPU, date, code revision (each revision with its rows and
 *      their dates, and the .env's extended=/resumed= lines, when the rows
 *      come from several), grid, the passes (in a run of any but the
 *      forward), modes, the regime of the rows (burst, sustained: how many
 *      settled), how they were measured (in turns: a compare run; or row
 *      after row), the inputs' init where it is not uniform, variants, rows
 *      by status;
 *   2. the headline: sentences generated from the rows per pass, mode and
 *      regime (who is fastest where, against cudnn_sdpa and naive), "Where
 *      it stands" (each variant of ours on the headline at each panel's
 *      largest S), the run's measured peaks, and the best kernel per point
 *      in every mode and regime, a table per pass, PyTorch peers (torch_*)
 *      competing;
 *   3. the figures found in OUTDIR (headline, throughput, bandwidth,
 *      latency, speedup, speedup_torch, memory, energy, each as several
 *      figures NAME-K when the run has more panels than one holds, each
 *      pass's in turn: NAME, NAME-bwd, NAME-fwd_bwd; and ratio with a
 *      baseline measured together with the run, else why it is not drawn);
 *      beside speedup_torch, when the run has PyTorch peers, its numbers as
 *      a table;
 *   4. for a run with decode rows (q_len < seq_len), a section of them:
 *      how a decode's bytes are counted and against which ceiling (the
 *      .env's peak_read_gbps, or that it was not measured), the highest
 *      GB/s, and per mode and regime every decode point × variant with its
 *      ms, GB/s (report_row_gbps), % of the read ceiling and TFLOP/s, the
 *      point's fastest in bold;
 *   5. one full table per pass, mode and regime, the backward's and forward
 *      + backward's in sections of their own (tables-bwd, tables-fwd_bwd):
 *      every point × variant, the point's best in bold, a row that is not
 *      ok showing its status with its reason as a tooltip, a sustained row
 *      its settled SM clock and board power; this table and those of 2, 3
 *      and 4 are grouped by the figures' panels (report_panel_of: pass ×
 *      head_dim × causal, or pass × model shape, and a decode's q_len),
 *      under their titles;
 *   6. the run's environment (.env).
 * No sentence or table mixes burst and sustained rows, or the rows of two
 * passes (struct view), and each says its regime, and its pass when not
 * the forward. Every ratio between two rows is the figures'
 * (report_speed_ratio): in a compare run the interleaved Hodges–Lehmann
 * estimate, "1.04× [1.03, 1.05]" with its interval (a table cell's tooltip),
 * else of medians, said to be measured row after row.
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

/* Panels as the figures draw them (the pass, dtype, then report_panel_cmp:
 * head_dim, causal, and the model shape in a run of shapes), then the
 * inputs' init (uniform first), then S. */
static int cmp_point(const void *va, const void *vb)
{
    const struct placed_point *x = va, *y = vb;
    const struct attn_problem *a = &x->p, *b = &y->p;
    if (a->pass != b->pass) return (int)a->pass - (int)b->pass;
    if (a->dtype != b->dtype) return (int)a->dtype - (int)b->dtype;
    const int panel = report_panel_cmp(&x->panel, &y->panel);
    if (panel) return panel;
    if (a->init_sigma != b->init_sigma) return a->init_sigma < b->init_sigma ? -1 : 1;
    if (a->seq_len != b->seq_len) return a->seq_len - b->seq_len;
    if (a->batch != b->batch) return b->batch - a->batch;
    if (a->heads != b->heads) return a->heads - b->heads;
    return attn_kv_heads(b) - attn_kv_heads(a);
}

/* Whether a table row at b stays under the panel header of a's: the same
 * panel, dtype and init (the header names an init that is not uniform). */
static bool same_panel(const struct attn_problem *a, const struct attn_problem *b, bool by_shape)
{
    const struct report_panel pa = report_panel_of(a, by_shape), pb = report_panel_of(b, by_shape);
    return a->dtype == b->dtype && a->init_sigma == b->init_sigma && report_panel_equal(&pa, &pb);
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

/* A view of the rows: one pass, one timing mode and one regime. The page's
 * sentences and tables are per view, so that no line of them mixes the
 * forward's rows with the backward's, or burst with sustained rows; each
 * says its regime, and its pass where it is not the forward. */
struct view {
    enum attn_pass pass;
    const char *mode, *regime;
    bool sustained;
    bool both; /* the run holds both regimes */
};

static bool in_view(const struct result_key *k, const struct view *v)
{
    return k->pass == (int)v->pass && !strcmp(k->mode, v->mode) && !strcmp(k->regime, v->regime);
}

/* "cold" or, when the run holds both regimes, "cold-sustained", and a pass
 * other than the forward after it ("cold-bwd", "cold-sustained-fwd_bwd"):
 * the view in an element id (the forward's burst view keeps the mode's own
 * id). */
static const char *view_id(const struct view *v, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s%s", v->mode, v->both && v->sustained ? "-sustained" : "",
             v->pass == ATTN_PASS_FWD ? "" : "-", v->pass == ATTN_PASS_FWD ? "" : attn_pass_name(v->pass));
    return buf;
}

static const struct result_rec *find_row(const struct result_set *s, const struct attn_problem *p,
                                         const struct view *view, const char *variant)
{
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        if (at_point(k, p) && in_view(k, view) && !strcmp(k->variant, variant)) return &s->rows[i];
    }
    return NULL;
}

static bool point_in_view(const struct result_set *s, const struct attn_problem *p, const struct view *view)
{
    for (size_t i = 0; i < s->count; i++)
        if (at_point(&s->rows[i].key, p) && in_view(&s->rows[i].key, view)) return true;
    return false;
}

/* The fastest ok row at p in the view, or NULL. */
static const struct result_rec *best_row(const struct result_set *s, const struct attn_problem *p,
                                         const struct view *view)
{
    const struct result_rec *best = NULL;
    for (size_t i = 0; i < s->count; i++) {
        const struct result_rec *r = &s->rows[i];
        if (at_point(&r->key, p) && in_view(&r->key, view) && report_row_ok(r) &&
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

/* The most views a run has: a pass × mode × regime each. */
#define MAX_VIEWS (ATTN_PASS_COUNT * MODE_COUNT * REGIME_COUNT)

/* The views present: per pass (fwd, bwd, fwd_bwd) each mode of modes, its
 * burst rows, then its sustained ones; returns how many. */
static int views_present(const struct result_set *s, const char *const *modes, int nm, struct view out[MAX_VIEWS])
{
    bool regimes[REGIME_COUNT] = {false};
    for (size_t i = 0; i < s->count; i++) regimes[report_sustained(&s->rows[i].key) ? REGIME_SUSTAINED : REGIME_BURST] = true;
    int n = 0;
    for (int p = 0; p < ATTN_PASS_COUNT; p++)
        for (int m = 0; m < nm; m++)
            for (int g = 0; g < REGIME_COUNT; g++) {
                const struct view v = {(enum attn_pass)p, modes[m], regime_names[g], g == REGIME_SUSTAINED,
                                       regimes[REGIME_BURST] && regimes[REGIME_SUSTAINED]};
                for (size_t i = 0; i < s->count; i++)
                    if (in_view(&s->rows[i].key, &v)) {
                        out[n++] = v;
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

/* A panel's header: the figures' panel title (report_panel_title) and the
 * dtype when the run has several (the inputs' init is the page's "Inputs"
 * line and, where a run holds several, the series' names). */
static void put_panel(FILE *f, const struct attn_problem *p, bool with_dtype, bool by_shape)
{
    char title[REPORT_PANEL_TITLE_MAX];
    const struct report_panel panel = report_panel_of(p, by_shape);
    html_text(f, report_panel_title(&panel, title, sizeof title));
    if (with_dtype) fprintf(f, ", %s", attn_dtype_name(p->dtype));
}

/* "98 %": the two-sided level of an interval whose bounds are each at
 * confidence c (bench/gate/shift.h). */
static void put_level(FILE *f, double c)
{
    fprintf(f, "%.3g %%", 100 * (2 * c - 1));
}

/* A ratio as a sentence states it: "1.04× [1.03, 1.05]" when interleaved
 * (its interval), else "1.04×"; "—" when there is none. Two decimals, or
 * three where two would round it onto 1 (0.999 is not "1.00"), as the
 * headline writes its values. */
static void put_ratio(FILE *f, const struct report_ratio *q)
{
    char two[32];
    snprintf(two, sizeof two, "%.2f", q->ratio);
    const int digits = !strcmp(two, "1.00") && q->ratio != 1 ? 3 : 2;
    if (!isfinite(q->ratio)) fputs("—", f);
    else if (q->interleaved) fprintf(f, "%.*f× [%.*f, %.*f]", digits, q->ratio, digits, q->lo, digits, q->hi);
    else fprintf(f, "%.*f×", digits, q->ratio);
}

/* A ratio as a table cell: its value, the interval as the tooltip when
 * interleaved; class cls (NULL: none). */
static void put_ratio_cell(FILE *f, const struct report_ratio *q, const char *cls, double confidence)
{
    fputs("<td", f);
    if (cls) fprintf(f, " class=\"%s\"", cls);
    if (q->interleaved) {
        fputs(" title=\"", f);
        put_level(f, confidence);
        fprintf(f, " interval [%.3f, %.3f]\"", q->lo, q->hi);
    }
    fprintf(f, ">%.2f</td>", q->ratio);
}

/* A sustained row's settled SM clock (MHz) and board power (W), two cells. */
static void put_settled(FILE *f, const struct result_rec *r)
{
    const char *cls = r->settled == 0 ? " class=\"st\" title=\"not settled within its limit\"" : "";
    if (isfinite(r->settled_mhz)) fprintf(f, "<td%s>%.0f</td>", cls, r->settled_mhz);
    else fputs("<td class=\"none\">—</td>", f);
    if (isfinite(r->settled_watts)) fprintf(f, "<td%s>%.0f</td>", cls, r->settled_watts);
    else fputs("<td class=\"none\">—</td>", f);
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

/* The run's points with their pass left out, each once, in pts's order:
 * the grid, which every pass of a run measures alike; *n of them (the
 * caller frees), NULL when out of memory. */
static struct attn_problem *grid_points(const struct attn_problem *pts, int np, int *n)
{
    struct attn_problem *g = malloc(((size_t)np + 1) * sizeof *g);
    *n = 0;
    for (int i = 0; g && i < np; i++) {
        struct attn_problem q = pts[i];
        q.pass = ATTN_PASS_FWD;
        bool seen = false;
        for (int j = 0; j < *n && !seen; j++) seen = attn_problem_equal(&g[j], &q);
        if (!seen) g[(*n)++] = q;
    }
    return g;
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

/* The regimes of the run's rows, each with what it is and its rows; a
 * sustained regime with how many rows settled. */
static void put_regimes(FILE *f, const struct result_set *s)
{
    for (int g = 0, k = 0; g < REGIME_COUNT; g++) {
        size_t n = 0, settled = 0, unsettled = 0;
        for (size_t i = 0; i < s->count; i++) {
            const struct result_rec *r = &s->rows[i];
            if (strcmp(r->key.regime, regime_names[g])) continue;
            n++;
            settled += r->settled == 1;
            unsettled += r->settled == 0;
        }
        if (!n) continue;
        fprintf(f, "%s<b>%s</b> ", k++ ? "; " : "", regime_names[g]);
        if (g == REGIME_BURST) fprintf(f, "(each row's own warm-up, then its samples; %zu rows)", n);
        else fprintf(f, "(the board loaded back to back until its SM clock and power settled, then sampled under "
                        "that load; %zu rows, %zu settled; the tables give each row's settled clock and power)",
                     n, settled);
        if (g == REGIME_SUSTAINED && unsettled)
            fprintf(f, " <span class=\"bad\">%zu did not settle within the limit</span>", unsettled);
    }
}

/* How the rows were measured: in turns (a compare run: ratios between its
 * variants from the samples, with an interval) or row after row. */
static void put_measured(FILE *f, const struct result_set *s, const struct env *e, double confidence)
{
    const char *id = report_compare_run(s);
    if (!id[0]) {
        fputs("<b>row after row</b>: each row measured in one go, seconds apart from the next, so a ratio of two "
              "rows also holds the board's drift between them (clock and power: a few percent at the power cap); "
              "the page's ratios are of medians, without an interval", f);
        return;
    }
    const char *variants = env_get(e, "compare_variants"), *ref = env_get(e, "compare_ref");
    fputs("<b>in turns</b>: compare run <code>", f);
    html_text(f, id);
    fputs("</code>", f);
    if (variants) {
        fputs(" of <code>", f);
        html_text(f, variants);
        fputs("</code>", f);
    }
    if (ref) {
        fputs(" (reference <code>", f);
        html_text(f, ref);
        fputs("</code>)", f);
    }
    fputs(": at each point and mode the variants took turns on one GPU in short interleaved blocks, so the "
          "board's power controller moved them alike; a ratio between two of them is the Hodges–Lehmann "
          "estimate from their samples with its ", f);
    put_level(f, confidence);
    fprintf(f, " interval (each bound at the gate's %.3g %% confidence)", 100 * confidence);
}

/* The passes of a run that has any but the forward, each with what it
 * times and its rows; nothing for a run of the forward only. */
static void put_passes(FILE *f, const struct result_set *s)
{
    static const char *const what[ATTN_PASS_COUNT] = {
        [ATTN_PASS_FWD] = "the forward",
        [ATTN_PASS_BWD] = "the backward alone: dQ, dK and dV from the saved forward's statistics and dO; TFLOP/s at "
                          "2.5× the forward's FLOPs",
        [ATTN_PASS_FWD_BWD] = "the forward and the backward in one call, as a training step runs them; TFLOP/s at "
                              "3.5× the forward's FLOPs",
    };
    size_t rows[ATTN_PASS_COUNT] = {0};
    for (size_t i = 0; i < s->count; i++)
        if (s->rows[i].key.pass >= 0 && s->rows[i].key.pass < ATTN_PASS_COUNT) rows[s->rows[i].key.pass]++;
    if (rows[ATTN_PASS_FWD] == s->count) return;
    fputs("<dt>Passes</dt><dd>", f);
    for (int p = 0, k = 0; p < ATTN_PASS_COUNT; p++)
        if (rows[p])
            fprintf(f, "%s<b>%s</b> (%s; %zu rows)", k++ ? "; " : "", attn_pass_name((enum attn_pass)p), what[p], rows[p]);
    fputs("</dd>\n", f);
}

/* The inputs' distributions (the init key) and their rows. */
static void put_inits(FILE *f, const struct result_set *s)
{
    float inits[8];
    size_t rows[8] = {0};
    int n = 0;
    for (size_t i = 0; i < s->count; i++) {
        const float sigma = s->rows[i].key.init_sigma;
        int k = 0;
        while (k < n && inits[k] != sigma) k++;
        if (k == n && n < 8) inits[n++] = sigma;
        if (k < n) rows[k]++;
    }
    fputs("<dt>Inputs</dt><dd>", f);
    for (int k = 0; k < n; k++) {
        char name[ATTN_INIT_MAX];
        fprintf(f, "%s<b>init=%s</b> ", k ? "; " : "", attn_init_name(inits[k], name, sizeof name));
        if (inits[k] > 0) fprintf(f, "(Q, K and V drawn from N(0, %g²); %zu rows)", (double)inits[k], rows[k]);
        else fprintf(f, "(Q, K and V drawn uniformly from [−1, 1]; %zu rows)", rows[k]);
    }
    fputs("</dd>\n", f);
}

static void section_run(FILE *f, const struct report_args *a, const struct result_set *s,
                        const struct env *e, const struct attn_problem *pts, int np,
                        const char *const *modes, int nm, const char *const *variants, int nv,
                        bool by_shape, double confidence)
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
    int ngrid = 0;
    struct attn_problem *grid = grid_points(pts, np, &ngrid);
    if (grid) put_grid(f, grid, ngrid, by_shape);
    free(grid);
    fputs("</dd>\n", f);
    put_passes(f, s);
    fputs("<dt>Modes</dt><dd>", f);
    for (int m = 0; m < nm; m++) {
        size_t n = 0;
        for (size_t i = 0; i < s->count; i++) n += !strcmp(s->rows[i].key.mode, modes[m]);
        fprintf(f, "%s<b>%s</b> (%s; %zu rows)", m ? ", " : "", modes[m], mode_what(modes[m]), n);
    }
    fputs("</dd>\n<dt>Regime</dt><dd>", f);
    put_regimes(f, s);
    fputs("</dd>\n<dt>Measured</dt><dd>", f);
    put_measured(f, s, e, confidence);
    fputs("</dd>\n", f);
    put_inits(f, s);
    fputs("<dt>Variants</dt><dd>", f);
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

/* A view in words: "cold" and its regime, "cold, burst", and a pass other
 * than the forward, "cold, burst, backward (dQ, dK, dV)". */
static void put_view(FILE *f, const struct view *v)
{
    fprintf(f, "%s, %s", v->mode, v->regime);
    if (v->pass != ATTN_PASS_FWD) fprintf(f, ", %s", report_pass_title(v->pass));
}

/* How a set of ratios was measured, after the numbers: "(measured row
 * after row)", or for interleaved ones "(interleaved: Hodges–Lehmann ratios
 * of the samples, 98 % intervals within ±0.6 %)". */
static void put_how(FILE *f, const struct report_ratio *q, int n, double confidence)
{
    int interleaved = 0;
    double half = 0; /* the widest half-interval, relative to its ratio */
    for (int i = 0; i < n; i++)
        if (q[i].interleaved) {
            interleaved++;
            half = fmax(half, fmax(q[i].hi / q[i].ratio - 1, 1 - q[i].lo / q[i].ratio));
        }
    if (!interleaved) {
        fputs("measured row after row", f);
        return;
    }
    fputs("interleaved: Hodges–Lehmann ratios of the samples, ", f);
    put_level(f, confidence);
    fprintf(f, " intervals within ±%.2g %%", 100 * half);
    if (interleaved < n) fprintf(f, "; %d of %d, the rest of medians", interleaved, n);
}

static int cmp_ratio(const void *a, const void *b)
{
    const double x = ((const struct report_ratio *)a)->ratio, y = ((const struct report_ratio *)b)->ratio;
    return x < y ? -1 : x > y;
}

/* The median of n sorted ratios' estimates. */
static double median_ratio(const struct report_ratio *q, int n)
{
    return n % 2 ? q[n / 2].ratio : (q[n / 2 - 1].ratio + q[n / 2].ratio) / 2;
}

/* The sentences of one view: who is fastest where, the challenger of
 * cudnn_sdpa, the gain over naive, the highest throughput. Every ratio
 * between two rows is report_speed_ratio's: interleaved (with its interval)
 * in a compare run, of medians row after row, and the sentence says which. */
static int headline_text(FILE *f, const struct result_set *s, const struct view *view, const struct attn_problem *pts,
                         int np, const char *const *variants, int nv, double peak, double confidence)
{
    int npts = 0, nobest = 0, rc = ATTN_OK;
    int *wins = calloc((size_t)nv + 1, sizeof *wins), *order = malloc(((size_t)nv + 1) * sizeof *order);
    struct report_ratio *ratio = malloc((size_t)(np ? np : 1) * sizeof *ratio);
    if (!ratio || !wins || !order) {
        free(wins);
        free(order);
        free(ratio);
        return ATTN_FAIL(ATTN_ERR, "out of host memory");
    }
    for (int i = 0; i < np; i++) {
        if (!point_in_view(s, &pts[i], view)) continue;
        npts++;
        const struct result_rec *b = best_row(s, &pts[i], view);
        if (!b) {
            nobest++;
            continue;
        }
        for (int v = 0; v < nv; v++)
            if (!strcmp(variants[v], b->key.variant)) wins[v]++;
    }
    fputs("<p><b>", f);
    put_view(f, view);
    fputs("</b>: ", f);
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
        return ATTN_OK;
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
    if (has_variant(variants, nv, REPORT_HEADLINE_REF)) {
        int who = -1;
        double who_med = 0;
        for (int v = 0; v < nv && rc == ATTN_OK; v++) {
            if (!strcmp(variants[v], REPORT_HEADLINE_REF) || report_is_peer(variants[v])) continue;
            int n = 0;
            for (int i = 0; i < np && rc == ATTN_OK; i++) {
                const struct result_rec *r = find_row(s, &pts[i], view, variants[v]);
                const struct result_rec *c = find_row(s, &pts[i], view, REPORT_HEADLINE_REF);
                rc = report_speed_ratio(c, r, confidence, &ratio[n]);
                n += isfinite(ratio[n].ratio);
            }
            if (!n) continue;
            qsort(ratio, (size_t)n, sizeof *ratio, cmp_ratio);
            const double med = median_ratio(ratio, n);
            if (who < 0 || med > who_med) {
                who = v;
                who_med = med;
            }
        }
        if (who >= 0 && rc == ATTN_OK) {
            int n = 0, ahead = 0, sure = 0;
            for (int i = 0; i < np && rc == ATTN_OK; i++) {
                const struct result_rec *r = find_row(s, &pts[i], view, variants[who]);
                const struct result_rec *c = find_row(s, &pts[i], view, REPORT_HEADLINE_REF);
                rc = report_speed_ratio(c, r, confidence, &ratio[n]);
                if (!isfinite(ratio[n].ratio)) continue;
                ahead += ratio[n].ratio > 1;
                sure += ratio[n].interleaved && ratio[n].lo > 1;
                n++;
            }
            qsort(ratio, (size_t)n, sizeof *ratio, cmp_ratio);
            fputs(" Against the vendor kernel cudnn_sdpa, ", f);
            put_variant(f, variants[who]);
            if (fabs(ratio[0].ratio - ratio[n - 1].ratio) < 0.005) fprintf(f, " runs %.2f× as fast", ratio[0].ratio);
            else fprintf(f, " runs %.2f–%.2f× as fast", ratio[0].ratio, ratio[n - 1].ratio);
            fprintf(f, " (cudnn_sdpa ms / its ms, ");
            put_how(f, ratio, n, confidence);
            fprintf(f, "; median %.2f×), ahead at %d of %d points", who_med, ahead, n);
            bool any_interleaved = false;
            for (int i = 0; i < n; i++) any_interleaved |= ratio[i].interleaved;
            if (any_interleaved) fprintf(f, " (its interval above 1 at %d)", sure);
            fputs(".", f);
        }
    }
    /* over naive */
    if (has_variant(variants, nv, "naive") && rc == ATTN_OK) {
        int n = 0;
        for (int i = 0; i < np && rc == ATTN_OK; i++) {
            const struct result_rec *b = best_row(s, &pts[i], view);
            const struct result_rec *r = find_row(s, &pts[i], view, "naive");
            if (!b || b == r) continue;
            rc = report_speed_ratio(r, b, confidence, &ratio[n]);
            n += isfinite(ratio[n].ratio);
        }
        if (n) {
            qsort(ratio, (size_t)n, sizeof *ratio, cmp_ratio);
            fprintf(f, " The fastest kernel of a point beats naive by %.1f–%.1f× (", ratio[0].ratio, ratio[n - 1].ratio);
            put_how(f, ratio, n, confidence);
            fputs(").", f);
        }
    }
    /* the highest throughput */
    const struct result_rec *top = NULL;
    for (size_t i = 0; i < s->count; i++) {
        const struct result_rec *r = &s->rows[i];
        if (in_view(&r->key, view) && report_row_ok(r) && isfinite(r->tflops) && (!top || r->tflops > top->tflops))
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
    return rc;
}

/* How many views from views[m] on are of views[m]'s pass: the views are
 * in views_present's order, a pass's together. */
static int pass_group(const struct view *views, int nviews, int m)
{
    int n = 1;
    while (m + n < nviews && views[m + n].pass == views[m].pass) n++;
    return n;
}

/* Whether the page names every pass where it shows one: a run of any pass
 * but the forward's only. */
static bool passes_named(const struct view *views, int nviews)
{
    return nviews > 0 && (views[0].pass != ATTN_PASS_FWD || views[nviews - 1].pass != ATTN_PASS_FWD);
}

/* A pass's title as a heading's text: "Backward (dQ, dK, dV)". */
static void put_pass_heading(FILE *f, enum attn_pass pass)
{
    const char *t = report_pass_title(pass);
    fprintf(f, "%c%s", t[0] >= 'a' && t[0] <= 'z' ? t[0] - 'a' + 'A' : t[0], t + 1);
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

/* The best kernel per point of one pass: a column group per view (mode
 * and regime) of views, all of that pass; a sustained view also gives the
 * fastest row's settled clock and power. Its ratios are
 * report_speed_ratio's: interleaved in a compare run (the interval as the
 * cell's tooltip), else of medians. */
static int headline_table(FILE *f, const struct result_set *s, const struct attn_problem *pts, int np,
                          const struct view *views, int nviews, const char *const *variants, int nv, bool by_shape,
                          double confidence)
{
    bool cudnn = has_variant(variants, nv, REPORT_HEADLINE_REF), naive = has_variant(variants, nv, "naive");
    int per[MAX_VIEWS], columns = 3;
    bool dtypes = false;
    for (int i = 1; i < np; i++) dtypes |= pts[i].dtype != pts[0].dtype;
    fputs("<div class=\"scroll\"><table class=\"best\">\n<thead><tr><th colspan=\"3\">point</th>", f);
    for (int m = 0; m < nviews; m++) {
        per[m] = 3 + cudnn + naive + 2 * views[m].sustained;
        columns += per[m];
        fprintf(f, "<th colspan=\"%d\" class=\"grp\">", per[m]);
        put_view(f, &views[m]);
        fputs("</th>", f);
    }
    fputs("</tr>\n<tr><th>S</th><th>B</th><th>H</th>", f);
    for (int m = 0; m < nviews; m++) {
        fputs("<th class=\"grp\">fastest</th><th>ms</th><th>TFLOP/s</th>", f);
        if (views[m].sustained) fputs("<th title=\"settled SM clock\">MHz</th><th title=\"settled board power\">W</th>", f);
        if (cudnn) fputs("<th title=\"cudnn_sdpa ms / fastest ms\">× cudnn_sdpa</th>", f);
        if (naive) fputs("<th title=\"naive ms / fastest ms\">× naive</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    const struct attn_problem *prev = NULL;
    for (int i = 0; i < np; i++) {
        const struct attn_problem *p = &pts[i];
        if (p->pass != views[0].pass) continue;
        put_point_start(f, p, prev, columns, dtypes, by_shape);
        prev = p;
        for (int m = 0; m < nviews; m++) {
            const struct result_rec *b = best_row(s, p, &views[m]);
            if (!b) {
                const bool run = point_in_view(s, p, &views[m]);
                fprintf(f, "<td colspan=\"%d\" class=\"%s grp\">%s</td>", per[m], run ? "gap" : "none",
                        run ? "no ok row" : "not run");
                continue;
            }
            fputs("<td class=\"grp name\">", f);
            put_variant(f, b->key.variant);
            fputs("</td><td>", f);
            put_ms(f, b->ms_median);
            fputs("</td><td>", f);
            put_tflops(f, b->tflops);
            fputs("</td>", f);
            if (views[m].sustained) put_settled(f, b);
            const char *const vs[2] = {cudnn ? REPORT_HEADLINE_REF : NULL, naive ? "naive" : NULL};
            for (int k = 0; k < 2; k++) {
                if (!vs[k]) continue;
                const struct result_rec *r = find_row(s, p, &views[m], vs[k]);
                struct report_ratio q;
                ATTN_TRY(report_speed_ratio(r, b, confidence, &q));
                if (isfinite(q.ratio)) put_ratio_cell(f, &q, NULL, confidence);
                else fprintf(f, "<td class=\"none\">%s</td>", r ? r->status : "—");
            }
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
    return ATTN_OK;
}

/* Whether series (variant, regime, init of k) is drawn on the headline of
 * k's pass against ref: at some point of the families in their mode its
 * speed reaches REPORT_HEADLINE_MIN × ref's (the figure's rule,
 * report_data.c). */
static int on_headline(const struct result_set *s, const struct report_family *fam, int nf, const char *mode,
                       const struct result_key *k, const char *ref, double confidence, bool *drawn)
{
    *drawn = false;
    for (size_t i = 0; i < s->count && !*drawn; i++) {
        const struct result_rec *r = &s->rows[i];
        if (strcmp(r->key.variant, k->variant) || strcmp(r->key.regime, k->regime) ||
            r->key.init_sigma != k->init_sigma || r->key.pass != k->pass)
            continue;
        bool in = false;
        for (int p = 0; p < nf && !in; p++) in = report_in_family(&fam[p], &r->key, mode);
        if (!in) continue;
        struct report_ratio q;
        ATTN_TRY(report_speed_ratio(report_twin(s, &r->key, ref), r, confidence, &q));
        *drawn = q.ratio >= REPORT_HEADLINE_MIN;
    }
    return ATTN_OK;
}

/* One line of "Where it stands": at the largest S of family fm, the rows
 * of one regime and init (those of the reference row rr), each variant of
 * ours the headline draws, as ref's time over its own. */
static int stands_line(FILE *f, const struct result_set *s, const struct report_family *fam, int nf, int fm,
                       const char *mode, const struct result_rec *rr, const char *const *variants, int nv,
                       double confidence)
{
    char title[REPORT_PANEL_TITLE_MAX];
    fputs("<li><b>", f);
    html_text(f, report_panel_title(&fam[fm].key, title, sizeof title));
    fprintf(f, "</b>, S = %d (%s): ", rr->key.seq_len, rr->key.regime);
    int listed = 0, medians = 0;
    for (int v = 0; v < nv; v++) {
        if (!strcmp(variants[v], rr->key.variant) || report_is_peer(variants[v])) continue;
        struct result_key k = rr->key;
        snprintf(k.variant, sizeof k.variant, "%s", variants[v]);
        bool drawn;
        ATTN_TRY(on_headline(s, fam, nf, mode, &k, rr->key.variant, confidence, &drawn));
        const struct result_rec *r = report_twin(s, &rr->key, variants[v]);
        struct report_ratio q;
        ATTN_TRY(report_speed_ratio(rr, r, confidence, &q));
        if (!drawn || !isfinite(q.ratio)) continue;
        fputs(listed++ ? ", " : "", f);
        put_variant(f, variants[v]);
        fputs(" ", f);
        put_ratio(f, &q);
        medians += !q.interleaved;
    }
    if (!listed) fputs("no variant of ours on the headline has an ok row here", f);
    else if (medians) fputs(medians < listed ? " (those without an interval measured row after row)" : " (row after row)", f);
    fputs("</li>\n", f);
    return ATTN_OK;
}

/* "Where it stands": at each panel's largest S in the figures' mode (its
 * family of points, as the figures draw it), each variant of ours that the
 * headline draws relative to the reference — cudnn_sdpa, the headline's,
 * or else the compare run's reference (.env compare_ref) — from the same
 * ratios the headline draws: "1.04× [1.03, 1.05]" interleaved, or of
 * medians measured row after row. */
static int where_it_stands(FILE *f, const struct report_args *a, const struct result_set *s, const struct env *e,
                           const char *const *variants, int nv, bool by_shape, double confidence)
{
    const char *ref = has_variant(variants, nv, REPORT_HEADLINE_REF) ? REPORT_HEADLINE_REF : env_get(e, "compare_ref");
    if (!ref || !has_variant(variants, nv, ref)) return ATTN_OK;
    const char *mode = report_pick_mode(s, a->mode);
    struct report_family *fam = NULL;
    int nf = 0;
    ATTN_TRY(report_families(s, mode, by_shape, &fam, &nf));
    fputs("<h3 id=\"stands\">Where it stands</h3>\n<p class=\"note\">At each panel's largest S, ", f);
    html_text(f, mode);
    fputs(" mode: each variant of ours on the headline, ", f);
    html_text(f, ref);
    fputs("'s time over its own (&gt; 1: faster); ", f);
    if (report_compare_run(s)[0]) {
        fputs("interleaved, the Hodges–Lehmann ratio of the samples and its ", f);
        put_level(f, confidence);
        fprintf(f, " interval [low, high] (each bound at the gate's %.3g %%).</p>\n<ul>\n", 100 * confidence);
    } else {
        fputs("rows measured row after row: ratios of medians, which the board's drift between the rows moves "
              "as much as a few percent.</p>\n<ul>\n", f);
    }
    int rc = ATTN_OK;
    for (int fm = 0; fm < nf && rc == ATTN_OK; fm++) {
        int top = 0;
        for (size_t i = 0; i < s->count; i++)
            if (report_in_family(&fam[fm], &s->rows[i].key, mode) && s->rows[i].key.seq_len > top)
                top = s->rows[i].key.seq_len;
        /* a line per regime and init of the reference's rows there */
        for (size_t i = 0; i < s->count && rc == ATTN_OK; i++) {
            const struct result_rec *rr = &s->rows[i];
            if (strcmp(rr->key.variant, ref) || rr->key.seq_len != top || !report_in_family(&fam[fm], &rr->key, mode))
                continue;
            rc = stands_line(f, s, fam, nf, fm, mode, rr, variants, nv, confidence);
        }
    }
    fputs("</ul>\n", f);
    free(fam);
    return rc;
}

static int section_headline(FILE *f, const struct report_args *a, const struct result_set *s, const struct env *e,
                            const struct attn_problem *pts, int np, const struct view *views, int nviews,
                            const char *const *variants, int nv, bool by_shape, double confidence)
{
    double peak = env_num(e, "peak_gemm_bf16_tflops"), copy = env_num(e, "peak_copy_gbps");
    fputs("<div class=\"section\" id=\"headline\">\n<h2>Headline</h2>\n", f);
    for (int m = 0; m < nviews; m++) ATTN_TRY(headline_text(f, s, &views[m], pts, np, variants, nv, peak, confidence));
    ATTN_TRY(where_it_stands(f, a, s, e, variants, nv, by_shape, confidence));
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
        const double read = env_num(e, "peak_read_gbps");
        if (isfinite(read)) fprintf(f, "%sread alone <b>%.0f GB/s</b>", isfinite(peak) || isfinite(copy) ? ", " : "", read);
        fputs(".", f);
    } else {
        fputs(e->found ? "no peaks (the run was made without <code>--peak</code>)."
                       : "no peaks known (no environment file found).",
              f);
    }
    fputs("</p>\n<h3>Fastest kernel per point</h3>\n"
          "<p class=\"note\">Per mode and regime. ms: median per call; MHz and W (sustained rows): the settled SM "
          "clock and board power; × cudnn_sdpa and × naive: their ms over the fastest kernel's (1.00 where it is "
          "the fastest), ",
          f);
    if (report_compare_run(s)[0]) {
        fputs("interleaved: the Hodges–Lehmann ratio of the samples, its ", f);
        put_level(f, confidence);
        fputs(" interval on hover.</p>\n", f);
    } else {
        fputs("of medians measured row after row.</p>\n", f);
    }
    /* a table per pass, each under its pass's name in a run of several */
    for (int m = 0; m < nviews;) {
        const int n = pass_group(views, nviews, m);
        if (passes_named(views, nviews)) {
            fputs("<p class=\"cap\">", f);
            put_pass_heading(f, views[m].pass);
            fputs("</p>\n", f);
        }
        ATTN_TRY(headline_table(f, s, pts, np, views + m, n, variants, nv, by_shape, confidence));
        m += n;
    }
    fputs("</div>\n", f);
    return ATTN_OK;
}

/* Any row at p in the view, whose key names the point for report_best_peer. */
static const struct result_key *point_key(const struct result_set *s, const struct attn_problem *p,
                                          const struct view *view)
{
    for (size_t i = 0; i < s->count; i++)
        if (at_point(&s->rows[i].key, p) && in_view(&s->rows[i].key, view)) return &s->rows[i].key;
    return NULL;
}

/* The speedup_torch figure's numbers, at every point of a view of the
 * figures' mode: the fastest PyTorch peer (report_best_peer) and its ms,
 * and each of our variants' speedup over it, its ms over ours (> 1, ours is
 * faster: shaded; report_speed_ratio's, interleaved in a compare run).
 * Nothing when the run has no peer or none of ours. */
static int torch_table(FILE *f, const struct result_set *s, const struct view *view, const struct attn_problem *pts,
                       int np, const char *const *variants, int nv, bool by_shape, double confidence)
{
    int *ours = malloc(((size_t)nv + 1) * sizeof *ours), no = 0, npeers = 0, rc = ATTN_OK;
    if (!ours) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    for (int v = 0; v < nv; v++) {
        if (report_is_peer(variants[v])) npeers++;
        else ours[no++] = v;
    }
    if (!npeers || !no) {
        free(ours);
        return ATTN_OK;
    }
    bool dtypes = false;
    for (int i = 1; i < np; i++) dtypes |= pts[i].dtype != pts[0].dtype;
    const bool fwd = view->pass == ATTN_PASS_FWD;
    fprintf(f, "<div class=\"fig\" id=\"table-speedup-torch%s%s%s\">\n<p class=\"cap\">Speedup over the best PyTorch "
               "peer, ", view->both && view->sustained ? "-sustained" : "", fwd ? "" : "-",
            fwd ? "" : attn_pass_name(view->pass));
    html_text(f, view->mode);
    fprintf(f, " mode, %s%s%s</p>\n", view->regime, fwd ? "" : ", ", fwd ? "" : report_pass_title(view->pass));
    fprintf(f, "<p class=\"note\">At each point the fastest of the run's %d PyTorch peers and its median ms; for each "
               "of our variants, that ms over the variant's (&gt; 1: ours is faster, shaded; %s).</p>\n",
            npeers, report_compare_run(s)[0] ? "interleaved: the Hodges–Lehmann ratio of the samples, its interval on hover"
                                             : "of medians measured row after row");
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
    for (int i = 0; i < np && rc == ATTN_OK; i++) {
        const struct attn_problem *p = &pts[i];
        const struct result_key *k = point_key(s, p, view);
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
        for (int j = 0; j < no && rc == ATTN_OK; j++) {
            const struct result_rec *r = find_row(s, p, view, variants[ours[j]]);
            const bool grp = j == 0; /* the first column opens the group */
            if (!report_row_ok(r)) {
                fprintf(f, "<td class=\"none%s\">%s</td>", grp ? " grp" : "", r ? r->status : "—");
                continue;
            }
            struct report_ratio q;
            rc = report_speed_ratio(best, r, confidence, &q);
            const char *cls = q.ratio > 1 ? (grp ? "best grp" : "best") : (grp ? "num grp" : "num");
            if (rc == ATTN_OK) put_ratio_cell(f, &q, cls, confidence);
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n</div>\n", f);
    free(ours);
    return rc;
}

/* A figure's page k of a pass found beside the page (the forward's NAME,
 * NAME-2, ...; another pass's NAME-bwd, NAME-bwd-2, ...: what render.sh
 * names them): its stem, and whether its PNG and SVG are there. */
static bool figure_page(const char *dir, const char *name, enum attn_pass pass, int k, bool *png, bool *svg,
                        char *stem, size_t len)
{
    snprintf(stem, len, "%s%s%s", name, pass == ATTN_PASS_FWD ? "" : "-",
             pass == ATTN_PASS_FWD ? "" : attn_pass_name(pass));
    if (k > 1) snprintf(stem + strlen(stem), len - strlen(stem), "-%d", k);
    char file[120];
    snprintf(file, sizeof file, "%s.png", stem);
    *png = exists(dir, file);
    snprintf(file, sizeof file, "%s.svg", stem);
    *svg = exists(dir, file);
    return *png || *svg;
}

/* Every page of one pass's figure `name` beside the page, captioned cap
 * (and the pass when named); returns how many. */
static int put_figure(FILE *f, const char *dir, const char *name, const char *cap, enum attn_pass pass, bool named)
{
    char stem[120], what[200];
    snprintf(what, sizeof what, "%s%s%s", cap, named ? " — " : "", named ? report_pass_title(pass) : "");
    bool png, svg;
    int pages = 0;
    while (figure_page(dir, name, pass, pages + 1, &png, &svg, stem, sizeof stem)) pages++;
    for (int k = 1; k <= pages; k++) {
        figure_page(dir, name, pass, k, &png, &svg, stem, sizeof stem);
        fprintf(f, "<div class=\"fig\" id=\"fig-%s\">\n<p class=\"cap\">%s", stem, what);
        if (pages > 1) fprintf(f, " (figure %d of %d)", k, pages);
        if (svg) fprintf(f, " (<a href=\"%s.svg\">SVG</a>)", stem);
        fprintf(f, "</p>\n<a href=\"%s.%s\"><img src=\"%s.%s\" alt=\"%s\"></a>\n</div>\n", stem,
                svg ? "svg" : "png", stem, png ? "png" : "svg", what);
    }
    return pages;
}

/* The figures beside the page, each figure's passes in turn (the forward,
 * the backward, forward + backward: a family of figures each), a pass's
 * speedup_torch figure followed by its numbers. */
static int section_figures(FILE *f, const struct report_args *a, const struct result_set *s,
                           const struct attn_problem *pts, int np, const struct view *views, int nviews,
                           const char *const *variants, int nv, bool by_shape, const char *ratio_why,
                           double confidence)
{
    static const char *const figs[][3] = {
        {"headline", "Each fused kernel's speed relative to cudnn_sdpa", ""},
        {"throughput", "Throughput vs sequence length", ""},
        {"bandwidth", "Decode bandwidth: GB/s vs the cached keys", ""},
        {"latency", "Latency vs sequence length", ""},
        {"speedup", "Speedup over naive", ""},
        {"speedup_torch", "Speedup of our variants over the best PyTorch peer", ""},
        {"memory", "Extra device memory", ""},
        {"energy", "Energy efficiency: TFLOP per joule", ""},
        {"ratio", "Current / baseline per row", "baseline"},
    };
    const char *mode = report_pick_mode(s, a->mode);
    enum attn_pass passes[ATTN_PASS_COUNT];
    const int npasses = report_passes(s, mode, passes);
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
        for (int k = 0; k < npasses; k++) {
            const bool named = npasses > 1 || passes[k] != ATTN_PASS_FWD;
            shown += put_figure(f, a->outdir, figs[i][0], figs[i][1], passes[k], named);
            /* the figure's numbers, also where the figure was not drawn: a
             * table per regime of the figures' mode */
            if (!strcmp(figs[i][0], "speedup_torch"))
                for (int m = 0; m < nviews; m++)
                    if (views[m].pass == passes[k] && !strcmp(views[m].mode, mode))
                        ATTN_TRY(torch_table(f, s, &views[m], pts, np, variants, nv, by_shape, confidence));
        }
    }
    if (!shown) fputs("<p>No figures beside this page (<code>make plots</code> draws them).</p>\n", f);
    fputs("</div>\n", f);
    return ATTN_OK;
}

/* What a regime means for a table, in a few words. */
static const char *regime_what(const struct view *v)
{
    return v->sustained ? "sampled under a load held until the SM clock and board power settled; MHz and W: the "
                          "settled clock and power"
                        : "each row's own warm-up, then its samples";
}

/* A table's cells per variant: the full tables' median ms and TFLOP/s;
 * the decode table's ms, GB/s (report_row_gbps), GB/s as % of the run's
 * read-only ceiling and TFLOP/s; a sustained view adds the settled SM clock
 * and board power after them (put_settled). */
enum cell { CELL_MS, CELL_GBPS, CELL_PCT_READ, CELL_TFLOPS };

struct cells {
    const enum cell *cell;
    int n;
    const char *id;   /* the tables' element ids: "table-cold", "decode-cold" */
    double peak_read; /* GB/s of the read-only stream (--peak), NaN when not measured */
};

static const enum cell full_cells[] = {CELL_MS, CELL_TFLOPS};
static const enum cell decode_cells[] = {CELL_MS, CELL_GBPS, CELL_PCT_READ, CELL_TFLOPS};

static void put_cell_head(FILE *f, enum cell c, bool first)
{
    static const char *const heads[] = {
        [CELL_MS] = "<th%s>ms</th>",
        [CELL_GBPS] = "<th%s title=\"the bytes a decode must move over its median time\">GB/s</th>",
        [CELL_PCT_READ] = "<th%s title=\"GB/s as a share of the read-only stream measured by --peak\">% read peak</th>",
        [CELL_TFLOPS] = "<th%s>TFLOP/s</th>",
    };
    fprintf(f, heads[c], first ? " class=\"grp\"" : "");
}

/* Cell c of ok row r, in bold when the row is its point's fastest; the
 * first of a variant's cells opens its column group. */
static void put_cell(FILE *f, const struct result_rec *r, enum cell c, const struct cells *cs, bool best, bool first)
{
    fputs(first && best ? "<td class=\"grp best\">" : first ? "<td class=\"grp\">" : best ? "<td class=\"best\">" : "<td>", f);
    const double gbps = report_row_gbps(r);
    switch (c) {
    case CELL_MS: put_ms(f, r->ms_median); break;
    case CELL_GBPS: fprintf(f, "%.0f", gbps); break;
    case CELL_PCT_READ:
        if (isfinite(cs->peak_read) && cs->peak_read > 0) fprintf(f, "%.1f", 100 * gbps / cs->peak_read);
        else fputs("–", f);
        break;
    case CELL_TFLOPS:
        put_tflops(f, r->tflops);
        put_throttle(f, r);
        break;
    }
    fputs("</td>", f);
}

/* Every point of pts × variant in one view, each variant's cells cs (and
 * for a sustained view the settled SM clock, MHz, and board power, W). */
static void point_table(FILE *f, const struct result_set *s, const struct view *view,
                        const struct attn_problem *pts, int np, const char *const *variants, int nv,
                        bool by_shape, const struct cells *cs)
{
    const int per = cs->n + 2 * view->sustained;
    bool dtypes = false;
    for (int i = 1; i < np; i++) dtypes |= pts[i].dtype != pts[0].dtype;
    char id[32];
    fprintf(f, "<h3 id=\"%s-%s\">", cs->id, view_id(view, id, sizeof id));
    put_view(f, view);
    fprintf(f, " <span class=\"note\">(%s; %s)</span></h3>\n", mode_what(view->mode), regime_what(view));
    bool recorded = false; /* the note only for a run that recorded the reasons */
    for (size_t i = 0; i < s->count && !recorded; i++) recorded = s->rows[i].throttle_known;
    if (recorded)
        fputs("<p class=\"note\">A mark beside TFLOP/s says why NVML held the row's clocks down: <span class=\"thr\">cap</span> "
          "the board's power cap, <span class=\"thr\">therm</span> a thermal limit, <span class=\"thr\">hw</span> a "
          "hardware slowdown; hover it for the reasons, the row's average power and its TFLOP per joule.</p>\n", f);
    fputs("<div class=\"scroll\"><table class=\"full\">\n<thead><tr><th colspan=\"3\">point</th>", f);
    for (int v = 0; v < nv; v++) {
        fprintf(f, "<th colspan=\"%d\" class=\"grp\">", per);
        put_variant(f, variants[v]);
        fputs("</th>", f);
    }
    fputs("</tr>\n<tr><th>S</th><th>B</th><th>H</th>", f);
    for (int v = 0; v < nv; v++) {
        for (int c = 0; c < cs->n; c++) put_cell_head(f, cs->cell[c], c == 0);
        if (view->sustained) fputs("<th title=\"settled SM clock\">MHz</th><th title=\"settled board power\">W</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    const struct attn_problem *prev = NULL;
    for (int i = 0; i < np; i++) {
        const struct attn_problem *p = &pts[i];
        if (!point_in_view(s, p, view)) continue;
        put_point_start(f, p, prev, 3 + per * nv, dtypes, by_shape);
        prev = p;
        const struct result_rec *b = best_row(s, p, view);
        for (int v = 0; v < nv; v++) {
            const struct result_rec *r = find_row(s, p, view, variants[v]);
            if (report_row_ok(r)) {
                for (int c = 0; c < cs->n; c++) put_cell(f, r, cs->cell[c], cs, r == b, c == 0);
                if (view->sustained) put_settled(f, r);
            } else if (r) {
                const char *why = r->reason;
                fprintf(f, "<td colspan=\"%d\" class=\"grp st\" title=\"", per);
                html_text(f, why[0] ? why : r->status);
                fputs("\">", f);
                html_text(f, r->status);
                fputs("</td>", f);
            } else {
                fprintf(f, "<td colspan=\"%d\" class=\"grp none\" title=\"no row\">—</td>", per);
            }
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
}

/* What a pass other than the forward times, for its tables' section. */
static const char *pass_what(enum attn_pass pass)
{
    return pass == ATTN_PASS_BWD
               ? "The backward alone: dQ, dK and dV from Q, K, V, the output O, the softmax statistics that the "
                 "variant's own forward saved (untimed) and dO. TFLOP/s count 2.5 times the forward's FLOPs (its five "
                 "GEMMs against the forward's two), so that they compare with the forward's."
               : "The forward and the backward in one timed call, as a training step runs them. TFLOP/s count 3.5 "
                 "times the forward's FLOPs, so that they compare with the forward's.";
}

/* The full tables: the forward's views under "Full tables", then each
 * other pass's in a section of its own (id tables-bwd, tables-fwd_bwd),
 * the same columns per mode and regime. */
static void section_tables(FILE *f, const struct result_set *s, const struct view *views, int nviews,
                           const struct attn_problem *pts, int np, const char *const *variants, int nv, bool by_shape)
{
    fputs("<div class=\"section\" id=\"tables\">\n<h2>Full tables</h2>\n<p class=\"note\">Every point × variant, per "
          "mode and regime: median ms per call and TFLOP/s (and for sustained rows the settled SM clock and board "
          "power); the point's fastest in bold; a row that is not ok shows its status (hover for the reason).</p>\n",
          f);
    for (int m = 0; m < nviews;) {
        const int n = pass_group(views, nviews, m);
        if (views[m].pass != ATTN_PASS_FWD) {
            fprintf(f, "</div>\n<div class=\"section\" id=\"tables-%s\">\n<h2>", attn_pass_name(views[m].pass));
            put_pass_heading(f, views[m].pass);
            fprintf(f, "</h2>\n<p class=\"note\">%s Every point × variant per mode and regime, as the forward's "
                       "tables.</p>\n", pass_what(views[m].pass));
        }
        const struct cells full = {full_cells, sizeof full_cells / sizeof full_cells[0], "table", NAN};
        for (int k = m; k < m + n; k++) point_table(f, s, &views[k], pts, np, variants, nv, by_shape, &full);
        m += n;
    }
    fputs("</div>\n", f);
}

/* The decode points of pts (q_len < seq_len), in pts's order, into out;
 * returns how many. */
static int decode_points(const struct attn_problem *pts, int np, struct attn_problem *out)
{
    int n = 0;
    for (int i = 0; i < np; i++)
        if (attn_is_decode(&pts[i])) out[n++] = pts[i];
    return n;
}

/* The fastest decode row by GB/s (report_row_gbps), or NULL. */
static const struct result_rec *widest_decode(const struct result_set *s)
{
    const struct result_rec *top = NULL;
    for (size_t i = 0; i < s->count; i++) {
        const struct result_rec *r = &s->rows[i];
        struct attn_problem p;
        result_key_problem(&r->key, &p);
        if (attn_is_decode(&p) && report_row_ok(r) && (!top || report_row_gbps(r) > report_row_gbps(top))) top = r;
    }
    return top;
}

/* The decode points (a run's decode rows; none: no section): how their
 * bandwidth is counted and against which ceiling, the highest, and per
 * mode and regime every decode point × variant with its ms, GB/s, % of
 * the read peak and TFLOP/s, grouped by the figures' panels (a model shape
 * and q_len), the point's fastest in bold. */
static int section_decode(FILE *f, const struct result_set *s, const struct env *e, const struct view *views,
                          int nviews, const struct attn_problem *pts, int np, const char *const *variants, int nv,
                          bool by_shape)
{
    struct attn_problem *dec = malloc(((size_t)np + 1) * sizeof *dec);
    if (!dec) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    const int nd = decode_points(pts, np, dec);
    if (!nd) {
        free(dec);
        return ATTN_OK;
    }
    const struct cells cells = {decode_cells, sizeof decode_cells / sizeof decode_cells[0], "decode",
                                env_num(e, "peak_read_gbps")};
    const bool peak = isfinite(cells.peak_read) && cells.peak_read > 0;
    fputs("<div class=\"section\" id=\"decode\">\n<h2>Decode</h2>\n<p class=\"note\">A decode point: Q = q_len new "
          "tokens per sequence against S = kv_len cached keys; memory-bound, it is judged by its bytes: GB/s = (K + V "
          "at kv_len + Q + O at q_len) bytes / median time, the same count for every variant; % read peak: of the "
          "read-only stream measured at the start of the run (<code>--peak</code>, the .env's "
          "<code>peak_read_gbps</code>", f);
    if (peak) fprintf(f, ": <b>%.0f GB/s</b>).", cells.peak_read);
    else fputs("), not measured in this run (run with <code>--peak</code>): –.", f);
    fputs(" The point's fastest in bold.", f);
    const struct result_rec *top = widest_decode(s);
    if (top) {
        struct attn_problem at;
        result_key_problem(&top->key, &at);
        fprintf(f, " Highest: <b>%.0f GB/s</b> (", report_row_gbps(top));
        put_variant(f, top->key.variant);
        fputs(", ", f);
        put_point(f, &at);
        fputs(", ", f);
        html_text(f, top->key.mode);
        fputs(")", f);
        if (peak) fprintf(f, ", %.1f %% of the read peak", 100 * report_row_gbps(top) / cells.peak_read);
        fputs(".", f);
    }
    fputs("</p>\n", f);
    for (int m = 0; m < nviews; m++) {
        bool any = false;
        for (int i = 0; i < nd && !any; i++) any = point_in_view(s, &dec[i], &views[m]);
        if (any) point_table(f, s, &views[m], dec, nd, variants, nv, by_shape, &cells);
    }
    fputs("</div>\n", f);
    free(dec);
    return ATTN_OK;
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
    double confidence;
    ATTN_TRY(report_confidence(a->thresholds, &confidence));
    struct env e;
    env_read(envpath, &e);
    int np = 0, nm, nv = 0;
    const bool by_shape = report_by_shape(s);
    struct attn_problem *pts = collect_points(s, by_shape, &np);
    const char *modes[MODE_COUNT], **variants = NULL;
    nm = modes_present(s, modes);
    struct view views[MAX_VIEWS];
    const int nviews = views_present(s, modes, nm, views);
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
          "<a href=\"#figures\">Figures</a> · ",
          f);
    bool decode = false;
    for (int i = 0; i < np && !decode; i++) decode = attn_is_decode(&pts[i]);
    if (decode) fputs("<a href=\"#decode\">Decode</a> · ", f);
    fputs("Tables:", f);
    for (int m = 0; m < nviews; m++) {
        char id[32];
        fprintf(f, " <a href=\"#table-%s\">%s%s%s%s</a>", view_id(&views[m], id, sizeof id), views[m].mode,
                views[m].both ? (views[m].sustained ? " sustained" : " burst") : "",
                views[m].pass == ATTN_PASS_FWD ? "" : " ", views[m].pass == ATTN_PASS_FWD ? "" : attn_pass_name(views[m].pass));
    }
    fputs(" · <a href=\"#environment\">Environment</a></div>\n", f);

    section_run(f, a, s, &e, pts, np, modes, nm, variants, nv, by_shape, confidence);
    rc = section_headline(f, a, s, &e, pts, np, views, nviews, variants, nv, by_shape, confidence);
    if (rc == ATTN_OK)
        rc = section_figures(f, a, s, pts, np, views, nviews, variants, nv, by_shape, ratio_why, confidence);
    if (rc == ATTN_OK) rc = section_decode(f, s, &e, views, nviews, pts, np, variants, nv, by_shape);
    section_tables(f, s, views, nviews, pts, np, variants, nv, by_shape);
    section_env(f, &e, envpath);
    fputs("</body></html>\n", f);

    free(pts);
    free(variants);
    env_free(&e);
    if (fclose(f) != 0 && rc == ATTN_OK) rc = ATTN_FAIL(ATTN_ERR, "%s: write failed", path);
    if (rc != ATTN_OK) return rc;
    printf("report: %s\n", path);
    return ATTN_OK;
}

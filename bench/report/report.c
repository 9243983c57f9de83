/* report.c — build/report's command line and what its two commands share:
 * turning a results CSV into what the gnuplot scripts in plots/ draw
 * (report_data.c) and into the HTML report page (report_html.c). Data and
 * plotting stay apart: this tool only writes tidy data files, gnuplot only
 * draws them.
 *
 *   report data RESULTS OUTDIR [--mode M] [--thresholds T] [--baseline B]
 *       OUTDIR/panel_D{d}_{full,causal}.dat (one block per variant), with a
 *       baseline measured together with the run (report_measured_together)
 *       OUTDIR/ratio_D{d}_{full,causal}.dat (the gate's verdict per row),
 *       and OUTDIR/meta.gp: what the scripts need to know (OUTDIR/page-K/
 *       too, for a run of more panels than a figure holds); the formats are
 *       in plots/README.md. A run of several model shapes (the llm
 *       grid) gets a panel per shape instead:
 *       panel_H{h}_KV{kv}_D{d}_{full,causal}.dat. Each pass (fwd, bwd,
 *       fwd_bwd: what the row times) is a family of figures of its own,
 *       drawn from its rows alone (report_pass_rows): the forward's as
 *       above, a backward's panels ..._bwd.dat and ..._fwd_bwd.dat with
 *       their meta.gp in OUTDIR/bwd/ and OUTDIR/fwd_bwd/. A decode's
 *       points (q_len < seq_len) are panels of their own, ..._q{q}.dat,
 *       which the bandwidth figure draws in GB/s. Which panel a row
 *       is in is decided here, once (report_panel_of: the pass is part of
 *       it), for the figures and the page's tables alike.
 *   report html RESULTS OUTDIR [--env ENVFILE] [--thresholds T] [--baseline B]
 *       OUTDIR/report.html: what ran (with the revisions and dates of its
 *       rows when there are several, the regime, and how the rows were
 *       measured: in turns or row after row), the headline and where each
 *       variant stands, the figures found in OUTDIR (with speedup_torch's
 *       numbers as a table; why the ratio figure is missing for a baseline
 *       measured apart), a run's decode points in GB/s, the full tables
 *       per mode and regime (each pass other than the forward in a section
 *       of its own) and the run's environment.
 *   T (a thresholds file) gives the gate's confidence, which a compare
 *   run's intervals use, and the ratio figure's limits; without it, as the
 *   gate does, bench/gate/thresholds.conf where it can be read, else the
 *   gate's built-in defaults.
 * Both know the PyTorch peers (report_is_peer): the figures draw them
 * dashed, the page marks them, and both set our variants against the
 * fastest of them (report_best_peer). Both take a panel's points from the
 * same family (report_families) and every ratio between two rows from one
 * rule (report_speed_ratio): interleaved from the samples of a compare run,
 * with its interval at the gate's confidence (report_confidence), else the
 * medians' ratio of rows measured row after row.
 * Exit 0, or 2 with "report: file:line: why" on bad input. */
#include "report.h"
#include "../gate/compare.h"
#include "../gate/gate.h"
#include "../gate/shift.h"
#include "../../common/errors.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const enum attn_mode report_modes[MODE_COUNT] = {MODE_COLD, MODE_GRAPH, MODE_HOT};

int report_variants(const struct result_set *s, const char ***names, int *n)
{
    size_t cap = 0;
    *names = NULL;
    *n = 0;
    for (size_t i = 0; i < s->count; i++) {
        bool seen = false;
        for (int v = *n - 1; v >= 0 && !seen; v--) seen = !strcmp((*names)[v], s->rows[i].key.variant);
        if (seen) continue;
        if ((size_t)*n == cap) {
            cap = cap ? 2 * cap : 16;
            const char **grown = realloc(*names, cap * sizeof *grown);
            if (!grown) {
                free(*names);
                *names = NULL;
                return ATTN_FAIL(ATTN_ERR, "out of host memory");
            }
            *names = grown;
        }
        (*names)[(*n)++] = s->rows[i].key.variant;
    }
    return ATTN_OK;
}

/* The ab_run every row of s carries, or NULL (none, or not one for all). */
static const char *one_ab_run(const struct result_set *s)
{
    if (!s->count || !s->rows[0].ab_run[0]) return NULL;
    for (size_t i = 1; i < s->count; i++)
        if (strcmp(s->rows[i].ab_run, s->rows[0].ab_run)) return NULL;
    return s->rows[0].ab_run;
}

bool report_measured_together(const struct result_set *run, const struct result_set *base, char *why, size_t len)
{
    const char *a = one_ab_run(run), *b = one_ab_run(base);
    if (a && b && !strcmp(a, b)) return true;
    if (!strcmp(run->path, base->path))
        snprintf(why, len, "the baseline is the run itself");
    else if (a && b)
        snprintf(why, len, "the run and the baseline are sides of different A/B runs (%s and %s)", a, b);
    else
        snprintf(why, len, "the run (%s) and the baseline (%s) were measured apart, not as the two sides of "
                           "one A/B run", run->count ? run->rows[0].run_id : run->path,
                 base->count ? base->rows[0].run_id : base->path);
    return false;
}

/* The row of `variant` at the same point and mode as k, or NULL. */
const struct result_rec *report_twin(const struct result_set *s, const struct result_key *k,
                                      const char *variant)
{
    struct result_key t = *k;
    snprintf(t.variant, sizeof t.variant, "%s", variant);
    for (size_t i = 0; i < s->count; i++)
        if (result_key_equal(&s->rows[i].key, &t)) return &s->rows[i];
    return NULL;
}

bool report_row_ok(const struct result_rec *r)
{
    return r && !strcmp(r->status, row_status_names[STATUS_OK]) && isfinite(r->ms_median) &&
           r->ms_median > 0;
}

double report_row_gbps(const struct result_rec *r)
{
    if (!report_row_ok(r)) return NAN;
    struct attn_problem p;
    result_key_problem(&r->key, &p);
    return attn_gbps(&p, r->ms_median);
}

bool report_is_peer(const char *variant)
{
    static const char prefix[] = "torch_";
    return !strncmp(variant, prefix, sizeof prefix - 1);
}

const struct result_rec *report_best_peer(const struct result_set *s, const struct result_key *k)
{
    const struct result_rec *best = NULL;
    for (size_t i = 0; i < s->count; i++) {
        const struct result_rec *r = &s->rows[i];
        struct result_key at = r->key;
        snprintf(at.variant, sizeof at.variant, "%s", k->variant);
        if (report_is_peer(r->key.variant) && result_key_equal(&at, k) && report_row_ok(r) &&
            (!best || r->ms_median < best->ms_median))
            best = r;
    }
    return best;
}

/* ---------------------------------------------------------------- passes */

const char *report_pass_title(enum attn_pass pass)
{
    static const char *const titles[ATTN_PASS_COUNT] = {
        [ATTN_PASS_FWD] = "forward",
        [ATTN_PASS_BWD] = "backward (dQ, dK, dV)",
        [ATTN_PASS_FWD_BWD] = "forward + backward",
    };
    return (unsigned)pass < ATTN_PASS_COUNT ? titles[pass] : "?";
}

int report_passes(const struct result_set *s, const char *mode, enum attn_pass out[ATTN_PASS_COUNT])
{
    bool has[ATTN_PASS_COUNT] = {false};
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        if ((!mode || !strcmp(k->mode, mode)) && k->pass >= 0 && k->pass < ATTN_PASS_COUNT) has[k->pass] = true;
    }
    int n = 0;
    for (int p = 0; p < ATTN_PASS_COUNT; p++)
        if (has[p]) out[n++] = (enum attn_pass)p;
    return n;
}

int report_pass_rows(const struct result_set *s, enum attn_pass pass, struct result_set *out)
{
    *out = (struct result_set){0};
    snprintf(out->path, sizeof out->path, "%s", s->path);
    out->rows = malloc((s->count + 1) * sizeof *out->rows);
    if (!out->rows) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    for (size_t i = 0; i < s->count; i++)
        if (s->rows[i].key.pass == (int)pass) out->rows[out->count++] = s->rows[i];
    const struct result_rec *dup;
    const int rc = results_index(out, &dup);
    if (rc != ATTN_OK) report_pass_rows_free(out);
    return rc;
}

void report_pass_rows_free(struct result_set *s)
{
    free(s->rows);
    free(s->index_slots);
    *s = (struct result_set){0};
}

/* ---------------------------------------------------------------- panels */

bool report_by_shape(const struct result_set *s)
{
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *a = &s->rows[i].key;
        if (a->kv_heads != a->heads || a->varlen[0]) return true;
        for (size_t j = 0; j < i; j++) {
            const struct result_key *b = &s->rows[j].key;
            if (a->head_dim == b->head_dim && a->causal == b->causal &&
                (long)a->batch * a->seq_len == (long)b->batch * b->seq_len &&
                (a->heads != b->heads || a->kv_heads != b->kv_heads))
                return true;
        }
    }
    return false;
}

struct report_panel report_panel_of(const struct attn_problem *p, bool by_shape)
{
    struct report_panel panel = {.pass = p->pass,
                                 .shape = by_shape,
                                 .heads = by_shape ? p->heads : 0,
                                 .kv_heads = by_shape ? attn_kv_heads(p) : 0,
                                 .head_dim = p->head_dim,
                                 .causal = p->causal,
                                 .q_len = attn_is_decode(p) ? attn_q_len(p) : 0,
                                 .page = p->page};
    if (by_shape) snprintf(panel.varlen, sizeof panel.varlen, "%s", p->varlen);
    return panel;
}

bool report_panel_has(const struct report_panel *panel, const struct result_key *k)
{
    struct attn_problem p;
    result_key_problem(k, &p);
    struct report_panel of = report_panel_of(&p, panel->shape);
    if (panel->batch) of.batch = k->batch; /* a batch family's panel: its rows of that batch */
    return report_panel_equal(&of, panel);
}

bool report_panel_equal(const struct report_panel *a, const struct report_panel *b)
{
    return a->pass == b->pass && a->shape == b->shape && a->heads == b->heads && a->kv_heads == b->kv_heads &&
           a->head_dim == b->head_dim && a->causal == b->causal && !strcmp(a->varlen, b->varlen) &&
           a->q_len == b->q_len && a->page == b->page && a->batch == b->batch;
}

int report_panel_cmp(const struct report_panel *a, const struct report_panel *b)
{
    if (a->pass != b->pass) return (int)a->pass - (int)b->pass;
    if (a->q_len != b->q_len) return a->q_len - b->q_len;
    if (a->page != b->page) return a->page - b->page;
    if (a->batch != b->batch) return a->batch - b->batch;
    if (a->head_dim != b->head_dim) return a->head_dim - b->head_dim;
    if (a->causal != b->causal) return (int)a->causal - (int)b->causal;
    if (a->heads != b->heads) return a->heads - b->heads;
    if (a->kv_heads != b->kv_heads) return b->kv_heads - a->kv_heads;
    return strcmp(a->varlen, b->varlen);
}

const char *report_panel_title(const struct report_panel *p, char *buf, size_t len)
{
    const char *causal = p->causal ? "causal" : "non-causal";
    char q[32] = ""; /* a decode's queries per sequence, after the heads */
    if (p->q_len) snprintf(q, sizeof q, p->shape ? " Q=%d" : "Q = %d, ", p->q_len);
    if (!p->shape) snprintf(buf, len, "%sD = %d, %s", q, p->head_dim, causal);
    else if (p->kv_heads == p->heads) snprintf(buf, len, "H=%d%s, D=%d, %s", p->heads, q, p->head_dim, causal);
    else snprintf(buf, len, "H=%d KV=%d%s%s, D=%d, %s", p->heads, p->kv_heads, p->kv_heads == 1 ? " (MQA)" : "",
                  q, p->head_dim, causal);
    if (p->shape && p->varlen[0] && strlen(buf) < len)
        snprintf(buf + strlen(buf), len - strlen(buf), ", varlen %s", p->varlen);
    if (p->page && strlen(buf) < len) snprintf(buf + strlen(buf), len - strlen(buf), ", pages of %d", p->page);
    if (p->batch && strlen(buf) < len) snprintf(buf + strlen(buf), len - strlen(buf), ", batch %d", p->batch);
    if (p->pass != ATTN_PASS_FWD && strlen(buf) < len)
        snprintf(buf + strlen(buf), len - strlen(buf), ", %s", report_pass_title(p->pass));
    return buf;
}

const char *report_panel_stem(const struct report_panel *p, char *buf, size_t len)
{
    const char *causal = p->causal ? "causal" : "full";
    if (!p->shape) snprintf(buf, len, "D%d_%s", p->head_dim, causal);
    else snprintf(buf, len, "H%d_KV%d_D%d_%s", p->heads, p->kv_heads, p->head_dim, causal);
    if (p->shape && p->varlen[0] && strlen(buf) + 8 < len) {
        size_t at = strlen(buf);
        snprintf(buf + at, len - at, "_varlen-%s", p->varlen);
        for (char *c = buf + at + 8; *c; c++)
            if (!isalnum((unsigned char)*c)) *c = '-';
    }
    if (p->q_len && strlen(buf) < len) snprintf(buf + strlen(buf), len - strlen(buf), "_q%d", p->q_len);
    if (p->page && strlen(buf) < len) snprintf(buf + strlen(buf), len - strlen(buf), "_page%d", p->page);
    if (p->batch && strlen(buf) < len) snprintf(buf + strlen(buf), len - strlen(buf), "_b%d", p->batch);
    if (p->pass != ATTN_PASS_FWD && strlen(buf) < len)
        snprintf(buf + strlen(buf), len - strlen(buf), "_%s", attn_pass_name(p->pass));
    return buf;
}

/* ------------------------------------------------------------- families */

static bool in_panel(const struct result_key *k, const char *mode, const struct report_panel *panel)
{
    return !strcmp(k->mode, mode) && report_panel_has(panel, k);
}

bool report_in_family(const struct report_family *f, const struct result_key *k, const char *mode)
{
    const bool main = (long)k->batch * k->seq_len == f->tokens;
    return in_panel(k, mode, &f->key) && (f->key.batch ? !main : main);
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

int report_family_add(struct report_family **set, int *n, int *cap, const struct report_panel *p)
{
    for (int i = 0; i < *n; i++)
        if (report_panel_equal(&(*set)[i].key, p)) return ATTN_OK;
    if (*n == *cap) {
        int grown = *cap ? 2 * *cap : 16;
        struct report_family *g = realloc(*set, (size_t)grown * sizeof *g);
        if (!g) return ATTN_FAIL(ATTN_ERR, "out of host memory");
        *set = g;
        *cap = grown;
    }
    int at = (*n)++;
    for (; at > 0 && report_panel_cmp(&(*set)[at - 1].key, p) > 0; at--) (*set)[at] = (*set)[at - 1];
    (*set)[at] = (struct report_family){*p, 0};
    return ATTN_OK;
}

/* Panel p of family tokens into a growing set (report_family_add). */
static int family_put(struct report_family **set, int *n, int *cap, const struct report_panel *p, long tokens)
{
    ATTN_TRY(report_family_add(set, n, cap, p));
    for (int i = 0; i < *n; i++)
        if (report_panel_equal(&(*set)[i].key, p)) (*set)[i].tokens = tokens;
    return ATTN_OK;
}

int report_families(const struct result_set *s, const char *mode, bool by_shape, struct report_family **out,
                    int *np)
{
    int n = 0, cap = 0;
    *out = NULL;
    *np = 0;
    for (size_t i = 0; i < s->count; i++)
        if (!strcmp(s->rows[i].key.mode, mode)) {
            struct attn_problem p;
            result_key_problem(&s->rows[i].key, &p);
            const struct report_panel key = report_panel_of(&p, by_shape);
            ATTN_TRY(report_family_add(out, &n, &cap, &key));
        }
    int kept = 0;
    for (int i = 0; i < n; i++) {
        long tokens = main_family(s, mode, &(*out)[i].key);
        if (tokens > 0) (*out)[kept++] = (struct report_family){(*out)[i].key, tokens};
    }
    /* a decode panel's rows off its family: a family per batch size, each
     * knowing its panel's family (tokens) to leave its rows out; gathered
     * apart first, since adding to *out moves the panels being read */
    struct report_family *extra = NULL;
    int n_extra = 0, cap_extra = 0, rc = ATTN_OK;
    for (int i = 0; i < kept && rc == ATTN_OK; i++) {
        if (!(*out)[i].key.q_len) continue;
        for (size_t r = 0; r < s->count && rc == ATTN_OK; r++) {
            const struct result_key *k = &s->rows[r].key;
            if (!in_panel(k, mode, &(*out)[i].key) || (long)k->batch * k->seq_len == (*out)[i].tokens) continue;
            struct report_panel key = (*out)[i].key;
            key.batch = k->batch;
            rc = family_put(&extra, &n_extra, &cap_extra, &key, (*out)[i].tokens);
        }
    }
    for (int j = 0; j < n_extra && rc == ATTN_OK; j++) rc = family_put(out, &kept, &cap, &extra[j].key, extra[j].tokens);
    free(extra);
    *np = kept;
    return rc;
}

/* ------------------------------------------------------------------ ratios */

/* Measured in turns in one compare run, each with samples enough for the
 * Hodges–Lehmann ratio. */
static bool interleaved(const struct result_rec *a, const struct result_rec *b)
{
    return a->compare_run[0] && !strcmp(a->compare_run, b->compare_run) && a->nsample_ms >= SHIFT_MIN_SAMPLES &&
           b->nsample_ms >= SHIFT_MIN_SAMPLES;
}

int report_speed_ratio(const struct result_rec *ref, const struct result_rec *row, double confidence,
                       struct report_ratio *out)
{
    *out = (struct report_ratio){NAN, NAN, NAN, false};
    if (!report_row_ok(ref) || !report_row_ok(row)) return ATTN_OK;
    if (ref == row) { /* the reference itself: 1, no interval */
        out->ratio = 1;
        return ATTN_OK;
    }
    if (!interleaved(ref, row)) {
        out->ratio = ref->ms_median / row->ms_median;
        return ATTN_OK;
    }
    /* compare.h's ratio is the row's time over the reference's, as make
     * compare prints it; the speed ratio is its inverse, the bounds swapped */
    struct compare_ratio c;
    ATTN_TRY(compare_ratio_of(row, ref, confidence, &c));
    *out = (struct report_ratio){1 / c.ratio, 1 / c.hi, 1 / c.lo, true};
    return ATTN_OK;
}

int report_confidence(const char *thresholds, double *confidence)
{
    static const char tree[] = "bench/gate/thresholds.conf";
    struct gate_thresholds t;
    if (thresholds) ATTN_TRY(gate_thresholds_read(thresholds, &t));
    else if (access(tree, R_OK) == 0) ATTN_TRY(gate_thresholds_read(tree, &t));
    else gate_thresholds_default(&t);
    *confidence = t.defaults.confidence;
    return ATTN_OK;
}

const char *report_compare_run(const struct result_set *s)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->rows[i].compare_run[0]) return s->rows[i].compare_run;
    return "";
}

bool report_sustained(const struct result_key *k)
{
    return !strcmp(k->regime, regime_names[REGIME_SUSTAINED]);
}

/* ------------------------------------------------------------- mode, .env */

const char *report_pick_mode(const struct result_set *s, const char *want)
{
    if (want) return want;
    const char *cold = timing_mode_names[MODE_COLD];
    for (size_t i = 0; i < s->count; i++)
        if (!strcmp(s->rows[i].key.mode, cold)) return cold;
    return s->rows[0].key.mode;
}

double report_env_value(const char *env, const char *key)
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

void report_env_beside(const char *csv, char *out, size_t len)
{
    snprintf(out, len, "%s", csv);
    size_t n = strlen(out);
    if (n > 4 && !strcmp(out + n - 4, ".csv")) strcpy(out + n - 4, ".env");
}

/* ------------------------------------------------------------------ main */

static int parse_args(int argc, char **argv, struct report_args *a)
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
    struct report_args a;
    struct result_set s = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc == ATTN_OK) rc = results_read(a.results, &s);
    if (rc == ATTN_OK) rc = !strcmp(a.cmd, "data") ? report_data(&a, &s) : report_html(&a, &s);
    results_free(&s);
    if (rc != ATTN_OK) {
        fprintf(stderr, "report: %s\n", attn_error_message());
        return 2;
    }
    return 0;
}

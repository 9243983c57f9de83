/* gate.c — thresholds, comparison and report of the regression gate (the
 * rule is in gate.h). */
#include "gate.h"
#include "../common/errors.h"
#include "../common/reference.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ thresholds */

enum { F_VARIANT, F_DTYPE, F_MODE, F_BATCH, F_HEADS, F_SEQ, F_DIM, F_CAUSAL, F_COUNT };
static const char *const field_names[F_COUNT] = {"variant", "dtype", "mode", "batch",
                                                 "heads", "seq_len", "head_dim", "causal"};
#define F_FIRST_NUMBER F_BATCH

void gate_thresholds_default(struct gate_thresholds *t)
{
    memset(t, 0, sizeof *t);
    t->defaults = (struct gate_settings){.slowdown = 0.05, .min_ms = 0.002, .noise_k = 2.0};
}

static struct gate_settings unset(void)
{
    return (struct gate_settings){.slowdown = NAN, .min_ms = NAN, .noise_k = NAN};
}

/* "5%" or "0.05" → 0.05 for slowdown; plain numbers for the others. */
static int parse_setting(struct gate_settings *s, const char *word, const char *where)
{
    const char *eq = strchr(word, '=');
    if (!eq) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': expected key=value", where, word);
    size_t klen = (size_t)(eq - word);
    const char *val = eq + 1;
    char *end;
    errno = 0;
    double v = strtod(val, &end);
    bool percent = *end == '%';
    if (percent) end++;
    if (errno || end == val || *end || !(v >= 0))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': '%s' is not a non-negative number", where,
                         word, val);
    if (klen == 8 && !strncmp(word, "slowdown", 8)) {
        s->slowdown = percent ? v / 100 : v;
        if (s->slowdown >= 10)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s: slowdown %s is implausibly large", where, val);
    } else if (!percent && klen == 6 && !strncmp(word, "min_ms", 6)) {
        s->min_ms = v;
    } else if (!percent && klen == 7 && !strncmp(word, "noise_k", 7)) {
        s->noise_k = v;
    } else {
        return ATTN_FAIL(ATTN_ERR_INPUT,
                         "%s: unknown setting '%.*s' (slowdown, min_ms, noise_k; %% only on slowdown)",
                         where, (int)klen, word);
    }
    return ATTN_OK;
}

static bool is_setting(const char *word)
{
    return !strncmp(word, "slowdown=", 9) || !strncmp(word, "min_ms=", 7) ||
           !strncmp(word, "noise_k=", 8);
}

static int parse_cond(struct gate_cond *c, const char *word, const char *where)
{
    size_t flen = strcspn(word, "!<>=");
    const char *op = word + flen;
    c->field = -1;
    for (int i = 0; i < F_COUNT; i++)
        if (strlen(field_names[i]) == flen && !strncmp(word, field_names[i], flen)) c->field = i;
    if (c->field < 0)
        return ATTN_FAIL(ATTN_ERR_INPUT,
                         "%s: '%s': unknown field (variant, dtype, mode, batch, heads, seq_len, "
                         "head_dim, causal)", where, word);
    const char *val;
    if (!strncmp(op, "!=", 2)) { c->op = OP_NE; val = op + 2; }
    else if (!strncmp(op, "<=", 2)) { c->op = OP_LE; val = op + 2; }
    else if (!strncmp(op, ">=", 2)) { c->op = OP_GE; val = op + 2; }
    else if (*op == '=') { c->op = OP_EQ; val = op + 1; }
    else if (*op == '<') { c->op = OP_LT; val = op + 1; }
    else if (*op == '>') { c->op = OP_GT; val = op + 1; }
    else return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': expected an operator (= != < <= > >=)", where, word);
    if (!*val) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': missing value", where, word);
    if (c->field < F_FIRST_NUMBER) {
        if (c->op != OP_EQ && c->op != OP_NE)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': %s compares with = or != only", where, word,
                             field_names[c->field]);
        snprintf(c->text, sizeof c->text, "%s", val);
        return ATTN_OK;
    }
    char *end;
    errno = 0;
    c->number = strtol(val, &end, 10);
    if (errno || *end)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': '%s' is not an integer", where, word, val);
    return ATTN_OK;
}

static int parse_line(struct gate_thresholds *t, char *line, const char *where, int lineno)
{
    char *save = NULL, *w = strtok_r(line, " \t", &save);
    if (!w) return ATTN_OK;
    bool is_default = !strcmp(w, "default");
    if (!is_default && strcmp(w, "match"))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: line starts with '%s' (default or match)", where, w);
    struct gate_rule rule = {.set = unset(), .line = lineno};
    int settings = 0;
    for (w = strtok_r(NULL, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (is_setting(w) || (is_default && strchr(w, '='))) {
            ATTN_TRY(parse_setting(&rule.set, w, where));
            settings++;
        } else {
            if (is_default)
                return ATTN_FAIL(ATTN_ERR_INPUT, "%s: a default line takes settings only", where);
            if (rule.nconds == 8) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: more than 8 conditions", where);
            ATTN_TRY(parse_cond(&rule.conds[rule.nconds++], w, where));
        }
    }
    if (!settings) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no setting (slowdown=, min_ms=, noise_k=)", where);
    if (is_default) {
        if (!isnan(rule.set.slowdown)) t->defaults.slowdown = rule.set.slowdown;
        if (!isnan(rule.set.min_ms)) t->defaults.min_ms = rule.set.min_ms;
        if (!isnan(rule.set.noise_k)) t->defaults.noise_k = rule.set.noise_k;
        return ATTN_OK;
    }
    if (rule.nconds == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: match without a condition", where);
    if (t->nrules == GATE_MAX_RULES)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: more than %d match lines", where, GATE_MAX_RULES);
    t->rules[t->nrules++] = rule;
    return ATTN_OK;
}

int gate_thresholds_read(const char *path, struct gate_thresholds *t)
{
    gate_thresholds_default(t);
    FILE *f = fopen(path, "r");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", path, strerror(errno));
    char line[1024], where[600];
    int lineno = 0, rc = ATTN_OK;
    while (rc == ATTN_OK && fgets(line, sizeof line, f)) {
        lineno++;
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        line[strcspn(line, "#\r\n")] = '\0';
        rc = parse_line(t, line, where, lineno);
    }
    fclose(f);
    return rc;
}

static bool cond_holds(const struct gate_cond *c, const struct result_key *k)
{
    if (c->field < F_FIRST_NUMBER) {
        const char *s = c->field == F_VARIANT ? k->variant : c->field == F_DTYPE ? k->dtype : k->mode;
        return (strcmp(s, c->text) == 0) == (c->op == OP_EQ);
    }
    const int vals[] = {k->batch, k->heads, k->seq_len, k->head_dim, k->causal};
    long v = vals[c->field - F_FIRST_NUMBER];
    switch (c->op) {
    case OP_EQ: return v == c->number;
    case OP_NE: return v != c->number;
    case OP_LT: return v < c->number;
    case OP_LE: return v <= c->number;
    case OP_GT: return v > c->number;
    case OP_GE: return v >= c->number;
    }
    return false;
}

struct gate_settings gate_settings_for(const struct gate_thresholds *t, const struct result_key *k)
{
    struct gate_settings s = t->defaults;
    for (int i = 0; i < t->nrules; i++) {
        const struct gate_rule *r = &t->rules[i];
        bool all = true;
        for (int c = 0; c < r->nconds && all; c++) all = cond_holds(&r->conds[c], k);
        if (!all) continue;
        if (!isnan(r->set.slowdown)) s.slowdown = r->set.slowdown;
        if (!isnan(r->set.min_ms)) s.min_ms = r->set.min_ms;
        if (!isnan(r->set.noise_k)) s.noise_k = r->set.noise_k;
    }
    return s;
}

/* ------------------------------------------------------------ comparison */

static const struct result_rec *find(const struct result_set *s, const struct result_key *k)
{
    for (size_t i = 0; i < s->count; i++)
        if (result_key_equal(&s->rows[i].key, k)) return &s->rows[i];
    return NULL;
}

static struct gate_line *add_line(struct gate_report *r, const struct result_key *k)
{
    struct gate_line *nl = realloc(r->lines, (r->count + 1) * sizeof *nl);
    if (!nl) return NULL;
    r->lines = nl;
    struct gate_line *l = &r->lines[r->count++];
    memset(l, 0, sizeof *l);
    l->key = *k;
    l->base_ms = l->cur_ms = l->ratio = l->noise = l->limit = NAN;
    return l;
}

static double tolerance_of(const char *dtype)
{
    enum attn_dtype t = ATTN_BF16;
    attn_dtype_parse(dtype, &t); /* unknown dtypes are held to bf16's tolerance */
    return attn_tolerance_for(t).rel_l2;
}

static void judge(struct gate_line *l, const struct result_rec *b, const struct result_rec *c,
                  const struct gate_settings *s, struct gate_report *r)
{
    l->base_ms = b->ms_median;
    l->cur_ms = c->ms_median;
    l->limit = s->slowdown;
    if (strcmp(b->status, "ok") != 0) {
        l->verdict = V_PASS;
        snprintf(l->why, sizeof l->why, "baseline %s, now %s: not compared", b->status, c->status);
        return;
    }
    if (strcmp(c->status, "ok") != 0) {
        l->verdict = V_FAIL_STATUS;
        snprintf(l->why, sizeof l->why, "was ok, now %s (line %d)", c->status, c->line);
        r->failed++;
        return;
    }
    if (!isfinite(c->ms_median) || c->ms_median <= 0) {
        l->verdict = V_FAIL_NAN;
        snprintf(l->why, sizeof l->why, "ok row without a time (line %d)", c->line);
        r->failed++;
        return;
    }
    double tol = tolerance_of(c->key.dtype);
    if (!(isnan(c->rel_err) || c->rel_err <= tol)) {
        l->verdict = V_FAIL_ERROR;
        snprintf(l->why, sizeof l->why, "rel_err %.3g over the %s tolerance %g", c->rel_err,
                 c->key.dtype, tol);
        r->failed++;
        return;
    }
    r->compared++;
    double nb = isnan(b->noise_rel) ? 0 : b->noise_rel, nc = isnan(c->noise_rel) ? 0 : c->noise_rel;
    l->noise = sqrt(nb * nb + nc * nc);
    if (!isfinite(b->ms_median) || b->ms_median <= 0) {
        l->verdict = V_PASS;
        snprintf(l->why, sizeof l->why, "baseline has no time");
        return;
    }
    l->ratio = c->ms_median / b->ms_median;
    const double slower = l->ratio - 1, faster = 1 / l->ratio - 1;
    const double noise_allow = s->noise_k * l->noise;
    const double diff = fabs(c->ms_median - b->ms_median);
    const double clock_drop = b->sm_clock_mhz / c->sm_clock_mhz - 1; /* NaN if either unknown */
    if (slower > s->slowdown && slower > noise_allow && diff >= s->min_ms && clock_drop > s->slowdown) {
        l->verdict = V_THROTTLED;
        snprintf(l->why, sizeof l->why,
                 "%.1f%% slower, but at a %.1f%% lower SM clock (%.0f vs %.0f MHz): re-run unthrottled",
                 100 * slower, 100 * clock_drop, c->sm_clock_mhz, b->sm_clock_mhz);
        r->throttled++;
    } else if (slower > s->slowdown && slower > noise_allow && diff >= s->min_ms) {
        l->verdict = V_SLOWER;
        snprintf(l->why, sizeof l->why, "%.1f%% slower: over the %.1f%% limit and %.1f%% noise",
                 100 * slower, 100 * s->slowdown, 100 * noise_allow);
        r->regressed++;
    } else if (faster > s->slowdown && faster > noise_allow && diff >= s->min_ms) {
        l->verdict = V_FASTER;
        snprintf(l->why, sizeof l->why, "%.1f%% faster: consider `make baseline`", 100 * faster);
        r->improved++;
    } else {
        l->verdict = V_PASS;
    }
}

int gate_compare(const struct result_set *base, const struct result_set *cur,
                 const struct gate_thresholds *t, const struct gate_options *o,
                 struct gate_report *r)
{
    memset(r, 0, sizeof *r);
    /* every row of both files must come from the baseline's first row's GPU */
    const char *gpu = base->count ? base->rows[0].gpu : "";
    const struct result_set *sets[2] = {base, cur};
    for (int k = 0; k < 2 && !o->allow_gpu_mismatch && gpu[0]; k++)
        for (size_t i = 0; i < sets[k]->count; i++) {
            const struct result_rec *row = &sets[k]->rows[i];
            if (row->gpu[0] && strcmp(row->gpu, gpu) != 0)
                return ATTN_FAIL(ATTN_ERR_INPUT,
                                 "%s:%d: GPU '%s', but the baseline %s is from '%s' "
                                 "(--allow-gpu-mismatch to compare anyway)",
                                 sets[k]->path, row->line, row->gpu, base->path, gpu);
        }
    for (size_t i = 0; i < base->count; i++) {
        const struct result_rec *b = &base->rows[i];
        struct gate_line *l = add_line(r, &b->key);
        if (!l) return ATTN_FAIL(ATTN_ERR, "out of host memory");
        const struct result_rec *c = find(cur, &b->key);
        struct gate_settings s = gate_settings_for(t, &b->key);
        if (!c) {
            l->verdict = V_MISSING;
            l->base_ms = b->ms_median;
            snprintf(l->why, sizeof l->why, "baseline line %d has no counterpart%s", b->line,
                     o->allow_missing ? " (allowed)" : "");
            if (!o->allow_missing) r->missing++;
            continue;
        }
        judge(l, b, c, &s, r);
    }
    for (size_t i = 0; i < cur->count; i++) {
        if (find(base, &cur->rows[i].key)) continue;
        struct gate_line *l = add_line(r, &cur->rows[i].key);
        if (!l) return ATTN_FAIL(ATTN_ERR, "out of host memory");
        l->verdict = V_NEW;
        l->cur_ms = cur->rows[i].ms_median;
        snprintf(l->why, sizeof l->why, "not in the baseline");
        r->added++;
    }
    return ATTN_OK;
}

int gate_exit_code(const struct gate_report *r)
{
    return r->regressed || r->failed || r->missing ? 1 : 0;
}

void gate_report_free(struct gate_report *r)
{
    free(r->lines);
    r->lines = NULL;
    r->count = 0;
}

const char *gate_verdict_name(enum gate_verdict v)
{
    static const char *const names[] = {"pass", "SLOWER", "FAIL status", "FAIL no time",
                                        "FAIL error", "MISSING", "new", "faster", "throttled"};
    return v <= V_THROTTLED ? names[v] : "?";
}

/* ---------------------------------------------------------------- report */

static int severity(const struct gate_line *l)
{
    switch (l->verdict) {
    case V_FAIL_STATUS: case V_FAIL_NAN: case V_FAIL_ERROR: return 0;
    case V_MISSING: return 1;
    case V_SLOWER: return 2;
    case V_THROTTLED: return 3;
    case V_PASS: return 4;
    case V_FASTER: return 5;
    case V_NEW: return 6;
    }
    return 7;
}

static int worst_first(const void *pa, const void *pb)
{
    const struct gate_line *a = pa, *b = pb;
    int sa = severity(a), sb = severity(b);
    if (sa != sb) return sa - sb;
    double ra = isnan(a->ratio) ? 0 : a->ratio, rb = isnan(b->ratio) ? 0 : b->ratio;
    return (rb > ra) - (rb < ra);
}

static void sort_lines(struct gate_report *r)
{
    qsort(r->lines, r->count, sizeof *r->lines, worst_first);
}

static void summary(const struct gate_report *r, char *buf, size_t len)
{
    snprintf(buf, len,
             "%s: %zu compared, %zu slower, %zu failed, %zu missing, %zu new, %zu faster",
             gate_exit_code(r) ? "REGRESSION" : "PASS", r->compared, r->regressed, r->failed,
             r->missing, r->added, r->improved);
    if (r->throttled) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, ", %zu throttled (slower at a lower SM clock: not judged)",
                 r->throttled);
    }
}

static void fmt_ms(char *buf, size_t len, double v)
{
    if (isnan(v)) snprintf(buf, len, "-");
    else snprintf(buf, len, "%.4g", v);
}

void gate_print(struct gate_report *r, const char *bpath, const char *cpath, FILE *f)
{
    sort_lines(r);
    fprintf(f, "baseline %s\nresults  %s\n", bpath, cpath);
    fprintf(f, "%-12s %-48s %10s %10s %7s %6s %6s  %s\n", "verdict", "key", "base ms", "cur ms",
            "ratio", "noise", "limit", "why");
    for (size_t i = 0; i < r->count; i++) {
        const struct gate_line *l = &r->lines[i];
        char key[160], b[24], c[24];
        fmt_ms(b, sizeof b, l->base_ms);
        fmt_ms(c, sizeof c, l->cur_ms);
        fprintf(f, "%-12s %-48s %10s %10s %7.4f %5.2f%% %5.1f%%  %s\n", gate_verdict_name(l->verdict),
                result_key_label(&l->key, key, sizeof key), b, c, l->ratio, 100 * l->noise,
                100 * l->limit, l->why);
    }
    char s[256];
    summary(r, s, sizeof s);
    fprintf(f, "regress: %s\n", s);
}

void gate_print_markdown(struct gate_report *r, const char *bpath, const char *cpath, FILE *f)
{
    sort_lines(r);
    char s[256];
    summary(r, s, sizeof s);
    fprintf(f, "### attnbench regression gate: %s\n\nbaseline `%s`, results `%s`\n\n", s, bpath, cpath);
    fprintf(f, "| verdict | key | baseline ms | current ms | ratio | noise | limit | why |\n");
    fprintf(f, "|---|---|---:|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < r->count; i++) {
        const struct gate_line *l = &r->lines[i];
        char key[160], b[24], c[24];
        fmt_ms(b, sizeof b, l->base_ms);
        fmt_ms(c, sizeof c, l->cur_ms);
        fprintf(f, "| %s | %s | %s | %s | %.4f | %.2f%% | %.1f%% | %s |\n",
                gate_verdict_name(l->verdict), result_key_label(&l->key, key, sizeof key), b, c,
                l->ratio, 100 * l->noise, 100 * l->limit, l->why);
    }
}

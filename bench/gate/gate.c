/* gate.c — thresholds, comparison and report of the regression gate (the
 * rule is in gate.h). */
#include "gate.h"
#include "../../common/csv.h"
#include "../../common/errors.h"
#include "../../common/reference.h"
#include "../../common/results.h"
#include "../../common/schema.h"
#include "shift.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ thresholds */

/* The fields a rule's condition tests: the row key's columns, named as in
 * the results file (schema.h), the text ones first. */
enum { F_VARIANT, F_DTYPE, F_MODE, F_VARLEN, F_BATCH, F_HEADS, F_KV_HEADS, F_SEQ, F_DIM, F_CAUSAL,
       F_COUNT };
static const enum result_column field_column[F_COUNT] = {COL_VARIANT, COL_DTYPE, COL_MODE, COL_VARLEN,
                                                         COL_BATCH, COL_HEADS, COL_KV_HEADS, COL_SEQ,
                                                         COL_DIM, COL_CAUSAL};
#define F_FIRST_NUMBER F_BATCH
/* The largest dimension a results file may hold (results_read refuses more):
 * a condition past it, or under 1, can hold for no row. */
#define KEY_DIM_MAX (1L << 30)

static const char *field_name(int f) { return result_column_names[field_column[f]]; }

/* The settings a line may set: where each lives in struct gate_settings,
 * whether it is written as a percentage too ("5%" or "0.05"), and the range
 * it must lie in. */
static const struct setting_def {
    const char *name;
    size_t offset;
    bool percent;
    double lo, hi;
    bool lo_open, hi_open; /* lo < v rather than lo <= v; v < hi rather than v <= hi */
    const char *range;     /* the range in a message */
} setting_defs[] = {
    {"slowdown", offsetof(struct gate_settings, slowdown), true, 0, 10, false, true, "under 1000%"},
    {"ab_slowdown", offsetof(struct gate_settings, ab_slowdown), true, 0, 10, false, true, "under 1000%"},
    {"min_ms", offsetof(struct gate_settings, min_ms), false, 0, 1e6, false, false, "at most 1e6"},
    {"noise_k", offsetof(struct gate_settings, noise_k), false, 0, 100, false, false, "at most 100"},
    {"confidence", offsetof(struct gate_settings, confidence), true, 0.5, 1, true, true,
     "in (50%, 100%)"},
};
#define NSETTINGS (sizeof setting_defs / sizeof setting_defs[0])
#define SETTINGS_LISTED "slowdown, ab_slowdown, min_ms, noise_k, confidence"

static double *setting_slot(struct gate_settings *s, size_t i)
{
    return (double *)((char *)s + setting_defs[i].offset);
}

void gate_thresholds_default(struct gate_thresholds *t)
{
    memset(t, 0, sizeof *t);
    t->defaults = (struct gate_settings){.slowdown = 0.05, .ab_slowdown = 0.02, .min_ms = 0.002,
                                         .noise_k = 2.0, .confidence = 0.99};
}

static struct gate_settings unset(void)
{
    struct gate_settings s;
    for (size_t i = 0; i < NSETTINGS; i++) *setting_slot(&s, i) = NAN;
    return s;
}

/* Each setting that `from` sets overrides `into`'s. */
static void merge(struct gate_settings *into, const struct gate_settings *from)
{
    for (size_t i = 0; i < NSETTINGS; i++) {
        const double v = *(const double *)((const char *)from + setting_defs[i].offset);
        if (!isnan(v)) *setting_slot(into, i) = v;
    }
}

/* The setting a "key=value" word sets, or -1 when its key names none. */
static int find_setting(const char *word)
{
    const size_t klen = strcspn(word, "=");
    if (!word[klen]) return -1;
    for (size_t i = 0; i < NSETTINGS; i++)
        if (strlen(setting_defs[i].name) == klen && !strncmp(word, setting_defs[i].name, klen))
            return (int)i;
    return -1;
}

/* "5%" or "0.05" → 0.05 where the setting takes a percentage; plain numbers
 * for the others. *seen holds a bit per setting this line set already: a
 * line sets each at most once (which of two would win is no rule to rely on). */
static int parse_setting(struct gate_settings *s, int which, const char *word, const char *where,
                         unsigned *seen)
{
    const struct setting_def *d = &setting_defs[which];
    if (*seen & (1u << which))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': %s is set twice on this line", where, word,
                         d->name);
    *seen |= 1u << which;
    const char *val = word + strlen(d->name) + 1;
    char *end;
    errno = 0;
    double v = strtod(val, &end);
    bool percent = *end == '%';
    if (percent) end++;
    if (errno || end == val || *end || !isfinite(v) || !(v >= 0))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': '%s' is not a finite non-negative number", where,
                         word, val);
    if (percent && !d->percent)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': %s takes a plain number, not a percentage",
                         where, word, d->name);
    if (percent) v /= 100;
    if (!(d->lo_open ? v > d->lo : v >= d->lo) || !(d->hi_open ? v < d->hi : v <= d->hi))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': %s must be %s", where, word, d->name, d->range);
    *setting_slot(s, (size_t)which) = v;
    return ATTN_OK;
}

/* A variant's name as the registry and the peers spell them. */
static bool is_variant_name(const char *s)
{
    for (const char *c = s; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("_-.:", *c)) return false;
    return *s != '\0';
}

/* varlen's value: none (a dense batch), uniform:F or lens:L1+L2+... (attn.h). */
static bool is_varlen_value(const char *s)
{
    struct attn_lens_stats st;
    if (!strcmp(s, "none")) return true;
    if (!strncmp(s, "lens:", 5)) return attn_lens_list(s + 5, KEY_DIM_MAX, NULL, 0, &st) == ATTN_OK;
    struct attn_problem probe = {.batch = 1, .seq_len = 1};
    snprintf(probe.varlen, sizeof probe.varlen, "%s", s);
    return !strncmp(s, "uniform:", 8) && attn_varlen_check(&probe) == ATTN_OK;
}

/* A text condition's value is one a row's key can hold: otherwise the rule
 * would silently apply to nothing. */
static int check_text_value(const struct gate_cond *c, const char *word, const char *val,
                            const char *where)
{
    enum attn_dtype dt;
    switch (c->field) {
    case F_VARIANT:
        if (is_variant_name(val)) return ATTN_OK;
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': '%s' is no variant name (letters, digits, "
                         "'_', '-', '.', ':')", where, word, val);
    case F_DTYPE:
        if (attn_dtype_parse(val, &dt) == ATTN_OK) return ATTN_OK;
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': unknown dtype '%s' (bf16, fp16)", where, word, val);
    case F_MODE:
        for (int m = 0; m < MODE_COUNT; m++)
            if (!strcmp(val, timing_mode_names[m])) return ATTN_OK;
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': unknown mode '%s' (%s)", where, word, val,
                         TIMING_MODES_LISTED);
    default:
        if (is_varlen_value(val)) return ATTN_OK;
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': '%s' is no varlen (none, uniform:F, "
                         "lens:L1+L2+...)", where, word, val);
    }
}

static int parse_cond(struct gate_cond *c, const char *word, const char *where)
{
    size_t flen = strcspn(word, "!<>=");
    const char *op = word + flen;
    c->field = -1;
    for (int i = 0; i < F_COUNT; i++)
        if (strlen(field_name(i)) == flen && !strncmp(word, field_name(i), flen)) c->field = i;
    if (c->field < 0) {
        char names[128] = "";
        for (int i = 0; i < F_COUNT; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", field_name(i));
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%.*s': unknown key (settings: " SETTINGS_LISTED
                         "; fields: %s)", where, (int)flen, word, names);
    }
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
                             field_name(c->field));
        if (strlen(val) >= sizeof c->text)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': value longer than %zu characters", where,
                             word, sizeof c->text - 1);
        ATTN_TRY(check_text_value(c, word, val, where));
        /* varlen=none: a dense batch (its column is empty) */
        snprintf(c->text, sizeof c->text, "%s", c->field == F_VARLEN && !strcmp(val, "none") ? "" : val);
        return ATTN_OK;
    }
    char *end;
    errno = 0;
    c->number = strtol(val, &end, 10);
    if (errno || *end)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': '%s' is not an integer", where, word, val);
    return ATTN_OK;
}

static bool text_holds(const struct gate_cond *c, const char *s)
{
    return (strcmp(s, c->text) == 0) == (c->op == OP_EQ);
}

static bool number_holds(const struct gate_cond *c, long v)
{
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

/* Whether some row's value of field f meets every one of the rule's
 * conditions on f. Numbers: the values a key may hold (1 .. KEY_DIM_MAX,
 * causal 0 or 1) narrowed by each bound, less the values != excludes. Text:
 * the = value, else each dtype or mode name; a variant or varlen that only
 * != constrains always has some other value. */
static bool field_can_hold(const struct gate_rule *r, int f)
{
    if (f >= F_FIRST_NUMBER) {
        long lo = f == F_CAUSAL ? 0 : 1, hi = f == F_CAUSAL ? 1 : KEY_DIM_MAX;
        for (int i = 0; i < r->nconds; i++) {
            const struct gate_cond *c = &r->conds[i];
            if (c->field != f) continue;
            const long n = c->number < -1 ? -1 : c->number > KEY_DIM_MAX + 1 ? KEY_DIM_MAX + 1 : c->number;
            if ((c->op == OP_EQ || c->op == OP_LE) && n < hi) hi = n;
            if (c->op == OP_LT && n - 1 < hi) hi = n - 1;
            if ((c->op == OP_EQ || c->op == OP_GE) && n > lo) lo = n;
            if (c->op == OP_GT && n + 1 > lo) lo = n + 1;
        }
        /* the != conditions exclude at most nconds values: look that far */
        for (long v = lo; v <= hi && v <= lo + r->nconds; v++) {
            bool all = true;
            for (int i = 0; i < r->nconds && all; i++)
                all = r->conds[i].field != f || number_holds(&r->conds[i], v);
            if (all) return true;
        }
        return false;
    }
    const char *eq = NULL;
    for (int i = 0; i < r->nconds && !eq; i++)
        if (r->conds[i].field == f && r->conds[i].op == OP_EQ) eq = r->conds[i].text;
    const char *dtypes[] = {attn_dtype_name(ATTN_BF16), attn_dtype_name(ATTN_FP16)};
    const char *const *candidates = eq ? &eq : f == F_DTYPE ? dtypes : f == F_MODE ? timing_mode_names : NULL;
    const size_t ncandidates = eq ? 1 : f == F_DTYPE ? 2 : f == F_MODE ? MODE_COUNT : 0;
    if (!candidates) return true;
    for (size_t k = 0; k < ncandidates; k++) {
        bool all = true;
        for (int i = 0; i < r->nconds && all; i++)
            all = r->conds[i].field != f || text_holds(&r->conds[i], candidates[k]);
        if (all) return true;
    }
    return false;
}

/* A match line whose conditions no row can meet together is refused: it
 * would apply to nothing, silently. words: the conditions as written. */
static int check_rule_can_hold(const struct gate_rule *r, char *const *words, const char *where)
{
    for (int f = 0; f < F_COUNT; f++) {
        if (field_can_hold(r, f)) continue;
        char conds[256] = "";
        for (int i = 0; i < r->nconds; i++)
            if (r->conds[i].field == f)
                snprintf(conds + strlen(conds), sizeof conds - strlen(conds), "%s%s", conds[0] ? " " : "",
                         words[i]);
        char domain[64] = "";
        if (f >= F_FIRST_NUMBER)
            snprintf(domain, sizeof domain, " (%s is %s)", field_name(f), f == F_CAUSAL ? "0 or 1" : "1 or more");
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': no %s meets that%s, so the line would apply "
                         "to nothing", where, conds, field_name(f), domain);
    }
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
    char *cond_words[8];
    unsigned seen = 0;
    for (w = strtok_r(NULL, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        const int which = find_setting(w);
        if (which >= 0) {
            ATTN_TRY(parse_setting(&rule.set, which, w, where, &seen));
        } else if (is_default && strchr(w, '=')) {
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%.*s': unknown setting (" SETTINGS_LISTED ")",
                             where, (int)strcspn(w, "="), w);
        } else {
            if (is_default)
                return ATTN_FAIL(ATTN_ERR_INPUT, "%s: a default line takes settings only", where);
            if (rule.nconds == 8) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: more than 8 conditions", where);
            cond_words[rule.nconds] = w;
            ATTN_TRY(parse_cond(&rule.conds[rule.nconds++], w, where));
        }
    }
    if (!seen)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no setting (" SETTINGS_LISTED ")", where);
    if (is_default) {
        merge(&t->defaults, &rule.set);
        return ATTN_OK;
    }
    if (rule.nconds == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: match without a condition", where);
    ATTN_TRY(check_rule_can_hold(&rule, cond_words, where));
    if (t->nrules == GATE_MAX_RULES)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: more than %d match lines", where, GATE_MAX_RULES);
    t->rules[t->nrules++] = rule;
    return ATTN_OK;
}

int gate_thresholds_read(const char *path, struct gate_thresholds *t)
{
    gate_thresholds_default(t);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: is a directory, not a thresholds file", path);
    FILE *f = fopen(path, "r");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", path, strerror(errno));
    /* whole lines, however long: a comment's tail is never read as a rule */
    char line[CSV_LINE_MAX], where[600];
    int lineno = 0, rc = ATTN_OK, got;
    while (rc == ATTN_OK && (got = csv_read_line(f, line, sizeof line)) != 0) {
        lineno++;
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        if (got == -1) rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: line too long (at most %d bytes)", where, CSV_LINE_MAX - 1);
        else if (got == -3) rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: NUL byte in the line", where);
        if (rc != ATTN_OK) break;
        line[strcspn(line, "#")] = '\0';
        rc = parse_line(t, line, where, lineno);
    }
    fclose(f);
    return rc;
}

static bool cond_holds(const struct gate_cond *c, const struct result_key *k)
{
    if (c->field < F_FIRST_NUMBER) {
        const char *s = c->field == F_VARIANT ? k->variant
                        : c->field == F_DTYPE ? k->dtype
                        : c->field == F_VARLEN ? k->varlen
                                               : k->mode;
        return text_holds(c, s);
    }
    const int vals[] = {k->batch, k->heads, k->kv_heads, k->seq_len, k->head_dim, k->causal};
    return number_holds(c, vals[c->field - F_FIRST_NUMBER]);
}

struct gate_settings gate_settings_for(const struct gate_thresholds *t, const struct result_key *k)
{
    struct gate_settings s = t->defaults;
    for (int i = 0; i < t->nrules; i++) {
        const struct gate_rule *r = &t->rules[i];
        bool all = true;
        for (int c = 0; c < r->nconds && all; c++) all = cond_holds(&r->conds[c], k);
        if (all) merge(&s, &r->set);
    }
    return s;
}

/* ------------------------------------------------------------ comparison */

/* The row of s with key k: through the reader's index when s was read from a
 * file, else (a set built by hand) by a scan. */
static const struct result_rec *find(const struct result_set *s, const struct result_key *k)
{
    if (s->index_cap) return results_find(s, k);
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
    l->base_ms = l->cur_ms = l->ratio = l->lo = l->hi = l->noise = l->limit = NAN;
    return l;
}

static double tolerance_of(const char *dtype)
{
    enum attn_dtype t = ATTN_BF16;
    attn_dtype_parse(dtype, &t); /* unknown dtypes are held to bf16's tolerance */
    return attn_tolerance_for(t).rel_l2;
}

/* ATTN_ERR_INPUT only for samples the estimate refuses. */
static int judge(struct gate_line *l, const struct result_rec *b, const struct result_rec *c,
                 const struct gate_settings *s, struct gate_report *r)
{
    l->base_ms = b->ms_median;
    l->cur_ms = c->ms_median;
    l->limit = s->slowdown;
    if (strcmp(b->status, row_status_names[STATUS_OK]) != 0) {
        l->verdict = V_PASS;
        snprintf(l->why, sizeof l->why, "baseline %s, now %s: not compared", b->status, c->status);
        return ATTN_OK;
    }
    if (strcmp(c->status, row_status_names[STATUS_OK]) != 0) {
        l->verdict = V_FAIL_STATUS;
        snprintf(l->why, sizeof l->why, "was ok, now %s (line %d)", c->status, c->line);
        r->failed++;
        return ATTN_OK;
    }
    if (!isfinite(c->ms_median) || c->ms_median <= 0) {
        l->verdict = V_FAIL_NAN;
        snprintf(l->why, sizeof l->why, "ok row without a time (line %d)", c->line);
        r->failed++;
        return ATTN_OK;
    }
    double tol = tolerance_of(c->key.dtype);
    if (!(isnan(c->rel_err) || c->rel_err <= tol)) {
        l->verdict = V_FAIL_ERROR;
        snprintf(l->why, sizeof l->why, "rel_err %.3g over the %s tolerance %g", c->rel_err,
                 c->key.dtype, tol);
        r->failed++;
        return ATTN_OK;
    }
    r->compared++;
    double nb = isnan(b->noise_rel) ? 0 : b->noise_rel, nc = isnan(c->noise_rel) ? 0 : c->noise_rel;
    l->noise = sqrt(nb * nb + nc * nc);
    if (!isfinite(b->ms_median) || b->ms_median <= 0) {
        l->verdict = V_PASS;
        snprintf(l->why, sizeof l->why, "baseline has no time");
        return ATTN_OK;
    }
    l->paired = b->ab_run[0] && !strcmp(b->ab_run, c->ab_run);
    l->limit = l->paired ? s->ab_slowdown : s->slowdown;
    const double diff = fabs(c->ms_median - b->ms_median);
    const double clock_drop = b->sm_clock_mhz / c->sm_clock_mhz - 1; /* NaN if either unknown */
    bool slower, faster;
    char how[96];
    if (b->nsample_ms >= SHIFT_MIN_SAMPLES && c->nsample_ms >= SHIFT_MIN_SAMPLES) {
        struct shift_estimate e;
        ATTN_TRY(shift_estimate(b->sample_ms, b->nsample_ms, c->sample_ms, c->nsample_ms, s->confidence, &e));
        l->ratio = e.ratio;
        l->lo = e.lo;
        l->hi = e.hi;
        slower = e.lo - 1 > l->limit && diff >= s->min_ms;
        faster = 1 / e.hi - 1 > l->limit && diff >= s->min_ms;
        snprintf(how, sizeof how, "%.1f%% slower at %.0f%% confidence", 100 * (e.lo - 1),
                 100 * s->confidence);
    } else {
        l->ratio = c->ms_median / b->ms_median;
        const double noise_allow = s->noise_k * l->noise;
        slower = l->ratio - 1 > l->limit && l->ratio - 1 > noise_allow && diff >= s->min_ms;
        faster = 1 / l->ratio - 1 > l->limit && 1 / l->ratio - 1 > noise_allow && diff >= s->min_ms;
        snprintf(how, sizeof how, "%.1f%% slower, over the %.1f%% noise", 100 * (l->ratio - 1),
                 100 * noise_allow);
    }
    /* Slowed by the board, not the code: a lower SM clock, or a thermal or
     * hardware slowdown NVML reported during this row and not during the
     * baseline's (both recorded; the power cap alone is the H200's steady
     * state, not an excuse). An interleaved pair shares the board: its
     * readings, taken at different moments, do not excuse anything. */
    const unsigned long long new_reasons =
        b->throttle_known && c->throttle_known ? c->throttle & ~b->throttle & THROTTLE_HEAT_OR_HW : 0;
    if (slower && !l->paired && (clock_drop > l->limit || new_reasons)) {
        char seen[96] = "none recorded";
        if (c->throttle_known) results_throttle_names(c->throttle, seen, sizeof seen);
        l->verdict = V_THROTTLED;
        if (clock_drop > l->limit)
            snprintf(l->why, sizeof l->why,
                     "%.1f%% slower, but at a %.1f%% lower SM clock (%.0f vs %.0f MHz; throttle: %s): "
                     "re-run unthrottled", 100 * (l->ratio - 1), 100 * clock_drop, c->sm_clock_mhz,
                     b->sm_clock_mhz, seen);
        else
            snprintf(l->why, sizeof l->why,
                     "%.1f%% slower, with a slowdown the baseline's row did not have (throttle: %s): "
                     "re-run unthrottled", 100 * (l->ratio - 1), seen);
        r->throttled++;
    } else if (slower) {
        l->verdict = V_SLOWER;
        snprintf(l->why, sizeof l->why, "at least %s: over the %.1f%% limit%s", how,
                 100 * l->limit, l->paired ? " (interleaved)" : "");
        r->regressed++;
    } else if (faster) {
        l->verdict = V_FASTER;
        snprintf(l->why, sizeof l->why, "%.1f%% faster: consider `make baseline`", 100 * (1 / l->ratio - 1));
        r->improved++;
    } else {
        l->verdict = V_PASS;
    }
    return ATTN_OK;
}

int gate_compare(const struct result_set *base, const struct result_set *cur,
                 const struct gate_thresholds *t, const struct gate_options *o,
                 struct gate_report *r)
{
    memset(r, 0, sizeof *r);
    /* every row of both files must name the same GPU, an empty name included:
     * one row's empty field must not switch the check off */
    const char *gpu = base->count ? base->rows[0].gpu : "";
    const struct result_set *sets[2] = {base, cur};
    for (int k = 0; k < 2 && !o->allow_gpu_mismatch; k++)
        for (size_t i = 0; i < sets[k]->count; i++) {
            const struct result_rec *row = &sets[k]->rows[i];
            if (strcmp(row->gpu, gpu) != 0)
                return ATTN_FAIL(ATTN_ERR_INPUT,
                                 "%s:%d: GPU '%s', but %s:%d says '%s' "
                                 "(--allow-gpu-mismatch to compare anyway)",
                                 sets[k]->path, row->line, row->gpu, base->path, base->rows[0].line, gpu);
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
        ATTN_TRY(judge(l, b, c, &s, r));
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

/* One number by fmt, "-" when it is NaN. */
static void fmt_num(char *buf, size_t len, const char *fmt, double v)
{
    if (isnan(v)) snprintf(buf, len, "-");
    else snprintf(buf, len, fmt, v);
}

static void fmt_ms(char *buf, size_t len, double v) { fmt_num(buf, len, "%.4g", v); }

/* The ratio's uncertainty: its confidence bounds (sample rule) or the rows'
 * combined noise (summary rule). */
static void fmt_spread(char *buf, size_t len, const struct gate_line *l)
{
    if (!isnan(l->lo)) snprintf(buf, len, "[%.4f, %.4f]", l->lo, l->hi);
    else if (!isnan(l->noise)) snprintf(buf, len, "noise %.2f%%", 100 * l->noise);
    else snprintf(buf, len, "-");
}

/* A report line's cells as text, for both the table and the markdown. */
struct cells {
    char key[160], base[24], cur[24], ratio[24], spread[48], limit[24];
};

static void line_cells(const struct gate_line *l, struct cells *t)
{
    result_key_label(&l->key, t->key, sizeof t->key);
    fmt_ms(t->base, sizeof t->base, l->base_ms);
    fmt_ms(t->cur, sizeof t->cur, l->cur_ms);
    fmt_num(t->ratio, sizeof t->ratio, "%.4f", l->ratio);
    fmt_spread(t->spread, sizeof t->spread, l);
    fmt_num(t->limit, sizeof t->limit, "%.1f%%", 100 * l->limit);
}

void gate_print(struct gate_report *r, const char *bpath, const char *cpath, FILE *f)
{
    sort_lines(r);
    fprintf(f, "baseline %s\nresults  %s\n", bpath, cpath);
    fprintf(f, "%-12s %-48s %10s %10s %7s %-18s %6s  %s\n", "verdict", "key", "base ms", "cur ms",
            "ratio", "bounds / noise", "limit", "why");
    for (size_t i = 0; i < r->count; i++) {
        const struct gate_line *l = &r->lines[i];
        struct cells t;
        line_cells(l, &t);
        fprintf(f, "%-12s %-48s %10s %10s %7s %-18s %6s  %s\n", gate_verdict_name(l->verdict),
                t.key, t.base, t.cur, t.ratio, t.spread, t.limit, l->why);
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
    fprintf(f, "| verdict | key | baseline ms | current ms | ratio | bounds / noise | limit | why |\n");
    fprintf(f, "|---|---|---:|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < r->count; i++) {
        const struct gate_line *l = &r->lines[i];
        struct cells t;
        line_cells(l, &t);
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", gate_verdict_name(l->verdict),
                t.key, t.base, t.cur, t.ratio, t.spread, t.limit, l->why);
    }
}

/* "RUN_ID (rev REV)" of a run: its first row's. */
static void run_name(const struct result_set *s, char *buf, size_t len)
{
    const struct result_rec *r = &s->rows[0];
    if (r->run_id[0]) snprintf(buf, len, "%s (rev %s)", r->run_id, r->git_rev[0] ? r->git_rev : "?");
    else snprintf(buf, len, "%s", s->path);
}

static int print_to(const char *path, struct gate_report *rep, const char *bpath, const char *cpath,
                    const char *compare, bool markdown)
{
    FILE *m = fopen(path, "w");
    if (!m) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create: %s", path, strerror(errno));
    if (markdown) {
        gate_print_markdown(rep, bpath, cpath, m);
    } else {
        fprintf(m, "%s\n", compare);
        gate_print(rep, bpath, cpath, m);
    }
    if (fclose(m) != 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to write: %s", path, strerror(errno));
    return ATTN_OK;
}

/* Whether s holds a row of variant. */
static bool has_variant(const struct result_set *s, const char *variant)
{
    for (size_t i = 0; i < s->count; i++)
        if (!strcmp(s->rows[i].key.variant, variant)) return true;
    return false;
}

int gate_check_pair(const struct result_set *base, const struct result_set *cand,
                    const long planned[2])
{
    const struct result_set *sides[2] = {base, cand};
    for (int k = 0; k < 2; k++) {
        const struct result_set *s = sides[k], *other = sides[1 - k];
        if (planned[k] >= 0 && (size_t)planned[k] != s->count)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s holds %zu rows where %ld were planned (%s in its "
                             ".env): an incomplete A/B pair", s->path, s->count, planned[k],
                             GATE_AB_ROWS_PLANNED);
        for (size_t i = 0; i < s->count; i++) {
            const struct result_rec *r = &s->rows[i];
            char label[ATTN_LABEL_MAX + 64];
            if (find(other, &r->key) || !has_variant(other, r->key.variant)) continue;
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: %s has no counterpart in %s, which holds other "
                             "%s rows: the two sides' rows differ (an incomplete A/B pair)", s->path,
                             r->line, result_key_label(&r->key, label, sizeof label), other->path,
                             r->key.variant);
        }
    }
    return ATTN_OK;
}

static int compare_sets(const struct gate_files_request *q, const struct result_set *base,
                        const struct result_set *cur, FILE *out, int *exit_code)
{
    struct gate_thresholds t;
    if (q->thresholds) ATTN_TRY(gate_thresholds_read(q->thresholds, &t));
    else if (access("bench/gate/thresholds.conf", R_OK) == 0) ATTN_TRY(gate_thresholds_read("bench/gate/thresholds.conf", &t));
    else gate_thresholds_default(&t);
    char bname[600], cname[600], compare[1300];
    run_name(base, bname, sizeof bname);
    run_name(cur, cname, sizeof cname);
    snprintf(compare, sizeof compare, "compare: %s vs %s", bname, cname);
    if (!strcmp(base->rows[0].run_id, cur->rows[0].run_id) && base->rows[0].run_id[0])
        return ATTN_FAIL(ATTN_ERR_INPUT,
                         "%s and %s hold the same run (%s): a run compared with itself cannot fail",
                         base->path, cur->path, base->rows[0].run_id);
    if (q->pair) ATTN_TRY(gate_check_pair(base, cur, q->planned));
    const char *bpath = q->baseline_name ? q->baseline_name : base->path,
               *cpath = q->results_name ? q->results_name : cur->path;
    struct gate_report rep;
    int rc = gate_compare(base, cur, &t, &q->options, &rep);
    if (rc == ATTN_OK) {
        fprintf(out, "%s\n", compare);
        gate_print(&rep, bpath, cpath, out);
        if (q->copy_to) rc = print_to(q->copy_to, &rep, bpath, cpath, compare, false);
        if (rc == ATTN_OK && q->markdown) rc = print_to(q->markdown, &rep, bpath, cpath, compare, true);
        *exit_code = gate_exit_code(&rep);
    }
    gate_report_free(&rep);
    return rc;
}

int gate_files(const struct gate_files_request *q, FILE *out, int *exit_code)
{
    struct result_set base, cur;
    ATTN_TRY(results_read(q->baseline, &base));
    int rc = results_read(q->results, &cur);
    if (rc == ATTN_OK) {
        rc = compare_sets(q, &base, &cur, out, exit_code);
        results_free(&cur);
    }
    results_free(&base);
    return rc;
}

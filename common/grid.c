/* grid.c — parsing of grid specs and grid files into attention problems
 * (syntax in grid.h). Every rejection names the line and the offending text. */
#include "grid.h"
#include "errors.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_AXIS_VALUES 64
#define MAX_AXIS_VALUE (1L << 24)

enum axis { AX_BATCH, AX_TOKENS, AX_HEADS, AX_HIDDEN, AX_SEQ, AX_DIM, AX_CAUSAL,
            AX_DTYPE, AX_COUNT };
static const char *const axis_names[AX_COUNT] = {
    "batch", "tokens", "heads", "hidden", "seq", "dim", "causal", "dtype"};

struct axis_values {
    bool given;
    int n;
    long v[MAX_AXIS_VALUES];
};

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || end == s || *end) return -1;
    *out = x;
    return 0;
}

static int push_value(struct axis_values *ax, long x, const char *where, const char *key)
{
    if (ax->n == MAX_AXIS_VALUES)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: too many values for '%s' (at most %d)",
                         where, key, MAX_AXIS_VALUES);
    ax->v[ax->n++] = x;
    return ATTN_OK;
}

/* One comma item of an integer axis: N or a..b (powers of two). */
static int parse_int_item(struct axis_values *ax, const char *item, const char *where,
                          const char *key)
{
    const char *dots = strstr(item, "..");
    long lo, hi;
    if (!dots) {
        if (parse_long(item, &lo) || lo < 1 || lo > MAX_AXIS_VALUE)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s=%s': expected an integer in 1..%ld",
                             where, key, item, MAX_AXIS_VALUE);
        return push_value(ax, lo, where, key);
    }
    char left[32];
    size_t n = (size_t)(dots - item);
    if (n == 0 || n >= sizeof left)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s=%s': malformed range", where, key, item);
    memcpy(left, item, n);
    left[n] = '\0';
    if (parse_long(left, &lo) || parse_long(dots + 2, &hi) || lo < 1 || hi < lo ||
        hi > MAX_AXIS_VALUE)
        return ATTN_FAIL(ATTN_ERR_INPUT,
                         "%s: '%s=%s': a range is a..b with 1 <= a <= b <= %ld", where,
                         key, item, MAX_AXIS_VALUE);
    for (long x = lo; x <= hi; x *= 2) ATTN_TRY(push_value(ax, x, where, key));
    return ATTN_OK;
}

static int parse_bool_item(struct axis_values *ax, const char *item, const char *where)
{
    if (!strcmp(item, "1") || !strcmp(item, "yes") || !strcmp(item, "true"))
        return push_value(ax, 1, where, "causal");
    if (!strcmp(item, "0") || !strcmp(item, "no") || !strcmp(item, "false"))
        return push_value(ax, 0, where, "causal");
    return ATTN_FAIL(ATTN_ERR_INPUT, "%s: 'causal=%s': expected 0 or 1", where, item);
}

static int parse_axis(struct axis_values *axes, const char *word, const char *where)
{
    const char *eq = strchr(word, '=');
    if (!eq || eq == word || !eq[1])
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': expected key=values", where, word);
    size_t klen = (size_t)(eq - word);
    int a = -1;
    for (int i = 0; i < AX_COUNT; i++)
        if (strlen(axis_names[i]) == klen && !strncmp(word, axis_names[i], klen)) a = i;
    if (a < 0)
        return ATTN_FAIL(ATTN_ERR_INPUT,
                         "%s: unknown key '%.*s' (batch, tokens, heads, hidden, seq, "
                         "dim, causal, dtype)", where, (int)klen, word);
    struct axis_values *ax = &axes[a];
    if (ax->given)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s' given twice", where, axis_names[a]);
    ax->given = true;

    char values[512];
    if (strlen(eq + 1) >= sizeof values)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: value list of '%s' too long", where,
                         axis_names[a]);
    strcpy(values, eq + 1);
    char *save = NULL;
    for (char *item = strtok_r(values, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (a == AX_CAUSAL) {
            ATTN_TRY(parse_bool_item(ax, item, where));
        } else if (a == AX_DTYPE) {
            enum attn_dtype t;
            if (attn_dtype_parse(item, &t) != ATTN_OK)
                return ATTN_FAIL(ATTN_ERR_INPUT, "%s: 'dtype=%s': expected bf16 or fp16",
                                 where, item);
            ATTN_TRY(push_value(ax, (long)t, where, "dtype"));
        } else {
            ATTN_TRY(parse_int_item(ax, item, where, axis_names[a]));
        }
    }
    if (ax->n == 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s' has no value", where, axis_names[a]);
    return ATTN_OK;
}

static bool same_problem(const struct attn_problem *a, const struct attn_problem *b)
{
    return a->batch == b->batch && a->heads == b->heads && a->seq_len == b->seq_len &&
           a->head_dim == b->head_dim && a->causal == b->causal && a->dtype == b->dtype;
}

static int add_point(struct grid *g, const struct attn_problem *p)
{
    for (size_t i = 0; i < g->count; i++)
        if (same_problem(&g->points[i], p)) return ATTN_OK;
    if (g->count == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 32;
        struct attn_problem *np = realloc(g->points, cap * sizeof *np);
        if (!np) return ATTN_FAIL(ATTN_ERR, "out of host memory growing the grid");
        g->points = np;
        g->cap = cap;
    }
    g->points[g->count++] = *p;
    return ATTN_OK;
}

/* Derives batch from tokens (or heads from hidden) exactly, or fails. */
static int divide_exactly(long total, long part, const char *what, const char *where,
                          long *out)
{
    if (total % part != 0 || total / part < 1)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: %s %ld is not a multiple of %ld", where, what,
                         total, part);
    *out = total / part;
    return ATTN_OK;
}

static int add_product(struct grid *g, const struct axis_values *axes, const char *where);

int grid_add_spec(struct grid *g, const char *spec, const char *where)
{
    struct axis_values axes[AX_COUNT];
    memset(axes, 0, sizeof axes);
    char line[1024];
    if (strlen(spec) >= sizeof line)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: spec too long", where);
    strcpy(line, spec);
    char *save = NULL;
    int words = 0;
    for (char *w = strtok_r(line, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
        ATTN_TRY(parse_axis(axes, w, where));
        words++;
    }
    if (words == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: empty grid spec", where);
    if (axes[AX_BATCH].given == axes[AX_TOKENS].given)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: give exactly one of batch= and tokens=", where);
    if (axes[AX_HEADS].given == axes[AX_HIDDEN].given)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: give exactly one of heads= and hidden=", where);
    if (!axes[AX_SEQ].given) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: seq= is missing", where);
    if (!axes[AX_DIM].given) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: dim= is missing", where);
    if (!axes[AX_CAUSAL].given) push_value(&axes[AX_CAUSAL], 0, where, "causal");
    if (!axes[AX_DTYPE].given) push_value(&axes[AX_DTYPE], ATTN_BF16, where, "dtype");

    /* all or nothing: a spec that fails part way adds no point */
    const size_t count_before = g->count;
    int rc = add_product(g, axes, where);
    if (rc != ATTN_OK) g->count = count_before;
    return rc;
}

static int add_product(struct grid *g, const struct axis_values *axes, const char *where)
{
    const struct axis_values *bax = axes[AX_BATCH].given ? &axes[AX_BATCH] : &axes[AX_TOKENS];
    const struct axis_values *hax = axes[AX_HEADS].given ? &axes[AX_HEADS] : &axes[AX_HIDDEN];
    for (int it = 0; it < axes[AX_DTYPE].n; it++)
    for (int id = 0; id < axes[AX_DIM].n; id++)
    for (int ic = 0; ic < axes[AX_CAUSAL].n; ic++)
    for (int is = 0; is < axes[AX_SEQ].n; is++)
    for (int ib = 0; ib < bax->n; ib++)
    for (int ih = 0; ih < hax->n; ih++) {
        long seq = axes[AX_SEQ].v[is], dim = axes[AX_DIM].v[id];
        long batch = bax->v[ib], heads = hax->v[ih];
        if (axes[AX_TOKENS].given)
            ATTN_TRY(divide_exactly(batch, seq, "tokens", where, &batch));
        if (axes[AX_HIDDEN].given)
            ATTN_TRY(divide_exactly(heads, dim, "hidden", where, &heads));
        struct attn_problem p = {
            .batch = (int)batch, .heads = (int)heads, .seq_len = (int)seq,
            .head_dim = (int)dim, .causal = axes[AX_CAUSAL].v[ic] != 0,
            .dtype = (enum attn_dtype)axes[AX_DTYPE].v[it],
            .scale = 1.0f / sqrtf((float)dim),
        };
        ATTN_TRY(add_point(g, &p));
    }
    return ATTN_OK;
}

int grid_add_file(struct grid *g, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "unable to open grid '%s'", path);
    char buf[1024], where[600];
    int lineno = 0, specs = 0, rc = ATTN_OK;
    while (rc == ATTN_OK && fgets(buf, sizeof buf, f)) {
        lineno++;
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        if (!strchr(buf, '\n') && !feof(f)) {
            rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: line too long", where);
            break;
        }
        char *hash = strchr(buf, '#');
        if (hash) *hash = '\0';
        char *s = buf;
        while (isspace((unsigned char)*s)) s++;
        if (!*s) continue;
        rc = grid_add_spec(g, s, where);
        specs++;
    }
    fclose(f);
    if (rc == ATTN_OK && specs == 0)
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "grid '%s' holds no point", path);
    return rc;
}

int grid_add_named(struct grid *g, const char *name_or_path, const char *grids_dir)
{
    size_t n = strlen(name_or_path);
    if (n == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "empty grid name");
    if (strchr(name_or_path, '/') || (n > 5 && !strcmp(name_or_path + n - 5, ".grid")))
        return grid_add_file(g, name_or_path);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.grid", grids_dir, name_or_path);
    return grid_add_file(g, path);
}

void grid_free(struct grid *g)
{
    free(g->points);
    g->points = NULL;
    g->count = g->cap = 0;
}

const char *grid_point_label(const struct attn_problem *p, char *buf, size_t len)
{
    snprintf(buf, len, "B=%d H=%d S=%d D=%d %s%s%s", p->batch, p->heads, p->seq_len,
             p->head_dim, p->causal ? "causal" : "full",
             p->dtype == ATTN_BF16 ? "" : " ", p->dtype == ATTN_BF16 ? "" : attn_dtype_name(p->dtype));
    return buf;
}

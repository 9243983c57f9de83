/* grid.c — parsing of grid specs and grid files into attention problems
 * (syntax in grid.h), and the grid's hash index that drops duplicate points.
 * Every rejection names the line and the offending text, with the text's
 * control bytes escaped (text_shown, names.h). */
#include "grid.h"
#include "errors.h"
#include "names.h"
#include "problem.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_AXIS_VALUES 64 /* distinct values of one axis */
/* An integer value as the syntax takes it: past every size limit of
 * problem.h (a point is held to those, and the message names them), within
 * int, and small enough that products of four stay far from overflow. */
#define MAX_AXIS_VALUE (1L << 30)
#define MAX_SPEC_BYTES 1023
/* A grid file's line, comment included: past this it is not a grid file
 * (and reading on would let `--grid /dev/zero`-like input run forever). */
#define MAX_LINE_BYTES (1L << 20)

enum axis { AX_BATCH, AX_TOKENS, AX_HEADS, AX_HIDDEN, AX_KV, AX_SEQ, AX_KVLEN, AX_QLEN, AX_DIM,
            AX_CAUSAL, AX_DTYPE, AX_VARLEN, AX_LENS, AX_INIT, AX_PASS, AX_PAGE, AX_COUNT };
static const char *const axis_names[AX_COUNT] = {
    "batch", "tokens", "heads", "hidden", "kv_heads", "seq", "kv_len", "q_len", "dim", "causal", "dtype",
    "varlen", "lens", "init", "pass", "page"};
#define AXIS_NAMES_LISTED                                                                            \
    "batch, tokens, heads, hidden, kv_heads, seq, kv_len, q_len, dim, causal, dtype, varlen, lens, init, pass, page, " \
    "kv_lens, kv_varlen"

/* An axis's values; the text axes (varlen, lens) keep theirs in text[], each
 * as attn_problem.varlen will hold it ("" for a dense batch). */
struct axis_values {
    bool given;
    int n;
    long v[MAX_AXIS_VALUES];
    char (*text)[ATTN_VARLEN_MAX];
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

/* Adds x to the axis unless it is there: a repeated value would only repeat
 * points, and multiplied over six axes it made a one-point line expand to
 * 63^6 combinations. */
static int push_value(struct axis_values *ax, long x, const char *where, const char *key)
{
    for (int i = 0; i < ax->n; i++)
        if (ax->v[i] == x) return ATTN_OK;
    if (ax->n == MAX_AXIS_VALUES)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: too many values for '%s' (at most %d distinct)",
                         where, key, MAX_AXIS_VALUES);
    ax->v[ax->n++] = x;
    return ATTN_OK;
}

/* One comma item of an integer axis: N, or a..b, the powers of two p with
 * a <= p <= b (grid.h, the README). */
static int parse_int_item(struct axis_values *ax, const char *item, const char *where,
                          const char *key)
{
    char shown_item[TEXT_SHOWN_BYTES];
    const char *dots = strstr(item, "..");
    long lo, hi;
    if (!dots) {
        if (parse_long(item, &lo) || lo < 1 || lo > MAX_AXIS_VALUE)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s=%s': expected an integer in 1..%ld",
                             where, key, text_shown(item, SIZE_MAX, shown_item), MAX_AXIS_VALUE);
        return push_value(ax, lo, where, key);
    }
    char left[32];
    size_t n = (size_t)(dots - item);
    if (n == 0 || n >= sizeof left)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s=%s': malformed range", where, key,
                         text_shown(item, SIZE_MAX, shown_item));
    memcpy(left, item, n);
    left[n] = '\0';
    if (parse_long(left, &lo) || parse_long(dots + 2, &hi) || lo < 1 || hi < lo ||
        hi > MAX_AXIS_VALUE)
        return ATTN_FAIL(ATTN_ERR_INPUT,
                         "%s: '%s=%s': a range is a..b with 1 <= a <= b <= %ld", where,
                         key, text_shown(item, SIZE_MAX, shown_item), MAX_AXIS_VALUE);
    long p = 1;
    while (p < lo) p *= 2; /* lo <= 2^30: no overflow */
    if (p > hi)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s=%s': no power of two between %ld and %ld",
                         where, key, text_shown(item, SIZE_MAX, shown_item), lo, hi);
    for (; p <= hi; p *= 2) ATTN_TRY(push_value(ax, p, where, key));
    return ATTN_OK;
}

/* Adds a text value unless the axis holds it (as push_value). */
static int push_text(struct axis_values *ax, const char *text, const char *where, const char *key)
{
    for (int i = 0; i < ax->n; i++)
        if (!strcmp(ax->text[i], text)) return ATTN_OK;
    if (ax->n == MAX_AXIS_VALUES)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: too many values for '%s' (at most %d distinct)",
                         where, key, MAX_AXIS_VALUES);
    snprintf(ax->text[ax->n++], ATTN_VARLEN_MAX, "%s", text);
    return ATTN_OK;
}

/* The input error just set (attn_varlen_check's or attn_problem_check's),
 * with the spec's place in front of it. */
static int failed_at(const char *where)
{
    char why[256];
    snprintf(why, sizeof why, "%s", attn_error_message());
    return ATTN_FAIL(ATTN_ERR_INPUT, "%s: %s", where, why);
}

/* One item of varlen=: none (a dense batch), uniform:F or lens:L1+L2+...;
 * the fraction is checked here, a list against batch and seq per point. */
static int parse_varlen_item(struct axis_values *ax, const char *item, const char *where)
{
    char shown_item[TEXT_SHOWN_BYTES];
    if (!strcmp(item, "none")) return push_text(ax, "", where, "varlen");
    if (strlen(item) >= ATTN_VARLEN_MAX)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: 'varlen=%s': longer than %d characters", where,
                         text_shown(item, SIZE_MAX, shown_item), ATTN_VARLEN_MAX - 1);
    struct attn_problem probe = {.batch = 1, .seq_len = 1};
    snprintf(probe.varlen, sizeof probe.varlen, "%s", item);
    if (strncmp(item, "lens:", 5) != 0 && attn_varlen_check(&probe) != ATTN_OK) return failed_at(where);
    return push_text(ax, item, where, "varlen");
}

/* One item of lens=: L1+L2+... , each 1..ATTN_SEQ_LEN_MAX; it is the point's
 * batch (their count) and seq (the longest) as well as its varlen text. */
static int parse_lens_item(struct axis_values *ax, const char *item, const char *where)
{
    char shown_item[TEXT_SHOWN_BYTES], text[ATTN_VARLEN_MAX];
    if (snprintf(text, sizeof text, "lens:%s", item) >= (int)sizeof text)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: 'lens=%s': longer than %d characters", where,
                         text_shown(item, SIZE_MAX, shown_item), ATTN_VARLEN_MAX - 6);
    struct attn_lens_stats st;
    if (attn_lens_list(item, ATTN_SEQ_LEN_MAX, NULL, 0, &st) != ATTN_OK)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: 'lens=%s': expected lengths in 1..%d (the longest "
                         "sequence attnbench takes) joined by '+'",
                         where, text_shown(item, SIZE_MAX, shown_item), ATTN_SEQ_LEN_MAX);
    return push_text(ax, text, where, "lens");
}

static int parse_bool_item(struct axis_values *ax, const char *item, const char *where)
{
    char shown_item[TEXT_SHOWN_BYTES];
    if (!strcmp(item, "1") || !strcmp(item, "yes") || !strcmp(item, "true"))
        return push_value(ax, 1, where, "causal");
    if (!strcmp(item, "0") || !strcmp(item, "no") || !strcmp(item, "false"))
        return push_value(ax, 0, where, "causal");
    return ATTN_FAIL(ATTN_ERR_INPUT, "%s: 'causal=%s': expected 0 or 1", where,
                     text_shown(item, SIZE_MAX, shown_item));
}

static int parse_axis(struct axis_values *axes, const char *word, const char *where)
{
    char shown_text[TEXT_SHOWN_BYTES];
    const char *eq = strchr(word, '=');
    if (!eq || eq == word || !eq[1])
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s': expected key=values", where,
                         text_shown(word, SIZE_MAX, shown_text));
    size_t klen = (size_t)(eq - word);
    int a = -1;
    for (int i = 0; i < AX_COUNT; i++)
        if (strlen(axis_names[i]) == klen && !strncmp(word, axis_names[i], klen)) a = i;
    if (a < 0)
        return ATTN_FAIL(ATTN_ERR_INPUT,
                         "%s: unknown key '%s' (" AXIS_NAMES_LISTED ")", where,
                         text_shown(word, klen, shown_text));
    struct axis_values *ax = &axes[a];
    if (ax->given)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s' given twice", where, axis_names[a]);
    ax->given = true;

    char values[MAX_SPEC_BYTES + 1];
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
                                 where, text_shown(item, SIZE_MAX, shown_text));
            ATTN_TRY(push_value(ax, (long)t, where, "dtype"));
        } else if (a == AX_VARLEN) {
            ATTN_TRY(parse_varlen_item(ax, item, where));
        } else if (a == AX_LENS) {
            ATTN_TRY(parse_lens_item(ax, item, where));
        } else if (a == AX_INIT) {
            float sigma;
            if (attn_init_parse(item, &sigma) != ATTN_OK)
                return ATTN_FAIL(ATTN_ERR_INPUT, "%s: 'init=%s': expected uniform, normal or "
                                 "normal:SIGMA (SIGMA in (0, 1000], as %%g writes it)", where,
                                 text_shown(item, SIZE_MAX, shown_text));
            uint32_t bits; /* the axis holds longs: sigma by its bits, equal values alike */
            memcpy(&bits, &sigma, sizeof bits);
            ATTN_TRY(push_value(ax, (long)bits, where, "init"));
        } else if (a == AX_PASS) {
            enum attn_pass pass;
            if (attn_pass_parse(item, &pass) != ATTN_OK)
                return ATTN_FAIL(ATTN_ERR_INPUT, "%s: 'pass=%s': expected %s", where,
                                 text_shown(item, SIZE_MAX, shown_text), ATTN_PASSES_LISTED);
            ATTN_TRY(push_value(ax, (long)pass, where, "pass"));
        } else if (a == AX_PAGE && !strcmp(item, "0")) {
            ATTN_TRY(push_value(ax, 0, where, "page")); /* the contiguous cache beside paged ones */
        } else {
            ATTN_TRY(parse_int_item(ax, item, where, axis_names[a]));
        }
    }
    if (ax->n == 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s' has no value", where, axis_names[a]);
    return ATTN_OK;
}

/* splitmix64's finaliser: every input bit reaches every output bit. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Hashes exactly the fields attn_problem_equal() (problem.c) compares:
 * batch, heads, K/V heads, seq_len, head_dim, causal, dtype, varlen, init,
 * pass, q_len, page.
 * Equal points must hash alike, so a field added to the equality is added
 * here too. */
static uint64_t point_hash(const struct attn_problem *p)
{
    uint64_t h = mix64(((uint64_t)(uint32_t)p->batch << 32) | (uint32_t)p->heads);
    for (const char *c = p->varlen; *c; c++) h = mix64(h ^ (unsigned char)*c);
    h = mix64(h ^ (uint32_t)attn_kv_heads(p));
    h = mix64(h ^ (((uint64_t)(uint32_t)p->seq_len << 32) | (uint32_t)p->head_dim));
    uint32_t init;
    memcpy(&init, &p->init_sigma, sizeof init);
    h = mix64(h ^ init);
    h = mix64(h ^ (uint64_t)p->pass);
    h = mix64(h ^ (uint64_t)(uint32_t)attn_q_len(p));
    h = mix64(h ^ (uint64_t)(uint32_t)p->page << 7);
    return mix64(h ^ ((uint64_t)p->causal << 1 | (uint64_t)p->dtype));
}

/* The slot of the index holding a point equal to p, or the empty slot where
 * p would go (linear probing; the index is at most half full). */
static size_t *index_slot(const struct grid *g, const struct attn_problem *p)
{
    const size_t mask = g->nslots - 1;
    for (size_t i = (size_t)point_hash(p) & mask;; i = (i + 1) & mask) {
        size_t *slot = &g->slots[i];
        if (*slot == 0 || attn_problem_equal(&g->points[*slot - 1], p)) return slot;
    }
}

/* Readies the index for `more` points beyond count: rebuilt from the points
 * when it lags them (a refused spec's points were dropped) or would pass half
 * full. more <= GRID_MAX_POINTS, so the sizes below cannot overflow. */
static int index_reserve(struct grid *g, size_t more)
{
    const size_t need = 2 * (g->count + more);
    if (g->slots && g->indexed == g->count && need <= g->nslots) return ATTN_OK;
    size_t n = g->nslots > 64 ? g->nslots : 64;
    while (n < need) n *= 2;
    if (n != g->nslots || !g->slots) {
        size_t *slots = realloc(g->slots, n * sizeof *slots);
        if (!slots) return ATTN_FAIL(ATTN_ERR, "out of host memory indexing the grid");
        g->slots = slots;
        g->nslots = n;
    }
    memset(g->slots, 0, g->nslots * sizeof *g->slots);
    for (size_t i = 0; i < g->count; i++) {
        size_t *slot = index_slot(g, &g->points[i]);
        if (*slot == 0) *slot = i + 1;
    }
    g->indexed = g->count;
    return ATTN_OK;
}

/* Appends p unless the grid holds it: the first occurrence keeps its place,
 * as the grid's order is the run order. Needs index_reserve() room. */
static int add_point(struct grid *g, const struct attn_problem *p)
{
    size_t *slot = index_slot(g, p);
    if (*slot) return ATTN_OK;
    if (g->count == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 32;
        struct attn_problem *np = realloc(g->points, cap * sizeof *np);
        if (!np) return ATTN_FAIL(ATTN_ERR, "out of host memory growing the grid");
        g->points = np;
        g->cap = cap;
    }
    g->points[g->count++] = *p;
    *slot = g->count;
    g->indexed = g->count;
    return ATTN_OK;
}

/* a·b, or SIZE_MAX where that overflows: counts stay comparable to a cap. */
static size_t mul_saturated(size_t a, size_t b)
{
    return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b;
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

static int add_product(struct grid *g, const struct axis_values *axes, size_t points,
                       const char *where);

int grid_add_spec(struct grid *g, const char *spec, const char *where)
{
    struct axis_values axes[AX_COUNT];
    memset(axes, 0, sizeof axes);
    char varlen_text[MAX_AXIS_VALUES][ATTN_VARLEN_MAX], lens_text[MAX_AXIS_VALUES][ATTN_VARLEN_MAX];
    axes[AX_VARLEN].text = varlen_text;
    axes[AX_LENS].text = lens_text;
    char line[MAX_SPEC_BYTES + 1];
    if (strlen(spec) >= sizeof line)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: spec too long (%zu bytes, at most %d)", where,
                         strlen(spec), MAX_SPEC_BYTES);
    strcpy(line, spec);
    char *save = NULL;
    int words = 0;
    bool cache_named = false; /* kv_lens= or kv_varlen=: a decode's cached lengths */
    for (char *w = strtok_r(line, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
        if (!strncmp(w, "kv_lens=", 8) || !strncmp(w, "kv_varlen=", 10)) {
            w += 3; /* lens= and varlen= by a decode's names */
            cache_named = true;
        }
        ATTN_TRY(parse_axis(axes, w, where));
        words++;
    }
    if (words == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: empty grid spec", where);
    if (axes[AX_KVLEN].given) { /* kv_len= is seq= by the name a decode gives it */
        if (axes[AX_SEQ].given)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s: kv_len= and seq= are one key: give one of them", where);
        axes[AX_SEQ] = axes[AX_KVLEN];
        axes[AX_KVLEN].given = false;
    }
    if (cache_named && !axes[AX_QLEN].given)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: kv_lens= and kv_varlen= are a decode's cached lengths: give q_len=",
                         where);
    if (!axes[AX_QLEN].given) push_value(&axes[AX_QLEN], 0, where, "q_len"); /* q_len = seq */
    const bool lens = axes[AX_LENS].given;
    if (lens && (axes[AX_BATCH].given || axes[AX_TOKENS].given || axes[AX_SEQ].given ||
                 axes[AX_VARLEN].given))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: lens= sets batch (their count) and seq (the "
                         "longest): drop batch=, tokens=, seq= and varlen=", where);
    if (!lens && axes[AX_BATCH].given == axes[AX_TOKENS].given)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: give exactly one of batch= and tokens=", where);
    if (axes[AX_HEADS].given == axes[AX_HIDDEN].given)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: give exactly one of heads= and hidden=", where);
    if (!lens && !axes[AX_SEQ].given) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: seq= is missing", where);
    if (!axes[AX_DIM].given) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: dim= is missing", where);
    if (!axes[AX_CAUSAL].given) push_value(&axes[AX_CAUSAL], 0, where, "causal");
    if (!axes[AX_DTYPE].given) push_value(&axes[AX_DTYPE], ATTN_BF16, where, "dtype");
    if (!axes[AX_VARLEN].given) push_text(&axes[AX_VARLEN], "", where, "varlen");
    if (!axes[AX_INIT].given) { /* the grid's default, by its bits as the axis holds it */
        const float sigma = g->init_given ? g->init_sigma : ATTN_INIT_DEFAULT_SIGMA;
        uint32_t bits;
        memcpy(&bits, &sigma, sizeof bits);
        push_value(&axes[AX_INIT], (long)bits, where, "init");
    }
    if (!axes[AX_PASS].given) push_value(&axes[AX_PASS], (long)g->pass, where, "pass");
    if (!axes[AX_PAGE].given) push_value(&axes[AX_PAGE], 0, where, "page");

    /* Values are distinct per axis, and batch (heads) is a one-to-one
     * function of tokens (hidden) for a given seq (dim), as batch and seq
     * are of a lens list: the product counts the spec's distinct points
     * exactly. Refused before anything expands. */
    const struct axis_values *bax = lens                     ? &axes[AX_LENS]
                                    : axes[AX_BATCH].given ? &axes[AX_BATCH]
                                                           : &axes[AX_TOKENS];
    const struct axis_values *hax = axes[AX_HEADS].given ? &axes[AX_HEADS] : &axes[AX_HIDDEN];
    const int counts[] = {bax->n, hax->n, axes[AX_KV].given ? axes[AX_KV].n : 1,
                          lens ? 1 : axes[AX_SEQ].n, axes[AX_DIM].n, axes[AX_CAUSAL].n,
                          axes[AX_DTYPE].n, axes[AX_VARLEN].n, axes[AX_INIT].n, axes[AX_PASS].n,
                          axes[AX_QLEN].n, axes[AX_PAGE].n};
    size_t points = 1;
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        points = mul_saturated(points, (size_t)counts[i]);
    if (points > GRID_MAX_POINTS)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: the grid would hold %zu points (at most %d)",
                         where, points, GRID_MAX_POINTS);

    /* all or nothing: a spec that fails part way adds no point */
    const size_t count_before = g->count;
    int rc = add_product(g, axes, points, where);
    if (rc == ATTN_OK && g->count > GRID_MAX_POINTS)
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: the grid would hold %zu points (at most %d)",
                       where, g->count, GRID_MAX_POINTS);
    if (rc != ATTN_OK) g->count = count_before; /* the index lags; rebuilt on next use */
    return rc;
}

/* Refuses a point whose Q (K, V, O) would pass GRID_MAX_TENSOR_ELEMS; each
 * factor is at most 2^30, so the product is built with a check per step. */
static int check_elems(long batch, long heads, long seq, long dim, const char *where)
{
    const long f[4] = {batch, heads, seq, dim};
    size_t n = 1;
    for (int i = 0; i < 4; i++) {
        if ((size_t)f[i] > GRID_MAX_TENSOR_ELEMS / n)
            return ATTN_FAIL(ATTN_ERR_INPUT,
                             "%s: B·H·S·D = %ld·%ld·%ld·%ld elements per tensor, more "
                             "than 2^40", where, batch, heads, seq, dim);
        n *= (size_t)f[i];
    }
    return ATTN_OK;
}

static int add_product(struct grid *g, const struct axis_values *axes, size_t points,
                       const char *where)
{
    const bool lens = axes[AX_LENS].given;
    const struct axis_values *bax = lens                     ? &axes[AX_LENS]
                                    : axes[AX_BATCH].given ? &axes[AX_BATCH]
                                                           : &axes[AX_TOKENS];
    const struct axis_values *hax = axes[AX_HEADS].given ? &axes[AX_HEADS] : &axes[AX_HIDDEN];
    ATTN_TRY(index_reserve(g, points));
    for (int ig = 0; ig < axes[AX_PAGE].n; ig++)
    for (int iq = 0; iq < axes[AX_QLEN].n; iq++)
    for (int ip = 0; ip < axes[AX_PASS].n; ip++)
    for (int ii = 0; ii < axes[AX_INIT].n; ii++)
    for (int it = 0; it < axes[AX_DTYPE].n; it++)
    for (int id = 0; id < axes[AX_DIM].n; id++)
    for (int ic = 0; ic < axes[AX_CAUSAL].n; ic++)
    for (int iv = 0; iv < axes[AX_VARLEN].n; iv++)
    for (int is = 0; is < (lens ? 1 : axes[AX_SEQ].n); is++)
    for (int ib = 0; ib < bax->n; ib++)
    for (int ih = 0; ih < hax->n; ih++)
    for (int ik = 0; ik < (axes[AX_KV].given ? axes[AX_KV].n : 1); ik++) {
        long seq = 0, dim = axes[AX_DIM].v[id], batch = 0, heads = hax->v[ih];
        const char *varlen = lens ? bax->text[ib] : axes[AX_VARLEN].text[iv];
        if (lens) { /* parse_lens_item checked the list: batch is its count, seq its longest */
            struct attn_lens_stats st;
            (void)attn_lens_list(varlen + 5, ATTN_SEQ_LEN_MAX, NULL, 0, &st);
            batch = st.count;
            seq = st.longest;
        } else {
            seq = axes[AX_SEQ].v[is];
            batch = bax->v[ib];
        }
        if (axes[AX_TOKENS].given)
            ATTN_TRY(divide_exactly(batch, seq, "tokens", where, &batch));
        if (axes[AX_HIDDEN].given)
            ATTN_TRY(divide_exactly(heads, dim, "hidden", where, &heads));
        const long kv = axes[AX_KV].given ? axes[AX_KV].v[ik] : heads;
        /* every value is at most MAX_AXIS_VALUE (batch and heads, derived,
         * less): each fits an int */
        struct attn_problem p = {
            .batch = (int)batch, .heads = (int)heads, .seq_len = (int)seq,
            .head_dim = (int)dim, .causal = axes[AX_CAUSAL].v[ic] != 0,
            .dtype = (enum attn_dtype)axes[AX_DTYPE].v[it],
            .scale = 1.0f / sqrtf((float)dim), .kv_heads = (int)kv,
        };
        snprintf(p.varlen, sizeof p.varlen, "%s", varlen);
        const uint32_t init_bits = (uint32_t)axes[AX_INIT].v[ii];
        memcpy(&p.init_sigma, &init_bits, sizeof p.init_sigma);
        p.pass = (enum attn_pass)axes[AX_PASS].v[ip];
        const long q_len = axes[AX_QLEN].v[iq];
        p.q_len = q_len == seq ? 0 : (int)q_len; /* all of the sequence's tokens: a prefill */
        p.page = (int)axes[AX_PAGE].v[ig];
        if (attn_problem_check(&p) != ATTN_OK) return failed_at(where);
        ATTN_TRY(check_elems(batch, heads, seq, dim, where));
        ATTN_TRY(add_point(g, &p));
    }
    return ATTN_OK;
}

enum line_status { LINE_OK, LINE_END, LINE_NUL, LINE_LONG, LINE_HUGE, LINE_ERROR };

/* Reads one line of f, keeping in buf (MAX_SPEC_BYTES + 1) the part before any
 * '#'; a comment is read and dropped, so it may be as long as the line may.
 * Stops at the first NUL byte, spec past MAX_SPEC_BYTES or line past
 * MAX_LINE_BYTES: each is refused for that reason. */
static enum line_status read_line(FILE *f, char *buf)
{
    size_t n = 0;
    long bytes = 0;
    bool comment = false;
    int c;
    buf[0] = '\0';
    while ((c = getc(f)) != EOF && c != '\n') {
        if (c == '\0') return LINE_NUL;
        if (++bytes > MAX_LINE_BYTES) return LINE_HUGE;
        if (c == '#') comment = true;
        if (comment) continue;
        if (n == MAX_SPEC_BYTES) return LINE_LONG;
        buf[n++] = (char)c;
        buf[n] = '\0';
    }
    if (c == EOF && ferror(f)) return LINE_ERROR;
    return c == EOF && bytes == 0 ? LINE_END : LINE_OK;
}

int grid_add_file(struct grid *g, const char *path)
{
    char shown_path[TEXT_SHOWN_BYTES];
    text_shown(path, SIZE_MAX, shown_path);
    FILE *f = fopen(path, "r");
    if (!f)
        return ATTN_FAIL(ATTN_ERR_INPUT, "unable to open grid '%s': %s", shown_path,
                         strerror(errno));
    /* Linux opens a directory for reading, and it reads as nothing: say what
     * it is rather than calling it an empty grid. */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return ATTN_FAIL(ATTN_ERR_INPUT, "grid '%s' is a directory", shown_path);
    }
    char buf[MAX_SPEC_BYTES + 1], where[TEXT_SHOWN_BYTES + 32];
    unsigned long lineno = 0;
    int specs = 0, rc = ATTN_OK;
    for (enum line_status st_line; rc == ATTN_OK && (st_line = read_line(f, buf)) != LINE_END;) {
        lineno++;
        snprintf(where, sizeof where, "%s:%lu", shown_path, lineno);
        if (st_line == LINE_NUL)
            rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: NUL byte (not a text file?)", where);
        else if (st_line == LINE_LONG)
            rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: line too long (more than %d bytes before "
                           "any '#')", where, MAX_SPEC_BYTES);
        else if (st_line == LINE_HUGE)
            rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: line too long (more than %ld bytes)", where,
                           MAX_LINE_BYTES);
        else if (st_line == LINE_ERROR)
            rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to read: %s", where, strerror(errno));
        if (rc != ATTN_OK) break;
        char *s = buf;
        while (isspace((unsigned char)*s)) s++;
        if (!*s) continue;
        rc = grid_add_spec(g, s, where);
        specs++;
    }
    fclose(f);
    if (rc == ATTN_OK && specs == 0)
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "grid '%s' holds no point", shown_path);
    return rc;
}

int grid_add_named(struct grid *g, const char *name_or_path, const char *grids_dir)
{
    size_t n = strlen(name_or_path);
    if (n == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "empty grid name");
    if (strchr(name_or_path, '/') || (n > 5 && !strcmp(name_or_path + n - 5, ".grid")))
        return grid_add_file(g, name_or_path);
    char path[1024], shown_name[TEXT_SHOWN_BYTES];
    if (!safe_name(name_or_path, GRID_NAME_MAX))
        return ATTN_FAIL(ATTN_ERR_INPUT, "grid '%s' is not a grid name (1 to %d %s) nor a path "
                         "(one with '/', or ending in .grid)",
                         text_shown(name_or_path, SIZE_MAX, shown_name), GRID_NAME_MAX, SAFE_NAME_RULE);
    int len = snprintf(path, sizeof path, "%s/%s.grid", grids_dir, name_or_path);
    if (len < 0 || (size_t)len >= sizeof path)
        return ATTN_FAIL(ATTN_ERR_INPUT, "grid name '%s' too long for --grids-dir",
                         text_shown(name_or_path, SIZE_MAX, shown_name));
    return grid_add_file(g, path);
}

void grid_free(struct grid *g)
{
    free(g->points);
    free(g->slots);
    g->points = NULL;
    g->slots = NULL;
    g->count = g->cap = g->nslots = g->indexed = 0;
}

/* problem.c — the facts of an attention problem that every part uses: dtype
 * names and sizes, a ragged batch's sequence lengths, tensor sizes, the FLOP
 * and byte counts the rates are computed from, the label a point is shown by
 * and when two points are the same one (declared in attn.h); the check of a
 * point against attnbench's limits (problem.h). */
#include "problem.h"
#include "errors.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *attn_dtype_name(enum attn_dtype t)
{
    return t == ATTN_FP16 ? "fp16" : "bf16";
}

size_t attn_dtype_bytes(enum attn_dtype t)
{
    (void)t; /* both supported dtypes are 16-bit */
    return 2;
}

int attn_dtype_parse(const char *name, enum attn_dtype *out)
{
    if (strcmp(name, "bf16") == 0) { *out = ATTN_BF16; return ATTN_OK; }
    if (strcmp(name, "fp16") == 0) { *out = ATTN_FP16; return ATTN_OK; }
    return ATTN_FAIL(ATTN_ERR_INPUT, "unknown dtype '%s' (bf16, fp16)", name);
}

bool attn_is_varlen(const struct attn_problem *p) { return p->varlen[0] != '\0'; }

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The seed of a uniform draw: the spec's text, batch and seq_len. */
static uint64_t lens_seed(const struct attn_problem *p)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = p->varlen; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h = (h ^ (uint64_t)(unsigned)p->batch) * 1099511628211ull;
    return (h ^ (uint64_t)(unsigned)p->seq_len) * 1099511628211ull;
}

int attn_lens_list(const char *list, long max_len, int *lens, long cap, struct attn_lens_stats *st)
{
    *st = (struct attn_lens_stats){0};
    for (const char *c = list;;) {
        char *end = NULL;
        errno = 0;
        const long len = strtol(c, &end, 10);
        if (!isdigit((unsigned char)*c) || errno || len < 1 || len > max_len || (*end && *end != '+'))
            return ATTN_ERR_INPUT;
        if (lens && st->count < cap) lens[st->count] = (int)len;
        st->count++;
        if (len > st->longest) st->longest = len;
        st->sum += (double)len;
        st->sum2 += (double)len * len;
        if (!*end) return ATTN_OK;
        c = end + 1;
    }
}

/* A malformed varlen: the message only when the caller reports it (the
 * counts below must not overwrite an error already set). */
#define BAD(...) (report ? ATTN_FAIL(ATTN_ERR_INPUT, __VA_ARGS__) : ATTN_ERR_INPUT)

/* Walks the batch's lengths: each into lens[i] when lens is not NULL, their
 * sum and sum of squares into *sum and *sum2 (doubles: no overflow). */
static int lens_walk(const struct attn_problem *p, int *lens, double *sum, double *sum2,
                     bool report)
{
    *sum = *sum2 = 0;
    const int B = p->batch, S = p->seq_len;
    if (B < 1 || S < 1) return BAD("batch %d and seq_len %d must be positive", B, S);
    const char *spec = p->varlen;
    if (!attn_is_varlen(p)) {
        for (int i = 0; lens && i < B; i++) lens[i] = S;
        *sum = (double)B * S;
        *sum2 = (double)B * S * S;
        return ATTN_OK;
    }
    if (!strncmp(spec, "uniform:", 8)) {
        const char *num = spec + 8;
        char *end = NULL;
        errno = 0;
        double f = strtod(num, &end);
        if (!*num || end == num || *end || errno || !(f >= 0 && f <= 1))
            return BAD("varlen '%s': uniform:F needs a fraction F in [0, 1]", spec);
        long lo = (long)ceil(f * S);
        if (lo < 1) lo = 1;
        uint64_t state = lens_seed(p), span = (uint64_t)(S - lo + 1);
        for (int i = 0; i < B; i++) {
            int len = (int)(lo + (long)(splitmix64(&state) % span));
            if (lens) lens[i] = len;
            *sum += len;
            *sum2 += (double)len * len;
        }
        return ATTN_OK;
    }
    if (!strncmp(spec, "lens:", 5)) {
        struct attn_lens_stats st;
        if (attn_lens_list(spec + 5, S, lens, B, &st) != ATTN_OK)
            return BAD("varlen '%s': lengths must be whole numbers from 1 to seq_len %d, "
                       "joined by '+'", spec, S);
        if (st.count > B) return BAD("varlen '%s': more lengths than batch %d", spec, B);
        if (st.count != B) return BAD("varlen '%s': %ld lengths for batch %d", spec, st.count, B);
        if (st.longest != S)
            return BAD("varlen '%s': the longest is %ld, seq_len is %d", spec, st.longest, S);
        *sum = st.sum;
        *sum2 = st.sum2;
        return ATTN_OK;
    }
    return BAD("varlen '%s': unknown distribution (uniform:F, or lens:L1+L2+...)", spec);
}

int attn_seq_lens(const struct attn_problem *p, int *lens)
{
    double sum, sum2;
    return lens_walk(p, lens, &sum, &sum2, true);
}

int attn_varlen_check(const struct attn_problem *p)
{
    double sum, sum2;
    return lens_walk(p, NULL, &sum, &sum2, true);
}

/* One size against its limit: "dim=1024 is above the largest head_dim the
 * reference checks (512)". */
static int size_check(const char *key, int value, const char *limit_is, int limit)
{
    if (value < 1) return ATTN_FAIL(ATTN_ERR_INPUT, "%s=%d: must be at least 1", key, value);
    if (value > limit)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s=%d is above %s (%d)", key, value, limit_is, limit);
    return ATTN_OK;
}

int attn_problem_check(const struct attn_problem *p)
{
    ATTN_TRY(size_check("dim", p->head_dim, "the largest head_dim the reference checks",
                        ATTN_HEAD_DIM_MAX));
    ATTN_TRY(size_check("seq", p->seq_len, "the longest sequence attnbench takes", ATTN_SEQ_LEN_MAX));
    ATTN_TRY(size_check("batch", p->batch, "the largest batch attnbench takes", ATTN_BATCH_MAX));
    ATTN_TRY(size_check("heads", p->heads, "the most heads attnbench takes", ATTN_HEADS_MAX));
    if (p->q_len) {
        if (p->q_len < 1 || p->q_len > p->seq_len)
            return ATTN_FAIL(ATTN_ERR_INPUT, "q_len=%d is not in 1 .. kv_len=%d (a decode's queries are "
                             "the last tokens of its sequence)", p->q_len, p->seq_len);
        if (p->pass != ATTN_PASS_FWD)
            return ATTN_FAIL(ATTN_ERR_INPUT, "q_len=%d with pass=%s: a decode is inference, its forward "
                             "only", p->q_len, attn_pass_name(p->pass));
    }
    if (p->page) {
        if (p->page < 1 || p->page > ATTN_SEQ_LEN_MAX)
            return ATTN_FAIL(ATTN_ERR_INPUT, "page=%d is not in 1 .. %d (tokens per page of the K/V cache)",
                             p->page, ATTN_SEQ_LEN_MAX);
        if (attn_is_packed(p))
            return ATTN_FAIL(ATTN_ERR_INPUT, "page=%d with a packed ragged batch (varlen '%s'): pages hold "
                             "a decode's cache (q_len set)", p->page, p->varlen);
        if (p->pass != ATTN_PASS_FWD)
            return ATTN_FAIL(ATTN_ERR_INPUT, "page=%d with pass=%s: a paged cache serves inference, its "
                             "forward only", p->page, attn_pass_name(p->pass));
    }
    const int kv = attn_kv_heads(p);
    if (kv < 1 || kv > p->heads)
        return ATTN_FAIL(ATTN_ERR_INPUT, "kv_heads=%d is not in 1 .. heads=%d (each K/V head serves "
                         "at least one query head)", kv, p->heads);
    if (p->heads % kv != 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "kv_heads=%d does not divide heads=%d (each K/V head serves "
                         "heads/kv_heads query heads)", kv, p->heads);
    double tokens, sum2;
    ATTN_TRY(lens_walk(p, NULL, &tokens, &sum2, true));
    if (attn_is_decode(p) && attn_is_varlen(p)) { /* a ragged cache: each holds its q_len new tokens */
        int *lens = (int *)malloc((size_t)p->batch * sizeof *lens);
        if (!lens) return ATTN_FAIL(ATTN_ERR, "out of host memory for the batch's %d lengths", p->batch);
        int shortest = p->seq_len;
        (void)lens_walk(p, lens, &tokens, &sum2, false);
        for (int b = 0; b < p->batch; b++)
            if (lens[b] < shortest) shortest = lens[b];
        free(lens);
        if (shortest < p->q_len)
            return ATTN_FAIL(ATTN_ERR_INPUT, "q_len=%d with cached lengths '%s': the shortest holds %d tokens, "
                             "fewer than its new ones", p->q_len, p->varlen, shortest);
    }
    if (attn_is_varlen(p) && tokens > (double)ATTN_TOKENS_MAX)
        return ATTN_FAIL(ATTN_ERR_INPUT, "varlen '%s': batch=%d of seq=%d holds %.0f tokens, more "
                         "than a ragged batch may hold (%d)", p->varlen, p->batch, p->seq_len,
                         tokens, ATTN_TOKENS_MAX);
    return ATTN_OK;
}

size_t attn_tokens(const struct attn_problem *p)
{
    double sum, sum2;
    return lens_walk(p, NULL, &sum, &sum2, false) == ATTN_OK ? (size_t)sum : 0;
}

/* Saturates at SIZE_MAX rather than wrap: B·H·S·D of four int dimensions
 * can pass 2^64, and a wrapped count (2^64 is 0) would size buffers small.
 * The grid refuses such points (GRID_MAX_TENSOR_ELEMS); this guards any
 * other caller. A dimension below 1 makes no tensor. */
static size_t elems_of(const int dims[4])
{
    size_t n = 1;
    for (int i = 0; i < 4; i++) {
        if (dims[i] < 1) return 0;
        if ((size_t)dims[i] > SIZE_MAX / n) return SIZE_MAX;
        n *= (size_t)dims[i];
    }
    return n;
}

/* tokens·heads·dim, saturating like elems_of; len: the rows of a dense
 * batch's sequence (seq_len, or a decode's q_len for Q and O). */
static size_t token_elems(const struct attn_problem *p, int heads, int len)
{
    if (!attn_is_packed(p)) {
        const int dims[4] = {p->batch, heads, len, p->head_dim};
        return elems_of(dims);
    }
    size_t t = attn_tokens(p);
    if (t == 0 || heads < 1 || p->head_dim < 1) return 0;
    if ((size_t)heads * (size_t)p->head_dim > SIZE_MAX / t) return SIZE_MAX;
    return t * (size_t)heads * (size_t)p->head_dim;
}

size_t attn_tensor_elems(const struct attn_problem *p) { return token_elems(p, p->heads, attn_q_len(p)); }

int attn_kv_heads(const struct attn_problem *p) { return p->kv_heads ? p->kv_heads : p->heads; }

int attn_q_len(const struct attn_problem *p) { return p->q_len ? p->q_len : p->seq_len; }

bool attn_is_decode(const struct attn_problem *p) { return attn_q_len(p) != p->seq_len; }

bool attn_is_packed(const struct attn_problem *p) { return attn_is_varlen(p) && !attn_is_decode(p); }

size_t attn_kv_tensor_elems(const struct attn_problem *p)
{
    if (!attn_is_paged(p)) return token_elems(p, attn_kv_heads(p), p->seq_len);
    if (p->batch < 1 || attn_pages_per_seq(p) > INT_MAX / p->batch) return p->batch < 1 ? 0 : SIZE_MAX;
    const int dims[4] = {p->batch * attn_pages_per_seq(p), p->page, attn_kv_heads(p), p->head_dim};
    return elems_of(dims);
}

bool attn_is_paged(const struct attn_problem *p) { return p->page > 0; }

int attn_pages_per_seq(const struct attn_problem *p)
{
    return attn_is_paged(p) ? (p->seq_len + p->page - 1) / p->page : 0;
}

int attn_page_table(const struct attn_problem *p, int *table)
{
    if (!attn_is_paged(p) || p->batch < 1 || p->seq_len < 1)
        return ATTN_FAIL(ATTN_ERR_INPUT, "a page table for a point without a paged cache (page=%d)", p->page);
    const long n = (long)p->batch * attn_pages_per_seq(p);
    for (long i = 0; i < n; i++) table[i] = (int)i;
    /* Fisher-Yates, seeded by the point: the same shuffle in every run */
    uint64_t state = ((uint64_t)(unsigned)p->batch * 1099511628211ull ^ (uint64_t)(unsigned)attn_kv_heads(p)) *
                         1469598103934665603ull ^
                     ((uint64_t)(unsigned)p->seq_len << 20 ^ (uint64_t)(unsigned)p->page);
    for (long i = n - 1; i > 0; i--) {
        const long j = (long)(splitmix64(&state) % (uint64_t)(i + 1));
        const int t = table[i];
        table[i] = table[j];
        table[j] = t;
    }
    return ATTN_OK;
}

size_t attn_kv_offset(const struct attn_problem *p, const int *table, int b, int h, int t)
{
    const size_t D = (size_t)p->head_dim, KV = (size_t)attn_kv_heads(p);
    if (!attn_is_paged(p)) return (((size_t)b * KV + (size_t)h) * (size_t)p->seq_len + (size_t)t) * D;
    const size_t page = (size_t)table[(size_t)b * (size_t)attn_pages_per_seq(p) + (size_t)(t / p->page)];
    return ((page * (size_t)p->page + (size_t)(t % p->page)) * KV + (size_t)h) * D;
}

/* The lengths' sum and sum of squares; 0 when varlen is malformed. */
static void lens_sums(const struct attn_problem *p, double *sum, double *sum2)
{
    if (lens_walk(p, NULL, sum, sum2, false) != ATTN_OK) *sum = *sum2 = 0;
}

/* The backward's FLOPs over the forward's, per pass (attn.h). */
static double pass_flops_factor(enum attn_pass pass)
{
    return pass == ATTN_PASS_BWD ? 2.5 : pass == ATTN_PASS_FWD_BWD ? 3.5 : 1.0;
}

double attn_flops(const struct attn_problem *p)
{
    double sum, sum2;
    lens_sums(p, &sum, &sum2);
    if (attn_is_decode(p)) { /* forward (attn_problem_check); sum: the cached lengths' */
        const double q = attn_q_len(p);
        return 4.0 * p->heads * p->head_dim * (p->causal ? q * sum - p->batch * q * q / 2 : q * sum);
    }
    double f = 4.0 * p->heads * sum2 * p->head_dim;
    return (p->causal ? f / 2.0 : f) * pass_flops_factor(p->pass);
}

double attn_bytes(const struct attn_problem *p)
{
    /* in double from the dimensions, like attn_flops: no size_t product */
    double sum, sum2;
    lens_sums(p, &sum, &sum2);
    const double elem = (double)attn_dtype_bytes(p->dtype);
    const double q_rows = attn_is_decode(p) ? (double)p->batch * attn_q_len(p) : sum;
    const double q = q_rows * p->heads * p->head_dim * elem;       /* Q, O, dO or dQ */
    const double kv = sum * attn_kv_heads(p) * p->head_dim * elem; /* K, V, dK or dV */
    const double stats = q_rows * p->heads * 4.0;                  /* a float per query row */
    const double fwd = 2 * q + 2 * kv;         /* Q, K, V in; O out */
    const double bwd = 4 * q + 4 * kv + stats; /* Q, K, V, O, dO, stats in; dQ, dK, dV out */
    if (p->pass == ATTN_PASS_BWD) return bwd;
    if (p->pass == ATTN_PASS_FWD_BWD) return fwd + stats + bwd; /* the forward writes the stats */
    return fwd;
}

size_t attn_no_workspace(const struct attn_problem *p)
{
    (void)p;
    return 0;
}

double attn_tflops(const struct attn_problem *p, double ms)
{
    return attn_flops(p) / (ms * 1e-3) / 1e12;
}

double attn_gbps(const struct attn_problem *p, double ms)
{
    return attn_bytes(p) / (ms * 1e-3) / 1e9;
}

const char *attn_problem_label(const struct attn_problem *p, char *buf, size_t len)
{
    char kv[48] = "";
    if (attn_kv_heads(p) != p->heads) snprintf(kv, sizeof kv, " KV=%d", attn_kv_heads(p));
    if (attn_is_decode(p)) snprintf(kv + strlen(kv), sizeof kv - strlen(kv), " Q=%d", attn_q_len(p));
    char name[ATTN_INIT_MAX], init[ATTN_INIT_MAX + 24] = "";
    if (attn_is_paged(p)) snprintf(init, sizeof init, " page=%d", p->page);
    if (p->init_sigma != ATTN_INIT_DEFAULT_SIGMA)
        snprintf(init + strlen(init), sizeof init - strlen(init), " init=%s",
                 attn_init_name(p->init_sigma, name, sizeof name));
    snprintf(buf, len, "B=%d H=%d%s S=%d D=%d %s%s%s%s%s%s%s%s", p->batch, p->heads, kv, p->seq_len,
             p->head_dim, p->causal ? "causal" : "full", attn_is_varlen(p) ? " varlen=" : "",
             p->varlen, p->dtype == ATTN_BF16 ? "" : " ",
             p->dtype == ATTN_BF16 ? "" : attn_dtype_name(p->dtype), init,
             p->pass == ATTN_PASS_FWD ? "" : " ", p->pass == ATTN_PASS_FWD ? "" : attn_pass_name(p->pass));
    return buf;
}

static const char *const pass_names[ATTN_PASS_COUNT] = {
#define ATTN_PASS_NAME(id, name) name,
    ATTN_PASSES(ATTN_PASS_NAME)
#undef ATTN_PASS_NAME
};

const char *attn_pass_name(enum attn_pass pass)
{
    return (unsigned)pass < ATTN_PASS_COUNT ? pass_names[pass] : "?";
}

int attn_pass_parse(const char *text, enum attn_pass *out)
{
    for (int i = 0; i < ATTN_PASS_COUNT; i++)
        if (!strcmp(text, pass_names[i])) {
            *out = (enum attn_pass)i;
            return ATTN_OK;
        }
    return ATTN_ERR_INPUT;
}

bool attn_problem_equal(const struct attn_problem *a, const struct attn_problem *b)
{
    return a->batch == b->batch && a->heads == b->heads && attn_kv_heads(a) == attn_kv_heads(b) &&
           a->seq_len == b->seq_len && attn_q_len(a) == attn_q_len(b) &&
           a->head_dim == b->head_dim && a->causal == b->causal && a->dtype == b->dtype &&
           strcmp(a->varlen, b->varlen) == 0 && a->init_sigma == b->init_sigma && a->pass == b->pass &&
           a->page == b->page;
}

const char *attn_init_name(float sigma, char *buf, size_t len)
{
    if (!(sigma > 0)) snprintf(buf, len, "uniform");
    else if (sigma == 1.0f) snprintf(buf, len, "normal");
    else snprintf(buf, len, "normal:%g", (double)sigma);
    return buf;
}

int attn_init_parse(const char *text, float *sigma)
{
    if (!strcmp(text, "uniform")) {
        *sigma = 0;
        return ATTN_OK;
    }
    if (!strcmp(text, "normal")) {
        *sigma = 1;
        return ATTN_OK;
    }
    if (strncmp(text, "normal:", 7) != 0) return ATTN_ERR_INPUT;
    char *end;
    errno = 0;
    const double v = strtod(text + 7, &end);
    if (end == text + 7 || *end || errno || !(v > 0 && v <= 1000)) return ATTN_ERR_INPUT;
    char canonical[ATTN_INIT_MAX];
    if (strcmp(attn_init_name((float)v, canonical, sizeof canonical), text) != 0) return ATTN_ERR_INPUT;
    *sigma = (float)v;
    return ATTN_OK;
}

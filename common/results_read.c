/* results_read.c — a results CSV and its samples file (gzip, inflated
 * member by member, or plain) read back into rows (results_read.h). The reader is strict
 * about what it needs and lenient about layout: it finds columns by name, so
 * files from other tools or later schemas still load; of a run a crash cut
 * short it keeps the whole rows. */
#include "results_read.h"
#include "csv.h"
#include "errors.h"
#include "results.h"
#include "schema.h"

#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_FIELDS 128

/* Columns come from the schema (schema.h); these must be present. */
static const int required[] = {COL_VARIANT, COL_DTYPE, COL_BATCH, COL_HEADS,
                                              COL_SEQ, COL_DIM, COL_CAUSAL, COL_MODE,
                                              COL_STATUS, COL_MS, COL_NOISE};
#define NREQUIRED (int)(sizeof required / sizeof required[0])

static bool one_of(const char *s, const char *const *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, set[i])) return true;
    return false;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* Empty means "not measured" (NaN); anything else must be a finite number
 * in [lo, hi]: "inf", "nan" and "1e999" (out of range) are refused, so that
 * no field can switch a comparison off. */
static int parse_num(const char *s, double lo, double hi, double *out)
{
    if (!*s) {
        *out = NAN;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE || end == s || *end || !isfinite(v) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* A text field into a fixed buffer; a value that does not fit is refused
 * (two long variant names cut to one key would merge two rows). */
static int copy_checked(char *dst, size_t len, const char *src, const char *path, int line,
                        const char *column)
{
    if (strlen(src) >= len)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: %s is %zu bytes long (at most %zu)", path, line,
                         column, strlen(src), len - 1);
    snprintf(dst, len, "%s", src);
    return ATTN_OK;
}


/* The key's columns (schema.h), found at idx[RESULT_KEY_FIRST .. RESULT_KEY_LAST]. */
static int parse_key(const char *path, int line, char **f, const int *idx, struct result_key *k)
{
    long v;
    const int ints[] = {COL_BATCH, COL_HEADS, COL_SEQ, COL_DIM, COL_CAUSAL};
    int *dst[] = {&k->batch, &k->heads, &k->seq_len, &k->head_dim, &k->causal};
    for (int i = 0; i < 5; i++) {
        long hi = ints[i] == COL_CAUSAL ? 1 : 1L << 30;
        if (parse_int(f[idx[ints[i]]], ints[i] == COL_CAUSAL ? 0 : 1, hi, &v))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: %s '%s' is not %s", path, line,
                             result_column_names[ints[i]], f[idx[ints[i]]],
                             ints[i] == COL_CAUSAL ? "0 or 1" : "a positive integer");
        *dst[i] = (int)v;
    }
    k->q_len = 0; /* a file from before the column, or the field left empty: a prefill */
    if (idx[COL_Q_LEN] >= 0 && *f[idx[COL_Q_LEN]]) {
        if (parse_int(f[idx[COL_Q_LEN]], 1, k->seq_len, &v))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: q_len '%s' is not in 1 .. seq_len %d", path, line,
                             f[idx[COL_Q_LEN]], k->seq_len);
        k->q_len = v == k->seq_len ? 0 : (int)v;
    }
    k->page = 0; /* a file from before the column, or the field left empty: contiguous */
    if (idx[COL_PAGE] >= 0 && *f[idx[COL_PAGE]]) {
        if (parse_int(f[idx[COL_PAGE]], 0, 1L << 30, &v))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: page '%s' is not 0 (contiguous) or tokens per page",
                             path, line, f[idx[COL_PAGE]]);
        k->page = (int)v;
    }
    k->kv_heads = k->heads; /* a file from before the column, or the field left empty */
    if (idx[COL_KV_HEADS] >= 0 && *f[idx[COL_KV_HEADS]]) {
        if (parse_int(f[idx[COL_KV_HEADS]], 1, 1L << 30, &v) || k->heads % v != 0)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: kv_heads '%s' is not a positive divisor of "
                             "heads %d", path, line, f[idx[COL_KV_HEADS]], k->heads);
        k->kv_heads = (int)v;
    }
    k->varlen[0] = '\0'; /* a file from before the column: a dense batch */
    if (idx[COL_VARLEN] >= 0) {
        ATTN_TRY(copy_checked(k->varlen, sizeof k->varlen, f[idx[COL_VARLEN]], path, line, "varlen"));
        struct attn_problem p = {.batch = k->batch, .seq_len = k->seq_len};
        snprintf(p.varlen, sizeof p.varlen, "%s", k->varlen);
        if (attn_varlen_check(&p) != ATTN_OK) {
            char why[256];
            snprintf(why, sizeof why, "%s", attn_error_message());
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: %s", path, line, why);
        }
    }
    ATTN_TRY(copy_checked(k->variant, sizeof k->variant, f[idx[COL_VARIANT]], path, line, "variant"));
    ATTN_TRY(copy_checked(k->dtype, sizeof k->dtype, f[idx[COL_DTYPE]], path, line, "dtype"));
    k->init_sigma = 0; /* a file from before the column, or the field left empty: uniform */
    if (idx[COL_INIT] >= 0 && *f[idx[COL_INIT]] && attn_init_parse(f[idx[COL_INIT]], &k->init_sigma) != ATTN_OK)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: init '%s' is not uniform, normal or normal:SIGMA",
                         path, line, f[idx[COL_INIT]]);
    k->pass = ATTN_PASS_FWD; /* likewise: the forward */
    if (idx[COL_PASS] >= 0 && *f[idx[COL_PASS]]) {
        enum attn_pass pass;
        if (attn_pass_parse(f[idx[COL_PASS]], &pass) != ATTN_OK)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: unknown pass '%s' (%s)", path, line,
                             f[idx[COL_PASS]], ATTN_PASSES_LISTED);
        k->pass = (int)pass;
    }
    snprintf(k->regime, sizeof k->regime, "%s", regime_names[REGIME_BURST]); /* likewise: burst */
    if (idx[COL_REGIME] >= 0 && *f[idx[COL_REGIME]]) {
        if (!one_of(f[idx[COL_REGIME]], regime_names, REGIME_COUNT))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: unknown regime '%s' (%s)", path, line,
                             f[idx[COL_REGIME]], REGIMES_LISTED);
        snprintf(k->regime, sizeof k->regime, "%s", f[idx[COL_REGIME]]);
    }
    ATTN_TRY(copy_checked(k->mode, sizeof k->mode, f[idx[COL_MODE]], path, line, "mode"));
    if (!k->variant[0]) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: empty variant", path, line);
    enum attn_dtype dt;
    if (attn_dtype_parse(k->dtype, &dt) != ATTN_OK)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: unknown dtype '%s' (bf16, fp16)", path, line, k->dtype);
    if (!one_of(k->mode, timing_mode_names, MODE_COUNT))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: unknown mode '%s' (%s)", path, line, f[idx[COL_MODE]],
                         TIMING_MODES_LISTED);
    return ATTN_OK;
}

static int parse_row(const char *path, int line, char **f, const int *idx,
                     struct result_rec *r)
{
    memset(r, 0, sizeof *r);
    r->line = line;
    ATTN_TRY(parse_key(path, line, f, idx, &r->key));
    ATTN_TRY(copy_checked(r->status, sizeof r->status, f[idx[COL_STATUS]], path, line, "status"));
    if (!one_of(r->status, row_status_names, STATUS_COUNT))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: unknown status '%s' (%s)", path, line,
                         f[idx[COL_STATUS]], ROW_STATUSES_LISTED);
    r->samples = -1;
    if (idx[COL_SAMPLES] >= 0 && *f[idx[COL_SAMPLES]] &&
        parse_int(f[idx[COL_SAMPLES]], 0, 1L << 40, &r->samples))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: samples '%s' is not a count", path, line,
                         f[idx[COL_SAMPLES]]);
    /* each number with the range a measurement can have; a time written as
     * "nan" is the one NaN kept (an ok row without a time fails the gate) */
    static const struct { int col; double lo, hi; } nums[] = {
        {COL_MS, 1e-9, 1e9},          {COL_NOISE, 0, 1e3},         {COL_REL_ERR, 0, 1e30},
        {COL_TFLOPS, 0, 1e9},         {COL_EXTRA_MEM, 0, 1e12},    {COL_CLOCK_START, 1, 1e5},
        {COL_CLOCK_END, 1, 1e5},      {COL_WATTS, 1e-3, 1e5},      {COL_MJ_PER_CALL, 0, 1e12},
        {COL_TFLOPS_PER_WATT, 0, 1e6}, {COL_TEMP, -100, 300},  {COL_SETTLED_MHZ, 1, 1e5},
        {COL_SETTLED_WATTS, 1e-3, 1e5},
    };
    double clock_start = NAN, clock_end = NAN;
    double *dst[] = {&r->ms_median, &r->noise_rel, &r->rel_err, &r->tflops, &r->extra_mem_mib,
                     &clock_start, &clock_end, &r->watts, &r->mj_per_call, &r->tflops_per_watt,
                     &r->temp_c, &r->settled_mhz, &r->settled_watts};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        *dst[i] = NAN;
        const int c = nums[i].col;
        if (idx[c] < 0) continue;
        if (c == COL_MS && strcasecmp(f[idx[c]], "nan") == 0) continue;
        if (parse_num(f[idx[c]], nums[i].lo, nums[i].hi, dst[i]))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: %s '%s' is not a number in [%g, %g]", path,
                             line, result_column_names[c], f[idx[c]], nums[i].lo, nums[i].hi);
    }
    static const struct { int col; size_t off, len; } texts[] = {
        {COL_GPU, offsetof(struct result_rec, gpu), sizeof((struct result_rec *)0)->gpu},
        {COL_RUN_ID, offsetof(struct result_rec, run_id), sizeof((struct result_rec *)0)->run_id},
        {COL_GIT_REV, offsetof(struct result_rec, git_rev), sizeof((struct result_rec *)0)->git_rev},
        {COL_AB_RUN, offsetof(struct result_rec, ab_run), sizeof((struct result_rec *)0)->ab_run},
        {COL_COMPARE_RUN, offsetof(struct result_rec, compare_run), sizeof((struct result_rec *)0)->compare_run},
        {COL_SHARD, offsetof(struct result_rec, shard), sizeof((struct result_rec *)0)->shard},
        {COL_TIMESTAMP, offsetof(struct result_rec, timestamp), sizeof((struct result_rec *)0)->timestamp},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (idx[texts[i].col] >= 0)
            ATTN_TRY(copy_checked((char *)r + texts[i].off, texts[i].len, f[idx[texts[i].col]], path,
                                  line, result_column_names[texts[i].col]));
    r->settled = -1;
    if (idx[COL_SETTLED] >= 0 && *f[idx[COL_SETTLED]]) {
        long settled;
        if (parse_int(f[idx[COL_SETTLED]], 0, 1, &settled))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: settled '%s' is not 0 or 1", path, line,
                             f[idx[COL_SETTLED]]);
        r->settled = (int)settled;
    }
    if (idx[COL_THROTTLE] >= 0 && *f[idx[COL_THROTTLE]]) {
        if (results_throttle_parse(f[idx[COL_THROTTLE]], &r->throttle) != ATTN_OK) {
            char why[96];
            snprintf(why, sizeof why, "%s", attn_error_message()); /* the next message overwrites it */
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: throttle: %s", path, line, why);
        }
        r->throttle_known = true;
    }
    /* the reason is shown, never compared: a long one is cut, not refused */
    if (idx[COL_REASON] >= 0) snprintf(r->reason, sizeof r->reason, "%s", f[idx[COL_REASON]]);
    /* the lower reading; NaN unless both are there and positive */
    r->sm_clock_mhz = clock_start > 0 && clock_end > 0 ? fmin(clock_start, clock_end) : NAN;
    return ATTN_OK;
}

/* Rows by key, for the duplicate check and the samples' lookup in linear
 * time (80,000 rows compared pairwise took 26 s): open addressing over an
 * FNV-1a hash of the key; a slot holds a row's index + 1, 0 when empty. */
struct key_index {
    size_t *slot, cap;
};

/* Hashes exactly what result_key_equal compares: variant, mode and the point
 * as attn_problem_equal sees it (result_key_problem), so that equal keys
 * hash alike. */
static uint64_t key_hash(const struct result_key *k)
{
    uint64_t h = 1469598103934665603ull;
    const char *texts[3] = {k->variant, k->mode, k->regime};
    for (int t = 0; t < 3; t++)
        for (const char *c = texts[t];; c++) {
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
            if (!*c) break;
        }
    struct attn_problem p;
    result_key_problem(k, &p);
    const unsigned nums[7] = {(unsigned)p.batch, (unsigned)p.heads, (unsigned)attn_kv_heads(&p),
                              (unsigned)p.seq_len, (unsigned)p.head_dim, (unsigned)p.causal,
                              (unsigned)p.dtype};
    for (int i = 0; i < 7; i++) h = (h ^ nums[i]) * 1099511628211ull;
    uint32_t init;
    memcpy(&init, &p.init_sigma, sizeof init);
    h = (h ^ init) * 1099511628211ull;
    h = (h ^ (unsigned)p.pass) * 1099511628211ull;
    h = (h ^ (unsigned)attn_q_len(&p)) * 1099511628211ull;
    h = (h ^ (unsigned)p.page) * 1099511628211ull;
    for (const char *c = k->varlen; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return h;
}

/* The slot of key: where it stands, or the empty slot where it would go. */
static size_t *index_slot(const struct key_index *x, const struct result_set *s,
                          const struct result_key *k)
{
    size_t i = key_hash(k) & (x->cap - 1);
    while (x->slot[i] && !result_key_equal(&s->rows[x->slot[i] - 1].key, k)) i = (i + 1) & (x->cap - 1);
    return &x->slot[i];
}

/* Adds row `row` of s; *dup is the row with the same key, or NULL. */
static int index_add(struct key_index *x, const struct result_set *s, size_t row,
                     const struct result_rec **dup)
{
    *dup = NULL;
    if (2 * (row + 1) > x->cap) { /* keep it at most half full */
        size_t cap = x->cap ? 2 * x->cap : 256;
        free(x->slot);
        x->slot = calloc(cap, sizeof *x->slot);
        if (!x->slot) return ATTN_FAIL(ATTN_ERR, "out of host memory");
        x->cap = cap;
        for (size_t i = 0; i < row; i++) *index_slot(x, s, &s->rows[i].key) = i + 1;
    }
    size_t *slot = index_slot(x, s, &s->rows[row].key);
    if (*slot) *dup = &s->rows[*slot - 1];
    else *slot = row + 1;
    return ATTN_OK;
}

static struct result_rec *index_find(const struct key_index *x, struct result_set *s,
                                     const struct result_key *k)
{
    if (!x->cap) return NULL;
    size_t slot = *index_slot(x, s, k);
    return slot ? &s->rows[slot - 1] : NULL;
}

/* A line reader's failure, named: 1 is a line, anything else ends reading. */
static int line_problem(int rc, const char *path, int lineno)
{
    if (rc == -1) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: line too long (at most %d bytes)", path, lineno, CSV_LINE_MAX - 1);
    if (rc == -3) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: NUL byte in the line", path, lineno);
    return ATTN_OK;
}

/* The header: every required column present, no column named twice. */
static int read_header(const char *path, int lineno, char **fields, int n, int ncols,
                       const char *const *names, const int *required, int nrequired, int *idx)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(fields[i], fields[j]))
                return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: column '%s' named twice (fields %d and %d)",
                                 path, lineno, fields[i], j + 1, i + 1);
    for (int c = 0; c < ncols; c++) {
        idx[c] = -1;
        for (int i = 0; i < n; i++)
            if (!strcmp(fields[i], names[c])) idx[c] = i;
    }
    for (int r = 0; r < nrequired; r++)
        if (idx[required[r]] < 0)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: header lacks the '%s' column", path, lineno,
                             names[required[r]]);
    return ATTN_OK;
}

static int read_rows(FILE *f, const char *path, struct result_set *out, struct key_index *keys,
                     bool allow_empty)
{
    char line[CSV_LINE_MAX];
    char *fields[MAX_FIELDS];
    int lineno = 0, nheader = -1, rc;
    int idx[COL_COUNT];
    size_t cap = 0;
    while ((rc = csv_read_line(f, line, sizeof line)) == 1) {
        lineno++;
        if (line[strspn(line, " \t")] == '\0') continue;           /* blank lines */
        if (nheader < 0 && line[0] == '#') continue;                /* environment lines */
        int n = csv_split(line, fields, MAX_FIELDS);
        if (n < 0)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: malformed CSV line (quotes or more than %d fields)",
                             path, lineno, MAX_FIELDS);
        if (nheader < 0) {
            ATTN_TRY(read_header(path, lineno, fields, n, COL_COUNT, result_column_names, required,
                                 NREQUIRED, idx));
            nheader = n;
            continue;
        }
        if (n != nheader)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: %d fields where the header has %d", path,
                             lineno, n, nheader);
        if (out->count == cap) {
            cap = cap ? 2 * cap : 64;
            struct result_rec *nr = realloc(out->rows, cap * sizeof *nr);
            if (!nr) return ATTN_FAIL(ATTN_ERR, "out of host memory");
            out->rows = nr;
        }
        struct result_rec *r = &out->rows[out->count];
        ATTN_TRY(parse_row(path, lineno, fields, idx, r));
        const struct result_rec *dup;
        ATTN_TRY(index_add(keys, out, out->count, &dup));
        if (dup)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: duplicate key (same as line %d)", path,
                             lineno, dup->line);
        out->count++;
    }
    ATTN_TRY(line_problem(rc, path, lineno + 1));
    out->whole_lines = lineno;
    if (rc == -2 && nheader >= 0 && (out->count > 0 || allow_empty)) /* a crash cut the run short: keep its whole rows */
        fprintf(stderr, "warning: %s:%d: last line cut short (no line end): ignored, %zu whole rows kept\n",
                path, lineno + 1, out->count);
    else if (rc == -2)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: torn last line (no line end)", path, lineno + 1);
    if (nheader < 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: empty file (no header)", path, lineno + 1);
    if (out->count == 0 && !allow_empty)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: no data rows after the header", path, lineno);
    return ATTN_OK;
}

static int add_sample(struct result_rec *r, double ms)
{
    if ((r->nsample_ms & (r->nsample_ms - 1)) == 0) { /* at 0, 1, 2, 4, ...: double the room */
        double *grown = realloc(r->sample_ms, (r->nsample_ms ? 2 * r->nsample_ms : 16) * sizeof *grown);
        if (!grown) return ATTN_FAIL(ATTN_ERR, "out of host memory");
        r->sample_ms = grown;
    }
    r->sample_ms[r->nsample_ms++] = ms;
    return ATTN_OK;
}

/* A samples file's bytes: gzip data, member after member as the runner
 * appends them, or plain text (an older run's), told apart by the gzip
 * magic. zlib's gzread is not used: it takes whatever follows a whole
 * member and is not a gzip header (the zeros a power loss leaves where the
 * member in flight was to go, a member's first byte) for trailing garbage
 * and ends the file there without a word, so that the members a resumed run
 * appends after it would be lost. Here what follows a member must be
 * another whole one; else the data is damaged from there (`damage` says
 * how) and the rest is not read. */
struct sample_src {
    FILE *f;
    z_stream z;
    bool gzip, in_member, end;
    int err;            /* errno of a failed read, or 0 */
    char damage[96];    /* why the gzip data ends early, "" when it does not */
    size_t pos, have;   /* out[pos, have): inflated (or plain) bytes not yet taken */
    unsigned char in[1 << 16], out[1 << 16];
};

static int sample_src_open(const char *path, struct sample_src **out)
{
    struct sample_src *s = calloc(1, sizeof *s);
    if (!s) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    s->f = fopen(path, "rb");
    if (!s->f) {
        free(s);
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", path, strerror(errno));
    }
    const size_t n = fread(s->in, 1, sizeof s->in, s->f);
    s->gzip = n >= 2 && s->in[0] == 0x1f && s->in[1] == 0x8b;
    if (s->gzip && inflateInit2(&s->z, 15 + 16) != Z_OK) { /* 15 + 16: gzip members only */
        fclose(s->f);
        free(s);
        return ATTN_FAIL(ATTN_ERR, "zlib: unable to start reading '%s'", path);
    }
    if (s->gzip) {
        s->z.next_in = s->in;
        s->z.avail_in = (uInt)n;
    } else {
        memcpy(s->out, s->in, n);
        s->have = n;
    }
    if (ferror(s->f)) s->err = errno ? errno : EIO;
    *out = s;
    return ATTN_OK;
}

static void sample_src_close(struct sample_src *s)
{
    if (s->gzip) inflateEnd(&s->z);
    fclose(s->f);
    free(s);
}

/* Refills out[]; false at the end of the data (s->err, s->damage say why
 * when it came early). */
static bool sample_src_fill(struct sample_src *s)
{
    s->pos = s->have = 0;
    if (s->end || s->err) return false;
    if (!s->gzip) {
        s->have = fread(s->out, 1, sizeof s->out, s->f);
        if (ferror(s->f)) s->err = errno ? errno : EIO;
        s->end = s->have == 0;
        return s->have > 0;
    }
    while (s->have == 0 && !s->end) {
        if (s->z.avail_in == 0) {
            const size_t n = fread(s->in, 1, sizeof s->in, s->f);
            if (ferror(s->f)) s->err = errno ? errno : EIO;
            if (n == 0) {
                if (s->in_member && !s->err) snprintf(s->damage, sizeof s->damage, "a gzip member cut short");
                s->end = true;
                break;
            }
            s->z.next_in = s->in;
            s->z.avail_in = (uInt)n;
        }
        if (!s->in_member) {
            inflateReset(&s->z);
            s->in_member = true;
        }
        s->z.next_out = s->out;
        s->z.avail_out = (uInt)sizeof s->out;
        const int zr = inflate(&s->z, Z_NO_FLUSH);
        s->have = sizeof s->out - s->z.avail_out;
        if (zr == Z_STREAM_END) s->in_member = false;
        else if (zr != Z_OK && zr != Z_BUF_ERROR) { /* Z_BUF_ERROR: it needs more input */
            const long long at = (long long)ftello(s->f) - (long long)s->z.avail_in;
            snprintf(s->damage, sizeof s->damage, "%s, at byte %lld",
                     zr == Z_MEM_ERROR ? "out of memory" : s->z.msg ? s->z.msg : "damaged gzip data", at);
            if (zr == Z_MEM_ERROR) s->err = ENOMEM;
            s->end = true;
        }
    }
    return s->have > 0;
}

static int sample_src_next(void *src)
{
    struct sample_src *s = src;
    if (s->pos == s->have && !sample_src_fill(s)) return EOF;
    return s->out[s->pos++];
}

/* The samples file (long format: key, sample, ms), gzip or plain, into the
 * rows of out. What a crash can leave past the rows' samples is ignored and
 * marks the file cut (out->samples_cut): a torn last line, a gzip member cut
 * short, the samples of a key the CSV lacks. */
static int read_samples(struct sample_src *f, const char *path, struct result_set *out,
                        const struct key_index *keys)
{
    /* idx by column: the key's at their schema ids, sample and ms after them */
    enum { S_SAMPLE = COL_COUNT, S_MS, S_COUNT, S_NAMES = RESULT_KEY_COLUMNS + 2 };
    char line[CSV_LINE_MAX];
    char *fields[MAX_FIELDS];
    int idx[S_COUNT], lineno = 0, nheader = -1, rc;
    struct result_rec *row = NULL; /* the row the previous line belonged to */
    while ((rc = csv_read_line_from(sample_src_next, f, line, sizeof line)) == 1) {
        lineno++;
        if (line[strspn(line, " \t")] == '\0') continue;
        int n = csv_split(line, fields, MAX_FIELDS);
        if (n < 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: malformed CSV line", path, lineno);
        if (nheader < 0) {
            /* every column required: the key's, then sample and ms */
            const char *names[S_NAMES];
            int at[S_NAMES], all[S_NAMES], found[S_NAMES];
            for (int c = 0; c < RESULT_KEY_COLUMNS; c++) {
                names[c] = result_column_names[RESULT_KEY_FIRST + c];
                at[c] = RESULT_KEY_FIRST + c;
            }
            names[S_NAMES - 2] = SAMPLES_INDEX_COLUMN;
            at[S_NAMES - 2] = S_SAMPLE;
            names[S_NAMES - 1] = SAMPLES_MS_COLUMN;
            at[S_NAMES - 1] = S_MS;
            int nall = 0; /* kv_heads, q_len, varlen, page, init, pass and regime may be missing: a file
                             from before them */
            for (int c = 0; c < S_NAMES; c++)
                if (at[c] != COL_KV_HEADS && at[c] != COL_Q_LEN && at[c] != COL_VARLEN && at[c] != COL_PAGE &&
                    at[c] != COL_INIT && at[c] != COL_PASS && at[c] != COL_REGIME)
                    all[nall++] = c;
            ATTN_TRY(read_header(path, lineno, fields, n, S_NAMES, names, all, nall, found));
            for (int c = 0; c < S_COUNT; c++) idx[c] = -1;
            for (int c = 0; c < S_NAMES; c++) idx[at[c]] = found[c];
            nheader = n;
            continue;
        }
        if (n != nheader)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: %d fields where the header has %d", path,
                             lineno, n, nheader);
        struct result_key k;
        ATTN_TRY(parse_key(path, lineno, fields, idx, &k));
        if (!row || !result_key_equal(&row->key, &k)) row = index_find(keys, out, &k);
        long sample;
        double ms;
        if (parse_int(fields[idx[S_SAMPLE]], 0, 1L << 40, &sample))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: sample '%s' is not an index", path, lineno,
                             fields[idx[S_SAMPLE]]);
        if (parse_num(fields[idx[S_MS]], 1e-9, 1e9, &ms) || isnan(ms))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: ms '%s' is not a positive number", path,
                             lineno, fields[idx[S_MS]]);
        if (!row) { /* the samples of a row the crash kept out of the CSV */
            out->samples_cut = true;
            continue;
        }
        if ((size_t)sample != row->nsample_ms)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: sample %ld of a row that has %zu so far", path,
                             lineno, sample, row->nsample_ms);
        ATTN_TRY(add_sample(row, ms));
    }
    if (f->err == ENOMEM) return ATTN_FAIL(ATTN_ERR, "%s: out of host memory", path);
    if (f->err) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to read: %s", path, strerror(f->err));
    /* a cut or damaged gzip member (nothing after it can be read) and a cut
     * last line belong to a row written after the last whole one */
    const bool damaged = f->damage[0] != '\0';
    if (!damaged) ATTN_TRY(line_problem(rc, path, lineno + 1));
    if (damaged && nheader >= 0)
        fprintf(stderr, "warning: %s:%d: gzip data cut short or damaged (%s): the rest ignored\n", path,
                lineno + 1, f->damage);
    else if (rc == -2 && nheader >= 0)
        fprintf(stderr, "warning: %s:%d: last line cut short (no line end): ignored\n", path, lineno + 1);
    out->samples_cut |= damaged || rc == -2;
    if (nheader < 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: empty file (no header)", path, lineno + 1);
    out->samples_gzip = f->gzip;
    return ATTN_OK;
}

/* "PATH: N samples for the row at line L of CSV, which says M" */
static int counts_differ(const struct result_set *s, const struct result_rec *r)
{
    return ATTN_FAIL(ATTN_ERR_INPUT, "%s: %zu samples for the row at line %d of %s, which says %ld",
                     s->samples_path, r->nsample_ms, r->line, s->path, r->samples);
}

/* The rows' sample counts against their `samples` column. A timed row with
 * fewer than it says is where the samples file was cut, when no row after it
 * has its own whole: it and every row after it are dropped (a one-line
 * warning), the index built again over the rows kept. Any other
 * disagreement is refused. */
static int check_sample_counts(struct result_set *out, struct key_index *keys, bool allow_empty)
{
    size_t cut = out->count; /* the first row with too few samples */
    for (size_t i = 0; i < out->count; i++) {
        const struct result_rec *r = &out->rows[i];
        if (r->samples > 0 && r->nsample_ms < (size_t)r->samples) {
            if (cut == out->count) cut = i;
            continue;
        }
        if (r->samples > 0 ? r->nsample_ms != (size_t)r->samples : r->nsample_ms > 0)
            return counts_differ(out, r);
        if (r->nsample_ms > 0 && cut < out->count) return counts_differ(out, &out->rows[cut]);
    }
    if (cut == out->count) return ATTN_OK;
    const struct result_rec *c = &out->rows[cut];
    if (cut == 0 && !allow_empty)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: %zu samples for the row at line %d of %s, which says %ld: "
                         "cut short, and no whole row before it", out->samples_path, c->nsample_ms, c->line,
                         out->path, c->samples);
    const size_t after = out->count - cut - 1;
    char rest[64] = "";
    if (after) snprintf(rest, sizeof rest, " and the %zu after it", after);
    fprintf(stderr, "warning: %s:%d: %zu of the row's %ld samples in %s (cut short): the row%s ignored, "
                    "%zu whole rows kept\n",
            out->path, c->line, c->nsample_ms, c->samples, out->samples_path, rest, cut);
    out->whole_lines = c->line - 1;
    out->samples_cut = true;
    for (size_t i = cut; i < out->count; i++) free(out->rows[i].sample_ms);
    out->count = cut;
    free(keys->slot);
    *keys = (struct key_index){0};
    const struct result_rec *dup;
    for (size_t i = 0; i < out->count; i++) ATTN_TRY(index_add(keys, out, i, &dup));
    return ATTN_OK;
}

int results_read_run(const char *path, int flags, struct result_set *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", path);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: is a directory, not a results file", path);
    FILE *f = fopen(path, "r");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", path, strerror(errno));
    struct key_index keys = {0};
    int rc = read_rows(f, path, out, &keys, flags & RESULTS_ALLOW_EMPTY);
    fclose(f);
    char spath[sizeof out->samples_path];
    if (rc == ATTN_OK && results_samples_path(path, spath, sizeof spath) == ATTN_OK && access(spath, F_OK) == 0) {
        snprintf(out->samples_path, sizeof out->samples_path, "%s", spath);
        struct sample_src *src = NULL;
        rc = sample_src_open(spath, &src);
        if (rc == ATTN_OK) {
            rc = read_samples(src, spath, out, &keys);
            sample_src_close(src);
        }
        if (rc == ATTN_OK) rc = check_sample_counts(out, &keys, flags & RESULTS_ALLOW_EMPTY);
    }
    out->index_slots = keys.slot;
    out->index_cap = keys.cap;
    if (rc != ATTN_OK) results_free(out);
    return rc;
}

int results_read(const char *path, struct result_set *out) { return results_read_run(path, 0, out); }

int results_line_key(char **fields, int n, const char *where, struct result_key *k)
{
    if (n != COL_COUNT)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: %d fields where a row has %d", where, n, COL_COUNT);
    int idx[COL_COUNT];
    for (int c = 0; c < COL_COUNT; c++) idx[c] = c;
    return parse_key(where, 0, fields, idx, k);
}

int results_index(struct result_set *s, const struct result_rec **dup)
{
    struct key_index x = {0};
    *dup = NULL;
    for (size_t i = 0; i < s->count && !*dup; i++) ATTN_TRY(index_add(&x, s, i, dup));
    free(s->index_slots);
    s->index_slots = x.slot;
    s->index_cap = x.cap;
    return ATTN_OK;
}

const struct result_rec *results_find(const struct result_set *s, const struct result_key *k)
{
    const struct key_index x = {s->index_slots, s->index_cap};
    return index_find(&x, (struct result_set *)s, k);
}

void results_free(struct result_set *s)
{
    for (size_t i = 0; i < s->count; i++) free(s->rows[i].sample_ms);
    free(s->rows);
    free(s->index_slots);
    s->rows = NULL;
    s->index_slots = NULL;
    s->index_cap = 0;
    s->count = 0;
}

int results_rec_samples_append(int fd, const struct result_rec *r)
{
    if (!r->nsample_ms) return ATTN_OK;
    struct result_row row;
    results_row_init(&row);
    row.variant = r->key.variant;
    row.mode = r->key.mode;
    row.regime = r->key.regime;
    result_key_problem(&r->key, &row.problem);
    row.sample_ms = r->sample_ms;
    row.nsample_ms = r->nsample_ms;
    return results_samples_append(fd, &row);
}

int results_samples_rewrite(const char *csv_path, const struct result_set *from)
{
    if (!from->samples_path[0]) return results_samples_remove(csv_path);
    struct samples_rewrite w;
    ATTN_TRY(results_samples_begin(csv_path, &w));
    int rc = ATTN_OK;
    for (size_t i = 0; i < from->count && rc == ATTN_OK; i++) rc = results_rec_samples_append(w.fd, &from->rows[i]);
    if (rc != ATTN_OK) {
        results_samples_abandon(&w);
        return rc;
    }
    return results_samples_commit(&w);
}

void result_key_problem(const struct result_key *k, struct attn_problem *p)
{
    *p = (struct attn_problem){.batch = k->batch, .heads = k->heads, .seq_len = k->seq_len,
                               .head_dim = k->head_dim, .causal = k->causal != 0,
                               .dtype = ATTN_BF16, .kv_heads = k->kv_heads,
                               .init_sigma = k->init_sigma, .pass = (enum attn_pass)k->pass,
                               .q_len = k->q_len, .page = k->page};
    snprintf(p->varlen, sizeof p->varlen, "%s", k->varlen);
    enum attn_dtype dt;
    if (attn_dtype_parse(k->dtype, &dt) == ATTN_OK) p->dtype = dt;
}

/* In a hash lookup over up to 100k rows: the cheap text tests first. */
void result_key_of(const char *variant, const struct attn_problem *p, enum attn_mode mode,
                   enum attn_regime regime, struct result_key *k)
{
    memset(k, 0, sizeof *k);
    snprintf(k->variant, sizeof k->variant, "%s", variant);
    snprintf(k->dtype, sizeof k->dtype, "%s", attn_dtype_name(p->dtype));
    snprintf(k->mode, sizeof k->mode, "%s", timing_mode_names[mode]);
    snprintf(k->regime, sizeof k->regime, "%s", regime_names[regime]);
    k->init_sigma = p->init_sigma;
    k->pass = (int)p->pass;
    k->batch = p->batch;
    k->heads = p->heads;
    k->kv_heads = attn_kv_heads(p);
    k->seq_len = p->seq_len;
    k->q_len = attn_is_decode(p) ? attn_q_len(p) : 0;
    k->page = p->page;
    k->head_dim = p->head_dim;
    k->causal = p->causal;
    snprintf(k->varlen, sizeof k->varlen, "%s", p->varlen);
}

bool result_key_equal(const struct result_key *a, const struct result_key *b)
{
    if (strcmp(a->variant, b->variant) || strcmp(a->mode, b->mode) || strcmp(a->regime, b->regime))
        return false;
    struct attn_problem pa, pb;
    result_key_problem(a, &pa);
    result_key_problem(b, &pb);
    return attn_problem_equal(&pa, &pb);
}

const char *result_key_label(const struct result_key *k, char *buf, size_t len)
{
    /* the point as every other label shows it (attn_problem_label); the dtype
     * is said before it, so the problem is labelled as bf16 */
    struct attn_problem p;
    result_key_problem(k, &p);
    p.dtype = ATTN_BF16;
    char point[ATTN_LABEL_MAX];
    const bool sustained = !strcmp(k->regime, regime_names[REGIME_SUSTAINED]);
    snprintf(buf, len, "%s %s %s %s%s", k->variant, k->dtype, attn_problem_label(&p, point, sizeof point),
             k->mode, sustained ? " sustained" : "");
    return buf;
}

/* results_read.c — a results CSV read back into rows (results_read.h). The
 * reader is strict about what it needs and lenient about layout: it finds
 * columns by name, so files from other tools or later schemas still load. */
#include "results_read.h"
#include "csv.h"
#include "errors.h"
#include "results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_FIELDS 128

enum col { C_VARIANT, C_DTYPE, C_BATCH, C_HEADS, C_SEQ, C_DIM, C_CAUSAL, C_MODE, C_STATUS,
           C_MS, C_NOISE, C_GPU, C_REL_ERR, C_SAMPLES, C_TFLOPS, C_EXTRA_MEM, C_CLOCK_START,
           C_CLOCK_END, C_RUN_ID, C_GIT_REV, C_AB_RUN, C_TIMESTAMP, C_REASON, C_COUNT };
static const char *const col_names[C_COUNT] = {
    "variant", "dtype", "batch", "heads", "seq_len", "head_dim", "causal", "mode", "status",
    "ms_median", "noise_rel", "gpu", "rel_err", "samples", "tflops", "extra_mem_mib",
    "sm_clock_start_mhz", "sm_clock_end_mhz", "run_id", "git_rev", "ab_run", "timestamp", "reason"};
#define C_REQUIRED C_GPU /* columns before this one must be present */

static const char *const modes[] = {"cold", "hot", "graph"};
static const char *const statuses[] = {"ok", "skipped", "oom", "mismatch", "error"};

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

/* Empty means "not measured" (NaN); anything else must be a number. */
static int parse_num(const char *s, double *out)
{
    if (!*s) {
        *out = NAN;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end) return -1;
    *out = v;
    return 0;
}

static void copy_field(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src);
}

/* The eight key columns, found at idx[C_VARIANT .. C_MODE]. */
static int parse_key(const char *path, int line, char **f, const int *idx, struct result_key *k)
{
    long v;
    const int ints[] = {C_BATCH, C_HEADS, C_SEQ, C_DIM, C_CAUSAL};
    int *dst[] = {&k->batch, &k->heads, &k->seq_len, &k->head_dim, &k->causal};
    for (int i = 0; i < 5; i++) {
        long hi = ints[i] == C_CAUSAL ? 1 : 1L << 30;
        if (parse_int(f[idx[ints[i]]], ints[i] == C_CAUSAL ? 0 : 1, hi, &v))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: %s '%s' is not %s", path, line,
                             col_names[ints[i]], f[idx[ints[i]]],
                             ints[i] == C_CAUSAL ? "0 or 1" : "a positive integer");
        *dst[i] = (int)v;
    }
    copy_field(k->variant, sizeof k->variant, f[idx[C_VARIANT]]);
    copy_field(k->dtype, sizeof k->dtype, f[idx[C_DTYPE]]);
    copy_field(k->mode, sizeof k->mode, f[idx[C_MODE]]);
    if (!k->variant[0]) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: empty variant", path, line);
    if (!one_of(k->mode, modes, 3))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: unknown mode '%s' (cold, hot, graph)", path, line,
                         f[idx[C_MODE]]);
    return ATTN_OK;
}

static int parse_row(const char *path, int line, char **f, const int *idx,
                     struct result_rec *r)
{
    memset(r, 0, sizeof *r);
    r->line = line;
    ATTN_TRY(parse_key(path, line, f, idx, &r->key));
    copy_field(r->status, sizeof r->status, f[idx[C_STATUS]]);
    if (!one_of(r->status, statuses, 5))
        return ATTN_FAIL(ATTN_ERR_INPUT,
                         "%s:%d: unknown status '%s' (ok, skipped, oom, mismatch, error)", path,
                         line, f[idx[C_STATUS]]);
    if (strcasecmp(f[idx[C_MS]], "nan") == 0) r->ms_median = NAN; /* a NaN written as such */
    else if (parse_num(f[idx[C_MS]], &r->ms_median))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: ms_median '%s' is not a number", path, line,
                         f[idx[C_MS]]);
    if (parse_num(f[idx[C_NOISE]], &r->noise_rel))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: noise_rel '%s' is not a number", path, line,
                         f[idx[C_NOISE]]);
    r->rel_err = NAN;
    if (idx[C_REL_ERR] >= 0 && parse_num(f[idx[C_REL_ERR]], &r->rel_err))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: rel_err '%s' is not a number", path, line,
                         f[idx[C_REL_ERR]]);
    r->samples = -1;
    if (idx[C_SAMPLES] >= 0 && *f[idx[C_SAMPLES]] &&
        parse_int(f[idx[C_SAMPLES]], 0, 1L << 40, &r->samples))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: samples '%s' is not a count", path, line,
                         f[idx[C_SAMPLES]]);
    if (idx[C_GPU] >= 0) copy_field(r->gpu, sizeof r->gpu, f[idx[C_GPU]]);
    if (idx[C_RUN_ID] >= 0) copy_field(r->run_id, sizeof r->run_id, f[idx[C_RUN_ID]]);
    if (idx[C_GIT_REV] >= 0) copy_field(r->git_rev, sizeof r->git_rev, f[idx[C_GIT_REV]]);
    if (idx[C_AB_RUN] >= 0) copy_field(r->ab_run, sizeof r->ab_run, f[idx[C_AB_RUN]]);
    if (idx[C_TIMESTAMP] >= 0) copy_field(r->timestamp, sizeof r->timestamp, f[idx[C_TIMESTAMP]]);
    if (idx[C_REASON] >= 0) copy_field(r->reason, sizeof r->reason, f[idx[C_REASON]]);
    double clock_start, clock_end;
    const int opt[] = {C_TFLOPS, C_EXTRA_MEM, C_CLOCK_START, C_CLOCK_END};
    double *optdst[] = {&r->tflops, &r->extra_mem_mib, &clock_start, &clock_end};
    for (int i = 0; i < 4; i++) {
        *optdst[i] = NAN;
        if (idx[opt[i]] >= 0 && parse_num(f[idx[opt[i]]], optdst[i]))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: %s '%s' is not a number", path, line,
                             col_names[opt[i]], f[idx[opt[i]]]);
    }
    /* the lower reading; NaN unless both are there and positive */
    r->sm_clock_mhz = clock_start > 0 && clock_end > 0 ? fmin(clock_start, clock_end) : NAN;
    return ATTN_OK;
}

static int read_rows(FILE *f, const char *path, struct result_set *out)
{
    char line[CSV_LINE_MAX];
    char *fields[MAX_FIELDS];
    int lineno = 0, nheader = -1, rc;
    int idx[C_COUNT];
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
            for (int c = 0; c < C_COUNT; c++) {
                idx[c] = -1;
                for (int i = 0; i < n; i++)
                    if (!strcmp(fields[i], col_names[c])) idx[c] = i;
                if (c < C_REQUIRED && idx[c] < 0)
                    return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: header lacks the '%s' column", path,
                                     lineno, col_names[c]);
            }
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
        for (size_t i = 0; i < out->count; i++)
            if (result_key_equal(&out->rows[i].key, &r->key))
                return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: duplicate key (same as line %d)", path,
                                 lineno, out->rows[i].line);
        out->count++;
    }
    if (rc == -2) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: torn last line (no line end)", path, lineno + 1);
    if (rc == -1) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: line too long", path, lineno + 1);
    if (nheader < 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: empty file (no header)", path, lineno + 1);
    if (out->count == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: no data rows after the header", path, lineno);
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

/* The samples file (long format: key, sample, ms) into the rows of out. */
static int read_samples(FILE *f, const char *path, struct result_set *out)
{
    enum { S_SAMPLE = C_COUNT, S_MS, S_COUNT };
    char line[CSV_LINE_MAX];
    char *fields[MAX_FIELDS];
    int idx[S_COUNT], lineno = 0, nheader = -1, rc;
    struct result_rec *row = NULL; /* the row the previous line belonged to */
    while ((rc = csv_read_line(f, line, sizeof line)) == 1) {
        lineno++;
        if (line[strspn(line, " \t")] == '\0') continue;
        int n = csv_split(line, fields, MAX_FIELDS);
        if (n < 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: malformed CSV line", path, lineno);
        if (nheader < 0) {
            for (int c = 0; c < S_COUNT; c++) {
                const char *name = c == S_SAMPLE ? "sample" : c == S_MS ? "ms" : col_names[c];
                idx[c] = -1;
                for (int i = 0; i < n; i++)
                    if (!strcmp(fields[i], name)) idx[c] = i;
                if (idx[c] < 0 && (c <= C_MODE || c >= S_SAMPLE))
                    return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: header lacks the '%s' column", path,
                                     lineno, name);
            }
            nheader = n;
            continue;
        }
        if (n != nheader)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: %d fields where the header has %d", path,
                             lineno, n, nheader);
        struct result_key k;
        ATTN_TRY(parse_key(path, lineno, fields, idx, &k));
        if (!row || !result_key_equal(&row->key, &k)) {
            row = NULL;
            for (size_t i = 0; i < out->count && !row; i++)
                if (result_key_equal(&out->rows[i].key, &k)) row = &out->rows[i];
        }
        long sample;
        double ms;
        if (parse_int(fields[idx[S_SAMPLE]], 0, 1L << 40, &sample))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: sample '%s' is not an index", path, lineno,
                             fields[idx[S_SAMPLE]]);
        if (parse_num(fields[idx[S_MS]], &ms) || !(ms > 0) || !isfinite(ms))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: ms '%s' is not a positive number", path,
                             lineno, fields[idx[S_MS]]);
        if (!row) continue; /* the samples of a row the crash kept out of the CSV */
        if ((size_t)sample != row->nsample_ms)
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: sample %ld of a row that has %zu so far", path,
                             lineno, sample, row->nsample_ms);
        ATTN_TRY(add_sample(row, ms));
    }
    if (rc == -1) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: line too long", path, lineno + 1);
    if (rc == -2) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: torn last line (no line end)", path, lineno + 1);
    if (nheader < 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: empty file (no header)", path, lineno + 1);
    for (size_t i = 0; i < out->count; i++) {
        const struct result_rec *r = &out->rows[i];
        if (r->samples != (long)r->nsample_ms && (r->samples > 0 || r->nsample_ms > 0))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s: %zu samples for the row at line %d of %s, which says %ld",
                             path, r->nsample_ms, r->line, out->path, r->samples);
    }
    return ATTN_OK;
}

int results_read(const char *path, struct result_set *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", path);
    FILE *f = fopen(path, "r");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", path, strerror(errno));
    int rc = read_rows(f, path, out);
    fclose(f);
    char spath[600];
    if (rc == ATTN_OK && results_samples_path(path, spath, sizeof spath) == ATTN_OK &&
        (f = fopen(spath, "r"))) {
        rc = read_samples(f, spath, out);
        fclose(f);
    }
    if (rc != ATTN_OK) results_free(out);
    return rc;
}

void results_free(struct result_set *s)
{
    for (size_t i = 0; i < s->count; i++) free(s->rows[i].sample_ms);
    free(s->rows);
    s->rows = NULL;
    s->count = 0;
}

bool result_key_equal(const struct result_key *a, const struct result_key *b)
{
    return a->batch == b->batch && a->heads == b->heads && a->seq_len == b->seq_len &&
           a->head_dim == b->head_dim && a->causal == b->causal && !strcmp(a->variant, b->variant) &&
           !strcmp(a->dtype, b->dtype) && !strcmp(a->mode, b->mode);
}

const char *result_key_label(const struct result_key *k, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s B=%d H=%d S=%d D=%d %s %s", k->variant, k->dtype, k->batch,
             k->heads, k->seq_len, k->head_dim, k->causal ? "causal" : "full", k->mode);
    return buf;
}

/* results.c — formatting result rows as CSV lines and writing their samples
 * files, gzip member by member (results.h), and the schema's name arrays
 * (schema.h): header, rows and samples are all written from them. */
#include "results.h"
#include "errors.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

const char *const result_column_names[COL_COUNT] = {
#define ATTN_COLUMN_NAME(id, name) name,
    RESULT_COLUMNS(ATTN_COLUMN_NAME)
#undef ATTN_COLUMN_NAME
};

const char *const timing_mode_names[MODE_COUNT] = {
#define ATTN_MODE_NAME(id, name) name,
    TIMING_MODES(ATTN_MODE_NAME)
#undef ATTN_MODE_NAME
};

const char *const regime_names[REGIME_COUNT] = {
#define ATTN_REGIME_NAME(id, name) name,
    REGIMES(ATTN_REGIME_NAME)
#undef ATTN_REGIME_NAME
};

const char *const row_status_names[STATUS_COUNT] = {
#define ATTN_STATUS_NAME(id, name) name,
    ROW_STATUSES(ATTN_STATUS_NAME)
#undef ATTN_STATUS_NAME
};

int results_column_count(void) { return COL_COUNT; }

const char *results_column_name(int i) { return i >= 0 && i < COL_COUNT ? result_column_names[i] : NULL; }

void results_row_init(struct result_row *r)
{
    memset(r, 0, sizeof *r);
    r->extra_mem_mib = r->max_abs_err = r->rel_err = NAN;
    r->clock_low = -1;
    r->watts = r->temperature_c = NAN;
    r->throttle = NULL;
    r->settled = -1;
    r->settle_s = r->settled_mhz = r->settled_watts = NAN;
}

void results_set_reason(struct result_row *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof r->reason, fmt, ap);
    va_end(ap);
    for (char *c = r->reason; *c; c++)
        if ((unsigned char)*c < 0x20) *c = ' ';
}

void results_header(struct csv_line *l)
{
    csv_line_init(l);
    for (int i = 0; i < COL_COUNT; i++) csv_add_str(l, result_column_names[i]);
    csv_line_end(l);
}


/* A row's cells by column (schema.h): text cells point at the row's
 * strings, numbers are formatted into the cell's own buffer; NULL is empty. */
struct cells {
    const char *text[COL_COUNT];
    char num[COL_COUNT][32];
};

static void set_num(struct cells *c, enum result_column col, double v, int digits)
{
    if (isnan(v)) return;
    snprintf(c->num[col], sizeof c->num[col], "%.*g", digits, v);
    c->text[col] = c->num[col];
}

static void set_int(struct cells *c, enum result_column col, long long v)
{
    if (v < 0) return; /* unknown */
    snprintf(c->num[col], sizeof c->num[col], "%lld", v);
    c->text[col] = c->num[col];
}

static void key_cells(struct cells *c, const struct result_row *r)
{
    const struct attn_problem *p = &r->problem;
    c->text[COL_VARIANT] = r->variant;
    c->text[COL_DTYPE] = attn_dtype_name(p->dtype);
    set_int(c, COL_BATCH, p->batch);
    set_int(c, COL_HEADS, p->heads);
    set_int(c, COL_KV_HEADS, attn_kv_heads(p));
    set_int(c, COL_SEQ, p->seq_len);
    set_int(c, COL_Q_LEN, attn_q_len(p));
    set_int(c, COL_DIM, p->head_dim);
    set_int(c, COL_CAUSAL, p->causal);
    c->text[COL_VARLEN] = p->varlen;
    set_int(c, COL_PAGE, p->page);
    c->text[COL_INIT] = attn_init_name(p->init_sigma, c->num[COL_INIT], sizeof c->num[COL_INIT]);
    c->text[COL_PASS] = attn_pass_name(p->pass);
    c->text[COL_MODE] = r->mode;
    c->text[COL_REGIME] = r->regime ? r->regime : regime_names[REGIME_BURST];
}

int results_format(const struct result_row *r, struct csv_line *l)
{
    const struct attn_problem *p = &r->problem;
    const struct sample_stats *s = &r->stats;
    struct cells c;
    memset(c.text, 0, sizeof c.text);
    c.text[COL_RUN_ID] = r->run_id;
    c.text[COL_TIMESTAMP] = r->timestamp;
    c.text[COL_GIT_REV] = r->git_rev;
    c.text[COL_GPU] = r->gpu;
    key_cells(&c, r);
    c.text[COL_STATUS] = r->status;
    c.text[COL_REASON] = r->reason;
    if (r->timed) {
        set_int(&c, COL_SAMPLES, (long long)s->n);
        set_num(&c, COL_MS, s->median, 6);
        set_num(&c, COL_MS_MIN, s->min, 6);
        set_num(&c, COL_MS_P10, s->p10, 6);
        set_num(&c, COL_MS_P90, s->p90, 6);
        set_num(&c, COL_MS_MEAN, s->mean, 6);
        set_num(&c, COL_NOISE, s->noise_rel, 4);
        set_int(&c, COL_CONVERGED, r->converged);
        set_int(&c, COL_CALLS, r->calls_per_sample);
        const double tflops = attn_tflops(p, s->median), gbps = attn_gbps(p, s->median);
        set_num(&c, COL_TFLOPS, tflops, 5);
        set_num(&c, COL_GBPS, gbps, 5);
        if (r->peaks) {
            set_num(&c, COL_PCT_TFLOPS, 100.0 * tflops / r->peaks->gemm_tflops, 4);
            set_num(&c, COL_PCT_GBPS, 100.0 * gbps / r->peaks->copy_gbps, 4);
            if (r->peaks->read_gbps > 0) set_num(&c, COL_PCT_READ, 100.0 * gbps / r->peaks->read_gbps, 4);
        }
    }
    set_num(&c, COL_EXTRA_MEM, r->extra_mem_mib, 6);
    set_num(&c, COL_MAX_ABS_ERR, r->max_abs_err, 4);
    set_num(&c, COL_REL_ERR, r->rel_err, 4);
    c.text[COL_REF] = r->ref;
    if (r->traced) {
        set_num(&c, COL_KERNELS, r->kernels_per_call, 6);
        set_num(&c, COL_MEMCPY, r->memcpy_per_call, 6);
        set_num(&c, COL_MEMSET, r->memset_per_call, 6);
        set_num(&c, COL_BUSY, r->gpu_busy_ms, 6);
        set_num(&c, COL_GAP, r->launch_gap_ms, 4);
    }
    if (r->clock_start_mhz) set_int(&c, COL_CLOCK_START, r->clock_start_mhz);
    if (r->clock_end_mhz) set_int(&c, COL_CLOCK_END, r->clock_end_mhz);
    set_int(&c, COL_CLOCK_LOW, r->clock_low);
    if (r->timed) {
        /* energy of one call at the window's average power: W × ms = mJ;
         * TFLOP/s per W = TFLOP per J */
        if (r->watts > 0) {
            set_num(&c, COL_WATTS, r->watts, 5);
            set_num(&c, COL_MJ_PER_CALL, r->watts * s->median, 5);
            set_num(&c, COL_TFLOPS_PER_WATT, attn_tflops(p, s->median) / r->watts, 5);
        }
        c.text[COL_THROTTLE] = r->throttle;
        set_num(&c, COL_TEMP, r->temperature_c, 4);
    }
    if (r->settled >= 0) set_int(&c, COL_SETTLED, r->settled);
    set_num(&c, COL_SETTLE_S, r->settle_s, 4);
    set_num(&c, COL_SETTLED_MHZ, r->settled_mhz, 5);
    set_num(&c, COL_SETTLED_WATTS, r->settled_watts, 5);
    c.text[COL_IMPL] = r->impl;
    c.text[COL_AB_RUN] = r->ab_run;
    c.text[COL_COMPARE_RUN] = r->compare_run;
    c.text[COL_SHARD] = r->shard;
    csv_line_init(l);
    for (int i = 0; i < COL_COUNT; i++) csv_add_str(l, c.text[i]);
    return csv_line_end(l);
}


void results_samples_header(struct csv_line *l)
{
    csv_line_init(l);
    for (int i = RESULT_KEY_FIRST; i <= RESULT_KEY_LAST; i++) csv_add_str(l, result_column_names[i]);
    csv_add_str(l, SAMPLES_INDEX_COLUMN);
    csv_add_str(l, SAMPLES_MS_COLUMN);
    csv_line_end(l);
}

/* A row's sample lines ("KEY,i,ms\n" each) into a buffer the caller frees. */
static int sample_lines(const struct result_row *r, char **text, size_t *len)
{
    struct csv_line l;
    struct cells c;
    memset(c.text, 0, sizeof c.text);
    key_cells(&c, r);
    csv_line_init(&l);
    for (int i = RESULT_KEY_FIRST; i <= RESULT_KEY_LAST; i++) csv_add_str(&l, c.text[i]);
    if (l.overflow) return ATTN_FAIL(ATTN_ERR, "samples key longer than %d bytes", CSV_LINE_MAX);
    const size_t per_line = l.len + 48;
    char *buf = malloc(r->nsample_ms * per_line + 1);
    if (!buf) return ATTN_FAIL(ATTN_ERR, "out of host memory for %zu samples", r->nsample_ms);
    size_t n = 0;
    for (size_t i = 0; i < r->nsample_ms; i++)
        n += (size_t)snprintf(buf + n, per_line + 1, "%s,%zu,%.7g\n", l.text, i, r->sample_ms[i]);
    *text = buf;
    *len = n;
    return ATTN_OK;
}

int results_samples_append(int fd, const struct result_row *r)
{
    char *text;
    size_t len;
    ATTN_TRY(sample_lines(r, &text, &len));
    int rc = results_samples_write(fd, text, len);
    free(text);
    return rc;
}

int results_samples_write(int fd, const char *text, size_t len)
{
    if (len > UINT_MAX / 2) return ATTN_FAIL(ATTN_ERR, "%zu bytes of samples at once: too many", len);
    z_stream z;
    memset(&z, 0, sizeof z);
    /* 15 + 16: a gzip member (header and CRC), not a bare zlib stream */
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return ATTN_FAIL(ATTN_ERR, "zlib: unable to start compressing samples");
    const uLong cap = deflateBound(&z, (uLong)len);
    unsigned char *out = malloc(cap);
    int zr = Z_MEM_ERROR;
    if (out) {
        z.next_in = (Bytef *)text;
        z.avail_in = (uInt)len;
        z.next_out = out;
        z.avail_out = (uInt)cap;
        zr = deflate(&z, Z_FINISH);
    }
    const size_t n = z.total_out;
    deflateEnd(&z);
    int rc = zr == Z_STREAM_END ? csv_write_all(fd, (const char *)out, n)
                                : ATTN_FAIL(ATTN_ERR, "zlib: unable to compress samples (%d)", zr);
    free(out);
    return rc;
}

/* The header, as the file's first gzip member. */
static int write_samples_header(int fd)
{
    struct csv_line h;
    results_samples_header(&h);
    return results_samples_write(fd, h.text, h.len);
}

int results_beside_path(const char *csv_path, const char *suffix, char *buf, size_t len)
{
    size_t n = strlen(csv_path);
    if (n < 4 || strcmp(csv_path + n - 4, ".csv") != 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "'%s' does not end in .csv", csv_path);
    if ((size_t)snprintf(buf, len, "%.*s%s", (int)(n - 4), csv_path, suffix) >= len)
        return ATTN_FAIL(ATTN_ERR_INPUT, "path too long: '%s'", csv_path);
    return ATTN_OK;
}

int results_samples_path(const char *csv_path, char *buf, size_t len)
{
    ATTN_TRY(results_beside_path(csv_path, RESULTS_SAMPLES_SUFFIX, buf, len));
    if (access(buf, F_OK) == 0) return ATTN_OK;
    char plain[1300];
    ATTN_TRY(results_beside_path(csv_path, RESULTS_SAMPLES_PLAIN_SUFFIX, plain, sizeof plain));
    if (access(plain, F_OK) == 0) snprintf(buf, len, "%s", plain); /* shorter: it fits */
    return ATTN_OK;
}

int results_samples_create(const char *csv_path, char *path, size_t len, int *fd)
{
    char plain[1300];
    ATTN_TRY(results_beside_path(csv_path, RESULTS_SAMPLES_PLAIN_SUFFIX, plain, sizeof plain));
    ATTN_TRY(results_beside_path(csv_path, RESULTS_SAMPLES_SUFFIX, path, len));
    if (access(plain, F_OK) == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "'%s' exists already", plain);
    *fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0644);
    if (*fd < 0) return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", path, strerror(errno));
    int rc = write_samples_header(*fd);
    if (rc != ATTN_OK) {
        close(*fd);
        *fd = -1;
        unlink(path);
    }
    return rc;
}

int results_samples_begin(const char *csv_path, struct samples_rewrite *w)
{
    w->fd = -1;
    ATTN_TRY(results_beside_path(csv_path, RESULTS_SAMPLES_SUFFIX, w->path, sizeof w->path));
    ATTN_TRY(results_beside_path(csv_path, RESULTS_SAMPLES_PLAIN_SUFFIX, w->plain, sizeof w->plain));
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp", w->path);
    w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (w->fd < 0) return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", w->tmp, strerror(errno));
    int rc = write_samples_header(w->fd);
    if (rc != ATTN_OK) results_samples_abandon(w);
    return rc;
}

int results_samples_commit(struct samples_rewrite *w)
{
    int rc = fsync(w->fd) == 0 ? ATTN_OK : ATTN_FAIL(ATTN_ERR, "unable to sync '%s': %s", w->tmp, strerror(errno));
    if (close(w->fd) != 0 && rc == ATTN_OK) rc = ATTN_FAIL(ATTN_ERR, "writing '%s': %s", w->tmp, strerror(errno));
    w->fd = -1;
    if (rc == ATTN_OK && rename(w->tmp, w->path) != 0)
        rc = ATTN_FAIL(ATTN_ERR, "unable to rename '%s' to '%s': %s", w->tmp, w->path, strerror(errno));
    if (rc != ATTN_OK) {
        unlink(w->tmp);
        return rc;
    }
    /* the .gz is whole now: the plain file of an older run it replaces goes */
    if (unlink(w->plain) != 0 && errno != ENOENT)
        return ATTN_FAIL(ATTN_ERR, "unable to remove '%s': %s", w->plain, strerror(errno));
    return ATTN_OK;
}

void results_samples_abandon(struct samples_rewrite *w)
{
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
    unlink(w->tmp);
}

int results_samples_remove(const char *csv_path)
{
    static const char *const suffixes[] = {RESULTS_SAMPLES_SUFFIX, RESULTS_SAMPLES_PLAIN_SUFFIX};
    for (size_t i = 0; i < 2; i++) {
        char path[1300];
        ATTN_TRY(results_beside_path(csv_path, suffixes[i], path, sizeof path));
        if (unlink(path) != 0 && errno != ENOENT)
            return ATTN_FAIL(ATTN_ERR, "unable to remove '%s': %s", path, strerror(errno));
    }
    return ATTN_OK;
}

static const struct {
    unsigned long long bit;
    const char *name;
} throttle_words[] = {
#define ATTN_THROTTLE_WORD(id, bit, name) {bit, name},
    THROTTLE_REASONS(ATTN_THROTTLE_WORD)
#undef ATTN_THROTTLE_WORD
};
#define NTHROTTLE_WORDS (sizeof throttle_words / sizeof throttle_words[0])

const char *results_throttle_names(unsigned long long mask, char *buf, size_t len)
{
    size_t used = 0;
    if (len) buf[0] = '\0';
    for (size_t i = 0; i < NTHROTTLE_WORDS; i++)
        if (mask & throttle_words[i].bit) {
            int n = snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? "|" : "",
                             throttle_words[i].name);
            used += n > 0 ? (size_t)n : 0;
            mask &= ~throttle_words[i].bit;
        }
    if (mask) snprintf(buf + used, used < len ? len - used : 0, "%s0x%llx", used ? "|" : "", mask);
    return buf;
}

int results_throttle_parse(const char *names, unsigned long long *mask)
{
    *mask = 0;
    for (const char *p = names; *p;) {
        size_t n = strcspn(p, "|");
        bool known = false;
        for (size_t i = 0; i < NTHROTTLE_WORDS && !known; i++)
            if (strlen(throttle_words[i].name) == n && !strncmp(p, throttle_words[i].name, n)) {
                *mask |= throttle_words[i].bit;
                known = true;
            }
        if (!known && n > 2 && n <= 18 && !strncmp(p, "0x", 2)) {
            char *end;
            *mask |= strtoull(p + 2, &end, 16);
            known = end == p + n && n > 2;
        }
        if (!known)
            return ATTN_FAIL(ATTN_ERR_INPUT, "unknown throttle reason '%.*s'", (int)(n > 40 ? 40 : n), p);
        p += n + (p[n] == '|');
    }
    return ATTN_OK;
}

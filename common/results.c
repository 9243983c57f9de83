/* results.c — formatting result rows as CSV lines (results.h), and the
 * schema's name arrays (schema.h): header, rows and samples are all written
 * from them. */
#include "results.h"
#include "errors.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    set_int(c, COL_DIM, p->head_dim);
    set_int(c, COL_CAUSAL, p->causal);
    c->text[COL_VARLEN] = p->varlen;
    c->text[COL_MODE] = r->mode;
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
    c.text[COL_IMPL] = r->impl;
    c.text[COL_AB_RUN] = r->ab_run;
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

int results_samples_append(int fd, const struct result_row *r)
{
    char key[CSV_LINE_MAX];
    struct csv_line l;
    struct cells c;
    memset(c.text, 0, sizeof c.text);
    key_cells(&c, r);
    csv_line_init(&l);
    for (int i = RESULT_KEY_FIRST; i <= RESULT_KEY_LAST; i++) csv_add_str(&l, c.text[i]);
    if (l.overflow) return ATTN_FAIL(ATTN_ERR, "samples key longer than %d bytes", CSV_LINE_MAX);
    snprintf(key, sizeof key, "%s", l.text);
    const size_t per_line = l.len + 48;
    char *buf = malloc(r->nsample_ms * per_line + 1);
    if (!buf) return ATTN_FAIL(ATTN_ERR, "out of host memory for %zu samples", r->nsample_ms);
    size_t len = 0;
    for (size_t i = 0; i < r->nsample_ms; i++)
        len += (size_t)snprintf(buf + len, per_line + 1, "%s,%zu,%.7g\n", key, i, r->sample_ms[i]);
    int rc = csv_write_all(fd, buf, len);
    free(buf);
    return rc;
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
    return results_beside_path(csv_path, ".samples.csv", buf, len);
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

/* results_read.h — reading a results CSV back: columns found by name (any
 * order, extra columns ignored), leading '#' lines skipped, CRLF and quoted
 * fields accepted. Every rejection names file:line and the problem. */
#ifndef ATTN_RESULTS_READ_H
#define ATTN_RESULTS_READ_H

#include "attn.h"
#include "schema.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The row key of design.md (schema.h's RESULT_KEY_FIRST .. RESULT_KEY_LAST):
 * variant, dtype, batch, heads, kv_heads, seq_len, q_len, head_dim, causal,
 * varlen, page, init, pass, mode, regime. */
struct result_key {
    char variant[64];
    char dtype[8];
    int batch, heads, kv_heads, seq_len, head_dim, causal; /* kv_heads: = heads when absent */
    char varlen[ATTN_VARLEN_MAX]; /* attn_problem.varlen: "" (dense) when absent */
    float init_sigma;             /* attn_problem.init_sigma: 0 (uniform) when absent */
    int pass;                     /* enum attn_pass: the forward when absent */
    int q_len;                    /* attn_problem.q_len: 0 (= seq_len, a prefill) when absent or equal */
    int page;                     /* attn_problem.page: 0 (a contiguous cache) when absent */
    char mode[8];
    char regime[12];              /* burst, sustained: burst when absent */
};

struct result_rec {
    struct result_key key;
    int line;            /* where it stands in its file */
    char run_id[96], git_rev[64], timestamp[32];
    char ab_run[64];     /* the A/B run that measured it interleaved; "" in a plain run */
    char compare_run[64]; /* the compare run that measured it in turns; "" in a plain run */
    int settled;          /* a sustained row's: 1 settled, 0 not within its limit; -1 burst or absent */
    double settled_mhz, settled_watts; /* NaN when empty or absent */
    char shard[16];      /* "I/N" of a sharded sweep; "" when the run has no shard column */
    char gpu[64];
    char status[16];     /* ok, skipped, oom, mismatch, error */
    char reason[512];    /* why a row is not ok; "" when ok or absent */
    double ms_median;    /* NaN when empty */
    double noise_rel;    /* NaN when empty */
    double rel_err;      /* NaN when empty */
    long samples;        /* -1 when empty */
    double tflops, extra_mem_mib; /* NaN when empty or the column is absent */
    double sm_clock_mhz;          /* the lower of the row's two SM clock readings; NaN if unknown */
    double watts, mj_per_call, tflops_per_watt, temp_c; /* NaN when empty or absent */
    unsigned long long throttle;  /* THROTTLE_REASONS bits (schema.h) seen in the row */
    bool throttle_known;          /* the run recorded them (the column is there and not empty) */
    double *sample_ms;            /* per-sample times from the samples file beside it
                                     (results_samples_path); NULL without one */
    size_t nsample_ms;
};

struct result_set {
    char path[512];
    struct result_rec *rows;
    size_t count;
    int whole_lines;       /* the file's lines up to its last row kept: what resume_trim keeps */
    char samples_path[600]; /* the samples file read; "" when the run has none */
    bool samples_gzip;     /* it holds gzip data (not an older run's plain text) */
    bool samples_cut;      /* it holds more than the kept rows' samples (a cut tail, samples of
                              rows ignored or of no row): rewritten before rows are appended */
    size_t *index_slots, index_cap; /* private: rows by key (results_find) */
};

/* Reads path, and its samples file (results_samples_path: gzip or plain)
 * when there is one. ATTN_ERR_INPUT with "path:line: why" for: a file that
 * cannot be opened, no header, a header without a required column, a row
 * whose field count differs from the header's, a non-numeric number, an
 * unknown mode or status, a duplicate key, a torn (unterminated) last line
 * with no whole row before it, no data rows; in the samples file also: a
 * sample that is not a positive number, samples out of order, more samples
 * for a row than its `samples` column says, fewer for a row followed by a
 * whole one. What a crash cuts off is ignored, with a one-line warning
 * naming file:line, and the run's rows before it kept: a torn last line of
 * either file, a gzip member cut short or followed by what is not one (the
 * zeros a power loss leaves), the samples of rows the CSV lacks,
 * and a row whose samples are incomplete (a timed row with fewer samples
 * than it says, when no later row has all of its own: the samples file was
 * cut there) together with every row after it. */
int results_read(const char *path, struct result_set *out);
/* results_read with flags: RESULTS_ALLOW_EMPTY accepts a run with a header
 * and no whole row yet (a sweep stopped before its first row ended). */
#define RESULTS_ALLOW_EMPTY 1
int results_read_run(const char *path, int flags, struct result_set *out);
void results_free(struct result_set *);
/* Appends a row's samples as read back, as the runner wrote them
 * (results_samples_append); nothing for a row without samples. */
int results_rec_samples_append(int fd, const struct result_rec *);
/* The samples of from's rows, in its order, written anew beside csv_path
 * (results_samples_begin/commit); when from has no samples file, csv_path's
 * is removed (either name). */
int results_samples_rewrite(const char *csv_path, const struct result_set *from);
/* The key of a row as results_format wrote it (every column, in the schema's
 * order), split by csv_split; `where` names it in messages. */
int results_line_key(char **fields, int n, const char *where, struct result_key *k);
/* Indexes a set built by hand (rows[0..count) set) for results_find; *dup
 * is the first row whose key an earlier row has, or NULL. */
int results_index(struct result_set *, const struct result_rec **dup);
/* The row with key k, or NULL; in constant time. */
const struct result_rec *results_find(const struct result_set *, const struct result_key *k);

/* "naive bf16 B=2 H=16 S=1024 D=64 causal cold" */
const char *result_key_label(const struct result_key *, char *buf, size_t len);
/* The key's point as a problem (scale 0: a key has none). Its dtype must be a
 * dtype name, as in every key the reader returns (parse_key checks it); any
 * other reads as bf16, and attn_dtype_parse's message is left set. */
void result_key_problem(const struct result_key *, struct attn_problem *);
/* The key of variant's row at p in mode and regime: result_key_problem's inverse. */
void result_key_of(const char *variant, const struct attn_problem *p, enum attn_mode mode,
                   enum attn_regime regime, struct result_key *);
/* Same variant, same mode and the same point (attn_problem_equal). */
bool result_key_equal(const struct result_key *, const struct result_key *);

#ifdef __cplusplus
}
#endif
#endif

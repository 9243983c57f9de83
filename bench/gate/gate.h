/* gate.h — the regression gate: thresholds (bench/gate/thresholds.conf), the
 * comparison of a results CSV with a baseline, and its report.
 *
 * The allowed slowdown of a row (thresholds: default, overridden by matching
 * lines) depends on how its two sides were measured: `ab_slowdown` when both
 * rows carry the same ab_run (measured interleaved in one A/B run, on one
 * GPU: drift falls on both), else `slowdown` (measured apart, where the same
 * code moves by several percent between sessions).
 *
 * Where both rows have their samples (RUN_ID.samples.csv), the verdict comes
 * from the samples: the Hodges–Lehmann estimate of the ratio cur/base and its
 * Mann–Whitney confidence bounds at level `confidence` (bench/gate/shift.h says
 * why this estimator: distribution-free, robust to preempted samples,
 * deterministic). A row regresses when the lower bound of the ratio is above
 * 1 + limit — slower than allowed, with that confidence — and the medians
 * differ by at least min_ms. It is faster when the upper bound is under
 * 1 / (1 + limit).
 *
 * Where either row has only its summary (older runs), the rule is: the
 * slowdown (median ratio − 1) exceeds all of
 *   - its allowed slowdown,
 *   - what the two rows' recorded noise explains: noise_k · √(nb² + nc²),
 *     nb and nc the rows' noise_rel (IQR/median of their samples),
 *   - and the difference is at least min_ms milliseconds.
 * Requiring all three keeps noisy or tiny rows from failing the gate on
 * spread alone, while a real slowdown past the limit on a quiet row fails.
 * Also failures: a row that was ok and is no longer (mismatch, error, oom,
 * skipped), an ok row with a NaN or missing time, rel_err over the dtype's
 * tolerance, a baseline row missing from the results (unless allowed).
 * Warnings: new rows; improvements beyond the limit (bless a new baseline). */
#ifndef ATTN_GATE_H
#define ATTN_GATE_H

#include "../../common/results_read.h"

#include <stdio.h>

#define GATE_MAX_RULES 64

/* Settings a thresholds line may set; NaN = not set by that line. */
struct gate_settings {
    double slowdown;    /* allowed fraction for rows measured apart, 0.05 = 5% */
    double ab_slowdown; /* allowed fraction for rows measured interleaved (one ab_run) */
    double min_ms;      /* smallest difference that counts */
    double noise_k;     /* multiplier on the combined noise (summary rule) */
    double confidence;  /* of each one-sided bound of the sample rule, in (0.5, 1) */
};

enum gate_op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };

struct gate_cond {
    int field;  /* index into the key fields, see gate.c */
    enum gate_op op;
    char text[ATTN_VARLEN_MAX]; /* for variant, dtype, mode, varlen ("" for none) */
    long number;   /* for batch, heads, seq_len, head_dim, causal */
};

struct gate_rule {
    struct gate_cond conds[8];
    int nconds;
    struct gate_settings set;
    int line;
};

struct gate_thresholds {
    struct gate_settings defaults;
    struct gate_rule rules[GATE_MAX_RULES];
    int nrules;
};

/* Built-in defaults (used when no file is given): slowdown 5%, ab_slowdown
 * 2%, 0.002 ms, k = 2, confidence 99%. */
void gate_thresholds_default(struct gate_thresholds *);
/* Parses a thresholds file (syntax in bench/gate/thresholds.conf). ATTN_ERR_INPUT
 * with "path:line: why" on a bad line. */
int gate_thresholds_read(const char *path, struct gate_thresholds *);
/* The settings that apply to a key: defaults, then every matching rule in
 * file order (later lines win). */
struct gate_settings gate_settings_for(const struct gate_thresholds *, const struct result_key *);

struct gate_options {
    bool allow_missing;      /* baseline rows absent from the results only warn */
    bool allow_gpu_mismatch; /* compare runs from different GPUs */
};

/* V_THROTTLED: slower past the limits, but the row's SM clock was lower
 * than the baseline row's by more than the limit too — a throttled machine
 * (power, heat) explains it, and the row cannot tell code from clock. It is
 * reported, not failed: re-run on a machine at full clock. */
enum gate_verdict { V_PASS, V_SLOWER, V_FAIL_STATUS, V_FAIL_NAN, V_FAIL_ERROR, V_MISSING,
                    V_NEW, V_FASTER, V_THROTTLED };

struct gate_line {
    struct result_key key;
    double base_ms, cur_ms, noise; /* medians; noise: √(nb² + nc²) */
    double ratio;                  /* cur/base: the HL estimate from samples, else of medians */
    double lo, hi;                 /* the ratio's confidence bounds; NaN under the summary rule */
    bool paired;                   /* both rows from one A/B run: ab_slowdown applies */
    double limit;                  /* the allowed slowdown used */
    enum gate_verdict verdict;
    char why[256];
};

struct gate_report {
    struct gate_line *lines;
    size_t count;
    size_t compared, regressed, failed, missing, added, improved, throttled;
};

/* Compares; ATTN_ERR_INPUT (exit 2) for refusals such as different GPUs.
 * The report is filled either way; gate_exit_code says 0 or 1. */
int gate_compare(const struct result_set *baseline, const struct result_set *current,
                 const struct gate_thresholds *, const struct gate_options *,
                 struct gate_report *);
int gate_exit_code(const struct gate_report *);
void gate_report_free(struct gate_report *);

const char *gate_verdict_name(enum gate_verdict);
/* The table, worst first (the report's lines are sorted so), and a summary
 * line; markdown for CI summaries. */
void gate_print(struct gate_report *, const char *baseline_path, const char *current_path,
                FILE *);
void gate_print_markdown(struct gate_report *, const char *baseline_path,
                         const char *current_path, FILE *);

/* Where ab measures an A/B run until both sides have finished every row:
 * DIR/.AB_ID.partial/, renamed to DIR/AB_ID/ (gate.txt in it) only then.
 * The gate refuses a partial name; the newest-pair search never sees one
 * (it starts with '.'). */
#define GATE_AB_PARTIAL_SUFFIX ".partial"

/* The line of each side's RUN_ID.env in which ab records how many rows it
 * asked that side for (points x modes x the variants its build has), once
 * both sides have finished all of them. */
#define GATE_AB_ROWS_PLANNED "ab_rows_planned"

/* Whether two runs are a whole A/B pair (make ab): each side holds the rows
 * planned for it (planned[0] base, [1] cand, from GATE_AB_ROWS_PLANNED; -1
 * where not recorded: a pair from before that line is judged by what it
 * holds), and a row on one side only is of a variant the other side has no
 * row of at all (its build lacks it). ATTN_ERR_INPUT naming the first thing
 * amiss: half a pair must not be gated as whole. */
int gate_check_pair(const struct result_set *base, const struct result_set *cand,
                    const long planned[2]);

/* What regress and ab both do: read two runs and the thresholds (NULL:
 * bench/gate/thresholds.conf when it exists, else the built-in defaults), refuse a
 * run compared with itself (and, with pair set, an A/B pair that is not
 * whole), compare, print `compare: BASE_RUN vs CUR_RUN` and the table to out
 * (and to copy_to, markdown to markdown, when set). The report names the
 * files baseline_name and results_name when set (ab gates a pair before it
 * moves it to where it is read), else by their paths. *exit_code is 0 pass
 * or 1 regression; refusals return ATTN_ERR_INPUT. */
struct gate_files_request {
    const char *baseline, *results, *thresholds, *copy_to, *markdown;
    const char *baseline_name, *results_name;
    bool pair;         /* the two runs are one A/B pair: gate_check_pair first */
    long planned[2];   /* with pair: gate_check_pair's */
    struct gate_options options;
};
int gate_files(const struct gate_files_request *, FILE *out, int *exit_code);

#endif

/* results.h — the results CSV (schema 1 of design.md): the row a runner
 * writes for each variant × grid point × timing mode, and its header. */
#ifndef ATTN_RESULTS_H
#define ATTN_RESULTS_H

#include "attn.h"
#include "csv.h"
#include "peak.h"
#include "schema.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif


struct result_row {
    const char *run_id, *timestamp, *git_rev, *gpu; /* which run, when, which code, where */
    const char *ab_run; /* the A/B run that measured it interleaved with its other side; NULL/"" plain */
    const char *compare_run; /* the compare run that measured it in turns with other variants; NULL/"" none */
    const char *shard;  /* "I/N": the shard of a sharded sweep that measured it ("1/1" a plain run) */
    const char *variant;
    struct attn_problem problem;
    const char *mode;
    const char *regime; /* burst, sustained (REGIMES, schema.h); NULL: burst */
    const char *status; /* ok, skipped, oom, mismatch, error */
    char reason[512];   /* empty when ok */
    bool timed;         /* stats, converged and rates are meaningful */
    struct sample_stats stats;
    bool converged;
    int calls_per_sample;
    double extra_mem_mib;          /* NaN when unknown */
    double max_abs_err, rel_err;   /* NaN when not validated */
    const char *ref;               /* which reference validated it, NULL if none */
    bool traced;                   /* the op columns below are meaningful */
    double kernels_per_call, memcpy_per_call, memset_per_call;
    double gpu_busy_ms;            /* sum of the traced call's ops' own durations */
    double launch_gap_ms;          /* first op start to last op end, minus busy */
    const struct peaks *peaks;     /* the run's measured ceilings, NULL if not measured */
    unsigned clock_start_mhz, clock_end_mhz; /* 0 when unknown */
    int clock_low;                 /* 1: a reading under 90% of the run's reference clock; -1 unknown */
    double watts;                  /* average board power over the timed window; NaN unknown */
    const char *throttle;          /* clock event reasons seen, "a|b" ("" none); NULL unknown */
    double temperature_c;          /* GPU temperature after the last sample; NaN unknown */
    /* A sustained row (regime): whether the clock and power settled before
     * S seconds of load (1, 0; -1 a burst row), how long the load ran before
     * the samples, and the SM clock and board power over its last second
     * (NaN: burst, or unknown) */
    int settled;
    double settle_s, settled_mhz, settled_watts;
    char impl[256];                /* what the variant ran (attn_impl() after setup), "" when unsaid */
    const double *sample_ms;       /* the timed samples, ms per call, in order (timed rows) */
    size_t nsample_ms;
};

/* Blank row: NaN / -1 in every measured field. */
void results_row_init(struct result_row *);
/* reason = printf(fmt, ...) with line ends and control characters flattened. */
void results_set_reason(struct result_row *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void results_header(struct csv_line *);
int results_format(const struct result_row *, struct csv_line *);

/* The samples file beside a run's CSV, long format: the key columns, then
 * `sample` (0, 1, ...) and `ms` (per call). This build writes it gzipped,
 * RUN_ID.samples.csv.gz: its header, then each timed row's samples, each a
 * gzip member of its own, so the file is whole after every row and a
 * concatenation of such files is one (zlib, zcat, Python's gzip and pandas
 * read them whole). Older runs, and tools that write plain text, have
 * RUN_ID.samples.csv: every reader takes either (zlib reads plain text as
 * it is). */
#define RESULTS_SAMPLES_SUFFIX ".samples.csv.gz"
#define RESULTS_SAMPLES_PLAIN_SUFFIX ".samples.csv"
void results_samples_header(struct csv_line *);
/* The one place that decides a run's samples file: "DIR/RUN_ID.csv" ->
 * DIR/RUN_ID.samples.csv.gz when it exists or neither name does (what a
 * writer creates), else the plain DIR/RUN_ID.samples.csv of an older run;
 * into buf. ATTN_ERR_INPUT when the path does not end in .csv or does not
 * fit. */
int results_samples_path(const char *csv_path, char *buf, size_t len);
/* Creates a new run's samples file (RESULTS_SAMPLES_SUFFIX beside
 * csv_path; refused when a samples file of either name is there) with its
 * header; *fd appends to it, path (len bytes) names it. */
int results_samples_create(const char *csv_path, char *path, size_t len, int *fd);
/* Appends a timed row's samples as one gzip member with one write(2): all of
 * them or none. Not synced: the runner syncs them before it writes the row. */
int results_samples_append(int fd, const struct result_row *);
/* Appends len bytes of whole sample lines as one gzip member, as
 * results_samples_append does. */
int results_samples_write(int fd, const char *text, size_t len);
/* A run's samples file written anew (resume's trim, a blessed baseline,
 * build/merge): results_samples_begin opens RUN_ID.samples.csv.gz.tmp with
 * its header; results_samples_commit syncs it, renames it into place and
 * removes the plain file of an older run; results_samples_abandon removes
 * it. Either ends it. */
struct samples_rewrite {
    int fd;
    char path[1300], tmp[1310], plain[1300];
};
int results_samples_begin(const char *csv_path, struct samples_rewrite *);
int results_samples_commit(struct samples_rewrite *);
void results_samples_abandon(struct samples_rewrite *);
/* Removes the samples file beside csv_path, of either name (none there is
 * no error). */
int results_samples_remove(const char *csv_path);
/* "DIR/RUN_ID.csv" -> "DIR/RUN_ID" SUFFIX (".env", ".part-2.env") into buf;
 * the same refusals. */
int results_beside_path(const char *csv_path, const char *suffix, char *buf, size_t len);

/* "sw_power_cap|hw_thermal" for a mask of THROTTLE_REASONS (schema.h); ""
 * for none, an unknown bit as 0x...; the text is cut to fit len. */
const char *results_throttle_names(unsigned long long mask, char *buf, size_t len);
/* Such a list back into a mask; ATTN_ERR_INPUT naming the first unknown word. */
int results_throttle_parse(const char *names, unsigned long long *mask);

/* Number of columns and the name of column i (for readers and tests). */
int results_column_count(void);
const char *results_column_name(int i);

#ifdef __cplusplus
}
#endif
#endif

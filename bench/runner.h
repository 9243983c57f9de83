/* runner.h — measuring rows: the run's files (RUN_ID.csv, .samples.csv.gz, .env),
 * a grid point's tensors and reference, and one variant's row at a point in
 * steps (open → per mode: start, take samples, finish → close). attnbench's
 * plain sweep and its A/B worker (worker.c) both measure through these, so a
 * row means the same whichever of them wrote it. */
#ifndef ATTN_RUNNER_H
#define ATTN_RUNNER_H

#include "options.h"
#include "../common/peak.h"
#include "../common/results.h"
#include "../common/results_read.h"
#include "../common/timing.h"

#include <stdio.h>

struct runner {
    const struct options *opt;
    struct device_info dev;
    char gpu[64], run_id[96], csv_path[1200], samples_path[1200];
    char ab_run[64]; /* the A/B run this side belongs to; "" in a plain run */
    char compare_run[64]; /* the compare run this worker's variant belongs to; "" otherwise */
    enum attn_regime regime; /* every row's: sustained with --sustain, else burst */
    bool driver_loads;    /* a worker whose driver loads the board (its round robin) and
                             says when it settled: the rows' own warm-up does not sustain */
    char shard[24];  /* "I/N" of a sharded sweep, "1/1" otherwise; "" in an A/B side */
    int csv_fd, samples_fd;
    struct bench_timer *timer;
    attn_stream_t stream;
    size_t rows_done, rows_total, rows_failed;
    struct peaks peaks;
    bool have_peaks;
    unsigned ref_clock_mhz; /* the run's first busy SM clock reading, 0 unknown */
    bool tracing;           /* a traced call per row */
    FILE *ops_txt;          /* DIR/ops.txt with --trace */
    unsigned long long seed; /* the run's input seed, recorded in its .env (0: per point, A/B) */
    struct result_set done; /* a resumed run's rows, skipped; empty in a new run */
    /* where the sweep's wall time went, ms: the points' inputs (allocation,
     * random fill), the references, the variants' setup and validation,
     * the warm-ups and samples, the traced calls (runner_print_spent) */
    struct sweep_spent { double inputs, reference, validation, timing, trace; } spent;
};

/* Device, stream, timer, NVML, peaks (with --peak), tracing; ATTN_ERR_INPUT
 * for what the user must fix (no GPU, --trace DIR unusable). */
int runner_init(struct runner *, const struct options *);
void runner_close(struct runner *);
/* One line on stderr, begun with `who`: of wall_s seconds, how many went
 * to each part of r->spent, and the rest (writing rows, the device's own
 * setup; in a compare worker, waiting for its turns). */
void runner_print_spent(const struct runner *, const char *who, double wall_s);

/* Creates DIR/RUN_ID.csv, DIR/RUN_ID.samples.csv.gz and DIR/RUN_ID.env. dir NULL:
 * --out, else results/<gpu>. run_id NULL: the UTC start time, made unique. */
int runner_open_files(struct runner *, const char *dir, const char *run_id, int argc,
                      char **argv);
/* Reopens DIR/RUN_ID.csv and its samples to append to them: cut back to
 * their whole rows (resume.h), of this build's columns, the rows kept in
 * r->done. What a resumed run and an A/B side's fresh worker (worker.c)
 * both do before they write more rows; `what` (the option or command that
 * asked) begins its refusals. */
int runner_reopen_files(struct runner *, const char *dir, const char *run_id, const char *what);
/* runner_reopen_files of DIR/RUN_ID.csv (DIR: --out, else results/<gpu>)
 * to continue the run, checked against this GPU and revision (force: any
 * revision), its rows counted as done; the .env gains a `resumed=` line. */
int runner_resume_files(struct runner *, const char *run_id, bool force, int argc, char **argv);
/* Whether the run holds the row already (a resumed run). */
bool runner_row_done(const struct runner *, const char *variant, const struct attn_problem *,
                     enum attn_mode);
/* The row as the run writes it: the run's own fields (run id, revision, GPU,
 * time, peaks) filled in, then formatted. */
int runner_format_row(struct runner *, struct result_row *, struct csv_line *);

/* The tensors of one grid point, shared by every variant run on it. */
struct point_data {
    void *q, *k, *v, *o;
    double *ref;          /* reference output, host; computed on first need */
    uint16_t *out;        /* a variant's output copied back, host */
    const char *ref_kind; /* NULL until the reference is computed */
    /* pass bwd and fwd_bwd: dO (random, as the inputs), the gradients'
     * buffers, their references (host, computed with ref) and a host copy
     * of the largest gradient for the comparison; NULL for the forward */
    void *dout, *dq, *dk, *dv;
    double *ref_dq, *ref_dk, *ref_dv;
    uint16_t *out_grad;
    int prepare_rc;       /* ATTN_OK, or why the point could not be prepared */
    char prepare_why[512];
};

/* Allocates and fills the point's inputs; a failure is kept in d->prepare_rc
 * (every variant's rows then say why). */
void point_prepare(struct runner *, const struct attn_problem *, uint64_t seed,
                   struct point_data *);
void point_free(struct point_data *);

/* One variant at one point. */
struct variant_row {
    const struct attn_variant *v;
    struct attn_problem p;
    struct point_data *d;
    void *ws, *ctx;
    struct timed_call call;
    struct result_row base; /* what every mode's row shares (impl, errors, memory) */
    enum attn_mode mode;    /* the mode being timed */
    struct timing_result tr;
};

/* supports → workspace → setup → reference → validate → slowdown calibration.
 * *opened false: the variant's rows are already written (skipped, oom, error,
 * mismatch, for every mode) and nothing is left to close. Returns only
 * runner-fatal errors (a failed write). */
int row_open(struct runner *, const struct attn_variant *, const struct attn_problem *,
             struct point_data *, struct variant_row *, bool *opened);
/* Time one mode in steps: start (graph capture, warm-up), take blocks of
 * samples, finish (statistics, the traced call, the row and its samples
 * written). When the variant itself fails in start or take, the mode's row
 * is written as error/oom there and *ended is set: no finish follows. */
int row_mode_start(struct runner *, struct variant_row *, enum attn_mode, bool *ended);
int row_mode_take(struct runner *, struct variant_row *, size_t min_samples, double min_ms,
                  bool rewarm, bool *ended);
int row_mode_finish(struct runner *, struct variant_row *, bool converged);
/* The variant failed (vrc) in a step of the caller's own while being timed
 * (worker.c's load): its mode's row written as error or oom, *ended set;
 * an interrupt is passed up instead. */
int row_mode_fail(struct runner *, struct variant_row *, int vrc, bool *ended);
/* The plain runner's mode: start, samples until the stop rule, finish. */
int row_mode_time(struct runner *, struct variant_row *, enum attn_mode);
void row_close(struct variant_row *);

#endif

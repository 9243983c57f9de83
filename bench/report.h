/* report.h — build/report's parts: what both commands share (the command
 * line, the variants of a run, a row's twins, the run's .env) and the two
 * commands, `data` (report_data.c: tidy files for the gnuplot scripts) and `html`
 * (report_html.c: the report page). */
#ifndef ATTN_REPORT_H
#define ATTN_REPORT_H

#include "../common/results_read.h"
#include "../common/schema.h"

#include <stdbool.h>
#include <stddef.h>

#define MAX_VARIANTS 16

struct report_args {
    const char *cmd, *results, *outdir, *mode, *baseline, *thresholds, *env;
};

/* The modes in the order the report shows them: cold, graph, hot. A mode's
 * place here is also its code in the ratio files (plots/README.md). */
extern const enum attn_mode report_modes[MODE_COUNT];

/* The run's variants in order of first appearance; returns how many. */
int report_variants(const struct result_set *, const char *names[MAX_VARIANTS]);
/* The row of `variant` at the same point and mode as k, or NULL. */
const struct result_rec *report_twin(const struct result_set *, const struct result_key *k,
                                     const char *variant);
/* ok with a positive, finite time. */
bool report_row_ok(const struct result_rec *);
/* A PyTorch peer (tools/peers/torch_peers.py): a variant named torch_*. The
 * one place that says which variants are peers: the figures draw them dashed,
 * the page marks them, speedup_torch sets ours against the best of them. */
bool report_is_peer(const char *variant);
/* The fastest ok peer row at k's point and mode, or NULL: the reference of
 * "speedup over the best PyTorch peer" in the figures and on the page. */
const struct result_rec *report_best_peer(const struct result_set *, const struct result_key *k);
/* want, else cold when the run has it, else the first row's mode. */
const char *report_pick_mode(const struct result_set *, const char *want);
/* RESULTS.csv → RESULTS.env */
void report_env_beside(const char *csv, char *out, size_t len);
/* The value of key in a .env file, NaN when absent. */
double report_env_value(const char *env, const char *key);

int report_data(const struct report_args *, const struct result_set *);
int report_html(const struct report_args *, const struct result_set *);

#endif

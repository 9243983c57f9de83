/* report.h — build/report's parts: what both commands share (the command
 * line, the variants of a run, a row's twins, the run's .env) and the two
 * commands, `data` (report_data.c: tidy files for the gnuplot scripts) and `html`
 * (report_html.c: the report page). */
#ifndef ATTN_REPORT_H
#define ATTN_REPORT_H

#include "../../common/results_read.h"
#include "../../common/schema.h"

#include <stdbool.h>
#include <stddef.h>

/* Panels per figure: a run with more is drawn as several figures of this
 * many panels each, its pages (report_data: a data directory per page;
 * the Makefile draws page K as NAME-K.png, the page shows them all). */
#define REPORT_PAGE_PANELS 24

struct report_args {
    const char *cmd, *results, *outdir, *mode, *baseline, *thresholds, *env;
};

/* The modes in the order the report shows them: cold, graph, hot. A mode's
 * place here is also its code in the ratio files (plots/README.md). */
extern const enum attn_mode report_modes[MODE_COUNT];

/* The run's variants in order of first appearance: *names (pointing into
 * the set; the array the caller's to free) and *n. */
int report_variants(const struct result_set *, const char ***names, int *n);
/* Whether run and base were measured together, interleaved on one GPU:
 * every row of both carries one and the same ab_run (the two sides of an
 * A/B run). Else false and why not, in a few words, into why. The one rule
 * for the ratio figure (current / baseline): runs measured apart differ by
 * the machine's drift between the sessions as much as by the code, so the
 * figures draw no ratio for them and the page says why. */
bool report_measured_together(const struct result_set *run, const struct result_set *base, char *why,
                              size_t len);
/* The row of `variant` at the same point and mode as k, or NULL. */
const struct result_rec *report_twin(const struct result_set *, const struct result_key *k,
                                     const char *variant);
/* ok with a positive, finite time. */
bool report_row_ok(const struct result_rec *);
/* The row's GB/s: its point's bytes (attn_bytes: Q, K and V read once, O
 * written once; a decode's K and V at all its cached keys, Q and O at its
 * q_len rows) over its median, as attnbench computes the gbps column
 * (attn_gbps); NaN when the row is not ok. The figures' and the page's
 * bandwidth. */
double report_row_gbps(const struct result_rec *);
/* A PyTorch peer (tools/peers/torch_peers.py): a variant named torch_*. The
 * one place that says which variants are peers: the figures draw them dashed,
 * the page marks them, speedup_torch sets ours against the best of them. */
bool report_is_peer(const char *variant);
/* The fastest ok peer row at k's point and mode, or NULL: the reference of
 * "speedup over the best PyTorch peer" in the figures and on the page. */
const struct result_rec *report_best_peer(const struct result_set *, const struct result_key *k);
/* ------------------------------------------------------------ passes */

/* What a pass times, in words: "forward", "backward (dQ, dK, dV)", "forward
 * + backward": the figures' titles and subtitles and the page say it. */
const char *report_pass_title(enum attn_pass);
/* The passes the rows have (in mode; every row when mode is NULL), in the
 * order fwd, bwd, fwd_bwd, into out; returns how many. A pass is a family of
 * figures and tables of its own: no panel, series or table mixes two. */
int report_passes(const struct result_set *, const char *mode, enum attn_pass out[ATTN_PASS_COUNT]);
/* The rows of s of one pass as a set of their own, indexed (results_find),
 * in s's order, their samples s's: each pass's figures are drawn from it as
 * from a run of that pass alone. Free it with report_pass_rows_free (never
 * results_free: the samples stay s's), and before s. */
int report_pass_rows(const struct result_set *s, enum attn_pass, struct result_set *out);
void report_pass_rows_free(struct result_set *);

/* A panel of the figures and of the page's tables: the rows of one pass and
 * one head_dim × causal, or, in a run of several model shapes
 * (report_by_shape), of one pass and one model shape, heads × kv_heads ×
 * head_dim × causal × varlen (a ragged batch's distribution is a shape of
 * its own). The one rule that says which panel a row is in: report_panel_of
 * (and _has, which uses it); the figures' data files and titles and the
 * page's table headers are named from the panel (report_panel_stem,
 * report_panel_title), a forward panel's as if there were no pass. */
struct report_panel {
    enum attn_pass pass;
    bool shape;          /* a model shape's panel: heads, kv_heads and varlen are part of it */
    int heads, kv_heads; /* 0 and 0 when not a shape */
    int head_dim;
    bool causal;
    char varlen[ATTN_VARLEN_MAX]; /* attn_problem.varlen; "" when dense or not a shape */
    int q_len;           /* a decode's queries per sequence; 0 for a prefill (its own panels either way) */
    int page;            /* a paged cache's tokens per page; 0 when contiguous (its own panels either way) */
    int batch;           /* a decode panel's points of one batch size off its family (report_families), else 0 */
};
/* Room for report_panel_title's and report_panel_stem's text, its NUL
 * included. */
#define REPORT_PANEL_TITLE_MAX (96 + ATTN_VARLEN_MAX)
/* Whether the run's panels are model shapes: some point has grouped K/V
 * heads (kv_heads < heads) or a ragged batch, or two points of one head_dim × causal and one
 * batch·seq_len (a panel's family of points) differ in heads or kv_heads,
 * which would collide at one S in a head_dim × causal panel (the llm grid).
 * Not on the default grid, whose heads = hidden / head_dim and kv_heads =
 * heads: its panels stay head_dim × causal. */
bool report_by_shape(const struct result_set *);
/* The panel that holds point p. */
struct report_panel report_panel_of(const struct attn_problem *p, bool by_shape);
/* Whether the row with key k is in the panel. */
bool report_panel_has(const struct report_panel *, const struct result_key *k);
bool report_panel_equal(const struct report_panel *, const struct report_panel *);
/* The panels' order: the pass (fwd, bwd, fwd_bwd), then q_len (a pass's
 * prefill panels, q_len 0, before its decodes', so that the decode panels
 * are the last of the forward's), head_dim, non-causal first, then heads,
 * then the more K/V heads first (multi-head, grouped, multi-query), dense
 * before ragged. */
int report_panel_cmp(const struct report_panel *, const struct report_panel *);
/* "D = 128, causal"; a shape's "H=64 KV=8, D=128, causal", "H=16 KV=1
 * (MQA), D=128, causal" or, when kv_heads = heads, "H=16, D=192, non-causal";
 * a decode's names its queries per sequence: "H=32 KV=8 Q=4, D=128,
 * causal", "Q = 1, D = 128, causal";
 * a ragged one ends in ", varlen uniform:0"; a panel of another pass than
 * the forward in its report_pass_title: "D = 128, causal, backward (dQ, dK,
 * dV)", "D = 128, causal, forward + backward". */
const char *report_panel_title(const struct report_panel *, char *buf, size_t len);
/* The panel in a file name: "D128_causal" ("full" when not causal); a
 * shape's "H64_KV8_D128_causal", a ragged one's "H32_KV8_D128_causal_varlen-uniform-0"
 * (the varlen text with every character but letters and digits as '-'); a
 * panel of another pass than the forward ends in its name: "D128_causal_bwd",
 * "D128_causal_fwd_bwd". */
const char *report_panel_stem(const struct report_panel *, char *buf, size_t len);

/* A panel and the family of its points that the figures draw: the
 * batch·seq_len most of the panel's rows in the mode share (the
 * FlashAttention grid keeps batch·seq_len = 16384; points off it, such as
 * the seed's, are not drawn). A decode panel's points off that family are
 * families of their own, one per batch size (key.batch set, the same
 * tokens: the decode grid's batch-1 caches beside its fixed-size ones). The
 * headline, its data and the page's "Where it stands" all take their
 * points from here. */
struct report_family {
    struct report_panel key;
    long tokens;
};
/* The families of a mode in report_panel_cmp's order; *out the caller's to
 * free. */
int report_families(const struct result_set *, const char *mode, bool by_shape, struct report_family **out,
                    int *n);
/* Adds panel p (tokens 0) to a growing set kept in report_panel_cmp's
 * order, unless it is there. */
int report_family_add(struct report_family **set, int *n, int *cap, const struct report_panel *p);
/* Whether the row with key k is one of the family's points in mode. */
bool report_in_family(const struct report_family *, const struct result_key *k, const char *mode);

/* ------------------------------------------------- ratios between rows */

/* A ratio of two rows' times: the reference's time over the row's (> 1:
 * the row is faster). Interleaved when both rows were measured in turns in
 * one compare run (the same non-empty compare_run) and each has at least
 * SHIFT_MIN_SAMPLES samples: then ratio is the Hodges–Lehmann estimate from
 * the samples (bench/gate/shift.h) and [lo, hi] its interval, each bound at
 * the gate's confidence (a two-sided interval at 2·confidence − 1). Else
 * the medians' ratio, lo and hi NaN: rows measured row after row, seconds
 * apart, differ by the board's drift (clock, power) as much as by the
 * kernels, and no interval is claimed. NaN when either row is not ok. */
struct report_ratio {
    double ratio, lo, hi;
    bool interleaved;
};
int report_speed_ratio(const struct result_rec *ref, const struct result_rec *row, double confidence,
                       struct report_ratio *out);
/* The confidence of the gate's bounds, the default `confidence` of the
 * thresholds the gate would use: the file given; else, as build/regress
 * does, bench/gate/thresholds.conf where it can be read (99 %); else the
 * gate's built-in default (gate_thresholds_default: 0.99). */
int report_confidence(const char *thresholds, double *confidence);
/* The compare run the set's rows carry (the first non-empty compare_run),
 * "" in a run measured row after row. */
const char *report_compare_run(const struct result_set *);
/* Whether the row's regime is sustained (else burst). */
bool report_sustained(const struct result_key *);

/* The drawn headline leaves out a variant slower than REPORT_HEADLINE_MIN ×
 * cudnn_sdpa's speed at every point of its panels (the eager ones). */
#define REPORT_HEADLINE_MIN 0.5
/* The headline's reference: cudnn_sdpa, the vendor kernel. */
#define REPORT_HEADLINE_REF "cudnn_sdpa"

/* want, else cold when the run has it, else the first row's mode. */
const char *report_pick_mode(const struct result_set *, const char *want);
/* RESULTS.csv → RESULTS.env */
void report_env_beside(const char *csv, char *out, size_t len);
/* The value of key in a .env file, NaN when absent. */
double report_env_value(const char *env, const char *key);

int report_data(const struct report_args *, const struct result_set *);
int report_html(const struct report_args *, const struct result_set *);

#endif

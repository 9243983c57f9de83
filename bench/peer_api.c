/* peer_api.c — build/libattnpeer.so's entry points, for the PyTorch peers
 * (tools/peers/) through ctypes: attnbench itself (attn_peer_register adds a
 * variant whose ops are Python callbacks; attn_peer_bench runs attnbench's
 * command line in the calling process, so every rule of a row is the C
 * runner's), and the rules of a row one by one (sample statistics and the
 * stop rule, FLOP and byte counts, the output comparison with its
 * tolerances, the warm-up rule, the results columns), which the Python
 * tests hold to the same cases as the C ones. Every function returns 0 on
 * success and a negative number on bad input. */
#include "attnbench.h"
#include "../common/attn.h"
#include "../common/errors.h"
#include "../common/registry.h"
#include "../common/reference.h"
#include "../common/results.h"
#include "../common/schema.h"
#include "../common/stats.h"

#include <string.h>

/* Fields of attn_peer_summarize's out[], in this order. */
enum { PEER_N, PEER_MEDIAN, PEER_MIN, PEER_MAX, PEER_P10, PEER_P25, PEER_P75, PEER_P90, PEER_MEAN,
       PEER_NOISE, PEER_NSTATS };

int attn_peer_nstats(void) { return PEER_NSTATS; }

int attn_peer_summarize(const double *ms, size_t n, double *out)
{
    struct sample_stats st;
    if (!ms || !out || n == 0 || stats_summarize(ms, n, &st) != ATTN_OK) return -1;
    const double v[PEER_NSTATS] = {(double)st.n, st.median, st.min, st.max, st.p10, st.p25,
                                   st.p75, st.p90, st.mean, st.noise_rel};
    memcpy(out, v, sizeof v);
    return 0;
}

static struct stop_rule rule_of(size_t min_samples, double min_ms, double target_noise,
                                double budget_ms, size_t max_samples, double warm_ms)
{
    return (struct stop_rule){.min_samples = min_samples, .min_ms = min_ms,
                              .target_noise = target_noise, .budget_ms = budget_ms,
                              .max_samples = max_samples, .warm_ms = warm_ms};
}

/* 1: stop (*converged 1 when the noise target was met), 0: go on, -1: bad input. */
int attn_peer_should_stop(size_t min_samples, double min_ms, double target_noise, double budget_ms,
                          size_t max_samples, const double *ms, size_t n, double timed_ms,
                          double elapsed_ms, int *converged)
{
    struct sample_stats st;
    if (!ms || !converged || n == 0 || stats_summarize(ms, n, &st) != ATTN_OK) return -1;
    const struct stop_rule r = rule_of(min_samples, min_ms, target_noise, budget_ms, max_samples, 0);
    bool conv = false;
    const bool stop = stats_should_stop(&r, &st, timed_ms, elapsed_ms, &conv);
    *converged = conv;
    return stop;
}

/* 1: warm up further, 0: start sampling. */
int attn_peer_keep_warming(double warm_ms, size_t calls, double elapsed_ms)
{
    const struct stop_rule r = rule_of(0, 0, 0, 0, 0, warm_ms);
    return stats_keep_warming(&r, calls, elapsed_ms);
}

static int problem_of(int batch, int heads, int seq_len, int head_dim, int causal, const char *dtype,
                      struct attn_problem *p)
{
    if (batch < 1 || heads < 1 || seq_len < 1 || head_dim < 1 || !dtype) return -1;
    memset(p, 0, sizeof *p);
    p->batch = batch;
    p->heads = heads;
    p->seq_len = seq_len;
    p->head_dim = head_dim;
    p->causal = causal != 0;
    return attn_dtype_parse(dtype, &p->dtype) == ATTN_OK ? 0 : -1;
}

/* The point's FLOPs and bytes (the counts every row's tflops and gbps use). */
int attn_peer_counts(int batch, int heads, int seq_len, int head_dim, int causal, const char *dtype,
                     double *flops, double *bytes)
{
    struct attn_problem p;
    if (!flops || !bytes || problem_of(batch, heads, seq_len, head_dim, causal, dtype, &p)) return -1;
    *flops = attn_flops(&p);
    *bytes = attn_bytes(&p);
    return 0;
}

/* The output (16-bit, the dtype's bits) against the float64 reference with
 * the runner's tolerances; *ok 1 when it passes. */
int attn_peer_compare(const double *ref, const uint16_t *out, size_t n, const char *dtype,
                      double *max_abs_err, double *rel_err, int *ok)
{
    enum attn_dtype dt;
    if (!ref || !out || !max_abs_err || !rel_err || !ok || attn_dtype_parse(dtype, &dt) != ATTN_OK) return -1;
    const struct attn_comparison c = attn_compare(ref, out, n, dt, attn_tolerance_for(dt));
    *max_abs_err = c.max_abs_err;
    *rel_err = c.rel_err;
    *ok = c.ok;
    return 0;
}

/* The results schema: its column count and names, in file order. */
int attn_peer_column_count(void) { return results_column_count(); }
const char *attn_peer_column_name(int i) { return results_column_name(i); }

/* The layouts ctypes must mirror (tools/peers/attnpeer.py checks them). */
size_t attn_peer_sizeof_variant(void) { return sizeof(struct attn_variant); }
size_t attn_peer_sizeof_problem(void) { return sizeof(struct attn_problem); }
size_t attn_peer_sizeof_op_counts(void) { return sizeof(struct attn_op_counts); }

/* Adds a variant defined by the caller (its strings and callbacks must live
 * as long as the process). Refused as registry_add refuses (a name that is
 * taken, not [a-z0-9_]+, or longer than the results reader takes back, an
 * op missing); the message of a refusal is attn_peer_error(). */
int attn_peer_register(const struct attn_variant *v) { return registry_add(v); }

/* A callback's failure: the message the row's reason will carry, as it is
 * (recorded as an input message so that no place of ours is prefixed: the
 * place is PyTorch's). */
void attn_peer_fail(const char *message) { (void)ATTN_FAIL(ATTN_ERR_INPUT, "%s", message ? message : "?"); }

/* What a setup chose to run (the row's impl column), as attn_set_impl. */
void attn_peer_set_impl(const char *what) { attn_set_impl("%s", what ? what : ""); }

const char *attn_peer_error(void) { return attn_error_message(); }

/* attnbench with this command line (argv[0] the program's name), in this
 * process: its exit status. */
int attn_peer_bench(int argc, char **argv)
{
    if (argc < 1 || !argv) return 2;
    return attnbench_main(argc, argv, false);
}

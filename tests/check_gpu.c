/* check_gpu.c — GPU tests: every registered variant against the float64 CPU
 * reference over the odd-shape set (S = 1, 17, 1000; B·H = 1 and 3; head_dim
 * 64 and 128; causal and not) and over long rows (against the float32 GPU
 * reference), the float32 GPU references, forward and backward, against the
 * float64 CPU ones, CUDA-graph capture of each variant, cudnn_sdpa running
 * plain points (its cuDNN refusals are skips, so they must not be all it
 * does), and the runner end to end (ok and oom rows, an interrupted sweep
 * keeping whole rows). Without a CUDA device nothing runs and the suite
 * reports every test as skipped, never as passed. Run with CK_FORK=no: a
 * forked child cannot use its parent's CUDA context. One case alone:
 * CK_RUN_CASE=variants, backward, decode, hopper_configs, helpers, runner
 * or watchdog (CK_FORK=no CK_RUN_CASE=decode build/test_gpu). */
#include "../common/csv.h"
#include "../common/device.h"
#include "../common/errors.h"
#include "../common/gpu_util.h"
#include "../common/peak.h"
#include "../common/reference.h"
#include "../common/registry.h"
#include "../common/results.h"
#include "../common/results_read.h"
#include "../common/timing.h"
#include "../common/trace.h"
#include "../variants/flash_hopper.h"

#include <check.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

static struct device_info dev;
static cudaStream_t stream;

/* ------------------------------------------------------------ the shapes */

struct shape {
    int batch, heads, seq, dim;
    bool causal;
    enum attn_dtype dtype;
    int kv_heads;
    const char *varlen; /* a ragged batch (attn_problem.varlen), NULL when dense */
    int q_len;          /* a decode's queries per sequence (attn_problem.q_len), 0 when not */
    int page;           /* a paged cache's tokens per page (attn_problem.page), 0 when contiguous */
};

static const int odd_seqs[] = {1, 17, 1000};
static const int odd_bh[][2] = {{1, 1}, {3, 1}}; /* B·H = 1 and 3 */
static const int odd_dims[] = {64, 128};
#define N_ODD (3 * 2 * 2 * 2)

static struct shape odd_shape(int i, enum attn_dtype t)
{
    struct shape s = {
        .seq = odd_seqs[i % 3], .batch = odd_bh[(i / 3) % 2][0], .heads = odd_bh[(i / 3) % 2][1],
        .dim = odd_dims[(i / 6) % 2], .causal = (i / 12) % 2, .dtype = t,
    };
    return s;
}

static struct attn_problem problem_of(struct shape s)
{
    struct attn_problem p = {.batch = s.batch, .heads = s.heads, .seq_len = s.seq,
                             .head_dim = s.dim, .causal = s.causal, .dtype = s.dtype,
                             .scale = 1.0f / sqrtf((float)s.dim), .kv_heads = s.kv_heads,
                             .q_len = s.q_len, .page = s.page};
    if (s.varlen) snprintf(p.varlen, sizeof p.varlen, "%s", s.varlen);
    return p;
}

/* ------------------------------------------------- inputs and reference */

struct case_data {
    struct attn_problem p;
    size_t n, bytes, nkv, kv_bytes; /* Q and O; K and V */
    void *q, *k, *v, *o;
    uint16_t *hq, *hk, *hv, *hout;
    double *ref;
};

/* The float32 GPU reference of c's inputs, widened into out (c->n doubles). */
static void gpu_reference_host(const struct case_data *c, double *out)
{
    float *dref, *href = malloc(c->n * sizeof *href);
    ck_assert(href);
    ck_assert_int_eq(cudaMalloc((void **)&dref, c->n * sizeof *dref), cudaSuccess);
    ck_assert_int_eq(gpu_reference_f32(&c->p, c->q, c->k, c->v, dref, stream), ATTN_OK);
    ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(href, dref, c->n * sizeof *dref, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < c->n; i++) out[i] = href[i];
    cudaFree(dref);
    free(href);
}

/* Inputs for shape s and their reference: float64 on the CPU, or for long
 * rows the float32 GPU kernel (itself checked against the CPU below). */
static void case_open_ref(struct case_data *c, struct shape s, uint64_t seed, bool gpu_ref)
{
    memset(c, 0, sizeof *c);
    c->p = problem_of(s);
    c->n = attn_tensor_elems(&c->p);
    c->bytes = c->n * attn_dtype_bytes(s.dtype);
    c->nkv = attn_kv_tensor_elems(&c->p);
    c->kv_bytes = c->nkv * attn_dtype_bytes(s.dtype);
    ck_assert_int_eq(cudaMalloc(&c->q, c->bytes), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&c->k, c->kv_bytes), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&c->v, c->kv_bytes), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&c->o, c->bytes), cudaSuccess);
    ck_assert_int_eq(gpu_fill_random(c->q, c->n, s.dtype, seed, stream), ATTN_OK);
    ck_assert_int_eq(gpu_fill_random(c->k, c->nkv, s.dtype, seed + 1, stream), ATTN_OK);
    ck_assert_int_eq(gpu_fill_random(c->v, c->nkv, s.dtype, seed + 2, stream), ATTN_OK);
    ck_assert_int_eq(gpu_poison_cache_tails(&c->p, c->k, stream), ATTN_OK); /* 256s where no token is */
    ck_assert_int_eq(gpu_poison_cache_tails(&c->p, c->v, stream), ATTN_OK);
    c->hq = malloc(c->bytes);
    c->hk = malloc(c->kv_bytes);
    c->hv = malloc(c->kv_bytes);
    c->hout = malloc(c->bytes);
    c->ref = malloc(c->n * sizeof *c->ref);
    ck_assert(c->hq && c->hk && c->hv && c->hout && c->ref);
    ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(c->hq, c->q, c->bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(c->hk, c->k, c->kv_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(c->hv, c->v, c->kv_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    if (gpu_ref) gpu_reference_host(c, c->ref);
    else ck_assert_int_eq(attn_reference_f64(&c->p, c->hq, c->hk, c->hv, c->ref), ATTN_OK);
}

static void case_open(struct case_data *c, struct shape s, uint64_t seed)
{
    case_open_ref(c, s, seed, false);
}

static void case_close(struct case_data *c)
{
    cudaFree(c->q);
    cudaFree(c->k);
    cudaFree(c->v);
    cudaFree(c->o);
    free(c->hq);
    free(c->hk);
    free(c->hv);
    free(c->hout);
    free(c->ref);
}

static uint64_t fresh_seed(void) { return (uint64_t)time(NULL) * 2654435761u + (uint64_t)rand(); }

/* Runs the variant once on poisoned output (directly or through a captured
 * graph) and compares with the reference; the message says which case failed. */
static void check_variant_on(const struct attn_variant *v, struct case_data *c, bool graph)
{
    char label[160 + ATTN_VARLEN_MAX];
    snprintf(label, sizeof label, "%s B=%d H=%d KV=%d Q=%d S=%d D=%d %s %s%s%s%s", v->name, c->p.batch,
             c->p.heads, attn_kv_heads(&c->p), attn_q_len(&c->p), c->p.seq_len, c->p.head_dim,
             c->p.causal ? "causal" : "full",
             attn_dtype_name(c->p.dtype), c->p.varlen[0] ? " varlen=" : "", c->p.varlen,
             graph ? " (graph)" : "");
    const char *why = v->supports(&c->p, &dev);
    if (why) {
        fprintf(stderr, "  %s: not supported (%s)\n", label, why);
        return;
    }
    void *ws = NULL, *ctx = NULL;
    size_t ws_bytes = v->workspace_bytes(&c->p);
    if (ws_bytes) ck_assert_msg(cudaMalloc(&ws, ws_bytes) == cudaSuccess, "%s: workspace", label);
    attn_impl_clear();
    ck_assert_msg(v->setup(&ctx, &c->p, ws) == ATTN_OK, "%s: setup: %s", label, attn_error_message());
    char impl[256]; /* what the variant chose, for the failure message */
    snprintf(impl, sizeof impl, "%s", attn_impl());
    ck_assert_int_eq(gpu_poison(c->o, c->bytes, stream), ATTN_OK);
    if (graph) {
        cudaGraph_t g;
        cudaGraphExec_t exec;
        ck_assert_int_eq(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
        int rc = v->run(ctx, c->q, c->k, c->v, c->o, stream);
        ck_assert_int_eq(cudaStreamEndCapture(stream, &g), cudaSuccess);
        ck_assert_msg(rc == ATTN_OK, "%s: run under capture: %s", label, attn_error_message());
        ck_assert_int_eq(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
        ck_assert_int_eq(cudaGraphLaunch(exec, stream), cudaSuccess);
        ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(g);
    } else {
        ck_assert_msg(v->run(ctx, c->q, c->k, c->v, c->o, stream) == ATTN_OK, "%s: run: %s",
                      label, attn_error_message());
        ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
        ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
    }
    ck_assert_int_eq(cudaMemcpy(c->hout, c->o, c->bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    struct attn_comparison cmp = attn_compare(c->ref, c->hout, c->n, c->p.dtype,
                                              attn_tolerance_for(c->p.dtype));
    v->teardown(ctx);
    cudaFree(ws);
    ck_assert_msg(cmp.ok, "%s: %zu bad, %zu non-finite, max_abs_err %g, rel_err %g, first at %zu%s%s",
                  label, cmp.bad, cmp.nonfinite, cmp.max_abs_err, cmp.rel_err, cmp.first_bad,
                  impl[0] ? "; ran " : "", impl);
}

/* ------------------------------------------------------------------ tests */

/* _i runs over the odd shapes; bf16 then fp16. */
START_TEST(test_variants_match_reference)
{
    struct case_data c;
    case_open(&c, odd_shape(_i % N_ODD, _i < N_ODD ? ATTN_BF16 : ATTN_FP16), fresh_seed());
    for (size_t i = 0; i < registry_count(); i++) check_variant_on(registry_get(i), &c, false);
    case_close(&c);
}
END_TEST

/* Rows longer than the odd set's: each softmax and mask code path (a warp, a
 * block of 256, a block of 1024 per row; ragged and vectorized rows). */
static const struct shape long_rows[] = {
    {.batch = 1, .heads = 2, .seq = 2500, .dim = 64, .causal = true},
    {.batch = 1, .heads = 1, .seq = 4096, .dim = 128, .causal = false},
    {.batch = 1, .heads = 1, .seq = 20000, .dim = 64, .causal = true},
    {.batch = 1, .heads = 1, .seq = 33000, .dim = 64, .causal = false},
};
#define N_LONG ((int)(sizeof long_rows / sizeof long_rows[0]))

START_TEST(test_variants_long_rows_match_reference)
{
    struct case_data c;
    case_open_ref(&c, long_rows[_i], fresh_seed(), true);
    for (size_t i = 0; i < registry_count(); i++) check_variant_on(registry_get(i), &c, false);
    case_close(&c);
}
END_TEST

START_TEST(test_variants_in_graph_match_reference)
{
    struct case_data c;
    case_open(&c, odd_shape(_i, ATTN_BF16), fresh_seed());
    for (size_t i = 0; i < registry_count(); i++) check_variant_on(registry_get(i), &c, true);
    case_close(&c);
}
END_TEST

/* The shapes models use: grouped K/V heads (kv_heads = 1, a proper divisor,
 * = heads; two longer ones that reach flash_hopper's persistent and
 * head-spanning configurations), head_dim 96, 192 and 256, ragged batches
 * (lengths 1, 17 and 1000 with and without grouped heads; a uniform draw;
 * one at D = 256), decodes (q_len 1, 4 and 8 against 17 to 4097 keys,
 * causal bottom-right) and
 * batch·heads past 65,535 (the last, against the float32 GPU reference). A
 * variant that does not run a shape says so (supports) and is skipped; none
 * may be wrong. */
static const struct shape modern_shapes[] = {
    {.batch = 2, .heads = 6, .kv_heads = 1, .seq = 77, .dim = 64, .causal = true},
    {.batch = 1, .heads = 6, .kv_heads = 2, .seq = 130, .dim = 128, .causal = false},
    {.batch = 2, .heads = 4, .kv_heads = 4, .seq = 33, .dim = 64, .causal = true},
    {.batch = 1, .heads = 2, .seq = 65, .dim = 96, .causal = true},
    {.batch = 1, .heads = 2, .seq = 65, .dim = 192, .causal = false},
    {.batch = 1, .heads = 2, .seq = 100, .dim = 256, .causal = true},
    {.batch = 3, .heads = 4, .kv_heads = 2, .seq = 1000, .dim = 64, .causal = true, .varlen = "lens:1+17+1000"},
    {.batch = 3, .heads = 2, .seq = 1000, .dim = 128, .causal = false, .varlen = "lens:1000+1+17"},
    {.batch = 5, .heads = 6, .kv_heads = 3, .seq = 300, .dim = 96, .causal = true, .varlen = "uniform:0.25"},
    {.batch = 3, .heads = 2, .kv_heads = 1, .seq = 64, .dim = 256, .causal = false, .varlen = "lens:5+1+64"},
    {.batch = 2, .heads = 6, .kv_heads = 3, .seq = 1000, .dim = 64, .causal = false},
    {.batch = 1, .heads = 4, .kv_heads = 1, .seq = 1500, .dim = 128, .causal = true},
    /* decodes: q_len queries, the sequence's last, against its seq keys */
    {.batch = 3, .heads = 8, .kv_heads = 2, .seq = 1000, .q_len = 1, .dim = 128, .causal = true},
    {.batch = 2, .heads = 4, .seq = 17, .q_len = 8, .dim = 64, .causal = true},
    {.batch = 1, .heads = 6, .kv_heads = 3, .seq = 4097, .q_len = 4, .dim = 64, .causal = false,
     .dtype = ATTN_FP16},
    {.batch = 70000, .heads = 1, .seq = 16, .dim = 64, .causal = true},
};
#define N_MODERN ((int)(sizeof modern_shapes / sizeof modern_shapes[0]))
#define N_MODERN_CPU_REF (N_MODERN - 1) /* the last is too large for the float64 CPU reference */

START_TEST(test_variants_on_modern_shapes_match_reference)
{
    struct case_data c;
    case_open_ref(&c, modern_shapes[_i], fresh_seed(), _i >= N_MODERN_CPU_REF);
    for (size_t i = 0; i < registry_count(); i++) check_variant_on(registry_get(i), &c, false);
    case_close(&c);
}
END_TEST

/* The ragged shapes again, each variant run from a captured graph (the
 * eager variants' loop over sequences is captured whole). */
START_TEST(test_variants_in_graph_on_ragged_shapes)
{
    struct case_data c;
    if (!modern_shapes[_i].varlen) return;
    case_open(&c, modern_shapes[_i], fresh_seed());
    for (size_t i = 0; i < registry_count(); i++) check_variant_on(registry_get(i), &c, true);
    case_close(&c);
}
END_TEST

/* The float32 GPU reference against the float64 CPU one on the odd shapes,
 * then on the grouped-head and wide-head shapes (_i past N_ODD). */
START_TEST(test_gpu_reference_matches_cpu)
{
    struct case_data c;
    case_open(&c, _i < N_ODD ? odd_shape(_i, ATTN_BF16) : modern_shapes[_i - N_ODD], fresh_seed());
    double *gpu = malloc(c.n * sizeof *gpu);
    ck_assert(gpu);
    gpu_reference_host(&c, gpu);
    double worst = 0;
    for (size_t i = 0; i < c.n; i++) worst = fmax(worst, fabs(gpu[i] - c.ref[i]));
    ck_assert_msg(worst < 1e-4, "S=%d D=%d: float32 reference off by %g", c.p.seq_len,
                  c.p.head_dim, worst);
    free(gpu);
    case_close(&c);
}
END_TEST

/* The float32 GPU backward against the float64 CPU one: S = 1, dense,
 * causal, grouped (an odd group too), ragged with and without grouped
 * heads, fp16, head_dims off the kernels' 16- and 64-column steps and rows
 * over several 64-row tiles; uniform inputs on even _i, N(0, 1.5²) (a
 * sharper softmax) on odd. */
static const struct shape bwd_shapes[] = {
    {.batch = 1, .heads = 1, .seq = 1, .dim = 64},
    {.batch = 2, .heads = 3, .seq = 17, .dim = 64},
    {.batch = 1, .heads = 2, .seq = 130, .dim = 128, .causal = true},
    {.batch = 2, .heads = 6, .kv_heads = 2, .seq = 77, .dim = 96, .causal = true},
    {.batch = 1, .heads = 3, .kv_heads = 1, .seq = 200, .dim = 40},
    {.batch = 3, .heads = 4, .kv_heads = 2, .seq = 200, .dim = 64, .causal = true, .varlen = "lens:1+70+200"},
    {.batch = 3, .heads = 2, .seq = 130, .dim = 128, .varlen = "lens:130+1+17"},
    {.batch = 1, .heads = 2, .seq = 100, .dim = 256, .causal = true, .dtype = ATTN_FP16},
    {.batch = 2, .heads = 4, .kv_heads = 1, .seq = 65, .dim = 72, .causal = true, .dtype = ATTN_FP16,
     .varlen = "lens:65+3"},
};
#define N_BWD_SHAPES ((int)(sizeof bwd_shapes / sizeof bwd_shapes[0]))

/* Every element of the float32 gradient finite and within 1e-4 of the
 * float64 one, relative to the tensor's largest (or 1 when smaller). */
static void check_gradient(const char *label, const char *name, const float *gpu, const double *ref,
                           size_t n)
{
    double worst = 0, largest = 0;
    for (size_t e = 0; e < n; e++) {
        ck_assert_msg(isfinite(gpu[e]), "%s: %s[%zu] is %g", label, name, e, gpu[e]);
        worst = fmax(worst, fabs(gpu[e] - ref[e]));
        largest = fmax(largest, fabs(ref[e]));
    }
    ck_assert_msg(worst <= 1e-4 * fmax(1, largest), "%s: float32 %s off by %g (largest %g)", label,
                  name, worst, largest);
}

START_TEST(test_gpu_reference_bwd_matches_cpu)
{
    const struct shape s = bwd_shapes[_i];
    const struct attn_problem p = problem_of(s);
    const size_t nq = attn_tensor_elems(&p), nkv = attn_kv_tensor_elems(&p);
    const size_t es = attn_dtype_bytes(s.dtype), nall = 2 * nq + 2 * nkv;
    const size_t at_k = nq, at_v = nq + nkv, at_do = nq + 2 * nkv; /* q, k, v, dout in one buffer */
    char label[96 + ATTN_VARLEN_MAX];
    snprintf(label, sizeof label, "B=%d H=%d KV=%d S=%d D=%d %s %s%s%s", p.batch, p.heads,
             attn_kv_heads(&p), p.seq_len, p.head_dim, p.causal ? "causal" : "full",
             attn_dtype_name(p.dtype), p.varlen[0] ? " varlen=" : "", p.varlen);
    char *in;
    float *grads; /* dq, dk, dv as the inputs q, k, v */
    ck_assert_int_eq(cudaMalloc((void **)&in, nall * es), cudaSuccess);
    ck_assert_int_eq(cudaMalloc((void **)&grads, at_do * sizeof *grads), cudaSuccess);
    const uint64_t seed = fresh_seed();
    if (_i % 2) ck_assert_int_eq(gpu_fill_normal(in, nall, s.dtype, seed, 1.5f, stream), ATTN_OK);
    else ck_assert_int_eq(gpu_fill_random(in, nall, s.dtype, seed, stream), ATTN_OK);
    ck_assert_int_eq(gpu_poison(grads, at_do * sizeof *grads, stream), ATTN_OK); /* NaN until written */
    ck_assert_msg(gpu_reference_bwd_f32(&p, in, in + at_k * es, in + at_v * es, in + at_do * es,
                                        grads, grads + at_k, grads + at_v, stream) == ATTN_OK,
                  "%s: %s", label, attn_error_message());
    uint16_t *hin = malloc(nall * sizeof *hin);
    float *hgrads = malloc(at_do * sizeof *hgrads);
    double *ref = malloc(at_do * sizeof *ref);
    ck_assert(hin && hgrads && ref);
    ck_assert_int_eq(cudaMemcpy(hin, in, nall * es, cudaMemcpyDeviceToHost), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(hgrads, grads, at_do * sizeof *grads, cudaMemcpyDeviceToHost), cudaSuccess);
    ck_assert_int_eq(attn_reference_bwd_f64(&p, hin, hin + at_k, hin + at_v, hin + at_do, ref,
                                            ref + at_k, ref + at_v),
                     ATTN_OK);
    check_gradient(label, "dQ", hgrads, ref, nq);
    check_gradient(label, "dK", hgrads + at_k, ref + at_k, nkv);
    check_gradient(label, "dV", hgrads + at_v, ref + at_v, nkv);
    free(hin);
    free(hgrads);
    free(ref);
    cudaFree(in);
    cudaFree(grads);
}
END_TEST

START_TEST(test_poison_is_nan)
{
    void *d;
    uint16_t h[64];
    ck_assert_int_eq(cudaMalloc(&d, sizeof h), cudaSuccess);
    ck_assert_int_eq(gpu_poison(d, sizeof h, stream), ATTN_OK);
    ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 64; i++) {
        ck_assert(isnan(attn_half_to_float(h[i], ATTN_BF16)));
        ck_assert(isnan(attn_half_to_float(h[i], ATTN_FP16)));
    }
    cudaFree(d);
}
END_TEST

/* The card's ceilings: each positive, and the read-only stream between half
 * and four times the copy's rate (the copy counts its bytes twice, read and
 * written: reading alone moves at least as many bytes a second as the copy
 * reads). */
START_TEST(test_peaks_are_plausible)
{
    struct peaks pk = {0};
    ck_assert_int_eq(peak_measure(&pk, stream), ATTN_OK);
    ck_assert(pk.gemm_tflops > 0 && pk.copy_gbps > 0 && pk.read_gbps > 0);
    ck_assert_msg(pk.read_gbps >= 0.5 * pk.copy_gbps && pk.read_gbps <= 4 * pk.copy_gbps,
                  "read %.0f GB/s against a copy's %.0f", pk.read_gbps, pk.copy_gbps);
}
END_TEST

START_TEST(test_random_inputs_are_fresh_and_nonzero)
{
    const size_t n = 4096;
    void *d;
    uint16_t a[4096], b[4096];
    ck_assert_int_eq(cudaMalloc(&d, n * 2), cudaSuccess);
    ck_assert_int_eq(gpu_fill_random(d, n, ATTN_BF16, 1, stream), ATTN_OK);
    ck_assert_int_eq(cudaMemcpy(a, d, n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    ck_assert_int_eq(gpu_fill_random(d, n, ATTN_BF16, 2, stream), ATTN_OK);
    ck_assert_int_eq(cudaMemcpy(b, d, n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    size_t zeros = 0, same = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        float x = attn_half_to_float(a[i], ATTN_BF16);
        ck_assert(x >= -1.0f && x <= 1.0f);
        zeros += x == 0.0f;
        same += a[i] == b[i];
        sum += x;
    }
    ck_assert_uint_lt(zeros, 16);
    ck_assert_uint_lt(same, n / 8);
    ck_assert_double_lt(fabs(sum / n), 0.05);
    cudaFree(d);
}
END_TEST

/* One call of the variant under the tracer, at the seed's shape scaled down. */
/* One traced call of v at c's point as `pass` times it (fwd: run; bwd: the
 * backward alone after an untimed saving forward; fwd_bwd: both), after
 * one untraced call (handles, modules), into cap. */
static void traced_pass_call(const struct attn_variant *v, const struct case_data *c, enum attn_pass pass,
                             struct trace_capture *cap)
{
    struct attn_problem p = c->p;
    p.pass = pass;
    const bool grads = pass != ATTN_PASS_FWD;
    void *ws = NULL, *ctx = NULL, *dout = NULL, *dq = NULL, *dk = NULL, *dv = NULL;
    ck_assert_int_eq(cudaMalloc(&ws, v->workspace_bytes(&p)), cudaSuccess);
    if (grads) {
        ck_assert_int_eq(cudaMalloc(&dout, c->bytes), cudaSuccess);
        ck_assert_int_eq(cudaMalloc(&dq, c->bytes), cudaSuccess);
        ck_assert_int_eq(cudaMalloc(&dk, c->kv_bytes), cudaSuccess);
        ck_assert_int_eq(cudaMalloc(&dv, c->kv_bytes), cudaSuccess);
        ck_assert_int_eq(gpu_fill_random(dout, c->n, p.dtype, fresh_seed(), stream), ATTN_OK);
    }
    ck_assert_int_eq(v->setup(&ctx, &p, ws), ATTN_OK);
    const struct timed_call call = {.variant = v, .ctx = ctx, .q = c->q, .k = c->k, .v = c->v, .o = c->o,
                                    .stream = stream, .pass = pass, .dout = dout, .dq = dq, .dk = dk, .dv = dv};
    if (grads) ck_assert_int_eq(v->backward->forward(ctx, c->q, c->k, c->v, c->o, stream), ATTN_OK);
    ck_assert_int_eq(timed_call_enqueue(&call), ATTN_OK);
    ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
    ck_assert_msg(trace_begin() == ATTN_OK, "trace_begin: %s", attn_error_message());
    ck_assert_int_eq(timed_call_enqueue(&call), ATTN_OK);
    ck_assert_msg(trace_end(cap) == ATTN_OK, "trace_end: %s", attn_error_message());
    v->teardown(ctx);
    void *bufs[] = {ws, dout, dq, dk, dv};
    for (int i = 0; i < 5; i++) cudaFree(bufs[i]);
}

static void traced_call(const struct attn_variant *v, struct case_data *c, struct trace_capture *cap)
{
    traced_pass_call(v, c, ATTN_PASS_FWD, cap);
}

static size_t d2d_copies(const struct trace_capture *cap)
{
    size_t n = 0;
    for (size_t i = 0; i < cap->nops; i++)
        n += cap->ops[i].kind == TRACE_MEMCPY && !strcmp(cap->ops[i].copy_kind, "DtoD");
    return n;
}

/* The seed's finding as an assertion: naive launches exactly one more
 * device-to-device copy per call than inplace, and the same kernels. */
START_TEST(test_naive_has_one_more_d2d_copy_than_inplace)
{
    if (!trace_available()) {
        fprintf(stderr, "  built without CUPTI: nothing to trace\n");
        return;
    }
    struct shape s = {.batch = 2, .heads = 4, .seq = 512, .dim = 64, .causal = _i == 1};
    struct case_data c;
    case_open(&c, s, fresh_seed());
    struct trace_capture naive = {0}, inplace = {0};
    traced_call(registry_find("naive"), &c, &naive);
    traced_call(registry_find("inplace"), &c, &inplace);
    struct trace_summary sn, si;
    trace_summarize(&naive, 1, &sn);
    trace_summarize(&inplace, 1, &si);
    char ln[512], li[512];
    trace_ops_line(&naive, 0, ln, sizeof ln);
    trace_ops_line(&inplace, 0, li, sizeof li);
    fprintf(stderr, "  naive:   %s\n  inplace: %s\n", ln, li);
    ck_assert_double_eq(sn.memcpy_per_call, si.memcpy_per_call + 1);
    ck_assert_uint_eq(d2d_copies(&naive), d2d_copies(&inplace) + 1);
    /* the same kernels, in the same order */
    ck_assert_double_eq(sn.kernels_per_call, si.kernels_per_call);
    size_t j = 0;
    for (size_t i = 0; i < naive.nops; i++) {
        if (naive.ops[i].kind != TRACE_KERNEL) continue;
        while (j < inplace.nops && inplace.ops[j].kind != TRACE_KERNEL) j++;
        ck_assert_uint_lt(j, inplace.nops);
        char a[64], b[64];
        ck_assert_str_eq(trace_op_label(&naive.ops[i], a, sizeof a), trace_op_label(&inplace.ops[j], b, sizeof b));
        j++;
    }
    trace_capture_free(&naive);
    trace_capture_free(&inplace);
    case_close(&c);
}
END_TEST

/* The seed's study for training, at the seed's point (B=8 H=16 S=1024 D=64
 * causal): autograd's backward is the same for the in-place mask, so naive
 * and inplace run the same backward ops (_i 0: bwd), and a training step's
 * call keeps the forward's difference, one more device-to-device copy in
 * naive (_i 1: fwd_bwd). */
START_TEST(test_naive_and_inplace_backward_ops)
{
    if (!trace_available()) {
        fprintf(stderr, "  built without CUPTI: nothing to trace\n");
        return;
    }
    const enum attn_pass pass = _i == 0 ? ATTN_PASS_BWD : ATTN_PASS_FWD_BWD;
    struct shape s = {.batch = 8, .heads = 16, .seq = 1024, .dim = 64, .causal = true};
    struct case_data c;
    case_open_ref(&c, s, fresh_seed(), true);
    struct trace_capture naive = {0}, inplace = {0};
    traced_pass_call(registry_find("naive"), &c, pass, &naive);
    traced_pass_call(registry_find("inplace"), &c, pass, &inplace);
    struct trace_summary sn, si;
    trace_summarize(&naive, 1, &sn);
    trace_summarize(&inplace, 1, &si);
    char ln[1024], li[1024];
    trace_ops_line(&naive, 0, ln, sizeof ln);
    trace_ops_line(&inplace, 0, li, sizeof li);
    fprintf(stderr, "  %s naive:   %s\n  %s inplace: %s\n", attn_pass_name(pass), ln, attn_pass_name(pass), li);
    ck_assert_double_eq(sn.kernels_per_call, si.kernels_per_call);
    ck_assert_uint_eq(d2d_copies(&naive), d2d_copies(&inplace) + (pass == ATTN_PASS_FWD_BWD ? 1 : 0));
    trace_capture_free(&naive);
    trace_capture_free(&inplace);
    case_close(&c);
}
END_TEST

/* Fused variants keep their promise: at most 2 kernels per call, no copies. */
START_TEST(test_fused_variants_launch_at_most_two_kernels)
{
    if (!trace_available()) return;
    /* a prefill, and a decode whose cache flash_decode splits (its combine kernel the second) */
    const struct shape shapes[] = {{.batch = 2, .heads = 4, .seq = 1000, .dim = 128, .causal = true},
                                   {.batch = 1, .heads = 8, .kv_heads = 1, .seq = 4097, .dim = 128, .causal = true,
                                    .q_len = 2}};
    int fused = 0;
    for (int at = 0; at < 2; at++) {
        struct case_data c;
        case_open(&c, shapes[at], fresh_seed());
        for (size_t i = 0; i < registry_count(); i++) {
            const struct attn_variant *v = registry_get(i);
            if (!v->fused || v->supports(&c.p, &dev)) continue;
            struct trace_capture cap = {0};
            traced_call(v, &c, &cap);
            struct trace_summary sum;
            trace_summarize(&cap, 1, &sum);
            ck_assert_msg(sum.kernels_per_call <= 2 && sum.memcpy_per_call == 0,
                          "%s: %g kernels, %g copies per call", v->name, sum.kernels_per_call,
                          sum.memcpy_per_call);
            trace_capture_free(&cap);
            fused++;
        }
        case_close(&c);
    }
    fprintf(stderr, "  %d fused variant(s) traced\n", fused);
}
END_TEST

#ifdef ATTN_HAVE_CUDNN
/* cudnn_sdpa turns cuDNN's refusals into skips: make sure they are not all it
 * does. On sm_80+ it must run plain points (both masks, both dtypes, both head
 * dims) and say which graph and engine it chose. */
START_TEST(test_cudnn_sdpa_runs_plain_points)
{
    const struct attn_variant *v = registry_find("cudnn_sdpa");
    ck_assert_ptr_nonnull(v);
    if (dev.cc_major < 8) {
        fprintf(stderr, "  sm_%d%d: cuDNN's fused attention needs sm_80\n", dev.cc_major, dev.cc_minor);
        return;
    }
    struct shape s = {.batch = 2, .heads = 4, .seq = 1024, .dim = _i % 2 ? 128 : 64,
                      .causal = _i / 2 % 2, .dtype = _i / 4 ? ATTN_FP16 : ATTN_BF16};
    struct case_data c;
    case_open_ref(&c, s, fresh_seed(), true);
    const char *why = v->supports(&c.p, &dev);
    ck_assert_msg(why == NULL, "cudnn_sdpa refuses D=%d %s %s: %s", s.dim, s.causal ? "causal" : "full",
                  attn_dtype_name(s.dtype), why ? why : "");
    void *ws = NULL, *ctx = NULL;
    size_t ws_bytes = v->workspace_bytes(&c.p);
    if (ws_bytes) ck_assert_int_eq(cudaMalloc(&ws, ws_bytes), cudaSuccess);
    attn_impl_clear();
    ck_assert_msg(v->setup(&ctx, &c.p, ws) == ATTN_OK, "setup: %s", attn_error_message());
    fprintf(stderr, "  cudnn_sdpa D=%d %s %s: %s (workspace %zu bytes)\n", s.dim,
            s.causal ? "causal" : "full", attn_dtype_name(s.dtype), attn_impl(), ws_bytes);
    ck_assert_msg(strstr(attn_impl(), "engine=") != NULL, "cudnn_sdpa did not say what it ran");
    v->teardown(ctx);
    cudaFree(ws);
    check_variant_on(v, &c, false);
    case_close(&c);
}
END_TEST
#define N_CUDNN_TESTS 8
#else
#define N_CUDNN_TESTS 0
#endif

/* Counts the data rows of a results CSV whose status column equals status. */
static int count_rows(const char *dir, const char *status)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i==\"status\") c=i; next} $c==\"%s\"' %s/*[0-9]Z.csv | wc -l",
             status, dir);
    FILE *p = popen(cmd, "r");
    ck_assert(p);
    int n = -1;
    ck_assert_int_eq(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

/* The one run CSV in dir into path. */
static void run_csv_path(const char *dir, char *path, size_t len)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls %s/*[0-9]Z.csv", dir);
    FILE *p = popen(cmd, "r");
    ck_assert(p);
    ck_assert_ptr_nonnull(fgets(path, (int)len, p));
    pclose(p);
    path[strcspn(path, "\n")] = '\0';
}

/* Every line of the run's CSV is whole: it ends in a newline and splits into
 * the header's number of fields. Returns the number of data rows. */
static int whole_rows(const char *dir)
{
    char path[512];
    run_csv_path(dir, path, sizeof path);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[CSV_LINE_MAX];
    char *fields[64];
    int rows = -1, rc;
    while ((rc = csv_read_line(f, line, sizeof line)) == 1) {
        ck_assert_int_eq(csv_split(line, fields, 64), results_column_count());
        rows++;
    }
    fclose(f);
    ck_assert_msg(rc == 0, "%s: torn or overlong line after %d rows", path, rows);
    /* and the reader takes it with its samples file (every timed row's count) */
    struct result_set set;
    ck_assert_msg(results_read(path, &set) == ATTN_OK, "%s", attn_error_message());
    for (size_t i = 0; i < set.count; i++)
        if (!strcmp(set.rows[i].status, "ok"))
            ck_assert_uint_eq(set.rows[i].nsample_ms, (size_t)set.rows[i].samples);
    results_free(&set);
    return rows;
}

/* Runs build/attnbench with `args` and --out a fresh temporary directory
 * (written into dir, at least 32 bytes); returns system()'s wait status. */
static int run_attnbench(const char *prefix, const char *args, char *dir)
{
    strcpy(dir, "/tmp/attnbench-gpu-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s./build/attnbench --quiet %s --out %s", prefix, args, dir);
    return system(cmd);
}

static void remove_dir(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* The variants that run a prefill of shape s (flash_decode, a decode
 * kernel, skips it). */
static int prefill_variants(struct shape s)
{
    const struct attn_problem p = problem_of(s);
    int n = 0;
    for (size_t i = 0; i < registry_count(); i++) n += registry_get(i)->supports(&p, &dev) == NULL;
    return n;
}

START_TEST(test_runner_writes_ok_rows)
{
    char dir[32];
    const int runs = prefill_variants((struct shape){.batch = 2, .heads = 3, .seq = 100, .dim = 64});
    ck_assert_int_eq(runs, prefill_variants((struct shape){.batch = 2, .heads = 3, .seq = 256, .dim = 64, .causal = true}));
    ck_assert_int_eq(run_attnbench("", "--point 'batch=2 heads=3 seq=100,256 dim=64 causal=0,1' "
                                       "--mode cold,hot,graph --budget-ms 200", dir), 0);
    ck_assert_int_eq(count_rows(dir, "ok"), 4 * runs * 3);
    ck_assert_int_eq(count_rows(dir, "skipped"), 4 * ((int)registry_count() - runs) * 3);
    ck_assert_int_eq(whole_rows(dir), 4 * (int)registry_count() * 3);
    remove_dir(dir);
}
END_TEST

START_TEST(test_runner_reports_oom_and_goes_on)
{
    char dir[32];
    /* naive's two S² buffers at S=65536, B·H=32: 2 × 275 GB — far beyond the card. */
    ck_assert_int_eq(run_attnbench("", "--point 'batch=1 heads=32 seq=65536 dim=64' "
                                       "--point 'batch=1 heads=2 seq=64 dim=64' --variants naive "
                                       "--budget-ms 100", dir), 0);
    ck_assert_int_eq(count_rows(dir, "oom"), 1);
    ck_assert_int_eq(count_rows(dir, "ok"), 1);
    remove_dir(dir);
}
END_TEST

START_TEST(test_runner_interrupted_keeps_whole_rows)
{
    char dir[32];
    /* SIGINT a few seconds into a sweep that would take far longer */
    int st = run_attnbench("timeout --preserve-status -s INT 4 ",
                           "--grid quick --mode cold,hot,graph --budget-ms 1000", dir);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 130);
    int rows = whole_rows(dir);
    ck_assert_int_gt(rows, 0);
    ck_assert_int_lt(rows, 72);
    ck_assert_int_eq(count_rows(dir, "ok"), rows);
    remove_dir(dir);
}
END_TEST

/* One side (base or cand) of the A/B pair build/ab wrote under dir: its
 * run's path and rows. */
static void read_ab_side(const char *dir, const char *side, char *path, size_t len, struct result_set *set)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s/2*/2*Z-%s.csv", dir, side);
    FILE *p = popen(cmd, "r");
    ck_assert(p);
    ck_assert_ptr_nonnull(fgets(path, (int)len, p));
    pclose(p);
    path[strcspn(path, "\n")] = '\0';
    ck_assert_msg(results_read(path, set) == ATTN_OK, "%s", attn_error_message());
}

/* build/ab with this build on both sides: every row on both sides, one A/B
 * id on every row, and the gate passes an A/A pair of a tiny point. */
START_TEST(test_ab_runs_both_sides)
{
    char dir[32], cmd[512], path[512];
    strcpy(dir, "/tmp/attnbench-ab-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "./build/ab --quiet --base ./build/attnbench --cand ./build/attnbench "
                              "--point 'batch=2 heads=3 seq=256 dim=64 causal=1' --mode cold,graph "
                              "--warm-ms 0 --budget-ms 200 --out %s > %s/ab.out", dir, dir);
    int st = system(cmd);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    const char *sides[] = {"base", "cand"};
    for (int k = 0; k < 2; k++) {
        struct result_set set;
        read_ab_side(dir, sides[k], path, sizeof path, &set);
        ck_assert_uint_eq(set.count, 2 * registry_count());
        int ok = 0;
        for (size_t i = 0; i < set.count; i++) {
            const bool skipped = !strcmp(set.rows[i].status, "skipped");
            ok += !skipped;
            if (skipped) continue; /* a decode kernel's, checked below */
            ck_assert_str_eq(set.rows[i].status, "ok");
            ck_assert_msg(set.rows[i].ab_run[0] && strstr(path, set.rows[i].ab_run), "ab_run '%s'",
                          set.rows[i].ab_run);
            ck_assert_uint_ge(set.rows[i].nsample_ms, 10);
        }
        ck_assert_int_eq(ok, 2 * prefill_variants((struct shape){.batch = 2, .heads = 3, .seq = 256, .dim = 64, .causal = true}));
        results_free(&set);
    }
    remove_dir(dir);
}
END_TEST

/* A worker whose kernel never ends does not hang build/ab: test_hang_late
 * passes validation and then spins, so the side that first takes a block of
 * it misses its deadline; that side's worker is killed, the row is an error
 * on both sides (the pair stays matched), fresh workers measure the rows
 * after it, and the pair is published whole. build/ab-test is build/ab with
 * the test variants in its table. */
START_TEST(test_ab_hung_worker_costs_its_row)
{
    char dir[32], cmd[1024], path[512];
    strcpy(dir, "/tmp/attnbench-abhang-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "./build/ab-test --quiet --base ./build/attnbench-test --cand ./build/attnbench-test "
                              "--variants naive,test_hang_late,inplace --point 'batch=1 heads=2 seq=128 dim=64' "
                              "--mode cold --warm-ms 0 --budget-ms 200 --row-timeout 5 --out %s > %s/ab.out 2> %s/ab.err",
             dir, dir, dir);
    int st = system(cmd);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 1); /* a candidate row failed; the run ended whole */
    snprintf(cmd, sizeof cmd, "ls %s/2*/gate.txt >/dev/null && grep -q 'timed out after 5 s' %s/ab.err", dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    const char *sides[] = {"base", "cand"};
    for (int k = 0; k < 2; k++) {
        struct result_set set;
        read_ab_side(dir, sides[k], path, sizeof path, &set);
        ck_assert_uint_eq(set.count, 3);
        for (size_t i = 0; i < set.count; i++) {
            const struct result_rec *r = &set.rows[i];
            if (!strcmp(r->key.variant, "test_hang_late")) {
                ck_assert_str_eq(r->status, "error");
                ck_assert_msg(strstr(r->reason, "timed out after 5 s"), "%s: %s", sides[k], r->reason);
            } else {
                ck_assert_msg(!strcmp(r->status, "ok"), "%s %s: %s %s", sides[k], r->key.variant, r->status,
                              r->reason);
            }
        }
        results_free(&set);
    }
    remove_dir(dir);
}
END_TEST

/* ------------------------------------------------- watchdog and resume */

/* A kernel that never ends costs its own rows: test_hang hangs in
 * validation (both its rows), test_hang_late in each mode's timing (one row
 * each time); the rows after them are measured in fresh processes. */
START_TEST(test_watchdog_hung_kernels_cost_their_rows)
{
    char dir[32], cmd[1024], path[512];
    strcpy(dir, "/tmp/attnbench-hang-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "./build/attnbench-test --quiet --variants naive,test_hang,test_hang_late,inplace "
                              "--point 'batch=1 heads=2 seq=128 dim=64' --mode cold,hot --budget-ms 100 "
                              "--row-timeout 5 --out %s 2> %s/stderr", dir, dir);
    int st = system(cmd);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 1); /* rows failed; the sweep ended */
    ck_assert_int_eq(whole_rows(dir), 8);
    run_csv_path(dir, path, sizeof path);
    struct result_set set;
    ck_assert_msg(results_read(path, &set) == ATTN_OK, "%s", attn_error_message());
    for (size_t i = 0; i < set.count; i++) {
        const struct result_rec *r = &set.rows[i];
        if (!strncmp(r->key.variant, "test_hang", 9)) {
            ck_assert_str_eq(r->status, "error");
            ck_assert_str_eq(r->reason, "timed out after 5 s");
        } else {
            ck_assert_msg(!strcmp(r->status, "ok"), "%s %s: %s %s", r->key.variant, r->key.mode,
                          r->status, r->reason);
        }
    }
    results_free(&set);
    /* three fresh processes: after test_hang, test_hang_late cold, its hot */
    snprintf(cmd, sizeof cmd, "grep -c 'going on in a fresh process' %s/stderr", dir);
    FILE *p = popen(cmd, "r");
    int restarts = -1;
    ck_assert_int_eq(fscanf(p, "%d", &restarts), 1);
    pclose(p);
    ck_assert_int_eq(restarts, 3);
    remove_dir(dir);
}
END_TEST

/* --flush read: cold rows timed after the read flush (gpu_flush_l2 on the
 * device, every sample) are ok, and the run's .env says which flush. */
START_TEST(test_read_flush_rows)
{
    char dir[32], cmd[256];
    ck_assert_int_eq(run_attnbench("", "--variants naive,flash_mma --point 'batch=1 heads=2 seq=128 dim=64' "
                                       "--mode cold --budget-ms 50 --flush read", dir), 0);
    ck_assert_int_eq(count_rows(dir, "ok"), 2);
    snprintf(cmd, sizeof cmd, "grep -qx 'cold_flush=read' %s/*.env", dir);
    ck_assert_int_eq(system(cmd), 0);
    remove_dir(dir);
}
END_TEST

/* A run cut short (rows torn, samples of unwritten rows left behind) is
 * completed by --resume into the run an uninterrupted sweep writes: every
 * row once, the samples whole; a second --resume has nothing to do; a resume
 * with another grid, or another L2 flush, is refused. */
START_TEST(test_resume_completes_a_cut_run)
{
    char dir[32], cmd[4096], path[512], id[64];
    const char *sweep = "--variants naive,inplace --point 'batch=1 heads=2 seq=64,128 dim=64' "
                        "--mode cold,hot --budget-ms 100 --seed 11";
    ck_assert_int_eq(run_attnbench("", sweep, dir), 0);
    ck_assert_int_eq(whole_rows(dir), 8);
    run_csv_path(dir, path, sizeof path);
    const char *base = strrchr(path, '/') + 1;
    snprintf(id, sizeof id, "%.*s", (int)(strlen(base) - 4), base);
    /* keep the header and three rows, then half a line */
    snprintf(cmd, sizeof cmd, "head -n 4 %s > %s.cut && sed -n 5p %s | head -c 40 >> %s.cut && mv %s.cut %s",
             path, path, path, path, path, path);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "./build/attnbench --quiet %s --out %s --resume %s", sweep, dir, id);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(whole_rows(dir), 8);
    ck_assert_int_eq(count_rows(dir, "ok"), 8);
    snprintf(cmd, sizeof cmd, "grep -c '^resumed=' %s/%s.env | grep -qx 1", dir, id);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "./build/attnbench --quiet %s --out %s --resume %s", sweep, dir, id);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(whole_rows(dir), 8);
    snprintf(cmd, sizeof cmd, "./build/attnbench --quiet --variants naive --point 'batch=1 heads=2 seq=64 dim=64' "
                              "--mode cold --out %s --resume %s 2> %s/refused", dir, id, dir);
    int st = system(cmd);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 2);
    snprintf(cmd, sizeof cmd, "grep -q 'is not in this sweep' %s/refused", dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(whole_rows(dir), 8);
    /* its cold rows were timed after the default flush: another is refused */
    snprintf(cmd, sizeof cmd, "grep -qx 'cold_flush=memset' %s/%s.env", dir, id);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "./build/attnbench --quiet %s --flush read --out %s --resume %s 2> %s/refused",
             sweep, dir, id, dir);
    st = system(cmd);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 2);
    snprintf(cmd, sizeof cmd, "grep -q 'timed after a memset flush of the L2, this command.s is read: give --flush memset' "
                              "%s/refused", dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(whole_rows(dir), 8);
    remove_dir(dir);
}
END_TEST

/* ---------------------------------- flash_hopper: every shipped configuration
 * flash_hopper picks one of its compiled configurations per problem, so the
 * shapes above reach only those it picks at them. Here each configuration
 * runs through the variant's test hooks (variants/flash_hopper.h) at odd
 * shapes: B·H = 3; S = 1, 17 (one ragged tile; SPAN: work tiles of three
 * heads), 64 (causal: a block that starts before row 0), 200 and 320
 * (a short last 192-key tile, a ragged or an idle consumer), 1000; causal
 * and not, where the configuration takes causal work (else it must refuse
 * it); persistent grids also capped at 3 CTAs, so that a CTA runs several
 * work tiles. Then grouped K/V heads: 2 batches × 6 query heads over 2 K/V
 * heads at S = 200 (SPAN: work tiles whose heads cross a group's and a
 * batch's end), and 2 × 8 over 2 at S = 300 (an even group: 2-CTA
 * clusters pair the query heads of a group, causal too; an odd one pairs
 * row blocks, and causal work must be refused); then ragged batches of 3
 * sequences with 6 heads over 2 (configurations whose work tiles span
 * heads or pair up in clusters must refuse them). _i: dtype
 * × head_dim × causal; each shape's inputs and float64 reference are made
 * once, and every configuration compiled for that dtype and head_dim runs
 * on them. */
static const int hopper_seqs[] = {1, 17, 64, 200, 320, 1000};
#define N_HOPPER_SEQS ((int)(sizeof hopper_seqs / sizeof hopper_seqs[0]))
static const struct {
    int seq;
    const char *varlen;
} hopper_ragged[] = {{1000, "lens:1+1000+200"}, {449, "lens:449+128+64"}};
#define N_HOPPER_RAGGED ((int)(sizeof hopper_ragged / sizeof hopper_ragged[0]))
#define N_HOPPER_GROUPED 2
#define N_HOPPER_SHAPES (N_HOPPER_SEQS + N_HOPPER_GROUPED + N_HOPPER_RAGGED)
static const int hopper_dims[] = {64, 96, 128, 192, 256};
#define N_HOPPER_DIMS ((int)(sizeof hopper_dims / sizeof hopper_dims[0]))
#define N_HOPPER_TESTS (2 * N_HOPPER_DIMS * 2)

enum hopper_shape_kind { HOPPER_DENSE, HOPPER_GROUPED, HOPPER_RAGGED };

/* Shape j of a configurations test from its base (dtype, head_dim,
 * causal): the dense lengths, then grouped heads, then the ragged batches. */
static struct shape hopper_shape(struct shape s, int j, enum hopper_shape_kind *kind)
{
    if (j < N_HOPPER_SEQS) {
        s.seq = hopper_seqs[j];
        *kind = HOPPER_DENSE;
        return s;
    }
    s.heads = 6;
    s.kv_heads = 2;
    if (j < N_HOPPER_SEQS + N_HOPPER_GROUPED) {
        const bool even = j > N_HOPPER_SEQS;
        s.batch = 2;
        s.heads = even ? 8 : 6;
        s.seq = even ? 300 : 200;
        *kind = HOPPER_GROUPED;
        return s;
    }
    s.batch = 3;
    s.seq = hopper_ragged[j - N_HOPPER_SEQS - N_HOPPER_GROUPED].seq;
    s.varlen = hopper_ragged[j - N_HOPPER_SEQS - N_HOPPER_GROUPED].varlen;
    *kind = HOPPER_RAGGED;
    return s;
}

/* Whether configuration cfg must refuse p: a ragged batch when its work
 * tiles span heads or pair up on 2-CTA clusters; with clusters, causal work
 * unless an even number of query heads shares each K/V head. */
static bool hopper_must_refuse(int cfg, const struct attn_problem *p)
{
    const bool ragged = attn_is_varlen(p);
    if (ragged && (flash_hopper_config_spans_heads(cfg) || flash_hopper_config_clusters(cfg))) return true;
    return flash_hopper_config_clusters(cfg) && p->causal && (p->heads / attn_kv_heads(p)) % 2 != 0;
}

/* Configuration cfg on c (poisoned output first) against the reference. */
static void check_hopper_config_on(int cfg, int max_ctas, struct case_data *c)
{
    const struct attn_variant *v = registry_find("flash_hopper");
    ck_assert_ptr_nonnull(v);
    char label[224];
    snprintf(label, sizeof label, "flash_hopper %s %s B=%d H=%d KV=%d S=%d %s%s%s%s", flash_hopper_config_name(cfg),
             attn_dtype_name(c->p.dtype), c->p.batch, c->p.heads, attn_kv_heads(&c->p), c->p.seq_len,
             c->p.causal ? "causal" : "full", c->p.varlen[0] ? " varlen=" : "", c->p.varlen,
             max_ctas ? " (3 CTAs)" : "");
    void *ctx = NULL;
    ck_assert_msg(flash_hopper_config_setup(cfg, max_ctas, &ctx, &c->p) == ATTN_OK, "%s: setup: %s", label,
                  attn_error_message());
    ck_assert_int_eq(gpu_poison(c->o, c->bytes, stream), ATTN_OK);
    ck_assert_msg(v->run(ctx, c->q, c->k, c->v, c->o, stream) == ATTN_OK, "%s: run: %s", label,
                  attn_error_message());
    ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
    ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
    v->teardown(ctx);
    ck_assert_int_eq(cudaMemcpy(c->hout, c->o, c->bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    struct attn_comparison cmp = attn_compare(c->ref, c->hout, c->n, c->p.dtype, attn_tolerance_for(c->p.dtype));
    ck_assert_msg(cmp.ok, "%s: %zu bad, %zu non-finite, max_abs_err %g, rel_err %g, first at %zu", label, cmp.bad,
                  cmp.nonfinite, cmp.max_abs_err, cmp.rel_err, cmp.first_bad);
}

START_TEST(test_flash_hopper_configs_match_reference)
{
    const struct shape base = {.batch = 1,
                               .heads = 3,
                               .dim = hopper_dims[(_i / 2) % N_HOPPER_DIMS],
                               .causal = _i % 2,
                               .dtype = _i / (2 * N_HOPPER_DIMS) ? ATTN_FP16 : ATTN_BF16};
    /* the configurations of this dtype and head_dim; causal, those that
     * take no causal work must refuse it */
    bool live[FLASH_HOPPER_CONFIGS];
    int n_live = 0;
    for (int cfg = 0; cfg < FLASH_HOPPER_CONFIGS; cfg++) {
        ck_assert_ptr_nonnull(flash_hopper_config_name(cfg));
        live[cfg] = flash_hopper_config_dtype(cfg) == base.dtype && flash_hopper_config_head_dim(cfg) == base.dim;
        if (live[cfg] && base.causal && !flash_hopper_config_causal_ok(cfg)) {
            struct shape s = base;
            s.seq = 1000;
            struct attn_problem p = problem_of(s);
            ck_assert_msg(flash_hopper_config_supports(cfg, &p, &dev) != NULL, "%s takes causal work",
                          flash_hopper_config_name(cfg));
            live[cfg] = false;
        }
        n_live += live[cfg];
    }
    ck_assert_msg(n_live > 0, "flash_hopper: no configuration for %s D=%d%s", attn_dtype_name(base.dtype), base.dim,
                  base.causal ? " causal" : "");
    for (int j = 0; j < N_HOPPER_SHAPES; j++) {
        enum hopper_shape_kind kind;
        const struct shape s = hopper_shape(base, j, &kind);
        const struct attn_problem p = problem_of(s);
        bool take[FLASH_HOPPER_CONFIGS] = {false}, any = false;
        for (int cfg = 0; cfg < FLASH_HOPPER_CONFIGS; cfg++) {
            if (!live[cfg]) continue;
            const char *why = flash_hopper_config_supports(cfg, &p, &dev);
            if (hopper_must_refuse(cfg, &p)) {
                ck_assert_msg(why != NULL, "flash_hopper %s takes %s B=%d H=%d KV=%d%s", flash_hopper_config_name(cfg),
                              p.causal ? "causal" : "full", p.batch, p.heads, attn_kv_heads(&p),
                              kind == HOPPER_RAGGED ? " (a ragged batch)" : "");
                continue;
            }
            if (kind == HOPPER_DENSE && why) { /* this device cannot run it (shared memory, no sm_90a code) */
                fprintf(stderr, "  flash_hopper %s: not supported (%s)\n", flash_hopper_config_name(cfg), why);
                live[cfg] = false;
                continue;
            }
            ck_assert_msg(why == NULL, "flash_hopper %s refuses %s: %s", flash_hopper_config_name(cfg),
                          kind == HOPPER_GROUPED ? "grouped heads" : kind == HOPPER_RAGGED ? "a ragged batch" : "it",
                          why);
            take[cfg] = any = true;
        }
        if (!any) continue;
        struct case_data c;
        case_open(&c, s, fresh_seed());
        for (int cfg = 0; cfg < FLASH_HOPPER_CONFIGS; cfg++) {
            if (!take[cfg]) continue;
            check_hopper_config_on(cfg, 0, &c);
            if (flash_hopper_config_persistent(cfg)) check_hopper_config_on(cfg, 3, &c);
        }
        case_close(&c);
    }
}
END_TEST
/* ------------------------------------------- end of flash_hopper's configurations */
/* ------------------------------------------------- flash_decode */

/* flash_decode's own shapes, each of which it must run (a supports() that
 * refused one would otherwise pass unseen): a cache of one key; q_len 1
 * to 8; 80 rows per K/V head (two row blocks, the second partly padding);
 * a long cache split across many CTAs with a short last chunk; 64 rows (four
 * m16 tiles) in fp16; every split-count path (one split, several); paged
 * caches of 16 to 128 tokens a page, the last page partial; ragged caches
 * (a sequence of one cached token; paged too), their rows past each
 * length attn_cache_tail's. Each in a
 * captured graph too (the combine kernel after the split kernel). The eager
 * variants run the paged ones through their gather and the ragged ones
 * with their key-padding mask; every variant that takes a paged or ragged
 * cache is checked on it. */
static const struct shape decode_shapes[] = {
    {.batch = 2, .heads = 2, .seq = 1, .q_len = 1, .dim = 128, .causal = true},
    {.batch = 3, .heads = 4, .kv_heads = 2, .seq = 17, .q_len = 3, .dim = 64, .causal = true},
    {.batch = 2, .heads = 16, .kv_heads = 1, .seq = 300, .q_len = 5, .dim = 64, .causal = true},
    {.batch = 1, .heads = 8, .kv_heads = 1, .seq = 4097, .q_len = 2, .dim = 128, .causal = true},
    {.batch = 1, .heads = 64, .kv_heads = 8, .seq = 700, .q_len = 8, .dim = 128, .dtype = ATTN_FP16},
    {.batch = 64, .heads = 32, .kv_heads = 8, .seq = 1000, .q_len = 1, .dim = 128, .causal = true},
    {.batch = 1, .heads = 16, .kv_heads = 1, .seq = 20000, .q_len = 7, .dim = 64, .causal = true},
    /* paged caches, each with a partial last page (its spare slots attn_cache_tail's) */
    {.batch = 3, .heads = 8, .kv_heads = 2, .seq = 1000, .q_len = 1, .dim = 128, .causal = true, .page = 16},
    {.batch = 1, .heads = 16, .kv_heads = 1, .seq = 4097, .q_len = 4, .dim = 64, .causal = true, .page = 128},
    {.batch = 2, .heads = 4, .seq = 17, .q_len = 8, .dim = 64, .causal = true, .page = 64},
    {.batch = 64, .heads = 32, .kv_heads = 8, .seq = 300, .q_len = 2, .dim = 128, .dtype = ATTN_FP16, .page = 32},
    /* ragged caches (each sequence its own cached length, one of a single token), contiguous and paged */
    {.batch = 3, .heads = 8, .kv_heads = 2, .seq = 1000, .q_len = 1, .dim = 128, .causal = true,
     .varlen = "lens:1+1000+333"},
    {.batch = 4, .heads = 16, .kv_heads = 1, .seq = 4097, .q_len = 4, .dim = 64, .causal = true,
     .varlen = "lens:4+4097+100+2000", .page = 16},
};
#define N_DECODE ((int)(sizeof decode_shapes / sizeof decode_shapes[0]))

START_TEST(test_flash_decode_matches_reference)
{
    const struct attn_variant *v = registry_find("flash_decode");
    ck_assert(v != NULL);
    struct case_data c;
    case_open_ref(&c, decode_shapes[_i], fresh_seed(), decode_shapes[_i].seq > 5000);
    const char *why = v->supports(&c.p, &dev);
    ck_assert_msg(why == NULL, "flash_decode refuses decode shape %d: %s", _i, why);
    check_variant_on(v, &c, false);
    check_variant_on(v, &c, true);
    if (c.p.page || c.p.varlen[0])
        for (size_t i = 0; i < registry_count(); i++)
            if (registry_get(i) != v) check_variant_on(registry_get(i), &c, false);
    case_close(&c);
}
END_TEST

/* ------------------------------------------------- backward passes */

/* The odd shapes of the backward: S = 1, 17, 1000, 4097; a group of three
 * query heads per K/V head; a ragged batch with a sequence of one token;
 * fp16; head_dim 96 (padded to 128 by flash_hopper). gpu_ref: the float32
 * GPU references (S = 4097 costs the float64 one too long). */
static const struct {
    struct shape s;
    bool gpu_ref;
} grad_shapes[] = {
    {{.batch = 1, .heads = 2, .seq = 1, .dim = 64}, false},
    {{.batch = 2, .heads = 3, .seq = 17, .dim = 64, .causal = true}, false},
    {{.batch = 1, .heads = 2, .seq = 1000, .dim = 128, .causal = true}, false},
    {{.batch = 1, .heads = 1, .seq = 4097, .dim = 64}, true},
    {{.batch = 1, .heads = 6, .kv_heads = 2, .seq = 200, .dim = 64, .causal = true}, false},
    {{.batch = 3, .heads = 4, .kv_heads = 2, .seq = 200, .dim = 64, .causal = true, .varlen = "lens:1+33+200"}, false},
    {{.batch = 2, .heads = 2, .seq = 300, .dim = 64, .dtype = ATTN_FP16}, false},
    {{.batch = 2, .heads = 3, .kv_heads = 1, .seq = 100, .dim = 128, .dtype = ATTN_FP16, .varlen = "lens:1+100"}, false},
    {{.batch = 2, .heads = 3, .kv_heads = 1, .seq = 129, .dim = 96, .causal = true}, false},
};
#define N_GRAD_SHAPES ((int)(sizeof grad_shapes / sizeof grad_shapes[0]))

/* One gradient (or O) of a variant against its reference: n 16-bit values
 * at dev. */
static void check_grad(const char *label, const char *name, const void *dev_out, size_t n, const double *ref,
                       uint16_t *host, enum attn_dtype t, struct attn_tolerance tol)
{
    ck_assert_int_eq(cudaMemcpy(host, dev_out, n * attn_dtype_bytes(t), cudaMemcpyDeviceToHost), cudaSuccess);
    const struct attn_comparison c = attn_compare(ref, host, n, t, tol);
    ck_assert_msg(c.ok, "%s: %s: %zu bad, %zu non-finite, max_abs_err %g, rel_err %g, first at %zu", label, name,
                  c.bad, c.nonfinite, c.max_abs_err, c.rel_err, c.first_bad);
}

/* Every variant with a backward, on each odd shape: its saving forward and
 * its backward on poisoned outputs, O, dQ, dK and dV against the
 * references; then the backward again alone (as the timed calls repeat
 * it), its gradients again. */
START_TEST(test_variants_backward_match_reference)
{
    struct shape s = grad_shapes[_i].s;
    struct attn_problem p = problem_of(s);
    p.pass = ATTN_PASS_BWD;
    p.init_sigma = 1.0f; /* the inputs below are N(0, 1); the labels say so */
    const size_t nq = attn_tensor_elems(&p), nkv = attn_kv_tensor_elems(&p), es = attn_dtype_bytes(p.dtype);
    void *q, *k, *v, *o, *dout, *dq, *dk, *dv;
    ck_assert_int_eq(cudaMalloc(&q, nq * es), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&k, nkv * es), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&v, nkv * es), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&o, nq * es), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&dout, nq * es), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&dq, nq * es), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&dk, nkv * es), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&dv, nkv * es), cudaSuccess);
    const uint64_t seed = fresh_seed();
    ck_assert_int_eq(gpu_fill_normal(q, nq, p.dtype, seed, 1.0f, stream), ATTN_OK);
    ck_assert_int_eq(gpu_fill_normal(k, nkv, p.dtype, seed + 1, 1.0f, stream), ATTN_OK);
    ck_assert_int_eq(gpu_fill_normal(v, nkv, p.dtype, seed + 2, 1.0f, stream), ATTN_OK);
    ck_assert_int_eq(gpu_fill_normal(dout, nq, p.dtype, seed + 3, 1.0f, stream), ATTN_OK);
    double *ref = malloc((2 * nq + 2 * nkv) * sizeof *ref); /* O, dQ, dK, dV */
    uint16_t *host = malloc(4 * (nq > nkv ? nq : nkv) * sizeof *host);
    ck_assert(ref && host);
    double *ref_o = ref, *ref_dq = ref + nq, *ref_dk = ref + 2 * nq, *ref_dv = ref + 2 * nq + nkv;
    if (grad_shapes[_i].gpu_ref) {
        float *f;
        ck_assert_int_eq(cudaMalloc((void **)&f, (2 * nq + 2 * nkv) * sizeof *f), cudaSuccess);
        ck_assert_int_eq(gpu_reference_f32(&p, q, k, v, f, stream), ATTN_OK);
        ck_assert_int_eq(gpu_reference_bwd_f32(&p, q, k, v, dout, f + nq, f + 2 * nq, f + 2 * nq + nkv, stream),
                         ATTN_OK);
        float *hf = malloc((2 * nq + 2 * nkv) * sizeof *hf);
        ck_assert(hf);
        ck_assert_int_eq(cudaMemcpy(hf, f, (2 * nq + 2 * nkv) * sizeof *f, cudaMemcpyDeviceToHost), cudaSuccess);
        for (size_t i = 0; i < 2 * nq + 2 * nkv; i++) ref[i] = hf[i];
        free(hf);
        cudaFree(f);
    } else {
        uint16_t *in = malloc((2 * nq + 2 * nkv) * sizeof *in);
        ck_assert(in);
        ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
        ck_assert_int_eq(cudaMemcpy(in, q, nq * es, cudaMemcpyDeviceToHost), cudaSuccess);
        ck_assert_int_eq(cudaMemcpy(in + nq, k, nkv * es, cudaMemcpyDeviceToHost), cudaSuccess);
        ck_assert_int_eq(cudaMemcpy(in + nq + nkv, v, nkv * es, cudaMemcpyDeviceToHost), cudaSuccess);
        ck_assert_int_eq(cudaMemcpy(in + nq + 2 * nkv, dout, nq * es, cudaMemcpyDeviceToHost), cudaSuccess);
        ck_assert_int_eq(attn_reference_f64(&p, in, in + nq, in + nq + nkv, ref_o), ATTN_OK);
        ck_assert_int_eq(attn_reference_bwd_f64(&p, in, in + nq, in + nq + nkv, in + nq + 2 * nkv, ref_dq, ref_dk,
                                                ref_dv),
                         ATTN_OK);
        free(in);
    }
    const struct attn_tolerance tol_o = attn_tolerance_for(p.dtype), tol_g = attn_grad_tolerance_for(p.dtype, p.head_dim);
    int checked = 0;
    for (size_t i = 0; i < registry_count(); i++) {
        const struct attn_variant *var = registry_get(i);
        char label[200 + ATTN_VARLEN_MAX], point[ATTN_LABEL_MAX];
        snprintf(label, sizeof label, "%s %s", var->name, attn_problem_label(&p, point, sizeof point));
        if (!var->backward) continue;
        const char *why = var->supports(&p, &dev);
        if (why) {
            fprintf(stderr, "  %s: not supported (%s)\n", label, why);
            continue;
        }
        void *ws = NULL, *ctx = NULL;
        const size_t ws_bytes = var->workspace_bytes(&p);
        if (ws_bytes) ck_assert_msg(cudaMalloc(&ws, ws_bytes) == cudaSuccess, "%s: workspace", label);
        ck_assert_msg(var->setup(&ctx, &p, ws) == ATTN_OK, "%s: setup: %s", label, attn_error_message());
        for (int round = 0; round < 2; round++) {
            ck_assert_int_eq(gpu_poison(dq, nq * es, stream), ATTN_OK);
            ck_assert_int_eq(gpu_poison(dk, nkv * es, stream), ATTN_OK);
            ck_assert_int_eq(gpu_poison(dv, nkv * es, stream), ATTN_OK);
            if (round == 0) {
                ck_assert_int_eq(gpu_poison(o, nq * es, stream), ATTN_OK);
                ck_assert_msg(var->backward->forward(ctx, q, k, v, o, stream) == ATTN_OK, "%s: forward: %s",
                              label, attn_error_message());
            }
            ck_assert_msg(var->backward->backward(ctx, q, k, v, o, dout, dq, dk, dv, stream) == ATTN_OK,
                          "%s: backward: %s", label, attn_error_message());
            ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
            ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
            if (round == 0) check_grad(label, "O", o, nq, ref_o, host, p.dtype, tol_o);
            check_grad(label, round ? "dQ (again)" : "dQ", dq, nq, ref_dq, host, p.dtype, tol_g);
            check_grad(label, round ? "dK (again)" : "dK", dk, nkv, ref_dk, host, p.dtype, tol_g);
            check_grad(label, round ? "dV (again)" : "dV", dv, nkv, ref_dv, host, p.dtype, tol_g);
        }
        var->teardown(ctx);
        cudaFree(ws);
        checked++;
    }
    ck_assert_msg(checked > 0, "no variant ran a backward at shape %d", _i);
    free(ref);
    free(host);
    void *bufs[] = {q, k, v, o, dout, dq, dk, dv};
    for (int i = 0; i < 8; i++) cudaFree(bufs[i]);
}
END_TEST


static Suite *gpu_suite(void)
{
    Suite *s = suite_create("gpu");
    TCase *t = tcase_create("variants");
    tcase_set_timeout(t, 600);
    tcase_add_loop_test(t, test_variants_match_reference, 0, 2 * N_ODD);
    tcase_add_loop_test(t, test_variants_in_graph_match_reference, 0, N_ODD);
    tcase_add_loop_test(t, test_variants_long_rows_match_reference, 0, N_LONG);
    tcase_add_loop_test(t, test_variants_on_modern_shapes_match_reference, 0, N_MODERN);
    tcase_add_loop_test(t, test_variants_in_graph_on_ragged_shapes, 0, N_MODERN_CPU_REF);
    suite_add_tcase(s, t);
    t = tcase_create("backward");
    tcase_set_timeout(t, 600);
    tcase_add_loop_test(t, test_variants_backward_match_reference, 0, N_GRAD_SHAPES);
    suite_add_tcase(s, t);
    t = tcase_create("decode");
    tcase_set_timeout(t, 600);
    tcase_add_loop_test(t, test_flash_decode_matches_reference, 0, N_DECODE);
    suite_add_tcase(s, t);
    t = tcase_create("hopper_configs");
    tcase_set_timeout(t, 600);
    tcase_add_loop_test(t, test_flash_hopper_configs_match_reference, 0, N_HOPPER_TESTS);
    suite_add_tcase(s, t);
    t = tcase_create("helpers");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, test_gpu_reference_matches_cpu, 0, N_ODD + N_MODERN_CPU_REF);
    tcase_add_loop_test(t, test_gpu_reference_bwd_matches_cpu, 0, N_BWD_SHAPES);
    tcase_add_test(t, test_poison_is_nan);
    tcase_add_test(t, test_peaks_are_plausible);
    tcase_add_test(t, test_random_inputs_are_fresh_and_nonzero);
    tcase_add_loop_test(t, test_naive_has_one_more_d2d_copy_than_inplace, 0, 2);
    tcase_add_loop_test(t, test_naive_and_inplace_backward_ops, 0, 2);
    tcase_add_test(t, test_fused_variants_launch_at_most_two_kernels);
#ifdef ATTN_HAVE_CUDNN
    tcase_add_loop_test(t, test_cudnn_sdpa_runs_plain_points, 0, N_CUDNN_TESTS);
#endif
    suite_add_tcase(s, t);
    t = tcase_create("runner");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, test_runner_writes_ok_rows);
    tcase_add_test(t, test_runner_reports_oom_and_goes_on);
    tcase_add_test(t, test_runner_interrupted_keeps_whole_rows);
    tcase_add_test(t, test_ab_runs_both_sides);
    tcase_add_test(t, test_read_flush_rows);
    suite_add_tcase(s, t);
    t = tcase_create("watchdog");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, test_watchdog_hung_kernels_cost_their_rows);
    tcase_add_test(t, test_resume_completes_a_cut_run);
    tcase_add_test(t, test_ab_hung_worker_costs_its_row);
    suite_add_tcase(s, t);
    return s;
}

/* Tests in gpu_suite(), for the skipped count: keep in step with it. */
#define GPU_TEST_COUNT (2 * N_ODD + N_ODD + N_LONG + N_MODERN + N_DECODE + N_ODD + N_MODERN_CPU_REF + N_BWD_SHAPES + N_GRAD_SHAPES + \
                        3 + 2 + 2 + 1 + N_CUDNN_TESTS + 5 + 3 + N_HOPPER_TESTS)

int main(void)
{
    if (device_query(&dev) != ATTN_OK) {
        printf("gpu: skipped: %s\n", attn_error_message());
        printf("gpu: 0 passed, 0 failed, %d skipped\n", GPU_TEST_COUNT);
        return 0;
    }
    if (cudaStreamCreate(&stream) != cudaSuccess) {
        printf("gpu: cudaStreamCreate failed\n");
        return 1;
    }
    srand((unsigned)time(NULL));
    printf("gpu: %s, sm_%d%d, %d SMs\n", dev.name, dev.cc_major, dev.cc_minor, dev.sm_count);
    SRunner *sr = srunner_create(gpu_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    cudaStreamDestroy(stream);
    return failed ? 1 : 0;
}

/* check_cpu.c — the CPU unit tests of attnbench (Check): the float64
 * reference, forward and backward (the backward against finite
 * differences), the 16-bit conversions, output and gradient comparison, FLOP
 * and byte counts, grid specs and grid files, CSV writing and splitting, the
 * results schema, sample statistics and the stop rule, the variant registry,
 * the command line and the timing-mode names. Nothing here touches a GPU.
 * Run from the repository root (the grid tests read bench/grids/). */
#include "../bench/options.h"
#include "../common/attn.h"
#include "../common/csv.h"
#include "../common/errors.h"
#include "../common/files.h"
#include "../common/grid.h"
#include "../common/names.h"
#include "../common/problem.h"
#include "../common/reference.h"
#include "../common/registry.h"
#include "../common/results.h"
#include "../common/results_read.h"
#include "../common/settle.h"
#include "../common/stats.h"
#include "../common/timing.h"

#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ helpers */

#define E 2.718281828459045 /* Euler's number, for hand-computed softmax weights */

/* The last error message must contain `needle`. */
#define ck_assert_message_has(needle)                                             \
    ck_assert_msg(strstr(attn_error_message(), (needle)) != NULL,                 \
                  "error message \"%s\" does not mention \"%s\"",                 \
                  attn_error_message(), (needle))

static uint16_t bf16(float x) { return attn_float_to_half(x, ATTN_BF16); }
static uint16_t fp16(float x) { return attn_float_to_half(x, ATTN_FP16); }

static void to_bf16(const float *in, uint16_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = bf16(in[i]);
}

/* A bf16 problem with softmax scale 1, so that scores are plain dot products. */
static struct attn_problem problem(int batch, int heads, int seq, int dim, bool causal)
{
    return (struct attn_problem){.batch = batch, .heads = heads, .seq_len = seq,
                                 .head_dim = dim, .causal = causal, .dtype = ATTN_BF16,
                                 .scale = 1.0f};
}

/* Writes text to a fresh file under /tmp; its path goes into path[32]. */
static void write_temp(char path[32], const char *text)
{
    strcpy(path, "/tmp/check_cpu_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    size_t n = strlen(text);
    ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
    close(fd);
}

/* write_temp for text that may hold NUL bytes: n bytes of it. */
static void write_temp_bytes(char path[32], const char *text, size_t n)
{
    strcpy(path, "/tmp/check_cpu_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
    close(fd);
}

/* Appends "key=" and `count` copies of value, comma-separated, and a space. */
static void append_list(char *buf, size_t len, const char *key, const char *value, int count)
{
    size_t n = strlen(buf);
    n += (size_t)snprintf(buf + n, len - n, "%s=", key);
    for (int i = 0; i < count; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "," : "", value);
    snprintf(buf + n, len - n, " ");
    ck_assert_uint_lt(strlen(buf), len - 1); /* nothing cut off */
}

/* Appends "key=1,2,...,count " (count distinct values). */
static void append_run(char *buf, size_t len, const char *key, int count)
{
    size_t n = strlen(buf);
    n += (size_t)snprintf(buf + n, len - n, "%s=", key);
    for (int i = 1; i <= count; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%d", i > 1 ? "," : "", i);
    snprintf(buf + n, len - n, " ");
    ck_assert_uint_lt(strlen(buf), len - 1);
}

/* Index of a results column by name, -1 when absent. */
static int column_index(const char *name)
{
    for (int i = 0; i < results_column_count(); i++)
        if (strcmp(results_column_name(i), name) == 0) return i;
    return -1;
}

/* Splits a finished CSV line (ending in '\n') in place. */
static int split_line(struct csv_line *l, char **fields, int max)
{
    ck_assert_int_gt(l->len, 0);
    ck_assert_int_eq(l->text[l->len - 1], '\n');
    l->text[l->len - 1] = '\0';
    return csv_split(l->text, fields, max);
}

/* options_parse over a NULL-terminated argv. */
static int parse_argv(struct options *o, char **argv)
{
    int argc = 0;
    while (argv[argc]) argc++;
    return options_parse(o, argc, argv);
}

/* ======================================================= 16-bit conversions */

START_TEST(test_convert_exact_values)
{
    ck_assert_uint_eq(bf16(1.0f), 0x3F80);
    ck_assert_uint_eq(bf16(-2.5f), 0xC020);
    ck_assert_uint_eq(bf16(0.0f), 0x0000);
    ck_assert_uint_eq(bf16(-0.0f), 0x8000);
    ck_assert_uint_eq(fp16(1.0f), 0x3C00);
    ck_assert_uint_eq(fp16(-2.5f), 0xC100);
    ck_assert_uint_eq(fp16(0.0f), 0x0000);
    ck_assert_uint_eq(fp16(-0.0f), 0x8000);
    const float values[] = {1.0f, -2.5f, 0.0f, 0.5f, 3.0f, -1024.0f, 0.15625f};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        ck_assert_double_eq(attn_half_to_float(bf16(values[i]), ATTN_BF16), values[i]);
        ck_assert_double_eq(attn_half_to_float(fp16(values[i]), ATTN_FP16), values[i]);
    }
}
END_TEST

START_TEST(test_convert_bf16_round_to_nearest_even)
{
    /* bf16 keeps 7 fraction bits: the step at 1.0 is 2^-7. */
    ck_assert_uint_eq(bf16(1.0f + ldexpf(1, -8)), 0x3F80);      /* tie, down to even */
    ck_assert_uint_eq(bf16(1.0f + 3 * ldexpf(1, -8)), 0x3F82);  /* tie, up to even */
    ck_assert_uint_eq(bf16(1.0f + ldexpf(1, -8) + ldexpf(1, -20)), 0x3F81); /* above the tie */
    ck_assert_uint_eq(bf16(1.0f + ldexpf(1, -8) - ldexpf(1, -20)), 0x3F80); /* below the tie */
    ck_assert_uint_eq(bf16(-(1.0f + 3 * ldexpf(1, -8))), 0xBF82);
    ck_assert_double_eq(attn_half_to_float(0x3F82, ATTN_BF16), 1.015625);
}
END_TEST

START_TEST(test_convert_fp16_round_to_nearest_even)
{
    /* fp16 keeps 10 fraction bits: the step at 1.0 is 2^-10. */
    ck_assert_uint_eq(fp16(1.0f + ldexpf(1, -11)), 0x3C00);
    ck_assert_uint_eq(fp16(1.0f + 3 * ldexpf(1, -11)), 0x3C02);
    ck_assert_uint_eq(fp16(1.0f + ldexpf(1, -11) + ldexpf(1, -20)), 0x3C01);
    ck_assert_uint_eq(fp16(2047.5f), 0x6800); /* rounds up into the next binade: 2048 */
}
END_TEST

START_TEST(test_convert_overflow_to_infinity)
{
    ck_assert_uint_eq(fp16(65504.0f), 0x7BFF); /* largest finite fp16 */
    ck_assert_double_eq(attn_half_to_float(0x7BFF, ATTN_FP16), 65504.0);
    ck_assert_uint_eq(fp16(65519.0f), 0x7BFF); /* under the halfway point */
    ck_assert_uint_eq(fp16(65520.0f), 0x7C00); /* halfway: ties to even = inf */
    ck_assert_uint_eq(fp16(1e6f), 0x7C00);
    ck_assert_uint_eq(fp16(-1e6f), 0xFC00);
    ck_assert_uint_eq(fp16(INFINITY), 0x7C00);
    ck_assert(isinf(attn_half_to_float(0x7C00, ATTN_FP16)));
    ck_assert(attn_half_to_float(0xFC00, ATTN_FP16) < 0);
    ck_assert_uint_eq(bf16(3.4028235e38f), 0x7F80); /* FLT_MAX rounds up to inf */
    ck_assert_uint_eq(bf16(-INFINITY), 0xFF80);
    ck_assert(isinf(attn_half_to_float(0x7F80, ATTN_BF16)));
}
END_TEST

START_TEST(test_convert_fp16_subnormal)
{
    const float tiny = ldexpf(1, -24); /* smallest fp16 subnormal */
    ck_assert_uint_eq(fp16(tiny), 0x0001);
    ck_assert_uint_eq(fp16(-tiny), 0x8001);
    ck_assert_uint_eq(fp16(3 * tiny), 0x0003);
    ck_assert_uint_eq(fp16(1.5f * tiny), 0x0002); /* tie, up to even */
    ck_assert_uint_eq(fp16(2.5f * tiny), 0x0002); /* tie, down to even */
    ck_assert_uint_eq(fp16(0.5f * tiny), 0x0000); /* tie, down to zero */
    ck_assert_uint_eq(fp16(ldexpf(1, -14)), 0x0400); /* smallest normal */
    ck_assert_uint_eq(fp16(1023.75f * tiny), 0x0400); /* rounds up into the normals */
    ck_assert_double_eq(attn_half_to_float(0x0001, ATTN_FP16), tiny);
    ck_assert_double_eq(attn_half_to_float(0x03FF, ATTN_FP16), 1023 * (double)tiny);
    ck_assert_double_eq(attn_half_to_float(0x8003, ATTN_FP16), -3 * (double)tiny);
}
END_TEST

START_TEST(test_convert_nan_stays_nan)
{
    ck_assert(isnan(attn_half_to_float(bf16(NAN), ATTN_BF16)));
    ck_assert(isnan(attn_half_to_float(fp16(NAN), ATTN_FP16)));
    /* A NaN whose payload lies only in the low bits that bf16 drops. */
    uint32_t bits = 0x7F800001u;
    float low_nan;
    memcpy(&low_nan, &bits, sizeof low_nan);
    ck_assert(isnan(low_nan));
    ck_assert(isnan(attn_half_to_float(bf16(low_nan), ATTN_BF16)));
    ck_assert(isnan(attn_half_to_float(fp16(low_nan), ATTN_FP16)));
}
END_TEST

/* Every 16-bit pattern that is not a NaN survives half → float → half. */
START_TEST(test_convert_all_patterns_round_trip)
{
    for (uint32_t h = 0; h <= 0xFFFF; h++) {
        float b = attn_half_to_float((uint16_t)h, ATTN_BF16);
        if (isnan(b)) ck_assert(isnan(attn_half_to_float(bf16(b), ATTN_BF16)));
        else ck_assert_msg(bf16(b) == h, "bf16 0x%04x came back as 0x%04x", h, bf16(b));
        float f = attn_half_to_float((uint16_t)h, ATTN_FP16);
        if (isnan(f)) ck_assert(isnan(attn_half_to_float(fp16(f), ATTN_FP16)));
        else ck_assert_msg(fp16(f) == h, "fp16 0x%04x came back as 0x%04x", h, fp16(f));
    }
}
END_TEST

/* ============================================================== reference */

START_TEST(test_reference_single_key_returns_v)
{
    struct attn_problem p = problem(1, 1, 1, 4, false);
    const float qf[4] = {0.5f, -1, 2, 0.25f}, kf[4] = {1, 3, -0.5f, 2};
    const float vf[4] = {1, -2.5f, 0.5f, 3};
    uint16_t q[4], k[4], v[4];
    to_bf16(qf, q, 4);
    to_bf16(kf, k, 4);
    to_bf16(vf, v, 4);
    double o[4];
    ck_assert_int_eq(attn_reference_f64(&p, q, k, v, o), ATTN_OK);
    for (int d = 0; d < 4; d++) ck_assert_double_eq(o[d], vf[d]);
}
END_TEST

START_TEST(test_reference_single_key_fp16)
{
    struct attn_problem p = problem(1, 1, 1, 2, true);
    p.dtype = ATTN_FP16;
    uint16_t q[2] = {fp16(1), fp16(2)}, k[2] = {fp16(-1), fp16(0.5f)};
    uint16_t v[2] = {fp16(0.125f), fp16(-7)};
    double o[2];
    ck_assert_int_eq(attn_reference_f64(&p, q, k, v, o), ATTN_OK);
    ck_assert_double_eq(o[0], 0.125);
    ck_assert_double_eq(o[1], -7.0);
}
END_TEST

/* S=2, D=2: Q = I, K = [[1,0],[0,2]], so row 0 scores (1, 0) and row 1
 * scores (0, 2). V = [[1,2],[3,4]]. */
START_TEST(test_reference_two_keys_full)
{
    struct attn_problem p = problem(1, 1, 2, 2, false);
    const float qf[4] = {1, 0, 0, 1}, kf[4] = {1, 0, 0, 2}, vf[4] = {1, 2, 3, 4};
    uint16_t q[4], k[4], v[4];
    to_bf16(qf, q, 4);
    to_bf16(kf, k, 4);
    to_bf16(vf, v, 4);
    double o[4];
    ck_assert_int_eq(attn_reference_f64(&p, q, k, v, o), ATTN_OK);
    /* row 0: weights e/(e+1), 1/(e+1) */
    ck_assert_double_eq_tol(o[0], (E * 1 + 3) / (E + 1), 1e-12);
    ck_assert_double_eq_tol(o[1], (E * 2 + 4) / (E + 1), 1e-12);
    /* row 1: weights 1/(1+e²), e²/(1+e²) */
    ck_assert_double_eq_tol(o[2], (1 + 3 * E * E) / (1 + E * E), 1e-12);
    ck_assert_double_eq_tol(o[3], (2 + 4 * E * E) / (1 + E * E), 1e-12);
}
END_TEST

/* The same two rows with scale 0.5: every score is halved. */
START_TEST(test_reference_scale_applied)
{
    struct attn_problem p = problem(1, 1, 2, 2, false);
    p.scale = 0.5f;
    const float qf[4] = {1, 0, 0, 1}, kf[4] = {1, 0, 0, 2}, vf[4] = {1, 2, 3, 4};
    uint16_t q[4], k[4], v[4];
    to_bf16(qf, q, 4);
    to_bf16(kf, k, 4);
    to_bf16(vf, v, 4);
    double o[4];
    ck_assert_int_eq(attn_reference_f64(&p, q, k, v, o), ATTN_OK);
    const double r = sqrt(E); /* e^0.5 */
    ck_assert_double_eq_tol(o[0], (r * 1 + 3) / (r + 1), 1e-12);
    ck_assert_double_eq_tol(o[3], (2 + 4 * E) / (1 + E), 1e-12);
}
END_TEST

/* Causal, S=2: row 0 sees only key 0; row 1 sees both, as without the mask. */
START_TEST(test_reference_two_keys_causal)
{
    struct attn_problem p = problem(1, 1, 2, 2, true);
    const float qf[4] = {1, 0, 0, 1}, kf[4] = {1, 0, 0, 2}, vf[4] = {1, 2, 3, 4};
    uint16_t q[4], k[4], v[4];
    to_bf16(qf, q, 4);
    to_bf16(kf, k, 4);
    to_bf16(vf, v, 4);
    double o[4];
    ck_assert_int_eq(attn_reference_f64(&p, q, k, v, o), ATTN_OK);
    ck_assert_double_eq(o[0], 1.0);
    ck_assert_double_eq(o[1], 2.0);
    ck_assert_double_eq_tol(o[2], (1 + 3 * E * E) / (1 + E * E), 1e-12);
    ck_assert_double_eq_tol(o[3], (2 + 4 * E * E) / (1 + E * E), 1e-12);
}
END_TEST

/* Causal, S=3: row 1 must not see key 2, whose score (1) would change it. */
START_TEST(test_reference_three_keys_causal)
{
    struct attn_problem p = problem(1, 1, 3, 2, true);
    const float qf[6] = {1, 0, 0, 1, 1, 1}, kf[6] = {1, 0, 0, 2, 1, 1};
    const float vf[6] = {1, 2, 3, 4, -1, 0.5f};
    uint16_t q[6], k[6], v[6];
    to_bf16(qf, q, 6);
    to_bf16(kf, k, 6);
    to_bf16(vf, v, 6);
    double o[6];
    ck_assert_int_eq(attn_reference_f64(&p, q, k, v, o), ATTN_OK);
    ck_assert_double_eq(o[0], 1.0);
    ck_assert_double_eq(o[1], 2.0);
    /* row 1: keys 0, 1 with scores 0, 2 */
    ck_assert_double_eq_tol(o[2], (1 + 3 * E * E) / (1 + E * E), 1e-12);
    ck_assert_double_eq_tol(o[3], (2 + 4 * E * E) / (1 + E * E), 1e-12);
    /* row 2: keys 0, 1, 2 with scores 1, 2, 2 */
    const double sum = E + 2 * E * E;
    ck_assert_double_eq_tol(o[4], (E * 1 + E * E * 3 + E * E * -1) / sum, 1e-12);
    ck_assert_double_eq_tol(o[5], (E * 2 + E * E * 4 + E * E * 0.5) / sum, 1e-12);
}
END_TEST

/* All keys equal: every score ties, so each output row is the mean of V. */
START_TEST(test_reference_uniform_keys_average_v)
{
    enum { S = 4, D = 2 };
    struct attn_problem p = problem(1, 1, S, D, false);
    const float qf[S * D] = {1, 2, -3, 0.5f, 0, 0, 7, -1};
    const float kf[S * D] = {0.5f, -1, 0.5f, -1, 0.5f, -1, 0.5f, -1};
    const float vf[S * D] = {1, 10, 2, 20, 3, 30, 6, -4};
    uint16_t q[S * D], k[S * D], v[S * D];
    to_bf16(qf, q, S * D);
    to_bf16(kf, k, S * D);
    to_bf16(vf, v, S * D);
    double o[S * D];
    ck_assert_int_eq(attn_reference_f64(&p, q, k, v, o), ATTN_OK);
    for (int i = 0; i < S; i++) {
        ck_assert_double_eq_tol(o[i * D + 0], (1 + 2 + 3 + 6) / 4.0, 1e-12);
        ck_assert_double_eq_tol(o[i * D + 1], (10 + 20 + 30 - 4) / 4.0, 1e-12);
    }
}
END_TEST

/* Large scores must not overflow exp(): the row's maximum is subtracted. */
START_TEST(test_reference_large_scores_stable)
{
    struct attn_problem p = problem(1, 1, 2, 1, false);
    uint16_t q[2] = {bf16(64), bf16(64)}, k[2] = {bf16(64), bf16(32)};
    uint16_t v[2] = {bf16(1), bf16(5)};
    double o[2];
    ck_assert_int_eq(attn_reference_f64(&p, q, k, v, o), ATTN_OK);
    /* scores 4096 and 2048: exp(4096) overflows, the second weight e^-2048 is 0 */
    ck_assert(isfinite(o[0]) && isfinite(o[1]));
    ck_assert_double_eq_tol(o[0], 1.0, 1e-12);
    ck_assert_double_eq_tol(o[1], 1.0, 1e-12);
}
END_TEST

/* B·H = 3 heads: each head's output is what that head alone gives. */
/* Grouped K/V heads: the reference with 2 batches × 6 query heads over 2 K/V
 * heads equals the reference with every head's K and V written out (query
 * head h of a batch reads K/V head h / 3 of that batch). */
START_TEST(test_reference_grouped_heads_read_their_group)
{
    enum { B = 2, H = 6, KV = 2, G = H / KV, S = 4, D = 2 };
    enum { NQ = B * H * S * D, NKV = B * KV * S * D };
    struct attn_problem gqa = problem(B, H, S, D, false), mha = gqa;
    gqa.kv_heads = KV;
    float qf[NQ], kf[NKV], vf[NKV];
    for (int i = 0; i < NQ; i++) qf[i] = (float)((i * 7) % 5) - 2;
    for (int i = 0; i < NKV; i++) {
        kf[i] = (float)((i * 3) % 7) * 0.5f - 1;
        vf[i] = (float)i - 9;
    }
    uint16_t q[NQ], k[NKV], v[NKV], k_full[NQ], v_full[NQ];
    to_bf16(qf, q, NQ);
    to_bf16(kf, k, NKV);
    to_bf16(vf, v, NKV);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < S * D; i++) {
                k_full[((b * H + h) * S * D) + i] = k[((b * KV + h / G) * S * D) + i];
                v_full[((b * H + h) * S * D) + i] = v[((b * KV + h / G) * S * D) + i];
            }
    double o_gqa[NQ], o_mha[NQ];
    ck_assert_int_eq(attn_reference_f64(&gqa, q, k, v, o_gqa), ATTN_OK);
    ck_assert_int_eq(attn_reference_f64(&mha, q, k_full, v_full, o_mha), ATTN_OK);
    for (int i = 0; i < NQ; i++) ck_assert_double_eq(o_gqa[i], o_mha[i]);
}
END_TEST

/* A ragged batch (lengths 1, 3 and 4, packed [tokens, heads, D], 4 query
 * heads over 2 K/V heads): each sequence's rows are what that sequence alone
 * gives as a dense batch of one ([1, heads, L, D]), read from its packed
 * rows; causal and not. */
START_TEST(test_reference_ragged_is_each_sequence_alone)
{
    enum { B = 3, H = 4, KV = 2, S = 4, D = 2, T = 1 + 3 + 4 };
    static const int lens[B] = {1, 3, 4}, starts[B] = {0, 1, 4};
    for (int causal = 0; causal < 2; causal++) {
        struct attn_problem rag = problem(B, H, S, D, causal);
        rag.kv_heads = KV;
        snprintf(rag.varlen, sizeof rag.varlen, "lens:1+3+4");
        ck_assert_uint_eq(attn_tensor_elems(&rag), (size_t)T * H * D);
        float qf[T * H * D], kf[T * KV * D], vf[T * KV * D];
        for (int i = 0; i < T * H * D; i++) qf[i] = (float)((i * 7) % 5) - 2;
        for (int i = 0; i < T * KV * D; i++) {
            kf[i] = (float)((i * 3) % 7) * 0.5f - 1;
            vf[i] = (float)i - 9;
        }
        uint16_t q[T * H * D], k[T * KV * D], v[T * KV * D];
        to_bf16(qf, q, T * H * D);
        to_bf16(kf, k, T * KV * D);
        to_bf16(vf, v, T * KV * D);
        double o[T * H * D];
        ck_assert_int_eq(attn_reference_f64(&rag, q, k, v, o), ATTN_OK);
        for (int b = 0; b < B; b++) {
            const int L = lens[b];
            struct attn_problem one = problem(1, H, L, D, causal);
            one.kv_heads = KV;
            uint16_t q1[H * S * D], kseq[KV * S * D], vseq[KV * S * D];
            double o1[H * S * D];
            for (int t = 0; t < L; t++)
                for (int d = 0; d < D; d++) {
                    for (int h = 0; h < H; h++)
                        q1[(h * L + t) * D + d] = q[((starts[b] + t) * H + h) * D + d];
                    for (int h = 0; h < KV; h++) {
                        kseq[(h * L + t) * D + d] = k[((starts[b] + t) * KV + h) * D + d];
                        vseq[(h * L + t) * D + d] = v[((starts[b] + t) * KV + h) * D + d];
                    }
                }
            ck_assert_int_eq(attn_reference_f64(&one, q1, kseq, vseq, o1), ATTN_OK);
            for (int t = 0; t < L; t++)
                for (int h = 0; h < H; h++)
                    for (int d = 0; d < D; d++)
                        ck_assert_double_eq(o[((starts[b] + t) * H + h) * D + d], o1[(h * L + t) * D + d]);
        }
    }
}
END_TEST

START_TEST(test_reference_heads_independent)
{
    enum { HEADS = 3, S = 3, D = 2, N = HEADS * S * D };
    struct attn_problem all = problem(3, 1, S, D, true);
    struct attn_problem one = problem(1, 1, S, D, true);
    float qf[N], kf[N], vf[N];
    for (int i = 0; i < N; i++) {
        qf[i] = (float)((i * 7) % 5) - 2; /* small integers: bf16-exact */
        kf[i] = (float)((i * 3) % 7) * 0.5f - 1;
        vf[i] = (float)i - 9;
    }
    uint16_t q[N], k[N], v[N];
    to_bf16(qf, q, N);
    to_bf16(kf, k, N);
    to_bf16(vf, v, N);
    double o_all[N], o_one[S * D];
    ck_assert_int_eq(attn_reference_f64(&all, q, k, v, o_all), ATTN_OK);
    for (int h = 0; h < HEADS; h++) {
        const size_t off = (size_t)h * S * D;
        ck_assert_int_eq(attn_reference_f64(&one, q + off, k + off, v + off, o_one), ATTN_OK);
        for (int i = 0; i < S * D; i++) ck_assert_double_eq(o_all[off + i], o_one[i]);
        /* causal row 0 of every head is that head's V row 0 */
        ck_assert_double_eq(o_all[off + 0], vf[off + 0]);
        ck_assert_double_eq(o_all[off + 1], vf[off + 1]);
    }
    /* and batch=1, heads=3 is laid out the same way */
    struct attn_problem by_heads = problem(1, 3, S, D, true);
    double o_heads[N];
    ck_assert_int_eq(attn_reference_f64(&by_heads, q, k, v, o_heads), ATTN_OK);
    for (int i = 0; i < N; i++) ck_assert_double_eq(o_heads[i], o_all[i]);
}
END_TEST

/* ===================================================== backward reference */

/* n deterministic values in [-1, 1) from seed, not held exactly by any
 * 16-bit type: the finite differences step them by far less than a bf16
 * or fp16 step. */
static void fill_doubles(double *x, size_t n, unsigned seed)
{
    uint64_t state = 0x9e3779b97f4a7c15ull * (seed + 1);
    for (size_t e = 0; e < n; e++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x[e] = (double)(state >> 11) / 9007199254740992.0 * 2 - 1; /* 53 bits over 2^53 */
    }
}

/* n values from seed rounded to the dtype, and the same widened to double. */
static void fill_halves(uint16_t *x, double *wide, size_t n, unsigned seed, enum attn_dtype t)
{
    fill_doubles(wide, n, seed);
    for (size_t e = 0; e < n; e++) {
        x[e] = attn_float_to_half((float)wide[e], t);
        wide[e] = attn_half_to_float(x[e], t);
    }
}

/* Where row i of head h (of `heads` heads) of sequence b starts, its first
 * token being `first`: attn.h's dense or packed layout. */
static size_t grad_row_at(const struct attn_problem *p, int heads, int first, int b, int h, int i)
{
    const size_t D = (size_t)p->head_dim;
    if (attn_is_varlen(p)) return (((size_t)first + i) * heads + h) * D;
    return (((size_t)b * heads + h) * p->seq_len + i) * D;
}

/* L = Σ dout∘O, O the float64 forward of double inputs: the loss whose
 * gradients the backward reference returns. Written here, apart from
 * reference.c, so that the finite differences share no code with what they
 * check. */
#define GRAD_MAX_SEQ 16
static double grad_loss(const struct attn_problem *p, const double *q, const double *k,
                        const double *v, const double *dout)
{
    int lens[8];
    ck_assert_int_le(p->batch, 8);
    ck_assert_int_le(p->seq_len, GRAD_MAX_SEQ);
    ck_assert_int_eq(attn_seq_lens(p, lens), ATTN_OK);
    const int H = p->heads, KV = attn_kv_heads(p), D = p->head_dim;
    double loss = 0;
    for (int b = 0, first = 0; b < p->batch; first += lens[b], b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < lens[b]; i++) {
                const size_t qi = grad_row_at(p, H, first, b, h, i);
                const int keys = p->causal ? i + 1 : lens[b];
                double w[GRAD_MAX_SEQ], max = -INFINITY, sum = 0;
                for (int j = 0; j < keys; j++) {
                    const size_t kj = grad_row_at(p, KV, first, b, h / (H / KV), j);
                    double dot = 0;
                    for (int d = 0; d < D; d++) dot += q[qi + d] * k[kj + d];
                    w[j] = (double)p->scale * dot;
                    max = fmax(max, w[j]);
                }
                for (int j = 0; j < keys; j++) sum += w[j] = exp(w[j] - max);
                for (int d = 0; d < D; d++) {
                    double o = 0;
                    for (int j = 0; j < keys; j++)
                        o += w[j] / sum * v[grad_row_at(p, KV, first, b, h / (H / KV), j) + d];
                    loss += dout[qi + d] * o;
                }
            }
    return loss;
}

struct grad_shape {
    int batch, heads, kv_heads, seq, dim;
    bool causal;
    const char *varlen; /* NULL when dense */
};

/* Small problems over every path of the backward: dense, causal, grouped
 * (2 query heads per K/V head, and 3 on one), ragged (with grouped heads
 * and causal, and without), S = 1, and odd head_dims. */
static const struct grad_shape grad_shapes[] = {
    {.batch = 2, .heads = 2, .seq = 4, .dim = 3},
    {.batch = 1, .heads = 2, .seq = 5, .dim = 3, .causal = true},
    {.batch = 1, .heads = 4, .kv_heads = 2, .seq = 4, .dim = 2, .causal = true},
    {.batch = 2, .heads = 3, .kv_heads = 1, .seq = 3, .dim = 5},
    {.batch = 3, .heads = 4, .kv_heads = 2, .seq = 5, .dim = 3, .causal = true, .varlen = "lens:1+5+3"},
    {.batch = 2, .heads = 3, .seq = 4, .dim = 3, .varlen = "lens:2+4"},
    {.batch = 1, .heads = 2, .seq = 1, .dim = 4},
    {.batch = 1, .heads = 1, .seq = 6, .dim = 7, .causal = true},
    {.batch = 2, .heads = 1, .seq = 3, .dim = 1},
};
#define N_GRAD_SHAPES ((int)(sizeof grad_shapes / sizeof grad_shapes[0]))

/* A problem of shape g with a scale that is neither 1 nor 1/√D, so that a
 * gradient missing its factor shows. */
static struct attn_problem grad_problem(const struct grad_shape *g, enum attn_dtype t)
{
    struct attn_problem p = problem(g->batch, g->heads, g->seq, g->dim, g->causal);
    p.kv_heads = g->kv_heads;
    p.dtype = t;
    p.scale = 0.6f;
    if (g->varlen) snprintf(p.varlen, sizeof p.varlen, "%s", g->varlen);
    return p;
}

static double max_abs(const double *x, size_t n)
{
    double m = 0;
    for (size_t e = 0; e < n; e++) m = fmax(m, fabs(x[e]));
    return m;
}

/* The float64 backward core against central differences of grad_loss, every
 * element of Q, K and V stepped by 1e-5: their error (about 1e-10 here) is
 * far below the 1e-6 relative bound, a wrong formula far above it. */
START_TEST(test_reference_bwd_matches_finite_differences)
{
    const struct grad_shape *g = &grad_shapes[_i];
    struct attn_problem p = grad_problem(g, ATTN_BF16);
    const size_t nq = attn_tensor_elems(&p), nkv = attn_kv_tensor_elems(&p);
    double *q = malloc(nq * sizeof *q), *k = malloc(nkv * sizeof *k), *v = malloc(nkv * sizeof *v);
    double *dout = malloc(nq * sizeof *dout), *dq = malloc(nq * sizeof *dq);
    double *dk = malloc(nkv * sizeof *dk), *dv = malloc(nkv * sizeof *dv);
    ck_assert(q && k && v && dout && dq && dk && dv);
    fill_doubles(q, nq, 1);
    fill_doubles(k, nkv, 2);
    fill_doubles(v, nkv, 3);
    fill_doubles(dout, nq, 4);
    ck_assert_int_eq(attn_reference_bwd_f64_on_doubles(&p, q, k, v, dout, dq, dk, dv), ATTN_OK);
    struct {
        const char *name;
        double *x;
        const double *grad;
        size_t n;
    } tensors[3] = {{"dQ", q, dq, nq}, {"dK", k, dk, nkv}, {"dV", v, dv, nkv}};
    const double step = 1e-5;
    for (int t = 0; t < 3; t++) {
        /* a gradient of zeros would pass against any loss that ignores x */
        if (g->seq > 1 || t == 2)
            ck_assert_msg(max_abs(tensors[t].grad, tensors[t].n) > 1e-2, "shape %d: %s is all but zero",
                          _i, tensors[t].name);
        for (size_t e = 0; e < tensors[t].n; e++) {
            double *x = tensors[t].x, saved = x[e];
            x[e] = saved + step;
            const double up = grad_loss(&p, q, k, v, dout);
            x[e] = saved - step;
            const double down = grad_loss(&p, q, k, v, dout);
            x[e] = saved;
            const double fd = (up - down) / (2 * step), an = tensors[t].grad[e];
            ck_assert_msg(fabs(fd - an) <= 1e-6 * fmax(fabs(an), 0.1),
                          "shape %d: %s[%zu] is %.12g, finite differences %.12g", _i,
                          tensors[t].name, e, an, fd);
        }
    }
    free(q);
    free(k);
    free(v);
    free(dout);
    free(dq);
    free(dk);
    free(dv);
}
END_TEST

/* The 16-bit entry point is the core on its inputs widened: bit for bit,
 * on a ragged grouped causal bf16 batch and a dense fp16 one with an odd
 * group. Outputs start as NaN, so an element left unwritten fails. */
START_TEST(test_reference_bwd_entry_is_core_on_widened_inputs)
{
    const struct grad_shape *g = &grad_shapes[_i == 0 ? 4 : 3];
    struct attn_problem p = grad_problem(g, _i == 0 ? ATTN_BF16 : ATTN_FP16);
    const size_t nq = attn_tensor_elems(&p), nkv = attn_kv_tensor_elems(&p);
    const size_t nall = 2 * nq + 2 * nkv;
    uint16_t *in = malloc(nall * sizeof *in);
    double *wide = malloc(nall * sizeof *wide), *grads = malloc(2 * nall * sizeof *grads);
    ck_assert(in && wide && grads);
    fill_halves(in, wide, nall, 7, p.dtype);
    for (size_t e = 0; e < 2 * nall; e++) grads[e] = NAN;
    /* inputs q, k, v, dout one after the other; entry's gradients, then the core's */
    const size_t at_k = nq, at_v = nq + nkv, at_do = nq + 2 * nkv;
    double *entry = grads, *core = grads + nall;
    ck_assert_int_eq(attn_reference_bwd_f64(&p, in, in + at_k, in + at_v, in + at_do, entry,
                                            entry + at_k, entry + at_v),
                     ATTN_OK);
    ck_assert_int_eq(attn_reference_bwd_f64_on_doubles(&p, wide, wide + at_k, wide + at_v,
                                                       wide + at_do, core, core + at_k, core + at_v),
                     ATTN_OK);
    for (size_t e = 0; e < at_do; e++) ck_assert_double_eq(entry[e], core[e]);
    free(in);
    free(wide);
    free(grads);
}
END_TEST

/* One key: P = 1, so dS = P·(dP − D) = 0 exactly; dQ = dK = 0 and dV = dO. */
START_TEST(test_reference_bwd_single_key)
{
    struct attn_problem p = problem(1, 1, 1, 3, _i);
    p.dtype = ATTN_FP16;
    uint16_t q[3] = {fp16(1), fp16(-2), fp16(0.5f)}, k[3] = {fp16(3), fp16(0.25f), fp16(-1)};
    uint16_t v[3] = {fp16(0.125f), fp16(-7), fp16(2)}, dout[3] = {fp16(-1.5f), fp16(4), fp16(0.75f)};
    double dq[3], dk[3], dv[3];
    ck_assert_int_eq(attn_reference_bwd_f64(&p, q, k, v, dout, dq, dk, dv), ATTN_OK);
    for (int d = 0; d < 3; d++) {
        ck_assert_double_eq(dq[d], 0);
        ck_assert_double_eq(dk[d], 0);
        ck_assert_double_eq(dv[d], attn_half_to_float(dout[d], ATTN_FP16));
    }
}
END_TEST

/* Grouped K/V heads: dQ is the one of the same problem with every head's K
 * and V written out, and the dK (dV) of a K/V head is the sum of that
 * problem's dK (dV) over the query heads of its group: 2 batches, 6 query
 * heads on 2 K/V heads, causal. */
START_TEST(test_reference_bwd_group_sums_its_heads)
{
    enum { B = 2, H = 6, KV = 2, G = H / KV, S = 4, D = 3 };
    enum { NQ = B * H * S * D, NKV = B * KV * S * D };
    struct attn_problem gqa = problem(B, H, S, D, true), mha = gqa;
    gqa.kv_heads = KV;
    double q[NQ], k[NKV], v[NKV], dout[NQ], k_full[NQ], v_full[NQ];
    fill_doubles(q, NQ, 11);
    fill_doubles(k, NKV, 12);
    fill_doubles(v, NKV, 13);
    fill_doubles(dout, NQ, 14);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int e = 0; e < S * D; e++) {
                k_full[(b * H + h) * S * D + e] = k[(b * KV + h / G) * S * D + e];
                v_full[(b * H + h) * S * D + e] = v[(b * KV + h / G) * S * D + e];
            }
    double dq[NQ], dk[NKV], dv[NKV], dq_full[NQ], dk_full[NQ], dv_full[NQ];
    ck_assert_int_eq(attn_reference_bwd_f64_on_doubles(&gqa, q, k, v, dout, dq, dk, dv), ATTN_OK);
    ck_assert_int_eq(attn_reference_bwd_f64_on_doubles(&mha, q, k_full, v_full, dout, dq_full,
                                                       dk_full, dv_full),
                     ATTN_OK);
    for (int e = 0; e < NQ; e++) ck_assert_double_eq(dq[e], dq_full[e]);
    for (int b = 0; b < B; b++)
        for (int kvh = 0; kvh < KV; kvh++)
            for (int e = 0; e < S * D; e++) {
                double dk_sum = 0, dv_sum = 0;
                for (int h = kvh * G; h < (kvh + 1) * G; h++) {
                    dk_sum += dk_full[(b * H + h) * S * D + e];
                    dv_sum += dv_full[(b * H + h) * S * D + e];
                }
                ck_assert_double_eq_tol(dk[(b * KV + kvh) * S * D + e], dk_sum, 1e-14);
                ck_assert_double_eq_tol(dv[(b * KV + kvh) * S * D + e], dv_sum, 1e-14);
            }
}
END_TEST

START_TEST(test_reference_bwd_malformed_varlen_fails)
{
    struct attn_problem p = problem(2, 1, 4, 2, false);
    snprintf(p.varlen, sizeof p.varlen, "lens:3+x");
    uint16_t x[1] = {0};
    double g[1];
    attn_error_clear();
    ck_assert_int_eq(attn_reference_bwd_f64(&p, x, x, x, x, g, g, g), ATTN_ERR_INPUT);
}
END_TEST

/* The gradients' tolerance on dQ, dK and dV (_i % 3) of a bf16 or fp16
 * (_i / 3) problem: the reference rounded to the dtype (what a perfect
 * kernel returns) passes; one element moved by twice its bound fails, and
 * only it; the whole tensor 5 % too large (a term lost in twenty) fails the
 * relative L2 bound. */
START_TEST(test_grad_compare_catches_a_wrong_gradient)
{
    const enum attn_dtype t = _i / 3 ? ATTN_FP16 : ATTN_BF16;
    struct attn_problem p = problem(1, 4, 6, 8, true);
    p.kv_heads = 2;
    p.dtype = t;
    p.scale = 1.0f / sqrtf(8.0f);
    const size_t nq = attn_tensor_elems(&p), nkv = attn_kv_tensor_elems(&p);
    const size_t nall = 2 * nq + 2 * nkv;
    uint16_t *in = malloc(nall * sizeof *in), *out = malloc(nq * sizeof *out);
    double *wide = malloc(nall * sizeof *wide), *dq = malloc(nq * sizeof *dq);
    double *dk = malloc(nkv * sizeof *dk), *dv = malloc(nkv * sizeof *dv);
    ck_assert(in && out && wide && dq && dk && dv);
    fill_halves(in, wide, nall, 21, t);
    ck_assert_int_eq(attn_reference_bwd_f64(&p, in, in + nq, in + nq + nkv, in + nq + 2 * nkv, dq,
                                            dk, dv),
                     ATTN_OK);
    const double *grad = _i % 3 == 0 ? dq : _i % 3 == 1 ? dk : dv;
    const size_t n = _i % 3 == 0 ? nq : nkv;
    const struct attn_tolerance tol = attn_grad_tolerance_for(t, p.head_dim);
    for (size_t e = 0; e < n; e++) out[e] = attn_float_to_half((float)grad[e], t);
    struct attn_comparison c = attn_compare(grad, out, n, t, tol);
    ck_assert_msg(c.ok, "rounded reference: %zu bad, rel_err %g", c.bad, c.rel_err);

    size_t worst = 0; /* the largest element, so that the change is no rounding */
    for (size_t e = 0; e < n; e++)
        if (fabs(grad[e]) > fabs(grad[worst])) worst = e;
    const uint16_t kept = out[worst];
    out[worst] = attn_float_to_half((float)(grad[worst] + 2 * (tol.atol + tol.rtol * fabs(grad[worst]))), t);
    c = attn_compare(grad, out, n, t, tol);
    ck_assert(!c.ok);
    ck_assert_uint_eq(c.bad, 1);
    ck_assert_uint_eq(c.first_bad, worst);
    out[worst] = kept;
    ck_assert(attn_compare(grad, out, n, t, tol).ok);

    for (size_t e = 0; e < n; e++) out[e] = attn_float_to_half((float)(1.05 * grad[e]), t);
    c = attn_compare(grad, out, n, t, tol);
    ck_assert(!c.ok);
    ck_assert_double_eq_tol(c.rel_err, 0.05, 0.01);
    free(in);
    free(out);
    free(wide);
    free(dq);
    free(dk);
    free(dv);
}
END_TEST

/* fp16 keeps more bits than bf16, and a gradient goes through more roundings
 * than the forward's output: the bounds are ordered so. */
START_TEST(test_grad_tolerance_ordered)
{
    struct attn_tolerance b = attn_grad_tolerance_for(ATTN_BF16, 128), h = attn_grad_tolerance_for(ATTN_FP16, 128);
    ck_assert(h.atol < b.atol && h.rtol < b.rtol && h.rel_l2 < b.rel_l2);
    ck_assert(h.atol > 0 && h.rtol > 0 && h.rel_l2 > 0);
    ck_assert_uint_eq(b.row, 128);
    for (int t = 0; t < 2; t++) {
        struct attn_tolerance fwd = attn_tolerance_for(t), grad = attn_grad_tolerance_for(t, 64);
        ck_assert(grad.atol >= fwd.atol && grad.rtol >= fwd.rtol && grad.rel_l2 >= fwd.rel_l2);
        ck_assert_uint_eq(fwd.row, 0);
    }
}
END_TEST

/* A gradient row of large terms (key 0 under a causal mask): an element that
 * cancels to near zero may be off by a small part of the row's size, which
 * the per-element bound alone refuses; with the row's scale it passes, and
 * an element off by a large part of its row's size still fails. Rows of 4:
 * the second row's rms is 10, so its bound is 0.02 + 0.04·10 = 0.42. */
START_TEST(test_grad_compare_row_scale)
{
    const double ref[8] = {0.1, -0.2, 0.05, 0, 14, -14, 0.01, 0.3};
    uint16_t out[8];
    for (int e = 0; e < 8; e++) out[e] = attn_float_to_half((float)ref[e], ATTN_BF16);
    struct attn_tolerance rows = attn_grad_tolerance_for(ATTN_BF16, 4), flat = rows;
    flat.row = 0;
    out[6] = attn_float_to_half(0.01f + 0.3f, ATTN_BF16); /* 0.3 off, under the row's 0.42 */
    struct attn_comparison c = attn_compare(ref, out, 8, ATTN_BF16, rows);
    ck_assert_uint_eq(c.bad, 0);
    c = attn_compare(ref, out, 8, ATTN_BF16, flat);
    ck_assert_uint_eq(c.bad, 1);
    ck_assert_uint_eq(c.first_bad, 6);
    out[6] = attn_float_to_half(0.01f + 0.6f, ATTN_BF16); /* over the row's bound */
    c = attn_compare(ref, out, 8, ATTN_BF16, rows);
    ck_assert_uint_eq(c.bad, 1);
    ck_assert_uint_eq(c.first_bad, 6);
    out[6] = attn_float_to_half(0.01f, ATTN_BF16);
    out[1] = attn_float_to_half(-0.2f + 0.1f, ATTN_BF16); /* its bound 0.02 + 0.04·0.2 = 0.028 */
    c = attn_compare(ref, out, 8, ATTN_BF16, rows);
    ck_assert_uint_eq(c.bad, 1);
    ck_assert_uint_eq(c.first_bad, 1);
}
END_TEST

/* ============================================================= comparison */

/* A tensor compared in 1, 2, 3 and 16 parts (on threads, each part
 * beginning on a row) gives the same counts, first bad element and largest
 * error as in one, and the same rel_err but for the sums' order: bad
 * elements in the first, a middle and the last row, a row of large terms,
 * n not a whole number of rows; then a NaN in the last part alone. */
START_TEST(test_compare_parts_add_up)
{
    enum { ROW = 8, N = 1000 * ROW + 5 };
    static double ref[N];
    static uint16_t out[N];
    for (int i = 0; i < N; i++) {
        ref[i] = sin(0.37 * i) * (i / ROW == 500 ? 20.0 : 1.0);
        out[i] = attn_float_to_half((float)ref[i], ATTN_BF16);
    }
    out[3] = attn_float_to_half((float)ref[3] + 0.5f, ATTN_BF16);
    out[500 * ROW + 2] = attn_float_to_half((float)ref[500 * ROW + 2] + 9.0f, ATTN_BF16);
    out[N - 1] = attn_float_to_half((float)ref[N - 1] - 0.7f, ATTN_BF16);
    const struct attn_tolerance tol = attn_grad_tolerance_for(ATTN_BF16, ROW);
    const struct attn_comparison one = attn_compare_parts(ref, out, N, ATTN_BF16, tol, 1);
    ck_assert_uint_eq(one.bad, 3);
    ck_assert_uint_eq(one.first_bad, 3);
    const size_t counts[] = {2, 3, 16};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        const struct attn_comparison c = attn_compare_parts(ref, out, N, ATTN_BF16, tol, counts[k]);
        ck_assert_uint_eq(c.bad, one.bad);
        ck_assert_uint_eq(c.nonfinite, 0);
        ck_assert_uint_eq(c.first_bad, one.first_bad);
        ck_assert_double_eq(c.max_abs_err, one.max_abs_err);
        ck_assert_double_eq_tol(c.rel_err, one.rel_err, 1e-12 * one.rel_err);
        ck_assert_int_eq(c.ok, one.ok);
    }
    out[3] = attn_float_to_half((float)ref[3], ATTN_BF16);
    out[500 * ROW + 2] = attn_float_to_half((float)ref[500 * ROW + 2], ATTN_BF16);
    out[N - 1] = 0x7fc0; /* a NaN, in the last part only: that part's first is the first */
    const struct attn_comparison nan = attn_compare_parts(ref, out, N, ATTN_BF16, tol, 16);
    ck_assert_uint_eq(nan.nonfinite, 1);
    ck_assert_uint_eq(nan.bad, 0);
    ck_assert_uint_eq(nan.first_bad, N - 1);
    ck_assert(!nan.ok);
}
END_TEST

START_TEST(test_compare_identical_ok)
{
    const double ref[5] = {1, -2.5, 0, 0.15625, 100};
    uint16_t out[5];
    for (int i = 0; i < 5; i++) out[i] = bf16((float)ref[i]);
    struct attn_comparison c =
        attn_compare(ref, out, 5, ATTN_BF16, attn_tolerance_for(ATTN_BF16));
    ck_assert(c.ok);
    ck_assert_uint_eq(c.bad, 0);
    ck_assert_uint_eq(c.nonfinite, 0);
    ck_assert_double_eq(c.max_abs_err, 0);
    ck_assert_double_eq(c.rel_err, 0);
}
END_TEST

START_TEST(test_compare_one_element_off)
{
    const double ref[4] = {1, 2, 3, 4};
    uint16_t out[4] = {bf16(1), bf16(2), bf16(4), bf16(4)};
    struct attn_comparison c =
        attn_compare(ref, out, 4, ATTN_BF16, attn_tolerance_for(ATTN_BF16));
    ck_assert(!c.ok);
    ck_assert_uint_eq(c.bad, 1);
    ck_assert_uint_eq(c.nonfinite, 0);
    ck_assert_uint_eq(c.first_bad, 2);
    ck_assert_double_eq(c.max_abs_err, 1.0);
    ck_assert_double_eq_tol(c.rel_err, 1.0 / sqrt(1 + 4 + 9 + 16), 1e-12);
}
END_TEST

START_TEST(test_compare_nan_output)
{
    const double ref[4] = {1, 2, 3, 4};
    uint16_t out[4] = {bf16(1), bf16(NAN), bf16(3), bf16(4)};
    struct attn_comparison c =
        attn_compare(ref, out, 4, ATTN_BF16, attn_tolerance_for(ATTN_BF16));
    ck_assert(!c.ok);
    ck_assert_uint_eq(c.nonfinite, 1);
    ck_assert_uint_eq(c.bad, 0);
    ck_assert_uint_eq(c.first_bad, 1);
}
END_TEST

START_TEST(test_compare_inf_output_fp16)
{
    const double ref[3] = {1, 2, 3};
    uint16_t out[3] = {fp16(1), fp16(2), 0x7C00};
    struct attn_comparison c =
        attn_compare(ref, out, 3, ATTN_FP16, attn_tolerance_for(ATTN_FP16));
    ck_assert(!c.ok);
    ck_assert_uint_eq(c.nonfinite, 1);
    ck_assert_uint_eq(c.first_bad, 2);
}
END_TEST

/* first_bad is the earliest of the bad and the non-finite elements. */
START_TEST(test_compare_first_bad_is_earliest)
{
    const double ref[4] = {1, 2, 3, 4};
    uint16_t out[4] = {bf16(1), bf16(5), bf16(3), bf16(NAN)};
    struct attn_comparison c =
        attn_compare(ref, out, 4, ATTN_BF16, attn_tolerance_for(ATTN_BF16));
    ck_assert_uint_eq(c.bad, 1);
    ck_assert_uint_eq(c.nonfinite, 1);
    ck_assert_uint_eq(c.first_bad, 1);
}
END_TEST

START_TEST(test_compare_rel_err_known_vector)
{
    /* ‖ref‖ = 5, ‖out - ref‖ = 0.5 → 0.1 */
    const double ref[4] = {3, 4, 0, 0};
    uint16_t out[4] = {bf16(3), bf16(4), bf16(0), bf16(0.5f)};
    struct attn_tolerance loose = {.atol = 1, .rtol = 0, .rel_l2 = 1};
    struct attn_comparison c = attn_compare(ref, out, 4, ATTN_BF16, loose);
    ck_assert_double_eq_tol(c.rel_err, 0.1, 1e-12);
    ck_assert_double_eq(c.max_abs_err, 0.5);
    ck_assert(c.ok);
    struct attn_tolerance tight = {.atol = 1, .rtol = 0, .rel_l2 = 0.05};
    ck_assert(!attn_compare(ref, out, 4, ATTN_BF16, tight).ok);
}
END_TEST

/* Each element within atol + rtol·|ref|, but a uniform bias fails rel_l2. */
START_TEST(test_compare_rel_l2_catches_bias)
{
    double ref[8];
    uint16_t out[8];
    for (int i = 0; i < 8; i++) {
        ref[i] = 1.0;
        out[i] = bf16(1.015625f); /* two bf16 steps above 1 */
    }
    struct attn_comparison c =
        attn_compare(ref, out, 8, ATTN_BF16, attn_tolerance_for(ATTN_BF16));
    ck_assert_uint_eq(c.bad, 0);
    ck_assert_double_eq_tol(c.rel_err, 0.015625, 1e-12);
    ck_assert(!c.ok);
}
END_TEST

START_TEST(test_compare_fp16_tighter_than_bf16)
{
    struct attn_tolerance b = attn_tolerance_for(ATTN_BF16), h = attn_tolerance_for(ATTN_FP16);
    ck_assert(h.atol < b.atol);
    ck_assert(h.rtol < b.rtol);
    ck_assert(h.rel_l2 < b.rel_l2);
    ck_assert(h.atol > 0 && h.rtol > 0 && h.rel_l2 > 0);
}
END_TEST

/* ================================================ problem sizes and counts */

START_TEST(test_flops_concrete)
{
    struct attn_problem p = problem(2, 3, 4, 5, false);
    ck_assert_double_eq(attn_flops(&p), 4.0 * 2 * 3 * 4 * 4 * 5); /* 1920 */
    p.causal = true;
    ck_assert_double_eq(attn_flops(&p), 960.0);
}
END_TEST

START_TEST(test_flops_large_no_overflow)
{
    struct attn_problem p = problem(1, 16, 16384, 128, false);
    ck_assert_double_eq(attn_flops(&p), 2.199023255552e12); /* 2^41 */
    p.causal = true;
    ck_assert_double_eq(attn_flops(&p), 1.099511627776e12);
    struct attn_problem big = problem(64, 128, 131072, 256, false); /* 2^57 */
    ck_assert_double_eq(attn_flops(&big), ldexp(1, 57));
}
END_TEST

START_TEST(test_bytes_and_elems)
{
    struct attn_problem p = problem(2, 3, 4, 5, true);
    ck_assert_uint_eq(attn_tensor_elems(&p), 120);
    ck_assert_double_eq(attn_bytes(&p), 4.0 * 120 * 2);
    p.dtype = ATTN_FP16;
    ck_assert_double_eq(attn_bytes(&p), 960.0);
    struct attn_problem big = problem(16, 64, 65536, 256, false); /* 2^34 elements */
    ck_assert_uint_eq(attn_tensor_elems(&big), (size_t)1 << 34);
    ck_assert_double_eq(attn_bytes(&big), ldexp(1, 37));
}
END_TEST

/* B·H·S·D = 2^64 wrapped to 0 elements in size_t: the count saturates
 * instead, and the byte count (a double) is exact. */
START_TEST(test_elems_overflow_saturates)
{
    struct attn_problem p = problem(16777216, 16777216, 1024, 64, false); /* 2^64 */
    ck_assert(attn_tensor_elems(&p) == SIZE_MAX);
    ck_assert_double_eq(attn_bytes(&p), ldexp(1, 67));
    struct attn_problem q = problem(1 << 20, 1 << 20, 1 << 20, 1 << 20, false); /* 2^80 */
    ck_assert(attn_tensor_elems(&q) == SIZE_MAX);
    struct attn_problem edge = problem(1 << 16, 1 << 16, 1 << 16, 1 << 15, false); /* 2^63 */
    ck_assert(attn_tensor_elems(&edge) == (size_t)1 << 63);
}
END_TEST

START_TEST(test_dtype_names)
{
    enum attn_dtype t;
    ck_assert_int_eq(attn_dtype_parse("bf16", &t), ATTN_OK);
    ck_assert_int_eq(t, ATTN_BF16);
    ck_assert_int_eq(attn_dtype_parse("fp16", &t), ATTN_OK);
    ck_assert_int_eq(t, ATTN_FP16);
    ck_assert_int_eq(attn_dtype_parse("fp8", &t), ATTN_ERR_INPUT);
    ck_assert_message_has("fp8");
    ck_assert_str_eq(attn_dtype_name(ATTN_BF16), "bf16");
    ck_assert_str_eq(attn_dtype_name(ATTN_FP16), "fp16");
    ck_assert_uint_eq(attn_dtype_bytes(ATTN_BF16), 2);
    ck_assert_uint_eq(attn_dtype_bytes(ATTN_FP16), 2);
}
END_TEST

START_TEST(test_error_messages)
{
    attn_error_clear();
    ck_assert_str_eq(attn_error_message(), "");
    ck_assert_int_eq(ATTN_FAIL(ATTN_ERR_INPUT, "bad %s", "thing"), ATTN_ERR_INPUT);
    ck_assert_str_eq(attn_error_message(), "bad thing"); /* user input: no source place */
    ck_assert_int_eq(ATTN_FAIL(ATTN_ERR, "broke %d", 7), ATTN_ERR);
    ck_assert_message_has("check_cpu.c:");
    ck_assert_message_has("broke 7");
    attn_error_clear();
    ck_assert_str_eq(attn_error_message(), "");
}
END_TEST

/* Points are equal exactly when all eight fields are: each one changed alone
 * makes them differ (both ways round); the scale is derived, not compared. */
START_TEST(test_problem_equal_every_field)
{
    const struct attn_problem base = problem(2, 16, 1024, 64, true);
    struct attn_problem same = base;
    same.scale = 0.5f;
    ck_assert(attn_problem_equal(&base, &base));
    ck_assert(attn_problem_equal(&base, &same));
    same.kv_heads = base.heads; /* 0 and heads are the same: every head its own K and V */
    ck_assert(attn_problem_equal(&base, &same));
    struct attn_problem changed[8];
    for (int i = 0; i < 8; i++) changed[i] = base;
    changed[0].batch = 3;
    changed[1].heads = 8;
    changed[2].seq_len = 2048;
    changed[3].head_dim = 128;
    changed[4].causal = false;
    changed[5].dtype = ATTN_FP16;
    changed[6].kv_heads = 4;
    snprintf(changed[7].varlen, sizeof changed[7].varlen, "uniform:0.5");
    for (int i = 0; i < 8; i++) {
        ck_assert_msg(!attn_problem_equal(&base, &changed[i]), "field %d changed, still equal", i);
        ck_assert_msg(!attn_problem_equal(&changed[i], &base), "field %d changed, still equal", i);
    }
}
END_TEST

static struct result_key make_key(const char *variant, const char *dtype, int batch, int heads,
                                       int seq, int dim, int causal, const char *mode)
{
    struct result_key k = {.batch = batch, .heads = heads, .seq_len = seq, .head_dim = dim,
                           .causal = causal};
    snprintf(k.variant, sizeof k.variant, "%s", variant);
    snprintf(k.dtype, sizeof k.dtype, "%s", dtype);
    snprintf(k.mode, sizeof k.mode, "%s", mode);
    return k;
}

START_TEST(test_result_key_problem)
{
    struct attn_problem p;
    const struct result_key fp16 = make_key("naive", "fp16", 2, 16, 1024, 64, 1, "graph");
    result_key_problem(&fp16, &p);
    ck_assert_int_eq(p.batch, 2);
    ck_assert_int_eq(p.heads, 16);
    ck_assert_int_eq(p.seq_len, 1024);
    ck_assert_int_eq(p.head_dim, 64);
    ck_assert(p.causal);
    ck_assert_int_eq(p.dtype, ATTN_FP16);
    const struct result_key bf16 = make_key("naive", "bf16", 8, 4, 512, 128, 0, "cold");
    result_key_problem(&bf16, &p);
    ck_assert(!p.causal);
    ck_assert_int_eq(p.dtype, ATTN_BF16);
    struct attn_problem want = problem(8, 4, 512, 128, false);
    ck_assert(attn_problem_equal(&p, &want));
}
END_TEST

/* Keys are equal exactly when all eight fields are. */
START_TEST(test_result_key_equal_every_field)
{
    const struct result_key base = make_key("naive", "bf16", 2, 16, 1024, 64, 1, "cold");
    const struct result_key changed[8] = {
        make_key("inplace", "bf16", 2, 16, 1024, 64, 1, "cold"),
        make_key("naive", "fp16", 2, 16, 1024, 64, 1, "cold"),
        make_key("naive", "bf16", 3, 16, 1024, 64, 1, "cold"),
        make_key("naive", "bf16", 2, 8, 1024, 64, 1, "cold"),
        make_key("naive", "bf16", 2, 16, 2048, 64, 1, "cold"),
        make_key("naive", "bf16", 2, 16, 1024, 128, 1, "cold"),
        make_key("naive", "bf16", 2, 16, 1024, 64, 0, "cold"),
        make_key("naive", "bf16", 2, 16, 1024, 64, 1, "graph"),
    };
    const struct result_key same = base;
    ck_assert(result_key_equal(&base, &same));
    for (int i = 0; i < 8; i++) {
        ck_assert_msg(!result_key_equal(&base, &changed[i]), "field %d changed, still equal", i);
        ck_assert_msg(!result_key_equal(&changed[i], &base), "field %d changed, still equal", i);
    }
}
END_TEST

/* The reader's index hashes what result_key_equal compares: rows that differ
 * in any one key field are all kept, and each is found by its key. */
START_TEST(test_results_find_by_every_field)
{
    char path[32];
    write_temp(path, "variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,ms_median,noise_rel\n"
                     "naive,bf16,2,16,1024,64,1,cold,ok,1.0,0.01\n"
                     "inplace,bf16,2,16,1024,64,1,cold,ok,1.1,0.01\n"
                     "naive,fp16,2,16,1024,64,1,cold,ok,1.2,0.01\n"
                     "naive,bf16,3,16,1024,64,1,cold,ok,1.3,0.01\n"
                     "naive,bf16,2,8,1024,64,1,cold,ok,1.4,0.01\n"
                     "naive,bf16,2,16,2048,64,1,cold,ok,1.5,0.01\n"
                     "naive,bf16,2,16,1024,128,1,cold,ok,1.6,0.01\n"
                     "naive,bf16,2,16,1024,64,0,cold,ok,1.7,0.01\n"
                     "naive,bf16,2,16,1024,64,1,graph,ok,1.8,0.01\n");
    struct result_set set;
    ck_assert_int_eq(results_read(path, &set), ATTN_OK);
    unlink(path);
    ck_assert_uint_eq(set.count, 9);
    for (size_t i = 0; i < set.count; i++)
        ck_assert_ptr_eq(results_find(&set, &set.rows[i].key), &set.rows[i]);
    const struct result_key absent = make_key("naive", "fp16", 2, 16, 1024, 64, 0, "graph");
    ck_assert_ptr_null(results_find(&set, &absent));
    results_free(&set);
}
END_TEST

/* ===================================================================== grid */

/* The init key: normal (N(0, 1)) where a point names none, uniform,
 * normal:SIGMA in its one spelling; --init sets the default of the points
 * that name none; anything else refused with the place. */
START_TEST(test_grid_init_key)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=2 seq=64 dim=64", "t"), ATTN_OK);
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=2 seq=64 dim=64 init=uniform,normal:0.5", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 3);
    ck_assert(g.points[0].init_sigma == ATTN_INIT_DEFAULT_SIGMA && ATTN_INIT_DEFAULT_SIGMA == 1.0f);
    ck_assert(g.points[1].init_sigma == 0);
    ck_assert(g.points[2].init_sigma == 0.5f);
    ck_assert(!attn_problem_equal(&g.points[0], &g.points[1]));
    static const char *const bad[] = {"init=gauss", "init=normal:1", "init=normal:0", "init=normal:-1",
                                      "init=normal:2000", "init=normal:", "init=Normal"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char spec[96];
        snprintf(spec, sizeof spec, "batch=1 heads=2 seq=64 dim=64 %s", bad[i]);
        ck_assert_msg(grid_add_spec(&g, spec, "f:3") == ATTN_ERR_INPUT, "%s accepted", bad[i]);
        ck_assert_message_has("f:3: 'init=");
    }
    grid_free(&g);
    struct options o;
    char *argv[] = {"attnbench", "--init", "uniform", "--point", "batch=1 heads=2 seq=64 dim=64", "--point",
                    "batch=1 heads=2 seq=64 dim=64 init=normal", NULL};
    ck_assert_int_eq(options_parse(&o, 7, argv), ATTN_OK);
    ck_assert_uint_eq(o.grid.count, 2);
    ck_assert(o.grid.points[0].init_sigma == 0 && o.grid.points[1].init_sigma == 1.0f);
    grid_free(&o.grid);
    char *bad_argv[] = {"attnbench", "--init", "gauss", NULL};
    ck_assert_int_eq(options_parse(&o, 3, bad_argv), ATTN_ERR_INPUT);
    ck_assert_message_has("--init: 'gauss'");
    grid_free(&o.grid);
}
END_TEST

/* The pass key: fwd where a point names none, bwd and fwd_bwd apart from it
 * (three points), --pass sets the default of the points that name none;
 * anything else refused with the place and the choices. */
START_TEST(test_grid_pass_key)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=2 seq=64 dim=64", "t"), ATTN_OK);
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=2 seq=64 dim=64 pass=fwd,bwd,fwd_bwd", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 3); /* pass=fwd is the first point again: dropped */
    ck_assert_int_eq(g.points[0].pass, ATTN_PASS_FWD);
    ck_assert_int_eq(g.points[1].pass, ATTN_PASS_BWD);
    ck_assert_int_eq(g.points[2].pass, ATTN_PASS_FWD_BWD);
    ck_assert(!attn_problem_equal(&g.points[0], &g.points[1]));
    ck_assert(!attn_problem_equal(&g.points[1], &g.points[2]));
    static const char *const bad[] = {"pass=back", "pass=BWD", "pass=fwd+bwd", "pass=bwd,"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0] - 1; i++) {
        char spec[96];
        snprintf(spec, sizeof spec, "batch=1 heads=2 seq=64 dim=64 %s", bad[i]);
        ck_assert_msg(grid_add_spec(&g, spec, "f:4") == ATTN_ERR_INPUT, "%s accepted", bad[i]);
        ck_assert_message_has("f:4: 'pass=");
        ck_assert_message_has("expected fwd, bwd, fwd_bwd");
    }
    grid_free(&g);
    struct options o;
    char *argv[] = {"attnbench", "--pass", "bwd", "--point", "batch=1 heads=2 seq=64 dim=64", "--point",
                    "batch=1 heads=2 seq=64 dim=64 pass=fwd", NULL};
    ck_assert_int_eq(options_parse(&o, 7, argv), ATTN_OK);
    ck_assert_uint_eq(o.grid.count, 2);
    ck_assert(o.grid.points[0].pass == ATTN_PASS_BWD && o.grid.points[1].pass == ATTN_PASS_FWD);
    grid_free(&o.grid);
    char *bad_argv[] = {"attnbench", "--pass", "back", NULL};
    ck_assert_int_eq(options_parse(&o, 3, bad_argv), ATTN_ERR_INPUT);
    ck_assert_message_has("--pass: 'back' is not fwd, bwd, fwd_bwd");
    grid_free(&o.grid);
}
END_TEST

/* FLOPs of a pass: the backward 2.5 times the forward's, fwd_bwd 3.5 times,
 * causal halved alike; bytes: the backward reads Q, K, V, O, dO and the
 * statistics and writes dQ, dK, dV; fwd_bwd adds the forward's and the
 * statistics written. Names and labels. */
START_TEST(test_problem_pass_counts)
{
    struct attn_problem p = {.batch = 2, .heads = 8, .kv_heads = 2, .seq_len = 256, .head_dim = 64};
    const double fwd = attn_flops(&p), fwd_bytes = attn_bytes(&p);
    ck_assert_double_eq(fwd, 4.0 * 2 * 8 * 256.0 * 256 * 64);
    const double q = 2.0 * 256 * 8 * 64 * 2, kv = 2.0 * 256 * 2 * 64 * 2, stats = 2.0 * 256 * 8 * 4;
    ck_assert_double_eq(fwd_bytes, 2 * q + 2 * kv);
    p.pass = ATTN_PASS_BWD;
    ck_assert_double_eq(attn_flops(&p), 2.5 * fwd);
    ck_assert_double_eq(attn_bytes(&p), 4 * q + 4 * kv + stats);
    p.pass = ATTN_PASS_FWD_BWD;
    ck_assert_double_eq(attn_flops(&p), 3.5 * fwd);
    ck_assert_double_eq(attn_bytes(&p), 6 * q + 6 * kv + 2 * stats);
    p.causal = true;
    ck_assert_double_eq(attn_flops(&p), 3.5 * fwd / 2);
    char buf[ATTN_LABEL_MAX];
    ck_assert_str_eq(attn_problem_label(&p, buf, sizeof buf), "B=2 H=8 KV=2 S=256 D=64 causal init=uniform fwd_bwd");
    for (int i = 0; i < ATTN_PASS_COUNT; i++) {
        enum attn_pass back;
        ck_assert_int_eq(attn_pass_parse(attn_pass_name((enum attn_pass)i), &back), ATTN_OK);
        ck_assert_int_eq(back, i);
    }
    enum attn_pass untouched = ATTN_PASS_BWD;
    ck_assert_int_eq(attn_pass_parse("", &untouched), ATTN_ERR_INPUT);
    ck_assert_int_eq(untouched, ATTN_PASS_BWD);
}
END_TEST

/* A grid spec and why grid_add_spec refuses it. */
struct refused_spec {
    const char *spec, *why;
};

/* Each spec of bad[] refused (ATTN_ERR_INPUT) with a message that starts
 * with where and says its why; g keeps the points it had. */
static void assert_specs_refused(struct grid *g, const struct refused_spec *bad, size_t n, const char *where)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%s: ", where);
    const size_t count = g->count;
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(grid_add_spec(g, bad[i].spec, where) == ATTN_ERR_INPUT, "%s accepted", bad[i].spec);
        ck_assert_message_has(prefix);
        ck_assert_message_has(bad[i].why);
    }
    ck_assert_uint_eq(g->count, count);
}

/* Decode points: q_len= (a list) with kv_len= (seq= by another name); a
 * q_len equal to the sequence is the prefill point; a q_len past the
 * sequence, a ragged batch or a backward pass with it, and kv_len= beside
 * seq= are refused, naming why. */
START_TEST(test_grid_decode_keys)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_spec(&g, "batch=64 heads=32 kv_heads=8 q_len=1,4 kv_len=4096 dim=128 causal=0,1", "t"),
                     ATTN_OK);
    ck_assert_uint_eq(g.count, 4);
    for (size_t i = 0; i < g.count; i++) {
        ck_assert_int_eq(g.points[i].seq_len, 4096);
        ck_assert(attn_is_decode(&g.points[i]));
    }
    ck_assert_int_eq(attn_q_len(&g.points[0]), 1);
    ck_assert_int_eq(attn_q_len(&g.points[2]), 4);
    char buf[ATTN_LABEL_MAX];
    ck_assert_str_eq(attn_problem_label(&g.points[2], buf, sizeof buf), "B=64 H=32 KV=8 Q=4 S=4096 D=128 full");
    ck_assert_int_eq(grid_add_spec(&g, "batch=2 heads=4 seq=64 dim=64", "t"), ATTN_OK);
    ck_assert_int_eq(grid_add_spec(&g, "batch=2 heads=4 seq=64 q_len=64 dim=64", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 5); /* q_len = seq: the prefill point again, dropped */
    ck_assert(!attn_is_decode(&g.points[4]) && g.points[4].q_len == 0);
    static const struct refused_spec bad[] = {
        {"batch=2 heads=4 seq=64 q_len=65 dim=64", "q_len=65 is not in 1 .. kv_len=64"},
        {"batch=2 heads=4 seq=64 kv_len=64 dim=64", "kv_len= and seq= are one key"},
        {"heads=4 lens=3+64 q_len=4 dim=64", "the shortest holds 3 tokens"},
        {"batch=2 heads=4 seq=64 q_len=1 dim=64 pass=bwd", "a decode is inference"},
        {"batch=2 heads=4 seq=64 q_len=0 dim=64", "'q_len=0': expected an integer"},
    };
    assert_specs_refused(&g, bad, sizeof bad / sizeof bad[0], "f:7");
    ck_assert_uint_eq(g.count, 5);
    grid_free(&g);
}
END_TEST

/* A decode's counts: Q and O at q_len rows, K and V at the whole sequence;
 * FLOPs over the keys its queries see (causal: bottom-right, q·S − q²/2,
 * which at q = S is the prefill's half). */
START_TEST(test_problem_decode_counts)
{
    struct attn_problem p = {.batch = 3, .heads = 8, .kv_heads = 2, .seq_len = 100, .head_dim = 64, .q_len = 4};
    ck_assert_uint_eq(attn_tensor_elems(&p), 3u * 8 * 4 * 64);
    ck_assert_uint_eq(attn_kv_tensor_elems(&p), 3u * 2 * 100 * 64);
    ck_assert_double_eq(attn_flops(&p), 4.0 * 3 * 8 * 64 * 4 * 100);
    ck_assert_double_eq(attn_bytes(&p), 2 * (3.0 * 8 * 4 * 64 * 2) + 2 * (3.0 * 2 * 100 * 64 * 2));
    p.causal = true;
    ck_assert_double_eq(attn_flops(&p), 4.0 * 3 * 8 * 64 * (4.0 * 100 - 8));
    struct attn_problem full = p;
    full.q_len = 0;
    p.q_len = 100;
    ck_assert_double_eq(attn_flops(&p), attn_flops(&full));
    ck_assert(attn_problem_equal(&p, &full) && !attn_is_decode(&p));
}
END_TEST

/* The reference's decode is its prefill's last rows: query i of q sees the
 * keys up to S − q + i when causal (bottom-right), all S otherwise; grouped
 * K/V heads; the arithmetic is the same row for row, so the rows are equal
 * exactly. */
START_TEST(test_reference_decode_is_prefills_last_rows)
{
    const int B = 2, H = 4, KV = 2, S = 37, D = 16, QL = 5;
    for (int causal = 0; causal <= 1; causal++) {
        struct attn_problem full = {.batch = B, .heads = H, .kv_heads = KV, .seq_len = S, .head_dim = D,
                                    .causal = causal, .dtype = ATTN_BF16, .scale = 0.25f};
        struct attn_problem dec = full;
        dec.q_len = QL;
        const size_t nq = attn_tensor_elems(&full), nkv = attn_kv_tensor_elems(&full);
        ck_assert_uint_eq(attn_tensor_elems(&dec), (size_t)B * H * QL * D);
        uint16_t *q = malloc(nq * 2), *k = malloc(nkv * 2), *v = malloc(nkv * 2), *qd = malloc(nq * 2);
        double *o = malloc(nq * sizeof *o), *od = malloc(nq * sizeof *od);
        uint32_t x = 12345u + (uint32_t)causal;
        for (size_t i = 0; i < nq; i++) q[i] = attn_float_to_half((float)((x = x * 1664525u + 1013904223u) >> 8) / (1 << 23) - 1, ATTN_BF16);
        for (size_t i = 0; i < nkv; i++) k[i] = attn_float_to_half((float)((x = x * 1664525u + 1013904223u) >> 8) / (1 << 23) - 1, ATTN_BF16);
        for (size_t i = 0; i < nkv; i++) v[i] = attn_float_to_half((float)((x = x * 1664525u + 1013904223u) >> 8) / (1 << 23) - 1, ATTN_BF16);
        for (int bh = 0; bh < B * H; bh++) /* each head's last QL rows */
            memcpy(qd + (size_t)bh * QL * D, q + ((size_t)bh * S + S - QL) * D, (size_t)QL * D * 2);
        ck_assert_int_eq(attn_reference_f64(&full, q, k, v, o), ATTN_OK);
        ck_assert_int_eq(attn_reference_f64(&dec, qd, k, v, od), ATTN_OK);
        for (int bh = 0; bh < B * H; bh++)
            for (int i = 0; i < QL * D; i++)
                ck_assert_msg(od[(size_t)bh * QL * D + i] == o[((size_t)bh * S + S - QL) * D + i],
                              "causal=%d head %d element %d", causal, bh, i);
        free(q), free(k), free(v), free(qd), free(o), free(od);
    }
}
END_TEST

/* page=: a paged cache's tokens per page, 0 the contiguous cache beside it;
 * its own points (dense and paged rows of one point are two); refused with
 * a ragged batch or a backward pass. */
START_TEST(test_grid_page_key)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_spec(&g, "batch=8 heads=32 kv_heads=8 kv_len=1000 q_len=1 dim=128 causal=1 page=0,16,128", "t"),
                     ATTN_OK);
    ck_assert_uint_eq(g.count, 3);
    ck_assert(!attn_is_paged(&g.points[0]));
    ck_assert_int_eq(g.points[1].page, 16);
    ck_assert_int_eq(attn_pages_per_seq(&g.points[1]), 63); /* 1000 / 16, the last page holding 8 */
    ck_assert_int_eq(attn_pages_per_seq(&g.points[2]), 8);
    ck_assert_uint_eq(attn_kv_tensor_elems(&g.points[1]), 8u * 63 * 16 * 8 * 128);
    ck_assert_uint_eq(attn_kv_tensor_elems(&g.points[0]), 8u * 8 * 1000 * 128);
    ck_assert_double_eq(attn_bytes(&g.points[1]), attn_bytes(&g.points[0])); /* the bytes read are the same */
    ck_assert(!attn_problem_equal(&g.points[0], &g.points[1]));
    char buf[ATTN_LABEL_MAX];
    ck_assert_str_eq(attn_problem_label(&g.points[2], buf, sizeof buf), "B=8 H=32 KV=8 Q=1 S=1000 D=128 causal page=128");
    static const struct refused_spec bad[] = {
        {"batch=2 heads=4 seq=64 dim=64 page=-1", "'page=-1': expected an integer"},
        {"batch=2 heads=4 seq=64 dim=64 page=16 varlen=uniform:0.5", "page=16 with a packed ragged batch"},
        {"batch=2 heads=4 seq=64 dim=64 page=16 pass=bwd", "a paged cache serves inference"},
    };
    assert_specs_refused(&g, bad, sizeof bad / sizeof bad[0], "f:3");
    ck_assert_uint_eq(g.count, 3);
    grid_free(&g);
}
END_TEST

/* The page table: a permutation of the cache's pages, the same for the same
 * point, another for another page size; not the identity (the pages are
 * shuffled, as a serving engine's allocator leaves them); and the offset of
 * a token through it. */
START_TEST(test_page_table_is_a_shuffle)
{
    struct attn_problem p = {.batch = 5, .heads = 4, .kv_heads = 2, .seq_len = 100, .head_dim = 8, .page = 16, .q_len = 1};
    const int n = p.batch * attn_pages_per_seq(&p);
    ck_assert_int_eq(n, 35);
    int t1[35], t2[35], seen[35] = {0};
    ck_assert_int_eq(attn_page_table(&p, t1), ATTN_OK);
    ck_assert_int_eq(attn_page_table(&p, t2), ATTN_OK);
    int moved = 0;
    for (int i = 0; i < n; i++) {
        ck_assert(t1[i] >= 0 && t1[i] < n);
        seen[t1[i]]++;
        ck_assert_int_eq(t1[i], t2[i]);
        moved += t1[i] != i;
    }
    for (int i = 0; i < n; i++) ck_assert_int_eq(seen[i], 1);
    ck_assert_int_gt(moved, n / 2);
    /* sequence 3, K/V head 1, token 37: page t[3·7 + 2], slot 5 */
    ck_assert_uint_eq(attn_kv_offset(&p, t1, 3, 1, 37), (((size_t)t1[23] * 16 + 5) * 2 + 1) * 8);
    struct attn_problem dense = p;
    dense.page = 0;
    ck_assert_uint_eq(attn_kv_offset(&dense, NULL, 3, 1, 37), ((3u * 2 + 1) * 100 + 37) * 8);
    p.page = 32;
    int t3[20];
    ck_assert_int_eq(attn_page_table(&p, t3), ATTN_OK);
    dense.page = 0;
    ck_assert_int_eq(attn_page_table(&dense, t3), ATTN_ERR_INPUT);
}
END_TEST

/* The reference over a paged cache is the contiguous one's: the same K and
 * V scattered into shuffled pages (the last page's spare slots NaN, which
 * must not be read), decode and prefill, causal and not, exactly equal. */
START_TEST(test_reference_paged_is_dense)
{
    const int B = 3, H = 4, KV = 2, S = 45, D = 16;
    for (int causal = 0; causal <= 1; causal++)
        for (int ql = 0; ql <= 3; ql += 3) {
            struct attn_problem dense = {.batch = B, .heads = H, .kv_heads = KV, .seq_len = S, .head_dim = D,
                                         .causal = causal, .dtype = ATTN_BF16, .scale = 0.25f, .q_len = ql};
            struct attn_problem paged = dense;
            paged.page = 16;
            const size_t nq = attn_tensor_elems(&dense), nkv = attn_kv_tensor_elems(&dense);
            const size_t npg = attn_kv_tensor_elems(&paged);
            uint16_t *q = malloc(nq * 2), *k = malloc(nkv * 2), *v = malloc(nkv * 2);
            uint16_t *kp = malloc(npg * 2), *vp = malloc(npg * 2);
            double *o = malloc(nq * sizeof *o), *op = malloc(nq * sizeof *op);
            int *table = malloc((size_t)B * attn_pages_per_seq(&paged) * sizeof *table);
            ck_assert(q && k && v && kp && vp && o && op && table);
            uint32_t x = 777u + (uint32_t)(causal * 10 + ql);
            for (size_t i = 0; i < nq; i++) q[i] = attn_float_to_half((float)((x = x * 1664525u + 1013904223u) >> 8) / (1 << 23) - 1, ATTN_BF16);
            for (size_t i = 0; i < nkv; i++) k[i] = attn_float_to_half((float)((x = x * 1664525u + 1013904223u) >> 8) / (1 << 23) - 1, ATTN_BF16);
            for (size_t i = 0; i < nkv; i++) v[i] = attn_float_to_half((float)((x = x * 1664525u + 1013904223u) >> 8) / (1 << 23) - 1, ATTN_BF16);
            for (size_t i = 0; i < npg; i++) kp[i] = vp[i] = attn_cache_tail(ATTN_BF16); /* slots no token fills */
            ck_assert_int_eq(attn_page_table(&paged, table), ATTN_OK);
            for (int b = 0; b < B; b++)
                for (int h = 0; h < KV; h++)
                    for (int t = 0; t < S; t++) {
                        memcpy(kp + attn_kv_offset(&paged, table, b, h, t), k + attn_kv_offset(&dense, NULL, b, h, t), D * 2);
                        memcpy(vp + attn_kv_offset(&paged, table, b, h, t), v + attn_kv_offset(&dense, NULL, b, h, t), D * 2);
                    }
            ck_assert_int_eq(attn_reference_f64(&dense, q, k, v, o), ATTN_OK);
            ck_assert_int_eq(attn_reference_f64(&paged, q, kp, vp, op), ATTN_OK);
            for (size_t i = 0; i < nq; i++)
                ck_assert_msg(o[i] == op[i], "causal=%d q_len=%d element %zu: %g against %g", causal, ql, i, op[i], o[i]);
            free(q), free(k), free(v), free(kp), free(vp), free(o), free(op), free(table);
        }
}
END_TEST

/* A ragged cache (kv_lens=, kv_varlen=: a decode's varlen): Q and O dense
 * at q_len rows, K and V padded to the longest (seq_len rows a head), the
 * counts over the lengths; each sequence's rows are those of a dense
 * decode of its own length, exactly, and a reference that attends to the
 * rows past the lengths (attn_cache_tail) fails the comparison; refused
 * without q_len, or when a cache is shorter than its new tokens. */
START_TEST(test_ragged_cache_decode)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_spec(&g, "heads=4 kv_heads=2 kv_lens=1+40+17 q_len=1 dim=16 causal=0,1", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 2);
    const struct attn_problem *rp = &g.points[1];
    ck_assert(attn_is_decode(rp) && attn_is_varlen(rp) && !attn_is_packed(rp));
    ck_assert_int_eq(rp->batch, 3);
    ck_assert_int_eq(rp->seq_len, 40);
    ck_assert_uint_eq(attn_tensor_elems(rp), 3u * 4 * 1 * 16);
    ck_assert_uint_eq(attn_kv_tensor_elems(rp), 3u * 2 * 40 * 16);
    ck_assert_double_eq(attn_flops(rp), 4.0 * 4 * 16 * (1.0 * 58 - 3 * 0.5));
    ck_assert_double_eq(attn_bytes(rp), 2 * (3.0 * 4 * 1 * 16 * 2) + 2 * (58.0 * 2 * 16 * 2));
    static const struct refused_spec bad[] = {
        {"heads=4 kv_lens=1+40 dim=16", "kv_lens= and kv_varlen= are a decode's cached lengths: give q_len="},
        {"heads=4 kv_lens=3+40 q_len=4 dim=16", "the shortest holds 3 tokens, fewer than its new ones"},
    };
    assert_specs_refused(&g, bad, sizeof bad / sizeof bad[0], "f:9");
    /* the reference: sequence b against its own first lens[b] keys, as a dense decode of that length */
    for (int causal = 0; causal <= 1; causal++) {
        const int B = 3, H = 4, KV = 2, S = 40, D = 16, QL = 2, lens[3] = {2, 40, 17};
        struct attn_problem p = {.batch = B, .heads = H, .kv_heads = KV, .seq_len = S, .head_dim = D, .causal = causal,
                                 .dtype = ATTN_BF16, .scale = 0.25f, .q_len = QL};
        snprintf(p.varlen, sizeof p.varlen, "lens:2+40+17");
        const size_t nq = attn_tensor_elems(&p), nkv = attn_kv_tensor_elems(&p);
        uint16_t *q = malloc(nq * 2), *k = malloc(nkv * 2), *v = malloc(nkv * 2);
        double *o = malloc(nq * sizeof *o), *one = malloc(nq * sizeof *one);
        uint32_t x = 4242u + (uint32_t)causal;
        for (size_t i = 0; i < nq; i++) q[i] = attn_float_to_half((float)((x = x * 1664525u + 1013904223u) >> 8) / (1 << 23) - 1, ATTN_BF16);
        for (size_t i = 0; i < nkv; i++) k[i] = v[i] = attn_cache_tail(ATTN_BF16); /* what the runner leaves past each cache */
        for (int b = 0; b < B; b++)
            for (int h = 0; h < KV; h++)
                for (int t = 0; t < lens[b]; t++)
                    for (int d = 0; d < D; d++) {
                        const size_t at = (((size_t)b * KV + h) * S + t) * D + d;
                        k[at] = attn_float_to_half((float)((x = x * 1664525u + 1013904223u) >> 8) / (1 << 23) - 1, ATTN_BF16);
                        v[at] = attn_float_to_half((float)((x = x * 1664525u + 1013904223u) >> 8) / (1 << 23) - 1, ATTN_BF16);
                    }
        ck_assert_int_eq(attn_reference_f64(&p, q, k, v, o), ATTN_OK);
        for (int b = 0; b < B; b++) {
            struct attn_problem seq = {.batch = 1, .heads = H, .kv_heads = KV, .seq_len = lens[b], .head_dim = D,
                                       .causal = causal, .dtype = ATTN_BF16, .scale = 0.25f, .q_len = QL};
            const size_t n1 = (size_t)H * QL * D, nk1 = (size_t)KV * lens[b] * D;
            uint16_t *kseq = malloc(nk1 * 2), *vseq = malloc(nk1 * 2);
            for (int h = 0; h < KV; h++) {
                memcpy(kseq + (size_t)h * lens[b] * D, k + ((size_t)b * KV + h) * S * D, (size_t)lens[b] * D * 2);
                memcpy(vseq + (size_t)h * lens[b] * D, v + ((size_t)b * KV + h) * S * D, (size_t)lens[b] * D * 2);
            }
            ck_assert_int_eq(attn_reference_f64(&seq, q + b * n1, kseq, vseq, one), ATTN_OK);
            for (size_t i = 0; i < n1; i++)
                ck_assert_msg(o[b * n1 + i] == one[i], "causal=%d sequence %d element %zu", causal, b, i);
            free(kseq), free(vseq);
        }
        /* a kernel that attends to the rows past each length fails validation */
        struct attn_problem all = p;
        all.varlen[0] = '\0';
        double *o_all = malloc(nq * sizeof *o_all);
        uint16_t *got = malloc(nq * 2);
        ck_assert(o_all && got);
        ck_assert_int_eq(attn_reference_f64(&all, q, k, v, o_all), ATTN_OK);
        for (size_t i = 0; i < nq; i++) got[i] = attn_float_to_half((float)o_all[i], ATTN_BF16);
        ck_assert(!attn_compare(o, got, nq, ATTN_BF16, attn_tolerance_for(ATTN_BF16)).ok);
        free(o_all), free(got);
        free(q), free(k), free(v), free(o), free(one);
    }
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_lists_and_defaults)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_spec(&g, "batch=4,2 heads=8 seq=128 dim=64", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 2);
    ck_assert_int_eq(g.points[0].batch, 4); /* values keep the spec's order */
    ck_assert_int_eq(g.points[1].batch, 2);
    for (size_t i = 0; i < g.count; i++) {
        ck_assert_int_eq(g.points[i].heads, 8);
        ck_assert_int_eq(g.points[i].seq_len, 128);
        ck_assert_int_eq(g.points[i].head_dim, 64);
        ck_assert(!g.points[i].causal);
        ck_assert_int_eq(g.points[i].dtype, ATTN_BF16);
        ck_assert_double_eq_tol(g.points[i].scale, 0.125, 1e-7);
    }
    grid_free(&g);
    ck_assert_ptr_null(g.points);
    ck_assert_uint_eq(g.count, 0);
}
END_TEST

START_TEST(test_grid_range_powers_of_two)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=1 seq=128..1024 dim=32", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 4);
    const int want[4] = {128, 256, 512, 1024};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(g.points[i].seq_len, want[i]);
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=1 seq=16..16 dim=32", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 5);
    ck_assert_int_eq(g.points[4].seq_len, 16);
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_tokens_and_hidden)
{
    struct grid g = {0};
    ck_assert_int_eq(
        grid_add_spec(&g, "tokens=4096 hidden=1024 seq=512,1024 dim=64,128", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 4);
    bool seen[2][2] = {{false}};
    for (size_t i = 0; i < g.count; i++) {
        const struct attn_problem *p = &g.points[i];
        ck_assert_int_eq(p->batch * p->seq_len, 4096);
        ck_assert_int_eq(p->heads * p->head_dim, 1024);
        seen[p->seq_len == 1024][p->head_dim == 128] = true;
    }
    ck_assert(seen[0][0] && seen[0][1] && seen[1][0] && seen[1][1]);
    grid_free(&g);
}
END_TEST

/* Grouped K/V heads (kv_heads=): points per value, the default, the counts. */
START_TEST(test_grid_kv_heads)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=32 kv_heads=8,1,32 seq=2048 dim=128", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 3);
    const int want[3] = {8, 1, 32};
    for (int i = 0; i < 3; i++) ck_assert_int_eq(attn_kv_heads(&g.points[i]), want[i]);
    /* the FLOPs are the heads'; K and V are read at kv_heads */
    const struct attn_problem *gqa = &g.points[0], *mha = &g.points[2];
    ck_assert(attn_flops(gqa) == attn_flops(mha));
    ck_assert(attn_bytes(mha) == 4.0 * 32 * 2048 * 128 * 2);
    ck_assert(attn_bytes(gqa) == 2.0 * (32 + 8) * 2048 * 128 * 2);
    ck_assert_uint_eq(attn_kv_tensor_elems(gqa), (size_t)8 * 2048 * 128);
    ck_assert_uint_eq(attn_tensor_elems(gqa), (size_t)32 * 2048 * 128);
    char label[96];
    ck_assert_str_eq(attn_problem_label(gqa, label, sizeof label), "B=1 H=32 KV=8 S=2048 D=128 full");
    ck_assert_str_eq(attn_problem_label(mha, label, sizeof label), "B=1 H=32 S=2048 D=128 full");
    /* no kv_heads: every head its own K and V; the same point as kv_heads=heads */
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=32 seq=2048 dim=128", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 3);
    /* with hidden=, kv_heads divides the derived heads */
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 hidden=4096 kv_heads=8 seq=2048 dim=128", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 3); /* hidden 4096 / dim 128 = 32 heads: the first point again */
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_kv_heads_refused)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=32 kv_heads=8,5 seq=64 dim=64", "llm.grid:7"),
                     ATTN_ERR_INPUT);
    ck_assert_message_has("llm.grid:7");
    ck_assert_message_has("kv_heads=5 does not divide heads=32");
    ck_assert_uint_eq(g.count, 0); /* all or nothing */
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=32 kv_heads=0 seq=64 dim=64", "t"), ATTN_ERR_INPUT);
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=32 kv_heads=x seq=64 dim=64", "t"), ATTN_ERR_INPUT);
    grid_free(&g);
}
END_TEST

/* pass in a results file: read when there, fwd when the file predates it or
 * leaves it empty; a point's fwd and bwd rows are two rows, each found by
 * its key; an unknown pass refused with the line. */
START_TEST(test_results_pass_column)
{
    char path[32];
    write_temp(path, "variant,dtype,batch,heads,seq_len,head_dim,causal,pass,mode,status,ms_median,noise_rel\n"
                     "naive,bf16,1,32,2048,128,1,bwd,cold,ok,1.0,0.01\n"
                     "naive,bf16,1,32,2048,128,1,fwd,cold,ok,1.1,0.01\n"
                     "naive,bf16,1,32,2048,128,1,fwd_bwd,cold,ok,1.2,0.01\n"
                     "naive,bf16,1,16,2048,128,1,,cold,ok,1.3,0.01\n");
    struct result_set set;
    ck_assert_int_eq(results_read(path, &set), ATTN_OK);
    unlink(path);
    ck_assert_uint_eq(set.count, 4);
    ck_assert_int_eq(set.rows[0].key.pass, ATTN_PASS_BWD);
    ck_assert_int_eq(set.rows[1].key.pass, ATTN_PASS_FWD);
    ck_assert_int_eq(set.rows[2].key.pass, ATTN_PASS_FWD_BWD);
    ck_assert_int_eq(set.rows[3].key.pass, ATTN_PASS_FWD); /* left empty */
    for (size_t i = 0; i < set.count; i++) ck_assert_ptr_eq(results_find(&set, &set.rows[i].key), &set.rows[i]);
    struct attn_problem p = {.batch = 1, .heads = 32, .seq_len = 2048, .head_dim = 128, .causal = true,
                             .init_sigma = 0, .pass = ATTN_PASS_BWD};
    struct result_key k;
    result_key_of("naive", &p, MODE_COLD, REGIME_BURST, &k);
    ck_assert_ptr_eq(results_find(&set, &k), &set.rows[0]);
    char label[256];
    ck_assert_str_eq(result_key_label(&k, label, sizeof label), "naive bf16 B=1 H=32 S=2048 D=128 causal init=uniform bwd cold");
    results_free(&set);
    write_temp(path, "variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,ms_median,noise_rel\n"
                     "naive,bf16,1,32,2048,128,1,cold,ok,1.0,0.01\n");
    ck_assert_int_eq(results_read(path, &set), ATTN_OK);
    unlink(path);
    ck_assert_int_eq(set.rows[0].key.pass, ATTN_PASS_FWD);
    results_free(&set);
    write_temp(path, "variant,dtype,batch,heads,seq_len,head_dim,causal,pass,mode,status,ms_median,noise_rel\n"
                     "naive,bf16,1,32,2048,128,1,backward,cold,ok,1.0,0.01\n");
    ck_assert_int_eq(results_read(path, &set), ATTN_ERR_INPUT);
    ck_assert_message_has(":2: unknown pass 'backward' (fwd, bwd, fwd_bwd)");
    unlink(path);
}
END_TEST

/* q_len in a results file: a decode's rows (q_len below seq_len) apart
 * from the prefill's, which reads alike with q_len = seq_len, left empty or
 * absent (a file from before the column); found by their keys; a q_len
 * past seq_len refused with the line. */
START_TEST(test_results_q_len_column)
{
    char path[32];
    write_temp(path, "variant,dtype,batch,heads,seq_len,q_len,head_dim,causal,mode,status,ms_median,noise_rel\n"
                     "naive,bf16,64,32,4096,1,128,1,cold,ok,1.0,0.01\n"
                     "naive,bf16,64,32,4096,4096,128,1,cold,ok,1.1,0.01\n"
                     "naive,bf16,64,32,4096,4,128,1,cold,ok,1.2,0.01\n"
                     "naive,bf16,64,32,2048,,128,1,cold,ok,1.3,0.01\n");
    struct result_set set;
    ck_assert_int_eq(results_read(path, &set), ATTN_OK);
    unlink(path);
    ck_assert_uint_eq(set.count, 4);
    ck_assert_int_eq(set.rows[0].key.q_len, 1);
    ck_assert_int_eq(set.rows[1].key.q_len, 0);
    ck_assert_int_eq(set.rows[2].key.q_len, 4);
    ck_assert_int_eq(set.rows[3].key.q_len, 0);
    for (size_t i = 0; i < set.count; i++) ck_assert_ptr_eq(results_find(&set, &set.rows[i].key), &set.rows[i]);
    struct attn_problem p = {.batch = 64, .heads = 32, .seq_len = 4096, .head_dim = 128, .causal = true, .q_len = 4};
    struct result_key k;
    result_key_of("naive", &p, MODE_COLD, REGIME_BURST, &k);
    ck_assert_ptr_eq(results_find(&set, &k), &set.rows[2]);
    char label[256];
    ck_assert_str_eq(result_key_label(&k, label, sizeof label), "naive bf16 B=64 H=32 Q=4 S=4096 D=128 causal init=uniform cold");
    results_free(&set);
    write_temp(path, "variant,dtype,batch,heads,seq_len,q_len,head_dim,causal,mode,status,ms_median,noise_rel\n"
                     "naive,bf16,64,32,4096,4097,128,1,cold,ok,1.0,0.01\n");
    ck_assert_int_eq(results_read(path, &set), ATTN_ERR_INPUT);
    ck_assert_message_has(":2: q_len '4097' is not in 1 .. seq_len 4096");
    unlink(path);
}
END_TEST

/* page in a results file: read when there, 0 (contiguous) when empty or
 * the file predates it; a paged and a contiguous row of one point are two
 * rows; the label says page=. */
START_TEST(test_results_page_column)
{
    char path[32];
    write_temp(path, "variant,dtype,batch,heads,seq_len,q_len,head_dim,causal,varlen,page,mode,status,ms_median,noise_rel\n"
                     "naive,bf16,64,32,4096,1,128,1,,0,cold,ok,1.0,0.01\n"
                     "naive,bf16,64,32,4096,1,128,1,,16,cold,ok,1.1,0.01\n"
                     "naive,bf16,64,32,4096,1,128,1,,,hot,ok,1.2,0.01\n");
    struct result_set set;
    ck_assert_int_eq(results_read(path, &set), ATTN_OK);
    unlink(path);
    ck_assert_uint_eq(set.count, 3);
    ck_assert_int_eq(set.rows[0].key.page, 0);
    ck_assert_int_eq(set.rows[1].key.page, 16);
    ck_assert_int_eq(set.rows[2].key.page, 0);
    struct attn_problem p = {.batch = 64, .heads = 32, .seq_len = 4096, .head_dim = 128, .causal = true, .q_len = 1,
                             .page = 16};
    struct result_key k;
    result_key_of("naive", &p, MODE_COLD, REGIME_BURST, &k);
    ck_assert_ptr_eq(results_find(&set, &k), &set.rows[1]);
    char label[256];
    ck_assert_str_eq(result_key_label(&k, label, sizeof label),
                     "naive bf16 B=64 H=32 Q=1 S=4096 D=128 causal page=16 init=uniform cold");
    results_free(&set);
    write_temp(path, "variant,dtype,batch,heads,seq_len,head_dim,causal,page,mode,status,ms_median,noise_rel\n"
                     "naive,bf16,64,32,4096,128,1,-3,cold,ok,1.0,0.01\n");
    ck_assert_int_eq(results_read(path, &set), ATTN_ERR_INPUT);
    ck_assert_message_has(":2: page '-3' is not 0 (contiguous) or tokens per page");
    unlink(path);
}
END_TEST

/* kv_heads in a results file: read when there, = heads when the file
 * predates it; two points apart only in kv_heads are two rows. */
START_TEST(test_results_kv_heads_column)
{
    char path[32];
    write_temp(path, "variant,dtype,batch,heads,kv_heads,seq_len,head_dim,causal,mode,status,ms_median,noise_rel\n"
                     "naive,bf16,1,32,8,2048,128,1,cold,ok,1.0,0.01\n"
                     "naive,bf16,1,32,32,2048,128,1,cold,ok,1.1,0.01\n"
                     "naive,bf16,1,16,,2048,128,1,cold,ok,1.2,0.01\n");
    struct result_set set;
    ck_assert_int_eq(results_read(path, &set), ATTN_OK);
    unlink(path);
    ck_assert_uint_eq(set.count, 3);
    ck_assert_int_eq(set.rows[0].key.kv_heads, 8);
    ck_assert_int_eq(set.rows[2].key.kv_heads, 16); /* left empty: = heads */
    ck_assert_ptr_eq(results_find(&set, &set.rows[1].key), &set.rows[1]);
    results_free(&set);
    write_temp(path, "variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,ms_median,noise_rel\n"
                     "naive,bf16,1,32,2048,128,1,cold,ok,1.0,0.01\n");
    ck_assert_int_eq(results_read(path, &set), ATTN_OK);
    unlink(path);
    ck_assert_int_eq(set.rows[0].key.kv_heads, 32);
    struct attn_problem p = {.batch = 1, .heads = 32, .seq_len = 2048, .head_dim = 128, .causal = true};
    struct result_key k;
    result_key_of("naive", &p, MODE_COLD, REGIME_BURST, &k); /* kv_heads 0: = heads */
    ck_assert_ptr_eq(results_find(&set, &k), &set.rows[0]);
    results_free(&set);
    write_temp(path, "variant,dtype,batch,heads,kv_heads,seq_len,head_dim,causal,mode,status,ms_median,noise_rel\n"
                     "naive,bf16,1,32,5,2048,128,1,cold,ok,1.0,0.01\n");
    ck_assert_int_eq(results_read(path, &set), ATTN_ERR_INPUT);
    ck_assert_message_has(":2: kv_heads '5' is not a positive divisor of heads 32");
    unlink(path);
}
END_TEST

/* Ragged batches: the lengths of a lens: list and of a uniform:F draw (the
 * same for the same point, in [ceil(F·S), S], another draw for another
 * batch or S); tokens, elements, FLOPs and bytes summed over the sequences. */
START_TEST(test_varlen_lengths_and_counts)
{
    struct attn_problem p = problem(3, 4, 1000, 64, true);
    p.kv_heads = 2;
    snprintf(p.varlen, sizeof p.varlen, "lens:1+17+1000");
    int lens[3];
    ck_assert_int_eq(attn_seq_lens(&p, lens), ATTN_OK);
    ck_assert_int_eq(lens[0], 1);
    ck_assert_int_eq(lens[1], 17);
    ck_assert_int_eq(lens[2], 1000);
    ck_assert_uint_eq(attn_tokens(&p), 1018);
    ck_assert_uint_eq(attn_tensor_elems(&p), (size_t)1018 * 4 * 64);
    ck_assert_uint_eq(attn_kv_tensor_elems(&p), (size_t)1018 * 2 * 64);
    /* causal: half of 4·H·L²·D per sequence; bytes: Q, O at H and K, V at KV per token */
    ck_assert(attn_flops(&p) == 4.0 * 4 * (1.0 + 17 * 17 + 1000 * 1000) * 64 / 2);
    ck_assert(attn_bytes(&p) == 2.0 * 1018 * (4 + 2) * 64 * 2);
    p.causal = false;
    ck_assert(attn_flops(&p) == 4.0 * 4 * (1.0 + 17 * 17 + 1000 * 1000) * 64);
    char label[ATTN_LABEL_MAX];
    ck_assert_str_eq(attn_problem_label(&p, label, sizeof label),
                     "B=3 H=4 KV=2 S=1000 D=64 full varlen=lens:1+17+1000 init=uniform");

    struct attn_problem u = problem(64, 8, 4096, 128, true);
    snprintf(u.varlen, sizeof u.varlen, "uniform:0.5");
    int a[64], b[64];
    ck_assert_int_eq(attn_seq_lens(&u, a), ATTN_OK);
    ck_assert_int_eq(attn_seq_lens(&u, b), ATTN_OK);
    double sum = 0, sum2 = 0;
    bool differ = false;
    for (int i = 0; i < 64; i++) {
        ck_assert_int_eq(a[i], b[i]); /* the same point: the same lengths */
        ck_assert_int_ge(a[i], 2048);
        ck_assert_int_le(a[i], 4096);
        differ |= a[i] != a[0];
        sum += a[i];
        sum2 += (double)a[i] * a[i];
    }
    ck_assert(differ);
    ck_assert_uint_eq(attn_tokens(&u), (size_t)sum);
    ck_assert(attn_flops(&u) == 4.0 * 8 * sum2 * 128 / 2);
    struct attn_problem other = u;
    other.seq_len = 8192;
    int c[64];
    ck_assert_int_eq(attn_seq_lens(&other, c), ATTN_OK);
    ck_assert(memcmp(a, c, sizeof a) != 0);
    /* F = 0: lengths from 1; F = 1: every sequence S long, the dense counts */
    snprintf(u.varlen, sizeof u.varlen, "uniform:1");
    struct attn_problem dense = u;
    dense.varlen[0] = '\0';
    ck_assert(attn_flops(&u) == attn_flops(&dense));
    ck_assert_uint_eq(attn_tensor_elems(&u), attn_tensor_elems(&dense));
    ck_assert(!attn_problem_equal(&u, &dense)); /* still a ragged point: its own layout */
}
END_TEST

/* Malformed varlen texts are refused with what is wrong; the counts of one
 * are 0 and leave the last error alone. */
START_TEST(test_varlen_malformed)
{
    struct attn_problem p = problem(3, 4, 1000, 64, false);
    const char *bad[][2] = {
        {"normal:0.5", "unknown distribution"},
        {"uniform:1.5", "fraction F in [0, 1]"},
        {"uniform:", "fraction F in [0, 1]"},
        {"uniform:0.5x", "fraction F in [0, 1]"},
        {"lens:1+17", "2 lengths for batch 3"},
        {"lens:1+17+1000+5", "more lengths than batch 3"},
        {"lens:1+17+999", "the longest is 999, seq_len is 1000"},
        {"lens:1+0+1000", "whole numbers from 1 to seq_len 1000"},
        {"lens:1++1000", "whole numbers from 1 to seq_len 1000"},
        {"lens:1+17+1001", "whole numbers from 1 to seq_len 1000"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(p.varlen, sizeof p.varlen, "%s", bad[i][0]);
        ck_assert_int_eq(attn_varlen_check(&p), ATTN_ERR_INPUT);
        ck_assert_message_has(bad[i][1]);
    }
    attn_error_clear();
    ck_assert_uint_eq(attn_tokens(&p), 0);
    ck_assert(attn_flops(&p) == 0);
    ck_assert_str_eq(attn_error_message(), "");
}
END_TEST

/* The grid keys varlen= and lens=: points per value, none for a dense batch,
 * lens= as batch and seq; refusals name the line. */
START_TEST(test_grid_varlen)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_spec(&g, "batch=4 heads=8 seq=512 dim=64 varlen=none,uniform:0.5", "t"),
                     ATTN_OK);
    ck_assert_uint_eq(g.count, 2);
    ck_assert_str_eq(g.points[0].varlen, "");
    ck_assert_str_eq(g.points[1].varlen, "uniform:0.5");
    ck_assert_int_eq(grid_add_spec(&g, "batch=4 heads=8 seq=512 dim=64", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 2); /* the dense point again */
    ck_assert_int_eq(grid_add_spec(&g, "lens=1+17+1000,5 heads=6 kv_heads=2 dim=96 causal=1", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 4);
    ck_assert_int_eq(g.points[2].batch, 3);
    ck_assert_int_eq(g.points[2].seq_len, 1000);
    ck_assert_str_eq(g.points[2].varlen, "lens:1+17+1000");
    ck_assert_int_eq(g.points[3].batch, 1);
    ck_assert_int_eq(g.points[3].seq_len, 5);
    /* the same list through varlen= is the same point */
    ck_assert_int_eq(grid_add_spec(&g, "batch=3 heads=6 kv_heads=2 seq=1000 dim=96 causal=1 varlen=lens:1+17+1000", "t"),
                     ATTN_OK);
    ck_assert_uint_eq(g.count, 4);
    /* tokens= with varlen: batch = tokens / seq, as dense */
    ck_assert_int_eq(grid_add_spec(&g, "tokens=16384 heads=8 seq=4096 dim=64 varlen=uniform:0", "t"), ATTN_OK);
    ck_assert_int_eq(g.points[4].batch, 4);

    const char *bad[][2] = {
        {"batch=4 heads=8 seq=512 dim=64 varlen=normal:0.5", "unknown distribution"},
        {"batch=4 heads=8 seq=512 dim=64 varlen=uniform:2", "fraction F in [0, 1]"},
        {"batch=2 heads=8 seq=512 dim=64 varlen=lens:1+17+1000", "whole numbers from 1 to seq_len 512"},
        {"lens=1+17 batch=2 heads=8 dim=64", "lens= sets batch"},
        {"lens=1+17 seq=17 heads=8 dim=64", "lens= sets batch"},
        {"lens=1+x heads=8 dim=64", "'lens=1+x': expected lengths"},
        {"lens=0 heads=8 dim=64", "'lens=0': expected lengths"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(grid_add_spec(&g, bad[i][0], "llm.grid:9") == ATTN_ERR_INPUT, "accepted: %s", bad[i][0]);
        ck_assert_message_has("llm.grid:9: ");
        ck_assert_message_has(bad[i][1]);
    }
    ck_assert_uint_eq(g.count, 5);
    grid_free(&g);
}
END_TEST

/* varlen in a results file: read when there, dense ("") when the file
 * predates it or the field is empty; a malformed one names its line. */
START_TEST(test_results_varlen_column)
{
    char path[32];
    write_temp(path, "variant,dtype,batch,heads,kv_heads,seq_len,head_dim,causal,varlen,mode,status,ms_median,noise_rel\n"
                     "naive,bf16,3,32,8,1000,128,1,lens:1+17+1000,cold,ok,1.0,0.01\n"
                     "naive,bf16,3,32,8,1000,128,1,,cold,ok,1.1,0.01\n"
                     "naive,bf16,3,32,8,1000,128,1,uniform:0.5,cold,ok,1.2,0.01\n");
    struct result_set set;
    ck_assert_int_eq(results_read(path, &set), ATTN_OK);
    unlink(path);
    ck_assert_uint_eq(set.count, 3);
    ck_assert_str_eq(set.rows[0].key.varlen, "lens:1+17+1000");
    ck_assert_str_eq(set.rows[1].key.varlen, "");
    struct attn_problem p = {.batch = 3, .heads = 32, .kv_heads = 8, .seq_len = 1000, .head_dim = 128,
                             .causal = true};
    snprintf(p.varlen, sizeof p.varlen, "uniform:0.5");
    struct result_key k;
    result_key_of("naive", &p, MODE_COLD, REGIME_BURST, &k);
    ck_assert_ptr_eq(results_find(&set, &k), &set.rows[2]);
    char label[ATTN_LABEL_MAX + 64];
    ck_assert_str_eq(result_key_label(&set.rows[0].key, label, sizeof label),
                     "naive bf16 B=3 H=32 KV=8 S=1000 D=128 causal varlen=lens:1+17+1000 init=uniform cold");
    results_free(&set);
    write_temp(path, "variant,dtype,batch,heads,kv_heads,seq_len,head_dim,causal,varlen,mode,status,ms_median,noise_rel\n"
                     "naive,bf16,3,32,8,1000,128,1,,cold,ok,1.1,0.01\n"
                     "naive,bf16,3,32,8,1000,128,1,lens:1+17,cold,ok,1.0,0.01\n");
    ck_assert_int_eq(results_read(path, &set), ATTN_ERR_INPUT);
    ck_assert_message_has(":3: varlen 'lens:1+17': 2 lengths for batch 3");
    unlink(path);
}
END_TEST

START_TEST(test_grid_causal_dtype_whitespace)
{
    struct grid g = {0};
    ck_assert_int_eq(
        grid_add_spec(&g, "  batch=1\theads=2  seq=64 dim=32 causal=0,1 dtype=fp16 ", "t"),
        ATTN_OK);
    ck_assert_uint_eq(g.count, 2);
    ck_assert(!g.points[0].causal);
    ck_assert(g.points[1].causal);
    ck_assert_int_eq(g.points[0].dtype, ATTN_FP16);
    ck_assert_int_eq(g.points[1].dtype, ATTN_FP16);
    ck_assert_int_eq(g.points[0].heads, 2);
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_duplicates_dropped)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_spec(&g, "batch=2,2 heads=4 seq=64 dim=32", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 1);
    ck_assert_int_eq(grid_add_spec(&g, "batch=2 heads=4 seq=64 dim=32 causal=0", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 1);
    /* the same shape through tokens/hidden is the same point */
    ck_assert_int_eq(grid_add_spec(&g, "tokens=128 hidden=128 seq=64 dim=32", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 1);
    ck_assert_int_eq(grid_add_spec(&g, "batch=2 heads=4 seq=64 dim=32 causal=1", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 2);
    ck_assert(g.points[1].causal);
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_failed_spec_adds_nothing)
{
    struct grid g = {0};
    /* seq=512 divides the tokens, seq=768 does not: the whole line is refused */
    ck_assert_int_eq(grid_add_spec(&g, "tokens=1024 heads=2 seq=512,768 dim=64", "t"), ATTN_ERR_INPUT);
    ck_assert_uint_eq(g.count, 0);
    ck_assert_ptr_nonnull(strstr(attn_error_message(), "not a multiple"));
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_many_points_grow)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_spec(&g, "batch=1..512 heads=1..64 seq=64 dim=32", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 10 * 7);
    ck_assert_int_eq(g.points[g.count - 1].batch * g.points[g.count - 1].heads, 512 * 64);
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_default_file)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_named(&g, "default", "bench/grids"), ATTN_OK);
    ck_assert_uint_eq(g.count, 25);
    int causal = 0;
    for (size_t i = 0; i < 24; i++) {
        const struct attn_problem *p = &g.points[i];
        ck_assert_int_eq(p->batch * p->seq_len, 16384);
        ck_assert_int_eq(p->heads * p->head_dim, 2048);
        ck_assert_int_ge(p->seq_len, 512);
        ck_assert_int_le(p->seq_len, 16384);
        ck_assert(p->head_dim == 64 || p->head_dim == 128);
        ck_assert_int_eq(p->dtype, ATTN_BF16);
        causal += p->causal;
    }
    ck_assert_int_eq(causal, 12);
    const struct attn_problem *seed = &g.points[24];
    ck_assert_int_eq(seed->batch, 8);
    ck_assert_int_eq(seed->heads, 16);
    ck_assert_int_eq(seed->seq_len, 1024);
    ck_assert_int_eq(seed->head_dim, 64);
    ck_assert(seed->causal);
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_other_files)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_named(&g, "bench/grids/quick.grid", "nowhere"), ATTN_OK);
    ck_assert_uint_eq(g.count, 12);
    grid_free(&g);
    ck_assert_int_eq(grid_add_named(&g, "seed", "bench/grids"), ATTN_OK);
    ck_assert_uint_eq(g.count, 1);
    /* adding a grid already present adds nothing */
    ck_assert_int_eq(grid_add_named(&g, "seed", "bench/grids"), ATTN_OK);
    ck_assert_uint_eq(g.count, 1);
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_missing_files)
{
    struct grid g = {0};
    ck_assert_int_eq(grid_add_file(&g, "/tmp/check_cpu_no_such.grid"), ATTN_ERR_INPUT);
    ck_assert_message_has("/tmp/check_cpu_no_such.grid");
    ck_assert_int_eq(grid_add_named(&g, "nosuch", "bench/grids"), ATTN_ERR_INPUT);
    ck_assert_message_has("bench/grids/nosuch.grid");
    ck_assert_int_eq(grid_add_named(&g, "", "bench/grids"), ATTN_ERR_INPUT);
    ck_assert_uint_eq(g.count, 0);
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_file_comments_and_crlf)
{
    char path[32];
    write_temp(path, "# a comment line\n"
                     "\n"
                     "   \t\n"
                     "batch=1 heads=2 seq=64 dim=32   # trailing comment\r\n"
                     "batch=1 heads=2 seq=64 dim=32 causal=1"); /* no final newline */
    struct grid g = {0};
    int rc = grid_add_file(&g, path);
    unlink(path);
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert_uint_eq(g.count, 2);
    ck_assert_int_eq(g.points[0].heads, 2);
    ck_assert(g.points[1].causal);
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_file_empty)
{
    char path[32];
    write_temp(path, "");
    struct grid g = {0};
    int rc = grid_add_file(&g, path);
    unlink(path);
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_message_has(path);
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_file_only_comments)
{
    char path[32];
    write_temp(path, "# nothing here\n\n   # nor here\n");
    struct grid g = {0};
    int rc = grid_add_file(&g, path);
    unlink(path);
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_message_has(path);
    ck_assert_uint_eq(g.count, 0);
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_file_bad_line_named)
{
    char path[32], where[48];
    write_temp(path, "batch=1 heads=2 seq=64 dim=32\n"
                     "batch=1 heads=2 seq=64 dim=32 colour=red\n"
                     "batch=2 heads=2 seq=64 dim=32\n");
    struct grid g = {0};
    int rc = grid_add_file(&g, path);
    unlink(path);
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    snprintf(where, sizeof where, "%s:2", path);
    ck_assert_message_has(where);
    ck_assert_message_has("colour");
    grid_free(&g);
}
END_TEST

/* Malformed specs: each is rejected with a message that names the problem
 * and starts with the place it came from. */
static const struct {
    const char *spec, *needle;
} bad_specs[] = {
    {"batch=1 heads=1 seq=8 dim=8 colour=red", "unknown key 'colour'"},
    {"batch=1 heads=1 dim=8", "seq="},
    {"batch=1 heads=1 seq=8", "dim="},
    {"batch=1 tokens=8 heads=1 seq=8 dim=8", "tokens="},
    {"batch=1 seq=8 dim=8", "hidden="},
    {"batch=1 heads=1 hidden=8 seq=8 dim=8", "hidden="},
    {"batch=1 heads=1 seq=abc dim=8", "seq=abc"},
    {"batch=1 heads=1 seq=1.5 dim=8", "seq=1.5"},
    {"batch=1 heads=1 seq=64x dim=8", "seq=64x"},
    {"batch=0 heads=1 seq=8 dim=8", "batch=0"},
    {"batch=1 heads=1 seq=8 dim=-64", "dim=-64"},
    {"batch=1 heads=1 seq=8..4 dim=8", "8..4"},
    {"batch=1 heads=1 seq=..4 dim=8", "..4"},
    {"batch=1 heads=1 seq=0..4 dim=8", "0..4"},
    {"batch=1 heads=1 seq=5..7 dim=8", "no power of two"},
    {"batch=1 heads=1 seq=3..3 dim=8", "3..3"},
    {"tokens=1000 heads=1 seq=512 dim=8", "1000"},
    {"tokens=256 heads=1 seq=512 dim=8", "256"},
    {"batch=1 hidden=100 seq=8 dim=64", "100"},
    {"batch=1 heads=1 seq=8 dim=8 causal=2", "causal=2"},
    {"batch=1 heads=1 seq=8 dim=8 dtype=fp8", "fp8"},
    {"", "empty"},
    {"  \t ", "empty"},
    {"batch=1 batch=2 heads=1 seq=8 dim=8", "'batch' given twice"},
    {"batch=1 heads=1 seq dim=8", "'seq'"},
    {"batch=1 heads=1 seq= dim=8", "seq="},
    {"batch=1 heads=1 =8 seq=8 dim=8", "'=8'"},
    {"batch=1 heads=1 seq=, dim=8", "seq"},
    {"batch=1 heads=1 seq=99999999999999999999 dim=8", "99999999999999999999"},
};

START_TEST(test_grid_bad_spec)
{
    struct grid g = {0};
    attn_error_clear();
    int rc = grid_add_spec(&g, bad_specs[_i].spec, "spec7");
    ck_assert_msg(rc == ATTN_ERR_INPUT, "'%s' gave %d, not ATTN_ERR_INPUT", bad_specs[_i].spec,
                  rc);
    ck_assert_message_has(bad_specs[_i].needle);
    ck_assert_msg(strncmp(attn_error_message(), "spec7: ", 7) == 0,
                  "message \"%s\" does not start with the spec's place", attn_error_message());
    ck_assert_uint_eq(g.count, 0);
    grid_free(&g);
}
END_TEST

START_TEST(test_grid_point_label)
{
    char buf[96];
    struct attn_problem p = problem(4, 16, 4096, 128, true);
    ck_assert_str_eq(attn_problem_label(&p, buf, sizeof buf), "B=4 H=16 S=4096 D=128 causal init=uniform");
    p.init_sigma = ATTN_INIT_DEFAULT_SIGMA; /* the default init is not named */
    ck_assert_str_eq(attn_problem_label(&p, buf, sizeof buf), "B=4 H=16 S=4096 D=128 causal");
    p.causal = false;
    p.dtype = ATTN_FP16;
    ck_assert_str_eq(attn_problem_label(&p, buf, sizeof buf), "B=4 H=16 S=4096 D=128 full fp16");
}
END_TEST

/* Issue 21, defect 1: the product of a spec's axes was expanded with every
 * duplicate value, and each point was checked against every earlier one. A
 * one-point line of 6·63 repeated values (63^6 combinations) never finished;
 * values are now de-duplicated per axis first. Check's per-test timeout
 * stops the old code; the assertions are on the result. */
START_TEST(test_grid_duplicate_values_one_point)
{
    char spec[1024] = "";
    append_list(spec, sizeof spec, "batch", "1", 63);
    append_list(spec, sizeof spec, "heads", "1", 63);
    append_list(spec, sizeof spec, "seq", "1", 63);
    append_list(spec, sizeof spec, "dim", "1", 63);
    append_list(spec, sizeof spec, "causal", "0", 63);
    append_list(spec, sizeof spec, "dtype", "bf16", 63);
    struct grid g = {0};
    int rc = grid_add_spec(&g, spec, "t");
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert_uint_eq(g.count, 1);
    ck_assert_int_eq(g.points[0].batch * g.points[0].heads * g.points[0].seq_len, 1);
    grid_free(&g);

    /* 100 copies of one value are one value, not "too many values" */
    spec[0] = '\0';
    append_list(spec, sizeof spec, "batch", "2", 100);
    strcat(spec, "heads=4 seq=64,64,64 dim=32");
    rc = grid_add_spec(&g, spec, "t");
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert_uint_eq(g.count, 1);
    ck_assert_int_eq(g.points[0].batch, 2);
    grid_free(&g);
}
END_TEST

/* Defect 1: a grid holds at most 100,000 points; a spec that would expand
 * past that is refused before expanding, naming its line and the count. */
START_TEST(test_grid_point_cap)
{
    struct grid g = {0};
    attn_error_clear();
    /* 25^4 = 390625 points: took minutes */
    int rc = grid_add_spec(&g, "batch=1..16777216 heads=1..16777216 seq=1..16777216 "
                               "dim=1..16777216", "t");
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_str_eq(attn_error_message(), "t: the grid would hold 390625 points (at most 100000)");
    ck_assert_uint_eq(g.count, 0);

    /* 64·64·5·4 = 81920 points fit; another 64·64·5·2 = 40960 would not */
    char spec[1024] = "";
    append_run(spec, sizeof spec, "batch", 64);
    append_run(spec, sizeof spec, "heads", 64);
    strcat(spec, "seq=1..16 ");
    char more[1024];
    strcpy(more, spec);
    strcat(spec, "dim=1,2,3,4");
    strcat(more, "dim=5,6");
    rc = grid_add_spec(&g, spec, "t");
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert_uint_eq(g.count, 81920);
    rc = grid_add_spec(&g, more, "u");
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_str_eq(attn_error_message(), "u: the grid would hold 122880 points (at most 100000)");
    ck_assert_uint_eq(g.count, 81920); /* the refused line added nothing */
    grid_free(&g);

    /* in a file the message names FILE:LINE */
    char path[32], where[96];
    write_temp(path, "batch=1 heads=1 seq=64 dim=64\n"
                     "batch=1..16777216 heads=1..16777216 seq=1..16777216 dim=1..16777216\n");
    rc = grid_add_file(&g, path);
    unlink(path);
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    snprintf(where, sizeof where, "%s:2: the grid would hold 390625 points", path);
    ck_assert_message_has(where);
    grid_free(&g);
}
END_TEST

/* Defect 1: points are de-duplicated against the whole grid in linear time
 * (the old pairwise check took seconds here), keeping the first occurrence's
 * place, since the grid's order is the run order. */
START_TEST(test_grid_dedup_linear_keeps_order)
{
    char spec[1024] = "";
    append_run(spec, sizeof spec, "batch", 64);
    append_run(spec, sizeof spec, "heads", 64);
    strcat(spec, "seq=1..16 dim=1,2,4,8");
    struct grid g = {0};
    int rc = grid_add_spec(&g, "batch=3 heads=5 seq=4 dim=2", "t");
    ck_assert_int_eq(rc, ATTN_OK);
    rc = grid_add_spec(&g, spec, "t");
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert_uint_eq(g.count, 81920); /* 81920 distinct, one of them already there */
    /* re-adding finds every point present: 81920 look-ups each time, where
     * the old pairwise check made 81920^2 comparisons (past the timeout) */
    for (int again = 0; again < 4; again++) {
        rc = grid_add_spec(&g, spec, "t");
        ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
        ck_assert_uint_eq(g.count, 81920);
    }
    /* first occurrence order: the early point stays first, then the product
     * in its loop order (heads innermost, then batch, then seq) */
    ck_assert_int_eq(g.points[0].batch, 3);
    ck_assert_int_eq(g.points[0].heads, 5);
    ck_assert_int_eq(g.points[1].batch, 1);
    ck_assert_int_eq(g.points[1].heads, 1);
    ck_assert_int_eq(g.points[2].heads, 2);
    ck_assert_int_eq(g.points[64].heads, 64);
    ck_assert_int_eq(g.points[65].batch, 2);
    ck_assert_int_eq(g.points[65].heads, 1);
    const struct attn_problem *last = &g.points[g.count - 1];
    ck_assert(last->batch == 64 && last->heads == 64 && last->seq_len == 16 &&
              last->head_dim == 8);
    /* a new point still goes to the end */
    rc = grid_add_spec(&g, "batch=1 heads=1 seq=1 dim=1 causal=1", "t");
    ck_assert_int_eq(rc, ATTN_OK);
    ck_assert_uint_eq(g.count, 81921);
    ck_assert(g.points[81920].causal);
    grid_free(&g);
}
END_TEST

/* Defect 2: a..b is the powers of two p with a <= p <= b (the README), so
 * 3..100 starts at 4, not at 3. */
START_TEST(test_grid_range_powers_inside)
{
    struct grid g = {0};
    int rc = grid_add_spec(&g, "batch=1 heads=1 seq=3..100 dim=32", "t");
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert_uint_eq(g.count, 5);
    const int want[5] = {4, 8, 16, 32, 64};
    for (int i = 0; i < 5; i++) ck_assert_int_eq(g.points[i].seq_len, want[i]);
    grid_free(&g);
    ck_assert_int_eq(grid_add_spec(&g, "batch=1..1 heads=1 seq=5..8 dim=32", "t"), ATTN_OK);
    ck_assert_uint_eq(g.count, 1);
    ck_assert_int_eq(g.points[0].seq_len, 8);
    ck_assert_int_eq(g.points[0].batch, 1);
    grid_free(&g);
    /* no power of two inside: refused, naming the place and the range */
    attn_error_clear();
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=1 seq=5..7 dim=32", "f:3"),
                     ATTN_ERR_INPUT);
    ck_assert_message_has("f:3: ");
    ck_assert_message_has("5..7");
    ck_assert_message_has("no power of two");
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=1 seq=100..3 dim=32", "f:4"),
                     ATTN_ERR_INPUT);
    ck_assert_message_has("f:4: ");
    ck_assert_message_has("100..3");
    ck_assert_uint_eq(g.count, 0);
    grid_free(&g);
}
END_TEST

/* The size limits of problem.h: a spec past one is refused when the grid is
 * parsed, the message naming the size and the limit, rather than planned as
 * rows that all fail; a point just inside each is a point. */
static const struct {
    const char *refused, *message, *inside;
} size_limits[] = {
    {"batch=1 heads=1 seq=64 dim=513", "t: dim=513 is above the largest head_dim the reference checks (512)",
     "batch=1 heads=1 seq=64 dim=512"},
    {"batch=1 heads=1 seq=16777217 dim=1", "t: seq=16777217 is above the longest sequence attnbench takes (16777216)",
     "batch=1 heads=1 seq=16777216 dim=1"},
    {"batch=16777217 heads=1 seq=1 dim=1", "t: batch=16777217 is above the largest batch attnbench takes (16777216)",
     "batch=16777216 heads=1 seq=1 dim=1"},
    {"batch=1 heads=16777217 seq=1 dim=1", "t: heads=16777217 is above the most heads attnbench takes (16777216)",
     "batch=1 heads=16777216 seq=1 dim=1"},
    {"tokens=33554432 heads=1 seq=1 dim=1", "t: batch=33554432 is above the largest batch", /* derived */
     "tokens=33554432 heads=1 seq=2 dim=1"},
    {"batch=1 hidden=33554432 seq=1 dim=1", "t: heads=33554432 is above the most heads", /* derived */
     "batch=1 hidden=33554432 seq=1 dim=2"},
    {"lens=16777217+5 heads=1 dim=1", "t: 'lens=16777217+5': expected lengths in 1..16777216 (the longest sequence",
     "lens=16777216+5 heads=1 dim=1"},
    {"batch=65536 heads=1 seq=65536 dim=1 varlen=uniform:1",
     "t: varlen 'uniform:1': batch=65536 of seq=65536 holds 4294967296 tokens, more than a ragged batch may "
     "hold (2147483647)",
     "batch=32767 heads=1 seq=65536 dim=1 varlen=uniform:1"},
    {"batch=1 heads=32 kv_heads=64 seq=64 dim=64", "t: kv_heads=64 is not in 1 .. heads=32",
     "batch=1 heads=32 kv_heads=32 seq=64 dim=64"},
    {"batch=1 heads=32 kv_heads=12 seq=64 dim=64", "t: kv_heads=12 does not divide heads=32",
     "batch=1 heads=36 kv_heads=12 seq=64 dim=64"},
};

START_TEST(test_grid_size_limits)
{
    struct grid g = {0};
    attn_error_clear();
    ck_assert_int_eq(grid_add_spec(&g, size_limits[_i].refused, "t"), ATTN_ERR_INPUT);
    ck_assert_msg(strncmp(attn_error_message(), size_limits[_i].message, strlen(size_limits[_i].message)) == 0,
                  "'%s' gave \"%s\"", size_limits[_i].refused, attn_error_message());
    ck_assert_uint_eq(g.count, 0);
    int rc = grid_add_spec(&g, size_limits[_i].inside, "t");
    ck_assert_msg(rc == ATTN_OK, "'%s': %s", size_limits[_i].inside, attn_error_message());
    ck_assert_uint_eq(g.count, 1);
    ck_assert_int_eq(attn_problem_check(&g.points[0]), ATTN_OK);
    grid_free(&g);
}
END_TEST

/* The same limits where a grid file and --point are read: FILE:LINE and
 * --point name the place; the check itself refuses a point built by hand. */
START_TEST(test_grid_size_limits_where_read)
{
    char path[32], where[96];
    write_temp(path, "batch=1 heads=1 seq=64 dim=64\n\nbatch=2 heads=8 seq=128 dim=100000\n");
    struct grid g = {0};
    ck_assert_int_eq(grid_add_file(&g, path), ATTN_ERR_INPUT);
    unlink(path);
    snprintf(where, sizeof where, "%s:3: dim=100000 is above the largest head_dim", path);
    ck_assert_message_has(where);
    grid_free(&g);

    struct options o;
    ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", "--point", "batch=1 heads=1 seq=64 dim=100000",
                                               "--dry-run", NULL}),
                     ATTN_ERR_INPUT);
    ck_assert_str_eq(attn_error_message(), "--point: dim=100000 is above the largest head_dim the reference "
                                           "checks (512)");
    grid_free(&o.grid);

    struct attn_problem p = problem(1, 8, 64, ATTN_HEAD_DIM_MAX + 1, false);
    ck_assert_int_eq(attn_problem_check(&p), ATTN_ERR_INPUT);
    p.head_dim = ATTN_HEAD_DIM_MAX;
    ck_assert_int_eq(attn_problem_check(&p), ATTN_OK);
    p.kv_heads = 3;
    ck_assert_int_eq(attn_problem_check(&p), ATTN_ERR_INPUT);
    ck_assert_message_has("kv_heads=3 does not divide heads=8");
}
END_TEST

/* Defect 3: batch=16777216 heads=16777216 seq=1024 dim=64 is 2^64 elements,
 * which wrapped to 0 in size_t. A point of more than 2^40 elements per
 * tensor is refused when the grid is parsed. */
START_TEST(test_grid_elements_overflow)
{
    struct grid g = {0};
    attn_error_clear();
    int rc = grid_add_spec(&g, "batch=16777216 heads=16777216 seq=1024 dim=64", "f:9");
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_message_has("f:9: ");
    ck_assert_message_has("B·H·S·D = 16777216·16777216·1024·64");
    ck_assert_message_has("2^40");
    ck_assert_uint_eq(g.count, 0);
    /* through tokens and hidden: 2^24 · 2^24 = 2^48 */
    rc = grid_add_spec(&g, "tokens=16777216 hidden=16777216 seq=1 dim=1", "t");
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_message_has("B·H·S·D");
    /* 2^40 exactly is still a point; one past it is not */
    rc = grid_add_spec(&g, "batch=16384 heads=16384 seq=64 dim=64", "t");
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert_uint_eq(attn_tensor_elems(&g.points[0]), (size_t)1 << 40);
    rc = grid_add_spec(&g, "batch=16384 heads=16384 seq=64,128 dim=64", "t");
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_uint_eq(g.count, 1);
    grid_free(&g);
}
END_TEST

/* Defect 5: messages quote user text; its control bytes (ESC above all)
 * must not reach the terminal raw. */
START_TEST(test_grid_message_control_bytes)
{
    struct grid g = {0};
    static const char *const specs[] = {
        "batch=1 heads=1 seq=\x1b[31m dim=8",      /* a bad value */
        "batch=1 heads=1 seq=8 dim=8 c\x1b[2Jx=1", /* an unknown key */
        "batch=1 heads=1 \x1b]0;pwned\x07 dim=8",  /* not key=value */
        "batch=1 heads=1 seq=8 dim=8 causal=\x7f",
        "batch=1 heads=1 seq=8 dim=8 dtype=\xc2\x9b" "31m", /* C1 CSI in UTF-8 */
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        attn_error_clear();
        ck_assert_int_eq(grid_add_spec(&g, specs[i], "t"), ATTN_ERR_INPUT);
        const char *m = attn_error_message();
        for (const char *c = m; *c; c++)
            ck_assert_msg((unsigned char)*c >= 0x20 && *c != 0x7f &&
                              !((unsigned char)c[0] == 0xc2 && (unsigned char)c[1] >= 0x80 &&
                                (unsigned char)c[1] <= 0x9f),
                          "spec %zu: raw control byte 0x%02x in \"%s\"", i,
                          (unsigned char)*c, m);
        ck_assert_message_has("\\x");
    }
    attn_error_clear();
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=1 seq=\x1b[31m dim=8", "t"),
                     ATTN_ERR_INPUT);
    ck_assert_message_has("seq=\\x1b[31m");
    /* plain UTF-8 stays readable */
    ck_assert_int_eq(grid_add_spec(&g, "batch=1 heads=1 seq=8 dim=8 d\xc3\xa9=1", "t"),
                     ATTN_ERR_INPUT);
    ck_assert_message_has("unknown key 'd\xc3\xa9'");
    /* a file's name is user text as well */
    ck_assert_int_eq(grid_add_file(&g, "/tmp/check_cpu_\x1b[31m.grid"), ATTN_ERR_INPUT);
    ck_assert_ptr_null(strchr(attn_error_message(), '\x1b'));
    ck_assert_message_has("check_cpu_\\x1b[31m.grid");
    ck_assert_uint_eq(g.count, 0);
    grid_free(&g);
}
END_TEST

/* Defect 6: fgets stopped at a NUL byte and the line was called too long. */
START_TEST(test_grid_file_nul_byte)
{
    char path[32], where[96];
    static const char text[] = "batch=1 heads=1 seq=8 dim=8\n"
                               "batch=1 heads=1\0 seq=8 dim=8\n";
    write_temp_bytes(path, text, sizeof text - 1);
    struct grid g = {0};
    attn_error_clear();
    int rc = grid_add_file(&g, path);
    unlink(path);
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    snprintf(where, sizeof where, "%s:2: NUL byte", path);
    ck_assert_message_has(where);
    ck_assert_ptr_null(strstr(attn_error_message(), "too long"));
    ck_assert_uint_eq(g.count, 1);
    grid_free(&g);
}
END_TEST

/* Defect 6: a line is as long as its comment makes it; only the spec before
 * '#' has a limit, and passing it says so with the line's place. */
START_TEST(test_grid_file_long_lines)
{
    static char text[8192];
    strcpy(text, "batch=1 heads=1 seq=8 dim=8 # ");
    memset(text + strlen(text), 'c', 5000);
    strcat(text, "\nbatch=2 heads=1 seq=8 dim=8\n");
    char path[32], where[96];
    write_temp(path, text);
    struct grid g = {0};
    int rc = grid_add_file(&g, path);
    unlink(path);
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert_uint_eq(g.count, 2);
    grid_free(&g);

    strcpy(text, "batch=1 heads=1 seq=8 dim=8\nbatch=1 heads=1 seq=8 dim=8 ");
    memset(text + strlen(text), ' ', 3000);
    strcat(text, "causal=1\n");
    write_temp(path, text);
    rc = grid_add_file(&g, path);
    unlink(path);
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    snprintf(where, sizeof where, "%s:2: ", path);
    ck_assert_message_has(where);
    ck_assert_message_has("too long");
    grid_free(&g);
}
END_TEST

/* Defect 6: a directory opens for reading on Linux and reads as nothing; it
 * was reported as a grid that holds no point. */
START_TEST(test_grid_file_directory)
{
    struct grid g = {0};
    attn_error_clear();
    ck_assert_int_eq(grid_add_file(&g, "bench/grids"), ATTN_ERR_INPUT);
    ck_assert_message_has("bench/grids");
    ck_assert_message_has("is a directory");
    ck_assert_int_eq(grid_add_named(&g, "bench/grids/", "x"), ATTN_ERR_INPUT);
    ck_assert_message_has("is a directory");
    ck_assert_uint_eq(g.count, 0);
    grid_free(&g);
}
END_TEST

/* ====================================================================== csv */

START_TEST(test_csv_quoting)
{
    struct csv_line l;
    csv_line_init(&l);
    csv_add_str(&l, "plain");
    csv_add_str(&l, "a,b");
    csv_add_str(&l, "say \"hi\"");
    csv_add_str(&l, "two\nlines");
    csv_add_str(&l, " lead");
    csv_add_str(&l, "trail ");
    csv_add_str(&l, "");
    csv_add_str(&l, NULL);
    ck_assert_int_eq(csv_line_end(&l), ATTN_OK);
    ck_assert_int_eq(l.fields, 8);
    ck_assert_str_eq(l.text, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\" lead\","
                             "\"trail \",,\n");
    ck_assert_uint_eq(l.len, strlen(l.text));
}
END_TEST

START_TEST(test_csv_numbers)
{
    struct csv_line l;
    csv_line_init(&l);
    csv_add_int(&l, -42);
    csv_add_num(&l, NAN, 6);
    csv_add_num(&l, 1.0 / 3.0, 4);
    csv_add_num(&l, 1e-9, 3);
    csv_add_int(&l, 1LL << 40);
    ck_assert_int_eq(csv_line_end(&l), ATTN_OK);
    ck_assert_str_eq(l.text, "-42,,0.3333,1e-09,1099511627776\n");
}
END_TEST

START_TEST(test_csv_overflow_refused)
{
    static char big[CSV_LINE_MAX + 16];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    struct csv_line l;
    csv_line_init(&l);
    csv_add_str(&l, big);
    ck_assert(l.overflow);
    ck_assert_int_ne(csv_line_end(&l), ATTN_OK);
    ck_assert_uint_lt(l.len, CSV_LINE_MAX);
}
END_TEST

START_TEST(test_csv_split_round_trip)
{
    const char *values[] = {"plain", "a,b", "say \"hi\"", "\"", ",", "", " lead", "x\ny", "z"};
    const int n = (int)(sizeof values / sizeof values[0]);
    struct csv_line l;
    csv_line_init(&l);
    for (int i = 0; i < n; i++) csv_add_str(&l, values[i]);
    ck_assert_int_eq(csv_line_end(&l), ATTN_OK);
    char *fields[16];
    ck_assert_int_eq(split_line(&l, fields, 16), n);
    for (int i = 0; i < n; i++) ck_assert_str_eq(fields[i], values[i]);
}
END_TEST

START_TEST(test_csv_split_empty_fields)
{
    char *f[8];
    char a[] = "";
    ck_assert_int_eq(csv_split(a, f, 8), 1);
    ck_assert_str_eq(f[0], "");
    char b[] = ",,";
    ck_assert_int_eq(csv_split(b, f, 8), 3);
    for (int i = 0; i < 3; i++) ck_assert_str_eq(f[i], "");
    char c[] = "a,,b,";
    ck_assert_int_eq(csv_split(c, f, 8), 4);
    ck_assert_str_eq(f[0], "a");
    ck_assert_str_eq(f[1], "");
    ck_assert_str_eq(f[2], "b");
    ck_assert_str_eq(f[3], "");
    char d[] = "\"\",x";
    ck_assert_int_eq(csv_split(d, f, 8), 2);
    ck_assert_str_eq(f[0], "");
    ck_assert_str_eq(f[1], "x");
}
END_TEST

START_TEST(test_csv_split_rejects_malformed)
{
    char *f[8];
    char unterminated[] = "a,\"bc,d";
    ck_assert_int_eq(csv_split(unterminated, f, 8), -1);
    char after_quote[] = "\"abc\"d,e";
    ck_assert_int_eq(csv_split(after_quote, f, 8), -1);
    char quote_inside[] = "ab\"c,d";
    ck_assert_int_eq(csv_split(quote_inside, f, 8), -1);
    char three[] = "a,b,c";
    ck_assert_int_eq(csv_split(three, f, 2), -1);
    char trailing[] = "a,b,";
    ck_assert_int_eq(csv_split(trailing, f, 2), -1);
    char exactly[] = "a,b";
    ck_assert_int_eq(csv_split(exactly, f, 2), 2);
}
END_TEST

/* mkdir -p: nested, repeated and trailing slashes; "" refused; a file in
 * the way named with the OS error. */
START_TEST(test_files_mkdir_p)
{
    char root[] = "/tmp/check_files_XXXXXX", path[256];
    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(path, sizeof path, "%s/a//b/c/", root);
    ck_assert_int_eq(files_mkdir_p(path), ATTN_OK);
    snprintf(path, sizeof path, "%s/a/b/c", root);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    ck_assert_int_eq(files_mkdir_p(path), ATTN_OK); /* already there */
    ck_assert_int_eq(files_mkdir_p(""), ATTN_ERR_INPUT);
    snprintf(path, sizeof path, "%s/file", root);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    snprintf(path, sizeof path, "%s/file/sub", root);
    ck_assert_int_eq(files_mkdir_p(path), ATTN_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(attn_error_message(), "file"));
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_csv_read_line)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    fputs("one\ntwo\r\n\nthree,\"x\"\nlast", f);
    rewind(f);
    char buf[64];
    ck_assert_int_eq(csv_read_line(f, buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "one");
    ck_assert_int_eq(csv_read_line(f, buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "two");
    ck_assert_int_eq(csv_read_line(f, buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(csv_read_line(f, buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "three,\"x\"");
    ck_assert_int_eq(csv_read_line(f, buf, sizeof buf), -2); /* torn last line */
    ck_assert_int_eq(csv_read_line(f, buf, sizeof buf), 0);
    fclose(f);
}
END_TEST

START_TEST(test_csv_read_line_too_long)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    fputs("abcdefghij\nok\n", f);
    rewind(f);
    char buf[6];
    ck_assert_int_eq(csv_read_line(f, buf, sizeof buf), -1);
    fclose(f);
}
END_TEST

START_TEST(test_csv_create_and_append)
{
    char dir[] = "/tmp/check_cpu_dir_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/results.csv", dir);

    struct csv_line header, row;
    csv_line_init(&header);
    csv_add_str(&header, "name");
    csv_add_str(&header, "note");
    csv_add_str(&header, "value");
    ck_assert_int_eq(csv_line_end(&header), ATTN_OK);
    int fd = -1;
    ck_assert_int_eq(csv_create(path, &header, &fd), ATTN_OK);
    ck_assert_int_ge(fd, 0);
    const char *notes[3] = {"plain", "with, comma", "with \"quotes\""};
    for (int i = 0; i < 3; i++) {
        csv_line_init(&row);
        csv_add_str(&row, "row");
        csv_add_str(&row, notes[i]);
        csv_add_int(&row, i);
        ck_assert_int_eq(csv_line_end(&row), ATTN_OK);
        ck_assert_int_eq(csv_append(fd, &row), ATTN_OK);
    }
    close(fd);

    /* a second create must not overwrite the file */
    int fd2 = -1;
    ck_assert_int_eq(csv_create(path, &row, &fd2), ATTN_ERR_INPUT);
    ck_assert_int_eq(fd2, -1);
    ck_assert_message_has(path);

    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char buf[256], *fields[8];
    ck_assert_int_eq(csv_read_line(f, buf, sizeof buf), 1);
    ck_assert_int_eq(csv_split(buf, fields, 8), 3);
    ck_assert_str_eq(fields[0], "name");
    ck_assert_str_eq(fields[2], "value");
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(csv_read_line(f, buf, sizeof buf), 1); /* 1: ended by '\n' */
        ck_assert_int_eq(csv_split(buf, fields, 8), 3);
        ck_assert_str_eq(fields[0], "row");
        ck_assert_str_eq(fields[1], notes[i]);
        ck_assert_int_eq(atoi(fields[2]), i);
    }
    ck_assert_int_eq(csv_read_line(f, buf, sizeof buf), 0);
    fclose(f);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* ================================================================== results */

START_TEST(test_results_header)
{
    static const char *const schema[] = {
        "run_id", "timestamp", "git_rev", "gpu", "variant", "dtype", "batch", "heads",
        "seq_len", "head_dim", "causal", "mode", "status", "reason", "samples",
        "ms_median", "ms_min", "ms_p10", "ms_p90", "noise_rel", "tflops", "gbps",
        "extra_mem_mib", "max_abs_err", "rel_err", "kernels_per_call", "memcpy_per_call",
    };
    struct csv_line l;
    results_header(&l);
    const int n = results_column_count();
    ck_assert_int_eq(l.fields, n);
    char *fields[64];
    ck_assert_int_le(n, 64);
    ck_assert_int_eq(split_line(&l, fields, 64), n);
    for (int i = 0; i < n; i++) ck_assert_str_eq(fields[i], results_column_name(i));
    for (size_t s = 0; s < sizeof schema / sizeof schema[0]; s++)
        ck_assert_msg(column_index(schema[s]) >= 0, "column '%s' is missing", schema[s]);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) ck_assert_str_ne(fields[i], fields[j]);
    ck_assert_ptr_null(results_column_name(-1));
    ck_assert_ptr_null(results_column_name(n));
}
END_TEST

START_TEST(test_results_untimed_row)
{
    struct result_row r;
    results_row_init(&r);
    r.run_id = "20250101T000000Z";
    r.timestamp = "2025-01-01T00:00:00Z";
    r.git_rev = "abc123";
    r.gpu = "NVIDIA H200";
    r.variant = "naive";
    r.problem = problem(8, 16, 1024, 64, true);
    r.mode = "cold";
    r.status = "skipped";
    results_set_reason(&r, "needs %s, found none\nsorry", "a GPU");
    ck_assert_str_eq(r.reason, "needs a GPU, found none sorry");

    struct csv_line l;
    ck_assert_int_eq(results_format(&r, &l), ATTN_OK);
    char *f[64];
    ck_assert_int_eq(split_line(&l, f, 64), results_column_count());
    ck_assert_str_eq(f[column_index("run_id")], "20250101T000000Z");
    ck_assert_str_eq(f[column_index("gpu")], "NVIDIA H200");
    ck_assert_str_eq(f[column_index("variant")], "naive");
    ck_assert_str_eq(f[column_index("dtype")], "bf16");
    ck_assert_str_eq(f[column_index("batch")], "8");
    ck_assert_str_eq(f[column_index("heads")], "16");
    ck_assert_str_eq(f[column_index("seq_len")], "1024");
    ck_assert_str_eq(f[column_index("head_dim")], "64");
    ck_assert_str_eq(f[column_index("causal")], "1");
    ck_assert_str_eq(f[column_index("mode")], "cold");
    ck_assert_str_eq(f[column_index("status")], "skipped");
    ck_assert_str_eq(f[column_index("reason")], "needs a GPU, found none sorry");
    static const char *const empty[] = {
        "samples", "ms_median", "ms_min", "ms_p10", "ms_p90", "noise_rel", "tflops", "gbps",
        "extra_mem_mib", "max_abs_err", "rel_err", "kernels_per_call", "memcpy_per_call",
    };
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++)
        ck_assert_msg(f[column_index(empty[i])][0] == '\0', "column %s holds '%s'", empty[i],
                      f[column_index(empty[i])]);
}
END_TEST

START_TEST(test_results_timed_row)
{
    struct result_row r;
    results_row_init(&r);
    r.variant = "inplace";
    r.problem = problem(1, 16, 16384, 128, false);
    r.mode = "hot";
    r.status = "ok";
    r.timed = true;
    const double samples[5] = {2.0, 1.9, 2.1, 2.0, 2.2};
    ck_assert_int_eq(stats_summarize(samples, 5, &r.stats), ATTN_OK);
    r.converged = true;
    r.calls_per_sample = 4;
    r.extra_mem_mib = 512;
    r.max_abs_err = 0.001;
    r.rel_err = 0.0005;

    struct csv_line l;
    ck_assert_int_eq(results_format(&r, &l), ATTN_OK);
    char *f[64];
    ck_assert_int_eq(split_line(&l, f, 64), results_column_count());
    ck_assert_str_eq(f[column_index("samples")], "5");
    ck_assert_str_eq(f[column_index("reason")], "");
    ck_assert_double_eq_tol(strtod(f[column_index("ms_median")], NULL), 2.0, 1e-9);
    ck_assert_double_eq_tol(strtod(f[column_index("ms_min")], NULL), 1.9, 1e-9);
    const double tflops = attn_flops(&r.problem) / (2.0e-3) / 1e12; /* 1099.51 */
    ck_assert_double_eq_tol(strtod(f[column_index("tflops")], NULL), tflops, tflops * 1e-4);
    const double gbps = attn_bytes(&r.problem) / (2.0e-3) / 1e9; /* 134.2 */
    ck_assert_double_eq_tol(strtod(f[column_index("gbps")], NULL), gbps, gbps * 1e-4);
    ck_assert_double_eq_tol(strtod(f[column_index("extra_mem_mib")], NULL), 512, 1e-9);
    ck_assert_double_eq_tol(strtod(f[column_index("max_abs_err")], NULL), 0.001, 1e-12);
    ck_assert_str_eq(f[column_index("kernels_per_call")], ""); /* not traced */
    ck_assert_str_eq(f[column_index("pct_peak_tflops")], "");   /* no peaks measured */
    ck_assert_str_eq(f[column_index("sm_clock_start_mhz")], ""); /* no NVML reading */
    ck_assert_str_eq(f[column_index("clock_low")], "");
}
END_TEST

START_TEST(test_results_peaks_clocks_and_trace)
{
    struct result_row r;
    results_row_init(&r);
    r.variant = "naive";
    r.problem = problem(2, 16, 1024, 64, true);
    r.mode = "graph";
    r.status = "ok";
    r.timed = true;
    const double samples[3] = {0.5, 0.5, 0.5};
    ck_assert_int_eq(stats_summarize(samples, 3, &r.stats), ATTN_OK);
    const struct peaks pk = {.gemm_tflops = 800, .gemm_n = 8192, .copy_gbps = 4000, .read_gbps = 4400};
    r.peaks = &pk;
    r.clock_start_mhz = 1980;
    r.clock_end_mhz = 1755;
    r.clock_low = 1;
    r.traced = true;
    r.kernels_per_call = 5;
    r.memcpy_per_call = 1;
    r.memset_per_call = 1;
    r.gpu_busy_ms = 0.48;
    r.launch_gap_ms = 0.02;

    struct csv_line l;
    ck_assert_int_eq(results_format(&r, &l), ATTN_OK);
    char *f[64];
    ck_assert_int_eq(split_line(&l, f, 64), results_column_count());
    const double tflops = attn_flops(&r.problem) / 0.5e-3 / 1e12;
    const double gbps = attn_bytes(&r.problem) / 0.5e-3 / 1e9;
    ck_assert_double_eq_tol(strtod(f[column_index("pct_peak_tflops")], NULL), 100 * tflops / 800, 1e-3);
    ck_assert_double_eq_tol(strtod(f[column_index("pct_peak_gbps")], NULL), 100 * gbps / 4000, 1e-3);
    ck_assert_double_eq_tol(strtod(f[column_index("pct_peak_read")], NULL), 100 * gbps / 4400, 1e-3);
    ck_assert_str_eq(f[column_index("sm_clock_start_mhz")], "1980");
    ck_assert_str_eq(f[column_index("sm_clock_end_mhz")], "1755");
    ck_assert_str_eq(f[column_index("clock_low")], "1");
    ck_assert_str_eq(f[column_index("kernels_per_call")], "5");
    ck_assert_str_eq(f[column_index("memcpy_per_call")], "1");
    ck_assert_str_eq(f[column_index("memset_per_call")], "1");
    ck_assert_double_eq_tol(strtod(f[column_index("gpu_busy_ms")], NULL), 0.48, 1e-9);
    ck_assert_double_eq_tol(strtod(f[column_index("launch_gap_ms")], NULL), 0.02, 1e-9);
}
END_TEST

/* What a variant's setup says it chose lands in the impl column, quoted when
 * it needs to be; rows of variants that say nothing leave it empty. */
START_TEST(test_results_impl_column)
{
    struct result_row r;
    results_row_init(&r);
    r.variant = "cudnn_sdpa";
    r.problem = problem(1, 2, 64, 64, false);
    r.mode = "cold";
    r.status = "ok";
    struct csv_line l;
    char *f[64];
    ck_assert_int_eq(results_format(&r, &l), ATTN_OK);
    ck_assert_int_eq(split_line(&l, f, 64), results_column_count());
    ck_assert_str_eq(f[column_index("impl")], "");

    attn_impl_clear();
    ck_assert_str_eq(attn_impl(), "");
    attn_set_impl("graph=%s engine=%s", "pattern-inference", "eng2_k24=7, cand=1/4");
    snprintf(r.impl, sizeof r.impl, "%s", attn_impl());
    ck_assert_int_eq(results_format(&r, &l), ATTN_OK);
    ck_assert_int_eq(split_line(&l, f, 64), results_column_count());
    ck_assert_str_eq(f[column_index("impl")], "graph=pattern-inference engine=eng2_k24=7, cand=1/4");
    attn_impl_clear();
    ck_assert_str_eq(attn_impl(), "");
}
END_TEST

/* ==================================================================== stats */

START_TEST(test_stats_quantile)
{
    const double s[4] = {1, 2, 3, 4};
    ck_assert_double_eq_tol(stats_quantile(s, 4, 0.5), 2.5, 1e-12);
    ck_assert_double_eq_tol(stats_quantile(s, 4, 0.1), 1.3, 1e-12);
    ck_assert_double_eq_tol(stats_quantile(s, 4, 0.9), 3.7, 1e-12);
    ck_assert_double_eq(stats_quantile(s, 4, 0.0), 1.0);
    ck_assert_double_eq(stats_quantile(s, 4, 1.0), 4.0);
    const double one[1] = {7};
    ck_assert_double_eq(stats_quantile(one, 1, 0.3), 7.0);
}
END_TEST

START_TEST(test_stats_summarize)
{
    const double samples[5] = {5, 1, 4, 2, 3};
    const double copy[5] = {5, 1, 4, 2, 3};
    struct sample_stats st;
    ck_assert_int_eq(stats_summarize(samples, 5, &st), ATTN_OK);
    ck_assert_uint_eq(st.n, 5);
    ck_assert_double_eq(st.median, 3);
    ck_assert_double_eq(st.min, 1);
    ck_assert_double_eq(st.max, 5);
    ck_assert_double_eq_tol(st.mean, 3, 1e-12);
    ck_assert_double_eq_tol(st.p10, 1.4, 1e-12);
    ck_assert_double_eq_tol(st.p25, 2, 1e-12);
    ck_assert_double_eq_tol(st.p75, 4, 1e-12);
    ck_assert_double_eq_tol(st.p90, 4.6, 1e-12);
    ck_assert_double_eq_tol(st.noise_rel, (4.0 - 2.0) / 3.0, 1e-12);
    ck_assert_mem_eq(samples, copy, sizeof copy); /* input left unsorted */
}
END_TEST

START_TEST(test_stats_single_sample)
{
    const double one[1] = {2.5};
    struct sample_stats st;
    ck_assert_int_eq(stats_summarize(one, 1, &st), ATTN_OK);
    ck_assert_uint_eq(st.n, 1);
    ck_assert_double_eq(st.median, 2.5);
    ck_assert_double_eq(st.min, 2.5);
    ck_assert_double_eq(st.max, 2.5);
    ck_assert_double_eq(st.p10, 2.5);
    ck_assert_double_eq(st.p90, 2.5);
    ck_assert_double_eq(st.mean, 2.5);
    ck_assert_double_eq(st.noise_rel, 0);
}
END_TEST

START_TEST(test_stats_summarize_no_samples)
{
    struct sample_stats st;
    const double none[1] = {0};
    ck_assert_int_ne(stats_summarize(none, 0, &st), ATTN_OK);
}
END_TEST

static const struct stop_rule rule = {.min_samples = 10, .min_ms = 20, .target_noise = 0.01,
                                      .budget_ms = 3000, .max_samples = 1000};

static struct sample_stats stats_of(size_t n, double noise)
{
    return (struct sample_stats){.n = n, .median = 1, .noise_rel = noise};
}

START_TEST(test_warmup_default)
{
    /* no --warm-ms: 3 calls at least, then up to 25 ms or 200 calls */
    ck_assert(stats_keep_warming(&rule, 0, 1000));
    ck_assert(stats_keep_warming(&rule, 2, 1000));
    ck_assert(stats_keep_warming(&rule, 3, 10));
    ck_assert(!stats_keep_warming(&rule, 3, 25));
    ck_assert(stats_keep_warming(&rule, 199, 10));
    ck_assert(!stats_keep_warming(&rule, 200, 10));
}
END_TEST

START_TEST(test_warmup_asked)
{
    /* --warm-ms: the time, with no call cap (small kernels need thousands) */
    struct stop_rule r = rule;
    r.warm_ms = 1000;
    ck_assert(stats_keep_warming(&r, 5000, 999));
    ck_assert(!stats_keep_warming(&r, 5000, 1000));
    ck_assert(stats_keep_warming(&r, 1, 5000));
    /* under the built-in 25 ms, the 25 ms still apply */
    r.warm_ms = 10;
    ck_assert(stats_keep_warming(&r, 10, 20));
    ck_assert(!stats_keep_warming(&r, 10, 25));
}
END_TEST

START_TEST(test_stop_not_before_min_samples)
{
    bool converged = true;
    struct sample_stats st = stats_of(9, 0.0);
    ck_assert(!stats_should_stop(&rule, &st, 100, 100, &converged));
    ck_assert(!converged);
}
END_TEST

START_TEST(test_stop_not_before_min_time)
{
    bool converged = true;
    struct sample_stats st = stats_of(50, 0.0);
    ck_assert(!stats_should_stop(&rule, &st, 19, 100, &converged));
    ck_assert(!converged);
}
END_TEST

START_TEST(test_stop_converged)
{
    bool converged = false;
    struct sample_stats st = stats_of(10, 0.005);
    ck_assert(stats_should_stop(&rule, &st, 20, 100, &converged));
    ck_assert(converged);
    st.noise_rel = 0.01; /* at the target counts */
    converged = false;
    ck_assert(stats_should_stop(&rule, &st, 20, 100, &converged));
    ck_assert(converged);
}
END_TEST

START_TEST(test_stop_noisy_keeps_going)
{
    bool converged = true;
    struct sample_stats st = stats_of(100, 0.02);
    ck_assert(!stats_should_stop(&rule, &st, 200, 500, &converged));
    ck_assert(!converged);
}
END_TEST

START_TEST(test_stop_budget_unconverged)
{
    bool converged = true;
    struct sample_stats st = stats_of(100, 0.02);
    ck_assert(stats_should_stop(&rule, &st, 200, 3000, &converged));
    ck_assert(!converged);
}
END_TEST

START_TEST(test_stop_max_samples_unconverged)
{
    bool converged = true;
    struct sample_stats st = stats_of(1000, 0.02);
    ck_assert(stats_should_stop(&rule, &st, 200, 500, &converged));
    ck_assert(!converged);
}
END_TEST

/* ================================================================= registry */

START_TEST(test_registry_well_formed)
{
    ck_assert_msg(registry_check() == ATTN_OK, "%s", attn_error_message());
    ck_assert_uint_gt(registry_count(), 0);
    ck_assert_ptr_null(registry_get(registry_count()));
}
END_TEST

START_TEST(test_registry_entries_complete)
{
    ck_assert_uint_gt(registry_count(), 0);
    for (size_t i = 0; i < registry_count(); i++) {
        const struct attn_variant *v = registry_get(i);
        ck_assert_ptr_nonnull(v);
        ck_assert_ptr_nonnull(v->name);
        ck_assert_ptr_nonnull(v->summary);
        ck_assert_int_gt(strlen(v->summary), 0);
        ck_assert_ptr_nonnull(v->supports);
        ck_assert_ptr_nonnull(v->workspace_bytes);
        ck_assert_ptr_nonnull(v->setup);
        ck_assert_ptr_nonnull(v->run);
        ck_assert_ptr_nonnull(v->teardown);
        for (size_t j = 0; j < i; j++) ck_assert_str_ne(registry_get(j)->name, v->name);
        ck_assert_ptr_eq(registry_find(v->name), v);
    }
}
END_TEST

START_TEST(test_registry_find)
{
    const struct attn_variant *naive = registry_find("naive");
    const struct attn_variant *inplace = registry_find("inplace");
    ck_assert_ptr_nonnull(naive);
    ck_assert_ptr_nonnull(inplace);
    ck_assert_str_eq(naive->name, "naive");
    ck_assert_str_eq(inplace->name, "inplace");
    ck_assert_ptr_null(registry_find("nope"));
    ck_assert_ptr_null(registry_find(""));
    ck_assert_ptr_null(registry_find("Naive"));
}
END_TEST

/* A variant added at run time (a PyTorch peer) is refused at registration
 * when the results reader could not take its name back (longer than the
 * reader's field, or outside [a-z0-9_]), rather than its rows written and
 * the whole run refused where it is read. */
START_TEST(test_registry_add_name_limits)
{
    const size_t before = registry_count();
    struct attn_variant v = *registry_find("naive");
    char longest[sizeof ((struct result_key *)0)->variant], too_long[sizeof longest + 1];
    memset(longest, 'p', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    memset(too_long, 'q', sizeof too_long - 1);
    too_long[sizeof too_long - 1] = '\0';
    ck_assert_uint_eq(strlen(too_long), 64);

    v.name = too_long;
    attn_error_clear();
    ck_assert_int_eq(registry_add(&v), ATTN_ERR);
    ck_assert_message_has("is 64 characters long, more than the results reader takes (63)");
    ck_assert_uint_eq(registry_count(), before);
    ck_assert_ptr_null(registry_find(too_long));

    static const char *const bad[] = {"py-fake", "Py", "a,b", "a\"b", "a\nb", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v.name = bad[i];
        ck_assert_int_eq(registry_add(&v), ATTN_ERR);
        ck_assert_message_has("is not [a-z0-9_]+");
        ck_assert_ptr_null(strchr(attn_error_message(), '\n')); /* one line */
        ck_assert_uint_eq(registry_count(), before);
    }

    v.name = longest;
    ck_assert_msg(registry_add(&v) == ATTN_OK, "%s", attn_error_message());
    ck_assert_uint_eq(registry_count(), before + 1);
    ck_assert_ptr_nonnull(registry_find(longest));
    struct result_key k;
    const struct attn_problem p = problem(1, 1, 64, 64, false);
    result_key_of(longest, &p, MODE_COLD, REGIME_BURST, &k);
    ck_assert_str_eq(k.variant, longest); /* the reader's key holds it whole */
}
END_TEST

/* --list names the Python peers: each MODULE_peers.py of the peers'
 * directory, the variants its classes name (read, not imported) and how to
 * run them; other files are not modules. */
START_TEST(test_registry_print_peers)
{
    char dir[] = "/tmp/check_cpu_peers_XXXXXX", path[96];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static const struct {
        const char *file, *text;
    } files[] = {
        {"foo_peers.py", "class Fast(Peer):\n    name = \"foo_fast\"\n"
                         "class Slow(Peer):\n    name, summary = 'foo_slow', \"slow\"\n"
                         "class Again(Slow):\n    name = \"foo_fast\"\n"
                         "name = \"not_a_class_attribute\"\n"
                         "def f(p):\n    name == \"compared\"\n    name = p.name\n"},
        {"bar_peers.py", "# names nothing\n"},
        {"attnpeer.py", "class Peer:\n    name = \"attnpeer_base\"\n"},
        {"Bad-Name_peers.py", "class X:\n    name = \"bad_module\"\n"},
        {"_peers.py", "class X:\n    name = \"no_module\"\n"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].file);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(files[i].text, f);
        fclose(f);
    }
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    registry_print_peers(f, dir);
    fclose(f);
    char want[160];
    snprintf(want, sizeof want, "\nPython peers in %s (make bench PEERS=MODULE adds them to the run):\n", dir);
    ck_assert_msg(strstr(out, want) == out, "%s", out);
    ck_assert_msg(strstr(out, "\nmodule       variants\n"
                              "bar          (make bench PEERS=bar)\n"
                              "foo          foo_fast, foo_slow (make bench PEERS=foo)\n"), "%s", out);
    ck_assert_msg(!strstr(out, "attnpeer") && !strstr(out, "bad_module") && !strstr(out, "no_module") &&
                  !strstr(out, "not_a_class") && !strstr(out, "compared"), "%s", out);
    free(out);

    /* a directory with no module, or none at all: one line saying so */
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].file);
        unlink(path);
    }
    f = open_memstream(&out, &len);
    registry_print_peers(f, dir);
    fclose(f);
    snprintf(want, sizeof want, "\nPython peers: no MODULE_peers.py in %s (ATTN_PEERS_DIR names the directory)\n",
             dir);
    ck_assert_str_eq(out, want);
    free(out);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* Where --list looks: $ATTN_PEERS_DIR, else the checkout's tools/peers
 * beside the binary's build directory (this test's: build/test_cpu). */
START_TEST(test_options_peers_dir)
{
    char buf[PATH_MAX], here[PATH_MAX], want[PATH_MAX + 16];
    setenv("ATTN_PEERS_DIR", "/somewhere/peers", 1);
    ck_assert_str_eq(options_peers_dir(buf, sizeof buf), "/somewhere/peers");
    unsetenv("ATTN_PEERS_DIR");
    ck_assert_ptr_nonnull(realpath(".", here)); /* the repository root, where the suites run */
    snprintf(want, sizeof want, "%s/tools/peers", here);
    ck_assert_str_eq(options_peers_dir(buf, sizeof buf), want);
    ck_assert_str_eq(options_peers_dir(buf, 4), "tools/peers"); /* no room: the relative one */
}
END_TEST

/* cudnn_sdpa is registered exactly when the build found cuDNN 9. */
START_TEST(test_registry_cudnn_when_built)
{
#ifdef ATTN_HAVE_CUDNN
    const struct attn_variant *v = registry_find("cudnn_sdpa");
    ck_assert_ptr_nonnull(v);
    ck_assert(v->fused);
#else
    ck_assert_ptr_null(registry_find("cudnn_sdpa"));
#endif
}
END_TEST

START_TEST(test_registry_refuse_without_device)
{
    const struct device_info none = {.present = false};
    const struct attn_problem p = problem(1, 1, 128, 64, true);
    ck_assert_uint_gt(registry_count(), 0);
    for (size_t i = 0; i < registry_count(); i++) {
        const struct attn_variant *v = registry_get(i);
        const char *why = v->supports(&p, &none);
        ck_assert_msg(why != NULL, "variant '%s' accepts a problem with no device", v->name);
        ck_assert_int_gt(strlen(why), 0);
    }
}
END_TEST

START_TEST(test_registry_naive_needs_second_score_buffer)
{
    const struct attn_variant *naive = registry_find("naive");
    const struct attn_variant *inplace = registry_find("inplace");
    ck_assert_ptr_nonnull(naive);
    ck_assert_ptr_nonnull(inplace);
    struct attn_problem p = problem(2, 4, 256, 64, true);
    size_t n = naive->workspace_bytes(&p), m = inplace->workspace_bytes(&p);
    ck_assert_uint_gt(n, m);
    ck_assert_uint_eq(n - m, (size_t)2 * 4 * 256 * 256 * 2);
    struct attn_problem big = problem(1, 16, 16384, 128, false);
    ck_assert_uint_eq(naive->workspace_bytes(&big) - inplace->workspace_bytes(&big),
                      (size_t)16 * 16384 * 16384 * 2);
}
END_TEST

/* ================================================================== options */

START_TEST(test_options_defaults)
{
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", NULL});
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert(!o.list && !o.help && !o.quiet);
    ck_assert_uint_eq(o.grid.count, 25); /* the default grid */
    ck_assert_int_eq(o.nvariants, (int)registry_count());
    for (int i = 0; i < o.nvariants; i++) ck_assert_ptr_eq(o.variants[i], registry_get(i));
    ck_assert_int_eq(o.nmodes, 1);
    ck_assert_int_eq(o.modes[0], MODE_COLD);
    ck_assert_ptr_null(o.out_dir);
    ck_assert_str_eq(o.grids_dir, "bench/grids");
    /* the defaults options_usage() promises */
    ck_assert_double_eq(o.rule.budget_ms, 3000);
    ck_assert_double_eq(o.rule.target_noise, 0.005);
    ck_assert_uint_eq(o.rule.min_samples, 10);
    ck_assert_uint_eq(o.seed, 0);
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_options_list)
{
    struct options o;
    ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", "--list", NULL}), ATTN_OK);
    ck_assert(o.list);
    grid_free(&o.grid);
    ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", "--help", NULL}), ATTN_OK);
    ck_assert(o.help);
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_options_variants)
{
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", "--variants", "naive,inplace", NULL});
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert_int_eq(o.nvariants, 2);
    ck_assert_str_eq(o.variants[0]->name, "naive");
    ck_assert_str_eq(o.variants[1]->name, "inplace");
    grid_free(&o.grid);
    rc = parse_argv(&o, (char *[]){"attnbench", "--variants", "inplace,inplace", NULL});
    ck_assert_int_eq(rc, ATTN_OK);
    ck_assert_int_eq(o.nvariants, 1);
    ck_assert_str_eq(o.variants[0]->name, "inplace");
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_options_unknown_variant)
{
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", "--variants", "naive,flash9", NULL});
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_message_has("flash9");
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_options_modes)
{
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", "--mode", "cold,hot,graph", NULL});
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert_int_eq(o.nmodes, 3);
    ck_assert_int_eq(o.modes[0], MODE_COLD);
    ck_assert_int_eq(o.modes[1], MODE_HOT);
    ck_assert_int_eq(o.modes[2], MODE_GRAPH);
    grid_free(&o.grid);
    rc = parse_argv(&o, (char *[]){"attnbench", "--mode", "graph", NULL});
    ck_assert_int_eq(rc, ATTN_OK);
    ck_assert_int_eq(o.nmodes, 1);
    ck_assert_int_eq(o.modes[0], MODE_GRAPH);
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_options_unknown_mode)
{
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", "--mode", "cold,warm", NULL});
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_message_has("warm");
    grid_free(&o.grid);
}
END_TEST

/* --flush: memset unless asked (the option's default, and every name
 * l2_flush_name gives parses back); anything else refused, naming the
 * choices. */
START_TEST(test_options_flush)
{
    struct options o;
    ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", NULL}), ATTN_OK);
    ck_assert_int_eq(o.flush, FLUSH_MEMSET);
    grid_free(&o.grid);
    for (int f = 0; f < FLUSH_COUNT; f++) {
        int rc = parse_argv(&o, (char *[]){"attnbench", "--flush", (char *)l2_flush_name((enum l2_flush)f), NULL});
        ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
        ck_assert_int_eq(o.flush, f);
        grid_free(&o.grid);
    }
    ck_assert_str_eq(l2_flush_name(FLUSH_READ), "read");
    static const char *const bad[] = {"zero", "READ", "", "memset,read"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", "--flush", (char *)bad[i], NULL}), ATTN_ERR_INPUT);
        ck_assert_message_has("--flush: '");
        ck_assert_message_has("is not memset or read");
        grid_free(&o.grid);
    }
}
END_TEST

START_TEST(test_options_point)
{
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", "--point",
                                       "batch=2 heads=4 seq=128 dim=64 causal=1", NULL});
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert_uint_eq(o.grid.count, 1); /* the default grid is not added */
    ck_assert_int_eq(o.grid.points[0].batch, 2);
    ck_assert_int_eq(o.grid.points[0].heads, 4);
    ck_assert_int_eq(o.grid.points[0].seq_len, 128);
    ck_assert_int_eq(o.grid.points[0].head_dim, 64);
    ck_assert(o.grid.points[0].causal);
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_options_grid_and_point)
{
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", "--grid", "quick", "--point",
                                       "batch=1 heads=1 seq=64 dim=64", NULL});
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert_uint_eq(o.grid.count, 12 + 1);
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_options_bad_point)
{
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", "--point", "batch=1 heads=1 seq=64", NULL});
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_message_has("--point");
    ck_assert_message_has("dim=");
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_options_unknown_option)
{
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", "--frobnicate", "3", NULL});
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_message_has("unknown option '--frobnicate'");
    grid_free(&o.grid);
    rc = parse_argv(&o, (char *[]){"attnbench", "stray", NULL});
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_message_has("stray");
    grid_free(&o.grid);
}
END_TEST

/* A mistyped flag given last (`attnbench --lsit`) must be reported as
 * unknown, not as a known option lacking its value. */
START_TEST(test_options_unknown_flag_last)
{
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", "--lsit", NULL});
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_message_has("--lsit");
    ck_assert_message_has("unknown option");
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_options_missing_value)
{
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", "--list", "--variants", NULL});
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_message_has("--variants");
    ck_assert_message_has("needs a value");
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_options_warm)
{
    struct options o;
    ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", NULL}), ATTN_OK);
    ck_assert_double_eq(o.rule.warm_ms, 0);
    grid_free(&o.grid);
    ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", "--warm-ms", "1000", NULL}), ATTN_OK);
    ck_assert_double_eq(o.rule.warm_ms, 1000);
    grid_free(&o.grid);
    ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", "--warm-ms", "-5", NULL}), ATTN_ERR_INPUT);
    ck_assert_message_has("--warm-ms");
    ck_assert_message_has("-5");
    grid_free(&o.grid);
    ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", "--warm-ms", "1s", NULL}), ATTN_ERR_INPUT);
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_options_budget)
{
    struct options o;
    ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", "--budget-ms", "500", NULL}),
                     ATTN_OK);
    ck_assert_double_eq(o.rule.budget_ms, 500);
    grid_free(&o.grid);
    ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", "--budget-ms", "soon", NULL}),
                     ATTN_ERR_INPUT);
    ck_assert_message_has("--budget-ms");
    ck_assert_message_has("soon");
    grid_free(&o.grid);
    ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", "--budget-ms", "12ms", NULL}),
                     ATTN_ERR_INPUT);
    grid_free(&o.grid);
    ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", "--budget-ms", "0", NULL}),
                     ATTN_ERR_INPUT);
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_options_missing_grid)
{
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", "--grid", "nonexistent", NULL});
    ck_assert_int_eq(rc, ATTN_ERR_INPUT);
    ck_assert_message_has("nonexistent");
    grid_free(&o.grid);
}
END_TEST

/* Issue 21, defect 4: `--out ''` and `--trace ''` reached mkdir_p, which
 * read past the empty string; an empty path is refused here. */
START_TEST(test_options_empty_paths)
{
    static const char *const opts[] = {"--out", "--trace", "--grids-dir"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        struct options o;
        char want[48];
        attn_error_clear();
        int rc = parse_argv(&o, (char *[]){"attnbench", (char *)opts[i], "", NULL});
        ck_assert_msg(rc == ATTN_ERR_INPUT, "%s '' gave %d", opts[i], rc);
        snprintf(want, sizeof want, "%s: empty path", opts[i]);
        ck_assert_str_eq(attn_error_message(), want);
        grid_free(&o.grid);
    }
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", "--out", "/", "--trace", "/", NULL});
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    ck_assert_str_eq(o.out_dir, "/");
    grid_free(&o.grid);
}
END_TEST

/* --help says how many key columns --dry-run prints: the schema's fifteen. */
START_TEST(test_options_usage_key_columns)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    options_usage(f);
    fclose(f);
    ck_assert_int_eq(RESULT_KEY_COLUMNS, 15);
    ck_assert_msg(strstr(text, "(the\n                      15 key columns variant .. regime, shard,"),
                  "%s", text);
    ck_assert_ptr_null(strstr(text, "nine"));
    free(text);
}
END_TEST

/* Run ids become DIR/RUN_ID.csv and its siblings: --run-id, --resume and
 * --extend take only 1..RUN_ID_MAX of [A-Za-z0-9._-], not starting with '.'
 * or '-': no shell syntax, path, hidden file or option look-alike, and
 * nothing longer than the results reader keeps. */
static const char *const bad_run_ids[] = {
    "x;touch${IFS}X", "$(id)", "`id`", "../x", "x/y", ".hidden", ".", "..", "-x", "", "a b",
    "a\033[31m", "caf\xc3\xa9",
};

START_TEST(test_options_run_id_alphabet)
{
    static const char *const opts[] = {"--run-id", "--resume", "--extend"};
    char long_id[300], max_id[RUN_ID_MAX + 2], want[160];
    memset(long_id, 'a', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = '\0';
    memset(max_id, 'b', sizeof max_id - 1);
    max_id[sizeof max_id - 1] = '\0'; /* RUN_ID_MAX + 1 characters: one too many */
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        struct options o;
        for (size_t i = 0; i <= sizeof bad_run_ids / sizeof bad_run_ids[0]; i++) {
            const char *id = i < sizeof bad_run_ids / sizeof bad_run_ids[0] ? bad_run_ids[i] : long_id;
            attn_error_clear();
            int rc = parse_argv(&o, (char *[]){"attnbench", (char *)opts[k], (char *)id, "--dry-run", NULL});
            ck_assert_msg(rc == ATTN_ERR_INPUT, "%s '%s' gave %d", opts[k], id, rc);
            snprintf(want, sizeof want, "%s: '", opts[k]);
            ck_assert_msg(strncmp(attn_error_message(), want, strlen(want)) == 0, "%s", attn_error_message());
            ck_assert_message_has("' is not a run id (1 to 95 letters, digits, '.', '_' and '-', not "
                                  "starting with '.' or '-')");
            ck_assert_ptr_null(strchr(attn_error_message(), '\033')); /* quoted escaped */
            grid_free(&o.grid);
        }
        ck_assert_int_eq(parse_argv(&o, (char *[]){"attnbench", (char *)opts[k], max_id, "--dry-run", NULL}),
                         ATTN_ERR_INPUT);
        grid_free(&o.grid);
        max_id[RUN_ID_MAX] = '\0'; /* RUN_ID_MAX characters: the longest */
        int rc = parse_argv(&o, (char *[]){"attnbench", (char *)opts[k], max_id, "--dry-run", NULL});
        ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
        grid_free(&o.grid);
        max_id[RUN_ID_MAX] = 'b';
        rc = parse_argv(&o, (char *[]){"attnbench", (char *)opts[k], "20261201T031500Z-2.a_b", "--dry-run", NULL});
        ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
        grid_free(&o.grid);
    }
    ck_assert_uint_eq(RUN_ID_MAX, 95); /* the message above spells it */
}
END_TEST

/* A --grid NAME becomes GRIDS_DIR/NAME.grid: the same alphabet; a path
 * (with '/', or ending in .grid) is a path. */
START_TEST(test_options_grid_name_alphabet)
{
    static const char *const bad[] = {"$(id)", ".hidden", "..", "-x", "a;b", "a b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct options o;
        attn_error_clear();
        int rc = parse_argv(&o, (char *[]){"attnbench", "--grid", (char *)bad[i], NULL});
        ck_assert_msg(rc == ATTN_ERR_INPUT, "--grid '%s' gave %d", bad[i], rc);
        ck_assert_message_has("' is not a grid name (1 to 250 letters, digits, '.', '_' and '-', not "
                              "starting with '.' or '-') nor a path");
        grid_free(&o.grid);
    }
    struct options o;
    int rc = parse_argv(&o, (char *[]){"attnbench", "--grid", "default", NULL});
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    grid_free(&o.grid);
    rc = parse_argv(&o, (char *[]){"attnbench", "--grid", "./bench/grids/default.grid", NULL});
    ck_assert_msg(rc == ATTN_OK, "%s", attn_error_message());
    grid_free(&o.grid);
}
END_TEST

/* ==================================================================== modes */

START_TEST(test_mode_parse)
{
    enum attn_mode m = MODE_COUNT;
    ck_assert_int_eq(attn_mode_parse("cold", &m), ATTN_OK);
    ck_assert_int_eq(m, MODE_COLD);
    ck_assert_int_eq(attn_mode_parse("hot", &m), ATTN_OK);
    ck_assert_int_eq(m, MODE_HOT);
    ck_assert_int_eq(attn_mode_parse("graph", &m), ATTN_OK);
    ck_assert_int_eq(m, MODE_GRAPH);
    m = MODE_HOT;
    ck_assert_int_eq(attn_mode_parse("warm", &m), ATTN_ERR_INPUT);
    ck_assert_message_has("warm");
    ck_assert_int_eq(m, MODE_HOT); /* untouched on failure */
    ck_assert_int_eq(attn_mode_parse("Cold", &m), ATTN_ERR_INPUT);
    ck_assert_int_eq(attn_mode_parse("", &m), ATTN_ERR_INPUT);
}
END_TEST

START_TEST(test_mode_names_round_trip)
{
    for (int i = 0; i < MODE_COUNT; i++) {
        enum attn_mode m;
        ck_assert_int_eq(attn_mode_parse(attn_mode_name((enum attn_mode)i), &m), ATTN_OK);
        ck_assert_int_eq(m, i);
    }
    ck_assert_str_eq(attn_mode_name(MODE_COLD), "cold");
    ck_assert_str_eq(attn_mode_name(MODE_GRAPH), "graph");
}
END_TEST

/* =================================================================== suites */

static Suite *numerics_suite(void)
{
    Suite *s = suite_create("numerics");
    TCase *tc = tcase_create("convert");
    tcase_add_test(tc, test_convert_exact_values);
    tcase_add_test(tc, test_convert_bf16_round_to_nearest_even);
    tcase_add_test(tc, test_convert_fp16_round_to_nearest_even);
    tcase_add_test(tc, test_convert_overflow_to_infinity);
    tcase_add_test(tc, test_convert_fp16_subnormal);
    tcase_add_test(tc, test_convert_nan_stays_nan);
    tcase_add_test(tc, test_convert_all_patterns_round_trip);
    suite_add_tcase(s, tc);

    tc = tcase_create("reference");
    tcase_add_test(tc, test_reference_single_key_returns_v);
    tcase_add_test(tc, test_reference_single_key_fp16);
    tcase_add_test(tc, test_reference_two_keys_full);
    tcase_add_test(tc, test_reference_scale_applied);
    tcase_add_test(tc, test_reference_two_keys_causal);
    tcase_add_test(tc, test_reference_three_keys_causal);
    tcase_add_test(tc, test_reference_uniform_keys_average_v);
    tcase_add_test(tc, test_reference_large_scores_stable);
    tcase_add_test(tc, test_reference_heads_independent);
    tcase_add_test(tc, test_reference_grouped_heads_read_their_group);
    tcase_add_test(tc, test_reference_ragged_is_each_sequence_alone);
    suite_add_tcase(s, tc);

    tc = tcase_create("reference_bwd");
    tcase_add_loop_test(tc, test_reference_bwd_matches_finite_differences, 0, N_GRAD_SHAPES);
    tcase_add_loop_test(tc, test_reference_bwd_entry_is_core_on_widened_inputs, 0, 2);
    tcase_add_loop_test(tc, test_reference_bwd_single_key, 0, 2);
    tcase_add_test(tc, test_reference_bwd_group_sums_its_heads);
    tcase_add_test(tc, test_reference_bwd_malformed_varlen_fails);
    tcase_add_loop_test(tc, test_grad_compare_catches_a_wrong_gradient, 0, 6);
    tcase_add_test(tc, test_grad_tolerance_ordered);
    tcase_add_test(tc, test_grad_compare_row_scale);
    suite_add_tcase(s, tc);

    tc = tcase_create("compare");
    tcase_add_test(tc, test_compare_parts_add_up);
    tcase_add_test(tc, test_compare_identical_ok);
    tcase_add_test(tc, test_compare_one_element_off);
    tcase_add_test(tc, test_compare_nan_output);
    tcase_add_test(tc, test_compare_inf_output_fp16);
    tcase_add_test(tc, test_compare_first_bad_is_earliest);
    tcase_add_test(tc, test_compare_rel_err_known_vector);
    tcase_add_test(tc, test_compare_rel_l2_catches_bias);
    tcase_add_test(tc, test_compare_fp16_tighter_than_bf16);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *problem_suite(void)
{
    Suite *s = suite_create("problem");
    TCase *tc = tcase_create("counts");
    tcase_add_test(tc, test_flops_concrete);
    tcase_add_test(tc, test_flops_large_no_overflow);
    tcase_add_test(tc, test_bytes_and_elems);
    tcase_add_test(tc, test_elems_overflow_saturates);
    tcase_add_test(tc, test_dtype_names);
    tcase_add_test(tc, test_error_messages);
    suite_add_tcase(s, tc);

    tc = tcase_create("equality");
    tcase_add_test(tc, test_problem_equal_every_field);
    tcase_add_test(tc, test_result_key_problem);
    tcase_add_test(tc, test_result_key_equal_every_field);
    tcase_add_test(tc, test_results_find_by_every_field);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *grid_suite(void)
{
    Suite *s = suite_create("grid");
    TCase *tc = tcase_create("specs");
    tcase_add_test(tc, test_grid_lists_and_defaults);
    tcase_add_test(tc, test_grid_init_key);
    tcase_add_test(tc, test_grid_pass_key);
    tcase_add_test(tc, test_problem_pass_counts);
    tcase_add_test(tc, test_grid_decode_keys);
    tcase_add_test(tc, test_results_q_len_column);
    tcase_add_test(tc, test_problem_decode_counts);
    tcase_add_test(tc, test_reference_decode_is_prefills_last_rows);
    tcase_add_test(tc, test_grid_page_key);
    tcase_add_test(tc, test_page_table_is_a_shuffle);
    tcase_add_test(tc, test_reference_paged_is_dense);
    tcase_add_test(tc, test_results_page_column);
    tcase_add_test(tc, test_ragged_cache_decode);
    tcase_add_test(tc, test_grid_range_powers_of_two);
    tcase_add_test(tc, test_grid_tokens_and_hidden);
    tcase_add_test(tc, test_grid_kv_heads);
    tcase_add_test(tc, test_grid_kv_heads_refused);
    tcase_add_test(tc, test_varlen_lengths_and_counts);
    tcase_add_test(tc, test_varlen_malformed);
    tcase_add_test(tc, test_grid_varlen);
    tcase_add_test(tc, test_results_varlen_column);
    tcase_add_test(tc, test_results_kv_heads_column);
    tcase_add_test(tc, test_results_pass_column);
    tcase_add_test(tc, test_grid_causal_dtype_whitespace);
    tcase_add_test(tc, test_grid_duplicates_dropped);
    tcase_add_test(tc, test_grid_failed_spec_adds_nothing);
    tcase_add_test(tc, test_grid_many_points_grow);
    tcase_add_test(tc, test_grid_point_label);
    tcase_add_test(tc, test_grid_duplicate_values_one_point);
    tcase_add_test(tc, test_grid_point_cap);
    tcase_add_test(tc, test_grid_dedup_linear_keeps_order);
    tcase_add_test(tc, test_grid_range_powers_inside);
    tcase_add_test(tc, test_grid_elements_overflow);
    tcase_add_loop_test(tc, test_grid_size_limits, 0, sizeof size_limits / sizeof size_limits[0]);
    tcase_add_test(tc, test_grid_size_limits_where_read);
    tcase_add_test(tc, test_grid_message_control_bytes);
    tcase_add_loop_test(tc, test_grid_bad_spec, 0,
                        (int)(sizeof bad_specs / sizeof bad_specs[0]));
    suite_add_tcase(s, tc);

    tc = tcase_create("files");
    tcase_add_test(tc, test_grid_default_file);
    tcase_add_test(tc, test_grid_other_files);
    tcase_add_test(tc, test_grid_missing_files);
    tcase_add_test(tc, test_grid_file_comments_and_crlf);
    tcase_add_test(tc, test_grid_file_empty);
    tcase_add_test(tc, test_grid_file_only_comments);
    tcase_add_test(tc, test_grid_file_bad_line_named);
    tcase_add_test(tc, test_grid_file_nul_byte);
    tcase_add_test(tc, test_grid_file_long_lines);
    tcase_add_test(tc, test_grid_file_directory);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *csv_suite(void)
{
    Suite *s = suite_create("csv");
    TCase *tc = tcase_create("lines");
    tcase_add_test(tc, test_csv_quoting);
    tcase_add_test(tc, test_files_mkdir_p);
    tcase_add_test(tc, test_csv_numbers);
    tcase_add_test(tc, test_csv_overflow_refused);
    tcase_add_test(tc, test_csv_split_round_trip);
    tcase_add_test(tc, test_csv_split_empty_fields);
    tcase_add_test(tc, test_csv_split_rejects_malformed);
    tcase_add_test(tc, test_csv_read_line);
    tcase_add_test(tc, test_csv_read_line_too_long);
    suite_add_tcase(s, tc);

    tc = tcase_create("files");
    tcase_add_test(tc, test_csv_create_and_append);
    suite_add_tcase(s, tc);

    tc = tcase_create("results");
    tcase_add_test(tc, test_results_header);
    tcase_add_test(tc, test_results_untimed_row);
    tcase_add_test(tc, test_results_timed_row);
    tcase_add_test(tc, test_results_peaks_clocks_and_trace);
    tcase_add_test(tc, test_results_impl_column);
    suite_add_tcase(s, tc);
    return s;
}

/* ------------------------------------------------------------ settling */

/* Readings every 50 ms for `seconds` from clock(t) and power(t) (t in s);
 * the first time the rule says settled, in s, or -1. */
static double settle_time(double seconds, double (*clock)(double), double (*power)(double), struct settle_state *end)
{
    static struct settle_watch w;
    settle_begin(&w);
    double first = -1;
    for (double t = 0; t <= seconds + 1e-9; t += 0.05) {
        settle_add(&w, 1000 * t, clock(t), power(t));
        *end = settle_check(&w);
        if (end->settled && first < 0) first = t;
    }
    return first;
}

static double capped_clock(double t) { return t < 0.1 ? 1980 : ((int)(t * 20) % 2 ? 1665 : 1710); }
static double capped_power(double t) { (void)t; return 690; }
static double rising_clock(double t) { return 1500 + 60 * t; } /* 4 % a second */
static double drifting_power(double t) { return 500 + 20 * t; }  /* 4 % a second at first */
static double unknown_power(double t) { (void)t; return NAN; }

/* A board at its power cap, the clock hunting between two steps: settled
 * after two windows, at their mean; not before. */
START_TEST(test_settle_at_the_cap)
{
    struct settle_state st;
    const double t = settle_time(6, capped_clock, capped_power, &st);
    ck_assert_msg(t >= 2 * SETTLE_WINDOW_MS / 1000 && t < 2.5, "settled at %g s", t);
    ck_assert(st.settled);
    ck_assert_double_eq_tol(st.mhz, 1687.5, 2);
    ck_assert_double_eq_tol(st.watts, 690, 1e-9);
    /* power unknown (no NVML): the clock alone decides */
    ck_assert(settle_time(6, capped_clock, unknown_power, &st) > 0);
    ck_assert(isnan(st.watts));
}
END_TEST

/* A clock still rising, or power still drifting, is not settled. */
START_TEST(test_settle_not_while_moving)
{
    struct settle_state st;
    ck_assert_double_eq(settle_time(6, rising_clock, capped_power, &st), -1);
    ck_assert(!st.settled);
    ck_assert_double_eq(settle_time(1.5, capped_clock, drifting_power, &st), -1);
}
END_TEST

/* Readings closer than SETTLE_MIN_GAP_MS are dropped: a flood of them does
 * not push the window before the last out of the ring. */
START_TEST(test_settle_flood_of_readings)
{
    static struct settle_watch w;
    settle_begin(&w);
    struct settle_state st = {0};
    for (int i = 0; i <= 3000 * 10; i++) { /* every 0.1 ms for 3 s */
        settle_add(&w, i * 0.1, 1700, 690);
        st = settle_check(&w);
    }
    ck_assert(w.n < SETTLE_READINGS_MAX);
    ck_assert(st.settled);
}
END_TEST

static Suite *stats_suite(void)
{
    Suite *s = suite_create("stats");
    TCase *tc = tcase_create("summaries");
    tcase_add_test(tc, test_stats_quantile);
    tcase_add_test(tc, test_stats_summarize);
    tcase_add_test(tc, test_stats_single_sample);
    tcase_add_test(tc, test_stats_summarize_no_samples);
    suite_add_tcase(s, tc);

    tc = tcase_create("settling");
    tcase_add_test(tc, test_settle_at_the_cap);
    tcase_add_test(tc, test_settle_not_while_moving);
    tcase_add_test(tc, test_settle_flood_of_readings);
    suite_add_tcase(s, tc);

    tc = tcase_create("stop_rule");
    tcase_add_test(tc, test_warmup_default);
    tcase_add_test(tc, test_warmup_asked);
    tcase_add_test(tc, test_stop_not_before_min_samples);
    tcase_add_test(tc, test_stop_not_before_min_time);
    tcase_add_test(tc, test_stop_converged);
    tcase_add_test(tc, test_stop_noisy_keeps_going);
    tcase_add_test(tc, test_stop_budget_unconverged);
    tcase_add_test(tc, test_stop_max_samples_unconverged);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *registry_suite(void)
{
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("variants");
    tcase_add_test(tc, test_registry_well_formed);
    tcase_add_test(tc, test_registry_entries_complete);
    tcase_add_test(tc, test_registry_find);
    tcase_add_test(tc, test_registry_add_name_limits);
    tcase_add_test(tc, test_registry_print_peers);
    tcase_add_test(tc, test_registry_cudnn_when_built);
    tcase_add_test(tc, test_registry_refuse_without_device);
    tcase_add_test(tc, test_registry_naive_needs_second_score_buffer);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *options_suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("command_line");
    tcase_add_test(tc, test_options_defaults);
    tcase_add_test(tc, test_options_list);
    tcase_add_test(tc, test_options_variants);
    tcase_add_test(tc, test_options_unknown_variant);
    tcase_add_test(tc, test_options_modes);
    tcase_add_test(tc, test_options_unknown_mode);
    tcase_add_test(tc, test_options_flush);
    tcase_add_test(tc, test_options_point);
    tcase_add_test(tc, test_options_grid_and_point);
    tcase_add_test(tc, test_options_bad_point);
    tcase_add_test(tc, test_options_unknown_option);
    tcase_add_test(tc, test_options_unknown_flag_last);
    tcase_add_test(tc, test_options_missing_value);
    tcase_add_test(tc, test_options_budget);
    tcase_add_test(tc, test_options_warm);
    tcase_add_test(tc, test_options_missing_grid);
    tcase_add_test(tc, test_options_empty_paths);
    tcase_add_test(tc, test_options_run_id_alphabet);
    tcase_add_test(tc, test_options_usage_key_columns);
    tcase_add_test(tc, test_options_peers_dir);
    tcase_add_test(tc, test_options_grid_name_alphabet);
    suite_add_tcase(s, tc);

    tc = tcase_create("modes");
    tcase_add_test(tc, test_mode_parse);
    tcase_add_test(tc, test_mode_names_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(numerics_suite());
    srunner_add_suite(sr, problem_suite());
    srunner_add_suite(sr, grid_suite());
    srunner_add_suite(sr, csv_suite());
    srunner_add_suite(sr, stats_suite());
    srunner_add_suite(sr, registry_suite());
    srunner_add_suite(sr, options_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

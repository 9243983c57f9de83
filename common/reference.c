/* reference.c — float64 reference attention, bf16/fp16 conversion and the
 * tolerance check (reference.h). Slow on purpose: the obvious loops, so that
 * a reader can check them against the formula. */
#include "reference.h"
#include "errors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float bits_to_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t float_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float fp16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    int exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) { /* zero or subnormal: mant · 2^-24 */
        float f = (float)mant * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    return bits_to_float(sign | ((uint32_t)(exp - 15 + 127) << 23) | (mant << 13));
}

static uint16_t float_to_fp16(float f)
{
    uint32_t u = float_to_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    if (isnan(f)) return sign | 0x7e00;
    float a = fabsf(f);
    if (a >= 65520.0f) return sign | 0x7c00; /* rounds to infinity */
    if (a < 6.103515625e-05f) {              /* subnormal: units of 2^-24 */
        float units = a * 16777216.0f;
        float r = nearbyintf(units); /* ties to even in the default mode */
        return sign | (uint16_t)r;
    }
    uint32_t au = u & 0x7fffffffu;
    uint32_t rounded = au + 0xfffu + ((au >> 13) & 1u);
    uint32_t exp = (rounded >> 23) - 127 + 15;
    return sign | (uint16_t)((exp << 10) | ((rounded >> 13) & 0x3ff));
}

float attn_half_to_float(uint16_t bits, enum attn_dtype t)
{
    if (t == ATTN_FP16) return fp16_to_float(bits);
    return bits_to_float((uint32_t)bits << 16);
}

uint16_t attn_float_to_half(float f, enum attn_dtype t)
{
    if (t == ATTN_FP16) return float_to_fp16(f);
    uint32_t u = float_to_bits(f);
    if (isnan(f)) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* Sequence by sequence, head by head, row by row. Row i of query head h of
 * sequence b is at qh + i·qstride, key row j of its K/V head at kh +
 * j·kvstride: consecutive rows (stride head_dim) of one head's [S, D] block
 * when dense; every heads·head_dim (kv_heads·head_dim) elements in a packed
 * THD batch, whose sequence b starts at token `first`. */
int attn_reference_f64(const struct attn_problem *p, const uint16_t *q, const uint16_t *k,
                       const uint16_t *v, double *o)
{
    const size_t S = (size_t)p->seq_len, D = (size_t)p->head_dim;
    const size_t H = (size_t)p->heads, KVH = (size_t)attn_kv_heads(p);
    const size_t group = H / KVH; /* query heads per K/V head */
    const bool packed = attn_is_varlen(p);
    const size_t qstride = packed ? H * D : D, kvstride = packed ? KVH * D : D;
    int *lens = malloc((p->batch > 0 ? (size_t)p->batch : 1) * sizeof *lens);
    double *scores = malloc(S * sizeof *scores);
    double *qrow = malloc(D * sizeof *qrow);
    if (!lens || !scores || !qrow) {
        free(lens);
        free(scores);
        free(qrow);
        return ATTN_FAIL(ATTN_ERR, "out of host memory for the reference");
    }
    int rc = attn_seq_lens(p, lens); /* seq_len each when dense */
    size_t first = 0;                /* the sequence's first token (packed) */
    for (int b = 0; rc == ATTN_OK && b < p->batch; b++) {
        const size_t L = (size_t)lens[b];
        for (size_t h = 0; h < H; h++) {
            const size_t kvh = h / group;
            const size_t qoff = packed ? (first * H + h) * D : ((size_t)b * H + h) * S * D;
            const size_t kvoff = packed ? (first * KVH + kvh) * D : ((size_t)b * KVH + kvh) * S * D;
            const uint16_t *qh = q + qoff, *kh = k + kvoff, *vh = v + kvoff;
            double *oh = o + qoff;
            for (size_t i = 0; i < L; i++) {
                size_t keys = p->causal ? i + 1 : L;
                for (size_t d = 0; d < D; d++)
                    qrow[d] = attn_half_to_float(qh[i * qstride + d], p->dtype);
                double max = -INFINITY;
                for (size_t j = 0; j < keys; j++) {
                    double dot = 0;
                    for (size_t d = 0; d < D; d++)
                        dot += qrow[d] * attn_half_to_float(kh[j * kvstride + d], p->dtype);
                    scores[j] = dot * (double)p->scale;
                    if (scores[j] > max) max = scores[j];
                }
                double sum = 0;
                for (size_t j = 0; j < keys; j++) {
                    scores[j] = exp(scores[j] - max);
                    sum += scores[j];
                }
                double *orow = oh + i * qstride;
                for (size_t d = 0; d < D; d++) orow[d] = 0;
                for (size_t j = 0; j < keys; j++) {
                    double w = scores[j] / sum;
                    for (size_t d = 0; d < D; d++)
                        orow[d] += w * attn_half_to_float(vh[j * kvstride + d], p->dtype);
                }
            }
        }
        first += L;
    }
    free(lens);
    free(scores);
    free(qrow);
    return rc;
}

struct attn_tolerance attn_tolerance_for(enum attn_dtype t)
{
    /* bf16 keeps 8 significant bits (relative step 2^-8 = 3.9e-3), fp16 11
     * (4.9e-4); the eager variants round S and P to the dtype on the way, so
     * allow a few steps of each. */
    if (t == ATTN_FP16) return (struct attn_tolerance){.atol = 2e-3, .rtol = 5e-3, .rel_l2 = 2e-3};
    return (struct attn_tolerance){.atol = 1e-2, .rtol = 2e-2, .rel_l2 = 1e-2};
}

struct attn_comparison attn_compare(const double *ref, const uint16_t *out, size_t n,
                                    enum attn_dtype t, struct attn_tolerance tol)
{
    struct attn_comparison c = {.first_bad = (size_t)-1};
    double diff2 = 0, ref2 = 0;
    for (size_t i = 0; i < n; i++) {
        double o = attn_half_to_float(out[i], t), r = ref[i];
        if (!isfinite(o)) {
            if (c.nonfinite++ == 0 && c.first_bad == (size_t)-1) c.first_bad = i;
            continue;
        }
        double e = fabs(o - r);
        if (e > c.max_abs_err) c.max_abs_err = e;
        if (e > tol.atol + tol.rtol * fabs(r) && c.bad++ == 0 && c.first_bad == (size_t)-1)
            c.first_bad = i;
        diff2 += e * e;
        ref2 += r * r;
    }
    c.rel_err = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    if (c.nonfinite) c.max_abs_err = c.rel_err = INFINITY;
    c.ok = c.nonfinite == 0 && c.bad == 0 && c.rel_err <= tol.rel_l2;
    return c;
}

/* reference.c — float64 reference attention, forward and backward, bf16/fp16
 * conversion and the tolerance checks (reference.h). The references are
 * slow on purpose: the obvious loops, so that a reader can check them
 * against the formula. The checks split a large tensor over the CPU's
 * cores (a backward row compares four of 33.5 M elements). */
#include "reference.h"
#include "errors.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

uint16_t attn_cache_tail(enum attn_dtype t) { return attn_float_to_half(256.0f, t); }

/* Sequence by sequence, head by head, row by row. Row i of query head h of
 * sequence b is at qh + i·qstride, key row j of its K/V head at kh +
 * j·kvstride: consecutive rows (stride head_dim) of one head's [S, D] block
 * when dense; every heads·head_dim (kv_heads·head_dim) elements in a packed
 * THD batch, whose sequence b starts at token `first`. */
/* Where sequence b's query head h starts in Q (O, dO, dQ) and its K/V head
 * in K (V, dK, dV), in elements: [B, H, q_len, D] (q_len = S but for a
 * decode) and [B, KV, S, D] when dense; from token row `first` of the
 * packed tensors when ragged. */
static void head_offsets(const struct attn_problem *p, int b, size_t h, size_t first, size_t *qoff,
                         size_t *kvoff)
{
    const size_t H = (size_t)p->heads, KVH = (size_t)attn_kv_heads(p), S = (size_t)p->seq_len;
    const size_t D = (size_t)p->head_dim, kvh = h / (H / KVH);
    const bool packed = attn_is_packed(p);
    *qoff = packed ? (first * H + h) * D : ((size_t)b * H + h) * (size_t)attn_q_len(p) * D;
    *kvoff = packed ? (first * KVH + kvh) * D : ((size_t)b * KVH + kvh) * S * D;
}

/* Where key (value) row j of sequence b's K/V head kvh starts: kvoff +
 * j·kvstride (head_offsets'), or through the page table of a paged cache. */
static size_t kv_row(const struct attn_problem *p, const int *table, size_t kvoff, int b, size_t h, size_t j,
                     size_t kvstride)
{
    if (!table) return kvoff + j * kvstride;
    return attn_kv_offset(p, table, b, (int)(h / ((size_t)p->heads / (size_t)attn_kv_heads(p))), (int)j);
}

int attn_reference_f64(const struct attn_problem *p, const uint16_t *q, const uint16_t *k,
                       const uint16_t *v, double *o)
{
    const size_t S = (size_t)p->seq_len, D = (size_t)p->head_dim;
    const size_t H = (size_t)p->heads, KVH = (size_t)attn_kv_heads(p);
    const bool packed = attn_is_packed(p);
    const size_t qstride = packed ? H * D : D, kvstride = packed ? KVH * D : D;
    int *lens = malloc((p->batch > 0 ? (size_t)p->batch : 1) * sizeof *lens);
    double *scores = malloc(S * sizeof *scores);
    double *qrow = malloc(D * sizeof *qrow);
    int *table = attn_is_paged(p) ? malloc(((size_t)p->batch * (size_t)attn_pages_per_seq(p) + 1) * sizeof *table)
                                  : NULL;
    if (!lens || !scores || !qrow || (attn_is_paged(p) && !table)) {
        free(lens);
        free(scores);
        free(qrow);
        free(table);
        return ATTN_FAIL(ATTN_ERR, "out of host memory for the reference");
    }
    int rc = attn_seq_lens(p, lens); /* seq_len each when dense */
    if (rc == ATTN_OK && table) rc = attn_page_table(p, table);
    size_t first = 0; /* the sequence's first token (packed) */
    for (int b = 0; rc == ATTN_OK && b < p->batch; b++) {
        /* a decode's queries are the sequence's last QL tokens: causal, query
         * i sees keys 0 .. L - QL + i (bottom-right) */
        const size_t L = (size_t)lens[b], QL = attn_is_decode(p) ? (size_t)attn_q_len(p) : L;
        for (size_t h = 0; h < H; h++) {
            size_t qoff, kvoff;
            head_offsets(p, b, h, first, &qoff, &kvoff);
            const uint16_t *qh = q + qoff;
            double *oh = o + qoff;
            for (size_t i = 0; i < QL; i++) {
                size_t keys = p->causal ? L - QL + i + 1 : L;
                for (size_t d = 0; d < D; d++)
                    qrow[d] = attn_half_to_float(qh[i * qstride + d], p->dtype);
                double max = -INFINITY;
                for (size_t j = 0; j < keys; j++) {
                    double dot = 0;
                    const uint16_t *kr = k + kv_row(p, table, kvoff, b, h, j, kvstride);
                    for (size_t d = 0; d < D; d++) dot += qrow[d] * attn_half_to_float(kr[d], p->dtype);
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
                    const uint16_t *vr = v + kv_row(p, table, kvoff, b, h, j, kvstride);
                    for (size_t d = 0; d < D; d++) orow[d] += w * attn_half_to_float(vr[d], p->dtype);
                }
            }
        }
        first += L;
    }
    free(lens);
    free(scores);
    free(qrow);
    free(table);
    return rc;
}

/* The backward, sequence by sequence, head by head, query row by query row,
 * over the layouts attn_reference_f64 walks. Row i recomputes its scores,
 * its softmax row P and its output row O; then, key by key, dP_ij = dO_i·V_j
 * and dS_ij = P_ij·(dP_ij − D_i) with D_i = dO_i·O_i, and adds its share to
 * dQ_i, dK_j and dV_j. dK and dV start at zero and sum over the rows of every
 * query head of the K/V head's group. */
int attn_reference_bwd_f64_on_doubles(const struct attn_problem *p, const double *q,
                                      const double *k, const double *v, const double *dout,
                                      double *dq, double *dk, double *dv)
{
    if (attn_is_decode(p)) return ATTN_FAIL(ATTN_ERR, "the backward reference takes no decode point");
    const size_t S = (size_t)p->seq_len, D = (size_t)p->head_dim;
    const size_t H = (size_t)p->heads, KVH = (size_t)attn_kv_heads(p);
    const bool packed = attn_is_varlen(p);
    const size_t qstride = packed ? H * D : D, kvstride = packed ? KVH * D : D;
    const double scale = (double)p->scale;
    const size_t nq = attn_tensor_elems(p), nkv = attn_kv_tensor_elems(p);
    int *lens = malloc((p->batch > 0 ? (size_t)p->batch : 1) * sizeof *lens);
    double *probs = malloc((S > 0 ? S : 1) * sizeof *probs);
    double *orow = malloc((D > 0 ? D : 1) * sizeof *orow);
    if (!lens || !probs || !orow) {
        free(lens);
        free(probs);
        free(orow);
        return ATTN_FAIL(ATTN_ERR, "out of host memory for the backward reference");
    }
    for (size_t e = 0; e < nq; e++) dq[e] = 0;
    for (size_t e = 0; e < nkv; e++) dk[e] = dv[e] = 0;
    int rc = attn_seq_lens(p, lens); /* seq_len each when dense */
    size_t first = 0;                /* the sequence's first token (packed) */
    for (int b = 0; rc == ATTN_OK && b < p->batch; b++) {
        const size_t L = (size_t)lens[b];
        for (size_t h = 0; h < H; h++) {
            size_t qoff, kvoff;
            head_offsets(p, b, h, first, &qoff, &kvoff);
            const double *qh = q + qoff, *kh = k + kvoff, *vh = v + kvoff, *doh = dout + qoff;
            double *dqh = dq + qoff, *dkh = dk + kvoff, *dvh = dv + kvoff;
            for (size_t i = 0; i < L; i++) {
                const size_t keys = p->causal ? i + 1 : L;
                const double *qrow = qh + i * qstride, *dorow = doh + i * qstride;
                double max = -INFINITY;
                for (size_t j = 0; j < keys; j++) {
                    double dot = 0;
                    for (size_t d = 0; d < D; d++) dot += qrow[d] * kh[j * kvstride + d];
                    probs[j] = dot * scale;
                    if (probs[j] > max) max = probs[j];
                }
                double sum = 0;
                for (size_t j = 0; j < keys; j++) {
                    probs[j] = exp(probs[j] - max);
                    sum += probs[j];
                }
                for (size_t j = 0; j < keys; j++) probs[j] /= sum;
                for (size_t d = 0; d < D; d++) orow[d] = 0;
                for (size_t j = 0; j < keys; j++)
                    for (size_t d = 0; d < D; d++) orow[d] += probs[j] * vh[j * kvstride + d];
                double delta = 0; /* D_i = rowsum(dO∘O) */
                for (size_t d = 0; d < D; d++) delta += dorow[d] * orow[d];
                for (size_t j = 0; j < keys; j++) {
                    const double *krow = kh + j * kvstride, *vrow = vh + j * kvstride;
                    double dp = 0; /* dP_ij = dO_i·V_j */
                    for (size_t d = 0; d < D; d++) dp += dorow[d] * vrow[d];
                    const double ds = probs[j] * (dp - delta);
                    for (size_t d = 0; d < D; d++) {
                        dvh[j * kvstride + d] += probs[j] * dorow[d];
                        dqh[i * qstride + d] += scale * ds * krow[d];
                        dkh[j * kvstride + d] += scale * ds * qrow[d];
                    }
                }
            }
        }
        first += L;
    }
    free(lens);
    free(probs);
    free(orow);
    return rc;
}

/* n 16-bit values widened to doubles in a fresh malloc'd array; NULL when
 * out of memory. */
static double *widen(const uint16_t *x, size_t n, enum attn_dtype t)
{
    if (n > SIZE_MAX / sizeof(double)) return NULL;
    double *out = malloc((n > 0 ? n : 1) * sizeof *out);
    if (!out) return NULL;
    for (size_t e = 0; e < n; e++) out[e] = attn_half_to_float(x[e], t);
    return out;
}

int attn_reference_bwd_f64(const struct attn_problem *p, const uint16_t *q, const uint16_t *k,
                           const uint16_t *v, const uint16_t *dout, double *dq, double *dk,
                           double *dv)
{
    const size_t nq = attn_tensor_elems(p), nkv = attn_kv_tensor_elems(p);
    double *qd = widen(q, nq, p->dtype), *kd = widen(k, nkv, p->dtype);
    double *vd = widen(v, nkv, p->dtype), *dod = widen(dout, nq, p->dtype);
    int rc = qd && kd && vd && dod
                 ? attn_reference_bwd_f64_on_doubles(p, qd, kd, vd, dod, dq, dk, dv)
                 : ATTN_FAIL(ATTN_ERR, "out of host memory for the backward reference's inputs");
    free(qd);
    free(kd);
    free(vd);
    free(dod);
    return rc;
}

struct attn_tolerance attn_tolerance_for(enum attn_dtype t)
{
    /* bf16 keeps 8 significant bits (relative step 2^-8 = 3.9e-3), fp16 11
     * (4.9e-4); the eager variants round S and P to the dtype on the way, so
     * allow a few steps of each. bf16's atol is set by the eager chain at
     * N(0, 1) inputs: Q·Kᵀ rounded before the scale (|S| up to ~50 at D =
     * 128, half a step 0.125, 1 % of a weight after the scale) moves an O
     * element that averages a few keys (an early causal row) by 1 % of
     * |V − O| (up to ~4): |error| up to 0.014 (0.008 beyond rtol·|O|) in 15
     * draws of a numpy model of naive's chain at S = 1000 and 4096, 0.015
     * measured on the H200 (S = 1000, D = 128, causal, row 3): 0.01 failed
     * now and then. The fused kernels keep S in float32 and sit far inside. */
    if (t == ATTN_FP16) return (struct attn_tolerance){.atol = 2e-3, .rtol = 5e-3, .rel_l2 = 2e-3};
    return (struct attn_tolerance){.atol = 2e-2, .rtol = 2e-2, .rel_l2 = 1e-2};
}

/* The gradients of a 16-bit kernel against the float64 backward, in units of
 * the dtype's unit roundoff u (half its relative step: bf16 keeps 8
 * significant bits, u = 2^-9 = 2.0e-3; fp16 11, u = 2^-12 = 2.4e-4). A
 * FlashAttention-style backward accumulates in float32 (its own rounding,
 * about 2^-24·√S relative, is negligible beside u) but rounds P to the dtype
 * before dV = Pᵀ·dO and dS before dQ = dS·K and dK = dSᵀ·Q, reads O rounded
 * to the dtype for D = rowsum(dO∘O), and rounds dQ, dK, dV once more on the
 * way out. That is two or three roundings of u on every term of sums over S
 * queries or keys, where the forward has one. So:
 *   rtol   = 20u (bf16 4e-2, fp16 5e-3): a few u per rounding on an element
 *            that is not cancelled away; twice the forward's bf16 rtol;
 *   rel_l2 = 10u (bf16 2e-2, fp16 2.5e-3): the roundings are independent
 *            from term to term, so over the tensor the error stays a few u
 *            of its norm, while a lost scale factor, a skipped key or a K/V
 *            head missing one of its group's query heads costs far more;
 *   atol   = 10u, against gradients of order 1 or below for unit-scale
 *            inputs (they shrink about as 1/√S as the softmax spreads): dS
 *            sums to zero over each row (Σ_j P_ij·(dP_ij − D_i) = 0), so dQ
 *            and dK are differences of like terms, and an element that
 *            cancels to near zero has no relative bound.
 * Each value rounded up to two figures; fp16's are 8 times tighter, as its u.
 *
 * rtol applies to the larger of |ref| and the root mean square of the
 * element's row (one token's head_dim gradient values). All elements of a
 * row are sums over the same terms with the same weights (dV_j = Σ_i P_ij·
 * dO_i, dK_j = scale·Σ_i dS_ij·Q_i, dQ_i = scale·Σ_j dS_ij·K_j), so their
 * rounding errors have one size, set by those weights: about u times the
 * row's typical magnitude, whether or not a given element cancels. Where a
 * row's terms are large, |ref| alone under-states that size: the first keys
 * under a causal mask collect every query's largest weights (P = 1 for key
 * 0 at query 0) and, with grouped heads, those of the whole group; their dV
 * and dK rows reach ~10 at N(0, 1) inputs, and an element of them near 0
 * then has errors up to 0.06 in cuDNN's, PyTorch's FlashAttention-2's and
 * the eager chain's gradients alike (an H100, 32/8 and 64/8 heads, S = 2048
 * to 8192, D = 128, causal: one to five elements a tensor over the bound
 * without the row's scale, at keys 0 to 30). A numpy model of both (FA2's
 * roundings of P, dS and O; the eager chain's of S, P, dP and dS; 32/8 heads,
 * S = 2048, causal) puts its worst element at 0.14–0.35 of this bound. A lost
 * term, a wrong column or a missing head moves an element by about its
 * row's magnitude, 25 times this bound, and rel_l2 still holds the tensor. */
struct attn_tolerance attn_grad_tolerance_for(enum attn_dtype t, int head_dim)
{
    const size_t row = head_dim > 0 ? (size_t)head_dim : 0;
    if (t == ATTN_FP16) return (struct attn_tolerance){.atol = 2.5e-3, .rtol = 5e-3, .rel_l2 = 2.5e-3, .row = row};
    return (struct attn_tolerance){.atol = 2e-2, .rtol = 4e-2, .rel_l2 = 2e-2, .row = row};
}

/* One part of a comparison: elements [begin, end) of n (begin a multiple of
 * tol.row), counted as attn_comparison counts them, with the sums of
 * squares that make rel_err. */
struct compare_part {
    const double *ref;
    const uint16_t *out;
    size_t begin, end, n;
    enum attn_dtype t;
    struct attn_tolerance tol;
    struct attn_comparison c;
    double diff2, ref2;
};

static void compare_part(struct compare_part *part)
{
    const double *ref = part->ref;
    const uint16_t *out = part->out;
    const enum attn_dtype t = part->t;
    const struct attn_tolerance tol = part->tol;
    const size_t row = tol.row ? tol.row : part->end - part->begin;
    size_t bad = 0, nonfinite = 0, first_bad = (size_t)-1;
    double max_abs_err = 0, diff2 = 0, ref2 = 0;
    for (size_t r0 = part->begin; r0 < part->end; r0 += row) {
        const size_t r1 = part->end - r0 < row ? part->end : r0 + row;
        double row_rms = 0; /* the row's scale */
        if (tol.row) {
            double sum2 = 0;
            for (size_t j = r0; j < r1; j++) sum2 += ref[j] * ref[j];
            row_rms = sqrt(sum2 / (double)(r1 - r0));
        }
        for (size_t i = r0; i < r1; i++) {
            const double o = attn_half_to_float(out[i], t), r = ref[i];
            if (!isfinite(o)) {
                if (nonfinite++ == 0 && first_bad == (size_t)-1) first_bad = i;
                continue;
            }
            const double e = fabs(o - r);
            if (e > max_abs_err) max_abs_err = e;
            if (e > tol.atol + tol.rtol * fmax(fabs(r), row_rms) && bad++ == 0 && first_bad == (size_t)-1)
                first_bad = i;
            diff2 += e * e;
            ref2 += r * r;
        }
    }
    part->c = (struct attn_comparison){.max_abs_err = max_abs_err, .bad = bad, .nonfinite = nonfinite,
                                       .first_bad = first_bad};
    part->diff2 = diff2;
    part->ref2 = ref2;
}

static void *compare_part_thread(void *part)
{
    compare_part(part);
    return NULL;
}

/* attn_compare splits a tensor into parts of at least this many elements,
 * one per CPU core up to COMPARE_MAX_PARTS, each on a thread of its own (a
 * backward row checks four tensors of 33.5 M elements at the default grid's
 * points: 0.1 s each on one core). */
#define COMPARE_PART_MIN ((size_t)1 << 20)
#define COMPARE_MAX_PARTS 16

struct attn_comparison attn_compare_parts(const double *ref, const uint16_t *out, size_t n,
                                          enum attn_dtype t, struct attn_tolerance tol, size_t parts)
{
    if (parts < 1) parts = 1;
    if (parts > COMPARE_MAX_PARTS) parts = COMPARE_MAX_PARTS;
    const size_t unit = tol.row ? tol.row : 1; /* parts begin on a row */
    const size_t units = (n + unit - 1) / unit;
    struct compare_part part[COMPARE_MAX_PARTS];
    pthread_t thread[COMPARE_MAX_PARTS];
    bool threaded[COMPARE_MAX_PARTS] = {false};
    for (size_t k = 0; k < parts; k++) {
        const size_t begin = units * k / parts * unit, end = units * (k + 1) / parts * unit;
        part[k] = (struct compare_part){.ref = ref, .out = out, .begin = begin < n ? begin : n,
                                        .end = end < n ? end : n, .n = n, .t = t, .tol = tol};
    }
    /* parts 1.. on threads of their own (one that cannot start runs here), part 0 here */
    for (size_t k = 1; k < parts; k++)
        threaded[k] = pthread_create(&thread[k], NULL, compare_part_thread, &part[k]) == 0;
    compare_part(&part[0]);
    for (size_t k = 1; k < parts; k++) {
        if (threaded[k]) pthread_join(thread[k], NULL);
        else compare_part(&part[k]);
    }
    struct attn_comparison c = part[0].c;
    double diff2 = part[0].diff2, ref2 = part[0].ref2;
    for (size_t k = 1; k < parts; k++) { /* in index order: the first bad is the earliest part's */
        const struct attn_comparison *pc = &part[k].c;
        if (c.first_bad == (size_t)-1) c.first_bad = pc->first_bad;
        c.bad += pc->bad;
        c.nonfinite += pc->nonfinite;
        if (pc->max_abs_err > c.max_abs_err) c.max_abs_err = pc->max_abs_err;
        diff2 += part[k].diff2;
        ref2 += part[k].ref2;
    }
    c.rel_err = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    if (c.nonfinite) c.max_abs_err = c.rel_err = INFINITY;
    c.ok = c.nonfinite == 0 && c.bad == 0 && c.rel_err <= tol.rel_l2;
    return c;
}

struct attn_comparison attn_compare(const double *ref, const uint16_t *out, size_t n,
                                    enum attn_dtype t, struct attn_tolerance tol)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t parts = n / COMPARE_PART_MIN;
    if (cores > 0 && parts > (size_t)cores) parts = (size_t)cores;
    return attn_compare_parts(ref, out, n, t, tol, parts);
}

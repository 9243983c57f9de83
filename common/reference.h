/* reference.h — the float64 CPU reference attention, forward and backward,
 * 16-bit float conversions, and the comparison of a variant's output or
 * gradients with a reference under the dtype's tolerance. */
#ifndef ATTN_REFERENCE_H
#define ATTN_REFERENCE_H

#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

float attn_half_to_float(uint16_t bits, enum attn_dtype);
/* Round to nearest even; overflow goes to infinity, NaN stays NaN. */
uint16_t attn_float_to_half(float, enum attn_dtype);
/* What a cache's rows that hold no token are filled with (past a ragged
 * cache's lengths, a last page's spare slots): 256 in every element, in
 * the dtype. Finite, as the stale values of a serving engine's cache are:
 * a kernel may load such a row in a whole tile and mask its score, but one
 * that gives it any weight moves its outputs by about 256 times that
 * weight (its key of 256s scores far from the others), and fails
 * validation. */
uint16_t attn_cache_tail(enum attn_dtype);

/* O = softmax(scale · Q·Kᵀ [+ causal mask]) · V in float64, from 16-bit
 * inputs laid out as in attn.h (query head h reads K/V head h / (heads /
 * kv_heads)). o has attn_tensor_elems(p) doubles. */
int attn_reference_f64(const struct attn_problem *p, const uint16_t *q, const uint16_t *k,
                       const uint16_t *v, double *o);

/* The backward pass in float64: given dout = ∂L/∂O, the gradients dq =
 * ∂L/∂Q, dk = ∂L/∂K, dv = ∂L/∂V, from 16-bit inputs laid out as in attn.h.
 * Per sequence and query head, with P = softmax(S), S = scale·Q·Kᵀ [+ causal
 * mask]: dV = Pᵀ·dO, dP = dO·Vᵀ, Dᵢ = rowsum(dO∘O), dS = P∘(dP − D), dQ =
 * scale·dS·K, dK = scale·dSᵀ·Q; the dK and dV of a K/V head sum those of
 * every query head of its group. dq has attn_tensor_elems(p) doubles, dk and
 * dv attn_kv_tensor_elems(p); every element is written. */
int attn_reference_bwd_f64(const struct attn_problem *p, const uint16_t *q, const uint16_t *k,
                           const uint16_t *v, const uint16_t *dout, double *dq, double *dk,
                           double *dv);
/* The same on float64 inputs: the core attn_reference_bwd_f64 runs on its
 * widened inputs. Public so that the tests can check it against finite
 * differences, which need steps no 16-bit input can take. */
int attn_reference_bwd_f64_on_doubles(const struct attn_problem *p, const double *q,
                                      const double *k, const double *v, const double *dout,
                                      double *dq, double *dk, double *dv);

struct attn_tolerance {
    double atol, rtol; /* per element: |out - ref| <= atol + rtol·scale, scale = |ref| */
    double rel_l2;     /* whole tensor: ‖out - ref‖₂ / ‖ref‖₂ <= rel_l2 */
    size_t row;        /* > 0: the tensor is rows of this many elements, and an
                        * element's scale is the larger of |ref| and its row's
                        * root mean square (of ref) */
};
struct attn_tolerance attn_tolerance_for(enum attn_dtype);
/* For 16-bit gradients (dQ, dK, dV in the problem's dtype, rows of head_dim)
 * against the backward reference: looser than the forward's, per row,
 * reasons in reference.c. */
struct attn_tolerance attn_grad_tolerance_for(enum attn_dtype, int head_dim);

struct attn_comparison {
    double max_abs_err, rel_err;
    size_t bad, nonfinite; /* elements over tolerance; NaN or inf in the output */
    size_t first_bad;      /* index of the first bad or non-finite element */
    bool ok;
};

/* Compares n outputs (or gradients) with the reference; never fails. A
 * large tensor is compared in parts on the CPU's cores. */
struct attn_comparison attn_compare(const double *ref, const uint16_t *out, size_t n,
                                    enum attn_dtype, struct attn_tolerance);
/* The same in `parts` parts (1 to 16), each beginning on a row of tol.row;
 * public so that the tests can check that the parts add up to the whole. */
struct attn_comparison attn_compare_parts(const double *ref, const uint16_t *out, size_t n,
                                          enum attn_dtype, struct attn_tolerance, size_t parts);

#ifdef __cplusplus
}
#endif
#endif

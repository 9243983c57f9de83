/* reference.h — the float64 CPU reference attention, 16-bit float
 * conversions, and the comparison of a variant's output with a reference
 * under the dtype's tolerance. */
#ifndef ATTN_REFERENCE_H
#define ATTN_REFERENCE_H

#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

float attn_half_to_float(uint16_t bits, enum attn_dtype);
/* Round to nearest even; overflow goes to infinity, NaN stays NaN. */
uint16_t attn_float_to_half(float, enum attn_dtype);

/* O = softmax(scale · Q·Kᵀ [+ causal mask]) · V in float64, from 16-bit
 * inputs laid out as in attn.h (query head h reads K/V head h / (heads /
 * kv_heads)). o has attn_tensor_elems(p) doubles. */
int attn_reference_f64(const struct attn_problem *p, const uint16_t *q, const uint16_t *k,
                       const uint16_t *v, double *o);

struct attn_tolerance {
    double atol, rtol; /* per element: |out - ref| <= atol + rtol·|ref| */
    double rel_l2;     /* whole tensor: ‖out - ref‖₂ / ‖ref‖₂ <= rel_l2 */
};
struct attn_tolerance attn_tolerance_for(enum attn_dtype);

struct attn_comparison {
    double max_abs_err, rel_err;
    size_t bad, nonfinite; /* elements over tolerance; NaN or inf in the output */
    size_t first_bad;      /* index of the first bad or non-finite element */
    bool ok;
};

/* Compares n outputs with the reference; never fails. */
struct attn_comparison attn_compare(const double *ref, const uint16_t *out, size_t n,
                                    enum attn_dtype, struct attn_tolerance);

#ifdef __cplusplus
}
#endif
#endif

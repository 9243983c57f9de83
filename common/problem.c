/* problem.c — the facts of an attention problem that every part uses: dtype
 * names and sizes, tensor sizes, the FLOP and byte counts the rates are
 * computed from, the label a point is shown by and when two points are the
 * same one (declared in attn.h). */
#include "attn.h"
#include "errors.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char *attn_dtype_name(enum attn_dtype t)
{
    return t == ATTN_FP16 ? "fp16" : "bf16";
}

size_t attn_dtype_bytes(enum attn_dtype t)
{
    (void)t; /* both supported dtypes are 16-bit */
    return 2;
}

int attn_dtype_parse(const char *name, enum attn_dtype *out)
{
    if (strcmp(name, "bf16") == 0) { *out = ATTN_BF16; return ATTN_OK; }
    if (strcmp(name, "fp16") == 0) { *out = ATTN_FP16; return ATTN_OK; }
    return ATTN_FAIL(ATTN_ERR_INPUT, "unknown dtype '%s' (bf16, fp16)", name);
}

/* Saturates at SIZE_MAX rather than wrap: B·H·S·D of four int dimensions
 * can pass 2^64, and a wrapped count (2^64 is 0) would size buffers small.
 * The grid refuses such points (GRID_MAX_TENSOR_ELEMS); this guards any
 * other caller. A dimension below 1 makes no tensor. */
static size_t elems_of(const int dims[4])
{
    size_t n = 1;
    for (int i = 0; i < 4; i++) {
        if (dims[i] < 1) return 0;
        if ((size_t)dims[i] > SIZE_MAX / n) return SIZE_MAX;
        n *= (size_t)dims[i];
    }
    return n;
}

size_t attn_tensor_elems(const struct attn_problem *p)
{
    const int dims[4] = {p->batch, p->heads, p->seq_len, p->head_dim};
    return elems_of(dims);
}

int attn_kv_heads(const struct attn_problem *p) { return p->kv_heads ? p->kv_heads : p->heads; }

size_t attn_kv_tensor_elems(const struct attn_problem *p)
{
    const int dims[4] = {p->batch, attn_kv_heads(p), p->seq_len, p->head_dim};
    return elems_of(dims);
}

double attn_flops(const struct attn_problem *p)
{
    double s = (double)p->seq_len;
    double f = 4.0 * p->batch * p->heads * s * s * p->head_dim;
    return p->causal ? f / 2.0 : f;
}

double attn_bytes(const struct attn_problem *p)
{
    /* in double from the dimensions, like attn_flops: no size_t product */
    return 2.0 * (double)p->batch * (p->heads + attn_kv_heads(p)) * p->seq_len * p->head_dim *
           (double)attn_dtype_bytes(p->dtype);
}

size_t attn_no_workspace(const struct attn_problem *p)
{
    (void)p;
    return 0;
}

double attn_tflops(const struct attn_problem *p, double ms)
{
    return attn_flops(p) / (ms * 1e-3) / 1e12;
}

double attn_gbps(const struct attn_problem *p, double ms)
{
    return attn_bytes(p) / (ms * 1e-3) / 1e9;
}

const char *attn_problem_label(const struct attn_problem *p, char *buf, size_t len)
{
    char kv[24] = "";
    if (attn_kv_heads(p) != p->heads) snprintf(kv, sizeof kv, " KV=%d", attn_kv_heads(p));
    snprintf(buf, len, "B=%d H=%d%s S=%d D=%d %s%s%s", p->batch, p->heads, kv, p->seq_len,
             p->head_dim, p->causal ? "causal" : "full", p->dtype == ATTN_BF16 ? "" : " ",
             p->dtype == ATTN_BF16 ? "" : attn_dtype_name(p->dtype));
    return buf;
}

bool attn_problem_equal(const struct attn_problem *a, const struct attn_problem *b)
{
    return a->batch == b->batch && a->heads == b->heads && attn_kv_heads(a) == attn_kv_heads(b) &&
           a->seq_len == b->seq_len &&
           a->head_dim == b->head_dim && a->causal == b->causal && a->dtype == b->dtype;
}

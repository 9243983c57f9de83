/* errors.c — the last-error message buffer behind errors.h, the note of
 * what a variant's setup chose to run (attn.h), and the small facts about
 * problems (dtype names, sizes, FLOP and byte counts). */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static char last_message[1024];

volatile int attn_interrupted;

int attn_fail(int rc, const char *file, int line, const char *fmt, ...)
{
    /* Bad user input names the input's own place (file:line, option) in the
     * message; only internal failures carry the source location. */
    int n = 0;
    if (rc != ATTN_ERR_INPUT) {
        const char *base = strrchr(file, '/');
        n = snprintf(last_message, sizeof last_message, "%s:%d: ", base ? base + 1 : file, line);
        if (n < 0 || (size_t)n >= sizeof last_message) n = 0;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message + n, sizeof last_message - (size_t)n, fmt, ap);
    va_end(ap);
    /* messages quote what the user gave (fields, lines, options): never echo
     * its control bytes (an ESC sequence, a carriage return) to a terminal */
    for (char *c = last_message; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    return rc;
}

const char *attn_error_message(void) { return last_message; }

void attn_error_clear(void) { last_message[0] = '\0'; }

static char impl_note[256];

void attn_set_impl(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(impl_note, sizeof impl_note, fmt, ap);
    va_end(ap);
}

const char *attn_impl(void) { return impl_note; }

void attn_impl_clear(void) { impl_note[0] = '\0'; }

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
size_t attn_tensor_elems(const struct attn_problem *p)
{
    const int dims[4] = {p->batch, p->heads, p->seq_len, p->head_dim};
    size_t n = 1;
    for (int i = 0; i < 4; i++) {
        if (dims[i] < 1) return 0;
        if ((size_t)dims[i] > SIZE_MAX / n) return SIZE_MAX;
        n *= (size_t)dims[i];
    }
    return n;
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
    return 4.0 * (double)p->batch * p->heads * p->seq_len * p->head_dim *
           (double)attn_dtype_bytes(p->dtype);
}

size_t attn_no_workspace(const struct attn_problem *p)
{
    (void)p;
    return 0;
}

/* check_trace.c — the tracer's CPU unit tests (Check): per-call summaries,
 * op labels and the op line, the Chrome trace-event JSON (read back by a
 * strict JSON parser written here, itself tested), and the capture calls'
 * behaviour where they cannot capture (no CUPTI in the build, or no GPU).
 * Captures are built by hand; nothing here needs a GPU. On a GPU machine the
 * capture test also runs a real (empty) capture with nested ranges. */
#include "../common/attn.h"
#include "../common/errors.h"
#include "../common/trace.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ helpers */

#define ck_assert_message_has(needle)                                             \
    ck_assert_msg(strstr(attn_error_message(), (needle)) != NULL,                 \
                  "error message \"%s\" does not mention \"%s\"",                 \
                  attn_error_message(), (needle))

#define CUTLASS_GEMM                                                             \
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>" \
    "(T1::Params)"
#define XMMA_GEMM                                                                \
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_" \
    "segment_k_off_kernel__5x_cublas"
#define SCALE "void scale_kernel<__nv_bfloat16>(T1 *, unsigned long, float)"
#define MASK "void mask_kernel<__nv_bfloat16>(T1 *, unsigned long, int, int, T1)"
#define SOFTMAX "void softmax_kernel<__nv_bfloat16, 32>(T1 *, unsigned long, int)"

static struct trace_op kernel(const char *name, uint64_t start, uint64_t end, uint32_t stream)
{
    struct trace_op op = {.kind = TRACE_KERNEL, .start_ns = start, .end_ns = end,
                          .stream_id = stream, .grid = {128, 2, 1}, .block = {256, 1, 1}};
    snprintf(op.name, sizeof op.name, "%s", name);
    return op;
}

static struct trace_op memcpy_op(const char *kind, uint64_t bytes, uint64_t start, uint64_t end,
                                 uint32_t stream)
{
    struct trace_op op = {.kind = TRACE_MEMCPY, .start_ns = start, .end_ns = end,
                          .stream_id = stream, .bytes = bytes};
    snprintf(op.copy_kind, sizeof op.copy_kind, "%s", kind);
    snprintf(op.name, sizeof op.name, "memcpy %s", kind);
    return op;
}

static struct trace_op memset_op(uint64_t bytes, uint64_t start, uint64_t end, uint32_t stream)
{
    struct trace_op op = {.kind = TRACE_MEMSET, .start_ns = start, .end_ns = end,
                          .stream_id = stream, .bytes = bytes};
    snprintf(op.name, sizeof op.name, "memset");
    return op;
}

static struct trace_range range(const char *name, uint64_t start, uint64_t end, int depth)
{
    struct trace_range r = {.start_ns = start, .end_ns = end, .depth = depth};
    snprintf(r.name, sizeof r.name, "%s", name);
    return r;
}

/* `calls` calls of the naive sequence on stream 7, each op 1000 ns long with
 * 100 ns gaps, calls 10 µs apart starting at t = 5 ms. */
#define NAIVE_OPS 6
static struct trace_op naive_ops[3 * NAIVE_OPS];
static struct trace_capture naive_capture(int calls)
{
    for (int c = 0; c < calls; c++) {
        uint64_t t = 5000000 + (uint64_t)c * 10000;
        struct trace_op *o = &naive_ops[c * NAIVE_OPS];
        o[0] = kernel(CUTLASS_GEMM, t, t + 1000, 7);
        o[1] = kernel(SCALE, t + 1100, t + 2100, 7);
        o[2] = memcpy_op("DtoD", 1 << 20, t + 2200, t + 3200, 7);
        o[3] = kernel(MASK, t + 3300, t + 4300, 7);
        o[4] = kernel(SOFTMAX, t + 4400, t + 5400, 7);
        o[5] = kernel(XMMA_GEMM, t + 5500, t + 6500, 7);
    }
    return (struct trace_capture){.ops = naive_ops, .nops = (size_t)calls * NAIVE_OPS};
}

/* Writes to a fresh file under /tmp; its path goes into path[40]. */
static void temp_path(char path[40])
{
    strcpy(path, "/tmp/check_trace_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* ------------------------------------------------ a strict JSON parser (RFC 8259) */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
    enum jtype t;
    bool b;
    double num;
    char *str;           /* J_STR: decoded, NUL-terminated (names hold no NUL) */
    size_t n;            /* J_ARR, J_OBJ: items */
    struct jval *items;
    char **keys;         /* J_OBJ */
};

struct jparser { const char *s; size_t pos; int depth; };

static void jfree(struct jval *v)
{
    free(v->str);
    for (size_t i = 0; i < v->n; i++) {
        jfree(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

static void jws(struct jparser *p)
{
    while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
           p->s[p->pos] == '\r')
        p->pos++;
}

static int jhex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) { out[0] = (char)(0xC0 | cp >> 6); out[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12); out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18); out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static bool jstring(struct jparser *p, char **out)
{
    if (p->s[p->pos] != '"') return false;
    p->pos++;
    size_t cap = 64, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 5 > cap) buf = realloc(buf, cap *= 2);
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') { p->pos++; break; }
        if (c < 0x20) { free(buf); return false; } /* raw control character or the end */
        if (c != '\\') { buf[n++] = (char)c; p->pos++; continue; }
        char e = p->s[p->pos + 1];
        p->pos += 2;
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            buf[n++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            continue;
        }
        if (e != 'u') { free(buf); return false; }
        int cp = jhex4(p->s + p->pos);
        if (cp < 0) { free(buf); return false; }
        p->pos += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) { /* a surrogate pair */
            int lo = p->s[p->pos] == '\\' && p->s[p->pos + 1] == 'u' ? jhex4(p->s + p->pos + 2) : -1;
            if (lo < 0xDC00 || lo > 0xDFFF) { free(buf); return false; }
            p->pos += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            free(buf);
            return false;
        }
        n += put_utf8(buf + n, (unsigned)cp);
    }
    buf[n] = '\0';
    *out = buf;
    return true;
}

static bool jnumber(struct jparser *p, double *out)
{
    const char *s = p->s + p->pos, *q = s;
    if (*q == '-') q++;
    if (*q == '0') {
        q++;
    } else if (*q >= '1' && *q <= '9') {
        while (*q >= '0' && *q <= '9') q++;
    } else {
        return false;
    }
    if (*q == '.') {
        q++;
        if (!(*q >= '0' && *q <= '9')) return false;
        while (*q >= '0' && *q <= '9') q++;
    }
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '+' || *q == '-') q++;
        if (!(*q >= '0' && *q <= '9')) return false;
        while (*q >= '0' && *q <= '9') q++;
    }
    *out = strtod(s, NULL);
    p->pos += (size_t)(q - s);
    return true;
}

static bool jvalue(struct jparser *p, struct jval *v);

static bool jcontainer(struct jparser *p, struct jval *v, bool object)
{
    char close = object ? '}' : ']';
    v->t = object ? J_OBJ : J_ARR;
    p->pos++;
    jws(p);
    if (p->s[p->pos] == close) { p->pos++; return true; }
    size_t cap = 0;
    for (;;) {
        if (v->n == cap) {
            cap = cap ? cap * 2 : 8;
            v->items = realloc(v->items, cap * sizeof *v->items);
            if (object) v->keys = realloc(v->keys, cap * sizeof *v->keys);
        }
        memset(&v->items[v->n], 0, sizeof *v->items);
        if (object) {
            jws(p);
            char *key = NULL;
            if (!jstring(p, &key)) return false;
            v->keys[v->n] = key;
            jws(p);
            if (p->s[p->pos] != ':') { v->n++; return false; }
            p->pos++;
        }
        bool ok = jvalue(p, &v->items[v->n]);
        v->n++;
        if (!ok) return false;
        jws(p);
        if (p->s[p->pos] == ',') { p->pos++; continue; }
        if (p->s[p->pos] == close) { p->pos++; return true; }
        return false;
    }
}

static bool jvalue(struct jparser *p, struct jval *v)
{
    memset(v, 0, sizeof *v);
    if (++p->depth > 64) return false;
    jws(p);
    const char *s = p->s + p->pos;
    bool ok;
    if (*s == '{' || *s == '[') ok = jcontainer(p, v, *s == '{');
    else if (*s == '"') { v->t = J_STR; ok = jstring(p, &v->str); }
    else if (strncmp(s, "true", 4) == 0) { v->t = J_BOOL; v->b = true; p->pos += 4; ok = true; }
    else if (strncmp(s, "false", 5) == 0) { v->t = J_BOOL; p->pos += 5; ok = true; }
    else if (strncmp(s, "null", 4) == 0) { v->t = J_NULL; p->pos += 4; ok = true; }
    else { v->t = J_NUM; ok = jnumber(p, &v->num); }
    p->depth--;
    return ok;
}

/* Parses the whole text: one value, then only whitespace. */
static bool jparse(const char *text, struct jval *out)
{
    struct jparser p = {text, 0, 0};
    bool ok = jvalue(&p, out);
    if (ok) {
        jws(&p);
        ok = text[p.pos] == '\0';
    }
    if (!ok) jfree(out);
    return ok;
}

static bool json_valid(const char *text)
{
    struct jval v;
    if (!jparse(text, &v)) return false;
    jfree(&v);
    return true;
}

/* The member `key` of an object, NULL when absent or not an object. */
static const struct jval *jget(const struct jval *o, const char *key)
{
    if (!o || o->t != J_OBJ) return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0) return &o->items[i];
    return NULL;
}

static const char *jstr(const struct jval *o, const char *key)
{
    const struct jval *v = jget(o, key);
    return v && v->t == J_STR ? v->str : NULL;
}

static double jnum(const struct jval *o, const char *key)
{
    const struct jval *v = jget(o, key);
    ck_assert_msg(v && v->t == J_NUM, "member \"%s\" missing or not a number", key);
    return v->num;
}

/* Writes the capture, reads it back; the file must parse. */
static void write_and_parse(const struct trace_capture *cap, const char *title,
                            struct jval *root, char **text)
{
    char path[40];
    temp_path(path);
    ck_assert_int_eq(trace_write_json(cap, title, path), ATTN_OK);
    *text = slurp(path);
    unlink(path);
    ck_assert_msg(jparse(*text, root), "trace is not valid JSON:\n%s", *text);
    ck_assert_int_eq(root->t, J_OBJ);
}

static const struct jval *events_of(const struct jval *root)
{
    const struct jval *ev = jget(root, "traceEvents");
    ck_assert_ptr_nonnull(ev);
    ck_assert_int_eq(ev->t, J_ARR);
    return ev;
}

/* The "X" event whose name is `name`, NULL when none. */
static const struct jval *find_event(const struct jval *events, const char *name)
{
    for (size_t i = 0; i < events->n; i++) {
        const char *ph = jstr(&events->items[i], "ph"), *n = jstr(&events->items[i], "name");
        if (ph && strcmp(ph, "X") == 0 && n && strcmp(n, name) == 0) return &events->items[i];
    }
    return NULL;
}

/* Whether a metadata event `what` names (pid, tid) `name`. */
static bool has_metadata(const struct jval *events, const char *what, int pid, int tid,
                         const char *name)
{
    for (size_t i = 0; i < events->n; i++) {
        const struct jval *e = &events->items[i];
        const char *ph = jstr(e, "ph"), *n = jstr(e, "name");
        if (!ph || strcmp(ph, "M") != 0 || !n || strcmp(n, what) != 0) continue;
        if ((int)jnum(e, "pid") != pid) continue;
        if (tid >= 0 && (int)jnum(e, "tid") != tid) continue;
        const char *arg = jstr(jget(e, "args"), "name");
        if (arg && strcmp(arg, name) == 0) return true;
    }
    return false;
}

/* ================================================================ summaries */

START_TEST(test_summarize_counts_per_call)
{
    struct trace_capture cap = naive_capture(3);
    struct trace_summary s;
    trace_summarize(&cap, 3, &s);
    ck_assert_double_eq(s.kernels_per_call, 5);
    ck_assert_double_eq(s.memcpy_per_call, 1);
    ck_assert_double_eq(s.memset_per_call, 0);
    /* 6 ops × 1000 ns per call; first start 5.000 ms, last end 5.0265 ms. */
    ck_assert_double_eq_tol(s.busy_ms_per_call, 6000e-6, 1e-12);
    ck_assert_double_eq_tol(s.span_ms_per_call, 26500e-6 / 3, 1e-12);
}
END_TEST

START_TEST(test_summarize_memsets_and_unsorted)
{
    struct trace_op ops[] = {
        memset_op(64, 3000, 3500, 1),
        kernel("k", 1000, 2000, 1),
        memset_op(64, 100, 600, 2),
        memcpy_op("HtoD", 8, 2500, 2600, 1),
    };
    struct trace_capture cap = {.ops = ops, .nops = 4};
    struct trace_summary s;
    trace_summarize(&cap, 2, &s);
    ck_assert_double_eq(s.kernels_per_call, 0.5);
    ck_assert_double_eq(s.memcpy_per_call, 0.5);
    ck_assert_double_eq(s.memset_per_call, 1);
    ck_assert_double_eq_tol(s.busy_ms_per_call, 2100e-6 / 2, 1e-12);
    ck_assert_double_eq_tol(s.span_ms_per_call, 3400e-6 / 2, 1e-12); /* 100 → 3500 */
}
END_TEST

START_TEST(test_summarize_empty_and_no_calls)
{
    struct trace_capture empty = {0};
    struct trace_summary s = {.kernels_per_call = 99};
    trace_summarize(&empty, 4, &s);
    ck_assert_double_eq(s.kernels_per_call, 0);
    ck_assert_double_eq(s.span_ms_per_call, 0);
    struct trace_capture cap = naive_capture(1);
    s.busy_ms_per_call = 99;
    trace_summarize(&cap, 0, &s);
    ck_assert_double_eq(s.busy_ms_per_call, 0);
    ck_assert_double_eq(s.kernels_per_call, 0);
}
END_TEST

/* =================================================================== labels */

static const char *label_of(const char *name)
{
    static char buf[256];
    struct trace_op op = kernel(name, 0, 1, 0);
    return trace_op_label(&op, buf, sizeof buf);
}

START_TEST(test_label_kernels)
{
    ck_assert_str_eq(label_of(CUTLASS_GEMM), "gemm");
    ck_assert_str_eq(label_of(XMMA_GEMM), "gemm");
    ck_assert_str_eq(label_of("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn"), "gemm");
    ck_assert_str_eq(label_of("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"), "gemm");
    ck_assert_str_eq(label_of(SCALE), "scale");
    ck_assert_str_eq(label_of(MASK), "mask");
    ck_assert_str_eq(label_of(SOFTMAX), "softmax");
    ck_assert_str_eq(label_of("mask_kernel"), "mask");
    ck_assert_str_eq(label_of("softmax_kernel(float *, int)"), "softmax");
    ck_assert_str_eq(label_of("void cublasLt::splitKreduce_kernel<32, 16, int, float>(T3 *)"),
                     "splitKreduce");
    ck_assert_str_eq(label_of("void at::native::(anonymous namespace)::softmax_warp_forward"
                              "<float, float, float, 10, false, false>(T2 *, const T1 *, int)"),
                     "softmax_warp_forward");
    ck_assert_str_eq(label_of("(anonymous namespace)::fill(int)"), "fill");
    ck_assert_str_eq(label_of("kernel"), "kernel"); /* nothing left to strip to */
    ck_assert_str_eq(label_of("_kernel"), "_kernel");
    ck_assert_str_eq(label_of(""), "kernel");
}
END_TEST

START_TEST(test_label_mangled_kernels)
{
    ck_assert_str_eq(label_of("_ZL12scale_kernelI13__nv_bfloat16EvPT_mf"), "scale");
    ck_assert_str_eq(label_of("_Z11mask_kernelIfEvPT_miiS0_"), "mask");
    ck_assert_str_eq(label_of("_ZN2at6native29vectorized_elementwise_kernelILi4EEEviT0_"),
                     "vectorized_elementwise");
    ck_assert_str_eq(label_of("_ZN12_GLOBAL__N_114softmax_kernelEPfi"), "softmax");
    ck_assert_str_eq(label_of("_ZN7cutlass7Kernel2I36cutlass_80_tensorop_s1688gemm_64x64EEvNT_6ParamsE"),
                     "gemm");
}
END_TEST

START_TEST(test_label_copies_and_memsets)
{
    char buf[64];
    struct trace_op op = memcpy_op("DtoD", 16, 0, 1, 0);
    ck_assert_str_eq(trace_op_label(&op, buf, sizeof buf), "memcpy DtoD");
    op = memcpy_op("HtoD", 16, 0, 1, 0);
    ck_assert_str_eq(trace_op_label(&op, buf, sizeof buf), "memcpy HtoD");
    op = memset_op(16, 0, 1, 0);
    ck_assert_str_eq(trace_op_label(&op, buf, sizeof buf), "memset");
    op = kernel(SCALE, 0, 1, 0);
    ck_assert_str_eq(trace_op_label(&op, buf, 4), "sca"); /* truncated, terminated */
}
END_TEST

START_TEST(test_ops_line_naive)
{
    struct trace_capture cap = naive_capture(3);
    char buf[256];
    ck_assert_str_eq(trace_ops_line(&cap, NAIVE_OPS, buf, sizeof buf),
                     "gemm | scale | memcpy DtoD | mask | softmax | gemm");
}
END_TEST

/* One naive call as CUPTI recorded it on an H200 (CUDA 13): cuBLAS sets 4
 * bytes before its first GEMM, and its GEMMs are nvjet kernels. */
START_TEST(test_ops_line_h200_naive)
{
    struct trace_op ops[] = {
        memset_op(4, 0, 1, 13),
        kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", 2, 3, 13),
        kernel("void scale_kernel<__nv_bfloat16>(__nv_bfloat16*, unsigned long, float)", 4, 5, 13),
        memcpy_op("DtoD", 268435456, 6, 7, 13),
        kernel("void mask_kernel<__nv_bfloat16>(__nv_bfloat16*, unsigned long, int, int, "
               "__nv_bfloat16)", 8, 9, 13),
        kernel("void softmax_kernel<__nv_bfloat16, 32>(__nv_bfloat16*, unsigned long, int)", 10,
               11, 13),
        kernel("nvjet_sm90_tst_64x512_64x2_1x2_h_bz_coopB_NNT", 12, 13, 13),
    };
    struct trace_capture cap = {.ops = ops, .nops = 7};
    char buf[256];
    ck_assert_str_eq(trace_ops_line(&cap, 7, buf, sizeof buf),
                     "memset | gemm | scale | memcpy DtoD | mask | softmax | gemm");
}
END_TEST

START_TEST(test_ops_line_inplace_and_all)
{
    struct trace_op ops[] = {
        kernel(XMMA_GEMM, 0, 1, 0), kernel(SCALE, 2, 3, 0), kernel(MASK, 4, 5, 0),
        kernel(SOFTMAX, 6, 7, 0), kernel(XMMA_GEMM, 8, 9, 0), memset_op(4, 10, 11, 0),
    };
    struct trace_capture cap = {.ops = ops, .nops = 6};
    char buf[256];
    ck_assert_str_eq(trace_ops_line(&cap, 5, buf, sizeof buf),
                     "gemm | scale | mask | softmax | gemm");
    ck_assert_str_eq(trace_ops_line(&cap, 0, buf, sizeof buf), /* 0: every op */
                     "gemm | scale | mask | softmax | gemm | memset");
    ck_assert_str_eq(trace_ops_line(&cap, 100, buf, sizeof buf),
                     "gemm | scale | mask | softmax | gemm | memset");
    struct trace_capture empty = {0};
    ck_assert_str_eq(trace_ops_line(&empty, 6, buf, sizeof buf), "");
}
END_TEST

START_TEST(test_ops_line_truncates)
{
    struct trace_capture cap = naive_capture(1);
    const char *full = "gemm | scale | memcpy DtoD | mask | softmax | gemm";
    char buf[64];
    for (size_t len = 1; len <= strlen(full) + 1; len++) {
        memset(buf, 'x', sizeof buf);
        trace_ops_line(&cap, NAIVE_OPS, buf, len);
        ck_assert_uint_eq(strlen(buf), len - 1);
        ck_assert_int_eq(strncmp(buf, full, len - 1), 0);
        ck_assert_int_eq(buf[len], 'x'); /* nothing written past len */
    }
    memset(buf, 'x', sizeof buf);
    trace_ops_line(&cap, NAIVE_OPS, buf, 0);
    ck_assert_int_eq(buf[0], 'x');
}
END_TEST

/* ============================================================ the JSON parser */

START_TEST(test_parser_accepts_json)
{
    const char *good[] = {
        "{}", "[]", " [1, -2, 3.5, -0.25e+3, 1E2, 0] ", "\"\"", "true", "null",
        "{\"a\":{\"b\":[false,null,\"x\"]}}", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
        "\"\\u0041\\u00e9\\ud83d\\ude00\"",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert_msg(json_valid(good[i]), "rejected valid JSON: %s", good[i]);
    struct jval v;
    ck_assert(jparse("\"a\\u0041\\u00e9\\n\\ud83d\\ude00\"", &v));
    ck_assert_str_eq(v.str, "aA\xc3\xa9\n\xf0\x9f\x98\x80");
    jfree(&v);
}
END_TEST

START_TEST(test_parser_rejects_bad_json)
{
    const char *bad[] = {
        "", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[1 2]", "\"abc",
        "\"a\"b\"", "\"tab\there\"", "\"line\nbreak\"", "\"\\x41\"", "\"\\u12\"",
        "\"\\ud83d\"", "\"\\ude00\"", "01", "1.", ".5", "-", "+1", "1e", "tru", "nul",
        "{} {}", "[\"a\\\"]", "'a'",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!json_valid(bad[i]), "accepted invalid JSON: %s", bad[i]);
}
END_TEST

/* ============================================================== JSON output */

START_TEST(test_json_structure)
{
    struct trace_op ops[] = {
        kernel(CUTLASS_GEMM, 10000, 11000, 7),
        memcpy_op("DtoD", 4096, 11100, 11500, 7),
        memset_op(1 << 20, 10500, 10900, 13),
        kernel(SOFTMAX, 11600, 12600, 7),
    };
    struct trace_range ranges[] = {
        range("variant naive", 9000, 13000, 0),
        range("qk_matmul", 9100, 9200, 1),
        range("softmax", 11550, 11590, 1),
    };
    struct trace_capture cap = {.ops = ops, .nops = 4, .ranges = ranges, .nranges = 3};
    struct jval root;
    char *text;
    write_and_parse(&cap, "naive b=8 h=16 s=1024", &root, &text);

    ck_assert_str_eq(jstr(&root, "displayTimeUnit"), "ns");
    ck_assert_str_eq(jstr(jget(&root, "otherData"), "title"), "naive b=8 h=16 s=1024");
    const struct jval *ev = events_of(&root);
    ck_assert(has_metadata(ev, "process_name", 1, -1, "CPU"));
    ck_assert(has_metadata(ev, "process_name", 2, -1, "GPU"));
    ck_assert(has_metadata(ev, "thread_name", 2, 7, "stream 7"));
    ck_assert(has_metadata(ev, "thread_name", 2, 13, "stream 13"));

    /* Every range and op once, on its track, in timestamp order. */
    size_t complete = 0;
    double last_ts = -1, last_on[3][16];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 16; j++) last_on[i][j] = -1;
    for (size_t i = 0; i < ev->n; i++) {
        const struct jval *e = &ev->items[i];
        const char *ph = jstr(e, "ph");
        ck_assert_ptr_nonnull(ph);
        if (strcmp(ph, "M") == 0) {
            ck_assert_msg(complete == 0, "metadata after complete events");
            continue;
        }
        ck_assert_str_eq(ph, "X");
        complete++;
        int pid = (int)jnum(e, "pid"), tid = (int)jnum(e, "tid");
        double ts = jnum(e, "ts");
        ck_assert(pid == 1 || pid == 2);
        ck_assert(tid >= 0 && tid < 16);
        ck_assert_msg(ts >= last_ts, "ts %g after %g", ts, last_ts);
        ck_assert_msg(ts >= last_on[pid][tid], "ts %g after %g on %d/%d", ts, last_on[pid][tid], pid, tid);
        last_ts = last_on[pid][tid] = ts;
        ck_assert(jnum(e, "dur") >= 0);
    }
    ck_assert_uint_eq(complete, 7);

    /* Times in µs from the earliest timestamp (the outer range's 9000 ns). */
    const struct jval *outer = find_event(ev, "variant naive");
    ck_assert_ptr_nonnull(outer);
    ck_assert_double_eq_tol(jnum(outer, "ts"), 0, 1e-9);
    ck_assert_double_eq_tol(jnum(outer, "dur"), 4.0, 1e-9);
    ck_assert_int_eq((int)jnum(outer, "tid"), 1);
    ck_assert_double_eq(jnum(jget(outer, "args"), "depth"), 0);
    ck_assert_double_eq(jnum(jget(find_event(ev, "qk_matmul"), "args"), "depth"), 1);

    const struct jval *gemm = find_event(ev, CUTLASS_GEMM);
    ck_assert_ptr_nonnull(gemm);
    ck_assert_double_eq_tol(jnum(gemm, "ts"), 1.0, 1e-9);
    ck_assert_double_eq_tol(jnum(gemm, "dur"), 1.0, 1e-9);
    ck_assert_int_eq((int)jnum(gemm, "pid"), 2);
    ck_assert_int_eq((int)jnum(gemm, "tid"), 7);
    const struct jval *grid = jget(jget(gemm, "args"), "grid");
    const struct jval *block = jget(jget(gemm, "args"), "block");
    ck_assert(grid && grid->t == J_ARR && grid->n == 3);
    ck_assert(block && block->t == J_ARR && block->n == 3);
    ck_assert_double_eq(grid->items[0].num, 128);
    ck_assert_double_eq(grid->items[1].num, 2);
    ck_assert_double_eq(block->items[0].num, 256);

    const struct jval *copy = find_event(ev, "memcpy DtoD");
    ck_assert_ptr_nonnull(copy);
    ck_assert_double_eq(jnum(jget(copy, "args"), "bytes"), 4096);
    ck_assert_str_eq(jstr(jget(copy, "args"), "kind"), "DtoD");
    const struct jval *set = find_event(ev, "memset");
    ck_assert_ptr_nonnull(set);
    ck_assert_int_eq((int)jnum(set, "tid"), 13);
    ck_assert_double_eq(jnum(jget(set, "args"), "bytes"), 1 << 20);

    jfree(&root);
    free(text);
}
END_TEST

START_TEST(test_json_orders_unsorted_capture)
{
    struct trace_op ops[] = {
        kernel("c_kernel", 3000, 3100, 1), kernel("a_kernel", 1000, 1100, 1),
        kernel("b_kernel", 2000, 2100, 2),
    };
    struct trace_range ranges[] = {range("inner", 500, 600, 1), range("at_a", 1000, 1050, 1),
                                   range("outer", 500, 4000, 0)};
    struct trace_capture cap = {.ops = ops, .nops = 3, .ranges = ranges, .nranges = 3};
    struct jval root;
    char *text;
    write_and_parse(&cap, "unsorted", &root, &text);
    const struct jval *ev = events_of(&root);
    /* Ties: the parent range first, ranges before ops. */
    const char *want[] = {"outer", "inner", "at_a", "a_kernel", "b_kernel", "c_kernel"};
    size_t k = 0;
    for (size_t i = 0; i < ev->n; i++) {
        if (strcmp(jstr(&ev->items[i], "ph"), "X") != 0) continue;
        ck_assert_uint_lt(k, 6);
        ck_assert_str_eq(jstr(&ev->items[i], "name"), want[k++]);
    }
    ck_assert_uint_eq(k, 6);
    jfree(&root);
    free(text);
}
END_TEST

START_TEST(test_json_escapes_names)
{
    const char *names[] = {
        "void softmax_kernel<__nv_bfloat16, 32>(T1 *, unsigned long, int)",
        "say \"hi\"<a\\b>",
        "two\nlines\tand\x01 bell\x7f",
        "caf\xc3\xa9",
    };
    struct trace_op ops[4];
    for (int i = 0; i < 4; i++) ops[i] = kernel(names[i], 1000u * (unsigned)i, 1000u * (unsigned)i + 10, 0);
    struct trace_range ranges[] = {range("range \"quoted\" \\ back", 0, 5000, 0)};
    struct trace_capture cap = {.ops = ops, .nops = 4, .ranges = ranges, .nranges = 1};
    struct jval root;
    char *text;
    write_and_parse(&cap, "title \"with\" \\ and\nnewline", &root, &text);
    const struct jval *ev = events_of(&root);
    for (int i = 0; i < 4; i++) ck_assert_msg(find_event(ev, names[i]), "name %d lost", i);
    ck_assert_ptr_nonnull(find_event(ev, "range \"quoted\" \\ back"));
    ck_assert_str_eq(jstr(jget(&root, "otherData"), "title"), "title \"with\" \\ and\nnewline");
    /* The escaped forms themselves. */
    ck_assert_ptr_nonnull(strstr(text, "\"say \\\"hi\\\"<a\\\\b>\""));
    ck_assert_ptr_nonnull(strstr(text, "two\\nlines\\tand\\u0001 bell"));
    ck_assert_ptr_nonnull(strstr(text, "\"title \\\"with\\\" \\\\ and\\nnewline\""));
    jfree(&root);
    free(text);
}
END_TEST

START_TEST(test_json_invalid_utf8_stays_valid)
{
    /* A name cut mid-character, and a stray byte. */
    struct trace_op ops[] = {kernel("cut \xc3", 0, 1, 0), kernel("stray \xff byte", 2, 3, 0)};
    struct trace_capture cap = {.ops = ops, .nops = 2};
    struct jval root;
    char *text;
    write_and_parse(&cap, "utf8", &root, &text);
    ck_assert_ptr_nonnull(strstr(text, "cut \\ufffd"));
    ck_assert_ptr_nonnull(find_event(events_of(&root), "stray \xef\xbf\xbd byte"));
    jfree(&root);
    free(text);
}
END_TEST

START_TEST(test_json_empty_capture)
{
    struct trace_capture cap = {0};
    struct jval root;
    char *text;
    write_and_parse(&cap, "", &root, &text);
    const struct jval *ev = events_of(&root);
    for (size_t i = 0; i < ev->n; i++) ck_assert_str_eq(jstr(&ev->items[i], "ph"), "M");
    ck_assert(has_metadata(ev, "process_name", 1, -1, "CPU"));
    ck_assert_str_eq(jstr(jget(&root, "otherData"), "title"), "");
    jfree(&root);
    free(text);
    write_and_parse(&cap, NULL, &root, &text); /* no title */
    jfree(&root);
    free(text);
}
END_TEST

START_TEST(test_json_unwritable_path)
{
    struct trace_capture cap = naive_capture(1);
    const char *path = "/nonexistent-attnbench-dir/trace.json";
    attn_error_clear();
    ck_assert_int_eq(trace_write_json(&cap, "x", path), ATTN_ERR_INPUT);
    ck_assert_message_has(path);
}
END_TEST

/* ================================================================= capture */

START_TEST(test_now_advances)
{
    uint64_t a = trace_now_ns(), b = trace_now_ns();
    ck_assert_uint_gt(a, 0);
    ck_assert_uint_ge(b, a);
}
END_TEST

START_TEST(test_capture_free_twice)
{
    struct trace_capture cap = {0};
    trace_capture_free(&cap);
    cap.ops = calloc(2, sizeof *cap.ops);
    cap.nops = 2;
    trace_capture_free(&cap);
    ck_assert_ptr_null(cap.ops);
    ck_assert_uint_eq(cap.nops, 0);
    trace_capture_free(&cap);
    trace_capture_free(NULL);
}
END_TEST

START_TEST(test_end_without_begin)
{
    struct trace_capture cap = {.nops = 5};
    trace_range_push("outside"); /* does nothing */
    trace_range_pop();
    trace_range_pop();           /* unbalanced: still nothing */
    attn_error_clear();
    ck_assert_int_eq(trace_end(&cap), ATTN_ERR);
    ck_assert_str_ne(attn_error_message(), "");
    ck_assert_uint_eq(cap.nops, 0);
    ck_assert_ptr_null(cap.ops);
}
END_TEST

START_TEST(test_begin_without_cupti)
{
    if (trace_available()) return; /* a CUPTI build: test_capture_or_clean_failure */
    struct trace_capture cap;
    ck_assert_int_eq(trace_begin(), ATTN_ERR);
    ck_assert_message_has("built without CUPTI: tracing disabled");
    ck_assert_int_eq(trace_end(&cap), ATTN_ERR);
    ck_assert_message_has("built without CUPTI");
    ck_assert_uint_eq(cap.nops, 0);
}
END_TEST

/* With CUPTI: a real capture when a device is there, else a clean failure. */
START_TEST(test_capture_or_clean_failure)
{
    if (!trace_available()) return;
    struct trace_capture cap;
    attn_error_clear();
    int rc = trace_begin();
    if (rc != ATTN_OK) { /* no GPU here */
        ck_assert_int_eq(rc, ATTN_ERR);
        ck_assert_str_ne(attn_error_message(), "");
        trace_range_push("ignored");
        trace_range_pop();
        ck_assert_int_eq(trace_end(&cap), ATTN_ERR);
        ck_assert_message_has("no capture is active");
        return;
    }
    ck_assert_int_eq(trace_begin(), ATTN_ERR);
    ck_assert_message_has("already active");
    trace_range_pop(); /* unmatched: ignored */
    trace_range_push("outer"); /* left open: trace_end closes it */
    trace_range_push("inner");
    trace_range_pop();
    trace_range_push("second");
    trace_range_pop();
    trace_range_push("third"); /* left open too */
    ck_assert_int_eq(trace_end(&cap), ATTN_OK);
    ck_assert_uint_eq(cap.nops, 0); /* no GPU work was launched */
    ck_assert_uint_eq(cap.nranges, 4);
    ck_assert_str_eq(cap.ranges[0].name, "outer");
    ck_assert_int_eq(cap.ranges[0].depth, 0);
    ck_assert_str_eq(cap.ranges[1].name, "inner");
    ck_assert_int_eq(cap.ranges[1].depth, 1);
    ck_assert_str_eq(cap.ranges[2].name, "second");
    ck_assert_int_eq(cap.ranges[2].depth, 1);
    ck_assert_str_eq(cap.ranges[3].name, "third");
    ck_assert_int_eq(cap.ranges[3].depth, 1);
    ck_assert_uint_eq(cap.ranges[3].end_ns, cap.ranges[0].end_ns);
    for (size_t i = 0; i < cap.nranges; i++) {
        ck_assert_uint_ge(cap.ranges[i].end_ns, cap.ranges[i].start_ns);
        ck_assert_uint_ge(cap.ranges[i].start_ns, cap.ranges[0].start_ns);
        ck_assert_uint_le(cap.ranges[i].end_ns, cap.ranges[0].end_ns);
    }
    trace_capture_free(&cap);
    /* Ended: a second end fails, a new capture starts. */
    ck_assert_int_eq(trace_end(&cap), ATTN_ERR);
    ck_assert_int_eq(trace_begin(), ATTN_OK);
    ck_assert_int_eq(trace_end(&cap), ATTN_OK);
    ck_assert_uint_eq(cap.nranges, 0);
    trace_capture_free(&cap);
}
END_TEST

/* ================================================================== suites */

static Suite *summary_suite(void)
{
    Suite *s = suite_create("trace_summary");
    TCase *tc = tcase_create("summarize");
    tcase_add_test(tc, test_summarize_counts_per_call);
    tcase_add_test(tc, test_summarize_memsets_and_unsorted);
    tcase_add_test(tc, test_summarize_empty_and_no_calls);
    suite_add_tcase(s, tc);

    tc = tcase_create("labels");
    tcase_add_test(tc, test_label_kernels);
    tcase_add_test(tc, test_label_mangled_kernels);
    tcase_add_test(tc, test_label_copies_and_memsets);
    tcase_add_test(tc, test_ops_line_naive);
    tcase_add_test(tc, test_ops_line_h200_naive);
    tcase_add_test(tc, test_ops_line_inplace_and_all);
    tcase_add_test(tc, test_ops_line_truncates);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *json_suite(void)
{
    Suite *s = suite_create("trace_json");
    TCase *tc = tcase_create("parser");
    tcase_add_test(tc, test_parser_accepts_json);
    tcase_add_test(tc, test_parser_rejects_bad_json);
    suite_add_tcase(s, tc);

    tc = tcase_create("output");
    tcase_add_test(tc, test_json_structure);
    tcase_add_test(tc, test_json_orders_unsorted_capture);
    tcase_add_test(tc, test_json_escapes_names);
    tcase_add_test(tc, test_json_invalid_utf8_stays_valid);
    tcase_add_test(tc, test_json_empty_capture);
    tcase_add_test(tc, test_json_unwritable_path);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *capture_suite(void)
{
    Suite *s = suite_create("trace_capture");
    TCase *tc = tcase_create("begin_end");
    tcase_set_timeout(tc, 60); /* a real capture initializes CUDA and CUPTI */
    tcase_add_test(tc, test_now_advances);
    tcase_add_test(tc, test_capture_free_twice);
    tcase_add_test(tc, test_end_without_begin);
    tcase_add_test(tc, test_begin_without_cupti);
    tcase_add_test(tc, test_capture_or_clean_failure);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(summary_suite());
    srunner_add_suite(sr, json_suite());
    srunner_add_suite(sr, capture_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

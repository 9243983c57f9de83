/* trace.c — the built-in tracer (trace.h): a CUPTI activity capture of
 * kernels, copies and memsets plus CPU ranges, and what reads a capture
 * back: per-call summary, op labels and Chrome trace-event JSON.
 *
 * CUPTI hands activity records over in buffers, from its own thread, when a
 * buffer fills or on a flush; the completed-buffer callback copies each
 * record we want into a growing array under a mutex. Failures there cannot
 * be returned to anyone, so they are remembered and reported by trace_end. */
#include "trace.h"
#include "errors.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef ATTN_HAVE_CUPTI
#include <cuda_runtime_api.h>
#include <cupti.h>
#endif

/* ------------------------------------------------------------ capture state */

#define RANGE_STACK_MAX 64

static struct {
    bool active; /* between a successful trace_begin and trace_end */

    /* GPU ops, appended by CUPTI's thread: guarded by `lock`. */
    pthread_mutex_t lock;
    struct trace_op *ops;
    size_t nops, ops_cap;
    size_t dropped;    /* records CUPTI had no buffer space for */
    size_t untimed;    /* records that came without timestamps */
    char failure[256]; /* first failure inside a callback, "" when none */

    /* CPU ranges, touched only by the capturing thread. */
    struct trace_range *ranges;
    size_t nranges, ranges_cap;
    size_t open[RANGE_STACK_MAX]; /* indices of the open ranges, innermost last */
    int depth;
    int overflow;      /* pushes beyond RANGE_STACK_MAX, ignored with their pops */
    bool ranges_oom;
} T = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Forgets everything recorded; the caller holds no lock (CUPTI is quiet:
 * before enabling or after the final flush). */
static void reset_state(void)
{
    pthread_mutex_lock(&T.lock);
    free(T.ops);
    T.ops = NULL;
    T.nops = T.ops_cap = 0;
    T.dropped = T.untimed = 0;
    T.failure[0] = '\0';
    pthread_mutex_unlock(&T.lock);
    free(T.ranges);
    T.ranges = NULL;
    T.nranges = T.ranges_cap = 0;
    T.depth = T.overflow = 0;
    T.ranges_oom = false;
}

/* Grows *arr (of `size`-byte items) to hold one more; false when out of memory. */
static bool grow(void **arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return true;
    size_t want = *cap ? *cap * 2 : 1024;
    void *p = realloc(*arr, want * size);
    if (!p) return false;
    *arr = p;
    *cap = want;
    return true;
}

static void copy_str(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
}

static const char *op_category(enum trace_op_kind k)
{
    return k == TRACE_KERNEL ? "kernel" : k == TRACE_MEMCPY ? "memcpy" : "memset";
}

uint64_t trace_now_ns(void)
{
#ifdef ATTN_HAVE_CUPTI
    /* CUPTI's clock, so that CPU ranges line up with the GPU ops. */
    uint64_t t;
    if (cuptiGetTimestamp(&t) == CUPTI_SUCCESS) return t;
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void trace_range_push(const char *name)
{
    if (!T.active) return;
    if (T.depth >= RANGE_STACK_MAX) {
        T.overflow++;
        return;
    }
    if (!grow((void **)&T.ranges, &T.ranges_cap, T.nranges, sizeof *T.ranges)) {
        T.ranges_oom = true;
        T.overflow++; /* its pop must not close an outer range */
        return;
    }
    struct trace_range *r = &T.ranges[T.nranges];
    copy_str(r->name, sizeof r->name, name);
    r->depth = T.depth;
    r->start_ns = trace_now_ns();
    r->end_ns = 0;
    T.open[T.depth++] = T.nranges++;
}

void trace_range_pop(void)
{
    if (!T.active) return;
    if (T.overflow > 0) {
        T.overflow--;
        return;
    }
    if (T.depth == 0) return; /* its push came before trace_begin */
    T.ranges[T.open[--T.depth]].end_ns = trace_now_ns();
}

static int cmp_op(const void *a, const void *b)
{
    const struct trace_op *x = a, *y = b;
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    if (x->end_ns != y->end_ns) return x->end_ns < y->end_ns ? -1 : 1;
    return 0;
}

static int cmp_range(const void *a, const void *b)
{
    const struct trace_range *x = a, *y = b;
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    return x->depth - y->depth; /* a parent before the child that starts with it */
}

void trace_capture_free(struct trace_capture *cap)
{
    if (!cap) return;
    free(cap->ops);
    free(cap->ranges);
    *cap = (struct trace_capture){0};
}

/* ------------------------------------------------------------------- CUPTI */
#ifdef ATTN_HAVE_CUPTI

/* libstdc++'s demangler (C linkage; the project links -lstdc++). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define CUPTI_TRY(call)                                                         \
    do {                                                                        \
        CUptiResult attn_c_ = (call);                                           \
        if (attn_c_ != CUPTI_SUCCESS) {                                         \
            const char *attn_m_ = NULL;                                         \
            if (cuptiGetResultString(attn_c_, &attn_m_) != CUPTI_SUCCESS)       \
                attn_m_ = "unknown CUPTI error";                                \
            return ATTN_FAIL(ATTN_ERR, "%s: %s", #call, attn_m_);               \
        }                                                                       \
    } while (0)

#define CUPTI_BUFFER_BYTES ((size_t)8 << 20)

static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, /* KIND_KERNEL would serialize kernels */
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static const char *copy_kind_name(unsigned kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "unknown";
    }
}

/* Kernel names come mangled ("_Z12scale_kernel…"); keep the readable form. */
static void kernel_name(char *dst, size_t len, const char *name)
{
    if (name && name[0] == '_' && name[1] == 'Z') {
        int status = -1;
        char *d = __cxa_demangle(name, NULL, NULL, &status);
        if (d && status == 0) {
            copy_str(dst, len, d);
            free(d);
            return;
        }
        free(d);
    }
    copy_str(dst, len, name ? name : "?");
}

/* Sets the first callback failure; T.lock held. */
static void callback_failure(const char *fmt, const char *what)
{
    if (!T.failure[0]) snprintf(T.failure, sizeof T.failure, fmt, what);
}

/* One activity record into T.ops; T.lock held. */
static void take_record(const CUpti_Activity *rec)
{
    struct trace_op op;
    memset(&op, 0, sizeof op);
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
        op.kind = TRACE_KERNEL;
        kernel_name(op.name, sizeof op.name, k->name);
        op.start_ns = k->start;
        op.end_ns = k->end;
        op.stream_id = k->streamId;
        op.grid[0] = k->gridX, op.grid[1] = k->gridY, op.grid[2] = k->gridZ;
        op.block[0] = k->blockX, op.block[1] = k->blockY, op.block[2] = k->blockZ;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
        op.kind = TRACE_MEMCPY;
        copy_str(op.copy_kind, sizeof op.copy_kind, copy_kind_name(m->copyKind));
        snprintf(op.name, sizeof op.name, "memcpy %s", op.copy_kind);
        op.start_ns = m->start;
        op.end_ns = m->end;
        op.stream_id = m->streamId;
        op.bytes = m->bytes;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
        op.kind = TRACE_MEMSET;
        copy_str(op.name, sizeof op.name, "memset");
        op.start_ns = m->start;
        op.end_ns = m->end;
        op.stream_id = m->streamId;
        op.bytes = m->bytes;
        break;
    }
    default:
        return; /* a kind we did not ask for */
    }
    if (op.start_ns == 0 && op.end_ns == 0) { /* CUPTI could not time it */
        T.untimed++;
        return;
    }
    if (!grow((void **)&T.ops, &T.ops_cap, T.nops, sizeof *T.ops)) {
        callback_failure("out of memory keeping %s activity records", op_category(op.kind));
        return;
    }
    T.ops[T.nops++] = op;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    /* On failure CUPTI drops records, which trace_end reports. */
    *buffer = aligned_alloc(8, CUPTI_BUFFER_BYTES);
    *size = *buffer ? CUPTI_BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    (void)size;
    pthread_mutex_lock(&T.lock);
    CUpti_Activity *rec = NULL;
    for (;;) {
        CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &rec);
        if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break; /* the end of the buffer */
        if (r != CUPTI_SUCCESS) {
            const char *m = NULL;
            if (cuptiGetResultString(r, &m) != CUPTI_SUCCESS) m = "unknown CUPTI error";
            callback_failure("cuptiActivityGetNextRecord: %s", m);
            break;
        }
        if (T.active) take_record(rec);
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS)
        T.dropped += dropped;
    pthread_mutex_unlock(&T.lock);
    free(buffer);
}

bool trace_available(void) { return true; }

static void disable_kinds(void)
{
    for (size_t i = 0; i < NKINDS; i++) (void)cuptiActivityDisable(kinds[i]);
}

static int begin(void)
{
    static bool registered;
    /* Creates the context now: fails cleanly without a device, and keeps
     * context creation out of the capture. */
    CUDA_TRY(cudaFree(NULL));
    if (!registered) {
        CUPTI_TRY(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
        registered = true;
    }
    reset_state();
    pthread_mutex_lock(&T.lock);
    T.active = true;
    pthread_mutex_unlock(&T.lock);
    for (size_t i = 0; i < NKINDS; i++) {
        CUptiResult r = cuptiActivityEnable(kinds[i]);
        if (r != CUPTI_SUCCESS) {
            disable_kinds();
            pthread_mutex_lock(&T.lock);
            T.active = false;
            pthread_mutex_unlock(&T.lock);
            const char *m = NULL;
            if (cuptiGetResultString(r, &m) != CUPTI_SUCCESS) m = "unknown CUPTI error";
            return ATTN_FAIL(ATTN_ERR, "cuptiActivityEnable(kind %d): %s", (int)kinds[i], m);
        }
    }
    return ATTN_OK;
}

/* Everything the GPU recorded since begin() lands in T.ops. */
static int collect(void)
{
    CUDA_TRY(cudaDeviceSynchronize());
    CUPTI_TRY(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    for (size_t i = 0; i < NKINDS; i++) CUPTI_TRY(cuptiActivityDisable(kinds[i]));
    size_t dropped = 0;
    CUPTI_TRY(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped));
    pthread_mutex_lock(&T.lock);
    T.dropped += dropped;
    pthread_mutex_unlock(&T.lock);
    return ATTN_OK;
}

#else /* !ATTN_HAVE_CUPTI */

bool trace_available(void) { return false; }

static void disable_kinds(void) {}

static int begin(void)
{
    return ATTN_FAIL(ATTN_ERR, "built without CUPTI: tracing disabled");
}

static int collect(void)
{
    return ATTN_FAIL(ATTN_ERR, "built without CUPTI: tracing disabled");
}

#endif /* ATTN_HAVE_CUPTI */

int trace_begin(void)
{
    if (T.active) return ATTN_FAIL(ATTN_ERR, "trace_begin: a capture is already active");
    return begin();
}

int trace_end(struct trace_capture *out)
{
    *out = (struct trace_capture){0};
    if (!trace_available()) return collect();
    if (!T.active) return ATTN_FAIL(ATTN_ERR, "trace_end: no capture is active");
    uint64_t now = trace_now_ns();
    int rc = collect();
    if (rc != ATTN_OK) disable_kinds();

    pthread_mutex_lock(&T.lock);
    T.active = false;
    struct trace_capture cap = {.ops = T.ops, .nops = T.nops, .ranges = T.ranges,
                                .nranges = T.nranges};
    size_t dropped = T.dropped, untimed = T.untimed;
    char failure[sizeof T.failure];
    memcpy(failure, T.failure, sizeof failure);
    T.ops = NULL;
    T.nops = T.ops_cap = 0;
    pthread_mutex_unlock(&T.lock);
    bool ranges_oom = T.ranges_oom;
    T.ranges = NULL;
    T.nranges = T.ranges_cap = 0;
    while (T.depth > 0) cap.ranges[T.open[--T.depth]].end_ns = now;
    reset_state();

    if (rc == ATTN_OK) {
        if (failure[0]) rc = ATTN_FAIL(ATTN_ERR, "trace: %s", failure);
        else if (dropped)
            rc = ATTN_FAIL(ATTN_ERR, "trace: CUPTI dropped %zu activity records", dropped);
        else if (untimed)
            rc = ATTN_FAIL(ATTN_ERR, "trace: %zu activity records came without timestamps",
                           untimed);
        else if (ranges_oom) rc = ATTN_FAIL(ATTN_ERR, "trace: out of memory recording ranges");
    }
    if (rc != ATTN_OK) {
        trace_capture_free(&cap);
        return rc;
    }
    if (cap.nops) qsort(cap.ops, cap.nops, sizeof *cap.ops, cmp_op);
    if (cap.nranges) qsort(cap.ranges, cap.nranges, sizeof *cap.ranges, cmp_range);
    *out = cap;
    return ATTN_OK;
}

/* --------------------------------------------------------- reading a capture */

void trace_summarize(const struct trace_capture *cap, int calls, struct trace_summary *out)
{
    *out = (struct trace_summary){0};
    if (calls < 1 || cap->nops == 0) return;
    size_t counts[3] = {0};
    double busy_ns = 0;
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < cap->nops; i++) {
        const struct trace_op *op = &cap->ops[i];
        if ((unsigned)op->kind < 3) counts[op->kind]++;
        if (op->end_ns > op->start_ns) busy_ns += (double)(op->end_ns - op->start_ns);
        if (op->start_ns < first) first = op->start_ns;
        if (op->end_ns > last) last = op->end_ns;
    }
    out->kernels_per_call = (double)counts[TRACE_KERNEL] / calls;
    out->memcpy_per_call = (double)counts[TRACE_MEMCPY] / calls;
    out->memset_per_call = (double)counts[TRACE_MEMSET] / calls;
    out->busy_ms_per_call = busy_ns / 1e6 / calls;
    out->span_ms_per_call = last > first ? (double)(last - first) / 1e6 / calls : 0;
}

/* The base name of a mangled "_Z…" name: its last source name before the
 * template arguments or the parameters ("_ZL12scale_kernelI…" → scale_kernel). */
static bool mangled_base(const char *name, const char **base, size_t *n)
{
    const char *p = name + 2;
    if (*p == 'L') p++;          /* internal linkage (a static kernel) */
    if (*p == 'N') {             /* nested name: skip its cv-qualifiers */
        p++;
        while (*p == 'K' || *p == 'V' || *p == 'r') p++;
    }
    bool found = false;
    while (isdigit((unsigned char)*p)) {
        char *end;
        unsigned long len = strtoul(p, &end, 10);
        if (len == 0 || strlen(end) < len) break;
        *base = end;
        *n = len;
        found = true;
        p = end + len;
    }
    return found;
}

/* The base name of a demangled name: "void ns::(anonymous namespace)::f<…>(…)" → f. */
static void demangled_base(const char *name, const char **base, size_t *n)
{
    static const char anon[] = "(anonymous namespace)";
    const char *stop = name;
    for (;;) {
        if (strncmp(stop, anon, sizeof anon - 1) == 0) {
            stop += sizeof anon - 1; /* a namespace, not the parameter list */
            continue;
        }
        if (!*stop || *stop == '<' || *stop == '(') break;
        stop++;
    }
    const char *start = name;
    for (const char *p = name; p < stop; p++) {
        if (*p == ' ') start = p + 1;                       /* after the return type */
        if (p[0] == ':' && p[1] == ':') start = p + 2;      /* after the namespaces */
    }
    *base = start;
    *n = (size_t)(stop - start);
}

const char *trace_op_label(const struct trace_op *op, char *buf, size_t len)
{
    if (len == 0) return buf;
    if (op->kind == TRACE_MEMCPY) {
        snprintf(buf, len, "memcpy %s", op->copy_kind[0] ? op->copy_kind : "?");
        return buf;
    }
    if (op->kind == TRACE_MEMSET) {
        snprintf(buf, len, "memset");
        return buf;
    }
    /* cuBLAS and cutlass GEMMs go by many names: most say gemm, and the
     * cuBLAS 13 JIT kernels on Hopper are nvjet_… (seen on an H200). */
    if (strcasestr(op->name, "gemm") || strncmp(op->name, "nvjet", 5) == 0) {
        snprintf(buf, len, "gemm");
        return buf;
    }
    const char *base = op->name;
    size_t n = strlen(op->name);
    if (!(op->name[0] == '_' && op->name[1] == 'Z' && mangled_base(op->name, &base, &n)))
        demangled_base(op->name, &base, &n);
    static const char suffix[] = "_kernel";
    if (n > sizeof suffix - 1 && strncmp(base + n - (sizeof suffix - 1), suffix, sizeof suffix - 1) == 0)
        n -= sizeof suffix - 1;
    if (n == 0) {
        base = "kernel";
        n = 6;
    }
    snprintf(buf, len, "%.*s", (int)(n < 4096 ? n : 4096), base);
    return buf;
}

const char *trace_ops_line(const struct trace_capture *cap, size_t ops_per_call, char *buf,
                           size_t len)
{
    if (len == 0) return buf;
    buf[0] = '\0';
    size_t n = ops_per_call && ops_per_call < cap->nops ? ops_per_call : cap->nops;
    size_t used = 0;
    for (size_t i = 0; i < n && used + 1 < len; i++) {
        char label[256];
        trace_op_label(&cap->ops[i], label, sizeof label);
        int w = snprintf(buf + used, len - used, "%s%s", i ? " | " : "", label);
        if (w < 0) break;
        used += (size_t)w < len - used ? (size_t)w : len - used - 1;
    }
    return buf;
}

/* --------------------------------------------------------------------- JSON */

/* Length of the valid UTF-8 sequence at s, 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n = s[0] < 0xC2 ? 0 : s[0] < 0xE0 ? 2 : s[0] < 0xF0 ? 3 : s[0] <= 0xF4 ? 4 : 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return n; /* (overlong 3- and 4-byte forms pass; names never hold them) */
}

/* s as a JSON string: quotes, backslashes and control characters escaped;
 * bytes that are not UTF-8 (a name cut mid-character) become U+FFFD. */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c < 0x20 || c == 0x7F) fprintf(f, "\\u%04x", c);
        else if (c < 0x80) fputc(c, f);
        else {
            size_t n = utf8_len(p);
            if (n == 0) {
                fputs("\\ufffd", f);
                p++;
            } else {
                fwrite(p, 1, n, f);
                p += n;
            }
            continue;
        }
        p++;
    }
    fputc('"', f);
}

/* One complete event: a range (is_range) or an op, by index. */
struct event { uint64_t ts; bool is_range; int depth; size_t i; };

static int cmp_event(const void *a, const void *b)
{
    const struct event *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->is_range != y->is_range) return x->is_range ? -1 : 1;
    if (x->depth != y->depth) return x->depth - y->depth;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static double us(uint64_t t, uint64_t t0) { return t > t0 ? (double)(t - t0) / 1e3 : 0.0; }

int trace_write_json(const struct trace_capture *cap, const char *title, const char *path)
{
    size_t nev = cap->nops + cap->nranges;
    struct event *ev = malloc((nev ? nev : 1) * sizeof *ev);
    uint32_t *streams = malloc((cap->nops ? cap->nops : 1) * sizeof *streams);
    if (!ev || !streams) {
        free(ev);
        free(streams);
        return ATTN_FAIL(ATTN_ERR, "out of memory writing trace '%s'", path);
    }
    /* Sorted here, not trusted to be: hand-made captures may not be. */
    uint64_t t0 = UINT64_MAX;
    for (size_t i = 0; i < cap->nranges; i++) {
        ev[i] = (struct event){cap->ranges[i].start_ns, true, cap->ranges[i].depth, i};
        if (cap->ranges[i].start_ns < t0) t0 = cap->ranges[i].start_ns;
    }
    for (size_t i = 0; i < cap->nops; i++) {
        ev[cap->nranges + i] = (struct event){cap->ops[i].start_ns, false, 0, i};
        streams[i] = cap->ops[i].stream_id;
        if (cap->ops[i].start_ns < t0) t0 = cap->ops[i].start_ns;
    }
    if (nev) qsort(ev, nev, sizeof *ev, cmp_event);
    size_t nstreams = 0;
    if (cap->nops) {
        qsort(streams, cap->nops, sizeof *streams, cmp_u32);
        for (size_t i = 0; i < cap->nops; i++)
            if (i == 0 || streams[i] != streams[i - 1]) streams[nstreams++] = streams[i];
    }

    FILE *f = fopen(path, "w");
    if (!f) {
        int e = errno;
        free(ev);
        free(streams);
        return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create trace '%s': %s", path, strerror(e));
    }
    fputs("{\"traceEvents\":[\n", f);
    fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"CPU\"}},\n"
          "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"ranges\"}},\n"
          "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"tid\":0,\"args\":{\"name\":\"GPU\"}}",
          f);
    for (size_t i = 0; i < nstreams; i++)
        fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":%u,"
                   "\"args\":{\"name\":\"stream %u\"}}", streams[i], streams[i]);
    for (size_t e = 0; e < nev; e++) {
        fputs(",\n{\"name\":", f);
        if (ev[e].is_range) {
            const struct trace_range *r = &cap->ranges[ev[e].i];
            json_string(f, r->name);
            fprintf(f, ",\"cat\":\"range\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%.3f,"
                       "\"dur\":%.3f,\"args\":{\"depth\":%d}}",
                    us(r->start_ns, t0), us(r->end_ns, r->start_ns), r->depth);
            continue;
        }
        const struct trace_op *op = &cap->ops[ev[e].i];
        json_string(f, op->name);
        fprintf(f, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":2,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                   "\"args\":{",
                op_category(op->kind), op->stream_id, us(op->start_ns, t0),
                us(op->end_ns, op->start_ns));
        if (op->kind == TRACE_KERNEL)
            fprintf(f, "\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d]", op->grid[0], op->grid[1],
                    op->grid[2], op->block[0], op->block[1], op->block[2]);
        else {
            fprintf(f, "\"bytes\":%llu", (unsigned long long)op->bytes);
            if (op->kind == TRACE_MEMCPY) {
                fputs(",\"kind\":", f);
                json_string(f, op->copy_kind);
            }
        }
        fputs("}}", f);
    }
    fputs("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"title\":", f);
    json_string(f, title ? title : "");
    fprintf(f, ",\"tool\":\"attnbench\",\"ops\":%zu,\"ranges\":%zu,\"t0_ns\":%llu}}\n",
            cap->nops, cap->nranges, (unsigned long long)(nev ? t0 : 0));
    free(ev);
    free(streams);

    bool bad = ferror(f) != 0;
    if (fclose(f) != 0) bad = true;
    if (bad) return ATTN_FAIL(ATTN_ERR, "unable to write trace '%s': %s", path, strerror(errno));
    return ATTN_OK;
}

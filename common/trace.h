/* trace.h — the built-in tracer: what the GPU ran during a capture (kernels,
 * copies, memsets, from CUPTI's activity API) and named CPU ranges on the
 * same clock; per-call summaries, a one-line op sequence, and Chrome
 * trace-event JSON that Perfetto and chrome://tracing open.
 *
 * A capture brackets the work: trace_begin(), enqueue, trace_end(&cap).
 * Only work launched after trace_begin is recorded. The capture functions
 * are for one thread at a time (the runner's); CUPTI's own thread is handled
 * inside. Built without CUPTI (no -DATTN_HAVE_CUPTI), trace_begin/trace_end
 * fail with a clear message; everything that only reads a capture still
 * works. */
#ifndef ATTN_TRACE_H
#define ATTN_TRACE_H

#include "attn.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum trace_op_kind { TRACE_KERNEL, TRACE_MEMCPY, TRACE_MEMSET };

/* One GPU operation. Timestamps are CUPTI's, in ns. */
struct trace_op {
    enum trace_op_kind kind;
    char name[256];            /* kernel: demangled when CUPTI gives a mangled "_Z…" name and
                                * the demangler understands it, else as given (truncated);
                                * copy: "memcpy DtoD" etc.; memset: "memset" */
    uint64_t start_ns, end_ns;
    uint32_t stream_id;
    int grid[3], block[3];     /* kernels only */
    uint64_t bytes;            /* copies and memsets */
    char copy_kind[8];         /* "HtoD", "DtoH", "DtoD", "HtoH", "PtoP"… for copies, "" otherwise */
};

/* One CPU range (trace_range_push/pop); depth 0 is outermost. */
struct trace_range {
    char name[128];
    uint64_t start_ns, end_ns;
    int depth;
};

/* What trace_end hands over; ops sorted by start, ranges by start then depth.
 * The caller owns it: trace_capture_free. */
struct trace_capture {
    struct trace_op *ops;
    size_t nops;
    struct trace_range *ranges;
    size_t nranges;
};

/* True when built with CUPTI (ATTN_HAVE_CUPTI). */
bool trace_available(void);

/* Starts a capture: makes sure a CUDA context exists (failing cleanly
 * without a device), registers CUPTI's buffer callbacks (once per process)
 * and enables the CONCURRENT_KERNEL, MEMCPY and MEMSET activity kinds.
 * ATTN_ERR when a capture is already active or a CUDA/CUPTI call fails. */
int trace_begin(void);

/* Ends the capture: synchronizes the device, flushes CUPTI's buffers,
 * disables the kinds and moves the ops and ranges recorded since
 * trace_begin into *out. Fails (ATTN_ERR, *out left empty) when no capture
 * is active, a call fails, CUPTI dropped records, or a record came without
 * timestamps: a capture with holes would give wrong counts. Ranges still
 * open are closed at the time of this call. */
int trace_end(struct trace_capture *out);

/* Frees what trace_end handed over and empties *cap; safe on an empty or
 * already freed capture. */
void trace_capture_free(struct trace_capture *cap);

/* Now, on the clock of the ops' timestamps: cuptiGetTimestamp when built
 * with CUPTI, else CLOCK_MONOTONIC. */
uint64_t trace_now_ns(void);

/* CPU ranges: while a capture is active, push/pop record a named range with
 * trace_now_ns() timestamps and its nesting depth; outside one (and for a pop
 * whose push came before trace_begin) they do nothing. */
void trace_range_push(const char *name);
void trace_range_pop(void);

/* Per-call figures of a capture holding `calls` identical calls; all zero
 * when calls < 1. */
struct trace_summary {
    double kernels_per_call, memcpy_per_call, memset_per_call;
    double busy_ms_per_call; /* sum of the ops' own durations / calls */
    double span_ms_per_call; /* (last end − first start) / calls */
};
void trace_summarize(const struct trace_capture *cap, int calls, struct trace_summary *out);

/* The short label of one op, written into buf (NUL-terminated, truncated):
 * kernels whose name holds "gemm" or starts with "nvjet" (cuBLAS, cutlass)
 * → "gemm"; other kernels → their base name without return type,
 * namespaces, template arguments, parameters and a trailing "_kernel"
 * ("void scale_kernel<__nv_bfloat16>(T1 *, …)" → "scale"; mangled names
 * too); copies → "memcpy DtoD" etc.; memsets → "memset". Returns buf. */
const char *trace_op_label(const struct trace_op *op, char *buf, size_t len);

/* "gemm | scale | memcpy DtoD | mask | softmax | gemm": the labels of the
 * first `ops_per_call` ops (all of them when 0) joined by " | ", written into
 * buf (NUL-terminated, truncated safely; nothing when len is 0). Returns buf.
 * Count memsets in ops_per_call too: on an H200, cuBLAS 13 sets 4 bytes
 * before the Q·Kᵀ GEMM of every naive and inplace call. */
const char *trace_ops_line(const struct trace_capture *cap, size_t ops_per_call, char *buf,
                           size_t len);

/* Writes the capture as Chrome trace-event JSON to `path`:
 *   {"traceEvents":[…], "displayTimeUnit":"ns", "otherData":{"title":…}}
 * Metadata events ("ph":"M") name pid 1 "CPU" (ranges on tid 1) and pid 2
 * "GPU" (one tid per stream id); then one complete event ("ph":"X") per
 * range and op in timestamp order, "ts"/"dur" in microseconds relative to
 * the capture's earliest timestamp; args carry grid/block for kernels and
 * bytes/kind for copies. ATTN_ERR_INPUT when the file cannot be created. */
int trace_write_json(const struct trace_capture *cap, const char *title, const char *path);

#ifdef __cplusplus
}
#endif
#endif

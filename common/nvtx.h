/* nvtx.h — named ranges, seen by Nsight tools (NVTX) and by the built-in
 * tracer's CPU track (trace.h) alike: one push/pop pair for both. NVTX is
 * compiled out with -DATTN_NO_NVTX. */
#ifndef ATTN_NVTX_H
#define ATTN_NVTX_H

#include "trace.h"

#ifndef ATTN_NO_NVTX
#include <nvtx3/nvToolsExt.h>
static inline void attn_range_push(const char *name)
{
    nvtxRangePushA(name);
    trace_range_push(name);
}
static inline void attn_range_pop(void)
{
    trace_range_pop();
    nvtxRangePop();
}
#else
static inline void attn_range_push(const char *name) { trace_range_push(name); }
static inline void attn_range_pop(void) { trace_range_pop(); }
#endif

/* One named step of a variant: the call inside its own NVTX range, its
 * non-zero attn_rc returned from the enclosing function. */
#define ATTN_STEP(name, call)                                                   \
    do {                                                                        \
        attn_range_push(name);                                                  \
        int attn_step_rc_ = (call);                                             \
        attn_range_pop();                                                       \
        if (attn_step_rc_ != 0) return attn_step_rc_;                           \
    } while (0)

#endif

/* nvtx.h — NVTX ranges for Nsight tools and the tracer: a named push/pop
 * pair. Compiled out with -DATTN_NO_NVTX. */
#ifndef ATTN_NVTX_H
#define ATTN_NVTX_H

#ifndef ATTN_NO_NVTX
#include <nvtx3/nvToolsExt.h>
static inline void attn_range_push(const char *name) { nvtxRangePushA(name); }
static inline void attn_range_pop(void) { nvtxRangePop(); }
#else
static inline void attn_range_push(const char *name) { (void)name; }
static inline void attn_range_pop(void) {}
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

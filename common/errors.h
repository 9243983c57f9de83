/* errors.h — errors as values: one message buffer holding the last failure
 * (what call, where, why) and macros that check CUDA and cuBLAS calls and
 * return an attn_rc from the enclosing function. Only main() exits. */
#ifndef ATTN_ERRORS_H
#define ATTN_ERRORS_H

#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Record why the last call failed; formats like printf. Returns rc. */
int attn_fail(int rc, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The last recorded message, "" when none. */
const char *attn_error_message(void);
void attn_error_clear(void);

#define ATTN_FAIL(rc, ...) attn_fail((rc), __FILE__, __LINE__, __VA_ARGS__)

/* Checks a cudaError_t-returning call; needs cuda_runtime_api.h. */
#define CUDA_TRY(call)                                                          \
    do {                                                                        \
        cudaError_t attn_e_ = (call);                                           \
        if (attn_e_ != cudaSuccess) {                                           \
            int attn_rc_ = attn_e_ == cudaErrorMemoryAllocation ? ATTN_ERR_OOM  \
                                                                : ATTN_ERR;     \
            (void)cudaGetLastError(); /* clear non-sticky errors */             \
            return ATTN_FAIL(attn_rc_, "%s: %s", #call,                         \
                             cudaGetErrorString(attn_e_));                      \
        }                                                                       \
    } while (0)

/* After every kernel launch: the launch's own error. */
#define LAUNCH_TRY(what) CUDA_TRY(cudaGetLastError())

/* Checks a cublasStatus_t-returning call; needs cublas_api.h. */
#define CUBLAS_TRY(call)                                                        \
    do {                                                                        \
        cublasStatus_t attn_s_ = (call);                                        \
        if (attn_s_ != CUBLAS_STATUS_SUCCESS)                                   \
            return ATTN_FAIL(attn_s_ == CUBLAS_STATUS_ALLOC_FAILED ? ATTN_ERR_OOM \
                                                                    : ATTN_ERR, \
                             "%s: %s", #call, cublasGetStatusString(attn_s_));  \
    } while (0)

/* Propagates a non-zero attn_rc unchanged (the message is already set). */
#define ATTN_TRY(call)                                                          \
    do {                                                                        \
        int attn_r_ = (call);                                                   \
        if (attn_r_ != ATTN_OK) return attn_r_;                                 \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif

/* peak.h — the card's measured ceilings: a large bf16 GEMM through cuBLAS
 * (TFLOP/s), a large device-to-device copy (GB/s, bytes read + written) and
 * a read-only stream over the same bytes (GB/s read: what a decode, which
 * reads a cache and writes little, can reach). Rows show their rates as
 * shares of these. */
#ifndef ATTN_PEAK_H
#define ATTN_PEAK_H

#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

struct peaks {
    double gemm_tflops; /* median of timed bf16 n×n×n products, fp32 accumulation */
    int gemm_n;
    double copy_gbps;   /* median of timed copies, 2·bytes / time */
    size_t copy_bytes;
    double read_gbps;   /* median of timed reads of copy_bytes, bytes / time */
};

/* Takes a few seconds and about 3 GiB of device memory. */
int peak_measure(struct peaks *, attn_stream_t);

#ifdef __cplusplus
}
#endif
#endif

/* device.c — device_info from the CUDA runtime, and the GPU's short name. */
#include "device.h"
#include "errors.h"

#include <ctype.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

int device_query(struct device_info *out)
{
    memset(out, 0, sizeof *out);
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    /* without an NVIDIA driver the runtime says "driver version is
     * insufficient": name the missing GPU first, the runtime's words after;
     * a missing GPU is the user's to fix (exit 2), not an internal error */
    if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice)
        return ATTN_FAIL(ATTN_ERR_INPUT, "no GPU: the CUDA runtime finds no NVIDIA driver or device here "
                                   "(cudaGetDeviceCount: %s)", cudaGetErrorString(e));
    if (e != cudaSuccess)
        return ATTN_FAIL(ATTN_ERR_INPUT, "no usable GPU: cudaGetDeviceCount: %s", cudaGetErrorString(e));
    if (count == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "no GPU: the CUDA runtime sees no device");
    int dev = 0;
    CUDA_TRY(cudaGetDevice(&dev));
    struct cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
    out->present = true;
    out->ordinal = dev;
    snprintf(out->name, sizeof out->name, "%s", prop.name);
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    out->sm_count = prop.multiProcessorCount;
    out->l2_bytes = (size_t)prop.l2CacheSize;
    out->smem_optin_bytes = prop.sharedMemPerBlockOptin;
    out->total_mem_bytes = prop.totalGlobalMem;
    return ATTN_OK;
}

const char *device_short_name(const char *name, char *buf, size_t len)
{
    if (!strncasecmp(name, "NVIDIA ", 7)) name += 7;
    size_t n = 0;
    bool dash = false;
    for (; *name && n + 1 < len; name++) {
        unsigned char c = (unsigned char)*name;
        if (isalnum(c)) {
            if (dash && n) buf[n++] = '-';
            if (n + 1 < len) buf[n++] = (char)tolower(c);
            dash = false;
        } else {
            dash = true;
        }
    }
    if (n == 0 && len > 7) { strcpy(buf, "unknown"); return buf; }
    buf[n] = '\0';
    return buf;
}

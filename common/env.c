/* env.c — recording the measuring environment (env.h). */
#include "env.h"
#include "clocks.h"
#include "errors.h"

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#ifdef ATTN_HAVE_CUDNN
#include <cudnn_graph.h>
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef ATTN_GIT_REV
#define ATTN_GIT_REV "unknown"
#endif

const char *env_git_rev(void) { return ATTN_GIT_REV; }

static void put_version(FILE *f, const char *key, int v)
{ /* CUDA encodes versions as 1000·major + 10·minor */
    fprintf(f, "%s=%d.%d\n", key, v / 1000, (v % 1000) / 10);
}

int env_write(const char *path, const struct device_info *d, const struct peaks *pk,
              const char *run_id, const char *timestamp, unsigned long long seed, const char *cold_flush,
              int argc, char **argv)
{
    FILE *f = fopen(path, "w");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", path, strerror(errno));
    fprintf(f, "schema=1\nrun_id=%s\ntimestamp=%s\ngit_rev=%s\n", run_id, timestamp,
            env_git_rev());
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    if (seed) fprintf(f, "seed=%llu\n", seed);
    fprintf(f, "cold_flush=%s\n", cold_flush);
    fprintf(f, "host=%s\ncommand=", host);
    for (int i = 0; i < argc; i++) fprintf(f, "%s%s", i ? " " : "", argv[i]);
    fprintf(f, "\ngpu_name=%s\ncompute_capability=%d.%d\nsm_count=%d\nl2_bytes=%zu\n"
               "device_mem_bytes=%zu\nsmem_optin_bytes=%zu\n",
            d->name, d->cc_major, d->cc_minor, d->sm_count, d->l2_bytes, d->total_mem_bytes,
            d->smem_optin_bytes);
    int v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess) put_version(f, "cuda_driver_api", v);
    if (cudaRuntimeGetVersion(&v) == cudaSuccess) put_version(f, "cuda_runtime", v);
    int major = 0, minor = 0, patch = 0;
    if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
        fprintf(f, "cublas=%d.%d.%d\n", major, minor, patch);
#ifdef ATTN_HAVE_CUDNN
    /* the headers built against and the library loaded may differ (9.x is ABI-stable) */
    size_t dnn = cudnnGetVersion(); /* major·10000 + minor·100 + patch */
    fprintf(f, "cudnn_compiled=%d.%d.%d\ncudnn_runtime=%zu.%zu.%zu\n", CUDNN_MAJOR, CUDNN_MINOR,
            CUDNN_PATCHLEVEL, dnn / 10000, dnn % 10000 / 100, dnn % 100);
#else
    fprintf(f, "cudnn=not built in\n");
#endif
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, d->ordinal) == cudaSuccess)
        fprintf(f, "sm_clock_max_mhz=%d\n", khz / 1000);
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, d->ordinal) == cudaSuccess)
        fprintf(f, "mem_clock_max_mhz=%d\n", khz / 1000);
    (void)cudaGetLastError();
    if (clocks_ready()) {
        struct gpu_clocks c;
        fprintf(f, "nvml_driver=%s\n", clocks_driver_version());
        if (clocks_read(&c) == ATTN_OK) {
            fprintf(f, "sm_clock_at_start_mhz=%u\n", c.sm_mhz);
            /* how a row's watts (and mj_per_call, tflops_per_watt) are had */
            fprintf(f, "power_source=%s\n", !isnan(c.energy_mj) ? "energy_counter (its rise between its first and last step during a row's warm-up; "
                                                                    "a row with fewer than two steps: the mean of NVML's power readings)"
                                           : !isnan(c.power_w) ? "power_samples (the mean of NVML's power readings, every 50 ms of a row's warm-up)"
                                                               : "none");
        }
    } else {
        fprintf(f, "nvml=unavailable\npower_source=none\n");
    }
#ifdef ATTN_SLOWDOWN
    fprintf(f, "injected_slowdown=%s\n", ATTN_SLOWDOWN);
#endif
    if (pk)
        fprintf(f, "peak_gemm_bf16_tflops=%.1f\npeak_gemm_n=%d\npeak_copy_gbps=%.1f\n"
                   "peak_copy_bytes=%zu\npeak_read_gbps=%.1f\n",
                pk->gemm_tflops, pk->gemm_n, pk->copy_gbps, pk->copy_bytes, pk->read_gbps);
    if (fclose(f) != 0) return ATTN_FAIL(ATTN_ERR, "unable to write '%s'", path);
    return ATTN_OK;
}

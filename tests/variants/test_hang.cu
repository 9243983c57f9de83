/* test_hang.cu — variants whose kernels never end, for the watchdog's GPU
 * test (tests/check_gpu.c). Built only into build/attnbench-test (with
 * common/registry.c under ATTN_TEST_VARIANTS), never into attnbench.
 *   test_hang       its first call spins: the row hangs in validation
 *   test_hang_late  its first call is naive's (validation passes), every
 *                   later one spins: the row hangs while being timed
 * The spin gives up after about ten minutes of SM clock, so that a watchdog
 * that failed to end the process would not hold the GPU for good. */
#include "../../common/attn.h"
#include "../../common/errors.h"

#include <cuda_runtime.h>
#include <stdlib.h>

extern "C" const struct attn_variant attn_variant_naive;

#define SPIN_CYCLES (600LL * 2000000000LL) /* ~10 min at 2 GHz */

__global__ void spin_kernel(long long cycles)
{
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

static const char *hang_supports(const struct attn_problem *, const struct device_info *)
{
    return NULL;
}

static size_t hang_workspace_bytes(const struct attn_problem *p)
{
    return attn_variant_naive.workspace_bytes(p);
}

static int spin(attn_stream_t stream)
{
    spin_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(SPIN_CYCLES);
    CUDA_TRY(cudaGetLastError());
    return ATTN_OK;
}

/* naive's context, and how many calls were made */
struct hang_ctx {
    void *naive;
    long calls;
};

static int hang_setup(void **ctx, const struct attn_problem *p, void *workspace)
{
    struct hang_ctx *c = (struct hang_ctx *)calloc(1, sizeof *c);
    if (!c) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    int rc = attn_variant_naive.setup(&c->naive, p, workspace);
    if (rc != ATTN_OK) {
        free(c);
        return rc;
    }
    *ctx = c;
    return ATTN_OK;
}

static void hang_teardown(void *ctx)
{
    struct hang_ctx *c = (struct hang_ctx *)ctx;
    attn_variant_naive.teardown(c->naive);
    free(c);
}

static int hang_run(void *, const void *, const void *, const void *, void *, attn_stream_t stream)
{
    return spin(stream);
}

static int hang_late_run(void *ctx, const void *q, const void *k, const void *v, void *o,
                         attn_stream_t stream)
{
    struct hang_ctx *c = (struct hang_ctx *)ctx;
    if (c->calls++ == 0) return attn_variant_naive.run(c->naive, q, k, v, o, stream);
    return spin(stream);
}

extern "C" const struct attn_variant attn_variant_test_hang = {
    .name = "test_hang",
    .summary = "test only: its first call never ends (hangs in validation)",
    .fused = false,
    .supports = hang_supports,
    .workspace_bytes = hang_workspace_bytes,
    .setup = hang_setup,
    .run = hang_run,
    .teardown = hang_teardown,
    .framework = NULL,
    .backward = NULL,
};

extern "C" const struct attn_variant attn_variant_test_hang_late = {
    .name = "test_hang_late",
    .summary = "test only: validates as naive, then every call never ends",
    .fused = false,
    .supports = hang_supports,
    .workspace_bytes = hang_workspace_bytes,
    .setup = hang_setup,
    .run = hang_late_run,
    .teardown = hang_teardown,
    .framework = NULL,
    .backward = NULL,
};

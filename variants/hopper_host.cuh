/* hopper_host.cuh — the host side that flash_hopper (flash_hopper.cu) and
 * its tuning lab (lab/flash_hopper_lab.cu) share: the TMA tensor maps of
 * Q, K and V, the launch geometry of a configuration, the device checks of
 * supports(), and the SM count (and 2-CTA cluster count) a persistent grid
 * is sized by. */
#ifndef ATTN_HOPPER_HOST_CUH
#define ATTN_HOPPER_HOST_CUH

#include "../common/attn.h"
#include "../common/errors.h"
#include "flash_hopper_phases.cuh" /* hop_pairs */
#include "hopper_ptx.cuh"

#include <cuda.h> /* CUtensorMap and its enums only: no -lcuda, see hop_get_encode() */
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

/* cuTensorMapEncodeTiled through the runtime's driver entry point, so that
 * attnbench does not link libcuda directly. */
static int hop_get_encode(PFN_cuTensorMapEncodeTiled_v12000 *out)
{
    static PFN_cuTensorMapEncodeTiled_v12000 fn;
    if (!fn) {
        void *p = NULL;
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
        if (q != cudaDriverEntryPointSuccess || !p)
            return ATTN_FAIL(ATTN_ERR, "cuTensorMapEncodeTiled not found in the driver (%d)", (int)q);
        fn = (PFN_cuTensorMapEncodeTiled_v12000)p;
    }
    *out = fn;
    return ATTN_OK;
}

/* The tensor at ptr as TMA sees it, boxes of 64 columns × rows × 1 head,
 * 128-byte swizzle: dense [B·heads, S, D] as (D, S, B·heads), rows past S
 * read as zeros; ragged [tokens, heads, D] as (D, tokens, heads), a row
 * coordinate counting tokens (rows past a sequence read the next one's,
 * which the kernel masks or does not store; past the last token, zeros).
 * Columns past D read as zeros too (D = 96 in two 64-column boxes). */
static int hop_encode_map(PFN_cuTensorMapEncodeTiled_v12000 encode, const struct attn_problem *p,
                          CUtensorMap *map, const void *ptr, unsigned rows, int heads, long tokens)
{
    if ((uintptr_t)ptr % 16) return ATTN_FAIL(ATTN_ERR, "flash_hopper: tensor not 16-byte aligned");
    const cuuint64_t elem = 2, d = (cuuint64_t)p->head_dim;
    const bool ragged = attn_is_varlen(p);
    const cuuint64_t dims[3] = {d, ragged ? (cuuint64_t)tokens : (cuuint64_t)p->seq_len,
                                ragged ? (cuuint64_t)heads : (cuuint64_t)p->batch * (cuuint64_t)heads};
    const cuuint64_t strides[2] = {ragged ? (cuuint64_t)heads * d * elem : d * elem,
                                   ragged ? d * elem : (cuuint64_t)p->seq_len * d * elem};
    const cuuint32_t box[3] = {HOP_CHUNK_COLS, rows, 1};
    const cuuint32_t estr[3] = {1, 1, 1};
    CUresult r = encode(map, p->dtype == ATTN_FP16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                        3, const_cast<void *>(ptr), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) return ATTN_FAIL(ATTN_ERR, "cuTensorMapEncodeTiled failed (CUresult %d)", (int)r);
    return ATTN_OK;
}

/* The tensor maps of a call's Q and O (boxes of 64 rows), K and V (boxes
 * of bn rows, a key tile), kept for the next call with the same tensors. */
struct hop_maps {
    PFN_cuTensorMapEncodeTiled_v12000 encode;
    int bn;
    long tokens;           /* ragged: the batch's tokens (rows of the packed tensors) */
    const void *q, *k, *v, *o; /* the tensors tm describes */
    CUtensorMap tm[4];         /* Q, K, V, O */
};

static int hop_maps_init(struct hop_maps *m, int bn, long tokens)
{
    memset(m, 0, sizeof *m);
    m->bn = bn;
    m->tokens = tokens;
    return hop_get_encode(&m->encode);
}

/* The maps for q, k, v, o: encoded again only when a pointer changed
 * (host-side only, no stream work: safe under graph capture). */
static int hop_maps_for(struct hop_maps *m, const struct attn_problem *p, const void *q, const void *k, const void *v,
                        const void *o)
{
    if (q == m->q && k == m->k && v == m->v && o == m->o) return ATTN_OK;
    m->q = m->k = m->v = m->o = NULL;
    ATTN_TRY(hop_encode_map(m->encode, p, &m->tm[0], q, 64, p->heads, m->tokens));
    ATTN_TRY(hop_encode_map(m->encode, p, &m->tm[1], k, (unsigned)m->bn, attn_kv_heads(p), m->tokens));
    ATTN_TRY(hop_encode_map(m->encode, p, &m->tm[2], v, (unsigned)m->bn, attn_kv_heads(p), m->tokens));
    ATTN_TRY(hop_encode_map(m->encode, p, &m->tm[3], o, 64, p->heads, m->tokens));
    m->q = q, m->k = k, m->v = v, m->o = o;
    return ATTN_OK;
}

/* The grid of configuration C for S rows of bh heads: (row blocks, B·H),
 * or for a persistent one as many CTAs as work tiles, n_sm at most (SPAN:
 * tiles of NCW 64-row slices over every head's slices; MC: two CTAs per
 * pair of work tiles, hop_pairs with group query heads per K/V head). A
 * ragged batch's n_ragged work tiles (> 0): one CTA each, or a persistent
 * grid over them. */
template <typename C> static dim3 hop_grid(int S, size_t bh, int n_sm, int n_ragged, int group)
{
    const unsigned n_mb = (unsigned)((S + C::BM - 1) / C::BM);
    if (n_ragged > 0) return dim3((unsigned)(C::PERS && n_ragged > n_sm ? n_sm : n_ragged), 1);
    if (!C::PERS) return dim3(n_mb, (unsigned)bh);
    if (C::MC) {
        const size_t pairs = (size_t)hop_pairs(S, C::BM, (int)bh, group), cap = (size_t)(n_sm / 2);
        return dim3((unsigned)(2 * (pairs < cap ? pairs : cap)), 1);
    }
    const size_t work = C::SPAN ? ((size_t)((S + 63) / 64) * bh + C::NCW - 1) / C::NCW : (size_t)n_mb * bh;
    return dim3((unsigned)(work < (size_t)n_sm ? work : (size_t)n_sm), 1);
}

/* The SMs of the current device (132 when it cannot be read). */
static int hop_sm_count(void)
{
    int dev = 0, n_sm = 132;
    if (cudaGetDevice(&dev) == cudaSuccess) {
        if (cudaDeviceGetAttribute(&n_sm, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n_sm < 1)
            n_sm = 132;
    }
    (void)cudaGetLastError();
    return n_sm;
}

/* A launch of grid × threads (smem bytes of dynamic shared memory) on
 * stream s in clusters of two CTAs along x; attr holds the cluster shape
 * and must outlive the launch call. */
static inline cudaLaunchConfig_t hop_pair_launch(cudaLaunchAttribute *attr, dim3 grid, int threads, size_t smem,
                                                 cudaStream_t s)
{
    *attr = cudaLaunchAttribute{};
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = 2, attr->val.clusterDim.y = 1, attr->val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3((unsigned)threads, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

/* The clusters of two CTAs of kernel (blocks of threads threads, smem
 * bytes of dynamic shared memory) that can run at once on the device, at
 * least 1 (when it cannot be read: n_sm / 2). */
static inline int hop_max_pair_clusters(const void *kernel, int threads, size_t smem, int n_sm)
{
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg =
        hop_pair_launch(&attr, dim3((unsigned)(n_sm >= 4 ? n_sm / 2 * 2 : 2), 1, 1), threads, smem, 0);
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, kernel, &cfg) != cudaSuccess || n < 1) n = n_sm / 2;
    (void)cudaGetLastError();
    return n < 1 ? 1 : n;
}

/* supports()'s checks that do not depend on the configuration: NULL when
 * the device and the problem's shape suit the kernel at all; grouped: the
 * caller's kernel reads K/V head bh / group (grouped K/V heads); ragged: it
 * takes a ragged batch's work-tile list. */
static const char *hop_supports_shape(const struct attn_problem *p, const struct device_info *dev, bool grouped,
                                      bool ragged)
{
    if (!dev->present) return "no CUDA device";
    if (dev->cc_major != 9 || dev->cc_minor != 0)
        return "needs compute capability 9.0 (sm_90a: wgmma, TMA, setmaxnreg)";
    if (p->head_dim != 64 && p->head_dim != 96 && p->head_dim != 128 && p->head_dim != 192 && p->head_dim != 256)
        return "head_dim 64, 96, 128, 192 and 256 only";
    if (!grouped && attn_kv_heads(p) != p->heads) return "grouped K/V heads (kv_heads < heads): not implemented yet";
    if (!ragged && attn_is_varlen(p)) return "ragged batches (varlen): not implemented yet";
    if (attn_is_decode(p)) return "decode (q_len below kv_len): not implemented yet";
    if (attn_is_paged(p)) return "a paged cache: not implemented (flash_decode reads one)";
    if (p->seq_len < 1) return "seq_len must be at least 1";
    if (!attn_is_varlen(p) && (size_t)p->batch * p->heads > 65535) return "batch*heads above 65535";
    return NULL;
}

/* ... and those of one compiled kernel: its shared memory, and whether this
 * build holds sm_90a code for it. */
static const char *hop_supports_kernel(const void *kernel, size_t smem, const struct device_info *dev)
{
    if (smem > dev->smem_optin_bytes) return "not enough shared memory per block";
    struct cudaFuncAttributes a;
    if (cudaFuncGetAttributes(&a, kernel) != cudaSuccess) {
        (void)cudaGetLastError();
        return "no sm_90a code in this build (compile with -gencode=arch=compute_90a,code=sm_90a)";
    }
    return NULL;
}

#endif

/* cudnn_sdpa.c — the vendor baseline: cuDNN's fused flash attention, forward
 * and backward (what PyTorch's SDPA runs on Hopper), reached through cuDNN's
 * backend (graph) C API, without cudnn-frontend.
 *
 * cuDNN 9.13+ has a single SDPA operation, but before 9.21 it cannot express
 * a causal mask (no causal attribute, no score-modifier subgraph), so both
 * causal and non-causal points use the classic pattern graph that cuDNN's
 * fused-attention engines recognise:
 *
 *     [paged: Kᵀ = paged_load(K pages, page table, seq_len_kv)]
 *     S  = matmul(Q, Kᵀ)                Kᵀ: K viewed as [B,H,D,S] by strides
 *     S' = S · scale                    scale: a by-value float
 *     [ragged or a cache: S' = select(row < seq_len_q[b] && col <
 *              seq_len_kv[b], S', mask)]
 *     [causal: row = index(S', 2), col = index(S', 3), keep = row >= col,
 *              S' = select(keep, S', mask); a decode (q_len < kv_len: Q, O
 *              and S' have q_len rows) is a cache (below) and aligns it
 *              bottom-right, keep = row + seq_len_kv[b] − seq_len_q[b] >= col;
 *              a decode of one query row has no causal mask]
 *     m = max(S'), e = exp(S' − m), l = sum(e), P = e / l
 *     Stats = m + log(l)                virtual, or written to the workspace
 *     [paged: V = paged_load(V pages, page table, seq_len_kv)]
 *     O  = matmul(P, V)
 *
 * (As cudnn-frontend builds it: virtual intermediates in fp32 except P, in
 * the I/O type; -FLT_MAX as the value of both masks (a finite one: a row
 * with every key masked, as the padded rows past a ragged sequence's end
 * are, gives no NaN); the Stats nodes present even when Stats is virtual —
 * checked with cuDNN 9.19's deviceless heuristics for an H200: without them
 * no engine accepts the graph.)
 *
 * Ragged batches (varlen set) run natively, as frontend (v1.14 to v1.19,
 * include/cudnn_frontend/node/scaled_dot_product_flash_attention.h and
 * utils/attn_score_modifiers.h) lowers SDPA with padding_mask, seq_len_q/kv
 * and ragged offsets on Q, K, V, O:
 *   - Q and O are declared [B, H, S_max, D], K and V [B, KV, S_max, D] (Kᵀ
 *     by swapping the last two), with the packed tokens' strides: D for a
 *     head, H·D (KV·D) for a token, S_max·H·D (S_max·KV·D) for the batch, as
 *     frontend's THD tests give them; each carries a ragged-offset tensor
 *     (CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, [B+1,1,1,1], own uid) whose entry
 *     b is where sequence b starts, in elements: cu[b]·H·D for Q and O,
 *     cu[b]·KV·D for K and V. int32 (what PyTorch passes), int64 only when
 *     the last offset does not fit in int32 (cuDNN 9.6+, as frontend's tests
 *     switch to it).
 *   - seq_len_q and seq_len_kv ([B,1,1,1] int32, both the batch's lengths:
 *     each sequence attends to itself) are the GEMM M/N overrides of the
 *     first matmul and the M/K overrides of the second, and feed the padding
 *     mask above: index rows and columns (int32), CMP_LT each against its
 *     lengths, LOGICAL_AND, BINARY_SELECT with its own by-value mask value —
 *     after the scale and before the causal mask (top-left: key j <= query i
 *     within each sequence), in frontend's order.
 *   - Stats stays [B,H,S_max,1] padded, as in frontend's ragged tests.
 *   The lengths and offsets live in the workspace, after the cuDNN workspace
 *   and Stats; setup() uploads them.
 *
 * Caches: a point whose K/V cache is paged, a decode that gives each
 * sequence its own cached length lens[b] (varlen with q_len: a ragged
 * cache), or a causal decode of more than one query row (lens[b] = kv_len:
 * cuDNN 9.14's fused engine got a by-value shift of the diagonal wrong on
 * the H200), runs the same graph with the padding mask and variable lengths,
 * as frontend lowers sdpa with padding_mask, seq_len_q/kv,
 * causal_mask_bottom_right and paged_attention_k/v_table
 * (scaled_dot_product_flash_attention.h, paged_cache_load.h,
 * attn_score_modifiers.h):
 *   - Q and O stay dense [B, H, q_len, D]; no ragged offsets anywhere. A
 *     ragged cache's K and V are dense [B, KV, S, D], S the longest cache,
 *     sequence b's rows past lens[b] never to be read.
 *   - seq_len_q[b] = q_len and seq_len_kv[b] = lens[b] (S each when the
 *     cache is not ragged): the GEMM overrides and the padding
 *     mask as for a ragged batch, so that no score past a sequence's cache
 *     counts.
 *   - causal aligns each sequence bottom-right on its own length: query row
 *     i sees key j iff j <= lens[b] − q_len + i. The shift may differ by
 *     sequence, so it is int32
 *     pointwise ops on the lengths: row + seq_len_kv[b] (ADD), − seq_len_q[b]
 *     (SUB), CMP_GE against col — frontend's lowering of a bottom-right mask
 *     with variable lengths for cuDNN before 9.20. A single query row (q_len
 *     1) sees every key of its cache, which the padding mask keeps already:
 *     that graph has no causal mask (as FlashAttention drops causal at one
 *     query), and frontend refuses a causal q_len 1 up to cuDNN 9.9 anyway.
 *   - paged (cuDNN 9.5+): K and V arrive as attn.h lays them out, [pages,
 *     page, KV, D], declared [pages, KV, page, D] with strides {page·KV·D, D,
 *     KV·D, 1} (a page's tokens KV·D apart, its heads D apart). A paged cache
 *     load operation (CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR:
 *     container = the pages, page table, sequence = seq_len_kv) yields each
 *     as a virtual dense tensor: Kᵀ [B, KV, D, S] with strides {KV·D·S, D·S,
 *     1, D} before the first matmul, V [B, KV, S, D] row-major before the
 *     second, S the longest cache (frontend's paged max_seq_len_kv). The
 *     page table is attn_page_table's, [B, 1, n, 1] int32 for n = ⌈S /
 *     page⌉ pages a sequence, the batch outermost (strides {n, n, 1, 1});
 *     frontend gives K and V a table each, so the graph has two tensors (own
 *     uids) over one array in the workspace, after the lengths.
 *   What cuDNN refuses is a skipped row with its reason: paged caches before
 *   9.5 (at build time and at run time), paged head_dim above 128 up to 9.9,
 *   and a bottom-right causal mask below 9.6 unless q_len and kv_len are
 *   multiples of 64 (frontend's refusals); the engines' own refusals (a page
 *   size, a dtype) come from the heuristics and the plans as for any point.
 *
 * The backward (points of pass bwd and fwd_bwd) is cuDNN's fused flash-
 * attention backward, reached the same way: the pattern graph that frontend
 * (v1.14 to v1.23, CompositeSDPABackwardNode::expand_node) lowers
 * sdpa_backward to for cuDNN 9, in its op order:
 *
 *     softmax_sum = rowsum(dO ∘ O) · 1    fp32, in the workspace (the 1 stands
 *                                         for frontend's absent dropout scale)
 *     S' = matmul(Q, Kᵀ) · scale          [ragged: the padding mask above]
 *     S' = S' − Stats                     [cuDNN < 9.10 and a padding mask:
 *                                          the padding mask again]
 *                                         [causal: the causal mask above]
 *     E  = exp(S')                        the probabilities, recomputed
 *     dV = matmul(Eᵀ, dO)                 Eᵀ: a reshape of E, in the I/O type
 *     dP = matmul(dO, Vᵀ)
 *     dS = (dP − softmax_sum) ∘ E · scale
 *     dK = matmul(dSᵀ, Q)                 dSᵀ: a reshape of dS, in the I/O type
 *     dQ_acc = matmul(dS, K)              K: a reshape of Kᵀ; dQ_acc: fp32, in
 *                                         the workspace
 *     dQ = identity(dQ_acc)
 *
 * Virtual intermediates are fp32 but for the reshapes; the scale and the 1
 * are by-value floats; both masks are the forward's. Grouped K/V heads: dV
 * and dK leave their matmuls with H heads (virtual, I/O type) and a sum
 * reduction folds each group into its K/V head, as frontend builds it (the
 * engine fuses the reduction). Ragged batches: the forward's lengths and
 * offsets, dO taking O's ragged offsets, dQ Q's, dK K's and dV V's (frontend's
 * THD tests); Stats stays padded, and dQ_acc and softmax_sum are
 * [B,H,S_max,·], frontend's sizes when max_total_seq_len is not given. Two of
 * frontend's workarounds for older cuDNN are kept: up to 9.15.0 a dense
 * backward whose S is not a multiple of 128 gets the padding mask with every
 * length S (its lengths in the workspace as a ragged batch's are), and before
 * 9.6 dQ_acc is zeroed before each backward; 9.10.0 and 9.10.1 are refused, as
 * frontend refuses them.
 *
 * Pass fwd builds the inference graph (virtual Stats) first, then the stats
 * graph; passes bwd and fwd_bwd build the stats graph (backward_ops.forward:
 * it writes the Stats the backward reads) and the backward graph, which share
 * cuDNN's workspace (they run one after the other on one stream). The row's
 * `impl` column says which graphs and engines run. A plan is built once per
 * point — by supports(), which turns cuDNN's own rejections into skipped rows
 * with cuDNN's reason — cached for workspace_bytes() and taken over by
 * setup(); run() and the backward ops only execute it on the given stream.
 * ATTN_CUDNN_DEBUG=1 prints every heuristic candidate and the choice.
 *
 * Checked without a GPU through cuDNN 9.19's deviceless path (a device
 * properties descriptor of an H200, sm_90 with 132 SMs; NVRTC compiling each
 * runtime-compiled kernel, only the module load faked): every forward and
 * backward graph of B 1..8, H 16 (and 32 over 8 K/V heads), S 1024 and 4096,
 * D 64 and 128, causal or not, bf16 and fp16, dense and ragged, finalizes an
 * execution plan. The cache graphs were checked that way only up to the
 * heuristics (their support checks pass: candidate engines for paged caches
 * of 1 to 128 tokens a page, ragged caches, both, q_len 1 to 8, D 64 to 256,
 * bf16 and fp16), not to a finalized plan.
 */
#include "../common/attn.h"
#include "../common/errors.h"
#include "../common/gpu_util.h"

#include <cuda_runtime_api.h>
#include <cudnn_graph.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if CUDNN_MAJOR < 9
#error "cudnn_sdpa needs cuDNN 9 headers (the Makefile leaves it out with older ones)"
#endif

#ifndef CUDNN_STATUS_CATEGORY /* in every 9.x header so far; kept for safety */
#define CUDNN_STATUS_CATEGORY(s) ((s) / 1000 * 1000)
#endif

/* Internal only: cuDNN said "not supported" (its status category 3000). Such
 * points become skipped rows; every other failure is an error. */
#define RC_UNSUPPORTED 1

enum {
    UID_Q = 1, UID_K, UID_V, UID_O, UID_SCALE, UID_NEG_INF, UID_STATS,
    /* ragged batches only: the padding mask's own mask value, the lengths
       and the ragged offsets of Q, K, V, O */
    UID_PAD_NEG_INF, UID_SEQ_LEN_Q, UID_SEQ_LEN_KV, UID_RAG_Q, UID_RAG_K, UID_RAG_V, UID_RAG_O,
    /* the backward graph's own: dO, dQ, dK, dV, the by-value 1, softmax_sum
       and the dQ accumulator (workspace), the second padding mask's value */
    UID_DO, UID_DQ, UID_DK, UID_DV, UID_ONE, UID_SOFTMAX_SUM, UID_DQ_ACCUM, UID_PAD2_NEG_INF,
    /* a paged cache only: the page table, once for K's load and once for V's
       (one array in the workspace) */
    UID_PAGE_TABLE_K, UID_PAGE_TABLE_V,
    UID_VIRTUAL = 100
};

static bool debug_on(void)
{
    const char *e = getenv("ATTN_CUDNN_DEBUG");
    return e && *e && strcmp(e, "0") != 0;
}

#define DEBUGF(...)                                                  \
    do {                                                             \
        if (debug_on()) fprintf(stderr, "cudnn_sdpa: " __VA_ARGS__); \
    } while (0)

/* ------------------------------------------------------------------ errors */

static int cudnn_fail(cudnnStatus_t s, const char *what, const char *call, const char *file,
                      int line)
{
    char last[400] = "";
    cudnnGetLastErrorString(last, sizeof last);
    int rc = CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED      ? RC_UNSUPPORTED
             : s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED ? ATTN_ERR_OOM
                                                                         : ATTN_ERR;
    return attn_fail(rc, file, line, "cuDNN %s: %s: %s%s%s", what, call, cudnnGetErrorString(s),
                     last[0] ? ": " : "", last);
}

/* Reading cuDNN's last error message clears it: done before the calls whose
 * failures we report, so that a stale message is never blamed on them. */
static void forget_last_error(void)
{
    char sink[64];
    cudnnGetLastErrorString(sink, sizeof sink);
}

/* Checks a cudnnStatus_t-returning call; `what` names the object (descriptor
 * type and role) so that one failure message says where the graph broke. */
#define CUDNN_TRY(what, call)                                              \
    do {                                                                   \
        cudnnStatus_t attn_s_ = (call);                                    \
        if (attn_s_ != CUDNN_STATUS_SUCCESS)                               \
            return cudnn_fail(attn_s_, (what), #call, __FILE__, __LINE__); \
    } while (0)

static int set_attr(cudnnBackendDescriptor_t d, const char *what, const char *attr_name,
                    cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type, int64_t n,
                    const void *value, const char *file, int line)
{
    cudnnStatus_t s = cudnnBackendSetAttribute(d, attr, type, n, value);
    return s == CUDNN_STATUS_SUCCESS ? ATTN_OK : cudnn_fail(s, what, attr_name, file, line);
}

static int get_attr(cudnnBackendDescriptor_t d, const char *what, const char *attr_name,
                    cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type, int64_t n,
                    int64_t *got, void *value, const char *file, int line)
{
    cudnnStatus_t s = cudnnBackendGetAttribute(d, attr, type, n, got, value);
    return s == CUDNN_STATUS_SUCCESS ? ATTN_OK : cudnn_fail(s, what, attr_name, file, line);
}

/* SET_RC(desc, "tensor Q", CUDNN_ATTR_..., CUDNN_TYPE_..., count, pointer) is
 * the call's attn_rc; SET and GET return it from the caller on failure. */
#define SET_RC(d, what, attr, type, n, v) \
    set_attr((d), (what), #attr, (attr), (type), (n), (v), __FILE__, __LINE__)
#define GET_RC(d, what, attr, type, n, got, v) \
    get_attr((d), (what), #attr, (attr), (type), (n), (got), (v), __FILE__, __LINE__)
#define SET(d, what, attr, type, n, v) ATTN_TRY(SET_RC(d, what, attr, type, n, v))
#define GET(d, what, attr, type, n, got, v) ATTN_TRY(GET_RC(d, what, attr, type, n, got, v))
#define FINALIZE(d, what) CUDNN_TRY((what), cudnnBackendFinalize(d))
#define DESC CUDNN_TYPE_BACKEND_DESCRIPTOR

/* ------------------------------------------------------------ descriptors */

/* Every descriptor a plan needs alive, destroyed together (newest first). */
struct descs {
    cudnnBackendDescriptor_t *d;
    size_t n, cap;
};

static int descs_adopt(struct descs *a, cudnnBackendDescriptor_t d)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 64;
        cudnnBackendDescriptor_t *grown = realloc(a->d, cap * sizeof *grown);
        if (!grown) {
            cudnnBackendDestroyDescriptor(d);
            return ATTN_FAIL(ATTN_ERR, "out of host memory for cuDNN descriptors");
        }
        a->d = grown;
        a->cap = cap;
    }
    a->d[a->n++] = d;
    return ATTN_OK;
}

static void descs_free(struct descs *a)
{
    while (a->n) cudnnBackendDestroyDescriptor(a->d[--a->n]);
    free(a->d);
    memset(a, 0, sizeof *a);
}

/* Moves every descriptor of from into to (from ends empty). */
static int descs_move(struct descs *to, struct descs *from)
{
    for (size_t i = 0; i < from->n; i++) {
        int rc = descs_adopt(to, from->d[i]);
        if (rc != ATTN_OK) { /* descs_adopt destroyed d[i]; the rest are still from's */
            for (size_t j = i + 1; j < from->n; j++) cudnnBackendDestroyDescriptor(from->d[j]);
            from->n = 0;
            descs_free(from);
            return rc;
        }
    }
    from->n = 0;
    descs_free(from);
    return ATTN_OK;
}

static int descs_new(struct descs *a, cudnnBackendDescriptorType_t type, const char *what,
                     cudnnBackendDescriptor_t *out)
{
    cudnnBackendDescriptor_t d = NULL;
    CUDNN_TRY(what, cudnnBackendCreateDescriptor(type, &d));
    *out = d;
    return descs_adopt(a, d);
}

/* ------------------------------------------------------------ the handle */

/* One handle per process (cudnnCreate costs hundreds of milliseconds),
 * created on first need on the current device, destroyed at exit. */
static cudnnHandle_t handle;
static struct plan *cached; /* defined below; freed at exit too */
static void plan_free(struct plan *);

static void release_at_exit(void)
{
    plan_free(cached);
    cached = NULL;
    if (handle) cudnnDestroy(handle);
    handle = NULL;
}

static int handle_get(void)
{
    if (handle) return ATTN_OK;
    cudnnHandle_t h = NULL;
    CUDNN_TRY("handle", cudnnCreate(&h));
    if (atexit(release_at_exit) != 0) {
        cudnnDestroy(h);
        return ATTN_FAIL(ATTN_ERR, "atexit: unable to register the cuDNN handle's release");
    }
    handle = h;
    return ATTN_OK;
}

/* ---------------------------------------------------------------- the graph */

/* A problem's tensor shapes, dims (d) and strides (s), as the graphs declare
 * them. Dense: [B, H, S, D] row-major (a decode: Q, O and the scores with
 * q_len rows; a ragged cache's K and V padded to S, so dense too; a paged
 * cache's K and V as the paged loads produce them, dense). Packed: the same
 * dims (S = the longest sequence) over packed tokens — a token is H·D (KV·D)
 * elements, a head D within it; the batch stride S·H·D is frontend's (its
 * THD tests); where each sequence really starts comes from the ragged
 * offsets. */
struct shapes {
    int64_t qd[4], qs[4];   /* Q, O, dO, dQ */
    int64_t kd[4], ks[4];   /* K, V, dK, dV: [B, KV, S, D] */
    int64_t ktd[4], kts[4]; /* Kᵀ and Vᵀ: K and V viewed as [B, KV, D, S] by strides */
    int64_t sd[4], ss[4];   /* the scores and what has their shape: [B, H, S, S] */
    int64_t tss[4];         /* the same transposed by strides (the backward's reshapes) */
    int64_t rd[4], rs[4];   /* one value per query row: [B, H, S, 1] */
    int64_t one[4];         /* scalars */
};

static void set4(int64_t v[4], int64_t a, int64_t b, int64_t c, int64_t d)
{
    v[0] = a, v[1] = b, v[2] = c, v[3] = d;
}

static void shapes_of(const struct attn_problem *p, struct shapes *sh)
{
    const int64_t B = p->batch, H = p->heads, S = p->seq_len, D = p->head_dim;
    const int64_t KV = attn_kv_heads(p); /* grouped K/V heads: K and V carry KV heads, which
                                            cuDNN's fused attention maps to the query heads */
    const int64_t L = attn_q_len(p);     /* Q's, O's and the scores' rows: S but in a decode */
    set4(sh->qd, B, H, L, D);
    set4(sh->kd, B, KV, S, D);
    set4(sh->ktd, B, KV, D, S);
    if (attn_is_packed(p)) {
        set4(sh->qs, S * H * D, D, H * D, 1);
        set4(sh->ks, S * KV * D, D, KV * D, 1);
    } else {
        set4(sh->qs, H * L * D, L * D, D, 1);
        set4(sh->ks, KV * S * D, S * D, D, 1);
    }
    set4(sh->kts, sh->ks[0], sh->ks[1], sh->ks[3], sh->ks[2]); /* K's last two swapped */
    set4(sh->sd, B, H, L, S);
    set4(sh->ss, H * L * S, L * S, S, 1);
    set4(sh->tss, H * L * S, L * S, 1, L);
    set4(sh->rd, B, H, L, 1);
    set4(sh->rs, H * L, L, 1, 1);
    set4(sh->one, 1, 1, 1, 1);
}

struct graph {
    struct descs *a;
    const struct shapes *sh;
    cudnnBackendDescriptor_t ops[48];
    int nops;
    int64_t next_uid;
};

enum { T_VIRTUAL = 1, T_BY_VALUE = 2 };

/* A tensor; ragged (NULL for none) is its ragged-offset tensor: where each
 * batch entry starts, so that the batch dimension packs sequences of
 * different lengths. */
static int tensor_ragged(struct graph *g, const char *name, int64_t uid, cudnnDataType_t type,
                         const int64_t dims[4], const int64_t strides[4], int flags,
                         cudnnBackendDescriptor_t ragged, cudnnBackendDescriptor_t *out)
{
    char what[64];
    snprintf(what, sizeof what, "tensor %s (uid %lld)", name, (long long)uid);
    const int64_t align = 16;
    const bool is_virtual = flags & T_VIRTUAL, by_value = flags & T_BY_VALUE;
    cudnnBackendDescriptor_t t = NULL;
    ATTN_TRY(descs_new(g->a, CUDNN_BACKEND_TENSOR_DESCRIPTOR, what, &t));
    SET(t, what, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    SET(t, what, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    SET(t, what, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    SET(t, what, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    SET(t, what, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    if (is_virtual) SET(t, what, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
    if (by_value) SET(t, what, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
    if (ragged) SET(t, what, CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, DESC, 1, &ragged);
    FINALIZE(t, what);
    *out = t;
    return ATTN_OK;
}

static int tensor(struct graph *g, const char *name, int64_t uid, cudnnDataType_t type,
                  const int64_t dims[4], const int64_t strides[4], int flags,
                  cudnnBackendDescriptor_t *out)
{
    return tensor_ragged(g, name, uid, type, dims, strides, flags, NULL, out);
}

/* A virtual intermediate: uids from UID_VIRTUAL up. */
static int virtual_tensor(struct graph *g, const char *name, cudnnDataType_t type,
                          const int64_t dims[4], const int64_t strides[4],
                          cudnnBackendDescriptor_t *out)
{
    return tensor(g, name, g->next_uid++, type, dims, strides, T_VIRTUAL, out);
}

/* A by-value float scalar (a mask value, the scale, a constant). */
static int scalar(struct graph *g, const char *name, int64_t uid, cudnnBackendDescriptor_t *out)
{
    return tensor(g, name, uid, CUDNN_DATA_FLOAT, g->sh->one, g->sh->one, T_BY_VALUE, out);
}

static int add_op(struct graph *g, cudnnBackendDescriptor_t op)
{
    if (g->nops == (int)(sizeof g->ops / sizeof g->ops[0]))
        return ATTN_FAIL(ATTN_ERR, "cudnn_sdpa: more operations than the graph holds");
    g->ops[g->nops++] = op;
    return ATTN_OK;
}

/* y = mode(x[, b[, t]]); axis >= 0 only for GEN_INDEX. */
static int pointwise(struct graph *g, const char *name, cudnnPointwiseMode_t mode,
                     cudnnDataType_t prec, int64_t axis, cudnnBackendDescriptor_t x,
                     cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t,
                     cudnnBackendDescriptor_t y)
{
    char what[64], opwhat[64];
    snprintf(what, sizeof what, "pointwise descriptor '%s'", name);
    snprintf(opwhat, sizeof opwhat, "pointwise operation '%s'", name);
    cudnnBackendDescriptor_t pw = NULL, op = NULL;
    ATTN_TRY(descs_new(g->a, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, what, &pw));
    SET(pw, what, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    SET(pw, what, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    if (axis >= 0) SET(pw, what, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
    FINALIZE(pw, what);
    ATTN_TRY(descs_new(g->a, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, opwhat, &op));
    SET(op, opwhat, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, DESC, 1, &pw);
    SET(op, opwhat, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, DESC, 1, &x);
    if (b) SET(op, opwhat, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, DESC, 1, &b);
    if (t) SET(op, opwhat, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, DESC, 1, &t);
    SET(op, opwhat, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, DESC, 1, &y);
    FINALIZE(op, opwhat);
    return add_op(g, op);
}

/* c = a · b, batched over the two leading dimensions, fp32 accumulation.
 * m, n, k (NULL for none): per-batch [B,1,1,1] int32 tensors that override
 * the GEMM's M, N or K (a ragged batch's sequence lengths). */
static int matmul(struct graph *g, const char *name, cudnnBackendDescriptor_t a,
                  cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c,
                  cudnnBackendDescriptor_t m, cudnnBackendDescriptor_t n,
                  cudnnBackendDescriptor_t k)
{
    char what[64], opwhat[64];
    snprintf(what, sizeof what, "matmul descriptor '%s'", name);
    snprintf(opwhat, sizeof opwhat, "matmul operation '%s'", name);
    const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t mm = NULL, op = NULL;
    ATTN_TRY(descs_new(g->a, CUDNN_BACKEND_MATMUL_DESCRIPTOR, what, &mm));
    SET(mm, what, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    FINALIZE(mm, what);
    ATTN_TRY(descs_new(g->a, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, opwhat, &op));
    SET(op, opwhat, CUDNN_ATTR_OPERATION_MATMUL_ADESC, DESC, 1, &a);
    SET(op, opwhat, CUDNN_ATTR_OPERATION_MATMUL_BDESC, DESC, 1, &b);
    SET(op, opwhat, CUDNN_ATTR_OPERATION_MATMUL_CDESC, DESC, 1, &c);
    SET(op, opwhat, CUDNN_ATTR_OPERATION_MATMUL_DESC, DESC, 1, &mm);
    if (m) SET(op, opwhat, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, DESC, 1, &m);
    if (n) SET(op, opwhat, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, DESC, 1, &n);
    if (k) SET(op, opwhat, CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, DESC, 1, &k);
    FINALIZE(op, opwhat);
    return add_op(g, op);
}

/* y = reduce(x) over what y's shape folds: the last dimension (y's is 1), or
 * the heads of each group (y has the K/V heads). */
static int reduction(struct graph *g, const char *name, cudnnReduceTensorOp_t mode,
                     cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y)
{
    char what[64], opwhat[64];
    snprintf(what, sizeof what, "reduction descriptor '%s'", name);
    snprintf(opwhat, sizeof opwhat, "reduction operation '%s'", name);
    const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t rd = NULL, op = NULL;
    ATTN_TRY(descs_new(g->a, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, what, &rd));
    SET(rd, what, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
    SET(rd, what, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    FINALIZE(rd, what);
    ATTN_TRY(descs_new(g->a, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, opwhat, &op));
    SET(op, opwhat, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, DESC, 1, &x);
    SET(op, opwhat, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, DESC, 1, &y);
    SET(op, opwhat, CUDNN_ATTR_OPERATION_REDUCTION_DESC, DESC, 1, &rd);
    FINALIZE(op, opwhat);
    return add_op(g, op);
}

/* y = x viewed with y's dims, strides and type (the backward's transposes). */
static int reshape(struct graph *g, const char *name, cudnnBackendDescriptor_t x,
                   cudnnBackendDescriptor_t y)
{
    char opwhat[64];
    snprintf(opwhat, sizeof opwhat, "reshape operation '%s'", name);
    cudnnBackendDescriptor_t op = NULL;
    ATTN_TRY(descs_new(g->a, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, opwhat, &op));
    SET(op, opwhat, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, DESC, 1, &x);
    SET(op, opwhat, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, DESC, 1, &y);
    FINALIZE(op, opwhat);
    return add_op(g, op);
}

/* ---------------------------------------------- lengths and ragged offsets */

/* The lengths', offsets' and page table's device arrays (a packed batch's
 * lengths and offsets; a cache's lengths and, paged, its table; a dense
 * backward with the padding workaround uses the lengths only), in the
 * workspace from the plan's aux_offset, each 256-byte aligned: the sequence
 * lengths given as Q's and as K/V's ([B] int32), then the ragged offsets of
 * Q, K, V and O ([B+1], int32 or int64), then the page table ([B, pages per
 * sequence] int32; empty unless paged). The two lengths and the four offsets
 * are separate tensors with their own uids, as frontend has them, so each
 * gets its own array; the page table's two tensors (K's and V's) share one. */
enum {
    AUX_SEQ_Q, AUX_SEQ_KV, AUX_RAG_Q, AUX_RAG_K, AUX_RAG_V, AUX_RAG_O, AUX_PAGE_TABLE, AUX_COUNT
};
static const int64_t aux_uid[AUX_COUNT] = {UID_SEQ_LEN_Q, UID_SEQ_LEN_KV, UID_RAG_Q,
                                           UID_RAG_K,     UID_RAG_V,      UID_RAG_O,
                                           UID_PAGE_TABLE_K};

/* Whether the ragged offsets need int64: their last entry is the element
 * count of Q (or of K/V, never larger), which int32 holds up to 2^31 − 1. */
static bool offsets_need_int64(const struct attn_problem *p)
{
    return attn_tensor_elems(p) > (size_t)INT32_MAX || attn_kv_tensor_elems(p) > (size_t)INT32_MAX;
}

/* Fills at[] with each array's offset from the start of the block; returns
 * the block's size. */
static size_t aux_layout(const struct attn_problem *p, bool off64, size_t at[AUX_COUNT])
{
    const size_t batch = (size_t)p->batch, pages = batch * (size_t)attn_pages_per_seq(p);
    const size_t offset_bytes = off64 ? sizeof(int64_t) : sizeof(int32_t);
    size_t used = 0;
    for (int i = 0; i < AUX_COUNT; i++) {
        const size_t n = i < AUX_RAG_Q        ? batch * sizeof(int32_t)
                         : i < AUX_PAGE_TABLE ? (batch + 1) * offset_bytes
                                              : pages * sizeof(int32_t);
        at[i] = used;
        used += (n + 255) / 256 * 256;
    }
    return used;
}

/* Whether the backward takes frontend's padding workaround: cuDNN up to
 * 9.15.0 gets a dense backward whose S is not a multiple of 128 wrong without
 * a padding mask, so frontend adds one with every length S. */
static bool bwd_padding_workaround(const struct attn_problem *p)
{
    return !attn_is_varlen(p) && p->seq_len % 128 != 0 && cudnnGetVersion() <= 91500;
}

/* Whether the forward graph has a causal mask: a decode's single query row
 * needs none (it sees every key of its cache; a shorter cache's end is the
 * padding mask's). */
static bool has_causal_mask(const struct attn_problem *p)
{
    return p->causal && !(attn_is_decode(p) && attn_q_len(p) == 1);
}

/* Whether a decode needs a bottom-right causal diagonal (q_len above 1).
 * It is built from the lengths, as a cache's is: with the shift kv_len −
 * q_len as a by-value scalar added to the row index, cuDNN 9.14's fused
 * engine returned wrong outputs on the H200 (q_len 4 and 8; the error
 * shrinking with kv_len, as if a few keys past the diagonal were seen). */
static bool has_diagonal(const struct attn_problem *p)
{
    return has_causal_mask(p) && attn_is_decode(p);
}

/* Whether p's K and V are a cache given per sequence (the file's header,
 * "Caches"): paged, a decode's with each sequence's own cached length, or
 * a decode with a bottom-right diagonal. Its graph takes the lengths, the
 * padding mask and the lengths' causal mask. */
static bool is_cache(const struct attn_problem *p)
{
    return attn_is_paged(p) || (attn_is_decode(p) && (attn_is_varlen(p) || has_diagonal(p)));
}



/* ---------------------------------------------------- the pattern graphs */

/* What a graph takes besides the I/O tensors: the lengths (seq_len_q/kv,
 * [B,1,1,1] int32) of a graph with a padding mask, the ragged offsets of a
 * packed batch's Q, K, V, O ([B+1,1,1,1]) and a paged cache's page table for
 * K and for V ([B,1,pages per sequence,1] int32); NULL where it has none. */
struct seqs {
    cudnnBackendDescriptor_t q, kv, rag_q, rag_k, rag_v, rag_o, table_k, table_v;
};

static int seq_tensors(struct graph *g, const struct attn_problem *p, bool padded,
                       struct seqs *sq)
{
    memset(sq, 0, sizeof *sq);
    const bool ragged = attn_is_packed(p), off64 = ragged && offsets_need_int64(p);
    if (off64 && cudnnGetVersion() < 90600)
        return ATTN_FAIL(RC_UNSUPPORTED,
                         "ragged offsets past 2^31 elements need int64 offsets, which "
                         "cuDNN takes from 9.6 on; %zu is loaded",
                         cudnnGetVersion());
    const int64_t B = p->batch, lens_d[4] = {B, 1, 1, 1}, offs_d[4] = {B + 1, 1, 1, 1};
    const int64_t *one = g->sh->one;
    if (padded) {
        ATTN_TRY(tensor(g, "seq_len_q", UID_SEQ_LEN_Q, CUDNN_DATA_INT32, lens_d, one, 0, &sq->q));
        ATTN_TRY(tensor(g, "seq_len_kv", UID_SEQ_LEN_KV, CUDNN_DATA_INT32, lens_d, one, 0,
                        &sq->kv));
    }
    if (attn_is_paged(p)) { /* sequence b's pages in order, batch outermost (frontend's layout) */
        const int64_t pps = attn_pages_per_seq(p), table_d[4] = {B, 1, pps, 1};
        const int64_t table_s[4] = {pps, pps, 1, 1};
        ATTN_TRY(tensor(g, "page_table_k", UID_PAGE_TABLE_K, CUDNN_DATA_INT32, table_d, table_s, 0,
                        &sq->table_k));
        ATTN_TRY(tensor(g, "page_table_v", UID_PAGE_TABLE_V, CUDNN_DATA_INT32, table_d, table_s, 0,
                        &sq->table_v));
    }
    if (!ragged) return ATTN_OK;
    const cudnnDataType_t ot = off64 ? CUDNN_DATA_INT64 : CUDNN_DATA_INT32;
    ATTN_TRY(tensor(g, "Q_ragged_offset", UID_RAG_Q, ot, offs_d, one, 0, &sq->rag_q));
    ATTN_TRY(tensor(g, "K_ragged_offset", UID_RAG_K, ot, offs_d, one, 0, &sq->rag_k));
    ATTN_TRY(tensor(g, "V_ragged_offset", UID_RAG_V, ot, offs_d, one, 0, &sq->rag_v));
    ATTN_TRY(tensor(g, "O_ragged_offset", UID_RAG_O, ot, offs_d, one, 0, &sq->rag_o));
    return ATTN_OK;
}

/* frontend's padding_mask(): keep x where row < seq_len_q[b] && col <
 * seq_len_kv[b], else the by-value mask value of the given uid. */
static int padding_mask(struct graph *g, int64_t uid, const struct seqs *sq,
                        cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t *out)
{
    const int64_t *sd = g->sh->sd, *ss = g->sh->ss;
    const cudnnDataType_t i32 = CUDNN_DATA_INT32, bln = CUDNN_DATA_BOOLEAN;
    cudnnBackendDescriptor_t row = NULL, col = NULL, row_ok = NULL, col_ok = NULL;
    cudnnBackendDescriptor_t keep = NULL, value = NULL;
    ATTN_TRY(virtual_tensor(g, "pad_row_index", i32, sd, ss, &row));
    ATTN_TRY(pointwise(g, "gen_row_idx_padding", CUDNN_POINTWISE_GEN_INDEX, i32, 2, x, NULL, NULL,
                       row));
    ATTN_TRY(virtual_tensor(g, "pad_col_index", i32, sd, ss, &col));
    ATTN_TRY(pointwise(g, "gen_col_idx_padding", CUDNN_POINTWISE_GEN_INDEX, i32, 3, x, NULL, NULL,
                       col));
    ATTN_TRY(virtual_tensor(g, "row<seq_len_q", bln, sd, ss, &row_ok));
    ATTN_TRY(pointwise(g, "lt_row_sq_padding", CUDNN_POINTWISE_CMP_LT, bln, -1, row, sq->q, NULL,
                       row_ok));
    ATTN_TRY(virtual_tensor(g, "col<seq_len_kv", bln, sd, ss, &col_ok));
    ATTN_TRY(pointwise(g, "lt_col_skv_padding", CUDNN_POINTWISE_CMP_LT, bln, -1, col, sq->kv, NULL,
                       col_ok));
    ATTN_TRY(virtual_tensor(g, "in_sequence", bln, sd, ss, &keep));
    ATTN_TRY(pointwise(g, "and_row_col_padding", CUDNN_POINTWISE_LOGICAL_AND, bln, -1, row_ok,
                       col_ok, NULL, keep));
    ATTN_TRY(scalar(g, "pad_neg_inf", uid, &value));
    ATTN_TRY(virtual_tensor(g, "S_padded", CUDNN_DATA_FLOAT, sd, ss, out));
    return pointwise(g, "select_padding", CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, -1, x,
                     value, keep, *out);
}

/* Where the causal mask's diagonal lies: top-left (row >= col: a prefill,
 * packed or not) or bottom-right per sequence by seq_len_kv[b] −
 * seq_len_q[b] (a cache, is_cache: every decode with a diagonal). */
enum diagonal { DIAG_TOP_LEFT, DIAG_LENGTHS };

/* frontend's causal mask (a diagonal band with right bound 0): keep x where
 * row >= col (top-left aligned diagonal; ragged: within each sequence, whose
 * rows and columns both start at 0), else the mask value. A decode aligns
 * it bottom-right, as frontend's causal_mask_bottom_right does: with the
 * lengths sq (DIAG_LENGTHS), row + seq_len_kv[b] − seq_len_q[b] >= col in int32, as
 * frontend lowers a bottom-right mask with variable lengths for cuDNN
 * before 9.20 (no diagonal band operation). */
static int causal_mask(struct graph *g, enum diagonal diag, const struct seqs *sq,
                       cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t *out)
{
    const int64_t *sd = g->sh->sd, *ss = g->sh->ss;
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32;
    cudnnBackendDescriptor_t row = NULL, col = NULL, keep = NULL, neg_inf = NULL;
    ATTN_TRY(virtual_tensor(g, "row_index", i32, sd, ss, &row));
    ATTN_TRY(pointwise(g, "gen_row_index", CUDNN_POINTWISE_GEN_INDEX, f32, 2, x, NULL, NULL, row));
    if (diag == DIAG_LENGTHS) {
        cudnnBackendDescriptor_t plus_kv = NULL, shifted = NULL;
        ATTN_TRY(virtual_tensor(g, "row_index+seq_len_kv", i32, sd, ss, &plus_kv));
        ATTN_TRY(pointwise(g, "row_idx_add_skv", CUDNN_POINTWISE_ADD, i32, -1, row, sq->kv, NULL,
                           plus_kv));
        ATTN_TRY(virtual_tensor(g, "row_index+seq_len_kv-seq_len_q", i32, sd, ss, &shifted));
        ATTN_TRY(pointwise(g, "row_idx_add_skv_sub_sq", CUDNN_POINTWISE_SUB, i32, -1, plus_kv,
                           sq->q, NULL, shifted));
        row = shifted;
    }
    ATTN_TRY(virtual_tensor(g, "col_index", i32, sd, ss, &col));
    ATTN_TRY(pointwise(g, "gen_col_index", CUDNN_POINTWISE_GEN_INDEX, f32, 3, x, NULL, NULL, col));
    ATTN_TRY(virtual_tensor(g, "row>=col", CUDNN_DATA_BOOLEAN, sd, ss, &keep));
    ATTN_TRY(pointwise(g, "row_greater_than_col", CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, -1,
                       row, col, NULL, keep));
    ATTN_TRY(scalar(g, "neg_inf", UID_NEG_INF, &neg_inf));
    ATTN_TRY(virtual_tensor(g, "S_masked", f32, sd, ss, out));
    return pointwise(g, "causal_select", CUDNN_POINTWISE_BINARY_SELECT, f32, -1, x, neg_inf, keep,
                     *out);
}

/* The paged load of K or V: y (virtual, as the dense cache would be) from
 * the container (the pages) through the page table, each sequence to its
 * length seq_len_kv[b]. */
static int paged_load(struct graph *g, const char *name, cudnnBackendDescriptor_t container,
                      cudnnBackendDescriptor_t table, cudnnBackendDescriptor_t seq_len_kv,
                      cudnnBackendDescriptor_t y)
{
#if CUDNN_VERSION >= 90500
    char opwhat[64];
    snprintf(opwhat, sizeof opwhat, "paged cache load operation '%s'", name);
    cudnnBackendDescriptor_t op = NULL;
    ATTN_TRY(descs_new(g->a, CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR, opwhat, &op));
    SET(op, opwhat, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_CONTAINER_DESC, DESC, 1, &container);
    SET(op, opwhat, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_PAGE_TABLE_DESC, DESC, 1, &table);
    SET(op, opwhat, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_SEQUENCE_DESC, DESC, 1, &seq_len_kv);
    SET(op, opwhat, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC, DESC, 1, &y);
    FINALIZE(op, opwhat);
    return add_op(g, op);
#else /* cache_refusal() refuses paged points first */
    (void)g, (void)name, (void)container, (void)table, (void)seq_len_kv, (void)y;
    return ATTN_FAIL(RC_UNSUPPORTED, "cuDNN %d.%d headers have no paged cache load (9.5 adds it)",
                     CUDNN_MAJOR, CUDNN_MINOR);
#endif
}

/* The operation graph of g's operations, finalized, into *out. */
static int finish_graph(struct graph *g, cudnnBackendDescriptor_t *out)
{
    const char *what = "operation graph";
    cudnnBackendDescriptor_t graph = NULL;
    ATTN_TRY(descs_new(g->a, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, what, &graph));
    SET(graph, what, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    SET(graph, what, CUDNN_ATTR_OPERATIONGRAPH_OPS, DESC, g->nops, g->ops);
    FINALIZE(graph, what);
    *out = graph;
    return ATTN_OK;
}

static cudnnDataType_t io_type(const struct attn_problem *p)
{
    return p->dtype == ATTN_FP16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
}

/* The forward pattern graph of the file's header comment, finalized, into
 * *out. All its descriptors go to a. */
static int build_graph(struct descs *a, const struct attn_problem *p, bool stats,
                       cudnnBackendDescriptor_t *out)
{
    struct shapes sh;
    shapes_of(p, &sh);
    struct graph g = {.a = a, .sh = &sh, .next_uid = UID_VIRTUAL};
    const bool cache = is_cache(p), paged = attn_is_paged(p);
    const bool padded = attn_is_packed(p) || cache;
    const int64_t *sd = sh.sd, *ss = sh.ss, *rd = sh.rd, *rs = sh.rs;
    const cudnnDataType_t io = io_type(p), f32 = CUDNN_DATA_FLOAT;

    cudnnBackendDescriptor_t q = NULL, k = NULL, v = NULL, o = NULL, scale = NULL, s = NULL;
    cudnnBackendDescriptor_t s_scaled = NULL, last = NULL, mx = NULL, sub = NULL, ex = NULL;
    cudnnBackendDescriptor_t sum = NULL, prob = NULL, k_pages = NULL, v_pages = NULL;
    struct seqs sq; /* padded only: the lengths, the ragged offsets, the page tables */
    ATTN_TRY(seq_tensors(&g, p, padded, &sq));
    ATTN_TRY(tensor_ragged(&g, "Q", UID_Q, io, sh.qd, sh.qs, 0, sq.rag_q, &q));
    if (paged) { /* the pages [pages, page, KV, D] as [pages, KV, page, D]; K^T and V virtual */
        const int64_t KV = attn_kv_heads(p), P = p->page, D = p->head_dim;
        const int64_t pages_d[4] = {(int64_t)p->batch * attn_pages_per_seq(p), KV, P, D};
        const int64_t pages_s[4] = {P * KV * D, D, KV * D, 1};
        ATTN_TRY(tensor(&g, "K_pages", UID_K, io, pages_d, pages_s, 0, &k_pages));
        ATTN_TRY(tensor(&g, "V_pages", UID_V, io, pages_d, pages_s, 0, &v_pages));
        ATTN_TRY(virtual_tensor(&g, "K^T", io, sh.ktd, sh.kts, &k));
        ATTN_TRY(virtual_tensor(&g, "V", io, sh.kd, sh.ks, &v));
    } else {
        ATTN_TRY(tensor_ragged(&g, "K^T", UID_K, io, sh.ktd, sh.kts, 0, sq.rag_k, &k));
        ATTN_TRY(tensor_ragged(&g, "V", UID_V, io, sh.kd, sh.ks, 0, sq.rag_v, &v));
    }
    ATTN_TRY(tensor_ragged(&g, "O", UID_O, io, sh.qd, sh.qs, 0, sq.rag_o, &o));
    ATTN_TRY(scalar(&g, "attn_scale", UID_SCALE, &scale));

    if (paged) ATTN_TRY(paged_load(&g, "paged_k_cache", k_pages, sq.table_k, sq.kv, k));
    /* padded: M = the query rows, N = the key columns of each sequence */
    ATTN_TRY(virtual_tensor(&g, "S", f32, sd, ss, &s));
    ATTN_TRY(matmul(&g, "bmm1 Q.K^T", q, k, s, sq.q, sq.kv, NULL));
    ATTN_TRY(virtual_tensor(&g, "S*scale", f32, sd, ss, &s_scaled));
    ATTN_TRY(pointwise(&g, "attn_scale", CUDNN_POINTWISE_MUL, f32, -1, s, scale, NULL, s_scaled));
    last = s_scaled;
    if (padded) ATTN_TRY(padding_mask(&g, UID_PAD_NEG_INF, &sq, last, &last));
    if (has_causal_mask(p)) {
        ATTN_TRY(causal_mask(&g, cache ? DIAG_LENGTHS : DIAG_TOP_LEFT, &sq, last, &last));
    }

    ATTN_TRY(virtual_tensor(&g, "row_max", f32, rd, rs, &mx));
    ATTN_TRY(reduction(&g, "row_max", CUDNN_REDUCE_TENSOR_MAX, last, mx));
    ATTN_TRY(virtual_tensor(&g, "S-max", f32, sd, ss, &sub));
    ATTN_TRY(pointwise(&g, "sub_max", CUDNN_POINTWISE_SUB, f32, -1, last, mx, NULL, sub));
    ATTN_TRY(virtual_tensor(&g, "exp", f32, sd, ss, &ex));
    ATTN_TRY(pointwise(&g, "exp", CUDNN_POINTWISE_EXP, f32, -1, sub, NULL, NULL, ex));
    ATTN_TRY(virtual_tensor(&g, "row_sum", f32, rd, rs, &sum));
    ATTN_TRY(reduction(&g, "row_sum", CUDNN_REDUCE_TENSOR_ADD, ex, sum));
    /* Stats = max + log(sum), the log-sum-exp a backward pass needs. cuDNN's
     * fused-attention matcher expects these nodes even for inference, where
     * Stats is virtual (measured: without them no engine takes the graph). */
    cudnnBackendDescriptor_t lg = NULL, st = NULL;
    ATTN_TRY(virtual_tensor(&g, "log_sum", f32, rd, rs, &lg));
    ATTN_TRY(pointwise(&g, "log", CUDNN_POINTWISE_LOG, f32, -1, sum, NULL, NULL, lg));
    if (stats)
        ATTN_TRY(tensor(&g, "Stats", UID_STATS, f32, rd, rs, 0, &st));
    else
        ATTN_TRY(virtual_tensor(&g, "Stats", f32, rd, rs, &st));
    ATTN_TRY(pointwise(&g, "stats_add", CUDNN_POINTWISE_ADD, f32, -1, mx, lg, NULL, st));
    /* The second matmul's A operand must be of the I/O type (cuDNN requires it). */
    ATTN_TRY(virtual_tensor(&g, "P", io, sd, ss, &prob));
    ATTN_TRY(pointwise(&g, "softmax_div", CUDNN_POINTWISE_DIV, f32, -1, ex, sum, NULL, prob));
    if (paged) ATTN_TRY(paged_load(&g, "paged_v_cache", v_pages, sq.table_v, sq.kv, v));
    /* padded: M = the query rows, K = the key rows of each sequence */
    ATTN_TRY(matmul(&g, "bmm2 P.V", prob, v, o, sq.q, NULL, sq.kv));
    return finish_graph(&g, out);
}

/* dX = matmul(a, b) for X = K or V (M = the key rows, K = the query rows of
 * each sequence when padded): straight into dx when every query head has its
 * own K/V head, else into H heads (virtual, I/O type) and summed over each
 * group of query heads into dx, as frontend builds grouped-query attention. */
static int grad_kv(struct graph *g, const char *name, const struct attn_problem *p,
                   const struct seqs *sq, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
                   cudnnBackendDescriptor_t dx)
{
    if (attn_kv_heads(p) == p->heads) return matmul(g, name, a, b, dx, sq->kv, NULL, sq->q);
    const int64_t H = p->heads, S = p->seq_len, D = p->head_dim;
    const int64_t full_d[4] = {p->batch, H, S, D}, full_s[4] = {H * S * D, S * D, D, 1};
    cudnnBackendDescriptor_t full = NULL;
    ATTN_TRY(virtual_tensor(g, "d_fullhead", io_type(p), full_d, full_s, &full));
    ATTN_TRY(matmul(g, name, a, b, full, sq->kv, NULL, sq->q));
    return reduction(g, "red_head", CUDNN_REDUCE_TENSOR_ADD, full, dx);
}

/* The backward pattern graph of the file's header comment, finalized, into
 * *out; padded: with the padding mask (ragged, or frontend's workaround). All
 * its descriptors go to a. */
static int build_bwd_graph(struct descs *a, const struct attn_problem *p, bool padded,
                           cudnnBackendDescriptor_t *out)
{
    struct shapes sh;
    shapes_of(p, &sh);
    struct graph g = {.a = a, .sh = &sh, .next_uid = UID_VIRTUAL};
    const int64_t H = p->heads, S = p->seq_len, D = p->head_dim;
    const int64_t *sd = sh.sd, *ss = sh.ss, *rd = sh.rd, *rs = sh.rs;
    const cudnnDataType_t io = io_type(p), f32 = CUDNN_DATA_FLOAT;
    const size_t version = cudnnGetVersion();

    struct seqs sq;
    cudnnBackendDescriptor_t q = NULL, kt = NULL, vt = NULL, o = NULL, dout = NULL, stats = NULL;
    cudnnBackendDescriptor_t dq = NULL, dk = NULL, dv = NULL, scale = NULL, one = NULL;
    ATTN_TRY(seq_tensors(&g, p, padded, &sq));
    ATTN_TRY(tensor_ragged(&g, "Q", UID_Q, io, sh.qd, sh.qs, 0, sq.rag_q, &q));
    ATTN_TRY(tensor_ragged(&g, "K^T", UID_K, io, sh.ktd, sh.kts, 0, sq.rag_k, &kt));
    ATTN_TRY(tensor_ragged(&g, "V^T", UID_V, io, sh.ktd, sh.kts, 0, sq.rag_v, &vt));
    ATTN_TRY(tensor_ragged(&g, "O", UID_O, io, sh.qd, sh.qs, 0, sq.rag_o, &o));
    ATTN_TRY(tensor_ragged(&g, "dO", UID_DO, io, sh.qd, sh.qs, 0, sq.rag_o, &dout));
    ATTN_TRY(tensor(&g, "Stats", UID_STATS, f32, rd, rs, 0, &stats));
    ATTN_TRY(tensor_ragged(&g, "dQ", UID_DQ, io, sh.qd, sh.qs, 0, sq.rag_q, &dq));
    ATTN_TRY(tensor_ragged(&g, "dK", UID_DK, io, sh.kd, sh.ks, 0, sq.rag_k, &dk));
    ATTN_TRY(tensor_ragged(&g, "dV", UID_DV, io, sh.kd, sh.ks, 0, sq.rag_v, &dv));
    ATTN_TRY(scalar(&g, "attn_scale", UID_SCALE, &scale));
    ATTN_TRY(scalar(&g, "one", UID_ONE, &one));

    /* softmax_sum = rowsum(dO ∘ O) · 1 (frontend's strides for dO ∘ O) */
    const int64_t doo_s[4] = {H * S * D, S * D, H * D, 1};
    cudnnBackendDescriptor_t doo = NULL, dsum = NULL, softmax_sum = NULL;
    ATTN_TRY(virtual_tensor(&g, "dO*O", f32, sh.qd, doo_s, &doo));
    ATTN_TRY(pointwise(&g, "mul_dO_O", CUDNN_POINTWISE_MUL, f32, -1, dout, o, NULL, doo));
    ATTN_TRY(virtual_tensor(&g, "rowsum(dO*O)", f32, rd, rs, &dsum));
    ATTN_TRY(reduction(&g, "reduce_dO_o", CUDNN_REDUCE_TENSOR_ADD, doo, dsum));
    ATTN_TRY(tensor(&g, "softmax_sum", UID_SOFTMAX_SUM, f32, rd, rs, 0, &softmax_sum));
    ATTN_TRY(pointwise(&g, "scale_dropout_inv", CUDNN_POINTWISE_MUL, f32, -1, dsum, one, NULL,
                       softmax_sum));

    /* E = exp(S·scale − Stats), masked as the forward masks */
    cudnnBackendDescriptor_t s = NULL, last = NULL, ex = NULL, et = NULL;
    ATTN_TRY(virtual_tensor(&g, "S", f32, sd, ss, &s));
    ATTN_TRY(matmul(&g, "matmul_Q_KT", q, kt, s, sq.q, sq.kv, NULL));
    ATTN_TRY(virtual_tensor(&g, "S*scale", f32, sd, ss, &last));
    ATTN_TRY(pointwise(&g, "mul_s_attn_scale", CUDNN_POINTWISE_MUL, f32, -1, s, scale, NULL, last));
    if (padded) ATTN_TRY(padding_mask(&g, UID_PAD_NEG_INF, &sq, last, &last));
    cudnnBackendDescriptor_t centred = NULL;
    ATTN_TRY(virtual_tensor(&g, "S-Stats", f32, sd, ss, &centred));
    ATTN_TRY(pointwise(&g, "sub_s_m", CUDNN_POINTWISE_SUB, f32, -1, last, stats, NULL, centred));
    last = centred;
    if (padded && version < 91000) /* frontend: the padding value again after the Stats */
        ATTN_TRY(padding_mask(&g, UID_PAD2_NEG_INF, &sq, last, &last));
    if (p->causal) ATTN_TRY(causal_mask(&g, DIAG_TOP_LEFT, &sq, last, &last));
    ATTN_TRY(virtual_tensor(&g, "E", f32, sd, ss, &ex));
    ATTN_TRY(pointwise(&g, "exp_s", CUDNN_POINTWISE_EXP, f32, -1, last, NULL, NULL, ex));

    /* dV = Eᵀ·dO */
    ATTN_TRY(virtual_tensor(&g, "E^T", io, sd, sh.tss, &et));
    ATTN_TRY(reshape(&g, "reshape_p", ex, et));
    ATTN_TRY(grad_kv(&g, "matmul_pT_dO", p, &sq, et, dout, dv));

    /* dS = (dO·Vᵀ − softmax_sum) ∘ E · scale */
    cudnnBackendDescriptor_t dp = NULL, dp_sub = NULL, dp_e = NULL, ds = NULL, dst = NULL;
    ATTN_TRY(virtual_tensor(&g, "dP", f32, sd, ss, &dp));
    ATTN_TRY(matmul(&g, "matmul_dO_VT", dout, vt, dp, sq.q, sq.kv, NULL));
    ATTN_TRY(virtual_tensor(&g, "dP-softmax_sum", f32, sd, ss, &dp_sub));
    ATTN_TRY(pointwise(&g, "sub_dP_softmax_sum", CUDNN_POINTWISE_SUB, f32, -1, dp, softmax_sum,
                       NULL, dp_sub));
    ATTN_TRY(virtual_tensor(&g, "(dP-softmax_sum)*E", f32, sd, ss, &dp_e));
    ATTN_TRY(pointwise(&g, "mul_dP_exp_s", CUDNN_POINTWISE_MUL, f32, -1, dp_sub, ex, NULL, dp_e));
    ATTN_TRY(virtual_tensor(&g, "dS", f32, sd, ss, &ds));
    ATTN_TRY(pointwise(&g, "mul_dS_attn_scale", CUDNN_POINTWISE_MUL, f32, -1, dp_e, scale, NULL,
                       ds));

    /* dK = dSᵀ·Q */
    ATTN_TRY(virtual_tensor(&g, "dS^T", io, sd, sh.tss, &dst));
    ATTN_TRY(reshape(&g, "reshape_dS", ds, dst));
    ATTN_TRY(grad_kv(&g, "matmul_dST_Q", p, &sq, dst, q, dk));

    /* dQ = dS·K, accumulated in fp32 in the workspace, then converted */
    const int64_t acc_s[4] = {H * S * D, S * D, D, 1};
    cudnnBackendDescriptor_t k = NULL, acc = NULL;
    ATTN_TRY(tensor_ragged(&g, "K", g.next_uid++, io, sh.kd, sh.ks, T_VIRTUAL, sq.rag_k, &k));
    ATTN_TRY(reshape(&g, "reshape_k", kt, k));
    ATTN_TRY(tensor(&g, "dQ_accum", UID_DQ_ACCUM, f32, sh.qd, acc_s, 0, &acc));
    ATTN_TRY(matmul(&g, "matmul_dS_K", ds, k, acc, sq.q, NULL, sq.kv));
    ATTN_TRY(pointwise(&g, "identity_dQ", CUDNN_POINTWISE_IDENTITY, f32, -1, acc, NULL, NULL, dq));
    return finish_graph(&g, out);
}

/* ----------------------------------------------------------- engine choice */

/* The cudnn-frontend style tag of an engine config ("eng8_k2=3_k13=1") and
 * whether the engine compiles its kernel at run time. */
static int engine_tag(cudnnBackendDescriptor_t cfg, char *buf, size_t len, bool *rtc)
{
    struct descs tmp = {0};
    cudnnBackendDescriptor_t eng = NULL, knobs[CUDNN_KNOB_TYPE_COUNTS] = {0};
    cudnnBackendBehaviorNote_t notes[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    int64_t n = 0, nknobs = 0, nnotes = 0, index = -1;
    int rc = descs_new(&tmp, CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine", &eng);
    for (int i = 0; rc == ATTN_OK && i < CUDNN_KNOB_TYPE_COUNTS; i++)
        rc = descs_new(&tmp, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, "knob choice", &knobs[i]);
    if (rc == ATTN_OK)
        rc = GET_RC(cfg, "engine config", CUDNN_ATTR_ENGINECFG_ENGINE, DESC, 1, &n, &eng);
    if (rc == ATTN_OK)
        rc = GET_RC(eng, "engine", CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index);
    if (rc == ATTN_OK)
        rc = GET_RC(eng, "engine", CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                    CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &nnotes, notes);
    if (rc == ATTN_OK)
        rc = GET_RC(cfg, "engine config", CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, DESC,
                    CUDNN_KNOB_TYPE_COUNTS, &nknobs, knobs);
    size_t used = (size_t)snprintf(buf, len, "eng%lld", (long long)index);
    for (int64_t i = 0; rc == ATTN_OK && i < nknobs && i < CUDNN_KNOB_TYPE_COUNTS; i++) {
        cudnnBackendKnobType_t type;
        int64_t value = 0;
        rc = GET_RC(knobs[i], "knob choice", CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE,
                    1, &n, &type);
        if (rc == ATTN_OK)
            rc = GET_RC(knobs[i], "knob choice", CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                        CUDNN_TYPE_INT64, 1, &n, &value);
        if (rc == ATTN_OK && used < len)
            used += (size_t)snprintf(buf + used, len - used, "_k%d=%lld", (int)type,
                                     (long long)value);
    }
    *rtc = false;
    for (int64_t i = 0; i < nnotes && i < CUDNN_BEHAVIOR_NOTE_TYPE_COUNT; i++)
        *rtc |= notes[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
    descs_free(&tmp);
    return rc;
}

/* Heuristics (mode A) over the finalized graph, then the first candidate whose
 * execution plan finalizes. On success the plan and the chosen config join a;
 * else RC_UNSUPPORTED when every refusal was "not supported", ATTN_ERR when
 * some other failure occurred, with the first refusals in the message. */
static int choose_engine(struct descs *a, cudnnBackendDescriptor_t graph, const char *graph_name,
                         cudnnBackendDescriptor_t *plan_out, char *tag, size_t tag_len)
{
    const char *what = "engine heuristics (mode A)";
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    cudnnBackendDescriptor_t heur = NULL;
    ATTN_TRY(descs_new(a, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, what, &heur));
    SET(heur, what, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, DESC, 1, &graph);
    SET(heur, what, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    FINALIZE(heur, what);
    int64_t count = 0, got = 0;
    GET(heur, what, CUDNN_ATTR_ENGINEHEUR_RESULTS, DESC, 0, &count, NULL);
    DEBUGF("%s graph: heuristics offer %lld engine config(s)\n", graph_name, (long long)count);
    if (count <= 0)
        return ATTN_FAIL(RC_UNSUPPORTED,
                         "cuDNN heuristics (mode A) offer no engine for the %s graph", graph_name);
    cudnnBackendDescriptor_t *cfgs = calloc((size_t)count, sizeof *cfgs);
    if (!cfgs)
        return ATTN_FAIL(ATTN_ERR, "out of host memory for %lld engine configs", (long long)count);
    int rc = ATTN_OK;
    for (int64_t i = 0; rc == ATTN_OK && i < count; i++)
        rc = descs_new(a, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config", &cfgs[i]);
    if (rc == ATTN_OK)
        rc = GET_RC(heur, what, CUDNN_ATTR_ENGINEHEUR_RESULTS, DESC, count, &got, cfgs);
    if (rc == ATTN_OK && got <= 0) { /* cuDNN dropped every candidate while materializing them */
        char last[400] = "";
        cudnnGetLastErrorString(last, sizeof last);
        free(cfgs);
        DEBUGF("  none of them could be materialized: %s\n", last);
        return ATTN_FAIL(RC_UNSUPPORTED,
                         "cuDNN heuristics (mode A) offer %lld engine config(s) for "
                         "the %s graph, none usable: %s",
                         (long long)count, graph_name, last);
    }

    char refusals[600] = "";
    size_t used = 0;
    bool all_unsupported = true;
    for (int64_t i = 0; rc == ATTN_OK && i < got && i < count; i++) {
        char cand[96];
        bool rtc = false;
        rc = engine_tag(cfgs[i], cand, sizeof cand, &rtc);
        if (rc != ATTN_OK) break;
        cudnnBackendDescriptor_t plan = NULL;
        forget_last_error();
        cudnnStatus_t s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
                                                       &plan);
        if (s == CUDNN_STATUS_SUCCESS)
            s = cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE,
                                         1, &handle);
        if (s == CUDNN_STATUS_SUCCESS)
            s = cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, DESC, 1,
                                         &cfgs[i]);
        if (s == CUDNN_STATUS_SUCCESS) s = cudnnBackendFinalize(plan);
        if (s == CUDNN_STATUS_SUCCESS) {
            DEBUGF("  candidate %lld/%lld %s%s: chosen\n", (long long)i + 1, (long long)got, cand,
                   rtc ? " (runtime-compiled)" : "");
            snprintf(tag, tag_len, "%s cand=%lld/%lld%s", cand, (long long)i + 1, (long long)got,
                     rtc ? " rtc" : "");
            free(cfgs);
            *plan_out = plan;
            return descs_adopt(a, plan);
        }
        char last[300] = "";
        cudnnGetLastErrorString(last, sizeof last);
        DEBUGF("  candidate %lld/%lld %s%s: %s: %s\n", (long long)i + 1, (long long)got, cand,
               rtc ? " (runtime-compiled)" : "", cudnnGetErrorString(s), last);
        all_unsupported &= CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED;
        if (i < 2 && used < sizeof refusals)
            used += (size_t)snprintf(refusals + used, sizeof refusals - used, "%s%s: %s%s%.200s",
                                     i ? "; " : "", cand, cudnnGetErrorString(s),
                                     last[0] ? ": " : "", last);
        if (plan) cudnnBackendDestroyDescriptor(plan);
    }
    free(cfgs);
    if (rc != ATTN_OK) return rc;
    return ATTN_FAIL(all_unsupported ? RC_UNSUPPORTED : ATTN_ERR,
                     "no engine of %lld accepts the %s graph: %s", (long long)got, graph_name,
                     refusals);
}

/* ------------------------------------------------------------------ plans */

enum plan_state { PLAN_READY, PLAN_UNSUPPORTED, PLAN_FAILED };

/* One point's plan: built once, executed by every call of its context. */
struct plan {
    struct attn_problem p; /* what it was built for; the scale is passed at run time */
    enum plan_state state;
    int rc;             /* PLAN_FAILED: the attn_rc to report */
    char why[1024];     /* PLAN_UNSUPPORTED / PLAN_FAILED: cuDNN's reason */
    struct descs descs; /* every descriptor the execution plans rely on */
    cudnnBackendDescriptor_t exec;     /* the forward */
    cudnnBackendDescriptor_t bwd_exec; /* the backward (passes bwd and fwd_bwd), else NULL */
    bool stats; /* the stats graph: Stats go to the workspace at stats_offset */
    bool packed, off64; /* a packed ragged batch; its offsets in int64 (else int32) */
    bool cache;         /* K and V a cache given per sequence (is_cache) */
    bool bwd_padded;    /* the backward has the padding mask (ragged, or the workaround) */
    bool lengths; /* the lengths (and a packed batch's offsets, a paged cache's table) are in
                     the workspace */
    size_t stats_offset, ws_bytes;
    size_t aux_offset, aux_at[AUX_COUNT]; /* the lengths and offsets (aux_layout) */
    size_t dq_accum_offset, softmax_sum_offset; /* the backward's */
    char impl[240]; /* for the row's impl column (attn_set_impl; results.h holds 256) */
    /* set by setup() and the calls */
    float scale, neg_inf, one;
    char *workspace;
    cudnnBackendDescriptor_t pack, bwd_pack; /* variant packs for the pointers below */
    const void *pack_for[4], *bwd_pack_for[8];
};

static void plan_free(struct plan *pl)
{
    if (!pl) return;
    if (pl->pack) cudnnBackendDestroyDescriptor(pl->pack);
    if (pl->bwd_pack) cudnnBackendDestroyDescriptor(pl->bwd_pack);
    descs_free(&pl->descs);
    free(pl);
}

enum graph_kind { GRAPH_INFERENCE, GRAPH_STATS, GRAPH_BACKWARD };
static const char *const graph_name[] = {"inference", "stats", "backward"};

/* Builds one graph and picks its engine: its execution plan into *exec, the
 * plan's workspace size into *ws and the engine's tag into tag. On success
 * everything joins pl->descs. Returns ATTN_OK, RC_UNSUPPORTED or an error. */
static int try_graph(struct plan *pl, enum graph_kind kind, cudnnBackendDescriptor_t *exec,
                     int64_t *ws, char *tag, size_t tag_len)
{
    struct descs tmp = {0};
    cudnnBackendDescriptor_t graph = NULL, plan = NULL;
    int rc = kind == GRAPH_BACKWARD ? build_bwd_graph(&tmp, &pl->p, pl->bwd_padded, &graph)
                                    : build_graph(&tmp, &pl->p, kind == GRAPH_STATS, &graph);
    if (rc == ATTN_OK) rc = choose_engine(&tmp, graph, graph_name[kind], &plan, tag, tag_len);
    int64_t n = 0;
    if (rc == ATTN_OK)
        rc = GET_RC(plan, "execution plan", CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                    CUDNN_TYPE_INT64, 1, &n, ws);
    if (rc != ATTN_OK) {
        descs_free(&tmp);
        return rc;
    }
    ATTN_TRY(descs_move(&pl->descs, &tmp));
    *exec = plan;
    return ATTN_OK;
}

static size_t align256(size_t n) { return (n + 255) / 256 * 256; }

/* The workspace, each part 256-byte aligned: cuDNN's (the larger of the
 * forward's and the backward's: they run one after the other), then Stats
 * [B,H,S,1] fp32 (the stats graph; S the longest sequence when ragged: Stats
 * stay padded), then the lengths and offsets, then the backward's dQ
 * accumulator [B,H,S,D] and softmax_sum [B,H,S,1], both fp32. */
static void layout(struct plan *pl, int64_t cudnn_ws)
{
    const struct attn_problem *p = &pl->p;
    const size_t rows = (size_t)p->batch * p->heads * attn_q_len(p);
    size_t end = (size_t)cudnn_ws;
    pl->stats_offset = align256(end);
    if (pl->stats) end = pl->stats_offset + rows * sizeof(float);
    if (pl->lengths) {
        pl->aux_offset = align256(end);
        end = pl->aux_offset + aux_layout(p, pl->off64, pl->aux_at);
    }
    if (pl->bwd_exec) {
        pl->dq_accum_offset = align256(end);
        end = pl->dq_accum_offset + rows * (size_t)p->head_dim * sizeof(float);
        pl->softmax_sum_offset = align256(end);
        end = pl->softmax_sum_offset + rows * sizeof(float);
    }
    pl->ws_bytes = end;
}

/* "-ragged", "-ragged64", "-padded", "-paged", "-kvlens", "-paged-kvlens" or
 * "": how a graph takes the batch (a cache: paged, with its own lengths). */
static const char *batch_tag(const struct plan *pl, bool padded)
{
    if (pl->cache) {
        const bool paged = attn_is_paged(&pl->p), lens = attn_is_varlen(&pl->p);
        return paged && lens ? "-paged-kvlens" : paged ? "-paged" : "-kvlens";
    }
    return pl->packed ? (pl->off64 ? "-ragged64" : "-ragged") : padded ? "-padded" : "";
}

/* Records why the plan is unusable: not supported when every refusal was
 * cuDNN's "not supported", else failed. */
static void plan_refused(struct plan *pl, bool unsupported, bool oom, const char *why)
{
    pl->state = unsupported ? PLAN_UNSUPPORTED : PLAN_FAILED;
    pl->rc = oom ? ATTN_ERR_OOM : ATTN_ERR;
    snprintf(pl->why, sizeof pl->why, "%s", why);
}

/* Pass fwd: the inference graph, else the stats graph. */
static void plan_forward(struct plan *pl)
{
    char tag[160], first[512], why[1024];
    int64_t ws = 0;
    int rc1 = try_graph(pl, GRAPH_INFERENCE, &pl->exec, &ws, tag, sizeof tag);
    if (rc1 != ATTN_OK) {
        snprintf(first, sizeof first, "%s", attn_error_message());
        DEBUGF("inference graph refused: %s\n", first);
        int rc2 = try_graph(pl, GRAPH_STATS, &pl->exec, &ws, tag, sizeof tag);
        if (rc2 != ATTN_OK) {
            DEBUGF("stats graph refused: %s\n", attn_error_message());
            snprintf(why, sizeof why,
                     "cuDNN rejects this point: inference graph: %.400s | stats graph: %.400s",
                     first, attn_error_message());
            plan_refused(pl, rc1 == RC_UNSUPPORTED && rc2 == RC_UNSUPPORTED,
                         rc1 == ATTN_ERR_OOM || rc2 == ATTN_ERR_OOM, why);
            return;
        }
        pl->stats = true;
    }
    layout(pl, ws);
    snprintf(pl->impl, sizeof pl->impl, "graph=pattern-%s%s engine=%s ws=%lld",
             graph_name[pl->stats ? GRAPH_STATS : GRAPH_INFERENCE], batch_tag(pl, false), tag,
             (long long)ws);
}

/* Passes bwd and fwd_bwd: the stats graph and the backward graph. */
static void plan_training(struct plan *pl)
{
    char tag[160], bwd_tag[160], why[1024];
    int64_t ws = 0, bwd_ws = 0;
    enum graph_kind kind = GRAPH_STATS;
    int rc = try_graph(pl, kind, &pl->exec, &ws, tag, sizeof tag);
    if (rc == ATTN_OK) {
        kind = GRAPH_BACKWARD;
        rc = try_graph(pl, kind, &pl->bwd_exec, &bwd_ws, bwd_tag, sizeof bwd_tag);
    }
    if (rc != ATTN_OK) {
        DEBUGF("%s graph refused: %s\n", graph_name[kind], attn_error_message());
        snprintf(why, sizeof why, "cuDNN rejects this point: %s graph: %.800s", graph_name[kind],
                 attn_error_message());
        plan_refused(pl, rc == RC_UNSUPPORTED, rc == ATTN_ERR_OOM, why);
        return;
    }
    pl->stats = true;
    layout(pl, ws > bwd_ws ? ws : bwd_ws);
    /* cut short, if need be, to the impl column's size */
    int used = snprintf(pl->impl, sizeof pl->impl, "graph=pattern-stats%s engine=%s ws=%lld",
                        batch_tag(pl, false), tag, (long long)ws);
    if (used > 0 && (size_t)used < sizeof pl->impl)
        snprintf(pl->impl + used, sizeof pl->impl - (size_t)used,
                 " bwd=pattern-backward%s engine=%s ws=%lld", batch_tag(pl, pl->bwd_padded),
                 bwd_tag, (long long)bwd_ws);
}

/* The plan for p: for pass fwd the inference graph, else the stats graph;
 * for passes bwd and fwd_bwd the stats graph and the backward graph. Never
 * NULL unless out of host memory; its state says whether it is usable. */
static struct plan *plan_build(const struct attn_problem *p)
{
    struct plan *pl = calloc(1, sizeof *pl);
    if (!pl) return NULL;
    const bool training = p->pass != ATTN_PASS_FWD;
    pl->p = *p;
    pl->neg_inf = -FLT_MAX; /* every mask's value: finite (the header says why) */
    pl->one = 1.0f;
    pl->packed = attn_is_packed(p);
    pl->cache = is_cache(p);
    pl->off64 = pl->packed && offsets_need_int64(p);
    pl->bwd_padded = training && (pl->packed || bwd_padding_workaround(p));
    pl->lengths = pl->packed || pl->cache || pl->bwd_padded;
    attn_error_clear();
    forget_last_error();
    int rc = handle_get();
    if (rc != ATTN_OK) {
        pl->state = PLAN_FAILED;
        pl->rc = rc == RC_UNSUPPORTED ? ATTN_ERR : rc;
        snprintf(pl->why, sizeof pl->why, "%s", attn_error_message());
        return pl;
    }
    if (training)
        plan_training(pl);
    else
        plan_forward(pl);
    if (pl->state == PLAN_READY && debug_on()) {
        char label[ATTN_LABEL_MAX];
        DEBUGF("%s: %s\n", attn_problem_label(p, label, sizeof label), pl->impl);
    }
    return pl;
}

/* The cached plan for p, built (replacing the cached one) when it is not p's. */
static struct plan *plan_for(const struct attn_problem *p)
{
    if (cached && attn_problem_equal(&cached->p, p)) return cached;
    plan_free(cached);
    cached = plan_build(p);
    return cached;
}

/* ------------------------------------------------------------ the variant */

/* Why cuDNN's fused backward cannot run p (frontend's own refusals), or NULL. */
static const char *backward_refusal(const struct attn_problem *p, size_t version, char *why,
                                    size_t len)
{
    if (version == 91000 || version == 91001) {
        snprintf(why, len,
                 "cuDNN %zu.%zu.%zu's fused attention backward has known bugs (frontend "
                 "refuses 9.10.0 and 9.10.1; 9.10.2 fixes them)",
                 version / 10000, version % 10000 / 100, version % 100);
        return why;
    }
    if (p->seq_len == 1) return "cuDNN's fused attention backward does not take S = 1";
    if (attn_is_varlen(p) && attn_kv_heads(p) != p->heads && version < 90600) {
        snprintf(why, len,
                 "cuDNN %zu.%zu.%zu has no ragged grouped-query backward (9.6 adds it)",
                 version / 10000, version % 10000 / 100, version % 100);
        return why;
    }
    return NULL;
}

/* Why cuDNN cannot run p's cache graph (a paged or ragged cache: is_cache),
 * or NULL: the paged cache load needs 9.5, in the headers built against and
 * in the library loaded; frontend's own refusals (sdpa_support_surface.h):
 * paged head_dim above 128 up to 9.9, a bottom-right causal mask below 9.6
 * unless q_len and kv_len are multiples of 64. */
static const char *cache_refusal(const struct attn_problem *p, size_t version, char *why,
                                 size_t len)
{
    const unsigned major = (unsigned)(version / 10000), minor = (unsigned)(version % 10000 / 100),
                   patch = (unsigned)(version % 100);
    if (attn_is_paged(p) && CUDNN_VERSION < 90500) {
        snprintf(why, len,
                 "a paged cache: cudnn_sdpa was built against cuDNN %d.%d headers, which have no "
                 "paged cache load (9.5 adds it)",
                 CUDNN_MAJOR, CUDNN_MINOR);
        return why;
    }
    if (attn_is_paged(p) && version < 90500) {
        snprintf(why, len,
                 "a paged cache: cuDNN %u.%u.%u is loaded, its paged cache load needs 9.5 or newer",
                 major, minor, patch);
        return why;
    }
    if (attn_is_paged(p) && p->head_dim > 128 && version <= 90900) {
        snprintf(why, len,
                 "a paged cache with head_dim %d: cuDNN %u.%u.%u pages head_dim 128 at most (9.10 "
                 "lifts that)",
                 p->head_dim, major, minor, patch);
        return why;
    }
    const int q = attn_q_len(p);
    if (has_causal_mask(p) && version < 90600 && (q % 64 != 0 || p->seq_len % 64 != 0)) {
        snprintf(why, len,
                 "cuDNN %u.%u.%u aligns a causal mask bottom-right only when q_len and kv_len are "
                 "multiples of 64 (9.6 lifts that)",
                 major, minor, patch);
        return why;
    }
    return NULL;
}

static const char *cudnn_supports(const struct attn_problem *p, const struct device_info *dev)
{
    static char why[320];
    if (!dev->present) return "no CUDA device";
    if (dev->cc_major < 8) {
        snprintf(why, sizeof why, "cuDNN's fused attention needs sm_80 or newer, this is sm_%d%d",
                 dev->cc_major, dev->cc_minor);
        return why;
    }
    size_t v = cudnnGetVersion();
    if (v < 90000) {
        snprintf(why, sizeof why, "cuDNN %zu.%zu.%zu is loaded; cudnn_sdpa needs 9.0 or newer",
                 v / 10000, v % 10000 / 100, v % 100);
        return why;
    }
    if (p->dtype != ATTN_BF16 && p->dtype != ATTN_FP16) return "only bf16 and fp16";
    if (attn_is_varlen(p) && attn_varlen_check(p) != ATTN_OK) {
        snprintf(why, sizeof why, "%s", attn_error_message());
        return why;
    }
    if (is_cache(p)) {
        const char *refusal = cache_refusal(p, v, why, sizeof why);
        if (refusal) return refusal;
    }
    if (attn_is_packed(p)) {
        /* frontend's support surface (sdpa_support_surface.h): THD before
           Hopper only from cuDNN 9.18.1 on */
        if (dev->cc_major < 9 && v < 91801) {
            snprintf(why, sizeof why,
                     "cuDNN %zu.%zu.%zu runs ragged (THD) batches on sm_90 or newer only (9.18.1 "
                     "lifts that), this is sm_%d%d",
                     v / 10000, v % 10000 / 100, v % 100, dev->cc_major, dev->cc_minor);
            return why;
        }
    }
    if (p->pass != ATTN_PASS_FWD) {
        const char *refusal = backward_refusal(p, v, why, sizeof why);
        if (refusal) return refusal;
    }
    struct plan *pl = plan_for(p);
    if (!pl) return "out of host memory for the cuDNN plan";
    /* A failure other than "not supported" is left to setup(): an error row. */
    return pl->state == PLAN_UNSUPPORTED ? pl->why : NULL;
}

static size_t cudnn_workspace_bytes(const struct attn_problem *p)
{
    struct plan *pl = plan_for(p);
    return pl && pl->state == PLAN_READY ? pl->ws_bytes : 0;
}

/* The lengths, a packed batch's offsets and a paged cache's table
 * (aux_layout, in the workspace from aux_offset) onto the device: each
 * sequence's length as seq_len_q and seq_len_kv (S each for a dense batch:
 * the backward's padding workaround; a decode's q_len as seq_len_q, its
 * cached length as seq_len_kv), where each packed sequence starts — cu[b],
 * the tokens before it — in elements: cu[b]·H·D in Q and O, cu[b]·KV·D in K
 * and V, for b = 0 .. B (the last one is where the batch ends), and the page
 * table (attn_page_table's). */
_Static_assert(sizeof(int) == sizeof(int32_t), "the page table is int32 on the device");

static int upload_lengths(struct plan *pl)
{
    const struct attn_problem *p = &pl->p;
    const int64_t B = p->batch, HD = (int64_t)p->heads * p->head_dim;
    const int64_t KVD = (int64_t)attn_kv_heads(p) * p->head_dim;
    const int64_t per_token[AUX_PAGE_TABLE] = {0, 0, HD, KVD, KVD, HD}; /* of each offsets array */
    const size_t *at = pl->aux_at, bytes = pl->ws_bytes - pl->aux_offset;
    int *lens = malloc((size_t)B * sizeof *lens);
    unsigned char *host = calloc(1, bytes);
    if (!lens || !host) {
        free(lens);
        free(host);
        return ATTN_FAIL(ATTN_ERR, "out of host memory for the batch's %lld lengths",
                         (long long)B);
    }
    int rc = attn_seq_lens(p, lens);
    if (rc == ATTN_OK && attn_is_paged(p)) /* straight into the int32 array */
        rc = attn_page_table(p, (int *)(host + at[AUX_PAGE_TABLE]));
    if (rc == ATTN_OK) {
        int32_t *seq_q = (int32_t *)(host + at[AUX_SEQ_Q]);
        int32_t *seq_kv = (int32_t *)(host + at[AUX_SEQ_KV]);
        const bool decode = attn_is_decode(p);
        int64_t cu = 0; /* tokens before sequence b */
        for (int64_t b = 0; b <= B; b++) {
            for (int i = AUX_RAG_Q; pl->packed && i < AUX_PAGE_TABLE; i++) {
                const int64_t off = cu * per_token[i];
                if (pl->off64)
                    ((int64_t *)(host + at[i]))[b] = off;
                else /* fits: offsets_need_int64 said so */
                    ((int32_t *)(host + at[i]))[b] = (int32_t)off;
            }
            if (b < B) { /* self-attention: the same lengths; a decode: its q_len queries */
                seq_q[b] = decode ? attn_q_len(p) : lens[b];
                seq_kv[b] = lens[b];
                cu += lens[b];
            }
        }
        rc = gpu_copy_to_device(pl->workspace + pl->aux_offset, host, bytes, "cudnn_sdpa's lengths and tables");
    }
    free(lens);
    free(host);
    return rc;
}

static int cudnn_setup(void **ctx, const struct attn_problem *p, void *workspace)
{
    struct plan *pl = plan_for(p);
    if (!pl) return ATTN_FAIL(ATTN_ERR, "out of host memory for the cuDNN plan");
    cached = NULL; /* the context owns it now; teardown frees it */
    if (pl->state != PLAN_READY) {
        int rc = pl->state == PLAN_FAILED ? pl->rc : ATTN_ERR;
        attn_fail(rc, __FILE__, __LINE__, "%s", pl->why);
        plan_free(pl);
        return rc;
    }
    if (pl->ws_bytes && !workspace) {
        size_t need = pl->ws_bytes;
        plan_free(pl);
        return ATTN_FAIL(ATTN_ERR, "cudnn_sdpa: no workspace for the %zu bytes it asked for", need);
    }
    pl->scale = p->scale;
    pl->workspace = workspace;
    if (pl->lengths) {
        int rc = upload_lengths(pl);
        if (rc != ATTN_OK) {
            plan_free(pl);
            return rc;
        }
    }
    attn_set_impl("%s", pl->impl);
    *ctx = pl;
    return ATTN_OK;
}

/* A finalized variant pack of n uids and pointers, with the workspace. */
static int new_pack(struct plan *pl, int64_t n, const int64_t *uids, void **ptrs,
                    cudnnBackendDescriptor_t *out)
{
    void *ws = pl->workspace;
    const char *what = "variant pack";
    cudnnBackendDescriptor_t pack = NULL;
    CUDNN_TRY(what, cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    int rc = SET_RC(pack, what, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
    if (rc == ATTN_OK)
        rc = SET_RC(pack, what, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n,
                    ptrs);
    if (rc == ATTN_OK)
        rc = SET_RC(pack, what, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    cudnnStatus_t s = rc == ATTN_OK ? cudnnBackendFinalize(pack) : CUDNN_STATUS_SUCCESS;
    if (s != CUDNN_STATUS_SUCCESS)
        rc = cudnn_fail(s, what, "cudnnBackendFinalize(pack)", __FILE__, __LINE__);
    if (rc != ATTN_OK) {
        cudnnBackendDestroyDescriptor(pack);
        return rc == RC_UNSUPPORTED ? ATTN_ERR : rc;
    }
    *out = pack;
    return ATTN_OK;
}

/* Appends the padding mask's value and the lengths (and a packed batch's
 * offsets, a paged cache's table for K and for V) to a pack's uids and
 * pointers. */
static int64_t pack_lengths(struct plan *pl, int64_t n, int64_t *uids, void **ptrs)
{
    char *aux = pl->workspace + pl->aux_offset;
    uids[n] = UID_PAD_NEG_INF;
    ptrs[n++] = &pl->neg_inf;
    for (int i = 0; i < (pl->packed ? AUX_PAGE_TABLE : AUX_RAG_Q); i++) {
        uids[n] = aux_uid[i];
        ptrs[n++] = aux + pl->aux_at[i];
    }
    if (attn_is_paged(&pl->p)) {
        uids[n] = UID_PAGE_TABLE_K;
        ptrs[n++] = aux + pl->aux_at[AUX_PAGE_TABLE];
        uids[n] = UID_PAGE_TABLE_V;
        ptrs[n++] = aux + pl->aux_at[AUX_PAGE_TABLE];
    }
    return n;
}

/* The forward's variant pack for these pointers, rebuilt only when they change. */
static int make_pack(struct plan *pl, const void *q, const void *k, const void *v, void *o)
{
    const void *now[4] = {q, k, v, o};
    if (pl->pack && !memcmp(now, pl->pack_for, sizeof now)) return ATTN_OK;
    if (pl->pack) cudnnBackendDestroyDescriptor(pl->pack);
    pl->pack = NULL;
    int64_t uids[16] = {UID_Q, UID_K, UID_V, UID_O, UID_SCALE};
    void *ptrs[16] = {(void *)q, (void *)k, (void *)v, o, &pl->scale};
    int64_t n = 5;
    if (has_causal_mask(&pl->p)) {
        uids[n] = UID_NEG_INF;
        ptrs[n++] = &pl->neg_inf;
    }
    if (pl->stats) {
        uids[n] = UID_STATS;
        ptrs[n++] = pl->workspace + pl->stats_offset;
    }
    if (pl->packed || pl->cache) n = pack_lengths(pl, n, uids, ptrs);
    ATTN_TRY(new_pack(pl, n, uids, ptrs, &pl->pack));
    memcpy(pl->pack_for, now, sizeof now);
    return ATTN_OK;
}

/* The backward's variant pack for these pointers, rebuilt only when they change. */
static int make_bwd_pack(struct plan *pl, const void *const now[8])
{
    if (pl->bwd_pack && !memcmp(now, pl->bwd_pack_for, 8 * sizeof *now)) return ATTN_OK;
    if (pl->bwd_pack) cudnnBackendDestroyDescriptor(pl->bwd_pack);
    pl->bwd_pack = NULL;
    char *ws = pl->workspace;
    int64_t uids[24] = {UID_Q,  UID_K,  UID_V,  UID_O,     UID_DO,
                        UID_DQ, UID_DK, UID_DV, UID_SCALE, UID_ONE,
                        UID_STATS, UID_SOFTMAX_SUM, UID_DQ_ACCUM};
    void *ptrs[24] = {(void *)now[0], (void *)now[1], (void *)now[2], (void *)now[3],
                      (void *)now[4], (void *)now[5], (void *)now[6], (void *)now[7],
                      &pl->scale, &pl->one, ws + pl->stats_offset, ws + pl->softmax_sum_offset,
                      ws + pl->dq_accum_offset};
    int64_t n = 13;
    if (pl->p.causal) {
        uids[n] = UID_NEG_INF;
        ptrs[n++] = &pl->neg_inf;
    }
    if (pl->bwd_padded) {
        n = pack_lengths(pl, n, uids, ptrs);
        if (cudnnGetVersion() < 91000) { /* the padding mask again (build_bwd_graph) */
            uids[n] = UID_PAD2_NEG_INF;
            ptrs[n++] = &pl->neg_inf;
        }
    }
    ATTN_TRY(new_pack(pl, n, uids, ptrs, &pl->bwd_pack));
    memcpy(pl->bwd_pack_for, now, 8 * sizeof *now);
    return ATTN_OK;
}

/* Runs an execution plan with its pack on the stream. */
static int execute(cudnnBackendDescriptor_t exec, cudnnBackendDescriptor_t pack,
                   attn_stream_t stream)
{
    cudnnStatus_t s = cudnnSetStream(handle, (cudaStream_t)stream);
    if (s != CUDNN_STATUS_SUCCESS)
        return cudnn_fail(s, "handle", "cudnnSetStream", __FILE__, __LINE__);
    s = cudnnBackendExecute(handle, exec, pack);
    if (s != CUDNN_STATUS_SUCCESS)
        return cudnn_fail(s, "execution plan", "cudnnBackendExecute", __FILE__, __LINE__);
    return ATTN_OK;
}

/* The forward: the inference graph for pass fwd, the stats graph (which
 * keeps the Stats the backward reads) for passes bwd and fwd_bwd. */
static int cudnn_run(void *ctx, const void *q, const void *k, const void *v, void *o,
                     attn_stream_t stream)
{
    struct plan *pl = ctx;
    int rc = make_pack(pl, q, k, v, o);
    if (rc == ATTN_OK) rc = execute(pl->exec, pl->pack, stream);
    return rc == RC_UNSUPPORTED ? ATTN_ERR : rc; /* at run time every failure is an error */
}

static int cudnn_backward(void *ctx, const void *q, const void *k, const void *v, const void *o,
                          const void *dout, void *dq, void *dk, void *dv, attn_stream_t stream)
{
    struct plan *pl = ctx;
    if (!pl->bwd_exec)
        return ATTN_FAIL(ATTN_ERR, "cudnn_sdpa: backward() on a plan of pass %s",
                         attn_pass_name(pl->p.pass));
    const void *const now[8] = {q, k, v, o, dout, dq, dk, dv};
    ATTN_TRY(make_bwd_pack(pl, now));
    if (cudnnGetVersion() < 90600) { /* frontend zeroes the dQ accumulator before 9.6 */
        const struct attn_problem *p = &pl->p;
        const size_t n = (size_t)p->batch * p->heads * p->seq_len * p->head_dim * sizeof(float);
        CUDA_TRY(cudaMemsetAsync(pl->workspace + pl->dq_accum_offset, 0, n, (cudaStream_t)stream));
    }
    int rc = execute(pl->bwd_exec, pl->bwd_pack, stream);
    return rc == RC_UNSUPPORTED ? ATTN_ERR : rc;
}

static void cudnn_teardown(void *ctx) { plan_free(ctx); }

static const struct attn_backward_ops cudnn_sdpa_backward_ops = {
    .forward = cudnn_run, /* a plan of pass bwd or fwd_bwd runs the stats graph */
    .backward = cudnn_backward,
};

const struct attn_variant attn_variant_cudnn_sdpa = {
    .name = "cudnn_sdpa",
    .summary = "cuDNN fused flash attention (backend graph API, heuristics mode A)",
    .fused = true,
    .supports = cudnn_supports,
    .workspace_bytes = cudnn_workspace_bytes,
    .setup = cudnn_setup,
    .run = cudnn_run,
    .teardown = cudnn_teardown,
    .backward = &cudnn_sdpa_backward_ops,
};

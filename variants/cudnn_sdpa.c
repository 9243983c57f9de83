/* cudnn_sdpa.c — the vendor baseline: cuDNN's fused flash-attention forward
 * (what PyTorch's SDPA runs on Hopper), reached through cuDNN's backend
 * (graph) C API, without cudnn-frontend.
 *
 * cuDNN 9.13+ has a single SDPA operation, but before 9.21 it cannot express
 * a causal mask (no causal attribute, no score-modifier subgraph), so both
 * causal and non-causal points use the classic pattern graph that cuDNN's
 * fused-attention engines recognise:
 *
 *     S  = matmul(Q, Kᵀ)                Kᵀ: K viewed as [B,H,D,S] by strides
 *     S' = S · scale                    scale: a by-value float
 *     [ragged: S' = select(row < seq_len_q[b] && col < seq_len_kv[b], S', mask)]
 *     [causal: row = index(S', 2), col = index(S', 3), keep = row >= col,
 *              S' = select(keep, S', mask)]
 *     m = max(S'), e = exp(S' − m), l = sum(e), P = e / l
 *     Stats = m + log(l)                virtual, or written to the workspace
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
 * The inference graph (virtual Stats) is tried first, then the stats graph;
 * the row's `impl` column says which one and which engine ran. A plan is built
 * once per point — by supports(), which turns cuDNN's own rejections into
 * skipped rows with cuDNN's reason — cached for workspace_bytes() and taken
 * over by setup(); run() only executes it on the given stream.
 * ATTN_CUDNN_DEBUG=1 prints every heuristic candidate and the choice. */
#include "../common/attn.h"
#include "../common/errors.h"

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

struct graph {
    struct descs *a;
    cudnnBackendDescriptor_t ops[32];
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

/* y = reduce(x) over the last dimension (y's last dimension is 1). */
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

/* ---------------------------------------------------- ragged batches */

/* A ragged batch's device arrays, in the workspace from the plan's
 * aux_offset, each 256-byte aligned: the sequence lengths given as Q's and as
 * K/V's ([B] int32), then the ragged offsets of Q, K, V and O ([B+1], int32
 * or int64). The two lengths and the four offsets are separate tensors with
 * their own uids, as frontend has them, so each gets its own array. */
enum { AUX_SEQ_Q, AUX_SEQ_KV, AUX_RAG_Q, AUX_RAG_K, AUX_RAG_V, AUX_RAG_O, AUX_COUNT };
static const int64_t aux_uid[AUX_COUNT] = {UID_SEQ_LEN_Q, UID_SEQ_LEN_KV, UID_RAG_Q,
                                           UID_RAG_K,     UID_RAG_V,      UID_RAG_O};

/* Whether the ragged offsets need int64: their last entry is the element
 * count of Q (or of K/V, never larger), which int32 holds up to 2^31 − 1. */
static bool offsets_need_int64(const struct attn_problem *p)
{
    return attn_tensor_elems(p) > (size_t)INT32_MAX || attn_kv_tensor_elems(p) > (size_t)INT32_MAX;
}

/* Fills at[] with each array's offset from the start of the block; returns
 * the block's size. */
static size_t aux_layout(int64_t batch, bool off64, size_t at[AUX_COUNT])
{
    size_t used = 0;
    for (int i = 0; i < AUX_COUNT; i++) {
        const size_t offset_bytes = off64 ? sizeof(int64_t) : sizeof(int32_t);
        const size_t n = i < AUX_RAG_Q ? (size_t)batch * sizeof(int32_t)
                                       : ((size_t)batch + 1) * offset_bytes;
        at[i] = used;
        used += (n + 255) / 256 * 256;
    }
    return used;
}

/* ---------------------------------------------------- the pattern graph */

/* The pattern graph of the file's header comment, finalized, into *out. All
 * its descriptors go to a. */
static int build_graph(struct descs *a, const struct attn_problem *p, bool stats,
                       cudnnBackendDescriptor_t *out)
{
    struct graph g = {.a = a, .next_uid = UID_VIRTUAL};
    const int64_t B = p->batch, H = p->heads, S = p->seq_len, D = p->head_dim;
    const int64_t KV = attn_kv_heads(p); /* grouped K/V heads: K and V carry KV heads, which
                                            cuDNN's fused attention maps to the query heads */
    const bool ragged = attn_is_varlen(p);
    /* Dense: [B, H, S, D] row-major. Ragged: the same dims (S = the longest
       sequence) over packed tokens — a token is H·D (KV·D) elements, a head D
       within it; the batch stride S·H·D is frontend's (its THD tests); where
       each sequence really starts comes from the ragged offsets. */
    const int64_t qs_dense[4] = {H * S * D, S * D, D, 1}, qs_thd[4] = {S * H * D, D, H * D, 1};
    const int64_t ks_dense[4] = {KV * S * D, S * D, 1, D}, ks_thd[4] = {S * KV * D, D, 1, KV * D};
    const int64_t vs_dense[4] = {KV * S * D, S * D, D, 1}, vs_thd[4] = {S * KV * D, D, KV * D, 1};
    const int64_t *qs = ragged ? qs_thd : qs_dense, *vs = ragged ? vs_thd : vs_dense;
    const int64_t *ks = ragged ? ks_thd : ks_dense; /* Kᵀ by strides: K's last two swapped */
    const int64_t qd[4] = {B, H, S, D}, kd[4] = {B, KV, D, S}, vd[4] = {B, KV, S, D};
    const int64_t sd[4] = {B, H, S, S}, ss[4] = {H * S * S, S * S, S, 1};
    const int64_t rd[4] = {B, H, S, 1}, rs[4] = {H * S, S, 1, 1};
    const int64_t one[4] = {1, 1, 1, 1};
    const cudnnDataType_t io = p->dtype == ATTN_FP16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;

    cudnnBackendDescriptor_t q = NULL, k = NULL, v = NULL, o = NULL, scale = NULL, s = NULL;
    cudnnBackendDescriptor_t s_scaled = NULL, last = NULL, mx = NULL, sub = NULL, ex = NULL;
    cudnnBackendDescriptor_t sum = NULL, prob = NULL;
    /* ragged only: the lengths and the ragged offsets (NULL when dense) */
    cudnnBackendDescriptor_t seq_q = NULL, seq_kv = NULL;
    cudnnBackendDescriptor_t rag_q = NULL, rag_k = NULL, rag_v = NULL, rag_o = NULL;
    if (ragged) {
        const bool off64 = offsets_need_int64(p);
        if (off64 && cudnnGetVersion() < 90600)
            return ATTN_FAIL(RC_UNSUPPORTED,
                             "ragged offsets past 2^31 elements need int64 offsets, which "
                             "cuDNN takes from 9.6 on; %zu is loaded",
                             cudnnGetVersion());
        const cudnnDataType_t ot = off64 ? CUDNN_DATA_INT64 : CUDNN_DATA_INT32;
        const int64_t lens_d[4] = {B, 1, 1, 1}, offs_d[4] = {B + 1, 1, 1, 1};
        ATTN_TRY(tensor(&g, "seq_len_q", UID_SEQ_LEN_Q, CUDNN_DATA_INT32, lens_d, one, 0, &seq_q));
        ATTN_TRY(tensor(&g, "seq_len_kv", UID_SEQ_LEN_KV, CUDNN_DATA_INT32, lens_d, one, 0,
                        &seq_kv));
        ATTN_TRY(tensor(&g, "Q_ragged_offset", UID_RAG_Q, ot, offs_d, one, 0, &rag_q));
        ATTN_TRY(tensor(&g, "K_ragged_offset", UID_RAG_K, ot, offs_d, one, 0, &rag_k));
        ATTN_TRY(tensor(&g, "V_ragged_offset", UID_RAG_V, ot, offs_d, one, 0, &rag_v));
        ATTN_TRY(tensor(&g, "O_ragged_offset", UID_RAG_O, ot, offs_d, one, 0, &rag_o));
    }
    ATTN_TRY(tensor_ragged(&g, "Q", UID_Q, io, qd, qs, 0, rag_q, &q));
    ATTN_TRY(tensor_ragged(&g, "K^T", UID_K, io, kd, ks, 0, rag_k, &k));
    ATTN_TRY(tensor_ragged(&g, "V", UID_V, io, vd, vs, 0, rag_v, &v));
    ATTN_TRY(tensor_ragged(&g, "O", UID_O, io, qd, qs, 0, rag_o, &o));
    ATTN_TRY(tensor(&g, "attn_scale", UID_SCALE, f32, one, one, T_BY_VALUE, &scale));

    /* ragged: M = the query rows, N = the key columns of each sequence */
    ATTN_TRY(virtual_tensor(&g, "S", f32, sd, ss, &s));
    ATTN_TRY(matmul(&g, "bmm1 Q.K^T", q, k, s, seq_q, seq_kv, NULL));
    ATTN_TRY(virtual_tensor(&g, "S*scale", f32, sd, ss, &s_scaled));
    ATTN_TRY(pointwise(&g, "attn_scale", CUDNN_POINTWISE_MUL, f32, -1, s, scale, NULL, s_scaled));
    last = s_scaled;

    if (ragged) { /* frontend's padding_mask(): keep row < seq_len_q[b] && col < seq_len_kv[b] */
        cudnnBackendDescriptor_t row = NULL, col = NULL, row_ok = NULL, col_ok = NULL;
        cudnnBackendDescriptor_t keep = NULL, pad_neg_inf = NULL, padded = NULL;
        const cudnnDataType_t i32 = CUDNN_DATA_INT32, bln = CUDNN_DATA_BOOLEAN;
        ATTN_TRY(virtual_tensor(&g, "pad_row_index", i32, sd, ss, &row));
        ATTN_TRY(pointwise(&g, "gen_row_idx_padding", CUDNN_POINTWISE_GEN_INDEX, i32, 2, last,
                           NULL, NULL, row));
        ATTN_TRY(virtual_tensor(&g, "pad_col_index", i32, sd, ss, &col));
        ATTN_TRY(pointwise(&g, "gen_col_idx_padding", CUDNN_POINTWISE_GEN_INDEX, i32, 3, last,
                           NULL, NULL, col));
        ATTN_TRY(virtual_tensor(&g, "row<seq_len_q", bln, sd, ss, &row_ok));
        ATTN_TRY(pointwise(&g, "lt_row_sq_padding", CUDNN_POINTWISE_CMP_LT, bln, -1, row, seq_q,
                           NULL, row_ok));
        ATTN_TRY(virtual_tensor(&g, "col<seq_len_kv", bln, sd, ss, &col_ok));
        ATTN_TRY(pointwise(&g, "lt_col_skv_padding", CUDNN_POINTWISE_CMP_LT, bln, -1, col, seq_kv,
                           NULL, col_ok));
        ATTN_TRY(virtual_tensor(&g, "in_sequence", bln, sd, ss, &keep));
        ATTN_TRY(pointwise(&g, "and_row_col_padding", CUDNN_POINTWISE_LOGICAL_AND, bln, -1, row_ok,
                           col_ok, NULL, keep));
        ATTN_TRY(tensor(&g, "pad_neg_inf", UID_PAD_NEG_INF, f32, one, one, T_BY_VALUE,
                        &pad_neg_inf));
        ATTN_TRY(virtual_tensor(&g, "S_padded", f32, sd, ss, &padded));
        ATTN_TRY(pointwise(&g, "select_padding", CUDNN_POINTWISE_BINARY_SELECT, f32, -1, last,
                           pad_neg_inf, keep, padded));
        last = padded;
    }

    if (p->causal) { /* keep where row >= col (top-left aligned diagonal), else the mask value;
                        ragged: within each sequence, whose rows and columns both start at 0 */
        cudnnBackendDescriptor_t row = NULL, col = NULL, keep = NULL, neg_inf = NULL, masked = NULL;
        ATTN_TRY(virtual_tensor(&g, "row_index", CUDNN_DATA_INT32, sd, ss, &row));
        ATTN_TRY(pointwise(&g, "gen_row_index", CUDNN_POINTWISE_GEN_INDEX, f32, 2, last, NULL, NULL,
                           row));
        ATTN_TRY(virtual_tensor(&g, "col_index", CUDNN_DATA_INT32, sd, ss, &col));
        ATTN_TRY(pointwise(&g, "gen_col_index", CUDNN_POINTWISE_GEN_INDEX, f32, 3, last, NULL, NULL,
                           col));
        ATTN_TRY(virtual_tensor(&g, "row>=col", CUDNN_DATA_BOOLEAN, sd, ss, &keep));
        ATTN_TRY(pointwise(&g, "row_greater_than_col", CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN,
                           -1, row, col, NULL, keep));
        ATTN_TRY(tensor(&g, "neg_inf", UID_NEG_INF, f32, one, one, T_BY_VALUE, &neg_inf));
        ATTN_TRY(virtual_tensor(&g, "S_masked", f32, sd, ss, &masked));
        ATTN_TRY(pointwise(&g, "causal_select", CUDNN_POINTWISE_BINARY_SELECT, f32, -1, last,
                           neg_inf, keep, masked));
        last = masked;
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
    /* ragged: M = the query rows, K = the key rows of each sequence */
    ATTN_TRY(matmul(&g, "bmm2 P.V", prob, v, o, seq_q, NULL, seq_kv));

    const char *what = "operation graph";
    cudnnBackendDescriptor_t graph = NULL;
    ATTN_TRY(descs_new(a, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, what, &graph));
    SET(graph, what, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    SET(graph, what, CUDNN_ATTR_OPERATIONGRAPH_OPS, DESC, g.nops, g.ops);
    FINALIZE(graph, what);
    *out = graph;
    return ATTN_OK;
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

/* One point's plan: built once, executed by every run() of its context. */
struct plan {
    struct attn_problem p; /* what it was built for; the scale is passed at run time */
    enum plan_state state;
    int rc;             /* PLAN_FAILED: the attn_rc to report */
    char why[1024];     /* PLAN_UNSUPPORTED / PLAN_FAILED: cuDNN's reason */
    struct descs descs; /* every descriptor the execution plan relies on */
    cudnnBackendDescriptor_t exec;
    bool stats; /* the stats graph: Stats go to the workspace at stats_offset */
    bool ragged, off64; /* a ragged batch; its offsets in int64 (else int32) */
    size_t stats_offset, ws_bytes;
    size_t aux_offset, aux_at[AUX_COUNT]; /* ragged: the lengths and offsets (aux_layout) */
    char impl[240]; /* for the row's impl column (attn_set_impl; results.h holds 256) */
    /* set by setup() and run() */
    float scale, neg_inf;
    char *workspace;
    cudnnBackendDescriptor_t pack; /* variant pack for pack_for's pointers */
    const void *pack_for[4];
};

static void plan_free(struct plan *pl)
{
    if (!pl) return;
    if (pl->pack) cudnnBackendDestroyDescriptor(pl->pack);
    descs_free(&pl->descs);
    free(pl);
}

/* Builds one graph kind and picks its engine; on success everything joins
 * pl->descs. Returns ATTN_OK, RC_UNSUPPORTED or an error. */
static int try_graph(struct plan *pl, bool stats)
{
    const char *name = stats ? "stats" : "inference";
    struct descs tmp = {0};
    cudnnBackendDescriptor_t graph = NULL, exec = NULL;
    char tag[160];
    int rc = build_graph(&tmp, &pl->p, stats, &graph);
    if (rc == ATTN_OK) rc = choose_engine(&tmp, graph, name, &exec, tag, sizeof tag);
    int64_t ws = 0, n = 0;
    if (rc == ATTN_OK)
        rc = GET_RC(exec, "execution plan", CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                    CUDNN_TYPE_INT64, 1, &n, &ws);
    if (rc != ATTN_OK) {
        descs_free(&tmp);
        return rc;
    }
    ATTN_TRY(descs_move(&pl->descs, &tmp));
    pl->exec = exec;
    pl->stats = stats;
    /* The workspace: cuDNN's, then Stats [B,H,S,1] fp32 (the stats graph; S
       the longest sequence when ragged: Stats stay padded), then a ragged
       batch's lengths and offsets; each part 256-byte aligned. */
    size_t end = (size_t)ws;
    pl->stats_offset = (end + 255) / 256 * 256;
    if (stats)
        end = pl->stats_offset + (size_t)pl->p.batch * pl->p.heads * pl->p.seq_len * sizeof(float);
    if (pl->ragged) {
        pl->aux_offset = (end + 255) / 256 * 256;
        end = pl->aux_offset + aux_layout(pl->p.batch, pl->off64, pl->aux_at);
    }
    pl->ws_bytes = end;
    snprintf(pl->impl, sizeof pl->impl, "graph=pattern-%s%s engine=%s ws=%lld", name,
             !pl->ragged ? "" : pl->off64 ? "-ragged64" : "-ragged", tag, (long long)ws);
    DEBUGF("B=%d H=%d KV=%d S=%d D=%d %s%s%s %s: %s\n", pl->p.batch, pl->p.heads,
           attn_kv_heads(&pl->p), pl->p.seq_len, pl->p.head_dim,
           pl->p.causal ? "causal" : "full", pl->ragged ? " varlen=" : "", pl->p.varlen,
           attn_dtype_name(pl->p.dtype), pl->impl);
    return ATTN_OK;
}

/* The plan for p: the inference graph, else the stats graph. Never NULL
 * unless out of host memory; its state says whether it is usable. */
static struct plan *plan_build(const struct attn_problem *p)
{
    struct plan *pl = calloc(1, sizeof *pl);
    if (!pl) return NULL;
    pl->p = *p;
    pl->neg_inf = -FLT_MAX; /* both masks' value: finite (the header says why) */
    pl->ragged = attn_is_varlen(p);
    pl->off64 = pl->ragged && offsets_need_int64(p);
    attn_error_clear();
    forget_last_error();
    int rc = handle_get();
    if (rc != ATTN_OK) {
        pl->state = PLAN_FAILED;
        pl->rc = rc == RC_UNSUPPORTED ? ATTN_ERR : rc;
        snprintf(pl->why, sizeof pl->why, "%s", attn_error_message());
        return pl;
    }
    char first[512];
    int rc1 = try_graph(pl, false);
    if (rc1 == ATTN_OK) return pl;
    snprintf(first, sizeof first, "%s", attn_error_message());
    DEBUGF("inference graph refused: %s\n", first);
    int rc2 = try_graph(pl, true);
    if (rc2 == ATTN_OK) return pl;
    DEBUGF("stats graph refused: %s\n", attn_error_message());
    bool unsupported = rc1 == RC_UNSUPPORTED && rc2 == RC_UNSUPPORTED;
    pl->state = unsupported ? PLAN_UNSUPPORTED : PLAN_FAILED;
    pl->rc = rc2 == ATTN_ERR_OOM || rc1 == ATTN_ERR_OOM ? ATTN_ERR_OOM : ATTN_ERR;
    snprintf(pl->why, sizeof pl->why,
             "cuDNN rejects this point: inference graph: %.400s | stats graph: %.400s", first,
             attn_error_message());
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
    if (attn_is_varlen(p)) {
        if (attn_varlen_check(p) != ATTN_OK) {
            snprintf(why, sizeof why, "%s", attn_error_message());
            return why;
        }
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

/* n bytes from the host to the device, finished when it returns (a copy
 * from pageable memory may return before its DMA is done: the stream sync
 * waits for it, so that no later stream can read the arrays early). */
static int copy_to_device(void *dst, const void *src, size_t n)
{
    CUDA_TRY(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaStreamSynchronize(0));
    return ATTN_OK;
}

/* A ragged batch's lengths and offsets (aux_layout, at the end of the
 * workspace) into the workspace: each sequence's length as seq_len_q and
 * seq_len_kv, and where it starts — cu[b], the tokens before it — in
 * elements: cu[b]·H·D in Q and O, cu[b]·KV·D in K and V, for b = 0 .. B (the
 * last one is where the batch ends). */
static int upload_ragged(struct plan *pl)
{
    const struct attn_problem *p = &pl->p;
    const int64_t B = p->batch, HD = (int64_t)p->heads * p->head_dim;
    const int64_t KVD = (int64_t)attn_kv_heads(p) * p->head_dim;
    const int64_t per_token[AUX_COUNT] = {0, 0, HD, KVD, KVD, HD}; /* of each offsets array */
    const size_t *at = pl->aux_at, bytes = pl->ws_bytes - pl->aux_offset;
    int *lens = malloc((size_t)B * sizeof *lens);
    unsigned char *host = calloc(1, bytes);
    if (!lens || !host) {
        free(lens);
        free(host);
        return ATTN_FAIL(ATTN_ERR, "out of host memory for the ragged batch's %lld lengths",
                         (long long)B);
    }
    int rc = attn_seq_lens(p, lens);
    if (rc == ATTN_OK) {
        int32_t *seq_q = (int32_t *)(host + at[AUX_SEQ_Q]);
        int32_t *seq_kv = (int32_t *)(host + at[AUX_SEQ_KV]);
        int64_t cu = 0; /* tokens before sequence b */
        for (int64_t b = 0; b <= B; b++) {
            for (int i = AUX_RAG_Q; i < AUX_COUNT; i++) {
                const int64_t off = cu * per_token[i];
                if (pl->off64)
                    ((int64_t *)(host + at[i]))[b] = off;
                else /* fits: offsets_need_int64 said so */
                    ((int32_t *)(host + at[i]))[b] = (int32_t)off;
            }
            if (b < B) {
                seq_q[b] = seq_kv[b] = lens[b]; /* self-attention: the same lengths */
                cu += lens[b];
            }
        }
        rc = copy_to_device(pl->workspace + pl->aux_offset, host, bytes);
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
    if (pl->ragged) {
        int rc = upload_ragged(pl);
        if (rc != ATTN_OK) {
            plan_free(pl);
            return rc;
        }
    }
    attn_set_impl("%s", pl->impl);
    *ctx = pl;
    return ATTN_OK;
}

/* The variant pack for these pointers, rebuilt only when they change. */
static int make_pack(struct plan *pl, const void *q, const void *k, const void *v, void *o)
{
    const void *now[4] = {q, k, v, o};
    if (pl->pack && !memcmp(now, pl->pack_for, sizeof now)) return ATTN_OK;
    if (pl->pack) cudnnBackendDestroyDescriptor(pl->pack);
    pl->pack = NULL;
    int64_t uids[16] = {UID_Q, UID_K, UID_V, UID_O, UID_SCALE};
    void *ptrs[16] = {(void *)q, (void *)k, (void *)v, o, &pl->scale};
    int64_t n = 5;
    if (pl->p.causal) {
        uids[n] = UID_NEG_INF;
        ptrs[n++] = &pl->neg_inf;
    }
    if (pl->stats) {
        uids[n] = UID_STATS;
        ptrs[n++] = pl->workspace + pl->stats_offset;
    }
    if (pl->ragged) { /* the padding mask's value, the lengths and the offsets */
        uids[n] = UID_PAD_NEG_INF;
        ptrs[n++] = &pl->neg_inf;
        for (int i = 0; i < AUX_COUNT; i++) {
            uids[n] = aux_uid[i];
            ptrs[n++] = pl->workspace + pl->aux_offset + pl->aux_at[i];
        }
    }
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
    pl->pack = pack;
    memcpy(pl->pack_for, now, sizeof now);
    return ATTN_OK;
}

static int cudnn_run(void *ctx, const void *q, const void *k, const void *v, void *o,
                     attn_stream_t stream)
{
    struct plan *pl = ctx;
    int rc = make_pack(pl, q, k, v, o);
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    if (rc == ATTN_OK && (s = cudnnSetStream(handle, (cudaStream_t)stream)) != CUDNN_STATUS_SUCCESS)
        rc = cudnn_fail(s, "handle", "cudnnSetStream", __FILE__, __LINE__);
    if (rc == ATTN_OK &&
        (s = cudnnBackendExecute(handle, pl->exec, pl->pack)) != CUDNN_STATUS_SUCCESS)
        rc = cudnn_fail(s, "execution plan", "cudnnBackendExecute", __FILE__, __LINE__);
    return rc == RC_UNSUPPORTED ? ATTN_ERR : rc; /* at run time every failure is an error */
}

static void cudnn_teardown(void *ctx) { plan_free(ctx); }

const struct attn_variant attn_variant_cudnn_sdpa = {
    .name = "cudnn_sdpa",
    .summary = "cuDNN fused flash attention (backend graph API, heuristics mode A)",
    .fused = true,
    .supports = cudnn_supports,
    .workspace_bytes = cudnn_workspace_bytes,
    .setup = cudnn_setup,
    .run = cudnn_run,
    .teardown = cudnn_teardown,
};

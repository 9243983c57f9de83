/* attn.h — the types every part of attnbench shares: the attention problem,
 * the device description, and the ops table each variant exports.
 *
 * Dense batches (varlen ""): Q and O are [batch, heads, seq_len, head_dim],
 * K and V [batch, kv_heads, seq_len, head_dim], row-major, of the problem's
 * dtype. Ragged batches (varlen set): the batch's sequences have lengths
 * lens[0..batch) (attn_seq_lens, each <= seq_len) and are packed one after
 * the other, as FlashAttention's varlen API and cuDNN's ragged tensors take
 * them: Q and O are [tokens, heads, head_dim], K and V [tokens, kv_heads,
 * head_dim], sequence b on rows cu[b] .. cu[b+1]-1 where cu[b] is the sum of
 * the lengths before it; each sequence attends only to itself (causal: to its
 * own earlier tokens). A paged cache (page set, a dense batch): K and V are
 * [pages, page, kv_heads, head_dim], FlashAttention's and vLLM's paged
 * layout, batch·ceil(seq_len / page) pages of `page` tokens; token t of
 * sequence b lies in page table[b·pages_per_seq + t / page], slot t % page,
 * the table a permutation of the pages (attn_page_table), as a serving
 * engine's allocator leaves them; the last page's slots past seq_len are
 * never read. The runner owns those four tensors; a variant owns only the
 * workspace the runner allocates for it (workspace_bytes). */
#ifndef ATTN_H
#define ATTN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cudaStream_t without dragging the CUDA headers into every C file. */
typedef struct CUstream_st *attn_stream_t;

enum attn_dtype { ATTN_BF16 = 0, ATTN_FP16 = 1 };

/* X(ID, "name"): what a row times. fwd: the forward pass (the runs before
 * the key). bwd: the backward alone: dQ, dK and dV from Q, K, V, the output
 * O and the softmax statistics that the variant's own forward saved (run
 * once per buffer set, untimed), and dO. fwd_bwd: the forward and the
 * backward in one timed call, as a training step runs them. */
#define ATTN_PASSES(X) X(FWD, "fwd") X(BWD, "bwd") X(FWD_BWD, "fwd_bwd")
enum attn_pass {
#define ATTN_PASS_ID(id, name) ATTN_PASS_##id,
    ATTN_PASSES(ATTN_PASS_ID)
#undef ATTN_PASS_ID
    ATTN_PASS_COUNT
};
/* "fwd, bwd, fwd_bwd", for the messages that name the choices. */
#define ATTN_PASS_LISTED_ONE(id, name) ", " name
#define ATTN_PASSES_LISTED (&(ATTN_PASSES(ATTN_PASS_LISTED_ONE))[2])

/* Room for attn_problem.varlen's text, its NUL included. */
#define ATTN_VARLEN_MAX 96

struct attn_problem {
    int batch, heads, seq_len, head_dim;
    bool causal;
    enum attn_dtype dtype;
    float scale; /* softmax scale, 1/sqrt(head_dim) unless set otherwise */
    /* K and V heads: query head h reads K/V head h / (heads / kv_heads), so
     * each K/V head serves a group of consecutive query heads (grouped-query
     * attention; 1 = multi-query). Divides heads; 0 means heads (every head
     * its own K and V). Read it through attn_kv_heads(). */
    int kv_heads;
    /* A ragged batch, "" for a dense one: "uniform:F" draws each length
     * uniformly from [max(1, ceil(F·seq_len)), seq_len] with a generator
     * seeded by this text, batch and seq_len (the same lengths in every run,
     * so that the gate compares the same work); "lens:L1+L2+..." lists them
     * (batch is their count, seq_len their maximum). Read the lengths through
     * attn_seq_lens(). */
    char varlen[ATTN_VARLEN_MAX];
    /* The inputs' distribution: 0 draws Q, K and V uniformly from [-1, 1]
     * (`init=uniform`, the runs before the key); a positive value draws
     * them from N(0, init_sigma²) (`init=normal[:SIGMA]`, the convention of
     * FlashAttention's, cuDNN frontend's and tritonbench's benchmarks, and a
     * grid point's default: ATTN_INIT_DEFAULT_SIGMA). */
    float init_sigma;
    /* What the row times (enum attn_pass); 0, the forward, unless set. */
    enum attn_pass pass;
    /* Decode: the queries of each sequence, its last q_len tokens, against
     * all seq_len of its keys (the cache, the new tokens included); causal
     * is aligned bottom-right: query i (0-based) sees keys 0 .. seq_len −
     * q_len + i, as FlashAttention and FlashInfer define it (PyTorch's
     * is_causal aligns top-left). Q and O are [batch, heads, q_len,
     * head_dim]; K and V keep seq_len. 0 means seq_len (a prefill); read it
     * through attn_q_len(). The forward only. With varlen set, varlen
     * gives each sequence's cached length (at least q_len, seq_len the
     * longest; FlashAttention's cache_seqlens): Q and O stay [batch, heads,
     * q_len, head_dim], K and V [batch, kv_heads, seq_len, head_dim] (or
     * paged) with sequence b's first lens[b] tokens its cache, the rest
     * never read; causal aligns each bottom-right on its own length. */
    int q_len;
    /* A paged K/V cache: tokens per page (the layout at the top); 0, the
     * contiguous [batch, kv_heads, seq_len, head_dim]. The forward of a
     * dense batch only. */
    int page;
};

/* The init of a grid point that names none: N(0, 1), the field's
 * convention (README, "The inputs"), so that our numbers sit beside the
 * published ones; a run from before the key reads as uniform. */
#define ATTN_INIT_DEFAULT_SIGMA 1.0f

struct device_info {
    bool present;          /* false: no usable CUDA device; the rest is zero */
    int ordinal;
    char name[256];
    int cc_major, cc_minor;
    int sm_count;
    size_t l2_bytes;
    size_t smem_optin_bytes; /* largest dynamic shared memory per block */
    size_t total_mem_bytes;
};

/* Return codes of every fallible function: 0 is success; negative values say
 * what failed, and attn_error_message() (errors.h) says where and why. */
enum attn_rc {
    ATTN_OK = 0,
    ATTN_ERR = -1,       /* a CUDA/library call or an argument failed */
    ATTN_ERR_OOM = -2,   /* the device ran out of memory */
    ATTN_ERR_INPUT = -3, /* bad input from the user (file, spec, option) */
    ATTN_ERR_INTERRUPTED = -4, /* the user asked to stop (SIGINT/SIGTERM) */
    ATTN_ERR_UNSUPPORTED = -5, /* the variant found at its first call that it cannot run
                                  the point (a framework's backend refused it): skipped */
};

/* One call's device work as a variant's own framework counts it
 * (attn_variant.count_ops); per call. */
struct attn_op_counts {
    double kernels, memcpy, memset;
    double busy_ms; /* the device activities' summed time */
    double span_ms; /* first start to last end */
};

/* Set by the runner's signal handler; long loops check it and stop early. */
extern volatile int attn_interrupted;

struct attn_framework_ops;
struct attn_backward_ops;

struct attn_variant {
    const char *name;    /* short, unique, [a-z0-9_] */
    const char *summary; /* one line for --list */
    /* A fused kernel: at most 2 kernels per call, no copies, no S×S
     * intermediate (the GPU tests hold it to that through the tracer). */
    bool fused;
    /* NULL when the variant can run this problem on this device, else why not. */
    const char *(*supports)(const struct attn_problem *, const struct device_info *);
    /* Device memory the variant needs beyond Q, K, V, O; the runner allocates it. */
    size_t (*workspace_bytes)(const struct attn_problem *);
    int (*setup)(void **ctx, const struct attn_problem *, void *workspace);
    /* Enqueue one forward pass on the stream; never synchronizes. */
    int (*run)(void *ctx, const void *q, const void *k, const void *v, void *o,
               attn_stream_t stream);
    void (*teardown)(void *ctx);

    /* NULL in every C variant: the extra ops of a framework's (attn_framework_ops). */
    const struct attn_framework_ops *framework;
    /* The backward pass (attn_backward_ops); NULL when the variant has none:
     * points of pass bwd and fwd_bwd are then skipped, and the row says so. */
    const struct attn_backward_ops *backward;
};

/* A variant's backward pass. setup() and workspace_bytes() see the point's
 * pass, so that they can keep room for the statistics. dO, dQ, dK and dV
 * have the layouts of O, Q, K and V (attn.h's top). */
struct attn_backward_ops {
    /* Enqueue the forward pass that keeps what the backward needs (the
     * softmax statistics, in the variant's workspace) and writes O. The
     * runner runs it once per buffer set, untimed, before timing bwd; in
     * fwd_bwd it is the timed call's first half. Never synchronizes. */
    int (*forward)(void *ctx, const void *q, const void *k, const void *v, void *o,
                   attn_stream_t stream);
    /* Enqueue one backward pass: dq, dk, dv from q, k, v, o, dout and the
     * statistics the last forward() kept. Never synchronizes. */
    int (*backward)(void *ctx, const void *q, const void *k, const void *v, const void *o,
                    const void *dout, void *dq, void *dk, void *dv, attn_stream_t stream);
};

/* The ops of a variant that runs in a framework which allocates its own
 * output and captures its own graphs: the PyTorch peers (tools/peers/). */
struct attn_framework_ops {
    /* Where the last run() put its output, [batch, heads, seq_len, head_dim]
     * contiguous: validated instead of o. */
    const void *(*output)(void *ctx);
    /* Graph mode: capture one call into the framework's own CUDA graph
     * (replay false), or launch that graph on the stream (replay true); the
     * runner then never stream-captures run(). */
    int (*graph)(void *ctx, const void *q, const void *k, const void *v, void *o,
                 attn_stream_t stream, bool replay);
    /* The ops of one call in a timing mode (enum attn_mode), counted by the
     * framework's own profiler, in place of the runner's tracer. */
    int (*count_ops)(void *ctx, int mode, struct attn_op_counts *out);
    /* Where the last backward put dQ (which 0), dK (1) or dV (2), in Q's
     * and K's layouts, contiguous: validated instead of dq, dk, dv (a
     * framework allocates its gradients). NULL when it has no backward. */
    const void *(*gradient)(void *ctx, int which);
};

/* What a variant chose to run, when it has a choice (a library's graph and
 * engine): its setup() may say so with attn_set_impl(); the runner clears it
 * before setup() and records it in the row's impl column. A side channel
 * like the error message, so that the ops table above keeps its fields. */
void attn_set_impl(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *attn_impl(void); /* "" when the last setup() said nothing */
void attn_impl_clear(void);

const char *attn_dtype_name(enum attn_dtype);
size_t attn_dtype_bytes(enum attn_dtype);
/* 0 and *out set when name is a dtype name, else ATTN_ERR_INPUT. */
int attn_dtype_parse(const char *name, enum attn_dtype *out);

/* Whether the batch is ragged (varlen set). */
bool attn_is_varlen(const struct attn_problem *);
/* The batch's sequence lengths into lens[0..batch): seq_len each for a dense
 * batch. ATTN_ERR_INPUT with a one-line message when varlen is malformed (an
 * unknown distribution, a fraction outside [0, 1], a list that is not
 * batch lengths in 1 .. seq_len with seq_len the longest). */
int attn_seq_lens(const struct attn_problem *, int *lens);
/* What a "L1+L2+..." list holds: the lengths' count, the longest, their sum
 * and sum of squares. */
struct attn_lens_stats {
    long count, longest;
    double sum, sum2;
};
/* Parses a "L1+L2+..." list (the text after "lens:"; the grid's lens=):
 * whole numbers in 1 .. max_len, digits only, joined by '+'. The first cap
 * lengths go to lens[] when it is not NULL, the stats of all of them to *st.
 * ATTN_ERR_INPUT without a message when malformed: callers say what in
 * their own terms. The one parser of such lists. */
int attn_lens_list(const char *list, long max_len, int *lens, long cap, struct attn_lens_stats *st);
/* Checks varlen as attn_seq_lens does, without a buffer. */
int attn_varlen_check(const struct attn_problem *);
/* Tokens of the batch: the lengths' sum (batch·seq_len when dense); 0 when
 * varlen is malformed. */
size_t attn_tokens(const struct attn_problem *);
/* Element count of Q or O: tokens·heads·head_dim (a decode's tokens:
 * batch·q_len). */
size_t attn_tensor_elems(const struct attn_problem *);
/* K and V heads: kv_heads, or heads when it is 0. */
int attn_kv_heads(const struct attn_problem *);
/* Queries per sequence: q_len, or seq_len when it is 0. */
int attn_q_len(const struct attn_problem *);
/* Whether the point is a decode (q_len set below seq_len). */
bool attn_is_decode(const struct attn_problem *);
/* Whether Q, K, V and O are packed one sequence after another (a ragged
 * batch that is not a decode; a decode's varlen gives its cached lengths). */
bool attn_is_packed(const struct attn_problem *);
/* Element count of K or V: tokens·kv_heads·head_dim (paged: every page,
 * pages·page·kv_heads·head_dim). */
size_t attn_kv_tensor_elems(const struct attn_problem *);
/* Whether K and V are a paged cache (page set). */
bool attn_is_paged(const struct attn_problem *);
/* Pages per sequence of a paged cache: ceil(seq_len / page) (0 when not
 * paged); the cache holds batch times as many. */
int attn_pages_per_seq(const struct attn_problem *);
/* The page table, batch·attn_pages_per_seq ints into table: sequence b's
 * pages in order at table[b·pages_per_seq ..], together a permutation of
 * 0 .. pages − 1 drawn with a generator seeded by batch, kv_heads, seq_len
 * and page (the same table in every run and every variant). */
int attn_page_table(const struct attn_problem *, int *table);
/* The element offset of token t of sequence b, K/V head h, in K or V (its
 * first of head_dim), dense or paged; table: attn_page_table's (NULL when
 * not paged). */
size_t attn_kv_offset(const struct attn_problem *, const int *table, int b, int h, int t);
/* FLOPs of the problem's pass: the forward's 4·H·L²·D summed over the
 * sequences (L = S each when dense), halved when causal (a decode's
 * 4·B·H·q·S·D, causal 4·B·H·(q·S − q²/2)·D: the keys its queries see,
 * counted as a prefill's half is); the backward
 * counts 2.5 times the forward's (its five GEMMs against the forward's two:
 * the field's convention, FlashAttention's and cuDNN's benchmarks), fwd_bwd
 * 3.5 times. */
double attn_flops(const struct attn_problem *);
/* Bytes the math must move over the batch's tokens (K, V, dK, dV at
 * kv_heads; the statistics, one float per query row and head). The forward
 * reads Q, K, V once and writes O (an inference forward keeps no
 * statistics); the backward reads Q, K, V, O, dO and the statistics and
 * writes dQ, dK, dV; fwd_bwd moves both, and its forward writes the
 * statistics. */
double attn_bytes(const struct attn_problem *);
/* workspace_bytes for a variant that needs none. */
size_t attn_no_workspace(const struct attn_problem *);
/* The rates of a call of `ms` milliseconds: attn_flops and attn_bytes over
 * its time, in TFLOP/s and GB/s (the same counts for every variant). */
double attn_tflops(const struct attn_problem *, double ms);
double attn_gbps(const struct attn_problem *, double ms);
/* "B=4 H=16 S=4096 D=128 causal" (KV=n added when kv_heads is not heads,
 * Q=n for a decode, page=n when paged, varlen=... when ragged, the dtype when not bf16,
 * init=... when not the default, the pass when not fwd) into buf;
 * ATTN_LABEL_MAX bytes hold any. */
#define ATTN_LABEL_MAX (144 + ATTN_VARLEN_MAX)
const char *attn_problem_label(const struct attn_problem *, char *buf, size_t len);
/* The init key's text: "uniform", "normal" (sigma 1) or "normal:SIGMA"
 * (%g), into buf (ATTN_INIT_MAX bytes hold any); the one spelling every
 * writer uses. attn_init_parse reads it back (and only it, once
 * canonical: "normal:1" is refused in favour of "normal") into *sigma;
 * ATTN_ERR_INPUT without a message when malformed or SIGMA is not in
 * (0, 1000]. */
#define ATTN_INIT_MAX 24
const char *attn_init_name(float sigma, char *buf, size_t len);
int attn_init_parse(const char *text, float *sigma);
/* The pass's name ("fwd", "bwd", "fwd_bwd"); attn_pass_parse reads one
 * back: ATTN_ERR_INPUT without a message when text names none. */
const char *attn_pass_name(enum attn_pass);
int attn_pass_parse(const char *text, enum attn_pass *out);
/* Whether a and b are the same point: batch, heads, K/V heads, seq_len,
 * head_dim, causal, dtype, varlen, init, pass and q_len all equal (the
 * scale is derived, not compared). */
bool attn_problem_equal(const struct attn_problem *a, const struct attn_problem *b);

#ifdef __cplusplus
}
#endif
#endif

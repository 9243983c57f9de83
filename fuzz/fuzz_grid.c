/* fuzz_grid.c — libFuzzer target: the grid parser (common/grid.c; syntax in
 * common/grid.h).
 *
 * Input: grid text. It goes through the three ways the runner reads a grid:
 *   1. the whole input as one spec (a NUL-terminated copy, as --point
 *      passes it): grid_add_spec();
 *   2. each line of it as a spec, into one grid: grid_add_spec() per line;
 *   3. the input as a grid file (written to this process's scratch
 *      directory): grid_add_file().
 * Every grid's points are labelled (attn_problem_label) and the grid freed.
 *
 * Invariants checked besides memory safety and UB: a rejection leaves an
 * error message; a spec that fails adds no point (grid.c: "all or
 * nothing"); every point has batch, heads, seq_len, head_dim >= 1, a known
 * dtype, K/V heads dividing heads and a well-formed varlen (its lengths fit
 * batch and seq_len), and no two points of a grid are the same (all eight
 * fields compared, independently of grid.c's index); where grid.h
 * defines them, at most GRID_MAX_POINTS points and none past
 * GRID_MAX_TENSOR_ELEMS elements. */
#include "../common/errors.h"
#include "../common/grid.h"
#include "fuzz_common.h"

#include <stdbool.h>
#include <string.h>

static char path[256];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_path(path, sizeof path, "input.grid");
    return 0;
}

/* Not instrumented for coverage: the harness's own checking is no edge worth
 * finding, and its traced compares cost more than the grid code itself. */
#define FUZZ_NO_COVERAGE __attribute__((no_sanitize("coverage")))

/* K/V heads as the grid means them: 0 is heads. */
FUZZ_NO_COVERAGE static int kv_of(const struct attn_problem *p) { return p->kv_heads ? p->kv_heads : p->heads; }

/* The same point: every key the grid sets (attn_problem_equal: q_len, the
 * page, the pass and the inputs' distribution too). */
FUZZ_NO_COVERAGE static bool same_point(const struct attn_problem *a, const struct attn_problem *b)
{
    return attn_problem_equal(a, b);
}

/* A hash of some of the keys (equal points hash alike; those it leaves out
 * only share buckets). */
FUZZ_NO_COVERAGE static uint64_t point_key(const struct attn_problem *p)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    const uint64_t f[7] = {(uint32_t)p->batch, (uint32_t)p->heads, (uint32_t)kv_of(p), (uint32_t)p->seq_len,
                           (uint32_t)p->head_dim, (uint64_t)p->causal, (uint64_t)p->dtype};
    for (int i = 0; i < 7; i++) {
        h = (h ^ f[i]) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
    }
    for (const char *c = p->varlen; *c; c++) {
        h = (h ^ (unsigned char)*c) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
    }
    return h;
}

/* Index + 1 of a point equal to an earlier one, 0 when all differ: a hash
 * set of our own (linear probing), independent of grid.c's index. */
FUZZ_NO_COVERAGE static size_t first_duplicate(const struct grid *g)
{
    size_t cap = 64;
    while (cap < 2 * g->count) cap *= 2;
    size_t *set = calloc(cap, sizeof *set), dup = 0;
    if (!set) return 0;
    for (size_t i = 0; i < g->count && !dup; i++) {
        size_t j = (size_t)point_key(&g->points[i]) & (cap - 1);
        while (set[j] && !same_point(&g->points[set[j] - 1], &g->points[i])) j = (j + 1) & (cap - 1);
        if (set[j]) dup = i + 1;
        else set[j] = i + 1;
    }
    free(set);
    return dup;
}

FUZZ_NO_COVERAGE static void check_points(const struct grid *g)
{
    char label[ATTN_LABEL_MAX];
#ifdef GRID_MAX_POINTS
    if (g->count > GRID_MAX_POINTS) {
        fprintf(stderr, "fuzz_grid: %zu points, past GRID_MAX_POINTS\n", g->count);
        abort();
    }
#endif
    for (size_t i = 0; i < g->count; i++) {
        const struct attn_problem *p = &g->points[i];
        if (p->batch < 1 || p->heads < 1 || p->seq_len < 1 || p->head_dim < 1 ||
            (p->dtype != ATTN_BF16 && p->dtype != ATTN_FP16) || p->heads % kv_of(p) != 0 ||
            attn_varlen_check(p) != ATTN_OK) {
            fprintf(stderr, "fuzz_grid: point %zu out of range: %s\n", i,
                    attn_problem_label(p, label, sizeof label));
            abort();
        }
#ifdef GRID_MAX_TENSOR_ELEMS
        if (attn_tensor_elems(p) > (size_t)GRID_MAX_TENSOR_ELEMS) {
            fprintf(stderr, "fuzz_grid: point %zu past GRID_MAX_TENSOR_ELEMS: %s\n", i,
                    attn_problem_label(p, label, sizeof label));
            abort();
        }
#endif
        if (i < 1000) (void)attn_problem_label(p, label, sizeof label); /* same code for all */
    }
    size_t dup = first_duplicate(g);
    if (dup) {
        fprintf(stderr, "fuzz_grid: the point %s is in the grid twice\n",
                attn_problem_label(&g->points[dup - 1], label, sizeof label));
        abort();
    }
}

static void add_spec(struct grid *g, const char *spec, const char *where)
{
    size_t before = g->count;
    attn_error_clear();
    int rc = grid_add_spec(g, spec, where);
    if (rc != ATTN_OK) {
        if (!attn_error_message()[0]) {
            fprintf(stderr, "fuzz_grid: grid_add_spec failed (%d) without a message\n", rc);
            abort();
        }
        if (g->count != before) {
            fprintf(stderr, "fuzz_grid: a failed spec added %zu point(s)\n", g->count - before);
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';

    struct grid g = {0};
    add_spec(&g, copy, "fuzz");
    check_points(&g);
    grid_free(&g);

    /* line by line, into one grid; split at '\n' (each line NUL-terminated
     * in place: the copy is ours) */
    char *line = copy, *end = copy + size;
    int lineno = 0;
    while (line <= end) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        if (nl) *nl = '\0';
        char where[32];
        snprintf(where, sizeof where, "fuzz:%d", ++lineno);
        add_spec(&g, line, where);
        if (!nl) break;
        line = nl + 1;
    }
    check_points(&g);
    grid_free(&g);
    free(copy);

    fuzz_write(path, data, size);
    attn_error_clear();
    int rc = grid_add_file(&g, path);
    if (rc != ATTN_OK && !attn_error_message()[0]) {
        fprintf(stderr, "fuzz_grid: grid_add_file failed (%d) without a message\n", rc);
        abort();
    }
    check_points(&g);
    grid_free(&g);
    return 0;
}

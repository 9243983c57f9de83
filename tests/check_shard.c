/* check_shard.c — splitting a sweep into shards (bench/shard.c, Check): the
 * plan puts every point × variant in exactly one shard for N = 1 … 64, the
 * shards' predicted times are within 10% of each other on the default grid
 * for N <= 8, the plan is the same every time; `attnbench --dry-run`
 * (no GPU) prints each shard's rows, and their union is the sweep, each
 * row once; --shard refuses what is not I/N. Run from the repository root. */
#include "../bench/options.h"
#include "../bench/shard.h"
#include "../common/errors.h"
#include "testutil.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ck_assert_message_has(needle)                                             \
    ck_assert_msg(strstr(attn_error_message(), (needle)) != NULL,                 \
                  "error message \"%s\" does not mention \"%s\"",                 \
                  attn_error_message(), (needle))

/* The default sweep as make bench runs it. */
static void default_sweep(struct options *o)
{
    char *argv[] = {"attnbench", "--grid", "default", "--mode", "cold,graph", "--warm-ms", "500", NULL};
    ck_assert_int_eq(options_parse(o, 7, argv), ATTN_OK);
}

START_TEST(test_every_unit_in_one_shard)
{
    struct options o;
    default_sweep(&o);
    const size_t units = o.grid.count * (size_t)o.nvariants;
    for (int n = 1; n <= 64; n++) {
        int *assign;
        double loads[64];
        ck_assert_int_eq(shard_plan(&o, n, &assign, loads), ATTN_OK);
        int per[65] = {0};
        for (size_t u = 0; u < units; u++) {
            ck_assert_msg(assign[u] >= 1 && assign[u] <= n, "N=%d: unit %zu in shard %d", n, u, assign[u]);
            per[assign[u]]++;
        }
        int total = 0;
        for (int s = 1; s <= n; s++) total += per[s];
        ck_assert_int_eq(total, (int)units); /* each unit once: assign holds one shard per unit */
        if ((size_t)n <= units)
            for (int s = 1; s <= n; s++) ck_assert_msg(per[s] > 0, "N=%d: shard %d is empty", n, s);
        free(assign);
    }
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_balanced_for_up_to_8)
{
    struct options o;
    default_sweep(&o);
    for (int n = 2; n <= 8; n++) {
        int *assign;
        double loads[8], sum = 0, max = 0, min = 1e300;
        ck_assert_int_eq(shard_plan(&o, n, &assign, loads), ATTN_OK);
        for (int s = 0; s < n; s++) {
            sum += loads[s];
            max = loads[s] > max ? loads[s] : max;
            min = loads[s] < min ? loads[s] : min;
        }
        ck_assert_msg(max <= 1.10 * sum / n, "N=%d: the largest shard %.0f ms over 110%% of the mean %.0f", n,
                      max, sum / n);
        ck_assert_msg(max <= 1.10 * min, "N=%d: shards %.0f … %.0f ms, more than 10%% apart", n, min, max);
        free(assign);
    }
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_plan_is_deterministic)
{
    struct options o;
    default_sweep(&o);
    const size_t units = o.grid.count * (size_t)o.nvariants;
    int *a, *b;
    ck_assert_int_eq(shard_plan(&o, 7, &a, NULL), ATTN_OK);
    ck_assert_int_eq(shard_plan(&o, 7, &b, NULL), ATTN_OK);
    ck_assert_int_eq(memcmp(a, b, units * sizeof *a), 0);
    free(a);
    free(b);
    grid_free(&o.grid);
}
END_TEST

/* The eager variants' rows at large S cost more than the fused ones'. */
START_TEST(test_cost_follows_the_work)
{
    struct options o;
    default_sweep(&o);
    const struct attn_problem small = {.batch = 32, .heads = 16, .seq_len = 512, .head_dim = 128},
                              large = {.batch = 1, .heads = 16, .seq_len = 16384, .head_dim = 128};
    const struct attn_variant *naive = NULL, *fused = NULL;
    for (int v = 0; v < o.nvariants; v++) {
        if (!strcmp(o.variants[v]->name, "naive")) naive = o.variants[v];
        if (!strcmp(o.variants[v]->name, "flash_mma")) fused = o.variants[v];
    }
    ck_assert_ptr_nonnull(naive);
    ck_assert_ptr_nonnull(fused);
    ck_assert(shard_row_cost_ms(&large, naive, MODE_COLD, &o.rule) > shard_row_cost_ms(&large, fused, MODE_COLD, &o.rule));
    ck_assert(shard_row_cost_ms(&large, fused, MODE_COLD, &o.rule) > shard_row_cost_ms(&small, fused, MODE_COLD, &o.rule));
    ck_assert(shard_row_cost_ms(&large, naive, MODE_COLD, &o.rule) <= o.rule.warm_ms + o.rule.budget_ms + 100);
    grid_free(&o.grid);
}
END_TEST

START_TEST(test_shard_parse)
{
    int i, n;
    ck_assert_int_eq(shard_parse("3/8", &i, &n), ATTN_OK);
    ck_assert_int_eq(i, 3);
    ck_assert_int_eq(n, 8);
    static const char *const bad[] = {"", "3", "3/", "/8", "0/8", "9/8", "3/0", "1/1025", "a/b", "3/8x", "-1/4"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ck_assert_msg(shard_parse(bad[k], &i, &n) == ATTN_ERR_INPUT, "'%s' accepted", bad[k]);
        ck_assert_message_has("--shard");
    }
}
END_TEST

/* attnbench --dry-run --shard I/N for every I: the union is the unsharded
 * dry run, each row once (sorted line sets compared). */
START_TEST(test_dry_run_shards_cover_the_sweep)
{
    const char *bin = tool_path("attnbench");
    const char *sweep = "--grid default --mode cold,graph --warm-ms 500";
    for (int n = 1; n <= 8; n *= 2) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "set -e; all=$(%s --dry-run %s | tail -n +2 | cut -d, -f1-8 | sort); "
                 "parts=$(for i in $(seq 1 %d); do %s --dry-run --shard $i/%d %s | tail -n +2 | cut -d, -f1-8; done | sort); "
                 "[ \"$all\" = \"$parts\" ] && [ $(echo \"$all\" | wc -l) = 250 ] && "
                 "[ -z \"$(echo \"$parts\" | uniq -d)\" ]",
                 bin, sweep, n, bin, n, sweep);
        ck_assert_msg(system(cmd) == 0, "N=%d: the shards' rows are not the sweep's, each once", n);
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --dry-run --shard 3/8 --point 'batch=1 heads=2 seq=64 dim=64' | head -n 1 | "
                              "grep -qx 'variant,dtype,batch,heads,seq_len,head_dim,causal,mode,shard,cost'", bin);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s --dry-run --shard 9/8 2>&1 | grep -q 'needs 1 <= I <= N'", bin);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *shard_suite(void)
{
    Suite *s = suite_create("shard");
    TCase *tc = tcase_create("plan");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_every_unit_in_one_shard);
    tcase_add_test(tc, test_balanced_for_up_to_8);
    tcase_add_test(tc, test_plan_is_deterministic);
    tcase_add_test(tc, test_cost_follows_the_work);
    tcase_add_test(tc, test_shard_parse);
    tcase_add_test(tc, test_dry_run_shards_cover_the_sweep);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(shard_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* check_shard.c — splitting a sweep into shards (bench/scale/shard.c, Check): the
 * plan puts every point × variant in exactly one shard for N = 1 … 64, the
 * shards' predicted times are within 10% of each other on the default grid
 * for N <= 8, the plan is the same every time; `attnbench --dry-run`
 * (no GPU) prints each shard's rows, and their union is the sweep, each
 * row once; --shard refuses what is not I/N; build/merge joins the shards'
 * parts into one run, refuses what would corrupt it (other GPUs, other
 * revisions unless --mix-revisions, a row twice or unplanned, a run that does
 * not read back) and then writes nothing, and replaces an earlier merge with
 * rows missing only once it has passed (tests/merge_parts.sh cuts the parts
 * from a committed H200 run); bench/scale/multi_gpu.sh starts a shard per GPU
 * and merges them (tests/fake_shard.sh stands in for attnbench, a made-up
 * nvidia-smi for the GPUs). Row counts come from the registry and the grid,
 * or from the plan the parts were cut for, never from a literal. Run from
 * the repository root. */
#include "../bench/options.h"
#include "../bench/scale/shard.h"
#include "../common/errors.h"
#include "../common/results_read.h"
#include "testutil.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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

/* The eager variants' rows at large S cost more than the fused ones', a
 * larger point more than a smaller one (graph mode), and a short cold call
 * is predicted at the sample cap. */
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
    ck_assert(shard_row_cost_ms(&large, fused, MODE_GRAPH, &o.rule) > shard_row_cost_ms(&small, fused, MODE_GRAPH, &o.rule));
    /* a short call's cold row is predicted at the sample cap (it rarely
     * converges), a long one's at the stop rule's minimums */
    const struct attn_problem tiny = {.batch = 1, .heads = 1, .seq_len = 64, .head_dim = 64};
    ck_assert(shard_row_cost_ms(&tiny, fused, MODE_COLD, &o.rule) > o.rule.budget_ms / 2);
    ck_assert(shard_row_cost_ms(&large, fused, MODE_COLD, &o.rule) < o.rule.warm_ms + 200);
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
 * dry run, each row once (sorted line sets compared), and it holds every
 * point x variant x mode of the sweep as options_parse reads it. */
START_TEST(test_dry_run_shards_cover_the_sweep)
{
    const char *bin = tool_path("attnbench");
    const char *sweep = "--grid default --mode cold,graph --warm-ms 500";
    struct options o;
    default_sweep(&o);
    const size_t rows = o.grid.count * (size_t)o.nvariants * (size_t)o.nmodes;
    grid_free(&o.grid);
    ck_assert_uint_gt(rows, 0);
    for (int n = 1; n <= 8; n *= 2) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "set -e; all=$(%s --dry-run %s | tail -n +2 | cut -d, -f1-14 | sort); "
                 "parts=$(for i in $(seq 1 %d); do %s --dry-run --shard $i/%d %s | tail -n +2 | cut -d, -f1-14; done | sort); "
                 "[ \"$all\" = \"$parts\" ] && [ $(echo \"$all\" | wc -l) = %zu ] && "
                 "[ -z \"$(echo \"$parts\" | uniq -d)\" ]",
                 bin, sweep, n, bin, n, sweep, rows);
        ck_assert_msg(system(cmd) == 0, "N=%d: the shards' rows are not the sweep's, each once", n);
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --dry-run --shard 3/8 --point 'batch=1 heads=2 seq=64 dim=64' | head -n 1 | "
                              "grep -qx 'variant,dtype,batch,heads,kv_heads,seq_len,q_len,head_dim,causal,varlen,page,init,pass,mode,regime,shard,cost'", bin);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s --dry-run --shard 9/8 2>&1 | grep -q 'needs 1 <= I <= N'", bin);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The build directory tests/merge_parts.sh runs attnbench from. */
static const char *build_dir(void)
{
    static char dir[512];
    snprintf(dir, sizeof dir, "%.*s", (int)(strlen(tool_path("merge")) - strlen("/merge")), tool_path("merge"));
    return dir;
}

/* The parts of a 2-shard sweep in dir (made when *dir is ""), spoiled as
 * `spoil` says (tests/merge_parts.sh). */
static void make_parts(const char *spoil, char *dir, size_t len)
{
    if (!dir[0]) {
        snprintf(dir, len, "/tmp/attn-merge-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ATTN_BUILD=%s tests/merge_parts.sh %s %s", build_dir(), dir, spoil);
    ck_assert_int_eq(system(cmd), 0);
}

/* build/merge of dir's plan and parts into dir/out/RUN.csv, with `options`:
 * the exit status; the merge's stderr in dir/merge.err. */
static int merge_parts(const char *dir, const char *options)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --plan %s/plan.csv --out %s/out/RUN.csv %s %s/part-1.csv %s/part-2.csv 2> %s/merge.err",
             tool_path("merge"), dir, dir, options, dir, dir, dir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The parts spoiled as `spoil` says, merged: the exit status. */
static int merge_case(const char *spoil, char *dir, size_t len)
{
    dir[0] = '\0';
    make_parts(spoil, dir, len);
    return merge_parts(dir, "");
}

/* The rows dir/plan.csv plans for `shard` ("I/N"; NULL: every shard). */
static size_t planned_rows(const char *dir, const char *shard)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "awk -F, -v s='%s' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == \"shard\") c = i; next } "
                              "s == \"\" || $c == s { n++ } END { print n + 0 }' %s/plan.csv", shard ? shard : "", dir);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = 0;
    ck_assert_int_eq(fscanf(p, "%zu", &n), 1);
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_uint_gt(n, 0);
    return n;
}

/* The rows of the run at path, read whole. */
static size_t run_rows(const char *path)
{
    struct result_set set;
    ck_assert_msg(results_read(path, &set) == ATTN_OK, "%s", attn_error_message());
    const size_t n = set.count;
    results_free(&set);
    return n;
}

static bool file_has(const char *path, const char *text)
{
    char *all = slurp(path);
    const bool has = strstr(all, text) != NULL;
    free(all);
    return has;
}

static bool err_has(const char *dir, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/merge.err", dir);
    return file_has(path, text);
}

/* A shell test on dir: `test` with %1$s for dir. */
static bool dir_test(const char *dir, const char *test)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, test, dir);
    return system(cmd) == 0;
}

static void remove_dir(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_merge_joins_the_parts)
{
    char dir[64], path[128];
    ck_assert_int_eq(merge_case("", dir, sizeof dir), 0);
    const size_t rows = planned_rows(dir, NULL);
    snprintf(path, sizeof path, "%s/out/RUN.csv", dir);
    struct result_set set;
    ck_assert_msg(results_read(path, &set) == ATTN_OK, "%s", attn_error_message());
    ck_assert_uint_eq(set.count, rows);
    size_t with_samples = 0;
    for (size_t i = 0; i < set.count; i++) {
        with_samples += set.rows[i].nsample_ms == (size_t)set.rows[i].samples;
        ck_assert(!strcmp(set.rows[i].shard, "1/2") || !strcmp(set.rows[i].shard, "2/2"));
    }
    ck_assert_uint_eq(with_samples, rows);
    results_free(&set);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "test -s %s/out/RUN.env && test -s %s/out/RUN.part-1.env && test -s %s/out/RUN.part-2.env && "
                              "grep -qx 'merged_rows=%zu' %s/out/RUN.env", dir, dir, dir, rows, dir);
    ck_assert_int_eq(system(cmd), 0);
    /* every part's revision is recorded, and the staging directory is gone */
    ck_assert(dir_test(dir, "grep -qx 'git_revs=18eacf8deec8' %1$s/out/RUN.env && "
                            "grep -qx 'part_1_git_rev=18eacf8deec8' %1$s/out/RUN.env && "
                            "grep -qx 'part_2=%1$s/part-2.csv' %1$s/out/RUN.env && "
                            "grep -qx 'part_2_git_rev=18eacf8deec8' %1$s/out/RUN.env && "
                            "! grep -q '^mix_revisions=' %1$s/out/RUN.env && [ $(ls -A %1$s/out | wc -l) = 5 ]"));
    remove_dir(dir);
}
END_TEST

START_TEST(test_merge_names_a_failed_shard)
{
    char dir[64], path[128], says[128];
    ck_assert_int_eq(merge_case("missing", dir, sizeof dir), 1);
    snprintf(says, sizeof says, "shard 2/2: 3 of its %zu rows missing", planned_rows(dir, "2/2"));
    ck_assert_msg(err_has(dir, says), "the merge does not say '%s'", says);
    snprintf(path, sizeof path, "%s/out/RUN.csv", dir);
    ck_assert_uint_eq(run_rows(path), planned_rows(dir, NULL) - 3); /* the rows that were measured are kept */
    ck_assert(dir_test(dir, "grep -qx 'missing_rows=3' %1$s/out/RUN.env"));
    remove_dir(dir);
}
END_TEST

/* Each refusal names what and where, exits 2, and leaves nothing: not the
 * run, not its side files, not the directory it would have been in. */
START_TEST(test_merge_refuses)
{
    static const struct { const char *spoil, *says[2]; } cases[] = {
        {"gpu", {"part-2.csv:2: GPU model 'h100' where ", "part-1.csv:2 has 'h200': one run is one GPU model"}},
        {"revision", {"part-2.csv:2: revision '0123456789ab' where ",
                      "part-1.csv:2 has '18eacf8deec8': one run is one revision (--mix-revisions merges them anyway)"}},
        {"twice", {"was measured twice (also by part 1)", ""}},
        {"unplanned", {"is not in the plan", ""}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[64];
        ck_assert_int_eq(merge_case(cases[i].spoil, dir, sizeof dir), 2);
        for (int k = 0; k < 2; k++)
            ck_assert_msg(err_has(dir, cases[i].says[k]), "%s: the message lacks '%s'", cases[i].spoil, cases[i].says[k]);
        ck_assert_msg(dir_test(dir, "test ! -e %1$s/out"), "%s: the merge left %s/out behind", cases[i].spoil, dir);
        remove_dir(dir);
    }
}
END_TEST

/* Parts of two revisions merge when told to, and the .env says so. */
START_TEST(test_merge_mix_revisions)
{
    char dir[64] = "";
    make_parts("revision", dir, sizeof dir);
    ck_assert_int_eq(merge_parts(dir, "--mix-revisions"), 0);
    ck_assert(dir_test(dir, "grep -qx 'git_revs=18eacf8deec8,0123456789ab' %1$s/out/RUN.env && "
                            "grep -qx 'part_1_git_rev=18eacf8deec8' %1$s/out/RUN.env && "
                            "grep -qx 'part_2_git_rev=0123456789ab' %1$s/out/RUN.env && "
                            "grep -qx 'mix_revisions=1' %1$s/out/RUN.env"));
    remove_dir(dir);
}
END_TEST

/* A refused merge writes nothing, so the merge of the repaired parts goes
 * through. */
START_TEST(test_merge_refused_then_repaired)
{
    char dir[64] = "";
    make_parts("twice", dir, sizeof dir);
    ck_assert_int_eq(merge_parts(dir, ""), 2);
    ck_assert(dir_test(dir, "test ! -e %1$s/out"));
    make_parts("", dir, sizeof dir);
    ck_assert_int_eq(merge_parts(dir, ""), 0);
    ck_assert(dir_test(dir, "grep -qx 'missing_rows=0' %1$s/out/RUN.env"));
    remove_dir(dir);
}
END_TEST

/* An earlier merge with rows missing is moved aside (--aside) only by a
 * merge that passed; a whole one is not merged again; without --aside an
 * existing run is refused. */
START_TEST(test_merge_aside)
{
    char dir[64] = "", path[128];
    make_parts("missing", dir, sizeof dir);
    ck_assert_int_eq(merge_parts(dir, ""), 1);
    const size_t kept = planned_rows(dir, NULL) - 3;
    snprintf(path, sizeof path, "%s/out/RUN.csv", dir);
    /* a new merge that is refused leaves the earlier one as it was */
    make_parts("revision", dir, sizeof dir);
    char aside[128];
    snprintf(aside, sizeof aside, "--aside %s/aside", dir);
    ck_assert_int_eq(merge_parts(dir, aside), 2);
    ck_assert(err_has(dir, "one run is one revision"));
    ck_assert_uint_eq(run_rows(path), kept);
    ck_assert(dir_test(dir, "grep -qx 'missing_rows=3' %1$s/out/RUN.env && test ! -e %1$s/aside && [ $(ls -A %1$s/out | wc -l) = 5 ]"));
    /* the repaired parts: merged, the earlier merge moved aside whole */
    make_parts("", dir, sizeof dir);
    ck_assert_int_eq(merge_parts(dir, "--plan /dev/null"), 2); /* a bad plan: refused, nothing moved */
    ck_assert_uint_eq(run_rows(path), kept);
    ck_assert_int_eq(merge_parts(dir, aside), 0);
    ck_assert(err_has(dir, "the earlier merge (3 rows missing) moved to "));
    ck_assert_uint_eq(run_rows(path), planned_rows(dir, NULL));
    char moved[128];
    snprintf(moved, sizeof moved, "%s/aside/RUN.csv", dir);
    ck_assert_uint_eq(run_rows(moved), kept);
    ck_assert(dir_test(dir, "grep -qx 'missing_rows=3' %1$s/aside/RUN.env && "
                            "test -s %1$s/aside/RUN.part-1.env && test -s %1$s/aside/RUN.part-2.env && "
                            "grep -qx 'missing_rows=0' %1$s/out/RUN.env && [ $(ls -A %1$s/out | wc -l) = 5 ]"));
    /* a whole run is not merged again, with --aside or without */
    snprintf(aside, sizeof aside, "--aside %s/aside-2", dir);
    ck_assert_int_eq(merge_parts(dir, aside), 2);
    ck_assert(err_has(dir, "RUN.csv' exists (missing_rows=0 in "));
    ck_assert(err_has(dir, "not merged again"));
    ck_assert_int_eq(merge_parts(dir, ""), 2);
    ck_assert(err_has(dir, "RUN.csv' exists already"));
    ck_assert(dir_test(dir, "test ! -e %1$s/aside-2 && grep -qx 'missing_rows=0' %1$s/out/RUN.env"));
    remove_dir(dir);
}
END_TEST

/* bench/scale/multi_gpu.sh with tests/fake_shard.sh as attnbench and a made-up
 * nvidia-smi listing `gpus` ("0, NVIDIA H200\n1, ..."), the sweep the parts
 * were cut for: its exit status; stderr in dir/multi.err, the parts in
 * dir/parts. */
static int multi_gpu(const char *gpus_listed, const char *gpus, const char *fail, char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/attn-multi-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "ATTN_BUILD=%s tests/merge_parts.sh %s/parts && printf '#!/bin/sh\nprintf \"%s\"\n' > %s/smi && "
                              "chmod +x %s/smi", build_dir(), dir, gpus_listed, dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "OUT=%s/out NVIDIA_SMI=%s/smi ATTNBENCH=tests/fake_shard.sh REAL_ATTNBENCH=%s "
                              "MERGE=%s FAKE_PARTS=%s/parts FAKE_FAIL=%s bench/scale/multi_gpu.sh %s "
                              "$(cat %s/parts/sweep.args) 2> %s/multi.err",
             dir, dir, tool_path("attnbench"), tool_path("merge"), dir, fail, gpus, dir, dir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_multi_gpu_one_run_from_two_gpus)
{
    char dir[64], err[128], devices[128], parts[128], says[128];
    ck_assert_int_eq(multi_gpu("0, NVIDIA H200\\n1, NVIDIA H200\\n", "all", "", dir, sizeof dir), 0);
    snprintf(err, sizeof err, "%s/multi.err", dir);
    snprintf(parts, sizeof parts, "%s/parts", dir);
    snprintf(says, sizeof says, "merge: %zu rows from 2 parts", planned_rows(parts, NULL));
    ck_assert_msg(file_has(err, says), "multi_gpu.sh does not say '%s'", says);
    snprintf(devices, sizeof devices, "%s/parts/devices", dir);
    ck_assert(file_has(devices, "1 0") && file_has(devices, "2 1")); /* shard 1 on GPU 0, shard 2 on GPU 1 */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s/out/*Z.csv %s/out/*Z.part-2.env >/dev/null && ls -d %s/out/*Z.parts >/dev/null", dir, dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    remove_dir(dir);
}
END_TEST

/* fake_shard.sh's failing shard keeps its first two rows. */
START_TEST(test_multi_gpu_failed_shard_named_rows_kept)
{
    char dir[64], err[128], parts[128], says[128];
    ck_assert_int_eq(multi_gpu("0, NVIDIA H200\\n1, NVIDIA H200\\n", "0,1", "2", dir, sizeof dir), 1);
    snprintf(err, sizeof err, "%s/multi.err", dir);
    snprintf(parts, sizeof parts, "%s/parts", dir);
    const size_t rows = planned_rows(parts, NULL), rows2 = planned_rows(parts, "2/2");
    ck_assert(file_has(err, "shard 2/2 (GPU 1) exited 2"));
    snprintf(says, sizeof says, "shard 2/2: %zu of its %zu rows missing", rows2 - 2, rows2);
    ck_assert_msg(file_has(err, says), "multi_gpu.sh does not say '%s'", says);
    snprintf(says, sizeof says, "merge: %zu rows from 2 parts", rows - (rows2 - 2));
    ck_assert_msg(file_has(err, says), "multi_gpu.sh does not say '%s'", says);
    remove_dir(dir);
}
END_TEST

/* GPUs of two models, an index the box lacks, what is not an index (quoted
 * or not), one GPU twice: refused, exit 2, saying so. */
START_TEST(test_multi_gpu_refuses)
{
    static const struct { const char *listed, *gpus, *says; } cases[] = {
        {"0, NVIDIA H200\\n1, NVIDIA A100-SXM4-80GB\\n", "all", "one run is one GPU model"},
        {"0, NVIDIA H200\\n", "0,3", "no GPU '3' here"},
        {"0, NVIDIA H200\\n", "'*'", "no GPU '*' here"},
        {"0, NVIDIA H200\\n1, NVIDIA H200\\n", "0,1,0", "GPU 0 named twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[64], err[128];
        ck_assert_int_eq(multi_gpu(cases[i].listed, cases[i].gpus, "", dir, sizeof dir), 2);
        snprintf(err, sizeof err, "%s/multi.err", dir);
        ck_assert_msg(file_has(err, cases[i].says), "GPUS=%s: multi_gpu.sh does not say '%s'", cases[i].gpus, cases[i].says);
        remove_dir(dir);
    }
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
    tcase_add_test(tc, test_merge_joins_the_parts);
    tcase_add_test(tc, test_merge_names_a_failed_shard);
    tcase_add_test(tc, test_merge_refuses);
    tcase_add_test(tc, test_merge_mix_revisions);
    tcase_add_test(tc, test_merge_refused_then_repaired);
    tcase_add_test(tc, test_merge_aside);
    tcase_add_test(tc, test_multi_gpu_one_run_from_two_gpus);
    tcase_add_test(tc, test_multi_gpu_failed_shard_named_rows_kept);
    tcase_add_test(tc, test_multi_gpu_refuses);
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

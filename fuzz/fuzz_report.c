/* fuzz_report.c — libFuzzer target: the report's data path, `report data`
 * (bench/report/report_data.c: report_data(), with report_variants, report_twin,
 * report_pick_mode, report_env_* from bench/report/report.c, whose main() the
 * build renames away with -Dmain=report_main_unused).
 *
 * Input: a results CSV, optionally followed by a line "==samples==" and its
 * samples file (plain text or gzip data), and/or a line "==env==" and the run's RUN_ID.env (the
 * environment file report_data reads gpu_name and peak_gemm_bf16_tflops
 * from), samples before env when both. The input is cut at its first
 * "==env==" line, what precedes at its first "==samples==" line. The parts
 * are written to this process's scratch directory as r.csv, r.samples.csv.gz,
 * r.env (each removed when absent); results_read() reads the CSV, and when
 * it parses, report_data() writes into the scratch's out/ directory
 * (emptied before each call) three times:
 *   1. plain (mode picked by report_pick_mode: cold when present);
 *   2. with a fixed baseline (with samples) and a fixed thresholds file:
 *      the ratio files, through gate_compare;
 *   3. in the mode of the last row, with the input itself as its baseline.
 * report_data's stdout line goes to /dev/null.
 *
 * Invariant checked besides memory safety and UB: a rejection leaves an
 * error message. */
#include "../bench/report/report.h"
#include "../common/errors.h"
#include "fuzz_common.h"

static const char base_csv[] =
    "run_id,gpu,variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,samples,ms_median,"
    "noise_rel,rel_err,tflops,extra_mem_mib,sm_clock_start_mhz,sm_clock_end_mhz,ab_run\n"
    "base,h200,naive,bf16,32,16,512,128,0,cold,ok,6,0.6937,0.002,0.0025,99.1,610,1980,1980,\n"
    "base,h200,naive,bf16,16,16,1024,128,0,cold,ok,,1.187,0.001,0.0025,115.8,1122,1980,1980,\n"
    "base,h200,cudnn_sdpa,bf16,32,16,512,128,0,cold,ok,,0.3126,0.003,0.0008,219.8,0,1980,1980,\n"
    "base,h200,naive,bf16,32,16,512,128,0,graph,ok,,0.6801,0.003,0.0025,101.0,610,1980,1975,\n"
    "base,h200,flash_mma,bf16,32,16,512,64,1,cold,ok,,0.1113,0.004,0.0031,160.2,0,1980,1980,\n";
static const char base_samples[] =
    "variant,dtype,batch,heads,seq_len,head_dim,causal,mode,sample,ms\n"
    "naive,bf16,32,16,512,128,0,cold,0,0.6931\n"
    "naive,bf16,32,16,512,128,0,cold,1,0.6940\n"
    "naive,bf16,32,16,512,128,0,cold,2,0.6937\n"
    "naive,bf16,32,16,512,128,0,cold,3,0.6929\n"
    "naive,bf16,32,16,512,128,0,cold,4,0.6951\n"
    "naive,bf16,32,16,512,128,0,cold,5,0.6938\n";
static const char thresholds[] =
    "default slowdown=3% ab_slowdown=1% min_ms=0.002 noise_k=2 confidence=99%\n"
    "match seq_len<1024 slowdown=6% ab_slowdown=2%\n"
    "match variant=naive mode!=graph head_dim>=128 min_ms=0.01\n";

static char csv_path[256], samples_path[256], env_path[256], out_dir[256], base_path[256],
    thresholds_path[256];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char sp[256];
    fuzz_write(fuzz_path(base_path, sizeof base_path, "base.csv"), (const uint8_t *)base_csv,
               sizeof base_csv - 1);
    fuzz_write(fuzz_path(sp, sizeof sp, "base.samples.csv"), (const uint8_t *)base_samples,
               sizeof base_samples - 1);
    fuzz_write(fuzz_path(thresholds_path, sizeof thresholds_path, "thresholds.conf"),
               (const uint8_t *)thresholds, sizeof thresholds - 1);
    fuzz_path(csv_path, sizeof csv_path, "r.csv");
    fuzz_path(samples_path, sizeof samples_path, "r.samples.csv.gz");
    fuzz_path(env_path, sizeof env_path, "r.env");
    fuzz_path(out_dir, sizeof out_dir, "out");
    struct result_set check;
    if (results_read(base_path, &check) != ATTN_OK) {
        fprintf(stderr, "fuzz_report: the fixed baseline does not read: %s\n", attn_error_message());
        abort();
    }
    results_free(&check);
    /* report_data prints one line per call to stdout */
    if (!freopen("/dev/null", "w", stdout)) {
        perror("freopen /dev/null");
        abort();
    }
    return 0;
}

static void run(const struct report_args *a, const struct result_set *s)
{
    fuzz_clean_dir(out_dir, 0);
    attn_error_clear();
    int rc = report_data(a, s);
    if (rc != ATTN_OK && !attn_error_message()[0]) {
        fprintf(stderr, "fuzz_report: report_data failed (%d) without a message\n", rc);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_part rest, env, csv, samples;
    fuzz_split_at(data, size, "==env==", &rest, &env);
    fuzz_split_at(rest.data, rest.len, "==samples==", &csv, &samples);
    fuzz_write_part(csv_path, &csv);
    fuzz_write_part(samples_path, &samples);
    fuzz_write_part(env_path, &env);

    struct result_set s;
    attn_error_clear();
    if (results_read(csv_path, &s) != ATTN_OK) {
        if (!attn_error_message()[0]) {
            fprintf(stderr, "fuzz_report: results_read failed without a message\n");
            abort();
        }
        return 0;
    }
    struct report_args a = {.cmd = "data", .results = csv_path, .outdir = out_dir};
    run(&a, &s);
    a.baseline = base_path;
    a.thresholds = thresholds_path;
    run(&a, &s);
    a.baseline = csv_path;
    a.thresholds = NULL;
    a.mode = s.rows[s.count - 1].key.mode;
    run(&a, &s);
    results_free(&s);
    return 0;
}

/* fuzz_results.c — libFuzzer target: the results reader
 * (common/results_read.c, with common/csv.c underneath) and the regression
 * gate's comparison and printers (bench/gate/gate.c, bench/gate/shift.c).
 *
 * Input: a results CSV, optionally followed by a line "==samples==" and the
 * samples file that results_read() looks for beside it, plain text or gzip
 * data. Both are written to this process's scratch directory as r.csv /
 * r.samples.csv.gz (the name this build writes; zlib reads plain text under
 * it as it is; the samples file is removed when the input has no separator
 * line) and read with results_read(). When that succeeds, gate_compare() runs with the
 * built-in thresholds on: the set against itself, a fixed small valid set
 * (with samples, so the Hodges–Lehmann path runs) against it, and it against
 * that set with both allow_* options; the first report is printed as
 * markdown, the last as the table, to /dev/null.
 *
 * Invariant checked besides memory safety and UB: a rejection always leaves
 * an error message (results_read.h: "every rejection names file:line"). */
#include "../bench/gate/gate.h"
#include "../common/errors.h"
#include "../common/results_read.h"
#include "fuzz_common.h"

#include <stdbool.h>

static const char fixed_csv[] =
    "run_id,gpu,variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,reason,samples,"
    "ms_median,noise_rel,rel_err,tflops,extra_mem_mib,sm_clock_start_mhz,sm_clock_end_mhz,ab_run\n"
    "fixed,h200,naive,bf16,32,16,512,128,0,cold,ok,,6,0.6937,0.002,0.0025,99.1,610,1980,1980,\n"
    "fixed,h200,naive,bf16,32,16,512,128,0,graph,ok,,6,0.6801,0.003,0.0025,101.0,610,1980,1975,\n"
    "fixed,h200,flash_mma,bf16,16,16,1024,128,1,cold,ok,,,0.2113,0.004,0.0031,160.2,0,1980,1980,\n"
    "fixed,h200,flash_hopper,fp16,16,16,1024,128,1,cold,skipped,needs sm_90a,,,,,,,,,\n";
static const char fixed_samples[] =
    "variant,dtype,batch,heads,seq_len,head_dim,causal,mode,sample,ms\n"
    "naive,bf16,32,16,512,128,0,cold,0,0.6931\n"
    "naive,bf16,32,16,512,128,0,cold,1,0.6940\n"
    "naive,bf16,32,16,512,128,0,cold,2,0.6937\n"
    "naive,bf16,32,16,512,128,0,cold,3,0.6929\n"
    "naive,bf16,32,16,512,128,0,cold,4,0.6951\n"
    "naive,bf16,32,16,512,128,0,cold,5,0.6938\n"
    "naive,bf16,32,16,512,128,0,graph,0,0.6801\n"
    "naive,bf16,32,16,512,128,0,graph,1,0.6790\n"
    "naive,bf16,32,16,512,128,0,graph,2,0.6811\n"
    "naive,bf16,32,16,512,128,0,graph,3,0.6803\n"
    "naive,bf16,32,16,512,128,0,graph,4,0.6799\n"
    "naive,bf16,32,16,512,128,0,graph,5,0.6802\n";

static struct result_set fixed;
static struct gate_thresholds defaults;
static char csv_path[256], samples_path[256];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char p[256], sp[256];
    fuzz_write(fuzz_path(p, sizeof p, "fixed.csv"), (const uint8_t *)fixed_csv, sizeof fixed_csv - 1);
    fuzz_write(fuzz_path(sp, sizeof sp, "fixed.samples.csv"), (const uint8_t *)fixed_samples,
               sizeof fixed_samples - 1);
    if (results_read(p, &fixed) != ATTN_OK) {
        fprintf(stderr, "fuzz_results: the fixed set does not read: %s\n", attn_error_message());
        abort();
    }
    gate_thresholds_default(&defaults);
    fuzz_path(csv_path, sizeof csv_path, "r.csv");
    fuzz_path(samples_path, sizeof samples_path, "r.samples.csv.gz");
    return 0;
}

/* print: 0 none, 1 the table, 2 the markdown (each printer once per input:
 * printing is a tenth of the run time, and every report goes through the
 * same lines) */
static void compare(const struct result_set *base, const struct result_set *cur, bool lax, int print)
{
    struct gate_options o = {.allow_missing = lax, .allow_gpu_mismatch = lax};
    struct gate_report rep;
    attn_error_clear();
    int rc = gate_compare(base, cur, &defaults, &o, &rep);
    if (rc == ATTN_OK) {
        (void)gate_exit_code(&rep);
        if (print == 1) gate_print(&rep, base->path, cur->path, fuzz_devnull());
        if (print == 2) gate_print_markdown(&rep, base->path, cur->path, fuzz_devnull());
    } else if (!attn_error_message()[0]) {
        fprintf(stderr, "fuzz_results: gate_compare failed (%d) without a message\n", rc);
        abort();
    }
    gate_report_free(&rep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_part csv, samples;
    fuzz_split_at(data, size, "==samples==", &csv, &samples);
    fuzz_write_part(csv_path, &csv);
    fuzz_write_part(samples_path, &samples);

    struct result_set s;
    attn_error_clear();
    int rc = results_read(csv_path, &s);
    if (rc != ATTN_OK) {
        if (!attn_error_message()[0]) {
            fprintf(stderr, "fuzz_results: results_read failed (%d) without a message\n", rc);
            abort();
        }
        if (s.rows || s.count) {
            fprintf(stderr, "fuzz_results: results_read failed but left rows behind\n");
            abort();
        }
        return 0;
    }
    char label[256];
    for (size_t i = 0; i < s.count; i++) (void)result_key_label(&s.rows[i].key, label, sizeof label);
    compare(&s, &s, false, 2);
    compare(&fixed, &s, false, 0);
    compare(&s, &fixed, true, 1);
    results_free(&s);
    return 0;
}

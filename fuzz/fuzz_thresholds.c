/* fuzz_thresholds.c — libFuzzer target: the gate's thresholds parser
 * (gate_thresholds_read in bench/gate/gate.c; syntax in bench/gate/thresholds.conf)
 * and the lookup of the settings for a row (gate_settings_for).
 *
 * Input: a thresholds file, written whole to this process's scratch
 * directory. When it parses, gate_settings_for() runs on a few keys (each
 * field at and around the values a rule might name), and the parsed
 * thresholds then drive one gate_compare() of two fixed sets with samples,
 * so that odd but accepted settings (min_ms=0, confidence=0.5000001,
 * slowdown=0) go through the comparison and its printers too. The sets'
 * rows sit near the limits: 4% slower at a 4% lower clock (pass, SLOWER or
 * throttled by the slowdown a file sets), 6% slower by 0.003 ms (min_ms
 * decides), interleaved samples (ab_slowdown and confidence decide).
 *
 * Invariants checked besides memory safety and UB: a rejection leaves an
 * error message; an accepted file has at most GATE_MAX_RULES rules, each
 * with 1..8 conditions; every setting gate_settings_for() returns is set
 * (not NaN), since the defaults set all of them. */
#include "../bench/gate/gate.h"
#include "../common/errors.h"
#include "fuzz_common.h"

#include <math.h>

static const char base_csv[] =
    "run_id,gpu,variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,samples,ms_median,"
    "noise_rel,rel_err,sm_clock_start_mhz,sm_clock_end_mhz,ab_run\n"
    "b,h200,naive,bf16,32,16,512,128,0,cold,ok,6,0.6937,0.002,0.0025,1980,1980,ab1\n"
    "b,h200,flash_mma,fp16,2,16,4096,64,1,graph,ok,,0.2113,0.004,0.0011,1980,1980,\n"
    "b,h200,flash_hopper,bf16,4,32,4096,64,1,cold,ok,,1.000,0.001,0.001,1980,1980,\n"
    "b,h200,inplace,bf16,1,16,256,128,0,hot,ok,,0.0500,0.01,0.001,1980,1980,\n";
static const char cur_csv[] =
    "run_id,gpu,variant,dtype,batch,heads,seq_len,head_dim,causal,mode,status,samples,ms_median,"
    "noise_rel,rel_err,sm_clock_start_mhz,sm_clock_end_mhz,ab_run\n"
    "c,h200,naive,bf16,32,16,512,128,0,cold,ok,6,0.7212,0.002,0.0025,1980,1900,ab1\n"
    "c,h200,flash_mma,fp16,2,16,4096,64,1,graph,ok,,0.2003,0.03,0.0011,1700,1700,\n"
    "c,h200,flash_hopper,bf16,4,32,4096,64,1,cold,ok,,1.040,0.001,0.001,1900,1900,\n"
    "c,h200,inplace,bf16,1,16,256,128,0,hot,ok,,0.0530,0.01,0.001,1980,1980,\n";
static const char samples_head[] = "variant,dtype,batch,heads,seq_len,head_dim,causal,mode,sample,ms\n";

static struct result_set base, cur;
static char path[256];

#define KEY(v, t, b, h, s, d, c, m) \
    {.variant = v, .dtype = t, .batch = b, .heads = h, .seq_len = s, .head_dim = d, .causal = c, .mode = m}
/* kv_heads left 0: every head its own K and V, as in the files above */
static const struct result_key keys[] = {
    KEY("naive", "bf16", 32, 16, 512, 128, 0, "cold"),
    KEY("flash_mma", "fp16", 2, 16, 4096, 64, 1, "graph"),
    KEY("flash_hopper", "bf16", 1, 1, 1, 1, 0, "hot"),
    KEY("cudnn_sdpa", "bf16", 1 << 30, 1 << 30, 1 << 30, 1 << 30, 1, "cold"),
    KEY("", "", 0, 0, 0, 0, 0, ""),
    KEY("x", "fp16", 8, 16, 1023, 256, 1, "graph"),
};

static void write_set(const char *name, const char *csv, double ms, double step)
{
    char p[256], sp[256], buf[2048];
    fuzz_path(p, sizeof p, name);
    fuzz_write(p, (const uint8_t *)csv, strlen(csv));
    snprintf(sp, sizeof sp, "%.*s.samples.csv", (int)(strlen(p) - 4), p);
    size_t n = (size_t)snprintf(buf, sizeof buf, "%s", samples_head);
    for (int i = 0; i < 6; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "naive,bf16,32,16,512,128,0,cold,%d,%.6f\n", i,
                              ms + step * (i % 3));
    fuzz_write(sp, (const uint8_t *)buf, n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char p[256];
    write_set("base.csv", base_csv, 0.6930, 0.0004);
    write_set("cur.csv", cur_csv, 0.7210, 0.0005);
    if (results_read(fuzz_path(p, sizeof p, "base.csv"), &base) != ATTN_OK ||
        results_read(fuzz_path(p, sizeof p, "cur.csv"), &cur) != ATTN_OK) {
        fprintf(stderr, "fuzz_thresholds: a fixed set does not read: %s\n", attn_error_message());
        abort();
    }
    fuzz_path(path, sizeof path, "thresholds.conf");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_write(path, data, size);
    struct gate_thresholds t;
    attn_error_clear();
    int rc = gate_thresholds_read(path, &t);
    if (rc != ATTN_OK) {
        if (!attn_error_message()[0]) {
            fprintf(stderr, "fuzz_thresholds: rejected (%d) without a message\n", rc);
            abort();
        }
        return 0;
    }
    if (t.nrules < 0 || t.nrules > GATE_MAX_RULES) abort();
    for (int i = 0; i < t.nrules; i++)
        if (t.rules[i].nconds < 1 || t.rules[i].nconds > 8) abort();
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        struct gate_settings s = gate_settings_for(&t, &keys[k]);
        if (isnan(s.slowdown) || isnan(s.ab_slowdown) || isnan(s.min_ms) || isnan(s.noise_k) ||
            isnan(s.confidence)) {
            fprintf(stderr, "fuzz_thresholds: gate_settings_for left a setting unset\n");
            abort();
        }
    }
    const struct gate_options o = {.allow_missing = true, .allow_gpu_mismatch = false};
    struct gate_report rep;
    attn_error_clear();
    rc = gate_compare(&base, &cur, &t, &o, &rep);
    if (rc == ATTN_OK) {
        gate_print(&rep, base.path, cur.path, fuzz_devnull());
        gate_print_markdown(&rep, base.path, cur.path, fuzz_devnull());
    } else if (!attn_error_message()[0]) {
        fprintf(stderr, "fuzz_thresholds: gate_compare failed (%d) without a message\n", rc);
        abort();
    }
    gate_report_free(&rep);
    return 0;
}

/* schema.h — the results CSV's schema, written down once: its columns (in
 * the order the runner writes them), the row key among them, the timing modes
 * and the row statuses. The writer (results.c, which also defines the name
 * arrays), the reader (results_read.c), the timing code, the runner, the gate
 * and the report take their names from here; design.md's schema 1 is this
 * list. */
#ifndef ATTN_SCHEMA_H
#define ATTN_SCHEMA_H

#ifdef __cplusplus
extern "C" {
#endif

#define RESULTS_SCHEMA 1

/* X(ID, "name"): one column each, in file order. */
#define RESULT_COLUMNS(X)                                                            \
    X(RUN_ID, "run_id") X(TIMESTAMP, "timestamp") X(GIT_REV, "git_rev") X(GPU, "gpu") \
    X(VARIANT, "variant") X(DTYPE, "dtype") X(BATCH, "batch") X(HEADS, "heads")       \
    X(KV_HEADS, "kv_heads")                                                          \
    X(SEQ, "seq_len") X(Q_LEN, "q_len") X(DIM, "head_dim") X(CAUSAL, "causal")       \
    X(VARLEN, "varlen") X(PAGE, "page")                                              \
    X(INIT, "init") X(PASS, "pass") X(MODE, "mode") X(REGIME, "regime")              \
    X(STATUS, "status") X(REASON, "reason")                                          \
    X(SAMPLES, "samples") X(MS, "ms_median") X(MS_MIN, "ms_min") X(MS_P10, "ms_p10")  \
    X(MS_P90, "ms_p90") X(MS_MEAN, "ms_mean") X(NOISE, "noise_rel")                   \
    X(CONVERGED, "converged") X(CALLS, "calls_per_sample") X(TFLOPS, "tflops")        \
    X(GBPS, "gbps") X(PCT_TFLOPS, "pct_peak_tflops") X(PCT_GBPS, "pct_peak_gbps")     \
    X(PCT_READ, "pct_peak_read")                                                     \
    X(EXTRA_MEM, "extra_mem_mib") X(MAX_ABS_ERR, "max_abs_err") X(REL_ERR, "rel_err") \
    X(REF, "ref") X(KERNELS, "kernels_per_call") X(MEMCPY, "memcpy_per_call")         \
    X(MEMSET, "memset_per_call") X(BUSY, "gpu_busy_ms") X(GAP, "launch_gap_ms")       \
    X(CLOCK_START, "sm_clock_start_mhz") X(CLOCK_END, "sm_clock_end_mhz")             \
    X(CLOCK_LOW, "clock_low") X(WATTS, "watts") X(MJ_PER_CALL, "mj_per_call")          \
    X(TFLOPS_PER_WATT, "tflops_per_watt") X(THROTTLE, "throttle") X(TEMP, "temp_c")  \
    X(SETTLED, "settled") X(SETTLE_S, "settle_s") X(SETTLED_MHZ, "settled_mhz")        \
    X(SETTLED_WATTS, "settled_watts")                                                \
    X(IMPL, "impl") X(AB_RUN, "ab_run") X(COMPARE_RUN, "compare_run") X(SHARD, "shard")

enum result_column {
#define ATTN_COLUMN_ID(id, name) COL_##id,
    RESULT_COLUMNS(ATTN_COLUMN_ID)
#undef ATTN_COLUMN_ID
    COL_COUNT
};

/* The names, indexed by enum result_column. */
extern const char *const result_column_names[COL_COUNT];

/* The row key: the columns from RESULT_KEY_FIRST to RESULT_KEY_LAST (variant,
 * dtype, batch, heads, kv_heads, seq_len, q_len, head_dim, causal, varlen,
 * page, init, pass, mode, regime), unique within a run (a file without
 * kv_heads, q_len, varlen, page, init, pass or regime, written before them,
 * reads as kv_heads = heads, q_len = seq_len, a dense batch (varlen ""), a
 * contiguous cache (page 0), init uniform, pass fwd and regime burst);
 * the samples file starts its lines with them (results.h). */
#define RESULT_KEY_FIRST COL_VARIANT
#define RESULT_KEY_LAST COL_REGIME
#define RESULT_KEY_COLUMNS (RESULT_KEY_LAST - RESULT_KEY_FIRST + 1)
/* The samples file's columns after the key: the sample's index and its time. */
#define SAMPLES_INDEX_COLUMN "sample"
#define SAMPLES_MS_COLUMN "ms"

/* X(ID, "name"): the timing modes (what each measures: timing.h), the
 * regimes (burst: the row's own warm-up, then its samples, on a board that
 * may have idled before it; sustained: the board first loaded back to back
 * until its SM clock and power settled, and sampled under that load —
 * timing.h's time_sustain, or a compare run's round robin) and the row
 * statuses. */
#define TIMING_MODES(X) X(COLD, "cold") X(HOT, "hot") X(GRAPH, "graph")
#define REGIMES(X) X(BURST, "burst") X(SUSTAINED, "sustained")
#define ROW_STATUSES(X) X(OK, "ok") X(SKIPPED, "skipped") X(OOM, "oom") X(MISMATCH, "mismatch") X(ERROR, "error")

enum attn_mode {
#define ATTN_MODE_ID(id, name) MODE_##id,
    TIMING_MODES(ATTN_MODE_ID)
#undef ATTN_MODE_ID
    MODE_COUNT
};
/* The names, indexed by enum attn_mode. */
extern const char *const timing_mode_names[MODE_COUNT];

enum attn_regime {
#define ATTN_REGIME_ID(id, name) REGIME_##id,
    REGIMES(ATTN_REGIME_ID)
#undef ATTN_REGIME_ID
    REGIME_COUNT
};
/* The names, indexed by enum attn_regime. */
extern const char *const regime_names[REGIME_COUNT];

enum row_status {
#define ATTN_STATUS_ID(id, name) STATUS_##id,
    ROW_STATUSES(ATTN_STATUS_ID)
#undef ATTN_STATUS_ID
    STATUS_COUNT
};
/* The names, indexed by enum row_status. */
extern const char *const row_status_names[STATUS_COUNT];

/* "cold, hot, graph" and "ok, skipped, oom, mismatch, error": each list as
 * one string constant, for the messages that name the choices. Every name
 * is put after ", "; [2] starts the string past the first one. */
#define ATTN_NAME_LISTED(id, name) ", " name
#define TIMING_MODES_LISTED (&(TIMING_MODES(ATTN_NAME_LISTED))[2])
#define ROW_STATUSES_LISTED (&(ROW_STATUSES(ATTN_NAME_LISTED))[2])
#define REGIMES_LISTED (&(REGIMES(ATTN_NAME_LISTED))[2])

/* X(ID, bit, "name"): the `throttle` column's words, NVML's clock event
 * reasons as nvml.h numbers them; a row lists those seen, joined by '|'. */
#define THROTTLE_REASONS(X)                                                        \
    X(IDLE, 0x1, "idle") X(APP_CLOCKS, 0x2, "app_clocks")                          \
    X(SW_POWER_CAP, 0x4, "sw_power_cap") X(HW_SLOWDOWN, 0x8, "hw_slowdown")        \
    X(SYNC_BOOST, 0x10, "sync_boost") X(SW_THERMAL, 0x20, "sw_thermal")            \
    X(HW_THERMAL, 0x40, "hw_thermal") X(HW_POWER_BRAKE, 0x80, "hw_power_brake")    \
    X(DISPLAY_CLOCKS, 0x100, "display_clocks")
enum {
#define ATTN_THROTTLE_BIT(id, bit, name) THROTTLE_##id = bit,
    THROTTLE_REASONS(ATTN_THROTTLE_BIT)
#undef ATTN_THROTTLE_BIT
};
/* The reasons that hold a busy GPU's clock down: power and thermal limits;
 * THROTTLE_HEAT_OR_HW without the power cap (the H200's steady state). */
#define THROTTLE_THERMAL (THROTTLE_SW_THERMAL | THROTTLE_HW_THERMAL)
#define THROTTLE_HARDWARE (THROTTLE_HW_SLOWDOWN | THROTTLE_HW_POWER_BRAKE)
#define THROTTLE_HEAT_OR_HW (0ull | THROTTLE_THERMAL | THROTTLE_HARDWARE)
#define THROTTLE_LIMITING (THROTTLE_HEAT_OR_HW | THROTTLE_SW_POWER_CAP)

#ifdef __cplusplus
}
#endif
#endif

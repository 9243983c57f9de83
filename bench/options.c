/* options.c — parsing attnbench's command line (options.h). */
#include "options.h"
#include "scale/shard.h"
#include "../common/errors.h"
#include "../common/names.h"
#include "../common/registry.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void options_usage(FILE *f)
{
    fprintf(f,
        "usage: attnbench [options]\n"
        "  --list              print the variant table and the Python peers (tools/peers/\n"
        "                      MODULE_peers.py, or $ATTN_PEERS_DIR) and exit (no GPU needed)\n"
        "  --grid NAME|FILE    grid from bench/grids/NAME.grid or a file (repeatable)\n"
        "  --point SPEC        one grid spec, e.g. 'batch=8 heads=16 seq=1024 dim=64 causal=1'\n"
        "  --variants A,B      variants to run (default: all)\n"
        "  --mode M,...        timing modes: cold, hot, graph (default: cold)\n"
        "  --out DIR           directory for RUN_ID.csv and RUN_ID.env (default: results/<gpu>)\n"
        "  --grids-dir DIR     where named grids live (default: bench/grids)\n"
        "  --budget-ms MS      time budget of one row's sampling (default: 3000)\n"
        "  --noise X           target relative noise, IQR/median (default: 0.005)\n"
        "  --min-samples N     fewest samples per row (default: 10)\n"
        "  --flush KIND        how cold mode flushes the L2 before a sample: memset (the\n"
        "                      default) writes twice its size, leaving dirty lines whose\n"
        "                      write-back the timed call pays; read reads twice its size\n"
        "                      and leaves it clean (docs/measuring.md)\n"
        "  --warm-ms MS        warm up each row this long before sampling (default: 25 ms or\n"
        "                      200 calls); make bench passes 500, which brings a power-capped\n"
        "                      board (the H200's 700 W) to its steady clock\n"
        "  --sustain S         the sustained regime: after its warm-up each row runs back to\n"
        "                      back until the SM clock and board power settle (the last\n"
        "                      second's clock within 1%% of its mean and of the second\n"
        "                      before, power within 2%%), at most S seconds, and is sampled\n"
        "                      under that load (regime=sustained, settled clock and power\n"
        "                      in its row); default: burst\n"
        "  --seed N            seed of the random inputs (default: from the clock)\n"
        "  --init D            the inputs' distribution where a point names none: normal\n"
        "                      (N(0, 1), the default), normal:SIGMA or uniform ([-1, 1])\n"
        "  --pass P            what a row times where a point names none: fwd (the default),\n"
        "                      bwd (dQ, dK, dV alone) or fwd_bwd (both in one call)\n"
        "  --peak              measure the card's ceilings first (bf16 GEMM, D2D copy);\n"
        "                      rows then show their share of them\n"
        "  --trace DIR         write DIR/VARIANT_POINT.json (Chrome trace events: CPU ranges,\n"
        "                      GPU ops) for each variant x point, and DIR/ops.txt\n"
        "  --no-trace          skip the traced call per row (op columns left empty)\n"
        "  --row-timeout S     a row (its setup and validation, or one mode's timing) still\n"
        "                      running after S seconds is stopped: the runner process is\n"
        "                      ended, the row written as error (timed out), and the sweep\n"
        "                      goes on in a fresh process (default: 120; 0: no watchdog,\n"
        "                      one process, e.g. under compute-sanitizer or a debugger)\n"
        "  --resume RUN_ID     continue the interrupted run DIR/RUN_ID.csv (DIR: --out or\n"
        "                      results/<gpu>): its rows are kept and skipped, the rest of\n"
        "                      the sweep appended; same GPU model and revision required\n"
        "  --force             with --resume or --extend: a run another revision started\n"
        "  --extend RUN_ID     add this sweep's rows to run RUN_ID: its other variants' rows\n"
        "                      are kept as they are, its seed reused (the PyTorch peers join\n"
        "                      a run this way: make bench PEERS=torch)\n"
        "  --run-id ID         the new run's id (default: its start time, e.g. 20261201T031500Z);\n"
        "                      a RUN_ID is 1 to %zu letters, digits, '.', '_' and '-', not\n"
        "                      starting with '.' or '-' (a --grid NAME too, up to %d)\n"
        "  --shard I/N         run shard I of N: the sweep's points x variants split into N\n"
        "                      parts of about equal predicted time (the same plan in every\n"
        "                      shard: their union is the sweep, each row once)\n"
        "  --dry-run           print the rows this command would run as CSV on stdout (the\n"
        "                      %d key columns %s .. %s, shard, cost: predicted ms) and exit;\n"
        "                      no GPU\n"
        "  --quiet             no progress lines\n"
        "  --worker            serve one side of an A/B run on stdin/stdout (build/ab starts it)\n"
        "  --help              this text\n"
        "With neither --grid nor --point, the default grid runs.\n"
        "Exit: 0 every row ok, skipped or oom; 1 a row failed (mismatch or error); 2 bad\n"
        "input or no GPU; 130 interrupted (finished rows are kept).\n",
        RUN_ID_MAX, GRID_NAME_MAX, RESULT_KEY_COLUMNS, result_column_names[RESULT_KEY_FIRST],
        result_column_names[RESULT_KEY_LAST]);
}

/* How far above the binary's directory a checkout's root may be: build/
 * (build/attnbench) or a build's own subdirectory (build/asan/test_cpu). */
#define PEERS_DIR_LEVELS 3

/* tools/peers of the checkout above `file` (a binary's path) into buf: the
 * first directory above it whose tools/peers holds attnpeer.py. */
static bool peers_dir_above(const char *file, char *buf, size_t len)
{
    char dir[PATH_MAX], marker[PATH_MAX + 32], real[PATH_MAX];
    if (!realpath(file, dir)) return false;
    for (int up = 0; up < PEERS_DIR_LEVELS; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) return false;
        *slash = '\0';
        snprintf(marker, sizeof marker, "%s/tools/peers/attnpeer.py", dir);
        if (access(marker, R_OK) == 0 && realpath(marker, real)) {
            *strrchr(real, '/') = '\0';
            if (strlen(real) >= len) return false;
            strcpy(buf, real);
            return true;
        }
    }
    return false;
}

const char *options_peers_dir(char *buf, size_t len)
{
    const char *env = getenv("ATTN_PEERS_DIR");
    if (env && *env) return env;
    /* the object holding this code (build/libattnpeer.so in a Python
     * process), then the executable */
    Dl_info self;
    if (dladdr((void *)options_peers_dir, &self) && self.dli_fname && *self.dli_fname &&
        peers_dir_above(self.dli_fname, buf, len))
        return buf;
    if (peers_dir_above("/proc/self/exe", buf, len)) return buf;
    /* a build outside the checkout, run from the checkout's root */
    char real[PATH_MAX];
    if (access("tools/peers/attnpeer.py", R_OK) == 0 && realpath("tools/peers", real) && strlen(real) < len) {
        strcpy(buf, real);
        return buf;
    }
    return "tools/peers";
}

static int parse_number(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end || !(x >= lo && x <= hi))
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s' is not a number in [%g, %g]", opt, s, lo, hi);
    *out = x;
    return ATTN_OK;
}

static int parse_variants(struct options *o, const char *list)
{
    char buf[512];
    if (strlen(list) >= sizeof buf) return ATTN_FAIL(ATTN_ERR_INPUT, "--variants: list too long");
    strcpy(buf, list);
    char *save = NULL;
    for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        const struct attn_variant *v = registry_find(name);
        if (!v) {
            char known[256] = "";
            for (size_t i = 0; i < registry_count(); i++) {
                strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
                strncat(known, registry_get(i)->name, sizeof known - strlen(known) - 1);
            }
            return ATTN_FAIL(ATTN_ERR_INPUT, "unknown variant '%s' (known: %s)", name, known);
        }
        bool dup = false;
        for (int i = 0; i < o->nvariants; i++) dup |= o->variants[i] == v;
        if (dup) continue;
        if (o->nvariants == MAX_SELECTED) return ATTN_FAIL(ATTN_ERR_INPUT, "--variants: too many");
        o->variants[o->nvariants++] = v;
    }
    if (o->nvariants == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "--variants: empty list");
    return ATTN_OK;
}

static int parse_modes(struct options *o, const char *list)
{
    char buf[128];
    if (strlen(list) >= sizeof buf) return ATTN_FAIL(ATTN_ERR_INPUT, "--mode: list too long");
    strcpy(buf, list);
    o->nmodes = 0;
    char *save = NULL;
    for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        enum attn_mode m;
        ATTN_TRY(attn_mode_parse(name, &m));
        bool dup = false;
        for (int i = 0; i < o->nmodes; i++) dup |= o->modes[i] == m;
        if (!dup) o->modes[o->nmodes++] = m;
    }
    if (o->nmodes == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "--mode: empty list");
    return ATTN_OK;
}

int options_parse(struct options *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->grids_dir = "bench/grids";
    o->modes[0] = MODE_COLD;
    o->nmodes = 1;
    o->row_timeout_s = 120;
    o->shard_index = o->shard_count = 1;
    o->supervised_fd = -1;
    o->rule = (struct stop_rule){.min_samples = 10, .min_ms = 20.0, .target_noise = 0.005,
                                 .budget_ms = 3000.0, .max_samples = 5000};
    const char *grids[64], *points[64];
    int ngrids = 0, npoints = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        /* options that take no value */
        if (!strcmp(a, "--list")) { o->list = true; continue; }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { o->help = true; continue; }
        if (!strcmp(a, "--quiet")) { o->quiet = true; continue; }
        if (!strcmp(a, "--peak")) { o->peak = true; continue; }
        if (!strcmp(a, "--no-trace")) { o->no_trace = true; continue; }
        if (!strcmp(a, "--worker")) { o->worker = true; continue; }
        if (!strcmp(a, "--force")) { o->force = true; continue; }
        if (!strcmp(a, "--dry-run")) { o->dry_run = true; continue; }
        if (strncmp(a, "--", 2) != 0)
            return ATTN_FAIL(ATTN_ERR_INPUT, "unexpected argument '%s'", a);
        static const char *const with_value[] = {"--grid", "--point", "--variants", "--mode",
                                                 "--out", "--grids-dir", "--budget-ms", "--noise",
                                                 "--min-samples", "--seed", "--trace", "--warm-ms", "--sustain", "--init", "--pass", "--flush",
                                                 "--row-timeout", "--resume", "--supervised-fd", "--shard",
                                                 "--extend", "--run-id"};
        bool known = false;
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
            known |= strcmp(a, with_value[k]) == 0;
        if (!known) return ATTN_FAIL(ATTN_ERR_INPUT, "unknown option '%s' (see --help)", a);
        if (i + 1 >= argc) return ATTN_FAIL(ATTN_ERR_INPUT, "option '%s' needs a value", a);
        const char *val = argv[++i];
        double x;
        /* "" is no directory: `--out ''` used to reach mkdir_p as one */
        if (!*val && (!strcmp(a, "--out") || !strcmp(a, "--trace") || !strcmp(a, "--grids-dir")))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s: empty path", a);
        if (!strcmp(a, "--grid")) {
            if (ngrids == 64) return ATTN_FAIL(ATTN_ERR_INPUT, "too many --grid options");
            grids[ngrids++] = val;
        } else if (!strcmp(a, "--point")) {
            if (npoints == 64) return ATTN_FAIL(ATTN_ERR_INPUT, "too many --point options");
            points[npoints++] = val;
        } else if (!strcmp(a, "--variants")) {
            ATTN_TRY(parse_variants(o, val));
        } else if (!strcmp(a, "--mode")) {
            ATTN_TRY(parse_modes(o, val));
        } else if (!strcmp(a, "--out")) {
            o->out_dir = val;
        } else if (!strcmp(a, "--trace")) {
            o->trace_dir = val;
        } else if (!strcmp(a, "--grids-dir")) {
            o->grids_dir = val;
        } else if (!strcmp(a, "--budget-ms")) {
            ATTN_TRY(parse_number(a, val, 1, 3.6e6, &o->rule.budget_ms));
        } else if (!strcmp(a, "--warm-ms")) {
            ATTN_TRY(parse_number(a, val, 0, 3.6e6, &o->rule.warm_ms));
        } else if (!strcmp(a, "--init")) {
            if (attn_init_parse(val, &o->grid.init_sigma) != ATTN_OK)
                return ATTN_FAIL(ATTN_ERR_INPUT, "--init: '%s' is not uniform, normal or normal:SIGMA "
                                 "(SIGMA in (0, 1000], as %%g writes it)", val);
            o->grid.init_given = true;
        } else if (!strcmp(a, "--pass")) {
            if (attn_pass_parse(val, &o->grid.pass) != ATTN_OK)
                return ATTN_FAIL(ATTN_ERR_INPUT, "--pass: '%s' is not %s", val, ATTN_PASSES_LISTED);
        } else if (!strcmp(a, "--flush")) {
            if (l2_flush_parse(val, &o->flush) != ATTN_OK)
                return ATTN_FAIL(ATTN_ERR_INPUT, "--flush: '%s' is not %s", val, L2_FLUSHES_LISTED);
        } else if (!strcmp(a, "--sustain")) {
            ATTN_TRY(parse_number(a, val, 0.5, 600, &o->rule.sustain_s));
        } else if (!strcmp(a, "--noise")) {
            ATTN_TRY(parse_number(a, val, 0, 1, &o->rule.target_noise));
        } else if (!strcmp(a, "--min-samples")) {
            ATTN_TRY(parse_number(a, val, 1, 100000, &x));
            if (x != floor(x))
                return ATTN_FAIL(ATTN_ERR_INPUT, "--min-samples: '%s' is not a whole number", val);
            o->rule.min_samples = (size_t)x;
        } else if (!strcmp(a, "--row-timeout")) {
            ATTN_TRY(parse_number(a, val, 0, 86400, &o->row_timeout_s));
        } else if (!strcmp(a, "--resume") || !strcmp(a, "--extend") || !strcmp(a, "--run-id")) {
            /* it becomes DIR/RUN_ID.csv and its siblings, and a word of the .env */
            ATTN_TRY(safe_name_check(val, RUN_ID_MAX, a, "run id"));
            if (!strcmp(a, "--run-id")) {
                o->run_id = val;
            } else {
                if (o->resume_id && o->extend != !strcmp(a, "--extend"))
                    return ATTN_FAIL(ATTN_ERR_INPUT, "--resume and --extend contradict each other");
                o->resume_id = val;
                o->extend = !strcmp(a, "--extend");
            }
        } else if (!strcmp(a, "--shard")) {
            ATTN_TRY(shard_parse(val, &o->shard_index, &o->shard_count));
        } else if (!strcmp(a, "--supervised-fd")) {
            ATTN_TRY(parse_number(a, val, 0, 1 << 20, &x));
            o->supervised_fd = (int)x;
        } else if (!strcmp(a, "--seed")) {
            ATTN_TRY(parse_number(a, val, 0, 1.8e19, &x));
            if (x != floor(x))
                return ATTN_FAIL(ATTN_ERR_INPUT, "--seed: '%s' is not a whole number", val);
            o->seed = (unsigned long long)x;
        }
    }
    if (o->row_timeout_s > 0 && o->rule.sustain_s + o->rule.warm_ms / 1000 >= o->row_timeout_s)
        return ATTN_FAIL(ATTN_ERR_INPUT, "--sustain %g: a mode's warm-up and load (%g s) would pass "
                         "--row-timeout %g: raise the timeout", o->rule.sustain_s,
                         o->rule.sustain_s + o->rule.warm_ms / 1000, o->row_timeout_s);
    if (o->list || o->help || o->worker) return ATTN_OK; /* a worker is sent its points */
    if (o->force && !o->resume_id)
        return ATTN_FAIL(ATTN_ERR_INPUT, "--force goes with --resume or --extend");
    if (o->run_id && o->resume_id)
        return ATTN_FAIL(ATTN_ERR_INPUT, "--run-id names a new run; %s continues one",
                         o->extend ? "--extend" : "--resume");
    if (o->trace_dir && o->no_trace)
        return ATTN_FAIL(ATTN_ERR_INPUT, "--trace and --no-trace contradict each other");
    if (ngrids == 0 && npoints == 0) grids[ngrids++] = "default";
    for (int i = 0; i < ngrids; i++) ATTN_TRY(grid_add_named(&o->grid, grids[i], o->grids_dir));
    for (int i = 0; i < npoints; i++) ATTN_TRY(grid_add_spec(&o->grid, points[i], "--point"));
    if (o->grid.count == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "the grid holds no point");
    if (o->nvariants == 0)
        for (size_t i = 0; i < registry_count() && o->nvariants < MAX_SELECTED; i++)
            o->variants[o->nvariants++] = registry_get(i);
    return ATTN_OK;
}

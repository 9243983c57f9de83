/* ab.c — build/ab, the engine of `make ab` and `make compare`: attnbench
 * workers measured in turns on one GPU, in one run.
 *
 *   ab --base BIN --cand BIN [--out DIR] [--block-ms MS] [--thresholds FILE]
 *      [--markdown FILE] [attnbench's grid, variant, mode, warm-up, stop-rule,
 *      sustain, init, pass and --row-timeout options]
 *   ab --compare A,B,C [--ref A] [--bin BIN] [--python PY] [--out DIR]
 *      [--block-ms MS] [the same attnbench options but --variants]
 *   ab --table RUN.csv [--ref A]
 *   ab --list
 *
 * --table prints a compare run's table again from its files (the reference:
 * --ref, else the run's own, compare_ref in its .env).
 *
 * A/B: two builds of attnbench (BASE and CAND), each as `BIN --worker`
 * (worker.c); for every row both open the variant at the same point with the
 * same inputs (one seed), warm up, then take blocks of samples in the order
 * A B B A A B B A …, so that clock, power and neighbour drift during the row
 * fall on both sides alike, until both sides meet the stop rule (or the
 * budget, per side, ends); then the pair is gated.
 *
 * Compare: one worker per variant — `BIN --worker` for a variant built into
 * attnbench, `PY tools/peers/MODULE_peers.py --worker` for a Python peer (the
 * process holding PyTorch is its own worker) — and at every point all of them
 * open their variant with the same inputs, warm up, and take blocks in whole
 * rotating rounds (A B C, B C A, C A B, …), each variant once in every place
 * of the order per cycle, until every one has met the stop rule. The sides'
 * rows are joined into one run, DIR/ID.csv with its samples and .env (every
 * row marked compare_run = ID), and the table of each variant's time
 * relative to the reference's (compare.h) is printed and kept as DIR/ID.txt.
 *
 * The same rotation with two sides is A B, B A: the A/B order. With
 * --sustain S, after the warm-ups the sides run their call back to back in
 * turns (load MS) until the board's SM clock and power have settled
 * (settle.h) or S seconds pass, and are sampled under that load: the rows
 * are sustained and say where the load settled.
 *
 * Each side writes its own run into DIR/.ID.partial/ while the run is under
 * way (A/B: AB_ID-base and -cand .csv, .samples.csv, .env, every row marked
 * with ab_run = AB_ID; compare: VARIANT/ID.csv, ...). Only when every side
 * has finished every row is the run published: the A/B pair gated (verdict to
 * stdout and gate.txt) and renamed to DIR/AB_ID/, the compare run joined into
 * DIR/ID.csv. A run that stops early leaves its partial folder, which the
 * gate never takes for a pair.
 *
 * Every command to a worker has a deadline (from --row-timeout, see
 * deadline_s). A worker that misses it is killed, one that dies is reaped:
 * the rows it was measuring are written as error by a fresh worker for that
 * side — in an A/B run the other side's rows of that step as error too (so
 * the two sides' rows stay matched) — and the run goes on. A fresh worker
 * that cannot take over, or is lost again before it has answered a
 * measuring command, ends the run (side_restart).
 *
 * Exit: 0 pass (compare: every row measured), 1 regression or a row that
 * failed, 2 bad input (an unknown variant, one variant to compare, a worker
 * that cannot be started or restarted, or one that fails fatally); 130
 * interrupted. */
#include "ab_proto.h"
#include "compare.h"
#include "gate.h"
#include "../options.h"
#include "../resume.h"
#include "../../common/errors.h"
#include "../../common/files.h"
#include "../../common/grid.h"
#include "../../common/registry.h"
#include "../../common/results.h"
#include "../../common/settle.h"
#include "../../common/stats.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIN_ROUNDS 4          /* at least A B B A A B B A (whole cycles) before the stop rule is asked */
#define DEFAULT_BLOCK_MS 25.0 /* timed device time of one block */
#define KILL_GRACE_S 2.0      /* a worker sent SIGTERM gets this long before SIGKILL */
#define QUIT_GRACE_S 10.0     /* and one told to quit, this long to close its files */
#define MAX_SIDES MAX_SELECTED /* a compare run's variants */
#define LOAD_MS 100.0         /* a sustained load's turn per side, between readings */

/* A side's worker stopped answering: it missed its deadline or died (the
 * side's `why` says which); the side is stopped. Not an attn_rc: the run
 * recovers from it. */
#define AB_LOST 1

struct side {
    const char *name; /* base, cand; a compare run's: its variant */
    const char *bin;  /* attnbench, or the Python that runs `module` */
    const char *module; /* a Python peer's module (tools/peers/MODULE_peers.py); NULL: bin is attnbench */
    const char *variant; /* the variant it measures in a compare run; NULL in an A/B run (every one) */
    pid_t pid;        /* also its process group's id */
    FILE *to;
    int from;         /* the worker's stdout, -1 closed */
    char *buf;        /* what it sent that is not yet a whole line */
    size_t len, buf_cap;
    char *line;       /* the last reply */
    size_t line_cap;
    char gpu[64], rev[96];
    char flush[16];   /* its cold samples' L2 flush (the greeting's; memset before protocol 7) */
    int proto;
    char run_id[96];  /* AB_ID-base, AB_ID-cand; a compare run's ID */
    char dir[1300];   /* where it writes its run: the partial folder (compare: its own in it) */
    char csv[1400];   /* its run's CSV, as the worker named it */
    char why[160];    /* how it was lost: "timed out after 1.05 s", "worker exited 3" */
    bool fresh;       /* restarted, and no measuring command answered since */
    size_t planned;   /* rows asked of it so far (GATE_AB_ROWS_PLANNED) */
    /* the variant under way */
    unsigned owed;    /* its modes (bit m: --mode's m-th) whose rows are not written yet */
    bool opened, timing, absent;
    double *samples;  /* this mode's samples so far */
    size_t n, cap;
    int calls_per_sample;
    double timed_ms, elapsed_ms;
    bool stop, converged;
};

struct ab_args {
    const char *base_bin, *cand_bin, *out_dir, *thresholds, *markdown;
    const char *compare, *ref, *bin, *python; /* a compare run's variants, reference and programs */
    const char *table;                        /* --table: a compare run whose table to print */
    const char *resume;                       /* --resume ID: the interrupted compare run to continue */
    double block_ms;
    bool help, force;
    struct options opt;
};

/* One A/B run. */
struct ab {
    struct ab_args a;
    struct side sides[MAX_SIDES];
    int nsides;
    bool compare;                      /* one variant a side (--compare), else base and cand */
    int ref_side;                      /* a compare run's reference */
    bool spec_init;                    /* points are sent with init= (every worker reads it) */
    int argc;                          /* the driver's command line, for a compare run's .env */
    char **argv;
    char names[MAX_SIDES][64];         /* a compare run's variants, the sides' names */
    char modules[MAX_SIDES][PATH_MAX]; /* their peer modules ("" built in) */
    char id[64];                       /* AB_ID, or the compare run's ID */
    char dir[1200];                    /* DIR/.AB_ID.partial: where the sides write */
    char final_dir[1200];              /* DIR/AB_ID: where the whole pair goes; compare: DIR/ID.csv */
    char spec[160 + ATTN_VARLEN_MAX];  /* the point under way, for a restarted side */
    unsigned long long point_seed;
    bool made_dir, published;
    bool *done_points;                 /* a resumed compare run: per grid point, measured already */
    size_t points_kept;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_signal(int sig)
{
    (void)sig;
    attn_interrupted = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ab --base BIN --cand BIN [--out DIR] [--block-ms MS] [--thresholds FILE]\n"
        "          [--markdown FILE] [attnbench options]\n"
        "       ab --compare A,B,... [--ref A] [--bin BIN] [--python PY] [--out DIR]\n"
        "          [--block-ms MS] [--resume ID [--force]] [attnbench options but --variants]\n"
        "       ab --table RUN.csv [--ref A]\n"
        "       ab --list\n"
        "attnbench options: --grid --point --variants --mode --grids-dir --warm-ms --sustain\n"
        "  --init --pass --flush --budget-ms --noise --min-samples --seed --peak --no-trace\n"
        "  --quiet --row-timeout; any other is refused.\n"
        "A/B: measures two attnbench builds interleaved on one GPU (blocks A B B A ..., MS\n"
        "of timed work each, default %g) and gates CAND against BASE. Writes DIR/AB_ID/\n"
        "(default DIR: results/<gpu>/ab) once both sides have finished every row; until\n"
        "then the run is in DIR/.AB_ID.partial/, where one that stops early stays.\n"
        "Compare: one worker per variant (BIN --worker, default build/attnbench, for a\n"
        "variant built in; PY tools/peers/MODULE_peers.py --worker, default python3, for a\n"
        "Python peer), all at each point in rotating rounds (A B C, B C A, C A B, ...);\n"
        "writes one run, DIR/ID.csv with its samples and .env (default DIR:\n"
        "results/<gpu>/compare), and prints each variant's time relative to REF's (the\n"
        "first variant unless --ref) with its confidence bounds and a verdict; the table\n"
        "is kept as DIR/ID.txt; --table prints it again from the run's files. One that\n"
        "stops early stays in DIR/.ID.partial/; --resume ID with the same variants and\n"
        "options continues it: the points every variant finished are kept, the rest\n"
        "measured in turns (--force: though the workers' revisions changed).\n"
        "--sustain S: the sides run their call back to back in turns until the SM clock and\n"
        "board power settle (at most S s), then are sampled under that load.\n"
        "A worker that misses a step's deadline (--row-timeout S, default 120; 0: none)\n"
        "is killed, its rows written as error (an A/B run: the other side's too) and the\n"
        "run goes on with a fresh worker. --list prints the variants. Exit: 0 pass, 1 a\n"
        "regression or a failed row, 2 bad input or a worker that cannot go on, 130\n"
        "interrupted. `make ab BASE=rev` and `make compare VARIANTS=a,b` run this.\n",
        DEFAULT_BLOCK_MS);
}

/* The attnbench options an A/B or compare run implements, passed on to
 * options_parse; every other one is refused by name, not accepted and
 * ignored. */
static const struct {
    const char *name;
    bool value;
} passed_options[] = {
    {"--grid", true},      {"--point", true},       {"--variants", true}, {"--mode", true},
    {"--grids-dir", true}, {"--budget-ms", true},   {"--noise", true},    {"--min-samples", true},
    {"--warm-ms", true},   {"--seed", true},        {"--row-timeout", true}, {"--sustain", true},
    {"--init", true},      {"--pass", true},        {"--flush", true},
    {"--peak", false},     {"--no-trace", false},   {"--quiet", false},   {"--list", false},
};

/* Takes ab's own options out of argv; the rest must be attnbench options
 * that an A/B run implements. */
static int parse_args(int argc, char **argv, struct ab_args *a)
{
    memset(a, 0, sizeof *a);
    a->block_ms = DEFAULT_BLOCK_MS;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    if (!rest) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    int nrest = 0, rc = ATTN_OK;
    bool variants = false;
    rest[nrest++] = argv[0];
    for (int i = 1; i < argc && rc == ATTN_OK; i++) {
        const char *o = argv[i];
        const char **slot = !strcmp(o, "--base") ? &a->base_bin
                          : !strcmp(o, "--cand") ? &a->cand_bin
                          : !strcmp(o, "--out") ? &a->out_dir
                          : !strcmp(o, "--thresholds") ? &a->thresholds
                          : !strcmp(o, "--markdown") ? &a->markdown
                          : !strcmp(o, "--compare") ? &a->compare
                          : !strcmp(o, "--ref") ? &a->ref
                          : !strcmp(o, "--bin") ? &a->bin
                          : !strcmp(o, "--python") ? &a->python
                          : !strcmp(o, "--table") ? &a->table
                          : !strcmp(o, "--resume") ? &a->resume : NULL;
        bool block = !strcmp(o, "--block-ms");
        if (!strcmp(o, "--force")) {
            a->force = true;
            continue;
        }
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            a->help = true;
            break;
        }
        if (!slot && !block) {
            int known = -1;
            for (size_t k = 0; k < sizeof passed_options / sizeof passed_options[0]; k++)
                if (!strcmp(o, passed_options[k].name)) known = (int)k;
            if (known < 0 && !strncmp(o, "--", 2)) {
                rc = ATTN_FAIL(ATTN_ERR_INPUT, "'%s': not an option of an A/B or compare run (see --help)", o);
                break;
            }
            variants |= !strcmp(o, "--variants");
            rest[nrest++] = argv[i];
            if (known >= 0 && passed_options[known].value && i + 1 < argc) rest[nrest++] = argv[++i];
            continue;
        }
        if (i + 1 >= argc) {
            rc = ATTN_FAIL(ATTN_ERR_INPUT, "option '%s' needs a value", o);
            break;
        }
        const char *val = argv[++i];
        if (slot) {
            *slot = val;
        } else {
            char *end;
            a->block_ms = strtod(val, &end);
            if (end == val || *end || !(a->block_ms > 0 && a->block_ms <= 10000))
                rc = ATTN_FAIL(ATTN_ERR_INPUT, "--block-ms: '%s' is not a number in (0, 10000]", val);
        }
    }
    if (rc == ATTN_OK && !a->help) rc = options_parse(&a->opt, nrest, rest);
    free(rest);
    if (rc != ATTN_OK || a->help || a->opt.list) return rc;
    if (a->table) {
        if (a->compare || a->base_bin || a->cand_bin)
            return ATTN_FAIL(ATTN_ERR_INPUT, "--table prints a run's table: no --compare, --base or --cand with it");
    } else if (a->compare) {
        if (a->base_bin || a->cand_bin || a->thresholds || a->markdown || variants)
            return ATTN_FAIL(ATTN_ERR_INPUT, "--compare takes its variants itself: --base, --cand, "
                             "--thresholds, --markdown and --variants are an A/B run's");
        if (a->force && !a->resume) return ATTN_FAIL(ATTN_ERR_INPUT, "--force goes with --resume ID");
    } else {
        if (a->resume || a->force)
            return ATTN_FAIL(ATTN_ERR_INPUT, "'%s': an A/B run is not resumed (run make ab again); "
                             "--resume continues a compare run", a->resume ? "--resume" : "--force");
        if (a->ref || a->bin || a->python)
            return ATTN_FAIL(ATTN_ERR_INPUT, "--ref, --bin and --python are a compare run's (--compare A,B)");
        if (!a->base_bin || !a->cand_bin)
            return ATTN_FAIL(ATTN_ERR_INPUT, "--base BIN and --cand BIN, or --compare A,B, are required "
                             "(see --help)");
    }
    if (a->out_dir && strpbrk(a->out_dir, " \t\n"))
        return ATTN_FAIL(ATTN_ERR_INPUT, "--out '%s': a directory without spaces, please", a->out_dir);
    return ATTN_OK;
}

/* A compare run's sides: each variant of --compare (a name, once) built into
 * this build (its attnbench worker) or named by a peer module (its Python
 * worker); at least two; the reference among them. */
static int compare_sides(struct ab *ab)
{
    const struct ab_args *a = &ab->a;
    char list[1024];
    if ((size_t)snprintf(list, sizeof list, "%s", a->compare) >= sizeof list)
        return ATTN_FAIL(ATTN_ERR_INPUT, "--compare: the list is too long");
    char peers_dir[PATH_MAX];
    const char *dir = options_peers_dir(peers_dir, sizeof peers_dir);
    int n = 0;
    for (char *save = NULL, *v = strtok_r(list, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
        if (n == MAX_SIDES) return ATTN_FAIL(ATTN_ERR_INPUT, "--compare: more than %d variants", MAX_SIDES);
        for (int k = 0; k < n; k++)
            if (!strcmp(ab->names[k], v)) return ATTN_FAIL(ATTN_ERR_INPUT, "--compare: '%s' named twice", v);
        if (strlen(v) >= sizeof ab->names[n]) return ATTN_FAIL(ATTN_ERR_INPUT, "--compare: '%.40s...' is too long", v);
        snprintf(ab->names[n], sizeof ab->names[n], "%s", v);
        ab->modules[n][0] = '\0';
        if (!registry_find(v) && registry_find_peer(dir, v, ab->modules[n], sizeof ab->modules[n]) != ATTN_OK)
            return ATTN_FAIL(ATTN_ERR_INPUT, "--compare: unknown variant '%s': neither built in (attnbench "
                             "--list) nor named by a peer module in %s", v, dir);
        n++;
    }
    if (n < 2)
        return ATTN_FAIL(ATTN_ERR_INPUT, "--compare '%s': at least two variants, comma-separated", a->compare);
    const char *ref = a->ref ? a->ref : ab->names[0];
    int ref_side = -1;
    for (int k = 0; k < n; k++)
        if (!strcmp(ab->names[k], ref)) ref_side = k;
    if (ref_side < 0) return ATTN_FAIL(ATTN_ERR_INPUT, "--ref '%s' is not one of --compare's variants", ref);
    for (int k = 0; k < n; k++) {
        struct side *s = &ab->sides[k];
        *s = (struct side){.name = ab->names[k], .variant = ab->names[k], .from = -1};
        if (ab->modules[k][0]) {
            s->module = ab->modules[k];
            s->bin = a->python ? a->python : "python3";
        } else {
            s->bin = a->bin ? a->bin : "build/attnbench";
        }
    }
    ab->nsides = n;
    ab->ref_side = ref_side;
    ab->compare = true;
    return ATTN_OK;
}

/* ---------------------------------------------------------------- workers */

/* How long a worker may take to answer one command: the row timeout (what
 * attnbench's watchdog allows a row's setup and validation, or a mode's
 * timing), plus the work the command asks for beyond that — a mode's
 * warm-up, a block's untimed batch and its samples; 0 (for ever) when the
 * row timeout is 0. */
enum step { STEP_PLAIN, STEP_WARM_UP, STEP_BLOCK, STEP_LOAD };
static double deadline_s(const struct ab_args *a, enum step step)
{
    const double s = a->opt.row_timeout_s;
    if (s <= 0) return 0;
    if (step == STEP_WARM_UP) return s + a->opt.rule.warm_ms / 1000;
    if (step == STEP_BLOCK) return s + 2 * a->block_ms / 1000;
    if (step == STEP_LOAD) return s + 2 * LOAD_MS / 1000;
    return s;
}

static int side_spawn(struct side *s, const struct options *o)
{
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC)) /* the other worker inherits none */
        return ATTN_FAIL(ATTN_ERR, "pipe: %s", strerror(errno));
    char warm[32], budget[32], noise[32], mins[32], sustain[32];
    snprintf(warm, sizeof warm, "%.17g", o->rule.warm_ms);
    snprintf(budget, sizeof budget, "%.17g", o->rule.budget_ms);
    snprintf(noise, sizeof noise, "%.17g", o->rule.target_noise);
    snprintf(mins, sizeof mins, "%zu", o->rule.min_samples);
    snprintf(sustain, sizeof sustain, "%.17g", o->rule.sustain_s);
    /* attnbench --worker ..., or a peer module's: python3 MODULE --worker ... */
    char *argv[20] = {(char *)s->bin};
    int n = 1;
    if (s->module) argv[n++] = (char *)s->module;
    char *common[] = {"--worker", "--warm-ms", warm, "--budget-ms", budget, "--noise", noise,
                      "--min-samples", mins};
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++) argv[n++] = common[i];
    if (o->rule.sustain_s > 0) { /* the rows say sustained; the driver loads the board */
        argv[n++] = "--sustain";
        argv[n++] = sustain;
    }
    if (o->peak) argv[n++] = "--peak";
    if (o->no_trace) argv[n++] = "--no-trace";
    if (o->flush != FLUSH_MEMSET) { /* only when asked: a build before --flush refuses it */
        argv[n++] = "--flush";
        argv[n++] = (char *)l2_flush_name(o->flush);
    }
    argv[n] = NULL;
    s->pid = fork();
    if (s->pid < 0) return ATTN_FAIL(ATTN_ERR, "fork: %s", strerror(errno));
    if (s->pid == 0) {
        /* its own process group, so that stopping it stops what it started;
         * gone with the driver */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[0]);
        close(to[1]);
        close(from[0]);
        close(from[1]);
        if (s->module) execvp(s->bin, argv);
        else execv(s->bin, argv);
        fprintf(stderr, "ab: unable to run '%s': %s\n", s->bin, strerror(errno));
        _exit(127);
    }
    setpgid(s->pid, s->pid);
    close(to[0]);
    close(from[1]);
    s->to = fdopen(to[1], "w");
    s->from = from[0];
    s->len = 0;
    if (!s->to) return ATTN_FAIL(ATTN_ERR, "fdopen: %s", strerror(errno));
    return ATTN_OK;
}

/* Ends the side's worker: `sig` to its process group (0: none, it is ending
 * by itself), grace_s seconds to exit, then SIGKILL; its pipes closed.
 * Returns its wait status, -1 when there was none to wait for. */
static int side_reap(struct side *s, int sig, double grace_s)
{
    if (s->to) fclose(s->to);
    if (s->from >= 0) close(s->from);
    s->to = NULL;
    s->from = -1;
    if (s->pid <= 0) return -1;
    if (sig) kill(-s->pid, sig);
    int status = 0;
    const double until = now_s() + grace_s;
    pid_t got;
    while ((got = waitpid(s->pid, &status, WNOHANG)) == 0 && now_s() < until) usleep(10000);
    if (got == 0) {
        kill(-s->pid, SIGKILL);
        while ((got = waitpid(s->pid, &status, 0)) < 0 && errno == EINTR) {}
    }
    s->pid = 0;
    return got > 0 ? status : -1;
}

/* The pipe closed or broke: the worker ended; why names how. */
static int side_died(struct side *s)
{
    int status = side_reap(s, 0, KILL_GRACE_S);
    if (status >= 0 && WIFSIGNALED(status))
        snprintf(s->why, sizeof s->why, "worker died of signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else if (status >= 0)
        snprintf(s->why, sizeof s->why, "worker exited %d", WEXITSTATUS(status));
    else
        snprintf(s->why, sizeof s->why, "worker stopped answering");
    return AB_LOST;
}

/* Waits up to limit_s seconds (0: for ever) for the side's next line, into
 * s->line. AB_LOST when it does not come: a worker past its deadline is
 * killed. A `fatal` reply is an error: the worker met one it cannot go on
 * from (a failed write, a bad command). */
static int side_read(struct side *s, double limit_s)
{
    const double until = limit_s > 0 ? now_s() + limit_s : 0;
    for (;;) {
        char *nl = s->len ? memchr(s->buf, '\n', s->len) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - s->buf);
            if (n + 1 > s->line_cap) {
                char *grown = realloc(s->line, n + 1);
                if (!grown) return ATTN_FAIL(ATTN_ERR, "out of host memory");
                s->line = grown;
                s->line_cap = n + 1;
            }
            memcpy(s->line, s->buf, n);
            s->line[n] = '\0';
            s->len -= n + 1;
            memmove(s->buf, nl + 1, s->len);
            if (!strncmp(s->line, "fatal ", 6))
                return ATTN_FAIL(ATTN_ERR, "the %s worker (%s): %s", s->name, s->bin, s->line + 6);
            return ATTN_OK;
        }
        if (attn_interrupted) return ATTN_FAIL(ATTN_ERR_INTERRUPTED, "interrupted");
        int wait_ms = -1;
        if (until) {
            const double left = until - now_s();
            if (left <= 0) {
                side_reap(s, SIGTERM, KILL_GRACE_S);
                snprintf(s->why, sizeof s->why, "timed out after %g s", limit_s);
                return AB_LOST;
            }
            wait_ms = (int)ceil(left * 1000);
        }
        struct pollfd p = {.fd = s->from, .events = POLLIN};
        int r = poll(&p, 1, wait_ms);
        if (r < 0 && errno != EINTR) return ATTN_FAIL(ATTN_ERR, "poll: %s", strerror(errno));
        if (r <= 0) continue;
        if (s->len + 4096 > s->buf_cap) {
            size_t cap = s->buf_cap ? 2 * s->buf_cap : 65536;
            char *grown = realloc(s->buf, cap);
            if (!grown) return ATTN_FAIL(ATTN_ERR, "out of host memory");
            s->buf = grown;
            s->buf_cap = cap;
        }
        ssize_t got = read(s->from, s->buf + s->len, s->buf_cap - s->len);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (got <= 0) return side_died(s);
        s->len += (size_t)got;
    }
}

/* Sends one command and reads its reply into s->line, within limit_s. */
static int side_cmd(struct side *s, double limit_s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int side_cmd(struct side *s, double limit_s, const char *fmt, ...)
{
    if (!s->to) return side_died(s);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(s->to, fmt, ap);
    va_end(ap);
    fputc('\n', s->to);
    if (fflush(s->to) != 0) return side_died(s);
    return side_read(s, limit_s);
}

static bool reply_is(const struct side *s, const char *word)
{
    size_t n = strlen(word);
    return !strncmp(s->line, word, n) && (s->line[n] == '\0' || s->line[n] == ' ');
}

static int unexpected(const struct side *s, const char *cmd)
{
    return ATTN_FAIL(ATTN_ERR, "the %s worker answered '%.60s' to %s", s->name, s->line, cmd);
}

/* The greeting: GPU and revision, and a protocol this driver speaks. */
static int side_hello(struct side *s, double limit_s)
{
    int rc = side_read(s, limit_s);
    if (rc != ATTN_OK) return rc;
    int version = 0;
    char flush[16] = "memset";
    const int got = sscanf(s->line, "hello %d %63s %95s %15s", &version, s->gpu, s->rev, flush);
    if (got < 3 || (version >= 7) != (got == 4)) return unexpected(s, "start-up");
    if (version < AB_PROTO_MIN || version > AB_PROTO_VERSION)
        return ATTN_FAIL(ATTN_ERR_INPUT,
                         "%s (rev %s) speaks A/B protocol %d, this driver %d to %d: rebuild it from a "
                         "revision with one of those", s->bin, s->rev, version, AB_PROTO_MIN,
                         AB_PROTO_VERSION);
    s->proto = version;
    snprintf(s->flush, sizeof s->flush, "%s", flush);
    return ATTN_OK;
}

/* Tells the worker to quit and waits for it to close its files. */
static void side_stop(struct side *s)
{
    if (s->to) {
        fputs("quit\n", s->to);
        fflush(s->to);
    }
    side_reap(s, 0, QUIT_GRACE_S);
}

static void side_free(struct side *s)
{
    free(s->buf);
    free(s->line);
    free(s->samples);
    s->buf = s->line = NULL;
    s->samples = NULL;
}

/* --------------------------------------------------------------- restarts */

/* Side s opens its run (reopen: continues it, cut to its whole rows):
 * "open DIR RUN_ID AB_ID", a compare run's "... ID compare". */
static int side_open(const struct ab *ab, struct side *s, bool reopen, double limit)
{
    return side_cmd(s, limit, "%s %s %s %s%s", reopen ? "reopen" : "open", s->dir, s->run_id, ab->id,
                    ab->compare ? " compare" : "");
}

/* The variant side k measures: its own in a compare run, else the one under way. */
static const char *side_variant(const struct ab *ab, int k, const char *variant)
{
    return ab->sides[k].variant ? ab->sides[k].variant : variant;
}

/* A fresh worker for side k after it was lost: it continues the side's run
 * (reopen) at the point under way. One that cannot start or take over, or
 * a side lost again before its fresh worker has answered one measuring
 * command (a row's setup, a warm-up, a block), ends the run: a worker that
 * cannot get that far (a wedged GPU) would cost a deadline per row, and no
 * row is at fault. One that answers and is lost later, in another row,
 * costs that row only. */
static int side_restart(struct ab *ab, int k)
{
    struct side *s = &ab->sides[k];
    char lost[sizeof s->why], rev[sizeof s->rev], gpu[sizeof s->gpu];
    snprintf(lost, sizeof lost, "%s", s->why);
    snprintf(rev, sizeof rev, "%s", s->rev);
    snprintf(gpu, sizeof gpu, "%s", s->gpu);
    if (s->proto < 2)
        return ATTN_FAIL(ATTN_ERR_INPUT, "the %s side (%s, rev %s): %s; its worker speaks A/B "
                         "protocol %d, which cannot continue a run: rebuild it from a newer revision",
                         s->name, s->bin, s->rev, lost, s->proto);
    if (s->fresh)
        return ATTN_FAIL(ATTN_ERR_INPUT, "the %s side (%s): %s, again right after a restart: "
                         "giving up", s->name, s->bin, lost);
    const double limit = deadline_s(&ab->a, STEP_PLAIN);
    ATTN_TRY(side_spawn(s, &ab->a.opt));
    int rc = side_hello(s, limit);
    if (rc == ATTN_OK && (strcmp(rev, s->rev) || strcmp(gpu, s->gpu)))
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "the %s worker came back as rev %s on %s, not rev %s on %s",
                       s->name, s->rev, s->gpu, rev, gpu);
    if (rc == ATTN_OK) rc = side_open(ab, s, true, limit);
    if (rc == ATTN_OK && !reply_is(s, "ok")) rc = unexpected(s, "reopen");
    if (rc == ATTN_OK && ab->spec[0]) rc = side_cmd(s, limit, "point %llu %s", ab->point_seed, ab->spec);
    if (rc == ATTN_OK && ab->spec[0] && !reply_is(s, "ok")) rc = unexpected(s, "point");
    if (rc == AB_LOST)
        return ATTN_FAIL(ATTN_ERR_INPUT, "the %s side (%s): %s, and a fresh worker could not take "
                         "over: %s", s->name, s->bin, lost, s->why);
    s->fresh = true;
    return rc;
}

/* Side k writes VARIANT's row in mode m as error with reason (fail). */
static int side_fail(struct ab *ab, int k, const char *variant, int m, const char *reason)
{
    struct side *s = &ab->sides[k];
    int rc = side_cmd(s, deadline_s(&ab->a, STEP_PLAIN), "fail %s %s %s", side_variant(ab, k, variant),
                      attn_mode_name(ab->a.opt.modes[m]), reason);
    if (rc == AB_LOST)
        return ATTN_FAIL(ATTN_ERR_INPUT, "the %s side (%s): %s while it wrote rows as error: "
                         "giving up", s->name, s->bin, s->why);
    ATTN_TRY(rc);
    s->owed &= ~(1u << m);
    return reply_is(s, "ok") ? ATTN_OK : unexpected(s, "fail");
}

/* Side k was lost during `step` of VARIANT (NULL: between variants, or a
 * compare run's point), with the rows of the modes in `stake` unwritten: a
 * fresh worker takes over and writes them as error saying why; in an A/B
 * run every other side writes its own rows of those modes as error too, so
 * that the pair's rows stay matched (a compare run's other variants go on);
 * then the run goes on. A side lost in the middle of a variant opens it
 * again for the modes still to come (run_variant). */
static int side_lost(struct ab *ab, int k, const char *variant, unsigned stake, const char *step)
{
    struct side *s = &ab->sides[k];
    char why[sizeof s->why + 64], other_why[sizeof why + 160];
    snprintf(why, sizeof why, "%s (%s)", s->why, step);
    fprintf(stderr, "ab: the %s side (%s): %s: stopped; %s\n", s->name, s->bin, why,
            !stake ? "a fresh worker goes on"
            : ab->compare ? "its rows written as error, a fresh worker goes on"
                          : "its rows and the other side's written as error, a fresh worker goes on");
    s->opened = s->timing = false;
    ATTN_TRY(side_restart(ab, k));
    snprintf(other_why, sizeof other_why, "not measured: on the %s side, %s; written as error on "
             "both sides to keep the pair matched", s->name, why);
    for (int m = 0; m < ab->a.opt.nmodes; m++) {
        if (!(stake & (1u << m))) continue;
        for (int j = 0; j < ab->nsides; j++) {
            struct side *t = &ab->sides[j];
            if (!(t->owed & (1u << m)) || (ab->compare && j != k)) continue;
            ATTN_TRY(side_fail(ab, j, variant, m, j == k ? why : other_why));
            if (j != k) t->timing = false;
        }
    }
    return ATTN_OK;
}

/* ------------------------------------------------------------------ rows */

static int add_samples(struct side *s, const char *reply)
{
    char *end;
    unsigned long n = reply[2] ? strtoul(reply + 3, &end, 10) : 0;
    if (n == 0) return unexpected(s, "block");
    for (unsigned long i = 0; i < n; i++) {
        const char *p = end;
        double ms = strtod(p, &end);
        if (end == p || !(ms > 0)) return unexpected(s, "block");
        if (s->n == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 256;
            double *grown = realloc(s->samples, cap * sizeof *grown);
            if (!grown) return ATTN_FAIL(ATTN_ERR, "out of host memory");
            s->samples = grown;
            s->cap = cap;
        }
        s->samples[s->n++] = ms;
        s->timed_ms += ms * s->calls_per_sample;
    }
    return *end ? unexpected(s, "block") : ATTN_OK;
}

/* One block of samples of mode m; AB_LOST passes up. */
static int take_block(struct side *s, const struct ab_args *a, int m)
{
    double t0 = now_s();
    int rc = side_cmd(s, deadline_s(a, STEP_BLOCK), "block 1 %.17g", a->block_ms);
    if (rc != ATTN_OK) return rc;
    s->fresh = false;
    s->elapsed_ms += (now_s() - t0) * 1e3;
    if (reply_is(s, "done")) { /* the variant failed; its row says why */
        s->timing = false;
        s->owed &= ~(1u << m);
        return ATTN_OK;
    }
    if (!reply_is(s, "ok")) return unexpected(s, "block");
    return add_samples(s, s->line);
}

static double median_of(const struct side *s)
{
    struct sample_stats st;
    return s->n && stats_summarize(s->samples, s->n, &st) == ATTN_OK ? st.median : 0;
}

/* "cold,graph": the modes of mask, in --mode order. */
static const char *modes_list(const struct options *o, unsigned mask, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int m = 0; m < o->nmodes; m++)
        if (mask & (1u << m))
            snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "",
                     attn_mode_name(o->modes[m]));
    return buf;
}

/* Side k opens variant for the modes it still owes (setup, validation). */
static int open_variant(struct ab *ab, int k, const char *variant)
{
    struct side *s = &ab->sides[k];
    char modes[64];
    int rc = side_cmd(s, deadline_s(&ab->a, STEP_PLAIN), "row %s %s", variant,
                      modes_list(&ab->a.opt, s->owed, modes, sizeof modes));
    if (rc == AB_LOST) return side_lost(ab, k, variant, s->owed, "setup and validation");
    ATTN_TRY(rc);
    s->fresh = false;
    s->opened = reply_is(s, "ok");
    s->absent = reply_is(s, "absent");
    if (s->absent && ab->compare)
        return ATTN_FAIL(ATTN_ERR_INPUT, "the %s worker (%s%s%s) has no variant %s", s->name, s->bin,
                         s->module ? " " : "", s->module ? s->module : "", variant);
    if (reply_is(s, "done") || s->absent) s->owed = 0; /* done: its rows say why (skipped, oom, ...) */
    else if (!s->opened) return unexpected(s, "row");
    if (s->absent && !ab->a.opt.quiet)
        fprintf(stderr, "ab: the %s build (%s) has no variant %s\n", s->name, s->rev, variant);
    return ATTN_OK;
}

/* Side k was lost in mode m during `step`: side_lost (its row written as
 * error). An A/B run's row is then done on both sides (*ended, and its
 * progress line printed); a compare run's other sides go on. */
static int mode_lost(struct ab *ab, int k, const char *variant, int m, const char *step,
                     const char *label, size_t *done, size_t total, bool *ended)
{
    ATTN_TRY(side_lost(ab, k, variant, 1u << m, step));
    ab->sides[k].timing = false;
    *ended = !ab->compare;
    if (!*ended) return ATTN_OK;
    (*done)++;
    if (!ab->a.opt.quiet)
        fprintf(stderr, "[%zu/%zu] %s %s  error on both sides (the %s side was lost)\n", *done, total,
                label, attn_mode_name(ab->a.opt.modes[m]), ab->sides[k].name);
    return ATTN_OK;
}

static bool any_timing(const struct ab *ab)
{
    for (int k = 0; k < ab->nsides; k++)
        if (ab->sides[k].timing) return true;
    return false;
}

/* The side in place j of round `round`: a rotation, so that over nsides
 * rounds every side takes every place once (two sides: A B, B A). */
static int side_at(const struct ab *ab, int round, int j)
{
    return (round + j) % ab->nsides;
}

/* The sustained regime's load (--sustain): the timing sides run their mode's
 * call back to back in turns, LOAD_MS each, the board's SM clock and power
 * read after each turn, until they have settled (settle.h) or the limit's
 * seconds have passed; then each is told how the load ended, and the blocks
 * that follow keep the board loaded the same way. */
static int load_until_settled(struct ab *ab, const char *variant, int m, const char *label,
                              size_t *done, size_t total, bool *ended)
{
    static struct settle_watch watch; /* a 4096-reading ring: not on the stack */
    settle_begin(&watch);
    const double t0 = now_s(), limit = ab->a.opt.rule.sustain_s;
    struct settle_state st = {.mhz = NAN, .watts = NAN};
    for (int round = 0; any_timing(ab); round++) {
        for (int j = 0; j < ab->nsides; j++) {
            const int k = side_at(ab, round, j);
            struct side *s = &ab->sides[k];
            if (!s->timing) continue;
            int rc = side_cmd(s, deadline_s(&ab->a, STEP_LOAD), "load %.17g", LOAD_MS);
            if (rc == AB_LOST) {
                ATTN_TRY(mode_lost(ab, k, variant, m, "the sustained load", label, done, total, ended));
                if (*ended) return ATTN_OK;
                continue;
            }
            ATTN_TRY(rc);
            s->fresh = false;
            if (reply_is(s, "done")) { /* the variant failed; its row says why */
                s->timing = false;
                s->owed &= ~(1u << m);
                continue;
            }
            double mhz, watts;
            if (!reply_is(s, "ok") || sscanf(s->line + 2, "%lf %lf", &mhz, &watts) != 2)
                return unexpected(s, "load");
            settle_add(&watch, (now_s() - t0) * 1e3, mhz, watts);
        }
        st = settle_check(&watch);
        if (st.settled || now_s() - t0 >= limit) break;
    }
    const double loaded_s = now_s() - t0;
    for (int k = 0; k < ab->nsides; k++) {
        struct side *s = &ab->sides[k];
        if (!s->timing) continue;
        int rc = side_cmd(s, deadline_s(&ab->a, STEP_PLAIN), "settled %d %.3f %.1f %.1f", st.settled ? 1 : 0,
                          loaded_s, st.mhz > 0 ? st.mhz : 0, st.watts > 0 ? st.watts : 0);
        if (rc == AB_LOST) {
            ATTN_TRY(mode_lost(ab, k, variant, m, "the sustained load", label, done, total, ended));
            if (*ended) return ATTN_OK;
            continue;
        }
        ATTN_TRY(rc);
        if (!reply_is(s, "ok")) return unexpected(s, "settled");
    }
    if (!ab->a.opt.quiet)
        fprintf(stderr, "ab: %s %s: %s after %.1f s of load, at %.0f MHz and %.0f W\n", label,
                attn_mode_name(ab->a.opt.modes[m]), st.settled ? "settled" : "NOT settled", loaded_s,
                st.mhz, st.watts);
    return ATTN_OK;
}

/* The progress line of a mode's row(s): each side's median (A/B: and
 * cand/base; compare: and the ratio to the reference's median). */
static void print_progress(const struct ab *ab, int m, const char *label, size_t done, size_t total)
{
    const struct side *sides = ab->sides;
    fprintf(stderr, "[%zu/%zu] %s %s", done, total, label, attn_mode_name(ab->a.opt.modes[m]));
    if (!ab->compare) {
        double mb = sides[0].timing ? median_of(&sides[0]) : 0, mc = sides[1].timing ? median_of(&sides[1]) : 0;
        if (mb > 0 && mc > 0)
            fprintf(stderr, "  base %.4g ms  cand %.4g ms  cand/base %.4f  (%zu + %zu samples)\n", mb,
                    mc, mc / mb, sides[0].n, sides[1].n);
        else
            fprintf(stderr, "  base %s  cand %s\n", mb > 0 ? "timed" : "not timed",
                    mc > 0 ? "timed" : "not timed");
        return;
    }
    const struct side *ref = &sides[ab->ref_side];
    const double mref = ref->timing ? median_of(ref) : 0;
    for (int k = 0; k < ab->nsides; k++) {
        const double mk = sides[k].timing ? median_of(&sides[k]) : 0;
        fprintf(stderr, "  %s ", sides[k].name);
        if (!(mk > 0)) fprintf(stderr, "not timed");
        else if (k == ab->ref_side || !(mref > 0)) fprintf(stderr, "%.4g ms", mk);
        else fprintf(stderr, "%.4g ms (%.3f)", mk, mk / mref);
    }
    fprintf(stderr, "\n");
}

/* Mode m of the open variant(s): every side in rotating rounds of blocks
 * until each has stopped. */
static int time_mode(struct ab *ab, const char *variant, int m, const char *label, size_t *done,
                     size_t total)
{
    const struct ab_args *a = &ab->a;
    const enum attn_mode mode = a->opt.modes[m];
    const unsigned bit = 1u << m;
    struct side *sides = ab->sides;
    const int n = ab->nsides, min_rounds = (MIN_ROUNDS + n - 1) / n * n;
    bool ended = false;
    for (int k = 0; k < n; k++) {
        struct side *s = &sides[k];
        s->timing = s->stop = s->converged = false;
        s->n = 0;
        s->timed_ms = s->elapsed_ms = 0;
    }
    for (int k = 0; k < n; k++) {
        struct side *s = &sides[k];
        if (!s->opened || !(s->owed & bit)) continue;
        int rc = side_cmd(s, deadline_s(a, STEP_WARM_UP), "mode %s", attn_mode_name(mode));
        if (rc == AB_LOST) {
            ATTN_TRY(mode_lost(ab, k, variant, m, "warm-up", label, done, total, &ended));
            if (ended) return ATTN_OK;
            continue;
        }
        ATTN_TRY(rc);
        s->fresh = false;
        if (reply_is(s, "ok")) {
            s->timing = true;
            s->calls_per_sample = s->line[2] ? atoi(s->line + 3) : 0;
            if (s->calls_per_sample < 1) return unexpected(s, "mode");
        } else if (reply_is(s, "done")) {
            s->owed &= ~bit;
        } else {
            return unexpected(s, "mode");
        }
    }
    if (a->opt.rule.sustain_s > 0 && any_timing(ab)) {
        ATTN_TRY(load_until_settled(ab, variant, m, label, done, total, &ended));
        if (ended) return ATTN_OK;
    }
    for (int round = 0; any_timing(ab); round++) {
        for (int j = 0; j < n; j++) {
            const int k = side_at(ab, round, j);
            if (!sides[k].timing) continue;
            int rc = take_block(&sides[k], a, m);
            if (rc == AB_LOST) {
                ATTN_TRY(mode_lost(ab, k, variant, m, "a block", label, done, total, &ended));
                if (ended) return ATTN_OK;
                continue;
            }
            ATTN_TRY(rc);
        }
        /* only after whole cycles (A B B A): a linear drift then cancels */
        if ((round + 1) % n || round + 1 < min_rounds) continue;
        bool all_stop = true;
        for (int k = 0; k < n; k++) {
            struct side *s = &sides[k];
            if (!s->timing) continue;
            struct sample_stats st;
            ATTN_TRY(stats_summarize(s->samples, s->n, &st));
            s->stop = stats_should_stop(&a->opt.rule, &st, s->timed_ms, s->elapsed_ms, &s->converged);
            all_stop &= s->stop;
        }
        if (all_stop) break;
    }
    for (int k = 0; k < n; k++) {
        struct side *s = &sides[k];
        if (!s->timing) continue;
        int rc = side_cmd(s, deadline_s(a, STEP_PLAIN), "finish %d", s->converged);
        if (rc == AB_LOST) {
            ATTN_TRY(mode_lost(ab, k, variant, m, "finishing its row", label, done, total, &ended));
            if (ended) return ATTN_OK;
            continue;
        }
        ATTN_TRY(rc);
        if (!reply_is(s, "ok")) return unexpected(s, "finish");
        s->owed &= ~bit;
    }
    (*done)++;
    if (!a->opt.quiet) print_progress(ab, m, label, *done, total);
    return ATTN_OK;
}

/* Every row of one variant at the point under way, on every side (a compare
 * run: each side's own variant; variant NULL). */
static int run_variant(struct ab *ab, const char *variant, const char *label, size_t *done,
                       size_t total)
{
    const struct options *o = &ab->a.opt;
    for (int k = 0; k < ab->nsides; k++) {
        struct side *s = &ab->sides[k];
        s->owed = (1u << o->nmodes) - 1;
        s->opened = s->timing = s->absent = false;
    }
    for (int k = 0; k < ab->nsides; k++) /* none owed: written by a loss */
        if (ab->sides[k].owed) ATTN_TRY(open_variant(ab, k, side_variant(ab, k, variant)));
    for (int k = 0; k < ab->nsides; k++)
        if (!ab->sides[k].absent) ab->sides[k].planned += (size_t)o->nmodes;
    for (int m = 0; m < o->nmodes; m++) {
        for (int k = 0; k < ab->nsides; k++) /* a side restarted in an earlier mode */
            if (!ab->sides[k].opened && (ab->sides[k].owed & (1u << m)))
                ATTN_TRY(open_variant(ab, k, side_variant(ab, k, variant)));
        ATTN_TRY(time_mode(ab, variant, m, label, done, total));
    }
    for (int k = 0; k < ab->nsides; k++) {
        struct side *s = &ab->sides[k];
        if (!s->opened) continue;
        s->opened = false;
        int rc = side_cmd(s, deadline_s(&ab->a, STEP_PLAIN), "close");
        if (rc == AB_LOST) ATTN_TRY(side_lost(ab, k, side_variant(ab, k, variant), 0, "teardown"));
        else if (rc != ATTN_OK) return rc;
        else if (!reply_is(s, "ok")) return unexpected(s, "close");
    }
    return ATTN_OK;
}

/* "batch=8 heads=16 seq=1024 dim=64 causal=1 dtype=bf16 init=normal": a
 * point in grid syntax; kv_heads= and varlen= only when grouped or ragged,
 * and init= only when every worker reads it (protocol 3; a base revision
 * from before it draws uniform inputs, and then only uniform points run:
 * run()), so that an older base still reads the points it can run; pass=
 * only for a backward point (protocol 4: start_sides), q_len= only for a
 * decode (protocol 5), page= only for a paged cache (protocol 6). */
static void point_spec(const struct ab *ab, const struct attn_problem *p, char *buf, size_t len)
{
    char kv[32] = "", varlen[ATTN_VARLEN_MAX + 8] = "", init[ATTN_INIT_MAX + 8] = "", name[ATTN_INIT_MAX];
    char pass[24] = "", qlen[48] = "";
    if (attn_kv_heads(p) != p->heads) snprintf(kv, sizeof kv, " kv_heads=%d", attn_kv_heads(p));
    if (attn_is_decode(p)) snprintf(qlen, sizeof qlen, " q_len=%d", attn_q_len(p));
    if (attn_is_paged(p)) snprintf(qlen + strlen(qlen), sizeof qlen - strlen(qlen), " page=%d", p->page);
    if (attn_is_varlen(p)) snprintf(varlen, sizeof varlen, " varlen=%s", p->varlen);
    if (ab->spec_init) snprintf(init, sizeof init, " init=%s", attn_init_name(p->init_sigma, name, sizeof name));
    if (p->pass != ATTN_PASS_FWD) snprintf(pass, sizeof pass, " pass=%s", attn_pass_name(p->pass));
    snprintf(buf, len, "batch=%d heads=%d%s seq=%d%s dim=%d causal=%d dtype=%s%s%s%s", p->batch, p->heads,
             kv, p->seq_len, qlen, p->head_dim, p->causal ? 1 : 0, attn_dtype_name(p->dtype), varlen, init,
             pass);
}

static int sweep(struct ab *ab)
{
    const struct options *o = &ab->a.opt;
    uint64_t seed = o->seed ? o->seed : (uint64_t)time(NULL) * 1000003u + (uint64_t)getpid();
    const size_t per_point = (ab->compare ? 1 : (size_t)o->nvariants) * (size_t)o->nmodes;
    size_t done = 0, total = o->grid.count * per_point;
    for (size_t i = 0; i < o->grid.count; i++) {
        const struct attn_problem *p = &o->grid.points[i];
        char label[ATTN_LABEL_MAX + 64], plabel[ATTN_LABEL_MAX];
        if (ab->done_points && ab->done_points[i]) { /* a resumed run's, kept */
            done += per_point;
            continue;
        }
        point_spec(ab, p, ab->spec, sizeof ab->spec);
        ab->point_seed = seed + 7919u * i;
        attn_problem_label(p, plabel, sizeof plabel);
        for (int k = 0; k < ab->nsides; k++) {
            struct side *s = &ab->sides[k];
            int rc = side_cmd(s, deadline_s(&ab->a, STEP_PLAIN), "point %llu %s", ab->point_seed, ab->spec);
            if (rc == AB_LOST) rc = side_lost(ab, k, NULL, 0, "preparing the point"); /* sent again */
            else if (rc == ATTN_OK && !reply_is(s, "ok")) rc = unexpected(s, "point");
            ATTN_TRY(rc);
        }
        if (ab->compare) {
            ATTN_TRY(run_variant(ab, NULL, plabel, &done, total));
            continue;
        }
        for (int v = 0; v < o->nvariants; v++) {
            const char *name = o->variants[v]->name;
            snprintf(label, sizeof label, "%s %s", name, plabel);
            ATTN_TRY(run_variant(ab, name, label, &done, total));
        }
    }
    return ATTN_OK;
}

/* DIR/.AB_ID.partial, AB_ID the UTC start time made unique (neither the
 * partial nor the published name taken: DIR/AB_ID, a compare run's
 * DIR/ID.csv). */
static int make_run_dir(struct ab *ab, const char *parent)
{
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    ATTN_TRY(files_mkdir_p(parent));
    for (int attempt = 1; attempt < 100; attempt++) {
        if (attempt == 1) snprintf(ab->id, sizeof ab->id, "%s", stamp);
        else snprintf(ab->id, sizeof ab->id, "%s-%d", stamp, attempt);
        if ((size_t)snprintf(ab->dir, sizeof ab->dir, "%s/.%s%s", parent, ab->id,
                             GATE_AB_PARTIAL_SUFFIX) >= sizeof ab->dir ||
            (size_t)snprintf(ab->final_dir, sizeof ab->final_dir, "%s/%s%s", parent, ab->id,
                             ab->compare ? ".csv" : "") >= sizeof ab->final_dir)
            return ATTN_FAIL(ATTN_ERR_INPUT, "path too long: '%s'", parent);
        if (access(ab->final_dir, F_OK) == 0) continue;
        if (mkdir(ab->dir, 0755) == 0) {
            ab->made_dir = true;
            return ATTN_OK;
        }
        if (errno != EEXIST)
            return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", ab->dir, strerror(errno));
    }
    return ATTN_FAIL(ATTN_ERR_INPUT, "no free run id in '%s'", parent);
}

/* Records each side's plan in its .env, gates the pair (gate.txt beside
 * it, its files named where they will be), and moves it to its published
 * name: the pair appears whole or not at all. */
static int publish_pair(struct ab *ab, int *code)
{
    char published[2][1400];
    for (int k = 0; k < 2; k++) {
        struct side *s = &ab->sides[k];
        char env[1400];
        ATTN_TRY(results_beside_path(s->csv, ".env", env, sizeof env));
        FILE *f = fopen(env, "a");
        if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "unable to open '%s': %s", env, strerror(errno));
        fprintf(f, "%s=%zu\n", GATE_AB_ROWS_PLANNED, s->planned);
        if (fclose(f) != 0) return ATTN_FAIL(ATTN_ERR_INPUT, "unable to write '%s': %s", env, strerror(errno));
        snprintf(published[k], sizeof published[k], "%s/%s.csv", ab->final_dir, s->run_id);
    }
    char gate_path[1300];
    snprintf(gate_path, sizeof gate_path, "%s/gate.txt", ab->dir);
    struct gate_files_request req = {.baseline = ab->sides[0].csv, .results = ab->sides[1].csv,
                                     .thresholds = ab->a.thresholds, .copy_to = gate_path,
                                     .markdown = ab->a.markdown, .baseline_name = published[0],
                                     .results_name = published[1], .pair = true,
                                     .planned = {(long)ab->sides[0].planned, (long)ab->sides[1].planned}};
    ATTN_TRY(gate_files(&req, stdout, code));
    /* a candidate row that failed is a failure even where the base failed too
     * (the gate leaves such rows uncompared) */
    struct result_set cand;
    ATTN_TRY(results_read(ab->sides[1].csv, &cand));
    size_t failed = 0;
    for (size_t i = 0; i < cand.count; i++)
        failed += !strcmp(cand.rows[i].status, row_status_names[STATUS_MISMATCH]) ||
                  !strcmp(cand.rows[i].status, row_status_names[STATUS_ERROR]);
    results_free(&cand);
    if (rename(ab->dir, ab->final_dir) != 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "unable to rename '%s' to '%s': %s", ab->dir, ab->final_dir,
                         strerror(errno));
    ab->published = true;
    if (failed) {
        fprintf(stderr, "ab: %zu candidate rows are mismatch or error (their reasons are in %s)\n",
                failed, published[1]);
        *code = 1;
    }
    return ATTN_OK;
}

/* ------------------------------------------------------------ compare run */

/* A side's run as read back, with its file's lines (each row's own text). */
struct part {
    struct result_set set;
    char *text;    /* the CSV, NUL-terminated, its '\n's made NULs */
    char **lines;  /* lines[i]: line i + 1 */
    size_t nlines;
    bool *taken;   /* per row: written into the joined run */
    /* written by a build of another schema (a resumed run's older part):
     * its header's columns, by which its rows are put in this build's */
    bool other_schema;
    char header[CSV_LINE_MAX];
    char *columns[COL_COUNT + 64];
    int ncolumns;
};

static int part_read(const char *csv, struct part *pt)
{
    memset(pt, 0, sizeof *pt);
    ATTN_TRY(results_read_run(csv, RESULTS_ALLOW_EMPTY, &pt->set));
    FILE *f = fopen(csv, "rb");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "unable to open '%s': %s", csv, strerror(errno));
    size_t cap = 0, len = 0;
    for (size_t got = 1; got > 0; len += got) {
        if (len + 65536 + 1 > cap) {
            char *grown = realloc(pt->text, cap = 2 * cap + 65536 + 1);
            if (!grown) {
                fclose(f);
                return ATTN_FAIL(ATTN_ERR, "out of host memory");
            }
            pt->text = grown;
        }
        got = fread(pt->text + len, 1, 65536, f);
    }
    fclose(f);
    pt->text[len] = '\0';
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += pt->text[i] == '\n';
    pt->lines = calloc(n + 1, sizeof *pt->lines);
    pt->taken = calloc(pt->set.count + 1, sizeof *pt->taken);
    if (!pt->lines || !pt->taken) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    for (char *at = pt->text, *nl; (nl = strchr(at, '\n')) != NULL; at = nl + 1) {
        *nl = '\0';
        pt->lines[pt->nlines++] = at;
    }
    struct csv_line header;
    results_header(&header);
    const size_t hlen = strcspn(header.text, "\r\n");
    pt->other_schema = pt->nlines > 0 && (strlen(pt->lines[0]) != hlen || strncmp(pt->lines[0], header.text, hlen));
    if (pt->other_schema) {
        snprintf(pt->header, sizeof pt->header, "%s", pt->lines[0]);
        pt->ncolumns = csv_split(pt->header, pt->columns, (int)(sizeof pt->columns / sizeof pt->columns[0]));
        if (pt->ncolumns < 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s:1: a header csv cannot split", csv);
    }
    return ATTN_OK;
}

/* Row line `line` of a part written with other columns, put in this
 * build's schema by column name (a column it lacks left empty, as the
 * reader takes a file from before it). */
static int line_in_schema(const struct part *pt, const char *line, struct csv_line *out)
{
    char copy[CSV_LINE_MAX];
    char *fields[sizeof pt->columns / sizeof pt->columns[0]];
    snprintf(copy, sizeof copy, "%s", line);
    const int n = csv_split(copy, fields, (int)(sizeof fields / sizeof fields[0]));
    if (n != pt->ncolumns)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: a row of %d fields where its header has %d", pt->set.path, n,
                         pt->ncolumns);
    csv_line_init(out);
    for (int c = 0; c < COL_COUNT; c++) {
        const char *v = "";
        for (int j = 0; j < n; j++)
            if (!strcmp(pt->columns[j], result_column_names[c])) v = fields[j];
        csv_add_str(out, v);
    }
    return csv_line_end(out);
}

static void part_free(struct part *pt)
{
    results_free(&pt->set);
    free(pt->text);
    free(pt->lines);
    free(pt->taken);
}

/* Row i of part pt into the joined run: its samples, then its line. */
static int take_row(struct part *pt, size_t i, int csv_fd, int samples_fd)
{
    const struct result_rec *r = &pt->set.rows[i];
    if (r->line < 1 || (size_t)r->line > pt->nlines)
        return ATTN_FAIL(ATTN_ERR, "%s: row at line %d out of the file's %zu", pt->set.path, r->line, pt->nlines);
    ATTN_TRY(results_rec_samples_append(samples_fd, r));
    const char *line = pt->lines[r->line - 1];
    if (pt->other_schema) {
        struct csv_line l;
        ATTN_TRY(line_in_schema(pt, line, &l));
        ATTN_TRY(csv_write_all(csv_fd, l.text, strlen(l.text)));
    } else {
        ATTN_TRY(csv_write_all(csv_fd, line, strlen(line)));
        ATTN_TRY(csv_write_all(csv_fd, "\n", 1));
    }
    pt->taken[i] = true;
    return ATTN_OK;
}

/* The joined run's .env: the first side's (the card, driver, libraries,
 * peaks, seed), then what the compare run was. */
static int write_compare_env(const struct ab *ab, const char *csv)
{
    char from[1400], to[1400];
    ATTN_TRY(results_beside_path(ab->sides[0].csv, ".env", from, sizeof from));
    ATTN_TRY(results_beside_path(csv, ".env", to, sizeof to));
    ATTN_TRY(files_copy_atomic(from, to));
    FILE *f = fopen(to, "a");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "unable to open '%s': %s", to, strerror(errno));
    fprintf(f, "compare_run=%s\ncompare_ref=%s\ncompare_variants=", ab->id, ab->sides[ab->ref_side].name);
    for (int k = 0; k < ab->nsides; k++) fprintf(f, "%s%s", k ? "," : "", ab->sides[k].name);
    fprintf(f, "\ncompare_regime=%s\ncompare_sustain_s=%g\ncompare_block_ms=%g\n",
            regime_names[stats_regime(&ab->a.opt.rule)],
            ab->a.opt.rule.sustain_s, ab->a.block_ms);
    if (ab->a.resume) {
        char when[32];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        fprintf(f, "compare_resumed=%s points_kept=%zu of %zu%s\n", when, ab->points_kept,
                ab->a.opt.grid.count, ab->a.force ? " (--force: revisions may differ)" : "");
    }
    for (int k = 0; k < ab->nsides; k++) {
        const struct side *s = &ab->sides[k];
        fprintf(f, "compare_worker.%s=%s%s%s (rev %s)\n", s->name, s->bin, s->module ? " " : "",
                s->module ? s->module : "", s->rev);
    }
    fprintf(f, "compare_command=");
    for (int i = 0; i < ab->argc; i++) fprintf(f, "%s%s", i ? " " : "", ab->argv[i]);
    fprintf(f, "\n");
    return fclose(f) == 0 ? ATTN_OK : ATTN_FAIL(ATTN_ERR_INPUT, "unable to write '%s': %s", to, strerror(errno));
}

/* The sides' files gone once the joined run reads back whole. */
static void remove_parts(const struct ab *ab)
{
    for (int k = 0; k < ab->nsides; k++) {
        const struct side *s = &ab->sides[k];
        char path[1400];
        unlink(s->csv);
        if (results_samples_path(s->csv, path, sizeof path) == ATTN_OK) unlink(path);
        if (results_beside_path(s->csv, ".env", path, sizeof path) == ATTN_OK) unlink(path);
        rmdir(s->dir);
    }
    rmdir(ab->dir);
}

/* The sides' runs joined into DIR/ID.csv (each point's rows together, the
 * sides in their order), its samples and .env; read back whole, the parts
 * removed; then the table (compare.h) to stdout and DIR/ID.txt. */
static int publish_compare(struct ab *ab, int *code)
{
    struct part parts[MAX_SIDES];
    int nread = 0, rc = ATTN_OK, csv_fd = -1, samples_fd = -1;
    const char *csv = ab->final_dir;
    for (; nread < ab->nsides && rc == ATTN_OK; nread++) rc = part_read(ab->sides[nread].csv, &parts[nread]);
    char samples[1400];
    struct csv_line header;
    results_header(&header);
    if (rc == ATTN_OK) rc = csv_create(csv, &header, &csv_fd);
    if (rc == ATTN_OK) rc = results_samples_create(csv, samples, sizeof samples, &samples_fd);
    const struct options *o = &ab->a.opt;
    const enum attn_regime regime = stats_regime(&o->rule);
    size_t rows = 0, joined = 0;
    for (size_t i = 0; i < o->grid.count && rc == ATTN_OK; i++)
        for (int m = 0; m < o->nmodes && rc == ATTN_OK; m++)
            for (int k = 0; k < ab->nsides && rc == ATTN_OK; k++) {
                struct result_key key;
                result_key_of(ab->sides[k].name, &o->grid.points[i], o->modes[m], regime, &key);
                const struct result_rec *r = results_find(&parts[k].set, &key);
                if (r) rc = take_row(&parts[k], (size_t)(r - parts[k].set.rows), csv_fd, samples_fd);
            }
    for (int k = 0; k < nread && rc == ATTN_OK; k++) /* none expected: kept all the same */
        for (size_t i = 0; i < parts[k].set.count && rc == ATTN_OK; i++)
            if (!parts[k].taken[i]) rc = take_row(&parts[k], i, csv_fd, samples_fd);
    for (int k = 0; k < nread; k++) {
        rows += parts[k].set.count;
        part_free(&parts[k]);
    }
    if (csv_fd >= 0 && close(csv_fd) != 0 && rc == ATTN_OK)
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "unable to write '%s': %s", csv, strerror(errno));
    if (samples_fd >= 0 && close(samples_fd) != 0 && rc == ATTN_OK)
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "unable to write '%s': %s", samples, strerror(errno));
    if (rc == ATTN_OK) rc = write_compare_env(ab, csv);
    struct result_set run = {0};
    if (rc == ATTN_OK) rc = results_read(csv, &run);
    if (rc == ATTN_OK && (joined = run.count) != rows)
        rc = ATTN_FAIL(ATTN_ERR, "%s reads back %zu rows, the sides wrote %zu: the sides' runs are kept in %s",
                       csv, joined, rows, ab->dir);
    if (rc != ATTN_OK) {
        results_free(&run);
        return rc;
    }
    remove_parts(ab);
    ab->published = true;
    char txt[1400];
    size_t slower, failed;
    rc = results_beside_path(csv, ".txt", txt, sizeof txt);
    FILE *f = rc == ATTN_OK ? fopen(txt, "w") : NULL;
    if (rc == ATTN_OK && !f) rc = ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", txt, strerror(errno));
    if (rc == ATTN_OK) rc = compare_print(&run, ab->sides[ab->ref_side].name, COMPARE_CONFIDENCE, f, &slower, &failed);
    if (f && fclose(f) != 0 && rc == ATTN_OK)
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "unable to write '%s': %s", txt, strerror(errno));
    if (rc == ATTN_OK) rc = compare_print(&run, ab->sides[ab->ref_side].name, COMPARE_CONFIDENCE, stdout, &slower, &failed);
    results_free(&run);
    if (rc == ATTN_OK && failed) {
        fprintf(stderr, "ab: %zu rows are mismatch or error (their reasons are in %s)\n", failed, csv);
        *code = 1;
    }
    if (rc == ATTN_OK) fprintf(stderr, "ab: compare run %s: %zu rows in %s (the table: %s)\n", ab->id, joined, csv, txt);
    return rc;
}

/* ----------------------------------------------------- a compare run resumed */

/* --resume ID: the interrupted compare run DIR/.ID.partial continued (DIR:
 * --out or results/<gpu>/compare), to be joined into DIR/ID.csv. */
static int resume_run_dir(struct ab *ab, const char *parent)
{
    const char *id = ab->a.resume;
    if (!*id || strchr(id, '/') || strlen(id) >= sizeof ab->id)
        return ATTN_FAIL(ATTN_ERR_INPUT, "--resume: '%s' is not a run id", id);
    snprintf(ab->id, sizeof ab->id, "%s", id);
    if ((size_t)snprintf(ab->dir, sizeof ab->dir, "%s/.%s%s", parent, id, GATE_AB_PARTIAL_SUFFIX) >=
            sizeof ab->dir ||
        (size_t)snprintf(ab->final_dir, sizeof ab->final_dir, "%s/%s.csv", parent, id) >= sizeof ab->final_dir)
        return ATTN_FAIL(ATTN_ERR_INPUT, "path too long: '%s'", parent);
    if (access(ab->final_dir, F_OK) == 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "--resume %s: %s is joined already: nothing to continue", id,
                         ab->final_dir);
    struct stat st;
    if (stat(ab->dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return ATTN_FAIL(ATTN_ERR_INPUT, "--resume %s: no interrupted compare run %s/", id, ab->dir);
    return ATTN_OK;
}

/* Side s's part pt rewritten with only the rows keep[] marks (the file's
 * order kept): a new file in its folder, then renamed over it with its samples. */
static int part_rewrite(const struct side *s, struct part *pt, const bool *keep)
{
    char csv[1500], tmp[1500], tmp_samples[1600], samples[1600];
    snprintf(csv, sizeof csv, "%s/%s.csv", s->dir, s->run_id);
    snprintf(tmp, sizeof tmp, "%s/.resumed.csv", s->dir);
    ATTN_TRY(results_samples_path(csv, samples, sizeof samples));
    struct csv_line header;
    results_header(&header);
    int csv_fd = -1, samples_fd = -1;
    int rc = csv_create(tmp, &header, &csv_fd);
    if (rc == ATTN_OK) rc = results_samples_create(tmp, tmp_samples, sizeof tmp_samples, &samples_fd);
    for (size_t i = 0; i < pt->set.count && rc == ATTN_OK; i++)
        if (keep[i]) rc = take_row(pt, i, csv_fd, samples_fd);
    if (csv_fd >= 0 && close(csv_fd) != 0 && rc == ATTN_OK)
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "unable to write '%s': %s", tmp, strerror(errno));
    if (samples_fd >= 0 && close(samples_fd) != 0 && rc == ATTN_OK)
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "unable to write '%s': %s", tmp_samples, strerror(errno));
    if (rc == ATTN_OK && (rename(tmp_samples, samples) != 0 || rename(tmp, csv) != 0))
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "unable to replace '%s': %s", csv, strerror(errno));
    if (rc != ATTN_OK) {
        unlink(tmp);
        unlink(tmp_samples);
    }
    return rc;
}

/* A resumed compare run's parts, each side's DIR/.ID.partial/VARIANT/ID.csv
 * cut to its whole rows: a point is done when every side has its row in
 * every mode (ab->done_points); the rows of a point begun and not finished
 * by every side are dropped, so that it is measured again in turns. A row
 * at a point, mode or regime this run does not have, on another GPU model,
 * or by another revision than the side's worker (unless --force), refuses
 * the resume. */
static int resume_parts(struct ab *ab)
{
    const struct options *o = &ab->a.opt;
    const enum attn_regime regime = stats_regime(&o->rule);
    struct part parts[MAX_SIDES];
    bool *keep[MAX_SIDES] = {0};
    int nread = 0, rc = ATTN_OK;
    ab->done_points = calloc(o->grid.count + 1, sizeof *ab->done_points);
    if (!ab->done_points) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    for (; nread < ab->nsides && rc == ATTN_OK; nread++) {
        const struct side *s = &ab->sides[nread];
        char csv[1400];
        struct result_set whole;
        snprintf(csv, sizeof csv, "%s/%s.csv", s->dir, s->run_id);
        if (access(csv, F_OK) != 0) {
            rc = ATTN_FAIL(ATTN_ERR_INPUT, "--resume %s: no run of %s in %s/ (continue it with the "
                           "variants it was started with)", ab->id, s->name, ab->dir);
            break;
        }
        rc = resume_trim(csv, &whole);
        if (rc == ATTN_OK) {
            results_free(&whole);
            rc = part_read(csv, &parts[nread]);
        }
        if (rc == ATTN_OK && !(keep[nread] = calloc(parts[nread].set.count + 1, sizeof *keep[nread])))
            rc = ATTN_FAIL(ATTN_ERR, "out of host memory");
        for (size_t i = 0; rc == ATTN_OK && i < parts[nread].set.count; i++) {
            const struct result_rec *r = &parts[nread].set.rows[i];
            if (strcmp(r->gpu, s->gpu))
                rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: measured on '%s', this GPU is '%s': a run is "
                               "continued on the model it started on", csv, r->line, r->gpu, s->gpu);
            else if (!ab->a.force && strcmp(r->git_rev, s->rev))
                rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: measured by revision %s, the %s worker is %s "
                               "(--force continues it anyway)", csv, r->line, r->git_rev,
                               s->name, s->rev);
        }
        if (rc != ATTN_OK) nread++; /* read (or half read): freed below */
    }
    for (size_t i = 0; i < o->grid.count && rc == ATTN_OK; i++) {
        const struct result_rec *found[MAX_SIDES][MODE_COUNT] = {{0}};
        bool done = true;
        for (int k = 0; k < ab->nsides; k++)
            for (int m = 0; m < o->nmodes; m++) {
                struct result_key key;
                result_key_of(ab->sides[k].name, &o->grid.points[i], o->modes[m], regime, &key);
                found[k][m] = results_find(&parts[k].set, &key);
                done &= found[k][m] != NULL;
            }
        ab->done_points[i] = done;
        ab->points_kept += done;
        for (int k = 0; k < ab->nsides; k++)
            for (int m = 0; m < o->nmodes; m++)
                if (found[k][m]) {
                    const size_t j = (size_t)(found[k][m] - parts[k].set.rows);
                    parts[k].taken[j] = true; /* at a point of this run */
                    keep[k][j] = done;
                }
    }
    for (int k = 0; k < nread && rc == ATTN_OK; k++) /* every part checked before any is rewritten */
        for (size_t i = 0; i < parts[k].set.count && rc == ATTN_OK; i++)
            if (!parts[k].taken[i])
                rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: a row at a point, mode or regime this run does not "
                               "have: continue it with the options it was started with", parts[k].set.path,
                               parts[k].set.rows[i].line);
    for (int k = 0; k < nread && rc == ATTN_OK; k++) {
        size_t kept = 0;
        for (size_t i = 0; i < parts[k].set.count; i++) kept += keep[k][i];
        if (kept != parts[k].set.count || parts[k].other_schema) { /* the worker continues its own schema */
            memset(parts[k].taken, 0, parts[k].set.count * sizeof *parts[k].taken);
            rc = part_rewrite(&ab->sides[k], &parts[k], keep[k]);
        }
    }
    for (int k = 0; k < nread; k++) {
        part_free(&parts[k]);
        free(keep[k]);
    }
    if (rc == ATTN_OK)
        fprintf(stderr, "ab: compare %s resumed: %zu of %zu points measured already, kept\n", ab->id,
                ab->points_kept, o->grid.count);
    return rc;
}

/* Every side's worker started and greeted: one GPU, protocols that do
 * what the run asks (a compare run, --sustain and init= need protocol 3,
 * pass= protocol 4, q_len= protocol 5, page= protocol 6), and cold rows
 * of two revisions timed after one L2 flush. */
/* Waits for side s's hello (side_hello); a side that never says it is an
 * input error naming it. */
static int side_greeted(struct side *s, double limit)
{
    int rc = side_hello(s, limit);
    if (rc == AB_LOST)
        return ATTN_FAIL(ATTN_ERR_INPUT, "the %s side (%s%s%s) did not start: %s", s->name, s->bin,
                         s->module ? " " : "", s->module ? s->module : "", s->why);
    return rc;
}

static int start_sides(struct ab *ab)
{
    const struct ab_args *a = &ab->a;
    const double limit = deadline_s(a, STEP_PLAIN);
    /* with --peak each worker measures the card's ceilings as it starts:
     * one at a time, each alone on the GPU, or they would share it */
    const bool one_by_one = a->opt.peak;
    for (int k = 0; k < ab->nsides; k++) {
        ATTN_TRY(side_spawn(&ab->sides[k], &a->opt));
        if (one_by_one) ATTN_TRY(side_greeted(&ab->sides[k], limit));
    }
    bool all_init = true, all_pass = true, all_decode = true, all_paged = true, cold = false;
    for (int m = 0; m < a->opt.nmodes; m++) cold |= a->opt.modes[m] == MODE_COLD;
    for (int k = 0; k < ab->nsides; k++) {
        struct side *s = &ab->sides[k];
        if (!one_by_one) ATTN_TRY(side_greeted(s, limit));
        if (strcmp(s->gpu, ab->sides[0].gpu) != 0)
            return ATTN_FAIL(ATTN_ERR_INPUT, "the %s worker sees GPU '%s', the %s worker '%s'", s->name,
                             s->gpu, ab->sides[0].name, ab->sides[0].gpu);
        if (s->proto < 3 && (ab->compare || a->opt.rule.sustain_s > 0))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s (rev %s) speaks A/B protocol %d: %s needs 3 (a newer "
                             "revision)", s->bin, s->rev, s->proto,
                             ab->compare ? "a compare run" : "--sustain");
        all_init &= s->proto >= 3;
        all_pass &= s->proto >= 4;
        all_decode &= s->proto >= 5;
        all_paged &= s->proto >= 6;
        /* cold rows of two revisions timed after different L2 flushes (a
         * build whose default differs from the other's) would compare the
         * flushes too; one build under two flushes is that comparison,
         * asked for */
        const struct side *first = &ab->sides[0];
        if (cold && strcmp(s->flush, first->flush) && strcmp(s->rev, first->rev))
            return ATTN_FAIL(ATTN_ERR_INPUT, "the %s side (rev %s) flushes the L2 before a cold sample with "
                             "%s, the %s side (rev %s) with %s: give both one flush (--flush, make ab "
                             "FLUSH=; a build from before --flush knows memset alone)", first->name,
                             first->rev, first->flush, s->name, s->rev, s->flush);
    }
    for (size_t i = 0; i < a->opt.grid.count && !all_paged; i++)
        if (attn_is_paged(&a->opt.grid.points[i]))
            return ATTN_FAIL(ATTN_ERR_INPUT, "a side's build predates the page key; this grid has paged "
                             "caches (page=%d): measure them with builds that know it",
                             a->opt.grid.points[i].page);
    for (size_t i = 0; i < a->opt.grid.count && !all_decode; i++)
        if (attn_is_decode(&a->opt.grid.points[i]))
            return ATTN_FAIL(ATTN_ERR_INPUT, "a side's build predates the q_len key; this grid has decode "
                             "points (q_len=%d): measure them with builds that know it",
                             attn_q_len(&a->opt.grid.points[i]));
    for (size_t i = 0; i < a->opt.grid.count && !all_pass; i++)
        if (a->opt.grid.points[i].pass != ATTN_PASS_FWD)
            return ATTN_FAIL(ATTN_ERR_INPUT, "a side's build predates the pass key and times the "
                             "forward only; this grid has %s points: measure them with builds "
                             "that know the backward", attn_pass_name(a->opt.grid.points[i].pass));
    ab->spec_init = all_init;
    for (size_t i = 0; i < a->opt.grid.count && !all_init; i++)
        if (a->opt.grid.points[i].init_sigma > 0)
            return ATTN_FAIL(ATTN_ERR_INPUT, "a side's build predates the init key and draws uniform "
                             "inputs; this grid's points draw normal ones: give init=uniform (make ab "
                             "INIT=uniform) to compare like with like");
    return ATTN_OK;
}

static int run(struct ab *ab, int *code)
{
    const struct ab_args *a = &ab->a;
    if (a->thresholds) { /* a typo found now, not after the run */
        struct gate_thresholds t;
        ATTN_TRY(gate_thresholds_read(a->thresholds, &t));
    }
    const double limit = deadline_s(a, STEP_PLAIN);
    ATTN_TRY(start_sides(ab));
    char parent[1024];
    if (a->out_dir) snprintf(parent, sizeof parent, "%s", a->out_dir);
    else snprintf(parent, sizeof parent, "results/%s/%s", ab->sides[0].gpu, ab->compare ? "compare" : "ab");
    ATTN_TRY(a->resume ? resume_run_dir(ab, parent) : make_run_dir(ab, parent));
    for (int k = 0; k < ab->nsides; k++) {
        struct side *s = &ab->sides[k];
        if (ab->compare) {
            snprintf(s->run_id, sizeof s->run_id, "%s", ab->id);
            snprintf(s->dir, sizeof s->dir, "%s/%s", ab->dir, s->name);
            if (!a->resume && mkdir(s->dir, 0755) != 0)
                return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", s->dir, strerror(errno));
        } else {
            snprintf(s->run_id, sizeof s->run_id, "%s-%s", ab->id, s->name);
            snprintf(s->dir, sizeof s->dir, "%s", ab->dir);
        }
    }
    if (a->resume) {
        ATTN_TRY(resume_parts(ab));
        ab->made_dir = true; /* from here on, a stop leaves it to be resumed again */
    }
    if (ab->compare) {
        fprintf(stderr, "ab: compare %s:", ab->id);
        for (int k = 0; k < ab->nsides; k++) fprintf(stderr, "%s %s", k ? "," : "", ab->sides[k].name);
        fprintf(stderr, " (reference %s; %s), one GPU (%s), into %s\n", ab->sides[ab->ref_side].name,
                regime_names[stats_regime(&a->opt.rule)], ab->sides[0].gpu, ab->final_dir);
    } else {
        fprintf(stderr, "ab: %s: base %s (%s) vs cand %s (%s), one GPU (%s), into %s/\n", ab->id,
                ab->sides[0].rev, ab->sides[0].bin, ab->sides[1].rev, ab->sides[1].bin,
                ab->sides[0].gpu, ab->final_dir);
    }
    for (int k = 0; k < ab->nsides; k++) {
        struct side *s = &ab->sides[k];
        int rc = side_open(ab, s, a->resume != NULL, limit);
        if (rc == AB_LOST)
            return ATTN_FAIL(ATTN_ERR_INPUT, "the %s side (%s): %s when asked to %s its run",
                             s->name, s->bin, s->why, a->resume ? "reopen" : "open");
        ATTN_TRY(rc);
        if (!reply_is(s, "ok") || !s->line[2]) return unexpected(s, "open");
        snprintf(s->csv, sizeof s->csv, "%s", s->line + 3);
    }
    ATTN_TRY(sweep(ab));
    for (int k = 0; k < ab->nsides; k++) side_stop(&ab->sides[k]);
    return ab->compare ? publish_compare(ab, code) : publish_pair(ab, code);
}

/* --table: a compare run's table from its files, against --ref or the
 * run's own reference (compare_ref in its .env). */
static int print_table(const struct ab_args *a, int *code)
{
    char ref[64];
    if (a->ref) snprintf(ref, sizeof ref, "%s", a->ref);
    else ATTN_TRY(resume_env_value(a->table, "compare_ref", ref, sizeof ref));
    struct result_set run;
    ATTN_TRY(results_read(a->table, &run));
    size_t slower, failed;
    int rc = compare_print(&run, ref, COMPARE_CONFIDENCE, stdout, &slower, &failed);
    results_free(&run);
    *code = rc == ATTN_OK && failed ? 1 : 0;
    return rc;
}

int main(int argc, char **argv)
{
    static struct ab ab = {.sides = {{.name = "base", .from = -1}, {.name = "cand", .from = -1}}, .nsides = 2};
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: a wait ends at ^C */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a dead worker is found by its exit status */
    int code = 0, rc = parse_args(argc, argv, &ab.a);
    if (rc == ATTN_OK && ab.a.help) {
        usage(stdout);
        return 0;
    }
    if (rc == ATTN_OK && ab.a.opt.list) {
        registry_print(stdout);
        return 0;
    }
    ab.argc = argc;
    ab.argv = argv;
    if (rc == ATTN_OK && ab.a.table) {
        rc = print_table(&ab.a, &code);
        if (rc != ATTN_OK) fprintf(stderr, "ab: %s\n", attn_error_message());
        grid_free(&ab.a.opt.grid);
        return rc != ATTN_OK ? 2 : code;
    }
    if (rc == ATTN_OK && ab.a.compare) rc = compare_sides(&ab);
    else if (rc == ATTN_OK) {
        ab.sides[0].bin = ab.a.base_bin;
        ab.sides[1].bin = ab.a.cand_bin;
    }
    if (rc == ATTN_OK) rc = run(&ab, &code);
    if (rc != ATTN_OK) fprintf(stderr, "ab: %s\n", attn_error_message());
    for (int k = 0; k < ab.nsides; k++) {
        struct side *s = &ab.sides[k];
        if (rc == ATTN_ERR_INTERRUPTED && s->pid > 0) kill(-s->pid, SIGINT);
        side_stop(s);
        side_free(s);
    }
    if (ab.made_dir && !ab.published)
    {
        fprintf(stderr, "ab: stopped before every side had finished every row: what was measured "
                        "is in %s/ (%s)\n", ab.dir,
                ab.compare ? "each variant's run, not joined" : "not gated; make regress passes over it");
        if (ab.compare)
            fprintf(stderr, "ab: the same command with --resume %s continues it (make compare RESUME=%s)\n",
                    ab.id, ab.id);
    }
    grid_free(&ab.a.opt.grid);
    free(ab.done_points);
    if (rc == ATTN_ERR_INTERRUPTED || attn_interrupted) return 130;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ab: writing the report to stdout failed: %s\n", strerror(errno));
        return 2;
    }
    return rc != ATTN_OK ? 2 : code;
}

/* ab.c — build/ab, the engine of `make ab`: two builds of attnbench (BASE and
 * CAND) measured interleaved in one run on one GPU, then gated.
 *
 *   ab --base BIN --cand BIN [--out DIR] [--block-ms MS] [--thresholds FILE]
 *      [--markdown FILE] [attnbench's grid, variant, mode, warm-up, stop-rule
 *      and --row-timeout options]
 *   ab --list
 *
 * Each build runs as `BIN --worker` (worker.c), both on the GPU this process
 * sees. For every row both open the variant at the same point with the same
 * inputs (one seed), warm up, then take blocks of samples in the order
 * A B B A A B B A …, so that clock, power and neighbour drift during the row
 * fall on both sides alike, until both sides meet the stop rule (or the
 * budget, per side, ends).
 *
 * Each side writes its own run — AB_ID-base and -cand .csv, .samples.csv,
 * .env, every row marked with ab_run = AB_ID — into DIR/.AB_ID.partial/
 * while the run is under way. Only when both sides have finished every row
 * is the pair gated (verdict to stdout and gate.txt) and renamed to
 * DIR/AB_ID/: a run that stops early leaves its partial folder, which the
 * gate never takes for a pair.
 *
 * Every command to a worker has a deadline (from --row-timeout, see
 * deadline_s). A worker that misses it is killed, one that dies is reaped:
 * the rows it was measuring are written as error by a fresh worker for that
 * side, the other side's rows of that step as error too (so the two sides'
 * rows stay matched), and the run goes on. A fresh worker that cannot take
 * over, or is lost again before it has answered a measuring command, ends
 * the run (side_restart). The side functions (spawn, read with a deadline,
 * stop, restart) take one side each, ready for more than two.
 *
 * Exit: 0 pass, 1 regression (or a row that failed), 2 bad input, a worker
 * that cannot be started or restarted, or one that fails fatally; 130
 * interrupted. */
#include "ab_proto.h"
#include "gate.h"
#include "../options.h"
#include "../../common/errors.h"
#include "../../common/files.h"
#include "../../common/grid.h"
#include "../../common/registry.h"
#include "../../common/results.h"
#include "../../common/stats.h"

#include <errno.h>
#include <fcntl.h>
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

#define MIN_PAIRS 4           /* at least A B B A A B B A before the stop rule is asked */
#define DEFAULT_BLOCK_MS 25.0 /* timed device time of one block */
#define KILL_GRACE_S 2.0      /* a worker sent SIGTERM gets this long before SIGKILL */
#define QUIT_GRACE_S 10.0     /* and one told to quit, this long to close its files */
#define NSIDES 2

/* A side's worker stopped answering: it missed its deadline or died (the
 * side's `why` says which); the side is stopped. Not an attn_rc: the run
 * recovers from it. */
#define AB_LOST 1

struct side {
    const char *name; /* base, cand */
    const char *bin;
    pid_t pid;        /* also its process group's id */
    FILE *to;
    int from;         /* the worker's stdout, -1 closed */
    char *buf;        /* what it sent that is not yet a whole line */
    size_t len, buf_cap;
    char *line;       /* the last reply */
    size_t line_cap;
    char gpu[64], rev[96];
    int proto;
    char run_id[96];  /* AB_ID-base, AB_ID-cand */
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
    double block_ms;
    bool help;
    struct options opt;
};

/* One A/B run. */
struct ab {
    struct ab_args a;
    struct side sides[NSIDES];
    char id[64];                       /* AB_ID */
    char dir[1200];                    /* DIR/.AB_ID.partial: where the sides write */
    char final_dir[1200];              /* DIR/AB_ID: where the whole pair goes */
    char spec[160 + ATTN_VARLEN_MAX];  /* the point under way, for a restarted side */
    unsigned long long point_seed;
    bool made_dir, published;
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
        "          [--markdown FILE]\n"
        "          [attnbench options: --grid --point --variants --mode --grids-dir --warm-ms\n"
        "           --budget-ms --noise --min-samples --seed --peak --no-trace --quiet\n"
        "           --row-timeout]\n"
        "       ab --list\n"
        "Measures two attnbench builds interleaved on one GPU (blocks A B B A ..., MS of\n"
        "timed work each, default %g) and gates CAND against BASE. Writes DIR/AB_ID/\n"
        "(default DIR: results/<gpu>/ab) once both sides have finished every row; until\n"
        "then the run is in DIR/.AB_ID.partial/, where one that stops early stays.\n"
        "A worker that misses a step's deadline (--row-timeout S, default 120; 0: none)\n"
        "is killed, its row and the other side's written as error, and the run goes on\n"
        "with a fresh worker. Other attnbench options are refused. --list prints the\n"
        "variants. Exit: 0 pass, 1 regression, 2 bad input or a worker that cannot go\n"
        "on, 130 interrupted. `make ab BASE=rev` builds both sides and runs this.\n",
        DEFAULT_BLOCK_MS);
}

/* The attnbench options an A/B run implements, passed on to options_parse;
 * every other one is refused by name, not accepted and ignored. */
static const struct {
    const char *name;
    bool value;
} passed_options[] = {
    {"--grid", true},      {"--point", true},       {"--variants", true}, {"--mode", true},
    {"--grids-dir", true}, {"--budget-ms", true},   {"--noise", true},    {"--min-samples", true},
    {"--warm-ms", true},   {"--seed", true},        {"--row-timeout", true},
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
    rest[nrest++] = argv[0];
    for (int i = 1; i < argc && rc == ATTN_OK; i++) {
        const char *o = argv[i];
        const char **slot = !strcmp(o, "--base") ? &a->base_bin
                          : !strcmp(o, "--cand") ? &a->cand_bin
                          : !strcmp(o, "--out") ? &a->out_dir
                          : !strcmp(o, "--thresholds") ? &a->thresholds
                          : !strcmp(o, "--markdown") ? &a->markdown : NULL;
        bool block = !strcmp(o, "--block-ms");
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            a->help = true;
            break;
        }
        if (!slot && !block) {
            int known = -1;
            for (size_t k = 0; k < sizeof passed_options / sizeof passed_options[0]; k++)
                if (!strcmp(o, passed_options[k].name)) known = (int)k;
            if (known < 0 && !strncmp(o, "--", 2)) {
                rc = ATTN_FAIL(ATTN_ERR_INPUT, "'%s': not an option of an A/B run (see --help)", o);
                break;
            }
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
    if (!a->base_bin || !a->cand_bin)
        return ATTN_FAIL(ATTN_ERR_INPUT, "--base BIN and --cand BIN are required (see --help)");
    if (a->out_dir && strpbrk(a->out_dir, " \t\n"))
        return ATTN_FAIL(ATTN_ERR_INPUT, "--out '%s': a directory without spaces, please", a->out_dir);
    return ATTN_OK;
}

/* ---------------------------------------------------------------- workers */

/* How long a worker may take to answer one command: the row timeout (what
 * attnbench's watchdog allows a row's setup and validation, or a mode's
 * timing), plus the work the command asks for beyond that — a mode's
 * warm-up, a block's untimed batch and its samples; 0 (for ever) when the
 * row timeout is 0. */
enum step { STEP_PLAIN, STEP_WARM_UP, STEP_BLOCK };
static double deadline_s(const struct ab_args *a, enum step step)
{
    const double s = a->opt.row_timeout_s;
    if (s <= 0) return 0;
    if (step == STEP_WARM_UP) return s + a->opt.rule.warm_ms / 1000;
    if (step == STEP_BLOCK) return s + 2 * a->block_ms / 1000;
    return s;
}

static int side_spawn(struct side *s, const struct options *o)
{
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC)) /* the other worker inherits none */
        return ATTN_FAIL(ATTN_ERR, "pipe: %s", strerror(errno));
    char warm[32], budget[32], noise[32], mins[32];
    snprintf(warm, sizeof warm, "%.17g", o->rule.warm_ms);
    snprintf(budget, sizeof budget, "%.17g", o->rule.budget_ms);
    snprintf(noise, sizeof noise, "%.17g", o->rule.target_noise);
    snprintf(mins, sizeof mins, "%zu", o->rule.min_samples);
    char *argv[16] = {(char *)s->bin, "--worker", "--warm-ms", warm, "--budget-ms", budget,
                      "--noise", noise, "--min-samples", mins};
    int n = 10;
    if (o->peak) argv[n++] = "--peak";
    if (o->no_trace) argv[n++] = "--no-trace";
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
        execv(s->bin, argv);
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
    if (sscanf(s->line, "hello %d %63s %95s", &version, s->gpu, s->rev) != 3)
        return unexpected(s, "start-up");
    if (version < AB_PROTO_MIN || version > AB_PROTO_VERSION)
        return ATTN_FAIL(ATTN_ERR_INPUT,
                         "%s (rev %s) speaks A/B protocol %d, this driver %d to %d: rebuild it from a "
                         "revision with one of those", s->bin, s->rev, version, AB_PROTO_MIN,
                         AB_PROTO_VERSION);
    s->proto = version;
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
    if (rc == ATTN_OK) rc = side_cmd(s, limit, "reopen %s %s %s", ab->dir, s->run_id, ab->id);
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
    int rc = side_cmd(s, deadline_s(&ab->a, STEP_PLAIN), "fail %s %s %s", variant,
                      attn_mode_name(ab->a.opt.modes[m]), reason);
    if (rc == AB_LOST)
        return ATTN_FAIL(ATTN_ERR_INPUT, "the %s side (%s): %s while it wrote rows as error: "
                         "giving up", s->name, s->bin, s->why);
    ATTN_TRY(rc);
    s->owed &= ~(1u << m);
    return reply_is(s, "ok") ? ATTN_OK : unexpected(s, "fail");
}

/* Side k was lost during `step` of VARIANT (NULL: between variants), with
 * the rows of the modes in `stake` unwritten: a fresh worker takes over and
 * writes them as error saying why; every other side writes its own rows of
 * those modes as error too, so that the pair's rows stay matched; then the
 * run goes on. A side lost in the middle of a variant opens it again for
 * the modes still to come (run_variant). */
static int side_lost(struct ab *ab, int k, const char *variant, unsigned stake, const char *step)
{
    struct side *s = &ab->sides[k];
    char why[sizeof s->why + 64], other_why[sizeof why + 160];
    snprintf(why, sizeof why, "%s (%s)", s->why, step);
    fprintf(stderr, "ab: the %s side (%s): %s: stopped; %s\n", s->name, s->bin, why,
            stake ? "its rows and the other side's written as error, a fresh worker goes on"
                  : "a fresh worker goes on");
    s->opened = s->timing = false;
    ATTN_TRY(side_restart(ab, k));
    snprintf(other_why, sizeof other_why, "not measured: on the %s side, %s; written as error on "
             "both sides to keep the pair matched", s->name, why);
    for (int m = 0; m < ab->a.opt.nmodes; m++) {
        if (!(stake & (1u << m))) continue;
        for (int j = 0; j < NSIDES; j++) {
            struct side *t = &ab->sides[j];
            if (!(t->owed & (1u << m))) continue;
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
    if (reply_is(s, "done") || s->absent) s->owed = 0; /* done: its rows say why (skipped, oom, ...) */
    else if (!s->opened) return unexpected(s, "row");
    if (s->absent && !ab->a.opt.quiet)
        fprintf(stderr, "ab: the %s build (%s) has no variant %s\n", s->name, s->rev, variant);
    return ATTN_OK;
}

/* Side k was lost in mode m: side_lost, and the row counted as done. */
static int mode_lost(struct ab *ab, int k, const char *variant, int m, const char *step,
                     const char *label, size_t *done, size_t total)
{
    ATTN_TRY(side_lost(ab, k, variant, 1u << m, step));
    (*done)++;
    if (!ab->a.opt.quiet)
        fprintf(stderr, "[%zu/%zu] %s %s  error on both sides (the %s side was lost)\n", *done, total,
                label, attn_mode_name(ab->a.opt.modes[m]), ab->sides[k].name);
    return ATTN_OK;
}

/* Mode m of the open variant: both sides interleaved until both stop. */
static int time_mode(struct ab *ab, const char *variant, int m, const char *label, size_t *done,
                     size_t total)
{
    const struct ab_args *a = &ab->a;
    const enum attn_mode mode = a->opt.modes[m];
    const unsigned bit = 1u << m;
    struct side *sides = ab->sides;
    for (int k = 0; k < NSIDES; k++) {
        struct side *s = &sides[k];
        s->timing = s->stop = s->converged = false;
        s->n = 0;
        s->timed_ms = s->elapsed_ms = 0;
    }
    for (int k = 0; k < NSIDES; k++) {
        struct side *s = &sides[k];
        if (!s->opened || !(s->owed & bit)) continue;
        int rc = side_cmd(s, deadline_s(a, STEP_WARM_UP), "mode %s", attn_mode_name(mode));
        if (rc == AB_LOST) return mode_lost(ab, k, variant, m, "warm-up", label, done, total);
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
    for (int pair = 0; sides[0].timing || sides[1].timing; pair++) {
        for (int j = 0; j < NSIDES; j++) {
            const int k = (pair % 2) ^ j; /* A B, B A, A B, ... */
            if (!sides[k].timing) continue;
            int rc = take_block(&sides[k], a, m);
            if (rc == AB_LOST) return mode_lost(ab, k, variant, m, "a block", label, done, total);
            ATTN_TRY(rc);
        }
        /* only after a whole A B B A: a linear drift then cancels */
        if (pair + 1 < MIN_PAIRS || pair % 2 == 0) continue;
        bool all_stop = true;
        for (int k = 0; k < NSIDES; k++) {
            struct side *s = &sides[k];
            if (!s->timing) continue;
            struct sample_stats st;
            ATTN_TRY(stats_summarize(s->samples, s->n, &st));
            s->stop = stats_should_stop(&a->opt.rule, &st, s->timed_ms, s->elapsed_ms, &s->converged);
            all_stop &= s->stop;
        }
        if (all_stop) break;
    }
    for (int k = 0; k < NSIDES; k++) {
        struct side *s = &sides[k];
        if (!s->timing) continue;
        int rc = side_cmd(s, deadline_s(a, STEP_PLAIN), "finish %d", s->converged);
        if (rc == AB_LOST) return mode_lost(ab, k, variant, m, "finishing its row", label, done, total);
        ATTN_TRY(rc);
        if (!reply_is(s, "ok")) return unexpected(s, "finish");
        s->owed &= ~bit;
    }
    (*done)++;
    if (a->opt.quiet) return ATTN_OK;
    double mb = sides[0].timing ? median_of(&sides[0]) : 0, mc = sides[1].timing ? median_of(&sides[1]) : 0;
    fprintf(stderr, "[%zu/%zu] %s %s", *done, total, label, attn_mode_name(mode));
    if (mb > 0 && mc > 0)
        fprintf(stderr, "  base %.4g ms  cand %.4g ms  cand/base %.4f  (%zu + %zu samples)\n", mb,
                mc, mc / mb, sides[0].n, sides[1].n);
    else
        fprintf(stderr, "  base %s  cand %s\n", mb > 0 ? "timed" : "not timed",
                mc > 0 ? "timed" : "not timed");
    return ATTN_OK;
}

/* Every row of one variant at the point under way, on every side. */
static int run_variant(struct ab *ab, const char *variant, const char *label, size_t *done,
                       size_t total)
{
    const struct options *o = &ab->a.opt;
    for (int k = 0; k < NSIDES; k++) {
        struct side *s = &ab->sides[k];
        s->owed = (1u << o->nmodes) - 1;
        s->opened = s->timing = s->absent = false;
    }
    for (int k = 0; k < NSIDES; k++)
        if (ab->sides[k].owed) ATTN_TRY(open_variant(ab, k, variant)); /* none owed: written by a loss */
    for (int k = 0; k < NSIDES; k++)
        if (!ab->sides[k].absent) ab->sides[k].planned += (size_t)o->nmodes;
    for (int m = 0; m < o->nmodes; m++) {
        for (int k = 0; k < NSIDES; k++) /* a side restarted in an earlier mode */
            if (!ab->sides[k].opened && (ab->sides[k].owed & (1u << m)))
                ATTN_TRY(open_variant(ab, k, variant));
        ATTN_TRY(time_mode(ab, variant, m, label, done, total));
    }
    for (int k = 0; k < NSIDES; k++) {
        struct side *s = &ab->sides[k];
        if (!s->opened) continue;
        s->opened = false;
        int rc = side_cmd(s, deadline_s(&ab->a, STEP_PLAIN), "close");
        if (rc == AB_LOST) ATTN_TRY(side_lost(ab, k, variant, 0, "teardown"));
        else if (rc != ATTN_OK) return rc;
        else if (!reply_is(s, "ok")) return unexpected(s, "close");
    }
    return ATTN_OK;
}

/* "batch=8 heads=16 seq=1024 dim=64 causal=1 dtype=bf16": a point in grid
 * syntax; kv_heads= and varlen= only when grouped or ragged, so that a base
 * revision from before those keys still reads the points it can run. */
static void point_spec(const struct attn_problem *p, char *buf, size_t len)
{
    char kv[32] = "", varlen[ATTN_VARLEN_MAX + 8] = "";
    if (attn_kv_heads(p) != p->heads) snprintf(kv, sizeof kv, " kv_heads=%d", attn_kv_heads(p));
    if (attn_is_varlen(p)) snprintf(varlen, sizeof varlen, " varlen=%s", p->varlen);
    snprintf(buf, len, "batch=%d heads=%d%s seq=%d dim=%d causal=%d dtype=%s%s", p->batch, p->heads, kv,
             p->seq_len, p->head_dim, p->causal ? 1 : 0, attn_dtype_name(p->dtype), varlen);
}

static int sweep(struct ab *ab)
{
    const struct options *o = &ab->a.opt;
    uint64_t seed = o->seed ? o->seed : (uint64_t)time(NULL) * 1000003u + (uint64_t)getpid();
    size_t done = 0, total = o->grid.count * (size_t)o->nvariants * (size_t)o->nmodes;
    for (size_t i = 0; i < o->grid.count; i++) {
        const struct attn_problem *p = &o->grid.points[i];
        char label[ATTN_LABEL_MAX + 64], plabel[ATTN_LABEL_MAX];
        point_spec(p, ab->spec, sizeof ab->spec);
        ab->point_seed = seed + 7919u * i;
        attn_problem_label(p, plabel, sizeof plabel);
        for (int k = 0; k < NSIDES; k++) {
            struct side *s = &ab->sides[k];
            int rc = side_cmd(s, deadline_s(&ab->a, STEP_PLAIN), "point %llu %s", ab->point_seed, ab->spec);
            if (rc == AB_LOST) rc = side_lost(ab, k, NULL, 0, "preparing the point"); /* sent again */
            else if (rc == ATTN_OK && !reply_is(s, "ok")) rc = unexpected(s, "point");
            ATTN_TRY(rc);
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
 * partial nor the published name taken). */
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
            (size_t)snprintf(ab->final_dir, sizeof ab->final_dir, "%s/%s", parent, ab->id) >=
                sizeof ab->final_dir)
            return ATTN_FAIL(ATTN_ERR_INPUT, "path too long: '%s'", parent);
        if (access(ab->final_dir, F_OK) == 0) continue;
        if (mkdir(ab->dir, 0755) == 0) {
            ab->made_dir = true;
            return ATTN_OK;
        }
        if (errno != EEXIST)
            return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", ab->dir, strerror(errno));
    }
    return ATTN_FAIL(ATTN_ERR_INPUT, "no free A/B run id in '%s'", parent);
}

/* Records each side's plan in its .env, gates the pair (gate.txt beside
 * it, its files named where they will be), and moves it to its published
 * name: the pair appears whole or not at all. */
static int publish(struct ab *ab, int *code)
{
    char published[NSIDES][1400];
    for (int k = 0; k < NSIDES; k++) {
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

static int run(struct ab *ab, int *code)
{
    const struct ab_args *a = &ab->a;
    if (a->thresholds) { /* a typo found now, not after the run */
        struct gate_thresholds t;
        ATTN_TRY(gate_thresholds_read(a->thresholds, &t));
    }
    const double limit = deadline_s(a, STEP_PLAIN);
    for (int k = 0; k < NSIDES; k++) ATTN_TRY(side_spawn(&ab->sides[k], &a->opt));
    for (int k = 0; k < NSIDES; k++) {
        struct side *s = &ab->sides[k];
        int rc = side_hello(s, limit);
        if (rc == AB_LOST)
            return ATTN_FAIL(ATTN_ERR_INPUT, "the %s side (%s) did not start: %s", s->name, s->bin, s->why);
        ATTN_TRY(rc);
    }
    if (strcmp(ab->sides[0].gpu, ab->sides[1].gpu) != 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "the base worker sees GPU '%s', the cand worker '%s'",
                         ab->sides[0].gpu, ab->sides[1].gpu);
    char parent[1024];
    if (a->out_dir) snprintf(parent, sizeof parent, "%s", a->out_dir);
    else snprintf(parent, sizeof parent, "results/%s/ab", ab->sides[0].gpu);
    ATTN_TRY(make_run_dir(ab, parent));
    fprintf(stderr, "ab: %s: base %s (%s) vs cand %s (%s), one GPU (%s), into %s/\n", ab->id,
            ab->sides[0].rev, ab->sides[0].bin, ab->sides[1].rev, ab->sides[1].bin,
            ab->sides[0].gpu, ab->final_dir);
    for (int k = 0; k < NSIDES; k++) {
        struct side *s = &ab->sides[k];
        snprintf(s->run_id, sizeof s->run_id, "%s-%s", ab->id, s->name);
        int rc = side_cmd(s, limit, "open %s %s %s", ab->dir, s->run_id, ab->id);
        if (rc == AB_LOST)
            return ATTN_FAIL(ATTN_ERR_INPUT, "the %s side (%s): %s when asked to open its run",
                             s->name, s->bin, s->why);
        ATTN_TRY(rc);
        if (!reply_is(s, "ok") || !s->line[2]) return unexpected(s, "open");
        snprintf(s->csv, sizeof s->csv, "%s", s->line + 3);
    }
    ATTN_TRY(sweep(ab));
    for (int k = 0; k < NSIDES; k++) side_stop(&ab->sides[k]);
    return publish(ab, code);
}

int main(int argc, char **argv)
{
    static struct ab ab = {.sides = {{.name = "base", .from = -1}, {.name = "cand", .from = -1}}};
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
    if (rc == ATTN_OK) {
        ab.sides[0].bin = ab.a.base_bin;
        ab.sides[1].bin = ab.a.cand_bin;
        rc = run(&ab, &code);
    }
    if (rc != ATTN_OK) fprintf(stderr, "ab: %s\n", attn_error_message());
    for (int k = 0; k < NSIDES; k++) {
        struct side *s = &ab.sides[k];
        if (rc == ATTN_ERR_INTERRUPTED && s->pid > 0) kill(-s->pid, SIGINT);
        side_stop(s);
        side_free(s);
    }
    if (ab.made_dir && !ab.published)
        fprintf(stderr, "ab: stopped before both sides had finished every row: what was measured "
                        "is in %s/ (not gated; make regress passes over it)\n", ab.dir);
    grid_free(&ab.a.opt.grid);
    if (rc == ATTN_ERR_INTERRUPTED || attn_interrupted) return 130;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ab: writing the report to stdout failed: %s\n", strerror(errno));
        return 2;
    }
    return rc != ATTN_OK ? 2 : code;
}

/* supervise.c — the watchdog (supervise.h): the supervisor's loop over
 * child processes, and the child's messages to it. */
#include "supervise.h"
#include "resume.h"
#include "../common/errors.h"
#include "../common/results_read.h"
#include "../common/schema.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ child side */

static int parent_fd = -1;

void supervised_attach(int fd)
{
    parent_fd = fd;
    signal(SIGPIPE, SIG_IGN); /* a gone supervisor is an error return, not death */
}

bool supervised(void) { return parent_fd >= 0; }

static int send_text(const char *text, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(parent_fd, text + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            /* the sweep goes on unwatched rather than stopping */
            fprintf(stderr, "attnbench: lost the watchdog (%s); rows are no longer timed out\n",
                    n < 0 ? strerror(errno) : "closed");
            parent_fd = -1;
            return ATTN_OK;
        }
        done += (size_t)n;
    }
    return ATTN_OK;
}

int supervised_run(const char *csv_path)
{
    if (!supervised()) return ATTN_OK;
    if (strchr(csv_path, '\n'))
        return ATTN_FAIL(ATTN_ERR_INPUT, "the results path holds a line end");
    char msg[1300];
    int n = snprintf(msg, sizeof msg, "run %s\n", csv_path);
    if (n < 0 || (size_t)n >= sizeof msg) return ATTN_FAIL(ATTN_ERR_INPUT, "results path too long");
    return send_text(msg, (size_t)n);
}

int supervised_arm(const struct csv_line *rows, int n)
{
    if (!supervised()) return ATTN_OK;
    char head[32];
    int len = snprintf(head, sizeof head, "arm %d\n", n);
    ATTN_TRY(send_text(head, (size_t)len));
    for (int i = 0; i < n && supervised(); i++) ATTN_TRY(send_text(rows[i].text, rows[i].len));
    return ATTN_OK;
}

int supervised_disarm(void) { return supervised() ? send_text("disarm\n", 7) : ATTN_OK; }

/* ------------------------------------------------------- supervisor side */

#define MAX_ARMED 16
#define MAX_MESSAGE (2 * CSV_LINE_MAX)

/* a signal to pass on to the child; and whether the user asked to stop at
 * all (no fresh child is started then) */
static volatile sig_atomic_t pending_signal, stopping;
static void on_signal(int sig)
{
    pending_signal = sig;
    stopping = 1;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* What the supervisor knows of its child. */
struct watch {
    char csv_path[1300];           /* "" until the child said it */
    char *armed[MAX_ARMED];        /* the rows at stake */
    int narmed;
    double armed_at;
    char *pending[MAX_ARMED];      /* an `arm` being received */
    int npending, want;
    char buf[MAX_MESSAGE];         /* a message not yet ended */
    size_t len;
};

static void free_lines(char **lines, int *n)
{
    for (int i = 0; i < *n; i++) free(lines[i]);
    *n = 0;
}

/* One message line from the child. */
static int take_line(struct watch *w, const char *line)
{
    if (w->want > w->npending) {
        char *copy = strdup(line);
        if (!copy) return ATTN_FAIL(ATTN_ERR, "out of host memory");
        w->pending[w->npending++] = copy;
        if (w->npending == w->want) {
            free_lines(w->armed, &w->narmed);
            memcpy(w->armed, w->pending, sizeof w->pending);
            w->narmed = w->npending;
            w->npending = w->want = 0;
            w->armed_at = now_s();
        }
        return ATTN_OK;
    }
    int n;
    if (!strncmp(line, "run ", 4)) {
        snprintf(w->csv_path, sizeof w->csv_path, "%s", line + 4);
    } else if (sscanf(line, "arm %d", &n) == 1 && n >= 1 && n <= MAX_ARMED) {
        w->want = n;
    } else if (!strcmp(line, "disarm")) {
        free_lines(w->armed, &w->narmed);
    } else {
        return ATTN_FAIL(ATTN_ERR, "watchdog: the runner sent '%.60s', which is no message", line);
    }
    return ATTN_OK;
}

/* Reads what the child sent; *eof when it closed its end. */
static int take_input(struct watch *w, int fd, bool *eof)
{
    if (w->len >= sizeof w->buf) return ATTN_FAIL(ATTN_ERR, "watchdog: a message too long");
    const size_t room = sizeof w->buf - w->len;
    ssize_t n = read(fd, w->buf + w->len, room);
    if (n < 0) return errno == EINTR || errno == EAGAIN ? ATTN_OK : ATTN_FAIL(ATTN_ERR, "watchdog: %s", strerror(errno));
    if (n == 0) {
        *eof = true;
        return ATTN_OK;
    }
    w->len += (size_t)n;
    char *start = w->buf, *nl;
    while ((nl = memchr(start, '\n', w->len - (size_t)(start - w->buf)))) {
        *nl = '\0';
        ATTN_TRY(take_line(w, start));
        start = nl + 1;
    }
    w->len -= (size_t)(start - w->buf);
    memmove(w->buf, start, w->len);
    if (w->len == sizeof w->buf) return ATTN_FAIL(ATTN_ERR, "watchdog: a message too long");
    return ATTN_OK;
}

enum outcome { CHILD_EXITED, CHILD_DIED, CHILD_TIMED_OUT };

/* Watches the child until it ends or its armed rows run past limit_s. *status
 * is its exit code (CHILD_EXITED) or the signal that ended it. */
static int watch_child(pid_t pid, int fd, double limit_s, struct watch *w, enum outcome *out,
                       int *status)
{
    bool eof = false;
    int rc = ATTN_OK;
    while (!eof && rc == ATTN_OK) {
        if (pending_signal) {
            kill(pid, pending_signal);
            pending_signal = 0;
        }
        int timeout_ms = -1;
        if (w->narmed) {
            double left = w->armed_at + limit_s - now_s();
            if (left <= 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                *out = CHILD_TIMED_OUT;
                return ATTN_OK;
            }
            timeout_ms = (int)ceil(left * 1000);
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, timeout_ms);
        if (r < 0 && errno != EINTR) rc = ATTN_FAIL(ATTN_ERR, "watchdog: poll: %s", strerror(errno));
        if (r > 0) rc = take_input(w, fd, &eof);
    }
    if (rc != ATTN_OK) kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        if (pending_signal) kill(pid, pending_signal), pending_signal = 0;
    if (WIFSIGNALED(st)) {
        *out = CHILD_DIED;
        *status = WTERMSIG(st);
    } else {
        *out = CHILD_EXITED;
        *status = WEXITSTATUS(st);
    }
    return rc;
}

/* The armed rows into the run with `reason`, after the run's files are cut
 * back to their whole rows; a row the child wrote itself before it ended is
 * not written twice. *written counts the rows added. */
static int write_armed(const struct watch *w, const char *reason, int *written)
{
    *written = 0;
    struct result_set rows;
    ATTN_TRY(resume_trim(w->csv_path, &rows));
    int fd = open(w->csv_path, O_WRONLY | O_APPEND);
    int rc = fd < 0 ? ATTN_FAIL(ATTN_ERR, "%s: %s", w->csv_path, strerror(errno)) : ATTN_OK;
    for (int i = 0; i < w->narmed && rc == ATTN_OK; i++) {
        char copy[CSV_LINE_MAX], label[256];
        char *fields[COL_COUNT + 1];
        snprintf(copy, sizeof copy, "%s", w->armed[i]);
        int n = csv_split(copy, fields, COL_COUNT + 1);
        struct result_key k;
        rc = n < 0 ? ATTN_FAIL(ATTN_ERR, "watchdog: a malformed row from the runner")
                   : results_line_key(fields, n, "watchdog", &k);
        if (rc != ATTN_OK || results_find(&rows, &k)) continue;
        fields[COL_REASON] = (char *)reason;
        struct csv_line line;
        csv_line_init(&line);
        for (int c = 0; c < n; c++) csv_add_str(&line, fields[c]);
        rc = csv_line_end(&line);
        if (rc == ATTN_OK) rc = csv_append(fd, &line);
        if (rc == ATTN_OK) {
            (*written)++;
            fprintf(stderr, "attnbench: watchdog: %s: %s\n", result_key_label(&k, label, sizeof label),
                    reason);
        }
    }
    if (fd >= 0) close(fd);
    results_free(&rows);
    return rc;
}

/* The run's directory and id from DIR/RUN_ID.csv. */
static void split_run_path(const char *csv, char *dir, size_t dlen, char *id, size_t ilen)
{
    const char *slash = strrchr(csv, '/');
    const char *base = slash ? slash + 1 : csv;
    snprintf(dir, dlen, "%.*s", slash ? (int)(slash - csv) : 1, slash ? csv : ".");
    size_t n = strlen(base);
    snprintf(id, ilen, "%.*s", n > 4 ? (int)(n - 4) : (int)n, base);
}

int supervise(const char *exe, char *const argv[], double limit_s)
{
    int argc = 0;
    while (argv[argc]) argc++;
    char **cargv = calloc((size_t)argc + 8, sizeof *cargv);
    if (!cargv) {
        fprintf(stderr, "attnbench: out of host memory\n");
        return 2;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    struct watch w = {0};
    char fdarg[16], dir[1300] = "", run_id[256] = "";
    int code = 2;
    for (;;) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0) {
            fprintf(stderr, "attnbench: watchdog: pipe: %s\n", strerror(errno));
            break;
        }
        int k = 0;
        for (int i = 0; i < argc; i++) cargv[k++] = argv[i];
        snprintf(fdarg, sizeof fdarg, "%d", p[1]);
        cargv[k++] = "--supervised-fd";
        cargv[k++] = fdarg;
        if (run_id[0]) {
            cargv[k++] = "--resume";
            cargv[k++] = run_id;
            cargv[k++] = "--out";
            cargv[k++] = dir;
        }
        cargv[k] = NULL;
        pid_t pid = fork();
        if (pid == 0) {
            /* the child: its own process group (the supervisor forwards
             * signals to it), gone with its supervisor, the pipe kept open */
            setpgid(0, 0);
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            fcntl(p[1], F_SETFD, 0);
            execv(exe, cargv);
            fprintf(stderr, "attnbench: watchdog: unable to start %s: %s\n", exe, strerror(errno));
            _exit(2);
        }
        close(p[1]);
        if (pid < 0) {
            fprintf(stderr, "attnbench: watchdog: fork: %s\n", strerror(errno));
            close(p[0]);
            break;
        }
        setpgid(pid, pid);
        enum outcome out;
        int status = 0;
        int rc = watch_child(pid, p[0], limit_s, &w, &out, &status);
        close(p[0]);
        w.len = 0;
        free_lines(w.pending, &w.npending);
        w.want = 0;
        if (rc != ATTN_OK) {
            fprintf(stderr, "attnbench: %s\n", attn_error_message());
            break;
        }
        if (out == CHILD_EXITED || stopping) {
            code = out == CHILD_EXITED ? status : out == CHILD_DIED ? 128 + status : 130;
            break;
        }
        char reason[96];
        if (out == CHILD_TIMED_OUT)
            snprintf(reason, sizeof reason, "timed out after %g s", limit_s);
        else
            snprintf(reason, sizeof reason, "the runner died of signal %d (%s)", status,
                     strsignal(status));
        if (!w.csv_path[0]) {
            fprintf(stderr, "attnbench: %s before its results file existed\n", reason);
            break;
        }
        split_run_path(w.csv_path, dir, sizeof dir, run_id, sizeof run_id);
        int written = 0;
        if (w.narmed && write_armed(&w, reason, &written) != ATTN_OK) {
            fprintf(stderr, "attnbench: watchdog: %s\n", attn_error_message());
            break;
        }
        /* a fresh child is started only for progress: rows written for it */
        if (!written) {
            fprintf(stderr, "attnbench: %s %s; finished rows kept in %s (--resume %s continues "
                            "it)\n", reason, w.narmed ? "on a row already written" : "outside a row",
                    w.csv_path, run_id);
            break;
        }
        free_lines(w.armed, &w.narmed);
        fprintf(stderr, "attnbench: watchdog: going on in a fresh process (--resume %s)\n", run_id);
    }
    free_lines(w.armed, &w.narmed);
    free(cargv);
    return code;
}

/* testutil.h — what the Check suites that run the project's programs share:
 * a file read whole, and a shell command run with its exit code, stdout and
 * stderr captured. */
#ifndef ATTN_TESTUTIL_H
#define ATTN_TESTUTIL_H

/* The whole file as a malloc'd string; "" (malloc'd) when it cannot be read. */
char *slurp(const char *path);

/* A finished command: exit status, stdout and stderr. */
struct run {
    int status; /* exit code; -1 when it did not exit normally */
    char *out, *err;
};

/* Runs cmd through the shell, stdin from /dev/null, its output captured
 * through two files in dir (removed after). */
struct run run_shell(const char *cmd, const char *dir);
void run_free(struct run *);

/* The path of one of the build's programs: $ATTN_BUILD/NAME, else
 * build/NAME — the sanitizer build's suites run their build's programs. */
const char *tool_path(const char *name);

#endif

/* testutil.c — files read whole and commands run for the Check suites
 * (testutil.h). Failures to allocate abort: a test cannot go on. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *need(void *p)
{
    if (!p) {
        fputs("testutil: out of memory\n", stderr);
        abort();
    }
    return p;
}

char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return need(strdup(""));
    size_t cap = 4096, len = 0, n;
    char *buf = need(malloc(cap));
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len - 1 == 0) buf = need(realloc(buf, cap *= 2));
    }
    buf[len] = '\0';
    fclose(f);
    return buf;
}

struct run run_shell(const char *cmd, const char *dir)
{
    size_t len = strlen(cmd) + 2 * strlen(dir) + 64;
    char *full = need(malloc(len)), out[512], err[512];
    snprintf(out, sizeof out, "%s/run.stdout", dir);
    snprintf(err, sizeof err, "%s/run.stderr", dir);
    snprintf(full, len, "%s >'%s' 2>'%s' </dev/null", cmd, out, err);
    int st = system(full);
    free(full);
    struct run r = {.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1, .out = slurp(out),
                    .err = slurp(err)};
    unlink(out);
    unlink(err);
    return r;
}

void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

const char *tool_path(const char *name)
{
    /* one string per program, kept for the test program's life */
    static struct { char name[32], *path; } cache[8];
    static int n;
    for (int i = 0; i < n; i++)
        if (!strcmp(cache[i].name, name)) return cache[i].path;
    const char *dir = getenv("ATTN_BUILD");
    if (!dir || !*dir) dir = "build";
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = need(malloc(len));
    snprintf(p, len, "%s/%s", dir, name);
    if (n < 8 && strlen(name) < sizeof cache[0].name) {
        snprintf(cache[n].name, sizeof cache[n].name, "%s", name);
        cache[n++].path = p;
    }
    return p;
}

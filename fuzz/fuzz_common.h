/* fuzz_common.h — what the libFuzzer targets in fuzz/ share: one scratch
 * directory per process (under $FUZZ_TMPDIR, else /dev/shm when writable,
 * else /tmp; made once, reused by every run, removed at exit), writing a
 * file whole, and splitting an input into sections at separator lines
 * ("==samples==", "==env==").
 *
 * Header-only (static inline functions): each target is one translation
 * unit plus the project's sources, built by fuzz/Makefile.fuzz. */
#ifndef ATTN_FUZZ_COMMON_H
#define ATTN_FUZZ_COMMON_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fuzz_dir[128];

/* Removes what dir holds, its subdirectories too (the report target writes
 * out/, out/bwd/, out/page-K/...), then dir itself when rmdir_too. */
static inline void fuzz_clean_dir(const char *dir, int rmdir_too)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[512];
        struct stat st;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) fuzz_clean_dir(path, 1);
                else unlink(path);
            }
        closedir(d);
    }
    if (rmdir_too) rmdir(dir);
}

static inline void fuzz_remove_dir(void)
{
    if (fuzz_dir[0]) fuzz_clean_dir(fuzz_dir, 1);
}

/* Scratch directories of processes that are gone (a crash, a timeout or an
 * out-of-memory exit skips the atexit removal): removed, so that runs do
 * not pile them up in memory-backed /dev/shm. Another live process's
 * directory (-jobs, -fork) is left alone. */
static inline void fuzz_remove_stale(const char *base)
{
    DIR *d = opendir(base);
    if (!d) return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d))) {
        long pid;
        char rest[64];
        if (sscanf(e->d_name, "attnbench-fuzz-%ld-%63s", &pid, rest) != 2 || pid <= 0) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        snprintf(path, sizeof path, "%s/%s/out", base, e->d_name);
        fuzz_clean_dir(path, 1);
        snprintf(path, sizeof path, "%s/%s", base, e->d_name);
        fuzz_clean_dir(path, 1);
    }
    closedir(d);
}

/* The process's scratch directory, made on first use. */
static inline const char *fuzz_scratch(void)
{
    if (fuzz_dir[0]) return fuzz_dir;
    /* tmpfs when there is one: every run writes and reads files, and on a
     * disk file system that costs more than the parsing (4x fewer runs/s) */
    const char *base = getenv("FUZZ_TMPDIR");
    if (!base || !*base) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    fuzz_remove_stale(base);
    snprintf(fuzz_dir, sizeof fuzz_dir, "%.40s/attnbench-fuzz-%ld-XXXXXX", base, (long)getpid());
    if (!mkdtemp(fuzz_dir)) {
        perror("fuzz: mkdtemp");
        abort();
    }
    atexit(fuzz_remove_dir);
    return fuzz_dir;
}

/* dir/name into buf. */
static inline const char *fuzz_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", fuzz_scratch(), name);
    return buf;
}

/* Writes len bytes to path, replacing it. Aborts on failure: a harness that
 * cannot write its input tests nothing. */
static inline void fuzz_write(const char *path, const uint8_t *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

/* A section of an input. */
struct fuzz_part {
    const uint8_t *data;
    size_t len;
    int present;
};

/* Finds the first line that is exactly `sep` (then "\n" or "\r\n") in
 * data[0..len); on success *before is what precedes that line and *after
 * what follows it, and 1 is returned. */
static inline int fuzz_split_at(const uint8_t *data, size_t len, const char *sep,
                                struct fuzz_part *before, struct fuzz_part *after)
{
    /* line starts found with memchr and compared byte by byte: memcmp at
     * every offset (hooked by libFuzzer) cost a sixth of the run time */
    const size_t slen = strlen(sep);
    for (size_t at = 0; at + slen <= len;) {
        size_t i = 0;
        while (i < slen && data[at + i] == (uint8_t)sep[i]) i++;
        if (i == slen) {
            size_t end = at + slen;
            if (end < len && data[end] == '\r') end++;
            if (end == len || data[end] == '\n') {
                if (end < len) end++; /* the line end */
                *before = (struct fuzz_part){data, at, 1};
                *after = (struct fuzz_part){data + end, len - end, 1};
                return 1;
            }
        }
        const uint8_t *nl = memchr(data + at, '\n', len - at);
        if (!nl) break;
        at = (size_t)(nl - data) + 1;
    }
    *before = (struct fuzz_part){data, len, 1};
    *after = (struct fuzz_part){NULL, 0, 0};
    return 0;
}

/* Writes part to path when present, else removes path. */
static inline void fuzz_write_part(const char *path, const struct fuzz_part *p)
{
    if (p->present) fuzz_write(path, p->data, p->len);
    else unlink(path);
}

/* /dev/null for the printers, opened once. */
static inline FILE *fuzz_devnull(void)
{
    static FILE *null;
    if (!null && !(null = fopen("/dev/null", "w"))) {
        perror("/dev/null");
        abort();
    }
    return null;
}

#endif

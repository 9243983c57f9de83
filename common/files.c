/* files.c — directories made and files replaced without loss (files.h). */
#include "files.h"
#include "errors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p: creates each missing directory of path in turn. "" is refused
 * (options.c refuses it first); "/" and repeated or trailing slashes create
 * nothing extra. */
int files_mkdir_p(const char *path)
{
    char buf[1024];
    const size_t n = strlen(path);
    if (n == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "empty directory path");
    if (n >= sizeof buf) return ATTN_FAIL(ATTN_ERR_INPUT, "path too long: '%s'", path);
    memcpy(buf, path, n + 1);
    /* i runs over the string's own bytes and its terminator, never past */
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        if (buf[i - 1] == '/') continue; /* "//" or a trailing '/': made already */
        const char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create directory '%s': %s", buf,
                             strerror(errno));
        buf[i] = c;
    }
    return ATTN_OK;
}

/* Copies from → to through to.tmp, synced and renamed into place, so that to
 * is either the old file or the whole new one. */
int files_copy_atomic(const char *from, const char *to)
{
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.tmp", to);
    int in = open(from, O_RDONLY);
    if (in < 0) return ATTN_FAIL(ATTN_ERR_INPUT, "unable to open '%s': %s", from, strerror(errno));
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) {
        close(in);
        return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", tmp, strerror(errno));
    }
    char buf[65536];
    ssize_t n = 0;
    int rc = ATTN_OK;
    while (rc == ATTN_OK && (n = read(in, buf, sizeof buf)) > 0)
        for (ssize_t done = 0; done < n && rc == ATTN_OK;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w <= 0) rc = ATTN_FAIL(ATTN_ERR, "writing '%s': %s", tmp, strerror(errno));
            else done += w;
        }
    if (rc == ATTN_OK && n < 0) rc = ATTN_FAIL(ATTN_ERR, "reading '%s': %s", from, strerror(errno));
    if (rc == ATTN_OK && fsync(out) != 0) rc = ATTN_FAIL(ATTN_ERR, "writing '%s': %s", tmp, strerror(errno));
    close(in);
    if (close(out) != 0 && rc == ATTN_OK) rc = ATTN_FAIL(ATTN_ERR, "writing '%s': %s", tmp, strerror(errno));
    if (rc == ATTN_OK && rename(tmp, to) != 0)
        rc = ATTN_FAIL(ATTN_ERR, "unable to rename '%s' to '%s': %s", tmp, to, strerror(errno));
    if (rc != ATTN_OK) unlink(tmp);
    return rc;
}


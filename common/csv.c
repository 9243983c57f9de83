/* csv.c — CSV lines built, appended atomically and split back (csv.h). */
#include "csv.h"
#include "attn.h"
#include "errors.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

void csv_line_init(struct csv_line *l)
{
    l->len = 0;
    l->fields = 0;
    l->overflow = 0;
    l->text[0] = '\0';
}

static void put_char(struct csv_line *l, char c)
{
    if (l->len + 2 >= sizeof l->text) { /* keep room for '\n' and NUL */
        l->overflow = 1;
        return;
    }
    l->text[l->len++] = c;
    l->text[l->len] = '\0';
}

static bool needs_quotes(const char *s)
{
    if (!*s) return false;
    if (s[0] == ' ' || s[strlen(s) - 1] == ' ') return true;
    return strpbrk(s, ",\"\r\n") != NULL;
}

void csv_add_str(struct csv_line *l, const char *s)
{
    if (l->fields++) put_char(l, ',');
    if (!s) return;
    bool quote = needs_quotes(s);
    if (quote) put_char(l, '"');
    for (; *s; s++) {
        if (*s == '"') put_char(l, '"');
        put_char(l, *s);
    }
    if (quote) put_char(l, '"');
}

void csv_add_int(struct csv_line *l, long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    csv_add_str(l, buf);
}

void csv_add_num(struct csv_line *l, double v, int digits)
{
    char buf[64];
    if (isnan(v)) buf[0] = '\0';
    else snprintf(buf, sizeof buf, "%.*g", digits, v);
    csv_add_str(l, buf);
}

int csv_line_end(struct csv_line *l)
{
    if (l->overflow) return ATTN_FAIL(ATTN_ERR, "csv line longer than %d bytes", CSV_LINE_MAX);
    l->text[l->len++] = '\n';
    l->text[l->len] = '\0';
    return ATTN_OK;
}

int csv_write_all(int fd, const char *buf, size_t len)
{
    /* where the file ended: a write that fails part-way (a full disk) is cut
     * back to it, so the file never keeps part of a line */
    const off_t end = lseek(fd, 0, SEEK_END);
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, buf + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int err = n < 0 ? errno : ENOSPC;
            if (end >= 0 && ftruncate(fd, end) != 0)
                return ATTN_FAIL(ATTN_ERR, "unable to write results: %s; and unable to cut the "
                                           "partial line off: %s", strerror(err), strerror(errno));
            return ATTN_FAIL(ATTN_ERR, "unable to write results: %s", strerror(err));
        }
        done += (size_t)n;
    }
    return ATTN_OK;
}

int csv_append(int fd, const struct csv_line *l) { return csv_write_all(fd, l->text, l->len); }

int csv_create(const char *path, const struct csv_line *header, int *fd_out)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0644);
    if (fd < 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", path, strerror(errno));
    int rc = csv_append(fd, header);
    if (rc != ATTN_OK) {
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return ATTN_OK;
}

int csv_split(char *line, char **fields, int max)
{
    int n = 0;
    char *r = line;
    for (;;) {
        if (n == max) return -1;
        char *w = r, *start = r;
        if (*r == '"') {
            r++;
            for (;;) {
                if (!*r) return -1; /* unterminated quote */
                if (*r == '"') {
                    if (r[1] == '"') { *w++ = '"'; r += 2; continue; }
                    r++;
                    break;
                }
                *w++ = *r++;
            }
            if (*r && *r != ',') return -1; /* text after the closing quote */
        } else {
            while (*r && *r != ',') {
                if (*r == '"') return -1; /* a quote inside an unquoted field */
                *w++ = *r++;
            }
        }
        char sep = *r;
        *w = '\0';
        fields[n++] = start;
        if (!sep) return n;
        r++;
    }
}

static int file_next(void *f) { return getc_unlocked((FILE *)f); }

int csv_read_line(FILE *f, char *buf, size_t len) { return csv_read_line_from(file_next, f, buf, len); }

int csv_read_line_from(int (*next)(void *src), void *src, char *buf, size_t len)
{
    /* byte by byte: fgets cannot tell a NUL byte from the end of the line,
     * and an overlong line is skipped to its end rather than read whole */
    size_t n = 0;
    bool nul = false, overlong = false;
    int c;
    while ((c = next(src)) != EOF && c != '\n') {
        if (c == '\0') nul = true;
        if (n + 1 < len) buf[n++] = (char)c;
        else overlong = true;
    }
    if (len) buf[n] = '\0';
    if (c == EOF && n == 0 && !nul && !overlong) return 0;
    if (nul) return -3;
    if (overlong) return -1;
    if (c == EOF) return -2;
    if (n && buf[n - 1] == '\r') buf[--n] = '\0';
    return 1;
}

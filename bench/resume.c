/* resume.c — a run's files cut back to their whole rows and checked before
 * a sweep continues them (resume.h). */
#include "resume.h"
#include "../common/csv.h"
#include "../common/errors.h"
#include "../common/results.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Cuts path after its first `lines` lines: the rows the reader kept (a
 * torn last line, and rows whose samples were cut, stay out). */
static int cut_after_lines(const char *path, int lines)
{
    if (lines <= 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no whole line (not even the header)", path);
    int fd = open(path, O_RDWR);
    if (fd < 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", path, strerror(errno));
    struct stat st;
    int rc = fstat(fd, &st) == 0 ? ATTN_OK : ATTN_FAIL(ATTN_ERR, "%s: %s", path, strerror(errno));
    off_t at = 0, end = -1; /* end: just past the last line end kept */
    char buf[65536];
    int seen = 0;
    while (rc == ATTN_OK && end < 0) {
        ssize_t n = pread(fd, buf, sizeof buf, at);
        if (n < 0) rc = ATTN_FAIL(ATTN_ERR, "%s: unable to read: %s", path, strerror(errno));
        if (n <= 0) break;
        for (ssize_t i = 0; i < n && end < 0; i++)
            if (buf[i] == '\n' && ++seen == lines) end = at + i + 1;
        at += n;
    }
    if (rc == ATTN_OK && end < 0)
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: %d whole lines where its rows need %d", path, seen, lines);
    if (rc == ATTN_OK && end < st.st_size && ftruncate(fd, end) != 0)
        rc = ATTN_FAIL(ATTN_ERR, "%s: unable to cut it back to its whole rows: %s", path, strerror(errno));
    close(fd);
    return rc;
}

int resume_trim(const char *csv_path, struct result_set *rows)
{
    ATTN_TRY(results_read_run(csv_path, RESULTS_ALLOW_EMPTY, rows));
    int rc = cut_after_lines(csv_path, rows->whole_lines);
    /* rows are appended as gzip members: a plain samples file, or one that
     * holds more than the rows' samples (a cut member cannot be appended
     * to), is written anew from the rows kept; a run without one is left
     * as it is (resume_check_schema refuses it) */
    if (rc == ATTN_OK && rows->samples_path[0] && (!rows->samples_gzip || rows->samples_cut))
        rc = results_samples_rewrite(csv_path, rows);
    if (rc != ATTN_OK) results_free(rows);
    return rc;
}

int resume_check(const struct result_set *rows, const char *gpu, const char *git_rev, bool force)
{
    for (size_t i = 0; i < rows->count; i++) {
        const struct result_rec *r = &rows->rows[i];
        if (r->ab_run[0])
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: one side of the A/B run %s: an A/B run is "
                             "not resumed (run make ab again)", rows->path, r->line, r->ab_run);
        if (strcmp(r->gpu, gpu))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: measured on '%s', this GPU is '%s': a run "
                             "is continued on the model it started on", rows->path, r->line, r->gpu, gpu);
        if (!force && strcmp(r->git_rev, git_rev))
            return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: measured by revision %s, this build is %s "
                             "(--force continues it anyway)", rows->path, r->line, r->git_rev, git_rev);
    }
    return ATTN_OK;
}

int resume_env_value(const char *csv_path, const char *key, char *buf, size_t len)
{
    char path[1200];
    ATTN_TRY(results_beside_path(csv_path, ".env", path, sizeof path));
    FILE *f = fopen(path, "r");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", path, strerror(errno));
    char line[CSV_LINE_MAX];
    size_t klen = strlen(key);
    int rc, found = 0;
    while (!found && (rc = csv_read_line(f, line, sizeof line)) != 0) {
        if (rc != 1) continue; /* a line too long or torn is no key= line of ours */
        if (!strncmp(line, key, klen) && line[klen] == '=') {
            if (strlen(line + klen + 1) >= len) break;
            snprintf(buf, len, "%s", line + klen + 1);
            found = 1;
        }
    }
    fclose(f);
    return found ? ATTN_OK : ATTN_FAIL(ATTN_ERR_INPUT, "%s: no '%s=' line", path, key);
}

/* path's first line equals want's text (header and line end); path gzip
 * or plain. */
static int header_matches(const char *path, const struct csv_line *want)
{
    gzFile f = gzopen(path, "rb");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: %s", path, strerror(errno));
    char line[CSV_LINE_MAX];
    const bool same = gzgets(f, line, sizeof line) && strcmp(line, want->text) == 0;
    gzclose(f);
    if (!same)
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s:1: written with other columns than this build's (another "
                         "schema): a run is continued by a build of its own schema; start a new run",
                         path);
    return ATTN_OK;
}

int resume_check_schema(const char *csv_path, const char *samples_path)
{
    struct csv_line h;
    results_header(&h);
    ATTN_TRY(header_matches(csv_path, &h));
    results_samples_header(&h);
    return header_matches(samples_path, &h);
}

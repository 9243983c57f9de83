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

/* Cuts path after its last line end (a line a crash tore stays out). */
static int cut_after_last_line_end(const char *path)
{
    int fd = open(path, O_RDWR);
    if (fd < 0) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", path, strerror(errno));
    struct stat st;
    int rc = ATTN_OK;
    if (fstat(fd, &st) != 0) rc = ATTN_FAIL(ATTN_ERR, "%s: %s", path, strerror(errno));
    off_t end = rc == ATTN_OK ? st.st_size : 0; /* the length to keep */
    char buf[4096];
    while (rc == ATTN_OK && end > 0) {
        off_t from = end > (off_t)sizeof buf ? end - (off_t)sizeof buf : 0;
        ssize_t n = pread(fd, buf, (size_t)(end - from), from);
        if (n != end - from) {
            rc = ATTN_FAIL(ATTN_ERR, "%s: unable to read: %s", path, n < 0 ? strerror(errno) : "short read");
            break;
        }
        ssize_t i = n - 1;
        while (i >= 0 && buf[i] != '\n') i--;
        if (i >= 0) {
            end = from + i + 1;
            break;
        }
        end = from;
    }
    if (rc == ATTN_OK && end == 0)
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "%s: no whole line (not even the header)", path);
    if (rc == ATTN_OK && end < st.st_size && ftruncate(fd, end) != 0)
        rc = ATTN_FAIL(ATTN_ERR, "%s: unable to cut the torn last line off: %s", path, strerror(errno));
    close(fd);
    return rc;
}

/* Keeps the header and the first `keep` samples of the samples file: the
 * samples of the rows the CSV holds, which come first as each row's samples
 * are written just before it. */
static int cut_samples(const char *path, size_t keep)
{
    FILE *f = fopen(path, "r+");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", path, strerror(errno));
    char line[CSV_LINE_MAX];
    size_t data = 0;
    bool header = false;
    long end = 0;
    int rc;
    while ((header ? data < keep : true) && (rc = csv_read_line(f, line, sizeof line)) == 1) {
        if (line[strspn(line, " \t")] == '\0') continue;
        if (header) data++;
        header = true;
        end = ftell(f);
    }
    int out = ATTN_OK;
    if (!header || data < keep)
        out = ATTN_FAIL(ATTN_ERR_INPUT, "%s: %zu whole samples where the run's rows have %zu", path,
                        data, keep);
    else if (ftruncate(fileno(f), end) != 0)
        out = ATTN_FAIL(ATTN_ERR, "%s: unable to cut the samples of unwritten rows off: %s", path,
                        strerror(errno));
    fclose(f);
    return out;
}

int resume_trim(const char *csv_path, struct result_set *rows)
{
    ATTN_TRY(results_read_run(csv_path, RESULTS_ALLOW_EMPTY, rows));
    char spath[600];
    size_t samples = 0;
    for (size_t i = 0; i < rows->count; i++) samples += rows->rows[i].nsample_ms;
    int rc = cut_after_last_line_end(csv_path);
    if (rc == ATTN_OK) rc = results_samples_path(csv_path, spath, sizeof spath);
    if (rc == ATTN_OK) rc = cut_samples(spath, samples);
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

/* path's first line equals want's text (header and line end). */
static int header_matches(const char *path, const struct csv_line *want)
{
    FILE *f = fopen(path, "r");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: %s", path, strerror(errno));
    char line[CSV_LINE_MAX];
    const bool same = fgets(line, sizeof line, f) && strcmp(line, want->text) == 0;
    fclose(f);
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

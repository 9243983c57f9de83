/* csv.h — RFC 4180 CSV: building a line field by field, appending whole
 * lines to a file so that no reader ever sees a torn one, and splitting lines
 * back into fields (quotes, embedded commas and quotes, CRLF). */
#ifndef ATTN_CSV_H
#define ATTN_CSV_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CSV_LINE_MAX 8192

struct csv_line {
    char text[CSV_LINE_MAX];
    size_t len;
    int fields;
    int overflow; /* a field did not fit: the line must not be written */
};

void csv_line_init(struct csv_line *);
void csv_add_str(struct csv_line *, const char *); /* quoted when needed; NULL = empty */
void csv_add_int(struct csv_line *, long long);
/* %.*g with `digits` significant digits; NaN is written as an empty field. */
void csv_add_num(struct csv_line *, double, int digits);
/* Ends the line with '\n'; ATTN_ERR when it overflowed. */
int csv_line_end(struct csv_line *);

/* Appends one finished line with a single write(2), so a crash or Ctrl-C
 * leaves either the whole line or none of it. */
int csv_append(int fd, const struct csv_line *);
/* Writes len bytes at the end of fd, retrying short writes; when a write
 * fails part-way, the file is cut back to where it ended (whole lines or
 * nothing). A multi-line block (a row's samples) is passed whole. */
int csv_write_all(int fd, const char *buf, size_t len);
/* Creates path (never overwrites) and writes the header line. Returns fd. */
int csv_create(const char *path, const struct csv_line *header, int *fd_out);

/* Splits one line (without its line end) into fields, in place: quoted fields
 * are unquoted and "" becomes ". Returns the number of fields, or -1 when the
 * line is malformed (unterminated quote, text after a closing quote) or has
 * more than max fields. */
int csv_split(char *line, char **fields, int max);

/* Reads the next line of f into buf, stripping "\n" or "\r\n". Returns 1 for a
 * line, 0 at end of file, -1 for a line too long (skipped to its end), -2 for
 * a last line with no line end (torn), -3 for a line holding a NUL byte. */
int csv_read_line(FILE *f, char *buf, size_t len);
/* csv_read_line over any byte source: next(src) returns the next byte, or
 * EOF at its end (a gzip stream's reader, results_read.c). */
int csv_read_line_from(int (*next)(void *src), void *src, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif

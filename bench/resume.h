/* resume.h — a run's files brought back to their whole rows, for continuing
 * an interrupted sweep (attnbench --resume RUN_ID) and for the watchdog's
 * rows (supervise.c): the CSV is cut back to the rows the reader keeps, the
 * samples file to those rows' samples, and a run is checked against the
 * machine that is to continue it. */
#ifndef ATTN_RESUME_H
#define ATTN_RESUME_H

#include "../common/results_read.h"

#include <stdbool.h>

/* Reads csv_path (a header and no row yet is accepted) and cuts the CSV and
 * its samples file back to the rows the reader keeps (results_read): a torn
 * last line, a row whose samples were cut short and the rows after it, and
 * samples written for a row that never reached the CSV are removed. The
 * samples file is left gzipped (an older run's plain one is converted): it
 * is written anew from the rows kept whenever it holds more than their
 * samples. *rows is the run as it stands; free it with results_free. */
int resume_trim(const char *csv_path, struct result_set *rows);

/* The run may be continued here: every row measured on `gpu` (always
 * checked), by revision `git_rev` unless force, and none of it one side of
 * an A/B run. ATTN_ERR_INPUT naming the first row that is not. */
int resume_check(const struct result_set *rows, const char *gpu, const char *git_rev, bool force);

/* The run's CSV and samples file were written with this build's columns
 * (their header lines are results_header's and results_samples_header's):
 * rows of another schema must not be appended to them, --force or not.
 * ATTN_ERR_INPUT naming the file otherwise. */
int resume_check_schema(const char *csv_path, const char *samples_path);

/* The value of `key=` in a run's .env file beside csv_path into buf;
 * ATTN_ERR_INPUT when the file or the key is missing. */
int resume_env_value(const char *csv_path, const char *key, char *buf, size_t len);

#endif

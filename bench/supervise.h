/* supervise.h — the watchdog: a plain sweep runs in a child process that
 * tells its supervisor (the attnbench the user started) which rows it is
 * measuring. A row that runs past its time limit (a kernel that never ends)
 * or dies with the process (a crash) is written by the supervisor as an
 * `error` row saying so, and the sweep goes on in a fresh child that resumes
 * the run (--resume): one bad row costs that row, not the sweep.
 *
 * Protocol, child to supervisor, lines on a pipe (the child's fd is named by
 * --supervised-fd):
 *   run CSV_PATH            the run's file, once it exists
 *   arm N                   followed by N CSV lines: the rows at stake, as
 *                           results_format wrote them with status `error`;
 *                           the supervisor fills in their reason
 *   disarm                  those rows were written (or are no longer due)
 */
#ifndef ATTN_SUPERVISE_H
#define ATTN_SUPERVISE_H

#include "../common/csv.h"

#include <stdbool.h>

/* Supervisor: runs `exe` with argv (argv[0] included, NULL-terminated) plus
 * `--supervised-fd N` until it ends; after a row timed out (row_timeout_s)
 * or the child died while rows were at stake, writes those rows and starts
 * exe again with `--resume RUN_ID --out DIR` added. Returns the exit code the
 * user gets: the last child's own, or 2 when the child died outside a row
 * (nothing to write, no progress to be made by starting it again). */
int supervise(const char *exe, char *const argv[], double row_timeout_s);

/* Child side: messages go to fd (from --supervised-fd). Without a call to
 * supervised_attach, the others do nothing. */
void supervised_attach(int fd);
bool supervised(void);
int supervised_run(const char *csv_path);
int supervised_arm(const struct csv_line *rows, int n);
int supervised_disarm(void);

#endif

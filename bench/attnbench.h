/* attnbench.h — the sweep's command line as a function: the attnbench
 * executable's main, and the PyTorch peers' entry (peer_api.c), which runs
 * it inside their Python process. */
#ifndef ATTN_ATTNBENCH_H
#define ATTN_ATTNBENCH_H

#include <stdbool.h>

/* Runs attnbench with this command line; returns its exit status (attnbench
 * --help). may_fork false: no watchdog child and no A/B worker, the rows run
 * in this process (a Python process that holds PyTorch cannot be forked and
 * re-entered). */
int attnbench_main(int argc, char **argv, bool may_fork);

#endif

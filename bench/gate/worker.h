/* worker.h — one side of an A/B run: `attnbench --worker` measures what the
 * A/B driver (build/ab, ab.c) asks, a block of samples at a time, so that the
 * driver can interleave two builds on one GPU. The protocol is in ab_proto.h. */
#ifndef ATTN_WORKER_H
#define ATTN_WORKER_H

#include "../options.h"

/* Serves commands from stdin until `quit` or end of input; returns the exit
 * code (0, 2 on a runner-fatal error, 130 when interrupted). */
int worker_main(struct options *, int argc, char **argv);

#endif

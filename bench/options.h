/* options.h — attnbench's command line, parsed into one struct so that the
 * runner and the tests see the same rules. */
#ifndef ATTN_OPTIONS_H
#define ATTN_OPTIONS_H

#include "../common/attn.h"
#include "../common/grid.h"
#include "../common/stats.h"
#include "../common/timing.h"

#include <stdio.h>

#define MAX_SELECTED 32

struct options {
    bool list, help;
    struct grid grid;
    const struct attn_variant *variants[MAX_SELECTED];
    int nvariants;                   /* 0 = every registered variant */
    enum attn_mode modes[MODE_COUNT];
    int nmodes;
    const char *out_dir;             /* NULL = results/<gpu> */
    const char *grids_dir;
    struct stop_rule rule;
    enum l2_flush flush;             /* cold mode's L2 flush (timing.h): memset unless --flush */
    unsigned long long seed;         /* 0 = fresh from the clock */
    bool quiet;
    bool peak;                       /* measure the card's ceilings first */
    bool no_trace;                   /* skip the per-row traced call */
    const char *trace_dir;           /* Chrome JSON per variant × point and ops.txt; NULL none */
    bool worker;                     /* serve an A/B run on stdin/stdout (worker.h) */
    double row_timeout_s;            /* the watchdog's limit per row; 0 = no watchdog */
    int supervised_fd;               /* a watched child's pipe to its supervisor; -1 none */
    const char *resume_id;           /* continue this run (--resume, --extend); NULL: a new run */
    bool extend;                     /* --extend: add other variants' rows to resume_id */
    const char *run_id;              /* a new run's id (--run-id); NULL: its start time */
    bool force;                      /* --resume across revisions */
    int shard_index, shard_count;    /* --shard I/N: this process runs shard I of N (1/1: all) */
    bool dry_run;                    /* print the rows it would run (CSV, stdout), run nothing */
};

/* Fills *o from argv. ATTN_ERR_INPUT with a one-line message on a usage
 * error. Grids are loaded as they are named; the caller frees o->grid. */
int options_parse(struct options *o, int argc, char **argv);
void options_usage(FILE *);
/* Where --list looks for the Python peers' modules: $ATTN_PEERS_DIR when
 * set, else tools/peers of the checkout the binary (or libattnpeer.so) was
 * built in: the first directory above the binary's whose tools/peers holds
 * attnpeer.py; else
 * tools/peers under the current directory (the repository root, as for
 * bench/grids). The result is buf (a path found above the binary), the
 * variable's value or a constant. */
const char *options_peers_dir(char *buf, size_t len);

#endif

/* merge.c — build/merge: the parts of a sharded sweep (one results CSV per
 * shard, each with its samples file and .env) merged into one run.
 *
 *   build/merge --plan PLAN.csv --out DIR/RUN_ID.csv PART.csv...
 *
 * PLAN.csv is what the shards were to run: `attnbench --dry-run --shard I/N`
 * of every shard, one header (the key columns, shard, cost). The merge
 * refuses (exit 2, naming the files) parts measured on different GPU
 * models, a row in two parts, a row the plan does not hold, and parts
 * written by another schema; it writes DIR/RUN_ID.csv with every row in the
 * plan's order, RUN_ID.samples.csv.gz with each row's samples, RUN_ID.env (the
 * first part's, plus the shards) and RUN_ID.part-K.env for each part.
 * Rows the plan holds and no part does are named with their shard, the
 * rows that were measured are kept, and the exit is 1. */
#include "../../common/csv.h"
#include "../../common/errors.h"
#include "../../common/files.h"
#include "../../common/results.h"
#include "../../common/results_read.h"
#include "../../common/schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PARTS 1024

/* One planned row: its key, its shard, and the line that measured it. */
struct planned {
    struct result_key key;
    char shard[16];
    char *line;      /* the part's CSV line (with its '\n'); NULL: not measured */
    int part;        /* which part, when measured */
};

struct plan {
    struct planned *rows;
    size_t count;
    struct result_set index; /* the plan as a result set, for results_find */
};

static void usage(FILE *f)
{
    fputs("usage: build/merge --plan PLAN.csv --out DIR/RUN_ID.csv PART.csv...\n"
          "  PLAN.csv  the shards' `attnbench --dry-run --shard I/N` rows, one header\n"
          "  PART.csv  a shard's results (its .samples.csv.gz or .samples.csv and .env beside it)\n"
          "Exit: 0 every planned row merged; 1 rows missing (named, by shard; the rest\n"
          "merged); 2 refused (different GPUs, a row twice, a row not planned, bad input).\n",
          f);
}

/* The plan: key columns, shard, cost; one line per row. */
static int read_plan(const char *path, struct plan *p)
{
    FILE *f = fopen(path, "r");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", path, strerror(errno));
    char line[CSV_LINE_MAX], *fields[COL_COUNT + 4];
    int lineno = 0, rc, n;
    size_t cap = 0;
    int out = ATTN_OK;
    while (out == ATTN_OK && (rc = csv_read_line(f, line, sizeof line)) == 1) {
        lineno++;
        n = csv_split(line, fields, COL_COUNT + 4);
        if (lineno == 1) {
            if (n != RESULT_KEY_LAST - RESULT_KEY_FIRST + 3 || strcmp(fields[0], result_column_names[RESULT_KEY_FIRST]))
                out = ATTN_FAIL(ATTN_ERR_INPUT, "%s:1: not a plan (attnbench --dry-run's header)", path);
            continue;
        }
        if (n != RESULT_KEY_LAST - RESULT_KEY_FIRST + 3) {
            out = ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: %d fields where a plan row has %d", path, lineno, n,
                            RESULT_KEY_LAST - RESULT_KEY_FIRST + 3);
            break;
        }
        if (p->count == cap) {
            cap = cap ? 2 * cap : 256;
            struct planned *grown = realloc(p->rows, cap * sizeof *grown);
            if (!grown) {
                out = ATTN_FAIL(ATTN_ERR, "out of host memory");
                break;
            }
            p->rows = grown;
        }
        struct planned *r = &p->rows[p->count];
        memset(r, 0, sizeof *r);
        /* the key columns in schema order, as results_line_key reads a row */
        char *row[COL_COUNT];
        for (int c = 0; c < COL_COUNT; c++) row[c] = "";
        for (int c = RESULT_KEY_FIRST; c <= RESULT_KEY_LAST; c++) row[c] = fields[c - RESULT_KEY_FIRST];
        char where[600];
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        out = results_line_key(row, COL_COUNT, where, &r->key);
        snprintf(r->shard, sizeof r->shard, "%s", fields[RESULT_KEY_LAST - RESULT_KEY_FIRST + 1]);
        if (out == ATTN_OK) p->count++;
    }
    if (out == ATTN_OK && rc != 0) out = ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: a line too long, torn or with a NUL", path, lineno + 1);
    if (out == ATTN_OK && p->count == 0) out = ATTN_FAIL(ATTN_ERR_INPUT, "%s: no planned row", path);
    fclose(f);
    return out;
}

/* The plan's rows by key, through the reader's index: a result set whose
 * rows carry the plan's keys. */
static int index_plan(struct plan *p, const char *plan_path)
{
    p->index.rows = calloc(p->count, sizeof *p->index.rows);
    if (!p->index.rows) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    p->index.count = p->count;
    for (size_t i = 0; i < p->count; i++) p->index.rows[i].key = p->rows[i].key;
    const struct result_rec *dup;
    ATTN_TRY(results_index(&p->index, &dup));
    if (dup) {
        char label[256];
        return ATTN_FAIL(ATTN_ERR_INPUT, "%s: %s is planned twice", plan_path,
                         result_key_label(&dup->key, label, sizeof label));
    }
    return ATTN_OK;
}

static struct planned *plan_find(struct plan *p, const struct result_key *k)
{
    const struct result_rec *r = results_find(&p->index, k);
    return r ? &p->rows[r - p->index.rows] : NULL;
}

/* One part: checked by the reader (numbers, statuses, samples; kept in
 * *set for the merged samples file), then its raw lines of the rows the
 * reader kept attached to the plan's rows. */
static int take_part(struct plan *p, const char *path, int part, char gpu[64], const char **gpu_from,
                     struct result_set *set_out)
{
    struct result_set set;
    ATTN_TRY(results_read_run(path, RESULTS_ALLOW_EMPTY, &set));
    *set_out = set;
    int out = ATTN_OK;
    for (size_t i = 0; i < set.count && out == ATTN_OK; i++) {
        const struct result_rec *r = &set.rows[i];
        if (!gpu[0]) {
            snprintf(gpu, 64, "%s", r->gpu);
            *gpu_from = path;
        } else if (strcmp(gpu, r->gpu)) {
            out = ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: measured on '%s', %s on '%s': one run is one GPU model",
                            path, r->line, r->gpu, *gpu_from, gpu);
        }
    }
    if (out != ATTN_OK) return out;
    FILE *f = fopen(path, "r");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to open: %s", path, strerror(errno));
    char line[CSV_LINE_MAX], copy[CSV_LINE_MAX], *fields[COL_COUNT + 1];
    int lineno = 0, rc;
    while (out == ATTN_OK && lineno < set.whole_lines && (rc = csv_read_line(f, line, sizeof line)) == 1) {
        lineno++;
        if (lineno == 1) {
            struct csv_line header;
            results_header(&header);
            if (strncmp(line, header.text, header.len - 1) || strlen(line) != header.len - 1)
                out = ATTN_FAIL(ATTN_ERR_INPUT, "%s:1: the header is not this build's (another schema)", path);
            continue;
        }
        snprintf(copy, sizeof copy, "%s", line);
        int n = csv_split(copy, fields, COL_COUNT + 1);
        struct result_key k;
        char where[600];
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        if (n < 0) out = ATTN_FAIL(ATTN_ERR_INPUT, "%s: malformed line", where);
        else out = results_line_key(fields, n, where, &k);
        if (out != ATTN_OK) break;
        struct planned *r = plan_find(p, &k);
        char label[256];
        if (!r) {
            out = ATTN_FAIL(ATTN_ERR_INPUT, "%s: %s is not in the plan", where, result_key_label(&k, label, sizeof label));
        } else if (r->line) {
            out = ATTN_FAIL(ATTN_ERR_INPUT, "%s: %s was measured twice (also by part %d)", where,
                            result_key_label(&k, label, sizeof label), r->part + 1);
        } else {
            size_t len = strlen(line);
            r->line = malloc(len + 2);
            if (!r->line) out = ATTN_FAIL(ATTN_ERR, "out of host memory");
            else snprintf(r->line, len + 2, "%s\n", line);
            r->part = part;
        }
    }
    fclose(f);
    return out;
}

static void plan_free(struct plan *p)
{
    for (size_t i = 0; i < p->count; i++) free(p->rows[i].line);
    free(p->rows);
    results_free(&p->index);
    memset(p, 0, sizeof *p);
}

/* The parts' rows' samples, part after part, as the merged run's samples
 * file (beside out, the merged CSV). */
static int write_samples(const struct result_set *sets, int nparts, const char *out)
{
    struct samples_rewrite w;
    ATTN_TRY(results_samples_begin(out, &w));
    int rc = ATTN_OK;
    for (int k = 0; k < nparts && rc == ATTN_OK; k++)
        for (size_t i = 0; i < sets[k].count && rc == ATTN_OK; i++)
            rc = results_rec_samples_append(w.fd, &sets[k].rows[i]);
    if (rc != ATTN_OK) {
        results_samples_abandon(&w);
        return rc;
    }
    return results_samples_commit(&w);
}

static int copy_env(const char *part, const char *to, const char *extra)
{
    char from[1200];
    ATTN_TRY(results_beside_path(part, ".env", from, sizeof from));
    FILE *f = fopen(from, "r"), *o = fopen(to, "w");
    if (!o) {
        if (f) fclose(f);
        return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", to, strerror(errno));
    }
    if (f) {
        int c;
        while ((c = getc(f)) != EOF) putc(c, o);
        fclose(f);
    }
    if (extra) fputs(extra, o);
    return fclose(o) == 0 ? ATTN_OK : ATTN_FAIL(ATTN_ERR_INPUT, "writing '%s': %s", to, strerror(errno));
}

int main(int argc, char **argv)
{
    const char *plan_path = NULL, *out = NULL;
    char *parts[MAX_PARTS];
    int nparts = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--plan") && i + 1 < argc) {
            plan_path = argv[++i];
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            out = argv[++i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "merge: unknown option '%s' (--help)\n", argv[i]);
            return 2;
        } else if (nparts == MAX_PARTS) {
            fprintf(stderr, "merge: more than %d parts\n", MAX_PARTS);
            return 2;
        } else {
            parts[nparts++] = argv[i];
        }
    }
    size_t olen = out ? strlen(out) : 0;
    if (!plan_path || !out || !nparts || olen < 5 || strcmp(out + olen - 4, ".csv")) {
        usage(stderr);
        return 2;
    }
    struct plan plan = {0};
    char gpu[64] = "";
    const char *gpu_from = NULL;
    struct result_set *sets = calloc((size_t)nparts, sizeof *sets);
    int rc = sets ? read_plan(plan_path, &plan) : ATTN_FAIL(ATTN_ERR, "out of host memory");
    if (rc == ATTN_OK) rc = index_plan(&plan, plan_path);
    for (int k = 0; k < nparts && rc == ATTN_OK; k++) rc = take_part(&plan, parts[k], k, gpu, &gpu_from, &sets[k]);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", out);
    char *slash = strrchr(dir, '/');
    if (rc == ATTN_OK && slash) {
        *slash = '\0';
        rc = files_mkdir_p(dir);
    }
    if (rc == ATTN_OK && access(out, F_OK) == 0)
        rc = ATTN_FAIL(ATTN_ERR_INPUT, "'%s' exists already", out);
    FILE *o = rc == ATTN_OK ? fopen(out, "w") : NULL;
    if (rc == ATTN_OK && !o) rc = ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", out, strerror(errno));
    size_t merged = 0, missing = 0;
    if (rc == ATTN_OK) {
        struct csv_line header;
        results_header(&header);
        fputs(header.text, o);
        for (size_t i = 0; i < plan.count; i++)
            if (plan.rows[i].line) fputs(plan.rows[i].line, o), merged++;
            else missing++;
        if (fclose(o) != 0) rc = ATTN_FAIL(ATTN_ERR_INPUT, "writing '%s': %s", out, strerror(errno));
    }
    char epath[1200], extra[256];
    if (rc == ATTN_OK) rc = write_samples(sets, nparts, out);
    for (int k = 0; sets && k < nparts; k++) results_free(&sets[k]);
    free(sets);
    for (int k = 0; k < nparts && rc == ATTN_OK; k++) {
        char suffix[32];
        snprintf(suffix, sizeof suffix, ".part-%d.env", k + 1);
        rc = results_beside_path(out, suffix, epath, sizeof epath);
        if (rc == ATTN_OK) rc = copy_env(parts[k], epath, NULL);
    }
    if (rc == ATTN_OK) {
        rc = results_beside_path(out, ".env", epath, sizeof epath);
        snprintf(extra, sizeof extra, "merged_parts=%d\nmerged_rows=%zu\nmissing_rows=%zu\n", nparts, merged, missing);
        if (rc == ATTN_OK) rc = copy_env(parts[0], epath, extra);
    }
    /* and the merged run must read back whole (samples counts, keys) */
    struct result_set check;
    if (rc == ATTN_OK && merged) {
        rc = results_read(out, &check);
        if (rc == ATTN_OK) results_free(&check);
    }
    if (rc != ATTN_OK) {
        fprintf(stderr, "merge: %s\n", attn_error_message());
        plan_free(&plan);
        return 2;
    }
    /* the rows missing, counted by shard */
    for (size_t i = 0; i < plan.count && missing; i++) {
        if (plan.rows[i].line || plan.rows[i].shard[0] == '\0') continue;
        char shard[16];
        snprintf(shard, sizeof shard, "%s", plan.rows[i].shard);
        size_t n = 0, of = 0;
        for (size_t j = 0; j < plan.count; j++)
            if (!strcmp(plan.rows[j].shard, shard)) {
                of++;
                if (!plan.rows[j].line) n++, plan.rows[j].shard[0] = '\0';
            }
        fprintf(stderr, "merge: shard %s: %zu of its %zu rows missing (the shard failed or was cut short)\n",
                shard, n, of);
    }
    fprintf(stderr, "merge: %zu rows from %d parts into %s%s\n", merged, nparts, out,
            missing ? "; rows missing (above)" : "");
    plan_free(&plan);
    return missing ? 1 : 0;
}

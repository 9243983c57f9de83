/* merge.c — build/merge: the parts of a sharded sweep (one results CSV per
 * shard, each with its samples file and .env) merged into one run.
 *
 *   build/merge --plan PLAN.csv --out DIR/RUN_ID.csv [--aside DIR] [--mix-revisions] PART.csv...
 *
 * PLAN.csv is what the shards were to run: `attnbench --dry-run --shard I/N`
 * of every shard, one header (the key columns, shard, cost). The merge
 * refuses (exit 2, naming the files) parts measured on different GPU
 * models, parts measured by different revisions (unless --mix-revisions), a
 * row in two parts, a row the plan does not hold, and parts written by
 * another schema. It writes DIR/RUN_ID.csv with every row in the plan's
 * order, its samples file, RUN_ID.env (the first part's, plus the merge's
 * counts and every part's revision) and RUN_ID.part-K.env for each part.
 * They are written into a staging directory beside them and renamed into
 * place, the CSV last, only once the merged run reads back whole: a refused
 * merge leaves nothing behind, and the next one starts clean.
 * Rows the plan holds and no part does are named with their shard, the
 * rows that were measured are kept, and the exit is 1. An earlier merge at
 * DIR/RUN_ID.csv is refused, unless --aside names where to move it and its
 * .env says rows were missing; it is moved once this merge has passed. */
#include "../../common/csv.h"
#include "../../common/errors.h"
#include "../../common/files.h"
#include "../../common/results.h"
#include "../../common/results_read.h"
#include "../../common/schema.h"
#include "../resume.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PARTS 1024
#define REV_LIST_MAX 4096 /* a comma list of revisions, as a .env line holds it */

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

/* What one run holds once across all its parts: the first row's value and
 * where it stands; `what` names it in messages ("GPU model", "revision"). */
struct one_value {
    const char *what;
    bool seen;
    char value[64];
    char where[PATH_MAX + 16];
};

/* The merge's command line, and what it learns of the parts. */
struct merge {
    const char *plan_path, *out, *aside;
    bool mix_revisions;
    char *parts[MAX_PARTS];
    int nparts;
    struct one_value gpu, rev;
    char revs[REV_LIST_MAX];       /* every revision of the rows, first seen first */
    char (*part_revs)[REV_LIST_MAX]; /* each part's */
    struct result_set *sets;         /* each part's rows as the reader kept them, with their samples */
    size_t merged, missing;
};

static void usage(FILE *f)
{
    fputs("usage: build/merge --plan PLAN.csv --out DIR/RUN_ID.csv [--aside DIR] [--mix-revisions] PART.csv...\n"
          "  PLAN.csv         the shards' `attnbench --dry-run --shard I/N` rows, one header\n"
          "  PART.csv         a shard's results (its samples file and .env beside it)\n"
          "  --aside DIR      an earlier merge at RUN_ID.csv whose .env says rows were missing\n"
          "                   is moved into DIR once this merge has passed (else it is refused)\n"
          "  --mix-revisions  merge parts measured by different revisions (recorded in the .env)\n"
          "Exit: 0 every planned row merged; 1 rows missing (named, by shard; the rest\n"
          "merged); 2 refused (different GPUs or revisions, a row twice, a row not planned,\n"
          "bad input): nothing written.\n",
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
        char where[PATH_MAX + 16];
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

/* value is what v holds already, or the first of it. */
static int same_value(struct one_value *v, const char *value, const char *path, int line, const char *hint)
{
    if (!v->seen) {
        v->seen = true;
        snprintf(v->value, sizeof v->value, "%s", value);
        snprintf(v->where, sizeof v->where, "%s:%d", path, line);
        return ATTN_OK;
    }
    if (!strcmp(v->value, value)) return ATTN_OK;
    return ATTN_FAIL(ATTN_ERR_INPUT, "%s:%d: %s '%s' where %s has '%s': one run is one %s%s", path, line,
                     v->what, value, v->where, v->value, v->what, hint);
}

/* Adds value to a comma list unless the list holds it. */
static int add_distinct(char *list, size_t len, const char *value)
{
    const size_t n = strlen(value);
    for (const char *p = list; *p; p += strcspn(p, ","), p += *p == ',')
        if (strcspn(p, ",") == n && !strncmp(p, value, n)) return ATTN_OK;
    const size_t used = strlen(list);
    if (used + n + 2 > len) return ATTN_FAIL(ATTN_ERR_INPUT, "more revisions than a .env line holds");
    snprintf(list + used, len - used, "%s%s", used ? "," : "", value);
    return ATTN_OK;
}

/* One part: checked by the reader (numbers, statuses, samples; kept in
 * m->sets for the merged samples file) and against the other parts (GPU
 * model, revision), then the raw lines of the rows the reader kept attached
 * to the plan's rows. */
static int take_part(struct plan *p, struct merge *m, int part)
{
    const char *path = m->parts[part];
    struct result_set *kept = &m->sets[part];
    ATTN_TRY(results_read_run(path, RESULTS_ALLOW_EMPTY, kept));
    const struct result_set set = *kept;
    int out = ATTN_OK;
    for (size_t i = 0; i < set.count && out == ATTN_OK; i++) {
        const struct result_rec *r = &set.rows[i];
        out = same_value(&m->gpu, r->gpu, path, r->line, "");
        if (out == ATTN_OK && !m->mix_revisions)
            out = same_value(&m->rev, r->git_rev, path, r->line, " (--mix-revisions merges them anyway)");
        if (out == ATTN_OK) out = add_distinct(m->revs, sizeof m->revs, r->git_rev);
        if (out == ATTN_OK) out = add_distinct(m->part_revs[part], sizeof m->part_revs[part], r->git_rev);
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
        char where[PATH_MAX + 16];
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

/* The parts' rows' samples, part after part, as the samples file of the
 * merged run at csv. */
static int write_samples(const struct result_set *sets, int nparts, const char *csv)
{
    struct samples_rewrite w;
    ATTN_TRY(results_samples_begin(csv, &w));
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

/* A part's .env copied to `to`, with `extra` after it (NULL: nothing). */
static int copy_env(const char *part, const char *to, const char *extra)
{
    char from[PATH_MAX];
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

/* What the merge adds to the first part's .env: its counts, every revision
 * of the rows, each part's path and revisions, and whether mixing them was
 * allowed. A string to free. */
static char *merge_facts(const struct merge *m)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    fprintf(f, "merged_parts=%d\nmerged_rows=%zu\nmissing_rows=%zu\ngit_revs=%s\n", m->nparts, m->merged,
            m->missing, m->revs);
    for (int k = 0; k < m->nparts; k++)
        fprintf(f, "part_%d=%s\npart_%d_git_rev=%s\n", k + 1, m->parts[k], k + 1, m->part_revs[k]);
    if (m->mix_revisions) fputs("mix_revisions=1\n", f);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* The k-th side file of the merged run at csv: 0 its samples file, 1 its
 * .env, 1 + K its .part-K.env. */
static int side_file(const char *csv, int k, char *buf, size_t len)
{
    if (k == 0) return results_samples_path(csv, buf, len);
    if (k == 1) return results_beside_path(csv, ".env", buf, len);
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".part-%d.env", k - 1);
    return results_beside_path(csv, suffix, buf, len);
}

/* The files at out that this merge would write: none may be there, but for
 * an earlier merge with rows missing when --aside is given. */
static int check_targets(const struct merge *m, char *old_missing, size_t len)
{
    char path[PATH_MAX];
    old_missing[0] = '\0';
    if (access(m->out, F_OK) == 0) {
        if (!m->aside) return ATTN_FAIL(ATTN_ERR_INPUT, "'%s' exists already", m->out);
        ATTN_TRY(side_file(m->out, 1, path, sizeof path));
        if (resume_env_value(m->out, "missing_rows", old_missing, len) != ATTN_OK || !strcmp(old_missing, "0"))
            return ATTN_FAIL(ATTN_ERR_INPUT, "'%s' exists (missing_rows=%s in %s): not merged again; move it away "
                             "to merge anew", m->out, old_missing[0] ? old_missing : "unknown", path);
        if (access(m->aside, F_OK) == 0) return ATTN_FAIL(ATTN_ERR_INPUT, "--aside '%s' exists already", m->aside);
        return ATTN_OK;
    }
    for (int k = 0; k < m->nparts + 2; k++) {
        ATTN_TRY(side_file(m->out, k, path, sizeof path));
        if (access(path, F_OK) == 0)
            return ATTN_FAIL(ATTN_ERR_INPUT, "'%s' exists already, without its run '%s': move it away", path, m->out);
    }
    return ATTN_OK;
}

/* The merged run written at csv (in the staging directory): the CSV, the
 * samples, the .env files; then read back whole (samples counts, keys). */
static int write_run(const struct plan *p, struct merge *m, const char *csv)
{
    FILE *o = fopen(csv, "w");
    if (!o) return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", csv, strerror(errno));
    struct csv_line header;
    results_header(&header);
    fputs(header.text, o);
    for (size_t i = 0; i < p->count; i++)
        if (p->rows[i].line) fputs(p->rows[i].line, o), m->merged++;
        else m->missing++;
    if (fclose(o) != 0) return ATTN_FAIL(ATTN_ERR_INPUT, "writing '%s': %s", csv, strerror(errno));
    char path[PATH_MAX];
    ATTN_TRY(write_samples(m->sets, m->nparts, csv));
    for (int k = 0; k < m->nparts; k++) {
        ATTN_TRY(side_file(csv, k + 2, path, sizeof path));
        ATTN_TRY(copy_env(m->parts[k], path, NULL));
    }
    char *facts = merge_facts(m);
    if (!facts) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    int rc = side_file(csv, 1, path, sizeof path);
    if (rc == ATTN_OK) rc = copy_env(m->parts[0], path, facts);
    free(facts);
    struct result_set check;
    if (rc == ATTN_OK && m->merged) {
        if (results_read(csv, &check) == ATTN_OK) {
            results_free(&check);
        } else {
            char why[1024];
            snprintf(why, sizeof why, "%s", attn_error_message());
            rc = ATTN_FAIL(ATTN_ERR_INPUT, "the merged run does not read back whole: %s", why);
        }
    }
    return rc;
}

static int move(const char *from, const char *to)
{
    if (rename(from, to) != 0)
        return ATTN_FAIL(ATTN_ERR_INPUT, "unable to move '%s' to '%s': %s", from, to, strerror(errno));
    return ATTN_OK;
}

/* path moved into dir under its own name. */
static int move_into(const char *path, const char *dir)
{
    const char *slash = strrchr(path, '/');
    char to[PATH_MAX];
    if ((size_t)snprintf(to, sizeof to, "%s/%s", dir, slash ? slash + 1 : path) >= sizeof to)
        return ATTN_FAIL(ATTN_ERR_INPUT, "path too long: '%s/%s'", dir, path);
    return move(path, to);
}

/* The earlier merge at out (its CSV first, then whichever side files it
 * has) moved into m->aside. */
static int move_aside(const struct merge *m, const char *old_missing)
{
    ATTN_TRY(files_mkdir_p(m->aside));
    ATTN_TRY(move_into(m->out, m->aside));
    char path[PATH_MAX];
    for (int k = 0;; k++) {
        ATTN_TRY(side_file(m->out, k, path, sizeof path));
        if (access(path, F_OK) == 0) ATTN_TRY(move_into(path, m->aside));
        else if (k > 1) break; /* the .part-K.env files are numbered from 1 without a gap */
    }
    fprintf(stderr, "merge: the earlier merge (%s rows missing) moved to %s/\n", old_missing, m->aside);
    return ATTN_OK;
}

/* The staged run's files renamed to out's names, the CSV last: a reader
 * that finds the CSV finds its side files. */
static int put_in_place(const struct merge *m, const char *staged)
{
    char from[PATH_MAX], to[PATH_MAX];
    for (int k = 0; k < m->nparts + 2; k++) {
        ATTN_TRY(side_file(staged, k, from, sizeof from));
        ATTN_TRY(side_file(m->out, k, to, sizeof to));
        ATTN_TRY(move(from, to));
    }
    return move(staged, m->out);
}

/* What is left of the staging directory removed. */
static void remove_stage(const struct merge *m, const char *stage, const char *staged)
{
    char path[PATH_MAX];
    for (int k = 0; k < m->nparts + 2; k++)
        if (side_file(staged, k, path, sizeof path) == ATTN_OK) unlink(path);
    unlink(staged);
    rmdir(stage);
}

/* The staging directory beside out (DIR/RUN_ID.merging-XXXXXX) and the
 * merged CSV's path in it. */
static int make_stage(const char *out, char *stage, size_t slen, char *staged, size_t len)
{
    const char *slash = strrchr(out, '/');
    const char *name = slash ? slash + 1 : out;
    const int dirlen = slash ? (int)(slash - out) : 1;
    const char *dir = slash ? out : ".";
    if ((size_t)snprintf(stage, slen, "%.*s/%.*s.merging-XXXXXX", dirlen, dir, (int)strlen(name) - 4, name) >= slen)
        return ATTN_FAIL(ATTN_ERR_INPUT, "path too long: '%s'", out);
    if ((size_t)snprintf(staged, len, "%s/%s", stage, name) >= len)
        return ATTN_FAIL(ATTN_ERR_INPUT, "path too long: '%s'", out);
    if (!mkdtemp(stage)) return ATTN_FAIL(ATTN_ERR_INPUT, "unable to create '%s': %s", stage, strerror(errno));
    memcpy(staged, stage, strlen(stage)); /* the X's mkdtemp filled in */
    return ATTN_OK;
}

static int parse_args(int argc, char **argv, struct merge *m)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--plan") && i + 1 < argc) {
            m->plan_path = argv[++i];
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            m->out = argv[++i];
        } else if (!strcmp(argv[i], "--aside") && i + 1 < argc) {
            m->aside = argv[++i];
        } else if (!strcmp(argv[i], "--mix-revisions")) {
            m->mix_revisions = true;
        } else if (argv[i][0] == '-') {
            return ATTN_FAIL(ATTN_ERR_INPUT, "unknown option '%s' (--help)", argv[i]);
        } else if (m->nparts == MAX_PARTS) {
            return ATTN_FAIL(ATTN_ERR_INPUT, "more than %d parts", MAX_PARTS);
        } else {
            m->parts[m->nparts++] = argv[i];
        }
    }
    const size_t olen = m->out ? strlen(m->out) : 0;
    if (!m->plan_path || !m->out || !m->nparts || olen < 5 || strcmp(m->out + olen - 4, ".csv"))
        return ATTN_FAIL(ATTN_ERR_INPUT, "--plan, --out DIR/RUN_ID.csv and a part are required (--help)");
    if (m->aside && !*m->aside) return ATTN_FAIL(ATTN_ERR_INPUT, "--aside: empty path");
    return ATTN_OK;
}

/* The rows missing, counted by shard, on stderr. */
static void name_missing(struct plan *p)
{
    for (size_t i = 0; i < p->count; i++) {
        if (p->rows[i].line || p->rows[i].shard[0] == '\0') continue;
        char shard[16];
        snprintf(shard, sizeof shard, "%s", p->rows[i].shard);
        size_t n = 0, of = 0;
        for (size_t j = 0; j < p->count; j++)
            if (!strcmp(p->rows[j].shard, shard)) {
                of++;
                if (!p->rows[j].line) n++, p->rows[j].shard[0] = '\0';
            }
        fprintf(stderr, "merge: shard %s: %zu of its %zu rows missing (the shard failed or was cut short)\n",
                shard, n, of);
    }
}

/* Reads and checks everything, writes the run in a staging directory, and
 * puts it in place. */
static int merge_run(struct merge *m, struct plan *plan)
{
    m->gpu.what = "GPU model";
    m->rev.what = "revision";
    m->part_revs = calloc((size_t)m->nparts, sizeof *m->part_revs);
    m->sets = calloc((size_t)m->nparts, sizeof *m->sets);
    if (!m->part_revs || !m->sets) return ATTN_FAIL(ATTN_ERR, "out of host memory");
    ATTN_TRY(read_plan(m->plan_path, plan));
    ATTN_TRY(index_plan(plan, m->plan_path));
    for (int k = 0; k < m->nparts; k++) ATTN_TRY(take_part(plan, m, k));
    char old_missing[32];
    ATTN_TRY(check_targets(m, old_missing, sizeof old_missing));
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", m->out);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    const bool made_dir = slash && dir[0] && access(dir, F_OK) != 0;
    if (made_dir) ATTN_TRY(files_mkdir_p(dir));
    char stage[PATH_MAX], staged[PATH_MAX];
    int rc = make_stage(m->out, stage, sizeof stage, staged, sizeof staged);
    if (rc == ATTN_OK) {
        rc = write_run(plan, m, staged);
        if (rc == ATTN_OK && old_missing[0]) rc = move_aside(m, old_missing);
        if (rc == ATTN_OK) rc = put_in_place(m, staged);
        remove_stage(m, stage, staged);
    }
    if (rc != ATTN_OK && made_dir) rmdir(dir); /* a refused merge leaves no trace */
    return rc;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
    struct merge m = {0};
    struct plan plan = {0};
    int rc = parse_args(argc, argv, &m);
    if (rc == ATTN_OK) rc = merge_run(&m, &plan);
    free(m.part_revs);
    for (int k = 0; m.sets && k < m.nparts; k++) results_free(&m.sets[k]);
    free(m.sets);
    if (rc != ATTN_OK) {
        fprintf(stderr, "merge: %s\n", attn_error_message());
        plan_free(&plan);
        return 2;
    }
    name_missing(&plan);
    fprintf(stderr, "merge: %zu rows from %d parts into %s%s\n", m.merged, m.nparts, m.out,
            m.missing ? "; rows missing (above)" : "");
    plan_free(&plan);
    return m.missing ? 1 : 0;
}

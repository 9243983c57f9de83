/* check_watchdog.c — the watchdog and resume on the CPU (Check): the
 * supervisor (bench/supervise.c) driving tests/fake_runner.sh, a child that
 * hangs, crashes or exits as each test plans; a run's files cut back to
 * their whole rows and checked before they are continued (bench/resume.c);
 * the samples files they rest on, gzipped member by member or plain, read
 * back whole and what a crash cut off kept out (common/results.c,
 * common/results_read.c); the command line's --resume, --force and
 * --row-timeout. */
#include "../bench/options.h"
#include "../bench/resume.h"
#include "../bench/supervise.h"
#include "../common/csv.h"
#include "../common/errors.h"
#include "../common/results.h"
#include "../common/results_read.h"
#include "../common/stats.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define ck_assert_message_has(needle)                                             \
    ck_assert_msg(strstr(attn_error_message(), (needle)) != NULL,                 \
                  "error message \"%s\" does not mention \"%s\"",                 \
                  attn_error_message(), (needle))

/* A scratch run: DIR/RUN.csv with a header and one skipped row, its samples
 * file, and the fake runner's files. */
static char dir[64], csv_path[128], samples_path[160];

static void put(const char *name, const char *text, const char *mode)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, mode);
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* A row of the scratch run at its one point; a timed one has three samples. */
static void make_row(const char *variant, const char *mode, const char *status, bool timed,
                     struct result_row *out)
{
    static const double samples[3] = {1.0, 1.1, 0.9};
    struct result_row r;
    results_row_init(&r);
    r.run_id = "RUN";
    r.timestamp = "2026-12-01T00:00:00Z";
    r.git_rev = "abc123";
    r.gpu = "h200";
    r.variant = variant;
    r.problem = (struct attn_problem){.batch = 1, .heads = 2, .seq_len = 64, .head_dim = 64,
                                      .causal = false, .dtype = ATTN_BF16};
    r.mode = mode;
    r.status = status;
    r.timed = timed;
    if (timed) {
        r.sample_ms = samples;
        r.nsample_ms = 3;
        ck_assert_int_eq(stats_summarize(samples, 3, &r.stats), ATTN_OK);
        r.converged = true;
        r.calls_per_sample = 1;
    }
    *out = r;
}

static void format_row(const char *variant, const char *mode, const char *status, bool timed,
                       struct csv_line *l)
{
    struct result_row r;
    make_row(variant, mode, status, timed, &r);
    ck_assert_int_eq(results_format(&r, l), ATTN_OK);
}

/* The arm message for naive's cold and hot rows. */
static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/attn_watchdog_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(csv_path, sizeof csv_path, "%s/RUN.csv", dir);
    snprintf(samples_path, sizeof samples_path, "%s/RUN.samples.csv", dir);
    struct csv_line l;
    results_header(&l);
    put("RUN.csv", l.text, "w");
    format_row("inplace", "cold", "skipped", false, &l);
    put("RUN.csv", l.text, "a");
    results_samples_header(&l);
    put("RUN.samples.csv", l.text, "w");
    put("csv", csv_path, "w");
    put("starts", "", "w");
    put("arm", "arm 2\n", "w");
    format_row("naive", "cold", "error", false, &l);
    put("arm", l.text, "a");
    format_row("naive", "hot", "error", false, &l);
    put("arm", l.text, "a");
    put("row", l.text, "w"); /* naive hot, as the child would write it */
    setenv("FAKE_DIR", dir, 1);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static int run_fake(const char *plan, double limit_s)
{
    put("plan", plan, "w");
    char *const argv[] = {"attnbench", "--point", "batch=1 heads=2 seq=64 dim=64", NULL};
    return supervise("tests/fake_runner.sh", argv, limit_s);
}

static int count_starts(void)
{
    char path[256], line[512];
    snprintf(path, sizeof path, "%s/starts", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    int n = 0;
    while (fgets(line, sizeof line, f)) n++;
    fclose(f);
    return n;
}

/* The arguments of start i (1-based). */
static void start_args(int i, char *buf, size_t len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/starts", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    for (int k = 0; k < i; k++) ck_assert_ptr_nonnull(fgets(buf, (int)len, f));
    fclose(f);
}

static const struct result_rec *row_of(const struct result_set *s, const char *variant,
                                       const char *mode)
{
    for (size_t i = 0; i < s->count; i++)
        if (!strcmp(s->rows[i].key.variant, variant) && !strcmp(s->rows[i].key.mode, mode))
            return &s->rows[i];
    return NULL;
}

/* results_read with stderr kept aside: ATTN_OK and its warnings, if any,
 * in DIR/warnings. */
static void read_quietly(const char *csv, struct result_set *s)
{
    char path[256];
    snprintf(path, sizeof path, "%s/warnings", dir);
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    dup2(fd, 2);
    close(fd);
    int rc = results_read(csv, s);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ck_assert_msg(rc == ATTN_OK, "%s does not read: %s", csv, attn_error_message());
}

/* DIR/warnings holds text. */
static bool warned(const char *text)
{
    char path[256], buf[4096];
    snprintf(path, sizeof path, "%s/warnings", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, text) != NULL;
}

/* ----------------------------------------------------------- supervisor */

START_TEST(test_hung_row_written_and_sweep_resumed)
{
    ck_assert_int_eq(run_fake("hang\nok\n", 0.5), 0);
    ck_assert_int_eq(count_starts(), 2);
    char args[512];
    start_args(2, args, sizeof args);
    char want[256];
    snprintf(want, sizeof want, "--resume RUN --out %s", dir);
    ck_assert_msg(strstr(args, want), "second start: '%s' lacks '%s'", args, want);
    ck_assert_msg(strstr(args, "--point batch=1 heads=2 seq=64 dim=64"), "second start: '%s'", args);
    struct result_set s;
    ck_assert_int_eq(results_read(csv_path, &s), ATTN_OK);
    ck_assert_int_eq(s.count, 3);
    for (int m = 0; m < 2; m++) {
        const struct result_rec *r = row_of(&s, "naive", m ? "hot" : "cold");
        ck_assert_ptr_nonnull(r);
        ck_assert_str_eq(r->status, "error");
        ck_assert_str_eq(r->reason, "timed out after 0.5 s");
    }
    results_free(&s);
}
END_TEST

START_TEST(test_crashed_row_written)
{
    ck_assert_int_eq(run_fake("crash\nok\n", 30), 0);
    ck_assert_int_eq(count_starts(), 2);
    struct result_set s;
    ck_assert_int_eq(results_read(csv_path, &s), ATTN_OK);
    const struct result_rec *r = row_of(&s, "naive", "cold");
    ck_assert_ptr_nonnull(r);
    ck_assert_msg(strstr(r->reason, "died of signal 11"), "reason '%s'", r->reason);
    results_free(&s);
}
END_TEST

START_TEST(test_death_outside_a_row_stops)
{
    ck_assert_int_eq(run_fake("outside\nok\n", 30), 2);
    ck_assert_int_eq(count_starts(), 1);
}
END_TEST

START_TEST(test_exit_code_passed_on)
{
    ck_assert_int_eq(run_fake("exit3\n", 30), 3);
    ck_assert_int_eq(count_starts(), 1);
}
END_TEST

START_TEST(test_disarmed_row_not_timed_out)
{
    ck_assert_int_eq(run_fake("disarmed\n", 0.3), 0);
    ck_assert_int_eq(count_starts(), 1);
    struct result_set s;
    ck_assert_int_eq(results_read(csv_path, &s), ATTN_OK);
    ck_assert_int_eq(s.count, 1);
    results_free(&s);
}
END_TEST

/* The same row hanging again after it was written: no progress, no loop. */
START_TEST(test_no_progress_stops)
{
    ck_assert_int_eq(run_fake("hang\nhang\nhang\nok\n", 0.3), 2);
    ck_assert_int_eq(count_starts(), 2);
}
END_TEST

/* Samples of the hung row reached the samples file before it hung: they
 * are cut off, so the run reads back whole. */
START_TEST(test_orphan_samples_cut)
{
    char line[256];
    snprintf(line, sizeof line, "naive,bf16,1,2,2,64,64,64,0,,0,uniform,fwd,cold,burst,0,1.5\nnaive,bf16,1,2,2,64,64,64,0,,0,uniform,fwd,cold,burst,1,1.4\n");
    put("samples", line, "w");
    ck_assert_int_eq(run_fake("orphan\nok\n", 0.3), 0);
    struct result_set s;
    ck_assert_int_eq(results_read(csv_path, &s), ATTN_OK);
    const struct result_rec *r = row_of(&s, "naive", "cold");
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->nsample_ms, 0);
    results_free(&s);
}
END_TEST

/* A row the child wrote itself before it hung is not written twice. */
START_TEST(test_row_not_written_twice)
{
    ck_assert_int_eq(run_fake("selfwrite\nok\n", 0.3), 0);
    struct result_set s;
    ck_assert_int_eq(results_read(csv_path, &s), ATTN_OK); /* a duplicate key would fail */
    ck_assert_int_eq(s.count, 3);
    ck_assert_str_eq(row_of(&s, "naive", "hot")->reason, "");
    ck_assert_str_eq(row_of(&s, "naive", "cold")->reason, "timed out after 0.3 s");
    results_free(&s);
}
END_TEST

/* A line the child tore is cut off before the rows are appended. */
START_TEST(test_torn_line_cut_before_rows)
{
    ck_assert_int_eq(run_fake("torn\nok\n", 0.3), 0);
    struct result_set s;
    ck_assert_int_eq(results_read(csv_path, &s), ATTN_OK);
    ck_assert_int_eq(s.count, 3);
    results_free(&s);
}
END_TEST

/* --------------------------------------------------------------- resume */

/* A run written with other columns (an older schema) is not continued:
 * this build's rows would not line up with its header. */
START_TEST(test_other_schema_refused)
{
    ck_assert_int_eq(resume_check_schema(csv_path, samples_path), ATTN_OK);
    put("RUN.samples.csv", "variant,dtype,sample,ms\n", "w");
    ck_assert_int_eq(resume_check_schema(csv_path, samples_path), ATTN_ERR_INPUT);
    ck_assert_message_has("RUN.samples.csv:1: written with other columns than this build's");
    put("RUN.csv", "run_id,variant,status\n", "w");
    ck_assert_int_eq(resume_check_schema(csv_path, samples_path), ATTN_ERR_INPUT);
    ck_assert_message_has("RUN.csv:1: written with other columns");
}
END_TEST

START_TEST(test_trim_keeps_whole_rows_and_their_samples)
{
    struct csv_line l;
    format_row("naive", "cold", "ok", true, &l);
    char key_samples[256];
    snprintf(key_samples, sizeof key_samples,
             "naive,bf16,1,2,2,64,64,64,0,,0,uniform,fwd,cold,burst,0,1\nnaive,bf16,1,2,2,64,64,64,0,,0,uniform,fwd,cold,burst,1,1.1\n"
             "naive,bf16,1,2,2,64,64,64,0,,0,uniform,fwd,cold,burst,2,0.9\n");
    put("RUN.samples.csv", key_samples, "a");
    put("RUN.csv", l.text, "a");
    /* a crash: the next row's samples written, its row torn */
    put("RUN.samples.csv", "naive,bf16,1,2,2,64,64,64,0,,0,uniform,fwd,hot,burst,0,1\nnaive,bf16,1,2,2,64,64,64,0,,0,uniform,fwd,hot,burst,1,1", "a");
    put("RUN.csv", "RUN,2026-12-01T00:0", "a");
    struct result_set s;
    ck_assert_int_eq(resume_trim(csv_path, &s), ATTN_OK);
    ck_assert_int_eq(s.count, 2);
    results_free(&s);
    /* what is left reads back with nothing torn: the samples file gzipped
     * (the plain one converted, gone), the orphan samples out */
    struct stat st;
    ck_assert_int_ne(stat(samples_path, &st), 0);
    char buf[4096], gz[200];
    snprintf(gz, sizeof gz, "%s.gz", samples_path);
    gzFile g = gzopen(gz, "rb");
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(gzdirect(g), 0);
    int got = gzread(g, buf, sizeof buf - 1);
    gzclose(g);
    ck_assert_int_gt(got, 0);
    size_t n = (size_t)got;
    buf[n] = '\0';
    ck_assert_msg(!strstr(buf, ",hot,"), "the orphan samples stayed:\n%s", buf);
    ck_assert_msg(strstr(buf, ",cold,burst,2,0.9\n"), "the row's samples went:\n%s", buf);
    ck_assert_int_eq(buf[n - 1], '\n');
    read_quietly(csv_path, &s);
    ck_assert(!s.samples_cut && s.samples_gzip);
    ck_assert_int_eq(s.rows[1].nsample_ms, 3);
    results_free(&s);
    FILE *f = fopen(csv_path, "r");
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    ck_assert_int_eq(buf[n - 1], '\n');
    ck_assert_ptr_null(strstr(buf, "2026-12-01T00:0\n"));
}
END_TEST

START_TEST(test_trim_accepts_a_run_without_rows)
{
    struct csv_line l;
    results_header(&l);
    put("RUN.csv", l.text, "w");
    put("RUN.csv", "RUN,20", "a");
    struct result_set s;
    ck_assert_int_eq(resume_trim(csv_path, &s), ATTN_OK);
    ck_assert_int_eq(s.count, 0);
    results_free(&s);
    ck_assert_int_eq(results_read(csv_path, &s), ATTN_ERR_INPUT); /* the plain reader wants rows */
    ck_assert_message_has("no data rows");
}
END_TEST

START_TEST(test_trim_refuses_a_file_without_header)
{
    put("RUN.csv", "", "w");
    struct result_set s;
    ck_assert_int_eq(resume_trim(csv_path, &s), ATTN_ERR_INPUT);
    ck_assert_message_has("RUN.csv");
}
END_TEST

START_TEST(test_check_gpu_revision_ab)
{
    struct result_set s;
    ck_assert_int_eq(resume_trim(csv_path, &s), ATTN_OK);
    ck_assert_int_eq(resume_check(&s, "h200", "abc123", false), ATTN_OK);
    ck_assert_int_eq(resume_check(&s, "h100", "abc123", true), ATTN_ERR_INPUT);
    ck_assert_message_has("measured on 'h200', this GPU is 'h100'");
    ck_assert_message_has("RUN.csv:2");
    ck_assert_int_eq(resume_check(&s, "h200", "def456", false), ATTN_ERR_INPUT);
    ck_assert_message_has("--force");
    ck_assert_int_eq(resume_check(&s, "h200", "def456", true), ATTN_OK);
    snprintf(s.rows[0].ab_run, sizeof s.rows[0].ab_run, "AB1");
    ck_assert_int_eq(resume_check(&s, "h200", "abc123", true), ATTN_ERR_INPUT);
    ck_assert_message_has("A/B");
    results_free(&s);
}
END_TEST

START_TEST(test_env_value)
{
    put("RUN.env", "schema=1\nseed=12345\nseedling=7\n", "w");
    char v[32];
    ck_assert_int_eq(resume_env_value(csv_path, "seed", v, sizeof v), ATTN_OK);
    ck_assert_str_eq(v, "12345");
    ck_assert_int_eq(resume_env_value(csv_path, "host", v, sizeof v), ATTN_ERR_INPUT);
    ck_assert_message_has("no 'host=' line");
}
END_TEST

/* -------------------------------------------------------------- samples */

static const char *const gz_modes[3] = {"cold", "hot", "graph"};

/* The scratch run as this build writes it: RUN.csv with naive's three timed
 * rows (cold, hot, graph) and RUN.samples.csv.gz (the plain one removed)
 * with the samples of the first `samples_of` of them, each its own gzip
 * member; a crash can leave the CSV ahead of the samples only when they
 * were not synced first. *member_at is where the last member starts. */
static void write_gz_run(int samples_of, off_t *member_at)
{
    ck_assert_int_eq(results_samples_remove(csv_path), ATTN_OK);
    struct csv_line l;
    results_header(&l);
    put("RUN.csv", l.text, "w");
    char gz[200];
    int fd;
    ck_assert_int_eq(results_samples_create(csv_path, gz, sizeof gz, &fd), ATTN_OK);
    for (int m = 0; m < 3; m++) {
        struct result_row r;
        make_row("naive", gz_modes[m], "ok", true, &r);
        if (m < samples_of) {
            if (member_at) *member_at = lseek(fd, 0, SEEK_END);
            ck_assert_int_eq(results_samples_append(fd, &r), ATTN_OK);
        }
        ck_assert_int_eq(results_format(&r, &l), ATTN_OK);
        put("RUN.csv", l.text, "a");
    }
    ck_assert_int_eq(close(fd), 0);
}

/* naive's graph row measured again by a resumed run: its samples appended
 * to the gzip file gz as the runner does, then its line to RUN.csv. */
static void append_graph_row(const char *gz)
{
    struct result_row r;
    struct csv_line l;
    make_row("naive", "graph", "ok", true, &r);
    int fd = open(gz, O_WRONLY | O_APPEND);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(results_samples_append(fd, &r), ATTN_OK);
    close(fd);
    ck_assert_int_eq(results_format(&r, &l), ATTN_OK);
    put("RUN.csv", l.text, "a");
}

/* A run of this build reads back whole: three rows, three samples each,
 * from the gzip members (and nothing read from a plain file). */
START_TEST(test_gzip_run_reads_back)
{
    write_gz_run(3, NULL);
    struct result_set s;
    read_quietly(csv_path, &s);
    ck_assert_int_eq(s.count, 3);
    ck_assert(s.samples_gzip && !s.samples_cut);
    ck_assert_msg(strstr(s.samples_path, "RUN.samples.csv.gz"), "read %s", s.samples_path);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(s.rows[i].nsample_ms, 3);
        ck_assert_double_eq(s.rows[i].sample_ms[1], 1.1);
    }
    results_free(&s);
}
END_TEST

/* The last row's samples cut short (the row written, its samples not
 * synced before it): the rows before it are kept, that row is left out
 * with a warning naming RUN.csv:4, and resume's trim cuts both files back
 * to the whole rows, so that the run continues; the same for an older
 * run's plain samples file. */
START_TEST(test_cut_samples_keep_the_rows_before)
{
    for (int plain = 0; plain <= 1; plain++) {
        off_t last = 0;
        write_gz_run(3, &last);
        char gz[200];
        snprintf(gz, sizeof gz, "%s.gz", samples_path);
        if (plain) { /* the same run as an older build wrote it: plain text, cut mid-line */
            char cmd[600];
            snprintf(cmd, sizeof cmd, "zcat '%s' | head -c -9 > '%s' && rm '%s'", gz, samples_path, gz);
            ck_assert_int_eq(system(cmd), 0);
        } else { /* the last member cut in the middle */
            struct stat st;
            ck_assert_int_eq(stat(gz, &st), 0);
            ck_assert_int_eq(truncate(gz, last + (st.st_size - last) / 2), 0);
        }
        struct result_set s;
        read_quietly(csv_path, &s);
        ck_assert_int_eq(s.count, 2);
        ck_assert_int_eq(s.rows[1].nsample_ms, 3);
        ck_assert_msg(warned("RUN.csv:4: ") && warned("ignored, 2 whole rows kept"), "no warning naming RUN.csv:4");
        ck_assert(s.samples_cut);
        results_free(&s);
        ck_assert_int_eq(resume_trim(csv_path, &s), ATTN_OK);
        ck_assert_int_eq(s.count, 2);
        results_free(&s);
        /* trimmed: whole, gzipped, nothing ignored */
        read_quietly(csv_path, &s);
        ck_assert_int_eq(s.count, 2);
        ck_assert(s.samples_gzip && !s.samples_cut);
        ck_assert_msg(!warned("warning"), "the trimmed run still warns");
        ck_assert_int_ne(access(samples_path, F_OK), 0);
        results_free(&s);
        /* and it continues: the row measured again is appended */
        append_graph_row(gz);
        read_quietly(csv_path, &s);
        ck_assert_int_eq(s.count, 3);
        ck_assert_int_eq(s.rows[2].nsample_ms, 3);
        results_free(&s);
    }
}
END_TEST

/* What a power loss can leave after the last whole member, when the row in
 * flight never reached the CSV: its member's place as zeros, or its first
 * byte alone. zlib's own reader takes either for trailing garbage and stops
 * there without a word, so that the members a resumed run appends after it
 * are never read; the reader names it (file:line), the trim writes the
 * samples file anew, and the row measured again reads back whole. */
START_TEST(test_samples_tail_of_zeros_repaired)
{
    for (int tail = 0; tail <= 1; tail++) {
        off_t last = 0;
        write_gz_run(3, &last);
        char gz[200], cmd[600];
        snprintf(gz, sizeof gz, "%s.gz", samples_path);
        struct stat st;
        ck_assert_int_eq(stat(gz, &st), 0);
        ck_assert_int_eq(truncate(gz, last), 0);
        int fd = open(gz, O_WRONLY | O_APPEND);
        ck_assert_int_ge(fd, 0);
        static const char zeros[4096];
        const size_t n = tail ? 1 : (size_t)(st.st_size - last);
        ck_assert_uint_le(n, sizeof zeros);
        ck_assert_int_eq(write(fd, tail ? "\x1f" : zeros, n), (ssize_t)n);
        close(fd);
        snprintf(cmd, sizeof cmd, "head -n 3 '%s' > '%s.2' && mv '%s.2' '%s'", csv_path, csv_path, csv_path, csv_path);
        ck_assert_int_eq(system(cmd), 0); /* the third row never written */
        struct result_set s;
        read_quietly(csv_path, &s);
        ck_assert_int_eq(s.count, 2);
        ck_assert_msg(warned("RUN.samples.csv.gz:") && warned("gzip data cut short or damaged"),
                      "the %s after the last member went unnamed", tail ? "byte" : "zeros");
        ck_assert(s.samples_cut);
        results_free(&s);
        ck_assert_int_eq(resume_trim(csv_path, &s), ATTN_OK);
        results_free(&s);
        append_graph_row(gz);
        read_quietly(csv_path, &s);
        ck_assert_msg(!warned("warning"), "the continued run warns");
        ck_assert_int_eq(s.count, 3);
        ck_assert_int_eq(s.rows[2].nsample_ms, 3);
        results_free(&s);
    }
}
END_TEST

/* A cut that is no crash's: a row short of samples with a whole one after
 * it is refused, naming the short row; and more samples than a row says. */
START_TEST(test_samples_disagreeing_refused)
{
    write_gz_run(3, NULL);
    char gz[200], cmd[1000];
    snprintf(gz, sizeof gz, "%s.gz", samples_path);
    /* the hot row's third sample gone, graph's whole */
    snprintf(cmd, sizeof cmd, "zcat '%s' | grep -v ',hot,burst,2,' | gzip > '%s.x' && mv '%s.x' '%s'", gz, gz, gz, gz);
    ck_assert_int_eq(system(cmd), 0);
    struct result_set s;
    ck_assert_int_eq(results_read(csv_path, &s), ATTN_ERR_INPUT);
    ck_assert_message_has("2 samples for the row at line 3 of");
    /* a sample too many */
    write_gz_run(3, NULL);
    int fd = open(gz, O_WRONLY | O_APPEND);
    static const char extra[] = "naive,bf16,1,2,2,64,64,64,0,,0,uniform,fwd,graph,burst,3,1\n";
    ck_assert_int_eq(results_samples_write(fd, extra, sizeof extra - 1), ATTN_OK);
    close(fd);
    ck_assert_int_eq(results_read(csv_path, &s), ATTN_ERR_INPUT);
    ck_assert_message_has("4 samples for the row at line 4 of");
}
END_TEST

/* A gzip of an older run's plain samples file reads back identically:
 * the committed H200 power run (16 rows, 532 samples), its samples unpacked to
 * a plain file, that file gzipped as one member, and written anew as this
 * build writes it (a member per row, in this build's columns: the run
 * predates kv_heads and varlen). */
START_TEST(test_gzip_of_a_plain_file_reads_identically)
{
    static const char run[] = "results/h200/power/20261201T020403Z";
    char cmd[800], csv[200];
    snprintf(csv, sizeof csv, "%s/P.csv", dir);
    snprintf(cmd, sizeof cmd, "cp %s.csv '%s' && gzip -dcf %s.samples.csv* > '%s/P.samples.csv'", run, csv, run, dir);
    ck_assert_int_eq(system(cmd), 0);
    struct result_set plain, zipped;
    read_quietly(csv, &plain);
    ck_assert(!plain.samples_gzip);
    size_t total = 0;
    for (size_t i = 0; i < plain.count; i++) total += plain.rows[i].nsample_ms;
    ck_assert_uint_eq(total, 532);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0) { /* gzip(1) of the file */
            snprintf(cmd, sizeof cmd, "gzip '%s/P.samples.csv'", dir);
            ck_assert_int_eq(system(cmd), 0);
        } else { /* written anew, a member per row */
            ck_assert_int_eq(results_samples_rewrite(csv, &plain), ATTN_OK);
        }
        read_quietly(csv, &zipped);
        ck_assert(zipped.samples_gzip && !zipped.samples_cut);
        ck_assert_uint_eq(zipped.count, plain.count);
        for (size_t i = 0; i < plain.count; i++) {
            ck_assert_uint_eq(zipped.rows[i].nsample_ms, plain.rows[i].nsample_ms);
            for (size_t k = 0; k < plain.rows[i].nsample_ms; k++)
                ck_assert_double_eq(zipped.rows[i].sample_ms[k], plain.rows[i].sample_ms[k]);
        }
        results_free(&zipped);
    }
    results_free(&plain);
}
END_TEST

/* ---------------------------------------------------------- command line */

static int parse(struct options *o, const char *const *args)
{
    char *argv[16] = {"attnbench"};
    int argc = 1;
    for (; args[argc - 1]; argc++) argv[argc] = (char *)args[argc - 1];
    int rc = options_parse(o, argc, argv);
    grid_free(&o->grid);
    return rc;
}

START_TEST(test_options_watchdog_and_resume)
{
    struct options o;
    const char *plain[] = {"--point", "batch=1 heads=1 seq=64 dim=64", NULL};
    ck_assert_int_eq(parse(&o, plain), ATTN_OK);
    ck_assert(o.row_timeout_s == 120);
    ck_assert_ptr_null(o.resume_id);
    ck_assert_int_eq(o.supervised_fd, -1);
    const char *resume[] = {"--point", "batch=1 heads=1 seq=64 dim=64", "--resume",
                            "20261201T000000Z", "--force", "--row-timeout", "2.5", NULL};
    ck_assert_int_eq(parse(&o, resume), ATTN_OK);
    ck_assert_str_eq(o.resume_id, "20261201T000000Z");
    ck_assert(o.force);
    ck_assert(o.row_timeout_s == 2.5);
    const char *force_alone[] = {"--force", NULL};
    ck_assert_int_eq(parse(&o, force_alone), ATTN_ERR_INPUT);
    ck_assert_message_has("--force goes with --resume");
    const char *path_id[] = {"--resume", "../results/x", NULL};
    ck_assert_int_eq(parse(&o, path_id), ATTN_ERR_INPUT);
    ck_assert_message_has("not a run id");
    const char *negative[] = {"--row-timeout", "-1", NULL};
    ck_assert_int_eq(parse(&o, negative), ATTN_ERR_INPUT);
    ck_assert_message_has("--row-timeout");
}
END_TEST

static Suite *watchdog_suite(void)
{
    Suite *s = suite_create("watchdog");
    TCase *tc = tcase_create("supervisor");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_hung_row_written_and_sweep_resumed);
    tcase_add_test(tc, test_crashed_row_written);
    tcase_add_test(tc, test_death_outside_a_row_stops);
    tcase_add_test(tc, test_exit_code_passed_on);
    tcase_add_test(tc, test_disarmed_row_not_timed_out);
    tcase_add_test(tc, test_no_progress_stops);
    tcase_add_test(tc, test_orphan_samples_cut);
    tcase_add_test(tc, test_row_not_written_twice);
    tcase_add_test(tc, test_torn_line_cut_before_rows);
    suite_add_tcase(s, tc);
    tc = tcase_create("resume");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_trim_keeps_whole_rows_and_their_samples);
    tcase_add_test(tc, test_other_schema_refused);
    tcase_add_test(tc, test_trim_accepts_a_run_without_rows);
    tcase_add_test(tc, test_trim_refuses_a_file_without_header);
    tcase_add_test(tc, test_check_gpu_revision_ab);
    tcase_add_test(tc, test_env_value);
    suite_add_tcase(s, tc);
    tc = tcase_create("samples");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_gzip_run_reads_back);
    tcase_add_test(tc, test_cut_samples_keep_the_rows_before);
    tcase_add_test(tc, test_samples_tail_of_zeros_repaired);
    tcase_add_test(tc, test_samples_disagreeing_refused);
    tcase_add_test(tc, test_gzip_of_a_plain_file_reads_identically);
    suite_add_tcase(s, tc);
    tc = tcase_create("options");
    tcase_add_test(tc, test_options_watchdog_and_resume);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(watchdog_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* compare.c — a compare run's ratios and verdicts (compare.h). */
#include "compare.h"
#include "shift.h"
#include "../../common/errors.h"
#include "../../common/schema.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

const char *const compare_verdict_names[] = {"ref", "faster", "level", "slower", ""};

static bool usable(const struct result_rec *r)
{
    return r && !strcmp(r->status, row_status_names[STATUS_OK]) && r->nsample_ms >= SHIFT_MIN_SAMPLES;
}

int compare_ratio_of(const struct result_rec *row, const struct result_rec *ref, double confidence,
                     struct compare_ratio *out)
{
    *out = (struct compare_ratio){.row = row, .ref = ref, .ratio = NAN, .lo = NAN, .hi = NAN,
                                  .verdict = VERDICT_NONE};
    if (!usable(row) || !usable(ref)) return ATTN_OK;
    if (row == ref) {
        out->ratio = out->lo = out->hi = 1;
        out->verdict = VERDICT_REF;
        return ATTN_OK;
    }
    struct shift_estimate e;
    ATTN_TRY(shift_estimate(ref->sample_ms, ref->nsample_ms, row->sample_ms, row->nsample_ms,
                            confidence, &e));
    out->ratio = e.ratio;
    out->lo = e.lo;
    out->hi = e.hi;
    out->verdict = e.hi < 1 ? VERDICT_FASTER : e.lo > 1 ? VERDICT_SLOWER : VERDICT_LEVEL;
    return ATTN_OK;
}

/* Whether a and b are one point, mode and regime (any variant). */
static bool same_cell(const struct result_key *a, const struct result_key *b)
{
    struct result_key x = *a;
    snprintf(x.variant, sizeof x.variant, "%s", b->variant);
    return result_key_equal(&x, b);
}

static void print_line(FILE *f, const char *cell, const struct compare_ratio *c)
{
    const struct result_rec *r = c->row;
    fprintf(f, "%-44s  %-22s", cell, r->key.variant); /* two spaces: the columns split there */
    if (strcmp(r->status, row_status_names[STATUS_OK]) != 0) {
        fprintf(f, " %s: %s\n", r->status, r->reason);
        return;
    }
    fprintf(f, " %10.4g %8.0f", r->ms_median, r->tflops);
    if (c->verdict == VERDICT_REF) fprintf(f, "  %-28s %s\n", "1 (reference)", "");
    else if (c->verdict == VERDICT_NONE)
        fprintf(f, "  %-28s %s\n", c->ref ? "- (too few samples)" : "- (no reference row)", "");
    else {
        char ratio[64];
        snprintf(ratio, sizeof ratio, "%.4f [%.4f, %.4f]", c->ratio, c->lo, c->hi);
        fprintf(f, "  %-28s %s\n", ratio, compare_verdict_names[c->verdict]);
    }
}

int compare_print(const struct result_set *set, const char *ref, double confidence, FILE *f,
                  size_t *slower, size_t *failed)
{
    *slower = *failed = 0;
    bool any_ref = false;
    for (size_t i = 0; i < set->count; i++) any_ref |= !strcmp(set->rows[i].key.variant, ref);
    if (!any_ref) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: no row of the reference variant '%s'", set->path, ref);
    fprintf(f, "%s: each variant's time / %s's at the same point, mode and regime: the\n"
               "Hodges-Lehmann ratio of their samples [lower, upper bound, %.0f%% each]; the variants\n"
               "measured in turns\n\n",
            set->path, ref, 100 * confidence);
    fprintf(f, "%-44s  %-22s %10s %8s  %-28s %s\n", "point, mode, regime", "variant", "ms", "TFLOP/s",
            "time / ref", "verdict");
    for (size_t i = 0; i < set->count; i++) {
        const struct result_rec *first = &set->rows[i];
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) seen = same_cell(&set->rows[j].key, &first->key);
        if (seen) continue;
        struct result_key rk = first->key;
        snprintf(rk.variant, sizeof rk.variant, "%s", ref);
        const struct result_rec *refrow = results_find(set, &rk);
        struct attn_problem p;
        result_key_problem(&first->key, &p);
        char label[ATTN_LABEL_MAX], cell[ATTN_LABEL_MAX + 32];
        snprintf(cell, sizeof cell, "%s %s %s", attn_problem_label(&p, label, sizeof label),
                 first->key.mode, first->key.regime);
        /* the reference first, then the others in the run's order */
        for (int pass = 0; pass < 2; pass++)
            for (size_t j = i; j < set->count; j++) {
                const struct result_rec *r = &set->rows[j];
                if (!same_cell(&r->key, &first->key) || (pass == 0) != (r == refrow)) continue;
                struct compare_ratio c;
                ATTN_TRY(compare_ratio_of(r, refrow, confidence, &c));
                print_line(f, cell, &c);
                cell[0] = '\0';
                *slower += c.verdict == VERDICT_SLOWER;
                *failed += !strcmp(r->status, row_status_names[STATUS_MISMATCH]) ||
                           !strcmp(r->status, row_status_names[STATUS_ERROR]);
            }
    }
    return ATTN_OK;
}

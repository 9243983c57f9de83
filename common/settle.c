/* settle.c — the sustained regime's settling rule (settle.h). */
#include "settle.h"

#include <math.h>
#include <string.h>

void settle_begin(struct settle_watch *w) { memset(w, 0, sizeof *w); }

void settle_add(struct settle_watch *w, double t_ms, double mhz, double watts)
{
    if (w->n && t_ms - w->r[(w->head + w->n - 1) % SETTLE_READINGS_MAX].t_ms < SETTLE_MIN_GAP_MS) return;
    if (!w->started) {
        w->started = true;
        w->t0_ms = t_ms;
    }
    size_t at;
    if (w->n < SETTLE_READINGS_MAX) {
        at = (w->head + w->n) % SETTLE_READINGS_MAX;
        w->n++;
    } else {
        at = w->head;
        w->head = (w->head + 1) % SETTLE_READINGS_MAX;
    }
    w->r[at] = (struct settle_reading){.t_ms = t_ms, .mhz = mhz, .watts = watts};
}

/* The readings with from < t <= to: their clock and power sums. */
struct window {
    size_t n, nw;
    double mhz_sum, w_sum;
};

static struct window window_of(const struct settle_watch *w, double from, double to)
{
    struct window s = {0};
    for (size_t i = 0; i < w->n; i++) {
        const struct settle_reading *r = &w->r[(w->head + i) % SETTLE_READINGS_MAX];
        if (!(r->t_ms > from && r->t_ms <= to) || !(r->mhz > 0)) continue;
        s.n++;
        s.mhz_sum += r->mhz;
        if (!isnan(r->watts)) {
            s.nw++;
            s.w_sum += r->watts;
        }
    }
    return s;
}

struct settle_state settle_check(const struct settle_watch *w)
{
    struct settle_state st = {.settled = false, .mhz = NAN, .watts = NAN};
    if (!w->n) return st;
    const double last = w->r[(w->head + w->n - 1) % SETTLE_READINGS_MAX].t_ms;
    st.loaded_s = (last - w->t0_ms) / 1000;
    const struct window cur = window_of(w, last - SETTLE_WINDOW_MS, last),
                        prev = window_of(w, last - 2 * SETTLE_WINDOW_MS, last - SETTLE_WINDOW_MS);
    if (cur.n) st.mhz = cur.mhz_sum / cur.n;
    if (cur.nw) st.watts = cur.w_sum / cur.nw;
    if (last - w->t0_ms < 2 * SETTLE_WINDOW_MS || cur.n < 2 || prev.n < 2) return st;
    const double prev_mhz = prev.mhz_sum / prev.n;
    if (fabs(st.mhz - prev_mhz) / prev_mhz > SETTLE_CLOCK_SPREAD) return st;
    if (cur.nw && prev.nw) {
        const double prev_w = prev.w_sum / prev.nw;
        if (fabs(st.watts - prev_w) / prev_w > SETTLE_POWER_DRIFT) return st;
    }
    st.settled = true;
    return st;
}

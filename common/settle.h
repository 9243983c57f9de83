/* settle.h — when a loaded board has settled: the rule of the sustained
 * regime (schema.h's REGIMES). A sustained row first runs its call back to
 * back and feeds the SM clock and board power read every POLL ms or so; the
 * rule says when they have settled:
 *   - at least two windows (SETTLE_WINDOW_MS each) of readings;
 *   - the last window's mean clock within SETTLE_CLOCK_SPREAD of the
 *     window before it: not rising (the board is not leaving a dip) and
 *     not falling (not still on its way down to the power cap);
 *   - where power is known, the last window's mean power within
 *     SETTLE_POWER_DRIFT of the window before it.
 * Within a window the clock may move: at the 700 W cap the power controller
 * moves it by several 15 MHz steps every few tens of ms (seen on the H200:
 * 1665–1758 MHz under one kernel), so a steady state is one of steady means,
 * not of a still clock.
 * The settled values are the last window's mean clock and power. The load's
 * own limit (--sustain S) is the caller's: a row not settled by then is
 * sampled anyway and says so (settled = 0). */
#ifndef ATTN_SETTLE_H
#define ATTN_SETTLE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SETTLE_WINDOW_MS 1000.0
#define SETTLE_CLOCK_SPREAD 0.01
#define SETTLE_POWER_DRIFT 0.02
#define SETTLE_READINGS_MAX 4096 /* a ring: 200 s of readings at one per 50 ms */
#define SETTLE_MIN_GAP_MS 20.0   /* a reading closer than this to the last one kept is dropped,
                                    so that the ring spans at least 80 s however fast they come */

struct settle_reading {
    double t_ms;     /* when, on any monotonic clock */
    double mhz;      /* SM clock; <= 0 unknown */
    double watts;    /* board power; NaN unknown */
};

struct settle_watch {
    struct settle_reading r[SETTLE_READINGS_MAX];
    size_t n;        /* readings kept (at most SETTLE_READINGS_MAX, the newest) */
    size_t head;     /* index of the oldest */
    double t0_ms;    /* the first reading's time */
    bool started;
};

struct settle_state {
    bool settled;
    double loaded_s;           /* from the first reading to the last */
    double mhz, watts;         /* the last window's means; NaN when it has none */
};

void settle_begin(struct settle_watch *);
void settle_add(struct settle_watch *, double t_ms, double mhz, double watts);
/* The rule above over the readings so far. */
struct settle_state settle_check(const struct settle_watch *);

#ifdef __cplusplus
}
#endif
#endif

/* ab_proto.h — the A/B driver ↔ worker protocol, one text line each way.
 * The worker (attnbench --worker) greets with
 *     hello AB_PROTO_VERSION GPU_SLUG GIT_REV FLUSH
 * FLUSH (from protocol 7): how it flushes the L2 before a cold sample
 * (l2_flush_name; a worker of an older protocol knows memset alone).
 * then answers each command with one line: `ok ...`, `done` (the variant's
 * rows for this step are written: skipped, oom, error, mismatch), `absent`
 * (this build has no such variant) or `fatal MESSAGE` (the worker stops).
 *     open DIR RUN_ID AB_RUN      create DIR/RUN_ID.csv, .samples.csv, .env  → ok CSV
 *     reopen DIR RUN_ID AB_RUN    append to that run, cut to its whole rows  → ok CSV   (2)
 *     open|reopen DIR RUN_ID ID compare   the same for one variant of compare
 *                                 run ID (rows' compare_run = ID)            → ok CSV   (3)
 *     point SEED SPEC...          the point's tensors from SEED (grid syntax;
 *                                 pass= in it from protocol 4, q_len= from 5,
 *                                 page= from 6)                              → ok
 *     row VARIANT MODE,...        supports, setup, validate                  → ok | done | absent
 *     mode MODE                   graph capture, warm-up                     → ok CALLS | done
 *     block MIN_SAMPLES MIN_MS    one untimed batch, then samples           → ok N MS... | done
 *     load MS                     the mode's call back to back, untimed, for
 *                                 MS; the SM clock and board power after it  → ok MHZ W | done (3)
 *     settled FLAG S MHZ W        the driver's load ended (settled 1/0
 *                                 after S s at MHZ, W): the row is sustained → ok       (3)
 *     finish CONVERGED            statistics, traced call, row written       → ok
 *     fail VARIANT MODE REASON    the row written as error, nothing run;     → ok       (2)
 *                                 MODE's timing, if under way, abandoned
 *     close                       the variant torn down                      → ok
 *     quit                        files closed, exit 0
 * The driver gives each command a deadline; a worker that misses it is
 * killed and a fresh one continues the run (reopen, point, fail) — with a
 * worker of protocol 1, which has neither reopen nor fail, the run stops
 * there instead. A sustained run (--sustain) and a compare run need
 * protocol 3, a point of pass bwd or fwd_bwd protocol 4, a decode point
 * (q_len=) protocol 5, a paged cache (page=) protocol 6. A worker of a
 * protocol outside AB_PROTO_MIN .. AB_PROTO_VERSION is refused by the
 * driver. */
#ifndef ATTN_AB_PROTO_H
#define ATTN_AB_PROTO_H

#define AB_PROTO_VERSION 7
#define AB_PROTO_MIN 1 /* the oldest a driver still speaks: a base revision from before 2 */
#define AB_LINE_MAX 4096 /* a command line; replies (samples) may be longer */

#endif

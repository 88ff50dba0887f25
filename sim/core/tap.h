/* tap.h -- taps: what a station records for the run's collectors beside a
 * request's leave and outcome (an LLM pool's inter-token gaps, a class's
 * prefix-cache tokens, a replica's steps).
 *
 * A collector offers a tap at its init (tap_offer: a pointer under a name, for
 * the run or for one pool); a station takes the taps it feeds when it is made
 * (tap_take) and keeps the pointers.  A name no collector offered is NULL: the
 * station records nothing there and pays nothing for it.  What a name's
 * pointer points to is said where it is offered; the built-in ones:
 *
 *   "itl"      stat_acc *, inter-token gaps of measured requests, ms: for the
 *              run (TAP_RUN) with one decoding pool, else one per decoding
 *              pool (run/col_itl.c)
 *   "cls_itl"  stat_acc *const *, the same per class, indexed by request.cls
 *              (run/col_classes.c)
 *   "cls_pfx"  double *, per class: [2c] prompt tokens of measured requests at
 *              their first admission to a prefix-caching pool, [2c + 1] those
 *              found cached (run/col_classes.c)
 *   "step"     const tap_step *, a replica's forward steps (run/sim.c, for
 *              `run --trace-events`: run/col_trace.c)
 *
 * A new one is a collector's file and the kind's code: the engine and the
 * stations' interface (station.h) do not change.
 */
#ifndef LATSIM_TAP_H
#define LATSIM_TAP_H

#include <stdint.h>
#include "engine/simtime.h"

#define TAP_RUN (-1)          /* tap_offer's POOL for a tap of the whole run */

typedef struct tap {
    const char *name;         /* its name (a string literal) */
    int pool;                 /* the pool index it is for, TAP_RUN: the run's */
    void *ptr;                /* what it points to (the offering collector's) */
} tap;

/* The taps of one run (the engine's; zeroed: none). */
typedef struct tap_set {
    tap *t;
    int n, cap;
} tap_set;

/* Offers PTR under NAME (a string literal) for POOL (TAP_RUN: the run).
 * Returns 0, or -1 when out of memory. */
int tap_offer(tap_set *s, const char *name, int pool, void *ptr);

/* The pointer offered under NAME for POOL, NULL when none was (or S is NULL). */
void *tap_take(const tap_set *s, const char *name, int pool);

/* Frees S's table (not what the taps point to) and empties it. */
void tap_set_free(tap_set *s);

/* Tap "step": a forward step of replica REP of pool POOL began at START for
 * DUR ns, with PREFILL_TOKENS prompt tokens of PREFILL_SEQS sequences and
 * DECODE_SEQS decoding ones. */
typedef struct tap_step {
    void (*fn)(void *ctx, int pool, int rep, simtime_t start, simtime_t dur, int64_t prefill_tokens,
               int32_t prefill_seqs, int32_t decode_seqs);
    void *ctx;                /* FN's first argument */
} tap_step;

#endif

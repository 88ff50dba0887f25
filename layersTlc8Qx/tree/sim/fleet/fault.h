/* fault.h -- failures, repairs, slow nodes and pauses of a pool's replicas or
 * servers.
 *
 * Each replica (or server) alternates up and down: its time to failure is
 * drawn from `fail_after_s` when it comes up (afresh after every repair), its
 * repair time from `repair_s`.  What happens to the requests it held is
 * `on_failure`: retry (they go back to the head of the pool's queue and start
 * again) or fail (they leave the system as failed).  A fraction `slow_fraction`
 * of the replicas (chosen once per run, from the pool's own stream) run slower
 * by `slow_factor`.  Pauses (GC, stop-the-world): every replica stalls for a
 * `pause_s` draw after each `pause_every_s` draw of running time.
 * Every draw comes from the caller's gsl_rng (one stream per replica), so adding
 * a replica does not change another's failures.
 */
#ifndef LATSIM_FAULT_H
#define LATSIM_FAULT_H

#include <stddef.h>
#include <gsl/gsl_rng.h>
#include "core/dist.h"

typedef enum { FAULT_RETRY, FAULT_FAIL } fault_policy;

typedef struct fault_cfg {
    int failures;          /* 1 when fail_after_s is given */
    dist fail_after_s;     /* time to failure from coming up, s (mean > 0) */
    dist repair_s;         /* time to repair, s (const(0): restarts at once) */
    fault_policy on_failure;   /* what happens to the requests a failing replica holds */
    double slow_fraction;  /* share of replicas that are slow, [0, 1] */
    double slow_factor;    /* their service-time multiplier, >= 1 */
    int pauses;            /* 1 when pause_every_s is given */
    dist pause_every_s;    /* running time between pauses, s (mean > 0) */
    dist pause_s;          /* pause length, s */
} fault_cfg;

/* Parses "retry" or "fail".  Returns 0 or -1. */
int fault_policy_parse(const char *s, fault_policy *p);
const char *fault_policy_name(fault_policy p);

/* Checks C.  Returns 0, or -1 with a message in ERR and the key at fault in *KEY.
 * A failure or pause distribution with mean 0 would fail (or pause) without end:
 * refused. */
int fault_check(const fault_cfg *c, const char **key, char *err, size_t errlen);

/* Seconds until the next failure of a replica that has just come up. */
double fault_next_failure_s(const fault_cfg *c, gsl_rng *r);
/* Seconds a failed replica takes to come back. */
double fault_repair_s(const fault_cfg *c, gsl_rng *r);
/* Running seconds until the next pause, and its length. */
double fault_next_pause_s(const fault_cfg *c, gsl_rng *r);
double fault_pause_len_s(const fault_cfg *c, gsl_rng *r);

/* Marks which of N replicas are slow: SLOW[i] = 1 for round(slow_fraction x N)
 * of them, chosen uniformly without replacement with R (gsl_ran_choose), else 0.
 * Returns how many are slow. */
int fault_pick_slow(const fault_cfg *c, int n, gsl_rng *r, unsigned char *slow);

/* Long-run share of time a replica is up: E[up] / (E[up] + E[repair]) (the
 * alternating renewal process); 1 without failures. */
double fault_availability(const fault_cfg *c);

/* Releases the distributions (safe on a zeroed cfg). */
void fault_free(fault_cfg *c);

#endif

/* alert.h -- the seeds' SLO alert rule over a per-interval series.
 *
 * "Alert when P99 exceeds the SLO for 15 minutes in a row": a series holds one
 * value per interval (e.g. the P99 of E2E latency in each one-minute interval);
 * an alert fires at the end of the K-th consecutive interval whose value is
 * above the threshold, and resolves at the end of the last interval of that
 * run of intervals above.  An interval without a value (NAN: nothing was
 * measured in it) is not above the threshold, as a rule over missing data
 * is not pending (Prometheus resets a pending alert the same way).
 * A value equal to the threshold meets the SLO.
 *
 * alert_step() is the rule as a state machine fed one interval at a time (in
 * constant memory); alert_scan() runs it over a whole series.
 */
#ifndef LATSIM_ALERT_H
#define LATSIM_ALERT_H

#include <stddef.h>
#include "latsim/tseries.h"   /* ALERT_DEFAULT_K, ALERT_DEFAULT_INTERVAL_S */

typedef struct alert {
    size_t first;      /* index of the first interval of the run above the threshold */
    size_t fired;      /* index of the interval at whose end the alert fired (first + K - 1) */
    size_t last;       /* index of the last interval above (the alert resolves at its end) */
    int open;          /* 1: still firing at the end of the series (last = final interval) */
} alert;

typedef struct alert_state {
    double threshold;  /* the SLO, in the series' unit (ms) */
    size_t k;          /* consecutive intervals above needed to fire, >= 1 */
    size_t index;      /* intervals seen so far */
    size_t run;        /* length of the current run of intervals above */
    int firing;        /* 1 while an alert is firing */
    alert cur;         /* the firing (or last fired) alert */
} alert_state;

/* What alert_step() saw happen at the end of the interval it was given. */
typedef enum { ALERT_NONE = 0, ALERT_FIRED = 1, ALERT_RESOLVED = 2 } alert_event;

/* Starts the rule with THRESHOLD and K (>= 1).  Returns 0, or -1 when K is 0 or
 * THRESHOLD is not a finite number. */
int alert_init(alert_state *a, double threshold, size_t k);

/* Feeds the value of the next interval.  Returns ALERT_FIRED when the alert
 * fires at this interval's end, ALERT_RESOLVED when a firing alert resolves
 * (this interval is not above; the alert ended at the previous interval's end;
 * a->cur describes it), else ALERT_NONE. */
alert_event alert_step(alert_state *a, double value);

/* Runs the rule over V[0..N-1], writing at most MAX alerts into OUT (which may
 * be NULL when MAX is 0).  An alert still firing at the end has open = 1.
 * Returns the number of alerts (which may exceed MAX: only MAX are written), or
 * (size_t) -1 when K is 0 or THRESHOLD is not finite. */
size_t alert_scan(const double *v, size_t n, double threshold, size_t k, alert *out, size_t max);

#endif

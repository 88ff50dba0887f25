/* tsalert.h -- the seeds' alert rule applied to a run's time series.
 *
 * For every [slo] term (slo.h) on the P99 or P50 of e2e or ttft (of all
 * requests, not a class), the per-interval series of that percentile
 * (tseries.h) is run through the rule of alert.h: an alert fires when the
 * value stays above the term's limit for K consecutive intervals (default 15)
 * and ends when an interval meets it again.  Times are seconds of simulated time.
 */
#ifndef LATSIM_TSALERT_H
#define LATSIM_TSALERT_H

#include <stddef.h>
#include <stdio.h>
#include "report/slo.h"
#include "run/tseries.h"

typedef struct ts_alert {
    char series[16];       /* the column, e.g. "e2e_p99_ms" */
    double limit_ms;       /* the SLO term's limit, ms */
    double since_s;        /* start of the first interval above, s */
    double fired_s;        /* end of the K-th interval above: when it fires, s */
    double until_s;        /* end of the last interval above, s (the run's end when open) */
    int open;              /* 1: still firing when the run ended */
} ts_alert;

/* The alerts of ROWS (N intervals) under the terms of SLO with K consecutive
 * intervals.  Returns 0 with *OUT (malloc'd, NULL when none) and *NOUT, or -1
 * when out of memory. */
int ts_alerts(const ts_row *rows, size_t n, const slo_spec *slo, size_t k, ts_alert **out,
              size_t *nout);

/* How many [slo] terms the rule watches (0: no alert can fire). */
int ts_alert_terms(const slo_spec *slo);

/* "alerts (P above the SLO for K intervals of S s)" and one line per alert, or
 * "alerts  none" when none fired. */
void ts_alerts_table(const ts_alert *a, size_t n, size_t k, double interval_s, FILE *out);

/* The JSON array [{"series", "limit_ms", "since_s", "fired_s", "until_s", "open"}...]. */
void ts_alerts_json(const ts_alert *a, size_t n, FILE *out);

#endif

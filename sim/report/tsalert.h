/* tsalert.h -- the seeds' alert rule applied to a run's time series.
 *
 * For every [slo] term (slo.h) on the P99 or P50 of e2e or ttft (of all
 * requests, not a class), the per-interval series of that percentile
 * (tseries.h) is run through the rule of alert.h: an alert fires when the
 * value stays above the term's limit for K consecutive intervals (default 15)
 * and ends when an interval meets it again.  Times are seconds of simulated time.
 * ts_alert and its functions are public (latsim/tseries.h).
 */
#ifndef LATSIM_TSALERT_H
#define LATSIM_TSALERT_H

#include <stddef.h>
#include <stdio.h>
#include "report/slo.h"
#include "run/tseries.h"
#include "latsim/tseries.h"   /* ts_alert and its functions: public */

#endif

/* tseries.h -- a run's time series: one row of figures per fixed interval.
 *
 * The engine reports events as they happen (an arrival, a retry, a request
 * served with its latencies, an error) into the current interval, and closes
 * each interval at its end with the gauges only it knows (queue length,
 * replicas up, utilisation).  Percentiles per interval come from two stat_acc
 * histograms (stats.h: within 0.05 %) reused for every interval, so memory is
 * those two plus one small row per interval, whatever the number of requests.
 * Intervals are [i dt, (i+1) dt) of simulated time from 0; the last one may be
 * cut short by the end of the run.
 *
 * Output: CSV (header names written with libcsv's csv_fwrite, numbers in %.9g,
 * an empty field for a figure that does not exist, e.g. a P99 of an interval in
 * which nothing was served), and the run_timeseries table of the run database
 * (store.h writes ts_row arrays in the run's transaction).  The rows and
 * what reads or writes them are public (latsim/tseries.h); this header adds
 * the recording side the engine uses.
 */
#ifndef LATSIM_TSERIES_H
#define LATSIM_TSERIES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "engine/simtime.h"
#include "latsim/tseries.h"   /* ts_row, reading and writing a series: public */

typedef struct ts_gauges {
    double queue;          /* requests waiting at the interval's end */
    double replicas;       /* replicas or servers up, time mean over the interval */
    double utilization;    /* busy share of what was up over the interval, [0, 1]; NAN unknown */
} ts_gauges;

/* A series of intervals of INTERVAL_S seconds (> 0, at least 1 ms).  Returns
 * NULL with a message in ERR for a bad interval or when out of memory. */
tseries *ts_new(double interval_s, char *err, size_t errlen);
void ts_free(tseries *ts);

/* Events of the current interval. */
void ts_arrival(tseries *ts);
void ts_retry(tseries *ts);
void ts_error(tseries *ts);
/* A request served with its E2E and TTFT (ms; TTFT < 0 or NAN: it has none). */
void ts_served(tseries *ts, double e2e_ms, double ttft_ms);

/* End of the current interval, ns: when the engine must call ts_close(). */
simtime_t ts_next_close(const tseries *ts);

/* Closes the current interval at ts_next_close(), or earlier at END (the end
 * of the run; END <= the interval's start does nothing), with gauges G.
 * Returns 0, or -1 when out of memory or past TS_MAX_INTERVALS (the row is
 * lost; later calls keep failing). */
int ts_close(tseries *ts, const ts_gauges *g);
int ts_close_at(tseries *ts, simtime_t end, const ts_gauges *g);

/* Fills G with the gauges of the interval ending now. */
typedef void (*ts_gauge_fn)(void *ctx, ts_gauges *g);

/* Closes every interval on the engine's calendar Q: an event at each interval's
 * end calls GAUGE(CTX) and ts_close().  The events are scheduled one at a time,
 * so they stop when the engine stops.  Returns 0, or -1 when an event could not
 * be scheduled (out of memory; ts_failed() then says so too). */
struct evq;
int ts_attach(tseries *ts, struct evq *q, ts_gauge_fn gauge, void *ctx);

/* 1 when a row or an event could not be stored (out of memory, or past
 * TS_MAX_INTERVALS). */
int ts_failed(const tseries *ts);
/* 1 when the series reached TS_MAX_INTERVALS rows and a further interval
 * ended: the row is lost and the attached calendar stopped (evq_stop). */
int ts_overflowed(const tseries *ts);

#endif

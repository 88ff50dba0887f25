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
 * (store.h writes ts_row arrays in the run's transaction).
 */
#ifndef LATSIM_TSERIES_H
#define LATSIM_TSERIES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "engine/simtime.h"

/* Rows a series holds at most: 10^6 intervals (11.6 days at 1 s) are 112 MB of
 * rows in memory (about 220 MB at the peak of `run`) and some 60 MB in the
 * database; more is refused before
 * the run (ts_check_count) and, should the run outlast its estimate, ends it
 * (ts_overflowed). */
#define TS_MAX_INTERVALS 1000000

typedef struct ts_gauges {
    double queue;          /* requests waiting at the interval's end */
    double replicas;       /* replicas or servers up, time mean over the interval */
    double utilization;    /* busy share of what was up over the interval, [0, 1]; NAN unknown */
} ts_gauges;

typedef struct ts_row {
    double t0_s, t1_s;          /* the interval [t0, t1), s of simulated time */
    uint64_t arrivals;          /* requests arriving (first attempts) */
    uint64_t retries;           /* further attempts of requests (client retries) */
    uint64_t served;            /* requests served */
    uint64_t errors;            /* requests failed, rejected or timed out */
    double throughput_rps;      /* served / interval length, requests/s */
    double ttft_p50_ms, ttft_p99_ms;   /* of requests served in the interval, ms; NAN if none */
    double e2e_p50_ms, e2e_p99_ms;     /* ms; NAN if none served */
    double queue;               /* as ts_gauges */
    double replicas;            /* as ts_gauges */
    double utilization;         /* as ts_gauges */
} ts_row;

typedef struct tseries tseries;

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

/* Checks that a run of about DURATION_S seconds (scenario_expected_duration_s)
 * cut into INTERVAL_S intervals stays within TS_MAX_INTERVALS.  Returns 0, or
 * -1 with a message in ERR giving the count, the bound and the shortest
 * interval that fits. */
int ts_check_count(double duration_s, double interval_s, char *err, size_t errlen);

/* The column NAME ("e2e_p99_ms", "ttft_p99_ms", "e2e_p50_ms", "ttft_p50_ms") of
 * ROWS into OUT (N values).  Returns 0, or -1 for an unknown name. */
int ts_column(const ts_row *rows, size_t n, const char *name, double *out);

size_t ts_count(const tseries *ts);
const ts_row *ts_rows(const tseries *ts);
double ts_interval_s(const tseries *ts);

/* Writes the rows as CSV with a header line to OUT.  Returns 0, or -1 with a
 * message in ERR on a write error. */
int ts_write_csv(const ts_row *rows, size_t n, FILE *out, char *err, size_t errlen);

/* The same into file PATH (replaced).  Returns 0 or -1 + ERR naming PATH. */
int ts_save_csv(const ts_row *rows, size_t n, const char *path, char *err, size_t errlen);

/* Parses an interval such as "60s", "1m", "500ms", "2h" or "60" (seconds)
 * into seconds.  Returns 0, or -1 with a message in ERR. */
int ts_parse_interval(const char *s, double *seconds, char *err, size_t errlen);

#endif

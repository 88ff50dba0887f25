/* latsim/tseries.h -- a run's time series (public): one row of figures per
 * fixed interval of simulated time, reading and writing them, and the SLO
 * alerts over them.
 *
 * A scenario with a time-series interval (scenario_set_ts_interval,
 * latsim/scenario.h) gives each run's sim_result a series (sim_result.ts):
 * intervals [i dt, (i+1) dt) of simulated time from 0, the last one maybe cut
 * short by the end of the run.  Output: CSV (numbers in %.9g, an empty field
 * for a figure that does not exist, e.g. a P99 of an interval in which nothing
 * was served) and the run_timeseries table of the run database.
 *
 * Alerts: for every [slo] term on the P99 or P50 of e2e or ttft (of all
 * requests, not a class), an alert fires when that percentile stays above the
 * term's limit for K consecutive intervals (default ALERT_DEFAULT_K) and ends
 * when an interval meets it again.  Times are seconds of simulated time.
 */
#ifndef LATSIM_PUBLIC_TSERIES_H
#define LATSIM_PUBLIC_TSERIES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "latsim/slo.h"   /* slo_spec */

/* Rows a series holds at most: 10^6 intervals (11.6 days at 1 s) are 112 MB of
 * rows in memory (about 220 MB at the peak of `run`) and some 60 MB in the
 * database; more is refused before
 * the run (ts_check_count) and, should the run outlast its estimate, ends it
 * (ts_overflowed). */
#define TS_MAX_INTERVALS 1000000

#define ALERT_DEFAULT_K 15            /* consecutive intervals, the seeds' 15 x 1 min */
#define ALERT_DEFAULT_INTERVAL_S 60.0 /* interval length, s */

typedef struct ts_row {
    double t0_s, t1_s;          /* the interval [t0, t1), s of simulated time */
    uint64_t arrivals;          /* requests arriving (first attempts) */
    uint64_t retries;           /* further attempts of requests (client retries) */
    uint64_t served;            /* requests served */
    uint64_t errors;            /* requests failed, rejected or timed out */
    double throughput_rps;      /* served / interval length, requests/s */
    double ttft_p50_ms, ttft_p99_ms;   /* of requests served in the interval, ms; NAN if none */
    double e2e_p50_ms, e2e_p99_ms;     /* ms; NAN if none served */
    double queue;               /* requests waiting at the interval's end */
    double replicas;            /* replicas or servers up, time mean over the interval */
    double utilization;         /* busy share of what was up over the interval, [0, 1]; NAN unknown */
} ts_row;

/* A series being recorded (sim_result.ts): its rows are read with ts_rows. */
typedef struct tseries tseries;

/* Checks that a run of about DURATION_S seconds (scenario_expected_duration_s)
 * cut into INTERVAL_S intervals stays within TS_MAX_INTERVALS.  Returns 0, or
 * -1 with a message in ERR giving the count, the bound and the shortest
 * interval that fits. */
int ts_check_count(double duration_s, double interval_s, char *err, size_t errlen);

/* The column NAME ("e2e_p99_ms", "ttft_p99_ms", "e2e_p50_ms", "ttft_p50_ms") of
 * ROWS into OUT (N values).  Returns 0, or -1 for an unknown name. */
int ts_column(const ts_row *rows, size_t n, const char *name, double *out);

/* TS's rows so far (ts_count of them, ts_rows; valid until TS changes or is
 * freed) and its interval, s. */
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

/* tseries.c -- per-interval time series of a run (see tseries.h): counters and
 * two reusable latency histograms for the open interval, a growing array of
 * closed rows, and their CSV form. */
#include "run/tseries.h"
#include "engine/errmsg.h"
#include "engine/evq.h"
#include "engine/stats.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct tseries {
    simtime_t dt;             /* interval length, ns */
    simtime_t t0;             /* start of the open interval, ns */
    ts_row cur;               /* counters of the open interval */
    stat_acc *e2e, *ttft;     /* latencies of the open interval, ms */
    ts_row *rows;             /* closed intervals */
    size_t n, cap;            /* rows used, allocated */
    int failed;               /* a row (or a closing event) could not be stored */
    int over;                 /* a row came past TS_MAX_INTERVALS (failed is set too) */
    evq *q;                   /* ts_attach: the calendar closing the intervals */
    ts_gauge_fn gauge;        /* ts_attach: reads the gauges */
    void *gctx;               /* its context */
};

tseries *ts_new(double interval_s, char *err, size_t errlen)
{
    if (!(interval_s >= 1e-3) || !(interval_s <= 1e9)) {
        errmsg_set(err, errlen, "interval must be between 1 ms and 1e9 s, got %g s", interval_s);
        return NULL;
    }
    tseries *ts = calloc(1, sizeof *ts);
    if (ts == NULL || (ts->e2e = stat_new()) == NULL || (ts->ttft = stat_new()) == NULL) {
        ts_free(ts);
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    ts->dt = simtime_from_s(interval_s);
    return ts;
}

void ts_free(tseries *ts)
{
    if (ts == NULL)
        return;
    stat_free(ts->e2e);
    stat_free(ts->ttft);
    free(ts->rows);
    free(ts);
}

static void catch_up(tseries *ts);

void ts_arrival(tseries *ts) { catch_up(ts); ts->cur.arrivals++; }
void ts_retry(tseries *ts)   { catch_up(ts); ts->cur.retries++; }
void ts_error(tseries *ts)   { catch_up(ts); ts->cur.errors++; }

void ts_served(tseries *ts, double e2e_ms, double ttft_ms)
{
    catch_up(ts);
    ts->cur.served++;
    stat_add(ts->e2e, e2e_ms);
    if (ttft_ms >= 0)               /* NAN and negative: no first token */
        stat_add(ts->ttft, ttft_ms);
}

simtime_t ts_next_close(const tseries *ts)
{
    return simtime_add(ts->t0, ts->dt);
}

/* Q-quantile of S, or NAN when S is empty. */
static double quantile_or_nan(const stat_acc *s, double q)
{
    return stat_count(s) > 0 ? stat_quantile(s, q) : NAN;
}

int ts_close_at(tseries *ts, simtime_t end, const ts_gauges *g)
{
    if (end > simtime_add(ts->t0, ts->dt))
        end = simtime_add(ts->t0, ts->dt);
    if (end <= ts->t0)
        return ts->failed ? -1 : 0;
    if (!ts->failed && ts->n == ts->cap) {
        size_t ncap = ts->cap ? 2 * ts->cap : 256;
        if (ncap > TS_MAX_INTERVALS) ncap = TS_MAX_INTERVALS;   /* the last doubling stops at the bound */
        ts_row *p = ts->n < TS_MAX_INTERVALS ? realloc(ts->rows, ncap * sizeof *p) : NULL;
        if (p == NULL) {
            ts->failed = 1;
            if (ts->n >= TS_MAX_INTERVALS) {     /* the run outlasted its estimate: no use going on */
                ts->over = 1;
                if (ts->q) evq_stop(ts->q);
            }
        } else {
            ts->rows = p;
            ts->cap = ncap;
        }
    }
    ts_row *r = &ts->cur;
    r->t0_s = simtime_to_s(ts->t0);
    r->t1_s = simtime_to_s(end);
    r->throughput_rps = (double) r->served / (r->t1_s - r->t0_s);
    r->ttft_p50_ms = quantile_or_nan(ts->ttft, 0.50);
    r->ttft_p99_ms = quantile_or_nan(ts->ttft, 0.99);
    r->e2e_p50_ms = quantile_or_nan(ts->e2e, 0.50);
    r->e2e_p99_ms = quantile_or_nan(ts->e2e, 0.99);
    r->queue = g ? g->queue : NAN;
    r->replicas = g ? g->replicas : NAN;
    r->utilization = g ? g->utilization : NAN;
    if (!ts->failed)
        ts->rows[ts->n++] = *r;
    /* Resetting a histogram clears all its bins: only when something was added. */
    if (stat_count(ts->e2e) > 0)
        stat_reset(ts->e2e);
    if (stat_count(ts->ttft) > 0)
        stat_reset(ts->ttft);
    memset(&ts->cur, 0, sizeof ts->cur);
    ts->t0 = end;
    return ts->failed ? -1 : 0;
}

int ts_close(tseries *ts, const ts_gauges *g)
{
    return ts_close_at(ts, simtime_add(ts->t0, ts->dt), g);
}

/* Closes the intervals that have ended by now (attached series only): an event
 * at an interval's end time belongs to the next interval, even when it runs
 * before the boundary event scheduled for that time. */
static void catch_up(tseries *ts)
{
    if (ts->q == NULL)
        return;
    simtime_t now = evq_now(ts->q);
    while (now >= ts_next_close(ts)) {
        ts_gauges g;
        ts->gauge(ts->gctx, &g);
        if (ts_close(ts, &g) != 0)
            return;
    }
}

/* The boundary event: closes what has ended (unless an event at this time
 * already did) and waits for the next end; exactly one is pending. */
static void on_boundary(evq *q, void *subject, int64_t arg)
{
    (void) arg;
    tseries *ts = subject;
    catch_up(ts);
    if (evq_at(q, ts_next_close(ts), on_boundary, ts, 0) == 0)
        ts->failed = 1;
}

int ts_attach(tseries *ts, evq *q, ts_gauge_fn gauge, void *ctx)
{
    ts->q = q;
    ts->gauge = gauge;
    ts->gctx = ctx;
    ts->t0 = evq_now(q) - evq_now(q) % ts->dt;
    if (evq_at(q, ts_next_close(ts), on_boundary, ts, 0) == 0) {
        ts->failed = 1;
        return -1;
    }
    return 0;
}

int ts_failed(const tseries *ts) { return ts->failed; }
int ts_overflowed(const tseries *ts) { return ts->over; }

int ts_check_count(double duration_s, double interval_s, char *err, size_t errlen)
{
    double n = ceil(duration_s / interval_s);
    if (!(n > TS_MAX_INTERVALS)) return 0;
    errmsg_set(err, errlen, "%g s intervals over the run's expected %.6g s of simulated time make about %.3g "
               "intervals, more than the %d a time series may hold (use an interval of %.3g s or longer)",
               interval_s, duration_s, n, TS_MAX_INTERVALS, duration_s / TS_MAX_INTERVALS);
    return -1;
}

int ts_column(const ts_row *rows, size_t n, const char *name, double *out)
{
    size_t off;
    if (strcmp(name, "e2e_p99_ms") == 0) off = offsetof(ts_row, e2e_p99_ms);
    else if (strcmp(name, "e2e_p50_ms") == 0) off = offsetof(ts_row, e2e_p50_ms);
    else if (strcmp(name, "ttft_p99_ms") == 0) off = offsetof(ts_row, ttft_p99_ms);
    else if (strcmp(name, "ttft_p50_ms") == 0) off = offsetof(ts_row, ttft_p50_ms);
    else return -1;
    for (size_t i = 0; i < n; i++)
        memcpy(&out[i], (const char *) &rows[i] + off, sizeof out[i]);
    return 0;
}

size_t ts_count(const tseries *ts) { return ts->n; }
const ts_row *ts_rows(const tseries *ts) { return ts->rows; }
double ts_interval_s(const tseries *ts) { return simtime_to_s(ts->dt); }

static const char *const COLUMNS[] = {
    "t_start_s", "t_end_s", "arrivals", "retries", "served", "errors", "throughput_rps",
    "ttft_p50_ms", "ttft_p99_ms", "e2e_p50_ms", "e2e_p99_ms", "queue", "replicas",
    "utilization",
};
#define NCOLUMNS (sizeof COLUMNS / sizeof COLUMNS[0])

/* Writes ",V" (or "," alone for NAN) to OUT. */
static void put_num(FILE *out, double v)
{
    if (isnan(v))
        fputc(',', out);
    else
        fprintf(out, ",%.9g", v);
}

int ts_write_csv(const ts_row *rows, size_t n, FILE *out, char *err, size_t errlen)
{
    for (size_t c = 0; c < NCOLUMNS; c++) {
        if (c > 0)
            fputc(',', out);
        csv_fwrite(out, COLUMNS[c], strlen(COLUMNS[c]));
    }
    fputc('\n', out);
    for (size_t i = 0; i < n; i++) {
        const ts_row *r = &rows[i];
        fprintf(out, "%.9g", r->t0_s);
        put_num(out, r->t1_s);
        fprintf(out, ",%llu,%llu,%llu,%llu", (unsigned long long) r->arrivals,
                (unsigned long long) r->retries, (unsigned long long) r->served,
                (unsigned long long) r->errors);
        put_num(out, r->throughput_rps);
        put_num(out, r->ttft_p50_ms);
        put_num(out, r->ttft_p99_ms);
        put_num(out, r->e2e_p50_ms);
        put_num(out, r->e2e_p99_ms);
        put_num(out, r->queue);
        put_num(out, r->replicas);
        put_num(out, r->utilization);
        fputc('\n', out);
    }
    if (ferror(out)) {
        errmsg_set(err, errlen, "write error");
        return -1;
    }
    return 0;
}

int ts_save_csv(const ts_row *rows, size_t n, const char *path, char *err, size_t errlen)
{
    char msg[256];
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        errmsg_set(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    int rc = ts_write_csv(rows, n, f, msg, sizeof msg);
    if (fclose(f) != 0 && rc == 0) {
        snprintf(msg, sizeof msg, "%s", strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        errmsg_set(err, errlen, "%s: cannot write: %s", path, msg);
    return rc;
}

int ts_parse_interval(const char *s, double *seconds, char *err, size_t errlen)
{
    static const struct { const char *unit; double s; } UNITS[] = {
        {"", 1}, {"s", 1}, {"ms", 1e-3}, {"m", 60}, {"min", 60}, {"h", 3600},
    };
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (s == NULL || end == s || errno || !isfinite(v)) {
        errmsg_set(err, errlen, "interval '%s' is not a duration like 60s, 1m, 500ms", s ? s : "");
        return -1;
    }
    for (size_t i = 0; i < sizeof UNITS / sizeof UNITS[0]; i++)
        if (strcmp(end, UNITS[i].unit) == 0) {
            double x = v * UNITS[i].s;
            if (!(x >= 1e-3) || !(x <= 1e9)) {
                errmsg_set(err, errlen, "interval '%s' must be between 1 ms and 1e9 s", s);
                return -1;
            }
            *seconds = x;
            return 0;
        }
    errmsg_set(err, errlen, "interval '%s': unknown unit '%s' (ms, s, m, h)", s, end);
    return -1;
}

/* test_tseries.c -- tests of sim/run/tseries.c: per-interval counts and
 * percentiles from a synthetic run, a cut-short last interval, CSV output, the
 * run_timeseries table written in the run's transaction (also into a database
 * made before the table existed), and interval parsing. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/evq.h"
#include "store/store.h"
#include "run/tseries.h"

static char err[256];

/* Three 60 s intervals: the first serves 100 requests at 1..100 ms (P50 50,
 * P99 99), the second nothing (2 errors), the third is cut at 150 s with one
 * request at 7 ms and its TTFT 3 ms. */
static tseries *sample(void)
{
    tseries *ts = ts_new(60, err, sizeof err);
    cr_assert_not_null(ts, "%s", err);
    cr_assert_eq(ts_next_close(ts), 60 * (simtime_t) 1000000000);
    for (int i = 1; i <= 100; i++) {
        ts_arrival(ts);
        ts_served(ts, i, NAN);
    }
    ts_retry(ts);
    cr_assert_eq(ts_close(ts, &(ts_gauges) {4, 2, 0.5}), 0);
    cr_assert_eq(ts_next_close(ts), 120 * (simtime_t) 1000000000);
    ts_error(ts);
    ts_error(ts);
    cr_assert_eq(ts_close(ts, &(ts_gauges) {0, 3, 0.25}), 0);
    ts_arrival(ts);
    ts_served(ts, 7, 3);
    cr_assert_eq(ts_close_at(ts, 150 * (simtime_t) 1000000000, &(ts_gauges) {1, 1, NAN}), 0);
    /* Nothing left to close. */
    cr_assert_eq(ts_close_at(ts, 150 * (simtime_t) 1000000000, NULL), 0);
    return ts;
}

Test(tseries, counts_and_percentiles_per_interval)
{
    tseries *ts = sample();
    cr_assert_eq(ts_count(ts), 3);
    const ts_row *r = ts_rows(ts);
    cr_assert_eq(r[0].arrivals, 100);
    cr_assert_eq(r[0].retries, 1);
    cr_assert_eq(r[0].served, 100);
    cr_assert_float_eq(r[0].throughput_rps, 100 / 60.0, 1e-12);
    /* Histogram percentiles are within 0.05 % (stats.h); ranks 50 and 99. */
    cr_assert_float_eq(r[0].e2e_p50_ms, 50, 50 * 5e-4);
    cr_assert_float_eq(r[0].e2e_p99_ms, 99, 99 * 5e-4);
    cr_assert(isnan(r[0].ttft_p99_ms), "no TTFT was given");
    cr_assert_eq(r[0].queue, 4);
    cr_assert_eq(r[0].utilization, 0.5);
    /* The second interval: its own counts only (the histograms were reset). */
    cr_assert_eq(r[1].t0_s, 60);
    cr_assert_eq(r[1].t1_s, 120);
    cr_assert_eq(r[1].served, 0);
    cr_assert_eq(r[1].errors, 2);
    cr_assert(isnan(r[1].e2e_p50_ms));
    cr_assert_eq(r[1].replicas, 3);
    /* The third: 30 s long. */
    cr_assert_eq(r[2].t1_s, 150);
    cr_assert_float_eq(r[2].throughput_rps, 1 / 30.0, 1e-12);
    cr_assert_eq(r[2].e2e_p99_ms, 7);
    cr_assert_eq(r[2].ttft_p50_ms, 3);
    ts_free(ts);
}

Test(tseries, csv)
{
    tseries *ts = sample();
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    cr_assert_eq(ts_write_csv(ts_rows(ts), ts_count(ts), out, err, sizeof err), 0);
    fclose(out);
    const char *want_head =
        "\"t_start_s\",\"t_end_s\",\"arrivals\",\"retries\",\"served\",\"errors\",\"throughput_rps\","
        "\"ttft_p50_ms\",\"ttft_p99_ms\",\"e2e_p50_ms\",\"e2e_p99_ms\",\"queue\",\"replicas\","
        "\"utilization\"\n";
    cr_assert_eq(strncmp(buf, want_head, strlen(want_head)), 0, "%s", buf);
    cr_assert_neq(strstr(buf, "\n60,120,0,0,0,2,0,,,,,0,3,0.25\n"), NULL, "%s", buf);
    cr_assert_neq(strstr(buf, "\n120,150,1,0,1,0,0.0333333333,3,3,7,7,1,1,\n"), NULL, "%s", buf);
    free(buf);
    cr_assert_eq(ts_save_csv(ts_rows(ts), 1, "/nonexistent-dir/x.csv", err, sizeof err), -1);
    cr_assert_neq(strstr(err, "/nonexistent-dir/x.csv: cannot write"), NULL, "%s", err);
    ts_free(ts);
}

static long long count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    long long n = -1;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

Test(tseries, stored_with_the_run)
{
    char path[] = "/tmp/latsim_ts_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    unlink(path);
    /* A database as made before run_timeseries existed. */
    sqlite3 *raw;
    cr_assert_eq(sqlite3_open(path, &raw), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(raw,
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, scenario_path TEXT NOT NULL, scenario_text TEXT,"
        " scenario_hash TEXT NOT NULL, seed INTEGER NOT NULL, replications INTEGER NOT NULL,"
        " version TEXT NOT NULL, started_at TEXT NOT NULL, wall_s REAL, status TEXT NOT NULL, json TEXT);"
        "CREATE TABLE run_config (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        " section TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL);"
        "CREATE TABLE run_stats (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        " replication INTEGER NOT NULL, scope TEXT NOT NULL, metric TEXT NOT NULL, stat TEXT NOT NULL,"
        " value REAL, ci95 REAL); PRAGMA user_version = 1;", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);

    sqlite3 *db;
    cr_assert_eq(store_open(path, &db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(store_check_writable(db, path, err, sizeof err), 0, "%s", err);
    tseries *ts = sample();
    store_run r = { .scenario_path = "x.ini", .version = "test", .started_at = "now",
                    .status = "ok", .replications = 1,
                    .ts = ts_rows(ts), .nts = ts_count(ts) };
    int64_t id;
    cr_assert_eq(store_save_run(db, &r, &id, err, sizeof err), 0, "%s", err);
    cr_assert_eq(count(db, "SELECT count(*) FROM run_timeseries"), 3);
    cr_assert_eq(count(db, "SELECT sum(errors) FROM run_timeseries"), 2);
    cr_assert_eq(count(db, "SELECT count(*) FROM run_timeseries WHERE e2e_p99_ms IS NULL"), 1);
    cr_assert_eq(count(db, "SELECT round(e2e_p99_ms) FROM run_timeseries WHERE t_start_s = 120"), 7);
    /* A run whose time series cannot be written leaves nothing (one transaction). */
    r.ts = NULL;
    cr_assert_eq(store_save_run(db, &r, &id, err, sizeof err), -1);
    cr_assert_eq(count(db, "SELECT count(*) FROM runs"), 1);
    ts_free(ts);
    store_close(db);
    unlink(path);
}

Test(tseries, intervals)
{
    double s;
    cr_assert_eq(ts_parse_interval("60s", &s, err, sizeof err), 0);
    cr_assert_eq(s, 60);
    cr_assert_eq(ts_parse_interval("1m", &s, err, sizeof err), 0);
    cr_assert_eq(s, 60);
    cr_assert_eq(ts_parse_interval("500ms", &s, err, sizeof err), 0);
    cr_assert_eq(s, 0.5);
    cr_assert_eq(ts_parse_interval("2h", &s, err, sizeof err), 0);
    cr_assert_eq(s, 7200);
    cr_assert_eq(ts_parse_interval("15", &s, err, sizeof err), 0);
    cr_assert_eq(s, 15);
    cr_assert_eq(ts_parse_interval("10 parsecs", &s, err, sizeof err), -1);
    cr_assert_neq(strstr(err, "unknown unit"), NULL, "%s", err);
    cr_assert_eq(ts_parse_interval("0s", &s, err, sizeof err), -1);
    cr_assert_eq(ts_parse_interval("abc", &s, err, sizeof err), -1);
    cr_assert_null(ts_new(0, err, sizeof err));
}

/* Counts the gauge calls of an attached series. */
static void gauge(void *ctx, ts_gauges *g)
{
    int *calls = ctx;
    (*calls)++;
    *g = (ts_gauges) { .queue = *calls, .replicas = 2, .utilization = 0.5 };
}

static void arrive(evq *q, void *subject, int64_t arg)
{
    (void) q;
    (void) arg;
    ts_arrival(subject);
}

Test(tseries, attached_to_the_calendar)
{
    evq *q = evq_new();
    tseries *ts = ts_new(10, err, sizeof err);
    int calls = 0;
    cr_assert_eq(ts_attach(ts, q, gauge, &calls), 0);
    /* Arrivals at 5, 15, 15.5 and 35 s; the run ends at 35 s. */
    const double at[] = {5, 15, 15.5, 35};
    for (int i = 0; i < 4; i++)
        evq_at(q, simtime_from_s(at[i]), arrive, ts, 0);
    evq_run(q, simtime_from_s(35));
    cr_assert_eq(ts_close_at(ts, evq_now(q), &(ts_gauges) {0, 0, 0}), 0);
    cr_assert_eq(ts_failed(ts), 0);
    cr_assert_eq(calls, 3);                      /* at 10, 20 and 30 s */
    cr_assert_eq(ts_count(ts), 4);
    const ts_row *r = ts_rows(ts);
    cr_assert_eq(r[0].arrivals, 1);
    cr_assert_eq(r[1].arrivals, 2);
    cr_assert_eq(r[2].arrivals, 0);
    cr_assert_eq(r[3].arrivals, 1);
    cr_assert_eq(r[3].t0_s, 30);
    cr_assert_eq(r[3].t1_s, 35);
    cr_assert_eq(r[1].queue, 2);
    double col[4];
    cr_assert_eq(ts_column(r, 4, "e2e_p99_ms", col), 0);
    cr_assert(isnan(col[0]));
    cr_assert_eq(ts_column(r, 4, "tpot_p99_ms", col), -1);
    ts_free(ts);
    evq_free(q);
}

/* An event at an interval's end belongs to the next interval, even when it was
 * scheduled before the boundary event and so runs first (closed-loop users
 * started at 0, 2, 4... s with 1 s intervals). */
Test(tseries, an_event_at_a_boundary_counts_in_the_next_interval)
{
    evq *q = evq_new();
    tseries *ts = ts_new(10, err, sizeof err);
    int calls = 0;
    evq_at(q, simtime_from_s(10), arrive, ts, 0);   /* scheduled before the series */
    evq_at(q, simtime_from_s(20), arrive, ts, 0);
    evq_at(q, simtime_from_s(25), arrive, ts, 0);   /* the run ends here */
    cr_assert_eq(ts_attach(ts, q, gauge, &calls), 0);
    evq_run(q, simtime_from_s(25));
    cr_assert_eq(ts_close_at(ts, evq_now(q), &(ts_gauges) {0, 0, 0}), 0);
    cr_assert_eq(ts_count(ts), 3);
    const ts_row *r = ts_rows(ts);
    cr_assert_eq(r[0].arrivals, 0);
    cr_assert_eq(r[1].arrivals, 1, "the arrival at 10 s is in [10, 20)");
    cr_assert_eq(r[2].arrivals, 2, "the arrivals at 20 and 25 s are in [20, 25)");
    cr_assert_eq(calls, 2);                          /* one close at 10 s, one at 20 s */
    ts_free(ts);
    evq_free(q);
}

/* test_finite.c -- Criterion tests of finite workloads (README, "Finite
 * workloads"): a trace replayed once, without loop, over all its rows is
 * measured to its end.  A burst the server works off is reported with every
 * request's latency and backlog_grew = yes (exit 0); the same trace looped
 * forever, or only part of it, keeps the steady-state saturation rule (exit 3,
 * no percentiles).  Each case runs ./latsim in a forked child bounded by
 * alarm(), in its own temporary directory, and reads its --json output.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>


#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_finite_", "runs.db"); }

TestSuite(finite_replay, .init = setup, .fini = tcli_teardown);
TestSuite(finite_vllm, .init = setup, .fini = tcli_teardown);

/* A run of the program (tcli.h) with its stdout parsed as JSON. */
typedef struct jres {
    int rc;        /* exit status; 128 + signal when killed (alarm: 128 + SIGALRM) */
    char *out;     /* stdout */
    char *err;     /* stderr */
    json_t *json;  /* stdout parsed as JSON, or NULL */
    result raw;    /* what run_argv returned (owns out and err) */
} jres;

/* Runs the program with ARGS (NULL-terminated) bounded by LIMIT seconds. */
static jres jrun_a(unsigned limit, char *const *args)
{
    jres j = { 0 };
    j.raw = run_argv(limit, args);
    j.rc = j.raw.rc;
    j.out = j.raw.out;
    j.err = j.raw.err;
    j.json = json_loads(j.out, 0, NULL);
    return j;
}
#define jrun(limit, ...) jrun_a(limit, (char *[]) { __VA_ARGS__ })

static void jres_free(jres *j)
{
    result_free(&j->raw);
    json_decref(j->json);
}

/* The JSON number at "KEY" of object O (a boolean as 0/1); NAN when null or absent. */
static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_boolean(v)) return json_is_true(v);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* latency_ms.METRIC.STAT of the whole system. */
static double lat(const json_t *j, const char *metric, const char *stat)
{
    return num(json_object_get(json_object_get(j, "latency_ms"), metric), stat);
}

/* A trace of ROWS requests, GAP_MS apart (seconds column "t"). */
static void write_trace(const char *name, int rows, double gap_ms)
{
    char path[160];
    size_t cap = (size_t) rows * 24 + 16;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    size_t n = (size_t) snprintf(text, cap, "t\n");
    for (int i = 0; i < rows; i++) n += (size_t) snprintf(text + n, cap - n, "%.6f\n", i * gap_ms / 1000.0);
    write_file(name, text, path, sizeof path);
    free(text);
}

/* A scenario replaying dir/trace.csv into one server of 10 ms, with EXTRA
 * lines appended to [sim] and [workload] ("" for none). */
static void write_scenario(const char *sim_extra, const char *wl_extra, char *path, size_t n)
{
    char text[1024];
    snprintf(text, sizeof text,
             "[sim]\nseed = 1\n%s\n"
             "[workload]\narrival = trace\ntrace = trace.csv\ntime_column = t\ntime_format = seconds\n%s\n"
             "[pool web]\nkind = generic\nservers = 1\nservice_ms = const(10)\n",
             sim_extra, wl_extra);
    write_file("s.ini", text, path, n);
}

/* 2000 requests 5 ms apart into a 10 ms server: offered load 2 throughout; the
 * backlog grows to about 1000 by the last arrival, then drains.  A server that
 * lived through it served every request: all 2000 are measured (no warm-up by
 * default), reported with percentiles, exit 0, backlog_grew = yes. */
Test(finite_replay, overload_burst_is_served_and_reported)
{
    char sc[160];
    write_trace("trace.csv", 2000, 5.0);
    write_scenario("", "", sc, sizeof sc);
    jres r = jrun(60, "run", sc, "--json", "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "rc %d: %s", r.rc, r.err);
    cr_assert_not_null(r.json, "not JSON: %s", r.out);
    cr_assert_eq(num(r.json, "served"), 2000);
    cr_assert_eq(num(r.json, "warmup_requests"), 0);
    cr_assert_eq(num(r.json, "saturated"), 0);
    cr_assert_eq(num(r.json, "finite"), 1);
    cr_assert_eq(num(r.json, "backlog_grew"), 1);
    /* Request k waits 5 k ms: the last of them about 10 s; the peak queue is
     * close to 1000 (999 waiting at the last arrival, with one in service). */
    double pq = num(r.json, "peak_queue");
    cr_assert(pq >= 990 && pq <= 1000, "peak_queue %g", pq);
    cr_assert_float_eq(num(r.json, "peak_queue_at_s"), 1999 * 0.005, 1e-6);
    double p50 = lat(r.json, "e2e", "p50"), mx = lat(r.json, "e2e", "max");
    cr_assert(p50 > 4000 && p50 < 6000, "e2e p50 %g ms", p50);
    cr_assert(mx > 9900 && mx < 10100, "e2e max %g ms", mx);
    const json_t *pool = json_object_get(json_object_get(r.json, "pools"), "web");
    cr_assert_eq(num(pool, "saturated"), 0);
    cr_assert_eq(num(pool, "backlog_grew"), 1);
    cr_assert_eq(num(pool, "peak_queue"), pq);
    /* The database holds the same rows. */
    sqlite3 *h;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *q;
    cr_assert_eq(sqlite3_prepare_v2(h, "SELECT metric, value FROM run_stats WHERE scope = '' AND stat = 'value' AND "
                                       "metric IN ('finite', 'backlog_grew', 'saturated') ORDER BY metric", -1, &q, NULL), SQLITE_OK);
    const char *want[] = { "backlog_grew", "finite", "saturated" };
    double val[] = { 1, 1, 0 };
    int k = 0;
    for (; sqlite3_step(q) == SQLITE_ROW; k++) {
        cr_assert_lt(k, 3);
        cr_assert_str_eq((const char *) sqlite3_column_text(q, 0), want[k]);
        cr_assert_eq(sqlite3_column_double(q, 1), val[k]);
    }
    cr_assert_eq(k, 3);
    sqlite3_finalize(q);
    sqlite3_close(h);
    jres_free(&r);
    /* The table says so in one note line, and shows the percentiles. */
    r = jrun(60, "run", sc, "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "rc %d: %s", r.rc, r.err);
    cr_assert_not_null(strstr(r.out, "NOTE: backlog grew during the replay: peak queue "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "every request was served and is reported"), "%s", r.out);
    cr_assert_null(strstr(r.out, "SATURATED"), "%s", r.out);
    jres_free(&r);
}

/* The same trace looped forever is an open-ended run at offered load 2:
 * saturated as before (exit 3, no percentiles, no finite fields). */
Test(finite_replay, same_trace_looped_is_saturated)
{
    char sc[160];
    write_trace("trace.csv", 2000, 5.0);
    write_scenario("requests = 5000", "loop = yes", sc, sizeof sc);
    jres r = jrun(60, "run", sc, "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 3, "rc %d: %s", r.rc, r.err);
    cr_assert_not_null(r.json, "not JSON: %s", r.out);
    cr_assert_eq(num(r.json, "saturated"), 1);
    cr_assert(isnan(lat(r.json, "e2e", "p50")), "a saturated run has no percentiles");
    cr_assert_null(json_object_get(r.json, "finite"));
    cr_assert_null(json_object_get(r.json, "backlog_grew"));
    jres_free(&r);
}

/* Part of the trace (requests + warmup below its rows) is not finite either:
 * the rows after the measured ones keep arriving. */
Test(finite_replay, part_of_a_trace_is_not_finite)
{
    char sc[160];
    write_trace("trace.csv", 2000, 5.0);
    write_scenario("requests = 500", "", sc, sizeof sc);
    jres r = jrun(60, "run", sc, "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 3, "rc %d: %s", r.rc, r.err);
    cr_assert_not_null(r.json, "not JSON: %s", r.out);
    cr_assert_eq(num(r.json, "saturated"), 1);
    cr_assert_eq(num(r.json, "warmup_requests"), 50, "the default warm-up, requests/10");
    cr_assert_null(json_object_get(r.json, "finite"));
    jres_free(&r);
}

/* An explicit warmup still applies to a finite replay: the trace's first rows
 * run unmeasured, the rest are measured to the end. */
Test(finite_replay, explicit_warmup_applies)
{
    char sc[160];
    write_trace("trace.csv", 2000, 5.0);
    write_scenario("warmup = 100", "", sc, sizeof sc);
    jres r = jrun(60, "run", sc, "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "rc %d: %s", r.rc, r.err);
    cr_assert_not_null(r.json, "not JSON: %s", r.out);
    cr_assert_eq(num(r.json, "warmup_requests"), 100);
    cr_assert_eq(num(r.json, "served"), 1900);
    cr_assert_eq(num(r.json, "finite"), 1);
    cr_assert_eq(num(r.json, "backlog_grew"), 1);
    jres_free(&r);
}

/* A trace at offered load 0.5 (requests 20 ms apart, 10 ms each) never queues:
 * finite, backlog_grew = no, peak queue 0, no note. */
Test(finite_replay, light_trace_backlog_did_not_grow)
{
    char sc[160];
    write_trace("trace.csv", 2000, 20.0);
    write_scenario("", "", sc, sizeof sc);
    jres r = jrun(60, "run", sc, "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "rc %d: %s", r.rc, r.err);
    cr_assert_not_null(r.json, "not JSON: %s", r.out);
    cr_assert_eq(num(r.json, "served"), 2000);
    cr_assert_eq(num(r.json, "finite"), 1);
    cr_assert_eq(num(r.json, "backlog_grew"), 0);
    cr_assert_eq(num(r.json, "peak_queue"), 0);
    cr_assert_float_eq(lat(r.json, "e2e", "max"), 10.0, 1e-6);
    jres_free(&r);
    r = jrun(60, "run", sc, "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "rc %d: %s", r.rc, r.err);
    cr_assert_null(strstr(r.out, "backlog grew"), "%s", r.out);
    jres_free(&r);
}

/* The observed vLLM run (scenarios/replay_vllm_rtx4090.ini, 300 requests in 29 s
 * on one RTX 4090): a burst the server worked off.  Every request is served and
 * reported, exit 0; the backlog grew. */
Test(finite_vllm, replay_is_measured_to_its_end)
{
    jres r = jrun(60, "run", "scenarios/replay_vllm_rtx4090.ini", "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "rc %d: %s", r.rc, r.err);
    cr_assert_not_null(r.json, "not JSON: %s", r.out);
    cr_assert_eq(num(r.json, "served"), 300);
    cr_assert_eq(num(r.json, "requests"), 300);
    cr_assert_eq(num(r.json, "warmup_requests"), 0);
    cr_assert_eq(num(r.json, "saturated"), 0);
    cr_assert_eq(num(r.json, "finite"), 1);
    cr_assert_eq(num(r.json, "backlog_grew"), 1);
    cr_assert_gt(num(r.json, "peak_queue"), 100);
    cr_assert(lat(r.json, "ttft", "p50") > 0 && lat(r.json, "ttft", "p99") >= lat(r.json, "ttft", "p50"));
    cr_assert(lat(r.json, "e2e", "p99") >= lat(r.json, "e2e", "p50") && lat(r.json, "e2e", "p50") > 0);
    jres_free(&r);
}

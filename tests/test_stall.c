/* test_stall.c -- Criterion tests of the hardening issue's hangs and
 * unbounded memory: self-renewing events (failures, pauses, autoscaler
 * evaluations) with periods at or below the clock's resolution, the stall
 * guard of the event loop (evq.h), the bound on time-series intervals
 * (tseries.h) and the memory estimate of per-key allocations (result-cache and
 * class intents, users, sessions, fleet units).  Runs of ./latsim happen in a
 * forked child bounded by alarm(), in a temporary directory per test, and check
 * the exit status, that stderr is exactly one line naming the key, and that
 * the database is absent or byte-identical.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "engine/evq.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "store/store.h"
#include "run/tseries.h"

#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_h2hang_", "runs.db"); }

TestSuite(stall_load, .init = setup, .fini = tcli_teardown);
TestSuite(stall_guard, .init = setup, .fini = tcli_teardown);
TestSuite(stall_ts, .init = setup, .fini = tcli_teardown);
TestSuite(stall_mem, .init = setup, .fini = tcli_teardown);

/* expect_one_line, and the database file was not created. */
static void expect_fail(const result *r, int rc, const char *want, const char *what)
{
    expect_one_line(r, rc, want, what);
    cr_expect_neq(access(db, F_OK), 0, "%s: the database was created", what);
}

/* Creates the database with one stored run of FILE; returns its bytes (*LEN). */
static char *make_db(const char *file, size_t *len)
{
    result r = run_scenario(60, file, NULL);
    cr_assert_eq(r.rc, 0, "the run storing the database failed: %s", r.err);
    result_free(&r);
    char *bytes = slurp(db, len);
    cr_assert_gt(*len, 0);
    return bytes;
}

/* The database still holds exactly BYTES (LEN of them). */
static void expect_db_unchanged(const char *bytes, size_t len, const char *what)
{
    cr_expect(same_bytes(db, bytes, len), "%s: the database changed", what);
}

/* Four servers at 70 % utilisation, 2200 arrivals: 39 s of simulated time. */
static const char *MMC =
    "[sim]\nrequests = 2000\nwarmup = 200\n[workload]\narrival = poisson\nrate = 56\n"
    "[pool cpu]\nkind = generic\nservers = 4\nservice_ms = exp(mean=50)\n";

/* Two LLM replicas with the scheduler that fleet keys need. */
static const char *LLM =
    "[sim]\nrequests = 300\nwarmup = 30\n[workload]\narrival = poisson\nrate = 2\n"
    "prompt_tokens = const(200)\noutput_tokens = const(20)\n"
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nreplicas = 2\nscheduler = continuous\n";

/* A router in front of MMC's pool. */
static const char *ROUTED =
    "[sim]\nrequests = 2000\nwarmup = 200\n[workload]\narrival = poisson\nrate = 56\n"
    "[pool gw]\nkind = router\nnext = cpu\n"
    "[pool cpu]\nkind = generic\nservers = 4\nservice_ms = exp(mean=50)\n";

/* ---- item 1: refused at load --------------------------------------------------- */

typedef struct hang_case {
    const char *set1, *set2;  /* --set overrides (set2 may be NULL) */
    const char *want;         /* what stderr names */
} hang_case;

/* Runs each case on FILE: exit 2 within a few seconds, one line naming the key. */
static void refuse_all(const char *file, const hang_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char s1[160], s2[160];
        snprintf(s1, sizeof s1, "%s", c[i].set1);
        snprintf(s2, sizeof s2, "%s", c[i].set2 ? c[i].set2 : "sim.seed=1");
        result r = run_scenario(10, file, "--set", s1, "--set", s2, NULL);
        expect_fail(&r, 2, c[i].want, s1);
        cr_expect_lt(r.wall, 5.0, "%s: refused only after %.1f s", s1, r.wall);
        result_free(&r);
    }
}

/* Failures every 1e-300 .. 1e-6 s on a generic and an LLM pool: below the
 * clock's resolution (a mean, or the mean of uniform(0, 1 ns)) or beyond 10^8
 * events over the run, refused at load naming the key. */
Test(stall_load, failure_periods)
{
    char s[256], l[256];
    write_file("s.ini", MMC, s, sizeof s);
    write_file("l.ini", LLM, l, sizeof l);
    static const hang_case gen[] = {
        { "pool cpu.fail_after_s=const(1e-300)", NULL, "[pool cpu] fail_after_s: mean time to failure 1e-300 s is below the clock's resolution (1 ns)" },
        { "pool cpu.fail_after_s=uniform(min=0, max=1e-9)", NULL, "[pool cpu] fail_after_s: mean time to failure 5e-10 s is below the clock's resolution" },
        { "pool cpu.fail_after_s=const(1e-9)", NULL, "[pool cpu] fail_after_s: 4 units x 39.29 s of expected simulated time / a mean cycle of 1e-09 s" },
        { "pool cpu.fail_after_s=const(1e-6)", NULL, "more than the 1e+08 a run may hold" },
        { "pool cpu.fail_after_s=exp(mean=1e-6)", NULL, "[pool cpu] fail_after_s: 4 units x 39.29 s" },
    };
    refuse_all(s, gen, sizeof gen / sizeof gen[0]);
    /* 330 arrivals at 2/s: 165 s; two replicas. */
    static const hang_case llm[] = {
        { "pool chat.fail_after_s=const(1e-300)", NULL, "[pool chat] fail_after_s: mean time to failure 1e-300 s is below" },
        { "pool chat.fail_after_s=uniform(min=0, max=1e-9)", NULL, "[pool chat] fail_after_s: mean time to failure 5e-10 s" },
        { "pool chat.fail_after_s=const(1e-9)", NULL, "[pool chat] fail_after_s: 2 units x 165 s" },
        { "pool chat.fail_after_s=exp(mean=1e-6)", NULL, "[pool chat] fail_after_s: 2 units x 165 s" },
    };
    refuse_all(l, llm, sizeof llm / sizeof llm[0]);
}

/* Autoscaler evaluations every 1e-300 or 1e-9 s. */
Test(stall_load, autoscale_intervals)
{
    char s[256], l[256];
    write_file("s.ini", MMC, s, sizeof s);
    write_file("l.ini", LLM, l, sizeof l);
    static const hang_case gen[] = {
        { "pool cpu.autoscale_interval_s=1e-300", "pool cpu.max_replicas=8",
          "[pool cpu] autoscale_interval_s: 1e-300 s is below the clock's resolution (1 ns)" },
        { "pool cpu.autoscale_interval_s=1e-9", "pool cpu.max_replicas=8",
          "[pool cpu] autoscale_interval_s: 1 unit x 39.29 s of expected simulated time / a mean cycle of 1e-09 s" },
    };
    refuse_all(s, gen, sizeof gen / sizeof gen[0]);
    static const hang_case llm[] = {
        { "pool chat.autoscale_interval_s=1e-300", "pool chat.max_replicas=4", "[pool chat] autoscale_interval_s: 1e-300 s is below" },
        { "pool chat.autoscale_interval_s=1e-9", "pool chat.max_replicas=4", "[pool chat] autoscale_interval_s: 1 unit x 165 s" },
    };
    refuse_all(l, llm, sizeof llm / sizeof llm[0]);
}

/* Pauses every 1e-300 s of 1e-300 s on a generic pool, a router and an LLM pool. */
Test(stall_load, pause_periods)
{
    char s[256], l[256], g[256];
    write_file("s.ini", MMC, s, sizeof s);
    write_file("l.ini", LLM, l, sizeof l);
    write_file("g.ini", ROUTED, g, sizeof g);
    static const hang_case gen[] = {
        { "pool cpu.pause_every_s=const(1e-300)", "pool cpu.pause_s=const(1e-300)",
          "[pool cpu] pause_every_s: mean time between pauses 1e-300 s is below the clock's resolution (1 ns)" },
        { "pool cpu.pause_every_s=const(1e-6)", "pool cpu.pause_s=const(1e-300)",
          "[pool cpu] pause_every_s: 4 units x 39.29 s of expected simulated time / a mean cycle of 1e-06 s" },
    };
    refuse_all(s, gen, sizeof gen / sizeof gen[0]);
    static const hang_case gw[] = {
        { "pool gw.pause_every_s=const(1e-300)", "pool gw.pause_s=const(1e-300)",
          "[pool gw] pause_every_s: mean 1e-300 s is below the clock's resolution (1 ns)" },
        { "pool gw.pause_every_s=const(1e-9)", "pool gw.pause_s=const(1e-300)",
          "[pool gw] pause_every_s: 1 unit x 39.29 s of expected simulated time / a mean cycle of 1e-09 s (pause_every_s + pause_s) x 2 events" },
    };
    refuse_all(g, gw, sizeof gw / sizeof gw[0]);
    static const hang_case llm[] = {
        { "pool chat.pause_every_s=const(1e-300)", "pool chat.pause_s=const(1e-300)",
          "[pool chat] pause_every_s: mean time between pauses 1e-300 s is below" },
    };
    refuse_all(l, llm, sizeof llm / sizeof llm[0]);
}

/* Written in the file, the key is named with its file and line; an existing
 * database stays byte-identical; a period that fits runs. */
Test(stall_load, file_line_and_database_untouched)
{
    char ok[256], f[256];
    write_file("ok.ini", MMC, ok, sizeof ok);
    size_t len;
    char *bytes = make_db(ok, &len);
    char text[1024];
    snprintf(text, sizeof text, "%sfail_after_s = const(1e-300)\n", MMC);
    write_file("f.ini", text, f, sizeof f);
    result r = run_scenario(10, f, NULL);
    char want[512];
    snprintf(want, sizeof want, "latsim: %s:11: [pool cpu] fail_after_s: mean time to failure 1e-300 s", f);
    expect_one_line(&r, 2, want, "fail_after_s in the file");
    result_free(&r);
    snprintf(text, sizeof text, "%smax_replicas = 8\nautoscale_interval_s = 1e-9\n", MMC);
    write_file("a.ini", text, f, sizeof f);
    r = run_scenario(10, f, NULL);
    snprintf(want, sizeof want, "latsim: %s:12: [pool cpu] autoscale_interval_s:", f);
    expect_one_line(&r, 2, want, "autoscale_interval_s in the file");
    result_free(&r);
    expect_db_unchanged(bytes, len, "refused scenarios");
    free(bytes);
    /* 4 units x 39 s / 1 ms x 3 = 4.7e5 events: a real (if silly) fleet runs. */
    r = run_scenario(30, ok, "--no-store", "--set", "pool cpu.fail_after_s=exp(mean=1e-3)", NULL);
    cr_expect_eq(r.rc, 0, "fail_after_s = exp(mean=1e-3): exit %d: %s", r.rc, r.err);
    result_free(&r);
}

/* The fuzz corpus's hanging scenarios (tests/fuzz/scenario/hang_*.ini, replayed
 * by test_fuzz_corpus.c) are refused at load, at once, naming their key. */
Test(stall_load, corpus_files_refused_at_load)
{
    DIR *d = opendir("tests/fuzz/scenario");
    cr_assert_not_null(d, "tests run from the repository root");
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, "hang_", 5) != 0) continue;
        char path[512], err[2048];
        snprintf(path, sizeof path, "tests/fuzz/scenario/%s", e->d_name);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        scenario sc;
        int rc = scenario_load(&sc, path, NULL, 0, err, sizeof err);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        cr_expect_eq(rc, -1, "%s was accepted", path);
        cr_expect(strstr(err, "] fail_after_s: ") || strstr(err, "] pause_every_s: ") ||
                  strstr(err, "] autoscale_interval_s: "), "%s: %s", path, err);
        cr_expect(strncmp(err, path, strlen(path)) == 0 && err[strlen(path)] == ':', "%s: no file:line: %s", path, err);
        cr_expect(strchr(err, '\n') == NULL, "%s: %s", path, err);
        cr_expect_lt((double) (t1.tv_sec - t0.tv_sec) + 1e-9 * (double) (t1.tv_nsec - t0.tv_nsec), 1.0, "%s", path);
        scenario_free(&sc);
        n++;
    }
    closedir(d);
    cr_expect_geq(n, 13, "only %d hang_*.ini files", n);
}

/* The library's estimate of the run's simulated time. */
Test(stall_load, expected_duration)
{
    scenario sc;
    char err[1024];
    cr_assert_eq(scenario_load_text(&sc, "m.ini", MMC, NULL, 0, err, sizeof err), 0, "%s", err);
    cr_expect(fabs(scenario_expected_duration_s(&sc) - 2200.0 / 56) < 1e-9, "%g", scenario_expected_duration_s(&sc));
    scenario_free(&sc);
    const char *closed = "[sim]\nrequests = 900\nwarmup = 100\n[workload]\nusers = 10\nthink_ms = const(500)\n"
                         "[pool cpu]\nservice_ms = exp(mean=50)\n";
    cr_assert_eq(scenario_load_text(&sc, "c.ini", closed, NULL, 0, err, sizeof err), 0, "%s", err);
    cr_expect(fabs(scenario_expected_duration_s(&sc) - 1000.0 / 10 * 0.5) < 1e-9, "%g", scenario_expected_duration_s(&sc));
    scenario_free(&sc);
    /* A trace: the time of the last row the run needs (the third: 2 s), at speedup 2. */
    char t[256], f[256];
    write_file("t.csv", "t,p,o\n0,10,5\n1,10,5\n2,10,5\n10,10,5\n", t, sizeof t);
    write_file("t.ini", "[sim]\nrequests = 2\nwarmup = 1\n[workload]\narrival = trace\ntrace = t.csv\n"
               "time_format = seconds\ntime_column = t\nprompt_column = p\noutput_column = o\nspeedup = 2\n"
               "[pool cpu]\nservice_ms = const(1)\n", f, sizeof f);
    cr_assert_eq(scenario_load(&sc, f, NULL, 0, err, sizeof err), 0, "%s", err);
    cr_expect(fabs(scenario_expected_duration_s(&sc) - 1.0) < 1e-9, "%g", scenario_expected_duration_s(&sc));
    scenario_free(&sc);
}

/* ---- item 1: the stall guard ------------------------------------------------------ */

typedef struct spin {
    uint64_t n;               /* events run */
    uint64_t progress_every;  /* evq_progress() every this many (0: never) */
    uint64_t stop_after;      /* no renewal after this many (0: renews for ever) */
} spin;

/* Renews itself ARG ns later (0: at the same instant). */
static void on_spin(evq *q, void *subject, int64_t arg)
{
    spin *s = subject;
    s->n++;
    if (s->progress_every && s->n % s->progress_every == 0) evq_progress(q);
    if (s->stop_after && s->n >= s->stop_after) return;
    evq_after(q, arg, on_spin, s, arg);
}

static int name_spin(evq_handler h, const void *subject, char *buf, size_t n)
{
    (void) subject;
    if (h != on_spin) return 0;
    snprintf(buf, n, "the spinner");
    return EVQ_NAME_PERIOD;
}

/* A handler renewing itself at 0 ns stops at the limit, named by its module's
 * namer; 1 ns steps, or evq_progress() (an arrival), never trip it. */
Test(stall_guard, evq_stops_a_stall_and_names_it)
{
    evq *q = evq_new();
    cr_assert_not_null(q);
    spin s = { 0, 0, 0 };
    evq_set_stall_limit(q, 1000);
    cr_assert_eq(evq_add_namer(q, name_spin), 0);
    cr_assert_eq(evq_add_namer(q, name_spin), 0, "adding a namer twice is harmless");
    evq_at(q, 5, on_spin, &s, 0);
    uint64_t ran = evq_run(q, SIMTIME_NEVER);
    cr_expect_eq(evq_overflowed(q), EVQ_STALLED);
    cr_expect_eq(ran, 1000, "ran %llu", (unsigned long long) ran);
    cr_expect_eq(evq_failed_time(q), 5);
    cr_expect_eq(evq_stall_subject(q), &s);
    char what[64];
    cr_expect_eq(evq_stall_name(q, what, sizeof what), 1000);
    cr_expect_str_eq(what, "the spinner");
    cr_expect_eq(evq_run(q, SIMTIME_NEVER), 0, "a stalled calendar runs nothing more");
    evq_free(q);

    q = evq_new();          /* the default limit, no namer */
    spin t = { 0, 0, 0 };
    evq_at(q, 0, on_spin, &t, 0);
    evq_run(q, SIMTIME_NEVER);
    cr_expect_eq(evq_overflowed(q), EVQ_STALLED);
    /* No namer calls it a period: EVQ_STALL_SAMPLE events are looked at, the last not run. */
    cr_expect_eq(t.n, EVQ_STALL_EVENTS + EVQ_STALL_SAMPLE - 1, "ran %llu", (unsigned long long) t.n);
    cr_expect_eq(evq_stall_name(q, what, sizeof what), EVQ_STALL_EVENTS);
    cr_expect_str_eq(what, "an event of an unknown module");
    evq_free(q);

    q = evq_new();          /* 1 ns steps: the clock moves */
    spin u = { 0, 0, 0 };
    evq_set_stall_limit(q, 10);
    evq_at(q, 0, on_spin, &u, 1);
    evq_run(q, 100000);
    cr_expect_eq(evq_overflowed(q), 0);
    cr_expect_eq(u.n, 100001);
    cr_expect_eq(evq_stall_name(q, what, sizeof what), 0);
    evq_free(q);

    q = evq_new();          /* 5000 events at one instant, progress every 500 */
    spin v = { 0, 500, 5000 };
    evq_set_stall_limit(q, 1000);
    evq_at(q, 0, on_spin, &v, 0);
    evq_run(q, SIMTIME_NEVER);
    cr_expect_eq(evq_overflowed(q), 0, "stalled although progress was reported");
    cr_expect_eq(v.n, 5000);
    evq_free(q);
}

/* Periods whose mean passes the load checks but whose draws are almost all 0 ns
 * (gamma of cv 10^6: shape 10^-12) stall at run time: exit 1, one line naming
 * what kept firing, the database untouched. */
Test(stall_guard, stall_at_run_time_is_exit_1_naming_the_key)
{
    char s[256], g[256], ok[256];
    write_file("s.ini", MMC, s, sizeof s);
    write_file("g.ini", ROUTED, g, sizeof g);
    static const struct { const char *file, *set1, *set2, *want; } cases[] = {
        { "s", "pool cpu.fail_after_s=gamma(mean=1, cv=1e6)", NULL, "what kept firing: [pool cpu] fail_after_s (a unit's failures)" },
        { "s", "pool cpu.pause_every_s=gamma(mean=1, cv=1e6)", "pool cpu.pause_s=gamma(mean=0.001, cv=1e6)",
          "what kept firing: [pool cpu] pause_every_s, pause_s (a unit's pauses)" },
        { "g", "pool gw.pause_every_s=gamma(mean=1, cv=1e6)", "pool gw.pause_s=gamma(mean=0.001, cv=1e6)",
          "what kept firing: [pool gw] pause_every_s, pause_s (the gateway's pauses)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char s1[160], s2[160];
        snprintf(s1, sizeof s1, "%s", cases[i].set1);
        snprintf(s2, sizeof s2, "%s", cases[i].set2 ? cases[i].set2 : "sim.seed=1");
        result r = run_scenario(30, cases[i].file[0] == 's' ? s : g, "--set", s1, "--set", s2, NULL);
        expect_fail(&r, 1, "simulated time stopped advancing at 0 s: over 10000000 events in a row at that instant", s1);
        cr_expect(strstr(r.err, cases[i].want) != NULL, "%s: stderr lacks '%s': %s", s1, cases[i].want, r.err);
        result_free(&r);
    }
    write_file("ok.ini", MMC, ok, sizeof ok);
    size_t len;
    char *bytes = make_db(ok, &len);
    result r = run_scenario(30, s, "--set", "pool cpu.fail_after_s=gamma(mean=1, cv=1e6)", NULL);
    expect_one_line(&r, 1, "[pool cpu] fail_after_s", "with a database");
    result_free(&r);
    expect_db_unchanged(bytes, len, "a stalled run");
    free(bytes);
}

/* The same through the library (sim_run): -1 with the message, nothing leaked
 * (the sanitizer build checks). */
Test(stall_guard, sim_run_returns_the_stall)
{
    scenario sc;
    char err[2048];
    const char *set[] = { "pool cpu.fail_after_s=gamma(mean=1, cv=1e6)", "sim.requests=100", "sim.warmup=10" };
    cr_assert_eq(scenario_load_text(&sc, "m.ini", MMC, set, 3, err, sizeof err), 0, "%s", err);
    sim_result res;
    cr_expect_eq(sim_run(&sc, 1, &res, err, sizeof err), -1);
    cr_expect(strstr(err, "m.ini: simulated time stopped advancing at 0 s") != NULL, "%s", err);
    cr_expect(strstr(err, "[pool cpu] fail_after_s") != NULL, "%s", err);
    cr_expect(strchr(err, '\n') == NULL, "%s", err);
    sim_result_free(&res);
    scenario_free(&sc);
}

/* ---- item 2: time-series intervals ----------------------------------------------- */

/* 1 ms intervals over the default scenario's hour (3929 s: 3.9 million
 * intervals) are refused before anything is written: no database, no CSV; an
 * existing database stays byte-identical. */
Test(stall_ts, too_many_intervals_refused_up_front)
{
    char s[256], csv[256];
    const char *big = "[sim]\nrequests = 200000\nwarmup = 20000\n[workload]\narrival = poisson\nrate = 56\n"
                      "[pool cpu]\nkind = generic\nservers = 4\nservice_ms = exp(mean=50)\n";
    write_file("big.ini", big, s, sizeof s);
    snprintf(csv, sizeof csv, "%s/ts.csv", dir);
    result r = run_scenario(10, s, "--interval", "1ms", "--timeseries", csv, NULL);
    expect_fail(&r, 2, "run: --interval: 0.001 s intervals over the run's expected 3928.57 s of simulated time make "
                "about 3.93e+06 intervals, more than the 1000000 a time series may hold (use an interval of 0.00393 s or longer)",
                "--interval 1ms");
    cr_expect_neq(access(csv, F_OK), 0, "the CSV was written");
    result_free(&r);
    char ok[256];
    write_file("ok.ini", MMC, ok, sizeof ok);
    size_t len;
    char *bytes = make_db(ok, &len);
    r = run_scenario(10, s, "--interval", "3ms", NULL);
    expect_one_line(&r, 2, "about 1.31e+06 intervals, more than the 1000000", "--interval 3ms");
    result_free(&r);
    expect_db_unchanged(bytes, len, "--interval 3ms");
    free(bytes);
    /* 4 ms fits (982 143 intervals): checked without running it. */
    char err[512];
    cr_expect_eq(ts_check_count(3928.57, 0.004, err, sizeof err), 0, "%s", err);
    cr_expect_eq(ts_check_count(3928.57, 0.001, err, sizeof err), -1);
    cr_expect_eq(ts_check_count(0, 0.001, err, sizeof err), 0, "an unknown duration is not refused");
}

/* A run that outlasts its estimate (a closed loop without think time is
 * estimated at 0 s; it lasts 2000 s) stops when the series passes its bound:
 * exit 1, one line, nothing stored. */
Test(stall_ts, run_outlasting_the_estimate_stops_at_the_bound)
{
    char s[256];
    write_file("u.ini", "[sim]\nrequests = 2000\nwarmup = 0\n[workload]\nusers = 1\n"
               "[pool cpu]\nservers = 2\nservice_ms = const(1000)\n", s, sizeof s);
    result r = run_scenario(30, s, "--interval", "1ms", NULL);
    expect_fail(&r, 1, "the time series passed 1000000 intervals of 0.001 s at 1000 s of simulated time", "users");
    result_free(&r);
    char ok[256];
    write_file("ok.ini", MMC, ok, sizeof ok);
    size_t len;
    char *bytes = make_db(ok, &len);
    r = run_scenario(30, s, "--interval", "1ms", NULL);
    expect_one_line(&r, 1, "(the run lasted longer than expected): the run was stopped", "with a database");
    result_free(&r);
    expect_db_unchanged(bytes, len, "a time series past its bound");
    free(bytes);
    /* Within the bound the same scenario stores its series. */
    r = run_scenario(30, s, "--interval", "1s", "--json", NULL);
    cr_expect_eq(r.rc, 0, "--interval 1s: exit %d: %s", r.rc, r.err);
    cr_expect(strstr(r.out, "\"intervals\": 2000") != NULL, "%.300s", r.out);
    result_free(&r);
}

static void no_gauges(void *ctx, ts_gauges *g)
{
    (void) ctx;
    *g = (ts_gauges) { 0, 0, NAN };
}

/* The series itself on a calendar of its own boundary events: rows stop at
 * TS_MAX_INTERVALS, and the interval after them stops the calendar. */
Test(stall_ts, series_overflow_stops_the_calendar)
{
    char err[256];
    tseries *ts = ts_new(0.001, err, sizeof err);
    cr_assert_not_null(ts, "%s", err);
    evq *q = evq_new();
    cr_assert_not_null(q);
    cr_assert_eq(ts_attach(ts, q, no_gauges, NULL), 0);
    uint64_t ran = evq_run(q, SIMTIME_NEVER);
    cr_expect_eq(ran, TS_MAX_INTERVALS + 1, "ran %llu", (unsigned long long) ran);
    cr_expect_eq(ts_overflowed(ts), 1);
    cr_expect_eq(ts_failed(ts), 1);
    cr_expect_eq(ts_count(ts), TS_MAX_INTERVALS);
    cr_expect_eq(evq_now(q), (simtime_t) (TS_MAX_INTERVALS + 1) * 1000000);
    ts_free(ts);
    evq_free(q);
}

/* ---- item 3: memory of per-key allocations ------------------------------------------ */

static const char *CACHE =
    "[sim]\nrequests = 2000\nwarmup = 200\n[workload]\narrival = poisson\nrate = 56\n"
    "[pool cache]\nkind = result_cache\nintents = 1000\nnext = cpu\n"
    "[pool cpu]\nkind = generic\nservers = 4\nservice_ms = exp(mean=50)\n";

/* intents = 1e9 (48 GB of Zipf tables) and its kin are refused at once naming
 * the key, where they took 15 GB and minutes. */
Test(stall_mem, oversize_keys_refused_at_once)
{
    char c[256], s[256], u[256];
    write_file("c.ini", CACHE, c, sizeof c);
    write_file("s.ini", MMC, s, sizeof s);
    write_file("u.ini", "[sim]\nrequests = 1000\n[workload]\nusers = 100000000\n"
               "[pool cpu]\nservers = 4\nservice_ms = exp(mean=50)\n", u, sizeof u);
    static const struct { char f; const char *set1, *set2, *want; } cases[] = {
        { 'c', "pool cache.intents=1e9", NULL, "[pool cache] intents: 1e+09 intents (48 bytes each for their popularity table" },
        { 'c', "workload.intents=1e9", NULL, "[workload] intents: 1000000000 intents (48 bytes each: their popularity table) need about 48" },
        { 'u', "sim.seed=2", NULL, "[workload] users: 100000000 users (" },
        { 's', "pool cpu.servers=10000000", "pool cpu.fail_after_s=exp(mean=3600)", "[pool cpu] servers: 1e+07 units with failures" },
    };
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer cannot run under an address-space limit: the machine's
     * memory is the budget, which must then be below the 48 GB asked. */
    if (scenario_memory_budget() > 40e9) {
        cr_skip_test("%g GB of memory is more than these scenarios ask", scenario_memory_budget() / 1e9);
    }
#else
    child_limits.as = (rlim_t) 4 << 30;   /* a 4 GB budget whatever the machine (scenario_memory_budget reads it) */
#endif
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char s1[160], s2[160];
        snprintf(s1, sizeof s1, "%s", cases[i].set1);
        snprintf(s2, sizeof s2, "%s", cases[i].set2 ? cases[i].set2 : "sim.seed=1");
        result r = run_scenario(10, cases[i].f == 'c' ? c : cases[i].f == 'u' ? u : s, "--set", s1, "--set", s2, NULL);
        expect_fail(&r, 2, cases[i].want, s1);
        cr_expect_lt(r.wall, 5.0, "%s: refused only after %.1f s", s1, r.wall);
        result_free(&r);
    }
    child_limits.as = 0;
}

/* The estimate counts each per-key allocation and blames the largest. */
Test(stall_mem, estimate_per_key)
{
    scenario sc;
    char err[1024];
    const char *base[] = { "sim.seed=1" };
    cr_assert_eq(scenario_load_text(&sc, "c.ini", CACHE, base, 1, err, sizeof err), 0, "%s", err);
    double small = scenario_footprint(&sc);
    scenario_free(&sc);
    /* 10^7 intents: 480 MB of tables plus 2200 cached answers at most (the run's requests). */
    const char *big[] = { "pool cache.intents=1e7" };
    cr_assert_eq(scenario_load_text(&sc, "c.ini", CACHE, big, 1, err, sizeof err), 0, "%s", err);
    double d = scenario_footprint(&sc) - small;
    cr_expect(fabs(d - ((1e7 - 1000) * 48 + (2200 - 1000) * 80)) < 1, "intents added %g bytes", d);
    cr_expect_eq(scenario_check_memory(&sc, 1e8, err, sizeof err), -1);
    cr_expect(strstr(err, "--set: [pool cache] intents: 1e+07 intents (48 bytes each") != NULL, "%s", err);
    cr_expect_eq(scenario_check_memory(&sc, 1e9, err, sizeof err), 0, "%s", err);
    scenario_free(&sc);
    /* Sessions of a class with turns: 10^7 x 24 bytes. */
    const char *sess[] = { "workload.turns=const(3)", "workload.sessions=10000000" };
    cr_assert_eq(scenario_load_text(&sc, "c.ini", MMC, sess, 2, err, sizeof err), 0, "%s", err);
    cr_expect_eq(scenario_check_memory(&sc, 1e8, err, sizeof err), -1);
    cr_expect(strstr(err, "[workload] sessions: 10000000 sessions (24 bytes each)") != NULL, "%s", err);
    scenario_free(&sc);
    /* An autoscaled LLM pool allocates up to max_replicas replicas. */
    sqlite3 *h;
    cr_assert_eq(store_open(":memory:", &h, err, sizeof err), 0, "%s", err);
    const char *as[] = { "pool chat.max_replicas=100000", "pool chat.max_batch=1000" };
    cr_assert_eq(scenario_load_text(&sc, "l.ini", LLM, as, 2, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scenario_resolve(&sc, h, err, sizeof err), 0, "%s", err);
    cr_expect_gt(scenario_footprint(&sc), 1e9, "%g", scenario_footprint(&sc));
    cr_expect_eq(scenario_check_memory(&sc, 1e9, err, sizeof err), -1);
    cr_expect(strstr(err, "[pool chat] max_replicas: 100000 replicas with max_batch 1000 need about") != NULL, "%s", err);
    scenario_free(&sc);
    store_close(h);
}

/* sweep, plan and check run the same memory check as run, for every point:
 * an oversize point is bad input (exit 2), one line, and nothing is stored. */
Test(stall_mem, sweep_plan_and_check_refuse_oversize_points)
{
    char c[256];
    write_file("c.ini", CACHE, c, sizeof c);
    write_file("big.ini", "[sim]\nrequests = 2000\nwarmup = 200\n[workload]\narrival = poisson\nrate = 56\n"
               "[pool cache]\nkind = result_cache\nintents = 1e9\nnext = cpu\n"
               "[pool cpu]\nkind = generic\nservers = 4\nservice_ms = exp(mean=50)\n[slo]\ne2e_p99_ms = 500\n", c, sizeof c);
#if defined(__SANITIZE_ADDRESS__)
    if (scenario_memory_budget() > 40e9) cr_skip_test("more memory than the scenario asks");
#else
    child_limits.as = (rlim_t) 4 << 30;
#endif
    char *sweep[] = { "sweep", c, "--vary", "pool cpu.servers=4:5:1", "--db", db, NULL };
    char *plan[] = { "plan", c, "--target-rate", "50", "--search", "pool cpu.servers=4:8", "--db", db, NULL };
    char *check[] = { "check", c, "--db", db, NULL };
    char *const *cmds[] = { sweep, plan, check };
    for (size_t i = 0; i < 3; i++) {
        result r = run_argv(20, cmds[i]);
        expect_fail(&r, 2, "[pool cache] intents: 1e+09 intents", cmds[i][0]);
        cr_expect_neq(access(db, F_OK), 0, "%s: a database was created", cmds[i][0]);
        result_free(&r);
    }
    child_limits.as = 0;
}

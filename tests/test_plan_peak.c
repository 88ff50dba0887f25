/* test_plan_peak.c -- planning against a trace's peak minutes (`plan --trace
 * FILE`, `--peak-minutes`; workload trace_start_s / trace_length_s): the window
 * search against hand counts, and a trace with a burst planned at its peak
 * needing more servers than the mean-rate plan. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "workload/trace.h"
#include "tbin.h"
#include "tcli.h"

/* Times 0, 1, 2, 10, 10.5, 11, 11.2, 30 s: the busiest 2 s start at 10 (4 rows:
 * 10, 10.5, 11, 11.2), the busiest 1 s at 10.5 (10.5, 11, 11.2; [10, 11) holds
 * two, the window's end being open). */
Test(plan_peak, window_by_hand)
{
    double t[] = { 0, 1, 2, 10, 10.5, 11, 11.2, 30 };
    int32_t pr[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    int64_t h[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };   /* row i: ids h[off[i] .. off[i+1]) */
    size_t off[] = { 0, 1, 2, 3, 5, 6, 7, 8, 10 };
    trace tr = { .n = 8, .t = t, .prompt = pr, .hash = h, .hash_off = off };
    double from;
    size_t rows;
    cr_assert_eq(trace_peak(&tr, 2, &from, &rows), 0);
    cr_expect(from == 10 && rows == 4, "2 s: from %g, %zu rows", from, rows);
    cr_assert_eq(trace_peak(&tr, 1, &from, &rows), 0);
    cr_expect(from == 10.5 && rows == 3, "1 s: from %g, %zu rows", from, rows);
    cr_assert_eq(trace_peak(&tr, 100, &from, &rows), 0);
    cr_expect(from == 0 && rows == 8, "longer than the trace: all of it");
    /* The window [10, 12): rows 3..6, shifted to start at 0, columns with them. */
    trace_window(&tr, 10, 2);
    cr_assert_eq(tr.n, 4);
    cr_expect(t[0] == 0 && t[1] == 0.5 && t[2] == 1 && fabs(t[3] - 1.2) < 1e-12);
    cr_expect(pr[0] == 4 && pr[3] == 7);
    cr_expect(off[0] == 0 && off[1] == 2 && off[4] == 5 && h[0] == 3 && h[1] == 4 && h[4] == 7, "hash ids follow their rows");
    trace empty = { 0 };
    cr_expect_eq(trace_peak(&empty, 1, &from, &rows), -1);
}

static void setup(void) { tcli_setup("/tmp/latsim_ppeak_", NULL); }

/* Two hours of Poisson arrivals at 4 req/s with 10 minutes at 12 req/s (from
 * 3000 s), one M/M/c pool of mean service 500 ms, P99 E2E <= 3 s.  The mean
 * rate (4.7 req/s) needs about 4 servers (offered load 2.35); the burst (12
 * req/s, load 6) needs at least 7 whatever the SLO. */
Test(plan_peak, burst_needs_more_than_mean, .init = setup, .fini = tcli_teardown)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    size_t cap = 64 * 1024, len = 0;
    char *csv = malloc(cap * 16);
    cr_assert(csv);
    len += (size_t) sprintf(csv, "TIMESTAMP\n");
    size_t n = 0;
    for (double t = 0; t < 7200 && n < cap - 1; n++) {
        t += gsl_ran_exponential(r, 1.0 / (t >= 3000 && t < 3600 ? 12.0 : 4.0));
        len += (size_t) sprintf(csv + len, "%.6f\n", t);
    }
    gsl_rng_free(r);
    char tpath[256], spath[256];
    write_file("burst.csv", csv, tpath, sizeof tpath);
    free(csv);
    write_file("p.ini", "[sim]\nrequests = 20000\nseed = 1\n[workload]\nrate = 4\n[pool cpu]\nservice_ms = exp(mean=500)\n"
               "[slo]\ne2e_p99_ms = 3000\n", spath, sizeof spath);
    result m = run(200, "plan", spath, "--search", "pool cpu.servers=1:64", "--no-store", "--no-sensitivity", "--json",
                   "--target-rate", "4.7", NULL);
    cr_assert_eq(m.rc, 0, "%s", m.err);
    result p = run(200, "plan", spath, "--search", "pool cpu.servers=1:64", "--no-store", "--no-sensitivity", "--json",
                   "--trace", tpath, "--set", "workload.time_format=seconds", NULL);
    cr_assert_eq(p.rc, 0, "%s", p.err);
    json_error_t je;
    json_t *jm = json_loads(m.out, 0, &je), *jp = json_loads(p.out, 0, &je);
    cr_assert(jm && jp, "%s", je.text);
    int sm = atoi(json_string_value(json_object_get(json_object_get(json_object_get(jm, "best"), "settings"), "pool cpu.servers")));
    int sp = atoi(json_string_value(json_object_get(json_object_get(json_object_get(jp, "best"), "settings"), "pool cpu.servers")));
    cr_expect(sm >= 3 && sm <= 5, "mean-rate plan: %d servers", sm);
    cr_expect(sp >= 7 && sp > sm, "peak plan: %d servers (mean-rate plan %d)", sp, sm);
    json_t *w = json_object_get(jp, "peak_window");
    cr_assert(w, "%s", p.out);
    double start = json_number_value(json_object_get(w, "start_s")), rate = json_number_value(json_object_get(w, "rate_rps"));
    double rows = json_number_value(json_object_get(w, "requests"));
    /* The burst: 7 200 arrivals expected in its 600 s (sd 85), starting within
     * a few seconds of 3000 s (the window may take in a few 4 req/s arrivals). */
    cr_expect(fabs(start - 3000) < 30, "window starts at %g", start);
    cr_expect(json_number_value(json_object_get(w, "length_s")) == 600);
    cr_expect(fabs(rows - 7200) < 4 * 85, "window holds %g requests", rows);
    cr_expect(fabs(rate - 12) < 0.6, "window rate %g", rate);
    cr_expect(fabs(json_number_value(json_object_get(jp, "target_rate_rps")) - rate) < 1e-9, "the plan's target is the peak rate");
    json_decref(jm);
    json_decref(jp);
    result_free(&m);
    result_free(&p);
    /* Text: the window is said; --peak-minutes without a trace is refused. */
    result t = run(200, "plan", spath, "--search", "pool cpu.servers=1:64", "--no-store", "--no-sensitivity", "--trace", tpath,
                   "--set", "workload.time_format=seconds", "--peak-minutes", "5", NULL);
    cr_assert_eq(t.rc, 0, "%s", t.err);
    cr_expect(strstr(t.out, "peak window: ") && strstr(t.out, "(5 min of 2 h)"), "%s", t.out);
    result_free(&t);
    result b = run(60, "plan", spath, "--search", "pool cpu.servers=1:64", "--no-store", "--peak-minutes", "5", NULL);
    cr_expect_eq(b.rc, 2);
    cr_expect(strstr(b.err, "--peak-minutes") && strstr(b.err, "does not replay a trace"), "%s", b.err);
    result_free(&b);
    result c = run(60, "plan", spath, "--search", "pool cpu.servers=1:64", "--no-store", NULL);
    cr_expect_eq(c.rc, 2);
    cr_expect(strstr(c.err, "plan: missing --target-rate R") != NULL, "%s", c.err);
    result_free(&c);
}

static void setup_db(void) { tcli_setup("/tmp/latsim_ppeak_", "runs.db"); }

/* `latsim report` of a run that a plan simulated shows the plan: its verdicts
 * and its simulated points by cost, the cheapest meeting one marked.  M/M/c at
 * 8 req/s, mean service 100 ms, P99 E2E <= 700 ms: c = 1 misses (P99 sojourn
 * ln(100) / (10 - 8) = 2.3 s), the service alone has a P99 of 460 ms, so a
 * small c meets it. */
Test(plan_peak, report_shows_the_plan, .init = setup_db, .fini = tcli_teardown)
{
    char spath[256], html[256];
    write_file("m.ini", "[sim]\nrequests = 4000\nseed = 1\n[workload]\nrate = 8\n[pool cpu]\nservice_ms = exp(mean=100)\n"
               "usd_per_hour = 1\n[slo]\ne2e_p99_ms = 700\n", spath, sizeof spath);
    result p = run(200, "plan", spath, "--search", "pool cpu.servers=1:16", "--no-sensitivity", "--target-rate", "8", "--db", db,
                   "--json", NULL);
    cr_assert_eq(p.rc, 0, "%s", p.err);
    json_t *j = json_loads(p.out, 0, NULL);
    cr_assert(j, "%s", p.out);
    const char *best = json_string_value(json_object_get(json_object_get(json_object_get(j, "best"), "settings"), "pool cpu.servers"));
    cr_assert(best);
    char chosen[64];
    snprintf(chosen, sizeof chosen, "servers=%s", best);
    json_decref(j);
    result_free(&p);
    snprintf(html, sizeof html, "%s/r.html", dir);
    result r = run(200, "report", "1", "--html", html, "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char *page = slurp_or_fail(html, NULL);
    cr_expect(strstr(page, "<h2 id=\"plan\">Plan</h2>") != NULL, "no plan section");
    cr_expect(strstr(page, "CHOSEN: meets") != NULL, "the chosen verdict");
    cr_expect(strstr(page, chosen) != NULL, "the chosen configuration %s", chosen);
    cr_expect(strstr(page, "<b>met: cheapest</b>") != NULL, "the frontier's cheapest meeting point");
    cr_expect(strstr(page, "missed") != NULL, "points below it miss");
    /* The frontier as a picture too (plots/frontier.gp), inside the plan section. */
    if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
        char *plan = strstr(page, "<h2 id=\"plan\">"), *end = plan ? strstr(plan, "<h2 id=\"scenarios\">") : NULL;
        cr_assert(plan && end);
        *end = '\0';
        char *svg = strstr(plan, "<svg");
        cr_expect(svg != NULL, "no frontier picture in the plan section");
        cr_expect(svg && strstr(svg, "Cost against SLO, plan 1") != NULL, "the picture's title");
        cr_expect(svg && strstr(svg, "frontier: best ratio at this cost") != NULL, "the frontier's legend");
        cr_expect(strstr(plan, "<b>met: cheapest</b>") != NULL, "the table kept");
        *end = '<';
    } else cr_assert(getenv("CI") == NULL || strcmp(getenv("CI"), "true"), "CI=true but gnuplot is not installed");
    free(page);
    /* A run from no plan: no plan section. */
    result s = run(120, "run", spath, "--db", db, "--set", "pool cpu.servers=3", NULL);
    cr_assert_eq(s.rc, 0, "%s", s.err);
    result_free(&s);
    char id[32];
    snprintf(id, sizeof id, "%lld", db_count(db, "SELECT max(id) FROM runs"));
    r = run(200, "report", id, "--html", html, "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    page = slurp_or_fail(html, NULL);
    cr_expect(strstr(page, "id=\"plan\"") == NULL, "a plan section for a plain run");
    free(page);
}

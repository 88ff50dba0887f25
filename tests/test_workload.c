/* test_workload.c -- the workload source (sim/workload/workload.c): traces as attribute
 * sources (sequential and shuffled), rate schedules (arrival counts against the
 * rate's integral, diurnal peak and trough, one-value schedules equal to a
 * plain rate bit for bit), closed-loop users against the machine-repairman
 * model (M/M/1//N) and the interactive response-time law, request classes, and
 * repeat_token_share on a slice of the Mooncake conversation trace against an
 * independent count.  Fixed seeds; every statistical tolerance says where it
 * comes from. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "report/report.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "store/store.h"
#include "workload/workload.h"
#include "tsim.h"

#define SHAREGPT "tests/data/sharegpt_lengths.csv"      /* 1000 rows of prompt/output lengths */
#define MOONCAKE "tests/data/mooncake_conversation_1000.jsonl"

/* Loads and resolves TEXT (relative paths from the repository root). */
static void load(const char *text, scenario *sc)
{
    char err[1024];
    sqlite3 *db = NULL;
    cr_assert_eq(scenario_load_text(sc, "./workload_test.ini", text, NULL, 0, err, sizeof err), 0, "%s", err);
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scenario_resolve(sc, db, err, sizeof err), 0, "%s", err);
    store_close(db);
}

static void run(const char *text, uint64_t seed, sim_result *res)
{
    scenario sc;
    char err[1024];
    load(text, &sc);
    cr_assert_eq(sim_run(&sc, seed, res, err, sizeof err), 0, "%s", err);
    scenario_free(&sc);
}

/* ---- traces as attribute sources ------------------------------------------------ */

#define ATTR_TRACE(order) \
    "[sim]\nrequests = 1000\n[workload]\narrival = poisson\nrate = 10\n" \
    "trace = " SHAREGPT "\nprompt_column = num_prefill_tokens\noutput_column = num_decode_tokens\n" \
    "trace_order = " order "\n[pool cpu]\nservice_ms = exp(mean=1)\n"

/* Fills PASSES x n requests from SC's source; returns the prompt and output
 * counts in P and O (malloc'ed). */
static void fill_passes(const scenario *sc, uint64_t seed, int passes, double **p, double **o)
{
    size_t n = sc->wl.tr.n * (size_t) passes;
    *p = malloc(n * sizeof **p);
    *o = malloc(n * sizeof **o);
    cr_assert(*p && *o);
    wl_source *src = wl_new(&sc->wl, seed, 1);
    cr_assert_not_null(src);
    for (size_t i = 0; i < n; i++) {
        request r = { 0 };
        cr_assert_eq(wl_fill(src, &r), 0);
        (*p)[i] = r.prompt;
        (*o)[i] = r.output;
    }
    wl_free(src);
}

/* Whole passes over the trace give its exact means (sums of integers, exact in
 * doubles) and its exact prompt/output correlation: the same pairs, each once
 * per pass. */
static void expect_trace_moments(const scenario *sc, const double *p, const double *o, int passes)
{
    size_t n = sc->wl.tr.n;
    double tp[1000], to[1000];
    cr_assert_eq(n, 1000);
    for (size_t i = 0; i < n; i++) { tp[i] = sc->wl.tr.prompt[i]; to[i] = sc->wl.tr.output[i]; }
    double sp = 0, so = 0, tsp = 0, tso = 0;
    for (size_t i = 0; i < n * (size_t) passes; i++) { sp += p[i]; so += o[i]; }
    for (size_t i = 0; i < n; i++) { tsp += tp[i]; tso += to[i]; }
    cr_expect_eq(sp, passes * tsp, "prompt tokens %.0f, trace %.0f x %d", sp, tsp, passes);
    cr_expect_eq(so, passes * tso, "output tokens %.0f, trace %.0f x %d", so, tso, passes);
    double want = gsl_stats_correlation(tp, 1, to, 1, n);
    double got = gsl_stats_correlation(p, 1, o, 1, n * (size_t) passes);
    cr_expect(fabs(got - want) < 1e-9, "correlation %.12f, trace %.12f", got, want);
    cr_expect(fabs(want) > 0.01, "the check needs a trace whose lengths are correlated (%.3f)", want);
}

Test(workload, trace_sequential_keeps_rows_means_and_correlation)
{
    scenario sc;
    load(ATTR_TRACE("sequential"), &sc);
    cr_assert(sc.wl.has_trace && sc.wl.trace_tokens);
    double *p, *o;
    fill_passes(&sc, 1, 3, &p, &o);
    for (size_t i = 0; i < 3000; i++) {           /* file order, pass after pass */
        cr_assert_eq(p[i], sc.wl.tr.prompt[i % 1000], "request %zu", i);
        cr_assert_eq(o[i], sc.wl.tr.output[i % 1000], "request %zu", i);
    }
    expect_trace_moments(&sc, p, o, 3);
    free(p); free(o);
    scenario_free(&sc);
}

Test(workload, trace_shuffle_is_a_fresh_permutation_each_pass)
{
    scenario sc;
    load(ATTR_TRACE("shuffle"), &sc);
    double *p, *o, *p2, *o2;
    fill_passes(&sc, 1, 2, &p, &o);
    expect_trace_moments(&sc, p, o, 2);
    /* Each pass holds every row once: the multiset of (prompt, output) pairs of
     * each pass is the trace's (compared as sorted keys). */
    for (int pass = 0; pass < 2; pass++) {
        double a[1000], b[1000];
        for (int i = 0; i < 1000; i++) {
            a[i] = p[pass * 1000 + i] * 1e6 + o[pass * 1000 + i];
            b[i] = sc.wl.tr.prompt[i] * 1e6 + sc.wl.tr.output[i];
        }
        gsl_sort(a, 1, 1000);
        gsl_sort(b, 1, 1000);
        for (int i = 0; i < 1000; i++) cr_assert_eq(a[i], b[i], "pass %d is not a permutation of the rows", pass);
    }
    int same_as_file = 0, same_passes = 0;
    for (int i = 0; i < 1000; i++) {
        same_as_file += p[i] == sc.wl.tr.prompt[i] && o[i] == sc.wl.tr.output[i];
        same_passes += p[i] == p[1000 + i] && o[i] == o[1000 + i];
    }
    /* A random permutation fixes about one element; a few dozen would mean no shuffle. */
    cr_expect_lt(same_as_file, 30, "%d rows kept their place", same_as_file);
    cr_expect_lt(same_passes, 30, "the second pass repeats the first (%d rows)", same_passes);
    /* Same seed, same order; another seed, another. */
    fill_passes(&sc, 1, 1, &p2, &o2);
    cr_expect_eq(memcmp(p, p2, 1000 * sizeof *p), 0);
    free(p2); free(o2);
    fill_passes(&sc, 2, 1, &p2, &o2);
    cr_expect_neq(memcmp(p, p2, 1000 * sizeof *p), 0);
    free(p2); free(o2);
    free(p); free(o);
    scenario_free(&sc);
}

/* ---- rate schedules ---------------------------------------------------------------- */

static const char *SCHEDULES[] = {
    "schedule(0s:20, 10m:60, 20m:35)",
    "ramp(0s:5, 30m:80, 1h:20)",
    "diurnal(mean=40, peak_to_trough=3, period=40m, peak_at=15m)",
};

/* The closed forms of the rate's integral and its inverse against the rate
 * itself (midpoint sums: exact for the steps and ramps, whose corners fall on
 * the grid; error O(h^2) ~ 1e-6 for the sinusoid). */
Test(workload, rate_integral_and_inverse)
{
    for (size_t k = 0; k < 3; k++) {
        wl_rate r;
        char err[256];
        cr_assert_eq(wl_rate_parse(SCHEDULES[k], &r, err, sizeof err), 0, "%s", err);
        double sum = 0, h = 0.5;
        for (double t = 0; t < 7200; t += h) {
            sum += h * wl_rate_at(&r, t + 0.5 * h);
            double c = wl_rate_cum(&r, t + h);
            cr_assert(fabs(sum - c) < 1e-6 * (1 + c), "%s: integral to %g s: %.9g, closed form %.9g", SCHEDULES[k], t + h, sum, c);
            double back = wl_rate_inv(&r, c);
            cr_assert(fabs(back - (t + h)) < 1e-7 * (t + h), "%s: inverse at %g s gives %.12g", SCHEDULES[k], t + h, back);
        }
        wl_rate_free(&r);
    }
}

/* Arrivals in each 5-minute bin of 2 hours against the rate's integral over
 * the bin.  Poisson: the count is Poisson with that mean, tolerance 4.5 sd
 * (24 bins x 3 schedules: a false alarm has probability < 1e-3).  Gamma with
 * cv 0.5 (time-scaled renewal): the count's variance is about cv^2 x mean, so
 * the same bound is loose.  Constant: the count is the integral within 1. */
Test(workload, arrivals_per_interval_match_the_rate_integral)
{
    const char *arrivals[] = { "poisson", "gamma", "constant" };
    for (size_t a = 0; a < 3; a++)
        for (size_t k = 0; k < 3; k++) {
            char text[512];
            snprintf(text, sizeof text, "[workload]\narrival = %s\ncv = 0.5\nrate = %s\n[pool cpu]\nservice_ms = exp(mean=1)\n",
                     arrivals[a], SCHEDULES[k]);
            scenario sc;
            load(text, &sc);
            cr_assert_neq(sc.wl.sched.kind, RATE_FIXED);
            wl_source *src = wl_new(&sc.wl, 7, 0);
            double bin = 300, count[24] = { 0 };
            simtime_t t = 0;
            for (uint64_t id = 0;; id++) {
                t = wl_next_time(src, t, id);
                double s = simtime_to_s(t);
                if (s >= 24 * bin) break;
                count[(int) (s / bin)]++;
            }
            for (int b = 0; b < 24; b++) {
                double want = wl_rate_cum(&sc.wl.sched, (b + 1) * bin) - wl_rate_cum(&sc.wl.sched, b * bin);
                double tol = a == 2 ? 1.0 + 1e-9 : 4.5 * sqrt(want);
                cr_expect(fabs(count[b] - want) <= tol, "%s %s: bin %d has %.0f arrivals, integral %.1f (tolerance %.1f)",
                          arrivals[a], SCHEDULES[k], b, count[b], want, tol);
            }
            wl_free(src);
            scenario_free(&sc);
        }
}

/* The rate peaks at peak_at and bottoms out half a period later, with the
 * asked ratio; arrivals binned by phase over 10 periods (about 24 000 per
 * period, 2 000 per bin: Poisson sd 45, while neighbouring bins differ by
 * hundreds) are highest in the bin around the peak and lowest around the trough. */
Test(workload, diurnal_peak_and_trough)
{
    wl_rate r;
    char err[256];
    cr_assert_eq(wl_rate_parse("diurnal(mean=40, peak_to_trough=3, period=10m, peak_at=125s)", &r, err, sizeof err), 0, "%s", err);
    cr_expect(fabs(wl_rate_at(&r, 125) - 60) < 1e-9, "peak %g", wl_rate_at(&r, 125));
    cr_expect(fabs(wl_rate_at(&r, 425) - 20) < 1e-9, "trough %g", wl_rate_at(&r, 425));
    cr_expect(fabs(wl_rate_at(&r, 725) - 60) < 1e-9, "next peak %g", wl_rate_at(&r, 725));
    cr_expect(fabs(wl_rate_cum(&r, 600) - 40 * 600) < 1e-6, "one period holds mean x period arrivals");
    wl_rate_free(&r);

    scenario sc;
    load("[workload]\nrate = diurnal(mean=40, peak_to_trough=3, period=10m, peak_at=125s)\n[pool cpu]\nservice_ms = exp(mean=1)\n", &sc);
    wl_source *src = wl_new(&sc.wl, 3, 0);
    double count[12] = { 0 };
    simtime_t t = 0;
    for (uint64_t id = 0;; id++) {
        t = wl_next_time(src, t, id);
        double s = simtime_to_s(t);
        if (s >= 6000) break;
        count[(int) (fmod(s, 600) / 50)]++;
    }
    int hi = 0, lo = 0;
    for (int b = 1; b < 12; b++) {
        if (count[b] > count[hi]) hi = b;
        if (count[b] < count[lo]) lo = b;
    }
    cr_expect_eq(hi, 2, "most arrivals in phase bin %d, want 2 (100-150 s, around the peak at 125 s)", hi);
    cr_expect_eq(lo, 8, "fewest arrivals in phase bin %d, want 8 (400-450 s, around the trough at 425 s)", lo);
    double ratio = count[hi] / count[lo];
    cr_expect(ratio > 2.6 && ratio < 3.0, "peak/trough bin ratio %.3f (the rate's is 3, a bin average slightly less)", ratio);
    wl_free(src);
    scenario_free(&sc);
}

/* Every reported number except the wall time, exactly. */
/* Removes the rows of family FAMILY from R (freeing what they own). */
static void drop_family(sim_result *r, const char *family)
{
    size_t n = 0;
    for (size_t i = 0; i < r->rows.n; i++) {
        sim_row *w = &r->rows.row[i];
        if (strcmp(w->family, family)) {
            r->rows.row[n++] = *w;
            continue;
        }
        free(w->scope);
        free(w->metric);
        free(w->text);
        free(w->dist);
    }
    r->rows.n = n;
}

static void expect_same_report(const sim_result *a, const sim_result *b, const char *what)
{
    report ra, rb;
    cr_assert_eq(report_flatten(a, -1, &ra), 0);
    cr_assert_eq(report_flatten(b, -1, &rb), 0);
    cr_assert_eq(ra.n, rb.n, "%s: %zu rows vs %zu", what, ra.n, rb.n);
    for (size_t i = 0; i < ra.n; i++) {
        cr_assert_str_eq(ra.rows[i].metric, rb.rows[i].metric);
        if (!strcmp(ra.rows[i].metric, "wall_time_s")) continue;
        double x = ra.rows[i].value, y = rb.rows[i].value;
        cr_expect(x == y || (isnan(x) && isnan(y)), "%s: %s %s %s: %.17g vs %.17g", what, ra.rows[i].scope,
                  ra.rows[i].metric, ra.rows[i].stat, x, y);
    }
    report_free(&ra);
    report_free(&rb);
}

Test(workload, one_value_schedule_equals_plain_rate_bit_for_bit)
{
    const char *arrivals[] = { "poisson", "gamma", "constant" };
    const char *forms[] = { "schedule(0s:40)", "schedule(0s:40, 10m:40)", "ramp(0s:40, 1h:40)",
                            "diurnal(mean=40, peak_to_trough=1, period=1h)" };
    for (size_t a = 0; a < 3; a++) {
        char text[512];
        sim_result plain;
        snprintf(text, sizeof text, "[sim]\nrequests = 20000\n[workload]\narrival = %s\ncv = 2\nrate = 40\n"
                 "[pool cpu]\nservice_ms = exp(mean=20)\n", arrivals[a]);
        run(text, 5, &plain);
        for (size_t f = 0; f < 4; f++) {
            sim_result sched;
            snprintf(text, sizeof text, "[sim]\nrequests = 20000\n[workload]\narrival = %s\ncv = 2\nrate = %s\n"
                     "[pool cpu]\nservice_ms = exp(mean=20)\n", arrivals[a], forms[f]);
            run(text, 5, &sched);
            char what[128];
            snprintf(what, sizeof what, "%s %s", arrivals[a], forms[f]);
            expect_same_report(&plain, &sched, what);
            sim_result_free(&sched);
        }
        sim_result_free(&plain);
    }
}

/* ---- closed-loop users ------------------------------------------------------------- */

/* N users, exponential think time Z, one exponential server of mean S: the
 * machine-repairman model M/M/1//N.  p0 = 1 / sum_n N!/(N-n)! (S/Z)^n,
 * X = (1 - p0) / S, R = N / X - Z.  With N = 10, S = 10 ms, Z = 100 ms:
 * X = 78.54 /s, R = 27.32 ms.  Tolerance: 10 runs of 200 000 requests with
 * seeds 1..10 (latsim run --replications 10) spread R with sd 0.09 ms and X
 * with sd 0.165 /s, so 4 sd is 0.36 ms and 0.66 /s: 0.4 ms and 0.7 /s.  The
 * interactive response-time law N = X (R + Z) holds within the same sampling
 * error: sd(N) <= (R + Z) sd(X) + X sd(R) = 0.021 + 0.007, 4 sd about 0.1
 * (Z is the think distribution's mean). */
Test(workload, closed_loop_matches_machine_repairman)
{
    const int N = 10;
    const double S = 10, Z = 100;
    double sum = 0, term = 1;
    for (int n = 0; n <= N; n++) {
        sum += term;
        term *= (double) (N - n) * S / Z;
    }
    double p0 = 1 / sum, X = (1 - p0) / (S / 1000), R = N / X * 1000 - Z;
    sim_result res;
    run("[sim]\nrequests = 200000\n[workload]\nusers = 10\nthink_ms = exp(mean=100)\n"
        "[pool cpu]\nservice_ms = exp(mean=10)\n", 1, &res);
    cr_expect_eq(tsim_n(&res, "served"), 200000);
    cr_expect_eq(tsim_sat(&res), 0);
    cr_expect(fabs(tsim_sys(&res, "e2e")->mean - R) < 0.4, "R %.3f ms, M/M/1//N %.3f ms", tsim_sys(&res, "e2e")->mean,
              R);
    cr_expect(fabs(tsim_v(&res, "throughput_rps") - X) < 0.7, "X %.3f /s, M/M/1//N %.3f /s",
              tsim_v(&res, "throughput_rps"), X);
    double n = tsim_v(&res, "throughput_rps") * (tsim_sys(&res, "e2e")->mean + Z) / 1000;
    cr_expect(fabs(n - N) < 0.1, "X (R + Z) = %.4f, want N = %d", n, N);
    /* Little's law on the system: the mean number inside is X R. */
    double inside = tsim_v(&res, "throughput_rps") * tsim_sys(&res, "e2e")->mean / 1000;
    double in_system = sim_result_get(&res, "", "mean_in_system", "value");
    double achieved = sim_result_get(&res, "", "achieved_rps", "value");
    cr_expect(fabs(in_system - inside) < 0.01 * inside, "mean in system %.4f, X R = %.4f", in_system, inside);
    cr_expect(fabs(achieved - tsim_v(&res, "throughput_rps")) < 0.01 * X, "achieved %.3f vs throughput %.3f", achieved,
              tsim_v(&res, "throughput_rps"));
    cr_expect_not_null(sim_result_row(&res, "", "achieved_rps", "value"), "a closed loop reports achieved_rps");
    sim_result_free(&res);
}

/* Users never have more than one request in the system each; with a ramp the
 * last user starts at (N-1)/N x ramp_users_s. */
Test(workload, closed_loop_users_bound_the_system)
{
    scenario sc;
    load("[sim]\nrequests = 5000\n[workload]\nusers = 8\nthink_ms = const(5)\nramp_users_s = 16\n"
         "[pool cpu]\nservers = 2\nservice_ms = exp(mean=50)\n", &sc);
    wl_source *src = wl_new(&sc.wl, 1, 0);
    cr_expect_eq(wl_users(src), 8);
    cr_expect_eq(wl_user_start(src, 0), 0);
    cr_expect_eq(wl_user_start(src, 7), simtime_from_s(14));
    wl_free(src);
    sim_result res;
    char err[256];
    cr_assert_eq(sim_run(&sc, 1, &res, err, sizeof err), 0, "%s", err);
    cr_expect_leq(tsim_n(&res, "peak_in_system"), 8);
    cr_expect_leq(sim_result_get(&res, "", "mean_in_system", "value"), 8);
    sim_result_free(&res);
    scenario_free(&sc);
}

/* ---- classes ------------------------------------------------------------------------- */

/* Shares 1 : 2 : 5 over 40 000 measured requests: each class's count is
 * binomial, tolerance 4.5 sd.  Per-class counts add up to the totals, and the
 * class routed to its own pool is all that pool sees. */
Test(workload, class_shares_and_counts_add_up)
{
    sim_result res;
    run("[sim]\nrequests = 40000\nwarmup = 0\n[workload]\nrate = 150\n"
        "[class a]\nshare = 1\n[class b]\nshare = 2\n[class c]\nshare = 5\ntarget = fast\n"
        "[pool cpu]\nservers = 2\nservice_ms = exp(mean=20)\nqueue_limit = 2\n"
        "[pool fast]\nservers = 4\nservice_ms = exp(mean=10)\ntimeout_ms = 1\n", 1, &res);
    cr_assert_eq(tsim_nclasses(&res), 3);
    double want[3] = { 1.0 / 8, 2.0 / 8, 5.0 / 8 };
    uint64_t req = 0, served = 0, rej = 0, to = 0, e2e_n = 0;
    double m = 0;
    for (int c = 0; c < 3; c++) {
        const char *k = tsim_class_name(&res, c);
        uint64_t kreq = (uint64_t) tsim_class(&res, k, "requests"), kserved = (uint64_t) tsim_class(&res, k, "served");
        uint64_t krej = (uint64_t) tsim_class(&res, k, "rejected"), kto = (uint64_t) tsim_class(&res, k, "timed_out");
        stat_summary e2e = tsim_class_latency(&res, k, "e2e");
        double n = (double) tsim_n(&res, "requests"), sd = sqrt(n * want[c] * (1 - want[c]));
        cr_expect(fabs((double) kreq - n * want[c]) < 4.5 * sd, "class %s: %llu requests, want %.0f +- %.0f",
                  k, (unsigned long long) kreq, n * want[c], 4.5 * sd);
        req += kreq; served += kserved; rej += krej; to += kto;
        e2e_n += e2e.n;
        m += e2e.mean * (double) e2e.n;
        cr_expect_eq(kserved + krej + kto, kreq, "class %s", k);
    }
    cr_expect_eq(req, tsim_n(&res, "requests"));
    cr_expect_eq(served, tsim_n(&res, "served"));
    cr_expect_eq(rej, tsim_n(&res, "rejected"));
    cr_expect_eq(to, tsim_n(&res, "timed_out"));
    cr_expect_eq(e2e_n, tsim_sys(&res, "e2e")->n);
    cr_expect_gt(rej, 0, "the check needs rejections");
    cr_expect_gt(to, 0, "the check needs timeouts");
    cr_expect_eq((double) tsim_pv(&res, 1, "arrivals"), tsim_class(&res, "c", "requests"), "only class c enters pool fast (warmup = 0)");
    /* The overall mean is the served-weighted mean of the class means. */
    cr_expect(fabs(m / (double) tsim_sys(&res, "e2e")->n - tsim_sys(&res, "e2e")->mean) <
              1e-9 * tsim_sys(&res, "e2e")->mean);
    sim_result_free(&res);
}

/* One class section with no keys of its own is the implicit class: the same
 * numbers as no section at all (only the per-class rows are added). */
Test(workload, one_class_changes_nothing)
{
    const char *base = "[sim]\nrequests = 20000\n[workload]\nrate = 100\n"
                       "prompt_tokens = lognormal(mean=300, cv=1)\noutput_tokens = exp(mean=50)\n"
                       "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n";
    char text[1024];
    snprintf(text, sizeof text, "%s[class all]\n", base);
    sim_result a, b;
    run(base, 3, &a);
    run(text, 3, &b);
    cr_assert_eq(tsim_nclasses(&b), 1);
    cr_expect_eq(tsim_class(&b, "all", "served"), (double) tsim_n(&b, "served"));
    drop_family(&b, "classes");   /* compare the rest */
    cr_assert_eq(tsim_nclasses(&b), 0);
    expect_same_report(&a, &b, "one [class] section");
    sim_result_free(&a);
    sim_result_free(&b);
}

/* ---- Mooncake traces: hash ids and repeat_token_share ---------------------------------- */

/* The definition, counted independently: rows in file order, a table of the
 * ids seen so far (ids are small integers), the leading run of ids already
 * seen for each measured row. */
static double independent_share(int warmup, int measured, int block)
{
    FILE *f = fopen(MOONCAKE, "r");
    cr_assert_not_null(f);
    char *line = NULL;
    size_t cap = 0;
    unsigned char *seen = calloc(1 << 22, 1);
    double rep = 0, tot = 0;
    for (int row = 0; row < warmup + measured && getline(&line, &cap, f) > 0; row++) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        cr_assert_not_null(o, "%s", je.text);
        json_t *h = json_object_get(o, "hash_ids");
        size_t n = json_array_size(h), run = 0;
        while (run < n && seen[json_integer_value(json_array_get(h, run))]) run++;
        for (size_t i = 0; i < n; i++) {
            json_int_t id = json_integer_value(json_array_get(h, i));
            cr_assert(id >= 0 && id < (1 << 22));
            seen[id] = 1;
        }
        double in = (double) json_integer_value(json_object_get(o, "input_length"));
        if (row >= warmup) {
            rep += fmin(in, (double) run * block);
            tot += in;
        }
        json_decref(o);
    }
    free(line);
    free(seen);
    fclose(f);
    return rep / tot;
}

Test(workload, repeat_token_share_matches_an_independent_count)
{
    const char *arrivals[] = { "arrival = trace\nspeedup = 20", "arrival = poisson\nrate = 5" };
    int blocks[] = { 512, 256 };
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            char text[512];
            snprintf(text, sizeof text, "[sim]\nrequests = 800\nwarmup = 150\n[workload]\n%s\ntrace = " MOONCAKE "\n"
                     "hash_block_tokens = %d\n[pool cpu]\nservers = 64\nservice_ms = exp(mean=10)\n", arrivals[a], blocks[b]);
            sim_result res;
            run(text, 1, &res);
            double want = independent_share(150, 800, blocks[b]);
            double share = sim_result_get(&res, "", "repeat_token_share", "value");
            cr_expect(fabs(share - want) < 1e-12, "%s, %d-token blocks: %.15f, counted %.15f",
                      arrivals[a], blocks[b], share, want);
            cr_expect(want > 0.05 && want < 0.95, "a slice with some reuse (%.3f)", want);
            sim_result_free(&res);
        }
}

/* Requests point at their row's ids in the trace's one flat array. */
Test(workload, requests_carry_their_rows_hash_ids)
{
    scenario sc;
    load("[sim]\nwarmup = 0\n[workload]\narrival = trace\ntrace = " MOONCAKE "\n[pool cpu]\nservice_ms = exp(mean=1)\n", &sc);
    cr_assert_not_null(sc.wl.tr.hash);
    wl_source *src = wl_new(&sc.wl, 1, 1);
    request r0 = { 0 }, r1 = { 0 };
    cr_assert_eq(wl_fill(src, &r0), 0);
    cr_assert_eq(wl_fill(src, &r1), 0);
    cr_expect_eq(r0.prompt, 6758);
    cr_expect_eq(r0.output, 500);
    cr_expect_eq(r0.attrs.nhash, 14);       /* [0, 1, ..., 13] */
    for (int i = 0; i < 14; i++) cr_expect_eq(r0.attrs.hash_ids[i], i);
    cr_expect_eq(r1.attrs.nhash, 15);       /* [0, 14, 15, ..., 27] */
    cr_expect_eq(r1.attrs.hash_ids[0], 0);
    cr_expect_eq(r1.attrs.hash_ids[1], 14);
    cr_expect_eq(r1.attrs.hash_ids, sc.wl.tr.hash + 14, "shared with the trace, not copied");
    wl_free(src);
    scenario_free(&sc);
}

/* ---- CSV class column --------------------------------------------------------------- */

/* A CSV trace names each row's class: requests take the class (and the
 * tokens) of their row, the shares are the trace's, and per-class counts
 * follow the rows exactly (sequential order, 4 000 requests = 10 passes). */
Test(workload, csv_class_column_gives_each_rows_class)
{
    const char *path = "/tmp/latsim_wl_classes.csv";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "p,o,kind\n");
    for (int i = 0; i < 400; i++)   /* 100 "long" rows, 300 "short" */
        fprintf(f, "%d,%d,%s\n", i % 4 == 0 ? 2000 : 100, i % 4 == 0 ? 50 : 5, i % 4 == 0 ? "long" : "short");
    fclose(f);
    char text[1024];
    snprintf(text, sizeof text, "[sim]\nrequests = 4000\nwarmup = 0\n[workload]\nrate = 5\ntrace = %s\n"
             "prompt_column = p\noutput_column = o\nclass_column = kind\n"
             "[class short]\nshare = 7\n[class long]\ntarget = big\n"
             "[pool small]\nservice_ms = exp(mean=10)\n[pool big]\nservers = 2\nservice_ms = exp(mean=10)\n", path);
    scenario sc;
    load(text, &sc);
    cr_expect(fabs(sc.wl.classes[0].share - 0.75) < 1e-12, "share of short %g (the trace's, not 7/8)", sc.wl.classes[0].share);
    cr_expect(fabs(sc.wl.classes[1].share - 0.25) < 1e-12, "share of long %g", sc.wl.classes[1].share);
    wl_source *src = wl_new(&sc.wl, 1, 1);
    for (int i = 0; i < 800; i++) {
        request r = { 0 };
        cr_assert_eq(wl_fill(src, &r), 0);
        int longrow = i % 4 == 0;
        cr_assert_eq(r.cls, longrow ? 1 : 0, "request %d", i);
        cr_assert_eq(r.target, longrow ? 1 : 0, "request %d", i);
        cr_assert_eq(r.prompt, longrow ? 2000 : 100, "request %d", i);
    }
    wl_free(src);
    sim_result res;
    char err[256];
    cr_assert_eq(sim_run(&sc, 1, &res, err, sizeof err), 0, "%s", err);
    cr_expect_eq(tsim_class(&res, "short", "requests"), 3000);
    cr_expect_eq(tsim_class(&res, "long", "requests"), 1000);
    cr_expect_eq(tsim_pv(&res, 1, "arrivals"), 1000);
    sim_result_free(&res);
    scenario_free(&sc);
    /* A row naming a class the scenario lacks: the error names the trace, the
     * data row and the key (the first "long" row is data row 1). */
    snprintf(text, sizeof text, "[workload]\nrate = 5\ntrace = %s\nprompt_column = p\noutput_column = o\n"
             "class_column = kind\n[class short]\n[pool small]\nservice_ms = exp(mean=10)\n", path);
    cr_assert_neq(scenario_load_text(&sc, "s.ini", text, NULL, 0, err, sizeof err), 0);
    scenario_free(&sc);
    cr_assert(strstr(err, "s.ini:6: [workload] class_column: /tmp/latsim_wl_classes.csv: data row 1 names class 'long', "
                          "which has no [class long] section"), "%s", err);
    unlink(path);
}

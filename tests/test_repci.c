/* test_repci.c -- Criterion tests of the statistics hardening: the 95 %
 * intervals of percentiles over replications (sim/engine/repci.c, report_aggregate),
 * and the offered-load saturation test with its sampling error (sim/run/sim.c,
 * load_exceeds).
 *
 * Intervals are judged by their coverage of exact values: the queue wait of
 * M/M/c has P(W > t) = C(c, a) e^{-(c mu - lambda) t} (Erlang C), so its
 * percentile t_p = ln(C / (1 - p)) / (c mu - lambda) when C > 1 - p, and its mean
 * is C / (c mu - lambda).  A trial is one `--replications 10` (seeds of its own:
 * trial k uses seeds 1 + 10k .. 10 + 10k, so that no two trials share a run);
 * 40 trials are run in-process (scenario_load_text, sim_run, report_flatten,
 * report_aggregate: what `latsim run --replications` does).
 *
 * The bound on coverage.  For a true 95 % interval the number of the 40 trials
 * that cover is Binomial(40, 0.95): P(X <= 33) = 0.0034, so asserting X >= 34
 * (85 %) fails a correct interval about once in 300 seed blocks, while the
 * plain Student-t interval of the runs' P99 (true coverage about 0.47 at rho
 * 0.95, 20 000 requests) passes it with probability below 1e-8.
 *
 * Some tests run ./latsim in a forked child bounded by alarm() (the pattern of
 * test_hostile.c), in a temporary directory of their own.
 */
#include <criterion/criterion.h>
#include "tsim.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gsl/gsl_cdf.h>
#include <jansson.h>

#include "engine/repci.h"
#include "report/report.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "store/store.h"
#include "store/task.h"

#include "tbin.h"
#include "tcli.h"
#define S_MS 10.0          /* mean service time of every pool here, ms */
#define REPS 10            /* replications per trial */
#define TRIALS 40          /* trials per coverage test */

/* ---- in-process runs --------------------------------------------------------- */

/* Loads TEXT and resolves it against an in-memory catalog into SC. */
static void load(const char *text, scenario *sc)
{
    char err[1024] = "";
    sqlite3 *db = NULL;
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "store_open: %s", err);
    cr_assert_eq(scenario_load_text(sc, "h2stats.ini", text, NULL, 0, err, sizeof err), 0, "%s\n%s", err, text);
    cr_assert_eq(scenario_resolve(sc, db, err, sizeof err), 0, "scenario_resolve: %s", err);
    store_close(db);
}

/* M/M/C with exponential service of mean S_MS at utilisation RHO, REQUESTS
 * measured requests, the automatic warm-up. */
static void mmc_text(char *buf, size_t n, int c, double rho, long requests)
{
    snprintf(buf, n, "[sim]\nrequests = %ld\n[workload]\nrate = %.10g\n[pool p]\nservers = %d\nservice_ms = exp(mean=%g)\n",
             requests, rho * c / S_MS * 1000.0, c, S_MS);
}

/* Erlang C: the probability that an arrival waits in M/M/c at utilisation RHO. */
static double erlang_c(int c, double rho)
{
    double a = c * rho, term = 1, sum = 1;   /* term = a^k / k! */
    for (int k = 1; k < c; k++) {
        term *= a / k;
        sum += term;
    }
    double last = term * a / c / (1 - rho);  /* a^c / c! / (1 - rho) */
    return last / (sum + last);
}

/* The exact P-quantile and mean of the queue wait of M/M/c, ms. */
static double mmc_wait_quantile(int c, double rho, double p)
{
    double C = erlang_c(c, rho), gap = c / S_MS - rho * c / S_MS;   /* c mu - lambda, 1/ms */
    return C > 1 - p ? log(C / (1 - p)) / gap : 0;
}

static double mmc_wait_mean(int c, double rho)
{
    return erlang_c(c, rho) / (c / S_MS - rho * c / S_MS);
}

/* The row (SCOPE, METRIC, STAT) of R; fails the test when absent. */
static const store_stat *row_of(const report *r, const char *scope, const char *metric, const char *stat)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rows[i].scope, scope) && !strcmp(r->rows[i].metric, metric) && !strcmp(r->rows[i].stat, stat))
            return &r->rows[i];
    cr_assert_fail("no row %s/%s/%s", scope, metric, stat);
    return NULL;
}

/* The half-width of the plain 95 % Student-t interval of X[0 .. N-1]. */
static double t_halfwidth(const double *x, int n)
{
    double m = 0, ss = 0;
    for (int i = 0; i < n; i++) m += x[i];
    m /= n;
    for (int i = 0; i < n; i++) ss += (x[i] - m) * (x[i] - m);
    return gsl_cdf_tdist_Pinv(0.975, n - 1) * sqrt(ss / (n - 1)) / sqrt(n);
}

typedef struct coverage {
    int p99, mean, plain;      /* trials whose interval covers: the P99's, the mean's, the plain t one of the P99 */
    double hw, plain_hw;       /* sums of the P99's half-widths: reported, plain t */
    int mean_is_plain;         /* trials where the mean's half-width is the plain t one (to 1e-9) */
} coverage;

/* TRIALS trials of REPS replications of M/M/C at RHO, REQUESTS each, against the
 * exact queue wait: the system's queue P99 and mean. */
static coverage cover(int c, double rho, long requests)
{
    char text[512];
    mmc_text(text, sizeof text, c, rho, requests);
    scenario sc;
    load(text, &sc);
    double t99 = mmc_wait_quantile(c, rho, 0.99), wmean = mmc_wait_mean(c, rho);
    coverage cv = { 0 };
    report runs[REPS];
    double q[REPS], m[REPS];
    char err[1024];
    for (int t = 0; t < TRIALS; t++) {
        for (int i = 0; i < REPS; i++) {
            sim_result res;
            cr_assert_eq(sim_run(&sc, (uint64_t) (1 + t * REPS + i), &res, err, sizeof err), 0, "%s", err);
            cr_assert_eq(tsim_sat(&res), 0, "rho %g: seed %d saturated", rho, 1 + t * REPS + i);
            cr_assert_eq(report_flatten(&res, i, &runs[i]), 0);
            sim_result_free(&res);
            q[i] = row_of(&runs[i], "", "queue", "p99")->value;
            m[i] = row_of(&runs[i], "", "queue", "mean")->value;
        }
        report agg;
        cr_assert_eq(report_aggregate(runs, REPS, &agg), 0);
        const store_stat *p99 = row_of(&agg, "", "queue", "p99"), *mean = row_of(&agg, "", "queue", "mean");
        double plain = t_halfwidth(q, REPS), plain_mean = t_halfwidth(m, REPS);
        cr_assert(isfinite(p99->ci95) && p99->ci95 >= 0, "trial %d: P99 half-width %g", t, p99->ci95);
        cv.p99 += fabs(p99->value - t99) <= p99->ci95;
        cv.mean += fabs(mean->value - wmean) <= mean->ci95;
        cv.plain += fabs(p99->value - t99) <= plain;
        cv.hw += p99->ci95;
        cv.plain_hw += plain;
        cv.mean_is_plain += fabs(mean->ci95 - plain_mean) <= 1e-9 * plain_mean;
        report_free(&agg);
        for (int i = 0; i < REPS; i++) report_free(&runs[i]);
    }
    scenario_free(&sc);
    return cv;
}

/* ---- percentile intervals -------------------------------------------------------- */

TestSuite(repci_ci);

/* The case: M/M/2 at rho 0.95, 20 000 requests (about 13 relaxation
 * times of the queue, 1 / (c mu (1 - sqrt rho)^2) = 7.8 s, per run).  The runs'
 * P99 average 17 % below Erlang C's 452.8 ms, and the plain t interval around
 * their mean covers it in 15 of these 40 trials; the interval of repci.h covers
 * it in at least 34 of 40 (it was 39 of 40 here, 196 of 200 over five seed
 * blocks; half-width about 3.7 times the plain one).  The mean's
 * interval is the plain Student-t one, unchanged, and covers the Erlang C mean
 * (92.56 ms) in at least 34 of 40 too. */
Test(repci_ci, p99_of_queue_wait_covered_at_rho_095)
{
    coverage cv = cover(2, 0.95, 20000);
    cr_expect_geq(cv.p99, 34, "P99 interval covered Erlang C in %d of %d trials", cv.p99, TRIALS);
    cr_expect_geq(cv.mean, 34, "mean interval covered Erlang C in %d of %d trials", cv.mean, TRIALS);
    cr_expect_eq(cv.mean_is_plain, TRIALS, "the mean's half-width changed in %d trials", TRIALS - cv.mean_is_plain);
    cr_expect_lt(cv.plain, 30, "the plain t interval covered in %d of %d: the case no longer tests the bias", cv.plain, TRIALS);
}

/* At low load (rho 0.5) the runs' P99 are unbiased and the plain interval is
 * right: the new one covers as well and is at most 1.5 times as wide on average
 * (measured 1.08: every run shares the tail evenly, so the interval has about 9
 * degrees of freedom; it was 1.03 on the log scale of the tail, which issue 30
 * replaced by the probability scale). */
Test(repci_ci, low_load_interval_not_inflated)
{
    coverage cv = cover(2, 0.5, 20000);
    double ratio = cv.hw / cv.plain_hw;
    cr_expect_leq(ratio, 1.5, "half-width %.3g times the plain t one", ratio);
    cr_expect_geq(ratio, 0.8, "half-width %.3g times the plain t one", ratio);
    cr_expect_geq(cv.p99, 34, "P99 interval covered Erlang C in %d of %d trials", cv.p99, TRIALS);
    cr_expect_geq(cv.mean, 34, "mean interval covered Erlang C in %d of %d trials", cv.mean, TRIALS);
    cr_expect_eq(cv.mean_is_plain, TRIALS);
}

/* Runs of a constant (20 000 requests: P99.9's interval needs 20 beyond it,
 * repci_enough): every percentile is exactly the constant in every run and
 * its interval is 0; an atom shared by the runs (no wait at low load: P(W = 0)
 * = 1 - C = 0.67 > 0.5 for M/M/2 at rho 0.5) gives a median of 0 +- 0. */
Test(repci_ci, constant_and_atom_give_zero_width)
{
    char text[512];
    snprintf(text, sizeof text, "[sim]\nrequests = 20000\n[workload]\nrate = 100\n[pool p]\nservers = 2\nservice_ms = const(5)\n");
    scenario sc;
    load(text, &sc);
    report runs[3];
    char err[1024];
    for (int i = 0; i < 3; i++) {
        sim_result res;
        cr_assert_eq(sim_run(&sc, (uint64_t) (7 + i), &res, err, sizeof err), 0, "%s", err);
        cr_assert_eq(report_flatten(&res, i, &runs[i]), 0);
        sim_result_free(&res);
    }
    report agg;
    cr_assert_eq(report_aggregate(runs, 3, &agg), 0);
    static const char *P[] = { "p50", "p90", "p95", "p99", "p999" };
    for (int k = 0; k < 5; k++) {
        const store_stat *s = row_of(&agg, "", "service", P[k]);
        cr_expect_eq(s->value, 5.0, "service %s %g", P[k], s->value);
        cr_expect_eq(s->ci95, 0.0, "service %s +- %g", P[k], s->ci95);
    }
    cr_expect_eq(row_of(&agg, "", "queue", "p50")->value, 0.0);
    cr_expect_eq(row_of(&agg, "", "queue", "p50")->ci95, 0.0);
    report_free(&agg);
    for (int i = 0; i < 3; i++) report_free(&runs[i]);
    scenario_free(&sc);
}

/* repci on synthetic exponential runs: the pooled quantile of runs that are
 * exact exponential CDFs (quantiles -ln(1 - p) / rate, so the log-linear
 * interpolation is exact) is the exponential's quantile; identical runs give a
 * zero half-width around it and none around another centre but the distance to
 * it; runs of different rates give an interval that holds the pooled quantile. */
Test(repci_ci, repci_on_exact_exponentials)
{
    repci_dist d[4];
    const repci_dist *ptr[4];
    double rate[4] = { 0.1, 0.1, 0.1, 0.1 };
    for (int r = 0; r < 4; r++) {
        d[r].n = 1e6;
        for (int j = 0; j < REPCI_NQ - 1; j++) d[r].x[j] = -log(1 - repci_prob(j)) / rate[r];
        d[r].x[REPCI_NQ - 1] = -log(0.5 / d[r].n) / rate[r];   /* the max stands for half a sample */
        ptr[r] = &d[r];
    }
    double q99 = -log(0.01) / 0.1;
    cr_expect(fabs(repci_pooled_quantile(ptr, 4, 0.99) - q99) < 1e-9 * q99, "pooled P99 %.12g, want %.12g",
              repci_pooled_quantile(ptr, 4, 0.99), q99);
    double q995 = -log(0.005) / 0.1;   /* between grid points: interpolated */
    cr_expect(fabs(repci_pooled_quantile(ptr, 4, 0.995) - q995) < 1e-9 * q995);
    cr_expect(repci_halfwidth(ptr, 4, 0.99, q99) < 1e-9 * q99);
    cr_expect(fabs(repci_halfwidth(ptr, 4, 0.99, q99 - 3) - 3) < 1e-6);
    cr_expect(isnan(repci_halfwidth(ptr, 1, 0.99, q99)));
    double rates[4] = { 0.08, 0.1, 0.11, 0.13 };
    double mean = 0;
    for (int r = 0; r < 4; r++) {
        for (int j = 0; j < REPCI_NQ - 1; j++) d[r].x[j] = -log(1 - repci_prob(j)) / rates[r];
        d[r].x[REPCI_NQ - 1] = -log(0.5 / d[r].n) / rates[r];
        mean += -log(0.01) / rates[r] / 4;
    }
    double theta = repci_pooled_quantile(ptr, 4, 0.99), h = repci_halfwidth(ptr, 4, 0.99, mean);
    cr_expect(theta > -log(0.01) / 0.13 && theta < -log(0.01) / 0.08, "pooled P99 %g", theta);
    /* One run (rate 0.08) holds most of the tail: few effective runs, a wide
     * interval on the probability scale, but never past the largest sample. */
    double top = 0;
    for (int r = 0; r < 4; r++) top = fmax(top, d[r].x[REPCI_NQ - 1]);
    cr_expect(fabs(theta - mean) < h && mean + h <= top * (1 + 1e-12), "pooled %g, mean %g +- %g, max %g", theta, mean, h, top);
}

/* The distributions travel with a task's result (compare's worker processes):
 * encoded and decoded, they aggregate to the same intervals as in-process. */
Test(repci_ci, distributions_survive_task_encoding)
{
    char text[512];
    mmc_text(text, sizeof text, 2, 0.9, 5000);
    scenario sc;
    load(text, &sc);
    report runs[3], back[3];
    char err[1024];
    for (int i = 0; i < 3; i++) {
        sim_result res;
        cr_assert_eq(sim_run(&sc, (uint64_t) (11 + i), &res, err, sizeof err), 0, "%s", err);
        cr_assert_eq(report_flatten(&res, -1, &runs[i]), 0);
        sim_result_free(&res);
        cr_assert_gt(runs[i].ndist, 0);
        task_out o = { 0 }, d;
        o.rep = runs[i];
        char *buf = NULL;
        size_t len = 0;
        cr_assert_eq(task_out_encode(&o, &buf, &len), 0);
        cr_assert_eq(task_out_decode(buf, len, &d), 0, "%s", d.err);
        free(buf);
        cr_assert_eq(d.rep.ndist, runs[i].ndist);
        for (size_t k = 0; k < d.rep.ndist; k++) {
            cr_expect_eq(d.rep.dist[k].row, runs[i].dist[k].row);
            cr_expect_eq(memcmp(&d.rep.dist[k].d, &runs[i].dist[k].d, sizeof d.rep.dist[k].d), 0);
        }
        back[i] = d.rep;
        /* A truncated buffer is refused, not half-read. */
        task_out o2 = { 0 }, t;
        o2.rep = runs[i];
        cr_assert_eq(task_out_encode(&o2, &buf, &len), 0);
        cr_expect_eq(task_out_decode(buf, len - 9, &t), -1);
        task_out_free(&t);
        free(buf);
    }
    report a, b;
    cr_assert_eq(report_aggregate(runs, 3, &a), 0);
    cr_assert_eq(report_aggregate(back, 3, &b), 0);
    cr_assert_eq(a.n, b.n);
    int percentiles = 0;
    for (size_t i = 0; i < a.n; i++) {
        if (isnan(a.rows[i].ci95)) cr_expect(isnan(b.rows[i].ci95));
        else cr_expect_eq(a.rows[i].ci95, b.rows[i].ci95, "%s/%s/%s", a.rows[i].scope, a.rows[i].metric, a.rows[i].stat);
        percentiles += !strcmp(a.rows[i].stat, "p99");
    }
    cr_expect_gt(percentiles, 0);
    report_free(&a);
    report_free(&b);
    for (int i = 0; i < 3; i++) {
        report_free(&runs[i]);
        report_free(&back[i]);
    }
    scenario_free(&sc);
}

/* ---- ./latsim ------------------------------------------------------------------------ */

static void setup(void) { tcli_setup("/tmp/latsim_h2stats_", NULL); }

TestSuite(repci_cli, .init = setup, .fini = tcli_teardown);

/* `latsim run --replications 5 --json` reports the same P99 interval as the
 * in-process aggregate of the same seeds (printed to 6 significant digits). */
Test(repci_cli, run_replications_reports_the_percentile_interval)
{
    char text[512], f[256];
    mmc_text(text, sizeof text, 2, 0.95, 20000);
    write_file("mm2.ini", text, f, sizeof f);
    result r = run_argv(120, (char *[]) { "run", f, "--no-store", "--json", "--replications", "5", "--seed", "3", NULL });
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    json_error_t je;
    json_t *j = json_loads(r.out, 0, &je);
    cr_assert_not_null(j, "bad JSON: %s", je.text);
    double cli = json_number_value(json_object_get(json_object_get(json_object_get(json_object_get(j, "ci95"),
                                                   "latency_ms"), "queue"), "p99"));
    json_decref(j);
    scenario sc;
    load(text, &sc);
    report runs[5], agg;
    char err[1024];
    for (int i = 0; i < 5; i++) {
        sim_result res;
        cr_assert_eq(sim_run(&sc, (uint64_t) (3 + i), &res, err, sizeof err), 0, "%s", err);
        cr_assert_eq(report_flatten(&res, i, &runs[i]), 0);
        sim_result_free(&res);
    }
    cr_assert_eq(report_aggregate(runs, 5, &agg), 0);
    double lib = row_of(&agg, "", "queue", "p99")->ci95;
    cr_expect(cli > 0 && fabs(cli - lib) <= 1e-5 * lib, "CLI +-%g, library +-%g", cli, lib);
    report_free(&agg);
    for (int i = 0; i < 5; i++) report_free(&runs[i]);
    scenario_free(&sc);
    result_free(&r);
}

/* ---- offered load behind a router -------------------------------------------------- */

TestSuite(repci_load);

/* A round-robin router in front of two M/M/1 pools (service exp(mean=10)) at
 * utilisation RHO, REQUESTS requests. */
static void router_text(char *buf, size_t n, double rho, long requests)
{
    snprintf(buf, n, "[sim]\nrequests = %ld\n[workload]\nrate = %.10g\ntarget = lb\n[pool lb]\nkind = router\nnext = a, b\n"
             "[pool a]\nservice_ms = exp(mean=%g)\n[pool b]\nservice_ms = exp(mean=%g)\n",
             requests, 2 * rho / S_MS * 1000.0, S_MS, S_MS);
}

/* Stable pools at rho 0.95, 2 000 requests (about 1 000 arrivals each: a
 * measured load with a standard error of 3 %): under the old rule (measured
 * load >= 1) some of the 20 seeds were called saturated (seed 6: 1.004); none
 * is now saturated by its offered load.  (The backlog-trend rule, unchanged,
 * calls seed 16 saturated: a queue whose relaxation time, 15.6 s, exceeds the
 * 10 s window; see the report.)  The same M/M/2 without a router, whose load is
 * known exactly, is not saturated by it either. */
Test(repci_load, stable_pools_behind_a_router_not_saturated_by_load)
{
    char text[1024];
    router_text(text, sizeof text, 0.95, 2000);
    scenario sc;
    load(text, &sc);
    int old_rule = 0;
    char err[1024];
    for (int seed = 1; seed <= 20; seed++) {
        sim_result res;
        cr_assert_eq(sim_run(&sc, (uint64_t) seed, &res, err, sizeof err), 0, "%s", err);
        cr_assert_eq(tsim_npools(&res), 3);
        for (int i = 1; i < 3; i++) {
            tsim_pr p = tsim_pool_at(&res, i);
            cr_expect(fabs(tsim_prv(p, "offered_load") - 0.95) < 0.1, "seed %d pool %s: load %g", seed, p.name, tsim_prv(p, "offered_load"));
            cr_expect_eq(tsim_prv(p, "load_saturated"), 0, "seed %d pool %s: load %g called saturated", seed, p.name, tsim_prv(p, "offered_load"));
            old_rule += tsim_prv(p, "offered_load") >= 1;
        }
        sim_result_free(&res);
    }
    cr_expect_gt(old_rule, 0, "no seed reaches a measured load of 1: the case no longer tests the sampling error");
    scenario_free(&sc);
    mmc_text(text, sizeof text, 2, 0.95, 2000);
    load(text, &sc);
    for (int seed = 1; seed <= 20; seed++) {
        sim_result res;
        cr_assert_eq(sim_run(&sc, (uint64_t) seed, &res, err, sizeof err), 0, "%s", err);
        cr_expect_eq(tsim_pv(&res, 0, "load_saturated"), 0, "M/M/2 seed %d", seed);
        sim_result_free(&res);
    }
    scenario_free(&sc);
}

/* Overloaded pools behind the router are still caught by their offered load:
 * rho 1.1 at 2 000 requests (3 standard errors above 1) in each of 20 seeds, and
 * rho 1.05 at 200 000 requests (15 standard errors). */
Test(repci_load, overloaded_pools_behind_a_router_saturated)
{
    char text[1024];
    router_text(text, sizeof text, 1.1, 2000);
    scenario sc;
    load(text, &sc);
    char err[1024];
    for (int seed = 1; seed <= 20; seed++) {
        sim_result res;
        cr_assert_eq(sim_run(&sc, (uint64_t) seed, &res, err, sizeof err), 0, "%s", err);
        cr_expect_eq(tsim_sat(&res), 1, "seed %d not saturated", seed);
        cr_expect(tsim_pv(&res, 1, "load_saturated") || tsim_pv(&res, 2, "load_saturated"), "seed %d: loads %g, %g", seed,
                  tsim_pv(&res, 1, "offered_load"), tsim_pv(&res, 2, "offered_load"));
        sim_result_free(&res);
    }
    scenario_free(&sc);
    router_text(text, sizeof text, 1.05, 200000);
    load(text, &sc);
    sim_result res;
    cr_assert_eq(sim_run(&sc, 1, &res, err, sizeof err), 0, "%s", err);
    cr_expect(tsim_pv(&res, 1, "load_saturated") && tsim_pv(&res, 2, "load_saturated"), "loads %g, %g",
              tsim_pv(&res, 1, "offered_load"), tsim_pv(&res, 2, "offered_load"));
    sim_result_free(&res);
    scenario_free(&sc);
}

/* The command line names the offered load as the reason when it is one, and
 * exits 3. */
Test(repci_cli, overload_message_names_the_offered_load)
{
    char text[1024], f[256];
    router_text(text, sizeof text, 1.1, 2000);
    write_file("r.ini", text, f, sizeof f);
    result r = run_argv(60, (char *[]) { "run", f, "--no-store", NULL });
    cr_expect_eq(r.rc, 3, "exit %d: %s", r.rc, r.err);
    cr_expect(strstr(r.err, "[pool a]: saturated: offered load ") != NULL, "%s", r.err);
    result_free(&r);
}

/* ---- issue 30: intervals that cover, or none ----------------------------------------
 *
 * Trials of R replications (trial t uses seeds 1 + tR .. R + tR), 200 a case,
 * every interval judged against the exact value: the queue wait by Erlang C
 * (above), the sojourn T = W + S of M/M/c by P(T > t) = (1 - C) e^{-mu t} +
 * C (g e^{-mu t} - mu e^{-g t}) / (g - mu), g = c mu - lambda (for M/M/1 an
 * exponential of rate mu - lambda).  For a true 95 % interval the trials that
 * cover are Binomial(200, 0.95): P(X <= 180) = 0.0027, so X >= 181 is
 * asserted; the intervals of issue 30's cases (63 to 84 of 100) fail it with a
 * probability below 1e-6. */

TestSuite(repci_cover);

#define H3_TRIALS 200

/* The exact P-quantile of the sojourn time of M/M/c at RHO, ms (bisection). */
static double mmc_sojourn_quantile(int c, double rho, double p)
{
    double C = erlang_c(c, rho), mu = 1 / S_MS, g = c * mu - rho * c * mu, lo = 0, hi = 1e7;
    for (int i = 0; i < 200; i++) {
        double t = (lo + hi) / 2;
        double h = fabs(g - mu) < 1e-12 ? (1 + mu * t) * exp(-mu * t) : (g * exp(-mu * t) - mu * exp(-g * t)) / (g - mu);
        if ((1 - C) * exp(-mu * t) + C * h > 1 - p) lo = t;
        else hi = t;
    }
    return lo;
}

typedef struct h3cov {
    int queue, e2e;           /* trials whose P99 interval covers the exact value */
    int given;                /* trials with both intervals given */
} h3cov;

/* H3_TRIALS trials of R replications of M/M/C at RHO, REQUESTS each: the
 * system's queue and E2E intervals of the P-quantile (row STAT) against the
 * exact values. */
static h3cov h3_cover(int c, double rho, long requests, int r, double p, const char *stat)
{
    char text[512], err[1024];
    mmc_text(text, sizeof text, c, rho, requests);
    scenario sc;
    load(text, &sc);
    double tq = mmc_wait_quantile(c, rho, p), te = mmc_sojourn_quantile(c, rho, p);
    h3cov cv = { 0 };
    report *runs = calloc((size_t) r, sizeof *runs);
    cr_assert_not_null(runs);
    for (int t = 0; t < H3_TRIALS; t++) {
        for (int i = 0; i < r; i++) {
            sim_result res;
            cr_assert_eq(sim_run(&sc, (uint64_t) (1 + t * r + i), &res, err, sizeof err), 0, "%s", err);
            cr_assert_eq(tsim_sat(&res), 0, "rho %g: seed %d saturated", rho, 1 + t * r + i);
            cr_assert_eq(report_flatten(&res, i, &runs[i]), 0);
            sim_result_free(&res);
        }
        report agg;
        cr_assert_eq(report_aggregate(runs, r, &agg), 0);
        const store_stat *q = row_of(&agg, "", "queue", stat), *e = row_of(&agg, "", "e2e", stat);
        if (!isnan(q->ci95) && !isnan(e->ci95)) {
            cv.given++;
            cv.queue += fabs(q->value - tq) <= q->ci95;
            cv.e2e += fabs(e->value - te) <= e->ci95;
        }
        report_free(&agg);
        for (int i = 0; i < r; i++) report_free(&runs[i]);
    }
    free(runs);
    scenario_free(&sc);
    cr_log_info("M/M/%d at %g, %d x %ld, %s: intervals given in %d of %d trials, covering the queue's in %d, the E2E's in %d",
                c, rho, r, requests, stat, cv.given, H3_TRIALS, cv.queue, cv.e2e);
    return cv;
}

/* Runs long enough for a tail interval (tens of relaxation times each): every
 * interval is given and covers the exact P99 of the queue wait and of the
 * sojourn (measured: M/M/1 at 0.8, 5 x 5 000: 197 and 197 of 200; M/M/2 at 0.9,
 * 10 x 10 000: 191 and 190; M/M/4 at 0.8, 5 x 3 000: 195 and 187), and the
 * P99.9 of M/M/1 at 0.8 with 5 x 20 000 (20 beyond it a run, 280 relaxation
 * times; 196 and 196).  --verbose prints the counts. */
Test(repci_cover, p99_intervals_cover_erlang_c)
{
    static const struct { int c; double rho; long n; int r; double p; const char *stat; } K[] = {
        { 1, 0.8, 5000, 5, 0.99, "p99" }, { 2, 0.9, 10000, 10, 0.99, "p99" }, { 4, 0.8, 3000, 5, 0.99, "p99" },
        { 1, 0.8, 20000, 5, 0.999, "p999" },
    };
    for (size_t k = 0; k < sizeof K / sizeof K[0]; k++) {
        h3cov cv = h3_cover(K[k].c, K[k].rho, K[k].n, K[k].r, K[k].p, K[k].stat);
        cr_expect_eq(cv.given, H3_TRIALS, "M/M/%d at %g, %d x %ld: %s intervals given in %d of %d trials", K[k].c, K[k].rho,
                     K[k].r, K[k].n, K[k].stat, cv.given, H3_TRIALS);
        cr_expect_geq(cv.queue, 181, "M/M/%d at %g, %d x %ld: the queue %s interval covered Erlang C in %d of %d", K[k].c,
                      K[k].rho, K[k].r, K[k].n, K[k].stat, cv.queue, H3_TRIALS);
        cr_expect_geq(cv.e2e, 181, "M/M/%d at %g, %d x %ld: the E2E %s interval covered the exact sojourn in %d of %d",
                      K[k].c, K[k].rho, K[k].r, K[k].n, K[k].stat, cv.e2e, H3_TRIALS);
    }
}

/* The aggregate of R replications of TEXT from seed 1 into AGG. */
static void h3_aggregate(const char *text, int r, report *agg)
{
    scenario sc;
    load(text, &sc);
    report *runs = calloc((size_t) r, sizeof *runs);
    cr_assert_not_null(runs);
    char err[1024];
    for (int i = 0; i < r; i++) {
        sim_result res;
        cr_assert_eq(sim_run(&sc, (uint64_t) (1 + i), &res, err, sizeof err), 0, "%s", err);
        cr_assert_eq(report_flatten(&res, i, &runs[i]), 0);
        sim_result_free(&res);
    }
    cr_assert_eq(report_aggregate(runs, r, agg), 0);
    for (int i = 0; i < r; i++) report_free(&runs[i]);
    free(runs);
    scenario_free(&sc);
}

/* The table of AGG (malloc'd). */
static char *h3_table(const report *agg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    cr_assert_not_null(m);
    report_table(agg, "t", m);
    fclose(m);
    return buf;
}

/* Issue 30's cases, runs too short for their queues (M/M/1 at 0.9 with 5 x
 * 2 000 requests: about 6 relaxation times each, the interval covered in 129
 * of 200; at 0.98 with 10 x 20 000: 2, 89 of 188): no percentile interval,
 * the values still given, the note saying why (JSON: ci95 null and
 * interval_note; the table: a NOTE line).  The mean keeps its interval. */
Test(repci_cover, runs_too_short_give_no_percentile_interval)
{
    static const struct { double rho; long n; int r; } K[] = { { 0.9, 2000, 5 }, { 0.98, 20000, 10 } };
    static const char *P[] = { "p50", "p90", "p95", "p99", "p999" };
    for (size_t k = 0; k < 2; k++) {
        char text[512];
        mmc_text(text, sizeof text, 1, K[k].rho, K[k].n);
        report agg;
        h3_aggregate(text, K[k].r, &agg);
        if (report_get(&agg, "", "saturated", "value") > 0) {   /* a transient flag: latencies over the others */
            cr_expect_gt(report_get(&agg, "", "saturated_replications", "value"), 0);
        }
        for (int m = 0; m < 2; m++)
            for (int j = 0; j < 5; j++) {
                const store_stat *s = row_of(&agg, "", m ? "e2e" : "queue", P[j]);
                cr_expect(isfinite(s->value), "rho %g %s: no value", K[k].rho, P[j]);
                cr_expect(isnan(s->ci95), "rho %g %s %s: +- %g given", K[k].rho, m ? "e2e" : "queue", P[j], s->ci95);
            }
        cr_expect(isfinite(row_of(&agg, "", "e2e", "mean")->ci95), "the mean's interval is kept");
        const char *note = report_get_text(&agg, "", "interval_note");
        cr_assert_not_null(note, "rho %g: no note", K[k].rho);
        cr_expect(strstr(note, "relaxation times"), "%s", note);
        char *t = h3_table(&agg);
        cr_expect(strstr(t, "NOTE: no 95% interval is given for a percentile"), "%s", t);
        free(t);
        report_free(&agg);
    }
    /* Why: the interval repci would give there (repci_halfwidth, the check
     * bypassed) covers the exact P99 wait far too seldom: 129 of 200 trials
     * (--verbose prints it), where a true one falls below 181 with probability
     * 0.27 %. */
    {
        char t1[512], err[1024];
        mmc_text(t1, sizeof t1, 1, 0.9, 2000);
        scenario sc;
        load(t1, &sc);
        double tq = mmc_wait_quantile(1, 0.9, 0.99);
        int covered = 0;
        for (int t = 0; t < H3_TRIALS; t++) {
            report runs[5];
            const repci_dist *d[5];
            for (int i = 0; i < 5; i++) {
                sim_result res;
                cr_assert_eq(sim_run(&sc, (uint64_t) (1 + t * 5 + i), &res, err, sizeof err), 0, "%s", err);
                cr_assert_eq(report_flatten(&res, i, &runs[i]), 0);
                sim_result_free(&res);
            }
            report agg;
            cr_assert_eq(report_aggregate(runs, 5, &agg), 0);
            for (int i = 0; i < 5; i++) {
                size_t g = 0;
                while (g < runs[i].ndist && strcmp(runs[i].rows[runs[i].dist[g].row].metric, "queue")) g++;
                cr_assert_lt(g, runs[i].ndist);
                d[i] = &runs[i].dist[g].d;
            }
            double v = row_of(&agg, "", "queue", "p99")->value;
            covered += fabs(v - tq) <= repci_halfwidth(d, 5, 0.99, v);
            report_free(&agg);
            for (int i = 0; i < 5; i++) report_free(&runs[i]);
        }
        scenario_free(&sc);
        cr_log_info("M/M/1 at 0.9, 5 x 2000: the interval, had it been given, covered the exact P99 wait in %d of %d", covered,
                    H3_TRIALS);
        cr_expect_lt(covered, 181, "covered in %d of %d: the refusal is no longer needed here", covered, H3_TRIALS);
    }
    /* M/M/2 at 0.95, 10 x 20 000 (13 relaxation times): P99's interval (it
     * covered in 195 of 200), none for P99.9 (it covered in 11 of 40: the
     * excursions that reach it are ten times rarer). */
    char text[512];
    mmc_text(text, sizeof text, 2, 0.95, 20000);
    report agg;
    h3_aggregate(text, 10, &agg);
    cr_expect(isfinite(row_of(&agg, "", "queue", "p99")->ci95));
    cr_expect(isnan(row_of(&agg, "", "queue", "p999")->ci95));
    const char *note = report_get_text(&agg, "", "interval_note");
    cr_expect(note && strstr(note, "(10 up to P99, 100 for P99.9;"), "%s", note ? note : "(none)");
    report_free(&agg);
}

/* Too few samples beyond a percentile: M/M/1 at 0.5, 5 x 2 000 requests (over
 * a hundred relaxation times): P99 has 20 beyond it in each run and its
 * interval, P99.9 has 2 and none (the note names the requests it needs); with
 * 5 x 1 000 requests P99 has none either, P90 (100 beyond) has one. */
Test(repci_cover, too_few_requests_beyond_a_percentile_give_no_interval)
{
    char text[512];
    mmc_text(text, sizeof text, 1, 0.5, 2000);
    report agg;
    h3_aggregate(text, 5, &agg);
    cr_expect(isfinite(row_of(&agg, "", "e2e", "p99")->ci95));
    cr_expect(isnan(row_of(&agg, "", "e2e", "p999")->ci95));
    cr_expect(isfinite(row_of(&agg, "", "e2e", "p999")->value));
    const char *note = report_get_text(&agg, "", "interval_note");
    cr_assert_not_null(note);
    cr_expect(strstr(note, "fewer than 20 requests beyond it (P99 needs 2000 requests per replication, P99.9 20000)"), "%s", note);
    cr_expect_null(strstr(note, "relaxation"), "%s", note);
    report_free(&agg);
    mmc_text(text, sizeof text, 1, 0.5, 1000);
    h3_aggregate(text, 5, &agg);
    cr_expect(isnan(row_of(&agg, "", "e2e", "p99")->ci95));
    cr_expect(isfinite(row_of(&agg, "", "e2e", "p90")->ci95));
    report_free(&agg);
}

/* One replication called saturated does not void the others' latencies: 3
 * runs of M/M/1 at 0.5 and one of an overloaded copy (rho 1.2, the same rows)
 * aggregate to the three's percentiles and intervals exactly, with
 * saturated_replications = 1 and the table saying over how many they are; all
 * four overloaded, the percentiles are not reported, as before. */
Test(repci_cover, saturated_replication_does_not_void_the_others)
{
    char ok[512], over[512], err[1024];
    mmc_text(ok, sizeof ok, 1, 0.5, 5000);
    mmc_text(over, sizeof over, 1, 1.2, 5000);
    scenario a, b;
    load(ok, &a);
    load(over, &b);
    report mix[4], three[3], sat[4];
    for (int i = 0; i < 4; i++) {
        sim_result res;
        cr_assert_eq(sim_run(i < 3 ? &a : &b, (uint64_t) (1 + i), &res, err, sizeof err), 0, "%s", err);
        cr_assert_eq(tsim_sat(&res), i == 3);
        cr_assert_eq(report_flatten(&res, i, &mix[i]), 0);
        if (i < 3) cr_assert_eq(report_flatten(&res, i, &three[i]), 0);
        sim_result_free(&res);
        cr_assert_eq(sim_run(&b, (uint64_t) (11 + i), &res, err, sizeof err), 0, "%s", err);
        cr_assert_eq(tsim_sat(&res), 1);
        cr_assert_eq(report_flatten(&res, i, &sat[i]), 0);
        sim_result_free(&res);
    }
    report m, t, s;
    cr_assert_eq(report_aggregate(mix, 4, &m), 0);
    cr_assert_eq(report_aggregate(three, 3, &t), 0);
    cr_assert_eq(report_aggregate(sat, 4, &s), 0);
    static const char *P[] = { "mean", "p50", "p90", "p99", "max" };
    for (int j = 0; j < 5; j++) {
        const store_stat *x = row_of(&m, "", "e2e", P[j]), *y = row_of(&t, "", "e2e", P[j]);
        cr_expect(isfinite(x->value) && x->value == y->value, "%s: %g, the three alone %g", P[j], x->value, y->value);
        cr_expect(x->ci95 == y->ci95, "%s: +- %g, the three alone +- %g", P[j], x->ci95, y->ci95);
        cr_expect(isnan(row_of(&s, "", "e2e", P[j])->value), "all saturated: %s given", P[j]);
    }
    cr_expect_eq(report_get(&m, "", "saturated", "value"), 1);
    cr_expect_eq(report_get(&m, "", "saturated_replications", "value"), 1);
    cr_expect(isnan(report_get(&s, "", "saturated_replications", "value")), "all saturated: no count row");
    char *tm = h3_table(&m), *ts = h3_table(&s);
    cr_expect(strstr(tm, "SATURATED in 1 of 4 replications") && strstr(tm, "over the other 3"), "%s", tm);
    cr_expect(strstr(ts, "SATURATED: offered load reaches capacity") && strstr(ts, "not reported"), "%s", ts);
    free(tm);
    free(ts);
    report_free(&m);
    report_free(&t);
    report_free(&s);
    for (int i = 0; i < 4; i++) {
        report_free(&mix[i]);
        report_free(&sat[i]);
        if (i < 3) report_free(&three[i]);
    }
    scenario_free(&a);
    scenario_free(&b);
}

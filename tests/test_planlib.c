/* test_planlib.c -- the planner through latsim/plan.h, the library alone (no
 * binary).  Its computations without simulating: Erlang C against values
 * worked by hand, the server count the Erlang estimate gives for queue terms
 * of an [slo], the bisection of a monotone value (plan_mono_next/record) on
 * monotone predicates, a search over several configurations that prunes by
 * cost returning the cost brute force finds, verdicts, the robust/not-robust
 * decision of the sensitivity check, option values.  And the search itself
 * (plan_init .. plan_store) on small scenarios: an M/M/c pool's servers
 * against Erlang C worked by hand, the plan's JSON read back with jansson, a
 * configuration that cannot carry the load, a band that straddles two LLM
 * configurations, the plan stored with every simulation. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "calib.h"
#include "latsim/plan.h"

/* Erlang C by hand: M/M/1 waits with probability rho; for A = 1 erlang,
 * Erlang B is 1/2, 1/5, 1/16 for c = 1, 2, 3, so C(2, 1) = 0.2 / (0.5 + 0.1)
 * = 1/3 and C(3, 1) = 0.0625 / (2/3 + 0.0625/3) = 1/11. */
Test(planlib, erlang_c_hand_values)
{
    cr_assert_float_eq(plan_erlang_c(1, 0.7), 0.7, 1e-12);
    cr_assert_float_eq(plan_erlang_c(2, 1.0), 1.0 / 3, 1e-12);
    cr_assert_float_eq(plan_erlang_c(3, 1.0), 1.0 / 11, 1e-12);
    /* more servers, less waiting */
    for (int c = 2; c < 20; c++) cr_assert_lt(plan_erlang_c(c + 1, 1.5), plan_erlang_c(c, 1.5), "c=%d", c);
}

static slo_spec one_term(slo_term *t, const char *stat, double limit_ms)
{
    memset(t, 0, sizeof *t);
    snprintf(t->key, sizeof t->key, "queue_%s_ms", stat);
    t->kind = SLO_LATENCY;
    snprintf(t->metric, sizeof t->metric, "queue");
    snprintf(t->stat, sizeof t->stat, "%s", stat);
    t->limit = limit_ms;
    return (slo_spec) { .t = t, .n = 1, .headroom = 1 };
}

/* 10 req/s on 100 ms of service (A = 1): the mean wait C(c, 1) / (c mu -
 * lambda) is 33.3 ms with 2 servers, 4.55 ms with 3 and 0.68 ms with 4; the
 * p99 wait ln(C / 0.01) / (c mu - lambda) is 110 ms with 3, 23.8 ms with 4
 * and 0 with 5 (C(5, 1) = 0.0038 < 1 %). */
Test(planlib, erlang_servers_meets_queue_terms)
{
    slo_term t;
    slo_spec s = one_term(&t, "mean", 10);
    cr_assert_eq(plan_erlang_servers(&s, 10, 100, 1, 1, 64), 3);
    t.limit = 40;
    cr_assert_eq(plan_erlang_servers(&s, 10, 100, 1, 1, 64), 2);
    cr_assert_eq(plan_erlang_servers(&s, 10, 100, 1, 4, 64), 4, "starts at C0");
    /* M/G/c, CV 2: waits x (1 + 4) / 2 = 2.5, 3 servers give 11.4 ms > 10 */
    t.limit = 10;
    cr_assert_eq(plan_erlang_servers(&s, 10, 100, 2, 1, 64), 4);
    cr_assert_eq(plan_erlang_servers(&s, 10, 100, 0, 1, 64), 3, "CV 0 halves the wait: 3 still needed (2 give 16.7 ms)");
    t.limit = 1e-3;
    cr_assert_eq(plan_erlang_servers(&s, 10, 100, 1, 1, 6), 6, "none in range: CMAX");
    s = one_term(&t, "p99", 20);
    cr_assert_eq(plan_erlang_servers(&s, 10, 100, 1, 1, 64), 5);
    t.limit = 50;
    cr_assert_eq(plan_erlang_servers(&s, 10, 100, 1, 1, 64), 4);
    t.limit = 200;
    cr_assert_eq(plan_erlang_servers(&s, 10, 100, 1, 1, 64), 3);
    /* not a queue term, or a class's: no estimate */
    snprintf(t.metric, sizeof t.metric, "e2e");
    cr_assert(isnan(plan_erlang_servers(&s, 10, 100, 1, 1, 64)));
    snprintf(t.metric, sizeof t.metric, "queue");
    snprintf(t.cls, sizeof t.cls, "batch");
    cr_assert(isnan(plan_erlang_servers(&s, 10, 100, 1, 1, 64)));
}

static plan_mono fresh(int lo, int hi, double hint)
{
    return (plan_mono) { .lo = lo - 1, .hi = hi + 1, .hint = hint };
}

/* Bisects "meets when m >= T" over LO..HI; returns the evaluations made. */
static int bisect(plan_mono *b, int lo, int hi, int T)
{
    plan_mono_ctx x = { .range_lo = lo, .range_hi = hi, .best_cost = INFINITY };
    int n = 0, v;
    while ((v = plan_mono_next(b, &x)) > 0) {
        cr_assert(v >= lo && v <= hi && v > b->lo && v < b->hi, "value %d outside the bracket (%d, %d)", v, b->lo, b->hi);
        plan_mono_record(b, v, v >= T);
        cr_assert_lt(++n, 100, "the bisection does not end");
    }
    return n;
}

Test(planlib, mono_finds_smallest_meeting)
{
    for (int T = 1; T <= 70; T++) {
        plan_mono b = fresh(1, 64, NAN);
        int n = bisect(&b, 1, 64, T);
        cr_assert(b.done && !b.pruned);
        cr_assert_eq(b.answer, T <= 64 ? T : 0, "T=%d", T);
        cr_assert_leq(n, 2 * 6 + 1, "T=%d: %d evaluations (doubling then halving over 64)", T, n);
    }
    /* an exact estimate: itself, then one below it */
    plan_mono b = fresh(1, 64, 23);
    cr_assert_eq(bisect(&b, 1, 64, 23), 2);
    cr_assert_eq(b.answer, 23);
    /* an estimate too low is only a start */
    b = fresh(1, 64, 5);
    bisect(&b, 1, 64, 40);
    cr_assert_eq(b.answer, 40);
    /* recording never widens the bracket */
    b = fresh(1, 64, NAN);
    cr_assert_eq(plan_mono_record(&b, 10, 1), 1);
    cr_assert_eq(plan_mono_record(&b, 12, 1), 0);
    cr_assert_eq(b.hi, 10);
    cr_assert_eq(plan_mono_record(&b, 4, 0), 1);
    cr_assert_eq(plan_mono_record(&b, 3, 0), 0);
    cr_assert_eq(b.lo, 4);
    cr_assert(b.lo_known);
}

typedef struct cfg { double fixed, unit; int T; plan_mono b; } cfg;

/* The planner's search over N configurations (cost fixed + unit x m, meeting
 * from m >= T on, values 1..HI), round by round as sim/plan/search.c runs it: the
 * cheapest met so far prunes the others.  Returns the winner's index (-1
 * none); *EVALS the evaluations made. */
static int search(cfg *c, int n, int hi, int *evals)
{
    int best = -1;
    double best_cost = INFINITY;
    *evals = 0;
    for (int i = 0; i < n; i++) c[i].b = fresh(1, hi, NAN);
    for (int open = 1; open;) {
        open = 0;
        for (int i = 0; i < n; i++) {
            plan_mono_ctx x = { 1, hi, best >= 0 && best != i, best_cost, c[i].fixed, c[i].unit, 0 };
            if (c[i].b.done || c[i].b.pruned) continue;
            int v = plan_mono_next(&c[i].b, &x);
            if (v <= 0) continue;
            open = 1;
            ++*evals;
            plan_mono_record(&c[i].b, v, v >= c[i].T);
        }
        for (int i = 0; i < n; i++)
            if (c[i].b.hi <= hi && c[i].fixed + c[i].unit * c[i].b.hi < best_cost) {
                best = i;
                best_cost = c[i].fixed + c[i].unit * c[i].b.hi;
            }
    }
    return best;
}

/* Three configurations worked by hand: A ($10 per replica, needs 8: $80/h),
 * B ($4, needs 12: $48/h), C ($100 + $1, needs 5: $105/h).  B wins at 12;
 * C is pruned once A meets at 8 ($80/h) since even 5 replicas cost more. */
Test(planlib, search_cheapest_meeting_by_hand)
{
    cfg c[3] = { { 0, 10, 8, { 0 } }, { 0, 4, 12, { 0 } }, { 100, 1, 5, { 0 } } };
    int evals, w = search(c, 3, 32, &evals);
    cr_assert_eq(w, 1);
    cr_assert_eq(c[1].b.answer, 12);
    cr_assert(c[2].b.pruned && c[2].b.answer == 0);
    cr_assert_lt(evals, 3 * 32, "fewer than brute force");
}

/* Random spaces (fixed seed): the search's winner costs what brute force's
 * cheapest meeting configuration costs (pruning never drops a cheaper one). */
Test(planlib, search_matches_brute_force)
{
    uint64_t s = 0x5eed;
    int total = 0, brute = 0;
    for (int trial = 0; trial < 200; trial++) {
        cfg c[6];
        int n = 1 + (int) (trial % 6), hi = 48;
        for (int i = 0; i < n; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            c[i].fixed = (double) ((s >> 33) % 50);
            c[i].unit = 1 + (double) ((s >> 20) % 9);
            c[i].T = 1 + (int) ((s >> 45) % 60);       /* above 48: never meets */
        }
        double want = INFINITY;
        for (int i = 0; i < n; i++)
            if (c[i].T <= hi && c[i].fixed + c[i].unit * c[i].T < want) want = c[i].fixed + c[i].unit * c[i].T;
        int evals, w = search(c, n, hi, &evals);
        total += evals;
        brute += n * hi;
        if (isinf(want)) { cr_assert_eq(w, -1, "trial %d", trial); continue; }
        cr_assert_geq(w, 0, "trial %d: no winner", trial);
        cr_assert_eq(c[w].b.hi, c[w].T, "trial %d", trial);
        cr_assert_float_eq(c[w].fixed + c[w].unit * c[w].b.hi, want, 1e-9, "trial %d", trial);
    }
    cr_assert_lt(total, brute / 4, "%d evaluations against brute force's %d", total, brute);
}

/* Goodput: meeting up to 1.75 x the rate brackets it in (1.5, 2) after the
 * ladder, then in (1.7, 1.8) after the four factors inside; meeting at every
 * factor leaves no bracket (HI NAN) and no second round. */
Test(planlib, goodput_bracket)
{
    double f[PLAN_GOODPUT_MAX], lo = 1, hi = NAN;
    int met[PLAN_GOODPUT_MAX];
    for (int round = 0; round < 3; round++) {
        int n = plan_goodput_factors(round, lo, hi, f);
        cr_assert_eq(n, round == 0 ? 6 : round == 1 ? 4 : 0, "round %d: %d factors", round, n);
        for (int i = 0; i < n; i++) met[i] = f[i] <= 1.75;
        plan_goodput_bracket(f, met, n, &lo, &hi);
        if (round == 0) { cr_assert_float_eq(lo, 1.5, 1e-12); cr_assert_float_eq(hi, 2, 1e-12); }
    }
    cr_assert_float_eq(lo, 1.7, 1e-9);
    cr_assert_float_eq(hi, 1.8, 1e-9);
    lo = 1;
    hi = NAN;
    int n = plan_goodput_factors(0, lo, hi, f);
    for (int i = 0; i < n; i++) met[i] = 1;
    plan_goodput_bracket(f, met, n, &lo, &hi);
    cr_assert_float_eq(lo, 4, 1e-12);
    cr_assert(isnan(hi));
    cr_assert_eq(plan_goodput_factors(1, lo, hi, f), 0);
    /* a miss below a meeting factor (noise): the bracket stays below the miss */
    lo = 1;
    hi = NAN;
    double g[3] = { 1.2, 1.5, 2 };
    int m3[3] = { 0, 1, 1 };
    plan_goodput_bracket(g, m3, 3, &lo, &hi);
    cr_assert_float_eq(hi, 1.2, 1e-12);
    cr_assert_float_eq(lo, 1, 1e-12);
}

/* Verdicts: each kind from what the search found, and the figures in its
 * text (the cost at the answer, the lower bound's cost when pruned). */
Test(planlib, verdicts)
{
    plan_mono b = { .lo = 7, .hi = 8, .done = 1, .answer = 8 };
    plan_verdict_in v = { .bound = "", .seed0 = 42, .seeds = 3, .has_mono = 1, .mono_name = "replicas", .range_lo = 1,
                          .range_hi = 32, .b = &b, .fixed = 5, .unit = 10, .term_below = "e2e_p99_ms 23500 > 15000",
                          .below_seed = 43, .winner_cost = 85, .best_cost = 85 };
    char why[400];
    int value;
    cr_assert_str_eq(plan_verdict(&v, &value, why, sizeof why), "meets");
    cr_assert_eq(value, 8);
    cr_assert_str_eq(why, "meets the SLO at replicas=8: $85.00/h (at 7: e2e_p99_ms 23500 > 15000 with seed 43)");
    v.term_below = NULL;
    b.answer = 1;
    plan_verdict(&v, &value, why, sizeof why);
    cr_assert_str_eq(why, "meets the SLO at replicas=1: $15.00/h (the smallest searched)");
    /* pruned at lo = 9: 10 replicas cost $105/h, above the winner's $85/h */
    b = (plan_mono) { .lo = 9, .hi = 33, .pruned = 1 };
    cr_assert_str_eq(plan_verdict(&v, &value, why, sizeof why), "pruned");
    cr_assert_eq(value, 0);
    cr_assert(strstr(why, "(replicas=10, its lower bound) costs $105.00/h, more than the best found ($85.00/h)"), "%s", why);
    v.winner_cost = 120;         /* confirmation raised the winner above it */
    plan_verdict(&v, &value, why, sizeof why);
    cr_assert(strstr(why, "with the first seed ($85.00/h), which confirmation raised to $120.00/h"), "%s", why);
    /* missed at the largest searched */
    b = (plan_mono) { .lo = 32, .hi = 33, .done = 1 };
    v.term_lo = "queue_p99_ms 900 > 500";
    cr_assert_str_eq(plan_verdict(&v, &value, why, sizeof why), "missed");
    cr_assert_str_eq(why, "SLO missed at replicas=32 (the largest searched): queue_p99_ms 900 > 500");
    v.failed_confirmation = 1;
    b.answer = 12;
    cr_assert_str_eq(plan_verdict(&v, &value, why, sizeof why), "failed_confirmation");
    cr_assert_str_eq(why, "met with seed 42 but not with every one of 3 seeds up to replicas=12");
    v.bound = "pool cpu needs servers >= 40";
    cr_assert_str_eq(plan_verdict(&v, &value, why, sizeof why), "below_bound");
    v.refused = "the model does not fit";
    cr_assert_str_eq(plan_verdict(&v, &value, why, sizeof why), "ruled_out");
    cr_assert_str_eq(why, "ruled out: the model does not fit");
    /* no monotone dimension */
    v = (plan_verdict_in) { .bound = "", .b = &b, .fixed = 12.5, .met = 1 };
    cr_assert_str_eq(plan_verdict(&v, &value, why, sizeof why), "meets");
    cr_assert_str_eq(why, "meets the SLO: $12.50/h");
    v.met = 0;
    cr_assert_str_eq(plan_verdict(&v, &value, why, sizeof why), "missed");
    cr_assert_str_eq(why, "SLO missed: not simulated");
}

/* plan_robust: the answer is robust only when both ends of the band met the
 * SLO with the same configuration; the verdict in words names both ends. */
Test(planlib, robust_only_when_both_ends_agree)
{
    plan_sens s[2] = { { .factor = 0.789, .met = 1, .label = "gpu=h100 tp=2 replicas=3", .cost = 17.94 },
                       { .factor = 1.27, .met = 1, .label = "gpu=h100 tp=4 replicas=3", .cost = 35.88 } };
    cr_assert_eq(plan_robust(s, 2), 0, "the band straddles two configurations");
    static plan p;               /* large: not on the stack */
    memset(&p, 0, sizeof p);
    memcpy(p.sens, s, sizeof s);
    p.nsens = 2;
    char v[2000];
    plan_sens_verdict(&p, v, sizeof v);
    cr_assert_str_eq(v, "not robust: x0.789: gpu=h100 tp=2 replicas=3 ($17.94/hour); x1.27: gpu=h100 tp=4 replicas=3 ($35.88/hour)");
    snprintf(s[1].label, sizeof s[1].label, "%s", s[0].label);
    cr_assert_eq(plan_robust(s, 2), 1, "the same configuration at both ends");
    memcpy(p.sens, s, sizeof s);
    p.robust = 1;
    plan_sens_verdict(&p, v, sizeof v);
    cr_assert_str_eq(v, "robust: same configuration at x0.789 and x1.27 (gpu=h100 tp=2 replicas=3)");
    s[1].met = 0;
    cr_assert_eq(plan_robust(s, 2), 0, "nothing meets at the pessimistic end");
    cr_assert_eq(plan_robust(s, 1), 0, "one end only");
    memcpy(p.sens, s, sizeof s);
    p.robust = 0;
    plan_sens_verdict(&p, v, sizeof v);
    cr_assert_str_eq(v, "not robust: x0.789: gpu=h100 tp=2 replicas=3 ($17.94/hour); x1.27: no configuration meets the SLO");
}

/* Option values: ranges, lists and an error renamed after its option. */
Test(planlib, option_values)
{
    plan_range r;
    char err[200], v[64];
    cr_assert_eq(plan_range_parse("1:2:0.25", 0, 100, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.n, 5);
    plan_range_value(&r, 3, v, sizeof v);
    cr_assert_str_eq(v, "1.75");
    cr_assert_eq(plan_range_parse("1:64", 1, 256, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.n, 64);
    cr_assert_eq(plan_range_parse("1:nan", 1, 256, &r, err, sizeof err), -1);
    cr_assert_str_eq(err, "TO 'nan' is not a finite number");
    cr_assert_eq(plan_range_parse("9:1", 1, 256, &r, err, sizeof err), -1);
    cr_assert_str_eq(err, "empty range: TO 1 is below FROM 9");
    cr_assert_eq(plan_range_parse("1:1000", 1, 256, &r, err, sizeof err), -1);
    cr_assert_str_eq(err, "1000 values (at most 256): use a larger STEP or a narrower range");
    cr_assert_eq(plan_list_value_check("chunked,x", 7, 128, err, sizeof err), 0);
    cr_assert_eq(plan_list_value_check("inf", 3, 128, err, sizeof err), -1);
    cr_assert_eq(plan_list_value_check("", 0, 128, err, sizeof err), -1);
    char e[300] = "--set: [pool cpu] servers: expected a whole number";
    plan_relabel(e, sizeof e, "--search", "pool gpu", "servers");
    cr_assert_str_eq(e, "--set: [pool cpu] servers: expected a whole number", "another key: unchanged");
    plan_relabel(e, sizeof e, "--search", "pool cpu", "servers");
    cr_assert_str_eq(e, "--search: [pool cpu] servers: expected a whole number");
}

/* ---- the search through the library ------------------------------------- */

static char tdir[64];

static void tdir_make(void)
{
    snprintf(tdir, sizeof tdir, "/tmp/latsim_planlib_XXXXXX");
    cr_assert_not_null(mkdtemp(tdir));
}

static void tdir_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tdir);
    cr_expect_eq(system(cmd), 0);
}

/* Writes TEXT to NAME in the test's folder; its path into PATH. */
static void put_file(const char *name, const char *text, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", tdir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* The options of a plan of FILE at TARGET req/s searching SEARCH, 2 workers,
 * the catalog of DB (which need not exist), nothing stored. */
static plan_opts opts_for(const char *file, double target, const char *search, const char *db)
{
    plan_opts o = { .file = file, .target = target, .seeds = 2, .top = 5, .jobs = 2, .dbpath = db };
    o.searches[o.nsearch++] = search;
    return o;
}

/* The P99 queue wait of M/M/c, ms, worked from Erlang B by recursion:
 * P(W > t) = C exp(-(c mu - lambda) t), C = B / (1 - rho + rho B). */
static double mmc_p99_ms(int c, double lambda, double mu)
{
    double a = lambda / mu, b = 1;
    for (int k = 1; k <= c; k++) b = a * b / (k + a * b);
    double rho = a / c, pw = b / (1 - rho + rho * b);
    return pw <= 0.01 ? 0 : 1000 * log(pw / 0.01) / (c * mu - lambda);
}

/* An M/M/c pool at 20 req/s, 100 ms of service (2 erlangs), P99 queue wait
 * <= 100 ms: by hand 4 servers wait 143 ms at the P99 and 5 wait 59.6 ms, so
 * the answer is 5 servers ($1.25/h at $0.25 each), both sides over 40 ms
 * from the limit, far beyond the sampling error of a P99 from 50000
 * requests.  The Erlang estimate is the answer, so the bisection tries 5 and
 * then 4 only; the JSON read back has every member a reader uses. */
Test(planlib, mmc_search_matches_erlang_c, .init = tdir_make, .fini = tdir_remove)
{
    cr_assert_gt(mmc_p99_ms(4, 20, 10), 125);
    cr_assert_lt(mmc_p99_ms(5, 20, 10), 75);
    char path[128], db[128], err[8192];
    put_file("mmc.ini", "[sim]\nrequests = 50000\n[workload]\nrate = 1\n[pool cpu]\nservers = 1\n"
             "service_ms = exp(mean=100)\nusd_per_hour = 0.25\n[slo]\nqueue_p99_ms = 100\n", path, sizeof path);
    snprintf(db, sizeof db, "%s/plan.db", tdir);
    plan_opts o = opts_for(path, 20, "pool cpu.servers=1:64", db);
    static plan p;
    cr_assert_eq(plan_init(&p, &o, err, sizeof err), 0, "%s", err);
    cr_assert_eq(plan_setup(&p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(p.nc, 1);
    cr_assert_str_eq(p.mono_name, "servers");
    cr_assert_float_eq(p.c[0].b.hint, 5, 1e-12, "the Erlang C estimate");
    cr_assert_eq(p.c[0].b.lo, 2, "the utilisation bound: 2 erlangs need 3 servers at least");
    cr_assert_eq(plan_search(&p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(p.winner, 0);
    cr_assert_eq(p.c[0].b.answer, 5);
    cr_assert_eq(p.c[0].confirmed, 1);
    int cand = 0;
    for (int i = 0; i < p.ne; i++) cand += !strcmp(p.e[i].role, "candidate");
    cr_assert_eq(cand, 2, "the estimate and one below it");
    cr_assert_eq(plan_conclude(&p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(p.ncs, 1);
    cr_assert_float_eq(p.cs[0].cost, 1.25, 1e-9);
    cr_assert_eq(p.nsens, 0, "no LLM pool: no sensitivity check");
    cr_assert_geq(p.goodput_lo, 1);
    int v;
    char why[1200];
    cr_assert_str_eq(plan_config_verdict(&p, 0, &v, why, sizeof why), "meets");
    cr_assert_eq(v, 5);
    cr_assert(strstr(why, "meets the SLO at servers=5: $1.25/h (at 4: queue_p99_ms "), "%s", why);
    cr_assert_eq(plan_json(&p, err, sizeof err), 0, "%s", err);
    char *text = malloc(strlen(p.jtext) + 2);
    cr_assert_not_null(text);
    strcpy(text, p.jtext);
    strcat(text, "}");
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    cr_assert_not_null(j, "%s: %s", je.text, text);
    cr_assert_str_eq(json_string_value(json_object_get(j, "scenario")), path);
    cr_assert_float_eq(json_number_value(json_object_get(j, "target_rate_rps")), 20, 1e-9);
    cr_assert_float_eq(json_number_value(json_object_get(j, "headroom")), 1, 1e-9);
    cr_assert_str_eq(json_string_value(json_object_get(j, "objective")), "cost");
    json_t *best = json_object_get(j, "best");
    cr_assert(json_is_object(best));
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(best, "settings"), "pool cpu.servers")), "5");
    cr_assert_float_eq(json_number_value(json_object_get(best, "usd_per_hour")), 1.25, 1e-9);
    cr_assert_eq(json_integer_value(json_object_get(best, "confirmed_seeds")), 2);
    cr_assert(json_is_true(json_object_get(json_object_get(best, "slo"), "met")));
    cr_assert(json_is_array(json_object_get(j, "candidates")));
    json_t *verdicts = json_object_get(j, "verdicts");
    cr_assert_eq(json_array_size(verdicts), 1);
    json_t *v0 = json_array_get(verdicts, 0);
    cr_assert_str_eq(json_string_value(json_object_get(v0, "verdict")), "meets");
    cr_assert(json_is_true(json_object_get(v0, "chosen")));
    cr_assert_eq(json_integer_value(json_object_get(v0, "servers")), 5);
    cr_assert_str_eq(json_string_value(json_object_get(v0, "why")), why);
    json_t *g = json_object_get(j, "goodput");
    cr_assert_float_eq(json_number_value(json_object_get(g, "rate_rps_min")), 20 * p.goodput_lo, 1e-3);
    cr_assert_eq(json_integer_value(json_object_get(j, "simulations")), p.ne);
    cr_assert_eq(json_integer_value(json_object_get(j, "configurations")), 1);
    cr_assert(json_is_false(json_object_get(j, "cost_models_differ")));
    cr_assert(json_is_object(json_object_get(j, "cost_models")));
    cr_assert_null(json_object_get(j, "sensitivity"));
    json_decref(j);
    free(text);
    /* Stored: the plan and one run per simulation, in one transaction. */
    p.o.store = 1;
    cr_assert_eq(plan_store(&p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(p.plan_id, 1);
    sqlite3 *d;
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_open(db, &d), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(d, "SELECT count(*) FROM runs", -1, &st, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    cr_assert_eq(sqlite3_column_int(st, 0), p.ne);
    sqlite3_finalize(st);
    sqlite3_close(d);
    plan_free(&p);
}

/* A pool that cannot carry the load: 200 req/s on 100 ms (20 erlangs) with
 * at most 8 servers is below the utilisation bound, so nothing is simulated,
 * the JSON says best: null, and the reason names the bound. */
Test(planlib, below_bound_nothing_simulated, .init = tdir_make, .fini = tdir_remove)
{
    char path[128], db[128], err[8192];
    put_file("mmc.ini", "[sim]\nrequests = 5000\n[workload]\nrate = 1\n[pool cpu]\nservers = 1\n"
             "service_ms = exp(mean=100)\nusd_per_hour = 0.25\n[slo]\nqueue_p99_ms = 100\n", path, sizeof path);
    snprintf(db, sizeof db, "%s/plan.db", tdir);
    plan_opts o = opts_for(path, 200, "pool cpu.servers=1:8", db);
    static plan p;
    cr_assert_eq(plan_init(&p, &o, err, sizeof err), 0, "%s", err);
    cr_assert_eq(plan_setup(&p, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(p.c[0].bound, "needs servers >= 21"), "%s", p.c[0].bound);
    cr_assert_eq(plan_search(&p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(p.winner, -1);
    cr_assert_eq(p.ne, 0);
    cr_assert_eq(plan_json(&p, err, sizeof err), 0, "%s", err);
    char text[4096];
    snprintf(text, sizeof text, "%s}", p.jtext);
    json_t *j = json_loads(text, 0, NULL);
    cr_assert_not_null(j, "%s", text);
    cr_assert(json_is_null(json_object_get(j, "best")));
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(j, "verdicts"), 0), "verdict")), "below_bound");
    json_decref(j);
    cr_assert_eq(plan_conclude(&p, err, sizeof err), 2);
    cr_assert(strstr(err, "plan: no configuration meets the SLO at 200 req/s") && strstr(err, "cannot carry the load") &&
              strstr(err, "nothing was simulated"), "%s", err);
    plan_free(&p);
}

/* Bad input is one line in ERR with status 2, before anything runs. */
Test(planlib, bad_input_is_status_2, .init = tdir_make, .fini = tdir_remove)
{
    char path[128], db[128], err[8192];
    put_file("mmc.ini", "[sim]\nrequests = 5000\n[workload]\nrate = 1\n[pool cpu]\nservers = 1\n"
             "service_ms = exp(mean=100)\n[slo]\nqueue_p99_ms = 100\n", path, sizeof path);
    snprintf(db, sizeof db, "%s/plan.db", tdir);
    static plan p;
    plan_opts o = opts_for(path, 20, "pool cpu.servers=nan:4", db);
    cr_assert_eq(plan_init(&p, &o, err, sizeof err), 0, "%s", err);
    cr_assert_eq(plan_setup(&p, err, sizeof err), 2);
    cr_assert_str_eq(err, "plan: --search pool cpu.servers=nan:4: FROM 'nan' is not a finite number");
    plan_free(&p);
    o = opts_for(path, 20, "pool gpu.servers=1:4", db);
    cr_assert_eq(plan_init(&p, &o, err, sizeof err), 0, "%s", err);
    cr_assert_eq(plan_setup(&p, err, sizeof err), 2);
    cr_assert(strstr(err, "has no section [pool gpu]"), "%s", err);
    plan_free(&p);
    o = opts_for(path, NAN, "pool cpu.servers=1:4", db);
    cr_assert_eq(plan_init(&p, &o, err, sizeof err), 0, "%s", err);
    cr_assert_eq(plan_setup(&p, err, sizeof err), 2);
    cr_assert_str_eq(err, "plan: missing --target-rate R (see latsim plan --help)");
    plan_free(&p);
}

/* The sensitivity check on an LLM pool: at 5 req/s, h100 with tp 2 or 4,
 * the step times at both ends of the learned model's band (x0.79, x1.27)
 * choose different configurations, so the plan is not robust; longer step
 * times cannot be carried more cheaply, so the optimistic end costs no more
 * than the plan and the pessimistic end no less. */
Test(planlib, band_straddles_two_llm_configurations, .init = tdir_make, .fini = tdir_remove)
{
    cnet_register();
    char db[128], err[8192];
    snprintf(db, sizeof db, "%s/plan.db", tdir);
    const char *sets[] = { "sim.requests=2000" };
    plan_opts o = { .file = "scenarios/chat_plan.ini", .sets = sets, .nsets = 1, .target = 5, .gpus = "h100", .tps = "2,4",
                    .reps = "1:16", .seeds = 1, .top = 5, .jobs = 2, .dbpath = db };
    static plan p;
    cr_assert_eq(plan_init(&p, &o, err, sizeof err), 0, "%s", err);
    cr_assert_eq(plan_setup(&p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(p.nc, 2);
    cr_assert_eq(plan_search(&p, err, sizeof err), 0, "%s", err);
    cr_assert_geq(p.winner, 0);
    cr_assert_eq(plan_conclude(&p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(p.nsens, 2);
    cr_assert_lt(p.sens[0].factor, 1);
    cr_assert_gt(p.sens[1].factor, 1);
    cr_assert(p.sens[0].met && p.sens[1].met);
    cr_assert_str_neq(p.sens[0].label, p.sens[1].label, "the band straddles two configurations");
    cr_assert_eq(p.robust, 0);
    cr_assert_eq(p.robust, plan_robust(p.sens, p.nsens));
    cr_assert_leq(p.sens[0].cost, p.cs[0].cost + 1e-9);
    cr_assert_geq(p.sens[1].cost, p.cs[0].cost - 1e-9);
    cr_assert_eq(plan_json(&p, err, sizeof err), 0, "%s", err);
    char *text = malloc(strlen(p.jtext) + 2);
    cr_assert_not_null(text);
    sprintf(text, "%s}", p.jtext);
    json_t *j = json_loads(text, 0, NULL);
    cr_assert_not_null(j);
    json_t *s = json_object_get(j, "sensitivity");
    cr_assert(json_is_false(json_object_get(s, "robust")));
    cr_assert_eq(json_array_size(json_object_get(s, "answers")), 2);
    cr_assert(strncmp(json_string_value(json_object_get(s, "verdict")), "not robust: ", 12) == 0);
    json_t *pe = json_object_get(j, "pessimistic");
    cr_assert_float_eq(json_number_value(json_object_get(pe, "usd_per_hour")), p.sens[1].cost, 1e-4);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(pe, "settings"), "pool chat.tp")), strstr(p.sens[1].label, "tp=4") ? "4" : "2");
    json_decref(j);
    free(text);
    plan_free(&p);
}

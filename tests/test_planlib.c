/* test_planlib.c -- the planner's computations through latsim/plan.h, the
 * library alone (no binary, no simulation): Erlang C against values worked
 * by hand, the server count the Erlang estimate gives for queue terms of an
 * [slo], and the bisection of a monotone value (plan_mono_next/record) on
 * monotone predicates: the smallest meeting value found in few evaluations,
 * and a search over several configurations that prunes by cost returning
 * the cost brute force finds. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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
 * from m >= T on, values 1..HI), round by round as cli/plan.c runs it: the
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

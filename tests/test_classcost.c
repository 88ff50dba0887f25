/* test_classcost.c -- cost per 1000 requests per class (README, "Cost per
 * class"): the classes' $ add up to the overall figure; classes on separate
 * pools pay exactly their own pool; an LLM step's time is split between its
 * prefill and its decodes by their standalone cost (exact under a linear cost
 * model, bounded by the token ratio under the roofline); API charges are the
 * class's own tokens x prices. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "store/store.h"
#include "tsim.h"

static void run(const char *text, sim_result *res)
{
    scenario sc;
    char err[1024];
    sqlite3 *db = NULL;
    int rc = scenario_load_text(&sc, "/tmp/test_classcost.ini", text, NULL, 0, err, sizeof err);
    if (rc == 0) {
        cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "%s", err);
        rc = scenario_resolve(&sc, db, err, sizeof err);
        store_close(db);
    }
    if (rc != 0) scenario_free(&sc);
    cr_assert_eq(rc, 0, "%s", err);
    rc = sim_run(&sc, 1, res, err, sizeof err);
    scenario_free(&sc);
    cr_assert_eq(rc, 0, "%s", err);
}

/* What these tests read of a class: its rows (scope "class:NAME"). */
typedef struct cls_view {
    double served;            /* its measured served requests */
    double api_usd;           /* its API charges, $ (NAN: no api_usd row, no gateway kind) */
    double cost_per_1k;       /* $ per 1000 of its served requests */
} cls_view;

/* Class NAME of R's rows; a class R lacks fails the test. */
static cls_view cls(const sim_result *r, const char *name)
{
    char scope[80];
    snprintf(scope, sizeof scope, "%s%s", REPORT_CLASS_SCOPE, name);
    cr_assert_not_null(sim_result_row(r, scope, "requests", "value"), "no class %s", name);
    return (cls_view) { sim_result_get(r, scope, "served", "value"), sim_result_get(r, scope, "api_usd", "value"),
                        sim_result_get(r, scope, "cost_per_1k_requests", "value") };
}

/* The system's row METRIC (stat "value") of R (col_cost.c's: cost_per_1k_requests,
 * api_usd...), NAN when R does not report it. */
static double sys(const sim_result *r, const char *metric) { return sim_result_get(r, "", metric, "value"); }

/* sum over classes of served x cost_per_1k, and of api_usd */
static void sums(const sim_result *r, double *cost, double *api)
{
    *cost = *api = 0;
    for (size_t i = 0; i < r->rows.n; i++) {   /* each class's "requests" row names it */
        const sim_row *w = &r->rows.row[i];
        if (strcmp(w->family, "classes") || strcmp(w->metric, "requests")) continue;
        cls_view k = cls(r, w->scope + strlen(REPORT_CLASS_SCOPE));
        *cost += k.served * k.cost_per_1k;
        *api += k.api_usd;
    }
}

/* Two classes of different complexity behind a complexity router: the simple
 * side goes to an LLM pool (H100, priced), the complex side to an API; both
 * classes reach both.  Poisson arrivals with an automatic warm-up, so that
 * departures (served in the window, measured or not) differ from the measured
 * served requests: the classes' $ must still add up to served x cost_per_1k. */
Test(classcost, classes_add_up_to_the_overall_cost)
{
    const char *text =
        "[sim]\nrequests = 1500\n[workload]\nrate = 6\ntarget = gw\n"
        "prompt_tokens = lognormal(mean=600, cv=0.5)\noutput_tokens = lognormal(mean=120, cv=0.5)\n"
        "[class easy]\nshare = 0.7\ncomplexity = uniform(min=0, max=0.8)\n"
        "[class hard]\nshare = 0.3\ncomplexity = uniform(min=0.3, max=1)\noutput_tokens = lognormal(mean=300, cv=0.5)\n"
        "[pool gw]\nkind = router\npolicy = complexity\ncomplexity_cut = 0.5\nnext = chat, api\n"
        "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n"
        "[pool api]\nkind = api\nttft_ms = const(300)\ntpot_ms = const(20)\n"
        "price_in_per_1k = 0.003\nprice_out_per_1k = 0.015\n";
    sim_result r;
    run(text, &r);
    cr_assert(!tsim_sat(&r));
    cr_assert_not_null(sim_result_row(&r, "", "cost_per_1k_requests", "value"), "a priced pool and a gateway kind: cost reported");
    cr_assert_neq(tsim_n(&r, "departures"), tsim_n(&r, "served"), "the check needs departures != served (got %llu)",
                  (unsigned long long) tsim_n(&r, "served"));
    cr_assert_gt(tsim_prv(tsim_pool_named(&r, "chat"), "cost_per_hour"), 0);
    cr_assert_gt(sys(&r, "api_usd"), 0);
    double cost, api;
    sums(&r, &cost, &api);
    cr_assert_float_eq(cost, (double) tsim_n(&r, "served") * sys(&r, "cost_per_1k_requests"), 1e-9 * cost, "%.12g vs %.12g", cost,
                       (double) tsim_n(&r, "served") * sys(&r, "cost_per_1k_requests"));
    cr_assert_float_eq(api, sys(&r, "api_usd"), 1e-9 * api);
    /* Both classes pay GPU and API; the hard class, with longer answers and
     * more of its requests on the API, pays more per request. */
    const cls_view e = cls(&r, "easy"), h = cls(&r, "hard");
    cr_assert_gt(e.api_usd, 0);
    cr_assert_gt(h.api_usd, 0);
    cr_assert_gt(e.cost_per_1k, 1000 * e.api_usd / e.served);
    cr_assert_gt(h.cost_per_1k, e.cost_per_1k);
    sim_result_free(&r);
}

/* Two classes on two separate generic pools of different prices: each class
 * pays exactly its own pool's $ over the window.  Constant arrivals 1 s apart,
 * services far shorter, no warm-up: every request served in the window is
 * measured (departures = served), so class c's cost per 1000 is
 * 1000 x usd_per_hour x servers x window / 3600 / served_c. */
Test(classcost, classes_on_separate_pools_pay_their_own_pool_exactly)
{
    const char *text =
        "[sim]\nrequests = 400\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n"
        "[class a]\nshare = 0.25\ntarget = pa\n"
        "[class b]\nshare = 0.75\ntarget = pb\n"
        "[pool pa]\nservice_ms = exp(mean=30)\nusd_per_hour = 3.6\n"
        "[pool pb]\nservers = 2\nservice_ms = exp(mean=80)\nusd_per_hour = 36\n";
    sim_result r;
    run(text, &r);
    cr_assert_eq(tsim_n(&r, "departures"), tsim_n(&r, "served"));
    cr_assert_eq(tsim_n(&r, "served"), 400);
    cr_assert_float_eq(tsim_prv(tsim_pool_named(&r, "pa"), "cost_per_hour"), 3.6, 1e-12);
    cr_assert_float_eq(tsim_prv(tsim_pool_named(&r, "pb"), "cost_per_hour"), 72, 1e-12);
    /* No LLM pool: no cost_per_hour row; the pools' $ per hour add up to 75.6 all the same. */
    cr_assert(isnan(sys(&r, "cost_per_hour")));
    cr_assert_float_eq(tsim_prv(tsim_pool_named(&r, "pa"), "cost_per_hour") + tsim_prv(tsim_pool_named(&r, "pb"), "cost_per_hour"), 75.6, 1e-12);
    const cls_view a = cls(&r, "a"), b = cls(&r, "b");
    cr_assert_gt(a.served, 50);
    cr_assert_gt(b.served, 200);
    double wa = 3.6 * tsim_v(&r, "window_s") / 3600, wb = 72 * tsim_v(&r, "window_s") / 3600;
    cr_assert_float_eq(a.cost_per_1k, 1000 * wa / a.served, 1e-12 * a.cost_per_1k);
    cr_assert_float_eq(b.cost_per_1k, 1000 * wb / b.served, 1e-12 * b.cost_per_1k);
    cr_assert(isnan(a.api_usd), "no gateway kind: no api_usd row");
    /* The overall figure is their served-weighted mean. */
    double per_1k = sys(&r, "cost_per_1k_requests");
    cr_assert_float_eq(per_1k, 1000 * (wa + wb) / 400.0, 1e-12 * per_1k);
    sim_result_free(&r);
}

/* The same split with Poisson arrivals and an automatic warm-up (departures !=
 * served): class c pays its pool's $ x served / departures (the measured
 * requests' part of the window's $, as in the overall figure). */
Test(classcost, separate_pools_under_poisson_arrivals)
{
    const char *text =
        "[sim]\nrequests = 3000\n[workload]\nrate = 20\n"
        "[class a]\nshare = 0.4\ntarget = pa\n"
        "[class b]\nshare = 0.6\ntarget = pb\n"
        "[pool pa]\nservice_ms = exp(mean=30)\nusd_per_hour = 3.6\n"
        "[pool pb]\nservers = 2\nservice_ms = exp(mean=80)\nusd_per_hour = 36\n";
    sim_result r;
    run(text, &r);
    cr_assert_neq(tsim_n(&r, "departures"), tsim_n(&r, "served"));
    double part = (double) tsim_n(&r, "served") / (double) tsim_n(&r, "departures");
    const cls_view a = cls(&r, "a"), b = cls(&r, "b");
    cr_assert_float_eq(a.cost_per_1k, 1000 * 3.6 * tsim_v(&r, "window_s") / 3600 * part / a.served,
                       1e-12 * a.cost_per_1k);
    cr_assert_float_eq(b.cost_per_1k, 1000 * 72 * tsim_v(&r, "window_s") / 3600 * part / b.served,
                       1e-12 * b.cost_per_1k);
    sim_result_free(&r);
}

/* Two classes that differ only in output length (100 and 300 tokens, the same
 * 200-token prompt) share one continuous-batching replica. */
#define LEN_TEXT(rate, cost) \
    "[sim]\nrequests = 2000\n[workload]\nrate = " rate "\nprompt_tokens = const(200)\n" \
    "[class short]\noutput_tokens = const(100)\n" \
    "[class long]\noutput_tokens = const(300)\n" \
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" cost

/* Under a linear cost model without a per-step base or KV term, a step's time
 * is exactly its prefill's standalone time plus its decodes': the rule charges
 * each sequence prefill_ms_per_token x its prompt tokens plus decode_ms_per_seq
 * per decode step, however it was batched.  A request is charged
 * 0.02 x 200 + 0.5 x (output - 1) ms: 53.5 (short), 153.5 (long), so the long
 * class pays 153.5 / 53.5 of the short one's (up to the rounding of each step
 * to the nanosecond, 1e-9 of a 0.5 ms step). */
Test(classcost, llm_linear_cost_charges_each_request_its_own_work)
{
    sim_result r;
    run(LEN_TEXT("7", "cost = linear\nstep_base_ms = 0\nprefill_ms_per_token = 0.02\ndecode_ms_per_seq = 0.5\n"), &r);
    cr_assert(!tsim_sat(&r));
    cr_assert_gt(tsim_prv(tsim_pool_named(&r, "chat"), "mean_batch"), 1.5, "batches must be shared for the check to mean something");
    const cls_view s = cls(&r, "short"), l = cls(&r, "long");
    double ratio = l.cost_per_1k / s.cost_per_1k;
    cr_assert_float_eq(ratio, 153.5 / 53.5, 1e-6, "ratio %.9g", ratio);
    sim_result_free(&r);
}

/* Under the roofline (the default model) the split depends on the batch.
 * Both classes' sequences decode in the same steps, each step's decode time
 * shared equally, so per decode step they are charged the same in expectation
 * (d); their prompts are the same, so the same prefill charge P.  The long
 * class pays (P + 299 d) / (P + 99 d) of the short one's: below 299 / 99 (its
 * decode steps over the short one's) since P > 0, and above 2 as long as
 * P < 101 d.  P is at most a whole 200-token prefill step alone (about 7 ms on
 * an H100: it reads the 16 GB of weights once, like a decode step), while d is
 * about a decode step (7 ms) over the batch, so P < 101 d for any batch of up
 * to ~100 sequences; at this load the mean batch is a few sequences.  The
 * statistical slack above 299 / 99 (1 %) covers the difference between the
 * two classes' mean batch, a mean over thousands of steps. */
Test(classcost, llm_roofline_cost_lies_between_the_token_ratio_bounds)
{
    sim_result r;
    run(LEN_TEXT("2", ""), &r);
    cr_assert(!tsim_sat(&r));
    double mb = tsim_prv(tsim_pool_named(&r, "chat"), "mean_batch");
    cr_assert(mb > 1.5 && mb < 50, "mean batch %g", mb);
    const cls_view s = cls(&r, "short"), l = cls(&r, "long");
    double ratio = l.cost_per_1k / s.cost_per_1k;
    cr_assert(ratio > 2 && ratio < 299.0 / 99.0 * 1.01, "ratio %g (mean batch %g)", ratio, mb);
    double cost, api;
    sums(&r, &cost, &api);
    cr_assert_float_eq(cost, (double) tsim_n(&r, "served") * sys(&r, "cost_per_1k_requests"), 1e-9 * cost);
    sim_result_free(&r);
}

/* A class sent only to the API pays exactly its tokens x prices per request
 * (constant token counts: 0.8 x 0.004 + 0.2 x 0.02 = $0.0072), none of the
 * priced generic pool that serves the other class. */
Test(classcost, api_class_pays_its_tokens)
{
    const char *text =
        "[sim]\nrequests = 1000\n[workload]\nrate = 10\nprompt_tokens = const(800)\noutput_tokens = const(200)\n"
        "[class ext]\nshare = 0.5\ntarget = api\n"
        "[class local]\nshare = 0.5\ntarget = cpu\n"
        "[pool api]\nkind = api\nttft_ms = const(200)\ntpot_ms = const(10)\n"
        "price_in_per_1k = 0.004\nprice_out_per_1k = 0.02\n"
        "[pool cpu]\nservers = 2\nservice_ms = exp(mean=50)\nusd_per_hour = 10\n";
    sim_result r;
    run(text, &r);
    const cls_view e = cls(&r, "ext"), l = cls(&r, "local");
    cr_assert_gt(e.served, 300);
    cr_assert_float_eq(e.api_usd, 0.0072 * e.served, 1e-12 * e.api_usd);
    cr_assert_float_eq(e.cost_per_1k, 7.2, 1e-12);
    cr_assert_eq(l.api_usd, 0);
    cr_assert_gt(l.cost_per_1k, 0);
    double cost, api;
    sums(&r, &cost, &api);
    cr_assert_float_eq(cost, (double) tsim_n(&r, "served") * sys(&r, "cost_per_1k_requests"), 1e-9 * cost);
    sim_result_free(&r);
}

/* The report: classes.NAME.cost_per_1k_requests rows in scope class:NAME (and
 * api_usd with gateway kinds); null (NAN) for a saturated run, like the
 * overall figure. */
Test(classcost, report_rows)
{
    const char *text =
        "[sim]\nrequests = 300\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n"
        "[class a]\ntarget = pa\n[class b]\ntarget = pa\n"
        "[pool pa]\nservice_ms = const(10)\nusd_per_hour = 3.6\n";
    sim_result r;
    run(text, &r);
    report rep;
    cr_assert_eq(report_flatten(&r, 0, &rep), 0);
    double a = report_get(&rep, REPORT_CLASS_SCOPE "a", "cost_per_1k_requests", "value");
    cr_assert_float_eq(a, cls(&r, "a").cost_per_1k, 1e-15);
    cr_assert_float_eq(a, 1000 * 3.6 * tsim_v(&r, "window_s") / 3600 / 300,
                       1e-12);   /* same service time: same share per request */
    /* No gateway kind: no api_usd rows. */
    cr_assert(isnan(report_get(&rep, REPORT_CLASS_SCOPE "b", "api_usd", "value")));
    cr_assert(!isnan(report_get(&rep, "", "cost_per_1k_requests", "value")));
    report_free(&rep);
    for (size_t i = 0; i < r.rows.n; i++)   /* the same run, called saturated */
        if (!strcmp(r.rows.row[i].scope, "") && !strcmp(r.rows.row[i].metric, "saturated")) r.rows.row[i].value = 1;
    cr_assert_eq(report_flatten(&r, 0, &rep), 0);
    cr_assert(isnan(report_get(&rep, REPORT_CLASS_SCOPE "a", "cost_per_1k_requests", "value")));
    report_free(&rep);
    sim_result_free(&r);
}

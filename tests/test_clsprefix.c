/* test_clsprefix.c -- Criterion tests of the per-class prefix-cache hit rates
 * (run/col_classes.c, the class row `prefix_hit_rate`; docs/metrics.md): a
 * class whose prompts open with a shared system prompt finds it cached at the
 * rate counted by hand, a class without one finds nothing, the pool's own rate
 * is the classes' token-weighted mean, and without a prefix cache no class has
 * the row; the review page's classes table shows it.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "tcli.h"
#include "tsim.h"
#include "latsim/report.h"

/* Two classes through one 8B pool with a prefix cache, one request every 2 s
 * (each done long before the next: nothing in flight shares blocks).  Every
 * prompt is 900 drawn tokens; class "sys" puts a 2100-token system prompt
 * before them (3000 tokens), class "plain" none.  Synthetic prompts are keyed
 * per 16-token KV block: the system prompt's 131 whole blocks (2096 tokens)
 * are shared by the class, every other block is a request's own.  The warm-up
 * (20 requests, each class's with probability 1/2) caches the system prompt,
 * so every measured "sys" request finds 2096 of its 3000 tokens, every "plain"
 * one none. */
#define TWO(pc) "[sim]\nrequests = 400\nwarmup = 20\n[workload]\narrival = constant\nrate = 0.5\n" \
                "prompt_tokens = const(900)\noutput_tokens = const(50)\ntarget = chat\n" \
                "[class sys]\nshare = 0.5\nsystem_prompt_tokens = 2100\n[class plain]\nshare = 0.5\n" \
                "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nprefix_cache = " pc "\n"

/* A temporary directory and database for the CLI test. */
static void clsprefix_setup(void) { tcli_setup("/tmp/latsim_clsprefix_", "runs.db"); }

Test(clsprefix, shared_system_prompt_class_and_weighted_mean)
{
    sim_result r;
    tsim_run("two.ini", TWO("yes"), 5, &r);
    cr_assert_eq(tsim_nclasses(&r), 2);
    cr_assert_str_eq(tsim_class_name(&r, 0), "sys");
    double nsys = tsim_class(&r, "sys", "requests"), nplain = tsim_class(&r, "plain", "requests");
    cr_assert_gt(nsys, 100, "%g", nsys);
    cr_assert_gt(nplain, 100, "%g", nplain);
    /* By hand: 2096 of 3000 for each "sys" request, 0 for "plain" (2096 n / 3000 n
     * rounds as 2096 / 3000 does: exactly equal). */
    double rsys = tsim_class(&r, "sys", "prefix_hit_rate"), rplain = tsim_class(&r, "plain", "prefix_hit_rate");
    cr_expect_eq(rsys, 2096.0 / 3000.0, "%.17g", rsys);
    cr_expect_eq(rplain, 0);
    /* The pool's rate is the classes' token-weighted mean, the tokens counted
     * being the measured requests' whole prompts (3000 and 900 each). */
    double pool = tsim_pv(&r, 0, "prefix_hit_rate");
    double psys = 3000.0 * nsys, pplain = 900.0 * nplain;
    double mean = (rsys * psys + rplain * pplain) / (psys + pplain);
    cr_expect(fabs(pool - mean) < 1e-12, "pool %.15g, classes' mean %.15g", pool, mean);
    double hand = 2096.0 * nsys / (3000.0 * nsys + 900.0 * nplain);
    cr_expect(fabs(pool - hand) < 1e-12, "pool %.15g, by hand %.15g", pool, hand);
    /* The class rows as reported (JSON, the store, the review page). */
    report rep;
    cr_assert_eq(report_flatten(&r, -1, &rep), 0);
    cr_expect_float_eq(report_get(&rep, "class:sys", "prefix_hit_rate", "value"), 2096.0 / 3000.0, 1e-12);
    cr_expect_eq(report_get(&rep, "class:plain", "prefix_hit_rate", "value"), 0);
    report_free(&rep);
    sim_result_free(&r);
}

/* Without a prefix cache nothing is counted and no class row is reported. */
Test(clsprefix, no_prefix_cache_no_row)
{
    sim_result r;
    tsim_run("two.ini", TWO("no"), 5, &r);
    cr_assert_eq(tsim_nclasses(&r), 2);
    for (int k = 0; k < 2; k++)
        cr_expect(isnan(tsim_class(&r, tsim_class_name(&r, k), "prefix_hit_rate")), "class %d: no prompt counted", k);
    report rep;
    cr_assert_eq(report_flatten(&r, -1, &rep), 0);
    cr_expect(isnan(report_get(&rep, "class:sys", "prefix_hit_rate", "value")));
    cr_expect(!isnan(report_get(&rep, "class:sys", "requests", "value")), "the class rows are there");
    report_free(&rep);
    sim_result_free(&r);
}

/* The review page: the classes table has a `prefix hit rate %` column, with
 * each class's stored rate (4 significant digits: 69.87 for 2096 / 3000). */
Test(clsprefix, review_page_column, .init = clsprefix_setup, .fini = tcli_teardown, .timeout = 300)
{
    char ini[256], html[256];
    write_file("two.ini", TWO("yes"), ini, sizeof ini);
    result r = run_db(180, "run", ini, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    snprintf(html, sizeof html, "%s/classes.html", dir);
    r = run_db(180, "report", "1", "--html", html, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char *page = slurp_or_fail(html, NULL);
    const char *t = strstr(page, "<table class=\"classes\">");
    cr_assert_not_null(t, "no classes table");
    const char *end = strstr(t, "</table>");
    cr_assert_not_null(end);
    cr_expect(strstr(t, "<th>prefix hit rate %</th>") && strstr(t, "<th>prefix hit rate %</th>") < end, "no column");
    const char *sys = strstr(t, "<tr><th>sys</th>");
    cr_assert(sys && sys < end, "no row of sys");
    const char *eol = strstr(sys, "</tr>");
    const char *v = strstr(sys, "<td>69.87</td>");
    cr_expect(v && v < eol, "sys row without 69.87: %.*s", (int) (eol - sys), sys);
    free(page);
}

/* test_pctl.c -- percentiles reported apart: a result cache's hits and misses. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "tsim.h"

/* One intent, one request a second, answers kept 2.5 s: the first request of
 * each 3 s misses and stores the answer, the next two hit, so the hit rate is
 * 2/3 exactly.  A hit takes the 2 ms lookup (its whole answer: TTFT = E2E); a
 * miss takes the 3 ms lookup plus the API's 50 ms to the first token and 9 x 5
 * ms for the rest: TTFT 53 ms, E2E 98 ms.  Every percentile of each group is
 * that one value (a histogram quantile lies within the group's min and max);
 * the overall TTFT p50 is a hit's 2 ms, which hid the misses' 53 ms. */
Test(pctl, result_cache_hits_and_misses_apart)
{
    const char *text =
        "[sim]\nrequests = 3000\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n"
        "prompt_tokens = const(100)\noutput_tokens = const(10)\ntarget = cache\n"
        "[pool cache]\nkind = result_cache\nintents = 1\nhit_ms = const(2)\nmiss_ms = const(3)\n"
        "cache_ttl_s = 2.5\nnext = gpt\n"
        "[pool gpt]\nkind = api\nttft_ms = const(50)\ntpot_ms = const(5)\n";
    sim_result res;
    tsim_run("/tmp/test_pctl.ini", text, 1, &res);
    tsim_pr c = tsim_pool_at(&res, 0);
    cr_assert_str_eq(c.name, "cache");
    cr_assert_float_eq(tsim_prv(c, "hit_rate"), 2.0 / 3.0, 1e-12);
    static const char *const P[] = { "p50", "p90", "p99" };
    for (int j = 0; j < 3; j++) {
        char n[64];
        snprintf(n, sizeof n, "hit_e2e_ms_%s", P[j]);
        cr_assert_float_eq(tsim_prv(c, n), 2, 1e-9, "%s = %g", n, tsim_prv(c, n));
        snprintf(n, sizeof n, "hit_ttft_ms_%s", P[j]);
        cr_assert_float_eq(tsim_prv(c, n), 2, 1e-9, "%s = %g", n, tsim_prv(c, n));
        snprintf(n, sizeof n, "miss_e2e_ms_%s", P[j]);
        cr_assert_float_eq(tsim_prv(c, n), 98, 1e-9, "%s = %g", n, tsim_prv(c, n));
        snprintf(n, sizeof n, "miss_ttft_ms_%s", P[j]);
        cr_assert_float_eq(tsim_prv(c, n), 53, 1e-9, "%s = %g", n, tsim_prv(c, n));
    }
    /* the overall figures stay as they were: every request, hits and misses together */
    cr_assert_float_eq(tsim_sys(&res, "ttft")->mean, (2 * 2 + 53) / 3.0, 1e-6, "ttft mean %g",
                       tsim_sys(&res, "ttft")->mean);
    cr_assert_float_eq(tsim_sys(&res, "e2e")->mean, (2 * 2 + 98) / 3.0, 1e-6, "e2e mean %g",
                       tsim_sys(&res, "e2e")->mean);
    sim_result_free(&res);
}

/* A cache in front of a model that emits no tokens (a generic pool) reports no
 * TTFT rows, and an E2E split whose percentiles are each group's. */
Test(pctl, result_cache_without_tokens_has_no_ttft_split)
{
    const char *text =
        "[sim]\nrequests = 300\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\ntarget = cache\n"
        "[pool cache]\nkind = result_cache\nintents = 1\nhit_ms = const(2)\nmiss_ms = const(3)\n"
        "cache_ttl_s = 2.5\nnext = work\n[pool work]\nservice_ms = const(10)\n";
    sim_result res;
    tsim_run("/tmp/test_pctl.ini", text, 1, &res);
    tsim_pr c = tsim_pool_at(&res, 0);
    cr_assert(isnan(tsim_prv(c, "hit_ttft_ms_p50")));
    cr_assert(isnan(tsim_prv(c, "miss_ttft_ms_p99")));
    cr_assert_float_eq(tsim_prv(c, "hit_e2e_ms_p99"), 2, 1e-9);
    cr_assert_float_eq(tsim_prv(c, "miss_e2e_ms_p50"), 13, 1e-9);
    sim_result_free(&res);
}

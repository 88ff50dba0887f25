/* test_clscache.c -- Criterion tests of the per-class result-cache hit rates
 * (run/col_classes.c; docs/metrics.md): each class's lookups, hits and false
 * hits add up to the cache pool's own counts, and a class whose questions
 * repeat more hits more.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "tsim.h"

/* Two classes through one result cache: "faq" asks 20 intents, "open" 20000
 * (Zipf-popular), so faq's answers are cached far more often. */
#define TWO "[sim]\nrequests = 6000\nwarmup = 1000\n[workload]\nrate = 20\n" \
            "[class faq]\nshare = 0.5\nintents = 20\n[class open]\nshare = 0.5\nintents = 20000\n" \
            "[pool cache]\nkind = result_cache\ncapacity = 100000\nfalse_hit_rate = 0.02\nnext = backend\n" \
            "[pool backend]\nservers = 64\nservice_ms = exp(mean=100)\n"

Test(clscache, classes_add_up_to_the_pool)
{
    sim_result r;
    tsim_run("two.ini", TWO, 3, &r);
    cr_assert_eq(tsim_nclasses(&r), 2);
    tsim_pr c = tsim_pool_at(&r, 0);
    double hits = tsim_prv(c, "hits"), fh = tsim_prv(c, "false_hits"), rate = tsim_prv(c, "hit_rate");
    /* Every measured request looks up once: a class's hits (false ones
     * included) are its cache_hit_rate x its requests, a whole number. */
    double hf = 0, f = 0, lookups = 0, share[2];
    for (int k = 0; k < 2; k++) {
        const char *name = tsim_class_name(&r, k);
        double n = tsim_class(&r, name, "requests"), hr = tsim_class(&r, name, "cache_hit_rate");
        cr_assert_gt(n, 0);
        double found = hr * n;
        cr_expect(fabs(found - round(found)) < 1e-6, "class %s: rate %.17g x %g requests is no count", name, hr, n);
        hf += round(found);
        f += tsim_class(&r, name, "cache_false_hits");
        lookups += n;
        share[k] = hr;
    }
    cr_expect_eq(hf, hits + fh);
    cr_expect_eq(f, fh);
    cr_expect(fabs(hf / lookups - rate) < 1e-12, "pool %g, classes %g", rate, hf / lookups);
    double faq = share[0], open = share[1];
    cr_expect(faq > 0.95 && open < faq, "faq %g, open %g", faq, open);
    sim_result_free(&r);
}

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
    cr_assert_eq(r.nclasses, 2);
    const pool_result *c = &r.pools[0];
    double hits = pool_metric_get(c, "hits"), fh = pool_metric_get(c, "false_hits"), rate = pool_metric_get(c, "hit_rate");
    uint64_t lookups = 0, h = 0, f = 0;
    for (int k = 0; k < r.nclasses; k++) {
        lookups += r.classes[k].cache_lookups;
        h += r.classes[k].cache_hits;
        f += r.classes[k].cache_false_hits;
        cr_expect_eq(r.classes[k].cache_lookups, r.classes[k].requests, "class %d: every measured request looks up once", k);
    }
    cr_expect_eq((double) h, hits);
    cr_expect_eq((double) f, fh);
    cr_expect(fabs((double) (h + f) / (double) lookups - rate) < 1e-12, "pool %g, classes %g", rate, (double) (h + f) / lookups);
    double faq = (double) (r.classes[0].cache_hits + r.classes[0].cache_false_hits) / (double) r.classes[0].cache_lookups;
    double open = (double) (r.classes[1].cache_hits + r.classes[1].cache_false_hits) / (double) r.classes[1].cache_lookups;
    cr_expect(faq > 0.95 && open < faq, "faq %g, open %g", faq, open);
    sim_result_free(&r);
}

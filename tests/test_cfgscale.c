/* test_cfgscale.c -- scenario loading stays linear in the number of sections
 * (sim/core/config.c's hash index, scenario.c's pool lookup by section).
 *
 * Without timing anything: cfg_compares() counts the string comparisons that
 * lookups make.  A linear scan makes about N^2/2 of them for N pools (each
 * pool's keys looked up among all entries: ~10^10 here); the hash index about
 * 1.5 per lookup, and building a pool looks up a few dozen keys (kind, next,
 * the fleet keys...), so 200 comparisons per pool is a bound a quadratic
 * loader exceeds by a factor > 100 while the table passes with margin.
 * The error paths keep their messages and line numbers.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run/scenario.h"
#include "tsim.h"

/* A chain of N generic pools p0 -> p1 -> ... (each `next` the following). */
static char *chain(int n)
{
    size_t cap = (size_t) n * 80 + 256, len = 0;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    len += (size_t) snprintf(t + len, cap - len, "[sim]\nrequests = 10\n\n[workload]\nrate = 10\n\n");
    for (int i = 0; i < n; i++) {
        len += (size_t) snprintf(t + len, cap - len, "[pool p%d]\nservice_ms = exp(mean=1)\n", i);
        if (i + 1 < n) len += (size_t) snprintf(t + len, cap - len, "next = p%d\n", i + 1);
    }
    return t;
}

Test(cfgscale, chain_of_100000_pools_loads_in_linear_lookups)
{
    const int n = 100000;
    char *t = chain(n);
    scenario s;
    char err[512];
    int rc = scenario_load_text(&s, "chain.ini", t, NULL, 0, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(s.npools, n);
    cr_assert_eq(s.pools[0].nnext, 1);
    cr_assert_eq(s.pools[0].next[0], 1);
    cr_assert_eq(s.pools[n - 2].next[0], n - 1);
    cr_assert_eq(s.pools[n - 1].nnext, 0);
    unsigned long long c = cfg_compares(&s.raw);
    cr_assert_lt(c, 200ULL * (unsigned long long) n, "%llu string comparisons for %d pools", c, n);
    scenario_free(&s);
    free(t);
}

Test(cfgscale, errors_keep_their_lines)
{
    char err[512];
    const char *dup = "[workload]\nrate = 1\n[pool a]\nservice_ms = exp(mean=1)\n[pool b]\nservice_ms = exp(mean=1)\n[pool a]\n";
    cr_assert_eq(tsim_load_error("d.ini", dup, err, sizeof err), -1);
    cr_assert_str_eq(err, "d.ini:7: [pool a]: section given twice (first on line 3)");
    const char *key = "[workload]\nrate = 1\n[pool a]\nservice_ms = exp(mean=1)\nnext = b\nservice_ms = exp(mean=2)\n";
    cr_assert_eq(tsim_load_error("k.ini", key, err, sizeof err), -1);
    cr_assert_str_eq(err, "k.ini:6: [pool a] service_ms: key given twice (first on line 4)");
    const char *nop = "[workload]\nrate = 1\n[pool a]\nservice_ms = exp(mean=1)\nnext = zz\n";
    cr_assert_eq(tsim_load_error("n.ini", nop, err, sizeof err), -1);
    cr_assert_str_eq(err, "n.ini:5: [pool a] next: no pool named 'zz'");
    const char *cyc = "[workload]\nrate = 1\n[pool a]\nservice_ms = exp(mean=1)\nnext = b\n"
                      "[pool b]\nservice_ms = exp(mean=1)\nnext = a\n";
    cr_assert_eq(tsim_load_error("c.ini", cyc, err, sizeof err), -1);
    cr_assert_str_eq(err, "c.ini:8: [pool b] next: pools form a cycle");
}

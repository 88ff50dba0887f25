/* test_breakdown.c -- tests of sim/run/breakdown.c: shares by hand, the slowest
 * requests' shares, and bin edges. */
#include <criterion/criterion.h>

#include <math.h>

#include "run/breakdown.h"

Test(breakdown, shares_by_hand)
{
    bd_acc *b = bd_new();
    cr_assert_not_null(b);
    double a[BD_N] = {10, 20, 60, 10};          /* e2e 100 */
    double c[BD_N] = {0, 0, 1000, 0};           /* e2e 1000: all service */
    bd_add(b, 100, a);
    bd_add(b, 1000, c);
    double s[BD_N];
    cr_assert_eq(bd_shares(b, 0, s), 2);
    /* The share of the mean: each component's mean (5, 10, 530, 5 ms) over the
     * mean e2e (550 ms), not the mean of the per-request ratios (0.05, 0.1,
     * 0.8, 0.05), so that share x mean e2e is the component's mean. */
    cr_assert_float_eq(s[BD_NETWORK], 10.0 / 1100, 1e-12);
    cr_assert_float_eq(s[BD_QUEUE], 20.0 / 1100, 1e-12);
    cr_assert_float_eq(s[BD_SERVICE], 1060.0 / 1100, 1e-12);
    cr_assert_float_eq(s[BD_OVERHEAD], 10.0 / 1100, 1e-12);
    cr_assert_float_eq(s[BD_OVERHEAD] * 550, 5.0, 1e-9);
    /* only the slow one */
    cr_assert_eq(bd_shares(b, 999, s), 1);
    cr_assert_float_eq(s[BD_SERVICE], 1.0, 1e-12);
    cr_assert_eq(bd_shares(b, 2000, s), 0);
    cr_assert_float_eq(s[BD_SERVICE], 0.0, 0);
    /* zero e2e counts nowhere */
    double z[BD_N] = {0, 0, 0, 0};
    bd_add(b, 0, z);
    cr_assert_eq(bd_shares(b, 0, s), 2);
    cr_assert_str_eq(bd_name(BD_QUEUE), "queue");
    bd_free(b);
}

/* A threshold includes its own bin: values within 1/64 of an octave below it. */
Test(breakdown, threshold_bins_are_at_most_1_6_percent_wide)
{
    bd_acc *b = bd_new();
    double c[BD_N] = {0, 1, 0, 0};
    for (double v = 1; v < 1e6; v *= 1.003) {
        c[BD_QUEUE] = v;
        bd_add(b, v, c);
    }
    double s[BD_N];
    for (double from = 2; from < 5e5; from *= 3.7) {
        uint64_t n = bd_shares(b, from, s);
        uint64_t at_least = 0, within = 0;
        for (double v = 1; v < 1e6; v *= 1.003) {
            at_least += v >= from;
            within += v >= from / (1 + 1.0 / 64);
        }
        cr_assert_geq(n, at_least, "from %g", from);
        cr_assert_leq(n, within, "from %g", from);
        cr_assert_float_eq(s[BD_QUEUE], 1.0, 1e-12);
    }
    bd_free(b);
}

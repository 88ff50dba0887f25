/* test_check.c -- how often the sanity checks run (sim/engine/check.h):
 * LATSIM_CHECK off, at every step, or at every Nth; a bad value is "always",
 * never "off". */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "engine/check.h"

/* The period LATSIM_CHECK=V gives (NULL: unset). */
static int period_of(const char *v)
{
    if (v) setenv("LATSIM_CHECK", v, 1);
    else unsetenv("LATSIM_CHECK");
    return check_period();
}

Test(check, the_period_read_from_latsim_check)
{
#ifdef LATSIM_DEBUG
    cr_expect_eq(period_of(NULL), 1, "a DEBUG build checks always");
#else
    cr_expect_eq(period_of(NULL), 0);
    cr_expect_eq(period_of(""), 0);
    cr_expect_eq(period_of("0"), 0);
    cr_expect_eq(period_of("1"), 1);
    cr_expect_eq(period_of("16"), 16);
    cr_expect_eq(period_of("1000000"), 1000000);
    /* Not a period: the checks stay on at every step. */
    cr_expect_eq(period_of("yes"), 1);
    cr_expect_eq(period_of("16x"), 1);
    cr_expect_eq(period_of("-3"), 1);
    cr_expect_eq(period_of("00"), 1, "only a lone 0 turns them off");
    cr_expect_eq(period_of("1000001"), 1);
#endif
}

/* Period N: step or request k is checked when N divides it (k = 0: the first), so
 * a run of any length is checked at least once. */
Test(check, every_nth_step_from_the_first)
{
    int n = 0;
    for (int64_t k = 0; k < 160; k++) n += check_due(16, k);
    cr_expect_eq(n, 10);
    cr_expect(check_due(16, 0) && check_due(16, 32) && !check_due(16, 31));
    for (int64_t k = 0; k < 100; k++) {
        cr_expect(check_due(1, k));
        cr_expect(!check_due(0, k));
    }
}

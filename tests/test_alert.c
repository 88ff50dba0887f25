/* test_alert.c -- tests of sim/report/alert.c: the seeds' rule (P99 above its SLO for
 * K consecutive intervals) on synthetic series built to cross it at a known
 * interval, and not to. */
#include <criterion/criterion.h>

#include <math.h>

#include "report/alert.h"

#define SLO 800.0   /* ms, the seeds' real-time chat P99 */

/* A series of N intervals at 500 ms (meeting the SLO) with [FROM, FROM+LEN) at
 * 900 ms (above it). */
static void series(double *v, size_t n, size_t from, size_t len)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (i >= from && i < from + len) ? 900.0 : 500.0;
}

Test(alert, fires_at_the_kth_interval_and_resolves)
{
    double v[60];
    alert a[4];
    /* Above from interval 10 to 29 (20 intervals): fires at the end of interval
     * 10 + 15 - 1 = 24, resolves at the end of 29. */
    series(v, 60, 10, 20);
    cr_assert_eq(alert_scan(v, 60, SLO, ALERT_DEFAULT_K, a, 4), 1);
    cr_assert_eq(a[0].first, 10);
    cr_assert_eq(a[0].fired, 24);
    cr_assert_eq(a[0].last, 29);
    cr_assert_eq(a[0].open, 0);

    /* The streaming rule says the same, interval by interval. */
    alert_state st;
    cr_assert_eq(alert_init(&st, SLO, ALERT_DEFAULT_K), 0);
    for (size_t i = 0; i < 60; i++) {
        alert_event ev = alert_step(&st, v[i]);
        alert_event want = i == 24 ? ALERT_FIRED : i == 30 ? ALERT_RESOLVED : ALERT_NONE;
        cr_assert_eq(ev, want, "interval %zu: event %d, expected %d", i, ev, want);
    }
}

Test(alert, k_minus_one_intervals_above_never_fire)
{
    double v[60];
    /* 14 intervals above, twice, separated by one interval at the SLO exactly
     * (equal meets it) and one without data: no alert. */
    series(v, 60, 5, 14);
    for (size_t i = 20; i < 34; i++)
        v[i] = 900.0;
    v[19] = SLO;
    cr_assert_eq(alert_scan(v, 60, SLO, 15, NULL, 0), 0);
    v[19] = NAN;
    cr_assert_eq(alert_scan(v, 60, SLO, 15, NULL, 0), 0);
    /* One more interval above joins the runs: 14 + 1 + 14 = 29 >= 15 fires at
     * interval 5 + 14 = 19. */
    v[19] = 800.001;
    alert a;
    cr_assert_eq(alert_scan(v, 60, SLO, 15, &a, 1), 1);
    cr_assert_eq(a.first, 5);
    cr_assert_eq(a.fired, 19);
    cr_assert_eq(a.last, 33);
}

Test(alert, open_at_the_end_and_several_alerts)
{
    double v[40];
    alert a[3];
    /* K = 3: runs of 3 at [2,5), 2 at [8,10) (no alert), 5 at [20,25), and 4 up
     * to the end at [36,40). */
    series(v, 40, 2, 3);
    for (size_t i = 8; i < 10; i++) v[i] = 900;
    for (size_t i = 20; i < 25; i++) v[i] = 900;
    for (size_t i = 36; i < 40; i++) v[i] = 900;
    cr_assert_eq(alert_scan(v, 40, SLO, 3, a, 3), 3);
    cr_assert_eq(a[0].fired, 4);
    cr_assert_eq(a[0].last, 4);
    cr_assert_eq(a[1].first, 20);
    cr_assert_eq(a[1].fired, 22);
    cr_assert_eq(a[1].last, 24);
    cr_assert_eq(a[2].fired, 38);
    cr_assert_eq(a[2].last, 39);
    cr_assert_eq(a[2].open, 1);
    /* Fewer slots than alerts: the count is still right, the slots hold the first ones. */
    alert one;
    cr_assert_eq(alert_scan(v, 40, SLO, 3, &one, 1), 3);
    cr_assert_eq(one.first, 2);
    /* K = 1 fires on every run. */
    cr_assert_eq(alert_scan(v, 40, SLO, 1, NULL, 0), 4);
}

Test(alert, bad_rules)
{
    double v[1] = {1};
    alert_state st;
    cr_assert_eq(alert_init(&st, SLO, 0), -1);
    cr_assert_eq(alert_init(&st, NAN, 3), -1);
    cr_assert_eq(alert_scan(v, 1, SLO, 0, NULL, 0), (size_t) -1);
}

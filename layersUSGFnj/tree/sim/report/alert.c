/* alert.c -- the seeds' SLO alert rule (see alert.h): a run of K consecutive
 * intervals above the threshold fires an alert, which resolves at the end of
 * the run. */
#include "report/alert.h"

#include <math.h>

int alert_init(alert_state *a, double threshold, size_t k)
{
    if (k == 0 || !isfinite(threshold))
        return -1;
    *a = (alert_state) { .threshold = threshold, .k = k };
    return 0;
}

alert_event alert_step(alert_state *a, double value)
{
    size_t i = a->index++;
    if (value > a->threshold) {          /* NAN compares false: not above */
        if (a->run++ == 0)
            a->cur.first = i;
        a->cur.last = i;
        if (a->run == a->k) {
            a->firing = 1;
            a->cur.fired = i;
            a->cur.open = 1;
            return ALERT_FIRED;
        }
        return ALERT_NONE;
    }
    a->run = 0;
    if (a->firing) {
        a->firing = 0;
        a->cur.open = 0;
        return ALERT_RESOLVED;
    }
    return ALERT_NONE;
}

size_t alert_scan(const double *v, size_t n, double threshold, size_t k, alert *out, size_t max)
{
    alert_state a;
    size_t count = 0;
    if (alert_init(&a, threshold, k) != 0)
        return (size_t) -1;
    for (size_t i = 0; i < n; i++) {
        alert_event ev = alert_step(&a, v[i]);
        if (ev == ALERT_FIRED)
            count++;
        else if (ev == ALERT_RESOLVED && count <= max && out)
            out[count - 1] = a.cur;
    }
    if (a.firing && count <= max && out)
        out[count - 1] = a.cur;    /* open = 1: firing at the end */
    return count;
}

/* autoscale.c -- the autoscaler state machine (see autoscale.h): the desired
 * replica count from the load, scale-up with a provisioning delay, scale-down
 * after a cooldown, and the replica-seconds integrals behind the cost. */
#include "fleet/autoscale.h"
#include "engine/errmsg.h"
#include "engine/simtime.h"

#include <math.h>
#include <string.h>

#define AS_MAX_REPLICAS 100000   /* a sanity bound on max_replicas */

static const char *const METRICS[] = {"queue", "utilization", "kv"};

int as_metric_parse(const char *s, as_metric *m)
{
    for (size_t i = 0; i < sizeof METRICS / sizeof METRICS[0]; i++)
        if (strcmp(s, METRICS[i]) == 0) {
            *m = (as_metric) i;
            return 0;
        }
    return -1;
}

const char *as_metric_name(as_metric m)
{
    return (size_t) m < sizeof METRICS / sizeof METRICS[0] ? METRICS[m] : "?";
}

int as_check(const as_cfg *c, const char **key, char *err, size_t errlen)
{
    const char *k = NULL;
    if (c->min_replicas < 0) {
        k = "min_replicas";
        errmsg_set(err, errlen, "must be >= 0, got %d", c->min_replicas);
    } else if (c->max_replicas < 1 || c->max_replicas > AS_MAX_REPLICAS) {
        k = "max_replicas";
        errmsg_set(err, errlen, "must be between 1 and %d, got %d", AS_MAX_REPLICAS,
                   c->max_replicas);
    } else if (c->min_replicas > c->max_replicas) {
        k = "min_replicas";
        errmsg_set(err, errlen, "min_replicas %d is above max_replicas %d", c->min_replicas,
                   c->max_replicas);
    } else if (!(c->target > 0) || !isfinite(c->target) ||
               (c->metric != AS_QUEUE && c->target > 1)) {
        k = "autoscale_target";
        if (c->metric == AS_QUEUE)
            errmsg_set(err, errlen, "must be > 0 requests per replica, got %g", c->target);
        else
            errmsg_set(err, errlen, "%s target must be a share in (0, 1], got %g",
                       as_metric_name(c->metric), c->target);
    } else if (!(c->interval_s > 0) || !isfinite(c->interval_s)) {
        k = "autoscale_interval_s";
        errmsg_set(err, errlen, "must be > 0, got %g", c->interval_s);
    } else if (c->interval_s < SIMTIME_RESOLUTION_S) {
        k = "autoscale_interval_s";
        errmsg_set(err, errlen, "%g s is below the clock's resolution (1 ns): the evaluations would repeat "
                   "in the same instant, without end", c->interval_s);
    } else if (!(c->provision_s >= 0) || !isfinite(c->provision_s)) {
        k = "provision_s";
        errmsg_set(err, errlen, "must be >= 0 (a delay), got %g", c->provision_s);
    } else if (!(c->cooldown_s >= 0) || !isfinite(c->cooldown_s)) {
        k = "cooldown_s";
        errmsg_set(err, errlen, "must be >= 0 (a delay), got %g", c->cooldown_s);
    }
    if (key)
        *key = k;
    return k ? -1 : 0;
}

void as_init(autoscaler *a, const as_cfg *c, int initial, double t0_s)
{
    memset(a, 0, sizeof *a);
    a->cfg = *c;
    if (initial < c->min_replicas) initial = c->min_replicas;
    if (initial > c->max_replicas) initial = c->max_replicas;
    a->up = initial;
    a->last_change_s = -INFINITY;
    a->t_s = t0_s;
}

void as_advance(autoscaler *a, double t_s)
{
    if (t_s <= a->t_s)
        return;
    double dt = t_s - a->t_s;
    a->running_area += (double) (a->starting + a->up + a->draining) * dt;
    a->up_area += (double) a->up * dt;
    a->t_s = t_s;
}

as_decision as_evaluate(autoscaler *a, double t_s, double load)
{
    as_decision d = {0, 0, 0};
    as_advance(a, t_s);
    if (!(load > 0))
        load = 0;
    /* A whole number of replicas: shrink the ratio by a few ulps first, so that
     * a load of exactly 3 x target asks for 3, not 4. */
    double want = ceil(load / a->cfg.target * (1 - 1e-12));
    if (load > 0 && want < 1)
        want = 1;
    if (want < a->cfg.min_replicas) want = a->cfg.min_replicas;
    if (want > a->cfg.max_replicas) want = a->cfg.max_replicas;
    d.desired = (int) want;
    int have = a->up + a->starting;
    if (d.desired > have) {
        d.start = d.desired - have;
        a->starting += d.start;
        a->last_change_s = t_s;
        a->ups++;
    } else if (d.desired < a->up && a->starting == 0 &&
               t_s - a->last_change_s >= a->cfg.cooldown_s) {
        d.stop = a->up - d.desired;
        a->up -= d.stop;
        a->draining += d.stop;
        a->last_change_s = t_s;
        a->downs++;
    }
    return d;
}

void as_ready(autoscaler *a, double t_s)
{
    as_advance(a, t_s);
    if (a->starting > 0) {
        a->starting--;
        a->up++;
    }
}

void as_released(autoscaler *a, double t_s)
{
    as_advance(a, t_s);
    if (a->draining > 0)
        a->draining--;
}

double as_running_seconds(const autoscaler *a)
{
    return a->running_area;
}

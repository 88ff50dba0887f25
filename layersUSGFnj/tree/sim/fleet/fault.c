/* fault.c -- failure, repair, slow-node and pause processes of replicas (see
 * fault.h): validation, draws from a replica's own stream, and the choice of
 * slow replicas. */
#include "fleet/fault.h"
#include "engine/errmsg.h"
#include "engine/simtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

int fault_policy_parse(const char *s, fault_policy *p)
{
    if (strcmp(s, "retry") == 0) { *p = FAULT_RETRY; return 0; }
    if (strcmp(s, "fail") == 0) { *p = FAULT_FAIL; return 0; }
    return -1;
}

const char *fault_policy_name(fault_policy p)
{
    return p == FAULT_RETRY ? "retry" : "fail";
}

int fault_check(const fault_cfg *c, const char **key, char *err, size_t errlen)
{
    const char *k = NULL;
    if (c->failures && !(c->fail_after_s.mean > 0)) {
        k = "fail_after_s";
        errmsg_set(err, errlen, "mean time to failure must be > 0, got %g "
                   "(a replica would fail again at once)", c->fail_after_s.mean);
    } else if (c->failures && c->fail_after_s.mean < SIMTIME_RESOLUTION_S) {
        k = "fail_after_s";
        errmsg_set(err, errlen, "mean time to failure %g s is below the clock's resolution (1 ns): a replica "
                   "would fail again in the same instant, without end", c->fail_after_s.mean);
    } else if (!(c->slow_fraction >= 0 && c->slow_fraction <= 1)) {
        k = "slow_fraction";
        errmsg_set(err, errlen, "must be a share in [0, 1], got %g", c->slow_fraction);
    } else if (!(c->slow_factor >= 1) || !isfinite(c->slow_factor)) {
        k = "slow_factor";
        errmsg_set(err, errlen, "must be >= 1 (a slow-down), got %g", c->slow_factor);
    } else if (c->pauses && !(c->pause_every_s.mean > 0)) {
        k = "pause_every_s";
        errmsg_set(err, errlen, "mean time between pauses must be > 0, got %g",
                   c->pause_every_s.mean);
    } else if (c->pauses && c->pause_every_s.mean < SIMTIME_RESOLUTION_S) {
        k = "pause_every_s";
        errmsg_set(err, errlen, "mean time between pauses %g s is below the clock's resolution (1 ns): a replica "
                   "would pause again in the same instant, without end", c->pause_every_s.mean);
    } else if (c->pauses && !(c->pause_s.mean > 0)) {
        k = "pause_s";
        errmsg_set(err, errlen, "mean pause must be > 0, got %g", c->pause_s.mean);
    }
    if (key)
        *key = k;
    return k ? -1 : 0;
}

double fault_next_failure_s(const fault_cfg *c, gsl_rng *r) { return dist_sample(&c->fail_after_s, r); }
double fault_repair_s(const fault_cfg *c, gsl_rng *r)       { return dist_sample(&c->repair_s, r); }
double fault_next_pause_s(const fault_cfg *c, gsl_rng *r)   { return dist_sample(&c->pause_every_s, r); }
double fault_pause_len_s(const fault_cfg *c, gsl_rng *r)    { return dist_sample(&c->pause_s, r); }

int fault_pick_slow(const fault_cfg *c, int n, gsl_rng *r, unsigned char *slow)
{
    memset(slow, 0, (size_t) (n > 0 ? n : 0));
    int k = (int) floor(c->slow_fraction * n + 0.5);
    if (k <= 0 || n <= 0)
        return 0;
    if (k >= n) {
        memset(slow, 1, (size_t) n);
        return n;
    }
    /* gsl_ran_choose keeps the chosen indices in order; k <= n is small. */
    int *all = malloc((size_t) n * sizeof *all), *pick = malloc((size_t) k * sizeof *pick);
    if (all == NULL || pick == NULL) {
        /* Out of memory: the first k (still k slow replicas, not random ones). */
        for (int i = 0; i < k; i++)
            slow[i] = 1;
    } else {
        for (int i = 0; i < n; i++)
            all[i] = i;
        gsl_ran_choose(r, pick, (size_t) k, all, (size_t) n, sizeof *all);
        for (int i = 0; i < k; i++)
            slow[pick[i]] = 1;
    }
    free(all);
    free(pick);
    return k;
}

double fault_availability(const fault_cfg *c)
{
    if (!c->failures)
        return 1;
    return c->fail_after_s.mean / (c->fail_after_s.mean + c->repair_s.mean);
}

void fault_free(fault_cfg *c)
{
    if (c == NULL)
        return;
    dist_free(&c->fail_after_s);
    dist_free(&c->repair_s);
    dist_free(&c->pause_every_s);
    dist_free(&c->pause_s);
}

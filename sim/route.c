/* route.c -- the routing-policy table (see route.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "cplx.h"
#include "rng.h"
#include "route.h"

static int pick_round_robin(route_ctx *rc, const request *r, const station_snap *snaps, int n)
{
    (void) r;
    (void) snaps;
    return (int) (rc->turn++ % (uint64_t) n);
}

static int pick_random(route_ctx *rc, const request *r, const station_snap *snaps, int n)
{
    (void) r;
    (void) snaps;
    return (int) gsl_rng_uniform_int(rc->rng, (unsigned long) n);
}

/* Ties go to the first at or after a start that moves on by one per request,
 * so that equally loaded targets share the load. */
static int pick_least_outstanding(route_ctx *rc, const request *r, const station_snap *snaps, int n)
{
    (void) r;
    int start = (int) (rc->turn++ % (uint64_t) n), best = start;
    for (int k = 1; k < n; k++) {
        int i = (start + k) % n;
        if (snaps[i].inside < snaps[best].inside) best = i;
    }
    return best;
}

static int pick_power_of_two(route_ctx *rc, const request *r, const station_snap *snaps, int n)
{
    (void) r;
    if (n == 1) return 0;
    int a = (int) gsl_rng_uniform_int(rc->rng, (unsigned long) n);
    int b = (int) gsl_rng_uniform_int(rc->rng, (unsigned long) (n - 1));
    if (b >= a) b++;                     /* two distinct targets */
    return snaps[b].inside < snaps[a].inside ? b : a;
}

/* Largest free KV share; ties from a rotating start, as least_outstanding. */
static int pick_least_kv(route_ctx *rc, const request *r, const station_snap *snaps, int n)
{
    (void) r;
    int start = (int) (rc->turn++ % (uint64_t) n), best = start;
    for (int k = 1; k < n; k++) {
        int i = (start + k) % n;
        if (snaps[i].kv_free > snaps[best].kv_free) best = i;
    }
    return best;
}

/* Longest cached prefix; ties (and no hit anywhere) by fewest inside, then from
 * a rotating start. */
static int pick_prefix_affinity(route_ctx *rc, const request *r, const station_snap *snaps, int n)
{
    (void) r;
    int start = (int) (rc->turn++ % (uint64_t) n), best = start;
    for (int k = 1; k < n; k++) {
        int i = (start + k) % n;
        if (snaps[i].prefix_ids > snaps[best].prefix_ids ||
            (snaps[i].prefix_ids == snaps[best].prefix_ids && snaps[i].inside < snaps[best].inside))
            best = i;
    }
    return best;
}

static int pick_complexity(route_ctx *rc, const request *r, const station_snap *snaps, int n)
{
    (void) snaps;
    (void) n;
    return (int) cplx_route(rc->params, r->complexity, rc->rng);
}

static const route_policy POLICIES[] = {
    { "round_robin", "targets in turn", 0, NULL, pick_round_robin, NULL, NULL, 0 },
    { "random", "uniformly at random", 0, NULL, pick_random, NULL, NULL, 0 },
    { "least_outstanding", "fewest requests inside (waiting + in service)", 1, NULL, pick_least_outstanding, NULL, NULL, 0 },
    { "power_of_two", "the less loaded of two targets drawn at random", 1, NULL, pick_power_of_two, NULL, NULL, 0 },
    { "least_kv", "the largest free share of KV blocks", 1, NULL, pick_least_kv, NULL, NULL, 0 },
    { "prefix_affinity", "the longest cached prefix of the request, else the least loaded", 1, NULL,
      pick_prefix_affinity, NULL, NULL, 1 },
    { "complexity", "two targets: complexity score below complexity_cut to the first, else the second", 0, NULL,
      pick_complexity, NULL, NULL, 0 },
};
#define NPOLICIES ((int) (sizeof POLICIES / sizeof POLICIES[0]))

int route_count(void) { return NPOLICIES; }

const route_policy *route_at(int i) { return i >= 0 && i < NPOLICIES ? &POLICIES[i] : NULL; }

const route_policy *route_find(const char *name)
{
    for (int i = 0; i < NPOLICIES; i++)
        if (!strcasecmp(POLICIES[i].name, name)) return &POLICIES[i];
    return NULL;
}

void route_choices(char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < NPOLICIES && len < n; i++)
        len += (size_t) snprintf(buf + len, n - len, "%s%s", i ? "|" : "", POLICIES[i].name);
}

int route_open(route_ctx *rc, const route_policy *p, int n, uint64_t seed, const char *name)
{
    memset(rc, 0, sizeof *rc);
    rc->policy = p;
    rc->n = n;
    char stream[96];
    snprintf(stream, sizeof stream, "route %s", name);
    rc->rng = rng_stream(seed, stream);
    if (!rc->rng || (p->init && p->init(rc) != 0)) {
        route_close(rc);
        return -1;
    }
    return 0;
}

void route_close(route_ctx *rc)
{
    if (rc->policy && rc->policy->fini) rc->policy->fini(rc);
    if (rc->rng) gsl_rng_free(rc->rng);
    rc->rng = NULL;
    rc->state = NULL;
}

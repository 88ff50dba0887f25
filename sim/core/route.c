/* route.c -- the routing-policy table (see route.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/cplx.h"
#include "core/route.h"
#include "engine/rowtab.h"

route_counts route_tally;

/* ---- the index of loads ---------------------------------------------------- */

int route_index_init(route_index *ix, int n, double key)
{
    memset(ix, 0, sizeof *ix);
    int size = 1;
    while (size < n) size *= 2;
    ix->t = malloc(2 * (size_t) size * sizeof *ix->t);
    if (!ix->t) return -1;
    ix->n = n;
    ix->size = size;
    for (int i = 0; i < size; i++) ix->t[size + i] = i < n ? key : INFINITY;
    for (int v = size - 1; v >= 1; v--) ix->t[v] = fmin(ix->t[2 * v], ix->t[2 * v + 1]);
    return 0;
}

void route_index_free(route_index *ix)
{
    free(ix->t);
    memset(ix, 0, sizeof *ix);
}

void route_index_set(route_index *ix, int i, double key)
{
    int v = ix->size + i;
    if (ix->t[v] == key) return;
    ix->t[v] = key;
    for (v /= 2; v >= 1; v /= 2) {
        double m = ix->t[2 * v] < ix->t[2 * v + 1] ? ix->t[2 * v] : ix->t[2 * v + 1];
        if (ix->t[v] == m) break;        /* nothing above changes */
        ix->t[v] = m;
    }
}

/* The first target at or after LO whose key is at most M, or -1. */
static int first_at_most(const route_index *ix, int lo, double m)
{
    if (lo >= ix->n) return -1;
    int v = ix->size + lo;
    for (;;) {
        if (ix->t[v] <= m) {             /* in V's subtree, whose leaves all lie at or after LO */
            while (v < ix->size) {
                v *= 2;
                if (ix->t[v] > m) v++;
            }
            return v - ix->size;
        }
        while (v & 1) v /= 2;            /* up while V is a right child */
        if (v == 0) return -1;           /* past the root: nothing further right */
        v++;                             /* the subtree right after V's */
    }
}

int route_index_first_min(const route_index *ix, int start)
{
    double m = ix->t[1];
    int i = first_at_most(ix, start, m);
    return i >= 0 ? i : first_at_most(ix, 0, m);
}

/* ---- the policies ------------------------------------------------------------ */

static int pick_round_robin(route_ctx *rc, const request *r, const route_view *v, int n)
{
    (void) r;
    (void) v;
    return (int) (rc->turn++ % (uint64_t) n);
}

static int pick_random(route_ctx *rc, const request *r, const route_view *v, int n)
{
    (void) r;
    (void) v;
    return (int) gsl_rng_uniform_int(rc->rng, (unsigned long) n);
}

/* Ties go to the first at or after a start that moves on by one per request,
 * so that equally loaded targets share the load. */
static int pick_least_outstanding(route_ctx *rc, const request *r, const route_view *v, int n)
{
    (void) r;
    int start = (int) (rc->turn++ % (uint64_t) n), best = start;
    if (v->index) return route_index_first_min(v->index, start);
    uint64_t least = route_snap(v, start)->inside;
    for (int k = 1; k < n; k++) {
        int i = (start + k) % n;
        uint64_t in = route_snap(v, i)->inside;
        if (in < least) {
            best = i;
            least = in;
        }
    }
    return best;
}

static int pick_power_of_two(route_ctx *rc, const request *r, const route_view *v, int n)
{
    (void) r;
    if (n == 1) return 0;
    int a = (int) gsl_rng_uniform_int(rc->rng, (unsigned long) n);
    int b = (int) gsl_rng_uniform_int(rc->rng, (unsigned long) (n - 1));
    if (b >= a) b++;                     /* two distinct targets */
    uint64_t in_a = route_snap(v, a)->inside, in_b = route_snap(v, b)->inside;
    return in_b < in_a ? b : a;
}

/* Largest free KV share; ties from a rotating start, as least_outstanding. */
static int pick_least_kv(route_ctx *rc, const request *r, const route_view *v, int n)
{
    (void) r;
    int start = (int) (rc->turn++ % (uint64_t) n), best = start;
    if (v->index) return route_index_first_min(v->index, start);
    double most = route_snap(v, start)->kv_free;
    for (int k = 1; k < n; k++) {
        int i = (start + k) % n;
        double f = route_snap(v, i)->kv_free;
        if (f > most) {
            best = i;
            most = f;
        }
    }
    return best;
}

/* Longest cached prefix; ties (and no hit anywhere) by fewest inside, then from
 * a rotating start. */
static int pick_prefix_affinity(route_ctx *rc, const request *r, const route_view *v, int n)
{
    (void) r;
    int start = (int) (rc->turn++ % (uint64_t) n), best = start;
    station_snap b = *route_snap(v, start);
    for (int k = 1; k < n; k++) {
        int i = (start + k) % n;
        const station_snap *s = route_snap(v, i);
        if (s->prefix_ids > b.prefix_ids || (s->prefix_ids == b.prefix_ids && s->inside < b.inside)) {
            best = i;
            b = *s;
        }
    }
    return best;
}

static int pick_complexity(route_ctx *rc, const request *r, const route_view *v, int n)
{
    (void) v;
    (void) n;
    return (int) cplx_route(rc->params, r->attrs.complexity, rc->rng);
}

/* The built-in rows; registered ones follow them (route_policy_register). */
static const route_policy POLICIES[] = {
    { "round_robin", "targets in turn", ROUTE_KEY_NONE, NULL, pick_round_robin, NULL, NULL, 0, 0 },
    { "random", "uniformly at random", ROUTE_KEY_NONE, NULL, pick_random, NULL, NULL, 0, 0 },
    { "least_outstanding", "fewest requests inside (waiting + in service)", ROUTE_KEY_INSIDE, NULL,
      pick_least_outstanding, NULL, NULL, 0, 0 },
    { "power_of_two", "the less loaded of two targets drawn at random", ROUTE_KEY_NONE, NULL, pick_power_of_two,
      NULL, NULL, 0, 0 },
    { "least_kv", "the largest free share of KV blocks", ROUTE_KEY_KV, NULL, pick_least_kv, NULL, NULL, 0, 0 },
    { "prefix_affinity", "the longest cached prefix of the request, else the least loaded", ROUTE_KEY_NONE, NULL,
      pick_prefix_affinity, NULL, NULL, 1, 0 },
    { "complexity", "two targets: complexity score below complexity_cut to the first, else the second",
      ROUTE_KEY_NONE, NULL, pick_complexity, NULL, NULL, 0, 1 },
};
static rowtab table = ROWTAB_STRUCTS(POLICIES, route_policy);

int route_count(void) { return rowtab_count(&table); }
const route_policy *route_at(int i) { return rowtab_at(&table, i); }
const route_policy *route_find(const char *name) { return rowtab_find(&table, name); }

int route_policy_register(const route_policy *p)
{
    if (!p || !p->pick) return -1;
    return rowtab_add(&table, p);
}

void route_choices(char *buf, size_t n) { rowtab_choices(&table, buf, n); }

void route_stream_name(char *buf, size_t n, const char *name) { snprintf(buf, n, "route %s", name); }

int route_open(route_ctx *rc, const route_policy *p, int n, gsl_rng *rng)
{
    memset(rc, 0, sizeof *rc);
    if (!rng) return -1;
    rc->policy = p;
    rc->n = n;
    rc->rng = rng;
    if (p->init && p->init(rc) != 0) {   /* a failed init leaves nothing to free */
        rc->policy = NULL;
        route_close(rc);
        return -1;
    }
    return 0;
}

void route_close(route_ctx *rc)
{
    if (rc->policy && rc->policy->fini) rc->policy->fini(rc);
    if (rc->rng) gsl_rng_free(rc->rng);
    rc->policy = NULL;                   /* closing again does nothing */
    rc->rng = NULL;
    rc->state = NULL;
}

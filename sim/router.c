/* router.c -- the router station kind (see router.h). */
#include <stdlib.h>
#include "router.h"

typedef struct router {
    station st;               /* common part; must be first */
    route_ctx rc;             /* the policy's view and state */
    station_snap *snaps;      /* one per out-edge, refreshed per request */
} router;

static void arrive(station *st, request *r)
{
    router *R = (router *) st;
    if (r->measured) st->arrivals++;
    if (R->rc.policy->uses_snaps)
        for (int i = 0; i < st->nout; i++) station_snapshot(st->out[i], &R->snaps[i]);
    int e = route_pick(&R->rc, r, R->snaps);
    if (r->measured) st->served++;
    station_forward(st, r, e);
}

static void destroy(station *st)
{
    router *R = (router *) st;
    route_close(&R->rc);
    free(R->snaps);
    station_fini(st);
    free(R);
}

static const station_ops ROUTER_OPS = {
    .arrive = arrive,
    .destroy = destroy,
};

static station *router_new(const pool_cfg *cfg, const station_env *env)
{
    router *R = calloc(1, sizeof *R);
    if (!R) return NULL;
    const router_cfg *rc = cfg->ext;
    if (station_init(&R->st, &ROUTER_OPS, cfg, env) != 0 ||
        !(R->snaps = calloc((size_t) cfg->nnext, sizeof *R->snaps)) ||
        route_open(&R->rc, rc->policy, cfg->nnext, env->seed, cfg->name) != 0) {
        destroy(&R->st);
        return NULL;
    }
    R->st.capacity = 1;       /* never busy: utilisation 0 */
    return &R->st;
}

static const scn_key KEYS[] = {
    { "policy", "round_robin", "routing policy: round_robin | random | least_outstanding | power_of_two" },
    { NULL, NULL, NULL },
};

static int parse(scn_ctx *x, const char *sec, pool_cfg *p)
{
    char choices[256];
    route_choices(choices, sizeof choices);
    int k;
    if (scn_enum(x, sec, "policy", choices, 0, &k)) return -1;
    router_cfg *c = calloc(1, sizeof *c);
    if (!c) return scn_fail_sec(x, sec, NULL, "out of memory");
    c->policy = route_at(k);
    p->ext = c;
    if (p->queue_limit > 0 || p->timeout_ms > 0)
        return scn_fail(x, sec, p->queue_limit > 0 ? "queue_limit" : "timeout_ms",
                        "a router holds no queue (set it on the pools it routes to)");
    return 0;
}

static void free_cfg(pool_cfg *p)
{
    free(p->ext);
    p->ext = NULL;
}

const station_kind router_kind = {
    .name = "router",
    .help = "sends each request to one of its next pools, chosen by a routing policy",
    .keys = KEYS,
    .parse = parse,
    .make = router_new,
    .free_cfg = free_cfg,
    .min_next = 1,
    .max_next = 0,
};

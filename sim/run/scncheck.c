/* scncheck.c -- the checks of a scenario's pools as a whole: next lists without
 * cycles, the kinds' graph checks, the clock's range, the number of
 * self-renewing events. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "run/scenario.h"
#include "run/scnbuild.h"
#include "core/kind.h"
#include "fleet/fleetcfg.h"
#include "engine/simtime.h"

/* Splits a `next` value at commas into pool indices.  Returns 0 or -1. */
static int parse_next(ctx *x, const char *sec, pool_cfg *p)
{
    const cfg_entry *e;
    const char *v = val(x, sec, "next", &e);
    if (!v || !strcmp(v, "none")) return 0;
    int n = 1;
    for (const char *c = v; *c; c++) n += *c == ',';
    p->next = calloc((size_t) n, sizeof *p->next);
    if (!p->next) return fail(x, e, sec, "next", "out of memory");
    const char *c = v;
    for (;;) {
        while (*c == ' ' || *c == '\t') c++;
        size_t len = strcspn(c, ",");
        while (len > 0 && (c[len - 1] == ' ' || c[len - 1] == '\t')) len--;
        char name[80];
        if (len == 0) return fail(x, e, sec, "next", "empty name in the list '%s'", v);
        snprintf(name, sizeof name, "%.*s", (int) (len < sizeof name ? len : sizeof name - 1), c);
        int j = pool_index(x->s, name);
        if (j < 0 || len >= sizeof name) return fail(x, e, sec, "next", "no pool named '%s'", name);
        for (int i = 0; i < p->nnext; i++)
            if (p->next[i] == j) return fail(x, e, sec, "next", "'%s' is named twice", name);
        p->next[p->nnext++] = j;
        c += strcspn(c, ",");
        if (!*c) break;
        c++;
    }
    return 0;
}

/* Depth-first search for a cycle through pool ROOT; STATE: 0 unseen, 1 on the
 * path, 2 done.  Iterative (a chain of 500 000 pools is as deep): STK and POS
 * (npools each) hold the path and each pool's next out-edge.  Returns the pool
 * that closes a cycle, or -1. */
static int find_cycle(const scenario *s, int root, unsigned char *state, int *stk, int *pos)
{
    int top = 0;
    stk[0] = root;
    pos[0] = 0;
    state[root] = 1;
    while (top >= 0) {
        int i = stk[top];
        if (pos[top] < s->pools[i].nnext) {
            int j = s->pools[i].next[pos[top]++];
            if (state[j] == 1) return i;
            if (state[j] == 0) {
                state[j] = 1;
                stk[++top] = j;
                pos[top] = 0;
            }
        } else {
            state[i] = 2;
            top--;
        }
    }
    return -1;
}

/* next = lists: each names pools, as many as the kind takes; no cycles. */
int build_next(ctx *x)
{
    scenario *s = x->s;
    for (int i = 0; i < s->npools; i++) {
        pool_cfg *p = &s->pools[i];
        char sec[80];
        snprintf(sec, sizeof sec, "pool %s", p->name);
        if (parse_next(x, sec, p)) return -1;
        const station_kind *k = p->kind;
        const cfg_entry *e;
        val(x, sec, "next", &e);
        if (p->nnext < k->min_next)
            return fail(x, e, sec, "next", "kind = %s needs at least %d pool%s in next", k->name, k->min_next,
                        k->min_next > 1 ? "s" : "");
        if (k->max_next > 0 && p->nnext > k->max_next)
            return fail(x, e, sec, "next", "kind = %s takes %d pool%s in next, not %d (a list is for routers)",
                        k->name, k->max_next, k->max_next > 1 ? "s" : "", p->nnext);
    }
    size_t np = s->npools > 0 ? (size_t) s->npools : 1;
    unsigned char *state = calloc(np, 1);
    int *stk = malloc(np * sizeof *stk), *pos = malloc(np * sizeof *pos);
    if (!state || !stk || !pos) {
        free(state); free(stk); free(pos);
        snprintf(x->c.err, x->c.errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < s->npools; i++) {
        if (state[i]) continue;
        int c = find_cycle(s, i, state, stk, pos);
        if (c >= 0) {
            free(state); free(stk); free(pos);
            char sec[80];
            snprintf(sec, sizeof sec, "pool %s", s->pools[c].name);
            const cfg_entry *ne;
            val(x, sec, "next", &ne);
            return fail(x, ne, sec, "next", "pools form a cycle");
        }
    }
    free(state); free(stk); free(pos);
    return 0;
}

/* The kinds' checks of a pool among the others (check_graph: an LLM pool's
 * disaggregated roles).  Returns 0 or -1 with a message naming the key. */
int check_graph(ctx *x)
{
    scenario *s = x->s;
    for (int i = 0; i < s->npools; i++) {
        const pool_cfg *p = &s->pools[i];
        if (!p->kind->check_graph) continue;
        char sec[80];
        snprintf(sec, sizeof sec, "pool %s", p->name);
        if (p->kind->check_graph(&x->c, sec, s->pools, s->npools, i)) return -1;
    }
    return 0;
}

/* Rejects scenarios certain to pass the clock's range (simtime.h): arrivals whose
 * mean gaps alone outlast it, or a generic pool on the requests' path (before any
 * pool that can lose or split requests) whose expected total service, spread over
 * its servers, exceeds it.  Returns 0 or -1 with a message naming the key. */
int check_clock(ctx *x)
{
    scenario *s = x->s;
    const double years = SIMTIME_HORIZON_S / (365.25 * 86400);
    double n = (double) s->warmup + (double) s->requests;   /* arrivals the run needs at least */
    const cfg_entry *e;
    if (s->wl.arrival != ARRIVAL_TRACE && s->wl.arrival != ARRIVAL_USERS && n / s->wl.rate > SIMTIME_HORIZON_S) {
        val(x, "workload", "rate", &e);
        return fail(x, e, "workload", "rate", "%g requests at %g per second take %.3g s, beyond the simulated clock's range "
                    "(%.3g s, %.0f years)", n, s->wl.rate, n / s->wl.rate, SIMTIME_HORIZON_S, years);
    }
    if (s->wl.arrival == ARRIVAL_TRACE && s->wl.tr.n > 0 && s->wl.tr.t[s->wl.tr.n - 1] / s->wl.speedup > SIMTIME_HORIZON_S) {
        const char *k = val(x, "workload", "speedup", &e) ? "speedup" : "trace";
        if (!e) val(x, "workload", "trace", &e);
        return fail(x, e, "workload", k, "the trace spans %.3g s at speedup %g, beyond the simulated clock's range "
                    "(%.3g s, %.0f years)", s->wl.tr.t[s->wl.tr.n - 1] / s->wl.speedup, s->wl.speedup,
                    SIMTIME_HORIZON_S, years);
    }
    for (int j = s->wl.target, hops = 0; j >= 0 && hops <= s->npools; hops++) {
        const pool_cfg *p = &s->pools[j];
        if (!(p->kind->flags & KIND_SERVICE_DIST) || p->queue_limit > 0 || p->timeout_ms > 0)
            break;   /* other kinds' service times are not known here; a lossy pool may not serve them all */
        double busy_ms = n * p->service.mean / p->servers;
        if (busy_ms > SIMTIME_HORIZON_MS) {
            char sec[80];
            snprintf(sec, sizeof sec, "pool %s", p->name);
            val(x, sec, "service_ms", &e);
            return fail(x, e, sec, "service_ms", "mean %g ms x %g requests / %d servers = %.3g s of service, beyond the "
                        "simulated clock's range (%.3g s, %.0f years)", p->service.mean, n, p->servers, busy_ms / 1e3,
                        SIMTIME_HORIZON_S, years);
        }
        if (p->nnext != 1) break;   /* leaves, or is split among several pools */
        j = p->next[0];
    }
    return 0;
}

double scenario_expected_duration_s(const scenario *s)
{
    const workload_cfg *w = &s->wl;
    double n = (double) s->warmup + (double) s->requests;   /* arrivals the run needs at least */
    if (w->arrival == ARRIVAL_USERS)   /* each user's requests follow one another, a think time apart at least */
        return w->users > 0 ? n / w->users * (w->think.mean > 0 ? w->think.mean / 1e3 : 0) + w->ramp_users_s : 0;
    if (w->arrival == ARRIVAL_TRACE) {
        if (w->tr.n == 0 || !(w->speedup > 0)) return 0;
        if (!w->loop || n <= (double) w->tr.n)   /* the time of the last row the run needs */
            return w->tr.t[(n < (double) w->tr.n ? (size_t) n : w->tr.n) - 1] / w->speedup;
        double rate = scenario_arrival_rate(s);
        return rate > 0 && isfinite(rate) ? n / rate : 0;
    }
    return w->rate > 0 ? n / w->rate : 0;
}

/* Rejects self-renewing events too many to run: failures, pauses and
 * autoscaler evaluations whose expected number over the run's expected
 * simulated time (scenario_expected_duration_s) exceeds
 * SCENARIO_MAX_PERIODIC_EVENTS.  (Periods below the clock's resolution are
 * refused where they are parsed.)  Returns 0 or -1 with a message naming the key. */
int check_periods(ctx *x)
{
    scenario *s = x->s;
    double t = scenario_expected_duration_s(s);
    if (!(t > 0)) return 0;   /* unknown beforehand: the stall guard (evq.h) still bounds a stall */
    for (int i = 0; i < s->npools; i++) {
        const pool_cfg *p = &s->pools[i];
        char sec[80];
        snprintf(sec, sizeof sec, "pool %s", p->name);
        if (p->kind->check_periods) {   /* the kind's own self-renewing events (a router's pauses) */
            if (p->kind->check_periods(&x->c, sec, p, t)) return -1;
            continue;
        }
        const fleet_cfg *f = p->fleet;
        if (!f) continue;
        double units = f->autoscale ? f->as.max_replicas : f->units;
        /* A failure is three events (the failure, the repair, the unit coming
         * up); a pause one; an evaluation one. */
        if (f->fault.failures &&
            scn_check_period(&x->c, sec, "fail_after_s", units, t, f->fault.fail_after_s.mean + f->fault.repair_s.mean,
                         "fail_after_s + repair_s", 3))
            return -1;
        if (f->fault.pauses &&
            scn_check_period(&x->c, sec, "pause_every_s", units, t, f->fault.pause_every_s.mean + f->fault.pause_s.mean,
                         "pause_every_s + pause_s", 1))
            return -1;
        if (f->autoscale && scn_check_period(&x->c, sec, "autoscale_interval_s", 1, t, f->as.interval_s,
                                         "autoscale_interval_s", 1))
            return -1;
    }
    return 0;
}

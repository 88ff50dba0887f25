/* pool.c -- generic pools of servers (G/G/c with FIFO queue).
 *
 * Without fleet keys the servers are anonymous (a count of idle ones).  With
 * them (fleet.h: failures, autoscaling, cold starts) each server is a unit of
 * the pool's fleet controller: it knows the request it serves, so that a
 * failure can hand that request back to the queue (on_failure = retry) or fail
 * it, and a scale-down can let it finish first.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/fleet.h"
#include "fleet/cputier.h"
#include "engine/rng.h"
#include "stations/pool.h"
#include "core/kind.h"
#include "core/result.h"

typedef struct gpool {
    station st;           /* common part; must be first */
    int idle;             /* servers not serving (with a fleet: up and not serving) */
    /* fleet only (fl NULL otherwise) */
    fleet *fl;            /* the controller of the servers' lives */
    int n;                /* servers that can exist (fleet_max_units) */
    request **holding;    /* per server: the request it serves, or NULL */
    evq_id *ev;           /* per server: its service-end event, or 0 */
    unsigned char *avail; /* per server: 1 while it may take requests (up) */
    uint64_t *since;      /* per server: requests started since it last came up (cold factor) */
    simtime_t *up_at;     /* per server: when it last came up after a start, ns (0: up from the beginning) */
    int *idle_stack;      /* servers up and idle, the next to serve on top */
    unsigned char *stacked; /* per server: 1 while on the idle stack */
    unsigned char *slow;  /* per server: 1 when it is one of the slow ones (slow_fraction) */
    simtime_t *end;       /* per server: when the request it serves is done, ns */
    simtime_t *paused_to; /* per server: end of its pause in progress, ns (0: none) */
    double cpu;           /* busy share of the servers up, averaged over about 10 s (contention) */
    simtime_t cpu_t;      /* when cpu was last updated, ns */
    double as_area;       /* busy_area at the last autoscaler evaluation, server-ns */
    simtime_t as_t;       /* time of that evaluation, ns */
    uint64_t cold;        /* measured requests served by a cold server */
    uint64_t started;     /* measured requests whose service started (swap share) */
    uint64_t swapped;     /* measured requests whose service started over the memory limit */
    gsl_rng *err_rng;     /* error draws (stream "pool NAME/errors"), or NULL when error_rate is 0 */
    uint64_t errors;      /* measured requests whose service ended in an error (5xx) */
    cpu_node *node;       /* CPU keys (fleet/cpunode.h): the node its servers run on, else NULL */
    int *cg;              /* CPU: per server, its cgroup on node */
    uint64_t *job;        /* CPU: per server, the CPU job of the request it serves (0: none) */
} gpool;

/* R's service just ended in a pool with an error_rate (p->err_rng): 1 when it
 * ended in an error (counted; the caller rejects R), else 0. */
static int end_in_error(gpool *p, request *r)
{
    if (gsl_rng_uniform(p->err_rng) >= p->st.cfg->error_rate) return 0;
    if (r->measured) p->errors++;
    return 1;
}

static void serve(gpool *p, request *r);

static void on_service_end(evq *q, void *subject, int64_t arg)
{
    (void) q;
    gpool *p = subject;
    request *r = (request *) (intptr_t) arg;
    station *st = &p->st;
    simtime_t took = evq_now(st->q) - r->start;   /* generic pools never preempt */
    r->service_ns += took;
    station_charge(st, r, (double) took);
    if (r->measured) stat_add(st->service_ms, simtime_to_ms(took));
    request *next = station_dequeue(st);
    if (next) serve(p, next);               /* the server stays busy */
    else {
        p->idle++;
        station_busy(st, -1);
    }
    if (p->err_rng && end_in_error(p, r)) station_reject(st, r);
    else station_forward(st, r, 0);
}

static void serve(gpool *p, request *r)
{
    station *st = &p->st;
    station_start(st, r);
    double ms = dist_sample(&st->cfg->service, st->rng);
    r->svc_ev = station_after(st, simtime_from_ms(ms), on_service_end, p, (int64_t) (intptr_t) r);
}

/* R's client left while it was served (patience_s, station_ops.cancel): its
 * service stops, the time spent on it is charged, its server takes the next. */
static void cancel(station *st, request *r)
{
    gpool *p = (gpool *) st;
    evq_cancel(st->q, r->svc_ev);
    r->svc_ev = 0;
    simtime_t took = evq_now(st->q) - r->start;
    r->service_ns += took;
    station_charge(st, r, (double) took);
    request *next = station_dequeue(st);
    if (next) serve(p, next);
    else {
        p->idle++;
        station_busy(st, -1);
    }
    station_drop(st, r, OUT_ABANDONED);
}

/* ---- servers as fleet units ------------------------------------------------ */

static void unit_end(evq *q, void *subject, int64_t arg);

/* Server U's CPU job is done (cpunode.h): its service ends. */
static void unit_cpu_done(void *ctx, int64_t u)
{
    gpool *p = ctx;
    p->job[u] = 0;
    unit_end(p->st.q, p, u);
}

/* memory_limit_gib (fleet.h): the working set of server U's replica (its
 * servers_per_replica servers) when U starts a request: the base plus one
 * working set per request its servers hold, this one included; over the limit,
 * every server of the replica is killed (fleet_kill) and the replica restarts. */
static void oom_check(gpool *p, int u)
{
    const fleet_cfg *fc = p->st.cfg->fleet;
    int per = fc->cpu.servers_per_replica > 0 ? fc->cpu.servers_per_replica : 1, first = u - u % per, held = 0;
    for (int v = first; v < first + per && v < p->n; v++) held += p->holding[v] != NULL;
    if (fc->memory_base_gib + fc->memory_per_request_mib / 1024.0 * held <= fc->memory_limit_gib) return;
    for (int v = first; v < first + per && v < p->n; v++) fleet_kill(p->fl, v);
}

/* Server U (up, idle, taken off the idle stack) starts serving R. */
static void unit_serve(gpool *p, int u, request *r)
{
    station *st = &p->st;
    const fleet_cfg *fc = st->cfg->fleet;
    station_start(st, r);
    double ms = dist_sample(&st->cfg->service, st->rng);
    /* Cold: it waited for this server's start (it entered the pool before the
     * server came up), or is among its first cold_requests slowed by cold_factor. */
    double f = fc->cold ? cold_factor(&fc->cs, p->since[u]) : 1;
    if (f > 1 || r->entered < p->up_at[u]) {
        r->cold = 1;
        if (r->measured) p->cold++;
    }
    ms *= f;
    if (p->slow[u]) ms *= fc->fault.slow_factor;
    if (fc->contention) {
        /* Host CPU utilisation: the busy share of the servers up (this one included). */
        ms *= fleet_contention(p->fl, st->busy, &p->cpu, &p->cpu_t);
    }
    if (fc->swap) {
        /* Resident set when the service starts: the base plus one working set
         * per request in service, this one included (st->busy counts it). */
        double used = fc->memory_base_gib + fc->memory_per_request_mib / 1024.0 * st->busy;
        double f = contention_swap(used, fc->memory_gib, fc->swap_factor);
        if (r->measured) {
            p->started++;
            if (f > 1) p->swapped++;
        }
        ms *= f;
    }
    p->since[u]++;
    p->holding[u] = r;
    if (fc->oom) oom_check(p, u);   /* memory_limit_gib: its replica may be killed (at an event now) */
    if (p->node) {   /* MS is CPU time on one core, run on the server's cgroup */
        if (!(p->job[u] = cpu_job_start(p->node, p->cg[u], ms, unit_cpu_done, p, u))) st->sink->oom(st->sink->ctx);
        return;
    }
    p->end[u] = evq_now(st->q) + simtime_from_ms(ms);
    p->ev[u] = station_at(st, p->end[u], unit_end, p, u);
}

static void push_idle(gpool *p, int u)
{
    if (p->stacked[u]) return;
    p->stacked[u] = 1;
    p->idle_stack[p->idle++] = u;
}

static void remove_idle(gpool *p, int u)
{
    if (!p->stacked[u]) return;
    for (int i = 0; i < p->idle; i++)
        if (p->idle_stack[i] == u) {
            memmove(&p->idle_stack[i], &p->idle_stack[i + 1], (size_t) (p->idle - i - 1) * sizeof *p->idle_stack);
            p->idle--;
            break;
        }
    p->stacked[u] = 0;
}

static void dispatch(gpool *p);

/* The idle server to serve next, taken off the idle stack: the top one; with
 * servers_per_replica > 1 (pods of several workers) the one whose replica
 * holds the fewest requests (the top one among those), as a service spreads
 * requests over its pods. */
static int pop_idle(gpool *p)
{
    int per = p->st.cfg->fleet->cpu.servers_per_replica, at = p->idle - 1;
    if (per > 1) {
        int best = -1;
        for (int i = p->idle - 1; i >= 0; i--) {
            int first = p->idle_stack[i] - p->idle_stack[i] % per, held = 0;
            for (int v = first; v < first + per && v < p->n; v++) held += p->holding[v] != NULL;
            if (best < 0 || held < best) {
                best = held;
                at = i;
            }
        }
    }
    int u = p->idle_stack[at];
    memmove(&p->idle_stack[at], &p->idle_stack[at + 1], (size_t) (p->idle - at - 1) * sizeof *p->idle_stack);
    p->idle--;
    p->stacked[u] = 0;
    return u;
}

/* The pause of idle server U is over. */
static void unit_resume(evq *q, void *subject, int64_t arg)
{
    gpool *p = subject;
    int u = (int) arg;
    if (p->paused_to[u] > evq_now(q)) return;   /* a later pause took over */
    p->paused_to[u] = 0;
    if (p->avail[u] && !p->holding[u]) {
        push_idle(p, u);
        dispatch(p);
    }
}

/* Server U stalls for LEN: its request's end moves by LEN; idle, it takes
 * nothing until the pause is over. */
static void unit_pause(void *ctx, int u, simtime_t len)
{
    gpool *p = ctx;
    station *st = &p->st;
    simtime_t now = evq_now(st->q);
    if (p->holding[u]) {
        evq_cancel(st->q, p->ev[u]);
        p->end[u] += len;
        p->ev[u] = station_at(st, p->end[u], unit_end, p, u);
        return;
    }
    remove_idle(p, u);
    p->paused_to[u] = now + len;
    station_at(st, p->paused_to[u], unit_resume, p, u);
}

/* Idle up servers take waiting requests. */
static void dispatch(gpool *p)
{
    station *st = &p->st;
    while (p->idle > 0) {
        request *r = station_dequeue(st);
        if (!r) return;
        int u = pop_idle(p);
        station_busy(st, +1);
        unit_serve(p, u, r);
    }
}

static void unit_end(evq *q, void *subject, int64_t arg)
{
    (void) q;
    gpool *p = subject;
    station *st = &p->st;
    int u = (int) arg;
    request *r = p->holding[u];
    p->holding[u] = NULL;
    p->ev[u] = 0;
    simtime_t took = evq_now(st->q) - r->start;
    r->service_ns += took;
    station_charge(st, r, (double) took);
    if (r->measured) stat_add(st->service_ms, simtime_to_ms(took));
    request *next = p->avail[u] ? station_dequeue(st) : NULL;
    if (next) unit_serve(p, u, next);
    else {
        station_busy(st, -1);
        if (p->avail[u]) push_idle(p, u);
        else fleet_drained(p->fl, u);          /* a draining server is done */
    }
    if (p->err_rng && end_in_error(p, r)) station_reject(st, r);
    else station_forward(st, r, 0);
}

/* cancel (above) for servers that are fleet units: server U of R stops, takes the next or goes idle. */
static void cancel_fleet(station *st, request *r)
{
    gpool *p = (gpool *) st;
    int u = 0;
    while (u < p->n && p->holding[u] != r) u++;
    if (u == p->n) return;                      /* not in service here (cannot happen) */
    if (p->node) {   /* its CPU job stops (cpunode.h) */
        cpu_job_cancel(p->node, p->job[u]);
        p->job[u] = 0;
    } else {
        evq_cancel(st->q, p->ev[u]);
        p->ev[u] = 0;
    }
    p->holding[u] = NULL;
    simtime_t took = evq_now(st->q) - r->start;
    r->service_ns += took;
    station_charge(st, r, (double) took);
    request *next = p->avail[u] ? station_dequeue(st) : NULL;
    if (next) unit_serve(p, u, next);
    else {
        station_busy(st, -1);
        if (p->avail[u]) push_idle(p, u);
        else fleet_drained(p->fl, u);          /* a draining server is done */
    }
    station_drop(st, r, OUT_ABANDONED);
}

static void unit_down(void *ctx, int u, int failed)
{
    gpool *p = ctx;
    station *st = &p->st;
    int was_avail = p->avail[u];
    p->avail[u] = 0;
    request *r = p->holding[u];
    if (!r) {
        (void) was_avail;
        remove_idle(p, u);                     /* off the idle stack */
        return;
    }
    if (!failed) return;                       /* draining: it finishes R */
    if (p->node) {   /* its CPU job stops (cpunode.h) */
        cpu_job_cancel(p->node, p->job[u]);
        p->job[u] = 0;
    }
    evq_cancel(st->q, p->ev[u]);
    p->ev[u] = 0;
    p->holding[u] = NULL;
    station_busy(st, -1);
    r->service_ns += evq_now(st->q) - r->start; /* time spent on it, lost */
    station_charge(st, r, (double) (evq_now(st->q) - r->start));   /* paid for all the same */
    if (st->cfg->fleet->fault.on_failure == FAULT_RETRY && failed != 2) {   /* 2: OOM-killed, its requests fail */
        r->enq = evq_now(st->q);
        station_push_front(st, r);             /* first in line for the next server */
        dispatch(p);
    } else {
        station_drop(st, r, OUT_FAILED);
    }
}

static void unit_up(void *ctx, int u)
{
    gpool *p = ctx;
    p->avail[u] = 1;
    p->since[u] = 0;
    p->up_at[u] = evq_now(p->st.q);
    p->paused_to[u] = 0;
    if (!p->holding[u]) push_idle(p, u);
    dispatch(p);
}

static uint64_t unit_held(void *ctx, int u)
{
    return ((gpool *) ctx)->holding[u] != NULL;
}

/* The autoscaler's load: requests in the pool (queue), or the mean busy servers
 * since the last evaluation (utilization). */
static double unit_load(void *ctx, as_metric m)
{
    gpool *p = ctx;
    station *st = &p->st;
    if (m == AS_QUEUE) return (double) st->inside;
    station_busy(st, 0);
    simtime_t now = evq_now(st->q);
    double busy = now > p->as_t ? (st->busy_area - p->as_area) / (double) (now - p->as_t) : st->busy;
    p->as_area = st->busy_area;
    p->as_t = now;
    /* Scaled to zero with requests waiting: no server is busy, but the load is
     * not nothing (the autoscaler then wants one). */
    if (!(busy > 0) && st->inside > 0) busy = 1e-9;
    return busy;
}

static void arrive_fleet(station *st, request *r)
{
    gpool *p = (gpool *) st;
    r->enq = evq_now(st->q);
    if (p->idle > 0 && st->qlen == 0) {
        int u = pop_idle(p);
        station_busy(st, +1);
        unit_serve(p, u, r);
        return;
    }
    if (station_enqueue(st, r) == 0) dispatch(p);
}

static void window_open_fleet(station *st)
{
    fleet_window_open(((gpool *) st)->fl);
    if (((gpool *) st)->node) cpu_node_window_open(((gpool *) st)->node);
}

static void window_close_fleet(station *st)
{
    fleet_window_close(((gpool *) st)->fl);
    if (((gpool *) st)->node) cpu_node_window_close(((gpool *) st)->node);
}

/* The CPU metrics (cputier.h, cpu_report): CFS periods throttled and time
 * throttled, summed over the replicas; the node's busy share and background. */
static int report_cpu(const gpool *p, pool_result *out)
{
    uint64_t periods = 0;
    double thr_s = 0;
    for (int u = 0; u < p->n; u += p->st.cfg->fleet->cpu.servers_per_replica) {   /* one server of each replica */
        periods += cpu_group_throttled_periods(p->node, p->cg[u]);
        thr_s += cpu_group_throttled_s(p->node, p->cg[u]);
    }
    return cpu_report(p->node, &p->st.cfg->fleet->cpu, periods, thr_s, out);
}

static void snapshot_fleet(const station *st, station_snap *out)
{
    out->capacity = fleet_up(((const gpool *) st)->fl);
    out->cap_area = fleet_up_area(((const gpool *) st)->fl);
}

/* With failures the servers are up a share `availability` of the time; an
 * autoscaled pool may grow to max_replicas. */
static double offered_load_fleet(const station *st, double rate)
{
    const fleet_cfg *fc = st->cfg->fleet;
    double servers = fc->autoscale ? fc->as.max_replicas : st->cfg->servers * fault_availability(&fc->fault);
    return rate * st->cfg->service.mean / 1000.0 / servers;
}

static int report_fleet(station *st, pool_result *out)
{
    gpool *p = (gpool *) st;
    const fleet_cfg *fc = st->cfg->fleet;
    fleet_result fr;
    fleet_results(p->fl, &fr);
    /* Utilisation: busy share of the servers that were up. */
    double up_ns = fr.up_mean * out->window_s * 1e9;
    out->utilization = up_ns > 0 ? (st->busy_area - st->area_at_start) / up_ns : 0;
    int rc = 0;
    rc |= pool_result_add(out, "failed", (double) st->failed);
    rc |= pool_result_add(out, "availability", fr.availability);
    rc |= pool_result_add(out, "servers_up_mean", fr.up_mean);
    rc |= pool_result_add(out, "server_seconds", fr.running_s);
    if (fc->fault.failures) rc |= pool_result_add(out, "failures", (double) fr.failures);
    if (fc->autoscale) {
        rc |= pool_result_add(out, "scale_ups", (double) fr.scale_ups);
        rc |= pool_result_add(out, "scale_downs", (double) fr.scale_downs);
    }
    if (fleet_starts(fc)) rc |= pool_result_add(out, "cold_served", (double) p->cold);
    if (fc->oom) rc |= pool_result_add(out, "oom_kills", (double) fr.oom_kills);   /* memory_limit_gib */
    if (st->cfg->error_rate > 0) rc |= pool_result_add(out, "errors", (double) p->errors);
    if (fc->swap) {
        rc |= pool_result_add(out, "swapped", (double) p->swapped);
        rc |= pool_result_add(out, "swap_share", p->started ? (double) p->swapped / (double) p->started : 0);
    }
    if (p->node) rc |= report_cpu(p, out);
    if (st->cfg->usd_per_hour > 0)   /* $ over the window: the server-seconds paid for */
        rc |= pool_result_add(out, "cost_usd", fr.running_s * st->cfg->usd_per_hour / 3600.0);
    /* $ per hour over the window: the server-seconds paid for. */
    if (out->window_s > 0) out->cost_per_hour = fr.running_s * st->cfg->usd_per_hour / out->window_s;
    return rc ? -1 : 0;
}

/* ---- anonymous servers ------------------------------------------------------ */

static void arrive(station *st, request *r)
{
    gpool *p = (gpool *) st;
    r->enq = evq_now(st->q);
    if (p->idle > 0 && st->qlen == 0) {
        p->idle--;
        station_busy(st, +1);
        serve(p, r);
        return;
    }
    station_enqueue(st, r);
}

/* The pool's price: servers x usd_per_hour (cost_per_hour, in the run's cost). */
static int report(station *st, pool_result *out)
{
    out->cost_per_hour = st->cfg->servers * st->cfg->usd_per_hour;
    if (st->cfg->error_rate > 0 && pool_result_add(out, "errors", (double) ((gpool *) st)->errors)) return -1;
    return 0;
}

/* rate x mean service / servers */
static double offered_load(const station *st, double rate)
{
    return rate * st->cfg->service.mean / 1000.0 / st->cfg->servers;
}

static void destroy(station *st)
{
    gpool *p = (gpool *) st;
    fleet_free(p->fl);
    if (p->err_rng) gsl_rng_free(p->err_rng);
    free(p->holding);
    free(p->ev);
    free(p->avail);
    free(p->since);
    free(p->up_at);
    free(p->idle_stack);
    free(p->stacked);
    free(p->slow);
    free(p->end);
    free(p->paused_to);
    free(p->cg);
    free(p->job);
    station_fini(st);
    free(st);
}

static const station_ops GENERIC_OPS = {
    .arrive = arrive,
    .offered_load = offered_load,
    .report = report,
    .cancel = cancel,
    .destroy = destroy,
};

static const station_ops GENERIC_FLEET_OPS = {
    .arrive = arrive_fleet,
    .window_open = window_open_fleet,
    .window_close = window_close_fleet,
    .snapshot = snapshot_fleet,
    .offered_load = offered_load_fleet,
    .report = report_fleet,
    .cancel = cancel_fleet,
    .destroy = destroy,
};

static const scn_key KEYS[] = {
    { "servers", "1", "parallel servers" },
    { "service_ms", "", "service time distribution, ms (required)" },
    { "usd_per_hour", "0", "$ per server-hour (the planner's cost of this pool)" },
    { "error_rate", "0", "probability a service ends in an error (an HTTP 5xx) instead of an answer: the request "
                         "leaves rejected after its service time (a [client] retries it)" },
    { NULL, NULL, NULL },
};

static int parse(scn_ctx *x, const char *sec, pool_cfg *p)
{
    if (scn_int(x, sec, "servers", 1, 1, 100000000, &p->servers)) return -1;
    if (scn_num(x, sec, "usd_per_hour", 0, 0, 0, 1e12, &p->usd_per_hour)) return -1;
    if (scn_num(x, sec, "error_rate", 0, 0, 0, 1, &p->error_rate)) return -1;
    if (scn_dist(x, sec, "service_ms", NULL, &p->service)) return -1;
    if (p->service.mean <= 0) return scn_fail(x, sec, "service_ms", "mean service time must be > 0");
    if (p->service.mean > SIMTIME_HORIZON_MS)
        return scn_fail(x, sec, "service_ms", "mean %g ms exceeds the simulated clock's range (%.3g ms, about 146 years)",
                        p->service.mean, SIMTIME_HORIZON_MS);
    return 0;
}

static void free_cfg(pool_cfg *p) { dist_free(&p->service); }

/* The kind's usd_per_hour hook (kind.h). */
static double usd_per_hour(const pool_cfg *p) { return p->usd_per_hour * p->servers; }

const station_kind pool_kind_generic = {
    .name = "generic",
    .help = "c identical servers in front of one FIFO queue (G/G/c)",
    .keys = KEYS,
    .parse = parse,
    .make = pool_new,
    .free_cfg = free_cfg,
    .min_next = 0,
    .max_next = 1,
    .usd_per_hour = usd_per_hour,
    .flags = KIND_SOLE_STATS | KIND_FLEET | KIND_SERVICE_DIST | KIND_PLAIN,
};

station *pool_new(const pool_cfg *cfg, const station_env *env)
{
    gpool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (station_init(&p->st, cfg->fleet ? &GENERIC_FLEET_OPS : &GENERIC_OPS, cfg, env) != 0) {
        destroy(&p->st);
        return NULL;
    }
    p->idle = cfg->servers;
    p->st.capacity = cfg->servers;
    if (cfg->error_rate > 0) {
        char stream[96];
        snprintf(stream, sizeof stream, "pool %s/errors", cfg->name);
        if (!(p->err_rng = rng_stream(env->seed, stream))) {
            destroy(&p->st);
            return NULL;
        }
    }
    if (!cfg->fleet) return &p->st;

    char name[96];
    snprintf(name, sizeof name, "pool %s", cfg->name);
    fleet_units ops = { .ctx = p, .down = unit_down, .up = unit_up, .held = unit_held, .load = unit_load,
                        .pause = unit_pause };
    fleet_cfg fc = *cfg->fleet;
    fc.units = cfg->servers;
    if (!(p->fl = fleet_new(&fc, env->q, env->seed, name, &ops))) {
        destroy(&p->st);
        return NULL;
    }
    p->n = fleet_max_units(p->fl);
    size_t n = (size_t) p->n;
    p->holding = calloc(n, sizeof *p->holding);
    p->ev = calloc(n, sizeof *p->ev);
    p->avail = calloc(n, sizeof *p->avail);
    p->since = calloc(n, sizeof *p->since);
    p->up_at = calloc(n, sizeof *p->up_at);
    p->idle_stack = calloc(n, sizeof *p->idle_stack);
    p->stacked = calloc(n, sizeof *p->stacked);
    p->slow = calloc(n, sizeof *p->slow);
    p->end = calloc(n, sizeof *p->end);
    p->paused_to = calloc(n, sizeof *p->paused_to);
    if (cfg->fleet->cpu.on) {   /* each server a cgroup on its node (cpunode.h) */
        p->cg = calloc(n, sizeof *p->cg);
        p->job = calloc(n, sizeof *p->job);
        p->node = env->cpu_nodes && p->cg && p->job ? cpu_nodes_get(env->cpu_nodes, &cfg->fleet->cpu) : NULL;
        int per = cfg->fleet->cpu.servers_per_replica;   /* servers u..u+per-1: one replica's cgroup */
        for (int u = 0; p->node && u < p->n; u++)
            if ((p->cg[u] = u % per ? p->cg[u - u % per] : cpu_group_new(p->node, &cfg->fleet->cpu)) < 0) p->node = NULL;
        if (!p->node) {
            destroy(&p->st);
            return NULL;
        }
    }
    if (!p->holding || !p->ev || !p->avail || !p->since || !p->up_at || !p->idle_stack || !p->stacked || !p->slow ||
        !p->end || !p->paused_to) {
        destroy(&p->st);
        return NULL;
    }
    if (cfg->fleet->fault.slow_fraction > 0 && fleet_pick_slow(cfg->fleet, env->seed, cfg->name, p->n, p->slow) != 0) {
        destroy(&p->st);
        return NULL;
    }
    /* Servers 0..initial-1 are up (and warm) at the start; the lowest index
     * serves first. */
    p->idle = 0;
    for (int u = fleet_initial_up(p->fl) - 1; u >= 0; u--) {
        p->avail[u] = 1;
        p->since[u] = UINT64_MAX / 2;
        push_idle(p, u);
    }
    p->st.capacity = p->n;
    return &p->st;
}

/* fleet.c -- a pool's units over time (see fleet.h): failure, repair, start
 * and drain events on the engine's calendar, the autoscaler's evaluations, and
 * the time integrals of units up and paid for. */
#include "fleet/fleet.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/rng.h"

typedef struct unit {
    evq_id pause_ev;       /* its next pause, or 0 */
    unit_state state;      /* see fleet.h */
    int scaled;            /* STARTING because the autoscaler asked (else after a repair) */
    evq_id ev;             /* its pending failure, repair or ready event, or 0 */
    int killing;           /* 1: an OOM kill (fleet_kill) is pending as ev */
    gsl_rng *rng;          /* its own stream: failure and repair draws */
} unit;

struct fleet {
    fleet_cfg c;           /* configuration (the fault dists are borrowed, not owned) */
    evq *q;                /* the engine's calendar */
    fleet_units ops;       /* the station */
    unit *u;               /* max units */
    int n;                 /* max units */
    int initial;           /* units UP at time 0 */
    autoscaler as;         /* decisions (autoscale only) */
    int count[5];          /* units per state */
    int restarting;        /* units STARTING after a repair (unavailable, not provisioning) */
    simtime_t t;           /* integrals brought up to, ns */
    double up_area;        /* integral of UP units, unit-ns */
    double paid_area;      /* integral of units paid for (paid_now), unit-ns */
    double avail_area;     /* integral of UP + DOWN units, unit-ns */
    double powered_area;   /* integral of units powered on (STARTING, UP, DRAINING), unit-ns */
    double up0, paid0, avail0, powered0;   /* the integrals when the window opened */
    simtime_t t_open;      /* window opened, ns */
    uint64_t failures, failures0;
    uint64_t oom_kills, oom_kills0;  /* fleet_kill: units killed, and the count when the window opened */
    unsigned long ups0, downs0;
    fleet_result res;      /* filled at window close */
    int closed;            /* the window has closed */
    int oom;               /* an event could not be scheduled */
    char name[96];         /* the pool's section ("pool NAME"), for the stall report */
};

/* Units paid for now: all but OFF, and but DOWN unless paid_while_down. */
static int paid_now(const fleet *f)
{
    return f->n - f->count[UNIT_OFF] - (f->c.paid_while_down ? 0 : f->count[UNIT_DOWN]);
}

static void advance(fleet *f)
{
    simtime_t now = evq_now(f->q);
    if (now > f->t) {
        double dt = (double) (now - f->t);
        f->up_area += f->count[UNIT_UP] * dt;
        f->paid_area += paid_now(f) * dt;
        f->avail_area += (f->count[UNIT_UP] + f->count[UNIT_DOWN] + f->restarting) * dt;
        f->powered_area += (f->count[UNIT_STARTING] + f->count[UNIT_UP] + f->count[UNIT_DRAINING]) * dt;
        f->t = now;
    }
}

static void set_state(fleet *f, int i, unit_state s)
{
    unit *u = &f->u[i];
    advance(f);
    if (u->state == UNIT_STARTING && !u->scaled) f->restarting--;
    if (s == UNIT_STARTING && !u->scaled) f->restarting++;
    f->count[u->state]--;
    u->state = s;
    f->count[s]++;
}

static evq_id at(fleet *f, double after_s, evq_handler h, int i)
{
    /* A draw beyond the clock's horizon (a failure in a thousand years) is
     * an event that never comes. */
    if (!(after_s < simtime_to_s(SIMTIME_HORIZON - evq_now(f->q))))
        return 0;
    evq_id id = evq_after(f->q, simtime_from_s(after_s), h, f, i);
    if (id == 0)
        f->oom = 1;
    return id;
}

static void on_fail(evq *q, void *subject, int64_t arg);
static void on_ready(evq *q, void *subject, int64_t arg);

/* Unit I's next pause, RUN_S seconds of running from now (pauses only while UP). */
static void on_pause(evq *q, void *subject, int64_t arg)
{
    (void) q;
    fleet *f = subject;
    int i = (int) arg;
    unit *u = &f->u[i];
    u->pause_ev = 0;
    if (u->state != UNIT_UP) return;
    double len = fault_pause_len_s(&f->c.fault, u->rng);
    f->ops.pause(f->ops.ctx, i, simtime_from_s(len));
    u->pause_ev = at(f, len + fault_next_pause_s(&f->c.fault, u->rng), on_pause, i);
}

static void arm_pause(fleet *f, int i)
{
    unit *u = &f->u[i];
    if (f->c.fault.pauses && !u->pause_ev && f->ops.pause)
        u->pause_ev = at(f, fault_next_pause_s(&f->c.fault, u->rng), on_pause, i);
}

/* Unit I comes up now: serving, its next failure drawn. */
static void come_up(fleet *f, int i)
{
    unit *u = &f->u[i];
    set_state(f, i, UNIT_UP);
    if (u->scaled) {
        u->scaled = 0;
        as_ready(&f->as, simtime_to_s(evq_now(f->q)));
    }
    u->ev = f->c.fault.failures ? at(f, fault_next_failure_s(&f->c.fault, u->rng), on_fail, i) : 0;
    f->ops.up(f->ops.ctx, i);
    arm_pause(f, i);
}

/* Unit I starts now: ready after DELAY_S plus its cold start. */
static void start(fleet *f, int i, double delay_s)
{
    double s = delay_s + (f->c.cold ? cold_load_s(&f->c.cs, f->c.weight_bytes) : 0);
    set_state(f, i, UNIT_STARTING);
    f->u[i].ev = at(f, s, on_ready, i);
}

static void on_ready(evq *q, void *subject, int64_t arg)
{
    (void) q;
    fleet *f = subject;
    f->u[arg].ev = 0;
    come_up(f, (int) arg);
}

static void on_repaired(evq *q, void *subject, int64_t arg)
{
    (void) q;
    fleet *f = subject;
    f->u[arg].ev = 0;
    start(f, (int) arg, 0);
}

/* Unit I is released (OFF) now. */
static void release(fleet *f, int i)
{
    unit *u = &f->u[i];
    evq_cancel(f->q, u->ev);
    u->ev = 0;
    set_state(f, i, UNIT_OFF);
    if (f->c.autoscale)
        as_released(&f->as, simtime_to_s(evq_now(f->q)));
}

static void on_fail(evq *q, void *subject, int64_t arg)
{
    (void) q;
    fleet *f = subject;
    int i = (int) arg;
    unit *u = &f->u[i];
    u->ev = 0;
    unit_state was = u->state;
    f->failures++;
    f->ops.down(f->ops.ctx, i, 1);
    if (was == UNIT_DRAINING) {      /* it was leaving anyway */
        release(f, i);
        return;
    }
    set_state(f, i, UNIT_DOWN);
    u->ev = at(f, fault_repair_s(&f->c.fault, u->rng), on_repaired, i);
}

/* The OOM kill of unit ARG (fleet_kill): down with its requests, then a start. */
static void on_kill(evq *q, void *subject, int64_t arg)
{
    (void) q;
    fleet *f = subject;
    int i = (int) arg;
    unit *u = &f->u[i];
    u->ev = 0;
    u->killing = 0;
    unit_state was = u->state;
    f->oom_kills++;
    f->ops.down(f->ops.ctx, i, 2);
    if (was == UNIT_DRAINING) {
        release(f, i);
        return;
    }
    set_state(f, i, UNIT_DOWN);
    start(f, i, 0);
}

void fleet_kill(fleet *f, int i)
{
    if (i < 0 || i >= f->n) return;
    unit *u = &f->u[i];
    if (u->killing || (u->state != UNIT_UP && u->state != UNIT_DRAINING)) return;
    evq_cancel(f->q, u->ev);   /* its next failure */
    u->killing = 1;
    u->ev = at(f, 0, on_kill, i);
}

void fleet_drained(fleet *f, int u)
{
    if (u >= 0 && u < f->n && f->u[u].state == UNIT_DRAINING)
        release(f, u);
}

/* Stops K units for a scale-down: failed ones first, then ones restarting after
 * a repair, then idle ones, then busy ones (which drain); highest index first. */
static void stop_units(fleet *f, int k)
{
    for (int pass = 0; pass < 4 && k > 0; pass++)
        for (int i = f->n - 1; i >= 0 && k > 0; i--) {
            unit *u = &f->u[i];
            int take = pass == 0 ? u->state == UNIT_DOWN
                     : pass == 1 ? u->state == UNIT_STARTING && !u->scaled
                     : pass == 2 ? u->state == UNIT_UP && f->ops.held(f->ops.ctx, i) == 0
                     : u->state == UNIT_UP;
            if (!take)
                continue;
            k--;
            if (u->state == UNIT_UP) {
                evq_cancel(f->q, u->ev);      /* its next failure */
                u->ev = 0;
                f->ops.down(f->ops.ctx, i, 0);
                set_state(f, i, UNIT_DRAINING);
                if (f->ops.held(f->ops.ctx, i) == 0)
                    release(f, i);
            } else {
                release(f, i);
            }
        }
}

static void on_evaluate(evq *q, void *subject, int64_t arg)
{
    (void) q;
    (void) arg;
    fleet *f = subject;
    double now = simtime_to_s(evq_now(f->q));
    as_decision d = as_evaluate(&f->as, now, f->ops.load(f->ops.ctx, f->c.as.metric));
    for (int i = 0; i < f->n && d.start > 0; i++)
        if (f->u[i].state == UNIT_OFF) {
            f->u[i].scaled = 1;
            start(f, i, f->c.as.provision_s);
            d.start--;
        }
    if (d.stop > 0)
        stop_units(f, d.stop);
    if (at(f, f->c.as.interval_s, on_evaluate, 0) == 0)
        return;
}

double fleet_unit_bytes(void)
{
    return (double) (sizeof(unit) + sizeof(gsl_rng) + gsl_rng_mt19937->size + 2 * evq_event_bytes() + 64);
}

/* The stall report's name of a fleet event (evq_namer). */
static int name_event(evq_handler h, const void *subject, char *buf, size_t n)
{
    const char *what = h == on_fail ? "fail_after_s (a unit's failures)"
                     : h == on_repaired ? "repair_s (a unit's repairs)"
                     : h == on_ready ? "a unit coming up (repair_s, provision_s, startup_s)"
                     : h == on_pause ? "pause_every_s, pause_s (a unit's pauses)"
                     : h == on_evaluate ? "autoscale_interval_s (the autoscaler's evaluations)" : NULL;
    if (!what) return 0;
    snprintf(buf, n, "[%s] %s", ((const fleet *) subject)->name, what);
    /* Failures, pauses and evaluations renew themselves; repairs and restarts follow failures. */
    return h == on_fail || h == on_pause || h == on_evaluate ? EVQ_NAME_PERIOD : EVQ_NAME_OTHER;
}

fleet *fleet_new(const fleet_cfg *c, evq *q, uint64_t seed, const char *name,
                 const fleet_units *ops)
{
    fleet *f = calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    f->c = *c;
    f->q = q;
    f->ops = *ops;
    snprintf(f->name, sizeof f->name, "%s", name);
    evq_add_namer(q, name_event);
    f->n = c->autoscale ? c->as.max_replicas : c->units;
    f->initial = c->units;
    if (c->autoscale) {
        /* The pool's own count, within [min, max]. */
        as_init(&f->as, &c->as, c->units, 0);
        f->initial = f->as.up;
    }
    f->u = calloc((size_t) (f->n > 0 ? f->n : 1), sizeof *f->u);
    if (f->u == NULL)
        goto oom;
    f->count[UNIT_OFF] = f->n;
    f->t = evq_now(q);
    for (int i = 0; i < f->n; i++) {
        char sname[160];
        snprintf(sname, sizeof sname, "%s/unit %d", name, i);
        if ((f->u[i].rng = rng_stream(seed, sname)) == NULL)
            goto oom;
    }
    for (int i = 0; i < f->initial; i++) {
        set_state(f, i, UNIT_UP);
        if (c->fault.failures)
            f->u[i].ev = at(f, fault_next_failure_s(&c->fault, f->u[i].rng), on_fail, i);
        arm_pause(f, i);
    }
    if (c->autoscale)
        at(f, c->as.interval_s, on_evaluate, 0);
    if (f->oom)
        goto oom;
    return f;
oom:
    fleet_free(f);
    return NULL;
}

void fleet_free(fleet *f)
{
    if (f == NULL)
        return;
    if (f->u != NULL)
        for (int i = 0; i < f->n; i++)
            if (f->u[i].rng != NULL)
                gsl_rng_free(f->u[i].rng);
    free(f->u);
    free(f);
}

int fleet_max_units(const fleet *f) { return f->n; }
int fleet_initial_up(const fleet *f) { return f->initial; }
unit_state fleet_state(const fleet *f, int u) { return f->u[u].state; }
int fleet_oom(const fleet *f) { return f->oom; }
double fleet_up_area(fleet *f)
{
    advance(f);
    return f->up_area;
}

int fleet_up(const fleet *f) { return f->count[UNIT_UP]; }

double fleet_contention(const fleet *f, double busy, double *cpu, simtime_t *cpu_t)
{
    const fleet_cfg *c = &f->c;
    int up = fleet_up(f);
    simtime_t now = evq_now(f->q);
    double w = 1 - exp(-(double) (now - *cpu_t) / 10e9);
    *cpu += w * ((up > 0 ? busy / up : 1) - *cpu);
    *cpu_t = now;
    return 1 - c->contention_share + c->contention_share * contention_factor(&c->cc, *cpu);
}

int fleet_pick_slow(const fleet_cfg *c, uint64_t seed, const char *pool, int n, unsigned char *slow)
{
    char name[96];
    snprintf(name, sizeof name, "pool %s/slow", pool);
    gsl_rng *r = rng_stream(seed, name);
    if (!r) return -1;
    fault_pick_slow(&c->fault, n, r, slow);
    gsl_rng_free(r);
    return 0;
}
int fleet_running(const fleet *f) { return paid_now(f); }

void fleet_window_open(fleet *f)
{
    advance(f);
    f->up0 = f->up_area;
    f->paid0 = f->paid_area;
    f->avail0 = f->avail_area;
    f->powered0 = f->powered_area;
    f->failures0 = f->failures;
    f->oom_kills0 = f->oom_kills;
    f->ups0 = f->as.ups;
    f->downs0 = f->as.downs;
    f->t_open = evq_now(f->q);
}

void fleet_window_close(fleet *f)
{
    advance(f);
    fleet_result *r = &f->res;
    double span = (double) (evq_now(f->q) - f->t_open);
    double avail = f->avail_area - f->avail0;
    r->availability = avail > 0 ? (f->up_area - f->up0) / avail : 1;
    r->running_s = (f->paid_area - f->paid0) / 1e9;
    r->powered_s = (f->powered_area - f->powered0) / 1e9;
    r->up_mean = span > 0 ? (f->up_area - f->up0) / span : f->count[UNIT_UP];
    r->failures = f->failures - f->failures0;
    r->oom_kills = f->oom_kills - f->oom_kills0;
    r->scale_ups = f->as.ups - f->ups0;
    r->scale_downs = f->as.downs - f->downs0;
    r->up_now = f->count[UNIT_UP];
    f->closed = 1;
}

void fleet_results(const fleet *f, fleet_result *out)
{
    *out = f->res;
}

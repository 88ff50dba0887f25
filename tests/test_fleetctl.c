/* test_fleetctl.c -- tests of sim/fleet/fleet.c, the controller of a pool's units,
 * against a stub station on a real event calendar: availability of units that
 * fail and are repaired, an autoscaled step load (ready no sooner than the
 * provisioning delay plus the cold start after the threshold is crossed; paid
 * unit-seconds equal the integral of running units), draining, determinism. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "engine/evq.h"
#include "fleet/fleet.h"

#define NU 64
typedef struct stub {
    evq *q;
    int up[NU];              /* 1 while the unit may take requests */
    uint64_t held[NU];       /* requests each holds */
    int downs_failed, downs_drain;
    double first_up_s[NU];   /* when each unit first came up after time 0 (NAN: never) */
    double load;             /* what the autoscaler is told */
} stub;

static void s_down(void *ctx, int u, int failed)
{
    stub *s = ctx;
    s->up[u] = 0;
    if (failed) s->downs_failed++;
    else s->downs_drain++;
}
static void s_up(void *ctx, int u)
{
    stub *s = ctx;
    s->up[u] = 1;
    if (isnan(s->first_up_s[u]))
        s->first_up_s[u] = simtime_to_s(evq_now(s->q));
}
static uint64_t s_held(void *ctx, int u) { return ((stub *) ctx)->held[u]; }
static double s_load(void *ctx, as_metric m) { (void) m; return ((stub *) ctx)->load; }

static fleet_units ops_for(stub *s)
{
    return (fleet_units) { .ctx = s, .down = s_down, .up = s_up, .held = s_held, .load = s_load };
}

static void stub_init(stub *s, evq *q)
{
    memset(s, 0, sizeof *s);
    s->q = q;
    for (int i = 0; i < NU; i++)
        s->first_up_s[i] = NAN;
}

static void parse(dist *d, const char *spec)
{
    char err[256];
    cr_assert_eq(dist_parse(d, spec, NULL, err, sizeof err), 0, "%s", err);
}

Test(fleetctl, availability_of_failing_units)
{
    evq *q = evq_new();
    stub s;
    stub_init(&s, q);
    fleet_cfg c = { .units = 50 };
    c.fault.failures = 1;
    c.fault.slow_factor = 1;
    parse(&c.fault.fail_after_s, "exp(mean=100)");
    parse(&c.fault.repair_s, "exp(mean=10)");
    fleet_units o = ops_for(&s);
    fleet *f = fleet_new(&c, q, 1, "pool gpu", &o);
    cr_assert_not_null(f);
    cr_assert_eq(fleet_initial_up(f), 50);
    fleet_window_open(f);
    evq_run(q, simtime_from_s(20000));
    fleet_window_close(f);
    fleet_result r;
    fleet_results(f, &r);
    /* About 50 x 20000 / 110 = 9090 cycles: the share of time up has sd about
     * 1414 / (12100 sqrt(9090)) = 1.2e-3 (see test_fleet.c); 4 sd = 0.005. */
    cr_assert_float_eq(r.availability, 100.0 / 110, 0.005, "availability %g", r.availability);
    cr_assert_float_eq(r.up_mean, 50 * 100.0 / 110, 50 * 0.005);
    cr_assert_float_eq((double) r.failures, 9090.0, 4 * sqrt(9090.0) + 100, "failures %llu avail %g", (unsigned long long) r.failures, r.availability);
    cr_assert_eq(s.downs_failed, (int) r.failures);
    /* Paid for: the units running, i.e. up (no cold start: a repaired unit is up
     * at once); the window ends at the last event before 20000 s. */
    cr_assert_float_eq(r.running_s, r.up_mean * simtime_to_s(evq_now(q)), 1e-6 * r.running_s);
    cr_assert_gt(simtime_to_s(evq_now(q)), 19900);
    /* The stub's view agrees with the controller's: a failed or restarting unit
     * was told to stop, a repaired one to start again (units never failed are
     * up from the start without being told). */
    for (int i = 0; i < 50; i++) {
        unit_state st = fleet_state(f, i);
        if (st == UNIT_DOWN || st == UNIT_STARTING)
            cr_assert_eq(s.up[i], 0, "unit %d", i);
        else if (!isnan(s.first_up_s[i]))
            cr_assert_eq(s.up[i], 1, "unit %d", i);
    }
    fleet_free(f);
    fault_free(&c.fault);
    evq_free(q);
}

/* Drives an autoscaled pool with the step load of test_autoscale.c: 4 requests
 * until 100 s, 12 until 400 s, then 2 (target 2 per unit).  Returns the result. */
static void step_run(fleet_result *r, double *first_new_up, stub *s)
{
    evq *q = evq_new();
    stub_init(s, q);
    fleet_cfg c = { .units = 2, .autoscale = 1, .cold = 1 };
    c.as = (as_cfg) { .metric = AS_QUEUE, .target = 2, .min_replicas = 1, .max_replicas = 8,
                      .interval_s = 15, .provision_s = 40, .cooldown_s = 120 };
    c.cs = (cold_cfg) { .storage_gbs = 7.0, .startup_s = 0, .cold_factor = 1 };
    c.weight_bytes = 7e9;                        /* 1 s from NVMe */
    c.fault.slow_factor = 1;
    fleet_units o = ops_for(s);
    fleet *f = fleet_new(&c, q, 1, "pool gpu", &o);
    cr_assert_not_null(f);
    cr_assert_eq(fleet_max_units(f), 8);
    cr_assert_eq(fleet_initial_up(f), 2);
    fleet_window_open(f);
    s->load = 4;
    evq_run(q, simtime_from_s(100));
    s->load = 12;
    evq_run(q, simtime_from_s(400));
    s->load = 2;
    evq_run(q, simtime_from_s(900));
    fleet_window_close(f);
    fleet_results(f, r);
    *first_new_up = s->first_up_s[2];
    cr_assert_eq(fleet_running(f), 1);
    fleet_free(f);
    evq_free(q);
}

Test(fleetctl, step_load_autoscaled)
{
    fleet_result r;
    double first;
    stub s;
    step_run(&r, &first, &s);
    /* Threshold crossed at 100 s; evaluated at 105 s; ready 40 s + 1 s later. */
    cr_assert_geq(first, 100 + 40);
    cr_assert_float_eq(first, 146, 1e-9);
    cr_assert_eq(r.scale_ups, 1);
    cr_assert_eq(r.scale_downs, 1);
    cr_assert_eq(s.downs_drain, 5);
    cr_assert_eq(r.up_now, 1);
    /* Paid: 2 units until 105 s, 6 until the scale-down at 405 s, then 1. */
    cr_assert_float_eq(r.running_s, 2 * 105 + 6 * 300 + 1 * 495, 1e-6);
    /* Up: 2 until 146 s, 6 until 405 s, 1 after. */
    cr_assert_float_eq(r.up_mean * 900, 2 * 146 + 6 * 259 + 1 * 495, 1e-6);
    cr_assert_eq(r.availability, 1);
    /* The same run again gives the same numbers. */
    fleet_result r2;
    double first2;
    step_run(&r2, &first2, &s);
    cr_assert_eq(memcmp(&r, &r2, sizeof r), 0);
}

Test(fleetctl, draining_unit_released_when_empty)
{
    evq *q = evq_new();
    stub s;
    stub_init(&s, q);
    fleet_cfg c = { .units = 3, .autoscale = 1 };
    c.as = (as_cfg) { .metric = AS_QUEUE, .target = 1, .min_replicas = 1, .max_replicas = 3,
                      .interval_s = 10, .provision_s = 0, .cooldown_s = 0 };
    c.fault.slow_factor = 1;
    s.held[0] = 1;
    s.held[1] = 0;
    s.held[2] = 4;
    s.load = 1;                                  /* wants 1: two must go */
    fleet_units o = ops_for(&s);
    fleet *f = fleet_new(&c, q, 1, "pool cpu", &o);
    cr_assert_not_null(f);
    evq_run(q, simtime_from_s(10));
    /* Idle unit 1 goes first (released at once), then the highest busy one, 2,
     * which drains. */
    cr_assert_eq(fleet_state(f, 1), UNIT_OFF);
    cr_assert_eq(fleet_state(f, 2), UNIT_DRAINING);
    cr_assert_eq(fleet_state(f, 0), UNIT_UP);
    cr_assert_eq(fleet_running(f), 2);
    fleet_drained(f, 2);
    cr_assert_eq(fleet_state(f, 2), UNIT_OFF);
    cr_assert_eq(fleet_running(f), 1);
    fleet_free(f);
    evq_free(q);
}

/* test_autoscale.c -- tests of sim/fleet/autoscale.c: under a step increase in load
 * the replicas added are ready no sooner than the provisioning delay after the
 * threshold is crossed; scale-down waits for the cooldown; the replica-seconds
 * paid for equal the integral of the running count; bad configurations. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "fleet/autoscale.h"

static as_cfg base(void)
{
    return (as_cfg) { .metric = AS_QUEUE, .target = 2, .min_replicas = 1, .max_replicas = 8,
                      .interval_s = 15, .provision_s = 40, .cooldown_s = 120 };
}

/* The load: 4 requests in the pool until T_UP, 12 until T_DOWN, then 2. */
#define T_UP 100.0
#define T_DOWN 400.0
static double load_at(double t) { return t < T_UP ? 4 : t < T_DOWN ? 12 : 2; }

Test(autoscale, step_load_provisioning_delay_cooldown_and_cost)
{
    as_cfg c = base();
    autoscaler a;
    as_init(&a, &c, 2, 0);
    double ready_at[64];           /* pending ready times, s */
    int npending = 0;
    double first_ready = INFINITY, first_stop = INFINITY, cost = 0, prev = 0;
    int running = a.up;            /* starting + up + draining, counted here independently */
    for (double t = 0; t <= 900; t += 1) {
        cost += running * (t - prev);
        prev = t;
        for (int i = 0; i < npending; i++)
            if (ready_at[i] <= t) {
                as_ready(&a, t);
                if (t < first_ready) first_ready = t;
                ready_at[i--] = ready_at[--npending];
            }
        if (fmod(t, c.interval_s) == 0) {
            as_decision d = as_evaluate(&a, t, load_at(t));
            cr_assert_eq(d.desired, t < T_UP ? 2 : t < T_DOWN ? 6 : 1, "t %g", t);
            for (int k = 0; k < d.start; k++)
                ready_at[npending++] = t + c.provision_s;
            running += d.start;
            if (d.stop > 0 && t < first_stop) first_stop = t;
            /* Draining replicas here hold nothing: released at once. */
            for (int k = 0; k < d.stop; k++) {
                as_released(&a, t);
                running--;
            }
        }
        cr_assert_eq(a.starting + a.up + a.draining, running);
    }
    as_advance(&a, 900);
    /* The threshold is crossed at 100 s; the first evaluation after it is at
     * 105 s, so the new replicas are ready at 145 s >= 100 + 40. */
    cr_assert_geq(first_ready, T_UP + c.provision_s);
    cr_assert_eq(first_ready, 145);
    cr_assert_eq(a.up, 1);
    cr_assert_eq(a.ups, 1);
    cr_assert_eq(a.downs, 1);
    /* Scale-down: load falls at 400 s, the evaluation at 405 s is 300 s after the
     * last scale event (105 s), beyond the 120 s cooldown. */
    cr_assert_eq(first_stop, 405);
    /* Cost: the integral counted step by step here. */
    cr_assert_float_eq(as_running_seconds(&a), cost, 1e-9);
    /* And by hand: 2 x 105 + 6 x (405 - 105) + 1 x (900 - 405). */
    cr_assert_float_eq(cost, 2 * 105 + 6 * 300 + 1 * 495, 1e-9);
    /* Up replicas: 2 until 145, 6 until 405, then 1. */
    cr_assert_float_eq(a.up_area, 2 * 145 + 6 * 260 + 1 * 495, 1e-9);
}

Test(autoscale, cooldown_blocks_an_early_scale_down)
{
    as_cfg c = base();
    autoscaler a;
    as_init(&a, &c, 1, 0);
    as_decision d = as_evaluate(&a, 0, 8);       /* up to 4 */
    cr_assert_eq(d.start, 3);
    for (int i = 0; i < 3; i++) as_ready(&a, 40);
    d = as_evaluate(&a, 60, 0);                  /* 60 s after the scale-up < 120 */
    cr_assert_eq(d.stop, 0);
    cr_assert_eq(a.up, 4);
    d = as_evaluate(&a, 120, 0);                 /* exactly the cooldown: allowed */
    cr_assert_eq(d.stop, 3);
    cr_assert_eq(a.up, 1);
    cr_assert_eq(a.draining, 3);
}

Test(autoscale, targets_min_max_and_scale_to_zero)
{
    as_cfg c = base();
    c.metric = AS_UTILIZATION;
    c.target = 0.7;
    c.min_replicas = 0;
    c.cooldown_s = 0;
    autoscaler a;
    as_init(&a, &c, 3, 0);
    /* 2.1 busy replicas at target 0.7 is exactly 3: no change. */
    as_decision d = as_evaluate(&a, 0, 2.1);
    cr_assert_eq(d.desired, 3);
    cr_assert_eq(d.start + d.stop, 0);
    d = as_evaluate(&a, 15, 100);                /* capped by max */
    cr_assert_eq(d.desired, 8);
    cr_assert_eq(d.start, 5);
    for (int i = 0; i < 5; i++) as_ready(&a, 55);
    d = as_evaluate(&a, 60, 0);                  /* idle: to zero */
    cr_assert_eq(d.desired, 0);
    cr_assert_eq(d.stop, 8);
    cr_assert_eq(a.up, 0);
    d = as_evaluate(&a, 75, 0.01);               /* any load: one replica */
    cr_assert_eq(d.desired, 1);
    cr_assert_eq(d.start, 1);
}

Test(autoscale, bad_configurations)
{
    const char *key;
    char err[128];
    as_cfg c = base();
    cr_assert_eq(as_check(&c, &key, err, sizeof err), 0);
    c.min_replicas = 9;
    cr_assert_eq(as_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "min_replicas");
    cr_assert_str_eq(err, "min_replicas 9 is above max_replicas 8");
    c = base();
    c.provision_s = -1;
    cr_assert_eq(as_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "provision_s");
    c = base();
    c.cooldown_s = -5;
    cr_assert_eq(as_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "cooldown_s");
    c = base();
    c.metric = AS_KV;
    c.target = 1.5;
    cr_assert_eq(as_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "autoscale_target");
    c = base();
    c.interval_s = 0;
    cr_assert_eq(as_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "autoscale_interval_s");
    as_metric m;
    cr_assert_eq(as_metric_parse("kv", &m), 0);
    cr_assert_eq(m, AS_KV);
    cr_assert_eq(as_metric_parse("cpu", &m), -1);
}

/* test_fleet.c -- tests of the fleet models that stand alone: cold starts
 * (sim/fleet/coldstart.c), failures, repairs, slow nodes and pauses (sim/fleet/fault.c),
 * the CPU-contention curve (sim/fleet/contention.c), and client retries with backoff
 * (sim/core/retry.c): the numbers each gives, and the bad input each refuses. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "fleet/coldstart.h"
#include "fleet/contention.h"
#include "fleet/fault.h"
#include "core/retry.h"
#include "engine/rng.h"

static char err[256];
static const char *key;

Test(coldstart, seeds_case_nvme_vs_network)
{
    cold_cfg c = { .startup_s = 0, .cold_factor = 4, .cold_requests = 10 };
    cr_assert_eq(cold_preset("nvme", &c.storage_gbs), 0);
    /* A 2.1 GB model: 0.3 s from local NVMe ... */
    cr_assert_float_eq(cold_load_s(&c, 2.1e9), 0.30, 1e-12);
    cr_assert_eq(cold_preset("network", &c.storage_gbs), 0);
    /* ... and 2.0 s from a gp3 volume at 1000 MiB/s (the seeds: 0.3 s -> 2.1 s). */
    cr_assert_float_eq(cold_load_s(&c, 2.1e9), 2.1e9 / (1000 * 1048576.0), 1e-12);
    cr_assert(cold_load_s(&c, 2.1e9) > 1.9 && cold_load_s(&c, 2.1e9) < 2.1);
    cr_assert_eq(cold_preset("network_baseline", &c.storage_gbs), 0);
    cr_assert_float_eq(c.storage_gbs, 0.131072, 1e-12);
    cr_assert_eq(cold_preset("floppy", &c.storage_gbs), -1);
    c.startup_s = 5;
    cr_assert_float_eq(cold_load_s(&c, 0), 5, 1e-12);
    /* The first 10 requests after a start are slow by 4x, then warm. */
    cr_assert_eq(cold_factor(&c, 0), 4);
    cr_assert_eq(cold_factor(&c, 9), 4);
    cr_assert_eq(cold_factor(&c, 10), 1);
    cr_assert_eq(cold_check(&c, &key, err, sizeof err), 0);
    c.cold_factor = 0.5;
    cr_assert_eq(cold_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "cold_factor");
    c.cold_factor = 1;
    c.startup_s = -1;
    cr_assert_eq(cold_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "startup_s");
    c.startup_s = 0;
    c.storage_gbs = 0;
    cr_assert_eq(cold_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "storage_gbs");
}

static void parse(dist *d, const char *spec)
{
    cr_assert_eq(dist_parse(d, spec, NULL, err, sizeof err), 0, "%s: %s", spec, err);
}

Test(fault, availability_of_the_alternating_process)
{
    fault_cfg c = { .failures = 1, .slow_factor = 1 };
    parse(&c.fail_after_s, "exp(mean=100)");
    parse(&c.repair_s, "exp(mean=10)");
    cr_assert_eq(fault_check(&c, &key, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(fault_availability(&c), 100.0 / 110, 1e-12);
    /* N up/down cycles drawn as a replica would: the share of time up.  Its sd
     * is about sqrt(Var U x 10^2 + Var R x 100^2) x sqrt(N) / (110^2 N) =
     * 1414 / (12100 sqrt(N)) = 8.3e-4 at N = 20000; 4 sd = 0.0033. */
    gsl_rng *r = rng_stream(3, "replica 0");
    double up = 0, down = 0;
    for (int i = 0; i < 20000; i++) {
        up += fault_next_failure_s(&c, r);
        down += fault_repair_s(&c, r);
    }
    cr_assert_float_eq(up / (up + down), 100.0 / 110, 0.0033);
    gsl_rng_free(r);
    fault_free(&c);
}

Test(fault, bad_input)
{
    fault_cfg c = { .failures = 1, .slow_factor = 1 };
    parse(&c.fail_after_s, "const(0)");          /* mean 0: fails at once, forever */
    parse(&c.repair_s, "const(0)");              /* instant restart is allowed */
    cr_assert_eq(fault_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "fail_after_s");
    cr_assert_neq(strstr(err, "must be > 0"), NULL, "%s", err);
    fault_free(&c);
    parse(&c.fail_after_s, "uniform(min=10, max=20)");
    parse(&c.repair_s, "const(0)");
    cr_assert_eq(fault_check(&c, &key, err, sizeof err), 0, "%s", err);
    c.slow_fraction = 1.5;
    cr_assert_eq(fault_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "slow_fraction");
    c.slow_fraction = 0.1;
    c.slow_factor = 0.9;
    cr_assert_eq(fault_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "slow_factor");
    c.slow_factor = 2;
    c.pauses = 1;
    parse(&c.pause_every_s, "exp(mean=30)");
    parse(&c.pause_s, "const(0)");
    cr_assert_eq(fault_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "pause_s");
    fault_policy p;
    cr_assert_eq(fault_policy_parse("retry", &p), 0);
    cr_assert_eq(p, FAULT_RETRY);
    cr_assert_eq(fault_policy_parse("fail", &p), 0);
    cr_assert_eq(p, FAULT_FAIL);
    cr_assert_eq(fault_policy_parse("ignore", &p), -1);
    fault_free(&c);
}

Test(fault, slow_nodes_exact_count_from_own_stream)
{
    fault_cfg c = { .slow_fraction = 0.25, .slow_factor = 3 };
    unsigned char a[16], b[16], d[16];
    gsl_rng *r1 = rng_stream(1, "pool gpu/slow"), *r2 = rng_stream(1, "pool gpu/slow"),
            *r3 = rng_stream(2, "pool gpu/slow");
    cr_assert_eq(fault_pick_slow(&c, 16, r1, a), 4);
    cr_assert_eq(fault_pick_slow(&c, 16, r2, b), 4);
    cr_assert_eq(memcmp(a, b, 16), 0, "same seed, same slow replicas");
    int n = 0, differ = 0;
    for (int seed = 2; seed < 12 && !differ; seed++) {
        gsl_rng_free(r3);
        r3 = rng_stream((uint64_t) seed, "pool gpu/slow");
        fault_pick_slow(&c, 16, r3, d);
        differ = memcmp(a, d, 16) != 0;
    }
    cr_assert(differ, "other seeds pick other replicas");
    for (int i = 0; i < 16; i++) n += a[i];
    cr_assert_eq(n, 4);
    c.slow_fraction = 0.01;                      /* round(0.16) = 0 */
    cr_assert_eq(fault_pick_slow(&c, 16, r1, a), 0);
    c.slow_fraction = 1;
    cr_assert_eq(fault_pick_slow(&c, 3, r1, a), 3);
    cr_assert(a[0] && a[1] && a[2]);
    gsl_rng_free(r1);
    gsl_rng_free(r2);
    gsl_rng_free(r3);
}

Test(contention, default_curve_from_the_seeds)
{
    contention_curve c;
    cr_assert_eq(contention_parse(&c, CONTENTION_DEFAULT, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.n, 4);
    cr_assert_float_eq(contention_factor(&c, 0.0), 1, 1e-12);
    cr_assert_float_eq(contention_factor(&c, 0.5), 1, 1e-12);
    cr_assert_float_eq(contention_factor(&c, 0.7), 1, 1e-12);
    cr_assert_float_eq(contention_factor(&c, 0.75), 2, 1e-12);
    cr_assert_float_eq(contention_factor(&c, 0.8), 3, 1e-12);
    cr_assert_float_eq(contention_factor(&c, 0.9), 4, 1e-12);
    cr_assert_float_eq(contention_factor(&c, 1.0), 5, 1e-12);
    cr_assert_float_eq(contention_factor(&c, 1.7), 5, 1e-12);
    cr_assert_float_eq(contention_factor(&c, -1), 1, 1e-12);
    /* Beyond 70 % the seeds' 3-5x. */
    for (double u = 0.8; u <= 1.0; u += 0.01)
        cr_assert(contention_factor(&c, u) >= 3 - 1e-12 && contention_factor(&c, u) <= 5 + 1e-12);
    cr_assert_eq(contention_swap(10, 8, 5), 5);
    cr_assert_eq(contention_swap(8, 8, 5), 1);
}

Test(contention, bad_curves)
{
    contention_curve c;
    cr_assert_eq(contention_parse(&c, "0:1, 0.8:3, 0.9:2", err, sizeof err), -1);
    cr_assert_str_eq(err, "not increasing: factor 2 at 0.9 is below 3 at 0.8");
    cr_assert_eq(contention_parse(&c, "0:1, 0.8:3, 0.8:4", err, sizeof err), -1);
    cr_assert_str_eq(err, "not increasing: utilisation 0.8 follows 0.8");
    cr_assert_eq(contention_parse(&c, "0:1, 1.5:3", err, sizeof err), -1);
    cr_assert_eq(contention_parse(&c, "0:0.5, 1:3", err, sizeof err), -1);
    cr_assert_eq(contention_parse(&c, "0:1", err, sizeof err), -1);
    cr_assert_eq(contention_parse(&c, "0=1, 1=2", err, sizeof err), -1);
    cr_assert_eq(contention_parse(&c, "", err, sizeof err), -1);
}

Test(retry, backoff_sequence_and_jitter)
{
    retry_cfg c = { .timeout_ms = 1000, .retries = 4, .backoff_ms = 100, .multiplier = 2,
                    .backoff_max_ms = 500, .jitter = 0 };
    cr_assert_eq(retry_check(&c, &key, err, sizeof err), 0, "%s", err);
    const double want[] = {100, 200, 400, 500, 500};
    for (int k = 1; k <= 5; k++)
        cr_assert_float_eq(retry_backoff_ms(&c, k, NULL), want[k - 1], 1e-12);
    /* Full jitter: uniform on [0, w], mean w / 2.  N = 40000 draws at w = 400:
     * sd of the mean 400 / sqrt(12 N) = 0.577; 4 sd = 2.3. */
    c.jitter = 1;
    gsl_rng *r = rng_stream(5, "client");
    double sum = 0;
    for (int i = 0; i < 40000; i++) {
        double w = retry_backoff_ms(&c, 3, r);
        cr_assert(w >= 0 && w <= 400);
        sum += w;
    }
    cr_assert_float_eq(sum / 40000, 200, 2.3);
    gsl_rng_free(r);
}

Test(retry, bad_input)
{
    retry_cfg c = { .timeout_ms = 0, .retries = 3, .backoff_ms = 100, .multiplier = 2,
                    .backoff_max_ms = 500 };
    cr_assert_eq(retry_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "retries");
    c.timeout_ms = 100;
    c.backoff_ms = -1;
    cr_assert_eq(retry_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "backoff_ms");
    c.backoff_ms = 100;
    c.backoff_max_ms = 50;
    cr_assert_eq(retry_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "backoff_max_ms");
    c.backoff_max_ms = 500;
    c.multiplier = 0.5;
    cr_assert_eq(retry_check(&c, &key, err, sizeof err), -1);
    cr_assert_str_eq(key, "backoff_multiplier");
}

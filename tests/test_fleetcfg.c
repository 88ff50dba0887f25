/* test_fleetcfg.c -- tests of sim/fleet/fleetcfg.c: a pool's fleet keys read into a
 * fleet_cfg, defaults, and the bad input each check refuses (min above max, a
 * negative delay, a failure distribution with mean 0, keys that need others). */
#include <criterion/criterion.h>

#include <string.h>

#include "fleet/fleetcfg.h"

/* KEY=VALUE pairs, ended by NULL. */
static const char *get(void *ctx, const char *key)
{
    const char *const *kv = ctx;
    for (; kv[0]; kv += 2)
        if (strcmp(kv[0], key) == 0)
            return kv[1];
    return NULL;
}

static char err[256];
static const char *key;

/* Parses KV for a pool of 4 units; returns the return code. */
static int parse(fleet_cfg *f, const char *const *kv, int *any)
{
    err[0] = '\0';
    int rc = fleetcfg_parse(f, get, (void *) kv, NULL, 4, any, &key, err, sizeof err);
    return rc;
}

/* Expects KV to be refused with KEY_WANT at fault and MSG in the message. */
static void refused(const char *const *kv, const char *key_want, const char *msg)
{
    fleet_cfg f;
    int any;
    cr_assert_eq(parse(&f, kv, &any), -1, "accepted; expected an error on %s", key_want);
    cr_assert_not_null(key);
    cr_assert_str_eq(key, key_want, "%s", err);
    cr_assert_neq(strstr(err, msg), NULL, "'%s' lacks '%s'", err, msg);
    fleetcfg_free(&f);
}

Test(fleetcfg, nothing_given_nothing_built)
{
    fleet_cfg f;
    int any = -1;
    const char *kv[] = {"servers", "4", NULL};
    cr_assert_eq(parse(&f, kv, &any), 0);
    cr_assert_eq(any, 0);
    cr_assert_eq(f.autoscale + f.fault.failures + f.cold, 0);
    fleetcfg_free(&f);
}

Test(fleetcfg, full_configuration)
{
    fleet_cfg f;
    int any;
    const char *kv[] = {"fail_after_s", "exp(mean=3600)", "repair_s", "uniform(min=60, max=120)",
                        "on_failure", "fail", "min_replicas", "0", "max_replicas", "16",
                        "autoscale", "kv", "autoscale_target", "0.8", "provision_s", "30",
                        "cooldown_s", "120", "storage", "network", "cold_factor", "4",
                        "cold_requests", "20", NULL};
    cr_assert_eq(parse(&f, kv, &any), 0, "%s: %s", key, err);
    cr_assert_eq(any, 1);
    cr_assert_eq(f.fault.failures, 1);
    cr_assert_float_eq(f.fault.fail_after_s.mean, 3600, 1e-9);
    cr_assert_float_eq(f.fault.repair_s.mean, 90, 1e-9);
    cr_assert_eq(f.fault.on_failure, FAULT_FAIL);
    cr_assert_eq(f.autoscale, 1);
    cr_assert_eq(f.as.metric, AS_KV);
    cr_assert_eq(f.as.min_replicas, 0);
    cr_assert_eq(f.as.max_replicas, 16);
    cr_assert_eq(f.as.target, 0.8);
    cr_assert_eq(f.as.interval_s, 15);
    cr_assert_eq(f.as.provision_s, 30);
    cr_assert_eq(f.as.cooldown_s, 120);
    cr_assert_eq(f.cold, 1);
    cr_assert_float_eq(f.cs.storage_gbs, 1.048576, 1e-12);
    cr_assert_eq(f.cs.cold_factor, 4);
    cr_assert_eq(f.cs.cold_requests, 20);
    fleetcfg_free(&f);
}

Test(fleetcfg, defaults)
{
    fleet_cfg f;
    int any;
    const char *kv[] = {"max_replicas", "8", NULL};
    cr_assert_eq(parse(&f, kv, &any), 0, "%s", err);
    cr_assert_eq(f.as.min_replicas, 1);
    cr_assert_eq(f.as.metric, AS_QUEUE);
    cr_assert_eq(f.as.target, 4);
    cr_assert_eq(f.as.cooldown_s, 300);
    cr_assert_eq(f.fault.on_failure, FAULT_RETRY);
    fleetcfg_free(&f);
    const char *kv2[] = {"min_replicas", "2", NULL};   /* max: the pool's 4 */
    cr_assert_eq(parse(&f, kv2, &any), 0, "%s", err);
    cr_assert_eq(f.as.max_replicas, 4);
    fleetcfg_free(&f);
}

Test(fleetcfg, bad_input)
{
    refused((const char *[]) {"min_replicas", "5", "max_replicas", "3", NULL}, "min_replicas",
            "min_replicas 5 is above max_replicas 3");
    refused((const char *[]) {"max_replicas", "3", "provision_s", "-1", NULL}, "provision_s",
            "must be >= 0");
    refused((const char *[]) {"max_replicas", "3", "cooldown_s", "-30", NULL}, "cooldown_s",
            "must be >= 0");
    refused((const char *[]) {"fail_after_s", "const(0)", NULL}, "fail_after_s",
            "mean time to failure must be > 0");
    refused((const char *[]) {"fail_after_s", "uniform(min=0, max=0)", NULL}, "fail_after_s",
            "must be > 0");
    refused((const char *[]) {"fail_after_s", "exp(mean=0)", NULL}, "fail_after_s",
            "mean must be > 0");
    refused((const char *[]) {"repair_s", "const(5)", NULL}, "repair_s", "needs fail_after_s");
    refused((const char *[]) {"fail_after_s", "exp(mean=10)", "on_failure", "ignore", NULL},
            "on_failure", "unknown value 'ignore'");
    refused((const char *[]) {"provision_s", "30", NULL}, "provision_s",
            "needs min_replicas or max_replicas");
    refused((const char *[]) {"max_replicas", "4", "autoscale", "cpu", NULL}, "autoscale",
            "unknown value 'cpu'");
    refused((const char *[]) {"max_replicas", "4", "autoscale", "utilization",
                              "autoscale_target", "70", NULL}, "autoscale_target", "share in (0, 1]");
    refused((const char *[]) {"max_replicas", "2.5", NULL}, "max_replicas", "whole number");
    refused((const char *[]) {"storage", "tape", NULL}, "storage", "unknown value 'tape'");
    refused((const char *[]) {"cold_factor", "0.5", NULL}, "cold_factor", "must be >= 1");
    refused((const char *[]) {"storage_gbs", "0", NULL}, "storage_gbs", "must be > 0");
}

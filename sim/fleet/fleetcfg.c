/* fleetcfg.c -- reading and checking a pool's fleet keys (see fleetcfg.h). */
#include "fleet/fleetcfg.h"
#include "engine/errmsg.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const fleetcfg_key FLEETCFG_KEYS[] = {
    {"fail_after_s", "none", "each replica's (server's) time to failure, s (distribution; drawn afresh after every repair)"},
    {"repair_s", "const(0)", "time to repair a failed replica, s (distribution)"},
    {"on_failure", "retry", "retry | fail: what happens to the requests a failing replica holds"},
    {"min_replicas", "1", "autoscaling: fewest replicas (0 = scale to zero); giving it turns autoscaling on"},
    {"max_replicas", "replicas", "autoscaling: most replicas (default: the pool's count); giving it turns autoscaling on"},
    {"autoscale", "queue", "autoscaling target metric: queue | utilization | kv"},
    {"autoscale_target", "4 (queue), 0.7", "requests per replica (queue) or share (utilization, kv)"},
    {"autoscale_interval_s", "15", "autoscaling: evaluation interval, s"},
    {"provision_s", "0", "autoscaling: delay from scale-up decision to a ready replica, s (plus the cold start)"},
    {"cooldown_s", "300", "autoscaling: no scale-down within this long of a scale event, s"},
    {"storage", "none", "cold start: weight storage preset nvme | network | network_baseline"},
    {"storage_gbs", "preset", "cold start: weight read bandwidth, GB/s"},
    {"startup_s", "0", "cold start: fixed start-up time besides loading weights, s"},
    {"weights_gb", "0", "generic pools: bytes each server loads at a start, GB (10^9 B): the cold start's load is weights_gb / storage bandwidth "
                        "(llm pools derive theirs from the model, weights and tp)"},
    {"paid_while_down", "no", "yes: a failed replica (server) is paid for while it is repaired; no: cost counts the replicas actually "
                              "running (starting, up, draining)"},
    {"cold_factor", "1", "service-time multiplier of a replica's first requests after a start"},
    {"cold_requests", "0", "how many requests after a start are slow by cold_factor"},
    {"slow_fraction", "0", "share of the replicas (servers) that are slow, chosen once per run"},
    {"slow_factor", "2", "service-time (step-time) multiplier of the slow ones"},
    {"pause_every_s", "none", "generic and llm pools (routers: their own key): running time between a server's pauses (GC, stop-the-world), s (distribution)"},
    {"pause_s", "", "generic and llm pools: length of a pause, s (distribution; required with pause_every_s)"},
    {"contention_share", "0.25", "generic and llm pools: share of the service time that is framework/scheduling overhead "
                                 "(typically 20-30 %), the part cpu_contention multiplies"},
    {"cpu_contention", "none", "generic and llm pools: service- (step-) time multiplier against the busy share of the servers, "
                               "points UTIL:FACTOR increasing (e.g. " CONTENTION_DEFAULT ")"},
    {"memory_gib", "none", "generic pools: host memory limit of the pool's process, GiB; over it, services swap"},
    {"memory_base_gib", "0", "generic pools: resident set with nothing in service, GiB (needs memory_gib or memory_limit_gib)"},
    {"memory_per_request_mib", "0", "generic pools: working set of each request in service, MiB (needs memory_gib or memory_limit_gib)"},
    {"swap_factor", "5", "generic pools: service-time multiplier of a service started over the memory limit "
                         "(5: throughput down 80 %)"},
    {"memory_limit_gib", "none", "generic pools: memory limit of each replica (servers_per_replica servers), GiB: a "
                                 "replica whose working set (memory_base_gib + memory_per_request_mib per request in "
                                 "service) exceeds it is killed: its requests in service fail, and it restarts (the cold start), "
                                 "counted as oom_kills"},
    {"cpu_request_cores", "none", "generic pools: CPU cores each server (replica) requests: its weight when the cores of its "
                                  "node are shared (default: cpu_limit_cores, else 1); service_ms is then CPU time on one core; "
                                  "llm pools: of each replica's cgroup (its steps' CPU parts) and of the front end's "
                                  "(tokenisation); router and result_cache pools: of each of their replicas (pods), "
                                  "overhead_ms / hit_ms / miss_ms being CPU time on one core"},
    {"cpu_limit_cores", "none", "generic pools: CPU limit of each server (replica), cores: CFS quota of limit x cfs_period_ms "
                                "per period, work beyond it waits for the next period (throttling); llm pools: of each "
                                "replica's cgroup (cpu_step_ms, cpu_sample_us_per_seq) and of the front end's "
                                "(cpu_tokenize_us_per_token); router and result_cache pools: of each of their replicas "
                                "(pods), whose overhead_ms / hit_ms / miss_ms then run as CPU jobs"},
    {"cfs_period_ms", "100", "generic, llm, router and result_cache pools: the CFS period the CPU limit's quota is given per, ms (needs cpu_limit_cores)"},
    {"servers_per_replica", "1", "generic pools with CPU keys: servers (worker threads) of one replica (pod), sharing its "
                                 "cgroup: its CPU limit and request"},
    {"node", "none", "generic pools: the [node NAME] the servers run on (llm pools: its replicas and front end; "
                     "router and result_cache pools: their replicas), sharing its cores with its other pools and "
                     "its background_cpu (default: a host of their own with unlimited cores)"},
    {NULL, NULL, NULL},
};

const fleetcfg_key *fleetcfg_find(const char *key)
{
    for (const fleetcfg_key *k = FLEETCFG_KEYS; k->key; k++)
        if (strcmp(k->key, key) == 0)
            return k;
    return NULL;
}

/* Reads KEY as a finite number into *OUT (DEF when absent).  Returns 0, or -1
 * with a message. */
static int num(fleetcfg_get get, void *ctx, const char *key, double def, double *out,
               const char **bad, char *err, size_t errlen)
{
    const char *v = get(ctx, key);
    if (v == NULL) {
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    while (*end && isspace((unsigned char) *end))
        end++;
    if (end == v || *end || errno || !isfinite(d)) {
        *bad = key;
        errmsg_set(err, errlen, "expected a number, got '%s'", v);
        return -1;
    }
    *out = d;
    return 0;
}

/* Reads KEY as a whole number in [LO, HI] (DEF when absent). */
static int whole(fleetcfg_get get, void *ctx, const char *key, int64_t def, int64_t lo, int64_t hi,
                 int64_t *out, const char **bad, char *err, size_t errlen)
{
    double d;
    if (num(get, ctx, key, (double) def, &d, bad, err, errlen) != 0)
        return -1;
    if (d != floor(d) || d < (double) lo || d > (double) hi) {
        *bad = key;
        errmsg_set(err, errlen, "expected a whole number between %lld and %lld, got '%s'",
                   (long long) lo, (long long) hi, get(ctx, key));
        return -1;
    }
    *out = (int64_t) d;
    return 0;
}

static int distribution(fleetcfg_get get, void *ctx, const char *key, const char *def,
                        const char *basedir, dist *out, const char **bad, char *err, size_t errlen)
{
    const char *v = get(ctx, key);
    if (dist_parse(out, v ? v : def, basedir, err, errlen) != 0) {
        *bad = key;
        return -1;
    }
    return 0;
}

/* Does any fleet key appear? */
static int any_given(fleetcfg_get get, void *ctx)
{
    for (const fleetcfg_key *k = FLEETCFG_KEYS; k->key; k++)
        if (get(ctx, k->key) != NULL)
            return 1;
    return 0;
}

int fleetcfg_parse(fleet_cfg *f, fleetcfg_get get, void *ctx, const char *basedir, int units,
                   int *any, const char **key, char *err, size_t errlen)
{
    const char *bad = NULL, *v;
    memset(f, 0, sizeof *f);
    f->units = units;
    f->fault.slow_factor = 1;
    f->cs.cold_factor = 1;
    *any = any_given(get, ctx);
    *key = NULL;
    if (!*any)
        return 0;

    /* Failures. */
    if (get(ctx, "fail_after_s") != NULL) {
        f->fault.failures = 1;
        if (distribution(get, ctx, "fail_after_s", NULL, basedir, &f->fault.fail_after_s, &bad, err, errlen) ||
            distribution(get, ctx, "repair_s", "const(0)", basedir, &f->fault.repair_s, &bad, err, errlen))
            goto fail;
    } else if (get(ctx, "repair_s") != NULL || get(ctx, "on_failure") != NULL) {
        bad = get(ctx, "repair_s") ? "repair_s" : "on_failure";
        errmsg_set(err, errlen, "needs fail_after_s (the time to failure)");
        goto fail;
    }
    if ((v = get(ctx, "paid_while_down")) != NULL) {
        if (!f->fault.failures) {
            bad = "paid_while_down";
            errmsg_set(err, errlen, "needs fail_after_s (the time to failure)");
            goto fail;
        }
        if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1")) f->paid_while_down = 1;
        else if (strcasecmp(v, "no") && strcasecmp(v, "false") && strcmp(v, "0")) {
            bad = "paid_while_down";
            errmsg_set(err, errlen, "expected yes or no, got '%s'", v);
            goto fail;
        }
    }
    if ((v = get(ctx, "on_failure")) != NULL && fault_policy_parse(v, &f->fault.on_failure) != 0) {
        bad = "on_failure";
        errmsg_set(err, errlen, "unknown value '%s' (valid: retry, fail)", v);
        goto fail;
    }
    /* Slow nodes, pauses. */
    if (num(get, ctx, "slow_fraction", 0, &f->fault.slow_fraction, &bad, err, errlen) ||
        num(get, ctx, "slow_factor", 2, &f->fault.slow_factor, &bad, err, errlen))
        goto fail;
    if (get(ctx, "pause_every_s") != NULL) {
        f->fault.pauses = 1;
        if (get(ctx, "pause_s") == NULL) {
            bad = "pause_s";
            errmsg_set(err, errlen, "missing: pause_every_s needs pause_s (the length of a pause)");
            goto fail;
        }
        if (distribution(get, ctx, "pause_every_s", NULL, basedir, &f->fault.pause_every_s, &bad, err, errlen) ||
            distribution(get, ctx, "pause_s", NULL, basedir, &f->fault.pause_s, &bad, err, errlen))
            goto fail;
    } else if (get(ctx, "pause_s") != NULL) {
        bad = "pause_s";
        errmsg_set(err, errlen, "needs pause_every_s (the time between pauses)");
        goto fail;
    }
    if (fault_check(&f->fault, &bad, err, errlen) != 0)
        goto fail;
    /* CPU as a mechanism (cpunode.h): limits, requests, a node. */
    if (cpucfg_parse_pool(&f->cpu, get, ctx, &bad, err, errlen) != 0)
        goto fail;
    if (f->cpu.on && (get(ctx, "cpu_contention") || f->fault.pauses)) {
        bad = get(ctx, "cpu_contention") ? "cpu_contention" : "pause_every_s";
        errmsg_set(err, errlen, "%s", get(ctx, "cpu_contention")
                   ? "a typed-in curve, exclusive with the CPU mechanism (cpu_limit_cores, cpu_request_cores, node): "
                     "give one or the other"
                   : "pauses are not modelled together with the CPU mechanism (cpu_limit_cores, cpu_request_cores, node) yet");
        goto fail;
    }
    if ((v = get(ctx, "cpu_contention")) != NULL) {
        f->contention = 1;
        if (contention_parse(&f->cc, v, err, errlen) != 0) {
            bad = "cpu_contention";
            goto fail;
        }
    }
    if (num(get, ctx, "contention_share", 0.25, &f->contention_share, &bad, err, errlen))
        goto fail;
    if (!(f->contention_share > 0 && f->contention_share <= 1)) {
        bad = "contention_share";
        errmsg_set(err, errlen, "must be a share in (0, 1], got %g", f->contention_share);
        goto fail;
    }
    if (get(ctx, "contention_share") != NULL && !f->contention) {
        bad = "contention_share";
        errmsg_set(err, errlen, "needs cpu_contention (the curve)");
        goto fail;
    }

    /* Memory over the limit (swapping). */
    f->swap_factor = 5;
    if (get(ctx, "memory_limit_gib") != NULL) {   /* a limit that kills (OOM), not swapping */
        f->oom = 1;
        if (num(get, ctx, "memory_limit_gib", 0, &f->memory_limit_gib, &bad, err, errlen) ||
            num(get, ctx, "memory_base_gib", 0, &f->memory_base_gib, &bad, err, errlen) ||
            num(get, ctx, "memory_per_request_mib", 0, &f->memory_per_request_mib, &bad, err, errlen))
            goto fail;
        if (!(f->memory_limit_gib > 0)) {
            bad = "memory_limit_gib";
            errmsg_set(err, errlen, "must be > 0 (a memory limit, GiB), got %g", f->memory_limit_gib);
            goto fail;
        }
        if (f->memory_base_gib < 0 || f->memory_per_request_mib < 0) {
            bad = f->memory_base_gib < 0 ? "memory_base_gib" : "memory_per_request_mib";
            errmsg_set(err, errlen, "must be >= 0, got %g", f->memory_base_gib < 0 ? f->memory_base_gib : f->memory_per_request_mib);
            goto fail;
        }
        if (get(ctx, "memory_gib") || get(ctx, "swap_factor")) {
            bad = get(ctx, "memory_gib") ? "memory_gib" : "swap_factor";
            errmsg_set(err, errlen, "swapping is for a host without a limit: with memory_limit_gib a replica over "
                       "it is killed (OOM) instead; give one or the other");
            goto fail;
        }
    } else if (get(ctx, "memory_gib") != NULL) {
        f->swap = 1;
        if (num(get, ctx, "memory_gib", 0, &f->memory_gib, &bad, err, errlen) ||
            num(get, ctx, "memory_base_gib", 0, &f->memory_base_gib, &bad, err, errlen) ||
            num(get, ctx, "memory_per_request_mib", 0, &f->memory_per_request_mib, &bad, err, errlen) ||
            num(get, ctx, "swap_factor", 5, &f->swap_factor, &bad, err, errlen))
            goto fail;
        if (!(f->memory_gib > 0)) {
            bad = "memory_gib";
            errmsg_set(err, errlen, "must be > 0 (a memory limit, GiB), got %g", f->memory_gib);
            goto fail;
        }
        if (f->memory_base_gib < 0) {
            bad = "memory_base_gib";
            errmsg_set(err, errlen, "must be >= 0 (GiB), got %g", f->memory_base_gib);
            goto fail;
        }
        if (f->memory_per_request_mib < 0) {
            bad = "memory_per_request_mib";
            errmsg_set(err, errlen, "must be >= 0 (MiB), got %g", f->memory_per_request_mib);
            goto fail;
        }
        if (f->swap_factor < 1) {
            bad = "swap_factor";
            errmsg_set(err, errlen, "must be >= 1 (a slowdown), got %g", f->swap_factor);
            goto fail;
        }
    } else {
        static const char *const MEM_KEYS[] = {"memory_base_gib", "memory_per_request_mib", "swap_factor"};
        for (size_t i = 0; i < sizeof MEM_KEYS / sizeof MEM_KEYS[0]; i++)
            if (get(ctx, MEM_KEYS[i]) != NULL) {
                bad = MEM_KEYS[i];
                errmsg_set(err, errlen, "needs memory_gib (the memory limit)");
                goto fail;
            }
    }

    /* Autoscaling. */
    f->autoscale = get(ctx, "min_replicas") != NULL || get(ctx, "max_replicas") != NULL;
    if (!f->autoscale) {
        static const char *const AS_KEYS[] = {"autoscale", "autoscale_target",
                                              "autoscale_interval_s", "provision_s", "cooldown_s"};
        for (size_t i = 0; i < sizeof AS_KEYS / sizeof AS_KEYS[0]; i++)
            if (get(ctx, AS_KEYS[i]) != NULL) {
                bad = AS_KEYS[i];
                errmsg_set(err, errlen, "autoscaling needs min_replicas or max_replicas");
                goto fail;
            }
    } else {
        int64_t lo, hi;
        as_cfg *a = &f->as;
        if ((v = get(ctx, "autoscale")) != NULL && as_metric_parse(v, &a->metric) != 0) {
            bad = "autoscale";
            errmsg_set(err, errlen, "unknown value '%s' (valid: queue, utilization, kv)", v);
            goto fail;
        }
        if (whole(get, ctx, "min_replicas", 1, -1000000, 1000000, &lo, &bad, err, errlen) ||
            whole(get, ctx, "max_replicas", lo > units ? lo : units, -1000000, 1000000, &hi, &bad, err, errlen) ||
            num(get, ctx, "autoscale_target", a->metric == AS_QUEUE ? 4 : 0.7, &a->target, &bad, err, errlen) ||
            num(get, ctx, "autoscale_interval_s", 15, &a->interval_s, &bad, err, errlen) ||
            num(get, ctx, "provision_s", 0, &a->provision_s, &bad, err, errlen) ||
            num(get, ctx, "cooldown_s", 300, &a->cooldown_s, &bad, err, errlen))
            goto fail;
        a->min_replicas = (int) lo;
        a->max_replicas = (int) hi;
        if (as_check(a, &bad, err, errlen) != 0)
            goto fail;
    }

    /* Cold starts. */
    const char *preset = get(ctx, "storage");
    f->cold = preset != NULL || get(ctx, "storage_gbs") != NULL || get(ctx, "startup_s") != NULL ||
              get(ctx, "cold_factor") != NULL || get(ctx, "cold_requests") != NULL || get(ctx, "weights_gb") != NULL;
    if (f->cold) {
        double gbs = INFINITY;
        if (preset != NULL && cold_preset(preset, &gbs) != 0) {
            bad = "storage";
            errmsg_set(err, errlen, "unknown value '%s' (valid: nvme, network, network_baseline)", preset);
            goto fail;
        }
        int64_t n;
        if (num(get, ctx, "storage_gbs", gbs, &f->cs.storage_gbs, &bad, err, errlen) ||
            num(get, ctx, "startup_s", 0, &f->cs.startup_s, &bad, err, errlen) ||
            num(get, ctx, "cold_factor", 1, &f->cs.cold_factor, &bad, err, errlen) ||
            whole(get, ctx, "cold_requests", 0, -1, INT64_MAX / 2, &n, &bad, err, errlen))
            goto fail;
        f->cs.cold_requests = n;
        double gb;
        if (num(get, ctx, "weights_gb", 0, &gb, &bad, err, errlen))
            goto fail;
        if (!(gb >= 0) || gb > 1e9) {
            bad = "weights_gb";
            errmsg_set(err, errlen, "must be >= 0 and <= 1e9 GB, got %g", gb);
            goto fail;
        }
        f->weight_bytes = gb * 1e9;
        if (gb > 0 && f->cs.storage_gbs == INFINITY) {
            bad = "weights_gb";
            errmsg_set(err, errlen, "needs storage or storage_gbs (the bandwidth the weights load at)");
            goto fail;
        }
        if (f->cs.storage_gbs == INFINITY)   /* no storage given: weights load instantly */
            f->cs.storage_gbs = 1e300;
        if (cold_check(&f->cs, &bad, err, errlen) != 0)
            goto fail;
    }
    return 0;
fail:
    *key = bad;
    return -1;
}

void fleetcfg_free(fleet_cfg *f)
{
    if (f != NULL) {
        fault_free(&f->fault);
        cpucfg_free_node(&f->cpu.node);
    }
}

/* cputier.c -- a gateway-like pool's pods as cgroups on a CPU node (see cputier.h). */
#include "fleet/cputier.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cpu_tier_init(cpu_tier *t, const cpu_cfg *c, int n, cpu_nodes *ns)
{
    memset(t, 0, sizeof *t);
    t->c = c;
    t->n = n > 0 ? n : 1;
    if (!ns || !(t->g = malloc((size_t) t->n * sizeof *t->g)) || !(t->node = cpu_nodes_get(ns, c))) return -1;
    for (int i = 0; i < t->n; i++)
        if ((t->g[i] = cpu_group_new(t->node, c)) < 0) return -1;
    return 0;
}

void cpu_tier_free(cpu_tier *t)
{
    free(t->g);
    t->g = NULL;
    t->node = NULL;
}

uint64_t cpu_tier_start(cpu_tier *t, double work_ms, cpu_done_fn done, void *ctx, int64_t arg)
{
    int g = t->g[t->next];
    t->next = (t->next + 1) % t->n;
    return cpu_job_start(t->node, g, work_ms, done, ctx, arg);
}

double cpu_tier_cores(const cpu_cfg *c, int n)
{
    double cores = c->limit_cores > 0 ? n * c->limit_cores : INFINITY;
    return c->node.cores < cores ? c->node.cores : cores;
}

int cpu_report(const cpu_node *n, const cpu_cfg *c, uint64_t periods, double throttled_s, pool_result *out)
{
    int rc = cpu_node_oom(n) ? -1 : 0;
    if (c->limit_cores > 0) {
        rc |= pool_result_add(out, "cpu_throttled_periods", (double) periods);
        rc |= pool_result_add(out, "cpu_throttled_s", throttled_s);
    }
    if (c->node.name[0]) {
        rc |= pool_result_add(out, "node_cpu", cpu_node_busy_share(n));
        rc |= pool_result_add(out, "node_background_cores", cpu_node_background_mean(n));
    }
    return rc;
}

int cpu_tier_report(const cpu_tier *t, pool_result *out)
{
    uint64_t periods = 0;
    double s = 0;
    for (int i = 0; i < t->n; i++) {
        periods += cpu_group_throttled_periods(t->node, t->g[i]);
        s += cpu_group_throttled_s(t->node, t->g[i]);
    }
    return cpu_report(t->node, t->c, periods, s, out);
}

int cpu_tier_replicas(scn_ctx *x, const char *sec, int *n)
{
    if (scn_int(x, sec, "replicas", 1, 1, 100000, n)) return -1;
    if (scn_value(x, sec, "replicas") && !scn_value(x, sec, "cpu_limit_cores") &&
        !scn_value(x, sec, "cpu_request_cores") && !scn_value(x, sec, "node"))
        return scn_fail(x, sec, "replicas", "needs cpu_limit_cores, cpu_request_cores or node (without CPU keys a "
                        "gateway's work is a delay with no capacity to divide among pods)");
    return 0;
}

int cpu_tier_check(scn_ctx *x, const char *sec, const char *kind, const char *const *keys, int nkeys)
{
    for (int i = 0; i < nkeys; i++) {
        if (!strcmp(keys[i], "servers_per_replica"))
            return scn_fail(x, sec, keys[i], "not supported by kind = %s pools: each request's work is a CPU job "
                            "of its own in one of the pool's replicas (pods); set replicas", kind);
        if (!cpucfg_pool_key(keys[i]))
            return scn_fail(x, sec, keys[i], "not supported by kind = %s pools", kind);
    }
    return 0;
}

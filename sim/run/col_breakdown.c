/* col_breakdown.c -- the run collector of where requests spend their time
 * (collect.h, breakdown.h): the shares of E2E per component over all and the
 * slowest measured served requests, and, with an LLM pool, the TTFT's
 * components (the system's rows breakdown.* and ttft_breakdown.*: docs/metrics.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "run/collect.h"

typedef struct brk {
    const run_env *env;
    bd_acc *bd;               /* shares of E2E per component (BD_*) */
    bd_acc *tbd;              /* shares of TTFT per component (TB_*), with an LLM pool; else NULL */
    double tb_sum[TB_N];      /* sums of each TTFT component over the requests tbd counts, ms */
    uint64_t tb_n;            /* those requests */
    int has_kv;               /* a measured request had KV transfer or load time */
    int has_conn;             /* a measured request set up a connection or waited for one */
} brk;

static int brk_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    brk *x = self;
    x->env = env;
    if (!(x->bd = bd_new())) return -1;
    if (env->has_llm && !(x->tbd = bd_new_n(TB_N))) return -1;
    return 0;
}

/* The TTFT breakdown of served request R (TTFT = FIRST - arrival, ns; the
 * answer left the last station at NOW): its components (TB_*) in ns into P,
 * which sum to the TTFT exactly.  An answer streamed to the client has the
 * components it had when its first token was emitted (r->tf) and its first
 * token's way back (network, and protocol time as overhead); one that reaches
 * the client whole (a hop that does not stream, a result-cache hit) has its
 * E2E's, its service after the first token's emission counted as decode.
 * Overhead is what remains: protocol encoding, gateways, classifiers, cache
 * lookups.  Returns 0, or -1 when R has no snapshot (a streamed answer whose
 * first token no station recorded) or a component comes out negative
 * (an internal error, which LATSIM_CHECK reports). */
static int ttft_parts(const brk *x, const request *r, simtime_t first, simtime_t now, simtime_t p[TB_N])
{
    int check = x->env->check;
    simtime_t T = first - r->arrival;
    memset(p, 0, TB_N * sizeof *p);
    if (r->whole) {
        simtime_t kv = r->kv.xfer_ns + r->kv.load_ns;
        p[TB_NETWORK] = r->network_ns;
        p[TB_QUEUE] = r->queue_ns;
        p[TB_KV_TRANSFER] = r->kv.xfer_ns;
        p[TB_KV_LOAD] = r->kv.load_ns;
        p[TB_PREFILL] = r->tf_pool > 0 ? r->tf.service_ns - r->tf.kvx_ns - r->tf.kvl_ns : r->service_ns - kv;
        p[TB_DECODE] = r->service_ns - kv - p[TB_PREFILL];
        /* The framework overhead of the steps before and after the first token goes to overhead. */
        simtime_t fw = leave_fw_ns(r), fw1 = r->tf_pool > 0 ? r->tf.fw_ns : fw;
        if (fw1 > p[TB_PREFILL]) fw1 = p[TB_PREFILL];
        if (fw1 > fw) fw1 = fw;
        p[TB_PREFILL] -= fw1;
        p[TB_DECODE] -= fw - fw1 < p[TB_DECODE] ? fw - fw1 : p[TB_DECODE];
        /* the first token comes with the last byte: TTFT = E2E when the answer left with its last token */
        RUN_REQUIRE(check, now == r->last_token);
    } else {
        if (r->tf_pool <= 0) return -1;
        /* The snapshot's components add up to the time its first token took to be emitted. */
        RUN_REQUIRE(check, r->tf.at - r->arrival == r->tf.network_ns + r->tf.overhead_ns - r->tf.ret_last_ns +
                               r->tf.queue_ns + r->tf.service_ns);
        p[TB_NETWORK] = r->tf.fwd_net_ns + r->net.ret_first_ns;
        p[TB_QUEUE] = r->tf.queue_ns;
        p[TB_KV_TRANSFER] = r->tf.kvx_ns;
        p[TB_KV_LOAD] = r->tf.kvl_ns;
        p[TB_PREFILL] = r->tf.service_ns - r->tf.kvx_ns - r->tf.kvl_ns;
        /* The framework overhead of its steps up to the first token goes to overhead. */
        p[TB_PREFILL] -= r->tf.fw_ns < p[TB_PREFILL] ? r->tf.fw_ns : p[TB_PREFILL];
    }
    simtime_t rest = T;
    for (int i = 0; i < TB_N; i++)
        if (i != TB_OVERHEAD) rest -= p[i];
    p[TB_OVERHEAD] = rest;
    int ok = 1;
    for (int i = 0; i < TB_N; i++) ok &= p[i] >= 0;
    RUN_REQUIRE(check, ok);
    return ok ? 0 : -1;
}

static void brk_leave(void *self, const request *r, const leave_rec *l)
{
    brk *x = self;
    if (!r->measured) return;
    if (r->kv.xfer_ns > 0 || r->kv.load_ns > 0) x->has_kv = 1;   /* disaggregated or offloaded KV */
    if (l->c[BD_CONNECT] > 0) x->has_conn = 1;           /* connections on hops (issue 34) */
    bd_add(x->bd, l->e2e_ms, l->c);
    if (x->tbd && l->first >= 0) {
        simtime_t p[TB_N];
        if (ttft_parts(x, r, l->first, l->now, p) != 0) return;
        double c[TB_N];
        for (int i = 0; i < TB_N; i++) {
            c[i] = simtime_to_ms(p[i]);
            x->tb_sum[i] += c[i];
        }
        x->tb_n++;
        bd_add_v(x->tbd, simtime_to_ms(l->first - r->arrival), c);
    }
}

/* Adds the system's row "SET.NAME" = V (hidden in a saturated run).  Returns 0 or -1. */
static int brk_row(sim_rows *r, const char *set, const char *name, double v)
{
    char m[48];
    snprintf(m, sizeof m, "%s.%s", set, name);
    return sim_rows_add(r, "", m, v, 1);
}

/* After the latency (col_latency): the shares of the requests at or above the
 * P99s of its rows e2e and ttft.  Its rows, the system's (docs/metrics.md): per E2E component
 * C (bd_name), breakdown.all.C and breakdown.p99.C, kv_transfer and kv_load
 * only when a request had KV time, connect only when one set up a connection;
 * with an LLM pool, per TTFT component C (tb_name), ttft_breakdown.all.C,
 * ttft_breakdown.p99.C and ttft_breakdown.mean_ms.C (NAN: no request had a
 * first token). */
static int brk_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    brk *x = self;
    sim_rows *r = &out->rows;
    double all[BD_N], p99[BD_N];
    stat_summary lat;   /* the system's latency rows (col_latency) */
    sim_result_latency(out, "", "e2e", &lat);
    bd_shares(x->bd, 0, all);
    bd_shares(x->bd, lat.p99, p99);
    for (int k = 0; k < BD_N; k++) {
        if ((k == BD_KV_TRANSFER || k == BD_KV_LOAD) && !x->has_kv) continue;
        if (k == BD_CONNECT && !x->has_conn) continue;   /* connections on hops (issue 34) */
        if (brk_row(r, "breakdown.all", bd_name(k), all[k]) || brk_row(r, "breakdown.p99", bd_name(k), p99[k]))
            return -1;
    }
    if (!x->tbd) return 0;
    double tall[TB_N], tp99[TB_N];
    bd_shares(x->tbd, 0, tall);
    sim_result_latency(out, "", "ttft", &lat);
    bd_shares(x->tbd, lat.p99, tp99);
    for (int k = 0; k < TB_N; k++)
        if (brk_row(r, "ttft_breakdown.all", tb_name(k), tall[k]) ||
            brk_row(r, "ttft_breakdown.p99", tb_name(k), tp99[k]) ||
            brk_row(r, "ttft_breakdown.mean_ms", tb_name(k), x->tb_n ? x->tb_sum[k] / (double) x->tb_n : NAN))
            return -1;
    return 0;
}

static void brk_free(void *self)
{
    brk *x = self;
    bd_free(x->bd);
    bd_free(x->tbd);
}

const run_collector col_breakdown = {
    .name = "breakdown",
    .size = sizeof(brk),
    .init = brk_init,
    .leave = brk_leave,
    .emit = brk_emit,
    .free = brk_free,
};

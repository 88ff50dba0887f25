/* test_pd.c -- Criterion tests of disaggregated prefill and decode (role =
 * prefill / decode, sim/llm/kvlink.c), end to end through scenario_load_text /
 * scenario_resolve / sim_run:
 *   - a lone request: TTFT equals the colocated TTFT exactly, and its first
 *     decode token comes exactly the transfer time (prompt x KV bytes per
 *     token / kv_link_gbs + kv_link_latency_ms) plus one decode step later;
 *     TPOT and e2e grow by exactly that; the kv_transfer breakdown share;
 *   - two transfers at once share the link (processor sharing): each takes
 *     twice the bytes' time; with one stream the second waits the first's;
 *   - under load the link queues: the wait grows with the arrival rate;
 *   - requests are conserved; configuration errors name the key.
 * Hand values: llama-3-8b has 32 layers, 8 KV heads of 128: bf16 KV is
 * 2 x 32 x 8 x 128 x 2 = 131072 bytes per token. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "run/scenario.h"
#include "run/sim.h"
#include "run/breakdown.h"
#include "tsim.h"
#include "store/store.h"

#define KV_BYTES_TOKEN 131072.0

static int load_resolve(const char *text, scenario *sc, char *err, size_t errlen)
{
    return tsim_load_resolve("/tmp/test_pd.ini", text, sc, err, errlen);
}

static void run_text(const char *text, sim_result *res) { tsim_run("/tmp/test_pd.ini", text, 1, res); }

static void expect_error(const char *text, const char *want1, const char *want2)
{
    scenario sc;
    char err[1024];
    int rc = load_resolve(text, &sc, err, sizeof err);
    if (rc == 0) scenario_free(&sc);
    cr_assert_eq(rc, -1, "accepted:\n%s", text);
    cr_expect_not_null(strstr(err, want1), "message lacks '%s': %s", want1, err);
    cr_expect_not_null(strstr(err, want2), "message lacks '%s': %s", want2, err);
}

#define LINEAR_KEYS \
    "cost = linear\nstep_base_ms = 5\nprefill_ms_per_token = 0.1\n" \
    "decode_ms_per_seq = 0.05\nkv_ms_per_1k_tokens = 0.01\n"

/* NREQ requests 1000 s apart (or, with RATE > 0, Poisson at RATE/s), prompts P,
 * outputs O; PD: a prefill pool and a decode pool with link LINK; else one
 * colocated pool. */
static void text_of(char *buf, size_t n, int nreq, double rate, int P, int O, int pd, const char *link)
{
    char arr[128];
    if (rate > 0) snprintf(arr, sizeof arr, "arrival = poisson\nrate = %g\n", rate);
    else snprintf(arr, sizeof arr, "arrival = constant\nrate = 0.001\n");
    int k = snprintf(buf, n,
                     "[sim]\nrequests = %d\nwarmup = 0\nseed = 1\n"
                     "[workload]\n%sprompt_tokens = const(%d)\noutput_tokens = const(%d)\ntarget = %s\n",
                     nreq, arr, P, O, pd ? "pre" : "chat");
    if (!pd)
        snprintf(buf + k, n - (size_t) k, "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" LINEAR_KEYS);
    else
        snprintf(buf + k, n - (size_t) k,
                 "[pool pre]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = prefill\nnext = dec\n" LINEAR_KEYS
                 "[pool dec]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = decode\n%s\n" LINEAR_KEYS, link);
}

static double pm(const sim_result *r, int pool, const char *name) { return tsim_pv(r, pool, name); }

/* P = 1000, O = 11.  Prefill 5 + 0.1 x 1000 = 105 ms (the TTFT in both).  The
 * transfer: 1000 x 131072 bytes at 10 GB/s = 13.1072 ms, + 0.5 ms latency =
 * 13.6072 ms.  Decode step k reads P + k KV tokens in both layouts, so every
 * decode step is the colocated one: the first decode token comes 13.6072 ms
 * later, and so does every later one. */
Test(pd_lone, transfer_plus_one_step)
{
    char t1[4096], t2[4096];
    sim_result col, pd;
    const int P = 1000, O = 11;
    text_of(t1, sizeof t1, 3, 0, P, O, 0, "");
    text_of(t2, sizeof t2, 3, 0, P, O, 1, "kv_link_gbs = 10\nkv_link_latency_ms = 0.5");
    run_text(t1, &col);
    run_text(t2, &pd);
    double xfer = P * KV_BYTES_TOKEN / 10e9 * 1e3 + 0.5;
    cr_expect_float_eq(xfer, 13.6072, 1e-9);
    cr_assert_eq(tsim_n(&pd, "served"), 3);
    cr_expect_float_eq(tsim_sys(&col, "ttft")->mean, 105.0, 1e-5);
    cr_expect_float_eq(tsim_sys(&pd, "ttft")->mean, tsim_sys(&col, "ttft")->mean, 1e-9, "ttft %.9f vs colocated %.9f",
                       tsim_sys(&pd, "ttft")->mean, tsim_sys(&col, "ttft")->mean);
    cr_expect_float_eq(tsim_sys(&pd, "ttft")->max, tsim_sys(&col, "ttft")->max, 1e-9);
    /* Transfer time reported, to the ns the event clock rounds to. */
    cr_expect_float_eq(pm(&pd, 1, "kv_transfer_ms"), xfer, 2e-6, "kv_transfer_ms %.9f", pm(&pd, 1, "kv_transfer_ms"));
    cr_expect_float_eq(pm(&pd, 1, "kv_transfers"), 3, 1e-12);
    cr_expect_float_eq(pm(&pd, 1, "kv_link_wait_ms"), 0, 1e-12);
    cr_expect_float_eq(pm(&pd, 1, "kv_transfer_mb"), P * KV_BYTES_TOKEN / 1e6, 1e-9);
    /* First decode token: the first decode step's gap + the transfer: the largest ITL. */
    double step1 = 5 + 0.05 + 0.01 * (P + 1) / 1000.0;
    cr_expect_float_eq(tsim_sys(&pd, "itl")->max, xfer + step1, 1e-5, "first decode gap %.9f vs %.9f",
                       tsim_sys(&pd, "itl")->max, xfer + step1);
    cr_expect_float_eq(tsim_sys(&col, "itl")->max, 5 + 0.05 + 0.01 * (P + O - 1) / 1000.0, 1e-5);
    /* e2e and TPOT: the transfer once, over the O - 1 decode tokens. */
    cr_expect_float_eq(tsim_sys(&pd, "e2e")->mean, tsim_sys(&col, "e2e")->mean + xfer, 1e-5, "e2e %.9f vs %.9f",
                       tsim_sys(&pd, "e2e")->mean, tsim_sys(&col, "e2e")->mean + xfer);
    cr_expect_float_eq(tsim_sys(&pd, "tpot")->mean, tsim_sys(&col, "tpot")->mean + xfer / (O - 1), 1e-6);
    /* Its own breakdown component, out of service; the colocated run has none. */
    cr_expect(tsim_bd_row(&pd, "breakdown.all", BD_KV_TRANSFER) && tsim_bd_row(&pd, "breakdown.all", BD_KV_LOAD));
    cr_expect(!tsim_bd_row(&col, "breakdown.all", BD_KV_TRANSFER) && !tsim_bd_row(&col, "breakdown.p99", BD_KV_LOAD));
    double kvx = tsim_bd(&pd, "breakdown.all", BD_KV_TRANSFER), sum = 0;
    cr_expect_float_eq(kvx, xfer / tsim_sys(&pd, "e2e")->mean, 1e-6, "kv_transfer share %g", kvx);
    for (int k = 0; k <= BD_KV_LOAD; k++) sum += tsim_bd(&pd, "breakdown.all", k);   /* all but connect */
    cr_expect_float_eq(sum, 1.0, 1e-9);
    /* Per role: prefill steps 1 per request, decode steps O - 1. */
    cr_expect_float_eq(pm(&pd, 0, "steps"), 3, 1e-12);
    cr_expect_float_eq(pm(&pd, 1, "steps"), 3 * (O - 1), 1e-12);
    sim_result_free(&col);
    sim_result_free(&pd);
}

/* A preset: NVLink's 450 GB/s and 1 us. */
Test(pd_lone, nvlink_preset)
{
    char t[4096];
    sim_result pd;
    text_of(t, sizeof t, 2, 0, 2000, 5, 1, "kv_link = nvlink");
    run_text(t, &pd);
    double xfer = 2000 * KV_BYTES_TOKEN / 450e9 * 1e3 + 0.001;
    cr_expect_float_eq(pm(&pd, 1, "kv_transfer_ms"), xfer, 2e-6, "%.9f vs %.9f", pm(&pd, 1, "kv_transfer_ms"), xfer);
    cr_expect_float_eq(pm(&pd, 1, "kv_link_gbs"), 450, 1e-12);
    sim_result_free(&pd);
}

/* A prompt's output of one token is done in the prefill pool: no transfer. */
Test(pd_lone, single_token_needs_no_transfer)
{
    char t[4096];
    sim_result pd;
    text_of(t, sizeof t, 2, 0, 500, 1, 1, "");
    run_text(t, &pd);
    cr_expect_eq(tsim_n(&pd, "served"), 2);
    cr_expect_float_eq(pm(&pd, 1, "kv_transfers"), 0, 1e-12);
    cr_expect_float_eq(tsim_sys(&pd, "e2e")->mean, tsim_sys(&pd, "ttft")->mean, 1e-9);
    sim_result_free(&pd);
}

/* Under load: one stream on a slow link (1 GB/s: 1000 tokens take 131 ms, so
 * at 2 and 5 requests/s the link is 26 % and 66 % busy; the prefill pool's
 * 105 ms per prompt, 21 % and 53 %): transfers wait for it,
 * more at a higher rate; waiting + sending = the transfer time; requests are
 * conserved. */
Test(pd_load, link_queueing_grows_with_load)
{
    char t[4096];
    double wait[2];
    const double rates[2] = { 2, 5 };
    for (int i = 0; i < 2; i++) {
        sim_result r;
        text_of(t, sizeof t, 3000, rates[i], 1000, 20, 1, "kv_link_gbs = 1\nkv_link_latency_ms = 0\nkv_link_streams = 1");
        run_text(t, &r);
        cr_assert_eq(tsim_n(&r, "served"), 3000);
        cr_expect_eq(tsim_pv(&r, 1, "served"), 3000);
        double send = 1000 * KV_BYTES_TOKEN / 1e9 * 1e3;
        wait[i] = pm(&r, 1, "kv_link_wait_ms");
        /* One stream: each transfer is its wait plus its bytes' time (measured starts and ends coincide
         * up to the window's edges: within a few per mille). */
        cr_expect_float_eq(pm(&r, 1, "kv_transfer_ms"), wait[i] + send, 0.01 * (wait[i] + send),
                           "transfer %g vs wait %g + send %g", pm(&r, 1, "kv_transfer_ms"), wait[i], send);
        double util = pm(&r, 1, "kv_link_utilization");
        cr_expect_float_eq(util, rates[i] * send / 1e3, 0.1 * rates[i] * send / 1e3, "link utilisation %g", util);
        sim_result_free(&r);
    }
    cr_expect_gt(wait[0], 0.0);
    cr_expect_gt(wait[1], 2 * wait[0], "wait at %g/s %g ms, at %g/s %g ms", rates[0], wait[0], rates[1], wait[1]);
}

/* Two transfers at once share the bandwidth: with several streams each takes
 * twice its bytes' time; with one stream the second waits for the first.
 * Two requests arrive together (a trace with equal times), are prefilled at
 * once by two prefill replicas and reach the decode pool together; a third comes alone. */
Test(pd_load, processor_sharing)
{
    const char *trace = "/tmp/test_pd_trace.csv";
    FILE *f = fopen(trace, "w");
    cr_assert_not_null(f);
    fprintf(f, "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.0000000,1000,5\n"
               "2023-11-16 18:00:00.0000000,1000,5\n2023-11-16 18:20:00.0000000,1000,5\n");
    fclose(f);
    double send = 1000 * KV_BYTES_TOKEN / 10e9 * 1e3;
    for (int streams = 1; streams <= 2; streams++) {
        char t[4096];
        snprintf(t, sizeof t,
                 "[sim]\nrequests = 3\nwarmup = 0\n[workload]\narrival = trace\ntrace = %s\ntarget = pre\n"
                 "[pool pre]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = prefill\nreplicas = 2\nnext = dec\n" LINEAR_KEYS
                 "[pool dec]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = decode\nkv_link_gbs = 10\n"
                 "kv_link_latency_ms = 0\nkv_link_streams = %d\n" LINEAR_KEYS, trace, streams);
        sim_result r;
        run_text(t, &r);
        cr_assert_eq(tsim_n(&r, "served"), 3);
        double mean = pm(&r, 1, "kv_transfer_ms"), mx = pm(&r, 1, "kv_transfer_max_ms");
        if (streams == 2) {          /* both at half the bandwidth (the third, alone: send) */
            cr_expect_float_eq(mean, 5 * send / 3, 2e-6, "shared: mean %.9f vs %.9f", mean, 5 * send / 3);
            cr_expect_float_eq(mx, 2 * send, 2e-6);
            cr_expect_float_eq(pm(&r, 1, "kv_link_wait_ms"), 0, 1e-12);
        } else {                     /* FIFO: send, then wait send + send; the third alone */
            cr_expect_float_eq(mean, 4 * send / 3, 2e-6, "one stream: mean %.9f vs %.9f", mean, 4 * send / 3);
            cr_expect_float_eq(mx, 2 * send, 2e-6);
            cr_expect_float_eq(pm(&r, 1, "kv_link_wait_ms"), send / 3, 2e-6);
        }
        sim_result_free(&r);
    }
    unlink(trace);
}

Test(pd_errors, bad_configurations)
{
    const char *head = "[sim]\nrequests = 10\n[workload]\nrate = 1\ntarget = pre\n";
    char t[2048];
    snprintf(t, sizeof t, "%s[pool pre]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = prefill\n", head);
    expect_error(t, "role", "next");
    snprintf(t, sizeof t, "%s[pool pre]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nkv_link_gbs = 5\n", head);
    expect_error(t, "kv_link_gbs", "role = decode");
    snprintf(t, sizeof t, "%s[pool pre]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = prefill\nscheduler = static\nnext = d\n"
             "[pool d]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = decode\n", head);
    expect_error(t, "role", "iteration-level");
    snprintf(t, sizeof t, "%s[pool pre]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = middle\n", head);
    expect_error(t, "role", "prefill");
    snprintf(t, sizeof t, "%s[pool pre]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = decode\nkv_link = carrier-pigeon\n", head);
    expect_error(t, "kv_link", "nvlink");
}

/* ---- plan: xPyD ------------------------------------------------------------- */

#include "tcli.h"
#include "tcheck.h"

/* Full sanity checks, every step (tcheck.h). */
TestSuite(pd_errors, .init = tcheck_every_step);
TestSuite(pd_load, .init = tcheck_every_step);
TestSuite(pd_lone, .init = tcheck_every_step);

static void plan_setup(void) { tcli_setup("/tmp/latsim_pd_", "runs.db"); }
TestSuite(pd_plan, .init = plan_setup, .fini = tcli_teardown);

static result latsim_sh(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    result r = vrun_sh(NULL, fmt, ap);
    va_end(ap);
    return r;
}

/* With a prefill and a decode pool, --replicas searches both counts: the
 * answer is the cheapest (x, y) that a brute force over the 3 x 3 grid with the
 * plan's three seeds finds meeting the SLO.  The TTFT term needs prefill
 * replicas, the TPOT term (max_batch 8) decode replicas. */
Test(pd_plan, replicas_search_both_pools)
{
    char path[256];
    write_file("pd.ini",
               "[sim]\nrequests = 2000\nwarmup = 200\n[workload]\nrate = 1\n"
               "prompt_tokens = lognormal(mean=1500, cv=0.5)\noutput_tokens = lognormal(mean=100, cv=0.5)\ntarget = pre\n"
               "[pool pre]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = prefill\nnext = dec\n" LINEAR_KEYS
               "[pool dec]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = decode\nmax_batch = 8\n" LINEAR_KEYS
               "[slo]\nttft_p99_ms = 600\ntpot_p99_ms = 5.6\n", path, sizeof path);
    result r = latsim_sh("plan %s --target-rate 6 --replicas 1:3 --seed 1 --db %s --json", path, db);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    const char *sp = strstr(r.out, "\"pool pre.replicas\": \""), *sd = strstr(r.out, "\"pool dec.replicas\": \"");
    cr_assert(sp && sd, "both pools' replicas are dimensions: %s", r.out);
    int x = atoi(sp + strlen("\"pool pre.replicas\": \"")), y = atoi(sd + strlen("\"pool dec.replicas\": \""));
    result_free(&r);
    int bx = 0, by = 0;
    for (int n = 2; n <= 6 && !bx; n++)          /* cheapest first: x + y GPUs */
        for (int a = 1; a <= 3 && !bx; a++) {
            int b = n - a, met = 1;
            if (b < 1 || b > 3) continue;
            for (int seed = 1; seed <= 3 && met; seed++) {
                r = latsim_sh("run %s --set workload.rate=6 --set \"pool pre.replicas=%d\" --set \"pool dec.replicas=%d\" "
                              "--seed %d --no-store --json", path, a, b, seed);
                met = strstr(r.out, "\"slo\": {\"met\": true") != NULL;
                result_free(&r);
            }
            if (met) { bx = a; by = b; }
        }
    cr_assert(bx > 0, "no configuration meets the SLO");
    cr_expect_eq(x + y, bx + by, "plan %dP%dD, brute force %dP%dD", x, y, bx, by);
    /* Neither count is at its bound: both are searched (here 3P2D). */
    cr_expect(y >= 2 && x >= 2, "plan %dP%dD", x, y);
}

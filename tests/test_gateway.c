/* test_gateway.c -- the gateway station kinds in whole runs: network hops (by
 * hand, streaming TTFT at the client), the latency breakdown adding up, the
 * external API's rate limit over a long run, the result cache's hit rate
 * against the Zipf expectation, and bad input. */
#include <criterion/criterion.h>
#include <jansson.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cdb.h"
#include "cnet.h"
#include "gateway/rcache.h"
#include "core/zipf.h"
#include "report/report.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "store/store.h"
#include "run/breakdown.h"
#include "tsim.h"

static int load(const char *text, scenario *sc, char *err, size_t n)
{
    sqlite3 *db = NULL;
    int rc = scenario_load_text(sc, "/tmp/test_gateway.ini", text, NULL, 0, err, n);
    if (rc == 0) {
        cr_assert_eq(store_open(":memory:", &db, err, n), 0, "%s", err);
        rc = scenario_resolve(sc, db, err, n);
        store_close(db);
    }
    return rc;
}

static void run(const char *text, sim_result *res)
{
    scenario sc;
    char err[1024];
    cr_assert_eq(load(text, &sc, err, sizeof err), 0, "%s", err);
    cr_assert_eq(sim_run(&sc, 1, res, err, sizeof err), 0, "%s", err);
    scenario_free(&sc);
}

static void expect_error(const char *text, const char *what)
{
    scenario sc;
    char err[1024] = "";
    cr_assert_neq(load(text, &sc, err, sizeof err), 0, "accepted: %s", text);
    cr_assert(strstr(err, what), "error '%s' lacks '%s'", err, what);
    scenario_free(&sc);
}

/* Constant arrivals 1 s apart (nothing queues), a hop with a constant 20 ms RTT
 * and 8 Mbit/s both ways (1000 bytes per ms), 4 bytes per token, 100 header
 * bytes, whole answers, 0.5 ms per 1000 bytes; a generic pool of 30 ms.
 * Request 100 + 1000 x 4 = 4100 bytes: 10 + 4.1 ms network, 2 ms protocol;
 * answer 100 + 50 x 4 = 300 bytes: 10 + 0.3 ms, 0.1 ms. */
#define HOP_TEXT \
    "[sim]\nrequests = 200\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n" \
    "prompt_tokens = const(1000)\noutput_tokens = const(50)\ntarget = link\n" \
    "[pool link]\nkind = net\nrtt_ms = const(20)\nup_mbps = 8\ndown_mbps = 8\n" \
    "header_bytes = 100\nproto_ms_per_kb = 0.5\nstream = no\nnext = work\n" \
    "[pool work]\nservice_ms = const(30)\n"

Test(gateway, hop_times_by_hand_and_components_add_up)
{
    sim_result res;
    run(HOP_TEXT, &res);
    cr_assert_eq(tsim_n(&res, "served"), 200);
    cr_assert_float_eq(tsim_sys(&res, "network")->mean, 10 + 4.1 + 10 + 0.3, 1e-6);
    cr_assert_float_eq(tsim_sys(&res, "overhead")->mean, 2.0 + 0.1, 1e-6);
    cr_assert_float_eq(tsim_sys(&res, "e2e")->mean, 24.4 + 2.1 + 30, 1e-6);
    cr_assert_float_eq(tsim_sys(&res, "e2e")->max, 24.4 + 2.1 + 30, 1e-6);
    double sum = 0;
    for (int k = 0; k < 4; k++) sum += tsim_bd(&res, "breakdown.all", k);   /* network, queue, service, overhead */
    cr_assert_float_eq(sum, 1.0, 1e-12);
    cr_assert_float_eq(tsim_bd(&res, "breakdown.all", BD_NETWORK), 24.4 / 56.5, 1e-9);
    cr_assert_float_eq(tsim_bd(&res, "breakdown.all", BD_SERVICE), 30 / 56.5, 1e-9);
    sim_result_free(&res);
}

/* A queueing system with every component: client hop, result cache, LLM with
 * overhead.  Each request's components add up to its e2e (asserted per request
 * in debug builds), so their means add up to the mean e2e. */
Test(gateway, breakdown_means_add_up_to_e2e)
{
    const char *text =
        "[sim]\nrequests = 3000\n[workload]\nrate = 8\n"
        "prompt_tokens = lognormal(mean=800, cv=0.5)\noutput_tokens = lognormal(mean=100, cv=0.5)\n"
        "target = client\n"
        "[pool client]\nkind = net\npreset = client_4g\nnext = cache\n"
        "[pool cache]\nkind = result_cache\nintents = 500\nhit_ms = const(2)\nmiss_ms = const(3)\nnext = hop\n"
        "[pool hop]\nkind = net\npreset = cross_zone\nprotocol = grpc\nnext = chat\n"
        "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrequest_overhead_ms = 1\n";
    sim_result res;
    run(text, &res);
    double parts = tsim_sys(&res, "network")->mean + tsim_sys(&res, "queue")->mean + tsim_sys(&res, "service")->mean +
                   tsim_sys(&res, "overhead")->mean;
    cr_assert_float_eq(parts, tsim_sys(&res, "e2e")->mean, 1e-9 * tsim_sys(&res, "e2e")->mean);
    for (int set = 0; set < 2; set++) {
        double s[4];
        for (int k = 0; k < 4; k++) s[k] = tsim_bd(&res, set ? "breakdown.p99" : "breakdown.all", k);
        cr_assert_float_eq(s[0] + s[1] + s[2] + s[3], 1.0, 1e-9);
        for (int k = 0; k < 4; k++)
            cr_assert(s[k] >= 0 && s[k] <= 1);
    }
    cr_assert_gt(tsim_sys(&res, "network")->mean, 55);       /* the 4G client's RTT */
    sim_result_free(&res);
}

/* The JSON report (report_flatten + report_json, the path of `latsim run
 * --json`) of RES, parsed by jansson. */
static json_t *report_of(const sim_result *res)
{
    report rp;
    cr_assert_eq(report_flatten(res, -1, &rp), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    cr_assert(mem);
    report_json(&rp, "\"scenario\": \"t.ini\"", mem);
    fclose(mem);
    report_free(&rp);
    json_error_t e;
    json_t *o = json_loads(text, 0, &e);
    cr_assert(o, "not JSON (%s): %s", e.text, text);
    free(text);
    return o;
}

static double jget(json_t *o, const char *a, const char *b, const char *c)
{
    json_t *v = json_object_get(json_object_get(json_object_get(o, a), b), c);
    cr_assert(json_is_number(v), "%s.%s.%s is not a number", a, b, c);
    return json_number_value(v);
}

/* The same gateway system through the JSON report: the printed means of the
 * components add up to the printed mean e2e, and the shares to 1.  JSON numbers
 * are printed with 6 significant digits (%.6g, report.c num()): each printed
 * value v' is within 5e-6 |v| of the exact one, so the two sides may differ by
 * 5e-6 x (the sum of the printed magnitudes) plus the floating error of the
 * means themselves (about 1e-12 relative); 5.1e-6 x that sum covers both (a
 * component left out would be off by its whole mean, > 1 ms here).  The
 * warm-up is fixed (the old requests/10): an automatic one waits for the cache
 * of 500 intents to hold them all, and then hardly a request reaches the model. */
Test(gateway, breakdown_means_add_up_in_the_json)
{
    const char *text =
        "[sim]\nrequests = 2000\nwarmup = 200\n[workload]\nrate = 8\n"
        "prompt_tokens = lognormal(mean=800, cv=0.5)\noutput_tokens = lognormal(mean=100, cv=0.5)\n"
        "target = client\n"
        "[pool client]\nkind = net\npreset = client_4g\nnext = cache\n"
        "[pool cache]\nkind = result_cache\nintents = 500\nhit_ms = const(2)\nmiss_ms = const(3)\nnext = gw\n"
        "[pool gw]\nkind = router\noverhead_ms = const(1.5)\nnext = hop\n"
        "[pool hop]\nkind = net\npreset = cross_zone\nprotocol = grpc\nnext = chat\n"
        "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrequest_overhead_ms = 1\n";
    sim_result res;
    run(text, &res);
    json_t *o = report_of(&res);
    sim_result_free(&res);
    const char *parts[] = { "network", "queue", "service", "overhead" };
    double sum = 0, mag = 0;
    for (int k = 0; k < 4; k++) {
        double v = jget(o, "latency_ms", parts[k], "mean");
        cr_assert_gt(v, k == 1 ? -1e-12 : 1.0, "%s mean %g", parts[k], v);   /* every part but queue is > 1 ms here */
        sum += v;
        mag += fabs(v);
    }
    double e2e = jget(o, "latency_ms", "e2e", "mean");
    mag += fabs(e2e);
    cr_assert_float_eq(sum, e2e, 5.1e-6 * mag, "parts %.9g, e2e %.9g", sum, e2e);
    for (int set = 0; set < 2; set++) {
        double total = 0;
        for (int k = 0; k < 4; k++) {
            double v = jget(o, "breakdown", set ? "p99" : "all", parts[k]);
            cr_assert(v >= 0 && v <= 1);
            total += v;
        }
        /* shares <= 1 each, printed within 5e-6 of theirs: the sum within 5.1e-6 x total */
        cr_assert_float_eq(total, 1.0, 5.1e-6 * total, "%s shares add up to %.9g", set ? "p99" : "all", total);
    }
    json_decref(o);
}

/* latency_ms.network and .overhead are in the JSON of every run: zeros for a run
 * without any station adding them (generic pools; an LLM pool has overhead),
 * null where e2e is null (saturated); the other keys stay. */
Test(gateway, json_has_network_and_overhead_in_every_run)
{
    static const char *const texts[] = {
        "[sim]\nrequests = 500\n[workload]\nrate = 5\n[pool w]\nservers = 2\nservice_ms = exp(mean=100)\n",
        "[sim]\nrequests = 300\n[workload]\nrate = 2\nprompt_tokens = const(200)\noutput_tokens = const(20)\n"
        "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrequest_overhead_ms = 2\n",
        "[sim]\nrequests = 3000\nwarmup = 0\n[workload]\nrate = 50\n[pool w]\nservice_ms = const(100)\n",
    };
    for (int t = 0; t < 3; t++) {
        sim_result res;
        run(texts[t], &res);
        int saturated = tsim_sat(&res);
        json_t *o = report_of(&res);
        sim_result_free(&res);
        cr_assert_eq(saturated, t == 2, "run %d saturated %d", t, saturated);
        json_t *lat = json_object_get(o, "latency_ms");
        const char *keep[] = { "e2e", "queue", "service" };
        for (int k = 0; k < 3; k++) cr_assert(json_object_get(lat, keep[k]), "run %d lacks %s", t, keep[k]);
        const char *stats[] = { "mean", "p50", "p90", "p95", "p99", "p999", "max" };
        for (int k = 0; k < 7; k++) {
            json_t *n = json_object_get(json_object_get(lat, "network"), stats[k]);
            json_t *h = json_object_get(json_object_get(lat, "overhead"), stats[k]);
            cr_assert(n && h, "run %d lacks network or overhead %s", t, stats[k]);
            if (t == 2) {
                cr_assert(json_is_null(n) && json_is_null(h));
                continue;
            }
            cr_assert(json_is_number(n) && json_number_value(n) == 0, "run %d network %s", t, stats[k]);
            if (t == 0) cr_assert(json_is_number(h) && json_number_value(h) == 0);
            /* request_overhead_ms, plus the framework overhead of the request's 20
             * steps (one prefill, 19 decodes), each 1 ms + 32 layers x 20 us. */
            else cr_assert(json_is_number(h) && json_number_value(h) >= (2 + 20 * 1.64) * (1 - 1e-6),
                           "LLM overhead %s %g", stats[k], json_number_value(h));
        }
        json_decref(o);
    }
}

/* Streaming: the first token reaches the client one hop after the replica
 * emits it, and so does the last.  A hop of a constant 20 ms RTT carrying no
 * bytes adds exactly 20 ms to both TTFT and e2e (constant arrivals: the replica
 * sees the same arrivals 10 ms later). */
Test(gateway, streamed_tokens_reach_the_client_one_hop_later)
{
    const char *base =
        "[sim]\nrequests = 50\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.5\n"
        "prompt_tokens = const(500)\noutput_tokens = const(20)\ntarget = %s\n"
        "[pool link]\nkind = net\nrtt_ms = const(20)\nbytes_per_token = 0\nheader_bytes = 0\n"
        "chunk_bytes = 0\nproto_ms_per_kb = 0\nnext = chat\n"
        "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n";
    char a[1024], b[1024];
    snprintf(a, sizeof a, base, "chat");
    snprintf(b, sizeof b, base, "link");
    sim_result direct, hop;
    run(a, &direct);
    run(b, &hop);
    cr_assert_float_eq(tsim_sys(&hop, "ttft")->mean - tsim_sys(&direct, "ttft")->mean, 20, 1e-6);
    cr_assert_float_eq(tsim_sys(&hop, "e2e")->mean - tsim_sys(&direct, "e2e")->mean, 20, 1e-6);
    cr_assert_float_eq(tsim_sys(&hop, "tpot")->mean, tsim_sys(&direct, "tpot")->mean, 1e-9);
    sim_result_free(&direct);
    sim_result_free(&hop);
}

/* A hop that does not stream delivers the whole answer after the last token:
 * the client's first token comes with the last byte.  Constant 20 ms RTT, 8
 * Mbit/s each way (1000 bytes per ms), gRPC (325 header bytes, 0.031 ms per
 * 1000 payload bytes), an API with TTFT 300 ms and TPOT 10 ms, 1000-token
 * prompts, 100-token answers:
 *   request  10 + (325 + 4000) / 1000 = 14.325 ms network, 4000 x 0.031e-3 = 0.124 ms protocol
 *   model    300 + 99 x 10 = 1290 ms from arrival to the last token
 *   answer   10 + (325 + 400) / 1000 = 10.725 ms network, 400 x 0.031e-3 = 0.0124 ms protocol
 * e2e = TTFT = 1315.1864 ms (streamed, TTFT would be 325.19 ms); a whole answer
 * has no TPOT at the client. */
#define WHOLE_TEXT \
    "[sim]\nrequests = 20\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.2\n" \
    "prompt_tokens = const(1000)\noutput_tokens = const(100)\ntarget = link\n" \
    "[pool link]\nkind = net\nrtt_ms = const(20)\nup_mbps = 8\ndown_mbps = 8\nprotocol = grpc\n" \
    "stream = %s\nnext = gpt\n" \
    "[pool gpt]\nkind = api\nttft_ms = const(300)\ntpot_ms = const(10)\n"

Test(gateway, unstreamed_answer_delivers_the_first_token_with_the_last_byte)
{
    char text[1024];
    snprintf(text, sizeof text, WHOLE_TEXT, "no");
    sim_result res;
    run(text, &res);
    double e2e = 14.325 + 0.124 + 1290 + 10.725 + 0.0124;
    cr_assert_float_eq(tsim_sys(&res, "e2e")->mean, e2e, 1e-6);
    cr_assert_float_eq(tsim_sys(&res, "e2e")->max, e2e, 1e-6);
    cr_assert_float_eq(tsim_sys(&res, "ttft")->mean, e2e, 1e-6, "TTFT %.4f, e2e %.4f", tsim_sys(&res, "ttft")->mean,
                       e2e);
    cr_assert_float_eq(tsim_sys(&res, "ttft")->max, e2e, 1e-6);
    cr_assert_eq(tsim_sys(&res, "tpot")->n, 0);
    sim_result_free(&res);
    /* Streamed over the same link, the first token arrives one way back after
     * it is emitted: 14.449 + 300 + 10 + (325 + 4 + 16) / 1000 + 20 x 0.031e-3. */
    snprintf(text, sizeof text, WHOLE_TEXT, "yes");
    run(text, &res);
    cr_assert_float_eq(tsim_sys(&res, "ttft")->mean, 14.449 + 300 + 10.345 + 0.00062, 1e-6);
    /* the last chunk carries no headers: (990 + 10.02 - 10.345) / 99 */
    cr_assert_float_eq(tsim_sys(&res, "tpot")->mean, (990 - 0.325) / 99, 1e-6);
    sim_result_free(&res);
}

/* A result-cache hit sends the request's whole answer back at once, not one
 * token's chunk.  Constant 20 ms RTT, 8 Mbit/s, no headers, no framing, no
 * protocol cost, streaming; one intent, so every measured request hits:
 * network = 10 + 4000 / 1000 (1000-token prompt) + 10 + 400 / 1000 (the
 * 100-token answer) = 24.4 ms; the answer comes whole: TTFT = e2e, no TPOT.
 * The same with stream = no, and with 16 bytes of framing per streamed token
 * (10 + 4 + 10 + 100 x 20 / 1000 = 26 ms). */
#define HIT_TEXT \
    "[sim]\nrequests = 20\nwarmup = 1\n[workload]\narrival = constant\nrate = 0.2\n" \
    "prompt_tokens = const(1000)\noutput_tokens = const(100)\ntarget = link\n" \
    "[pool link]\nkind = net\nrtt_ms = const(20)\nup_mbps = 8\ndown_mbps = 8\nheader_bytes = 0\n" \
    "chunk_bytes = %d\nproto_ms_per_kb = 0\nstream = %s\nnext = cache\n" \
    "[pool cache]\nkind = result_cache\nintents = 1\nhit_ms = const(1)\nnext = work\n" \
    "[pool work]\nservice_ms = const(30)\n"

Test(gateway, result_cache_hit_returns_the_whole_answer)
{
    static const struct { int chunk; const char *stream; double net; } cases[] = {
        { 0, "yes", 24.4 }, { 0, "no", 24.4 }, { 16, "yes", 26.0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, HIT_TEXT, cases[i].chunk, cases[i].stream);
        sim_result res;
        run(text, &res);
        cr_assert_eq(tsim_pv(&res, 1, "hit_rate"), 1);
        cr_assert_float_eq(tsim_sys(&res, "network")->mean, cases[i].net, 1e-6, "case %zu: %.6f", i,
                           tsim_sys(&res, "network")->mean);
        cr_assert_float_eq(tsim_sys(&res, "network")->max, cases[i].net, 1e-6);
        cr_assert_float_eq(tsim_sys(&res, "e2e")->mean, cases[i].net + 1, 1e-6);
        cr_assert_float_eq(tsim_sys(&res, "ttft")->mean, cases[i].net + 1, 1e-6);
        cr_assert_eq(tsim_sys(&res, "tpot")->n, 0);
        cr_assert_float_eq(tsim_pv(&res, 1, "hit_e2e_ms_mean"), cases[i].net + 1, 1e-6);
        sim_result_free(&res);
    }
}

/* 600 requests per minute allowed, 20 per second offered, over-limit requests
 * rejected: the bucket is full (a minute's allowance, 600) at the first arrival
 * and refills 10 per second, never reaching full again under this overload, so
 * a run whose arrivals span T seconds (window_s) serves 600 + 10 T requests
 * minus what is left in the bucket at the end: less than one request plus the
 * refill since the last arrival (10 x an exponential gap of mean 0.05 s; more
 * than 2 requests' worth with probability e^-4). */
Test(gateway, api_rate_limit_admits_the_configured_rate)
{
    const char *text =
        "[sim]\nrequests = 40000\nwarmup = 0\n[workload]\nrate = 20\n"
        "prompt_tokens = const(100)\noutput_tokens = const(10)\ntarget = gpt\n"
        "[pool gpt]\nkind = api\nttft_ms = const(0)\nrpm = 600\n";
    sim_result res;
    run(text, &res);
    double expect = 600 + 10 * tsim_v(&res, "window_s");
    cr_assert(tsim_n(&res, "served") >= expect - 3 && tsim_n(&res, "served") <= expect + 1e-9,
              "served %lu, expected %.1f (-3)", (unsigned long) tsim_n(&res, "served"), expect);
    cr_assert_eq(tsim_n(&res, "served") + tsim_n(&res, "rejected"), 40000);
    cr_assert_float_eq(tsim_pv(&res, 0, "rate_limited"), (double) tsim_n(&res, "rejected"), 0);
    sim_result_free(&res);
}

/* Unbounded cache, answers kept forever, requests far apart (nothing in flight
 * when the next arrives): every request after the first of its intent hits, so
 * hits = N - D, E[D] = sum_k 1 - (1 - p_k)^N with its exact variance (as in
 * test_rcache.c); tolerance 5 standard deviations. */
Test(gateway, result_cache_hit_rate_is_the_zipf_expectation)
{
    const int N = 6000;
    const size_t K = 3000;
    const char *text =
        "[sim]\nrequests = 6000\nwarmup = 0\n[workload]\nrate = 1\n"
        "target = cache\n"
        "[pool cache]\nkind = result_cache\nintents = 3000\nintent_zipf = 0.8\nnext = work\n"
        "[pool work]\nservice_ms = const(10)\n";
    zipf *z = zipf_new(K, 0.8);
    double q[3000], ed = 0, var = 0;
    for (size_t k = 0; k < K; k++) {
        q[k] = exp(N * log1p(-zipf_prob(z, k)));
        ed += 1 - q[k];
        var += q[k] * (1 - q[k]);
    }
    for (size_t j = 0; j < K; j++)
        for (size_t k = j + 1; k < K; k++)
            var += 2 * (exp(N * log1p(-zipf_prob(z, j) - zipf_prob(z, k))) - q[j] * q[k]);
    zipf_free(z);
    sim_result res;
    run(text, &res);
    double hits = tsim_pv(&res, 0, "hits");
    cr_assert_float_eq(hits, N - ed, 5 * sqrt(var), "hits %.0f, expected %.1f +- %.1f", hits, N - ed, sqrt(var));
    cr_assert_float_eq(tsim_pv(&res, 0, "hit_rate"), hits / N, 1e-12);
    cr_assert_eq(tsim_pv(&res, 0, "false_hits"), 0);
    sim_result_free(&res);
}

Test(gateway, bad_input)
{
    const char *head = "[sim]\nrequests = 10\n[workload]\nrate = 1\ntarget = c\n";
    char t[1024];
    snprintf(t, sizeof t, "%s[pool c]\nkind = result_cache\n", head);
    expect_error(t, "needs at least 1 pool in next");
    snprintf(t, sizeof t, "%s[pool c]\nkind = result_cache\ncache_ttl_s = -5\nnext = w\n[pool w]\nservice_ms = const(1)\n", head);
    expect_error(t, "cache_ttl_s: must be >= 0");
    snprintf(t, sizeof t, "%s[pool c]\nkind = result_cache\nintent_zipf = 0\nnext = w\n[pool w]\nservice_ms = const(1)\n", head);
    expect_error(t, "intent_zipf: must be > 0");
    snprintf(t, sizeof t, "%s[pool c]\nkind = result_cache\nnext = nowhere\n", head);
    expect_error(t, "no pool named 'nowhere'");
    snprintf(t, sizeof t, "%s[pool c]\nkind = net\npreset = moon\nnext = w\n[pool w]\nservice_ms = const(1)\n", head);
    expect_error(t, "unknown preset 'moon'");
    snprintf(t, sizeof t, "%s[pool c]\nkind = net\nup_mbps = 0\nnext = w\n[pool w]\nservice_ms = const(1)\n", head);
    expect_error(t, "up_mbps: must be > 0");
    snprintf(t, sizeof t, "%s[pool c]\nkind = api\nttft_ms = const(1)\nrpm = 10.5\n", head);
    expect_error(t, "rpm: must be a whole number");
    snprintf(t, sizeof t, "%s[pool c]\nkind = api\n", head);
    expect_error(t, "ttft_ms");
}

/* ---- gateway routers ------------------------------------------------------ */

/* A complexity router over two generic pools; scores uniform on [0, 1]. */
static void complexity_run(const char *extra, sim_result *res)
{
    char t[1024];
    snprintf(t, sizeof t,
             "[sim]\nrequests = 40000\n[workload]\nrate = 10\ntarget = gw\n"
             "[pool gw]\nkind = router\npolicy = complexity\ncomplexity_cut = 0.3\n%s"
             "next = small, large\n"
             "[pool small]\nservers = 4\nservice_ms = exp(mean=50)\n"
             "[pool large]\nservers = 8\nservice_ms = exp(mean=100)\n", extra);
    run(t, res);
}

static double metric(const sim_result *res, const char *name)
{
    return tsim_pv(res, 0, name);
}

Test(gateway, complexity_without_error_sends_every_request_to_its_side)
{
    sim_result res;
    complexity_run("", &res);
    cr_assert_eq(metric(&res, "small_got_complex"), 0);
    cr_assert_eq(metric(&res, "large_got_simple"), 0);
    double simple = metric(&res, "small_got_simple"), complex = metric(&res, "large_got_complex");
    cr_assert_eq(simple + complex, 40000);
    /* scores uniform: P(simple) = 0.3, 5 binomial standard errors */
    cr_assert_float_eq(simple, 0.3 * 40000, 5 * sqrt(40000 * 0.3 * 0.7));
    cr_assert_eq(tsim_pv(&res, 1, "arrivals"), (uint64_t) simple);
    sim_result_free(&res);
}

/* Error 0.1: a tenth of each side goes to the other model, 5 binomial standard
 * errors of each side's count. */
Test(gateway, complexity_error_misroutes_that_fraction_of_each_side)
{
    sim_result res;
    complexity_run("classifier_error = 0.1\nclassifier_ms = const(3)\noverhead_ms = const(1)\n", &res);
    double ss = metric(&res, "small_got_simple"), sc = metric(&res, "small_got_complex");
    double ls = metric(&res, "large_got_simple"), lc = metric(&res, "large_got_complex");
    double simple = ss + ls, complex = sc + lc;
    cr_assert_float_eq(ls, 0.1 * simple, 5 * sqrt(simple * 0.1 * 0.9));
    cr_assert_float_eq(sc, 0.1 * complex, 5 * sqrt(complex * 0.1 * 0.9));
    /* the classifier and gateway time is overhead: 4 ms for every request */
    cr_assert_float_eq(tsim_sys(&res, "overhead")->mean, 4, 1e-9);
    cr_assert_float_eq(tsim_sys(&res, "overhead")->max, 4, 1e-9);
    sim_result_free(&res);
}

/* Band 0.1 around 0.3: scores in [0.2, 0.4) go to the large model whatever the
 * classifier says, the rest as without a band (no error). */
Test(gateway, complexity_uncertain_band_goes_to_the_large_model)
{
    sim_result res;
    complexity_run("uncertain_band = 0.1\n", &res);
    double ss = metric(&res, "small_got_simple"), ls = metric(&res, "large_got_simple");
    cr_assert_eq(metric(&res, "small_got_complex"), 0);
    /* simple requests (score < 0.3) in the band: a third of them (0.1 of 0.3) */
    cr_assert_float_eq(ls, (ss + ls) / 3, 5 * sqrt((ss + ls) * (1.0 / 3) * (2.0 / 3)));
    sim_result_free(&res);
}

/* least_kv sends to the replica pool with the most free KV: with one target far
 * smaller in KV blocks, it gets fewer requests than round robin would give it. */
Test(gateway, least_kv_prefers_free_kv)
{
    const char *text =
        "[sim]\nrequests = 4000\n[workload]\nrate = 6\nprompt_tokens = const(2000)\noutput_tokens = const(100)\n"
        "target = gw\n[pool gw]\nkind = router\npolicy = least_kv\nnext = a, b\n"
        "[pool a]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nkv_blocks = 2000\n"
        "[pool b]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n";
    sim_result res;
    run(text, &res);
    cr_assert_lt(tsim_pv(&res, 1, "arrivals"), tsim_pv(&res, 2, "arrivals") / 2,
                 "small-KV pool got %lu, large %lu", (unsigned long) tsim_pv(&res, 1, "arrivals"),
                 (unsigned long) tsim_pv(&res, 2, "arrivals"));
    sim_result_free(&res);
}

Test(gateway, router_bad_input)
{
    const char *head = "[sim]\nrequests = 10\n[workload]\nrate = 1\ntarget = g\n";
    char t[1024];
    snprintf(t, sizeof t, "%s[pool g]\nkind = router\npolicy = complexity\nnext = w\n[pool w]\nservice_ms = const(1)\n", head);
    expect_error(t, "needs exactly two pools in next");
    snprintf(t, sizeof t, "%s[pool g]\nkind = router\nnext = h\n[pool h]\nkind = router\nnext = g\n", head);
    expect_error(t, "cycle");
    snprintf(t, sizeof t, "%s[pool g]\nkind = router\npolicy = complexity\ncomplexity_cut = 1.5\nnext = w, v\n"
             "[pool w]\nservice_ms = const(1)\n[pool v]\nservice_ms = const(1)\n", head);
    expect_error(t, "complexity_cut");
    snprintf(t, sizeof t, "%s[pool g]\nkind = router\npolicy = closest\nnext = w\n[pool w]\nservice_ms = const(1)\n", head);
    expect_error(t, "policy");
}

/* ---- prefix (KV) cache in LLM pools ---------------------------------------- */

/* The Mooncake conversation slice (tests/data), requests 1000 s apart (nothing in
 * flight when the next arrives), a long-context Llama-3-8B, chunked prefill. */
#define MOONCAKE_TEXT \
    "[sim]\nrequests = 900\nwarmup = 100\n[workload]\narrival = constant\nrate = %s\n" \
    "trace = data/mooncake_conversation_1000.jsonl\ntarget = chat\n" \
    "[model llama-3-8b-128k]\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nhead_dim = 128\n" \
    "intermediate = 14336\nvocab = 128256\nparams = 8.03e9\ncontext = 131072\nsource = test\n" \
    "[pool chat]\nkind = llm\nmodel = llama-3-8b-128k\ngpu = h100\nscheduler = chunked\n" \
    "prefix_cache = yes\nkv_blocks = %d\n%s"

static void run_named(const char *name, const char *text, sim_result *res)
{
    scenario sc;
    char err[1024];
    sqlite3 *db = NULL;
    cr_assert_eq(scenario_load_text(&sc, name, text, NULL, 0, err, sizeof err), 0, "%s", err);
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scenario_resolve(&sc, db, err, sizeof err), 0, "%s", err);
    store_close(db);
    cr_assert_eq(sim_run(&sc, 1, res, err, sizeof err), 0, "%s", err);
    scenario_free(&sc);
}

/* CHECK: run the whole-structure block accounting checks at every step. */
static double mooncake_hit_rate(const char *rate, int kv_blocks, const char *extra, int check, sim_result *res)
{
    char t[2048];
    snprintf(t, sizeof t, MOONCAKE_TEXT, rate, kv_blocks, extra);
    if (check) setenv("LATSIM_CHECK", "1", 1);
    run_named("tests/test_gateway.ini", t, res);
    unsetenv("LATSIM_CHECK");
    return tsim_pv(res, 0, "prefix_hit_rate");
}

/* Room for everything and nothing in flight: every earlier request's blocks are
 * cached when the next arrives, which is the definition of repeat_token_share. */
Test(gateway, prefix_cache_equals_repeat_token_share_exactly)
{
    sim_result res;
    double hit = mooncake_hit_rate("0.001", 4000000, "", 0, &res);
    double share = sim_result_get(&res, "", "repeat_token_share", "value");
    cr_assert(!isnan(share));
    cr_assert_eq(hit, share, "prefix_hit_rate %.9f, repeat_token_share %.9f", hit, share);
    cr_assert_eq(tsim_pv(&res, 0, "prefix_evictions"), 0);
    cr_assert_gt(tsim_pv(&res, 0, "ttft_saved_ms"), 0);
    sim_result_free(&res);
}

/* 20000 KV blocks hold about 600 of the trace's 512-token blocks: lower, but the
 * shared first block still hits; with requests overlapping (2 per second) the
 * accounting stays exact (checked at every step). */
Test(gateway, small_prefix_cache_is_lower_but_positive)
{
    sim_result res;
    double full = mooncake_hit_rate("0.001", 4000000, "", 0, &res);
    sim_result_free(&res);
    double small = mooncake_hit_rate("0.001", 20000, "", 0, &res);
    cr_assert_lt(small, full);
    cr_assert_gt(small, 0);
    cr_assert_gt(tsim_pv(&res, 0, "prefix_evictions"), 0);
    sim_result_free(&res);
    double busy = mooncake_hit_rate("2", 20000, "", 1, &res);
    cr_assert_gt(busy, 0);
    sim_result_free(&res);
}

/* An LRU of KV_BLOCKS blocks over the slice's hash ids, written here apart from
 * sim/llm/prefix.c: each id costs 32 blocks (512 tokens / 16), a partial last one
 * fewer; a request finds the leading run of its ids present, then its ids are
 * touched in order (the last most recent) and the least recent evicted while
 * over capacity.  Returns found / prompt tokens over requests FIRST.. (the
 * simulation's measured ones). */
static double lru_hit_rate(const char *path, long kv_blocks, int first)
{
    enum { MAXIDS = 8192 };
    static long ids[MAXIDS], cost[MAXIDS];    /* LRU order: index 0 least recent */
    int n = 0, row = 0;
    long used = 0;
    double found = 0, prompt = 0;
    json_error_t e;
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[1 << 16];
    while (fgets(line, sizeof line, f)) {
        json_t *o = json_loads(line, 0, &e);
        cr_assert_not_null(o, "%s", e.text);
        long in = (long) json_integer_value(json_object_get(o, "input_length"));
        json_t *h = json_object_get(o, "hash_ids");
        long k = (long) json_array_size(h), want = (in + 511) / 512;
        if (k > want) k = want;
        long run = 0;
        for (; run < k; run++) {
            long id = (long) json_integer_value(json_array_get(h, (size_t) run)), i = 0;
            while (i < n && ids[i] != id) i++;
            if (i == n) break;
        }
        if (row >= first) {
            found += (double) (run * 512 < in ? run * 512 : in);
            prompt += (double) in;
        }
        for (long j = 0; j < k; j++) {
            long id = (long) json_integer_value(json_array_get(h, (size_t) j)), i = 0;
            long rest = in - (k - 1) * 512, c = j == k - 1 && rest < 512 ? (rest + 15) / 16 : 32;
            while (i < n && ids[i] != id) i++;
            if (i < n) {                          /* present: move to the most recent end */
                c = cost[i];
                memmove(&ids[i], &ids[i + 1], (size_t) (n - i - 1) * sizeof ids[0]);
                memmove(&cost[i], &cost[i + 1], (size_t) (n - i - 1) * sizeof cost[0]);
                n--;
                used -= c;
            }
            cr_assert_lt(n, MAXIDS);
            ids[n] = id;
            cost[n++] = c;
            used += c;
        }
        while (used > kv_blocks && n > 0) {       /* evict the least recent */
            used -= cost[0];
            memmove(&ids[0], &ids[1], (size_t) (n - 1) * sizeof ids[0]);
            memmove(&cost[0], &cost[1], (size_t) (n - 1) * sizeof cost[0]);
            n--;
        }
        json_decref(o);
        row++;
    }
    fclose(f);
    return found / prompt;
}

/* With less room, the simulated cache also holds the running request's output
 * blocks, and evicts in the same order: it finds at most what the LRU above
 * finds, and (requests far apart) close to it: measured equal to 6 digits at
 * all three sizes (0.0377451, 0.0435212, 0.145867); the 5 % margin allows for
 * output blocks forcing an eviction the LRU does not make. */
Test(gateway, small_prefix_cache_is_bounded_by_an_lru_of_the_trace_blocks)
{
    static const long sizes[] = { 20000, 60000, 200000 };
    for (int i = 0; i < 3; i++) {
        sim_result res;
        double hit = mooncake_hit_rate("0.001", (int) sizes[i], "", 0, &res);
        sim_result_free(&res);
        double lru = lru_hit_rate("tests/data/mooncake_conversation_1000.jsonl", sizes[i], 100);
        cr_assert_leq(hit, lru + 1e-12, "%ld blocks: simulated %.6f > LRU %.6f", sizes[i], hit, lru);
        cr_assert_gt(hit, 0.95 * lru, "%ld blocks: simulated %.6f, LRU %.6f", sizes[i], hit, lru);
    }
}

/* Four replicas with their own caches (60000 blocks each): sending a request
 * where its prefix is cached finds more than round robin, which scatters
 * conversations (measured: 0.153 against 0.081). */
Test(gateway, prefix_affinity_beats_round_robin)
{
    sim_result res;
    double rr = mooncake_hit_rate("0.001", 60000, "replicas = 4\nrouting = round_robin\n", 0, &res);
    sim_result_free(&res);
    double pa = mooncake_hit_rate("0.001", 60000, "replicas = 4\nrouting = prefix_affinity\n", 0, &res);
    sim_result_free(&res);
    cr_assert_gt(pa, rr + 0.04, "prefix_affinity %.4f, round_robin %.4f", pa, rr);
}

/* A router's bounded-staleness view of the caches.  Two single-replica pools
 * with prefix caches behind a prefix_affinity router; every prompt is the same
 * 2048-token system prompt followed by 1000 tokens of its own (the system
 * prompt is 4 of its 6 blocks of 512, above the 0.5 threshold); requests 1 s
 * apart, each served well within that second.
 * Ties (nothing seen anywhere) go to the target after a rotating start: the
 * first request to a.
 * - staleness 0 and 500 ms: request 1 sees the blocks request 0 cached in a at
 *   t = 0 (older than 500 ms), so every request goes to a;
 * - staleness 1500 ms: request 1 (t = 1 s) sees the caches as they were at
 *   t = -0.5 s, empty: a tie, and the rotation sends it to b; request 2 (view
 *   of t = 0.5 s) sees a's blocks but not b's (cached at 1 s): a; from request 3
 *   on both are seen, ties again alternate: a gets 0, 2, 4, 6, 8, b the rest. */
#define STALE_TEXT \
    "[sim]\nrequests = 10\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n" \
    "prompt_tokens = const(1000)\noutput_tokens = const(20)\nsystem_prompt_tokens = 2048\ntarget = gw\n" \
    "[pool gw]\nkind = router\npolicy = prefix_affinity\nstaleness_ms = %g\nnext = a, b\n" \
    "[pool a]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nprefix_cache = yes\n" \
    "[pool b]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nprefix_cache = yes\n"

Test(gateway, router_staleness_hides_recently_cached_prefixes)
{
    static const struct { double stale; uint64_t a, b; } cases[] = {
        { 0, 10, 0 }, { 500, 10, 0 }, { 1500, 5, 5 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, STALE_TEXT, cases[i].stale);
        sim_result res;
        run(text, &res);
        cr_assert_eq(tsim_n(&res, "served"), 10);
        cr_assert_eq(tsim_pv(&res, 1, "arrivals"), cases[i].a, "staleness %g ms: a got %lu", cases[i].stale,
                     (unsigned long) tsim_pv(&res, 1, "arrivals"));
        cr_assert_eq(tsim_pv(&res, 2, "arrivals"), cases[i].b, "staleness %g ms: b got %lu", cases[i].stale,
                     (unsigned long) tsim_pv(&res, 2, "arrivals"));
        /* Only the first request to each pool misses the system prompt. */
        double hits = tsim_pv(&res, 1, "prefix_request_hit_rate");
        cr_assert_float_eq(hits, (double) (cases[i].a - 1) / (double) cases[i].a, 1e-12);
        sim_result_free(&res);
    }
}

/* ---- class attributes ------------------------------------------------------ */

/* The class's 2100-token system prompt goes before every 900-token prompt:
 * prompts of 3000 tokens whose first 131 whole 16-token KV blocks (2096 tokens;
 * synthetic prompts are hashed per KV block) are found by every measured request
 * (the warm-up cached them), so the hit rate is 2096 / 3000 exactly. */
Test(gateway, shared_system_prompt_has_its_known_hit_rate)
{
    const char *text =
        "[sim]\nrequests = 500\nwarmup = 20\n[workload]\narrival = constant\nrate = 0.5\n"
        "prompt_tokens = const(900)\noutput_tokens = const(50)\nsystem_prompt_tokens = 2100\ntarget = chat\n"
        "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nprefix_cache = yes\n";
    sim_result res;
    run(text, &res);
    cr_assert_float_eq(tsim_pv(&res, 0, "prefix_hit_rate"), 2096.0 / 3000.0, 1e-12);
    cr_assert_eq(tsim_pv(&res, 0, "prefix_request_hit_rate"), 1);
    cr_assert_eq(tsim_pv(&res, 0, "prefill_tokens_saved"), 2096);
    sim_result_free(&res);
}

/* Scores from the classes: easy 0.1, hard 0.9, cut 0.5, no error: the small
 * model gets exactly the easy class. */
Test(gateway, complexity_from_the_class)
{
    const char *text =
        "[sim]\nrequests = 5000\n[workload]\nrate = 10\ntarget = gw\n"
        "[class easy]\nshare = 0.7\ncomplexity = const(0.1)\n[class hard]\nshare = 0.3\ncomplexity = const(0.9)\n"
        "[pool gw]\nkind = router\npolicy = complexity\nnext = small, large\n"
        "[pool small]\nservers = 4\nservice_ms = exp(mean=50)\n"
        "[pool large]\nservers = 8\nservice_ms = exp(mean=100)\n";
    sim_result res;
    run(text, &res);
    cr_assert_eq(tsim_pv(&res, 0, "small_got_complex"), 0);
    cr_assert_eq(tsim_pv(&res, 0, "large_got_simple"), 0);
    cr_assert_float_eq(tsim_pv(&res, 0, "small_got_simple"), 0.7 * 5000, 5 * sqrt(5000 * 0.21));
    sim_result_free(&res);
}

/* Scores from a trace column (tests/data/complexity_scores.csv, read in file
 * order, twice): 0.1, 0.9, 0.49, 0.5, 0, 1, 0.3, 0.7, 0.51 and one empty field.
 * Cut 0.5, no error: four rows per pass are simple (0.1, 0.49, 0, 0.3), five
 * complex; the class says 0.99 for everyone, so the rows win, and the empty row
 * takes the class's 0.99 (complex).  Without the class's distribution the empty
 * row takes the router's own draw, here const(0.2) (simple).  The small model
 * takes 10 ms, the large 100 ms, arrivals 1 s apart: the mean e2e says which
 * model served how many requests, exactly. */
#define SCORES_TEXT \
    "[sim]\nrequests = 20\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n" \
    "trace = data/complexity_scores.%s\ncomplexity_column = score\ntarget = gw\n%s" \
    "[pool gw]\nkind = router\npolicy = complexity\ncomplexity = const(0.2)\nnext = small, large\n" \
    "[pool small]\nservice_ms = const(10)\n[pool large]\nservice_ms = const(100)\n"

Test(gateway, complexity_from_a_trace_column)
{
    char text[1024];
    sim_result res;
    snprintf(text, sizeof text, SCORES_TEXT, "csv", "[class all]\ncomplexity = const(0.99)\n");
    run_named("tests/test_gateway.ini", text, &res);
    cr_assert_eq(tsim_pv(&res, 0, "small_got_simple"), 8);
    cr_assert_eq(tsim_pv(&res, 0, "large_got_complex"), 12);
    cr_assert_eq(tsim_pv(&res, 0, "small_got_complex"), 0);
    cr_assert_eq(tsim_pv(&res, 0, "large_got_simple"), 0);
    cr_assert_float_eq(tsim_sys(&res, "e2e")->mean, (8 * 10 + 12 * 100) / 20.0, 1e-9);
    sim_result_free(&res);
    snprintf(text, sizeof text, SCORES_TEXT, "csv", "");
    run_named("tests/test_gateway.ini", text, &res);
    cr_assert_eq(tsim_pv(&res, 0, "small_got_simple"), 10);
    cr_assert_eq(tsim_pv(&res, 0, "large_got_complex"), 10);
    cr_assert_float_eq(tsim_sys(&res, "e2e")->mean, (10 * 10 + 10 * 100) / 20.0, 1e-9);
    sim_result_free(&res);
    /* JSON lines (tests/data/complexity_scores.jsonl): 0.2, 0.8, null, 0.45 five
     * times; null takes the router's 0.2: 3 of 4 simple. */
    snprintf(text, sizeof text, SCORES_TEXT, "jsonl", "");
    run_named("tests/test_gateway.ini", text, &res);
    cr_assert_eq(tsim_pv(&res, 0, "small_got_simple"), 15);
    cr_assert_eq(tsim_pv(&res, 0, "large_got_complex"), 5);
    sim_result_free(&res);
}

/* A score outside [0, 1] or not a number is one line naming the scenario's key,
 * the trace file and its line. */
Test(gateway, complexity_column_bad_values)
{
    static const struct { const char *ext, *body, *what; } cases[] = {
        { "csv", "ContextTokens,GeneratedTokens,score\n1,1,0.5\n1,1,1.5\n", ".csv:3: score 1.5 is outside [0, 1]" },
        { "csv", "ContextTokens,GeneratedTokens,score\n1,1,-0.1\n", ".csv:2: score -0.1 is outside [0, 1]" },
        { "csv", "ContextTokens,GeneratedTokens,score\n1,1,0.5\n1,1,0.2\n1,1,hard\n", ".csv:4: score 'hard' is not a number" },
        { "jsonl", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"score\": 2}\n",
          ".jsonl:1: \"score\" = 2 is outside [0, 1]" },
        { "jsonl", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"score\": 0}\n"
                   "{\"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, \"score\": \"easy\"}\n",
          ".jsonl:2: \"score\" is not a number" },
        { "jsonl", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n", ".jsonl:1: no field \"score\"" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[128], name[64], text[1024], want[256];
        snprintf(name, sizeof name, "latsim_scores_%ld_%zu.%s", (long) getpid(), i, cases[i].ext);
        snprintf(path, sizeof path, "/tmp/%s", name);
        FILE *f = fopen(path, "w");
        cr_assert(f);
        fputs(cases[i].body, f);
        fclose(f);
        snprintf(text, sizeof text, "[sim]\nrequests = 10\n[workload]\nrate = 1\ntrace = %s\n"
                 "complexity_column = score\ntarget = w\n[pool w]\nservice_ms = const(1)\n", name);
        snprintf(want, sizeof want, "test_gateway.ini:6: [workload] complexity_column: /tmp/%s", name);
        expect_error(text, want);
        expect_error(text, cases[i].what);
        remove(path);
    }
    expect_error("[sim]\nrequests = 10\n[workload]\nrate = 1\ncomplexity_column = score\ntarget = w\n"
                 "[pool w]\nservice_ms = const(1)\n", "[workload] complexity_column: needs a trace");
}

/* A class whose answers are never cached (cache_ttl_s = 0) never hits; a class
 * with few intents hits often. */
Test(gateway, result_cache_ttl_and_intents_from_the_class)
{
    const char *text =
        "[sim]\nrequests = 4000\n[workload]\nrate = 2\ntarget = cache\n"
        "[class news]\nshare = 0.5\nintents = 10\ncache_ttl_s = 0\n"
        "[class facts]\nshare = 0.5\nintents = 10\ncache_ttl_s = 86400\n"
        "[pool cache]\nkind = result_cache\nnext = work\n"
        "[pool work]\nservice_ms = const(10)\n";
    sim_result res;
    run(text, &res);
    double hits = tsim_pv(&res, 0, "hits");
    /* facts: all but the first of each of its 10 intents (and those in flight) hit */
    cr_assert_gt(hits, 0.5 * 4000 * 0.95);
    cr_assert_lt(hits, 0.5 * 4000 * 1.05);
    sim_result_free(&res);
}

/* Runs TEXT (one LLM pool first) and returns its prefix_hit_rate; *REQ gets its
 * prefix_request_hit_rate. */
static double prefix_rates(const char *text, double *req)
{
    sim_result res;
    run(text, &res);
    double hit = tsim_pv(&res, 0, "prefix_hit_rate");
    *req = tsim_pv(&res, 0, "prefix_request_hit_rate");
    sim_result_free(&res);
    return hit;
}

/* Multi-turn sessions of 3 turns, 700 new prompt tokens and 300 answer tokens per
 * turn, 16-token KV blocks, arrivals 2 s apart, room for everything.  Turn
 * prompts are 700, 700+300+700 = 1700 and 1700+300+700 = 2700 tokens.  An answer
 * of 300 tokens takes ~2.4 s, so each turn arrives while the previous one is
 * still decoding (peak_in_system 2) and finds the whole blocks of its prompt,
 * held by it: 0, 700 -> 43 blocks (688) and 1700 -> 106 blocks (1696).  The
 * warm-up (30 requests) ends on a session boundary, so the hit rate is
 * (688 + 1696) / (700 + 1700 + 2700) exactly and two requests in three hit.
 * (With 512-token blocks the prompt and the context gave the same 1 and 3
 * blocks.)  Without turns, nothing is found. */
Test(gateway, multi_turn_sessions_have_their_known_hit_rate)
{
    const char *text =
        "[sim]\nrequests = 300\nwarmup = 30\n[workload]\narrival = constant\nrate = 0.5\n"
        "prompt_tokens = const(700)\noutput_tokens = const(300)\nturns = const(3)\ntarget = chat\n"
        "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nprefix_cache = yes\n";
    double req, hit = prefix_rates(text, &req);
    cr_assert_float_eq(hit, 2384.0 / 5100.0, 1e-12);
    cr_assert_float_eq(req, 2.0 / 3.0, 1e-12);
}

/* A system prompt and sessions together: a 1100-token system prompt (68 whole
 * 16-token blocks shared by every session) opens each conversation of 2 turns, new
 * messages of 1200 tokens, answers of 100: turn 1 (1100 + 1200 = 2300) finds the
 * 68 system blocks (1088) and leaves its context 2300 + 100 - 1 = 2399 tokens, 149
 * whole blocks; turn 2 (2300 + 100 + 1200 = 3600) finds those 149 (2384).  Hit
 * rate (1088 + 2384) / (2300 + 3600), and every request hits. */
Test(gateway, multi_turn_sessions_share_the_system_prompt)
{
    const char *text =
        "[sim]\nrequests = 200\nwarmup = 20\n[workload]\narrival = constant\nrate = 0.5\n"
        "prompt_tokens = const(1200)\noutput_tokens = const(100)\nturns = const(2)\n"
        "system_prompt_tokens = 1100\ntarget = chat\n"
        "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nprefix_cache = yes\n";
    double req, hit = prefix_rates(text, &req);
    cr_assert_float_eq(hit, 3472.0 / 5900.0, 1e-12);
    cr_assert_float_eq(req, 1, 1e-12);
}

/* The answer is part of the next turn's prompt, and its whole blocks stay
 * cached under the session's keys.  New message 100 tokens, answer 1000,
 * 16-token KV blocks, turns 20 s apart (an answer takes ~8 s, so it is back
 * before the next turn): turn 1 (100) finds nothing, and leaves its context
 * 100 + 1000 - 1 (the last token's KV is never computed) = 68 whole blocks;
 * turn 2 (1200) finds those 68 (1088) and leaves 2199 = 137 blocks; turn 3 (2300)
 * finds 137 (2192).  Hit rate (1088 + 2192) / (100 + 1200 + 2300) exactly. */
static const char TURNS_ANSWERS[] =
    "prompt_tokens = const(100)\noutput_tokens = const(1000)\nturns = const(3)\ntarget = chat\n"
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nprefix_cache = yes\n";

/* In closed loop each user keeps its own session, and sends its next turn after
 * the answer came back (think 1 s): 4 users talking at once find exactly what
 * the lone conversation finds (the window, 540 requests after a 60-request
 * warm-up, holds whole sessions of every user, all in step). */
Test(gateway, multi_turn_sessions_find_the_previous_answer)
{
    static const char *const heads[] = {
        "[sim]\nrequests = 300\nwarmup = 30\n[workload]\narrival = constant\nrate = 0.05\n",   /* one conversation */
        "[sim]\nrequests = 600\nwarmup = 60\n[workload]\nusers = 4\nthink_ms = const(1000)\n", /* four users */
    };
    for (int k = 0; k < 2; k++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s", heads[k], TURNS_ANSWERS);
        double req, hit = prefix_rates(text, &req);
        cr_assert_float_eq(hit, 3280.0 / 3600.0, 1e-12, "%s", heads[k]);
        cr_assert_float_eq(req, 2.0 / 3.0, 1e-12, "%s", heads[k]);
    }
}

/* Open loop with `sessions`: the class keeps 50 conversations open and each
 * arrival (every 2 s) continues one at random, so a conversation's turns come
 * about 100 s apart, after its ~8 s answers: a turn finds its history (prompt
 * and answer) unless the same conversation was drawn again within the answer's
 * time (about 1 - (49/50)^4 = 8 % of the turns): a hit rate near 0.92 x
 * 3280/3600 = 0.84, below the lone conversation's 0.911.  With one session the
 * turns come 2 s apart, before the previous answer: only prompts are found,
 * (96 + 1200) / 3600 = 0.36 when none is back in time. */
Test(gateway, open_loop_sessions_spread_the_turns)
{
    double hit[2], req;
    for (int k = 0; k < 2; k++) {
        char text[1024];
        snprintf(text, sizeof text, "[sim]\nrequests = 3000\nseed = 1\n[workload]\nrate = 0.5\nsessions = %d\n%s",
                 k ? 50 : 1, TURNS_ANSWERS);
        hit[k] = prefix_rates(text, &req);
    }
    cr_assert_lt(hit[0], 0.40, "one session: %g", hit[0]);
    cr_assert_gt(hit[1], 0.74, "50 sessions: %g", hit[1]);
    cr_assert_lt(hit[1], 3280.0 / 3600.0, "50 sessions: %g", hit[1]);
    char err[512];
    scenario sc;
    cr_assert_neq(scenario_load_text(&sc, "s.ini", "[workload]\nrate = 1\nsessions = 4\n[pool p]\nservice_ms = const(1)\n",
                                     NULL, 0, err, sizeof err), 0);
    scenario_free(&sc);
    cr_assert(strstr(err, "s.ini:3: [workload] sessions: needs turns"), "%s", err);
    cr_assert_neq(scenario_load_text(&sc, "s.ini", "[workload]\nusers = 4\nturns = const(2)\nsessions = 4\n"
                                     "[pool p]\nservice_ms = const(1)\n", NULL, 0, err, sizeof err), 0);
    scenario_free(&sc);
    cr_assert(strstr(err, "[workload] sessions: closed loop: each user holds its own conversation"), "%s", err);
}

/* prefix_affinity over 4 replicas, 16 users in conversations: at the default
 * affinity_threshold (0.5) every turn follows its history and finds what a lone
 * conversation finds (within 1e-4: the 540-request window does not hold whole
 * sessions of all 16 users, 364 hits where whole sessions give 360); at 1 a prefix never counts (a turn's new message is
 * never cached), routing falls back to the least loaded and turns lose their
 * history often (0.50 at this seed: far below). */
Test(gateway, affinity_threshold_decides_when_a_prefix_counts)
{
    double hit[2];
    for (int k = 0; k < 2; k++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "[sim]\nrequests = 600\nwarmup = 60\n[workload]\nusers = 16\nthink_ms = const(1000)\n%s"
                 "replicas = 4\nrouting = prefix_affinity\naffinity_threshold = %s\n",
                 TURNS_ANSWERS, k ? "1" : "0.5");
        sim_result res;
        run(text, &res);
        hit[k] = tsim_pv(&res, 0, "prefix_hit_rate");
        sim_result_free(&res);
    }
    cr_assert_float_eq(hit[0], 3280.0 / 3600.0, 1e-4, "%g", hit[0]);
    cr_assert_lt(hit[1], hit[0] - 0.2, "threshold 1: %g, 0.5: %g", hit[1], hit[0]);
}

/* A client's retry is the same request: it keeps its class's system prompt
 * (and so finds its blocks).  Timeouts of 500 ms under load make the client
 * retry; every admission, first attempt or retry, finds at least the system
 * prompt's 4 whole blocks (2048 of 2100 + 900 tokens; a retry may find more: the
 * blocks its abandoned attempt computed). */
Test(gateway, a_retry_keeps_the_system_prompt)
{
    const char *text =
        "[sim]\nrequests = 3000\nseed = 1\n[workload]\nrate = 6\nprompt_tokens = const(900)\n"
        "output_tokens = const(50)\nsystem_prompt_tokens = 2100\ntarget = chat\n"
        "[client]\ntimeout_ms = 500\nretries = 2\n"
        "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nprefix_cache = yes\n";
    sim_result res;
    run(text, &res);
    double retries = sim_result_get(&res, "", "retries", "value");
    cr_assert_gt(retries, 100, "retries %g", retries);
    cr_assert_eq(tsim_pv(&res, 0, "prefix_request_hit_rate"), 1);
    cr_assert_geq(tsim_pv(&res, 0, "prefix_hit_rate"), 2048.0 / 3000.0);
    sim_result_free(&res);
}

/* ---- hop = measured(ID) ------------------------------------------------------- */

/* Stores a `calib net` model as cmd_net does (p50/p90/p99 per payload size, the
 * fit of base_ms + ms_per_mb x MB over the medians) with the given numbers;
 * returns its id. */
static int64_t store_net_model(sqlite3 *db, double base_ms, double ms_per_mb, double p99_over_p50)
{
    char err[512];
    cr_assert_eq(cdb_init(db, err, sizeof err), 0, "%s", err);
    cdb_writer w = { 0 };
    cr_assert_eq(cdb_writer_open(&w, db, err, sizeof err), 0, "%s", err);
    const double sizes[3] = { 64, 65536, 1048576 };
    int64_t ids[3];
    for (int i = 0; i < 3; i++) {
        double p50 = base_ms + ms_per_mb * sizes[i] / 1e6;
        const double v[3] = { p50, p50 * (1 + (p99_over_p50 - 1) / 2), p50 * p99_over_p50 };
        static const char *const nm[3] = { "p50", "p90", "p99" };
        for (int k = 0; k < 3; k++) {
            cdb_meas me = { .source = "net", .what = "rtt", .name = nm[k], .gpu = "test", .bytes = sizes[i],
                            .time_ms = v[k], .std_ms = NAN, .repeats = 200, .device = "", .measured_at = "",
                            .tool = "test" };
            cr_assert_eq(cdb_put(&w, &me, k == 0 ? &ids[i] : NULL, err, sizeof err), 0, "%s", err);
        }
    }
    cdb_writer_close(&w);
    cdb_fit f = { .kind = "net", .n_points = 3, .r2 = 1, .folds = 3, .ncoef = 2 };
    snprintf(f.source, sizeof f.source, "net");
    snprintf(f.coef[0].name, sizeof f.coef[0].name, "base_ms");
    f.coef[0].value = base_ms;
    snprintf(f.coef[1].name, sizeof f.coef[1].name, "ms_per_mb");
    f.coef[1].value = ms_per_mb;
    cr_assert_eq(cdb_save_fit(db, &f, ids, 3, err, sizeof err), 0, "%s", err);
    return f.id;
}

static int run_with_db(sqlite3 *db, const char *text, sim_result *res, char *err, size_t n)
{
    cnet_register();   /* measured(ID) reads the calibrator's network fits */
    scenario sc;
    int rc = scenario_load_text(&sc, "/tmp/test_gateway.ini", text, NULL, 0, err, n);
    if (rc == 0) rc = scenario_resolve(&sc, db, err, n);
    if (rc == 0) cr_assert_eq(sim_run(&sc, 1, res, err, n), 0, "%s", err);
    scenario_free(&sc);
    return rc;
}

#define MEASURED_TEXT(ID, N) \
    "[sim]\nrequests = " #N "\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n" \
    "prompt_tokens = const(1000)\noutput_tokens = const(50)\ntarget = link\n" \
    "[pool link]\nkind = net\nhop = measured(" #ID ")\n" \
    "header_bytes = 100\nproto_ms_per_kb = 0.5\nstream = no\nnext = work\n" \
    "[pool work]\nservice_ms = const(30)\n"

/* A stored link with a 20 ms base and 2000 ms per MB echoed (B bytes each way:
 * 1000 bytes per ms each way, 8 Mbit/s) and no spread: the same link as
 * HOP_TEXT's, so the same times by hand: 10 + 4.1 + 10 + 0.3 ms of network.
 * An unknown id is a one-line error at its key. */
Test(gateway, measured_hop_by_hand)
{
    sqlite3 *db;
    char err[1024] = "";
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "%s", err);
    int64_t id = store_net_model(db, 20, 2000, 1);
    cr_assert_eq(id, 1);
    sim_result res;
    cr_assert_eq(run_with_db(db, MEASURED_TEXT(1, 200), &res, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tsim_n(&res, "served"), 200);
    cr_assert_float_eq(tsim_sys(&res, "network")->mean, 10 + 4.1 + 10 + 0.3, 1e-6);
    cr_assert_float_eq(tsim_sys(&res, "network")->max, 10 + 4.1 + 10 + 0.3, 1e-6);
    cr_assert_float_eq(tsim_sys(&res, "overhead")->mean, 2.0 + 0.1, 1e-6);
    sim_result_free(&res);
    cr_assert_neq(run_with_db(db, MEASURED_TEXT(7, 200), &res, err, sizeof err), 0);
    cr_assert(strstr(err, "test_gateway.ini:12: [pool link] hop: no network model with id 7"), "%s", err);
    const char *both = "[sim]\nrequests = 10\n[workload]\ntarget = link\n"
                       "[pool link]\nkind = net\nhop = measured(1)\npreset = cross_zone\nnext = work\n"
                       "[pool work]\nservice_ms = const(30)\n";
    cr_assert_neq(run_with_db(db, both, &res, err, sizeof err), 0);
    cr_assert(strstr(err, "[pool link] hop: measured(ID) sets the link"), "%s", err);
    store_close(db);
}

/* With p99 = 2 x p50 for the smallest payload the RTT is lognormal with median
 * 20 ms and sigma = ln 2 / z(0.99): mean 20 exp(sigma^2 / 2) = 20.908 ms, cv
 * 0.305.  2000 requests: the mean's standard error is 20.9 x 0.305 / sqrt(2000)
 * = 0.14 ms; 4 SE = 0.57 ms, which also keeps it apart from the 20 ms median. */
Test(gateway, measured_hop_rtt_spread_from_its_percentiles)
{
    sqlite3 *db;
    char err[1024] = "";
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "%s", err);
    store_net_model(db, 20, 2000, 2);
    sim_result res;
    cr_assert_eq(run_with_db(db, MEASURED_TEXT(1, 2000), &res, err, sizeof err), 0, "%s", err);
    double sigma = log(2.0) / 2.3263478740408408;
    cr_assert_float_eq(tsim_sys(&res, "network")->mean, 20 * exp(sigma * sigma / 2) + 4.4, 0.57);
    sim_result_free(&res);
    store_close(db);
}

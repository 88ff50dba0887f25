/* test_conn.c -- connections on network hops (sim/gateway/conn.c, hop.c):
 * handshake round trips, slow-start rounds and stalls against their closed
 * forms, the same in whole runs (a new TLS 1.3 connection costs exactly 2 RTT
 * more than a reused one, TLS 1.2 three), pooled connections (reuse, idle
 * close, the HTTP/1.1 wait against Erlang C, HTTP/2 streams), the mobile
 * radio's wake-ups, segment loss against its expectation, and bad input. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/conn.h"
#include "run/breakdown.h"
#include "latsim/report.h"
#include "latsim/slo.h"
#include "tsim.h"

/* ---- closed forms ----------------------------------------------------------- */

Test(conn, handshake_round_trips)
{
    conn_cfg c = {0};
    cr_assert_eq(conn_handshake_rtts(&c, 0), 1, "TCP alone: SYN, SYN-ACK");
    c.tls = CONN_TLS_13;
    cr_assert_eq(conn_handshake_rtts(&c, 0), 2);
    c.tls = CONN_TLS_12;
    cr_assert_eq(conn_handshake_rtts(&c, 0), 3);
    c.resume = CONN_RESUME_TICKET;
    cr_assert_eq(conn_handshake_rtts(&c, 0), 3, "nothing to resume yet");
    cr_assert_eq(conn_handshake_rtts(&c, 1), 2, "abbreviated TLS 1.2 handshake: 1 round trip");
    c.tls = CONN_TLS_13;
    cr_assert_eq(conn_handshake_rtts(&c, 1), 2, "TLS 1.3 PSK resumption without early data");
    c.resume = CONN_RESUME_0RTT;
    cr_assert_eq(conn_handshake_rtts(&c, 1), 1, "TLS 1.3 early data: TCP only");
}

/* k rounds send W (2^k - 1) segments: the least k with W (2^k - 1) >= S is
 * ceil(log2(S / W + 1)). */
Test(conn, slow_start_rounds_closed_form)
{
    cr_assert_eq(conn_rounds(conn_segments(1e6, 1460), 10), 7, "1 MB from 10 segments: 7 rounds");
    const double W[] = {1, 2, 4, 10, 32};
    for (size_t w = 0; w < sizeof W / sizeof W[0]; w++)
        for (double s = 1; s <= 5000; s += 7) {
            int k = (int) ceil(log2(s / W[w] + 1) - 1e-12);
            if (k < 1) k = 1;
            cr_assert_eq(conn_rounds(s, W[w]), k, "S %g W %g", s, W[w]);
        }
}

/* Every round but the last waits an RTT less its own sending time: the first
 * k - 1 rounds send W (2^(k-1) - 1) segments, so the wait is
 * (k - 1) RTT - W (2^(k-1) - 1) x MSS x 8 / bandwidth. */
static double ss_wait(double segs, double w, double mss, double rtt, double mbps)
{
    int k = conn_rounds(segs, w);
    return (k - 1) * rtt - w * (pow(2, k - 1) - 1) * mss * 8 / (mbps * 1000);
}

/* The window grows by the segments sent; a warm (infinite) window never waits. */
Test(conn, slow_start_stall_by_hand)
{
    double cw = 10;
    double st = conn_stall_ms(1e6, &cw, 1460, 20, 1e9);
    cr_assert_float_eq(st, 6 * 20.0, 1e-5);
    cr_assert_float_eq(st, ss_wait(685, 10, 1460, 20, 1e9), 1e-12);
    cr_assert_float_eq(cw, 10 + 685, 1e-9);
    double again = conn_stall_ms(1e6, &cw, 1460, 20, 1e9);
    cr_assert_eq(again, 0, "a window of 695 segments sends 685 in one round, got %g", again);
    double warm = INFINITY;
    cr_assert_eq(conn_stall_ms(1e9, &warm, 1460, 20, 1), 0);
    /* 8 Mbit/s = 1 byte per us: a round of 10 x 1460 bytes takes 14.6 ms of a 20 ms RTT */
    cw = 10;
    st = conn_stall_ms(20 * 1460, &cw, 1460, 20, 8);
    cr_assert_float_eq(st, 20 - 14.6, 1e-9);
}

/* ---- whole runs ------------------------------------------------------------- */

/* Requests 1 s apart (nothing waits) over a hop of constant RTT, bandwidth to
 * spare and no protocol cost, into a 30 ms server; EXTRA is more hop keys. */
static void one_by_one(const char *extra, const char *tokens, sim_result *res)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[sim]\nrequests = 200\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n%s"
             "target = link\n[pool link]\nkind = net\nrtt_ms = const(20)\nup_mbps = 1e6\n"
             "down_mbps = 1e6\nproto_ms_per_kb = 0\n%s\nnext = work\n[pool work]\nservice_ms = const(30)\n",
             tokens, extra);
    tsim_run("/tmp/test_conn.ini", text, 1, res);
}

#define SMALL "prompt_tokens = const(100)\noutput_tokens = const(50)\n"

Test(conn, new_tls_connection_adds_exact_round_trips)
{
    sim_result warm, t13, t12, plain;
    one_by_one("", SMALL, &warm);
    one_by_one("connection = new\ntls = 1.3", SMALL, &t13);
    one_by_one("connection = new\ntls = 1.2", SMALL, &t12);
    one_by_one("connection = new", SMALL, &plain);
    /* small messages: slow start never waits, so the difference is the handshakes */
    cr_assert_float_eq(tsim_sys(&t13, "e2e")->mean - tsim_sys(&warm, "e2e")->mean, 2 * 20.0, 1e-6);
    cr_assert_float_eq(tsim_sys(&t13, "e2e")->max - tsim_sys(&warm, "e2e")->max, 2 * 20.0, 1e-6);
    cr_assert_float_eq(tsim_sys(&t12, "e2e")->mean - tsim_sys(&warm, "e2e")->mean, 3 * 20.0, 1e-6);
    cr_assert_float_eq(tsim_sys(&plain, "e2e")->mean - tsim_sys(&warm, "e2e")->mean, 20.0, 1e-6);
    cr_assert_float_eq(tsim_prv(tsim_pool_named(&t12, "link"), "setup_ms_mean"), 60, 1e-9);
    cr_assert_float_eq(tsim_prv(tsim_pool_named(&t12, "link"), "conn_opened"), 200, 0);
    cr_assert(isnan(tsim_prv(tsim_pool_named(&warm, "link"), "setup_ms_mean")), "no connection rows on a warm link");
    sim_result_free(&warm);
    sim_result_free(&t13);
    sim_result_free(&t12);
    sim_result_free(&plain);
}

/* The breakdown shows connection setup apart from transfer: on a new TLS 1.3
 * connection of constant RTT 20 ms with messages too small for slow start to
 * wait, every request's connect is exactly 2 RTT = 40 ms, its network the
 * warm link's; the components (now seven) still sum to e2e; a warm link
 * reports no connect row. */
Test(conn, connect_apart_in_the_breakdown)
{
    sim_result warm, t13;
    one_by_one("", SMALL, &warm);
    one_by_one("connection = new\ntls = 1.3", SMALL, &t13);
    cr_assert(tsim_bd_row(&t13, "breakdown.all", BD_CONNECT) && tsim_bd_row(&t13, "breakdown.p99", BD_CONNECT));
    cr_assert(!tsim_bd_row(&warm, "breakdown.all", BD_CONNECT) && !tsim_bd_row(&warm, "breakdown.p99", BD_CONNECT));
    double e = tsim_sys(&t13, "e2e")->mean, sum = 0;
    for (int k = 0; k < BD_N; k++) {   /* the reported components (no KV ones here) */
        const sim_row *w = tsim_bd_row(&t13, "breakdown.all", k);
        if (w) sum += w->value;
    }
    cr_assert_float_eq(sum, 1.0, 1e-12, "the components sum to e2e: %.15g", sum);
    double conn = tsim_bd(&t13, "breakdown.all", BD_CONNECT);
    cr_assert_float_eq(conn * e, 2 * 20.0, 1e-6, "connect %.9g ms", conn * e);
    cr_assert_float_eq(tsim_bd(&t13, "breakdown.p99", BD_CONNECT) * tsim_sys(&t13, "e2e")->mean, 2 * 20.0, 1e-6);
    cr_assert_float_eq(tsim_bd(&t13, "breakdown.all", BD_NETWORK) * e, tsim_sys(&warm, "network")->mean, 1e-6,
                       "transfer as on the warm link");
    cr_assert_float_eq(tsim_sys(&t13, "network")->mean - tsim_sys(&warm, "network")->mean, 2 * 20.0, 1e-6,
                       "the network latency still holds it");
    report ra = {0}, rw = {0};
    cr_assert_eq(report_flatten(&t13, -1, &ra), 0);
    cr_assert_eq(report_flatten(&warm, -1, &rw), 0);
    cr_assert_float_eq(report_get(&ra, "", "breakdown.all.connect", "value"), conn, 0);
    cr_assert(isnan(report_get(&rw, "", "breakdown.all.connect", "value")), "no connect row on a warm link");
    char *json = NULL;
    size_t jn = 0;
    FILE *f = open_memstream(&json, &jn);
    report_json(&ra, "", f);
    fclose(f);
    cr_assert(json && strstr(json, "\"overhead\": ") && strstr(json, "\"connect\": "), "JSON breakdown has connect");
    free(json);
    report_free(&ra);
    report_free(&rw);
    sim_result_free(&warm);
    sim_result_free(&t13);
}

Test(conn, resumption_saves_a_round_trip_after_the_first)
{
    sim_result t12, ticket, zero;
    one_by_one("connection = new\ntls = 1.2", SMALL, &t12);
    one_by_one("connection = new\ntls = 1.2\ntls_resume = ticket", SMALL, &ticket);
    one_by_one("connection = new\ntls = 1.3\ntls_resume = 0rtt", SMALL, &zero);
    /* the first connection does the full handshake, the 199 after it resume */
    cr_assert_float_eq(tsim_sys(&t12, "e2e")->mean - tsim_sys(&ticket, "e2e")->mean, 20.0 * 199 / 200, 1e-6);
    cr_assert_float_eq(tsim_sys(&ticket, "e2e")->max - tsim_sys(&ticket, "e2e")->p50, 20.0, 0.2);
    cr_assert_float_eq(tsim_prv(tsim_pool_named(&zero, "link"), "setup_ms_mean"), (2 * 20.0 + 199 * 20.0) / 200, 1e-9);
    sim_result_free(&t12);
    sim_result_free(&ticket);
    sim_result_free(&zero);
}

/* A 100000-token answer (400650 bytes, 275 segments) sent whole on a new
 * connection: ceil(log2(275 / 10 + 1)) = 5 rounds, 4 of them waiting one RTT;
 * plus TCP's handshake.  Streamed, only the first chunk meets slow start. */
Test(conn, slow_start_rounds_in_a_run)
{
    const char *big = "prompt_tokens = const(100)\noutput_tokens = const(100000)\n";
    sim_result warm, fresh;
    one_by_one("stream = no", big, &warm);
    one_by_one("stream = no\nconnection = new", big, &fresh);
    int k = conn_rounds(conn_segments(650 + 100000 * 4.0, 1460), 10);
    cr_assert_eq(k, 5);
    double wait = ss_wait(275, 10, 1460, 20, 1e6);
    cr_assert_float_eq(wait, 20.0 * (k - 1), 0.01);
    cr_assert_float_eq(tsim_sys(&fresh, "e2e")->mean - tsim_sys(&warm, "e2e")->mean, 20.0 + wait, 1e-6);
    cr_assert_float_eq(tsim_prv(tsim_pool_named(&fresh, "link"), "slow_start_ms_mean"), wait, 1e-9);
    sim_result_free(&warm);
    sim_result_free(&fresh);
}

/* One pooled connection, requests 1 s apart: it is opened once and reused;
 * with an idle timeout under the gap every request opens it again; idle past
 * the RTO (here 0.2 s + 20 ms) its window restarts from init_cwnd. */
Test(conn, pool_reuses_and_closes_idle_connections)
{
    const char *big = "prompt_tokens = const(100)\noutput_tokens = const(100000)\n";
    sim_result keep, closes, restart;
    one_by_one("stream = no\nconnection = pool\npool_size = 1\nslow_start_after_idle = no", big, &keep);
    one_by_one("stream = no\nconnection = pool\npool_size = 1\nidle_timeout_s = 0.5", big, &closes);
    one_by_one("stream = no\nconnection = pool\npool_size = 1", big, &restart);
    cr_assert_float_eq(tsim_prv(tsim_pool_named(&keep, "link"), "conn_opened"), 1, 0);
    cr_assert_float_eq(tsim_prv(tsim_pool_named(&closes, "link"), "conn_opened"), 200, 0);
    cr_assert_float_eq(tsim_prv(tsim_pool_named(&restart, "link"), "conn_opened"), 1, 0);
    /* kept warm, only the first answer meets slow start (4 waits); restarted, every one does */
    double wait = ss_wait(275, 10, 1460, 20, 1e6);
    cr_assert_float_eq(tsim_prv(tsim_pool_named(&keep, "link"), "slow_start_ms_mean"), wait / 200, 1e-9);
    cr_assert_float_eq(tsim_prv(tsim_pool_named(&restart, "link"), "slow_start_ms_mean"), wait, 1e-9);
    sim_result_free(&keep);
    sim_result_free(&closes);
    sim_result_free(&restart);
}

/* HTTP/1.1 pool of c connections held for an exponential time (a next station
 * with servers to spare, a negligible hop): the wait for a free connection is
 * the M/M/c queue's.  Poisson 50/s, hold 50 ms, c = 3: a = 2.5, rho = 0.833,
 * Erlang C = 0.70225, Wq = C / (c mu - lambda) = 70.22 ms.  Eight seeds of
 * 100000 requests: their mean is compared with Wq within 3 standard errors of
 * that mean (from the seeds' spread), and within 6 % (about 3 of the standard
 * errors such runs show: a 1.3-2 ms seed-to-seed deviation at this load). */
static const char *MMC =
    "[sim]\nrequests = 100000\nwarmup = 5000\n[workload]\narrival = poisson\nrate = 50\n"
    "prompt_tokens = const(100)\noutput_tokens = const(50)\ntarget = link\n"
    "[pool link]\nkind = net\nrtt_ms = const(0.000001)\nup_mbps = 1e9\ndown_mbps = 1e9\nheader_bytes = 0\n"
    "proto_ms_per_kb = 0\nconnection = pool\npool_size = 3\nhttp = %s\nnext = work\n"
    "[pool work]\nservice_ms = exp(mean=50)\nservers = 1000\n";

static double erlang_c(int c, double a)
{
    double term = 1, sum = 0;
    for (int k = 0; k < c; k++) {
        sum += term;
        term *= a / (k + 1);
    }
    double top = term / (1 - a / c);
    return top / (sum + top);
}

Test(conn, http11_pool_wait_is_erlang_c, .timeout = 120)
{
    char text[1024];
    snprintf(text, sizeof text, MMC, "1.1");
    const int N = 8;
    double w[8], sum = 0, util = 0;
    for (int s = 0; s < N; s++) {
        sim_result res;
        tsim_run("/tmp/test_conn_mmc.ini", text, (uint64_t) s + 1, &res);
        w[s] = tsim_prl(tsim_pool_named(&res, "link"), "queue")->mean;
        util += tsim_prv(tsim_pool_named(&res, "link"), "busy_share") / N;
        sum += w[s];
        sim_result_free(&res);
    }
    double mean = sum / N, ss = 0;
    for (int s = 0; s < N; s++) ss += (w[s] - mean) * (w[s] - mean);
    double se = sqrt(ss / (N - 1) / N);
    double lambda = 0.05, mu = 1 / 50.0, a = lambda / mu;
    double wq = erlang_c(3, a) / (3 * mu - lambda);
    cr_assert_float_eq(wq, 70.2247, 1e-3);
    cr_assert(fabs(mean - wq) < 3 * se + 1e-9 || fabs(mean - wq) < 0.02 * wq,
              "mean wait %g ms vs Erlang C %g ms (se %g)", mean, wq, se);
    cr_assert(fabs(mean - wq) < 0.06 * wq, "mean wait %g ms vs Erlang C %g ms", mean, wq);
    cr_assert_float_eq(util, a / 3, 0.01, "connections busy %g, offered %g", util, a / 3);
}

/* HTTP/2: the same load shares one connection's 100 streams: nobody waits. */
Test(conn, http2_streams_do_not_wait)
{
    char text[1024];
    snprintf(text, sizeof text, MMC, "2");
    sim_result res;
    tsim_run("/tmp/test_conn_h2.ini", text, 1, &res);
    cr_assert_eq(tsim_prl(tsim_pool_named(&res, "link"), "queue")->max, 0);
    cr_assert_eq(tsim_prv(tsim_pool_named(&res, "link"), "conn_opened"), 0, "opened once, in the warm-up");
    sim_result_free(&res);
}

/* One closed-loop user: think 20 s against a radio that sleeps after 10 s,
 * every request wakes it (260 ms on client_4g); thinking 1 s, only the first. */
static void radio_run(const char *think, sim_result *res)
{
    char text[1024];
    snprintf(text, sizeof text,
             "[sim]\nrequests = 100\nwarmup = 0\n[workload]\nusers = 1\nthink_ms = %s\n"
             "prompt_tokens = const(100)\noutput_tokens = const(50)\ntarget = phone\n"
             "[pool phone]\nkind = net\npreset = client_4g\nradio_idle_s = 10\nnext = work\n"
             "[pool work]\nservice_ms = const(30)\n", think);
    tsim_run("/tmp/test_conn_radio.ini", text, 1, res);
}

Test(conn, radio_wakes_after_idle)
{
    sim_result slow, busy;
    radio_run("const(20000)", &slow);
    radio_run("const(1000)", &busy);
    tsim_pr s = tsim_pool_named(&slow, "phone"), b = tsim_pool_named(&busy, "phone");
    cr_assert_eq(tsim_prv(s, "radio_wakeups"), tsim_n(&slow, "served"));
    cr_assert_float_eq(tsim_prv(s, "setup_ms_mean"), 260, 1e-9);
    cr_assert_eq(tsim_prv(b, "radio_wakeups"), 1);
    cr_assert_float_eq(tsim_prv(b, "setup_ms_mean"), 260.0 / tsim_n(&busy, "served"), 1e-9);
    sim_result_free(&slow);
    sim_result_free(&busy);
}

/* Loss p per segment on a warm link, each loss one RTT: the mean loss time is
 * p x segments x RTT.  A request of 14650 bytes (11 segments) and a streamed
 * answer of 650 + 50 x 204 bytes (8 segments) over 20000 requests at p = 1 %:
 * expectation 0.01 x 19 x 20 = 3.8 ms; the count of losses is binomial over
 * 380000 segments, the test allows 4 of its standard deviations. */
Test(conn, loss_costs_a_round_trip_per_lost_segment)
{
    const char *text =
        "[sim]\nrequests = 20000\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n"
        "prompt_tokens = const(3500)\noutput_tokens = const(50)\ntarget = link\n"
        "[pool link]\nkind = net\nrtt_ms = const(20)\nup_mbps = 1e6\ndown_mbps = 1e6\nloss = 0.01\n"
        "next = work\n[pool work]\nservice_ms = const(30)\n";
    sim_result res;
    tsim_run("/tmp/test_conn_loss.ini", text, 1, &res);
    double segs = conn_segments(650 + 3500 * 4.0, 1460) + conn_segments(650 + 50 * 204.0, 1460);
    cr_assert_eq(segs, 11 + 8);
    double expect = 0.01 * segs * 20;
    double got = tsim_prv(tsim_pool_named(&res, "link"), "loss_ms_mean");
    double sd = sqrt(20000 * segs * 0.01 * 0.99) * 20 / 20000;
    cr_assert(fabs(got - expect) < 4 * sd, "loss %g ms, expected %g (sd %g)", got, expect, sd);
    sim_result_free(&res);
}

/* ---- bad input: one line naming the file, the line and the key ------------- */

static void refused(const char *keys, const char *key, int line)
{
    char text[1024], err[1024], where[64];
    snprintf(text, sizeof text,
             "[sim]\nrequests = 10\n[workload]\nrate = 1\ntarget = link\n"
             "[pool link]\nkind = net\n%s\nnext = work\n[pool work]\nservice_ms = const(1)\n", keys);
    scenario sc;
    cr_assert_neq(tsim_load_resolve("/tmp/bad_conn.ini", text, &sc, err, sizeof err), 0, "accepted: %s", keys);
    snprintf(where, sizeof where, "/tmp/bad_conn.ini:%d", line);
    cr_assert(strstr(err, where), "'%s' does not name %s", err, where);
    cr_assert(strstr(err, key), "'%s' does not name %s", err, key);
    cr_assert(!strchr(err, '\n'), "more than one line: %s", err);
}

Test(conn, bad_input_names_file_line_and_key)
{
    refused("connection = pool\npool_size = 0", "pool_size", 9);
    refused("connection = pooled", "connection", 8);
    refused("tls = 1.3", "tls", 8);
    refused("connection = new\ntls = 1.2\ntls_resume = 0rtt", "tls_resume", 10);
    refused("connection = new\ntls_resume = ticket", "tls_resume", 9);
    refused("protocol = grpc\nhttp = 1.1", "http", 9);
    refused("loss = -0.1", "loss", 8);
    refused("radio_idle_s = 10", "radio_idle_s", 8);
    refused("preset = client_4g\nradio_idle_s = 0", "radio_idle_s", 9);
    refused("connection = new\ninit_cwnd_segments = 0", "init_cwnd_segments", 9);
}

/* ---- the golden signals' error limits apart --------------------------------- */

/* error_5xx_rate = (rejected + failed) / requests, timeout_rate = timed out /
 * requests, from the same rows error_rate sums: 20000 requests into a pool whose
 * answers are errors 2 % of the time and whose queue drops a wait past 20 ms. */
Test(conn, slo_terms_split_5xx_from_timeouts)
{
    const char *text =
        "[sim]\nrequests = 20000\n[workload]\nrate = 90\ntarget = app\n"
        "[pool app]\nservers = 2\nservice_ms = exp(mean=20)\nerror_rate = 0.02\ntimeout_ms = 20\n"
        "[slo]\nerror_5xx_rate = 0.001\ntimeout_rate = 0.5\nerror_rate = 1\n";
    scenario sc;
    char err[1024];
    cr_assert_eq(tsim_load_resolve("/tmp/test_conn_slo.ini", text, &sc, err, sizeof err), 0, "%s", err);
    sim_result res;
    cr_assert_eq(sim_run(&sc, 1, &res, err, sizeof err), 0, "%s", err);
    report rep = {0};
    cr_assert_eq(report_flatten(&res, -1, &rep), 0);
    slo_result v;
    cr_assert_eq(slo_eval(scenario_slo(&sc), rep.rows, rep.n, &v), 0);
    cr_assert_eq(v.n, 3);
    double n = (double) tsim_n(&res, "requests");
    cr_assert_gt(tsim_n(&res, "rejected"), 0);
    cr_assert_gt(tsim_n(&res, "timed_out"), 0);
    cr_assert_float_eq(v.c[0].value, (double) tsim_n(&res, "rejected") / n, 1e-12);
    cr_assert_float_eq(v.c[1].value, (double) tsim_n(&res, "timed_out") / n, 1e-12);
    cr_assert_float_eq(v.c[2].value, v.c[0].value + v.c[1].value, 1e-12);
    cr_assert_eq(v.c[0].met, 0, "2 %% errors miss a 0.1 %% limit");
    cr_assert_eq(v.c[1].met, 1);
    slo_result_free(&v);
    report_free(&rep);
    sim_result_free(&res);
    scenario_free(&sc);
}

/* ---- bytes and their price ---------------------------------------------------- */

/* 200 requests of 100 prompt tokens and 50 streamed answer tokens at $0.09 per
 * GB of answers (a cloud's egress list price): request 650 + 400 = 1050 bytes,
 * answer 650 + 50 x 204 = 10850 bytes; 200 answers = 2.17e6 bytes = $0.0001953,
 * $0.0009765 per 1000 requests, all of it egress (no priced pool); two classes
 * share it by their answers. */
Test(conn, egress_priced_by_hand)
{
    const char *text =
        "[sim]\nrequests = 200\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n"
        "prompt_tokens = const(100)\noutput_tokens = const(50)\ntarget = link\n"
        "[class a]\nshare = 0.5\n[class b]\nshare = 0.5\noutput_tokens = const(150)\n"
        "[pool link]\nkind = net\nrtt_ms = const(20)\negress_usd_per_gb = 0.09\nnext = work\n"
        "[pool work]\nservice_ms = const(30)\n";
    sim_result res;
    tsim_run("/tmp/test_conn_egress.ini", text, 1, &res);
    tsim_pr p = tsim_pool_named(&res, "link");
    double na = tsim_class(&res, "a", "served"), nb = tsim_class(&res, "b", "served");
    cr_assert_eq(na + nb, 200);
    double ba = 650 + 50 * 204.0, bb = 650 + 150 * 204.0;
    cr_assert_float_eq(tsim_prv(p, "bytes_up"), 200 * 1050.0, 1e-6);
    cr_assert_float_eq(tsim_prv(p, "bytes_down"), na * ba + nb * bb, 1e-6);
    double usd = (na * ba + nb * bb) / 1e9 * 0.09;
    cr_assert_float_eq(tsim_prv(p, "egress_usd"), usd, 1e-15);
    cr_assert_float_eq(sim_result_get(&res, "", "egress_usd", "value"), usd, 1e-15);
    cr_assert_float_eq(sim_result_get(&res, "", "cost_per_1k_requests", "value"), 1000 * usd / 200, 1e-15);
    cr_assert_float_eq(tsim_class(&res, "a", "cost_per_1k_requests"), 1000 * ba / 1e9 * 0.09, 1e-15);
    cr_assert_float_eq(tsim_class(&res, "b", "cost_per_1k_requests"), 1000 * bb / 1e9 * 0.09, 1e-15);
    cr_assert_float_eq(tsim_prv(p, "egress_usd_per_hour"), usd / tsim_v(&res, "window_s") * 3600, 1e-12);
    sim_result_free(&res);
}

/* An HTTP/1.1 pool's wait for a connection is connect too, carved out of queue:
 * over a link of (nearly) no RTT, the connect component's mean is the hop's
 * mean wait. */
Test(conn, pool_wait_is_connect)
{
    char text[1024];
    snprintf(text, sizeof text, MMC, "1.1");
    sim_result res;
    tsim_run("/tmp/test_conn_mmc1.ini", text, 1, &res);
    double wait = tsim_prl(tsim_pool_named(&res, "link"), "queue")->mean;
    cr_assert_gt(wait, 10.0);
    double conn = tsim_bd(&res, "breakdown.all", BD_CONNECT);
    cr_assert_float_eq(conn * tsim_sys(&res, "e2e")->mean, wait, 1e-3, "connect %g vs wait %g ms",
                       conn * tsim_sys(&res, "e2e")->mean, wait);
    cr_assert_float_eq(tsim_bd(&res, "breakdown.all", BD_QUEUE), 0.0, 1e-12, "no other queue");
    sim_result_free(&res);
}

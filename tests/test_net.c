/* test_net.c -- tests of sim/gateway/net.c: hop times computed by hand, presets,
 * protocol defaults, the mean over sampled round-trip times, and checks. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "gateway/net.h"
#include "engine/rng.h"

/* A hop with a constant 10 ms RTT, 8 Mbit/s each way (1000 bytes per ms),
 * 4 bytes per token, 100 header bytes, 20 chunk bytes, 0.5 ms per 1000 bytes. */
static void hand_hop(net_cfg *c, int stream)
{
    memset(c, 0, sizeof *c);
    char err[128];
    cr_assert_eq(dist_parse(&c->rtt_ms, "const(10)", NULL, err, sizeof err), 0, "%s", err);
    c->up_mbps = c->down_mbps = 8;
    c->bytes_per_token = 4;
    c->header_bytes = 100;
    c->chunk_bytes = 20;
    c->proto_ms_per_kb = 0.5;
    c->stream = stream;
    cr_assert_eq(net_check(c, err, sizeof err), 0, "%s", err);
}

#define EPS 1e-12

Test(net, streamed_hop_times_by_hand)
{
    net_cfg c;
    hand_hop(&c, 1);
    gsl_rng *r = rng_stream(1, "hop");
    net_times t;
    net_sample(&c, 100, 10, r, &t);
    /* request: 100 + 400 bytes -> 5 ms + 0.5 ms; protocol 400 bytes x 0.5 ms/1000 */
    cr_assert_float_eq(t.up_net_ms, 5.5, EPS);
    cr_assert_float_eq(t.up_proto_ms, 0.2, EPS);
    /* first chunk: headers + 4 + 20 bytes = 124 bytes -> 5.124 ms; protocol 24 bytes */
    cr_assert_float_eq(t.first_net_ms, 5.124, EPS);
    cr_assert_float_eq(t.first_proto_ms, 0.012, EPS);
    /* last chunk: 24 bytes */
    cr_assert_float_eq(t.down_net_ms, 5.024, EPS);
    cr_assert_float_eq(t.down_proto_ms, 0.012, EPS);
    cr_assert_float_eq(net_answer_bytes(&c, 10), 100 + 10 * 24.0, EPS);
    cr_assert_float_eq(net_mean_ms(&c, 100, 10), 5.5 + 0.2 + 5.024 + 0.012, EPS);
    gsl_rng_free(r);
    net_cfg_free(&c);
}

Test(net, whole_answer_hop_times_by_hand)
{
    net_cfg c;
    hand_hop(&c, 0);
    gsl_rng *r = rng_stream(1, "hop");
    net_times t;
    net_sample(&c, 100, 10, r, &t);
    /* answer: 100 + 40 bytes -> 5 + 0.14 ms; protocol 40 bytes; first token comes with it */
    cr_assert_float_eq(t.down_net_ms, 5.14, EPS);
    cr_assert_float_eq(t.down_proto_ms, 0.02, EPS);
    cr_assert_float_eq(t.first_net_ms, t.down_net_ms, EPS);
    cr_assert_float_eq(t.first_proto_ms, t.down_proto_ms, EPS);
    gsl_rng_free(r);
    net_cfg_free(&c);
}

Test(net, presets_are_ordered_and_overridable)
{
    const char *names[] = {"same_zone", "cross_zone", "cross_region",
                           "client_4g", "client_5g", "client_broadband"};
    double mean[6];
    char err[128];
    for (int i = 0; i < 6; i++) {
        net_cfg c = {0};
        cr_assert_eq(net_preset(&c, names[i], err, sizeof err), 0, "%s: %s", names[i], err);
        cr_assert_eq(net_check(&c, err, sizeof err), 0, "%s: %s", names[i], err);
        cr_assert_eq(c.protocol, NET_REST_JSON);
        cr_assert_eq(c.stream, 1);
        mean[i] = net_mean_ms(&c, 1000, 200);
        net_cfg_free(&c);
    }
    /* farther is slower: zone < cross zone < region; 4G slowest of the clients */
    cr_assert_lt(mean[0], mean[1]);
    cr_assert_lt(mean[1], mean[2]);
    cr_assert_gt(mean[3], mean[4]);
    cr_assert_gt(mean[4], mean[5]);
    net_cfg c = {0};
    cr_assert_eq(net_preset(&c, "client_6g", err, sizeof err), -1);
    cr_assert(strstr(err, "client_6g") && strstr(err, "same_zone"), "%s", err);
}

Test(net, grpc_costs_less_than_rest_json)
{
    net_cfg c = {0};
    char err[128];
    cr_assert_eq(net_preset(&c, "same_zone", err, sizeof err), 0);
    double rest = net_mean_ms(&c, 8000, 500);
    cr_assert_eq(net_set_protocol(&c, NET_GRPC), 0);
    double grpc = net_mean_ms(&c, 8000, 500);
    cr_assert_lt(grpc, rest);
    /* 8000 tokens x 4 bytes = 32000 prompt bytes; by hand: header bytes 650 vs 325
     * and chunks 204 vs 20 bytes over 5000 Mbit/s, protocol 0.22 vs 0.031 ms/kB */
    double by_hand = (650 - 325) * 8.0 / 5e6 + 32.0 * (0.22 - 0.031)
                   + (204 - 20) * 8.0 / 5e6 + (204 * 0.22 - 20 * 0.031) / 1000;
    cr_assert_float_eq(rest - grpc, by_hand, 1e-9);
    net_protocol p;
    cr_assert_eq(net_protocol_parse("grpc", &p), 0);
    cr_assert_eq(p, NET_GRPC);
    cr_assert_eq(net_protocol_parse("soap", &p), -1);
    net_cfg_free(&c);
}

/* The mean of sampled hop times approaches net_mean_ms: 20000 draws of a
 * lognormal RTT with cv 0.3 have a standard error of 0.3 x 55 / sqrt(20000) / 1
 * = 0.12 ms on the RTT, so on the total; tolerance 5 standard errors. */
Test(net, sampled_mean_matches_mean)
{
    net_cfg c = {0};
    char err[128];
    cr_assert_eq(net_preset(&c, "client_4g", err, sizeof err), 0);
    gsl_rng *r = rng_stream(7, "client");
    double sum = 0;
    const int n = 20000;
    for (int i = 0; i < n; i++) {
        net_times t;
        net_sample(&c, 500, 100, r, &t);
        cr_assert(t.up_net_ms >= 0 && t.down_net_ms >= 0 && t.first_net_ms >= 0);
        sum += t.up_net_ms + t.up_proto_ms + t.down_net_ms + t.down_proto_ms;
    }
    double se = 0.3 * 55 / sqrt(n);
    cr_assert_float_eq(sum / n, net_mean_ms(&c, 500, 100), 5 * se);
    gsl_rng_free(r);
    net_cfg_free(&c);
}

Test(net, check_rejects_bad_numbers)
{
    net_cfg c;
    hand_hop(&c, 1);
    char err[128];
    c.up_mbps = 0;
    cr_assert_eq(net_check(&c, err, sizeof err), -1);
    cr_assert(strstr(err, "up_mbps"), "%s", err);
    c.up_mbps = 1;
    c.header_bytes = -1;
    cr_assert_eq(net_check(&c, err, sizeof err), -1);
    cr_assert(strstr(err, "header_bytes"), "%s", err);
    c.header_bytes = NAN;
    cr_assert_eq(net_check(&c, err, sizeof err), -1);
    net_cfg_free(&c);
}

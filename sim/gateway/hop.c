/* hop.c -- the network hop station, `kind = net` (see hop.h). */
#include "gateway/hop.h"
#include "core/result.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct hop {
    station st;               /* common part; must be first */
    const net_cfg *net;       /* the link */
    double net_ms, proto_ms;  /* sums over measured requests: network and protocol time, ms */
    uint64_t n;               /* measured requests that entered */
} hop;

static void on_crossed(evq *q, void *subject, int64_t arg)
{
    (void) q;
    hop *h = subject;
    request *r = (request *) (intptr_t) arg;
    station_forward(&h->st, r, 0);
}

static void arrive(station *st, request *r)
{
    hop *h = (hop *) st;
    net_times t;
    net_sample(h->net, r->prompt, r->output, st->rng, &t);
    /* Rounded to ns once each, so that the components add up exactly. */
    simtime_t up_net = simtime_from_ms(t.up_net_ms), up_proto = simtime_from_ms(t.up_proto_ms);
    simtime_t dn_net = simtime_from_ms(t.down_net_ms), dn_proto = simtime_from_ms(t.down_proto_ms);
    r->network_ns += up_net + dn_net;
    r->fwd_net_ns += up_net;
    r->overhead_ns += up_proto + dn_proto;
    r->ret_last_ns += dn_net + dn_proto;
    simtime_t first_net = simtime_from_ms(t.first_net_ms);
    r->ret_first_ns += first_net + simtime_from_ms(t.first_proto_ms);
    r->ret_first_net_ns += first_net;
    r->whole_net_ns += simtime_from_ms(t.whole_net_ms) - dn_net;
    r->whole_proto_ns += simtime_from_ms(t.whole_proto_ms) - dn_proto;
    if (!h->net->stream) r->whole = 1;   /* buffered here: nothing reaches the client before the last byte */
    if (r->measured) {
        h->n++;
        h->net_ms += simtime_to_ms(up_net + dn_net);
        h->proto_ms += simtime_to_ms(up_proto + dn_proto);
        stat_add(st->service_ms, simtime_to_ms(up_net + up_proto));
    }
    station_after(st, up_net + up_proto, on_crossed, h, (int64_t) (intptr_t) r);
}

void hop_answer_whole(request *r)
{
    r->network_ns += r->whole_net_ns;
    r->overhead_ns += r->whole_proto_ns;
    r->ret_last_ns += r->whole_net_ns + r->whole_proto_ns;
    r->ret_first_ns = r->ret_last_ns;
    r->whole_net_ns = r->whole_proto_ns = 0;
    r->whole = 1;
}

static int report(station *st, pool_result *out)
{
    hop *h = (hop *) st;
    double n = h->n ? (double) h->n : NAN;
    if (pool_result_add(out, "network_ms_mean", h->net_ms / n)) return -1;
    if (pool_result_add(out, "protocol_ms_mean", h->proto_ms / n)) return -1;
    return 0;
}

static void destroy(station *st)
{
    station_fini(st);
    free(st);
}

static const station_ops HOP_OPS = {
    .arrive = arrive,
    .report = report,
    .destroy = destroy,
};

static const scn_key KEYS[] = {
    { "preset", "same_zone", "link preset: same_zone, cross_zone, cross_region, client_4g, client_5g, client_broadband" },
    { "hop", "", "measured(ID): the link measured by `latsim calib net` (stored model ID) instead of a preset" },
    { "rtt_ms", "", "round-trip time distribution, ms (default: the preset's)" },
    { "up_mbps", "", "bandwidth towards the next station, Mbit/s (default: the preset's)" },
    { "down_mbps", "", "bandwidth back, Mbit/s (default: the preset's)" },
    { "protocol", "rest_json", "rest_json or grpc: header and chunk sizes, encoding cost" },
    { "bytes_per_token", "4", "payload bytes per token" },
    { "header_bytes", "", "headers per message, bytes (default: the protocol's)" },
    { "chunk_bytes", "", "framing per streamed token, bytes (default: the protocol's)" },
    { "proto_ms_per_kb", "", "encode + decode per 1000 payload bytes, ms (default: the protocol's)" },
    { "stream", "yes", "yes: the answer is streamed token by token; no: sent whole" },
    { NULL, NULL, NULL },
};

/* An optional number: left as it is when KEY is absent. */
static int opt_num(scn_ctx *x, const char *sec, const char *key, double lo, int lo_open, double *v)
{
    if (!scn_value(x, sec, key)) return 0;
    return scn_num(x, sec, key, *v, lo, lo_open, 1e12, v);
}

static int parse(scn_ctx *x, const char *sec, pool_cfg *p)
{
    net_cfg *c = calloc(1, sizeof *c);
    if (!c) return scn_fail(x, sec, NULL, "out of memory");
    p->ext = c;
    char preset[32], err[160];
    if (scn_str(x, sec, "preset", "same_zone", preset, sizeof preset)) return -1;
    if (net_preset(c, preset, err, sizeof err) != 0) return scn_fail(x, sec, "preset", "%s", err);
    if (scn_value(x, sec, "hop")) {
        const char *v = scn_value(x, sec, "hop");
        char tail;
        long long id;
        if (sscanf(v, " measured ( %lld ) %c", &id, &tail) != 1 || id < 1)
            return scn_fail(x, sec, "hop", "expected measured(ID) with a stored network model id >= 1, got '%s'", v);
        if (scn_value(x, sec, "preset") || scn_value(x, sec, "rtt_ms") || scn_value(x, sec, "up_mbps")
            || scn_value(x, sec, "down_mbps"))
            return scn_fail(x, sec, "hop", "measured(ID) sets the link: no preset, rtt_ms, up_mbps or down_mbps with it");
        c->measured_id = id;
    }
    int proto, stream;
    if (scn_enum(x, sec, "protocol", "rest_json|grpc", 0, &proto)) return -1;
    net_set_protocol(c, proto ? NET_GRPC : NET_REST_JSON);
    if (scn_value(x, sec, "rtt_ms")) {
        dist_free(&c->rtt_ms);
        if (scn_dist(x, sec, "rtt_ms", NULL, &c->rtt_ms)) return -1;
    }
    if (opt_num(x, sec, "up_mbps", 0, 1, &c->up_mbps)) return -1;
    if (opt_num(x, sec, "down_mbps", 0, 1, &c->down_mbps)) return -1;
    if (opt_num(x, sec, "bytes_per_token", 0, 0, &c->bytes_per_token)) return -1;
    if (opt_num(x, sec, "header_bytes", 0, 0, &c->header_bytes)) return -1;
    if (opt_num(x, sec, "chunk_bytes", 0, 0, &c->chunk_bytes)) return -1;
    if (opt_num(x, sec, "proto_ms_per_kb", 0, 0, &c->proto_ms_per_kb)) return -1;
    if (scn_bool(x, sec, "stream", 1, &stream)) return -1;
    c->stream = stream;
    if (net_check(c, err, sizeof err) != 0) return scn_fail(x, sec, NULL, "%s", err);
    return 0;
}

static hop_measured_fn measured_fn;   /* the calibrator's loader (hop_set_measured), or NULL */

void hop_set_measured(hop_measured_fn fn) { measured_fn = fn; }

/* hop = measured(ID): the link from stored `calib net` model ID.  The echo round
 * trip of B bytes (B each way) took base_ms + ms_per_mb x B / 1e6 at the median:
 * the RTT's median is base_ms, both directions get the bandwidth that moves B
 * bytes in ms_per_mb x B / 2e6 ms, and the RTT spread is a lognormal with the
 * p99 / p50 ratio of the smallest payload's round trips. */
static int resolve(scn_ctx *x, const char *sec, pool_cfg *p, sqlite3 *db)
{
    net_cfg *c = p->ext;
    if (!c->measured_id) return 0;
    char err[512];
    if (!measured_fn)
        return scn_fail(x, sec, "hop", "measured(ID) needs the calibrator's network models, not linked in this program");
    hop_measured m;
    if (measured_fn(db, c->measured_id, &m, err, sizeof err) != 0)
        return scn_fail(x, sec, "hop", "no network model with id %" PRId64 " stored by latsim calib net"
                        " (latsim calib list)", c->measured_id);
    double base = m.base_ms, slope = m.ms_per_mb, p50 = m.p50_ms, p99 = m.p99_ms;
    if (!(base >= 0) || !(slope >= 0) || !isfinite(base) || !isfinite(slope))
        return scn_fail(x, sec, "hop", "network model %" PRId64 " has no base_ms/ms_per_mb fit", c->measured_id);
    char spec[96];
    double sigma = p50 > 0 && p99 > p50
                 ? log(p99 / p50) / 2.3263478740408408 : 0;
    if (base > 0 && sigma > 0)
        snprintf(spec, sizeof spec, "lognormal(mean=%.17g, cv=%.17g)", base * exp(sigma * sigma / 2),
                 sqrt(expm1(sigma * sigma)));
    else
        snprintf(spec, sizeof spec, "const(%.17g)", base);
    dist_free(&c->rtt_ms);
    if (dist_parse(&c->rtt_ms, spec, NULL, err, sizeof err) != 0)
        return scn_fail(x, sec, "hop", "%s", err);
    /* transfer_ms = bytes x 8 / (mbps x 1000) = slope x bytes / 2e6 */
    c->up_mbps = c->down_mbps = slope > 0 ? 16000.0 / slope : INFINITY;
    if (!isfinite(c->up_mbps)) c->up_mbps = c->down_mbps = 1e300;
    return 0;
}

static void free_cfg(pool_cfg *p)
{
    if (!p->ext) return;
    net_cfg_free(p->ext);
    free(p->ext);
    p->ext = NULL;
}

const station_kind hop_kind = {
    .name = "net",
    .help = "a network hop to the next station: RTT + bytes / bandwidth + protocol cost, both ways",
    .keys = KEYS,
    .parse = parse,
    .resolve = resolve,
    .make = hop_new,
    .free_cfg = free_cfg,
    .min_next = 1,
    .max_next = 1,
    .flags = KIND_TOKENS | KIND_GATEWAY,
};

station *hop_new(const pool_cfg *cfg, const station_env *env)
{
    hop *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    if (station_init(&h->st, &HOP_OPS, cfg, env) != 0) {
        destroy(&h->st);
        return NULL;
    }
    h->net = cfg->ext;
    h->st.capacity = 1;      /* a link is never busy: utilisation 0 */
    return &h->st;
}

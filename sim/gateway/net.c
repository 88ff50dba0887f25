/* net.c -- network hop presets, protocol costs and per-request hop times (see net.h).
 *
 * Sources of the presets (the mean round-trip times and bandwidths; the spread
 * of the RTT, a lognormal cv, is taken from the same source where it gives a
 * range of single pings, and is otherwise an assumption, marked as such):
 *
 *   same_zone      RTT 0.26 ms, cv 0.13: ten pings between two EC2 instances in one
 *                  availability zone, us-east-1a 0.215-0.348 ms, mean 0.263 ms
 *                  (orensol.com, "Network latency inside and across Amazon EC2
 *                  availability zones", 2009; best-of-50 intra-AZ 0.25 ms in
 *                  xkyle.com, "Measuring AWS region and AZ latency").  cv = range/4/mean.
 *   cross_zone     RTT 1.0 ms, cv 0.1: the same study across zones, pair means
 *                  0.937-1.126 ms (0.885-1.25 ms single pings); Liesis (medium.com,
 *                  "AWS EC2 cross availability zones network lag", 2022) 0.82-0.83 ms.
 *   cross_region   RTT 55 ms, cv 0.05 (assumed: "consistently"): us-east-1 <-> us-west-2
 *                  over VPC peering, "~55 ms consistently" (dev.to/juanhcode, "AWS
 *                  multi-region networking: what actually happens between regions").
 *   all three      5000 Mbit/s each way: "bandwidth for single-flow traffic is limited
 *                  to 5 Gbps when instances are not in the same cluster placement
 *                  group" (AWS, Amazon EC2 User Guide, "Amazon EC2 instance network
 *                  bandwidth"); one request is one flow.
 *   client_4g      RTT 55 ms (midpoint of 44.1-66.4 ms across U.S. states), down
 *                  21.3 Mbit/s, up 6.3 Mbit/s: Opensignal, "State of Mobile: USA",
 *                  May 2019 (Q1 2019 4G measurements), as reported by telecomengine.com.
 *   client_5g      RTT 31 ms: Ookla Speedtest, U.S. mobile, Q3 2023 (tvtechnology.com,
 *                  "Ookla updates list of fastest US fixed broadband providers");
 *                  down 166.13 Mbit/s, up 21.08 Mbit/s: Ookla, global median 5G
 *                  speeds Q3 2021 ("Growing and slowing: the state of 5G worldwide").
 *   client_broadband  RTT 13 ms, down 213.75 Mbit/s, up 23.71 Mbit/s: Ookla Speedtest,
 *                  U.S. fixed broadband, Q3 2023 (tvtechnology.com, as above).
 *   internet_same_region, internet_cross_region, internet_intercontinental:
 *                  a client on the public internet reaching a cloud region in its
 *                  own continent, across an ocean, across the Pacific.  RTT 33, 73
 *                  and 105 ms: Verizon Business, "IP latency statistics" (monthly
 *                  round-trip averages between its backbone hubs, 2023 months:
 *                  intra-North America 31-35 ms, trans-Atlantic 70-75 ms,
 *                  trans-Pacific 98-110 ms); cv 0.1 (an assumption: month to
 *                  month the averages move by a few percent, single pings more).
 *                  Loss 0.1 %: the same table's packet delivery, 99.9 % and above
 *                  in its monthly measurements (its SLA promises 99.5 %).  The
 *                  access link is client_broadband's (Ookla, below).
 *   radio          client_4g: 260 ms to wake the radio from RRC_IDLE (Huang et al.,
 *                  "A close examination of performance and power characteristics
 *                  of 4G LTE networks", MobiSys 2012: promotion delay 260.1 ms,
 *                  tail timer 11.576 s before the radio sleeps).  client_5g: 20 ms,
 *                  ITU-R M.2410-0 (2017) 4.7.1, the control-plane latency a 5G
 *                  radio must meet from its battery-efficient state (RRC_INACTIVE,
 *                  standalone 5G); non-standalone 5G wakes through its LTE anchor
 *                  (set radio_promotion_ms = 260).  Other presets: none (a key).
 *   client_* cv    0.3: an assumption (the sources give means, not the spread of a
 *                  single user's pings); override rtt_ms with a measured distribution.
 *
 * Payload and protocol:
 *   bytes_per_token 4: one token is about four characters of English text (the
 *                  common estimator, e.g. chat-gpt-lib-rs `count_tokens` docs), one
 *                  UTF-8 byte each.
 *   rest_json      headers 650 bytes: HTTP/1.x sends 500-800 bytes of headers per
 *                  transfer (splessons.com, "HTTP2 header compression", after
 *                  Grigorik's High Performance Browser Networking).  Chunk framing
 *                  200 bytes: counted from an OpenAI-compatible server-sent event
 *                  `data: {"id":"chatcmpl-...","object":"chat.completion.chunk",
 *                  "created":...,"model":"...","choices":[{"index":0,"delta":
 *                  {"content":""},"finish_reason":null}]}` (199 bytes) plus chunked
 *                  transfer framing.  0.22 ms per 1000 bytes: a ~500-byte JSON
 *                  message took 42 us to encode and 68 us to decode in Go
 *                  (learn.freetools.me, "When 30% of CPU time disappears into
 *                  JSON.parse").
 *   grpc           headers 325 bytes: HPACK makes headers 30-70 % smaller
 *                  (webhosting.de, "HTTP/2 header compression HPACK"; half taken).
 *                  Chunk framing 16 bytes: 5-byte gRPC message prefix (gRPC over
 *                  HTTP/2 spec) + 9-byte HTTP/2 frame header (RFC 7540 4.1) + 2 bytes
 *                  of protobuf tag and length.  0.031 ms per 1000 bytes: the same
 *                  message as protobuf took 6.5 us + 9 us (same source), i.e. 15.5 us
 *                  per 500 bytes of JSON-equivalent content.
 */
#include "gateway/net.h"
#include "engine/errmsg.h"

#include <math.h>
#include <string.h>

typedef struct net_preset_row {
    const char *name;         /* as written in scenarios */
    const char *rtt;          /* RTT distribution spec, ms */
    double up_mbps;           /* caller -> callee, Mbit/s */
    double down_mbps;         /* callee -> caller, Mbit/s */
    double loss;              /* share of segments lost */
    double radio_promo_ms;    /* waking the radio (RRC promotion), ms; 0 = not a radio link */
} net_preset_row;

static const net_preset_row PRESETS[] = {
    {"same_zone",        "lognormal(mean=0.26, cv=0.13)", 5000,  5000,   0, 0},
    {"cross_zone",       "lognormal(mean=1.0, cv=0.1)",   5000,  5000,   0, 0},
    {"cross_region",     "lognormal(mean=55, cv=0.05)",   5000,  5000,   0, 0},
    {"client_4g",        "lognormal(mean=55, cv=0.3)",    6.3,   21.3,   0, 260},
    {"client_5g",        "lognormal(mean=31, cv=0.3)",    21.08, 166.13, 0, 20},
    {"client_broadband", "lognormal(mean=13, cv=0.3)",    23.71, 213.75, 0, 0},
    {"internet_same_region",      "lognormal(mean=33, cv=0.1)",  23.71, 213.75, 0.001, 0},
    {"internet_cross_region",     "lognormal(mean=73, cv=0.1)",  23.71, 213.75, 0.001, 0},
    {"internet_intercontinental", "lognormal(mean=105, cv=0.1)", 23.71, 213.75, 0.001, 0},
};
#define NPRESETS (sizeof PRESETS / sizeof PRESETS[0])

#define BYTES_PER_TOKEN 4.0

const char *net_preset_list(void)
{
    return "same_zone, cross_zone, cross_region, client_4g, client_5g, client_broadband, "
           "internet_same_region, internet_cross_region, internet_intercontinental";
}

int net_protocol_parse(const char *s, net_protocol *p)
{
    if (strcmp(s, "rest_json") == 0) { *p = NET_REST_JSON; return 0; }
    if (strcmp(s, "grpc") == 0)      { *p = NET_GRPC;      return 0; }
    return -1;
}

const char *net_protocol_name(net_protocol p)
{
    return p == NET_GRPC ? "grpc" : "rest_json";
}

int net_set_protocol(net_cfg *c, net_protocol p)
{
    switch (p) {
    case NET_REST_JSON:
        c->header_bytes = 650; c->chunk_bytes = 200; c->proto_ms_per_kb = 0.22;
        break;
    case NET_GRPC:
        c->header_bytes = 325; c->chunk_bytes = 16;  c->proto_ms_per_kb = 0.031;
        break;
    default:
        return -1;
    }
    c->protocol = p;
    return 0;
}

int net_preset(net_cfg *c, const char *name, char *err, size_t errlen)
{
    for (size_t i = 0; i < NPRESETS; i++) {
        if (strcmp(PRESETS[i].name, name) != 0)
            continue;
        memset(c, 0, sizeof *c);
        if (dist_parse(&c->rtt_ms, PRESETS[i].rtt, NULL, err, errlen) != 0)
            return -1;
        c->up_mbps = PRESETS[i].up_mbps;
        c->down_mbps = PRESETS[i].down_mbps;
        c->bytes_per_token = BYTES_PER_TOKEN;
        c->stream = 1;
        c->conn.loss = PRESETS[i].loss;
        c->conn.radio_promo_ms = PRESETS[i].radio_promo_ms;
        net_set_protocol(c, NET_REST_JSON);
        return 0;
    }
    errmsg_set(err, errlen, "unknown preset '%s' (one of %s)", name, net_preset_list());
    return -1;
}

int net_check(const net_cfg *c, char *err, size_t errlen)
{
    const struct { const char *name; double v; int positive; } f[] = {
        {"up_mbps", c->up_mbps, 1},           {"down_mbps", c->down_mbps, 1},
        {"bytes_per_token", c->bytes_per_token, 0}, {"header_bytes", c->header_bytes, 0},
        {"chunk_bytes", c->chunk_bytes, 0},   {"proto_ms_per_kb", c->proto_ms_per_kb, 0},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        int bad = !isfinite(f[i].v) || (f[i].positive ? f[i].v <= 0 : f[i].v < 0);
        if (bad) {
            errmsg_set(err, errlen, "%s: must be %s, got %g", f[i].name,
                       f[i].positive ? "> 0" : ">= 0", f[i].v);
            return -1;
        }
    }
    return 0;
}

double net_request_bytes(const net_cfg *c, double prompt_tokens)
{
    return c->header_bytes + prompt_tokens * c->bytes_per_token;
}

double net_answer_bytes(const net_cfg *c, double output_tokens)
{
    double per_token = c->bytes_per_token + (c->stream ? c->chunk_bytes : 0.0);
    return c->header_bytes + output_tokens * per_token;
}

/* Milliseconds to push BYTES through MBPS (Mbit/s = 1000 bits per ms). */
static double transfer_ms(double bytes, double mbps)
{
    return bytes * 8.0 / (mbps * 1000.0);
}

void net_times_at(const net_cfg *c, double rtt, double prompt_tokens,
                      double output_tokens, net_times *t)
{
    double half = rtt / 2.0;
    double kb = c->proto_ms_per_kb / 1000.0;              /* ms per byte */
    double req = net_request_bytes(c, prompt_tokens);
    t->up_net_ms = half + transfer_ms(req, c->up_mbps);
    t->up_proto_ms = (req - c->header_bytes) * kb;
    if (c->stream) {
        /* The headers go out with the first chunk; later chunks carry only framing. */
        double chunk = c->bytes_per_token + c->chunk_bytes;
        t->first_net_ms = half + transfer_ms(c->header_bytes + chunk, c->down_mbps);
        t->first_proto_ms = chunk * kb;
        t->down_net_ms = half + transfer_ms(output_tokens > 1 ? chunk : c->header_bytes + chunk,
                                            c->down_mbps);
        t->down_proto_ms = chunk * kb;
    } else {
        double ans = net_answer_bytes(c, output_tokens);
        t->down_net_ms = half + transfer_ms(ans, c->down_mbps);
        t->down_proto_ms = (ans - c->header_bytes) * kb;
        t->first_net_ms = t->down_net_ms;
        t->first_proto_ms = t->down_proto_ms;
    }
    double whole = net_answer_bytes(c, output_tokens);
    t->whole_net_ms = half + transfer_ms(whole, c->down_mbps);
    t->whole_proto_ms = (whole - c->header_bytes) * kb;
}

void net_sample(const net_cfg *c, double prompt_tokens, double output_tokens,
                gsl_rng *r, net_times *t)
{
    net_times_at(c, dist_sample(&c->rtt_ms, r), prompt_tokens, output_tokens, t);
}

double net_mean_ms(const net_cfg *c, double prompt_tokens, double output_tokens)
{
    net_times t;
    net_times_at(c, c->rtt_ms.mean, prompt_tokens, output_tokens, &t);
    return t.up_net_ms + t.up_proto_ms + t.down_net_ms + t.down_proto_ms;
}

void net_cfg_free(net_cfg *c)
{
    dist_free(&c->rtt_ms);
}

/* hop.c -- the network hop station, `kind = net` (see hop.h; its connections: conn.h). */
#include "gateway/hop.h"
#include "core/result.h"
#include "engine/rng.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

/* One connection of a pool (connection = pool). */
typedef struct hconn {
    int streams;              /* requests on it now (HTTP/1.1: 0 or 1) */
    int open;                 /* 1 once opened, until it is found idle past idle_timeout_s */
    simtime_t last_used;      /* when its last request let go of it (its answer passed the hop), ns */
    double cwnd_up, cwnd_down;/* congestion windows each way, segments */
} hconn;

/* What the hop holds for one request until it leaves the system (request.conn.at). */
typedef struct hrec {
    int32_t conn;             /* the pool connection it uses, -1: none */
    int32_t user;             /* the radio it keeps awake, -1: none */
    simtime_t outer;          /* its ret_last_ns on entering, before this hop's way back, ns */
    struct station *prev_at;  /* the hop to tell after this one (request.conn.at before it), or NULL */
    int32_t prev_slot;        /* that hop's record */
    int32_t next_free;        /* free list link, -1: end */
} hrec;

typedef struct hop {
    station st;               /* common part; must be first */
    const net_cfg *net;       /* the link */
    double net_ms, proto_ms;  /* sums over measured requests: network and protocol time, ms */
    uint64_t n;               /* measured requests that entered */
    /* connections (net->conn.active only) */
    const conn_cfg *cc;       /* the link's connection model */
    hconn *conns;             /* pool: its connections; NULL otherwise */
    int nconns;               /* their number */
    hrec *recs;               /* records of requests it holds something for */
    int32_t nrecs, free_rec;  /* records allocated; head of the free list (-1: none) */
    simtime_t *radio_last;    /* per user: when its radio last carried traffic, ns (-1: never) */
    int32_t *radio_busy;      /* per user: its requests in flight over this hop */
    int32_t nradio;           /* users tracked */
    int had_session;          /* a connection has been opened: a TLS session exists to resume */
    gsl_rng *loss_rng;        /* lost segments, stream "pool NAME/loss" (loss > 0 only) */
    double setup_ms, stall_ms, loss_ms;   /* sums over measured requests: handshakes and radio wake-ups,
                                             slow-start waits, loss recovery, ms */
    uint64_t opened, wakeups; /* measured requests that opened a connection; that woke the radio */
    double bytes_up, bytes_down;  /* bytes of measured requests' messages each way (requests; answers), bytes */
    double egress_usd;        /* their answers' egress charges (egress_usd_per_gb), $ */
} hop;

static void on_crossed(evq *q, void *subject, int64_t arg)
{
    (void) q;
    hop *h = subject;
    request *r = (request *) (intptr_t) arg;
    station_forward(&h->st, r, 0);
}

/* R crosses the hop with times T: its components, its way back, the hop's sums;
 * it reaches the next station after the request direction.  CONN_UP_MS and
 * CONN_DN_MS: of T's network times up and down, connection setup (handshakes,
 * radio wake-up, slow-start waits), ms. */
static void cross(hop *h, request *r, const net_times *t, double conn_up_ms, double conn_dn_ms)
{
    station *st = &h->st;
    /* Rounded to ns once each, so that the components add up exactly. */
    simtime_t up_net = simtime_from_ms(t->up_net_ms), up_proto = simtime_from_ms(t->up_proto_ms);
    simtime_t dn_net = simtime_from_ms(t->down_net_ms), dn_proto = simtime_from_ms(t->down_proto_ms);
    r->network_ns += up_net + dn_net;
    r->net.fwd_ns += up_net;
    if (conn_up_ms > 0 || conn_dn_ms > 0)   /* rounded once each: never more than the times they are part of */
        r->conn.net_ns += simtime_from_ms(conn_up_ms) + simtime_from_ms(conn_dn_ms);
    r->overhead_ns += up_proto + dn_proto;
    r->ret_last_ns += dn_net + dn_proto;
    simtime_t first_net = simtime_from_ms(t->first_net_ms);
    r->ret_first_ns += first_net + simtime_from_ms(t->first_proto_ms);
    r->net.ret_first_ns += first_net;
    r->net.whole_ns += simtime_from_ms(t->whole_net_ms) - dn_net;
    r->net.whole_proto_ns += simtime_from_ms(t->whole_proto_ms) - dn_proto;
    if (!h->net->stream) r->whole = 1;   /* buffered here: nothing reaches the client before the last byte */
    if (r->measured) {
        double down = net_answer_bytes(h->net, r->output);
        h->bytes_up += net_request_bytes(h->net, r->prompt);
        h->bytes_down += down;
        if (h->net->egress_usd_per_gb > 0) {   /* the answer leaves the callee's network: egress, $ per 1e9 bytes */
            double usd = down / 1e9 * h->net->egress_usd_per_gb;
            h->egress_usd += usd;
            if (st->cls_usd) st->cls_usd[r->cls] += usd;
        }
        h->n++;
        h->net_ms += simtime_to_ms(up_net + dn_net);
        h->proto_ms += simtime_to_ms(up_proto + dn_proto);
        stat_add(st->service_ms, simtime_to_ms(up_net + up_proto));
    }
    station_after(st, up_net + up_proto, on_crossed, h, (int64_t) (intptr_t) r);
}

/* ---- connections ---------------------------------------------------------- */

/* Connection I is open and unused past its idle timeout: closed. */
static int expired(const hop *h, const hconn *k, simtime_t now)
{
    return k->open && k->streams == 0
        && now - k->last_used > simtime_from_ms(h->cc->idle_timeout_s * 1000.0);
}

/* The pool connection a request takes now, or -1 when it must wait.
 * HTTP/1.1: the most recently used idle open one, else one to open;
 * HTTP/2: the first open one with a free stream, else one to open. */
static int pick(const hop *h, simtime_t now)
{
    int best = -1, spare = -1;
    for (int i = 0; i < h->nconns; i++) {
        const hconn *k = &h->conns[i];
        int dead = !k->open || expired(h, k, now);
        if (dead) {
            if (spare < 0 && k->streams == 0) spare = i;
            continue;
        }
        if (h->cc->http2) {
            if (k->streams < h->cc->max_streams) return i;
        } else if (k->streams == 0 && (best < 0 || k->last_used > h->conns[best].last_used)) {
            best = i;
        }
    }
    return best >= 0 ? best : spare;
}

/* A record for R (its chain to the hop before kept); returns 0, or -1 when out of memory. */
static int hold(hop *h, request *r, int32_t conn, int32_t user, simtime_t outer)
{
    if (h->free_rec < 0) {
        int32_t n = h->nrecs ? 2 * h->nrecs : 64;
        hrec *x = realloc(h->recs, (size_t) n * sizeof *x);
        if (!x) return -1;
        for (int32_t i = h->nrecs; i < n; i++) x[i].next_free = i + 1 < n ? i + 1 : -1;
        h->free_rec = h->nrecs;
        h->recs = x;
        h->nrecs = n;
    }
    int32_t s = h->free_rec;
    hrec *e = &h->recs[s];
    h->free_rec = e->next_free;
    *e = (hrec) { conn, user, outer, r->conn.at, r->conn.slot, -1 };
    r->conn.at = &h->st;
    r->conn.slot = s;
    return 0;
}

/* Radio of user U: grows the tables; returns 0, or -1 when out of memory. */
static int radio_room(hop *h, int32_t u)
{
    if (u < h->nradio) return 0;
    int32_t n = h->nradio ? h->nradio : 16;
    while (n <= u) n *= 2;
    simtime_t *l = realloc(h->radio_last, (size_t) n * sizeof *l);
    if (!l) return -1;
    h->radio_last = l;
    int32_t *b = realloc(h->radio_busy, (size_t) n * sizeof *b);
    if (!b) return -1;
    h->radio_busy = b;
    for (int32_t i = h->nradio; i < n; i++) {
        l[i] = -1;
        b[i] = 0;
    }
    h->nradio = n;
    return 0;
}

/* Segments lost of SEGMENTS sent (each with probability loss). */
static double lost(hop *h, double segments)
{
    if (!h->loss_rng) return 0;
    return (double) gsl_ran_binomial(h->loss_rng, h->cc->loss, (unsigned int) fmin(segments, 4e9));
}

/* R leaves the hop's caller side now on a connection (or waits for one): its
 * handshakes, radio wake-up, slow start and losses on top of the link's times. */
static void send(hop *h, request *r)
{
    station *st = &h->st;
    const conn_cfg *c = h->cc;
    const net_cfg *net = h->net;
    simtime_t now = evq_now(st->q);
    double rtt = dist_sample(&net->rtt_ms, st->rng);
    net_times t;
    net_times_at(net, rtt, r->prompt, r->output, &t);

    double setup = 0, warm = INFINITY;
    double *cw_up = &warm, *cw_dn = &warm, cw_up_new = c->init_cwnd, cw_dn_new = c->init_cwnd;
    int32_t k = -1, streams = 1, opened = 0;
    if (c->mode == CONN_NEW) {
        setup = conn_handshake_rtts(c, h->had_session && c->resume != CONN_RESUME_NO) * rtt;
        h->had_session = opened = 1;
        cw_up = &cw_up_new;
        cw_dn = &cw_dn_new;
    } else if (c->mode == CONN_POOL) {
        k = pick(h, now);
        hconn *x = &h->conns[k];
        if (!x->open || expired(h, x, now)) {
            setup = conn_handshake_rtts(c, h->had_session && c->resume != CONN_RESUME_NO) * rtt;
            h->had_session = opened = 1;
            x->open = 1;
            x->cwnd_up = x->cwnd_down = c->init_cwnd;
        } else if (c->ss_after_idle && x->streams == 0
                   && now - x->last_used > simtime_from_ms(net->rtt_ms.mean + c->rto_min_ms)) {
            x->cwnd_up = fmin(x->cwnd_up, c->init_cwnd);      /* RFC 5681 4.1: restart after an idle RTO */
            x->cwnd_down = fmin(x->cwnd_down, c->init_cwnd);
        }
        streams = ++x->streams;
        cw_up = &x->cwnd_up;
        cw_dn = &x->cwnd_down;
        if (!c->http2) station_busy(st, +1);
    }
    int32_t user = -1;
    int woke = 0;
    if (c->radio_idle_s > 0) {
        user = r->user > 0 ? r->user : 0;
        if (radio_room(h, user) != 0) {
            st->sink->oom(st->sink->ctx);
            return;
        }
        if (h->radio_busy[user] == 0
            && (h->radio_last[user] < 0 || now - h->radio_last[user] > simtime_from_ms(c->radio_idle_s * 1000.0))) {
            setup += c->radio_promo_ms;
            woke = 1;
        }
        h->radio_busy[user]++;
    }

    /* Slow start: the request on the way up; on the way down the answer (whole), or its first
     * chunk (streamed: later chunks follow at the pace of the tokens). */
    double req = net_request_bytes(net, r->prompt), ans = net_answer_bytes(net, r->output);
    double first = net->header_bytes + net->bytes_per_token + net->chunk_bytes;
    double stall_up = conn_stall_ms(req, cw_up, c->mss, rtt, net->up_mbps);
    double cw_whole = *cw_dn;
    double stall_whole = conn_stall_ms(ans, &cw_whole, c->mss, rtt, net->down_mbps);
    double stall_first = conn_stall_ms(net->stream ? first : ans, cw_dn, c->mss, rtt, net->down_mbps);
    double stall_last = net->stream ? (r->output <= 1 ? stall_first : 0) : stall_first;
    /* Losses: one round trip each; on HTTP/2 every stream's segments on the connection count. */
    double mult = c->http2 && c->mode == CONN_POOL ? streams : 1;
    double l_up = lost(h, conn_segments(req, c->mss) * mult);
    double l_dn = lost(h, conn_segments(ans, c->mss) * mult);
    if (l_up > 0) *cw_up = fmax(*cw_up / 2, 1);
    if (l_dn > 0) *cw_dn = fmax(*cw_dn / 2, 1);
    double loss_up = l_up * rtt, loss_dn = l_dn * rtt;

    t.up_net_ms += setup + stall_up + loss_up;
    t.first_net_ms += stall_first + (net->stream ? 0 : loss_dn);
    t.down_net_ms += stall_last + loss_dn;
    t.whole_net_ms += stall_whole + loss_dn;
    if (r->measured) {
        h->setup_ms += setup;
        h->stall_ms += stall_up + stall_last;
        h->loss_ms += loss_up + loss_dn;
        h->opened += (uint64_t) opened;
        h->wakeups += (uint64_t) woke;
    }
    if ((k >= 0 || user >= 0) && hold(h, r, k, user, r->ret_last_ns) != 0) {
        st->sink->oom(st->sink->ctx);
        return;
    }
    cross(h, r, &t, setup + stall_up, stall_last);
}

/* The hop lets go of record SLOT now (its request's answer has passed it):
 * the connection and the radio are free; waiting requests take connections. */
static void let_go(hop *h, int32_t slot)
{
    station *st = &h->st;
    simtime_t now = evq_now(st->q);
    hrec *e = &h->recs[slot];
    if (e->conn >= 0) {
        hconn *x = &h->conns[e->conn];
        x->streams--;
        x->last_used = now;
        if (!h->cc->http2) station_busy(st, -1);
    }
    if (e->user >= 0) {
        h->radio_busy[e->user]--;
        h->radio_last[e->user] = now;
    }
    e->next_free = h->free_rec;
    h->free_rec = slot;
    while (st->qlen > 0 && pick(h, now) >= 0) {
        request *r = station_dequeue(st);
        if (!r) break;
        r->conn.wait_ns += now - r->enq;   /* its wait for a connection: the breakdown's connect */
        station_start(st, r);
        send(h, r);
    }
}

static void on_let_go(evq *q, void *subject, int64_t arg)
{
    (void) q;
    let_go(subject, (int32_t) arg);
}

/* R leaves the system: its answer (or error) passes this hop's caller side
 * once the way back inside this hop has been travelled. */
static void ended(station *st, request *r)
{
    hop *h = (hop *) st;
    int32_t slot = r->conn.slot;
    hrec *e = &h->recs[slot];
    r->conn.at = e->prev_at;
    r->conn.slot = e->prev_slot;
    simtime_t back = r->ret_last_ns - e->outer;
    if (back > 0) station_after(st, back, on_let_go, h, slot);
    else let_go(h, slot);
}

static void arrive(station *st, request *r)
{
    hop *h = (hop *) st;
    if (!h->net->conn.active) {
        net_times t;
        net_sample(h->net, r->prompt, r->output, st->rng, &t);
        cross(h, r, &t, 0, 0);
        return;
    }
    r->enq = evq_now(st->q);
    if (h->cc->mode == CONN_POOL && (st->qlen > 0 || pick(h, r->enq) < 0)) {
        station_enqueue(st, r);   /* waits for a connection (queue_limit, timeout_ms apply) */
        return;
    }
    station_start(st, r);
    send(h, r);
}

void hop_answer_whole(request *r)
{
    r->network_ns += r->net.whole_ns;
    r->overhead_ns += r->net.whole_proto_ns;
    r->ret_last_ns += r->net.whole_ns + r->net.whole_proto_ns;
    r->ret_first_ns = r->ret_last_ns;
    r->net.whole_ns = r->net.whole_proto_ns = 0;
    r->whole = 1;
}

static int report(station *st, pool_result *out)
{
    hop *h = (hop *) st;
    double n = h->n ? (double) h->n : NAN;
    if (pool_result_add(out, "network_ms_mean", h->net_ms / n)) return -1;
    if (pool_result_add(out, "protocol_ms_mean", h->proto_ms / n)) return -1;
    if (h->net->conn.active || h->net->egress_usd_per_gb > 0) {
        if (pool_result_add(out, "bytes_up", h->bytes_up)) return -1;
        if (pool_result_add(out, "bytes_down", h->bytes_down)) return -1;
    }
    if (h->net->egress_usd_per_gb > 0) {
        if (pool_result_add(out, "egress_gb", h->bytes_down / 1e9)) return -1;
        if (pool_result_add(out, "egress_usd", h->egress_usd)) return -1;
        if (pool_result_add(out, "egress_usd_per_hour", out->window_s > 0 ? h->egress_usd / out->window_s * 3600 : NAN)) return -1;
    }
    if (!h->net->conn.active) return 0;
    if (pool_result_add(out, "setup_ms_mean", h->setup_ms / n)) return -1;
    if (pool_result_add(out, "slow_start_ms_mean", h->stall_ms / n)) return -1;
    if (pool_result_add(out, "loss_ms_mean", h->loss_ms / n)) return -1;
    if (pool_result_add(out, "transfer_ms_mean", (h->net_ms - h->setup_ms - h->stall_ms - h->loss_ms) / n)) return -1;
    if (pool_result_add(out, "conn_opened", (double) h->opened)) return -1;
    if (h->cc->radio_idle_s > 0 && pool_result_add(out, "radio_wakeups", (double) h->wakeups)) return -1;
    return 0;
}

static void destroy(station *st)
{
    hop *h = (hop *) st;
    free(h->conns);
    free(h->recs);
    free(h->radio_last);
    free(h->radio_busy);
    if (h->loss_rng) gsl_rng_free(h->loss_rng);
    station_fini(st);
    free(st);
}

static const station_ops HOP_OPS = {
    .arrive = arrive,
    .report = report,
    .ended = ended,
    .destroy = destroy,
};

static const scn_key KEYS[] = {
    { "preset", "same_zone", "link preset: same_zone, cross_zone, cross_region, client_4g, client_5g, client_broadband, internet_same_region, internet_cross_region, internet_intercontinental" },
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
    { "connection", "reuse", "reuse: an always-open warm connection; new: one opened per request; pool: pool_size kept open (docs/gateway.md#connections)" },
    { "pool_size", "10", "connection = pool: connections (>= 1)" },
    { "idle_timeout_s", "60", "connection = pool: a connection unused this long is closed, s" },
    { "tls", "none", "none, 1.2 or 1.3: TLS handshake round trips on each new connection (2 or 1, after TCP's 1)" },
    { "tls_resume", "no", "no, ticket (1 TLS round trip once a session exists) or 0rtt (TLS 1.3 early data: none)" },
    { "http", "", "1.1 (a connection carries one request at a time) or 2 (streams share it); default 1.1, grpc: 2" },
    { "max_streams", "100", "http = 2: concurrent streams per connection" },
    { "init_cwnd_segments", "10", "TCP initial congestion window of a new (or idle) connection, segments" },
    { "mss_bytes", "1460", "TCP maximum segment size, bytes" },
    { "slow_start_after_idle", "yes", "yes: a pooled connection idle past its retransmission timeout restarts slow start" },
    { "rto_min_ms", "200", "retransmission timeout floor: idle restart after mean RTT + this, ms" },
    { "loss", "", "share of segments lost, each costing a round trip (default: the preset's; 0 inside a cloud)" },
    { "radio_idle_s", "", "mobile radio: it sleeps after this long without traffic, s (default: no radio model)" },
    { "radio_promotion_ms", "", "mobile radio: waking it, ms (default: the preset's; client_4g 260, client_5g 20)" },
    { "egress_usd_per_gb", "0", "$ per GB (1e9 bytes) of answers crossing the hop back (cloud egress): added to the run's and each class's cost" },
    { NULL, NULL, NULL },
};

/* The connection keys into C->conn (the preset has filled its loss and radio delay). */
static int parse_conn(scn_ctx *x, const char *sec, net_cfg *c)
{
    conn_cfg *k = &c->conn;
    int mode, tls, resume, http, ss;
    if (scn_enum(x, sec, "connection", "reuse|new|pool", 0, &mode)) return -1;
    k->mode = (conn_mode) mode;
    if (scn_int(x, sec, "pool_size", 10, 1, 1000000, &k->pool)) return -1;
    if (scn_num(x, sec, "idle_timeout_s", 60, 0, 1, 1e9, &k->idle_timeout_s)) return -1;
    if (scn_enum(x, sec, "tls", "none|1.2|1.3", 0, &tls)) return -1;
    k->tls = (conn_tls) tls;
    if (scn_enum(x, sec, "tls_resume", "no|ticket|0rtt", 0, &resume)) return -1;
    k->resume = (conn_resume) resume;
    if (scn_enum(x, sec, "http", "1.1|2", c->protocol == NET_GRPC ? 1 : 0, &http)) return -1;
    k->http2 = http;
    if (scn_int(x, sec, "max_streams", 100, 1, 1000000, &k->max_streams)) return -1;
    if (scn_num(x, sec, "init_cwnd_segments", 10, 0, 1, 1e9, &k->init_cwnd)) return -1;
    if (scn_num(x, sec, "mss_bytes", 1460, 0, 1, 1e9, &k->mss)) return -1;
    if (scn_bool(x, sec, "slow_start_after_idle", 1, &ss)) return -1;
    k->ss_after_idle = ss;
    if (scn_num(x, sec, "rto_min_ms", 200, 0, 0, 1e9, &k->rto_min_ms)) return -1;
    if (scn_num(x, sec, "loss", k->loss, 0, 0, 0.5, &k->loss)) return -1;
    if (scn_num(x, sec, "radio_idle_s", 0, 0, 0, 1e9, &k->radio_idle_s)) return -1;
    if (scn_value(x, sec, "radio_idle_s") && k->radio_idle_s <= 0)
        return scn_fail(x, sec, "radio_idle_s", "must be > 0 (leave it out for no radio model)");
    if (scn_num(x, sec, "radio_promotion_ms", k->radio_promo_ms, 0, 0, 1e9, &k->radio_promo_ms)) return -1;
    if (k->radio_idle_s > 0 && !scn_value(x, sec, "radio_promotion_ms") && k->radio_promo_ms <= 0)
        return scn_fail(x, sec, "radio_idle_s", "this preset has no radio: give radio_promotion_ms"
                        " (client_4g 260, client_5g 20)");
    if (k->mode == CONN_REUSE && (k->tls != CONN_TLS_NONE || k->resume != CONN_RESUME_NO))
        return scn_fail(x, sec, k->tls != CONN_TLS_NONE ? "tls" : "tls_resume",
                        "a TLS handshake happens on opening a connection: connection = new or pool"
                        " (reuse is always open)");
    if (c->protocol == NET_GRPC && !k->http2)
        return scn_fail(x, sec, "http", "gRPC runs over HTTP/2 only (http = 2)");
    char err[160];
    if (conn_check(k, err, sizeof err) != 0)
        return scn_fail(x, sec, k->resume != CONN_RESUME_NO ? "tls_resume" : NULL, "%s", err);
    k->active = k->mode != CONN_REUSE || k->loss > 0 || k->radio_idle_s > 0;
    return 0;
}

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
    if (parse_conn(x, sec, c)) return -1;
    if (scn_num(x, sec, "egress_usd_per_gb", 0, 0, 0, 1e6, &c->egress_usd_per_gb)) return -1;
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
    h->cc = &h->net->conn;
    h->free_rec = -1;
    if (h->cc->mode == CONN_POOL) {
        h->nconns = h->cc->pool;
        h->conns = calloc((size_t) h->nconns, sizeof *h->conns);
        if (!h->conns) {
            destroy(&h->st);
            return NULL;
        }
        if (!h->cc->http2) h->st.capacity = h->nconns;   /* utilisation: the share of connections in use */
    }
    if (h->cc->loss > 0) {
        char name[96];
        snprintf(name, sizeof name, "pool %s/loss", cfg->name);
        if (!(h->loss_rng = rng_stream(env->seed, name))) {
            destroy(&h->st);
            return NULL;
        }
    }
    return &h->st;
}

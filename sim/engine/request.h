/* request.h -- one request's record as it moves through the simulated service.
 *
 * Requests are recycled through a free list (req_alloc / req_release), so the
 * memory a run uses depends on how many requests are in the system at once,
 * never on how many the run simulates.
 */
#ifndef LATSIM_REQUEST_H
#define LATSIM_REQUEST_H

#include <stddef.h>
#include <stdint.h>
#include "engine/evq.h"

/* Stations of a request's path that are remembered (per-pool and per-route
 * statistics count the first REQ_PATH stations a request passes). */
#define REQ_PATH 12

/* OUT_FAILED: lost to a replica's failure (a pool with on_failure = fail). */
/* OUT_ABANDONED: its client's patience (patience_s) ran out before its answer began: it left a queue, or
 * its work in service was cancelled (station_ops.cancel). */
typedef enum { OUT_PENDING, OUT_SERVED, OUT_REJECTED, OUT_TIMED_OUT, OUT_FAILED, OUT_ABANDONED } req_outcome;

/* What the workload (and the gateway attributes it draws) says of a request:
 * read by gateways, caches and servers, copied whole to a client's retry. */
typedef struct req_attrs {
    uint64_t intent;        /* intent key for a result cache (0 = none) */
    double complexity;      /* complexity score in [0, 1], from the workload or the first complexity router */
    simtime_t cache_ttl;    /* how long a result cache keeps its answer, ns (0 = not cached, -1 = the cache's own) */
    int64_t sys_tokens;     /* leading prompt tokens shared by its class (prefix caches), 0 = none */
    uint64_t session;       /* multi-turn session it is a turn of (prefix caches; whole prompt blocks keyed by it), 0 = none */
    const int64_t *hash_ids;/* its prompt's block hash ids, in order (shared with the trace: never freed here), or NULL */
    int32_t nhash;          /* how many; each names hash_block_tokens prompt tokens */
    int32_t trace_adapter;  /* the adapter (LoRA) its trace row names, plus 1 (1: the base model, k + 1:
                               adapter k of 1..N); 0: none (its class's, or a draw) */
    uint8_t scored;         /* 1 when complexity is set */
} req_attrs;

/* The record is laid out in two parts.  The core, first, is what the engine,
 * the generic pools and the sink read: it is zeroed for every request.  The
 * tail (the workload's attributes, and those of gateway, cache, KV, framework
 * and connection features) is read only by the kinds and workload attributes
 * that use it: it is zeroed only when the run has one of them
 * (req_pool.zero_tail).  What a kind keeps for a request while it is at one
 * of its stations (an LLM replica's sequence) is the kind's own record, which
 * `scratch` points to. */
typedef struct request {
    /* ---- core ---- */
    struct request *next;   /* queue link, or free-list link */
    uint64_t id;            /* arrival order, from 0 */
    simtime_t arrival;      /* entered the system, ns */
    simtime_t enq;          /* entered the current pool's queue, ns */
    simtime_t start;        /* began (or, after preemption, resumed) service in the current pool, ns */
    simtime_t queue_ns;     /* total time waiting in queues, ns */
    simtime_t service_ns;   /* total time in service, ns */
    simtime_t network_ns;   /* total time on network hops, both ways (the way back counted when the hop is entered), ns */
    simtime_t overhead_ns;  /* total overhead: front ends, gateways, classifiers, cache lookups, protocol encoding, ns */
    simtime_t ret_last_ns;  /* network + protocol time the last byte of the answer still needs to reach the client, ns */
    simtime_t ret_first_ns; /* the same for the first token after it is emitted, ns */
    simtime_t first_token;  /* LLM: first output token, ns (-1 before) */
    simtime_t last_token;   /* LLM: last output token, ns */
    simtime_t entered;      /* entered the station it is in (this hop), ns */
    struct station *at;     /* the station it is in (NULL before entering and after leaving) */
    struct station *notify; /* a station (result cache) to tell when the request leaves served, or NULL */
    evq_id timeout_ev;      /* pending queue-timeout event, or 0 */
    evq_id client_ev;       /* [client]: the client's pending timeout of this attempt, or 0 */
    simtime_t give_up_at;   /* its client leaves if no answer has begun by then (patience_s), ns; 0 = never */
    evq_id patience_ev;     /* pending end of its client's patience while it is in service at a station that
                               can cancel it (station_ops.cancel), or 0 */
    evq_id svc_ev;          /* generic pool without fleet keys: its service-end event while in service */
    int32_t prompt;         /* prompt tokens */
    int32_t output;         /* output tokens to generate */
    int32_t target;         /* pool it enters first (set by the workload source) */
    int32_t cls;            /* index of its class (workload_cfg.classes) */
    int32_t user;           /* closed loop: the user who sent it (0 in open loop) */
    uint16_t hops;          /* stations entered so far */
    uint8_t measured;       /* 1 when it arrived after the warm-up */
    uint8_t outcome;        /* req_outcome */
    uint8_t cold;           /* served (in part) by a replica or server still cold after a start */
    uint8_t whole;          /* 1 when the client gets the answer in one piece (a hop that does not stream, a
                               result-cache hit): its first token arrives with the last byte */
    uint8_t attempt;        /* [client]: 0 for the first attempt, k for the k-th retry */
    uint8_t abandoned;      /* [client]: the client no longer waits for this attempt */
    uint8_t cache_res;      /* its last result-cache lookup: 0 none, 1 miss, 2 hit, 3 false hit (per-class hit rates) */
    uint8_t impatient;      /* its queue timeout armed is its patience (it leaves abandoned, not timed out) */
    uint8_t queue_patience; /* its client leaves only while it waits in a queue (patience_in_service = no) */

    /* ---- tail: workload attributes, gateway, KV, framework and connection features ---- */
    req_attrs attrs;        /* what the workload says of it (req_copy_attrs copies them as one block) */
    struct {                /* network hops (gateway/hop.c) */
        simtime_t fwd_ns;   /* of network_ns, the network time of the hops on the way in (up), ns */
        simtime_t ret_first_ns; /* of ret_first_ns, its network part (the rest is protocol time), ns */
        simtime_t whole_ns; /* network time the way back takes longer, over the hops passed, when the answer
                               leaves whole (a result-cache hit) rather than token by token, ns */
        simtime_t whole_proto_ns; /* the same for protocol time, ns */
    } net;
    struct {
        simtime_t xfer_ns;  /* KV transfer from a prefill pool: its blocks reserved to its KV arrived
                               (link wait + bytes / bandwidth + latency), ns; part of service_ns */
        simtime_t load_ns;  /* KV loaded back from offload tiers before its prefill, ns; part of service_ns */
    } kv;
    struct {
        simtime_t ns;       /* framework overhead of the steps it was in (each step's fixed, launch and
                               per-sequence CPU part, cost_ops.overhead_ms), ns; part of service_ns: the
                               report counts it as overhead (docs/metrics.md) */
    } fw;
    int32_t tf_pool;        /* 1 + index of the pool that emitted its first token (tf holds the snapshot
                               then); 0: none yet (a result-cache hit never has one) */
    int32_t tf_rep;         /* the replica of that pool that emitted it, 0-based (set by the station; 0 otherwise) */
    struct {
        struct station *at; /* the innermost network hop holding a connection (or a radio) for it, told when
                               it leaves the system (station_ops.ended); NULL: none */
        int32_t slot;       /* that hop's record of it */
        simtime_t net_ns;   /* of network_ns, setting up connections on hops: handshakes, radio wake-ups,
                               slow-start waits (the breakdown's connect), ns */
        simtime_t wait_ns;  /* of queue_ns, waits for a hop's pooled connection (connect too), ns */
    } conn;
    uint8_t truncated;      /* 1 when a server cut its prompt to its max_seq_len */
    int32_t emitted;        /* output tokens produced by the stations it has left (a streaming server's
                               count when it let go of it; 0 before any), tokens */
    uint8_t marks;          /* bits a kind keeps for it across that kind's stations (their meaning is the
                               kind's own: llm/seqrec.h), 0 at arrival */
    void *scratch;          /* the record the kind of the station it is in keeps for it there (an LLM
                               pool's sequence: llm/seqrec.h), or NULL; set when it enters such a station,
                               NULL again when it leaves */

    /* ---- never zeroed: written before they are read ---- */
    /* Its components when its first token was emitted (req_first_token; valid when tf_pool > 0):
     * what the TTFT breakdown is made of (col_breakdown.c). */
    struct {
        simtime_t at;        /* emission time, ns */
        simtime_t queue_ns;  /* queue_ns then, ns */
        simtime_t service_ns;/* service_ns then, the service in progress included, ns */
        simtime_t network_ns, overhead_ns, ret_last_ns;   /* those fields then (both ways counted), ns */
        simtime_t fwd_net_ns;/* net.fwd_ns then, ns */
        simtime_t kvx_ns, kvl_ns;   /* kv.xfer_ns and kv.load_ns then, ns */
        simtime_t fw_ns;     /* framework overhead of the steps up to then (fw.ns), ns (set by the station; else 0) */
    } tf;
    /* The stations it entered (path[i] the pool index of the i-th, for i < min(hops, REQ_PATH)) and
     * the out-edge it left each along (edge[i], written when it left path[i] for a next station). */
    uint16_t path[REQ_PATH];
    uint16_t edge[REQ_PATH];
} request;

/* Bytes of the core (zeroed for every request). */
#define REQ_CORE_BYTES offsetof(request, attrs)
/* End of the tail (zeroed when req_pool.zero_tail). */
#define REQ_TAIL_END offsetof(request, tf)

typedef struct req_slab req_slab;

typedef struct req_pool {
    request *free;          /* recycled records */
    req_slab *slabs;        /* every block of records allocated, freed together at the end */
    uint64_t live;          /* records handed out and not released */
    uint64_t peak;          /* most live at once */
    int zero_tail;          /* 1: the tail is zeroed too (a kind or attribute reads it); 0: only the core
                               (records start zeroed whole; nothing in such a run writes the tail's
                               read fields) */
} req_pool;

/* A record with its core zeroed (first_token -1), and its tail too when
 * P->zero_tail; NULL when out of memory. */
request *req_alloc(req_pool *p);
void req_release(req_pool *p, request *r);
void req_pool_free(req_pool *p);   /* frees every record, live or not */

/* Copies what the request IS (id, arrival, class, tokens, workload and gateway
 * attributes) from SRC into DST, a fresh record, leaving what an attempt at it
 * did (times, station state, outcome) as req_alloc left it: a client's retry. */
void req_copy_attrs(request *dst, const request *src);

/* R's first token is emitted at T (now, or later for a station that knows it
 * ahead: an external API) by pool POOL, which has had R in service since
 * r->start: records it, with the snapshot of its components (r->tf). */
static inline void req_first_token(request *r, simtime_t t, int pool)
{
    r->first_token = t;
    r->tf_pool = pool + 1;
    r->tf_rep = 0;
    r->tf.at = t;
    r->tf.queue_ns = r->queue_ns;
    r->tf.service_ns = r->service_ns + (t - r->start);
    r->tf.network_ns = r->network_ns;
    r->tf.overhead_ns = r->overhead_ns;
    r->tf.ret_last_ns = r->ret_last_ns;
    r->tf.fwd_net_ns = r->net.fwd_ns;
    r->tf.kvx_ns = r->kv.xfer_ns;
    r->tf.kvl_ns = r->kv.load_ns;
    r->tf.fw_ns = 0;
}

#endif

/* omx.h -- recording a run's metrics as an engine's Prometheus endpoint would
 * expose them (the public side, writing them, is latsim/omx.h).
 *
 * The engine tells it each request served (omx_served) and, at the run's start
 * and at the end of every time-series interval, the gauges of every pool
 * (omx_point): it keeps, per pool (and replica), the cumulative counters and histograms a
 * scrape at that instant would read, and copies them into one point per
 * instant.  An LLM pool's series may be per replica (omx_set_replicas).
 * Memory: one omx_state per pool and point (about 700 bytes) and one omx_state
 * per replica and point, so the caller bounds points x (pools + replicas) (omx_check).
 */
#ifndef LATSIM_OMX_H
#define LATSIM_OMX_H

#include <stddef.h>
#include <stdint.h>
#include "latsim/omx.h"

/* Bucket bounds, s: vLLM v1's (vllm/v1/metrics/loggers.py). */
#define OMX_TTFT_B 22             /* time_to_first_token_seconds */
#define OMX_TPOT_B 19             /* request_time_per_output_token_seconds */
#define OMX_E2E_B 21              /* e2e_request_latency_seconds */
extern const double omx_ttft_bounds[OMX_TTFT_B], omx_tpot_bounds[OMX_TPOT_B], omx_e2e_bounds[OMX_E2E_B];


/* One request served, as the engine saw it and as its client did. */
typedef struct omx_req {
    double e2e_s;             /* client: arrival to its last byte, s */
    double ttft_s;            /* client: arrival to its first token, s; NAN: none (not an LLM answer) */
    double eng_e2e_s;         /* engine: its queueing and service time, s */
    double eng_ttft_s;        /* engine: queueing and service time up to its first token, s; NAN: none */
    double tpot_s;            /* engine: (last token - first token) / (output - 1), s; NAN when output < 2 */
    int64_t prompt;           /* prompt tokens */
    int64_t output;           /* output tokens (0: not an LLM answer) */
    int replica;              /* the pool's replica that served it, 0-based; -1: none known */
} omx_req;

/* A pool's gauges at an instant. */
typedef struct omx_gauge {
    double running;           /* requests in service (LLM: sequences running), requests */
    double waiting;           /* requests waiting in its queue, requests */
    double kv_usage;          /* share of KV blocks in use, [0, 1]; NAN: no KV cache */
} omx_gauge;

/* A series for NPOOLS pools named NAMES, serving MODELS (the model name label;
 * NULL entries: the pool name), LLM[i] 1 for an LLM pool (vllm: names).
 * Returns NULL with a message in ERR when out of memory. */
omx *omx_new(int npools, const char *const *names, const char *const *models, const int *llm,
             char *err, size_t errlen);

/* Pool POOL has NREP replicas (called before the first point): its gauges
 * and counters and histograms are then written per replica (label replica="0"
 * .. NREP - 1; gauges from omx_replica_gauges), and its pool-wide gauges of omx_point under
 * latsim's names (latsim_pool_requests_running, _waiting: shared queue and
 * replicas' own, latsim_pool_kv_cache_usage_perc).  Returns 0,
 * or -1 when out of memory, after the first point, or for a bad POOL. */
int omx_set_replicas(omx *m, int pool, int nrep);

/* The gauges of pool POOL's replicas now (its nrep entries), for the next
 * omx_point. */
void omx_replica_gauges(omx *m, int pool, const omx_gauge *rg);

/* Request R served, attributed to pool POOL (0 <= POOL < npools) and, when
 * the pool has replicas, to its replica R->replica. */
void omx_served(omx *m, int pool, const omx_req *r);

/* A scrape at T_S seconds of simulated time with the pools' gauges G (npools
 * entries).  Returns 0, or -1 when out of memory (the point is lost, and
 * omx_failed says so). */
int omx_point(omx *m, double t_s, const omx_gauge *g);
int omx_failed(const omx *m);


#endif

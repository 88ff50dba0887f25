/* sim.h -- one simulation run of a scenario, and its results.
 *
 * sim_run() builds the model objects (workload source, one station per pool),
 * runs the event loop until every measured request has an outcome, and fills
 * a sim_result.  The first `warmup` arrivals are simulated but not measured;
 * arrivals continue while measured requests are still in the system so that
 * the last ones see the same load as the first (they stop, and the system
 * drains, only if twice the expected arrivals have happened: a saturated run).
 */
#ifndef LATSIM_SIM_H
#define LATSIM_SIM_H

#include <stdint.h>
#include "scenario.h"
#include "stats.h"
#include "request.h"

typedef struct pool_result pool_result;

struct pool_result {
    char name[64];
    pool_kind kind;
    int saturated;            /* 1: offered load >= capacity, or the queue kept growing */
    double offered_load;      /* arrival rate x mean service / servers (generic), NAN when unknown */
    double window_s;          /* measured window, s (as in sim_result) */
    double utilization;       /* busy share of servers (generic) or stepping share of replicas (llm) */
    stat_summary queue;       /* waiting in this pool, ms */
    stat_summary service;     /* in service in this pool, ms */
    uint64_t arrivals, served, rejected, timed_out;
    /* llm */
    int replicas;             /* replicas */
    int gpus;                 /* replicas x tp */
    int64_t kv_blocks;        /* KV blocks per replica */
    int64_t max_seq_len;      /* effective cap on prompt + output tokens */
    uint64_t steps;           /* forward steps, all replicas, measured window */
    double mean_batch;        /* mean sequences per step */
    double kv_occupancy;      /* time-mean share of KV blocks in use */
    double kv_peak;           /* highest share of KV blocks in use */
    uint64_t preemptions;     /* sequences evicted for lack of KV blocks, measured window */
    uint64_t truncated;       /* measured requests whose prompt was cut to max_seq_len */
    uint64_t too_long;        /* measured requests rejected for exceeding max_seq_len */
    double mfu;               /* achieved / peak FLOP/s over the window */
    double mbu;               /* achieved / peak memory bandwidth over the window */
    double cost_per_hour;     /* $ per hour for the pool's GPUs */
};

typedef struct sim_result {
    uint64_t seed;
    uint64_t requests;        /* measured arrivals */
    uint64_t served, rejected, timed_out;
    uint64_t departures;      /* requests (measured or not) served during the window */
    int has_goodput;          /* the scenario's [slo] sets per-request limits */
    uint64_t good;            /* measured requests served within them (goodput) */
    uint64_t events;          /* events run */
    double sim_time_s;        /* simulated time at the end, s */
    double window_s;          /* measured window: first measured arrival to last outcome, s */
    double wall_time_s;       /* wall-clock time of the run, s */
    double throughput_rps;    /* requests served during the window / window */
    double output_tps;        /* their output tokens / window */
    int trace_exhausted;      /* a non-looping trace ended: fewer requests measured than asked */
    int saturated;            /* any pool saturated */
    int has_llm;              /* an LLM pool exists: ttft/tpot are meaningful */
    uint64_t peak_live;       /* most requests in the system at once */
    stat_summary e2e, queue, service, ttft, tpot, overhead;   /* ms */
    double cost_per_hour;     /* $ per hour, all GPU pools */
    double cost_per_mtok;     /* $ per million output tokens at the measured throughput */
    pool_result *pools;
    int npools;
} sim_result;

/* Runs SC with SEED.  Returns 0, or -1 with a message in ERR (out of memory). */
int sim_run(const scenario *sc, uint64_t seed, sim_result *out, char *err, size_t errlen);
void sim_result_free(sim_result *r);

/* ---- for stations ---------------------------------------------------------- */
struct sim;
struct station;
/* R has been served by pool ST: it goes to the next pool or leaves the system. */
void sim_done(struct sim *s, request *r);
/* R leaves with OUTCOME (rejected or timed out): sim_outcome() records it,
 * sim_release() recycles the record; sim_drop() does both. */
void sim_outcome(struct sim *s, request *r, req_outcome outcome);
void sim_release(struct sim *s, request *r);
void sim_drop(struct sim *s, request *r, req_outcome outcome);
/* 1 while the measured window is open. */
int sim_measuring(const struct sim *s);

#endif

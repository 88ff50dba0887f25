/* simstate.h -- the engine's books of one run (sim.c), shared with the code
 * that turns them into the run's results (simres.c).  Internal to sim/run. */
#ifndef LATSIM_SIMSTATE_H
#define LATSIM_SIMSTATE_H

#include <gsl/gsl_rng.h>
#include "core/retry.h"
#include "core/station.h"
#include "engine/evq.h"
#include "engine/request.h"
#include "fleet/cpunode.h"
#include "run/collect.h"
#include "run/scenario.h"
#include "latsim/sim.h"
#include "run/warmup.h"
#include "workload/gwattr.h"
#include "workload/workload.h"

typedef struct sim {
    const scenario *sc;
    evq *q;
    req_pool reqs;
    station **st;             /* one per pool */
    int nst;
    station_sink sink;        /* how the stations reach the engine */
    tap_set taps;             /* what the collectors offer the stations to record into (core/tap.h) */
    tap_step step_tap;        /* tap "step": the collectors' step hooks (sink_step), when one has one */

    wl_source *src;           /* arrival times and request attributes */
    uint64_t next_id;         /* next arrival's id */
    uint64_t target;          /* measured requests in this run */
    uint64_t arrival_cap;     /* arrivals stop here: the run is saturated */
    int capped;               /* arrivals stopped at arrival_cap */
    int trace_ran_out;        /* a non-looping trace ended before the target */
    int oom;                  /* a request record or an event could not be allocated */
    int closed;               /* closed loop: arrivals follow departures (users) */

    uint64_t resolved;        /* measured requests with an outcome */
    uint64_t served, rejected, timed_out;
    uint64_t abandoned;       /* patience: measured requests whose client left a queue (issue 34) */
    uint64_t failed;          /* measured requests lost to a replica's failure */
    int perpetual;            /* events that reschedule themselves (time series, fleets) exist */
    int src_done;             /* the open-loop source will send nothing more */
    const retry_cfg *client;  /* [client] timeouts and retries, or NULL */
    gsl_rng *client_rng;      /* the backoff jitter (stream "client") */
    simtime_t t_start;        /* first measured arrival, ns */
    simtime_t t_end;          /* last measured outcome, ns */
    int measuring;
    double out_tokens;        /* output tokens of requests leaving during the window */
    uint64_t departures;      /* requests leaving (served) during the window */
    int has_llm;              /* a kind needs token counts (overhead, ttft, tpot are recorded) */
    int mirror;               /* one station of a KIND_SOLE_STATS kind: the system's queue and
                                 service statistics are that station's, not recorded twice */

    int has_gateway;          /* a kind adds network or overhead time (KIND_GATEWAY) */
    int has_overhead;         /* has_llm or has_gateway: the overhead statistic is reported */
    int check;                /* 1: per-request sanity checks (DEBUG builds, or LATSIM_CHECK set: engine/check.h) */
    int lean;                 /* generic pools only, open loop, none of [client], time series,
                                 classes, per-request SLO limits, cold starts or self-renewing
                                 events: sink_leave's short path (lean_leave) */
    int plain_outcome;        /* no [client] and open loop: a served request's outcome needs
                                 no retry or closed-loop handling (sink_leave's short path) */

    gwattr *gwa;              /* gateway attributes of requests (class keys) */
    int ncls;                 /* [class] sections (0: none) */

    /* The metric families (collect.h). */
    run_env env;              /* what they see of the run */
    col_set cols;             /* the collectors of this run */

    /* Requests in the system over time (closed-loop report). */
    simtime_t live_t;         /* time of the last change, ns */
    double live_area;         /* integral of requests in the system, request-ns */
    double live_area_start;   /* its value when the window opened */
    double live_area_end;     /* ... and when it closed */
    uint64_t win_arrivals;    /* arrivals while measuring */
    warmup wu;                /* when the window opens (warmup.h) */
    trend tr;                 /* each pool's contents sampled through the window (warmup.h) */
    settle cs;                /* automatic warm-up: the caches' hit rates settling (warmup.h); cs.n 0: none */
    int opened;               /* the window has opened (it may have closed since) */
    uint64_t wstart;          /* id of the first measured arrival: the warm-up used, requests */
    int finite;               /* a finite workload (scenario.finite): no saturation verdict */
    uint64_t *peak_q;         /* finite: per pool, most requests waiting seen at an arrival (else NULL) */
    uint64_t *peak_in;        /* finite: per pool, most requests inside seen at an arrival */
    uint64_t peak_q_all;      /* finite: most requests waiting in all pools together at an arrival */
    simtime_t peak_q_t;       /* finite: when first seen, ns */
    cpu_nodes *cpun;          /* [node] sections and CPU limits (fleet/cpunode.h; host issue 35), or NULL */
    pool_result *pres;        /* [nst] each pool's results, filled at the end (simres_fill, then the
                                 collectors' emit: env.pools) and turned into rows (simres_pools) */
} sim;

/* Fills OUT from S once the run has ended: the run's counts, times and rates
 * (family "run"), the flags, each pool's result and verdicts.  Returns 0, or
 * -1 when a kind's report rows do not fit (or out of memory). */
int simres_fill(sim *s, sim_result *out);

/* The engine's own rows of the workload, after its results (docs/metrics.md,
 * "Metric definitions", workload facts as rows): family "warmup", when the automatic warm-up waited for
 * caches, warmup_cache_s (simulated time when the last cache's hit rate
 * settled, or the cap, s) and warmup_cache_capped (1: it reached its cap with a
 * cache unsettled); family "finite", with a finite workload, finite (1),
 * backlog_grew (1: some pool's backlog grew), peak_queue (most requests waiting
 * in all pools together, seen at an arrival) and peak_queue_at_s (when first
 * seen, s); family "workload", repeat_token_share (traces with hash ids:
 * prompt tokens a prefix cache could reuse / prompt tokens) and, in a closed
 * loop, achieved_rps (arrivals during the window / window, requests/s) and
 * mean_in_system (the time-mean number of requests in the system during the
 * window).  Returns 0 or -1 (out of memory). */
int simres_workload(const sim *s, sim_result *out);

/* Each pool's results (s->pres, complete once every collector has emitted) as
 * rows of scope the pool's name, in pool order: family "pool", what the
 * report shows of the pool (kind, busy_share, saturated, [finite]
 * backlog_grew, peak_queue and peak_in_pool, offered_load where the kind
 * knows it, arrivals, served, rejected, timed_out, the kind's own rows, the
 * latencies queue, service and e2e, and ttft, tpot and itl where it emits
 * tokens); family "aside", which the report leaves out, load_saturated
 * (1: saturated by its offered load) and, where its kind reports none,
 * cost_per_hour ($ per hour the pool costs: col_cost.c's sum).  Returns 0 or -1 (out of memory). */
int simres_pools(const sim *s, sim_result *out);

#endif

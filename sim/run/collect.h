/* collect.h -- run collectors: the metric families of a run, one row each.
 *
 * The engine (run/sim.c) moves requests and keeps the run's own books (the
 * measured window, outcomes counted, throughput, the saturation verdict,
 * the workload's facts).  Everything else a run reports is a *collector*: a row of hooks the
 * engine calls at the stops of a request's walk (arrival, leaving served, an
 * attempt ending unserved, the final outcome, a client's retry, an LLM step)
 * and of the run (the window opening and closing, the events over, the
 * results), over a state of `size` bytes that the engine allocates, zeroed,
 * for each run.  A family is one file (run/col_*.c) and one row in the table
 * (BUILTIN[] in run/collect.c); code outside the simulator (a test, a tool)
 * adds its own with run_collector_register() before it runs a scenario.
 *
 * Every hook but init is optional (NULL: nothing to do).  init may say the
 * family has nothing to collect in this run (COL_IDLE: no pools with several
 * out-edges, no [class] sections, no time series): then no other hook of it
 * is called but free, and the per-request paths pay nothing for it.  The
 * engine calls the per-request hooks of the active collectors in table order,
 * and emit after it has filled its own results (sim_result's counts, window,
 * pools' common rows, the workload's rows) and the emit of every collector before it in the
 * table: a later family may read what an earlier one wrote (the per-pool
 * latencies of a single pool are the system's).
 *
 * Hooks see the request read-only: a collector observes, it never changes
 * the run (no events, no outcomes).  Its order among the families does not
 * change a number.
 */
#ifndef LATSIM_COLLECT_H
#define LATSIM_COLLECT_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "engine/evq.h"
#include "engine/request.h"
#include "core/kind.h"
#include "core/station.h"
#include "core/result.h"
#include "run/breakdown.h"
#include "run/scenario.h"
#include "latsim/sim.h"

/* R's framework overhead in LLM steps (request.fw.ns), ns: at most its service
 * outside KV transfers and loads. */
static inline simtime_t leave_fw_ns(const request *r)
{
    simtime_t cap = r->service_ns - r->kv.xfer_ns - r->kv.load_ns;
    return r->fw.ns < cap ? r->fw.ns : cap > 0 ? cap : 0;
}

/* A per-request sanity check (DEBUG builds, or LATSIM_CHECK set): when CHECK is
 * on and COND fails, the run stops with the check named (not an assert: it
 * stays on in a build with NDEBUG). */
#define RUN_REQUIRE(check, cond) \
    do { if ((check) && !(cond)) { fprintf(stderr, "latsim: internal check failed: %s\n", #cond); abort(); } } while (0)

/* What a collector may know of the run (the engine's, read-only, alive for the
 * whole run: a collector may keep the pointer). */
typedef struct run_env {
    const scenario *sc;       /* the scenario (pools, classes, [slo], paths) */
    evq *q;                   /* the event calendar: evq_now() is the time of a hook's call */
    station *const *st;       /* the stations, one per pool, out-edges built */
    int nst;                  /* how many (= sc->npools) */
    tap_set *taps;            /* what stations record into for the collectors (core/tap.h): init may
                                 offer taps ("itl", "cls_itl"...), which the stations take when made */
    int ncls;                 /* [class] sections (0: none) */
    int check;                /* 1: per-request sanity checks on (RUN_REQUIRE) */
    int has_llm;              /* a kind needs token counts (KIND_TOKENS): ttft, tpot, overhead recorded */
    int has_gateway;          /* a kind adds network or overhead time (KIND_GATEWAY, or a pool's gateway keys) */
    int has_overhead;         /* has_llm or has_gateway: the overhead statistic is reported */
    int mirror;               /* one station of a KIND_SOLE_STATS kind: its queue and service
                                 statistics are the system's (not recorded twice) */
    pool_result *pools;       /* [nst] each pool's results: the engine's counters, verdicts and its
                                 kind's rows by the time of emit, which may add its pool latencies
                                 (the one thing of the engine's a collector writes); the engine turns
                                 them into rows after every emit (family "pool") */
} run_env;

/* A served request leaving the system, as its client saw it.  The statistics'
 * values (queue_ms ... network_ms) and the breakdown's components (c) are
 * filled for measured requests only; e2e_ms, ttft_ms and tpot_ms for all. */
typedef struct leave_rec {
    simtime_t now;            /* when it left its last station, ns */
    simtime_t first;          /* when its first token reached the client, ns; -1: it has none */
    double e2e_ms;            /* arrival to its answer's last byte at the client, ms */
    double ttft_ms;           /* arrival to its first token at the client, ms; NAN: none */
    double tpot_ms;           /* per output token after the first, ms; NAN: none (one token, a whole answer) */
    double queue_ms;          /* waiting, all stations, ms */
    double service_ms;        /* in service, less the LLM steps' framework overhead, ms */
    double overhead_ms;       /* protocol, gateways, caches, and that framework overhead, ms */
    double network_ms;        /* on network hops, both ways, ms */
    double c[BD_N];           /* the breakdown's components (BD_*), ms, summing to e2e_ms: service
                                 also less its KV transfer and load times, which are apart */
} leave_rec;

enum { COL_IDLE = 1 };        /* init's answer: nothing to collect in this run */

typedef struct run_collector {
    const char *name;         /* the family ("latency", "classes"...): one word, unique in the table */
    size_t size;              /* bytes of its state per run (allocated zeroed; 0: none, SELF is NULL) */
    /* Sets up SELF for a run in ENV, before the stations are built (env->st[]
     * is filled after; init may offer taps, env->taps (core/tap.h), which the
     * stations take when they are made).  Returns 0 (it collects), COL_IDLE
     * (nothing to collect: only free is called), or -1 with a message in ERR
     * (left empty: out of memory). */
    int (*init)(void *self, const run_env *env, char *err, size_t errlen);
    /* The stations are built and the first arrival is scheduled; no event has
     * run.  What runs with the clock starts here (a time series' interval
     * events).  Returns 0, or -1 with a message in ERR. */
    int (*start)(void *self, char *err, size_t errlen);
    /* Request R arrived (measured or not: r->measured; its attributes drawn), before it
     * enters its first station; not called for a client's retries (retry). */
    void (*arrive)(void *self, const request *r);
    /* Request R, served, leaves the system (measured or not): L is what its client saw.
     * Not called for an attempt its client had given up on (wasted). */
    void (*leave)(void *self, const request *r, const leave_rec *l);
    /* An attempt of R ended unserved with OUTCOME (rejected, timed out, failed), its
     * client waiting for it; the client may retry (then outcome is not called yet). */
    void (*error)(void *self, const request *r, req_outcome outcome);
    /* R's final outcome is OUTCOME, not served (measured or not).  Served requests: leave. */
    void (*outcome)(void *self, const request *r, req_outcome outcome);
    /* The client sends attempt R again (its retry), now. */
    void (*retry)(void *self, const request *r);
    /* Attempt R was served after its client had given up on it (served for
     * nothing: neither leave nor outcome is called for it). */
    void (*wasted)(void *self, const request *r);
    /* A forward step of replica REP of pool POOL began at START for DUR ns, with
     * PREFILL_TOKENS prompt tokens of PREFILL_SEQS sequences and DECODE_SEQS decoding. */
    void (*step)(void *self, int pool, int rep, simtime_t start, simtime_t dur, int64_t prefill_tokens,
                 int32_t prefill_seqs, int32_t decode_seqs);
    /* The measured window opens (at its first measured arrival) and closes (at the last
     * measured outcome; or when the run ends with it open). */
    void (*window_open)(void *self);
    void (*window_close)(void *self);
    /* The run's events are over (before the engine's own checks): finish what runs
     * with the clock (a time series' last interval) and move what OUT owns into it.
     * Returns 0, or -1 with a message in ERR. */
    int (*end)(void *self, sim_result *out, char *err, size_t errlen);
    /* 1 when an accumulator lost values (out of memory), else 0. */
    int (*lost)(const void *self);
    /* Its results into OUT (see the file comment for what OUT holds by then):
     * its rows into OUT->rows (sim_rows_add, sim_rows_add_latency: core/result.h;
     * the engine has set the rows' family to this row's name).  Returns 0, or
     * -1 with a message in ERR (left empty: out of memory). */
    int (*emit)(void *self, sim_result *out, char *err, size_t errlen);
    /* Frees what init allocated (SELF itself is the engine's); called whatever init
     * returned, also after a failed run. */
    void (*free)(void *self);
} run_collector;

/* ---- running them: the engine's side (run/sim.c) ---- */

/* One row of the table in a run. */
typedef struct col_run {
    const run_collector *c;   /* its row */
    void *self;               /* its state (c->size bytes, zeroed), or NULL */
    int active;               /* init said it collects in this run */
} col_run;

/* The collectors of one run: every row of the table, and the active ones with
 * each per-request hook (the engine calls those in a loop, table order). */
typedef struct col_set {
    col_run *col;             /* every row, in table order */
    int ncol;
    col_run **on_arrive, **on_leave, **on_error, **on_outcome, **on_retry, **on_wasted, **on_step;
    int narrive, nleave, nerror, noutcome, nretry, nwasted, nstep;
} col_set;

/* Sets up every row of the table for a run in ENV (collect.h's init: before
 * the stations are built).  Returns 0, or -1 with ERR; col_set_free either way. */
int col_set_init(col_set *cs, const run_env *env, char *err, size_t errlen);

/* Each active collector's start, end or emit hook (WHICH: COL_START, COL_END,
 * COL_EMIT), in table order.  Returns 0, or -1 with ERR at the first that fails. */
enum { COL_START, COL_END, COL_EMIT };
int col_set_call(col_set *cs, int which, sim_result *out, char *err, size_t errlen);

/* Each active collector's window_open (OPEN 1) or window_close (0) hook. */
void col_set_window(col_set *cs, int open);

/* 1 when an active collector's accumulators lost values (out of memory). */
int col_set_lost(const col_set *cs);

/* Every row's free hook, its state, and the lists. */
void col_set_free(col_set *cs);

/* The built-in families, in table order (run/col_*.c). */
extern const run_collector col_latency, col_cost, col_breakdown, col_itl, col_paths, col_cold, col_goodput, col_classes,
    col_tseries, col_trace, col_seednoise, col_over, col_client,
    col_energy;

/* Adds collector C after the built-in rows and those registered before it:
 * every later run calls it.  Returns 0 (registering the same row again does
 * nothing), or -1 when the name is taken, init is NULL or the table is full. */
int run_collector_register(const run_collector *c);

/* The collectors in table order: built-in rows first, then registered ones. */
int run_collector_count(void);
const run_collector *run_collector_at(int i);

#endif

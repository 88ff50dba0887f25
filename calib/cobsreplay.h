/* cobsreplay.h -- an observed run replayed through a scenario: the same
 * requests (their arrival times and token counts) simulated on the scenario's
 * server, the predicted statistics beside the observed ones.
 *
 * A request run becomes a finite trace replay (docs/workloads.md, "Finite workloads"):
 * the scenario's [sim] and [workload] sections are replaced by ones that replay
 * every observed request once, from a temporary CSV trace, so that every
 * request is measured to its end and a burst the server survived is reported,
 * not refused as saturated.  A sweep is one simulation per level: a closed loop
 * of `concurrency` users without think time, or Poisson arrivals at `rate`,
 * every request with the level's token counts.  The rest of the scenario
 * (pools, catalog sections, SLOs) is kept as written.
 */
#ifndef LATSIM_COBSREPLAY_H
#define LATSIM_COBSREPLAY_H

#include <stdint.h>
#include <sqlite3.h>

#include "cobsdb.h"
#include "cobserved.h"
#include "latsim/band.h"
#include "latsim/scenario.h"
#include "latsim/catalog.h"
#include "latsim/stats.h"

/* The index of LLM pool NAME of SC (NULL: its first LLM pool) into *INDEX.
 * Returns 0, or -1 with ERR ("S.ini: no LLM pool (kind = llm) ...", "--pool P: ..."). */
int cobs_find_pool(const scenario *sc, const char *name, int *index, char *err, size_t errlen);

/* Checks that a request run RUN (not a sweep) can be replayed through SC,
 * before it is stored or replayed: at least 2 requests, arrivals that span some
 * time (a burst at one instant, such as vLLM's request_rate inf without start
 * times, gives no load to replay), and, when SC has [class NAME] sections,
 * every request labelled with one of them.  FIT 1 also refuses a TTFT of 0 (a
 * first token needs a prefill; its relative error cannot be fitted).  Returns
 * 0, or 2 with ERR naming RUN's file and the request's line. */
int cobs_check_replayable(const cobs_run *run, const scenario *sc, int fit, char *err, size_t errlen);

/* Describes pool INDEX of SC (resolved: scenario_resolve) into SRV. */
void cobs_describe(const scenario *sc, int index, cobs_server *srv);

/* The prediction for one sweep level. */
typedef struct cobs_level_pred {
    double ttft_ms, itl_ms, tpot_ms, e2e_ms;  /* predicted means, ms (NAN when saturated) */
    double ttft_p99_ms;       /* predicted P99 of TTFT, ms (NAN when saturated) */
    double output_tps;        /* predicted output tokens/s */
    int saturated;            /* open loop: the simulated server could not keep up */
    uint64_t requests;        /* requests simulated (measured) */
} cobs_level_pred;

/* A replay's result. */
typedef struct cobs_replay {
    size_t nreq;              /* observed requests replayed */
    cobs_stats obs[COBS_NMETRICS];     /* observed statistics (n 0: not observed) */
    double *obs_sorted[COBS_NMETRICS]; /* the observed values, sorted (owned; for CDFs) */
    stat_summary pred[COBS_NMETRICS];  /* predicted statistics (sim_result) */
    int have_pred[COBS_NMETRICS];      /* 1 when the simulation measured the metric */
    double obs_rps, obs_tps;  /* observed requests/s and output tokens/s (cobs_throughput) */
    double pred_rps, pred_tps;/* predicted, over the simulated window */
    double obs_window_s;      /* observed window: first arrival to last end, s */
    double pred_window_s;     /* predicted window, s */
    uint64_t served;          /* requests the simulation served */
    uint64_t rejected;        /* requests it rejected, timed out or lost */
    int backlog_grew;         /* the simulated backlog grew (finite replay) */
    uint64_t peak_queue;      /* most requests waiting in the simulation */
    double peak_queue_at_s;   /* when it was first reached, simulated s */
    uint64_t events;          /* events simulated, all simulations together */
    double wall_s;            /* wall-clock time of the simulations, s */
    char note[512];           /* what the replay left out (classes), "" for nothing */
    char cost[256];           /* the cost model of each LLM pool the simulation used, "POOL KIND (source[,
                                 id N])" joined by "; ", "" for none */
    int nband;                /* LLM pools simulated (0: no step-time band) */
    band_model band;          /* the widest step-time band of their cost models (latsim/band.h) */
    cobs_level_pred *lv;      /* per sweep level (owned), NULL for a request run */
    size_t nlv;
} cobs_replay;

/* Replays RUN through SC (loaded from its file, not resolved), entering pool
 * POOL (NULL: the scenario's workload target), the catalog and calibrations
 * read from DB.  Returns 0; 2 for bad input (the scenario cannot replay it:
 * ERR one line); 1 for a runtime failure (memory, a temporary file).  OUT must be cobs_replay_free()d either way. */
int cobs_replay_run(const cobs_run *run, const scenario *sc, const char *pool, sqlite3 *db, cobs_replay *out,
                    char *err, size_t errlen);

void cobs_replay_free(cobs_replay *r);

/* The observed side of OUT (initialised) from RUN's requests: what
 * cobs_replay_run fills before it simulates.  Returns 0, or 1 when out of memory. */
int cobs_replay_observed(const cobs_run *run, cobs_replay *out, char *err, size_t errlen);

/* A run prepared for repeated replays (the observed-run fit, cobsfit.h): the
 * replay scenario of cobs_replay_run (one per level for a sweep) written,
 * loaded and resolved once, with the replayed pool's cost model made the
 * roofline, so that the caller can replace it (cobs_prep_cost) between
 * simulations.  A sweep level simulates 20 requests per user (400 open loop),
 * within 200..COBS_PREP_LEVEL_MAX, fewer than cobs_replay_run's. */
#define COBS_PREP_LEVEL_MAX 1000
typedef struct cobs_prep cobs_prep;
struct cost_model;

/* Prepares RUN (its requests, or its levels) through SC as cobs_replay_run would.
 * Returns 0 with *OUT (cobs_prep_close it), 2 for bad input, 1 for a runtime
 * failure (ERR one line). */
int cobs_prep_open(const cobs_run *run, const scenario *sc, const char *pool, sqlite3 *db, cobs_prep **out,
                   char *err, size_t errlen);

/* Scenarios P simulates: 1 for a request run, the levels for a sweep. */
size_t cobs_prep_count(const cobs_prep *p);

/* The replayed pool's cost model in scenario I < cobs_prep_count (owned by P;
 * its hardware resolved). */
struct cost_model *cobs_prep_cost(cobs_prep *p, size_t i);

/* The replayed pool's model geometry (owned by P), its TP into *TP and weight
 * precision into *WEIGHTS. */
const model_spec *cobs_prep_model(const cobs_prep *p, int *tp, const char **weights);

/* Simulates P once into the predicted side of OUT (a sweep: OUT's levels,
 * allocated on the first call; the observed side is left as it is).  Returns 0, or 1 (ERR). */
int cobs_prep_sim(cobs_prep *p, cobs_replay *out, char *err, size_t errlen);

void cobs_prep_close(cobs_prep *p);

#endif

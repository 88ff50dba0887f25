/* scenario.h -- what a scenario file means: typed, validated configuration.
 *
 * scenario_build() turns the raw sections and keys of config.h into the typed
 * structs below, checking every key against the schema (unknown keys get the
 * closest valid one suggested) and every value against its range.
 * scenario_resolve() then looks GPUs and models up in the catalog and derives
 * what follows from them (KV-cache capacity, the cost model).  Every error is one
 * line naming the file, line, section and key.
 */
#ifndef LATSIM_SCENARIO_H
#define LATSIM_SCENARIO_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>
#include "core/catalog.h"
#include "core/config.h"
#include "core/poolcfg.h"
#include "core/dist.h"
#include "workload/trace.h"
#include "core/retry.h"
#include "core/slocfg.h"
#include "workload/workload.h"   /* workload_cfg, wl_class, wl_rate */
#include "core/scn.h"

typedef struct scenario {
    cfg raw;                  /* the file and overrides, as parsed */
    uint64_t requests;        /* measured requests after warm-up */
    uint64_t warmup;          /* requests discarded before measuring (automatic: at least these) */
    int warmup_auto;          /* 1: no `warmup` key: the run chooses it (warmup.h) */
    int finite;               /* 1: a finite workload: arrival = trace, loop = no, warmup + requests >= the
                                 trace's rows; every row is replayed, no saturation verdict (README) */
    uint64_t seed;            /* run seed */
    workload_cfg wl;
    pool_cfg *pools;
    int npools;
    gpu_spec *gpus;           /* [gpu NAME] sections: catalog additions */
    int ngpus;
    model_spec *models;       /* [model NAME] sections: catalog additions */
    int nmodels;
    slo_spec slo;             /* [slo] sections (slo.h) */
    double ts_interval_s;     /* time-series interval, s (`run --interval`); 0 = no time series */
    int has_client;           /* a [client] section: client timeouts and retries */
    retry_cfg client;         /* its settings (retry.h) */
} scenario;

/* Reads PATH, applies the NSETS overrides "section.key=value", and validates.
 * Returns 0, or -1 with a one-line message in ERR.  S must be scenario_free()d
 * either way. */
int scenario_load(scenario *s, const char *path, const char *const *sets, int nsets,
                  char *err, size_t errlen);

/* The same from scenario TEXT; NAME stands for the file in messages and
 * relative paths resolve against NAME's directory. */
int scenario_load_text(scenario *s, const char *name, const char *text, const char *const *sets, int nsets,
                       char *err, size_t errlen);

/* Looks GPUs and models up (the scenario's own [gpu]/[model] sections first,
 * then the catalog in DB) and derives KV capacity and cost models.
 * Returns 0 or -1 + ERR. */
int scenario_resolve(scenario *s, sqlite3 *db, char *err, size_t errlen);

void scenario_free(scenario *s);

/* Prints every section and key the scenario format accepts, with defaults and
 * help: a list (`latsim keys`), or with MARKDOWN 1 a page of Markdown tables
 * (`latsim keys --markdown`, docs/scenarios.md). */
void scenario_print_keys(FILE *out, int markdown);

/* Mean arrival rate of the workload in requests per second (traces: rows / span
 * times speedup; schedules: the long-run rate); NAN for closed-loop users. */
double scenario_arrival_rate(const scenario *s);

/* The run's expected simulated time, s: the arrivals it needs (warm-up and
 * measured requests) at the mean rate, or the time of the trace's last row it
 * needs; for closed-loop users a lower bound (their think times); 0 when
 * unknown.  An estimate made before the run (a saturated run lasts longer). */
double scenario_expected_duration_s(const scenario *s);

#define SCENARIO_MAX_PERIODIC_EVENTS SCN_MAX_PERIODIC_EVENTS   /* core/scn.h */

/* Memory the scenario's fixed state needs (pools, replicas, histograms), bytes:
 * an estimate, before any request is simulated. */
double scenario_footprint(const scenario *s);

/* Checks that the scenario's fixed state fits in BUDGET bytes.  Returns 0, or -1
 * with "FILE:LINE: [pool NAME] replicas: ..." naming the key that asks the most. */
int scenario_check_memory(const scenario *s, double budget, char *err, size_t errlen);

/* Memory this process may use, bytes: the physical memory, or less when an
 * address-space or data limit (setrlimit) is set. */
double scenario_memory_budget(void);

#endif

/* scenario.h -- what a scenario file means: typed, validated configuration.
 *
 * scenario_build() turns the raw sections and keys of config.h into the typed
 * structs below, checking every key against the schema (unknown keys get the
 * closest valid one suggested) and every value against its range.
 * scenario_resolve() then looks GPUs and models up in the catalog and derives
 * what follows from them (KV-cache capacity, the cost model).  Every error is one
 * line naming the file, line, section and key.  Those calls and the accessors
 * are public (latsim/scenario.h), where the struct is opaque; its definition
 * is here, for the library.
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
#include "latsim/scenario.h"   /* scenario (opaque there), loading, resolving, accessors: public */

struct scenario {
    cfg raw;                  /* the file and overrides, as parsed */
    uint64_t requests;        /* measured requests after warm-up */
    uint64_t warmup;          /* requests discarded before measuring (automatic: at least these) */
    int warmup_auto;          /* 1: no `warmup` key: the run chooses it (warmup.h) */
    int finite;               /* 1: a finite workload: arrival = trace, loop = no, warmup + requests >= the
                                 trace's rows; every row is replayed, no saturation verdict (docs/workloads.md, "Finite workloads") */
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
    int metrics;              /* 1: each run records its OpenMetrics series (`run --metrics`; needs ts_interval_s) */
    int batch_means;          /* 1: each run measures its own seed noise by batch means (`run --band`, one replication) */
    const char *trace_path;   /* `run --trace-events OUT.json` (not owned), NULL: no trace */
    uint64_t trace_requests;  /* `run --trace-requests N`: requests traced */
    int has_client;           /* a [client] section: client timeouts and retries */
    retry_cfg client;         /* its settings (retry.h) */
    char cost_db[1024];       /* [sim] cost_db as a path ("" none: the catalog's database) */
    double electricity_usd_per_kwh; /* [sim] price of electricity, $ per kWh (0: not counted) */
    double pue;               /* [sim] power usage effectiveness: facility energy / GPU energy, >= 1 */
};

#define SCENARIO_MAX_PERIODIC_EVENTS SCN_MAX_PERIODIC_EVENTS   /* core/scn.h */

#endif

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
#include "llm/cost.h"
#include "core/dist.h"
#include "workload/trace.h"
#include "core/retry.h"
#include "report/slo.h"
#include "workload/workload.h"   /* workload_cfg, wl_class, wl_rate */

typedef struct llm_sched llm_sched;   /* a row of the scheduler table (llm.h) */

typedef struct llm_cfg {
    char model_name[48];      /* catalog key */
    char gpu_name[48];        /* catalog key */
    model_spec model;         /* resolved by scenario_resolve() */
    gpu_spec gpu;             /* resolved by scenario_resolve() */
    int tp;                   /* GPUs per replica (tensor parallel) */
    int replicas;             /* replicas in the pool */
    const llm_sched *sched;   /* the scheduler: its row in llm.c's table */
    int max_batch;            /* max sequences in a batch */
    int64_t max_batch_tokens; /* max tokens per forward step (continuous, chunked) */
    int64_t chunk_tokens;     /* chunked: token budget per step */
    double max_wait_ms;       /* dynamic: longest wait to fill a batch, ms */
    char weights[8];          /* bf16 | fp16 | fp8 | int8 | int4 */
    int weights_given;        /* 1 when the pool set weights (else the model's precision) */
    char kv_dtype[8];         /* bf16 | fp8 */
    double mem_util;          /* share of GPU memory the server may use, (0,1] */
    double activation_gib;    /* per-GPU memory kept for activations, GiB */
    int64_t kv_blocks;        /* KV blocks per replica (given or derived) */
    int kv_blocks_given;      /* 1 when the scenario set kv_blocks */
    int block_tokens;         /* tokens per KV block (16) */
    int64_t max_seq_len;      /* prompt + output cap per request, tokens */
    int max_seq_len_given;    /* 1 when the scenario set max_seq_len */
    int truncate;             /* 1: cut prompts to fit max_seq_len; 0: reject such requests */
    double request_overhead_ms; /* front-end work per request before it queues, ms */
    const struct route_policy *routing;  /* NULL: one shared queue; else the policy that
                                            sends each request to a replica's own queue */
    cost_model cost;          /* step-time model */
    int prefix_cache;         /* 1: replicas keep finished prompts' KV blocks for later hits (prefix.h) */
    int prefix_id_tokens;     /* prompt tokens per content id (the workload's hash_block_tokens) */
    double affinity_threshold;/* routing = prefix_affinity: least share of the prompt's content ids a
                                 replica's cached prefix must cover to count (0..1) */
} llm_cfg;

struct station_kind;

typedef struct pool_cfg {
    char name[64];            /* the NAME of [pool NAME] */
    int line;                 /* line of its header */
    const struct station_kind *kind;   /* its row in the kind table (kind.h) */
    int servers;              /* generic: parallel servers */
    dist service;             /* generic: service time, ms */
    double usd_per_hour;      /* generic: $ per server-hour (0 = free) */
    double error_rate;        /* generic: probability a service ends in an error (5xx), [0, 1] */
    uint64_t queue_limit;     /* 0 = unbounded; else arrivals finding this many waiting are rejected */
    double timeout_ms;        /* 0 = none; else requests waiting longer are dropped, ms */
    int *next;                /* out-edges: pool indices of the `next` list, in order */
    int nnext;                /* their number; 0: served requests leave the system */
    llm_cfg llm;              /* kind = llm only */
    void *ext;                /* configuration of kinds not listed above, owned by the kind (free_cfg) */
    struct fleet_cfg *fleet;  /* failures, autoscaling, cold starts (fleetcfg.h); NULL: none configured */
    int gateway;              /* 1: this pool adds network or overhead time (set by its kind's parse;
                                 kinds flagged KIND_GATEWAY always do) */
} pool_cfg;

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

/* Most self-renewing events (a unit's failures or pauses, a pool's autoscaler
 * evaluations, a gateway's pauses) one key may expect over the run's expected
 * simulated time: each is an event, so 10^8 of them are some 10 s of the
 * engine (about 10^7 events/s) and more is refused at load, naming the key. */
#define SCENARIO_MAX_PERIODIC_EVENTS 1e8

/* ---- for station kinds: reading their keys (kind.h) -----------------------
 * Each getter reads KEY of section SEC (DEF when absent) and returns 0, or -1
 * with the one-line error "FILE:LINE: [SEC] KEY: what is wrong" set. */
typedef struct scn_ctx scn_ctx;

typedef struct scn_key {
    const char *key;          /* NULL ends a table */
    const char *def;          /* default, as text ("" = required or derived) */
    const char *help;
} scn_key;

int scn_i64(scn_ctx *x, const char *sec, const char *key, int64_t def, int64_t lo, int64_t hi, int64_t *out);
int scn_int(scn_ctx *x, const char *sec, const char *key, int def, int lo, int hi, int *out);
/* LO_OPEN: must be > lo, else >= lo; and <= HI. */
int scn_num(scn_ctx *x, const char *sec, const char *key, double def, double lo, int lo_open, double hi, double *out);
int scn_bool(scn_ctx *x, const char *sec, const char *key, int def, int *out);
/* One of the '|'-separated CHOICES (case-insensitive); its index in *OUT. */
int scn_enum(scn_ctx *x, const char *sec, const char *key, const char *choices, int def, int *out);
int scn_str(scn_ctx *x, const char *sec, const char *key, const char *def, char *out, size_t n);
/* A distribution; DEF NULL: the key is required. */
int scn_dist(scn_ctx *x, const char *sec, const char *key, const char *def, dist *out);
/* The raw value of KEY, or NULL when absent. */
const char *scn_value(scn_ctx *x, const char *sec, const char *key);
/* Sets the error for KEY at KEY's line when the key is present, else at SEC's
 * header (KEY NULL: about the section itself).  Returns -1. */
int scn_fail(scn_ctx *x, const char *sec, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same, always at SEC's header (a key that is missing or wrong in combination). */
int scn_fail_sec(scn_ctx *x, const char *sec, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The scenario being built (its workload is built before any resolve hook runs). */
const scenario *scn_scenario(const scn_ctx *x);


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

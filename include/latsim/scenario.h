/* latsim/scenario.h -- what a scenario file means (public): loading,
 * validating and resolving one, and reading what a front end needs of it.
 *
 * scenario_load() reads the file's sections and keys, applies the --set
 * overrides and checks every key against the schema (unknown keys get the
 * closest valid one suggested) and every value against its range;
 * scenario_resolve() then looks GPUs and models up in the catalog and derives
 * what follows from them (KV-cache capacity, the cost model).  Every error is
 * one line naming the file, line, section and key.  The scenario is opaque:
 * make one with scenario_new(), read it with the accessors below, run it with
 * sim_run() (latsim/sim.h).
 */
#ifndef LATSIM_PUBLIC_SCENARIO_H
#define LATSIM_PUBLIC_SCENARIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>
#include "latsim/catalog.h"   /* gpu_spec, model_spec */
#include "latsim/slo.h"       /* slo_spec */

typedef struct scenario scenario;

/* An empty scenario, for scenario_load (NULL when out of memory). */
scenario *scenario_new(void);

/* Frees what S holds (scenario_free) and S itself; NULL does nothing. */
void scenario_delete(scenario *s);

/* Reads PATH, applies the NSETS overrides "section.key=value", and validates.
 * Returns 0, or -1 with a one-line message in ERR.  S must be empty (new from
 * scenario_new, or scenario_free()d), and scenario_free()d either way. */
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

/* Frees what S holds and leaves it empty (S itself stays the caller's:
 * scenario_delete frees both). */
void scenario_free(scenario *s);

/* Prints every section and key the scenario format accepts, with defaults and
 * help: a list (`latsim keys`), or with MARKDOWN 1 a page of Markdown tables
 * (`latsim keys --markdown`, docs/scenarios.md). */
void scenario_print_keys(FILE *out, int markdown);

/* Mean arrival rate of the workload in requests per second (traces: rows / span
 * times speedup; schedules: the long-run rate); NAN for closed-loop users. */
double scenario_arrival_rate(const scenario *s);

/* arrival = trace: the busiest LEN_S seconds of the trace as loaded (its own
 * clock, before speedup): the window's start (*FROM_S), rows (*ROWS) and the
 * trace's span, first to last row (*SPAN_S).  Returns 0, or -1 when S replays
 * no trace. */
int scenario_trace_peak(const scenario *s, double len_s, double *from_s, size_t *rows, double *span_s);

/* The run's expected simulated time, s: the arrivals it needs (warm-up and
 * measured requests) at the mean rate, or the time of the trace's last row it
 * needs; for closed-loop users a lower bound (their think times); 0 when
 * unknown.  An estimate made before the run (a saturated run lasts longer). */
double scenario_expected_duration_s(const scenario *s);

/* Memory the scenario's fixed state needs (pools, replicas, histograms), bytes:
 * an estimate, before any request is simulated. */
double scenario_footprint(const scenario *s);

/* Checks that the scenario's fixed state fits in BUDGET bytes.  Returns 0, or -1
 * with "FILE:LINE: [pool NAME] replicas: ..." naming the key that asks the most. */
int scenario_check_memory(const scenario *s, double budget, char *err, size_t errlen);

/* Memory this process may use, bytes: the physical memory, or less when an
 * address-space or data limit (setrlimit) is set. */
double scenario_memory_budget(void);

/* ---- accessors ---------------------------------------------------------------- */

/* The run seed ([sim] seed, else 1), and setting it (`run --seed`). */
/* The scenario file's path (as given) and its text as read (before --set). */
const char *scenario_file_path(const scenario *s);
const char *scenario_file_text(const scenario *s);

uint64_t scenario_seed(const scenario *s);
void scenario_set_seed(scenario *s, uint64_t seed);

/* Requests discarded before measuring ([sim] warmup; automatic: at least these). */
uint64_t scenario_warmup(const scenario *s);

/* The time-series interval, s (0: no time series), and setting it (`run
 * --interval`; latsim/tseries.h). */
double scenario_ts_interval(const scenario *s);
void scenario_set_ts_interval(scenario *s, double seconds);
/* `run --metrics`: each run records its metrics in the OpenMetrics form
 * (sim_result.omx, latsim/omx.h), scraped at the time series' interval ends
 * (a time-series interval must be set too). */
void scenario_set_metrics(scenario *s, int on);
/* ON: each run measures its own seed noise by batch means (its seed_noise.* rows: latsim/sim.h, docs/bands.md). */
void scenario_set_batch_means(scenario *s, int on);

/* `run --trace-events PATH --trace-requests N`: the next sim_run writes a
 * Chrome/Perfetto trace of its first N requests to PATH (kept, not copied;
 * NULL: none).  docs/metrics.md, "Trace events". */
void scenario_set_trace_events(scenario *s, const char *path, uint64_t nreq);

/* `run --verbose`: prints to OUT, one line each, the settings whose neighbouring
 * values change answers (warm-up, a trace's hash_block_tokens, each LLM pool's
 * block_tokens, scheduler, chunk_tokens, max_batch, max_batch_tokens), with
 * their values and whether the scenario set them or they are defaults. */
void scenario_print_defaults(const scenario *s, FILE *out);

/* The [slo] sections as parsed (no terms when there are none). */
const slo_spec *scenario_slo(const scenario *s);

/* Moves S's [slo] into OUT (slo_free it), leaving S with no terms. */
void scenario_take_slo(scenario *s, slo_spec *out);

/* How requests arrive: at a fixed rate (poisson, gamma, constant), at a rate
 * that changes over time (schedule, ramp, diurnal), from a trace, or from
 * closed-loop users. */
typedef enum {
    SCENARIO_ARRIVAL_RATE,
    SCENARIO_ARRIVAL_SCHEDULE,
    SCENARIO_ARRIVAL_TRACE,
    SCENARIO_ARRIVAL_USERS,
} scenario_arrival;
scenario_arrival scenario_arrival_kind(const scenario *s);

/* [workload] rate: requests/s (fixed, or a schedule's long-run mean). */
double scenario_rate(const scenario *s);

/* [workload] speedup: a trace's arrival-rate multiplier. */
double scenario_speedup(const scenario *s);

/* Closed-loop users (0: an open loop). */
int scenario_users(const scenario *s);

/* The pools ([pool NAME] sections), 0 .. scenario_npools - 1 in file order:
 * NAME, the line of its header, its kind (the `kind =` value: "generic",
 * "llm", "router"...), its servers (generic pools; 0 for other kinds). */
int scenario_npools(const scenario *s);
const char *scenario_pool_name(const scenario *s, int i);
int scenario_pool_line(const scenario *s, int i);
const char *scenario_pool_kind(const scenario *s, int i);
int scenario_pool_servers(const scenario *s, int i);

/* 1 when pool I's kind takes KEY (its own keys or its rows' keys: an LLM pool
 * takes step_time_scale, tp and role), else 0: what a front end asks instead of
 * naming a kind. */
int scenario_pool_takes(const scenario *s, int i, const char *key);

/* The replicas whose series `run --metrics` writes (an LLM pool's, per
 * replica; an autoscaled pool's max_replicas): at most this many over all
 * pools, for omx_check. */
int scenario_metric_replicas(const scenario *s);

/* The value of KEY in pool I's section as written (the file or a --set), or
 * NULL when absent: e.g. an LLM pool's `role`. */
const char *scenario_pool_value(const scenario *s, int i, const char *key);

/* The value of KEY of [sim] as written (the file or a --set), or NULL when
 * absent: e.g. the design's `title` and `description` (a review's). */
const char *scenario_sim_value(const scenario *s, const char *key);

/* The service time of pool I when its kind has one over its servers (a
 * generic pool): 0 with its mean (ms) and coefficient of variation, else -1. */
int scenario_pool_service(const scenario *s, int i, double *mean_ms, double *cv);

/* 1 when every request of the workload passes through pool I with nothing
 * before it that may thin the flow (queue_limit, timeout_ms, a fleet, a kind
 * without a service time over its servers, a split over several next pools,
 * client retries, a class entering elsewhere): its inflow is then the
 * workload's arrival rate.  Else 0. */
int scenario_pool_whole_inflow(const scenario *s, int i);

/* 1 when the scenario's file (with its overrides) has a section [NAME], else 0. */
int scenario_has_section(const scenario *s, const char *name);

/* 1 when scenario file PATH, read as written (not validated), has a section
 * [SECTION], 0 when not; -1 + ERR when it cannot be read or parsed. */
int scenario_file_has_section(const char *path, const char *section, char *err, size_t errlen);

/* The catalog additions of the file ([gpu NAME], [model NAME] sections), *N
 * of them (owned by S). */
const gpu_spec *scenario_gpus(const scenario *s, int *n);
const model_spec *scenario_models(const scenario *s, int *n);

#endif

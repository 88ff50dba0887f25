/* tsim.h -- helpers for tests that simulate a scenario in-process: load and
 * resolve a scenario text against a catalog database (a fresh in-memory one
 * or the test's own file), ask what error it gives, or run a text or a
 * scenario file and fail the test on any error; and read a result's family
 * rows (the classes' and routes' results, latencies' summaries, breakdowns). */
#ifndef LATSIM_TSIM_H
#define LATSIM_TSIM_H

#include <stddef.h>
#include <stdint.h>
#include "run/scenario.h"
#include "run/sim.h"
#include "core/catalog.h"

/* Loads TEXT (reported as the file PATH) into SC and resolves it against the
 * database file DB (":memory:": a fresh one holding the built-in catalog).
 * Returns 0, or -1 with the message in ERR (SC freed). */
int tsim_load_resolve_db(const char *path, const char *text, const char *db, scenario *sc, char *err,
                         size_t errlen);

/* tsim_load_resolve_db against a fresh in-memory catalog.  Returns 0, or -1
 * with the message in ERR (SC freed). */
int tsim_load_resolve(const char *path, const char *text, scenario *sc, char *err, size_t errlen);

/* Loads and resolves TEXT (as PATH) against a fresh in-memory catalog and
 * frees it.  Returns 0 with ERR "" when it loads and resolves, or -1 with the
 * message it is refused with in ERR. */
int tsim_load_error(const char *path, const char *text, char *err, size_t errlen);

/* Loads TEXT (as PATH), resolves it against the database file DB, simulates
 * it with SEED into RES; any error fails the test (the message and the text
 * are shown), as does a result whose pools are not the scenario's. */
void tsim_run_db(const char *path, const char *text, const char *db, uint64_t seed, sim_result *res);

/* tsim_run_db against a fresh in-memory catalog. */
void tsim_run(const char *path, const char *text, uint64_t seed, sim_result *res);

/* Loads the scenario file FILE with the NSETS --set overrides SETS, resolves
 * it against a fresh in-memory catalog and simulates it with SEED into RES;
 * any error fails the test. */
void tsim_run_file(const char *file, const char *const *sets, int nsets, uint64_t seed, sim_result *res);

/* The system's breakdown row "SET.C" of RES (col_breakdown.c; docs/metrics.md):
 * SET "breakdown.all" or "breakdown.p99" with C the E2E component K's name
 * (bd_name, BD_*), or "ttft_breakdown.all", "ttft_breakdown.p99" or
 * "ttft_breakdown.mean_ms" with C the TTFT component K's (tb_name, TB_*).
 * tsim_bd_row returns the row, NULL when RES does not report it (kv_transfer
 * and kv_load without KV time, connect without connections, TTFT without an LLM
 * pool); tsim_bd its value, NAN then. */
const sim_row *tsim_bd_row(const sim_result *res, const char *set, int k);
double tsim_bd(const sim_result *res, const char *set, int k);

/* GPU and MODEL of the built-in catalog into G and M; an unknown name fails the test. */
void tsim_catalog(const char *gpu, const char *model, gpu_spec *g, model_spec *m);

/* The number of [class] sections of RES (the classes family's "requests" rows). */
int tsim_nclasses(const sim_result *res);

/* The name of class I of RES (0-based, in section order); a missing one fails the test. */
const char *tsim_class_name(const sim_result *res, int i);

/* Row METRIC (stat "value") of class NAME of RES (scope "class:NAME"), NAN when absent. */
double tsim_class(const sim_result *res, const char *name, const char *metric);

/* The summary of latency METRIC in SCOPE of RES (its "mean" row's dist), zeroed
 * (n 0) when it had no sample; a missing row fails the test. */
stat_summary tsim_latency(const sim_result *res, const char *scope, const char *metric);

/* The summary of the system's latency METRIC of RES (scope "": "e2e",
 * "queue", "service", "network", "overhead", "ttft", "tpot", "itl";
 * col_latency.c, col_itl.c): its "mean" row's dist, alive as long as RES, or a
 * zeroed summary (n 0) when it had no sample; a missing row fails the test.
 * E.g. tsim_sys(&res, "e2e")->p99. */
const stat_summary *tsim_sys(const sim_result *res, const char *metric);

/* The system's count METRIC of RES (scope "", stat "value": "requests",
 * "served", "rejected", "timed_out", "failed", "abandoned", "departures"...;
 * sim.c's rows of family "run"); a missing row fails the test.
 * E.g. tsim_n(&res, "served") == 1000. */
uint64_t tsim_n(const sim_result *res, const char *metric);

/* The system's number METRIC of RES (scope "", stat "value", e.g.
 * "throughput_rps", "window_s"); a missing row fails the test. */
double tsim_v(const sim_result *res, const char *metric);

/* A pool of a result as a test holds it: the result and the pool's name (the
 * scope of its rows). */
typedef struct tsim_pr {
    const sim_result *res;    /* the result */
    const char *name;         /* the pool's name (owned by RES), NULL: none */
} tsim_pr;

/* Pool I (0-based, in the scenario's order) or pool NAME of RES; a missing one fails the test. */
tsim_pr tsim_pool_at(const sim_result *res, int i);
tsim_pr tsim_pool_named(const sim_result *res, const char *name);

/* The number of pools of RES. */
int tsim_npools(const sim_result *res);

/* Row METRIC (stat "value") of pool P (as tsim_pv), NAN when absent. */
double tsim_prv(tsim_pr p, const char *metric);

/* The summary of pool P's latency METRIC (as tsim_pl); a missing row fails the test. */
const stat_summary *tsim_prl(tsim_pr p, const char *metric);

/* The name row METRIC of pool P (as tsim_ptext), NULL when absent. */
const char *tsim_prt(tsim_pr p, const char *metric);

/* 1 when pool P reports latency METRIC (e.g. "ttft": it emits tokens). */
int tsim_has_prl(tsim_pr p, const char *metric);

/* The name of pool I of RES (sim_result_pool); a missing one fails the test. */
const char *tsim_pool(const sim_result *res, int i);

/* Row METRIC (stat "value") of pool I of RES: its counters ("arrivals",
 * "served", "rejected", "timed_out"), "busy_share", "saturated",
 * "load_saturated", "offered_load", and its kind's own rows (e.g. an LLM
 * pool's "steps"); NAN when absent; a missing pool fails the test.
 * E.g. tsim_pv(&res, 0, "served") == 1000. */
double tsim_pv(const sim_result *res, int i, const char *metric);

/* The name row METRIC of pool I of RES (e.g. "kind", "role"), NULL when
 * absent (or a number); a missing pool fails the test. */
const char *tsim_ptext(const sim_result *res, int i, const char *metric);

/* The summary of pool I's latency METRIC of RES ("queue", "service", "e2e",
 * "ttft", "tpot", "itl"): its "mean" row's dist, alive as long as RES, or a
 * zeroed summary (n 0) when it had no sample; a missing row fails the test.
 * E.g. tsim_pl(&res, 0, "queue")->mean. */
const stat_summary *tsim_pl(const sim_result *res, int i, const char *metric);

/* 1 when pool I of RES reports latency METRIC (e.g. "ttft": it emits tokens). */
int tsim_has_pl(const sim_result *res, int i, const char *metric);

/* 1 when the run RES is saturated (its row "saturated"; a missing row fails the test). */
int tsim_sat(const sim_result *res);

/* tsim_latency of class NAME (scope "class:NAME"). */
stat_summary tsim_class_latency(const sim_result *res, const char *name, const char *metric);

#endif

/* reptables.h -- the tables of the design review page (latsim report --html):
 * the headline with each design's difference from the first, SLO verdicts,
 * goodput, quality, time shares, pools, operators, routes, classes and the plan
 * of a run. */
#ifndef LATSIM_CLI_REPTABLES_H
#define LATSIM_CLI_REPTABLES_H

#include <stdint.h>
#include <stdio.h>
#include "design.h"

void rt_legend(FILE *out);

void rt_headline(FILE *out, const design *d, int n);

/* Design D's goodput when a plan or a sweep simulated it (design_goodput) as a
 * table row, or nothing. */
void rt_goodput_row(FILE *out, const design *d, const char *dbpath);

/* Each design's SLO verdict per term: limit, value, margin, met; with --band
 * the same at the pessimistic end of its prediction band.  Nothing when no
 * design has an [slo].  Returns -1 when out of memory. */
int rt_slo_verdicts(FILE *out, const design *d, int n, const char *dbpath);

/* The gateway and cache quality of the designs (design_quality), each against A. */
void rt_quality(FILE *out, const design *d, int n);

/* The shares of each "PREFIX.SET.COMPONENT" row group (breakdown, ttft_breakdown) as bars stacked to 100 %. */
void rt_shares(FILE *out, const design *d, int n, const char *prefix, const char *of);

int rt_is_class(const char *s);

int rt_is_route(const char *s);

void rt_pools(FILE *out, const design *d);

/* Design D's step time by operator: one small table per pool that reports it
 * (docs/llm.md, "Time by operator"), the operators in report order with
 * their share in % and, for an LLM pool, the time they took over the window
 * (op_step_ms x share).  Returns the tables written. */
int rt_op_shares(FILE *out, const design *d);

/* Design D's rt_routes (the out-edges of a router; docs/metrics.md, "Per pool and
 * per route latencies"): router, target, served, E2E/TTFT/TPOT p50/p99.
 * Nothing when it has none. */
void rt_routes(FILE *out, const design *d);

/* Design D's request rt_classes ([class NAME]; compare's class sections):
 * requests, served, refused, failed and abandoned, goodput, the result
 * cache's hit rate and false hits of the class's lookups (where its requests
 * pass one), the prefix caches' hit rate of its prompt tokens (where they reach
 * an LLM pool with one), $ per 1k requests and the latency percentiles.  A column shows
 * only where some class has it.  Nothing when it has none. */
void rt_classes(FILE *out, const design *d);

/* The plan of design D's run (planstore_plan_of_run), once per plan (SEEN:
 * plan ids shown, *NSEEN of them): its target, every configuration's verdict,
 * and its simulated points by cost, the cheapest meeting one marked (the
 * frontier: every point below it misses the SLO), as a picture (plots/frontier.gp,
 * as `latsim plot PLAN` draws it; DIR the plots folder, *K the pictures so far)
 * and a table.  Returns 1 when a plan was shown, else 0. */
int rt_plan_section(FILE *out, const design *d, const char *dbpath, int64_t *seen, int *nseen, const char *dir, int *k);

#endif

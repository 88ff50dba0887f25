/* planner.h -- internal to sim/plan/: what the planner's files share.
 * setup.c builds the search space (dimensions, configurations, estimates),
 * search.c runs the search (rounds, confirmation, goodput, candidates,
 * verdicts), sens.c the search again at the ends of the prediction band,
 * planout.c the JSON and the database.  The types and the public calls are
 * latsim/plan.h's. */
#ifndef LATSIM_PLAN_PLANNER_H
#define LATSIM_PLAN_PLANNER_H

#include <stddef.h>
#include "latsim/plan.h"

/* Sets ERR (ERRLEN bytes) from FMT.  Returns CODE (an exit status). */
int plan_fail(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Fills E's task: the plan's overrides, its configuration's, its monotone
 * value's (pointers into P and E: call again after P->e moves). */
void plan_wire(plan *p, plan_eval *e);

/* The search and the confirmation (plan_search without the clock): sets
 * P->winner.  Returns 0 or the exit status + ERR. */
int plan_solve(plan *p, char *err, size_t errlen);

/* The candidates: each configuration's answer, cheapest first but the winner
 * first of all, the evaluation shown for each, and the counts (pruned, ruled
 * out, below the bound).  Returns 0 or 1 + ERR. */
int plan_candidates(plan *p, char *err, size_t errlen);

/* The sensitivity check (plan_conclude; nothing without an LLM pool or with
 * o.no_sens).  Returns 0 or the exit status + ERR. */
int plan_sensitivity(plan *p, char *err, size_t errlen);

/* Writes the object of the overrides of configuration C at monotone value M
 * (0: none) to OUT: {"pool chat.gpu": "h100", "pool chat.replicas": "2"}. */
void plan_settings_json(const plan *p, const plan_config *c, int m, FILE *out);

#endif

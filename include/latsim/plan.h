/* latsim/plan.h -- the capacity planner's computations (public).
 *
 * What `latsim plan` decides between simulations, as a library: the queueing
 * estimates a search starts from (Erlang C for M/M/c, scaled for M/G/c by
 * Allen-Cunneen; the capacity a run measured), the bisection of one
 * configuration's monotone value (replicas or servers: the SLO is monotone
 * in it and the cost increasing) with pruning by cost, and how close a
 * missing run came and which SLO term it failed by most, the winner's
 * goodput bracket, and each configuration's verdict.  The front end
 * (cli/plan.c) builds the configurations, runs the simulations (task.h's
 * workers, latsim/store.h) and prints; tests/test_planlib.c calls these
 * directly.  Nothing here simulates, allocates or prints.
 */
#ifndef LATSIM_PUBLIC_PLAN_H
#define LATSIM_PUBLIC_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "latsim/report.h"
#include "latsim/slo.h"

/* Erlang C: the probability that an arrival waits in M/M/C with offered load
 * A = lambda / mu erlangs (A < C; Erlang B by recursion).  Returns it, in [0, 1]. */
double plan_erlang_c(int c, double a);

/* The smallest server count C in [C0, CMAX] (C0 < 1 read as 1) whose queue
 * wait meets every queue latency term of S ([slo] queue_mean_ms,
 * queue_p99_ms...; not a class's, not max) at LAMBDA requests/s, a mean
 * service time SVC_MS ms and service-time coefficient of variation CV: M/M/c
 * by Erlang C (P(W > t) = C(c, A) exp(-(c mu - lambda) t)), the wait scaled by
 * (1 + CV^2) / 2 for M/G/c (Allen-Cunneen).  Returns it; CMAX when none in
 * range does; NAN when S has no such term. */
double plan_erlang_servers(const slo_spec *s, double lambda, double svc_ms, double cv, int c0, int cmax);

/* The servers or replicas a pool needs, estimated from one run that missed
 * the SLO with M of them at RATE requests/s offered: a saturated run's
 * throughput is what M carry (M x rate / throughput at 85 % of capacity),
 * else the pool POOL's busy share scaled to 75 %.  Returns the count
 * (rounded up), or NAN when the report says neither. */
double plan_capacity_need(const report *rep, double rate, int m, const char *pool);

/* How close a run that missed the SLO came: the worst relative margin of
 * SLO (slo_worst_margin), or for a saturated run (no latencies) -1000 + the
 * share of RATE (requests/s offered) its throughput carried.  Returns it
 * (larger is closer). */
double plan_closeness(const slo_result *slo, const report *rep, double rate);

/* The SLO term of SLO that fails by the largest share of its limit, as
 * "e2e_p99_ms 23500 > 15000", or "saturated (throughput X of RATE req/s)"
 * when the run saturated or nothing was measured, into OUT (N bytes). */
void plan_worst_term(const slo_result *slo, const report *rep, double rate, char *out, size_t n);

/* The bisection of one configuration's monotone value (replicas or
 * servers), smallest meeting the SLO.  Start with lo = the first value
 * minus 1 (or a bound below which none can meet), hi = the range's end + 1,
 * hint = NAN or an estimate, the rest 0. */
typedef struct plan_mono {
    int lo;                   /* largest value known to miss (count) */
    int hi;                   /* smallest value known to meet (count; range end + 1: none yet) */
    int lo_known;             /* 1: lo came from a simulation or a bound (not the default) */
    double hint;              /* estimate of the answer (count; NAN: none) */
    int hint_used;            /* 1: the hint was tried (or given up) */
    int below_tried;          /* 1: one below a meeting estimate was tried */
    int done;                 /* 1: the search is over (answer set, or none meets) */
    int pruned;               /* 1: dropped, its cheapest possible cost is not below the best */
    int answer;               /* smallest meeting value (count), 0: none */
} plan_mono;

/* What plan_mono_next needs besides the bisection. */
typedef struct plan_mono_ctx {
    int range_lo, range_hi;   /* the values searched, counts (1 <= range_lo <= range_hi) */
    int may_prune;            /* 1: prune when the cost at lo + 1 is best_cost or more */
    double best_cost;         /* $/hour of the cheapest configuration meeting so far */
    double fixed, unit;       /* this configuration's cost: fixed + unit x value, $/hour */
    int finishing;            /* 1: a configuration that has met is bisected to its answer, never pruned */
} plan_mono_ctx;

/* The next value of B to simulate: the hint first, then doubling from the
 * range's start until one meets, then (when the hint met) one below it, then
 * halving the bracket.  Returns the value, or 0 when B's search is over (B->done:
 * answer set or none meets) or B was pruned (B->pruned). */
int plan_mono_next(plan_mono *b, const plan_mono_ctx *x);

/* Records that value M met (MET 1) or missed the SLO in B.  Returns 1 when
 * that narrowed the bracket (a new smallest meeting or largest missing value),
 * else 0. */
int plan_mono_record(plan_mono *b, int m, int met);

/* What a configuration's verdict is made of (the caller's search found it). */
typedef struct plan_verdict_in {
    const char *refused;      /* why the scenario refused the configuration (NULL: it did not) */
    const char *bound;        /* why the utilisation bound rules out all its values ("": none) */
    int failed_confirmation;  /* 1: it met with the first seed but not with every seed */
    uint64_t seed0;           /* the first seed */
    int seeds;                /* the seeds a winner is confirmed with (count) */
    int has_mono;             /* 1: a monotone dimension (replicas or servers) is bisected */
    const char *mono_name;    /* its name in labels, e.g. "replicas" */
    int range_lo, range_hi;   /* its values searched (counts) */
    const plan_mono *b;       /* its bisection (also read without one: answer) */
    double fixed, unit;       /* cost: fixed + unit x value, $/hour */
    int met;                  /* without a monotone dimension: 1 when it met the SLO */
    const char *term_closest; /* without one: the worst term of its closest missing run (NULL: none simulated) */
    const char *term_below;   /* the worst term of a run at answer - 1 that missed (NULL: none) */
    uint64_t below_seed;      /* that run's seed */
    const char *term_lo;      /* the worst term of its run at b->lo with the first seed (NULL: none) */
    double winner_cost;       /* $/hour of the confirmed winner (the first seed's best when none) */
    double best_cost;         /* $/hour of the cheapest found with the first seed */
} plan_verdict_in;

/* A configuration's verdict: the smallest count meeting the SLO and its cost,
 * or why not (ruled out, below the utilisation bound, failed confirmation,
 * pruned by cost, the term failing at the largest count), into WHY (N
 * bytes); *VALUE its smallest meeting value (0: none).  Returns the kind:
 * "meets", "missed", "pruned", "ruled_out", "below_bound" or
 * "failed_confirmation" (a string literal). */
const char *plan_verdict(const plan_verdict_in *v, int *value, char *why, size_t n);

/* The goodput of a winner: the highest rate it still meets the SLO at, as a
 * factor of the planned rate, bracketed in two rounds of runs. */
#define PLAN_GOODPUT_MAX 8       /* factors one round tries, at most */

/* The rate factors goodput round ROUND tries, into F (PLAN_GOODPUT_MAX):
 * round 0 the ladder 1.1, 1.25, 1.5, 2, 3, 4; round 1 four evenly inside the
 * bracket (LO, HI).  Returns how many; 0 when there is no round ROUND (round
 * 1 with HI NAN: nothing missed). */
int plan_goodput_factors(int round, double lo, double hi, double *f);

/* Narrows the bracket *LO (largest meeting factor, 1 at first) and *HI
 * (smallest missing, NAN: none) by N runs at factors F that met (MET[i] 1)
 * or missed, the SLO taken as monotone in the rate. */
void plan_goodput_bracket(const double *f, const int *met, int n, double *lo, double *hi);

#endif

/* latsim/plan.h -- the capacity planner (public): `latsim plan` as a library.
 *
 * Two parts.  The computations a search is made of (nothing here simulates,
 * allocates or prints): the queueing estimates a search starts from (Erlang C
 * for M/M/c, scaled for M/G/c by Allen-Cunneen; the capacity a run
 * measured), the bisection of one configuration's monotone value (replicas
 * or servers: the SLO is monotone in it and the cost increasing) with pruning
 * by cost, how close a missing run came and which SLO term it failed by most,
 * the winner's goodput bracket, each configuration's verdict, and whether the
 * answer survives the cost model's prediction band (plan_robust).
 *
 * And the search itself (struct plan): the options (plan_opts), the
 * configurations they span (plan_setup), the rounds of simulations on task.h's
 * workers with confirmation by more seeds (plan_search), the goodput, the
 * candidates and the sensitivity check (plan_conclude), the plan as JSON
 * (plan_json) and in the database (plan_store).  The front end (cli/plan.c)
 * parses the command line, calls these in order and prints the result it
 * reads from struct plan; tests/test_planlib.c calls them directly.
 * Functions that can fail return 0, or the exit status a front end gives (2
 * bad input or no configuration meets the SLO, 1 a runtime failure) with one
 * line in ERR; none prints (progress and notes go to the callbacks of
 * plan_opts) and none exits.
 */
#ifndef LATSIM_PUBLIC_PLAN_H
#define LATSIM_PUBLIC_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "latsim/report.h"
#include "latsim/scenario.h"
#include "latsim/slo.h"
#include "latsim/store.h"

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

/* ---- option values ------------------------------------------------------- */

/* A FROM:TO:STEP range of a searched or varied key (plan --search, --tp;
 * sweep --vary; an [explore] axis): its values are FROM + i x STEP for i < N,
 * each printed with %.10g. */
typedef struct plan_range {
    double from, to;          /* the bounds as given (finite, FROM <= TO) */
    double step;              /* > 0, finite (1 when optional and not given) */
    int n;                    /* number of values, 1 to the caller's MAX */
} plan_range;

/* Parses SPEC, "FROM:TO:STEP" (or "FROM:TO", STEP 1, when STEP_OPTIONAL) into
 * R: every part a finite number, STEP > 0, FROM <= TO, at most MAX values, and
 * successive values distinct at 10 significant digits.  Returns 0, or -1 with
 * ERR naming the bad part ("FROM 'nan' is not a finite number"). */
int plan_range_parse(const char *spec, int step_optional, int max, plan_range *r, char *err, size_t errlen);

/* Value I of R as text (%.10g) into BUF (N bytes). */
void plan_range_value(const plan_range *r, int i, char *buf, size_t n);

/* Checks entry V (LEN bytes, not NUL-terminated) of an a,b,c list: not empty,
 * shorter than MAXLEN, and not a number that is not finite (nan, inf, 1e999;
 * a word such as a scheduler name is fine).  Returns 0, or -1 with ERR. */
int plan_list_value_check(const char *v, size_t len, size_t maxlen, char *err, size_t errlen);

/* ERR came from loading a scenario with the assignment SECTION.KEY=... that
 * option OPT ("--vary", "--search") made: the loader calls every command-line
 * assignment "--set"; when ERR is about [SECTION] KEY it is renamed OPT. */
void plan_relabel(char *err, size_t errlen, const char *opt, const char *section, const char *key);

/* ---- the search ------------------------------------------------------------ */

#define PLAN_MAX_DIMS 8          /* dimensions (and --search options), at most */
#define PLAN_MAX_VALS 256        /* values of one dimension, at most */
#define PLAN_MAX_COMBOS 4096     /* configurations (the product of the dimensions), at most */
#define PLAN_MAX_USER_SETS 32    /* the user's --set overrides, at most */
#define PLAN_PEAK_SETS 6         /* overrides the planner adds: --trace's two, the peak window's four */

struct plan;

/* What to plan: the command's options. */
typedef struct plan_opts {
    const char *file;         /* the scenario file */
    const char *const *sets;  /* overrides "section.key=value": the user's --set, then --trace's (not owned) */
    int nsets;                /* how many (at most PLAN_MAX_USER_SETS + 2) */
    int trace;                /* 1: --trace FILE was given (its overrides end SETS) */
    double target;            /* --target-rate, req/s (NAN: not given) */
    double peak_min;          /* --peak-minutes, minutes (0: not given) */
    const char *pool;         /* --pool NAME (NULL: the first LLM pool) */
    const char *gpus, *tps;   /* --gpus, --tp values as given (NULL: not given) */
    const char *pps, *eps;    /* --pp, --ep (NULL: not given) */
    const char *reps;         /* --replicas A:B (NULL: not given) */
    const char *searches[PLAN_MAX_DIMS]; /* the --search values "SECTION.KEY=SPEC" */
    int nsearch;              /* how many */
    uint64_t seed;            /* --seed, the first seed (0: the scenario's) */
    int seeds;                /* seeds the winner is confirmed with (count, >= 1) */
    int top;                  /* candidates in the JSON (count) */
    int jobs;                 /* worker processes (count, >= 1) */
    int energy;               /* 1: --objective energy (rank by mean GPU power, W; else $/hour) */
    int no_sens;              /* 1: --no-sensitivity */
    int store;                /* 1: plan_store writes the plan (0: --no-store) */
    const char *dbpath;       /* the database: the catalog's additions, the workers' look-ups, the plan */
    /* Called as simulations finish (NULL: none): DONE of the N of this round. */
    void (*progress)(const struct plan *p, int done, int n, void *arg);
    /* Called with a note for the user (NULL: none): "FILE's rate schedule is replaced...". */
    void (*note)(const char *msg, void *arg);
    void *arg;                /* passed to progress and note */
} plan_opts;

/* One searched dimension: a key and its values. */
typedef struct plan_dim {
    char section[160];        /* e.g. "pool chat" */
    char key[64];             /* e.g. "gpu" */
    char *vals[PLAN_MAX_VALS]; /* values as text (owned) */
    int n;                    /* values (count; the monotone dimension: 0, -1 when there is none) */
    const char *opt;          /* the option that made it ("--gpus", "--tp", "--replicas", "--search") */
} plan_dim;

/* One configuration: a value of every ordinary dimension. */
typedef struct plan_config {
    char sets[PLAN_MAX_DIMS][256]; /* "section.key=value" of each ordinary dimension */
    int nsets;                /* how many */
    char label[512];          /* "key=value key=value" */
    int infeasible;           /* 1: refused by the scenario (e.g. the model does not fit) */
    char reason[300];         /* why, when infeasible */
    double fixed, unit;       /* cost = fixed + unit x monotone value, $/hour */
    plan_mono b;              /* the bisection of its monotone value (with none: done, pruned, answer 1 met) */
    int best_eval;            /* the evaluation at the answer (index into plan.e, -1 none) */
    int confirmed;            /* 1 confirmed with every seed, -1 failed confirmation, 0 not tried */
    char bound[300];          /* why the utilisation bound rules out all its values ("": it does not) */
    double closest;           /* best worst-margin of its missing evaluations (relative; plan_closeness) */
    int closest_eval;         /* that evaluation (index, -1 none) */
} plan_config;

/* One simulation of the search. */
typedef struct plan_eval {
    int combo;                /* its configuration (index into plan.c, -1 none) */
    int m;                    /* monotone value (count; 0 when none) */
    char mset[256];           /* "section.key=m" */
    const char *role;         /* "candidate", "confirm", "goodput" */
    char rate_set[128];       /* its own workload.rate=/speedup= ("": the plan's) */
    double factor;            /* its rate / the plan's rate (goodput evaluations; 1 otherwise) */
    task t;                   /* what was simulated (its overrides point into the plan and this record) */
    task_out o;               /* the result */
    slo_result slo;           /* the SLO evaluated over it */
    int met;                  /* 1: it met the SLO and did not saturate */
} plan_eval;

/* A candidate: a configuration that meets the SLO, and its cost. */
typedef struct plan_cand {
    int combo;                /* its configuration (index into plan.c) */
    double cost;              /* $/hour at its answer */
    double power_w;           /* mean GPU power at its answer at the simulated rate, W (NAN: unknown) */
    double key;               /* what it is ranked by: cost ($/hour), or power_w (W, --objective energy) */
} plan_cand;

/* The search again at one end of the prediction band (plan_conclude). */
typedef struct plan_sens {
    double factor;            /* the step-time scale searched with (step_time_scale) */
    int met;                  /* 1: a configuration meets the SLO at it */
    char label[700];          /* its cheapest configuration, as "best:" prints it (plan_answer_label) */
    char settings[1200];      /* the same as a JSON object of overrides */
    double cost;              /* its $/hour */
} plan_sens;

/* A plan: its options, the search's state and its result.  plan_init fills
 * it; the calls below advance it; the front end reads it; plan_free frees it. */
typedef struct plan {
    plan_opts o;              /* the options (o.sets: the copy in user_sets) */
    const char *user_sets[PLAN_MAX_USER_SETS + PLAN_PEAK_SETS]; /* every override of every simulation */
    int nuser;                /* how many */
    scenario *base;           /* the scenario as given (owned; plan_setup loads it) */
    char rate_set[128];       /* workload.rate=... or workload.speedup=...: the rate simulated */
    plan_dim dims[PLAN_MAX_DIMS]; /* the ordinary dimensions */
    int ndims;                /* how many */
    plan_dim mono;            /* the monotone dimension (n = -1: none); vals unused */
    int mono_lo, mono_hi;     /* its range (counts) */
    int mono_pool;            /* index of its pool */
    char mono_name[200];      /* its name in labels: the key, "NAME.key" when another dimension has that key */
    plan_config *c;           /* the configurations (owned) */
    int nc;                   /* how many */
    plan_eval *e;             /* the simulations (owned; indices are stable, addresses move) */
    int ne, ecap;             /* how many, allocated */
    slo_spec slo;             /* the [slo], taken over from the base configuration */
    double target;            /* the rate to carry, req/s (a peak window's: its rate after scaling) */
    double headroom;          /* the [slo] headroom (factor) */
    double want;              /* the rate simulated: target x headroom, req/s */
    double umax;              /* the utilisation bound's share (the [slo] utilization_max, else 1) */
    uint64_t seed0;           /* the seed of the candidates (the confirmations: + 1, + 2...) */
    double best_cost;         /* $/hour of the cheapest configuration known to meet (when best >= 0) */
    int best;                 /* its index (-1 none) */
    int winner;               /* the configuration confirmed cheapest (index, -1 none) */
    int finishing;            /* 1: bisecting the configurations pruned after one of their values met */
    double goodput_lo, goodput_hi; /* the winner's rate factors: largest meeting, smallest missing (NAN none) */
    double wall;              /* seconds the search took (plan_search) */
    plan_cand *cs;            /* the candidates, the winner first (owned) */
    int ncs;                  /* how many */
    int *shown;               /* per candidate: the evaluation shown (index into e) */
    int pruned, infeasible, bounded; /* configurations pruned by cost, refused by the scenario, below the utilisation bound */
    int reopened;             /* pruned configurations searched again after confirmation raised the bound */
    char *jtext;              /* the plan as JSON, less its closing brace (plan_json; the front end may add the id) */
    int64_t plan_id;          /* the stored plan (0: not stored) */
    int nsens;                /* answers of the sensitivity check below (0: not made) */
    plan_sens sens[2];        /* at the band's optimistic and pessimistic end */
    char sens_basis[400];     /* where the band's factors come from */
    int robust;               /* 1: both ends of the band choose the same configuration (plan_robust) */
    int peak;                 /* 1: the plan replays a trace's peak window */
    char peak_buf[PLAN_PEAK_SETS][1100]; /* the overrides of the peak window (in user_sets) */
    int npeak;                /* of which used */
    double peak_mean;         /* the whole trace's mean rate at its own clock, req/s */
    double peak_from, peak_len; /* the window: start and length on the trace's clock, s */
    size_t peak_rows;         /* its requests (count) */
    double peak_span;         /* the whole trace's span, s */
    double peak_scale;        /* the trace's clock sped up by this before the headroom (target / its mean rate) */
} plan;

/* Fills P for the options O (copied; the strings they point to must outlive
 * P): nothing loaded, nothing simulated.  Returns 0, or 2 + ERR when there
 * are too many overrides. */
int plan_init(plan *p, const plan_opts *o, char *err, size_t errlen);

/* Frees what P holds (P may be half made). */
void plan_free(plan *p);

/* Loads the scenario as given (its [slo], its workload: the rate simulated,
 * or a trace's peak window), the dimensions of the options, checks every
 * value of each, and builds the configurations with their costs and queueing
 * estimates (refusals rule a configuration out).  Returns 0 or the exit
 * status + ERR (2: bad input). */
int plan_setup(plan *p, char *err, size_t errlen);

/* The search: rounds of simulations, every open configuration bisecting its
 * monotone value in parallel and the cheapest meeting one bounding the
 * others' cost; the winner confirmed with the other seeds (raised until every
 * seed meets); pruned configurations searched again when confirmation raised
 * the bound.  Sets winner (-1: none meets the SLO) and wall.  Returns 0 or the
 * exit status + ERR. */
int plan_search(plan *p, char *err, size_t errlen);

/* Says in ERR why no configuration meets the SLO (after plan_search with no
 * winner): how close the best came, or what ruled them all out.  Returns 2. */
int plan_no_winner(const plan *p, char *err, size_t errlen);

/* After a winner: its goodput (two rounds at multiples of the rate), the
 * candidates ranked (winner first), and unless o.no_sens the search again at
 * both ends of the prediction band (sens, robust).  Returns 0 or the exit
 * status + ERR (2: --objective energy without power figures). */
int plan_conclude(plan *p, char *err, size_t errlen);

/* The plan as JSON into jtext, less its closing brace: the winner, the
 * candidates, the verdicts, the goodput, the counts and the sensitivity; with
 * no winner {scenario, target_rate_rps, headroom, best: null, verdicts}.
 * Returns 0, or 1 + ERR (out of memory). */
int plan_json(plan *p, char *err, size_t errlen);

/* Stores the plan (as plan_json made it, closed), its simulations as runs
 * with their points, in one transaction: together or not at all (nothing
 * with o.store 0).  Sets plan_id.  Returns 0 or the exit status + ERR. */
int plan_store(plan *p, char *err, size_t errlen);

/* Configuration CI's verdict (plan_verdict with what the search found):
 * returns its kind, *VALUE its smallest meeting monotone value (0 none), the
 * why in WHY (N bytes). */
const char *plan_config_verdict(const plan *p, int ci, int *value, char *why, size_t n);

/* The answer of configuration CI as "best:" prints it ("gpu=h100 tp=4
 * replicas=2", "the scenario as given"), into BUF. */
void plan_answer_label(const plan *p, int ci, char *buf, size_t n);

/* Configuration C's cost at monotone value M, $/hour. */
double plan_cost_at(const plan_config *c, int m);

/* The largest busy share of any pool in report R (NAN: none). */
double plan_busy_max(const report *r);

/* The cost models that priced report R's LLM pools, into BUF: each pool's
 * kind and stored id ("fitted 3", "roofline"), prefixed with its name when
 * there are several ("pre: roofline, dec: fitted 3"); "-" without one. */
void plan_models_label(const report *r, char *buf, size_t n);

/* Whether P's candidates were priced by different kinds of cost model.
 * Returns 1 and the first two that differ in A and B (candidate indices),
 * else 0. */
int plan_models_differ(const plan *p, int *a, int *b);

/* Whether the answer survives the band: 1 when all N (2) ends met the SLO
 * with the same configuration (by label), else 0. */
int plan_robust(const plan_sens *s, int n);

/* The verdict of the sensitivity check in words into BUF ("robust: same
 * configuration at x0.789 and x1.27 (...)", "not robust: x0.789: ...; ..."). */
void plan_sens_verdict(const plan *p, char *buf, size_t n);

#endif

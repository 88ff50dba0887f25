/* plan.c -- `latsim plan FILE --target-rate R ...`: the cheapest configuration
 * ($/hour) that meets the scenario's [slo] at R x headroom requests/s.
 *
 * The search space is the product of the search dimensions (--gpus, --tp, --pp, --ep, and
 * every --search "SECTION.KEY=RANGE_OR_LIST"), times one monotone dimension:
 * replicas of an LLM pool or servers of a generic pool (--replicas A:B, or a
 * --search on `replicas` / `servers`), in which the SLO is monotone and the cost
 * increasing (with several replicas/servers dimensions, the one with the widest
 * range; the others are ordinary dimensions).  For each configuration of the other dimensions the smallest
 * monotone value meeting the SLO is found by bisection, started from a queueing
 * estimate: for a generic pool the utilisation bound (servers > load /
 * utilization_max) and, for queue-wait terms, Erlang C (exact for M/M/c;
 * scaled by (1 + cv^2) / 2 for M/G/c, Allen-Cunneen); for an LLM pool the capacity measured by the first
 * simulation (a saturated run's throughput is its capacity).  Configurations
 * whose cheapest possible cost is already above the best found are dropped
 * without simulating them.  All configurations advance together, round by
 * round, each round's simulations run in parallel worker processes (task.h).
 * The winner is confirmed with further seeds (--seeds, default 3): if one
 * misses the SLO, its monotone value is raised until every seed meets it.
 * --objective energy ranks the configurations by their mean GPU power at the
 * simulated rate instead (no pruning by cost; docs/planning.md).
 * Configurations pruned after one of their values met are then bisected to
 * their smallest meeting value (runner-ups are minimal), every configuration
 * gets a verdict (verdict()), and the winner's goodput is bracketed by running
 * it at multiples of the rate (plan_goodput).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cliopt.h"
#include "cliutil.h"
#include "provenance.h"
#include "commands.h"
#include "latsim/band.h"
#include "latsim/errmsg.h"
#include "latsim/plan.h"
#include "latsim/report.h"
#include "latsim/scenario.h"
#include "latsim/slo.h"
#include "latsim/store.h"

#define MAX_DIMS 8
#define MAX_VALS 256
#define MAX_COMBOS 4096
#define MAX_USER_SETS 32

enum { O_TARGET = 1, O_GPUS, O_TP, O_PP, O_EP, O_REPLICAS, O_POOL, O_SEARCH, O_SEEDS, O_SEED, O_JOBS, O_TOP, O_NO_STORE,
       O_NO_SENS, O_OBJECTIVE, O_TRACE, O_PEAK };

#define PEAK_SETS 6           /* the --set overrides plan_peak adds */

static const cli_opt OPTS[] = {
    { "target-rate", O_TARGET, "R", "the arrival rate to carry, requests/s (simulated at R x the [slo] headroom); "
      "with a trace, the mean rate its replay is scaled to (default: the trace's own)", 0 },
    { "trace", O_TRACE, "FILE", "plan against this trace's peak minutes (arrival = trace, trace = FILE): its busiest "
      "window replayed once, at R x headroom scaled (docs/planning.md)", 0 },
    { "peak-minutes", O_PEAK, "M", "the peak window's length, minutes (default 10); also plans an arrival = trace "
      "scenario against its peak", 0 },
    { "gpus", O_GPUS, "a,b,...", "GPUs of the LLM pool to try (catalog names)", 0 },
    { "tp", O_TP, "1,2,...", "tensor-parallel degrees to try (a list or FROM:TO[:STEP])", 0 },
    { "pp", O_PP, "1,2,...", "pipeline-parallel stages to try (a list or FROM:TO[:STEP])", 0 },
    { "ep", O_EP, "1,2,...", "expert-parallel degrees to try (MoE models; each must divide tp)", 0 },
    { "replicas", O_REPLICAS, "A:B", "replicas of the LLM pool, bisected between A and B", 0 },
    { "pool", O_POOL, "NAME", "the LLM pool --gpus, --tp, --pp, --ep and --replicas search (default: the first)", 0 },
    { "search", O_SEARCH, "\"SECTION.KEY=FROM:TO:STEP|a,b,c\"", "any key as a dimension, e.g. "
      "\"pool chat.max_batch=64,128,256\"; replicas and servers are bisected (repeatable)", CLI_REPEAT },
    CLI_OPT_SET,
    { "objective", O_OBJECTIVE, "cost|energy", "what the winner minimises among the configurations meeting the SLO: $/hour "
      "(default) or GPU energy at the simulated rate (mean power, kWh per hour; docs/planning.md)", 0 },
    { "seeds", O_SEEDS, "K", "seeds the winner is confirmed with (default 3)", 0 },
    { "seed", O_SEED, "N", "the first seed (default: the scenario's)", 0 },
    { "jobs", O_JOBS, "N", "worker processes (default: all cores)", 0 },
    { "top", O_TOP, "K", "candidates listed (default 5)", 0 },
    CLI_OPT_JSON,
    CLI_OPT_DB,
    CLI_OPT_COST_DB,
    { "no-store", O_NO_STORE, NULL, "do not write the plan and its runs to the database", 0 },
    { "no-sensitivity", O_NO_SENS, NULL, "skip the prediction-band check (the search again with every LLM step time "
      "at both ends of the cost model's 90 % band: its validated error, or the default; docs/bands.md)", 0 },
    { NULL },
};

static const cli_cmd CMD = {
    "plan", "FILE",
    "Finds the cheapest configuration ($/hour: GPUs x catalog price, generic servers x\n"
    "usd_per_hour) that meets the [slo] of FILE at R x headroom requests/s.  --gpus, --tp,\n"
    "--pp, --ep and --replicas search the LLM pool (the first, or --pool NAME); --search\n"
    "adds any key as a dimension (e.g. \"pool chat.max_batch=64,128,256\",\n"
    "\"pool cpu.servers=1:64\").\n"
    "replicas and servers are bisected (the SLO is monotone in them; with several pools'\n"
    "sizes searched, the widest range is bisected within each value of the others); the\n"
    "winner is confirmed with K seeds (default 3).  The arrival rate is --target-rate's:\n"
    "workload.rate cannot be searched or set.  Progress goes to stderr on a terminal.\n"
    "--objective energy picks the configuration with the lowest mean GPU power (kWh per\n"
    "hour) at that rate instead of the cheapest.\n"
    "Every configuration gets a verdict: the smallest count meeting the SLO and its cost\n"
    "(runner-ups are bisected like the winner), the term failing at the largest count, or\n"
    "why it was pruned or ruled out; the winner's goodput (the highest rate it still meets\n"
    "the SLO at, its real headroom) is given.\n"
    "With --trace FILE (or an arrival = trace scenario and no --target-rate, or --peak-minutes)\n"
    "the plan replays the trace's busiest M minutes once, not a mean rate.\n",
    "exit status: 0 found, 1 runtime error, 2 bad input or no configuration meets the SLO.\n",
    OPTS, MAX_USER_SETS, 0,
};

typedef struct dim {
    char section[160];        /* e.g. "pool chat" */
    char key[64];             /* e.g. "gpu" */
    char *vals[MAX_VALS];     /* values as text (owned) */
    int n;
    const char *opt;          /* the option that made it ("--gpus", "--tp", "--replicas", "--search") */
} dim;

typedef struct combo {
    char sets[MAX_DIMS][256]; /* "section.key=value" of each non-monotone dimension */
    int nsets;
    char label[512];          /* "key=value key=value" */
    int infeasible;           /* refused by the scenario (e.g. the model does not fit) */
    char reason[300];
    double fixed, unit;       /* cost($/h) = fixed + unit x monotone value */
    plan_mono b;              /* the bisection of its monotone value (latsim/plan.h; with none: done, pruned, answer 1 met) */
    int best_eval;            /* the evaluation at the answer */
    int confirmed;            /* 1 confirmed with every seed, -1 failed confirmation */
    char bound[300];          /* why the utilisation bound rules out all its values ("" none) */
    double closest;           /* best worst-margin of its missing evaluations (relative) */
    int closest_eval;
} combo;

typedef struct eval {
    int combo;                /* index, -1 for none */
    int m;                    /* monotone value (0 when none) */
    char mset[256];           /* "section.key=m" */
    const char *role;         /* "candidate", "confirm", "goodput" */
    char rate_set[128];       /* its own workload.rate=/speedup= ("": the plan's) */
    double factor;            /* its rate / the plan's rate (goodput evaluations; 1 otherwise) */
    task t;
    task_out o;
    slo_result slo;
    int met;
} eval;

/* A candidate: a configuration that meets the SLO, and its cost. */
typedef struct cand {
    int combo;                /* its index */
    double cost;              /* $/hour at its answer */
    double power_w;           /* mean GPU power at its answer at the simulated rate, W (NAN: unknown) */
    double key;               /* what it is ranked by: cost, or power_w (--objective energy) */
} cand;

typedef struct plan {
    const char *file;
    const char *user_sets[MAX_USER_SETS + PEAK_SETS];
    int nuser;
    char rate_set[128];       /* workload.rate=... or workload.speedup=... */
    uint64_t seed;
    dim dims[MAX_DIMS];
    int ndims;
    dim mono;                 /* the monotone dimension (n = 0: none); vals unused */
    int mono_lo, mono_hi;
    int mono_pool;            /* index of its pool */
    char mono_name[200];      /* its name in labels: the key, "NAME.key" when another dimension has that key */
    combo *c;
    int nc;
    eval *e;
    int ne, ecap;
    slo_spec slo;             /* from the base configuration */
    double target, headroom;
    double best_cost;
    int best;                 /* combo index of the cheapest so far */
    int jobs, progress;
    /* the options */
    const char *dbpath;       /* the database file */
    const char *pool_opt;     /* --pool NAME (NULL: the first LLM pool) */
    const char *gpus, *tps, *reps; /* --gpus, --tp, --replicas (NULL: not given) */
    const char *pps, *eps;    /* --pp, --ep (NULL: not given) */
    const char *searches[MAX_DIMS]; /* the --search values */
    int nsearch;              /* how many */
    int json, store;          /* --json; 0: --no-store */
    int seeds, top;           /* --seeds, --top */
    int energy;               /* --objective energy: rank by mean GPU power (else by $/hour) */
    /* the search */
    double want;              /* the rate simulated: target x headroom, req/s */
    double umax;              /* the utilisation bound's share (the [slo] utilization_max, else 1) */
    uint64_t seed0;           /* the seed of the candidates (the confirmations: + 1, + 2...) */
    int winner;               /* the configuration confirmed cheapest (-1 none) */
    int finishing;            /* 1: bisecting the configurations pruned after one of their values met */
    double goodput_lo, goodput_hi; /* the winner's rate factors: largest meeting, smallest missing (NAN none) */
    double wall;              /* seconds the search took */
    /* the result */
    cand *cs;                 /* the candidates, the winner first */
    int ncs;                  /* how many */
    int *shown;               /* per candidate: the evaluation shown */
    int pruned, infeasible, bounded; /* configurations pruned by cost, refused by the scenario, below the utilisation bound */
    int reopened;             /* pruned configurations searched again after confirmation raised the bound (plan_solve) */
    char *jtext;              /* the plan as JSON, less its closing brace (--json adds the id) */
    int64_t plan_id;          /* the stored plan (0 not stored) */
    /* the sensitivity check (plan_sensitivity) */
    int no_sens;              /* --no-sensitivity */
    int nsens;                /* answers below (0: not made) */
    struct sens {
        double factor;        /* the step-time scale searched with */
        int met;              /* 1: a configuration meets the SLO at it */
        char label[700];      /* its cheapest configuration, as "best:" prints it */
        char settings[1200];  /* the same as JSON (settings_json) */
        double cost;          /* its $/hour */
    } sens[2];
    char sens_basis[400];     /* where the factors come from */
    /* planning against a trace's peak (plan_peak) */
    const char *trace_file;   /* --trace FILE (NULL: none) */
    double peak_min;          /* --peak-minutes M (0: not given) */
    int peak;                 /* 1: the plan replays the trace's peak window */
    char peak_buf[PEAK_SETS][1100]; /* the overrides it adds to user_sets */
    int npeak;                /* of which used */
    double peak_mean;         /* the whole trace's mean rate at its own clock, req/s */
    double peak_from, peak_len; /* the window: start and length on the trace's clock, s */
    size_t peak_rows;         /* its requests */
    double peak_span;         /* the whole trace's span, s */
    double peak_scale;        /* the trace's clock sped up by this before the headroom (--target-rate / its mean) */
    int robust;               /* 1: both answers are the plan's own */
} plan;

/* ---- parsing -------------------------------------------------------------- */

static int add_value(dim *d, const char *v)
{
    if (d->n == MAX_VALS) return cu_die(2, "plan: %s %s.%s: more than %d values", d->opt, d->section, d->key, MAX_VALS), -1;
    d->vals[d->n] = strdup(v);
    if (!d->vals[d->n]) return cu_die(1, "out of memory"), -1;
    d->n++;
    return 0;
}

/* Parses FROM:TO[:STEP] or a,b,c, the value of option D->opt, into D.
 * Returns 0 or -1 after the error. */
static int parse_values(dim *d, const char *spec)
{
    char err[300], what[300];     /* "--tp 1:nan", "--search pool cpu.servers=nan:4" */
    if (!strcmp(d->opt, "--search")) snprintf(what, sizeof what, "%s %.120s.%.60s=%.100s", d->opt, d->section, d->key, spec);
    else snprintf(what, sizeof what, "%s %.200s", d->opt, spec);
    if (strchr(spec, ':')) {
        cu_range r;
        if (cu_parse_range(spec, 1, MAX_VALS, &r, err, sizeof err) != 0)
            return cu_die(2, "plan: %s: %s", what, err), -1;
        for (int i = 0; i < r.n; i++) {
            char v[64];
            cu_range_value(&r, i, v, sizeof v);
            if (add_value(d, v)) return -1;
        }
        return 0;
    }
    const char *p = spec;
    while (1) {
        size_t k = strcspn(p, ",");
        char v[128];
        if (cu_check_list_value(p, k, sizeof v, err, sizeof err) != 0)
            return cu_die(2, "plan: %s: %s", what, err), -1;
        snprintf(v, sizeof v, "%.*s", (int) k, p);
        if (add_value(d, v)) return -1;
        if (!p[k]) break;
        p += k + 1;
    }
    return 0;
}

/* Parses --replicas SPEC, "A:B" of whole numbers 1 <= A <= B <= INT_MAX / 4
 * (the scenario checks B further).  Returns 0, or -1 after the error. */
static int parse_replicas(const char *spec, int *a, int *b)
{
    long v[2];
    const char *p = spec;
    for (int k = 0; k < 2; k++) {
        size_t len = strcspn(p, ":");
        int ok = len > 0 && len < 12;
        for (size_t i = 0; i < len && ok; i++) ok = p[i] >= '0' && p[i] <= '9';
        v[k] = ok ? strtol(p, NULL, 10) : 0;
        if (!ok || v[k] < 1 || v[k] > INT_MAX / 4)
            return cu_die(2, "plan: --replicas %s: %s '%.*s' is not a whole number from 1 to %d (expected A:B, e.g. 1:64)", spec,
                          k ? "B" : "A", (int) len, p, INT_MAX / 4), -1;
        if (k == 0 && p[len] != ':') return cu_die(2, "plan: --replicas %s: expected A:B (e.g. 1:64)", spec), -1;
        if (k == 1 && p[len]) return cu_die(2, "plan: --replicas %s: expected A:B (e.g. 1:64), got more than two parts", spec), -1;
        p += len + 1;
    }
    if (v[1] < v[0]) return cu_die(2, "plan: --replicas %s: empty range (B %ld < A %ld)", spec, v[1], v[0]), -1;
    *a = (int) v[0];
    *b = (int) v[1];
    return 0;
}

/* Splits "SECTION.KEY=SPEC" (or KEY=SPEC with SECTION given). */
static int split_key(const char *arg, char *section, size_t ns, char *key, size_t nk, const char **spec)
{
    const char *eq = strchr(arg, '=');
    if (!eq) return -1;
    const char *dot = NULL;
    for (const char *q = arg; q < eq; q++) if (*q == '.') dot = q;
    if (!dot || dot == arg || dot + 1 == eq) return -1;
    snprintf(section, ns, "%.*s", (int) (dot - arg), arg);
    snprintf(key, nk, "%.*s", (int) (eq - dot - 1), dot + 1);
    *spec = eq + 1;
    return 0;
}

/* ---- queueing estimates --------------------------------------------------- */

/* 1 when KEY is the key of more than one dimension (the monotone one included). */
static int shared_key(const plan *p, const char *key)
{
    int n = p->mono.n >= 0 && !strcmp(p->mono.key, key);
    for (int i = 0; i < p->ndims; i++) n += !strcmp(p->dims[i].key, key);
    return n > 1;
}

/* "pool b" -> "b": a section's name as labels show it. */
static const char *short_section(const char *section)
{
    const char *sp = strrchr(section, ' ');
    return sp ? sp + 1 : section;
}

/* ---- evaluations ---------------------------------------------------------- */

static eval *new_eval(plan *p, int ci, int m, const char *role, uint64_t seed)
{
    if (p->ne == p->ecap) {
        int cap = p->ecap ? 2 * p->ecap : 256;
        eval *x = realloc(p->e, (size_t) cap * sizeof *x);
        if (!x) return NULL;
        p->e = x;
        p->ecap = cap;
    }
    eval *e = &p->e[p->ne++];
    memset(e, 0, sizeof *e);
    e->combo = ci;
    e->m = m;
    e->role = role;
    e->factor = 1;
    e->t.seed = seed;
    return e;
}

/* Fills E's task (pointers into P and E: call again after P->e moves). */
static void wire(plan *p, eval *e)
{
    task *t = &e->t;
    t->path = p->file;
    t->nsets = 0;
    for (int i = 0; i < p->nuser; i++) t->sets[t->nsets++] = p->user_sets[i];
    t->sets[t->nsets++] = e->rate_set[0] ? e->rate_set : p->rate_set;
    if (e->combo >= 0) {
        const combo *c = &p->c[e->combo];
        for (int i = 0; i < c->nsets; i++) t->sets[t->nsets++] = c->sets[i];
    }
    if (p->mono.n >= 0 && e->m > 0) {
        snprintf(e->mset, sizeof e->mset, "%s.%s=%d", p->mono.section, p->mono.key, e->m);
        t->sets[t->nsets++] = e->mset;
    }
}

static void progress(int done, int n, void *arg)
{
    const plan *p = arg;
    int open = 0;
    for (int i = 0; i < p->nc; i++) open += !p->c[i].b.done && !p->c[i].infeasible && !p->c[i].b.pruned;
    char best[64] = "none yet";
    if (p->best >= 0) snprintf(best, sizeof best, "$%.2f/h", p->best_cost);
    fprintf(stderr, "\rplan: %d simulations (%d/%d in this round), %d configurations open, best %s   ",
            p->ne - n + done, done, n, open, best);
    fflush(stderr);
}

/* Runs evaluations FROM..ne-1.  Returns 0 or the exit status. */
static int run_evals(plan *p, int from, const char *dbpath)
{
    int m = p->ne - from;
    if (m <= 0) return 0;
    task *ts = calloc((size_t) m, sizeof *ts);
    task_out *outs = calloc((size_t) m, sizeof *outs);
    if (!ts || !outs) { free(ts); free(outs); return cu_die(1, "out of memory"); }
    for (int i = 0; i < m; i++) { wire(p, &p->e[from + i]); ts[i] = p->e[from + i].t; }
    task_run_all(ts, m, p->jobs, dbpath, outs, p->progress ? progress : NULL, p);
    int rc = 0;
    for (int i = 0; i < m; i++) {
        eval *e = &p->e[from + i];
        e->o = outs[i];
        if (e->o.status != 0) {
            if (!rc) rc = cu_die(e->o.status == 2 ? 2 : 1, "%s", e->o.err);
            continue;
        }
        if (slo_eval(&p->slo, e->o.rep.rows, e->o.rep.n, &e->slo) != 0) { rc = cu_die(1, "out of memory"); continue; }
        e->met = e->slo.met && !(report_get(&e->o.rep, "", "saturated", "value") > 0);
    }
    free(ts);
    free(outs);
    return rc;
}

static double cost_at(const combo *c, int m) { return c->fixed + c->unit * m; }

/* C's mean GPU power at its answer, W: the report of its evaluation there with
 * the base seed; when it has none (its answer was raised by a confirming seed
 * but not simulated), with ESTIMATE that of its best evaluation (a smaller
 * value), else NAN; NAN too when the run has no energy rows. */
static double power_at_answer(const plan *p, const combo *c, int estimate)
{
    int m = p->mono.n >= 0 ? c->b.answer : 0;
    int ci = (int) (c - p->c);
    for (int k = 0; k < p->ne; k++)
        if (p->e[k].combo == ci && p->e[k].m == m && p->e[k].met && p->e[k].t.seed == p->seed0)
            return report_get(&p->e[k].o.rep, "", "mean_power_w", "value");
    return estimate && c->best_eval >= 0 ? report_get(&p->e[c->best_eval].o.rep, "", "mean_power_w", "value") : NAN;
}

/* What the plan minimises for C at its answer: $/hour, or (--objective energy)
 * the mean GPU power (INFINITY when unknown). */
static double objective_at(const plan *p, const combo *c)
{
    if (!p->energy) return p->mono.n >= 0 ? cost_at(c, c->b.answer) : c->fixed;
    double w = power_at_answer(p, c, 1);
    return isnan(w) ? INFINITY : w;
}

/* How close a missing evaluation came (plan_closeness). */
static double closeness(const eval *e) { return plan_closeness(&e->slo, &e->o.rep, e->o.rate); }

/* The next monotone value to simulate for C, or 0 when its search is over
 * (plan_mono_next). */
static int next_value(plan *p, combo *c)
{
    plan_mono_ctx x = { p->mono_lo, p->mono_hi, !p->energy && p->best >= 0 && p->best != (int) (c - p->c), p->best_cost,
                        c->fixed, c->unit, p->finishing };
    return plan_mono_next(&c->b, &x);
}

/* Updates C after evaluation E at value M. */
static void update(plan *p, combo *c, const eval *e)
{
    int m = e->m;
    if (e->met) {
        if (plan_mono_record(&c->b, m, 1)) c->best_eval = (int) (e - p->e);
    } else {
        plan_mono_record(&c->b, m, 0);
        double w = closeness(e);
        if (c->closest_eval < 0 || w > c->closest) { c->closest = w; c->closest_eval = (int) (e - p->e); }
        /* Capacity estimate for LLM pools (no queueing formula): what the run
         * measured ("pool NAME" -> NAME). */
        if (c->b.hi > p->mono_hi && !c->b.hint_used) {
            double need = plan_capacity_need(&e->o.rep, e->o.rate, m, p->mono.section + 5);
            if (!isnan(need) && need > m) c->b.hint = need;
        }
    }
}

/* ---- output --------------------------------------------------------------- */

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

static void settings_json(const plan *p, const combo *c, int m, FILE *out)
{
    fputs("{", out);
    int first = 1;
    for (int i = 0; i < c->nsets; i++) {
        const char *eq = strchr(c->sets[i], '=');
        char k[256];
        snprintf(k, sizeof k, "%.*s", (int) (eq - c->sets[i]), c->sets[i]);
        fputs(first ? "" : ", ", out);
        report_json_str(out, k);
        fputs(": ", out);
        report_json_str(out, eq + 1);
        first = 0;
    }
    if (p->mono.n >= 0 && m > 0) {
        char k[256];
        snprintf(k, sizeof k, "%s.%s", p->mono.section, p->mono.key);
        fputs(first ? "" : ", ", out);
        report_json_str(out, k);
        fprintf(out, ": \"%d\"", m);
    }
    fputs("}", out);
}

static double max_util(const report *r)
{
    double um = NAN;
    for (size_t k = 0; k < r->n; k++)
        if (r->rows[k].scope[0] && !strcmp(r->rows[k].metric, REPORT_BUSY_SHARE) && (isnan(um) || r->rows[k].value > um))
            um = r->rows[k].value;
    return um;
}

static void free_plan(plan *p)
{
    for (int i = 0; i < p->ndims; i++)
        for (int k = 0; k < p->dims[i].n; k++) free(p->dims[i].vals[k]);
    for (int i = 0; i < p->ne; i++) { task_out_free(&p->e[i].o); slo_result_free(&p->e[i].slo); }
    free(p->e);
    free(p->c);
    slo_free(&p->slo);
    free(p->cs);
    free(p->shown);
    free(p->jtext);
}

/* ERR came from loading the scenario with P's assignments, which the loader
 * calls "--set": renames it after the option that made the assignment it is
 * about (--gpus, --tp, --replicas, --search, --target-rate). */
static void relabel(const plan *p, char *err, size_t errlen)
{
    for (int i = 0; i < p->ndims; i++) cu_relabel(err, errlen, p->dims[i].opt, p->dims[i].section, p->dims[i].key);
    if (p->mono.n >= 0) cu_relabel(err, errlen, p->mono.opt, p->mono.section, p->mono.key);
    cu_relabel(err, errlen, "--target-rate", "workload", "rate");
    cu_relabel(err, errlen, "--target-rate", "workload", "speedup");
}

/* Loads the base configuration with combo C's settings at monotone value M
 * into SC (resolved, catalog from DBPATH).  Returns 0, 1 when the scenario
 * refuses this configuration (REASON set), 2 on bad input (printed). */
static int load_config(plan *p, const combo *c, int m, const char *dbpath, scenario *sc, char *reason, size_t rn)
{
    eval tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.combo = c ? (int) (c - p->c) : -1;
    tmp.m = m;
    wire(p, &tmp);
    char err[1024];
    if (scenario_load(sc, p->file, tmp.t.sets, tmp.t.nsets, err, sizeof err) != 0) {
        relabel(p, err, sizeof err);
        cu_die(2, "%s", err);
        return 2;
    }
    sqlite3 *db = NULL;
    if (store_open_lookup(dbpath, &db, err, sizeof err) != 0) { cu_die(2, "%s", err); return 2; }
    int rc = scenario_resolve(sc, db, err, sizeof err);
    store_close(db);
    if (rc == 0) return 0;
    if (strstr(err, "] gpu:") || strstr(err, "] model:")) { relabel(p, err, sizeof err); cu_die(2, "%s", err); return 2; }
    /* Other refusals (weights do not fit, tp does not divide the heads) rule out this configuration. */
    const char *m2 = strstr(err, "] ");
    snprintf(reason, rn, "%.250s", m2 ? m2 + 2 : err);
    char *advice = strstr(reason, "; use ");      /* keep the fact, drop the advice */
    if (advice) *advice = '\0';
    return 1;
}

/* Whether the scenario loads with the user's --set overrides and SET.
 * Returns 0, or -1 + ERR. */
static int loads_with(const plan *p, const char *set, char *err, size_t errlen)
{
    const char *sets[MAX_USER_SETS + 2];
    int n = 0;
    for (int u = 0; u < p->nuser; u++) sets[n++] = p->user_sets[u];
    sets[n++] = set;
    scenario *sc = scenario_new();
    if (!sc) { snprintf(err, errlen, "out of memory"); return -1; }
    int bad = scenario_load(sc, p->file, sets, n, err, errlen);
    scenario_delete(sc);
    return bad ? -1 : 0;
}

/* ---- the command ---------------------------------------------------------- */

/* cli_opt_fn of plan: CTX is the plan. */
static int plan_opt(void *ctx, int id, const char *v)
{
    plan *p = ctx;
    char *end;
    long x;
    switch (id) {
    case O_TARGET:
        p->target = strtod(v, &end);
        if (end == v || *end || !(p->target > 0) || !isfinite(p->target))
            return cu_die(2, "plan: --target-rate: expected a rate > 0 (requests/s), got '%s'", v);
        return 0;
    case O_GPUS: p->gpus = v; return 0;
    case O_TP: p->tps = v; return 0;
    case O_PP: p->pps = v; return 0;
    case O_EP: p->eps = v; return 0;
    case O_REPLICAS: p->reps = v; return 0;
    case O_POOL: p->pool_opt = v; return 0;
    case O_SEARCH:
        if (p->nsearch == MAX_DIMS) return cu_die(2, "plan: at most %d --search options", MAX_DIMS);
        p->searches[p->nsearch++] = v;
        return 0;
    case O_NO_STORE: p->store = 0; return 0;
    case O_TRACE: p->trace_file = v; return 0;
    case O_PEAK:
        p->peak_min = strtod(v, &end);
        if (end == v || *end || !(p->peak_min > 0) || !(p->peak_min <= 1e7))
            return cu_die(2, "plan: --peak-minutes: expected minutes above 0 and at most 1e7 (19 years), got '%s'", v);
        return 0;
    case O_NO_SENS: p->no_sens = 1; return 0;
    case O_OBJECTIVE:
        if (strcmp(v, "cost") && strcmp(v, "energy"))
            return cu_die(2, "plan: --objective: expected cost or energy, got '%s'", v);
        p->energy = !strcmp(v, "energy");
        return 0;
    case O_SEED:
        if ((x = cu_posint("plan", "--seed", v, 2147483647L)) < 0) return 2;
        p->seed = (uint64_t) x;
        return 0;
    default:                  /* --jobs, --seeds, --top */
        if ((x = cu_posint("plan", id == O_JOBS ? "--jobs" : id == O_SEEDS ? "--seeds" : "--top", v, 1024)) < 0) return 2;
        if (id == O_JOBS) p->jobs = (int) x;
        else if (id == O_SEEDS) p->seeds = (int) x;
        else p->top = (int) x;
        return 0;
    }
}

/* ---- planning against a trace's peak ---------------------------------------- */

/* Appends "SECTION.KEY=VALUE" (printf FMT) to P's overrides.  Returns 0, or -1 when full. */
static int peak_set(plan *p, const char *fmt, ...)
{
    int k = p->npeak;
    if (k >= PEAK_SETS || p->nuser >= MAX_USER_SETS + PEAK_SETS) return -1;
    p->npeak++;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->peak_buf[k], sizeof p->peak_buf[k], fmt, ap);
    va_end(ap);
    p->user_sets[p->nuser++] = p->peak_buf[k];
    return 0;
}

/* --trace FILE: the scenario replays FILE (arrival = trace, trace = its absolute
 * path).  Returns 0, or 2 (printed). */
static int plan_trace_sets(plan *p)
{
    if (!p->trace_file) return 0;
    char abs[PATH_MAX], err[1400];
    if (cu_check_in("plan", "--trace", p->trace_file, INFILE_MAX_TRACE, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (!realpath(p->trace_file, abs)) return cu_die(2, "plan: --trace %s: %s", p->trace_file, strerror(errno));
    if (peak_set(p, "workload.arrival=trace") || peak_set(p, "workload.trace=%s", abs))
        return cu_die(2, "plan: too many --set options with --trace");
    return 0;
}

#define PLAN_PEAK_MIN_REQUESTS 100   /* fewest requests a peak window may hold */
#define PLAN_PEAK_MIN_LATENCIES 10   /* shortest peak window, in the SLO's largest latency limits */

/* The peak window of BASE's trace (arrival = trace): the busiest --peak-minutes
 * (10) of it, replayed once (loop = no, its rows measured from an empty system),
 * its clock scaled by --target-rate / the trace's mean rate (1 without one) and
 * the headroom.  Sets the plan's target (the window's rate after scaling), want
 * and rate_set, and adds the window's overrides.  Returns 0, or 2 (printed). */
static int plan_peak(plan *p, const scenario *base)
{
    double len = (p->peak_min > 0 ? p->peak_min : 10) * 60, from, span;
    size_t rows;
    if (scenario_trace_peak(base, len, &from, &rows, &span) != 0 || rows < 2)
        return cu_die(2, "plan: %s: the trace's busiest %g minutes hold fewer than 2 requests", p->file, len / 60);
    /* A window too short to measure certifies nothing: it must hold enough
     * requests for a tail percentile, and last many times the slowest latency
     * the SLO allows (else no request there waits behind another). */
    if (rows < PLAN_PEAK_MIN_REQUESTS)
        return cu_die(2, "plan: --peak-minutes %g: the trace's busiest %g minutes hold %zu requests; a peak window needs at "
                      "least %d (fewer say nothing of the tail the SLO bounds): give a longer --peak-minutes", len / 60,
                      len / 60, rows, PLAN_PEAK_MIN_REQUESTS);
    const slo_spec *slo = scenario_slo(base);
    double lim_ms = 0;
    for (int i = 0; slo && i < slo->n; i++)
        if (slo->t[i].kind == SLO_LATENCY && slo->t[i].limit > lim_ms) lim_ms = slo->t[i].limit;
    double scale = isnan(p->target) ? scenario_speedup(base) : p->target / (scenario_arrival_rate(base) / scenario_speedup(base));
    double sim_s = len / (scale * (p->headroom > 0 ? p->headroom : 1));   /* the window's length as simulated */
    if (lim_ms > 0 && sim_s < PLAN_PEAK_MIN_LATENCIES * lim_ms / 1e3)
        return cu_die(2, "plan: --peak-minutes %g: the window lasts %.4g s as simulated, less than %d x the SLO's largest "
                      "latency limit (%g ms): too short to show any queueing; give a longer --peak-minutes", len / 60, sim_s,
                      PLAN_PEAK_MIN_LATENCIES, lim_ms);
    double speed = scenario_speedup(base);
    double mean = scenario_arrival_rate(base) / speed;       /* the trace's own mean rate, req/s */
    p->peak = 1;
    p->peak_from = from;
    p->peak_len = len;
    p->peak_rows = rows;
    p->peak_span = span;
    p->peak_mean = mean;
    p->peak_scale = isnan(p->target) ? speed : p->target / mean;
    if (peak_set(p, "workload.trace_start_s=%.17g", from) || peak_set(p, "workload.trace_length_s=%.17g", len) ||
        peak_set(p, "workload.loop=no") || peak_set(p, "sim.requests=%zu", rows))
        return cu_die(2, "plan: too many --set options with a trace's peak");
    /* The window's rate as the scenario measures it (rows - 1 over first to last). */
    char err[2048];
    scenario *w = scenario_new();
    if (!w) return cu_die(1, "out of memory");
    if (scenario_load(w, p->file, p->user_sets, p->nuser, err, sizeof err) != 0) {
        scenario_delete(w);
        return cu_die(2, "%s", err);
    }
    double own = scenario_arrival_rate(w) / scenario_speedup(w);
    scenario_delete(w);
    p->target = own * p->peak_scale;
    p->want = p->target * p->headroom;
    snprintf(p->rate_set, sizeof p->rate_set, "workload.speedup=%.10g", p->peak_scale * p->headroom);
    return 0;
}

/* The peak window as a line of the plan's text, or as JSON members. */
static void peak_print(const plan *p, FILE *out)
{
    if (!p->peak) return;
    fprintf(out, "peak window: %.0f s to %.0f s of the trace (%g min of %.3g h): %zu requests, %.4g req/s at its own "
            "clock (mean %.4g), replayed once at x%.4g x headroom %.3g\n", p->peak_from, p->peak_from + p->peak_len,
            p->peak_len / 60, p->peak_span / 3600, p->peak_rows, p->target / p->peak_scale, p->peak_mean, p->peak_scale,
            p->headroom);
}

static void peak_json(const plan *p, FILE *out)
{
    if (!p->peak) return;
    fprintf(out, ", \"peak_window\": {\"start_s\": %.6g, \"length_s\": %.6g, \"requests\": %zu, \"rate_rps\": %.6g, "
            "\"window_trace_rate_rps\": %.6g, \"trace_mean_rps\": %.6g, \"trace_span_s\": %.6g, \"scale\": %.6g}",
            p->peak_from, p->peak_len, p->peak_rows, p->target, p->target / p->peak_scale, p->peak_mean, p->peak_span,
            p->peak_scale);
}

/* Parses the command line into P.  Returns CLI_GO or the exit status. */
static int plan_parse(int argc, char **argv, plan *p)
{
    cli_args a;
    p->target = NAN;
    p->store = 1;
    p->seeds = 3;
    p->top = 5;
    int rc = cli_parse(&CMD, argc, argv, &a, plan_opt, p);
    if (rc != CLI_GO) return rc;
    if (a.npos > 1) return cu_die(2, "plan: more than one scenario file ('%s', '%s')", a.pos[0], a.pos[1]);
    if (a.npos == 0) return cu_die(2, "plan: missing scenario FILE (see latsim plan --help)");
    p->file = a.pos[0];
    p->json = a.json;
    memcpy(p->user_sets, a.sets, (size_t) a.nsets * sizeof *p->user_sets);
    p->nuser = a.nsets;
    if (plan_trace_sets(p) != 0) return 2;
    /* The arrival rate is --target-rate's: a search or --set of it would be overridden. */
    for (int i = 0; i < p->nsearch + p->nuser; i++) {
        const char *v = i < p->nsearch ? p->searches[i] : p->user_sets[i - p->nsearch];
        const char *eq = strchr(v, '=');
        size_t kl = eq ? (size_t) (eq - v) : strlen(v);
        if ((kl == 13 && !strncmp(v, "workload.rate", 13)) || (kl == 16 && !strncmp(v, "workload.speedup", 16)))
            return cu_die(2, "plan: %s %.*s: the arrival rate is set by --target-rate (R x headroom); use latsim sweep to vary it",
                          i < p->nsearch ? "--search" : "--set", (int) kl, v);
    }
    if (p->jobs <= 0) p->jobs = taskmpi_size() > 1 ? 1 : task_cpus();   /* under mpirun the other ranks simulate, as in explore */
    p->dbpath = cu_db_path(a.db);
    char err[2048];
    if (cu_check_db_path(p->dbpath, err, sizeof err) != 0) return cu_die(2, "%s", err);
    return CLI_GO;
}

/* Loads the scenario as given into BASE (its pools, [slo] and workload) and
 * sets the rate simulated.  Returns 0 or 2 (printed). */
static int plan_base(plan *p, scenario *base)
{
    char err[2048];
    if (scenario_load(base, p->file, p->user_sets, p->nuser, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (scenario_slo(base)->n == 0) return cu_die(2, "plan: %s has no [slo] section: nothing to meet (see docs/planning.md)", p->file);
    scenario_arrival arr = scenario_arrival_kind(base);
    if (arr == SCENARIO_ARRIVAL_USERS)
        return cu_die(2, "plan: %s has a closed-loop workload (users): --target-rate needs an open-loop one (rate or trace); "
                      "use latsim sweep --vary workload.users=...", p->file);
    if (arr == SCENARIO_ARRIVAL_SCHEDULE)
        fprintf(stderr, "latsim: plan: note: %s's rate schedule is replaced by the constant target rate\n", ERRMSG_SHOWN(p->file));
    p->headroom = scenario_slo(base)->headroom;
    if (arr == SCENARIO_ARRIVAL_TRACE && (p->trace_file || p->peak_min > 0 || isnan(p->target))) return plan_peak(p, base);
    if (p->peak_min > 0) return cu_die(2, "plan: --peak-minutes: %s does not replay a trace (arrival = trace, or --trace FILE)", p->file);
    if (isnan(p->target)) return cu_die(2, "plan: missing --target-rate R (see latsim plan --help)");
    p->want = p->target * p->headroom;
    if (arr == SCENARIO_ARRIVAL_TRACE) {
        double r1 = scenario_arrival_rate(base) / scenario_speedup(base);
        snprintf(p->rate_set, sizeof p->rate_set, "workload.speedup=%.10g", p->want / r1);
    } else snprintf(p->rate_set, sizeof p->rate_set, "workload.rate=%.10g", p->want);
    /* A target rate the scenario refuses (1e-300: the run would outlast the
     * simulated clock) is --target-rate's error, before any dimension. */
    if (loads_with(p, p->rate_set, err, sizeof err) != 0) {
        relabel(p, err, sizeof err);
        return cu_die(2, "%s", err);
    }
    return 0;
}

/* A --search on a pool's replicas or servers (SECTION.KEY=SPEC, pool PI): the
 * monotone dimension, bisected between its smallest and largest value; with
 * one already, the widest range stays monotone and the other becomes an
 * ordinary dimension.  Returns 0 or the exit status (printed). */
static int plan_mono_search(plan *p, const char *section, const char *key, const char *spec, int pi)
{
    dim tmp = { .opt = "--search" };
    snprintf(tmp.section, sizeof tmp.section, "%s", section);
    snprintf(tmp.key, sizeof tmp.key, "%s", key);
    if (parse_values(&tmp, spec)) { for (int k = 0; k < tmp.n; k++) free(tmp.vals[k]); return 2; }
    int ok = 1, a = INT_MAX, b = 0;
    for (int k = 0; k < tmp.n; k++) {
        char *end;
        double v = strtod(tmp.vals[k], &end);
        ok &= !*end && v >= 1 && v <= INT_MAX / 4 && v == floor(v);
        if (ok && v < a) a = (int) v;
        if (ok && v > b) b = (int) v;
    }
    for (int k = 0; k < tmp.n; k++) free(tmp.vals[k]);
    if (!ok) return cu_die(2, "plan: --search %s.%s=%s: expected whole numbers from 1 to %d", section, key, spec, INT_MAX / 4);
    if (p->mono.n >= 0 && !strcmp(p->mono.section, section) && !strcmp(p->mono.key, key))
        return cu_die(2, "plan: --search %s.%s: searched twice (with --replicas or another --search)", section, key);
    if (p->mono.n >= 0) {
        int widen = b - a > p->mono_hi - p->mono_lo;
        if (p->ndims == MAX_DIMS) return cu_die(2, "plan: at most %d dimensions", MAX_DIMS);
        dim *d = &p->dims[p->ndims++];
        if (!widen) {
            snprintf(d->section, sizeof d->section, "%s", section);
            snprintf(d->key, sizeof d->key, "%s", key);
            d->opt = "--search";
            return parse_values(d, spec) ? 2 : 0;
        }
        /* The old monotone dimension becomes a list. */
        d->opt = p->mono.opt;
        snprintf(d->section, sizeof d->section, "%s", p->mono.section);
        snprintf(d->key, sizeof d->key, "%s", p->mono.key);
        for (int v = p->mono_lo; v <= p->mono_hi; v++) {
            char t[32];
            snprintf(t, sizeof t, "%d", v);
            if (add_value(d, t)) return 2;
        }
    }
    snprintf(p->mono.section, sizeof p->mono.section, "%s", section);
    snprintf(p->mono.key, sizeof p->mono.key, "%s", key);
    p->mono.opt = "--search";
    p->mono.n = 0;
    p->mono_lo = a;
    p->mono_hi = b;
    p->mono_pool = pi;
    return 0;
}

/* The dimensions: --gpus, --tp, --pp and --ep, --replicas (monotone), every --search.
 * Returns 0 or the exit status (printed). */
static int plan_dims(plan *p, const scenario *base)
{
    int llm = -1;
    for (int i = 0; i < scenario_npools(base); i++)
        if (scenario_pool_takes(base, i, "tp") && (p->pool_opt ? !strcmp(scenario_pool_name(base, i), p->pool_opt) : llm < 0))
            llm = i;
    if (p->pool_opt && llm < 0) return cu_die(2, "plan: --pool %s: %s has no LLM pool of that name", p->pool_opt, p->file);
    if ((p->gpus || p->tps || p->pps || p->eps || p->reps) && llm < 0)
        return cu_die(2, "plan: --gpus/--tp/--pp/--ep/--replicas need an LLM pool, and %s has none (use --search)", p->file);
    /* Disaggregated (a role = prefill and a role = decode pool, no --pool): the
     * options search both pools, independently (xPyD: the decode replicas
     * bisected, the prefill replicas a list). */
    int pre = -1, dec = -1;
    for (int i = 0; !p->pool_opt && i < scenario_npools(base); i++) {
        const char *role = scenario_pool_takes(base, i, "role") ? scenario_pool_value(base, i, "role") : NULL;
        if (role && !strcmp(role, "prefill") && pre < 0) pre = i;
        if (role && !strcmp(role, "decode") && dec < 0) dec = i;
    }
    int pd = pre >= 0 && dec >= 0;
    if (pd) llm = dec;
    const char *opts[4] = { p->gpus, p->tps, p->pps, p->eps }, *keys[4] = { "gpu", "tp", "pp", "ep" };
    const char *names[4] = { "--gpus", "--tp", "--pp", "--ep" };
    for (int k = 0; k < 4; k++) {
        if (!opts[k]) continue;
        for (int j = 0; j < (pd ? 2 : 1); j++) {
            if (p->ndims == MAX_DIMS) return cu_die(2, "plan: at most %d dimensions", MAX_DIMS);
            dim *d = &p->dims[p->ndims++];
            snprintf(d->section, sizeof d->section, "pool %s", scenario_pool_name(base, j ? pre : llm));
            snprintf(d->key, sizeof d->key, "%s", keys[k]);
            d->opt = names[k];
            if (parse_values(d, opts[k])) return 2;
        }
    }
    if (p->reps && pd) {
        int a, b;
        if (parse_replicas(p->reps, &a, &b) != 0) return 2;
        if (p->ndims == MAX_DIMS) return cu_die(2, "plan: at most %d dimensions", MAX_DIMS);
        dim *d = &p->dims[p->ndims++];
        snprintf(d->section, sizeof d->section, "pool %s", scenario_pool_name(base, pre));
        snprintf(d->key, sizeof d->key, "replicas");
        d->opt = "--replicas";
        for (int v = a; v <= b; v++) {
            char t[32];
            snprintf(t, sizeof t, "%d", v);
            if (add_value(d, t)) return 2;
        }
    }
    if (p->reps) {
        snprintf(p->mono.section, sizeof p->mono.section, "pool %s", scenario_pool_name(base, llm));
        snprintf(p->mono.key, sizeof p->mono.key, "replicas");
        p->mono.opt = "--replicas";
        if (parse_replicas(p->reps, &p->mono_lo, &p->mono_hi) != 0) return 2;
        p->mono.n = 0;
        p->mono_pool = llm;
    }
    for (int s = 0; s < p->nsearch; s++) {
        char section[160], key[64];
        const char *spec;
        if (split_key(p->searches[s], section, sizeof section, key, sizeof key, &spec) != 0)
            return cu_die(2, "plan: --search '%s': expected \"SECTION.KEY=FROM:TO:STEP\" or \"SECTION.KEY=a,b,c\"", p->searches[s]);
        if (!scenario_has_section(base, section)) return cu_die(2, "plan: --search %s.%s: %s has no section [%s]", section, key, p->file, section);
        int pi = -1;
        for (int i = 0; i < scenario_npools(base); i++) {
            char sec[80];
            snprintf(sec, sizeof sec, "pool %s", scenario_pool_name(base, i));
            if (!strcmp(sec, section)) pi = i;
        }
        if (pi >= 0 && (!strcmp(key, "replicas") || !strcmp(key, "servers"))) {
            int rc = plan_mono_search(p, section, key, spec, pi);
            if (rc) return rc;
            continue;
        }
        if (p->ndims == MAX_DIMS) return cu_die(2, "plan: at most %d dimensions", MAX_DIMS);
        dim *d = &p->dims[p->ndims++];
        snprintf(d->section, sizeof d->section, "%s", section);
        snprintf(d->key, sizeof d->key, "%s", key);
        d->opt = "--search";
        if (parse_values(d, spec)) return 2;
    }
    return 0;
}

/* Every value of every dimension must be a valid key and value, and both
 * ends of the bisected one (--replicas 1:2000000 is refused here, not when the
 * bisection gets there).  Then P takes over BASE's [slo].  Returns 0 or 2
 * (printed). */
static int plan_check_dims(plan *p, scenario *base)
{
    char err[2048], set[400];
    for (int i = 0; i < p->ndims; i++)
        for (int k = 0; k < p->dims[i].n; k++) {
            snprintf(set, sizeof set, "%s.%s=%s", p->dims[i].section, p->dims[i].key, p->dims[i].vals[k]);
            if (loads_with(p, set, err, sizeof err) != 0) {
                cu_relabel(err, sizeof err, p->dims[i].opt, p->dims[i].section, p->dims[i].key);
                return cu_die(2, "%s", err);
            }
        }
    for (int k = 0; k < 2 && p->mono.n >= 0; k++) {
        snprintf(set, sizeof set, "%s.%s=%d", p->mono.section, p->mono.key, k ? p->mono_hi : p->mono_lo);
        if (loads_with(p, set, err, sizeof err) != 0) {
            cu_relabel(err, sizeof err, p->mono.opt, p->mono.section, p->mono.key);
            return cu_die(2, "%s", err);
        }
    }
    p->umax = 1;
    const slo_spec *bs = scenario_slo(base);
    for (int t = 0; t < bs->n; t++) if (bs->t[t].kind == SLO_UTIL_MAX) p->umax = fmin(p->umax, bs->t[t].limit);
    scenario_take_slo(base, &p->slo);          /* taken over from base */
    if (p->mono.n >= 0) {
        if (shared_key(p, p->mono.key)) snprintf(p->mono_name, sizeof p->mono_name, "%s.%s", short_section(p->mono.section), p->mono.key);
        else snprintf(p->mono_name, sizeof p->mono_name, "%s", p->mono.key);
    }
    return 0;
}

/* Configuration C, loaded at monotone value M1 into S1: its cost per unit of
 * the monotone value and, for a generic pool's servers, the utilisation bound
 * and the Erlang C estimate; a generic pool's size as an ordinary dimension
 * below its utilisation bound rules the configuration out.  (A refusal at
 * M1 + 1 leaves the cost per unit 0.)  Returns 0, or 1 when out of memory
 * (printed). */
static int plan_estimate(plan *p, combo *c, int m1, const scenario *s1)
{
    char reason[300];
    double c1 = task_config_cost(s1);
    double svc, cv;                  /* a generic pool's mean service time, ms, and its CV */
    c->fixed = c1;
    c->unit = 0;
    if (p->mono.n >= 0) {
        scenario *s2 = scenario_new();
        if (!s2) return cu_die(1, "out of memory");
        int st2 = load_config(p, c, m1 + 1, p->dbpath, s2, reason, sizeof reason);
        if (st2 == 0) { c->unit = task_config_cost(s2) - c1; c->fixed = c1 - c->unit * m1; }
        scenario_delete(s2);
        /* Generic pool: utilisation bound and Erlang C.  Only a pool that
         * every request reaches has the workload's rate as its inflow. */
        if (scenario_pool_service(s1, p->mono_pool, &svc, &cv) == 0 && !strcmp(p->mono.key, "servers") &&
            scenario_pool_whole_inflow(s1, p->mono_pool)) {
            double load = scenario_arrival_rate(s1) * svc / 1000.0;
            int cmin = (int) floor(load / p->umax) + 1;
            if (cmin - 1 > c->b.lo) c->b.lo = cmin - 1;
            if (cmin > p->mono_hi)
                snprintf(c->bound, sizeof c->bound, "%s needs %s >= %d to carry its offered load (%.4g req/s x %.4g ms = %.4g %s busy, "
                         "utilization_max %.3g), and the search ends at %s=%d (utilisation %.3g)", p->mono.section, p->mono.key, cmin,
                         scenario_arrival_rate(s1), svc, load, p->mono.key, p->umax, p->mono.key, p->mono_hi,
                         load / p->mono_hi);
            c->b.hint = plan_erlang_servers(&p->slo, scenario_arrival_rate(s1), svc, cv, cmin, p->mono_hi);
            if (isnan(c->b.hint)) c->b.hint = cmin;
        }
    }
    for (int ti = 0; ti < scenario_npools(s1) && !c->bound[0]; ti++) {
        if (scenario_pool_service(s1, ti, &svc, &cv) != 0 || (p->mono.n >= 0 && ti == p->mono_pool) ||
            !scenario_pool_whole_inflow(s1, ti)) continue;
        char sec[80];
        snprintf(sec, sizeof sec, "pool %s", scenario_pool_name(s1, ti));
        int searched = 0;
        for (int i = 0; i < p->ndims; i++) searched |= !strcmp(p->dims[i].section, sec) && !strcmp(p->dims[i].key, "servers");
        double load = scenario_arrival_rate(s1) * svc / 1000.0;
        int servers = scenario_pool_servers(s1, ti);
        if (searched && servers <= (int) floor(load / p->umax))
            snprintf(c->bound, sizeof c->bound, "%s: servers=%d cannot carry its offered load (%.4g req/s x %.4g ms = %.4g servers busy, "
                     "utilisation %.3g, utilization_max %.3g)", sec, servers, scenario_arrival_rate(s1), svc, load,
                     load / servers, p->umax);
    }
    if (c->bound[0]) c->b.done = 1;
    return 0;
}

/* The configurations: the product of the dimensions, each with its label,
 * bracket, cost and estimates; refusals rule a configuration out.  Returns 0
 * or the exit status (printed). */
static int plan_configs(plan *p)
{
    char reason[300];
    long total = 1;
    for (int i = 0; i < p->ndims; i++) total *= p->dims[i].n;
    if (total > MAX_COMBOS) return cu_die(2, "plan: %ld configurations (at most %d): narrow the search", total, MAX_COMBOS);
    p->c = calloc((size_t) total, sizeof *p->c);
    if (!p->c) return cu_die(1, "out of memory");
    p->nc = (int) total;
    for (int ci = 0; ci < p->nc; ci++) {
        combo *c = &p->c[ci];
        int r = ci;
        for (int i = p->ndims - 1; i >= 0; i--) {
            int k = r % p->dims[i].n;
            r /= p->dims[i].n;
            snprintf(c->sets[i], sizeof c->sets[i], "%s.%s=%s", p->dims[i].section, p->dims[i].key, p->dims[i].vals[k]);
        }
        c->nsets = p->ndims;
        c->label[0] = '\0';
        for (int i = 0; i < p->ndims; i++) {
            const char *kv = c->sets[i] + strlen(p->dims[i].section) + 1;
            size_t l = strlen(c->label);
            if (shared_key(p, p->dims[i].key))
                snprintf(c->label + l, sizeof c->label - l, "%s%s.%s", l ? " " : "", short_section(p->dims[i].section), kv);
            else snprintf(c->label + l, sizeof c->label - l, "%s%s", l ? " " : "", kv);
        }
        c->b.lo = p->mono.n >= 0 ? p->mono_lo - 1 : 0;
        c->b.hi = p->mono.n >= 0 ? p->mono_hi + 1 : 1;
        c->b.hint = NAN;
        c->closest = -INFINITY;
        c->closest_eval = -1;
        c->best_eval = -1;
        /* Cost is linear in the monotone value; refusals rule the configuration out. */
        scenario *s1 = scenario_new();
        if (!s1) return cu_die(1, "out of memory");
        int m1 = p->mono.n >= 0 ? p->mono_lo : 0;
        int st = load_config(p, c, m1, p->dbpath, s1, reason, sizeof reason);
        if (st == 0) st = plan_estimate(p, c, m1, s1);
        else if (st == 1) { c->infeasible = 1; snprintf(c->reason, sizeof c->reason, "%s", reason); st = 0; }
        scenario_delete(s1);
        if (st) return st;
    }
    return 0;
}

/* The cost bound: the cheapest configuration known to meet the SLO (P->best,
 * P->best_cost; -1 none): at its smallest meeting value with the first seed,
 * or at the value confirmation raised it to (its answer, when larger); one
 * that failed confirmation does not count. */
static void update_best(plan *p)
{
    p->best = -1;
    for (int ci = 0; ci < p->nc; ci++) {
        combo *c = &p->c[ci];
        if (c->infeasible || c->confirmed < 0 || (p->mono.n >= 0 ? c->b.hi > p->mono_hi : c->best_eval < 0)) continue;
        int m = p->mono.n >= 0 ? (c->b.answer > c->b.hi ? c->b.answer : c->b.hi) : 1;
        double cost = p->mono.n >= 0 ? cost_at(c, m) : c->fixed;
        if (p->best < 0 || cost < p->best_cost) { p->best = ci; p->best_cost = cost; }
    }
}

/* Rounds: every open configuration simulates its next value, in parallel,
 * and the cheapest known meeting configuration bounds everyone's cost.
 * Returns 0 or the exit status (printed). */
static int plan_rounds(plan *p)
{
    int rc;
    update_best(p);
    for (int round = 0; round < 200; round++) {
        int from = p->ne;
        for (int ci = 0; ci < p->nc; ci++) {
            combo *c = &p->c[ci];
            if (c->infeasible || c->b.done || c->b.pruned) continue;
            if (p->mono.n < 0) {                /* no monotone dimension: one simulation each */
                if (round > 0) { c->b.done = 1; continue; }
                if (!new_eval(p, ci, 0, "candidate", p->seed0)) return cu_die(1, "out of memory");
                continue;
            }
            int x = next_value(p, c);
            if (x <= 0) continue;
            if (!new_eval(p, ci, x, "candidate", p->seed0)) return cu_die(1, "out of memory");
        }
        if (p->ne == from) break;
        if ((rc = run_evals(p, from, p->dbpath)) != 0) return rc;
        for (int i = from; i < p->ne; i++) {
            eval *e = &p->e[i];
            combo *c = &p->c[e->combo];
            if (p->mono.n >= 0) { update(p, c, e); continue; }
            if (e->met) { c->best_eval = i; c->b.answer = 1; }
            else {
                double w = closeness(e);
                if (c->closest_eval < 0 || w > c->closest) { c->closest = w; c->closest_eval = i; }
            }
        }
        update_best(p);
    }
    return 0;
}

/* The search, then the runner-ups made minimal: a configuration pruned by cost
 * after one of its values met the SLO is bisected down to its smallest meeting
 * value like the winner (its lower bound already costs more than the best, so
 * it cannot win; its row must still be the least it needs).  Returns 0 or the
 * exit status. */
static int plan_search(plan *p)
{
    int rc;
    if ((rc = plan_rounds(p)) != 0) return rc;
    if (p->mono.n >= 0) {
        int any = 0;
        for (int ci = 0; ci < p->nc; ci++)
            if (p->c[ci].b.pruned && p->c[ci].b.hi <= p->mono_hi) { p->c[ci].b.pruned = 0; any = 1; }
        p->finishing = 1;
        if (any && (rc = plan_rounds(p)) != 0) return rc;
        p->finishing = 0;
    }
    /* An answer confirmation raised (a seed missed at the first seed's smallest
     * value) stays raised when the search runs again (plan_solve). */
    for (int ci = 0; ci < p->nc; ci++)
        if (p->mono.n >= 0 && !p->c[ci].infeasible && p->c[ci].b.hi <= p->mono_hi && p->c[ci].b.answer < p->c[ci].b.hi)
            p->c[ci].b.answer = p->c[ci].b.hi;
    return 0;
}

/* Confirms the cheapest with more seeds, raising its value until every seed
 * meets the SLO; sets P->winner (-1 none).  Returns 0 or the exit status. */
static int plan_confirm(plan *p)
{
    int rc;
    p->winner = -1;
    /* Each attempt confirms a configuration, raises one's answer or rules one
     * out (confirmed -1): the loop ends.  (It used to give up after 8 attempts
     * and report that nothing met the SLO although brute force found one.) */
    for (;;) {
        int bi = -1;
        double bc = INFINITY;
        for (int ci = 0; ci < p->nc; ci++) {
            combo *c = &p->c[ci];
            if (c->infeasible || c->confirmed < 0 || c->best_eval < 0 || (p->mono.n >= 0 && c->b.answer <= 0)) continue;
            double cost = objective_at(p, c);
            /* Equal cost: the larger worst SLO margin (of its evaluation at the answer) wins. */
            if (cost < bc || (bi >= 0 && cost == bc && c->best_eval >= 0 && p->c[bi].best_eval >= 0 &&
                              slo_worst_margin(&p->e[c->best_eval].slo) > slo_worst_margin(&p->e[p->c[bi].best_eval].slo))) {
                bc = cost;
                bi = ci;
            }
        }
        if (bi < 0) break;
        combo *c = &p->c[bi];
        if (c->confirmed > 0) { p->winner = bi; break; }   /* --objective energy: still the lowest */
        int from = p->ne;
        for (int k = 1; k < p->seeds; k++)
            if (!new_eval(p, bi, p->mono.n >= 0 ? c->b.answer : 0, "confirm", p->seed0 + (uint64_t) k)) return cu_die(1, "out of memory");
        if (c->best_eval >= 0 && p->e[c->best_eval].m != (p->mono.n >= 0 ? c->b.answer : 0))
            if (!new_eval(p, bi, c->b.answer, "confirm", p->seed0)) return cu_die(1, "out of memory");
        if ((rc = run_evals(p, from, p->dbpath)) != 0) return rc;
        int all = 1;
        for (int i = from; i < p->ne; i++) {
            all &= p->e[i].met;
            double w = p->e[i].met ? 0 : closeness(&p->e[i]);
            if (!p->e[i].met && (c->closest_eval < 0 || w > c->closest)) { c->closest = w; c->closest_eval = i; }
        }
        if (all) {
            c->confirmed = 1;
            /* Energy: its power at the answer is now simulated; another may be lower. */
            if (p->energy) continue;
            p->winner = bi;
            break;
        }
        if (p->mono.n >= 0 && c->b.answer < p->mono_hi) c->b.answer++;   /* a seed missed: one more */
        else c->confirmed = -1;
    }
    return 0;
}

/* The search and the confirmation, again while confirmation raised the bound
 * that pruned configurations: a configuration pruned because its cheapest
 * possible cost was above the best found with the first seed is searched
 * again when confirmation (more seeds) raised the winner's cost above that
 * cheapest possible cost, so that the answer is the cheapest configuration
 * meeting the SLO with every seed.  Sets P->winner.  Returns 0 or the exit
 * status. */
static int plan_solve(plan *p)
{
    int rc;
    for (int pass = 0; pass < 64; pass++) {
        if ((rc = plan_search(p)) != 0 || (rc = plan_confirm(p)) != 0) return rc;
        if (p->energy || p->mono.n < 0) return 0;
        /* No winner: every pruned configuration may be the answer. */
        double wc = p->winner >= 0 ? cost_at(&p->c[p->winner], p->c[p->winner].b.answer) : INFINITY;
        int reopened = 0;
        for (int ci = 0; ci < p->nc; ci++) {
            combo *c = &p->c[ci];
            int lb = c->b.lo + 1 > p->mono_lo ? c->b.lo + 1 : p->mono_lo;
            if (!c->b.pruned || c->infeasible || cost_at(c, lb) >= wc) continue;
            c->b.pruned = 0;
            c->b.done = 0;
            reopened++;
        }
        if (!reopened) return 0;
        p->reopened += reopened;
    }
    return 0;
}

/* The SLO term of E that fails by the largest share of its limit, as
 * "e2e_p99_ms 23500 > 15000", or the saturation, into OUT. */
static void worst_term(const eval *e, char *out, size_t n) { plan_worst_term(&e->slo, &e->o.rep, e->o.rate, out, n); }

/* The evaluation of configuration CI at monotone value M with the first seed
 * (-1 none). */
static int eval_at(const plan *p, int ci, int m)
{
    for (int k = 0; k < p->ne; k++)
        if (p->e[k].combo == ci && p->e[k].m == m && p->e[k].t.seed == p->seed0 && p->e[k].factor == 1) return k;
    return -1;
}

/* Configuration CI's verdict: KIND ("meets", "missed", "pruned", "ruled_out",
 * "below_bound", "failed_confirmation"), *VALUE its smallest meeting monotone
 * value (0 none), and the why in WHY. */
static const char *verdict(const plan *p, int ci, int *value, char *why, size_t n)
{
    const combo *c = &p->c[ci];
    char closest[300], below[300], lo[300];
    plan_verdict_in v = { c->infeasible ? c->reason : NULL, c->bound, c->confirmed < 0, p->seed0, p->seeds, p->mono.n >= 0,
                          p->mono_name, p->mono_lo, p->mono_hi, &c->b, c->fixed, c->unit, c->best_eval >= 0, NULL, NULL, 0, NULL,
                          p->winner >= 0 ? cost_at(&p->c[p->winner], p->c[p->winner].b.answer) : p->best_cost, p->best_cost };
    if (c->closest_eval >= 0) { worst_term(&p->e[c->closest_eval], closest, sizeof closest); v.term_closest = closest; }
    int k = -1;                        /* a missing evaluation one below the answer (any seed) */
    for (int i = 0; i < p->ne && k < 0 && c->b.answer > 0; i++)
        if (p->e[i].combo == ci && p->e[i].m == c->b.answer - 1 && !p->e[i].met && p->e[i].factor == 1) k = i;
    if (k >= 0) { worst_term(&p->e[k], below, sizeof below); v.term_below = below; v.below_seed = p->e[k].t.seed; }
    k = c->b.lo >= p->mono_lo ? eval_at(p, ci, c->b.lo) : -1;
    if (k >= 0) { worst_term(&p->e[k], lo, sizeof lo); v.term_lo = lo; }
    return plan_verdict(&v, value, why, n);
}
/* The verdict of every configuration, one line each ("  LABEL  VERDICT"). */
static void print_verdicts(const plan *p, FILE *out)
{
    int wl = 13;
    for (int ci = 0; ci < p->nc; ci++) {
        int l = (int) strlen(ERRMSG_SHOWN(p->c[ci].label));
        if (l > wl) wl = l;
    }
    fprintf(out, "verdicts (every configuration searched):\n");
    for (int ci = 0; ci < p->nc; ci++) {
        char why[1200];
        int v;
        verdict(p, ci, &v, why, sizeof why);
        fprintf(out, "  %-*s  %s%s\n", wl, p->c[ci].label[0] ? ERRMSG_SHOWN(p->c[ci].label) : "(as given)", ci == p->winner ? "CHOSEN: " : "",
                ERRMSG_SHOWN(why));
    }
}

/* The verdicts as a JSON array into OUT. */
static void verdicts_json(const plan *p, FILE *out)
{
    fputs("[", out);
    for (int ci = 0; ci < p->nc; ci++) {
        char why[1200];
        int v;
        const char *kind = verdict(p, ci, &v, why, sizeof why);
        fputs(ci ? ", {\"configuration\": " : "{\"configuration\": ", out);
        report_json_str(out, p->c[ci].label);
        fprintf(out, ", \"verdict\": \"%s\", \"chosen\": %s", kind, ci == p->winner ? "true" : "false");
        if (p->mono.n >= 0 && v > 0) fprintf(out, ", \"%s\": %d, \"usd_per_hour\": %.6g", p->mono.key, v, cost_at(&p->c[ci], v));
        else if (p->mono.n < 0 && !strcmp(kind, "meets")) fprintf(out, ", \"usd_per_hour\": %.6g", p->c[ci].fixed);
        fputs(", \"why\": ", out);
        report_json_str(out, why);
        fputs("}", out);
    }
    fputs("]", out);
}

/* The winner's goodput: the largest multiple of the planned rate at which it
 * still meets the SLO (first seed), bracketed by a coarse round of factors run
 * in parallel and refined by a second round inside the bracket.  Sets
 * P->goodput_lo (largest meeting factor, at least 1) and P->goodput_hi
 * (smallest missing, NAN when even the largest meets).  Returns 0 or the exit status. */
static int plan_goodput(plan *p)
{
    const combo *c = &p->c[p->winner];
    int m = p->mono.n >= 0 ? c->b.answer : 0;
    const char *eq = strchr(p->rate_set, '=');
    double base = eq ? strtod(eq + 1, NULL) : NAN;
    p->goodput_lo = 1;
    p->goodput_hi = NAN;
    if (!eq || !(base > 0)) return 0;
    for (int round = 0; round < 2; round++) {
        double f[PLAN_GOODPUT_MAX];
        int nf = plan_goodput_factors(round, p->goodput_lo, p->goodput_hi, f), met[PLAN_GOODPUT_MAX];
        if (nf == 0) break;
        int from = p->ne;
        for (int i = 0; i < nf; i++) {
            eval *e = new_eval(p, p->winner, m, "goodput", p->seed0);
            if (!e) return cu_die(1, "out of memory");
            e->factor = f[i];
            snprintf(e->rate_set, sizeof e->rate_set, "%.*s=%.10g", (int) (eq - p->rate_set), p->rate_set, base * f[i]);
        }
        int rc = run_evals(p, from, p->dbpath);
        if (rc) return rc;
        for (int i = 0; i < nf; i++) met[i] = p->e[from + i].met;
        plan_goodput_bracket(f, met, nf, &p->goodput_lo, &p->goodput_hi);
    }
    return 0;
}

/* No configuration meets the SLO: says how close the best came (the missing
 * evaluation with the best worst margin), or, when nothing was simulated, what
 * ruled every configuration out.  Returns 2. */
static int plan_no_winner(const plan *p)
{
    int ce = -1;
    double w = -INFINITY;
    for (int ci = 0; ci < p->nc; ci++)
        if (p->c[ci].closest_eval >= 0 && (ce < 0 || p->c[ci].closest > w)) { ce = p->c[ci].closest_eval; w = p->c[ci].closest; }
    if (ce < 0) {
        int nb = 0, ni = 0, first_b = -1, first_i = -1;
        for (int ci = 0; ci < p->nc; ci++) {
            if (p->c[ci].bound[0]) { nb++; if (first_b < 0) first_b = ci; }
            if (p->c[ci].infeasible) { ni++; if (first_i < 0) first_i = ci; }
        }
        char why[1000] = "";
        if (first_b >= 0) {
            const combo *b = &p->c[first_b];
            snprintf(why, sizeof why, "%d of %d configurations cannot carry the load (e.g. %s%s%s)", nb, p->nc, b->label,
                     b->label[0] ? ": " : "", b->bound);
        }
        if (first_i >= 0) {
            size_t l = strlen(why);
            snprintf(why + l, sizeof why - l, "%s%d of %d are refused by the scenario (e.g. %.150s: %.200s)", l ? "; " : "", ni, p->nc,
                     p->c[first_i].label, p->c[first_i].reason);
        }
        if (!why[0]) snprintf(why, sizeof why, "no simulation was run");
        return cu_die(2, "plan: no configuration meets the SLO at %.4g req/s (%.4g x headroom %.3g): %s; nothing was simulated",
                      p->want, p->target, p->headroom, why);
    }
    const eval *e = &p->e[ce];
    const slo_check *worst = NULL;
    for (int i = 0; i < e->slo.n; i++) {
        const slo_check *k = &e->slo.c[i];
        double rel = isnan(k->value) ? -INFINITY : k->margin / k->t->limit;
        if (!worst || rel < (isnan(worst->value) ? -INFINITY : worst->margin / worst->t->limit)) worst = k;
    }
    char what[300];
    if (report_get(&e->o.rep, "", "saturated", "value") > 0 || !worst || isnan(worst->value))
        snprintf(what, sizeof what, "saturated (throughput %.4g of %.4g req/s)", report_get(&e->o.rep, "", "throughput_rps", "value"), e->o.rate);
    else
        snprintf(what, sizeof what, "%s %.4g vs limit %.4g (%.0f %% over)", worst->t->key, worst->value, worst->t->limit,
                 100 * (worst->value - worst->t->limit) / worst->t->limit);
    char at[700];
    if (p->mono.n >= 0) snprintf(at, sizeof at, "%s%s%s=%d", e->combo >= 0 ? p->c[e->combo].label : "",
                                 e->combo >= 0 && p->c[e->combo].label[0] ? " " : "", p->mono_name, e->m);
    else snprintf(at, sizeof at, "%s", e->combo >= 0 ? p->c[e->combo].label : "");
    if (!at[0]) snprintf(at, sizeof at, "the scenario as given");     /* no dimension: no label */
    return cu_die(2, "plan: no configuration meets the SLO at %.4g req/s (%.4g x headroom %.3g); the closest, %s, gives %s",
                  p->want, p->target, p->headroom, at, what);
}

/* The candidates: each configuration's answer, cheapest first but the winner
 * first of all (confirmation may have raised it above another), and the
 * evaluation shown for each (the base seed at its answer).  Returns 0 or 1. */
static int plan_candidates(plan *p)
{
    p->cs = calloc((size_t) p->nc, sizeof *p->cs);
    p->shown = calloc((size_t) (p->nc + 1), sizeof *p->shown);
    if (!p->cs || !p->shown) return cu_die(1, "out of memory");
    for (int ci = 0; ci < p->nc; ci++) {
        combo *c = &p->c[ci];
        if (c->infeasible || c->best_eval < 0 || c->confirmed < 0) continue;
        if (p->mono.n >= 0 && c->b.answer <= 0) continue;
        p->cs[p->ncs++] = (cand) { ci, p->mono.n >= 0 ? cost_at(c, c->b.answer) : c->fixed, power_at_answer(p, c, 0), objective_at(p, c) };
    }
    qsort(p->cs, (size_t) p->ncs, sizeof *p->cs, cmp_cand);
    for (int i = 0; i < p->ncs; i++)
        if (p->cs[i].combo == p->winner) {
            cand w = p->cs[i];
            memmove(p->cs + 1, p->cs, (size_t) i * sizeof *p->cs);
            p->cs[0] = w;
            break;
        }
    for (int ci = 0; ci < p->nc; ci++) {
        p->pruned += p->c[ci].b.pruned;
        p->infeasible += p->c[ci].infeasible;
        p->bounded += p->c[ci].bound[0] != 0;
    }
    for (int i = 0; i < p->ncs; i++) {
        combo *c = &p->c[p->cs[i].combo];
        p->shown[i] = c->best_eval;
        for (int k = 0; k < p->ne; k++)
            if (p->e[k].combo == p->cs[i].combo && p->e[k].m == (p->mono.n >= 0 ? c->b.answer : 0) && p->e[k].met && p->e[k].t.seed == p->seed0)
                p->shown[i] = k;
    }
    return 0;
}

static void answer_label(const plan *p, int ci, char *buf, size_t n);

/* The cost models that priced report R's LLM pools, as the plan's column shows
 * them, into BUF: each pool's kind and stored id ("fitted 3", "roofline"),
 * prefixed with its name when there are several ("pre: roofline, dec:
 * fitted 3"); "-" without an LLM pool. */
static void models_label(const report *r, char *buf, size_t n)
{
    int pools = 0;
    for (size_t i = 0; i < r->n; i++) pools += !strcmp(r->rows[i].metric, "cost_model.kind") && r->rows[i].text;
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n && at < n; i++) {
        const store_stat *st = &r->rows[i];
        if (strcmp(st->metric, "cost_model.kind") || !st->text) continue;
        double id = report_get(r, st->scope, "cost_model.id", "value");
        at += (size_t) snprintf(buf + at, n - at, "%s%s%s%s", at ? ", " : "", pools > 1 ? st->scope : "", pools > 1 ? ": " : "",
                                st->text);
        if (at < n && isfinite(id) && id > 0) at += (size_t) snprintf(buf + at, n - at, " %.0f", id);
    }
    if (!buf[0]) snprintf(buf, n, "-");
}

/* Whether P's candidates were priced by different kinds of cost model (a
 * pool's kind differs between two candidates).  Returns 1 and the first two
 * that differ in A and B (candidate indices), else 0. */
static int models_differ(const plan *p, int *a, int *b)
{
    for (int i = 1; i < p->ncs; i++)
        for (int k = 0; k < i; k++) {
            const report *x = &p->e[p->shown[k]].o.rep, *y = &p->e[p->shown[i]].o.rep;
            for (size_t j = 0; j < x->n; j++) {
                if (strcmp(x->rows[j].metric, "cost_model.kind") || !x->rows[j].text) continue;
                const char *t = report_get_text(y, x->rows[j].scope, "cost_model.kind");
                if (t && strcmp(t, x->rows[j].text)) { *a = k; *b = i; return 1; }
            }
        }
    return 0;
}

/* The one warning line when P's candidates were priced by different kinds of
 * cost model (a TP or GPU with a calibrated model beside one without): their
 * costs then stand on different errors. */
static void models_warn(const plan *p)
{
    int a, b;
    if (!models_differ(p, &a, &b)) return;
    char la[700], lb[700], ma[300], mb[300];
    answer_label(p, p->cs[a].combo, la, sizeof la);
    answer_label(p, p->cs[b].combo, lb, sizeof lb);
    models_label(&p->e[p->shown[a]].o.rep, ma, sizeof ma);
    models_label(&p->e[p->shown[b]].o.rep, mb, sizeof mb);
    fflush(stdout);
    fprintf(stderr, "latsim: warning: plan: the candidates were priced by different kinds of cost model (%s: %s; %s: %s): "
            "their costs stand on different errors (see the cost model column; docs/planning.md)\n",
            ERRMSG_SHOWN(la), ERRMSG_SHOWN(ma), ERRMSG_SHOWN(lb), ERRMSG_SHOWN(mb));
}

/* The answer of configuration CI of P as "best:" prints it, into BUF. */
static void answer_label(const plan *p, int ci, char *buf, size_t n)
{
    const combo *c = &p->c[ci];
    if (p->mono.n >= 0) snprintf(buf, n, "%s%s%s=%d", c->label, c->label[0] ? " " : "", p->mono_name, c->b.answer);
    else snprintf(buf, n, "%s", c->label);
    if (!buf[0]) snprintf(buf, n, "the scenario as given");
}

/* The search again with every LLM pool's step times scaled (step_time_scale)
 * to both ends of the answer's 90 % prediction band (latsim/band.h,
 * docs/bands.md): the widest of its LLM pools' cost models' validated errors
 * (cost_model.mape; widened when carried), the documented default for a model
 * without one (the roofline, linear).  The answer at the pessimistic end (the
 * longer step times) is the one to buy when the model errs by its band; the
 * plan is robust only when both ends choose the same configuration.  Fills
 * P->sens, P->sens_basis and P->robust.  Returns 0 or the exit status (printed). */
static int plan_sensitivity(plan *p, const scenario *base)
{
    if (p->no_sens) return 0;
    band_model bm;
    if (band_of_report(&p->e[p->shown[0]].o.rep, &bm) == 0) return 0;   /* no LLM pool: no step times */
    double f[2] = { bm.lo, bm.hi };
    snprintf(p->sens_basis, sizeof p->sens_basis, "x%.3g and x%.3g: the 90 %% band of %s", f[0], f[1], bm.basis);
    char sets[MAX_USER_SETS][200];
    p->robust = 1;
    for (int k = 0; k < 2; k++) {
        plan q;
        memset(&q, 0, sizeof q);
        q.file = p->file;
        memcpy(q.user_sets, p->user_sets, (size_t) p->nuser * sizeof *q.user_sets);
        q.nuser = p->nuser;
        for (int i = 0; i < scenario_npools(base); i++) {
            if (!scenario_pool_takes(base, i, "step_time_scale")) continue;
            if (q.nuser >= MAX_USER_SETS) return cu_die(2, "plan: too many --set options for the sensitivity check (use --no-sensitivity)");
            snprintf(sets[q.nuser], sizeof sets[q.nuser], "pool %s.step_time_scale=%.10g", scenario_pool_name(base, i), f[k]);
            q.user_sets[q.nuser] = sets[q.nuser];
            q.nuser++;
        }
        q.seed = p->seed;
        q.target = p->target;
        q.best = -1;
        q.mono.n = -1;
        q.jobs = p->jobs;
        q.dbpath = p->dbpath;
        q.pool_opt = p->pool_opt;
        q.gpus = p->gpus; q.tps = p->tps; q.reps = p->reps; q.pps = p->pps; q.eps = p->eps;
        memcpy(q.searches, p->searches, sizeof q.searches);
        q.nsearch = p->nsearch;
        q.seeds = p->seeds;
        q.top = p->top;
        q.seed0 = p->seed0;
        q.no_sens = 1;
        scenario *b2 = scenario_new();
        int rc = b2 ? 0 : cu_die(1, "out of memory");
        if (!rc) rc = plan_base(&q, b2);
        if (!rc) rc = plan_dims(&q, b2);
        if (!rc) rc = plan_check_dims(&q, b2);
        if (!rc) rc = plan_configs(&q);
        if (!rc) rc = plan_solve(&q);
        struct sens *a = &p->sens[k];
        a->factor = f[k];
        if (!rc && q.winner >= 0 && (rc = plan_candidates(&q)) == 0) {
            a->met = 1;
            a->cost = q.cs[0].cost;
            answer_label(&q, q.winner, a->label, sizeof a->label);
            FILE *m = fmemopen(a->settings, sizeof a->settings, "w");
            if (m) {
                const combo *c = &q.c[q.winner];
                settings_json(&q, c, q.mono.n >= 0 ? c->b.answer : 0, m);
                fclose(m);
            }
        }
        /* Robust: both ends met, by the same configuration. */
        p->robust &= a->met && (k == 0 || !strcmp(a->label, p->sens[0].label));
        p->nsens = k + 1;
        free_plan(&q);
        scenario_delete(b2);
        if (rc) return rc;
    }
    return 0;
}

/* The verdict of the sensitivity check in words into BUF. */
static void sens_verdict(const plan *p, char *buf, size_t n)
{
    if (p->robust) {
        snprintf(buf, n, "robust: same configuration at x%.3g and x%.3g (%s)", p->sens[0].factor, p->sens[1].factor,
                 p->sens[0].label);
        return;
    }
    size_t at = (size_t) snprintf(buf, n, "not robust:");
    for (int k = 0; k < p->nsens && at < n; k++) {
        const struct sens *a = &p->sens[k];
        if (a->met) at += (size_t) snprintf(buf + at, n - at, "%s x%.3g: %s ($%.2f/hour)", k ? ";" : "", a->factor, a->label, a->cost);
        else at += (size_t) snprintf(buf + at, n - at, "%s x%.3g: no configuration meets the SLO", k ? ";" : "", a->factor);
    }
}

/* The plan as JSON into P->jtext, less its closing brace.  Returns 0 or 1. */
static int plan_json(plan *p)
{
    size_t jlen = 0;
    FILE *mem = open_memstream(&p->jtext, &jlen);
    if (!mem) return cu_die(1, "out of memory");
    fprintf(mem, "{\"scenario\": ");
    report_json_str(mem, p->file);
    peak_json(p, mem);
    fprintf(mem, ", \"target_rate_rps\": %.6g, \"headroom\": %.6g, \"objective\": \"%s\", \"best\": ", p->target, p->headroom,
            p->energy ? "energy" : "cost");
    for (int i = 0; i < p->ncs && i < (p->top > p->ncs ? p->ncs : p->top); i++) {
        const combo *c = &p->c[p->cs[i].combo];
        const eval *e = &p->e[p->shown[i]];
        if (i == 1) fputs(", \"candidates\": [", mem);
        if (i >= 1) fputs(i > 1 ? ", " : "", mem);
        fputs("{\"settings\": ", mem);
        settings_json(p, c, p->mono.n >= 0 ? c->b.answer : 0, mem);
        fprintf(mem, ", \"usd_per_hour\": %.6g, \"busy_share_max\": %.4g, \"confirmed_seeds\": %d, ", p->cs[i].cost,
                max_util(&e->o.rep), c->confirmed > 0 ? p->seeds : 1);
        if (isnan(p->cs[i].power_w)) fputs("\"mean_power_w\": null, ", mem);
        else fprintf(mem, "\"mean_power_w\": %.6g, ", p->cs[i].power_w);
        char ml[300];
        models_label(&e->o.rep, ml, sizeof ml);
        fputs("\"cost_model\": ", mem);
        report_json_str(mem, ml);
        fputs(", \"cost_models\": ", mem);
        prov_json(&e->o.rep, mem);
        fputs(", ", mem);
        fputs("\"slo\": ", mem);
        slo_json(&e->slo, mem);
        fputs("}", mem);
    }
    if (p->ncs < 2) fputs(", \"candidates\": [", mem);
    fputs("], \"verdicts\": ", mem);
    verdicts_json(p, mem);
    fprintf(mem, ", \"goodput\": {\"rate_rps_min\": %.6g, \"rate_rps_max\": ", p->want * p->goodput_lo);
    if (isnan(p->goodput_hi)) fputs("null", mem);
    else fprintf(mem, "%.6g", p->want * p->goodput_hi);
    fprintf(mem, ", \"headroom_min\": %.6g}", p->want * p->goodput_lo / p->target);
    int da, db;
    fprintf(mem, ", \"simulations\": %d, \"configurations\": %d, \"pruned\": %d, \"reopened\": %d, \"infeasible\": %d, "
            "\"below_bound\": %d, \"wall_s\": %.3f, \"cost_models_differ\": %s",
            p->ne, p->nc, p->pruned, p->reopened, p->infeasible, p->bounded, p->wall, models_differ(p, &da, &db) ? "true" : "false");
    /* What the answer stands on, and whether it survives other step times. */
    fputs(", \"cost_models\": ", mem);
    prov_json(&p->e[p->shown[0]].o.rep, mem);
    if (p->nsens) {
        char v[2000];
        sens_verdict(p, v, sizeof v);
        fputs(", \"sensitivity\": {\"basis\": ", mem);
        report_json_str(mem, p->sens_basis);
        fputs(", \"answers\": [", mem);
        for (int k = 0; k < p->nsens; k++) {
            const struct sens *a = &p->sens[k];
            fprintf(mem, "%s{\"step_time_scale\": %.10g, \"met\": %s", k ? ", " : "", a->factor, a->met ? "true" : "false");
            if (a->met) fprintf(mem, ", \"settings\": %s, \"usd_per_hour\": %.6g", a->settings, a->cost);
            fputs("}", mem);
        }
        fprintf(mem, "], \"robust\": %s, \"verdict\": ", p->robust ? "true" : "false");
        report_json_str(mem, v);
        fputs("}", mem);
        /* The answer at the band's pessimistic end (the longer step times). */
        const struct sens *pe = &p->sens[p->nsens - 1];
        fprintf(mem, ", \"pessimistic\": {\"step_time_scale\": %.10g, \"met\": %s", pe->factor, pe->met ? "true" : "false");
        if (pe->met) fprintf(mem, ", \"settings\": %s, \"usd_per_hour\": %.6g", pe->settings, pe->cost);
        fputs("}", mem);
    }
    fclose(mem);
    return 0;
}

/* Stores the plan, its points and their runs in one transaction: together or
 * not at all.  Returns 0 or the exit status (printed). */
static int plan_store(plan *p)
{
    if (!p->store) return 0;
    char started[32], args[1024], err[2048];
    sqlite3 *db = NULL;
    char *stored = NULL;
    int rc = 1;
    cu_now(started, sizeof started);
    snprintf(args, sizeof args, "--target-rate %g%s%s%s%s%s%s%s%s%s%s%s", p->target, p->energy ? " --objective energy" : "", p->gpus ? " --gpus " : "", p->gpus ? p->gpus : "",
             p->tps ? " --tp " : "", p->tps ? p->tps : "", p->pps ? " --pp " : "", p->pps ? p->pps : "",
             p->eps ? " --ep " : "", p->eps ? p->eps : "", p->reps ? " --replicas " : "", p->reps ? p->reps : "");
    if (cu_open_rw(p->dbpath, &db, err, sizeof err) != 0) return cu_die(2, "%s", err);
    int bad = store_begin(db, err, sizeof err) != 0 ||
              planstore_sweep_begin(db, "plan", p->file, args, started, &p->plan_id, err, sizeof err) != 0;
    for (int i = 0; i < p->ne && !bad; i++) {
        eval *e = &p->e[i];
        wire(p, e);
        char settings[1200] = "";
        for (int k = p->nuser + 1; k < e->t.nsets; k++) {
            size_t l = strlen(settings);
            snprintf(settings + l, sizeof settings - l, "%s%s", l ? "; " : "", e->t.sets[k]);
        }
        planstore_extra x = { .sweep_id = p->plan_id, .idx = i, .role = e->role, .settings = settings, .seed = e->o.seed,
                              .rate = e->o.rate, .usd_per_hour = e->o.usd_per_hour };
        int64_t id;
        bad = cu_save_task(db, &e->t, &e->o, &e->slo, &x, &id, err, sizeof err) != 0;
    }
    /* Stored as --json prints it (one whole object), less the id. */
    stored = bad ? NULL : malloc(strlen(p->jtext) + 2);
    if (!bad && !stored) bad = (errmsg_set(err, sizeof err, "out of memory"), 1);
    if (stored) { strcpy(stored, p->jtext); strcat(stored, "}"); }
    bad = bad || planstore_sweep_end(db, p->plan_id, p->wall, p->ne, p->cs[0].cost, stored, err, sizeof err) != 0 ||
          store_commit(db, err, sizeof err) != 0;
    if (bad) { store_rollback(db); cu_die(1, "plan not stored: %s", err); goto out; }
    rc = 0;
out:
    free(stored);
    store_close(db);
    return rc;
}

/* Prints the plan: its JSON, or the candidates, the configurations ruled out
 * and the winner's SLO terms. */
static void plan_print(const plan *p)
{
    if (p->json) {
        fputs(p->jtext, stdout);
        if (p->store) printf(", \"plan\": %lld", (long long) p->plan_id);
        fputs("}\n", stdout);
        return;
    }
    printf("plan %s  target %.4g req/s x headroom %.3g = %.4g req/s\n", ERRMSG_SHOWN(p->file), p->target, p->headroom, p->want);
    peak_print(p, stdout);
    char nbound[64] = "";
    if (p->bounded) snprintf(nbound, sizeof nbound, ", %d by the utilisation bound", p->bounded);
    char nreo[96] = "";
    if (p->reopened) snprintf(nreo, sizeof nreo, "; %d searched again when confirmation raised the best cost", p->reopened);
    printf("%d configurations (%d ruled out by the scenario%s, %d pruned by cost%s), %d simulations, %.2f s, %d workers\n\n",
           p->nc, p->infeasible, nbound, p->pruned, nreo, p->ne, p->wall, p->jobs);
    int wl = 13;          /* the configuration column fits the longest label */
    for (int i = 0; i < p->ncs && i < p->top; i++) {
        int l = (int) strlen(ERRMSG_SHOWN(p->c[p->cs[i].combo].label)) + (p->mono.n >= 0 ? (int) strlen(ERRMSG_SHOWN(p->mono_name)) + 6 : 0);
        if (l > wl) wl = l;
    }
    for (int ci = 0; ci < p->nc; ci++)
        if (p->c[ci].infeasible && (int) strlen(ERRMSG_SHOWN(p->c[ci].label)) > wl) wl = (int) strlen(ERRMSG_SHOWN(p->c[ci].label));
    int mw = 10;          /* the cost model column fits the longest */
    for (int i = 0; i < p->ncs && i < p->top; i++) {
        char ml[300];
        models_label(&p->e[p->shown[i]].o.rep, ml, sizeof ml);
        if ((int) strlen(ml) > mw) mw = (int) strlen(ml);
    }
    printf("  %-*s %10s %8s %9s %9s  %-*s  %s\n", wl, "configuration", "$/hour", "kW", "busy_max", "margin", mw, "cost model", "slo");
    for (int i = 0; i < p->ncs && i < p->top; i++) {
        const combo *c = &p->c[p->cs[i].combo];
        const eval *e = &p->e[p->shown[i]];
        char lab[600];
        if (p->mono.n >= 0) snprintf(lab, sizeof lab, "%s%s%s=%d", c->label, c->label[0] ? " " : "", p->mono_name, c->b.answer);
        else snprintf(lab, sizeof lab, "%s", c->label);
        char kw[32] = "-";
        if (!isnan(p->cs[i].power_w)) snprintf(kw, sizeof kw, "%.3f", p->cs[i].power_w / 1000);
        char ml[300];
        models_label(&e->o.rep, ml, sizeof ml);
        printf("  %-*s %10.2f %8s %9.3f %+8.1f%%  %-*s  %s\n", wl, ERRMSG_SHOWN(lab), p->cs[i].cost, kw, max_util(&e->o.rep),
               100 * slo_worst_margin(&e->slo), mw, ERRMSG_SHOWN(ml), i == 0 ? (c->confirmed > 0 ? "met (confirmed)" : "met") : "met (1 seed)");
    }
    for (int ci = 0; ci < p->nc; ci++)
        if (p->c[ci].infeasible) printf("  %-*s %10s  ruled out: %s\n", wl, ERRMSG_SHOWN(p->c[ci].label), "-",
                                        ERRMSG_SHOWN(p->c[ci].reason));
    const eval *e = &p->e[p->shown[0]];
    printf("\nbest: ");
    const combo *c = &p->c[p->cs[0].combo];
    if (p->mono.n >= 0) printf("%s%s%s=%d", ERRMSG_SHOWN(c->label), c->label[0] ? " " : "", ERRMSG_SHOWN(p->mono_name), c->b.answer);
    else printf("%s", ERRMSG_SHOWN(c->label));
    printf("  $%.2f/hour", p->cs[0].cost);
    if (!isnan(p->cs[0].power_w)) printf(", %.3f kW of GPU power at %.4g req/s", p->cs[0].power_w / 1000, p->want);
    printf(", confirmed with %d seeds%s\n", p->seeds, p->energy ? " (objective: energy)" : "");
    prov_table(&e->o.rep, "", stdout);
    if (p->nsens) {
        char v[2000];
        sens_verdict(p, v, sizeof v);
        printf("sensitivity (step times %s): ", p->sens_basis);
        for (int k = 0; k < p->nsens; k++) {
            const struct sens *a = &p->sens[k];
            if (a->met) printf("%sx%.3g -> %s $%.2f/hour", k ? "; " : "", a->factor, ERRMSG_SHOWN(a->label), a->cost);
            else printf("%sx%.3g -> none meets the SLO", k ? "; " : "", a->factor);
        }
        printf("\n%s\n", ERRMSG_SHOWN(v));
        const struct sens *pe = &p->sens[p->nsens - 1];
        if (pe->met) printf("at the band's pessimistic end (step times x%.3g): %s  $%.2f/hour\n", pe->factor, ERRMSG_SHOWN(pe->label), pe->cost);
        else printf("at the band's pessimistic end (step times x%.3g): no configuration meets the SLO\n", pe->factor);
    }
    if (isnan(p->goodput_hi))
        printf("goodput: meets the SLO up to at least %.4g req/s (%.3g x the target %.4g; the largest rate tried%s)\n",
               p->want * p->goodput_lo, p->want * p->goodput_lo / p->target, p->target,
               p->peak ? "; each rate replays only the peak window's requests" : "");
    else
        printf("goodput: meets the SLO up to %.4g req/s, misses it at %.4g (%.3g x the target %.4g req/s: its real headroom)\n",
               p->want * p->goodput_lo, p->want * p->goodput_hi, p->want * p->goodput_lo / p->target, p->target);
    slo_table(&e->slo, stdout);
    putchar('\n');
    print_verdicts(p, stdout);
    if (p->store) printf("\nplan %lld stored in %s\n", (long long) p->plan_id, ERRMSG_SHOWN(p->dbpath));
}

int plan_main(int argc, char **argv)
{
    plan p;
    scenario *base = NULL;
    memset(&p, 0, sizeof p);
    p.best = -1;
    p.mono.n = -1;
    char err[2048];
    int rc = plan_parse(argc, argv, &p);
    if (rc != CLI_GO) return rc;
    if (!(base = scenario_new())) { rc = cu_die(1, "out of memory"); goto out; }
    if ((rc = plan_base(&p, base)) != 0) goto out;
    if ((rc = plan_dims(&p, base)) != 0) goto out;
    if ((rc = plan_check_dims(&p, base)) != 0) goto out;
    if ((rc = plan_configs(&p)) != 0) goto out;
    if (p.store && cu_check_db(p.dbpath, err, sizeof err) != 0) { rc = cu_die(2, "%s", err); goto out; }
    p.progress = isatty(2);
    p.seed0 = p.seed ? p.seed : scenario_seed(base);
    double t0 = cu_clock();
    if ((rc = plan_solve(&p)) != 0) goto out;
    if (p.progress) fputs("\r\033[K", stderr);
    p.wall = cu_clock() - t0;
    if (p.winner < 0) {
        if (p.json) {
            fprintf(stdout, "{\"scenario\": ");
            report_json_str(stdout, p.file);
            peak_json(&p, stdout);
            fprintf(stdout, ", \"target_rate_rps\": %.6g, \"headroom\": %.6g, \"best\": null, \"verdicts\": ", p.target, p.headroom);
            verdicts_json(&p, stdout);
            fputs("}\n", stdout);
        } else {
            peak_print(&p, stdout);
            print_verdicts(&p, stdout);
        }
        fflush(stdout);
        rc = plan_no_winner(&p);
        goto out;
    }
    if ((rc = plan_goodput(&p)) != 0) goto out;
    if ((rc = plan_candidates(&p)) != 0) goto out;
    if (p.energy && isnan(p.cs[0].power_w)) {
        rc = cu_die(2, "plan: --objective energy: %s has no GPU power figures (the pools' GPUs need idle_w and max_w, or a power_curve)", p.file);
        goto out;
    }
    if ((rc = plan_sensitivity(&p, base)) != 0) goto out;
    prov_warn(&p.e[p.shown[0]].o.rep);    /* once: uncalibrated step times */
    models_warn(&p);                      /* once: candidates priced by different kinds */
    if ((rc = plan_json(&p)) != 0) goto out;
    if ((rc = plan_store(&p)) != 0) goto out;
    plan_print(&p);
    rc = 0;
out:
    free_plan(&p);
    scenario_delete(base);
    return rc;
}

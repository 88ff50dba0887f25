/* flatten.c -- a run's results as report rows (report_flatten, latsim/report.h):
 * the engine's own numbers in their fixed order, and the metric families'
 * rows (sim_result.rows) where each family's place is, or after the rows of
 * their scope.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/report.h"

/* Keeps the distribution of S for the rows from index ROW on.  Returns 0 or -1. */
static int add_dist(report *r, size_t row, const stat_summary *s)
{
    if (r->ndist == r->capdist) {
        size_t cap = r->capdist ? 2 * r->capdist : 16;
        report_dist *x = realloc(r->dist, cap * sizeof *x);
        if (!x) return -1;
        r->dist = x;
        r->capdist = cap;
    }
    r->dist[r->ndist].row = row;
    repci_from_summary(s, &r->dist[r->ndist].d);
    r->ndist++;
    return 0;
}

/* The metric families whose rows report_flatten places among its own (at
 * put_family, in this order down the system's rows); any other family's rows
 * come after the rows of their scope (put_scope), a scope of its own last. */
static const char *const PLACED[] = { "run", "warmup", "client", "finite", "goodput", "cost", "over", "energy",
                                      "workload", "latency", "cold", "itl", "breakdown", "pool" };

/* The families whose rows the report leaves out: a run's own seed noise
 * (col_seednoise.c), which `run --band` reads from the result (docs/bands.md),
 * and each pool's rows the report does not show (family "aside",
 * sim/run/simres.c: load_saturated, which `run` reads for its notes, and a
 * priced pool's cost_per_hour, and the run's relax_windows, which goes with
 * every distribution), and what --trace-events traced (col_trace.c), which
 * `run` says in a note. */
static const char *const LEFT_OUT[] = { "seed_noise", "aside", "trace" };

/* 1: FAMILY's rows are placed (PLACED) or left out (LEFT_OUT), not put after their scope's. */
static int placed(const char *family)
{
    for (size_t k = 0; k < sizeof PLACED / sizeof *PLACED; k++)
        if (!strcmp(family, PLACED[k])) return 1;
    for (size_t k = 0; k < sizeof LEFT_OUT / sizeof *LEFT_OUT; k++)
        if (!strcmp(family, LEFT_OUT[k])) return 1;
    return 0;
}

/* 1 when the run X is saturated (its row "saturated"). */
static int run_saturated(const sim_result *x)
{
    return sim_result_value(x, "saturated") > 0;
}

/* Copies family row W of X into OUT: NAN where it hides in a saturated run
 * (SAT 1), its latency's distribution kept.  Returns 0 or -1. */
static int put_row(report *out, int rep, int sat, const sim_row *w)
{
    int hide = w->hide && sat;
    if (w->text) return report_add_text(out, rep, w->scope, w->metric, w->text);
    if (w->dist && !hide && add_dist(out, out->n, w->dist)) return -1;
    return report_add(out, rep, w->scope, w->metric, w->stat, hide ? NAN : w->value);
}

/* Copies the rows of family FAMILY of X named METRIC (NULL: all) into OUT, in
 * their order (SAT: the run is saturated).  Returns 0 or -1. */
static int put_metric(report *out, int rep, const sim_result *x, int sat, const char *family, const char *metric)
{
    for (size_t i = 0; i < x->rows.n; i++) {
        const sim_row *w = &x->rows.row[i];
        if (!strcmp(w->family, family) && (!metric || !strcmp(w->metric, metric)) && put_row(out, rep, sat, w)) return -1;
    }
    return 0;
}

/* put_metric of every row of family FAMILY (SAT: the run is saturated).  Returns 0 or -1. */
static int put_family(report *out, int rep, const sim_result *x, int sat, const char *family)
{
    return put_metric(out, rep, x, sat, family, NULL);
}

/* A result's rows as report_flatten walks them: which are in the report
 * already, which belong to placed families, and an index by scope (a run of
 * 2048 routes has some 40 000 rows: a scan per scope would be quadratic). */
typedef struct fl_rows {
    char *done;               /* [n] 1: row i is in the report */
    char *skip;               /* [n] 1: row i's family is placed or left out (placed()) */
    struct fl_key { const char *scope; size_t i; } *by_scope;   /* [n] the rows by scope, then in row order */
    int sat;                  /* 1: the run is saturated (run_saturated) */
} fl_rows;

static int key_cmp(const void *a, const void *b)
{
    const struct fl_key *p = a, *q = b;
    int c = strcmp(p->scope, q->scope);
    return c ? c : (p->i > q->i) - (p->i < q->i);
}

/* Builds R over X's rows.  Returns 0, or -1 when out of memory (R is
 * fl_free()d either way by the caller). */
static int fl_init(fl_rows *R, const sim_result *x)
{
    size_t n = x->rows.n;
    R->done = calloc(n + 1, 1);
    R->skip = calloc(n + 1, 1);
    R->by_scope = malloc((n + 1) * sizeof *R->by_scope);
    if (!R->done || !R->skip || !R->by_scope) return -1;
    for (size_t i = 0; i < n; i++) {
        R->skip[i] = (char) placed(x->rows.row[i].family);
        R->by_scope[i] = (struct fl_key) { x->rows.row[i].scope, i };
    }
    qsort(R->by_scope, n, sizeof *R->by_scope, key_cmp);
    R->sat = run_saturated(x);
    return 0;
}

static void fl_free(fl_rows *R)
{
    free(R->done);
    free(R->skip);
    free(R->by_scope);
}

/* Copies the rows of SCOPE of the families not placed (PLACED) into OUT, in
 * row order, and marks them done in R.  Returns 0 or -1. */
static int put_scope(report *out, int rep, const sim_result *x, const char *scope, fl_rows *R)
{
    size_t lo = 0, hi = x->rows.n;   /* the first row of SCOPE in the index */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(R->by_scope[mid].scope, scope) < 0) lo = mid + 1;
        else hi = mid;
    }
    for (size_t k = lo; k < x->rows.n && !strcmp(R->by_scope[k].scope, scope); k++) {
        size_t i = R->by_scope[k].i;
        if (R->done[i] || R->skip[i]) continue;
        if (put_row(out, rep, R->sat, &x->rows.row[i])) return -1;
        R->done[i] = 1;
    }
    return 0;
}

/* Copies the scopes of family FAMILY's rows of X into OUT (put_scope), in the
 * order of their first row, each once.  Returns 0 or -1. */
static int put_scopes(report *out, int rep, const sim_result *x, const char *family, fl_rows *R)
{
    for (size_t i = 0; i < x->rows.n; i++)
        if (!R->done[i] && !strcmp(x->rows.row[i].family, family) && put_scope(out, rep, x, x->rows.row[i].scope, R))
            return -1;
    return 0;
}

/* The engine's rows of X into OUT, the families' rows among them. */
static int flatten(const sim_result *x, int rep, report *out, fl_rows *R);

int report_flatten(const sim_result *x, int rep, report *out)
{
    memset(out, 0, sizeof *out);
    out->replications = 1;
    fl_rows R;
    int rc = fl_init(&R, x) == 0 ? flatten(x, rep, out, &R) : -1;
    for (size_t i = 0; rc == 0 && i < x->rows.n; i++)   /* the scopes of their own, in row order */
        if (!R.done[i] && !R.skip[i]) rc = put_scope(out, rep, x, x->rows.row[i].scope, &R);
    fl_free(&R);
    /* Every distribution carries the run's length in correlation times (repci_enough). */
    double windows = sim_result_get(x, "", "relax_windows", "value");   /* family "aside" (run/simres.c) */
    if (isnan(windows)) windows = INFINITY;   /* unknown */
    for (size_t k = 0; k < out->ndist; k++) out->dist[k].d.windows = windows;
    return rc;
}

static int flatten(const sim_result *x, int rep, report *out, fl_rows *R)
{
    const char *G = "";
/* The run's own row NAME (family "run": sim.c's counts, times and rates), where X has it. */
#define R(name) if (put_metric(out, rep, x, R->sat, "run", name)) return -1
    R("requests");
    R("warmup_requests");
    R("warmup_s");
    if (put_family(out, rep, x, R->sat, "warmup")) return -1;   /* the automatic warm-up's wait for caches (run/warmup.h) */
    R("served");
    R("rejected");
    R("timed_out");
    R("failed");            /* a pool has fleet keys */
    R("abandoned");         /* clients who gave up (issue 34) */
    R("abandoned_share");
    if (put_family(out, rep, x, R->sat, "client")) return -1;   /* [client]: attempts, retries, wasted */
    R("saturated");
    R("trace_exhausted");   /* a non-looping trace ran out */
    if (put_family(out, rep, x, R->sat, "finite")) return -1;   /* docs/workloads.md, "Finite workloads" */
    R("departures");
    R("throughput_rps");
    if (put_family(out, rep, x, R->sat, "goodput")) return -1;
    R("output_tokens_per_s");
    /* The cost (col_cost.c): its charges, the shares over a threshold, its $ per 1000 requests. */
    static const char *const COST[] = { "cost_per_hour", "cost_per_mtok", "api_usd", "egress_usd" };
    for (int k = 0; k < 4; k++)
        if (put_metric(out, rep, x, R->sat, "cost", COST[k])) return -1;
    if (put_family(out, rep, x, R->sat, "over")) return -1;   /* shares over a threshold (issue 34) */
    if (put_metric(out, rep, x, R->sat, "cost", "cost_per_1k_requests")) return -1;
    if (put_family(out, rep, x, R->sat, "energy")) return -1;   /* GPU board energy (docs/metrics.md, "Energy") */
    R("sim_time_s");
    R("window_s");
    R("events");
    R("peak_in_system");
    R("wall_time_s");
    if (put_family(out, rep, x, R->sat, "workload")) return -1;   /* repeat_token_share; a closed loop's achieved_rps... */
    /* The system's latencies (col_latency.c, col_itl.c): e2e, queue, service,
     * cold and warm, then network, overhead, ttft, tpot and itl where reported. */
    static const char *const LAT[] = { "e2e", "queue", "service", NULL, "network", "overhead", "ttft", "tpot" };
    for (size_t k = 0; k < sizeof LAT / sizeof *LAT; k++)
        if (LAT[k] ? put_metric(out, rep, x, R->sat, "latency", LAT[k]) : put_family(out, rep, x, R->sat, "cold")) return -1;
    if (put_metric(out, rep, x, R->sat, "itl", "itl")) return -1;
    if (!R->sat) {   /* the CDFs of e2e and queue, and of ttft and tpot where reported */
        static const char *const CD[] = { "e2e", "queue", "ttft", "tpot" };
        out->cdf = malloc(4 * STAT_NCDF * sizeof *out->cdf);
        if (!out->cdf) return -1;
        for (int m = 0; m < 4; m++) {
            const sim_row *w = sim_result_row(x, G, CD[m], "mean");
            if (w && w->dist)   /* a sample */
                for (int k = 0; k < STAT_NCDF; k++)
                    out->cdf[out->ncdf++] = (report_cdf) { CD[m], stat_cdf_probs[k], w->dist->cdf[k] };
        }
    }
    /* Shares of e2e and of TTFT (col_breakdown.c): "breakdown.all.queue", "ttft_breakdown.mean_ms.queue"... */
    if (put_family(out, rep, x, R->sat, "breakdown")) return -1;
    if (put_scope(out, rep, x, G, R)) return -1;
    /* Each pool's rows (family "pool", sim/run/simres.c: one scope after
     * another, in pool order), each followed by the other rows of its scope. */
    const char *cur = NULL;   /* the scope of the pool rows being copied */
    for (size_t i = 0; i < x->rows.n; i++) {
        const sim_row *w = &x->rows.row[i];
        if (strcmp(w->family, "pool")) continue;
        if (cur && strcmp(cur, w->scope) && put_scope(out, rep, x, cur, R)) return -1;
        cur = w->scope;
        if (put_row(out, rep, R->sat, w)) return -1;
        R->done[i] = 1;
    }
    if (cur && put_scope(out, rep, x, cur, R)) return -1;
    /* The routes' rows (col_paths.c), then the classes' (col_classes.c). */
    if (put_scopes(out, rep, x, "paths", R) || put_scopes(out, rep, x, "classes", R)) return -1;
#undef R
    return 0;
}


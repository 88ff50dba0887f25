/* setup.c -- the planner's search space (latsim/plan.h, plan_setup): the
 * scenario as given and the rate simulated (a mean rate, or a trace's peak
 * window), the dimensions the options name (--gpus, --tp, --pp, --ep,
 * --replicas, every --search; the monotone one bisected), every value checked
 * against the scenario, and the configurations (their product) with their
 * cost per unit of the monotone value, the utilisation bound and the Erlang C
 * estimate of a generic pool's servers.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/planner.h"

#define PLAN_PEAK_MIN_REQUESTS 100   /* fewest requests a peak window may hold */
#define PLAN_PEAK_MIN_LATENCIES 10   /* shortest peak window, in the SLO's largest latency limits */

int plan_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return code;
}

int plan_init(plan *p, const plan_opts *o, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->o = *o;
    p->best = -1;
    p->winner = -1;
    p->mono.n = -1;
    p->target = o->target;
    if (o->nsets < 0 || o->nsets > PLAN_MAX_USER_SETS + 2)
        return plan_fail(err, errlen, 2, "plan: at most %d --set options", PLAN_MAX_USER_SETS);
    for (int i = 0; i < o->nsets; i++) p->user_sets[i] = o->sets[i];
    p->nuser = o->nsets;
    return 0;
}

void plan_free(plan *p)
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
    scenario_delete(p->base);
    p->e = NULL;
    p->c = NULL;
    p->cs = NULL;
    p->shown = NULL;
    p->jtext = NULL;
    p->base = NULL;
    p->ne = p->nc = p->ndims = 0;
}

/* ---- the option values ----------------------------------------------------- */

static int add_value(plan_dim *d, const char *v, char *err, size_t errlen)
{
    if (d->n == PLAN_MAX_VALS)
        return plan_fail(err, errlen, 2, "plan: %s %s.%s: more than %d values", d->opt, d->section, d->key, PLAN_MAX_VALS);
    d->vals[d->n] = strdup(v);
    if (!d->vals[d->n]) return plan_fail(err, errlen, 1, "out of memory");
    d->n++;
    return 0;
}

/* Parses FROM:TO[:STEP] or a,b,c, the value of option D->opt, into D.
 * Returns 0 or the exit status + ERR. */
static int parse_values(plan_dim *d, const char *spec, char *err, size_t errlen)
{
    char msg[300], what[300];     /* "--tp 1:nan", "--search pool cpu.servers=nan:4" */
    int rc;
    if (!strcmp(d->opt, "--search")) snprintf(what, sizeof what, "%s %.120s.%.60s=%.100s", d->opt, d->section, d->key, spec);
    else snprintf(what, sizeof what, "%s %.200s", d->opt, spec);
    if (strchr(spec, ':')) {
        plan_range r;
        if (plan_range_parse(spec, 1, PLAN_MAX_VALS, &r, msg, sizeof msg) != 0)
            return plan_fail(err, errlen, 2, "plan: %s: %s", what, msg);
        for (int i = 0; i < r.n; i++) {
            char v[64];
            plan_range_value(&r, i, v, sizeof v);
            if ((rc = add_value(d, v, err, errlen)) != 0) return rc;
        }
        return 0;
    }
    const char *q = spec;
    while (1) {
        size_t k = strcspn(q, ",");
        char v[128];
        if (plan_list_value_check(q, k, sizeof v, msg, sizeof msg) != 0)
            return plan_fail(err, errlen, 2, "plan: %s: %s", what, msg);
        snprintf(v, sizeof v, "%.*s", (int) k, q);
        if ((rc = add_value(d, v, err, errlen)) != 0) return rc;
        if (!q[k]) break;
        q += k + 1;
    }
    return 0;
}

/* Parses --replicas SPEC, "A:B" of whole numbers 1 <= A <= B <= INT_MAX / 4
 * (the scenario checks B further).  Returns 0, or 2 + ERR. */
static int parse_replicas(const char *spec, int *a, int *b, char *err, size_t errlen)
{
    long v[2];
    const char *q = spec;
    for (int k = 0; k < 2; k++) {
        size_t len = strcspn(q, ":");
        int ok = len > 0 && len < 12;
        for (size_t i = 0; i < len && ok; i++) ok = q[i] >= '0' && q[i] <= '9';
        v[k] = ok ? strtol(q, NULL, 10) : 0;
        if (!ok || v[k] < 1 || v[k] > INT_MAX / 4)
            return plan_fail(err, errlen, 2, "plan: --replicas %s: %s '%.*s' is not a whole number from 1 to %d (expected A:B, e.g. 1:64)",
                             spec, k ? "B" : "A", (int) len, q, INT_MAX / 4);
        if (k == 0 && q[len] != ':') return plan_fail(err, errlen, 2, "plan: --replicas %s: expected A:B (e.g. 1:64)", spec);
        if (k == 1 && q[len])
            return plan_fail(err, errlen, 2, "plan: --replicas %s: expected A:B (e.g. 1:64), got more than two parts", spec);
        q += len + 1;
    }
    if (v[1] < v[0]) return plan_fail(err, errlen, 2, "plan: --replicas %s: empty range (B %ld < A %ld)", spec, v[1], v[0]);
    *a = (int) v[0];
    *b = (int) v[1];
    return 0;
}

/* Splits "SECTION.KEY=SPEC".  Returns 0, or -1 when ARG is not of that form. */
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

/* ---- loading configurations ---------------------------------------------- */

void plan_wire(plan *p, plan_eval *e)
{
    task *t = &e->t;
    t->path = p->o.file;
    t->nsets = 0;
    for (int i = 0; i < p->nuser; i++) t->sets[t->nsets++] = p->user_sets[i];
    t->sets[t->nsets++] = e->rate_set[0] ? e->rate_set : p->rate_set;
    if (e->combo >= 0) {
        const plan_config *c = &p->c[e->combo];
        for (int i = 0; i < c->nsets; i++) t->sets[t->nsets++] = c->sets[i];
    }
    if (p->mono.n >= 0 && e->m > 0) {
        snprintf(e->mset, sizeof e->mset, "%s.%s=%d", p->mono.section, p->mono.key, e->m);
        t->sets[t->nsets++] = e->mset;
    }
}

/* ERR came from loading the scenario with P's assignments, which the loader
 * calls "--set": renames it after the option that made the assignment it is
 * about (--gpus, --tp, --replicas, --search, --target-rate). */
static void relabel(const plan *p, char *err, size_t errlen)
{
    for (int i = 0; i < p->ndims; i++) plan_relabel(err, errlen, p->dims[i].opt, p->dims[i].section, p->dims[i].key);
    if (p->mono.n >= 0) plan_relabel(err, errlen, p->mono.opt, p->mono.section, p->mono.key);
    plan_relabel(err, errlen, "--target-rate", "workload", "rate");
    plan_relabel(err, errlen, "--target-rate", "workload", "speedup");
}

/* Loads the base configuration with configuration C's settings at monotone
 * value M into SC (resolved, catalog from the database).  Returns 0, 1 when
 * the scenario refuses this configuration (REASON set), 2 on bad input (+ ERR). */
static int load_config(plan *p, const plan_config *c, int m, scenario *sc, char *reason, size_t rn, char *err, size_t errlen)
{
    plan_eval tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.combo = c ? (int) (c - p->c) : -1;
    tmp.m = m;
    plan_wire(p, &tmp);
    char msg[1024];
    if (scenario_load(sc, p->o.file, tmp.t.sets, tmp.t.nsets, msg, sizeof msg) != 0) {
        relabel(p, msg, sizeof msg);
        return plan_fail(err, errlen, 2, "%s", msg);
    }
    sqlite3 *db = NULL;
    if (store_open_lookup(p->o.dbpath, &db, msg, sizeof msg) != 0) return plan_fail(err, errlen, 2, "%s", msg);
    int rc = scenario_resolve(sc, db, msg, sizeof msg);
    store_close(db);
    if (rc == 0) return 0;
    if (strstr(msg, "] gpu:") || strstr(msg, "] model:")) {
        relabel(p, msg, sizeof msg);
        return plan_fail(err, errlen, 2, "%s", msg);
    }
    /* Other refusals (weights do not fit, tp does not divide the heads) rule out this configuration. */
    const char *m2 = strstr(msg, "] ");
    snprintf(reason, rn, "%.250s", m2 ? m2 + 2 : msg);
    char *advice = strstr(reason, "; use ");      /* keep the fact, drop the advice */
    if (advice) *advice = '\0';
    return 1;
}

/* Whether the scenario loads with the user's overrides and SET.
 * Returns 0, or -1 + ERR. */
static int loads_with(const plan *p, const char *set, char *err, size_t errlen)
{
    const char *sets[PLAN_MAX_USER_SETS + PLAN_PEAK_SETS + 1];
    int n = 0;
    for (int u = 0; u < p->nuser; u++) sets[n++] = p->user_sets[u];
    sets[n++] = set;
    scenario *sc = scenario_new();
    if (!sc) { snprintf(err, errlen, "out of memory"); return -1; }
    int bad = scenario_load(sc, p->o.file, sets, n, err, errlen);
    scenario_delete(sc);
    return bad ? -1 : 0;
}

/* ---- the rate simulated ------------------------------------------------------ */

/* Appends "SECTION.KEY=VALUE" (printf FMT) to P's overrides.  Returns 0, or -1 when full. */
static int peak_set(plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int peak_set(plan *p, const char *fmt, ...)
{
    int k = p->npeak;
    if (k >= PLAN_PEAK_SETS || p->nuser >= PLAN_MAX_USER_SETS + PLAN_PEAK_SETS) return -1;
    p->npeak++;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->peak_buf[k], sizeof p->peak_buf[k], fmt, ap);
    va_end(ap);
    p->user_sets[p->nuser++] = p->peak_buf[k];
    return 0;
}

/* The peak window of the base scenario's trace (arrival = trace): the busiest
 * --peak-minutes (10) of it, replayed once (loop = no, its rows measured from
 * an empty system), its clock scaled by --target-rate / the trace's mean rate
 * (1 without one) and the headroom.  Sets the plan's target (the window's
 * rate after scaling), want and rate_set, and adds the window's overrides.
 * Returns 0 or the exit status + ERR. */
static int plan_peak(plan *p, char *err, size_t errlen)
{
    const scenario *base = p->base;
    double len = (p->o.peak_min > 0 ? p->o.peak_min : 10) * 60, from, span;
    size_t rows;
    if (scenario_trace_peak(base, len, &from, &rows, &span) != 0 || rows < 2)
        return plan_fail(err, errlen, 2, "plan: %s: the trace's busiest %g minutes hold fewer than 2 requests", p->o.file, len / 60);
    /* A window too short to measure certifies nothing: it must hold enough
     * requests for a tail percentile, and last many times the slowest latency
     * the SLO allows (else no request there waits behind another). */
    if (rows < PLAN_PEAK_MIN_REQUESTS)
        return plan_fail(err, errlen, 2, "plan: --peak-minutes %g: the trace's busiest %g minutes hold %zu requests; a peak window "
                         "needs at least %d (fewer say nothing of the tail the SLO bounds): give a longer --peak-minutes", len / 60,
                         len / 60, rows, PLAN_PEAK_MIN_REQUESTS);
    const slo_spec *slo = scenario_slo(base);
    double lim_ms = 0;
    for (int i = 0; slo && i < slo->n; i++)
        if (slo->t[i].kind == SLO_LATENCY && slo->t[i].limit > lim_ms) lim_ms = slo->t[i].limit;
    double scale = isnan(p->target) ? scenario_speedup(base) : p->target / (scenario_arrival_rate(base) / scenario_speedup(base));
    double sim_s = len / (scale * (p->headroom > 0 ? p->headroom : 1));   /* the window's length as simulated */
    if (lim_ms > 0 && sim_s < PLAN_PEAK_MIN_LATENCIES * lim_ms / 1e3)
        return plan_fail(err, errlen, 2, "plan: --peak-minutes %g: the window lasts %.4g s as simulated, less than %d x the SLO's "
                         "largest latency limit (%g ms): too short to show any queueing; give a longer --peak-minutes", len / 60,
                         sim_s, PLAN_PEAK_MIN_LATENCIES, lim_ms);
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
        return plan_fail(err, errlen, 2, "plan: too many --set options with a trace's peak");
    /* The window's rate as the scenario measures it (rows - 1 over first to last). */
    char msg[2048];
    scenario *w = scenario_new();
    if (!w) return plan_fail(err, errlen, 1, "out of memory");
    if (scenario_load(w, p->o.file, p->user_sets, p->nuser, msg, sizeof msg) != 0) {
        scenario_delete(w);
        return plan_fail(err, errlen, 2, "%s", msg);
    }
    double own = scenario_arrival_rate(w) / scenario_speedup(w);
    scenario_delete(w);
    p->target = own * p->peak_scale;
    p->want = p->target * p->headroom;
    snprintf(p->rate_set, sizeof p->rate_set, "workload.speedup=%.10g", p->peak_scale * p->headroom);
    return 0;
}

/* Loads the scenario as given into p->base (its pools, [slo] and workload)
 * and sets the rate simulated.  Returns 0 or 2 + ERR. */
static int plan_base(plan *p, char *err, size_t errlen)
{
    char msg[2048];
    scenario *base = p->base;
    if (scenario_load(base, p->o.file, p->user_sets, p->nuser, msg, sizeof msg) != 0) return plan_fail(err, errlen, 2, "%s", msg);
    if (scenario_slo(base)->n == 0)
        return plan_fail(err, errlen, 2, "plan: %s has no [slo] section: nothing to meet (see docs/planning.md)", p->o.file);
    scenario_arrival arr = scenario_arrival_kind(base);
    if (arr == SCENARIO_ARRIVAL_USERS)
        return plan_fail(err, errlen, 2, "plan: %s has a closed-loop workload (users): --target-rate needs an open-loop one "
                         "(rate or trace); use latsim sweep --vary workload.users=...", p->o.file);
    if (arr == SCENARIO_ARRIVAL_SCHEDULE && p->o.note) {
        snprintf(msg, sizeof msg, "plan: note: %s's rate schedule is replaced by the constant target rate", p->o.file);
        p->o.note(msg, p->o.arg);
    }
    p->headroom = scenario_slo(base)->headroom;
    if (arr == SCENARIO_ARRIVAL_TRACE && (p->o.trace || p->o.peak_min > 0 || isnan(p->target))) return plan_peak(p, err, errlen);
    if (p->o.peak_min > 0)
        return plan_fail(err, errlen, 2, "plan: --peak-minutes: %s does not replay a trace (arrival = trace, or --trace FILE)", p->o.file);
    if (isnan(p->target)) return plan_fail(err, errlen, 2, "plan: missing --target-rate R (see latsim plan --help)");
    p->want = p->target * p->headroom;
    if (arr == SCENARIO_ARRIVAL_TRACE) {
        double r1 = scenario_arrival_rate(base) / scenario_speedup(base);
        snprintf(p->rate_set, sizeof p->rate_set, "workload.speedup=%.10g", p->want / r1);
    } else snprintf(p->rate_set, sizeof p->rate_set, "workload.rate=%.10g", p->want);
    /* A target rate the scenario refuses (1e-300: the run would outlast the
     * simulated clock) is --target-rate's error, before any dimension. */
    if (loads_with(p, p->rate_set, msg, sizeof msg) != 0) {
        relabel(p, msg, sizeof msg);
        return plan_fail(err, errlen, 2, "%s", msg);
    }
    return 0;
}

/* ---- the dimensions ------------------------------------------------------------ */

/* A --search on a pool's replicas or servers (SECTION.KEY=SPEC, pool PI): the
 * monotone dimension, bisected between its smallest and largest value; with
 * one already, the widest range stays monotone and the other becomes an
 * ordinary dimension.  Returns 0 or the exit status + ERR. */
static int plan_mono_search(plan *p, const char *section, const char *key, const char *spec, int pi, char *err, size_t errlen)
{
    plan_dim tmp = { .opt = "--search" };
    int rc;
    snprintf(tmp.section, sizeof tmp.section, "%s", section);
    snprintf(tmp.key, sizeof tmp.key, "%s", key);
    if ((rc = parse_values(&tmp, spec, err, errlen)) != 0) { for (int k = 0; k < tmp.n; k++) free(tmp.vals[k]); return rc; }
    int ok = 1, a = INT_MAX, b = 0;
    for (int k = 0; k < tmp.n; k++) {
        char *end;
        double v = strtod(tmp.vals[k], &end);
        ok &= !*end && v >= 1 && v <= INT_MAX / 4 && v == floor(v);
        if (ok && v < a) a = (int) v;
        if (ok && v > b) b = (int) v;
    }
    for (int k = 0; k < tmp.n; k++) free(tmp.vals[k]);
    if (!ok)
        return plan_fail(err, errlen, 2, "plan: --search %s.%s=%s: expected whole numbers from 1 to %d", section, key, spec, INT_MAX / 4);
    if (p->mono.n >= 0 && !strcmp(p->mono.section, section) && !strcmp(p->mono.key, key))
        return plan_fail(err, errlen, 2, "plan: --search %s.%s: searched twice (with --replicas or another --search)", section, key);
    if (p->mono.n >= 0) {
        int widen = b - a > p->mono_hi - p->mono_lo;
        if (p->ndims == PLAN_MAX_DIMS) return plan_fail(err, errlen, 2, "plan: at most %d dimensions", PLAN_MAX_DIMS);
        plan_dim *d = &p->dims[p->ndims++];
        if (!widen) {
            snprintf(d->section, sizeof d->section, "%s", section);
            snprintf(d->key, sizeof d->key, "%s", key);
            d->opt = "--search";
            return parse_values(d, spec, err, errlen);
        }
        /* The old monotone dimension becomes a list. */
        d->opt = p->mono.opt;
        snprintf(d->section, sizeof d->section, "%s", p->mono.section);
        snprintf(d->key, sizeof d->key, "%s", p->mono.key);
        for (int v = p->mono_lo; v <= p->mono_hi; v++) {
            char t[32];
            snprintf(t, sizeof t, "%d", v);
            if ((rc = add_value(d, t, err, errlen)) != 0) return rc;
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
 * Returns 0 or the exit status + ERR. */
static int plan_dims(plan *p, char *err, size_t errlen)
{
    const scenario *base = p->base;
    const plan_opts *o = &p->o;
    int llm = -1, rc;
    for (int i = 0; i < scenario_npools(base); i++)
        if (scenario_pool_takes(base, i, "tp") && (o->pool ? !strcmp(scenario_pool_name(base, i), o->pool) : llm < 0))
            llm = i;
    if (o->pool && llm < 0) return plan_fail(err, errlen, 2, "plan: --pool %s: %s has no LLM pool of that name", o->pool, o->file);
    if ((o->gpus || o->tps || o->pps || o->eps || o->reps) && llm < 0)
        return plan_fail(err, errlen, 2, "plan: --gpus/--tp/--pp/--ep/--replicas need an LLM pool, and %s has none (use --search)",
                         o->file);
    /* Disaggregated (a role = prefill and a role = decode pool, no --pool): the
     * options search both pools, independently (xPyD: the decode replicas
     * bisected, the prefill replicas a list). */
    int pre = -1, dec = -1;
    for (int i = 0; !o->pool && i < scenario_npools(base); i++) {
        const char *role = scenario_pool_takes(base, i, "role") ? scenario_pool_value(base, i, "role") : NULL;
        if (role && !strcmp(role, "prefill") && pre < 0) pre = i;
        if (role && !strcmp(role, "decode") && dec < 0) dec = i;
    }
    int pd = pre >= 0 && dec >= 0;
    if (pd) llm = dec;
    const char *opts[4] = { o->gpus, o->tps, o->pps, o->eps }, *keys[4] = { "gpu", "tp", "pp", "ep" };
    const char *names[4] = { "--gpus", "--tp", "--pp", "--ep" };
    for (int k = 0; k < 4; k++) {
        if (!opts[k]) continue;
        for (int j = 0; j < (pd ? 2 : 1); j++) {
            if (p->ndims == PLAN_MAX_DIMS) return plan_fail(err, errlen, 2, "plan: at most %d dimensions", PLAN_MAX_DIMS);
            plan_dim *d = &p->dims[p->ndims++];
            snprintf(d->section, sizeof d->section, "pool %s", scenario_pool_name(base, j ? pre : llm));
            snprintf(d->key, sizeof d->key, "%s", keys[k]);
            d->opt = names[k];
            if ((rc = parse_values(d, opts[k], err, errlen)) != 0) return rc;
        }
    }
    if (o->reps && pd) {
        int a, b;
        if (parse_replicas(o->reps, &a, &b, err, errlen) != 0) return 2;
        if (p->ndims == PLAN_MAX_DIMS) return plan_fail(err, errlen, 2, "plan: at most %d dimensions", PLAN_MAX_DIMS);
        plan_dim *d = &p->dims[p->ndims++];
        snprintf(d->section, sizeof d->section, "pool %s", scenario_pool_name(base, pre));
        snprintf(d->key, sizeof d->key, "replicas");
        d->opt = "--replicas";
        for (int v = a; v <= b; v++) {
            char t[32];
            snprintf(t, sizeof t, "%d", v);
            if ((rc = add_value(d, t, err, errlen)) != 0) return rc;
        }
    }
    if (o->reps) {
        snprintf(p->mono.section, sizeof p->mono.section, "pool %s", scenario_pool_name(base, llm));
        snprintf(p->mono.key, sizeof p->mono.key, "replicas");
        p->mono.opt = "--replicas";
        if (parse_replicas(o->reps, &p->mono_lo, &p->mono_hi, err, errlen) != 0) return 2;
        p->mono.n = 0;
        p->mono_pool = llm;
    }
    for (int s = 0; s < o->nsearch; s++) {
        char section[160], key[64];
        const char *spec;
        if (split_key(o->searches[s], section, sizeof section, key, sizeof key, &spec) != 0)
            return plan_fail(err, errlen, 2, "plan: --search '%s': expected \"SECTION.KEY=FROM:TO:STEP\" or \"SECTION.KEY=a,b,c\"",
                             o->searches[s]);
        if (!scenario_has_section(base, section))
            return plan_fail(err, errlen, 2, "plan: --search %s.%s: %s has no section [%s]", section, key, o->file, section);
        int pi = -1;
        for (int i = 0; i < scenario_npools(base); i++) {
            char sec[80];
            snprintf(sec, sizeof sec, "pool %s", scenario_pool_name(base, i));
            if (!strcmp(sec, section)) pi = i;
        }
        if (pi >= 0 && (!strcmp(key, "replicas") || !strcmp(key, "servers"))) {
            if ((rc = plan_mono_search(p, section, key, spec, pi, err, errlen)) != 0) return rc;
            continue;
        }
        if (p->ndims == PLAN_MAX_DIMS) return plan_fail(err, errlen, 2, "plan: at most %d dimensions", PLAN_MAX_DIMS);
        plan_dim *d = &p->dims[p->ndims++];
        snprintf(d->section, sizeof d->section, "%s", section);
        snprintf(d->key, sizeof d->key, "%s", key);
        d->opt = "--search";
        if ((rc = parse_values(d, spec, err, errlen)) != 0) return rc;
    }
    return 0;
}

/* Every value of every dimension must be a valid key and value, and both
 * ends of the bisected one (--replicas 1:2000000 is refused here, not when the
 * bisection gets there).  Then P takes over the base scenario's [slo].
 * Returns 0 or 2 + ERR. */
static int plan_check_dims(plan *p, char *err, size_t errlen)
{
    char msg[2048], set[400];
    for (int i = 0; i < p->ndims; i++)
        for (int k = 0; k < p->dims[i].n; k++) {
            snprintf(set, sizeof set, "%s.%s=%s", p->dims[i].section, p->dims[i].key, p->dims[i].vals[k]);
            if (loads_with(p, set, msg, sizeof msg) != 0) {
                plan_relabel(msg, sizeof msg, p->dims[i].opt, p->dims[i].section, p->dims[i].key);
                return plan_fail(err, errlen, 2, "%s", msg);
            }
        }
    for (int k = 0; k < 2 && p->mono.n >= 0; k++) {
        snprintf(set, sizeof set, "%s.%s=%d", p->mono.section, p->mono.key, k ? p->mono_hi : p->mono_lo);
        if (loads_with(p, set, msg, sizeof msg) != 0) {
            plan_relabel(msg, sizeof msg, p->mono.opt, p->mono.section, p->mono.key);
            return plan_fail(err, errlen, 2, "%s", msg);
        }
    }
    p->umax = 1;
    const slo_spec *bs = scenario_slo(p->base);
    for (int t = 0; t < bs->n; t++) if (bs->t[t].kind == SLO_UTIL_MAX) p->umax = fmin(p->umax, bs->t[t].limit);
    scenario_take_slo(p->base, &p->slo);          /* taken over from base */
    if (p->mono.n >= 0) {
        if (shared_key(p, p->mono.key)) snprintf(p->mono_name, sizeof p->mono_name, "%s.%s", short_section(p->mono.section), p->mono.key);
        else snprintf(p->mono_name, sizeof p->mono_name, "%s", p->mono.key);
    }
    return 0;
}

/* ---- the configurations ------------------------------------------------------- */

/* Configuration C, loaded at monotone value M1 into S1: its cost per unit of
 * the monotone value and, for a generic pool's servers, the utilisation bound
 * and the Erlang C estimate; a generic pool's size as an ordinary dimension
 * below its utilisation bound rules the configuration out.  (A refusal at
 * M1 + 1 leaves the cost per unit 0.)  Returns 0 or the exit status + ERR. */
static int plan_estimate(plan *p, plan_config *c, int m1, const scenario *s1, char *err, size_t errlen)
{
    char reason[300], msg[2048];
    double c1 = task_config_cost(s1);
    double svc, cv;                  /* a generic pool's mean service time, ms, and its CV */
    c->fixed = c1;
    c->unit = 0;
    if (p->mono.n >= 0) {
        scenario *s2 = scenario_new();
        if (!s2) return plan_fail(err, errlen, 1, "out of memory");
        int st2 = load_config(p, c, m1 + 1, s2, reason, sizeof reason, msg, sizeof msg);
        if (st2 == 0) { c->unit = task_config_cost(s2) - c1; c->fixed = c1 - c->unit * m1; }
        else if (st2 == 2 && p->o.note) p->o.note(msg, p->o.arg);   /* said, and the cost per unit left 0 */
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
            snprintf(c->bound, sizeof c->bound, "%s: servers=%d cannot carry its offered load (%.4g req/s x %.4g ms = %.4g servers "
                     "busy, utilisation %.3g, utilization_max %.3g)", sec, servers, scenario_arrival_rate(s1), svc, load,
                     load / servers, p->umax);
    }
    if (c->bound[0]) c->b.done = 1;
    return 0;
}

/* The configurations: the product of the dimensions, each with its label,
 * bracket, cost and estimates; refusals rule a configuration out.  Returns 0
 * or the exit status + ERR. */
static int plan_configs(plan *p, char *err, size_t errlen)
{
    char reason[300];
    long total = 1;
    for (int i = 0; i < p->ndims; i++) total *= p->dims[i].n;
    if (total > PLAN_MAX_COMBOS)
        return plan_fail(err, errlen, 2, "plan: %ld configurations (at most %d): narrow the search", total, PLAN_MAX_COMBOS);
    p->c = calloc((size_t) total, sizeof *p->c);
    if (!p->c) return plan_fail(err, errlen, 1, "out of memory");
    p->nc = (int) total;
    for (int ci = 0; ci < p->nc; ci++) {
        plan_config *c = &p->c[ci];
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
        if (!s1) return plan_fail(err, errlen, 1, "out of memory");
        int m1 = p->mono.n >= 0 ? p->mono_lo : 0;
        int st = load_config(p, c, m1, s1, reason, sizeof reason, err, errlen);
        if (st == 0) st = plan_estimate(p, c, m1, s1, err, errlen);
        else if (st == 1) { c->infeasible = 1; snprintf(c->reason, sizeof c->reason, "%s", reason); st = 0; }
        scenario_delete(s1);
        if (st) return st;
    }
    return 0;
}

int plan_setup(plan *p, char *err, size_t errlen)
{
    int rc;
    if (!p->base && !(p->base = scenario_new())) return plan_fail(err, errlen, 1, "out of memory");
    if ((rc = plan_base(p, err, errlen)) != 0 || (rc = plan_dims(p, err, errlen)) != 0 ||
        (rc = plan_check_dims(p, err, errlen)) != 0 || (rc = plan_configs(p, err, errlen)) != 0)
        return rc;
    p->seed0 = p->o.seed ? p->o.seed : scenario_seed(p->base);
    return 0;
}

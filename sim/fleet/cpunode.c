/* cpunode.c -- the cores of a node shared by CPU jobs, with CFS quotas per
 * cgroup (see cpunode.h).
 *
 * The state changes only at events: a job starts, ends or is cancelled, a
 * cgroup uses up its quota, a CFS period ends, the background changes.  At
 * each, the node first brings every job's remaining work and every cgroup's
 * used quota up to now at the rates of the last allocation (advance), then
 * applies what happened, splits the free cores again (allocate) and schedules
 * its one next event: the earliest job end, quota exhaustion or period end.
 * Work is kept in core-ns (doubles), times in integer ns rounded up, so that a
 * job never ends before its work is done.
 */
#include "fleet/cpunode.h"
#include "engine/errmsg.h"
#include "engine/rng.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WORK_EPS 1e-3   /* core-ns: work (or quota) left below this is none */

/* ---- configuration ---------------------------------------------------------- */

static const char *const POOL_KEYS[] = { "cpu_request_cores", "cpu_limit_cores", "cfs_period_ms", "servers_per_replica",
                                         "node", NULL };

const cpucfg_key CPUCFG_NODE_KEYS[] = {
    { "cores", "", "CPU cores of the node (required), shared by the replicas of the pools placed on it (node = NAME) "
                   "and by the background load" },
    { "background_cpu", "0", "other load on the node (noisy neighbours, a CPU stress), cores it takes first: a "
                             "distribution drawn afresh every background_period_ms, or series(T_S:CORES, ...) "
                             "a step function of time" },
    { "background_period_ms", "1000", "how long each draw of a background_cpu distribution holds, ms" },
    { NULL, NULL, NULL },
};

int cpucfg_pool_key(const char *key)
{
    for (int i = 0; POOL_KEYS[i]; i++)
        if (!strcmp(POOL_KEYS[i], key)) return 1;
    return 0;
}

int cpucfg_node_key(const char *key)
{
    for (const cpucfg_key *k = CPUCFG_NODE_KEYS; k->key; k++)
        if (!strcmp(k->key, key)) return 1;
    return 0;
}

/* Reads KEY as a number in (LO, HI] (LO itself too when LO_OK) into *OUT, DEF
 * when absent.  Returns 0, or -1 with a message. */
static int number(cpucfg_get get, void *ctx, const char *key, double def, double lo, int lo_ok, double hi,
                  double *out, const char **bad, char *err, size_t errlen)
{
    const char *v = get(ctx, key);
    *out = def;
    if (!v) return 0;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    while (*end && isspace((unsigned char) *end)) end++;
    if (end == v || *end || errno || !isfinite(d)) {
        *bad = key;
        errmsg_set(err, errlen, "expected a number, got '%s'", v);
        return -1;
    }
    if (!(lo_ok ? d >= lo : d > lo) || d > hi) {
        *bad = key;
        errmsg_set(err, errlen, "must be %s %g and <= %g, got %g", lo_ok ? ">=" : ">", lo, hi, d);
        return -1;
    }
    *out = d;
    return 0;
}

int cpucfg_parse_pool(cpu_cfg *c, cpucfg_get get, void *ctx, const char **key, char *err, size_t errlen)
{
    const char *bad = NULL, *v;
    memset(c, 0, sizeof *c);
    c->period_ms = 100;
    c->node.cores = INFINITY;
    for (int i = 0; POOL_KEYS[i]; i++)
        if (get(ctx, POOL_KEYS[i])) c->on = 1;
    if (!c->on) return 0;
    if (number(get, ctx, "cpu_request_cores", 0, 0, 0, 1e6, &c->request_cores, &bad, err, errlen) ||
        number(get, ctx, "cpu_limit_cores", 0, 0, 0, 1e6, &c->limit_cores, &bad, err, errlen) ||
        number(get, ctx, "cfs_period_ms", 100, 1, 1, 1e6, &c->period_ms, &bad, err, errlen))
        goto fail;
    double spr;
    if (number(get, ctx, "servers_per_replica", 1, 1, 1, 1e6, &spr, &bad, err, errlen)) goto fail;
    if (spr != floor(spr)) {
        bad = "servers_per_replica";
        errmsg_set(err, errlen, "expected a whole number, got %g", spr);
        goto fail;
    }
    c->servers_per_replica = (int) spr;
    if (get(ctx, "cfs_period_ms") && !get(ctx, "cpu_limit_cores")) {
        bad = "cfs_period_ms";
        errmsg_set(err, errlen, "needs cpu_limit_cores (the quota per period)");
        goto fail;
    }
    if (c->limit_cores > 0 && c->request_cores > c->limit_cores) {
        bad = "cpu_request_cores";
        errmsg_set(err, errlen, "%g cores is above cpu_limit_cores (%g): a request cannot exceed its limit",
                   c->request_cores, c->limit_cores);
        goto fail;
    }
    if ((v = get(ctx, "node")) != NULL) {
        size_t n = strlen(v);
        if (n == 0 || n >= sizeof c->node.name || strpbrk(v, " \t[]")) {
            bad = "node";
            errmsg_set(err, errlen, "expected the NAME of a [node NAME] section (one word, < %zu characters), got '%s'",
                       sizeof c->node.name, v);
            goto fail;
        }
        memcpy(c->node.name, v, n + 1);
    }
    return 0;
fail:
    *key = bad;
    return -1;
}

/* Parses "series(T:C, T:C, ...)" into N.  Returns 0, or -1 with a message. */
static int parse_series(cpu_node_cfg *n, const char *v, char *err, size_t errlen)
{
    const char *p = v + strlen("series(");
    const char *close = strrchr(v, ')');
    if (!close || close[1] != '\0') {
        errmsg_set(err, errlen, "series: expected series(T_S:CORES, ...) with a closing parenthesis, got '%s'", v);
        return -1;
    }
    n->nseries = 0;
    while (p < close) {
        char *end;
        while (isspace((unsigned char) *p) || *p == ',') p++;
        if (p >= close) break;
        if (n->nseries == CPUNODE_MAX_SERIES) {
            errmsg_set(err, errlen, "series: at most %d points", CPUNODE_MAX_SERIES);
            return -1;
        }
        errno = 0;
        double t = strtod(p, &end);
        if (end == p || *end != ':' || errno || !isfinite(t) || t < 0) {
            errmsg_set(err, errlen, "series: expected T_S:CORES with T_S >= 0 at '%.20s'", p);
            return -1;
        }
        p = end + 1;
        double c = strtod(p, &end);
        if (end == p || errno || !isfinite(c) || c < 0) {
            errmsg_set(err, errlen, "series: expected a number of cores >= 0 at '%.20s'", p);
            return -1;
        }
        if (n->nseries > 0 && !(t > n->series_s[n->nseries - 1])) {
            errmsg_set(err, errlen, "series: times must increase (%g after %g)", t, n->series_s[n->nseries - 1]);
            return -1;
        }
        n->series_s[n->nseries] = t;
        n->series_cores[n->nseries++] = c;
        p = end;
        while (isspace((unsigned char) *p)) p++;
        if (p < close && *p != ',') {
            errmsg_set(err, errlen, "series: expected ',' between points at '%.20s'", p);
            return -1;
        }
    }
    if (n->nseries == 0) {
        errmsg_set(err, errlen, "series: needs at least one point T_S:CORES");
        return -1;
    }
    return 0;
}

int cpucfg_parse_node(cpu_node_cfg *n, cpucfg_get get, void *ctx, const char *basedir, const char **key,
                      char *err, size_t errlen)
{
    const char *bad = NULL, *v;
    n->bg_kind = CPU_BG_NONE;
    n->nseries = 0;
    memset(&n->bg, 0, sizeof n->bg);
    if (!get(ctx, "cores")) {
        bad = "cores";
        errmsg_set(err, errlen, "missing: a node needs its number of cores");
        goto fail;
    }
    if (number(get, ctx, "cores", 0, 0, 0, 1e6, &n->cores, &bad, err, errlen) ||
        number(get, ctx, "background_period_ms", 1000, 0, 0, 1e12, &n->bg_period_ms, &bad, err, errlen))
        goto fail;
    if ((v = get(ctx, "background_cpu")) != NULL) {
        bad = "background_cpu";
        if (!strncmp(v, "series(", 7)) {
            if (parse_series(n, v, err, errlen) != 0) goto fail;
            n->bg_kind = CPU_BG_SERIES;
        } else {
            if (dist_parse(&n->bg, v, basedir, err, errlen) != 0) goto fail;
            n->bg_kind = CPU_BG_DIST;
        }
        bad = NULL;
    } else if (get(ctx, "background_period_ms")) {
        bad = "background_period_ms";
        errmsg_set(err, errlen, "needs background_cpu (the load it holds)");
        goto fail;
    }
    if (n->bg_kind != CPU_BG_DIST && get(ctx, "background_period_ms")) {
        bad = "background_period_ms";
        errmsg_set(err, errlen, "applies to a background_cpu distribution, not a series");
        goto fail;
    }
    return 0;
fail:
    *key = bad;
    return -1;
}

/* A [node NAME] section's value of KEY (cpucfg_get over the scenario). */
typedef struct node_get_ctx { scn_ctx *x; const char *sec; } node_get_ctx;
static const char *node_get(void *ctx, const char *key)
{
    const node_get_ctx *g = ctx;
    return scn_value(g->x, g->sec, key);
}

int cpucfg_read_node(scn_ctx *x, const char *pool_sec, cpu_cfg *c)
{
    if (!c->on || !c->node.name[0]) return 0;
    char sec[80], msg[512];
    snprintf(sec, sizeof sec, "node %s", c->node.name);
    const cfg_section *cs = cfg_section_get(x->raw, sec);
    if (!cs) return scn_fail(x, pool_sec, "node", "no [node %s] section", c->node.name);
    node_get_ctx g = { x, sec };
    const char *key = NULL;
    if (cpucfg_parse_node(&c->node, node_get, &g, x->raw->dir, &key, msg, sizeof msg) != 0)
        return scn_fail(x, sec, key, "%s", msg);
    c->node.line = cs->line;
    return 0;
}

void cpucfg_free_node(cpu_node_cfg *n)
{
    if (n && n->bg_kind == CPU_BG_DIST) dist_free(&n->bg);
    if (n) n->bg_kind = CPU_BG_NONE;
}

/* ---- the run's nodes -------------------------------------------------------- */

typedef struct cpu_group {
    double weight;            /* share weight (cores requested), > 0 */
    double quota;             /* CPU time per period, core-ns (INFINITY: no limit) */
    simtime_t period;         /* CFS period, ns */
    simtime_t period_end;     /* end of its current period, ns */
    double used;              /* CPU time used in the current period, core-ns */
    int throttled;            /* 1: quota used up, waiting for period_end */
    int njobs;                /* jobs running in it */
    double alloc;             /* cores it gets now (all its jobs together) */
    simtime_t thr_since;      /* when it was last throttled, ns */
    uint64_t nr_throttled;    /* periods throttled in the window */
    double throttled_ns;      /* time throttled in the window, ns */
} cpu_group;

typedef struct cpu_job {
    uint64_t id;              /* its id (> 0) */
    int g;                    /* its cgroup */
    double left;              /* CPU work left, core-ns */
    cpu_done_fn done;         /* called when it is done */
    void *ctx;                /* DONE's context */
    int64_t arg;              /* DONE's argument */
} cpu_job;

struct cpu_node {
    const cpu_node_cfg *cfg;  /* its section */
    evq *q;                   /* the engine */
    gsl_rng *rng;             /* background draws (CPU_BG_DIST), or NULL */
    double bg;                /* background load now, cores */
    size_t bg_next;           /* CPU_BG_SERIES: the next point to apply */
    simtime_t t;              /* when work was last brought up to date, ns */
    cpu_group *g;             /* its cgroups */
    int ng, capg;             /* cgroups, and room */
    cpu_job *j;               /* running jobs */
    int nj, capj;             /* jobs, and room */
    uint64_t next_id;         /* the id the next job gets */
    evq_id next;              /* the next job end, quota exhaustion or period end, or 0 */
    simtime_t next_t;         /* its time, ns */
    double busy_area;         /* core-ns busy (jobs and background) since the window opened */
    double bg_area;           /* core-ns of background since the window opened */
    simtime_t open_t;         /* when the window opened, ns */
    simtime_t close_t;        /* when it closed, ns (0: open) */
    int oom;                  /* 1: an event or a job could not be stored */
    cpu_node *link;           /* the run's next node */
};

struct cpu_nodes {
    evq *q;                   /* the engine */
    uint64_t seed;            /* run seed */
    cpu_node *head;           /* its nodes */
};

cpu_nodes *cpu_nodes_new(evq *q, uint64_t seed)
{
    cpu_nodes *ns = calloc(1, sizeof *ns);
    if (!ns) return NULL;
    ns->q = q;
    ns->seed = seed;
    return ns;
}

void cpu_nodes_free(cpu_nodes *ns)
{
    if (!ns) return;
    for (cpu_node *n = ns->head, *next; n; n = next) {
        next = n->link;
        if (n->rng) gsl_rng_free(n->rng);
        free(n->g);
        free(n->j);
        free(n);
    }
    free(ns);
}

/* Cores N's jobs may use now: its cores less the background (>= 0). */
static double free_cores(const cpu_node *n)
{
    double a = n->cfg->cores - n->bg;
    return a > 0 ? a : 0;
}

/* Brings every job and cgroup of N up to now at the current allocation, and
 * the window's integrals. */
static void advance(cpu_node *n)
{
    simtime_t now = evq_now(n->q);
    double dt = (double) (now - n->t);
    if (dt <= 0) return;
    double busy = 0;
    for (int i = 0; i < n->ng; i++) {
        cpu_group *g = &n->g[i];
        if (g->alloc > 0) g->used += g->alloc * dt;
        busy += g->alloc;
    }
    for (int i = 0; i < n->nj; i++) {
        const cpu_group *g = &n->g[n->j[i].g];
        if (g->alloc > 0) n->j[i].left -= g->alloc / g->njobs * dt;
    }
    if (isfinite(n->cfg->cores)) {
        double bg = n->bg < n->cfg->cores ? n->bg : n->cfg->cores;
        n->busy_area += (busy + bg) * dt;
        n->bg_area += bg * dt;
    }
    n->t = now;
}

/* Splits N's free cores among its runnable cgroups: weighted max-min fair,
 * each capped at one core per job. */
static void allocate(cpu_node *n)
{
    double avail = free_cores(n), wsum = 0;
    for (int i = 0; i < n->ng; i++) {
        cpu_group *g = &n->g[i];
        g->alloc = -1;                        /* undecided */
        if (g->njobs == 0 || g->throttled) g->alloc = 0;
        else wsum += g->weight;
    }
    if (!isfinite(avail)) {
        for (int i = 0; i < n->ng; i++)
            if (n->g[i].alloc < 0) n->g[i].alloc = n->g[i].njobs;
        return;
    }
    /* Water-filling: a cgroup whose demand is below its fair part takes its
     * demand; the rest share what is left by weight. */
    for (int changed = 1; changed && wsum > 0;) {
        changed = 0;
        double level = avail / wsum;
        for (int i = 0; i < n->ng; i++) {
            cpu_group *g = &n->g[i];
            if (g->alloc >= 0 || (double) g->njobs > g->weight * level) continue;
            g->alloc = g->njobs;
            avail -= g->alloc;
            wsum -= g->weight;
            changed = 1;
        }
    }
    double level = wsum > 0 ? (avail > 0 ? avail : 0) / wsum : 0;
    for (int i = 0; i < n->ng; i++)
        if (n->g[i].alloc < 0) n->g[i].alloc = n->g[i].weight * level;
}

static void on_next(evq *q, void *subject, int64_t arg);

/* Schedules N's next event: the earliest job end, quota exhaustion or end of
 * a busy limited cgroup's period. */
static void reschedule(cpu_node *n)
{
    simtime_t now = evq_now(n->q), best = SIMTIME_BEYOND;
    for (int i = 0; i < n->nj; i++) {
        const cpu_group *g = &n->g[n->j[i].g];
        if (!(g->alloc > 0)) continue;
        simtime_t t = simtime_add(now, simtime_from_ns_ceil(n->j[i].left / (g->alloc / g->njobs)));
        if (t < best) best = t;
    }
    for (int i = 0; i < n->ng; i++) {
        const cpu_group *g = &n->g[i];
        if (g->njobs == 0 || !isfinite(g->quota)) continue;
        if (g->period_end < best) best = g->period_end;
        if (g->alloc > 0) {
            simtime_t t = simtime_add(now, simtime_from_ns_ceil((g->quota - g->used) / g->alloc));
            if (t < best) best = t;
        }
    }
    if (n->next && n->next_t == best) return;  /* already scheduled */
    if (n->next) evq_cancel(n->q, n->next);
    n->next = 0;
    if (best >= SIMTIME_BEYOND) return;       /* nothing can progress (background takes every core) */
    n->next_t = best;
    if (!(n->next = evq_at(n->q, best, on_next, n, 0)) && !evq_overflowed(n->q)) n->oom = 1;
}

/* Ends periods that are over, throttles cgroups whose quota is used up, and
 * calls the ends of the jobs that are done (after the node is consistent
 * again, so that they may start new jobs). */
static void settle(cpu_node *n)
{
    simtime_t now = evq_now(n->q);
    for (int i = 0; i < n->ng; i++) {
        cpu_group *g = &n->g[i];
        if (!isfinite(g->quota) || g->period_end > now) continue;
        if (g->throttled && n->close_t == 0) g->throttled_ns += (double) (now - (g->thr_since > n->open_t ? g->thr_since : n->open_t));
        g->throttled = 0;
        g->used = 0;
        g->period_end = (now / g->period + 1) * g->period;
    }
    /* Jobs done, in the order they were started (deterministic). */
    int ndone = 0;
    cpu_job few[16], *done = few;
    for (int i = 0; i < n->nj; i++)
        if (n->j[i].left <= WORK_EPS) ndone++;
    if (ndone > 16 && !(done = malloc((size_t) ndone * sizeof *done))) {
        n->oom = 1;
        done = few;
        ndone = 16;
    }
    for (int i = 0, k = 0; i < n->nj && k < ndone;) {
        if (n->j[i].left > WORK_EPS) {
            i++;
            continue;
        }
        done[k++] = n->j[i];
        n->g[n->j[i].g].njobs--;
        memmove(&n->j[i], &n->j[i + 1], (size_t) (n->nj - i - 1) * sizeof *n->j);
        n->nj--;
    }
    /* Quotas used up: throttled until the period ends. */
    for (int i = 0; i < n->ng; i++) {
        cpu_group *g = &n->g[i];
        if (!g->throttled && isfinite(g->quota) && g->njobs > 0 && g->used >= g->quota - WORK_EPS) {
            g->throttled = 1;
            g->thr_since = now;
            if (n->close_t == 0) g->nr_throttled++;
        }
    }
    allocate(n);
    reschedule(n);
    for (int i = 0; i < ndone; i++) done[i].done(done[i].ctx, done[i].arg);
    if (done != few) free(done);
}

static void on_next(evq *q, void *subject, int64_t arg)
{
    (void) q;
    (void) arg;
    cpu_node *n = subject;
    n->next = 0;
    advance(n);
    settle(n);
}

/* The background changes: a new draw, or the series' next point. */
static void on_background(evq *q, void *subject, int64_t arg)
{
    (void) arg;
    cpu_node *n = subject;
    advance(n);
    const cpu_node_cfg *c = n->cfg;
    simtime_t at = 0;
    if (c->bg_kind == CPU_BG_DIST) {
        n->bg = dist_sample(&c->bg, n->rng);
        at = simtime_add(evq_now(q), simtime_from_ms(c->bg_period_ms));
    } else {
        n->bg = c->series_cores[n->bg_next++];
        at = n->bg_next < c->nseries ? simtime_from_s(c->series_s[n->bg_next]) : 0;
    }
    if (at > 0 && at < SIMTIME_BEYOND && !evq_at(q, at, on_background, n, 0) && !evq_overflowed(q)) n->oom = 1;
    settle(n);
}

cpu_node *cpu_nodes_get(cpu_nodes *ns, const cpu_cfg *c)
{
    if (c->node.name[0])
        for (cpu_node *n = ns->head; n; n = n->link)
            if (!strcmp(n->cfg->name, c->node.name)) return n;
    cpu_node *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->cfg = &c->node;
    n->q = ns->q;
    n->t = evq_now(ns->q);
    n->next_id = 1;
    n->link = ns->head;
    ns->head = n;
    if (c->node.bg_kind == CPU_BG_DIST) {
        char stream[96];
        snprintf(stream, sizeof stream, "node %s/background", c->node.name);
        if (!(n->rng = rng_stream(ns->seed, stream))) return NULL;
        on_background(ns->q, n, 0);
    } else if (c->node.bg_kind == CPU_BG_SERIES) {
        while (n->bg_next < c->node.nseries && c->node.series_s[n->bg_next] <= simtime_to_s(n->t))
            n->bg = c->node.series_cores[n->bg_next++];
        if (n->bg_next < c->node.nseries &&
            !evq_at(ns->q, simtime_from_s(c->node.series_s[n->bg_next]), on_background, n, 0))
            n->oom = 1;
    }
    return n;
}

int cpu_group_new(cpu_node *n, const cpu_cfg *c)
{
    if (n->ng == n->capg) {
        int cap = n->capg ? 2 * n->capg : 8;
        cpu_group *g = realloc(n->g, (size_t) cap * sizeof *g);
        if (!g) return -1;
        n->g = g;
        n->capg = cap;
    }
    cpu_group *g = &n->g[n->ng];
    memset(g, 0, sizeof *g);
    g->weight = c->request_cores > 0 ? c->request_cores : c->limit_cores > 0 ? c->limit_cores : 1;
    g->period = simtime_from_ms(c->period_ms);
    g->quota = c->limit_cores > 0 ? c->limit_cores * (double) g->period : INFINITY;
    g->period_end = (evq_now(n->q) / g->period + 1) * g->period;
    return n->ng++;
}

uint64_t cpu_job_start(cpu_node *n, int g, double work_ms, cpu_done_fn done, void *ctx, int64_t arg)
{
    if (n->nj == n->capj) {
        int cap = n->capj ? 2 * n->capj : 16;
        cpu_job *j = realloc(n->j, (size_t) cap * sizeof *j);
        if (!j) {
            n->oom = 1;
            return 0;
        }
        n->j = j;
        n->capj = cap;
    }
    advance(n);
    cpu_job *j = &n->j[n->nj++];
    j->id = n->next_id++;
    j->g = g;
    j->left = work_ms > 0 ? work_ms * 1e6 : 0;
    j->done = done;
    j->ctx = ctx;
    j->arg = arg;
    n->g[g].njobs++;
    uint64_t id = j->id;
    settle(n);
    return id;
}

void cpu_job_cancel(cpu_node *n, uint64_t id)
{
    for (int i = 0; i < n->nj; i++) {
        if (n->j[i].id != id) continue;
        advance(n);
        n->g[n->j[i].g].njobs--;
        memmove(&n->j[i], &n->j[i + 1], (size_t) (n->nj - i - 1) * sizeof *n->j);
        n->nj--;
        settle(n);
        return;
    }
}

void cpu_node_window_open(cpu_node *n)
{
    advance(n);
    simtime_t now = evq_now(n->q);
    n->busy_area = n->bg_area = 0;
    n->open_t = now;
    n->close_t = 0;
    for (int i = 0; i < n->ng; i++) {
        n->g[i].nr_throttled = 0;
        n->g[i].throttled_ns = 0;
    }
}

void cpu_node_window_close(cpu_node *n)
{
    if (n->close_t) return;
    advance(n);
    simtime_t now = evq_now(n->q);
    for (int i = 0; i < n->ng; i++) {
        cpu_group *g = &n->g[i];
        if (g->throttled) g->throttled_ns += (double) (now - (g->thr_since > n->open_t ? g->thr_since : n->open_t));
    }
    n->close_t = now > n->open_t ? now : n->open_t + 1;
}

/* The window's length so far, ns (> 0). */
static double window_ns(const cpu_node *n)
{
    simtime_t end = n->close_t ? n->close_t : evq_now(n->q);
    return end > n->open_t ? (double) (end - n->open_t) : 1;
}

double cpu_node_busy_share(const cpu_node *n)
{
    return isfinite(n->cfg->cores) ? n->busy_area / window_ns(n) / n->cfg->cores : 0;
}

double cpu_node_background_mean(const cpu_node *n) { return n->bg_area / window_ns(n); }

uint64_t cpu_group_throttled_periods(const cpu_node *n, int g) { return n->g[g].nr_throttled; }
double cpu_group_throttled_s(const cpu_node *n, int g) { return n->g[g].throttled_ns / 1e9; }
int cpu_node_oom(const cpu_node *n) { return n->oom; }

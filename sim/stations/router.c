/* router.c -- the router station kind (see router.h). */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/check.h"
#include "engine/rng.h"
#include "stations/router.h"
#include "core/result.h"
#include "fleet/cputier.h"
#include "fleet/fleetcfg.h"

typedef struct router {
    station st;               /* common part; must be first */
    const router_cfg *c;      /* configuration */
    route_ctx rc;             /* the policy's view and state */
    station_snap *snaps;      /* one per out-edge, taken when the policy asks (route_view) */
    /* A policy ordering by requests inside (ROUTE_KEY_INSIDE: least_outstanding):
     * the out-edges' counts in an index, kept current by station_watch. */
    int ix_state;             /* 0: not built yet (out-edges are set after make), 1: built,
                                 -1: none (out of memory: the policy reads every snapshot) */
    route_index ix;           /* out-edge i's key: its requests inside */
    int check;                /* LATSIM_CHECK's period (engine/check.h): at those requests a scan must pick what the index picks */
    const request *routing;   /* the request being routed (its prefix for prefix_affinity) */
    gsl_rng *scores;          /* complexity: stream of scores drawn here */
    int complexity;           /* 1 for policy = complexity */
    uint64_t (*sides)[2];     /* complexity: measured requests per out-edge and true side */
    /* pauses only (c->pauses) */
    gsl_rng *prng;            /* stream "router NAME/pause": times between pauses and lengths */
    simtime_t paused_to;      /* end of the pause in progress, ns (0: none) */
    request **held;           /* requests that met the pause, in order of arrival */
    unsigned char *held_stage; /* per held request: 0 = not yet arrived, 1 = overhead done, to dispatch */
    size_t nheld, held_cap;   /* held requests, room for them */
    uint64_t npauses;         /* pauses begun in the measurement window */
    double paused_ms;         /* pause time begun in the window, ms */
    cpu_tier cpu;             /* CPU keys: overhead_ms as CPU jobs in its pods' cgroups (cpu.node NULL: a delay) */
} router;

static void arrive_now(router *R, request *r);
static void on_cpu_done(void *ctx, int64_t arg);

/* Out-edge I's snapshot, for the policy (route_view.snap). */
static const station_snap *target_snap(void *ctx, int i)
{
    router *R = ctx;
    station *st = &R->st;
    station_snapshot(st->out[i], &R->snaps[i]);
    if (R->rc.policy->uses_prefix && st->out[i]->ops->prefix_match) {
        simtime_t vis = evq_now(st->q) - simtime_from_ms(R->c->staleness_ms);
        uint32_t n = 0, h = st->out[i]->ops->prefix_match(st->out[i], R->routing, vis, &n);
        /* Only a prefix covering affinity_threshold of the prompt counts. */
        R->snaps[i].prefix_ids = (double) h >= R->c->affinity_threshold * (double) n ? h : 0;
    }
    return &R->snaps[i];
}

/* Out-edge SLOT's count of requests inside is now INSIDE (station_watch). */
static void edge_moved(void *ctx, int slot, uint64_t inside)
{
    route_index_set(&((router *) ctx)->ix, slot, (double) inside);
}

/* Builds the index of the out-edges' loads and watches them: at the first
 * request, once the engine has set the out-edges.  Returns 1 when built, 0 when
 * out of memory (the run ends with an error; the policy reads snapshots). */
static int build_index(router *R)
{
    station *st = &R->st;
    R->ix_state = -1;
    if (route_index_init(&R->ix, st->nout, 0) != 0) {
        st->sink->oom(st->sink->ctx);
        return 0;
    }
    for (int i = 0; i < st->nout; i++) {
        route_index_set(&R->ix, i, (double) st->out[i]->inside);
        if (station_watch(st->out[i], edge_moved, R, i) != 0) {
            st->sink->oom(st->sink->ctx);
            return 0;
        }
    }
    R->ix_state = 1;
    return 1;
}

/* Sanity check (assert only): the policy reading every snapshot, from the same
 * turn, picks GOT too.  O(out-edges): run only with the check flag on. */
static int index_sane(router *R, const request *r, uint64_t turn, int got)
{
    route_ctx scan = R->rc;
    scan.turn = turn;
    route_view all = { target_snap, R, NULL };
    route_counts tally = route_tally;          /* the check's own reads are not counted */
    int want = scan.policy->pick(&scan, r, &all, scan.n);
    route_tally = tally;
    if (want != got)
        fprintf(stderr, "latsim: router %s: the index of loads picked out-edge %d, a scan %d\n", R->st.cfg->name,
                got, want);
    return want == got;
}

static void dispatch(router *R, request *r)
{
    station *st = &R->st;
    if (R->ix_state == 0 && R->rc.policy->key == ROUTE_KEY_INSIDE) build_index(R);
    route_view v = { target_snap, R, R->ix_state == 1 ? &R->ix : NULL };
    R->routing = r;
    uint64_t turn = R->rc.turn;
    int e = route_pick(&R->rc, r, &v);
    if (check_due(R->check, (int64_t) r->id) && v.index) assert(index_sane(R, r, turn, e));
    R->routing = NULL;
    if (r->measured && R->complexity) R->sides[e][cplx_truth(&R->c->cplx, r->attrs.complexity)]++;
    station_forward(st, r, e);
}

/* During a pause R holds (R, STAGE) until it ends; the wait counts as gateway
 * overhead.  Returns 1 when held, 0 when the gateway runs. */
static int hold(router *R, request *r, int stage)
{
    simtime_t now = evq_now(R->st.q);
    if (!R->c->pauses || R->paused_to <= now) return 0;
    if (R->nheld == R->held_cap) {
        size_t n = R->held_cap ? 2 * R->held_cap : 64;
        request **h = realloc(R->held, n * sizeof *h);
        if (h) R->held = h;
        unsigned char *g = h ? realloc(R->held_stage, n) : NULL;
        if (g) R->held_stage = g;
        if (!h || !g) {
            R->st.sink->oom(R->st.sink->ctx);   /* the run ends with an error */
            return 0;
        }
        R->held_cap = n;
    }
    r->overhead_ns += R->paused_to - now;
    R->held[R->nheld] = r;
    R->held_stage[R->nheld++] = (unsigned char) stage;
    return 1;
}

static void on_overhead_done(evq *q, void *subject, int64_t arg)
{
    (void) q;
    request *r = (request *) (intptr_t) arg;
    if (hold(subject, r, 1)) return;
    dispatch(subject, r);
}

/* The pause is over: what it held goes on, in order. */
static void on_pause_end(evq *q, void *subject, int64_t arg)
{
    (void) arg;
    router *R = subject;
    if (R->paused_to > evq_now(q)) return;
    R->paused_to = 0;
    size_t n = R->nheld;
    R->nheld = 0;
    for (size_t i = 0; i < n; i++) {
        if (R->held_stage[i]) dispatch(R, R->held[i]);
        else arrive_now(R, R->held[i]);
    }
}

/* A pause begins: it lasts a pause_s draw; the next one comes a pause_every_s
 * draw of running time after it ends. */
static void on_pause(evq *q, void *subject, int64_t arg)
{
    (void) arg;
    router *R = subject;
    double len = dist_sample(&R->c->pause_s, R->prng);
    double run = dist_sample(&R->c->pause_every_s, R->prng);
    if (len < 0) len = 0;
    if (run < 0) run = 0;
    simtime_t now = evq_now(q), left = SIMTIME_HORIZON - now;
    if (!(len * 1e9 < (double) left)) return;      /* a pause past the clock: the gateway stops for good */
    simtime_t d = simtime_from_s(len);
    if (*R->st.sink->measuring) {
        R->npauses++;
        R->paused_ms += len * 1e3;
    }
    R->paused_to = now + d;
    station_after(&R->st, d, on_pause_end, R, 0);
    if (run + len < simtime_to_s(left)) station_after(&R->st, simtime_from_s(len + run), on_pause, R, 0);
}

/* The stall report's name of a router event (evq_namer). */
static int name_event(evq_handler h, const void *subject, char *buf, size_t n)
{
    if (h != on_pause && h != on_pause_end) return 0;
    snprintf(buf, n, "[pool %s] pause_every_s, pause_s (the gateway's pauses)", ((const router *) subject)->st.cfg->name);
    return h == on_pause ? EVQ_NAME_PERIOD : EVQ_NAME_OTHER;   /* a pause's end follows its start */
}

static void arrive(station *st, request *r)
{
    router *R = (router *) st;
    if (hold(R, r, 0)) return;
    arrive_now(R, r);
}

/* R goes through the gateway: overhead (if any), then dispatch. */
static void arrive_now(router *R, request *r)
{
    station *st = &R->st;
    const router_cfg *c = R->c;
    if (R->complexity && !r->attrs.scored) {
        double s = dist_sample(&c->score, R->scores);
        r->attrs.complexity = s < 0 ? 0 : s > 1 ? 1 : s;
        r->attrs.scored = 1;
    }
    double ms = 0;
    if (c->has_overhead) ms += dist_sample(&c->overhead, st->rng);
    if (R->cpu.node && c->has_overhead) {   /* CPU work in a pod's cgroup; the classifier after it */
        r->enq = evq_now(st->q);
        if (!cpu_tier_start(&R->cpu, ms, on_cpu_done, R, (int64_t) (intptr_t) r)) st->sink->oom(st->sink->ctx);
        return;
    }
    if (R->complexity && c->has_classifier)
        ms += c->classifier_enc ? enc_pass_ms(&c->enc, 1, enc_len(&c->enc, r->prompt))
                                : dist_sample(&c->classifier, st->rng);
    if (!c->has_overhead && !(R->complexity && c->has_classifier)) {
        dispatch(R, r);
        return;
    }
    simtime_t d = simtime_from_ms(ms);
    r->overhead_ns += d;
    if (r->measured) stat_add(st->service_ms, ms);
    station_after(st, d, on_overhead_done, R, (int64_t) (intptr_t) r);
}

/* R's overhead_ms has run on the CPU (cputier.h): the time it took, throttled
 * waits included, is gateway overhead; then the classifier, if any. */
static void on_cpu_done(void *ctx, int64_t arg)
{
    router *R = ctx;
    station *st = &R->st;
    const router_cfg *c = R->c;
    request *r = (request *) (intptr_t) arg;
    simtime_t now = evq_now(st->q);
    r->overhead_ns += now - r->enq;
    double ms = 0;
    if (R->complexity && c->has_classifier)
        ms = c->classifier_enc ? enc_pass_ms(&c->enc, 1, enc_len(&c->enc, r->prompt))
                               : dist_sample(&c->classifier, st->rng);
    if (r->measured) stat_add(st->service_ms, simtime_to_ms(now - r->enq) + ms);
    if (!(ms > 0)) {
        on_overhead_done(st->q, R, arg);
        return;
    }
    simtime_t d = simtime_from_ms(ms);
    r->overhead_ns += d;
    station_after(st, d, on_overhead_done, R, arg);
}

static void window_open(station *st)
{
    router *R = (router *) st;
    if (R->cpu.node) cpu_node_window_open(R->cpu.node);
}

static void window_close(station *st)
{
    router *R = (router *) st;
    if (R->cpu.node) cpu_node_window_close(R->cpu.node);
}

/* Per out-edge and true side: the complex requests the small model got are the
 * quality cost of the policy, the simple ones the large model got its waste. */
static int report(station *st, pool_result *out)
{
    router *R = (router *) st;
    if (R->c->pauses && (pool_result_add(out, "pauses", (double) R->npauses) ||
                         pool_result_add(out, "paused_share", out->window_s > 0 ? R->paused_ms / 1e3 / out->window_s : 0)))
        return -1;
    if (R->cpu.node && cpu_tier_report(&R->cpu, out)) return -1;
    if (!R->complexity) return 0;
    static const char *const NAMES[2][2] = {
        { "small_got_simple", "small_got_complex" }, { "large_got_simple", "large_got_complex" } };
    for (int e = 0; e < 2; e++)
        for (int side = 0; side < 2; side++)
            if (pool_result_add(out, NAMES[e][side], (double) R->sides[e][side])) return -1;
    return 0;
}

static void destroy(station *st)
{
    router *R = (router *) st;
    route_close(&R->rc);
    route_index_free(&R->ix);
    free(R->snaps);
    free(R->sides);
    if (R->scores) gsl_rng_free(R->scores);
    if (R->prng) gsl_rng_free(R->prng);
    free(R->held);
    free(R->held_stage);
    cpu_tier_free(&R->cpu);
    station_fini(st);
    free(R);
}

/* With CPU keys: the gateway's CPU demand over the cores its pods may use
 * (cputier.h), so that a limit below the demand is a saturated pool. */
static double offered_load(const station *st, double rate)
{
    const router *R = (const router *) st;
    return rate * R->c->overhead.mean / 1000.0 / cpu_tier_cores(R->cpu.c, R->cpu.n);
}

static const station_ops ROUTER_OPS = {
    .arrive = arrive,
    .report = report,
    .destroy = destroy,
};

static const station_ops ROUTER_CPU_OPS = {   /* with CPU keys */
    .arrive = arrive,
    .window_open = window_open,
    .window_close = window_close,
    .report = report,
    .offered_load = offered_load,
    .destroy = destroy,
};

static station *router_new(const pool_cfg *cfg, const station_env *env)
{
    router *R = calloc(1, sizeof *R);
    if (!R) return NULL;
    const router_cfg *rc = cfg->ext;
    R->c = rc;
    R->complexity = rc->policy->uses_complexity;
    R->check = check_period();
    char stream[96];
    route_stream_name(stream, sizeof stream, cfg->name);
    int cpu = cfg->fleet && cfg->fleet->cpu.on;
    if (station_init(&R->st, cpu ? &ROUTER_CPU_OPS : &ROUTER_OPS, cfg, env) != 0 ||
        !(R->snaps = calloc((size_t) cfg->nnext, sizeof *R->snaps)) ||
        !(R->sides = calloc((size_t) cfg->nnext, sizeof *R->sides)) ||
        route_open(&R->rc, rc->policy, cfg->nnext, rng_stream(env->seed, stream)) != 0) {
        destroy(&R->st);
        return NULL;
    }
    R->rc.params = &rc->cplx;
    if (R->complexity) {
        char name[96];
        snprintf(name, sizeof name, "complexity %s", cfg->name);
        if (!(R->scores = rng_stream(env->seed, name))) {
            destroy(&R->st);
            return NULL;
        }
    }
    if (rc->pauses) {
        evq_add_namer(env->q, name_event);
        char name[96];
        snprintf(name, sizeof name, "router %s/pause", cfg->name);
        if (!(R->prng = rng_stream(env->seed, name))) {
            destroy(&R->st);
            return NULL;
        }
        double run = dist_sample(&rc->pause_every_s, R->prng);
        if (run < 0) run = 0;
        if (run < simtime_to_s(SIMTIME_HORIZON) && station_after(&R->st, simtime_from_s(run), on_pause, R, 0) == 0) {
            destroy(&R->st);
            return NULL;
        }
    }
    if (cpu && cpu_tier_init(&R->cpu, &cfg->fleet->cpu, rc->replicas, env->cpu_nodes)) {
        destroy(&R->st);
        return NULL;
    }
    R->st.capacity = 1;       /* never busy: utilisation 0 */
    return &R->st;
}

static const scn_key KEYS[] = {
    { "policy", "round_robin", "routing policy: {choices}" },
    { "overhead_ms", "", "gateway work per request before dispatch, ms (distribution; none by default)" },
    { "complexity_cut", "0.5", "complexity: scores below it go to the first next (the small model)" },
    { "classifier_error", "0", "complexity: probability the classifier picks the wrong side" },
    { "uncertain_band", "0", "complexity: scores within this of the cut go to the second next (the large model)" },
    { "classifier_ms", "", "complexity: classifier latency, ms (distribution; none by default)" },
    { "classifier_model", "", "complexity: the encoder that classifies each request's prompt (catalog, e.g. "
      "bert-base-uncased): its forward pass over the prompt (priced as classifier_cost says; one sequence) is the classifier's latency "
      "instead of classifier_ms (which stays the default when none is named)" },
    { "classifier_gpu", "", "complexity: the catalog GPU the classifier runs on (or classifier_cpu_tflops and "
      "classifier_cpu_mem_gbs)" },
    { "classifier_cpu_tflops", "", "complexity: classifier on a CPU: peak of its cores, TFLOP/s" },
    { "classifier_cpu_mem_gbs", "", "complexity: classifier on a CPU: memory bandwidth, GB/s" },
    { "classifier_max_seq_len", "", "complexity: prompt tokens the classifier reads, at most (default: the model's context)" },
    { "classifier_cost", "auto", "complexity: how the classifier pass is priced: learned (the GPU's learned efficiencies), roofline, or "
      "auto: learned on a GPU, the roofline on a CPU" },
    { "classifier_engine", "", "complexity: classifier_cost = learned: whose efficiencies (vllm, sglang, trtllm, generic; default vllm)" },
    { "complexity", "uniform(min=0, max=1)", "complexity: score of requests whose class gives none" },
    { "staleness_ms", "0", "prefix_affinity: the router sees the caches as they were this long ago, ms" },
    { "affinity_threshold", "0.5", "prefix_affinity: a cached prefix counts only when it covers at least this share of the prompt blocks, else the least loaded target is chosen (as the cache_threshold of SGLang router, default 0.5)" },
    { "replicas", "1", "pods of the gateway, each a cgroup with cpu_limit_cores (only with CPU keys: cpu_limit_cores, "
      "cpu_request_cores or node; requests go to them in turn)" },
    { "pause_every_s", "none", "gateway GC / stop-the-world pauses: running time between them, s (distribution)" },
    { "pause_s", "", "length of a gateway pause, s (distribution; required with pause_every_s): arrivals wait until it ends" },
    { NULL, NULL, NULL },
};

static int parse(scn_ctx *x, const char *sec, pool_cfg *p)
{
    char choices[256];
    route_choices(choices, sizeof choices);
    int k;
    if (scn_enum(x, sec, "policy", choices, 0, &k)) return -1;
    router_cfg *c = calloc(1, sizeof *c);
    if (!c) return scn_fail_sec(x, sec, NULL, "out of memory");
    c->policy = route_at(k);
    p->ext = c;
    if (p->queue_limit > 0 || p->timeout_ms > 0)
        return scn_fail(x, sec, p->queue_limit > 0 ? "queue_limit" : "timeout_ms",
                        "a router holds no queue (set it on the pools it routes to)");
    if (scn_value(x, sec, "overhead_ms")) {
        if (scn_dist(x, sec, "overhead_ms", NULL, &c->overhead)) return -1;
        c->has_overhead = 1;
    }
    p->gateway = c->has_overhead;
    if (cpu_tier_replicas(x, sec, &c->replicas)) return -1;
    p->units = c->replicas;
    if (scn_num(x, sec, "staleness_ms", 0, 0, 0, 1e12, &c->staleness_ms)) return -1;
    if (scn_num(x, sec, "affinity_threshold", 0.5, 0, 0, 1, &c->affinity_threshold)) return -1;
    if (scn_value(x, sec, "pause_every_s")) {
        if (!scn_value(x, sec, "pause_s"))
            return scn_fail(x, sec, "pause_every_s", "needs pause_s (the length of a pause)");
        if (scn_dist(x, sec, "pause_every_s", NULL, &c->pause_every_s)) return -1;
        if (!(c->pause_every_s.mean > 0))
            return scn_fail(x, sec, "pause_every_s", "mean must be > 0 (else the gateway pauses without end)");
        if (c->pause_every_s.mean < SIMTIME_RESOLUTION_S)
            return scn_fail(x, sec, "pause_every_s", "mean %g s is below the clock's resolution (1 ns): the gateway "
                            "would pause again in the same instant, without end", c->pause_every_s.mean);
        if (scn_dist(x, sec, "pause_s", NULL, &c->pause_s)) return -1;
        if (c->pause_s.mean < 0) return scn_fail(x, sec, "pause_s", "mean must be >= 0 (a length)");
        c->pauses = 1;
        p->gateway = 1;
    } else if (scn_value(x, sec, "pause_s"))
        return scn_fail(x, sec, "pause_s", "needs pause_every_s (the time between pauses)");
    if (!c->policy->uses_complexity) {
        if (scn_value(x, sec, "classifier_model"))
            return scn_fail(x, sec, "classifier_model", "needs a policy that scores complexity, e.g. complexity "
                            "(the classifier is its decision)");
        return 0;
    }
    if (scn_num(x, sec, "complexity_cut", 0.5, 0, 0, 1, &c->cplx.cut)) return -1;
    if (scn_num(x, sec, "classifier_error", 0, 0, 0, 1, &c->cplx.error)) return -1;
    if (scn_num(x, sec, "uncertain_band", 0, 0, 0, 1, &c->cplx.band)) return -1;
    if (scn_value(x, sec, "classifier_ms")) {
        if (scn_dist(x, sec, "classifier_ms", NULL, &c->classifier)) return -1;
        c->has_classifier = 1;
        p->gateway = 1;
    }
    int rc = enc_parse(x, sec, "classifier_", 0, &c->enc);
    if (rc < 0) return -1;
    if (rc == 0) {
        if (c->has_classifier)
            return scn_fail(x, sec, "classifier_ms", "give classifier_ms or classifier_model, not both "
                            "(classifier_model prices the classifier)");
        c->has_classifier = c->classifier_enc = 1;
        p->gateway = p->tokens = 1;
    }
    if (scn_dist(x, sec, "complexity", "uniform(min=0, max=1)", &c->score)) return -1;
    return 0;
}

/* Checks what needs the out-edges (known only once every pool is read). */
static int resolve(scn_ctx *x, const char *sec, pool_cfg *p, sqlite3 *db)
{
    router_cfg *c = p->ext;
    if (c->policy->uses_complexity && p->nnext != 2)
        return scn_fail(x, sec, "next", "policy = %s needs exactly two pools in next "
                        "(the small model, then the large one), got %d", c->policy->name, p->nnext);
    return c->classifier_enc ? enc_resolve(x, sec, "classifier_", &c->enc, db) : 0;
}

static void free_cfg(pool_cfg *p)
{
    router_cfg *c = p->ext;
    if (!c) return;
    dist_free(&c->overhead);
    dist_free(&c->classifier);
    dist_free(&c->score);
    dist_free(&c->pause_every_s);
    dist_free(&c->pause_s);
    free(c);
    p->ext = NULL;
}

/* The kind's check_periods hook (kind.h): pauses are two events each (the
 * pause and its end). */
static int check_periods(scn_ctx *x, const char *sec, const pool_cfg *p, double duration_s)
{
    const router_cfg *r = p->ext;
    if (r && r->pauses &&
        scn_check_period(x, sec, "pause_every_s", 1, duration_s, r->pause_every_s.mean + r->pause_s.mean,
                         "pause_every_s + pause_s", 2))
        return -1;
    return 0;
}

/* The kind's check_fleet hook (kind.h): the CPU keys, which price overhead_ms. */
static int check_fleet(scn_ctx *x, const char *sec, const pool_cfg *p, const char *const *keys, int n)
{
    if (cpu_tier_check(x, sec, "router", keys, n)) return -1;
    const router_cfg *c = p->ext;
    if (n > 0 && !c->has_overhead)
        return scn_fail(x, sec, keys[0], "needs overhead_ms (the gateway's CPU work per request, on one core)");
    return 0;
}

/* The kind's key_choices hook (kind.h): `policy =` takes a row of the policy table. */
static int key_choices(const char *key, char *buf, size_t n)
{
    if (strcmp(key, "policy")) return -1;
    route_choices(buf, n);
    return 0;
}

/* The kind's defaults hook (kind.h): a policy that reads the targets' cached
 * prefixes, its threshold and staleness. */
static void defaults(const pool_cfg *p, const cfg *raw, const char *sec, double requests, FILE *out)
{
    (void) requests;
    const router_cfg *c = p->ext;
    if (!c->policy->uses_prefix) return;
    station_kind_default_line(out, p->kind, raw, sec, "affinity_threshold", NULL);
    station_kind_default_line(out, p->kind, raw, sec, "staleness_ms", NULL);
}

const station_kind router_kind = {
    .name = "router",
    .help = "sends each request to one of its next pools, chosen by a routing policy (a gateway with overhead_ms)",
    .keys = KEYS,
    .parse = parse,
    .resolve = resolve,
    .make = router_new,
    .free_cfg = free_cfg,
    .check_periods = check_periods,
    .key_choices = key_choices,
    .defaults = defaults,
    .check_fleet = check_fleet,
    .units_key = "replicas",
    .flags = KIND_CPU,
    .min_next = 1,
    .max_next = 0,
};

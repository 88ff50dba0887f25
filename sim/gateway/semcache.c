/* semcache.c -- the semantic result cache station, `kind = result_cache` (see semcache.h). */
#include "gateway/semcache.h"
#include "engine/errmsg.h"
#include "gateway/hop.h"
#include "gateway/rcache.h"
#include "core/encoder.h"
#include "core/result.h"
#include "core/zipf.h"
#include "fleet/cputier.h"
#include "fleet/fleetcfg.h"

#include <ctype.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct semcache_cfg {
    dist hit_ms;              /* lookup time of a hit, ms */
    dist miss_ms;             /* lookup time of a miss, ms */
    size_t capacity;          /* entries, 0 = unbounded */
    double false_hit_rate;    /* probability a lookup that should miss hits another answer */
    simtime_t *flush_at;      /* flush times, ns, ascending (owned) */
    int nflush;               /* how many */
    size_t intents;           /* intents drawn here for requests without one */
    double zipf;              /* their Zipf exponent, > 0 */
    simtime_t ttl;            /* answer lifetime, ns (SIMTIME_NEVER = forever, 0 = never stored) */
    double repeat;            /* repeat_share: share of requests (without a class intent) that repeat an
                                 earlier request's question, [0, 1); < 0: the Zipf over intents instead */
    int embed;                /* 1: embed_model is named: a lookup takes the encoder's pass over the
                                 request's prompt (enc), not hit_ms / miss_ms */
    enc_cfg enc;              /* the embedding model and its device (embed) */
    int replicas;             /* pods of the cache, each a cgroup (with CPU keys; 1 otherwise) */
} semcache_cfg;

/* Earlier requests' intents a repeat may draw from: the latest REPEAT_MAX (in a
 * ring; 8 MiB at most), so that memory does not grow with the run. */
#define REPEAT_MAX ((size_t) 1 << 20)

/* Default repeat_share: the hit rate the defaults give (unbounded capacity, no TTL). */
#define REPEAT_DEFAULT 0.3

typedef struct semcache {
    station st;               /* common part; must be first */
    const semcache_cfg *c;    /* configuration */
    rcache *cache;            /* the stored answers */
    zipf *zipf;        /* intent popularity */
    uint64_t lookups, hits, false_hits;   /* measured requests */
    stat_acc *hit_e2e, *miss_e2e;         /* client e2e of measured hits and misses, ms */
    stat_acc *hit_ttft, *miss_ttft;       /* their client TTFT, ms (misses: only those with tokens) */
    double miss_service_ms;   /* service time of measured misses (model time), ms */
    uint64_t miss_served;     /* measured misses that came back */
    rcache_stats at_open;     /* cache counters when the window opened */
    /* Measured lookups in order, in batches of bsize (when RISE_BATCHES are full,
     * neighbours merge and bsize doubles): the hit rate's rise from the first
     * half of the window to the second (report, hit_rate_rise). */
#define RISE_BATCHES 64
    uint64_t bl[RISE_BATCHES], bh[RISE_BATCHES];   /* lookups and hits (false ones included) per batch */
    int nb;                   /* batches complete */
    uint64_t bsize;           /* lookups per batch */
    uint64_t cl, ch;          /* the batch being filled: lookups, hits */
    uint64_t *past;           /* repeat_share: intents of earlier requests (a ring of up to REPEAT_MAX) */
    size_t npast_cap;         /* its allocated entries */
    uint64_t npast;           /* intents recorded so far (the ring's write position mod REPEAT_MAX) */
    uint64_t fresh;           /* repeat_share: new intents handed out so far */
    cpu_tier cpu;             /* CPU keys: hit_ms / miss_ms as CPU jobs in its pods' cgroups (cpu.node NULL: a delay) */
    double work_ms;           /* CPU keys: CPU time of the measured lookups, ms */
    uint64_t nwork;           /* CPU keys: measured lookups (work_ms's count) */
} semcache;

/* Counts a measured lookup (HIT: it hit) into the batches. */
static void rise_add(semcache *sc, int hit)
{
    sc->cl++;
    sc->ch += (uint64_t) hit;
    if (sc->cl < sc->bsize) return;
    sc->bl[sc->nb] = sc->cl;
    sc->bh[sc->nb++] = sc->ch;
    sc->cl = sc->ch = 0;
    if (sc->nb < RISE_BATCHES) return;
    for (int i = 0; i < RISE_BATCHES / 2; i++) {
        sc->bl[i] = sc->bl[2 * i] + sc->bl[2 * i + 1];
        sc->bh[i] = sc->bh[2 * i] + sc->bh[2 * i + 1];
    }
    sc->nb = RISE_BATCHES / 2;
    sc->bsize *= 2;
}

/* The hit rate of the window's later half of lookups minus that of its first
 * half (*RISE), and its standard error from the batch means (*SE: the spread of
 * the batches' hit rates about their half's, which counts the lookups'
 * correlation at the batch scale, unlike a binomial error); both NAN with fewer
 * than 8 batches. */
static void rise_of(const semcache *sc, double *rise, double *se)
{
    *rise = *se = NAN;
    if (sc->nb < 8) return;
    int half = sc->nb / 2, n[2] = { half, sc->nb - half };
    double l[2] = {0, 0}, h[2] = {0, 0}, ss = 0;
    for (int i = 0; i < sc->nb; i++) {
        l[i >= half] += (double) sc->bl[i];
        h[i >= half] += (double) sc->bh[i];
    }
    double p[2] = { h[0] / l[0], h[1] / l[1] };
    for (int i = 0; i < sc->nb; i++) {
        double d = (double) sc->bh[i] / (double) sc->bl[i] - p[i >= half];
        ss += d * d;
    }
    double var = ss / (double) (sc->nb - 2);   /* per batch, pooled over the halves */
    *rise = p[1] - p[0];
    *se = sqrt(var / n[0] + var / n[1]);
}

/* Marks a request that hit: the event handler answers it. */
#define HIT 1

static void on_looked_up(evq *q, void *subject, int64_t arg)
{
    (void) q;
    semcache *sc = subject;
    station *st = &sc->st;
    request *r = (request *) (intptr_t) (arg & ~(int64_t) 1);
    simtime_t now = evq_now(st->q);
    if (arg & HIT) {
        r->first_token = r->last_token = now;
        hop_answer_whole(r);     /* the stored answer goes back whole, not token by token */
        if (r->measured) {
            /* the answer comes whole: its first token arrives with its last byte */
            double e2e = simtime_to_ms(now + r->ret_last_ns - r->arrival);
            stat_add(sc->hit_e2e, e2e);
            stat_add(sc->hit_ttft, e2e);
        }
        station_finish(st, r);     /* served here */
        return;
    }
    r->notify = st;
    station_pass(st, r, 0);        /* a miss: the next station serves it */
}

static void on_cpu_done(void *ctx, int64_t arg);

static void arrive(station *st, request *r)
{
    semcache *sc = (semcache *) st;
    simtime_t now = evq_now(st->q);
    if (r->attrs.intent == 0 && sc->c->repeat >= 0) {
        /* repeat_share: with that probability the question of an earlier request
         * (one of the latest REPEAT_MAX, uniformly: popular questions are asked
         * again more, Simon's model), else one never asked before. */
        size_t have = sc->npast < REPEAT_MAX ? (size_t) sc->npast : REPEAT_MAX;
        if (have > 0 && gsl_rng_uniform(st->rng) < sc->c->repeat)
            r->attrs.intent = sc->past[gsl_rng_uniform_int(st->rng, have)];
        else
            r->attrs.intent = 1 + sc->fresh++;
        size_t at = (size_t) (sc->npast % REPEAT_MAX);
        if (at >= sc->npast_cap) {
            size_t cap = sc->npast_cap ? 2 * sc->npast_cap : 1024;
            uint64_t *x = realloc(sc->past, cap * sizeof *x);
            if (!x) {
                st->sink->oom(st->sink->ctx);
                return;
            }
            sc->past = x;
            sc->npast_cap = cap;
        }
        sc->past[at] = r->attrs.intent;
        sc->npast++;
    } else if (r->attrs.intent == 0) {
        /* intent keys start at 1: 0 means "none"; the class gave none, so the
         * cache's own popularity applies */
        r->attrs.intent = 1 + (uint64_t) zipf_sample(sc->zipf, st->rng);
    }
    if (r->attrs.cache_ttl < 0)                /* the class set no lifetime: the cache's own */
        r->attrs.cache_ttl = sc->c->ttl;
    rcache_result res = rcache_lookup(sc->cache, r->attrs.intent, now, st->rng);
    int hit = res != RCACHE_MISS;
    double ms = sc->c->embed ? enc_pass_ms(&sc->c->enc, 1, enc_len(&sc->c->enc, r->prompt))
                             : dist_sample(hit ? &sc->c->hit_ms : &sc->c->miss_ms, st->rng);
    r->cache_res = (uint8_t) (res == RCACHE_MISS ? 1 : res == RCACHE_HIT ? 2 : 3);
    if (r->measured) {
        sc->lookups++;
        sc->hits += res == RCACHE_HIT;
        sc->false_hits += res == RCACHE_FALSE_HIT;
        rise_add(sc, hit);
    }
    int64_t arg = (int64_t) (intptr_t) r | (hit ? HIT : 0);
    if (sc->cpu.node) {   /* CPU work in a pod's cgroup (cputier.h) */
        r->enq = now;
        if (r->measured) {
            sc->work_ms += ms;
            sc->nwork++;
        }
        if (!cpu_tier_start(&sc->cpu, ms, on_cpu_done, sc, arg)) st->sink->oom(st->sink->ctx);
        return;
    }
    simtime_t d = simtime_from_ms(ms);
    r->overhead_ns += d;
    if (r->measured) stat_add(st->service_ms, ms);
    station_after(st, d, on_looked_up, sc, arg);
}

/* A lookup has run on the CPU: the time it took, throttled waits included, is
 * the cache's overhead; then it answers (a hit) or passes on (a miss). */
static void on_cpu_done(void *ctx, int64_t arg)
{
    semcache *sc = ctx;
    request *r = (request *) (intptr_t) (arg & ~(int64_t) 1);
    simtime_t took = evq_now(sc->st.q) - r->enq;
    r->overhead_ns += took;
    if (r->measured) stat_add(sc->st.service_ms, simtime_to_ms(took));
    on_looked_up(sc->st.q, sc, arg);
}

/* The answer of a miss came back: store it. */
static void returned(station *st, request *r)
{
    semcache *sc = (semcache *) st;
    simtime_t now = evq_now(st->q);
    if (rcache_store(sc->cache, r->attrs.intent, r->arrival, now, r->attrs.cache_ttl) != 0)
        st->sink->oom(st->sink->ctx);
    if (r->measured) {
        stat_add(sc->miss_e2e, simtime_to_ms(now + r->ret_last_ns - r->arrival));
        if (r->first_token >= 0) {   /* the client's first token, as sim.c counts it (client_first) */
            simtime_t first = r->whole ? now + r->ret_last_ns : r->first_token + r->ret_first_ns;
            stat_add(sc->miss_ttft, simtime_to_ms(first - r->arrival));
        }
        sc->miss_service_ms += simtime_to_ms(r->service_ns);
        sc->miss_served++;
    }
}

static void window_open(station *st)
{
    semcache *sc = (semcache *) st;
    sc->at_open = *rcache_get_stats(sc->cache);
    if (sc->cpu.node) cpu_node_window_open(sc->cpu.node);
}

static void window_close(station *st)
{
    semcache *sc = (semcache *) st;
    if (sc->cpu.node) cpu_node_window_close(sc->cpu.node);
}

static int cache_fill(const station *st, double out[3])
{
    const rcache_stats *k = rcache_get_stats(((const semcache *) st)->cache);
    out[0] = (double) k->lookups;
    out[1] = out[2] = (double) (k->hits + k->false_hits);
    return 0;
}

static int report(station *st, pool_result *out)
{
    semcache *sc = (semcache *) st;
    const rcache_stats *k = rcache_get_stats(sc->cache);
    double n = sc->lookups ? (double) sc->lookups : NAN;
    double saved = sc->miss_served ? (double) (sc->hits + sc->false_hits) * sc->miss_service_ms
                                         / (double) sc->miss_served / 1000.0 : 0.0;
    if (pool_result_add(out, "hit_rate", (double) (sc->hits + sc->false_hits) / n)) return -1;
    double rise, rise_se;
    rise_of(sc, &rise, &rise_se);
    if (pool_result_add(out, "hit_rate_rise", rise)) return -1;
    if (pool_result_add(out, "hit_rate_rise_se", rise_se)) return -1;
    if (pool_result_add(out, "hits", (double) sc->hits)) return -1;
    if (pool_result_add(out, "false_hits", (double) sc->false_hits)) return -1;
    if (pool_result_add(out, "hit_e2e_ms_mean", stat_count(sc->hit_e2e) ? stat_mean(sc->hit_e2e) : NAN)) return -1;
    if (pool_result_add(out, "miss_e2e_ms_mean", stat_count(sc->miss_e2e) ? stat_mean(sc->miss_e2e) : NAN)) return -1;
    /* Percentiles of hits and misses apart (docs/gateway.md): an overall number
     * mixes the cache's lookup time with the model's. */
    static const double Q[3] = { 0.5, 0.9, 0.99 };
    static const char *const NAME[4][3] = {   /* string literals: pool_metric keeps the pointer */
        { "hit_e2e_ms_p50", "hit_e2e_ms_p90", "hit_e2e_ms_p99" },
        { "miss_e2e_ms_p50", "miss_e2e_ms_p90", "miss_e2e_ms_p99" },
        { "hit_ttft_ms_p50", "hit_ttft_ms_p90", "hit_ttft_ms_p99" },
        { "miss_ttft_ms_p50", "miss_ttft_ms_p90", "miss_ttft_ms_p99" } };
    const stat_acc *S[4] = { sc->hit_e2e, sc->miss_e2e, sc->hit_ttft, sc->miss_ttft };
    for (int i = 0; i < 4; i++) {
        if (i >= 2 && !stat_count(sc->miss_ttft)) continue;   /* the model emits no tokens: no TTFT */
        for (int j = 0; j < 3; j++)
            if (pool_result_add(out, NAME[i][j], stat_count(S[i]) ? stat_quantile(S[i], Q[j]) : NAN)) return -1;
    }
    if (pool_result_add(out, "model_s_saved", saved)) return -1;
    if (pool_result_add(out, "entries", (double) rcache_size(sc->cache))) return -1;
    if (pool_result_add(out, "evictions", (double) (k->evictions - sc->at_open.evictions))) return -1;
    if (pool_result_add(out, "expired", (double) (k->expired - sc->at_open.expired))) return -1;
    if (pool_result_add(out, "flushes", (double) k->flushes)) return -1;
    if (sc->cpu.node && cpu_tier_report(&sc->cpu, out)) return -1;
    return 0;
}

static void destroy(station *st)
{
    semcache *sc = (semcache *) st;
    rcache_free(sc->cache);
    zipf_free(sc->zipf);
    free(sc->past);
    stat_free(sc->hit_e2e);
    stat_free(sc->miss_e2e);
    stat_free(sc->hit_ttft);
    stat_free(sc->miss_ttft);
    cpu_tier_free(&sc->cpu);
    station_fini(st);
    free(st);
}

/* With CPU keys: the lookups' CPU demand (their measured mean) over the
 * cores its pods may use (cputier.h), so that a limit below the demand is a
 * saturated pool. */
static double offered_load(const station *st, double rate)
{
    const semcache *sc = (const semcache *) st;
    if (!sc->nwork) return NAN;
    return rate * sc->work_ms / (double) sc->nwork / 1000.0 / cpu_tier_cores(sc->cpu.c, sc->cpu.n);
}

static const station_ops SEMCACHE_OPS = {
    .arrive = arrive,
    .window_open = window_open,
    .report = report,
    .cache_fill = cache_fill,
    .returned = returned,
    .destroy = destroy,
};

static const station_ops SEMCACHE_CPU_OPS = {   /* with CPU keys */
    .arrive = arrive,
    .window_open = window_open,
    .window_close = window_close,
    .report = report,
    .offered_load = offered_load,
    .cache_fill = cache_fill,
    .returned = returned,
    .destroy = destroy,
};

int semcache_parse_times(const char *s, simtime_t **out, char *err, size_t errlen)
{
    *out = NULL;
    int n = 0, cap = 0;
    const char *p = s;
    while (*p) {
        while (isspace((unsigned char) *p) || *p == ',') p++;
        if (!*p) break;
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v >= 0) || !isfinite(v)) {
            errmsg_set(err, errlen, "'%s' is not a list of times such as 30m, 2h", s);
            goto fail;
        }
        double mult = 1;
        if (*end == 's') end++;
        else if (*end == 'm') { mult = 60; end++; }
        else if (*end == 'h') { mult = 3600; end++; }
        if (*end && !isspace((unsigned char) *end) && *end != ',') {
            errmsg_set(err, errlen, "'%s': unknown unit in '%.*s' (s, m or h)", s, (int) (end - p + 1), p);
            goto fail;
        }
        simtime_t t = simtime_from_s(v * mult);
        if (n > 0 && t < (*out)[n - 1]) {
            errmsg_set(err, errlen, "'%s': times must be in increasing order", s);
            goto fail;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            simtime_t *x = realloc(*out, (size_t) cap * sizeof *x);
            if (!x) { errmsg_set(err, errlen, "out of memory"); goto fail; }
            *out = x;
        }
        (*out)[n++] = t;
        p = end;
    }
    return n;
fail:
    free(*out);
    *out = NULL;
    return -1;
}

static const scn_key KEYS[] = {
    { "hit_ms", "const(1)", "lookup time of a hit, ms (distribution)" },
    { "miss_ms", "const(1)", "lookup time of a miss, ms (distribution)" },
    { "replicas", "1", "pods of the cache, each a cgroup with cpu_limit_cores (only with CPU keys: cpu_limit_cores, "
      "cpu_request_cores or node; hit_ms / miss_ms are then CPU time on one core; lookups go to the pods in turn)" },
    { "capacity", "0", "answers kept (least recently used evicted); 0 = unbounded (default: only TTLs and flushes bound it; set it to model the cache's memory)" },
    { "false_hit_rate", "0", "probability a lookup that should miss returns another question's answer" },
    { "flush_at", "", "times the cache is emptied (model upgrades), e.g. 30m, 2h" },
    { "repeat_share", "0.3", "share of requests (whose class gives no intents) that repeat an earlier request's question, [0, 1): "
      "the hit rate with unbounded capacity and no TTL; the rest ask new ones (default 0.3, unless intents or intent_zipf is given; "
      "a round figure: set it from your logs)" },
    { "intents", "1000", "intents requests ask, Zipf-popular (instead of repeat_share; when their class gives none; the hit rate "
      "depends on it and on the run's length strongly: set it from your logs)" },
    { "intent_zipf", "1", "Zipf exponent of intent popularity, > 0 (with intents; 1: Zipf's law, about what query logs show)" },
    { "cache_ttl_s", "inf", "how long an answer is kept, s (0 = never cached; inf = forever)" },
    { "embed_model", "", "the encoder that embeds each request's prompt for the lookup (catalog, e.g. "
      "all-minilm-l6-v2): a lookup, hit or miss, then takes its forward pass over the prompt (priced as "
      "embed_cost says; one sequence, not batched) instead of hit_ms / miss_ms (which stay the default when none is named)" },
    { "embed_gpu", "", "the catalog GPU the embedding runs on (or embed_cpu_tflops and embed_cpu_mem_gbs)" },
    { "embed_cpu_tflops", "", "embedding on a CPU: peak of its cores, TFLOP/s (with embed_cpu_mem_gbs)" },
    { "embed_cpu_mem_gbs", "", "embedding on a CPU: memory bandwidth, GB/s" },
    { "embed_max_seq_len", "", "prompt tokens the embedding reads, at most (default: the model's context)" },
    { "embed_cost", "auto", "how the embedding pass is priced: learned (the GPU's learned efficiencies), roofline, or "
      "auto: learned on a GPU, the roofline on a CPU" },
    { "embed_engine", "", "embed_cost = learned: whose efficiencies (vllm, sglang, trtllm, generic; default vllm)" },
    { NULL, NULL, NULL },
};

static void free_cfg(pool_cfg *p)
{
    semcache_cfg *c = p->ext;
    if (!c) return;
    dist_free(&c->hit_ms);
    dist_free(&c->miss_ms);
    free(c->flush_at);
    free(c);
    p->ext = NULL;
}

static int parse(scn_ctx *x, const char *sec, pool_cfg *p)
{
    semcache_cfg *c = calloc(1, sizeof *c);
    if (!c) return scn_fail(x, sec, NULL, "out of memory");
    p->ext = c;
    if (scn_dist(x, sec, "hit_ms", "const(1)", &c->hit_ms)) return -1;
    if (scn_dist(x, sec, "miss_ms", "const(1)", &c->miss_ms)) return -1;
    int rc = enc_parse(x, sec, "embed_", 0, &c->enc);
    if (rc < 0) return -1;
    if (rc == 0) {
        const char *both = scn_value(x, sec, "hit_ms") ? "hit_ms" : scn_value(x, sec, "miss_ms") ? "miss_ms" : NULL;
        if (both) return scn_fail(x, sec, both, "give %s or embed_model, not both (embed_model prices the lookup)", both);
        c->embed = 1;
        p->tokens = 1;
    }
    if (cpu_tier_replicas(x, sec, &c->replicas)) return -1;
    p->units = c->replicas;
    int64_t cap, k;
    if (scn_i64(x, sec, "capacity", 0, 0, INT64_C(1) << 31, &cap)) return -1;
    c->capacity = (size_t) cap;
    if (scn_num(x, sec, "false_hit_rate", 0, 0, 0, 1, &c->false_hit_rate)) return -1;
    const char *f = scn_value(x, sec, "flush_at");
    if (f) {
        char err[160];
        int n = semcache_parse_times(f, &c->flush_at, err, sizeof err);
        if (n < 0) return scn_fail(x, sec, "flush_at", "%s", err);
        c->nflush = n;
    }
    int zipf_given = scn_value(x, sec, "intents") || scn_value(x, sec, "intent_zipf");
    if (scn_value(x, sec, "repeat_share") && zipf_given)
        return scn_fail(x, sec, "repeat_share", "give repeat_share or intents/intent_zipf, not both");
    c->repeat = -1;
    if (!zipf_given && scn_num(x, sec, "repeat_share", REPEAT_DEFAULT, 0, 0, 0.999999, &c->repeat)) return -1;
    if (scn_i64(x, sec, "intents", 1000, 1, INT64_C(1) << 30, &k)) return -1;
    c->intents = (size_t) k;
    if (scn_num(x, sec, "intent_zipf", 1, 0, 1, 100, &c->zipf)) return -1;
    const char *t = scn_value(x, sec, "cache_ttl_s");
    if (!t || !strcmp(t, "inf")) c->ttl = SIMTIME_NEVER;
    else {
        double s;
        if (scn_num(x, sec, "cache_ttl_s", 0, 0, 0, 1e12, &s)) return -1;
        c->ttl = simtime_from_s(s);
    }
    return 0;
}

double semcache_expected_hit_rate(const pool_cfg *p, double requests, int *repeat)
{
    const semcache_cfg *c = p->ext;
    *repeat = c->repeat >= 0;
    if (c->repeat >= 0) return c->repeat;
    /* Zipf over K intents, N requests, nothing expiring: every request after the
     * first of its intent hits, so the rate is 1 - E[distinct] / N. */
    if (!(requests >= 1)) return NAN;
    zipf *z = zipf_new(c->intents, c->zipf);
    if (!z) return NAN;
    double d = 0;
    for (size_t k = 0; k < c->intents; k++) d += -expm1(requests * log1p(-zipf_prob(z, k)));
    zipf_free(z);
    return 1 - d / requests;
}

/* The kind's defaults hook (kind.h): the keys that set the hit rate, then the
 * expected hit rate. */
static void defaults(const pool_cfg *p, const cfg *raw, const char *sec, double requests, FILE *out)
{
    /* intents and intent_zipf also apply to classes' requests without their own */
    static const char *const KEYS_SHOWN[] = { "capacity", "intents", "intent_zipf", "false_hit_rate" };
    for (size_t k = 0; k < sizeof KEYS_SHOWN / sizeof KEYS_SHOWN[0]; k++)
        station_kind_default_line(out, p->kind, raw, sec, KEYS_SHOWN[k], NULL);
    if (!cfg_get(raw, sec, "intents") && !cfg_get(raw, sec, "intent_zipf"))
        station_kind_default_line(out, p->kind, raw, sec, "repeat_share", NULL);
    int repeat;
    double h = semcache_expected_hit_rate(p, requests, &repeat);
    if (repeat)
        fprintf(out, "  [%s] expected hit rate %.3g: repeat_share (unbounded capacity, no TTL; less what "
                "cache_ttl_s, capacity and answers still on their way take)\n", sec, h);
    else
        fprintf(out, "  [%s] expected hit rate %.3g over %.0f requests: 1 - expected distinct intents / requests "
                "(unbounded capacity, no TTL; it grows with the run; repeat_share sets it instead)\n", sec, h, requests);
}

/* The kind's footprint hook (kind.h): the intents' Zipf table and the entries
 * the cache may come to hold (its capacity, the intents, the run's requests:
 * whichever is least). */
/* The kind's resolve hook: the embedding model and its device. */
static int resolve(scn_ctx *x, const char *sec, pool_cfg *p, sqlite3 *db)
{
    semcache_cfg *c = p->ext;
    return c->embed ? enc_resolve(x, sec, "embed_", &c->enc, db) : 0;
}

static double footprint(scn_ctx *x, const pool_cfg *p, const char **key, char *what, size_t n)
{
    const semcache_cfg *c = p->ext;
    double k = (double) c->intents, held = k;
    if (c->capacity > 0 && (double) c->capacity < held) held = (double) c->capacity;
    if (x->facts->run_requests < held) held = x->facts->run_requests;
    *key = "intents";
    snprintf(what, n, "%g intents (%g bytes each for their popularity table, %g per cached answer)", k,
             ZIPF_BYTES_PER_ITEM, RCACHE_BYTES_PER_ENTRY);
    return k * ZIPF_BYTES_PER_ITEM + held * RCACHE_BYTES_PER_ENTRY;
}

/* The kind's check_fleet hook (kind.h): the CPU keys, which price hit_ms and miss_ms. */
static int check_fleet(scn_ctx *x, const char *sec, const pool_cfg *p, const char *const *keys, int n)
{
    if (cpu_tier_check(x, sec, "result_cache", keys, n)) return -1;
    const semcache_cfg *c = p->ext;
    if (n > 0 && c->embed)
        return scn_fail(x, sec, keys[0], "not with embed_model: the lookup is the encoder's pass on its own device, "
                        "not CPU work (give hit_ms and miss_ms as CPU time instead)");
    return 0;
}

const station_kind semcache_kind = {
    .name = "result_cache",
    .help = "a semantic result cache: hits answer here, misses go on to `next` and are stored on return",
    .keys = KEYS,
    .parse = parse,
    .resolve = resolve,
    .make = semcache_new,
    .free_cfg = free_cfg,
    .footprint = footprint,
    .defaults = defaults,
    .check_fleet = check_fleet,
    .units_key = "replicas",
    .min_next = 1,
    .max_next = 1,
    .flags = KIND_GATEWAY | KIND_CPU,
};

station *semcache_new(const pool_cfg *cfg, const station_env *env)
{
    semcache *sc = calloc(1, sizeof *sc);
    if (!sc) return NULL;
    const semcache_cfg *c = cfg->ext;
    int cpu = cfg->fleet && cfg->fleet->cpu.on;
    if (station_init(&sc->st, cpu ? &SEMCACHE_CPU_OPS : &SEMCACHE_OPS, cfg, env) != 0) goto fail;
    sc->c = c;
    sc->bsize = 16;
    sc->cache = rcache_new(c->capacity, c->false_hit_rate, c->flush_at, (size_t) c->nflush);
    sc->zipf = zipf_new(c->intents, c->zipf);
    sc->hit_e2e = stat_new();
    sc->miss_e2e = stat_new();
    sc->hit_ttft = stat_new();
    sc->miss_ttft = stat_new();
    if (!sc->cache || !sc->zipf || !sc->hit_e2e || !sc->miss_e2e || !sc->hit_ttft || !sc->miss_ttft) goto fail;
    if (cpu && cpu_tier_init(&sc->cpu, &cfg->fleet->cpu, c->replicas, env->cpu_nodes))
        goto fail;
    sc->st.capacity = 1;      /* lookups are not a bottleneck: utilisation 0 */
    return &sc->st;
fail:
    destroy(&sc->st);
    return NULL;
}

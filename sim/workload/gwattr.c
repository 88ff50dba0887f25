/* gwattr.c -- gateway attributes of requests (see gwattr.h). */
#include "workload/gwattr.h"
#include "core/zipf.h"
#include "engine/rng.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* A class's open multi-turn session. */
typedef struct {
    uint64_t id;              /* session id (1, 2, ... over all classes), 0 before the first */
    int64_t left;             /* turns still to come (count) */
    int64_t context;          /* tokens the next turn's prompt starts with: the last prompt and answer (tokens) */
} gw_session;

struct gwattr {
    const workload_cfg *w;    /* classes */
    zipf **zipf;       /* per class: intent popularity, or NULL */
    gsl_rng *cplx;            /* complexity draws, or NULL when no class has them */
    gsl_rng *intents;         /* intent draws, or NULL when no class has intents */
    gsl_rng *turns;           /* session-length draws, or NULL when no class has turns */
    gw_session *sess;         /* the open sessions: per class, one per closed-loop user, or its `sessions` in open loop */
    size_t *base;             /* per class: index of its first session in sess */
    int closed;               /* 1: closed loop (a user's turns are its own session's) */
    uint64_t nsess;           /* sessions begun so far (count) */
    int plain;                /* no class draws or sets anything: every request gets
                                 cache_ttl -1 and no system prompt (gwattr_fill's short path) */
};

size_t gwattr_session_bytes(void) { return sizeof(gw_session); }

gwattr *gwattr_new(const workload_cfg *w, uint64_t seed)
{
    gwattr *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->w = w;
    g->zipf = calloc((size_t) w->nclasses, sizeof *g->zipf);
    if (!g->zipf) goto fail;
    int any_c = 0, any_i = 0, any_t = 0;
    g->plain = 1;
    for (int i = 0; i < w->nclasses; i++) {
        const wl_class *c = &w->classes[i];
        any_c |= c->has_complexity;
        any_t |= c->has_turns;
        if (c->has_complexity || c->intents > 0 || c->cache_ttl_s >= 0 || c->system_prompt_tokens != 0
            || c->has_turns)
            g->plain = 0;
        if (c->intents > 0) {
            any_i = 1;
            if (!(g->zipf[i] = zipf_new((size_t) c->intents, c->intent_zipf))) goto fail;
        }
    }
    if (any_c && !(g->cplx = rng_stream(seed, "workload complexity"))) goto fail;
    if (any_i && !(g->intents = rng_stream(seed, "workload intents"))) goto fail;
    if (any_t) {
        g->closed = w->arrival == ARRIVAL_USERS && w->users > 0;
        if (!(g->base = calloc((size_t) w->nclasses, sizeof *g->base))) goto fail;
        size_t n = 0;
        for (int i = 0; i < w->nclasses; i++) {
            g->base[i] = n;
            if (w->classes[i].has_turns)
                n += g->closed ? (size_t) w->users : (size_t) (w->classes[i].sessions > 0 ? w->classes[i].sessions : 1);
        }
        g->sess = calloc(n ? n : 1, sizeof *g->sess);
        if (!g->sess || !(g->turns = rng_stream(seed, "workload turns"))) goto fail;
    }
    return g;
fail:
    gwattr_free(g);
    return NULL;
}

int gwattr_plain(const gwattr *g) { return g->plain; }

void gwattr_fill(gwattr *g, request *r)
{
    if (g->plain) {
        r->attrs.cache_ttl = -1;
        return;
    }
    const wl_class *c = &g->w->classes[r->cls];
    if (c->has_complexity && !r->attrs.scored) {   /* a trace's score (wl_fill) wins */
        double s = dist_sample(&c->complexity, g->cplx);
        r->attrs.complexity = s < 0 ? 0 : s > 1 ? 1 : s;
        r->attrs.scored = 1;
    }
    if (g->zipf[r->cls]) {
        r->attrs.intent = ((uint64_t) r->cls + 1) << 40 | (1 + (uint64_t) zipf_sample(g->zipf[r->cls], g->intents));
        r->attrs.cache_ttl = c->cache_ttl_s < 0 ? -1
                     : isinf(c->cache_ttl_s) ? SIMTIME_NEVER : simtime_from_s(c->cache_ttl_s);
    } else if (c->cache_ttl_s >= 0) {
        r->attrs.cache_ttl = isinf(c->cache_ttl_s) ? SIMTIME_NEVER : simtime_from_s(c->cache_ttl_s);
    } else {
        r->attrs.cache_ttl = -1;
    }
    r->attrs.sys_tokens = c->system_prompt_tokens;
    if (c->has_turns) {
        /* The request is the next turn of an open session of its class: in
         * closed loop this user's (sent after the previous answer), in open
         * loop one of the class's `sessions` drawn at random (the only one when
         * 1).  Its drawn prompt is the new message, after the previous turn's
         * prompt and answer. */
        size_t u = 0;
        if (g->closed) u = r->user >= 0 && r->user < g->w->users ? (size_t) r->user : 0;
        else if (c->sessions > 1)   /* one of the class's open conversations, at random */
            u = (size_t) gsl_rng_uniform_int(g->turns, (unsigned long) c->sessions);
        gw_session *ss = &g->sess[g->base[r->cls] + u];
        if (ss->left <= 0) {
            double t = nearbyint(dist_sample(&c->turns, g->turns));
            ss->left = t < 1 ? 1 : t > 1e9 ? 1000000000 : (int64_t) t;
            ss->id = ++g->nsess;
            ss->context = c->system_prompt_tokens;   /* a conversation opens with the system prompt */
        }
        int64_t p = ss->context + r->prompt;
        r->prompt = (int32_t) (p > INT32_MAX ? INT32_MAX : p);
        r->attrs.session = ss->id;
        ss->context = (int64_t) r->prompt + r->output;
        ss->left--;
    } else if (c->system_prompt_tokens > 0 && !r->attrs.hash_ids) {
        /* The system prompt comes before the drawn (or traced) prompt; a trace's
         * hash ids describe the whole prompt already. */
        int64_t p = c->system_prompt_tokens + r->prompt;
        r->prompt = (int32_t) (p > INT32_MAX ? INT32_MAX : p);
    }
}

void gwattr_free(gwattr *g)
{
    if (!g) return;
    for (int i = 0; g->zipf && i < g->w->nclasses; i++) zipf_free(g->zipf[i]);
    free(g->zipf);
    free(g->sess);
    free(g->base);
    if (g->turns) gsl_rng_free(g->turns);
    if (g->cplx) gsl_rng_free(g->cplx);
    if (g->intents) gsl_rng_free(g->intents);
    free(g);
}

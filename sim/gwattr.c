/* gwattr.c -- gateway attributes of requests (see gwattr.h). */
#include "gwattr.h"
#include "rcache.h"
#include "rng.h"

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
    rcache_zipf **zipf;       /* per class: intent popularity, or NULL */
    gsl_rng *cplx;            /* complexity draws, or NULL when no class has them */
    gsl_rng *intents;         /* intent draws, or NULL when no class has intents */
    gsl_rng *turns;           /* session-length draws, or NULL when no class has turns */
    gw_session *sess;         /* per class and closed-loop user (one per class in open loop): the open session */
    int nusers;               /* users the sessions are kept for: closed loop's users, else 1 */
    uint64_t nsess;           /* sessions begun so far (count) */
    int plain;                /* no class draws or sets anything: every request gets
                                 cache_ttl -1 and no system prompt (gwattr_fill's short path) */
};

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
            if (!(g->zipf[i] = rcache_zipf_new((size_t) c->intents, c->intent_zipf))) goto fail;
        }
    }
    if (any_c && !(g->cplx = rng_stream(seed, "workload complexity"))) goto fail;
    if (any_i && !(g->intents = rng_stream(seed, "workload intents"))) goto fail;
    if (any_t) {
        g->nusers = w->arrival == ARRIVAL_USERS && w->users > 0 ? w->users : 1;
        g->sess = calloc((size_t) w->nclasses * (size_t) g->nusers, sizeof *g->sess);
        if (!g->sess || !(g->turns = rng_stream(seed, "workload turns"))) goto fail;
    }
    return g;
fail:
    gwattr_free(g);
    return NULL;
}

void gwattr_fill(gwattr *g, request *r)
{
    if (g->plain) {
        r->cache_ttl = -1;
        return;
    }
    const wl_class *c = &g->w->classes[r->cls];
    if (c->has_complexity && !r->scored) {   /* a trace's score (wl_fill) wins */
        double s = dist_sample(&c->complexity, g->cplx);
        r->complexity = s < 0 ? 0 : s > 1 ? 1 : s;
        r->scored = 1;
    }
    if (g->zipf[r->cls]) {
        r->intent = ((uint64_t) r->cls + 1) << 40 | (1 + (uint64_t) rcache_zipf_sample(g->zipf[r->cls], g->intents));
        r->cache_ttl = c->cache_ttl_s < 0 ? -1
                     : isinf(c->cache_ttl_s) ? SIMTIME_NEVER : simtime_from_s(c->cache_ttl_s);
    } else if (c->cache_ttl_s >= 0) {
        r->cache_ttl = isinf(c->cache_ttl_s) ? SIMTIME_NEVER : simtime_from_s(c->cache_ttl_s);
    } else {
        r->cache_ttl = -1;
    }
    r->sys_tokens = c->system_prompt_tokens;
    if (c->has_turns) {
        /* The next request of the class (in closed loop: of the class from this
         * user, who sent it after the previous answer) is the open session's
         * next turn: its drawn prompt is the new message, after the previous
         * turn's prompt and answer. */
        int u = g->nusers > 1 && r->user >= 0 && r->user < g->nusers ? r->user : 0;
        gw_session *ss = &g->sess[(size_t) r->cls * (size_t) g->nusers + (size_t) u];
        if (ss->left <= 0) {
            double t = nearbyint(dist_sample(&c->turns, g->turns));
            ss->left = t < 1 ? 1 : t > 1e9 ? 1000000000 : (int64_t) t;
            ss->id = ++g->nsess;
            ss->context = c->system_prompt_tokens;   /* a conversation opens with the system prompt */
        }
        int64_t p = ss->context + r->prompt;
        r->prompt = (int32_t) (p > INT32_MAX ? INT32_MAX : p);
        r->session = ss->id;
        ss->context = (int64_t) r->prompt + r->output;
        ss->left--;
    } else if (c->system_prompt_tokens > 0 && !r->hash_ids) {
        /* The system prompt comes before the drawn (or traced) prompt; a trace's
         * hash ids describe the whole prompt already. */
        int64_t p = c->system_prompt_tokens + r->prompt;
        r->prompt = (int32_t) (p > INT32_MAX ? INT32_MAX : p);
    }
}

void gwattr_free(gwattr *g)
{
    if (!g) return;
    for (int i = 0; g->zipf && i < g->w->nclasses; i++) rcache_zipf_free(g->zipf[i]);
    free(g->zipf);
    free(g->sess);
    if (g->turns) gsl_rng_free(g->turns);
    if (g->cplx) gsl_rng_free(g->cplx);
    if (g->intents) gsl_rng_free(g->intents);
    free(g);
}

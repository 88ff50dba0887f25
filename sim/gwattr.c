/* gwattr.c -- gateway attributes of requests (see gwattr.h). */
#include "gwattr.h"
#include "rcache.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>

struct gwattr {
    const workload_cfg *w;    /* classes */
    rcache_zipf **zipf;       /* per class: intent popularity, or NULL */
    gsl_rng *cplx;            /* complexity draws, or NULL when no class has them */
    gsl_rng *intents;         /* intent draws, or NULL when no class has intents */
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
    int any_c = 0, any_i = 0;
    g->plain = 1;
    for (int i = 0; i < w->nclasses; i++) {
        const wl_class *c = &w->classes[i];
        any_c |= c->has_complexity;
        if (c->has_complexity || c->intents > 0 || c->cache_ttl_s >= 0 || c->system_prompt_tokens != 0)
            g->plain = 0;
        if (c->intents > 0) {
            any_i = 1;
            if (!(g->zipf[i] = rcache_zipf_new((size_t) c->intents, c->intent_zipf))) goto fail;
        }
    }
    if (any_c && !(g->cplx = rng_stream(seed, "workload complexity"))) goto fail;
    if (any_i && !(g->intents = rng_stream(seed, "workload intents"))) goto fail;
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
    if (c->has_complexity) {
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
}

void gwattr_free(gwattr *g)
{
    if (!g) return;
    for (int i = 0; g->zipf && i < g->w->nclasses; i++) rcache_zipf_free(g->zipf[i]);
    free(g->zipf);
    if (g->cplx) gsl_rng_free(g->cplx);
    if (g->intents) gsl_rng_free(g->intents);
    free(g);
}

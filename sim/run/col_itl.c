/* col_itl.c -- the run collector of inter-token latency (collect.h): the gaps
 * between the tokens of measured requests, which the LLM pools record into
 * the run's histogram (tap "itl", core/tap.h) as they decode; with several
 * such pools, each into its own (tap "itl" of the pool), the run's being their
 * merge: the system's row "itl". */
#include "run/collect.h"

typedef struct itl {
    const run_env *env;
    stat_acc *all;            /* the run's inter-token gaps, ms */
    stat_acc **pool;          /* per pool, with several decoding pools (KIND_DECODES); else NULL */
} itl;

static int itl_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    itl *x = self;
    x->env = env;
    if (!(x->all = stat_new())) return -1;
    int n = 0;
    for (int i = 0; i < env->sc->npools; i++) n += (env->sc->pools[i].kind->flags & KIND_DECODES) != 0;
    if (n < 2) return tap_offer(env->taps, "itl", TAP_RUN, x->all);   /* the one pool's gaps are the run's */
    /* Several decoding pools: each step adds its gaps to its pool's histogram
     * only (tap "itl" of the pool), and the run's is their merge: one update a
     * step, as with one pool. */
    if (!(x->pool = calloc((size_t) env->sc->npools, sizeof *x->pool))) return -1;
    for (int i = 0; i < env->sc->npools; i++)
        if ((env->sc->pools[i].kind->flags & KIND_DECODES) &&
            (!(x->pool[i] = stat_new()) || tap_offer(env->taps, "itl", i, x->pool[i]) != 0))
            return -1;
    return 0;
}

static int itl_lost(const void *self)
{
    const itl *x = self;
    int lost = stat_failed(x->all);
    for (int i = 0; x->pool && i < x->env->nst; i++) lost |= x->pool[i] && stat_failed(x->pool[i]);
    return lost;
}

/* The run's ITL (merged in pool order): the system's row "itl" with an LLM
 * pool (docs/metrics.md); each decoding pool's (the only one's: the run's). */
static int itl_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    itl *x = self;
    for (int i = 0; x->pool && i < x->env->nst; i++)
        if (x->pool[i] && stat_merge(x->all, x->pool[i]) != 0) {
            snprintf(err, errlen, "out of memory (latency histograms)");
            return -1;
        }
    stat_summary all;
    stat_summarize(x->all, &all);
    if (x->env->has_llm && sim_rows_add_latency(&out->rows, "", "itl", &all)) return -1;
    for (int i = 0; i < x->env->nst; i++) {
        pool_result *p = &x->env->pools[i];
        if (x->pool && x->pool[i]) stat_summarize(x->pool[i], &p->itl);
        else if (p->has_itl) p->itl = all;
    }
    return 0;
}

static void itl_free(void *self)
{
    itl *x = self;
    stat_free(x->all);
    for (int i = 0; x->pool && i < x->env->sc->npools; i++) stat_free(x->pool[i]);
    free(x->pool);
}

const run_collector col_itl = {
    .name = "itl",
    .size = sizeof(itl),
    .init = itl_init,
    .lost = itl_lost,
    .emit = itl_emit,
    .free = itl_free,
};

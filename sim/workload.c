/* workload.c -- the workload source: arrival times (Poisson, gamma, constant,
 * trace replay) and request attributes (trace rows or token distributions). */
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include "rng.h"
#include "workload.h"

struct wl_source {
    const workload_cfg *w;    /* the configuration (not owned) */
    gsl_rng *arr_rng;         /* inter-arrival times */
    gsl_rng *tok_rng;         /* token counts */
    int need_tokens;          /* 1: fill token counts (an LLM pool exists) */
    size_t trace_i;           /* trace row of the next arrival */
    double trace_offset;      /* s added to trace times (looping) */
};

wl_source *wl_new(const workload_cfg *w, uint64_t seed, int need_tokens)
{
    wl_source *src = calloc(1, sizeof *src);
    if (!src) return NULL;
    src->w = w;
    src->need_tokens = need_tokens;
    src->arr_rng = rng_stream(seed, "workload arrivals");
    src->tok_rng = rng_stream(seed, "workload tokens");
    if (!src->arr_rng || !src->tok_rng) {
        wl_free(src);
        return NULL;
    }
    return src;
}

void wl_free(wl_source *src)
{
    if (!src) return;
    if (src->arr_rng) gsl_rng_free(src->arr_rng);
    if (src->tok_rng) gsl_rng_free(src->tok_rng);
    free(src);
}

simtime_t wl_next_time(wl_source *src, simtime_t now, uint64_t id)
{
    const workload_cfg *w = src->w;
    switch (w->arrival) {
    case ARRIVAL_POISSON:
        /* Exponential gaps by inverse transform (as dist.c's exp()). */
        return simtime_add(now, simtime_from_s(gsl_cdf_exponential_Qinv(gsl_rng_uniform_pos(src->arr_rng), 1.0 / w->rate)));
    case ARRIVAL_GAMMA: {
        double k = 1.0 / (w->cv * w->cv);
        return simtime_add(now, simtime_from_s(gsl_ran_gamma(src->arr_rng, k, 1.0 / (w->rate * k))));
    }
    case ARRIVAL_CONSTANT:
        /* Computed from the id, not by adding gaps: no rounding drift. */
        return simtime_from_s((double) id / w->rate);
    case ARRIVAL_TRACE:
        if (src->trace_i >= w->tr.n) {
            if (!w->loop) return -1;
            /* Replay: the gap between two loops is the trace's mean gap. */
            double span = w->tr.t[w->tr.n - 1];
            src->trace_offset += span + span / (double) (w->tr.n - 1);
            src->trace_i = 0;
        }
        {
            simtime_t t = simtime_from_s((src->trace_offset + w->tr.t[src->trace_i]) / w->speedup);
            return t < now ? now : t;
        }
    }
    return -1;
}

/* A token count drawn from D: rounded, at least 1, held well inside int32. */
static int32_t draw_tokens(const dist *d, gsl_rng *r)
{
    double v = nearbyint(dist_sample(d, r));
    if (!(v >= 1)) v = 1;          /* NaN too */
    if (v > INT32_MAX / 4) v = INT32_MAX / 4;
    return (int32_t) v;
}

int wl_fill(wl_source *src, request *r)
{
    const workload_cfg *w = src->w;
    r->target = w->target;
    if (!src->need_tokens) {
        /* Token counts matter to LLM pools only: no draws. */
    } else if (w->arrival == ARRIVAL_TRACE && w->trace_tokens) {
        r->prompt = w->tr.prompt[src->trace_i] > 0 ? w->tr.prompt[src->trace_i] : 1;
        r->output = w->tr.output[src->trace_i] > 0 ? w->tr.output[src->trace_i] : 1;
    } else {
        r->prompt = draw_tokens(&w->prompt, src->tok_rng);
        r->output = draw_tokens(&w->output, src->tok_rng);
    }
    if (w->arrival == ARRIVAL_TRACE) src->trace_i++;
    return 0;
}

simtime_t wl_complete(wl_source *src, const request *r, simtime_t now)
{
    (void) src; (void) r; (void) now;
    return -1;
}

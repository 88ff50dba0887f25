/* warmup.c -- the automatic warm-up rule (see warmup.h). */
#include "run/warmup.h"

#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_fit.h>

void warmup_init(warmup *w, int automatic, uint64_t min, uint64_t requests)
{
    w->automatic = automatic;
    w->min = min;
    w->max = automatic ? min + requests : min;
}

int warmup_ready(const warmup *w, uint64_t id, uint64_t in_system)
{
    if (id < w->min) return 0;
    if (!w->automatic || id >= w->max) return 1;
    return id >= WARMUP_FILL_FACTOR * in_system;
}

uint64_t warmup_max(const warmup *w)
{
    return w->max;
}

int trend_init(trend *t, int npools)
{
    t->npools = npools;
    t->n = 0;
    t->stride = 1;
    t->count = 0;
    t->x = calloc((size_t) (npools > 0 ? npools : 1) * TREND_CAP, sizeof *t->x);
    return t->x ? 0 : -1;
}

void trend_free(trend *t)
{
    free(t->x);
    t->x = NULL;
}

int trend_due(trend *t)
{
    return ++t->count % t->stride == 0;
}

void trend_put(trend *t, int pool, double inside)
{
    t->x[(size_t) pool * TREND_CAP + (size_t) t->n] = inside;
}

void trend_commit(trend *t)
{
    if (++t->n < TREND_CAP) return;
    for (int p = 0; p < t->npools; p++) {          /* keep every other sample */
        double *x = t->x + (size_t) p * TREND_CAP;
        for (int i = 0; i < TREND_CAP / 2; i++) x[i] = x[2 * i + 1];
    }
    t->n = TREND_CAP / 2;
    t->stride *= 2;
}

int trend_growth(const trend *t, int pool, double *growth, double *se)
{
    int half = t->n / 2, len = t->n - half, per = len / TREND_BATCHES;
    if (per < 4) return -1;
    const double *x = t->x + (size_t) pool * TREND_CAP + half;
    double c[TREND_BATCHES], m[TREND_BATCHES];
    for (int b = 0; b < TREND_BATCHES; b++) {
        double sum = 0;
        for (int i = 0; i < per; i++) sum += x[b * per + i];
        m[b] = sum / per;
        c[b] = b * per + (per - 1) / 2.0;   /* the batch's centre, in samples */
    }
    double c0, c1, cov00, cov01, cov11, sumsq;
    if (gsl_fit_linear(c, 1, m, 1, TREND_BATCHES, &c0, &c1, &cov00, &cov01, &cov11, &sumsq) != 0) return -1;
    *growth = c1 * len;
    *se = sqrt(cov11) * len;
    return 0;
}

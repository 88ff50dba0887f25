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

/* The autocorrelation of X[0 .. N-1] (mean MEAN, sum of squares C0) at lag K
 * (the biased estimator: positive definite). */
static double autocorr(const double *x, int n, double mean, double c0, int k)
{
    double s = 0;
    for (int i = 0; i + k < n; i++) s += (x[i] - mean) * (x[i + k] - mean);
    return s / c0;
}

double trend_windows(const trend *t, int pool)
{
    int n = t->n;
    if (n < TREND_MIN_SAMPLES) return INFINITY;
    const double *x = t->x + (size_t) pool * TREND_CAP;
    double mean = 0, c0 = 0;
    for (int i = 0; i < n; i++) mean += x[i];
    mean /= n;
    for (int i = 0; i < n; i++) c0 += (x[i] - mean) * (x[i] - mean);
    if (!(c0 > 0)) return INFINITY;
    double tau = -1;
    for (int k = 0; 2 * k + 1 < n; k++) {
        double g = autocorr(x, n, mean, c0, 2 * k) + autocorr(x, n, mean, c0, 2 * k + 1);
        if (!(g > 0)) break;
        tau += 2 * g;
    }
    if (tau < 1) tau = 1;
    return n / tau;
}

int settle_init(settle *s, int n, const int *pool, uint64_t min_span, uint64_t cap)
{
    *s = (settle) { .n = n, .stride = SETTLE_STRIDE, .min_span = min_span, .cap = cap, .last = -1 };
    s->pool = malloc((size_t) (n > 0 ? n : 1) * sizeof *s->pool);
    s->snap = calloc((size_t) (n > 0 ? n : 1) * SETTLE_SNAPS * 3, sizeof *s->snap);
    s->settled_s = calloc((size_t) (n > 0 ? n : 1), sizeof *s->settled_s);
    if (!s->pool || !s->snap || !s->settled_s) {
        settle_free(s);
        return -1;
    }
    for (int c = 0; c < n; c++) {
        s->pool[c] = pool[c];
        s->settled_s[c] = -1;
    }
    return 0;
}

void settle_free(settle *s)
{
    free(s->pool);
    free(s->snap);
    free(s->settled_s);
    s->pool = NULL;
    s->snap = s->settled_s = NULL;
}

int settle_due(settle *s)
{
    return ++s->count % s->stride == 0;
}

void settle_put(settle *s, int c, const double v[3])
{
    double *x = s->snap + ((size_t) c * SETTLE_SNAPS + (size_t) s->m) * 3;
    x[0] = v[0];
    x[1] = v[1];
    x[2] = v[2];
}

/* Cache C's hit shares between snapshots I and J: lookups *N, mean *MU, variance of the mean *V. */
static void settle_span(const settle *s, int c, int i, int j, double *n, double *mu, double *v)
{
    const double *a = s->snap + ((size_t) c * SETTLE_SNAPS + (size_t) i) * 3;
    const double *b = s->snap + ((size_t) c * SETTLE_SNAPS + (size_t) j) * 3;
    *n = b[0] - a[0];
    *mu = *n > 0 ? (b[1] - a[1]) / *n : 0;
    double var = *n > 0 ? (b[2] - a[2]) / *n - *mu * *mu : 0;
    *v = *n > 0 && var > 0 ? var / *n : 0;
}

int settle_commit(settle *s, double now_s)
{
    int m = ++s->m, all = 1;
    if (m >= 5) {
        int i2 = (m - 1) / 2, i3 = 3 * (m - 1) / 4;
        for (int c = 0; c < s->n; c++) {
            double na, ma, va, nb, mb, vb;
            settle_span(s, c, i2, i3, &na, &ma, &va);
            settle_span(s, c, i3, m - 1, &nb, &mb, &vb);
            double se = sqrt(va + vb);
            if (na + nb == 0) {                   /* no lookups (a cache off the requests' path): nothing to wait for */
                if (s->settled_s[c] < 0) s->settled_s[c] = now_s;
            } else if ((s->count < s->min_span && !(va + vb == 0 && ma == mb)) || na < SETTLE_MIN_LOOKUPS || nb < SETTLE_MIN_LOOKUPS || se > SETTLE_SE_MAX || mb - ma > SETTLE_Z * se) {
                s->settled_s[c] = -1;
                s->last = c;
                all = 0;
            } else if (s->settled_s[c] < 0)
                s->settled_s[c] = now_s;
        }
    } else {
        all = 0;
        s->last = s->n - 1;
    }
    if (m == SETTLE_SNAPS) {                      /* keep every other snapshot */
        for (int c = 0; c < s->n; c++) {
            double *x = s->snap + (size_t) c * SETTLE_SNAPS * 3;
            for (int i = 0; i < SETTLE_SNAPS / 2; i++)
                for (int k = 0; k < 3; k++) x[i * 3 + k] = x[(2 * i + 1) * 3 + k];
        }
        s->m = SETTLE_SNAPS / 2;
        s->stride *= 2;
    }
    return all;
}

int settle_stations(settle *s, station *const *st, int n, uint64_t min_span, uint64_t cap)
{
    int ncache = 0, *idx = calloc((size_t) n + 1, sizeof *idx);
    if (!idx) return -1;
    for (int i = 0; i < n; i++) {
        double v[3];
        if (st[i]->ops->cache_fill && st[i]->ops->cache_fill(st[i], v) == 0) idx[ncache++] = i;
    }
    int rc = ncache > 0 ? settle_init(s, ncache, idx, min_span, cap) : 0;
    free(idx);
    return rc != 0 ? -1 : ncache;
}

/* stats.c -- streaming statistics of one metric (see stats.h).
 *
 * Count, mean, sd, min and max are kept as running moments (Welford's update):
 * gsl_rstat would give the same numbers but also maintains a P^2 median estimate
 * on every add, which tripled the cost of this hot-path call.  Quantiles come
 * from a gsl_histogram over ln(value): bins of equal width ln(1.001) from
 * ln(STAT_MIN_MS) up to just past ln(STAT_MAX_MS) (36 861 bins, about 0.6 MB per
 * accumulator), set with gsl_histogram_set_ranges_uniform so that GSL finds a bin
 * in O(1).  A quantile is reported as the geometric midpoint of the bin holding
 * the sample of that rank, so it is within a factor sqrt(1.001) (0.05 %) of the
 * exact sample quantile; it is then clamped to the exact [min, max].  Values below
 * STAT_MIN_MS are only counted, and reported as 0; values at or above STAT_MAX_MS
 * share the top bin (so their quantiles are only clamped by the exact max).
 */
#include "stats.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_histogram.h>

#define BIN_RATIO 1.001   /* consecutive bin edges differ by this factor */

typedef struct moments {
    size_t n;                 /* values added */
    double mean;              /* running mean, ms */
    double m2;                /* sum of squared deviations from the mean, ms^2 */
    double min, max;          /* extremes, ms */
} moments;

struct stat_acc {
    moments m;                /* exact count, mean, sd, min, max of all values (ms) */
    gsl_histogram *h;         /* counts over ln(value / 1 ms), values >= STAT_MIN_MS */
    double ln_top;            /* lower edge of the top bin, ln(ms); values at or above go there */
    double lo;                /* ln(STAT_MIN_MS): lower edge of bin 0 */
    double inv_width;         /* 1 / bin width in ln(ms) */
    double nlow;              /* count of values below STAT_MIN_MS (reported as 0) */
};

stat_acc *stat_new(void)
{
    stat_acc *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    double lo = log(STAT_MIN_MS), width = log(BIN_RATIO);
    size_t nbins = (size_t) ceil((log(STAT_MAX_MS) - lo) / width);
    s->h = gsl_histogram_alloc(nbins);
    if (s->h == NULL) {
        stat_free(s);
        return NULL;
    }
    gsl_histogram_set_ranges_uniform(s->h, lo, lo + (double) nbins * width);
    s->ln_top = s->h->range[nbins - 1];
    s->lo = lo;
    s->inv_width = 1.0 / width;
    return s;
}

void stat_free(stat_acc *s)
{
    if (s == NULL)
        return;
    if (s->h != NULL)
        gsl_histogram_free(s->h);
    free(s);
}

void stat_add(stat_acc *s, double v)
{
    /* Negative values (rounding noise) and NaN count as 0, so that every call is
     * counted once and the mean stays a number. */
    if (!(v >= 0))
        v = 0;
    moments *m = &s->m;
    m->n++;
    double d = v - m->mean;
    m->mean += d / (double) m->n;
    m->m2 += d * (v - m->mean);
    if (m->n == 1 || v < m->min) m->min = v;
    if (m->n == 1 || v > m->max) m->max = v;
    if (v < STAT_MIN_MS) {
        s->nlow += 1;
        return;
    }
    /* The bin index is computed directly from the uniform ranges rather than by
     * gsl_histogram_increment(), whose range checks read the 0.3 MB range array
     * and made this the simulator's hottest call.  Rounding can put a value that
     * lies exactly on an edge into the neighbouring bin: an error of one part in
     * 10^12 of its value, far below the bin width. */
    double x = (log(v) - s->lo) * s->inv_width;
    size_t i = x <= 0 ? 0 : (size_t) x;
    if (i >= s->h->n) i = s->h->n - 1;          /* at or above STAT_MAX_MS: the top bin */
    s->h->bin[i] += 1;
}

void stat_reset(stat_acc *s)
{
    s->m = (moments) { 0 };
    gsl_histogram_reset(s->h);
    s->nlow = 0;
}

uint64_t stat_count(const stat_acc *s)
{
    return (uint64_t) s->m.n;
}

double stat_mean(const stat_acc *s)
{
    return s->m.n > 0 ? s->m.mean : 0;
}

/* Fills OUT[i] with the quantile QS[i] for M probabilities given in increasing
 * order, in one scan of the bins.  Every OUT[i] is 0 when S is empty. */
static void quantiles(const stat_acc *s, const double *qs, double *out, size_t m)
{
    size_t n = s->m.n;
    if (n == 0) {
        for (size_t i = 0; i < m; i++)
            out[i] = 0;
        return;
    }
    double vmin = s->m.min, vmax = s->m.max;
    const gsl_histogram *h = s->h;
    double half = (h->range[1] - h->range[0]) / 2;
    double cum = s->nlow;   /* values at or below the current bin */
    size_t b = 0;           /* current bin */
    for (size_t i = 0; i < m; i++) {
        double q = qs[i] < 0 ? 0 : qs[i] > 1 ? 1 : qs[i];
        /* The 1-based rank ceil(q n), in [1, n].  q n is shrunk by a few ulps first
         * so that a product that should be whole (0.9 * 10^6) but rounded up does
         * not move to the next rank.  Counts are whole numbers below 2^53, so
         * comparing them as doubles is exact. */
        double rank = ceil(q * (double) n * (1 - 4 * DBL_EPSILON));
        if (rank < 1)
            rank = 1;
        if (rank > (double) n)
            rank = (double) n;
        if (rank <= s->nlow) {
            out[i] = 0;
            continue;
        }
        if (rank == (double) n) {   /* the largest sample is known exactly */
            out[i] = vmax;
            continue;
        }
        if (rank == 1) {            /* and so is the smallest (nlow is 0 here) */
            out[i] = vmin;
            continue;
        }
        while (b < h->n - 1 && cum + h->bin[b] < rank) {
            cum += h->bin[b];
            b++;
        }
        double v = exp(h->range[b] + half);
        out[i] = v < vmin ? vmin : v > vmax ? vmax : v;
    }
}

double stat_quantile(const stat_acc *s, double q)
{
    double v;
    quantiles(s, &q, &v, 1);
    return v;
}

void stat_summarize(const stat_acc *s, stat_summary *out)
{
    static const double qs[5] = {0.50, 0.90, 0.95, 0.99, 0.999};
    double v[5];
    quantiles(s, qs, v, 5);
    size_t n = s->m.n;
    out->n = (uint64_t) n;
    out->mean = n > 0 ? s->m.mean : 0;
    out->sd = n > 1 ? sqrt(s->m.m2 / (double) (n - 1)) : 0;
    out->p50 = v[0];
    out->p90 = v[1];
    out->p95 = v[2];
    out->p99 = v[3];
    out->p999 = v[4];
    out->max = n > 0 ? s->m.max : 0;
}

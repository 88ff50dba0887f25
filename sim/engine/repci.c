/* repci.c -- confidence intervals of percentiles over replications (see repci.h). */
#include "engine/repci.h"

#include <math.h>
#include <gsl/gsl_cdf.h>

double repci_prob(int j)
{
    if (j < 99) return stat_cdf_probs[j];                    /* 0.01 .. 0.99 */
    if (j < 99 + STAT_NTAIL) return stat_tail_probs[j - 99];
    return 1.0;
}

void repci_from_summary(const stat_summary *s, repci_dist *d)
{
    d->n = (double) s->n;
    for (int j = 0; j < 99; j++) d->x[j] = s->cdf[j];
    for (int j = 0; j < STAT_NTAIL; j++) d->x[99 + j] = s->tail[j];
    d->x[REPCI_NQ - 1] = s->max;
    d->windows = INFINITY;
    /* Quantiles are bin middles clamped to [min, max]: nondecreasing already;
     * made sure of, so that the search below may rely on it. */
    for (int j = 1; j < REPCI_NQ; j++)
        if (d->x[j] < d->x[j - 1]) d->x[j] = d->x[j - 1];
}

/* The tail 1 - F of quantile J, for interpolation: the max stands for half a
 * sample (1 / (2n)), so that the last segment has a finite slope in log(1 - F). */
static double tail_at(const repci_dist *d, int j)
{
    if (j == REPCI_NQ - 1) return 0.5 / d->n;
    double t = 1.0 - repci_prob(j);
    double floor_t = 0.5 / d->n;              /* beyond the sample: at most the max's share */
    return t > floor_t ? t : floor_t;
}

/* The run's CDF at X: 0 below its first quantile, 1 at or above its max, and
 * between quantiles linear in log(1 - F). */
static double cdf_at(const repci_dist *d, double x)
{
    const double *q = d->x;
    if (x >= q[REPCI_NQ - 1]) return 1.0;
    if (x < q[0]) return 0.0;
    int lo = 0, hi = REPCI_NQ - 1;            /* q[lo] <= x < q[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (q[mid] <= x) lo = mid;
        else hi = mid;
    }
    double t0 = tail_at(d, lo), t1 = tail_at(d, hi);
    double f = (x - q[lo]) / (q[hi] - q[lo]);
    double t = t0 > t1 ? exp(log(t0) + f * (log(t1) - log(t0))) : t0;
    return 1.0 - t;
}

/* The pooled CDF at X: the runs' CDFs weighted by their sample counts. */
static double pooled_cdf(const repci_dist *const *d, int r, double x)
{
    double sum = 0, n = 0;
    for (int i = 0; i < r; i++) {
        sum += d[i]->n * cdf_at(d[i], x);
        n += d[i]->n;
    }
    return sum / n;
}

double repci_pooled_quantile(const repci_dist *const *d, int r, double p)
{
    double lo = d[0]->x[0], hi = d[0]->x[REPCI_NQ - 1];
    for (int i = 1; i < r; i++) {
        if (d[i]->x[0] < lo) lo = d[i]->x[0];
        if (d[i]->x[REPCI_NQ - 1] > hi) hi = d[i]->x[REPCI_NQ - 1];
    }
    if (p <= 0 || pooled_cdf(d, r, lo) >= p) return lo;
    if (p >= 1) return hi;
    /* Fbar(lo) < p <= Fbar(hi) = 1: bisection to the smallest x with Fbar(x) >= p. */
    for (int k = 0; k < 200 && hi - lo > 1e-12 * fabs(hi); k++) {
        double mid = lo + (hi - lo) / 2;
        if (mid <= lo || mid >= hi) break;
        if (pooled_cdf(d, r, mid) >= p) hi = mid;
        else lo = mid;
    }
    /* A run's quantile inside the final bracket is the answer itself (a jump of
     * Fbar, or a probability of the grid, as when every run has the same
     * distribution): taken exactly, not to the bracket's width, when Fbar reaches
     * p there (to rounding). */
    double best = hi;
    for (int i = 0; i < r; i++) {
        const double *q = d[i]->x;
        int a = 0, b = REPCI_NQ;               /* the first q[a] >= lo */
        while (a < b) {
            int m = (a + b) / 2;
            if (q[m] < lo) a = m + 1;
            else b = m;
        }
        if (a < REPCI_NQ && q[a] <= hi && q[a] < best && pooled_cdf(d, r, q[a]) >= p - 1e-12) best = q[a];
    }
    return best;
}

double repci_halfwidth(const repci_dist *const *d, int r, double p, double center)
{
    if (r < 2) return NAN;
    double theta = repci_pooled_quantile(d, r, p);
    /* Fbar(theta) and the ratio estimator's variance of it: e_i = n_i (F_i - Fbar) / nbar. */
    double ntot = 0, fsum = 0;
    for (int i = 0; i < r; i++) {
        ntot += d[i]->n;
        fsum += d[i]->n * cdf_at(d[i], theta);
    }
    double fbar = fsum / ntot, nbar = ntot / r;
    double ss = 0, t1 = 0, t2 = 0;
    for (int i = 0; i < r; i++) {
        double fi = cdf_at(d[i], theta);
        double e = d[i]->n * (fi - fbar) / nbar;
        double above = d[i]->n * (1.0 - fi);     /* run i's count above theta */
        ss += e * e;
        t1 += above;
        t2 += above * above;
    }
    double se = sqrt(ss / (r - 1)) / sqrt((double) r);   /* of Fbar(theta) */
    /* Kish's effective number of runs holding the tail; R when none is above. */
    double reff = t2 > 0 ? t1 * t1 / t2 : r;
    double t = gsl_cdf_tdist_Pinv(0.975, reff - 1 < 1 ? 1 : reff - 1);
    double lo, hi;
    if (ss == 0) lo = hi = theta;               /* the runs agree at theta */
    else {
        /* The probability scale: p -+ t se.  (The log of the tail, used before,
         * was too narrow when the runs' tails happened to agree: 182 of 200
         * against 189 of 200 here, M/M/1 at rho 0.9, 10 x 20 000 requests.) */
        lo = repci_pooled_quantile(d, r, p - t * se);
        hi = repci_pooled_quantile(d, r, p + t * se);
    }
    double h = hi - center;
    if (center - lo > h) h = center - lo;
    return h > 0 ? h : 0;
}

double repci_windows_needed(double p)
{
    double k = 0.01 / (1 - p);
    return REPCI_MIN_WINDOWS * (k > 1 ? k : 1);
}

int repci_enough(const repci_dist *const *d, int r, double p)
{
    double w = 0;
    int known = 0;
    for (int i = 0; i < r; i++) {
        if (d[i]->n * (1 - p) + 1e-9 < REPCI_MIN_TAIL) return REPCI_FEW_TAIL;
        if (isfinite(d[i]->windows)) w += d[i]->windows, known++;
    }
    if (known && w / known < repci_windows_needed(p)) return REPCI_SHORT;
    return REPCI_ENOUGH;
}

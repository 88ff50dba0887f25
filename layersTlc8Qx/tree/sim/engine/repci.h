/* repci.h -- confidence intervals of percentiles over independent replications.
 *
 * The Student-t interval of the mean of R per-run percentiles is centred on the
 * expected percentile of one run, which is not the steady-state percentile: a
 * run's empirical CDF is unbiased for the steady-state CDF at any x (E F_i(x) =
 * F(x)), but its quantile is not, and when a queue's tail comes in excursions
 * longer than a small part of the run, most runs see none of the deepest ones
 * (M/M/2 at rho 0.95, 20 000 requests: the runs' P99 average 17 % below Erlang
 * C's, and the t interval covered it in 15 of 40 trials of 10 replications).
 *
 * The interval here works with the runs' CDFs, which are unbiased and
 * independent: the pooled CDF Fbar (the runs' CDFs weighted by their sample
 * counts) gives the pooled percentile theta = Fbar^-1(p); the runs' values
 * F_i(theta) give the standard error se of Fbar(theta) (the ratio estimator of
 * cluster sampling); an interval for the tail 1 - F(theta) is turned back into
 * milliseconds through Fbar^-1:
 *  - when every run has samples beyond theta, on the log scale, (1 - p)
 *    exp(-+ t se / (1 - Fbar(theta))): the runs' tails then differ mostly in
 *    scale, a shift of the log, and an exponential tail gets an interval
 *    symmetric in milliseconds;
 *  - when some run has none (its tail beyond theta is 0: no log), on the
 *    probability scale, p -+ t se, whose upper end reaches the largest samples
 *    when the few runs that reached past theta disagree.
 * The t quantile takes Kish's effective number of runs that carry the tail,
 * R_eff = (sum T_i)^2 / sum T_i^2 with T_i run i's count above theta, less one
 * as its degrees of freedom (R - 1 when the runs share the tail evenly, as at
 * low load; about 1 when two runs hold it): the sample variance then rests on
 * those runs alone.  The reported value stays the mean of the runs'
 * percentiles; the half-width is that of the smallest interval around it that
 * holds the pooled one.  An interval never reaches past the largest sample, so
 * a percentile that most runs do not reach (a P99.9 of runs far shorter than
 * the queue's excursions) is still covered too seldom.
 *
 * Each run is described by its quantiles at a fixed set of probabilities (the
 * 99 points 0.01 .. 0.99 of stat_cdf_probs, the 24 of stat_tail_probs, then the
 * maximum): its CDF between them is interpolated linearly in log(1 - F), exact
 * for exponential tails.
 */
#ifndef LATSIM_REPCI_H
#define LATSIM_REPCI_H

#include "engine/stats.h"

#define REPCI_NQ (99 + STAT_NTAIL + 1)   /* quantiles describing one run's distribution */

/* One run's distribution. */
typedef struct repci_dist {
    double n;                /* samples (> 0) */
    double x[REPCI_NQ];      /* ms: quantiles at repci_prob(0 .. REPCI_NQ - 1), nondecreasing; the last is the max */
} repci_dist;

/* The probability of quantile J of a repci_dist (the last, J = REPCI_NQ - 1, is 1: the max). */
double repci_prob(int j);

/* Fills D from a summary S (S->n > 0). */
void repci_from_summary(const stat_summary *s, repci_dist *d);

/* The half-width of the 95 % interval of the P-quantile (0 < P < 1) over the R
 * >= 2 runs D[0 .. R-1] (pointers), around the reported value CENTER (the mean of
 * the runs' P-quantiles).  Returns it, or NAN when R < 2. */
double repci_halfwidth(const repci_dist *const *d, int r, double p, double center);

/* The pooled P-quantile of the R runs D (the smallest x with Fbar(x) >= P). */
double repci_pooled_quantile(const repci_dist *const *d, int r, double p);

#endif

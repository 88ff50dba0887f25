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
 * cluster sampling); the interval p -+ t se of Fbar(theta) is turned back
 * into milliseconds through Fbar^-1 (on the probability scale, whose upper end
 * reaches the largest samples when the few runs that reached past theta
 * disagree; the log of the tail, used before issue 30, was too narrow when the
 * runs' tails happened to agree).
 * The t quantile takes Kish's effective number of runs that carry the tail,
 * R_eff = (sum T_i)^2 / sum T_i^2 with T_i run i's count above theta, less one
 * as its degrees of freedom (R - 1 when the runs share the tail evenly, as at
 * low load; about 1 when two runs hold it): the sample variance then rests on
 * those runs alone.  The reported value stays the mean of the runs'
 * percentiles; the half-width is that of the smallest interval around it that
 * holds the pooled one.
 *
 * No interval is given (repci_enough) where none can cover: when a run has
 * fewer than REPCI_MIN_TAIL samples beyond the percentile (a P99.9 of runs of
 * 2 000 requests rests on two values each), or when the runs span fewer than
 * REPCI_MIN_WINDOWS relaxation times of their queues (sim_result.relax_windows;
 * more for percentiles above P99):
 * then the tail comes in excursions about as long as a run, every run starts
 * short of them (the warm-up ends long before the queue has relaxed) and the
 * pooled percentile is biased low by more than its spread, whatever the number
 * of runs.  Measured against Erlang C (tests/test_repci.c, repci_cover): M/M/1 at rho
 * 0.9 with 5 x 2 000 requests spans about 6 relaxation times and the interval
 * covered the exact P99 in 129 of 200 trials (refused now); M/M/2 at 0.95 with
 * 10 x 20 000 spans 13 and covered in 195 of 200.
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
    double windows;          /* the run's window in correlation times of its queues (sim_result.relax_windows;
                                INFINITY: unknown) */
} repci_dist;

/* Samples each run must have beyond a percentile (n (1 - p)) for its interval:
 * with 10 the P99.9 of M/M/1 at 0.8 (5 x 10 000 requests) was covered in 88 of
 * 100 trials, with 20 in 97. */
#define REPCI_MIN_TAIL 20
/* Relaxation times of the queues the runs must span on average for a
 * percentile's interval, at P99 and below; a percentile p above it needs
 * REPCI_MIN_WINDOWS x 0.01 / (1 - p) (P99.9: 100), as the excursions that
 * reach it are rarer in that proportion (M/M/2 at 0.95, 10 x 20 000 requests,
 * 13 relaxation times: P99 covered in 195 of 200 trials, P99.9 in 11 of 40). */
#define REPCI_MIN_WINDOWS 10

/* Whether the R runs D are enough for an interval of the P-quantile: 0 yes;
 * REPCI_FEW_TAIL when a run has fewer than REPCI_MIN_TAIL samples beyond it
 * (P99 of fewer than 2 000 requests: the interval would rest on a handful of
 * values, or reach past the largest); REPCI_SHORT when the runs span fewer
 * relaxation times of their queues on average than repci_windows_needed (the
 * tail comes in excursions as long as the run: every run starts short of them
 * and the interval misses low, however many runs). */
enum { REPCI_ENOUGH = 0, REPCI_FEW_TAIL, REPCI_SHORT };
int repci_enough(const repci_dist *const *d, int r, double p);

/* The relaxation times the runs must span for the P-quantile's interval. */
double repci_windows_needed(double p);

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

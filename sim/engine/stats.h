/* stats.h -- streaming statistics of one metric (a latency, in milliseconds).
 *
 * Mean, standard deviation, min and max are exact.  Quantiles come from a GSL
 * histogram with 1024 bins per octave (consecutive edges differ by a factor of at
 * most 1 + 1/1024), so any quantile is known within 0.05 % relative error however
 * many samples are added, in constant memory.
 * Values below STAT_MIN_MS (including exact zeros, e.g. no queueing) are counted
 * in a separate bucket and reported as 0.
 */
#ifndef LATSIM_STATS_H
#define LATSIM_STATS_H

#include <stdint.h>
#include "latsim/stats.h"   /* stat_summary, STAT_NCDF, STAT_NTAIL, the probabilities */

#define STAT_MIN_MS 0x1p-20   /* 2^-20 ms, about 0.95 ns */
#define STAT_MAX_MS 0x1p34    /* 2^34 ms, about 199 days; larger values go in the top bin */

typedef struct stat_acc stat_acc;

stat_acc *stat_new(void);                 /* NULL when out of memory; the histogram's
                                             octaves are allocated as values arrive */
void stat_free(stat_acc *s);
void stat_add(stat_acc *s, double v);     /* v in ms, >= 0 */
/* Adds N copies of V at once (the same moments, min, max and quantiles as N
 * stat_add calls; N == 0 adds nothing). */
void stat_add_n(stat_acc *s, double v, uint64_t n);

/* Adds every value SRC holds to DST: the histograms' counts exactly, the
 * moments by the pairwise update (Chan et al. 1979; the mean and sd to within
 * rounding of adding the values one by one; a DST with no values takes SRC's
 * moments as they are).  Returns 0, or -1 when an octave could not be
 * allocated (DST's quantiles then lack those values, as stat_failed says). */
int stat_merge(stat_acc *dst, const stat_acc *src);
void stat_reset(stat_acc *s);
uint64_t stat_count(const stat_acc *s);
int stat_failed(const stat_acc *s);       /* 1 when memory for its histogram ran out */
double stat_mean(const stat_acc *s);      /* 0 when empty */
double stat_quantile(const stat_acc *s, double q);  /* q in [0,1]; 0 when empty */
/* The share of the values above X, ms (NAN when empty): exact when X is at or
 * beyond an extreme; otherwise the values in the histogram bin holding X (a
 * 1/1024-octave bin, 0.07 % wide) count as not above it. */
double stat_share_above(const stat_acc *s, double x);
void stat_summarize(const stat_acc *s, stat_summary *out);

#endif

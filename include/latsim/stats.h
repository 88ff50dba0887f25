/* latsim/stats.h -- the summary of one measured metric (a latency, in
 * milliseconds) as a run reports it (public): count, moments, percentiles and
 * the quantiles behind CDF plots and replication intervals.  The streaming
 * accumulator that makes it is internal (sim/engine/stats.h).
 */
#ifndef LATSIM_PUBLIC_STATS_H
#define LATSIM_PUBLIC_STATS_H

#include <stdint.h>

#define STAT_NCDF 101       /* quantiles kept to draw a CDF */
#define STAT_NTAIL 24       /* quantiles kept of the far tail (replication intervals, report.h) */

typedef struct stat_summary {
    uint64_t n;            /* samples */
    double mean;           /* ms */
    double sd;             /* ms */
    double p50, p90, p95, p99, p999;  /* ms */
    double max;            /* ms */
    double cdf[STAT_NCDF]; /* ms: the quantiles at stat_cdf_probs[] (for CDF plots) */
    double tail[STAT_NTAIL]; /* ms: the quantiles at stat_tail_probs[] (for replication intervals) */
} stat_summary;

/* The probabilities of stat_summary.cdf: 0.01, 0.02, ... 0.99, then 0.995, 0.999. */
extern const double stat_cdf_probs[STAT_NCDF];

/* The probabilities of stat_summary.tail: 1 - 0.01 x 10^(-k/8) for k = 1 .. 24
 * (0.99250 ... 0.99999), eight a decade of the tail beyond the P99. */
extern const double stat_tail_probs[STAT_NTAIL];

#endif

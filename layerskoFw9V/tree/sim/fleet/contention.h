/* contention.h -- CPU contention and memory pressure as latency multipliers.
 *
 * Framework and scheduling overhead grows with the host's CPU utilisation along
 * a curve the user sets as points "UTIL:FACTOR, ...": utilisation in [0, 1]
 * strictly increasing, factors >= 1 and never decreasing, linear in between
 * (gsl_interp_linear), flat beyond the ends.  The default follows the seeds
 * ("node CPU > 70 % makes scheduling delay 3-5x"): 0:1, 0.7:1, 0.8:3, 1:5.
 * Memory over its limit (swapping) multiplies latency by `swap_factor` (the
 * seeds: latency to seconds, throughput down 80 %, i.e. 5x).
 */
#ifndef LATSIM_CONTENTION_H
#define LATSIM_CONTENTION_H

#include <stddef.h>

#define CONTENTION_MAX_POINTS 32
#define CONTENTION_DEFAULT "0:1, 0.7:1, 0.8:3, 1:5"

typedef struct contention_curve {
    size_t n;                           /* points, 2..CONTENTION_MAX_POINTS */
    double util[CONTENTION_MAX_POINTS]; /* CPU utilisation of each point, [0, 1], increasing */
    double factor[CONTENTION_MAX_POINTS]; /* overhead multiplier there, >= 1, non-decreasing */
} contention_curve;

/* Parses SPEC ("0:1, 0.7:1, 0.8:3, 1:5") into C and checks it.  Returns 0, or -1
 * with a one-line message in ERR (e.g. "not increasing: factor 2 at 0.9 is below
 * 3 at 0.8"). */
int contention_parse(contention_curve *c, const char *spec, char *err, size_t errlen);

/* The multiplier at utilisation U (clamped to the curve's ends). */
double contention_factor(const contention_curve *c, double u);

/* Latency multiplier for memory use USED against LIMIT (same unit): 1 within
 * the limit, SWAP_FACTOR beyond it. */
double contention_swap(double used, double limit, double swap_factor);

#endif

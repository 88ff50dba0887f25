/* simtime.h -- the simulation clock's unit.
 *
 * Simulated time is an integer count of nanoseconds since the start of the run.
 * Integer time cannot drift: adding 10^9 service times gives the same clock
 * whatever order they are added in, and 2^63 ns is 292 years of simulated time.
 * Durations drawn from distributions (in milliseconds, as doubles) are rounded
 * to the nearest nanosecond once, when they are scheduled.
 */
#ifndef LATSIM_SIMTIME_H
#define LATSIM_SIMTIME_H

#include <stdint.h>
#include <math.h>

typedef int64_t simtime_t;            /* nanoseconds */

#define SIMTIME_NEVER INT64_MAX

/* Durations beyond this (about 146 years) are held at it, so that now + duration
 * cannot overflow within any run. */
#define SIMTIME_MAX_SPAN (INT64_MAX / 2)

/* Milliseconds (double, >= 0) to simulated time, rounded to the nearest ns. */
static inline simtime_t simtime_from_ms(double ms)
{
    double ns = ms * 1e6 + 0.5;
    return ns < (double) SIMTIME_MAX_SPAN ? (simtime_t) ns : SIMTIME_MAX_SPAN;
}
static inline simtime_t simtime_from_s(double s) { return simtime_from_ms(s * 1e3); }
static inline double simtime_to_ms(simtime_t t)    { return (double) t / 1e6; }
static inline double simtime_to_s(simtime_t t)     { return (double) t / 1e9; }

#endif

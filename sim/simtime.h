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

/* Milliseconds (double, >= 0) to simulated time, rounded to the nearest ns. */
static inline simtime_t simtime_from_ms(double ms) { return (simtime_t) (ms * 1e6 + 0.5); }
static inline simtime_t simtime_from_s(double s)   { return (simtime_t) (s * 1e9 + 0.5); }
static inline double simtime_to_ms(simtime_t t)    { return (double) t / 1e6; }
static inline double simtime_to_s(simtime_t t)     { return (double) t / 1e9; }

#endif

/* simtime.h -- the simulation clock's unit and range.
 *
 * Simulated time is an integer count of nanoseconds since the start of the run.
 * Integer time cannot drift: adding 10^9 service times gives the same clock
 * whatever order they are added in.
 *
 * The contract (every path to evq_at/evq_after obeys it):
 *   - the clock runs from 0 to SIMTIME_HORIZON = 2^62 ns (about 146 years);
 *   - a duration converted from a double (ms or s) is rounded to the nearest ns
 *     and saturates at SIMTIME_BEYOND (= SIMTIME_HORIZON + 1): NaN, infinities
 *     and anything longer than the horizon all mean "beyond the clock's range";
 *   - times are added with simtime_add(), which saturates at SIMTIME_BEYOND, so
 *     no sum overflows;
 *   - an event at a time beyond the horizon is not scheduled: the calendar
 *     records it (evq_overflowed) and stops, and the run ends as a runtime
 *     failure naming the cause.  Scenario values that make this certain (a mean
 *     gap or duration beyond the horizon, a run whose arrivals alone outlast
 *     it) are rejected when the scenario is loaded, naming the key.
 */
#ifndef LATSIM_SIMTIME_H
#define LATSIM_SIMTIME_H

#include <stdint.h>
#include <math.h>

typedef int64_t simtime_t;            /* nanoseconds */

#define SIMTIME_NEVER INT64_MAX

/* The last representable instant of a run, ns (2^62, about 146.1 years). */
#define SIMTIME_HORIZON ((simtime_t) 1 << 62)
/* "Beyond the clock's range": what conversions and sums saturate at. */
#define SIMTIME_BEYOND (SIMTIME_HORIZON + 1)
/* Kept for callers that cap durations: the same as the horizon. */
#define SIMTIME_MAX_SPAN SIMTIME_HORIZON
/* The clock's resolution, s: a period or duration shorter than this rounds to
 * 0 ns, so events renewed with it would all fall at one instant. */
#define SIMTIME_RESOLUTION_S 1e-9
/* The horizon in seconds and milliseconds, for load-time checks. */
#define SIMTIME_HORIZON_S  ((double) SIMTIME_HORIZON / 1e9)
#define SIMTIME_HORIZON_MS ((double) SIMTIME_HORIZON / 1e6)

/* Milliseconds (double) to simulated time, rounded to the nearest ns: negative
 * values give 0; NaN, infinities and values past the horizon give SIMTIME_BEYOND. */
static inline simtime_t simtime_from_ms(double ms)
{
    double ns = ms * 1e6 + 0.5;
    if (!(ns <= (double) SIMTIME_HORIZON)) return SIMTIME_BEYOND;   /* NaN too */
    return ns < 1.0 ? 0 : (simtime_t) ns;
}
static inline simtime_t simtime_from_s(double s) { return simtime_from_ms(s * 1e3); }
/* Nanoseconds (double) to simulated time, rounded up (an event never fires
 * before its work is done): negative values give 0; NaN, infinities and values
 * past the horizon give SIMTIME_BEYOND (never a wrapped cast). */
static inline simtime_t simtime_from_ns_ceil(double ns)
{
    if (!(ns <= (double) SIMTIME_HORIZON)) return SIMTIME_BEYOND;   /* NaN too */
    return ns <= 0 ? 0 : (simtime_t) ceil(ns);
}
static inline double simtime_to_ms(simtime_t t)    { return (double) t / 1e6; }
static inline double simtime_to_s(simtime_t t)     { return (double) t / 1e9; }

/* T + D for T in [0, SIMTIME_BEYOND] and D >= 0 (a negative D counts as 0):
 * saturates at SIMTIME_BEYOND instead of overflowing. */
static inline simtime_t simtime_add(simtime_t t, simtime_t d)
{
    if (d < 0) d = 0;
    if (t >= SIMTIME_BEYOND || d >= SIMTIME_BEYOND - t) return SIMTIME_BEYOND;
    return t + d;
}

#endif

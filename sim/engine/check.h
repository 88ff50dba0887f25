/* check.h -- how often the sanity checks run: LATSIM_CHECK in the environment
 * (DEBUG builds: always on).
 *
 *   unset, empty, 0   off
 *   1                 at every request and every step (the focused tests, DEBUG builds)
 *   N (2 .. 10^6)     the O(1) per-request checks at every request; the costly ones
 *                     (an LLM replica's whole-structure check, O(sequences); a routing
 *                     index against a scan, O(targets)) at every Nth step of each
 *                     replica and every Nth request (ids divisible by N): every run,
 *                     scheduler and feature is still checked, at a fraction of the
 *                     cost (`make test` runs the suite with 16)
 *
 * Anything else counts as 1 (the checks are never silently off).
 */
#ifndef LATSIM_CHECK_H
#define LATSIM_CHECK_H

#include <stdint.h>
#include <stdlib.h>

/* The period of the costly checks: 0 (off), 1 (always) or N (every Nth). */
static inline int check_period(void)
{
#ifdef LATSIM_DEBUG
    return 1;
#else
    const char *v = getenv("LATSIM_CHECK");
    if (!v || !*v || (v[0] == '0' && !v[1])) return 0;
    char *end;
    long n = strtol(v, &end, 10);
    return *end || n < 1 || n > 1000000 ? 1 : (int) n;
#endif
}

/* Whether a check of period PERIOD (check_period) runs at step or request number K. */
static inline int check_due(int period, int64_t k)
{
    return period == 1 || (period > 1 && k % period == 0);
}

#endif

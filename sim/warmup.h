/* warmup.h -- choosing the warm-up from the run itself.
 *
 * When a scenario gives no `warmup`, the measured window opens at the first
 * arrival that finds the system filled: at least MIN arrivals (requests/10, the
 * old default) have come, and the arrivals so far are at least
 * WARMUP_FILL_FACTOR times the requests now in the system.  By Little's law
 * (requests in the system = arrival rate x time in the system, counting a
 * request still inside for the time it has spent so far), that is the clock
 * having passed WARMUP_FILL_FACTOR times the mean time a request stays: until
 * then the system holds fewer requests than in steady state, as a fleet of
 * replicas serving multi-second requests does for its first seconds.  Unlike the
 * mean latency of the requests served so far (the short ones finish first),
 * this count is not biased low early in the run.  The window opens after MAX
 * arrivals (MIN + requests) whatever the count says: an overloaded system
 * (whose contents grow with the clock) is then measured and reported saturated
 * as before.  Constant memory, one comparison per arrival.
 */
#ifndef LATSIM_WARMUP_H
#define LATSIM_WARMUP_H

#include <stdint.h>

/* Mean lifetimes the clock must pass before measuring. */
#define WARMUP_FILL_FACTOR 4

typedef struct warmup {
    int automatic;         /* 1: chosen by the rule above; 0: exactly MIN arrivals */
    uint64_t min;          /* arrivals before the window can open */
    uint64_t max;          /* arrivals after which it opens whatever the rule says */
} warmup;

/* Starts the rule: AUTOMATIC (no `warmup` key) or fixed at MIN arrivals; a
 * measured run of REQUESTS requests. */
void warmup_init(warmup *w, int automatic, uint64_t min, uint64_t requests);

/* 1 when arrival number ID (0-based), finding IN_SYSTEM requests in the
 * system, opens the window. */
int warmup_ready(const warmup *w, uint64_t id, uint64_t in_system);

/* The most arrivals the warm-up can take (for the run's arrival cap). */
uint64_t warmup_max(const warmup *w);

#endif

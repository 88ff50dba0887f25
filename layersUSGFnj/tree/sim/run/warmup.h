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

/* ---- saturation by trend ------------------------------------------------------
 *
 * The number of requests in each pool is sampled every STRIDE arrivals during the
 * window into TREND_CAP samples per pool (when full, every other sample is kept
 * and the stride doubles: bounded memory whatever the run's length).  At the end,
 * the later half of the samples is cut into TREND_BATCHES batches, and a line
 * fitted to the batch means (gsl_fit_linear) gives the growth over that half and
 * its standard error (batch means tame the autocorrelation of a queue's
 * contents).  A one-off fill early in the window does not count; an overload
 * grows through the whole window and does. */
#define TREND_CAP 512
#define TREND_BATCHES 8

typedef struct trend {
    double *x;             /* samples: pool i's are x[i * TREND_CAP ...], requests inside */
    int npools;            /* pools sampled */
    int n;                 /* samples taken per pool */
    uint64_t stride;       /* arrivals between samples */
    uint64_t count;        /* window arrivals so far */
} trend;

/* Returns 0, or -1 when out of memory. */
int trend_init(trend *t, int npools);
void trend_free(trend *t);

/* Counts a window arrival; returns 1 when a sample is due (then trend_put each
 * pool's count and trend_commit). */
int trend_due(trend *t);
void trend_put(trend *t, int pool, double inside);
void trend_commit(trend *t);

/* Growth of POOL's contents over the later half of the window and its standard
 * error, requests.  Returns 0, or -1 when too few samples were taken (fewer than
 * 4 per batch). */
int trend_growth(const trend *t, int pool, double *growth, double *se);

#endif

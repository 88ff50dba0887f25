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
#include "core/station.h"

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

/* The window's length in correlation times of POOL's contents: the samples
 * taken over their integrated autocorrelation time, estimated by Geyer's
 * initial positive sequence (tau = -1 + 2 sum of the pairs of autocorrelations
 * rho_2k + rho_2k+1 up to the first that is not positive).  A queue whose
 * excursions last about as long as the window gives a few (the estimate then
 * cannot exceed a quarter of the samples' span or so, and the answer is
 * small, as it should be); a quickly mixing one gives up to the sample count.
 * Returns it, or INFINITY when fewer than TREND_MIN_SAMPLES were taken or the
 * contents never changed (nothing to correlate). */
#define TREND_MIN_SAMPLES 32
double trend_windows(const trend *t, int pool);

/* ---- caches filling -----------------------------------------------------------
 *
 * A cache (a result cache, a pool's prefix cache with its KV offload tiers)
 * starts empty, so its hit rate rises until its contents reach a steady state
 * (capacity, TTLs) or hold every key there is; a window opened before then
 * measures a hit rate that depends on the run's length.  While the warm-up is
 * automatic, the window also waits for each cache's hit rate to settle: every
 * STRIDE arrivals (256 at first) the cache's cumulative lookups, sum of hit
 * shares (1 or 0 per result cache lookup; the share of the prompt found, GPU and
 * tiers, per prefix cache admission) and sum of their squares are snapshot into
 * SETTLE_SNAPS snapshots per cache (thinned as trend's samples are).  The cache
 * has settled when the mean hit share over the latest quarter of the arrivals so
 * far exceeds that over the quarter before by at most SETTLE_Z standard errors
 * (from the shares' variance in each quarter), each quarter holding at least
 * SETTLE_MIN_LOOKUPS lookups (a cache without any lookups in them is not
 * waited for), and the span is at least MIN_SPAN arrivals, the window's length
 * (but for a cache whose every lookup in both quarters found the same share,
 * e.g. none: nothing is filling).  Comparing quarters of a growing span, not fixed
 * blocks, keeps the test's power against slow rises (a hit rate growing as log
 * n rises by the same amount from quarter to quarter whatever n).  SETTLE_Z = 1:
 * a cache still rising by one standard error of a quarter keeps the window
 * closed (a settled one passes at each check with probability 0.84, so the
 * test's false alarms cost a few checks); 2 let the user's case (a 20 000-entry
 * cache, 20 000 requests) stop 2 % of hit rate short of its steady state.  The
 * window waits at most WARMUP_CACHE_FACTOR times the warm-up's MAX arrivals for
 * caches; a cache unsettled then is reported (settle_capped). */
#define SETTLE_SNAPS 64
#define SETTLE_STRIDE 256
#define SETTLE_MIN_LOOKUPS 1000
#define SETTLE_SE_MAX 0.007
#define SETTLE_Z 0.5
#define WARMUP_CACHE_FACTOR 10

typedef struct settle {
    int n;                 /* caches watched */
    int *pool;             /* cache c's pool index */
    double *snap;          /* cache c's snapshot k: snap[(c * SETTLE_SNAPS + k) * 3 + 0..2]:
                              cumulative lookups, hit shares, squared hit shares */
    double *settled_s;     /* per cache: clock of the check it has passed since, s (-1: it failed the latest) */
    int m;                 /* snapshots taken per cache */
    uint64_t stride;       /* arrivals between snapshots */
    uint64_t count;        /* arrivals counted */
    uint64_t min_span;     /* arrivals before a cache can be called settled (the window's length) */
    uint64_t cap;          /* arrivals after which the window stops waiting for caches */
    int done;              /* 1: settled or capped: no more checks */
    int capped;            /* 1: the cap was reached with a cache unsettled */
    int last;              /* the cache that settled last (or was unsettled at the cap), -1: none */
    double t;              /* clock when done, s */
} settle;

/* Watches N caches (pool indices POOL[0..N), copied), called settled after
 * MIN_SPAN arrivals at the earliest, for at most CAP arrivals.  Returns 0, or -1
 * when out of memory. */
int settle_init(settle *s, int n, const int *pool, uint64_t min_span, uint64_t cap);
void settle_free(settle *s);

/* Sets S up over the stations ST[0 .. N-1] that have a cache (station_ops
 * cache_fill), when any, as settle_init.  Returns how many (0: S is left
 * empty), or -1 when out of memory. */
int settle_stations(settle *s, station *const *st, int n, uint64_t min_span, uint64_t cap);

/* Counts an arrival; returns 1 when a snapshot is due (then settle_put each
 * cache's counters and settle_commit). */
int settle_due(settle *s);
void settle_put(settle *s, int c, const double v[3]);
/* Ends a snapshot taken at clock NOW_S (s); returns 1 when every cache has settled. */
int settle_commit(settle *s, double now_s);

#endif

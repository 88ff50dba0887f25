/* workload.h -- the workload: its configuration types and the source of arrivals.
 *
 * Configuration (filled by scenario.c from [workload] and [class NAME]):
 *   - how requests arrive: a Poisson, gamma or constant process at a rate that
 *     may vary in time (wl_rate: fixed, schedule(), ramp(), diurnal()), the
 *     rows of a trace (arrival = trace), or N closed-loop users who wait for
 *     each answer and think before asking again;
 *   - what each request carries: prompt and output tokens, from the next trace
 *     row (when a trace is given, under any arrival process) or drawn from the
 *     class's distributions; its class; its prompt's block hash ids (JSON-lines
 *     traces), for prefix caches.
 *
 * The source (wl_source): the simulation asks it for the time of the next
 * arrival (wl_next_time) and, when that arrival happens, has it fill the new
 * request's attributes (wl_fill).  Each kind of draw has its own RNG stream
 * ("workload arrivals", "workload tokens", "workload classes", "workload
 * thinning", "workload trace order", "workload think"), so adding one kind of
 * draw never shifts another's numbers.
 *
 * Open loop, per arrival: wl_next_time() schedules it; when it happens,
 * wl_fill() gives it its attributes and moves the trace cursor on; then
 * wl_next_time() is asked for the one after.  Closed loop (wl_users() > 0):
 * user u's first request comes at wl_user_start(u); wl_complete() on each
 * departure returns when that user's next request comes (after thinking).
 *
 * For stations (what a request carries from the workload):
 *   - request.cls: its class, an index into workload_cfg.classes
 *     (wl_class_of() gives the wl_class); 0, the implicit class, without
 *     [class NAME] sections.  Per-class keys live in wl_class.
 *   - request.attrs.hash_ids / request.attrs.nhash: the block hash ids of its prompt, in
 *     order, each standing for workload_cfg.hash_block_tokens prompt tokens
 *     (the last block may be partial); equal ids mean equal content.  They
 *     point into the trace (trace.hash), shared by every request of that row
 *     and valid for the whole run: never free or modify them.  NULL / 0 when
 *     the trace has no hash ids (or there is no trace).
 *   - request.prompt / request.output: token counts; request.target: the pool
 *     it enters (its class's target).
 */
#ifndef LATSIM_WORKLOAD_H
#define LATSIM_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include "core/dist.h"
#include "engine/request.h"
#include "engine/simtime.h"
#include "workload/trace.h"

typedef enum { ARRIVAL_POISSON, ARRIVAL_GAMMA, ARRIVAL_CONSTANT, ARRIVAL_TRACE, ARRIVAL_USERS } arrival_kind;

typedef enum { RATE_FIXED, RATE_STEPS, RATE_RAMP, RATE_DIURNAL } rate_kind;

/* The arrival rate as a function of simulated time.  A schedule or ramp that
 * holds one value is stored as RATE_FIXED, so it draws exactly as `rate = X`. */
typedef struct wl_rate {
    rate_kind kind;
    double fixed;             /* RATE_FIXED: requests per second */
    int n;                    /* STEPS, RAMP: points (the first at time 0) */
    double *t;                /* STEPS, RAMP: time of each point, s, increasing (owned) */
    double *r;                /* STEPS, RAMP: rate from (STEPS) or at (RAMP) that time, requests/s (owned) */
    double *cum;              /* STEPS, RAMP: expected arrivals before each point (owned) */
    double mean;              /* DIURNAL: mean rate, requests/s */
    double amp;               /* DIURNAL: relative amplitude a: rate = mean (1 + a cos(2 pi (t - peak_at) / period)) */
    double period;            /* DIURNAL: period, s */
    double peak_at;           /* DIURNAL: time of the peak within the period, s */
    double omega;             /* DIURNAL: 2 pi / period, radians per s */
    double max;               /* highest rate reached, requests/s (> 0) */
    double min;               /* lowest rate reached, requests/s */
    double avg;               /* long-run mean rate, requests/s (the last value for STEPS/RAMP) */
} wl_rate;

/* A kind of request ([class NAME]).  To add a per-class key: a field here
 * (with its unit), a K_CLASS row in the schema (scenario.c, KEYS) and its
 * parsing in build_classes() (scenario.c; the implicit class takes the
 * default), and its release in wl_cfg_free().  Nothing is copied per
 * request: a request carries the class index (request.cls). */
typedef struct wl_class {
    char name[64];            /* the NAME of [class NAME] ("" for the implicit class) */
    int line;                 /* line of its header (0: implicit) */
    double share;             /* mixture weight, normalised to sum to 1 over the classes */
    dist prompt;              /* prompt tokens per request (count); default the workload's */
    dist output;              /* output tokens per request (count); default the workload's */
    int target;               /* index of the pool its requests enter */
    /* gateway attributes (gwattr.h); default the workload's */
    dist complexity;          /* complexity score, clipped to [0, 1] (used when has_complexity) */
    int has_complexity;       /* 1 when `complexity` is set */
    int64_t intents;          /* intents its requests ask a result cache (0 = none given) */
    double intent_zipf;       /* Zipf exponent of their popularity, > 0 */
    double cache_ttl_s;       /* how long a result cache keeps its answers, s (< 0: the cache's own; inf = forever) */
    int64_t system_prompt_tokens; /* leading prompt tokens shared by all its requests (prefix caches) */
    dist turns;               /* turns per multi-turn session (count, rounded, at least 1; used when has_turns) */
    int has_turns;            /* 1 when `turns` is set: consecutive requests of the class form sessions */
    int sessions;             /* open loop: conversations of the class open at once, each arrival a turn of one
                                 drawn at random (1: its consecutive arrivals are one session's turns) */
    dist patience;            /* how long its client waits for the answer to begin before leaving, s
                                 (used when has_patience) */
    int has_patience;         /* 1 when `patience_s` is set */
    int patience_in_service;  /* 1: its client leaves a request in service too (its work cancelled) when no
                                 answer has begun; 0: only one still queued (patience_in_service) */
} wl_class;

typedef enum { TRACE_ORDER_SEQUENTIAL, TRACE_ORDER_SHUFFLE } trace_order;

typedef struct workload_cfg {
    arrival_kind arrival;
    double rate;              /* poisson, gamma, constant: requests per second (fixed), or the schedule's long-run mean */
    wl_rate sched;            /* the rate over time (kind RATE_FIXED for a plain rate) */
    double cv;                /* gamma: coefficient of variation of inter-arrival times */
    int has_trace;            /* 1 when a trace is loaded (times for arrival = trace, else attributes) */
    trace tr;                 /* the loaded rows (shared by every request that takes one) */
    trace_order order;        /* attribute traces: sequential or shuffled rows */
    double speedup;           /* arrival = trace: arrival-rate multiplier (times divided by it) */
    int loop;                 /* arrival = trace: 1 = replay again when it runs out */
    int trace_tokens;         /* 1 when the trace gives prompt and output tokens */
    int hash_block_tokens;    /* prompt tokens per hash id of a JSON-lines trace (512) */
    dist prompt;              /* prompt tokens per request (count) */
    dist output;              /* output tokens per request (count) */
    int target;               /* index of the pool requests enter first */
    int users;                /* closed loop: users (0 = open loop) */
    dist think;               /* closed loop: think time between an answer and the next request, ms */
    double ramp_users_s;      /* closed loop: user u starts at u x ramp_users_s / users, s */
    wl_class *classes;        /* request classes, at least one (owned) */
    int nclasses;
    int explicit_classes;     /* 1 when the scenario has [class NAME] sections */
    int32_t *trace_class;     /* per trace label (tr.labels): class index (owned), or NULL */
} workload_cfg;

/* ---- rate over time ----------------------------------------------------------- */

/* Parses "X", "schedule(T:R, ...)", "ramp(T:R, ...)" or "diurnal(mean=M,
 * peak_to_trough=P, period=T, peak_at=T)"; times take a unit s, m or h.
 * Returns 0, or -1 with a one-line message in ERR. */
int wl_rate_parse(const char *text, wl_rate *out, char *err, size_t errlen);
/* Rate at time T s, requests/s. */
double wl_rate_at(const wl_rate *r, double t);
/* Expected arrivals in [0, T s]: the integral of the rate. */
double wl_rate_cum(const wl_rate *r, double t);
/* The time T s at which wl_rate_cum(r, T) = L (L >= 0). */
double wl_rate_inv(const wl_rate *r, double l);
void wl_rate_free(wl_rate *r);

/* The class of request R. */
static inline const wl_class *wl_class_of(const workload_cfg *w, const request *r)
{
    return &w->classes[r->cls];
}

/* Frees what the configuration owns (classes, rate points, trace). */
void wl_cfg_free(workload_cfg *w);

/* ---- the source ------------------------------------------------------------ */

typedef struct wl_source wl_source;

/* A source for W (which must outlive it) under run seed SEED.  NEED_TOKENS = 0
 * skips token draws (no LLM pool: token counts matter to nobody; the token
 * stream is separate, so this changes no other number).  Returns NULL when out
 * of memory. */
wl_source *wl_new(const workload_cfg *w, uint64_t seed, int need_tokens);
void wl_free(wl_source *src);

/* Open loop: time of the arrival with id ID (arrivals are numbered from 0),
 * given the current time NOW; -1 when the source has ended (a trace without
 * loop). */
simtime_t wl_next_time(wl_source *src, simtime_t now, uint64_t id);

/* Fills R's attributes for the arrival just happening: cls, pool (its class's
 * target), prompt and output tokens, hash_ids/nhash (pointers into the shared
 * trace), and moves the trace cursor to the next row.  R->measured must be set.
 * Returns 0, or -1 when out of memory (the repeat-token set could not grow). */
int wl_fill(wl_source *src, request *r);

/* Closed loop: the number of users (0 for an open-loop source), and the time
 * of user U's first request. */
int wl_users(const wl_source *src);
simtime_t wl_user_start(const wl_source *src, int u);

/* R leaves the system at NOW (served, rejected or timed out).  Returns the
 * time of the arrival this departure causes (closed loop: R's user's next
 * request, after thinking), which the caller schedules; -1 for none (open
 * loop). */
simtime_t wl_complete(wl_source *src, const request *r, simtime_t now);

/* repeat_token_share so far: over measured requests, tokens of each prompt's
 * leading run of block ids that earlier arrivals (measured or not) carried,
 * min(prompt, run x hash_block_tokens), over their prompt tokens.  NAN when the
 * trace has no hash ids. */
double wl_repeat_token_share(const wl_source *src);

#endif

/* evq.h -- the event calendar and clock of the discrete-event engine.
 *
 * An event is (time, sequence, handler, subject, arg).  Events run in time order;
 * events at the same time run in the order they were scheduled (the sequence
 * number breaks ties), so a run is deterministic.  The calendar is a binary
 * heap: schedule and pop are O(log n); cancel is O(1) amortised (the entry is
 * marked and dropped later; the heap is compacted when dropped entries
 * outnumber live ones, so it stays within about twice the pending events).  The engine knows nothing about what the events mean: models plug in
 * through handlers and an opaque subject pointer.
 */
#ifndef LATSIM_EVQ_H
#define LATSIM_EVQ_H

#include <stddef.h>
#include <stdint.h>
#include "engine/simtime.h"

typedef struct evq evq;

/* An event handler: SUBJECT and ARG are what was given to evq_at(). */
typedef void (*evq_handler)(evq *q, void *subject, int64_t arg);

/* A handle to a scheduled event, for evq_cancel(); 0 is never a valid handle.
 * A handle stays safe to cancel after its event has run or been cancelled. */
typedef uint64_t evq_id;

evq *evq_new(void);                 /* NULL when out of memory */
void evq_free(evq *q);

/* Memory one pending event takes at most, bytes (its slot and heap entry,
 * doubled: the arrays grow by doubling), for memory estimates. */
size_t evq_event_bytes(void);

simtime_t evq_now(const evq *q);    /* current simulated time, ns */
uint64_t evq_events(const evq *q);  /* events run so far */
size_t evq_pending(const evq *q);   /* events scheduled and not yet run */

/* Schedules HANDLER(SUBJECT, ARG) at absolute time T (now <= T <= SIMTIME_HORIZON,
 * see simtime.h).  Returns the event's handle, or 0 when out of memory.  A T
 * beyond the horizon (or before now) is not scheduled: it returns 0, and the
 * calendar records why (evq_overflowed) and stops, as evq_stop() does. */
evq_id evq_at(evq *q, simtime_t t, evq_handler handler, void *subject, int64_t arg);

/* Same, DT nanoseconds from now (DT >= 0); now + DT saturates (simtime_add), so
 * a DT that would pass the horizon ends the run as above. */
evq_id evq_after(evq *q, simtime_t dt, evq_handler handler, void *subject, int64_t arg);

/* Removes a scheduled event.  Returns 1 if it was pending, 0 if it had already
 * run or been cancelled (or ID is 0). */
int evq_cancel(evq *q, evq_id id);

/* Runs events until none is left, evq_stop() is called, or the next event is
 * later than UNTIL.  Returns the number of events run. */
uint64_t evq_run(evq *q, simtime_t until);

/* Makes evq_run() return after the current handler. */
void evq_stop(evq *q);

/* For tests of the sequence counter's renumbering: the next event gets
 * sequence number NEXT, and the pending events are renumbered when it reaches
 * LIMIT (normally 2^32 - 1). */
void evq_set_seq(evq *q, uint32_t next, uint32_t limit);

/* Why scheduling failed, or 0: EVQ_BEYOND_HORIZON (an event past the clock's
 * range), EVQ_BEFORE_NOW (an event in the past: a model error), EVQ_STALLED
 * (the stall guard below stopped the run).  The first cause is kept; evq_run()
 * runs nothing more. */
enum { EVQ_OK = 0, EVQ_BEYOND_HORIZON = 1, EVQ_BEFORE_NOW = 2, EVQ_STALLED = 3 };
int evq_overflowed(const evq *q);
/* The time that was asked for when it failed, ns (SIMTIME_BEYOND when it
 * saturated; for EVQ_STALLED, the instant the clock stopped at). */
simtime_t evq_failed_time(const evq *q);

/* ---- the stall guard ------------------------------------------------------
 *
 * Events that renew themselves (a replica's failures, pauses, the autoscaler's
 * evaluations) with a period that rounds to 0 ns would run forever at one
 * instant.  evq_run() counts the events run in a row without the clock moving
 * (the one that moved it, or that called evq_progress(), is the first); when
 * EVQ_STALL_EVENTS of them have run (evq_set_stall_limit() changes it), it
 * looks for the event to blame among the next ones at that instant (at most
 * EVQ_STALL_SAMPLE more: the first that a namer calls a period, else the best
 * named) and stops before it, with evq_overflowed() = EVQ_STALLED, keeping it
 * for evq_stall_name().  The cost on the hot path is one compare per event
 * (the time against now).
 *
 * 10^7: about one second of the engine (some 10^7 events/s, docs/development.md,
 * "Speed"), so a stall ends quickly, yet far above what one instant of a real run
 * holds: a few events per request arriving at it (each arrival restarts the
 * count through evq_progress(): arrivals are bounded by the run's arrival cap)
 * and per replica or server present (the memory estimate bounds those). */
#define EVQ_STALL_EVENTS 10000000u
/* Events looked at after the limit for the one to blame (a renewal cycle is a
 * few events: a failure, a repair, a restart). */
#define EVQ_STALL_SAMPLE 64

/* Events in a row at one instant after which evq_run() stops (>= 1); set it
 * before the run. */
void evq_set_stall_limit(evq *q, uint64_t n);

/* The current event made progress the clock does not show (an arrival): the
 * count of events at this instant starts again. */
void evq_progress(evq *q);

/* Names an event for the stall report: writes what the event (HANDLER,
 * SUBJECT) is into BUF (N bytes) when it is one of the namer's module, and
 * returns EVQ_NAME_PERIOD when the event renews a period the user set (a
 * failure, a pause, an evaluation), EVQ_NAME_OTHER for the module's other
 * events (a repair, a restart, an arrival), or 0 when it is not the module's
 * (BUF untouched). */
enum { EVQ_NAME_OTHER = 1, EVQ_NAME_PERIOD = 2 };
typedef int (*evq_namer)(evq_handler handler, const void *subject, char *buf, size_t n);

/* Adds NAMER (once: adding it again does nothing).  Returns 0, or -1 when
 * EVQ_MAX_NAMERS are already there (the report then names the event less well). */
#define EVQ_MAX_NAMERS 16
int evq_add_namer(evq *q, evq_namer namer);

/* What the event that stopped a stalled run is, from the first namer that knows
 * it ("an event of an unknown module" otherwise) into BUF (N bytes).  Returns
 * the stall limit, the events run in a row at that instant before the search
 * for the event to blame (0 when not stalled). */
uint64_t evq_stall_name(const evq *q, char *buf, size_t n);
/* The subject of that event (NULL when not stalled). */
const void *evq_stall_subject(const evq *q);

#endif

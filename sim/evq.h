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
#include "simtime.h"

typedef struct evq evq;

/* An event handler: SUBJECT and ARG are what was given to evq_at(). */
typedef void (*evq_handler)(evq *q, void *subject, int64_t arg);

/* A handle to a scheduled event, for evq_cancel(); 0 is never a valid handle.
 * A handle stays safe to cancel after its event has run or been cancelled. */
typedef uint64_t evq_id;

evq *evq_new(void);                 /* NULL when out of memory */
void evq_free(evq *q);

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
 * range), EVQ_BEFORE_NOW (an event in the past: a model error).  The first
 * cause is kept; evq_run() runs nothing more. */
enum { EVQ_OK = 0, EVQ_BEYOND_HORIZON = 1, EVQ_BEFORE_NOW = 2 };
int evq_overflowed(const evq *q);
/* The time that was asked for when it failed, ns (SIMTIME_BEYOND when it
 * saturated). */
simtime_t evq_failed_time(const evq *q);

#endif

/* workload.h -- the workload source: when requests arrive and what they carry.
 *
 * A wl_source turns the [workload] configuration into a stream of arrivals.
 * The simulation asks it for the time of the next arrival (wl_next_time) and,
 * when that arrival happens, has it fill the new request's attributes
 * (wl_fill: prompt and output tokens, from the trace row or the token
 * distributions).  Arrival times and attributes draw from separate RNG streams
 * ("workload arrivals", "workload tokens"), so changing how one is drawn does
 * not shift the other's numbers.
 *
 * Call order for each arrival: wl_next_time() schedules it; when it happens,
 * wl_fill() gives it its attributes and moves the trace cursor on; then
 * wl_next_time() is asked for the one after.  wl_complete() tells the source a
 * request has left the system (served or not): closed-loop sources use it to
 * schedule that user's next request.
 */
#ifndef LATSIM_WORKLOAD_H
#define LATSIM_WORKLOAD_H

#include <stdint.h>
#include "request.h"
#include "scenario.h"
#include "simtime.h"

typedef struct wl_source wl_source;

/* A source for W (which must outlive it) under run seed SEED.  NEED_TOKENS = 0
 * skips token draws (no LLM pool: token counts matter to nobody; the token
 * stream is separate, so this changes no other number).  Returns NULL when out
 * of memory. */
wl_source *wl_new(const workload_cfg *w, uint64_t seed, int need_tokens);
void wl_free(wl_source *src);

/* Time of the arrival with id ID (arrivals are numbered from 0), given the
 * current time NOW; -1 when the source has ended (a trace without loop). */
simtime_t wl_next_time(wl_source *src, simtime_t now, uint64_t id);

/* Fills R's attributes (prompt, output tokens; its target pool) for the
 * arrival just happening, and moves the trace cursor to the next row.
 * Returns 0 (it cannot fail today; later attribute sources may return -1). */
int wl_fill(wl_source *src, request *r);

/* R leaves the system at NOW (served, rejected or timed out).  Returns the
 * time of an arrival this departure causes (closed loop: the user's next
 * request, after thinking), which the caller schedules; -1 for none (open-loop
 * sources always). */
simtime_t wl_complete(wl_source *src, const request *r, simtime_t now);

#endif

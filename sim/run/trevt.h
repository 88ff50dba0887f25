/* trevt.h -- a run's Chrome/Perfetto trace-event JSON (`run --trace-events`).
 *
 * The file is {"traceEvents": [...], "displayTimeUnit": "ms"}; ts and dur are
 * in microseconds of simulated time (integer nanoseconds / 1000, exact).
 * Process 1 ("requests") has one thread (track) per traced request: a
 * "request" span from its arrival to the client's last byte (its E2E), and
 * inside it its components laid end to end from the arrival, in this order:
 * network, overhead, queue, then its service (split into prefill and decode
 * for an LLM request that streamed: decode = last token - first token), and a
 * "first token" instant at the real time the client had it.  The simulator
 * keeps each request's total per component, not every interval, so the spans'
 * lengths are exact (they add up to the E2E to the nanosecond) and their
 * placement within the request is schematic.  Process 2 + pool index has one
 * thread per LLM replica with its steps (ph "X", args: prefill tokens and
 * sequences, decode sequences).
 *
 * Only the first N requests (by arrival) are traced; steps are recorded from
 * the start of the run until the last of them has an outcome, so the file's
 * size is bounded by N, not by the run's length.  The events are written as
 * they happen, one jansson object at a time, to OUT.tmp, renamed to OUT at
 * the end (nothing half-written stays behind on failure).
 */
#ifndef LATSIM_TREVT_H
#define LATSIM_TREVT_H

#include <stdint.h>
#include "engine/request.h"

#define TREVT_DEFAULT_REQUESTS 1000

typedef struct trevt trevt;

/* Opens the trace for PATH tracing the first NREQ requests.  Returns NULL with
 * ERR set (file not writable, out of memory). */
trevt *trevt_open(const char *path, uint64_t nreq, char *err, size_t errlen);

/* Names process 2 + POOL after NAME. */
void trevt_pool(trevt *t, int pool, const char *name);

/* 1 while steps are recorded (the traced requests are not all done). */
int trevt_stepping(const trevt *t);

/* A step of replica REP of pool POOL from START for DUR ns. */
void trevt_step(trevt *t, int pool, int rep, simtime_t start, simtime_t dur, int64_t prefill_tokens,
                int32_t prefill_seqs, int32_t decode_seqs);

/* R (served) leaves; E2E ns.  Nothing unless R is traced. */
void trevt_served(trevt *t, const request *r, simtime_t e2e, int whole);

/* R ends with OUTCOME (not served) at NOW ns.  Nothing unless R is traced. */
void trevt_unserved(trevt *t, const request *r, req_outcome outcome, simtime_t now);

/* Requests traced, and whether more than the cap arrived (truncated). */
uint64_t trevt_requests(const trevt *t);
int trevt_truncated(const trevt *t);

/* Ends the file and renames it into place (OK != 0), or removes it.  Frees T.
 * Returns 0, or -1 with ERR set (a write failed). */
int trevt_close(trevt *t, int ok, char *err, size_t errlen);

#endif

/* slocfg.h -- service-level objectives: the [slo] and [slo CLASS] sections of
 * a scenario, as parsed (their evaluation over a run's report rows is
 * report/slo.h).
 *
 * A term is `<metric>_<stat>_ms = LIMIT` on a reported latency metric (e2e,
 * queue, service, network, and with an LLM pool overhead, ttft, tpot, itl) and stat (p50,
 * p90, p95, p99, p999, mean, max), `error_rate = F` (rejected + timed out + failed over
 * measured requests) or `utilization_max = U` (every pool).  `headroom = H`
 * is no term: the planner and `latsim check` run the workload at H times its
 * rate.  The per-request limits (goodput, as DistServe defines it) are the
 * tail-most limit on ttft, tpot and e2e: a measured request is "good" when it
 * was served and its own TTFT, TPOT and E2E are within them.  A request of a
 * class with its own [slo CLASS] limit on a metric is held to that limit on it
 * (and to [slo]'s on the others).  The terms (slo_term, slo_spec) are public,
 * in latsim/slo.h.
 */
#ifndef LATSIM_SLOCFG_H
#define LATSIM_SLOCFG_H

#include <stdio.h>
#include "core/config.h"
#include "latsim/slo.h"   /* slo_term, slo_spec, slo_free: public */

/* Reads the [slo] sections of C.  HAS_LLM says whether LLM-only metrics (ttft,
 * tpot, overhead) are reported; CLASSES (NCLASSES names) are the workload's
 * request classes.  Returns 0, or -1 with "FILE:LINE: [slo] key: message" in ERR.
 * OUT must be slo_free()d either way. */
int slo_parse(const cfg *c, int has_llm, const char *const *classes, int nclasses,
              slo_spec *out, char *err, size_t errlen);

/* 1 when a served request of class CLS (-1: none) with these latencies (ms;
 * NAN = not applicable, e.g. TPOT of a one-token answer) meets every
 * per-request limit of S that holds for it. */
int slo_request_ok(const slo_spec *s, int cls, double e2e_ms, double ttft_ms, double tpot_ms);

/* The [slo] keys for `latsim keys`: calls ROW(CTX, key, default ("" = none), help)
 * for each, in order. */
void slo_keys(void (*row)(void *ctx, const char *key, const char *def, const char *help), void *ctx);

#endif

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
 * (and to [slo]'s on the others).
 */
#ifndef LATSIM_SLOCFG_H
#define LATSIM_SLOCFG_H

#include <stdio.h>
#include "core/config.h"

typedef enum { SLO_LATENCY, SLO_ERROR_RATE, SLO_UTIL_MAX } slo_kind;

typedef struct slo_term {
    char key[64];             /* as written, e.g. "ttft_p99_ms" */
    char cls[64];             /* "" for [slo], else the request class of [slo CLASS] */
    slo_kind kind;
    char metric[32];          /* SLO_LATENCY: the latency metric, e.g. "ttft" */
    char stat[8];             /* SLO_LATENCY: "p99", "mean"... */
    double limit;             /* ms (latency), fraction (error_rate), share (utilization_max) */
    int line;                 /* line in the scenario file, 0 = --set */
} slo_term;

typedef struct slo_spec {
    slo_term *t;              /* the terms, in file order */
    int n;
    double headroom;          /* workload-rate multiplier the SLO must hold at (1 when not given) */
    int per_request;          /* 1 when a per-request limit exists (goodput is reported) */
    double req_ttft_ms;       /* per-request TTFT limit, ms (INFINITY = none) */
    double req_tpot_ms;       /* per-request TPOT limit, ms (INFINITY = none) */
    double req_e2e_ms;        /* per-request end-to-end limit, ms (INFINITY = none) */
    int ncls;                 /* request classes of the workload (0: none) */
    double *cls_req;          /* per class c: [3c] TTFT, [3c+1] TPOT, [3c+2] E2E per-request limits, ms:
                                 the class's own tail-most term, else [slo]'s (INFINITY = none); NULL without classes */
    int *cls_rank;            /* parsing scratch, as cls_req: the rank of the class's tail-most term, -1 = none */
} slo_spec;

/* Reads the [slo] sections of C.  HAS_LLM says whether LLM-only metrics (ttft,
 * tpot, overhead) are reported; CLASSES (NCLASSES names) are the workload's
 * request classes.  Returns 0, or -1 with "FILE:LINE: [slo] key: message" in ERR.
 * OUT must be slo_free()d either way. */
int slo_parse(const cfg *c, int has_llm, const char *const *classes, int nclasses,
              slo_spec *out, char *err, size_t errlen);
void slo_free(slo_spec *s);

/* 1 when a served request of class CLS (-1: none) with these latencies (ms;
 * NAN = not applicable, e.g. TPOT of a one-token answer) meets every
 * per-request limit of S that holds for it. */
int slo_request_ok(const slo_spec *s, int cls, double e2e_ms, double ttft_ms, double tpot_ms);

/* The [slo] keys for `latsim keys`: calls ROW(CTX, key, default ("" = none), help)
 * for each, in order. */
void slo_keys(void (*row)(void *ctx, const char *key, const char *def, const char *help), void *ctx);

#endif

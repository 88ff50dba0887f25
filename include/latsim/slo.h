/* latsim/slo.h -- service-level objectives (public): the terms of a
 * scenario's [slo] and [slo CLASS] sections as parsed (slo_spec: a scenario
 * gives it, latsim/scenario.h), and their evaluation over a run's report rows:
 * met or not, the margin of each term, as a table or JSON.
 *
 * A term is `<metric>_<stat>_ms = LIMIT` on a reported latency metric (e2e,
 * queue, service, network, and with an LLM pool overhead, ttft, tpot, itl) and
 * stat (p50, p90, p95, p99, p999, mean, max), `error_rate = F` (or apart:
 * `error_5xx_rate`, `timeout_rate`) or `utilization_max = U` (every pool).  `headroom = H` is no term: the planner
 * and `latsim check` run the workload at H times its rate.
 */
#ifndef LATSIM_PUBLIC_SLO_H
#define LATSIM_PUBLIC_SLO_H

#include <stdio.h>
#include "latsim/report.h"   /* store_stat */

/* SLO_POOL_MAX: a limit on every LLM pool's METRIC (mfu_max, mbu_max, kv_occupancy_max, ...).
 * SLO_5XX_RATE, SLO_TIMEOUT_RATE: the golden signals' two error limits apart,
 * (rejected + failed) / requests and timed out / requests. */
typedef enum { SLO_LATENCY, SLO_ERROR_RATE, SLO_UTIL_MAX, SLO_POOL_MAX, SLO_5XX_RATE, SLO_TIMEOUT_RATE,
               SLO_OVER } slo_kind;   /* SLO_OVER: `<metric>_over_<T>ms`, the share of served requests slower than T */

#define SLO_MAX_OVER 16          /* `<metric>_over_<T>ms` terms a scenario may give */

typedef struct slo_term {
    char key[64];             /* as written, e.g. "ttft_p99_ms" */
    char cls[64];             /* "" for [slo], else the request class of [slo CLASS] */
    slo_kind kind;
    char metric[32];          /* SLO_LATENCY: the latency metric, e.g. "ttft"; SLO_POOL_MAX: the pool
                                 metric, e.g. "mfu" */
    char stat[8];             /* SLO_LATENCY: "p99", "mean"... */
    double limit;             /* ms (latency), fraction (error_rate), share (utilization_max) */
    int line;                 /* line in the scenario file, 0 = --set */
    double over_ms;           /* SLO_OVER: the threshold T, ms (metric: e2e or ttft) */
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

/* Frees what S holds (its terms and per-class limits); S is then empty (no
 * terms, headroom 1). */
void slo_free(slo_spec *s);

typedef struct slo_check {
    const slo_term *t;        /* the term (owned by the slo_spec) */
    double value;             /* measured: ms, fraction or share; NAN when not measured (saturated) */
    double margin;            /* limit - value (positive: met), same unit; NAN when value is */
    int met;                  /* 1 when value <= limit */
} slo_check;

typedef struct slo_result {
    slo_check *c;             /* one per term */
    int n;
    int met;                  /* every term met (1 when there are none) */
} slo_result;

/* Evaluates S over report rows (replication -1 or 0: the ones shown).
 * Returns 0, or -1 when out of memory.  OUT must be slo_result_free()d. */
int slo_eval(const slo_spec *s, const store_stat *rows, size_t nrows, slo_result *out);
void slo_result_free(slo_result *r);

/* The worst relative margin of R: min over terms of margin / limit (negative
 * when a term is missed, -INFINITY when one is not measured). */
double slo_worst_margin(const slo_result *r);

/* Prints R as a table ("slo  MET" / "NOT MET", then one line per term). */
void slo_table(const slo_result *r, FILE *out);

/* Prints R as the JSON value {"met": B, "terms": [{"term", "class", "limit",
 * "value", "margin", "met"}...]}. */
void slo_json(const slo_result *r, FILE *out);

#endif

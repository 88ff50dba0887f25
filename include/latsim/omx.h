/* latsim/omx.h -- a run's metrics as a monitoring stack reads them (public):
 * the OpenMetrics text format, with the names an inference engine exports.
 *
 * A scenario with metrics on (scenario_set_metrics, latsim/scenario.h; `run
 * --metrics FILE`) gives its run's sim_result an omx series (sim_result.omx):
 * at the start of the run and at the end of every time-series interval, per
 * pool, the gauges and the cumulative counters and histograms a Prometheus
 * scrape of that pool would have read at that instant of simulated time.
 *
 * Names (docs/metrics.md, "Prometheus / OpenMetrics"): LLM pools use vLLM's
 * (vllm:num_requests_running, vllm:num_requests_waiting, vllm:kv_cache_usage_perc,
 * vllm:prompt_tokens_total, vllm:generation_tokens_total,
 * vllm:request_success_total, and the histograms vllm:time_to_first_token_seconds,
 * vllm:request_time_per_output_token_seconds and vllm:e2e_request_latency_seconds
 * with vLLM's bucket bounds); every other pool latsim_pool_* names; the whole
 * system, as the client sees it, latsim_e2e_request_latency_seconds and
 * latsim_time_to_first_token_seconds.  Labels: model_name and pool.
 */
#ifndef LATSIM_PUBLIC_OMX_H
#define LATSIM_PUBLIC_OMX_H

#include <stddef.h>
#include <stdio.h>

/* A run's metric series (sim_result.omx): written with omx_write. */
typedef struct omx omx;

/* The default start of simulated time in the file: 2026-01-01T00:00:00Z, s
 * since the Unix epoch (`run --metrics-start` changes it). */
#define OMX_DEFAULT_START 1767225600.0

/* Writes M in the OpenMetrics text format to OUT, simulated time 0 at
 * START_EPOCH_S (s since the Unix epoch; timestamps in s with ms precision),
 * ending with "# EOF".  Returns 0, or -1 with a message in ERR on a write
 * error. */
int omx_write(const omx *m, FILE *out, double start_epoch_s, char *err, size_t errlen);

/* Points x series (pools + 1 + LLM replicas) a series may hold: 2 x 10^6
 * (about 1.4 GB); more is refused before the run (omx_check). */
#define OMX_MAX_CELLS 2000000.0

/* Checks that a run of about DURATION_S seconds in INTERVAL_S intervals over
 * NPOOLS pools and NREPLICAS replicas with series of their own
 * (scenario_metric_replicas) stays within OMX_MAX_CELLS.  Returns 0, or -1
 * with ERR. */
int omx_check(double duration_s, double interval_s, int npools, int nreplicas, char *err, size_t errlen);

/* Points (scrape instants) in M: the run's start and one per interval. */
size_t omx_points(const omx *m);

void omx_free(omx *m);

#endif

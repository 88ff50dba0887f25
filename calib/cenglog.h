/* cenglog.h -- an engine's own periodic metrics as step-time measurements
 * (`latsim calib import engine-log`, docs/observed.md "Engine logs").
 *
 * A serving engine reports, every few seconds, how many requests it runs and
 * keeps waiting, how many prompt and generated tokens it processed per second,
 * and how full its KV cache is.  Where the batch is steady, those give step
 * times directly:
 *   pure decode (no prompt token in the interval): a step generates one token
 *     per running sequence, so step_ms = 1000 x running / generated tokens per
 *     second, at the mean context KV usage x kv_blocks x block_tokens / running;
 *   prefill-saturated (prompt tokens and a queue at both ends of the interval,
 *     KV usage below CELOG_KV_FREE): the token budget fills every step, so
 *     step_ms = 1000 x budget / (prompt + generated tokens per second).
 * Three shapes are read (detected from the content):
 *   csv   a header t,prompt_throughput,gen_throughput,running,waiting,kv_cache_pct
 *         (s, tokens/s, tokens/s, requests, requests, %), one row per interval;
 *   vllm  vLLM's periodic log lines ("Avg prompt throughput: X tokens/s, Avg
 *         generation throughput: Y tokens/s, Running: R reqs, Waiting: W reqs
 *         (v0: Swapped: S reqs, Pending: W reqs), GPU KV cache usage: Z%"), the
 *         time from the logger's "MM-DD HH:MM:SS" prefix; with data parallelism
 *         ("Engine NNN:") engine 000's lines only;
 *   prom  a series of Prometheus text-format scrapes of vllm:num_requests_running,
 *         vllm:num_requests_waiting, vllm:prompt_tokens_total,
 *         vllm:generation_tokens_total and vllm:gpu_cache_usage_perc (or
 *         vllm:kv_cache_usage_perc, 0..1), every sample with its timestamp (ms);
 *         a scrape is the samples of one timestamp, label sets summed (the
 *         cache usage averaged), token rates the counters' differences.
 */
#ifndef LATSIM_CENGLOG_H
#define LATSIM_CENGLOG_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "latsim/catalog.h"

/* KV usage (share) at or above which the engine is taken as memory-bound:
 * prompts wait for blocks, not for the token budget (no prefill window). */
#define CELOG_KV_FREE 0.9
/* Rows per window at most; a window needs CELOG_MIN_ROWS. */
#define CELOG_MAX_ROWS 5
#define CELOG_MIN_ROWS 2

typedef enum { CELOG_CSV, CELOG_VLLM, CELOG_PROM } celog_format;

/* One reporting interval, ending at T. */
typedef struct celog_row {
    double t;                 /* end of the interval, s (any origin, increasing) */
    double prompt_tps;        /* prompt tokens per second over the interval */
    double gen_tps;           /* generated tokens per second over the interval */
    double running;           /* requests running at T */
    double waiting;           /* requests waiting at T */
    double kv;                /* KV cache usage at T, share 0..1 */
    long line;                /* the file line it came from */
} celog_row;

typedef struct celog {
    celog_format format;      /* what it was read as */
    celog_row *row;           /* in time order (owned) */
    size_t n;
    char note[256];           /* what the reader left out, "" for nothing */
} celog;

/* "csv", "vllm", "prom". */
const char *celog_format_name(celog_format f);

/* Reads PATH into LOG (initialised here).  Returns 0; 2 for bad input (ERR one
 * line "PATH:LINE: field: what is wrong"); 1 when out of memory.  LOG holds
 * nothing on failure. */
int celog_read(const char *path, celog *log, char *err, size_t errlen);

void celog_free(celog *log);

/* What the windows are measured on: the pool that served the log. */
typedef struct celog_server {
    const model_spec *model;  /* its geometry */
    const gpu_spec *gpu;      /* its GPU */
    const char *weights;      /* weight precision (bf16, fp8...) */
    int tp;                   /* GPUs per replica */
    long long kv_blocks;      /* KV blocks per replica */
    int block_tokens;         /* tokens per block */
    long long budget;         /* chunked prefill budget per step, tokens (0: none: no prefill window) */
} celog_server;

/* One steady window as a step. */
typedef struct celog_window {
    int prefill;              /* 1 a prefill-saturated window, 0 pure decode */
    double t0, t1;            /* its interval, s (the log's clock) */
    long line0, line1;        /* first and last row's lines */
    int rows;                 /* intervals averaged */
    double batch;             /* decode: mean running sequences; prefill: 1 */
    double tokens;            /* prefill: the budget, tokens; decode: 0 */
    double context;           /* decode: mean context per sequence, tokens; prefill: 0 */
    double step_ms;           /* the step time, ms */
    double sd_ms;             /* standard deviation of the rows' step times, ms (NAN: one row) */
    double floor_ms;          /* the hardware floor of such a step, ms */
} celog_window;

/* The steady windows of LOG on SRV into *W (malloc'd), their number in *N;
 * windows faster than the hardware floor (compute at dense peak, weights at
 * peak bandwidth) are dropped and counted in *BELOW.  Returns 0, or 1 when out
 * of memory. */
int celog_windows(const celog *log, const celog_server *srv, celog_window **w, size_t *n, int *below);

/* The hardware floor of a step, ms: the larger of the weights read at peak
 * bandwidth and the GEMMs of TOKENS tokens at the dense peak of the weights'
 * precision (fp8 peak for fp8/int8 weights, else bf16), per GPU of TP. */
double celog_floor_ms(const model_spec *m, const gpu_spec *g, double weight_bytes, int tp, double tokens);

#endif

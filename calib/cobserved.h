/* cobserved.h -- observed benchmark runs: what a load test measured against a
 * real server, read from the files the usual tools write, kept in the
 * calibration store, and summarised with the statistics latsim's own reports use.
 *
 * A run is either a list of requests (each with its arrival, token counts and
 * measured timings) or, for `sweep`, a list of load levels (aggregates per
 * concurrency or rate).  Readers (cobsread.c), one per format, detected from the
 * content when no format is given:
 *   generic     JSON lines or CSV, one request per row: arrival_s, input_tokens,
 *               output_tokens, ttft_ms, e2e_ms [, itl_ms, queue_ms, class]
 *   vllm        the result JSON of `vllm bench serve --save-result --save-detailed`
 *   vllm-stats  vLLM's per-request engine stats (RequestStateStats) as JSON lines
 *   aiperf      AIPerf's profile_export.jsonl
 *   guidellm    GuideLLM's benchmarks.json report (one benchmark)
 *   sweep       CSV of load-sweep aggregates, one row per level
 * docs/observed.md lists every field and unit.  Bad input is one line in ERR
 * naming the file, the line (or row, or list index) and the field.
 * The store's tables are in cobsdb.c, the replay in cobsreplay.h.
 */
#ifndef LATSIM_COBSERVED_H
#define LATSIM_COBSERVED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    COBS_GENERIC,
    COBS_VLLM,
    COBS_VLLM_STATS,
    COBS_AIPERF,
    COBS_GUIDELLM,
    COBS_SWEEP,
    COBS_NFORMATS
} cobs_format;

/* The most requests (or levels) one run may hold: far beyond any load test's
 * file, small enough that a typo cannot ask for gigabytes. */
#define COBS_MAX_REQUESTS 10000000

/* One observed request. */
typedef struct cobs_req {
    double arrival_s;         /* arrival, s after the run's first arrival (>= 0) */
    int32_t input_tokens;     /* prompt tokens (>= 1) */
    int32_t output_tokens;    /* output tokens (>= 1) */
    double ttft_ms;           /* arrival to first output token, ms (>= 0) */
    double e2e_ms;            /* arrival to last output token, ms (>= ttft_ms) */
    double queue_ms;          /* arrival to first scheduled, ms; NAN when not observed */
    double *itl_ms;           /* gaps between successive output chunks, ms (owned); NULL when not observed */
    size_t nitl;              /* their number */
    char cls[32];             /* class label, "" for none */
    long line;                /* line (JSON lines, CSV) or list index + 1 (one JSON document) it came from */
} cobs_req;

/* One level of a load sweep (format sweep): means unless named otherwise. */
typedef struct cobs_level {
    int closed;               /* 1: concurrency (closed loop: `load` users), 0: rate (open loop, requests/s) */
    double load;              /* users (a whole number >= 1) or requests/s (> 0) */
    int32_t input_tokens;     /* prompt tokens of every request (>= 1) */
    int32_t output_tokens;    /* output tokens of every request (>= 1) */
    double ttft_ms;           /* mean TTFT, ms; NAN when not given */
    double itl_ms;            /* mean inter-token latency, ms; NAN when not given */
    double tpot_ms;           /* mean time per output token after the first, ms; NAN when not given */
    double e2e_ms;            /* mean end-to-end latency, ms; NAN when not given */
    double ttft_p99_ms;       /* P99 of TTFT, ms; NAN when not given */
    double output_tps;        /* output tokens per second of the whole level; NAN when not given */
    long line;                /* CSV line */
} cobs_level;

/* One observed run as read from a file (or loaded from the store). */
typedef struct cobs_run {
    cobs_format format;       /* what it was read as */
    char file[1024];          /* the file it came from */
    char tool[128];           /* what wrote it, as far as the file says ("vllm bench serve", "aiperf"), "" unknown */
    char note[768];           /* what the reader did that a user must know (arrivals re-drawn, requests
                                 skipped), "" for nothing */
    cobs_req *req;            /* requests in order of arrival (owned); NULL for a sweep */
    size_t nreq;
    cobs_level *lvl;          /* sweep levels in file order (owned); NULL otherwise */
    size_t nlvl;
} cobs_run;

/* The name of F ("generic", "vllm", ...). */
const char *cobs_format_name(cobs_format f);

/* F for NAME.  Returns 0, or -1 when NAME is not a format. */
int cobs_format_parse(const char *name, cobs_format *f);

/* The valid format names, comma-separated, for messages. */
const char *cobs_format_list(void);

/* Reader options. */
typedef struct cobs_read_opts {
    const char *format;       /* format name, NULL: detect it from the content */
    int benchmark;            /* guidellm: which benchmark of the report (0-based); -1: the only one */
    uint64_t seed;            /* vllm without start times: seed of the re-drawn arrivals */
} cobs_read_opts;

/* Reads PATH into RUN (which it initialises).  Returns 0; 2 for bad input (ERR:
 * one line "PATH:LINE: field: what is wrong", or "PATH: ..." when no line
 * applies); 1 when out of memory.  RUN holds nothing on failure.  Requests
 * are sorted by arrival (stably: ties keep file order) and shifted so that the
 * first arrives at 0. */
int cobs_read(const char *path, const cobs_read_opts *o, cobs_run *run, char *err, size_t errlen);

/* Frees what RUN owns and empties it. */
void cobs_free(cobs_run *run);

/* The observed metrics of a request run. */
typedef enum { COBS_TTFT, COBS_TPOT, COBS_ITL, COBS_E2E, COBS_QUEUE, COBS_NMETRICS } cobs_metric;

/* "ttft", "tpot", "itl", "e2e", "queue". */
const char *cobs_metric_name(cobs_metric m);

/* Mean and percentiles of one metric, ms. */
typedef struct cobs_stats {
    size_t n;                 /* values (0: not observed; the rest are then NAN) */
    double mean, p50, p90, p99;
} cobs_stats;

/* The observed values of metric M of RUN's requests, sorted ascending, in
 * *VALUES (malloc'd; NULL when none), their number in *N: TTFT and E2E of every
 * request, TPOT = (e2e - ttft) / (output - 1) of those with more than one
 * output token (latsim's and vLLM's definition), every ITL gap, queue where
 * observed.  Returns 0, or -1 when out of memory. */
int cobs_values(const cobs_run *run, cobs_metric m, double **values, size_t *n);

/* The Q-quantile of the N sorted VALUES by latsim's rule (sim/engine/stats.c):
 * the value of 1-based rank ceil(Q N), clamped to [1, N].  NAN when N is 0. */
double cobs_quantile(const double *sorted, size_t n, double q);

/* Mean (gsl_stats_mean), P50, P90, P99 of the N sorted VALUES into S. */
void cobs_summarize(const double *sorted, size_t n, cobs_stats *s);

/* Observed throughput of RUN's requests: requests and output tokens per second
 * over the window from the first arrival to the last request's end (the
 * window latsim measures a finite replay over).  NAN for an empty run. */
void cobs_throughput(const cobs_run *run, double *rps, double *output_tps);

#endif

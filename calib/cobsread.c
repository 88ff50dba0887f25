/* cobsread.c -- the readers of observed runs (cobserved.h), and their statistics.
 *
 * JSON is parsed with jansson, CSV with libcsv: the file is read a line at a
 * time (getline) and each line handed to csv_parse(), so that every row is
 * named by the line it starts on (as sim/workload/trace.c does).  Each reader
 * fills cobs_req (or cobs_level) records and hands every one to check_req (or
 * check_level), which refuses what no real run can have: a missing field, a
 * time that is negative, not finite or beyond COBS_MAX_MS, an E2E below the
 * TTFT, a token count below 1.  The first problem ends the read: one line in
 * ERR, nothing kept.
 *
 * Upstream shapes followed (docs/observed.md has every field):
 *   vllm       vllm-project/vllm, vllm/benchmarks/serve.py (main, 2026; vLLM 0.19):
 *              per-request lists input_lens, output_lens, ttfts (s), itls (s lists),
 *              latencies (s), start_times (s, perf_counter), errors; request_rate
 *              (a number or "inf"), burstiness, max_concurrency.  Older results lack
 *              latencies and start_times: E2E is then ttft + sum(itls) and the
 *              arrivals are re-drawn (vllm_redraw).
 *   vllm-stats vLLM v1 RequestStateStats (vllm/v1/metrics/stats.py): queued_ts,
 *              scheduled_ts, first_token_ts, last_token_ts (engine-core monotonic s),
 *              one request per line with input_toks / output_toks, as LLMServingSim
 *              logs them (the real run in tests/data/observed/).
 *   aiperf     ai-dynamo/aiperf, MetricRecordInfo (src/aiperf/common/models/
 *              record_models.py): metadata.request_start_ns, benchmark_phase, error;
 *              metrics.{input_sequence_length, output_sequence_length,
 *              time_to_first_token, request_latency, inter_chunk_latency}.{value, unit}.
 *   guidellm   vllm-project/guidellm, GenerativeBenchmarksReport: benchmarks[K].requests
 *              .successful[] of GenerativeRequestStats (schemas/request_stats.py):
 *              prompt_tokens, output_tokens, request_start_time (s), time_to_first_token_ms,
 *              request_latency (s); request_totals.successful says whether they were sampled.
 */
#include "cobserved.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <jansson.h>

#include "engine/errmsg.h"
#include "engine/rowtab.h"
#include "latsim/infile.h"

#define COBS_MAX_MS 1e9          /* longest time accepted, ms (11.6 days): beyond it, a unit error */
#define COBS_MAX_TOKENS 100000000 /* most tokens per request accepted */
#define MAX_LINE (1 << 22)       /* longest line accepted, bytes (an itl_ms list of 100 000 gaps fits) */

const char *cobs_metric_name(cobs_metric m)
{
    static const char *const names[COBS_NMETRICS] = { "ttft", "tpot", "itl", "e2e", "queue" };
    return m >= 0 && m < COBS_NMETRICS ? names[m] : "?";
}

/* ---- the reader's state -------------------------------------------------- */

typedef struct rd {
    const char *path;         /* the file, for messages */
    const cobs_read_opts *o;  /* the options */
    cobs_run *run;            /* what is being filled */
    size_t cap;               /* capacity of run->req or run->lvl */
    char *err;                /* the caller's message buffer */
    size_t errlen;
    int status;               /* 0 so far; 2 bad input; 1 out of memory */
    size_t skipped;           /* aiperf: errored or cancelled records skipped */
} rd;

/* Sets the message "PATH:LINE: ..." (LINE > 0) or "PATH: ..." and status 2.  Returns -1. */
__attribute__((format(printf, 3, 4)))
static int bad(rd *r, long line, const char *fmt, ...)
{
    char msg[1024], p[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    errmsg_field(r->path, p, sizeof p);
    if (line > 0) errmsg_set(r->err, r->errlen, "%s:%ld: %s", p, line, msg);
    else errmsg_set(r->err, r->errlen, "%s: %s", p, msg);
    r->status = 2;
    return -1;
}

static int oom(rd *r)
{
    errmsg_set(r->err, r->errlen, "out of memory reading %s", r->path);
    r->status = 1;
    return -1;
}

/* Appends a sentence to the run's note ("; " between sentences). */
__attribute__((format(printf, 2, 3)))
static void add_note(cobs_run *run, const char *fmt, ...)
{
    size_t k = strlen(run->note);
    if (k && k + 2 < sizeof run->note) k += (size_t) snprintf(run->note + k, sizeof run->note - k, "; ");
    if (k + 1 >= sizeof run->note) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(run->note + k, sizeof run->note - k, fmt, ap);
    va_end(ap);
}

/* A new, zeroed request at the end of run->req (queue NAN).  NULL when full or
 * out of memory (status set). */
static cobs_req *new_req(rd *r, long line)
{
    cobs_run *run = r->run;
    if (run->nreq >= COBS_MAX_REQUESTS) {
        bad(r, line, "more than %d requests", COBS_MAX_REQUESTS);
        return NULL;
    }
    if (run->nreq == r->cap) {
        size_t c = r->cap ? 2 * r->cap : 256;
        cobs_req *p = realloc(run->req, c * sizeof *p);
        if (!p) { oom(r); return NULL; }
        run->req = p;
        r->cap = c;
    }
    cobs_req *q = &run->req[run->nreq++];
    memset(q, 0, sizeof *q);
    q->queue_ms = NAN;
    q->line = line;
    return q;
}

/* What a reader calls each field of a request, for messages ("ttfts" and an
 * index for one JSON document; a column or key name otherwise). */
typedef struct names {
    const char *arrival, *input, *output, *ttft, *e2e, *queue, *itl;
} names;

/* "NAME" or "NAME[I]" (I >= 0) into BUF. */
static const char *fld(char *buf, size_t n, const char *name, long index)
{
    if (index >= 0) snprintf(buf, n, "%s[%ld]", name, index);
    else snprintf(buf, n, "%s", name);
    return buf;
}

/* A time of field NAME, ms: finite, >= 0, at most COBS_MAX_MS.  Returns 0 or -1 (message set). */
static int check_ms(rd *r, long line, const char *name, long index, double v, const char *unit)
{
    char f[160];
    if (!isfinite(v)) return bad(r, line, "%s: not a finite number", fld(f, sizeof f, name, index));
    if (v < 0) return bad(r, line, "%s: negative (%.6g %s)", fld(f, sizeof f, name, index), v, unit);
    if (v > COBS_MAX_MS)
        return bad(r, line, "%s: %.6g %s is beyond %.0f ms (11.6 days): a unit error?", fld(f, sizeof f, name, index),
                   v, unit, COBS_MAX_MS);
    return 0;
}

/* Checks request Q as read (times in ms, arrival in s, any origin).  N names
 * its fields; INDEX >= 0 for a list entry of one JSON document (messages then
 * name no line but NAME[INDEX]), else messages name Q's line.
 * Returns 0 or -1 (message set). */
static int check_req(rd *r, const cobs_req *q, const names *N, long index)
{
    char f[160];
    long line = index >= 0 ? 0 : q->line;
    if (index == -2) { line = 0; index = -1; }   /* the names say where (guidellm) */
    if (!isfinite(q->arrival_s))
        return bad(r, line, "%s: not a finite number", fld(f, sizeof f, N->arrival, index));
    if (q->input_tokens < 1)
        return bad(r, line, "%s: %d: a request has at least 1 prompt token", fld(f, sizeof f, N->input, index),
                   (int) q->input_tokens);
    if (q->output_tokens < 1)
        return bad(r, line, "%s: %d: a request has at least 1 output token", fld(f, sizeof f, N->output, index),
                   (int) q->output_tokens);
    if (check_ms(r, line, N->ttft, index, q->ttft_ms, "ms") || check_ms(r, line, N->e2e, index, q->e2e_ms, "ms"))
        return -1;
    if (q->e2e_ms < q->ttft_ms)
        return bad(r, line, "%s: %.6g ms is below %s %.6g ms (the last token before the first)",
                   fld(f, sizeof f, N->e2e, index), q->e2e_ms, N->ttft, q->ttft_ms);
    if (!isnan(q->queue_ms) && check_ms(r, line, N->queue, index, q->queue_ms, "ms")) return -1;
    for (size_t k = 0; k < q->nitl; k++) {
        char g[200];
        snprintf(g, sizeof g, "%s[%zu]", fld(f, sizeof f, N->itl, index), k);
        if (check_ms(r, line, g, -1, q->itl_ms[k], "ms")) return -1;
    }
    return 0;
}

/* ---- JSON values ----------------------------------------------------------- */

/* 1 when V is a JSON number, 0 otherwise. */
static int is_num(const json_t *v) { return json_is_integer(v) || json_is_real(v); }

/* A whole number >= 0 (an integer, or a real without a fraction) from V into
 * *OUT.  Returns 0, or -1 with the message for field NAME (FIELD printed). */
static int j_tokens(rd *r, long line, const json_t *v, const char *name, int32_t *out)
{
    double x;
    if (!v || json_is_null(v)) return bad(r, line, "%s: missing", name);
    if (!is_num(v)) return bad(r, line, "%s: not a number", name);
    x = json_number_value(v);
    if (!isfinite(x) || x != floor(x)) return bad(r, line, "%s: %.6g is not a whole number", name, x);
    if (x < 0 || x > COBS_MAX_TOKENS) return bad(r, line, "%s: %.6g is outside 0..%d", name, x, COBS_MAX_TOKENS);
    *out = (int32_t) x;
    return 0;
}

/* A number from V into *OUT (times: checked later).  Returns 0, or -1 (message for NAME). */
static int j_num(rd *r, long line, const json_t *v, const char *name, double *out)
{
    if (!v || json_is_null(v)) return bad(r, line, "%s: missing", name);
    if (!is_num(v)) return bad(r, line, "%s: not a number", name);
    *out = json_number_value(v);
    return 0;
}

/* A list of gaps (numbers, times SCALE to ms) from array V into Q.  Returns 0 or -1. */
static int j_gaps(rd *r, long line, const json_t *v, const char *name, double scale, cobs_req *q)
{
    if (!json_is_array(v)) return bad(r, line, "%s: not a list of numbers", name);
    size_t n = json_array_size(v);
    if (n == 0) return 0;
    q->itl_ms = malloc(n * sizeof *q->itl_ms);
    if (!q->itl_ms) return oom(r);
    for (size_t k = 0; k < n; k++) {
        const json_t *g = json_array_get(v, k);
        if (!is_num(g)) return bad(r, line, "%s[%zu]: not a number", name, k);
        q->itl_ms[k] = json_number_value(g) * scale;
    }
    q->nitl = n;
    return 0;
}

/* The class label of field V (a string, or null / absent for none) into Q.  Returns 0 or -1. */
static int j_class(rd *r, long line, const json_t *v, const char *name, cobs_req *q)
{
    if (!v || json_is_null(v)) return 0;
    if (!json_is_string(v)) return bad(r, line, "%s: not a string", name);
    const char *s = json_string_value(v);
    if (strlen(s) >= sizeof q->cls) return bad(r, line, "%s: longer than %zu bytes", name, sizeof q->cls - 1);
    snprintf(q->cls, sizeof q->cls, "%s", s);
    return 0;
}

/* ---- JSON lines ------------------------------------------------------------ */

typedef int (*jl_row_fn)(rd *r, json_t *o, long line);

/* Calls ROW for every non-empty line of F (an object each).  Returns 0 or -1. */
static int read_jsonl(rd *r, FILE *f, jl_row_fn row)
{
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    long line = 0;
    int rc = 0;
    errno = 0;
    while (rc == 0 && (len = getline(&buf, &cap, f)) != -1) {
        line++;
        if (len > MAX_LINE) { rc = bad(r, line, "line longer than %d bytes", MAX_LINE); break; }
        if ((size_t) len != strlen(buf)) { rc = bad(r, line, "a NUL byte: not text"); break; }
        if (strspn(buf, " \t\r\n") == (size_t) len) continue;
        json_error_t je;
        json_t *o = json_loads(buf, 0, &je);
        if (!o) { rc = bad(r, line, "not JSON: %s", je.text); break; }
        if (!json_is_object(o)) rc = bad(r, line, "not a JSON object");
        else rc = row(r, o, line);
        json_decref(o);
    }
    if (rc == 0 && ferror(f)) rc = bad(r, 0, "cannot read: %s", strerror(errno ? errno : EIO));
    free(buf);
    return rc;
}

static const names GENERIC_NAMES = { "arrival_s", "input_tokens", "output_tokens", "ttft_ms", "e2e_ms", "queue_ms",
                                     "itl_ms" };

static int generic_row(rd *r, json_t *o, long line)
{
    cobs_req *q = new_req(r, line);
    if (!q) return -1;
    const json_t *v;
    if (j_num(r, line, json_object_get(o, "arrival_s"), "arrival_s", &q->arrival_s) ||
        j_tokens(r, line, json_object_get(o, "input_tokens"), "input_tokens", &q->input_tokens) ||
        j_tokens(r, line, json_object_get(o, "output_tokens"), "output_tokens", &q->output_tokens) ||
        j_num(r, line, json_object_get(o, "ttft_ms"), "ttft_ms", &q->ttft_ms) ||
        j_num(r, line, json_object_get(o, "e2e_ms"), "e2e_ms", &q->e2e_ms))
        return -1;
    if ((v = json_object_get(o, "queue_ms")) && !json_is_null(v) && j_num(r, line, v, "queue_ms", &q->queue_ms))
        return -1;
    if ((v = json_object_get(o, "itl_ms")) && !json_is_null(v) && j_gaps(r, line, v, "itl_ms", 1, q)) return -1;
    if (j_class(r, line, json_object_get(o, "class"), "class", q)) return -1;
    if (q->arrival_s < 0) return bad(r, line, "arrival_s: negative (%.6g s)", q->arrival_s);
    return check_req(r, q, &GENERIC_NAMES, -1);
}

static const names STATS_NAMES = { "queued_ts", "input_toks", "output_toks", "first_token_ts - queued_ts",
                                   "last_token_ts - queued_ts", "scheduled_ts - queued_ts", "" };

/* vLLM's RequestStateStats: engine-core monotonic seconds.  The arrival is
 * queued_ts (the engine's clock, on which the other three are taken), so that
 * TTFT and E2E start where the engine saw the request (tests/data/observed/
 * make-trace.py does the same). */
static int stats_row(rd *r, json_t *o, long line)
{
    cobs_req *q = new_req(r, line);
    if (!q) return -1;
    double queued, first, last, sched = NAN;
    const json_t *v;
    if (j_tokens(r, line, json_object_get(o, "input_toks"), "input_toks", &q->input_tokens) ||
        j_tokens(r, line, json_object_get(o, "output_toks"), "output_toks", &q->output_tokens) ||
        j_num(r, line, json_object_get(o, "queued_ts"), "queued_ts", &queued) ||
        j_num(r, line, json_object_get(o, "first_token_ts"), "first_token_ts", &first) ||
        j_num(r, line, json_object_get(o, "last_token_ts"), "last_token_ts", &last))
        return -1;
    if ((v = json_object_get(o, "scheduled_ts")) && !json_is_null(v) && j_num(r, line, v, "scheduled_ts", &sched))
        return -1;
    if (!isfinite(queued)) return bad(r, line, "queued_ts: not a finite number");
    q->arrival_s = queued;
    q->ttft_ms = 1000 * (first - queued);
    q->e2e_ms = 1000 * (last - queued);
    if (!isnan(sched)) q->queue_ms = 1000 * (sched - queued);
    return check_req(r, q, &STATS_NAMES, -1);
}

/* ms per one of AIPerf's time unit U (NULL: ms), NAN for anything else. */
static double unit_ms(const char *u)
{
    if (!u || !strcmp(u, "ms")) return 1;
    if (!strcmp(u, "ns")) return 1e-6;
    if (!strcmp(u, "us")) return 1e-3;
    if (!strcmp(u, "s") || !strcmp(u, "sec")) return 1e3;
    return NAN;
}

/* AIPerf's MetricValue {"value": X, "unit": U} of metrics.KEY: *VAL its value
 * and, when SCALE is given, *SCALE the ms per unit.  Returns 0 (found), 1
 * (absent), -1 (bad, message set). */
static int aiperf_metric(rd *r, long line, const json_t *metrics, const char *key, double *scale, const json_t **val)
{
    const json_t *m = json_object_get(metrics, key);
    char f[128];
    snprintf(f, sizeof f, "metrics.%s", key);
    if (!m || json_is_null(m)) return 1;
    if (!json_is_object(m)) return bad(r, line, "%s: not an object {\"value\", \"unit\"}", f);
    *val = json_object_get(m, "value");
    const json_t *u = json_object_get(m, "unit");
    if (scale) {
        *scale = unit_ms(json_is_string(u) ? json_string_value(u) : NULL);
        if (isnan(*scale)) return bad(r, line, "%s.unit: '%.20s' is not a time unit (ns, us, ms, s)", f, json_string_value(u));
    }
    return 0;
}

static const names AIPERF_NAMES = { "metadata.request_start_ns", "metrics.input_sequence_length",
                                    "metrics.output_sequence_length", "metrics.time_to_first_token",
                                    "metrics.request_latency", "", "metrics.inter_chunk_latency" };

/* Records of the profiling phase that succeeded; warm-up, errored and
 * cancelled ones are skipped (counted in the run's note). */
static int aiperf_row(rd *r, json_t *o, long line)
{
    const json_t *meta = json_object_get(o, "metadata"), *metrics = json_object_get(o, "metrics");
    if (!json_is_object(meta)) return bad(r, line, "metadata: missing (not an AIPerf record)");
    const json_t *phase = json_object_get(meta, "benchmark_phase");
    if (json_is_string(phase) && strcmp(json_string_value(phase), "profiling")) return 0;
    const json_t *e = json_object_get(o, "error");
    if ((e && !json_is_null(e)) || json_is_true(json_object_get(meta, "was_cancelled"))) {
        r->skipped++;
        return 0;
    }
    if (!json_is_object(metrics)) return bad(r, line, "metrics: missing");
    cobs_req *q = new_req(r, line);
    if (!q) return -1;
    const json_t *v = NULL;
    double start, sc = 1;
    if (j_num(r, line, json_object_get(meta, "request_start_ns"), "metadata.request_start_ns", &start)) return -1;
    q->arrival_s = start * 1e-9;
    int s = aiperf_metric(r, line, metrics, "input_sequence_length", NULL, &v);
    if (s < 0 || j_tokens(r, line, s ? NULL : v, "metrics.input_sequence_length.value", &q->input_tokens)) return -1;
    s = aiperf_metric(r, line, metrics, "output_sequence_length", NULL, &v);
    if (s == 1) s = aiperf_metric(r, line, metrics, "output_token_count", NULL, &v);
    if (s < 0 || j_tokens(r, line, s ? NULL : v, "metrics.output_sequence_length.value", &q->output_tokens)) return -1;
    s = aiperf_metric(r, line, metrics, "time_to_first_token", &sc, &v);
    if (s < 0 || j_num(r, line, s ? NULL : v, "metrics.time_to_first_token.value", &q->ttft_ms)) return -1;
    q->ttft_ms *= sc;
    s = aiperf_metric(r, line, metrics, "request_latency", &sc, &v);
    if (s < 0 || j_num(r, line, s ? NULL : v, "metrics.request_latency.value", &q->e2e_ms)) return -1;
    q->e2e_ms *= sc;
    s = aiperf_metric(r, line, metrics, "inter_chunk_latency", &sc, &v);
    if (s < 0 || (s == 0 && v && !json_is_null(v) && j_gaps(r, line, v, "metrics.inter_chunk_latency.value", sc, q)))
        return -1;
    return check_req(r, q, &AIPERF_NAMES, -1);
}

/* ---- CSV ------------------------------------------------------------------- */

typedef struct csv_rows {
    rd *r;
    char **f;                 /* the current row's fields (NUL-terminated copies) */
    size_t n, cap;
    long line;                /* line being parsed */
    long row_line;            /* line the current row began on */
    int (*row)(struct csv_rows *c);   /* called for every row (the header first) */
    int failed;
    /* what the format's row function keeps */
    int col[16];              /* header column index of each wanted column, -1 absent */
    size_t ncols;             /* header width */
    int header_done;
    void *arg;
} csv_rows;

static void on_field(void *s, size_t len, void *data)
{
    csv_rows *c = data;
    if (c->failed) return;
    if (c->n == c->cap) {
        size_t k = c->cap ? 2 * c->cap : 16;
        char **p = realloc(c->f, k * sizeof *p);
        if (!p) { c->failed = 1; oom(c->r); return; }
        c->f = p;
        c->cap = k;
    }
    char *v = malloc(len + 1);
    if (!v) { c->failed = 1; oom(c->r); return; }
    memcpy(v, s, len);
    v[len] = '\0';
    c->f[c->n++] = v;
}

static void on_row(int ch, void *data)
{
    (void) ch;
    csv_rows *c = data;
    if (!c->failed && c->row(c) != 0) c->failed = 1;
    for (size_t i = 0; i < c->n; i++) free(c->f[i]);
    c->n = 0;
}

/* Feeds F to libcsv line by line, calling C->row per row.  Returns 0 or -1. */
static int read_csv(csv_rows *c, FILE *f)
{
    struct csv_parser p;
    rd *r = c->r;
    if (csv_init(&p, CSV_APPEND_NULL) != 0) return oom(r);
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    errno = 0;
    while (!c->failed && (len = getline(&buf, &cap, f)) != -1) {
        c->line++;
        if (len > MAX_LINE) { bad(r, c->line, "line longer than %d bytes", MAX_LINE); c->failed = 1; break; }
        if ((size_t) len != strlen(buf)) { bad(r, c->line, "a NUL byte: not text"); c->failed = 1; break; }
        if (p.pstate == 0) c->row_line = c->line;   /* libcsv's ROW_NOT_BEGUN: a row starts here */
        if (csv_parse(&p, buf, (size_t) len, on_field, on_row, c) != (size_t) len && !c->failed) {
            bad(r, c->line, "%s", csv_strerror(csv_error(&p)));
            c->failed = 1;
        }
    }
    if (!c->failed && ferror(f)) { bad(r, 0, "cannot read: %s", strerror(errno ? errno : EIO)); c->failed = 1; }
    if (!c->failed && csv_fini(&p, on_field, on_row, c) != 0) { bad(r, c->line, "%s", csv_strerror(csv_error(&p))); c->failed = 1; }
    csv_free(&p);
    for (size_t i = 0; i < c->n; i++) free(c->f[i]);
    free(c->f);
    free(buf);
    return c->failed ? -1 : 0;
}

/* Resolves the header row: COLS[i] (NULL-terminated, the first NREQ required)
 * to column indices in C->col.  Returns 0 or -1. */
static int csv_header(csv_rows *c, const char *const *cols, int nreq)
{
    for (int i = 0; cols[i]; i++) {
        c->col[i] = -1;
        for (size_t k = 0; k < c->n; k++)
            if (!strcmp(c->f[k], cols[i])) {
                if (c->col[i] >= 0) return bad(c->r, c->row_line, "column %s appears twice in the header", cols[i]);
                c->col[i] = (int) k;
            }
        if (i < nreq && c->col[i] < 0) return bad(c->r, c->row_line, "no column %s in the header", cols[i]);
    }
    c->ncols = c->n;
    c->header_done = 1;
    return 0;
}

/* Field of column I of the current row ("" when the column is absent). */
static const char *cf(const csv_rows *c, int i)
{
    return c->col[i] >= 0 && (size_t) c->col[i] < c->n ? c->f[c->col[i]] : "";
}

/* A number from CSV field S of column NAME.  Returns 0, 1 (empty: none), -1 (bad). */
static int csv_num(csv_rows *c, const char *s, const char *name, double *out)
{
    if (!*s) return 1;
    char *end, shown[64];
    errno = 0;
    double v = strtod(s, &end);
    if (*end || end == s || strpbrk(s, "xX"))   /* decimal only: strtod would take "0x10" (16) */
        return bad(c->r, c->row_line, "%s: '%s' is not a number", name, errmsg_field(s, shown, sizeof shown));
    if (!isfinite(v)) return bad(c->r, c->row_line, "%s: not a finite number ('%s')", name, errmsg_field(s, shown, sizeof shown));
    *out = v;
    return 0;
}

/* A required number (missing: an error).  Returns 0 or -1. */
static int csv_need(csv_rows *c, const char *s, const char *name, double *out)
{
    int k = csv_num(c, s, name, out);
    return k == 1 ? bad(c->r, c->row_line, "%s: missing", name) : k;
}

/* A required whole token count >= 0 from S.  Returns 0 or -1. */
static int csv_tokens(csv_rows *c, const char *s, const char *name, int32_t *out)
{
    double v;
    if (csv_need(c, s, name, &v)) return -1;
    if (v != floor(v)) return bad(c->r, c->row_line, "%s: %.6g is not a whole number", name, v);
    if (v < 0 || v > COBS_MAX_TOKENS) return bad(c->r, c->row_line, "%s: %.6g is outside 0..%d", name, v, COBS_MAX_TOKENS);
    *out = (int32_t) v;
    return 0;
}

/* Every row has the header's width.  Returns 0 or -1. */
static int csv_width(csv_rows *c)
{
    if (c->n != c->ncols)
        return bad(c->r, c->row_line, "%zu field%s, but the header has %zu columns", c->n, c->n == 1 ? "" : "s", c->ncols);
    return 0;
}

enum { G_ARR, G_IN, G_OUT, G_TTFT, G_E2E, G_ITL, G_QUEUE, G_CLASS };

static int generic_csv_row(csv_rows *c)
{
    static const char *const cols[] = { "arrival_s", "input_tokens", "output_tokens", "ttft_ms", "e2e_ms",
                                        "itl_ms", "queue_ms", "class", NULL };
    if (!c->header_done) return csv_header(c, cols, 5);
    if (csv_width(c)) return -1;
    rd *r = c->r;
    cobs_req *q = new_req(r, c->row_line);
    if (!q) return -1;
    if (csv_need(c, cf(c, G_ARR), "arrival_s", &q->arrival_s) || csv_tokens(c, cf(c, G_IN), "input_tokens", &q->input_tokens) ||
        csv_tokens(c, cf(c, G_OUT), "output_tokens", &q->output_tokens) || csv_need(c, cf(c, G_TTFT), "ttft_ms", &q->ttft_ms) ||
        csv_need(c, cf(c, G_E2E), "e2e_ms", &q->e2e_ms) || csv_num(c, cf(c, G_QUEUE), "queue_ms", &q->queue_ms) < 0)
        return -1;
    const char *itl = cf(c, G_ITL);
    if (*itl) {   /* a JSON array in the field, e.g. "[12.5, 11.9]" */
        json_error_t je;
        json_t *a = json_loads(itl, 0, &je);
        if (!a) return bad(r, c->row_line, "itl_ms: not a JSON list of numbers: %s", je.text);
        int s = j_gaps(r, c->row_line, a, "itl_ms", 1, q);
        json_decref(a);
        if (s) return -1;
    }
    const char *cls = cf(c, G_CLASS);
    if (strlen(cls) >= sizeof q->cls) return bad(r, c->row_line, "class: longer than %zu bytes", sizeof q->cls - 1);
    snprintf(q->cls, sizeof q->cls, "%s", cls);
    if (q->arrival_s < 0) return bad(r, c->row_line, "arrival_s: negative (%.6g s)", q->arrival_s);
    return check_req(r, q, &GENERIC_NAMES, -1);
}

enum { S_CONC, S_RATE, S_IN, S_OUT, S_TTFT, S_ITL, S_TPOT, S_E2E, S_TTFT99, S_TPS, S_NCOLS };

static int sweep_csv_row(csv_rows *c)
{
    static const char *const cols[] = { "concurrency", "rate", "input_tokens", "output_tokens", "ttft_ms", "itl_ms",
                                        "tpot_ms", "e2e_ms", "ttft_p99_ms", "output_tokens_per_s", NULL };
    rd *r = c->r;
    if (!c->header_done) {
        if (csv_header(c, cols, 0)) return -1;
        if ((c->col[S_CONC] >= 0) == (c->col[S_RATE] >= 0))
            return bad(r, c->row_line, "the header needs one column concurrency (closed loop) or rate (open loop)%s",
                       c->col[S_CONC] >= 0 ? ", not both" : "");
        if (c->col[S_IN] < 0) return bad(r, c->row_line, "no column input_tokens in the header");
        if (c->col[S_OUT] < 0) return bad(r, c->row_line, "no column output_tokens in the header");
        int any = 0;
        for (int i = S_TTFT; i < S_NCOLS; i++) any |= c->col[i] >= 0;
        if (!any)
            return bad(r, c->row_line, "no measured column in the header (any of ttft_ms, itl_ms, tpot_ms, e2e_ms, "
                       "ttft_p99_ms, output_tokens_per_s)");
        return 0;
    }
    if (csv_width(c)) return -1;
    cobs_run *run = r->run;
    if (run->nlvl >= 100000) return bad(r, c->row_line, "more than 100000 levels");
    if (run->nlvl == r->cap) {
        size_t k = r->cap ? 2 * r->cap : 16;
        cobs_level *p = realloc(run->lvl, k * sizeof *p);
        if (!p) return oom(r);
        run->lvl = p;
        r->cap = k;
    }
    cobs_level *L = &run->lvl[run->nlvl++];
    L->line = c->row_line;
    L->closed = c->col[S_CONC] >= 0;
    const char *lname = L->closed ? "concurrency" : "rate";
    if (csv_need(c, cf(c, L->closed ? S_CONC : S_RATE), lname, &L->load)) return -1;
    if (L->closed && (L->load < 1 || L->load != floor(L->load) || L->load > 1e6))
        return bad(r, c->row_line, "concurrency: %.6g is not a whole number of users in 1..1000000", L->load);
    if (!L->closed && !(L->load > 0 && L->load <= 1e7))
        return bad(r, c->row_line, "rate: %.6g requests/s is outside (0, 1e7]", L->load);
    if (csv_tokens(c, cf(c, S_IN), "input_tokens", &L->input_tokens) ||
        csv_tokens(c, cf(c, S_OUT), "output_tokens", &L->output_tokens))
        return -1;
    if (L->input_tokens < 1) return bad(r, c->row_line, "input_tokens: 0: a request has at least 1 prompt token");
    if (L->output_tokens < 1) return bad(r, c->row_line, "output_tokens: 0: a request has at least 1 output token");
    double *dst[] = { &L->ttft_ms, &L->itl_ms, &L->tpot_ms, &L->e2e_ms, &L->ttft_p99_ms, &L->output_tps };
    int given = 0;
    for (int i = S_TTFT; i < S_NCOLS; i++) {
        double *d = dst[i - S_TTFT];
        *d = NAN;
        int k = csv_num(c, cf(c, i), cols[i], d);
        if (k < 0) return -1;
        if (k == 1) continue;
        given++;
        if (i == S_TPS) {
            if (*d < 0) return bad(r, c->row_line, "output_tokens_per_s: negative (%.6g)", *d);
        } else if (check_ms(r, c->row_line, cols[i], -1, *d, "ms")) {
            return -1;
        }
    }
    if (!given) return bad(r, c->row_line, "no measured value in this level (every measured column is empty)");
    if (!isnan(L->e2e_ms) && !isnan(L->ttft_ms) && L->e2e_ms < L->ttft_ms)
        return bad(r, c->row_line, "e2e_ms: %.6g ms is below ttft_ms %.6g ms", L->e2e_ms, L->ttft_ms);
    return 0;
}

/* ---- one JSON document: vllm, guidellm --------------------------------------- */

/* The array field KEY of O, of N entries (N 0: any, set into *N).  Returns it,
 * or NULL with the message set when REQUIRED (else NULL silently when absent). */
static const json_t *j_list(rd *r, const json_t *o, const char *key, size_t *n, int required)
{
    const json_t *a = json_object_get(o, key);
    if (!a || json_is_null(a)) {
        if (required)
            bad(r, 0, "%s: missing: a replay needs the per-request lists of `vllm bench serve --save-result "
                "--save-detailed`", key);
        return NULL;
    }
    if (!json_is_array(a)) { bad(r, 0, "%s: not a list", key); return NULL; }
    if (*n == 0) *n = json_array_size(a);
    else if (json_array_size(a) != *n) {
        bad(r, 0, "%s: %zu entries, but input_lens has %zu", key, json_array_size(a), *n);
        return NULL;
    }
    return a;
}

static const names VLLM_NAMES = { "start_times", "input_lens", "output_lens", "ttfts", "latencies", "", "itls" };

/* The arrivals of a vLLM result without start times, drawn as `vllm bench
 * serve` draws them (vllm/benchmarks/serve.py, get_request): gamma inter-arrival
 * times of shape BURST and mean 1/RATE (GSL's generator, not numpy's: the same
 * distribution, other draws), rescaled so that the last is at N/RATE; then each
 * request starts when one of MAXC client slots is free (the benchmark's
 * semaphore), a slot being held for the request's observed E2E. */
static int vllm_redraw(rd *r, double rate, double burst, int maxc)
{
    cobs_run *run = r->run;
    size_t n = run->nreq;
    double *t = calloc(n ? n : 1, sizeof *t);
    if (!t) return oom(r);
    if (isfinite(rate)) {
        gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
        if (!g) { free(t); return oom(r); }
        gsl_rng_set(g, r->o->seed);
        double acc = 0;
        for (size_t i = 0; i < n; i++) {
            acc += isfinite(burst) ? gsl_ran_gamma(g, burst, 1.0 / (rate * burst)) : 1.0 / rate;
            t[i] = acc;
        }
        gsl_rng_free(g);
        if (n && t[n - 1] > 0)
            for (size_t i = 0; i < n; i++) t[i] *= ((double) n / rate) / t[n - 1];
    }
    if (maxc > 0) {
        double *slot = calloc((size_t) maxc, sizeof *slot);   /* when each slot frees, s */
        if (!slot) { free(t); return oom(r); }
        for (size_t i = 0; i < n; i++) {
            int k = 0;
            for (int j = 1; j < maxc; j++)
                if (slot[j] < slot[k]) k = j;
            if (slot[k] > t[i]) t[i] = slot[k];
            slot[k] = t[i] + run->req[i].e2e_ms / 1000;
        }
        free(slot);
    }
    for (size_t i = 0; i < n; i++) run->req[i].arrival_s = t[i];
    free(t);
    return 0;
}

static int read_vllm(rd *r, const json_t *root)
{
    cobs_run *run = r->run;
    size_t n = 0;
    const json_t *in = j_list(r, root, "input_lens", &n, 1);
    if (!in) return -1;
    const json_t *out = j_list(r, root, "output_lens", &n, 1);
    const json_t *ttft = out ? j_list(r, root, "ttfts", &n, 1) : NULL;
    const json_t *itl = ttft ? j_list(r, root, "itls", &n, 1) : NULL;
    if (!itl) return -1;
    const json_t *lat = j_list(r, root, "latencies", &n, 0);
    const json_t *start = r->status ? NULL : j_list(r, root, "start_times", &n, 0);
    const json_t *errs = r->status ? NULL : j_list(r, root, "errors", &n, 0);
    if (r->status) return -1;
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = errs ? json_array_get(errs, i) : NULL;
        if (json_is_string(e) && json_string_length(e) > 0) { failed++; continue; }
        cobs_req *q = new_req(r, (long) i + 1);
        if (!q) return -1;
        char f[64];
        double v;
        if (j_tokens(r, 0, json_array_get(in, i), fld(f, sizeof f, "input_lens", (long) i), &q->input_tokens) ||
            j_tokens(r, 0, json_array_get(out, i), fld(f, sizeof f, "output_lens", (long) i), &q->output_tokens) ||
            j_num(r, 0, json_array_get(ttft, i), fld(f, sizeof f, "ttfts", (long) i), &v))
            return -1;
        q->ttft_ms = 1000 * v;
        if (j_gaps(r, 0, json_array_get(itl, i), fld(f, sizeof f, "itls", (long) i), 1000, q)) return -1;
        if (lat) {
            if (j_num(r, 0, json_array_get(lat, i), fld(f, sizeof f, "latencies", (long) i), &v)) return -1;
            q->e2e_ms = 1000 * v;
        } else {   /* the time of the last chunk: ttft + every gap after it */
            q->e2e_ms = q->ttft_ms;
            for (size_t k = 0; k < q->nitl; k++) q->e2e_ms += q->itl_ms[k];
        }
        if (start && j_num(r, 0, json_array_get(start, i), fld(f, sizeof f, "start_times", (long) i), &q->arrival_s))
            return -1;
        if (check_req(r, q, &VLLM_NAMES, (long) i)) return -1;
    }
    if (run->nreq == 0) return bad(r, 0, "no successful request (%zu failed: see errors)", failed);
    const json_t *model = json_object_get(root, "model_id"), *date = json_object_get(root, "date");
    snprintf(run->tool, sizeof run->tool, "vllm bench serve%s%.40s%s%.20s", json_is_string(model) ? ", model " : "",
             json_is_string(model) ? json_string_value(model) : "", json_is_string(date) ? ", date " : "",
             json_is_string(date) ? json_string_value(date) : "");
    if (failed) add_note(run, "%zu failed request%s skipped (errors)", failed, failed == 1 ? "" : "s");
    if (!start) {
        const json_t *rv = json_object_get(root, "request_rate"), *bv = json_object_get(root, "burstiness"),
                     *cv = json_object_get(root, "max_concurrency");
        double rate = INFINITY, burst = 1;
        int maxc = 0;
        if (is_num(rv)) rate = json_number_value(rv);
        else if (!(json_is_string(rv) && !strcmp(json_string_value(rv), "inf")))
            return bad(r, 0, "request_rate: missing (a number or \"inf\"), and there are no start_times to take the "
                       "arrivals from");
        if (!(rate > 0)) return bad(r, 0, "request_rate: %.6g is not positive", rate);
        if (bv && !json_is_null(bv)) {
            if (!is_num(bv) || !(json_number_value(bv) > 0)) return bad(r, 0, "burstiness: not a positive number");
            burst = json_number_value(bv);
        }
        if (cv && !json_is_null(cv)) {
            if (!json_is_integer(cv) || json_integer_value(cv) < 1 || json_integer_value(cv) > 1000000)
                return bad(r, 0, "max_concurrency: not a whole number in 1..1000000");
            maxc = (int) json_integer_value(cv);
        }
        if (vllm_redraw(r, rate, burst, maxc)) return -1;
        char rs[32];
        snprintf(rs, sizeof rs, isfinite(rate) ? "%g/s" : "inf", rate);
        add_note(run, "arrivals re-drawn: the file has no start_times; gamma inter-arrival times at request_rate %s, "
                 "burstiness %g (GSL mt19937, seed %llu)", rs, burst, (unsigned long long) r->o->seed);
        if (maxc) add_note(run, "then each request waits for one of max_concurrency = %d client slots, held for its observed E2E",
                           maxc);
    }
    return 0;
}

/* A number field of GuideLLM request Q: KEY, else TIMINGS.ALT (info.timings), else NAN. */
static double guide_num(const json_t *q, const char *key, const char *alt)
{
    const json_t *v = json_object_get(q, key);
    if (is_num(v)) return json_number_value(v);
    const json_t *t = json_object_get(json_object_get(q, "info"), "timings");
    v = alt ? json_object_get(t, alt) : NULL;
    return is_num(v) ? json_number_value(v) : NAN;
}

static int read_guidellm(rd *r, const json_t *root)
{
    cobs_run *run = r->run;
    const json_t *bs = json_object_get(root, "benchmarks");
    if (!json_is_array(bs) || json_array_size(bs) == 0) return bad(r, 0, "benchmarks: missing or empty");
    size_t nb = json_array_size(bs);
    int k = r->o->benchmark;
    if (k < 0) {
        if (nb > 1)
            return bad(r, 0, "benchmarks: %zu benchmarks (a sweep): choose one with --benchmark K (0..%zu)", nb, nb - 1);
        k = 0;
    }
    if ((size_t) k >= nb) return bad(r, 0, "--benchmark %d: the report has %zu benchmarks (0..%zu)", k, nb, nb - 1);
    const json_t *b = json_array_get(bs, (size_t) k);
    const json_t *ok = json_object_get(json_object_get(b, "requests"), "successful");
    char where[64];
    snprintf(where, sizeof where, "benchmarks[%d].requests.successful", k);
    if (!json_is_array(ok)) return bad(r, 0, "%s: missing (not a GuideLLM benchmarks report?)", where);
    size_t n = json_array_size(ok);
    const json_t *tot = json_object_get(json_object_get(b, "request_totals"), "successful");
    if (is_num(tot) && json_number_value(tot) > (double) n)
        return bad(r, 0, "%s: holds %zu of the %.0f successful requests (GuideLLM kept a sample: sample_requests); a replay "
                   "needs every request: rerun GuideLLM keeping all of them", where, n, json_number_value(tot));
    for (size_t i = 0; i < n; i++) {
        const json_t *q = json_array_get(ok, i);
        char f[128];
        snprintf(f, sizeof f, "%s[%zu]", where, i);
        if (!json_is_object(q)) return bad(r, 0, "%s: not an object", f);
        cobs_req *x = new_req(r, (long) i + 1);
        if (!x) return -1;
        char g[192];
        snprintf(g, sizeof g, "%s.prompt_tokens", f);
        if (j_tokens(r, 0, json_object_get(q, "prompt_tokens"), g, &x->input_tokens)) return -1;
        snprintf(g, sizeof g, "%s.output_tokens", f);
        if (j_tokens(r, 0, json_object_get(q, "output_tokens"), g, &x->output_tokens)) return -1;
        double start = guide_num(q, "request_start_time", "request_start");
        double ttft = guide_num(q, "time_to_first_token_ms", NULL);
        double lat = guide_num(q, "request_latency", NULL);
        if (isnan(ttft)) {   /* from the timings: first token - request start */
            double ft = guide_num(q, "", "first_token_iteration");
            ttft = 1000 * (ft - start);
        }
        if (isnan(lat)) lat = guide_num(q, "", "request_end") - start;
        if (isnan(start)) return bad(r, 0, "%s.request_start_time: missing", f);
        if (isnan(ttft)) return bad(r, 0, "%s.time_to_first_token_ms: missing", f);
        if (isnan(lat)) return bad(r, 0, "%s.request_latency: missing", f);
        x->arrival_s = start;
        x->ttft_ms = ttft;
        x->e2e_ms = 1000 * lat;
        char n1[160], n2[160], n3[160], n4[160], n5[160];
        snprintf(n1, sizeof n1, "%s.request_start_time", f);
        snprintf(n2, sizeof n2, "%s.prompt_tokens", f);
        snprintf(n3, sizeof n3, "%s.output_tokens", f);
        snprintf(n4, sizeof n4, "%s.time_to_first_token_ms", f);
        snprintf(n5, sizeof n5, "%s.request_latency", f);
        const names N = { n1, n2, n3, n4, n5, "", "" };
        if (check_req(r, x, &N, -2)) return -1;
    }
    if (run->nreq == 0) return bad(r, 0, "%s: no successful request", where);
    snprintf(run->tool, sizeof run->tool, "guidellm (benchmark %d)", k);
    return 0;
}

/* ---- detection and the entry point ---------------------------------------- */

/* The format of F's content: "{" starts JSON (one document: vllm or guidellm;
 * else JSON lines, told apart by the first object's fields), anything else a
 * CSV header.  Returns 0 with *FMT set, or -1 (message set). */
static int detect(rd *r, FILE *f, cobs_format *fmt)
{
    int ch;
    while ((ch = fgetc(f)) != EOF && (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n')) {}
    if (ch == EOF) return bad(r, 0, "empty file: no requests");
    rewind(f);
    if (ch == '{') {
        json_error_t je;
        json_t *root = json_loadf(f, 0, &je);
        if (root) {
            /* a vLLM result saved without --save-detailed has its statistics only:
             * read as vllm, it is refused with the missing list named */
            int vllm = json_object_get(root, "input_lens") || json_object_get(root, "ttfts") ||
                       json_object_get(root, "mean_ttft_ms") || json_object_get(root, "request_throughput");
            int guide = json_object_get(root, "benchmarks") != NULL;
            json_decref(root);
            rewind(f);
            if (vllm) { *fmt = COBS_VLLM; return 0; }
            if (guide) { *fmt = COBS_GUIDELLM; return 0; }
        }
        rewind(f);
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        json_t *o = NULL;
        long ln = 0;
        while ((len = getline(&line, &cap, f)) != -1) {
            ln++;
            if (strspn(line, " \t\r\n") == (size_t) len) continue;
            o = json_loads(line, 0, &je);
            break;
        }
        free(line);
        rewind(f);
        if (!o) return bad(r, ln, "not JSON: %s (give --format)", je.text);
        int ok = 0;
        if (json_object_get(o, "metadata") && json_object_get(o, "metrics")) { *fmt = COBS_AIPERF; ok = 1; }
        else if (json_object_get(o, "queued_ts") && json_object_get(o, "first_token_ts")) { *fmt = COBS_VLLM_STATS; ok = 1; }
        else if (json_object_get(o, "arrival_s")) { *fmt = COBS_GENERIC; ok = 1; }
        json_decref(o);
        if (!ok)
            return bad(r, ln, "cannot tell the format from the first object's fields (give --format: %s)", cobs_format_list());
        return 0;
    }
    /* A CSV header: the first line, split by libcsv. */
    char *line = NULL;
    size_t cap = 0;
    ssize_t len = getline(&line, &cap, f);
    rewind(f);
    int conc = 0, arr = 0;
    if (len > 0) {
        struct csv_parser p;
        csv_rows c = { .r = r, .row = NULL };
        if (csv_init(&p, CSV_APPEND_NULL) == 0) {
            /* collect the fields of the first row only */
            c.failed = 0;
            csv_parse(&p, line, (size_t) len, on_field, NULL, &c);
            csv_fini(&p, on_field, NULL, &c);
            csv_free(&p);
        }
        for (size_t i = 0; i < c.n; i++) {
            conc |= !strcmp(c.f[i], "concurrency") || !strcmp(c.f[i], "rate");
            arr |= !strcmp(c.f[i], "arrival_s");
            free(c.f[i]);
        }
        free(c.f);
    }
    free(line);
    if (r->status) return -1;
    if (conc) { *fmt = COBS_SWEEP; return 0; }
    if (arr) { *fmt = COBS_GENERIC; return 0; }
    return bad(r, 1, "cannot tell the format: not JSON, and the CSV header has neither arrival_s (generic) nor "
               "concurrency / rate (sweep) (give --format: %s)", cobs_format_list());
}

/* ---- the formats' readers, as rows ---------------------------------------------- */

/* An observed format's row: its name (--format, the stored run's format) and
 * its reader (defined below, with the parsers they call). */
typedef struct cobs_reader {
    const char *name;         /* --format NAME */
    cobs_format format;       /* what a run read with it records */
    int (*read)(rd *r, FILE *f);   /* reads F into r->run: 0, or the status (bad() said why) */
} cobs_reader;

/* generic: CSV with a header, or JSON lines. */
static int read_generic_file(rd *r, FILE *f)
{
    int ch;
    while ((ch = fgetc(f)) != EOF && (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n')) {}
    rewind(f);
    if (ch == '{') return read_jsonl(r, f, generic_row);
    csv_rows c = { .r = r, .row = generic_csv_row };
    int rc = read_csv(&c, f);
    if (rc == 0 && !c.header_done) rc = bad(r, 0, "empty file: no header, no requests");
    return rc;
}

/* vllm-stats: vLLM's RequestStateStats, one JSON object a line. */
static int read_stats_file(rd *r, FILE *f)
{
    int rc = read_jsonl(r, f, stats_row);
    if (rc == 0) snprintf(r->run->tool, sizeof r->run->tool, "vLLM engine RequestStateStats");
    return rc;
}

/* aiperf: its per-request records, one JSON object a line (failed ones skipped, and said). */
static int read_aiperf_file(rd *r, FILE *f)
{
    int rc = read_jsonl(r, f, aiperf_row);
    if (rc == 0) snprintf(r->run->tool, sizeof r->run->tool, "aiperf");
    if (rc == 0 && r->skipped)
        add_note(r->run, "%zu errored or cancelled request%s skipped", r->skipped, r->skipped == 1 ? "" : "s");
    return rc;
}

/* sweep: CSV, one row per concurrency or rate level. */
static int read_sweep_file(rd *r, FILE *f)
{
    csv_rows c = { .r = r, .row = sweep_csv_row };
    int rc = read_csv(&c, f);
    if (rc == 0 && !c.header_done) rc = bad(r, 0, "empty file: no header, no levels");
    if (rc == 0 && r->run->nlvl == 0) rc = bad(r, 0, "a sweep without levels: no row after the header");
    return rc;
}

/* F as one JSON object, read by OBJ. */
static int read_json_object(rd *r, FILE *f, int (*obj)(rd *r, const json_t *root))
{
    json_error_t je;
    json_t *root = json_loadf(f, 0, &je);
    int rc = !root ? bad(r, je.line, "not JSON: %s", je.text)
           : !json_is_object(root) ? bad(r, 0, "not a JSON object") : obj(r, root);
    json_decref(root);
    return rc;
}

/* vllm: vLLM's benchmark_serving result file (one JSON object). */
static int read_vllm_file(rd *r, FILE *f) { return read_json_object(r, f, read_vllm); }

/* guidellm: GuideLLM's benchmarks report (one JSON object). */
static int read_guidellm_file(rd *r, FILE *f) { return read_json_object(r, f, read_guidellm); }

/* In the order of error messages (cobs_format_list). */
static const cobs_reader READERS[] = {
    { "generic", COBS_GENERIC, read_generic_file },
    { "vllm", COBS_VLLM, read_vllm_file },
    { "vllm-stats", COBS_VLLM_STATS, read_stats_file },
    { "aiperf", COBS_AIPERF, read_aiperf_file },
    { "guidellm", COBS_GUIDELLM, read_guidellm_file },
    { "sweep", COBS_SWEEP, read_sweep_file },
};
static rowtab reader_table = ROWTAB_STRUCTS(READERS, cobs_reader);

/* The row of format F, or NULL. */
static const cobs_reader *reader_of(cobs_format f)
{
    for (int i = 0; i < rowtab_count(&reader_table); i++) {
        const cobs_reader *c = rowtab_at(&reader_table, i);
        if (c->format == f) return c;
    }
    return NULL;
}

const char *cobs_format_name(cobs_format f)
{
    const cobs_reader *c = reader_of(f);
    return c ? c->name : "?";
}

int cobs_format_parse(const char *name, cobs_format *f)
{
    const cobs_reader *c = name ? rowtab_find(&reader_table, name) : NULL;
    if (!c) return -1;
    *f = c->format;
    return 0;
}

const char *cobs_format_list(void)
{
    static char list[256];
    if (!list[0]) {
        rowtab_choices(&reader_table, list, sizeof list);
        char tmp[sizeof list];
        size_t len = 0;
        for (const char *c = list; *c && len + 3 < sizeof tmp; c++) {
            if (*c == '|') { tmp[len++] = ','; tmp[len++] = ' '; }
            else tmp[len++] = *c;
        }
        tmp[len] = '\0';
        memcpy(list, tmp, len + 1);
    }
    return list;
}

/* Orders requests by (arrival, line). */
static int by_arrival(const void *a, const void *b)
{
    const cobs_req *x = a, *y = b;
    if (x->arrival_s != y->arrival_s) return x->arrival_s < y->arrival_s ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

int cobs_read(const char *path, const cobs_read_opts *o, cobs_run *run, char *err, size_t errlen)
{
    static const cobs_read_opts defaults = { .benchmark = -1, .seed = 1 };
    rd r = { .path = path, .o = o ? o : &defaults, .run = run, .err = err, .errlen = errlen };
    memset(run, 0, sizeof *run);
    snprintf(run->file, sizeof run->file, "%s", path);
    cobs_format fmt;
    if (r.o->format && cobs_format_parse(r.o->format, &fmt) != 0) {
        char shown[128];
        errmsg_set(err, errlen, "--format: unknown format '%s' (valid: %s)", errmsg_field(r.o->format, shown, sizeof shown),
                   cobs_format_list());
        return 2;
    }
    char oerr[1400];
    FILE *f = infile_open(path, INFILE_MAX_OBSERVED, oerr, sizeof oerr);
    if (!f) {
        errmsg_set(err, errlen, "%s", oerr);
        return 2;
    }
    int rc = 0;
    if (!r.o->format) rc = detect(&r, f, &fmt);
    if (rc == 0) {
        run->format = fmt;
        const cobs_reader *reader = reader_of(fmt);
        rc = reader ? reader->read(&r, f) : bad(&r, 0, "unknown format");
    }
    fclose(f);
    if (rc == 0 && fmt != COBS_SWEEP && run->nreq == 0) rc = bad(&r, 0, "no requests");
    if (rc != 0) {
        int status = r.status ? r.status : 2;
        cobs_free(run);
        return status;
    }
    if (run->nreq) {
        qsort(run->req, run->nreq, sizeof *run->req, by_arrival);
        double t0 = run->req[0].arrival_s;
        for (size_t i = 0; i < run->nreq; i++) run->req[i].arrival_s -= t0;
        double span = run->req[run->nreq - 1].arrival_s;
        if (!(span <= 4.6e9)) {   /* the simulated clock's range (146 years), with a margin */
            cobs_free(run);
            errmsg_set(err, errlen, "%s: arrivals span %.3g s: beyond what a replay can simulate", path, span);
            return 2;
        }
    }
    return 0;
}

void cobs_free(cobs_run *run)
{
    for (size_t i = 0; i < run->nreq; i++) free(run->req[i].itl_ms);
    free(run->req);
    free(run->lvl);
    run->req = NULL;
    run->lvl = NULL;
    run->nreq = run->nlvl = 0;
}

/* ---- statistics ------------------------------------------------------------ */

int cobs_values(const cobs_run *run, cobs_metric m, double **values, size_t *n)
{
    size_t k = 0, cap = 0;
    *values = NULL;
    *n = 0;
    for (size_t i = 0; i < run->nreq; i++) {
        const cobs_req *q = &run->req[i];
        cap += m == COBS_ITL ? q->nitl : 1;
    }
    if (cap == 0) return 0;
    double *v = malloc(cap * sizeof *v);
    if (!v) return -1;
    for (size_t i = 0; i < run->nreq; i++) {
        const cobs_req *q = &run->req[i];
        switch (m) {
        case COBS_TTFT: v[k++] = q->ttft_ms; break;
        case COBS_E2E: v[k++] = q->e2e_ms; break;
        case COBS_TPOT:
            if (q->output_tokens > 1) v[k++] = (q->e2e_ms - q->ttft_ms) / (q->output_tokens - 1);
            break;
        case COBS_QUEUE:
            if (!isnan(q->queue_ms)) v[k++] = q->queue_ms;
            break;
        case COBS_ITL:
            if (q->nitl) memcpy(v + k, q->itl_ms, q->nitl * sizeof *v);
            k += q->nitl;
            break;
        default: break;
        }
    }
    if (k == 0) { free(v); return 0; }
    gsl_sort(v, 1, k);
    *values = v;
    *n = k;
    return 0;
}

double cobs_quantile(const double *sorted, size_t n, double q)
{
    if (n == 0) return NAN;
    q = q < 0 ? 0 : q > 1 ? 1 : q;
    /* The rank of stats.c's quantiles(): ceil(q n), q n shrunk by a few ulps so
     * that a product that should be whole does not move to the next rank. */
    double rank = ceil(q * (double) n * (1 - 4 * 2.220446049250313e-16));
    if (rank < 1) rank = 1;
    if (rank > (double) n) rank = (double) n;
    return sorted[(size_t) rank - 1];
}

void cobs_summarize(const double *sorted, size_t n, cobs_stats *s)
{
    s->n = n;
    s->mean = n ? gsl_stats_mean(sorted, 1, n) : NAN;
    s->p50 = cobs_quantile(sorted, n, 0.50);
    s->p90 = cobs_quantile(sorted, n, 0.90);
    s->p99 = cobs_quantile(sorted, n, 0.99);
}

void cobs_throughput(const cobs_run *run, double *rps, double *output_tps)
{
    *rps = *output_tps = NAN;
    if (run->nreq == 0) return;
    double end = 0, tok = 0;
    for (size_t i = 0; i < run->nreq; i++) {
        double e = run->req[i].arrival_s + run->req[i].e2e_ms / 1000;
        if (e > end) end = e;
        tok += run->req[i].output_tokens;
    }
    double w = end - run->req[0].arrival_s;
    if (w > 0) {
        *rps = (double) run->nreq / w;
        *output_tps = tok / w;
    }
}

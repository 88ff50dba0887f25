/* cobsread.c -- the readers of observed runs (cobserved.h), and their statistics.
 *
 * JSON is parsed with jansson, CSV with libcsv: the file is read a line at a
 * time (getline) and each line handed to csv_parse(), so that every row is
 * named by the line it starts on (as sim/workload/trace.c does).  Each reader
 * fills cobs_req (or cobs_level) records and hands every one to check_req (or
 * check_level), which refuses what no real run can have: a missing field, a
 * time that is negative, not finite or beyond COBS_MAX_MS, an E2E below the
 * TTFT, a token count below 1.  The first problem ends the read: one line in
 * ERR, nothing kept.  This file: the reader's state and checks, JSON values,
 * the JSON-lines formats, detection, the formats as rows, cobs_read and the
 * statistics; the CSV formats are cobscsv.c's, the one-document JSON formats
 * (vllm, guidellm) cobsjson.c's (cobsrd.h: what they share).
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
#include "cobsrd.h"

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


const char *cobs_metric_name(cobs_metric m)
{
    static const char *const names[COBS_NMETRICS] = { "ttft", "tpot", "itl", "e2e", "queue" };
    return m >= 0 && m < COBS_NMETRICS ? names[m] : "?";
}

/* ---- the reader's state -------------------------------------------------- */


/* Sets the message "PATH:LINE: ..." (LINE > 0) or "PATH: ..." and status 2.  Returns -1. */
__attribute__((format(printf, 3, 4)))
int bad(rd *r, long line, const char *fmt, ...)
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

int oom(rd *r)
{
    errmsg_set(r->err, r->errlen, "out of memory reading %s", r->path);
    r->status = 1;
    return -1;
}

/* Appends a sentence to the run's note ("; " between sentences). */
__attribute__((format(printf, 2, 3)))
void add_note(cobs_run *run, const char *fmt, ...)
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
cobs_req *new_req(rd *r, long line)
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

/* "NAME" or "NAME[I]" (I >= 0) into BUF. */
const char *fld(char *buf, size_t n, const char *name, long index)
{
    if (index >= 0) snprintf(buf, n, "%s[%ld]", name, index);
    else snprintf(buf, n, "%s", name);
    return buf;
}

/* A time of field NAME, ms: finite, >= 0, at most COBS_MAX_MS.  Returns 0 or -1 (message set). */
int check_ms(rd *r, long line, const char *name, long index, double v, const char *unit)
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
int check_req(rd *r, const cobs_req *q, const names *N, long index)
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
int is_num(const json_t *v) { return json_is_integer(v) || json_is_real(v); }

/* A whole number >= 0 (an integer, or a real without a fraction) from V into
 * *OUT.  Returns 0, or -1 with the message for field NAME (FIELD printed). */
int j_tokens(rd *r, long line, const json_t *v, const char *name, int32_t *out)
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
int j_num(rd *r, long line, const json_t *v, const char *name, double *out)
{
    if (!v || json_is_null(v)) return bad(r, line, "%s: missing", name);
    if (!is_num(v)) return bad(r, line, "%s: not a number", name);
    *out = json_number_value(v);
    return 0;
}

/* A list of gaps (numbers, times SCALE to ms) from array V into Q.  Returns 0 or -1. */
int j_gaps(rd *r, long line, const json_t *v, const char *name, double scale, cobs_req *q)
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

const names GENERIC_NAMES = { "arrival_s", "input_tokens", "output_tokens", "ttft_ms", "e2e_ms", "queue_ms",
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

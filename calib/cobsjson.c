/* cobsjson.c -- the readers of observed runs written as one JSON document:
 * vLLM's benchmark results (vllm/benchmarks/serve.py, arrivals re-drawn when
 * not recorded) and guidellm's reports. */
#include "cobserved.h"
#include "cobsrd.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>

#include "engine/errmsg.h"

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

int read_vllm(rd *r, const json_t *root)
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

int read_guidellm(rd *r, const json_t *root)
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

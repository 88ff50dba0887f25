/* test_trace_events.c -- `latsim run --trace-events`: the Chrome/Perfetto file
 * parses (jansson), every complete event has dur >= 0, each request's spans add
 * up to its E2E (and to its record's components), the steps of a replica never
 * overlap, the cap is said on stderr, and the traced requests' E2E are the ones
 * the report summarises.  Also (at the end) the warning of a result cache that
 * had not settled in a short run. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_trevt_", NULL); }
TestSuite(trace_events, .init = setup, .fini = tcli_teardown);

#define MAXREQ 20000

typedef struct step { int pid, tid; double ts, dur; } step;

static int by_track(const void *a, const void *b)
{
    const step *x = a, *y = b;
    if (x->pid != y->pid) return x->pid - y->pid;
    if (x->tid != y->tid) return x->tid - y->tid;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* What check() found in a trace file. */
typedef struct summary {
    int requests;          /* "request" spans */
    int steps;             /* replica steps */
    int measured;          /* requests with args.measured */
    double measured_sum;   /* their E2E, ms */
    int network, overhead; /* requests with a network / overhead span */
} summary;

/* Parses PATH and checks it; fills S. */
static void check(const char *path, summary *S)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    cr_assert(root, "%s: not JSON: line %d: %s", path, je.line, je.text);
    cr_expect_str_eq(json_string_value(json_object_get(root, "displayTimeUnit")), "ms");
    json_t *ev = json_object_get(root, "traceEvents");
    cr_assert(json_is_array(ev));
    static double e2e[MAXREQ], sum[MAXREQ], lo[MAXREQ], hi[MAXREQ], rec[MAXREQ];
    static int seen[MAXREQ];
    memset(seen, 0, sizeof seen);
    memset(sum, 0, sizeof sum);
    size_t n = json_array_size(ev), ns = 0;
    step *st = calloc(n + 1, sizeof *st);
    cr_assert(st);
    memset(S, 0, sizeof *S);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(ev, i);
        const char *ph = json_string_value(json_object_get(e, "ph"));
        const char *name = json_string_value(json_object_get(e, "name"));
        cr_assert(ph && name && json_is_integer(json_object_get(e, "pid")) && json_is_integer(json_object_get(e, "tid")),
                  "event %zu lacks ph, name, pid or tid", i);
        if (strcmp(ph, "X")) continue;
        int pid = (int) json_integer_value(json_object_get(e, "pid"));
        int tid = (int) json_integer_value(json_object_get(e, "tid"));
        double ts = json_number_value(json_object_get(e, "ts")), dur = json_number_value(json_object_get(e, "dur"));
        cr_expect(dur >= 0, "event %zu (%s): dur %g < 0", i, name, dur);
        if (pid >= 2) {                       /* a replica's step */
            st[ns++] = (step) { pid, tid, ts, dur };
            continue;
        }
        cr_assert(tid >= 0 && tid < MAXREQ);
        if (!strcmp(name, "request")) {
            json_t *a = json_object_get(e, "args");
            seen[tid] = 1;
            e2e[tid] = dur;
            lo[tid] = ts;
            hi[tid] = ts + dur;
            /* the record's components, ns */
            rec[tid] = (double) (json_integer_value(json_object_get(a, "network_ns")) + json_integer_value(json_object_get(a, "overhead_ns"))
                                 + json_integer_value(json_object_get(a, "queue_ns")) + json_integer_value(json_object_get(a, "service_ns")));
            cr_expect_eq(json_integer_value(json_object_get(a, "e2e_ns")), (json_int_t) rec[tid],
                         "request %d: e2e_ns != network + overhead + queue + service", tid);
            cr_expect(fabs(dur - rec[tid] / 1000.0) <= 1e-6 * dur, "request %d: dur %.17g us, record %.17g ns", tid, dur, rec[tid]);
            S->requests++;
            if (json_integer_value(json_object_get(a, "measured"))) {
                S->measured++;
                S->measured_sum += dur / 1000.0;
            }
        } else {
            sum[tid] += dur;
            if (!strcmp(name, "network")) S->network++;
            if (!strcmp(name, "overhead")) S->overhead++;
        }
    }
    for (int t = 0; t < MAXREQ; t++) {
        if (!seen[t]) continue;
        cr_expect(fabs(sum[t] - e2e[t]) <= 1e-6 * e2e[t], "request %d: spans %.17g us != E2E %.17g us", t, sum[t], e2e[t]);
    }
    /* Children inside their request. */
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(ev, i);
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X") || json_integer_value(json_object_get(e, "pid")) != 1) continue;
        int tid = (int) json_integer_value(json_object_get(e, "tid"));
        double ts = json_number_value(json_object_get(e, "ts")), dur = json_number_value(json_object_get(e, "dur"));
        cr_expect(seen[tid] && ts >= lo[tid] - 1e-6 && ts + dur <= hi[tid] + 1e-6 * (1 + hi[tid]),
                  "request %d: a span outside its request", tid);
    }
    qsort(st, ns, sizeof *st, by_track);
    for (size_t i = 1; i < ns; i++)
        if (st[i].pid == st[i - 1].pid && st[i].tid == st[i - 1].tid)
            cr_expect(st[i - 1].ts + st[i - 1].dur <= st[i].ts + 1e-6, "pid %d tid %d: steps overlap at %.17g us", st[i].pid,
                      st[i].tid, st[i].ts);
    S->steps = (int) ns;
    free(st);
    json_decref(root);
}

/* A gateway scenario with three LLM pools: network, overhead, queue, prefill
 * and decode spans; steps of every replica; the cap said once on stderr. */
Test(trace_events, gateway_llm_spans_and_steps, .timeout = 120)
{
    char out[256];
    snprintf(out, sizeof out, "%s/t.json", dir);
    result r = run(110, "run", "scenarios/gateway_three_models.ini", "--no-store", "--json", "--trace-events", out,
                   "--trace-requests", "300", NULL);
    cr_assert_eq(r.rc, 0, "rc %d: %s", r.rc, r.err);
    cr_expect(strstr(r.err, "note: --trace-events") != NULL, "no note that the run had more requests: %s", r.err);
    const char *p = strstr(r.err, "note: --trace-events");
    cr_expect(p && !strstr(p + 1, "note: --trace-events"), "the note is said once");
    summary S;
    check(out, &S);
    cr_expect_eq(S.requests, 300, "%d requests traced", S.requests);
    cr_expect_gt(S.steps, 1000);
    cr_expect_eq(S.network, 300, "every request crosses the network: %d", S.network);
    cr_expect_eq(S.overhead, 300);
    result_free(&r);
}

/* Every request of a small M/M/4 traced: the measured ones' mean E2E is the
 * report's (printed to 6 significant digits), and no cap is said. */
Test(trace_events, all_requests_match_report, .timeout = 60)
{
    char ini[256], out[256];
    write_file("m.ini", "[sim]\nrequests = 3000\nwarmup = 500\nseed = 7\n[workload]\narrival = poisson\nrate = 56\n"
               "[pool cpu]\nkind = generic\nservers = 4\nservice_ms = exp(mean=50)\n", ini, sizeof ini);
    snprintf(out, sizeof out, "%s/m.json", dir);
    result r = run(50, "run", ini, "--no-store", "--json", "--trace-events", out, "--trace-requests", "20000", NULL);
    cr_assert_eq(r.rc, 0, "rc %d: %s", r.rc, r.err);
    cr_expect(strstr(r.err, "--trace-events") == NULL, "a cap was said: %s", r.err);
    summary S;
    check(out, &S);
    json_t *rep = json_loads(r.out, 0, NULL);
    cr_assert(rep);
    double mean = json_number_value(json_object_get(json_object_get(json_object_get(rep, "latency_ms"), "e2e"), "mean"));
    cr_expect_eq(S.measured, 3000, "%d measured requests traced", S.measured);
    cr_expect(fabs(S.measured_sum / S.measured - mean) <= 1e-5 * mean, "mean E2E %.9g ms, report %.9g", S.measured_sum / S.measured, mean);
    cr_expect_eq(S.steps, 0);
    json_decref(rep);
    result_free(&r);
}

/* Bad values are refused before anything runs; nothing is written. */
Test(trace_events, bad_options)
{
    char out[256];
    snprintf(out, sizeof out, "%s/x.json", dir);
    result r = run(20, "run", "scenarios/default.ini", "--no-store", "--trace-events", out, "--trace-requests", "0", NULL);
    cr_expect_eq(r.rc, 2);
    cr_expect_eq(lines(r.err), 1, "%s", r.err);
    result_free(&r);
    r = run(20, "run", "scenarios/default.ini", "--no-store", "--trace-requests", "5", NULL);
    cr_expect_eq(r.rc, 2);
    cr_expect(strstr(r.err, "--trace-events") != NULL);
    result_free(&r);
    FILE *f = fopen(out, "r");
    cr_expect(f == NULL, "a file was written");
    if (f) fclose(f);
}

/* A result cache still filling says so in one warning line (a fixed warm-up of
 * 2 000; gateway_three_models: rise +0.056 at 6.4 standard errors with 20 000
 * requests); the automatic warm-up, which waits for it, does not. */
Test(trace_events, unsettled_cache_warned, .timeout = 120)
{
    /* A fixed warm-up of 2 000 (the old automatic one) leaves the cache filling;
     * the automatic warm-up waits for it (tests/test_warmup_cache.c). */
    result a = run(110, "run", "scenarios/gateway_three_models.ini", "--no-store", "--json", "--set", "sim.requests=20000",
                   "--set", "sim.warmup=2000", NULL);
    cr_assert_eq(a.rc, 0, "%s", a.err);
    const char *w = strstr(a.err, "[pool cache]: the hit rate still rose");
    cr_expect(w != NULL, "no warning: %s", a.err);
    cr_expect(w && !strstr(w + 20, "the hit rate still rose"), "one line");
    result_free(&a);
    result b = run(110, "run", "scenarios/gateway_three_models.ini", "--no-store", "--json", "--set", "sim.requests=20000", NULL);
    cr_assert_eq(b.rc, 0, "%s", b.err);
    cr_expect(strstr(b.err, "the hit rate still rose") == NULL, "warned after the automatic warm-up: %s", b.err);
    result_free(&b);
}

/* test_omx.c -- `run --metrics`: the OpenMetrics series (sim/run/omx.c).
 * The file's shape as the format asks (cumulative buckets, +Inf = count,
 * counters that never fall, # EOF last), its totals against the run's own,
 * the bucket edges, bad paths, and the round trip through a real Prometheus
 * (tests/prom-roundtrip.sh: PromQL's P99 per interval in latsim's bucket, the
 * alert rule firing at latsim's second). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "latsim/scenario.h"
#include "run/omx.h"
#include "tcli.h"

/* The value of the last sample of SERIES (the exact text before the value) in TEXT; NAN when none. */
static double last_value(const char *text, const char *series)
{
    double v = NAN;
    size_t n = strlen(series);
    for (const char *p = text; (p = strstr(p, series)) != NULL; p += n)
        if ((p == text || p[-1] == '\n') && p[n] == ' ') v = strtod(p + n + 1, NULL);
    return v;
}

Test(omx, bucket_edges_and_shape)
{
    const char *names[] = { "chat", "cache" }, *models[] = { "llama-3-8b", NULL };
    int llm[] = { 1, 0 };
    char err[256];
    omx *m = omx_new(2, names, models, llm, err, sizeof err);
    cr_assert(m, "%s", err);
    omx_gauge g[2] = { { 0, 0, 0 }, { 0, 0, NAN } };
    cr_assert_eq(omx_point(m, 0, g), 0);
    /* 0.3 s sits in the le="0.3" bucket (le: less than or equal), 0.30001 s in the next. */
    omx_req a = { .e2e_s = 0.3, .ttft_s = 0.01, .eng_e2e_s = 0.3, .eng_ttft_s = 0.01, .tpot_s = NAN, .prompt = 100, .output = 10 };
    omx_req b = { .e2e_s = 0.30001, .ttft_s = NAN, .eng_e2e_s = 0.30001, .eng_ttft_s = NAN, .tpot_s = NAN, .prompt = 5 };
    omx_served(m, 0, &a);
    omx_served(m, 1, &b);
    g[0] = (omx_gauge) { 3, 2, 0.25 };
    cr_assert_eq(omx_point(m, 60, g), 0);
    cr_assert_eq(omx_point(m, 60, g), 0, "the same instant again replaces the point");
    cr_assert_eq(omx_points(m), 2);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(omx_write(m, f, 1000, err, sizeof err), 0, "%s", err);
    fclose(f);
    const char *pl = "{model_name=\"llama-3-8b\",pool=\"chat\"";
    char key[256];
    snprintf(key, sizeof key, "vllm:e2e_request_latency_seconds_bucket%s,le=\"0.3\"}", pl);
    cr_expect_eq(last_value(buf, key), 1);
    snprintf(key, sizeof key, "latsim_pool_request_latency_seconds_bucket{model_name=\"cache\",pool=\"cache\",le=\"0.3\"}");
    cr_expect_eq(last_value(buf, key), 0, "0.30001 s is above the 0.3 bound");
    snprintf(key, sizeof key, "latsim_pool_request_latency_seconds_bucket{model_name=\"cache\",pool=\"cache\",le=\"0.5\"}");
    cr_expect_eq(last_value(buf, key), 1);
    cr_expect_eq(last_value(buf, "latsim_e2e_request_latency_seconds_count"), 2, "the system's histogram counts both");
    cr_expect_eq(last_value(buf, "latsim_time_to_first_token_seconds_count"), 1, "a request without a token has no TTFT");
    snprintf(key, sizeof key, "vllm:num_requests_running%s}", pl);
    cr_expect_eq(last_value(buf, key), 3);
    snprintf(key, sizeof key, "vllm:kv_cache_usage_perc%s}", pl);
    cr_expect_eq(last_value(buf, key), 0.25);
    snprintf(key, sizeof key, "vllm:prompt_tokens_total%s}", pl);
    cr_expect_eq(last_value(buf, key), 100);
    cr_expect(strstr(buf, "latsim_pool_requests_running{model_name=\"cache\",pool=\"cache\"} 0 1060.000\n"),
              "timestamps: the start plus simulated seconds");
    cr_expect(!strstr(buf, "kv_cache_usage_perc{model_name=\"cache\""), "no KV gauge for a pool without a KV cache");
    cr_expect(len > 6 && strcmp(buf + len - 6, "# EOF\n") == 0, "the file ends with # EOF");
    free(buf);
    omx_free(m);
}

/* Every histogram point: buckets never fall as le grows and +Inf equals _count;
 * every series (the text before the value) never falls in time for counters and
 * buckets. */
static void check_shape(const char *text)
{
    char prev_series[512] = "", line[1024];
    double prev_v = -1, prev_bucket = -1;
    int npoints = 0;
    const char *p = text;
    while (*p) {
        const char *e = strchr(p, '\n');
        cr_assert(e, "every line ends with a newline");
        size_t n = (size_t) (e - p) < sizeof line - 1 ? (size_t) (e - p) : sizeof line - 1;
        memcpy(line, p, n);
        line[n] = 0;
        p = e + 1;
        if (line[0] == '#') continue;
        char *sp = strchr(line, ' ');
        cr_assert(sp, "a sample line has a value: %s", line);
        *sp = 0;
        double v = strtod(sp + 1, NULL);
        int counter = strstr(line, "_total") || strstr(line, "_bucket") || strstr(line, "_count") || strstr(line, "_sum");
        if (strcmp(line, prev_series) == 0 && counter)
            cr_expect(v >= prev_v, "%s falls from %g to %g", line, prev_v, v);
        if (strstr(line, "_bucket{")) {   /* a point's buckets are consecutive lines, +Inf last */
            cr_expect(v >= prev_bucket, "%s: a bucket below the one before it", line);
            prev_bucket = strstr(line, "le=\"+Inf\"") ? -1 : v;
            npoints += strstr(line, "le=\"+Inf\"") != NULL;
        } else
            prev_bucket = -1;
        snprintf(prev_series, sizeof prev_series, "%s", line);
        prev_v = v;
    }
    cr_expect(npoints > 10, "histogram points were written (%d)", npoints);
}

Test(omx, run_file_shape_and_totals)
{
    tcli_setup("/tmp/latsim_omx_", NULL);
    char om[128], ts[128];
    snprintf(om, sizeof om, "%s/m.om", dir);
    snprintf(ts, sizeof ts, "%s/ts.csv", dir);
    result r = run(120, "run", "scenarios/chat_plan.ini", "--no-store", "--set", "sim.requests=3000", "--interval", "20s",
                   "--metrics", om, "--timeseries", ts, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    char *text = slurp_or_fail(om, NULL), *csv = slurp_or_fail(ts, NULL);
    check_shape(text);
    /* Every request served in the run is in the series, as in the time series' rows. */
    double served = 0;
    int row = 0;
    for (char *l = csv; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (row++ == 0) continue;
        char *c = l;
        for (int k = 0; k < 4 && c; k++) c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL;   /* 5th column: served */
        if (c) served += strtod(c, NULL);
    }
    cr_assert_gt(served, 3000);
    cr_expect_eq(last_value(text, "latsim_request_success_total"), served);
    double reps = 0;   /* its 10 replicas' */
    for (int k = 0; k < 10; k++) {
        char key[160];
        snprintf(key, sizeof key, "vllm:request_success_total{model_name=\"llama-3-70b\",pool=\"chat\",replica=\"%d\"}", k);
        reps += last_value(text, key);
    }
    cr_expect_eq(reps, served);
    cr_expect_eq(last_value(text, "latsim_e2e_request_latency_seconds_bucket{le=\"+Inf\"}"), served);
    free(text);
    free(csv);
    result_free(&r);
    tcli_teardown();
}

Test(omx, bad_paths_refused_before_the_run)
{
    tcli_setup("/tmp/latsim_omx_", "runs.db");
    char fifo[160], cmd[400];
    snprintf(fifo, sizeof fifo, "%s/fifo.om", dir);
    snprintf(cmd, sizeof cmd, "mkfifo %s", fifo);
    cr_assert_eq(system(cmd), 0);
    result r = run_scenario(60, "scenarios/default.ini", "--metrics", "/nonexistent-dir/m.om", NULL);
    expect_one_line(&r, 2, "--metrics", "run:");
    cr_expect_neq(access(db, F_OK), 0, "nothing stored: the database was not even created");
    result_free(&r);
    r = run_scenario(60, "scenarios/default.ini", "--metrics", fifo, NULL);
    expect_one_line(&r, 2, "--metrics", "run:");
    result_free(&r);
    r = run(60, "run", "scenarios/default.ini", "--no-store", "--metrics", "x.om", "--metrics-start", "-5", NULL);
    expect_one_line(&r, 2, "--metrics-start", "run:");
    result_free(&r);
    tcli_teardown();
}

/* The real thing: promtool builds TSDB blocks of the file, a Prometheus server
 * on 127.0.0.1 answers PromQL over them, promtool test rules evaluates the alert.
 * Skipped (with the reason) where prometheus is not installed; .ci/run installs it. */
Test(omx, prometheus_round_trip)
{
    const char *bin = getenv("LATSIM_BIN") ? getenv("LATSIM_BIN") : "./latsim";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "timeout 300 tests/prom-roundtrip.sh %s > /tmp/latsim_prom_rt.log 2>&1", bin);
    int st = system(cmd);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    char *log = slurp("/tmp/latsim_prom_rt.log", NULL);
    if (rc == 77) {
        cr_assert(getenv("CI") == NULL || strcmp(getenv("CI"), "true"), "CI=true but prometheus is not installed");
        free(log);
        cr_skip_test("prometheus and promtool are not installed (apt-get install prometheus)");
    }
    cr_expect_eq(rc, 0, "tests/prom-roundtrip.sh failed: %s", log);
    /* The figures docs/metrics.md quotes ("Checked by a real Prometheus"). */
    cr_expect(strstr(log, "latsim_e2e_request_latency_seconds: 30 intervals compared, 0 in another bucket"), "%s", log);
    cr_expect(strstr(log, "vllm:e2e_request_latency_seconds: 30 intervals compared, 0 in another bucket"), "%s", log);
    cr_expect(strstr(log, "alert fired at 40 s in both"), "%s", log);
    free(log);
}

/* The README's incident loop as written (tests/prom-incident.sh): a traffic
 * spike simulated, its metrics loaded into a Prometheus server, PromQL's TTFT
 * P99 above the SLO where latsim's alert fires, and the documents' page (P99
 * above the SLO for 15 minutes) as a Prometheus alerting rule firing at the
 * same simulated minute, not one before.  Skipped where prometheus is absent. */
Test(omx, prometheus_incident, .timeout = 300)
{
    const char *bin = getenv("LATSIM_BIN") ? getenv("LATSIM_BIN") : "./latsim";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "timeout 240 tests/prom-incident.sh %s > /tmp/latsim_prom_inc.log 2>&1", bin);
    int st = system(cmd);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    char *log = slurp("/tmp/latsim_prom_inc.log", NULL);
    if (rc == 77) {
        cr_assert(getenv("CI") == NULL || strcmp(getenv("CI"), "true"), "CI=true but prometheus is not installed");
        free(log);
        cr_skip_test("prometheus and promtool are not installed (apt-get install prometheus)");
    }
    cr_expect_eq(rc, 0, "tests/prom-incident.sh failed: %s", log);
    /* The figure README.md quotes. */
    cr_expect(strstr(log, "alert fired at 1320 s (minute 22) in both"), "%s", log);
    cr_expect(strstr(log, "PromQL TTFT P99 39."), "%s", log);
    free(log);
}

/* Per replica: the LLM gauges carry replica="K" after the escaped model_name
 * and pool, the pool-wide ones go to latsim's names, and replicas can only be
 * declared before the first point. */
Test(omx, replica_labels_escaped)
{
    const char *names[] = { "ch\"a\\t" }, *models[] = { "m\nx" };
    int llm[] = { 1 };
    char err[256];
    omx *m = omx_new(1, names, models, llm, err, sizeof err);
    cr_assert(m, "%s", err);
    cr_assert_eq(omx_set_replicas(m, 0, 2), 0);
    cr_expect_eq(omx_set_replicas(m, 1, 2), -1, "no such pool");
    omx_gauge rg[2] = { { 3, 1, 0.5 }, { 1, 2, 0.25 } }, g = { 4, 5, 0.375 };
    omx_replica_gauges(m, 0, rg);
    omx_req a = { .e2e_s = 1, .ttft_s = 0.1, .eng_e2e_s = 0.9, .eng_ttft_s = 0.05, .tpot_s = 0.02, .prompt = 7,
                  .output = 3, .replica = 1 };
    omx_served(m, 0, &a);
    cr_assert_eq(omx_point(m, 10, &g), 0);
    cr_expect_eq(omx_set_replicas(m, 0, 3), -1, "replicas are fixed once a point is taken");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(omx_write(m, f, 1000, err, sizeof err), 0, "%s", err);
    fclose(f);
    const char *pl = "{model_name=\"m\\nx\",pool=\"ch\\\"a\\\\t\"";
    const char *want[][2] = {
        { "vllm:num_requests_running", ",replica=\"0\"} 3 1010.000\n" },
        { "vllm:num_requests_running", ",replica=\"1\"} 1 1010.000\n" },
        { "vllm:num_requests_waiting", ",replica=\"1\"} 2 1010.000\n" },
        { "vllm:kv_cache_usage_perc", ",replica=\"0\"} 0.5 1010.000\n" },
        { "latsim_pool_requests_running", "} 4 1010.000\n" },
        { "latsim_pool_requests_waiting", "} 5 1010.000\n" },
        { "latsim_pool_kv_cache_usage_perc", "} 0.375 1010.000\n" },
        { "vllm:request_success_total", ",replica=\"0\"} 0 1010.000\n" },   /* counters: per replica */
        { "vllm:request_success_total", ",replica=\"1\"} 1 1010.000\n" },
        { "vllm:prompt_tokens_total", ",replica=\"1\"} 7 1010.000\n" },
        { "vllm:e2e_request_latency_seconds_bucket", ",replica=\"1\",le=\"1\"} 1 1010.000\n" },
        { "vllm:e2e_request_latency_seconds_count", ",replica=\"0\"} 0 1010.000\n" },
    };
    char key[256];
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        snprintf(key, sizeof key, "\n%s%s%s", want[i][0], pl, want[i][1]);
        cr_expect(strstr(buf, key), "missing: %s", key + 1);
    }
    snprintf(key, sizeof key, "\nvllm:num_requests_running%s}", pl);
    cr_expect(!strstr(buf, key), "no pool-wide series under a per-replica vllm: name");
    free(buf);
    omx_free(m);
}

/* One scrape's sums over a pool's replicas, and its pool-wide gauges. */
typedef struct scrape {
    double ts;                /* the sample's timestamp, s */
    double run, wait, kv;     /* sums over the replicas: running, waiting, KV usage */
    int nrun;                 /* replicas with a running sample */
    double prun, pwait, pkv;  /* the pool's: latsim_pool_requests_running, _waiting, _kv_cache_usage_perc */
} scrape;

/* The scrape at TS in S (N of them, at most CAP), added when new. */
static scrape *scrape_at(scrape *s, int *n, int cap, double ts)
{
    for (int i = 0; i < *n; i++)
        if (s[i].ts == ts) return &s[i];
    cr_assert_lt(*n, cap, "more scrapes than expected");
    s[*n] = (scrape) { .ts = ts, .prun = NAN, .pwait = NAN, .pkv = NAN };
    return &s[(*n)++];
}

/* At every scrape of a run of 3 overloaded replicas, routed to their own
 * queues or from the pool's shared one: the replicas' running and waiting sum
 * to the pool's (the station's own count, another code path), their KV usage
 * averages to it, and each replica has its series.  Returns the largest sum of
 * the replicas' waiting seen. */
static double check_sums(const char *routing)
{
    tcli_setup("/tmp/latsim_omx_", NULL);
    char om[128], set[64];
    snprintf(om, sizeof om, "%s/r.om", dir);
    snprintf(set, sizeof set, "pool chat.routing=%s", routing);
    result r = run(120, "run", "scenarios/chat_plan.ini", "--no-store", "--set", "sim.requests=2000", "--set",
                   "workload.rate=120", "--set", "pool chat.replicas=3", "--set", set, "--interval", "5s",
                   "--metrics", om, NULL);
    cr_assert_eq(r.rc, 3, "exit 3: saturated, as meant (%s)", r.err);
    char *text = slurp_or_fail(om, NULL);
    enum { CAP = 4096 };
    scrape *s = calloc(CAP, sizeof *s);
    cr_assert(s);
    int n = 0;
    const char *pl = "{model_name=\"llama-3-70b\",pool=\"chat\"";
    size_t npl = strlen(pl);
    for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (*l == '#') continue;
        char *brace = strchr(l, '{'), *nl = strchr(l, '\n');
        if (!brace || (nl && brace > nl) || strncmp(brace, pl, npl) != 0) continue;
        char *close = strchr(brace, '}');
        cr_assert(close);
        double v = strtod(close + 2, NULL), ts = strtod(strchr(close + 2, ' ') + 1, NULL);
        size_t nn = (size_t) (brace - l);
        scrape *p = scrape_at(s, &n, CAP, ts);
        int rep = strncmp(brace + npl, ",replica=\"", 10) == 0;
        if (rep) cr_expect_eq(close[-1], '"', "replica is the last label: %.120s", l);
        if (nn == strlen("vllm:num_requests_running") && !strncmp(l, "vllm:num_requests_running", nn)) {
            cr_expect(rep, "vllm gauges carry replica: %.120s", l);
            p->run += v;
            p->nrun++;
        } else if (nn == strlen("vllm:num_requests_waiting") && !strncmp(l, "vllm:num_requests_waiting", nn))
            p->wait += v;
        else if (nn == strlen("vllm:kv_cache_usage_perc") && !strncmp(l, "vllm:kv_cache_usage_perc", nn))
            p->kv += v;
        else if (nn == strlen("latsim_pool_requests_running") && !strncmp(l, "latsim_pool_requests_running", nn))
            p->prun = v;
        else if (nn == strlen("latsim_pool_requests_waiting") && !strncmp(l, "latsim_pool_requests_waiting", nn))
            p->pwait = v;
        else if (nn == strlen("latsim_pool_kv_cache_usage_perc") && !strncmp(l, "latsim_pool_kv_cache_usage_perc", nn))
            p->pkv = v;
    }
    cr_assert_gt(n, 5, "scrapes: %d", n);
    double most_run = 0, most_wait = 0, most_pwait = 0;
    for (int i = 0; i < n; i++) {
        scrape *p = &s[i];
        cr_expect_eq(p->nrun, 3, "at %.3f: %d replicas' running series", p->ts, p->nrun);
        cr_expect_eq(p->run, p->prun, "at %.3f: replicas run %g, the pool %g", p->ts, p->run, p->prun);
        if (strcmp(routing, "shared") == 0)
            cr_expect_eq(p->wait, 0, "shared queue: no replica holds a waiting request");
        else
            cr_expect_eq(p->wait, p->pwait, "at %.3f: replicas wait %g, the pool %g", p->ts, p->wait, p->pwait);
        /* Printed to 9 significant digits: the mean of three such within 1e-8. */
        cr_expect(fabs(p->kv / 3 - p->pkv) <= 1e-8, "at %.3f: replicas' KV mean %.9g, the pool %.9g", p->ts,
                  p->kv / 3, p->pkv);
        if (p->run > most_run) most_run = p->run;
        if (p->wait > most_wait) most_wait = p->wait;
        if (p->pwait > most_pwait) most_pwait = p->pwait;
    }
    cr_expect_gt(most_run, 0, "the replicas ran something");
    /* Counters and histograms per replica: together, every request served. */
    double succ = 0, count = 0;
    for (int k = 0; k < 3; k++) {
        char key[160];
        snprintf(key, sizeof key, "vllm:request_success_total%s,replica=\"%d\"}", pl, k);
        succ += last_value(text, key);
        snprintf(key, sizeof key, "vllm:e2e_request_latency_seconds_count%s,replica=\"%d\"}", pl, k);
        count += last_value(text, key);
    }
    double all = last_value(text, "latsim_request_success_total");
    cr_expect_gt(all, 0);
    cr_expect_eq(succ, all, "replicas served %g, the system %g", succ, all);
    cr_expect_eq(count, all, "replicas' E2E counts %g, the system %g", count, all);
    cr_expect_gt(most_pwait, 100, "overloaded: the pool's queue grew (%g)", most_pwait);
    free(s);
    free(text);
    result_free(&r);
    tcli_teardown();
    return most_wait;
}

Test(omx, replica_gauges_sum_to_the_pool_routed)
{
    cr_expect_gt(check_sums("least_outstanding"), 100, "routed: the replicas' own queues grew");
}

Test(omx, replica_gauges_sum_to_the_pool_shared) { check_sums("shared"); }

/* The sample lines of TEXT (comments excluded) whose labels hold WHAT (NULL:
 * every one), and their bytes into *BYTES. */
static int lines_with(const char *text, const char *what, size_t *bytes)
{
    int n = 0;
    *bytes = 0;
    for (const char *l = text; *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t) (e - l) + 1 : strlen(l);
        if (*l != '#') {
            char *line = strndup(l, len);
            if (!what || strstr(line, what)) {
                n++;
                *bytes += len;
            }
            free(line);
        }
        l += len;
    }
    return n;
}

/* dp > 1: a replica is its dp ranks (2 replicas of dp = 4: labels "0" and "1",
 * not one per rank); over the replicas, vllm:generation_tokens_total and
 * vllm:prompt_tokens_total add up to the output and prompt tokens of every
 * request the run served (read from its trace events, another path), and
 * vllm:request_success_total to the requests; each replica writes the same 77
 * lines per point (3 gauges, 3 counters, 3 histograms), so the file grows by
 * points x replicas x 77 lines and no more. */
Test(omx, dp_replicas_add_up_to_the_run, .timeout = 240)
{
    tcli_setup("/tmp/latsim_omx_", NULL);
    char om[128], tr[128];
    snprintf(om, sizeof om, "%s/dp.om", dir);
    snprintf(tr, sizeof tr, "%s/dp.json", dir);
    result r = run(180, "run", "scenarios/moe_dp_ep.ini", "--no-store", "--set", "pool chat.replicas=2", "--set",
                   "sim.requests=600", "--set", "sim.warmup=60", "--interval", "10s", "--metrics", om,
                   "--trace-events", tr, "--trace-requests", "10000", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    char *text = slurp_or_fail(om, NULL);
    check_shape(text);
    /* The trace: every request served, with its tokens. */
    json_error_t je;
    json_t *j = json_load_file(tr, 0, &je);
    cr_assert_not_null(j, "%s: %s", tr, je.text);
    json_t *ev = json_object_get(j, "traceEvents");
    double out = 0, prompt = 0, served = 0;
    for (size_t i = 0; i < json_array_size(ev); i++) {
        json_t *e = json_array_get(ev, i), *a = json_object_get(e, "args");
        if (strcmp(json_string_value(json_object_get(e, "name")), "request") != 0) continue;
        if (strcmp(json_string_value(json_object_get(a, "outcome")), "served") != 0) continue;
        served++;
        out += json_number_value(json_object_get(a, "output_tokens"));
        prompt += json_number_value(json_object_get(a, "prompt_tokens"));
    }
    json_decref(j);
    cr_assert_gt(served, 600, "the trace holds the run's requests (%g)", served);
    const char *pl = "{model_name=\"qwen3-30b-a3b\",pool=\"chat\"";
    double gen = 0, pr = 0, succ = 0;
    for (int k = 0; k < 2; k++) {
        char key[160];
        snprintf(key, sizeof key, "vllm:generation_tokens_total%s,replica=\"%d\"}", pl, k);
        double g = last_value(text, key);
        cr_expect_gt(g, 0.3 * out, "replica %d generated %g of %g tokens", k, g, out);
        gen += g;
        snprintf(key, sizeof key, "vllm:prompt_tokens_total%s,replica=\"%d\"}", pl, k);
        pr += last_value(text, key);
        snprintf(key, sizeof key, "vllm:request_success_total%s,replica=\"%d\"}", pl, k);
        succ += last_value(text, key);
    }
    cr_expect_eq(gen, out, "replicas generated %g tokens, the run's requests %g", gen, out);
    cr_expect_eq(pr, prompt, "replicas' prompt tokens %g, the run's requests %g", pr, prompt);
    cr_expect_eq(succ, served);
    cr_expect_eq(last_value(text, "latsim_request_success_total"), served);
    cr_expect(!strstr(text, "replica=\"2\""), "a replica per dp rank: the 8 ranks are 2 replicas");
    /* Size: 77 lines per replica and point, the rest (the pool's 3 latsim_pool_* gauges, the system's 2
     * histograms and counter) independent of the replicas. */
    size_t b0, b1, ball, bsys;
    int points = lines_with(text, "latsim_request_success_total", &bsys);
    int r0 = lines_with(text, "replica=\"0\"", &b0), r1 = lines_with(text, "replica=\"1\"", &b1);
    int all = lines_with(text, NULL, &ball);
    cr_assert_gt(points, 4);
    cr_expect_eq(r0, 77 * points, "replica 0: %d lines over %d points", r0, points);
    cr_expect_eq(r1, 77 * points);
    /* E2E: 21 bounds + Inf, TTFT: 22 + Inf, each with _sum and _count */
    cr_expect_eq(all - r0 - r1, (3 + (22 + 2) + (23 + 2) + 1) * points, "the lines of no replica: %d", all - r0 - r1);
    cr_expect_lt((double) b0 / points, 77 * 130.0, "replica 0: %zu bytes per point", b0 / (size_t) points);
    free(text);
    result_free(&r);
    tcli_teardown();
}

/* The bound on points x series counts the replicas (one state each per
 * point, as a pool's): 1000 replicas in intervals of 100 ms are refused
 * before the run, naming --interval, where the pool alone would have passed. */
Test(omx, replicas_count_in_the_bound, .timeout = 120)
{
    char err[512];
    scenario *s = scenario_new();
    cr_assert_eq(scenario_load(s, "scenarios/moe_dp_ep.ini", (const char *[]) { "pool chat.replicas=2" }, 1, err,
                               sizeof err), 0, "%s", err);
    cr_expect_eq(scenario_metric_replicas(s), 2, "2 replicas of dp = 4, not 8 ranks");
    scenario_delete(s);
    s = scenario_new();
    const char *as = "[sim]\nrequests = 100\n[workload]\nrate = 1\n[pool chat]\nkind = llm\nmodel = llama-3-8b\n"
                     "gpu = h100\nreplicas = 2\nmin_replicas = 1\nmax_replicas = 6\nautoscale = queue\n"
                     "[pool cpu]\nservers = 3\nservice_ms = const(1)\n";
    cr_assert_eq(scenario_load_text(s, "as.ini", as, NULL, 0, err, sizeof err), 0, "%s", err);
    cr_expect_eq(scenario_metric_replicas(s), 6, "autoscaled: every replica it may have; a generic pool none");
    scenario_delete(s);
    cr_expect_eq(omx_check(400, 0.1, 1, 0, err, sizeof err), 0, "%s", err);
    cr_expect_eq(omx_check(400, 0.1, 1, 1000, err, sizeof err), -1);
    cr_expect(strstr(err, "1000 replicas") && strstr(err, "--interval"), "%s", err);
    tcli_setup("/tmp/latsim_omx_", "runs.db");
    char om[160];
    snprintf(om, sizeof om, "%s/m.om", dir);
    result r = run_scenario(30, "scenarios/chat_plan.ini", "--set", "pool chat.replicas=1000", "--set",
                            "sim.requests=20000", "--interval", "100ms", "--metrics", om, NULL);
    expect_one_line(&r, 2, "--interval", "run:");
    cr_expect(strstr(r.err, "1000 replicas") != NULL, "%s", r.err);
    cr_expect_neq(access(db, F_OK), 0, "nothing stored");
    cr_expect_neq(access(om, F_OK), 0, "nothing written");
    result_free(&r);
    tcli_teardown();
}

/* run.c -- `latsim run FILE`: scenario -> simulation (one or more
 * replications) -> report -> database.  All the work is in sim/; this file
 * only calls it, in steps: parse the options, load and check the scenario,
 * simulate, describe the result (its configuration, SLO terms, alerts and
 * JSON), print it, write the time series, store it, and say what went wrong
 * in the run (rejected requests, saturation).  Exit status: 0 done, 1 runtime
 * failure, 2 bad input, 3 saturated (reported and stored).  The prediction
 * band (--band) is runband.c's (run.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cliopt.h"
#include "cliutil.h"
#include "provenance.h"
#include "commands.h"
#include "latsim/errmsg.h"
#include "latsim/report.h"
#include "latsim/scenario.h"
#include "latsim/band.h"
#include "latsim/sim.h"
#include "latsim/slo.h"
#include "latsim/store.h"
#include "latsim/tseries.h"
#include "latsim/omx.h"
#include "run.h"

enum { O_SEED = 1, O_REPS, O_NO_STORE, O_TIMESERIES, O_INTERVAL, O_ALERT_K, O_FROM_RUN, O_TRACE_EVENTS, O_TRACE_REQS, O_VERBOSE,
       O_METRICS, O_METRICS_START, O_BAND };

static const cli_opt OPTS[] = {
    { "seed", O_SEED, "N", "run seed (default: [sim] seed, else 1)", 0 },
    CLI_OPT_SET,
    CLI_OPT_JSON,
    CLI_OPT_DB,
    CLI_OPT_COST_DB,
    { "replications", O_REPS, "N", "run N independent replications (seeds seed..seed+N-1) and report each statistic "
      "with a 95% confidence interval", 0 },
    { "no-store", O_NO_STORE, NULL, "do not write the run to the database", 0 },
    { "from-run", O_FROM_RUN, "ID", "instead of FILE: re-run stored run ID (its stored configuration, seed and "
      "replications) with the cost coefficients it recorded for each LLM pool, so that its step times are the same "
      "without the calibration database (a stored profile still needs it)", 0 },
    { "timeseries", O_TIMESERIES, "OUT.csv", "write the run's time series (one row per interval: arrivals, retries, "
      "served, errors, throughput, P50/P99 of TTFT and E2E, queue, replicas up, utilisation) to OUT.csv, store it "
      "with the run, and list the SLO alerts", 0 },
    { "interval", O_INTERVAL, "DUR", "interval of the time series (default 60s; 500ms, 1m, 2h...); alone, the series "
      "is stored but no CSV is written", 0 },
    { "alert-intervals", O_ALERT_K, "K", "an alert fires when a P99/P50 [slo] term is missed in K consecutive intervals "
      "(default 15)", 0 },
    { "trace-events", O_TRACE_EVENTS, "OUT.json", "write a Chrome/Perfetto trace-event file of the first replication "
      "(open it in ui.perfetto.dev or chrome://tracing): one track per traced request with its spans (network, overhead, "
      "queue, prefill, decode), one per LLM replica with its steps, recorded until the traced requests are done "
      "(docs/metrics.md, \"Trace events\")", 0 },
    { "trace-requests", O_TRACE_REQS, "N", "with --trace-events: trace the run's first N requests by arrival, warm-up "
      "included (default 1000, at most 10000000; a line on stderr says when the run had more)", 0 },
    { "metrics", O_METRICS, "OUT.om", "write the first replication's metrics in the OpenMetrics text format, as a "
      "Prometheus scrape of every pool at the start and at each interval's end would read them (vLLM's metric names "
      "for LLM pools; load them with promtool tsdb create-blocks-from openmetrics; docs/metrics.md, \"Prometheus\")", 0 },
    { "metrics-start", O_METRICS_START, "EPOCH", "with --metrics: the Unix time (s) of simulated time 0 (default "
      "1767225600, 2026-01-01T00:00:00Z)", 0 },
    { "verbose", O_VERBOSE, NULL, "before the run, print on stderr the settings that change answers when set to a "
      "neighbouring value (warm-up, block_tokens, scheduler, chunk_tokens, batch limits, a trace's hash_block_tokens), "
      "each with its value and whether it is a default", 0 },
    { "band", O_BAND, NULL, "the 90 % prediction band of E2E, TTFT, TPOT (mean, p99) and throughput, from the cost "
      "model's validated error and the replications' seed noise: in the table, and as \"prediction_band\" in --json "
      "(a scenario with an LLM pool; it simulates the first replication twice more, at both ends of the step-time "
      "error; docs/bands.md)", 0 },
    { NULL },
};

const cli_cmd run_cmd = {
    "run", "FILE",
    "Simulates the scenario in FILE (an INI file; see latsim keys and docs/scenarios.md),\n"
    "prints the report and stores the run in the database.  With --from-run ID instead\n"
    "of FILE: the stored run ID again, with the cost models it recorded.\n",
    "exit status: 0 done, 1 runtime error, 2 bad input (usage, scenario, trace or\n"
    "database), 3 saturated: the run is reported and stored, marked saturated, and a\n"
    "line on stderr names each saturated pool.\n",
    OPTS, CLI_MAX_SETS, 0,
};


/* Reads stored run O->from_run from the database at ST->db_path into ST: its
 * configuration, seed and replications, and for each LLM pool the assignments
 * its recorded cost model gives (cost = fitted with cost_terms, cost = profile
 * with its cost_id, cost = roofline for a roofline, and no calibration
 * database unless a profile needs it).  Returns 0, or the exit status with
 * ST->err set. */
static int from_run(const run_opts *o, run_state *st)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    int rc = 2;
    if (store_open_readonly(st->db_path, &db, st->err, sizeof st->err) != 0) goto out;
    if (sqlite3_prepare_v2(db, "SELECT scenario_path, scenario_text, seed, replications FROM runs WHERE id = ?", -1, &q,
                           NULL) != SQLITE_OK) goto db_error;
    sqlite3_bind_int64(q, 1, o->from_run);
    if (sqlite3_step(q) != SQLITE_ROW || !sqlite3_column_text(q, 1)) {
        snprintf(st->err, sizeof st->err, "run: --from-run %lld: no such run in %s (see latsim runs)", (long long) o->from_run,
                 st->db_path);
        goto out;
    }
    st->from_path = strdup((const char *) sqlite3_column_text(q, 0));
    st->from_text = strdup((const char *) sqlite3_column_text(q, 1));
    int64_t seed = sqlite3_column_int64(q, 2);
    memcpy(&st->from_seed, &seed, sizeof seed);   /* stored as the same 64 bits (store.c) */
    st->from_reps = sqlite3_column_int(q, 3);
    sqlite3_finalize(q);
    q = NULL;
    if (!st->from_path || !st->from_text) { snprintf(st->err, sizeof st->err, "out of memory"); rc = 1; goto out; }
    /* Each pool's cost model kind and coefficients (every replication's rows say the same: the first). */
    if (sqlite3_prepare_v2(db, "SELECT scope, group_concat(CASE metric WHEN 'cost_model.kind' THEN text END),"
                           " group_concat(CASE metric WHEN 'cost_model.coefficients' THEN text END, char(10))"
                           " FROM (SELECT scope, metric, text FROM run_stats WHERE run_id = ?1 AND replication ="
                           " (SELECT min(replication) FROM run_stats WHERE run_id = ?1) AND metric IN"
                           " ('cost_model.kind', 'cost_model.coefficients') ORDER BY rowid) GROUP BY scope ORDER BY scope",
                           -1, &q, NULL) != SQLITE_OK) goto db_error;
    sqlite3_bind_int64(q, 1, o->from_run);
    int need_db = 0;
    while (sqlite3_step(q) == SQLITE_ROW && st->nfrom + 4 < 64) {
        const char *pool = (const char *) sqlite3_column_text(q, 0);
        const char *kind = (const char *) sqlite3_column_text(q, 1);
        const char *co = (const char *) sqlite3_column_text(q, 2);
        if (!pool || !kind) continue;
        char(*set)[700] = st->from_sets;
        if (co && !strncmp(co, "cost=fitted cost_terms=", 23)) {
            const char *terms = co + 23, *ratios = strstr(co, " cost_ratios=");
            snprintf(set[st->nfrom++], 700, "pool %s.cost=fitted", pool);
            snprintf(set[st->nfrom++], 700, "pool %s.cost_terms=%.*s", pool, (int) strcspn(terms, " "), terms);
            if (ratios) snprintf(set[st->nfrom++], 700, "pool %s.cost_ratios=%s", pool, ratios + 13);
        } else if (co && !strncmp(co, "cost=profile cost_id=", 21)) {
            snprintf(set[st->nfrom++], 700, "pool %s.cost=profile", pool);
            snprintf(set[st->nfrom++], 700, "pool %s.cost_id=%.*s", pool, (int) strcspn(co + 21, " "), co + 21);
            need_db = 1;
        } else if (!strcmp(kind, "roofline"))
            snprintf(set[st->nfrom++], 700, "pool %s.cost=roofline", pool);
    }
    if (!need_db) snprintf(st->from_sets[st->nfrom++], 700, "sim.cost_db=");
    rc = 0;
    goto out;
db_error:
    snprintf(st->err, sizeof st->err, "%s: %s", st->db_path, sqlite3_errmsg(db));
    rc = 1;
out:
    sqlite3_finalize(q);
    if (db) store_close(db);
    return rc;
}

/* The exit status of a failed load: 1 (runtime failure) when memory ran out,
 * else 2 (bad input).  Every out-of-memory message in sim/ says "out of memory". */
int load_rc(const char *err)
{
    return strstr(err, "out of memory") ? 1 : 2;
}

/* Prints MSG on stderr as one line "latsim: MSG" (control characters escaped)
 * and returns CODE. */
int die(int code, const char *msg)
{
    return cu_die(code, "%s", msg);
}

/* cli_opt_fn of run: CTX is the run_opts. */
static int run_opt(void *ctx, int id, const char *v)
{
    run_opts *o = ctx;
    char msg[256], *end;
    unsigned long long x;
    switch (id) {
    case O_NO_STORE: o->store = 0; return 0;
    case O_VERBOSE: o->verbose = 1; return 0;
    case O_BAND: o->band = 1; return 0;
    case O_FROM_RUN:
        if (cu_parse_id("run", v, &o->from_run, msg, sizeof msg) != 0) return cu_die(2, "run: --from-run: %s", msg);
        return 0;
    case O_TIMESERIES: o->ts_path = v; return 0;
    case O_METRICS: o->mx_path = v; return 0;
    case O_METRICS_START:
        errno = 0;
        o->mx_start = strtod(v, &end);
        if (*end || end == v || errno || !(o->mx_start >= 0) || o->mx_start > 4102444800.0)
            return cu_die(2, "run: --metrics-start: expected a Unix time in seconds from 0 to 4102444800 (2100), got '%s'", v);
        return 0;
    case O_TRACE_EVENTS: o->trace_path = v; return 0;
    case O_TRACE_REQS:
        errno = 0;
        x = strtoull(v, &end, 10);
        if (*end || end == v || errno || v[0] == '-' || x < 1 || x > 10000000)
            return cu_die(2, "run: --trace-requests: expected a whole number from 1 to 10000000, got '%s'", v);
        o->trace_reqs = x;
        o->trace_reqs_given = 1;
        return 0;
    case O_INTERVAL:
        if (ts_parse_interval(v, &o->ts_interval, msg, sizeof msg) != 0) return cu_die(2, "run: --interval: %s", msg);
        return 0;
    case O_ALERT_K:
        errno = 0;
        o->alert_k = strtoull(v, &end, 10);
        if (*end || end == v || errno || v[0] == '-' || o->alert_k < 1 || o->alert_k > 1000000)
            return cu_die(2, "run: --alert-intervals: expected a whole number from 1 to 1000000, got '%s'", v);
        return 0;
    default:                        /* --seed, --replications */
        errno = 0;
        x = strtoull(v, &end, 10);
        if (*end || end == v || errno || v[0] == '-')
            return cu_die(2, "run: --%s: expected a non-negative whole number, got '%s'", id == O_SEED ? "seed" : "replications", v);
        if (id == O_SEED) {
            o->seed = x;
            o->seed_given = 1;
        } else {
            if (x < 1 || x > 10000) return cu_die(2, "run: --replications: must be between 1 and 10000, got '%s'", v);
            o->reps = (int) x;
            o->reps_given = 1;
        }
        return 0;
    }
}

/* Parses the command line into O.  Returns CLI_GO or the exit status. */
static int run_parse(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->reps = 1;
    o->store = 1;
    o->alert_k = ALERT_DEFAULT_K;
    o->trace_reqs = 1000;
    o->mx_start = OMX_DEFAULT_START;
    int rc = cli_parse(&run_cmd, argc, argv, &o->a, run_opt, o);
    if (rc != CLI_GO) return rc;
    if (o->trace_reqs_given && !o->trace_path) return die(2, "run: --trace-requests needs --trace-events OUT.json");
    if (o->a.npos > 1) return cu_die(2, "run: more than one scenario file ('%s', '%s')", o->a.pos[0], o->a.pos[1]);
    if (o->from_run) {
        if (o->a.npos) return cu_die(2, "run: give FILE or --from-run ID, not both ('%s')", o->a.pos[0]);
        return CLI_GO;
    }
    if (o->a.npos == 0) return die(2, "run: missing scenario FILE (see latsim run --help)");
    o->file = o->a.pos[0];
    return CLI_GO;
}

/* Loads and checks the scenario, its time series, output file and database
 * before anything runs.  Returns 0 or the exit status (printed). */
static int run_prepare(const run_opts *o, run_state *st)
{
    sqlite3 *db = NULL;
    int rc = 2;
    st->db_path = cu_db_path(o->a.db);
    scenario *sc = st->sc = scenario_new();
    if (!sc) { snprintf(st->err, sizeof st->err, "out of memory"); rc = 1; goto out; }
    if (o->from_run) {
        /* The stored configuration, its recorded cost models, then the --set overrides. */
        const char *sets[64 + CLI_MAX_SETS];
        if ((rc = from_run(o, st)) != 0) goto out;
        rc = 2;
        int n = 0;
        for (int i = 0; i < st->nfrom; i++) sets[n++] = st->from_sets[i];
        for (int i = 0; i < o->a.nsets; i++) sets[n++] = o->a.sets[i];
        if (scenario_load_text(sc, st->from_path, st->from_text, sets, n, st->err, sizeof st->err) != 0) {
            rc = load_rc(st->err);
            goto out;
        }
        if (!o->seed_given) scenario_set_seed(sc, st->from_seed);
    } else if (scenario_load(sc, o->file, o->a.sets, o->a.nsets, st->err, sizeof st->err) != 0) { rc = load_rc(st->err); goto out; }
    if (o->seed_given) scenario_set_seed(sc, o->seed);
    if (o->ts_path || o->mx_path || o->ts_interval > 0) scenario_set_ts_interval(sc, o->ts_interval > 0 ? o->ts_interval : ALERT_DEFAULT_INTERVAL_S);
    if (o->mx_path) {
        char msg[512];
        scenario_set_metrics(sc, 1);
        if (omx_check(scenario_expected_duration_s(sc), scenario_ts_interval(sc), scenario_npools(sc),
                      scenario_metric_replicas(sc), msg, sizeof msg) != 0) {
            snprintf(st->err, sizeof st->err, "run: --metrics: %s", msg);
            goto out;
        }
    }
    if (scenario_ts_interval(sc) > 0) {   /* before anything is written */
        char msg[512];
        if (ts_check_count(scenario_expected_duration_s(sc), scenario_ts_interval(sc), msg, sizeof msg) != 0) {
            snprintf(st->err, sizeof st->err, "run: %s: %s", o->ts_interval > 0 ? "--interval" : "--timeseries (default interval)", msg);
            goto out;
        }
    }
    /* Refused before the run, as the database is. */
    if (o->ts_path && cu_check_out("run", "--timeseries", o->ts_path, st->err, sizeof st->err) != 0) goto out;
    if (o->trace_path && cu_check_out("run", "--trace-events", o->trace_path, st->err, sizeof st->err) != 0) goto out;
    if (o->mx_path && cu_check_out("run", "--metrics", o->mx_path, st->err, sizeof st->err) != 0) goto out;
    /* The catalog is looked up (never written here); a run to be stored first
     * checks, without changing it, that the database can take it afterwards. */
    if (cu_check_db_path(st->db_path, st->err, sizeof st->err) != 0 ||
        (o->store && cu_check_db(st->db_path, st->err, sizeof st->err) != 0) ||
        store_open_lookup(st->db_path, &db, st->err, sizeof st->err) != 0 ||
        scenario_resolve(sc, db, st->err, sizeof st->err) != 0) { rc = load_rc(st->err); goto out; }
    if (scenario_check_memory(sc, scenario_memory_budget(), st->err, sizeof st->err) != 0) goto out;
    rc = 0;
out:
    if (db) store_close(db);
    if (rc) die(rc, st->err);
    return rc;
}

/* Runs the replications and aggregates them.  Returns 0 or 1 (printed). */
static int run_simulate(const run_opts *o, run_state *st)
{
    const scenario *sc = st->sc;
    int npools = scenario_npools(sc);
    st->runs = calloc((size_t) o->reps, sizeof *st->runs);
    st->load_sat = calloc((size_t) npools + 1, sizeof *st->load_sat);
    if (!st->runs || !st->load_sat) return die(1, "out of memory");
    cu_now(st->started, sizeof st->started);
    for (int i = 0; i < o->reps; i++) {
        sim_result res;
        /* The first replication only is traced. */
        scenario_set_trace_events(st->sc, i == 0 ? o->trace_path : NULL, o->trace_reqs);
        /* --band of one replication: its seed noise from its own batch means. */
        scenario_set_batch_means(st->sc, o->band && o->reps == 1);
        if (sim_run(sc, scenario_seed(sc) + (uint64_t) i, &res, st->err, sizeof st->err) != 0) {
            sim_result_free(&res);
            return die(1, st->err);
        }
        if (i == 0 && o->trace_path && sim_result_value(&res, "trace_truncated") > 0) {
            char note[1200];
            snprintf(note, sizeof note, "note: --trace-events %.900s: the first %llu requests traced; the run had more "
                     "(--trace-requests N raises the cap)", o->trace_path, (unsigned long long) sim_result_value(&res, "trace_requests"));
            die(0, note);
        }
        st->wall += sim_result_value(&res, "wall_time_s");
        if (i == 0) st->seed = run_seed_of(&res);
        for (int p = 0; p < npools && sim_result_pool(&res, p); p++)   /* the pools' verdicts (family "aside") */
            st->load_sat[p] |= sim_result_get(&res, sim_result_pool(&res, p), "load_saturated", "value") > 0;
        if (i == 0 && res.ts) {   /* the time series of the first replication */
            st->ts_n = ts_count(res.ts);
            st->ts = malloc((st->ts_n + 1) * sizeof *st->ts);
            if (!st->ts) { sim_result_free(&res); return die(1, "out of memory"); }
            if (st->ts_n) memcpy(st->ts, ts_rows(res.ts), st->ts_n * sizeof *st->ts);
        }
        if (i == 0 && res.omx) {  /* and its metrics */
            st->mx = res.omx;
            res.omx = NULL;
        }
        int f = report_flatten(&res, o->reps > 1 ? i : -1, &st->runs[i]);
        sim_result_free(&res);
        if (f) return die(1, "out of memory");
    }
    st->shown = &st->runs[0];
    if (o->reps > 1) {
        if (report_aggregate(st->runs, o->reps, &st->agg) != 0) return die(1, "out of memory");
        st->shown = &st->agg;
    }
    st->saturated = report_get(st->shown, "", "saturated", "value") > 0;
    return 0;
}

static int run_describe(const run_opts *o, run_state *st)
{
    const scenario *sc = st->sc;
    const slo_spec *spec = scenario_slo(sc);
    if (store_config_of(sc, &st->cfg, st->err, sizeof st->err) != 0) return die(1, st->err);
    if (slo_eval(spec, st->shown->rows, st->shown->n, &st->slo) != 0) return die(1, "out of memory");
    char *extra = NULL;
    size_t extra_len = 0, json_len = 0;
    FILE *mem = open_memstream(&extra, &extra_len);
    if (!mem) return die(1, "out of memory");
    /* The path in full (no truncation), escaped per RFC 8259. */
    fputs("\"scenario\": ", mem);
    report_json_str(mem, o->file);
    fprintf(mem, ", \"scenario_hash\": \"%016llx\", \"seed\": %llu, \"version\": ",
            (unsigned long long) st->cfg.hash, (unsigned long long) scenario_seed(sc));
    report_json_str(mem, LATSIM_VERSION);
    if (spec->n > 0) { fputs(", \"slo\": ", mem); slo_json(&st->slo, mem); }
    if (st->ts) {
        if (ts_alerts(st->ts, st->ts_n, spec, (size_t) o->alert_k, &st->alerts, &st->nalerts) != 0) {
            fclose(mem);
            free(extra);
            return die(1, "out of memory");
        }
        fprintf(mem, ", \"timeseries\": {\"interval_s\": %.9g, \"intervals\": %zu, \"alert_intervals\": %llu, \"alerts\": ",
                scenario_ts_interval(sc), st->ts_n, o->alert_k);
        ts_alerts_json(st->alerts, st->nalerts, mem);
        fputc('}', mem);
    }
    fclose(mem);
    mem = open_memstream(&st->json, &json_len);
    if (!mem) { free(extra); return die(1, "out of memory"); }
    report_json(st->shown, extra, mem);
    fclose(mem);
    free(extra);
    /* The prediction band last, after the report's own members (which keep
     * their place: a reader taking the first "throughput_rps" gets the run's). */
    size_t len = st->json ? strlen(st->json) : 0;
    if (st->nband && len >= 2 && !strcmp(st->json + len - 2, "}\n")) {
        char *whole = NULL;
        size_t wl = 0;
        if (!(mem = open_memstream(&whole, &wl))) return die(1, "out of memory");
        fwrite(st->json, 1, len - 2, mem);
        band_json(st, mem);
        fputs("}\n", mem);
        fclose(mem);
        free(st->json);
        st->json = whole;
    }
    return 0;
}

/* Prints the report: the JSON, or the table, SLO terms and time series. */
static void run_print(const run_opts *o, const run_state *st)
{
    const scenario *sc = st->sc;
    if (o->a.json) { fputs(st->json, stdout); return; }
    char title[8192];
    snprintf(title, sizeof title, "scenario %s  seed %llu  latsim %s", o->file, (unsigned long long) scenario_seed(sc), LATSIM_VERSION);
    report_table(st->shown, title, stdout);
    band_table(st, stdout);
    slo_table(&st->slo, stdout);
    if (!st->ts) return;
    printf("\ntime series: %zu intervals of %g s%s%s\n", st->ts_n, scenario_ts_interval(sc),
           o->ts_path ? " written to " : " (stored with the run)", o->ts_path ? ERRMSG_SHOWN(o->ts_path) : "");
    if (ts_alert_terms(scenario_slo(sc)) > 0) ts_alerts_table(st->alerts, st->nalerts, (size_t) o->alert_k, scenario_ts_interval(sc), stdout);
    else printf("alerts: none watched (no [slo] term on the p99 or p50 of e2e or ttft)\n");
}

/* Writes --timeseries OUT.csv, before the run is stored: a failure here stores
 * nothing.  Returns 0 or 1 (printed). */
static int run_write_series(const run_opts *o, run_state *st)
{
    if (!o->ts_path) return 0;
    char msg[256];
    FILE *f = cu_open_out("run", "--timeseries", o->ts_path, st->err, sizeof st->err);
    int w = f ? ts_write_csv(st->ts, st->ts_n, f, msg, sizeof msg) : -1;
    if (f && cu_close_out("run", "--timeseries", o->ts_path, f, st->err, sizeof st->err) != 0) w = -1;
    else if (f && w != 0) snprintf(st->err, sizeof st->err, "run: --timeseries %.900s: cannot write: %s", o->ts_path, msg);
    return w != 0 ? die(1, st->err) : 0;
}

/* Writes --metrics OUT.om, before the run is stored.  Returns 0 or 1 (printed). */
static int run_write_metrics(const run_opts *o, run_state *st)
{
    if (!o->mx_path || !st->mx) return 0;
    char msg[256];
    FILE *f = cu_open_out("run", "--metrics", o->mx_path, st->err, sizeof st->err);
    int w = f ? omx_write(st->mx, f, o->mx_start, msg, sizeof msg) : -1;
    if (f && cu_close_out("run", "--metrics", o->mx_path, f, st->err, sizeof st->err) != 0) w = -1;
    else if (f && w != 0) snprintf(st->err, sizeof st->err, "run: --metrics %.900s: cannot write: %s", o->mx_path, msg);
    return w != 0 ? die(1, st->err) : 0;
}

/* Stores the run (every replication's statistics and their aggregate).  Input
 * and database were checked before the run: failing now (a lock held longer
 * than the wait, a full disk) is a runtime failure, and the report printed
 * stays the run's record.  Returns 0 or 1 (printed). */
static int run_store(const run_opts *o, run_state *st)
{
    if (!o->store) return 0;
    const scenario *sc = st->sc;
    int ngpus, nmodels;
    const gpu_spec *gpus = scenario_gpus(sc, &ngpus);
    const model_spec *models = scenario_models(sc, &nmodels);
    sqlite3 *db = NULL;
    store_stat *all = NULL;
    int rc = 1;
    if (store_open(st->db_path, &db, st->err, sizeof st->err) != 0) goto not_stored;
    size_t nstats = 0;
    for (int i = 0; i < o->reps; i++) nstats += st->runs[i].n;
    if (o->reps > 1) nstats += st->agg.n;
    all = malloc((nstats + 1) * sizeof *all);
    if (!all) { die(1, "out of memory"); goto out; }
    size_t m = 0;
    if (o->reps > 1) for (size_t j = 0; j < st->agg.n; j++) all[m++] = st->agg.rows[j];
    for (int i = 0; i < o->reps; i++)
        for (size_t j = 0; j < st->runs[i].n; j++) all[m++] = st->runs[i].rows[j];
    planstore_extra pextra = { .slo = scenario_slo(sc)->n > 0 ? &st->slo : NULL, .rep = st->shown };
    store_run run = {
        .scenario_path = o->file, .scenario_text = st->cfg.text, .scenario_hash = st->cfg.hash, .seed = scenario_seed(sc),
        .replications = o->reps, .version = LATSIM_VERSION, .started_at = st->started, .wall_s = st->wall,
        .status = st->saturated ? "saturated" : "ok", .json = st->json,
        .config = st->cfg.kv, .nconfig = st->cfg.n, .stats = all, .nstats = m,
        .gpus = gpus, .ngpus = (size_t) ngpus, .models = models, .nmodels = (size_t) nmodels,
        .extra = planstore_run_extra, .extra_arg = &pextra,
        .ts = st->ts, .nts = st->ts_n,
    };
    int64_t id;
    if (store_save_run(db, &run, &id, st->err, sizeof st->err) != 0) goto not_stored;
    if (!o->a.json) printf("\nrun %lld stored in %s\n", (long long) id, ERRMSG_SHOWN(st->db_path));
    rc = 0;
    goto out;
not_stored:      /* the run was reported, but the database failed: ERR says why */
    cu_die(1, "run not stored: %s", st->err);
out:
    free(all);
    if (db) store_close(db);
    return rc;
}

/* Says what went wrong inside the run, one line each: requests rejected as too
 * long, and each saturated pool.  Returns 3 when saturated, else 0. */
static int run_notes(const run_opts *o, run_state *st)
{
    const scenario *sc = st->sc;
    /* Each pool's rows as a view (report_scope): linear in the rows with many pools. */
    size_t cur = 0;
    for (int i = 0; i < scenario_npools(sc); i++) {
        const char *name = scenario_pool_name(sc, i);
        report view = report_scope(st->shown, name, &cur);
        const report *shown = &view;
        double tl = report_get(shown, name, "too_long", "value");
        if (tl > 0) {
            snprintf(st->err, sizeof st->err, "note: %s:%d: [pool %s]: %.0f requests rejected: prompt + output exceed max_seq_len = %.0f "
                     "(see max_seq_len and truncate in docs/llm.md)", o->file, scenario_pool_line(sc, i), name, tl,
                     report_get(shown, name, "max_seq_len", "value"));
            die(0, st->err);
        }
    }
    if (report_get(st->shown, "", "warmup_cache_capped", "value") > 0) {
        /* The automatic warm-up stopped waiting for a cache (docs/metrics.md, warmup_cache_s):
         * one line, naming the cache that was still filling (the latest to fail the test). */
        int last = -1;
        for (int i = 0; i < scenario_npools(sc) && last < 0; i++)
            if (report_get(st->shown, scenario_pool_name(sc, i), "warmup_settled", "value") == 0) last = i;
        snprintf(st->err, sizeof st->err, "warning: %s:%d: [pool %s]: the cache's hit rate had not settled when the automatic "
                 "warm-up reached its cap (%.0f requests, %.0f s): the run is too short for it, so the results depend on the "
                 "run's length; raise [sim] requests", o->file, last >= 0 ? scenario_pool_line(sc, last) : 0,
                 last >= 0 ? scenario_pool_name(sc, last) : "?", report_get(st->shown, "", "warmup_requests", "value"),
                 report_get(st->shown, "", "warmup_s", "value"));
        die(0, st->err);
    } else for (int i = 0; i < scenario_npools(sc); i++) {
        /* A result cache whose hit rate still rose through the window (docs/gateway.md). */
        const char *name = scenario_pool_name(sc, i);
        report view = report_scope(st->shown, name, &cur);
        const report *shown = &view;
        double rise = report_get(shown, name, "hit_rate_rise", "value"), se = report_get(shown, name, "hit_rate_rise_se", "value");
        if (rise > 0 && se > 0 && rise > 4 * se) {
            snprintf(st->err, sizeof st->err, "warning: %s:%d: [pool %s]: the hit rate still rose during the measured window "
                     "(%+.3f from its first half to its second, %.1f standard errors): the cache had not settled, so the "
                     "results depend on the run's length; raise [sim] warmup or requests", o->file, scenario_pool_line(sc, i),
                     name, rise, rise / se);
            die(0, st->err);
        }
    }
    if (!st->saturated) return 0;
    /* Stored and printed as saturated; the exit status and one line per
     * saturated pool say so to scripts and CI. */
    fflush(stdout);
    for (int i = 0; i < scenario_npools(sc); i++) {
        const char *name = scenario_pool_name(sc, i);
        report view = report_scope(st->shown, name, &cur);
        const report *shown = &view;
        if (!(report_get(shown, name, "saturated", "value") > 0)) continue;
        double rho = report_get(shown, name, "offered_load", "value");
        if (st->load_sat[i])
            snprintf(st->err, sizeof st->err, "%s:%d: [pool %s]: saturated: offered load %.3g >= 1 (arrival rate x mean "
                     "service / capacity: docs/metrics.md, offered_load)",
                     o->file, scenario_pool_line(sc, i), name, rho);
        else
            snprintf(st->err, sizeof st->err, "%s:%d: [pool %s]: saturated: the number of requests in it kept growing during the run",
                     o->file, scenario_pool_line(sc, i), name);
        die(0, st->err);
    }
    snprintf(st->err, sizeof st->err, "%s: saturated: the load exceeds what the system serves; latency percentiles are not reported", o->file);
    die(0, st->err);
    return 3;
}

int run_main(int argc, char **argv)
{
    run_opts o;
    run_state st;
    memset(&st, 0, sizeof st);
    int rc = run_parse(argc, argv, &o);
    if (rc != CLI_GO) return rc;
    if ((rc = run_prepare(&o, &st)) != 0) goto out;
    if (o.from_run) {               /* reported and stored under the stored run's file */
        o.file = st.from_path;
        if (!o.reps_given && st.from_reps > 1) o.reps = st.from_reps;
    }
    if (o.verbose) scenario_print_defaults(st.sc, stderr);
    if ((rc = run_simulate(&o, &st)) != 0) goto out;
    if ((rc = run_band(&o, &st)) != 0) goto out;
    if ((rc = run_describe(&o, &st)) != 0) goto out;
    run_print(&o, &st);       /* the report first: if storing fails, the results are still shown */
    prov_warn(st.shown);      /* once: the step times are the uncalibrated roofline's */
    if ((rc = run_write_series(&o, &st)) != 0) goto out;
    if ((rc = run_write_metrics(&o, &st)) != 0) goto out;
    fflush(stdout);
    if ((rc = run_store(&o, &st)) != 0) goto out;
    rc = run_notes(&o, &st);
out:
    if (st.runs) for (int i = 0; i < o.reps; i++) report_free(&st.runs[i]);
    free(st.runs);
    report_free(&st.agg);
    report_free(&st.band_end[0]);
    report_free(&st.band_end[1]);
    free(st.json);
    free(st.ts);
    omx_free(st.mx);
    free(st.alerts);
    free(st.load_sat);
    store_config_free(&st.cfg);
    slo_result_free(&st.slo);
    scenario_delete(st.sc);
    free(st.from_path);
    free(st.from_text);
    return rc;
}

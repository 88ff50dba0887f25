/* latsim.c -- the command-line front end: argument parsing, exit codes, and
 * wiring of scenario -> simulation -> report -> database.  All the work is in
 * sim/; this file only calls it.  Exit codes: 0 success, 1 runtime failure,
 * 2 bad input (usage, scenario, trace, database path).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <gsl/gsl_errno.h>
#include "report/alert.h"
#include "bench.h"
#include "cliutil.h"
#include "calib.h"
#include "engine/errmsg.h"
#include "core/catalog.h"
#include "store/planstore.h"
#include "report/report.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "store/store.h"
#include "report/tsalert.h"
#include "run/tseries.h"

#ifndef LATSIM_VERSION
#define LATSIM_VERSION "0.1"
#endif

#define MAX_SETS 256

static const char *USAGE =
    "usage: latsim COMMAND [options]\n"
    "\n"
    "Discrete-event latency simulator and capacity planner for AI inference serving.\n"
    "\n"
    "commands:\n"
    "  run FILE [options]     simulate a scenario, print the report, store the run\n"
    "  runs                   list stored runs\n"
    "  show ID                print a stored run\n"
    "  catalog                list the GPUs and models in the catalog\n"
    "  catalog add FILE       add the [gpu NAME] / [model NAME] sections of FILE to the catalog\n"
    "  keys                   list every scenario section and key, with defaults\n"
    "  bench                  run the speed benchmark and print its table\n"
    "  calib ...              measurements, importers, fitted cost models (latsim calib --help)\n"
    "  cost ...               predicted step time of a cost model (latsim cost --help)\n"
    "  echo [--port P]        TCP echo server for latsim calib net --target\n"
    "  sweep FILE --vary K=R  run a scenario over a range of values; highest meeting the SLO\n"
    "  plan FILE --target-rate R   cheapest configuration meeting the [slo] at rate R\n"
    "  check [FILE...]        SLO and baseline regression check for CI (exit 0/1/2, --junit)\n"
    "  baseline accept RUN    make a stored run its scenario's baseline\n"
    "  compare A B            two scenarios or runs side by side, with % differences\n"
    "  plot RUN|SWEEP|PLAN    gnuplot pictures: CDFs, latency vs load, breakdown, cost frontier\n"
    "\n"
    "run options (latsim run --help for details):\n"
    "  --seed N               run seed\n"
    "  --set S.K=V            override key K of section S (repeatable)\n"
    "  --json                 print one JSON object instead of the table\n"
    "  --replications N       N independent runs, with 95% confidence intervals\n"
    "  --no-store             do not write the run to the database\n"
    "  --timeseries OUT.csv   per-interval time series (also stored), SLO alerts\n"
    "\n"
    "common options:\n"
    "  --db PATH              database file (default $LATSIM_DB, else ./latsim.db)\n"
    "  -h, --help             help (latsim run --help for the run options)\n"
    "  --version              print the version\n";

static const char *RUN_USAGE =
    "usage: latsim run FILE [--seed N] [--set section.key=value]... [--json]\n"
    "                       [--db PATH] [--replications N] [--no-store]\n"
    "                       [--timeseries OUT.csv] [--interval 60s] [--alert-intervals K]\n"
    "\n"
    "Simulates the scenario in FILE (an INI file; see latsim keys and README.md),\n"
    "prints the report and stores the run in the database.\n"
    "\n"
    "  --seed N             run seed (default: [sim] seed, else 1)\n"
    "  --set S.K=V          override key K of section S, e.g. --set \"pool cpu.servers=5\"\n"
    "                       or --set workload.rate=80 (repeatable)\n"
    "  --json               print one JSON object instead of the table\n"
    "  --db PATH            database file (default $LATSIM_DB, else ./latsim.db)\n"
    "  --replications N     run N independent replications (seeds seed..seed+N-1) and\n"
    "                       report each statistic with a 95% confidence interval\n"
    "  --no-store           do not write the run to the database\n"
    "  --timeseries OUT.csv write the run's time series (one row per interval:\n"
    "                       arrivals, retries, served, errors, throughput, P50/P99 of\n"
    "                       TTFT and E2E, queue, replicas up, utilisation) to OUT.csv,\n"
    "                       store it with the run, and list the SLO alerts\n"
    "  --interval DUR       interval of the time series (default 60s; 500ms, 1m, 2h...);\n"
    "                       alone, the series is stored but no CSV is written\n"
    "  --alert-intervals K  an alert fires when a P99/P50 [slo] term is missed in K\n"
    "                       consecutive intervals (default 15)\n"
    "\n"
    "exit status: 0 done, 1 runtime error, 2 bad input (usage, scenario, trace or\n"
    "database), 3 saturated: the run is reported and stored, marked saturated, and a\n"
    "line on stderr names each saturated pool.\n";

/* The exit status of a failed load: 1 (runtime failure) when memory ran out,
 * else 2 (bad input).  Every out-of-memory message in sim/ says "out of memory". */
static int load_rc(const char *err)
{
    return strstr(err, "out of memory") ? 1 : 2;
}

/* Prints MSG on stderr as one line "latsim: MSG", control characters escaped
 * (a name or value holding a newline or an ANSI escape cannot break the line or
 * act on the terminal). */
static void say(const char *msg)
{
    char line[4096];
    fprintf(stderr, "latsim: %s\n", errmsg_field(msg, line, sizeof line));
}

static int die(int code, const char *msg)
{
    say(msg);
    return code;
}

/* Opens the database for catalog look-ups (store_open_lookup: the file is never
 * written here); when the run is to be stored (STORE), first checks, without
 * changing it, that the database can take it after the run (cu_check_db). */
static int open_for_lookup(const char *path, int store, sqlite3 **db, char *err, size_t n)
{
    if (cu_check_db_path(path, err, n) != 0) return -1;
    if (store && cu_check_db(path, err, n) != 0) return -1;
    return store_open_lookup(path, db, err, n);
}

static void iso_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int cmd_run(int argc, char **argv)
{
    const char *file = NULL, *dbopt = NULL;
    const char *sets[MAX_SETS];
    int nsets = 0, json = 0, reps = 1, store = 1, seed_given = 0;
    uint64_t seed = 0;
    char err[2048];
    const char *ts_path = NULL;     /* --timeseries */
    double ts_interval = 0;         /* --interval, s (0: not given) */
    unsigned long long alert_k = ALERT_DEFAULT_K;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(RUN_USAGE, stdout); return 0; }
        else if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--no-store")) store = 0;
        else if (!strcmp(a, "--timeseries") || !strcmp(a, "--interval") || !strcmp(a, "--alert-intervals")) {
            if (i + 1 >= argc) { snprintf(err, sizeof err, "run: %s needs a value (see latsim run --help)", a); return die(2, err); }
            const char *v = argv[++i];
            char msg[256];
            if (!strcmp(a, "--timeseries")) ts_path = v;
            else if (!strcmp(a, "--interval")) {
                if (ts_parse_interval(v, &ts_interval, msg, sizeof msg) != 0) {
                    snprintf(err, sizeof err, "run: --interval: %s", msg);
                    return die(2, err);
                }
            } else {
                char *end;
                errno = 0;
                alert_k = strtoull(v, &end, 10);
                if (*end || end == v || errno || v[0] == '-' || alert_k < 1 || alert_k > 1000000) {
                    snprintf(err, sizeof err, "run: --alert-intervals: expected a whole number from 1 to 1000000, got '%s'", v);
                    return die(2, err);
                }
            }
        }
        else if (!strcmp(a, "--seed") || !strcmp(a, "--set") || !strcmp(a, "--db") || !strcmp(a, "--replications")) {
            if (i + 1 >= argc) { snprintf(err, sizeof err, "run: %s needs a value (see latsim run --help)", a); return die(2, err); }
            const char *v = argv[++i];
            if (!strcmp(a, "--set")) {
                if (nsets == MAX_SETS) return die(2, "run: too many --set options (max 256)");
                sets[nsets++] = v;
            } else if (!strcmp(a, "--db")) dbopt = v;
            else {
                char *end;
                errno = 0;
                unsigned long long x = strtoull(v, &end, 10);
                if (*end || end == v || errno || v[0] == '-') {
                    snprintf(err, sizeof err, "run: %s: expected a non-negative whole number, got '%s'", a, v);
                    return die(2, err);
                }
                if (!strcmp(a, "--seed")) { seed = x; seed_given = 1; }
                else {
                    if (x < 1 || x > 10000) { snprintf(err, sizeof err, "run: --replications: must be between 1 and 10000, got '%s'", v); return die(2, err); }
                    reps = (int) x;
                }
            }
        } else if (a[0] == '-' && a[1]) {
            snprintf(err, sizeof err, "run: unknown option '%s' (see latsim run --help)", a);
            return die(2, err);
        } else if (!file) file = a;
        else { snprintf(err, sizeof err, "run: more than one scenario file ('%s', '%s')", file, a); return die(2, err); }
    }
    if (!file) return die(2, "run: missing scenario FILE (see latsim run --help)");

    scenario sc;
    sqlite3 *db = NULL;
    report *runs = NULL;
    report agg = { 0 };
    char *json_text = NULL;
    size_t json_len = 0;
    int rc = 2;
    ts_row *ts_rows_kept = NULL;    /* the time series of the first replication */
    size_t ts_n = 0;
    ts_alert *alerts = NULL;
    size_t nalerts = 0;
    int *load_sat = NULL;           /* per pool: saturated by its offered load in some replication */
    const char *path = cu_db_path(dbopt);
    if (scenario_load(&sc, file, sets, nsets, err, sizeof err) != 0) { say(err); rc = load_rc(err); goto done; }
    if (seed_given) sc.seed = seed;
    if (ts_path || ts_interval > 0) sc.ts_interval_s = ts_interval > 0 ? ts_interval : ALERT_DEFAULT_INTERVAL_S;
    if (sc.ts_interval_s > 0) {   /* before anything is written */
        char msg[512];
        if (ts_check_count(scenario_expected_duration_s(&sc), sc.ts_interval_s, msg, sizeof msg) != 0) {
            snprintf(err, sizeof err, "run: %s: %s", ts_interval > 0 ? "--interval" : "--timeseries (default interval)", msg);
            say(err);
            goto done;
        }
    }
    /* Refused before the run, as the database is. */
    if (ts_path && cu_check_out("run", "--timeseries", ts_path, err, sizeof err) != 0) { say(err); goto done; }
    if (open_for_lookup(path, store, &db, err, sizeof err) != 0) { say(err); rc = load_rc(err); goto done; }
    if (scenario_resolve(&sc, db, err, sizeof err) != 0) { say(err); rc = load_rc(err); goto done; }
    if (scenario_check_memory(&sc, scenario_memory_budget(), err, sizeof err) != 0) { say(err); goto done; }
    store_close(db);
    db = NULL;

    rc = 1;
    runs = calloc((size_t) reps, sizeof *runs);
    load_sat = calloc((size_t) sc.npools + 1, sizeof *load_sat);
    if (!runs || !load_sat) { fprintf(stderr, "latsim: out of memory\n"); goto done; }
    char started[32];
    iso_now(started, sizeof started);
    double wall = 0;
    for (int i = 0; i < reps; i++) {
        sim_result res;
        if (sim_run(&sc, sc.seed + (uint64_t) i, &res, err, sizeof err) != 0) {
            say(err);
            sim_result_free(&res);
            goto done;
        }
        wall += res.wall_time_s;
        for (int p = 0; p < res.npools && p < sc.npools; p++) load_sat[p] |= res.pools[p].load_saturated;
        if (i == 0 && res.ts) {   /* the time series of the first replication */
            ts_n = ts_count(res.ts);
            ts_rows_kept = malloc((ts_n + 1) * sizeof *ts_rows_kept);
            if (!ts_rows_kept) { sim_result_free(&res); fprintf(stderr, "latsim: out of memory\n"); goto done; }
            if (ts_n) memcpy(ts_rows_kept, ts_rows(res.ts), ts_n * sizeof *ts_rows_kept);
        }
        int f = report_flatten(&res, reps > 1 ? i : -1, &runs[i]);
        sim_result_free(&res);
        if (f) { fprintf(stderr, "latsim: out of memory\n"); goto done; }
    }
    const report *shown = &runs[0];
    if (reps > 1) {
        if (report_aggregate(runs, reps, &agg) != 0) { fprintf(stderr, "latsim: out of memory\n"); goto done; }
        shown = &agg;
    }
    int saturated = report_get(shown, "", "saturated", "value") > 0;

    /* The effective configuration and its hash. */
    uint64_t h = STORE_HASH_INIT;
    store_kv *kv = calloc(sc.raw.n + 1, sizeof *kv);
    if (!kv) { fprintf(stderr, "latsim: out of memory\n"); goto done; }
    for (size_t i = 0; i < sc.raw.n; i++) {
        kv[i].section = sc.raw.e[i].section;
        kv[i].key = sc.raw.e[i].key;
        kv[i].value = sc.raw.e[i].value;
        h = store_hash(kv[i].section, strlen(kv[i].section) + 1, h);
        h = store_hash(kv[i].key, strlen(kv[i].key) + 1, h);
        h = store_hash(kv[i].value, strlen(kv[i].value) + 1, h);
    }
    slo_result slo = { 0 };
    if (slo_eval(&sc.slo, shown->rows, shown->n, &slo) != 0) { free(kv); fprintf(stderr, "latsim: out of memory\n"); goto done; }
    char *extra2 = NULL;
    size_t extra2_len = 0;
    FILE *mem = open_memstream(&extra2, &extra2_len);
    if (!mem) { free(kv); slo_result_free(&slo); fprintf(stderr, "latsim: out of memory\n"); goto done; }
    /* The path in full (no truncation), escaped per RFC 8259. */
    fputs("\"scenario\": ", mem);
    report_json_str(mem, file);
    fprintf(mem, ", \"scenario_hash\": \"%016llx\", \"seed\": %llu, \"version\": ",
            (unsigned long long) h, (unsigned long long) sc.seed);
    report_json_str(mem, LATSIM_VERSION);
    if (sc.slo.n > 0) { fputs(", \"slo\": ", mem); slo_json(&slo, mem); }
    if (ts_rows_kept) {
        if (ts_alerts(ts_rows_kept, ts_n, &sc.slo, (size_t) alert_k, &alerts, &nalerts) != 0) {
            fclose(mem); free(extra2); free(kv); slo_result_free(&slo); fprintf(stderr, "latsim: out of memory\n"); goto done;
        }
        fprintf(mem, ", \"timeseries\": {\"interval_s\": %.9g, \"intervals\": %zu, \"alert_intervals\": %llu, \"alerts\": ",
                sc.ts_interval_s, ts_n, alert_k);
        ts_alerts_json(alerts, nalerts, mem);
        fputc('}', mem);
    }
    fclose(mem);
    mem = open_memstream(&json_text, &json_len);
    if (!mem) { free(kv); free(extra2); slo_result_free(&slo); fprintf(stderr, "latsim: out of memory\n"); goto done; }
    report_json(shown, extra2, mem);
    fclose(mem);
    free(extra2);

    /* The report first: if storing fails, the results are still shown. */
    if (json) fputs(json_text, stdout);
    else {
        char title[8192];
        snprintf(title, sizeof title, "scenario %s  seed %llu  latsim %s", file, (unsigned long long) sc.seed, LATSIM_VERSION);
        report_table(shown, title, stdout);
        slo_table(&slo, stdout);
        if (ts_rows_kept) {
            printf("\ntime series: %zu intervals of %g s%s%s\n", ts_n, sc.ts_interval_s,
                   ts_path ? " written to " : " (stored with the run)", ts_path ? ERRMSG_SHOWN(ts_path) : "");
            if (ts_alert_terms(&sc.slo) > 0) ts_alerts_table(alerts, nalerts, (size_t) alert_k, sc.ts_interval_s, stdout);
            else printf("alerts: none watched (no [slo] term on the p99 or p50 of e2e or ttft)\n");
        }
    }
    if (ts_path) {   /* written before the run is stored: a failure here stores nothing (exit 1) */
        char msg[256];
        FILE *f = cu_open_out("run", "--timeseries", ts_path, err, sizeof err);
        int w = f ? ts_write_csv(ts_rows_kept, ts_n, f, msg, sizeof msg) : -1;
        if (f && cu_close_out("run", "--timeseries", ts_path, f, err, sizeof err) != 0) w = -1;
        else if (f && w != 0) snprintf(err, sizeof err, "run: --timeseries %.900s: cannot write: %s", ts_path, msg);
        if (w != 0) { free(kv); slo_result_free(&slo); say(err); goto done; }
    }
    fflush(stdout);
    if (store) {
        /* Input and database were checked before the run: failing now (a lock held
         * longer than the wait, a full disk) is a runtime failure, exit 1; the
         * report above stays the run's record. */
        if (store_open(path, &db, err, sizeof err) != 0) goto not_stored;
        size_t nstats = 0;
        for (int i = 0; i < reps; i++) nstats += runs[i].n;
        if (reps > 1) nstats += agg.n;
        store_stat *all = malloc((nstats + 1) * sizeof *all);
        if (!all) { free(kv); slo_result_free(&slo); fprintf(stderr, "latsim: out of memory\n"); goto done; }
        planstore_extra pextra = { .slo = sc.slo.n > 0 ? &slo : NULL, .rep = shown };
        size_t m = 0;
        if (reps > 1) for (size_t j = 0; j < agg.n; j++) all[m++] = agg.rows[j];
        for (int i = 0; i < reps; i++)
            for (size_t j = 0; j < runs[i].n; j++) all[m++] = runs[i].rows[j];
        store_run run = {
            .scenario_path = file, .scenario_text = sc.raw.text, .scenario_hash = h, .seed = sc.seed,
            .replications = reps, .version = LATSIM_VERSION, .started_at = started, .wall_s = wall,
            .status = saturated ? "saturated" : "ok", .json = json_text,
            .config = kv, .nconfig = sc.raw.n, .stats = all, .nstats = m,
            .gpus = sc.gpus, .ngpus = (size_t) sc.ngpus, .models = sc.models, .nmodels = (size_t) sc.nmodels,
            .extra = planstore_run_extra, .extra_arg = &pextra,
            .ts = ts_rows_kept, .nts = ts_n,
        };
        int64_t id;
        int s = store_save_run(db, &run, &id, err, sizeof err);
        free(all);
        if (s != 0) goto not_stored;
        if (!json) printf("\nrun %lld stored in %s\n", (long long) id, ERRMSG_SHOWN(path));
    }
    free(kv);
    rc = 0;
    slo_result_free(&slo);
    for (int i = 0; i < sc.npools; i++) {
        double tl = report_get(shown, sc.pools[i].name, "too_long", "value");
        if (tl > 0) {
            snprintf(err, sizeof err, "note: %s:%d: [pool %s]: %.0f requests rejected: prompt + output exceed max_seq_len = %.0f "
                    "(see max_seq_len and truncate in README)", file, sc.pools[i].line, sc.pools[i].name, tl,
                    report_get(shown, sc.pools[i].name, "max_seq_len", "value"));
            say(err);
        }
    }
    if (saturated) {
        /* Stored and printed as saturated; the exit status and one line per
         * saturated pool say so to scripts and CI. */
        fflush(stdout);
        for (int i = 0; i < sc.npools; i++) {
            const char *name = sc.pools[i].name;
            if (!(report_get(shown, name, "saturated", "value") > 0)) continue;
            double rho = report_get(shown, name, "offered_load", "value");
            if (load_sat[i])
                snprintf(err, sizeof err, "%s:%d: [pool %s]: saturated: offered load %.3g >= 1 (arrival rate x mean service / servers)",
                        file, sc.pools[i].line, name, rho);
            else
                snprintf(err, sizeof err, "%s:%d: [pool %s]: saturated: the number of requests in it kept growing during the run",
                        file, sc.pools[i].line, name);
            say(err);
        }
        if (report_get(shown, "", "saturated", "value") > 0) {
            snprintf(err, sizeof err, "%s: saturated: the load exceeds what the system serves; latency percentiles are not reported", file);
            say(err);
        }
        rc = 3;
    }
    goto done;
not_stored:      /* the run was reported, but the database failed: ERR says why */
    free(kv);
    slo_result_free(&slo);
    {
        char m[2200];
        snprintf(m, sizeof m, "run not stored: %s", err);
        say(m);
    }
    rc = 1;
done:
    if (runs) for (int i = 0; i < reps; i++) report_free(&runs[i]);
    free(runs);
    report_free(&agg);
    free(json_text);
    free(ts_rows_kept);
    free(alerts);
    free(load_sat);
    if (db) store_close(db);
    scenario_free(&sc);
    return rc;
}

/* Parses the trailing [--db PATH] of the simple commands; returns the count of
 * other arguments left in ARGV, or -1 on a usage error. */
static int common_opts(int argc, char **argv, const char **dbopt)
{
    int k = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--db")) {
            if (i + 1 >= argc) return -1;
            *dbopt = argv[++i];
        } else argv[k++] = argv[i];
    }
    return k;
}

/* cu_write_fn of `catalog add`: puts every entry of ARG (the file loaded as a
 * scenario); they were validated before, so a failure here is the database's
 * (exit 1). */
static int catalog_add_write(sqlite3 *db, int dry, void *arg, char *err, size_t n)
{
    const scenario *sc = arg;
    for (int i = 0; i < sc->ngpus; i++) {
        if (catalog_put_gpu(db, &sc->gpus[i], err, n) != 0) return 1;
        if (!dry) printf("added gpu %s\n", ERRMSG_SHOWN(sc->gpus[i].name));
    }
    for (int i = 0; i < sc->nmodels; i++) {
        if (catalog_put_model(db, &sc->models[i], err, n) != 0) return 1;
        if (!dry) printf("added model %s\n", ERRMSG_SHOWN(sc->models[i].name));
    }
    return 0;
}

/* `latsim catalog add FILE`: the file is read and every entry validated like a
 * scenario's before the database is opened; then all of them are written in one
 * transaction (cu_write_db).  Returns the exit status. */
static int catalog_add(int n, char **argv, const char *path)
{
    char err[2048];
    if (n != 2 || strcmp(argv[0], "add")) return die(2, "catalog: expected no argument or 'add FILE'");
    scenario sc;
    const char *fake[] = { "workload.rate=1", "pool x.service_ms=const(1)" };
    if (scenario_load(&sc, argv[1], fake, 2, err, sizeof err) != 0) {
        scenario_free(&sc);
        return die(load_rc(err), err);
    }
    int rc = 0;
    if (sc.ngpus + sc.nmodels == 0) { snprintf(err, sizeof err, "%s: no [gpu NAME] or [model NAME] section", argv[1]); rc = 2; }
    for (int i = 0; i < sc.ngpus && rc == 0; i++)
        if (catalog_check_gpu(&sc.gpus[i], err, sizeof err) != 0) rc = 2;
    for (int i = 0; i < sc.nmodels && rc == 0; i++)
        if (catalog_check_model(&sc.models[i], err, sizeof err) != 0) rc = 2;
    if (rc == 0) rc = cu_write_db(path, catalog_add_write, &sc, NULL, err, sizeof err);
    if (rc != 0) say(err);
    scenario_free(&sc);
    return rc;
}

/* The help of runs, show and catalog. */
static const char *db_usage(const char *cmd)
{
    if (!strcmp(cmd, "runs"))
        return "usage: latsim runs [--db PATH]\n\n"
               "Lists the stored runs, one line each, newest last: id, start time, status,\n"
               "seed, wall time, scenario, E2E P99.  The database is opened read-only (default $LATSIM_DB,\n"
               "else ./latsim.db).  Exit status: 0, 2 bad input (no such database).\n";
    if (!strcmp(cmd, "show"))
        return "usage: latsim show RUN [--db PATH]\n\n"
               "Prints stored run RUN (an ID from latsim runs): metadata, effective\n"
               "configuration, every statistic and its SLO terms as the run printed them.\n"
               "The database is opened read-only.  Exit status: 0, 1 failure, 2 bad input.\n";
    return "usage: latsim catalog [--db PATH]\n"
           "       latsim catalog add FILE [--db PATH]\n\n"
           "Lists the GPUs and models of the catalog (built in, and those added to the\n"
           "database), with their sources; `add` stores the [gpu NAME] and [model NAME]\n"
           "sections of FILE, validated like a scenario's, all or none.\n"
           "Exit status: 0, 1 failure, 2 bad input.\n";
}

static int cmd_db(const char *cmd, int argc, char **argv)
{
    const char *dbopt = NULL;
    char err[2048] = "";
    int n = common_opts(argc, argv, &dbopt);
    if (n < 0) return die(2, "--db needs a PATH");
    for (int i = 0; i < n; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { fputs(db_usage(cmd), stdout); return 0; }
    const char *path = cu_db_path(dbopt);
    sqlite3 *db = NULL;
    int rc = 2;
    int64_t show_id = 0;
    if (!strcmp(cmd, "show")) {          /* the argument is checked before the database */
        if (n != 1) return die(2, "show: expected one run ID (see latsim runs)");
        if (cu_parse_id("run", argv[0], &show_id, err, sizeof err) != 0) {
            char m[2200];
            snprintf(m, sizeof m, "show: %s (see latsim runs)", err);
            return die(2, m);
        }
    }
    if (cu_check_db_path(path, err, sizeof err) != 0) return die(2, err);
    if (!strcmp(cmd, "catalog") && n > 0) return catalog_add(n, argv, path);
    /* runs, show and catalog only read: the file is opened read-only and never
     * given a schema (an empty or foreign file is refused, unchanged). */
    if (!strcmp(cmd, "catalog") && access(path, F_OK) != 0) {
        if (store_open(":memory:", &db, err, sizeof err) != 0) return die(load_rc(err), err);
    } else if (store_open_readonly(path, &db, err, sizeof err) != 0) return die(load_rc(err), err);

    if (!strcmp(cmd, "runs")) {
        if (n != 0) { snprintf(err, sizeof err, "runs: unexpected argument '%s'", argv[0]); say(err); err[0] = '\0'; goto done; }
        rc = store_list_runs(db, stdout, err, sizeof err) == 0 ? 0 : 1;
    } else if (!strcmp(cmd, "show")) {
        int64_t id = show_id;
        int s = store_show_run(db, id, stdout, err, sizeof err);
        if (s == 0 && planstore_show_slo(db, id, stdout, err, sizeof err) != 0) s = -1;
        rc = s == 0 ? 0 : (s == 1 ? 2 : 1);
    } else if (!strcmp(cmd, "catalog")) rc = catalog_print(db, stdout, err, sizeof err) == 0 ? 0 : 1;
    if (rc != 0 && err[0]) say(err);
done:
    store_close(db);
    return rc;
}

int main(int argc, char **argv)
{
    /* GSL's default handler aborts on any error (an allocation that fails): off,
     * so that the NULL and status checks after each GSL call do their work. */
    gsl_set_error_handler_off();
    if (argc < 2) { fputs(USAGE, stderr); return 2; }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) { fputs(USAGE, stdout); return 0; }
    if (!strcmp(cmd, "--version")) { printf("latsim %s\n", LATSIM_VERSION); return 0; }
    if (!strcmp(cmd, "run")) return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "runs") || !strcmp(cmd, "show") || !strcmp(cmd, "catalog"))
        return cmd_db(cmd, argc - 2, argv + 2);
    if (!strcmp(cmd, "keys")) {
        if (argc > 2 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
            fputs("usage: latsim keys\n\nLists every scenario section and key with its default and meaning\n"
                  "(README, Scenario files).\n", stdout);
            return 0;
        }
        if (argc > 2) return die(2, "keys: unexpected argument (see latsim keys --help)");
        scenario_print_keys(stdout);
        return 0;
    }
    if (!strcmp(cmd, "bench")) return bench_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "calib")) return calib_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "cost")) return cost_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "echo")) return echo_main(argc - 2, argv + 2);
    int prc = planner_dispatch(cmd, argc - 2, argv + 2);   /* sweep, plan, check, baseline, compare, plot */
    if (prc >= 0) return prc;
    char err[512];
    snprintf(err, sizeof err, "unknown command '%s' (see latsim --help)", cmd);
    return die(2, err);
}

/* test_collect.c -- run collectors (sim/run/collect.h).
 *
 * A collector registered at run time (run_collector_register) is called by
 * every later run: it sees each measured request arrive once and end once
 * (served, or rejected, timed out or failed), on the engine's lean path (a
 * generic pool) and on its general one (an LLM pool, classes, a client that
 * times out and retries), and the measured window open and close once; its
 * rows (sim_result.rows) reach the report after the system's own rows, the
 * JSON and the database; the routes' and classes' rows stand after the pools,
 * a registered family's rows of their scopes after them.  The collector between
 * the EXAMPLE markers is the worked example of docs/architecture.md ("Adding a
 * metric family"), word for word: collect/doc_example_is_this_code checks it.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include "run/collect.h"
#include "latsim/report.h"
#include "latsim/store.h"
#include "tsim.h"

/* EXAMPLE BEGIN */
#include <stdlib.h>
#include "run/collect.h"

/* Its state, one per run (the engine allocates it zeroed and frees it). */
typedef struct ends {
    const run_env *env;       /* the run (kept: it outlives every hook) */
    uint64_t first;           /* id of the first measured request (measured ids are consecutive) */
    uint64_t arrived;         /* measured arrivals */
    uint64_t served;          /* measured requests served */
    uint64_t unserved;        /* measured requests rejected, timed out or failed */
    uint64_t twice;           /* measured requests that ended more than once (0, or a bug) */
    uint8_t *ended;           /* per measured request (id - first): it has ended */
    int windows;              /* 10 x window openings + closings */
} ends;

static int ends_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    ends *x = self;
    x->env = env;
    x->ended = calloc(env->sc->requests + 1, 1);
    return x->ended ? 0 : -1;   /* -1: out of memory; COL_IDLE: nothing to collect in this run */
}

static void ends_arrive(void *self, const request *r)
{
    ends *x = self;
    if (r->measured && x->arrived++ == 0) x->first = r->id;
}

/* A measured request ended: once, or it is counted in `twice`. */
static void ends_mark(ends *x, const request *r)
{
    uint64_t k = r->id - x->first;
    if (k <= x->env->sc->requests) x->twice += x->ended[k]++ > 0;
}

static void ends_leave(void *self, const request *r, const leave_rec *l)
{
    (void) l;   /* what its client saw: e2e_ms, ttft_ms, tpot_ms, the components */
    ends *x = self;
    if (!r->measured) return;
    x->served++;
    ends_mark(x, r);
}

static void ends_outcome(void *self, const request *r, req_outcome outcome)
{
    (void) outcome;   /* OUT_REJECTED, OUT_TIMED_OUT or OUT_FAILED */
    ends *x = self;
    if (!r->measured) return;
    x->unserved++;
    ends_mark(x, r);
}

static void ends_open(void *self) { ((ends *) self)->windows += 10; }
static void ends_close(void *self) { ((ends *) self)->windows += 1; }

/* Its rows, the system's (scope ""): the report puts them after the system's
 * own rows (the engine's and the built-in families'). */
static int ends_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    (void) err;   /* left empty: the engine says "out of memory" */
    (void) errlen;
    ends *x = self;
    sim_rows *r = &out->rows;
    if (sim_rows_add(r, "", "ends_served", (double) x->served, 0) ||
        sim_rows_add(r, "", "ends_unserved", (double) x->unserved, 0) ||
        sim_rows_add(r, "", "ends_twice", (double) x->twice, 0) ||
        sim_rows_add(r, "", "ends_windows", x->windows, 0))   /* 0: shown in a saturated run too */
        return -1;
    return 0;
}

static void ends_free(void *self) { free(((ends *) self)->ended); }

static const run_collector ENDS = {
    .name = "ends",
    .size = sizeof(ends),
    .init = ends_init,
    .arrive = ends_arrive,
    .leave = ends_leave,
    .outcome = ends_outcome,
    .window_open = ends_open,
    .window_close = ends_close,
    .emit = ends_emit,
    .free = ends_free,
};
/* EXAMPLE END */

/* A generic pool with a bounded queue (the lean path): some arrivals rejected. */
static const char LEAN[] = "[sim]\nrequests = 20000\nwarmup = 1000\nseed = 3\n"
                           "[workload]\narrival = poisson\nrate = 95\n"
                           "[pool app]\nservers = 1\nservice_ms = exp(mean=10)\nqueue_limit = 5\n";

/* An LLM pool, two classes, a client that gives up after 8 s and retries twice,
 * a bounded queue: served, rejected, timed out, wasted attempts. */
static const char GENERAL[] = "[sim]\nrequests = 3000\nwarmup = 300\nseed = 7\n"
                              "[workload]\narrival = poisson\nrate = 10\n"
                              "[client]\ntimeout_ms = 8000\nretries = 2\n"
                              "[class chat]\nshare = 3\nprompt_tokens = lognormal(mean=1000, cv=1.0)\n"
                              "output_tokens = lognormal(mean=100, cv=1.0)\n"
                              "[class short]\nshare = 1\nprompt_tokens = const(100)\noutput_tokens = const(1)\n"
                              "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nqueue_limit = 30\n";

/* Runs TEXT with the example registered and checks what it saw against the run's own counts. */
static void sees_every_request_once(const char *text)
{
    cr_assert_eq(run_collector_register(&ENDS), 0);
    cr_assert_eq(run_collector_register(&ENDS), 0, "registering the same row again is harmless");
    sim_result res;
    tsim_run("collect.ini", text, 1, &res);
    double served = sim_result_get(&res, "", "ends_served", "value");
    double unserved = sim_result_get(&res, "", "ends_unserved", "value");
    cr_assert_eq(served, (double) tsim_n(&res, "served"), "served: the collector saw %g, the run counted %llu", served,
                 (unsigned long long) tsim_n(&res, "served"));
    /* failed: 0 when not reported (no fleet), as sim_result_count says */
    cr_assert_eq(unserved,
                 (double) (tsim_n(&res, "rejected") + tsim_n(&res, "timed_out") + sim_result_count(&res, "failed")),
                 "unserved: %g", unserved);
    cr_assert_eq(served + unserved, (double) tsim_n(&res, "requests"), "every measured request ended");
    cr_assert_eq(sim_result_get(&res, "", "ends_twice", "value"), 0, "no request ended twice");
    cr_assert_eq(sim_result_get(&res, "", "ends_windows", "value"), 11, "the window opened once and closed once");
    cr_assert_gt(unserved, 0, "the scenario ends some requests unserved");
    cr_assert_str_eq(sim_result_row(&res, "", "ends_served", "value")->family, "ends");
    sim_result_free(&res);
}

Test(collect, registered_collector_sees_every_request_once_lean_path) { sees_every_request_once(LEAN); }

Test(collect, registered_collector_sees_every_request_once_general_path)
{
    sees_every_request_once(GENERAL);
}

/* What the table refuses. */
static int idle_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) self;
    (void) env;
    (void) err;
    (void) errlen;
    return COL_IDLE;
}

Test(collect, register_refuses_a_taken_name_and_a_row_without_init)
{
    const run_collector dup = { .name = "latency", .init = idle_init };
    const run_collector noinit = { .name = "noinit" };
    cr_expect_eq(run_collector_register(&dup), -1, "a built-in family's name is taken");
    cr_expect_eq(run_collector_register(&noinit), -1);
    cr_expect_eq(run_collector_register(NULL), -1);
    int n = run_collector_count();
    cr_expect_geq(n, 9);
    cr_expect_str_eq(run_collector_at(0)->name, "latency");
    cr_expect_null(run_collector_at(n));
}

/* An idle collector (init says COL_IDLE) costs a run nothing and changes no number. */
static int idle_hits;
static void idle_leave(void *self, const request *r, const leave_rec *l)
{
    (void) self;
    (void) r;
    (void) l;
    idle_hits++;
}

Test(collect, an_idle_collector_is_never_called)
{
    static const run_collector idle = { .name = "idle", .init = idle_init, .leave = idle_leave };
    sim_result a, b;
    tsim_run("collect.ini", LEAN, 1, &a);
    cr_assert_eq(run_collector_register(&idle), 0);
    tsim_run("collect.ini", LEAN, 1, &b);
    cr_expect_eq(idle_hits, 0);
    cr_expect_eq(tsim_n(&a, "served"), tsim_n(&b, "served"));
    cr_expect_eq(tsim_sys(&a, "e2e")->p99, tsim_sys(&b, "e2e")->p99);
    cr_expect_eq(tsim_n(&a, "events"), tsim_n(&b, "events"));
    sim_result_free(&a);
    sim_result_free(&b);
}

/* The registered family's rows reach the report: after the system's own rows
 * (the engine's and the built-in families', the last of them the system's
 * latencies and breakdowns) and before the first pool's; `--json`'s top level
 * (report_json prints what report_flatten gives); and the database's run_stats
 * (store_save_run stores the report's rows). */
Test(collect, registered_collector_rows_reach_report_json_and_database)
{
    cr_assert_eq(run_collector_register(&ENDS), 0);
    sim_result res, plain;
    tsim_run("collect.ini", LEAN, 1, &res);
    report rep, base;
    cr_assert_eq(report_flatten(&res, -1, &rep), 0);
    cr_assert_eq(report_get(&rep, "", "ends_served", "value"), (double) tsim_n(&res, "served"));
    cr_assert_eq(report_get(&rep, "", "ends_windows", "value"), 11);
    /* Its four rows, in the order it added them, right after the system's own. */
    size_t at = 0;
    while (at < rep.n && strcmp(rep.rows[at].metric, "ends_served")) at++;
    cr_assert_lt(at + 4, rep.n);
    const char *want[4] = { "ends_served", "ends_unserved", "ends_twice", "ends_windows" };
    for (int k = 0; k < 4; k++) {
        cr_assert_str_eq(rep.rows[at + (size_t) k].metric, want[k]);
        cr_assert_str_eq(rep.rows[at + (size_t) k].scope, "");
    }
    cr_assert_str_eq(rep.rows[at - 1].scope, "", "a system row before them");
    cr_assert_str_eq(rep.rows[at + 4].scope, "app", "the pool's rows after them");
    cr_assert_str_eq(rep.rows[at + 4].metric, "kind");
    /* The same results without ENDS's rows (the built-in families' kept: the
     * breakdown's): every other row is the same, in the same order. */
    plain = res;
    plain.rows = (sim_rows) { 0 };
    cr_assert_not_null(plain.rows.row = malloc((res.rows.n + 1) * sizeof *plain.rows.row));
    for (size_t i = 0; i < res.rows.n; i++)   /* shallow copies: res keeps owning their strings */
        if (strcmp(res.rows.row[i].family, "ends")) plain.rows.row[plain.rows.n++] = res.rows.row[i];
    cr_assert_eq(plain.rows.n + 4, res.rows.n);
    cr_assert_eq(report_flatten(&plain, -1, &base), 0);
    free(plain.rows.row);
    cr_assert_eq(base.n + 4, rep.n);
    for (size_t i = 0, j = 0; i < base.n; i++, j++) {
        if (j == at) j += 4;
        cr_assert_str_eq(base.rows[i].metric, rep.rows[j].metric);
    }
    report_free(&base);
    /* --json: at the top level, with the system's numbers. */
    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    cr_assert_not_null(f);
    report_json(&rep, "", f);
    fclose(f);
    char need[64];
    snprintf(need, sizeof need, "\"ends_served\": %llu,", (unsigned long long) tsim_n(&res, "served"));
    const char *hit = strstr(json, need), *pools = strstr(json, "\"pools\"");
    cr_assert(hit && pools && hit < pools, "%s not before the pools in %s", need, json);
    free(json);
    /* The database: run_stats has its rows. */
    char path[] = "/tmp/test_collect_db_XXXXXX", err[512];
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    unlink(path);
    sqlite3 *db = NULL;
    cr_assert_eq(store_open(path, &db, err, sizeof err), 0, "%s", err);
    store_run run = { .scenario_path = "collect.ini", .scenario_text = LEAN, .seed = 1, .replications = 1,
                      .version = "test", .started_at = "2026-01-01T00:00:00Z", .status = "ok", .json = "{}",
                      .stats = rep.rows, .nstats = rep.n };
    int64_t id = 0;
    cr_assert_eq(store_save_run(db, &run, &id, err, sizeof err), 0, "%s", err);
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(db, "SELECT value FROM run_stats WHERE run_id = ? AND scope = '' AND "
                                        "metric = 'ends_served' AND stat = 'value'", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int64(st, 1, id);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "the database has the family's row");
    cr_assert_eq(sqlite3_column_double(st, 0), (double) tsim_n(&res, "served"));
    sqlite3_finalize(st);
    store_close(db);
    unlink(path);
    report_free(&rep);
    sim_result_free(&res);
}

/* A family registered at run time that adds one row to a class's scope and
 * one to a route's: they come right after that scope's own rows (the classes'
 * and routes' families, col_classes.c and col_paths.c). */
static int tag_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    (void) self;
    (void) err;
    (void) errlen;
    return sim_rows_add(&out->rows, "class:b", "tag", 7, 0) || sim_rows_add(&out->rows, "route:gw->p1", "tag", 8, 0);
}

static int tag_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) self;
    (void) env;
    (void) err;
    (void) errlen;
    return 0;
}

/* The metrics of scope SCOPE in REP, in order, joined by spaces into BUF. */
static const char *scope_metrics(const report *rep, const char *scope, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < rep->n; i++)
        if (!strcmp(rep->rows[i].scope, scope) && (i == 0 || strcmp(rep->rows[i - 1].metric, rep->rows[i].metric) ||
                                                   strcmp(rep->rows[i - 1].scope, scope)))
            n += (size_t) snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? " " : "", rep->rows[i].metric);
    return buf;
}

/* Where the rows of routes and classes stand: after the pools, each route's
 * scope in edge order, then each class's in section order; each scope's own
 * rows in the order docs/metrics.md lists them, a registered family's after
 * them; every row of a scope together. */
Test(collect, routes_and_classes_rows_after_the_pools_in_order)
{
    static const run_collector tag = { .name = "tag", .init = tag_init, .emit = tag_emit };
    cr_assert_eq(run_collector_register(&tag), 0);
    sim_result res;
    tsim_run("collect.ini",
             "[sim]\nrequests = 400\nwarmup = 0\n[workload]\nrate = 5\ntarget = gw\n"
             "[class a]\nshare = 0.5\n[class b]\nshare = 0.5\n"
             "[pool gw]\nkind = router\npolicy = round_robin\nnext = p1, p2\n"
             "[pool p1]\nservice_ms = exp(mean=10)\nusd_per_hour = 1\n[pool p2]\nservice_ms = exp(mean=10)\n", 1, &res);
    report rep;
    cr_assert_eq(report_flatten(&res, -1, &rep), 0);
    /* The scopes in order of their first row, each in one stretch. */
    const char *want[] = { "", "gw", "p1", "p2", "route:gw->p1", "route:gw->p2", "class:a", "class:b" };
    size_t k = 0;
    for (size_t i = 0; i < rep.n; i++) {
        if (i > 0 && !strcmp(rep.rows[i].scope, rep.rows[i - 1].scope)) continue;
        cr_assert_lt(k, sizeof want / sizeof *want, "scope %s after the last", rep.rows[i].scope);
        cr_assert_str_eq(rep.rows[i].scope, want[k], "scope %zu", k);
        k++;
    }
    cr_assert_eq(k, sizeof want / sizeof *want);
    char buf[512];
    cr_expect_str_eq(scope_metrics(&rep, "route:gw->p1", buf, sizeof buf), "router target edge served e2e tag");
    cr_expect_str_eq(scope_metrics(&rep, "route:gw->p2", buf, sizeof buf), "router target edge served e2e");
    cr_expect_str_eq(scope_metrics(&rep, "class:a", buf, sizeof buf),
                     "requests served rejected timed_out cost_per_1k_requests e2e queue service");
    cr_expect_str_eq(scope_metrics(&rep, "class:b", buf, sizeof buf),
                     "requests served rejected timed_out cost_per_1k_requests e2e queue service tag");
    cr_expect_str_eq(report_get_text(&rep, "route:gw->p2", "target"), "p2");
    cr_expect_eq(report_get(&rep, "route:gw->p2", "edge", "value"), 1);
    cr_expect_eq(report_get(&rep, "class:b", "tag", "value"), 7);
    cr_expect_eq(report_get(&rep, "route:gw->p1", "tag", "value"), 8);
    /* Round robin: the routes' served add up to the run's, the classes' too. */
    cr_expect_eq(report_get(&rep, "route:gw->p1", "served", "value") + report_get(&rep, "route:gw->p2", "served", "value"),
                 (double) tsim_n(&res, "served"));
    cr_expect_eq(tsim_class(&res, "a", "served") + tsim_class(&res, "b", "served"), (double) tsim_n(&res, "served"));
    report_free(&rep);
    sim_result_free(&res);
}

/* docs/architecture.md's worked example is the code between the markers above. */
Test(collect, doc_example_is_this_code)
{
    FILE *f = fopen("tests/test_collect.c", "rb"), *g = fopen("docs/architecture.md", "rb");
    cr_assert(f && g);
    static char src[65536], doc[262144];
    size_t ns = fread(src, 1, sizeof src - 1, f), nd = fread(doc, 1, sizeof doc - 1, g);
    fclose(f);
    fclose(g);
    src[ns] = doc[nd] = '\0';
    char *a = strstr(src, "/* EXAMPLE BEGIN */\n"), *z = strstr(src, "/* EXAMPLE END */");
    cr_assert(a && z && a < z);
    a += strlen("/* EXAMPLE BEGIN */\n");
    *z = '\0';
    char *sec = strstr(doc, "### Adding a metric family");
    cr_assert_not_null(sec, "docs/architecture.md has no 'Adding a metric family' section");
    char *code = strstr(sec, "```c\n");
    cr_assert_not_null(code);
    code += strlen("```c\n");
    char *end = strstr(code, "```\n");
    cr_assert_not_null(end);
    *end = '\0';
    cr_expect_str_eq(code, a, "the example in docs/architecture.md differs from tests/test_collect.c's");
}

/* The readers' index (sim_rows_index): for every row of a run of several
 * pools, classes and routes, sim_result_row finds what a scan in row order
 * finds first; sim_result_pool names the pools in the scenario's order, each
 * the scope of its rows of family "pool"; a row added after the run is found
 * too (by a scan: the index no longer covers every row). */
Test(collect, row_index_finds_what_a_scan_finds)
{
    const char *sets[] = { "sim.requests=400", "sim.warmup=50" };
    sim_result res;
    tsim_run_file("scenarios/gateway_three_models.ini", sets, 2, 1, &res);
    cr_assert_not_null(res.rows.by_key, "sim_run indexes its rows");
    cr_assert_eq(res.rows.nkey, res.rows.n);
    for (size_t i = 0; i < res.rows.n; i++) {
        const sim_row *w = &res.rows.row[i], *first = NULL;
        for (size_t j = 0; j < res.rows.n && !first; j++) {
            const sim_row *v = &res.rows.row[j];
            if (!strcmp(v->scope, w->scope) && !strcmp(v->metric, w->metric) && !strcmp(v->stat, w->stat)) first = v;
        }
        cr_assert_eq(sim_result_row(&res, w->scope, w->metric, w->stat), first, "row %zu (%s, %s, %s)", i, w->scope,
                     w->metric, w->stat);
    }
    cr_assert_null(sim_result_row(&res, "", "no_such_metric", "value"));
    cr_assert_null(sim_result_row(&res, "zzz", "e2e", "mean"));
    int n = 0;
    for (size_t j = 0; j < res.rows.n; j++)
        if (!strcmp(res.rows.row[j].family, "pool") && !strcmp(res.rows.row[j].metric, "kind"))
            cr_assert_str_eq(sim_result_pool(&res, n++), res.rows.row[j].scope);
    cr_assert_gt(n, 2, "several pools");
    cr_assert_null(sim_result_pool(&res, n));
    cr_assert_null(sim_result_pool(&res, -1));
    res.rows.family = "test";
    cr_assert_eq(sim_rows_add(&res.rows, "", "added_later", 42, 0), 0);
    res.rows.family = NULL;
    cr_assert_float_eq(sim_result_value(&res, "added_later"), 42, 0);
    cr_assert_not_null(sim_result_pool(&res, n - 1), "the pools found by a scan too");
    cr_assert_null(sim_result_pool(&res, n));
    sim_result_free(&res);
}

/* tsim.c -- in-process simulation helpers for tests (tsim.h). */
#include "tsim.h"

#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include "run/breakdown.h"
#include "store/store.h"
#include "latsim/report.h"   /* REPORT_CLASS_SCOPE */

/* Resolves the loaded SC against the database file DB.  Returns 0, or -1
 * with the message in ERR (SC freed). */
static int resolve_in(scenario *sc, const char *db, char *err, size_t errlen)
{
    sqlite3 *h = NULL;
    char serr[256];
    cr_assert_eq(store_open(db, &h, serr, sizeof serr), 0, "store_open %s: %s", db, serr);
    int rc = scenario_resolve(sc, h, err, errlen);
    store_close(h);
    if (rc != 0) scenario_free(sc);
    return rc;
}

/* Simulates the resolved SC with SEED into RES and frees SC; an error, or a
 * result whose pools are not the scenario's, fails the test. */
static void run_resolved(scenario *sc, uint64_t seed, sim_result *res)
{
    char err[1024];
    cr_assert_eq(sim_run(sc, seed, res, err, sizeof err), 0, "sim_run: %s", err);
    for (int i = 0; i < sc->npools; i++)   /* each pool's rows, in the scenario's order */
        cr_assert(sim_result_pool(res, i) && !strcmp(sim_result_pool(res, i), sc->pools[i].name),
                  "pool %d of the result is not %s", i, sc->pools[i].name);
    cr_assert_null(sim_result_pool(res, sc->npools), "more pools in the result than the scenario's %d", sc->npools);
    scenario_free(sc);
}

int tsim_load_resolve_db(const char *path, const char *text, const char *db, scenario *sc, char *err,
                         size_t errlen)
{
    err[0] = '\0';
    if (scenario_load_text(sc, path, text, NULL, 0, err, errlen) != 0) {
        scenario_free(sc);
        return -1;
    }
    return resolve_in(sc, db, err, errlen);
}

int tsim_load_resolve(const char *path, const char *text, scenario *sc, char *err, size_t errlen)
{
    return tsim_load_resolve_db(path, text, ":memory:", sc, err, errlen);
}

int tsim_load_error(const char *path, const char *text, char *err, size_t errlen)
{
    scenario sc;
    if (tsim_load_resolve(path, text, &sc, err, errlen) != 0) return -1;
    scenario_free(&sc);
    err[0] = '\0';
    return 0;
}

void tsim_catalog(const char *gpu, const char *model, gpu_spec *g, model_spec *m)
{
    sqlite3 *cat;
    char err[256];
    cr_assert_eq(sqlite3_open(":memory:", &cat), SQLITE_OK);
    cr_assert_eq(catalog_init(cat, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_gpu(cat, gpu, g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_model(cat, model, m, err, sizeof err), 0, "%s", err);
    sqlite3_close(cat);
}

void tsim_run_db(const char *path, const char *text, const char *db, uint64_t seed, sim_result *res)
{
    scenario sc;
    char err[1024];
    cr_assert_eq(tsim_load_resolve_db(path, text, db, &sc, err, sizeof err), 0, "scenario: %s\n%s", err, text);
    run_resolved(&sc, seed, res);
}

void tsim_run(const char *path, const char *text, uint64_t seed, sim_result *res)
{
    tsim_run_db(path, text, ":memory:", seed, res);
}

void tsim_run_file(const char *file, const char *const *sets, int nsets, uint64_t seed, sim_result *res)
{
    scenario sc;
    char err[1024];
    cr_assert_eq(scenario_load(&sc, file, sets, nsets, err, sizeof err), 0, "scenario: %s", err);
    cr_assert_eq(resolve_in(&sc, ":memory:", err, sizeof err), 0, "scenario: %s", err);
    run_resolved(&sc, seed, res);
}

const sim_row *tsim_bd_row(const sim_result *res, const char *set, int k)
{
    char m[64];
    snprintf(m, sizeof m, "%s.%s", set, strncmp(set, "ttft_", 5) ? bd_name(k) : tb_name(k));
    return sim_result_row(res, "", m, "value");
}

double tsim_bd(const sim_result *res, const char *set, int k)
{
    const sim_row *w = tsim_bd_row(res, set, k);
    return w ? w->value : NAN;
}

/* The Ith "requests" row of the classes family of RES, NULL past the last. */
static const sim_row *class_row(const sim_result *res, int i)
{
    for (size_t k = 0; k < res->rows.n; k++) {
        const sim_row *w = &res->rows.row[k];
        if (!strcmp(w->family, "classes") && !strcmp(w->metric, "requests") && i-- == 0) return w;
    }
    return NULL;
}

int tsim_nclasses(const sim_result *res)
{
    int n = 0;
    while (class_row(res, n)) n++;
    return n;
}

const char *tsim_class_name(const sim_result *res, int i)
{
    const sim_row *w = class_row(res, i);
    cr_assert_not_null(w, "no class %d", i);
    return w->scope + strlen(REPORT_CLASS_SCOPE);
}

double tsim_class(const sim_result *res, const char *name, const char *metric)
{
    char scope[96];
    snprintf(scope, sizeof scope, "%s%s", REPORT_CLASS_SCOPE, name);
    return sim_result_get(res, scope, metric, "value");
}

stat_summary tsim_latency(const sim_result *res, const char *scope, const char *metric)
{
    stat_summary s;
    memset(&s, 0, sizeof s);
    const sim_row *w = sim_result_row(res, scope, metric, "mean");
    cr_assert_not_null(w, "no latency %s in scope %s", metric, scope);
    if (w->dist) s = *w->dist;
    return s;
}

const stat_summary *tsim_sys(const sim_result *res, const char *metric)
{
    static const stat_summary none;   /* no sample: as stat_summarize leaves it */
    const sim_row *w = sim_result_row(res, "", metric, "mean");
    cr_assert_not_null(w, "no system latency %s", metric);
    return w->dist ? w->dist : &none;
}

uint64_t tsim_n(const sim_result *res, const char *metric)
{
    return (uint64_t) tsim_v(res, metric);
}

double tsim_v(const sim_result *res, const char *metric)
{
    const sim_row *w = sim_result_row(res, "", metric, "value");
    cr_assert_not_null(w, "no system row %s", metric);
    return w->value;
}

stat_summary tsim_class_latency(const sim_result *res, const char *name, const char *metric)
{
    char scope[96];
    snprintf(scope, sizeof scope, "%s%s", REPORT_CLASS_SCOPE, name);
    return tsim_latency(res, scope, metric);
}

const char *tsim_pool(const sim_result *res, int i)
{
    const char *name = sim_result_pool(res, i);
    cr_assert_not_null(name, "no pool %d", i);
    return name;
}

double tsim_pv(const sim_result *res, int i, const char *metric)
{
    return sim_result_get(res, tsim_pool(res, i), metric, "value");
}

const char *tsim_ptext(const sim_result *res, int i, const char *metric)
{
    const sim_row *w = sim_result_row(res, tsim_pool(res, i), metric, "value");
    return w ? w->text : NULL;
}

const stat_summary *tsim_pl(const sim_result *res, int i, const char *metric)
{
    static const stat_summary none;   /* no sample: as stat_summarize leaves it */
    const char *S = tsim_pool(res, i);
    const sim_row *w = sim_result_row(res, S, metric, "mean");
    cr_assert_not_null(w, "no latency %s of pool %s", metric, S);
    return w->dist ? w->dist : &none;
}

int tsim_has_pl(const sim_result *res, int i, const char *metric)
{
    return sim_result_row(res, tsim_pool(res, i), metric, "mean") != NULL;
}

tsim_pr tsim_pool_at(const sim_result *res, int i)
{
    return (tsim_pr) { res, tsim_pool(res, i) };
}

tsim_pr tsim_pool_named(const sim_result *res, const char *name)
{
    for (int i = 0; sim_result_pool(res, i); i++)
        if (!strcmp(sim_result_pool(res, i), name)) return (tsim_pr) { res, sim_result_pool(res, i) };
    cr_assert_fail("no pool %s", name);
    return (tsim_pr) { res, NULL };
}

int tsim_npools(const sim_result *res)
{
    int n = 0;
    while (sim_result_pool(res, n)) n++;
    return n;
}

double tsim_prv(tsim_pr p, const char *metric)
{
    cr_assert_not_null(p.name, "no pool");
    return sim_result_get(p.res, p.name, metric, "value");
}

const stat_summary *tsim_prl(tsim_pr p, const char *metric)
{
    static const stat_summary none;   /* no sample: as stat_summarize leaves it */
    cr_assert_not_null(p.name, "no pool");
    const sim_row *w = sim_result_row(p.res, p.name, metric, "mean");
    cr_assert_not_null(w, "no latency %s of pool %s", metric, p.name);
    return w->dist ? w->dist : &none;
}

int tsim_has_prl(tsim_pr p, const char *metric)
{
    return p.name && sim_result_row(p.res, p.name, metric, "mean") != NULL;
}

const char *tsim_prt(tsim_pr p, const char *metric)
{
    cr_assert_not_null(p.name, "no pool");
    const sim_row *w = sim_result_row(p.res, p.name, metric, "value");
    return w ? w->text : NULL;
}

int tsim_sat(const sim_result *res)
{
    return tsim_v(res, "saturated") > 0;
}

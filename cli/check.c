/* check.c -- `latsim check [FILE...]`: the SLO regression check for CI, and
 * `latsim baseline accept RUN`.
 *
 * Each scenario (the files given, or every scenario path stored in the
 * database whose file still exists) runs once at its workload rate x the
 * [slo] headroom, in parallel worker processes.  It passes when every SLO term
 * is met, it is not saturated, and no key metric is worse than in its last
 * accepted baseline by more than the tolerance (--tolerance PCT, default 10 %,
 * or the baseline's 95 % interval when it was replicated and that is wider).
 * Exit 0: all pass, 1: any fails, 2: bad input.  --junit FILE writes JUnit XML:
 * one testsuite per scenario, one testcase per SLO term and per baseline metric.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cliopt.h"
#include "cliutil.h"
#include "provenance.h"
#include "commands.h"
#include "latsim/band.h"
#include "latsim/errmsg.h"
#include "latsim/report.h"
#include "latsim/scenario.h"
#include "latsim/slo.h"
#include "latsim/store.h"

#define MAX_FILES 256

enum { O_JUNIT = 1, O_TOLERANCE, O_SEED, O_JOBS, O_NO_STORE, O_REQUIRE_BASELINE, O_STRICT_BAND };

static const cli_opt CHECK_OPTS[] = {
    { "junit", O_JUNIT, "OUT.xml", "write JUnit XML: one testsuite per scenario, one testcase per SLO term and per "
      "baseline metric", 0 },
    { "tolerance", O_TOLERANCE, "PCT", "how much worse than its baseline a key metric may be, % (default 10)", 0 },
    { "set", CLI_SET, "S.K=V", "override key K of section S in every scenario checked, e.g. --set workload.rate=80 "
      "(repeatable)", CLI_REPEAT },
    { "seed", O_SEED, "N", "seed of every run (default: each scenario's)", 0 },
    { "jobs", O_JOBS, "N", "worker processes (default: all cores)", 0 },
    CLI_OPT_DB,
    CLI_OPT_COST_DB,
    { "no-store", O_NO_STORE, NULL, "do not store the runs (a dry check)", 0 },
    { "require-baseline", O_REQUIRE_BASELINE, NULL, "fail a scenario that has no accepted baseline (default: one "
      "warning line)", 0 },
    { "strict-band", O_STRICT_BAND, NULL, "also run each scenario with an LLM pool at the pessimistic end of its "
      "cost model's 90 % prediction band (every step time x its upper factor; docs/bands.md) and fail when the SLO is "
      "missed there", 0 },
    { NULL },
};

static const cli_cmd CHECK = {
    "check", "[FILE...]",
    "Runs each scenario (default: every scenario stored in the database) at its rate x\n"
    "the [slo] headroom and checks it against its [slo] and its last accepted baseline\n"
    "(latsim baseline accept RUN): a key metric (e2e/ttft/tpot/queue P50 and P99,\n"
    "throughput, goodput) may be worse by at most PCT % (default 10) or the baseline's\n"
    "95 % interval.  --set applies to every scenario (its [slo] included) before the\n"
    "headroom.  --strict-band also fails a scenario whose SLO is missed at the pessimistic\n"
    "end of its cost model's 90 % prediction band.\n"
    "Exit status: 0 all pass, 1 any fails, 2 bad input.\n",
    "latsim baseline --help: accepting and listing baselines.\n",
    CHECK_OPTS, TASK_MAX_SETS - 1, 0,
};

static const cli_opt BASELINE_OPTS[] = { CLI_OPT_DB, { NULL } };

static const cli_cmd BASELINE = {
    "baseline", "accept RUN\nlist",
    "accept RUN makes stored run RUN (an ID from latsim runs) its scenario's baseline,\n"
    "which latsim check compares with; list lists the accepted baselines.\n",
    "", BASELINE_OPTS, 0, 1,
};

typedef struct verdict {
    char name[160];           /* test case name */
    char detail[400];         /* what was measured */
    int failed;
} verdict;

typedef struct item {
    const char *path;
    char rate_set[128];
    task t;
    task_out o;
    slo_spec spec;            /* its [slo] (slo's terms point into it) */
    slo_result slo;
    verdict *v;
    int nv, cap;
    int failed;
    int64_t baseline;         /* baseline run id, 0 none */
    /* --strict-band: the run at the band's pessimistic end (band.h) */
    int has_band;             /* 1: it has an LLM pool and was run there */
    band_model band;          /* the band of its widest cost model */
    char band_sets[8][200];   /* "pool P.step_time_scale=F" of each LLM pool */
    task bt;                  /* that run */
    task_out bo;
} item;

static int add_verdict(item *it, int failed, const char *name, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int add_verdict(item *it, int failed, const char *name, const char *fmt, ...)
{
    if (it->nv == it->cap) {
        int cap = it->cap ? 2 * it->cap : 16;
        verdict *x = realloc(it->v, (size_t) cap * sizeof *x);
        if (!x) return -1;
        it->v = x;
        it->cap = cap;
    }
    verdict *v = &it->v[it->nv++];
    snprintf(v->name, sizeof v->name, "%s", name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->detail, sizeof v->detail, fmt, ap);
    va_end(ap);
    v->failed = failed;
    it->failed |= failed;
    return 0;
}

/* Writes S as XML text: markup characters as entities, control characters
 * that XML 1.0 cannot hold left out, and each byte that is not part of valid
 * UTF-8 as the character of the same value (Latin-1: 0xFF is &#xff;), as the
 * JSON outputs do (report_json_str). */
static void xml_text(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *) s; *p;) {
        int n = *p >= 0x80 ? errmsg_utf8_len(p) : 1;
        switch (*p) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (n == 0) fprintf(f, "&#x%02x;", *p);
            else if (*p >= 0x20 || *p == '\t' || *p == '\n') fwrite(p, 1, (size_t) n, f);
        }
        p += n ? n : 1;
    }
}

/* The testsuite's <properties>: the cost model of each LLM pool of R
 * ("cost_model.POOL"), and the warning when one is the uncalibrated roofline. */
static void junit_provenance(FILE *f, const report *r)
{
    char line[512];
    int any = 0, unc = 0;
    for (size_t i = 0; i < r->n; i++) {
        const store_stat *s = &r->rows[i];
        if (strcmp(s->metric, "cost_model.kind") || !s->text) continue;
        int u = prov_describe(r, s->scope, line, sizeof line);
        if (u < 0) continue;
        if (!any) fputs("    <properties>\n", f);
        any = 1;
        unc |= u == 1;
        fputs("      <property name=\"cost_model.", f);
        xml_text(f, s->scope);
        fputs("\" value=\"", f);
        xml_text(f, line);
        fputs("\"/>\n", f);
    }
    if (unc) {
        fputs("      <property name=\"cost_model_warning\" value=\"", f);
        xml_text(f, prov_warning);
        fputs("\"/>\n", f);
    }
    if (any) fputs("    </properties>\n", f);
}

/* Writes the JUnit XML to OUT.  Returns 0, or -1 + ERR (a failed open, write or
 * close: "check: --junit OUT: cannot write: ..."). */
static int write_junit(const char *out, const item *its, int n, double wall, char *err, size_t errlen)
{
    FILE *f = cu_open_out("check", "--junit", out, err, errlen);
    if (!f) return -1;
    int tests = 0, fails = 0;
    for (int i = 0; i < n; i++) for (int k = 0; k < its[i].nv; k++) { tests++; fails += its[i].v[k].failed; }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"latsim check\" tests=\"%d\" failures=\"%d\" errors=\"0\" time=\"%.3f\">\n", tests, fails, wall);
    for (int i = 0; i < n; i++) {
        const item *it = &its[i];
        int tf = 0;
        for (int k = 0; k < it->nv; k++) tf += it->v[k].failed;
        fputs("  <testsuite name=\"", f);
        xml_text(f, it->path);
        fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" time=\"%.3f\">\n", it->nv, tf, it->o.wall_s);
        junit_provenance(f, &it->o.rep);
        for (int k = 0; k < it->nv; k++) {
            const verdict *v = &it->v[k];
            fputs("    <testcase classname=\"", f);
            xml_text(f, it->path);
            fputs("\" name=\"", f);
            xml_text(f, v->name);
            fputs("\"", f);
            if (!v->failed) {
                fputs("><system-out>", f);
                xml_text(f, v->detail);
                fputs("</system-out></testcase>\n", f);
                continue;
            }
            fputs(">\n      <failure message=\"", f);
            xml_text(f, v->detail);
            fputs("\" type=\"slo\">", f);
            xml_text(f, v->detail);
            fputs("</failure>\n    </testcase>\n", f);
        }
        fputs("  </testsuite>\n", f);
    }
    fputs("</testsuites>\n", f);
    return cu_close_out("check", "--junit", out, f, err, errlen);
}

/* Key metrics compared with the baseline: 1 = higher is worse, -1 = lower is worse. */
static const struct { const char *metric, *stat; int worse; } KEYM[] = {
    { "e2e", "p50", 1 }, { "e2e", "p99", 1 }, { "ttft", "p50", 1 }, { "ttft", "p99", 1 },
    { "tpot", "p50", 1 }, { "tpot", "p99", 1 }, { "queue", "p99", 1 },
    { "throughput_rps", "value", -1 }, { "goodput", "value", -1 },
};

static double base_row(const report *r, const char *metric, const char *stat, double *ci)
{
    for (size_t i = 0; i < r->n; i++)
        if (!r->rows[i].scope[0] && !strcmp(r->rows[i].metric, metric) && !strcmp(r->rows[i].stat, stat)) {
            *ci = r->rows[i].ci95;
            return r->rows[i].value;
        }
    *ci = NAN;
    return NAN;
}

/* cu_write_fn of `baseline accept`: ARG is the run id (long long). */
static int accept_write(sqlite3 *db, int dry, void *arg, char *err, size_t errlen)
{
    (void) dry;
    int rc = planstore_baseline_accept(db, *(long long *) arg, err, errlen);
    return rc == 0 ? 0 : rc == 1 ? 2 : 1;
}

/* `baseline list`: the accepted baselines of the database PATH.  Returns the exit status. */
static int baseline_list(const char *path)
{
    char err[1024];
    sqlite3 *db;
    sqlite3_stmt *st = NULL;
    if (store_open_readonly(path, &db, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (sqlite3_prepare_v2(db, "SELECT b.scenario_path, b.run_id, b.accepted_at FROM baselines b"
                           " WHERE b.id = (SELECT max(id) FROM baselines c WHERE c.scenario_path = b.scenario_path)"
                           " ORDER BY b.scenario_path", -1, &st, NULL) == SQLITE_OK) {
        printf("%-40s %8s  %s\n", "scenario", "run", "accepted");
        while (sqlite3_step(st) == SQLITE_ROW)
            printf("%-40s %8lld  %s\n", ERRMSG_SHOWN((const char *) sqlite3_column_text(st, 0)),
                   (long long) sqlite3_column_int64(st, 1), ERRMSG_SHOWN((const char *) sqlite3_column_text(st, 2)));
    } else printf("no baselines accepted yet\n");
    sqlite3_finalize(st);
    store_close(db);
    return 0;
}

int baseline_main(int argc, char **argv)
{
    cli_args a;
    int rc = cli_parse(&BASELINE, argc, argv, &a, NULL, NULL);
    if (rc != CLI_GO) return rc;
    if (a.npos > 2) return cu_die(2, "baseline: too many arguments");
    const char *path = cu_db_path(a.db);
    char err[1024];
    if (cu_check_db_path(path, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (access(path, F_OK) != 0) return cu_die(2, "%s: no such database (run a scenario first, or give --db PATH)", path);
    if (a.npos == 2 && !strcmp(a.pos[0], "accept")) {
        int64_t id64;
        if (cu_parse_id("run", a.pos[1], &id64, err, sizeof err) != 0) return cu_die(2, "baseline accept: %s (see latsim runs)", err);
        long long id = (long long) id64;
        /* One transaction: a refused ID (no such run) leaves the file as it was. */
        rc = cu_write_db(path, accept_write, &id, NULL, err, sizeof err);
        if (rc != 0) return cu_die(rc, "%s", err);
        printf("run %lld accepted as the baseline of its scenario\n", id);
        return 0;
    }
    if (a.npos == 1 && !strcmp(a.pos[0], "list")) return baseline_list(path);
    return cu_die(2, "baseline: expected 'accept RUN' or 'list' (see latsim baseline --help)");
}

/* What save_runs stores. */
typedef struct stored_runs {
    item *its;                /* the checked scenarios */
    int n;                    /* how many */
    int64_t *ids;             /* out: the run id of each */
} stored_runs;

/* cu_write_fn of check: stores every checked scenario's run.  Returns 0 or 1. */
static int save_runs(sqlite3 *db, int dry, void *arg, char *err, size_t errlen)
{
    (void) dry;
    stored_runs *sr = arg;
    for (int i = 0; i < sr->n; i++)
        if (cu_save_task(db, &sr->its[i].t, &sr->its[i].o, &sr->its[i].slo, NULL, &sr->ids[i], err, errlen) != 0) return 1;
    return 0;
}

/* A check in progress: everything check_main frees. */
typedef struct checker {
    cli_args a;               /* --db, --set and the FILEs */
    const char *files[MAX_FILES]; /* the scenarios checked */
    int nf;                   /* how many */
    char **owned;             /* those taken from the database (owned) */
    int nowned;               /* how many */
    const char *dbpath;       /* the database file */
    const char *junit;        /* --junit OUT.xml, or NULL */
    double tol;               /* --tolerance, % */
    uint64_t seed;            /* --seed (0: each scenario's) */
    int jobs;                 /* --jobs (0: all cores) */
    int store;                /* 0: --no-store */
    int require_baseline;     /* 1: --require-baseline (a scenario without one fails) */
    int strict_band;          /* --strict-band */
    sqlite3 *db;              /* the database, read-only (NULL when there is none) */
    item *its;                /* one per scenario */
    double wall;              /* seconds the runs took */
    int64_t *ids;             /* the stored run of each */
} checker;

/* cli_opt_fn of check: CTX is the checker. */
static int check_opt(void *ctx, int id, const char *v)
{
    checker *ck = ctx;
    char *end;
    long x;
    switch (id) {
    case O_JUNIT: ck->junit = v; return 0;
    case O_NO_STORE: ck->store = 0; return 0;
    case O_REQUIRE_BASELINE: ck->require_baseline = 1; return 0;
    case O_STRICT_BAND: ck->strict_band = 1; return 0;
    case O_TOLERANCE:
        ck->tol = strtod(v, &end);
        if (end == v || *end || !(ck->tol >= 0) || !isfinite(ck->tol))
            return cu_die(2, "check: --tolerance: expected a percentage >= 0, got '%s'", v);
        return 0;
    case O_SEED:
        if ((x = cu_posint("check", "--seed", v, 2147483647L)) < 0) return 2;
        ck->seed = (uint64_t) x;
        return 0;
    default:                  /* --jobs */
        if ((x = cu_posint("check", "--jobs", v, 1024)) < 0) return 2;
        ck->jobs = (int) x;
        return 0;
    }
}

/* Parses the command line into CK and checks the paths: bad ones are refused
 * before anything is read, run or stored.  Returns CLI_GO or the exit status. */
static int check_parse(int argc, char **argv, checker *ck)
{
    char err[2048];
    ck->tol = 10;
    ck->store = 1;
    int rc = cli_parse(&CHECK, argc, argv, &ck->a, check_opt, ck);
    if (rc != CLI_GO) return rc;
    if (ck->a.npos > MAX_FILES) return cu_die(2, "check: at most %d scenarios", MAX_FILES);
    for (int i = 0; i < ck->a.npos; i++) ck->files[ck->nf++] = ck->a.pos[i];
    ck->dbpath = cu_db_path(ck->a.db);
    if (cu_check_db_path(ck->dbpath, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (ck->junit && cu_check_out("check", "--junit", ck->junit, err, sizeof err) != 0) return cu_die(2, "%s", err);
    return CLI_GO;
}

/* Opens the database read-only (stored scenarios, baselines; an empty file
 * holds none) and, without FILEs, takes every scenario stored in it whose file
 * is still there.  Returns 0 or the exit status (printed). */
static int check_open(checker *ck)
{
    char err[2048];
    struct stat dbst;
    int have_db = stat(ck->dbpath, &dbst) == 0 && dbst.st_size > 0;
    if (have_db && store_open_readonly(ck->dbpath, &ck->db, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (ck->nf > 0) return 0;
    if (!ck->db) return cu_die(2, "check: no scenario given and no database %s to take them from", ck->dbpath);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(ck->db, "SELECT DISTINCT scenario_path FROM runs ORDER BY scenario_path", -1, &st, NULL) != SQLITE_OK)
        return cu_die(2, "%s: %s", ck->dbpath, sqlite3_errmsg(ck->db));
    int rc = 0;
    while (sqlite3_step(st) == SQLITE_ROW && ck->nf < MAX_FILES) {
        const char *p = (const char *) sqlite3_column_text(st, 0);
        if (access(p, R_OK) != 0) continue;
        /* One check per file, however it was named when stored (./a.ini, a.ini, /abs/a.ini). */
        char rp[4096], rq[4096];
        int dup = 0;
        if (realpath(p, rp))
            for (int k = 0; k < ck->nf && !dup; k++) dup = realpath(ck->files[k], rq) && !strcmp(rp, rq);
        if (dup) continue;
        char **x = realloc(ck->owned, (size_t) (ck->nowned + 1) * sizeof *x);
        if (x) ck->owned = x;
        if (!x || !(x[ck->nowned] = strdup(p))) { rc = cu_die(1, "out of memory"); break; }
        ck->files[ck->nf++] = ck->owned[ck->nowned++];
    }
    sqlite3_finalize(st);
    if (rc == 0 && ck->nf == 0) rc = cu_die(2, "check: the database %s holds no scenario whose file still exists", ck->dbpath);
    return rc;
}

/* Loads each scenario (bad input stops everything before anything runs) with
 * the --set overrides, sets its rate x headroom, and runs them all in
 * parallel.  Returns 0 or the exit status (printed). */
static int check_run(checker *ck)
{
    char err[2048];
    int nf = ck->nf, rc = 0;
    task *ts = calloc((size_t) nf, sizeof *ts);
    task_out *outs = calloc((size_t) nf, sizeof *outs);
    ck->its = calloc((size_t) nf, sizeof *ck->its);
    if (!ck->its || !ts || !outs) { rc = cu_die(1, "out of memory"); goto out; }
    for (int i = 0; i < nf; i++) {
        item *it = &ck->its[i];
        it->path = ck->files[i];
        scenario *sc = scenario_new();
        if (!sc) { rc = cu_die(1, "out of memory"); goto out; }
        if (scenario_load(sc, it->path, ck->a.sets, ck->a.nsets, err, sizeof err) != 0) {
            scenario_delete(sc);
            rc = cu_die(2, "%s", err);
            goto out;
        }
        it->t.path = it->path;
        it->t.seed = ck->seed;
        for (int k = 0; k < ck->a.nsets; k++) it->t.sets[it->t.nsets++] = ck->a.sets[k];
        /* Closed loops and rate schedules are checked as written (no single rate to scale). */
        double headroom = scenario_slo(sc)->headroom;
        scenario_arrival arr = scenario_arrival_kind(sc);
        if (headroom > 1 && (arr == SCENARIO_ARRIVAL_TRACE || arr == SCENARIO_ARRIVAL_RATE)) {
            if (arr == SCENARIO_ARRIVAL_TRACE) snprintf(it->rate_set, sizeof it->rate_set, "workload.speedup=%.10g", scenario_speedup(sc) * headroom);
            else snprintf(it->rate_set, sizeof it->rate_set, "workload.rate=%.10g", scenario_rate(sc) * headroom);
            it->t.sets[it->t.nsets++] = it->rate_set;
        }
        scenario_delete(sc);
        ts[i] = it->t;
    }
    if (ck->store && cu_check_db(ck->dbpath, err, sizeof err) != 0) { rc = cu_die(2, "%s", err); goto out; }
    double t0 = cu_clock();
    task_run_all(ts, nf, ck->jobs, ck->dbpath, outs, NULL, NULL);
    ck->wall = cu_clock() - t0;
    for (int i = 0; i < nf; i++) ck->its[i].o = outs[i];
    for (int i = 0; i < nf; i++)
        if (ck->its[i].o.status != 0) { rc = cu_die(ck->its[i].o.status == 2 ? 2 : 1, "%s", ck->its[i].o.err); goto out; }
out:
    free(ts);
    free(outs);
    return rc;
}

/* --strict-band: each scenario with an LLM pool run again with every LLM
 * pool's step times at the pessimistic end of its 90 % prediction band (the
 * upper step-time factor of the widest pool's cost model, band.h), with the
 * same seed and rate.  Returns 0 or the exit status (printed). */
static int check_band(checker *ck)
{
    if (!ck->strict_band) return 0;
    char err[2048];
    int nf = ck->nf, m = 0, rc = 0;
    task *ts = calloc((size_t) nf, sizeof *ts);
    task_out *outs = calloc((size_t) nf, sizeof *outs);
    int *which = calloc((size_t) nf, sizeof *which);
    if (!ts || !outs || !which) { rc = cu_die(1, "out of memory"); goto out; }
    for (int i = 0; i < nf; i++) {
        item *it = &ck->its[i];
        if (band_of_report(&it->o.rep, &it->band) == 0) continue;
        scenario *sc = scenario_new();
        if (!sc) { rc = cu_die(1, "out of memory"); goto out; }
        if (scenario_load(sc, it->path, ck->a.sets, ck->a.nsets, err, sizeof err) != 0) {
            scenario_delete(sc);
            rc = cu_die(2, "%s", err);
            goto out;
        }
        it->bt = it->t;
        int nb = 0;
        for (int p = 0; p < scenario_npools(sc) && nb < 8 && it->bt.nsets < TASK_MAX_SETS; p++) {
            if (!scenario_pool_takes(sc, p, "step_time_scale")) continue;
            const char *own = scenario_pool_value(sc, p, "step_time_scale");
            double k = own && strtod(own, NULL) > 0 ? strtod(own, NULL) : 1;
            snprintf(it->band_sets[nb], sizeof it->band_sets[nb], "pool %s.step_time_scale=%.17g", scenario_pool_name(sc, p),
                     it->band.hi * k);
            it->bt.sets[it->bt.nsets++] = it->band_sets[nb++];
        }
        scenario_delete(sc);
        it->has_band = 1;
        which[m] = i;
        ts[m++] = it->bt;
    }
    if (m == 0) goto out;
    task_run_all(ts, m, ck->jobs, ck->dbpath, outs, NULL, NULL);
    for (int k = 0; k < m; k++) ck->its[which[k]].bo = outs[k];
    for (int k = 0; k < m; k++)
        if (outs[k].status != 0) { rc = cu_die(outs[k].status == 2 ? 2 : 1, "%s", outs[k].err); goto out; }
out:
    free(ts);
    free(outs);
    free(which);
    return rc;
}

/* The verdict of IT at its band's pessimistic end (--strict-band): every SLO
 * term met and not saturated there.  Returns 0, or -1 when out of memory. */
static int band_verdict(item *it)
{
    if (!it->has_band) return 0;
    slo_result r;
    memset(&r, 0, sizeof r);
    if (slo_eval(&it->spec, it->bo.rep.rows, it->bo.rep.n, &r) != 0) return -1;
    int sat = report_get(&it->bo.rep, "", "saturated", "value") > 0;
    char worst[200] = "every term met";
    const slo_check *w = NULL;
    for (int k = 0; k < r.n; k++)
        if (!r.c[k].met && (!w || isnan(r.c[k].value) || r.c[k].margin / r.c[k].t->limit < w->margin / w->t->limit)) w = &r.c[k];
    if (sat) snprintf(worst, sizeof worst, "saturated");
    else if (w && isnan(w->value)) snprintf(worst, sizeof worst, "%s not measured", w->t->key);
    else if (w) snprintf(worst, sizeof worst, "%s = %.4g > limit %g", w->t->key, w->value, w->t->limit);
    int failed = sat || !r.met;
    slo_result_free(&r);
    return add_verdict(it, failed, "slo at the band's pessimistic end", "step times x%.3g (%s): %s", it->band.hi,
                       it->band.basis, worst);
}

/* The verdicts of IT: not saturated, each SLO term (of its [slo] with the
 * --set overrides), and each key metric against its baseline.  Returns 0 or
 * the exit status (printed). */
static int check_verdicts(checker *ck, item *it)
{
    char err[2048], name[160];
    scenario *sc = scenario_new();
    if (!sc) return cu_die(1, "out of memory");
    if (scenario_load(sc, it->path, ck->a.sets, ck->a.nsets, err, sizeof err) != 0) { scenario_delete(sc); return cu_die(2, "%s", err); }
    scenario_take_slo(sc, &it->spec);
    scenario_delete(sc);
    if (slo_eval(&it->spec, it->o.rep.rows, it->o.rep.n, &it->slo) != 0) return cu_die(1, "out of memory");
    double headroom = it->spec.headroom;
    int sat = report_get(&it->o.rep, "", "saturated", "value") > 0;
    if (add_verdict(it, sat, "not saturated", "%s at %.4g req/s%s", sat ? "saturated" : "stable", it->o.rate,
                    headroom > 1 ? " (rate x headroom)" : "")) return cu_die(1, "out of memory");
    for (int k = 0; k < it->slo.n; k++) {
        const slo_check *c = &it->slo.c[k];
        snprintf(name, sizeof name, "slo %s%s%s <= %g", c->t->cls, c->t->cls[0] ? "." : "", c->t->key, c->t->limit);
        int bad;
        if (isnan(c->value))        /* a saturated run has no latencies: nothing to print as a number */
            bad = add_verdict(it, !c->met, name, "%s not measured (%s)", c->t->key, sat ? "saturated" : "not reported");
        else
            bad = add_verdict(it, !c->met, name, "%s = %.4g (limit %g, margin %+.4g)", c->t->key, c->value, c->t->limit, c->margin);
        if (bad) return cu_die(1, "out of memory");
    }
    if (band_verdict(it) != 0) return cu_die(1, "out of memory");
    it->baseline = 0;
    if (!ck->db || planstore_baseline_of(ck->db, it->path, &it->baseline, err, sizeof err) != 1) {
        /* No accepted baseline (a renamed file, a lost database): a failure with
         * --require-baseline, else one warning line (check_print). */
        if (ck->require_baseline &&
            add_verdict(it, 1, "baseline", "no accepted baseline for this scenario (latsim baseline accept RUN)"))
            return cu_die(1, "out of memory");
        return 0;
    }
    report b;
    memset(&b, 0, sizeof b);
    int rc = 0;
    if (planstore_load_run(ck->db, it->baseline, &b, NULL, err, sizeof err) != 0) { rc = cu_die(1, "%s", err); goto out; }
    for (size_t k = 0; k < sizeof KEYM / sizeof KEYM[0]; k++) {
        double ci, bv = base_row(&b, KEYM[k].metric, KEYM[k].stat, &ci);
        double v = report_get(&it->o.rep, "", KEYM[k].metric, KEYM[k].stat);
        if (isnan(bv) || isnan(v)) continue;
        double allow = fabs(bv) * ck->tol / 100;
        if (!isnan(ci) && ci > allow) allow = ci;
        double worse = KEYM[k].worse * (v - bv);
        snprintf(name, sizeof name, "baseline %s%s%s", KEYM[k].metric, strcmp(KEYM[k].stat, "value") ? " " : "",
                 strcmp(KEYM[k].stat, "value") ? KEYM[k].stat : "");
        if (add_verdict(it, worse > allow, name, "%.4g vs baseline %.4g (run %lld): %+.1f %%, allowed %.1f %%",
                        v, bv, (long long) it->baseline, bv != 0 ? 100 * (v - bv) / bv : 0, bv != 0 ? 100 * allow / fabs(bv) : 0)) {
            rc = cu_die(1, "out of memory");
            goto out;
        }
    }
out:
    report_free(&b);
    return rc;
}

/* Writes the JUnit file (before the runs are stored: when writing it fails, a
 * full disk, nothing is stored), then stores the runs, all of them or none
 * (each can later be accepted as a baseline).  Returns 0 or the exit status. */
static int check_store(checker *ck)
{
    char err[2048];
    if (ck->junit && write_junit(ck->junit, ck->its, ck->nf, ck->wall, err, sizeof err) != 0) return cu_die(1, "%s", err);
    if (ck->db) { store_close(ck->db); ck->db = NULL; }
    ck->ids = calloc((size_t) ck->nf, sizeof *ck->ids);
    if (!ck->ids) return cu_die(1, "out of memory");
    if (!ck->store) return 0;
    stored_runs sr = { ck->its, ck->nf, ck->ids };
    int s = cu_write_db(ck->dbpath, save_runs, &sr, NULL, err, sizeof err);
    return s != 0 ? cu_die(s, "%s", err) : 0;
}

/* Prints one line per scenario, and each failed verdict.  Returns 1 when any
 * scenario failed, else 0. */
static int check_print(const checker *ck)
{
    int failed = 0;
    printf("%-36s %6s %5s %-10s %s\n", "scenario", "run", "slo", "baseline", "result");
    for (int i = 0; i < ck->nf; i++) {
        const item *it = &ck->its[i];
        int sf = 0, bf = 0;
        for (int k = 0; k < it->nv; k++) {
            if (!it->v[k].failed) continue;
            if (!strncmp(it->v[k].name, "baseline", 8)) bf = 1; else sf = 1;
        }
        char run[32] = "-", base[32] = "none";
        if (ck->store) snprintf(run, sizeof run, "%lld", (long long) ck->ids[i]);
        if (it->baseline) snprintf(base, sizeof base, "%s (%lld)", bf ? "WORSE" : "ok", (long long) it->baseline);
        else if (bf) snprintf(base, sizeof base, "MISSING");
        printf("%-36s %6s %5s %-10s %s\n", ERRMSG_SHOWN(it->path), run, it->slo.n == 0 ? "-" : sf ? "FAIL" : "ok", base,
               it->failed ? "FAIL" : "pass");
        for (int k = 0; k < it->nv; k++)
            if (it->v[k].failed) printf("    %s: %s\n", ERRMSG_SHOWN(it->v[k].name), ERRMSG_SHOWN(it->v[k].detail));
        prov_table(&it->o.rep, "    ", stdout);
        failed |= it->failed;
    }
    for (int i = 0; i < ck->nf; i++) prov_warn(&ck->its[i].o.rep);   /* at most once */
    int nobase = 0, first = -1;
    for (int i = 0; i < ck->nf; i++)
        if (!ck->its[i].baseline) {
            if (first < 0) first = i;
            nobase++;
        }
    if (nobase && !ck->require_baseline)
        fprintf(stderr, "latsim: check: warning: %s%s%s has no accepted baseline: not compared with one "
                "(latsim baseline accept RUN; --require-baseline fails instead)\n", ERRMSG_SHOWN(ck->its[first].path),
                nobase > 1 ? " and " : "", nobase > 1 ? (nobase == 2 ? "1 other scenario" : "other scenarios") : "");
    return failed ? 1 : 0;
}

int check_main(int argc, char **argv)
{
    checker ck;
    memset(&ck, 0, sizeof ck);
    int rc = check_parse(argc, argv, &ck);
    if (rc != CLI_GO) return rc;
    if ((rc = check_open(&ck)) != 0) goto out;
    if ((rc = check_run(&ck)) != 0) goto out;
    if ((rc = check_band(&ck)) != 0) goto out;
    for (int i = 0; i < ck.nf; i++)
        if ((rc = check_verdicts(&ck, &ck.its[i])) != 0) goto out;
    if ((rc = check_store(&ck)) != 0) goto out;
    rc = check_print(&ck);
out:
    if (ck.its)
        for (int i = 0; i < ck.nf; i++) {
            item *it = &ck.its[i];
            task_out_free(&it->o);
            task_out_free(&it->bo);
            slo_result_free(&it->slo);
            slo_free(&it->spec);
            free(it->v);
        }
    free(ck.its);
    free(ck.ids);
    for (int i = 0; i < ck.nowned; i++) free(ck.owned[i]);
    free(ck.owned);
    if (ck.db) store_close(ck.db);
    return rc;
}

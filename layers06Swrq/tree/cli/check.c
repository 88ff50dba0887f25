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
#include "cliutil.h"
#include "engine/errmsg.h"
#include "run/scenario.h"

#define MAX_FILES 256

static const char *USAGE =
    "usage: latsim check [FILE...] [--junit OUT.xml] [--tolerance PCT] [--seed N]\n"
    "                    [--jobs N] [--db PATH] [--no-store]\n"
    "\n"
    "Runs each scenario (default: every scenario stored in the database) at its rate x\n"
    "the [slo] headroom and checks it against its [slo] and its last accepted baseline\n"
    "(latsim baseline accept RUN): a key metric (e2e/ttft/tpot/queue P50 and P99,\n"
    "throughput, goodput) may be worse by at most PCT % (default 10) or the baseline's\n"
    "95 % interval.  Exit status: 0 all pass, 1 any fails, 2 bad input.\n"
    "\n"
    "usage: latsim baseline accept RUN [--db PATH]   make RUN its scenario's baseline\n"
    "       latsim baseline list [--db PATH]         list accepted baselines\n";

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

int baseline_main(int argc, char **argv)
{
    const char *dbopt = NULL;
    const char *args[4];
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { fputs(USAGE, stdout); return 0; }
        if (!strcmp(argv[i], "--db")) {
            if (i + 1 >= argc) return cu_die(2, "baseline: --db needs a PATH");
            dbopt = argv[++i];
        } else if (n < 4) args[n++] = argv[i];
        else return cu_die(2, "baseline: too many arguments");
    }
    const char *path = cu_db_path(dbopt);
    char err[1024];
    if (cu_check_db_path(path, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (access(path, F_OK) != 0) return cu_die(2, "%s: no such database (run a scenario first, or give --db PATH)", path);
    sqlite3 *db;
    if (n == 2 && !strcmp(args[0], "accept")) {
        int64_t id64;
        if (cu_parse_id("run", args[1], &id64, err, sizeof err) != 0) return cu_die(2, "baseline accept: %s (see latsim runs)", err);
        long long id = (long long) id64;
        /* One transaction: a refused ID (no such run) leaves the file as it was. */
        int rc = cu_write_db(path, accept_write, &id, NULL, err, sizeof err);
        if (rc != 0) return cu_die(rc, "%s", err);
        printf("run %lld accepted as the baseline of its scenario\n", id);
        return 0;
    }
    if (n == 1 && !strcmp(args[0], "list")) {
        if (store_open_readonly(path, &db, err, sizeof err) != 0) return cu_die(2, "%s", err);
        sqlite3_stmt *st = NULL;
        int rc = 0;
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
        return rc;
    }
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

int check_main(int argc, char **argv)
{
    const char *files[MAX_FILES];
    int nf = 0, jobs = 0, store = 1, rc = 2;
    const char *dbopt = NULL, *junit = NULL;
    double tol = 10;
    uint64_t seed = 0;
    char **owned = NULL;
    int nowned = 0;
    item *its = NULL;
    sqlite3 *db = NULL;
    char err[2048];
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(USAGE, stdout); return 0; }
        else if (!strcmp(a, "--no-store")) store = 0;
        else if (!strcmp(a, "--junit") || !strcmp(a, "--db") || !strcmp(a, "--jobs") || !strcmp(a, "--tolerance") || !strcmp(a, "--seed")) {
            if (i + 1 >= argc) return cu_die(2, "check: %s needs a value (see latsim check --help)", a);
            const char *v = argv[++i];
            if (!strcmp(a, "--junit")) junit = v;
            else if (!strcmp(a, "--db")) dbopt = v;
            else if (!strcmp(a, "--tolerance")) {
                char *end;
                tol = strtod(v, &end);
                if (end == v || *end || !(tol >= 0) || !isfinite(tol)) return cu_die(2, "check: --tolerance: expected a percentage >= 0, got '%s'", v);
            } else {
                long x = cu_posint("check", a, v, !strcmp(a, "--seed") ? 2147483647L : 1024);
                if (x < 0) return 2;
                if (!strcmp(a, "--jobs")) jobs = (int) x; else seed = (uint64_t) x;
            }
        } else if (a[0] == '-' && a[1]) return cu_die(2, "check: unknown option '%s' (see latsim check --help)", a);
        else if (nf == MAX_FILES) return cu_die(2, "check: at most %d scenarios", MAX_FILES);
        else files[nf++] = a;
    }
    const char *dbpath = cu_db_path(dbopt);
    /* Paths first: bad ones are refused before anything is read, run or stored. */
    if (cu_check_db_path(dbpath, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (junit && cu_check_out("check", "--junit", junit, err, sizeof err) != 0) return cu_die(2, "%s", err);
    /* Read-only here (stored scenarios, baselines); an empty file holds none. */
    struct stat dbst;
    int have_db = stat(dbpath, &dbst) == 0 && dbst.st_size > 0;
    if (have_db && store_open_readonly(dbpath, &db, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (nf == 0) {
        /* Every scenario stored in the database whose file is still there. */
        if (!db) return cu_die(2, "check: no scenario given and no database %s to take them from", dbpath);
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, "SELECT DISTINCT scenario_path FROM runs ORDER BY scenario_path", -1, &st, NULL) != SQLITE_OK) {
            store_close(db);
            return cu_die(2, "%s: %s", dbpath, sqlite3_errmsg(db));
        }
        while (sqlite3_step(st) == SQLITE_ROW && nf < MAX_FILES) {
            const char *p = (const char *) sqlite3_column_text(st, 0);
            if (access(p, R_OK) != 0) continue;
            /* One check per file, however it was named when stored (./a.ini, a.ini, /abs/a.ini). */
            char rp[4096], rq[4096];
            int dup = 0;
            if (realpath(p, rp))
                for (int k = 0; k < nf && !dup; k++) dup = realpath(files[k], rq) && !strcmp(rp, rq);
            if (dup) continue;
            char **x = realloc(owned, (size_t) (nowned + 1) * sizeof *x);
            if (!x || !(x[nowned] = strdup(p))) { free(x ? x : owned); sqlite3_finalize(st); store_close(db); return cu_die(1, "out of memory"); }
            owned = x;
            files[nf++] = owned[nowned++];
        }
        sqlite3_finalize(st);
        if (nf == 0) { rc = cu_die(2, "check: the database %s holds no scenario whose file still exists", dbpath); goto done; }
    }
    its = calloc((size_t) nf, sizeof *its);
    task *ts = calloc((size_t) nf, sizeof *ts);
    task_out *outs = calloc((size_t) nf, sizeof *outs);
    if (!its || !ts || !outs) { free(ts); free(outs); rc = cu_die(1, "out of memory"); goto done; }
    /* Load each (bad input stops everything before anything runs) and set the rate x headroom. */
    for (int i = 0; i < nf; i++) {
        item *it = &its[i];
        it->path = files[i];
        scenario sc;
        if (scenario_load(&sc, files[i], NULL, 0, err, sizeof err) != 0) {
            scenario_free(&sc);
            free(ts); free(outs);
            rc = cu_die(2, "%s", err);
            goto done;
        }
        it->t.path = files[i];
        it->t.seed = seed;
        /* Closed loops and rate schedules are checked as written (no single rate to scale). */
        if (sc.slo.headroom > 1 && sc.wl.users == 0 && (sc.wl.arrival == ARRIVAL_TRACE || sc.wl.sched.kind == RATE_FIXED)) {
            if (sc.wl.arrival == ARRIVAL_TRACE) snprintf(it->rate_set, sizeof it->rate_set, "workload.speedup=%.10g", sc.wl.speedup * sc.slo.headroom);
            else snprintf(it->rate_set, sizeof it->rate_set, "workload.rate=%.10g", sc.wl.rate * sc.slo.headroom);
            it->t.sets[it->t.nsets++] = it->rate_set;
        }
        scenario_free(&sc);
        ts[i] = it->t;
    }
    if (store && cu_check_db(dbpath, err, sizeof err) != 0) { free(ts); free(outs); rc = cu_die(2, "%s", err); goto done; }
    double t0 = cu_clock();
    task_run_all(ts, nf, jobs, dbpath, outs, NULL, NULL);
    double wall = cu_clock() - t0;
    free(ts);
    for (int i = 0; i < nf; i++) its[i].o = outs[i];
    free(outs);
    for (int i = 0; i < nf; i++)
        if (its[i].o.status != 0) { rc = cu_die(its[i].o.status == 2 ? 2 : 1, "%s", its[i].o.err); goto done; }

    /* Verdicts. */
    for (int i = 0; i < nf; i++) {
        item *it = &its[i];
        scenario sc;
        if (scenario_load(&sc, it->path, NULL, 0, err, sizeof err) != 0) { scenario_free(&sc); rc = cu_die(2, "%s", err); goto done; }
        it->spec = sc.slo;
        memset(&sc.slo, 0, sizeof sc.slo);
        scenario_free(&sc);
        int e = slo_eval(&it->spec, it->o.rep.rows, it->o.rep.n, &it->slo);
        double headroom = it->spec.headroom;
        if (e != 0) { rc = cu_die(1, "out of memory"); goto done; }
        int sat = report_get(&it->o.rep, "", "saturated", "value") > 0;
        char name[160];
        if (add_verdict(it, sat, "not saturated", "%s at %.4g req/s%s", sat ? "saturated" : "stable", it->o.rate,
                        headroom > 1 ? " (rate x headroom)" : "")) { rc = cu_die(1, "out of memory"); goto done; }
        for (int k = 0; k < it->slo.n; k++) {
            const slo_check *c = &it->slo.c[k];
            snprintf(name, sizeof name, "slo %s%s%s <= %g", c->t->cls, c->t->cls[0] ? "." : "", c->t->key, c->t->limit);
            int bad;
            if (isnan(c->value))        /* a saturated run has no latencies: nothing to print as a number */
                bad = add_verdict(it, !c->met, name, "%s not measured (%s)", c->t->key, sat ? "saturated" : "not reported");
            else
                bad = add_verdict(it, !c->met, name, "%s = %.4g (limit %g, margin %+.4g)", c->t->key, c->value, c->t->limit, c->margin);
            if (bad) {
                rc = cu_die(1, "out of memory");
                goto done;
            }
        }
        it->baseline = 0;
        if (db && planstore_baseline_of(db, it->path, &it->baseline, err, sizeof err) == 1) {
            report b;
            if (planstore_load_run(db, it->baseline, &b, NULL, err, sizeof err) != 0) { report_free(&b); rc = cu_die(1, "%s", err); goto done; }
            for (size_t k = 0; k < sizeof KEYM / sizeof KEYM[0]; k++) {
                double ci, bv = base_row(&b, KEYM[k].metric, KEYM[k].stat, &ci);
                double v = report_get(&it->o.rep, "", KEYM[k].metric, KEYM[k].stat);
                if (isnan(bv) || isnan(v)) continue;
                double allow = fabs(bv) * tol / 100;
                if (!isnan(ci) && ci > allow) allow = ci;
                double worse = KEYM[k].worse * (v - bv);
                snprintf(name, sizeof name, "baseline %s%s%s", KEYM[k].metric, strcmp(KEYM[k].stat, "value") ? " " : "",
                         strcmp(KEYM[k].stat, "value") ? KEYM[k].stat : "");
                if (add_verdict(it, worse > allow, name, "%.4g vs baseline %.4g (run %lld): %+.1f %%, allowed %.1f %%",
                                v, bv, (long long) it->baseline, bv != 0 ? 100 * (v - bv) / bv : 0, bv != 0 ? 100 * allow / fabs(bv) : 0)) {
                    report_free(&b);
                    rc = cu_die(1, "out of memory");
                    goto done;
                }
            }
            report_free(&b);
        }
    }

    /* The JUnit file before the runs are stored: when writing it fails (a full
     * disk), nothing is stored (exit 1). */
    if (junit && write_junit(junit, its, nf, wall, err, sizeof err) != 0) { rc = cu_die(1, "%s", err); goto done; }
    /* Store the runs (each can later be accepted as a baseline). */
    if (db) { store_close(db); db = NULL; }
    int64_t *ids = calloc((size_t) nf, sizeof *ids);
    if (!ids) { rc = cu_die(1, "out of memory"); goto done; }
    if (store) {      /* all of them or none (one transaction) */
        stored_runs sr = { its, nf, ids };
        int s = cu_write_db(dbpath, save_runs, &sr, NULL, err, sizeof err);
        if (s != 0) { free(ids); rc = cu_die(s, "%s", err); goto done; }
    }
    int failed = 0;
    printf("%-36s %6s %5s %-10s %s\n", "scenario", "run", "slo", "baseline", "result");
    for (int i = 0; i < nf; i++) {
        item *it = &its[i];
        int sf = 0, bf = 0;
        for (int k = 0; k < it->nv; k++) {
            if (!it->v[k].failed) continue;
            if (!strncmp(it->v[k].name, "baseline", 8)) bf = 1; else sf = 1;
        }
        char run[32] = "-", base[32] = "none";
        if (store) snprintf(run, sizeof run, "%lld", (long long) ids[i]);
        if (it->baseline) snprintf(base, sizeof base, "%s (%lld)", bf ? "WORSE" : "ok", (long long) it->baseline);
        printf("%-36s %6s %5s %-10s %s\n", ERRMSG_SHOWN(it->path), run, it->slo.n == 0 ? "-" : sf ? "FAIL" : "ok", base, it->failed ? "FAIL" : "pass");
        for (int k = 0; k < it->nv; k++)
            if (it->v[k].failed) printf("    %s: %s\n", ERRMSG_SHOWN(it->v[k].name), ERRMSG_SHOWN(it->v[k].detail));
        failed |= it->failed;
    }
    free(ids);
    rc = failed ? 1 : 0;
done:
    if (its) for (int i = 0; i < nf; i++) { task_out_free(&its[i].o); slo_result_free(&its[i].slo); slo_free(&its[i].spec); free(its[i].v); }
    free(its);
    for (int i = 0; i < nowned; i++) free(owned[i]);
    free(owned);
    if (db) store_close(db);
    return rc;
}

/* compare.c -- `latsim compare A B`: two scenario files (each run as N
 * replications, in parallel worker processes) or two stored runs, metric by
 * metric, with the difference in % and whether it is larger than the
 * replications' confidence intervals: |B - A| > sqrt(ci_A^2 + ci_B^2), the
 * half-width of the 95 % interval of the difference of two independent means
 * (a conservative-enough rule for the t intervals of a few replications).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cliopt.h"
#include "cliutil.h"
#include "provenance.h"
#include "commands.h"
#include "latsim/errmsg.h"
#include "latsim/report.h"
#include "latsim/store.h"

#define MAX_SETS 32

enum { O_REPS = 1, O_SEED, O_JOBS };

static const cli_opt OPTS[] = {
    { "replications", O_REPS, "N", "runs of each scenario file (default 5; seeds seed..seed+N-1)", 0 },
    { "seed", O_SEED, "N", "the first seed (default 1)", 0 },
    { "set", CLI_SET, "S.K=V", "override key K of section S in both scenarios (repeatable)", CLI_REPEAT },
    { "jobs", O_JOBS, "N", "worker processes (default: all cores)", 0 },
    CLI_OPT_JSON,
    CLI_OPT_DB,
    CLI_OPT_COST_DB,
    { NULL },
};

static const cli_cmd CMD = {
    "compare", "A B",
    "A and B are scenario files (each is run N times, default 5, seeds seed..seed+N-1;\n"
    "--set applies to both) or stored run IDs.  Prints each system metric (and each\n"
    "pool's utilisation) side by side with B's difference from A in %, and '*' when the\n"
    "difference exceeds the 95% confidence intervals of the replications (of one side\n"
    "when only one is replicated).\n",
    "", OPTS, MAX_SETS, 0,
};

/* What compare was asked. */
typedef struct compare_opts {
    int reps;                 /* --replications */
    int jobs;                 /* --jobs (0: all cores) */
    uint64_t seed;            /* --seed (0: 1) */
} compare_opts;

/* cli_opt_fn of compare: CTX is the compare_opts. */
static int compare_opt(void *ctx, int id, const char *v)
{
    compare_opts *o = ctx;
    const char *name = id == O_REPS ? "--replications" : id == O_JOBS ? "--jobs" : "--seed";
    long x = cu_posint("compare", name, v, id == O_SEED ? 2147483647L : 10000);
    if (x < 0) return 2;
    if (id == O_REPS) o->reps = (int) x;
    else if (id == O_JOBS) o->jobs = (int) x;
    else o->seed = (uint64_t) x;
    return 0;
}
/* Loads side S (file or run id) into OUT.  Returns 0 or the exit status. */
static int load_side(const char *s, int reps, uint64_t seed, const char *const *sets, int nsets, int jobs,
                     const char *dbpath, report *out)
{
    char err[1024];
    /* All digits and no such file: a run ID, parsed strictly (not saturated). */
    int digits = s[0] != '\0';
    for (const char *q = s; *q && digits; q++) digits = *q >= '0' && *q <= '9';
    int64_t id = 0;
    if (digits && access(s, F_OK) != 0) {
        if (cu_parse_id("run", s, &id, err, sizeof err) != 0)
            return cu_die(2, "compare: %s: neither a scenario file nor a run ID (a whole number from 1 to %lld)", s, (long long) INT64_MAX);
        if (access(dbpath, F_OK) != 0) return cu_die(2, "compare: %s: no such database for run %lld", dbpath, (long long) id);
        sqlite3 *db;
        if (store_open_readonly(dbpath, &db, err, sizeof err) != 0) return cu_die(2, "%s", err);
        int rc = planstore_load_run(db, id, out, NULL, err, sizeof err);
        store_close(db);
        if (rc == 1) return cu_die(2, "compare: %s", err);
        if (rc != 0) return cu_die(1, "%s", err);
        return 0;
    }
    task *ts = calloc((size_t) reps, sizeof *ts);
    task_out *os = calloc((size_t) reps, sizeof *os);
    report *rs = calloc((size_t) reps, sizeof *rs);
    int rc = 0;
    if (!ts || !os || !rs) { rc = cu_die(1, "out of memory"); goto done; }
    for (int i = 0; i < reps; i++) {
        ts[i].path = s;
        for (int k = 0; k < nsets; k++) ts[i].sets[k] = sets[k];
        ts[i].nsets = nsets;
        ts[i].seed = (seed ? seed : 1) + (uint64_t) i;
    }
    task_run_all(ts, reps, jobs, dbpath, os, NULL, NULL);
    for (int i = 0; i < reps; i++)
        if (os[i].status != 0) { rc = cu_die(os[i].status == 2 ? 2 : 1, "%s", os[i].err); goto done; }
    for (int i = 0; i < reps; i++) rs[i] = os[i].rep;
    if (reps == 1) { *out = os[0].rep; memset(&os[0].rep, 0, sizeof os[0].rep); }
    else if (report_aggregate(rs, reps, out) != 0) rc = cu_die(1, "out of memory");
done:
    if (os) for (int i = 0; i < reps; i++) task_out_free(&os[i]);
    free(ts);
    free(os);
    free(rs);
    return rc;
}

/* "value" or "value±ci" in a few significant digits. */
static void cell(char *b, size_t n, double v, double ci)
{
    char vs[32], cs[32];
    if (isnan(v)) { snprintf(b, n, "-"); return; }
    snprintf(vs, sizeof vs, (fabs(v) >= 1000 || v == floor(v)) && fabs(v) < 1e15 ? "%.0f" : "%.4g", v);
    if (isnan(ci)) { snprintf(b, n, "%s", vs); return; }
    snprintf(cs, sizeof cs, ci >= 100 && ci < 1e15 ? "%.0f" : "%.2g", ci);
    snprintf(b, n, "%s±%s", vs, cs);
}

static int wanted(const store_stat *r)
{
    if (!r->scope[0]) {
        static const char *skip[] = { "wall_time_s", "events", "sim_time_s", "window_s", "saturated", "trace_exhausted",
                                      "finite", "backlog_grew", "peak_queue_at_s" };
        for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++) if (!strcmp(r->metric, skip[i])) return 0;
        return 1;
    }
    return !strcmp(r->metric, "utilization") || (!strcmp(r->metric, "queue") && !strcmp(r->stat, "p99"));
}

int compare_main(int argc, char **argv)
{
    compare_opts o = { .reps = 5 };
    cli_args a;
    int rc = cli_parse(&CMD, argc, argv, &a, compare_opt, &o);
    if (rc != CLI_GO) return rc;
    if (a.npos > 2) return cu_die(2, "compare: expected two scenarios or run IDs, got a third ('%s')", a.pos[2]);
    if (a.npos < 2) return cu_die(2, "compare: expected two scenarios or run IDs (see latsim compare --help)");
    const char *side[2] = { a.pos[0], a.pos[1] };
    int reps = o.reps, jobs = o.jobs, json = a.json, nsets = a.nsets;
    uint64_t seed = o.seed;
    const char *const *sets = a.sets;
    const char *dbpath = cu_db_path(a.db);
    char err[1024];
    if (cu_check_db_path(dbpath, err, sizeof err) != 0) return cu_die(2, "%s", err);
    report r[2];
    memset(r, 0, sizeof r);
    rc = load_side(side[0], reps, seed, sets, nsets, jobs, dbpath, &r[0]);
    if (!rc) rc = load_side(side[1], reps, seed, sets, nsets, jobs, dbpath, &r[1]);
    if (rc) { report_free(&r[0]); report_free(&r[1]); return rc; }

    if (json) {
        printf("{\"a\": ");
        report_json_str(stdout, side[0]);
        printf(", \"b\": ");
        report_json_str(stdout, side[1]);
        printf(", \"replications\": [%d, %d], \"cost_models\": {\"a\": ", r[0].replications, r[1].replications);
        prov_json(&r[0], stdout);
        printf(", \"b\": ");
        prov_json(&r[1], stdout);
        printf("}, \"metrics\": [");
    } else {
        printf("A = %s (%d replication%s)\nB = %s (%d replication%s)\n", ERRMSG_SHOWN(side[0]), r[0].replications, r[0].replications > 1 ? "s" : "",
               ERRMSG_SHOWN(side[1]), r[1].replications, r[1].replications > 1 ? "s" : "");
        prov_table(&r[0], "A ", stdout);
        prov_table(&r[1], "B ", stdout);
        putchar('\n');
        printf("  %-30s %14s %14s %9s  %s\n", "metric", "A", "B", "B vs A", "beyond CI");
    }
    int first = 1, nsig = 0;
    for (size_t i = 0; i < r[0].n; i++) {
        const store_stat *a = &r[0].rows[i];
        if (!wanted(a)) continue;
        const store_stat *b = NULL;
        for (size_t k = 0; k < r[1].n && !b; k++)
            if (!strcmp(r[1].rows[k].scope, a->scope) && !strcmp(r[1].rows[k].metric, a->metric) && !strcmp(r[1].rows[k].stat, a->stat))
                b = &r[1].rows[k];
        if (!b || (isnan(a->value) && isnan(b->value))) continue;
        double diff = a->value != 0 ? 100 * (b->value - a->value) / fabs(a->value) : NAN;
        double ci = sqrt((isnan(a->ci95) ? 0 : a->ci95 * a->ci95) + (isnan(b->ci95) ? 0 : b->ci95 * b->ci95));
        int known = !isnan(a->ci95) || !isnan(b->ci95);     /* one side's interval is enough to judge */
        int sig = known && fabs(b->value - a->value) > ci;
        nsig += sig;
        char name[160];
        snprintf(name, sizeof name, "%s%s%s%s%s", a->scope, a->scope[0] ? "." : "", a->metric,
                 strcmp(a->stat, "value") ? " " : "", strcmp(a->stat, "value") ? a->stat : "");
        if (json) {
            printf("%s{\"metric\": ", first ? "" : ", ");
            report_json_str(stdout, name);
            printf(", \"a\": ");
            if (isnan(a->value)) printf("null"); else printf("%.6g", a->value);
            printf(", \"b\": ");
            if (isnan(b->value)) printf("null"); else printf("%.6g", b->value);
            printf(", \"diff_pct\": ");
            if (isnan(diff)) printf("null"); else printf("%.4g", diff);
            printf(", \"beyond_ci\": %s}", !known ? "null" : sig ? "true" : "false");
        } else {
            char av[72], bv[72], dv[24];
            cell(av, sizeof av, a->value, a->ci95);
            cell(bv, sizeof bv, b->value, b->ci95);
            if (isnan(diff)) snprintf(dv, sizeof dv, "-"); else snprintf(dv, sizeof dv, "%+.1f%%", diff);
            printf("  %-30s %14s %14s %9s  %s\n", ERRMSG_SHOWN(name), av, bv, dv, !known ? "(no CI)" : sig ? "*" : "");
        }
        first = 0;
    }
    prov_warn(&r[0]);
    prov_warn(&r[1]);
    if (json) printf("], \"beyond_ci\": %d}\n", nsig);
    else printf("\n%d metric%s differ by more than the 95%% confidence intervals (*)\n", nsig, nsig == 1 ? "" : "s");
    report_free(&r[0]);
    report_free(&r[1]);
    return 0;
}

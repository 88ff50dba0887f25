/* design.c -- loading the designs of a review and reading their headline
 * metrics (see design.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cliutil.h"
#include "design.h"
#include "latsim/errmsg.h"
#include "latsim/infile.h"
#include "latsim/store.h"

static char *dup_or_null(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* The whole file PATH as a string (malloc'd), NULL when unreadable. */
static char *read_text(const char *path)
{
    char oerr[1400];
    FILE *f = infile_open(path, INFILE_MAX_SCENARIO, oerr, sizeof oerr);
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    while (b) {
        if (n + 1 >= cap) {
            char *x = realloc(b, cap *= 2);
            if (!x) { free(b); b = NULL; break; }
            b = x;
        }
        size_t k = fread(b + n, 1, cap - n - 1, f);
        if (k == 0) break;
        n += k;
    }
    fclose(f);
    if (b) b[n] = '\0';
    return b;
}

/* Stored run ID: its rows, CDF points, path and scenario text. */
static int load_run(const char *s, int64_t id, const char *dbpath, const char *cmd, design *out)
{
    char err[1024];
    if (access(dbpath, F_OK) != 0) return cu_die(2, "%s: %s: no such database for run %lld", cmd, dbpath, (long long) id);
    sqlite3 *db;
    if (store_open_readonly(dbpath, &db, err, sizeof err) != 0) return cu_die(2, "%s", err);
    int rc = planstore_load_run(db, id, &out->rep, &out->path, err, sizeof err);
    if (rc == 0) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, "SELECT scenario_text FROM runs WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, id);
            if (sqlite3_step(st) == SQLITE_ROW) out->text = dup_or_null((const char *) sqlite3_column_text(st, 0));
            sqlite3_finalize(st);
        }
    }
    store_close(db);
    (void) s;
    if (rc == 1) return cu_die(2, "%s: %s", cmd, err);
    if (rc != 0) return cu_die(1, "%s", err);
    out->run_id = id;
    return 0;
}

int design_load(const char *s, const design_how *how, char label, const char *cmd, design *out)
{
    memset(out, 0, sizeof *out);
    out->arg = s;
    out->label[0] = label;
    char err[1024];
    /* All digits and no such file: a run ID, parsed strictly (not saturated). */
    int digits = s[0] != '\0';
    for (const char *q = s; *q && digits; q++) digits = *q >= '0' && *q <= '9';
    if (digits && access(s, F_OK) != 0) {
        int64_t id = 0;
        if (cu_parse_id("run", s, &id, err, sizeof err) != 0)
            return cu_die(2, "%s: %s: neither a scenario file nor a run ID (a whole number from 1 to %lld)", cmd, s,
                          (long long) INT64_MAX);
        int rc = load_run(s, id, how->dbpath, cmd, out);
        if (rc) design_free(out);
        return rc;
    }
    int reps = how->reps;
    task *ts = calloc((size_t) reps, sizeof *ts);
    task_out *os = calloc((size_t) reps, sizeof *os);
    report *rs = calloc((size_t) reps, sizeof *rs);
    int rc = 0;
    if (!ts || !os || !rs) { rc = cu_die(1, "out of memory"); goto done; }
    for (int i = 0; i < reps; i++) {
        ts[i].path = s;
        for (int k = 0; k < how->nsets; k++) ts[i].sets[k] = how->sets[k];
        ts[i].nsets = how->nsets;
        ts[i].seed = (how->seed ? how->seed : 1) + (uint64_t) i;
    }
    task_run_all(ts, reps, how->jobs, how->dbpath, os, NULL, NULL);
    for (int i = 0; i < reps; i++)
        if (os[i].status != 0) { rc = cu_die(os[i].status == 2 ? 2 : 1, "%s", os[i].err); goto done; }
    for (int i = 0; i < reps; i++) rs[i] = os[i].rep;
    if (reps == 1) { out->rep = os[0].rep; memset(&os[0].rep, 0, sizeof os[0].rep); }
    else if (report_aggregate(rs, reps, &out->rep) != 0) rc = cu_die(1, "out of memory");
    out->path = dup_or_null(s);
    out->text = read_text(s);
done:
    if (os) for (int i = 0; i < reps; i++) task_out_free(&os[i]);
    free(ts);
    free(os);
    free(rs);
    if (rc) design_free(out);
    return rc;
}

void design_free(design *d)
{
    report_free(&d->rep);
    free(d->path);
    free(d->text);
    d->path = d->text = NULL;
}

static const design_metric HEADLINE[] = {
    { "ttft p50", "ms", "", "ttft", "p50" },
    { "ttft p99", "ms", "", "ttft", "p99" },
    { "tpot p50", "ms", "", "tpot", "p50" },
    { "tpot p99", "ms", "", "tpot", "p99" },
    { "itl p50", "ms", "", "itl", "p50" },
    { "itl p99", "ms", "", "itl", "p99" },
    { "e2e p50", "ms", "", "e2e", "p50" },
    { "e2e p99", "ms", "", "e2e", "p99" },
    { "queue mean", "ms", "", "queue", "mean" },
    { "queue p99", "ms", "", "queue", "p99" },
    { "throughput", "req/s", "", "throughput_rps", "value" },
    { "goodput", "req/s", "", "goodput_rps", "value" },
    { "gpus", "GPUs", "", "gpus", "value" },
    { "cost", "$/h", "", "cost_per_hour", "value" },
    { "cost per 1k requests", "$", "", "cost_per_1k_requests", "value" },
    { "energy", "kWh", "", "energy_kwh", "value" },
};

const design_metric *design_headline(int *n)
{
    *n = (int) (sizeof HEADLINE / sizeof HEADLINE[0]);
    return HEADLINE;
}

int design_value(const report *r, const design_metric *m, double *v, double *ci)
{
    *v = *ci = NAN;
    if (!strcmp(m->metric, "gpus") && !m->scope[0]) {
        /* The pools' GPUs (LLM pools report "gpus"), their intervals in quadrature. */
        double s = 0, c2 = 0;
        int any = 0, allci = 1;
        for (size_t i = 0; i < r->n; i++) {
            const store_stat *x = &r->rows[i];
            if (!x->scope[0] || strcmp(x->metric, "gpus") || strcmp(x->stat, "value") || x->text || isnan(x->value)) continue;
            if (!strncmp(x->scope, REPORT_CLASS_SCOPE, strlen(REPORT_CLASS_SCOPE))) continue;
            s += x->value;
            any = 1;
            if (isnan(x->ci95)) allci = 0; else c2 += x->ci95 * x->ci95;
        }
        if (!any) return 0;
        *v = s;
        *ci = allci && r->replications > 1 ? sqrt(c2) : NAN;
        return 1;
    }
    for (size_t i = 0; i < r->n; i++) {
        const store_stat *x = &r->rows[i];
        if (!strcmp(x->scope, m->scope) && !strcmp(x->metric, m->metric) && !strcmp(x->stat, m->stat) && !x->text) {
            *v = x->value;
            *ci = x->ci95;
            return 1;
        }
    }
    return 0;
}

int design_beyond(double a, double ca, double b, double cb)
{
    if (isnan(a) || isnan(b) || (isnan(ca) && isnan(cb))) return -1;
    double ci = sqrt((isnan(ca) ? 0 : ca * ca) + (isnan(cb) ? 0 : cb * cb));
    return fabs(b - a) > ci;
}

double design_diff_pct(double a, double b)
{
    if (isnan(a) || isnan(b) || a == 0) return NAN;
    return 100 * (b - a) / fabs(a);
}

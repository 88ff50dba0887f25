/* design.c -- loading the designs of a review and reading their headline
 * metrics (see design.h). */
#include <errno.h>
#include <jansson.h>
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

/* Scenario file PATH run HOW->reps times with SETS (NSETS) into OUT (the
 * replications aggregated).  Returns 0, or the exit status after one line. */
static int run_file(const char *path, const char *const *sets, int nsets, const design_how *how, report *out)
{
    int reps = how->reps;
    task *ts = calloc((size_t) reps, sizeof *ts);
    task_out *os = calloc((size_t) reps, sizeof *os);
    report *rs = calloc((size_t) reps, sizeof *rs);
    int rc = 0;
    if (!ts || !os || !rs) { rc = cu_die(1, "out of memory"); goto done; }
    for (int i = 0; i < reps; i++) {
        ts[i].path = path;
        for (int k = 0; k < nsets && k < TASK_MAX_SETS; k++) ts[i].sets[k] = sets[k];
        ts[i].nsets = nsets < TASK_MAX_SETS ? nsets : TASK_MAX_SETS;
        ts[i].seed = (how->seed ? how->seed : 1) + (uint64_t) i;
    }
    task_run_all(ts, reps, how->jobs, how->dbpath, os, NULL, NULL);
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

/* D's scenario parsed from its text (a run's without the --set overrides, a
 * file's with them), its title and description.  Nothing when it does not load. */
static void describe(design *d, const design_how *how)
{
    const char *p = d->path ? d->path : d->arg, *base = strrchr(p, '/');
    if (d->text && (d->sc = scenario_new()) != NULL) {
        char err[512];
        if (scenario_load_text(d->sc, d->path ? d->path : "scenario.ini", d->text, d->run_id ? NULL : how->sets,
                               d->run_id ? 0 : how->nsets, err, sizeof err) != 0) {
            scenario_delete(d->sc);
            d->sc = NULL;
        }
    }
    const char *t = d->sc ? scenario_sim_value(d->sc, "title") : NULL, *ds = d->sc ? scenario_sim_value(d->sc, "description") : NULL;
    d->title = dup_or_null(t && *t ? t : base ? base + 1 : p);
    d->desc = ds && *ds ? dup_or_null(ds) : NULL;
}

/* --band: file design D (with an LLM pool) run again with every LLM pool's
 * step times at the pessimistic end of its widest cost model's 90 % band
 * (band.h; as latsim check --strict-band does), the same seeds.  Returns 0,
 * or the exit status after one line. */
static int run_band(design *d, const design_how *how)
{
    if (!how->band || d->run_id || !d->sc || band_of_report(&d->rep, &d->bm) == 0) return 0;
    const char *sets[TASK_MAX_SETS];
    char own[8][200];
    int ns = 0, nb = 0;
    for (int k = 0; k < how->nsets && ns < TASK_MAX_SETS; k++) sets[ns++] = how->sets[k];
    for (int p = 0; p < scenario_npools(d->sc) && nb < 8 && ns < TASK_MAX_SETS; p++) {
        if (!scenario_pool_takes(d->sc, p, "step_time_scale")) continue;
        const char *v = scenario_pool_value(d->sc, p, "step_time_scale");
        double k = v && strtod(v, NULL) > 0 ? strtod(v, NULL) : 1;
        snprintf(own[nb], sizeof own[nb], "pool %s.step_time_scale=%.17g", scenario_pool_name(d->sc, p), d->bm.hi * k);
        sets[ns++] = own[nb++];
    }
    int rc = run_file(d->path, sets, ns, how, &d->band);
    d->has_band = rc == 0;
    return rc;
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
        else describe(out, how);
        return rc;
    }
    int rc = run_file(s, how->sets, how->nsets, how, &out->rep);
    if (rc == 0) {
        out->path = dup_or_null(s);
        out->text = read_text(s);
        describe(out, how);
        rc = run_band(out, how);
    }
    if (rc) design_free(out);
    return rc;
}

void design_free(design *d)
{
    report_free(&d->rep);
    if (d->has_band) report_free(&d->band);
    scenario_delete(d->sc);
    free(d->path);
    free(d->text);
    free(d->title);
    free(d->desc);
    d->path = d->text = d->title = d->desc = NULL;
    d->sc = NULL;
    d->has_band = 0;
}

#define LO DESIGN_LOWER
#define HI DESIGN_HIGHER
static const design_metric HEADLINE[] = {
    { "ttft p50", "ms", "", "ttft", "p50", LO },
    { "ttft p99", "ms", "", "ttft", "p99", LO },
    { "tpot p50", "ms", "", "tpot", "p50", LO },
    { "tpot p99", "ms", "", "tpot", "p99", LO },
    { "itl p50", "ms", "", "itl", "p50", LO },
    { "itl p99", "ms", "", "itl", "p99", LO },
    { "e2e p50", "ms", "", "e2e", "p50", LO },
    { "e2e p99", "ms", "", "e2e", "p99", LO },
    { "queue mean", "ms", "", "queue", "mean", LO },
    { "queue p99", "ms", "", "queue", "p99", LO },
    { "throughput", "req/s", "", "throughput_rps", "value", HI },
    { "goodput", "req/s", "", "goodput_rps", "value", HI },
    { "gpus", "GPUs", "", "gpus", "value", LO },
    { "cost", "$/h", "", "cost_per_hour", "value", LO },
    { "cost per 1k requests", "$", "", "cost_per_1k_requests", "value", LO },
    { "energy", "kWh", "", "energy_kwh", "value", LO },
    /* J per output token = kJ per 1000 output tokens */
    { "energy per request", "J", "", "joules_per_request", "value", LO },
    { "energy per 1k output tokens", "kJ", "", "joules_per_output_token", "value", LO },
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
    if (isnan(a) || isnan(b) || a == 0 || b == 0) return NAN;
    return 100 * (b - a) / fabs(a);
}

int design_judge(int better, double a, double b, int beyond)
{
    if (better == DESIGN_NEUTRAL || isnan(a) || isnan(b) || a == b || beyond == 0 || beyond == -2) return 0;
    return (b < a) == (better == DESIGN_LOWER) ? 1 : -1;
}

char *design_fmt(char *b, size_t n, double v)
{
    if (isnan(v)) { snprintf(b, n, "-"); return b; }
    if (isinf(v)) { snprintf(b, n, v > 0 ? "inf" : "-inf"); return b; }
    double a = fabs(v);
    if (a < 999.95) {
        /* 4 significant digits, fixed point, trailing zeros dropped */
        int dec = a > 0 ? 3 - (int) floor(log10(a)) : 0;
        if (dec < 0) dec = 0;
        if (dec > 6) dec = 6;
        snprintf(b, n, "%.*f", dec, v);
        if (dec > 0 && strchr(b, '.')) {
            char *e = b + strlen(b) - 1;
            while (*e == '0') *e-- = '\0';
            if (*e == '.') *e = '\0';
        }
        if (!strcmp(b, "-0")) snprintf(b, n, "0");
        return b;
    }
    char digits[64];
    snprintf(digits, sizeof digits, "%.0f", a);
    size_t len = strlen(digits), o = 0;
    if (v < 0 && o + 1 < n) b[o++] = '-';
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        if (i && (len - i) % 3 == 0) b[o++] = ',';
        b[o++] = digits[i];
    }
    b[o < n ? o : n - 1] = '\0';
    return b;
}

const char *design_unit(const double *v, int n, const char *unit, double *scale)
{
    *scale = 1;
    if (strcmp(unit, "ms")) return unit;
    int any = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(v[i])) continue;
        if (!(fabs(v[i]) >= 1000)) return unit;
        any = 1;
    }
    if (!any) return unit;
    *scale = 1e-3;
    return "s";
}

int design_slo(const design *d, const report *r, slo_result *out)
{
    memset(out, 0, sizeof *out);
    const slo_spec *s = d->sc ? scenario_slo(d->sc) : NULL;
    if (!s || s->n == 0) return 0;
    return slo_eval(s, r->rows, r->n, out) ? -1 : 1;
}

/* ---- gateway and cache quality ------------------------------------------- */

/* The row NAME of ROWS (N), added (unit U, direction B) when missing and room is
 * left; NULL when full. */
static design_qrow *qrow(design_qrow *rows, int *n, int max, const char *name, const char *u, int b)
{
    for (int i = 0; i < *n; i++) if (!strcmp(rows[i].name, name)) return &rows[i];
    if (*n >= max) return NULL;
    design_qrow *q = &rows[(*n)++];
    snprintf(q->name, sizeof q->name, "%s", name);
    q->unit = u;
    q->better = b;
    for (int i = 0; i < DESIGN_MAX; i++) q->v[i] = NAN;
    return q;
}

static void qset(design_qrow *rows, int *n, int max, int i, const char *name, const char *u, int b, double v)
{
    if (isnan(v)) return;
    design_qrow *q = qrow(rows, n, max, name, u, b);
    if (q) q->v[i] = v;
}

/* The pool metrics of the table: a share (x 100, in %) or a count. */
static const struct { const char *metric, *shown, *unit; int pct, better; } QPOOL[] = {
    { "hit_rate", "cache hit rate", "%", 1, HI },
    { "false_hits", "cache false hits", "req", 0, LO },
    { "prefix_hit_rate", "prefix hit rate (tokens)", "%", 1, HI },
    { "prefix_request_hit_rate", "prefix hit rate (requests)", "%", 1, HI },
    { "lora_hit_rate", "LoRA adapter hit rate", "%", 1, HI },
    { "kv_offload_total_hit_rate", "KV offload hit rate", "%", 1, HI },
    { "small_got_simple", "small got simple", "req", 0, DESIGN_NEUTRAL },
    { "large_got_complex", "large got complex", "req", 0, DESIGN_NEUTRAL },
    { "small_got_complex", "misroute small got complex", "req", 0, LO },
    { "large_got_simple", "misroute large got simple", "req", 0, LO },
};

int design_quality(const design *d, int n, design_qrow *rows, int max)
{
    int nr = 0;
    char name[200];
    for (int i = 0; i < n; i++) {
        const report *r = &d[i].rep;
        const char *last = NULL;
        for (size_t j = 0; j < r->n; j++) {
            const char *sc = r->rows[j].scope;
            if (!sc[0] || !strncmp(sc, REPORT_CLASS_SCOPE, strlen(REPORT_CLASS_SCOPE)) ||
                !strncmp(sc, REPORT_ROUTE_SCOPE, strlen(REPORT_ROUTE_SCOPE)) || (last && !strcmp(sc, last)))
                continue;
            last = sc;
            for (size_t k = 0; k < sizeof QPOOL / sizeof QPOOL[0]; k++) {
                double v = report_get(r, sc, QPOOL[k].metric, "value");
                snprintf(name, sizeof name, "%.60s: %s", sc, QPOOL[k].shown);
                qset(rows, &nr, max, i, name, QPOOL[k].unit, QPOOL[k].better, QPOOL[k].pct ? 100 * v : v);
            }
            /* A complexity router's misroutes in all: the wrong model's share of its decisions. */
            double sg[4] = { report_get(r, sc, "small_got_simple", "value"), report_get(r, sc, "small_got_complex", "value"),
                             report_get(r, sc, "large_got_simple", "value"), report_get(r, sc, "large_got_complex", "value") };
            double all = sg[0] + sg[1] + sg[2] + sg[3];
            if (all > 0) {
                snprintf(name, sizeof name, "%.60s: misroute share", sc);
                qset(rows, &nr, max, i, name, "%", LO, 100 * (sg[1] + sg[2]) / all);
            }
            double hits = report_get(r, sc, "hits", "value"), fh = report_get(r, sc, "false_hits", "value");
            if (hits + fh > 0) {
                snprintf(name, sizeof name, "%.60s: false-hit share", sc);
                qset(rows, &nr, max, i, name, "%", LO, 100 * fh / (hits + fh));
            }
        }
    }
    /* The system's refused and abandoned requests: where some design has any. */
    static const struct { const char *metric, *of, *shown; } QSYS[] = {
        { "rejected", "requests", "rejected share" },
        { "timed_out", "requests", "abandoned share (timed out)" },
        { "abandoned", "requests", "abandoned share (client's patience)" },
        { "wasted", "attempts", "wasted attempts (client left)" },
    };
    for (size_t k = 0; k < sizeof QSYS / sizeof QSYS[0]; k++) {
        double v[DESIGN_MAX];
        int any = 0;
        for (int i = 0; i < n; i++) {
            double of = report_get(&d[i].rep, "", QSYS[k].of, "value");
            v[i] = of > 0 ? 100 * report_get(&d[i].rep, "", QSYS[k].metric, "value") / of : NAN;
            any |= v[i] > 0;
        }
        for (int i = 0; any && i < n; i++) qset(rows, &nr, max, i, QSYS[k].shown, "%", LO, v[i]);
    }
    return nr;
}

int design_goodput(const design *d, const char *dbpath, char *kind, size_t kn, int64_t *id, double *lo, double *hi)
{
    *lo = *hi = NAN;
    *id = 0;
    kind[0] = '\0';
    if (!d->run_id) return 0;
    sqlite3 *db;
    char err[600];
    if (store_open_readonly(dbpath, &db, err, sizeof err) != 0) return 0;
    sqlite3_stmt *st = NULL;
    if (store_has_table(db, "sweep_points") &&
        sqlite3_prepare_v2(db, "SELECT s.id, s.kind, s.json FROM sweep_points p JOIN sweeps s ON s.id = p.sweep_id"
                               " WHERE p.run_id = ? AND s.kind IN ('plan', 'sweep') ORDER BY s.id DESC LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, d->run_id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            *id = sqlite3_column_int64(st, 0);
            snprintf(kind, kn, "%s", (const char *) sqlite3_column_text(st, 1));
            const char *js = (const char *) sqlite3_column_text(st, 2);
            /* a plan: its winner's bracket, as plan --json prints it */
            json_t *j = js && !strcmp(kind, "plan") ? json_loads(js, 0, NULL) : NULL;
            json_t *g = json_object_get(j, "goodput");
            if (json_is_number(json_object_get(g, "rate_rps_min"))) *lo = json_number_value(json_object_get(g, "rate_rps_min"));
            if (json_is_number(json_object_get(g, "rate_rps_max"))) *hi = json_number_value(json_object_get(g, "rate_rps_max"));
            json_decref(j);
        }
    }
    sqlite3_finalize(st);
    st = NULL;
    /* a sweep that varied the rate: the highest swept rate that met, the lowest above it that missed */
    if (!strcmp(kind, "sweep") &&
        sqlite3_prepare_v2(db, "SELECT (SELECT max(rate) FROM sweep_points WHERE sweep_id = ?1 AND slo_met = 1),"
                               " (SELECT count(DISTINCT rate) FROM sweep_points WHERE sweep_id = ?1)", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, *id);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 1) > 1 && sqlite3_column_type(st, 0) != SQLITE_NULL)
            *lo = sqlite3_column_double(st, 0);
        sqlite3_finalize(st);
        st = NULL;
        if (!isnan(*lo) && sqlite3_prepare_v2(db, "SELECT min(rate) FROM sweep_points WHERE sweep_id = ? AND slo_met = 0 AND rate > ?",
                                              -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, *id);
            sqlite3_bind_double(st, 2, *lo);
            if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) *hi = sqlite3_column_double(st, 0);
        }
        sqlite3_finalize(st);
    }
    store_close(db);
    return kind[0] && !isnan(*lo) ? 1 : 0;
}

/* sweep.c -- `latsim sweep FILE --vary KEY=FROM:TO:STEP|a,b,c`: runs one
 * simulation task per value (in parallel worker processes), prints a table,
 * and, when the scenario has an [slo] and the sweep brackets the point where it
 * stops being met, narrows that point down by k-section (three new points per
 * round, run in parallel) to find the highest value -- and its arrival rate, the
 * goodput -- that still meets the SLO, or, when the SLO is missed at the low end
 * and met at the high end (servers, replicas: more is better), the lowest value
 * that meets it.  Stored as one sweep whose points are runs.
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
#include "latsim/scenario.h"
#include "latsim/slo.h"
#include "latsim/store.h"

#define MAX_POINTS 10000
#define MAX_SETS 48

enum { O_VARY = 1, O_SEED, O_JOBS, O_NO_STORE };

static const cli_opt OPTS[] = {
    { "vary", O_VARY, "SECTION.KEY=FROM:TO:STEP|a,b,c", "the key varied and its values: a range "
      "(workload.rate=1:40:2) or a list (\"pool chat.scheduler=static,continuous\")", CLI_REQUIRED },
    CLI_OPT_SET,
    { "seed", O_SEED, "N", "seed of every point (default: the scenario's)", 0 },
    { "jobs", O_JOBS, "N", "worker processes (default: all cores)", 0 },
    CLI_OPT_JSON,
    CLI_OPT_DB,
    CLI_OPT_COST_DB,
    { "no-store", O_NO_STORE, NULL, "do not write the sweep and its runs to the database", 0 },
    { NULL },
};

static const cli_cmd CMD = {
    "sweep", "FILE",
    "Runs FILE once per value of the varied key, in parallel (--jobs), and prints one\n"
    "line per point.  With an [slo] section and numeric values, the boundary is\n"
    "narrowed down: the highest value still meeting every term when the lowest meets\n"
    "it (a rate), the lowest value meeting it when only the high end does (servers,\n"
    "replicas); its arrival rate is reported as goodput_rps.  A grid that meets,\n"
    "misses and meets again is reported as not monotone.\n"
    "Every point is stored as a run, the whole as one sweep (latsim plot SWEEP).\n",
    "", OPTS, MAX_SETS, 0,
};

typedef struct point {
    char value[64];           /* the varied key's value */
    double x;                 /* numeric value (NAN for a word) */
    char set[256];            /* "KEY=value" */
    task t;
    task_out o;
    slo_result slo;
    int met;                  /* SLO met and not saturated */
    int bisect;               /* 1: added by the narrowing */
} point;

typedef struct sweep {
    const char *file;         /* the scenario file */
    const char *vary;         /* --vary as given */
    const char *key;          /* its SECTION.KEY (keybuf) */
    char keybuf[200];
    const char *sets[MAX_SETS + 1]; /* the --set values, and a slot for a point's own */
    int nsets;                /* --set values */
    uint64_t seed;            /* --seed (0: the scenario's) */
    int jobs;                 /* --jobs (0 until set: all cores) */
    int json, store;          /* --json; 0: --no-store */
    const char *dbpath;       /* the database file */
    point *p;                 /* the points, grid and narrowing */
    int n, cap;               /* how many; allocated */
    int numeric, integer;     /* every value a number / a whole number */
    slo_spec slo;             /* the first point's [slo] (taken from its scenario) */
    int grid;                 /* points of the grid (those after it narrow down) */
    int best;                 /* the point reported (-1 none) */
    int more;                 /* 1: more is better (the lowest meeting value is reported) */
    int monotone;             /* 0: the grid meets, misses and meets again */
    int nmet;                 /* grid points meeting the SLO */
    double best_x, best_rate; /* the best point's value and rate, req/s (NAN none) */
    char runs[600];           /* the grid's verdicts (describe_runs) */
    double wall;              /* seconds the simulations took */
    char *json_text;          /* the sweep as JSON, less the closing brace and the id */
    int64_t sweep_id;         /* the stored sweep (0 not stored) */
} sweep;

static point *add_point(sweep *s, const char *value)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        point *q = realloc(s->p, (size_t) cap * sizeof *q);
        if (!q) return NULL;
        s->p = q;
        s->cap = cap;
    }
    point *p = &s->p[s->n++];
    memset(p, 0, sizeof *p);
    snprintf(p->value, sizeof p->value, "%s", value);
    char *end;
    p->x = strtod(value, &end);
    if (end == value || *end) p->x = NAN;
    snprintf(p->set, sizeof p->set, "%s=%s", s->key, value);
    p->t.path = s->file;
    for (int i = 0; i < s->nsets; i++) p->t.sets[i] = s->sets[i];
    p->t.sets[s->nsets] = NULL;          /* the point's own set is attached in run_points */
    p->t.nsets = s->nsets + 1;
    p->t.seed = s->seed;
    return p;
}

/* Parses SPEC into values.  Returns 0, or -1 after printing the error. */
static int parse_values(sweep *s, const char *spec)
{
    char err[300];
    if (strchr(spec, ':')) {
        cu_range r;
        if (cu_parse_range(spec, 0, MAX_POINTS, &r, err, sizeof err) != 0)
            return cu_die(2, "sweep: --vary %s=%s: %s", s->key, spec, err), -1;
        for (int i = 0; i < r.n; i++) {
            char v[64];
            cu_range_value(&r, i, v, sizeof v);
            if (!add_point(s, v)) return cu_die(1, "out of memory"), -1;
        }
        return 0;
    }
    const char *p = spec;
    while (1) {
        size_t k = strcspn(p, ",");
        char v[64];
        if (cu_check_list_value(p, k, sizeof v, err, sizeof err) != 0)
            return cu_die(2, "sweep: --vary %s=%s: %s", s->key, spec, err), -1;
        snprintf(v, sizeof v, "%.*s", (int) k, p);
        if (s->n >= MAX_POINTS) return cu_die(2, "sweep: --vary %s=%s: more than %d values", s->key, spec, MAX_POINTS), -1;
        if (!add_point(s, v)) return cu_die(1, "out of memory"), -1;
        if (!p[k]) break;
        p += k + 1;
    }
    return 0;
}

/* Runs points FROM..n-1 and evaluates their SLO.  Returns 0, or the exit status. */
static int run_points(sweep *s, int from, int jobs, const char *dbpath, const slo_spec *spec)
{
    int m = s->n - from;
    task *ts = calloc((size_t) m, sizeof *ts);
    task_out *outs = calloc((size_t) m, sizeof *outs);
    if (!ts || !outs) { free(ts); free(outs); return cu_die(1, "out of memory"); }
    for (int i = 0; i < m; i++) {
        point *p = &s->p[from + i];
        p->t.sets[s->nsets] = p->set;
        ts[i] = p->t;
    }
    task_run_all(ts, m, jobs, dbpath, outs, NULL, NULL);
    int rc = 0;
    for (int i = 0; i < m; i++) {
        point *p = &s->p[from + i];
        p->o = outs[i];
        if (p->o.status != 0 && !rc) {
            cu_die(p->o.status, "%s", p->o.err);
            rc = p->o.status;
            continue;
        }
        if (p->o.status != 0) continue;
        if (slo_eval(spec, p->o.rep.rows, p->o.rep.n, &p->slo) != 0) { rc = cu_die(1, "out of memory"); continue; }
        p->met = p->slo.met && !(report_get(&p->o.rep, "", "saturated", "value") > 0);
    }
    free(ts);
    free(outs);
    return rc;
}

static int cmp_x(const void *a, const void *b)
{
    double x = ((const point *) a)->x, y = ((const point *) b)->x;
    return (x > y) - (x < y);
}

/* The grid's verdicts into BUF: for numbers its runs ("met at 1..3, NOT met
 * at 4, met at 5"; the narrowing points are not part of it), for words the two
 * lists ("met at a, c; NOT met at b"). */
static void describe_runs(const sweep *s, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!s->numeric) {
        for (int met = 1; met >= 0; met--) {
            int first = 1;
            for (int i = 0; i < s->n; i++) {
                if (s->p[i].met != met) continue;
                size_t l = strlen(buf);
                if (first) snprintf(buf + l, n - l, "%s%s at %s", l ? "; " : "", met ? "met" : "NOT met", s->p[i].value);
                else snprintf(buf + l, n - l, ", %s", s->p[i].value);
                first = 0;
            }
        }
        return;
    }
    for (int i = 0; i < s->n;) {
        int j = i;
        while (j + 1 < s->n && s->p[j + 1].met == s->p[i].met) j++;
        size_t l = strlen(buf);
        if (j == i) snprintf(buf + l, n - l, "%s%s at %s", l ? ", " : "", s->p[i].met ? "met" : "NOT met", s->p[i].value);
        else snprintf(buf + l, n - l, "%s%s at %s..%s", l ? ", " : "", s->p[i].met ? "met" : "NOT met", s->p[i].value, s->p[j].value);
        i = j + 1;
    }
}

static void fmt(char *b, size_t n, double v)
{
    if (isnan(v)) snprintf(b, n, "-");
    else snprintf(b, n, "%.4g", v);
}

static void print_table(const sweep *s, int llm, FILE *out)
{
    fprintf(out, "%-22s %9s %9s %9s %9s", ERRMSG_SHOWN(s->key), "rate_rps", "thru_rps", "e2e_p50", "e2e_p99");
    if (llm) fprintf(out, " %9s %9s", "ttft_p99", "tpot_p99");
    fprintf(out, " %8s %8s  %s\n", "goodput", "busy_max", "slo");
    for (int i = 0; i < s->n; i++) {
        const point *p = &s->p[i];
        const report *r = &p->o.rep;
        char c[8][32];
        fmt(c[0], 32, p->o.rate);
        fmt(c[1], 32, report_get(r, "", "throughput_rps", "value"));
        fmt(c[2], 32, report_get(r, "", "e2e", "p50"));
        fmt(c[3], 32, report_get(r, "", "e2e", "p99"));
        fmt(c[4], 32, report_get(r, "", "ttft", "p99"));
        fmt(c[5], 32, report_get(r, "", "tpot", "p99"));
        fmt(c[6], 32, report_get(r, "", "goodput", "value"));
        double um = NAN;
        for (size_t k = 0; k < r->n; k++)
            if (r->rows[k].scope[0] && !strcmp(r->rows[k].metric, REPORT_BUSY_SHARE) && (isnan(um) || r->rows[k].value > um))
                um = r->rows[k].value;
        fmt(c[7], 32, um);
        fprintf(out, "%-22s %9s %9s %9s %9s", ERRMSG_SHOWN(p->value), c[0], c[1], c[2], c[3]);
        if (llm) fprintf(out, " %9s %9s", c[4], c[5]);
        const char *verdict = report_get(r, "", "saturated", "value") > 0 ? "saturated"
                            : p->slo.n == 0 ? "-" : p->met ? "met" : "NOT met";
        fprintf(out, " %8s %8s  %s%s\n", c[6], c[7], verdict, p->bisect ? "  (narrowing)" : "");
    }
}

/* cli_opt_fn of sweep: CTX is the sweep. */
static int sweep_opt(void *ctx, int id, const char *v)
{
    sweep *s = ctx;
    long x;
    switch (id) {
    case O_VARY:
        if (s->vary) return cu_die(2, "sweep: one --vary per sweep");
        s->vary = v;
        return 0;
    case O_NO_STORE: s->store = 0; return 0;
    case O_JOBS:
        if ((x = cu_posint("sweep", "--jobs", v, 1024)) < 0) return 2;
        s->jobs = (int) x;
        return 0;
    default:                  /* --seed */
        if ((x = cu_posint("sweep", "--seed", v, 2147483647L)) < 0) return 2;
        s->seed = (uint64_t) x;
        return 0;
    }
}

/* Parses the command line into S: FILE, --vary's key (its values are parsed
 * by sweep_load).  Returns CLI_GO or the exit status. */
static int sweep_parse(int argc, char **argv, sweep *s)
{
    cli_args a;
    s->store = 1;
    int rc = cli_parse(&CMD, argc, argv, &a, sweep_opt, s);
    if (rc != CLI_GO) return rc;
    if (a.npos > 1) return cu_die(2, "sweep: more than one scenario file ('%s', '%s')", a.pos[0], a.pos[1]);
    if (a.npos == 0) return cu_die(2, "sweep: missing scenario FILE (see latsim sweep --help)");
    s->file = a.pos[0];
    s->json = a.json;
    s->dbpath = cu_db_path(a.db);
    memcpy(s->sets, a.sets, (size_t) a.nsets * sizeof *s->sets);
    s->nsets = a.nsets;
    const char *eq = strchr(s->vary, '=');
    if (!eq || eq == s->vary) return cu_die(2, "sweep: --vary '%s': expected SECTION.KEY=FROM:TO:STEP or SECTION.KEY=a,b,c", s->vary);
    snprintf(s->keybuf, sizeof s->keybuf, "%.*s", (int) (eq - s->vary), s->vary);
    s->key = s->keybuf;
    return CLI_GO;
}

/* The values of --vary, each point checked to load (a bad key or value is bad
 * input before anything runs), whether they are (whole) numbers, and the
 * database.  Returns 0 or the exit status (printed). */
static int sweep_load(sweep *s)
{
    char err[2048];
    if (parse_values(s, strchr(s->vary, '=') + 1) != 0) return 2;
    const char *dot = strrchr(s->key, '.');
    char sec[200];
    snprintf(sec, sizeof sec, "%.*s", dot ? (int) (dot - s->key) : 0, s->key);
    int found = scenario_file_has_section(s->file, sec, err, sizeof err);
    if (found < 0) return cu_die(2, "%s", err);
    if (!dot || !found) return cu_die(2, "sweep: --vary %s: %s has no section [%s]", s->key, s->file, sec);
    for (int i = 0; i < s->n; i++) {
        scenario *sc = scenario_new();
        if (!sc) return cu_die(1, "out of memory");
        s->sets[s->nsets] = s->p[i].set;
        int bad = scenario_load(sc, s->file, s->sets, s->nsets + 1, err, sizeof err);
        if (!bad && i == 0) scenario_take_slo(sc, &s->slo);
        scenario_delete(sc);
        if (bad) {
            cu_relabel(err, sizeof err, "--vary", sec, dot + 1);
            return cu_die(2, "%s", err);
        }
    }
    s->numeric = s->integer = 1;
    for (int i = 0; i < s->n; i++) {
        s->numeric &= !isnan(s->p[i].x);
        s->integer &= !isnan(s->p[i].x) && s->p[i].x == floor(s->p[i].x);
    }
    if (s->integer) {
        /* Whole-number values: narrow down in whole numbers only when the key
         * refuses fractions (servers, replicas), not for a rate given as 1:9:1. */
        char frac[256];
        scenario *sc = scenario_new();
        if (!sc) return cu_die(1, "out of memory");
        snprintf(frac, sizeof frac, "%s=%.10g", s->key, s->p[0].x + 0.5);
        s->sets[s->nsets] = frac;
        if (scenario_load(sc, s->file, s->sets, s->nsets + 1, err, sizeof err) == 0) s->integer = 0;
        scenario_delete(sc);
    }
    if (cu_check_db_path(s->dbpath, err, sizeof err) != 0 || (s->store && cu_check_db(s->dbpath, err, sizeof err) != 0))
        return cu_die(2, "%s", err);
    return 0;
}

/* Which way the SLO goes, from the grid (sorted): met at the low end (a rate,
 * a batch delay: less is better) -> the highest value meeting it; missed at the
 * low end and met at the high end (servers, replicas: more is better) -> the
 * lowest value meeting it.  The boundary is then narrowed down between the
 * last meeting and first missing value (or the last missing and first meeting
 * one).  More than one change along the grid is not monotone: said.  Sets
 * S->best and the verdicts.  Returns 0 or the exit status (printed). */
static int sweep_narrow(sweep *s)
{
    int rc, changes = 0;
    s->best = -1;
    s->monotone = 1;
    s->best_x = s->best_rate = NAN;
    if (s->slo.n > 0) {
        for (int i = 0; i < s->n; i++) s->nmet += s->p[i].met;
        for (int i = 0; i + 1 < s->n; i++) changes += s->p[i].met != s->p[i + 1].met;
        s->monotone = !s->numeric || changes <= 1;
        describe_runs(s, s->runs, sizeof s->runs);
    }
    if (s->slo.n > 0 && s->numeric && s->nmet > 0) {
        int i = -1, bad = -1;       /* the meeting and the missing end of the bracket */
        if (s->p[0].met) {
            while (i + 1 < s->n && s->p[i + 1].met) i++;
            if (i + 1 < s->n) bad = i + 1;
        } else if (s->p[s->n - 1].met) {
            s->more = 1;
            i = s->n - 1;
            while (i - 1 >= 0 && s->p[i - 1].met) i--;
            bad = i - 1;
        }
        s->best = i;                /* -1: met only inside the range (neither end) */
        int more = s->more;
        if (i >= 0 && bad >= 0) {
            double lo = s->p[more ? bad : i].x, hi = s->p[more ? i : bad].x;
            int k = 3;      /* points per round, fixed: the result must not depend on --jobs */
            for (int round = 0; round < 8; round++) {
                if (s->integer ? hi - lo <= 1 : (hi - lo) <= 0.005 * fabs(hi)) break;
                int from = s->n;
                for (int j = 1; j <= k; j++) {
                    double x = lo + (hi - lo) * j / (k + 1);
                    if (s->integer) x = floor(x + 0.5);
                    if (x <= lo || x >= hi) continue;
                    int dup = 0;
                    for (int q = from; q < s->n; q++) dup |= s->p[q].x == x;
                    if (dup) continue;
                    char v[64];
                    snprintf(v, sizeof v, "%.10g", x);
                    point *p = add_point(s, v);
                    if (!p) return cu_die(1, "out of memory");
                    p->bisect = 1;
                }
                if (s->n == from) break;
                if ((rc = run_points(s, from, s->jobs, s->dbpath, &s->slo)) != 0) return rc;
                /* Conservative near the boundary, where noise can make a point
                 * meet beyond one that missed: the miss nearest the meeting end
                 * bounds the answer. */
                double nlo = lo, nhi = hi;
                if (!more) {
                    for (int q = from; q < s->n; q++)
                        if (!s->p[q].met && s->p[q].x > lo && s->p[q].x < nhi) nhi = s->p[q].x;
                    for (int q = from; q < s->n; q++)
                        if (s->p[q].met && s->p[q].x > nlo && s->p[q].x < nhi) nlo = s->p[q].x;
                } else {
                    for (int q = from; q < s->n; q++)
                        if (!s->p[q].met && s->p[q].x < hi && s->p[q].x > nlo) nlo = s->p[q].x;
                    for (int q = from; q < s->n; q++)
                        if (s->p[q].met && s->p[q].x < nhi && s->p[q].x > nlo) nhi = s->p[q].x;
                }
                lo = nlo;
                hi = nhi;
            }
            qsort(s->p, (size_t) s->n, sizeof *s->p, cmp_x);
            for (int q = 0; q < s->n; q++)
                if (s->p[q].x == (more ? hi : lo)) s->best = q;
        }
    }
    if (s->best >= 0) {
        const point *b = &s->p[s->best];
        s->best_x = b->x;
        s->best_rate = b->o.rate;
        /* Closed loop (users): no offered rate; the goodput is what it carried. */
        if (!isfinite(s->best_rate)) s->best_rate = report_get(&b->o.rep, "", "throughput_rps", "value");
    }
    return 0;
}

/* The sweep as JSON into S->json_text, less its closing brace (--json adds the
 * sweep's id).  Returns 0 or 1 (printed). */
static int sweep_json(sweep *s)
{
    size_t jlen = 0;
    FILE *mem = open_memstream(&s->json_text, &jlen);
    if (!mem) return cu_die(1, "out of memory");
    fputs("{\"scenario\": ", mem);
    report_json_str(mem, s->file);
    fputs(", \"key\": ", mem);
    report_json_str(mem, s->key);
    fputs(", \"points\": [", mem);
    for (int i = 0; i < s->n; i++) {
        const point *p = &s->p[i];
        fprintf(mem, "%s{\"value\": ", i ? ", " : "");
        if (!isnan(p->x)) fprintf(mem, "%.10g", p->x); else report_json_str(mem, p->value);
        fprintf(mem, ", \"rate_rps\": %.6g, \"narrowing\": %s, \"saturated\": %s", p->o.rate, p->bisect ? "true" : "false",
                report_get(&p->o.rep, "", "saturated", "value") > 0 ? "true" : "false");
        const char *m[] = { "throughput_rps", "goodput", "goodput_rps" };
        for (int k = 0; k < 3; k++) {
            double v = report_get(&p->o.rep, "", m[k], "value");
            if (!isnan(v)) fprintf(mem, ", \"%s\": %.6g", m[k], v);
        }
        const char *lm[] = { "e2e", "ttft", "tpot" };
        for (int k = 0; k < 3; k++) {
            double a = report_get(&p->o.rep, "", lm[k], "p50"), b = report_get(&p->o.rep, "", lm[k], "p99");
            if (!isnan(a)) fprintf(mem, ", \"%s_p50_ms\": %.6g", lm[k], a);
            if (!isnan(b)) fprintf(mem, ", \"%s_p99_ms\": %.6g", lm[k], b);
        }
        if (p->slo.n) { fputs(", \"slo\": ", mem); slo_json(&p->slo, mem); }
        fputs("}", mem);
    }
    fputs("], \"goodput_rps\": ", mem);
    if (isnan(s->best_rate)) fputs("null", mem); else fprintf(mem, "%.6g", s->best_rate);
    fputs(", \"best_value\": ", mem);
    if (isnan(s->best_x)) fputs("null", mem); else fprintf(mem, "%.10g", s->best_x);
    fputs(", \"direction\": ", mem);
    fputs(s->best < 0 ? "null" : s->more ? "\"lowest_meeting\"" : "\"highest_meeting\"", mem);
    fprintf(mem, ", \"monotone\": %s", s->monotone ? "true" : "false");
    fprintf(mem, ", \"simulations\": %d", s->n);
    /* What the answer's step times stand on (the point reported, else the first). */
    if (s->n > 0) {
        fputs(", \"cost_models\": ", mem);
        prov_json(&s->p[s->best >= 0 ? s->best : 0].o.rep, mem);
    }
    fclose(mem);
    return 0;
}

/* Stores the sweep, then each point as a run, in one transaction: together or
 * not at all (a full disk part-way leaves the database as it was, not a sweep
 * without points).  Returns 0 or the exit status (printed). */
static int sweep_store(sweep *s)
{
    if (!s->store) return 0;
    char started[32], args[600], err[2048];
    sqlite3 *db = NULL;
    char *stored = NULL;
    int rc = 1;
    cu_now(started, sizeof started);
    snprintf(args, sizeof args, "--vary %s", s->vary);
    if (cu_open_rw(s->dbpath, &db, err, sizeof err) != 0) return cu_die(2, "%s", err);
    int bad = store_begin(db, err, sizeof err) != 0 ||
              planstore_sweep_begin(db, "sweep", s->file, args, started, &s->sweep_id, err, sizeof err) != 0;
    for (int i = 0; i < s->n && !bad; i++) {
        point *p = &s->p[i];
        p->t.sets[s->nsets] = p->set;        /* the point moved when sorted */
        planstore_extra x = { .sweep_id = s->sweep_id, .idx = i, .role = p->bisect ? "bisect" : "point",
                              .settings = p->set, .seed = p->o.seed, .rate = p->o.rate, .usd_per_hour = p->o.usd_per_hour };
        int64_t id;
        bad = cu_save_task(db, &p->t, &p->o, &p->slo, &x, &id, err, sizeof err) != 0;
    }
    /* Stored as --json prints it (one whole object), less the id. */
    stored = bad ? NULL : malloc(strlen(s->json_text) + 2);
    if (!bad && !stored) bad = (errmsg_set(err, sizeof err, "out of memory"), 1);
    if (stored) { strcpy(stored, s->json_text); strcat(stored, "}"); }
    bad = bad || planstore_sweep_end(db, s->sweep_id, s->wall, s->n, s->best_rate, stored, err, sizeof err) != 0 ||
          store_commit(db, err, sizeof err) != 0;
    if (bad) { store_rollback(db); cu_die(1, "sweep not stored: %s", err); goto out; }
    rc = 0;
out:
    free(stored);
    store_close(db);
    return rc;
}

/* Prints the sweep: its JSON, or the table and what the SLO says. */
static void sweep_print(const sweep *s)
{
    for (int i = 0; i < s->n; i++) prov_warn(&s->p[i].o.rep);   /* at most once */
    if (s->json) {
        fputs(s->json_text, stdout);
        if (s->store) printf(", \"sweep\": %lld", (long long) s->sweep_id);
        fputs("}\n", stdout);
        return;
    }
    int llm = 0;
    for (int i = 0; i < s->n; i++) llm |= !isnan(report_get(&s->p[i].o.rep, "", "ttft", "p99")) ||
                                       report_get(&s->p[i].o.rep, "", "cost_per_hour", "value") >= 0;
    const char *key = ERRMSG_SHOWN(s->key);
    printf("sweep %s  --vary %s  (%d simulations, %.2f s, %d workers)\n\n", ERRMSG_SHOWN(s->file), ERRMSG_SHOWN(s->vary), s->n,
           s->wall, s->jobs);
    print_table(s, llm, stdout);
    if (s->n > 0) {
        putchar('\n');
        prov_table(&s->p[s->best >= 0 ? s->best : 0].o.rep, "", stdout);
    }
    if (s->slo.n == 0) printf("\nno [slo] section: nothing to meet\n");
    else if (!s->numeric) printf("\nthe SLO is %s (values are not numbers: no order, not narrowed down)\n", ERRMSG_SHOWN(s->runs));
    else if (s->nmet == 0) printf("\nno point meets the SLO (neither the lowest value, %s, nor the highest, %s)\n", ERRMSG_SHOWN(s->p[0].value),
                                  ERRMSG_SHOWN(s->p[s->n - 1].value));
    else if (s->best < 0) printf("\nthe SLO is not monotone in %s: it is %s (met inside the range only: no boundary to narrow down)\n", key,
                                 ERRMSG_SHOWN(s->runs));
    else {
        if (!s->monotone)
            printf("\nthe SLO is not monotone in %s: it is %s; the %s run meeting it is reported (every value %s it meets it)\n",
                   key, ERRMSG_SHOWN(s->runs), s->more ? "last" : "first", s->more ? "above" : "below");
        if (s->nmet == s->grid)
            printf("\nevery point meets the SLO: the highest meeting it is beyond %s (rate %.4g req/s)\n", ERRMSG_SHOWN(s->p[s->best].value),
                   s->best_rate);
        else if (!s->more)
            printf("\nhighest %s meeting the SLO: %.6g  ->  goodput %.4g req/s (narrowed down by %d extra simulations)\n",
                   key, s->best_x, s->best_rate, s->n - s->grid);
        else {
            printf("\nlowest %s meeting the SLO: %.6g (more is better here: %s misses it)  ->  goodput %.4g req/s", key, s->best_x,
                   ERRMSG_SHOWN(s->p[s->best - 1].value), s->best_rate);
            if (s->n > s->grid) printf(" (narrowed down by %d extra simulations)", s->n - s->grid);
            printf("\n");
        }
    }
    if (s->store) printf("sweep %lld stored in %s\n", (long long) s->sweep_id, ERRMSG_SHOWN(s->dbpath));
}

int sweep_main(int argc, char **argv)
{
    sweep s;
    memset(&s, 0, sizeof s);
    int rc = sweep_parse(argc, argv, &s);
    if (rc != CLI_GO) return rc;
    if ((rc = sweep_load(&s)) != 0) goto out;
    if (s.jobs <= 0) s.jobs = taskmpi_size() > 1 ? 1 : task_cpus();   /* under mpirun the other ranks simulate, as in explore */
    double t0 = cu_clock();
    if ((rc = run_points(&s, 0, s.jobs, s.dbpath, &s.slo)) != 0) goto out;
    s.grid = s.n;
    if (s.numeric) qsort(s.p, (size_t) s.n, sizeof *s.p, cmp_x);
    if ((rc = sweep_narrow(&s)) != 0) goto out;
    s.wall = cu_clock() - t0;
    if ((rc = sweep_json(&s)) != 0) goto out;
    if ((rc = sweep_store(&s)) != 0) goto out;
    sweep_print(&s);
    rc = 0;
out:
    for (int i = 0; i < s.n; i++) { task_out_free(&s.p[i].o); slo_result_free(&s.p[i].slo); }
    free(s.p);
    slo_free(&s.slo);
    free(s.json_text);
    return rc;
}

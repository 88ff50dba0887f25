/* compare.c -- `latsim compare A B [C ...]`: designs (scenario files, each
 * run as N replications in parallel worker processes, or stored runs) side by
 * side: a headline table with one column per design (TTFT, TPOT, ITL, E2E
 * percentiles, throughput, goodput, GPUs, $/h, $ per 1k requests, energy where
 * modelled), each design's difference to the first and whether it is beyond
 * the confidence intervals (design.h's rule) and better or worse by the
 * metric's direction; each design's SLO verdict per term with its margin (and
 * at its prediction band's pessimistic end, --band; its goodput when a plan or
 * a sweep simulated it); the gateway and cache quality rows; then the pools
 * and the request classes matched by name, and a line for each pool or class
 * only some designs have.  Numbers are written for people (design_fmt).  --all adds every row the designs share; --json the same as
 * one object (its "metrics" member: every row A and B share).
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
#include "design.h"
#include "latsim/errmsg.h"
#include "latsim/report.h"
#include "latsim/store.h"
#include "reptables.h"

#define MAX_SETS 32

enum { O_REPS = 1, O_SEED, O_JOBS, O_ALL, O_BAND };

static const cli_opt OPTS[] = {
    { "replications", O_REPS, "N", "runs of each scenario file (default 5; seeds seed..seed+N-1)", 0 },
    { "seed", O_SEED, "N", "the first seed (default 1)", 0 },
    { "set", CLI_SET, "S.K=V", "override key K of section S in every scenario (repeatable)", CLI_REPEAT },
    { "jobs", O_JOBS, "N", "worker processes (default: all cores)", 0 },
    { "all", O_ALL, NULL, "also list every row the designs share (each against A)", 0 },
    { "band", O_BAND, NULL, "also run each scenario file with an LLM pool at the pessimistic end of its 90 % prediction "
      "band and judge its SLO there (docs/bands.md)", 0 },
    CLI_OPT_JSON,
    CLI_OPT_DB,
    CLI_OPT_COST_DB,
    { NULL },
};

static const cli_cmd CMD = {
    "compare", "A B [C...]",
    "A, B, ... (up to 8) are scenario files (each is run N times, default 5, seeds\n"
    "seed..seed+N-1; --set applies to all) or stored run IDs.  Prints a headline table,\n"
    "one column per design (TTFT, TPOT, ITL, E2E and queue percentiles, throughput,\n"
    "goodput, GPUs, $/h, $ per 1k requests, energy where modelled), each design's\n"
    "difference from A in % and '*' when it exceeds the 95% confidence intervals of\n"
    "the replications (of one side when only one is replicated; '?' when neither is);\n"
    "then the pools, classes and routes (ROUTER->TARGET) the designs share, matched\n"
    "by name, and a line for each that only some have; each design's SLO verdict per\n"
    "term with its margin (--band: also at the pessimistic end of its prediction\n"
    "band), and the gateway and cache quality (hit rates, false hits, misroutes,\n"
    "rejected and abandoned shares).  Differences are told better or worse by the\n"
    "metric's direction (lower latency, cost and energy; higher throughput).\n",
    "", OPTS, MAX_SETS, 0,
};

/* What compare was asked. */
typedef struct compare_opts {
    int reps;                 /* --replications */
    int jobs;                 /* --jobs (0: all cores) */
    int all;                  /* --all */
    int band;                 /* --band */
    uint64_t seed;            /* --seed (0: 1) */
} compare_opts;

/* cli_opt_fn of compare: CTX is the compare_opts. */
static int compare_opt(void *ctx, int id, const char *v)
{
    compare_opts *o = ctx;
    if (id == O_ALL) { o->all = 1; return 0; }
    if (id == O_BAND) { o->band = 1; return 0; }
    const char *name = id == O_REPS ? "--replications" : id == O_JOBS ? "--jobs" : "--seed";
    long x = cu_posint("compare", name, v, id == O_SEED ? 2147483647L : 10000);
    if (x < 0) return 2;
    if (id == O_REPS) o->reps = (int) x;
    else if (id == O_JOBS) o->jobs = (int) x;
    else o->seed = (uint64_t) x;
    return 0;
}

/* "value" or "value±ci", written for people (design_fmt). */
static void cell(char *b, size_t n, double v, double ci)
{
    char vs[48], cs[48];
    if (isnan(v)) { snprintf(b, n, "-"); return; }
    design_fmt(vs, sizeof vs, v);
    if (isnan(ci)) { snprintf(b, n, "%s", vs); return; }
    snprintf(b, n, "%s±%s", vs, design_fmt(cs, sizeof cs, ci));
}

/* Columns S takes on a terminal ("±" is two bytes, one column). */
static int width(const char *s)
{
    int w = 0;
    for (; *s; s++) w += ((unsigned char) *s & 0xC0) != 0x80;
    return w;
}

static void rpad(const char *s, int w)
{
    for (int n = width(s); n < w; n++) putchar(' ');
    fputs(s, stdout);
}

static void jnum(double v)
{
    if (isnan(v) || isinf(v)) printf("null");
    else printf("%.6g", v);
}

static int wanted(const store_stat *r)
{
    if (r->text) return 0;
    if (!r->scope[0]) {
        static const char *skip[] = { "wall_time_s", "events", "sim_time_s", "window_s", "saturated", "trace_exhausted",
                                      "finite", "backlog_grew", "peak_queue_at_s" };
        for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++) if (!strcmp(r->metric, skip[i])) return 0;
        return 1;
    }
    return !strcmp(r->metric, REPORT_BUSY_SHARE) || (!strcmp(r->metric, "queue") && !strcmp(r->stat, "p99"));
}

/* The row of R matching X (scope, metric, stat), NULL when none. */
static const store_stat *find(const report *r, const store_stat *x)
{
    for (size_t k = 0; k < r->n; k++)
        if (!strcmp(r->rows[k].scope, x->scope) && !strcmp(r->rows[k].metric, x->metric) && !strcmp(r->rows[k].stat, x->stat) &&
            !r->rows[k].text)
            return &r->rows[k];
    return NULL;
}

/* What the review counts: cells beyond their intervals, cells not judged. */
typedef struct tally {
    int beyond, unjudged;
} tally;

/* One table row over the N designs D: VALUE[i], CI[i] (NAN: none), HAS[i]. */
typedef struct trow {
    const char *name, *unit;
    int better;               /* DESIGN_LOWER, DESIGN_HIGHER or DESIGN_NEUTRAL */
    double v[DESIGN_MAX], ci[DESIGN_MAX];
    int has[DESIGN_MAX];
} trow;

/* The width of a text table's first column (its row names with their unit):
 * 34, or wider for the table being printed when a name needs it. */
static int namew = 34;

/* Prints (or, JSON, writes as an object) row R of N designs; counts into T. */
static void print_row(const trow *r, int n, int json, int first, tally *t)
{
    if (json) {
        printf("%s{\"metric\": ", first ? "" : ", ");
        report_json_str(stdout, r->name);
        printf(", \"unit\": ");
        report_json_str(stdout, r->unit);
        printf(", \"values\": [");
        for (int i = 0; i < n; i++) { printf(i ? ", " : ""); if (r->has[i]) jnum(r->v[i]); else printf("null"); }
        printf("], \"ci95\": [");
        for (int i = 0; i < n; i++) { printf(i ? ", " : ""); jnum(r->has[i] ? r->ci[i] : NAN); }
        printf("], \"diff_pct\": [null");
        for (int i = 1; i < n; i++) { printf(", "); jnum(r->has[0] && r->has[i] ? design_diff_pct(r->v[0], r->v[i]) : NAN); }
        printf("], \"better\": \"%s\", \"judgement\": [null", r->better < 0 ? "lower" : r->better > 0 ? "higher" : "neutral");
        for (int i = 1; i < n; i++) {
            int b = r->has[0] && r->has[i] ? design_beyond(r->v[0], r->ci[0], r->v[i], r->ci[i]) : -2;
            int jd = r->has[0] && r->has[i] ? design_judge(r->better, r->v[0], r->v[i], b) : 0;
            printf(", %s", r->better == DESIGN_NEUTRAL || !r->has[0] || !r->has[i] ? "null" : jd > 0 ? "\"better\"" : jd < 0 ? "\"worse\"" : "\"same\"");
        }
        printf("], \"beyond_ci\": [null");
    } else {
        char lab[96];
        snprintf(lab, sizeof lab, "%s%s%s%s", r->name, r->unit[0] ? " (" : "", r->unit, r->unit[0] ? ")" : "");
        printf("  %-*s", namew, ERRMSG_SHOWN(lab));
        char c[72];
        cell(c, sizeof c, r->has[0] ? r->v[0] : NAN, r->has[0] ? r->ci[0] : NAN);
        rpad(c, 14);
    }
    for (int i = 1; i < n; i++) {
        int b = r->has[0] && r->has[i] ? design_beyond(r->v[0], r->ci[0], r->v[i], r->ci[i]) : -2;
        if (b == 1) t->beyond++;
        if (b == -1) t->unjudged++;
        if (json) {
            printf(", %s", b == 1 ? "true" : b == 0 ? "false" : "null");
            continue;
        }
        char c[72], d[24];
        cell(c, sizeof c, r->has[i] ? r->v[i] : NAN, r->has[i] ? r->ci[i] : NAN);
        double pct = r->has[0] && r->has[i] ? design_diff_pct(r->v[0], r->v[i]) : NAN;
        if (isnan(pct)) snprintf(d, sizeof d, r->has[0] && r->has[i] && !isnan(r->v[0]) && !isnan(r->v[i]) ? "n/a" : "-");
        else snprintf(d, sizeof d, "%+.1f%%", pct);
        int jd = design_judge(r->better, r->has[0] ? r->v[0] : NAN, r->has[i] ? r->v[i] : NAN, b);
        printf(" ");
        rpad(c, 14);
        rpad(d, 9);
        printf(" %s %-6s", b == 1 ? "*" : b == -1 ? "?" : " ", jd > 0 ? "better" : jd < 0 ? "worse" : "");
    }
    if (json) printf("]}");
    else putchar('\n');
}

static void header(const design *d, int n, const char *title)
{
    printf("\n  %-*s", namew, ERRMSG_SHOWN(title));
    rpad(d[0].label, 14);
    for (int i = 1; i < n; i++) {
        printf(" ");
        rpad(d[i].label, 14);
        rpad("vs A", 9);
        printf("         ");
    }
    putchar('\n');
}

/* The headline rows. */
static void headline(const design *d, int n, int json, tally *t)
{
    int nm;
    const design_metric *m = design_headline(&nm);
    if (json) printf(", \"headline\": [");
    else header(d, n, "headline");
    int first = 1;
    for (int k = 0; k < nm; k++) {
        trow r = { m[k].name, m[k].unit, m[k].better, {0}, {0}, {0} };
        int any = 0;
        for (int i = 0; i < n; i++) any |= r.has[i] = design_value(&d[i].rep, &m[k], &r.v[i], &r.ci[i]);
        /* Energy is shown where it is modelled; every other row always (a
         * design without it shows "-": a generic pool has no TTFT). */
        if (!any && !strcmp(m[k].metric, "energy_kwh")) continue;
        print_row(&r, n, json, first, t);
        first = 0;
    }
    if (json) printf("]");
}


/* The section group of a non-system scope: 0 a pool, 1 a class, 2 a route. */
static int group_of(const char *scope) { return rt_is_class(scope) ? 1 : rt_is_route(scope) ? 2 : 0; }

/* 1 when report R has rows of scope S. */
static int has_scope(const report *r, const char *s)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rows[i].scope, s)) return 1;
    return 0;
}

/* The metrics of a pool or class section, in order: rows any design has. */
static const struct { const char *metric, *stat, *unit; int better; } SECTION[] = {
    { REPORT_BUSY_SHARE, "value", "", DESIGN_NEUTRAL }, { "gpus", "value", "", DESIGN_LOWER },
    { "replicas", "value", "", DESIGN_LOWER }, { "requests", "value", "", DESIGN_NEUTRAL },
    { "served", "value", "", DESIGN_NEUTRAL }, { "hit_rate", "value", "", DESIGN_HIGHER },
    { "goodput_rps", "value", "req/s", DESIGN_HIGHER }, { "cost_per_hour", "value", "$/h", DESIGN_LOWER },
    { "cost_per_1k_requests", "value", "$", DESIGN_LOWER },
    { "ttft", "p50", "ms", DESIGN_LOWER }, { "ttft", "p99", "ms", DESIGN_LOWER }, { "tpot", "p50", "ms", DESIGN_LOWER },
    { "tpot", "p99", "ms", DESIGN_LOWER }, { "itl", "p50", "ms", DESIGN_LOWER }, { "itl", "p99", "ms", DESIGN_LOWER },
    { "e2e", "p50", "ms", DESIGN_LOWER }, { "e2e", "p99", "ms", DESIGN_LOWER }, { "queue", "p50", "ms", DESIGN_LOWER },
    { "queue", "p99", "ms", DESIGN_LOWER }, { "service", "p50", "ms", DESIGN_LOWER }, { "service", "p99", "ms", DESIGN_LOWER },
};

/* The pools (CLASSES 0), classes (1) or routes (2: ROUTER->TARGET) of the
 * designs: a section for each that at least two have, a line for each that
 * only one has. */
static void sections(const design *d, int n, int classes, int json, tally *t)
{
    /* Scopes in order of first appearance over the designs. */
    const char *names[512];
    int nn = 0;
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < d[i].rep.n; k++) {
            const char *s = d[i].rep.rows[k].scope;
            if (!s[0] || group_of(s) != classes) continue;
            int seen = 0;
            for (int j = 0; j < nn && !seen; j++) seen = !strcmp(names[j], s);
            if (!seen && nn < 512) names[nn++] = s;
        }
    const char *what = classes == 1 ? "class" : classes == 2 ? "route" : "pool";
    size_t skip = classes == 1 ? strlen(REPORT_CLASS_SCOPE) : classes == 2 ? strlen(REPORT_ROUTE_SCOPE) : 0;
    if (json) printf(", \"%s\": [", classes == 1 ? "classes" : classes == 2 ? "routes" : "pools");
    int firstsec = 1, unmatched = 0;
    for (int j = 0; j < nn; j++) {
        int in[DESIGN_MAX], cnt = 0;
        for (int i = 0; i < n; i++) cnt += in[i] = has_scope(&d[i].rep, names[j]);
        const char *kind = NULL;
        for (int i = 0; i < n && !kind; i++) if (in[i]) kind = report_get_text(&d[i].rep, names[j], "kind");
        if (json) {
            printf("%s{\"name\": ", firstsec ? "" : ", ");
            report_json_str(stdout, names[j] + skip);
            if (kind) { printf(", \"kind\": "); report_json_str(stdout, kind); }
            printf(", \"in\": [");
            for (int i = 0; i < n; i++) printf("%s%s", i ? ", " : "", in[i] ? "true" : "false");
            printf("], \"metrics\": [");
        } else if (cnt < 2) {
            char lab[160];
            snprintf(lab, sizeof lab, "%s %s%s%s%s", what, names[j] + skip, kind ? " (" : "", kind ? kind : "", kind ? ")" : "");
            printf("%s  %s: only in", unmatched++ ? "" : "\n", ERRMSG_SHOWN(lab));
            for (int i = 0; i < n; i++) if (in[i]) printf(" %s", d[i].label);
            putchar('\n');
        } else {
            char lab[160];
            snprintf(lab, sizeof lab, "%s %s%s%s%s", what, names[j] + skip, kind ? " (" : "", kind ? kind : "", kind ? ")" : "");
            header(d, n, lab);
            unmatched = 0;
            if (cnt < n) {
                printf("  (not in");
                for (int i = 0; i < n; i++) if (!in[i]) printf(" %s", d[i].label);
                printf(")\n");
            }
        }
        firstsec = 0;
        if (cnt < 2 && !json) continue;
        int first = 1;
        for (size_t k = 0; k < sizeof SECTION / sizeof SECTION[0]; k++) {
            char name[96];
            if (strcmp(SECTION[k].stat, "value")) snprintf(name, sizeof name, "%s %s", SECTION[k].metric, SECTION[k].stat);
            else snprintf(name, sizeof name, "%s", SECTION[k].metric);
            design_metric m = { name, SECTION[k].unit, names[j], SECTION[k].metric, SECTION[k].stat, SECTION[k].better };
            trow r = { name, SECTION[k].unit, SECTION[k].better, {0}, {0}, {0} };
            int any = 0;
            for (int i = 0; i < n; i++) {
                r.has[i] = 0;
                r.v[i] = r.ci[i] = NAN;
                /* (design_value's gpus sum is for the system scope; here the pool's own row) */
                for (size_t q = 0; in[i] && q < d[i].rep.n; q++) {
                    const store_stat *x = &d[i].rep.rows[q];
                    if (!x->text && !strcmp(x->scope, m.scope) && !strcmp(x->metric, m.metric) && !strcmp(x->stat, m.stat)) {
                        r.has[i] = 1;
                        r.v[i] = x->value;
                        r.ci[i] = x->ci95;
                        break;
                    }
                }
                any |= r.has[i] && !isnan(r.v[i]);
            }
            if (!any) continue;
            /* A section compares what two designs have: a single design's rows are listed, not judged. */
            tally ignore = { 0, 0 };
            print_row(&r, n, json, first, cnt >= 2 ? t : &ignore);
            first = 0;
        }
        if (json) printf("]}");
    }
    if (json) printf("]");
}

/* Design D's SLO verdict R as text lines under INDENT WHAT ("" or "band end"). */
static void slo_lines(const design *d, const slo_result *r, const char *what)
{
    printf("  %s %-9s %s\n", d->label, what, r->met ? "MET" : "NOT MET");
    for (int k = 0; k < r->n; k++) {
        const slo_check *c = &r->c[k];
        char v[48], l[48], m[48], key[140];
        snprintf(key, sizeof key, "%s%s%s", c->t->cls[0] ? c->t->cls : "", c->t->cls[0] ? "." : "", c->t->key);
        int pct = c->t->kind != SLO_LATENCY;   /* a share: error rates, utilisation, pool maxima */
        design_fmt(v, sizeof v, pct ? 100 * c->value : c->value);
        design_fmt(l, sizeof l, pct ? 100 * c->t->limit : c->t->limit);
        design_fmt(m, sizeof m, pct ? 100 * c->margin : c->margin);
        printf("      %-28s %-7s %s %s %s %s, margin %s%s %s\n", ERRMSG_SHOWN(key), isnan(c->value) ? "UNKNOWN" : c->met ? "met" : "MISSED",
               v, c->met ? "<=" : ">", l, pct ? "%" : "ms", c->margin > 0 ? "+" : "", m, pct ? "points" : "ms");
    }
}

/* Each design's SLO verdict per term with its margin (and at its band's
 * pessimistic end, --band): text lines, or JSON members "slo" and "slo_band"
 * of the design objects' array "slo" (one entry per design, null without an
 * SLO).  Returns -1 when out of memory, else 0. */
static int slo_section(const design *d, int n, int json, const char *dbpath)
{
    int any = 0, anyband = 0;
    for (int i = 0; i < n; i++) any |= d[i].sc && scenario_slo(d[i].sc)->n > 0, anyband |= d[i].has_band;
    if (json) printf(", \"slo\": [");
    else if (any) printf("\nslo verdicts (margin = limit - value: positive met)\n");
    for (int i = 0; i < n; i++) {
        slo_result r, b;
        int has = design_slo(&d[i], &d[i].rep, &r);
        if (has < 0) return -1;
        int hb = d[i].has_band ? design_slo(&d[i], &d[i].band, &b) : 0;
        if (hb < 0) { slo_result_free(&r); return -1; }
        if (json) {
            printf("%s", i ? ", " : "");
            if (!has) printf("null");
            else {
                printf("{\"label\": \"%s\", \"run\": ", d[i].label);
                slo_json(&r, stdout);
                char kind[16];
                int64_t gid;
                double lo, hi;
                if (design_goodput(&d[i], dbpath, kind, sizeof kind, &gid, &lo, &hi) == 1) {
                    printf(", \"goodput\": {\"%s\": %lld, \"rate_rps\": ", kind, (long long) gid);
                    jnum(lo);
                    printf(", \"missed_at_rps\": ");
                    jnum(hi);
                    printf("}");
                }
                if (hb) {
                    printf(", \"band_end\": {\"step_time_factor\": %.6g, \"basis\": ", d[i].bm.hi);
                    report_json_str(stdout, d[i].bm.basis);
                    printf(", \"slo\": ");
                    slo_json(&b, stdout);
                    printf("}");
                }
                printf("}");
            }
        } else if (has) {
            slo_lines(&d[i], &r, "");
            char kind[16], ga[48], gb[48];
            int64_t gid;
            double lo, hi;
            if (design_goodput(&d[i], dbpath, kind, sizeof kind, &gid, &lo, &hi) == 1)
                printf("      goodput (%s %lld): %s req/s, the highest rate meeting the SLO%s%s%s\n", kind, (long long) gid,
                       design_fmt(ga, sizeof ga, lo), isnan(hi) ? "" : " (missed at ", isnan(hi) ? "" : design_fmt(gb, sizeof gb, hi),
                       isnan(hi) ? "" : " req/s)");
            if (hb) {
                slo_lines(&d[i], &b, "band end");
                printf("      (band end: every LLM pool's step times x%.3g; %s)\n", d[i].bm.hi, ERRMSG_SHOWN(d[i].bm.basis));
            } else if (anyband && d[i].run_id) printf("      (no band: a stored run; give the scenario file with --band)\n");
        } else if (any) printf("  %s no [slo]\n", d[i].label);
        if (has) slo_result_free(&r);
        if (hb) slo_result_free(&b);
    }
    if (json) printf("]");
    return 0;
}

/* The gateway and cache quality rows (design_quality), each design against A. */
static void quality_section(const design *d, int n, int json)
{
    design_qrow q[96];
    int nq = design_quality(d, n, q, 96);
    for (int k = 0; k < nq; k++) {   /* "NAME (UNIT)" of the longest row: a router's misroutes */
        int w = (int) (strlen(q[k].name) + (q[k].unit[0] ? strlen(q[k].unit) + 3 : 0));
        if (w > namew && w < 96) namew = w;
    }
    if (json) printf(", \"quality\": [");
    else if (nq) header(d, n, "gateway and cache quality");
    tally ignore = { 0, 0 };
    for (int k = 0; k < nq; k++) {
        trow r = { q[k].name, q[k].unit, q[k].better, {0}, {0}, {0} };
        for (int i = 0; i < n; i++) {
            r.v[i] = q[k].v[i];
            r.ci[i] = NAN;
            r.has[i] = !isnan(q[k].v[i]);
        }
        print_row(&r, n, json, k == 0, &ignore);
    }
    namew = 34;
    if (json) printf("]");
}

/* --all (text) and JSON "metrics": every row design 0 shares with design I. */
static int shared_rows(const design *d, int i, int json)
{
    const report *A = &d[0].rep, *B = &d[i].rep;
    int first = 1, nsig = 0;
    if (!json) {
        printf("\nevery row %s and %s share\n", d[0].label, d[i].label);
        printf("  %-30s %14s %14s %9s  %s\n", "metric", d[0].label, d[i].label, "vs A", "beyond CI");
    }
    for (size_t k = 0; k < A->n; k++) {
        const store_stat *a = &A->rows[k];
        if (!wanted(a)) continue;
        const store_stat *b = find(B, a);
        if (!b || (isnan(a->value) && isnan(b->value))) continue;
        double diff = design_diff_pct(a->value, b->value);
        int sig = design_beyond(a->value, a->ci95, b->value, b->ci95);
        int known = !isnan(a->ci95) || !isnan(b->ci95);
        nsig += sig == 1;
        char name[160];
        snprintf(name, sizeof name, "%s%s%s%s%s", a->scope, a->scope[0] ? "." : "", a->metric,
                 strcmp(a->stat, "value") ? " " : "", strcmp(a->stat, "value") ? a->stat : "");
        if (json) {
            printf("%s{\"metric\": ", first ? "" : ", ");
            report_json_str(stdout, name);
            printf(", \"a\": ");
            jnum(a->value);
            printf(", \"b\": ");
            jnum(b->value);
            printf(", \"diff_pct\": ");
            if (isnan(diff)) printf("null"); else printf("%.4g", diff);
            printf(", \"beyond_ci\": %s}", !known ? "null" : sig == 1 ? "true" : "false");
        } else {
            char av[72], bv[72], dv[24];
            cell(av, sizeof av, a->value, a->ci95);
            cell(bv, sizeof bv, b->value, b->ci95);
            if (isnan(diff)) snprintf(dv, sizeof dv, "-"); else snprintf(dv, sizeof dv, "%+.1f%%", diff);
            printf("  %-30s %14s %14s %9s  %s\n", ERRMSG_SHOWN(name), av, bv, dv, !known ? "(no CI)" : sig == 1 ? "*" : "");
        }
        first = 0;
    }
    return nsig;
}

int compare_main(int argc, char **argv)
{
    compare_opts o = { .reps = 5 };
    cli_args a;
    int rc = cli_parse(&CMD, argc, argv, &a, compare_opt, &o);
    if (rc != CLI_GO) return rc;
    if (a.npos > DESIGN_MAX) return cu_die(2, "compare: at most %d designs, got %d", DESIGN_MAX, a.npos);
    if (a.npos < 2) return cu_die(2, "compare: expected two or more scenarios or run IDs (see latsim compare --help)");
    int n = a.npos, json = a.json;
    const char *dbpath = cu_db_path(a.db);
    char err[1024];
    if (cu_check_db_path(dbpath, err, sizeof err) != 0) return cu_die(2, "%s", err);
    design_how how = { o.reps, o.seed, a.sets, a.nsets, o.jobs, dbpath, o.band };
    design d[DESIGN_MAX];
    memset(d, 0, sizeof d);
    int loaded = 0;
    rc = 0;
    for (; loaded < n && !rc; loaded++) rc = design_load(a.pos[loaded], &how, (char) ('A' + loaded), "compare", &d[loaded]);
    if (rc) {
        for (int i = 0; i < loaded - 1; i++) design_free(&d[i]);
        return rc;
    }
    tally t = { 0, 0 };
    if (json) {
        printf("{\"a\": ");
        report_json_str(stdout, d[0].arg);
        printf(", \"b\": ");
        report_json_str(stdout, d[1].arg);
        printf(", \"designs\": [");
        for (int i = 0; i < n; i++) {
            printf("%s{\"label\": \"%s\", \"design\": ", i ? ", " : "", d[i].label);
            report_json_str(stdout, d[i].arg);
            printf(", \"title\": ");
            report_json_str(stdout, d[i].title ? d[i].title : d[i].arg);
            printf(", \"description\": ");
            if (d[i].desc) report_json_str(stdout, d[i].desc);
            else printf("null");
            printf(", \"replications\": %d, \"cost_models\": ", d[i].rep.replications);
            prov_json(&d[i].rep, stdout);
            printf("}");
        }
        printf("], \"replications\": [");
        for (int i = 0; i < n; i++) printf("%s%d", i ? ", " : "", d[i].rep.replications);
        printf("]");
    } else {
        printf("designs\n");
        for (int i = 0; i < n; i++) {
            printf("  %s = %s (%d replication%s)\n", d[i].label, ERRMSG_SHOWN(d[i].arg), d[i].rep.replications,
                   d[i].rep.replications > 1 ? "s" : "");
            /* the scenario's own title and description, when it gives them */
            const char *t = d[i].sc ? scenario_sim_value(d[i].sc, "title") : NULL;
            if (t && *t) printf("      %s\n", ERRMSG_SHOWN(t));
            if (d[i].desc) printf("      %s\n", ERRMSG_SHOWN(d[i].desc));
        }
        for (int i = 0; i < n; i++) {
            char ind[16];
            snprintf(ind, sizeof ind, "  %s ", d[i].label);
            prov_table(&d[i].rep, ind, stdout);
        }
    }
    for (int i = 0; i < n; i++) prov_warn(&d[i].rep);   /* once: uncalibrated step times */
    headline(d, n, json, &t);
    if (slo_section(d, n, json, dbpath) != 0) {
        for (int i = 0; i < n; i++) design_free(&d[i]);
        return cu_die(1, "out of memory");
    }
    quality_section(d, n, json);
    sections(d, n, 0, json, &t);
    sections(d, n, 1, json, &t);
    sections(d, n, 2, json, &t);
    if (json) {
        printf(", \"metrics\": [");
        int nsig = shared_rows(d, 1, 1);
        printf("], \"beyond_ci\": %d, \"not_judged\": %d, \"metrics_beyond_ci\": %d}\n", t.beyond, t.unjudged, nsig);
    } else {
        if (o.all)
            for (int i = 1; i < n; i++) shared_rows(d, i, 0);
        printf("\n%d metric%s differ by more than the 95%% confidence intervals (*)\n", t.beyond, t.beyond == 1 ? "" : "s");
        if (t.unjudged) printf("%d not judged (no CI): '?' where neither design was replicated\n", t.unjudged);
    }
    for (int i = 0; i < n; i++) design_free(&d[i]);
    return 0;
}

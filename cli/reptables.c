/* reptables.c -- the tables of the design review page (latsim report --html),
 * each design against the first. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cliopt.h"
#include "cliutil.h"
#include "commands.h"
#include "design.h"
#include "gp.h"
#include "latsim/errmsg.h"
#include "latsim/infile.h"
#include "latsim/report.h"
#include "latsim/scenario.h"
#include "latsim/slo.h"
#include "latsim/store.h"
#include "rephtml.h"
#include "reptables.h"
/* ---- tables --------------------------------------------------------------- */

/* The difference cell of design B against A: the % change, whether it is
 * beyond the intervals (*), and coloured by direction: better (blue), worse
 * (orange), within the intervals or neutral (no colour).  A change to or from
 * 0 is "n/a". */
static void diffcell(FILE *out, int better, int hasa, double a, double ca, int hasb, double b, double cb)
{
    double pct = design_diff_pct(a, b);
    int bey = hasa && hasb ? design_beyond(a, ca, b, cb) : -2;
    int jd = design_judge(better, hasa ? a : NAN, hasb ? b : NAN, bey);
    if (!hasa || !hasb || isnan(a) || isnan(b)) { fputs("<td>-</td>", out); return; }
    if (isnan(pct)) { fputs("<td class=\"na\">n/a</td>", out); return; }
    const char *cls = jd > 0 ? (bey == 1 ? "better" : "better nci") : jd < 0 ? (bey == 1 ? "worse" : "worse nci") : "same";
    fprintf(out, "<td class=\"%s\">%+.1f&nbsp;%%%s%s</td>", cls, pct, jd > 0 ? " &#9650;better" : jd < 0 ? " &#9660;worse" : "",
            bey == 1 ? " *" : bey == -1 ? " ?" : "");
}

void rt_legend(FILE *out)
{
    fputs("<p class=\"note legend\"><span class=\"key better\">&#9650;better</span> <span class=\"key worse\">&#9660;worse"
          "</span> than A by the metric's direction (lower latency, cost, energy, misroutes; higher throughput, goodput, hit"
          " rates); <b>*</b>: beyond the 95&nbsp;% confidence intervals; <b>?</b>: not judged (neither design replicated:"
          " shown paler); no colour: within the intervals, or a metric that only describes; <b>n/a</b>: a change to or from"
          " 0 (e.g. an ITL of 0 where tokens come in bursts) is no percentage.</p>\n", out);
}

void rt_headline(FILE *out, const design *d, int n)
{
    int nm;
    const design_metric *m = design_headline(&nm);
    fputs("<table id=\"headline\"><thead><tr><th>metric</th><th>unit</th>", out);
    for (int i = 0; i < n; i++) {
        fprintf(out, "<th>%s</th>", d[i].label);
        if (i) fprintf(out, "<th>%s vs A</th>", d[i].label);
    }
    fputs("</tr></thead><tbody>\n", out);
    for (int k = 0; k < nm; k++) {
        double v[DESIGN_MAX], ci[DESIGN_MAX], scale;
        int has[DESIGN_MAX], any = 0;
        for (int i = 0; i < n; i++) any |= has[i] = design_value(&d[i].rep, &m[k], &v[i], &ci[i]);
        if (!any && (!strcmp(m[k].metric, "energy_kwh") || !strncmp(m[k].metric, "joules_", 7))) continue;
        const char *unit = design_unit(v, n, m[k].unit, &scale);
        fprintf(out, "<tr><th>%s</th><td class=\"u\">%s</td>", m[k].name, unit);
        for (int i = 0; i < n; i++) {
            rh_numcell_s(out, v[i], ci[i], scale);
            if (i) diffcell(out, m[k].better, has[0], v[0], ci[0], has[i], v[i], ci[i]);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n<p class=\"note\">Mean &plusmn; half-width of the 95&nbsp;% confidence interval over the"
          " replications; a latency column in s when every design's value is 1000 ms or more.</p>\n", out);
    rt_legend(out);
}

/* Design D's goodput when a plan or a sweep simulated it (design_goodput) as a
 * table row, or nothing. */
void rt_goodput_row(FILE *out, const design *d, const char *dbpath)
{
    char kind[16], a[48], b[48];
    int64_t sid;
    double lo, hi;
    if (design_goodput(d, dbpath, kind, sizeof kind, &sid, &lo, &hi) != 1) return;
    fprintf(out, "<tr><th></th><td>%s %lld</td><td colspan=\"6\" style=\"text-align:left\" class=\"goodput\">goodput: <b>%s req/s</b>"
                 " (the highest rate at which it meets the SLO", kind, (long long) sid, design_fmt(a, sizeof a, lo));
    if (!isnan(hi)) fprintf(out, "; missed at %s req/s", design_fmt(b, sizeof b, hi));
    fputs(")</td></tr>\n", out);
}

/* Each design's SLO verdict per term: limit, value, margin, met; with --band
 * the same at the pessimistic end of its prediction band.  Nothing when no
 * design has an [slo].  Returns -1 when out of memory. */
int rt_slo_verdicts(FILE *out, const design *d, int n, const char *dbpath)
{
    int any = 0;
    for (int i = 0; i < n; i++) any |= d[i].sc && scenario_slo(d[i].sc)->n > 0;
    if (!any) return 0;
    fputs("<h2 id=\"slo\">SLO verdicts</h2>\n<table id=\"slo-verdicts\"><thead><tr><th>design</th><th>where</th><th>verdict</th>"
          "<th>term</th><th>limit</th><th>value</th><th>margin</th><th>margin %</th></tr></thead><tbody>\n", out);
    for (int i = 0; i < n; i++) {
        for (int w = 0; w < 2; w++) {
            slo_result r;
            if (w && !d[i].has_band) continue;
            int has = design_slo(&d[i], w ? &d[i].band : &d[i].rep, &r);
            if (has < 0) return -1;
            if (!has) {
                fputs("<tr><th>", out);
                rh_dname(out, &d[i]);
                fputs("</th><td colspan=\"7\" style=\"text-align:left\">no [slo]</td></tr>\n", out);
                break;
            }
            for (int k = 0; k < r.n; k++) {
                const slo_check *c = &r.c[k];
                int pct = c->t->kind != SLO_LATENCY;
                double f = pct ? 100 : 1;
                char v[48], l[48], mg[48];
                fputs("<tr><th>", out);
                if (k == 0) rh_dname(out, &d[i]);
                fprintf(out, "</th><td>%s", w ? "band end" : "run");
                if (w && k == 0) fprintf(out, " <small>(step times x%.3g)</small>", d[i].bm.hi);
                fprintf(out, "</td><td class=\"%s\">%s</td><td style=\"text-align:left\">", c->met ? "met" : "missed",
                        isnan(c->value) ? "NOT MEASURED" : c->met ? "met" : "MISSED");
                if (c->t->cls[0]) { rh_esc(out, c->t->cls); fputc('.', out); }
                rh_esc(out, c->t->key);
                const char *u = pct ? "%" : "ms";
                fprintf(out, "</td><td>%s %s</td><td>%s %s</td><td>%s%s %s</td><td>%+.1f&nbsp;%%</td></tr>\n",
                        design_fmt(l, sizeof l, f * c->t->limit), u, design_fmt(v, sizeof v, f * c->value), u,
                        c->margin > 0 ? "+" : "", design_fmt(mg, sizeof mg, f * c->margin), u,
                        c->t->limit != 0 ? 100 * c->margin / c->t->limit : NAN);
            }
            slo_result_free(&r);
        }
        rt_goodput_row(out, &d[i], dbpath);
    }
    fputs("</tbody></table>\n<p class=\"note\">margin = limit - value (positive: met), and as a share of the limit."
          " <i>band end</i>: the design run again with every LLM pool's step times at the pessimistic end of its cost"
          " model's 90&nbsp;% prediction band (<code>--band</code>; docs/bands.md); stored runs have none.</p>\n", out);
    return 0;
}

/* The gateway and cache quality of the designs (design_quality), each against A. */
void rt_quality(FILE *out, const design *d, int n)
{
    design_qrow q[96];
    int nq = design_quality(d, n, q, 96);
    if (!nq) return;
    fputs("<h2 id=\"quality\">Gateway and cache quality</h2>\n<table id=\"quality-table\"><thead><tr><th>pool: metric</th>"
          "<th>unit</th>", out);
    for (int i = 0; i < n; i++) {
        fprintf(out, "<th>%s</th>", d[i].label);
        if (i) fprintf(out, "<th>%s vs A</th>", d[i].label);
    }
    fputs("</tr></thead><tbody>\n", out);
    for (int k = 0; k < nq; k++) {
        fputs("<tr><th>", out);
        rh_esc(out, q[k].name);
        fprintf(out, "</th><td class=\"u\">%s</td>", q[k].unit);
        for (int i = 0; i < n; i++) {
            rh_numcell(out, q[k].v[i], NAN);
            if (i) diffcell(out, q[k].better, !isnan(q[k].v[0]), q[k].v[0], NAN, !isnan(q[k].v[i]), q[k].v[i], NAN);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n<p class=\"note\">Hit rates: the result cache's share of lookups it answered (false hits"
          " included), the prefix cache's share of prompt tokens (and of requests) found cached; false hits: answers to"
          " another question; misroutes: a complexity router's complex requests on the small model (a quality cost) and"
          " simple ones on the large model (waste); abandoned: requests the client stopped waiting for.</p>\n", out);
}

static const char *const BD_COLORS[] = { "#8c564b", "#d62728", "#1f77b4", "#7f7f7f", "#2ca02c", "#9467bd", "#ff7f0e" };

/* The shares of each "PREFIX.SET.COMPONENT" row group (breakdown, ttft_breakdown) as bars stacked to 100 %. */
void rt_shares(FILE *out, const design *d, int n, const char *prefix, const char *of)
{
    int shown = 0;
    size_t pl = strlen(prefix);
    for (int i = 0; i < n; i++)
        for (int set = 0; set < 2; set++) {
            const char *sname = set ? "p99" : "all";
            char want[64];
            snprintf(want, sizeof want, "%s.%s.", prefix, sname);
            double total = 0;
            int nk = 0;
            const store_stat *rows[16];
            for (size_t j = 0; j < d[i].rep.n && nk < 16; j++) {
                const store_stat *s = &d[i].rep.rows[j];
                if (s->scope[0] || strncmp(s->metric, want, strlen(want)) || isnan(s->value)) continue;
                rows[nk++] = s;
                total += s->value;
            }
            if (!nk || !(total > 0)) continue;
            if (!shown++) fprintf(out, "<table class=\"shares\"><thead><tr><th>design</th><th>requests</th><th>share of %s</th></tr></thead><tbody>\n", of);
            double mean = report_get(&d[i].rep, "", !strcmp(prefix, "breakdown") ? "e2e" : "ttft", "mean");
            fprintf(out, "<tr><th>%s</th><td>%s</td><td><div class=\"bar\">", d[i].label, set ? "P99+" : "all");
            for (int q = 0; q < nk; q++) {
                const char *name = rows[q]->metric + strlen(want);
                double sh = rows[q]->value / total;
                fprintf(out, "<span style=\"width:%.2f%%;background:%s\" title=\"", 100 * sh, BD_COLORS[q % 7]);
                rh_esc(out, name);
                fprintf(out, " %.1f%%\"></span>", 100 * sh);
            }
            fputs("</div><div class=\"lg\">", out);
            for (int q = 0; q < nk; q++) {
                const char *name = rows[q]->metric + strlen(want);
                fprintf(out, "<i style=\"background:%s\"></i>", BD_COLORS[q % 7]);
                rh_esc(out, name);
                fprintf(out, " %.1f%%", 100 * rows[q]->value);
                char ms[48];
                if (!set && !isnan(mean)) fprintf(out, " (%s ms)", design_fmt(ms, sizeof ms, rows[q]->value * mean));
                fputs(" &nbsp; ", out);
            }
            fputs("</div></td></tr>\n", out);
        }
    (void) pl;
    if (shown) fputs("</tbody></table>\n", out);
    else fprintf(out, "<p class=\"note\">No design has shares of %s (saturated, or not recorded).</p>\n", of);
}

int rt_is_class(const char *s) { return !strncmp(s, REPORT_CLASS_SCOPE, strlen(REPORT_CLASS_SCOPE)); }
int rt_is_route(const char *s) { return !strncmp(s, REPORT_ROUTE_SCOPE, strlen(REPORT_ROUTE_SCOPE)); }
/* A pool's scope: not the system's, a class's or a route's. */
static int is_pool(const char *s) { return s[0] && !rt_is_class(s) && !rt_is_route(s); }

/* A column of a per-scope table: row METRIC/STAT, header H, UNIT ("" none). */
typedef struct tcol {
    const char *m, *s, *h, *unit;
} tcol;

/* For the NC columns C over the scopes of R that KEEP accepts: USE[c] (some
 * scope has a value), and the unit each is shown in with its SCALE (ms or s,
 * design_unit).  Returns 1 when R has such a scope. */
static int columns(const report *r, int (*keep)(const char *), const tcol *c, int nc, int *use, const char **unit, double *scale)
{
    int any = 0;
    for (int k = 0; k < nc; k++) {
        double v[64];
        int nv = 0;
        use[k] = 0;
        const char *last = "";
        for (size_t j = 0; j < r->n; j++) {
            const char *sc = r->rows[j].scope;
            if (!keep(sc)) continue;
            any = 1;
            if (!strcmp(sc, last)) continue;
            last = sc;
            double x = report_get(r, sc, c[k].m, c[k].s);
            if (isnan(x)) continue;
            use[k] = 1;
            if (nv < 64) v[nv++] = x;
        }
        unit[k] = design_unit(v, nv, c[k].unit, &scale[k]);
        if (!strcmp(c[k].unit, "%")) scale[k] = 100;   /* a share (0..1) shown as a percentage */
    }
    return any;
}

static void colheads(FILE *out, const tcol *c, int nc, const int *use, const char *const *unit)
{
    for (int k = 0; k < nc; k++)
        if (use[k]) fprintf(out, "<th>%s%s%s</th>", c[k].h, unit[k][0] ? " " : "", unit[k]);
}

void rt_pools(FILE *out, const design *d)
{
    const report *r = &d->rep;
    static const tcol COLS[] = {
        /* the busy share: of servers (generic), of time stepping (LLM: 1 under any
         * continuous-batching load); MFU, MBU and KV occupancy say how hard the steps use the GPUs */
        { REPORT_BUSY_SHARE, "value", "busy share", "" }, { "mfu", "value", "MFU", "" }, { "mbu", "value", "MBU", "" },
        { "kv_occupancy", "value", "KV occupancy", "" },
        { "arrivals", "value", "arrivals", "" }, { "served", "value", "served", "" },
        { "gpus", "value", "GPUs", "" }, { "cost_per_hour", "value", "$/h", "" }, { "queue", "p50", "queue p50", "ms" },
        { "queue", "p99", "queue p99", "ms" }, { "service", "p50", "service p50", "ms" }, { "service", "p99", "service p99", "ms" },
        { "ttft", "p99", "TTFT p99", "ms" }, { "tpot", "p99", "TPOT p99", "ms" }, { "e2e", "p99", "E2E p99", "ms" },
    };
    enum { NC = sizeof COLS / sizeof COLS[0] };
    int use[NC];
    const char *unit[NC];
    double scale[NC];
    columns(r, is_pool, COLS, NC, use, unit, scale);
    fputs("<h3>", out);
    rh_dname(out, d);
    fputs("</h3>\n<table class=\"pools\"><thead><tr><th>pool</th><th>kind</th>", out);
    colheads(out, COLS, NC, use, unit);
    fputs("<th>cost model</th></tr></thead><tbody>\n", out);
    const char *last = "";
    for (size_t j = 0; j < r->n; j++) {
        const char *sc = r->rows[j].scope;
        if (!is_pool(sc) || !strcmp(sc, last)) continue;
        last = sc;
        const char *kind = report_get_text(r, sc, "kind");
        fputs("<tr><th>", out);
        rh_esc(out, sc);
        fputs("</th><td>", out);
        rh_esc(out, kind ? kind : "unknown");
        fputs("</td>", out);
        for (int c = 0; c < NC; c++) if (use[c]) rh_numcell_s(out, report_get(r, sc, COLS[c].m, COLS[c].s), NAN, scale[c]);
        const char *cmk = report_get_text(r, sc, "cost_model.kind");
        fputs("<td>", out);
        if (cmk) {
            const char *src = report_get_text(r, sc, "cost_model.source");
            double id = report_get(r, sc, "cost_model.id", "value"), mape = report_get(r, sc, "cost_model.mape", "value");
            rh_esc(out, cmk);
            if (!isnan(id)) fprintf(out, " %.0f", id);
            fputs(" (", out);
            rh_esc(out, src ? src : "");
            fputs(src && strcmp(src, "datasheet") ? ": calibrated" : ": not calibrated", out);
            if (!isnan(mape)) fprintf(out, ", cv MAPE %.3g %%", mape);
            if (report_get(r, sc, "cost_model.extrapolated", "value") > 0) fputs(", extrapolated", out);
            fputs(")", out);
        } else fputs("-", out);
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

/* 1 when METRIC is a share of a step's (or an encoder pass's) time by operator:
 * an LLM pool's op_share_NAME (op_shares = yes), an encoder pool's enc_share_NAME. */
static int is_op_share(const char *metric)
{
    return !strncmp(metric, "op_share_", 9) || !strncmp(metric, "enc_share_", 10);
}

/* Design D's step time by operator: one small table per pool that reports it
 * (docs/llm.md, "Time by operator"), the operators in report order with
 * their share in % and, for an LLM pool, the time they took over the window
 * (op_step_ms x share).  Returns the tables written. */
int rt_op_shares(FILE *out, const design *d)
{
    const report *r = &d->rep;
    int tables = 0;
    const char *last = "";
    for (size_t j = 0; j < r->n; j++) {
        const char *sc = r->rows[j].scope;
        if (!is_pool(sc) || !strcmp(sc, last) || !is_op_share(r->rows[j].metric)) continue;
        last = sc;
        double total = report_get(r, sc, "op_step_ms", "value");
        fputs("<h3>", out);
        rh_dname(out, d);
        fputs(": ", out);
        rh_esc(out, sc);
        fputs(", time by operator</h3>\n<table class=\"opshares\"><thead><tr><th>operator</th><th>share %</th>", out);
        if (!isnan(total)) fputs("<th>time s</th>", out);
        fputs("</tr></thead><tbody>\n", out);
        for (size_t k = j; k < r->n && !strcmp(r->rows[k].scope, sc); k++) {
            const char *m = r->rows[k].metric;
            if (!is_op_share(m) || strcmp(r->rows[k].stat, "value") || r->rows[k].replication != r->rows[j].replication)
                continue;
            fputs("<tr><th>", out);
            rh_esc(out, m + (m[0] == 'o' ? 9 : 10));
            fputs("</th>", out);
            rh_numcell_s(out, r->rows[k].value, NAN, 100);
            if (!isnan(total)) rh_numcell_s(out, r->rows[k].value * total, NAN, 1e-3);
            fputs("</tr>\n", out);
        }
        fputs("</tbody></table>\n", out);
        tables++;
    }
    return tables;
}

/* Design D's rt_routes (the out-edges of a router; docs/metrics.md, "Per pool and
 * per route latencies"): router, target, served, E2E/TTFT/TPOT p50/p99.
 * Nothing when it has none. */
void rt_routes(FILE *out, const design *d)
{
    const report *r = &d->rep;
    static const tcol COLS[] = {
        { "served", "value", "served", "" }, { "e2e", "p50", "E2E p50", "ms" }, { "e2e", "p99", "E2E p99", "ms" },
        { "ttft", "p50", "TTFT p50", "ms" }, { "ttft", "p99", "TTFT p99", "ms" }, { "tpot", "p50", "TPOT p50", "ms" },
        { "tpot", "p99", "TPOT p99", "ms" },
    };
    enum { NC = sizeof COLS / sizeof COLS[0] };
    int use[NC];
    const char *unit[NC];
    double scale[NC];
    if (!columns(r, rt_is_route, COLS, NC, use, unit, scale)) return;
    fputs("<h3>", out);
    rh_dname(out, d);
    fputs(": routes</h3>\n<table class=\"routes\"><thead><tr><th>router</th><th>target</th>", out);
    colheads(out, COLS, NC, use, unit);
    fputs("</tr></thead><tbody>\n", out);
    const char *last = "";
    for (size_t j = 0; j < r->n; j++) {
        const char *sc = r->rows[j].scope;
        if (!rt_is_route(sc) || !strcmp(sc, last)) continue;
        last = sc;
        const char *from = report_get_text(r, sc, "router"), *to = report_get_text(r, sc, "target");
        fputs("<tr><th>", out);
        rh_esc(out, from ? from : "?");
        fputs("</th><th>", out);
        rh_esc(out, to ? to : "?");
        fputs("</th>", out);
        for (int c = 0; c < NC; c++) if (use[c]) rh_numcell_s(out, report_get(r, sc, COLS[c].m, COLS[c].s), NAN, scale[c]);
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

/* Design D's request rt_classes ([class NAME]; compare's class sections):
 * requests, served, refused, failed and abandoned, goodput, the result
 * cache's hit rate and false hits of the class's lookups (where its requests
 * pass one), the prefix caches' hit rate of its prompt tokens (where they reach
 * an LLM pool with one), $ per 1k requests and the latency percentiles.  A column shows
 * only where some class has it.  Nothing when it has none. */
void rt_classes(FILE *out, const design *d)
{
    const report *r = &d->rep;
    static const tcol COLS[] = {
        { "requests", "value", "requests", "" }, { "served", "value", "served", "" }, { "rejected", "value", "rejected", "" },
        { "timed_out", "value", "timed out", "" }, { "failed", "value", "failed", "" },
        { "abandoned_share", "value", "abandoned", "%" }, { "goodput", "value", "goodput share", "" },
        { "goodput_rps", "value", "goodput", "req/s" }, { "cache_hit_rate", "value", "cache hit rate", "%" },
        { "cache_false_hits", "value", "cache false hits", "" }, { "prefix_hit_rate", "value", "prefix hit rate", "%" },
        { "cost_per_1k_requests", "value", "$ per 1k", "" },
        { "ttft", "p50", "TTFT p50", "ms" }, { "ttft", "p99", "TTFT p99", "ms" }, { "tpot", "p99", "TPOT p99", "ms" },
        { "e2e", "p50", "E2E p50", "ms" }, { "e2e", "p99", "E2E p99", "ms" }, { "queue", "p99", "queue p99", "ms" },
    };
    enum { NC = sizeof COLS / sizeof COLS[0] };
    int use[NC];
    const char *unit[NC];
    double scale[NC];
    if (!columns(r, rt_is_class, COLS, NC, use, unit, scale)) return;
    fputs("<h3>", out);
    rh_dname(out, d);
    fputs(": classes</h3>\n<table class=\"classes\"><thead><tr><th>class</th>", out);
    colheads(out, COLS, NC, use, unit);
    fputs("</tr></thead><tbody>\n", out);
    const char *last = "";
    for (size_t j = 0; j < r->n; j++) {
        const char *sc = r->rows[j].scope;
        if (!rt_is_class(sc) || !strcmp(sc, last)) continue;
        last = sc;
        fputs("<tr><th>", out);
        rh_esc(out, sc + strlen(REPORT_CLASS_SCOPE));
        fputs("</th>", out);
        for (int c = 0; c < NC; c++) if (use[c]) rh_numcell_s(out, report_get(r, sc, COLS[c].m, COLS[c].s), NAN, scale[c]);
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

/* The plan of design D's run (planstore_plan_of_run), once per plan (SEEN:
 * plan ids shown, *NSEEN of them): its target, every configuration's verdict,
 * and its simulated points by cost, the cheapest meeting one marked (the
 * frontier: every point below it misses the SLO), as a rh_picture (plots/frontier.gp,
 * as `latsim plot PLAN` draws it; DIR the plots folder, *K the pictures so far)
 * and a table.  Returns 1 when a plan was shown, else 0. */
int rt_plan_section(FILE *out, const design *d, const char *dbpath, int64_t *seen, int *nseen, const char *dir, int *k)
{
    if (!d->run_id) return 0;
    sqlite3 *db = NULL;
    char err[600];
    if (store_open_readonly(dbpath, &db, err, sizeof err) != 0) return 0;
    int64_t id = 0;
    char *js = NULL;
    plan_point *pts = NULL;
    int npts = 0;
    int found = planstore_plan_of_run(db, d->run_id, &id, &js, &pts, &npts, err, sizeof err);
    store_close(db);
    for (int i = 0; found == 1 && i < *nseen; i++) if (seen[i] == id) found = 0;
    if (found != 1) {
        free(js);
        free(pts);
        return 0;
    }
    if (*nseen < DESIGN_MAX) seen[(*nseen)++] = id;
    json_t *j = js ? json_loads(js, 0, NULL) : NULL;
    fprintf(out, "<h3>Plan %lld (design %s, run %lld)</h3>\n", (long long) id, d->label, (long long) d->run_id);
    if (j) {
        fprintf(out, "<p>target %.4g req/s x headroom %.3g, objective %s", json_number_value(json_object_get(j, "target_rate_rps")),
                json_number_value(json_object_get(j, "headroom")),
                json_string_value(json_object_get(j, "objective")) ? json_string_value(json_object_get(j, "objective")) : "cost");
        json_t *w = json_object_get(j, "peak_window");
        if (w) fprintf(out, "; the trace's peak window: %.0f s to %.0f s, %.0f requests", json_number_value(json_object_get(w, "start_s")),
                       json_number_value(json_object_get(w, "start_s")) + json_number_value(json_object_get(w, "length_s")),
                       json_number_value(json_object_get(w, "requests")));
        fputs(".</p>\n<table><thead><tr><th>configuration</th><th>verdict</th><th>$/hour</th><th style=\"text-align:left\">why"
              "</th></tr></thead><tbody>\n", out);
        json_t *v = json_object_get(j, "verdicts");
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *e = json_array_get(v, i);
            int chosen = json_is_true(json_object_get(e, "chosen"));
            const char *cfg = json_string_value(json_object_get(e, "configuration"));
            const char *kind = json_string_value(json_object_get(e, "verdict"));
            const char *why = json_string_value(json_object_get(e, "why"));
            json_t *usd = json_object_get(e, "usd_per_hour");
            fputs(chosen ? "<tr><th>" : "<tr><td>", out);
            rh_esc(out, cfg && *cfg ? cfg : "(as given)");
            fputs(chosen ? "</th><td>CHOSEN: " : "</td><td>", out);
            rh_esc(out, kind ? kind : "");
            fputs("</td>", out);
            if (json_is_number(usd)) fprintf(out, "<td>%.2f</td>", json_number_value(usd));
            else fputs("<td>-</td>", out);
            fputs("<td style=\"text-align:left\">", out);
            rh_esc(out, why ? why : "");
            fputs("</td></tr>\n", out);
        }
        fputs("</tbody></table>\n", out);
        json_decref(j);
    } else fputs("<p class=\"note\">The plan did not finish (no verdicts stored).</p>\n", out);
    mbuf m;
    if (rh_mb_open(&m) == 0) {
        int rc = 1;
        if (store_open_readonly(dbpath, &db, err, sizeof err) == 0) {
            rc = plot_plan_commands(db, id, 900, 560, m.f);
            store_close(db);
        }
        if (rc == 0) rh_picture(out, &m, dir, "frontier.gp", 900, 560, k);
        else fputs("<p class=\"note\">No frontier picture: the plan's points could not be read.</p>\n", out);
        rh_mb_close(&m);
    }
    fputs("<p>Frontier: the points simulated at the planned rate (candidates and confirmations), by cost; below the "
          "cheapest meeting one (marked) every point misses the SLO.</p>\n<table><thead><tr><th>$/hour</th><th>SLO</th>"
          "<th>role</th><th style=\"text-align:left\">settings</th></tr></thead><tbody>\n", out);
    int marked = 0;
    for (int i = 0, rows = 0; i < npts && rows < 200; i++) {
        if (strcmp(pts[i].role, "candidate") && strcmp(pts[i].role, "confirm")) continue;   /* goodput: other rates */
        rows++;
        int front = pts[i].slo_met && !marked;
        marked |= front;
        fprintf(out, "<tr><td>%.2f</td><td>%s</td><td>", pts[i].usd_per_hour, front ? "<b>met: cheapest</b>" : pts[i].slo_met ? "met" : "missed");
        rh_esc(out, pts[i].role);
        fputs("</td><td style=\"text-align:left\">", out);
        rh_esc(out, pts[i].settings);
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
    free(js);
    free(pts);
    return 1;
}

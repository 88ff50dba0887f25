/* report.c -- `latsim report RUN|FILE ... --html OUT.html`: one self-contained
 * HTML page for a design review of up to 8 designs (stored runs, or scenario
 * files run here), each named by its [sim] title and in one colour on every
 * picture: the headline table (compare's, with the differences to the first
 * design, the CI flags, and better / worse by each metric's direction in
 * blue / orange with a legend), each design's SLO verdict per term with its
 * margin (and at its prediction band's end with --band) and its goodput when
 * a plan or a sweep simulated it, the gateway and cache quality, the CDFs of
 * TTFT, TPOT and E2E of every design overlaid with the SLO limits and their
 * tail views (1 - CDF, log axis), the breakdown shares, each design's pools
 * and their cost models, its routes and request classes, the time series of
 * runs that recorded one, the plan's verdicts and frontier when a run comes
 * from a plan, and the scenario text of each design.  Numbers are written for
 * people (design_fmt: thousands, no exponents; ms or s per column).
 *
 * `latsim report explore [ID] --html OUT.html`: the same kind of page for a
 * stored exploration (latsim explore): headline, the frontier picture, the
 * best configuration, the Pareto set, every configuration, the skipped ones.
 *
 * The pictures are gnuplot's SVG (gp.h, scripts in plots/) written into the
 * page: no file beside it, no network fetch, no JavaScript.  Every text that
 * comes from user data (paths, names, the scenario text) is escaped.
 */
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

enum { O_HTML = 1, O_REPS, O_SEED, O_JOBS, O_BAND };

static const cli_opt OPTS[] = {
    { "html", O_HTML, "OUT.html", "the page to write", CLI_REQUIRED },
    { "replications", O_REPS, "N", "runs of each scenario file (default 1; seeds seed..seed+N-1)", 0 },
    { "seed", O_SEED, "N", "the first seed (default 1)", 0 },
    { "set", CLI_SET, "S.K=V", "override key K of section S in every scenario file (repeatable)", CLI_REPEAT },
    { "jobs", O_JOBS, "N", "worker processes (default: all cores)", 0 },
    { "band", O_BAND, NULL, "also run each scenario file with an LLM pool at the pessimistic end of its 90 % prediction "
      "band and judge its SLO there (docs/bands.md)", 0 },
    CLI_OPT_DB,
    { NULL },
};

static const cli_cmd CMD = {
    "report", "RUN|FILE... | explore [ID]",
    "Writes one self-contained HTML page reviewing up to 8 designs (stored run IDs or\n"
    "scenario files, run here; named by their [sim] title): the headline table with\n"
    "each design's difference from the first, whether it is beyond the confidence\n"
    "intervals and better or worse by the metric's direction, each design's SLO\n"
    "verdict per term with its margin (--band: also at its prediction band's end)\n"
    "and goodput when planned or swept, the gateway and cache quality, overlaid CDFs\n"
    "of TTFT, TPOT and E2E with the SLO limits and their tails on a log axis, where\n"
    "the time goes, the pools and their cost models, routes and request classes,\n"
    "the time series of runs that recorded one, and each design's scenario.\n"
    "Pictures are inline SVG drawn by gnuplot (Debian: gnuplot-nox).\n"
    "`latsim report explore [ID] --html OUT.html` instead writes the page of stored\n"
    "exploration ID (latsim explore; the last one in --db without ID): its headline,\n"
    "the Pareto frontier of cost against the SLO metric, the best configuration, the\n"
    "Pareto set, every configuration and the skipped ones.\n",
    "", OPTS, 32, 0,
};

typedef struct report_opts {
    const char *html;
    int reps, jobs;
    int band;                 /* --band */
    uint64_t seed;
} report_opts;

static int report_opt(void *ctx, int id, const char *v)
{
    report_opts *o = ctx;
    if (id == O_HTML) { o->html = v; return 0; }
    if (id == O_BAND) { o->band = 1; return 0; }
    const char *name = id == O_REPS ? "--replications" : id == O_JOBS ? "--jobs" : "--seed";
    long x = cu_posint("report", name, v, id == O_SEED ? 2147483647L : 10000);
    if (x < 0) return 2;
    if (id == O_REPS) o->reps = (int) x;
    else if (id == O_JOBS) o->jobs = (int) x;
    else o->seed = (uint64_t) x;
    return 0;
}

/* ---- HTML text ------------------------------------------------------------ */

/* Writes S as HTML text: &<>"' as entities, controls other than tab and
 * newline dropped, each byte that is not valid UTF-8 as its Latin-1 code point. */
static void esc(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *) s; *p;) {
        if (*p == '&') fputs("&amp;", f), p++;
        else if (*p == '<') fputs("&lt;", f), p++;
        else if (*p == '>') fputs("&gt;", f), p++;
        else if (*p == '"') fputs("&quot;", f), p++;
        else if (*p == '\'') fputs("&#39;", f), p++;
        else if (*p < 0x20 && *p != '\n' && *p != '\t') p++;
        else if (*p == 0x7f) p++;
        else if (*p < 0x80) fputc(*p++, f);
        else {
            int n = errmsg_utf8_len(p);
            if (n == 0) fprintf(f, "&#x%x;", *p++);
            else { fwrite(p, 1, (size_t) n, f); p += n; }
        }
    }
}

/* A number cell: V (x SCALE) written for people, with the half-width CI of its interval when known. */
static void numcell_s(FILE *f, double v, double ci, double scale)
{
    char b[64];
    if (isnan(v)) { fputs("<td>-</td>", f); return; }
    fprintf(f, "<td>%s", design_fmt(b, sizeof b, v * scale));
    if (!isnan(ci)) fprintf(f, " <small>&plusmn;%s</small>", design_fmt(b, sizeof b, ci * scale));
    fputs("</td>", f);
}

static void numcell(FILE *f, double v, double ci) { numcell_s(f, v, ci, 1); }

/* The colour of design I on every picture and swatch of the page: the
 * Okabe-Ito palette, told apart by colour-blind readers. */
static const char *const DESIGN_COLORS[DESIGN_MAX] = { "#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                       "#E69F00", "#56B4E9", "#000000", "#999999" };

/* Design D's title as page text (escaped), "A: title". */
static void dname(FILE *f, const design *d)
{
    fprintf(f, "<span class=\"sw\" style=\"background:%s\"></span>%s: ", DESIGN_COLORS[d->label[0] - 'A'], d->label);
    esc(f, d->title ? d->title : d->path ? d->path : d->arg);
}

/* ---- pictures ------------------------------------------------------------- */

/* A growing string the gnuplot commands are written into. */
typedef struct mbuf {
    char *p;
    size_t n;
    FILE *f;
} mbuf;

static int mb_open(mbuf *m)
{
    m->p = NULL;
    m->n = 0;
    m->f = open_memstream(&m->p, &m->n);
    return m->f ? 0 : -1;
}

static void mb_close(mbuf *m)
{
    if (m->f) fclose(m->f);
    free(m->p);
    m->f = NULL;
    m->p = NULL;
}

/* Writes the SVG drawn from M's commands by SCRIPT, or a line saying why there is none. */
static void picture(FILE *out, mbuf *m, const char *dir, const char *script, int w, int h, int *k)
{
    fflush(m->f);
    char err[700];
    char *svg = dir ? gp_svg(m->p, m->n, dir, script, w, h, ++*k, err, sizeof err) : NULL;
    if (!dir) snprintf(err, sizeof err, "gnuplot scripts not found (set LATSIM_PLOTS)");
    if (svg) {
        fputs("<figure>", out);
        fputs(svg, out);
        fputs("</figure>\n", out);
        free(svg);
    } else {
        fputs("<p class=\"note\">No picture: ", out);
        esc(out, err);
        fputs("</p>\n", out);
    }
}

/* The CDF of METRIC over the designs, with the [slo] limits on it; TAIL: the
 * tail view instead, 1 - CDF on a log axis (P99 at 0.01, P99.9 at 0.001).
 * Each design's curve in its colour (DESIGN_COLORS). */
static void cdf_picture(FILE *out, const design *d, int n, const char *metric, const char *title, int tail,
                        const char *dir, int *k)
{
    mbuf m;
    if (mb_open(&m)) return;
    int nc = 0, col[DESIGN_MAX];
    fputs("$cdf << EOD\n", m.f);
    char names[DESIGN_MAX][400];
    for (int i = 0; i < n; i++) {
        int any = 0;
        for (size_t j = 0; j < d[i].rep.ncdf; j++) {
            const report_cdf *c = &d[i].rep.cdf[j];
            if (strcmp(c->metric, metric) || !(c->value > 0)) continue;
            if (!any && nc) fputs("\n\n", m.f);
            any = 1;
            fprintf(m.f, "%.9g %.6g\n", c->value, c->p);
        }
        double mx = report_get(&d[i].rep, "", metric, "max");
        if (any && mx > 0) fprintf(m.f, "%.9g 1\n", mx);
        if (any) {
            col[nc] = i;
            snprintf(names[nc++], sizeof names[0], "%s: %.380s", d[i].label, d[i].title ? d[i].title : d[i].arg);
        }
    }
    fputs("EOD\n$slo << EOD\n", m.f);
    int nslo = 0;
    double drawn_p[64];   /* the rows' p so far: a label below each earlier one at the same p */
    for (int i = 0; i < n; i++) {
        const slo_spec *s = d[i].sc ? scenario_slo(d[i].sc) : NULL;
        for (int t = 0; s && t < s->n; t++) {
            const slo_term *x = &s->t[t];
            if (x->kind != SLO_LATENCY || x->cls[0] || strcmp(x->metric, metric)) continue;
            double p = !strcmp(x->stat, "p50") ? 0.5 : !strcmp(x->stat, "p90") ? 0.9 : !strcmp(x->stat, "p95") ? 0.95
                     : !strcmp(x->stat, "p99") ? 0.99 : !strcmp(x->stat, "p999") ? 0.999 : NAN;
            if (isnan(p)) continue;
            /* The same limit in several designs is drawn once. */
            int dup = 0;
            for (int j = 0; j < i && !dup; j++) {
                const slo_spec *o = d[j].sc ? scenario_slo(d[j].sc) : NULL;
                for (int u = 0; o && u < o->n && !dup; u++)
                    dup = o->t[u].kind == SLO_LATENCY && !o->t[u].cls[0] && !strcmp(o->t[u].key, x->key) && o->t[u].limit == x->limit;
            }
            if (dup) continue;
            /* Its label's height: at its point, or, where earlier limits sit at the same p (500 and
             * 800 ms, both P99), one step below the last of them (0.06 of the CDF; half, on the
             * tail's log axis), so that the labels do not overlap. */
            int below = 0;
            for (int u = 0; u < nslo && u < 64; u++) below += drawn_p[u] == p;
            if (nslo < 64) drawn_p[nslo] = p;
            double y = tail ? 1 - p : p, ylab = tail ? y * pow(0.5, below) : y - 0.06 * below;
            char lim[48];
            fprintf(m.f, "%.9g %.6g \"%s %s <= %s ms\" %.6g\n", x->limit, y, metric, x->stat,
                    design_fmt(lim, sizeof lim, x->limit), ylab);
            nslo++;
        }
    }
    fprintf(m.f, "EOD\nnslo = %d\nncurves = %d\ntail = %d\narray cname[%d]\narray ccol[%d]\n", nslo, nc, tail,
            nc > 0 ? nc : 1, nc > 0 ? nc : 1);
    for (int i = 0; i < nc; i++) {
        fprintf(m.f, "cname[%d] = ", i + 1);
        gp_quote(m.f, names[i]);
        fprintf(m.f, "\nccol[%d] = \"%s\"\n", i + 1, DESIGN_COLORS[col[i]]);
    }
    fputs("title_text = ", m.f);
    gp_quote(m.f, title);
    fprintf(m.f, "\nxlabel_text = '%s (ms, log scale)'\n", metric);
    if (nc == 0) {
        if (!tail) {
            fputs("<p class=\"note\">No design has a ", out);
            esc(out, metric);
            fputs(" distribution (no LLM pool, or saturated).</p>\n", out);
        }
    } else picture(out, &m, dir, "review_cdf.gp", 900, tail ? 360 : 400, k);
    mb_close(&m);
}

/* The time series of stored run ID (design D), when it recorded one. */
static void ts_picture(FILE *out, const design *d, const char *dbpath, const char *dir, int *k)
{
    char err[512];
    sqlite3 *db;
    if (store_open_readonly(dbpath, &db, err, sizeof err) != 0) return;
    sqlite3_stmt *st = NULL;
    mbuf m;
    int rows = 0, ttft = 0;
    double rmax = NAN;          /* the most replicas up */
    if (store_has_table(db, "run_timeseries") && !mb_open(&m)) {
        if (sqlite3_prepare_v2(db, "SELECT (t_start_s + t_end_s) / 120.0, e2e_p50_ms, e2e_p99_ms, ttft_p50_ms, ttft_p99_ms,"
                               " throughput_rps, replicas FROM run_timeseries WHERE run_id = ? AND scope = '' ORDER BY t_start_s",
                               -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, d->run_id);
            fputs("$ts << EOD\n", m.f);
            while (sqlite3_step(st) == SQLITE_ROW) {
                for (int c = 0; c < 7; c++) {
                    if (sqlite3_column_type(st, c) == SQLITE_NULL) fputs(c ? " NaN" : "NaN", m.f);
                    else fprintf(m.f, c ? " %.9g" : "%.9g", sqlite3_column_double(st, c));
                }
                ttft |= sqlite3_column_type(st, 3) != SQLITE_NULL;
                if (sqlite3_column_type(st, 6) != SQLITE_NULL && !(sqlite3_column_double(st, 6) <= rmax))
                    rmax = sqlite3_column_double(st, 6);
                fputc('\n', m.f);
                rows++;
            }
            fputs("EOD\n", m.f);
        }
        sqlite3_finalize(st);
        double e2e = NAN, tt = NAN;
        if (store_has_table(db, "run_slo") &&
            sqlite3_prepare_v2(db, "SELECT term, limit_value FROM run_slo WHERE run_id = ? AND class = ''", -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, d->run_id);
            while (sqlite3_step(st) == SQLITE_ROW) {
                const char *t = (const char *) sqlite3_column_text(st, 0);
                if (t && !strcmp(t, "e2e_p99_ms")) e2e = sqlite3_column_double(st, 1);
                if (t && !strcmp(t, "ttft_p99_ms")) tt = sqlite3_column_double(st, 1);
            }
        }
        sqlite3_finalize(st);
        fprintf(m.f, "has_ttft = %d\ne2e_slo = %s\nttft_slo = %s\n", ttft, "NaN", "NaN");
        if (!isnan(e2e)) fprintf(m.f, "e2e_slo = %.9g\n", e2e);
        if (!isnan(tt)) fprintf(m.f, "ttft_slo = %.9g\n", tt);
        if (!isnan(rmax)) fprintf(m.f, "replicas_max = %.9g\n", rmax);
        char title[600];
        snprintf(title, sizeof title, "%s: run %lld over time", d->label, (long long) d->run_id);
        fputs("title_text = ", m.f);
        gp_quote(m.f, title);
        fputc('\n', m.f);
        if (rows > 0) {
            fprintf(out, "<h3>%s: run %lld</h3>\n", d->label, (long long) d->run_id);
            picture(out, &m, dir, "timeseries.gp", 900, 560, k);
        }
        mb_close(&m);
    }
    store_close(db);
}

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

static void legend(FILE *out)
{
    fputs("<p class=\"note legend\"><span class=\"key better\">&#9650;better</span> <span class=\"key worse\">&#9660;worse"
          "</span> than A by the metric's direction (lower latency, cost, energy, misroutes; higher throughput, goodput, hit"
          " rates); <b>*</b>: beyond the 95&nbsp;% confidence intervals; <b>?</b>: not judged (neither design replicated:"
          " shown paler); no colour: within the intervals, or a metric that only describes; <b>n/a</b>: a change to or from"
          " 0 (e.g. an ITL of 0 where tokens come in bursts) is no percentage.</p>\n", out);
}

static void headline(FILE *out, const design *d, int n)
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
            numcell_s(out, v[i], ci[i], scale);
            if (i) diffcell(out, m[k].better, has[0], v[0], ci[0], has[i], v[i], ci[i]);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n<p class=\"note\">Mean &plusmn; half-width of the 95&nbsp;% confidence interval over the"
          " replications; a latency column in s when every design's value is 1000 ms or more.</p>\n", out);
    legend(out);
}

/* Design D's goodput when a plan or a sweep simulated it (design_goodput) as a
 * table row, or nothing. */
static void goodput_row(FILE *out, const design *d, const char *dbpath)
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
static int slo_verdicts(FILE *out, const design *d, int n, const char *dbpath)
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
                dname(out, &d[i]);
                fputs("</th><td colspan=\"7\" style=\"text-align:left\">no [slo]</td></tr>\n", out);
                break;
            }
            for (int k = 0; k < r.n; k++) {
                const slo_check *c = &r.c[k];
                int pct = c->t->kind != SLO_LATENCY;
                double f = pct ? 100 : 1;
                char v[48], l[48], mg[48];
                fputs("<tr><th>", out);
                if (k == 0) dname(out, &d[i]);
                fprintf(out, "</th><td>%s", w ? "band end" : "run");
                if (w && k == 0) fprintf(out, " <small>(step times x%.3g)</small>", d[i].bm.hi);
                fprintf(out, "</td><td class=\"%s\">%s</td><td style=\"text-align:left\">", c->met ? "met" : "missed",
                        isnan(c->value) ? "NOT MEASURED" : c->met ? "met" : "MISSED");
                if (c->t->cls[0]) { esc(out, c->t->cls); fputc('.', out); }
                esc(out, c->t->key);
                const char *u = pct ? "%" : "ms";
                fprintf(out, "</td><td>%s %s</td><td>%s %s</td><td>%s%s %s</td><td>%+.1f&nbsp;%%</td></tr>\n",
                        design_fmt(l, sizeof l, f * c->t->limit), u, design_fmt(v, sizeof v, f * c->value), u,
                        c->margin > 0 ? "+" : "", design_fmt(mg, sizeof mg, f * c->margin), u,
                        c->t->limit != 0 ? 100 * c->margin / c->t->limit : NAN);
            }
            slo_result_free(&r);
        }
        goodput_row(out, &d[i], dbpath);
    }
    fputs("</tbody></table>\n<p class=\"note\">margin = limit - value (positive: met), and as a share of the limit."
          " <i>band end</i>: the design run again with every LLM pool's step times at the pessimistic end of its cost"
          " model's 90&nbsp;% prediction band (<code>--band</code>; docs/bands.md); stored runs have none.</p>\n", out);
    return 0;
}

/* The gateway and cache quality of the designs (design_quality), each against A. */
static void quality(FILE *out, const design *d, int n)
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
        esc(out, q[k].name);
        fprintf(out, "</th><td class=\"u\">%s</td>", q[k].unit);
        for (int i = 0; i < n; i++) {
            numcell(out, q[k].v[i], NAN);
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
static void shares(FILE *out, const design *d, int n, const char *prefix, const char *of)
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
                esc(out, name);
                fprintf(out, " %.1f%%\"></span>", 100 * sh);
            }
            fputs("</div><div class=\"lg\">", out);
            for (int q = 0; q < nk; q++) {
                const char *name = rows[q]->metric + strlen(want);
                fprintf(out, "<i style=\"background:%s\"></i>", BD_COLORS[q % 7]);
                esc(out, name);
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

static int is_class(const char *s) { return !strncmp(s, REPORT_CLASS_SCOPE, strlen(REPORT_CLASS_SCOPE)); }
static int is_route(const char *s) { return !strncmp(s, REPORT_ROUTE_SCOPE, strlen(REPORT_ROUTE_SCOPE)); }
/* A pool's scope: not the system's, a class's or a route's. */
static int is_pool(const char *s) { return s[0] && !is_class(s) && !is_route(s); }

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

static void pools(FILE *out, const design *d)
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
    dname(out, d);
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
        esc(out, sc);
        fputs("</th><td>", out);
        esc(out, kind ? kind : "unknown");
        fputs("</td>", out);
        for (int c = 0; c < NC; c++) if (use[c]) numcell_s(out, report_get(r, sc, COLS[c].m, COLS[c].s), NAN, scale[c]);
        const char *cmk = report_get_text(r, sc, "cost_model.kind");
        fputs("<td>", out);
        if (cmk) {
            const char *src = report_get_text(r, sc, "cost_model.source");
            double id = report_get(r, sc, "cost_model.id", "value"), mape = report_get(r, sc, "cost_model.mape", "value");
            esc(out, cmk);
            if (!isnan(id)) fprintf(out, " %.0f", id);
            fputs(" (", out);
            esc(out, src ? src : "");
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
static int op_shares(FILE *out, const design *d)
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
        dname(out, d);
        fputs(": ", out);
        esc(out, sc);
        fputs(", time by operator</h3>\n<table class=\"opshares\"><thead><tr><th>operator</th><th>share %</th>", out);
        if (!isnan(total)) fputs("<th>time s</th>", out);
        fputs("</tr></thead><tbody>\n", out);
        for (size_t k = j; k < r->n && !strcmp(r->rows[k].scope, sc); k++) {
            const char *m = r->rows[k].metric;
            if (!is_op_share(m) || strcmp(r->rows[k].stat, "value") || r->rows[k].replication != r->rows[j].replication)
                continue;
            fputs("<tr><th>", out);
            esc(out, m + (m[0] == 'o' ? 9 : 10));
            fputs("</th>", out);
            numcell_s(out, r->rows[k].value, NAN, 100);
            if (!isnan(total)) numcell_s(out, r->rows[k].value * total, NAN, 1e-3);
            fputs("</tr>\n", out);
        }
        fputs("</tbody></table>\n", out);
        tables++;
    }
    return tables;
}

/* Design D's routes (the out-edges of a router; docs/metrics.md, "Per pool and
 * per route latencies"): router, target, served, E2E/TTFT/TPOT p50/p99.
 * Nothing when it has none. */
static void routes(FILE *out, const design *d)
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
    if (!columns(r, is_route, COLS, NC, use, unit, scale)) return;
    fputs("<h3>", out);
    dname(out, d);
    fputs(": routes</h3>\n<table class=\"routes\"><thead><tr><th>router</th><th>target</th>", out);
    colheads(out, COLS, NC, use, unit);
    fputs("</tr></thead><tbody>\n", out);
    const char *last = "";
    for (size_t j = 0; j < r->n; j++) {
        const char *sc = r->rows[j].scope;
        if (!is_route(sc) || !strcmp(sc, last)) continue;
        last = sc;
        const char *from = report_get_text(r, sc, "router"), *to = report_get_text(r, sc, "target");
        fputs("<tr><th>", out);
        esc(out, from ? from : "?");
        fputs("</th><th>", out);
        esc(out, to ? to : "?");
        fputs("</th>", out);
        for (int c = 0; c < NC; c++) if (use[c]) numcell_s(out, report_get(r, sc, COLS[c].m, COLS[c].s), NAN, scale[c]);
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

/* Design D's request classes ([class NAME]; compare's class sections):
 * requests, served, refused, failed and abandoned, goodput, the result
 * cache's hit rate and false hits of the class's lookups (where its requests
 * pass one), the prefix caches' hit rate of its prompt tokens (where they reach
 * an LLM pool with one), $ per 1k requests and the latency percentiles.  A column shows
 * only where some class has it.  Nothing when it has none. */
static void classes(FILE *out, const design *d)
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
    if (!columns(r, is_class, COLS, NC, use, unit, scale)) return;
    fputs("<h3>", out);
    dname(out, d);
    fputs(": classes</h3>\n<table class=\"classes\"><thead><tr><th>class</th>", out);
    colheads(out, COLS, NC, use, unit);
    fputs("</tr></thead><tbody>\n", out);
    const char *last = "";
    for (size_t j = 0; j < r->n; j++) {
        const char *sc = r->rows[j].scope;
        if (!is_class(sc) || !strcmp(sc, last)) continue;
        last = sc;
        fputs("<tr><th>", out);
        esc(out, sc + strlen(REPORT_CLASS_SCOPE));
        fputs("</th>", out);
        for (int c = 0; c < NC; c++) if (use[c]) numcell_s(out, report_get(r, sc, COLS[c].m, COLS[c].s), NAN, scale[c]);
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

/* The plan of design D's run (planstore_plan_of_run), once per plan (SEEN:
 * plan ids shown, *NSEEN of them): its target, every configuration's verdict,
 * and its simulated points by cost, the cheapest meeting one marked (the
 * frontier: every point below it misses the SLO), as a picture (plots/frontier.gp,
 * as `latsim plot PLAN` draws it; DIR the plots folder, *K the pictures so far)
 * and a table.  Returns 1 when a plan was shown, else 0. */
static int plan_section(FILE *out, const design *d, const char *dbpath, int64_t *seen, int *nseen, const char *dir, int *k)
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
            esc(out, cfg && *cfg ? cfg : "(as given)");
            fputs(chosen ? "</th><td>CHOSEN: " : "</td><td>", out);
            esc(out, kind ? kind : "");
            fputs("</td>", out);
            if (json_is_number(usd)) fprintf(out, "<td>%.2f</td>", json_number_value(usd));
            else fputs("<td>-</td>", out);
            fputs("<td style=\"text-align:left\">", out);
            esc(out, why ? why : "");
            fputs("</td></tr>\n", out);
        }
        fputs("</tbody></table>\n", out);
        json_decref(j);
    } else fputs("<p class=\"note\">The plan did not finish (no verdicts stored).</p>\n", out);
    mbuf m;
    if (mb_open(&m) == 0) {
        int rc = 1;
        if (store_open_readonly(dbpath, &db, err, sizeof err) == 0) {
            rc = plot_plan_commands(db, id, 900, 560, m.f);
            store_close(db);
        }
        if (rc == 0) picture(out, &m, dir, "frontier.gp", 900, 560, k);
        else fputs("<p class=\"note\">No frontier picture: the plan's points could not be read.</p>\n", out);
        mb_close(&m);
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
        esc(out, pts[i].role);
        fputs("</td><td style=\"text-align:left\">", out);
        esc(out, pts[i].settings);
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
    free(js);
    free(pts);
    return 1;
}

static const char *CSS =
    "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1400px}"
    "h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;margin-top:1.6em}"
    "table{border-collapse:collapse;margin:0.6em 0}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    "thead th{background:#f0f0f0}tbody th{text-align:left;font-weight:normal}td.u{text-align:left;color:#666}"
    "td.better,.key.better{background:#cfe2f3;color:#08306b;font-weight:bold}"
    "td.worse,.key.worse{background:#fdd0a2;color:#7f2704;font-weight:bold}"
    "td.better.nci,td.worse.nci{font-weight:normal;opacity:0.75}td.na,td.same{color:#666}"
    "td.met{color:#08306b}td.missed{background:#fdd0a2;color:#7f2704;font-weight:bold}.key{padding:1px 5px}"
    ".sw{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}small{color:#666}"
    ".note{color:#555;font-size:0.9em}figure{margin:0.5em 0}figure svg{width:900px;max-width:100%;height:auto}"
    ".bar{display:flex;width:520px;height:18px;border:1px solid #444}.bar span{display:block;height:100%}"
    ".lg{font-size:0.85em;text-align:left}.lg i{display:inline-block;width:10px;height:10px;margin-right:3px}"
    "table.shares td{text-align:left}pre{background:#f7f7f7;border:1px solid #ddd;padding:0.6em;overflow:auto;max-height:30em}";

static int write_page(FILE *out, const design *d, int n, const design_how *how, const char *dir)
{
    int k = 0;
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>latsim design review</title>\n"
                 "<style>%s</style>\n</head>\n<body>\n<h1>Design review</h1>\n"
                 "<p class=\"note\">Written by latsim %s.</p>\n", CSS, LATSIM_VERSION);
    fputs("<h2 id=\"designs\">Designs</h2>\n<table id=\"designs-table\"><thead><tr><th>design</th><th>description</th>"
          "<th>scenario</th><th>source</th><th>replications</th></tr></thead><tbody>\n", out);
    for (int i = 0; i < n; i++) {
        fputs("<tr><th>", out);
        dname(out, &d[i]);
        fputs("</th><td style=\"text-align:left\">", out);
        esc(out, d[i].desc ? d[i].desc : "");
        fputs("</td><td style=\"text-align:left\">", out);
        esc(out, d[i].path ? d[i].path : d[i].arg);
        if (d[i].run_id) fprintf(out, "</td><td>run %lld</td>", (long long) d[i].run_id);
        else fputs("</td><td>simulated now</td>", out);
        fprintf(out, "<td>%d</td></tr>\n", d[i].rep.replications);
    }
    fputs("</tbody></table>\n<h2 id=\"headline-title\">Headline</h2>\n", out);
    headline(out, d, n);
    if (slo_verdicts(out, d, n, how->dbpath) != 0) return -1;
    quality(out, d, n);
    fputs("<h2 id=\"cdf\">Latency distributions</h2>\n", out);
    fputs("<p class=\"note\">Each metric twice: its CDF, then its tail (1 - CDF on a log axis: the share of requests"
          " slower than x; P99 where a curve crosses 0.01, P99.9 at 0.001).  Each design keeps its colour on every"
          " picture.</p>\n", out);
    static const struct { const char *m, *title, *tail; } CDFS[] = {
        { "ttft", "TTFT: time to first token, every design", "TTFT tail: share of requests slower (1 - CDF, log scale)" },
        { "tpot", "TPOT: time per output token, every design", "TPOT tail: share of requests slower (1 - CDF, log scale)" },
        { "e2e", "E2E: end-to-end latency, every design", "E2E tail: share of requests slower (1 - CDF, log scale)" },
    };
    for (int c = 0; c < 3; c++) {
        cdf_picture(out, d, n, CDFS[c].m, CDFS[c].title, 0, dir, &k);
        cdf_picture(out, d, n, CDFS[c].m, CDFS[c].tail, 1, dir, &k);
    }
    fputs("<h2 id=\"breakdown\">Where the time goes</h2>\n", out);
    shares(out, d, n, "breakdown", "E2E");
    shares(out, d, n, "ttft_breakdown", "TTFT");
    fputs("<h2 id=\"pools\">Pools and cost models</h2>\n", out);
    for (int i = 0; i < n; i++) pools(out, &d[i]);
    for (int i = 0; i < n; i++) op_shares(out, &d[i]);
    int anyroute = 0;
    for (int i = 0; i < n; i++)
        for (size_t j = 0; j < d[i].rep.n && !anyroute; j++) anyroute = is_route(d[i].rep.rows[j].scope);
    if (anyroute) {
        fputs("<h2 id=\"routes\">Routes</h2>\n", out);
        for (int i = 0; i < n; i++) routes(out, &d[i]);
    }
    int anyclass = 0;
    for (int i = 0; i < n; i++)
        for (size_t j = 0; j < d[i].rep.n && !anyclass; j++) anyclass = is_class(d[i].rep.rows[j].scope);
    if (anyclass) {
        fputs("<h2 id=\"classes\">Request classes</h2>\n", out);
        for (int i = 0; i < n; i++) classes(out, &d[i]);
        fputs("<p class=\"note\">cache hit rate: of the class's requests that looked up a result cache, the share it"
              " answered (false hits included, as the pool's); cache false hits: answers to another question;"
              " abandoned: the share whose client stopped waiting.</p>\n", out);
    }
    int anyts = 0;
    for (int i = 0; i < n; i++) anyts |= d[i].run_id != 0;
    if (anyts) {
        fputs("<h2 id=\"timeseries\">Time series</h2>\n", out);
        long before = ftell(out);
        for (int i = 0; i < n; i++) if (d[i].run_id) ts_picture(out, &d[i], how->dbpath, dir, &k);
        if (ftell(out) == before) fputs("<p class=\"note\">No run recorded one (latsim run --timeseries).</p>\n", out);
    }
    int anyplan = 0;
    for (int i = 0; i < n; i++) anyplan |= d[i].run_id != 0;
    if (anyplan) {
        int64_t seen[DESIGN_MAX];
        int nseen = 0, shown = 0;
        mbuf m;
        if (mb_open(&m) == 0) {   /* the section only when a run comes from a plan */
            for (int i = 0; i < n; i++) shown += plan_section(m.f, &d[i], how->dbpath, seen, &nseen, dir, &k);
            fflush(m.f);
            if (shown) {
                fputs("<h2 id=\"plan\">Plan</h2>\n", out);
                fwrite(m.p, 1, m.n, out);
            }
            mb_close(&m);
        }
    }
    fputs("<h2 id=\"scenarios\">Scenarios</h2>\n", out);
    for (int i = 0; i < n; i++) {
        fputs("<h3>", out);
        dname(out, &d[i]);
        fputs(" (", out);
        esc(out, d[i].path ? d[i].path : d[i].arg);
        fputs(")</h3>\n<pre>", out);
        esc(out, d[i].text ? d[i].text : "(not stored)");
        fputs("</pre>\n", out);
    }
    fputs("</body>\n</html>\n", out);
    return ferror(out) ? -1 : 0;
}

/* ---- an exploration: `latsim report explore [ID] --html OUT.html` -------- */

/* One configuration of an exploration, over its stored seeds. */
typedef struct xconf {
    char *settings;           /* the axis values, "pool chat.tp=8; ..." (malloc'd) */
    int seeds;                /* seeds stored */
    int met;                  /* 1 when every stored seed met the SLO */
    double usd;               /* cost, $/h */
    double m;                 /* the exploration's metric, mean over the seeds, ms (NAN none) */
} xconf;

/* The stored exploration ID of DB (0: the last one) into *ID, its JSON (the
 * summary explore prints, malloc'd), grid path (malloc'd), wall time (s) and
 * simulation count.  Returns 0, or the exit status after one line. */
static int explore_load(sqlite3 *db, int64_t *id, char **json, char **path, double *wall, int *sims)
{
    sqlite3_stmt *st = NULL;
    *json = *path = NULL;
    int rc = 2;
    if (!store_has_table(db, "sweeps")) return cu_die(2, "report: the database holds no exploration (run latsim explore GRID.ini)");
    const char *q = *id ? "SELECT id, json, scenario_path, wall_s, simulations FROM sweeps WHERE kind = 'explore' AND id = ?"
                        : "SELECT id, json, scenario_path, wall_s, simulations FROM sweeps WHERE kind = 'explore' ORDER BY id DESC LIMIT 1";
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) return cu_die(1, "report: %s", sqlite3_errmsg(db));
    if (*id) sqlite3_bind_int64(st, 1, *id);
    if (sqlite3_step(st) != SQLITE_ROW) {
        if (*id) cu_die(2, "report: no exploration %lld in the database (latsim explore prints its id)", (long long) *id);
        else cu_die(2, "report: the database holds no exploration (run latsim explore GRID.ini)");
    } else if (sqlite3_column_type(st, 1) == SQLITE_NULL) {
        cu_die(2, "report: exploration %lld did not finish (latsim explore --resume completes it)", (long long) sqlite3_column_int64(st, 0));
    } else {
        *id = sqlite3_column_int64(st, 0);
        *json = strdup((const char *) sqlite3_column_text(st, 1));
        *path = strdup(sqlite3_column_text(st, 2) ? (const char *) sqlite3_column_text(st, 2) : "");
        *wall = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
        *sims = sqlite3_column_int(st, 4);
        rc = *json && *path ? 0 : cu_die(1, "out of memory");
    }
    sqlite3_finalize(st);
    if (rc) { free(*json); free(*path); *json = *path = NULL; }
    return rc;
}

/* The configurations of exploration ID with their seeds' mean of METRIC STAT
 * (a system row) into *OUT (N).  Returns N, or -1 (database or memory). */
static int explore_confs(sqlite3 *db, int64_t id, const char *metric, const char *stat, xconf **out)
{
    sqlite3_stmt *st = NULL;
    *out = NULL;
    const char *q =
        "SELECT CASE WHEN instr(p.settings, '; seed=') > 0 THEN substr(p.settings, 1, instr(p.settings, '; seed=') - 1) ELSE '' END AS conf,"
        " count(*), min(p.slo_met), avg(p.usd_per_hour), avg(s.value)"
        " FROM sweep_points p LEFT JOIN run_stats s ON s.run_id = p.run_id AND s.scope = '' AND s.metric = ?2 AND s.stat = ?3"
        " AND s.replication = -1 WHERE p.sweep_id = ?1 AND p.run_id IS NOT NULL GROUP BY conf ORDER BY min(p.idx)";
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) return -1;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, metric, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, stat, -1, SQLITE_STATIC);
    int n = 0, cap = 0, bad = 0;
    while (!bad && sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            xconf *x = realloc(*out, (size_t) cap * sizeof *x);
            if (!x) { bad = 1; break; }
            *out = x;
        }
        xconf *c = &(*out)[n];
        c->settings = strdup((const char *) sqlite3_column_text(st, 0));
        if (!c->settings) { bad = 1; break; }
        c->seeds = sqlite3_column_int(st, 1);
        c->met = sqlite3_column_int(st, 2) == 1;
        c->usd = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
        c->m = sqlite3_column_type(st, 4) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 4);
        n++;
    }
    sqlite3_finalize(st);
    if (bad) {
        for (int i = 0; i < n; i++) free((*out)[i].settings);
        free(*out);
        *out = NULL;
        return -1;
    }
    return n;
}

/* A number cell, "-" for NAN. */
static void xcell(FILE *f, double v, const char *fmt)
{
    if (isfinite(v)) {
        fputs("<td>", f);
        fprintf(f, fmt, v);
        fputs("</td>", f);
    } else fputs("<td>-</td>", f);
}

static double jnum(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}
static const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* The frontier picture: every configuration, cost against the metric. */
static void explore_picture(FILE *out, const xconf *c, int n, json_t *j, int slo_on, const char *ylabel, int64_t id,
                            const char *path, const char *dir, int *k)
{
    mbuf m;
    if (mb_open(&m)) return;
    const char *blocks[] = { "$ok", "$other" };
    for (int b = 0; b < 2; b++) {
        fprintf(m.f, "%s << EOD\n", blocks[b]);
        int any = 0;
        for (int i = 0; i < n; i++) {
            if ((c[i].met || !slo_on) != (b == 0) || !isfinite(c[i].usd) || !(c[i].m > 0)) continue;
            fprintf(m.f, "%.9g %.9g\n", c[i].usd, c[i].m);
            any = 1;
        }
        if (!any) fputs("NaN NaN\n", m.f);
        fputs("EOD\n", m.f);
    }
    fputs("$front << EOD\n", m.f);
    json_t *fr = json_object_get(j, "frontier"), *f;
    size_t i;
    int nf = 0;
    json_array_foreach(fr, i, f) {
        if (!(jnum(f, "metric_ms") > 0)) continue;
        fprintf(m.f, "%.9g %.9g\n", jnum(f, "usd_per_hour"), jnum(f, "metric_ms"));
        nf++;
    }
    if (!nf) fputs("NaN NaN\n", m.f);
    fputs("EOD\n$best << EOD\n", m.f);
    json_t *best = json_object_get(j, "best");
    int nbest = json_is_object(best) && jnum(best, "metric_ms") > 0;
    if (nbest) {
        char label[700];
        snprintf(label, sizeof label, "%s ($%.2f/h)", jstr(best, "settings"), jnum(best, "usd_per_hour"));
        fprintf(m.f, "%.9g %.9g \"", jnum(best, "usd_per_hour"), jnum(best, "metric_ms"));
        for (const char *p = label; *p; p++) if (*p != '"' && *p != '\\' && (unsigned char) *p >= 32) fputc(*p, m.f);
        fputs("\"\n", m.f);
    } else fputs("NaN NaN \"\"\n", m.f);
    fprintf(m.f, "EOD\nnbest = %d\ntitle_text = ", nbest);
    char title[1400];
    snprintf(title, sizeof title, "Cost against %s, exploration %lld: %s", ylabel, (long long) id, path);
    gp_quote(m.f, title);
    fputs("\nylabel_text = ", m.f);
    char yl[300];
    snprintf(yl, sizeof yl, "%s (ms, mean over seeds, log scale)", ylabel);
    gp_quote(m.f, yl);
    fputc('\n', m.f);
    picture(out, &m, dir, "explore.gp", 900, 480, k);
    mb_close(&m);
}

static int explore_page(FILE *out, json_t *j, const xconf *c, int n, int64_t id, const char *path, double wall, int sims,
                        const char *dir)
{
    int k = 0, slo_on = json_is_true(json_object_get(j, "slo"));
    const char *metric = jstr(j, "metric"), *objective = jstr(j, "objective");
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>latsim exploration %lld</title>\n"
                 "<style>%s</style>\n</head>\n<body>\n<h1>Exploration %lld</h1>\n"
                 "<p class=\"note\">Written by latsim %s.</p>\n", (long long) id, CSS, (long long) id, LATSIM_VERSION);
    fputs("<h2 id=\"summary\">Headline</h2>\n<table id=\"headline\"><tbody>\n<tr><th>grid</th><td style=\"text-align:left\">", out);
    esc(out, path);
    fputs("</td></tr>\n", out);
    static const char *const INTS[] = { "configurations", "seeds", "tasks", "excluded", "stored" };
    for (size_t t = 0; t < sizeof INTS / sizeof INTS[0]; t++)
        fprintf(out, "<tr><th>%s</th><td>%.0f</td></tr>\n", INTS[t], jnum(j, INTS[t]));
    fprintf(out, "<tr><th>skipped</th><td>%zu</td></tr>\n", json_array_size(json_object_get(j, "skipped")));
    fprintf(out, "<tr><th>simulations stored</th><td>%d</td></tr>\n", sims);
    fputs("<tr><th>metric</th><td>", out);
    esc(out, metric);
    fputs("</td></tr>\n<tr><th>objective</th><td>", out);
    esc(out, objective);
    fprintf(out, "</td></tr>\n<tr><th>SLO</th><td>%s</td></tr>\n", slo_on ? "on: the best meets it in every seed" : "off");
    fputs("<tr><th>wall time</th>", out);
    xcell(out, wall, "%.2f s");
    fputs("</tr>\n<tr><th>lost MPI ranks</th><td>", out);
    json_t *lost = json_object_get(j, "lost_ranks"), *v;
    size_t i;
    if (!json_array_size(lost)) fputs("none", out);
    json_array_foreach(lost, i, v) fprintf(out, "%s%lld", i ? ", " : "", (long long) json_integer_value(v));
    fputs("</td></tr>\n</tbody></table>\n", out);

    fputs("<h2 id=\"best\">Best configuration</h2>\n", out);
    json_t *best = json_object_get(j, "best");
    if (!json_is_object(best)) {
        fprintf(out, "<p>None: no configuration %s.</p>\n", slo_on ? "meets the SLO in every seed" : "was measured");
    } else {
        fputs("<table id=\"best-config\"><thead><tr><th>configuration</th><th>usd_per_hour</th><th>", out);
        esc(out, metric);
        fputs("</th><th>energy_kwh</th></tr></thead><tbody>\n<tr><th>", out);
        esc(out, jstr(best, "settings"));
        fputs("</th>", out);
        xcell(out, jnum(best, "usd_per_hour"), "%.4g");
        xcell(out, jnum(best, "metric_ms"), "%.4g");
        xcell(out, jnum(best, "energy_kwh"), "%.4g");
        fprintf(out, "</tr>\n</tbody></table>\n<p class=\"note\">Chosen by the objective: %s.</p>\n",
                !strcmp(objective, "energy") ? "lowest GPU energy" : !strcmp(objective, "p99") ? "lowest metric" : "lowest cost");
    }

    fputs("<h2 id=\"frontier\">Pareto frontier</h2>\n", out);
    const char *us = strrchr(metric, '_');
    char ylabel[200];
    snprintf(ylabel, sizeof ylabel, "%.*s", us && !strcmp(us, "_ms") ? (int) (us - metric) : (int) strlen(metric), metric);
    explore_picture(out, c, n, j, slo_on, ylabel, id, path, dir, &k);
    fputs("<table id=\"pareto\"><thead><tr><th>configuration</th><th>usd_per_hour</th><th>", out);
    esc(out, metric);
    fputs("</th><th>energy_kwh</th><th>SLO met</th></tr></thead><tbody>\n", out);
    json_t *fr = json_object_get(j, "frontier"), *f;
    json_array_foreach(fr, i, f) {
        fputs("<tr><th>", out);
        esc(out, jstr(f, "settings"));
        fputs("</th>", out);
        xcell(out, jnum(f, "usd_per_hour"), "%.4g");
        xcell(out, jnum(f, "metric_ms"), "%.4g");
        xcell(out, jnum(f, "energy_kwh"), "%.4g");
        fprintf(out, "<td>%s</td></tr>\n", json_is_true(json_object_get(f, "slo_met")) ? "yes" : "no");
    }
    if (!json_array_size(fr)) fputs("<tr><td colspan=\"5\">empty</td></tr>\n", out);
    fputs("</tbody></table>\n", out);

    fputs("<h2 id=\"configurations\">Every configuration</h2>\n<table id=\"configs\"><thead><tr><th>configuration</th>"
          "<th>seeds</th><th>usd_per_hour</th><th>", out);
    esc(out, metric);
    fputs(" (mean)</th><th>SLO met in every seed</th></tr></thead><tbody>\n", out);
    for (int x = 0; x < n; x++) {
        fputs("<tr><th>", out);
        esc(out, c[x].settings);
        fprintf(out, "</th><td>%d</td>", c[x].seeds);
        xcell(out, c[x].usd, "%.4g");
        xcell(out, c[x].m, "%.4g");
        fprintf(out, "<td>%s</td></tr>\n", c[x].met ? "yes" : "no");
    }
    fputs("</tbody></table>\n", out);
    json_t *sk = json_object_get(j, "skipped");
    if (json_array_size(sk)) {
        fputs("<h2 id=\"skipped\">Skipped configurations</h2>\n<table><thead><tr><th>configuration</th><th>reason</th></tr></thead><tbody>\n", out);
        json_array_foreach(sk, i, f) {
            fputs("<tr><th>", out);
            esc(out, jstr(f, "settings"));
            fputs("</th><td style=\"text-align:left\">", out);
            esc(out, jstr(f, "reason"));
            fputs("</td></tr>\n", out);
        }
        fputs("</tbody></table>\n", out);
    }
    char *text = NULL;
    char gerr[1400];
    FILE *g = path[0] ? infile_open(path, INFILE_MAX_SCENARIO, gerr, sizeof gerr) : NULL;
    if (g) {
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        char chunk[4096];
        size_t r;
        while (mem && (r = fread(chunk, 1, sizeof chunk, g)) > 0) fwrite(chunk, 1, r, mem);
        if (mem) fclose(mem);
        fclose(g);
    }
    fputs("<h2 id=\"grid\">Grid</h2>\n<pre>", out);
    esc(out, text ? text : "(the grid file is not readable here)");
    fputs("</pre>\n</body>\n</html>\n", out);
    free(text);
    return ferror(out) ? -1 : 0;
}

/* `latsim report explore [ID] --html OUT.html`: the page of exploration ID of
 * --db (the last one without ID).  Returns the exit status. */
static int explore_report(const cli_args *a, const report_opts *o)
{
    char err[1024];
    int64_t id = 0;
    if (a->npos > 2) return cu_die(2, "report: explore takes one exploration ID at most (see latsim report --help)");
    if (a->npos == 2 && cu_parse_id("exploration", a->pos[1], &id, err, sizeof err) != 0) return cu_die(2, "report: %s", err);
    if (cu_check_out("report", "--html", o->html, err, sizeof err) != 0) return cu_die(2, "%s", err);
    size_t hl = strlen(o->html);
    if (hl < 6 || strcasecmp(o->html + hl - 5, ".html")) return cu_die(2, "report: --html %s: the name must end in .html", o->html);
    const char *dbpath = cu_db_path(a->db);
    if (cu_check_db_path(dbpath, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (access(dbpath, F_OK) != 0) return cu_die(2, "%s: no such database (run latsim explore GRID.ini --db PATH first)", dbpath);
    sqlite3 *db;
    if (store_open_readonly(dbpath, &db, err, sizeof err) != 0) return cu_die(2, "%s", err);
    char *js = NULL, *path = NULL;
    double wall = NAN;
    int sims = 0, n = 0;
    xconf *c = NULL;
    json_t *j = NULL;
    int rc = explore_load(db, &id, &js, &path, &wall, &sims);
    if (rc) goto out;
    json_error_t je;
    if (!(j = json_loads(js, 0, &je)) || !json_is_object(j)) { rc = cu_die(1, "report: exploration %lld: its stored summary is not JSON", (long long) id); goto out; }
    /* The metric "ttft_p99_ms": row ttft, statistic p99. */
    char metric[128] = "", stat[32] = "";
    const char *mt = jstr(j, "metric"), *end = strstr(mt, "_ms"), *us = NULL;
    for (const char *p = mt; end && p < end; p++) if (*p == '_') us = p;
    if (us && (size_t) (us - mt) < sizeof metric && (size_t) (end - us - 1) < sizeof stat) {
        snprintf(metric, sizeof metric, "%.*s", (int) (us - mt), mt);
        snprintf(stat, sizeof stat, "%.*s", (int) (end - us - 1), us + 1);
    }
    if ((n = explore_confs(db, id, metric, stat, &c)) < 0) { n = 0; rc = cu_die(1, "report: %s", sqlite3_errmsg(db)); goto out; }
    char dir[4096];
    int havedir = cu_plots_dir("explore.gp", dir, sizeof dir) == 0;
    char tmp[4200];
    FILE *f = cu_open_tmp_out("report", "--html", o->html, tmp, sizeof tmp, err, sizeof err);
    if (!f) { rc = cu_die(1, "%s", err); goto out; }
    int bad = explore_page(f, j, c, n, id, path, wall, sims, havedir ? dir : NULL);
    if (cu_commit_out("report", "--html", o->html, tmp, f, bad, err, sizeof err) != 0) rc = cu_die(1, "%s", err);
    else printf("wrote %s (exploration %lld)\n", ERRMSG_SHOWN(o->html), (long long) id);
out:
    for (int i = 0; i < n; i++) free(c[i].settings);
    free(c);
    json_decref(j);
    free(js);
    free(path);
    store_close(db);
    return rc;
}

int report_main(int argc, char **argv)
{
    report_opts o = { NULL, 1, 0, 0, 0 };
    cli_args a;
    int rc = cli_parse(&CMD, argc, argv, &a, report_opt, &o);
    if (rc != CLI_GO) return rc;
    if (a.npos >= 1 && !strcmp(a.pos[0], "explore")) return explore_report(&a, &o);
    if (a.npos < 1) return cu_die(2, "report: expected one or more run IDs or scenario files (see latsim report --help)");
    if (a.npos > DESIGN_MAX) return cu_die(2, "report: at most %d designs, got %d", DESIGN_MAX, a.npos);
    char err[1024];
    if (cu_check_out("report", "--html", o.html, err, sizeof err) != 0) return cu_die(2, "%s", err);
    size_t hl = strlen(o.html);
    if (hl < 6 || strcasecmp(o.html + hl - 5, ".html")) return cu_die(2, "report: --html %s: the name must end in .html", o.html);
    const char *dbpath = cu_db_path(a.db);
    if (cu_check_db_path(dbpath, err, sizeof err) != 0) return cu_die(2, "%s", err);
    char dir[4096];
    int havedir = cu_plots_dir("review_cdf.gp", dir, sizeof dir) == 0;
    design_how how = { o.reps, o.seed, a.sets, a.nsets, o.jobs, dbpath, o.band };
    design d[DESIGN_MAX];
    memset(d, 0, sizeof d);
    int n = a.npos;
    rc = 0;
    int loaded = 0;
    for (; loaded < n && !rc; loaded++) rc = design_load(a.pos[loaded], &how, (char) ('A' + loaded), "report", &d[loaded]);
    if (rc) {
        for (int i = 0; i < loaded - 1; i++) design_free(&d[i]);
        return rc;
    }
    char tmp[4200];
    FILE *f = cu_open_tmp_out("report", "--html", o.html, tmp, sizeof tmp, err, sizeof err);
    if (!f) rc = cu_die(1, "%s", err);
    else {
        int bad = write_page(f, d, n, &how, havedir ? dir : NULL);
        if (cu_commit_out("report", "--html", o.html, tmp, f, bad, err, sizeof err) != 0) rc = cu_die(1, "%s", err);
        else printf("wrote %s\n", ERRMSG_SHOWN(o.html));
    }
    for (int i = 0; i < n; i++) design_free(&d[i]);
    return rc;
}

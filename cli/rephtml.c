/* rephtml.c -- the design review page's HTML parts: escaped text, number cells,
 * design names, the style sheet and the pictures. */
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
/* ---- HTML text ------------------------------------------------------------ */

/* Writes S as HTML text: &<>"' as entities, controls other than tab and
 * newline dropped, each byte that is not valid UTF-8 as its Latin-1 code point. */
void rh_esc(FILE *f, const char *s)
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
void rh_numcell_s(FILE *f, double v, double ci, double scale)
{
    char b[64];
    if (isnan(v)) { fputs("<td>-</td>", f); return; }
    fprintf(f, "<td>%s", design_fmt(b, sizeof b, v * scale));
    if (!isnan(ci)) fprintf(f, " <small>&plusmn;%s</small>", design_fmt(b, sizeof b, ci * scale));
    fputs("</td>", f);
}

void rh_numcell(FILE *f, double v, double ci) { rh_numcell_s(f, v, ci, 1); }

/* The colour of design I on every picture and swatch of the page: the
 * Okabe-Ito palette, told apart by colour-blind readers. */
static const char *const DESIGN_COLORS[DESIGN_MAX] = { "#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                       "#E69F00", "#56B4E9", "#000000", "#999999" };

/* Design D's title as page text (escaped), "A: title". */
void rh_dname(FILE *f, const design *d)
{
    fprintf(f, "<span class=\"sw\" style=\"background:%s\"></span>%s: ", DESIGN_COLORS[d->label[0] - 'A'], d->label);
    rh_esc(f, d->title ? d->title : d->path ? d->path : d->arg);
}

/* ---- pictures ------------------------------------------------------------- */

/* A growing string the gnuplot commands are written into. */
int rh_mb_open(mbuf *m)
{
    m->p = NULL;
    m->n = 0;
    m->f = open_memstream(&m->p, &m->n);
    return m->f ? 0 : -1;
}

void rh_mb_close(mbuf *m)
{
    if (m->f) fclose(m->f);
    free(m->p);
    m->f = NULL;
    m->p = NULL;
}

/* Writes the SVG drawn from M's commands by SCRIPT, or a line saying why there is none. */
void rh_picture(FILE *out, mbuf *m, const char *dir, const char *script, int w, int h, int *k)
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
        rh_esc(out, err);
        fputs("</p>\n", out);
    }
}

/* The CDF of METRIC over the designs, with the [slo] limits on it; TAIL: the
 * tail view instead, 1 - CDF on a log axis (P99 at 0.01, P99.9 at 0.001).
 * Each design's curve in its colour (DESIGN_COLORS). */
void rh_cdf_picture(FILE *out, const design *d, int n, const char *metric, const char *title, int tail,
                        const char *dir, int *k)
{
    mbuf m;
    if (rh_mb_open(&m)) return;
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
            rh_esc(out, metric);
            fputs(" distribution (no LLM pool, or saturated).</p>\n", out);
        }
    } else rh_picture(out, &m, dir, "review_cdf.gp", 900, tail ? 360 : 400, k);
    rh_mb_close(&m);
}

/* The time series of stored run ID (design D), when it recorded one. */
void rh_ts_picture(FILE *out, const design *d, const char *dbpath, const char *dir, int *k)
{
    char err[512];
    sqlite3 *db;
    if (store_open_readonly(dbpath, &db, err, sizeof err) != 0) return;
    sqlite3_stmt *st = NULL;
    mbuf m;
    int rows = 0, ttft = 0;
    double rmax = NAN;          /* the most replicas up */
    if (store_has_table(db, "run_timeseries") && !rh_mb_open(&m)) {
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
            rh_picture(out, &m, dir, "timeseries.gp", 900, 560, k);
        }
        rh_mb_close(&m);
    }
    store_close(db);
}


const char *CSS =
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

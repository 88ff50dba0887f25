/* slo.c -- the evaluation of a scenario's SLO terms over report rows, and
 * their table and JSON (see slo.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "engine/errmsg.h"
#include "report/report.h"   /* REPORT_CLASS_SCOPE, report_json_str */
#include "report/slo.h"

static double row(const store_stat *rows, size_t n, const char *scope, const char *metric, const char *stat)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].scope, scope) && !strcmp(rows[i].metric, metric) && !strcmp(rows[i].stat, stat))
            return rows[i].value;
    return NAN;
}

int slo_eval(const slo_spec *s, const store_stat *rows, size_t nrows, slo_result *out)
{
    memset(out, 0, sizeof *out);
    out->met = 1;
    if (s->n == 0) return 0;
    out->c = calloc((size_t) s->n, sizeof *out->c);
    if (!out->c) return -1;
    out->n = s->n;
    for (int i = 0; i < s->n; i++) {
        const slo_term *t = &s->t[i];
        double v = NAN;
        char scope[80];   /* a class's rows have scope "class:NAME" (report.h) */
        if (t->cls[0]) snprintf(scope, sizeof scope, "%s%s", REPORT_CLASS_SCOPE, t->cls);
        else scope[0] = '\0';
        if (t->kind == SLO_LATENCY) v = row(rows, nrows, scope, t->metric, t->stat);
        else if (t->kind == SLO_ERROR_RATE) {
            double req = row(rows, nrows, scope, "requests", "value");
            double failed = row(rows, nrows, scope, "failed", "value");   /* reported with fleet keys */
            double bad = row(rows, nrows, scope, "rejected", "value") + row(rows, nrows, scope, "timed_out", "value") +
                         (isnan(failed) ? 0 : failed);
            v = req > 0 ? bad / req : NAN;
        } else if (t->kind == SLO_OVER) {
            v = row(rows, nrows, scope, t->key, "value");   /* reported by the run for this term */
        } else if (t->kind == SLO_5XX_RATE || t->kind == SLO_TIMEOUT_RATE) {
            double req = row(rows, nrows, scope, "requests", "value");
            double failed = row(rows, nrows, scope, "failed", "value");   /* reported with fleet keys */
            double bad = t->kind == SLO_TIMEOUT_RATE ? row(rows, nrows, scope, "timed_out", "value")
                       : row(rows, nrows, scope, "rejected", "value") + (isnan(failed) ? 0 : failed);
            v = req > 0 ? bad / req : NAN;
        } else {
            const char *m = t->kind == SLO_POOL_MAX ? t->metric : REPORT_BUSY_SHARE;
            for (size_t k = 0; k < nrows; k++)
                if (rows[k].scope[0] && !strcmp(rows[k].metric, m) && !strcmp(rows[k].stat, "value") &&
                    (isnan(v) || rows[k].value > v))
                    v = rows[k].value;
        }
        slo_check *c = &out->c[i];
        c->t = t;
        c->value = v;
        c->margin = t->limit - v;
        c->met = v <= t->limit;
        if (!c->met) out->met = 0;
    }
    return 0;
}

void slo_result_free(slo_result *r)
{
    free(r->c);
    memset(r, 0, sizeof *r);
}

double slo_worst_margin(const slo_result *r)
{
    double w = INFINITY;
    for (int i = 0; i < r->n; i++) {
        double m = isnan(r->c[i].value) ? -INFINITY
                 : r->c[i].t->limit > 0 ? r->c[i].margin / r->c[i].t->limit : r->c[i].margin;
        if (m < w) w = m;
    }
    return w;
}

static const char *unit(const slo_term *t) { return t->kind == SLO_LATENCY ? " ms" : ""; }

void slo_table(const slo_result *r, FILE *out)
{
    if (r->n == 0) return;
    fprintf(out, "\nslo %s\n", r->met ? "MET" : "NOT MET");
    fprintf(out, "  %-24s %12s %12s %12s  %s\n", "term", "limit", "value", "margin", "met");
    for (int i = 0; i < r->n; i++) {
        const slo_check *c = &r->c[i];
        char name[140], v[40], m[40], l[40];
        if (c->t->cls[0]) snprintf(name, sizeof name, "%s.%s", c->t->cls, c->t->key);
        else snprintf(name, sizeof name, "%s", c->t->key);
        snprintf(l, sizeof l, "%.4g%s", c->t->limit, unit(c->t));
        if (isnan(c->value)) { snprintf(v, sizeof v, "-"); snprintf(m, sizeof m, "-"); }
        else {
            snprintf(v, sizeof v, "%.4g%s", c->value, unit(c->t));
            snprintf(m, sizeof m, "%+.4g%s", c->margin, unit(c->t));
        }
        fprintf(out, "  %-24s %12s %12s %12s  %s\n", ERRMSG_SHOWN(name), l, v, m,
                c->met ? "yes" : isnan(c->value) ? "NO (not measured: saturated, or not reported)" : "NO");
    }
}

static void jnum(FILE *out, double v)
{
    if (isnan(v) || isinf(v)) fputs("null", out);
    else fprintf(out, "%.6g", v);
}

void slo_json(const slo_result *r, FILE *out)
{
    fprintf(out, "{\"met\": %s, \"terms\": [", r->met ? "true" : "false");
    for (int i = 0; i < r->n; i++) {
        const slo_check *c = &r->c[i];
        fputs(i ? ", {\"term\": " : "{\"term\": ", out);
        report_json_str(out, c->t->key);
        fputs(", \"class\": ", out);
        report_json_str(out, c->t->cls);
        fputs(", \"limit\": ", out);
        jnum(out, c->t->limit);
        fputs(", \"value\": ", out);
        jnum(out, c->value);
        fputs(", \"margin\": ", out);
        jnum(out, c->margin);
        fprintf(out, ", \"met\": %s}", c->met ? "true" : "false");
    }
    fputs("]}", out);
}


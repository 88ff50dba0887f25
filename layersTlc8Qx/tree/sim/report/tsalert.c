/* tsalert.c -- the SLO alert rule over a run's time series (see tsalert.h). */
#include "report/tsalert.h"
#include "report/alert.h"
#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The time-series column a term watches, or NULL. */
static const char *column(const slo_term *t)
{
    if (t->kind != SLO_LATENCY || t->cls[0] != '\0')
        return NULL;
    if (!strcmp(t->metric, "e2e") && !strcmp(t->stat, "p99")) return "e2e_p99_ms";
    if (!strcmp(t->metric, "e2e") && !strcmp(t->stat, "p50")) return "e2e_p50_ms";
    if (!strcmp(t->metric, "ttft") && !strcmp(t->stat, "p99")) return "ttft_p99_ms";
    if (!strcmp(t->metric, "ttft") && !strcmp(t->stat, "p50")) return "ttft_p50_ms";
    return NULL;
}

int ts_alert_terms(const slo_spec *slo)
{
    int n = 0;
    for (int i = 0; i < slo->n; i++)
        n += column(&slo->t[i]) != NULL;
    return n;
}

int ts_alerts(const ts_row *rows, size_t n, const slo_spec *slo, size_t k, ts_alert **out,
              size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (n == 0 || k == 0)
        return 0;
    double *v = malloc(n * sizeof *v);
    if (v == NULL)
        return -1;
    int rc = 0;
    for (int i = 0; i < slo->n && rc == 0; i++) {
        const char *col = column(&slo->t[i]);
        if (col == NULL)
            continue;
        ts_column(rows, n, col, v);
        size_t m = alert_scan(v, n, slo->t[i].limit, k, NULL, 0);
        if (m == 0 || m == (size_t) -1)
            continue;
        alert *a = malloc(m * sizeof *a);
        ts_alert *grown = realloc(*out, (*nout + m) * sizeof **out);
        if (a == NULL || grown == NULL) {
            free(a);
            if (grown) *out = grown;
            rc = -1;
            break;
        }
        *out = grown;
        alert_scan(v, n, slo->t[i].limit, k, a, m);
        for (size_t j = 0; j < m; j++) {
            ts_alert *x = &(*out)[(*nout)++];
            memset(x, 0, sizeof *x);
            snprintf(x->series, sizeof x->series, "%s", col);
            x->limit_ms = slo->t[i].limit;
            x->since_s = rows[a[j].first].t0_s;
            x->fired_s = rows[a[j].fired].t1_s;
            x->until_s = rows[a[j].last].t1_s;
            x->open = a[j].open;
        }
        free(a);
    }
    free(v);
    if (rc != 0) {
        free(*out);
        *out = NULL;
        *nout = 0;
    }
    return rc;
}

void ts_alerts_table(const ts_alert *a, size_t n, size_t k, double interval_s, FILE *out)
{
    fprintf(out, "\nalerts (above the SLO for %zu consecutive intervals of %g s)\n", k, interval_s);
    if (n == 0) {
        fprintf(out, "  none\n");
        return;
    }
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %-12s > %g ms   above since %g s, fired at %g s, %s %g s\n", a[i].series,
                a[i].limit_ms, a[i].since_s, a[i].fired_s, a[i].open ? "still firing at the end," : "resolved at",
                a[i].until_s);
}

void ts_alerts_json(const ts_alert *a, size_t n, FILE *out)
{
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%s{\"series\": ", i ? ", " : "");
        report_json_str(out, a[i].series);
        fprintf(out, ", \"limit_ms\": %.9g, \"since_s\": %.9g, \"fired_s\": %.9g, \"until_s\": %.9g, \"open\": %s}",
                a[i].limit_ms, a[i].since_s, a[i].fired_s, a[i].until_s, a[i].open ? "true" : "false");
    }
    fputc(']', out);
}

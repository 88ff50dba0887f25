/* report.c -- a report's rows (flattening a run's results: flatten.c);
 * replication statistics; JSON and table output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include "run/breakdown.h"
#include "report/report.h"
#include "engine/errmsg.h"

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

int report_add(report *r, int rep, const char *scope, const char *metric, const char *stat, double v)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 128;
        store_stat *x = realloc(r->rows, cap * sizeof *x);
        if (!x) return -1;
        r->rows = x;
        r->cap = cap;
    }
    store_stat *s = &r->rows[r->n];
    s->replication = rep;
    s->scope = dupstr(scope);
    s->metric = dupstr(metric);
    s->stat = stat;                       /* stat names are string literals */
    s->value = v;
    s->ci95 = NAN;
    s->text = NULL;
    if (!s->scope || !s->metric) return -1;
    r->n++;
    return 0;
}

int report_add_text(report *r, int rep, const char *scope, const char *metric, const char *text)
{
    if (report_add(r, rep, scope, metric, "value", NAN)) return -1;
    r->rows[r->n - 1].text = dupstr(text);
    return r->rows[r->n - 1].text ? 0 : -1;
}

const char *const REPORT_LAT_STATS[7] = { "mean", "p50", "p90", "p95", "p99", "p999", "max" };
#define LAT_STATS REPORT_LAT_STATS

/* The probabilities of LAT_STATS[1 .. 5]. */
static const double LAT_PROBS[] = { 0.50, 0.90, 0.95, 0.99, 0.999 };

/* The index in LAT_STATS of a percentile stat (1 .. 5), else 0. */
static int percentile_index(const char *stat)
{
    for (int k = 1; k <= 5; k++)
        if (!strcmp(stat, LAT_STATS[k])) return k;
    return 0;
}

/* Row I's percentile interval over the runs USE[0 .. N-1] of RUNS, around
 * MEAN, when row I is a percentile of a latency group whose distribution each
 * of them carries: sets *CI (NAN when the runs are not enough for one:
 * *WHY = repci_enough's code) and returns 1; else returns 0.  CUR (one per
 * run of RUNS) walks the runs' dists, which come in row order; D receives
 * their pointers. */
static int percentile_ci(const report *runs, const int *use, int n, size_t i, double mean, size_t *cur,
                         const repci_dist **d, double *ci, int *why)
{
    const store_stat *row = &runs[use[0]].rows[i];
    int k = percentile_index(row->stat);
    if (k == 0 || i < (size_t) k) return 0;
    size_t g = i - (size_t) k;              /* the group's "mean" row */
    for (int u = 0; u < n; u++) {
        int j = use[u];
        const report *x = &runs[j];
        while (cur[j] < x->ndist && x->dist[cur[j]].row < g) cur[j]++;
        if (cur[j] >= x->ndist || x->dist[cur[j]].row != g || g >= x->n || i >= x->n) return 0;
        const store_stat *m = &x->rows[g];
        if (strcmp(m->stat, "mean") || strcmp(m->scope, row->scope) || strcmp(m->metric, row->metric)) return 0;
        d[u] = &x->dist[cur[j]].d;
    }
    *why = repci_enough(d, n, LAT_PROBS[k - 1]);
    *ci = *why ? NAN : repci_halfwidth(d, n, LAT_PROBS[k - 1], mean);
    return 1;
}

/* The note of an aggregate whose percentile intervals were not all given
 * (WHY: the repci_enough codes met, as bits). */
static int interval_note(report *out, unsigned why, double windows)
{
    char note[700];
    int len = snprintf(note, sizeof note, "no 95%% interval is given for a percentile");
    if (why & (1u << REPCI_FEW_TAIL))
        len += snprintf(note + len, sizeof note - (size_t) len,
                        " when a replication has fewer than %d requests beyond it (P99 needs %d requests per replication, "
                        "P99.9 %d)%s", REPCI_MIN_TAIL, REPCI_MIN_TAIL * 100, REPCI_MIN_TAIL * 1000,
                        why & (1u << REPCI_SHORT) ? ", nor" : "");
    if (why & (1u << REPCI_SHORT))
        snprintf(note + len, sizeof note - (size_t) len,
                 " when the replications span fewer relaxation times of the queues than it needs (%.0f up to P99, "
                 "%.0f for P99.9; these: %.3g on average): the tail comes in excursions about as long as a run, every "
                 "run starts short of them and an interval would miss low; run more requests per replication",
                 repci_windows_needed(0.99), repci_windows_needed(0.999), windows);
    return report_add_text(out, -1, "", "interval_note", note);
}

int report_aggregate(const report *runs, int n, report *out)
{
    memset(out, 0, sizeof *out);
    out->replications = n;
    double *v = malloc((size_t) n * sizeof *v);
    size_t *cur = calloc((size_t) n, sizeof *cur);
    const repci_dist **d = malloc((size_t) n * sizeof *d);
    int *use = malloc((size_t) n * sizeof *use), *all = malloc((size_t) n * sizeof *all);
    if (!v || !cur || !d || !use || !all) { free(v); free(cur); free(d); free(use); free(all); return -1; }
    /* The replications not called saturated: their latencies stand when some
     * others were (a transient flag of one replication does not void the
     * others' percentiles; the count is reported and the table says so). */
    int nuse = 0;
    for (int j = 0; j < n; j++) {
        all[j] = j;
        if (!(report_get(&runs[j], "", "saturated", "value") > 0)) use[nuse++] = j;
    }
    int nsat = n - nuse;
    unsigned why_all = 0;
    double wsum = 0;
    int wn = 0;
    for (size_t i = 0; i < runs[0].n; i++) {
        const store_stat *row = &runs[0].rows[i];
        if (row->text) {                    /* a name: the first run's (the scenario fixes it) */
            if (report_add_text(out, -1, row->scope, row->metric, row->text)) { free(v); free(cur); free(d); free(use); free(all); return -1; }
            continue;
        }
        int k = 0;
        for (int j = 0; j < n; j++) {
            if (i >= runs[j].n) continue;
            double x = runs[j].rows[i].value;
            if (!isnan(x)) v[k++] = x;
        }
        const int *set = all;
        int m = n;
        if (k < n && nsat > 0 && nuse > 0) {
            /* Missing in the saturated runs only: over the others. */
            int kk = 0;
            for (int u = 0; u < nuse; u++)
                if (i < runs[use[u]].n && !isnan(runs[use[u]].rows[i].value)) v[kk++] = runs[use[u]].rows[i].value;
            if (kk == nuse && kk == k) set = use, m = nuse;
        }
        double mean = NAN, ci = NAN;
        if (k == m && k > 0) {              /* a statistic missing in a run that counts stays missing */
            mean = gsl_stats_mean(v, 1, (size_t) k);
            if (k > 1) ci = gsl_cdf_tdist_Pinv(0.975, k - 1) * gsl_stats_sd(v, 1, (size_t) k) / sqrt(k);
            double pci;
            int why = 0;
            if (k > 1 && percentile_ci(runs, set, m, i, mean, cur, d, &pci, &why)) {
                ci = pci;
                if (why) {
                    why_all |= 1u << why;
                    for (int u = 0; u < m; u++)
                        if (isfinite(d[u]->windows)) wsum += d[u]->windows, wn++;
                }
            }
        }
        if ((!strcmp(row->metric, "saturated") || !strcmp(row->metric, "backlog_grew")) && k > 0) mean = gsl_stats_max(v, 1, (size_t) k);
        if (report_add(out, -1, row->scope, row->metric, row->stat, mean)) { free(v); free(cur); free(d); free(use); free(all); return -1; }
        out->rows[out->n - 1].ci95 = ci;
        if (!strcmp(row->metric, "saturated") && !row->scope[0] && nsat > 0 && nsat < n &&
            report_add(out, -1, "", "saturated_replications", "value", nsat)) { free(v); free(cur); free(d); free(use); free(all); return -1; }
    }
    free(v);
    free(cur);
    free(d);
    free(use);
    free(all);
    if (why_all && interval_note(out, why_all, wn ? wsum / wn : NAN)) return -1;
    /* CDF points: the mean quantile over the replications. */
    int same = 1;
    for (int j = 1; j < n; j++) same &= runs[j].ncdf == runs[0].ncdf;
    if (same && runs[0].ncdf > 0) {
        out->cdf = malloc(runs[0].ncdf * sizeof *out->cdf);
        if (!out->cdf) return -1;
        out->ncdf = runs[0].ncdf;
        for (size_t i = 0; i < out->ncdf; i++) {
            out->cdf[i] = runs[0].cdf[i];
            double sum = 0;
            for (int j = 0; j < n; j++) sum += runs[j].cdf[i].value;
            out->cdf[i].value = sum / n;
        }
    }
    return 0;
}

double report_get(const report *r, const char *scope, const char *metric, const char *stat)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rows[i].scope, scope) && !strcmp(r->rows[i].metric, metric) && !strcmp(r->rows[i].stat, stat))
            return r->rows[i].value;
    return NAN;
}

report report_scope(const report *r, const char *scope, size_t *from)
{
    report v = *r;
    v.n = 0;
    size_t s = *from < r->n ? *from : 0;
    for (size_t k = 0; k < r->n; k++) {
        size_t i = (s + k) % r->n;
        if (strcmp(r->rows[i].scope, scope)) continue;
        while (i > 0 && !strcmp(r->rows[i - 1].scope, scope)) i--;   /* the run's first row */
        size_t j = i + 1;
        while (j < r->n && !strcmp(r->rows[j].scope, scope)) j++;
        v.rows = r->rows + i;
        v.n = j - i;
        *from = j;
        return v;
    }
    return v;
}

const char *report_get_text(const report *r, const char *scope, const char *metric)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i].text && !strcmp(r->rows[i].scope, scope) && !strcmp(r->rows[i].metric, metric))
            return r->rows[i].text;
    return NULL;
}

/* ---- JSON ---------------------------------------------------------------- */

static int is_flag(const char *metric)
{
    return !strcmp(metric, "saturated") || !strcmp(metric, "trace_exhausted") || !strcmp(metric, "finite") ||
           !strcmp(metric, "backlog_grew");
}

/* Rows "breakdown.SET.COMPONENT" are shown as "breakdown": {SET: {COMPONENT: v}}. */
static int is_breakdown(const char *metric) { return !strncmp(metric, "breakdown.", 10); }

/* Rows "ttft_breakdown.SET.COMPONENT" likewise as "ttft_breakdown": {SET: {COMPONENT: v}}. */
static int is_ttft_breakdown(const char *metric) { return !strncmp(metric, "ttft_breakdown.", 15); }

/* An LLM pool's cost-model rows: cost_model.{kind,id,source,mape,extrapolated}. */
static int is_cost_model(const char *metric) { return !strncmp(metric, "cost_model.", 11); }

static void num(FILE *out, double v, const char *metric)
{
    if (is_flag(metric)) fputs(v > 0 ? "true" : "false", out);
    else if (isnan(v) || isinf(v)) fputs("null", out);
    else if (v == floor(v) && fabs(v) < 1e15) fprintf(out, "%.0f", v);
    else fprintf(out, "%.6g", v);
}

void report_json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *) s; *p;) {
        if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p++);
        else if (*p < 0x20 || *p == 0x7f) fprintf(out, "\\u%04x", *p++);
        else if (*p < 0x80) fputc(*p++, out);
        else {
            /* RFC 8259 text is UTF-8: a byte that is not part of a valid sequence
             * is written as the code point of the same value (Latin-1). */
            int n = errmsg_utf8_len(p);
            if (n == 0) fprintf(out, "\\u%04x", *p++);
            else { fwrite(p, 1, (size_t) n, out); p += n; }
        }
    }
    fputc('"', out);
}

/* Writes ' "KEY": {SET: {COMPONENT: value, ...}, ...}' for SCOPE's value rows named
 * KEY.SET.COMPONENT, the SETS in order (nothing when there are none); *FIRST as
 * in json_scope (0 once something is written). */
static void json_sets(FILE *out, const report *r, const char *scope, int ci, const char *key,
                      const char *const *sets, int nsets, int *first)
{
    size_t kl = strlen(key);
    int n = 0;
    for (int set = 0; set < nsets; set++) {
        size_t len = strlen(sets[set]);
        int k = 0;
        for (size_t i = 0; i < r->n; i++) {
            const store_stat *s = &r->rows[i];
            if (strcmp(s->scope, scope) || strcmp(s->stat, "value")) continue;
            if (strncmp(s->metric, key, kl) || s->metric[kl] != '.') continue;
            const char *rest = s->metric + kl + 1;
            if (strncmp(rest, sets[set], len) || rest[len] != '.') continue;
            if (n++ == 0) fprintf(out, "%s\"%s\": {", *first ? "" : ", ", key);
            if (k++ == 0) fprintf(out, "%s\"%s\": {", n > 1 ? "}, " : "", sets[set]);
            else fputs(", ", out);
            report_json_str(out, rest + len + 1);
            fputs(": ", out);
            num(out, ci ? s->ci95 : s->value, "");
        }
    }
    if (n) {
        fputs("}}", out);
        *first = 0;
    }
}

/* The members of one scope: scalars, then "latency_ms": {metric: {stat: v}}.
 * CI selects the ci95 column instead of the value. */
static void json_scope(const report *r, const char *scope, int ci, FILE *out)
{
    int first = 1;
    for (size_t i = 0; i < r->n; i++) {
        const store_stat *s = &r->rows[i];
        if (strcmp(s->scope, scope) || strcmp(s->stat, "value")) continue;
        if (ci && (is_flag(s->metric) || s->text)) continue;
        if (is_breakdown(s->metric) || is_ttft_breakdown(s->metric) || is_cost_model(s->metric)) continue;
        fprintf(out, "%s", first ? "" : ", ");
        report_json_str(out, s->metric);
        fputs(": ", out);
        if (s->text) report_json_str(out, s->text);
        else num(out, ci ? s->ci95 : s->value, ci ? "" : s->metric);
        first = 0;
    }
    const char *cmk = report_get_text(r, scope, "cost_model.kind");
    if (!ci && cmk) {
        double id = report_get(r, scope, "cost_model.id", "value");
        double mape = report_get(r, scope, "cost_model.mape", "value");
        const char *src = report_get_text(r, scope, "cost_model.source");
        fprintf(out, "%s\"cost_model\": {\"kind\": ", first ? "" : ", ");
        report_json_str(out, cmk);
        fputs(", \"id\": ", out);
        if (isnan(id)) fputs("null", out);
        else fprintf(out, "%.0f", id);
        fputs(", \"source\": ", out);
        report_json_str(out, src ? src : "");
        fputs(", \"mape\": ", out);
        num(out, mape, "");
        fprintf(out, ", \"extrapolated\": %s}", report_get(r, scope, "cost_model.extrapolated", "value") > 0 ? "true" : "false");
        /* Added later, as a key of its own: where the prediction stands and the
         * keys that reproduce its step times (docs/calibration.md). */
        const char *range = report_get_text(r, scope, "cost_model.range");
        const char *co = report_get_text(r, scope, "cost_model.coefficients");
        if (range || co) {
            fputs(", \"cost_provenance\": {\"range\": ", out);
            report_json_str(out, range ? range : "");
            fputs(", \"calibrated\": ", out);
            fputs(strcmp(cmk, "roofline") && strcmp(cmk, "linear") ? "true" : "false", out);
            fputs(", \"coefficients\": ", out);
            report_json_str(out, co ? co : "");
            fputc('}', out);
        }
        first = 0;
    }
    static const char *const BD_SETS[2] = { "all", "p99" };
    static const char *const TB_SETS[3] = { "all", "p99", "mean_ms" };
    json_sets(out, r, scope, ci, "breakdown", BD_SETS, 2, &first);
    /* "ttft_breakdown": {"all": {COMPONENT: share}, "p99": {...}, "mean_ms": {COMPONENT: ms}}. */
    json_sets(out, r, scope, ci, "ttft_breakdown", TB_SETS, 3, &first);
    {   /* "latency_ms": every scope has latency rows */
        fprintf(out, "%s\"latency_ms\": {", first ? "" : ", ");
        const char *cur = NULL;
        for (size_t i = 0; i < r->n; i++) {
            const store_stat *s = &r->rows[i];
            if (strcmp(s->scope, scope) || !strcmp(s->stat, "value")) continue;
            if (!cur || strcmp(cur, s->metric)) {
                if (cur) fputs("}, ", out);
                report_json_str(out, s->metric);
                fputs(": {", out);
                cur = s->metric;
            } else fputs(", ", out);
            report_json_str(out, s->stat);
            fputs(": ", out);
            num(out, ci ? s->ci95 : s->value, "");
        }
        if (cur) fputs("}", out);
        fputs("}", out);
    }
}

static int is_class_scope(const char *scope)
{
    return !strncmp(scope, REPORT_CLASS_SCOPE, strlen(REPORT_CLASS_SCOPE));
}

static int is_route_scope(const char *scope)
{
    return !strncmp(scope, REPORT_ROUTE_SCOPE, strlen(REPORT_ROUTE_SCOPE));
}

/* The group of a non-system scope: 0 a pool, 1 a class, 2 a route. */
static int scope_group(const char *scope)
{
    return is_class_scope(scope) ? 1 : is_route_scope(scope) ? 2 : 0;
}

/* The rows of the scope whose first row is row I, as a view of R (a report
 * sharing R's rows): the scope's run of consecutive rows, as a flattened,
 * aggregated or stored report keeps each scope's rows together.  *END gets the
 * index after the run.  Reading a scope through its view keeps the output of a
 * report of many pools linear in its rows. */
static report scope_view(const report *r, size_t i, size_t *end)
{
    report v = *r;
    size_t j = i + 1;
    while (j < r->n && !strcmp(r->rows[j].scope, r->rows[i].scope)) j++;
    v.rows = r->rows + i;
    v.n = j - i;
    *end = j;
    return v;
}

/* "pools": {...} (GROUP 0), "classes": {...} (GROUP 1, only when there are
 * class scopes) or "routes": {...} (GROUP 2, only when there are routes). */
static void json_group(const report *r, int ci, int classes, FILE *out)
{
    const char *last = "";
    int first = 1;
    size_t skip = classes == 1 ? strlen(REPORT_CLASS_SCOPE) : classes == 2 ? strlen(REPORT_ROUTE_SCOPE) : 0;
    for (size_t i = 0; i < r->n; i++) {
        const char *sc = r->rows[i].scope;
        if (!sc[0] || !strcmp(sc, last) || scope_group(sc) != classes) continue;
        if (first) fprintf(out, ", \"%s\": {", classes == 1 ? "classes" : classes == 2 ? "routes" : "pools");
        fputs(first ? "" : ", ", out);
        report_json_str(out, sc + skip);
        fputs(": {", out);
        size_t end;
        report v = scope_view(r, i, &end);
        json_scope(&v, sc, ci, out);
        fputs("}", out);
        last = sc;
        first = 0;
        i = end - 1;
    }
    if (first && !classes) fputs(", \"pools\": {", out);
    if (!first || !classes) fputs("}", out);
}

static void json_body(const report *r, int ci, FILE *out)
{
    json_scope(r, "", ci, out);
    json_group(r, ci, 0, out);
    json_group(r, ci, 1, out);
    json_group(r, ci, 2, out);
}

/* Fills ROWS (room for R->n + 14) with R's rows and, after the system's
 * "service" rows, the system latencies "network" and "overhead" where R lacks
 * them: a run without any station adding that component (no gateway kind; for
 * overhead, no LLM pool either) has 0 for every served request, so each
 * statistic is 0 where e2e has a value and null where it has none (saturated,
 * nothing served).  Returns the number of rows. */
static size_t with_components(const report *r, store_stat *rows)
{
    static const char *const PARTS[2] = { "network", "overhead" };
    size_t n = 0, after = r->n;
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rows[i].scope, "") && !strcmp(r->rows[i].metric, "service")) after = i + 1;
    for (size_t i = 0; i <= r->n; i++) {
        if (i == after)
            for (int k = 0; k < 2; k++) {
                /* R's own rows (null when saturated) stay; only absent ones are added */
                int present = 0;
                for (size_t j = 0; j < r->n && !present; j++)
                    present = !strcmp(r->rows[j].scope, "") && !strcmp(r->rows[j].metric, PARTS[k]);
                if (present) continue;
                for (int m = 0; m < 7; m++) {
                    store_stat z = { -1, "", PARTS[k], LAT_STATS[m], NAN, NAN, NULL };
                    for (size_t j = 0; j < r->n; j++) {
                        const store_stat *e = &r->rows[j];
                        if (!strcmp(e->scope, "") && !strcmp(e->metric, "e2e") && !strcmp(e->stat, LAT_STATS[m])) {
                            z.replication = e->replication;
                            z.value = isnan(e->value) ? NAN : 0;
                            z.ci95 = isnan(e->ci95) ? NAN : 0;
                        }
                    }
                    rows[n++] = z;
                }
            }
        if (i < r->n) rows[n++] = r->rows[i];
    }
    return n;
}

void report_json(const report *r, const char *extra, FILE *out)
{
    report full = *r;
    store_stat *rows = malloc((r->n + 14) * sizeof *rows);
    if (rows) {                 /* out of memory: the report as it is, without the added zeros */
        full.rows = rows;
        full.n = with_components(r, rows);
    }
    fprintf(out, "{%s%s\"replications\": %d, ", extra, extra[0] ? ", " : "", full.replications);
    json_body(&full, 0, out);
    if (full.replications > 1) {
        fputs(", \"ci95\": {", out);
        json_body(&full, 1, out);
        fputs("}", out);
    }
    fputs("}\n", out);
    free(rows);
}

/* ---- table --------------------------------------------------------------- */

/* Columns S takes on a terminal: UTF-8 continuation bytes take none ("±" is
 * two bytes, one column). */
static int display_width(const char *s)
{
    int w = 0;
    for (; *s; s++) w += ((unsigned char) *s & 0xC0) != 0x80;
    return w;
}

/* Prints S right-aligned (LEFT: left-aligned) in W display columns. */
static void pad(FILE *out, const char *s, int w, int left)
{
    int n = display_width(s);
    if (left) fputs(s, out);
    for (; n < w; n++) fputc(' ', out);
    if (!left) fputs(s, out);
}

/* One latency cell: the value, or (HALF) "±" and its confidence half-width. */
static void cell(FILE *out, double v, double ci, int half)
{
    char b[64];
    if (half) snprintf(b, sizeof b, isnan(ci) ? "" : "±%.2g", ci);
    else if (isnan(v)) snprintf(b, sizeof b, "-");
    else snprintf(b, sizeof b, "%.4g", v);
    fputc(' ', out);
    pad(out, b, 12, 0);
}

/* Rows of latency statistics; with replications, each row of means is followed
 * by a row of the half-widths of their 95 % intervals, in the same columns. */
static void latency_table(const report *r, const char *scope, FILE *out)
{
    fprintf(out, "  %-10s", "ms");
    for (int i = 0; i < 7; i++) fprintf(out, " %12s", LAT_STATS[i]);
    fputc('\n', out);
    for (size_t i = 0; i < r->n;) {
        const store_stat *s = &r->rows[i];
        if (strcmp(s->scope, scope) || !strcmp(s->stat, "value")) { i++; continue; }
        size_t j = i;          /* the metric's rows are [i, j) */
        while (j < r->n && !strcmp(r->rows[j].scope, scope) && !strcmp(r->rows[j].metric, s->metric) &&
               strcmp(r->rows[j].stat, "value"))
            j++;
        for (int half = 0; half <= (r->replications > 1); half++) {
            int any = 0;
            for (size_t k = i; k < j; k++) any |= !isnan(r->rows[k].ci95);
            if (half && !any) break;
            fprintf(out, "  %-10s", half ? "" : ERRMSG_SHOWN(s->metric));
            for (size_t k = i; k < j; k++) cell(out, r->rows[k].value, r->rows[k].ci95, half);
            fputc('\n', out);
        }
        i = j;
    }
}

/* "share of e2e  network 1.2%/3.4%  queue ..." (all requests / those at or above the P99). */
static void breakdown_line(const report *r, FILE *out)
{
    char line[384];
    int n = snprintf(line, sizeof line, "  %-10s", "share");
    int any = 0;
    for (int k = 0; k < BD_N; k++) {
        char m[48];
        snprintf(m, sizeof m, "breakdown.all.%s", bd_name(k));
        double a = report_get(r, "", m, "value");
        snprintf(m, sizeof m, "breakdown.p99.%s", bd_name(k));
        double p = report_get(r, "", m, "value");
        if (k >= BD_KV_TRANSFER && isnan(a) && isnan(p)) continue;   /* reported only with KV transfers or loads, connections */
        if (isnan(a) || isnan(p)) return;
        any |= a > 0 || p > 0;
        n += snprintf(line + n, sizeof line - (size_t) n, "  %s %.1f%% (p99+ %.1f%%)", bd_name(k), 100 * a, 100 * p);
        if (n >= (int) sizeof line) return;
    }
    if (any) fprintf(out, "%s\n", line);
}

/* "ttft share  network 1.2% (p99+ 3.4%) ..." and "ttft ms  network 12.1 ...": the
 * TTFT breakdown's shares and the components' means, when reported. */
static void ttft_breakdown_lines(const report *r, FILE *out)
{
    char share[512], ms[512];
    int n = snprintf(share, sizeof share, "  %-10s", "ttft share");
    int m = snprintf(ms, sizeof ms, "  %-10s", "ttft ms");
    for (int k = 0; k < TB_N; k++) {
        char name[64];
        snprintf(name, sizeof name, "ttft_breakdown.all.%s", tb_name(k));
        double a = report_get(r, "", name, "value");
        snprintf(name, sizeof name, "ttft_breakdown.p99.%s", tb_name(k));
        double p = report_get(r, "", name, "value");
        snprintf(name, sizeof name, "ttft_breakdown.mean_ms.%s", tb_name(k));
        double v = report_get(r, "", name, "value");
        if (isnan(a) || isnan(p) || isnan(v)) return;
        n += snprintf(share + n, sizeof share - (size_t) n, "  %s %.1f%% (p99+ %.1f%%)", tb_name(k), 100 * a, 100 * p);
        m += snprintf(ms + m, sizeof ms - (size_t) m, "  %s %.4g", tb_name(k), v);
        if (n >= (int) sizeof share || m >= (int) sizeof ms) return;
    }
    fprintf(out, "%s\n%s\n", share, ms);
}

/* Scalars three to a line (two with replications), "name value" in aligned
 * columns as wide as the widest value, no trailing blanks. */
static void scalars(const report *r, const char *scope, FILE *out)
{
    char (*vals)[64] = malloc(r->n * sizeof *vals);
    if (!vals) return;
    int width = 18, per = r->replications > 1 ? 2 : 3;
    for (int pass = 0; pass < 2; pass++) {
        int k = 0, open = 0, pending = 0;   /* pending: blanks owed before the next cell */
        for (size_t i = 0; i < r->n; i++) {
            const store_stat *s = &r->rows[i];
            if (strcmp(s->scope, scope) || strcmp(s->stat, "value") || s->text) continue;
            if (is_breakdown(s->metric) || is_ttft_breakdown(s->metric) || is_cost_model(s->metric)) continue;
            char *b = vals[i];
            if (pass == 0) {
                if (is_flag(s->metric)) snprintf(b, 64, "%s", s->value > 0 ? "YES" : "no");
                else if (isnan(s->value)) snprintf(b, 64, "-");
                else if (r->replications > 1 && !isnan(s->ci95)) snprintf(b, 64, "%.6g ±%.3g", s->value, s->ci95);
                else if (s->value == floor(s->value) && fabs(s->value) < 1e15) snprintf(b, 64, "%.0f", s->value);
                else snprintf(b, 64, "%.6g", s->value);
                if (display_width(b) > width) width = display_width(b);
                continue;
            }
            for (; pending > 0; pending--) fputc(' ', out);
            fprintf(out, "  %-20s ", ERRMSG_SHOWN(s->metric));
            fputs(b, out);
            open = 1;
            if (++k % per == 0) {
                fputc('\n', out);
                open = 0;
            } else pending = width - display_width(b);
        }
        if (pass == 1 && open) fputc('\n', out);
    }
    free(vals);
}

void report_table(const report *r, const char *title, FILE *out)
{
    char safe[8192];
    fprintf(out, "%s\n", errmsg_field(title, safe, sizeof safe));
    if (r->replications > 1) fprintf(out, "(mean ± half-width of the 95%% confidence interval over %d replications)\n", r->replications);
    scalars(r, "", out);
    if (report_get(r, "", "trace_exhausted", "value") > 0)
        fprintf(out, "\n  NOTE: the trace ran out (loop = no): fewer requests were measured than [sim] requests.\n");
    if (report_get(r, "", "backlog_grew", "value") > 0)
        fprintf(out, "\n  NOTE: backlog grew during the replay: peak queue %.0f at t = %.4g s; every request %s and is reported.\n",
                report_get(r, "", "peak_queue", "value"), report_get(r, "", "peak_queue_at_s", "value"),
                report_get(r, "", "rejected", "value") > 0 || report_get(r, "", "timed_out", "value") > 0
                    ? "ran to its outcome" : "was served");
    double nsat = report_get(r, "", "saturated_replications", "value");
    if (nsat > 0)
        fprintf(out, "\n  SATURATED in %.0f of %d replications (offered load reaches capacity or a queue kept growing): the "
                "latencies below are over the other %.0f, which may understate the tail.\n", nsat, r->replications,
                r->replications - nsat);
    else if (report_get(r, "", "saturated", "value") > 0)
        fprintf(out, "\n  SATURATED: offered load reaches capacity or a queue kept growing; latency percentiles are not reported.\n");
    const char *inote = report_get_text(r, "", "interval_note");
    if (inote) fprintf(out, "\n  NOTE: %s.\n", inote);
    fputc('\n', out);
    latency_table(r, "", out);
    breakdown_line(r, out);
    ttft_breakdown_lines(r, out);
    const char *last = "";
    for (size_t i = 0; i < r->n; i++) {
        const char *sc = r->rows[i].scope;
        if (!sc[0] || !strcmp(sc, last)) continue;
        last = sc;
        size_t end;
        const report view = scope_view(r, i, &end), *v = &view;   /* the scope's rows (linear in all rows) */
        i = end - 1;
        if (is_class_scope(sc)) {
            fprintf(out, "\nclass %s\n", errmsg_field(sc + strlen(REPORT_CLASS_SCOPE), safe, sizeof safe));
            scalars(v, sc, out);
            latency_table(v, sc, out);
            continue;
        }
        if (is_route_scope(sc)) {
            const char *from = report_get_text(v, sc, "router"), *to = report_get_text(v, sc, "target");
            char safe2[8192];
            fprintf(out, "\nroute %s -> %s\n", errmsg_field(from ? from : "?", safe, sizeof safe),
                    errmsg_field(to ? to : "?", safe2, sizeof safe2));
            scalars(v, sc, out);
            latency_table(v, sc, out);
            continue;
        }
        const char *kind = report_get_text(v, sc, "kind");
        fprintf(out, "\npool %s (%s)%s\n", errmsg_field(sc, safe, sizeof safe), kind ? ERRMSG_SHOWN(kind) : "unknown",
                report_get(v, sc, "saturated", "value") > 0 ? "  SATURATED" : "");
        scalars(v, sc, out);
        const char *cmk = report_get_text(v, sc, "cost_model.kind");
        if (cmk) {
            double id = report_get(v, sc, "cost_model.id", "value");
            double mape = report_get(v, sc, "cost_model.mape", "value");
            const char *src = report_get_text(v, sc, "cost_model.source");
            fprintf(out, "  cost_model           %s", ERRMSG_SHOWN(cmk));
            if (!isnan(id)) fprintf(out, " %.0f", id);
            fprintf(out, " (%s", src ? src : "");
            if (!isnan(mape)) fprintf(out, ", cv_mape %.3g %%", mape);
            const char *range = report_get_text(v, sc, "cost_model.range");
            if (range && range[0]) fprintf(out, ", %s", ERRMSG_SHOWN(range));
            else if (report_get(v, sc, "cost_model.extrapolated", "value") > 0) fprintf(out, ", extrapolated");
            fprintf(out, ")\n");
            const char *co = report_get_text(v, sc, "cost_model.coefficients");
            if (co && co[0]) fprintf(out, "  cost_coefficients    %s\n", ERRMSG_SHOWN(co));
        }
        const char *kvf = report_get_text(v, sc, "kv_blocks_from");   /* an LLM pool's KV derivation */
        if (kvf && kvf[0]) fprintf(out, "  kv_blocks_from       %s\n", ERRMSG_SHOWN(kvf));
        latency_table(v, sc, out);
    }
}

void report_free(report *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free((char *) r->rows[i].scope);
        free((char *) r->rows[i].metric);
        free((char *) r->rows[i].text);
    }
    free(r->rows);
    free(r->cdf);
    free(r->dist);
    memset(r, 0, sizeof *r);
}

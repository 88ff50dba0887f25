/* plotrun.c -- the pictures of stored runs (latsim plot run): latency CDFs (one
 * run, or several overlaid), the time series, the breakdown of where the time
 * goes. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cliopt.h"
#include "cliutil.h"
#include "gp.h"
#include "commands.h"
#include "latsim/errmsg.h"
#include "latsim/report.h"
#include "latsim/store.h"
#include "plot.h"

/* ---- the plots ------------------------------------------------------------ */

int plot_cdf(sqlite3 *db, int64_t id, const char *out, const char *dir)
{
    char path[1024];
    long long seed;
    if (!run_info(db, id, path, sizeof path, &seed)) return cu_die(2, "plot: no run %lld (see latsim runs)", (long long) id);
    const char *order[] = { "ttft", "tpot", "e2e", "queue" };
    int llm = !isnan(stat_of(db, id, "", "ttft", "p50"));
    int has[4] = { 0 };
    if (!store_has_table(db, "run_cdf"))
        return cu_die(2, "plot: run %lld has no latency distribution stored (runs stored before latsim kept one)", (long long) id);
    sqlite3_stmt *st = NULL;
    int total = 0;
    for (int m = 0; m < 4; m++) {
        if ((m <= 1 && !llm) || (m == 3 && llm)) continue;
        if (sqlite3_prepare_v2(db, "SELECT count(*) FROM run_cdf WHERE run_id = ? AND metric = ?", -1, &st, NULL) != SQLITE_OK) break;
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_text(st, 2, order[m], -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) has[m] = sqlite3_column_int(st, 0) > 0;
        sqlite3_finalize(st);
        total += has[m];
    }
    if (!total)
        return cu_die(2, "plot: run %lld has no latency distribution (saturated, or stored before latsim kept one)", (long long) id);
    gp_proc g;
    if (gp_start(&g, out, dir) != 0) return 1;
    fputs("$cdf << EOD\n", g.in);
    char metrics[64] = "";
    int first = 1;
    for (int m = 0; m < 4; m++) {
        if (!has[m]) continue;
        if (!first) fputs("\n\n", g.in);
        first = 0;
        strcat(metrics, metrics[0] ? " " : "");
        strcat(metrics, order[m]);
        /* Below the first quantile: start the curve at (min-ish, 0). */
        sqlite3_prepare_v2(db, "SELECT value, p FROM run_cdf WHERE run_id = ? AND metric = ? AND value > 0 ORDER BY p", -1, &st, NULL);
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_text(st, 2, order[m], -1, SQLITE_STATIC);
        while (sqlite3_step(st) == SQLITE_ROW) fprintf(g.in, "%.9g %.6g\n", sqlite3_column_double(st, 0), sqlite3_column_double(st, 1));
        sqlite3_finalize(st);
        double mx = stat_of(db, id, "", order[m], "max");
        if (!isnan(mx) && mx > 0) fprintf(g.in, "%.9g 1\n", mx);
    }
    fputs("EOD\n$slo << EOD\n", g.in);
    int nslo = 0;
    if (store_has_table(db, "run_slo") &&
        sqlite3_prepare_v2(db, "SELECT term, limit_value FROM run_slo WHERE run_id = ? AND class = ''", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        while (sqlite3_step(st) == SQLITE_ROW) {
            char metric[64], stat[16];
            const char *term = (const char *) sqlite3_column_text(st, 0);
            if (split_term(term, metric, sizeof metric, stat, sizeof stat) != 0) continue;
            double p = stat_p(stat);
            int drawn = 0;
            for (int m = 0; m < 4; m++) drawn |= has[m] && !strcmp(order[m], metric);
            if (!drawn || isnan(p)) continue;
            char label[128];
            snprintf(label, sizeof label, "%.40s %.8s <= %g ms", metric, stat, sqlite3_column_double(st, 1));
            fprintf(g.in, "%.9g %.6g ", sqlite3_column_double(st, 1), p);
            dq(g.in, label);
            fputc('\n', g.in);
            nslo++;
        }
        sqlite3_finalize(st);
    }
    fputs("EOD\n", g.in);
    fprintf(g.in, "nslo = %d\nmetrics = '%s'\ntitle_text = ", nslo, metrics);
    char title[1400];
    snprintf(title, sizeof title, "Latency CDF, run %lld: %s (seed %lld)", (long long) id, path, seed);
    gp_quote(g.in, title);
    fputc('\n', g.in);
    return gp_finish(&g, dir, "cdf.gp", out);
}

/* ---- several runs' CDFs overlaid (plots/review_cdf.gp) --------------------- */

/* The CDFs of TTFT, TPOT and E2E (queue and E2E without an LLM pool) of the N
 * runs IDS in one picture, a curve per run and metric, with run IDS[0]'s [slo]
 * latency limits.  Returns 0 or the exit status. */
int plot_cdf_runs(sqlite3 *db, const int64_t *ids, int n, const char *out, const char *dir)
{
    static const char *const ORDER[] = { "ttft", "tpot", "e2e", "queue" };
    /* a colour per run (the Okabe-Ito palette, as the review page's designs), a dash per metric */
    static const char *const COLORS[8] = { "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999999" };
    static const int DASH[4] = { 1, 2, 4, 3 };
    char names[64][160];
    int nc = 0, col[64], dash[64];
    gp_proc g;
    for (int i = 0; i < n; i++) {
        char path[1024];
        long long seed;
        if (!run_info(db, ids[i], path, sizeof path, &seed)) return cu_die(2, "plot: no run %lld (see latsim runs)", (long long) ids[i]);
    }
    if (!store_has_table(db, "run_cdf"))
        return cu_die(2, "plot: no run has a latency distribution stored (runs stored before latsim kept one)");
    if (gp_start(&g, out, dir) != 0) return 1;
    fputs("$cdf << EOD\n", g.in);
    for (int i = 0; i < n && nc < 64; i++) {
        int llm = !isnan(stat_of(db, ids[i], "", "ttft", "p50"));
        char path[1024];
        long long seed;
        run_info(db, ids[i], path, sizeof path, &seed);
        const char *base = strrchr(path, '/');
        for (int m = 0; m < 4 && nc < 64; m++) {
            if ((m <= 1 && !llm) || (m == 3 && llm)) continue;
            sqlite3_stmt *st = NULL;
            int rows = 0;
            if (sqlite3_prepare_v2(db, "SELECT value, p FROM run_cdf WHERE run_id = ? AND metric = ? AND value > 0 ORDER BY p",
                                   -1, &st, NULL) == SQLITE_OK) {
                sqlite3_bind_int64(st, 1, ids[i]);
                sqlite3_bind_text(st, 2, ORDER[m], -1, SQLITE_STATIC);
                while (sqlite3_step(st) == SQLITE_ROW) {
                    if (!rows++ && nc) fputs("\n\n", g.in);
                    fprintf(g.in, "%.9g %.6g\n", sqlite3_column_double(st, 0), sqlite3_column_double(st, 1));
                }
            }
            sqlite3_finalize(st);
            if (!rows) continue;
            double mx = stat_of(db, ids[i], "", ORDER[m], "max");
            if (!isnan(mx) && mx > 0) fprintf(g.in, "%.9g 1\n", mx);
            col[nc] = i % 8;
            dash[nc] = DASH[m];
            snprintf(names[nc++], sizeof names[0], "%s, run %lld: %.100s", ORDER[m], (long long) ids[i], base ? base + 1 : path);
        }
    }
    fputs("EOD\n$slo << EOD\n", g.in);
    int nslo = 0;
    sqlite3_stmt *st = NULL;
    if (store_has_table(db, "run_slo") &&
        sqlite3_prepare_v2(db, "SELECT term, limit_value FROM run_slo WHERE run_id = ? AND class = ''", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, ids[0]);
        while (sqlite3_step(st) == SQLITE_ROW) {
            char metric[64], stat[16];
            if (split_term((const char *) sqlite3_column_text(st, 0), metric, sizeof metric, stat, sizeof stat) != 0) continue;
            double p = stat_p(stat);
            if (isnan(p)) continue;
            char label[128];
            snprintf(label, sizeof label, "%.40s %.8s <= %g ms", metric, stat, sqlite3_column_double(st, 1));
            fprintf(g.in, "%.9g %.6g ", sqlite3_column_double(st, 1), p);
            dq(g.in, label);
            fprintf(g.in, " %.6g\n", p);   /* its label at its point */
            nslo++;
        }
    }
    sqlite3_finalize(st);
    fprintf(g.in, "EOD\nnslo = %d\nncurves = %d\narray cname[%d]\narray ccol[%d]\narray cdt[%d]\n", nslo, nc, nc > 0 ? nc : 1,
            nc > 0 ? nc : 1, nc > 0 ? nc : 1);
    for (int i = 0; i < nc; i++) {
        fprintf(g.in, "cname[%d] = ", i + 1);
        gp_quote(g.in, names[i]);
        fprintf(g.in, "\nccol[%d] = \"%s\"\ncdt[%d] = %d\n", i + 1, COLORS[col[i]], i + 1, dash[i]);
    }
    fputs("title_text = 'Latency CDFs of several runs (a colour per run, a dash per metric)'\nxlabel_text = 'latency (ms, log scale)'\n", g.in);
    if (nc == 0) {
        char last[8];
        gp_close(&g, last, sizeof last);
        return cu_die(2, "plot: no run has a latency distribution (saturated, or stored before latsim kept one)");
    }
    return gp_finish(&g, dir, "review_cdf.gp", out);
}

static void num_or_nan(FILE *f, sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL) fputs(" NaN", f);
    else fprintf(f, " %.9g", sqlite3_column_double(st, col));
}

/* The run's time series (run_timeseries, `latsim run --timeseries/--interval`):
 * P50/P99 of E2E and TTFT, throughput and replicas up per interval, with the
 * [slo] limits on those percentiles as dashed lines. */
int plot_timeseries_run(sqlite3 *db, int64_t id, const char *out, const char *dir)
{
    char path[1024];
    long long seed;
    if (!run_info(db, id, path, sizeof path, &seed)) return cu_die(2, "plot: no run %lld (see latsim runs)", (long long) id);
    sqlite3_stmt *st = NULL;
    double replicas_max = NAN;     /* the most replicas up in an interval */
    long long n = 0;
    if (store_has_table(db, "run_timeseries") &&
        sqlite3_prepare_v2(db, "SELECT count(*) FROM run_timeseries WHERE run_id = ? AND scope = ''", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (n == 0)
        return cu_die(2, "plot: run %lld has no time series (run it with --timeseries FILE or --interval 60s)", (long long) id);
    gp_proc g;
    if (gp_start(&g, out, dir) != 0) return 1;
    fputs("$ts << EOD\n", g.in);
    if (sqlite3_prepare_v2(db, "SELECT (t_start_s + t_end_s) / 120.0, e2e_p50_ms, e2e_p99_ms, ttft_p50_ms, ttft_p99_ms,"
                           " throughput_rps, replicas FROM run_timeseries WHERE run_id = ? AND scope = ''"
                           " ORDER BY t_start_s", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        while (sqlite3_step(st) == SQLITE_ROW) {
            fprintf(g.in, "%.9g", sqlite3_column_double(st, 0));
            for (int c = 1; c <= 6; c++) num_or_nan(g.in, st, c);
            fputc('\n', g.in);
            if (sqlite3_column_type(st, 6) != SQLITE_NULL && !(sqlite3_column_double(st, 6) <= replicas_max))
                replicas_max = sqlite3_column_double(st, 6);
        }
    }
    sqlite3_finalize(st);
    st = NULL;
    double e2e_slo = NAN, ttft_slo = NAN;
    if (store_has_table(db, "run_slo") &&
        sqlite3_prepare_v2(db, "SELECT term, limit_value FROM run_slo WHERE run_id = ? AND class = ''", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *t = (const char *) sqlite3_column_text(st, 0);
            if (t && !strcmp(t, "e2e_p99_ms")) e2e_slo = sqlite3_column_double(st, 1);
            if (t && !strcmp(t, "ttft_p99_ms")) ttft_slo = sqlite3_column_double(st, 1);
        }
    }
    sqlite3_finalize(st);
    int has_ttft = !isnan(stat_of(db, id, "", "ttft", "p99")) || !isnan(stat_of(db, id, "", "ttft", "mean"));
    fprintf(g.in, "EOD\nhas_ttft = %d\n", has_ttft);
    if (!isnan(replicas_max)) fprintf(g.in, "replicas_max = %.9g\n", replicas_max);
    if (isnan(e2e_slo)) fputs("e2e_slo = NaN\n", g.in);
    else fprintf(g.in, "e2e_slo = %.9g\n", e2e_slo);
    if (isnan(ttft_slo)) fputs("ttft_slo = NaN\n", g.in);
    else fprintf(g.in, "ttft_slo = %.9g\n", ttft_slo);
    fputs("title_text = ", g.in);
    char title[1400];
    snprintf(title, sizeof title, "Over time, run %lld: %s", (long long) id, path);
    gp_quote(g.in, title);
    fputc('\n', g.in);
    return gp_finish(&g, dir, "timeseries.gp", out);
}

int plot_breakdown_run(sqlite3 *db, int64_t id, const char *out, const char *dir)
{
    char path[1024];
    long long seed;
    if (!run_info(db, id, path, sizeof path, &seed)) return cu_die(2, "plot: no run %lld (see latsim runs)", (long long) id);
    if (isnan(stat_of(db, id, "", "e2e", "mean"))) return cu_die(2, "plot: run %lld is saturated: no latencies to split", (long long) id);
    gp_proc g;
    if (gp_start(&g, out, dir) != 0) return 1;
    fputs("$bars << EOD\n", g.in);
    bar(g.in, db, id, "", "whole system");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT DISTINCT scope FROM run_stats WHERE run_id = ? AND replication = -1 AND scope <> ''"
                           " AND metric = 'queue' ORDER BY rowid", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        while (sqlite3_step(st) == SQLITE_ROW) {
            char label[200];
            const char *s = (const char *) sqlite3_column_text(st, 0);
            snprintf(label, sizeof label, "pool %s", s);
            bar(g.in, db, id, s, label);
        }
    }
    sqlite3_finalize(st);
    fprintf(g.in, "EOD\nhas_network = %d\ntitle_text = ", !isnan(stat_of(db, id, "", "network", "mean")));
    char title[1400];
    snprintf(title, sizeof title, "Mean latency breakdown, run %lld: %s", (long long) id, path);
    gp_quote(g.in, title);
    fputs("\nxlabel_text = ''\n", g.in);
    return gp_finish(&g, dir, "breakdown.gp", out);
}

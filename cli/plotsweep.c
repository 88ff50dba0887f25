/* plotsweep.c -- the pictures of stored sweeps and plans (latsim plot
 * sweep|plan): latency against load with its breakdown, and a plan's frontier
 * of cost against the SLO with labelled configurations. */
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

typedef struct spoint { int64_t run; double rate, x; char settings[512]; double cost; int met; char role[16]; } spoint;

/* The points of sweep/plan ID (ordered by rate, then index).  Returns the count, -1 on error. */
static int sweep_points(sqlite3 *db, int64_t id, spoint **out)
{
    sqlite3_stmt *st = NULL;
    *out = NULL;
    if (sqlite3_prepare_v2(db, "SELECT run_id, rate, settings, usd_per_hour, slo_met, role FROM sweep_points"
                           " WHERE sweep_id = ? AND run_id IS NOT NULL ORDER BY idx", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    int n = 0, cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            spoint *x = realloc(*out, (size_t) cap * sizeof *x);
            if (!x) { sqlite3_finalize(st); return -1; }
            *out = x;
        }
        spoint *p = &(*out)[n++];
        memset(p, 0, sizeof *p);
        p->run = sqlite3_column_int64(st, 0);
        p->rate = sqlite3_column_type(st, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 1);
        snprintf(p->settings, sizeof p->settings, "%s", sqlite3_column_text(st, 2) ? (const char *) sqlite3_column_text(st, 2) : "");
        p->cost = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
        p->met = sqlite3_column_int(st, 4);
        snprintf(p->role, sizeof p->role, "%s", sqlite3_column_text(st, 5));
        const char *eq = strrchr(p->settings, '=');
        char *end;
        p->x = eq ? strtod(eq + 1, &end) : NAN;
        if (eq && *end) p->x = NAN;
    }
    sqlite3_finalize(st);
    return n;
}

static int cmp_x(const void *a, const void *b)
{
    double x = ((const spoint *) a)->x, y = ((const spoint *) b)->x;
    return (x > y) - (x < y);
}

/* The sweep's varied key, its goodput and path. */
static int sweep_info(sqlite3 *db, int64_t id, char *kind, size_t nk, char *path, size_t np, char *args, size_t na, double *result)
{
    if (!store_has_table(db, "sweeps")) return 0;
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT kind, scenario_path, args, result FROM sweeps WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            snprintf(kind, nk, "%s", sqlite3_column_text(st, 0));
            snprintf(path, np, "%s", sqlite3_column_text(st, 1));
            snprintf(args, na, "%s", sqlite3_column_text(st, 2) ? (const char *) sqlite3_column_text(st, 2) : "");
            *result = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
            found = 1;
        }
    }
    sqlite3_finalize(st);
    return found;
}

/* Loads stored sweep or plan ID (KIND "sweep" or "plan"): its scenario path,
 * arguments and result (goodput, or best cost) into PATH, ARGS and *RESULT, its
 * points into *PTS (to free()).  Returns the count of points (> 0), or minus
 * the exit status after printing why: "no KIND ID" (2), "KIND ID has no stored
 * WHAT" (2), a database error (1). */
static int load_set(sqlite3 *db, int64_t id, const char *kind, const char *what, char *path, size_t np,
                    char *args, size_t na, double *result, spoint **pts)
{
    char k[16];
    *pts = NULL;
    /* An exploration (latsim explore) is drawn as a plan: cost against the SLO. */
    if (!sweep_info(db, id, k, sizeof k, path, np, args, na, result) || (strcmp(k, kind) && !(!strcmp(kind, "plan") && !strcmp(k, "explore"))))
        return -cu_die(2, "plot: no %s %lld", kind, (long long) id);
    int n = sweep_points(db, id, pts);
    if (n <= 0) {
        free(*pts);
        *pts = NULL;
        return -cu_die(n < 0 ? 1 : 2, "plot: %s %lld has no stored %s", kind, (long long) id, what);
    }
    return n;
}

int plot_sweep(sqlite3 *db, int64_t id, int breakdown, const char *out, const char *dir)
{
    char path[1024], args[600];
    double goodput;
    spoint *pts;
    int n = load_set(db, id, "sweep", "points", path, sizeof path, args, sizeof args, &goodput, &pts);
    if (n < 0) return -n;
    int measured = 0;
    for (int i = 0; i < n; i++) measured += !isnan(stat_of(db, pts[i].run, "", "e2e", "mean"));
    if (!measured) { free(pts); return cu_die(2, "plot: every point of sweep %lld is saturated: no latencies to draw", (long long) id); }
    /* x: the rate when it varies, else the varied value. */
    int by_rate = 0;
    for (int i = 1; i < n; i++) by_rate |= pts[i].rate != pts[0].rate;
    char key[300] = "value";
    const char *eq = strchr(pts[0].settings, '=');
    if (eq) snprintf(key, sizeof key, "%.*s", (int) (eq - pts[0].settings), pts[0].settings);
    for (int i = 0; i < n; i++) if (by_rate) pts[i].x = pts[i].rate; else if (isnan(pts[i].x)) pts[i].x = i;
    qsort(pts, (size_t) n, sizeof *pts, cmp_x);
    gp_proc g;
    if (gp_start(&g, out, dir) != 0) { free(pts); return 1; }
    char xl[400];
    if (by_rate) snprintf(xl, sizeof xl, "arrival rate (requests/s)");
    else snprintf(xl, sizeof xl, "%s", key);
    char title[1400];
    if (breakdown) {
        fputs("$bars << EOD\n", g.in);
        for (int i = 0; i < n; i++) {
            char label[64];
            snprintf(label, sizeof label, "%.4g", pts[i].x);
            bar(g.in, db, pts[i].run, "", label);
        }
        fprintf(g.in, "EOD\nhas_network = %d\ntitle_text = ", !isnan(stat_of(db, pts[0].run, "", "network", "mean")));
        snprintf(title, sizeof title, "Mean latency breakdown, sweep %lld: %s", (long long) id, path);
        gp_quote(g.in, title);
        fputs("\nxlabel_text = ", g.in);
        gp_quote(g.in, xl);
        fputc('\n', g.in);
        free(pts);
        return gp_finish(&g, dir, "breakdown.gp", out);
    }
    int llm = 0;
    for (int i = 0; i < n; i++) llm |= !isnan(stat_of(db, pts[i].run, "", "ttft", "p50"));
    /* Series: E2E (and TTFT, TPOT) P50/P99, plus every latency the SLO constrains. */
    char ser_m[10][32] = { "e2e", "e2e", "ttft", "ttft", "tpot" }, ser_s[10][8] = { "p50", "p99", "p50", "p99", "p99" };
    int nser = llm ? 5 : 2;
    sqlite3_stmt *st = NULL;
    if (store_has_table(db, "run_slo") &&
        sqlite3_prepare_v2(db, "SELECT term FROM run_slo WHERE run_id = ? AND class = ''", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, pts[0].run);
        while (sqlite3_step(st) == SQLITE_ROW && nser < 10) {
            char metric[64], stat[16];
            if (split_term((const char *) sqlite3_column_text(st, 0), metric, sizeof metric, stat, sizeof stat) != 0) continue;
            int have = 0;
            for (int k = 0; k < nser; k++) have |= !strcmp(ser_m[k], metric) && !strcmp(ser_s[k], stat);
            if (have) continue;
            snprintf(ser_m[nser], sizeof ser_m[nser], "%.31s", metric);
            snprintf(ser_s[nser], sizeof ser_s[nser], "%.7s", stat);
            nser++;
        }
        sqlite3_finalize(st);
    }
    fputs("$pts << EOD\n", g.in);
    for (int i = 0; i < n; i++) {
        fprintf(g.in, "%.9g", pts[i].x);
        for (int k = 0; k < nser; k++) {
            double v = stat_of(db, pts[i].run, "", ser_m[k], ser_s[k]);
            if (isnan(v) || v <= 0) fputs(" NaN", g.in); else fprintf(g.in, " %.9g", v);
        }
        fputc('\n', g.in);
    }
    fputs("EOD\n$slo << EOD\n", g.in);
    int nslo = 0;
    if (store_has_table(db, "run_slo") &&
        sqlite3_prepare_v2(db, "SELECT term, limit_value FROM run_slo WHERE run_id = ? AND class = ''", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, pts[0].run);
        while (sqlite3_step(st) == SQLITE_ROW) {
            char metric[64], stat[16];
            if (split_term((const char *) sqlite3_column_text(st, 0), metric, sizeof metric, stat, sizeof stat) != 0) continue;
            int drawn = 0;
            for (int k = 0; k < nser; k++) drawn |= !strcmp(ser_m[k], metric);
            if (!drawn) continue;
            char label[128];
            snprintf(label, sizeof label, "SLO %s %s %g ms", metric, stat, sqlite3_column_double(st, 1));
            fprintf(g.in, "%.9g ", sqlite3_column_double(st, 1));
            dq(g.in, label);
            fputc('\n', g.in);
            nslo++;
        }
        sqlite3_finalize(st);
    }
    fputs("EOD\n", g.in);
    fprintf(g.in, "nslo = %d\nseries = '", nslo);
    for (int k = 0; k < nser; k++) fprintf(g.in, "%s%s_%s", k ? " " : "", ser_m[k], ser_s[k]);
    /* The saturated points have no latencies: marked at their rate, not dropped. */
    int nsat = 0;
    for (int i = 0; i < n; i++) nsat += isnan(stat_of(db, pts[i].run, "", "e2e", "mean"));
    fprintf(g.in, "'\nnsat = %d\narray satx[%d]\n", nsat, nsat > 0 ? nsat : 1);
    for (int i = 0, k = 0; i < n; i++)
        if (isnan(stat_of(db, pts[i].run, "", "e2e", "mean"))) fprintf(g.in, "satx[%d] = %.9g\n", ++k, pts[i].x);
    fputs("series = series.'", g.in);     /* closed by the next line's quote: '' */
    double lo = pts[0].x, hi = pts[n - 1].x;
    if (hi <= lo) { lo -= 0.5; hi += 0.5; }
    double pad = (hi - lo) * 0.03;
    fprintf(g.in, "'\nxlo = %.9g\nxhi = %.9g\n", lo - pad, hi + pad);
    if (by_rate && !isnan(goodput)) fprintf(g.in, "goodput = %.9g\n", goodput);
    else fputs("goodput = NaN\n", g.in);
    fputs("title_text = ", g.in);
    snprintf(title, sizeof title, "Latency percentiles against load, sweep %lld: %s", (long long) id, path);
    gp_quote(g.in, title);
    fputs("\nxlabel_text = ", g.in);
    gp_quote(g.in, xl);
    fputc('\n', g.in);
    free(pts);
    return gp_finish(&g, dir, "load.gp", out);
}

/* Worst value / limit over the run's SLO terms (INFINITY when one is unmeasured). */
static double worst_ratio(sqlite3 *db, int64_t run)
{
    sqlite3_stmt *st = NULL;
    double w = NAN;
    if (sqlite3_prepare_v2(db, "SELECT value, limit_value FROM run_slo WHERE run_id = ?", -1, &st, NULL) != SQLITE_OK) return NAN;
    sqlite3_bind_int64(st, 1, run);
    while (sqlite3_step(st) == SQLITE_ROW) {
        double lim = sqlite3_column_double(st, 1);
        double r = sqlite3_column_type(st, 0) == SQLITE_NULL ? INFINITY
                 : lim > 0 ? sqlite3_column_double(st, 0) / lim : NAN;
        if (!isnan(r) && (isnan(w) || r > w)) w = r;
    }
    sqlite3_finalize(st);
    return w;
}

static int cmp_cost(const void *a, const void *b)
{
    double x = ((const spoint *) a)->cost, y = ((const spoint *) b)->cost;
    return (x > y) - (x < y);
}

/* A configuration's full name from its settings "pool llm.gpu=h100; pool
 * llm.tp=4": each pool key with its pool and value ("llm.gpu=h100 llm.tp=4";
 * with two pools both are named), the workload's rate override dropped, into B. */
static const char *config_label(const char *settings, char *b, size_t n)
{
    size_t o = 0;
    b[0] = '\0';
    for (const char *p = settings; *p && o + 1 < n;) {
        size_t len = strcspn(p, ";");
        const char *eq = memchr(p, '=', len), *k = p;
        if (!strncmp(k, "pool ", 5)) k += 5;
        if (eq && strncmp(p, "workload.", 9)) {
            int w = snprintf(b + o, n - o, "%s%.*s", o ? " " : "", (int) (p + len - k), k);
            o += w > 0 && (size_t) w < n - o ? (size_t) w : n - o - 1;
        }
        p += len;
        while (*p == ';' || *p == ' ') p++;
    }
    return b;
}

/* The frame of the frontier picture, as shares of the picture (frontier.gp
 * sets its margins at these): labels are placed in it by pixel. */
#define FR_L 0.10
#define FR_R 0.97
#define FR_B 0.20
#define FR_T 0.91

/* A label's box in pixels (y down). */
typedef struct lbox { double x0, y0, x1, y1; } lbox;

static int lbox_hit(const lbox *a, const lbox *b) { return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1; }

/* Places label TEXT (font FS pt) of the point at pixel (PX, PY) beside it,
 * right or left, above or below, where its box stays in the frame (W x H px)
 * and clear of the N boxes of PLACED; writes it as a gnuplot `set label` at
 * screen coordinates (numbered *TAG).  Returns 1 placed (its box added to
 * PLACED), 0 left off (nowhere free). */
static int place_label(FILE *f, const char *text, double fs, double px, double py, double w, double h, lbox *placed, int *n,
                       int max, int *tag, const char *colour)
{
    /* Sans: about 0.6 em per character; a line about 1.25 em high (with room). */
    double tw = 0.62 * fs * (double) strlen(text) + 4, th = 1.3 * fs + 2, gap = 5;
    static const int SIDES[4][2] = { { 1, -1 }, { 1, 1 }, { -1, -1 }, { -1, 1 } };   /* right-above first */
    for (int k = 0; k < 4 && *n < max; k++) {
        int sx = SIDES[k][0], sy = SIDES[k][1];
        lbox b;
        b.x0 = sx > 0 ? px + gap : px - gap - tw;
        b.x1 = b.x0 + tw;
        b.y0 = sy < 0 ? py - gap - th : py + gap;
        b.y1 = b.y0 + th;
        if (b.x0 < FR_L * w + 2 || b.x1 > FR_R * w - 2 || b.y0 < (1 - FR_T) * h + 2 || b.y1 > (1 - FR_B) * h - 2) continue;
        int clear = 1;
        for (int i = 0; i < *n && clear; i++) clear = !lbox_hit(&b, &placed[i]);
        if (!clear) continue;
        placed[(*n)++] = b;
        /* gnuplot centres a label vertically on its position */
        fprintf(f, "set label %d ", ++*tag);
        gp_quote(f, text);
        fprintf(f, " at screen %.6f, screen %.6f left font \",%g\" tc rgb \"%s\" noenhanced front\n", (b.x0 + 2) / w,
                1 - (b.y0 + b.y1) / 2 / h, fs, colour);
        return 1;
    }
    return 0;
}

/* The point that stands for the configuration of point I among the N points
 * PTS (B the chosen one, -1 none): the chosen one when it is that
 * configuration, else its first point simulated at the planned rate (not a
 * goodput point), else its first. */
static int representative(const spoint *pts, int n, int b, int i)
{
    if (b >= 0 && !strcmp(pts[b].settings, pts[i].settings)) return b;
    int first = -1;
    for (int j = 0; j < n; j++) {
        if (isnan(pts[j].x) || strcmp(pts[j].settings, pts[i].settings)) continue;
        if (first < 0) first = j;
        if (strcmp(pts[j].role, "goodput")) return j;
    }
    return first;
}

/* Declared in commands.h (report.c inlines the same picture). */
int plot_plan_commands(sqlite3 *db, int64_t id, int w, int h, FILE *f)
{
    char path[1024], args[600];
    double best_cost;
    spoint *pts;
    int n = load_set(db, id, "plan", "simulations", path, sizeof path, args, sizeof args, &best_cost, &pts);
    if (n < 0) return -n;
    double ycap = 2;
    for (int i = 0; i < n; i++) {
        pts[i].x = worst_ratio(db, pts[i].run);     /* x holds the ratio here */
        if (isfinite(pts[i].x) && pts[i].x > ycap) ycap = pts[i].x;
    }
    if (ycap > 20) ycap = 20;
    double ymin = 1;
    for (int i = 0; i < n; i++) if (isfinite(pts[i].x) && pts[i].x > 0 && pts[i].x < ymin) ymin = pts[i].x;
    qsort(pts, (size_t) n, sizeof *pts, cmp_cost);
    int b = -1;
    const char *blocks[] = { "$met", "$missed" };
    for (int k = 0; k < 2; k++) {
        fprintf(f, "%s << EOD\n", blocks[k]);
        int any = 0;
        for (int i = 0; i < n; i++) {
            if (pts[i].met != (k == 0) || isnan(pts[i].x)) continue;
            fprintf(f, "%.9g %.9g\n", pts[i].cost, isfinite(pts[i].x) ? pts[i].x : ycap);
            any = 1;
        }
        if (!any) fprintf(f, "NaN NaN\n");
        fputs("EOD\n", f);
    }
    fputs("$front << EOD\n", f);
    double run_min = NAN;
    for (int i = 0; i < n; i++) {
        if (isnan(pts[i].x) || !(isnan(run_min) || pts[i].x < run_min)) continue;
        run_min = pts[i].x;
        fprintf(f, "%.9g %.9g\n", pts[i].cost, isfinite(run_min) ? run_min : ycap);
    }
    fputs("EOD\n", f);
    for (int i = 0; i < n; i++)
        if ((!strcmp(pts[i].role, "confirm") || !strcmp(pts[i].role, "explore")) && pts[i].met && fabs(pts[i].cost - best_cost) < 1e-9) { b = i; break; }
    fputs("$best << EOD\n", f);
    if (b >= 0) fprintf(f, "%.9g %.9g\n", pts[b].cost, pts[b].x);
    else fputs("NaN NaN\n", f);
    fputs("EOD\n", f);
    /* The axes' ranges, fixed here so that the labels can be placed by pixel:
     * x the costs with 4 % of room each side, y (log) from ymin to ycap. */
    double x0 = INFINITY, x1 = -INFINITY;
    for (int i = 0; i < n; i++)
        if (!isnan(pts[i].x) && isfinite(pts[i].cost)) { x0 = fmin(x0, pts[i].cost); x1 = fmax(x1, pts[i].cost); }
    if (!(x1 >= x0)) x0 = 0, x1 = 1;
    double pad = x1 > x0 ? 0.04 * (x1 - x0) : 1;
    x0 -= pad;
    x1 += pad;
    double y0 = ymin * 0.8, y1 = ycap * 1.15;
    fprintf(f, "xmin = %.9g\nxmax = %.9g\nfr_l = %g\nfr_r = %g\nfr_b = %g\nfr_t = %g\n", x0, x1, FR_L, FR_R, FR_B, FR_T);
    /* The labels: the chosen configuration first (with its cost), then each
     * other configuration once (at its point at the planned rate), by cost;
     * one that has no free place beside its point is left off (the page's
     * table and `latsim plan` list every configuration). */
    lbox placed[400];
    int np = 0, tag = 10, shown = 0, left = 0;
    double lx = (FR_L + 0.01) * w, ly = (1 - FR_T) * h;   /* the "SLO" label at graph 0.01, first 1 */
    double sy = (1 - FR_B - (FR_T - FR_B) * (log(1) - log(y0)) / (log(y1) - log(y0))) * h;
    placed[np++] = (lbox) { lx - 2, sy - 22, lx + 30, sy + 2 };
    (void) ly;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            if ((pass == 0) != (i == b) || isnan(pts[i].x)) continue;
            /* the same configuration at another rate (goodput) or seed: labelled once, at its representative */
            if (representative(pts, n, b, i) != i) continue;
            double yv = isfinite(pts[i].x) && pts[i].x < ycap ? pts[i].x : ycap;
            double px = (FR_L + (FR_R - FR_L) * (pts[i].cost - x0) / (x1 - x0)) * w;
            double py = (1 - FR_B - (FR_T - FR_B) * (log(yv) - log(y0)) / (log(y1) - log(y0))) * h;
            char lab[600];
            config_label(pts[i].settings, lab, sizeof lab);
            if (i == b) {
                char with[700];
                snprintf(with, sizeof with, "chosen: %s ($%.2f/h)", lab[0] ? lab : "(as given)", pts[i].cost);
                shown += place_label(f, with, 10, px, py, w, h, placed, &np, 400, &tag, "#000000");
            } else if (place_label(f, lab[0] ? lab : "(as given)", 7, px, py, w, h, placed, &np, 400, &tag, "#555555")) shown++;
            else left++;
        }
    fprintf(f, "labels_left_off = %d\n", left);
    fprintf(f, "ycap = %.9g\nymin = %.9g\ntitle_text = ", ycap, ymin * 0.8);
    char title[1800];
    snprintf(title, sizeof title, "Cost against SLO, plan %lld: %s (%s)", (long long) id, path, args);
    gp_quote(f, title);
    fputc('\n', f);
    free(pts);
    return 0;
}

int plot_plan(sqlite3 *db, int64_t id, const char *out, const char *dir)
{
    /* The commands first (the plan's errors before gnuplot starts), then gnuplot. */
    char *cmds = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&cmds, &len);
    if (!m) return cu_die(1, "plot: %s", strerror(errno));
    int rc = plot_plan_commands(db, id, 1000, 650, m);
    fclose(m);
    gp_proc g;
    if (rc == 0 && gp_start(&g, out, dir) != 0) rc = 1;
    if (rc) {
        free(cmds);
        return rc;
    }
    fwrite(cmds, 1, len, g.in);
    free(cmds);
    return gp_finish(&g, dir, "frontier.gp", out);
}

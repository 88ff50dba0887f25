/* repexplore.c -- `latsim report explore [ID] --html OUT.html`: the page of a
 * stored exploration (latsim explore): headline, the frontier picture, the best
 * configuration, the Pareto set, every configuration, the skipped ones. */
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
#include "repexplore.h"
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

/* A frontier point P's cells after its row's opening <th>: its settings (the
 * row's head), $ per hour, metric and energy. */
static void point_cells(FILE *out, json_t *p)
{
    rh_esc(out, jstr(p, "settings"));
    fputs("</th>", out);
    xcell(out, jnum(p, "usd_per_hour"), "%.4g");
    xcell(out, jnum(p, "metric_ms"), "%.4g");
    xcell(out, jnum(p, "energy_kwh"), "%.4g");
}

/* The frontier picture: every configuration, cost against the metric. */
static void explore_picture(FILE *out, const xconf *c, int n, json_t *j, int slo_on, const char *ylabel, int64_t id,
                            const char *path, const char *dir, int *k)
{
    mbuf m;
    if (rh_mb_open(&m)) return;
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
    rh_picture(out, &m, dir, "explore.gp", 900, 480, k);
    rh_mb_close(&m);
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
    rh_esc(out, path);
    fputs("</td></tr>\n", out);
    static const char *const INTS[] = { "configurations", "seeds", "tasks", "excluded", "stored" };
    for (size_t t = 0; t < sizeof INTS / sizeof INTS[0]; t++)
        fprintf(out, "<tr><th>%s</th><td>%.0f</td></tr>\n", INTS[t], jnum(j, INTS[t]));
    fprintf(out, "<tr><th>skipped</th><td>%zu</td></tr>\n", json_array_size(json_object_get(j, "skipped")));
    fprintf(out, "<tr><th>simulations stored</th><td>%d</td></tr>\n", sims);
    fputs("<tr><th>metric</th><td>", out);
    rh_esc(out, metric);
    fputs("</td></tr>\n<tr><th>objective</th><td>", out);
    rh_esc(out, objective);
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
        rh_esc(out, metric);
        fputs("</th><th>energy_kwh</th></tr></thead><tbody>\n<tr><th>", out);
        point_cells(out, best);
        fprintf(out, "</tr>\n</tbody></table>\n<p class=\"note\">Chosen by the objective: %s.</p>\n",
                !strcmp(objective, "energy") ? "lowest GPU energy" : !strcmp(objective, "p99") ? "lowest metric" : "lowest cost");
    }

    fputs("<h2 id=\"frontier\">Pareto frontier</h2>\n", out);
    const char *us = strrchr(metric, '_');
    char ylabel[200];
    snprintf(ylabel, sizeof ylabel, "%.*s", us && !strcmp(us, "_ms") ? (int) (us - metric) : (int) strlen(metric), metric);
    explore_picture(out, c, n, j, slo_on, ylabel, id, path, dir, &k);
    fputs("<table id=\"pareto\"><thead><tr><th>configuration</th><th>usd_per_hour</th><th>", out);
    rh_esc(out, metric);
    fputs("</th><th>energy_kwh</th><th>SLO met</th></tr></thead><tbody>\n", out);
    json_t *fr = json_object_get(j, "frontier"), *f;
    json_array_foreach(fr, i, f) {
        fputs("<tr><th>", out);
        point_cells(out, f);
        fprintf(out, "<td>%s</td></tr>\n", json_is_true(json_object_get(f, "slo_met")) ? "yes" : "no");
    }
    if (!json_array_size(fr)) fputs("<tr><td colspan=\"5\">empty</td></tr>\n", out);
    fputs("</tbody></table>\n", out);

    fputs("<h2 id=\"configurations\">Every configuration</h2>\n<table id=\"configs\"><thead><tr><th>configuration</th>"
          "<th>seeds</th><th>usd_per_hour</th><th>", out);
    rh_esc(out, metric);
    fputs(" (mean)</th><th>SLO met in every seed</th></tr></thead><tbody>\n", out);
    for (int x = 0; x < n; x++) {
        fputs("<tr><th>", out);
        rh_esc(out, c[x].settings);
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
            rh_esc(out, jstr(f, "settings"));
            fputs("</th><td style=\"text-align:left\">", out);
            rh_esc(out, jstr(f, "reason"));
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
    rh_esc(out, text ? text : "(the grid file is not readable here)");
    fputs("</pre>\n</body>\n</html>\n", out);
    free(text);
    return ferror(out) ? -1 : 0;
}

/* `latsim report explore [ID] --html OUT.html`: the page of exploration ID of
 * --db (the last one without ID).  Returns the exit status. */
int explore_report(const cli_args *a, const report_opts *o)
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

/* plot.c -- `latsim plot [run|sweep|plan] ID [--kind K] [--out FILE.png|.svg]`:
 * pictures of stored results drawn by gnuplot.
 *
 * latsim reads what it needs from the database, starts gnuplot as a child
 * process (fork + exec, no shell) and writes to its standard input: the
 * terminal (by the output's extension), the data as inline datablocks, a few
 * variables, and `load` of a script in plots/ (plots/README.md).  Text from
 * user data (scenario paths, settings) is passed as single-quoted gnuplot
 * strings with quotes doubled, and drawn with `noenhanced`.
 * Kinds: run -> cdf (default), breakdown; sweep -> load (default), breakdown;
 * plan -> frontier.
 *
 * This file: the options, gnuplot's start and finish, the reads of stored
 * statistics and the command; the pictures of runs are plotrun.c's, those of
 * sweeps and plans plotsweep.c's (plot.h).
 */
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

enum { O_KIND = 1, O_OUT };

static const cli_opt OPTS[] = {
    { "kind", O_KIND, "cdf|breakdown|timeseries|load|frontier", "what to draw: cdf (default), breakdown or timeseries of a "
      "run; load (default) or breakdown of a sweep; frontier of a plan", 0 },
    { "out", O_OUT, "FILE.png|FILE.svg", "the picture (default latsim-KIND-ID-PLOT.png in the current directory)", 0 },
    CLI_OPT_DB,
    { NULL },
};

static const cli_cmd CMD = {
    "plot", "[run|sweep|plan|explore] ID [ID...]",
    "Draws stored results with gnuplot (scripts in plots/):\n"
    "  run ID      latency CDFs (TTFT, TPOT, E2E; queue without an LLM pool) with the SLO limits;\n"
    "  run ID ID.. the same CDFs of several runs overlaid in one picture;\n"
    "              --kind breakdown: mean latency split into network/queue/service/overhead\n"
    "              --kind timeseries: P50/P99 per interval, throughput and replicas up\n"
    "              (runs made with --timeseries or --interval)\n"
    "  sweep ID    latency percentiles against load with the SLO limits and the goodput;\n"
    "              --kind breakdown: the split per sweep point\n"
    "  plan ID     cost against the worst SLO term (value / limit) of every simulated\n"
    "              configuration, the frontier and the chosen one\n"
    "  explore ID  an exploration (latsim explore), drawn as a plan\n"
    "A bare ID is a run.  Needs gnuplot (Debian: gnuplot-nox).\n",
    "", OPTS, 0, 0,
};

/* What plot was asked: --kind and --out (NULL: not given). */
typedef struct plot_opts {
    const char *kind, *out;
} plot_opts;

/* cli_opt_fn of plot: CTX is the plot_opts. */
static int plot_opt(void *ctx, int id, const char *v)
{
    plot_opts *o = ctx;
    if (id == O_KIND) o->kind = v;
    else o->out = v;
    return 0;
}

/* ---- gnuplot -------------------------------------------------------------- */

/* Writes S as a double-quoted field of a datablock (quotes and controls dropped). */
void dq(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        if (*s != '"' && *s != '\\' && (unsigned char) *s >= 0x20) fputc(*s, f);
    fputc('"', f);
}

/* Starts gnuplot (gp.h) with its output set to OUT.  Returns 0 or -1 (printed). */
int gp_start(gp_proc *g, const char *out, const char *dir)
{
    char m[256];
    if (gp_open(g, m, sizeof m) != 0) return cu_die(1, "plot: gnuplot: %s", m), -1;
    size_t n = strlen(out);
    int svg = n > 4 && !strcasecmp(out + n - 4, ".svg");
    if (svg) fputs("set terminal svg size 1000,650 dynamic font 'Sans,12' background rgb 'white'\n", g->in);
    else fputs("set terminal pngcairo size 1000,650 font 'Sans,11'\n", g->in);
    fputs("set output ", g->in);
    gp_quote(g->in, out);
    fputs("\nset encoding utf8\n", g->in);
    fprintf(g->in, "plots_dir = ");
    gp_quote(g->in, dir);
    fputc('\n', g->in);
    return 0;
}

/* Loads SCRIPT, ends gnuplot and checks OUT was written.  Returns 0 or the exit status. */
int gp_finish(gp_proc *g, const char *dir, const char *script, const char *out)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, script);
    fputs("load ", g->in);
    gp_quote(g->in, path);
    fputs("\nunset output\nexit\n", g->in);
    char last[512];               /* gnuplot's last non-empty line of messages */
    int st = gp_close(g, last, sizeof last);
    if (st != 0)
        return cu_die(1, "plot: gnuplot failed (exit %d) drawing %s%s%s", st, out, last[0] ? ": " : "", last);
    struct stat sb;
    if (stat(out, &sb) != 0 || sb.st_size == 0) return cu_die(1, "plot: gnuplot wrote nothing to %s", out);
    printf("wrote %s\n", ERRMSG_SHOWN(out));
    return 0;
}

/* ---- data ----------------------------------------------------------------- */

double stat_of(sqlite3 *db, int64_t run, const char *scope, const char *metric, const char *stat)
{
    sqlite3_stmt *st = NULL;
    double v = NAN;
    if (sqlite3_prepare_v2(db, "SELECT value FROM run_stats WHERE run_id = ? AND replication = -1 AND scope = ?"
                           " AND metric = ? AND stat = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_text(st, 2, scope, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, metric, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, stat, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_double(st, 0);
    }
    sqlite3_finalize(st);
    return v;
}

/* The probability of a stat name (p99 -> 0.99), NAN for mean/max. */
double stat_p(const char *s)
{
    if (!strcmp(s, "p50")) return 0.5;
    if (!strcmp(s, "p90")) return 0.9;
    if (!strcmp(s, "p95")) return 0.95;
    if (!strcmp(s, "p99")) return 0.99;
    if (!strcmp(s, "p999")) return 0.999;
    return NAN;
}

/* Splits an SLO term key "ttft_p99_ms" into METRIC and STAT.  Returns 0 or -1. */
int split_term(const char *key, char *metric, size_t nm, char *stat, size_t ns)
{
    size_t n = strlen(key);
    if (n < 4 || strcmp(key + n - 3, "_ms")) return -1;
    char body[96];
    snprintf(body, sizeof body, "%.*s", (int) (n - 3 < 95 ? n - 3 : 95), key);
    char *us = strrchr(body, '_');
    if (!us) return -1;
    *us = '\0';
    snprintf(metric, nm, "%.63s", body);
    snprintf(stat, ns, "%s", us + 1);
    return 0;
}

/* The run's scenario path and seed into PATH / *SEED.  Returns 1 found, 0 not. */
int run_info(sqlite3 *db, int64_t id, char *path, size_t n, long long *seed)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT scenario_path, seed FROM runs WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            snprintf(path, n, "%s", (const char *) sqlite3_column_text(st, 0));
            *seed = sqlite3_column_int64(st, 1);
            found = 1;
        }
    }
    sqlite3_finalize(st);
    return found;
}


/* One bar: label and mean network / queue / service / overhead of SCOPE in run ID. */
void bar(FILE *f, sqlite3 *db, int64_t id, const char *scope, const char *label)
{
    const char *parts[] = { "network", "queue", "service", "overhead" };
    dq(f, label);
    for (int k = 0; k < 4; k++) {
        double v = stat_of(db, id, scope, parts[k], "mean");
        fprintf(f, " %.9g", isnan(v) ? 0 : v);
    }
    fputc('\n', f);
}

/* Writes V to F, or NaN (gnuplot leaves the point out) for a NULL column. */

int plot_main(int argc, char **argv)
{
    plot_opts o = { NULL, NULL };
    cli_args a;
    int rc = cli_parse(&CMD, argc, argv, &a, plot_opt, &o);
    if (rc != CLI_GO) return rc;
    const char *out = o.out, *kindopt = o.kind, *what = "run", *idtext = NULL;
    const char *more[64];        /* further run IDs: their CDFs overlaid (--kind cdf) */
    int nmore = 0;
    for (int i = 0; i < a.npos; i++) {
        const char *w = a.pos[i];
        if (!idtext && (!strcmp(w, "run") || !strcmp(w, "sweep") || !strcmp(w, "plan"))) what = w;
        else if (!idtext && !strcmp(w, "explore")) what = "plan";    /* an exploration is drawn as a plan */
        else if (!idtext) idtext = w;
        else if (!strcmp(what, "run") && (!kindopt || !strcmp(kindopt, "cdf")) && nmore < 63) more[nmore++] = w;
        else return cu_die(2, "plot: unexpected argument '%s'", w);
    }
    if (!idtext) return cu_die(2, "plot: expected [run|sweep|plan] ID (see latsim plot --help)");
    int64_t id;
    char iderr[300];
    if (cu_parse_id(what, idtext, &id, iderr, sizeof iderr) != 0) return cu_die(2, "plot: %s", iderr);
    const char *kind = kindopt ? kindopt : !strcmp(what, "run") ? "cdf" : !strcmp(what, "sweep") ? "load" : "frontier";
    int ok = (!strcmp(what, "run") && (!strcmp(kind, "cdf") || !strcmp(kind, "breakdown") || !strcmp(kind, "timeseries"))) ||
             (!strcmp(what, "sweep") && (!strcmp(kind, "load") || !strcmp(kind, "breakdown"))) ||
             (!strcmp(what, "plan") && !strcmp(kind, "frontier"));
    if (!ok) return cu_die(2, "plot: --kind %s does not apply to a %s (run: cdf, breakdown, timeseries; sweep: load, breakdown; plan: frontier)", kind, what);
    char dflt[128];
    if (!out) {
        snprintf(dflt, sizeof dflt, "latsim-%s-%lld-%s.png", what, (long long) id, kind);
        out = dflt;
    }
    size_t n = strlen(out);
    char err[1024];
    /* gnuplot writes the file: its path is checked here, before anything runs. */
    if (cu_check_out("plot", "--out", out, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (n < 5 || (strcasecmp(out + n - 4, ".png") && strcasecmp(out + n - 4, ".svg")))
        return cu_die(2, "plot: --out %s: the name must end in .png or .svg", out);
    const char *path = cu_db_path(a.db);
    if (cu_check_db_path(path, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (access(path, F_OK) != 0) return cu_die(2, "%s: no such database (run a scenario first, or give --db PATH)", path);
    if (!gp_on_path())
        return cu_die(1, "plot: gnuplot is not installed (or not on PATH): install it (Debian: apt-get install gnuplot-nox) to draw plots");
    char dir[4096];
    if (cu_plots_dir("cdf.gp", dir, sizeof dir) != 0)
        return cu_die(1, "plot: cannot find the gnuplot scripts (plots/cdf.gp): set LATSIM_PLOTS to the plots/ directory");
    int64_t ids[64];
    ids[0] = id;
    for (int i = 0; i < nmore; i++)
        if (cu_parse_id("run", more[i], &ids[i + 1], iderr, sizeof iderr) != 0) return cu_die(2, "plot: %s", iderr);
    sqlite3 *db;
    if (store_open_readonly(path, &db, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (nmore) rc = plot_cdf_runs(db, ids, nmore + 1, out, dir);
    else if (!strcmp(what, "run")) rc = !strcmp(kind, "cdf") ? plot_cdf(db, id, out, dir)
                                 : !strcmp(kind, "timeseries") ? plot_timeseries_run(db, id, out, dir)
                                 : plot_breakdown_run(db, id, out, dir);
    else if (!strcmp(what, "sweep")) rc = plot_sweep(db, id, !strcmp(kind, "breakdown"), out, dir);
    else rc = plot_plan(db, id, out, dir);
    store_close(db);
    return rc;
}

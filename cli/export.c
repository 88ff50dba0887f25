/* export.c -- `latsim export RUN|FILE --csv DIR`: a run's tables as CSV files
 * for spreadsheets, written with libcsv's writer (csv_fwrite quotes every
 * field that needs it):
 *   system.csv     metric,value,ci95            the system's scalar rows
 *   latency.csv    scope,metric,mean,p50,p90,p95,p99,p999,max   every latency
 *                  group (scope "" the system, a pool name, "class:NAME",
 *                  "route:ROUTER->TARGET")
 *   pools.csv      pool,metric,value,ci95,text  the pools' scalar rows
 *   routes.csv     route,metric,value,ci95,text the routes' scalar rows (route
 *                  "ROUTER->TARGET"; only the header when there are none)
 *   classes.csv    class,metric,value,ci95      the classes' scalar rows
 *   cdf.csv        metric,p,value_ms            the system's CDF points
 *   timeseries.csv scope,t_start_s,...          the stored time series (runs
 *                  made with --timeseries; absent otherwise)
 * Numbers are written with %.17g (they read back exactly); a missing value
 * (NAN, saturated) is an empty field.  A scenario FILE is run once first.
 */
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cliopt.h"
#include "cliutil.h"
#include "commands.h"
#include "design.h"
#include "latsim/errmsg.h"
#include "latsim/report.h"
#include "latsim/store.h"
#include "reptables.h"

enum { O_CSV = 1 };

static const cli_opt OPTS[] = {
    { "csv", O_CSV, "DIR", "the folder to write the CSV files in (created if missing)", CLI_REQUIRED },
    CLI_OPT_DB,
    { NULL },
};

static const cli_cmd CMD = {
    "export", "RUN|FILE",
    "Writes a stored run's tables (or those of scenario FILE, run once) as CSV files in\n"
    "DIR: system.csv, latency.csv, pools.csv, routes.csv, classes.csv, cdf.csv and, for\n"
    "runs with a time series, timeseries.csv (docs/commands.md).\n",
    "", OPTS, 0, 0,
};

static int export_opt(void *ctx, int id, const char *v)
{
    if (id == O_CSV) *(const char **) ctx = v;
    return 0;
}

static void field(FILE *f, const char *s, int first)
{
    if (!first) fputc(',', f);
    csv_fwrite(f, s, strlen(s));
}

static void numf(FILE *f, double v)
{
    fputc(',', f);
    if (!isnan(v) && !isinf(v)) fprintf(f, "%.17g", v);
}


/* The file a non-system scope's scalar rows go to: 0 pools.csv, 1 classes.csv, 2 routes.csv. */
static int group_of(const char *s) { return rt_is_class(s) ? 1 : rt_is_route(s) ? 2 : 0; }

/* Opens DIR/NAME for writing; NULL after printing one line. */
static FILE *open_in(const char *dir, const char *name, char *path, size_t n)
{
    char err[2048];
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = cu_open_out("export", "--csv", path, err, sizeof err);   /* never blocks on a FIFO put there */
    if (!f) cu_die(1, "%s", err);
    return f;
}

static int finish(FILE *f, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return cu_die(1, "export: %s: write failed", path);
    return 0;
}

static const char *LAT[] = { "mean", "p50", "p90", "p95", "p99", "p999", "max" };

static int write_all(const design *d, const char *dir, const char *dbpath)
{
    const report *r = &d->rep;
    char path[4096];
    FILE *f;
    /* system.csv, pools.csv, classes.csv, routes.csv: the scalar rows. */
    if (!(f = open_in(dir, "system.csv", path, sizeof path))) return 1;
    fputs("metric,value,ci95\n", f);
    for (size_t i = 0; i < r->n; i++) {
        const store_stat *s = &r->rows[i];
        if (s->scope[0] || strcmp(s->stat, "value") || s->text) continue;
        field(f, s->metric, 1);
        numf(f, s->value);
        numf(f, s->ci95);
        fputc('\n', f);
    }
    if (finish(f, path)) return 1;
    static const char *const FILES[] = { "pools.csv", "classes.csv", "routes.csv" };
    static const char *const HEADS[] = { "pool,metric,value,ci95,text\n", "class,metric,value,ci95\n",
                                         "route,metric,value,ci95,text\n" };
    static const size_t SKIP[] = { 0, sizeof REPORT_CLASS_SCOPE - 1, sizeof REPORT_ROUTE_SCOPE - 1 };
    for (int g = 0; g < 3; g++) {
        if (!(f = open_in(dir, FILES[g], path, sizeof path))) return 1;
        fputs(HEADS[g], f);
        for (size_t i = 0; i < r->n; i++) {
            const store_stat *s = &r->rows[i];
            if (!s->scope[0] || group_of(s->scope) != g || strcmp(s->stat, "value")) continue;
            if (g == 1 && s->text) continue;
            field(f, s->scope + SKIP[g], 1);
            field(f, s->metric, 0);
            numf(f, s->value);
            numf(f, s->ci95);
            if (g != 1) field(f, s->text ? s->text : "", 0);
            fputc('\n', f);
        }
        if (finish(f, path)) return 1;
    }
    /* latency.csv: one line per latency group (the rows mean .. max). */
    if (!(f = open_in(dir, "latency.csv", path, sizeof path))) return 1;
    fputs("scope,metric,mean,p50,p90,p95,p99,p999,max\n", f);
    for (size_t i = 0; i < r->n; i++) {
        const store_stat *s = &r->rows[i];
        if (strcmp(s->stat, "mean")) continue;
        field(f, s->scope, 1);
        field(f, s->metric, 0);
        for (int k = 0; k < 7; k++) numf(f, report_get(r, s->scope, s->metric, LAT[k]));
        fputc('\n', f);
    }
    if (finish(f, path)) return 1;
    if (!(f = open_in(dir, "cdf.csv", path, sizeof path))) return 1;
    fputs("metric,p,value_ms\n", f);
    for (size_t i = 0; i < r->ncdf; i++) {
        field(f, r->cdf[i].metric, 1);
        numf(f, r->cdf[i].p);
        numf(f, r->cdf[i].value);
        fputc('\n', f);
    }
    if (finish(f, path)) return 1;
    if (!d->run_id) return 0;
    /* timeseries.csv: the run's stored intervals, every column of the table. */
    char err[1024];
    sqlite3 *db;
    if (store_open_readonly(dbpath, &db, err, sizeof err) != 0) return cu_die(1, "%s", err);
    sqlite3_stmt *st = NULL;
    int rc = 0, n = 0;
    if (store_has_table(db, "run_timeseries") &&
        sqlite3_prepare_v2(db, "SELECT * FROM run_timeseries WHERE run_id = ? ORDER BY scope, t_start_s", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, d->run_id);
        f = NULL;
        while (sqlite3_step(st) == SQLITE_ROW) {
            int nc = sqlite3_column_count(st);
            if (!f) {
                if (!(f = open_in(dir, "timeseries.csv", path, sizeof path))) { rc = 1; break; }
                int first = 1;
                for (int c = 0; c < nc; c++) {
                    if (!strcmp(sqlite3_column_name(st, c), "run_id")) continue;
                    field(f, sqlite3_column_name(st, c), first);
                    first = 0;
                }
                fputc('\n', f);
            }
            int first = 1;
            for (int c = 0; c < nc; c++) {
                if (!strcmp(sqlite3_column_name(st, c), "run_id")) continue;
                int t = sqlite3_column_type(st, c);
                if (!first) fputc(',', f);
                first = 0;
                if (t == SQLITE_INTEGER) fprintf(f, "%lld", (long long) sqlite3_column_int64(st, c));
                else if (t == SQLITE_FLOAT) fprintf(f, "%.17g", sqlite3_column_double(st, c));
                else if (t == SQLITE_TEXT) csv_fwrite(f, sqlite3_column_text(st, c), (size_t) sqlite3_column_bytes(st, c));
            }
            fputc('\n', f);
            n++;
        }
        if (f && finish(f, path)) rc = 1;
    }
    sqlite3_finalize(st);
    store_close(db);
    return rc;
}

int export_main(int argc, char **argv)
{
    const char *dir = NULL;
    cli_args a;
    int rc = cli_parse(&CMD, argc, argv, &a, export_opt, &dir);
    if (rc != CLI_GO) return rc;
    if (a.npos != 1) return cu_die(2, "export: expected one run ID or scenario file (see latsim export --help)");
    const char *dbpath = cu_db_path(a.db);
    char err[1024];
    if (cu_check_db_path(dbpath, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (!dir[0]) return cu_die(2, "export: --csv: empty folder name");
    struct stat sb;
    if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) return cu_die(2, "export: --csv %s: not a folder", dir);
    /* The one check of the output before any work: the folder and every file written in it. */
    static const char *const FILES[] = { "system.csv", "latency.csv", "pools.csv", "routes.csv", "classes.csv",
                                         "cdf.csv", "timeseries.csv", NULL };
    if (cu_check_out_dir("export", "--csv", dir, FILES, err, sizeof err) != 0) return cu_die(2, "%s", err);
    design_how how = { 1, 0, NULL, 0, 1, dbpath, 0 };
    design d;
    rc = design_load(a.pos[0], &how, 'A', "export", &d);
    if (rc) return rc;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        design_free(&d);
        return cu_die(1, "export: --csv %s: %s", dir, strerror(errno));
    }
    rc = write_all(&d, dir, dbpath);
    design_free(&d);
    return rc;
}

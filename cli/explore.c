/* explore.c -- `latsim explore GRID.ini`: a design-space exploration.  GRID.ini
 * is a scenario plus an [explore] section of axes (`pool.chat.tp = 1, 2, 4`,
 * any scenario key), `seeds = N`, `slo = on|off|TERM=LIMIT, ...`, `objective =
 * cost|p99` and `exclude = KEY=V & KEY=V` rules, expanded to the cartesian
 * product.  Each task (configuration x seed) is validated first (the ones the
 * scenario refuses are listed as skipped, with the reason), then run on local
 * workers and, under mpirun, on every other rank (task_run_stream), and stored
 * as it completes (a run and a sweep_points row of the exploration: one
 * transaction per batch), so that `--resume` runs only what is missing.  At the
 * end: the Pareto frontier of cost against the SLO metric, and the best
 * configuration.  docs/explore.md.
 *
 * This file: the options, storing each task as it completes, the command; the
 * grid is exploregrid.c's, the result exploresum.c's (explore.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cliopt.h"
#include "cliutil.h"
#include "commands.h"
#include "latsim/errmsg.h"
#include "latsim/infile.h"
#include "latsim/report.h"
#include "latsim/scenario.h"
#include "latsim/slo.h"
#include "latsim/store.h"
#include "explore.h"

enum { O_WORKERS = 1, O_RESUME, O_PROGRESS, O_YES };

static const cli_opt OPTS[] = {
    { "workers", O_WORKERS, "N", "local worker processes (default: all cores; under mpirun 1 on rank 0)", 0 },
    { "resume", O_RESUME, NULL, "continue the last exploration of GRID in the database: run only the missing tasks", 0 },
    { "progress", O_PROGRESS, NULL, "print the progress line on stderr even when it is not a terminal", 0 },
    { "yes", O_YES, NULL, "run a grid of more than 10^7 tasks", 0 },
    CLI_OPT_JSON,
    CLI_OPT_DB,
    { NULL },
};

static const cli_cmd CMD = {
    "explore", "GRID.ini",
    "Runs every configuration of the [explore] axes of GRID.ini (the cartesian\n"
    "product, less the exclude rules) x seeds, storing each task as it completes,\n"
    "and prints the Pareto frontier (cost against the SLO metric) and the best\n"
    "configuration.  Under `mpirun -n K latsim explore ...` (make MPI=1) rank 0\n"
    "holds the database and the other ranks simulate.  See docs/explore.md.\n",
    "exit status: 0 done (also with a lost MPI rank: one warning line), 1 runtime\n"
    "error, 2 bad input (nothing stored).\n",
    OPTS, 0, 0,
};


static int explore_opt(void *ctx, int id, const char *v)
{
    explore *e = ctx;
    long x;
    switch (id) {
    case O_WORKERS:
        if ((x = cu_posint("explore", "--workers", v, 1024)) < 0) return 2;
        e->workers = (int) x;
        return 0;
    case O_RESUME: e->resume = 1; return 0;
    case O_PROGRESS: e->progress = 1; return 0;
    default: e->yes = 1; return 0;
    }
}

/* ---- storing ------------------------------------------------------------ */

static void progress_line(explore *e, int final)
{
    if (!e->show_progress) return;
    double now = cu_clock();
    if (!final && now - e->last_print < 0.5) return;
    e->last_print = now;
    double dt = now - e->t0, rate = dt > 0 ? e->stored_now / dt : 0;
    int done = e->done_before + e->stored_now + e->failed + e->elsewhere, total = e->done_before + e->total_run;
    double eta = rate > 0 ? (total - done) / rate : NAN;
    int tty = isatty(2);
    fprintf(stderr, "%sexplore: %d/%d tasks  %.2f tasks/s  ETA %s%.0f s%s", tty ? "\r" : "", done, total, rate,
            isnan(eta) ? "? " : "", isnan(eta) ? 0 : eta, tty && !final ? "   " : "\n");
    fflush(stderr);
}

static int sink(int i, task_out *o, int batch_end, void *arg)
{
    explore *e = arg;
    int rc = 0;
    if (o->status != 0) {
        fprintf(stderr, "latsim: %s: task %d (%s; seed %llu) failed: %s\n", e->file, i, e->c[i / e->nseeds].settings,
                (unsigned long long) e->ts[i].seed, o->err);
        e->failed++;
    } else {
        if (!e->in_tx) {
            if (store_begin(e->db, e->err, sizeof e->err) != 0) { rc = -1; goto out; }
            e->in_tx = 1;
        }
        slo_result slo;
        memset(&slo, 0, sizeof slo);
        if (slo_eval(&e->slo, o->rep.rows, o->rep.n, &slo) != 0) { errmsg_set(e->err, sizeof e->err, "out of memory"); rc = -1; goto out; }
        char settings[4096];
        snprintf(settings, sizeof settings, "%s%sseed=%d", e->c[i / e->nseeds].settings, e->nax ? "; " : "", i % e->nseeds);
        planstore_extra x = { .sweep_id = e->id, .idx = i, .role = "explore", .settings = settings, .seed = o->seed,
                              .rate = o->rate, .usd_per_hour = o->usd_per_hour };
        int64_t id;
        rc = cu_save_task(e->db, &e->ts[i], o, &slo, &x, &id, e->err, sizeof e->err) != 0 ? -1 : 0;
        slo_result_free(&slo);
        if (rc == 0) e->stored_now++;
    }
out:
    task_out_free(o);
    if (rc == 0 && batch_end && e->in_tx) {
        e->in_tx = 0;
        if (store_commit(e->db, e->err, sizeof e->err) != 0) rc = -1;
    }
    if (rc != 0 && e->in_tx) { store_rollback(e->db); e->in_tx = 0; }
    progress_line(e, 0);
    return rc;
}

/* task_claim of the run: task I is claimed in a transaction of its own
 * (planstore_claim), so that two processes resuming one exploration never run
 * a task twice.  Returns 1, 0 (stored, or another process's) or -1 (ERR). */
static int claim(int i, void *arg)
{
    explore *e = arg;
    if (e->in_tx) {   /* results not committed yet: a claim takes a transaction of its own */
        e->in_tx = 0;
        if (store_commit(e->db, e->err, sizeof e->err) != 0) return -1;
    }
    int c = planstore_claim(e->db, e->id, i, e->owner, e->err, sizeof e->err);
    if (c == 0) e->elsewhere++;
    return c;
}

/* The exploration row: the last one of GRID with the same text (--resume), or
 * a new one.  *DONE (nconf x nseeds bytes) marks the tasks already stored.
 * Returns 0 or the exit status (printed). */
static int open_exploration(explore *e, char *done)
{
    char args[64], started[32];
    snprintf(args, sizeof args, "grid %016llx", (unsigned long long) store_hash(e->text, strlen(e->text), STORE_HASH_INIT));
    if (e->resume) {
        sqlite3_stmt *st;
        e->id = 0;
        if (sqlite3_prepare_v2(e->db, "SELECT id FROM sweeps WHERE kind = 'explore' AND scenario_path = ? AND args = ?"
                               " ORDER BY id DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK)
            return cu_die(1, "%s: %s", e->dbpath, sqlite3_errmsg(e->db));
        sqlite3_bind_text(st, 1, e->file, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, args, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) e->id = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        if (!e->id) return cu_die(2, "explore --resume: %s holds no exploration of %s as it is now", e->dbpath, e->file);
        if (sqlite3_prepare_v2(e->db, "SELECT idx FROM sweep_points WHERE sweep_id = ?", -1, &st, NULL) != SQLITE_OK)
            return cu_die(1, "%s: %s", e->dbpath, sqlite3_errmsg(e->db));
        sqlite3_bind_int64(st, 1, e->id);
        while (sqlite3_step(st) == SQLITE_ROW) {
            int i = sqlite3_column_int(st, 0);
            if (i >= 0 && i < e->ntask && !done[i]) { done[i] = 1; e->done_before++; }
        }
        sqlite3_finalize(st);
        return 0;
    }
    cu_now(started, sizeof started);
    if (store_begin(e->db, e->err, sizeof e->err) != 0 ||
        planstore_sweep_begin(e->db, "explore", e->file, args, started, &e->id, e->err, sizeof e->err) != 0 ||
        store_commit(e->db, e->err, sizeof e->err) != 0) {
        store_rollback(e->db);
        return cu_die(1, "exploration not stored: %s", e->err);
    }
    return 0;
}

static const explore *g_sort;     /* qsort has no argument: the exploration being sorted */
static int cmp_order(const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    double wx = g_sort->c[x / g_sort->nseeds].weight, wy = g_sort->c[y / g_sort->nseeds].weight;
    if (wx != wy) return wx > wy ? -1 : 1;
    return (x > y) - (x < y);
}

static void explore_free(explore *e)
{
    for (int a = 0; a < e->nax; a++) {
        for (int i = 0; i < e->ax[a].nv; i++) free(e->ax[a].v[i]);
        free(e->ax[a].v);
    }
    if (e->c)
        for (long c = 0; c < e->nconf; c++) {
            if (e->c[c].sets) for (int a = 0; a < e->nax; a++) free(e->c[c].sets[a]);
            free(e->c[c].sets);
            free(e->c[c].settings);
            free(e->c[c].reason);
        }
    for (int i = 0; i < e->nsloset; i++) free(e->sloset[i]);
    free(e->c);
    free(e->ts);
    free(e->text);
    slo_free(&e->slo);
    if (e->db) store_close(e->db);
}

int explore_main(int argc, char **argv)
{
    explore e;
    memset(&e, 0, sizeof e);
    cli_args a;
    int rc = cli_parse(&CMD, argc, argv, &a, explore_opt, &e);
    if (rc != CLI_GO) goto done;
    rc = 2;
    if (a.npos != 1) { rc = cu_die(2, "explore: expected one GRID.ini (see latsim explore --help)"); goto done; }
    e.file = a.pos[0];
    e.json = a.json;
    e.dbpath = cu_db_path(a.db);
    {
        char ierr[1400];   /* the one check of the input before any work */
        if (cu_check_in("explore", NULL, e.file, INFILE_MAX_SCENARIO, ierr, sizeof ierr) != 0) { rc = cu_die(2, "%s", ierr); goto done; }
    }
    if ((rc = parse_grid(&e)) != 0) goto done;
    if ((rc = check_axes(&e)) != 0) goto done;
    if ((rc = expand(&e)) != 0) goto done;
    char err[2048];
    if (cu_check_db_path(e.dbpath, err, sizeof err) != 0) { rc = cu_die(2, "%s", err); goto done; }
    if ((rc = validate(&e)) != 0) goto done;
    if (cu_open_rw(e.dbpath, &e.db, err, sizeof err) != 0) { rc = cu_die(2, "%s", err); goto done; }
    char *done = calloc((size_t) e.ntask, 1);
    int *order = calloc((size_t) e.ntask + 1, sizeof *order);
    if (!done || !order) { free(done); free(order); rc = cu_die(1, "out of memory"); goto done; }
    if ((rc = open_exploration(&e, done)) != 0) { free(done); free(order); goto done; }
    int norder = 0;
    for (int i = 0; i < e.ntask; i++)
        if (!done[i] && e.c[i / e.nseeds].state == 0) order[norder++] = i;
    g_sort = &e;
    qsort(order, (size_t) norder, sizeof *order, cmp_order);     /* largest first */
    e.total_run = norder;
    e.show_progress = e.progress || isatty(2);
    e.t0 = e.last_print = cu_clock();
    char lost[512];
    planstore_owner(e.owner, sizeof e.owner);
    int nl = task_run_stream_claimed(e.ts, e.ntask, order, norder, e.workers, e.dbpath, claim, sink, &e, lost, sizeof lost);
    free(done);
    free(order);
    if (e.in_tx) { store_rollback(e.db); e.in_tx = 0; }
    if (nl < 0) { rc = cu_die(1, "exploration stopped: %s (stored tasks are kept: --resume continues)", e.err[0] ? e.err : "out of memory"); goto done; }
    progress_line(&e, 1);
    if (nl > 0)
        fprintf(stderr, "latsim: warning: explore: lost MPI rank%s %s: %s tasks ran on the others\n", nl > 1 ? "s" : "", lost,
                nl > 1 ? "their" : "its");
    rc = summarise(&e, cu_clock() - e.t0, lost);
done:
    explore_free(&e);
    return rc;
}

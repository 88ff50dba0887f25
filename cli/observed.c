/* observed.c -- `latsim replay` (an observed run, predicted against observed) and
 * `latsim calib import observed` / `calib show observed` (observed runs in the
 * measurement store).
 *
 * Option parsing (getopt_long), the database around each command, the output
 * (table, --json, --plot) and the exit codes live here; reading, storing and
 * replaying are in calib/ (cobserved.h, cobsdb.h, cobsreplay.h).  Exit codes:
 * 0 done, 1 runtime failure, 2 bad input (usage, file, scenario, database).
 *
 * This file: the calib commands (import observed, show observed, import
 * engine-log, forget); `latsim replay` is obsreplay.c's, the options and
 * inputs they share obsopts.c's.
 */
#include "observed.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calib.h"
#include "cliutil.h"
#include "gp.h"
#include "latsim/errmsg.h"
#include "latsim/scenario.h"
#include "latsim/store.h"
#include "obsopts.h"

static const char *IMPORT_USAGE =
    "usage: latsim calib import observed FILE --scenario S.ini [--pool P] [--format F]\n"
    "                                    [--benchmark K] [--meta M.json] [--db PATH]\n"
    "\n"
    "Stores one observed run in the measurement store: its requests (or a sweep's\n"
    "levels) and measured timings, the scenario text of the server it was measured on\n"
    "(the LLM pool P, default the first) and its provenance (file, format, date, tool).\n"
    "Formats (docs/observed.md): {formats};\n"
    "detected from the content unless --format F.  --meta M.json: the server's configuration\n"
    "laid over the pool (docs/observed.md, \"Server metadata\"), stored with the scenario.\n"
    "Bad input: one line naming the file,\n"
    "line and field; exit 2; nothing stored.\n";
/* ---- calib import observed ----------------------------------------------- */

typedef struct import_job {
    const cobs_run *run;      /* what is stored */
    const scenario *sc;       /* the scenario, resolved */
    const char *text;         /* its text as stored (NULL: the file's) */
    const cobs_server *srv;   /* its pool */
    int64_t id;               /* out: the stored run */
} import_job;

/* cu_write_fn: the tables and the run, in the one transaction.  Returns 0 or 1. */
static int import_write(sqlite3 *db, int dry, void *arg, char *err, size_t n)
{
    (void) dry;
    import_job *j = arg;
    if (cdb_init(db, err, n) != 0 || cobsdb_init(db, err, n) != 0) return 1;
    return cobsdb_save(db, j->run, scenario_file_path(j->sc), j->text ? j->text : scenario_file_text(j->sc), j->srv,
                       "latsim " LATSIM_VERSION, &j->id, err, n)
               ? 1 : 0;
}

int calib_import_observed_main(int argc, char **argv)
{
    static const int allowed[] = { O_SCENARIO, O_POOL, O_FORMAT, O_DB, O_BENCH, O_HELP, O_META, 0 };
    obs_opts o;
    int rc = oo_parse("calib import observed", argc, argv, IMPORT_USAGE, allowed, &o);
    if (rc) return rc == 1 ? 0 : rc;
    if (!o.file) return oo_say(2, "calib import observed: missing FILE (see latsim calib import observed --help)");
    if (!o.scenario)
        return oo_say(2, "calib import observed: --scenario S.ini is required: the scenario of the server the run was "
                   "measured on");
    char err[2048];
    const char *path = cu_db_path(o.db);
    if (cu_check_db_path(path, err, sizeof err) != 0) return oo_say(2, err);
    /* The one check of every input before any work (a FIFO would block, a device never end). */
    if (cu_check_in("calib import observed", NULL, o.file, INFILE_MAX_OBSERVED, err, sizeof err) != 0
        || cu_check_in("calib import observed", "--scenario", o.scenario, INFILE_MAX_SCENARIO, err, sizeof err) != 0
        || (o.meta && cu_check_in("calib import observed", "--meta", o.meta, INFILE_MAX_JSON, err, sizeof err) != 0))
        return oo_say(2, err);
    scenario *sc = scenario_new();
    if (!sc) return oo_say(1, "out of memory");
    if ((rc = oo_load_scenario(o.scenario, NULL, sc)) != 0) {
        scenario_delete(sc);
        return rc;
    }
    char msets[16][128];   /* --meta: the values laid over the pool (apply_meta) */
    int nmsets = 0;
    int idx;
    cobs_run run = { 0 };
    sqlite3 *db = NULL;
    char *stored = NULL;
    if (cobs_find_pool(sc, o.pool, &idx, err, sizeof err) != 0) { rc = oo_say(2, err); goto out; }
    if ((rc = oo_read_file(&o, &run)) != 0) goto out;
    /* What a replay and a fit need, checked now: a run stored but never replayable
     * would block every later fit of its model and GPU. */
    if ((rc = cobs_check_replayable(&run, sc, 1, err, sizeof err)) != 0) { oo_say(rc, err); goto out; }
    /* The catalog look-ups of the scenario, as `run` does them (nothing written). */
    if (store_open_lookup(path, &db, err, sizeof err) != 0) { rc = oo_say(2, err); goto out; }
    if (o.meta && ((rc = oo_apply_meta(o.meta, o.scenario, NULL, o.pool, db, &sc, msets, &nmsets)) != 0 ||
                   (rc = cobs_find_pool(sc, o.pool, &idx, err, sizeof err) != 0 ? oo_say(2, err) : 0) != 0))
        goto out;
    if (scenario_resolve(sc, db, err, sizeof err) != 0) {
        rc = oo_say(strstr(err, "out of memory") ? 1 : 2, err);
        goto out;
    }
    store_close(db);
    db = NULL;
    cobs_server srv;
    cobs_describe(sc, idx, &srv);
    import_job j = { .run = &run, .sc = sc, .srv = &srv };
    if (o.meta && !(stored = cobs_scenario_text(sc))) { rc = oo_say(1, "out of memory"); goto out; }
    j.text = stored;
    rc = cu_write_db(path, import_write, &j, NULL, err, sizeof err);
    if (rc != 0) { oo_say(rc, err); goto out; }
    printf("imported observed run %lld: %zu %s from %s (%s), measured on %s / %s (pool %s, tp %d, %s)\n",
           (long long) j.id, run.nreq ? run.nreq : run.nlvl, run.nreq ? "requests" : "sweep levels", ERRMSG_SHOWN(o.file),
           cobs_format_name(run.format), ERRMSG_SHOWN(srv.model), ERRMSG_SHOWN(srv.gpu), ERRMSG_SHOWN(srv.pool), srv.tp,
           ERRMSG_SHOWN(srv.weights));
out:
    if (db) store_close(db);
    free(stored);
    cobs_free(&run);
    scenario_delete(sc);
    return rc;
}

int calib_show_observed_main(int argc, char **argv)
{
    static const int allowed[] = { O_DB, O_HELP, 0 };
    obs_opts o;
    int rc = oo_parse("calib show observed", argc, argv,
                   "usage: latsim calib show observed ID [--db PATH]\n\nOne imported observed run: provenance, server, "
                   "observed statistics.\n", allowed, &o);
    if (rc) return rc == 1 ? 0 : rc;
    char err[2048];
    int64_t id;
    if (!o.file) return oo_say(2, "calib show observed: expected one observed run ID (see latsim calib list)");
    if (cu_parse_id("observed run", o.file, &id, err, sizeof err) != 0) {
        char m[2200];
        snprintf(m, sizeof m, "calib show observed: %s (see latsim calib list)", err);
        return oo_say(2, m);
    }
    sqlite3 *db = NULL;
    if ((rc = oo_open_readonly(cu_db_path(o.db), &db)) != 0) return rc;
    int s = cobsdb_show(db, id, stdout, err, sizeof err);
    store_close(db);
    return s == 0 ? 0 : oo_say(s == 1 ? 2 : 1, err);
}

/* ---- calib import engine-log ------------------------------------------------ */

static const char *ENGLOG_USAGE =
    "usage: latsim calib import engine-log FILE --scenario S.ini [--pool P] [--db PATH]\n"
    "\n"
    "Stores the steady windows of an engine's periodic metrics as step times (source\n"
    "engine-log, used by latsim calib fit like any step): pure decode windows give\n"
    "1000 x running / generated tokens per second at the mean context (KV usage x\n"
    "kv_blocks x block_tokens / running), prefill-saturated ones the token budget /\n"
    "tokens per second.  FILE: a CSV t,prompt_throughput,gen_throughput,running,\n"
    "waiting,kv_cache_pct; vLLM's periodic \"Avg prompt throughput\" log lines; or a\n"
    "series of Prometheus scrapes of vllm:num_requests_running, ..._waiting,\n"
    "vllm:prompt_tokens_total, vllm:generation_tokens_total, vllm:gpu_cache_usage_perc\n"
    "(docs/observed.md).  The scenario's pool P (default: its first LLM pool) is the\n"
    "server.  Bad input: one line naming the file, line and field; exit 2; nothing stored.\n";

typedef struct englog_job {
    const char *file;         /* the log */
    const celog_window *w;    /* its windows */
    size_t n;
    const cobs_server *srv;   /* the pool */
    const char *tool;         /* latsim and its version */
} englog_job;

/* cu_write_fn of `calib import engine-log`: the windows as calib_meas rows.  Returns 0 or 1. */
static int englog_write(sqlite3 *db, int dry, void *arg, char *err, size_t n)
{
    (void) dry;
    englog_job *j = arg;
    if (cdb_init(db, err, n) != 0) return 1;
    return celog_store(db, j->file, j->w, j->n, j->srv->model, j->srv->gpu, j->srv->weights, j->srv->tp, j->tool, err, n)
               ? 1 : 0;
}

int calib_import_englog_main(int argc, char **argv)
{
    static const int allowed[] = { O_SCENARIO, O_POOL, O_DB, O_HELP, 0 };
    obs_opts o;
    int rc = oo_parse("calib import engine-log", argc, argv, ENGLOG_USAGE, allowed, &o);
    if (rc) return rc == 1 ? 0 : rc;
    if (!o.file) return oo_say(2, "calib import engine-log: missing FILE (see latsim calib import engine-log --help)");
    if (!o.scenario)
        return oo_say(2, "calib import engine-log: --scenario S.ini is required: the scenario of the server that wrote the log");
    char err[2048];
    const char *path = cu_db_path(o.db);
    if (cu_check_db_path(path, err, sizeof err) != 0) return oo_say(2, err);
    /* The one check of the inputs before any work (a FIFO would block). */
    if (cu_check_in("calib import engine-log", NULL, o.file, INFILE_MAX_OBSERVED, err, sizeof err) != 0 ||
        cu_check_in("calib import engine-log", "--scenario", o.scenario, INFILE_MAX_SCENARIO, err, sizeof err) != 0)
        return oo_say(2, err);
    scenario *sc = scenario_new();
    if (!sc) return oo_say(1, "out of memory");
    if ((rc = oo_load_scenario(o.scenario, NULL, sc)) != 0) {
        scenario_delete(sc);
        return rc;
    }
    int idx, below = 0;
    celog log = { 0 };
    celog_window *w = NULL;
    size_t nw = 0;
    sqlite3 *db = NULL;
    model_spec model;
    gpu_spec gpu;
    cobs_server srv;
    if (cobs_find_pool(sc, o.pool, &idx, err, sizeof err) != 0) { rc = oo_say(2, err); goto out; }
    if ((rc = celog_read(o.file, &log, err, sizeof err)) != 0) { oo_say(rc, err); goto out; }
    if (store_open_lookup(path, &db, err, sizeof err) != 0 || scenario_resolve(sc, db, err, sizeof err) != 0) {
        rc = oo_say(strstr(err, "out of memory") ? 1 : 2, err);
        goto out;
    }
    cobs_describe(sc, idx, &srv);
    if (catalog_model(db, srv.model, &model, err, sizeof err) != 0 || catalog_gpu(db, srv.gpu, &gpu, err, sizeof err) != 0) {
        rc = oo_say(2, err);
        goto out;
    }
    store_close(db);
    db = NULL;
    celog_server cs = { .model = &model, .gpu = &gpu, .weights = srv.weights, .tp = srv.tp,
                        .kv_blocks = srv.kv_blocks, .block_tokens = srv.block_tokens, .budget = srv.chunk_tokens };
    if (celog_windows(&log, &cs, &w, &nw, &below) != 0) { rc = oo_say(1, "out of memory"); goto out; }
    if (nw == 0) {
        snprintf(err, sizeof err, "%s: no steady window (%d or more intervals of pure decode, or of prompts with a queue "
                 "and KV usage below %.0f %%%s)%s: nothing stored", o.file, CELOG_MIN_ROWS, 100 * CELOG_KV_FREE,
                 srv.chunk_tokens > 0 ? "" : "; the pool has no chunked-prefill budget, so no prefill window",
                 below ? "; every one was faster than the hardware floor" : "");
        rc = oo_say(2, err);
        goto out;
    }
    englog_job j = { .file = o.file, .w = w, .n = nw, .srv = &srv, .tool = "latsim " LATSIM_VERSION };
    rc = cu_write_db(path, englog_write, &j, NULL, err, sizeof err);
    if (rc != 0) { oo_say(rc, err); goto out; }
    size_t npre = 0;
    for (size_t i = 0; i < nw; i++) npre += (size_t) w[i].prefill;
    printf("imported %zu step times from %s (%s, %zu intervals: %zu decode and %zu prefill windows", nw, ERRMSG_SHOWN(o.file),
           celog_format_name(log.format), log.n, nw - npre, npre);
    if (below) printf("; %d faster than the hardware floor left out", below);
    printf("), measured on %s / %s (pool %s, tp %d, %s)\n", ERRMSG_SHOWN(srv.model), ERRMSG_SHOWN(srv.gpu),
           ERRMSG_SHOWN(srv.pool), srv.tp, ERRMSG_SHOWN(srv.weights));
    if (log.note[0]) printf("note: %s\n", log.note);
    printf("  %-8s %9s %9s %5s %8s %8s %10s %9s %9s\n", "window", "t0_s", "t1_s", "rows", "batch", "tokens", "context",
           "step_ms", "floor_ms");
    for (size_t i = 0; i < nw; i++)
        printf("  %-8s %9.6g %9.6g %5d %8.4g %8.6g %10.6g %9.4g %9.4g\n", w[i].prefill ? "prefill" : "decode", w[i].t0,
               w[i].t1, w[i].rows, w[i].batch, w[i].tokens, w[i].context, w[i].step_ms, w[i].floor_ms);
out:
    if (db) store_close(db);
    free(w);
    celog_free(&log);
    scenario_delete(sc);
    return rc;
}

/* ---- calib forget ------------------------------------------------------------ */

typedef struct forget_job {
    int64_t id;               /* the run removed */
    int fits;                 /* out: observed fits that had used it */
} forget_job;

/* cu_write_fn of `calib forget`: 0, or 2 when there is no such run (ERR). */
static int forget_write(sqlite3 *db, int dry, void *arg, char *err, size_t n)
{
    (void) dry;
    forget_job *j = arg;
    if (cdb_init(db, err, n) != 0 || cobsdb_init(db, err, n) != 0) return 1;
    int s = cobsdb_forget(db, j->id, &j->fits, err, n);
    return s == 0 ? 0 : s == 1 ? 2 : 1;
}

int calib_forget_main(int argc, char **argv)
{
    static const int allowed[] = { O_DB, O_HELP, 0 };
    obs_opts o;
    int rc = oo_parse("calib forget", argc, argv,
                   "usage: latsim calib forget RUN [--db PATH]\n\nRemoves stored observed run RUN (latsim calib list): "
                   "its requests or levels and its\nlinks to the fits made from it (those fits are kept).  A run that "
                   "cannot be\nreplayed otherwise blocks every later fit of its model and GPU.\n", allowed, &o);
    if (rc) return rc == 1 ? 0 : rc;
    char err[2048];
    forget_job j = { 0 };
    if (!o.file) return oo_say(2, "calib forget: expected one observed run ID (see latsim calib list)");
    if (cu_parse_id("observed run", o.file, &j.id, err, sizeof err) != 0) {
        char m[2200];
        snprintf(m, sizeof m, "calib forget: %s (see latsim calib list)", err);
        return oo_say(2, m);
    }
    const char *path = cu_db_path(o.db);
    if (cu_check_db_path(path, err, sizeof err) != 0) return oo_say(2, err);
    if (access(path, F_OK) != 0) {
        snprintf(err, sizeof err, "%s: no such database (nothing to forget; give --db PATH)", path);
        return oo_say(2, err);
    }
    rc = cu_write_db(path, forget_write, &j, NULL, err, sizeof err);
    if (rc != 0) {
        char m[2200];
        snprintf(m, sizeof m, "calib forget: %s", err);
        return oo_say(rc, m);
    }
    printf("forgot observed run %lld", (long long) j.id);
    if (j.fits) printf(" (%d fitted model%s made from it kept: latsim calib list)", j.fits, j.fits == 1 ? "" : "s");
    printf("\n");
    return 0;
}

/* observed.c -- `latsim replay` (an observed run, predicted against observed) and
 * `latsim calib import observed` / `calib show observed` (observed runs in the
 * measurement store).
 *
 * Option parsing (getopt_long), the database around each command, the output
 * (table, --json, --plot) and the exit codes live here; reading, storing and
 * replaying are in calib/ (cobserved.h, cobsdb.h, cobsreplay.h).  Exit codes:
 * 0 done, 1 runtime failure, 2 bad input (usage, file, scenario, database).
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

static const char *REPLAY_USAGE =
    "usage: latsim replay FILE --scenario S.ini [--pool P] [--format F] [--benchmark K]\n"
    "                     [--meta M.json] [--json] [--plot DIR] [--db PATH]\n"
    "       latsim replay --run ID [--scenario S.ini] [--pool P] [--json] [--plot DIR] [--db PATH]\n"
    "\n"
    "Simulates exactly the requests of an observed run (their arrival times and token\n"
    "counts; for a sweep, one closed- or open-loop simulation per level) through the\n"
    "scenario, as a finite replay, and prints per metric (TTFT, TPOT, ITL, E2E, queue,\n"
    "where observed) and statistic (mean, p50, p90, p99) the observed value, the\n"
    "predicted one and the signed error, plus throughput (docs/observed.md).\n"
    "  FILE            an observed run, its format detected from the content unless\n"
    "                  --format F: {formats}\n"
    "  --run ID        an imported run (latsim calib list); default scenario: the stored one\n"
    "  --scenario S    the server the run is replayed on\n"
    "  --pool P        the LLM pool the requests enter (default: the scenario's workload target;\n"
    "                  the scenario needs an LLM pool, P or any)\n"
    "  --benchmark K   guidellm: the benchmark of the report (0-based) when it holds several\n"
    "  --meta M.json   the server's configuration (vLLM's resolved num_gpu_blocks, block_size,\n"
    "                  max_num_seqs, max_num_batched_tokens, parallel sizes) laid over the pool:\n"
    "                  a contradiction is one warning line; the engine's KV blocks are used\n"
    "  --json          one JSON object instead of the table\n"
    "  --plot DIR      DIR/replay-cdf.png: observed and predicted CDFs (needs gnuplot)\n"
    "Nothing is stored.  Exit status: 0, 1 runtime failure, 2 bad input.\n";

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

/* Prints USAGE on OUT, its "{formats}" the observed formats' rows (cobs_format_list). */
static void print_usage(const char *usage, FILE *out)
{
    const char *at = strstr(usage, "{formats}");
    if (!at) { fputs(usage, out); return; }
    fprintf(out, "%.*s%s%s", (int) (at - usage), usage, cobs_format_list(), at + strlen("{formats}"));
}

/* Prints "latsim: MSG" as one printable line; returns CODE. */
static int say(int code, const char *msg)
{
    char line[4096];
    fprintf(stderr, "latsim: %s\n", errmsg_field(msg, line, sizeof line));
    return code;
}

/* The options of the three commands. */
typedef struct obs_opts {
    const char *file;         /* the observed run (positional) */
    const char *scenario;     /* --scenario */
    const char *pool;         /* --pool */
    const char *format;       /* --format */
    const char *db;           /* --db */
    const char *plot;         /* --plot DIR */
    const char *run;          /* --run ID (text, parsed by cu_parse_id) */
    const char *meta;         /* --meta FILE: the server's configuration JSON */
    int benchmark;            /* --benchmark K, -1 when not given */
    int json;                 /* --json */
} obs_opts;

enum { O_SCENARIO = 1000, O_POOL, O_FORMAT, O_DB, O_PLOT, O_RUN, O_BENCH, O_JSON, O_HELP, O_META };

/* Parses ARGV (ARGC arguments after the command CMD) with getopt_long, taking
 * the long options of ALLOWED (a NUL-ended string of O_* codes) and at most one
 * positional argument.  Returns 0, 1 for --help (USAGE printed), or 2 after
 * printing the one-line error. */
static int parse(const char *cmd, int argc, char **argv, const char *usage, const int *allowed, obs_opts *o)
{
    static const struct option all[] = {
        { "scenario", required_argument, NULL, O_SCENARIO }, { "pool", required_argument, NULL, O_POOL },
        { "format", required_argument, NULL, O_FORMAT },     { "db", required_argument, NULL, O_DB },
        { "plot", required_argument, NULL, O_PLOT },         { "run", required_argument, NULL, O_RUN },
        { "benchmark", required_argument, NULL, O_BENCH },   { "json", no_argument, NULL, O_JSON },
        { "help", no_argument, NULL, O_HELP },         { "meta", required_argument, NULL, O_META },
    };
    struct option longs[sizeof all / sizeof *all + 1];
    size_t nl = 0;
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        for (const int *a = allowed; *a; a++)
            if (*a == all[i].val) longs[nl++] = all[i];
    memset(&longs[nl], 0, sizeof longs[nl]);
    memset(o, 0, sizeof *o);
    o->benchmark = -1;
    char **av = malloc((size_t) (argc + 2) * sizeof *av);   /* getopt wants a program name first */
    if (!av) return say(1, "out of memory");
    av[0] = (char *) cmd;
    for (int i = 0; i < argc; i++) av[i + 1] = argv[i];
    av[argc + 1] = NULL;
    char msg[1024];
    int rc = 0, c;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (c = getopt_long(argc + 1, av, ":h", longs, NULL)) != -1) {
        switch (c) {
        case 'h':
        case O_HELP: print_usage(usage, stdout); rc = 1; break;
        case O_SCENARIO: o->scenario = optarg; break;
        case O_POOL: o->pool = optarg; break;
        case O_FORMAT: o->format = optarg; break;
        case O_DB: o->db = optarg; break;
        case O_PLOT: o->plot = optarg; break;
        case O_RUN: o->run = optarg; break;
        case O_META: o->meta = optarg; break;
        case O_JSON: o->json = 1; break;
        case O_BENCH: {
            char *end;
            errno = 0;
            long k = strtol(optarg, &end, 10);
            if (!*optarg || *end || errno || k < 0 || k > 100000) {
                snprintf(msg, sizeof msg, "%s: --benchmark: expected a whole number from 0, got '%s'", cmd, optarg);
                rc = say(2, msg);
            }
            o->benchmark = (int) k;
            break;
        }
        case ':':
            snprintf(msg, sizeof msg, "%s: %s needs a value (see latsim %s --help)", cmd, av[optind - 1], cmd);
            rc = say(2, msg);
            break;
        default:
            snprintf(msg, sizeof msg, "%s: unknown option '%s' (see latsim %s --help)", cmd, av[optind - 1], cmd);
            rc = say(2, msg);
        }
    }
    for (int i = optind; rc == 0 && i < argc + 1; i++) {
        if (o->file) {
            snprintf(msg, sizeof msg, "%s: more than one file ('%s', '%s')", cmd, o->file, av[i]);
            rc = say(2, msg);
        }
        o->file = av[i];
    }
    free(av);
    return rc;
}

/* Prints the reader's note (re-drawn arrivals, skipped requests) on stderr. */
static void print_note(const cobs_run *run)
{
    if (!run->note[0]) return;
    char m[2048];
    snprintf(m, sizeof m, "note: %.1000s: %s", run->file, run->note);
    say(0, m);
}

/* Reads the run O names (a file): the one-line error printed.  Returns 0 or the exit status. */
static int read_file(const obs_opts *o, cobs_run *run)
{
    char err[2048];
    cobs_read_opts ro = { .format = o->format, .benchmark = o->benchmark, .seed = 1 };
    int rc = cobs_read(o->file, &ro, run, err, sizeof err);
    if (rc != 0) return say(rc, err);
    print_note(run);
    return 0;
}

/* Loads the scenario at PATH (or, when TEXT is given, from TEXT under the name
 * PATH), with the NSETS assignments SETS.  Returns 0 or the exit status (printed). */
static int load_scenario_sets(const char *path, const char *text, const char **sets, int nsets, scenario *sc)
{
    char err[2048];
    int s = text ? scenario_load_text(sc, path, text, sets, nsets, err, sizeof err)
                 : scenario_load(sc, path, sets, nsets, err, sizeof err);
    if (s != 0) return say(strstr(err, "out of memory") ? 1 : 2, err);
    return 0;
}

static int load_scenario(const char *path, const char *text, scenario *sc)
{
    char err[2048];
    int s = text ? scenario_load_text(sc, path, text, NULL, 0, err, sizeof err)
                 : scenario_load(sc, path, NULL, 0, err, sizeof err);
    if (s != 0) return say(strstr(err, "out of memory") ? 1 : 2, err);
    return 0;
}

/* The bytes of file PATH, NUL-terminated, malloc'd; NULL when it cannot be read. */
static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    while (b) {
        n += fread(b + n, 1, cap - n - 1, f);
        if (n < cap - 1) break;
        char *x = realloc(b, cap *= 2);
        if (!x) { free(b); b = NULL; }
        else b = x;
    }
    int bad = ferror(f);
    fclose(f);
    if (!b || bad) { free(b); return NULL; }
    b[n] = 0;
    return b;
}

/* The text of scenario SRC for a replay, which replaces its workload: the
 * [workload] section's arrival keys, trace and token-length keys (a copied
 * scenario's trace or empirical file need not exist) replaced by `arrival =
 * poisson` and `rate = 1`; its other keys (target, classes' attributes) and
 * every other section kept, line for line (so that errors keep their lines).
 * Returns a malloc'd string, or NULL when out of memory. */
static char *replay_text(const char *src)
{
    static const char *const DROP[] = { "arrival", "trace", "rate", "users", "think_ms", "ramp_users_s", "cv",
                                        "prompt_tokens", "output_tokens", "time_column", "time_format", "speedup",
                                        "complexity_column", "loop", NULL };
    size_t n = strlen(src);
    char *out = malloc(n + 64);
    if (!out) return NULL;
    size_t o = 0;
    int in_wl = 0, added = 0;
    for (const char *p = src; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t) (e - p) + 1 : strlen(p);
        const char *q = p;
        while (*q == ' ' || *q == '\t') q++;
        int drop = 0;
        if (*q == '[') {
            const char *r = q + 1;
            while (*r == ' ') r++;
            in_wl = !strncmp(r, "workload", 8) && (r[8] == ']' || r[8] == ' ');
        } else if (in_wl) {
            for (int k = 0; DROP[k] && !drop; k++) {
                size_t kl = strlen(DROP[k]);
                const char *r = q + kl;
                while (*r == ' ' || *r == '\t') r++;
                drop = !strncmp(q, DROP[k], kl) && *r == '=';
            }
        }
        if (drop) out[o++] = '\n';   /* the line stays, empty */
        else {
            memcpy(out + o, p, len);
            o += len;
            if (len && out[o - 1] != '\n') out[o++] = '\n';
        }
        if (in_wl && *q == '[' && !added) {
            o += (size_t) sprintf(out + o, "arrival = poisson\nrate = 1\n");
            added = 1;
        }
        p += len;
    }
    out[o] = 0;
    return out;
}

/* Lays the server metadata META (cobsmeta.h) over *SC (loaded from PATH, or
 * from TEXT under that name): *SC is resolved against DB, the overrides found
 * for pool POOL (NULL: the first LLM pool), a contradiction printed as one
 * warning line and a replaced derived value as one note, and *SC reloaded
 * with the overrides (unresolved).  Returns 0 or the exit status (printed). */
static int apply_meta(const char *meta, const char *path, const char *text, const char *pool, sqlite3 *db, scenario **sc,
                      char (*sets)[128], int *nsets)
{
    char err[2048], warn[1536], note[512];
    const char *ptr[16];
    cobs_meta m;
    int idx, n = 0, rc = cobs_meta_read(meta, &m, err, sizeof err);
    *nsets = 0;
    if (rc) return say(rc, err);
    if (scenario_resolve(*sc, db, err, sizeof err) != 0) return say(strstr(err, "out of memory") ? 1 : 2, err);
    if (cobs_find_pool(*sc, pool, &idx, err, sizeof err) != 0) return say(2, err);
    cobs_meta_sets(&m, meta, *sc, idx, sets, 16, &n, warn, sizeof warn, note, sizeof note);
    if (warn[0]) fprintf(stderr, "latsim: warning: %s\n", errmsg_field(warn, err, sizeof err));
    if (note[0]) fprintf(stderr, "latsim: note: %s\n", errmsg_field(note, err, sizeof err));
    for (int i = 0; i < n; i++) ptr[i] = sets[i];
    *nsets = n;
    scenario *fresh = scenario_new();
    if (!fresh) return say(1, "out of memory");
    int s = text ? scenario_load_text(fresh, path, text, ptr, n, err, sizeof err) : scenario_load(fresh, path, ptr, n, err, sizeof err);
    if (s != 0) {
        scenario_delete(fresh);
        char m2[2200];
        snprintf(m2, sizeof m2, "%s: %s", meta, err);
        return say(strstr(err, "out of memory") ? 1 : 2, m2);
    }
    scenario_delete(*sc);
    *sc = fresh;
    return 0;
}

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
    int rc = parse("calib import observed", argc, argv, IMPORT_USAGE, allowed, &o);
    if (rc) return rc == 1 ? 0 : rc;
    if (!o.file) return say(2, "calib import observed: missing FILE (see latsim calib import observed --help)");
    if (!o.scenario)
        return say(2, "calib import observed: --scenario S.ini is required: the scenario of the server the run was "
                   "measured on");
    char err[2048];
    const char *path = cu_db_path(o.db);
    if (cu_check_db_path(path, err, sizeof err) != 0) return say(2, err);
    /* The one check of every input before any work (a FIFO would block, a device never end). */
    if (cu_check_in("calib import observed", NULL, o.file, INFILE_MAX_OBSERVED, err, sizeof err) != 0
        || cu_check_in("calib import observed", "--scenario", o.scenario, INFILE_MAX_SCENARIO, err, sizeof err) != 0
        || (o.meta && cu_check_in("calib import observed", "--meta", o.meta, INFILE_MAX_JSON, err, sizeof err) != 0))
        return say(2, err);
    scenario *sc = scenario_new();
    if (!sc) return say(1, "out of memory");
    if ((rc = load_scenario(o.scenario, NULL, sc)) != 0) {
        scenario_delete(sc);
        return rc;
    }
    char msets[16][128];   /* --meta: the values laid over the pool (apply_meta) */
    int nmsets = 0;
    int idx;
    cobs_run run = { 0 };
    sqlite3 *db = NULL;
    char *stored = NULL;
    if (cobs_find_pool(sc, o.pool, &idx, err, sizeof err) != 0) { rc = say(2, err); goto out; }
    if ((rc = read_file(&o, &run)) != 0) goto out;
    /* What a replay and a fit need, checked now: a run stored but never replayable
     * would block every later fit of its model and GPU. */
    if ((rc = cobs_check_replayable(&run, sc, 1, err, sizeof err)) != 0) { say(rc, err); goto out; }
    /* The catalog look-ups of the scenario, as `run` does them (nothing written). */
    if (store_open_lookup(path, &db, err, sizeof err) != 0) { rc = say(2, err); goto out; }
    if (o.meta && ((rc = apply_meta(o.meta, o.scenario, NULL, o.pool, db, &sc, msets, &nmsets)) != 0 ||
                   (rc = cobs_find_pool(sc, o.pool, &idx, err, sizeof err) != 0 ? say(2, err) : 0) != 0))
        goto out;
    if (scenario_resolve(sc, db, err, sizeof err) != 0) {
        rc = say(strstr(err, "out of memory") ? 1 : 2, err);
        goto out;
    }
    store_close(db);
    db = NULL;
    cobs_server srv;
    cobs_describe(sc, idx, &srv);
    import_job j = { .run = &run, .sc = sc, .srv = &srv };
    if (o.meta && !(stored = cobs_scenario_text(sc))) { rc = say(1, "out of memory"); goto out; }
    j.text = stored;
    rc = cu_write_db(path, import_write, &j, NULL, err, sizeof err);
    if (rc != 0) { say(rc, err); goto out; }
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

/* Opens an existing database read-only with its calibration tables (empty ones
 * in the connection's temporary schema when it has none).  Returns 0 or 2 (printed). */
static int open_readonly(const char *path, sqlite3 **db)
{
    char err[2048];
    if (cu_check_db_path(path, err, sizeof err) != 0) return say(2, err);
    if (access(path, F_OK) != 0) {
        snprintf(err, sizeof err, "%s: no such database (import an observed run first, or give --db PATH)", path);
        return say(2, err);
    }
    if (store_open_readonly(path, db, err, sizeof err) != 0) return say(2, err);
    if (cdb_init_readonly(*db, err, sizeof err) != 0) {
        store_close(*db);
        *db = NULL;
        return say(2, err);
    }
    return 0;
}

int calib_show_observed_main(int argc, char **argv)
{
    static const int allowed[] = { O_DB, O_HELP, 0 };
    obs_opts o;
    int rc = parse("calib show observed", argc, argv,
                   "usage: latsim calib show observed ID [--db PATH]\n\nOne imported observed run: provenance, server, "
                   "observed statistics.\n", allowed, &o);
    if (rc) return rc == 1 ? 0 : rc;
    char err[2048];
    int64_t id;
    if (!o.file) return say(2, "calib show observed: expected one observed run ID (see latsim calib list)");
    if (cu_parse_id("observed run", o.file, &id, err, sizeof err) != 0) {
        char m[2200];
        snprintf(m, sizeof m, "calib show observed: %s (see latsim calib list)", err);
        return say(2, m);
    }
    sqlite3 *db = NULL;
    if ((rc = open_readonly(cu_db_path(o.db), &db)) != 0) return rc;
    int s = cobsdb_show(db, id, stdout, err, sizeof err);
    store_close(db);
    return s == 0 ? 0 : say(s == 1 ? 2 : 1, err);
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
    int rc = parse("calib import engine-log", argc, argv, ENGLOG_USAGE, allowed, &o);
    if (rc) return rc == 1 ? 0 : rc;
    if (!o.file) return say(2, "calib import engine-log: missing FILE (see latsim calib import engine-log --help)");
    if (!o.scenario)
        return say(2, "calib import engine-log: --scenario S.ini is required: the scenario of the server that wrote the log");
    char err[2048];
    const char *path = cu_db_path(o.db);
    if (cu_check_db_path(path, err, sizeof err) != 0) return say(2, err);
    /* The one check of the inputs before any work (a FIFO would block). */
    if (cu_check_in("calib import engine-log", NULL, o.file, INFILE_MAX_OBSERVED, err, sizeof err) != 0 ||
        cu_check_in("calib import engine-log", "--scenario", o.scenario, INFILE_MAX_SCENARIO, err, sizeof err) != 0)
        return say(2, err);
    scenario *sc = scenario_new();
    if (!sc) return say(1, "out of memory");
    if ((rc = load_scenario(o.scenario, NULL, sc)) != 0) {
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
    if (cobs_find_pool(sc, o.pool, &idx, err, sizeof err) != 0) { rc = say(2, err); goto out; }
    if ((rc = celog_read(o.file, &log, err, sizeof err)) != 0) { say(rc, err); goto out; }
    if (store_open_lookup(path, &db, err, sizeof err) != 0 || scenario_resolve(sc, db, err, sizeof err) != 0) {
        rc = say(strstr(err, "out of memory") ? 1 : 2, err);
        goto out;
    }
    cobs_describe(sc, idx, &srv);
    if (catalog_model(db, srv.model, &model, err, sizeof err) != 0 || catalog_gpu(db, srv.gpu, &gpu, err, sizeof err) != 0) {
        rc = say(2, err);
        goto out;
    }
    store_close(db);
    db = NULL;
    celog_server cs = { .model = &model, .gpu = &gpu, .weights = srv.weights, .tp = srv.tp,
                        .kv_blocks = srv.kv_blocks, .block_tokens = srv.block_tokens, .budget = srv.chunk_tokens };
    if (celog_windows(&log, &cs, &w, &nw, &below) != 0) { rc = say(1, "out of memory"); goto out; }
    if (nw == 0) {
        snprintf(err, sizeof err, "%s: no steady window (%d or more intervals of pure decode, or of prompts with a queue "
                 "and KV usage below %.0f %%%s)%s: nothing stored", o.file, CELOG_MIN_ROWS, 100 * CELOG_KV_FREE,
                 srv.chunk_tokens > 0 ? "" : "; the pool has no chunked-prefill budget, so no prefill window",
                 below ? "; every one was faster than the hardware floor" : "");
        rc = say(2, err);
        goto out;
    }
    englog_job j = { .file = o.file, .w = w, .n = nw, .srv = &srv, .tool = "latsim " LATSIM_VERSION };
    rc = cu_write_db(path, englog_write, &j, NULL, err, sizeof err);
    if (rc != 0) { say(rc, err); goto out; }
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
    int rc = parse("calib forget", argc, argv,
                   "usage: latsim calib forget RUN [--db PATH]\n\nRemoves stored observed run RUN (latsim calib list): "
                   "its requests or levels and its\nlinks to the fits made from it (those fits are kept).  A run that "
                   "cannot be\nreplayed otherwise blocks every later fit of its model and GPU.\n", allowed, &o);
    if (rc) return rc == 1 ? 0 : rc;
    char err[2048];
    forget_job j = { 0 };
    if (!o.file) return say(2, "calib forget: expected one observed run ID (see latsim calib list)");
    if (cu_parse_id("observed run", o.file, &j.id, err, sizeof err) != 0) {
        char m[2200];
        snprintf(m, sizeof m, "calib forget: %s (see latsim calib list)", err);
        return say(2, m);
    }
    const char *path = cu_db_path(o.db);
    if (cu_check_db_path(path, err, sizeof err) != 0) return say(2, err);
    if (access(path, F_OK) != 0) {
        snprintf(err, sizeof err, "%s: no such database (nothing to forget; give --db PATH)", path);
        return say(2, err);
    }
    rc = cu_write_db(path, forget_write, &j, NULL, err, sizeof err);
    if (rc != 0) {
        char m[2200];
        snprintf(m, sizeof m, "calib forget: %s", err);
        return say(rc, m);
    }
    printf("forgot observed run %lld", (long long) j.id);
    if (j.fits) printf(" (%d fitted model%s made from it kept: latsim calib list)", j.fits, j.fits == 1 ? "" : "s");
    printf("\n");
    return 0;
}

/* ---- replay: output ------------------------------------------------------- */

static const char *STAT_NAMES[4] = { "mean", "p50", "p90", "p99" };

static double obs_stat(const cobs_stats *s, int k)
{
    return k == 0 ? s->mean : k == 1 ? s->p50 : k == 2 ? s->p90 : s->p99;
}

static double pred_stat(const stat_summary *s, int k)
{
    return k == 0 ? s->mean : k == 1 ? s->p50 : k == 2 ? s->p90 : s->p99;
}

/* The signed error of PRED against OBS, %: NAN when either is unknown or OBS is 0. */
static double err_pct(double obs, double pred)
{
    return isfinite(obs) && isfinite(pred) && obs != 0 ? 100 * (pred - obs) / obs : NAN;
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "%.10g", v);
    else fputs("null", f);
}

/* {"observed": O, "predicted": P, "error_pct": E} and, with a band (BAND: LO,
 * HI), "band": [LO, HI] (a null end: unbounded) and "covered". */
static void json_cmp_band(FILE *f, double obs, double pred, const double *band)
{
    fputs("{\"observed\": ", f);
    json_num(f, obs);
    fputs(", \"predicted\": ", f);
    json_num(f, pred);
    if (band) {
        fputs(", \"band\": [", f);
        json_num(f, band[0]);
        fputs(", ", f);
        json_num(f, band[1]);
        fprintf(f, "], \"covered\": %s", isfinite(obs) && band_covers(band[0], band[1], obs) ? "true" : "false");
    }
    fputs(", \"error_pct\": ", f);
    json_num(f, err_pct(obs, pred));
    fputc('}', f);
}


/* One table row: LABEL, observed, predicted (with BAND: "value (lo..hi)"), error. */
static void row_band(FILE *f, const char *metric, const char *stat, double obs, double pred, const double *band)
{
    char e[32], p[96], ob[32];
    double x = err_pct(obs, pred);
    if (isfinite(x)) snprintf(e, sizeof e, "%+.1f %%", x);
    else snprintf(e, sizeof e, "-");
    if (isfinite(pred) && band && isfinite(band[0]))
        snprintf(p, sizeof p, isfinite(band[1]) ? "%.6g (%.4g..%.4g)" : "%.6g (%.4g..inf)", pred, band[0], band[1]);
    else if (isfinite(pred)) snprintf(p, sizeof p, "%.6g", pred);
    else snprintf(p, sizeof p, "-");
    if (isfinite(obs)) snprintf(ob, sizeof ob, "%.6g", obs);
    else snprintf(ob, sizeof ob, "-");
    if (band) fprintf(f, "  %-16s %-5s %14s %34s %10s\n", metric, stat, ob, p, e);
    else fprintf(f, "  %-16s %-5s %14s %14s %10s\n", metric, stat, ob, p, e);
}


typedef struct replay_ctx {
    const char *file;         /* what was replayed (a file, or "observed run ID") */
    const char *format;       /* its format */
    const char *scenario;     /* the scenario's path */
    const char *pool;         /* --pool, NULL */
    int64_t run_id;           /* the stored run, 0 for a file */
    const char *note;         /* the reader's note */
    int json;                 /* --json: stdout holds the JSON object only */
    const cobs_replay *end[2];/* the replay at the band's low and high step-time factor (NULL: no band) */
} replay_ctx;

/* The 90 % band of predicted statistic K (0..3: mean, p50, p90, p99) of metric M
 * (K = -1: requests/s, -2: output tokens/s) of replay R into B; returns B, or
 * NULL when C has no band (docs/bands.md). */
static const double *pred_band(const replay_ctx *c, const cobs_replay *r, int m, int k, double *b)
{
    if (!c->end[0] || !c->end[1]) return NULL;
    double v[3];
    const cobs_replay *x[3] = { r, c->end[0], c->end[1] };
    for (int i = 0; i < 3; i++)
        v[i] = k == -1 ? x[i]->pred_rps : k == -2 ? x[i]->pred_tps
             : x[i]->have_pred[m] ? (k == 0 ? x[i]->pred[m].mean : k == 1 ? x[i]->pred[m].p50 : k == 2 ? x[i]->pred[m].p90
                                                                                                 : x[i]->pred[m].p99) : NAN;
    band_interval(v[0], v[1], v[2], NAN, &b[0], &b[1]);
    return b;
}

/* The six aggregates of level prediction P, in the order of the sweep tables. */
static void level_values(const cobs_level_pred *P, double *v)
{
    const double x[] = { P->ttft_ms, P->itl_ms, P->tpot_ms, P->e2e_ms, P->ttft_p99_ms, P->output_tps };
    memcpy(v, x, sizeof x);
}

/* The 90 % band of aggregate K of sweep level I into B (its value PRED), or NULL
 * when C has no band: the level simulated at both step-time factors. */
static const double *level_band(const replay_ctx *c, size_t i, int k, double pred, double *b)
{
    if (!c->end[0]) return NULL;
    double v1[6], v2[6];
    level_values(&c->end[0]->lv[i], v1);
    level_values(&c->end[1]->lv[i], v2);
    band_interval(pred, v1[k], v2[k], NAN, &b[0], &b[1]);
    return b;
}

static void print_table(const replay_ctx *c, const cobs_run *run, const cobs_replay *r)
{
    printf("replay of %s (%s, %zu %s) through %s%s%s\n", ERRMSG_SHOWN(c->file), c->format,
           run->nreq ? run->nreq : run->nlvl, run->nreq ? "requests" : "levels", ERRMSG_SHOWN(c->scenario),
           c->pool ? ", pool " : "", c->pool ? ERRMSG_SHOWN(c->pool) : "");
    if (c->note && c->note[0]) printf("note: %s\n", ERRMSG_SHOWN(c->note));
    if (r->note[0]) printf("note: %s\n", r->note);
    if (r->cost[0]) printf("cost model: %s\n", ERRMSG_SHOWN(r->cost));
    if (run->nlvl) {
        if (c->end[0]) printf("prediction band (90 %%): step times x%.3g..x%.3g (%s)\n", r->band.lo, r->band.hi, r->band.basis);
        printf("\n  %-12s %-20s %14s %*s %10s\n", run->lvl[0].closed ? "concurrency" : "rate", "metric", "observed",
               c->end[0] ? 34 : 14, c->end[0] ? "predicted (band)" : "predicted", "error");
        for (size_t i = 0; i < run->nlvl; i++) {
            const cobs_level *L = &run->lvl[i];
            const cobs_level_pred *P = &r->lv[i];
            const char *names[] = { "ttft_ms mean", "itl_ms mean", "tpot_ms mean", "e2e_ms mean", "ttft_ms p99",
                                    "output_tokens_per_s" };
            const double ob[] = { L->ttft_ms, L->itl_ms, L->tpot_ms, L->e2e_ms, L->ttft_p99_ms, L->output_tps };
            const double pr[] = { P->ttft_ms, P->itl_ms, P->tpot_ms, P->e2e_ms, P->ttft_p99_ms, P->output_tps };
            int first = 1;
            for (int k = 0; k < 6; k++) {
                if (isnan(ob[k])) continue;
                char lv[32] = "";
                if (first) snprintf(lv, sizeof lv, "%g", L->load);
                first = 0;
                char e[32], p[64];
                double x = err_pct(ob[k], pr[k]), b[2];
                const double *bd = isfinite(pr[k]) ? level_band(c, i, k, pr[k], b) : NULL;
                snprintf(e, sizeof e, isfinite(x) ? "%+.1f %%" : "-", x);
                if (bd && isfinite(bd[0]))
                    snprintf(p, sizeof p, isfinite(bd[1]) ? "%.6g (%.4g..%.4g)" : "%.6g (%.4g..inf)", pr[k], bd[0], bd[1]);
                else
                    snprintf(p, sizeof p, isfinite(pr[k]) ? "%.6g" : (P->saturated ? "saturated" : "-"), pr[k]);
                printf("  %-12s %-20s %14.6g %*s %10s\n", lv, names[k], ob[k], c->end[0] ? 34 : 14, p, e);
            }
        }
        printf("\n%zu simulations, %llu events, %.2f s\n", run->nlvl, (unsigned long long) r->events, r->wall_s);
        return;
    }
    printf("simulated: %llu of %zu requests served", (unsigned long long) r->served, r->nreq);
    if (r->rejected) printf(", %llu rejected or lost", (unsigned long long) r->rejected);
    printf(" in %.4g s (observed %.4g s)", r->pred_window_s, r->obs_window_s);
    if (r->backlog_grew) printf("; the backlog grew (peak queue %llu at t = %.4g s)", (unsigned long long) r->peak_queue,
                                r->peak_queue_at_s);
    if (c->end[0]) printf("\nprediction band (90 %%): step times x%.3g..x%.3g (%s)", r->band.lo, r->band.hi, r->band.basis);
    if (c->end[0]) printf("\n\n  %-16s %-5s %14s %34s %10s\n", "metric", "stat", "observed", "predicted (band)", "error");
    else printf("\n\n  %-16s %-5s %14s %14s %10s\n", "metric", "stat", "observed", "predicted", "error");
    static const char *const label[COBS_NMETRICS] = { "ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "queue_ms" };
    double b[2];
    char unobserved[128] = "";
    for (int m = 0; m < COBS_NMETRICS; m++) {
        if (r->obs[m].n == 0) {
            snprintf(unobserved + strlen(unobserved), sizeof unobserved - strlen(unobserved), "%s%s",
                     unobserved[0] ? ", " : "", cobs_metric_name((cobs_metric) m));
            continue;
        }
        for (int k = 0; k < 4; k++)
            row_band(stdout, k == 0 ? label[m] : "", STAT_NAMES[k], obs_stat(&r->obs[m], k),
                     r->have_pred[m] ? pred_stat(&r->pred[m], k) : NAN, pred_band(c, r, m, k, b));
    }
    row_band(stdout, "requests/s", "", r->obs_rps, r->pred_rps, pred_band(c, r, 0, -1, b));
    row_band(stdout, "output tokens/s", "", r->obs_tps, r->pred_tps, pred_band(c, r, 0, -2, b));
    if (unobserved[0]) printf("not observed in this run: %s\n", unobserved);
}

static void print_json(const replay_ctx *c, const cobs_run *run, const cobs_replay *r)
{
    FILE *f = stdout;
    fputs("{\"file\": ", f);
    report_json_str(f, c->file);
    fputs(", \"format\": ", f);
    report_json_str(f, c->format);
    fputs(", \"run_id\": ", f);
    if (c->run_id) fprintf(f, "%lld", (long long) c->run_id);
    else fputs("null", f);
    fputs(", \"scenario\": ", f);
    report_json_str(f, c->scenario);
    fputs(", \"pool\": ", f);
    if (c->pool) report_json_str(f, c->pool);
    else fputs("null", f);
    fputs(", \"note\": ", f);
    report_json_str(f, c->note ? c->note : "");
    fputs(", \"replay_note\": ", f);
    report_json_str(f, r->note);
    fputs(", \"cost_model\": ", f);
    report_json_str(f, r->cost);
    fprintf(f, ", \"events\": %llu, \"wall_s\": %.6g", (unsigned long long) r->events, r->wall_s);
    if (run->nlvl) {
        fputs(", \"levels\": [", f);
        for (size_t i = 0; i < run->nlvl; i++) {
            const cobs_level *L = &run->lvl[i];
            const cobs_level_pred *P = &r->lv[i];
            fprintf(f, "%s{\"%s\": %.10g, \"input_tokens\": %d, \"output_tokens\": %d, \"requests\": %llu, \"saturated\": %s, "
                    "\"metrics\": {", i ? ", " : "", L->closed ? "concurrency" : "rate", L->load, (int) L->input_tokens,
                    (int) L->output_tokens, (unsigned long long) P->requests, P->saturated ? "true" : "false");
            const char *names[] = { "ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "ttft_p99_ms", "output_tokens_per_s" };
            const double ob[] = { L->ttft_ms, L->itl_ms, L->tpot_ms, L->e2e_ms, L->ttft_p99_ms, L->output_tps };
            const double pr[] = { P->ttft_ms, P->itl_ms, P->tpot_ms, P->e2e_ms, P->ttft_p99_ms, P->output_tps };
            int first = 1;
            for (int k = 0; k < 6; k++) {
                if (isnan(ob[k])) continue;
                fprintf(f, "%s\"%s\": ", first ? "" : ", ", names[k]);
                double b[2];
                json_cmp_band(f, ob[k], pr[k], isfinite(pr[k]) ? level_band(c, i, k, pr[k], b) : NULL);
                first = 0;
            }
            fputs("}}", f);
        }
        fputs("]", f);
        if (c->end[0]) {
            fprintf(f, ", \"prediction_band\": {\"level\": 0.9, \"basis\": ");
            report_json_str(f, r->band.basis);
            fprintf(f, ", \"validated\": %s, \"step_time_factors\": [%.6g, %.6g]}", r->band.validated ? "true" : "false",
                    r->band.lo, r->band.hi);
        }
        fputs("}\n", f);
        return;
    }
    fprintf(f, ", \"requests\": %zu, \"simulated\": {\"served\": %llu, \"rejected\": %llu, \"window_s\": ", r->nreq,
            (unsigned long long) r->served, (unsigned long long) r->rejected);
    json_num(f, r->pred_window_s);
    fprintf(f, ", \"backlog_grew\": %s, \"peak_queue\": %llu, \"peak_queue_at_s\": ", r->backlog_grew ? "true" : "false",
            (unsigned long long) r->peak_queue);
    json_num(f, r->peak_queue_at_s);
    fputs("}, \"observed_window_s\": ", f);
    json_num(f, r->obs_window_s);
    if (c->end[0]) {
        fprintf(f, ", \"prediction_band\": {\"level\": 0.9, \"basis\": ");
        report_json_str(f, r->band.basis);
        fprintf(f, ", \"validated\": %s, \"step_time_factors\": [%.6g, %.6g]}", r->band.validated ? "true" : "false",
                r->band.lo, r->band.hi);
    }
    fputs(", \"metrics\": {", f);
    int first = 1;
    double b[2];
    for (int m = 0; m < COBS_NMETRICS; m++) {
        if (r->obs[m].n == 0) continue;
        fprintf(f, "%s\"%s_ms\": {\"n\": %zu", first ? "" : ", ", cobs_metric_name((cobs_metric) m), r->obs[m].n);
        first = 0;
        for (int k = 0; k < 4; k++) {
            fprintf(f, ", \"%s\": ", STAT_NAMES[k]);
            json_cmp_band(f, obs_stat(&r->obs[m], k), r->have_pred[m] ? pred_stat(&r->pred[m], k) : NAN, pred_band(c, r, m, k, b));
        }
        fputc('}', f);
    }
    fputs("}, \"throughput\": {\"requests_per_s\": ", f);
    json_cmp_band(f, r->obs_rps, r->pred_rps, pred_band(c, r, 0, -1, b));
    fputs(", \"output_tokens_per_s\": ", f);
    json_cmp_band(f, r->obs_tps, r->pred_tps, pred_band(c, r, 0, -2, b));
    fputs("}}\n", f);
}

/* ---- replay: plot --------------------------------------------------------- */

/* Writes the datablocks and variables of replay.gp to F. */
static void plot_data(FILE *f, const replay_ctx *c, const cobs_replay *r)
{
    char metrics[128] = "";
    fputs("$obs << EOD\n", f);
    int first = 1;
    for (int m = 0; m < COBS_NMETRICS; m++) {
        if (r->obs[m].n == 0 || !r->have_pred[m]) continue;
        if (!first) fputs("\n\n", f);
        first = 0;
        snprintf(metrics + strlen(metrics), sizeof metrics - strlen(metrics), "%s%s", metrics[0] ? " " : "",
                 cobs_metric_name((cobs_metric) m));
        size_t n = r->obs[m].n, step = n > 4000 ? n / 2000 : 1;   /* at most a few thousand points */
        for (size_t k = 0; k < n; k += step)
            if (r->obs_sorted[m][k] > 0) fprintf(f, "%.9g %.6g\n", r->obs_sorted[m][k], (double) (k + 1) / (double) n);
        if (r->obs_sorted[m][n - 1] > 0) fprintf(f, "%.9g 1\n", r->obs_sorted[m][n - 1]);
    }
    fputs("EOD\n$pred << EOD\n", f);
    first = 1;
    for (int m = 0; m < COBS_NMETRICS; m++) {
        if (r->obs[m].n == 0 || !r->have_pred[m]) continue;
        if (!first) fputs("\n\n", f);
        first = 0;
        const stat_summary *s = &r->pred[m];
        for (int k = 0; k < STAT_NCDF; k++)
            if (s->cdf[k] > 0) fprintf(f, "%.9g %.6g\n", s->cdf[k], stat_cdf_probs[k]);
        if (s->max > 0) fprintf(f, "%.9g 1\n", s->max);
    }
    fputs("EOD\n", f);
    fprintf(f, "metrics = '%s'\ntitle_text = ", metrics);
    char title[2600];
    snprintf(title, sizeof title, "Observed vs predicted: %s through %s", c->file, c->scenario);
    gp_quote(f, title);
    fputc('\n', f);
}

/* Draws DIR/replay-cdf.png.  Returns 0 (also when gnuplot is missing: a note
 * says so) or the exit status (printed). */
static int plot_replay(const char *dir, const replay_ctx *c, const cobs_run *run, const cobs_replay *r)
{
    char m[5200], scripts[4096], out[4200], script[4400];
    if (run->nlvl) return say(0, "note: --plot draws the CDFs of a request run; a sweep's aggregates have none (no plot)"), 0;
    if (!gp_on_path()) return say(0, "note: --plot: gnuplot not found (Debian: gnuplot-nox): no plot drawn"), 0;
    if (cu_plots_dir("replay.gp", scripts, sizeof scripts) != 0)
        return say(1, "replay: --plot: plots/replay.gp not found (set LATSIM_PLOTS to the plots folder)");
    struct stat sb;
    if (stat(dir, &sb) != 0 && mkdir(dir, 0777) != 0) {
        snprintf(m, sizeof m, "replay: --plot %s: cannot create the folder: %s", dir, strerror(errno));
        return say(2, m);
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        snprintf(m, sizeof m, "replay: --plot %s: not a folder", dir);
        return say(2, m);
    }
    snprintf(out, sizeof out, "%s/replay-cdf.png", dir);
    snprintf(script, sizeof script, "%s/replay.gp", scripts);
    gp_proc g;
    char gm[256];
    if (gp_open(&g, gm, sizeof gm) != 0) {
        snprintf(m, sizeof m, "replay: --plot: gnuplot: %s", gm);
        return say(1, m);
    }
    fputs("set terminal pngcairo size 1200,850 font 'Sans,10'\nset output ", g.in);
    gp_quote(g.in, out);
    fputs("\nset encoding utf8\n", g.in);
    plot_data(g.in, c, r);
    fputs("load ", g.in);
    gp_quote(g.in, script);
    fputs("\nunset output\nexit\n", g.in);
    char last[512];
    int st = gp_close(&g, last, sizeof last);
    if (st != 0 || stat(out, &sb) != 0 || sb.st_size == 0) {
        snprintf(m, sizeof m, "replay: --plot: gnuplot failed drawing %.4200s%s%.500s", out, last[0] ? ": " : "", last);
        return say(1, m);
    }
    fprintf(c->json ? stderr : stdout, "wrote %s\n", ERRMSG_SHOWN(out));
    return 0;
}

/* ---- replay ----------------------------------------------------------------- */

int replay_main(int argc, char **argv)
{
    static const int allowed[] = { O_SCENARIO, O_POOL, O_FORMAT, O_DB, O_PLOT, O_RUN, O_BENCH, O_JSON, O_HELP, O_META, 0 };
    obs_opts o;
    int rc = parse("replay", argc, argv, REPLAY_USAGE, allowed, &o);
    if (rc) return rc == 1 ? 0 : rc;
    char err[2048];
    if (o.run && o.file) return say(2, "replay: give FILE or --run ID, not both");
    if (!o.run && !o.file) return say(2, "replay: missing FILE or --run ID (see latsim replay --help)");
    if (!o.run && !o.scenario) return say(2, "replay: --scenario S.ini is required: the server to replay the run on");
    if (o.run && (o.format || o.benchmark >= 0)) return say(2, "replay: --format and --benchmark are for a FILE, not --run");
    int64_t run_id = 0;
    if (o.run && cu_parse_id("observed run", o.run, &run_id, err, sizeof err) != 0) {
        char m[2200];
        snprintf(m, sizeof m, "replay: --run: %s (see latsim calib list)", err);
        return say(2, m);
    }
    if (o.plot && !o.plot[0]) return say(2, "replay: --plot: empty folder name");
    const char *path = cu_db_path(o.db);
    if (cu_check_db_path(path, err, sizeof err) != 0) return say(2, err);
    /* The one check of every input and output before any work. */
    static const char *const PLOTS[] = { "replay-cdf.png", NULL };
    if ((o.file && cu_check_in("replay", NULL, o.file, INFILE_MAX_OBSERVED, err, sizeof err) != 0)
        || (o.scenario && cu_check_in("replay", "--scenario", o.scenario, INFILE_MAX_SCENARIO, err, sizeof err) != 0)
        || (o.meta && cu_check_in("replay", "--meta", o.meta, INFILE_MAX_JSON, err, sizeof err) != 0)
        || (o.plot && cu_check_out_dir("replay", "--plot", o.plot, PLOTS, err, sizeof err) != 0))
        return say(2, err);
    cobs_run run = { 0 };
    cobs_stored h;
    char *text = NULL;
    char *eff = NULL;   /* the scenario's text without its [workload] when that did not load, else NULL */
    char msets[16][128];   /* --meta: the values laid over the pool (apply_meta) */
    int nmsets = 0;
    sqlite3 *db = NULL;
    scenario *sc = scenario_new();
    if (!sc) return say(1, "out of memory");
    cobs_replay r = { 0 }, rb[2] = { { 0 }, { 0 } };
    scenario *bsc[2] = { NULL, NULL };
    const char *scenario_name = o.scenario;
    if (run_id) {
        if ((rc = open_readonly(path, &db)) != 0) return rc;
        int s = cobsdb_load(db, run_id, &h, &run, o.scenario ? NULL : &text, err, sizeof err);
        if (s != 0) { rc = say(s == 1 ? 2 : 1, err); goto out; }
        if (!o.scenario) scenario_name = h.scenario_path;
    } else {
        if ((rc = read_file(&o, &run)) != 0) goto out;
        if (store_open_lookup(path, &db, err, sizeof err) != 0) { rc = say(2, err); goto out; }
    }
    {
        /* The replay replaces the workload: a [workload] that does not load (a
         * copied scenario whose trace is elsewhere) is loaded without it. */
        char lerr[2048];
        int s = text ? scenario_load_text(sc, scenario_name, text, NULL, 0, lerr, sizeof lerr)
                     : scenario_load(sc, scenario_name, NULL, 0, lerr, sizeof lerr);
        if (s != 0 && strstr(lerr, "[workload]")) {
            char *file = text ? NULL : read_all(scenario_name);
            char *alt = replay_text(text ? text : file ? file : "");
            scenario_delete(sc);
            sc = scenario_new();
            if (!sc) { free(alt); free(file); rc = say(1, "out of memory"); goto out; }
            s = !alt || !(text || file) ? -1 : scenario_load_text(sc, scenario_name, alt, NULL, 0, lerr, sizeof lerr);
            if (s == 0) fprintf(stderr, "latsim: replay: %s: its [workload] is not used (%s)\n", ERRMSG_SHOWN(scenario_name),
                                "the observed requests replace it");
            if (s == 0) eff = alt;   /* the text every later load of the scenario uses (--meta, the band) */
            else free(alt);
            free(file);
        }
        if (s != 0) { rc = say(strstr(lerr, "out of memory") ? 1 : 2, lerr); goto out; }
    }
    if (o.meta && (rc = apply_meta(o.meta, scenario_name, eff ? eff : text, o.pool, db, &sc, msets, &nmsets)) != 0) goto out;
    rc = cobs_replay_run(&run, sc, o.pool, db, &r, err, sizeof err);
    if (rc) { say(rc, err); goto out; }
    /* The prediction band: the replay again with every LLM pool's step times
     * at both ends of its cost model's 90 % error (docs/bands.md). */
    for (int k = 0; k < 2 && r.nband > 0; k++) {
        int np = scenario_npools(sc), n = 0;
        const char *sets[64 + 16];
        char buf[64][200];
        for (int i = 0; i < nmsets; i++) sets[n++] = msets[i];   /* --meta's values, as the replay had them */
        for (int i = 0; i < np && n < 64 + nmsets; i++) {
            if (!scenario_pool_takes(sc, i, "step_time_scale")) continue;
            const char *own = scenario_pool_value(sc, i, "step_time_scale");
            double f = (k ? r.band.hi : r.band.lo) * (own && strtod(own, NULL) > 0 ? strtod(own, NULL) : 1);
            int b = n - nmsets;
            snprintf(buf[b], sizeof buf[b], "pool %s.step_time_scale=%.17g", scenario_pool_name(sc, i), f);
            sets[n++] = buf[b];
        }
        if (!(bsc[k] = scenario_new())) { rc = say(1, "out of memory"); goto out; }
        if ((rc = load_scenario_sets(scenario_name, eff ? eff : text, sets, n, bsc[k])) != 0) goto out;
        int quiet = cu_stderr_quiet();    /* its warnings were said by the replay itself */
        rc = cobs_replay_run(&run, bsc[k], o.pool, db, &rb[k], err, sizeof err);
        cu_stderr_restore(quiet);
        if (rc) { say(rc, err); goto out; }
    }
    char label[64];
    snprintf(label, sizeof label, "observed run %lld", (long long) run_id);
    replay_ctx c = { .file = run_id ? label : o.file, .format = cobs_format_name(run.format), .scenario = scenario_name,
                     .pool = o.pool, .run_id = run_id, .note = run.note, .json = o.json,
                     .end = { bsc[1] ? &rb[0] : NULL, bsc[1] ? &rb[1] : NULL } };
    if (o.json) print_json(&c, &run, &r);
    else print_table(&c, &run, &r);
    fflush(stdout);
    if (o.plot) rc = plot_replay(o.plot, &c, &run, &r);
out:
    free(eff);
    cobs_replay_free(&r);
    for (int k = 0; k < 2; k++) { cobs_replay_free(&rb[k]); scenario_delete(bsc[k]); }
    scenario_delete(sc);
    if (db) store_close(db);
    free(text);
    cobs_free(&run);
    return rc;
}

/* info.c -- the commands that print what is stored or known: `latsim runs`,
 * `latsim show RUN`, `latsim catalog [add FILE]` and `latsim keys`.  runs,
 * show and catalog only read the database (opened read-only, never given a
 * schema: an empty or foreign file is refused unchanged); `catalog add` writes
 * its entries in one transaction. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cliopt.h"
#include "cliutil.h"
#include "commands.h"
#include "latsim/catalog.h"
#include "latsim/errmsg.h"
#include "latsim/scenario.h"
#include "latsim/store.h"

static const cli_opt DB_ONLY[] = { CLI_OPT_DB, { NULL } };

static const cli_cmd RUNS = {
    "runs", "",
    "Lists the stored runs, one line each, newest last: id, start time, status,\n"
    "seed, wall time, scenario, E2E P99.  The database is opened read-only (default $LATSIM_DB,\n"
    "else ./latsim.db).  Exit status: 0, 2 bad input (no such database).\n",
    "", DB_ONLY, 0, 0,
};

static const cli_cmd SHOW = {
    "show", "RUN",
    "Prints stored run RUN (an ID from latsim runs): metadata, effective\n"
    "configuration, every statistic and its SLO terms as the run printed them.\n"
    "The database is opened read-only.  Exit status: 0, 1 failure, 2 bad input.\n",
    "", DB_ONLY, 0, 1,
};

enum { OPT_HF = 1, OPT_NAME, OPT_WEIGHTS };
static const cli_opt CATALOG_OPTS[] = {
    CLI_OPT_DB,
    { "hf", OPT_HF, "CONFIG.json", "add: a model from its Hugging Face config.json (geometry and parameter count)", 0 },
    { "name", OPT_NAME, "NAME", "add --hf: the catalog name of the model", 0 },
    { "weights", OPT_WEIGHTS, "P", "add --hf: the precision of its weights (default: the config's torch_dtype)", 0 },
    { NULL },
};

static const cli_cmd CATALOG = {
    "catalog", "\nadd FILE\nadd --hf CONFIG.json --name NAME [--weights P]",
    "Lists the GPUs and models of the catalog (built in, and those added to the\n"
    "database), with their sources; `add FILE` stores the [gpu NAME] and [model NAME]\n"
    "sections of FILE, validated like a scenario's, all or none; `add --hf` stores a\n"
    "model read from its Hugging Face config.json, its parameter count computed from\n"
    "the geometry (docs/catalog.md).\n"
    "Exit status: 0, 1 failure, 2 bad input.\n",
    "", CATALOG_OPTS, 0, 0,
};

/* catalog's options: --hf, --name, --weights. */
typedef struct catalog_opts { const char *hf, *name, *weights; } catalog_opts;
static int catalog_opt(void *ctx, int id, const char *val)
{
    catalog_opts *o = ctx;
    if (id == OPT_HF) o->hf = val;
    else if (id == OPT_NAME) o->name = val;
    else if (id == OPT_WEIGHTS) o->weights = val;
    return 0;
}

enum { OPT_MARKDOWN = 1 };
static const cli_opt KEYS_OPTS[] = {
    { "markdown", OPT_MARKDOWN, NULL, "print them as Markdown tables (docs/scenarios.md is that output)", 0 },
    { NULL },
};

static const cli_cmd KEYS = {
    "keys", "",
    "Lists every scenario section and key with its default and meaning\n"
    "(docs/scenarios.md).\n",
    "", KEYS_OPTS, 0, 0,
};

/* keys' option function: --markdown. */
static int keys_opt(void *ctx, int id, const char *val)
{
    (void) val;
    if (id == OPT_MARKDOWN) *(int *) ctx = 1;
    return 0;
}

/* The exit status of a failed open or load: 1 when memory ran out, else 2. */
static int load_rc(const char *err)
{
    return strstr(err, "out of memory") ? 1 : 2;
}

/* Parses the command line of C (only --db) and checks the database path.
 * Returns CLI_GO with *PATH set, or the exit status. */
static int parse_db(const cli_cmd *c, int argc, char **argv, cli_args *a, const char **path)
{
    int rc = cli_parse(c, argc, argv, a, NULL, NULL);
    if (rc != CLI_GO) return rc;
    *path = cu_db_path(a->db);
    return CLI_GO;
}

/* Opens the database at PATH read-only (checked first).  Returns 0, or the
 * exit status (printed). */
static int open_ro(const char *path, sqlite3 **db)
{
    char err[2048];
    if (cu_check_db_path(path, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (store_open_readonly(path, db, err, sizeof err) != 0) return cu_die(load_rc(err), "%s", err);
    return 0;
}

int runs_main(int argc, char **argv)
{
    cli_args a;
    const char *path;
    sqlite3 *db = NULL;
    char err[2048] = "";
    int rc = parse_db(&RUNS, argc, argv, &a, &path);
    if (rc != CLI_GO) return rc;
    if (a.npos != 0) return cu_die(2, "runs: unexpected argument '%s'", a.pos[0]);
    if ((rc = open_ro(path, &db)) != 0) return rc;
    rc = store_list_runs(db, stdout, err, sizeof err) == 0 ? 0 : 1;
    if (rc != 0 && err[0]) cu_die(rc, "%s", err);
    store_close(db);
    return rc;
}

int show_main(int argc, char **argv)
{
    cli_args a;
    const char *path;
    sqlite3 *db = NULL;
    char err[2048] = "";
    int64_t id;
    int rc = parse_db(&SHOW, argc, argv, &a, &path);
    if (rc != CLI_GO) return rc;
    /* The argument is checked before the database. */
    if (a.npos != 1) return cu_die(2, "show: expected one run ID (see latsim runs)");
    if (cu_parse_id("run", a.pos[0], &id, err, sizeof err) != 0) return cu_die(2, "show: %s (see latsim runs)", err);
    if ((rc = open_ro(path, &db)) != 0) return rc;
    int s = store_show_run(db, id, stdout, err, sizeof err);
    if (s == 0 && planstore_show_slo(db, id, stdout, err, sizeof err) != 0) s = -1;
    rc = s == 0 ? 0 : (s == 1 ? 2 : 1);
    if (rc != 0 && err[0]) cu_die(rc, "%s", err);
    store_close(db);
    return rc;
}

/* cu_write_fn of `catalog add`: puts every entry of ARG (the file loaded as a
 * scenario); they were validated before, so a failure here is the database's
 * (exit 1). */
static int catalog_add_write(sqlite3 *db, int dry, void *arg, char *err, size_t n)
{
    const scenario *sc = arg;
    int ng, nm;
    const gpu_spec *gpus = scenario_gpus(sc, &ng);
    const model_spec *models = scenario_models(sc, &nm);
    for (int i = 0; i < ng; i++) {
        if (catalog_put_gpu(db, &gpus[i], err, n) != 0) return 1;
        if (!dry) printf("added gpu %s\n", ERRMSG_SHOWN(gpus[i].name));
    }
    for (int i = 0; i < nm; i++) {
        if (catalog_put_model(db, &models[i], err, n) != 0) return 1;
        if (!dry) printf("added model %s\n", ERRMSG_SHOWN(models[i].name));
    }
    return 0;
}

/* `latsim catalog add FILE`: the file is read and every entry validated like a
 * scenario's before the database is opened; then all of them are written in one
 * transaction (cu_write_db).  Returns the exit status. */
static int catalog_add(const char *file, const char *path)
{
    char err[2048];
    scenario *sc = scenario_new();
    const char *fake[] = { "workload.rate=1", "pool x.service_ms=const(1)" };
    int rc = 0, ng = 0, nm = 0;
    const gpu_spec *gpus = NULL;
    const model_spec *models = NULL;
    if (!sc) { snprintf(err, sizeof err, "out of memory"); rc = 1; }
    else if (scenario_load(sc, file, fake, 2, err, sizeof err) != 0) rc = load_rc(err);
    else {
        gpus = scenario_gpus(sc, &ng);
        models = scenario_models(sc, &nm);
        if (ng + nm == 0) { snprintf(err, sizeof err, "%s: no [gpu NAME] or [model NAME] section", file); rc = 2; }
    }
    for (int i = 0; rc == 0 && i < ng; i++)
        if (catalog_check_gpu(&gpus[i], err, sizeof err) != 0) rc = 2;
    for (int i = 0; rc == 0 && i < nm; i++)
        if (catalog_check_model(&models[i], err, sizeof err) != 0) rc = 2;
    if (rc == 0) rc = cu_write_db(path, catalog_add_write, sc, NULL, err, sizeof err);
    if (rc != 0) cu_die(rc, "%s", err);
    scenario_delete(sc);
    return rc;
}

/* cu_write_fn of `catalog add --hf`: the model ARG, validated before. */
static int catalog_hf_write(sqlite3 *db, int dry, void *arg, char *err, size_t n)
{
    const model_spec *m = arg;
    if (catalog_put_model(db, m, err, n) != 0) return 1;
    if (!dry) printf("added model %s\n", ERRMSG_SHOWN(m->name));
    return 0;
}

/* `latsim catalog add --hf CONFIG.json --name NAME [--weights P]`: the config is
 * read and the model validated before the database is opened.  Returns the exit status. */
static int catalog_add_hf(const catalog_opts *o, const char *path)
{
    char err[2048];
    model_spec m;
    hf_moe moe;
    if (!o->name) return cu_die(2, "catalog: add --hf: missing --name NAME");
    if (cu_check_in("catalog add", "--hf", o->hf, INFILE_MAX_JSON, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (hf_config_read(o->hf, o->name, o->weights, &m, &moe, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (catalog_check_model(&m, err, sizeof err) != 0) return cu_die(2, "%s: %s", o->hf, err);
    int rc = cu_write_db(path, catalog_hf_write, &m, NULL, err, sizeof err);
    if (rc != 0) return cu_die(rc, "%s", err);
    if (moe.experts > 0)
        printf("  %d layers, hidden %d, %d experts (%d per token): %.4g parameters, %.4g active per token\n",
               m.layers, m.hidden, moe.experts, moe.experts_per_token, m.params, moe.active_params);
    else
        printf("  %d layers, hidden %d: %.4g parameters\n", m.layers, m.hidden, m.params);
    return 0;
}

int catalog_main(int argc, char **argv)
{
    cli_args a;
    const char *path;
    sqlite3 *db = NULL;
    char err[2048] = "";
    catalog_opts co = { 0 };
    int rc = cli_parse(&CATALOG, argc, argv, &a, catalog_opt, &co);
    if (rc != CLI_GO) return rc;
    path = cu_db_path(a.db);
    if (cu_check_db_path(path, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (co.hf || co.name || co.weights) {
        if (a.npos != 1 || strcmp(a.pos[0], "add") || !co.hf)
            return cu_die(2, "catalog: --hf, --name and --weights go with 'add --hf CONFIG.json --name NAME'");
        return catalog_add_hf(&co, path);
    }
    if (a.npos > 0) {
        if (a.npos != 2 || strcmp(a.pos[0], "add")) return cu_die(2, "catalog: expected no argument or 'add FILE'");
        return catalog_add(a.pos[1], path);
    }
    /* Without a database, the built-in catalog (in memory). */
    if (access(path, F_OK) != 0) {
        if (store_open(":memory:", &db, err, sizeof err) != 0) return cu_die(load_rc(err), "%s", err);
    } else if ((rc = open_ro(path, &db)) != 0) return rc;
    rc = catalog_print(db, stdout, err, sizeof err) == 0 ? 0 : 1;
    if (rc != 0 && err[0]) cu_die(rc, "%s", err);
    store_close(db);
    return rc;
}

int keys_main(int argc, char **argv)
{
    cli_args a;
    int md = 0;
    int rc = cli_parse(&KEYS, argc, argv, &a, keys_opt, &md);
    if (rc != CLI_GO) return rc;
    if (a.npos > 0) return cu_die(2, "keys: unexpected argument '%s' (see latsim keys --help)", a.pos[0]);
    scenario_print_keys(stdout, md);
    return 0;
}

/* obsopts.h -- what the commands on observed runs share (cli/observed.c,
 * cli/obsreplay.c): their options and parsing, reading the observed run,
 * loading the scenario and laying server metadata over it, opening the
 * database. */
#ifndef LATSIM_CLI_OBSOPTS_H
#define LATSIM_CLI_OBSOPTS_H

#include <sqlite3.h>
#include "calib.h"
#include "latsim/scenario.h"

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

/* Prints "latsim: MSG" as one printable line; returns CODE. */
int oo_say(int code, const char *msg);

/* Parses ARGV (ARGC arguments after the command CMD) with getopt_long, taking
 * the long options of ALLOWED (a NUL-ended string of O_* codes) and at most one
 * positional argument.  Returns 0, 1 for --help (USAGE printed), or 2 after
 * printing the one-line error. */
int oo_parse(const char *cmd, int argc, char **argv, const char *usage, const int *allowed, obs_opts *o);

/* Reads the run O names (a file): the one-line error printed.  Returns 0 or the exit status. */
int oo_read_file(const obs_opts *o, cobs_run *run);

/* Loads the scenario at PATH (or, when TEXT is given, from TEXT under the name
 * PATH), with the NSETS assignments SETS.  Returns 0 or the exit status (printed). */
int oo_load_scenario_sets(const char *path, const char *text, const char **sets, int nsets, scenario *sc);

int oo_load_scenario(const char *path, const char *text, scenario *sc);

/* The bytes of file PATH, NUL-terminated, malloc'd; NULL when it cannot be read. */
char *oo_read_all(const char *path);

/* The text of scenario SRC for a replay, which replaces its workload: the
 * [workload] section's arrival keys, trace and token-length keys (a copied
 * scenario's trace or empirical file need not exist) replaced by `arrival =
 * poisson` and `rate = 1`; its other keys (target, classes' attributes) and
 * every other section kept, line for line (so that errors keep their lines).
 * Returns a malloc'd string, or NULL when out of memory. */
char *oo_replay_text(const char *src);

/* Lays the server metadata META (cobsmeta.h) over *SC (loaded from PATH, or
 * from TEXT under that name): *SC is resolved against DB, the overrides found
 * for pool POOL (NULL: the first LLM pool), a contradiction printed as one
 * warning line and a replaced derived value as one note, and *SC reloaded
 * with the overrides (unresolved).  Returns 0 or the exit status (printed). */
int oo_apply_meta(const char *meta, const char *path, const char *text, const char *pool, sqlite3 *db, scenario **sc,
               char (*sets)[128], int *nsets);

/* Opens an existing database read-only with its calibration tables (empty ones
 * in the connection's temporary schema when it has none).  Returns 0 or 2 (printed). */
int oo_open_readonly(const char *path, sqlite3 **db);

#endif

/* obsopts.c -- the options and inputs the commands on observed runs share:
 * option parsing, the observed run's file, the scenario (with a replay's
 * workload and the server's metadata), the database opened read-only. */
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

/* Prints USAGE on OUT, its "{formats}" the observed formats' rows (cobs_format_list). */
static void print_usage(const char *usage, FILE *out)
{
    const char *at = strstr(usage, "{formats}");
    if (!at) { fputs(usage, out); return; }
    fprintf(out, "%.*s%s%s", (int) (at - usage), usage, cobs_format_list(), at + strlen("{formats}"));
}

/* Prints "latsim: MSG" as one printable line; returns CODE. */
int oo_say(int code, const char *msg)
{
    char line[4096];
    fprintf(stderr, "latsim: %s\n", errmsg_field(msg, line, sizeof line));
    return code;
}


/* Parses ARGV (ARGC arguments after the command CMD) with getopt_long, taking
 * the long options of ALLOWED (a NUL-ended string of O_* codes) and at most one
 * positional argument.  Returns 0, 1 for --help (USAGE printed), or 2 after
 * printing the one-line error. */
int oo_parse(const char *cmd, int argc, char **argv, const char *usage, const int *allowed, obs_opts *o)
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
    if (!av) return oo_say(1, "out of memory");
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
                rc = oo_say(2, msg);
            }
            o->benchmark = (int) k;
            break;
        }
        case ':':
            snprintf(msg, sizeof msg, "%s: %s needs a value (see latsim %s --help)", cmd, av[optind - 1], cmd);
            rc = oo_say(2, msg);
            break;
        default:
            snprintf(msg, sizeof msg, "%s: unknown option '%s' (see latsim %s --help)", cmd, av[optind - 1], cmd);
            rc = oo_say(2, msg);
        }
    }
    for (int i = optind; rc == 0 && i < argc + 1; i++) {
        if (o->file) {
            snprintf(msg, sizeof msg, "%s: more than one file ('%s', '%s')", cmd, o->file, av[i]);
            rc = oo_say(2, msg);
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
    oo_say(0, m);
}

/* Reads the run O names (a file): the one-line error printed.  Returns 0 or the exit status. */
int oo_read_file(const obs_opts *o, cobs_run *run)
{
    char err[2048];
    cobs_read_opts ro = { .format = o->format, .benchmark = o->benchmark, .seed = 1 };
    int rc = cobs_read(o->file, &ro, run, err, sizeof err);
    if (rc != 0) return oo_say(rc, err);
    print_note(run);
    return 0;
}

/* Loads the scenario at PATH (or, when TEXT is given, from TEXT under the name
 * PATH), with the NSETS assignments SETS.  Returns 0 or the exit status (printed). */
int oo_load_scenario_sets(const char *path, const char *text, const char **sets, int nsets, scenario *sc)
{
    char err[2048];
    int s = text ? scenario_load_text(sc, path, text, sets, nsets, err, sizeof err)
                 : scenario_load(sc, path, sets, nsets, err, sizeof err);
    if (s != 0) return oo_say(strstr(err, "out of memory") ? 1 : 2, err);
    return 0;
}

int oo_load_scenario(const char *path, const char *text, scenario *sc)
{
    char err[2048];
    int s = text ? scenario_load_text(sc, path, text, NULL, 0, err, sizeof err)
                 : scenario_load(sc, path, NULL, 0, err, sizeof err);
    if (s != 0) return oo_say(strstr(err, "out of memory") ? 1 : 2, err);
    return 0;
}

/* The bytes of file PATH, NUL-terminated, malloc'd; NULL when it cannot be read. */
char *oo_read_all(const char *path)
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
char *oo_replay_text(const char *src)
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
int oo_apply_meta(const char *meta, const char *path, const char *text, const char *pool, sqlite3 *db, scenario **sc,
                      char (*sets)[128], int *nsets)
{
    char err[2048], warn[1536], note[512];
    const char *ptr[16];
    cobs_meta m;
    int idx, n = 0, rc = cobs_meta_read(meta, &m, err, sizeof err);
    *nsets = 0;
    if (rc) return oo_say(rc, err);
    if (scenario_resolve(*sc, db, err, sizeof err) != 0) return oo_say(strstr(err, "out of memory") ? 1 : 2, err);
    if (cobs_find_pool(*sc, pool, &idx, err, sizeof err) != 0) return oo_say(2, err);
    cobs_meta_sets(&m, meta, *sc, idx, sets, 16, &n, warn, sizeof warn, note, sizeof note);
    if (warn[0]) fprintf(stderr, "latsim: warning: %s\n", errmsg_field(warn, err, sizeof err));
    if (note[0]) fprintf(stderr, "latsim: note: %s\n", errmsg_field(note, err, sizeof err));
    for (int i = 0; i < n; i++) ptr[i] = sets[i];
    *nsets = n;
    scenario *fresh = scenario_new();
    if (!fresh) return oo_say(1, "out of memory");
    int s = text ? scenario_load_text(fresh, path, text, ptr, n, err, sizeof err) : scenario_load(fresh, path, ptr, n, err, sizeof err);
    if (s != 0) {
        scenario_delete(fresh);
        char m2[2200];
        snprintf(m2, sizeof m2, "%s: %s", meta, err);
        return oo_say(strstr(err, "out of memory") ? 1 : 2, m2);
    }
    scenario_delete(*sc);
    *sc = fresh;
    return 0;
}

/* Opens an existing database read-only with its calibration tables (empty ones
 * in the connection's temporary schema when it has none).  Returns 0 or 2 (printed). */
int oo_open_readonly(const char *path, sqlite3 **db)
{
    char err[2048];
    if (cu_check_db_path(path, err, sizeof err) != 0) return oo_say(2, err);
    if (access(path, F_OK) != 0) {
        snprintf(err, sizeof err, "%s: no such database (import an observed run first, or give --db PATH)", path);
        return oo_say(2, err);
    }
    if (store_open_readonly(path, db, err, sizeof err) != 0) return oo_say(2, err);
    if (cdb_init_readonly(*db, err, sizeof err) != 0) {
        store_close(*db);
        *db = NULL;
        return oo_say(2, err);
    }
    return 0;
}

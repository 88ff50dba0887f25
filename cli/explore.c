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

#define MAX_AXES   24
#define MAX_VALUES 4096
#define MAX_RULES  64
#define MAX_SLOSET 16
#define BIG_GRID   10000000.0     /* tasks above which --yes is needed */

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

typedef struct axis {
    char name[200];           /* as written, e.g. "pool.chat.tp" */
    char sec[200], key[100];  /* the scenario section ("pool chat") and key ("tp") */
    char **v;                 /* its values */
    int nv;
    int line;                 /* line in GRID */
} axis;

typedef struct rule {
    int n;                    /* terms */
    int ax[MAX_AXES], val[MAX_AXES]; /* axis and value index of each (-1: a value not on the axis) */
    char text[300];           /* as written */
    int line;
    long hits;                /* configurations it excluded */
} rule;

typedef struct conf {
    int state;                /* 0 to run, 1 excluded, 2 skipped (reason) */
    char *reason;             /* skipped: why (malloc'd) */
    char *settings;           /* "pool chat.tp=2; workload.rate=40" (malloc'd) */
    char **sets;              /* "SEC.KEY=V" per axis (malloc'd), then the slo terms */
    double weight;            /* expected requests (largest first) */
} conf;

typedef struct explore {
    const char *file, *dbpath;
    int workers, resume, json, progress, yes;
    axis ax[MAX_AXES];
    int nax;
    rule rules[MAX_RULES];
    int nrules;
    int nseeds;
    int slo_on;               /* 1: keep only configurations meeting the SLO */
    char *sloset[MAX_SLOSET]; /* slo = TERM=LIMIT: "slo.TERM=LIMIT" (malloc'd) */
    int nsloset;
    int slo_line;             /* the GRID line of [explore] slo's terms (0: none) */
    int objective;            /* 0 cost, 1 the SLO metric (p99), 2 GPU energy (energy_kwh) */
    uint64_t base_seed;
    slo_spec slo;             /* of the base configuration */
    char metric[32], stat[8]; /* the SLO metric of the frontier */
    long nconf;               /* configurations (product) */
    conf *c;
    task *ts;                 /* nconf x nseeds, index = conf x nseeds + seed */
    int ntask;
    char *text;               /* GRID as read */
    /* run state (rank 0) */
    sqlite3 *db;
    int64_t id;               /* the exploration (sweeps row) */
    int in_tx, stored_now, failed, done_before, total_run;
    int elsewhere;            /* tasks another process claimed (a concurrent --resume) */
    char owner[320];          /* this process as the owner of its claims (planstore_owner) */
    double t0, last_print;
    char err[2048];
    int show_progress;
} explore;

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

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) s[--n] = '\0';
    return s;
}

/* Finds the scenario section of axis name NAME ("pool.chat.tp" or "pool chat.tp"):
 * the part before the last dot, as written or with its first dot a space.
 * Returns 0, or the exit status (printed). */
static int axis_section(explore *e, axis *a)
{
    char err[2048];
    const char *dot = strrchr(a->name, '.');
    if (!dot || dot == a->name || !dot[1])
        return cu_die(2, "%s:%d: [explore] %s: expected SECTION.KEY (e.g. pool.chat.tp = 1, 2, 4)", e->file, a->line, a->name);
    snprintf(a->key, sizeof a->key, "%s", dot + 1);
    for (int form = 0; form < 2; form++) {
        snprintf(a->sec, sizeof a->sec, "%.*s", (int) (dot - a->name), a->name);
        if (form == 1) {
            char *d = strchr(a->sec, '.');
            if (!d) break;
            *d = ' ';
        }
        int found = scenario_file_has_section(e->file, a->sec, err, sizeof err);
        if (found < 0) return cu_die(2, "%s", err);
        if (found) return 0;
    }
    snprintf(a->sec, sizeof a->sec, "%.*s", (int) (dot - a->name), a->name);
    return cu_die(2, "%s:%d: [explore] %s: the scenario has no section [%s]", e->file, a->line, a->name, a->sec);
}

static int add_value(axis *a, const char *v)
{
    if (a->nv >= MAX_VALUES) return -1;
    if (!a->v && !(a->v = calloc(MAX_VALUES, sizeof *a->v))) return -1;
    if (!(a->v[a->nv] = strdup(v))) return -1;
    a->nv++;
    return 0;
}

/* Parses the values of axis A from V.  Returns 0 or the exit status (printed). */
static int axis_values(explore *e, axis *a, char *v)
{
    char err[300];
    if (!*v) return cu_die(2, "%s:%d: [explore] %s: empty axis (give its values: v1, v2, ...)", e->file, a->line, a->name);
    if (strchr(v, ':') && !strchr(v, ',')) {
        cu_range r;
        if (cu_parse_range(v, 1, MAX_VALUES, &r, err, sizeof err) != 0)
            return cu_die(2, "%s:%d: [explore] %s: %s", e->file, a->line, a->name, err);
        for (int i = 0; i < r.n; i++) {
            char b[64];
            cu_range_value(&r, i, b, sizeof b);
            if (add_value(a, b) != 0) return cu_die(1, "out of memory");
        }
        return 0;
    }
    for (char *p = v;;) {
        size_t k = strcspn(p, ",");
        char item[256];
        snprintf(item, sizeof item, "%.*s", (int) (k < 255 ? k : 255), p);
        char *t = trim(item);
        if (cu_check_list_value(t, strlen(t), 200, err, sizeof err) != 0)
            return cu_die(2, "%s:%d: [explore] %s: %s", e->file, a->line, a->name, err);
        for (int i = 0; i < a->nv; i++)
            if (!strcmp(a->v[i], t)) return cu_die(2, "%s:%d: [explore] %s: value '%s' given twice", e->file, a->line, a->name, t);
        if (a->nv >= MAX_VALUES) return cu_die(2, "%s:%d: [explore] %s: more than %d values", e->file, a->line, a->name, MAX_VALUES);
        if (add_value(a, t) != 0) return cu_die(1, "out of memory");
        if (!p[k]) break;
        p += k + 1;
    }
    return 0;
}

static int find_axis(const explore *e, const char *name)
{
    for (int i = 0; i < e->nax; i++) {
        char both[320];
        snprintf(both, sizeof both, "%s.%s", e->ax[i].sec, e->ax[i].key);
        if (!strcmp(e->ax[i].name, name) || !strcmp(both, name)) return i;
    }
    return -1;
}

/* Parses an exclude rule "K=V & K=V".  Returns 0 or the exit status (printed). */
static int parse_rule(explore *e, char *v, int line)
{
    if (e->nrules >= MAX_RULES) return cu_die(2, "%s:%d: [explore] exclude: more than %d rules", e->file, line, MAX_RULES);
    rule *r = &e->rules[e->nrules++];
    memset(r, 0, sizeof *r);
    snprintf(r->text, sizeof r->text, "%s", v);
    r->line = line;
    if (!*v) return cu_die(2, "%s:%d: [explore] exclude: empty rule (e.g. exclude = pool.chat.tp=8 & pool.chat.gpu=l4)", e->file, line);
    for (char *p = v;;) {
        size_t k = strcspn(p, "&");
        char term[400];
        snprintf(term, sizeof term, "%.*s", (int) (k < 399 ? k : 399), p);
        char *t = trim(term), *eq = strchr(t, '=');
        if (!eq) return cu_die(2, "%s:%d: [explore] exclude: '%s': expected KEY=VALUE", e->file, line, t);
        *eq = '\0';
        char *key = trim(t), *val = trim(eq + 1);
        int a = find_axis(e, key);
        if (a < 0) return cu_die(2, "%s:%d: [explore] exclude: '%s' is not an axis of the grid", e->file, line, key);
        if (r->n >= MAX_AXES) return cu_die(2, "%s:%d: [explore] exclude: too many terms", e->file, line);
        r->ax[r->n] = a;
        r->val[r->n] = -1;
        for (int i = 0; i < e->ax[a].nv; i++)
            if (!strcmp(e->ax[a].v[i], val)) r->val[r->n] = i;
        r->n++;
        if (!p[k]) break;
        p += k + 1;
    }
    return 0;
}

/* Reads GRID's [explore] section (its own parser: line numbers, repeated
 * exclude keys).  Returns 0 or the exit status (printed). */
static int parse_grid(explore *e)
{
    char oerr[1400];
    FILE *f = infile_open(e->file, INFILE_MAX_SCENARIO, oerr, sizeof oerr);
    if (!f) return cu_die(2, "%s", oerr);
    char line[8192];
    int ln = 0, in = 0, seen = 0, nseeds_set = 0;
    char *rules[MAX_RULES];
    int rline[MAX_RULES], nr = 0, rc = 0;
    e->nseeds = 1;
    e->slo_on = 1;
    size_t tl = 0;
    while (fgets(line, sizeof line, f)) {
        size_t l = strlen(line);
        char *q = realloc(e->text, tl + l + 1);
        if (!q) { rc = cu_die(1, "out of memory"); goto out; }
        e->text = q;
        memcpy(e->text + tl, line, l + 1);
        tl += l;
        ln++;
        char *s = trim(line);
        if (*s == ';' || *s == '#' || !*s) continue;
        if (*s == '[') {
            char *end = strchr(s, ']');
            in = end && !strncmp(s + 1, "explore", 7) && end == s + 8;
            seen |= in;
            continue;
        }
        if (!in) continue;
        for (char *c = s; *c; c++)
            if ((*c == ';' || *c == '#') && (c == s || c[-1] == ' ' || c[-1] == '\t')) { *c = '\0'; break; }
        char *eq = strchr(s, '=');
        if (!eq) { rc = cu_die(2, "%s:%d: [explore]: expected KEY = VALUES", e->file, ln); goto out; }
        *eq = '\0';
        char *k = trim(s), *v = trim(eq + 1);
        if (!strcmp(k, "seeds")) {
            char *end;
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 1 || n > 1000000) { rc = cu_die(2, "%s:%d: [explore] seeds: expected a whole number from 1 to 1000000, got '%s'", e->file, ln, v); goto out; }
            e->nseeds = (int) n;
            nseeds_set = 1;
        } else if (!strcmp(k, "objective")) {
            if (!strcmp(v, "cost")) e->objective = 0;
            else if (!strcmp(v, "p99")) e->objective = 1;
            else if (!strcmp(v, "energy")) e->objective = 2;
            else { rc = cu_die(2, "%s:%d: [explore] objective: expected cost, p99 or energy, got '%s'", e->file, ln, v); goto out; }
        } else if (!strcmp(k, "slo")) {
            if (!strcmp(v, "on")) e->slo_on = 1;
            else if (!strcmp(v, "off")) e->slo_on = 0;
            else {
                for (char *p = v;;) {
                    size_t n = strcspn(p, ",");
                    char term[256];
                    snprintf(term, sizeof term, "%.*s", (int) (n < 255 ? n : 255), p);
                    char *t = trim(term);
                    if (!*t || !strchr(t, '=') || e->nsloset >= MAX_SLOSET) { rc = cu_die(2, "%s:%d: [explore] slo: expected on, off or TERM=LIMIT, ... (e.g. ttft_p99_ms=800), got '%s'", e->file, ln, v); goto out; }
                    size_t m = strlen(t) + 5;
                    if (!(e->sloset[e->nsloset] = malloc(m))) { rc = cu_die(1, "out of memory"); goto out; }
                    snprintf(e->sloset[e->nsloset++], m, "slo.%s", t);
                    e->slo_line = ln;
                    if (!p[n]) break;
                    p += n + 1;
                }
            }
        } else if (!strncmp(k, "exclude", 7)) {     /* exclude, exclude2, exclude_l4...: one rule each */
            if (nr >= MAX_RULES) { rc = cu_die(2, "%s:%d: [explore] exclude: more than %d rules", e->file, ln, MAX_RULES); goto out; }
            rules[nr] = strdup(v);
            rline[nr++] = ln;
        } else {
            if (e->nax >= MAX_AXES) { rc = cu_die(2, "%s:%d: [explore]: more than %d axes", e->file, ln, MAX_AXES); goto out; }
            axis *a = &e->ax[e->nax++];
            snprintf(a->name, sizeof a->name, "%s", k);
            a->line = ln;
            for (int i = 0; i < e->nax - 1; i++)
                if (!strcmp(e->ax[i].name, k)) { rc = cu_die(2, "%s:%d: [explore] %s: axis given twice (line %d)", e->file, ln, k, e->ax[i].line); goto out; }
            if ((rc = axis_section(e, a)) != 0) goto out;
            /* One key of the scenario, however it is spelled ("pool.cpu.servers",
             * "pool cpu.servers"): a second axis would override the first in
             * every run while the stored settings named both. */
            for (int i = 0; i < e->nax - 1; i++)
                if (!strcmp(e->ax[i].sec, a->sec) && !strcmp(e->ax[i].key, a->key)) {
                    rc = cu_die(2, "%s:%d: [explore] %s: axis given twice: line %d's %s is the same key [%s] %s", e->file, ln,
                                k, e->ax[i].line, e->ax[i].name, a->sec, a->key);
                    goto out;
                }
            if ((rc = axis_values(e, a, v)) != 0) goto out;
        }
    }
    (void) nseeds_set;
    if (!seen) { rc = cu_die(2, "%s: no [explore] section (see docs/explore.md)", e->file); goto out; }
    for (int i = 0; i < nr && !rc; i++) rc = parse_rule(e, rules[i], rline[i]);
out:
    for (int i = 0; i < nr; i++) free(rules[i]);
    fclose(f);
    return rc;
}

/* Each axis on its own: some value must load with the base scenario (a key
 * the scenario does not know, a value no configuration can take: bad input).
 * Also reads the base seed and [slo].  Returns 0 or the exit status (printed). */
static int check_axes(explore *e)
{
    char err[2048];
    const char *sets[MAX_SLOSET + 1];
    for (int i = 0; i < e->nsloset; i++) sets[i] = e->sloset[i];
    scenario *sc = scenario_new();
    if (!sc) return cu_die(1, "out of memory");
    if (scenario_load(sc, e->file, sets, e->nsloset, err, sizeof err) != 0) {
        scenario_delete(sc);
        /* The loader calls every assignment "--set"; an [slo] one came from [explore] slo. */
        if (e->slo_line && !strncmp(err, "--set: [slo]", 12))
            return cu_die(2, "%s:%d: [explore] slo:%s", e->file, e->slo_line, err + 12);
        return cu_die(2, "%s", err);
    }
    e->base_seed = scenario_seed(sc);
    scenario_take_slo(sc, &e->slo);
    scenario_delete(sc);
    for (int a = 0; a < e->nax; a++) {
        axis *x = &e->ax[a];
        char first[2048] = "";
        int ok = 0;
        for (int v = 0; v < x->nv && !ok; v++) {
            char set[600];
            snprintf(set, sizeof set, "%s.%s=%s", x->sec, x->key, x->v[v]);
            sets[e->nsloset] = set;
            sc = scenario_new();
            if (!sc) return cu_die(1, "out of memory");
            ok = scenario_load(sc, e->file, sets, e->nsloset + 1, err, sizeof err) == 0;
            scenario_delete(sc);
            if (!ok && !first[0]) { cu_relabel(err, sizeof err, "[explore]", x->sec, x->key); snprintf(first, sizeof first, "%s", err); }
        }
        if (!ok) return cu_die(2, "%s:%d: [explore] %s: no value loads: %s", e->file, x->line, x->name, first);
    }
    /* The frontier's metric: the first latency term of the SLO, else e2e p99. */
    snprintf(e->metric, sizeof e->metric, "e2e");
    snprintf(e->stat, sizeof e->stat, "p99");
    for (int i = 0; i < e->slo.n; i++)
        if (e->slo.t[i].kind == SLO_LATENCY && !e->slo.t[i].cls[0]) {
            snprintf(e->metric, sizeof e->metric, "%s", e->slo.t[i].metric);
            snprintf(e->stat, sizeof e->stat, "%s", e->slo.t[i].stat);
            break;
        }
    if (e->slo.n == 0) e->slo_on = 0;
    return 0;
}

/* The configurations and tasks (rank 0; the other ranks receive each task whole).  Returns 0
 * or the exit status (printed). */
static int expand(explore *e)
{
    double n = 1;
    for (int a = 0; a < e->nax; a++) n *= e->ax[a].nv;
    double tasks = n * e->nseeds;
    if (tasks > BIG_GRID && !e->yes)
        return cu_die(2, "%s: the grid has %.0f tasks (more than 10^7): pass --yes to run them", e->file, tasks);
    if (tasks > 100000000.0)
        return cu_die(2, "%s: the grid has %.0f tasks: more than 10^8 are not supported", e->file, tasks);
    if (e->nax + e->nsloset > TASK_MAX_SETS) return cu_die(2, "%s: too many axes", e->file);
    e->nconf = (long) n;
    e->ntask = (int) tasks;
    e->c = calloc((size_t) e->nconf, sizeof *e->c);
    e->ts = calloc((size_t) e->ntask, sizeof *e->ts);
    if (!e->c || !e->ts) return cu_die(1, "out of memory");
    int vi[MAX_AXES];
    for (long c = 0; c < e->nconf; c++) {
        long r = c;
        for (int a = e->nax - 1; a >= 0; a--) { vi[a] = (int) (r % e->ax[a].nv); r /= e->ax[a].nv; }
        conf *k = &e->c[c];
        for (int i = 0; i < e->nrules; i++) {
            const rule *ru = &e->rules[i];
            int m = 1;
            for (int t = 0; t < ru->n && m; t++) m = ru->val[t] == vi[ru->ax[t]];
            if (m) { e->rules[i].hits++; k->state = 1; }
        }
        k->sets = calloc((size_t) (e->nax + e->nsloset) + 1, sizeof *k->sets);
        if (!k->sets) return cu_die(1, "out of memory");
        size_t sl = 1;
        for (int a = 0; a < e->nax; a++) {
            size_t m = strlen(e->ax[a].sec) + strlen(e->ax[a].key) + strlen(e->ax[a].v[vi[a]]) + 3;
            if (!(k->sets[a] = malloc(m))) return cu_die(1, "out of memory");
            snprintf(k->sets[a], m, "%s.%s=%s", e->ax[a].sec, e->ax[a].key, e->ax[a].v[vi[a]]);
            sl += m + 2;
        }
        for (int i = 0; i < e->nsloset; i++) k->sets[e->nax + i] = e->sloset[i];
        if (!(k->settings = malloc(sl))) return cu_die(1, "out of memory");
        k->settings[0] = '\0';
        for (int a = 0; a < e->nax; a++) {
            if (a) strcat(k->settings, "; ");
            strcat(k->settings, k->sets[a]);
        }
        for (int s = 0; s < e->nseeds; s++) {
            task *t = &e->ts[c * e->nseeds + s];
            t->path = e->file;
            for (int i = 0; i < e->nax + e->nsloset; i++) t->sets[i] = k->sets[i];
            t->nsets = e->nax + e->nsloset;
            t->seed = e->base_seed + (uint64_t) s;       /* from the task, never the worker */
        }
    }
    return 0;
}

/* Rank 0: validates each configuration not excluded (the skipped ones keep the
 * reason) and warns about the rules that exclude nothing.  Returns 0 or the
 * exit status (printed). */
static int validate(explore *e)
{
    char err[2048];
    sqlite3 *db = NULL;
    if (store_open_lookup(e->dbpath, &db, err, sizeof err) != 0) return cu_die(2, "%s", err);
    for (long c = 0; c < e->nconf; c++) {
        conf *k = &e->c[c];
        if (k->state) continue;
        if (task_check(&e->ts[c * e->nseeds], db, &k->weight, err, sizeof err) != 0) {
            k->state = 2;
            if (!strncmp(err, "--set: ", 7)) memmove(err, err + 7, strlen(err + 7) + 1);
            if (!(k->reason = strdup(err))) { store_close(db); return cu_die(1, "out of memory"); }
        }
    }
    store_close(db);
    for (int i = 0; i < e->nrules; i++)
        if (e->rules[i].hits == 0)
            fprintf(stderr, "latsim: %s:%d: warning: [explore] exclude = %s: matches no configuration\n", e->file,
                    e->rules[i].line, ERRMSG_SHOWN(e->rules[i].text));
    return 0;
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

/* ---- the result ----------------------------------------------------------- */

typedef struct cres {
    long c;                   /* configuration */
    int n;                    /* stored seeds */
    int met;                  /* every seed met the SLO (and none saturated) */
    double usd;               /* $/h */
    double m;                 /* the SLO metric, mean over seeds (NAN: not measured) */
    double kwh;               /* GPU energy of the measured window, kWh, mean over seeds (NAN: no power figures) */
} cres;

static int cmp_cost(const void *a, const void *b)
{
    const cres *x = a, *y = b;
    if (x->usd != y->usd) return x->usd < y->usd ? -1 : 1;
    if (x->m != y->m) return x->m < y->m ? -1 : 1;
    return (x->c > y->c) - (x->c < y->c);
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "%.10g", v); else fputs("null", f);
}

/* Reads every stored task of the exploration back, then prints and stores the
 * frontier and the best configuration.  Returns 0 or the exit status. */
static int summarise(explore *e, double wall, const char *lost)
{
    cres *r = calloc((size_t) e->nconf, sizeof *r);
    cres *fr = calloc((size_t) e->nconf, sizeof *fr);
    char *json = NULL;
    size_t jlen = 0;
    int rc = 1, nfr = 0, stored = 0;
    if (!r || !fr) { free(r); free(fr); return cu_die(1, "out of memory"); }
    for (long c = 0; c < e->nconf; c++) { r[c].c = c; r[c].met = 1; r[c].m = 0; r[c].usd = NAN; r[c].kwh = 0; }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(e->db, "SELECT p.idx, p.usd_per_hour, p.slo_met,"
                           " (SELECT value FROM run_stats s WHERE s.run_id = p.run_id AND s.replication = -1 AND s.scope = ''"
                           "  AND s.metric = ? AND s.stat = ?),"
                           " (SELECT value FROM run_stats s WHERE s.run_id = p.run_id AND s.replication = -1 AND s.scope = ''"
                           "  AND s.metric = 'saturated' AND s.stat = 'value'),"
                           " (SELECT value FROM run_stats s WHERE s.run_id = p.run_id AND s.replication = -1 AND s.scope = ''"
                           "  AND s.metric = 'energy_kwh' AND s.stat = 'value')"
                           " FROM sweep_points p WHERE p.sweep_id = ? ORDER BY p.idx", -1, &st, NULL) != SQLITE_OK) {
        cu_die(1, "%s: %s", e->dbpath, sqlite3_errmsg(e->db));
        goto out;
    }
    sqlite3_bind_text(st, 1, e->metric, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, e->stat, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, e->id);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int i = sqlite3_column_int(st, 0);
        if (i < 0 || i >= e->ntask) continue;
        cres *x = &r[i / e->nseeds];
        stored++;
        x->n++;
        x->usd = sqlite3_column_double(st, 1);
        if (sqlite3_column_type(st, 2) != SQLITE_NULL && !sqlite3_column_int(st, 2)) x->met = 0;
        if (sqlite3_column_type(st, 4) != SQLITE_NULL && sqlite3_column_double(st, 4) > 0) x->met = 0;
        if (sqlite3_column_type(st, 3) == SQLITE_NULL) x->m = NAN;
        else x->m += sqlite3_column_double(st, 3);
        if (sqlite3_column_type(st, 5) == SQLITE_NULL) x->kwh = NAN;
        else x->kwh += sqlite3_column_double(st, 5);
    }
    sqlite3_finalize(st);
    int nrun = 0, nexcl = 0, nskip = 0, ncomplete = 0;
    for (long c = 0; c < e->nconf; c++) {
        nexcl += e->c[c].state == 1;
        nskip += e->c[c].state == 2;
        if (e->c[c].state) continue;
        nrun++;
        cres *x = &r[c];
        if (x->n < e->nseeds) { x->met = 0; x->m = NAN; continue; }   /* incomplete: a failed task */
        ncomplete++;
        x->m /= x->n;
        x->kwh /= x->n;
        if (isfinite(x->m) && isfinite(x->usd) && (!e->slo_on || x->met)) fr[nfr++] = *x;
    }
    /* objective = energy: the eligible configuration of least energy, on the
     * frontier or not (the frontier is cost against the SLO metric). */
    cres ebest = { -1, 0, 0, NAN, NAN, NAN };
    if (e->objective == 2)
        for (int i = 0; i < nfr; i++)
            if (isfinite(fr[i].kwh) && (ebest.c < 0 || fr[i].kwh < ebest.kwh)) ebest = fr[i];
    /* The Pareto frontier: no other configuration as cheap and as fast, one of them strictly. */
    qsort(fr, (size_t) nfr, sizeof *fr, cmp_cost);
    int k = 0;
    double bestm = INFINITY;
    for (int i = 0; i < nfr; i++)
        if (fr[i].m < bestm) { bestm = fr[i].m; fr[k++] = fr[i]; }
    nfr = k;
    int best = -1;
    for (int i = 0; i < nfr; i++) {
        if (best < 0) { best = i; continue; }
        double a = e->objective ? fr[i].m : fr[i].usd, b = e->objective ? fr[best].m : fr[best].usd;
        if (a < b) best = i;
    }
    if (e->objective == 2) {   /* the least-energy one, kept in fr past the frontier's end */
        best = -1;
        if (ebest.c >= 0) {
            for (int i = 0; i < nfr; i++)
                if (fr[i].c == ebest.c) best = i;
            if (best < 0) { fr[nfr] = ebest; best = nfr; }
        }
    }
    static const char *const OBJ[] = { "cost", "p99", "energy" };
    FILE *mem = open_memstream(&json, &jlen);
    if (!mem) { cu_die(1, "out of memory"); goto out; }
    fputs("{\"grid\": ", mem);
    report_json_str(mem, e->file);
    fprintf(mem, ", \"configurations\": %ld, \"seeds\": %d, \"tasks\": %d, \"excluded\": %d, \"stored\": %d",
            e->nconf, e->nseeds, e->ntask, nexcl * e->nseeds, stored);
    fprintf(mem, ", \"metric\": \"%s_%s_ms\", \"objective\": \"%s\", \"slo\": %s", e->metric, e->stat,
            OBJ[e->objective], e->slo_on ? "true" : "false");
    fputs(", \"skipped\": [", mem);
    for (long c = 0, n = 0; c < e->nconf; c++) {
        if (e->c[c].state != 2) continue;
        fprintf(mem, "%s{\"settings\": ", n++ ? ", " : "");
        report_json_str(mem, e->c[c].settings);
        fputs(", \"reason\": ", mem);
        report_json_str(mem, e->c[c].reason);
        fputs("}", mem);
    }
    fputs("], \"frontier\": [", mem);
    for (int i = 0; i < nfr; i++) {
        fprintf(mem, "%s{\"settings\": ", i ? ", " : "");
        report_json_str(mem, e->c[fr[i].c].settings);
        fputs(", \"usd_per_hour\": ", mem);
        json_num(mem, fr[i].usd);
        fputs(", \"metric_ms\": ", mem);
        json_num(mem, fr[i].m);
        fputs(", \"energy_kwh\": ", mem);
        json_num(mem, fr[i].kwh);
        fprintf(mem, ", \"slo_met\": %s}", fr[i].met ? "true" : "false");
    }
    fputs("], \"best\": ", mem);
    if (best < 0) fputs("null", mem);
    else {
        fputs("{\"settings\": ", mem);
        report_json_str(mem, e->c[fr[best].c].settings);
        fputs(", \"usd_per_hour\": ", mem);
        json_num(mem, fr[best].usd);
        fputs(", \"metric_ms\": ", mem);
        json_num(mem, fr[best].m);
        fputs(", \"energy_kwh\": ", mem);
        json_num(mem, fr[best].kwh);
        fputs("}", mem);
    }
    fputs(", \"lost_ranks\": [", mem);
    fputs(lost ? lost : "", mem);
    fputs("]}", mem);
    fclose(mem);
    if (store_begin(e->db, e->err, sizeof e->err) != 0 ||
        planstore_sweep_end(e->db, e->id, wall, stored, best < 0 ? NAN : (e->objective == 2 ? fr[best].kwh : e->objective ? fr[best].m : fr[best].usd), json,
                            e->err, sizeof e->err) != 0 ||
        store_commit(e->db, e->err, sizeof e->err) != 0) {
        store_rollback(e->db);
        cu_die(1, "exploration not stored: %s", e->err);
        goto out;
    }
    if (e->json) {
        printf("{\"exploration\": %lld, %s\n", (long long) e->id, json + 1);
    } else {
        char other[64] = "";
        if (e->elsewhere) snprintf(other, sizeof other, " %d run by another process;", e->elsewhere);
        printf("explore %s  (%ld configurations x %d seeds = %d tasks; %d excluded, %d skipped; %d run now, %d stored before;"
               "%s %.2f s, %d ranks)\n", ERRMSG_SHOWN(e->file), e->nconf, e->nseeds, e->ntask, nexcl, nskip, e->stored_now,
               e->done_before, other, wall, taskmpi_size());
        for (long c = 0; c < e->nconf; c++)
            if (e->c[c].state == 2) printf("skipped: %s: %s\n", ERRMSG_SHOWN(e->c[c].settings), ERRMSG_SHOWN(e->c[c].reason));
        printf("\nPareto frontier (cost against %s %s, mean of %d seeds%s):\n", e->metric, e->stat, e->nseeds,
               e->slo_on ? "; meeting the SLO in every seed" : "");
        printf("  %12s %12s  %s\n", "usd_per_hour", "metric_ms", "configuration");
        for (int i = 0; i < nfr; i++)
            printf("  %12.4g %12.4g  %s%s\n", fr[i].usd, fr[i].m, ERRMSG_SHOWN(e->c[fr[i].c].settings), i == best ? "   <- best" : "");
        if (best < 0 && e->objective == 2 && nfr > 0)
            printf("\nno configuration reports GPU energy (its GPUs need idle_w and max_w, or a power_curve)\n");
        else if (best < 0 && stored == 0 && e->stored_now == 0 && e->done_before == 0)
            printf("\nnothing was run: %s\n", nexcl >= e->nconf ? "the exclude rules match every configuration"
                                                              : "every configuration was excluded or skipped");
        else if (best < 0) printf("\nno configuration %s\n", e->slo_on ? "meets the SLO" : "was measured");
        else {
            static const char *const WHY[] = { "lowest cost", "lowest p99", "lowest energy" };
            printf("\nbest (%s): %s  $%.4g/h  %s %s %.4g ms", WHY[e->objective],
                   ERRMSG_SHOWN(e->c[fr[best].c].settings), fr[best].usd, e->metric, e->stat, fr[best].m);
            if (isfinite(fr[best].kwh)) printf("  %.4g kWh", fr[best].kwh);
            putchar('\n');
        }
        printf("exploration %lld stored in %s (%d of %d runnable configurations complete)\n", (long long) e->id,
               ERRMSG_SHOWN(e->dbpath), ncomplete, nrun);
    }
    rc = e->failed ? 1 : 0;
out:
    free(json);
    free(r);
    free(fr);
    return rc;
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

/* exploregrid.c -- the grid of `latsim explore`: the [explore] section of
 * GRID.ini (axes, seeds, slo, objective, exclude rules) read with line numbers,
 * each axis checked against the base scenario, the cartesian product expanded
 * into tasks and each configuration validated. */
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
int parse_grid(explore *e)
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
int check_axes(explore *e)
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
int expand(explore *e)
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
int validate(explore *e)
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

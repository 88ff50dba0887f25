/* planstore.c -- the planner's tables: run SLO terms and CDF points, sweeps and
 * plans, baselines (see planstore.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "engine/errmsg.h"
#include "store/planstore.h"
#include "store/store.h"

static const char SCHEMA[] =
    "CREATE TABLE IF NOT EXISTS run_slo ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " class TEXT NOT NULL, term TEXT NOT NULL, limit_value REAL, value REAL, margin REAL, met INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS run_slo_run ON run_slo(run_id);"
    "CREATE TABLE IF NOT EXISTS run_cdf ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " metric TEXT NOT NULL, p REAL NOT NULL, value REAL);"
    "CREATE INDEX IF NOT EXISTS run_cdf_run ON run_cdf(run_id);"
    "CREATE TABLE IF NOT EXISTS sweeps ("
    " id INTEGER PRIMARY KEY, kind TEXT NOT NULL, scenario_path TEXT NOT NULL, args TEXT,"
    " started_at TEXT NOT NULL, wall_s REAL, simulations INTEGER, result REAL, json TEXT);"
    "CREATE TABLE IF NOT EXISTS sweep_points ("
    " sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,"
    " role TEXT NOT NULL, settings TEXT, seed INTEGER, rate REAL, usd_per_hour REAL, slo_met INTEGER);"
    "CREATE INDEX IF NOT EXISTS sweep_points_sweep ON sweep_points(sweep_id);"
    "CREATE TABLE IF NOT EXISTS sweep_claims ("
    " sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, owner TEXT NOT NULL, PRIMARY KEY (sweep_id, idx));"
    "CREATE TABLE IF NOT EXISTS baselines ("
    " id INTEGER PRIMARY KEY, scenario_path TEXT NOT NULL,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, accepted_at TEXT NOT NULL);";

static int db_fail(sqlite3 *db, char *err, size_t errlen)
{
    const char *p = sqlite3_db_filename(db, "main");
    errmsg_set(err, errlen, "%s: %s", p && p[0] ? p : "(memory)", sqlite3_errmsg(db));
    return -1;
}

int planstore_init(sqlite3 *db, char *err, size_t errlen)
{
    if (sqlite3_exec(db, SCHEMA, NULL, NULL, NULL) != SQLITE_OK) return db_fail(db, err, errlen);
    return 0;
}

static int bind_real(sqlite3_stmt *st, int i, double v)
{
    return isnan(v) || isinf(v) ? sqlite3_bind_null(st, i) : sqlite3_bind_double(st, i, v);
}

/* Runs one prepared statement to completion and finalizes it. */
static int step_done(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int planstore_run_extra(sqlite3 *db, int64_t run_id, void *arg, char *err, size_t errlen)
{
    const planstore_extra *x = arg;
    sqlite3_stmt *st = NULL;
    if (planstore_init(db, err, errlen) != 0) return -1;
    if (x->slo) {
        if (sqlite3_prepare_v2(db, "INSERT INTO run_slo VALUES (?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
            return db_fail(db, err, errlen);
        for (int i = 0; i < x->slo->n; i++) {
            const slo_check *c = &x->slo->c[i];
            sqlite3_reset(st);
            sqlite3_bind_int64(st, 1, run_id);
            sqlite3_bind_text(st, 2, c->t->cls, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 3, c->t->key, -1, SQLITE_STATIC);
            bind_real(st, 4, c->t->limit);
            bind_real(st, 5, c->value);
            bind_real(st, 6, c->margin);
            sqlite3_bind_int(st, 7, c->met);
            if (sqlite3_step(st) != SQLITE_DONE) { sqlite3_finalize(st); return db_fail(db, err, errlen); }
        }
        sqlite3_finalize(st);
    }
    if (x->rep && x->rep->ncdf) {
        if (sqlite3_prepare_v2(db, "INSERT INTO run_cdf VALUES (?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
            return db_fail(db, err, errlen);
        for (size_t i = 0; i < x->rep->ncdf; i++) {
            const report_cdf *c = &x->rep->cdf[i];
            sqlite3_reset(st);
            sqlite3_bind_int64(st, 1, run_id);
            sqlite3_bind_text(st, 2, c->metric, -1, SQLITE_STATIC);
            sqlite3_bind_double(st, 3, c->p);
            bind_real(st, 4, c->value);
            if (sqlite3_step(st) != SQLITE_DONE) { sqlite3_finalize(st); return db_fail(db, err, errlen); }
        }
        sqlite3_finalize(st);
    }
    if (x->sweep_id > 0) {
        if (sqlite3_prepare_v2(db, "INSERT INTO sweep_points VALUES (?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
            return db_fail(db, err, errlen);
        int64_t seed;
        memcpy(&seed, &x->seed, sizeof seed);
        sqlite3_bind_int64(st, 1, x->sweep_id);
        sqlite3_bind_int(st, 2, x->idx);
        sqlite3_bind_int64(st, 3, run_id);
        sqlite3_bind_text(st, 4, x->role ? x->role : "point", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, x->settings ? x->settings : "", -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 6, seed);
        bind_real(st, 7, x->rate);
        bind_real(st, 8, x->usd_per_hour);
        if (x->slo) sqlite3_bind_int(st, 9, x->slo->met);
        if (step_done(st) != 0) return db_fail(db, err, errlen);
    }
    return 0;
}

/* ---- task claims ---------------------------------------------------------- */

/* The start time of process PID in clock ticks since boot (field 22 of
 * /proc/PID/stat), or 0 when it cannot be read. */
static unsigned long long proc_start(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');   /* the command name may hold blanks */
    if (!p) return 0;
    unsigned long long v = 0;
    /* Fields 3 .. 21 after the name, then the start time. */
    int field = 2;
    for (p++; *p && field < 22; p++)
        if (*p == ' ') {
            field++;
            if (field == 22) v = strtoull(p + 1, NULL, 10);
        }
    return v;
}

void planstore_owner(char *buf, size_t n)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "?");
    long pid = (long) getpid();
    snprintf(buf, n, "%s %ld %llu", host, pid, proc_start(pid));
}

/* Whether the claim of OWNER ("host pid start", planstore_owner) is still held:
 * its process is alive (the same pid with the same start time) on this host;
 * one of another host cannot be checked and counts as held. */
static int owner_alive(const char *owner)
{
    char host[256] = "", me[256] = "";
    long pid = 0;
    unsigned long long start = 0;
    if (sscanf(owner, "%255s %ld %llu", host, &pid, &start) != 3 || pid <= 0) return 0;
    if (gethostname(me, sizeof me - 1) != 0 || strcmp(host, me)) return 1;
    if (kill((pid_t) pid, 0) != 0 && errno == ESRCH) return 0;
    return proc_start(pid) == start;
}

int planstore_claim(sqlite3 *db, int64_t sweep_id, int idx, const char *owner, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int got = -1;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) return db_fail(db, err, errlen);
    if (planstore_init(db, err, errlen) != 0) goto out;
    /* Stored already: done, by whoever ran it. */
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sweep_points WHERE sweep_id = ? AND idx = ? LIMIT 1", -1, &st, NULL) != SQLITE_OK)
        goto fail;
    sqlite3_bind_int64(st, 1, sweep_id);
    sqlite3_bind_int(st, 2, idx);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    st = NULL;
    if (rc == SQLITE_ROW) { got = 0; goto out; }
    if (rc != SQLITE_DONE) goto fail;
    /* Claimed by a process still running: its. */
    if (sqlite3_prepare_v2(db, "SELECT owner FROM sweep_claims WHERE sweep_id = ? AND idx = ?", -1, &st, NULL) != SQLITE_OK)
        goto fail;
    sqlite3_bind_int64(st, 1, sweep_id);
    sqlite3_bind_int(st, 2, idx);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *o = (const char *) sqlite3_column_text(st, 0);
        if (o && strcmp(o, owner) && owner_alive(o)) {
            sqlite3_finalize(st);
            st = NULL;
            got = 0;
            goto out;
        }
    } else if (rc != SQLITE_DONE)
        goto fail;
    sqlite3_finalize(st);
    st = NULL;
    /* Free, or its owner is gone (killed): this process's now. */
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO sweep_claims (sweep_id, idx, owner) VALUES (?,?,?)", -1, &st, NULL) != SQLITE_OK)
        goto fail;
    sqlite3_bind_int64(st, 1, sweep_id);
    sqlite3_bind_int(st, 2, idx);
    sqlite3_bind_text(st, 3, owner, -1, SQLITE_STATIC);
    if (step_done(st) != 0) { st = NULL; goto fail; }
    st = NULL;
    got = 1;
    goto out;
fail:
    sqlite3_finalize(st);
    db_fail(db, err, errlen);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
out:
    if (got < 0) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        db_fail(db, err, errlen);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return got;
}

int planstore_sweep_begin(sqlite3 *db, const char *kind, const char *path, const char *args,
                          const char *started_at, int64_t *id, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (planstore_init(db, err, errlen) != 0) return -1;
    if (sqlite3_prepare_v2(db, "INSERT INTO sweeps (kind, scenario_path, args, started_at) VALUES (?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen);
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, args, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, started_at, -1, SQLITE_STATIC);
    if (step_done(st) != 0) return db_fail(db, err, errlen);
    *id = sqlite3_last_insert_rowid(db);
    return 0;
}

int planstore_sweep_end(sqlite3 *db, int64_t id, double wall_s, int sims, double result, const char *json,
                        char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "UPDATE sweeps SET wall_s = ?, simulations = ?, result = ?, json = ? WHERE id = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen);
    bind_real(st, 1, wall_s);
    sqlite3_bind_int(st, 2, sims);
    bind_real(st, 3, result);
    sqlite3_bind_text(st, 4, json, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, id);
    if (step_done(st) != 0) return db_fail(db, err, errlen);
    return 0;
}

int planstore_baseline_accept(sqlite3 *db, int64_t run_id, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    char *path = NULL;
    if (sqlite3_prepare_v2(db, "SELECT scenario_path FROM runs WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen);
    sqlite3_bind_int64(st, 1, run_id);
    if (sqlite3_step(st) == SQLITE_ROW) path = strdup((const char *) sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (!path) { errmsg_set(err, errlen, "baseline accept: no run %lld (see latsim runs)", (long long) run_id); return 1; }
    char now[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int rc = -1;
    if (planstore_init(db, err, errlen) != 0) goto done;
    if (sqlite3_prepare_v2(db, "INSERT INTO baselines (scenario_path, run_id, accepted_at) VALUES (?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) { db_fail(db, err, errlen); goto done; }
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, run_id);
    sqlite3_bind_text(st, 3, now, -1, SQLITE_STATIC);
    if (step_done(st) != 0) { db_fail(db, err, errlen); goto done; }
    rc = 0;
done:
    free(path);
    return rc;
}

int planstore_baseline_of(sqlite3 *db, const char *path, int64_t *run_id, char *err, size_t errlen)
{
    if (!store_has_table(db, "baselines")) return 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT run_id FROM baselines WHERE scenario_path = ? ORDER BY id DESC LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen);
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    int found = 0;
    if (sqlite3_step(st) == SQLITE_ROW) { *run_id = sqlite3_column_int64(st, 0); found = 1; }
    sqlite3_finalize(st);
    return found;
}

int planstore_plan_of_run(sqlite3 *db, int64_t run_id, int64_t *plan_id, char **json, plan_point **pts, int *npts,
                          char *err, size_t errlen)
{
    *json = NULL;
    *pts = NULL;
    *npts = 0;
    if (!store_has_table(db, "sweeps") || !store_has_table(db, "sweep_points")) return 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT s.id, s.json FROM sweep_points p JOIN sweeps s ON s.id = p.sweep_id "
                               "WHERE p.run_id = ? AND s.kind = 'plan' ORDER BY s.id DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen);
    sqlite3_bind_int64(st, 1, run_id);
    int found = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        found = 1;
        *plan_id = sqlite3_column_int64(st, 0);
        const unsigned char *j = sqlite3_column_text(st, 1);
        if (j && !(*json = strdup((const char *) j))) found = -1;
    }
    sqlite3_finalize(st);
    if (found != 1) {
        if (found < 0) errmsg_set(err, errlen, "out of memory");
        return found;
    }
    if (sqlite3_prepare_v2(db, "SELECT settings, role, usd_per_hour, slo_met FROM sweep_points WHERE sweep_id = ? "
                               "ORDER BY usd_per_hour, idx", -1, &st, NULL) != SQLITE_OK) {
        free(*json);
        *json = NULL;
        return db_fail(db, err, errlen);
    }
    sqlite3_bind_int64(st, 1, *plan_id);
    int cap = 0, rc = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (*npts == cap) {
            cap = cap ? 2 * cap : 64;
            plan_point *g = realloc(*pts, (size_t) cap * sizeof *g);
            if (!g) { errmsg_set(err, errlen, "out of memory"); rc = -1; break; }
            *pts = g;
        }
        plan_point *q = &(*pts)[(*npts)++];
        const unsigned char *s = sqlite3_column_text(st, 0), *r = sqlite3_column_text(st, 1);
        snprintf(q->settings, sizeof q->settings, "%s", s ? (const char *) s : "");
        snprintf(q->role, sizeof q->role, "%s", r ? (const char *) r : "");
        q->usd_per_hour = sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2);
        q->slo_met = sqlite3_column_int(st, 3);
    }
    sqlite3_finalize(st);
    if (rc < 0) {
        free(*json);
        free(*pts);
        *json = NULL;
        *pts = NULL;
        *npts = 0;
    }
    return rc;
}

/* The string literal for a stored stat name (report rows hold literals), or NULL. */
static const char *stat_literal(const char *s)
{
    static const char *names[] = { "value", "mean", "p50", "p90", "p95", "p99", "p999", "max" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(names[i], s)) return names[i];
    return NULL;
}

static const char *cdf_literal(const char *s)
{
    static const char *names[] = { "e2e", "queue", "ttft", "tpot" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(names[i], s)) return names[i];
    return NULL;
}

int planstore_load_run(sqlite3 *db, int64_t run_id, report *out, char **path, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->replications = 1;
    if (path) *path = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT scenario_path, replications FROM runs WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen);
    sqlite3_bind_int64(st, 1, run_id);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found) {
        if (path) *path = strdup((const char *) sqlite3_column_text(st, 0));
        out->replications = sqlite3_column_int(st, 1);
    }
    sqlite3_finalize(st);
    if (!found) { errmsg_set(err, errlen, "no run %lld (see latsim runs)", (long long) run_id); return 1; }
    if (sqlite3_prepare_v2(db, "SELECT scope, metric, stat, value, ci95, text FROM run_stats WHERE run_id = ? AND replication = -1"
                           " ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen);
    sqlite3_bind_int64(st, 1, run_id);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *stat = stat_literal((const char *) sqlite3_column_text(st, 2));
        if (!stat) continue;
        if (out->n == out->cap) {
            size_t cap = out->cap ? 2 * out->cap : 128;
            store_stat *x = realloc(out->rows, cap * sizeof *x);
            if (!x) { sqlite3_finalize(st); errmsg_set(err, errlen, "out of memory"); return -1; }
            out->rows = x;
            out->cap = cap;
        }
        store_stat *r = &out->rows[out->n];
        r->replication = -1;
        r->scope = strdup((const char *) sqlite3_column_text(st, 0));
        const char *metric = (const char *) sqlite3_column_text(st, 1);
        if (r->scope && r->scope[0] && !strcmp(metric, "utilization")) metric = REPORT_BUSY_SHARE;   /* before issue 29 */
        r->metric = strdup(metric);
        r->stat = stat;
        r->value = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
        r->ci95 = sqlite3_column_type(st, 4) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 4);
        r->text = sqlite3_column_type(st, 5) == SQLITE_NULL ? NULL : strdup((const char *) sqlite3_column_text(st, 5));
        out->n++;
        if (!r->scope || !r->metric || (!r->text && sqlite3_column_type(st, 5) != SQLITE_NULL)) {
            sqlite3_finalize(st);
            errmsg_set(err, errlen, "out of memory");
            return -1;
        }
    }
    sqlite3_finalize(st);
    if (!store_has_table(db, "run_cdf")) return 0;
    if (sqlite3_prepare_v2(db, "SELECT metric, p, value FROM run_cdf WHERE run_id = ? ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen);
    sqlite3_bind_int64(st, 1, run_id);
    size_t cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *m = cdf_literal((const char *) sqlite3_column_text(st, 0));
        if (!m) continue;
        if (out->ncdf == cap) {
            cap = cap ? 2 * cap : 512;
            report_cdf *x = realloc(out->cdf, cap * sizeof *x);
            if (!x) { sqlite3_finalize(st); errmsg_set(err, errlen, "out of memory"); return -1; }
            out->cdf = x;
        }
        out->cdf[out->ncdf++] = (report_cdf) { m, sqlite3_column_double(st, 1),
                                               sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2) };
    }
    sqlite3_finalize(st);
    return 0;
}

int planstore_kind_of(sqlite3 *db, int64_t id, int want_sweep)
{
    sqlite3_stmt *st = NULL;
    int kind = 0;
    if (!want_sweep) {
        if (sqlite3_prepare_v2(db, "SELECT 1 FROM runs WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, id);
            if (sqlite3_step(st) == SQLITE_ROW) kind = 'r';
        }
    } else if (store_has_table(db, "sweeps") &&
               sqlite3_prepare_v2(db, "SELECT kind FROM sweeps WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) kind = !strcmp((const char *) sqlite3_column_text(st, 0), "plan") ? 'p' : 's';
    }
    sqlite3_finalize(st);
    return kind;
}

int planstore_show_slo(sqlite3 *db, int64_t run_id, FILE *out, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    /* A database written before run_slo existed has no such table: no terms. */
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'run_slo'",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen);
    int have = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    if (!have) return 0;
    if (sqlite3_prepare_v2(db, "SELECT class, term, limit_value, value, margin, met FROM run_slo"
                           " WHERE run_id = ? ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen);
    sqlite3_bind_int64(st, 1, run_id);
    /* The stored terms as slo_table prints them after a run. */
    slo_term *t = NULL;
    slo_check *c = NULL;
    int n = 0, rc, ret = 0, met = 1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        slo_term *t2 = realloc(t, (size_t) (n + 1) * sizeof *t2);
        if (t2) t = t2;
        slo_check *c2 = t2 ? realloc(c, (size_t) (n + 1) * sizeof *c2) : NULL;
        if (!c2) { errmsg_set(err, errlen, "out of memory"); ret = -1; goto done; }
        c = c2;
        memset(&t[n], 0, sizeof t[n]);
        const char *cls = (const char *) sqlite3_column_text(st, 0), *key = (const char *) sqlite3_column_text(st, 1);
        snprintf(t[n].cls, sizeof t[n].cls, "%s", cls ? cls : "");
        snprintf(t[n].key, sizeof t[n].key, "%s", key ? key : "");
        size_t kl = strlen(t[n].key);
        t[n].kind = kl > 3 && !strcmp(t[n].key + kl - 3, "_ms") ? SLO_LATENCY
                  : !strcmp(t[n].key, "utilization_max") ? SLO_UTIL_MAX
                  : kl > 4 && !strcmp(t[n].key + kl - 4, "_max") ? SLO_POOL_MAX : SLO_ERROR_RATE;
        t[n].limit = sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2);
        c[n].value = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
        c[n].margin = sqlite3_column_type(st, 4) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 4);
        c[n].met = sqlite3_column_int(st, 5);
        met &= c[n].met;
        n++;
    }
    if (rc != SQLITE_DONE) { ret = db_fail(db, err, errlen); goto done; }
    for (int i = 0; i < n; i++) c[i].t = &t[i];
    slo_result r = { c, n, met };
    slo_table(&r, out);
done:
    sqlite3_finalize(st);
    free(t);
    free(c);
    return ret;
}

/* catalog.c -- the GPU and model catalog kept in SQLite (see catalog.h): its
 * tables, their rows in SQL, their creation and the migration of an older
 * database.
 *
 * Implements the `gpus` and `models` tables: their creation, the migration of
 * an older database (added columns, added and refreshed built-in rows).  The
 * built-in entries are catbuiltin.c's, the validation of entries and the
 * figures of a geometry catcheck.c's, the look-ups, user entries and the
 * `latsim catalog` listing catlookup.c's (catdb.h: what they share).
 */
#include "core/catalog.h"
#include "core/catdb.h"
#include "engine/errmsg.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the tables ---------------------------------------------------------------- */


/* Every column but `builtin` is read and written in the order below. */
static const column gpu_table[] = {
    { "name", "TEXT PRIMARY KEY COLLATE NOCASE", 0 },
    { "full_name", "TEXT NOT NULL", 0 },
    { "bf16_tflops", "REAL NOT NULL", 0 },
    { "fp8_tflops", "REAL NOT NULL", 0 },
    { "mem_gib", "REAL NOT NULL", 0 },
    { "mem_bw_gbs", "REAL NOT NULL", 0 },
    { "link_gbs", "REAL NOT NULL", 0 },
    { "price_hr", "REAL NOT NULL", 0 },
    { "source", "TEXT NOT NULL DEFAULT ''", 0 },
    { "builtin", "INTEGER NOT NULL DEFAULT 0", 0 },
    { "fp4_tflops", "REAL NOT NULL DEFAULT 0", 1 },
    { "idle_w", "REAL NOT NULL DEFAULT 0", 1 },
    { "max_w", "REAL NOT NULL DEFAULT 0", 1 },
    { "gpus_per_node", "INTEGER NOT NULL DEFAULT 8", 1 },
    { "node_link_gbs", "REAL NOT NULL DEFAULT 50", 1 },
    { "node_link_latency_us", "REAL NOT NULL DEFAULT 5", 1 },
    { "mem_usable_gib", "REAL NOT NULL DEFAULT 0", 1 },
};

static const column model_table[] = {
    { "name", "TEXT PRIMARY KEY COLLATE NOCASE", 0 },
    { "layers", "INTEGER NOT NULL", 0 },
    { "hidden", "INTEGER NOT NULL", 0 },
    { "heads", "INTEGER NOT NULL", 0 },
    { "kv_heads", "INTEGER NOT NULL", 0 },
    { "head_dim", "INTEGER NOT NULL", 0 },
    { "intermediate", "INTEGER NOT NULL", 0 },
    { "vocab", "INTEGER NOT NULL", 0 },
    { "params", "REAL NOT NULL", 0 },
    { "context", "INTEGER NOT NULL", 0 },
    { "source", "TEXT NOT NULL DEFAULT ''", 0 },
    { "weights", "TEXT NOT NULL DEFAULT 'bf16'", 0 },
    { "builtin", "INTEGER NOT NULL DEFAULT 0", 0 },
    { "experts", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "experts_per_token", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "shared_experts", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "moe_intermediate", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "first_dense_layers", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "expert_params", "REAL NOT NULL DEFAULT 0", 1 },
    { "kv_lora_rank", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "qk_rope_head_dim", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "encoder", "INTEGER NOT NULL DEFAULT 0", 1 },
};


const table_def GPUS = { "gpus", gpu_table, NELEM(gpu_table) };
const table_def MODELS = { "models", model_table, NELEM(model_table) };

/* The columns of T but `builtin`, comma-separated, into BUF (room for all). */
const char *data_columns(const table_def *t, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i].name, "builtin") != 0)
            used += (size_t) snprintf(buf + used, size - used, "%s%s", used ? ", " : "", t->cols[i].name);
    return buf;
}

/* "INSERT OR REPLACE INTO T (columns, builtin) VALUES (?, ..., ?)" into BUF. */
const char *insert_sql(const table_def *t, char *buf, size_t size)
{
    char cols[1024];
    size_t used = (size_t) snprintf(buf, size, "INSERT OR REPLACE INTO %s (%s, builtin) VALUES (", t->name,
                                    data_columns(t, cols, sizeof cols));
    for (size_t i = 0; i < t->ncols; i++)
        used += (size_t) snprintf(buf + used, size - used, "%s?", i ? "," : "");
    snprintf(buf + used, size - used, ")");
    return buf;
}

/* "CREATE [TEMP ]TABLE IF NOT EXISTS T (...)" into BUF. */
static const char *create_sql(const table_def *t, int temp, char *buf, size_t size)
{
    size_t used = (size_t) snprintf(buf, size, "CREATE %sTABLE IF NOT EXISTS %s (", temp ? "TEMP " : "", t->name);
    for (size_t i = 0; i < t->ncols; i++)
        used += (size_t) snprintf(buf + used, size - used, "%s%s %s", i ? ", " : "", t->cols[i].name, t->cols[i].decl);
    snprintf(buf + used, size - used, ")");
    return buf;
}

/* Copies a column's text into a fixed-size field, truncating if needed. */
static void copy_text(char *dst, size_t size, sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(dst, size, "%s", t ? (const char *)t : "");
}

static void read_gpu_row(sqlite3_stmt *st, gpu_spec *g)
{
    memset(g, 0, sizeof *g);
    copy_text(g->name, sizeof g->name, st, 0);
    copy_text(g->full_name, sizeof g->full_name, st, 1);
    g->bf16_tflops = sqlite3_column_double(st, 2);
    g->fp8_tflops = sqlite3_column_double(st, 3);
    g->mem_gib = sqlite3_column_double(st, 4);
    g->mem_bw_gbs = sqlite3_column_double(st, 5);
    g->link_gbs = sqlite3_column_double(st, 6);
    g->price_hr = sqlite3_column_double(st, 7);
    copy_text(g->source, sizeof g->source, st, 8);
    g->fp4_tflops = sqlite3_column_double(st, 9);
    g->idle_w = sqlite3_column_double(st, 10);
    g->max_w = sqlite3_column_double(st, 11);
    g->gpus_per_node = sqlite3_column_int(st, 12);
    g->node_link_gbs = sqlite3_column_double(st, 13);
    g->node_link_latency_us = sqlite3_column_double(st, 14);
    g->mem_usable_gib = sqlite3_column_double(st, 15);
}

static void read_model_row(sqlite3_stmt *st, model_spec *m)
{
    memset(m, 0, sizeof *m);
    copy_text(m->name, sizeof m->name, st, 0);
    m->layers = sqlite3_column_int(st, 1);
    m->hidden = sqlite3_column_int(st, 2);
    m->heads = sqlite3_column_int(st, 3);
    m->kv_heads = sqlite3_column_int(st, 4);
    m->head_dim = sqlite3_column_int(st, 5);
    m->intermediate = sqlite3_column_int(st, 6);
    m->vocab = sqlite3_column_int(st, 7);
    m->params = sqlite3_column_double(st, 8);
    m->context = sqlite3_column_int(st, 9);
    copy_text(m->source, sizeof m->source, st, 10);
    copy_text(m->weights, sizeof m->weights, st, 11);
    m->experts = sqlite3_column_int(st, 12);
    m->experts_per_token = sqlite3_column_int(st, 13);
    m->shared_experts = sqlite3_column_int(st, 14);
    m->moe_intermediate = sqlite3_column_int(st, 15);
    m->first_dense_layers = sqlite3_column_int(st, 16);
    m->expert_params = sqlite3_column_double(st, 17);
    m->kv_lora_rank = sqlite3_column_int(st, 18);
    m->qk_rope_head_dim = sqlite3_column_int(st, 19);
    m->encoder = sqlite3_column_int(st, 20);
}

/* Binds G to an INSERT of insert_sql(&GPUS) (name NAME; builtin last). */
int bind_gpu(sqlite3_stmt *st, const gpu_spec *g, const char *name, int builtin)
{
    int rc = SQLITE_OK;
    const char *full = g->full_name[0] ? g->full_name : name;
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 2, full, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 3, g->bf16_tflops);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 4, g->fp8_tflops);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 5, g->mem_gib);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 6, g->mem_bw_gbs);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 7, g->link_gbs);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 8, g->price_hr);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 9, g->source, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 10, g->fp4_tflops);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 11, g->idle_w);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 12, g->max_w);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 13, g->gpus_per_node > 0 ? g->gpus_per_node : 8);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 14, g->node_link_gbs);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 15, g->node_link_latency_us);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 16, g->mem_usable_gib);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 17, builtin);
    return rc;
}

int bind_model(sqlite3_stmt *st, const model_spec *m, const char *name, int builtin)
{
    int rc = SQLITE_OK;
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 2, m->layers);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 3, m->hidden);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 4, m->heads);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 5, m->kv_heads);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 6, m->head_dim);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 7, m->intermediate);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 8, m->vocab);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 9, m->params);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 10, m->context);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 11, m->source, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 12, m->weights[0] ? m->weights : "bf16", -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 13, m->experts);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 14, m->experts_per_token);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 15, m->shared_experts);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 16, m->moe_intermediate);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 17, m->first_dense_layers);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 18, m->expert_params);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 19, m->kv_lora_rank);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 20, m->qk_rope_head_dim);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 21, m->encoder != 0);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 22, builtin);
    return rc;
}

/* 1 when the rows A and B hold the same figures (as stored). */
int gpu_same(const gpu_spec *a, const gpu_spec *b)
{
    return !strcmp(a->name, b->name) && !strcmp(a->full_name, b->full_name) && !strcmp(a->source, b->source) &&
           a->bf16_tflops == b->bf16_tflops && a->fp8_tflops == b->fp8_tflops && a->mem_gib == b->mem_gib &&
           a->mem_bw_gbs == b->mem_bw_gbs && a->link_gbs == b->link_gbs && a->price_hr == b->price_hr &&
           a->fp4_tflops == b->fp4_tflops && a->idle_w == b->idle_w && a->max_w == b->max_w &&
           a->gpus_per_node == b->gpus_per_node && a->node_link_gbs == b->node_link_gbs &&
           a->node_link_latency_us == b->node_link_latency_us && a->mem_usable_gib == b->mem_usable_gib;
}

int model_same(const model_spec *a, const model_spec *b)
{
    return !strcmp(a->name, b->name) && !strcmp(a->source, b->source) && !strcmp(a->weights, b->weights) &&
           a->layers == b->layers && a->hidden == b->hidden && a->heads == b->heads && a->kv_heads == b->kv_heads &&
           a->head_dim == b->head_dim && a->intermediate == b->intermediate && a->vocab == b->vocab &&
           a->params == b->params && a->context == b->context && a->experts == b->experts &&
           a->experts_per_token == b->experts_per_token && a->shared_experts == b->shared_experts &&
           a->moe_intermediate == b->moe_intermediate && a->first_dense_layers == b->first_dense_layers &&
           a->expert_params == b->expert_params && a->kv_lora_rank == b->kv_lora_rank &&
           a->qk_rope_head_dim == b->qk_rope_head_dim && (a->encoder != 0) == (b->encoder != 0);
}


/* ---- initialisation and migration ------------------------------------------------ */

/* Sets *MISSING to the number of T's columns the table (as unqualified names
 * resolve: a TEMP table first) lacks; all of them when it does not exist.
 * Returns 0 or -1 + ERR. */
static int missing_columns(sqlite3 *db, const table_def *t, const char *schema, int *missing,
                           char *err, size_t errlen)
{
    char sql[128];
    sqlite3_stmt *st = NULL;
    int rc, have[32] = { 0 };
    snprintf(sql, sizeof sql, "PRAGMA %s%stable_info(%s)", schema ? schema : "", schema ? "." : "", t->name);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) goto db_error;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *c = (const char *) sqlite3_column_text(st, 1);
        for (size_t i = 0; c && i < t->ncols; i++)
            if (!strcmp(c, t->cols[i].name)) have[i] = 1;
    }
    if (rc != SQLITE_DONE) goto db_error;
    sqlite3_finalize(st);
    *missing = 0;
    for (size_t i = 0; i < t->ncols; i++) *missing += !have[i];
    return 0;
db_error:
    errmsg_set(err, errlen, "catalog: cannot read the columns of %s: %s", t->name, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return -1;
}

/* Reads the row of T called NAME into OUT (through READ) and its builtin flag.
 * Returns 1 found, 0 absent, -1 error + ERR. */
int builtin_row(sqlite3 *db, const table_def *t, const char *name, void (*read)(sqlite3_stmt *, void *),
                       void *out, int *builtin, char *err, size_t errlen)
{
    char cols[1024], sql[1200];
    sqlite3_stmt *st = NULL;
    int ret = -1;
    snprintf(sql, sizeof sql, "SELECT %s, builtin FROM %s WHERE name = ?1", data_columns(t, cols, sizeof cols),
             t->name);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) != SQLITE_OK) {
        errmsg_set(err, errlen, "catalog: cannot read %s: %s", t->name, sqlite3_errmsg(db));
        goto done;
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        read(st, out);
        *builtin = sqlite3_column_int(st, (int) t->ncols - 1);
        ret = 1;
    } else if (rc == SQLITE_DONE) {
        ret = 0;
    } else {
        errmsg_set(err, errlen, "catalog: cannot read %s: %s", t->name, sqlite3_errmsg(db));
    }
done:
    sqlite3_finalize(st);
    return ret;
}

void read_gpu_void(sqlite3_stmt *st, void *out) { read_gpu_row(st, out); }
void read_model_void(sqlite3_stmt *st, void *out) { read_model_row(st, out); }


/* 1 when the catalog (as unqualified names resolve) lacks a table, a column or
 * a current built-in row, 0 when it is current, -1 on an error + ERR. */
static int catalog_stale(sqlite3 *db, const model_spec *models, size_t nmodels, char *err, size_t errlen)
{
    int mg, mm, rows;
    if (missing_columns(db, &GPUS, NULL, &mg, err, errlen) || missing_columns(db, &MODELS, NULL, &mm, err, errlen))
        return -1;
    if (mg || mm) return 1;
    if (sync_builtins(db, models, nmodels, 0, &rows, err, errlen)) return -1;
    return rows > 0;
}

/* Runs SQL; returns 0 or -1 + ERR ("catalog: WHAT: message"). */
static int exec(sqlite3 *db, const char *sql, const char *what, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
    errmsg_set(err, errlen, "catalog: %s: %s", what, msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}

/* Gives the writable database the current tables: creates them, or adds the
 * columns an older schema lacks (with their defaults).  Returns 0 or -1 + ERR. */
static int migrate_tables(sqlite3 *db, char *err, size_t errlen)
{
    const table_def *tables[] = { &GPUS, &MODELS };
    char sql[2048];
    for (size_t k = 0; k < NELEM(tables); k++) {
        const table_def *t = tables[k];
        if (exec(db, create_sql(t, 0, sql, sizeof sql), "cannot create tables", err, errlen)) return -1;
        for (size_t i = 0; i < t->ncols; i++) {
            if (!t->cols[i].added) continue;
            sqlite3_stmt *st = NULL;
            int have = 0;
            snprintf(sql, sizeof sql, "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'", t->name,
                     t->cols[i].name);
            if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
                have = sqlite3_column_int(st, 0) > 0;
            else {
                errmsg_set(err, errlen, "catalog: cannot read the columns of %s: %s", t->name, sqlite3_errmsg(db));
                sqlite3_finalize(st);
                return -1;
            }
            sqlite3_finalize(st);
            if (have) continue;
            snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", t->name, t->cols[i].name, t->cols[i].decl);
            if (exec(db, sql, "cannot add a column", err, errlen)) return -1;
        }
    }
    return 0;
}

/* On a read-only connection: the current tables as TEMP tables that shadow the
 * file's, filled with its rows (the columns it has).  Returns 0 or -1 + ERR. */
static int shadow_tables(sqlite3 *db, char *err, size_t errlen)
{
    const table_def *tables[] = { &GPUS, &MODELS };
    char sql[4096];
    if (exec(db, "PRAGMA temp_store = MEMORY", "cannot keep temporary tables in memory", err, errlen)) return -1;
    for (size_t k = 0; k < NELEM(tables); k++) {
        const table_def *t = tables[k];
        int missing;
        if (exec(db, create_sql(t, 1, sql, sizeof sql), "cannot create temporary tables", err, errlen) ||
            missing_columns(db, t, "main", &missing, err, errlen))
            return -1;
        if (missing == (int) t->ncols) continue;   /* the file has no such table */
        /* The file's columns among ours, read one by one. */
        char cols[1024] = "";
        size_t used = 0;
        for (size_t i = 0; i < t->ncols; i++) {
            sqlite3_stmt *st = NULL;
            snprintf(sql, sizeof sql, "SELECT count(*) FROM pragma_table_info('%s', 'main') WHERE name = '%s'",
                     t->name, t->cols[i].name);
            int have = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
                       sqlite3_column_int(st, 0) > 0;
            sqlite3_finalize(st);
            if (have) used += (size_t) snprintf(cols + used, sizeof cols - used, "%s%s", used ? ", " : "",
                                                t->cols[i].name);
        }
        snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO temp.%s (%s) SELECT %s FROM main.%s", t->name, cols, cols,
                 t->name);
        if (exec(db, sql, "cannot copy the catalog", err, errlen)) return -1;
    }
    return 0;
}

int catalog_init(sqlite3 *db, char *err, size_t errlen)
{
    int ret = -1, stale, rows, own = 0, began = 0;
    int readonly = sqlite3_db_readonly(db, "main") == 1;
    model_spec *models = NULL;
    size_t nmodels = 0;

    if (load_builtin_models(&models, &nmodels, err, errlen) != 0) return -1;
    /* A current catalog is only read: nothing takes a write lock. */
    stale = catalog_stale(db, models, nmodels, err, errlen);
    if (stale <= 0) {
        ret = stale;
        goto done;
    }
    /* Outside a transaction, take the write lock first (two processes migrating
     * at once then wait for each other rather than fail); inside a caller's, a
     * savepoint.  A read-only connection writes only TEMP tables. */
    own = !readonly && sqlite3_get_autocommit(db);
    if (exec(db, own ? "BEGIN IMMEDIATE" : "SAVEPOINT catalog_init", "cannot begin", err, errlen)) goto done;
    began = 1;
    if ((readonly ? shadow_tables(db, err, errlen) : migrate_tables(db, err, errlen)) != 0 ||
        sync_builtins(db, models, nmodels, 1, &rows, err, errlen) != 0)
        goto done;
    if (exec(db, own ? "COMMIT" : "RELEASE catalog_init", "cannot commit", err, errlen)) goto done;
    began = 0;
    ret = 0;
done:
    if (began)
        sqlite3_exec(db, own ? "ROLLBACK" : "ROLLBACK TO catalog_init; RELEASE catalog_init", NULL, NULL, NULL);
    free(models);
    return ret;
}

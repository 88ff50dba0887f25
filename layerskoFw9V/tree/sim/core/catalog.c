/* catalog.c -- the GPU and model catalog kept in SQLite (see catalog.h).
 *
 * Implements the `gpus` and `models` tables: their creation and seeding with
 * the built-in entries below, case-insensitive lookups (with a few GPU
 * aliases), validated inserts of user entries, the `latsim catalog` listing,
 * and the bytes-per-weight table of the precisions.
 *
 * Every built-in entry names its source.  GPU figures are dense (no
 * structured sparsity) tensor-core throughputs from the vendor datasheets;
 * prices are on-demand list prices per GPU-hour at the named provider and
 * date, and drift: replace them with `latsim catalog add-gpu` or a
 * [gpu NAME] section.  Model figures are those of the model's Hugging Face
 * config.json; params is the total weight count, embeddings included.
 */
#include "core/catalog.h"
#include "engine/errmsg.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const gpu_spec builtin_gpus[] = {
    { "a100", "A100-SXM4-80GB", 312.0, 624.0, 80.0, 2039.0, 600.0, 1.79,
      "NVIDIA A100 datasheet (SXM4 80GB; fp8 column = INT8 624 TOPS, no FP8); "
      "price: Lambda on-demand 8x A100 SXM4 80GB, $1.79/GPU-h, 2024" },
    { "h100", "H100-SXM5-80GB", 989.0, 1979.0, 80.0, 3350.0, 900.0, 2.99,
      "NVIDIA H100 datasheet (SXM5, dense); price: Lambda on-demand 8x H100 SXM, "
      "$2.99/GPU-h, 2024-2025" },
    { "h200", "H200-SXM-141GB", 989.0, 1979.0, 141.0, 4800.0, 900.0, 3.50,
      "NVIDIA H200 datasheet (SXM, dense); price: Nebius on-demand H200, "
      "$3.50/GPU-h, 2025" },
    { "l40s", "L40S-48GB", 362.0, 733.0, 48.0, 864.0, 32.0, 1.86,
      "NVIDIA L40S datasheet (dense; link = PCIe Gen4 x16 per direction); "
      "price: AWS g6e.xlarge on-demand us-east-1, $1.861/h, 2024" },
    { "l4", "L4-24GB", 121.0, 242.0, 24.0, 300.0, 32.0, 0.80,
      "NVIDIA L4 datasheet (dense; link = PCIe Gen4 x16 per direction); "
      "price: AWS g6.xlarge on-demand us-east-1, $0.8048/h, 2024" },
};

static const model_spec builtin_models[] = {
    { "llama-2-7b", 32, 4096, 32, 32, 128, 11008, 32000, 6.74e9, 4096,
      "HF config.json of meta-llama/Llama-2-7b-hf (params 6,738,415,616)", "bf16" },
    { "llama-2-70b", 80, 8192, 64, 8, 128, 28672, 32000, 68.98e9, 4096,
      "HF config.json of meta-llama/Llama-2-70b-hf (params 68,976,648,192)", "bf16" },
    { "llama-3-8b", 32, 4096, 32, 8, 128, 14336, 128256, 8.03e9, 8192,
      "HF config.json of meta-llama/Meta-Llama-3-8B (params 8,030,261,248)", "bf16" },
    { "llama-3-70b", 80, 8192, 64, 8, 128, 28672, 128256, 70.55e9, 8192,
      "HF config.json of meta-llama/Meta-Llama-3-70B (params 70,553,706,496)", "bf16" },
    { "mistral-7b", 32, 4096, 32, 8, 128, 14336, 32000, 7.24e9, 32768,
      "HF config.json of mistralai/Mistral-7B-v0.1 (params 7,241,732,096; "
      "4096-token sliding window not modelled)", "bf16" },
    { "codellama-34b", 48, 8192, 64, 8, 128, 22016, 32000, 33.74e9, 16384,
      "HF config.json of codellama/CodeLlama-34b-hf (params 33,743,970,304)", "bf16" },
    { "qwen-72b", 80, 8192, 64, 64, 128, 24576, 152064, 72.29e9, 32768,
      "HF config.json of Qwen/Qwen1.5-72B (same geometry as Qwen/Qwen-72B; "
      "params 72,287,920,128)", "bf16" },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct alias { const char *alias, *name; };

static const struct alias gpu_aliases[] = {
    { "a100-80gb", "a100" }, { "a100-sxm", "a100" },
    { "h100-sxm", "h100" }, { "h100-sxm5", "h100" },
    { "h200-sxm", "h200" },
};

static const char gpu_columns[] =
    "name, full_name, bf16_tflops, fp8_tflops, mem_gib, mem_bw_gbs, link_gbs, "
    "price_hr, source";
static const char model_columns[] =
    "name, layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, params, "
    "context, source, weights";

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS gpus ("
    " name TEXT PRIMARY KEY COLLATE NOCASE,"
    " full_name TEXT NOT NULL,"
    " bf16_tflops REAL NOT NULL,"
    " fp8_tflops REAL NOT NULL,"
    " mem_gib REAL NOT NULL,"
    " mem_bw_gbs REAL NOT NULL,"
    " link_gbs REAL NOT NULL,"
    " price_hr REAL NOT NULL,"
    " source TEXT NOT NULL DEFAULT '',"
    " builtin INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS models ("
    " name TEXT PRIMARY KEY COLLATE NOCASE,"
    " layers INTEGER NOT NULL,"
    " hidden INTEGER NOT NULL,"
    " heads INTEGER NOT NULL,"
    " kv_heads INTEGER NOT NULL,"
    " head_dim INTEGER NOT NULL,"
    " intermediate INTEGER NOT NULL,"
    " vocab INTEGER NOT NULL,"
    " params REAL NOT NULL,"
    " context INTEGER NOT NULL,"
    " source TEXT NOT NULL DEFAULT '',"
    " weights TEXT NOT NULL DEFAULT 'bf16',"
    " builtin INTEGER NOT NULL DEFAULT 0);";


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
}

/* Binds G to an INSERT statement of the columns gpu_columns then builtin. */
static int bind_gpu(sqlite3_stmt *st, const gpu_spec *g, const char *name, int builtin)
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
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 10, builtin);
    return rc;
}

static int bind_model(sqlite3_stmt *st, const model_spec *m, const char *name, int builtin)
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
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 13, builtin);
    return rc;
}

/* Fills TABLE with the built-in entries when it is empty.  Runs inside the
 * caller's savepoint. */
static int seed_table(sqlite3 *db, const char *table, char *err, size_t errlen)
{
    int ret = -1, rc;
    int is_gpu = strcmp(table, "gpus") == 0;
    size_t n = is_gpu ? NELEM(builtin_gpus) : NELEM(builtin_models);
    sqlite3_stmt *st = NULL;
    char sql[512];

    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW)
        goto db_error;
    if (sqlite3_column_int64(st, 0) > 0) {
        ret = 0;
        goto done;
    }
    sqlite3_finalize(st);
    st = NULL;

    snprintf(sql, sizeof sql, "INSERT INTO %s (%s, builtin) VALUES (%s)", table,
             is_gpu ? gpu_columns : model_columns,
             is_gpu ? "?,?,?,?,?,?,?,?,?,?" : "?,?,?,?,?,?,?,?,?,?,?,?,?");
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        goto db_error;
    for (size_t i = 0; i < n; i++) {
        rc = is_gpu ? bind_gpu(st, &builtin_gpus[i], builtin_gpus[i].name, 1)
                    : bind_model(st, &builtin_models[i], builtin_models[i].name, 1);
        if (rc != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE)
            goto db_error;
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    ret = 0;
    goto done;

db_error:
    errmsg_set(err, errlen, "catalog: cannot seed table %s: %s", table, sqlite3_errmsg(db));
done:
    sqlite3_finalize(st);
    return ret;
}

int catalog_init(sqlite3 *db, char *err, size_t errlen)
{
    int ret = -1;
    char *msg = NULL;

    /* A savepoint, not BEGIN, so that this also works inside a caller's
     * transaction (store_open); it takes a write lock only if it writes. */
    if (sqlite3_exec(db, "SAVEPOINT catalog_init", NULL, NULL, &msg) != SQLITE_OK) {
        errmsg_set(err, errlen, "catalog: %s", msg ? msg : sqlite3_errmsg(db));
        goto done;
    }
    if (sqlite3_exec(db, schema_sql, NULL, NULL, &msg) != SQLITE_OK) {
        errmsg_set(err, errlen, "catalog: cannot create tables: %s",
                msg ? msg : sqlite3_errmsg(db));
        goto rollback;
    }
    if (seed_table(db, "gpus", err, errlen) != 0 ||
        seed_table(db, "models", err, errlen) != 0)
        goto rollback;
    if (sqlite3_exec(db, "RELEASE catalog_init", NULL, NULL, &msg) != SQLITE_OK) {
        errmsg_set(err, errlen, "catalog: cannot commit: %s", msg ? msg : sqlite3_errmsg(db));
        goto rollback;
    }
    ret = 0;
    goto done;

rollback:
    sqlite3_exec(db, "ROLLBACK TO catalog_init; RELEASE catalog_init", NULL, NULL, NULL);
done:
    sqlite3_free(msg);
    return ret;
}

/* Writes "unknown KIND 'NAME' (valid: a, b, c)" into ERR; returns 1, or -1 when
 * the names cannot be read. */
static int unknown_name(sqlite3 *db, const char *kind, const char *table,
                        const char *name, char *err, size_t errlen)
{
    int ret = -1, rc;
    sqlite3_stmt *st = NULL;
    char sql[128], list[512] = "";
    size_t used = 0, room = sizeof list - sizeof ", ...";

    snprintf(sql, sizeof sql, "SELECT name FROM %s ORDER BY name", table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        goto db_error;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *n = (const char *)sqlite3_column_text(st, 0);
        int w = snprintf(list + used, room - used, "%s%s", used ? ", " : "", n ? n : "");
        if (w < 0 || (size_t)w >= room - used) {
            /* Too many names for the buffer: end the list with ", ...". */
            snprintf(list + used, sizeof list - used, ", ...");
            break;
        }
        used += (size_t)w;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        goto db_error;
    errmsg_set(err, errlen, "unknown %s '%s' (valid: %s)", kind, name, list);
    ret = 1;
    goto done;

db_error:
    errmsg_set(err, errlen, "catalog: cannot list %s: %s", table, sqlite3_errmsg(db));
done:
    sqlite3_finalize(st);
    return ret;
}

/* Looks NAME up in TABLE, filling OUT through READ.  Returns 0 found, 1 not
 * found (no message), -1 error with ERR. */
static int fetch_row(sqlite3 *db, const char *table, const char *columns, const char *name,
                     void (*read)(sqlite3_stmt *, void *), void *out,
                     char *err, size_t errlen)
{
    int ret = -1, rc;
    sqlite3_stmt *st = NULL;
    char sql[512];

    snprintf(sql, sizeof sql, "SELECT %s FROM %s WHERE name = ?1", columns, table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) != SQLITE_OK)
        goto db_error;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        read(st, out);
        ret = 0;
    } else if (rc == SQLITE_DONE) {
        ret = 1;
    } else {
        goto db_error;
    }
    goto done;

db_error:
    errmsg_set(err, errlen, "catalog: cannot read %s: %s", table, sqlite3_errmsg(db));
done:
    sqlite3_finalize(st);
    return ret;
}

static void read_gpu_void(sqlite3_stmt *st, void *out) { read_gpu_row(st, out); }
static void read_model_void(sqlite3_stmt *st, void *out) { read_model_row(st, out); }

int catalog_gpu(sqlite3 *db, const char *name, gpu_spec *out, char *err, size_t errlen)
{
    int rc;
    if (!name)
        name = "";
    rc = fetch_row(db, "gpus", gpu_columns, name, read_gpu_void, out, err, errlen);
    for (size_t i = 0; rc == 1 && i < NELEM(gpu_aliases); i++)
        if (strcasecmp(name, gpu_aliases[i].alias) == 0)
            rc = fetch_row(db, "gpus", gpu_columns, gpu_aliases[i].name, read_gpu_void,
                           out, err, errlen);
    if (rc == 1)
        rc = unknown_name(db, "gpu", "gpus", name, err, errlen);
    return rc;
}

int catalog_model(sqlite3 *db, const char *name, model_spec *out, char *err, size_t errlen)
{
    int rc;
    if (!name)
        name = "";
    rc = fetch_row(db, "models", model_columns, name, read_model_void, out, err, errlen);
    if (rc == 1)
        rc = unknown_name(db, "model", "models", name, err, errlen);
    return rc;
}

/* Checks a catalog key (1..47 characters of [A-Za-z0-9._+-], stored in FIELD
 * of size SIZE) and writes its lower-case form to LOWER. */
static int check_name(const char *kind, const char *field, size_t size, char *lower,
                      char *err, size_t errlen)
{
    size_t n = strnlen(field, size);
    if (n == 0) {
        errmsg_set(err, errlen, "%s: the name is empty", kind);
        return -1;
    }
    if (n == size) {
        errmsg_set(err, errlen, "%s: the name is too long (at most %zu characters)", kind,
                size - 1);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)field[i];
        if (!isalnum(c) && c != '-' && c != '_' && c != '.' && c != '+') {
            errmsg_set(err, errlen,
                    "%s '%s': names may use only letters, digits, '-', '_', '.' and '+'",
                    kind, field);
            return -1;
        }
        lower[i] = (char)tolower(c);
    }
    lower[n] = '\0';
    return 0;
}

static int check_positive(const char *kind, const char *name, const char *field, double v,
                          char *err, size_t errlen)
{
    if (isfinite(v) && v > 0)
        return 0;
    errmsg_set(err, errlen, "%s '%s': %s must be a positive number (got %g)", kind, name,
            field, v);
    return -1;
}

static int check_terminated(const char *kind, const char *name, const char *field,
                            const char *s, size_t size, char *err, size_t errlen)
{
    if (strnlen(s, size) < size)
        return 0;
    errmsg_set(err, errlen, "%s '%s': %s is too long (at most %zu characters)", kind, name,
            field, size - 1);
    return -1;
}

static int validate_gpu(const gpu_spec *g, char *name, char *err, size_t errlen)
{
    if (check_name("gpu", g->name, sizeof g->name, name, err, errlen) ||
        check_terminated("gpu", name, "full name", g->full_name, sizeof g->full_name,
                         err, errlen) ||
        check_terminated("gpu", name, "source", g->source, sizeof g->source, err, errlen) ||
        check_positive("gpu", name, "bf16_tflops", g->bf16_tflops, err, errlen) ||
        check_positive("gpu", name, "fp8_tflops", g->fp8_tflops, err, errlen) ||
        check_positive("gpu", name, "mem_gib", g->mem_gib, err, errlen) ||
        check_positive("gpu", name, "mem_bw_gbs", g->mem_bw_gbs, err, errlen) ||
        check_positive("gpu", name, "link_gbs", g->link_gbs, err, errlen))
        return -1;
    if (!isfinite(g->price_hr) || g->price_hr < 0) {
        errmsg_set(err, errlen, "gpu '%s': price_hr must be a number >= 0 (got %g)", name,
                g->price_hr);
        return -1;
    }
    return 0;
}

static int validate_model(const model_spec *m, char *name, char *err, size_t errlen)
{
    if (check_name("model", m->name, sizeof m->name, name, err, errlen) ||
        check_terminated("model", name, "source", m->source, sizeof m->source, err,
                         errlen) ||
        check_positive("model", name, "layers", m->layers, err, errlen) ||
        check_positive("model", name, "hidden", m->hidden, err, errlen) ||
        check_positive("model", name, "heads", m->heads, err, errlen) ||
        check_positive("model", name, "kv_heads", m->kv_heads, err, errlen) ||
        check_positive("model", name, "head_dim", m->head_dim, err, errlen) ||
        check_positive("model", name, "intermediate", m->intermediate, err, errlen) ||
        check_positive("model", name, "vocab", m->vocab, err, errlen) ||
        check_positive("model", name, "params", m->params, err, errlen) ||
        check_positive("model", name, "context", m->context, err, errlen))
        return -1;
    if (m->weights[0] && catalog_weight_bytes(m->weights) == 0) {
        errmsg_set(err, errlen, "model '%s': weights must be bf16, fp16, fp8, int8 or int4 (got '%s')", name, m->weights);
        return -1;
    }
    /* heads * head_dim == hidden is not required: some models differ. */
    if (m->heads % m->kv_heads != 0) {
        errmsg_set(err, errlen,
                "model '%s': heads (%d) must be a multiple of kv_heads (%d)", name,
                m->heads, m->kv_heads);
        return -1;
    }
    return 0;
}

/* Runs one INSERT OR REPLACE of SQL with BIND applied.  Returns 0 or -1 + ERR. */
static int put_row(sqlite3 *db, const char *sql, const char *what, const char *name,
                   int (*bind)(sqlite3_stmt *, const void *, const char *),
                   const void *spec, char *err, size_t errlen)
{
    int ret = -1;
    sqlite3_stmt *st = NULL;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
        bind(st, spec, name) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE) {
        errmsg_set(err, errlen, "%s '%s': cannot save: %s", what, name, sqlite3_errmsg(db));
        goto done;
    }
    ret = 0;
done:
    sqlite3_finalize(st);
    return ret;
}

static int bind_user_gpu(sqlite3_stmt *st, const void *g, const char *name)
{
    return bind_gpu(st, g, name, 0);
}

static int bind_user_model(sqlite3_stmt *st, const void *m, const char *name)
{
    return bind_model(st, m, name, 0);
}

int catalog_is_builtin(sqlite3 *db, const char *table, const char *name)
{
    char sql[128];
    sqlite3_stmt *st = NULL;
    int yes = 0;
    snprintf(sql, sizeof sql, "SELECT builtin FROM %s WHERE name = ?",
             strcmp(table, "gpus") == 0 ? "gpus" : "models");
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        yes = sqlite3_column_int(st, 0) != 0;
    sqlite3_finalize(st);
    return yes;
}

int catalog_check_gpu(const gpu_spec *g, char *err, size_t errlen)
{
    char name[sizeof g->name];
    return validate_gpu(g, name, err, errlen);
}

int catalog_check_model(const model_spec *m, char *err, size_t errlen)
{
    char name[sizeof m->name];
    return validate_model(m, name, err, errlen);
}

int catalog_put_gpu(sqlite3 *db, const gpu_spec *g, char *err, size_t errlen)
{
    char name[sizeof g->name], sql[512];
    if (validate_gpu(g, name, err, errlen) != 0)
        return -1;
    snprintf(sql, sizeof sql,
             "INSERT OR REPLACE INTO gpus (%s, builtin) VALUES (?,?,?,?,?,?,?,?,?,?)",
             gpu_columns);
    return put_row(db, sql, "gpu", name, bind_user_gpu, g, err, errlen);
}

int catalog_put_model(sqlite3 *db, const model_spec *m, char *err, size_t errlen)
{
    char name[sizeof m->name], sql[512];
    if (validate_model(m, name, err, errlen) != 0)
        return -1;
    snprintf(sql, sizeof sql,
             "INSERT OR REPLACE INTO models (%s, builtin) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
             model_columns);
    return put_row(db, sql, "model", name, bind_user_model, m, err, errlen);
}

/* Reads a whole table, ordered by name, into a malloc'd array of ELEMSIZE-byte
 * entries.  Returns 0 or -1 + ERR; *OUT is NULL when the table is empty. */
static int load_all(sqlite3 *db, const char *table, const char *columns, size_t elemsize,
                    void (*read)(sqlite3_stmt *, void *), void **out, size_t *n,
                    char *err, size_t errlen)
{
    int ret = -1, rc;
    sqlite3_stmt *st = NULL;
    char sql[512];
    unsigned char *rows = NULL;
    size_t count = 0, cap = 0;

    snprintf(sql, sizeof sql, "SELECT %s FROM %s ORDER BY name", columns, table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        goto db_error;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (count == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            void *p = realloc(rows, ncap * elemsize);
            if (!p) {
                errmsg_set(err, errlen, "catalog: out of memory");
                goto done;
            }
            rows = p;
            cap = ncap;
        }
        read(st, rows + count * elemsize);
        count++;
    }
    if (rc != SQLITE_DONE)
        goto db_error;
    *out = rows;
    *n = count;
    rows = NULL;
    ret = 0;
    goto done;

db_error:
    errmsg_set(err, errlen, "catalog: cannot read %s: %s", table, sqlite3_errmsg(db));
done:
    free(rows);
    sqlite3_finalize(st);
    return ret;
}

/* The wider of W and S as shown (ERRMSG_SHOWN: control bytes escaped). */
static int max_width(int w, const char *s)
{
    int n = (int)strlen(ERRMSG_SHOWN(s));
    return n > w ? n : w;
}

static void print_gpus(FILE *out, const gpu_spec *g, size_t n)
{
    int wn = 4, wf = 9;   /* widths of "name" and "full name" */
    for (size_t i = 0; i < n; i++) {
        wn = max_width(wn, g[i].name);
        wf = max_width(wf, g[i].full_name);
    }
    fprintf(out, "GPUs\n");
    fprintf(out, "%-*s  %-*s  %7s  %7s  %7s  %6s  %9s  %6s\n", wn, "name", wf, "full name",
            "bf16 TF", "fp8 TF", "mem GiB", "GB/s", "link GB/s", "$/h");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%-*s  %-*s  %7.1f  %7.1f  %7.1f  %6.0f  %9.0f  %6.2f\n", wn,
                ERRMSG_SHOWN(g[i].name), wf, ERRMSG_SHOWN(g[i].full_name), g[i].bf16_tflops, g[i].fp8_tflops,
                g[i].mem_gib, g[i].mem_bw_gbs, g[i].link_gbs, g[i].price_hr);
}

static void print_models(FILE *out, const model_spec *m, size_t n)
{
    int wn = 4;
    for (size_t i = 0; i < n; i++)
        wn = max_width(wn, m[i].name);
    fprintf(out, "Models\n");
    fprintf(out, "%-*s  %6s  %6s  %5s  %4s  %8s  %6s  %6s  %10s  %7s  %7s\n", wn, "name",
            "layers", "hidden", "heads", "kv", "head_dim", "inter", "vocab", "params (B)",
            "context", "weights");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%-*s  %6d  %6d  %5d  %4d  %8d  %6d  %6d  %10.2f  %7d  %7s\n", wn,
                ERRMSG_SHOWN(m[i].name), m[i].layers, m[i].hidden, m[i].heads, m[i].kv_heads,
                m[i].head_dim, m[i].intermediate, m[i].vocab, m[i].params / 1e9,
                m[i].context, ERRMSG_SHOWN(m[i].weights));
}

int catalog_print(sqlite3 *db, FILE *out, char *err, size_t errlen)
{
    int ret = -1;
    void *gp = NULL, *mp = NULL;
    gpu_spec *g;
    model_spec *m;
    size_t ng = 0, nm = 0;

    if (load_all(db, "gpus", gpu_columns, sizeof(gpu_spec), read_gpu_void, &gp, &ng,
                 err, errlen) != 0 ||
        load_all(db, "models", model_columns, sizeof(model_spec), read_model_void, &mp,
                 &nm, err, errlen) != 0)
        goto done;
    g = gp;
    m = mp;

    print_gpus(out, g, ng);
    fprintf(out, "\n");
    print_models(out, m, nm);
    fprintf(out, "\nSources\n");
    for (size_t i = 0; i < ng; i++)
        fprintf(out, "  gpu %s: %s\n", ERRMSG_SHOWN(g[i].name),
                g[i].source[0] ? ERRMSG_SHOWN(g[i].source) : "(none given)");
    for (size_t i = 0; i < nm; i++)
        fprintf(out, "  model %s: %s\n", ERRMSG_SHOWN(m[i].name),
                m[i].source[0] ? ERRMSG_SHOWN(m[i].source) : "(none given)");
    if (ferror(out)) {
        errmsg_set(err, errlen, "catalog: write error");
        goto done;
    }
    ret = 0;
done:
    free(gp);
    free(mp);
    return ret;
}

double catalog_weight_bytes(const char *precision)
{
    static const struct { const char *name; double bytes; } table[] = {
        { "bf16", 2.0 }, { "fp16", 2.0 }, { "fp8", 1.0 }, { "int8", 1.0 }, { "int4", 0.5 },
    };
    if (!precision)
        return 0;
    for (size_t i = 0; i < NELEM(table); i++)
        if (strcasecmp(precision, table[i].name) == 0)
            return table[i].bytes;
    return 0;
}

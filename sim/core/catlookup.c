/* catlookup.c -- the catalog's look-ups (case-insensitive, with a few GPU
 * aliases), user entries (`latsim catalog add`, [gpu NAME] and [model NAME])
 * and the `latsim catalog` listing. */
#include "core/catalog.h"
#include "core/catdb.h"
#include "engine/errmsg.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct alias { const char *alias, *name; };

static const struct alias gpu_aliases[] = {
    { "a100-80gb", "a100" }, { "a100-sxm", "a100" },
    { "h100-sxm", "h100" }, { "h100-sxm5", "h100" },
    { "h200-sxm", "h200" }, { "b200-sxm", "b200" }, { "gb200-nvl72", "gb200" },
    { "rtx4090", "rtx-4090" }, { "4090", "rtx-4090" },
    { "pvc", "max-1550" }, { "gaudi-2", "gaudi2" }, { "mi250-oam", "mi250" },
    { "rtx-pro-6000-se", "rtx-pro-6000" }, { "rtx-pro-6000-server", "rtx-pro-6000" },
};

/* ---- lookups ----------------------------------------------------------------------- */

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

/* Looks NAME up in T, filling OUT through READ.  Returns 0 found, 1 not found
 * (no message), -1 error with ERR. */
static int fetch_row(sqlite3 *db, const table_def *t, const char *name, void (*read)(sqlite3_stmt *, void *),
                     void *out, char *err, size_t errlen)
{
    int builtin;
    int rc = builtin_row(db, t, name, read, out, &builtin, err, errlen);
    return rc < 0 ? -1 : rc == 1 ? 0 : 1;
}

int catalog_gpu(sqlite3 *db, const char *name, gpu_spec *out, char *err, size_t errlen)
{
    int rc;
    if (!name)
        name = "";
    rc = fetch_row(db, &GPUS, name, read_gpu_void, out, err, errlen);
    for (size_t i = 0; rc == 1 && i < NELEM(gpu_aliases); i++)
        if (strcasecmp(name, gpu_aliases[i].alias) == 0)
            rc = fetch_row(db, &GPUS, gpu_aliases[i].name, read_gpu_void, out, err, errlen);
    if (rc == 1)
        rc = unknown_name(db, "gpu", "gpus", name, err, errlen);
    return rc;
}

int catalog_model(sqlite3 *db, const char *name, model_spec *out, char *err, size_t errlen)
{
    int rc;
    if (!name)
        name = "";
    rc = fetch_row(db, &MODELS, name, read_model_void, out, err, errlen);
    if (rc == 1)
        rc = unknown_name(db, "model", "models", name, err, errlen);
    return rc;
}

/* ---- user entries --------------------------------------------------------------- */

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

int catalog_put_gpu(sqlite3 *db, const gpu_spec *g, char *err, size_t errlen)
{
    char name[sizeof g->name], sql[1200];
    if (validate_gpu(g, name, err, errlen) != 0)
        return -1;
    return put_row(db, insert_sql(&GPUS, sql, sizeof sql), "gpu", name, bind_user_gpu, g, err, errlen);
}

int catalog_put_model(sqlite3 *db, const model_spec *m, char *err, size_t errlen)
{
    char name[sizeof m->name], sql[1200];
    if (validate_model(m, name, err, errlen) != 0)
        return -1;
    return put_row(db, insert_sql(&MODELS, sql, sizeof sql), "model", name, bind_user_model, m, err, errlen);
}

/* ---- the listing --------------------------------------------------------------------- */

/* Reads a whole table, ordered by name, into a malloc'd array of ELEMSIZE-byte
 * entries.  Returns 0 or -1 + ERR; *OUT is NULL when the table is empty. */
static int load_all(sqlite3 *db, const table_def *t, size_t elemsize, void (*read)(sqlite3_stmt *, void *),
                    void **out, size_t *n, char *err, size_t errlen)
{
    int ret = -1, rc;
    sqlite3_stmt *st = NULL;
    char cols[1024], sql[1200];
    unsigned char *rows = NULL;
    size_t count = 0, cap = 0;

    snprintf(sql, sizeof sql, "SELECT %s FROM %s ORDER BY name", data_columns(t, cols, sizeof cols), t->name);
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
    errmsg_set(err, errlen, "catalog: cannot read %s: %s", t->name, sqlite3_errmsg(db));
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
    fprintf(out, "%-*s  %-*s  %7s  %7s  %7s  %7s  %6s  %9s  %4s  %9s  %6s  %6s  %6s\n", wn, "name", wf, "full name",
            "bf16 TF", "fp8 TF", "fp4 TF", "mem GiB", "GB/s", "link GB/s", "node", "node GB/s", "idle W", "max W",
            "$/h");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%-*s  %-*s  %7.1f  %7.1f  %7.1f  %7.1f  %6.0f  %9.0f  %4d  %9.2f  %6.0f  %6.0f  %6.2f\n", wn,
                ERRMSG_SHOWN(g[i].name), wf, ERRMSG_SHOWN(g[i].full_name), g[i].bf16_tflops, g[i].fp8_tflops,
                g[i].fp4_tflops, g[i].mem_gib, g[i].mem_bw_gbs, g[i].link_gbs, g[i].gpus_per_node,
                g[i].node_link_gbs, g[i].idle_w, g[i].max_w, g[i].price_hr);
}

static void print_models(FILE *out, const model_spec *m, size_t n)
{
    int wn = 4;
    for (size_t i = 0; i < n; i++)
        wn = max_width(wn, m[i].name);
    fprintf(out, "Models\n");
    fprintf(out, "%-*s  %6s  %6s  %5s  %4s  %8s  %6s  %6s  %10s  %10s  %9s  %8s  %7s  %7s\n", wn, "name",
            "layers", "hidden", "heads", "kv", "head_dim", "inter", "vocab", "params (B)", "active (B)", "experts",
            "kv/token", "context", "weights");
    for (size_t i = 0; i < n; i++) {
        catalog_counts c;
        char experts[32] = "-";
        catalog_model_counts(&m[i], &c);
        if (m[i].experts)
            snprintf(experts, sizeof experts, "%d/%d%s%.0d", m[i].experts_per_token, m[i].experts,
                     m[i].shared_experts ? "+" : "", m[i].shared_experts);
        fprintf(out, "%-*s  %6d  %6d  %5d  %4d  %8d  %6d  %6d  %10.2f  %10.2f  %9s  %8.0f  %7d  %7s\n", wn,
                ERRMSG_SHOWN(m[i].name), m[i].layers, m[i].hidden, m[i].heads, m[i].kv_heads,
                m[i].head_dim, m[i].intermediate, m[i].vocab, c.total / 1e9, c.active / 1e9, experts,
                catalog_kv_elems_per_token(&m[i]), m[i].context, ERRMSG_SHOWN(m[i].weights));
    }
}

int catalog_print(sqlite3 *db, FILE *out, char *err, size_t errlen)
{
    int ret = -1;
    void *gp = NULL, *mp = NULL;
    gpu_spec *g;
    model_spec *m;
    size_t ng = 0, nm = 0;

    if (load_all(db, &GPUS, sizeof(gpu_spec), read_gpu_void, &gp, &ng, err, errlen) != 0 ||
        load_all(db, &MODELS, sizeof(model_spec), read_model_void, &mp, &nm, err, errlen) != 0)
        goto done;
    g = gp;
    m = mp;

    print_gpus(out, g, ng);
    fprintf(out, "(TF: dense TFLOP/s; node: GPUs sharing the link; idle/max: board power)\n\n");
    print_models(out, m, nm);
    fprintf(out, "(experts: routed per token/routed+shared; kv/token: KV-cache elements a token adds, "
                 "all layers; active: the weights a token uses, embedding table included)\n");
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

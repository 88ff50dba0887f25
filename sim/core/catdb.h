/* catdb.h -- the GPU and model catalog's internals shared by its files: the
 * tables' columns, their rows in SQL, validation and the built-in entries.
 *
 * The catalog is four files: catalog.c (the SQLite tables: columns, rows,
 * creation and migration, catalog_init), catbuiltin.c (the built-in GPUs and
 * models and bringing their rows up to date), catcheck.c (the validation of
 * entries, the figures of a geometry) and catlookup.c (look-ups, user
 * entries, the listing).  Internal to them: the rest of the library includes
 * core/catalog.h.
 */
#ifndef LATSIM_CATDB_H
#define LATSIM_CATDB_H

#include <sqlite3.h>
#include <stddef.h>
#include "latsim/catalog.h"   /* gpu_spec, model_spec */

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
/* A column: its name, its SQL declaration, and whether a database of the first
 * schema lacks it (migration adds it, with its default). */
typedef struct column {
    const char *name;
    const char *decl;
    int added;
} column;

typedef struct table_def {
    const char *name;         /* "gpus" or "models" */
    const column *cols;
    size_t ncols;
} table_def;

/* The two tables (catalog.c). */
extern const table_def GPUS;
extern const table_def MODELS;

/* ---- catalog.c: rows in SQL ------------------------------------------------ */

/* The columns of T but `builtin`, comma-separated, into BUF (room for all). */
const char *data_columns(const table_def *t, char *buf, size_t size);

/* "INSERT OR REPLACE INTO T (columns, builtin) VALUES (?, ..., ?)" into BUF. */
const char *insert_sql(const table_def *t, char *buf, size_t size);

/* A row of GPUS or MODELS into OUT (a gpu_spec or a model_spec): the READ of builtin_row. */
void read_gpu_void(sqlite3_stmt *st, void *out);

void read_model_void(sqlite3_stmt *st, void *out);

/* Binds G to an INSERT of insert_sql(&GPUS) (name NAME; builtin last). */
int bind_gpu(sqlite3_stmt *st, const gpu_spec *g, const char *name, int builtin);

/* Binds M to an INSERT of insert_sql(&MODELS) (name NAME; builtin last). */
int bind_model(sqlite3_stmt *st, const model_spec *m, const char *name, int builtin);

/* 1 when the rows A and B hold the same figures (as stored). */
int gpu_same(const gpu_spec *a, const gpu_spec *b);

int model_same(const model_spec *a, const model_spec *b);

/* Reads the row of T called NAME into OUT (through READ) and its builtin flag.
 * Returns 1 found, 0 absent, -1 error + ERR. */
int builtin_row(sqlite3 *db, const table_def *t, const char *name, void (*read)(sqlite3_stmt *, void *),
                void *out, int *builtin, char *err, size_t errlen);

/* ---- catcheck.c ------------------------------------------------------------- */

/* Checks G (every figure in range, a valid name) and writes its lower-case
 * name into NAME (room for G's).  Returns 0 or -1 + ERR. */
int validate_gpu(const gpu_spec *g, char *name, char *err, size_t errlen);

/* The same for model M (its geometry, MoE and MLA figures included). */
int validate_model(const model_spec *m, char *name, char *err, size_t errlen);

/* ---- catbuiltin.c ----------------------------------------------------------- */

/* Every built-in model, the typed ones first, in malloc'd *OUT.  Returns 0 or
 * -1 + ERR. */
int load_builtin_models(model_spec **out, size_t *n, char *err, size_t errlen);

/* Brings the built-in rows up to date: inserts the missing ones and replaces
 * built-in rows whose figures differ; user rows (builtin = 0) stay.  With
 * WRITE 0 only counts, into *STALE, the rows that would change.  Returns 0 or
 * -1 + ERR. */
int sync_builtins(sqlite3 *db, const model_spec *models, size_t nmodels, int write, int *stale,
                  char *err, size_t errlen);

#endif

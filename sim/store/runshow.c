/* runshow.c -- the run database as text: the `latsim runs` listing and the
 * `latsim show ID` report, in tables with aligned columns. */
#include "store/store.h"
#include "store/storedb.h"
#include "engine/errmsg.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- text tables ---------------------------------------------------------- */

/* A table of text cells printed with aligned columns. */
#define TABLE_MAX_COLS 16
typedef struct text_table {
    int ncols;             /* at most TABLE_MAX_COLS */
    const char *align;     /* per column: 'l' or 'r' */
    char **cells;          /* row-major, ncols per row; row 0 is the header */
    size_t nrows, cap;
} text_table;

/* Display width of a UTF-8 string (code points, so that "±" counts once). */
static int text_width(const char *s)
{
    int w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

/* A copy of S as it may be shown on a terminal (errmsg_field: control bytes
 * and invalid UTF-8 as \xNN, never cut), or NULL when out of memory. */
static char *shown_dup(const char *s)
{
    size_t n = 4 * strlen(s) + 5;          /* each byte becomes at most 4 */
    char *d = malloc(n);
    if (d)
        errmsg_field(s, d, n);
    return d;
}

/* Appends a row of t->ncols cells, given as that many const char * arguments
 * (NULL counts as empty), each as shown_dup() shows it.  Returns 0, or -1 when
 * out of memory. */
static int table_add(text_table *t, ...)
{
    va_list ap;
    int ret = -1;

    if (t->nrows == t->cap) {
        size_t ncap = t->cap ? 2 * t->cap : 16;
        char **p = realloc(t->cells, ncap * (size_t)t->ncols * sizeof *p);
        if (!p)
            return -1;
        t->cells = p;
        t->cap = ncap;
    }
    va_start(ap, t);
    for (int c = 0; c < t->ncols; c++) {
        const char *s = va_arg(ap, const char *);
        char *copy = shown_dup(s ? s : "");
        if (!copy) {
            while (c-- > 0)
                free(t->cells[t->nrows * (size_t)t->ncols + (size_t)c]);
            goto done;
        }
        t->cells[t->nrows * (size_t)t->ncols + (size_t)c] = copy;
    }
    t->nrows++;
    ret = 0;
done:
    va_end(ap);
    return ret;
}

static void table_print(const text_table *t, FILE *out, const char *indent)
{
    int width[TABLE_MAX_COLS] = { 0 };
    for (size_t r = 0; r < t->nrows; r++)
        for (int c = 0; c < t->ncols; c++) {
            int w = text_width(t->cells[r * (size_t)t->ncols + (size_t)c]);
            if (w > width[c])
                width[c] = w;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        const char *const *row = (const char *const *)t->cells + r * (size_t)t->ncols;
        int end = t->ncols;          /* no trailing blanks: drop empty last cells */
        while (end > 1 && row[end - 1][0] == '\0' && t->align[end - 1] == 'l')
            end--;
        fputs(indent, out);
        for (int c = 0; c < end; c++) {
            int pad = width[c] - text_width(row[c]);
            if (c > 0)
                fputs("  ", out);
            if (t->align[c] == 'r')
                fprintf(out, "%*s%s", pad, "", row[c]);
            else
                fprintf(out, "%s%*s", row[c], c == end - 1 ? 0 : pad, "");
        }
        fputc('\n', out);
    }
}

static void table_free(text_table *t)
{
    for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    t->cells = NULL;
    t->nrows = t->cap = 0;
}

static const char *col_text(sqlite3_stmt *st, int col)
{
    const unsigned char *s = sqlite3_column_text(st, col);
    return s ? (const char *)s : "";
}

/* Formats a REAL column (NULL -> "-") with %.6g. */
static const char *col_real(sqlite3_stmt *st, int col, char *buf, size_t size)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.6g", sqlite3_column_double(st, col));
    return buf;
}

/* ---- listing and showing --------------------------------------------------- */

int store_list_runs(sqlite3 *db, FILE *out, char *err, size_t errlen)
{
    int ret = -1, rc;
    sqlite3_stmt *st = NULL;
    text_table t = { 7, "rllrrlr", NULL, 0, 0 };
    char id[24], seed[24], wall[32], p99[32];

    /* e2e p99 of the whole system: the aggregate (-1) when there is one, else
     * replication 0. */
    if (sqlite3_prepare_v2(db,
            "SELECT r.id, r.started_at, r.status, r.seed, r.wall_s, r.scenario_path,"
            " (SELECT s.value FROM run_stats s WHERE s.run_id = r.id"
            "  AND s.replication IN (-1, 0) AND s.scope = '' AND s.metric = 'e2e'"
            "  AND s.stat = 'p99' ORDER BY s.replication LIMIT 1)"
            " FROM runs r ORDER BY r.id", -1, &st, NULL) != SQLITE_OK)
        goto db_error;
    if (table_add(&t, "id", "started", "status", "seed", "wall s", "scenario",
                  "e2e p99 ms") != 0)
        goto oom;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        snprintf(id, sizeof id, "%" PRId64, (int64_t)sqlite3_column_int64(st, 0));
        snprintf(seed, sizeof seed, "%" PRIu64,
                 seed_from_db((int64_t)sqlite3_column_int64(st, 3)));
        if (sqlite3_column_type(st, 4) == SQLITE_NULL)
            snprintf(wall, sizeof wall, "-");
        else
            snprintf(wall, sizeof wall, "%.2f", sqlite3_column_double(st, 4));
        if (table_add(&t, id, col_text(st, 1), col_text(st, 2), seed, wall,
                      col_text(st, 5), col_real(st, 6, p99, sizeof p99)) != 0)
            goto oom;
    }
    if (rc != SQLITE_DONE)
        goto db_error;
    if (t.nrows == 1)
        fprintf(out, "no runs in %s\n", ERRMSG_SHOWN(db_path(db)));
    else
        table_print(&t, out, "");
    ret = 0;
    goto done;

oom:
    errmsg_set(err, errlen, "store: out of memory");
    goto done;
db_error:
    errmsg_set(err, errlen, "%s: cannot list runs: %s", db_path(db), sqlite3_errmsg(db));
done:
    table_free(&t);
    sqlite3_finalize(st);
    return ret;
}

/* Prints the metadata of run ID; returns 0, 1 when there is no such run, -1 on
 * error (SQLite's message is then current). */
static int show_meta(sqlite3 *db, int64_t id, FILE *out)
{
    int ret = -1, rc;
    sqlite3_stmt *st = NULL;

    if (sqlite3_prepare_v2(db,
            "SELECT scenario_path, scenario_hash, seed, replications, version,"
            " started_at, wall_s, status FROM runs WHERE id = ?", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(st, 1, id) != SQLITE_OK)
        goto done;
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        ret = 1;
        goto done;
    }
    if (rc != SQLITE_ROW)
        goto done;
    fprintf(out, "run %" PRId64 "\n", id);
    fprintf(out, "  scenario      %s\n", ERRMSG_SHOWN(col_text(st, 0)));
    fprintf(out, "  hash          %s\n", ERRMSG_SHOWN(col_text(st, 1)));
    fprintf(out, "  seed          %" PRIu64 "\n",
            seed_from_db((int64_t)sqlite3_column_int64(st, 2)));
    fprintf(out, "  replications  %d\n", sqlite3_column_int(st, 3));
    fprintf(out, "  version       %s\n", ERRMSG_SHOWN(col_text(st, 4)));
    fprintf(out, "  started       %s\n", ERRMSG_SHOWN(col_text(st, 5)));
    if (sqlite3_column_type(st, 6) == SQLITE_NULL)
        fprintf(out, "  wall          -\n");
    else
        fprintf(out, "  wall          %.3f s\n", sqlite3_column_double(st, 6));
    fprintf(out, "  status        %s\n", ERRMSG_SHOWN(col_text(st, 7)));
    ret = 0;
done:
    sqlite3_finalize(st);
    return ret;
}

/* Prints the effective configuration as INI: keys without a section first,
 * then each section (in order of first appearance) with its keys in order. */
static int show_config(sqlite3 *db, int64_t id, FILE *out, int *oom)
{
    int ret = -1, rc, first = 1;
    sqlite3_stmt *st = NULL;
    char *section = NULL;

    if (sqlite3_prepare_v2(db,
            "SELECT c.section, c.key, c.value FROM run_config c WHERE c.run_id = ?1"
            " ORDER BY c.section <> '',"
            " (SELECT min(d.rowid) FROM run_config d"
            "  WHERE d.run_id = ?1 AND d.section = c.section), c.rowid",
            -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(st, 1, id) != SQLITE_OK)
        goto done;
    fprintf(out, "\nconfiguration\n");
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *sec = col_text(st, 0);
        if (sec[0] && (!section || strcmp(section, sec) != 0)) {
            free(section);
            section = strdup(sec);
            if (!section) {
                *oom = 1;
                goto done;
            }
            fprintf(out, "%s[%s]\n", first ? "" : "\n", ERRMSG_SHOWN(sec));
        }
        fprintf(out, "%s = %s\n", ERRMSG_SHOWN(col_text(st, 1)), ERRMSG_SHOWN(col_text(st, 2)));
        first = 0;
    }
    if (rc != SQLITE_DONE)
        goto done;
    if (first)
        fprintf(out, "(none recorded)\n");
    ret = 0;
done:
    free(section);
    sqlite3_finalize(st);
    return ret;
}

/* Prints the statistics: the aggregate over replications first, then each
 * replication in order. */
static int show_stats(sqlite3 *db, int64_t id, FILE *out, int *oom)
{
    int ret = -1, rc;
    sqlite3_stmt *st = NULL;
    text_table t = { 6, "rlllrl", NULL, 0, 0 };
    char rep[24], value[32], ci[40];

    if (sqlite3_prepare_v2(db,
            "SELECT replication, scope, metric, stat, value, ci95, text FROM run_stats"
            " WHERE run_id = ? ORDER BY replication >= 0, replication, rowid",
            -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(st, 1, id) != SQLITE_OK)
        goto done;
    if (table_add(&t, "rep", "scope", "metric", "stat", "value", "ci95") != 0)
        goto no_memory;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int r = sqlite3_column_int(st, 0);
        if (r < 0)
            snprintf(rep, sizeof rep, "all");
        else
            snprintf(rep, sizeof rep, "%d", r);
        if (sqlite3_column_type(st, 5) == SQLITE_NULL)
            ci[0] = '\0';
        else
            snprintf(ci, sizeof ci, "\u00b1%.3g", sqlite3_column_double(st, 5));
        /* a name (a pool's kind, its cost model) in the value column */
        const char *shown = sqlite3_column_type(st, 6) != SQLITE_NULL ? col_text(st, 6)
                            : col_real(st, 4, value, sizeof value);
        if (table_add(&t, rep, col_text(st, 1)[0] ? col_text(st, 1) : "(system)",
                      col_text(st, 2), col_text(st, 3), shown, ci) != 0)
            goto no_memory;
    }
    if (rc != SQLITE_DONE)
        goto done;
    fprintf(out, "\nstatistics\n");
    if (t.nrows == 1)
        fprintf(out, "(none recorded)\n");
    else
        table_print(&t, out, "");
    ret = 0;
    goto done;

no_memory:
    *oom = 1;
done:
    table_free(&t);
    sqlite3_finalize(st);
    return ret;
}

int store_show_run(sqlite3 *db, int64_t id, FILE *out, char *err, size_t errlen)
{
    int rc, oom = 0;

    rc = show_meta(db, id, out);
    if (rc == 1) {
        errmsg_set(err, errlen, "no run %" PRId64 " in %s", id, db_path(db));
        return 1;
    }
    if (rc != 0 || show_config(db, id, out, &oom) != 0 || show_stats(db, id, out, &oom) != 0) {
        if (oom)
            errmsg_set(err, errlen, "store: out of memory");
        else
            errmsg_set(err, errlen, "%s: cannot show run %" PRId64 ": %s", db_path(db), id,
                    sqlite3_errmsg(db));
        return -1;
    }
    return 0;
}

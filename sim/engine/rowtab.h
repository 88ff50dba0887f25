/* rowtab.h -- a table of named rows: the one registry behind station kinds,
 * routing policies, LLM schedulers, step-time (cost) models and run
 * collectors.
 *
 * A table holds the built-in rows its module is compiled with (an array of
 * row structs, or of pointers to rows), then the rows registered at run time,
 * in registration order; a row is found by its name (case-insensitive) and
 * listed in table order, which is the order of `latsim keys`, of choice lists
 * ("a|b|c") and of error messages.  A row's name is a `const char *` member of
 * its struct, at NAME_OFF.  Rows are never copied: the table keeps pointers,
 * so a registered row must outlive every use of the table.
 */
#ifndef LATSIM_ROWTAB_H
#define LATSIM_ROWTAB_H

#include <stddef.h>

#define ROWTAB_MAX_EXTRA 16   /* rows a table takes at run time */

typedef struct rowtab {
    const void *builtin;      /* the built-in rows: NBUILTIN structs of STRIDE bytes, or (STRIDE 0) NBUILTIN pointers */
    size_t stride;            /* bytes per built-in struct; 0: BUILTIN is an array of pointers to rows */
    int nbuiltin;             /* built-in rows */
    size_t name_off;          /* offset of the row's name (a const char *) in its struct, bytes */
    const void *extra[ROWTAB_MAX_EXTRA];   /* the registered rows, in order */
    int nextra;               /* how many */
} rowtab;

/* A table over ARR, an array of row structs of TYPE (ROWTAB_STRUCTS) or of
 * pointers to them (ROWTAB_POINTERS), each named by its member `name`. */
#define ROWTAB_STRUCTS(arr, type) { (arr), sizeof(type), (int) (sizeof(arr) / sizeof((arr)[0])), offsetof(type, name), { 0 }, 0 }
#define ROWTAB_POINTERS(arr, type) { (arr), 0, (int) (sizeof(arr) / sizeof((arr)[0])), offsetof(type, name), { 0 }, 0 }

/* Rows in T: built-in, then registered. */
int rowtab_count(const rowtab *t);

/* Row I of T (0 .. rowtab_count - 1), or NULL outside. */
const void *rowtab_at(const rowtab *t, int i);

/* The name of ROW (a row of T). */
const char *rowtab_name(const rowtab *t, const void *row);

/* The row of T named NAME (case-insensitive), or NULL. */
const void *rowtab_find(const rowtab *t, const char *name);

/* The index of ROW in T, or -1 when it is not one of T's rows. */
int rowtab_index(const rowtab *t, const void *row);

/* Registers ROW after T's rows.  Returns 0 (also when ROW is already in T:
 * registering twice does nothing), or -1 when its name is empty or taken by
 * another row, or the table is full (ROWTAB_MAX_EXTRA). */
int rowtab_add(rowtab *t, const void *row);

/* The names of T's rows joined by '|' ("a|b|c") into BUF (N bytes, truncated to fit). */
void rowtab_choices(const rowtab *t, char *buf, size_t n);

#endif

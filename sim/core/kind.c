/* kind.c -- the table of station kinds (see kind.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "core/kind.h"
#include "engine/rowtab.h"

/* The built-in rows (run/kinds.c hands them over: this layer knows no kind),
 * then the registered ones.  The first built-in is the default of `kind`. */
static rowtab table = { NULL, 0, 0, offsetof(station_kind, name), { 0 }, 0 };

void station_kind_set_builtin(const station_kind *const *rows, int n)
{
    table.builtin = rows;
    table.nbuiltin = n;
}

int station_kind_count(void) { return rowtab_count(&table); }
const station_kind *station_kind_at(int i) { return rowtab_at(&table, i); }
int station_kind_index(const station_kind *k) { return rowtab_index(&table, k); }
const station_kind *station_kind_find(const char *name) { return rowtab_find(&table, name); }
int station_kind_register(const station_kind *k) { return k ? rowtab_add(&table, k) : -1; }
void station_kind_choices(char *buf, size_t n) { rowtab_choices(&table, buf, n); }

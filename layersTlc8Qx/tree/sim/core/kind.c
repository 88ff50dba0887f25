/* kind.c -- the table of station kinds (see kind.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "core/kind.h"

/* The built-in rows (run/kinds.c hands them over: this layer knows no kind),
 * then the registered ones.  The first built-in is the default of `kind`. */
static const station_kind *const *builtin;
static int nbuiltin;
#define NBUILTIN nbuiltin
#define BUILTIN builtin

#define MAX_EXTRA 16
static const station_kind *extra[MAX_EXTRA];   /* registered kinds */
static int nextra;

void station_kind_set_builtin(const station_kind *const *rows, int n)
{
    builtin = rows;
    nbuiltin = n;
}

int station_kind_count(void) { return NBUILTIN + nextra; }

const station_kind *station_kind_at(int i)
{
    if (i < 0 || i >= NBUILTIN + nextra) return NULL;
    return i < NBUILTIN ? BUILTIN[i] : extra[i - NBUILTIN];
}

int station_kind_index(const station_kind *k)
{
    for (int i = 0; i < station_kind_count(); i++)
        if (station_kind_at(i) == k) return i;
    return -1;
}

const station_kind *station_kind_find(const char *name)
{
    for (int i = 0; i < station_kind_count(); i++)
        if (!strcasecmp(station_kind_at(i)->name, name)) return station_kind_at(i);
    return NULL;
}

int station_kind_register(const station_kind *k)
{
    if (station_kind_find(k->name)) return station_kind_find(k->name) == k ? 0 : -1;
    if (nextra == MAX_EXTRA) return -1;
    extra[nextra++] = k;
    return 0;
}

void station_kind_choices(char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < station_kind_count() && len < n; i++)
        len += (size_t) snprintf(buf + len, n - len, "%s%s", i ? "|" : "", station_kind_at(i)->name);
}

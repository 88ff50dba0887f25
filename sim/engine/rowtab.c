/* rowtab.c -- a table of named rows (see rowtab.h). */
#include "engine/rowtab.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int rowtab_count(const rowtab *t) { return t->nbuiltin + t->nextra; }

const void *rowtab_at(const rowtab *t, int i)
{
    if (i < 0 || i >= t->nbuiltin + t->nextra) return NULL;
    if (i >= t->nbuiltin) return t->extra[i - t->nbuiltin];
    if (t->stride == 0) return ((const void *const *) t->builtin)[i];
    return (const char *) t->builtin + (size_t) i * t->stride;
}

const char *rowtab_name(const rowtab *t, const void *row)
{
    const char *name;
    memcpy(&name, (const char *) row + t->name_off, sizeof name);
    return name;
}

const void *rowtab_find(const rowtab *t, const char *name)
{
    for (int i = 0; name && i < rowtab_count(t); i++) {
        const void *row = rowtab_at(t, i);
        if (!strcasecmp(rowtab_name(t, row), name)) return row;
    }
    return NULL;
}

int rowtab_index(const rowtab *t, const void *row)
{
    for (int i = 0; i < rowtab_count(t); i++)
        if (rowtab_at(t, i) == row) return i;
    return -1;
}

int rowtab_add(rowtab *t, const void *row)
{
    const char *name = row ? rowtab_name(t, row) : NULL;
    if (!name || !name[0]) return -1;
    const void *had = rowtab_find(t, name);
    if (had) return had == row ? 0 : -1;
    if (t->nextra == ROWTAB_MAX_EXTRA) return -1;
    t->extra[t->nextra++] = row;
    return 0;
}

void rowtab_choices(const rowtab *t, char *buf, size_t n)
{
    size_t len = 0;
    if (n == 0) return;
    buf[0] = '\0';
    for (int i = 0; i < rowtab_count(t) && len < n; i++)
        len += (size_t) snprintf(buf + len, n - len, "%s%s", i ? "|" : "", rowtab_name(t, rowtab_at(t, i)));
}

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

const scn_key *station_kind_key(const station_kind *k, const char *key)
{
    for (const scn_key *q = k->keys; q && q->key; q++)
        if (!strcmp(q->key, key)) return q;
    for (int set = 0; k->more_keys && k->more_keys(set); set++)
        for (const scn_key *q = k->more_keys(set); q->key; q++)
            if (!strcmp(q->key, key)) return q;
    return NULL;
}

const char *station_kind_help(const station_kind *k, const char *key, const char *help, char *buf, size_t n)
{
    const char *at = help ? strstr(help, "{choices}") : NULL;
    char list[512];
    if (!at || !k->key_choices || k->key_choices(key, list, sizeof list)) return help;
    size_t len = (size_t) snprintf(buf, n, "%.*s", (int) (at - help), help);
    for (const char *c = list; *c && len < n; c++)
        len += (size_t) (*c == '|' ? snprintf(buf + len, n - len, " | ") : snprintf(buf + len, n - len, "%c", *c));
    if (len < n) snprintf(buf + len, n - len, "%s", at + strlen("{choices}"));
    return buf;
}

void station_kind_default_line(FILE *out, const station_kind *k, const cfg *raw, const char *sec, const char *key,
                               const char *why)
{
    const scn_key *q = station_kind_key(k, key);
    if (!q) return;
    char help[1024];
    if (!why) why = station_kind_help(k, key, q->help, help, sizeof help);
    const cfg_entry *e = cfg_get(raw, sec, key);
    fprintf(out, "  [%s] %s = %s (%s): %s\n", sec, key, e ? e->value : q->def && *q->def ? q->def : "derived",
            e ? "set" : "default", why);
}

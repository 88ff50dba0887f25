/* tap.c -- a run's taps (tap.h): a small table searched by name and pool when
 * the stations are made. */
#include <stdlib.h>
#include <string.h>
#include "core/tap.h"

int tap_offer(tap_set *s, const char *name, int pool, void *ptr)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 8;
        tap *t = realloc(s->t, (size_t) cap * sizeof *t);
        if (!t) return -1;
        s->t = t;
        s->cap = cap;
    }
    s->t[s->n++] = (tap) { name, pool, ptr };
    return 0;
}

void *tap_take(const tap_set *s, const char *name, int pool)
{
    for (int i = 0; s && i < s->n; i++)
        if (s->t[i].pool == pool && !strcmp(s->t[i].name, name)) return s->t[i].ptr;
    return NULL;
}

void tap_set_free(tap_set *s)
{
    free(s->t);
    memset(s, 0, sizeof *s);
}

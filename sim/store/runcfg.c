/* runcfg.c -- the effective configuration a run is stored with (store_config,
 * latsim/store.h): a scenario's entries after its overrides, their hash and
 * the file's text, from a loaded scenario or read again from the file. */
#include <stdlib.h>
#include <string.h>
#include "core/config.h"
#include "engine/errmsg.h"
#include "run/scenario.h"
#include "store/store.h"

/* Fills OUT's entries and hash from C.  Returns 0 or -1 + ERR (out of memory). */
static int from_cfg(const cfg *c, store_config *out, char *err, size_t errlen)
{
    out->kv = calloc(c->n + 1, sizeof *out->kv);
    if (!out->kv) { errmsg_set(err, errlen, "out of memory"); return -1; }
    out->n = c->n;
    out->text = c->text;
    out->hash = STORE_HASH_INIT;
    for (size_t i = 0; i < c->n; i++) {
        store_kv *kv = &out->kv[i];
        *kv = (store_kv) { c->e[i].section, c->e[i].key, c->e[i].value };
        out->hash = store_hash(kv->section, strlen(kv->section) + 1, out->hash);
        out->hash = store_hash(kv->key, strlen(kv->key) + 1, out->hash);
        out->hash = store_hash(kv->value, strlen(kv->value) + 1, out->hash);
    }
    return 0;
}

int store_config_of(const scenario *s, store_config *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    return from_cfg(&s->raw, out, err, errlen);
}

int store_config_read(const char *path, const char *const *sets, int nsets, store_config *out,
                      char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    cfg *c = malloc(sizeof *c);
    if (!c) { errmsg_set(err, errlen, "out of memory"); return -1; }
    out->own = c;
    if (cfg_load(c, path, err, errlen) != 0) return -1;
    for (int i = 0; i < nsets; i++)
        if (cfg_set(c, sets[i], err, errlen) != 0) return -1;
    return from_cfg(c, out, err, errlen);
}

void store_config_free(store_config *c)
{
    free(c->kv);
    if (c->own) {
        cfg_free(c->own);
        free(c->own);
    }
    memset(c, 0, sizeof *c);
}

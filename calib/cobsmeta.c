/* cobsmeta.c -- an engine's metadata JSON over an observed run's scenario (see cobsmeta.h). */
#include "cobsmeta.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/scn.h"
#include "run/scenario.h"
#include "engine/errmsg.h"
#include "latsim/infile.h"
#include "llm/llmcfg.h"
#include "llm/sched.h"

/* The value at dotted PATH of ROOT, NULL when absent or null. */
static json_t *at(json_t *root, const char *path)
{
    char key[96];
    json_t *o = root;
    while (o && *path) {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof key, "%.*s", (int) n, path);
        o = json_is_object(o) ? json_object_get(o, key) : NULL;
        path += n + (path[n] == '.');
    }
    return json_is_null(o) ? NULL : o;
}

/* The first of the NULL-ended PATHS present in ROOT, its path in *WHERE. */
static json_t *first(json_t *root, const char *const *paths, const char **where)
{
    for (; *paths; paths++) {
        json_t *v = at(root, *paths);
        if (v) {
            *where = *paths;
            return v;
        }
    }
    return NULL;
}

#define PATHS(sect, name) (const char *const[]) { "resolved_config." sect "." name, "kv_cache." name, "engine_kwargs." name, name, NULL }

/* A whole number in [LO, HI] at PATHS into *OUT (-1 when absent).  Returns 0, or 2 (ERR). */
static int whole(json_t *root, const char *const *paths, long long lo, long long hi, const char *file, long long *out, char *err,
                 size_t errlen)
{
    const char *w = NULL;
    json_t *v = first(root, paths, &w);
    *out = -1;
    if (!v) return 0;
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (!(x >= (double) lo && x <= (double) hi) || x != floor(x)) {
        errmsg_set(err, errlen, "%s: %s: expected a whole number in %lld..%lld", file, w, lo, hi);
        return 2;
    }
    *out = (long long) x;
    return 0;
}

/* A boolean at PATHS into *OUT (-1 when absent).  Returns 0, or 2 (ERR). */
static int boolean(json_t *root, const char *const *paths, const char *file, int *out, char *err, size_t errlen)
{
    const char *w = NULL;
    json_t *v = first(root, paths, &w);
    *out = -1;
    if (!v) return 0;
    if (!json_is_boolean(v)) {
        errmsg_set(err, errlen, "%s: %s: expected true or false", file, w);
        return 2;
    }
    *out = json_is_true(v);
    return 0;
}

int cobs_meta_read(const char *path, cobs_meta *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    json_error_t je;
    /* A regular file within the JSON bound (a FIFO would block, a device never end). */
    FILE *f = infile_open(path, INFILE_MAX_JSON, err, errlen);
    if (!f) return 2;
    json_t *root = json_loadf(f, 0, &je);
    fclose(f);
    if (!root) {
        errmsg_set(err, errlen, "%s:%d: not JSON: %s", path, je.line, je.text);
        return 2;
    }
    int rc = 0;
    if (!json_is_object(root)) {
        errmsg_set(err, errlen, "%s: expected one JSON object (the server's configuration)", path);
        rc = 2;
    }
    if (!rc) rc = whole(root, PATHS("cache_config", "num_gpu_blocks"), 1, 1000000000LL, path, &m->kv_blocks, err, errlen);
    if (!rc) rc = whole(root, PATHS("cache_config", "block_size"), 1, 1048576, path, &m->block_tokens, err, errlen);
    if (!rc) rc = whole(root, PATHS("scheduler_config", "max_num_seqs"), 1, 100000000, path, &m->max_seqs, err, errlen);
    if (!rc) rc = whole(root, PATHS("scheduler_config", "max_num_batched_tokens"), 1, 1000000000LL, path, &m->max_tokens, err, errlen);
    if (!rc) rc = whole(root, PATHS("parallel_config", "tensor_parallel_size"), 1, 1024, path, &m->tp, err, errlen);
    if (!rc) rc = whole(root, PATHS("parallel_config", "pipeline_parallel_size"), 1, 1024, path, &m->pp, err, errlen);
    if (!rc) rc = whole(root, PATHS("parallel_config", "data_parallel_size"), 1, 1024, path, &m->dp, err, errlen);
    if (!rc) rc = boolean(root, PATHS("parallel_config", "enable_expert_parallel"), path, &m->ep, err, errlen);
    if (!rc) rc = boolean(root, PATHS("cache_config", "enable_prefix_caching"), path, &m->prefix_cache, err, errlen);
    m->mem_util = NAN;
    if (!rc) {
        const char *w = NULL;
        json_t *v = first(root, PATHS("cache_config", "gpu_memory_utilization"), &w);
        if (v) {
            double x = json_is_number(v) ? json_number_value(v) : NAN;
            if (!(x > 0 && x <= 1)) {
                errmsg_set(err, errlen, "%s: %s: expected a share in (0, 1]", path, w);
                rc = 2;
            } else m->mem_util = x;
        }
    }
    if (!rc) {
        static const char *const VER[][2] = { { "vllm_version", "vllm" }, { "hardware.torch_version", "torch" },
                                              { "hardware.cuda_version", "cuda" }, { "hardware.device_name", "" } };
        size_t L = 0;
        for (size_t i = 0; i < sizeof VER / sizeof VER[0]; i++) {
            json_t *v = at(root, VER[i][0]);
            if (json_is_string(v) && L + 8 < sizeof m->versions)
                L += (size_t) snprintf(m->versions + L, sizeof m->versions - L, "%s%s%s%s", L ? ", " : "", VER[i][1],
                                       VER[i][1][0] ? " " : "", json_string_value(v));
        }
        if (L >= sizeof m->versions) L = sizeof m->versions - 1;
        char shown[256];
        snprintf(m->versions, sizeof m->versions, "%s", errmsg_field(m->versions, shown, sizeof shown));
    }
    if (!rc && m->kv_blocks < 0 && m->block_tokens < 0 && m->max_seqs < 0 && m->max_tokens < 0 && m->tp < 0) {
        errmsg_set(err, errlen, "%s: none of num_gpu_blocks, block_size, max_num_seqs, max_num_batched_tokens, "
                   "tensor_parallel_size found (resolved_config.*, kv_cache.*, engine_kwargs.* or the top level)", path);
        rc = 2;
    }
    json_decref(root);
    return rc;
}

/* Appends "KEY=VALUE" to the pool's overrides and, when the scenario's own value
 * CUR differs and was GIVEN in the file, "KEY V (FIELD) vs CUR" to WARN. */
static void put(const char *sec, const char *key, long long v, long long cur, int given, const char *field, char (*sets)[128],
                int max, int *n, char *warn, size_t wlen)
{
    if (v < 0) return;
    if (*n < max) snprintf(sets[(*n)++], 128, "%s.%s=%lld", sec, key, v);
    if (given && v != cur) {
        size_t L = strlen(warn);
        snprintf(warn + L, wlen - L, "%s%s %lld (%s) vs %lld", L ? ", " : "", key, v, field, cur);
    }
}

void cobs_meta_sets(const cobs_meta *m, const char *path, const scenario *sc, int index, char (*sets)[128], int max,
                    int *nsets, char *warn, size_t wlen, char *note, size_t nlen)
{
    const pool_cfg *p = &sc->pools[index];
    const llm_cfg *L = llm_cfg_of(p);
    char sec[80], w[1024] = "";
    snprintf(sec, sizeof sec, "pool %s", p->name);
    *nsets = 0;
    warn[0] = note[0] = '\0';
#define GIVEN(k) (cfg_get(&sc->raw, sec, k) != NULL)
    put(sec, "kv_blocks", m->kv_blocks, (long long) L->kv_blocks, GIVEN("kv_blocks"), "num_gpu_blocks", sets, max, nsets, w, sizeof w);
    if (m->kv_blocks > 0 && !GIVEN("kv_blocks") && m->kv_blocks != (long long) L->kv_blocks)
        snprintf(note, nlen, "%s: kv_blocks %lld (the engine's num_gpu_blocks) replaces the derived %lld", path, m->kv_blocks,
                 (long long) L->kv_blocks);
    put(sec, "block_tokens", m->block_tokens, L->block_tokens, GIVEN("block_tokens"), "block_size", sets, max, nsets, w, sizeof w);
    put(sec, "max_batch", m->max_seqs, L->max_batch, GIVEN("max_batch"), "max_num_seqs", sets, max, nsets, w, sizeof w);
    if (L->sched && (L->sched->flags & LLM_SCHED_SPLITS_PROMPTS)) {
        const cfg_entry *ck = cfg_get(&sc->raw, sec, "chunk_tokens");
        put(sec, "chunk_tokens", m->max_tokens, ck ? atoll(ck->value) : 512, ck != NULL, "max_num_batched_tokens", sets, max,
            nsets, w, sizeof w);
    } else
        put(sec, "max_batch_tokens", m->max_tokens, (long long) L->max_batch_tokens, GIVEN("max_batch_tokens"),
            "max_num_batched_tokens", sets, max, nsets, w, sizeof w);
    put(sec, "tp", m->tp, L->tp, GIVEN("tp"), "tensor_parallel_size", sets, max, nsets, w, sizeof w);
    put(sec, "pp", m->pp, L->pp, GIVEN("pp"), "pipeline_parallel_size", sets, max, nsets, w, sizeof w);
    if (m->ep != 1) put(sec, "replicas", m->dp, L->replicas, GIVEN("replicas"), "data_parallel_size", sets, max, nsets, w, sizeof w);
    if (isfinite(m->mem_util) && *nsets < max)
        snprintf(sets[(*nsets)++], 128, "%s.gpu_memory_utilization=%.17g", sec, m->mem_util);
    size_t n = strlen(w);
    if (m->ep == 1 && m->dp > 1)
        n += (size_t) snprintf(w + n, sizeof w - n, "%sdata_parallel_size %lld with enable_expert_parallel (one replica of "
                               "data-parallel attention ranks, not replicas: latsim has no such pool here)", n ? ", " : "", m->dp);
    if (m->prefix_cache >= 0 && m->prefix_cache != L->prefix_cache && n < sizeof w)
        snprintf(w + n, sizeof w - n, "%sprefix caching %s (enable_prefix_caching, checked only) vs %s", n ? ", " : "",
                 m->prefix_cache ? "on" : "off", L->prefix_cache ? "yes" : "no");
    if (w[0]) snprintf(warn, wlen, "%s contradicts pool %s of %s: %s; the engine's values are used where latsim has the key", path, p->name, sc->raw.path, w);
#undef GIVEN
}

char *cobs_scenario_text(const scenario *sc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    const cfg *c = &sc->raw;
    for (size_t i = 0; i < c->ns; i++) {
        fprintf(f, "[%s]\n", c->s[i].name);
        for (size_t k = 0; k < c->n; k++)
            if (!strcmp(c->e[k].section, c->s[i].name)) fprintf(f, "%s = %s\n", c->e[k].key, c->e[k].value);
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

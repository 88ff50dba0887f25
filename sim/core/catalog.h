/* catalog.h -- the GPU and model catalog, kept in SQLite.
 *
 * Two tables, `gpus` and `models`, live in the same database as the runs.  They
 * are created and filled with the built-in entries (each with its source) the
 * first time a database is opened, and brought up to date when an older one is
 * (catalog_init); users add or replace entries with catalog_put_*() (from
 * `latsim catalog add` or from [gpu NAME] / [model NAME] sections of a
 * scenario).  Names are case-insensitive keys such as "h100" or "llama-3-8b";
 * a few aliases ("h100-sxm", "a100-80gb", "4090") resolve too.  The records
 * and the calls a front end makes (look-ups, catalog_put_*, catalog_check_*,
 * catalog_print) are public, in latsim/catalog.h; this header adds what only
 * the library uses.  docs/catalog.md lists every built-in entry and its source.
 */
#ifndef LATSIM_CATALOG_H
#define LATSIM_CATALOG_H

#include <stdio.h>
#include <sqlite3.h>
#include "core/spec.h"

/* catalog_model_counts(): the parameter counts of a model, from its geometry. */
typedef struct catalog_counts {
    double total;           /* every weight (model_spec.params), count */
    double active;          /* weights one token's forward pass uses: total less the routed
                               experts it skips (the embedding table counted whole, as the
                               Mixtral, Qwen3 and DeepSeek model cards count), count */
    double embedding;       /* the input embedding table, vocab x hidden, count: a token reads
                               one row of it, so the weights a step multiplies by are
                               active - embedding (OpenAI's "active" for gpt-oss) */
    double expert;          /* one routed expert of one layer, count (0: dense model) */
    int moe_layers;         /* layers with routed experts */
} catalog_counts;

/* Readies the catalog of DB: creates the tables if missing, adds the columns an
 * older database lacks (ALTER TABLE ADD COLUMN, their defaults), inserts the
 * built-in entries it lacks and refreshes built-in rows whose figures changed;
 * rows a user added or replaced (builtin = 0) are never touched.  It writes
 * only when something is missing or stale (a current database is read, not
 * written), in one transaction (a savepoint inside the caller's).  On a
 * read-only connection the same catalog is built in TEMP tables that shadow
 * the file's, which is left unchanged.  Returns 0, or -1 with a message in ERR. */
int catalog_init(sqlite3 *db, char *err, size_t errlen);

/* 1 when TABLE ("gpus" or "models") holds a built-in entry called NAME, else 0
 * (also on a database error). */
int catalog_is_builtin(sqlite3 *db, const char *table, const char *name);

/* Bytes per weight for a precision name: bf16/fp16 2, fp8 1, int8 1, int4 0.5,
 * fp4 0.5625 (4-bit values plus one 8-bit scale per 16 weights, the NVFP4
 * layout; MXFP4's one per 32 would be 0.53125); returns 0 for an unknown name. */
double catalog_weight_bytes(const char *precision);

/* The parameter counts of M from its geometry (catalog_counts).  A dense
 * model's active count is its total. */
void catalog_model_counts(const model_spec *m, catalog_counts *c);

/* Elements one token adds to the KV cache, all layers together: K and V,
 * 2 x layers x kv_heads x head_dim, or with MLA the compressed latent and the
 * RoPE key, layers x (kv_lora_rank + qk_rope_head_dim).  Times the bytes per
 * element of the cache's dtype gives the bytes per token. */
double catalog_kv_elems_per_token(const model_spec *m);

#endif

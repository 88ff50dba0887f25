/* llmcfg.h -- an LLM pool's configuration (keys, catalog look-up, derivation).
 *
 * The keys and their parsing, and llm_derive(): from the resolved model and
 * GPU, the KV-cache capacity, max_seq_len and the cost model's hardware.
 * The station itself is llm.h.
 */
#ifndef LATSIM_LLMCFG_H
#define LATSIM_LLMCFG_H

#include <sqlite3.h>
#include "run/scenario.h"

/* The kind's keys (kind.h), ended by a NULL row. */
extern const scn_key llm_keys[];

/* Reads the keys of [SEC] into P->llm.  Returns 0 or -1 (error set in X). */
int llm_parse(scn_ctx *x, const char *sec, pool_cfg *p);

/* Frees what llm_parse allocated (the cost model's state). */
void llm_free_cfg(pool_cfg *p);

/* The cost models' keys, table by table (kind.h's more_keys). */
const scn_key *llm_more_keys(int set);

/* Looks the model and GPU up (the scenario's sections first, then the catalog
 * in DB) and derives (llm_derive).  Returns 0 or -1 (error set in X). */
int llm_resolve(scn_ctx *x, const char *sec, pool_cfg *p, sqlite3 *db);

/* Fills the derived parts of L from its resolved model and gpu: the KV-cache
 * capacity, max_seq_len, and the cost model.  Checks TP against the heads, that
 * the weights fit, and that a request can fit the KV cache.  Returns 0, or -1
 * with a message in ERR and the offending key in *KEY ("tp", "kv_blocks"...;
 * "workload.prompt_tokens" names a [workload] key). */
int llm_derive(llm_cfg *l, const workload_cfg *w, const char **key, char *err, size_t errlen);

/* KV-cache bytes per token on one GPU of a replica (K and V, all layers,
 * that GPU's share of the KV heads). */
double llm_kv_bytes_per_token(const llm_cfg *l);

#endif

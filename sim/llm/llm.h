/* llm.h -- a pool of LLM serving replicas (`kind = llm`).
 *
 * Each replica runs forward steps; a step's duration comes from the pool's cost
 * model (cost.h).  Requests wait in the pool's shared FIFO queue (or, with
 * `routing`, in the queue of the replica a routing policy chose) and are taken
 * by replicas at step boundaries, as the pool's scheduler decides: a row of the
 * scheduler table (sched.h), chosen by name.  The built-in rows:
 *   static      a batch is formed from what is waiting; it prefills (prompts
 *               padded to the longest) and decodes until its longest output is
 *               done; newcomers wait for the next batch.
 *   dynamic     the same, but a batch starts only when max_batch requests wait
 *               or the oldest has waited max_wait_ms.
 *   continuous  iteration-level scheduling (Orca, vLLM): every step, finished
 *               sequences leave and waiting ones join, within max_batch,
 *               max_batch_tokens and the free KV blocks; a joining prompt is
 *               prefilled whole in the step that admits it, alongside decodes.
 *   chunked     continuous plus Sarathi-style chunked prefill: decodes first,
 *               then prompt chunks up to chunk_tokens per step.
 * The KV cache is paged in blocks of block_tokens.  When a step needs blocks
 * that are not free, the newest running sequence is preempted (its blocks
 * freed, the request put back at the head of the queue) and later recomputed.
 * The cost of a run does not grow with output length: one event per step, and
 * finishing sequences come out of a heap keyed by the step they finish in.
 * The replicas' internals are replica.h (for the llm files only).
 */
#ifndef LATSIM_LLM_H
#define LATSIM_LLM_H

#include "core/kind.h"
#include "core/station.h"
#include "llm/llmcfg.h"
#include "llm/sched.h"

/* The kind's row (kind.h): `kind = llm`. */
extern const station_kind llm_kind;

/* Bytes llm_new() allocates for a pool of L's replicas (its fixed state, not the
 * requests it will hold). */
double llm_footprint(const llm_cfg *L);

/* Creates the station for LLM pool CFG.  Returns NULL when out of memory. */
station *llm_new(const pool_cfg *cfg, const station_env *env);

#endif

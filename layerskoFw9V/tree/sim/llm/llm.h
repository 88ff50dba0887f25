/* llm.h -- a pool of LLM serving replicas.
 *
 * Each replica runs forward steps; a step's duration comes from the pool's cost
 * model (cost.h).  Requests wait in the pool's shared FIFO queue (or, with
 * `routing`, in the queue of the replica a routing policy chose) and are taken
 * by replicas at step boundaries.  Schedulers (a table chosen by name; each
 * row's plan returns when to plan again if it has no step to run):
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
 */
#ifndef LATSIM_LLM_H
#define LATSIM_LLM_H

#include "core/kind.h"
#include "llm/llmcfg.h"
#include "core/station.h"

/* The scheduler table: rows by name (case-insensitive; NULL when none), in
 * order, and their names joined by '|'. */
const llm_sched *llm_sched_find(const char *name);
int llm_sched_count(void);
const llm_sched *llm_sched_at(int i);
void llm_sched_choices(char *buf, size_t n);
const char *llm_sched_name(const llm_sched *s);
/* 1 when the scheduler prefills prompts in chunks, so that a prompt may be
 * longer than max_batch_tokens (chunked). */
int llm_sched_splits_prompts(const llm_sched *s);
/* 1 when the scheduler's replicas support fleet keys (failures, autoscaling, cold starts). */
int llm_sched_fleet(const llm_sched *s);

/* The kind's row (kind.h): `kind = llm`. */
extern const station_kind llm_kind;

/* Creates the station for LLM pool CFG.  Returns NULL when out of memory. */
/* Bytes llm_new() allocates for a pool of L's replicas (its fixed state, not the
 * requests it will hold). */
double llm_footprint(const llm_cfg *L);

station *llm_new(const pool_cfg *cfg, const station_env *env);

#endif

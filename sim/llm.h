/* llm.h -- a pool of LLM serving replicas.
 *
 * Each replica runs forward steps; a step's duration comes from the pool's cost
 * model (cost.h).  Requests wait in the pool's shared FIFO queue and are taken
 * by replicas at step boundaries.  Schedulers (a table chosen by name):
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

#include "station.h"

/* Fills the derived parts of L from its resolved model and gpu: the KV-cache
 * capacity, max_seq_len, and the cost model.  Checks TP against the heads, that
 * the weights fit, and that a request can fit the KV cache.  Returns 0, or -1
 * with a message in ERR and the offending key in *KEY ("tp", "kv_blocks"...;
 * "workload.prompt_tokens" names a [workload] key). */
int llm_derive(llm_cfg *l, const workload_cfg *w, const char **key, char *err, size_t errlen);

/* KV-cache bytes per token on one GPU of a replica (K and V, all layers,
 * that GPU's share of the KV heads). */
double llm_kv_bytes_per_token(const llm_cfg *l);

/* Creates the station for LLM pool CFG.  Returns NULL when out of memory. */
station *llm_new(const pool_cfg *cfg, int index, struct sim *sim, evq *q, uint64_t seed);

/* The measured window opens: the pool's counters restart.  Time-based ones
 * (KV occupancy, FLOPs, bytes) count only the part of each step inside the window. */
void llm_window_start(station *st);

/* The measured window closes: steps in flight are counted up to now. */
void llm_window_end(station *st);

#endif

/* cobsmeta.h -- a serving engine's configuration (its metadata JSON) read and
 * laid over the scenario of an observed run (`calib import observed --meta`,
 * `replay --meta`; docs/observed.md "Server metadata").
 *
 * vLLM resolves at start-up what latsim otherwise derives or guesses: the KV
 * blocks it could allocate, the block size, its batch limits, the parallel
 * layout.  Each value is looked up at the first of a few places (the shape of
 * tests/data/observed/vllm_rtx4090_llama31_8b_meta.json: resolved_config.*,
 * then kv_cache.* / engine_kwargs.*, then the top level):
 *   num_gpu_blocks            -> kv_blocks (replaces the derived count)
 *   block_size                -> block_tokens
 *   max_num_seqs              -> max_batch
 *   max_num_batched_tokens    -> chunk_tokens (chunked scheduler) or max_batch_tokens
 *   gpu_memory_utilization    -> gpu_memory_utilization
 *   tensor_parallel_size      -> tp
 *   pipeline_parallel_size    -> pp
 *   data_parallel_size        -> replicas (without expert parallelism: independent engines)
 *   enable_expert_parallel, enable_prefix_caching: checked only (said when they differ)
 * and the versions (vLLM, torch, CUDA, device) for the note.
 */
#ifndef LATSIM_COBSMETA_H
#define LATSIM_COBSMETA_H

#include <stddef.h>

#include "latsim/scenario.h"

/* What the engine resolved; -1 (or NAN, "") where the file does not say. */
typedef struct cobs_meta {
    long long kv_blocks;      /* KV blocks per replica (num_gpu_blocks) */
    long long block_tokens;   /* tokens per block (block_size) */
    long long max_seqs;       /* sequences per step at most (max_num_seqs) */
    long long max_tokens;     /* tokens per step at most (max_num_batched_tokens) */
    double mem_util;          /* share of GPU memory the engine may use (gpu_memory_utilization); NAN unknown */
    long long tp, pp, dp;     /* tensor, pipeline, data parallel sizes */
    int ep;                   /* 1: enable_expert_parallel; 0 no; -1 unknown */
    int prefix_cache;         /* 1: enable_prefix_caching; 0 no; -1 unknown */
    char versions[256];       /* "vllm 0.19.0, torch ..., cuda ..., NVIDIA ..." ("" unknown) */
} cobs_meta;

/* Reads PATH into M.  Returns 0; 2 for bad input (ERR one line: "PATH: not
 * JSON ...", "PATH: FIELD: ..." for a value of the wrong type or out of range,
 * or no field latsim reads). */
int cobs_meta_read(const char *path, cobs_meta *m, char *err, size_t errlen);

/* The overrides "pool NAME.key=value" that lay M over pool INDEX of SC (loaded
 * and resolved) into SETS (up to MAX strings of SETLEN bytes), their number
 * into *NSETS; every value of M that the scenario gives otherwise is listed in
 * WARN ("" when none), what M fills or replaces that the scenario derived
 * (the KV block count) in NOTE.  PATH names the metadata file in both. */
void cobs_meta_sets(const cobs_meta *m, const char *path, const scenario *sc, int index, char (*sets)[128], int max,
                    int *nsets, char *warn, size_t wlen, char *note, size_t nlen);

/* SC's text as loaded (every section and key, the overrides applied), for
 * storing the scenario a run was imported with (malloc'd; NULL when out of
 * memory). */
char *cobs_scenario_text(const scenario *sc);

#endif

/* cobsdb.h -- observed runs in the calibration store (the database of cdb.h).
 *
 * Tables (created by cdb_init, through cobsdb_init):
 *   calib_observed_run    one row per imported run: its format, file, import date
 *                         and tool (provenance), what the reader noted, the
 *                         scenario text of the server it was measured on and that
 *                         server's description (the pool: model, GPU, TP, weights,
 *                         scheduler, batch and KV limits);
 *   calib_observed_req    its requests: arrival, token counts, TTFT, E2E, queue and
 *                         ITL gaps (a JSON list) as measured, class, source line;
 *   calib_observed_level  a sweep's levels: concurrency or rate, token counts and
 *                         the measured aggregates.
 * Writers run inside the caller's transaction (cu_write_db).
 */
#ifndef LATSIM_COBSDB_H
#define LATSIM_COBSDB_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#include "cobserved.h"

/* The server an observed run was measured on: the scenario's LLM pool. */
typedef struct cobs_server {
    char pool[64];            /* the pool's NAME ([pool NAME]) */
    char model[48];           /* catalog model */
    char gpu[48];             /* catalog GPU */
    char weights[8];          /* weight precision (the pool's, else the model's) */
    int tp;                   /* GPUs per replica */
    int replicas;             /* replicas in the pool */
    char scheduler[24];       /* static | continuous | chunked ... */
    int max_batch;            /* most sequences in a step */
    long long chunk_tokens;   /* chunked prefill budget per step, tokens (0: not chunked) */
    long long kv_blocks;      /* KV blocks per replica */
    int block_tokens;         /* tokens per KV block */
    int prefix_cache;         /* 1: the pool keeps finished prompts' blocks */
} cobs_server;

/* One stored run's header, as listed and shown. */
typedef struct cobs_stored {
    int64_t id;               /* row id */
    char format[16];          /* reader */
    char file[1024];          /* imported file */
    char imported_at[32];     /* ISO 8601 UTC */
    char tool[64];            /* latsim version that imported it */
    char source_tool[128];    /* what wrote the file (cobs_run.tool) */
    char note[768];           /* the reader's note */
    char scenario_path[1024]; /* the scenario file as given */
    cobs_server srv;          /* the server */
    long n_requests;          /* requests stored */
    long n_levels;            /* sweep levels stored */
} cobs_stored;

/* Creates the tables when missing.  Returns 0 or -1 + ERR. */
int cobsdb_init(sqlite3 *db, char *err, size_t errlen);

/* Stores RUN (requests or levels), measured on SRV as described by the scenario
 * at SCENARIO_PATH with text SCENARIO_TEXT, imported by TOOL (latsim and its
 * version).  Sets *ID.  Returns 0 or -1 + ERR. */
int cobsdb_save(sqlite3 *db, const cobs_run *run, const char *scenario_path, const char *scenario_text,
                const cobs_server *srv, const char *tool, int64_t *id, char *err, size_t errlen);

/* Loads run ID: its header into H (may be NULL), its requests or levels into
 * RUN (may be NULL), its scenario text into *TEXT (malloc'd; TEXT may be NULL).
 * Returns 0; 1 when there is no such run (ERR says so); -1 on error. */
int cobsdb_load(sqlite3 *db, int64_t id, cobs_stored *h, cobs_run *run, char **text, char *err, size_t errlen);

/* Removes stored run ID: its header, requests and levels, and its links to the
 * observed fits made from it (calib_fit_observed; those fits are kept, and their
 * count goes to *FITS, may be NULL).  Runs in the caller's transaction.
 * Returns 0; 1 when there is no such run (ERR says so); -1 on error. */
int cobsdb_forget(sqlite3 *db, int64_t id, int *fits, char *err, size_t errlen);

/* `latsim calib list`'s section of observed runs.  Returns 0 or -1 + ERR. */
int cobsdb_list(sqlite3 *db, FILE *out, char *err, size_t errlen);

/* `latsim calib show observed ID`: the run's provenance, server and observed
 * statistics.  Returns 0, 1 if none (ERR says so), -1 on error. */
int cobsdb_show(sqlite3 *db, int64_t id, FILE *out, char *err, size_t errlen);

#endif

/* catalog.h -- the GPU and model catalog, kept in SQLite.
 *
 * Two tables, `gpus` and `models`, live in the same database as the runs.  They
 * are created and filled with the built-in entries (each with its source) the
 * first time a database is opened; users add or replace entries with
 * catalog_put_*() (from `latsim catalog add-gpu/add-model` or from [gpu NAME] /
 * [model NAME] sections of a scenario).  Names are case-insensitive keys such as
 * "h100" or "llama-3-8b"; a few aliases ("h100-sxm", "a100-80gb") resolve too.
 */
#ifndef LATSIM_CATALOG_H
#define LATSIM_CATALOG_H

#include <stdio.h>
#include <sqlite3.h>

typedef struct gpu_spec {
    char name[48];          /* catalog key, lower case, e.g. "h100" */
    char full_name[64];     /* e.g. "H100-SXM5-80GB" */
    double bf16_tflops;     /* dense BF16 tensor throughput, TFLOP/s */
    double fp8_tflops;      /* dense FP8 (or INT8 where no FP8) throughput, TFLOP/s */
    double mem_gib;         /* device memory, GiB (2^30 bytes) */
    double mem_bw_gbs;      /* memory bandwidth, GB/s (10^9 bytes/s) */
    double link_gbs;        /* per-GPU interconnect bandwidth for tensor parallelism, GB/s */
    double price_hr;        /* on-demand price, $ per GPU-hour */
    char source[200];       /* where the figures come from */
} gpu_spec;

typedef struct model_spec {
    char name[48];          /* catalog key, lower case, e.g. "llama-3-8b" */
    int layers;             /* transformer layers */
    int hidden;             /* hidden size */
    int heads;              /* query heads */
    int kv_heads;           /* key/value heads (== heads without GQA) */
    int head_dim;           /* per-head dimension */
    int intermediate;       /* MLP intermediate size */
    int vocab;              /* vocabulary size */
    double params;          /* parameter count (all weights) */
    int context;            /* maximum context length, tokens */
    char source[200];       /* where the figures come from */
    char weights[8];        /* precision the weights are published in: bf16, fp8, int8, int4
                               (a pool's default `weights`) */
} model_spec;

/* Creates the tables if missing and seeds the built-in entries if the tables are
 * empty.  Returns 0, or -1 with a message in ERR. */
int catalog_init(sqlite3 *db, char *err, size_t errlen);

/* Looks NAME up.  Returns 0 when found (filling OUT), 1 when there is no such
 * entry (ERR then says "unknown gpu 'x' (valid: a100, h100, ...)"), -1 on a
 * database error (message in ERR). */
int catalog_gpu(sqlite3 *db, const char *name, gpu_spec *out, char *err, size_t errlen);
int catalog_model(sqlite3 *db, const char *name, model_spec *out, char *err, size_t errlen);

/* Inserts or replaces an entry.  Validates it first (positive sizes, heads
 * divisible by kv_heads, heads*head_dim consistent...).  Returns 0 or -1 + ERR. */
int catalog_put_gpu(sqlite3 *db, const gpu_spec *g, char *err, size_t errlen);
int catalog_put_model(sqlite3 *db, const model_spec *m, char *err, size_t errlen);

/* The validation catalog_put_*() applies, without writing: 0, or -1 + ERR. */
int catalog_check_gpu(const gpu_spec *g, char *err, size_t errlen);
int catalog_check_model(const model_spec *m, char *err, size_t errlen);

/* 1 when TABLE ("gpus" or "models") holds a built-in entry called NAME, else 0
 * (also on a database error). */
int catalog_is_builtin(sqlite3 *db, const char *table, const char *name);

/* Prints both tables as readable text.  Returns 0 or -1 + ERR. */
int catalog_print(sqlite3 *db, FILE *out, char *err, size_t errlen);

/* Bytes per weight for a precision name: bf16/fp16 2, fp8 1, int8 1, int4 0.5;
 * returns 0 for an unknown name. */
double catalog_weight_bytes(const char *precision);

#endif

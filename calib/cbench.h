/* cbench.h -- the microbenchmark harness shared by `latsim calib cpu` (OpenBLAS)
 * and `latsim calib gpu` (CUDA, cuBLAS).
 *
 * A plan lists what to time for one catalog model at one TP degree: the four
 * GEMMs of a transformer layer at the shapes of one TP shard (QKV projection,
 * attention output projection, gated MLP up projection, MLP down projection) for
 * each token count, decode attention (batch x context, paged KV), prefill
 * attention (one prompt of T tokens), device memory bandwidth, kernel launch
 * overhead, and (CPU, tp > 1) an all-reduce across tp buffers.  A backend fills
 * each item's median time over repeats after warm-up; cb_store() writes the
 * results as measurements with their provenance, in the names the profile model
 * reads (what = op / attn_prefill / attn_decode / allreduce; membw and launch
 * for the record).
 */
#ifndef LATSIM_CBENCH_H
#define LATSIM_CBENCH_H

#include <stddef.h>
#include <sqlite3.h>
#include "core/catalog.h"
#include "calib.h"   /* cb_parse_list, cb_gpu_available: public */

typedef enum { CB_GEMM, CB_ATTN_DECODE, CB_ATTN_PREFILL, CB_MEMBW, CB_LAUNCH, CB_ALLREDUCE } cb_kind;

typedef struct cb_item {
    cb_kind kind;            /* what is timed */
    char name[40];           /* GEMM: operator name; attention: geometry "q<H>_kv<KVH>_d<d>" */
    int m, n, k;             /* GEMM: tokens x outputs x inputs (row-major A m x k, B k x n) */
    int batch;               /* attention: sequences */
    int tokens;              /* attention prefill: prompt tokens per sequence */
    int context;             /* attention decode: context tokens per sequence */
    int heads, kv_heads, head_dim;  /* attention: heads of one TP shard, head size */
    double bytes;            /* memory bandwidth: bytes copied; all-reduce: bytes per rank */
    int ranks;               /* all-reduce: participants */
    double time_ms;          /* median over the repeats, ms (filled by a backend) */
    double std_ms;           /* standard deviation over the repeats, ms */
    int repeats;             /* repeats timed */
} cb_item;

typedef struct cb_plan {
    model_spec model;        /* the catalog model */
    int tp;                  /* tensor-parallel degree: shapes are one shard's */
    int warmup;              /* untimed runs before each item */
    int repeats;             /* timed runs per item */
    cb_item *items;          /* what to time */
    size_t n, cap;           /* items used, allocated */
} cb_plan;

typedef struct cb_device {
    char gpu[48];            /* catalog GPU name the results are stored under */
    char device[128];        /* device name as reported */
    char driver[64];         /* driver / library version */
} cb_device;

/* Builds the plan: GEMMs at each of TOKENS (NTOK counts), decode attention at
 * each batch in BATCHES x context in CONTEXTS, prefill attention at each of
 * PROMPTS, memory bandwidth at MEMBW_BYTES, launch overhead, and, when
 * ALLREDUCE and tp > 1, all-reduces of 2 KiB .. 8 MiB.  Returns 0, or -1 + ERR
 * (tp does not divide the heads, out of memory). */
int cb_plan_build(cb_plan *p, const model_spec *m, int tp, const int *tokens, int ntok,
                  const int *batches, int nb, const int *contexts, int nc, const int *prompts,
                  int np, double membw_bytes, int allreduce, char *err, size_t errlen);
void cb_plan_free(cb_plan *p);

/* Median and standard deviation of V[0..N-1] (V is reordered). */
double cb_median(double *v, int n);
double cb_std(const double *v, int n);

/* Stores every timed item of P (source "cpu" or "cuda") in the caller's
 * transaction; all-reduces go under GPU "<dev->gpu>_local".  Returns 0 with *N
 * rows, or -1 + ERR. */
int cb_store(sqlite3 *db, const cb_plan *p, const char *source, const cb_device *dev,
             const char *tool, long *n, char *err, size_t errlen);

/* Times every item of P with OpenBLAS on this CPU (THREADS > 0: that many BLAS
 * threads) and fills DEV.  Returns 0, or -1 + ERR (out of memory). */
int cb_cpu_run(cb_plan *p, int threads, cb_device *dev, double *gflops, double *gbs, char *err,
               size_t errlen);

/* The CUDA backend (calib/cgpu.cu when built with `make CUDA=1`, else
 * calib/cgpu_none.c).  cb_gpu_available(): 1 when a CUDA build finds a GPU,
 * else 0 with the reason in WHY (declared in calib.h).  cb_gpu_run(): times P on
 * GPU 0 and fills DEV; 0, or -1 + ERR. */
int cb_gpu_run(cb_plan *p, cb_device *dev, char *err, size_t errlen);

#endif

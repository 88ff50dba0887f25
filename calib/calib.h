/* calib.h -- the calibrator's public interface: what the front end calls for
 * `latsim calib` (the measurement store, importers, fits, microbenchmarks,
 * network timing), `latsim cost` (one step time from a chosen cost model),
 * `latsim echo` and `latsim bench`, and the registration of the calibrated
 * models with the simulator.
 *
 * Its headers are otherwise internal (cdb.h, cimport.h, cfitted.h, cprofile.h,
 * ccost.h, cbench.h, cnet.h, nnls.h): each includes this one for the calls it
 * completes.  Like the headers of include/latsim/ (docs/architecture.md,
 * "Public and internal headers") it includes only public headers.  Every call
 * returns 0 or a status and writes one line into ERR (errlen bytes) when it
 * fails; calls that write do so inside the caller's transaction (cdb_begin, or
 * the front end's store_open_tx) unless they say otherwise.
 */
#ifndef LATSIM_CALIB_H
#define LATSIM_CALIB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>
#include "latsim/catalog.h"

/* ---- the measurement store (cdb.h) ------------------------------------------ */

/* Creates the tables if missing.  Returns 0 or -1 + ERR. */
int cdb_init(sqlite3 *db, char *err, size_t errlen);

/* For a database opened read-only (store_open_readonly): when the file has no
 * calibration tables, creates them empty in the connection's TEMP schema, so
 * that list, show, export and cost read "nothing stored" and the file is never
 * written.  Returns 0 or -1 + ERR. */
int cdb_init_readonly(sqlite3 *db, char *err, size_t errlen);

/* Transactions: BEGIN IMMEDIATE / COMMIT / ROLLBACK.  Return 0 or -1 + ERR. */
int cdb_begin(sqlite3 *db, char *err, size_t errlen);
int cdb_commit(sqlite3 *db, char *err, size_t errlen);
void cdb_rollback(sqlite3 *db);

/* `latsim calib list`: measurement counts by source/kind/model/gpu/tp, then the
 * fits.  Returns 0 or -1 + ERR. */
int cdb_list(sqlite3 *db, FILE *out, char *err, size_t errlen);

/* `latsim calib show ID`: a fit with its coefficients, statistics and the
 * provenance of its measurements.  Returns 0, 1 if none (ERR says so), -1. */
int cdb_show(sqlite3 *db, int64_t id, FILE *out, char *err, size_t errlen);

/* Writes the measurements of SOURCE (NULL: all) to OUT as CSV with the columns
 * of CDB_CSV_COLUMNS (cdb.h; cimp_meas() reads them back).  Returns the rows
 * written, or -1 + ERR. */
long cdb_export(sqlite3 *db, const char *source, FILE *out, char *err, size_t errlen);

/* Counts the measurements matching WHAT/MODEL/GPU (NULL = any).  -1 on error. */
int64_t cdb_count(sqlite3 *db, const char *what, const char *model, const char *gpu);

/* ---- importers (cimport.h) ---------------------------------------------------- */

typedef struct cimp_opts {
    const char *model;       /* import only this catalog model (NULL: all) */
    const char *gpu;         /* import only this GPU (NULL: all) */
    const char *tool;        /* provenance: tool and version */
    FILE *log;               /* one line per file imported or skipped (NULL: quiet) */
} cimp_opts;

/* Returns 0 with *N set to the rows stored, or -1 + ERR. */
int cimp_steps(sqlite3 *db, const char *path, const cimp_opts *o, long *n, char *err,
               size_t errlen);
/* Measurements written by `latsim calib export` (CDB_CSV_COLUMNS), e.g. a committed
 * GPU profile; their provenance columns are kept and FILE:LINE recorded. */
int cimp_meas(sqlite3 *db, const char *path, const cimp_opts *o, long *n, char *err,
              size_t errlen);
int cimp_vidur(sqlite3 *db, const char *dir, const cimp_opts *o, long *n, char *err,
               size_t errlen);
/* nccl-tests output (all_reduce_perf, alltoall_perf, sendrecv_perf; calib/cnccl.c)
 * of GPU o->gpu (required): one measurement per size (what allreduce, alltoall or
 * send_recv; tp = GPUS, or the file's nGpus line when GPUS <= 0).  Returns 0 with
 * *N set, or -1 + ERR naming the file and line. */
int cimp_nccl(sqlite3 *db, const char *path, const cimp_opts *o, int gpus, long *n, char *err,
              size_t errlen);
/* GPU board-power samples (calib/cimport.c): an nvidia-smi log (`nvidia-smi
 * --query-gpu=timestamp,name,utilization.gpu,power.draw --format=csv`, units
 * "87 %" and "123.45 W" or nounits; each row a sample of one GPU), or a table
 * with columns utilization (busy share, 0..1), power_w and optionally gpu.  Rows
 * of what = power: gpu = o->gpu (required unless the table has a gpu column; a
 * gpu column's other GPUs are skipped when it is given), batch = the
 * utilisation share, time_ms = the board power in W (the table's one measured
 * value column), device and measured_at = nvidia-smi's name and timestamp.
 * Returns 0 with *N set, or -1 + ERR naming the file, line and column. */
int cimp_power(sqlite3 *db, const char *path, const cimp_opts *o, long *n, char *err, size_t errlen);
/* Registers the reader of stored power rows with the simulator (power_set_loader):
 * what `power_curve = calib` builds its curve from. */
void cimp_power_register(void);

/* ---- fits ---------------------------------------------------------------------- */

/* `calib fit KIND`: KIND "fitted" (the parametric step model fitted to the
 * imported whole steps of MODEL on GPU, WEIGHTS precision, FOLDS-fold
 * cross-validation, 0: the default; PRIOR 1: a posterior toward the learned
 * default, cfitpost.h, 0: the steps alone) or "profile" (the operator-profile model of
 * MODEL on GPU at TP from imported profiles); stored, tagged with TOOL.
 * Returns 0 with *ID the stored fit, or -1 + ERR. */
int calib_fit(sqlite3 *db, const char *kind, const char *model, const char *gpu, int tp, const char *weights,
              size_t folds, int prior, const char *tool, int64_t *id, char *err, size_t errlen);

/* `calib fit observed` (cobsfit.h): the fitted step model of MODEL on GPU
 * (WEIGHTS NULL: the model's; TP > 0: runs at that TP only) fitted to the stored
 * observed request runs by replaying them and to the stored whole steps (DATA:
 * COBSFIT_BOTH, _REQUESTS, _STEPS or _NONE, cobsfit.h); stored (source "observed"), tagged
 * with TOOL; REPORT (may be NULL) receives the replay errors per run and
 * statistic, the roofline's on the same runs, the leave-one-run-out errors and
 * the time taken.  Returns 0 with *ID, 2 on bad input (no such runs: nothing
 * stored), 1 on a runtime failure; ERR one line. */
int calib_fit_observed(sqlite3 *db, const char *model, const char *gpu, const char *weights, int tp, int data, const char *tool,
                       FILE *report, int64_t *id, char *err, size_t errlen);

/* The bounds of the observed fits that follow (cobsfit.h, cobsfit_opts): the
 * fit stops after MAX_S seconds of wall-clock time (<= 0: no bound; returns 1,
 * nothing stored) and, when PROGRESS is not NULL, prints a progress line on it
 * about every PROGRESS_S seconds (<= 0: 1). */
void calib_fit_observed_bounds(double max_s, FILE *progress, double progress_s);

/* Builds the operator-profile model of every (model, TP) that has operator
 * measurements on GPU, each in a transaction of its own (cdb_begin), tagged
 * with TOOL; stops at the first that fails (ERR says why).  Returns the number
 * built, or -1 + ERR when the measurements cannot be read. */
int calib_fit_profiles(sqlite3 *db, const char *gpu, const char *tool, char *err, size_t errlen);

/* ---- microbenchmarks: `calib cpu` and `calib gpu` (cbench.h) --------------------- */

/* Parses "1,2,4" into OUT (at most MAX values, each in [1, 10^7]); returns the
 * count, or -1. */
int cb_parse_list(const char *s, int *out, int max);

/* 1 when this build (make CUDA=1) finds a CUDA GPU, else 0 with the reason in WHY. */
int cb_gpu_available(char *why, size_t n);

/* What `calib cpu` or `calib gpu` times. */
typedef struct calib_bench_req {
    int gpu;                  /* 1: CUDA GPU 0 (cuBLAS), 0: this CPU (OpenBLAS) */
    const char *model;        /* the catalog model */
    int tp;                   /* tensor-parallel degree: the shapes are one shard's */
    const int *tokens;        /* token counts of the GEMMs */
    int ntok;
    const int *batches;       /* decode batch sizes */
    int nbatch;
    const int *contexts;      /* decode context lengths */
    int nctx;
    const int *prompts;       /* prefill prompt lengths */
    int nprompt;
    int repeats;              /* timings of each (0: the plan's default) */
    int threads;              /* CPU: BLAS threads (0: the BLAS default) */
    const char *gpu_name;     /* GPU: the device's catalog GPU (NULL: from its name) */
} calib_bench_req;

/* A microbenchmark planned, then timed (opaque). */
typedef struct calib_bench calib_bench;

/* Plans R with the catalog in DB (look-ups only).  Returns 0 with *OUT
 * (calib_bench_free it), 2 on bad input (an unknown model, a TP that does not
 * divide its heads), 1 when out of memory; ERR says why ("calib cpu: --model:
 * ...").  *OUT is NULL unless 0 is returned. */
int calib_bench_plan(sqlite3 *db, const calib_bench_req *r, calib_bench **out, char *err, size_t errlen);

/* Times B on its device; for a GPU, finds the device's catalog GPU in DB.
 * Returns 0, 1 when the timing failed, 2 when the device is no catalog GPU. */
int calib_bench_run(calib_bench *b, sqlite3 *db, char *err, size_t errlen);

/* Stores B's timings (the calibration tables created when missing) and, for
 * the CPU, catalog GPU 'cpu' from what was measured, tagged with TOOL; *N rows.
 * Returns 0, 1 (the database) or 2 (catalog GPU 'cpu' refused). */
int calib_bench_store(sqlite3 *db, const calib_bench *b, const char *tool, long *n, char *err, size_t errlen);

/* What B timed, and where (strings owned by B). */
typedef struct calib_bench_info {
    const char *model;        /* the catalog model */
    int tp;                   /* its tensor-parallel degree */
    const char *gpu;          /* the catalog GPU the timings are stored under */
    const char *device;       /* the device's name as reported */
    const char *driver;       /* its driver or library */
    double gflops;            /* CPU: fp32 GEMM peak, GFLOP/s (0 for a GPU) */
    double gbs;               /* CPU: memcpy bandwidth, GB/s (0 for a GPU) */
} calib_bench_info;
void calib_bench_info_of(const calib_bench *b, calib_bench_info *out);
void calib_bench_free(calib_bench *b);

/* ---- network timing: `calib net`, `latsim echo` (cnet.h) ---------------------- */

/* Serves echo frames on the listening socket FD until a connection ends with an
 * error or *STOP becomes non-zero between connections; connections one at a time.
 * Returns 0 (never on its own while connections keep coming). */
int cnet_serve(int fd, volatile int *stop);

/* Opens a listening socket on HOST (e.g. "127.0.0.1") and PORT (0: any free);
 * returns the socket with *BOUND set to its port, or -1 + ERR. */
int cnet_listen(const char *host, int port, int *bound, char *err, size_t errlen);

typedef struct cnet_rtt {
    size_t bytes;            /* payload size */
    int n;                   /* round trips timed */
    double p50, p90, p99;    /* round-trip time percentiles, ms */
    double mean;             /* mean, ms */
} cnet_rtt;

/* Connects to HOST:PORT and times REPEATS round trips (after 5 warm-up ones) for
 * each of SIZES[0..NS-1] into OUT.  Returns 0, or -1 + ERR (cannot connect, the
 * peer closed, a short echo). */
int cnet_measure(const char *host, int port, const size_t *sizes, int ns, int repeats, cnet_rtt *out,
                 char *err, size_t errlen);

typedef struct cnet_codec {
    double json_encode_us;   /* per request, microseconds */
    double json_decode_us;
    double bin_encode_us;
    double bin_decode_us;
    size_t json_bytes;       /* encoded sizes */
    size_t bin_bytes;
} cnet_codec;

/* Times encoding and decoding of a chat request with a prompt of PROMPT_CHARS
 * characters, ITERS times each way.  Returns 0, or -1 + ERR. */
int cnet_codec_time(size_t prompt_chars, int iters, cnet_codec *out, char *err, size_t errlen);

/* Registers the loader of stored network fits with the simulator (hop =
 * measured(ID), gateway/hop.h).  Call once before loading scenarios. */
void cnet_register(void);
/* Registers the loader of imported nccl-tests profiles with the roofline
 * (llm/cost.h, cost_set_collective): its all-reduce then uses them. */
void cnccl_register(void);
/* Registers the loader of stored send/recv profiles with the LLM pools
 * (llm/llmcfg.h, llm_set_link_profile): kv_link_profile then prices each KV
 * transfer by them (calib/cimport.c). */
void cimp_link_register(void);

/* What `calib net` measured. */
typedef struct calib_net_meas {
    const cnet_rtt *rtt;      /* round trips per payload size */
    int ns;                   /* sizes (at least 3) */
    int reps;                 /* round trips per size */
    const cnet_codec *cod;    /* codec timings */
    const char *label;        /* target, "loopback" for our own echo server */
    const char *hostname;     /* this host */
    const char *when;         /* ISO 8601 UTC of the measurement */
    const char *tool;         /* provenance: tool and version */
} calib_net_meas;

/* The fit of latency = base + bytes / bandwidth to the p50 round trips. */
typedef struct calib_net_fit {
    double base_ms;           /* latency at 0 bytes, ms */
    double ms_per_mb;         /* ms per 10^6 bytes (bandwidth: 1 / it, GB/s) */
    double r2;                /* the fit's R2 */
    double mape;              /* its cross-validated MAPE, % */
    int64_t id;               /* the stored network profile */
} calib_net_fit;

/* Stores M (its measurements, their fit and the network profile; the
 * calibration tables created when missing) into OUT.  Returns 0, 1 when out of
 * memory, 2 (ERR says why). */
int calib_net_store(sqlite3 *db, const calib_net_meas *m, calib_net_fit *out, char *err, size_t errlen);

/* ---- one step's time: `latsim cost` (ccost.h) ---------------------------------- */

/* What `latsim cost` asks. */
typedef struct calib_cost_req {
    const char *model, *gpu;  /* catalog names */
    int tp;                   /* tensor-parallel degree */
    const char *weights;      /* precision (NULL: the model's, else bf16) */
    const char *kind;         /* auto, fitted, profile, roofline (NULL: auto) */
    int64_t id;               /* a stored calibrated model (0: none; not with KIND) */
    long prefill;             /* prompt tokens per prefilling sequence (0: none) */
    long pbatch;              /* prefilling sequences */
    long decode;              /* decoding sequences (0: none) */
    long context;             /* context of each decoding sequence, tokens */
    const char *engine;       /* serving engine (NULL: vllm): the learned model's class */
} calib_cost_req;

#define CALIB_COST_MAX_PARTS 12
#define CALIB_COST_MAX_OPS 16

/* A step time and the model that gave it. */
typedef struct calib_cost {
    double step_ms;           /* the step's time, ms */
    const char *kind;         /* "roofline", "fitted", "profile" or "learned" */
    int64_t id;               /* the stored model (0 for the roofline) */
    char source[320];         /* where its numbers come from */
    double mape;              /* its cross-validated MAPE, % (NAN for the roofline) */
    char range[16];           /* "measured", "interpolated", "extrapolated" (this step outside
                                 the measured ranges), "" for the roofline */
    char note[512];           /* why this model was chosen ("" none) */
    char hwnote[256];         /* a note on the hardware's precision (fp4 dequantised...; "" none) */
    char warn[512];           /* stored models skipped as unusable ("" none): for stderr */
    int nparts;               /* the named parts of the step time */
    const char *part[CALIB_COST_MAX_PARTS];     /* their names (static) */
    double part_ms[CALIB_COST_MAX_PARTS];       /* their times, ms (they sum to step_ms) */
    int nops;                 /* the step by operator (llm/opshare.h): how many */
    const char *op[CALIB_COST_MAX_OPS];         /* their names (static): attention_prefill, ... */
    double op_ms[CALIB_COST_MAX_OPS];           /* their times, ms (they sum to step_ms) */
} calib_cost;

/* Evaluates R with the catalog and calibrated models in DB.  Returns 0 with
 * OUT, 2 on bad input (an unknown model, GPU or precision, a TP that does not
 * divide the heads, no stored model of the kind asked), 1 when out of memory;
 * ERR says why. */
int calib_cost_eval(sqlite3 *db, const calib_cost_req *r, calib_cost *out, char *err, size_t errlen);

/* Observed benchmark runs (docs/observed.md): their readers and records
 * (cobserved.h), the store (cobsdb.h), the replay (cobsreplay.h), the server
 * metadata (cobsmeta.h) and engine logs (cenglog.h), which include only public
 * headers. */
#include "cobserved.h"
#include "cobsdb.h"
#include "cobsreplay.h"
#include "cobsmeta.h"
#include "cenglog.h"

/* Stores the N windows W of FILE as calib_meas rows (source "engine-log",
 * step_decode or step_prefill, name "window T0..T1 s, K intervals", std_ms the
 * rows' spread, repeats the intervals, line the window's first) of MODEL on GPU
 * (WEIGHTS, TP), in the caller's transaction.  Returns 0 or -1 + ERR. */
int celog_store(sqlite3 *db, const char *file, const celog_window *w, size_t n, const char *model, const char *gpu,
                const char *weights, int tp, const char *tool, char *err, size_t errlen);

/* ---- the learned step model (clearn.h, docs/learned.md) ------------------------ */

/* `latsim calib train`: reads the corpus in DIR (tests/data/corpus: README.md
 * there), fits the learned model with GSL, cross-validates it, writes the C
 * source of its table to OUT (NULL: none) and a report to LOG (NULL: none).
 * Returns 0 or -1 + ERR (a corpus file's error names file, line and column). */
int clearn_train(const char *dir, FILE *out, FILE *log, char *err, size_t errlen);

/* `latsim validate`: the scoreboard of the corpus in DIR (leave-one-GPU-out,
 * -engine-out and -model-out MAPE of the learned model beside the roofline's),
 * a markdown table written to OUT.  Returns 0 or -1 + ERR. */
int clearn_validate(const char *dir, FILE *out, char *err, size_t errlen);

/* Registers the calibrated cost models (auto, fitted, profile) with the
 * simulator's cost-model table.  Returns 0, or -1 when the table is full. */
int ccost_register(void);

/* 1 when NAME is a cost model `latsim cost --cost` and a pool's `cost` may ask
 * the resolver for (a row of calib/ccost.c's table: auto, fitted, profile,
 * learned, roofline), else 0; and those names, ", "-joined, in table order. */
int ccost_asked(const char *name);
const char *ccost_ask_list(void);

/* The calibrator's models join the simulator's tables, before any scenario is
 * loaded or keys are listed: the calibrated cost models (ccost_register) and the
 * loaders of stored network fits, collective and link profiles and power samples
 * (cnet_register, cnccl_register, cimp_link_register, cimp_power_register).
 * Calling it again does nothing more.  Returns 0, or -1 when a table is full. */
int latsim_use_calib(void);

#endif

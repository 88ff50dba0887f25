/* cdb.h -- the calibration store: raw measurements and fitted cost models in SQLite.
 *
 * Lives in the same database as the runs (store.h).  Tables:
 *   calib_meas      one row per measurement, whatever its origin: what was timed
 *                   (an operator at a token count, a whole prefill or decode step,
 *                   an all-reduce of N bytes over G GPUs, a round trip...), the time,
 *                   and provenance (source, device, driver, date, tool version,
 *                   file and line it came from);
 *   calib_fits      one row per fitted model: kind (fitted, profile, net), what it
 *                   is for (model, gpu, weights, tp degrees), fit statistics (R²,
 *                   k-fold cross-validated MAPE), its measured ranges;
 *   calib_coefs     each fit's coefficients with standard errors and status;
 *   calib_fit_meas  the ids of the measurements each fit came from.
 * Writers group their inserts in one transaction (cdb_begin/cdb_commit).
 */
#ifndef LATSIM_CDB_H
#define LATSIM_CDB_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>
#include "calib.h"   /* cdb_init, transactions, list, show, export, count: public */

typedef struct cdb_meas {
    const char *source;      /* cuda, cpu, vidur, steps-csv, net, nccl, nvidia-smi, csv */
    const char *what;        /* op, attn_prefill, attn_decode, step_prefill, step_decode,
                                allreduce, alltoall, send_recv, cpu_overhead, gemm, membw,
                                launch, rtt, encode, decode, power (a GPU power sample:
                                batch = utilisation share 0..1, time_ms = watts) */
    const char *name;        /* operator or detail (e.g. "mlp_up_proj"), "" for none */
    const char *model;       /* catalog model name, "" for none */
    const char *gpu;         /* catalog GPU name (or network cluster), "" for none */
    const char *weights;     /* weight precision, "" for the model's */
    int tp;                  /* tensor-parallel degree (GPUs in a collective) */
    double batch;            /* sequences in the step, or batch size */
    double tokens;           /* tokens: per prompt (prefill), of an operator call,
                                or the new tokens of a chunk */
    double context;          /* KV tokens per sequence already cached (decode context) */
    double bytes;            /* bytes moved (collectives, copies, payloads) */
    double time_ms;          /* the measured time, ms */
    double std_ms;           /* its standard deviation over repeats, ms (NAN if unknown) */
    int repeats;             /* repeats behind time_ms (0 if unknown) */
    const char *device;      /* device name as reported ("" if unknown) */
    const char *driver;      /* driver/runtime version ("" if unknown) */
    const char *measured_at; /* date of the measurement, ISO 8601 ("" if unknown) */
    const char *tool;        /* tool and version that took or imported it */
    const char *file;        /* file it came from ("" for live measurements) */
    long line;               /* line in that file (0 for none) */
} cdb_meas;

/* Physically sane measured times, ms: nothing a computer times takes less than a
 * nanosecond, and no step or operator takes 10^7 ms (2.8 hours).  Outside this a
 * time is a typo, a unit error or a broken tool: the importers refuse it with its
 * row and column, and a fit refuses a stored one (1e308 or 1e-300 would otherwise
 * reach the solver: weights 1/y^2 overflow or vanish). */
#define CDB_MS_MIN 1e-6
#define CDB_MS_MAX 1e7

#define CDB_MAX_COEF 16

/* The largest error, %, of a usable step-time model (fitted or profile): a fit
 * whose MAPE or cross-validated MAPE is above it is refused, and `cost = auto`
 * (or an explicit kind or id) never uses a stored model whose cross-validated
 * MAPE is above it or unknown.  A model off by half on held-out steps is worse
 * than the datasheet roofline (25-46 % off on BLOOM-176B, docs/calibration.md, "Commands");
 * the usable fits here are within 20 % (BLOOM 10-11 %, Vidur profiles 1-2 %). */
#define CDB_MAPE_LIMIT 50.0

/* 1 when a stored model of cross-validated error MAPE (%, NAN unknown) may be used. */
#define CDB_MAPE_USABLE(mape) ((mape) >= 0 && (mape) <= CDB_MAPE_LIMIT)

typedef struct cdb_coef {
    char name[40];           /* term name, e.g. "fixed_ms" */
    double value;            /* estimate, in the unit the name gives */
    double se;               /* standard error (0 when held at a bound, NAN if unknown) */
    char status[12];         /* "fitted", "bound" (held at 0), "aliased" (not separable) */
} cdb_coef;

typedef struct cdb_fit {
    int64_t id;              /* row id (set by cdb_save_fit / cdb_load_fit) */
    char kind[12];           /* "fitted", "profile", "net" */
    char model[48];          /* catalog model ("" for net) */
    char gpu[48];            /* catalog GPU ("" for net) */
    char weights[8];         /* weight precision */
    char tps[64];            /* measured TP degrees, comma-separated, ascending */
    char source[32];         /* measurement source(s), e.g. "steps-csv", "vidur" */
    int n_points;            /* measurements used */
    double r2;               /* coefficient of determination on the fitted points */
    double mape;             /* k-fold cross-validated mean absolute % error (NAN if none) */
    int folds;               /* k of the cross-validation */
    double tok_max;          /* largest prompt tokens per step measured */
    double seq_max;          /* largest decode batch measured */
    double ctx_max;          /* largest context (KV tokens per sequence) measured */
    char created_at[32];     /* ISO 8601 UTC */
    char tool[48];           /* latsim version that fitted it */
    char note[256];          /* free text: how it was built, warnings */
    int ncoef;               /* coefficients used */
    cdb_coef coef[CDB_MAX_COEF];
} cdb_fit;

/* A prepared measurement insert. */
typedef struct cdb_writer {
    sqlite3 *db;
    sqlite3_stmt *st;
} cdb_writer;

int cdb_writer_open(cdb_writer *w, sqlite3 *db, char *err, size_t errlen);
/* Inserts M; returns 0 with *ID set (ID may be NULL), or -1 + ERR. */
int cdb_put(cdb_writer *w, const cdb_meas *m, int64_t *id, char *err, size_t errlen);
void cdb_writer_close(cdb_writer *w);

/* Stores FIT (kind, stats, coefficients) and the ids of its measurements;
 * sets fit->id.  Does not open a transaction of its own.  Returns 0 or -1 + ERR. */
int cdb_save_fit(sqlite3 *db, cdb_fit *fit, const int64_t *meas, size_t nmeas, char *err,
                 size_t errlen);

/* Loads fit ID.  Returns 0, 1 when there is no such fit (ERR says so, and names the
 * database file when it holds no calibration tables at all), -1 on error. */
int cdb_load_fit(sqlite3 *db, int64_t id, cdb_fit *fit, char *err, size_t errlen);

/* The id of the stored fit of KIND ("" = any of fitted/profile) for (MODEL, GPU,
 * WEIGHTS) with the lowest cross-validated MAPE whose measured TP degrees cover
 * TP (listed, or between its smallest and largest when COVER_RANGE).  Returns 1
 * with *ID set, 0 when none, -1 on error. */
int cdb_best_fit(sqlite3 *db, const char *kind, const char *model, const char *gpu,
                 const char *weights, int tp, int64_t *id, char *err, size_t errlen);

/* 1 when TP is listed in the comma-separated TPS; 0 otherwise.  Fills the
 * smallest and largest listed degrees when LO/HI are not NULL. */
int cdb_tp_listed(const char *tps, int tp, int *lo, int *hi);

#define CDB_CSV_COLUMNS "source,what,name,model,gpu,weights,tp,batch,tokens,context,bytes,time_ms,std_ms," \
                        "repeats,device,driver,measured_at,tool"

#endif

/* run.h -- what the files of `latsim run` share (cli/run.c, runband.c): the
 * options, the run in progress, its errors and the prediction band. */
#ifndef LATSIM_CLI_RUN_H
#define LATSIM_CLI_RUN_H

#include <stdint.h>
#include <stdio.h>
#include "cliopt.h"
#include "latsim/band.h"
#include "latsim/omx.h"
#include "latsim/report.h"
#include "latsim/scenario.h"
#include "latsim/sim.h"
#include "latsim/slo.h"
#include "latsim/store.h"
#include "latsim/tseries.h"

/* What `latsim run` was asked. */
typedef struct run_opts {
    cli_args a;                     /* --db, --json, --set and FILE */
    const char *file;               /* the scenario file */
    uint64_t seed;                  /* --seed */
    int seed_given;                 /* 1: --seed was given */
    int reps;                       /* --replications (default 1) */
    int store;                      /* 0: --no-store */
    const char *ts_path;            /* --timeseries OUT.csv, or NULL */
    double ts_interval;             /* --interval, s (0: not given) */
    unsigned long long alert_k;     /* --alert-intervals */
    int reps_given;                 /* 1: --replications was given */
    int64_t from_run;               /* --from-run ID (0: not given) */
    const char *trace_path;         /* --trace-events OUT.json, or NULL */
    uint64_t trace_reqs;            /* --trace-requests (default 1000) */
    int trace_reqs_given;           /* 1: --trace-requests was given */
    int verbose;                    /* --verbose */
    const char *mx_path;            /* --metrics OUT.om, or NULL */
    double mx_start;                /* --metrics-start, s since the Unix epoch */
    int band;                       /* 1: --band (the prediction band in the table and JSON) */
} run_opts;

/* A run's own seed noise by batch means, as its seed_noise rows say
 * (run/col_seednoise.c; docs/bands.md): 90 % half-widths, NAN where the run
 * had too few batches. */
typedef struct run_seed {
    int measured;                   /* 1: the run measured it (it has the rows) */
    int batches;                    /* seed_noise.batches: complete batches of the E2E values */
    double phi;                     /* seed_noise.phi: E2E's variance inflation by autocorrelation (>= 1) */
    double e2e_mean, e2e_p99;       /* seed_noise.e2e_mean, seed_noise.e2e_p99, ms */
    double ttft_mean, ttft_p99;     /* seed_noise.ttft_*, ms */
    double tpot_mean, tpot_p99;     /* seed_noise.tpot_*, ms */
    double rps;                     /* seed_noise.throughput_rps, requests/s */
} run_seed;

/* A run in progress: everything run_main frees. */
typedef struct run_state {
    const char *db_path;            /* the database file */
    scenario *sc;                   /* the scenario, resolved (owned) */
    report *runs;                   /* one report per replication */
    report agg;                     /* their aggregate (replications > 1) */
    const report *shown;            /* the report printed and stored: runs[0] or agg */
    int saturated;                  /* 1: the system was saturated */
    int *load_sat;                  /* per pool: saturated by its offered load in some replication */
    double wall;                    /* wall-clock seconds of all replications */
    char started[32];               /* ISO 8601 UTC start time */
    ts_row *ts;                     /* the time series of the first replication (NULL none) */
    size_t ts_n;                    /* its intervals */
    omx *mx;                        /* its metrics (run --metrics; owned), or NULL */
    ts_alert *alerts;               /* its SLO alerts */
    size_t nalerts;                 /* how many */
    store_config cfg;               /* the effective configuration and its hash (points into sc) */
    slo_result slo;                 /* the [slo] terms evaluated on the shown report */
    char *json;                     /* the report as JSON (what --json prints and the run stores) */
    int nband;                      /* LLM pools (0: no prediction band) */
    band_model band;                /* the step-time band of the widest pool's model */
    report band_end[2];             /* the first replication at the band's low and high step-time factor */
    run_seed seed;                  /* --band with one replication: its seed noise by batch means */
    char err[2048];                 /* the last error */
    /* --from-run: the stored run */
    char *from_path, *from_text;    /* its scenario path and configuration (malloc'd) */
    uint64_t from_seed;             /* its seed */
    int from_reps;                  /* its replications */
    char from_sets[64][700];        /* the assignments that give its step times */
    int nfrom;                      /* how many */
} run_state;

/* ---- run.c ---------------------------------------------------------------- */

/* The exit status of a failed load: 1 (runtime failure) when memory ran out,
 * else 2 (bad input).  Every out-of-memory message in sim/ says "out of memory". */
int load_rc(const char *err);

/* Prints MSG on stderr as one line "latsim: MSG" (control characters escaped)
 * and returns CODE. */
int die(int code, const char *msg);

/* ---- runband.c ------------------------------------------------------------ */

/* The prediction band (--band; docs/bands.md): for a scenario with an LLM
 * pool, its first replication simulated again at both ends of the step-time
 * model's 90 % error.  Returns 0 or the exit status (printed). */
int run_band(const run_opts *o, run_state *st);

/* The seed noise of RES (its seed_noise rows; measured 0 when it has none). */
run_seed run_seed_of(const sim_result *res);

/* The prediction band as the JSON member "prediction_band" (with its leading comma). */
void band_json(const run_state *st, FILE *out);

/* The prediction band as table lines ("value (lo..hi)"). */
void band_table(const run_state *st, FILE *out);

#endif

/* design.h -- the designs a review compares (compare, report, export): each
 * a scenario file (run N replications in worker processes) or a stored run,
 * loaded as a report; the headline metrics read off it; and the rule that
 * says whether a difference is beyond the confidence intervals.
 *
 * The rule: |B - A| > sqrt(ci_A^2 + ci_B^2), the half-width of the 95 %
 * interval of the difference of two independent means (conservative enough
 * for the t intervals of a few replications).  With one side replicated its
 * interval alone judges; with neither there is no CI and nothing is judged.
 */
#ifndef LATSIM_DESIGN_H
#define LATSIM_DESIGN_H

#include <stddef.h>
#include <stdint.h>
#include "latsim/band.h"
#include "latsim/report.h"
#include "latsim/scenario.h"
#include "latsim/slo.h"

#define DESIGN_MAX 8          /* designs one command compares (labels A .. H) */

typedef struct design {
    const char *arg;          /* as given: a scenario path or a run ID */
    char label[2];            /* "A", "B", ... */
    report rep;               /* its rows (aggregated over replications) and CDF points */
    int64_t run_id;           /* the stored run, 0 for a scenario file */
    char *path;               /* its scenario path (malloc'd; NULL unknown) */
    char *text;               /* its scenario text as read (malloc'd; NULL unknown) */
    char *title;              /* [sim] title, else the scenario's file name (malloc'd; NULL unknown) */
    char *desc;               /* [sim] description (malloc'd; NULL none) */
    scenario *sc;             /* its scenario parsed (its SLO terms; NULL when its text does not load) */
    int has_band;             /* 1: run again at the pessimistic end of its prediction band (--band) */
    band_model bm;            /* that band (the widest of its LLM pools' cost models) */
    report band;              /* the report there (aggregated over the same replications) */
} design;

/* How scenario files are run. */
typedef struct design_how {
    int reps;                 /* replications (>= 1) */
    uint64_t seed;            /* the first seed (0: 1) */
    const char *const *sets;  /* --set overrides of every file */
    int nsets;
    int jobs;                 /* worker processes (0: all cores) */
    const char *dbpath;       /* the database (stored runs, the catalog) */
    int band;                 /* 1: scenario files with an LLM pool are also run at their band's pessimistic end */
} design_how;

/* Loads design ARG (a file, else all digits: a run ID) as OUT (labelled LABEL).
 * Returns 0, or the exit status after printing one line (2 bad input, 1
 * failure); OUT is then design_free()d. */
int design_load(const char *arg, const design_how *how, char label, const char *cmd, design *out);
void design_free(design *d);

/* Which way a metric is better: latency, cost and energy lower, throughput,
 * goodput and hit rates higher; neither for counts that only describe. */
enum { DESIGN_LOWER = -1, DESIGN_NEUTRAL = 0, DESIGN_HIGHER = 1 };

/* One headline metric: a system row, or the sum of the pools' "gpus". */
typedef struct design_metric {
    const char *name;         /* as shown and in JSON ("ttft p99") */
    const char *unit;         /* "ms", "req/s", "$/h"... */
    const char *scope, *metric, *stat;   /* the row (metric "gpus": summed over pools) */
    int better;               /* DESIGN_LOWER, DESIGN_HIGHER or DESIGN_NEUTRAL */
} design_metric;

/* The headline metrics, in order (N set to their number). */
const design_metric *design_headline(int *n);

/* The value of M in R into *V and the half-width of its interval into *CI
 * (NAN none).  Returns 1 when R has it, 0 when not (both NAN). */
int design_value(const report *r, const design_metric *m, double *v, double *ci);

/* B against A (with intervals CA, CB, NAN none): 1 beyond the intervals, 0
 * within, -1 when neither has an interval (or a value is missing). */
int design_beyond(double a, double ca, double b, double cb);

/* 100 (B - A) / |A|, NAN when A or B is 0 (a change to or from nothing,
 * e.g. the ITL of a design whose tokens come in bursts, is no percentage) or
 * either is missing. */
double design_diff_pct(double a, double b);

/* B against A for a metric that is better in direction BETTER, when the
 * difference counts (BEYOND: design_beyond's 1; with -1, not judged, the
 * direction is still told): 1 B is better, -1 worse, 0 neither (equal, within
 * the intervals, a neutral metric or a value missing). */
int design_judge(int better, double a, double b, int beyond);

/* V written for people into B (N bytes): thousands separated by commas, never
 * exponent notation; 4 significant digits below 1000 (at most 6 decimals:
 * tinier values are "0.000000"), whole numbers from 1000 on; "-" for NAN.
 * Returns B. */
char *design_fmt(char *b, size_t n, double v);

/* The unit a column of N values in UNIT is shown in: "s" (and *SCALE 0.001)
 * when UNIT is "ms" and every known value is at least 1000 ms, else UNIT (and
 * 1). */
const char *design_unit(const double *v, int n, const char *unit, double *scale);

/* The SLO of design D over report R (its own, or its band's): its scenario's
 * terms evaluated into OUT (slo_result_free() it).  Returns 1 when D has an
 * SLO, 0 when none (OUT empty), -1 out of memory. */
int design_slo(const design *d, const report *r, slo_result *out);

/* The goodput of stored run design D (DBPATH its database) when a plan or a
 * sweep simulated it: the highest rate at which it meets the SLO into *LO
 * (req/s) and the lowest above it that misses into *HI (NAN unknown), the
 * plan's or sweep's KIND ("plan", "sweep"; KN bytes) and *ID.  A plan: its
 * winner's bracket (plan --json's "goodput"); a sweep that varied the rate:
 * the highest swept rate whose point met the SLO.  Returns 1, or 0 when none
 * simulated it (or, a sweep, none met or the rate was not varied). */
int design_goodput(const design *d, const char *dbpath, char *kind, size_t kn, int64_t *id, double *lo, double *hi);

/* One row of the gateway and cache quality table: a pool's cache hit rate,
 * its false hits, a router's decisions and misroutes, the system's rejected
 * and abandoned shares. */
typedef struct design_qrow {
    char name[160];           /* "cache: hit rate", "gw: misroutes (small_got_complex)" */
    const char *unit;         /* "%", "requests" */
    int better;               /* DESIGN_LOWER, DESIGN_HIGHER or DESIGN_NEUTRAL */
    double v[DESIGN_MAX];     /* per design, NAN where it has no such row */
} design_qrow;

/* The quality rows of the N designs D into ROWS (at most MAX), in order of
 * first appearance.  Returns their number. */
int design_quality(const design *d, int n, design_qrow *rows, int max);

#endif

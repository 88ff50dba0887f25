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

#include <stdint.h>
#include "latsim/report.h"

#define DESIGN_MAX 8          /* designs one command compares (labels A .. H) */

typedef struct design {
    const char *arg;          /* as given: a scenario path or a run ID */
    char label[2];            /* "A", "B", ... */
    report rep;               /* its rows (aggregated over replications) and CDF points */
    int64_t run_id;           /* the stored run, 0 for a scenario file */
    char *path;               /* its scenario path (malloc'd; NULL unknown) */
    char *text;               /* its scenario text as read (malloc'd; NULL unknown) */
} design;

/* How scenario files are run. */
typedef struct design_how {
    int reps;                 /* replications (>= 1) */
    uint64_t seed;            /* the first seed (0: 1) */
    const char *const *sets;  /* --set overrides of every file */
    int nsets;
    int jobs;                 /* worker processes (0: all cores) */
    const char *dbpath;       /* the database (stored runs, the catalog) */
} design_how;

/* Loads design ARG (a file, else all digits: a run ID) as OUT (labelled LABEL).
 * Returns 0, or the exit status after printing one line (2 bad input, 1
 * failure); OUT is then design_free()d. */
int design_load(const char *arg, const design_how *how, char label, const char *cmd, design *out);
void design_free(design *d);

/* One headline metric: a system row, or the sum of the pools' "gpus". */
typedef struct design_metric {
    const char *name;         /* as shown and in JSON ("ttft p99") */
    const char *unit;         /* "ms", "req/s", "$/h"... */
    const char *scope, *metric, *stat;   /* the row (metric "gpus": summed over pools) */
} design_metric;

/* The headline metrics, in order (N set to their number). */
const design_metric *design_headline(int *n);

/* The value of M in R into *V and the half-width of its interval into *CI
 * (NAN none).  Returns 1 when R has it, 0 when not (both NAN). */
int design_value(const report *r, const design_metric *m, double *v, double *ci);

/* B against A (with intervals CA, CB, NAN none): 1 beyond the intervals, 0
 * within, -1 when neither has an interval (or a value is missing). */
int design_beyond(double a, double ca, double b, double cb);

/* 100 (B - A) / |A|, NAN when A is 0 or either is missing. */
double design_diff_pct(double a, double b);

#endif

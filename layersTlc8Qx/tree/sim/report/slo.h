/* slo.h -- the evaluation of a scenario's service-level objectives (the
 * [slo] terms of core/slocfg.h) over a run's report rows: met or not, the
 * margin of each term, as a table or JSON.
 */
#ifndef LATSIM_SLO_H
#define LATSIM_SLO_H

#include <stdio.h>
#include "core/slocfg.h"
#include "report/row.h"

typedef struct slo_check {
    const slo_term *t;        /* the term (owned by the slo_spec) */
    double value;             /* measured: ms, fraction or share; NAN when not measured (saturated) */
    double margin;            /* limit - value (positive: met), same unit; NAN when value is */
    int met;                  /* 1 when value <= limit */
} slo_check;

typedef struct slo_result {
    slo_check *c;             /* one per term */
    int n;
    int met;                  /* every term met (1 when there are none) */
} slo_result;

/* Evaluates S over report rows (replication -1 or 0: the ones shown).
 * Returns 0, or -1 when out of memory.  OUT must be slo_result_free()d. */
int slo_eval(const slo_spec *s, const store_stat *rows, size_t nrows, slo_result *out);
void slo_result_free(slo_result *r);

/* The worst relative margin of R: min over terms of margin / limit (negative
 * when a term is missed, -INFINITY when one is not measured). */
double slo_worst_margin(const slo_result *r);

/* Prints R as a table ("slo  MET" / "NOT MET", then one line per term). */
void slo_table(const slo_result *r, FILE *out);

/* Prints R as the JSON value {"met": B, "terms": [{"term", "class", "limit",
 * "value", "margin", "met"}...]}. */
void slo_json(const slo_result *r, FILE *out);



#endif

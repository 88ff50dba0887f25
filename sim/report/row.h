/* row.h -- one reported number: the rows a report is made of (report.h),
 * that SLOs are evaluated over (slo.h) and that the store keeps (store.h). */
#ifndef LATSIM_ROW_H
#define LATSIM_ROW_H

typedef struct store_stat {      /* one reported number */
    int replication;             /* 0-based; -1 for the aggregate over replications */
    const char *scope;           /* "" for the whole system, or a pool name */
    const char *metric;          /* e.g. "e2e", "throughput_rps", "utilization" */
    const char *stat;            /* e.g. "p99", "mean", "value" */
    double value;                /* the number (ms for latencies); NAN for a name */
    double ci95;                 /* half-width of the 95 % interval, NAN when none */
    const char *text;            /* a name instead of a number (a pool's "kind", its
                                    "cost_model.kind" and "cost_model.source"), stored
                                    as text (run_stats.text); NULL for a number */
} store_stat;

#endif

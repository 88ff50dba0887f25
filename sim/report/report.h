/* report.h -- turning results into numbers, tables and JSON.
 *
 * The rows, the report and its functions are public (latsim/report.h, which
 * says what they are); this header adds the report's internal record of a
 * run's latency distributions.
 */
#ifndef LATSIM_REPORT_H
#define LATSIM_REPORT_H

#include <stdio.h>
#include "engine/repci.h"
#include "run/sim.h"
#include "report/row.h"
#include "latsim/report.h"   /* report, report_cdf, the functions: public */

/* One run's distribution of a latency (the rows "mean" .. "max" of a scope and
 * metric), for the intervals of its percentiles over replications (repci.h). */
struct report_dist {
    size_t row;           /* index in rows of the group's "mean" row */
    repci_dist d;         /* its quantiles, ms */
};

#endif

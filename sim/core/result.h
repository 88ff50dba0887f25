/* result.h -- what a station reports at the end of a run: one pool_result per
 * pool, the common counters the engine fills and the kind's own metrics
 * (pool_result_add), which report.c prints in the order they were added.
 * Stations include this, never the run (run/sim.h) that collects them.  The
 * result structs are public (latsim/sim.h); pool_result_add is the stations'.
 */
#ifndef LATSIM_RESULT_H
#define LATSIM_RESULT_H

#include <stdint.h>
#include "engine/stats.h"
#include "latsim/sim.h"   /* pool_result, pool_metric, pool_metric_get: public */

/* Appends a kind-specific result.  Returns 0, or -1 when the table is full. */
int pool_result_add(pool_result *p, const char *name, double value);

/* Appends a kind-specific result that is a name, TEXT (copied once per
 * process and kept: the result may outlive TEXT).  Returns 0, or -1 when the
 * table is full or out of memory. */
int pool_result_add_name(pool_result *p, const char *name, const char *text);

#endif

/* latsim/prov.h -- what a report's numbers stand on (public): the cost model
 * of each LLM pool (kind, stored id, source, measured error, range) as the
 * commands' "cost_models" JSON member.  The table line and the warning about
 * uncalibrated step times are the front end's (cli/provenance.h). */
#ifndef LATSIM_PUBLIC_PROV_H
#define LATSIM_PUBLIC_PROV_H

#include <stddef.h>
#include <stdio.h>
#include "latsim/report.h"

/* The next pool of R with a cost model at or after row *I (start at 0), in
 * row order; *I moves past it.  Returns its scope (the pool's name), or NULL
 * when there is none. */
const char *prov_pool_next(const report *r, size_t *i);

/* Writes the object {POOL: {kind, id, source, mape, range, extrapolated,
 * calibrated}, ...} of R's LLM pools to OUT (the commands' "cost_models"). */
void prov_json(const report *r, FILE *out);

#endif

/* slo.h -- the evaluation of a scenario's service-level objectives (the
 * [slo] terms of core/slocfg.h) over a run's report rows: met or not, the
 * margin of each term, as a table or JSON.  All of it is public
 * (latsim/slo.h); this is its internal name.
 */
#ifndef LATSIM_SLO_H
#define LATSIM_SLO_H

#include <stdio.h>
#include "core/slocfg.h"
#include "report/row.h"
#include "latsim/slo.h"   /* slo_check, slo_result and their functions: public */

#endif

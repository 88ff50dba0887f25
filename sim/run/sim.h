/* sim.h -- one simulation run of a scenario, and its results.
 *
 * sim_run() builds the model objects (workload source, one station per pool,
 * linked by their `next` out-edges), runs the event loop until every measured request has an outcome, and fills
 * a sim_result.  The first `warmup` arrivals are simulated but not measured;
 * arrivals continue while measured requests are still in the system so that
 * the last ones see the same load as the first (they stop, and the system
 * drains, only if twice the expected arrivals have happened: a saturated run).
 * sim_run and the result structs are public (latsim/sim.h); this is their
 * internal name, with the engine's own headers.
 */
#ifndef LATSIM_SIM_H
#define LATSIM_SIM_H

#include <stdint.h>
#include "run/scenario.h"
#include "engine/stats.h"
#include "engine/request.h"
#include "core/result.h"
#include "latsim/sim.h"   /* sim_result, sim_run: public */

#endif

/* pool.h -- a generic pool: c identical servers in front of one FIFO queue.
 *
 * Service times are drawn from the pool's service_ms distribution with the
 * pool's own random stream.  This is the G/G/c queue the engine is validated
 * on against queueing theory (M/M/1, M/M/c, M/D/1, M/G/1).
 */
#ifndef LATSIM_POOL_H
#define LATSIM_POOL_H

#include "core/kind.h"
#include "core/station.h"

/* The kind's row (kind.h): `kind = generic`, the default. */
extern const station_kind pool_kind_generic;

/* Creates the station for generic pool CFG.  Returns NULL when out of memory. */
station *pool_new(const pool_cfg *cfg, const station_env *env);

#endif

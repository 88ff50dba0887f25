/* fleetcfg.h -- the scenario keys of a pool's fleet dynamics, read and checked.
 *
 * Keys of [pool NAME] (any kind with replicas or servers; memory_gib,
 * memory_base_gib, memory_per_request_mib, swap_factor: swapping, generic pools):
 *   fail_after_s = DIST        each unit's time to failure, drawn afresh when it comes up
 *   repair_s = DIST            time to repair (default const(0): restarts at once)
 *   on_failure = retry|fail    what happens to the requests a failing unit holds
 *   min_replicas, max_replicas autoscaling bounds, default 1 and the pool's count
 *                              (giving either turns autoscaling on)
 *   autoscale = queue|utilization|kv        the target metric (default queue)
 *   autoscale_target = X       requests per unit (queue, default 4) or a share (0.7)
 *   autoscale_interval_s = S   evaluation interval (default 15)
 *   provision_s = S            scale-up delay to readiness (default 0)
 *   cooldown_s = S             no scale-down this soon after a scale event (default 300)
 *   storage = nvme|network|network_baseline, storage_gbs = X
 *                              weight loading at every start (cold start; coldstart.h)
 *   startup_s = S              fixed part of a start (default 0)
 *   cold_factor = F, cold_requests = N      the slow first requests after a start
 * The module reads values through a lookup callback, so that it can be used and
 * tested without a scenario file: the caller adds the file, line and section to
 * the one-line message it returns with the key at fault.
 */
#ifndef LATSIM_FLEETCFG_H
#define LATSIM_FLEETCFG_H

#include <stddef.h>
#include "fleet/fleet.h"

/* The raw value of KEY in the pool's section, or NULL when absent. */
typedef const char *(*fleetcfg_get)(void *ctx, const char *key);

typedef struct fleetcfg_key {
    const char *key;          /* as written */
    const char *def;          /* default, as text */
    const char *help;         /* one line */
} fleetcfg_key;

/* The keys above, ended by a row with key NULL. */
extern const fleetcfg_key FLEETCFG_KEYS[];

/* The row of KEY, or NULL when it is no fleet key. */
const fleetcfg_key *fleetcfg_find(const char *key);

/* Reads the fleet keys through GET (BASEDIR resolves empirical files) into F for
 * a pool of UNITS units.  *ANY is set to 1 when any fleet key is given (else F
 * is all defaults and nothing needs building).  Returns 0, or -1 with a message
 * in ERR and the key at fault in *KEY.  F must be fleetcfg_free()d either way. */
int fleetcfg_parse(fleet_cfg *f, fleetcfg_get get, void *ctx, const char *basedir, int units,
                   int *any, const char **key, char *err, size_t errlen);
void fleetcfg_free(fleet_cfg *f);

#endif

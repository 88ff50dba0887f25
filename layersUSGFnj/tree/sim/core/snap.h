/* snap.h -- a read-only view of a station's load at one instant: what a routing
 * policy (route.h) and the engine's load checks see of a station, without the
 * station itself.  A station fills one with station_snapshot() (station.h); an
 * LLM pool fills one per replica for its own routing. */
#ifndef LATSIM_SNAP_H
#define LATSIM_SNAP_H

#include <stdint.h>

typedef struct station_snap {
    uint64_t waiting;         /* requests waiting in its queue */
    uint64_t inside;          /* requests in it, waiting or in service */
    uint64_t running;         /* requests in service (LLM: sequences running on its replicas) */
    double busy;              /* servers (replicas) busy */
    double capacity;          /* servers (replicas) */
    double kv_free;           /* share of KV blocks free, [0, 1] (1 for kinds without a KV cache) */
    double cap_area;          /* integral of capacity (units up) over time so far, unit-ns;
                                 NAN when the capacity never changes */
    uint32_t prefix_ids;      /* prefix_affinity: leading prompt blocks of the request being routed
                                 that the target's prefix cache holds (filled by the router) */
} station_snap;

#endif
